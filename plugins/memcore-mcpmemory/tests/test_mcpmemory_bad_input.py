"""Lines Python's ``json`` reads but memcore cannot hold: each is a bad line with a diagnostic, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore
from memcore.errors import ParseError
from memcore.models import MemoryEntry

GOOD = b'{"type":"entity","name":"kept","entityType":"t","observations":["o"]}\n'


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b'{"type":"entity","name":"a","entityType":"t","observations":[],"n":' + b"1" * 5000 + b"}", "4300 digits"),
        (b'{"type":"entity","name":"a","entityType":"t","observations":[],"n":NaN}', "NaN is not a JSON value"),
        (b'{"type":"entity","name":"a","entityType":"t","observations":[],"n":-Infinity}', "-Infinity is not"),
        (b'{"type":"entity","name":"a\\ud800","entityType":"t","observations":[]}', "record.name has a lone surrogate"),
        (b'{"type":"entity","name":"a","entityType":"t","observations":["\\udc00"]}', "observations[0] has a lone"),
    ],
    ids=["huge-integer", "nan", "infinity", "surrogate-name", "surrogate-observation"],
)
def test_a_line_json_reads_but_memcore_cannot_hold_is_a_bad_line_and_blocks_writes(
    tmp_path: Path, line: bytes, says: str
) -> None:
    path = tmp_path / "memory.jsonl"
    raw = GOOD + line + b"\n"
    path.write_bytes(raw)
    store = memcore.open(f"mcpmemory:{path}")

    assert [entry.id for entry in store.iter_entries()] == ["kept"]
    problems = [d for d in store.validate() if d.code == "mcpmemory.syntax"]
    assert [(d.path.endswith("memory.jsonl"), d.line) for d in problems] == [(True, 2)]
    assert says in problems[0].message
    with pytest.raises(ParseError, match="left untouched"):
        store.add(MemoryEntry(id="new", title="new", body="x"))
    assert path.read_bytes() == raw
