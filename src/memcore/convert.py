"""The former home of the migration API, kept so that ``from memcore.convert import …`` goes on working.

Everything here is re-exported from :mod:`memcore.migrate` (the package the migration code lives in
now); import from there in new code.
"""

from __future__ import annotations

from memcore.migrate import (
    MEMCORE_NS,
    ConversionReport,
    Converter,
    EntryReport,
    FieldChange,
    ProgressCallback,
    UnresolvedLink,
    compare_entries,
    convert,
    find_converter,
    migrate,
    restore_kept,
    source_options_for,
)

__all__ = [
    "MEMCORE_NS",
    "ConversionReport",
    "Converter",
    "EntryReport",
    "FieldChange",
    "ProgressCallback",
    "UnresolvedLink",
    "compare_entries",
    "convert",
    "find_converter",
    "migrate",
    "restore_kept",
    "source_options_for",
]
