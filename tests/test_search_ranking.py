"""The index's ranking (issue 24): the fast top-k of ``memcore.ranking`` equals full BM25.

A word or words joined by AND, with a limit and no filter, are ranked from in-process postings
with early termination; every test here compares that answer with a straightforward full
ranking (every match scored by FTS5's ``bm25()``, ordered by score, file and position) on a
generated store where some words occur in nearly every entry and many entries tie.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.conftest import JsonDirProvider

from memcore import Kind, MemoryEntry, Query
from memcore.index import SearchIndex
from memcore.query_syntax import parse_query
from memcore.ranking import FAST_RANK_ENV

#: Word pools: "river" lands in nearly every entry, "bank" in most, "stone" in some, "heron" rarely.
_COMMON = ["river", "rivers", "bank", "water"]
_OTHER = ["stone", "bridge", "mill", "reed", "ferry", "willow", "otter", "heron"]
_QUERIES = [
    "river",
    "bank",
    "water",
    "stone",
    "heron",
    "river bank",
    "bank river",
    "river water stone",
    "rivers banks",
    "heron river",
    "river kingfisher",
    "kingfisher",
    "river OR heron",
    "heron OR stone OR kingfisher",
    "bank OR water",
]


def _body(rnd: random.Random) -> str:
    words = []
    for _ in range(rnd.choice([3, 5, 5, 8, 13, 21, 40])):
        pick = rnd.random()
        if pick < 0.35:
            words.append(rnd.choice(_COMMON))
        elif pick < 0.4:
            words.append("heron" if rnd.random() < 0.1 else rnd.choice(_OTHER[:-1]))
        else:
            words.append(rnd.choice(["the", "a", "slow", "green", "old", "north", "east", "day"]))
    return " ".join(words)


def _write_corpus(root: Path, n: int, seed: int) -> JsonDirProvider:
    root.mkdir()
    rnd = random.Random(seed)
    provider = JsonDirProvider(root)
    for i in range(n):
        if i % 7 == 3:  # exact copies of an earlier entry: equal scores that only file order settles
            body, title, tags = "river bank " * 2, "River bank", ["river"]
        else:
            body = _body(rnd)
            title = " ".join(rnd.sample(["River", "Notes", "Mill", "Bank", "Day", "Water"], rnd.randint(1, 3)))
            tags = rnd.sample(["river", "bank", "stone", "work"], rnd.randint(0, 2))
        provider.add(MemoryEntry(id=f"e{i:04d}", kind=Kind.NOTE, title=title, body=body, tags=tags))
    return provider


def _full_ranking(index: SearchIndex, text: str) -> list[tuple[str, float]]:
    """Every match scored by FTS5's bm25() with the index's weights, best first, ties in file order."""
    fts = parse_query(text).fts
    rows = index.conn.execute(
        "SELECT e.id, bm25(fts, 10.0, 1.0, 5.0) AS score FROM fts JOIN entries e ON e.rowid = fts.rowid"
        " WHERE fts MATCH ? ORDER BY score, e.file, e.seq",
        (fts,),
    ).fetchall()
    return [(eid, float(score)) for eid, score in rows]


def _hits(index: SearchIndex, text: str, limit: int) -> list[tuple[str, float]]:
    return [(h.entry.id or "", h.score) for h in index.search(Query(text=text, limit=limit), snippets=False)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_top_k_equals_the_full_bm25_ranking(tmp_path: Path, seed: int) -> None:
    store = _write_corpus(tmp_path / "store", 400, seed)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        river = _full_ranking(index, "river")
        assert len(river) > 0.8 * 400  # a very common word
        assert len({score for _id, score in river}) < len(river)  # ties at the cut are exercised
        index.search(Query(text="river", limit=1))  # the first search of an index builds nothing
        for text in _QUERIES:
            full = _full_ranking(index, text)
            for limit in (1, 2, 3, 7, 10, 20, 50, 1000):
                assert _hits(index, text, limit) == full[:limit], (text, limit)
        # the answers above came from postings, not from bm25(): each searched token is held
        assert {"river", "bank", "water", "stone", "heron", "kingfish"} <= set(index._ranker.tokens)
        # an AND searched again was answered from its joint groups (the first time: the threshold algorithm)
        assert {("river", "bank"), ("river", "water", "stone")} <= set(index._ranker._joint)


def test_the_off_switch_ranks_with_bm25_and_answers_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _write_corpus(tmp_path / "store", 200, 7)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        fast = [_hits(index, text, 20) for text in _QUERIES]
        held = index._ranker.tokens
    monkeypatch.setenv(FAST_RANK_ENV, "0")
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        slow = [_hits(index, text, 20) for text in _QUERIES]
        assert index._ranker.tokens == []
    assert held and slow == fast


def test_a_hand_edit_is_ranked_by_the_next_search(tmp_path: Path) -> None:
    store = _write_corpus(tmp_path / "store", 200, 11)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        for _ in range(2):
            before = _hits(index, "river", 5)
        assert before == _full_ranking(index, "river")[:5]
        # by hand: a new entry that names the word in its title, and the best hit emptied of it
        (tmp_path / "store" / "zz-new.json").write_text(
            MemoryEntry(id="zz-new", title="River river", body="river").model_dump_json(), encoding="utf-8"
        )
        best = tmp_path / "store" / f"{before[0][0]}.json"
        entry = MemoryEntry.model_validate_json(best.read_text(encoding="utf-8"))
        best.write_text(entry.model_copy(update={"title": "x", "body": "y", "tags": []}).model_dump_json())
        index.refresh()
        after = _hits(index, "river", 5)
        assert after[0][0] == "zz-new"
        assert before[0][0] not in [eid for eid, _s in after]
        assert after == _full_ranking(index, "river")[:5]


def test_filters_phrases_prefixes_and_or_rank_with_bm25(tmp_path: Path) -> None:
    store = _write_corpus(tmp_path / "store", 150, 5)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        index.search(Query(text="river", limit=1))
        for text in ('"river bank"', "riv*", "river NOT bank", "(river OR bank) stone"):
            full = _full_ranking(index, text)
            assert _hits(index, text, 10) == full[:10], text
        kinds = [h.entry.id for h in index.search(Query(text="river", kinds=[Kind.FACT], limit=5))]
        assert kinds == []
        assert index._ranker.tokens == []  # none of these shapes reads postings


def test_equal_scores_at_the_limit_keep_file_order(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    store = JsonDirProvider(tmp_path / "store")
    for i in (2, 0, 3, 1):
        store.add(MemoryEntry(id=f"t{i}", kind=Kind.NOTE, title=f"t{i}", body="same words here"))
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert len({h.score for h in index.search("words")}) == 1  # four equal scores
        # the limit cuts through the tie: equal scores fall back to file order (t0.json first)
        assert [h.entry.id for h in index.search(Query(text="words", limit=2))] == ["t0", "t1"]
        assert [h.entry.id for h in index.search(Query(text="words", limit=3))] == ["t0", "t1", "t2"]


def test_store_search_returns_the_entries_without_snippets(tmp_path: Path) -> None:
    store = _write_corpus(tmp_path / "store", 60, 3)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        with_fragments = index.search(Query(text="bank", limit=2))
        plain = index.search(Query(text="bank", limit=2), snippets=False)
    assert [h.entry.id for h in plain] == [h.entry.id for h in with_fragments]
    assert all("[bank]" in h.snippet.lower() for h in with_fragments)
    assert [h.snippet for h in plain] == [h.entry.title for h in plain]
