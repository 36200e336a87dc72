"""A ``\\ud800`` escape in a file's YAML or JSON is reported by validate(), never a crash on read."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore
from memcore.models import Severity
from memcore.registry import get_registry


def _need(fmt: str) -> type:
    if fmt not in get_registry().names():
        pytest.skip(f"{fmt} is not installed")
    return get_registry().get(fmt)


def test_box_memory_with_an_escaped_surrogate_title_is_reported(tmp_path: Path) -> None:
    _need("box").init_store(str(tmp_path))
    with memcore.open(f"box:{tmp_path}") as store:
        store.add(memcore.MemoryEntry(kind="fact", title="Good", body="x\n"))
        store.add(memcore.MemoryEntry(kind="fact", title="Other", body="y\n"))
    bad = next(tmp_path.rglob("fact__good.md"))
    bad.write_text(bad.read_text(encoding="utf-8").replace("title: Good", 'title: "Bad \\ud800"'), encoding="utf-8")
    with memcore.open(f"box:{tmp_path}") as store:
        titles = [e.title for e in store.iter_entries()]
        errors = [d for d in store.validate() if d.severity is Severity.ERROR]
    assert "Other" in titles and "Bad \ud800" not in titles  # no crash; never the invalid text
    # the hand edit also left the index row behind the file: drift no write repairs (issue 17 item 17)
    assert [(Path(d.path or "").name, d.code, "lone surrogate" in d.message) for d in errors] == [
        ("fact__good.md", "box.invalid", True),
        ("fact__good.md", "box.index-stale-entry", False),
    ]


def test_whitebox_file_with_escaped_surrogates_is_reported(tmp_path: Path) -> None:
    _need("whitebox").init_store(str(tmp_path))
    (tmp_path / "projects").mkdir(exist_ok=True)
    (tmp_path / "projects" / "bad.md").write_text('---\ntitle: "Bad \\ud800"\n---\nbody\n', encoding="utf-8")
    (tmp_path / "projects" / "good.md").write_text("---\ntitle: Good\n---\nbody\n", encoding="utf-8")
    with memcore.open(f"whitebox:{tmp_path}") as store:
        titles = [e.title for e in store.iter_entries() if e.id and e.id.startswith("projects/")]
        errors = [d for d in store.validate() if d.severity is Severity.ERROR]
    assert titles == ["Good"]
    assert [(d.path, d.code) for d in errors] == [("projects/bad.md", "wb.invalid")]
    assert "lone surrogate U+D800" in errors[0].message
