"""memcore's writes read by Claude Code's own rules (claude-code-memory.md B.3-B.5; issue 19).

Claude Code is closed source: the reader here applies the documented rules to the real files
memcore wrote: MEMORY.md is loaded up to 200 lines or 25 KB, its lines are
``- [Title](file.md) — hook``; a topic file gives ``name``, ``description`` and ``type``
(``metadata.type`` or top-level); ``[[slug]]`` links are not resolved; nothing else is a field.
Each test pins one way that reading meets, or differs from, what memcore holds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_claudecode.provider import ClaudeCodeProvider

_LINE = re.compile(r"^- \[(?P<title>[^\]]*)\]\((?P<file>[^)]+\.md)\) \u2014 (?P<hook>.*)$")
_TYPES = {"user", "feedback", "project", "reference"}


def _claude_reads(root: Path) -> dict[str, dict[str, Any]]:
    """Return per topic file what Claude Code reads: index line loaded at start, name, description, type."""
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    loaded, size = {}, 0
    for number, line in enumerate(index.split("\n"), 1):
        size += len(line.encode("utf-8")) + 1
        match = _LINE.match(line)
        if match:
            loaded[match["file"]] = {
                "line": number,
                "at_start": number <= 200 and size <= 25 * 1024,
                **match.groupdict(),
            }
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        text = path.read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n")) if text.startswith("---\n") else {}
        meta = meta or {}
        kind = (meta.get("metadata") or {}).get("type") or meta.get("type")
        out[path.name] = {
            "name": meta.get("name"),
            "description": meta.get("description"),
            "type": kind if kind in _TYPES else None,
            "index": loaded.get(path.name),
        }
    return out


def test_a_plain_add_of_each_type_reads_as_memcore_holds_it(tmp_path: Path) -> None:
    ClaudeCodeProvider.init_store(str(tmp_path))
    kinds = {Kind.FACT: "user", Kind.PREFERENCE: "feedback", Kind.NOTE: "project", Kind.REFERENCE: "reference"}
    with ClaudeCodeProvider(tmp_path) as store:
        stored = {k: store.add(MemoryEntry(kind=k, title=f"{k.value} one", body=f"About {k.value}.\n")) for k in kinds}
    reads = _claude_reads(tmp_path)
    for kind, entry in stored.items():
        seen = reads[entry.id or ""]
        assert (seen["name"], seen["type"], seen["description"]) == (entry.title, kinds[kind], f"About {kind.value}.")
        assert seen["index"]["title"] == entry.title and seen["index"]["at_start"]
    assert all(b"memcore" not in p.read_bytes() for p in tmp_path.glob("*.md"))


def test_what_claude_code_has_no_field_for_it_does_not_read(tmp_path: Path) -> None:
    """Differences memcore cannot avoid: its kind, status, tags and relations live in ``memcore:``."""
    ClaudeCodeProvider.init_store(str(tmp_path))
    with ClaudeCodeProvider(tmp_path) as store:
        other = store.add(MemoryEntry(kind=Kind.FACT, title="Other", body="o\n"))
        entry = store.add(
            MemoryEntry(
                kind=Kind.DECISION,
                title="Use locks",
                body="Taken per job.\n",
                status=Status.SUPERSEDED,
                tags=["db"],
                relations=[Relation(type="related", target=other.id or "")],
            )
        )
        assert store.get(entry.id or "").kind is Kind.DECISION
    seen = _claude_reads(tmp_path)[entry.id or ""]
    assert seen["type"] == "project"  # decision: Claude Code's nearest type; memcore.kind keeps decision
    text = (tmp_path / (entry.id or "")).read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))
    assert front["memcore"]["kind"] == "decision" and front["memcore"]["status"] == "superseded"
    assert "[[" not in text.split("\n---\n", 1)[1]  # a relation the body does not spell is not a link


def test_an_untitled_memory_shows_no_name(tmp_path: Path) -> None:
    ClaudeCodeProvider.init_store(str(tmp_path))
    with ClaudeCodeProvider(tmp_path) as store:
        entry = store.add(MemoryEntry(kind=Kind.OBSERVATION, title="", body="Saw the queue back up.\n"))
        assert store.get(entry.id or "").title == ""
    seen = _claude_reads(tmp_path)[entry.id or ""]
    assert seen["name"] == "" and seen["index"]["title"] == "" and seen["index"]["hook"] == "Saw the queue back up."


def test_an_index_line_past_line_200_is_not_loaded_at_start_and_validate_says_so(tmp_path: Path) -> None:
    ClaudeCodeProvider.init_store(str(tmp_path))
    with ClaudeCodeProvider(tmp_path) as store:
        with store.batch():
            for n in range(201):
                store.add(MemoryEntry(kind=Kind.FACT, title=f"Fact {n:03d}", body=f"Fact number {n}.\n"))
        codes = {d.code for d in store.validate()}
    reads = _claude_reads(tmp_path)
    late = [name for name, seen in reads.items() if not seen["index"]["at_start"]]
    assert len(late) == 1 and reads[late[0]]["index"]["line"] == 201
    assert "claudecode.index-too-long" in codes
