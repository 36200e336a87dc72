"""The search index keeps the providers' gates: WhiteBox scopes and sensitive/, Maka's switches.

Issue 10: "scope and gate rules are applied to results, not only to files". The index reads
entries only through the opened provider and keys its database by format + location + provider
options, so these tests check, on real files, that every way to search (``SearchIndex.search``,
the provider's ``search()``, ``memcore search --json``, the MCP ``recall`` tool) returns what
the provider itself would, and nothing else; that indexes of differently gated providers never
serve each other; and that indexing never writes into the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.conftest import SAMPLES

import memcore
from memcore import BaseProvider, MemoryEntry, Query, Status
from memcore.cli import _load_plugin_commands, cli
from memcore.errors import ReadOnlyStoreError
from memcore.index import SearchIndex, index_path_for, read_denied, search_if_indexed
from memcore.mcp_server import MemoryToolbox
from memcore.models import utc_now
from memcore.provider import MemoryProvider

# -- watching file opens (a real observation of the process, not a mock) --------------------
_WATCHED: list[tuple[str, list[str]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHED or event not in ("open", "sqlite3.connect"):
        return
    target = args[0] if args else None
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if not isinstance(target, (str, os.PathLike)):
        return
    text = os.path.abspath(os.fspath(target))
    for prefix, seen in _WATCHED:
        if text.startswith(prefix):
            seen.append(f"{event} {text}")


sys.addaudithook(_audit)


class _Opens:
    """Record every ``open`` / ``sqlite3.connect`` of a path under the given folders."""

    def __init__(self, *folders: Path) -> None:
        self.seen: list[str] = []
        self.folders = [os.path.abspath(f) for f in folders]

    def __enter__(self) -> _Opens:
        _WATCHED.extend((f, self.seen) for f in self.folders)
        return self

    def __exit__(self, *exc: object) -> None:
        _WATCHED[:] = [w for w in _WATCHED if w[1] is not self.seen]


# -- helpers --------------------------------------------------------------------------------
def _tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``root``: relative path -> (size, mtime ns, sha256)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[path.relative_to(root).as_posix()] = (
                st.st_size,
                st.st_mtime_ns,
                hashlib.sha256(path.read_bytes()).hexdigest(),
            )
    return out


def _ids(entries: Any) -> set[str]:
    return {getattr(e, "entry", e).id for e in entries}


def _cli(*args: str) -> Any:
    _load_plugin_commands()  # what `memcore` (main) does first: adds `index`, `serve`…
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _cli_search(url: str, *args: str) -> set[str]:
    result = _cli("search", "--store", url, "--json", "--limit", "1000", *args)
    assert result.exit_code == 0, result.output
    return {e["id"] for e in json.loads(result.stdout)}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The index cache folder, outside every store (``$MEMCORE_CACHE_DIR``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(folder))
    return folder


def _databases(cache: Path) -> set[str]:
    return {p.name for p in cache.glob("*.sqlite")} if cache.is_dir() else set()


# == WhiteBox ===================================================================================
SCOPES = """# Scopes

- `public` — root files only
- `work` — root + `projects/`
- `personal` — root + `relationships/`
- `private` — root + `projects/` + `sensitive/`
- `vault` — `sensitive/`
"""

#: Files holding the word "zephyr", and which scope may see each (None: no active scope).
ZEPHYR = {
    None: {"zephyr.md", "family.md", "projects/atlas.md", "relationships/alex.md"},
    "public": {"zephyr.md"},
    "work": {"zephyr.md", "projects/atlas.md"},
    "personal": {"zephyr.md", "family.md", "relationships/alex.md"},
    "private": {"zephyr.md", "projects/atlas.md", "sensitive/health.md"},
    "vault": {"sensitive/health.md"},
}
ROOT_STABLE = {"identity.md", "working-style.md"}
OBSERVATION = "observations/2026-04.md#1"
#: Every entry each scope may see (the authors' vault plus the files written below).
VISIBLE = {
    None: ZEPHYR[None] | ROOT_STABLE | {OBSERVATION},
    "public": ZEPHYR["public"] | ROOT_STABLE,
    "work": ZEPHYR["work"] | ROOT_STABLE,
    "personal": ZEPHYR["personal"] | ROOT_STABLE,
    "private": ZEPHYR["private"] | ROOT_STABLE,
    "vault": ZEPHYR["vault"],
}


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The authors' example vault plus scopes.md, projects/, relationships/, sensitive/."""
    root = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", root)
    _write(root, "scopes.md", SCOPES)
    _write(root, "zephyr.md", "---\ntitle: Zephyr root fact\n---\n\nThe zephyr root note.\n")
    _write(root, "family.md", "---\ntitle: Family\nscope: personal\n---\n\nZephyr family note for personal only.\n")
    _write(root, "projects/atlas.md", "---\ntitle: Atlas\n---\n\nZephyr launch plan for project atlas.\n")
    _write(root, "relationships/alex.md", "---\ntitle: Alex\n---\n\nAlex rides the zephyr train.\n")
    _write(root, "sensitive/health.md", "---\ntitle: Health\n---\n\nZephyr medical note, sensitive.\n")
    return root


def _open_wb(root: Path, scope: str | None) -> MemoryProvider:
    options: dict[str, Any] = {"scope": scope} if scope else {}
    return memcore.open(f"whitebox:{root}", **options)


def _scope_args(scope: str | None) -> list[str]:
    return ["--scope", scope] if scope else []


@pytest.mark.parametrize("scope", list(ZEPHYR), ids=[str(s) for s in ZEPHYR])
def test_whitebox_every_search_path_returns_only_the_scope(vault: Path, cache: Path, scope: str | None) -> None:
    with _open_wb(vault, scope) as provider:
        assert _ids(provider.iter_entries()) == VISIBLE[scope]  # the provider's own gate, read whole
        with SearchIndex(provider) as index:
            assert index.last_status is not None and index.last_status.entries == len(VISIBLE[scope])
            assert _ids(index.search(Query())) == VISIBLE[scope]
            assert _ids(index.search("zephyr")) == ZEPHYR[scope]
            assert _ids(index.search("medical")) == ZEPHYR[scope] & {"sensitive/health.md"}
        # the provider's search() goes through the index it now has
        assert search_if_indexed(provider, Query(text="zephyr")) is not None
        assert _ids(provider.search("zephyr")) == ZEPHYR[scope]
        assert _ids(provider.search(Query())) == VISIBLE[scope]
    assert _cli_search(f"whitebox:{vault}", "zephyr", *_scope_args(scope)) == ZEPHYR[scope]
    assert _databases(cache) == {index_path_for(provider).name}


def test_whitebox_sensitive_never_served_without_a_scope_that_names_it(vault: Path, cache: Path) -> None:
    for scope in ZEPHYR:
        with _open_wb(vault, scope) as provider, SearchIndex(provider) as index:
            hits = _ids(index.search("medical sensitive"))
            assert hits == ({"sensitive/health.md"} if scope in ("private", "vault") else set()), scope
            assert ("sensitive/health.md" in _ids(provider.search(Query()))) is (scope in ("private", "vault"))
    assert len(_databases(cache)) == len(ZEPHYR)  # one database per scope, none shared


def test_whitebox_unscoped_and_scoped_indexes_never_serve_each_other(vault: Path, cache: Path) -> None:
    with _open_wb(vault, None) as whole, _open_wb(vault, "work") as work:
        assert index_path_for(whole) != index_path_for(work)
        # only the unrestricted index exists: the scoped provider does not use it
        with SearchIndex(whole) as index:
            assert _ids(index.search("zephyr")) == ZEPHYR[None]
        assert search_if_indexed(work, Query(text="zephyr")) is None
        assert _ids(work.search("zephyr")) == ZEPHYR["work"]  # full scan through the gate
        assert _cli_search(f"whitebox:{vault}", "zephyr", "--scope", "work") == ZEPHYR["work"]
        assert _databases(cache) == {index_path_for(whole).name}  # searching created none
    shutil.rmtree(cache)
    with _open_wb(vault, "vault") as secret, _open_wb(vault, None) as whole:
        # only the sensitive-scope index exists: the unscoped provider does not use it
        with SearchIndex(secret) as index:
            assert _ids(index.search("zephyr")) == {"sensitive/health.md"}
        assert search_if_indexed(whole, Query(text="zephyr")) is None
        assert "sensitive/health.md" not in _ids(whole.search("zephyr"))
        assert "sensitive/health.md" not in _cli_search(f"whitebox:{vault}", "zephyr")
        # built now, the unscoped index is its own database and still has no sensitive entry
        with SearchIndex(whole) as index:
            assert _ids(index.search("zephyr")) == ZEPHYR[None]
        assert _databases(cache) == {index_path_for(secret).name, index_path_for(whole).name}


def test_whitebox_cli_index_build_with_scope(vault: Path, cache: Path) -> None:
    url = f"whitebox:{vault}"
    result = _cli("index", "build", "--store", url, "--scope", "work", "--json")
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    assert built["entries"] == len(VISIBLE["work"])
    with _open_wb(vault, "work") as work, _open_wb(vault, None) as whole:
        assert built["path"] == str(index_path_for(work))
        assert not index_path_for(whole).exists()
        assert search_if_indexed(work, Query(text="zephyr")) is not None
    # -o scope=work is the same option as --scope work: the same database
    result = _cli("index", "status", "--store", url, "-o", "scope=work", "--json")
    assert json.loads(result.stdout)["path"] == built["path"]
    assert _cli_search(url, "zephyr", "-o", "scope=work") == ZEPHYR["work"]
    assert _cli_search(url, "zephyr") == ZEPHYR[None]


def test_whitebox_scopes_md_change_is_seen_by_the_next_search(vault: Path, cache: Path) -> None:
    """scopes.md is not an entry file; a change to it changes which files the provider lists,
    and the refresh drops (or adds) those files' entries."""
    url = f"whitebox:{vault}"
    with _open_wb(vault, "personal") as provider, SearchIndex(provider) as index:
        assert _ids(index.search("zephyr")) == ZEPHYR["personal"]
    with _open_wb(vault, "private") as provider, SearchIndex(provider) as index:
        assert "sensitive/health.md" in _ids(index.search("zephyr"))
    before = _tree(vault)
    # drop relationships/ from `personal` and sensitive/ from `private`; no entry file changes
    text = SCOPES.replace("root + `relationships/`", "root").replace(" + `sensitive/`", "")
    (vault / "scopes.md").write_text(text, encoding="utf-8")
    assert {k: v for k, v in _tree(vault).items() if k != "scopes.md"} == {
        k: v for k, v in before.items() if k != "scopes.md"
    }
    with _open_wb(vault, "personal") as provider:
        assert _ids(provider.search("zephyr")) == {"zephyr.md", "family.md"}
        with SearchIndex(provider) as index:
            assert index.last_status is not None and index.last_status.rebuilt is None
            assert _ids(index.search("zephyr")) == {"zephyr.md", "family.md"}
            assert _ids(index.search(Query())) == VISIBLE["personal"] - {"relationships/alex.md"}
    assert _cli_search(url, "zephyr", "--scope", "personal") == {"zephyr.md", "family.md"}
    with _open_wb(vault, "private") as provider:
        status = SearchIndex(provider).refresh()  # what the first refresh after the change did
        assert (status.removed, status.reread) == (1, 0)
        assert _ids(provider.search("zephyr")) == {"zephyr.md", "projects/atlas.md"}
    assert "sensitive/health.md" not in _cli_search(url, "medical", "--scope", "private")
    # and back: the folder's files are read again
    (vault / "scopes.md").write_text(SCOPES, encoding="utf-8")
    with _open_wb(vault, "personal") as provider, SearchIndex(provider) as index:
        assert index.last_status is not None and index.last_status.reread == 1
        assert _ids(index.search("zephyr")) == ZEPHYR["personal"]


def test_whitebox_scope_removed_from_scopes_md_refuses_to_open(vault: Path, cache: Path) -> None:
    with _open_wb(vault, "vault") as provider, SearchIndex(provider):
        assert read_denied(provider) is None  # scopes hide files; they never deny the whole store
    (vault / "scopes.md").write_text(SCOPES.replace("- `vault` — `sensitive/`\n", ""), encoding="utf-8")
    result = _cli("search", "--store", f"whitebox:{vault}", "--scope", "vault", "--json", "zephyr")
    assert result.exit_code == 2 and "unknown scope 'vault'" in result.output
    assert "health" not in result.stdout


def test_whitebox_mcp_recall_through_the_index_keeps_the_scope(vault: Path, cache: Path) -> None:
    with _open_wb(vault, None) as whole, SearchIndex(whole):
        pass  # an unrestricted index exists; the scoped server must not use it
    with _open_wb(vault, "work") as work, SearchIndex(work):
        assert read_denied(work) is None
    box = MemoryToolbox(lambda: _open_wb(vault, "work").open(), scope="work")
    outcome = box.call("recall", {"text": "zephyr", "limit": 100})
    assert not outcome.is_error, outcome.data
    assert {e["id"] for e in outcome.data["entries"]} == ZEPHYR["work"]


def test_whitebox_indexing_writes_nothing_into_the_vault(vault: Path, cache: Path) -> None:
    before = _tree(vault)
    for scope in ZEPHYR:
        with _open_wb(vault, scope) as provider:
            with SearchIndex(provider) as index:
                index.search("zephyr")
                index.rebuild()
            provider.search("zephyr")
        assert _cli("index", "rebuild", "--store", f"whitebox:{vault}", *_scope_args(scope)).exit_code == 0
    assert _tree(vault) == before
    assert _databases(cache) and all(p.parent == cache for p in cache.glob("*.sqlite"))


# == Maka ======================================================================================
@pytest.fixture
def maka(tmp_path: Path) -> Path:
    folder = tmp_path / "maka"
    folder.mkdir()
    shutil.copy(SAMPLES / "maka" / "fixture-statuses-pending-rejected-unknown.md", folder / "MEMORY.md")
    with (folder / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(
            "\n\n## Session note\n<!-- maka-memory: id=sess status=active scope=session sessionId=s1 -->\n"
            "Inject only in session one.\n"
        )
    return folder / "MEMORY.md"


MAKA_IDS = {"active", "pending", "rejected", "future", "sess"}


def test_maka_incognito_refuses_before_touching_anything(maka: Path, cache: Path) -> None:
    url = f"maka:{maka}"
    with memcore.open(url) as plain, SearchIndex(plain) as index:  # an index of the same file exists
        assert _ids(index.search(Query())) == MAKA_IDS
    databases = _databases(cache)
    before = _tree(maka.parent)
    with memcore.open(url, incognito=True) as provider, _Opens(maka.parent, cache) as opens:
        assert read_denied(provider) is not None
        with pytest.raises(ReadOnlyStoreError, match="incognito"):
            SearchIndex(provider)
        with pytest.raises(ReadOnlyStoreError, match="incognito"):
            SearchIndex(provider, path=index_path_for(plain))  # not even a database given by hand
        assert search_if_indexed(provider, Query(text="use")) is None
        with pytest.raises(ReadOnlyStoreError, match="incognito") as refused:
            provider.search("use")
        assert type(refused.value).__name__ == "IncognitoBlockedError"  # the provider's own refusal
        for args in (["index", "build"], ["index", "rebuild"], ["index", "status"], ["search", "use"]):
            result = _cli(*args, "--store", url, "-o", "incognito=true", "--json")
            assert result.exit_code == 1 and "incognito" in result.output, args
            assert result.stdout == "", args
        assert opens.seen == []  # MEMORY.md never opened (not even hashed), no database connected
    assert _tree(maka.parent) == before
    assert _databases(cache) == databases
    # control: the watch does see a read of MEMORY.md and a database connection
    with _Opens(maka.parent, cache) as control:
        maka.read_bytes()
        sqlite3.connect(cache / "control.sqlite").close()
    assert [s.split(" ", 1)[0] for s in control.seen] == ["open", "sqlite3.connect"]


def test_maka_disabled_returns_nothing_even_with_an_enabled_index(maka: Path, cache: Path) -> None:
    url = f"maka:{maka}"
    assert _cli("index", "build", "--store", url).exit_code == 0
    assert _cli_search(url) == MAKA_IDS
    before = _tree(maka.parent)
    with memcore.open(url, enabled=False) as provider:
        assert index_path_for(provider) != index_path_for(memcore.open(url))
        assert search_if_indexed(provider, Query()) is None  # the enabled index is not its own
        assert provider.search("use") == [] and provider.search(Query()) == []
        with SearchIndex(provider) as index:
            assert index.search(Query()) == [] and index.search("use") == []
        assert provider.search(Query()) == []  # now through its own (empty) index
    for value in ("false", "0", "off"):
        assert _cli_search(url, "-o", f"enabled={value}") == set()
        assert _cli_search(url, "use", "-o", f"enabled={value}") == set()
    assert _tree(maka.parent) == before


def test_maka_agent_read_gates_agents_not_the_users_search(maka: Path, cache: Path) -> None:
    """docs/formats/maka.md: ``agent_read_enabled`` gates the prompt (and agents, docs/mcp.md);
    a user's ``memcore search`` shows what ``iter_entries`` shows, with the switch on or off."""
    url = f"maka:{maka}"
    for value in (None, False, True):
        options: dict[str, Any] = {} if value is None else {"agent_read_enabled": value}
        with memcore.open(url, **options) as provider:
            with SearchIndex(provider) as index:
                assert _ids(index.search(Query())) == _ids(provider.iter_entries()) == MAKA_IDS
            assert _ids(provider.search(Query(statuses=[Status.ACTIVE]))) == {"active", "sess"}
    # agents: with the switch off nothing is served although indexes exist
    off = MemoryToolbox(lambda: memcore.open(url).open())
    outcome = off.call("recall", {"text": "use"})
    assert outcome.is_error and "agent read is off" in outcome.data["error"]
    on = MemoryToolbox(lambda: memcore.open(url, agent_read_enabled=True).open())
    outcome = on.call("recall", {"text": "use"})
    assert not outcome.is_error and {e["id"] for e in outcome.data["entries"]} == {"active"}
    with memcore.open(url, agent_read_enabled=True) as provider:
        assert search_if_indexed(provider, Query(text="use")) is not None  # the server's search used it


def test_maka_indexing_writes_nothing_next_to_memory_md(maka: Path, cache: Path) -> None:
    before = _tree(maka.parent)
    variants: list[dict[str, Any]] = [{}, {"enabled": False}, {"agent_read_enabled": True}, {"read_only": True}]
    for options in variants:
        with memcore.open(f"maka:{maka}", **options) as provider, SearchIndex(provider) as index:
            index.search("use")
            index.rebuild()
    assert _tree(maka.parent) == before
    assert len(_databases(cache)) == 4


def test_maka_folder_location_indexes_memory_md(maka: Path, cache: Path) -> None:
    with memcore.open(f"maka:{maka.parent}") as provider, SearchIndex(provider) as index:
        assert _ids(index.search(Query())) == _ids(provider.iter_entries()) == MAKA_IDS


def _wait_until(moment: datetime) -> None:
    """Sleep until ``moment`` (UTC) has passed; the test then reads the files as they are."""
    while utc_now() <= moment:
        time.sleep(0.05)


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_maka_entry_expiring_after_indexing_is_seen_as_the_provider_sees_it(
    maka: Path, cache: Path, read_only: bool
) -> None:
    """An entry whose decay time passes after it was indexed: the file did not change, but the
    provider's view of it did (Maka archives it on the next load of a writable store)."""
    created = int(utc_now().timestamp() * 1000) - 60_000
    with maka.open("a", encoding="utf-8") as fh:
        fh.write(
            f"\n\n## Short lived\n<!-- maka-memory: id=decay status=active createdAt={created} decayTtlMs=61500 -->\n"
            "Zephyr reminder that decays.\n"
        )
    url = f"maka:{maka}"
    with memcore.open(url, read_only=read_only) as provider, SearchIndex(provider) as index:
        [hit] = index.search("zephyr")
        assert hit.entry.status is Status.ACTIVE and hit.entry.expires_at is not None
        expires = hit.entry.expires_at
    _wait_until(expires)
    with memcore.open(url, read_only=read_only) as provider:
        via_index = {e.id: e.status for e in provider.search(Query(text="zephyr"))}
        active = _ids(provider.search(Query(statuses=[Status.ACTIVE])))
        scanned = {e.id: e.status for e in provider.iter_entries(Query(text="zephyr"))}
    assert via_index == scanned
    assert via_index == {"decay": Status.ACTIVE if read_only else Status.ARCHIVED}
    assert ("decay" in active) is read_only
    assert ("archiveReason=decayTtlMs-expired" in maka.read_text(encoding="utf-8")) is not read_only
    # the expiry cost the first search one re-read (the writable store's decay rewrite, the second
    # one more); it is not re-read on every search
    with memcore.open(url, read_only=read_only) as provider:
        index = SearchIndex(provider)
        try:
            assert index.refresh().reread == 0
            assert {h.entry.id: h.entry.status for h in index.search("zephyr")} == scanned
        finally:
            index.close()


class ExpiringDirProvider(BaseProvider):
    """A provider without per-file reads (the index re-reads it whole) that hides expired entries."""

    format_name = "expiringdir"

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        rows = json.loads((Path(self.location) / "entries.json").read_text(encoding="utf-8"))
        entries = [MemoryEntry.model_validate(row) for row in rows]
        now = utc_now()
        yield from (query or Query()).apply(e for e in entries if e.expires_at is None or e.expires_at > now)


def test_whole_store_reread_once_an_entry_expires(tmp_path: Path, cache: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    expires = utc_now() + timedelta(seconds=1)
    rows = [
        MemoryEntry(id="keep", title="Zephyr kept", body="stays").model_dump(mode="json"),
        MemoryEntry(id="gone", title="Zephyr gone", body="expires", expires_at=expires).model_dump(mode="json"),
    ]
    (store / "entries.json").write_text(json.dumps(rows), encoding="utf-8")
    provider = ExpiringDirProvider(store)
    with SearchIndex(provider) as index:
        assert _ids(index.search("zephyr")) == {"keep", "gone"}
    _wait_until(expires)
    with SearchIndex(provider) as index:
        assert index.last_status is not None and index.last_status.rebuilt == "entries expired"
        assert _ids(index.search("zephyr")) == _ids(provider.iter_entries()) == {"keep"}
        assert index.refresh().rebuilt is None  # once


def test_index_database_of_schema_1_is_rebuilt(tmp_path: Path, cache: Path) -> None:
    """Databases written before entries had ``expires_at`` are dropped and built again."""
    vault_root = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", vault_root)
    with memcore.open(f"whitebox:{vault_root}") as provider:
        path = index_path_for(provider)
        path.parent.mkdir(parents=True)
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.executescript(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO meta VALUES ('schema', '1');"
                "CREATE TABLE entries (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL,"
                " seq INTEGER NOT NULL, kind TEXT, status TEXT, scope TEXT, created_at TEXT, data TEXT NOT NULL);"
            )
        with SearchIndex(provider) as index:
            assert index.last_status is not None
            assert index.last_status.rebuilt == "the index database was unreadable"
            assert _ids(index.search(Query())) == _ids(provider.iter_entries())
