"""What a new user hit on a first trial (issue 21), each fixed and proved here."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO

from memcore.errors import ConfigError
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry
from memcore.registry import get_registry


def _site_with_broken_plugin(tmp_path: Path) -> Path:
    """A folder for PYTHONPATH holding a distribution whose ``memcore`` entry point fails to import."""
    site = tmp_path / "site"
    dist_info = site / "memcore_broken_demo-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: memcore-broken-demo\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[memcore]\nbrokendemo = memcore_broken_demo\n")
    (site / "memcore_broken_demo.py").write_text("import a_module_that_is_not_installed  # noqa\n")
    return site


def _memcore(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore", *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_a_plugin_that_fails_to_load_gives_exit_2_and_one_line_naming_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(_site_with_broken_plugin(tmp_path))}
    for var in ("MEMCORE_DEBUG", "MEMCORE_LOAD_PLUGINS", "MEMCORE_DISABLE_PLUGINS"):
        env.pop(var, None)
    proc = _memcore(["formats"], env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "memcore: error: plugin 'brokendemo' (distribution 'memcore-broken-demo') failed to load: "
        "ModuleNotFoundError: No module named 'a_module_that_is_not_installed'; fix or uninstall it, "
        "or block it with MEMCORE_DISABLE_PLUGINS=memcore-broken-demo"
    ]
    debug = _memcore(["--debug", "formats"], env)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "import a_module_that_is_not_installed" in debug.stderr
    blocked = _memcore(["formats", "--json"], {**env, "MEMCORE_DISABLE_PLUGINS": "memcore-broken-demo"})
    assert blocked.returncode == 0, blocked.stderr


def test_show_prints_tags_as_a_list_of_names(tmp_path: Path) -> None:
    store = f"maka:{tmp_path / 'MEMORY.md'}"
    env = {k: v for k, v in os.environ.items() if k not in {"MEMCORE_STORE", "MEMCORE_LOAD_PLUGINS"}}
    assert _memcore(["init", "--store", store], env).returncode == 0
    added = _memcore(
        [
            "add",
            "--store",
            store,
            "--title",
            "Prefers tea",
            "--body",
            "Green.",
            "--tag",
            "food",
            "--tag",
            "morning",
            "--json",
        ],
        env,
    )
    assert added.returncode == 0, added.stderr
    entry_id = json.loads(added.stdout)["id"]
    shown = _memcore(["show", entry_id, "--store", store], env)
    assert shown.returncode == 0, shown.stderr
    assert "tags: food, morning" in shown.stdout.splitlines()
    assert "[" not in shown.stdout


def _maka_with_observation(tmp_path: Path) -> tuple[str, str]:
    """A Maka source holding one observation; its URL and the observation's id."""
    maka = get_registry().get("maka")
    location = str(tmp_path / "src" / "MEMORY.md")
    maka.init_store(location)
    with maka(location) as src:
        entry = src.add(MemoryEntry(kind=Kind.OBSERVATION, title="Deploy", body="The deploy took 5 minutes."))
    return f"maka:{location}", entry.id or ""


def test_a_source_edit_an_append_only_target_cannot_take_is_not_updatable_and_exits_1(tmp_path: Path) -> None:
    src_url, obs_id = _maka_with_observation(tmp_path)
    dst_url = f"whitebox:{tmp_path / 'vault'}"
    assert migrate(src_url, dst_url).counts["written"] == 1
    with get_registry().get("maka")(src_url.split(":", 1)[1]) as src:
        entry = src.get(obs_id)
        entry.body = "The deploy took 7 minutes."
        src.update(entry, expected_version=entry.version)
    report = migrate(src_url, dst_url)
    row = report.entry(obs_id)
    assert (row.action, row.losses) == ("not_updatable", [])
    assert row.error is not None and row.error.startswith("changed in the source (body, updated_at) but not applied")
    assert report.counts["not_updatable"] == 1 and report.counts["lossy"] == 0
    assert not report.ok and not report.lossless
    with get_registry().get("whitebox")(str(tmp_path / "vault")) as vault:
        assert [e.body for e in vault.iter_entries()] == ["The deploy took 5 minutes."]
    env = {k: v for k, v in os.environ.items() if k != "MEMCORE_LOAD_PLUGINS"}
    proc = _memcore(["migrate", src_url, dst_url], env)
    assert proc.returncode == 1
    assert "1 entry changed in the source cannot be updated in the target (not updatable)" in proc.stdout
    assert "losses" not in proc.stdout


def test_a_failure_list_longer_than_20_says_how_many_more_the_report_holds(tmp_path: Path) -> None:
    source = tmp_path / "MEMORY.md"  # 25 sections read under one id: each one fails
    source.write_text("# Maka Memory\n\n" + "".join(f"## Same\nBody {i}.\n\n" for i in range(25)), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MEMCORE_LOAD_PLUGINS"}
    proc = _memcore(["migrate", f"maka:{source}", f"box:{tmp_path / 'workspace'}"], env)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("failed same: AmbiguousIdError")) == 20
    assert "  … and 5 more (see --report FILE, or --json)" in lines


def test_migrate_into_an_existing_empty_folder_initialises_it(tmp_path: Path) -> None:
    src_url, _ = _maka_with_observation(tmp_path)
    for fmt in ("whitebox", "box", "rightmemory"):
        target = tmp_path / f"empty-{fmt}"
        target.mkdir()
        dry = migrate(src_url, f"{fmt}:{target}", dry_run=True)
        assert dry.ok and dry.counts["written"] == 1 and list(target.iterdir()) == []
        report = migrate(src_url, f"{fmt}:{target}")
        assert report.ok and report.counts["written"] == 1, (fmt, report.entries)
        assert report.notes[:1] == [f"created a new {fmt} store at {target}"]
        with get_registry().get(fmt)(str(target)) as store:
            assert [e.body for e in store.iter_entries()] == ["The deploy took 5 minutes."]


def test_maka_refuses_a_folder_that_holds_anything_but_a_maka_store(tmp_path: Path) -> None:
    maka = get_registry().get("maka")
    vault = tmp_path / "vault"
    get_registry().get("whitebox").init_store(str(vault))
    before = sorted(p.name for p in vault.iterdir())
    for attempt in (lambda: maka.init_store(str(vault)), lambda: maka(str(vault)).open()):
        with pytest.raises(ConfigError) as refused:
            attempt()
        message = str(refused.value)
        assert message.startswith(f"maka: {vault} is a folder that holds no Maka store (it holds 'AGENTS.md'")
        assert f"name that file (`maka:{vault / 'MEMORY.md'}`)" in message
    assert sorted(p.name for p in vault.iterdir()) == before
    env = {k: v for k, v in os.environ.items() if k != "MEMCORE_LOAD_PLUGINS"}
    proc = _memcore(["migrate", f"whitebox:{vault}", f"maka:{vault}"], env)
    assert proc.returncode == 2 and "MEMORY.md" not in os.listdir(vault)
    # an empty folder, and a folder holding a Maka store (with its backup), are Maka stores
    empty = tmp_path / "empty"
    empty.mkdir()
    maka.init_store(str(empty))
    (empty / "MEMORY.md.bak").write_text("# Maka Memory\n", encoding="utf-8")
    with maka(str(empty)) as store:
        assert list(store.iter_entries()) == []
    workspace = tmp_path / "workspace"  # Maka's file in a workspace with other files: taken
    workspace.mkdir()
    (workspace / "notes.txt").write_text("other files\n", encoding="utf-8")
    maka.init_store(str(workspace / "MEMORY.md"))
    with maka(str(workspace)) as store:
        assert list(store.iter_entries()) == []


def test_rightmemory_ids_transliterate_accented_letters_and_existing_ids_stay(tmp_path: Path) -> None:
    rm = get_registry().get("rightmemory")
    location = tmp_path / "rm"
    rm.init_store(str(location))
    memory = location / "MEMORY.md"  # an item an older memcore named with the accents dropped
    memory.write_text(
        memory.read_text(encoding="utf-8") + "\n# Café préféré — Zürich {#caf-pr-f-r-z-rich}\n\nThe old one.\n",
        encoding="utf-8",
    )
    with rm(str(location)) as store:
        new = store.add(MemoryEntry(title="Café préféré — Zürich", body="Flat white, oat milk."))
        straße = store.add(MemoryEntry(title="Straße Ünïcödé", body="Another."))
        old = store.get("caf-pr-f-r-z-rich")
        old.body = "The old one, edited."
        store.update(old, expected_version=old.version)
    assert (new.id, straße.id) == ("cafe-prefere-zurich", "strasse-unicode")
    with rm(str(location)) as store:
        assert {e.id: e.body for e in store.iter_entries()} == {
            "caf-pr-f-r-z-rich": "The old one, edited.",
            "cafe-prefere-zurich": "Flat white, oat milk.",
            "strasse-unicode": "Another.",
        }


def _example_stores() -> dict[str, Path]:
    """The stores shipped in examples/: examples/generate.py's table, format -> location."""
    spec = importlib.util.spec_from_file_location("memcore_examples_generate", REPO / "examples" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {fmt: REPO / "examples" / rel for fmt, rel in module.STORES.items()}


def test_every_shipped_example_store_validates_with_no_error_and_no_warning() -> None:
    stores = _example_stores()
    assert sorted(stores) == [n for n in get_registry().names() if n != "box+cloud"]
    for fmt, location in stores.items():
        with get_registry().get(fmt)(str(location), read_only=True) as store:
            assert [str(d) for d in store.validate()] == [], fmt


def test_memcores_own_writes_of_every_kind_validate_with_no_warning(tmp_path: Path) -> None:
    for fmt in ("whitebox", "box", "rightmemory", "maka"):
        cls = get_registry().get(fmt)
        location = str(tmp_path / fmt / ("MEMORY.md" if fmt == "maka" else "store"))
        cls.init_store(location)
        with cls(location) as store:
            for kind in Kind:
                if kind is Kind.COMPANION and fmt == "box":
                    continue  # Box refuses a companion without the memory it belongs to
                store.add(MemoryEntry(kind=kind, title=f"A {kind.value}", body=f"What the {kind.value} says."))
            assert [str(d) for d in store.validate()] == [], fmt
    with get_registry().get("whitebox")(str(tmp_path / "whitebox" / "store")) as vault:
        observations = [e for e in vault.iter_entries() if e.kind is Kind.OBSERVATION]
    # the spec's required confidence is written, and an entry given none reads back with none
    assert [e.confidence for e in observations] == [None]
    [month] = (tmp_path / "whitebox" / "store" / "observations").iterdir()
    assert "\nconfidence: medium\n" in month.read_text(encoding="utf-8")
