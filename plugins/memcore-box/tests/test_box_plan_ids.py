"""``plan_ids`` of the Box provider: minted ULIDs that add then gives, and one write per migrated entry."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import BaseProvider
from memcore_box.provider import BoxMemoryProvider

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
_MEM_ID = re.compile(r"mem_[0-9A-HJKMNP-TV-Z]{26}")


class CountingBox(BoxMemoryProvider):
    """The Box provider, counting the updates a migration makes (class-wide, reset per test)."""

    updates: ClassVar[list[str]] = []

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        CountingBox.updates.append(entry.id or "")
        return super().update(entry, expected_version=expected_version)


class UnplannedBox(CountingBox):
    """The Box provider without plan_ids: forward relations are linked by a second update."""

    plan_ids = BaseProvider.plan_ids  # type: ignore[assignment]


def _files(root: Path) -> dict[str, str]:
    """Every memory file's text, with each ``mem_`` id replaced by its order of first appearance."""
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}
    names: dict[str, str] = {}
    for text in texts.values():
        for found in _MEM_ID.findall(text):
            names.setdefault(found, f"mem_{len(names)}")
    return {path: _MEM_ID.sub(lambda m: names[m.group(0)], text) for path, text in texts.items()}


def _without_second_update_stamps(text: str) -> str:
    """``text`` without its ``updated_at`` line and its ``kept:`` block (what a second update adds)."""
    out: list[str] = []
    in_kept = 0
    for line in text.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip(" "))
        if in_kept and indent > in_kept - 1:
            continue
        in_kept = 0
        if line.lstrip(" ").startswith("kept:"):
            in_kept = indent + 1
            continue
        if not line.startswith("updated_at:"):
            out.append(line)
    return "".join(out)


def _migrate(cls: type[CountingBox], vault: Path, target: Path) -> tuple[Any, list[str], list[str]]:
    CountingBox.updates = []
    phases: list[str] = []
    report = migrate(
        f"whitebox:{vault}",
        cls(str(target)),
        progress=lambda phase, done, total: phases.append(phase) if phase not in phases else None,
    )
    return report, phases, list(CountingBox.updates)


def test_planned_ids_are_minted_ulids_that_add_gives_in_order(tmp_path: Path) -> None:
    """plan_ids() writes nothing; the next adds without an id get the planned ids; given ids are kept."""
    BoxMemoryProvider.init_store(str(tmp_path / "ws"))
    with BoxMemoryProvider(str(tmp_path / "ws")) as store:
        taken = store.add(MemoryEntry(kind=Kind.FACT, title="Taken", body="There already."))
        entries = [
            MemoryEntry(kind=Kind.FACT, title="First", body="One."),
            MemoryEntry(id=taken.id, kind=Kind.FACT, title="Again", body="Refused: the id is taken."),
            MemoryEntry(id="mem_01JB0000000000000000000000", kind=Kind.FACT, title="Own id", body="Kept."),
            MemoryEntry(kind=Kind.NOTE, title="", body="An untitled note."),
        ]
        before = sorted(p.name for p in (tmp_path / "ws").rglob("*"))
        planned = store.plan_ids(entries)
        assert sorted(p.name for p in (tmp_path / "ws").rglob("*")) == before
        assert planned[1] is None and planned[2] == "mem_01JB0000000000000000000000"
        assert planned[0] is not None and _MEM_ID.fullmatch(planned[0])
        assert planned[3] is not None and _MEM_ID.fullmatch(planned[3]) and planned[3] != planned[0]
        with store.batch():
            first = store.add(entries[0])
            own = store.add(entries[2])
            untitled = store.add(entries[3])
        assert [first.id, own.id, untitled.id] == [planned[0], planned[2], planned[3]]
        later = store.add(MemoryEntry(kind=Kind.FACT, title="Later", body="Nothing planned for it."))
        assert later.id not in planned and later.id is not None and _MEM_ID.fullmatch(later.id)


def test_a_related_link_to_a_planned_memory_names_its_title(tmp_path: Path) -> None:
    """An entry added before its ``related`` target (planned) is written with that target's title."""
    BoxMemoryProvider.init_store(str(tmp_path / "ws"))
    with BoxMemoryProvider(str(tmp_path / "ws")) as store:
        later = MemoryEntry(kind=Kind.FACT, title="Written second", body="The target.")
        untitled = MemoryEntry(kind=Kind.NOTE, body="An untitled target.")
        target_id, untitled_id = store.plan_ids([later, untitled])
        assert target_id is not None and untitled_id is not None
        linking = MemoryEntry(
            id="mem_01JB0000000000000000000001",  # given: an add without an id takes a planned one
            kind=Kind.FACT,
            title="Written first",
            body="Points forward.",
            relations=[Relation(type="related", target=target_id), Relation(type="related", target=untitled_id)],
        )
        with store.batch():
            first = store.add(linking)
            store.add(later.model_copy(update={"id": target_id}))
            store.add(untitled.model_copy(update={"id": untitled_id}))
        text = next((tmp_path / "ws").rglob("*written-first.md")).read_text(encoding="utf-8")
        assert '"[[Written second]]"' in text and f'"[[{untitled_id}]]"' in text
        assert store.get(first.id or "").relations == [
            Relation(type="related", target=target_id),
            Relation(type="related", target=untitled_id),
        ]


def test_whitebox_example_into_box_writes_each_entry_once(tmp_path: Path) -> None:
    """examples/whitebox-vault -> a new Box workspace: no second update, the same files as without a plan.

    The vault holds ``superseded_by`` links that point forward in the write order; with
    plan_ids they are written by add. Without it (the same provider, plan_ids off) each such
    entry is updated a second time; both give the same files apart from the minted ids,
    except that the second update stamps ``updated_at`` (kept in free data).
    """
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLES / "whitebox-vault", vault)
    report, phases, updates = _migrate(CountingBox, vault, tmp_path / "planned")
    assert report.ok and report.counts["failed"] == 0
    assert updates == [] and "link" not in phases and "plan" in phases
    base_report, base_phases, base_updates = _migrate(UnplannedBox, vault, tmp_path / "unplanned")
    assert base_report.ok and "link" in base_phases and len(base_updates) > 0  # the vault does link forward
    planned, unplanned = _files(tmp_path / "planned"), _files(tmp_path / "unplanned")
    assert sorted(planned) == sorted(unplanned)
    differ = [path for path in planned if planned[path] != unplanned[path]]
    assert len(differ) == len(set(base_updates))  # only the files updated a second time differ...
    for path in differ:  # ...by the updated_at that update stamped and the original it kept
        assert "kept:" in unplanned[path] and "kept:" not in planned[path]
        assert _without_second_update_stamps(planned[path]) == _without_second_update_stamps(unplanned[path])
    for entry in report.entries:  # every forward relation was written at once
        assert not [c for c in entry.losses if c.field == "relations"], entry

    again, _, updates_again = _migrate(CountingBox, vault, tmp_path / "planned")
    assert again.counts["written"] == 0 and updates_again == []  # the same migration twice writes nothing
    assert _files(tmp_path / "planned") == planned
