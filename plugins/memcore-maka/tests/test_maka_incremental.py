"""Writes inside batch() edit the parsed file in place: same bytes and same results as one by one.

A fixed scenario (adds with and without ids, a refused duplicate, body / title / tags-only
updates, an archive, a supersede pair, a delete, more adds) runs on several starting files
(CRLF with a BOM, no final newline, a trailing empty section, a shadowed and a malformed
comment, an empty file, a preamble only) once write by write and once inside ``batch()``.
Both must give the same return values and the bytes in ``tests/data/incremental/``, which
were written by the provider before batch writes became incremental (regenerate them only
on purpose: ``MAKA_REGEN_GOLDEN=1``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.errors import AmbiguousIdError, ConflictError, EntryNotFoundError, StoreLimitError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import StoreSnapshot
from memcore_maka import MakaProvider
from memcore_maka._parse import MAX_BYTES, parse_document

GOLDEN = Path(__file__).resolve().parent / "data" / "incremental"
T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
CLOCK_MS = 1_700_000_100_000

STARTS: dict[str, str | None] = {
    "init": "# Maka Memory\n",
    "crlf-bom": (
        "\ufeff# Maka Memory\r\n\r\n## Old note\r\n"
        "<!-- maka-memory: id=old-1 status=active createdAt=1700000000000 -->\r\nOld body.  \r\n\r\n\r\n"
    ),
    "no-final-newline": "# Maka Memory\n\n## A\nbody a \t",
    "empty-tail-section": (
        "# Maka Memory\n\n## Kept\n<!-- maka-memory: id=kept -->\nKept body.\n"
        "<!-- maka-memory: id=shadow -->\n<!-- maka-memory: broken\n\n## Empty\n"
    ),
    "blank": "",
    "preamble-only": "Some preamble\n\n",
    "missing": None,
}


def new_entries() -> list[MemoryEntry]:
    """Six entries covering the writer's cases (fixed times, so ids are the same every run)."""
    return [
        MemoryEntry(title="Plain", body="A plain fact.", tags=["alpha"], created_at=T0),
        MemoryEntry(
            id="fixed-id",
            kind=Kind.DECISION,
            title="With id",
            body="Chosen id.\nSecond line.",
            confidence=0.7,
            created_at=T0 + timedelta(seconds=1),
        ),
        MemoryEntry(title="", body="", created_at=T0 + timedelta(seconds=2)),
        MemoryEntry(
            title="Tricky body",
            body="  lead\n## not a heading\n<!-- maka-memory: id=fake -->\ntrail\r\n\n",
            tags=["Two Words", "x,y"],
            created_at=T0 + timedelta(seconds=3),
        ),
        MemoryEntry(title="To delete", body="Short lived.", created_at=T0 + timedelta(seconds=4)),
        MemoryEntry(title="Session", body="Only here.", scope="session", created_at=T0 + timedelta(seconds=5)),
    ]


def scenario(provider: MakaProvider) -> tuple[list[str], dict[str, MemoryEntry]]:
    """Run the fixed writes; return every result (as JSON) and the last result per live id."""
    provider._now = lambda: CLOCK_MS
    results: list[str] = []
    last: dict[str, MemoryEntry] = {}

    def keep(entry: MemoryEntry) -> MemoryEntry:
        results.append(entry.model_dump_json())
        last[entry.id or ""] = entry
        return entry

    added = [keep(provider.add(entry)) for entry in new_entries()]
    with pytest.raises(ConflictError):
        provider.add(MemoryEntry(id="fixed-id", title="Again", body="Duplicate."))
    results.append("conflict")
    with pytest.raises(StoreLimitError):
        provider.add(MemoryEntry(title="Huge", body="y" * (MAX_BYTES + 10)))
    results.append("limit")

    body = added[1].model_copy(update={"body": "Rewritten body.\n\nWith a blank line."})
    keep(provider.update(body, expected_version=added[1].version))
    title = added[2].model_copy(update={"title": "Now titled"})
    keep(provider.update(title))
    tags = added[3].model_copy(update={"tags": ["gamma"]})
    keep(provider.update(tags))
    renamed = added[5].model_copy(update={"title": "Session renamed"})
    keep(provider.update(renamed))
    unchanged = provider.update(last[added[0].id or ""])
    results.append(unchanged.model_dump_json())

    archived = provider.get(added[0].id or "")
    archived.status = Status.ARCHIVED
    archived.updated_at = T0 + timedelta(days=1)
    keep(provider.update(archived, expected_version=archived.version))

    newer = keep(
        provider.add(
            MemoryEntry(
                title="Newer",
                body="Replaces the tricky one.",
                relations=[Relation(type="supersedes", target=added[3].id or "")],
                created_at=T0 + timedelta(seconds=9),
            )
        )
    )
    old = provider.get(added[3].id or "")
    old.status = Status.SUPERSEDED
    old.updated_at = T0 + timedelta(days=2)
    old.relations = [Relation(type="superseded_by", target=newer.id or "")]
    keep(provider.update(old, expected_version=old.version))

    provider.delete(added[4].id or "")
    last.pop(added[4].id or "")
    results.append("deleted")
    with contextlib.suppress(Exception):
        existing = provider.get("old-1")
        keep(provider.update(existing.model_copy(update={"body": "Old body, edited."})))
    for n in range(3):
        keep(provider.add(MemoryEntry(title=f"Late {n}", body=f"Late fact {n}.", created_at=T0 + timedelta(hours=n))))
    return results, last


def run(tmp_path: Path, name: str, batched: bool) -> tuple[bytes, list[str], dict[str, MemoryEntry], MakaProvider]:
    folder = tmp_path / ("batched" if batched else "single") / name
    folder.mkdir(parents=True)
    path = folder / "MEMORY.md"
    start = STARTS[name]
    if start is not None:
        path.write_bytes(start.encode("utf-8"))
    provider = MakaProvider(path if start is not None else folder).open()
    if batched:
        with provider.batch():
            results, last = scenario(provider)
    else:
        results, last = scenario(provider)
    return path.read_bytes(), results, last, provider


@pytest.mark.parametrize("name", sorted(STARTS))
def test_batch_and_single_writes_match_the_golden_file(tmp_path: Path, name: str) -> None:
    single, single_results, _, _ = run(tmp_path, name, batched=False)
    batched, batched_results, last, provider = run(tmp_path, name, batched=True)
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("MAKA_REGEN_GOLDEN") == "1":  # pragma: no cover - regeneration on purpose
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(single)
        (GOLDEN / f"{name}.json").write_text(json.dumps(single_results, indent=1) + "\n", encoding="utf-8")
    assert batched == single
    assert single == golden.read_bytes()
    assert batched_results == single_results
    assert single_results == json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    # What each write returned is what a fresh provider reads back.
    reopened = MakaProvider(provider.path)
    for entry_id, entry in last.items():
        assert reopened.get(entry_id) == entry, entry_id
    assert parse_document(batched.decode("utf-8")).size == len(batched)


def test_reads_inside_a_batch_see_the_incremental_document(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    provider._now = lambda: CLOCK_MS
    with provider.batch():
        first = provider.add(MemoryEntry(title="One", body="First.", created_at=T0))
        second = provider.add(MemoryEntry(title="Two", body="Second.", created_at=T0 + timedelta(seconds=1)))
        assert [e.model_dump() for e in provider.iter_entries()] == [first.model_dump(), second.model_dump()]
        snapshot = provider.read_all()
        assert isinstance(snapshot, StoreSnapshot)
        assert [e.id for e in snapshot.entries] == [first.id, second.id]
        changed = provider.update(first.model_copy(update={"body": "First, changed."}))
        assert provider.get(first.id or "") == changed
        state = provider.state
        assert path.read_bytes() == b"# Maka Memory\n"
    assert MakaProvider(path).get(first.id or "") == changed
    assert (state.size, state.entry_count, state.active_count) == (len(path.read_bytes()), 2, 2)


LINE_POOL = [
    "## Heading",
    "## Other title  ",
    "##no-space",
    "<!-- maka-memory: id=a status=active -->",
    "  <!-- maka-memory: id=b tags=x,y bad -->  ",
    "<!-- maka-memory: id=a proposalId=p1 -->",
    "<!-- maka-memory: broken",
    "plain content",
    "  ",
    "",
    "\u3000",
    "more text with <!-- a comment -->",
]


def random_doc(rnd: random.Random) -> str:
    lines = [rnd.choice(LINE_POOL) for _ in range(rnd.randint(0, 14))]
    seps = [rnd.choice(["\n", "\n", "\r\n"]) for _ in lines]
    text = "".join(a + b for a, b in zip(lines, seps, strict=True))
    return text if rnd.random() < 0.7 else text.rstrip("\r\n")


@pytest.mark.parametrize("seed", range(40))
def test_splice_gives_what_a_full_parse_gives(seed: int) -> None:
    rnd = random.Random(seed)
    doc = parse_document(random_doc(rnd))
    doc.index()
    assert doc.newline in ("\n", "\r\n")
    for _ in range(25):
        start = rnd.randint(0, len(doc.lines))
        end = rnd.randint(start, min(len(doc.lines), start + 4))
        new = [rnd.choice(LINE_POOL) for _ in range(rnd.randint(0, 4))]
        seps = [rnd.choice(["\n", "\r\n"]) for _ in new]
        if end == len(doc.lines) and new:
            seps[-1] = ""  # the file's last line has no terminator (split_lines' invariant)
        if end == len(doc.lines) and not new:
            continue  # the last line must keep a terminator-less end; not an edit the writer makes
        if start == end == len(doc.lines) and new and doc.separators and doc.separators[-1] == "":
            continue
        fresh = doc.splice(start, end, new, seps)
        expected = parse_document(doc.text())
        assert doc == expected, (seed, start, end, new)
        assert doc.newline == expected.newline
        assert all(section in doc.sections for section in fresh)
        index, full = doc.index(), expected.index()
        assert +index.taken == +full.taken
        assert {k: sorted(s.start for s in v) for k, v in index.entries.items()} == {
            k: [s.start for s in v] for k, v in full.entries.items()
        }


def test_get_reads_what_iter_entries_reads(tmp_path: Path) -> None:
    """get() builds one entry from the id index: a duplicated id refused, NFC ids, decay applied."""
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## First\n<!-- maka-memory: id=dup -->\nOne.\n\n## Second\n<!-- maka-memory: id=dup -->\n"
        "Two.\n\n## Café\nNo comment: the id is the slug.\n\n## Accent\n<!-- maka-memory: id=cafe\u0301 -->\nNFD id.\n\n"
        "## Old\n<!-- maka-memory: id=old createdAt=1000 decayTtlMs=5 status=active -->\nExpired.\n\n## Empty\n",
        encoding="utf-8",
    )
    provider = MakaProvider(path)
    provider._now = lambda: 2_000
    with pytest.raises(AmbiguousIdError, match=r"MEMORY\.md:3, .*MEMORY\.md:7"):
        provider.get("dup")  # issue 17: never one of them silently
    assert provider.get("old").status is Status.ARCHIVED  # decay ran first, as iter_entries does
    by_id: dict[str, MemoryEntry] = {}
    for entry in provider.iter_entries():
        by_id.setdefault(entry.id or "", entry)
    assert set(by_id) == {"dup", "caf", "caf\u00e9", "old"}
    assert provider.get("cafe\u0301") == by_id["caf\u00e9"]
    for entry_id, entry in by_id.items():
        if entry_id != "dup":
            assert provider.get(entry_id) == entry
    for missing in ("empty", "nope"):
        with pytest.raises(EntryNotFoundError):
            provider.get(missing)


def test_a_lone_surrogate_goes_the_same_way_in_a_batch(tmp_path: Path) -> None:
    """Text that is not valid Unicode never reaches the file: refused the same way in a batch and outside one."""
    out = {}
    for mode in ("single", "batch"):
        path = tmp_path / mode / "MEMORY.md"
        MakaProvider.init_store(str(path))
        provider = MakaProvider(path).open()
        provider._now = lambda: CLOCK_MS
        results: list[str] = []

        def write(p: MakaProvider = provider, res: list[str] = results) -> None:
            for body in ("Fine.", "Bad \ud800 here.", "After."):
                try:
                    res.append(p.add(MemoryEntry(title="T", body=body)).model_dump_json())
                except Exception as exc:  # noqa: BLE001 - the error type is what is compared
                    res.append(type(exc).__name__)

        if mode == "batch":
            with provider.batch():
                write()
        else:
            write()
        out[mode] = (results, path.read_bytes())
    assert out["batch"] == out["single"]
    results, data = out["single"]
    assert results[1] == "ValidationError"  # MemoryEntry refuses a lone surrogate
    assert results[2].startswith("{")  # and the store stays writable
    data.decode("utf-8")  # the file is still UTF-8
