"""The fields a migration sets on the entries it builds: the unvalidated path gives what validation gives.

:func:`memcore.migrate.fidelity._assign` stores a value straight into a copy's field when
validation would keep it as it is, and validates anything else. With ``MEMCORE_MIGRATE_FAST``
on and off, every value below ends as the same field (or the same refusal), and whole
migrations write the same bytes and the same report.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.test_migrate_bulk_add import _files, _generated, _location, _report

from memcore.migrate import fidelity, migrate
from memcore.models import MemoryEntry, Relation
from memcore_maka import provider as maka_provider


@pytest.fixture(params=[True, False], ids=["fast", "general"])
def fast(request: pytest.FixtureRequest) -> Iterator[bool]:
    saved = fidelity.FAST_COPY
    fidelity.set_fast_copy(request.param)
    yield request.param
    fidelity.set_fast_copy(saved)


class _Edge(Relation):
    """A Relation subclass: validation keeps such an instance, the fast path leaves it to validation."""


VALUES: list[tuple[str, Any]] = [
    ("id", "mem-1"),
    ("id", None),
    ("id", "caf\u0065\u0301"),  # NFD: validation composes it
    ("id", "x\ud800"),  # a lone surrogate: refused
    ("id", ""),  # refused
    ("id", "a\x00b"),  # refused
    ("parent", "p-2"),
    ("parent", "Cafe\u0301"),
    ("parent", None),
    ("version", None),
    ("relations", []),
    ("relations", [Relation(type="related", target="b1"), Relation(type="see", target="text", resolved=False)]),
    ("relations", [_Edge(type="related", target="b1")]),
]


def _outcome(name: str, value: Any) -> Any:
    entry = fidelity._copy_all_set(MemoryEntry(id="a", title="t", body="b", parent="q"))
    try:
        fidelity._assign(entry, name, value)
    except ValidationError as exc:
        return ("refused", [err["msg"] for err in exc.errors()])
    return (entry.model_dump(), entry.model_fields_set, [type(r) for r in entry.relations])


@pytest.mark.parametrize(("name", "value"), VALUES, ids=[f"{n}={v!r}" for n, v in VALUES])
def test_an_assigned_field_holds_what_validation_gives_on_both_paths(name: str, value: Any) -> None:
    saved = fidelity.FAST_COPY
    try:
        fidelity.set_fast_copy(True)
        on = _outcome(name, value)
        fidelity.set_fast_copy(False)
        off = _outcome(name, value)
    finally:
        fidelity.set_fast_copy(saved)
    assert on == off


def test_nfd_ids_are_composed_and_bad_ids_refused(fast: bool) -> None:
    assert _outcome("id", "cafe\u0301")[0]["id"] == "caf\u00e9"
    assert _outcome("id", "")[0] == "refused"
    assert _outcome("id", "x\ud800")[0] == "refused"


def test_assigned_relations_are_a_new_list(fast: bool) -> None:
    entry = fidelity._copy_all_set(MemoryEntry(body="b"))
    mapped = [Relation(type="related", target="b1")]
    fidelity._assign(entry, "relations", mapped)
    mapped.append(Relation(type="related", target="b2"))
    assert entry.relations == [Relation(type="related", target="b1")]


@pytest.mark.parametrize(
    ("source", "target"), [("whitebox", "maka"), ("rightmemory", "whitebox"), ("whitebox", "whitebox")]
)
def test_a_migration_writes_the_same_bytes_and_report_with_the_fast_path_on_and_off(
    source: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    monkeypatch.setattr(
        maka_provider, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    )  # Maka stamps updates
    src = _generated(source, tmp_path / "src", 120)
    saved = fidelity.FAST_COPY
    reports, files = [], []
    try:
        for on in (False, True):
            fidelity.set_fast_copy(on)
            root = tmp_path / ("fast" if on else "general")
            root.mkdir()
            report = migrate(f"{source}:{src}", f"{target}:{_location(target, root)}")
            reports.append(_report(report, root))
            files.append(_files(root))
    finally:
        fidelity.set_fast_copy(saved)
    assert reports[0] == reports[1]
    assert files[0] == files[1]
    assert reports[1]["counts"]["written"] == 120
