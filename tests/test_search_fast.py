"""``memcore search`` from a fresh index's rows (memcore.cli._fast_search) prints what the whole path prints.

Real processes on real stores: each search runs once with ``MEMCORE_FAST_SEARCH=0`` (the whole
path: provider, refresh, models) and once as it normally runs, under ``-X importtime``, so the
test also sees that the fast path answered (no ``memcore.models`` imported). Then the
freshness rules: a hand edit, an added or removed file, a scopes.md change, an index left
readable by others, a blocked plugin: each is seen by the very next search.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import SAMPLES
from tests.test_index_gates import SCOPES, ZEPHYR

import memcore
from memcore import MemoryEntry
from memcore._fresh import SETTLE_NS
from memcore.index import index_path_for
from memcore.registry import get_registry

_HEAVY = ("memcore.models", "pydantic", "memcore_whitebox.provider", "memcore_box.provider", "memcore_maka.provider")


def _settle() -> None:
    """Wait until every file written so far is old enough for a stamp (memcore._fresh.SETTLE_NS)."""
    time.sleep(SETTLE_NS / 1e9 + 0.3)


def _env(cache: Path, **extra: str) -> dict[str, str]:
    drop = {"MEMCORE_STORE", "MEMCORE_DISABLE_PLUGINS", "MEMCORE_LOAD_PLUGINS", "MEMCORE_FAST_SEARCH", "COLUMNS"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "MEMCORE_CACHE_DIR": str(cache), **extra}


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        lines = proc.stderr.splitlines(keepends=True)
        self.modules = {ln.rsplit("|", 1)[1].strip() for ln in lines if ln.startswith("import time:") and "|" in ln}
        self.result = (proc.returncode, proc.stdout, "".join(ln for ln in lines if not ln.startswith("import time:")))

    @property
    def fast(self) -> bool:
        return "memcore.cli" in self.modules and not any(
            m == h or m.startswith(h + ".") for m in self.modules for h in _HEAVY
        )


def _memcore(cwd: Path, cache: Path, *args: str, full: bool = False, **env: str) -> Run:
    extra = {"MEMCORE_FAST_SEARCH": "0"} if full else {}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcore", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(cache, **extra, **env),
    )
    return Run(proc)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _scoped_vault(root: Path) -> None:
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", root)
    _write(root, "scopes.md", SCOPES)
    _write(root, "zephyr.md", "---\ntitle: Zephyr root fact\ntags: [ops, wind]\n---\n\nThe zephyr root note.\n")
    _write(root, "family.md", "---\ntitle: Family\nscope: personal\n---\n\nZephyr family note for personal only.\n")
    _write(root, "projects/atlas.md", "---\ntitle: Atlas\n---\n\nZephyr launch plan for project atlas.\n")
    _write(root, "relationships/alex.md", "---\ntitle: Alex\n---\n\nAlex rides the zephyr train.\n")
    _write(root, "sensitive/health.md", "---\ntitle: Health\n---\n\nZephyr medical note, sensitive.\n")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Indexed stores of five formats (settled: their stamps are written), a cache and a quiet cwd."""
    base = tmp_path_factory.mktemp("fast")
    cwd, cache = base / "cwd", base / "cache"
    cwd.mkdir()
    urls: dict[str, str] = {}
    _scoped_vault(base / "vault")
    urls["whitebox"] = f"whitebox:{base / 'vault'}"
    shutil.copytree(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph", base / "rm")
    urls["rightmemory"] = f"rightmemory:{base / 'rm'}"
    (base / "maka").mkdir()
    shutil.copy(SAMPLES / "maka" / "fixture-statuses-pending-rejected-unknown.md", base / "maka" / "MEMORY.md")
    urls["maka"] = f"maka:{base / 'maka' / 'MEMORY.md'}"
    jsonl = SAMPLES / "mcp-memory-jsonl" / "rendered-server-memory-2026.8.31" / "test-searchNodes-fixture.jsonl"
    (base / "mcp").mkdir()
    shutil.copy(jsonl, base / "mcp" / "memory.jsonl")
    urls["mcpmemory"] = f"mcpmemory:{base / 'mcp' / 'memory.jsonl'}"
    get_registry().get("box").init_store(str(base / "ws"))
    with memcore.open(f"box:{base / 'ws'}") as store:
        for i, title in enumerate(["Use Postgres", "Weekly sync", "Token rotation"]):
            store.add(MemoryEntry(title=title, body=f"Body number {i} about {title.lower()}.", tags=["ops"]))
    urls["box"] = f"box:{base / 'ws'}"
    _settle()
    for url in urls.values():
        for scope in [None, "personal", "private"] if url.startswith("whitebox:") else [None]:
            args = ["index", "build", "--store", url, *(["--scope", scope] if scope else [])]
            assert _memcore(cwd, cache, *args).result[0] == 0
    return {"urls": urls, "cwd": cwd, "cache": cache, "base": base}


def _queries(cwd: Path, cache: Path, url: str, every: bool) -> list[list[str]]:
    """Queries built from the store's own entries: a word of one, OR; with ``every`` also no text,
    a limit, a prefix, its kind and status, a tag, and text with no searchable term."""
    code, out, err = _memcore(cwd, cache, "search", "--store", url, "--limit", "50", "--json", full=True).result
    assert code == 0, err
    entries = json.loads(out)
    assert entries
    words = [w.strip(".,:;()!?").lower() for e in entries for w in (e["body"] + " " + e["title"]).split()]
    words = [w for w in words if w.isalpha() and len(w) > 4]
    first, other = words[0], words[-1]
    if not every:
        return [[first], [f"{first} OR {other}", "--limit", "3"]]
    queries = [[], ["--limit", "2"], [first], [f"{first} OR {other}", "--limit", "3"], [f"{first[:3]}*"]]
    queries.append(["--kind", entries[0]["kind"], "--status", entries[0]["status"]])
    tags = [t for e in entries for t in e["tags"]]
    if tags:
        queries.append(["--tag", tags[0], first])
    queries.append(["🚀"])
    return queries


@pytest.mark.parametrize("fmt", ["whitebox", "rightmemory", "maka", "mcpmemory", "box"])
def test_fast_path_prints_what_the_whole_path_prints_text_and_json(stores: dict[str, object], fmt: str) -> None:
    cwd, cache = stores["cwd"], stores["cache"]
    assert isinstance(cwd, Path) and isinstance(cache, Path)
    url = stores["urls"][fmt]  # type: ignore[index]
    for query in _queries(cwd, cache, url, every=fmt == "whitebox"):
        for output in (["--json"], []):
            args = ["search", "--store", url, *query, *output]
            full = _memcore(cwd, cache, *args, full=True)
            fast = _memcore(cwd, cache, *args)
            assert fast.fast, (args, sorted(fast.modules & set(_HEAVY)))
            assert fast.result == full.result, args


@pytest.mark.parametrize("scope", [None, "personal", "private"])
def test_fast_path_keeps_the_scope_gate(stores: dict[str, object], scope: str | None) -> None:
    cwd, cache = stores["cwd"], stores["cache"]
    assert isinstance(cwd, Path) and isinstance(cache, Path)
    url = stores["urls"]["whitebox"]  # type: ignore[index]
    args = ["search", "--store", url, "zephyr", "--json", *(["--scope", scope] if scope else [])]
    fast = _memcore(cwd, cache, *args)
    assert fast.fast
    assert {e["id"] for e in json.loads(fast.result[1])} == ZEPHYR[scope]
    assert fast.result == _memcore(cwd, cache, *args, full=True).result


def _ids(run: Run) -> set[str]:
    assert run.result[0] == 0, run.result[2]
    return {e["id"] for e in json.loads(run.result[1])}


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A settled, indexed, scoped vault of its own: (vault, cwd, cache)."""
    root, cwd, cache = tmp_path / "vault", tmp_path / "cwd", tmp_path / "cache"
    cwd.mkdir()
    _scoped_vault(root)
    _settle()
    assert _memcore(cwd, cache, "index", "build", "--store", f"whitebox:{root}").result[0] == 0
    return root, cwd, cache


def test_hand_edit_added_and_removed_files_are_seen_by_the_next_search(vault: tuple[Path, Path, Path]) -> None:
    root, cwd, cache = vault
    url = f"whitebox:{root}"

    def search(word: str) -> Run:
        return _memcore(cwd, cache, "search", "--store", url, word, "--json")

    first = search("zephyr")
    assert first.fast and _ids(first) == ZEPHYR[None]
    # an edit in place that keeps the size: only mtime and ctime tell
    path = root / "projects" / "atlas.md"
    # (the edit's ctime can be a clock tick before the clock read here: 0.1 s of margin)
    edited_at = time.time_ns() - 100_000_000
    path.write_text(path.read_text(encoding="utf-8").replace("launch", "lunch!"), encoding="utf-8")
    edited = search("lunch")
    assert not edited.fast and _ids(edited) == {"projects/atlas.md"}
    repeated = search("lunch")
    if time.time_ns() - edited_at < SETTLE_NS:  # else a loaded machine gave the edit time to settle
        assert not repeated.fast  # the edit is too recent to stamp: the whole path again
    _write(root, "projects/new.md", "---\ntitle: New\n---\n\nA fresh quokka note.\n")
    assert _ids(search("quokka")) == {"projects/new.md"}
    removed_at = time.time_ns() - 100_000_000
    (root / "projects" / "new.md").unlink()
    assert _ids(search("quokka")) == set()
    settled_by_then = time.time_ns() - removed_at >= SETTLE_NS  # that search may have written the stamp
    _settle()
    stamping = search("quokka")  # this one writes the settled stamp (if that one did not)
    if not settled_by_then:
        assert not stamping.fast
    again = search("lunch")
    assert again.fast and _ids(again) == {"projects/atlas.md"}


def test_scopes_md_change_is_seen_by_the_next_fast_search(vault: tuple[Path, Path, Path]) -> None:
    root, cwd, cache = vault
    url = f"whitebox:{root}"
    args = ["search", "--store", url, "zephyr", "--scope", "personal", "--json"]
    assert _memcore(cwd, cache, "index", "build", "--store", url, "--scope", "personal").result[0] == 0
    assert _ids(warm := _memcore(cwd, cache, *args)) == ZEPHYR["personal"] and warm.fast
    (root / "scopes.md").write_text(SCOPES.replace("root + `relationships/`", "root"), encoding="utf-8")
    assert _ids(_memcore(cwd, cache, *args)) == {"zephyr.md", "family.md"}


def test_an_index_readable_by_others_is_not_read_and_the_whole_path_narrows_it(
    vault: tuple[Path, Path, Path],
) -> None:
    root, cwd, cache = vault
    url = f"whitebox:{root}"
    assert _memcore(cwd, cache, "search", "--store", url, "zephyr").fast
    with memcore.open(url) as provider:
        database = index_path_for(provider, cache)
    database.chmod(0o644)
    run = _memcore(cwd, cache, "search", "--store", url, "zephyr", "--json")
    assert not run.fast and _ids(run) == ZEPHYR[None]
    assert stat.S_IMODE(database.stat().st_mode) == 0o600


def test_a_blocked_plugin_is_refused_as_without_the_fast_path(vault: tuple[Path, Path, Path]) -> None:
    root, cwd, cache = vault
    args = ["search", "--store", f"whitebox:{root}", "zephyr"]
    assert _memcore(cwd, cache, *args).fast
    blocked = _memcore(cwd, cache, *args, MEMCORE_DISABLE_PLUGINS="whitebox")
    assert blocked.result[0] == 2 and "needs the 'memcore-unified-whitebox' distribution" in blocked.result[2]
    assert blocked.result == _memcore(cwd, cache, *args, full=True, MEMCORE_DISABLE_PLUGINS="whitebox").result


def test_off_switch_runs_the_whole_path(vault: tuple[Path, Path, Path]) -> None:
    root, cwd, cache = vault
    args = ["search", "--store", f"whitebox:{root}", "zephyr", "--json"]
    assert _memcore(cwd, cache, *args).fast
    off = _memcore(cwd, cache, *args, MEMCORE_FAST_SEARCH="0")
    assert "memcore.models" in off.modules and "memcore_whitebox.provider" in off.modules


@pytest.mark.parametrize(
    "entry",
    [
        MemoryEntry(title="Café", body="x", tags=["a", "ns:b"], confidence=0.1, source="agent"),
        MemoryEntry(
            id="a/b.md#3",
            title="t",
            created_at="2026-03-04T05:06:07.123456+02:00",
            updated_at="2026-03-04",
            expires_at="2027-01-01T00:00:00Z",
            date_only=True,
            extra={"box": {"n": 1, "f": 1e-07, "big": 2**70, "nested": {"l": [1, "two", None, True]}}},
            relations=[{"type": "related", "target": "x", "resolved": False}],
            version="v1",
        ),
    ],
)
def test_indexed_json_is_what_the_whole_path_dumps(entry: MemoryEntry) -> None:
    data = entry.model_dump_json()  # what memcore.index stores as entries.data
    assert json.loads(data) == MemoryEntry.model_validate_json(data).model_dump(mode="json")
    again = json.dumps(json.loads(data), ensure_ascii=False, indent=2)
    assert again == json.dumps(
        MemoryEntry.model_validate_json(data).model_dump(mode="json"), ensure_ascii=False, indent=2
    )
