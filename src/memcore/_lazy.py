"""Lazy module attributes (PEP 562), so that importing a package does not import its parts.

``import memcore`` runs before any ``memcore.*`` import, and ``memcore_<format>`` before its
``plugin`` module is loaded from the entry point: both stay cheap by naming their public
attributes here and importing each from its module on first access.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return a module's ``__getattr__`` and ``__dir__`` that import its public names on first use.

    Use in a package's ``__init__`` (with the same names imported under ``TYPE_CHECKING`` for
    type checkers)::

        __getattr__, __dir__ = lazy_exports(__name__, {"WhiteBoxProvider": "memcore_whitebox.provider"})

    Args:
        package: The module's ``__name__``.
        exports: Public name -> the module it is imported from (``"module"`` or
            ``"module:attribute"`` when the attribute is named differently there).

    Returns:
        ``(__getattr__, __dir__)``. ``__getattr__`` raises :class:`AttributeError` for a name
        not in ``exports``, as for any module; a name, once imported, is stored in the module so
        the next access is an ordinary attribute lookup.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module_name), attr or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
