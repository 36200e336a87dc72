"""Frontmatter PyYAML fails on with a plain ValueError: a malformed-frontmatter diagnostic, never a crash."""

from __future__ import annotations

from pathlib import Path

import memcore


def test_an_impossible_yaml_date_is_malformed_frontmatter_not_a_crash(tmp_path: Path) -> None:
    raw = b"---\ntitle: t\nmodified: 2024-13-45\n---\nbody\n"
    (tmp_path / "note.md").write_bytes(raw)
    store = memcore.open(f"basicmemory:{tmp_path}")

    assert [entry.body for entry in store.iter_entries()] == [raw.decode()]  # nothing lost: the text is the body
    found = [(d.path.endswith("note.md"), d.code) for d in store.validate() if "frontmatter" in d.code]
    assert found == [(True, "basicmemory.malformed-frontmatter")]
    assert "month must be in 1..12" in next(d.message for d in store.validate() if "frontmatter" in d.code)
    assert (tmp_path / "note.md").read_bytes() == raw


def test_nan_or_inf_in_frontmatter_is_malformed_frontmatter_not_a_crash(tmp_path: Path) -> None:
    raw = b"---\ntitle: t\nratio: .nan\nlimit: [1, -.inf]\n---\nbody\n"
    (tmp_path / "note.md").write_bytes(raw)
    store = memcore.open(f"basicmemory:{tmp_path}")

    assert [entry.body for entry in store.iter_entries()] == [raw.decode()]
    messages = [d.message for d in store.validate() if d.code == "basicmemory.malformed-frontmatter"]
    assert len(messages) == 1 and ".nan or .inf" in messages[0]
    assert (tmp_path / "note.md").read_bytes() == raw
