"""The streaming read path gives what the full round-trip read gives (same entries, same order).

``iter_entries`` reads in two passes and parses frontmatter with libyaml (``load_fast``) when it
can; writes and ``validate`` keep ruamel's round-trip objects. These tests compare both, entry by
entry, over the authors' examples, examples/box-workspace, a generated workspace and a workspace
with drift, duplicates, orphans and YAML the fast loader must hand back to the round-trip one.
"""

from __future__ import annotations

import shutil
import unicodedata
from pathlib import Path

import pytest

from memcore.errors import ParseError
from memcore.frontmatter import load_yaml
from memcore.models import Kind, MemoryEntry, Relation
from memcore_box._parse import _File
from memcore_box._yaml import load_fast, plain
from memcore_box.codec import _EPOCH, entry_from_meta
from memcore_box.provider import BoxMemoryProvider

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "box-memory"
EXAMPLES = REPO / "examples" / "box-workspace"
SAMPLE_FILES = {
    "example-memory-decision.md": "decision__jwt-vs-sessions-decision.md",
    "example-memory-task.md": "task__rotate-jwt-keys-monthly.md",
    "example-companion.md": "companion__q2-2026-revenue-report-pdf-companion.md",
}


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
    kinds = [Kind.DECISION, Kind.FACT, Kind.PREFERENCE, Kind.TASK, Kind.NOTE, Kind.REFERENCE]
    with BoxMemoryProvider(str(root)) as store, store.batch():
        first = store.add(MemoryEntry(kind=Kind.DECISION, title="Use Postgres", body="\nWe chose it.\n"))
        for i in range(60):
            entry = MemoryEntry(
                kind=kinds[i % len(kinds)], title=f"Memory {i} — ünïcode" if i % 7 else "", body=f"\nBody {i}\n",
                tags=[f"t{i % 3}", "shared"], confidence=(0.3, 0.5, 0.9)[i % 3], source="gen",
                scope="ops" if i % 5 == 0 else None,
                relations=[Relation(type="related", target=first.id or "", resolved=True)] if i % 4 == 0 else [],
            )
            store.add(entry)
        store.supersede(first.id or "", MemoryEntry(kind=Kind.DECISION, title="Use Postgres 16", body="\nNewer.\n"))
    return root


def _drifted(root: Path) -> Path:
    """A workspace with what a hand editor or a crash leaves: the read must not care."""
    _generated(root)
    mem = root / "memories"
    files = sorted(mem.glob("*.md"))
    text = files[0].read_text(encoding="utf-8")
    # Same id in a second file, created earlier: it comes first, so it is the one yielded.
    (mem / "decision__copy.md").write_text(
        text.replace("created_at: ", "created_at: 2020-01-01T00:00:00Z\nold_created_at: ", 1), encoding="utf-8")
    # Hand edits the index does not know: created_at (order), title (wikilinks), YAML forms
    # only the round-trip loader reads (alias, octal, tag, duplicate key -> orphan).
    edited = files[1].read_text(encoding="utf-8").replace("created_at: ", "created_at: 2019-05-05\nx_was: ", 1)
    files[1].write_text(edited, encoding="utf-8")
    extra = ('---\nid: mem_01JAAAAAAAAAAAAAAAAAAAAAA1\nslug: alias\ntitle: &t Aliased title\nkind: fact\n'
             'status: active\ncreated_at: 2021-01-01T00:00:00Z\nupdated_at: 2021-01-01T00:00:00Z\n'
             'x_again: *t\nx_octal: 0o17\nx_tagged: !!str 12\n'
             'related: ["[[use postgres]]", "[[Aliased title]]", "[[Nobody]]", "[[mem_01JAAAAAAAAAAAAAAAAAAAAAA2]]"]\n'
             '---\nbody\n')
    (mem / "fact__alias.md").write_text(extra, encoding="utf-8")
    (mem / "fact__dup-key.md").write_text(extra.replace("slug: alias\n", "slug: a\nslug: b\n").replace(
        "AAA1", "AAA3"), encoding="utf-8")
    (mem / "fact__no-frontmatter.md").write_text("just text\n", encoding="utf-8")
    (mem / "fact__bad-yaml.md").write_text("---\nid: [unclosed\n---\n", encoding="utf-8")
    (mem / "fact__no-kind.md").write_text("---\nid: mem_01JAAAAAAAAAAAAAAAAAAAAAA4\n---\n", encoding="utf-8")
    plain_one = extra.replace("AAA1", "AAA2").replace("&t ", "").replace("*t", "again").replace(
        "!!str 12", "'12'").replace("0o17", "15").replace("slug: alias", "slug: plain")
    (root / "teams" / "ops" / "memories" / "fact__plain.md").write_text(
        plain_one.replace("title: Aliased title", "title: Use Postgres"), encoding="utf-8")
    (mem / "_index.json").unlink()  # and one folder without its index
    return root


SOURCES = {"samples": _samples, "examples": _examples, "generated": _generated, "drifted": _drifted}


@pytest.fixture(params=sorted(SOURCES))
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return SOURCES[request.param](tmp_path / "ws")


def _full_read(store: BoxMemoryProvider) -> list[MemoryEntry]:
    """The read as it was: every file parsed round-trip and held, sorted, first id wins."""
    files, _ = store._scan()
    resolve, known = store._file_resolver(files)
    entries = [store._entry_of(f, resolve, known)[0] for f in files]
    entries.sort(key=lambda e: (e.created_at or _EPOCH, e.id or ""))
    seen: set[str | None] = set()
    out = []
    for entry in entries:
        if entry.id not in seen:
            seen.add(entry.id)
            out.append(entry)
    return out


def test_iter_entries_equals_the_full_round_trip_read(workspace: Path) -> None:
    with BoxMemoryProvider(str(workspace)) as store:
        expected = _full_read(store)
        got = list(store.iter_entries())
    assert len(expected) >= 3
    assert [e.id for e in got] == [e.id for e in expected]
    assert got == expected


def test_fast_and_round_trip_parses_give_identical_entries(workspace: Path) -> None:
    fast = 0
    with BoxMemoryProvider(str(workspace)) as store:
        files, _ = store._scan()
        resolve, known = store._file_resolver(files)
        for path in store.source_files():
            data, version = store.storage.read(path)
            parsed = store._parse(path, data, version)
            found = store._read_meta(path, data)
            assert (found is None) == (not isinstance(parsed, _File)), path
            if not isinstance(parsed, _File) or found is None:
                continue
            quick = load_fast(parsed.yaml_text)
            if quick is not None:
                fast += 1
                assert quick == plain(parsed.meta), path
                assert list(quick) == [str(k) for k in parsed.meta], path
            slow_entry = entry_from_meta(parsed.meta, parsed.doc.body, path=path, version=version,
                                         resolve=resolve, is_known_id=known)[0]
            read_entry = entry_from_meta(found[0], found[1], path=path, version=version,
                                         resolve=resolve, is_known_id=known)[0]
            assert read_entry == slow_entry, path
            assert read_entry.model_dump() == slow_entry.model_dump(), path
            # One file on its own (memcore.index's refresh) resolves through the folder indexes.
            assert list(store.iter_file_entries(path)) == [store._entry_of(parsed)[0]], path
    assert fast >= 3  # the fast path was exercised, not only the fallback


def test_drifted_workspace_reads_what_the_files_say(tmp_path: Path) -> None:
    root = _drifted(tmp_path / "ws")
    with BoxMemoryProvider(str(root)) as store:
        entries = list(store.iter_entries())
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids))
    assert [e.created_at.year for e in entries[:2] if e.created_at] == [2019, 2020]
    assert entries[0].extra["box"]["x_was"]  # the hand-edited file, by its new created_at
    assert "old_created_at" in entries[1].extra["box"]  # the copy won its id over the original
    alias = next(e for e in entries if e.id == "mem_01JAAAAAAAAAAAAAAAAAAAAAA1")
    assert alias.title == "Aliased title"
    assert alias.extra["box"]["x_again"] == "Aliased title"
    assert alias.extra["box"]["x_octal"] == 15
    assert alias.extra["box"]["x_tagged"] == "12"
    related = [(r.target, r.resolved) for r in alias.relations if r.type == "related"]
    assert related[1] == ("mem_01JAAAAAAAAAAAAAAAAAAAAAA1", True)
    assert related[2] == ("Nobody", False)
    assert related[3] == ("mem_01JAAAAAAAAAAAAAAAAAAAAAA2", True)
    assert related[0][1] is True  # case-folded title
    assert "mem_01JAAAAAAAAAAAAAAAAAAAAAA3" not in ids  # duplicate key: an orphan, as validate says
    assert "mem_01JAAAAAAAAAAAAAAAAAAAAAA4" not in ids
    assert [e.created_at for e in entries] == sorted(e.created_at or _EPOCH for e in entries)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: \"x\"\nc: [a, b]\nd: 2026-01-01\ne: 0.5\nf: true\ng: null\n",
        "a: 1\na: 2\n",
        "x: &a 1\ny: *a\n",
        "base: &b {k: 1}\nother:\n  <<: *b\n  j: 2\n",
        "t: |\n  hello\n  world\n",
        "t: >-\n  fold\n  ed\n\n  p\n",
        "k: .5\nl: 1.\nm: 1.0e5\nn: -0\no: +12\np: 1e5\nq: 1_000\nr: 0x1F\ns: 012\nt: .inf\nu: .nan\n",
        "n: no\nm: yes\no: ~\np:\nq: 10:00\nr: 2026-01-01T10:00:00Z\ns: Null\nt: FALSE\n",
        "- a\n",
        "just a string\n",
        "",
        "# only a comment\n",
        "a: !!str 1\nb: !custom x\n",
        "r: \"a\\u00e9\\/b\\x41\"\ns: 'it''s'\n",
        "1: x\ntrue: y\n",
        "? [a, b]\n: c\n",
        "a: b\n  c\n",
        "a:\n  - x\n  -\n  - {y: [1, 2.5, 'z']}\n",
        "a: x # comment\n# whole line\nb: 'q' #c\n",
        "a: \"line\\u2028sep\"\nb: x\u0085y\n",
        "a:\tb\n",
        "a: [unclosed\n",
        "title: \"Companion — q2.pdf\"\ntags: [companion, pdf]\n",
        "%YAML 1.1\n---\na: yes\n",
        "a: 1\n---\nb: 2\n",
        "a: 0.10\nb: 1.50e+3\nc: -0.0\nd: 00\ne: 0\n",
    ],
)
def test_load_fast_equals_the_round_trip_loader_or_declines(text: str) -> None:
    try:
        data = load_yaml(text) if text.strip() else {}  # as parse_frontmatter reads blank YAML
    except ParseError:
        assert load_fast(text) is None
        return
    fast = load_fast(text)
    if fast is not None:
        assert isinstance(data, dict)
        assert fast == plain(data)
        assert [type(v) for v in fast.values()] == [type(v) for v in plain(data).values()]


def test_titles_and_ids_are_nfc_in_the_stream(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    decomposed = unicodedata.normalize("NFD", "Café rules")
    with BoxMemoryProvider(str(root)) as store:
        target = store.add(MemoryEntry(kind=Kind.FACT, title="Café rules", body="x\n"))
        path = root / "memories" / "fact__link.md"
        path.write_text(
            "---\nid: mem_01JBBBBBBBBBBBBBBBBBBBBBB1\nslug: link\ntitle: Link\nkind: fact\nstatus: active\n"
            f"created_at: 2030-01-01T00:00:00Z\nupdated_at: 2030-01-01T00:00:00Z\nrelated: [\"[[{decomposed}]]\"]\n"
            "---\nbody\n",
            encoding="utf-8",
        )
        entries = list(store.iter_entries())
        assert entries == _full_read(store)
    link = entries[-1]
    assert link.relations[0].target == target.id and link.relations[0].resolved
