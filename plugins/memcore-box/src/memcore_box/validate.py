"""The Box-memory rules -> diagnostics: per file, across files, index drift; team names; companions.

Functions of a :class:`~memcore_box.provider.BoxMemoryProvider` (its folder indexes and its
storage); ``validate()``, ``read_all()`` and the writers' refusals call them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from memcore.errors import InvalidEntryError, UnsafePathError
from memcore.frontmatter import text_of
from memcore.frontmatter import to_plain as plain
from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore.storage import check_component, join
from memcore_box._parse import _File, _PlainMeta
from memcore_box.codec import _sort_key, entry_from_meta, entry_from_plain, plain_diagnostics
from memcore_box.index import ENTRY_FIELDS, INDEX_FILE, IndexRow, index_row

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["check_team", "companion_for_problem", "content_diags", "drift_diags", "fold_team", "refuse_errors"]


def check_team(team: str, known: Any) -> str:
    """Return ``team`` if it can name a team folder (``teams/<team>/``) beside ``known``, else raise.

    Refused besides what :func:`~memcore.storage.check_component` refuses (``.``, ``..``,
    separators…): names starting with a dot (``.git``; dot folders are hidden, and the workspace
    scan skips them, so its memories would vanish) and a name that differs from a known team
    only in case (``Eng`` beside ``eng``), or in Unicode spelling (NFC ``t\u00e9am`` beside NFD
    ``te\u0301am``, fullwidth ``\uff44efault`` beside ``default``; compared NFKC + casefold):
    Box and most desktop file systems fold case and normalise names, so both would share one
    folder. A name of the workspace's own files and folders (``_index.json``, ``memories``…) is
    refused too.

    Args:
        team: The team name.
        known: The workspace's ``teams`` list (anything else counts as none).

    Raises:
        UnsafePathError: The name is refused; the message names the team and the fix.
    """
    check_component(team)
    if team.startswith("."):
        raise UnsafePathError(
            f"box: team name {team!r} is reserved (a dot name is hidden, and the workspace scan skips "
            "dot folders); choose a name that does not start with '.'"
        )
    folded = fold_team(team)
    if folded in _RESERVED_TEAMS:
        raise UnsafePathError(
            f"box: team name {team!a} is reserved: it names one of the workspace's own files or folders "
            f"({', '.join(_WORKSPACE_NAMES)}), compared after Unicode normalisation (NFKC) and case folding; "
            "choose another team name"
        )
    for other in known if isinstance(known, list) else []:
        if not isinstance(other, str) or other == team:
            continue
        if other.casefold() == team.casefold():
            raise UnsafePathError(
                f"box: team name {team!r} differs from the existing team {other!r} only in case; Box and "
                f"case-insensitive file systems would put both in one folder; use {other!r}"
            )
        if fold_team(other) == folded:
            raise UnsafePathError(
                f"box: team name {team!a} is the existing team {other!a} spelled differently (the same "
                "name after Unicode normalisation, NFKC, and case folding); file systems that normalise names "
                f"(macOS, Box) would put both in one folder; use {other!a}"
            )
    return team


def fold_team(team: str) -> str:
    """Return ``team`` as compared with other team names: NFKC-normalised and case-folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", team).casefold())


#: The workspace's own files and folders (at its root and in each team folder): no team is named so.
_WORKSPACE_NAMES: tuple[str, ...] = ("_box-memory.json", "_index.json", "memories", "files", "companions", "teams")


_RESERVED_TEAMS: frozenset[str] = frozenset(fold_team(name) for name in _WORKSPACE_NAMES)


def companion_for_problem(companion: Any) -> tuple[str, str] | None:
    """Return ``(code, message)`` when ``companion_for`` does not hold what the schema requires, else ``None``.

    The schema (box-memory-schema.md, "Companion file") makes ``companion_for`` a mapping whose
    ``file_id`` names the binary: a Box file id (digits) or, on a local folder, the binary's
    workspace-relative path (``files/report.pdf``). So ``file_id`` must be one non-empty text
    value; a path must be relative, without ``..``, empty parts, backslashes or control
    characters (``../../etc/passwd`` names nothing in the workspace).
    """
    fix = (
        "write companions with add_companion(<binary>), or give extra['box']['companion_for'] = "
        "{file_id: <Box file id or workspace path such as files/report.pdf>, filename, sha256, ...}"
    )
    if not isinstance(companion, Mapping):
        return "box.companion-block", f"kind: companion needs a companion_for block (file_id, filename, sha256…); {fix}"
    if not companion:
        return "box.companion-block", f"companion_for is empty; it needs at least file_id; {fix}"
    if "file_id" not in companion or companion.get("file_id") is None:
        return "box.companion-block", f"companion_for has no file_id; {fix}"
    file_id = companion.get("file_id")
    if isinstance(file_id, bool) or not isinstance(file_id, (str, int)):
        shape = (
            "a mapping"
            if isinstance(file_id, Mapping)
            else "a list"
            if isinstance(file_id, (list, tuple))
            else (type(file_id).__name__)
        )
        return "box.companion-file-id", (
            f"companion_for.file_id must be a single text value, not {shape} ({plain(file_id)!r}); {fix}"
        )
    text = str(file_id)
    if not text.strip():
        return "box.companion-file-id", f"companion_for.file_id is empty; {fix}"
    if text.isdigit():
        return None
    parts = text.split("/")
    if (
        text != text.strip()
        or text.startswith("/")
        or "\\" in text
        or ":" in parts[0]
        or any(part in {"", ".", ".."} for part in parts)
        or any(unicodedata.category(c) in {"Cc", "Zl", "Zp"} for c in text)
    ):
        return "box.companion-file-id", (
            f"companion_for.file_id {text!a} is neither a Box file id (digits) "
            f"nor a workspace-relative path without '..', empty parts or "
            f"control characters; {fix}"
        )
    return None


def _drift_key(row: IndexRow) -> IndexRow:
    """Return ``row`` without the fields validate's drift check does not compare (file id, size).

    Two compact rows (``raw`` None) with equal keys give equal ``as_dict()`` values in every
    compared field, so no field differs; any other pair is compared field by field.
    """
    return row._replace(file_id=None, size_bytes=None)


def file_errors(
    store: BoxMemoryProvider, path: str, meta: Mapping[str, Any], body: str, version: str | None
) -> tuple[MemoryEntry, list[Diagnostic]]:
    """Return the entry a memory file reads as and the errors ``validate`` gives that file alone.

    The per-file rules of :meth:`validate` (:func:`entry_from_meta`'s field checks and the
    companion block); the cross-file ones (duplicate ids, slug conflicts) are the writers'.
    """
    entry, diags = entry_from_meta(
        meta, body, path=path, version=version, resolve=store._resolve, is_known_id=store._is_known
    )
    errors = [d for d in diags if d.severity is Severity.ERROR]
    if str(meta.get("kind")) == "companion":
        problem = companion_for_problem(meta.get("companion_for"))
        if problem is not None:
            errors.append(
                Diagnostic(
                    path=path,
                    line=1,
                    code=problem[0],
                    severity=Severity.ERROR,
                    entry_id=str(meta.get("id")),
                    message=problem[1],
                )
            )
    return entry, errors


def refuse_errors(
    store: BoxMemoryProvider, path: str, meta: Mapping[str, Any], body: str, *, current: _File | None = None
) -> None:
    """Refuse a write of ``meta`` + ``body`` that ``validate`` would call an error.

    Issue 17, item 9: a write never makes a file its own ``validate`` reports as an error.
    An error the file being updated (``current``) already had (a hand-written
    ``title: [a, b]`` kept as it is by an update of the body) is not the write's and does not
    stop it; ``current`` is checked only when the new file has errors.

    Raises:
        InvalidEntryError: The file would hold an error; the message names the file, the
            rule (its diagnostic code) and the fix. Nothing is written.
    """
    errors = file_errors(store, path, meta, body, None)[1]
    if errors and current is not None:
        had = {d.code for d in file_errors(store, current.path, current.meta, current.body, None)[1]}
        errors = [d for d in errors if d.code not in had]
    if errors:
        first = errors[0]
        where = f"{path}:{first.line}" if first.line else path
        raise InvalidEntryError(
            f"box: refusing to write {where}: {first.message} ({first.code}; `memcore validate` would "
            f"report it as an error){'; and ' + str(len(errors) - 1) + ' more' if len(errors) > 1 else ''}. "
            "Nothing was written"
        )


# -- checking ---------------------------------------------------------------------
def companion_diags(store: BoxMemoryProvider, f: _File) -> list[Diagnostic]:
    entry_id = str(f.meta["id"])
    companion = f.meta.get("companion_for")
    problem = companion_for_problem(companion)
    if problem is not None:
        return [
            Diagnostic(
                path=f.path, line=1, code=problem[0], severity=Severity.ERROR, entry_id=entry_id, message=problem[1]
            )
        ]
    assert isinstance(companion, Mapping)
    file_id = str(companion.get("file_id") or "")
    binary = store.binary_path(file_id, f.folder)
    if binary is None:
        if file_id and not file_id.isdigit():
            return [
                Diagnostic(
                    path=f.path,
                    code="box.companion-vanished",
                    severity=Severity.WARNING,
                    entry_id=entry_id,
                    message=f"the binary {file_id!r} this companion describes is gone",
                )
            ]
        return [
            Diagnostic(
                path=f.path,
                code="box.companion-unchecked",
                severity=Severity.INFO,
                entry_id=entry_id,
                message=f"binary {file_id or '?'} is not in this workspace; its hash was not checked",
            )
        ]
    algo = str(companion.get("hash_algo") or "sha256")
    stored = companion.get(algo)
    got_algo, digest, size = store.storage.checksum(binary)
    changed = (got_algo == algo and stored is not None and str(stored) != digest) or (
        companion.get("size_bytes") is not None and str(companion.get("size_bytes")) != str(size)
    )
    if changed:
        return [
            Diagnostic(
                path=f.path,
                code="box.companion-stale",
                severity=Severity.WARNING,
                entry_id=entry_id,
                message=f"{binary} changed since review ({algo} {stored} -> {digest}, "
                f"{companion.get('size_bytes')} -> {size} bytes); regenerate the companion",
            )
        ]
    return []


def content_diags(
    store: BoxMemoryProvider,
    files: list[_File],
    entries: list[MemoryEntry] | None = None,
    *,
    fast: bool = False,
) -> list[Diagnostic]:
    """Return the per-file and cross-file diagnostics of ``files``.

    Args:
        store: The workspace's provider (title and id lookups, companions' binaries).
        files: The parsed memory files, in scan order.
        entries: When given, receives every memory in :meth:`iter_entries` order
            (``created_at``, id, scan position; of files sharing an id the first), mapped
            from the same parse.
        fast: Map a file whose frontmatter is plain (:class:`~memcore_box._parse._PlainMeta`)
            with :func:`~memcore_box.codec.entry_from_plain` where it applies (the same entry
            and diagnostics as :func:`~memcore_box.codec.entry_from_meta`;
            ``MEMCORE_BOX_READ_ALL_FAST``).
    """
    diags: list[Diagnostic] = []
    by_id: dict[str, list[_File]] = {}
    by_slug: dict[str, list[_File]] = {}
    resolve, known = store._file_resolver(files)
    keyed: list[tuple[tuple[datetime, str], int, MemoryEntry]] = []
    for position, f in enumerate(files):
        entry_id = unicodedata.normalize("NFC", str(f.meta["id"]))
        by_id.setdefault(entry_id, []).append(f)
        if str(f.meta.get("status")) == "active" and text_of(f.meta.get("slug")):
            by_slug.setdefault(str(text_of(f.meta["slug"])).casefold(), []).append(f)
        entry = None
        if fast and type(f.meta) is _PlainMeta:
            entry = entry_from_plain(dict(f.meta), f.body, version=f.version, resolve=resolve, is_known_id=known)
            if entry is not None:
                diags += plain_diagnostics(f.meta, entry, path=f.path)
        if entry is None:
            entry, found = store._entry_of(f, resolve, known)
            diags += found
        if entries is not None:
            keyed.append((_sort_key(f.meta.get("created_at"), entry_id), position, entry))
        kind, slug = str(f.meta.get("kind")), str(f.meta.get("slug") or "")
        if f.name != f"{kind}__{slug}.md" and not (kind == "companion" and f.name.endswith(".md")):
            diags.append(
                Diagnostic(
                    path=f.path,
                    code="box.filename",
                    severity=Severity.WARNING,
                    entry_id=entry_id,
                    message=f"file name should be {kind}__{slug}.md (<kind>__<slug>.md)",
                )
            )
        if kind == "companion":
            diags += companion_diags(store, f)
    for entry_id, group in by_id.items():
        if len(group) > 1:
            for f in group:
                diags.append(
                    Diagnostic(
                        path=f.path,
                        line=1,
                        code="box.duplicate-id",
                        severity=Severity.ERROR,
                        entry_id=entry_id,
                        message=f"id {entry_id} is used by {len(group)} files: " + ", ".join(g.path for g in group),
                    )
                )
    for slug, group in by_slug.items():
        if len(group) > 1:
            for f in group:
                diags.append(
                    Diagnostic(
                        path=f.path,
                        code="box.slug-conflict",
                        severity=Severity.ERROR,
                        entry_id=str(f.meta["id"]),
                        message=f"slug {slug!r} is on {len(group)} active memories: "
                        + ", ".join(g.path for g in group),
                    )
                )
    if entries is not None:
        keyed.sort(key=lambda k: (k[0], k[1]))
        seen: set[str] = set()
        for (_, entry_id), _, entry in keyed:
            if entry_id not in seen:
                seen.add(entry_id)
                entries.append(entry)
    return diags


def _plain_row_matches(row: IndexRow, meta: Mapping[str, Any], name: str) -> bool:
    """Whether :func:`drift_diags` finds the compact ``row`` equal to the row of the file ``name``.

    Answers ``True`` only when sure, without building the file's row: ``meta`` holds text (or
    nothing) in every field the row takes, lists of text (or nothing) for ``tags`` and
    ``related``, no ``companion_for``, and each field equals the row's as
    :func:`~memcore_box.index.index_row` would make it (file id and size are not compared).
    ``False`` means: build the row and compare (the general way).
    """
    if row.raw is not None or "companion_for" in meta:
        return False
    get = meta.get
    entry_id, kind, slug, title = get("id"), get("kind"), get("slug"), get("title")
    status, team, created, updated = get("status"), get("team"), get("created_at"), get("updated_at")
    tags, related = get("tags"), get("related")
    if type(entry_id) is not str or type(kind) is not str:
        return False
    for value in (slug, title, status, team, created, updated):
        if value is not None and type(value) is not str:
            return False
    for items in (tags, related):
        if items is not None and (type(items) is not list or not all(type(item) is str for item in items)):
            return False
    slug = slug or ""
    return (
        row.id == entry_id
        and row.fname == (None if name == f"{kind}__{slug}.md" else name)
        and row.title == (title or "")
        and row.slug == slug
        and row.kind == kind
        and row.status == status
        and row.team == team
        and row.tags == (tuple(tags) if tags else ())
        and row.related == (tuple(related) if related else ())
        and row.companion_for is None
        and row.sha256 is None
        and row.created_at == created
        and row.updated_at == updated
    )


#: What :func:`_plain_want` reads of a file's frontmatter.
_META_VALUES = ("id", "kind", "slug", "title", "status", "team", "created_at", "updated_at", "tags", "related")
#: What :func:`_known_index_clean` compares of an index entry with :func:`_plain_want`'s answer.
_ENTRY_VALUES = itemgetter(
    "id",
    "title",
    "slug",
    "kind",
    "status",
    "team",
    "tags",
    "related",
    "companion_for",
    "sha256",
    "created_at",
    "updated_at",
)
_FILENAME = itemgetter("filename")
_TEXT_OR_NONE = frozenset({str, type(None)})
_TEXT = frozenset({str})


def _plain_want(meta: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """Return the values an index entry must hold to give a row :func:`_plain_row_matches` accepts, or ``None``.

    In :data:`_ENTRY_VALUES` order; ``None`` when :func:`_plain_row_matches` would not be sure
    of ``meta`` (a value other than text, or lists of text for ``tags`` and ``related``; a
    ``companion_for``). A list equals only a list, so an entry holding these values has list
    ``tags`` and ``related``, as a compact row's entry has.
    """
    entry_id, kind, slug, title, status, team, created, updated, tags, related = map(meta.get, _META_VALUES)
    if type(entry_id) is not str or type(kind) is not str or "companion_for" in meta:
        return None
    if not _TEXT_OR_NONE.issuperset(map(type, (slug, title, status, team, created, updated))):
        return None
    for items in (tags, related):
        if items is not None and (type(items) is not list or not _TEXT.issuperset(map(type, items))):
            return None
    return (
        entry_id,
        title or "",
        slug or "",
        kind,
        status,
        team,
        tags or [],
        related or [],
        None,
        None,
        created,
        updated,
    )


def _plain_entry_matches(entry: Any, meta: Mapping[str, Any], name: str) -> bool:
    """Whether the index entry ``entry`` (parsed JSON) of file ``name`` gives a row :func:`_plain_row_matches` accepts.

    ``True`` only for an entry in memcore's own shape (a dict with the keys of
    :data:`~memcore_box.index.ENTRY_FIELDS` in that order, ``tags`` and ``related`` lists: the
    entries :func:`~memcore_box.index.row_from_json` makes compact rows of) naming ``name``,
    whose every compared field equals the file's (:func:`_plain_want`).
    """
    want = _plain_want(meta)
    return (
        want is not None
        and type(entry) is dict
        and tuple(entry) == ENTRY_FIELDS
        and entry["filename"] == name
        and _ENTRY_VALUES(entry) == want
    )


def _known_index_clean(store: BoxMemoryProvider, path: str, present: Mapping[str, _File]) -> bool:
    """Whether the drift check surely finds nothing in folder ``path``, from its index's known bytes.

    The index is one memcore wrote and no one read since opening
    (:meth:`~memcore_box._state.WorkspaceState._known_index_entries`); ``True`` when its entries
    name each memory file of the folder once, and each entry matches its file's plain
    frontmatter (:func:`_plain_entry_matches`, here for all entries at once). ``False``: check
    the folder the general way.
    """
    if not present:
        return False
    entries = store._known_index_entries(path)
    if entries is None or len(entries) != len(present) or set(map(type, entries)) != {dict}:
        return False
    if not all(map(ENTRY_FIELDS.__eq__, map(tuple, entries))):
        return False
    try:
        have = dict(zip(map(_FILENAME, entries), map(_ENTRY_VALUES, entries), strict=True))
    except TypeError:  # an unhashable file name
        return False
    if len(have) != len(entries):
        return False  # a file named twice
    want: dict[str, tuple[Any, ...]] = {}
    for name, f in present.items():
        values = _plain_want(f.meta) if type(f.meta) is _PlainMeta else None
        if values is None:
            return False
        want[name] = values
    return have == want  # the same names, each entry equal to its file's values


def drift_diags(store: BoxMemoryProvider, files: list[_File], *, fast: bool = False) -> list[Diagnostic]:
    """Return the index drift of ``files`` against their folders' ``_index.json`` and the rollup.

    Args:
        store: The workspace's provider (its folder indexes, settings, rollup).
        files: The parsed memory files, in scan order.
        fast: Compare a compact row with a file's plain frontmatter first
            (:func:`_plain_row_matches`; ``MEMCORE_BOX_READ_ALL_FAST``): the same diagnostics.
    """
    diags: list[Diagnostic] = []
    by_folder: dict[str, list[_File]] = {}
    for f in files:
        by_folder.setdefault(f.folder, []).append(f)
    compare = [k for k in ENTRY_FIELDS if k not in {"file_id", "size_bytes"}]
    # Issue 17, item 17: drift the next write repairs on its own (a file missing from its
    # index, a row whose file is gone, with settings.rebuild_index_on_drift on) is a warning;
    # drift no write repairs (that setting off; a row that differs from its file) is an error.
    repairs = store._settings().get("rebuild_index_on_drift", True) is not False
    listing = Severity.WARNING if repairs else Severity.ERROR
    listing_fix = (
        "the next write repairs it, or run `memcore reindex`"
        if repairs
        else "settings.rebuild_index_on_drift is off, so no write repairs it: run `memcore reindex`"
    )
    for path in sorted(set(store._folders) | set(by_folder)):
        present = {f.name: f for f in by_folder.get(path, [])}
        if fast and _known_index_clean(store, path, present):
            continue
        folder = store._folder(path)
        store._load_index(folder)
        index_path = join(path, INDEX_FILE)
        if folder.problem is not None:
            if present or folder.problem != "missing":
                diags.append(
                    Diagnostic(
                        path=index_path,
                        code="box.index-missing",
                        severity=Severity.WARNING,
                        message=f"index is {folder.problem}; run `memcore reindex`",
                    )
                )
            continue
        indexed = {e.filename: e for e in folder.entries}
        for name, row in indexed.items():
            if name not in present:
                there = store.storage.exists(join(path, name))
                what = (
                    "the file no longer reads as a memory (its own diagnostic says why; fix it there)"
                    if there
                    else f"the file is gone; {listing_fix}"
                )
                diags.append(
                    Diagnostic(
                        path=index_path,
                        code="box.index-missing-file",
                        severity=listing,
                        entry_id=row.id,
                        message=f"index lists {name} ({row.id}) but {what}",
                    )
                )
        for name, f in present.items():
            have_row = indexed.get(name)
            if (
                fast
                and have_row is not None
                and type(f.meta) is _PlainMeta
                and _plain_row_matches(have_row, f.meta, name)
            ):
                continue
            want_row = index_row(f.meta, filename=name, file_id=None, size=f.size)
            if have_row is None:
                diags.append(
                    Diagnostic(
                        path=f.path,
                        code="box.index-unindexed",
                        severity=listing,
                        entry_id=want_row.id,
                        message=f"{name} is not in {index_path}; {listing_fix}",
                    )
                )
                continue
            if have_row.raw is None and _drift_key(have_row) == _drift_key(want_row):
                continue  # memcore's own row shape, equal in every compared field
            want, have = want_row.as_dict(), have_row.as_dict()
            fields = [k for k in compare if plain(have.get(k)) != want[k]]
            if fields:
                diags.append(
                    Diagnostic(
                        path=f.path,
                        code="box.index-stale-entry",
                        severity=Severity.ERROR,
                        entry_id=want_row.id,
                        message=f"{index_path} entry differs from the file in "
                        f"{', '.join(fields)}, and no write repairs that on its own "
                        "(searches through the index see the old values): run "
                        "`memcore reindex`",
                    )
                )
    store._load_rollup(full=True)
    if store._rollup_problem is not None:
        diags.append(
            Diagnostic(
                path=INDEX_FILE,
                code="box.rollup-missing",
                severity=Severity.INFO,
                message=f"workspace rollup index is {store._rollup_problem} (the authors update it "
                "lazily); `memcore reindex` writes it",
            )
        )
    return diags
