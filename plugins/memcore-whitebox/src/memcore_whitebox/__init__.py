"""memcore provider for WhiteBox vaults.

A vault is plain markdown with YAML frontmatter: stable facts (``identity.md``,
``projects/<slug>.md``…) and append-only monthly observation logs
(``observations/YYYY-MM.md``). See docs/formats/whitebox.md.
"""

from __future__ import annotations

from memcore_whitebox.provider import OutOfScopeError, WhiteBoxProvider

__all__ = ["OutOfScopeError", "WhiteBoxProvider"]
