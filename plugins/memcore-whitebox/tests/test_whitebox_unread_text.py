"""wb.unread-text: prose in a month file outside every observation block is reported."""

from __future__ import annotations

from pathlib import Path

from memcore.models import MemoryEntry, Severity
from memcore_whitebox.provider import WhiteBoxProvider

ROOT = Path(__file__).resolve().parents[3]
VAULT = ROOT / ".." / "shared" / "samples" / "whitebox" / "vault-example"


def _unread(root: Path) -> list[tuple[str | None, int | None]]:
    provider = WhiteBoxProvider(root, read_only=True).open()
    found = [(d.path, d.line) for d in provider.validate() if d.code == "wb.unread-text"]
    snap = provider.read_all()
    assert [(d.path, d.line) for d in snap.diagnostics if d.code == "wb.unread-text"] == found
    return found


def test_authors_vault_example_and_a_new_vault_have_none(tmp_path: Path) -> None:
    assert _unread(VAULT) == []
    assert _unread(ROOT / "examples" / "whitebox-vault") == []
    WhiteBoxProvider.init_store(str(tmp_path / "v"))
    with WhiteBoxProvider(tmp_path / "v") as provider:
        for body in ("first", "second"):
            provider.add(MemoryEntry(kind="observation", title=body, body=body, confidence=0.5, source="x"))
    assert _unread(tmp_path / "v") == []  # the month header, its sentence, `---` separators


def test_prose_between_and_after_blocks_and_plain_code_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "v"
    WhiteBoxProvider.init_store(str(root))
    with WhiteBoxProvider(root) as provider:
        for body in ("first", "second"):
            provider.add(MemoryEntry(kind="observation", title=body, body=body, confidence=0.5, source="x"))
    (month,) = (root / "observations").glob("*.md")
    text = month.read_text(encoding="utf-8")
    cut = text.index("```\n\n", 10) + 4  # just after the first block's closing fence
    month.write_text(
        text[:cut] + "\nFree prose between.\nmore\n" + text[cut:] + "\nTrailing prose.\n\n```python\nprint(1)\n```\n",
        encoding="utf-8",
    )
    lines = month.read_text(encoding="utf-8").split("\n")
    found = _unread(root)
    assert [lines[n - 1] for _path, n in found] == ["Free prose between.", "Trailing prose.", "```python"]
    assert {p for p, _n in found} == {month.relative_to(root).as_posix()}
    diags = [d for d in WhiteBoxProvider(root).open().validate() if d.code == "wb.unread-text"]
    assert all(d.severity is Severity.WARNING and "not part of any entry" in d.message for d in diags)
    assert sorted(e.body.strip() for e in WhiteBoxProvider(root).open().iter_entries()) == ["first", "second"]
