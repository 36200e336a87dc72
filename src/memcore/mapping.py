"""Mappings shared by every format: confidence labels <-> numbers, dates <-> datetimes.

Each format's own kind and status tables live beside its provider (``memcore_<format>.mapping``)
and are rendered together in docs/mapping.md. The numbers here are the WhiteBox reference
code's confidence weights (very-low .1 … very-high .9), so a label read and written back is
the same label, and a number maps to the nearest label.
"""

from __future__ import annotations

import importlib
import sys
from datetime import UTC, date, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memcore.registry import ProviderRegistry

__all__ = [
    "CONFIDENCE_LABELS",
    "CONFIDENCE_LABELS_V1",
    "confidence_from_label",
    "confidence_to_label",
    "date_to_datetime",
    "datetime_to_date",
    "format_mappings",
    "format_utc",
    "parse_iso_time",
    "relation_types",
    "translate_relation_type",
]

#: Label -> number, five grades (WhiteBox v1.1). v1.0 uses only low / medium / high.
CONFIDENCE_LABELS: dict[str, float] = {
    "very-low": 0.1,
    "low": 0.3,
    "medium": 0.5,
    "high": 0.7,
    "very-high": 0.9,
}
#: The three grades of WhiteBox v1.0.
CONFIDENCE_LABELS_V1: tuple[str, ...] = ("low", "medium", "high")


def confidence_from_label(label: str) -> float | None:
    """Return the number for a confidence label (case-insensitive; ``_`` or space = ``-``).

    Returns:
        0.1-0.9, or ``None`` for an unknown label (callers keep the raw label in ``extra``).
    """
    key = label.strip().lower().replace("_", "-").replace(" ", "-")
    return CONFIDENCE_LABELS.get(key)


def confidence_to_label(value: float, *, grades: tuple[str, ...] | None = None) -> str:
    """Return the label nearest to ``value`` (ties go to the lower label).

    Args:
        value: 0.0-1.0.
        grades: Labels allowed (default: all five); e.g. :data:`CONFIDENCE_LABELS_V1`.
    """
    allowed = grades or tuple(CONFIDENCE_LABELS)
    return min(allowed, key=lambda label: (abs(CONFIDENCE_LABELS[label] - value), CONFIDENCE_LABELS[label]))


def date_to_datetime(value: date) -> datetime:
    """Return 00:00 UTC on ``value`` (a date-only field read into ``created_at``)."""
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def datetime_to_date(value: datetime) -> date:
    """Return the UTC calendar date of ``value`` (``created_at`` written to a date-only field)."""
    return value.astimezone(UTC).date()


def format_utc(value: datetime, *, milliseconds: bool | None = False) -> str:
    """Format a UTC datetime as ISO-8601 with ``Z`` (``2026-04-19T10:00:00Z``).

    Args:
        value: Timezone-aware datetime.
        milliseconds: Include ``.mmm`` (always 3 digits) when true; otherwise seconds, with
            microseconds only when non-zero. ``None``: ``.mmm`` when the microseconds are whole
            milliseconds (not zero), else as ``False``.
    """
    if milliseconds is None:
        milliseconds = bool(value.microsecond) and not value.microsecond % 1000
    value = value.astimezone(UTC)
    if milliseconds:
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    text = value.replace(tzinfo=None).isoformat()
    return text + "Z"


def parse_iso_time(value: Any, *, naive_utc: bool = True) -> tuple[datetime, bool] | None:
    """Return ``(UTC datetime, date only)`` of an ISO 8601 date or datetime (text or not), else ``None``.

    ``2026-01-15`` is that day at midnight UTC, date only; a naive time is taken as UTC; ``Z`` or
    ``z`` is UTC. With ``naive_utc=False`` a date alone or a naive time is ``None``.
    """
    text = str(value).strip()
    try:
        if len(text) == 10 and text[4] == "-" and text[7] == "-" and text.replace("-", "").isdigit():
            return (datetime.fromisoformat(text).replace(tzinfo=UTC), True) if naive_utc else None
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None and not naive_utc:
        return None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC), False


def format_mappings(registry: ProviderRegistry | None = None) -> dict[str, ModuleType]:
    """Return each installed format's own mapping module, by format name.

    The module is ``<package>.mapping`` beside the provider class (``memcore_box.mapping`` for
    ``memcore_box.provider.BoxProvider``), found through the provider class's own module, so
    core names no plugin. Formats whose package has no ``mapping`` module are left out.
    docs/mapping.md is the cross-format table; each module's docstring is its format's table.

    Args:
        registry: Registry to look in (default: the process-wide one).

    Returns:
        ``{format name: module}``, sorted by format name.
    """
    from memcore.registry import get_registry

    reg = registry or get_registry()
    out: dict[str, ModuleType] = {}
    for name, cls in reg.items():
        module = sys.modules.get(cls.__module__)
        package = getattr(module, "__package__", None) if module is not None else None
        if not package:
            continue
        try:
            out[name] = importlib.import_module(f"{package}.mapping")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.mapping":
                raise
    return out


def relation_types(format_name: str, registry: ProviderRegistry | None = None) -> dict[str, str]:
    """Return a format's native relation type -> memcore pivot type table.

    A format declares it as its provider class's
    :attr:`~memcore.provider.BaseProvider.relation_types` (RightMemory: ``{"rel": "related"}``);
    a format without one uses the pivot names natively.

    Args:
        format_name: A registered format.
        registry: Registry to look in (default: the process-wide one).

    Returns:
        ``{native type: pivot type}`` (empty when the format declares none).
    """
    from memcore.errors import MemcoreError
    from memcore.registry import get_registry

    registry = registry or get_registry()
    try:
        cls = registry.get(format_name)
    except MemcoreError:
        return {}
    table = getattr(cls, "relation_types", None)
    return dict(table) if isinstance(table, dict) else {}


def translate_relation_type(relation_type: str, source: dict[str, str], target: dict[str, str]) -> str:
    """Return the name ``target`` uses for the relation ``source`` calls ``relation_type``.

    The source's native name is first mapped to the pivot name (``rel`` -> ``related``), then
    to the target's native name for it (``related`` -> ``rel``); a name neither table knows is
    kept verbatim, so every type survives A -> B -> A.

    Args:
        relation_type: The type as the source format names it.
        source: The source format's :func:`relation_types` table.
        target: The target format's :func:`relation_types` table.

    Returns:
        The type to write into the target.
    """
    pivot = source.get(relation_type, relation_type)
    for native, name in target.items():
        if name == pivot:
            return native
    return pivot
