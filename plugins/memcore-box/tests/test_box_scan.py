"""Pass 1's order keys read from the bytes (``_scan.order_keys``) are ``read_meta``'s, or it declines.

Whenever :func:`memcore_box._scan.order_keys` answers, the file is one ``read_meta`` reads as a
memory (with the fast paths and with the round-trip parse alone), with the same ``id``, title
(as the wikilink lookups record it) and ``created_at``; iterating with it on and off
(``MEMCORE_BOX_STREAM_FAST=0``) gives the same entries, in the same order, without the orphans.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.frontmatter import _YAML, _reads_as_str, text_of
from memcore.models import Kind, MemoryEntry
from memcore_box import _drift, _scan
from memcore_box import _stream as box_stream
from memcore_box._parse import read_meta
from memcore_box.mapping import parse_timestamp
from memcore_box.provider import BoxMemoryProvider

SAMPLES = Path("/work/shared/samples/box-memory")
SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WRITTEN = (
    b"---\nid: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG\nslug: memo-1-a-mobile-because\ntitle: memo 1 a mobile because\n"
    b"kind: decision\nstatus: active\nteam: default\nagent: bench-agent\ncreated_at: 2026-12-02T18:37:49.938Z\n"
    b"updated_at: 2026-12-02T18:37:49.938Z\nconfidence: 0.5\ntags: [finance]\n---\n\n# memo 1\n\nBody.\n"
)


def _expected(data: bytes) -> Any:
    """What pass 1 records from ``read_meta`` (fast paths on, and the round-trip parse): equal, else a failure."""
    found = [read_meta("memories/x.md", data, fast) for fast in (True, False)]
    keys = [None if f is None else (str(f[0]["id"]), text_of(f[0].get("title")), f[0].get("created_at")) for f in found]
    assert keys[0] == keys[1]
    return keys[0]


def _check(data: bytes) -> tuple[str, str | None, str | None] | None:
    got = _scan.order_keys(data)
    if got is not None:
        assert got == _expected(data)
    return got


def test_what_memcore_writes_is_read_from_its_lines() -> None:
    assert _check(WRITTEN) == ("mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", "memo 1 a mobile because", "2026-12-02T18:37:49.938Z")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"title: memo 1 a mobile because", b"title: the tokens, again"),  # a comma: declined
        (b"title: memo 1 a mobile because", b"title: the tokens"),  # first letter t: a string, read
        (b"title: memo 1 a mobile because", b"title: true"),  # a boolean
        (b"title: memo 1 a mobile because", b"title: null"),
        (b"title: memo 1 a mobile because", b"title: 'quoted'"),
        (b"title: memo 1 a mobile because", b"title: caf\xc3\xa9"),  # not ASCII
        (b"title: memo 1 a mobile because", b"title: a # comment"),
        (b"title: memo 1 a mobile because\n", b""),  # no title
        (b"created_at: 2026-12-02T18:37:49.938Z\n", b""),  # no created_at
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: yesterday"),  # malformed: read as text
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 2026-12-02"),  # a date: declined
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 20261202"),  # a number: declined
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: 2026-99-99T99:99:99Z"),
        (b"id: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG\n", b""),  # no id: an orphan
        (b"kind: decision\n", b""),  # no kind: an orphan
        (b"kind: decision", b"kind: 'decision'"),
        (b"kind: decision", b"kind: [decision]"),
        (b"id: mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", b'"id": mem_01M8W0RWZJ4HT06TZG9WX1Z4HG'),  # a quoted key
        (b"status: active", b"title: again"),  # a key twice: an orphan
        (b"status: active", b"True: 1\ntrue: 2"),  # keys read as the same boolean
        (b"status: active", b"null: x"),
        (b"status: active", b"status: active # comment"),
        (b"status: active", b"# a comment\nstatus: active"),
        (b"status: active", b"status: active\n"),  # a blank line
        (b"status: active", b"status:  active"),
        (b"status: active", b"status:\tactive"),
        (b"status: active", b"status: &a active"),
        (b"status: active", b"status: *a"),
        (b"status: active", b"status: !!str active"),
        (b"status: active", b"status: [unclosed"),
        (b"status: active", b"status: {a: b}"),
        (b"status: active", b'status: "a\\"b"'),
        (b"status: active", b'related:\n  - "[[Login Flow]]"'),
        (b"tags: [finance]", b"tags: [finance, null, true, 0.5, 'x', \"[[T]]\"]"),
        (b"tags: [finance]", b"tags: []"),
        (b"tags: [finance]", b"tags: [a,b]"),
        (b"tags: [finance]", b"tags: [a, [b]]"),
        (b"confidence: 0.5", b"confidence: 1" + b"0" * 30),  # past the digits read here
        (b"confidence: 0.5", b"confidence: -0"),
        (b"\n---\n\n# memo 1", b"\n...\n\n# memo 1"),  # closed with ...
        (b"\n---\n\n# memo 1", b"\n---  \n\n# memo 1"),
        (b"\n---\n\n# memo 1", b"\n# memo 1"),  # never closed: an orphan
        (b"---\nid:", b"---  \nid:"),
        (b"---\nid:", b"\xef\xbb\xbf---\nid:"),  # a BOM
        (b"Body.\n", b"Body \xff.\n"),  # not UTF-8: an orphan
    ],
)
def test_hand_edited_files_are_read_alike_or_declined(old: bytes, new: bytes) -> None:
    assert old in WRITTEN
    _check(WRITTEN.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"title: memo 1 a mobile because", b"title: the tokens"),
        (b"title: memo 1 a mobile because\n", b""),
        (b"created_at: 2026-12-02T18:37:49.938Z\n", b""),
        (b"created_at: 2026-12-02T18:37:49.938Z", b"created_at: yesterday"),
        (b"tags: [finance]", b"tags: [finance, null, true, 0.5, 'x', \"[[T]]\"]"),
        (b"\n---\n\n# memo 1", b"\n...\n\n# memo 1"),
        (b"Body.\n", b"Caf\xc3\xa9 \xe2\x80\x94 body.\n"),  # a UTF-8 body after ASCII lines
    ],
)
def test_the_sure_cases_are_answered(old: bytes, new: bytes) -> None:
    assert _check(WRITTEN.replace(old, new, 1)) is not None


def test_crlf_and_orphans_are_declined() -> None:
    assert _scan.order_keys(WRITTEN.replace(b"\n", b"\r\n")) is None
    assert _scan.order_keys(WRITTEN.replace(b"kind: decision\n", b"")) is None
    assert _scan.order_keys(WRITTEN.replace(b"status: active", b"title: again")) is None


lines = st.lists(
    st.one_of(
        st.builds(
            lambda k, v: k + b": " + v,
            st.sampled_from([b"id", b"kind", b"title", b"created_at", b"tags", b"x", b"true", b"n"]),
            st.one_of(
                st.sampled_from(
                    [b"mem_A", b"note", b"2026-01-01T00:00:00Z", b"2026-01-01", b"[a, b]", b"[]", b"null", b"No"]
                ),
                st.binary(max_size=10).filter(lambda b: b"\n" not in b),
                st.text(alphabet="aZtf_ !$'()*+-./09;<=>?@\\^`|~\"#:,[]{}", max_size=12).map(str.encode),
            ),
        ),
        st.sampled_from([b"# c", b"", b"  - x", b"k:", b"- a"]),
    ),
    min_size=1,
    max_size=7,
)


@SETTINGS
@given(rows=lines, body=st.sampled_from([b"body\n", b"", b"\xff", b"x\r\ny"]))
def test_generated_files_are_read_alike_or_declined(rows: list[bytes], body: bytes) -> None:
    _check(b"---\n" + b"\n".join(rows) + b"\n---\n" + body)


def test_the_real_samples_are_read_alike_or_declined() -> None:
    files = sorted(SAMPLES.rglob("*.md")) if SAMPLES.is_dir() else []
    for path in files:
        _check(path.read_bytes())


def test_keys_that_do_not_read_as_strings_are_the_booleans_and_nulls() -> None:
    table = _YAML.resolver.versioned_resolver
    assert None not in table
    first = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
    tags = {str(tag) for c in first for tag, _ in table.get(c, ())}
    assert tags <= {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}
    for key in _scan._NOT_TEXT_KEYS:
        assert not _reads_as_str(key.decode())
    words = [
        a + b for a in ("t", "T", "f", "F", "n", "N") for b in ("rue", "RUE", "alse", "ALSE", "ull", "ULL", "o", "")
    ]
    for word in [*words, "Yes", "no", "on", "off", "nan", "inf"]:
        assert _reads_as_str(word) == (word.encode() not in _scan._NOT_TEXT_KEYS)


# -- iterating with the light pass 1 on and off ---------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store, store.batch():
        store.add(MemoryEntry(kind=Kind.DECISION, title="Tokens", body="Stateless.\n", tags=["auth"]))
        store.add(MemoryEntry(kind=Kind.TASK, title="Rotate keys", body="Monthly.\n", scope="default"))
        store.add(MemoryEntry(kind=Kind.FACT, title="the gateway", body="Verifies.\n", tags=["infra", "ops"]))
    memories = path / "memories"
    (memories / "fact__linked.md").write_bytes(
        b"---\nid: mem_LINKED\nkind: fact\ntitle: Linked\ncreated_at: 2021-01-01T00:00:00Z\n"
        b'related: ["[[Tokens]]", "[[the gateway]]", "[[Nowhere]]"]\n---\nSee the tokens.\n'
    )
    (memories / "note__broken.md").write_bytes(b"---\nid: [unclosed\n---\nbody\n")
    (memories / "note__twice.md").write_bytes(b"---\nid: mem_TWICE\nkind: note\ntitle: Tokens\ntitle: x\n---\nb\n")
    (memories / "note__crlf.md").write_bytes(b"---\r\nid: mem_CRLF\r\nkind: note\r\ntitle: Crlf\r\n---\r\nb\r\n")
    (memories / "note__bom.md").write_bytes(b"\xef\xbb\xbf---\nid: mem_BOM\nkind: note\ntitle: Tokens\n---\nb\n")
    (memories / "note__comment.md").write_bytes(
        b"---\n# hand-written\nid: mem_COMMENT\nkind: note\ntitle: 'Hand # written'\ncreated_at: 2020-01-01T00:00:00Z\n---\nb\n"
    )
    (memories / "note__nodate.md").write_bytes(b"---\nid: mem_NODATE\nkind: note\ntitle: No date\n---\nb\n")
    (memories / "note__baddate.md").write_bytes(b"---\nid: mem_BADDATE\nkind: note\ncreated_at: soon\n---\nb\n")
    (memories / "note__sameid.md").write_bytes(
        b"---\nid: mem_LINKED\nkind: note\ntitle: Same id\ncreated_at: 2022-01-01T00:00:00Z\n---\nb\n"
    )
    (memories / "note__quoted.md").write_bytes(b'---\n"id": mem_QUOTED\nkind: note\ntitle: Quoted key\n---\nb\n')
    return path


def _dumps(root: Path) -> list[tuple[str, str | None, dict[str, object]]]:
    with BoxMemoryProvider(str(root)) as store:
        return [(e.id or "", e.version, e.model_dump(mode="json")) for e in store.iter_entries()]


@pytest.mark.parametrize("hold", [0, 10**9])
def test_iterating_with_the_light_pass_on_and_off_gives_the_same_entries(
    root: Path, monkeypatch: pytest.MonkeyPatch, hold: int
) -> None:
    monkeypatch.setattr(box_stream, "_HOLD_BYTES", 0)  # every file past the parsed budget: read light
    monkeypatch.setattr(box_stream, "_HOLD_RAW_BYTES", hold)
    light = _dumps(root)
    monkeypatch.setenv(_scan.ENV, "0")
    full = _dumps(root)
    monkeypatch.delenv(_scan.ENV)
    monkeypatch.setattr(box_stream, "_HOLD_BYTES", 10**9)  # everything held parsed, as a small workspace
    held = _dumps(root)
    assert light == full == held
    ids = [i for i, _, _ in light]
    assert ids.index("mem_NODATE") < ids.index("mem_COMMENT") < ids.index("mem_LINKED")  # no date: first
    assert "mem_TWICE" not in ids and ids.count("mem_LINKED") == 1  # the orphan out; the first of an id
    assert {"mem_CRLF", "mem_BOM", "mem_NODATE", "mem_QUOTED"} <= set(ids)
    linked = next(d for i, _, d in light if i == "mem_LINKED")
    targets = {r["target"]: r["resolved"] for r in linked["relations"]}  # type: ignore[attr-defined]
    tokens = next(i for i, _, d in light if d["title"] == "Tokens" and i.startswith("mem_01"))  # first in scan order
    gateway = next(i for i, _, d in light if d["title"] == "the gateway")
    assert targets == {tokens: True, gateway: True, "Nowhere": False}
    assert json.dumps(light)  # plain data


def test_the_switch_is_read_per_iteration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _scan.enabled()
    monkeypatch.setenv(_scan.ENV, "0")
    assert not _scan.enabled()


# -- the listing open() took, reused by the first iteration ---------------------------------


def _settle(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the workspace one nobody wrote lately: folders dated an hour back, no settling time.

    ``os.utime`` cannot move a folder's change time back, so the settling time the stamps check
    (:data:`memcore_box._drift.SETTLED_NS`) is set to none; the modification times an hour back
    make any later change to a folder show in its stamp whatever the clock's granularity.
    """
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(time.time_ns() - 3600 * 10**9,) * 2)
    monkeypatch.setattr(_drift, "SETTLED_NS", 0)


def test_a_settled_workspace_is_listed_once_for_open_and_iterate(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settle(root, monkeypatch)
    reference = _dumps(root)
    with BoxMemoryProvider(str(root)) as store:
        assert store._opened_listings is not None  # kept by open()
        assert [e.id for e in store.iter_entries()] == [i for i, _, _ in reference]
        assert store._opened_listings is None  # used once
        assert [e.id for e in store.iter_entries()] == [i for i, _, _ in reference]  # listed again


def test_files_added_or_removed_after_open_are_seen(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settle(root, monkeypatch)
    with BoxMemoryProvider(str(root)) as store:
        assert store._opened_listings is not None
        (root / "memories" / "note__late.md").write_bytes(b"---\nid: mem_LATE\nkind: note\ntitle: Late\n---\nb\n")
        (root / "memories" / "note__nodate.md").unlink()
        ids = [e.id for e in store.iter_entries()]
    assert "mem_LATE" in ids and "mem_NODATE" not in ids


def test_a_folder_changed_just_before_open_is_listed_again(root: Path) -> None:
    with BoxMemoryProvider(str(root)) as store:  # the fixture just wrote every folder
        assert store._opened_listings is None


def test_a_write_after_open_forgets_the_listing(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settle(root, monkeypatch)
    with BoxMemoryProvider(str(root)) as store:
        added = store.add(MemoryEntry(kind=Kind.NOTE, title="Added", body="b\n"))
        assert store._opened_listings is None
        assert added.id in [e.id for e in store.iter_entries()]


def test_with_the_switch_off_nothing_is_kept(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settle(root, monkeypatch)
    monkeypatch.setenv(_scan.ENV, "0")
    with BoxMemoryProvider(str(root)) as store:
        assert store._opened_listings is None
        assert len(list(store.iter_entries())) == len(_dumps(root))


def test_parse_timestamp_gives_the_same_values_when_a_text_repeats() -> None:
    stamp = "2026-12-02T18:37:49.938Z"
    first = parse_timestamp(stamp)
    assert parse_timestamp(stamp) == first == datetime(2026, 12, 2, 18, 37, 49, 938000, tzinfo=UTC)
    assert parse_timestamp("2026-01-01") == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_timestamp("2026-01-01T10:00:00")  # no timezone, after a remembered text
    assert parse_timestamp(stamp) == first
