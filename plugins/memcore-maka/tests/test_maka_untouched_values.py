"""An update leaves hand-written comment values it did not touch byte for byte (issue 17, item 8).

Before, every rewrite of a metadata comment ran each value through Maka's normaliser: ``k=-->``
vanished, ``a>b`` became ``a-b`` and ``c=<x`` became ``c=x``, although the update changed only
the body. Maka reads such tokens (a token never holds whitespace), so they are kept as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore_maka import MakaProvider

HAND_WRITTEN = (
    "# Maka Memory\n\n## Hand written\n"
    "<!-- maka-memory: id=hw origin=manual createdAt=1700000000000 decayTtlMs=99999999999999 "
    "k=--> a=a>b c=<x e= u=-edge- -->\n"
    "The body.\n"
)
TOKENS = ("k=-->", "a=a>b", "c=<x", "e=", "u=-edge-")


def _comment(path: Path) -> str:
    return next(line for line in path.read_text(encoding="utf-8").splitlines() if "maka-memory:" in line)


@pytest.mark.parametrize(
    "change",
    [
        {"body": "A new body."},
        {"title": "A new title"},
        {"tags": ["fresh"]},
        {"source": "agent"},
    ],
    ids=["body", "title", "tags", "source"],
)
def test_update_keeps_untouched_hand_written_values_byte_for_byte(tmp_path: Path, change: dict[str, object]) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    provider = MakaProvider(path, apply_decay=False)
    entry = provider.get("hw")
    assert entry.extra["maka"] == {"k": "-->", "a": "a>b", "c": "<x", "e": "", "u": "-edge-"}
    provider.update(entry.model_copy(update=change))
    tokens = _comment(path).removeprefix("<!-- maka-memory: ").removesuffix(" -->").split(" ")
    for token in TOKENS:
        assert token in tokens, f"{token!r} was rewritten: {_comment(path)}"
    again = MakaProvider(path, apply_decay=False).get("hw")
    assert again.extra["maka"] == entry.extra["maka"]


def test_decay_rewrite_keeps_hand_written_values(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(HAND_WRITTEN.replace("decayTtlMs=99999999999999", "decayTtlMs=1"), encoding="utf-8")
    provider = MakaProvider(path)
    (entry,) = provider.iter_entries()  # archives it: the comment is rewritten
    assert entry.status.value == "archived"
    for token in TOKENS:
        assert token in _comment(path).split(" ")


def test_a_new_unsafe_value_is_written_safe_and_restored_exactly(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    provider = MakaProvider(path, apply_decay=False)
    entry = provider.get("hw")
    extra = {"maka": {**entry.extra["maka"], "a": "x > y"}}
    provider.update(entry.model_copy(update={"extra": extra}))
    assert "a=x-y" in _comment(path).split(" ")  # what Maka's own writer stores
    assert MakaProvider(path, apply_decay=False).get("hw").extra["maka"]["a"] == "x > y"  # exact, from mcData
