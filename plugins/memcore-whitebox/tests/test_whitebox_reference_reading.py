"""memcore's observation files read by the WhiteBox reference parser's rules (reference notes 3-5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memcore
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry
from memcore.provider import ManyReferenceReading, ReferenceReading
from memcore_mcpmemory.provider import McpMemoryProvider
from memcore_whitebox._fences import decode_fences, encode_fences
from memcore_whitebox._parse import numbered, numbered_blocks
from memcore_whitebox.provider import WhiteBoxProvider
from memcore_whitebox.reference import (
    _BLOCK,
    ReferenceObservation,
    _matches,
    _regex_observations,
    reference_observations,
)

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples"
VAULT = SAMPLES / "whitebox" / "vault-example"


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    WhiteBoxProvider.init_store(str(root))
    return root


def _month_text(root: Path) -> str:
    (path,) = sorted((root / "observations").glob("*.md"))
    return path.read_text(encoding="utf-8")


def _fenced_sample_bodies() -> list[str]:
    """Every body in the authors' samples that holds a line starting with three backticks."""
    bodies: list[str] = []
    for url in (
        f"whitebox:{VAULT}",
        *(f"claudecode:{p.parent}" for p in sorted((SAMPLES / "claude-code-memory").rglob("CLAUDE.md"))),
        *(f"rightmemory:{p}" for p in sorted((SAMPLES / "rightmemory").glob("*.md"))),
    ):
        try:
            with memcore.open(url) as store:
                entries = list(store.iter_entries())
        except memcore.MemcoreError:
            continue
        bodies.extend(e.body for e in entries if any(line.startswith("```") for line in e.body.split("\n")))
    return bodies


def test_reference_rules_read_the_authors_example_observations_as_memcore_does() -> None:
    text = (VAULT / "observations" / "2026-04.md").read_text(encoding="utf-8")
    found = reference_observations(text)
    with WhiteBoxProvider(str(VAULT)) as store:
        ours = [e for e in store.iter_entries() if e.kind is Kind.OBSERVATION]
    assert [o.body for o in found] == [e.body for e in ours]
    assert [o.tags for o in found] == [e.tags for e in ours]
    assert [o.fields["source"] for o in found] == [e.source for e in ours]


def test_a_body_with_code_fences_keeps_every_later_block_readable_by_the_reference(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    body = "Setup:\n```bash\npip install x\n```\nThen run it."
    with WhiteBoxProvider(str(root)) as store:
        first = store.add(MemoryEntry(kind=Kind.OBSERVATION, body=body, source="claude"))
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body="The next observation.", source="claude"))
        assert store.get(first.id or "").body == body
    found = reference_observations(_month_text(root))
    assert [o.body for o in found] == ["Setup:\n~~~bash\npip install x\n~~~\nThen run it.", "The next observation."]


def test_encoding_leaves_no_line_starting_with_backticks_and_decodes_exactly() -> None:
    body = "a\n```python\nx = 1\n```\n````md\n```js\n~~~\n```\n````\n```inline``` code"
    encoded, changed = encode_fences(body)
    assert not any(line.startswith("```") for line in encoded.split("\n"))
    assert encoded.split("\n")[4] == "~~~~md"  # longer than the ~~~ content line it holds
    assert decode_fences(encoded, changed) == body
    assert encode_fences("no fences `here`") == ("no fences `here`", {})


def test_every_fenced_body_of_the_authors_samples_survives_the_reference_parser(tmp_path: Path) -> None:
    bodies = _fenced_sample_bodies()
    assert len(bodies) >= 5
    root = _vault(tmp_path)
    with WhiteBoxProvider(str(root)) as store:
        for body in bodies:
            store.add(MemoryEntry(kind=Kind.OBSERVATION, body=body, source="claude", created_at="2026-04-01"))
        ours = [e for e in store.iter_entries() if e.kind is Kind.OBSERVATION]
    assert [e.body for e in ours] == bodies
    found = reference_observations(_month_text(root))
    assert [o.body for o in found] == [encode_fences(b.strip())[0] for b in bodies]


def test_migration_report_names_quoted_values_and_fenced_bodies(tmp_path: Path) -> None:
    src = tmp_path / "src" / "memory.jsonl"
    McpMemoryProvider.init_store(str(src))
    with McpMemoryProvider(str(src)) as store:
        store.add(MemoryEntry(kind=Kind.OBSERVATION, title="fence", body="```\ncode\n```", source="claude"))
        store.add(MemoryEntry(kind=Kind.OBSERVATION, title="quoted", body="plain", source="chat: planning"))
        store.add(MemoryEntry(kind=Kind.OBSERVATION, title="plain", body="plain too", source="claude"))
    report = migrate(f"mcpmemory:{src}", f"whitebox:{tmp_path / 'vault'}", validate=False)
    notes = {e.title: [(n.field, n.kept, n.shown) for n in e.fidelity] for e in report.entries}
    assert notes["fence"] == [("body", "```\ncode\n```", "~~~\ncode\n~~~")]
    assert notes["quoted"] == [("source", "chat: planning", '"chat: planning"')]
    assert notes["plain"] == []
    assert report.counts["reads_differently"] == 2


def test_whitebox_provider_tells_what_its_reader_shows() -> None:
    assert issubclass(WhiteBoxProvider, ReferenceReading)
    assert issubclass(WhiteBoxProvider, ManyReferenceReading)


def test_notes_for_many_entries_are_the_notes_of_each_entry(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    with WhiteBoxProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body="```\ncode\n```", source="claude", created_at="2026-04-01"))
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body="plain", source="chat: planning", created_at="2026-04-02"))
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body="another month", source="a: b", created_at="2026-05-01"))
        store.add(MemoryEntry(kind=Kind.FACT, title="Identity", body="A stable fact."))
        entries = list(store.iter_entries())
        many = store.reference_reads_differently_many(entries)
        one_by_one = [store.reference_reads_differently(e) for e in entries]
    assert many == one_by_one
    shown = {e.id: [(n.field, n.shown) for n in notes] for e, notes in zip(entries, many, strict=True)}
    assert shown["observations/2026-04.md#1"] == [("body", "~~~\ncode\n~~~")]
    assert shown["observations/2026-04.md#2"] == [("source", '"chat: planning"')]
    assert shown["observations/2026-05.md#1"] == [("source", '"a: b"')]
    assert [notes for e, notes in zip(entries, many, strict=True) if e.kind is Kind.FACT] == [[]]


@pytest.mark.parametrize("line", ["```", "````md", "   ```x"])
def test_a_lone_fence_line_is_written_with_tildes(line: str) -> None:
    encoded, changed = encode_fences(line)
    assert "`" not in encoded
    assert decode_fences(encoded, changed) == line


@pytest.mark.parametrize(
    "text",
    [
        (VAULT / "observations" / "2026-04.md").read_text(encoding="utf-8"),
        # a chunk file: its own leading frontmatter is not counted
        "---\ngroup_id: obs-2026-04\npart: 2\n---\n\n```\n---\ndate: 2026-04-25\nsource: a\ntags: [x]\n"
        "confidence: medium\n---\n\nChunked.\n```\n",
        # a leading bare block that is an observation, prose and plain code between blocks
        "---\ndate: 2026-04-01\nsource: a\n---\nBare.\n\nprose\n\n```python\nx = 1\n```\n\n"
        "```\n---\ndate: 2026-04-02\nsource: b\n---\n\nFenced.\n```\n",
    ],
    ids=["authors-sample", "chunk-file", "bare-prose-code"],
)
def test_block_positions_are_numbered_as_the_reader_numbers_observations(text: str) -> None:
    assert [(n, blk.start) for n, blk in numbered_blocks(text)] == [
        (n, blk.start) for n, blk, _, _ in numbered(text, "observations/2026-04.md", None, None)
    ]
    assert len(list(numbered_blocks(text))) >= 1


# text made of what the reference's expressions turn on: backticks, line breaks, other white
# space (\s includes \v, \r, U+2028), ---, key: value lines, inline lists
_PIECES = ["```", "`", "\n", " ", "\t", "\v", "\r", "\u2028", "---", "-", "key", "kind", "tags", "_", ":", " x",
           "quote", "[", "]", ",", '"a"', "'b'", "\x07", "date: 2026-01-01", "\n---\n", "\n```\n"]  # fmt: skip
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def _dump(found: list[ReferenceObservation]) -> list[tuple[int, dict[str, str], list[str], str]]:
    return [(o.start, o.fields, o.tags, o.body) for o in found]


@settings(max_examples=800, deadline=None)
@given(_TEXTS)
def test_the_reference_scan_reads_what_the_reference_expressions_read(text: str) -> None:
    assert list(_matches(text)) == [(m.start(), m.group(1)) for m in _BLOCK.finditer(text)]
    assert _dump(reference_observations(text)) == _dump(_regex_observations(text))


@pytest.mark.parametrize(
    "text",
    [
        "```\n\n```",  # the greedy white space gives back its last line break: an empty group
        "```\n \n```x",
        "````\n---\na: 1\n---\nbody\n```",  # a match starting at the second backtick
        "```\n---\nkind: note\nkind: quote\ntags: [ 'x' , \"y\x07\" ,]\n---\n  body  \n```\n```\nrest",
        "```  \n---\nk:v\n---\n\n```\n```\n---\n---\n```",
        "no block ``` at all\n",
    ],
)
def test_the_reference_scan_matches_the_expressions_on_edge_cases(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _dump(reference_observations(text))
    monkeypatch.setenv("MEMCORE_WHITEBOX_REFERENCE_SCAN", "0")
    assert fast == _dump(reference_observations(text))
    assert list(_matches(text)) == [(m.start(), m.group(1)) for m in _BLOCK.finditer(text)]


def test_the_reference_scan_reads_the_authors_example_and_a_migrated_vault_as_the_expressions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _vault(tmp_path)
    with WhiteBoxProvider(str(root), as_user=True) as store:
        store.add_many(
            [
                MemoryEntry(kind=Kind.OBSERVATION, body=f"seen {n}\n```py\nx\n```\n", tags=["a", "b c"], source="s: q")
                for n in range(5)
            ]
        )
    texts = [p.read_text(encoding="utf-8") for p in sorted((VAULT / "observations").glob("*.md"))]
    texts.append(_month_text(root))
    for text in texts:
        found = _dump(reference_observations(text))
        assert found and found == _dump(_regex_observations(text))
    monkeypatch.setenv("MEMCORE_WHITEBOX_REFERENCE_SCAN", "0")
    assert _dump(reference_observations(texts[-1])) == _dump(_regex_observations(texts[-1]))
