"""D3: a memcore comment that is a JSON object but holds values memcore cannot use.

Read: warn (``rm.bad-meta`` with path + line), keep the valid keys. Update: keep the keys it
did not understand, byte for byte as JSON values, next to the ones it rewrites.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Severity, Status
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._header import inline_text

PURSUITS = "# Pursuits\n\n## Focus\n\nNo Pursuit is focused yet.\n"
META_LINE = re.compile(r"<!-- memcore: (.*) -->")


def _store(root: Path, meta: str) -> Path:
    root.mkdir()
    (root / "PURSUITS.md").write_text(PURSUITS, encoding="utf-8")
    memory = f"# M {{#m}}\n\n- `a` one → []\n  <!-- memcore: {meta} -->\n- `b` two → []\n"
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    return root


def _meta_of(root: Path) -> dict[str, object]:
    text = inline_text((root / "MEMORY.md").read_text(encoding="utf-8"))
    match = META_LINE.search(text)
    assert match is not None
    value = json.loads(match.group(1))
    assert isinstance(value, dict)
    return value


def test_bad_values_warn_and_valid_keys_apply(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", '{"status": 5, "tags": "x", "source": "agent-7", "scope": "proj"}')
    with RightMemoryProvider(root) as provider:
        entry = provider.get("a")
        diags = [d for d in provider.validate() if d.code == "rm.bad-meta"]
    assert entry.source == "agent-7"
    assert entry.scope == "proj"
    assert entry.status == Status.ACTIVE
    assert entry.tags == []
    assert sorted((d.path, d.line, d.severity, d.entry_id) for d in diags) == [
        ("MEMORY.md", 4, Severity.WARNING, "a"),
        ("MEMORY.md", 4, Severity.WARNING, "a"),
    ]
    messages = " ".join(d.message for d in diags)
    assert "`status`" in messages and "`tags`" in messages


@pytest.mark.parametrize(
    "meta",
    [
        '{"created_at": "2026-07-01T00:00:00"}',
        '{"created_at": "bad"}',
        '{"confidence": 7}',
        '{"relations": [5]}',
        '{"extra": "nope"}',
        '{"future_key": 1}',
    ],
)
def test_each_unusable_value_is_one_warning(tmp_path: Path, meta: str) -> None:
    root = _store(tmp_path / "s", meta)
    with RightMemoryProvider(root) as provider:
        provider.get("a")
        diags = [(d.code, d.path, d.line, d.severity) for d in provider.validate()]
    assert diags == [("rm.bad-meta", "MEMORY.md", 4, Severity.WARNING)]


def test_update_keeps_keys_it_did_not_understand(tmp_path: Path) -> None:
    root = _store(
        tmp_path / "s",
        '{"status": 5, "tags": "x", "created_at": "2026-07-01T00:00:00", "source": "agent-7", "future_key": [1, {"z": null}]}',
    )
    with RightMemoryProvider(root) as provider:
        entry = provider.get("a")
        entry.title = "one, edited"
        provider.update(entry)
        again = provider.get("a")
    meta = _meta_of(root)
    assert meta["status"] == 5
    assert meta["tags"] == "x"
    assert meta["created_at"] == "2026-07-01T00:00:00"
    assert meta["future_key"] == [1, {"z": None}]
    assert meta["source"] == "agent-7"
    assert "updated_at" not in meta  # RightMemory has no timestamps: an update stamps none
    assert again.title == "one, edited"
    assert again.source == "agent-7"
    # The node line and the untouched item are the only other text.
    lines = inline_text((root / "MEMORY.md").read_text(encoding="utf-8")).splitlines()
    assert lines[2] == "- `a` one, edited → []"
    assert lines[4] == "- `b` two → []"


def test_update_replaces_a_bad_value_the_caller_sets(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", '{"status": 5, "tags": "x"}')
    with RightMemoryProvider(root) as provider:
        entry = provider.get("a")
        entry.status = Status.ARCHIVED
        provider.update(entry)
        again = provider.get("a")
        diags = [d for d in provider.validate() if d.code == "rm.bad-meta"]
    meta = _meta_of(root)
    assert meta["status"] == "archived"
    assert meta["tags"] == "x"
    assert again.status == Status.ARCHIVED
    assert [d.message for d in diags if "`tags`" in d.message] and len(diags) == 1


def test_non_finite_number_is_not_json_and_update_refuses(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", '{"confidence": NaN}')
    before = (root / "MEMORY.md").read_bytes()
    with RightMemoryProvider(root) as provider:
        entry = provider.get("a")
        codes = [(d.code, d.line) for d in provider.validate()]
        assert provider.update(entry).version == entry.version  # no change: nothing to write
        entry.title = "one, edited"
        with pytest.raises(InvalidEntryError):
            provider.update(entry)
    assert codes == [("rm.bad-meta", 4)]
    assert (root / "MEMORY.md").read_bytes() == before
