"""Writes: Maka's id, comment order, safe values, one-line titles, backups, modes, surgical edits."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.errors import ConflictError, InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_maka import MakaProvider
from memcore_maka._parse import parse_document
from memcore_maka.codec import serialize_meta
from memcore_maka.mapping import KEY_ORDER

T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"
HEAD_TEMPLATE = SAMPLES / "default-template.HEAD-f19eede.rendered-now-1700000000000.md"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def comment_of(path: Path, entry_id: str) -> dict[str, str]:
    doc = parse_document(path.read_text(encoding="utf-8"))
    [section] = [s for s in doc.entries if s.id == entry_id]
    assert section.meta is not None
    return section.meta


def test_default_template_entry_gets_the_template_id(tmp_path: Path) -> None:
    lines = HEAD_TEMPLATE.read_text(encoding="utf-8").split("\n")
    provider = MakaProvider(tmp_path / "memory" / "MEMORY.md")
    stored = provider.add(MemoryEntry(title=lines[2][3:], body=lines[4], created_at=T0))
    assert stored.id == "mem-e060c48e23fe4573"
    meta = comment_of(provider.path, stored.id)
    assert list(meta)[:5] == ["id", "origin", "createdAt", "updatedAt", "status"]
    assert meta["createdAt"] == "1700000000000"
    # memcore's file reads, through Maka's rules, to the template's entry.
    doc = parse_document(provider.path.read_text(encoding="utf-8"))
    template = parse_document(HEAD_TEMPLATE.read_text(encoding="utf-8"))
    assert [(s.id, s.title, s.content) for s in doc.entries] == [(s.id, s.title, s.content) for s in template.entries]


def test_perms_backup_after_every_write(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir(mode=0o755)
    provider = MakaProvider(folder / "MEMORY.md")
    path, bak = provider.path, provider.backup_path
    writes = []
    first = provider.add(MemoryEntry(title="One", body="first"))
    writes.append("add")
    assert (mode(path), mode(folder)) == (0o600, 0o700)
    assert not bak.exists()  # nothing to back up before the first save
    for op in ("add2", "update", "archive", "delete"):
        before = path.read_bytes()
        if op == "add2":
            provider.add(MemoryEntry(title="Two", body="second"))
        elif op == "update":
            current = provider.get(first.id or "")
            current.body = "first, edited"
            provider.update(current)
        elif op == "archive":
            provider.archive(first.id or "")
        else:
            provider.delete(first.id or "")
        writes.append(op)
        assert bak.read_bytes() == before, op
        assert (mode(path), mode(bak), mode(folder)) == (0o600, 0o600, 0o700), op
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md", "MEMORY.md.bak"]  # no temp files left
    assert len(writes) == 5


def test_comment_keys_in_reference_order_unknown_after(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    stored = provider.add(
        MemoryEntry(
            title="Ordered",
            body="b",
            tags=["b", "a"],
            scope="session",
            source="extracted",
            created_at=T0,
            extra={"maka": {"zeta": "1", "sessionId": "s-1", "alpha": "2", "proposalId": "proposal-x"}},
        )
    )
    text = provider.path.read_text(encoding="utf-8")
    comment = next(line for line in text.split("\n") if line.startswith("<!-- maka-memory:"))
    keys = [token.split("=", 1)[0] for token in comment[len("<!-- maka-memory: ") : -len(" -->")].split(" ")]
    known = [k for k in keys if k in KEY_ORDER]
    assert known == [k for k in KEY_ORDER if k in known]
    assert keys[: len(known)] == known  # unknown keys only after the known ones
    assert keys[len(known) :] == sorted(keys[len(known) :])
    assert known == ["id", "proposalId", "origin", "createdAt", "updatedAt", "status", "scope", "sessionId", "tags"]
    assert stored.extra["maka"] == {"zeta": "1", "sessionId": "s-1", "alpha": "2", "proposalId": "proposal-x"}


def test_unsafe_values_made_safe_like_maka(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    stored = provider.add(
        MemoryEntry(
            title="Line one\nline  two\t end ",
            body="b",
            scope="session",
            tags=["Writing Style", "a,b", "KB:x"],
            extra={"maka": {"sessionId": "session 1 <x>", "note": "--edge-- value"}},
        )
    )
    meta = comment_of(provider.path, stored.id or "")
    assert meta["sessionId"] == "session-1-x"
    assert meta["note"] == "edge-value"
    assert meta["tags"] == "writing-style,a-b,kb-x"
    heading = next(line for line in provider.path.read_text(encoding="utf-8").split("\n") if line.startswith("## "))
    assert heading == "## Line one line two end"
    # memcore still reads back exactly what it was given.
    again = MakaProvider(provider.path).get(stored.id or "")
    assert again.title == "Line one\nline  two\t end "
    assert again.tags == ["Writing Style", "a,b", "KB:x"]
    assert again.extra["maka"] == {"sessionId": "session 1 <x>", "note": "--edge-- value"}


def test_fields_maka_lacks_survive_and_maka_keeps_them(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    given = MemoryEntry(
        title="Decision",
        body="\n  Indented start\n## not a heading\n<!-- maka-memory: id=fake -->\nend\n\n",
        kind=Kind.DECISION,
        confidence=0.7,
        relations=[Relation(type="supersedes", target="mem-0"), Relation(type="related", target="x", resolved=False)],
        parent="root",
        date_only=True,
        created_at=T0,
        expires_at=datetime(2099, 1, 1, tzinfo=UTC),
        extra={"box": {"team": "core", "n": [1, None]}, "whitebox": {"confidence": "high"}},
        source="claude",
    )
    stored = provider.add(given)
    doc = parse_document(provider.path.read_text(encoding="utf-8"))
    # Maka sees exactly one entry with the trimmed body and its own fields.
    [section] = doc.entries
    assert section.content.split("\n")[0] == "Indented start"
    assert section.meta is not None and section.meta["mcKind"] == "decision"
    assert section.meta["origin"] == "imported" and section.meta["decayTtlMs"] == str(
        (datetime(2099, 1, 1, tzinfo=UTC) - T0) // __import__("datetime").timedelta(milliseconds=1)
    )
    back = MakaProvider(provider.path).get(stored.id or "")
    assert back.content_dict() == stored.content_dict()
    for name in ("body", "kind", "confidence", "relations", "parent", "date_only", "expires_at", "source"):
        assert getattr(back, name) == getattr(given, name), name
    assert back.extra == given.extra

    # Maka rewrites the comment its own way (serializeMetaComment: raw values, status, updatedAt):
    lines = provider.path.read_text(encoding="utf-8").split("\n")
    meta = dict(section.meta)
    meta.update(status="archived", updatedAt="1700000001000")
    assert section.meta_index is not None
    lines[section.meta_index] = f"<!-- maka-memory: {serialize_meta(meta)} -->"
    provider.path.write_text("\n".join(lines), encoding="utf-8")
    after = MakaProvider(provider.path).get(stored.id or "")
    assert after.status is Status.ARCHIVED
    assert (after.kind, after.relations, after.extra, after.body) == (
        given.kind,
        given.relations,
        given.extra,
        given.body,
    )


def test_stale_override_loses_to_an_edit_made_in_maka(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    stored = provider.add(MemoryEntry(title="Two\nlines", body="b", tags=["KB:x"]))
    text = provider.path.read_text(encoding="utf-8")
    text = text.replace("## Two lines", "## Renamed in Maka").replace("tags=kb-x", "tags=edited")
    provider.path.write_text(text, encoding="utf-8")
    again = MakaProvider(provider.path).get(stored.id or "")
    assert (again.title, again.tags) == ("Renamed in Maka", ["edited"])


def test_update_changes_only_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    original = (
        "# Maka Memory\r\n\r\n"
        "## Keep short\r\n"
        "<!-- maka-memory: id=keep origin=manual createdAt=1.7e12 status=active tags=Style,x  zz=1 1bad=2 -->\r\n"
        "Prefer concise answers.\r\n\r\n"
        "## Other\r\n"
        "untouched  \r\n"
    )
    path.write_bytes(original.encode("utf-8"))
    provider = MakaProvider(path)
    entry = provider.get("keep")
    assert entry.created_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    entry.status = Status.ARCHIVED
    provider.update(entry, expected_version=entry.version)
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\r\n")
    # Untouched raw values keep their spelling (1.7e12, Style); the dropped token is kept; CRLF kept.
    assert lines[3].startswith("<!-- maka-memory: id=keep origin=manual createdAt=1.7e12 updatedAt=")
    assert "status=archived tags=Style,x zz=1 1bad=2 -->" in lines[3]
    assert lines[4:] == ["Prefer concise answers.", "", "## Other", "untouched  ", ""]
    assert "\n" not in text.replace("\r\n", "")
    # A body edit rewrites the body, keeps the comment.
    again = provider.get("keep")
    again.body = "New body."
    provider.update(again)
    assert path.read_bytes().decode("utf-8").split("\r\n")[4:] == ["New body.", "", "## Other", "untouched  ", ""]


def test_update_of_section_without_comment_inserts_one(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# Maka Memory\n\n## 手写偏好\n旧格式内容。\n", encoding="utf-8")
    provider = MakaProvider(path)
    entry = provider.get("手写偏好")
    provider.update(entry)  # nothing changed: nothing written
    assert path.read_text(encoding="utf-8") == "# Maka Memory\n\n## 手写偏好\n旧格式内容。\n"
    provider.archive("手写偏好")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[3].startswith("<!-- maka-memory: id=手写偏好 updatedAt=")
    assert lines[3].endswith(" status=archived -->")
    assert lines[4] == "旧格式内容。"


def test_delete_tidies_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# Maka Memory\n\n## A\na\n\n## B\nb\n\n## C\nc\n", encoding="utf-8")
    provider = MakaProvider(path)
    provider.delete("b")
    assert path.read_text(encoding="utf-8") == "# Maka Memory\n\n## A\na\n\n## C\nc\n"
    provider.delete("c")
    assert path.read_text(encoding="utf-8") == "# Maka Memory\n\n## A\na\n"


def test_refusals(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## Same\none\n\n## Same\ntwo\n", encoding="utf-8")
    provider = MakaProvider(path)
    assert [e.id for e in provider.iter_entries()] == ["same", "same"]
    assert any(d.code == "maka.duplicate-id" for d in provider.validate())
    with pytest.raises(ConflictError, match="2 sections"):
        provider.delete("same")
    with pytest.raises(InvalidEntryError):
        provider.add(MemoryEntry(id="has space", title="x", body="y"))
    with pytest.raises(InvalidEntryError, match="sessionId"):
        provider.propose(MemoryEntry(title="x", body="y", scope="session"))
    with pytest.raises(ConflictError):
        provider.add(MemoryEntry(id="same", title="x", body="y"))
    assert path.read_text(encoding="utf-8") == "## Same\none\n\n## Same\ntwo\n"


def test_init_store_and_open_by_url(tmp_path: Path) -> None:
    import memcore

    location = tmp_path / "memory" / "MEMORY.md"
    MakaProvider.init_store(str(location))
    assert location.read_text(encoding="utf-8") == "# Maka Memory\n"
    assert (mode(location), mode(location.parent)) == (0o600, 0o700)
    assert MakaProvider.sniff(location)
    with memcore.open(f"maka:{location}") as store:
        assert list(store.iter_entries()) == []
    with memcore.open(str(location)) as store:  # sniffed
        assert isinstance(store, MakaProvider)


def test_times_maka_cannot_hold_round_trip(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    given = MemoryEntry(
        title="Old",
        body="b",
        created_at=datetime(1960, 1, 1, tzinfo=UTC),  # negative ms: Maka ignores it, memcore keeps it
        updated_at=datetime(2020, 1, 1, 0, 0, 0, 123456, tzinfo=UTC),  # sub-millisecond
        expires_at=datetime(2990, 1, 1, tzinfo=UTC),
    )
    stored = provider.add(given)
    meta = comment_of(provider.path, stored.id or "")
    assert "createdAt" not in meta and "decayTtlMs" not in meta
    assert meta["updatedAt"] == "1577836800123"
    back = MakaProvider(provider.path).get(stored.id or "")
    assert (back.created_at, back.updated_at, back.expires_at) == (given.created_at, given.updated_at, given.expires_at)
    assert back.extra == {}


def test_empty_body_is_shown_with_its_title(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md", agent_read_enabled=True)
    blank = provider.add(MemoryEntry(title="Title only", body=" \n\t"))
    empty = provider.add(MemoryEntry(title="", body=""))
    unowned = provider.add(MemoryEntry(title="Unowned", body="never shown", scope="session"))
    # Maka sees every entry (an empty section would be dropped): the title is the content.
    doc = parse_document(provider.path.read_text(encoding="utf-8"))
    assert [(s.title, s.content) for s in doc.entries] == [
        ("Title only", "Title only"),
        ("Untitled memory", "Untitled memory"),
        ("Unowned", "never shown"),
    ]
    again = MakaProvider(provider.path)
    assert (again.get(blank.id or "").body, again.get(empty.id or "").body, again.get(empty.id or "").title) == (
        " \n\t",
        "",
        "",
    )
    assert again.get(unowned.id or "").scope == "session"
    assert provider.render_prompt() == "## Title only\nTitle only\n\n## Untitled memory\nUntitled memory"


def test_lone_surrogate_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    good = provider.add(MemoryEntry(title="Good", body="good entry"))
    before = path.read_bytes()
    bad = MemoryEntry(title="t", body="b").model_copy(update={"body": "bad \ud800 body"})
    with pytest.raises(InvalidEntryError, match=r"entry\.body has a lone surrogate \(U\+D800\) at character 4"):
        provider.add(bad)
    tagged = good.model_copy(update={"tags": ["ok", "x\udfff"]})
    with pytest.raises(InvalidEntryError, match=r"entry\.tags\[1\]"):
        provider.update(tagged)
    with pytest.raises(InvalidEntryError, match=r"entry\.extra\.maka\.note"):
        with provider.batch():
            provider.add(bad.model_copy(update={"body": "fine", "extra": {"maka": {"note": "\ud800"}}}))
    assert path.read_bytes() == before
    before.decode("utf-8")
    assert [e.title for e in MakaProvider(path).open().iter_entries()] == ["Good"]
