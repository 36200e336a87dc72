"""Observations: reading both layouts, writing the reference writer's layout, append-only rules."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.errors import ParseError, UnsupportedOperationError
from memcore.models import Kind, MemoryEntry, Relation, Severity, Status, lf_body
from memcore_conformance.corpus import build_corpus
from memcore_whitebox.provider import WhiteBoxProvider


# A port of what the reference parser (whitebox-shared observation-parser.ts) does, to check
# that files memcore writes are read by the format's own code: fenced blocks found with one
# lazy regex, then `---` frontmatter, `key: value` lines with quotes kept, inline tag lists.
def reference_parse(text: str) -> list[dict[str, object]]:
    out = []
    for m in re.finditer(r"```\s*\n([\s\S]*?)\n```", text):
        fm = re.match(r"^---\n([\s\S]*?)\n---\n([\s\S]*)$", m.group(1))
        if fm is None:
            continue
        fields: dict[str, object] = {}
        for line in fm.group(1).split("\n"):
            kv = re.match(r"^([a-zA-Z_]+):\s*(.*)$", line)
            if kv is None:
                continue
            key, value = kv.group(1), kv.group(2).strip()
            if key == "tags":
                inner = value.removeprefix("[").removesuffix("]")
                fields[key] = [t.strip().strip('"').strip("'") for t in inner.split(",") if t.strip()]
            else:
                fields[key] = value
        fields["body"] = fm.group(2).strip()
        out.append(fields)
    return out


def obs(**kw: object) -> MemoryEntry:
    data: dict[str, object] = {
        "kind": Kind.OBSERVATION,
        "body": "Prefers short answers.",
        "source": "claude",
        "tags": ["preference"],
        "confidence": 0.7,
        "created_at": "2026-04-20",
        "date_only": True,
    }
    data.update(kw)
    return MemoryEntry(**data)  # type: ignore[arg-type]


def test_append_matches_the_reference_writer_byte_for_byte(vault: Path) -> None:
    month = vault / "observations" / "2026-04.md"
    original = month.read_bytes()
    with WhiteBoxProvider(str(vault)) as store:
        stored = store.add(obs())
        second = store.add(obs(body="Second one.", tags=["working-style", "relationship:alex"], confidence=0.5))
    assert stored.id == "observations/2026-04.md#2"
    assert second.id == "observations/2026-04.md#3"
    block = (
        '```\n---\ndate: 2026-04-20\nsource: claude\ntags: ["preference"]\nconfidence: high\n---\n\n'
        "Prefers short answers.\n```"
    )
    block2 = (
        '```\n---\ndate: 2026-04-20\nsource: claude\ntags: ["working-style", "relationship:alex"]\n'
        "confidence: medium\n---\n\nSecond one.\n```"
    )
    expected = original.decode().rstrip() + f"\n\n---\n\n{block}\n" + f"\n---\n\n{block2}\n"
    assert month.read_text(encoding="utf-8") == expected
    parsed = reference_parse(expected)
    assert [p["body"] for p in parsed][1:] == ["Prefers short answers.", "Second one."]
    assert parsed[2]["tags"] == ["working-style", "relationship:alex"]
    assert parsed[1]["confidence"] == "high" and parsed[1]["date"] == "2026-04-20"


def test_new_month_file_gets_the_reference_header(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        stored = store.add(obs(created_at="2026-05-02"))
    assert stored.id == "observations/2026-05.md#1"
    text = (vault / "observations" / "2026-05.md").read_text(encoding="utf-8")
    assert text.startswith(
        "# Observations \u2014 May 2026\n\nAppend-only. Each entry is one observation. "
        "Never edit another agent's entries.\n\n---\n\n```\n---\ndate: 2026-05-02\n"
    )
    assert text.endswith("Prefers short answers.\n```\n")
    assert len(reference_parse(text)) == 1


def test_appending_after_a_dangling_separator_or_no_final_newline(vault: Path) -> None:
    month = vault / "observations" / "2026-06.md"
    month.write_text("# Observations \u2014 June 2026\n\nOne observation per entry.\n\n---\n", encoding="utf-8")
    with WhiteBoxProvider(str(vault)) as store:
        assert store.add(obs(created_at="2026-06-01")).id == "observations/2026-06.md#1"
        text = month.read_text(encoding="utf-8")
        assert "\n---\n\n```\n---\ndate: 2026-06-01" in text and "---\n\n---" not in text
        month.write_text(text.rstrip("\n"), encoding="utf-8")
        assert store.add(obs(created_at="2026-06-02")).id == "observations/2026-06.md#2"
    text = month.read_text(encoding="utf-8")
    assert "Prefers short answers.\n```\n\n---\n\n```\n---\ndate: 2026-06-02" in text
    assert len(reference_parse(text)) == 2


def test_crlf_month_file_stays_crlf(vault: Path) -> None:
    month = vault / "observations" / "2026-04.md"
    month.write_bytes(month.read_bytes().replace(b"\n", b"\r\n"))
    with WhiteBoxProvider(str(vault)) as store:
        assert store.get("observations/2026-04.md#1").source == "claude-opus-4-7"
        store.add(obs())
        assert [e.id for e in store.iter_entries() if e.kind is Kind.OBSERVATION] == [
            "observations/2026-04.md#1",
            "observations/2026-04.md#2",
        ]
    data = month.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_observations_are_append_only(vault: Path) -> None:
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        before = {p: p.read_bytes() for p in vault.rglob("*.md")}
        entry = store.get("observations/2026-04.md#1")
        entry.body = "Edited."
        with pytest.raises(UnsupportedOperationError):
            store.update(entry)
        with pytest.raises(UnsupportedOperationError):
            store.delete(entry.id or "")
        assert {p: p.read_bytes() for p in vault.rglob("*.md")} == before


def test_every_entry_field_survives_an_observation_round_trip(vault: Path) -> None:
    given = MemoryEntry(
        kind=Kind.DECISION,
        title="Use fenced blocks",
        body="\nWe write fenced blocks.\n\n",
        status=Status.HELD,
        tags=["preference", "project:memcore"],
        confidence=0.42,
        source="KB: x",
        created_at=datetime(2026, 4, 21, 10, 30, 5, 123000, tzinfo=UTC),
        updated_at=datetime(2026, 4, 22, 8, 0, tzinfo=UTC),
        scope="work",
        relations=[
            Relation(type="supersedes", target="observations/2026-04.md#1"),
            Relation(type="related", target="Some Title", resolved=False),
        ],
        parent="projects/memcore.md",
        expires_at=datetime(2027, 1, 1, tzinfo=UTC),
        extra={
            "box": {"team": "core", "n": 3, "nested": {"no": "no", "list": [1, None, True]}},
            "whitebox": {
                "source_ref": "sources/talk.md",
                "context": "coding",
                "kind": "inference",
                "fields": {"mood": "calm"},
                "anything": {"deep": ["x"]},
            },
        },
    )
    with WhiteBoxProvider(str(vault)) as store:
        stored = store.add(given)
    with WhiteBoxProvider(str(vault)) as store:
        back = store.get(stored.id or "")
    expected = given.model_copy(update={"id": stored.id, "version": back.version})
    assert back.model_dump(mode="json") == expected.model_dump(mode="json")
    assert stored.model_dump(mode="json") == back.model_dump(mode="json")
    text = (vault / "observations" / "2026-04.md").read_text(encoding="utf-8")
    block = text.split("```\n---\n")[-1]
    lines = block.split("\n")
    # reference keys first, in the reference order; memcore's own keys after
    assert [ln.split(":")[0] for ln in lines[:10]] == [
        "date",
        "source",
        "tags",
        "confidence",
        "source_ref",
        "context",
        "kind",
        "title",
        "scope",
        "mood",
    ]
    assert lines[1] == 'source: "KB: x"'
    assert lines[10].startswith("memcore: {")
    ref = reference_parse(text)[-1]
    assert ref["source_ref"] == "sources/talk.md" and ref["kind"] == "inference" and ref["date"] == "2026-04-21"


@pytest.mark.parametrize("case", sorted(build_corpus(lambda **kw: MemoryEntry(**kw), "whitebox")))
def test_adversarial_corpus_round_trips_as_observations(vault: Path, case: str) -> None:
    corpus = build_corpus(
        lambda **kw: MemoryEntry(**{"kind": Kind.OBSERVATION, "title": "T", "body": "B\n", "tags": ["t"], **kw}),
        "whitebox",
    )
    given = corpus[case]
    with WhiteBoxProvider(str(vault)) as store:
        stored = store.add(given)
    with WhiteBoxProvider(str(vault)) as store:
        back = store.get(stored.id or "")
        assert [d for d in store.validate() if d.severity is Severity.ERROR] == []
    expected = lf_body(given)  # the monthly file's own line breaks
    for name in ("title", "body", "tags", "source", "kind", "confidence"):
        assert getattr(back, name) == getattr(expected, name), name
    for ns, values in given.extra.items():
        for key, value in values.items():
            assert back.extra[ns][key] == value


def test_reads_bare_blocks_as_the_spec_draws_them(vault: Path) -> None:
    (vault / "observations" / "2026-03.md").write_text(
        "# Observations \u2014 March 2026\n\n"
        "---\ndate: 2026-03-01\nsource: gpt-5\ntags: [health]\nconfidence: low\n---\n\n"
        "Slept badly before the demo.\n\n"
        '---\ndate: 2026-03-02\nsource: "gemini"\ntags:\n  - interest\n  - project:memcore\nconfidence: very-high\n'
        "context: weekend\n---\nAsked about file formats.\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault)) as store:
        entries = [e for e in store.iter_entries() if e.id and e.id.startswith("observations/2026-03")]
        diags = store.validate()
    assert [e.id for e in entries] == ["observations/2026-03.md#1", "observations/2026-03.md#2"]
    first, second = entries
    assert (first.source, first.tags, first.confidence, first.body) == (
        "gpt-5",
        ["health"],
        0.3,
        "Slept badly before the demo.",
    )
    assert first.extra == {"whitebox": {"layout": "bare"}}
    assert (second.source, second.tags, second.confidence) == ("gemini", ["interest", "project:memcore"], 0.9)
    assert second.extra["whitebox"]["context"] == "weekend"
    assert second.body == "Asked about file formats."
    codes = {(d.code, d.line) for d in diags if d.path == "observations/2026-03.md"}
    assert ("wb.bare-block", 3) in codes
    assert [d for d in diags if d.severity is Severity.ERROR] == []


def test_bodies_with_fenced_code_are_read_whole(vault: Path) -> None:
    body = "Shared a snippet:\n\n```python\nprint('hi')\n```\n\nAnd liked it."
    with WhiteBoxProvider(str(vault)) as store:
        stored = store.add(obs(body=body))
        assert store.get(stored.id or "").body == body
    text = (vault / "observations" / "2026-04.md").read_text(encoding="utf-8")
    # the code fence is written with tildes so the reference parser reads the whole body
    assert "\n```\n---\ndate: 2026-04-20" in text
    assert text.endswith("Shared a snippet:\n\n~~~python\nprint('hi')\n~~~\n\nAnd liked it.\n```\n")
    # hand-written: a three-backtick fence whose body holds fenced code with an info string
    (vault / "observations" / "2026-02.md").write_text(
        "# Observations\n\n```\n---\ndate: 2026-02-01\nsource: a\ntags: [x]\nconfidence: low\n---\n\n"
        "Before\n```sh\nls\n```\nAfter\n```\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault)) as store:
        assert store.get("observations/2026-02.md#1").body == "Before\n```sh\nls\n```\nAfter"


def test_validate_reports_file_and_line(vault: Path) -> None:
    (vault / "observations" / "2026-01.md").write_text(
        "# Observations\n"  # 1
        "\n"  # 2
        "```\n"  # 3
        "no frontmatter here\n"  # 4
        "```\n"  # 5
        "\n---\n\n"  # 6-8
        "```\n"  # 9
        "---\n"  # 10
        "date: 2026-02-03\n"  # 11
        "tags: [preference, made-up-tag]\n"  # 12
        "confidence: somewhat\n"  # 13
        "---\n"  # 14
        "\nBody one.\n"  # 15-16
        "```\n"  # 17
        "\n---\n\n"  # 18-20
        "```\n"  # 21
        "---\n"  # 22
        "source: x: y\n"  # 23
        "tags: [correction]\n"  # 24
        "---\n"  # 25
        "Body two.\n"  # 26
        "```\n"  # 27
        "\n```\n---\ndate: 2026-01-09\n",  # 28-31: never closed
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault)) as store:
        found = {(d.code, d.line, d.severity.value) for d in store.validate() if d.path == "observations/2026-01.md"}
        entries = [e for e in store.iter_entries() if e.id and e.id.startswith("observations/2026-01")]
    assert ("wb.block-malformed", 3, "error") in found
    assert ("wb.wrong-month", 11, "error") in found
    assert ("wb.missing-source", 9, "error") in found
    assert ("wb.unknown-confidence", 13, "error") in found
    assert ("wb.unregistered-tag", 12, "warning") in found
    assert ("wb.missing-date", 21, "error") in found
    assert ("wb.yaml", 23, "warning") in found
    assert ("wb.missing-confidence", 21, "warning") in found
    assert ("wb.block-malformed", 29, "error") in found
    assert [e.id for e in entries] == ["observations/2026-01.md#1", "observations/2026-01.md#2"]
    one, two = entries
    assert one.confidence is None and one.extra["whitebox"]["confidence_label"] == "somewhat"
    assert two.source == "x: y"  # the reference parser's line rule when YAML fails
    with WhiteBoxProvider(str(vault)) as store, pytest.raises(ParseError):
        store.add(obs(created_at="2026-01-10"))  # never append after an unterminated fence


def test_confidence_spellings_are_read_and_written_back_as_they_were(vault: Path) -> None:
    (vault / "observations" / "2026-04.md").write_text(
        "```\n---\ndate: 2026-04-01\nsource: a\ntags: [preference]\nconfidence: Very_High\n---\n\nOne.\n```\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault)) as store:
        entry = store.get("observations/2026-04.md#1")
        assert entry.confidence == 0.9 and entry.extra["whitebox"]["confidence_label"] == "Very_High"
        assert [d.code for d in store.validate() if d.path == "observations/2026-04.md"] == ["wb.confidence-spelling"]
        stored = store.add(entry.model_copy(update={"id": None}))
        changed = store.add(entry.model_copy(update={"id": None, "confidence": 0.3}))
    text = (vault / "observations" / "2026-04.md").read_text(encoding="utf-8")
    blocks = text.split("```\n---\n")
    assert "confidence: Very_High\n" in blocks[2] and "confidence: low\n" in blocks[3]
    assert stored.confidence == 0.9 and changed.confidence == 0.3


def test_chunk_file_frontmatter_is_kept_not_counted(vault: Path) -> None:
    (vault / "observations" / "2026-04-part-2.md").write_text(
        "---\ngroup_id: obs-2026-04\npart: 2\n---\n\n```\n---\ndate: 2026-04-25\nsource: a\ntags: [x]\n"
        "confidence: medium\n---\n\nChunked.\n```\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault)) as store:
        entry = store.get("observations/2026-04-part-2.md#1")
    assert entry.body == "Chunked."
    assert entry.extra["whitebox"]["file"] == {"group_id": "obs-2026-04", "part": 2}
