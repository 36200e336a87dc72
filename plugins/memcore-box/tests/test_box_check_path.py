"""validate() and read_all() read frontmatter through libyaml and give what the round-trip parse gives.

The checking path (``_check`` -> ``_scan(fast=True)``) takes plain frontmatter from
``load_fast`` with the top-level keys' lines, and falls back to ruamel's round-trip parse for
anything else. These tests run validate(), read_all() and iter_entries() once with the fast
path and once with it switched off (``fast_yaml = False``: every file parsed round-trip, as
before) on the authors' samples, examples/box-workspace, a workspace written by the provider
and a workspace of odd YAML and broken files, and compare diagnostics and entries.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import ClassVar

import pytest

from memcore.models import Kind, MemoryEntry, Relation
from memcore_box._parse import _File, _key_lines, _PlainMeta
from memcore_box._yaml import plain
from memcore_box.provider import BoxMemoryProvider

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "box-memory"
EXAMPLES = REPO / "examples" / "box-workspace"
SAMPLE_FILES = {
    "example-memory-decision.md": "decision__jwt-vs-sessions-decision.md",
    "example-memory-task.md": "task__rotate-jwt-keys-monthly.md",
    "example-companion.md": "companion__q2-2026-revenue-report-pdf-companion.md",
}


class RoundTripBox(BoxMemoryProvider):
    """The provider with every file parsed round-trip (ruamel), as validate() did before."""

    fast_yaml: ClassVar[bool] = False


def _samples(root: Path) -> Path:
    (root / "memories").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "example-_box-memory.json", root / "_box-memory.json")
    shutil.copyfile(SAMPLES / "example-_index.json", root / "memories" / "_index.json")
    for sample, name in SAMPLE_FILES.items():
        shutil.copyfile(SAMPLES / sample, root / "memories" / name)
    return root


def _examples(root: Path) -> Path:
    shutil.copytree(EXAMPLES, root)
    return root


def _generated(root: Path) -> Path:
    BoxMemoryProvider.init_store(str(root), teams="default,ops")
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "report.pdf").write_bytes(b"%PDF-1.4 fake\n")
    kinds = [Kind.DECISION, Kind.FACT, Kind.PREFERENCE, Kind.TASK, Kind.NOTE, Kind.REFERENCE]
    with BoxMemoryProvider(str(root)) as store, store.batch():
        first = store.add(MemoryEntry(kind=Kind.DECISION, title="Use Postgres", body="\nWe chose it.\n"))
        for i in range(40):
            store.add(MemoryEntry(
                kind=kinds[i % len(kinds)], title=f"Memory {i} — ünïcode" if i % 7 else "", body=f"\nBody {i}\n",
                tags=[f"t{i % 3}", "shared"], confidence=(0.3, 0.5, 0.9)[i % 3], source="gen",
                scope="ops" if i % 5 == 0 else None,
                relations=[Relation(type="related", target=first.id or "", resolved=True)] if i % 4 == 0 else [],
            ))
        store.supersede(first.id or "", MemoryEntry(kind=Kind.DECISION, title="Use Postgres 16", body="\nNewer.\n"))
        store.add_companion("files/report.pdf", MemoryEntry(title="Report", body="\nA report.\n"))
    # The binary changes after review: a stale companion.
    (root / "files" / "report.pdf").write_bytes(b"%PDF-1.4 changed\n")
    return root


def _memory(id_: str, slug: str, *, kind: str = "fact", extra: str = "", title: str | None = None) -> str:
    return (f"---\nid: {id_}\nslug: {slug}\ntitle: {title or slug.title()}\nkind: {kind}\nstatus: active\n"
            f"created_at: 2026-01-0{len(slug) % 9 + 1}T10:00:00Z\nupdated_at: 2026-02-01T00:00:00Z\n{extra}---\n"
            f"\nBody of {slug}.\n")


ULID = "mem_01JC0DDYAML0000000000000"


def _odd(root: Path) -> Path:
    """A workspace of hand-written files: odd YAML, broken files, drift between files and index."""
    _generated(root)
    mem = root / "memories"
    files = {
        # Quoted dates and timestamps, a date-only created_at.
        "fact__quoted-dates.md": _memory(ULID + "01", "quoted-dates").replace(
            "created_at: 2026-01-03T10:00:00Z", 'created_at: "2026-01-03T10:00:00Z"').replace(
            "updated_at: 2026-02-01T00:00:00Z", "updated_at: '2026-02-01'"),
        # Anchors and aliases (an anchored true is the integer 1 for ruamel).
        "fact__anchors.md": _memory(ULID + "02", "anchors", extra="x_flag: &f true\nx_same: *f\n",
                                    title="&t Anchored title"),
        "fact__anchor-only.md": _memory(ULID + "03", "anchor-only", extra="x_flag: &f true\nx_n: &n 5\n"),
        # Multi-line strings: literal, folded, plain continued on an indented line, quoted.
        "fact__multi-line.md": _memory(ULID + "04", "multi-line", extra=(
            "x_literal: |\n  line one\n  line two\nx_folded: >-\n  folded\n  text\n\n  para\n"
            "x_plain: a plain\n  continued line\nx_quoted: \"quoted\n  over lines\"\n")),
        # Comments, block lists at column 0 and indented, nested maps, a flow map.
        "fact__layout.md": _memory(ULID + "05", "layout", extra=(
            "# a comment at column 0\ntags:\n- alpha\n- beta\nlinks:\n  - url: https://example.com/x\n"
            "    label: X # trailing comment\nx_map: {a: 1, b: [2, 3.5]}\nrelated:\n  - \"[[Use Postgres]]\"\n"
            "  - \"[[Nobody Here]]\"\nsupersedes: [mem_01JC0DDYAML0000000000NOPE]\n")),
        # Bad field values and a non-ULID id: diagnostics with lines.
        "fact__bad-values.md": _memory("note-1", "bad-values", extra=(
            "confidence: lots\ntags: not-a-list\nsource: 12\nexpires_at: next week\n")),
        # Keys the line scanner cannot place: an indented mapping, a quoted key, a tab.
        "fact__indented.md": "---\n  id: " + ULID + "06\n  kind: fact\n  slug: indented\n---\nx\n",
        "fact__quoted-key.md": _memory(ULID + "07", "quoted-key", extra='"x_quoted_key": 1\n'),
        "fact__tab.md": _memory(ULID + "08", "tab", extra="x_tab:\t1\n"),
        "fact__col0-continuation.md": _memory(ULID + "09", "col0-continuation", extra='x_q: "abc\ndef: g"\n'),
        "fact__non-string-key.md": _memory(ULID + "10", "non-string-key", extra="1: one\n"),
        "fact__special-numbers.md": _memory(ULID + "11", "special-numbers", extra=(
            "x_oct: 0o17\nx_hex: 0x1F\nx_inf: .inf\nx_under: 1_000\nx_float: 0.50\nx_exp: 1.5e+3\nx_neg: -0\n")),
        "fact__yes-no.md": _memory(ULID + "12", "yes-no", extra="x_yes: yes\nx_no: no\nx_null: ~\nx_time: 10:00\n"),
        # Duplicate ids (and a slug on two active memories).
        "fact__dup-a.md": _memory(ULID + "13", "dup"),
        "fact__dup-b.md": _memory(ULID + "13", "dup"),
        # Orphans: no id, no kind, blank id, bad YAML, unclosed, no frontmatter, empty, a list,
        # a duplicate key.
        "fact__no-id.md": "---\nkind: fact\nslug: no-id\n---\nx\n",
        "fact__no-kind.md": "---\nid: " + ULID + "14\n---\nx\n",
        "fact__blank-id.md": "---\nid: '  '\nkind: fact\n---\nx\n",
        "fact__bad-yaml.md": "---\nid: [unclosed\nkind: fact\n---\nx\n",
        "fact__unclosed.md": "---\nid: " + ULID + "15\nkind: fact\n",
        "fact__no-frontmatter.md": "Just text, no frontmatter.\n",
        "fact__empty.md": "---\n---\nbody\n",
        "fact__list.md": "---\n- a\n- b\n---\nbody\n",
        "fact__dup-key.md": _memory(ULID + "16", "dup-key", extra="slug: again\n"),
        # File name off the convention; a companion whose binary is gone.
        "odd-name.md": _memory(ULID + "17", "odd-name-slug"),
        "companion__gone.md": _memory(ULID + "18", "gone", kind="companion", extra=(
            "companion_for:\n  file_id: files/gone.pdf\n  filename: gone.pdf\n  sha256: abc\n")),
    }
    for name, text in files.items():
        (mem / name).write_text(text, encoding="utf-8", newline="")
    # Encodings and line ends: CRLF, a BOM, Latin-1 bytes (not UTF-8).
    (mem / "fact__crlf.md").write_bytes(_memory(ULID + "19", "crlf").replace("\n", "\r\n").encode())
    (mem / "fact__bom.md").write_bytes(b"\xef\xbb\xbf" + _memory(ULID + "20", "bom").encode())
    (mem / "fact__latin1.md").write_bytes(_memory(ULID + "21", "latin1", title="Caf\xe9").encode("latin-1"))
    # Drift: a team folder loses its index; an indexed memory file is removed.
    (root / "teams" / "ops" / "memories" / "_index.json").unlink()
    indexed = sorted(p for p in mem.glob("*.md") if "__memory-" in p.name)
    indexed[0].unlink()
    return root


SOURCES = {"samples": _samples, "examples": _examples, "generated": _generated, "odd": _odd}


@pytest.fixture(params=sorted(SOURCES))
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return SOURCES[request.param](tmp_path / "ws")


def test_validate_and_read_all_equal_the_round_trip_path(workspace: Path) -> None:
    with RoundTripBox(str(workspace)) as slow:
        slow_diags = slow.validate()
        slow_snapshot = slow.read_all()
        slow_entries = list(slow.iter_entries())
    with BoxMemoryProvider(str(workspace)) as fast:
        fast_diags = fast.validate()
        fast_snapshot = fast.read_all()
        fast_entries = list(fast.iter_entries())
    assert fast_diags == slow_diags  # same diagnostics, same order
    assert fast_snapshot.diagnostics == slow_snapshot.diagnostics == slow_diags
    assert fast_snapshot.entries == slow_snapshot.entries
    assert [e.model_dump() for e in fast_snapshot.entries] == [e.model_dump() for e in slow_snapshot.entries]
    assert fast_entries == slow_entries == slow_snapshot.entries
    assert len(slow_snapshot.entries) >= 3


def test_each_file_parses_alike_on_both_paths(workspace: Path) -> None:
    fast_files = 0
    with BoxMemoryProvider(str(workspace)) as store:
        for path in store.source_files():
            data, version = store.storage.read(path)
            slow = store._parse(path, data, version)
            quick = store._parse(path, data, version, fast=True)
            assert type(quick) is type(slow), path
            if not isinstance(slow, _File):
                assert quick == slow, path  # the same orphan diagnostic
                continue
            assert isinstance(quick, _File)
            if isinstance(quick.meta, _PlainMeta):
                fast_files += 1
            assert plain(quick.meta) == plain(slow.meta), path
            assert list(quick.meta) == list(slow.meta), path
            assert [type(v) for v in plain(quick.meta).values()] == [type(v) for v in plain(slow.meta).values()], path
            assert [quick.meta.lc.key(k) for k in quick.meta] == [slow.meta.lc.key(k) for k in slow.meta], path
            assert quick.body == slow.body == slow.doc.body, path
            assert quick.yaml_text == slow.yaml_text and quick.size == slow.size, path
            # The round-trip document is still there when asked for.
            assert quick.doc.dumps() == slow.doc.dumps(), path
    assert fast_files >= 3  # the libyaml path was taken, not only the fallback


def test_odd_workspace_diagnostics(tmp_path: Path) -> None:
    """The odd workspace says what it should (so the equality above compares something)."""
    root = _odd(tmp_path / "ws")
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
        taken = {}
        for path in store.source_files():
            parsed = store._parse(path, *store.storage.read(path), fast=True)
            taken[path] = isinstance(parsed, _File) and isinstance(parsed.meta, _PlainMeta)
    codes = {((d.path or "").rsplit("/", 1)[-1], d.code) for d in snapshot.diagnostics}
    for name in ("no-id", "no-kind", "blank-id", "bad-yaml", "unclosed", "no-frontmatter", "empty", "list", "dup-key"):
        assert (f"fact__{name}.md", "box.orphan") in codes, name
    assert ("fact__dup-a.md", "box.duplicate-id") in codes and ("fact__dup-b.md", "box.duplicate-id") in codes
    assert ("fact__dup-a.md", "box.slug-conflict") in codes
    assert ("odd-name.md", "box.filename") in codes
    assert ("companion__gone.md", "box.companion-vanished") in codes
    assert any(code == "box.companion-stale" for _, code in codes)
    assert ("_index.json", "box.index-missing") in codes  # teams/ops/memories/_index.json
    assert any(code == "box.index-missing-file" for _, code in codes)
    lines = {((d.path or "").rsplit("/", 1)[-1], d.code): d.line for d in snapshot.diagnostics}
    assert lines[("fact__bad-values.md", "box.id-format")] == 2
    assert lines[("fact__layout.md", "box.unresolved-wikilink")] == 17  # the related: line
    assert lines[("fact__layout.md", "box.dangling-id")] == 20
    # Fast where the text is plain, round-trip where it is not.
    assert taken["memories/fact__layout.md"] and taken["memories/fact__bad-values.md"]
    for name in ("crlf", "bom", "quoted-dates", "multi-line", "yes-no", "dup-a"):
        assert taken[f"memories/fact__{name}.md"], name
    for name in ("anchors", "anchor-only", "indented", "quoted-key", "col0-continuation", "special-numbers"):
        assert not taken[f"memories/fact__{name}.md"], name
    anchored = next(e for e in snapshot.entries if e.id == ULID + "03")
    assert anchored.extra["box"]["x_flag"] == 1  # ruamel's reading of an anchored true, kept


@pytest.mark.parametrize(
    ("text", "keys", "expected"),
    [
        ("id: x\nkind: fact\n", ["id", "kind"], {"id": 0, "kind": 1}),
        ("# c\nid: x\n\ntags:\n- a\n-\n- b\nkind: y\n", ["id", "tags", "kind"], {"id": 1, "tags": 3, "kind": 7}),
        ("id: x\nt: |\n  a\n\n  b\nkind: y", ["id", "t", "kind"], {"id": 0, "t": 1, "kind": 5}),
        ("id: x\nkind: y\n", ["kind", "id"], None),  # not in the mapping's order
        ("id: x\n", ["id", "kind"], None),  # a key not found
        ("  id: x\n  kind: y\n", ["id", "kind"], None),  # indented mapping
        ('"id": x\n', ["id"], None),  # quoted key
        ("id: x\r\nkind: y\n", ["id", "kind"], None),  # a carriage return
        ('id: "a\nkind: b"\nkind: c\n', ["id", "kind"], None),  # a continuation at column 0
        ("id: x\n-x: y\n", ["id"], None),
        ("? id\n: x\n", ["id"], None),
        ("id:x\n", ["id:x"], None),
    ],
)
def test_key_lines(text: str, keys: list[str], expected: dict[str, int] | None) -> None:
    assert _key_lines(text, keys) == expected


def test_writes_after_a_fast_check_keep_the_file_bytes(tmp_path: Path) -> None:
    """Files read by validate() are not the ones writes patch: an update keeps untouched lines."""
    root = _samples(tmp_path / "ws")
    path = root / "memories" / "task__rotate-jwt-keys-monthly.md"
    before = path.read_text(encoding="utf-8")
    with BoxMemoryProvider(str(root)) as store:
        store.validate()
        entry = next(e for e in store.read_all().entries if e.title == "Rotate JWT signing keys monthly")
        store.update(entry.model_copy(update={"body": entry.body + "\nOne more line.\n"}))
    after = path.read_text(encoding="utf-8")
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert after.endswith("\nOne more line.\n")
    assert all(line.startswith(("updated_at:", "One more line.")) for line in changed if line), changed
