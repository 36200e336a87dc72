"""Fast paths give exactly what the plain rules give (equivalence tests of the Maka plugin).

Parser fast paths (formerly ``test_maka_parser_fast.py``): The fast paths of the parser give
exactly what the plain rules give (fuzzed against them).

The oracle below is the parser's earlier, direct transcription of Maka's rules (the whole-line
regex, the token loop, the ``\\r?\\n`` split); the fast paths (string checks instead of the
regex, one ``findall`` for all-valid ASCII comments, ``str.split`` without ``\\r``) must agree
with it on every input.

The linear-time heading pattern (formerly ``test_maka_heading_linear.py``): HEADING_RE matched
in linear time, with exactly the reference pattern's matches.

Maka's ``^##\\s+(.+?)\\s*$`` (JavaScript classes) is quadratic on a long whitespace run inside a
title: ``"## a" + " " * 60000 + "b"`` took 16.6 s for ``memcore ls``. The provider now matches
with a possessive pattern (and the reference only for an all-whitespace heading, where it is
linear); measured, not asserted: that file now lists in about 0.6 s including start-up.

Reused parses and write-path shortcuts (formerly ``test_maka_reuse.py``): What a write already
parsed is reused by later reads, and the shortcuts of the write path.

- Each section keeps the entry built from it (a section's text never changes; an edit makes
  new sections), and an edit that re-parses a section whose text comes back the same keeps it.
- The provider keeps MEMORY.md's bytes and their parse after each read and write: a read of
  the same bytes reuses them (so the read-back of a migration costs copies), any other bytes
  are parsed again, and a batch edits its own copy, never the kept parse.
- Entries handed out are copies: changing one changes no later read.
- Redaction, value normalisation, number parsing and the surrogate check take shortcuts for
  the usual case; each gives what the full rule gives.

In-place edits in a batch (formerly ``test_maka_incremental.py``): Writes inside batch() edit
the parsed file in place: same bytes and same results as one by one.

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
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.errors import (
    AmbiguousIdError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    StoreLimitError,
    UnsafePathError,
)
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import StoreSnapshot
from memcore.redact import _apply_patterns, may_hold_secret, redact_secrets
from memcore_conformance import assert_equivalent
from memcore_maka import MakaProvider
from memcore_maka._parse import (
    _JS_WS,
    HEADING_RE,
    HEADING_REFERENCE_RE,
    MAX_BYTES,
    META_KEY_RE,
    META_RE,
    MetaComment,
    js_number,
    js_trim,
    parse_document,
    parse_finite_number,
    parse_meta_comment,
    split_lines,
)
from memcore_maka.codec import entry_from_section, normalize_meta_value
from memcore_maka.codec import entry_version as _version
from memcore_maka.codec import view as _view

# == Parser fast paths =========================================================
_SPLIT_WS = re.compile(f"[{_JS_WS}]+")


def oracle_meta(line: str) -> MetaComment | None:
    match = META_RE.match(js_trim(line))
    if match is None:
        return None
    meta: dict[str, str] = {}
    dropped: list[tuple[str, str]] = []
    for part in _SPLIT_WS.split(match.group(1)):
        if not part:
            continue
        idx = part.find("=")
        if idx <= 0:
            dropped.append((part, "no key=value"))
            continue
        key, value = part[:idx], part[idx + 1 :]
        if not META_KEY_RE.match(key):
            dropped.append((part, "key must match [a-zA-Z][a-zA-Z0-9_-]*"))
            continue
        if len(value.encode("utf-16-le")) // 2 > 128:
            dropped.append((part, "value longer than 128 characters"))
            continue
        meta[key] = value
    return MetaComment(meta, tuple(dropped))


def oracle_split(text: str) -> tuple[list[str], list[str]]:
    parts = re.split(r"(\r?\n)", text)
    return parts[0::2], [*parts[1::2], ""]


PIECES = [
    "<!--",
    "-->",
    "maka-memory:",
    " maka-memory: ",
    "<!-- maka-memory:",
    "id=a",
    "k=v",
    "tags=x,y",
    "=v",
    "1bad=x",
    "a=b=c",
    "x",
    "é=1",
    "k=é",
    "k=\U0001f600",
    " ",
    "\t",
    "\u00a0",
    "\u2028",
    "\u3000",
    "\ufeff",
    "\x1c",
    "\x1f",
    "\x85",
    "\r",
    "\x00",
    "-",
    ">",
    "a_b-c=",
    "k=" + "v" * 128,
    "k=" + "v" * 129,
    "k=" + "é" * 129,
    "k=" + "\U0001f600" * 64,
    "k=" + "\U0001f600" * 65,
]


def random_line(rnd: random.Random) -> str:
    body = "".join(rnd.choice(PIECES) + rnd.choice(["", " ", "  ", "\t"]) for _ in range(rnd.randint(0, 7)))
    shape = rnd.random()
    if shape < 0.6:
        return (
            rnd.choice(["", " ", "\u3000"]) + "<!--" + rnd.choice(["", " ", "\u2028"]) + "maka-memory:" + body + "-->"
        )
    if shape < 0.8:
        return "<!-- maka-memory: " + body + rnd.choice(["-->", "--", " -->  ", "-->\u2029"])
    return body


@pytest.mark.parametrize("seed", range(20))
def test_meta_comment_fast_paths_match_the_rules(seed: int) -> None:
    rnd = random.Random(seed)
    assert_equivalent(parse_meta_comment, oracle_meta, [random_line(rnd) for _ in range(400)])


@pytest.mark.parametrize(
    "line",
    [
        "<!--maka-memory:-->",
        "<!-- maka-memory: a=b --> x -->",
        "<!-- maka-memory: a=b\rc=d -->",
        "<!-- maka-memory:\r a=b \u2028-->",
        "  <!-- maka-memory: id=x id=y k=v -->\ufeff",
        "<!-- maka-memory: id=x\x1cy=z -->",
        "<!-- maka-memory: id=x\x85y=z -->",
        "<!-- maka-memory: k=" + "v" * 128 + " -->",
        "<!-- maka-memory: k=" + "v" * 129 + " -->",
        "<!--\u00a0maka-memory:\u3000id=a\u3000-->",
    ],
)
def test_meta_comment_edge_cases_match_the_rules(line: str) -> None:
    assert_equivalent(parse_meta_comment, oracle_meta, [line])


@pytest.mark.parametrize("seed", range(10))
def test_split_lines_matches_the_regex_split(seed: int) -> None:
    rnd = random.Random(seed)
    parts = ["a", "\n", "\r\n", "\r", "\u2028", " ", "## x"]
    texts = ["".join(rnd.choice(parts) for _ in range(rnd.randint(0, 20))) for _ in range(200)]
    assert_equivalent(split_lines, oracle_split, texts)


# == The linear-time heading pattern ===========================================
SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "maka"


def _sig(m: re.Match[str] | None) -> tuple[str, tuple[int, int]] | None:
    return None if m is None else (m.group(1), m.span(1))


def test_same_matches_on_samples_and_examples() -> None:
    files = [p for p in [*SAMPLES.glob("*.md"), *EXAMPLES.rglob("*.md")] if p.is_file()]
    assert len(files) >= 7
    headings = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").split("\n"):
            assert _sig(HEADING_RE.match(line)) == _sig(HEADING_REFERENCE_RE.match(line)), repr(line)
            headings += HEADING_RE.match(line) is not None
    assert headings > 10


def test_same_matches_on_generated_lines() -> None:
    alphabet = [
        "#",
        " ",
        "\t",
        "a",
        "b",
        "\r",
        "\u2028",
        "\u2029",
        "\u00a0",
        "\u3000",
        "\ufeff",
        "\v",
        "\x85",
        "\u200b",
    ]
    rng = random.Random(3)
    matched = 0
    for _ in range(40000):
        line = rng.choice(["##", "## ", "#", "###", "##\t", ""]) + "".join(
            rng.choice(alphabet) for _ in range(rng.randint(0, 10))
        )
        assert _sig(HEADING_RE.match(line)) == _sig(HEADING_REFERENCE_RE.match(line)), repr(line)
        matched += HEADING_RE.match(line) is not None
    assert matched > 5000


def test_long_whitespace_title_reads(tmp_path: Path) -> None:
    title = "a" + " " * 60000 + "b"
    m = HEADING_RE.match("## " + title + "  ")
    assert m is not None and m.group(1) == title
    assert HEADING_RE.match("## a" + " " * 60000 + "\rb") is None
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## " + title + "\n<!-- maka-memory: id=x1 origin=manual createdAt=1770000000000 "
        "updatedAt=1770000000000 status=active -->\nbody\n",
        encoding="utf-8",
    )
    (entry,) = MakaProvider(path).open().iter_entries()
    assert entry.id == "x1" and entry.title.startswith("a") and entry.title.endswith("b")


# == Reused parses and write-path shortcuts ====================================
T_REUSE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

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
            created_at=T_REUSE + timedelta(hours=i),
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
        created_at=T_REUSE,
        expires_at=T_REUSE + timedelta(days=1),
    )
    MakaProvider(source, apply_decay=False).add(expired)
    target = tmp_path / "target" / "MEMORY.md"
    report = migrate(f"maka:{source}", f"maka:{target}")  # the source is read read-only: no decay there
    [row] = report.entries
    assert [c.field for c in row.losses][:1] == ["status"]
    [note] = [d for d in report.diagnostics if d.code == "maka.decayed"]
    assert note.entry_id == row.target_id
    assert "'Rotate the keys'" in note.message and "expired at 2026-01-06T09:00:00.000Z" in note.message


# == In-place edits in a batch =================================================
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
