"""Regressions for the adversarial tester's findings (C7, C9a, D4, W2, W5, W6) against vaults in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError, MemcoreError, UnsafePathError
from memcore.models import Kind, MemoryEntry
from memcore_whitebox.provider import WhiteBoxProvider


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    WhiteBoxProvider.init_store(str(root))
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


def test_c7_naive_created_at_in_an_observation_is_a_warning(vault: Path) -> None:
    (vault / "observations" / "2026-07.md").write_text(
        '```\n---\ndate: 2026-07-01\nsource: x\nmemcore: {"created_at": "2026-07-01T00:00:00"}\n---\nb\n```\n',
        encoding="utf-8",
    )
    provider = WhiteBoxProvider(vault).open()
    [entry] = list(provider.iter_entries())
    assert (entry.id, entry.body, entry.source) == ("observations/2026-07.md#1", "b", "x")
    assert entry.created_at is not None and entry.created_at.isoformat() == "2026-07-01T00:00:00+00:00"
    assert entry.date_only is True
    [diag] = [d for d in provider.validate() if d.code == "wb.memcore-field"]
    assert (diag.path, diag.line, diag.entry_id) == ("observations/2026-07.md", 1, entry.id)


def test_c9a_over_long_explicit_path_is_refused(vault: Path) -> None:
    before = snapshot(vault)
    provider = WhiteBoxProvider(vault).open()
    entry = MemoryEntry(kind=Kind.FACT, title="t", body="b", extra={"whitebox": {"path": "a" * 300 + ".md"}})
    with pytest.raises(InvalidEntryError, match="255"):
        provider.add(entry)
    deep = MemoryEntry(kind=Kind.FACT, title="t", body="b", extra={"whitebox": {"path": "x/" + "é" * 200 + ".md"}})
    with pytest.raises(InvalidEntryError):
        provider.add(deep)
    assert snapshot(vault) == before


def test_c9a_over_long_id_lookups_are_memcore_errors(vault: Path) -> None:
    provider = WhiteBoxProvider(vault).open()
    with pytest.raises(MemcoreError):
        provider.get("a" * 300 + ".md")


@pytest.mark.parametrize("title", ["CON", "nul", "Com1", "lpt9"])
def test_w2_reserved_titles_get_a_safe_slug(vault: Path, title: str) -> None:
    provider = WhiteBoxProvider(vault).open()
    stored = provider.add(MemoryEntry(kind=Kind.FACT, title=title, body="b"))
    assert stored.id == f"{title.lower()}-fact.md"
    assert stored.title == title
    assert provider.get(stored.id).title == title


def test_w5_append_to_bom_crlf_month_file_without_final_newline(vault: Path) -> None:
    month = vault / "observations" / "2026-07.md"
    month.write_bytes(
        b"\xef\xbb\xbf# Observations 2026-07\r\n\r\n```\r\n---\r\ndate: 2026-07-01\r\nsource: x\r\n"
        b"tags: [preference]\r\n---\r\nfirst\r\n```"
    )
    provider = WhiteBoxProvider(vault).open()
    provider.add(
        MemoryEntry(
            kind=Kind.OBSERVATION,
            body="second",
            source="y",
            tags=["preference"],
            created_at="2026-07-02",
            date_only=True,
        )
    )
    data = month.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert data.endswith(b"```\r\n")
    assert [e.body for e in provider.iter_entries()] == ["first", "second"]
    assert [d for d in provider.validate() if d.severity.value == "error"] == []


def test_w6_empty_title_reads_back_empty(vault: Path) -> None:
    provider = WhiteBoxProvider(vault).open()
    stored = provider.add(MemoryEntry(kind=Kind.FACT, title="", body="body for the fact"))
    assert stored.id == "body-for-the-fact.md"
    assert stored.title == ""
    assert WhiteBoxProvider(vault).open().get(stored.id).title == ""


@pytest.mark.parametrize("tag", ["two\nlines", "back`tick", "cr\rtag"])
@pytest.mark.parametrize("kind", [Kind.OBSERVATION, Kind.FACT])
def test_w6_tags_tags_md_cannot_hold_are_refused(vault: Path, tag: str, kind: Kind) -> None:
    before = snapshot(vault)
    provider = WhiteBoxProvider(vault).open()
    with pytest.raises(InvalidEntryError, match=r"tags\.md"):
        provider.add(MemoryEntry(kind=kind, title="t", body="b", source="s", tags=["preference", tag]))
    assert snapshot(vault) == before


def test_d4_symlinked_tags_md_is_not_read_nor_replaced(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-tags.md"
    outside.write_text(
        (vault / "tags.md").read_text(encoding="utf-8") + "- `secret-outside` \u2014 x\n", encoding="utf-8"
    )
    (vault / "tags.md").unlink()
    os.symlink(outside, vault / "tags.md")
    outside_before = outside.read_bytes()
    before = snapshot(vault)
    provider = WhiteBoxProvider(vault).open()
    assert provider.tag_registry() is None
    diags = provider.validate()
    assert [(d.code, d.path, d.severity.value) for d in diags if d.code == "wb.symlink"] == [
        ("wb.symlink", "tags.md", "error")
    ]
    with pytest.raises(UnsafePathError, match=r"tags\.md"):
        provider.add(MemoryEntry(kind=Kind.OBSERVATION, body="b", source="s", tags=["brandnewtag"]))
    assert (vault / "tags.md").is_symlink()
    assert outside.read_bytes() == outside_before
    assert snapshot(vault) == before
    # an untagged entry needs no registry: it is stored
    provider.add(MemoryEntry(kind=Kind.OBSERVATION, body="b", source="s", created_at="2026-07-02", date_only=True))
    assert (vault / "tags.md").is_symlink()


def test_c9a_proposal_for_a_long_target_gets_a_short_file_name(vault: Path) -> None:
    provider = WhiteBoxProvider(vault, as_user=False).open()
    target = "projects/" + "é" * 120 + ".md"
    proposal = MemoryEntry(kind=Kind.PROPOSAL, title="why", body="new text", extra={"whitebox": {"target": target}})
    stored = provider.add(proposal)
    assert stored.id is not None and stored.id.startswith("proposed/")
    assert len(stored.id.split("/")[-1].encode("utf-8")) <= 255
    assert provider.get(stored.id).extra["whitebox"]["target"] == target


def test_d4_symlinked_scopes_md_fails_closed(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-scopes.md"
    outside.write_text("# Scopes\n", encoding="utf-8")
    os.symlink(outside, vault / "scopes.md")
    with pytest.raises(UnsafePathError, match=r"scopes\.md"):
        WhiteBoxProvider(vault).open()
    assert (vault / "scopes.md").is_symlink()


@pytest.mark.parametrize("fast", ["1", "0"])
@pytest.mark.parametrize(
    ("tags_line", "memcore_line"),
    [
        ('tags: ["  ", "b"]', ""),
        ('tags: ["  ", "b"]', 'memcore: {"extra": {"x": {"k": 1}}}\n'),
        ("tags:\n  - ''\n  - b", 'memcore: {"kind": "preference"}\n'),
    ],
)
def test_a_blank_tag_written_by_hand_is_left_out_and_the_block_still_reads(
    vault: Path, monkeypatch: pytest.MonkeyPatch, fast: str, tags_line: str, memcore_line: str
) -> None:
    monkeypatch.setenv("MEMCORE_YAML_FAST", fast)
    monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", fast)
    (vault / "observations" / "2026-07.md").write_text(
        f"```\n---\ndate: 2026-07-01\nsource: x\n{tags_line}\n{memcore_line}---\nhello\n```\n", encoding="utf-8"
    )
    with WhiteBoxProvider(vault) as provider:
        snapshot_read = provider.read_all()
        [listed] = list(provider.iter_entries())
    [entry] = snapshot_read.entries
    assert (entry.body, entry.tags, listed.tags) == ("hello", ["b"], ["b"])
    assert MemoryEntry.model_validate(entry.model_dump()).tags == ["b"]
    assert not [d for d in snapshot_read.diagnostics if d.severity == "error"]
