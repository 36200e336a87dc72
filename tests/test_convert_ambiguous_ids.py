"""The generic conversion never confuses two source entries read under one id (issue 17, item 1).

The source here is the ``full`` fake provider of test_convert with its JSON file written by hand,
so two rows share an id; its ``get`` is BaseProvider's (no AmbiguousIdError), so the report names
the entries by title. test_maka_derived_ids covers a provider that names file:line.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_convert import FullProvider

from memcore.migrate import convert
from memcore.models import MemoryEntry, Relation


def _rows(*entries: MemoryEntry) -> str:
    return json.dumps([e.content_dict() for e in entries], default=str)


def test_entries_sharing_an_id_fail_and_the_others_are_written(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    FullProvider.init_store(str(src))
    (src / "entries.json").write_text(
        _rows(
            MemoryEntry(id="twin", title="First twin", body="first body"),
            MemoryEntry(id="solo", title="Solo", body="solo body", relations=[Relation(type="related", target="twin")]),
            MemoryEntry(id="twin", title="Second twin", body="second body"),
        ),
        encoding="utf-8",
    )
    FullProvider.init_store(str(dst))
    with FullProvider(str(src)) as source, FullProvider(str(dst)) as target:
        report = convert(source, target)
        stored = list(target.iter_entries())
    assert [(e.source_id, e.action) for e in report.entries] == [
        ("twin", "failed"),
        ("solo", "written"),
        ("twin", "failed"),
    ]
    error = report.entries[0].error or ""
    assert "'First twin'" in error and "'Second twin'" in error and "AmbiguousIdError" in error
    assert not report.ok
    assert [e.body for e in stored] == ["solo body"]
    assert [(u.source_id, u.target, u.reason) for u in report.unresolved_links] == [
        ("solo", "twin", "ambiguous in source")
    ]
    assert stored[0].relations == [Relation(type="related", target="twin", resolved=False)]
