"""The ranking shape of the index: the limit inside FTS5, the window for very common words.

A text matching more than ``memcore.index.RANK_WINDOW`` entries, with a limit, is ranked among
the matches indexed last (docs/search.md, "Ranking a very common word"); these tests shrink the
window to a few entries so a small real store crosses it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import JsonDirProvider

from memcore import Kind, MemoryEntry, Query
from memcore import index as index_module
from memcore.index import SearchIndex


def _store(root: Path, bodies: list[tuple[str, Kind, str]]) -> JsonDirProvider:
    root.mkdir()
    provider = JsonDirProvider(root)
    for eid, kind, body in bodies:
        provider.add(MemoryEntry(id=eid, kind=kind, title=eid, body=body))
    return provider


@pytest.fixture
def common(tmp_path: Path) -> JsonDirProvider:
    """Eight entries holding "river"; e0 names it most often, a single fact among notes."""
    rows = [(f"e{i}", Kind.FACT if i == 0 else Kind.NOTE, "river " * (8 - i) + "bank") for i in range(8)]
    return _store(tmp_path / "store", rows)


def _ids(hits: list) -> list[str]:
    return [h.entry.id for h in hits]


def test_common_word_past_the_window_ranks_the_last_indexed_matches(
    common: JsonDirProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SearchIndex(common, cache_dir=tmp_path / "cache") as index:
        exact = _ids(index.search("river"))
        assert exact == [f"e{i}" for i in range(8)]  # no limit: every match, in BM25 order
        assert _ids(index.search(Query(text="river", limit=3))) == ["e0", "e1", "e2"]
        monkeypatch.setattr(index_module, "RANK_WINDOW", 4)
        windowed = _ids(index.search(Query(text="river", limit=3)))
        indexed_last = [
            eid for (eid,) in index.conn.execute("SELECT id FROM entries ORDER BY rowid DESC LIMIT 4").fetchall()
        ]
        assert len(windowed) == 3 and set(windowed) <= set(indexed_last)
        assert windowed == [eid for eid in exact if eid in windowed]  # BM25 order inside the window


def test_a_filter_the_window_cannot_satisfy_runs_the_full_ranking(
    common: JsonDirProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "RANK_WINDOW", 2)
    with SearchIndex(common, cache_dir=tmp_path / "cache") as index:
        first = index.conn.execute("SELECT id FROM entries ORDER BY rowid LIMIT 1").fetchone()[0]
        assert first == "e0"  # the one fact is outside the window of the two indexed last
        assert _ids(index.search(Query(text="river", kinds=[Kind.FACT], limit=5))) == ["e0"]


def test_equal_scores_at_the_limit_keep_file_order(tmp_path: Path) -> None:
    rows = [(f"t{i}", Kind.NOTE, "same words here") for i in (2, 0, 3, 1)]
    store = _store(tmp_path / "store", rows)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert len({h.score for h in index.search("words")}) == 1  # four equal scores
        # the limit cuts through the tie: equal scores fall back to file order (t0.json first)
        assert _ids(index.search(Query(text="words", limit=2))) == ["t0", "t1"]
        assert _ids(index.search(Query(text="words", limit=3))) == ["t0", "t1", "t2"]


def test_store_search_returns_the_entries_without_snippets(common: JsonDirProvider, tmp_path: Path) -> None:
    with SearchIndex(common, cache_dir=tmp_path / "cache") as index:
        with_fragments = index.search(Query(text="bank", limit=2))
        plain = index.search(Query(text="bank", limit=2), snippets=False)
    assert _ids(plain) == _ids(with_fragments)
    assert all("[bank]" in h.snippet for h in with_fragments)
    assert [h.snippet for h in plain] == [h.entry.title for h in plain]
