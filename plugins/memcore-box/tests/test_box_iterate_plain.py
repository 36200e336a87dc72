"""Iterating maps memcore's own files from their lines: the same entries as the general parse and mapping.

:func:`memcore_box._scan.flat_meta` gives ``read_meta``'s ``(frontmatter, body)`` or declines;
:func:`memcore_box.codec.entry_from_plain` gives ``entry_from_meta``'s entry (equal fields, the
same fields set) or declines; iterating a workspace with these fast paths on and off
(``MEMCORE_BOX_STREAM_FAST=0``, ``MEMCORE_BULK_READ=0``) gives the same entries, versions and
order: files memcore wrote with every field, hand-edited files, the authors' samples.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.storage import BULK_READ_ENV
from memcore_box import _scan
from memcore_box import _stream as box_stream
from memcore_box._parse import read_meta
from memcore_box.codec import entry_from_meta, entry_from_plain
from memcore_box.index import _Titles
from memcore_box.provider import BoxMemoryProvider

SAMPLES = Path("/work/shared/samples/box-memory")
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WRITTEN = (
    b"---\nid: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG\nslug: memo-1-a-mobile-because\ntitle: memo 1 a mobile because\n"
    b"kind: decision\nstatus: active\nteam: default\nagent: bench-agent\ncreated_at: 2026-12-02T18:37:49.938Z\n"
    b"updated_at: 2026-12-02T18:37:49.938Z\nconfidence: 0.5\ntags: [finance]\n---\n\n# memo 1\n\nBody.\n"
)

EDITS = [
    (b"", b""),
    (b"title: memo 1 a mobile because", b"title: the tokens"),
    (b"title: memo 1 a mobile because", b"title: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG"),  # untitled spelling
    (b"title: memo 1 a mobile because", b"title: true"),
    (b"title: memo 1 a mobile because", b"title: 12"),
    (b"title: memo 1 a mobile because", b"title: 'quoted: text'"),
    (b"title: memo 1 a mobile because\n", b""),
    (b"slug: memo-1-a-mobile-because\n", b""),
    (b"slug: memo-1-a-mobile-because", b"slug: 5"),
    (b"team: default", b"team: [a, b]"),
    (b"agent: bench-agent", b"agent: null"),
    (b"kind: decision", b"kind: essay"),
    (b"kind: decision", b"kind: companion"),
    (b"status: active", b"status: done"),
    (b"status: active", b"status: held"),
    (b"status: active\n", b""),
    (b"created_at: 2026-12-02T18:37:49.938Z\n", b""),
    (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: yesterday"),
    (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 2026-12-02"),
    (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 2026-02-30T00:00:00Z"),
    (b"updated_at: 2026-12-02T18:37:49.938Z", b"updated_at: tomorrow"),
    (b"updated_at: 2026-12-02T18:37:49.938Z", b"updated_at: 2026-12-03"),
    (b"updated_at: 2026-12-02T18:37:49.938Z", b"updated_at: 2026-12-03T01:02:03Z\nexpires_at: 2027-01-01T00:00:00Z"),
    (b"confidence: 0.5", b"confidence: 1"),
    (b"confidence: 0.5", b"confidence: 0"),
    (b"confidence: 0.5", b"confidence: 1.5"),
    (b"confidence: 0.5", b"confidence: high"),
    (b"confidence: 0.5", b"confidence: true"),
    (b"tags: [finance]", b"tags: []"),
    (b"tags: [finance]", b"tags: [finance, null, true, 0.5]"),
    (b"tags: [finance]", b"tags: finance"),
    (b"tags: [finance]", b"tags: ['a b', \"c\"]"),
    (b"tags: [finance]", b'related: ["[[memo 1 a mobile because]]", "[[Nowhere]]", "[[Other|alias]]"]'),
    (b"tags: [finance]", b'related: "[[Other]]"'),
    (b"tags: [finance]", b"related: [Other, 5]"),
    (b"tags: [finance]", b"supersedes: [mem_OTHER, mem_GONE]"),
    (b"tags: [finance]", b"supersedes: mem_OTHER"),
    (b"tags: [finance]", b"supersedes: []"),
    (b"tags: [finance]", b"superseded_by: mem_OTHER"),
    (b"tags: [finance]", b"superseded_by: 7"),
    (b"tags: [finance]", b"companion_for: x"),
    (b"tags: [finance]", b"links: [a]"),
    (b"tags: [finance]", b"custom: value"),
    (b"tags: [finance]", b"memcore: x"),
    (b"tags: [finance]", b"memcore:\n  date_only: true"),
    (b"tags: [finance]", b"memcore:\n  date_only: false"),
    (b"tags: [finance]", b"memcore:\n  date_only: yes"),
    (b"tags: [finance]", b"memcore: {}"),
    (b"tags: [finance]", b"memcore:\n  kind: preference"),
    (b"tags: [finance]", b"memcore:\n  kind: fact"),
    (b"tags: [finance]", b"memcore:\n  kind: 5"),
    (b"tags: [finance]", b"memcore:\n  status: superseded"),
    (b"tags: [finance]", b"memcore:\n  status: archived"),
    (b"tags: [finance]", b"memcore:\n  status: [a]"),
    (b"tags: [finance]", b"memcore:\n  title: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG"),
    (b"tags: [finance]", b"memcore:\n  parent: mem_OTHER"),
    (b"tags: [finance]", b"memcore:\n  extra:\n    x:\n      a: 1"),
    (b"tags: [finance]", b"memcore:\n  unknown: 1"),
    (b"kind: decision\n", b"kind: fact\n"),
    (b"id: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", b"id: mem_short"),
    (b"id: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", b"id: 12"),
    (b"id: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG\n", b""),
    (b"\n# memo 1\n\nBody.\n", b"caf\xc3\xa9 \xe2\x80\x94 body\n"),
    (b"\n# memo 1\n\nBody.\n", b"bad \xff\n"),
    (b"\n# memo 1\n\nBody.\n", b"crlf\r\nbody\r\n"),
    (b"\n# memo 1\n\nBody.\n", b""),
    (b"\n---\n\n# memo 1", b"\n...\n\n# memo 1"),
    (b"status: active", b"status: active # comment"),
    (b"status: active", b"# comment\nstatus: active"),
    (b"status: active", b"title: twice"),
    (b"---\nid:", b"\xef\xbb\xbf---\nid:"),
]


def _titles() -> _Titles:
    titles = _Titles()
    titles.add({"id": "mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", "title": "memo 1 a mobile because"})
    titles.add({"id": "mem_OTHER", "title": "Other"})
    return titles


def _same_entry(a: MemoryEntry, b: MemoryEntry) -> None:
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert a.model_dump(mode="json") == b.model_dump(mode="json")
    assert list(a.__dict__) == list(b.__dict__)


def _check(data: bytes) -> tuple[bool, bool]:
    """Check both fast steps against the general ones on ``data``; return whether each answered."""
    general = read_meta("memories/x.md", data)
    flat = _scan.flat_meta(data)
    if flat is not None:
        assert general is not None and flat == general and type(flat[0]) is type(general[0]) is dict
        assert list(flat[0]) == list(general[0])
    if _scan.order_keys(data) is not None:
        assert _scan.flat_meta(data, checked=True) == flat
    mapped = False
    if general is not None:
        titles = _titles()
        meta, body = general
        plain = entry_from_plain(dict(meta), body, version="v1", resolve=titles.resolve, is_known_id=titles.known)
        if plain is not None:
            mapped = True
            reference, _ = entry_from_meta(
                meta, body, path="memories/x.md", version="v1", resolve=titles.resolve, is_known_id=titles.known
            )
            _same_entry(plain, reference)
    return flat is not None, mapped


def test_what_memcore_writes_is_read_and_mapped_from_its_lines() -> None:
    assert _check(WRITTEN) == (True, True)
    meta, body = _scan.flat_meta(WRITTEN) or ({}, "")
    titles = _titles()
    entry = entry_from_plain(meta, body, version="v1", resolve=titles.resolve, is_known_id=titles.known)
    assert entry is not None
    assert (entry.id, entry.title, entry.kind, entry.status, entry.scope, entry.source) == (
        "mem_01M8W0RWZJ4HT06TZG9WX1Z4HG",
        "memo 1 a mobile because",
        Kind.DECISION,
        Status.ACTIVE,
        "default",
        "bench-agent",
    )
    assert entry.created_at == datetime(2026, 12, 2, 18, 37, 49, 938000, tzinfo=UTC)
    assert (entry.confidence, entry.tags, entry.extra, entry.body) == (
        0.5,
        ["finance"],
        {"box": {"slug": "memo-1-a-mobile-because"}},
        "\n# memo 1\n\nBody.\n",
    )


@pytest.mark.parametrize(("old", "new"), EDITS)
def test_hand_edited_files_are_read_and_mapped_alike_or_declined(old: bytes, new: bytes) -> None:
    assert old in WRITTEN
    _check(WRITTEN.replace(old, new, 1))


@pytest.mark.parametrize(
    "new",
    [
        b'related: ["[[memo 1 a mobile because]]", "[[Nowhere]]"]',
        b"supersedes: [mem_OTHER, mem_GONE]",
        b"superseded_by: mem_OTHER",
        b"tags: [a]\nexpires_at: 2027-01-01T00:00:00Z",
    ],
)
def test_relations_and_optional_fields_are_mapped_on_the_fast_path(new: bytes) -> None:
    assert _check(WRITTEN.replace(b"tags: [finance]", new, 1)) == (True, True)


@pytest.mark.parametrize(
    ("kind", "memcore", "want"),
    [
        (b"observation", b"memcore:\n  date_only: true", (Kind.OBSERVATION, Status.ACTIVE, True)),
        (b"fact", b"memcore:\n  kind: preference", (Kind.PREFERENCE, Status.ACTIVE, False)),
        (b"decision", b"memcore:\n  kind: preference", (Kind.DECISION, Status.ACTIVE, False)),
        (b"decision", b"memcore:\n  status: superseded\n  date_only: true", (Kind.DECISION, Status.ACTIVE, True)),
    ],
)
def test_the_memcore_block_memcore_writes_is_mapped_on_the_fast_path(
    kind: bytes, memcore: bytes, want: tuple[Kind, Status, bool]
) -> None:
    data = WRITTEN.replace(b"kind: decision", b"kind: " + kind, 1).replace(b"tags: [finance]", memcore, 1)
    assert _check(data) == (False, True)  # nested lines: not flat, but mapped without entry_from_meta
    meta, body = read_meta("memories/x.md", data) or ({}, "")
    titles = _titles()
    entry = entry_from_plain(dict(meta), body, version="v1", resolve=titles.resolve, is_known_id=titles.known)
    assert entry is not None
    assert (entry.kind, entry.status, entry.date_only) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"kind: decision", b"kind: essay"),  # reported: read as a note, the text kept in extra
        (b"status: active", b"status: done"),
        (b"tags: [finance]", b"custom: value"),  # a key of its own: kept in extra
        (b"confidence: 0.5", b"confidence: 1.5"),
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 2026-12-02"),  # date_only
        (b"title: memo 1 a mobile because", b"title: 12"),
    ],
)
def test_what_the_fast_path_declines_is_left_to_the_general_one(old: bytes, new: bytes) -> None:
    assert _check(WRITTEN.replace(old, new, 1))[1] is False


KEYS = [b"id", b"kind", b"title", b"slug", b"status", b"team", b"created_at", b"updated_at", b"expires_at"]
KEYS += [b"confidence", b"tags", b"related", b"supersedes", b"superseded_by", b"x"]
values = st.one_of(
    st.sampled_from(
        [
            b"mem_A",
            b"note",
            b"active",
            b"2026-01-01T00:00:00Z",
            b"2026-01-01",
            b"[a, b]",
            b"[]",
            b"null",
            b"0.5",
            b"1",
            b'"[[T]]"',
            b"[mem_A, x]",
        ]
    ),
    st.text(alphabet="aZtf_ !$'()*+-./09;<=>?@\\^`|~\"#:,[]{}", max_size=12).map(str.encode),
)
lines = st.lists(
    st.builds(
        lambda k, v: k + b": " + v,
        st.sampled_from(KEYS),
        values,
    ),
    min_size=1,
    max_size=9,
)


@SETTINGS
@given(rows=lines, body=st.sampled_from([b"body\n", b"", b"\xc3\xa9\n", b"\xff", b"x\r\ny"]))
def test_generated_files_are_read_and_mapped_alike_or_declined(rows: list[bytes], body: bytes) -> None:
    _check(b"---\nid: mem_A\nkind: note\n" + b"\n".join(rows) + b"\n---\n" + body)


def test_the_real_samples_are_read_and_mapped_alike_or_declined() -> None:
    files = sorted(SAMPLES.rglob("*.md")) if SAMPLES.is_dir() else []
    for path in files:
        _check(path.read_bytes())


# -- iterating with the fast paths on and off -----------------------------------------------


def _entries() -> list[MemoryEntry]:
    rel = Relation(type="related", target="mem_01AAAAAAAAAAAAAAAAAAAAAAAA", resolved=True)
    return [
        MemoryEntry(id="mem_01AAAAAAAAAAAAAAAAAAAAAAAA", kind=Kind.DECISION, title="Tokens", body="Stateless.\n"),
        MemoryEntry(kind=Kind.TASK, title="Rotate keys", body="Monthly.\n", scope="default", tags=[]),
        MemoryEntry(kind=Kind.FACT, title="the gateway", body="Verifies \u2014 caf\u00e9.\n", tags=["infra", "ops"]),
        MemoryEntry(kind=Kind.NOTE, title="", body="Untitled.\n", confidence=1.0, source="agent-x"),
        MemoryEntry(kind=Kind.OBSERVATION, title="Linked", body="See.\n", relations=[rel], confidence=0.0),
        MemoryEntry(kind=Kind.FACT, title="Caf\u00e9 au lait", body="Non-ASCII title.\n", tags=["caf\u00e9"]),
        MemoryEntry(kind=Kind.PREFERENCE, title="A preference", body="Not a box kind.\n"),
        MemoryEntry(kind=Kind.NOTE, title="Draft", body="d\n", status=Status.DRAFT, extra={"other": {"k": 1}}),
        MemoryEntry(
            kind=Kind.FACT,
            title="Expiring: soon",
            body="e\n",
            expires_at=datetime(2030, 1, 1, tzinfo=UTC),
            created_at=datetime(2020, 5, 5, 5, 5, 5, 123000, tzinfo=UTC),
        ),
        MemoryEntry(kind=Kind.NOTE, title="Old", body="o\n", created_at=datetime(2019, 1, 1, tzinfo=UTC)),
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store, store.batch():
        added = [store.add(entry) for entry in _entries()]
        store.supersede(added[1].id or "", MemoryEntry(kind=Kind.TASK, title="Rotate keys weekly", body="Weekly.\n"))
    memories = path / "memories"
    for number, (old, new) in enumerate(EDITS):
        (memories / f"note__edit-{number}.md").write_bytes(
            WRITTEN.replace(old, new, 1).replace(b"mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", f"mem_EDIT{number}".encode())
        )
    (memories / "team").mkdir()
    (memories / "team" / "fact__nested.md").write_bytes(WRITTEN.replace(b"mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", b"mem_NEST"))
    for sample in sorted(SAMPLES.glob("example-memory-*.md")) if SAMPLES.is_dir() else []:
        (memories / f"sample__{sample.stem}.md").write_bytes(sample.read_bytes())
    return path


def _dumps(root: Path) -> list[tuple[Any, ...]]:
    with BoxMemoryProvider(str(root)) as store:
        return [
            (e.id, e.version, e.model_dump(mode="json"), sorted(e.model_fields_set), list(e.__dict__))
            for e in store.iter_entries()
        ]


@pytest.mark.parametrize("hold", [0, 2000, 10**9])
def test_iterating_with_the_fast_paths_on_and_off_gives_the_same_entries(
    root: Path, monkeypatch: pytest.MonkeyPatch, hold: int
) -> None:
    monkeypatch.setattr(box_stream, "_HOLD_RAW_BYTES", hold)  # none, some, or every file's bytes held
    mapped: list[MemoryEntry | None] = []

    def counted(*args: Any, **kwargs: Any) -> MemoryEntry | None:
        mapped.append(entry_from_plain(*args, **kwargs))
        return mapped[-1]

    monkeypatch.setattr(box_stream, "entry_from_plain", counted)
    fast = _dumps(root)
    assert sum(entry is not None for entry in mapped) >= 35  # most files took the fast path
    monkeypatch.setenv(BULK_READ_ENV, "0")
    no_bulk = _dumps(root)
    monkeypatch.setenv(_scan.ENV, "0")
    full = _dumps(root)
    assert fast == no_bulk == full
    ids = [row[0] for row in fast]
    assert len(ids) == len(set(ids)) >= len(_entries()) + len(EDITS) - 8  # orphans out
    assert "mem_NEST" in ids and "mem_EDIT0" in ids
    assert ids.index("mem_01AAAAAAAAAAAAAAAAAAAAAAAA") > ids.index(
        next(i for i in ids if i and i.startswith("mem_EDIT"))
    )
