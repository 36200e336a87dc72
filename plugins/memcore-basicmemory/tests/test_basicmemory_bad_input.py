"""Frontmatter PyYAML fails on with a plain ValueError: a malformed-frontmatter diagnostic, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert len(messages) == 1 and "the frontmatter.ratio is nan, which is not a JSON number" in messages[0]
    assert (tmp_path / "note.md").read_bytes() == raw


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('tag: "\\ud800"', "the frontmatter is not YAML (found invalid Unicode character escape code)"),
        ("loop: &a [1, *a]", "the frontmatter.loop[1] contains itself (a recursive alias)"),
    ],
    ids=["lone surrogate", "recursive alias"],
)
def test_a_frontmatter_value_no_entry_can_hold_is_malformed_frontmatter_and_the_note_is_kept(
    tmp_path: Path, line: str, said: str
) -> None:
    raw = f"---\ntitle: t\n{line}\n---\nbody\n".encode()
    (tmp_path / "note.md").write_bytes(raw)
    store = memcore.open(f"basicmemory:{tmp_path}")

    assert [entry.body for entry in store.iter_entries()] == [raw.decode()]
    messages = [d.message for d in store.validate() if d.code == "basicmemory.malformed-frontmatter"]
    assert len(messages) == 1 and said in messages[0], messages
    assert (tmp_path / "note.md").read_bytes() == raw


def test_a_permalink_that_reads_as_a_path_outside_the_project_is_warned_and_never_becomes_a_path(
    tmp_path: Path,
) -> None:
    (tmp_path / "evil.md").write_text("---\ntitle: Evil\npermalink: ../../etc/passwd\n---\n\nbody\n")
    (tmp_path / "abs.md").write_text("---\ntitle: Abs\npermalink: /etc/hosts\n---\n\nbody\n")
    (tmp_path / "fine.md").write_text("---\ntitle: Fine\npermalink: notes/fine..ok\n---\n\nbody\n")
    with memcore.open(f"basicmemory:{tmp_path}") as store:
        warned = sorted(
            (d.path.rsplit("/", 1)[-1], d.line) for d in store.validate() if d.code.endswith("path-permalink")
        )
        assert warned == [("abs.md", 3), ("evil.md", 3)]
        evil = store.get("../../etc/passwd")
        store.update(evil.model_copy(update={"body": "changed"}))
        store.delete("/etc/hosts")
    assert sorted(p.name for p in tmp_path.rglob("*.md")) == ["evil.md", "fine.md"]
    assert (tmp_path / "evil.md").read_text().endswith("\n\nchanged")
