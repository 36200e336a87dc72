"""A migration pauses the cyclic garbage collector while it runs (``MEMCORE_MIGRATE_GC_PAUSE``).

The pause changes nothing a migration writes or reports (same target bytes and reports with the
switch on and off); the collector is off during the run's phases and on again after it, and a
host application that turned the collector off finds it off afterwards. A provider's
``read_all``/``validate`` pauses it too (``MEMCORE_READ_GC_PAUSE``), with the same results.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.test_migrate_bulk_add import _files, _generated, _location, _report

from memcore.collector import paused_gc
from memcore.migrate import migrate
from memcore_box import _state as box_state
from memcore_box import _workspace as box_workspace
from memcore_box import provider as box_provider
from memcore_maka import provider as maka_provider


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    for module in (maka_provider, box_state, box_workspace, box_provider):
        monkeypatch.setattr(module, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.parametrize(
    ("source", "target"), [("whitebox", "rightmemory"), ("box", "whitebox"), ("box", "box"), ("maka", "maka")]
)
def test_a_migration_writes_and_reports_the_same_with_the_collector_paused_or_running(
    source: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    src = f"{source}:{_generated(source, tmp_path / 'src', 60)}"
    seen = []
    for value in ("0", "1"):
        monkeypatch.setenv("MEMCORE_MIGRATE_GC_PAUSE", value)
        root = tmp_path / f"pause-{value}"
        root.mkdir()
        runs = [migrate(src, f"{target}:{_location(target, root)}") for _ in range(2)]
        seen.append(([_report(r, root) for r in runs], _files(root)))
        assert runs[0].counts["written"] == 60 and runs[0].counts["failed"] == 0
    assert seen[1] == seen[0]


def _phases_collector_state(tmp_path: Path) -> set[tuple[str, bool]]:
    src = f"whitebox:{_generated('whitebox', tmp_path / 'src', 20)}"
    root = tmp_path / "dst"
    root.mkdir()
    states: set[tuple[str, bool]] = set()
    migrate(src, f"box:{_location('box', root)}", progress=lambda phase, _d, _t: states.add((phase, gc.isenabled())))
    return states


def test_the_collector_is_off_during_every_phase_and_on_after(tmp_path: Path, collector_on: None) -> None:
    states = _phases_collector_state(tmp_path)
    assert {phase for phase, _ in states} >= {"read", "write", "verify"}
    assert all(enabled is False for _, enabled in states)
    assert gc.isenabled()


def test_the_switch_off_leaves_the_collector_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    monkeypatch.setenv("MEMCORE_MIGRATE_GC_PAUSE", "off")
    states = _phases_collector_state(tmp_path)
    assert states and all(enabled is True for _, enabled in states)


def test_a_host_that_turned_the_collector_off_keeps_it_off(tmp_path: Path) -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        _phases_collector_state(tmp_path)
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_the_collector_runs_again_after_a_run_that_failed(tmp_path: Path, collector_on: None) -> None:
    with pytest.raises(Exception, match="nowhere"):
        migrate(f"whitebox:{tmp_path / 'nowhere'}", f"box:{tmp_path / 'dst'}")
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("inside")
    assert gc.isenabled()


def test_a_providers_read_all_and_validate_run_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    from memcore.provider import read_all
    from memcore_whitebox import WhiteBoxProvider

    vault = _generated("whitebox", tmp_path / "vault", 20)
    seen: list[bool] = []
    scan = WhiteBoxProvider.source_files

    def recording(self: WhiteBoxProvider) -> object:
        seen.append(gc.isenabled())
        return scan(self)

    monkeypatch.setattr(WhiteBoxProvider, "source_files", recording)
    results = {}
    for value in ("1", "0"):
        monkeypatch.setenv("MEMCORE_READ_GC_PAUSE", value)
        seen.clear()
        with WhiteBoxProvider(vault) as store:
            snapshot = read_all(store)
            diagnostics = store.validate()
        results[value] = (snapshot, diagnostics, list(seen))
        assert gc.isenabled()
    assert results["1"][:2] == results["0"][:2] and len(results["1"][0].entries) == 20
    assert results["1"][2] and not any(results["1"][2])  # core's checks ran inside the pause
    assert results["0"][2] and all(results["0"][2])


def test_paused_gc_pauses_the_collector_in_its_block_and_resumes_it_after(collector_on: None) -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a host that turned it off keeps it off
    finally:
        gc.enable()
