"""Memory files written from a fixed set of entries equal the checked-in bytes (tests/golden).

The golden files were written by the provider before memory files were rendered without
ruamel for the common case (plain strings, timestamps, numbers, flow lists); they pin the bytes
of every ``add`` and ``update`` path, whichever renderer runs.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_box.provider import BoxMemoryProvider

GOLDEN = Path(__file__).resolve().parent / "golden"

_T0 = datetime(2026, 5, 22, 18, 32, tzinfo=UTC)
_T1 = datetime(2026, 5, 22, 18, 34, 5, 123000, tzinfo=UTC)


def _entries() -> list[MemoryEntry]:
    def e(n: int, **fields: object) -> MemoryEntry:
        fields.setdefault("created_at", _T0)
        fields.setdefault("updated_at", _T1)
        return MemoryEntry(id=f"mem_01HXYZA1B2C3D4E5F6G7H8J{n:03d}", **fields)  # type: ignore[arg-type]

    return [
        e(
            1,
            kind=Kind.DECISION,
            title="JWT vs sessions",
            body="\n# JWT\n\nWe chose JWT.\n",
            tags=["auth", "mobile"],
            confidence=0.9,
            source="claude-code",
            scope="default",
        ),
        e(2, kind=Kind.FACT, title="Ports, hosts (and paths) / v2", body="Body.\n", tags=["ops"], confidence=0.5),
        e(3, kind=Kind.TASK, title="yes", body="ambiguous title\n", status=Status.ARCHIVED, tags=["no", "on"]),
        e(4, kind=Kind.NOTE, title="Key: value # not a comment", body="", tags=["a b", "c,d"]),
        e(5, kind=Kind.OBSERVATION, title="2026-05-22 stand-up", body="dated title\n", confidence=0.7),
        e(6, kind=Kind.REFERENCE, title="Ünïcode tïtle — dash", body="x\n", tags=["ünï"], source="agent-ä"),
        e(7, kind=Kind.DECISION, title="'quoted' start", body="q\n", tags=["x"], confidence=1.0),
        e(8, kind=Kind.FACT, title="1.5", body="numeric title\n", tags=["1", "0.5"], confidence=0.3),
        e(
            9,
            kind=Kind.FACT,
            title="Related one",
            body="r\n",
            relations=[
                Relation(type="related", target="mem_01HXYZA1B2C3D4E5F6G7H8J001"),
                Relation(type="supersedes", target="mem_01HXYZA1B2C3D4E5F6G7H8J002"),
            ],
        ),
        e(
            10,
            kind=Kind.NOTE,
            title="Trailing space ",
            body="t\n",
            tags=["tab\tin"],
            scope="team-x",
            extra={"box": {"links": [{"url": "https://example.org", "label": "Example"}]}},
        ),
        e(11, kind=Kind.TASK, title="Line\nbreak", body="multi\n", expires_at=datetime(2027, 1, 1, tzinfo=UTC)),
        e(12, kind=Kind.FACT, title="", body="An untitled observation, first words name it.\n", date_only=True),
        e(
            13,
            kind=Kind.PREFERENCE,
            title="null",
            body="p\n",
            tags=["true", "~"],
            parent="mem_01HXYZA1B2C3D4E5F6G7H8J001",
        ),
    ]


def scenario(root: Path) -> dict[str, bytes]:
    """Add the fixed entries (batched), update two of them; return every memory file's bytes."""
    shutil.rmtree(root, ignore_errors=True)
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store:
        with store.batch():
            for entry in _entries():
                store.add(entry)
        first = store.get("mem_01HXYZA1B2C3D4E5F6G7H8J001")
        first.tags = [*first.tags, "security"]
        first.title = "JWT vs sessions, final"
        store.update(first)
        fact = store.get("mem_01HXYZA1B2C3D4E5F6G7H8J002")
        fact.kind = Kind.DECISION
        store.update(fact)
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*.md")):
        text = path.read_bytes()
        # updated_at of the two updates is "now": pin it so that the comparison is exact.
        lines = [
            b"updated_at: <now>" if line.startswith(b"updated_at: ") and b"2026-05-22" not in line else line
            for line in text.split(b"\n")
        ]
        files[path.relative_to(root).as_posix().replace("/", "__")] = b"\n".join(lines)
    return files


def test_memory_files_equal_the_golden_bytes(tmp_path: Path) -> None:
    files = scenario(tmp_path / "ws")
    golden = {p.name: p.read_bytes() for p in sorted(GOLDEN.iterdir())}
    assert sorted(files) == sorted(golden)
    for name, data in files.items():
        assert data == golden[name], name
