from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.conftest import DictProvider, JsonDirProvider

from memcore import Kind, MemoryEntry, Query, Status
from memcore.errors import QuerySyntaxError
from memcore.index import SearchIndex
from memcore.provider import FileBackedProvider


@pytest.fixture
def store(tmp_path: Path) -> JsonDirProvider:
    root = tmp_path / "store"
    root.mkdir()
    provider = JsonDirProvider(root)
    rows = [
        ("tea", Kind.PREFERENCE, "Tea", "Prefers green tea in the morning", ["food", "morning"], Status.ACTIVE),
        ("deploy", Kind.DECISION, "Deploy on Fridays", "We never deploy on Friday afternoons", ["work"], Status.ACTIVE),
        ("old", Kind.DECISION, "Old deploy rule", "Deploys happened on Mondays", ["work"], Status.ARCHIVED),
        ("cafe", Kind.FACT, "Café", "Works from the café near the station", ["place", "morning"], Status.ACTIVE),
    ]
    for i, (eid, kind, title, body, tags, status) in enumerate(rows):
        provider.add(
            MemoryEntry(
                id=eid,
                kind=kind,
                title=title,
                body=body,
                tags=tags,
                status=status,
                created_at=f"2026-0{i + 1}-01T00:00:00Z",
            )
        )
    return provider


def _ids(hits: list) -> list[str]:
    return [h.entry.id for h in hits]


def test_is_file_backed(store: JsonDirProvider) -> None:
    assert isinstance(store, FileBackedProvider)
    assert not isinstance(DictProvider("x"), FileBackedProvider)


def test_search_ranks_and_filters(store: JsonDirProvider, tmp_path: Path) -> None:
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert index.last_status is not None and index.last_status.entries == 4
        assert _ids(index.search("morning")) == ["tea", "cafe"]  # body + tag beats tag alone
        assert sorted(_ids(index.search("deploy"))) == ["deploy", "old"]
        assert _ids(index.search(Query(text="deploy", statuses=[Status.ACTIVE]))) == ["deploy"]
        assert _ids(index.search(Query(tags_any=["morning"]))) == ["cafe", "tea"]
        assert _ids(index.search(Query(tags_all=["food", "morning"]))) == ["tea"]
        assert _ids(index.search(Query(kinds=[Kind.FACT, Kind.PREFERENCE]))) == ["cafe", "tea"]
        assert _ids(index.search(Query(created_after="2026-03-01"))) == ["cafe", "old"]
        assert _ids(index.search("cafe")) == ["cafe"]  # diacritics folded
        assert _ids(index.search("gre*")) == ["tea"]  # prefix
        assert _ids(index.search("gre")) == []  # a word without * is a whole (stemmed) word
        hit = index.search("green")[0]
        assert "[green]" in hit.snippet and hit.score < 0
        with pytest.raises(QuerySyntaxError, match="AND at column 10"):  # memcore's error, not SQLite's
            index.search('"quoted" AND OR NEAR(')
        assert index.search("NEAR green^ col:green") == []  # FTS5 syntax in user text is only words


def test_refresh_rereads_only_changed_files(store: JsonDirProvider, tmp_path: Path) -> None:
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert index.last_status and index.last_status.reread == 4
    store.add(MemoryEntry(id="tea", kind=Kind.PREFERENCE, title="Tea", body="Now prefers black tea", tags=["food"]))
    store.delete("cafe")
    store.add(MemoryEntry(id="new", title="Bike", body="Cycles to work"))
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        status = index.last_status
        assert status is not None
        assert (status.reread, status.removed, status.entries, status.rebuilt) == (2, 1, 4, None)
        assert _ids(index.search("black")) == ["tea"]
        assert index.search("green") == []
        assert index.search("café") == []
        assert _ids(index.search("cycles")) == ["new"]
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert index.last_status and index.last_status.reread == 0


def test_touch_without_change_is_not_reread(store: JsonDirProvider, tmp_path: Path) -> None:
    with SearchIndex(store, cache_dir=tmp_path / "cache"):
        pass
    path = Path(store.location) / "tea.json"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert index.last_status and index.last_status.reread == 0


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage"])
def test_index_is_never_canonical(store: JsonDirProvider, tmp_path: Path, damage: str) -> None:
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        path = index.path
        assert _ids(index.search("tea")) == ["tea"]
    store.add(MemoryEntry(id="tea", title="Coffee", body="Switched to coffee"))  # edited behind its back
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:100])
    else:
        path.write_bytes(b"not a database at all" * 100)
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert _ids(index.search("coffee")) == ["tea"]
        assert index.search("green") == []
        assert index.last_status and index.last_status.entries == 4


def test_non_file_backed_provider_rebuilds_on_any_change(tmp_path: Path) -> None:
    root = tmp_path / "dict"
    root.mkdir()
    (root / "a.txt").write_text("x")
    provider = DictProvider(str(root))
    provider.add(MemoryEntry(id="a", title="Alpha", body="first"))
    with SearchIndex(provider, cache_dir=tmp_path / "cache") as index:
        assert _ids(index.search("alpha")) == ["a"]
    provider.add(MemoryEntry(id="b", title="Beta", body="second"))
    with SearchIndex(provider, cache_dir=tmp_path / "cache") as index:
        assert index.last_status and index.last_status.reread == 0
    (root / "a.txt").write_text("changed")
    with SearchIndex(provider, cache_dir=tmp_path / "cache") as index:
        assert index.last_status and index.last_status.rebuilt == "files changed"
        assert _ids(index.search("beta")) == ["b"]
    DictProvider.stores.clear()


_WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from tests.conftest import JsonDirProvider
    from memcore import MemoryEntry
    from memcore.index import SearchIndex
    store = JsonDirProvider(sys.argv[1])
    worker = int(sys.argv[2])
    for i in range(15):
        store.add(MemoryEntry(id=f"w{worker}-{i}", title=f"worker{worker} note{i}", body="concurrent"))
        with SearchIndex(store, cache_dir=Path(sys.argv[1]).parent / "cache") as index:
            assert index.search(f"worker{worker}"), "own write not visible"
    """
)


@pytest.mark.slow
def test_two_processes_refresh_and_search_at_once(store: JsonDirProvider, tmp_path: Path) -> None:
    repo = str(Path(__file__).resolve().parents[1])
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, store.location, str(w), repo], stderr=subprocess.PIPE)
        for w in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        assert b"locked" not in err
    with SearchIndex(store, cache_dir=tmp_path / "cache") as index:
        assert len(index.search("concurrent")) == 30
        assert index.status().entries == 34


def test_provider_search_uses_index_when_present(
    store: JsonDirProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(tmp_path / "cache"))
    assert [e.id for e in store.search("green")] == ["tea"]  # full scan, no index yet
    assert not (tmp_path / "cache").exists()
    with SearchIndex(store):
        pass
    calls: list[str] = []
    real = JsonDirProvider.iter_file_entries

    def spy(self: JsonDirProvider, path: str):  # type: ignore[no-untyped-def]
        calls.append(path)
        return real(self, path)

    monkeypatch.setattr(JsonDirProvider, "iter_file_entries", spy)
    assert [e.id for e in store.search("green")] == ["tea"]
    assert calls == []  # answered from the index, nothing re-read
    store.add(MemoryEntry(id="tea", title="Tea", body="now oolong"))
    assert [e.id for e in store.search("oolong")] == ["tea"]
    assert calls == ["tea.json"]
    no_index = JsonDirProvider(store.location, index=False)
    assert [e.id for e in no_index.search("oolong")] == ["tea"]
    assert calls == ["tea.json", "cafe.json", "deploy.json", "old.json", "tea.json"]  # full scan read all
