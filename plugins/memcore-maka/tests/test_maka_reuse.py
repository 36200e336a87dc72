"""What a write already parsed is reused by later reads, and the shortcuts of the write path.

- Each section keeps the entry built from it (a section's text never changes; an edit makes
  new sections), and an edit that re-parses a section whose text comes back the same keeps it.
- The provider keeps MEMORY.md's bytes and their parse after each read and write: a read of
  the same bytes reuses them (so the read-back of a migration costs copies), any other bytes
  are parsed again, and a batch edits its own copy, never the kept parse.
- Entries handed out are copies: changing one changes no later read.
- Redaction, value normalisation, number parsing and the surrogate check take shortcuts for
  the usual case; each gives what the full rule gives.
"""

from __future__ import annotations

import random
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.convert import migrate
from memcore.errors import InvalidEntryError, UnsafePathError
from memcore.models import Kind, MemoryEntry, Relation
from memcore_maka import MakaProvider
from memcore_maka._parse import js_number, parse_document, parse_finite_number
from memcore_maka._redact import _apply_patterns, may_hold_secret, redact_secrets
from memcore_maka.codec import entry_from_section, normalize_meta_value
from memcore_maka.codec import entry_version as _version
from memcore_maka.codec import view as _view

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

SECTION_POOL = [
    "## Heading",
    "## Other title  ",
    "<!-- maka-memory: id=a status=active tags=x,y createdAt=1700000000000 -->",
    "<!-- maka-memory: id=b mcKind=decision mcConfidence=0.7 bad -->",
    "<!-- maka-memory: id=c status=odd scope=session -->",
    "plain content",
    "content with trailing space  ",
    "  ",
    "",
]


def entries(n: int) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            kind=(Kind.FACT, Kind.DECISION, Kind.NOTE)[i % 3],
            title=f"Item {i}",
            body=f"Entry {i}: what was learnt.\n" if i % 2 else f"  Entry {i}\n## not a heading",
            tags=[f"topic-{i % 4}", "Bench"],
            confidence=(0.3, 0.7, None)[i % 3],
            source="bench",
            created_at=T0 + timedelta(hours=i),
            relations=[Relation(type="related", target="elsewhere")] if i % 5 == 0 else [],
            extra={"memcore": {"migrated_from": {"format": "whitebox", "id": f"obs-{i}"}}},
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", range(30))
def test_entries_kept_on_sections_are_what_building_them_again_gives(seed: int) -> None:
    rnd = random.Random(seed)
    lines = [rnd.choice(SECTION_POOL) for _ in range(rnd.randint(2, 16))]
    doc = parse_document("\n".join(["# Maka Memory", *lines]) + "\n")
    for _ in range(20):
        for section in doc.entries:
            _view(doc, section, False)  # build (or reuse) every entry before the edit
        start = rnd.randint(1, len(doc.lines) - 1)
        end = rnd.randint(start, min(len(doc.lines) - 1, start + 3))
        new = [rnd.choice(SECTION_POOL) for _ in range(rnd.randint(0, 4))]
        doc.splice(start, end, new, ["\n"] * len(new))
        for section in doc.entries:
            fresh = entry_from_section(section, version=_version(doc, section))
            view = _view(doc, section, False)
            assert view.entry == fresh.entry, seed
            assert (view.meta, view.applied, view.problems) == (fresh.meta, fresh.applied, fresh.problems)
            assert view.section is section


def test_an_append_keeps_the_entry_built_on_the_section_before_it() -> None:
    doc = parse_document("# Maka Memory\n\n## A\n<!-- maka-memory: id=a -->\nbody a\n")
    first = doc.entries[0]
    _view(doc, first, False)
    built = first.views[False]
    doc.splice(4, 5, ["body a", "", "## B", "<!-- maka-memory: id=b -->", "body b", ""], ["\n"] * 5 + [""])
    again = doc.entries[0]
    assert again is not first  # re-parsed: the append touched its last line
    assert again.views[False] is built  # …but its text is the same, so its entry was kept
    assert list(doc.entries[1].views) == []


def test_reads_after_a_batch_equal_a_fresh_providers(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    with MakaProvider(path) as provider:
        with provider.batch():
            returned = [provider.add(e) for e in entries(12)]
        snapshot = provider.read_all()
        again = provider.read_all()
        fresh = MakaProvider(path).open().read_all()
        assert snapshot == again == fresh
        assert snapshot.entries == returned
        assert [e.version for e in snapshot.entries] == [e.version for e in fresh.entries]
        assert list(provider.iter_entries()) == fresh.entries
        assert provider.get(returned[3].id or "") == fresh.entries[3]


def test_entries_handed_out_are_copies(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    with provider.batch():
        added = provider.add(entries(1)[0])
    expected = MakaProvider(path).open().read_all().entries
    for got in (added, provider.read_all().entries[0], provider.get(added.id or "")):
        got.tags.append("changed")
        got.relations.append(Relation(type="x", target="y"))
        got.extra["memcore"]["migrated_from"]["id"] = "changed"  # type: ignore[index]
        got.extra["other"] = {"k": 1}
        got.title = "Changed"
    assert provider.read_all().entries == expected
    assert provider.get(added.id or "") == expected[0]


def test_a_file_changed_by_someone_else_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    provider.add(MemoryEntry(id="one", title="One", body="first body"))
    assert [e.body for e in provider.iter_entries()] == ["first body"]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("first body", "other body"), encoding="utf-8")  # same size
    assert [e.body for e in provider.iter_entries()] == ["other body"]
    other = MakaProvider(path).open()
    other.add(MemoryEntry(id="two", title="Two", body="second"))
    assert [e.id for e in provider.read_all().entries] == ["one", "two"]
    path.write_text(text, encoding="utf-8")  # back to bytes this provider read before
    assert [e.body for e in provider.iter_entries()] == ["first body"]


def test_a_batch_edits_its_own_copy_other_threads_see_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    provider.add(MemoryEntry(id="one", title="One", body="first"))
    before = provider.read_all()
    seen: list[list[str | None]] = []

    def read() -> None:
        seen.append([e.id for e in provider.read_all().entries])

    with provider.batch():
        provider.add(MemoryEntry(id="two", title="Two", body="second"))
        provider.update(before.entries[0].model_copy(update={"body": "first, changed"}))
        worker = threading.Thread(target=read)
        worker.start()
        worker.join()
        assert [e.body for e in provider.iter_entries()] == ["first, changed", "second"]
    assert seen == [["one"]]
    assert provider.read_all() == MakaProvider(path).open().read_all()
    assert [e.body for e in provider.iter_entries()] == ["first, changed", "second"]


HINTY = [
    "plain words ",
    "token",
    "TOKEN: abcdefgh1234 ",
    "to\u212aen=secretvalue ",  # KELVIN SIGN: IGNORECASE matches it as k
    "\u017fecret: x9y8z7w6 ",  # LONG S: IGNORECASE matches it as s
    "password=hunter2 ",
    "Bearer abcdefghijklmnop ",
    "Authorization: Basic QWxhZGRpbjpvcGVu ",
    '{"api_key": "v"} ',
    "?key=abc&page=2 ",
    "sk-ant-abcdefghij ",
    "AIza" + "x" * 24 + " ",
    "ghp_" + "a" * 22 + " ",
    "github_pat_" + "b" * 22 + " ",
    "xoxb-1234567890ab ",
    "AKIA" + "A" * 16 + " ",
    "glpat-" + "c" * 20 + " ",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- ",
    "monkey business ",
    "ﬀ straße ",
    "\n",
]


@pytest.mark.parametrize("seed", range(10))
def test_redaction_shortcut_gives_what_every_pattern_gives(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(300):
        text = "".join(rnd.choice(HINTY) for _ in range(rnd.randint(0, 5)))
        assert redact_secrets(text) == _apply_patterns(text), text
        if not may_hold_secret(text):
            assert _apply_patterns(text) == text
    assert redact_secrets("to\u212aen=secretvalue") == "to\u212aen=[redacted]"
    assert not may_hold_secret("Entry 20: what was learnt on day 0, and why it matters.")


_UNSAFE_RUN = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff<>]+")


def test_value_and_number_shortcuts_match_the_full_rules() -> None:
    rnd = random.Random(7)
    pieces = ["a", "-", " ", "<", ">", "\u3000", "mem-1", "x" * 70, "\t", "é"]
    for _ in range(2000):
        value = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 4)))
        # Maka's normalizeMetaValue: unsafe runs -> "-", edge dashes trimmed, 128 characters
        expected = re.sub(r"^-+|-+\Z", "", _UNSAFE_RUN.sub("-", value))[:128]
        assert normalize_meta_value(value) == expected, value
    for raw in ["0", "007", "1700000000000", "9" * 400, "12", "1.5", "-1", " 5", "0x10", "\u0663"]:
        number = js_number(raw)
        finite = number == number and number != float("inf") and number >= 0
        assert parse_finite_number(raw) == (number if finite else None), raw
    assert parse_finite_number("9" * 400) is None  # Number() gives Infinity: not finite


@pytest.mark.parametrize("name", ["title", "source", "scope", "parent", "id"])
def test_a_lone_surrogate_in_any_text_field_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    bad = MemoryEntry(title="t", body="b").model_copy(update={name: "x\ud800"})
    with pytest.raises(InvalidEntryError, match=rf"entry\.{name} has a lone surrogate \(U\+D800\)"):
        provider.add(bad)
    assert path.read_bytes() == b"# Maka Memory\n"


def test_a_lone_surrogate_put_into_extra_after_validation_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    entry = MemoryEntry(title="t", body="b", extra={"other": {"ok": "fine"}})
    entry.extra["other"]["bad"] = ["fine", "x\udfff"]  # type: ignore[index]
    with pytest.raises(InvalidEntryError, match=r"entry\.extra\.other\.bad\[1\] has a lone surrogate"):
        provider.add(entry)
    assert path.read_bytes() == b"# Maka Memory\n"


def test_a_symlink_swapped_in_during_a_batch_is_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    outside = tmp_path / "outside.md"
    with pytest.raises(UnsafePathError, match=r"MEMORY\.md\.bak is a symlink.*`batch` refused"):
        with provider.batch():
            provider.add(MemoryEntry(id="one", title="One", body="first"))
            provider.backup_path.symlink_to(outside)  # after the first write's check
            provider.add(MemoryEntry(id="two", title="Two", body="second"))
    assert provider.backup_path.is_symlink() and not outside.exists()
    assert path.read_bytes() == b"# Maka Memory\n"


DECAYING = (
    "# Maka Memory\n\n"
    "## Expired\n<!-- maka-memory: id=old origin=manual createdAt=1000 status=active decayTtlMs=5000 -->\nold\n\n"
    "## Fresh\n<!-- maka-memory: id=new origin=manual createdAt=1000 decayTtlMs=99999999999999 -->\nnew\n"
)


def test_read_all_says_which_entries_its_decay_archived_and_why(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(DECAYING, encoding="utf-8")
    provider = MakaProvider(path)
    provider._now = lambda: 1_700_000_000_000
    entries, diagnostics = provider.read_all()
    assert [(e.id, e.status.value) for e in entries] == [("old", "archived"), ("new", "active")]
    [note] = [d for d in diagnostics if d.code == "maka.decayed"]
    assert (note.entry_id, note.line, note.severity.value, note.path) == ("old", 4, "warning", str(path))
    assert note.message.startswith(
        "entry 'old' ('Expired') expired at 1970-01-01T00:00:06.000Z (its decayTtlMs=5000 ms had run out) and "
        "was archived by this read"
    )
    assert "status=archived archiveReason=decayTtlMs-expired archivedAt=1700000000000 (2023-11-14T22:13:20.000Z)" in (
        note.message
    )
    assert "archiveReason=decayTtlMs-expired" in path.read_text(encoding="utf-8").split("\n")[3]
    assert provider.read_all().diagnostics == []  # the event is reported once, by the read that did it
    assert provider.validate() == []


def test_no_decay_note_when_the_store_cannot_be_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(DECAYING, encoding="utf-8")
    for options in ({"read_only": True}, {"apply_decay": False}):
        entries, diagnostics = MakaProvider(path, **options).read_all()
        assert [e.status.value for e in entries] == ["active", "active"]
        assert diagnostics == []
    assert path.read_text(encoding="utf-8") == DECAYING


def test_a_migration_report_names_the_entry_decay_archived(tmp_path: Path) -> None:
    source = tmp_path / "source" / "MEMORY.md"
    MakaProvider.init_store(str(source))
    expired = MemoryEntry(
        id="task-1",
        kind=Kind.TASK,
        title="Rotate the keys",
        body="Before May.",
        created_at=T0,
        expires_at=T0 + timedelta(days=1),
    )
    MakaProvider(source, apply_decay=False).add(expired)
    target = tmp_path / "target" / "MEMORY.md"
    report = migrate(f"maka:{source}", f"maka:{target}")  # the source is read read-only: no decay there
    [row] = report.entries
    assert [c.field for c in row.losses][:1] == ["status"]
    [note] = [d for d in report.diagnostics if d.code == "maka.decayed"]
    assert note.entry_id == row.target_id
    assert "'Rotate the keys'" in note.message and "expired at 2026-01-06T09:00:00.000Z" in note.message
