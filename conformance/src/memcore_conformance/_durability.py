"""``DurabilityTests``: concurrent processes lose nothing; a SIGKILL loses no acknowledged write.

Both start fresh interpreters (forkserver where the platform has it, else spawn; never fork)
that import the provider by ``module:QualName`` (``provider_import_path``), and both are marked
``slow``. Sizes are knobs: ``concurrent_processes`` x ``concurrent_adds``, ``crash_writes`` with
``crash_kills`` kills.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from memcore.models import MemoryEntry
from memcore_conformance._base import C, ConformanceBase, requires, slow
from memcore_conformance._checks import errors_of
from memcore_conformance._workers import add_entries, write_until_killed

__all__ = ["DurabilityTests"]


def _mp_context() -> Any:
    """Return the ``forkserver`` context where the platform has it, else ``spawn``.

    Forkserver children fork from a server that imported memcore once (16 spawns cost ~7 s of
    imports on 2 cores). Never ``fork``: the parent runs pytest and may hold threads and locks.
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["memcore", "memcore.storage", "memcore_conformance._workers"])
        return ctx
    return multiprocessing.get_context("spawn")


class DurabilityTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: many writers, and writers killed mid-write."""

    # == processes ====================================================================
    @slow
    @requires(C.ADD, C.CONCURRENT)
    def test_concurrent_processes_lose_nothing(
        self,
        tmp_path: Path,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """16 spawned processes x 25 adds to one store: all 400 entries present, store valid."""
        procs_n, adds_n = self.concurrent_processes, self.concurrent_adds
        ctx = _mp_context()
        go = ctx.Event()
        results = tmp_path / "results"
        results.mkdir()
        titles: dict[str, str] = {}
        procs = []
        for p in range(procs_n):
            batch = [
                memcore_make_entry(title=f"Process {p} entry {n}", body=f"Written by process {p}, entry {n}.\n")
                for n in range(adds_n)
            ]
            for entry in batch:
                titles[entry.title] = entry.body
            payload = [e.model_dump(mode="json") for e in batch]
            proc = ctx.Process(
                target=add_entries,
                args=(
                    self._import_path(memcore_provider_cls),
                    memcore_location,
                    memcore_provider_options,
                    payload,
                    str(results / f"{p}.json"),
                    go,
                ),
            )
            proc.start()
            procs.append(proc)
        go.set()
        for proc in procs:
            proc.join(timeout=300)
        failures = []
        for p, proc in enumerate(procs):
            if proc.is_alive():
                proc.kill()
                proc.join()
                failures.append(f"process {p} hung")
            elif proc.exitcode != 0:
                err = results / f"{p}.json.err"
                failures.append(f"process {p} exit {proc.exitcode}: {err.read_text() if err.exists() else ''}")
        assert not failures, "\n".join(failures)
        returned = [i for p in range(procs_n) for i in json.loads((results / f"{p}.json").read_text())]
        assert len(returned) == procs_n * adds_n and len(set(returned)) == len(returned), "ids repeated"
        provider = memcore_reopen()
        found = {e.id: e for e in provider.iter_entries()}
        missing = sorted(set(returned) - set(found))
        assert not missing, f"{len(missing)} of {len(returned)} acknowledged entries are missing: {missing[:5]}"
        assert len(found) == procs_n * adds_n, "the store holds entries nobody added"
        for entry_id in returned:
            entry = found[entry_id]
            assert titles.get(entry.title) is not None, f"entry {entry_id} has a foreign title {entry.title!r}"
        assert errors_of(provider.validate()) == []

    @slow
    @requires(C.ADD)
    def test_sigkill_loses_no_acknowledged_write(
        self,
        request: pytest.FixtureRequest,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """A writer SIGKILLed at random points during 100 adds: every acknowledged add is there, no file torn."""
        if not hasattr(signal, "SIGKILL"):
            pytest.skip("no SIGKILL on this platform")
        from memcore_conformance.plugin import option

        seed_text = option(request.config, "memcore_seed")
        seed = int(seed_text) if seed_text else random.SystemRandom().randrange(2**32)
        rng = random.Random(seed)
        total = self.crash_writes
        entries = [
            memcore_make_entry(
                title=f"Crash entry {n}", body=f"Crash body {n}.\n" + "padding line\n" * rng.randrange(50)
            )
            for n in range(total)
        ]
        kill_after = sorted(rng.sample(range(1, total), self.crash_kills))
        acked: dict[str, MemoryEntry] = {}
        intervals: list[float] = []
        ctx = _mp_context()
        position = 0
        rounds = [*kill_after, None]
        for kill_at in rounds:
            if position >= total:
                break
            parent, child = ctx.Pipe(duplex=False)
            payload = [e.model_dump(mode="json") for e in entries[position:]]
            proc = ctx.Process(
                target=write_until_killed,
                args=(
                    self._import_path(memcore_provider_cls),
                    memcore_location,
                    memcore_provider_options,
                    payload,
                    child,
                ),
            )
            proc.start()
            child.close()
            start = position
            last_ack: float | None = None
            try:
                while True:
                    if not parent.poll(120):
                        pytest.fail(f"seed {seed}: the writer stopped answering")
                    try:
                        message = parent.recv()
                    except EOFError:
                        break
                    if message[0] == "error":
                        pytest.fail(f"seed {seed}: the writer failed:\n{message[1]}")
                    if message[0] == "ack":
                        _, index, entry_id = message
                        acked[entry_id] = entries[start + index]
                        position = start + index + 1
                        now = time.monotonic()
                        if last_ack is not None:
                            intervals.append(now - last_ack)
                        last_ack = now
                        if kill_at is not None and position >= kill_at:
                            # somewhere inside the next write: up to 1.2 x the median write time
                            typical = sorted(intervals)[len(intervals) // 2] if intervals else 0.005
                            time.sleep(rng.uniform(0, 1.2 * typical))
                            try:
                                os.kill(proc.pid, signal.SIGKILL)
                            except ProcessLookupError:
                                pass  # the writer finished its adds and exited first: its acks follow
                            kill_at = None
                            while parent.poll(0.5):
                                try:
                                    late = parent.recv()
                                except EOFError:
                                    break
                                if late[0] == "ack":
                                    acked[late[2]] = entries[start + late[1]]
                                    position = start + late[1] + 1
                            break
                    if message[0] == "done":
                        break
            finally:
                proc.join(timeout=60)
                parent.close()
        provider = memcore_reopen()
        found = {e.id: e for e in provider.iter_entries()}
        missing = [entry_id for entry_id in acked if entry_id not in found]
        assert not missing, f"seed {seed}: acknowledged writes lost after SIGKILL: {missing[:5]}"
        for entry_id, given in acked.items():
            got = found[entry_id]
            assert (got.title, got.body) == (given.title, given.body), f"seed {seed}: entry {entry_id} torn"
        assert errors_of(provider.validate()) == [], f"seed {seed}: the store is damaged after SIGKILL"
