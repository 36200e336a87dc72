"""Every authors' sample reads to what Maka's own parser gives, and opening one changes no byte."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memcore
from memcore.models import Status
from memcore_maka import MakaProvider, stable_entry_id
from memcore_maka._parse import parse_document

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"
HEAD_TEMPLATE = "default-template.HEAD-f19eede.rendered-now-1700000000000.md"
V01_TEMPLATE = "default-template.v0.1-c06e13f.rendered-now-1700000000000.md"
SAMPLE_NAMES = sorted(p.name for p in SAMPLES.glob("*.md"))
T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # 1700000000000 ms


def line(name: str, number: int) -> str:
    """Line ``number`` (1-based) of a sample, so tests compare with the file, not a copy of its prose."""
    return (SAMPLES / name).read_text(encoding="utf-8").split("\n")[number - 1]


def heading(name: str, number: int) -> str:
    text = line(name, number)
    assert text.startswith("## ")
    return text[3:]


def rows(path: Path, **options: object) -> list[tuple[object, ...]]:
    provider = MakaProvider(path, **options)
    return [
        (e.id, e.title, e.status, e.source, e.scope, e.tags, e.extra.get("maka", {}).get("sessionId"))
        for e in provider.iter_entries()
    ]


def test_samples_are_present() -> None:
    assert len(SAMPLE_NAMES) == 7, SAMPLE_NAMES


def test_head_default_template_id_is_the_stable_hash(sample_copy) -> None:
    path = sample_copy(HEAD_TEMPLATE)
    [entry] = MakaProvider(path).iter_entries()
    assert entry.id == "mem-e060c48e23fe4573"
    assert entry.title == heading(HEAD_TEMPLATE, 3)
    assert entry.source == "manual"
    assert entry.status is Status.ACTIVE
    assert entry.created_at == T0
    assert entry.body == line(HEAD_TEMPLATE, 5)
    # The id Maka wrote is the one memcore computes for new entries from content + createdAt.
    assert stable_entry_id(entry.body, 1700000000000) == "mem-e060c48e23fe4573"


def test_reference_test_ids() -> None:
    # Ids pinned in the authors' test file.
    assert stable_entry_id("Prefer concise answers.", 1700000000000) == "mem-eca1625ac35bd920"
    assert stable_entry_id("  Remember dark mode preference.\n", 1700000000000) == "mem-e6ab8f36e9096a9f"


def test_v01_template_keeps_manual_id(sample_copy) -> None:
    [entry] = MakaProvider(sample_copy(V01_TEMPLATE)).iter_entries()
    assert entry.id == "manual-1700000000000"
    assert entry.source == "manual"
    assert entry.created_at == T0
    assert entry.title == heading(V01_TEMPLATE, 3)
    assert entry.body == line(V01_TEMPLATE, 5)


def test_v01_best_effort_metadata(sample_copy) -> None:
    name = "fixture-v0.1-best-effort-metadata.md"
    path = sample_copy(name)
    first, second = MakaProvider(path).iter_entries()
    assert (first.id, first.title, first.body, first.source, first.created_at) == (
        "pref-1",
        heading(name, 3),
        line(name, 5),
        "manual",
        T0,
    )
    assert first.tags == [] and first.status is Status.ACTIVE
    # No comment: still shown, id = the title's slug (CJK characters kept), origin unknown.
    assert (second.id, second.title, second.body, second.source) == (
        heading(name, 7),
        heading(name, 7),
        line(name, 8),
        "unknown",
    )
    assert second.status is Status.ACTIVE and second.created_at is None and second.extra == {}


def test_first_metadata_comment_is_authoritative(sample_copy) -> None:
    name = "fixture-first-metadata-comment-authoritative.md"
    path = sample_copy(name)
    [entry] = MakaProvider(path).iter_entries()
    assert entry.id == "canonical"
    assert entry.status is Status.ACTIVE
    assert entry.scope == "workspace"
    assert "sessionId" not in entry.extra.get("maka", {})
    # The later comment (line 6) is neither metadata nor content.
    assert entry.body == line(name, 5) + "\n" + line(name, 7)
    assert entry.title == heading(name, 3)
    codes = [(d.code, d.line) for d in MakaProvider(path).validate()]
    assert ("maka.unread-text", 6) in codes


def test_session_scope_sample(sample_copy) -> None:
    name = "fixture-session-scope.md"
    path = sample_copy(name)
    assert rows(path) == [
        ("workspace", heading(name, 3), Status.ACTIVE, "unknown", "workspace", [], None),
        ("session-a", heading(name, 7), Status.ACTIVE, "unknown", "session", [], "session-a"),
        ("session-b", heading(name, 11), Status.ACTIVE, "unknown", "session", [], "session-b"),
        ("session-legacy", heading(name, 15), Status.ACTIVE, "unknown", "session", [], None),
    ]
    warnings = [d for d in MakaProvider(path).validate() if d.code == "maka.session-without-owner"]
    assert [(d.line, d.entry_id) for d in warnings] == [(16, "session-legacy")]


def test_statuses_sample(sample_copy) -> None:
    name = "fixture-statuses-pending-rejected-unknown.md"
    path = sample_copy(name)
    entries = list(MakaProvider(path).iter_entries())
    assert [(e.id, e.title, e.status, e.source, e.body) for e in entries] == [
        ("active", heading(name, 3), Status.ACTIVE, "manual", line(name, 5)),
        ("pending", heading(name, 7), Status.REVIEW_REQUIRED, "unknown", line(name, 9)),
        ("rejected", heading(name, 11), Status.REJECTED, "unknown", line(name, 13)),
        ("future", heading(name, 15), Status.UNKNOWN, "unknown", line(name, 17)),
    ]
    assert entries[1].extra == {"maka": {"proposalId": "proposal-abc", "source": "chat_extracted"}}
    assert entries[3].extra == {"maka": {"status": "future_status"}}


def test_active_vs_archived_sample(sample_copy) -> None:
    name = "fixture-active-vs-archived-prompt-body.md"
    path = sample_copy(name)
    assert rows(path) == [
        ("keep", heading(name, 3), Status.ACTIVE, "manual", None, ["style"], None),
        ("old", heading(name, 7), Status.ARCHIVED, "manual", None, [], None),
    ]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_parser_matches_sections(name: str) -> None:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    doc = parse_document(text)
    assert not doc.safe_mode
    assert [s.id for s in doc.entries] == [e.id for e in MakaProvider(SAMPLES / name).iter_entries()]
    assert doc.text() == text


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_opening_a_sample_changes_no_byte(name: str, sample_copy) -> None:
    path = sample_copy(name)
    before = path.read_bytes()
    st = path.stat()
    listing = sorted(os.listdir(path.parent))
    for options in ({}, {"agent_read_enabled": True}):
        with memcore.open(f"maka:{path}", **options) as store:
            assert isinstance(store, MakaProvider)
            list(store.iter_entries())
            store.search("preference")
            store.validate()
            assert store.state.status == "ok"
            store.render_prompt()
            store.render_prompt(session_id="session-a")
    assert path.read_bytes() == before
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_mode) == (st.st_ino, st.st_mtime_ns, st.st_mode)
    assert sorted(os.listdir(path.parent)) == listing
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hashlib.sha256((SAMPLES / name).read_bytes()).hexdigest()


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_samples_sniff_as_maka(name: str) -> None:
    assert MakaProvider.sniff(SAMPLES / name)


def test_sniff_rejects_other_markdown(tmp_path: Path) -> None:
    other = tmp_path / "MEMORY.md"
    other.write_text("# Project memory\n\n## Heading {#id}\nbody\n", encoding="utf-8")
    assert not MakaProvider.sniff(other)
    assert not MakaProvider.sniff(tmp_path)
    assert not MakaProvider.sniff(tmp_path / "missing.md")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_read_all_is_iter_entries_plus_validate_on_samples(tmp_path: Path, name: str) -> None:
    """One parse gives the same entries and diagnostics as the two separate reads (PENDING.md too)."""
    pending = SAMPLES / "fixture-statuses-pending-rejected-unknown.md"
    path = tmp_path / "MEMORY.md"
    path.write_bytes((SAMPLES / name).read_bytes())
    (tmp_path / "PENDING.md").write_bytes(pending.read_bytes())
    snapshot = MakaProvider(path).read_all()
    separate = MakaProvider(path)
    entries = list(separate.iter_entries())
    assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in entries]
    assert snapshot.diagnostics == separate.validate()
    assert snapshot.entries and any(d.path == str(tmp_path / "PENDING.md") for d in snapshot.diagnostics)
    assert path.read_bytes() == (SAMPLES / name).read_bytes()


def test_read_all_archives_expired_entries_as_iter_entries_does(tmp_path: Path) -> None:
    text = (
        "# Maka Memory\n\n## Expiring\n"
        "<!-- maka-memory: id=exp createdAt=1000 decayTtlMs=5 status=active -->\nGone soon.\n\n"
        "## Kept\n<!-- maka-memory: id=kept createdAt=1000 status=active -->\nStays.\n"
    )
    paths = []
    for side in ("one", "two"):
        (tmp_path / side).mkdir()
        paths.append(tmp_path / side / "MEMORY.md")
        paths[-1].write_text(text, encoding="utf-8")
    first, second = MakaProvider(paths[0]), MakaProvider(paths[1])
    first._now = second._now = lambda: 2_000
    snapshot = first.read_all()
    assert [(e.id, e.status) for e in snapshot.entries] == [("exp", Status.ARCHIVED), ("kept", Status.ACTIVE)]
    assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in second.iter_entries()]
    # the same diagnostics, plus the note of what this read's decay archived (iter_entries has none)
    assert [d.entry_id for d in snapshot.diagnostics if d.code == "maka.decayed"] == ["exp"]
    assert [d.model_dump(exclude={"path"}) for d in snapshot.diagnostics if d.code != "maka.decayed"] == [
        d.model_dump(exclude={"path"}) for d in second.validate()
    ]
    assert paths[0].read_bytes() == paths[1].read_bytes() != text.encode()
    assert "archiveReason=decayTtlMs-expired" in paths[0].read_text(encoding="utf-8")


def test_read_all_on_a_disabled_store_reads_nothing(tmp_path: Path, sample_copy) -> None:
    path = sample_copy(HEAD_TEMPLATE)
    assert MakaProvider(path, enabled=False).read_all() == ([], [])
