"""Writes that would leave a workspace its own ``validate`` flags are refused before anything is written.

Issue 17, items 9 (a write validate would call an error), 11 (a value of the wrong YAML type) and
14 (team names that cannot name a folder of their own).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError, MemcoreError, UnsafePathError
from memcore.models import Kind, MemoryEntry, Severity
from memcore_box.provider import BoxMemoryProvider


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path), teams="default,eng")
    return path


@pytest.fixture
def store(root: Path) -> BoxMemoryProvider:
    provider = BoxMemoryProvider(str(root)).open()
    yield provider
    provider.close()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _errors(store: BoxMemoryProvider) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in store.validate() if d.severity is Severity.ERROR]


# -- item 14: team names ---------------------------------------------------------------------------
@pytest.mark.parametrize("team", [".git", ".memcore", ".", ".."])
def test_reserved_team_name_is_refused_and_nothing_is_written(store: BoxMemoryProvider, root: Path, team: str) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match=r"team name|dot name"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Hidden", body="x\n", scope=team))
    assert _files(root) == before
    assert not (root / "teams" / team).exists() or team in {".", ".."}


def test_team_differing_only_in_case_from_a_known_team_is_refused(store: BoxMemoryProvider, root: Path) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match=r"'ENG' differs from the existing team 'eng' only in case"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Twin", body="x\n", scope="ENG"))
    with pytest.raises(UnsafePathError, match="only in case"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Twin", body="x\n", scope="Default"))
    assert _files(root) == before
    stored = store.add(MemoryEntry(kind=Kind.FACT, title="Fine", body="x\n", scope="eng"))
    assert store.file_of(stored) == "teams/eng/memories/fact__fine.md"


def test_init_refuses_case_twin_and_reserved_teams(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="only in case"):
        BoxMemoryProvider.init_store(str(tmp_path / "a"), teams="eng,Eng")
    with pytest.raises(UnsafePathError, match="reserved"):
        BoxMemoryProvider.init_store(str(tmp_path / "b"), teams="default,.git")
    assert not (tmp_path / "a" / "teams" / "Eng").exists()


# -- item 9: a write validate would call an error is refused ---------------------------------------
def test_companion_without_companion_for_is_refused_and_nothing_is_written(
    store: BoxMemoryProvider, root: Path
) -> None:
    before = _files(root)
    with pytest.raises(InvalidEntryError) as info:
        store.add(MemoryEntry(kind=Kind.COMPANION, title="Loose companion", body="x\n"))
    message = str(info.value)
    assert "memories/companion__loose-companion.md:1" in message
    assert "box.companion-block" in message and "add_companion" in message
    assert isinstance(info.value, MemcoreError)
    assert _files(root) == before
    assert _errors(store) == []


def test_update_that_would_make_a_companion_without_its_block_is_refused(store: BoxMemoryProvider, root: Path) -> None:
    stored = store.add(MemoryEntry(kind=Kind.FACT, title="Plain fact", body="x\n"))
    path = root / store.file_of(stored)
    before = path.read_bytes()
    # turning a fact into a companion without its block: validate would report box.companion-block
    stored.kind = Kind.COMPANION
    with pytest.raises(InvalidEntryError, match=r"box\.companion-block"):
        store.update(stored)
    assert path.read_bytes() == before and _errors(store) == []


def test_making_a_memory_active_onto_another_active_slug_is_refused(store: BoxMemoryProvider, root: Path) -> None:
    old = store.add(MemoryEntry(kind=Kind.FACT, title="Shared", body="old\n"))
    store.archive(old.id or "")
    # a hand-written active memory takes the slug (as the authors' skills may write)
    (root / "memories" / "fact__shared-new.md").write_text(
        "---\nid: mem_01J00000000000000000000002\nslug: shared\ntitle: Shared\nkind: fact\nstatus: active\n"
        "created_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n---\nnew\n",
        encoding="utf-8",
    )
    store.reindex()
    again = store.get(old.id or "")
    before = (root / store.file_of(again)).read_bytes()
    from memcore.models import Status

    again.status = Status.ACTIVE
    with pytest.raises(InvalidEntryError, match=r"slug 'shared' is on the active memory memories/fact__shared-new.md"):
        store.update(again)
    assert (root / store.file_of(again)).read_bytes() == before
    assert _errors(store) == []


# -- item 11: a value of the wrong YAML type ---------------------------------------------------------
_LIST_TITLE = (
    "---\nid: mem_01J0000000000000000000000X\nslug: x\ntitle: [a, b]\nkind: fact\nstatus: active\n"
    "team: [t]\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n---\nbody\n"
)


def test_list_title_gets_a_diagnostic_with_its_line_and_is_never_written_as_a_repr(
    store: BoxMemoryProvider, root: Path
) -> None:
    path = root / "memories" / "fact__x.md"
    path.write_text(_LIST_TITLE, encoding="utf-8")
    diags = {d.code: d for d in store.validate()}
    assert diags["box.bad-title"].path == "memories/fact__x.md" and diags["box.bad-title"].line == 4
    assert diags["box.bad-team"].line == 7
    assert "not a list" in diags["box.bad-title"].message
    entry = store.get("mem_01J0000000000000000000000X")
    assert entry.title == "" and entry.scope is None
    assert entry.extra["box"]["title"] == ["a", "b"]
    # an update of the body keeps the hand-written values exactly as they were
    entry.body = "new body\n"
    store.update(entry)
    text = path.read_text(encoding="utf-8")
    assert "\ntitle: [a, b]\n" in text and "\nteam: [t]\n" in text and text.endswith("---\nnew body\n")
    assert "['a'" not in text and "['t'" not in text
    index = (root / "memories" / "_index.json").read_text(encoding="utf-8")
    assert "['a'" not in index and '"title": ""' in index
    # setting a title replaces the list
    entry = store.get("mem_01J0000000000000000000000X")
    entry.title = "A and B"
    store.update(entry)
    assert "\ntitle: A and B\n" in path.read_text(encoding="utf-8")
    assert "box.bad-title" not in {d.code for d in store.validate()}


def test_list_title_given_in_extra_is_kept_out_of_the_title_field(store: BoxMemoryProvider, root: Path) -> None:
    stored = store.add(MemoryEntry(kind=Kind.FACT, title="", body="words here\n", extra={"box": {"title": ["x", "y"]}}))
    text = (root / store.file_of(stored)).read_text(encoding="utf-8")
    # the title field holds the untitled spelling (the id, the wikilink target), never the list
    assert f"\ntitle: {stored.id}\n" in text
    assert "['x'" not in text
    again = store.get(stored.id or "")
    assert again.title == "" and again.extra["box"]["title"] == ["x", "y"]
    assert _errors(store) == []


def test_tag_written_as_a_nested_list_is_reported_and_never_becomes_a_repr_tag(
    store: BoxMemoryProvider, root: Path
) -> None:
    path = root / "memories" / "fact__t.md"
    path.write_text(
        _LIST_TITLE.replace("title: [a, b]", "title: T")
        .replace("team: [t]", "tags: [ok, [x, y]]")
        .replace("slug: x", "slug: t"),
        encoding="utf-8",
    )
    diags = {d.code: d for d in store.validate()}
    assert diags["box.bad-tags"].line == 7
    entry = store.get("mem_01J0000000000000000000000X")
    assert entry.tags == ["ok"]
    entry.body = "changed\n"
    store.update(entry)
    text = path.read_text(encoding="utf-8")
    assert "['x'" not in text and "\ntags: [ok, [x, y]]\n" in text


# -- companion_for must hold a usable file_id (schema: "Companion file") ------------------------
@pytest.mark.parametrize(
    ("companion_for", "code"),
    [
        ({}, "box.companion-block"),
        ({"filename": "a.pdf"}, "box.companion-block"),
        ({"file_id": ""}, "box.companion-file-id"),
        ({"file_id": ["x"]}, "box.companion-file-id"),
        ({"file_id": {"a": 1}}, "box.companion-file-id"),
        ({"file_id": "../../etc/passwd"}, "box.companion-file-id"),
        ({"file_id": "/etc/passwd"}, "box.companion-file-id"),
        ({"file_id": "files//a.pdf"}, "box.companion-file-id"),
        ({"file_id": "files/a\nb.pdf"}, "box.companion-file-id"),
    ],
)
def test_companion_with_empty_or_bogus_companion_for_is_refused_and_nothing_is_written(
    store: BoxMemoryProvider, root: Path, companion_for: dict, code: str
) -> None:
    before = _files(root)
    with pytest.raises(InvalidEntryError) as info:
        store.add(
            MemoryEntry(
                kind=Kind.COMPANION,
                title="Bogus companion",
                body="x\n",
                extra={"box": {"companion_for": companion_for}},
            )
        )
    message = str(info.value)
    assert code in message and "add_companion" in message and "file_id" in message
    assert _files(root) == before
    assert _errors(store) == []


def test_update_to_an_empty_companion_for_is_refused(store: BoxMemoryProvider, root: Path) -> None:
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "r.pdf").write_bytes(b"%PDF-1.4 real\n")
    stored = store.add_companion("files/r.pdf", MemoryEntry(title="Report", body="x\n"))
    path = root / store.file_of(stored)
    before = path.read_bytes()
    stored.extra["box"]["companion_for"] = {}
    with pytest.raises(InvalidEntryError, match="companion_for is empty"):
        store.update(stored)
    assert path.read_bytes() == before and _errors(store) == []


@pytest.mark.parametrize(
    ("block", "code"),
    [
        ("companion_for: {}\n", "box.companion-block"),
        ("companion_for:\n  file_id: ''\n", "box.companion-file-id"),
        ("companion_for:\n  file_id: [x]\n", "box.companion-file-id"),
        ("companion_for:\n  file_id: ../../etc/passwd\n", "box.companion-file-id"),
    ],
)
def test_validate_reports_an_empty_or_bogus_companion_for_as_an_error(
    store: BoxMemoryProvider, root: Path, block: str, code: str
) -> None:
    (root / "memories" / "deck.pdf.md").write_text(
        "---\nid: mem_01J00000000000000000000C01\nslug: deck-companion\ntitle: Deck\nkind: companion\n"
        "status: active\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n" + block + "---\nbody\n",
        encoding="utf-8",
    )
    store.reindex()
    assert (code, "memories/deck.pdf.md") in _errors(store)


def test_companion_with_box_file_id_or_workspace_path_is_still_accepted(store: BoxMemoryProvider) -> None:
    a = store.add(
        MemoryEntry(
            kind=Kind.COMPANION,
            title="Remote deck",
            body="x\n",
            extra={"box": {"companion_for": {"file_id": "1844291673322", "filename": "d.pdf"}}},
        )
    )
    b = store.add(
        MemoryEntry(
            kind=Kind.COMPANION,
            title="Gone file",
            body="x\n",
            extra={"box": {"companion_for": {"file_id": "files/gone.pdf"}}},
        )
    )
    assert a.id and b.id and _errors(store) == []


# -- an entry made by model_copy(update=...) skips pydantic's validation ---------------------------
def test_update_of_a_model_copy_with_kind_as_plain_str_raises_invalid_entry_not_attribute_error(
    store: BoxMemoryProvider, root: Path
) -> None:
    entry = store.add(MemoryEntry(kind=Kind.FACT, title="Copied fact", body="x\n"))
    path = root / store.file_of(entry)
    before = path.read_bytes()
    with pytest.raises(InvalidEntryError, match=r"box\.companion-block"):
        store.update(entry.model_copy(update={"kind": "companion"}))
    with pytest.raises(InvalidEntryError, match="model_copy"):
        store.update(entry.model_copy(update={"kind": "no-such-kind"}))
    with pytest.raises(InvalidEntryError, match="model_copy"):
        store.add(MemoryEntry(title="New", body="y\n").model_copy(update={"status": 7}))
    assert path.read_bytes() == before and _errors(store) == []


def test_update_of_a_model_copy_with_a_valid_kind_str_works(store: BoxMemoryProvider) -> None:
    entry = store.add(MemoryEntry(kind=Kind.FACT, title="Turned decision", body="x\n"))
    stored = store.update(entry.model_copy(update={"kind": "decision", "status": "draft"}))
    assert stored.kind is Kind.DECISION
    assert store.file_of(stored) == "memories/decision__turned-decision.md"
    assert store.get(entry.id or "").status.value == "draft"


# -- team names that normalise alike, or name the workspace's own files ----------------------------
def test_team_spelled_nfd_then_nfc_is_refused_as_the_same_team(store: BoxMemoryProvider, root: Path) -> None:
    first = store.add(MemoryEntry(kind=Kind.FACT, title="Decomposed", body="x\n", scope="te\u0301am"))
    before = _files(root)
    with pytest.raises(UnsafePathError, match=r"the existing team 'te\\u0301am' spelled differently"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Composed", body="x\n", scope="t\u00e9am"))
    assert _files(root) == before
    teams = json.loads((root / "_box-memory.json").read_text(encoding="utf-8"))["teams"]
    assert [t for t in teams if unicodedata.normalize("NFC", t) == "t\u00e9am"] == ["te\u0301am"]
    assert store.get(first.id or "").scope == "te\u0301am"


@pytest.mark.parametrize("team", ["\uff44\uff45\uff46\uff41\uff55\uff4c\uff54", "\uff25\uff2e\uff27", "\uff25ng"])
def test_fullwidth_twin_of_a_known_team_is_refused(store: BoxMemoryProvider, root: Path, team: str) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match=r"spelled differently|only in case"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Wide", body="x\n", scope=team))
    assert _files(root) == before


@pytest.mark.parametrize(
    "team",
    [
        "_index.json",
        "memories",
        "Files",
        "companions",
        "teams",
        "_box-memory.json",
        "\uff4d\uff45\uff4d\uff4f\uff52\uff49\uff45\uff53",
    ],
)
def test_team_named_like_a_workspace_file_or_folder_is_refused(store: BoxMemoryProvider, root: Path, team: str) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match="reserved: it names one of the workspace's own files or folders"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Clash", body="x\n", scope=team))
    assert _files(root) == before


def test_init_refuses_unicode_twin_and_workspace_named_teams(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="spelled differently"):
        BoxMemoryProvider.init_store(str(tmp_path / "a"), teams="default,te\u0301am,t\u00e9am")
    with pytest.raises(UnsafePathError, match="reserved"):
        BoxMemoryProvider.init_store(str(tmp_path / "b"), teams="default,_index.json")
