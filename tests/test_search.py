"""Search (issue 21): stemming, diacritic folding, the query syntax, snippets and unsearchable text —
the same through the Python API (with and without an index), the CLI and MCP ``recall``."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memcore
from memcore import MemoryEntry, Query
from memcore.cli import _load_plugin_commands, cli
from memcore.errors import QuerySyntaxError
from memcore.index import SCHEMA_VERSION, SearchIndex, index_path_for, scan_hits, search_hits
from memcore.models import text_terms
from memcore.query_syntax import TOKENIZE, parse_query
from memcore_box import BoxMemoryProvider

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"

ENTRIES = [
    MemoryEntry(title="Deploy window", body="We deploy on friday afternoons, after the review.", tags=["ops"]),
    MemoryEntry(title="Coffee", body="The café near Zürich station is the best.", tags=["food"]),
    MemoryEntry(title="Release train", body="Release on monday, never friday.", tags=["ops"]),
    MemoryEntry(title="Editor", body="Alex prefers vim keybindings.", tags=["tools"]),
]

#: query -> titles found (as a set: ranking is BM25's business, tested separately)
CASES: dict[str, set[str]] = {
    "deploys": {"Deploy window"},  # stemming
    "cafe": {"Coffee"},  # diacritics folded
    "ZURICH": {"Coffee"},  # case and diacritics
    "deploy friday": {"Deploy window"},  # AND by default
    "deploy AND friday": {"Deploy window"},
    "deploy OR release": {"Deploy window", "Release train"},
    "friday NOT deploy": {"Release train"},
    "friday -deploy": {"Release train"},
    '"on friday"': {"Deploy window"},  # a phrase: these words, in order, side by side
    '"friday on"': set(),
    "rel*": {"Release train"},  # prefix
    "rel": set(),  # a word without * is a whole word
    "(deploy OR release) NOT monday": {"Deploy window"},
    "vim or": set(),  # lower-case "or" is a word, which no entry has
}


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Any]:
    location = tmp_path / "box"
    BoxMemoryProvider.init_store(str(location))
    with memcore.open(f"box:{location}") as store:
        for entry in ENTRIES:
            store.add(entry)
        yield store


def _titles(entries: list[MemoryEntry]) -> set[str]:
    return {e.title for e in entries}


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
@pytest.mark.parametrize("text", list(CASES))
def test_store_search_follows_the_query_syntax(box: Any, indexed: bool, text: str) -> None:
    if indexed:
        SearchIndex(box).refresh()
    assert index_path_for(box).exists() is indexed
    assert _titles(box.search(text)) == CASES[text]


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
@pytest.mark.parametrize("text", ["🚀", "!!!", "🚀 !!! …"])
def test_a_query_without_a_searchable_term_finds_nothing_with_a_note(box: Any, indexed: bool, text: str) -> None:
    if indexed:
        SearchIndex(box).refresh()
    found = box.search(text)
    assert found == []
    assert found.note is not None and "nothing to search for" in found.note
    assert [e for e in ENTRIES if Query(text=text).matches(e)] == []
    assert box.search(Query(text="  ")) != []  # blank text is no text filter at all


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"deploy on', "quote at column 1 is not closed"),
        ("(deploy OR release", "'(' at column 1 is not closed"),
        ("deploy)", "')' at column 7 closes no '('"),
        ("OR deploy", "a term is missing at column 1"),
        ("deploy OR", "OR at column 8 has nothing after it"),
        ("NOT deploy", "NOT needs a term to exclude from"),
        ("deploy NOT", "NOT at column 8 has nothing after it"),
        ("deploy AND OR x", "AND at column 8 needs a term on each side"),
    ],
)
@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_bad_syntax_is_a_query_syntax_error_naming_the_column(box: Any, indexed: bool, text: str, message: str) -> None:
    if indexed:
        SearchIndex(box).refresh()
    with pytest.raises(QuerySyntaxError, match=re.escape(message)):
        box.search(text)


def test_user_text_reaches_fts5_only_as_quoted_terms() -> None:
    assert parse_query('title:deploy NEAR(a b) x^ "y" OR z*').fts == (
        '(("title deploy" AND "near" AND ("a" AND "b") AND "x" AND "y") OR "z"*)'
    )
    assert parse_query("café-bar v2.0").fts == '("cafe bar" AND "v2 0")'
    assert parse_query("deploy friday", default_operator="OR").fts == '("deploy" OR "friday")'


def test_hits_carry_highlighted_snippets_ranked_by_bm25(box: Any) -> None:
    for hits in (search_hits(box, "friday"), search_hits(box, Query(text="friday"))):
        assert [h.snippet for h in hits] == [
            "Release on monday, never [friday].",
            "We deploy on [friday] afternoons, after the review.",
        ]
        assert hits[0].score <= hits[1].score < 0
    SearchIndex(box).refresh()
    assert [h.snippet for h in search_hits(box, "deploys")] == ["[Deploy] window"]  # title hit beats body hit


def test_scan_and_index_stem_alike_over_the_samples_vocabulary(tmp_path: Path) -> None:
    """The scan path runs the index's own tokenizer, so every word of real files stems alike."""
    words = sorted(
        {w for p in SAMPLES.rglob("*.md") for w in text_terms(p.read_text(encoding="utf-8", errors="replace"))}
    )
    assert len(words) > 1000
    entries = [MemoryEntry(id=f"w{i}", body=w) for i, w in enumerate(words)]
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{TOKENIZE}')")
    conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", [(i, w) for i, w in enumerate(words)])
    for word in words[:: len(words) // 25]:
        expected = {f"w{r[0]}" for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (f'"{word}"',))}
        near = [e for e in entries if e.body[:2] == word[:2]]  # stems share the word's start
        assert {h.entry.id for h in scan_hits(near, word)} == expected
        assert {e.id for e in near if Query(text=word).matches(e)} == expected


def test_an_index_of_an_older_schema_is_rebuilt_not_misread(box: Any) -> None:
    path = index_path_for(box)
    SearchIndex(box).refresh()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    index = SearchIndex(box)
    try:
        status = index.refresh()
        assert status.rebuilt == "the index database was unreadable" and status.entries == len(ENTRIES)
        assert index.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert _titles([h.entry for h in index.search("deploys")]) == {"Deploy window"}
    finally:
        index.close()


# -- CLI --------------------------------------------------------------------------------------


def _cli(*args: str) -> Any:
    _load_plugin_commands()  # what `memcore` (main) does first: adds `index`
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env={"COLUMNS": "200"})


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_cli_search_shows_snippets_and_json_includes_them(box: Any, indexed: bool) -> None:
    if indexed:
        built = _cli("index", "build", "--store", box.url)
        assert built.exit_code == 0, built.output
    result = _cli("search", "--store", box.url, "fridays")
    assert result.exit_code == 0, result.output
    assert "We deploy on [friday] afternoons" in result.output and "match" in result.output
    result = _cli("search", "--store", box.url, "--json", "cafe OR vim")
    rows = json.loads(result.stdout)
    assert {r["title"]: r["snippet"] for r in rows} == {
        "Coffee": "The [café] near Zürich station is the best.",
        "Editor": "Alex prefers [vim] keybindings.",
    }
    assert all(isinstance(r["score"], float) for r in rows)
    found = {
        tuple(sorted(r["title"] for r in json.loads(_cli("search", "--store", box.url, "--json", t).stdout)))
        for t in ['"on friday"', "rel*", "friday NOT deploy"]
    }
    assert found == {("Deploy window",), ("Release train",)}


def test_cli_search_without_a_searchable_term_prints_nothing_and_a_note(box: Any) -> None:
    result = _cli("search", "--store", box.url, "--json", "🚀")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert result.stderr.startswith("memcore: note: nothing to search for in '🚀'")
    result = _cli("search", "--store", box.url, "!!!")
    assert "Coffee" not in result.stdout and "nothing to search for" in result.stderr


def test_cli_search_bad_syntax_exits_2_with_the_column(box: Any) -> None:
    result = _cli("search", "--store", box.url, '"deploy')
    assert result.exit_code == 2
    assert result.stderr == (
        'memcore: error: search query: the quote at column 1 is not closed; end the phrase with another " '
        '(e.g. "deploy on friday")\n'
    )


# -- MCP --------------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("match", ["all", "any"])
async def test_mcp_recall_follows_the_syntax_with_snippets_and_notes(box: Any, match: str) -> None:
    from mcp import Client

    from memcore.mcp_server import MemoryToolbox, create_server

    url = box.url

    async def recall(text: str) -> dict[str, Any]:
        result = await client.call_tool("recall", {"text": text, "match": match})
        assert not result.is_error, result.content
        data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
        return data

    async with Client(create_server(MemoryToolbox(lambda: memcore.open(url)))) as client:
        data = await recall("deploys")
        assert [(e["title"], e["snippet"]) for e in data["entries"]] == [("Deploy window", "[Deploy] window")]
        assert {e["title"] for e in (await recall("cafe"))["entries"]} == {"Coffee"}
        assert {e["title"] for e in (await recall("deploy OR release"))["entries"]} == {
            "Deploy window",
            "Release train",
        }
        assert {e["title"] for e in (await recall("friday NOT deploy"))["entries"]} == {"Release train"}
        assert {e["title"] for e in (await recall('"on friday"'))["entries"]} == {"Deploy window"}
        assert {e["title"] for e in (await recall("rel*"))["entries"]} == {"Release train"}
        both = {e["title"] for e in (await recall("vim friday"))["entries"]}
        assert both == ({"Editor", "Deploy window", "Release train"} if match == "any" else set())
        data = await recall("🚀")
        assert data["entries"] == [] and data["total"] == 0 and "nothing to search for" in data["note"]
        bad = await client.call_tool("recall", {"text": "deploy OR", "match": match})
        assert bad.is_error and "OR at column 8 has nothing after it" in bad.content[0].text  # type: ignore[union-attr]
