"""memcore provider for WhiteBox vaults.

A vault is plain markdown with YAML frontmatter: stable facts (``identity.md``,
``projects/<slug>.md``…) and append-only monthly observation logs
(``observations/YYYY-MM.md``). See docs/formats/whitebox.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore_whitebox.provider import OutOfScopeError, WhiteBoxProvider

__all__ = ["OutOfScopeError", "WhiteBoxProvider"]

# Each name is imported on first use: loading the plugin entry point (``.plugin``) imports this
# package, which must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "OutOfScopeError": "memcore_whitebox.provider",
        "WhiteBoxProvider": "memcore_whitebox.provider",
    },
)
