"""A read-only vault refuses every write operation; a batch whose files changed on disk writes nothing.

Both come from core (``BaseProvider.write_operations``, ``WriteSession.flush``): these tests hold
WhiteBox's own operations (``dispute``, ``propose_stable_edit``, ``promote``, promotion runs) to them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.errors import ConflictError, ReadOnlyStoreError
from memcore.models import Kind, MemoryEntry
from memcore.provider import BaseProvider
from memcore_whitebox.promotion import run_promotion
from memcore_whitebox.provider import WhiteBoxProvider


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _obs(body: str = "An observation.", day: str = "2026-04-20") -> MemoryEntry:
    return MemoryEntry(
        kind=Kind.OBSERVATION,
        body=body,
        source="claude",
        tags=["preference", "brand-new-tag"],
        confidence=0.7,
        created_at=day,
        date_only=True,
    )


def test_the_format_operations_are_write_operations() -> None:
    assert {"dispute", "propose_stable_edit", "promote"} <= WhiteBoxProvider.write_operations
    assert BaseProvider.write_operations <= WhiteBoxProvider.write_operations


@pytest.mark.parametrize("read_only", [True, "true", "ture", "yes please"])  # fail-closed: a misspelling is on
def test_a_read_only_vault_refuses_each_write_operation_and_changes_no_byte(vault: Path, read_only: object) -> None:
    before = _files(vault)
    with WhiteBoxProvider(str(vault), read_only=read_only, as_user=True) as store:
        fact = store.get("identity.md")
        calls = {
            "add": lambda: store.add(_obs()),
            "add fact": lambda: store.add(MemoryEntry(kind=Kind.FACT, title="New", body="x")),
            "update": lambda: store.update(fact),
            "dispute": lambda: store.dispute("identity.md", "Not so."),
            "propose_stable_edit": lambda: store.propose_stable_edit(
                "identity.md", source="s", rationale="r", content="c"
            ),
            "promote": lambda: store.promote("identity.md", lambda data: b"replaced"),
        }
        for name, call in calls.items():
            with pytest.raises(ReadOnlyStoreError):
                call()
            with pytest.raises(ReadOnlyStoreError), store.batch():  # a read-only batch is a plain block
                call()
            assert _files(vault) == before, name
        for row in run_promotion(store, threshold=1):  # each group fails alone, nothing written
            assert row["action"] in {"failed", "below-threshold", "already-proposed"}
            if row["action"] == "failed":
                assert "read-only" in row["error"]
    assert _files(vault) == before


def test_a_read_only_vault_still_reads_and_plans(vault: Path) -> None:
    before = _files(vault)
    with WhiteBoxProvider(str(vault), read_only=True) as store:
        entries = list(store.iter_entries())
        assert entries and store.read_all().entries == entries
        planned = store.plan_ids([_obs(), _obs()])
        assert planned[0] is not None and planned[0].startswith("observations/2026-04.md#")
        assert planned[1] is not None and int(planned[1].rsplit("#")[1]) == int(planned[0].rsplit("#")[1]) + 1
    assert _files(vault) == before


def test_a_fact_edited_on_disk_during_a_batch_makes_it_raise_conflict_and_write_nothing(vault: Path) -> None:
    before = _files(vault)
    theirs = b"# Identity\n\nEdited by hand meanwhile.\n"
    with pytest.raises(ConflictError, match=r"identity\.md"):
        with WhiteBoxProvider(str(vault), as_user=True) as store, store.batch():
            fact = store.get("identity.md")
            store.update(fact.model_copy(update={"body": "Mine.\n"}))
            store.add(_obs("Mine too."))
            store.add(MemoryEntry(kind=Kind.FACT, title="Brand new fact", body="New.\n"))
            (vault / "identity.md").write_bytes(theirs)
    after = _files(vault)
    assert after.pop("identity.md") == theirs  # the other writer's bytes survive
    before.pop("identity.md")
    assert after == before  # no month record, no new fact, no tag registered


def test_a_month_file_edited_on_disk_during_a_batch_writes_nothing(vault: Path) -> None:
    before = _files(vault)
    month = vault / "observations" / "2026-04.md"
    with pytest.raises(ConflictError):
        with WhiteBoxProvider(str(vault)) as store, store.batch():
            store.add(_obs("First."))
            store.add(MemoryEntry(kind=Kind.FACT, title="Another new fact", body="New.\n"))
            with month.open("ab") as fh:
                fh.write(b"\nBy hand.\n")
    after = _files(vault)
    assert after.pop("observations/2026-04.md") == before.pop("observations/2026-04.md") + b"\nBy hand.\n"
    assert after == before


def test_a_batch_that_conflicts_leaves_the_provider_usable(vault: Path) -> None:
    month = vault / "observations" / "2026-04.md"
    store = WhiteBoxProvider(str(vault)).open()
    with pytest.raises(ConflictError), store.batch():
        store.add(_obs("Lost."))
        with month.open("ab") as fh:
            fh.write(b"\n---\n\n```\n---\ndate: 2026-04-21\nsource: other\ntags: []\n---\n\nTheirs.\n```\n")
    stored = store.add(_obs("Kept."))
    assert stored.id is not None
    assert WhiteBoxProvider(str(vault)).open().get(stored.id).body == "Kept."
    assert b"Lost." not in month.read_bytes()


def test_a_fact_a_failed_batch_never_wrote_is_not_amended_in_place_later(vault: Path) -> None:
    """The instance may amend the facts it created; one its failed batch never wrote is the user's."""
    month = vault / "observations" / "2026-04.md"
    store = WhiteBoxProvider(str(vault)).open()
    with pytest.raises(ConflictError), store.batch():
        store.add(MemoryEntry(kind=Kind.FACT, id="projects/mine.md", title="Mine", body="v1\n"))
        store.add(_obs("Lost."))
        with month.open("ab") as fh:
            fh.write(b"\nBy hand.\n")
    assert not (vault / "projects" / "mine.md").exists()
    (vault / "projects").mkdir(exist_ok=True)
    (vault / "projects" / "mine.md").write_text("# Theirs\n\nWritten by hand.\n", encoding="utf-8")
    fact = store.get("projects/mine.md")
    assert store.update(fact.model_copy(update={"body": "v2\n"})).kind is Kind.PROPOSAL
    assert (vault / "projects" / "mine.md").read_text(encoding="utf-8").endswith("Written by hand.\n")
