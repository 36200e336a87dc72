"""Child-process bodies of the concurrency and crash tests (imported by spawned interpreters).

Kept free of pytest so a spawned child imports little. The provider class travels as an import
path ``module:QualName`` and entries as JSON dicts.
"""

from __future__ import annotations

import importlib
import json
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

__all__ = ["add_entries", "import_provider", "write_until_killed"]


def import_provider(path: str) -> type[Any]:
    """Import ``module:QualName`` and return the class."""
    module_name, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


def add_entries(
    provider_path: str,
    location: str,
    options: dict[str, Any],
    entries: list[dict[str, Any]],
    result_file: str,
    go: Any,
) -> None:
    """Wait for ``go``, add every entry through a freshly opened provider, write the ids.

    Writes ``result_file`` (JSON list of returned ids) on success, or ``result_file + ".err"``
    (the traceback) and exits 1 on failure.
    """
    try:
        from memcore.models import MemoryEntry

        cls = import_provider(provider_path)
        models = [MemoryEntry.model_validate(e) for e in entries]
        go.wait(60)
        ids: list[str | None] = []
        with cls(location, **options) as provider:
            for entry in models:
                ids.append(provider.add(entry).id)
        Path(result_file).write_text(json.dumps(ids), encoding="utf-8")
    except BaseException:  # noqa: BLE001 - reported to the parent, then exit 1
        Path(result_file + ".err").write_text(traceback.format_exc(), encoding="utf-8")
        raise SystemExit(1) from None


def write_until_killed(
    provider_path: str, location: str, options: dict[str, Any], entries: list[dict[str, Any]], conn: Connection
) -> None:
    """Add entries one by one, sending ``("ack", index, id)`` after each add returns.

    Sends ``("error", traceback)`` and exits 1 if anything fails; ``("done",)`` at the end.
    """
    try:
        from memcore.models import MemoryEntry

        cls = import_provider(provider_path)
        models = [MemoryEntry.model_validate(e) for e in entries]
        with cls(location, **options) as provider:
            conn.send(("ready",))
            for index, entry in enumerate(models):
                stored = provider.add(entry)
                conn.send(("ack", index, stored.id))
        conn.send(("done",))
    except BaseException:  # noqa: BLE001 - reported to the parent, then exit 1
        conn.send(("error", traceback.format_exc()))
        raise SystemExit(1) from None
