"""The pivot model every provider reads into and writes from.

:class:`MemoryEntry` holds the fields every format can carry in some form; whatever a format has
beyond them lives in ``extra[<format name>]`` so that a conversion A -> B -> A loses nothing A had.
Datetimes are always timezone-aware UTC. Ids and titles are NFC-normalised.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import unicodedata
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, ValidationInfo, field_validator

from memcore._terms import text_terms
from memcore._vocabulary import Kind, Severity, Status

__all__ = [
    "TRUSTED",
    "Diagnostic",
    "Extra",
    "FidelityNote",
    "Kind",
    "MemoryEntry",
    "Query",
    "Relation",
    "Severity",
    "Status",
    "json_copy",
    "lf_body",
    "require_unicode",
    "revalidated",
    "text_terms",
    "unholdable",
    "utf8_text",
    "utc_now",
]

Extra: TypeAlias = dict[str, dict[str, JsonValue]]
"""``extra`` maps a format name (``"box"``, ``"whitebox"``…) to that format's own fields."""


def utc_now() -> datetime:
    """Return the current time as a timezone-aware UTC datetime truncated to milliseconds."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _to_utc(value: datetime | date | str | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(f"not an ISO-8601 date or datetime: {value!r}") from exc
    if not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"naive datetime {value.isoformat()!r}: memcore needs a timezone; "
            "pass e.g. datetime(..., tzinfo=UTC) or an ISO string ending in 'Z'"
        )
    return value.astimezone(UTC)


def json_copy(value: Any) -> Any:
    """Return a deep copy of JSON data (``extra`` values): exact dicts and lists copied, exact scalars shared.

    Anything else (a subclass such as ruamel's ``CommentedMap``, a tuple) goes to
    :func:`copy.deepcopy`, so the result is always a deep copy; plain JSON is copied without
    deepcopy's memo bookkeeping (3 vs 9 us for a typical ``extra``).
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = (str, int, float, bool, type(None))


def require_unicode(value: Any, where: str = "entry", *, prefix: str = "") -> None:
    """Raise :class:`~memcore.errors.InvalidEntryError` at the first string under ``value`` that is not Unicode text.

    A lone surrogate can get past the model's validation (``model_copy(update=...)``, a list
    mutated after validation); a writer calls this on ``entry.model_dump()`` before it touches
    any file, so nothing is written.

    Args:
        value: A model dump (dicts, lists, strings, scalars) or a single string.
        where: Dotted name of ``value`` for the message (``entry`` -> ``entry.tags[1]``).
        prefix: Format name to start the message with (``maka``).

    Raises:
        InvalidEntryError: A string (or mapping key) holds a lone surrogate; the message names
            its place and character position.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            from memcore.errors import InvalidEntryError

            head = f"{prefix}: " if prefix else ""
            raise InvalidEntryError(
                f"{head}{where} has a lone surrogate (U+{ord(value[exc.start]):04X}) at character "
                f"{exc.start}; it cannot be written as UTF-8, nothing written"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            require_unicode(key, f"{where} key", prefix=prefix)
            require_unicode(item, f"{where}.{key}", prefix=prefix)
    elif isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            require_unicode(item, f"{where}[{index}]", prefix=prefix)


def unholdable(value: Any, where: str = "the value") -> str | None:
    """Say why no entry field can hold ``value``, or return ``None`` when one can.

    The one check every reader runs on data it parsed (YAML frontmatter, JSON lines) before it
    builds an entry from it: an entry's fields are JSON and UTF-8 text, so a non-finite number
    (YAML ``.nan``/``.inf``, JSON ``NaN``), a lone surrogate (a ``\\ud800`` escape) in a string or
    a key, and a container that holds itself (a recursive YAML alias) cannot be kept. Integers
    past Python's 4,300-digit limit never get this far: the parsers raise on them
    (:func:`memcore.frontmatter.load_yaml` as a ``ParseError``). Iterative, so a deep value
    cannot exhaust the stack.

    Args:
        value: Parsed data: dicts, lists, tuples, strings, numbers, dates, ``None``.
        where: Name of ``value`` for the answer (``"the frontmatter"``).

    Returns:
        ``None``, or one sentence naming the first place found and what it holds, e.g.
        ``"the frontmatter.score is nan, which is not a JSON number"``.
    """
    stack: list[tuple[Any, str, bool]] = [(value, where, False)]
    open_containers: set[int] = set()
    while stack:
        item, place, leaving = stack.pop()
        if leaving:
            open_containers.discard(id(item))
        elif isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as exc:
                    return f"{place} has a lone surrogate (U+{ord(item[exc.start]):04X}), which is not Unicode text"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{place} is {item!r}, which is not a JSON number"
        elif isinstance(item, dict | list | tuple):
            if id(item) in open_containers:
                return f"{place} contains itself (a recursive alias), which JSON cannot hold"
            open_containers.add(id(item))
            stack.append((item, place, True))
            if isinstance(item, dict):  # pushed last to first: the first place found is the first written
                for key, child in reversed(item.items()):
                    stack.append((child, f"{place}.{key}", False))
                    stack.append((key, f"{place} key {key!r}", False))
            else:
                stack.extend((item[i], f"{place}[{i}]", False) for i in range(len(item) - 1, -1, -1))
    return None


def utf8_text(value: Any) -> bool:
    """Return whether ``value`` is a ``str`` (exactly) that UTF-8 can hold: no lone surrogate.

    A quick check for fast paths that build entries without validation; the model refuses what
    this refuses (:func:`_refuse_surrogates` says why).
    """
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse_surrogates(text: str) -> None:
    """Raise ValueError when ``text`` holds a lone surrogate (U+D800-U+DFFF).

    Such a string is not Unicode text: no UTF-8 file can hold it, so a writer would either fail
    half-way or write bytes no reader decodes. Typical cause: text decoded with
    ``errors="surrogateescape"`` or a JSON/YAML ``\\ud800`` escape.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text holds a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}: "
            "not valid Unicode; decode the source with errors='replace' or remove the character"
        ) from None


#: Validation context for JSON that :meth:`MemoryEntry.model_dump_json` wrote from an entry that
#: passed validation (the search index's rows: ``MemoryEntry.model_validate_json(data,
#: context=TRUSTED)``): the checks and NFC normalisations each field passed then are not run
#: again (they are idempotent on such data); timestamps are still converted to UTC datetimes.
TRUSTED: dict[str, bool] = {"memcore_trusted": True}


def _trusted(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and info.context.get("memcore_trusted") is True


class Relation(BaseModel):
    """A typed edge from one entry to another.

    Attributes:
        type: Edge type, e.g. ``"related"``, ``"supersedes"``, RightMemory's ``"dep"``.
        target: Id of the target entry (NFC), or the unresolved link text when ``resolved`` is
            false (e.g. a Box ``[[Title]]`` whose title is not in the store).
        resolved: Whether ``target`` is a known entry id.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = Field(min_length=1)
    target: str = Field(min_length=1)
    resolved: bool = True

    @field_validator("type", "target", mode="before")
    @classmethod
    def _unicode_text(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not _trusted(info):
            _refuse_surrogates(value)
        return value

    @field_validator("type", "target")
    @classmethod
    def _nfc(cls, value: str, info: ValidationInfo) -> str:
        return value if _trusted(info) else unicodedata.normalize("NFC", value)


class MemoryEntry(BaseModel):
    """One memory: a fact, an observation, a decision, a node of a graph.

    Attributes:
        id: Stable id in its store (NFC). ``None`` on an entry not yet added; ``add`` assigns one
            when the format generates ids (Box ``mem_<ULID>``, Maka ``mem-<hex16>``).
        kind: What the entry is.
        title: One-line title (may be empty for formats without titles, e.g. observations).
        body: Markdown body, byte-for-byte as the format stores it (may be empty).
        status: Lifecycle state.
        tags: Tags in their written order, namespaces kept (``relationship:alex``).
        confidence: 0.0-1.0, or ``None`` when the format says nothing. Labels map to numbers
            through :mod:`memcore.mapping`.
        source: The agent, model or origin that wrote the entry.
        created_at: Creation time, UTC.
        updated_at: Last change, UTC.
        date_only: True when the format stored only a date (``created_at`` is then 00:00 UTC).
        scope: Scope or team the entry belongs to (WhiteBox scope, Box team, Maka session…).
        relations: Typed edges to other entries.
        parent: Id of the containing entry (e.g. RightMemory heading), or ``None``.
        expires_at: When the entry stops being valid, UTC.
        extra: Format-specific fields, namespaced by format name; JSON-serialisable.
        version: Opaque version token set by the provider on read; ``update`` refuses to write
            over a newer version. Not part of an entry's content (see :meth:`content_dict`).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str | None = None
    kind: Kind = Kind.NOTE
    title: str = ""
    body: str = ""
    status: Status = Status.ACTIVE
    tags: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    source: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    date_only: bool = False
    scope: str | None = None
    relations: list[Relation] = Field(default_factory=list)
    parent: str | None = None
    expires_at: datetime | None = None
    extra: Extra = Field(default_factory=dict)
    version: str | None = None

    @field_validator("id", "parent", "title", "body", "source", "scope", "tags", mode="before")
    @classmethod
    def _unicode_text(cls, value: Any, info: ValidationInfo) -> Any:
        if _trusted(info):
            return value
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                _refuse_surrogates(text)
        return value

    @field_validator("id", "parent")
    @classmethod
    def _nfc_id(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or _trusted(info):
            return value
        value = unicodedata.normalize("NFC", value)
        if not value or "\x00" in value:
            raise ValueError("an id must be a non-empty string without NUL")
        return value

    @field_validator("title")
    @classmethod
    def _nfc_title(cls, value: str, info: ValidationInfo) -> str:
        return value if _trusted(info) else unicodedata.normalize("NFC", value)

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if _trusted(info):
            return value
        out = []
        for tag in value:
            if not isinstance(tag, str) or not tag.strip():
                raise ValueError(f"tags must be non-empty strings, got {tag!r}")
            out.append(unicodedata.normalize("NFC", tag))
        return out

    @field_validator("created_at", "updated_at", "expires_at", mode="before")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        if isinstance(value, (datetime, date, str)):
            return _to_utc(value)
        return value

    @field_validator("extra")
    @classmethod
    def _check_extra(cls, value: Extra, info: ValidationInfo) -> Extra:
        # a field validator, not a model one: with validate_assignment a model validator ran
        # (and serialised extra) on every attribute assignment, ~14 times per migrated entry
        if value and not _trusted(info):
            try:
                json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    "extra holds a lone surrogate (U+D800-U+DFFF): not valid Unicode, no file can hold it"
                ) from None
            except (TypeError, ValueError) as exc:
                raise ValueError(f"extra must be JSON-serialisable: {exc}") from exc
        return value

    def content_dict(self) -> dict[str, Any]:
        """Return the entry as JSON-compatible data without the ``version`` token.

        Returns:
            ``model_dump(mode="json")`` less ``version``: what two stores holding "the same"
            entry agree on.
        """
        data = self.model_dump(mode="json")
        data.pop("version", None)
        return data

    def content_hash(self) -> str:
        """Return the sha256 hex digest of :meth:`content_dict` (keys sorted, UTF-8)."""
        blob = json.dumps(self.content_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def ns(self, fmt: str) -> dict[str, JsonValue]:
        """Return ``extra[fmt]``, creating it empty if absent.

        Args:
            fmt: Format name, e.g. ``"box"``.
        """
        return self.extra.setdefault(fmt, {})


class Diagnostic(BaseModel):
    """One finding of a reader or validator, pointing at a file and line.

    Attributes:
        path: File the finding is about, relative to the store root where possible.
        line: 1-based line, or ``None`` for whole-file findings.
        column: 1-based column, or ``None``.
        code: Stable machine-readable code, e.g. ``"rm.dangling-edge"``.
        severity: ``error``, ``warning`` or ``info``.
        message: Human sentence naming the problem and, where there is one, the fix.
        entry_id: Id of the entry concerned, if any.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = None
    line: int | None = Field(default=None, ge=1)
    column: int | None = Field(default=None, ge=1)
    code: str
    severity: Severity = Severity.ERROR
    message: str
    entry_id: str | None = None

    def __str__(self) -> str:
        where = self.path or "<store>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.severity.value} {self.code}: {self.message}"


class FidelityNote(BaseModel):
    """One field a format's own reader will show differently from what memcore kept.

    memcore reads its own writes back whole (through its free-data keys and escapes); the
    format's reference reader does not read those, so for some values it shows something else:
    a tag lower-cased, a title it supplies, an escape character, quotes, a block it stops at.

    Attributes:
        field: Dotted field name, as in a migration's losses (``"tags"``, ``"body"``).
        kept: The value memcore holds (JSON form).
        shown: What the reference reader shows instead (JSON form); ``None`` when it shows
            nothing for the field (the whole entry, for ``field == "*"``).
        reader: The reference reader, as its authors name it (``"local-memory.ts"``).
        why: The reference rule behind the difference, in one sentence.
    """

    field: str
    kept: JsonValue = None
    shown: JsonValue = None
    reader: str = ""
    why: str = ""


class Query(BaseModel):
    """A filter over entries; every field set must match (AND). Unset fields match everything.

    Attributes:
        text: A query in memcore's search syntax over title, body and tags (docs/search.md;
            :mod:`memcore.query_syntax`): terms AND by default, ``OR``, ``NOT``, ``"phrases"``,
            ``prefix*``; case and accents ignored, words stemmed (``"deploys"`` matches
            "deploy", not "redeploy"). Text with no searchable term (``"🚀"``) matches nothing;
            blank text matches everything. Bad syntax raises
            :class:`~memcore.errors.QuerySyntaxError` where the query runs.
        ids: Only these ids.
        kinds: Only these kinds.
        statuses: Only these statuses.
        tags_any: At least one of these tags.
        tags_all: All of these tags.
        scope: Only entries in this scope.
        parent: Only direct children of this id.
        created_after: ``created_at`` at or after this UTC time.
        created_before: ``created_at`` strictly before this UTC time.
        limit: At most this many results (``None``: all).
    """

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    ids: list[str] | None = None
    kinds: list[Kind] | None = None
    statuses: list[Status] | None = None
    tags_any: list[str] | None = None
    tags_all: list[str] | None = None
    scope: str | None = None
    parent: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    limit: int | None = Field(default=None, ge=0)

    @field_validator("created_after", "created_before", mode="before")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        if isinstance(value, (datetime, date, str)):
            return _to_utc(value)
        return value

    def matches(self, entry: MemoryEntry) -> bool:
        """Return whether ``entry`` passes every filter set on this query (``limit`` aside)."""
        if self.ids is not None and entry.id not in {unicodedata.normalize("NFC", i) for i in self.ids}:
            return False
        if self.kinds is not None and entry.kind not in self.kinds:
            return False
        if self.statuses is not None and entry.status not in self.statuses:
            return False
        tags = set(entry.tags)
        if self.tags_any is not None and not tags.intersection(self.tags_any):
            return False
        if self.tags_all is not None and not tags.issuperset(self.tags_all):
            return False
        if self.scope is not None and entry.scope != self.scope:
            return False
        if self.parent is not None and entry.parent != self.parent:
            return False
        if self.created_after is not None and (entry.created_at is None or entry.created_at < self.created_after):
            return False
        if self.created_before is not None and (entry.created_at is None or entry.created_at >= self.created_before):
            return False
        if self.text and self.text.strip():
            from memcore.query_syntax import parse_query, text_matches

            if not text_matches(parse_query(self.text), entry.title, entry.body, " ".join(entry.tags)):
                return False
        return True

    def apply(self, entries: Iterable[MemoryEntry]) -> Iterable[MemoryEntry]:
        """Yield the entries that match, stopping after ``limit``."""
        count = 0
        for entry in entries:
            if self.limit is not None and count >= self.limit:
                return
            if self.matches(entry):
                count += 1
                yield entry


def lf_body(entry: MemoryEntry) -> MemoryEntry:
    """Return ``entry`` with every CR of its body (CRLF, or alone) as LF, or ``entry`` itself.

    For formats whose files keep one line ending of their own (WhiteBox, Box-memory,
    RightMemory): their writers store such a body with the file's line breaks and return it so,
    which is what a later read gives; :func:`memcore.migrate.migrate` keeps the original body.
    """
    if "\r" not in entry.body:
        return entry
    return entry.model_copy(update={"body": entry.body.replace("\r\n", "\n").replace("\r", "\n")})


_TEXT_FIELDS = ("title", "body")
_OPTIONAL_TEXT_FIELDS = ("id", "source", "scope", "parent", "version")
_TIME_FIELDS = ("created_at", "updated_at", "expires_at")


def _unvalidated(entry: MemoryEntry) -> bool:
    """Return whether a field of ``entry`` holds a value its type refuses (set past validation)."""
    if type(entry.kind) is not Kind or type(entry.status) is not Status:
        return True
    if any(not isinstance(getattr(entry, name), str) for name in _TEXT_FIELDS):
        return True
    if any(
        getattr(entry, name) is not None and not isinstance(getattr(entry, name), str) for name in _OPTIONAL_TEXT_FIELDS
    ):
        return True
    if any(
        getattr(entry, name) is not None and not isinstance(getattr(entry, name), datetime) for name in _TIME_FIELDS
    ):
        return True
    return (
        not isinstance(entry.tags, list) or not isinstance(entry.relations, list) or not isinstance(entry.extra, dict)
    )


def revalidated(entry: MemoryEntry, where: str = "entry") -> MemoryEntry:
    """Return ``entry``, validated again when a field holds a value set past pydantic's validation.

    ``entry.model_copy(update={"kind": "companion"})`` does not validate: ``kind`` is then a
    plain ``str`` (or anything), and a writer's ``entry.kind.value`` fails with an
    ``AttributeError``. Such an entry is validated as ``MemoryEntry(...)`` would be; a valid one
    is returned as it is (a few ``isinstance`` checks).

    Args:
        entry: The entry about to be written.
        where: Who asks, for the message (a format name).

    Raises:
        InvalidEntryError: A field holds a value the model refuses; the message names each one
            and the fix.
    """
    if not _unvalidated(entry):
        return entry
    try:
        return MemoryEntry.model_validate({name: getattr(entry, name) for name in MemoryEntry.model_fields})
    except ValidationError as exc:
        from memcore.errors import InvalidEntryError

        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors())
        raise InvalidEntryError(
            f"{where}: the entry does not hold valid field values ({problems}); an entry made by "
            "model_copy(update=...) is not validated: set the field on the entry (entry.kind = "
            "Kind.COMPANION) or build it with MemoryEntry(...)/model_validate"
        ) from None
