"""WhiteBox batch() and read_all(): same bytes as one add at a time, one pass to read.

batch() keeps each monthly file's block count and tail in memory and writes each file once;
the files must come out byte for byte as the same adds made one by one, the entries add()
returned must be what get() reads back, and read_all() must equal iter_entries() + validate().
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.errors import ConflictError, InvalidEntryError, ParseError
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import read_all
from memcore_whitebox.provider import WhiteBoxProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples"
SAMPLE_VAULT = SAMPLES / "whitebox" / "vault-example"
EXAMPLE_VAULT = Path(__file__).resolve().parents[3] / "examples" / "whitebox-vault"
START = datetime(2026, 3, 30, 9, 0, tzinfo=UTC)

# What a vault may already hold before memcore appends: the cases the append logic treats
# differently (file name -> bytes).
SEEDED = {
    # a month file with CRLF line endings and no final newline
    "observations/2026-03.md": (
        b"# Observations \xe2\x80\x94 March 2026\r\n\r\n---\r\n\r\n```\r\n---\r\ndate: 2026-03-01\r\n"
        b"source: hand\r\ntags: [a]\r\nconfidence: low\r\n---\r\n\r\nBy hand.\r\n```"
    ),
    # blank lines only: rewritten whole by the first add
    "observations/2026-04.md": b"\n\n",
    # ends with a bare block whose frontmatter is never closed: the first record's "---"
    # separator closes it, so the new block is N=2, not 1
    "observations/2026-05.md": b"# Observations\n\n---\ndate: 2026-05-01\nsource: hand\n\nnot closed\n",
    # ends with a dangling "---" separator
    "observations/2026-06.md": b"# Observations\n\n---\n\n```\n---\ndate: 2026-06-01\nsource: x\n---\n\nb\n```\n\n---\n",
}


def _entries(n: int) -> list[MemoryEntry]:
    out = []
    for i in range(n):
        kind = (Kind.OBSERVATION, Kind.FACT, Kind.DECISION, Kind.NOTE)[i % 4]
        out.append(
            MemoryEntry(
                kind=kind,
                title="" if kind is Kind.OBSERVATION else f"Item {i}",
                body=f"Entry {i}: what was learnt.\n" + ("```python\nx = 1\n```\n" if i % 9 == 5 else ""),
                tags=[f"topic-{i % 5}", "bench"] + ([f"rel:<name{i % 2}>", "rel:alex"] if i % 11 == 0 else []),
                confidence=(0.3, 0.5, 0.7, 0.9, 0.55)[i % 5],
                source=("agent-a", "agent-b", None)[i % 3],
                created_at=START + timedelta(days=i, hours=i % 5),
                date_only=kind is Kind.OBSERVATION,
                relations=[Relation(type="related", target="identity.md")] if i % 7 == 3 else [],
            )
        )
    return out


def _vault(root: Path) -> Path:
    WhiteBoxProvider.init_store(str(root))
    for rel, data in SEEDED.items():
        (root / rel).write_bytes(data)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _dumps(entries: list[MemoryEntry]) -> list[dict[str, object]]:
    return [e.model_dump() for e in entries]


def test_batch_writes_the_same_bytes_as_one_add_at_a_time(tmp_path: Path) -> None:
    """80 adds over monthly files seeded oddly (and a new one) and stable facts: same files and entries."""
    entries = _entries(80)
    one, cached, many = (_vault(tmp_path / name) for name in ("one", "cached", "batch"))
    single = []
    for entry in entries:  # a fresh provider per add: every add scans the file (the reference)
        with WhiteBoxProvider(one).open() as store:
            single.append(store.add(entry))
    with WhiteBoxProvider(cached).open() as store:  # one provider: adds reuse what it knows
        kept = [store.add(e) for e in entries]
    with WhiteBoxProvider(many).open() as store, store.batch():
        batched = [store.add(e) for e in entries]
    assert _files(cached) == _files(one)
    assert _files(many) == _files(one)
    assert _dumps(kept) == _dumps(single)
    assert _dumps(batched) == _dumps(single)
    ids = [e.id for e in batched if e.id and "#" in e.id]
    assert {i.split("#")[0] for i in ids} >= {f"observations/2026-0{m}.md" for m in range(3, 7)}
    assert "observations/2026-05.md#2" in ids and "observations/2026-05.md#1" not in ids
    # what add() returned is what a fresh reader gets back
    reader = WhiteBoxProvider(many).open()
    for entry in batched:
        assert entry.id is not None
        assert reader.get(entry.id).model_dump() == entry.model_dump()
    assert "rel:<name0>" in (many / "tags.md").read_text(encoding="utf-8")


def test_a_raising_block_writes_what_was_acknowledged(tmp_path: Path) -> None:
    """An exception inside batch(): the adds before it are on disk, as if made one by one."""
    entries = _entries(30)
    one = _vault(tmp_path / "one")
    many = _vault(tmp_path / "batch")
    with WhiteBoxProvider(one).open() as store:
        single = [store.add(e) for e in entries[:17]]
    batched: list[MemoryEntry] = []
    with pytest.raises(RuntimeError, match="stop"), WhiteBoxProvider(many).open() as store, store.batch():
        for entry in entries[:17]:
            batched.append(store.add(entry))
        raise RuntimeError("stop")
    assert _files(many) == _files(one)
    assert _dumps(batched) == _dumps(single)


def test_reads_inside_a_batch_see_its_writes(tmp_path: Path) -> None:
    """get, iter_entries, validate and read_all inside the block see the pending adds."""
    root = _vault(tmp_path / "v")
    store = WhiteBoxProvider(root).open()
    with store.batch():
        first = store.add(_entries(1)[0])
        assert first.id is not None
        assert store.get(first.id).model_dump() == first.model_dump()
        second = store.add(_entries(5)[4])  # the same month file, after a read
        snapshot = store.read_all()
        assert [e.id for e in snapshot.entries] == [e.id for e in store.iter_entries()]
        assert second.id in {e.id for e in snapshot.entries}
        assert "topic-4" in (root / "tags.md").read_text(encoding="utf-8")
    assert WhiteBoxProvider(root).open().get(second.id or "").model_dump() == second.model_dump()


def test_nested_batch_and_read_only(tmp_path: Path) -> None:
    """A nested block is plain (the outer one writes); a read-only store's block is plain."""
    root = _vault(tmp_path / "v")
    store = WhiteBoxProvider(root).open()
    before = _files(root)
    with store.batch():
        with store.batch():
            added = store.add(_entries(1)[0])
        assert _files(root) == before  # still pending: the outer block writes
    assert WhiteBoxProvider(root).open().get(added.id or "").body == added.body
    reader = WhiteBoxProvider(root, read_only=True).open()
    with reader.batch():
        assert reader.get(added.id or "").body == added.body


def test_a_file_changed_by_someone_else_is_scanned_again(tmp_path: Path) -> None:
    """Between two adds another tool appends a block: the next id counts it."""
    root = _vault(tmp_path / "v")
    store = WhiteBoxProvider(root).open()
    obs = MemoryEntry(kind=Kind.OBSERVATION, body="one", source="a", created_at=START, date_only=True)
    first = store.add(obs)
    assert first.id == "observations/2026-03.md#2"
    with (root / "observations/2026-03.md").open("ab") as fh:
        fh.write(
            b"\r\n---\r\n\r\n```\r\n---\r\ndate: 2026-03-30\r\nsource: other\r\ntags: []\r\n---\r\n\r\nx\r\n```\r\n"
        )
    second = store.add(obs.model_copy(update={"body": "two"}))
    assert second.id == "observations/2026-03.md#4"
    assert WhiteBoxProvider(root).open().get("observations/2026-03.md#4").body == "two"


def test_unterminated_fence_at_the_end_is_refused(tmp_path: Path) -> None:
    """A month file ending inside an open fence gets nothing appended (as before)."""
    root = _vault(tmp_path / "v")
    path = root / "observations" / "2026-03.md"
    path.write_bytes(b"# Observations\n\n```\n---\ndate: 2026-03-01\nsource: x\n---\n\nopen\n")
    store = WhiteBoxProvider(root).open()
    obs = MemoryEntry(kind=Kind.OBSERVATION, body="one", source="a", created_at=START, date_only=True)
    with pytest.raises(ParseError):
        store.add(obs)
    with pytest.raises(ParseError), store.batch():
        store.add(obs)
    assert path.read_bytes().endswith(b"open\n")


def test_body_with_an_unclosed_code_fence_is_written_with_a_tilde_fence(tmp_path: Path) -> None:
    """The fence is written with tildes (memcore_whitebox._fences), so the block's closing fence still closes it."""
    root = _vault(tmp_path / "v")
    store = WhiteBoxProvider(root).open()
    body = "```python\nprint(1)"
    added = store.add(MemoryEntry(kind=Kind.OBSERVATION, body=body, source="x", created_at=START))
    assert store.get(added.id or "").body == body
    month = root / (added.id or "").partition("#")[0]
    assert "\n~~~python\nprint(1)\n```" in month.read_text(encoding="utf-8")


@pytest.mark.parametrize("vault", [SAMPLE_VAULT, EXAMPLE_VAULT], ids=["authors-sample", "example"])
def test_read_all_equals_iter_entries_plus_validate(vault: Path, tmp_path: Path) -> None:
    """On the authors' sample vault and the project's example vault (scoped too)."""
    if not vault.is_dir():
        pytest.skip("vault not present")
    root = tmp_path / "v"
    shutil.copytree(vault, root, symlinks=True)
    scopes = [None]
    store = WhiteBoxProvider(root).open()
    scopes += sorted(store.scopes.scopes)
    for scope in scopes:
        reader = WhiteBoxProvider(root, scope=scope).open() if scope else WhiteBoxProvider(root).open()
        snapshot = read_all(reader)
        assert _dumps(snapshot.entries) == _dumps(list(reader.iter_entries()))
        assert snapshot.diagnostics == reader.validate()
        if scope is None:
            assert snapshot.entries


def test_plan_ids_are_the_ids_add_gives(tmp_path: Path) -> None:
    """plan_ids() over oddly seeded monthly files, colliding fact titles and refused entries."""
    entries = _entries(80)
    # a fact whose slug is taken twice over, an entry add() refuses (a tag tags.md cannot
    # hold) and a proposal: the refused one gets None and takes no number
    entries[10:10] = [
        MemoryEntry(kind=Kind.FACT, title="Item 1", body="Same title as entry 1."),
        MemoryEntry(kind=Kind.OBSERVATION, body="Refused.", tags=["bad`tag"], created_at=START),
        MemoryEntry(
            kind=Kind.PROPOSAL,
            title="Why",
            body="New text.",
            relations=[Relation(type="proposes", target="identity.md")],
        ),
    ]
    vault = _vault(tmp_path / "v")
    before = _files(vault)
    with WhiteBoxProvider(vault).open() as store:
        planned = store.plan_ids(entries)
        assert _files(vault) == before  # nothing written
        assert planned[11] is None and planned[12] is None
        assert "observations/2026-05.md#2" in planned  # the unclosed bare block counted as the reader counts
        stored: list[str | None] = []
        with store.batch():
            for entry in entries:
                try:
                    stored.append(store.add(entry).id)
                except InvalidEntryError:
                    stored.append(None)
    assert stored[11] is None
    assert [p for p in planned if p is not None] == [s for p, s in zip(planned, stored, strict=True) if p is not None]
    assert "item-1-2.md" in planned  # the second "Item 1" fact


def test_plan_ids_inside_a_batch_continue_its_numbering(tmp_path: Path) -> None:
    """Planned in an open batch (records pending, not on disk): the numbers follow the pending ones."""
    entries = _entries(40)
    vault = _vault(tmp_path / "v")
    with WhiteBoxProvider(vault).open() as store, store.batch():
        first = [store.add(e).id for e in entries[:20]]
        planned = store.plan_ids(entries[20:])
        rest = [store.add(e).id for e in entries[20:]]
    assert planned == rest
    assert len(set(first) | set(rest)) == 40


@pytest.mark.parametrize("month", ["2026-03", "2026-04"])  # appended to; blank-only (rewritten whole)
def test_a_file_another_writer_changes_during_a_batch_is_not_written(tmp_path: Path, month: str) -> None:
    """The reference tool does not take memcore's lock: its block must survive, memcore's ids must not lie."""
    vault = _vault(tmp_path / "v")
    path = vault / "observations" / f"{month}.md"
    day = datetime.fromisoformat(f"{month}-10T09:00:00+00:00")
    other = b"\n---\n\n```\n---\ndate: " + f"{month}-11".encode() + b"\nsource: other\ntags: []\n---\n\nTheirs.\n```\n"
    with pytest.raises(ConflictError, match=r"changed while memcore was adding to it.*2 observation\(s\)"):
        with WhiteBoxProvider(vault).open() as store, store.batch():
            for n in range(2):
                store.add(MemoryEntry(kind=Kind.OBSERVATION, body=f"Mine {n}.", created_at=day, date_only=True))
            with path.open("ab") as fh:
                fh.write(other)
    text = path.read_bytes()
    assert text.endswith(other) and b"Mine" not in text


def test_facts_named_like_vault_files_get_another_name(tmp_path: Path) -> None:
    """A fact titled "Tags" or "Scopes" is not tags.md / scopes.md (planned and written alike)."""
    vault = _vault(tmp_path / "v")
    registry = (vault / "tags.md").read_bytes()
    facts = [MemoryEntry(kind=Kind.FACT, title=t, body=f"About {t}.") for t in ("Tags", "Scopes", "Promotion")]
    with WhiteBoxProvider(vault).open() as store:
        planned = store.plan_ids(facts)
        written = [store.add(f).id for f in facts]
    assert planned == written == ["tags-fact.md", "scopes-fact.md", "promotion-fact.md"]
    assert (vault / "tags.md").read_bytes() == registry


def test_a_fact_of_another_scope_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """With an active scope, a fact scoped elsewhere would be written where the session cannot read it."""
    from memcore_whitebox.provider import OutOfScopeError

    vault = _vault(tmp_path / "v")
    (vault / "scopes.md").write_text(
        "# Scopes\n\n- `home` \u2014 root files, relationships\n- `work` \u2014 projects, observations\n",
        encoding="utf-8",
    )
    before = _files(vault)
    fact = MemoryEntry(kind=Kind.FACT, title="Alex", body="Works here.", scope="work")
    with WhiteBoxProvider(vault, scope="home").open() as store:
        assert store.plan_ids([fact]) == [None]
        with pytest.raises(OutOfScopeError, match="nothing written"):
            store.add(fact)
    assert _files(vault) == before


@pytest.mark.parametrize(
    ("path", "why"),
    [("notes.txt", r"is a \.md file"), (".git/x.md", "hidden"), ("node_modules/y.md", "node_modules/ folder")],
)
def test_a_fact_path_the_reader_never_reads_is_refused(tmp_path: Path, path: str, why: str) -> None:
    vault = _vault(tmp_path / "v")
    before = _files(vault)
    fact = MemoryEntry(kind=Kind.FACT, title="Hidden", body="x", extra={"whitebox": {"path": path}})
    with WhiteBoxProvider(vault).open() as store:
        assert store.plan_ids([fact]) == [None]
        with pytest.raises(InvalidEntryError, match=why):
            store.add(fact)
    assert _files(vault) == before


@pytest.mark.parametrize("kind", [Kind.OBSERVATION, Kind.FACT])
@pytest.mark.parametrize("body", ["line one\r\nline two\r\n", "a\rb", "x\r\n\r\n```\r\ncode\r\n```\r\n"])
def test_carriage_returns_in_a_body_are_written_as_the_files_line_breaks(tmp_path: Path, kind: Kind, body: str) -> None:
    """add() returns what a read gives: the body with LF (an observation kept a stray CR before)."""
    vault = _vault(tmp_path / "v")
    with WhiteBoxProvider(vault).open() as store:
        stored = store.add(MemoryEntry(kind=kind, title="T", body=body, created_at=START))
    assert "\r" not in stored.body
    assert stored.body.strip() == body.replace("\r\n", "\n").replace("\r", "\n").strip()
    with WhiteBoxProvider(vault).open() as store:
        assert store.get(stored.id or "").model_dump() == stored.model_dump()
