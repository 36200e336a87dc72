"""A LangGraph ``BaseStore`` over any memcore store (``pip install "memcore-unified[langgraph]"``).

:class:`MemcoreStore` implements :class:`langgraph.store.base.BaseStore`'s ``batch`` and
``abatch``, so ``get``/``put``/``delete``/``search``/``list_namespaces`` and their ``a*`` twins
work on a graph compiled with ``StateGraph(...).compile(store=MemcoreStore(provider))``.

One item is one :class:`~memcore.models.MemoryEntry`, read and written only through the open
provider's :class:`~memcore.contract.MemoryProvider` methods, :mod:`memcore.ops` and
:func:`memcore.index.search_hits`, so the store's gates, locks and ``read_only`` apply as they
do to a direct call (a read-only store refuses ``put`` with
:class:`~memcore.errors.ReadOnlyStoreError`).

The mapping, the same for every format except where :data:`FORMATS` says otherwise
(docs/adapters.md, "LangGraph store", has the table):

* ``value["title"]`` (one line of text) → ``entry.title``, ``value["content"]`` (text) →
  ``entry.body``, ``value["tags"]`` (a list of non-empty strings) → ``entry.tags``: the
  format's own slots, so the file reads as that format's memory and the search index finds
  them. Every other key, and any of these three of another type, is kept as JSON in
  ``extra["langgraph"]["fields"]``; ``extra["langgraph"]["native"]`` lists which of the three
  the value had, so ``get`` gives back exactly the dict ``put`` was given.
* The namespace is kept exactly in ``extra["langgraph"]["namespace"]`` and natively in
  ``entry.scope`` as its labels joined by ``.`` (LangGraph forbids ``.`` in a label, so the
  join is reversible; not in Maka, whose ``scope=`` is ``workspace`` or ``session``). The key
  is ``extra["langgraph"]["key"]``; the entry id is the format's own (see :data:`FORMATS`), so
  any key works in every format.
* ``put(..., ttl=minutes)`` sets ``entry.expires_at`` to now + ``ttl`` and keeps ``ttl`` in
  ``extra["langgraph"]["ttl"]``; an expired item is not returned, and a read with
  ``refresh_ttl`` moves ``expires_at`` forward (skipped on a read-only store).
* Entries the adapter did not write are items too, read-only, under the root label
  ``memcore`` (their namespace per :data:`FORMATS`, their key the entry id, their value
  ``title``/``content``/``tags``/``kind``); ``put`` under ``("memcore", …)`` is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
    )
except ImportError as exc:  # pragma: no cover - exercised by a test with langgraph hidden
    raise ImportError('memcore.adapters.langgraph needs LangGraph: pip install "memcore-unified[langgraph]"') from exc

from memcore.adapters._paths import scrub_location
from memcore.contract import MemoryProvider
from memcore.errors import AmbiguousIdError, EntryNotFoundError, MemcoreError, UnsupportedOperationError
from memcore.index import search_hits
from memcore.models import Kind, MemoryEntry, Query, Status, utc_now
from memcore.ops import save

__all__ = ["FORMATS", "FOREIGN_ROOT", "NAMESPACE", "FormatMapping", "MemcoreStore"]

#: The ``extra`` namespace the adapter writes: ``{"namespace", "key", "native", "fields", "ttl"}``.
NAMESPACE = "langgraph"
#: Root label of the namespaces of entries the adapter did not write (read-only items).
FOREIGN_ROOT = "memcore"
#: ``created_at``/``updated_at`` of an entry whose format keeps no time (stable across reads).
_UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
#: Value keys held in the entry's own slots: value key → MemoryEntry field.
NATIVE_FIELDS: dict[str, str] = {"title": "title", "content": "body", "tags": "tags"}


def _fits(field: str, value: Any) -> bool:
    """Whether ``value`` can go in the entry's ``field`` slot and come back equal."""
    if field == "title":
        return isinstance(value, str) and value.strip() == value and value != "" and "\n" not in value
    if field == "body":
        return isinstance(value, str)
    return isinstance(value, list) and all(isinstance(t, str) and t.strip() == t and t for t in value)


def _labels(parts: Iterable[str]) -> tuple[str, ...]:
    """Namespace labels from folder names or values: no ``.`` (LangGraph's rule), none empty."""
    return tuple(p.replace(".", "_") for p in parts if p)


def _folders(entry_id: str | None) -> tuple[str, ...]:
    return _labels(PurePosixPath((entry_id or "").split("#")[0]).parts[:-1])


def _extra_text(entry: MemoryEntry, fmt: str, key: str) -> str | None:
    value = entry.extra.get(fmt, {}).get(key) if isinstance(entry.extra.get(fmt), dict) else None
    return value if isinstance(value, str) and value else None


def _scope_or_kind(entry: MemoryEntry) -> tuple[str, ...]:
    return _labels(entry.scope.split(".")) if entry.scope else (entry.kind.value,)


_PATH_PART = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: WhiteBox folders whose files mean something else (the observation log, proposals).
_WHITEBOX_RESERVED = frozenset({"observations", "proposed"})


def _whitebox_id(namespace: tuple[str, ...], key: str) -> str:
    """A vault path for an item: one folder per label, ``<key>.md`` (sha256 prefix when unsafe)."""
    parts = [
        p if _PATH_PART.fullmatch(p) else hashlib.sha256(p.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        for p in (*namespace, key)
    ]
    if parts[0] in _WHITEBOX_RESERVED:
        parts.insert(0, "lg")
    return "/".join(parts) + ".md"


@dataclass(frozen=True)
class FormatMapping:
    """How one format holds LangGraph items (one row of the table in docs/adapters.md).

    Attributes:
        kind: The kind an item is written as (WhiteBox: ``fact``, a vault file that can be
            updated; the default ``note`` is an append-only observation there).
        entry_id: Builds the id to add an item under from ``(namespace, key)``, or ``None`` to
            let the format assign its own (Box ``mem_<ULID>``, a Maka hash, a slug…).
        foreign_namespace: The namespace (after ``memcore``) of an entry the adapter did not
            write, from what the format really has (vault folders, teams, files, entity types).
        namespace_scope: Whether the namespace is written to ``entry.scope`` (labels joined by
            ``.``). Maka's ``scope=`` means ``workspace`` or ``session`` to Maka, so there the
            namespace is kept in ``extra`` only and the entry stays in the workspace.
    """

    kind: Kind = Kind.NOTE
    entry_id: Callable[[tuple[str, ...], str], str] | None = None
    foreign_namespace: Callable[[MemoryEntry], tuple[str, ...]] = _scope_or_kind
    namespace_scope: bool = True


#: Per-format mapping; a format not listed (a third party's) uses ``FormatMapping()``.
FORMATS: dict[str, FormatMapping] = {
    "whitebox": FormatMapping(
        kind=Kind.FACT,
        entry_id=_whitebox_id,
        foreign_namespace=lambda e: _folders(e.id) or (e.kind.value,),
    ),
    "box": FormatMapping(),  # scope = team: items live in teams/<labels joined by .>/memories/
    "rightmemory": FormatMapping(
        foreign_namespace=lambda e: _labels(
            (PurePosixPath(_extra_text(e, "rightmemory", "file") or "MEMORY.md").stem, e.parent or "")
        ),
    ),
    "maka": FormatMapping(foreign_namespace=lambda e: (e.scope or "workspace",), namespace_scope=False),
    "mcpmemory": FormatMapping(
        foreign_namespace=lambda e: _labels([_extra_text(e, "mcpmemory", "entityType") or e.kind.value])
    ),
    "claudecode": FormatMapping(foreign_namespace=lambda e: _folders(e.id) or (e.kind.value,)),
    "basicmemory": FormatMapping(
        foreign_namespace=lambda e: (
            _labels((_extra_text(e, "basicmemory", "folder") or "").split("/")) or (e.kind.value,)
        )
    ),
}


@dataclass
class _Found:
    """An entry read as an item."""

    entry: MemoryEntry
    item: Item
    ttl: float | None
    ours: bool


class MemcoreStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are the entries of an open memcore store.

    Args:
        provider: An open store (``memcore.open("box:./memory")``); the caller closes it.
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes) for a put without ``ttl``,
            ``refresh_on_read`` (default true) for a read without ``refresh_ttl``.

    A put's ``index`` argument (the fields LangGraph would embed) is ignored: memcore's index is
    full-text over the title, content and tags. Operations in one ``batch`` run in the order
    given (a ``get`` after a ``put`` of the same key sees the new value). ``abatch`` runs the
    same work in a worker thread; one lock keeps calls from two threads from interleaving on
    the provider.
    """

    supports_ttl = True

    def __init__(self, provider: MemoryProvider, *, ttl: TTLConfig | None = None) -> None:
        self.provider = provider
        self.ttl_config = ttl
        self.mapping = FORMATS.get(getattr(provider, "format_name", ""), FormatMapping())
        self._lock = threading.RLock()
        #: ``(ours, namespace, key)`` → entry id of every item seen, so a lookup of a known item
        #: is one ``provider.get`` instead of a read of every entry (checked on every use).
        self._ids: dict[tuple[bool, tuple[str, ...], str], str] = {}

    # -- BaseStore ---------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order and return one result per op (``None`` for a put).

        Raises:
            ReadOnlyStoreError: A put on a store opened ``read_only``.
            UnsupportedOperationError: A delete on a format without delete (WhiteBox), or a put
                under the ``memcore`` root of entries the adapter did not write.
            QuerySyntaxError: A search query that does not follow memcore's syntax.
            ValueError: An op of another type.

        A memcore error names the store by its folder's or file's own name, never by its place
        on this machine (a tool node may hand the text to a model).
        """
        with self._lock, self._no_machine_paths():
            results: list[Result] = []
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                elif isinstance(op, PutOp):
                    self._put(op)
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op)}")
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run :meth:`batch` in a worker thread (the provider's I/O is blocking)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    # -- reading -----------------------------------------------------------------------------

    def _as_item(self, entry: MemoryEntry) -> _Found:
        data = entry.extra.get(NAMESPACE)
        stamp = entry.updated_at or entry.created_at or _UNKNOWN_TIME
        created = entry.created_at or stamp
        key = data.get("key") if isinstance(data, dict) else None
        labels = data.get("namespace") if isinstance(data, dict) else None
        if isinstance(data, dict) and isinstance(key, str) and isinstance(labels, list):
            fields = data.get("fields")
            value: dict[str, Any] = dict(fields) if isinstance(fields, dict) else {}
            native = data.get("native")
            for name in native if isinstance(native, list) else []:
                if isinstance(name, str) and name in NATIVE_FIELDS:
                    got = getattr(entry, NATIVE_FIELDS[name])
                    value[name] = list(got) if isinstance(got, list) else got
            ttl = data.get("ttl")
            namespace = tuple(str(label) for label in labels)
            item = Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=stamp)
            return _Found(entry, item, float(ttl) if isinstance(ttl, (int, float)) else None, True)
        foreign = {"title": entry.title, "content": entry.body, "tags": list(entry.tags), "kind": entry.kind.value}
        namespace = (FOREIGN_ROOT, *self.mapping.foreign_namespace(entry))
        item = Item(value=foreign, key=entry.id or "", namespace=namespace, created_at=created, updated_at=stamp)
        return _Found(entry, item, None, False)

    def _items(self, query: Query | None = None, *, expired: bool = False) -> Iterator[_Found]:
        """Every live item of the store (and the expired ones too with ``expired``)."""
        now = utc_now()
        for entry in self.provider.iter_entries(query):
            found = self._as_item(entry)
            if entry.id:
                self._ids[(found.ours, found.item.namespace, found.item.key)] = entry.id
            if expired or entry.expires_at is None or entry.expires_at > now:
                yield found

    def _find(self, namespace: tuple[str, ...], key: str, *, expired: bool = False) -> _Found | None:
        """The item at ``(namespace, key)``; ``expired`` finds it after its ttl too (a put reuses its entry)."""
        ours = not (namespace and namespace[0] == FOREIGN_ROOT)
        known = self._known(ours, namespace, key)
        if known is not None:
            live = expired or known.entry.expires_at is None or known.entry.expires_at > utc_now()
            return known if live else None
        query = Query(scope=".".join(namespace)) if ours and self.mapping.namespace_scope else None
        wanted = (
            f
            for f in self._items(query, expired=expired)
            if f.ours == ours and (f.item.namespace, f.item.key) == (namespace, key)
        )
        return next(wanted, None)

    def _known(self, ours: bool, namespace: tuple[str, ...], key: str) -> _Found | None:
        """The item at ``(namespace, key)`` read by its id, when the id is known or derivable.

        The id comes from an earlier read of the item, the format's own id rule
        (:attr:`FormatMapping.entry_id`), or the key itself for the store's own entries. The
        entry read must still be that item (its ``extra`` names the same namespace and key), so
        an entry edited, deleted or re-keyed by another writer is never taken for it; ``None``
        sends the caller to a read of every entry, which also finds items added elsewhere.
        """
        ident = (ours, namespace, key)
        entry_id = self._ids.get(ident)
        if entry_id is None:
            if not ours:
                entry_id = key
            elif self.mapping.entry_id is not None:
                entry_id = self.mapping.entry_id(namespace, key)
        if not entry_id:
            return None
        try:
            found = self._as_item(self.provider.get(entry_id))
        except (EntryNotFoundError, AmbiguousIdError, ValueError):
            self._ids.pop(ident, None)
            return None
        if (found.ours, found.item.namespace, found.item.key) != ident:
            self._ids.pop(ident, None)
            return None
        self._ids[ident] = entry_id
        return found

    def _refresh(self, found: _Found, refresh: bool) -> None:
        """Move an item's ``expires_at`` forward by its ttl (not on a read-only store)."""
        if not refresh or found.ttl is None or getattr(self.provider, "read_only", False):
            return
        entry = found.entry.model_copy(deep=True)
        entry.expires_at = utc_now() + timedelta(minutes=found.ttl)
        self.provider.update(entry, expected_version=entry.version)

    def _get(self, op: GetOp) -> Item | None:
        found = self._find(op.namespace, op.key)
        if found is None:
            return None
        self._refresh(found, op.refresh_ttl)
        return found.item

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.filter is not None and not isinstance(op.filter, dict):
            raise ValueError(f"a search filter is a dict of value key → wanted value, got {type(op.filter).__name__}")
        prefix = op.namespace_prefix
        scores: dict[str, float | None] = {}
        if op.query:
            hits = search_hits(self.provider, Query(text=op.query), default_operator="OR")
            now = utc_now()
            candidates = []
            for hit in hits:
                if hit.entry.expires_at is None or hit.entry.expires_at > now:
                    found = self._as_item(hit.entry)
                    scores[hit.entry.id or ""] = -hit.score  # BM25: lower is better; LangGraph: higher
                    candidates.append(found)
        else:
            candidates = sorted(self._items(), key=lambda f: f.item.updated_at, reverse=True)
        kept = [
            f
            for f in candidates
            if f.item.namespace[: len(prefix)] == prefix
            and all(_matches(f.item.value.get(k), v) for k, v in (op.filter or {}).items())
        ]
        page = kept[op.offset : op.offset + op.limit]
        for found in page:
            self._refresh(found, op.refresh_ttl)
        return [
            SearchItem(
                namespace=f.item.namespace,
                key=f.item.key,
                value=f.item.value,
                created_at=f.item.created_at,
                updated_at=f.item.updated_at,
                score=scores.get(f.entry.id or "") if op.query else None,
            )
            for f in page
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {f.item.namespace for f in self._items()}
        chosen = [ns for ns in namespaces if all(_namespace_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # -- writing -----------------------------------------------------------------------------

    def _put(self, op: PutOp) -> None:
        _check_put(op)
        if op.namespace and op.namespace[0] == FOREIGN_ROOT:
            raise UnsupportedOperationError(
                f"{self._label()}: the {FOREIGN_ROOT!r} namespace holds the store's own entries, read-only "
                "through the LangGraph adapter; put under another root label, or edit the entry with memcore"
            )
        found = self._find(op.namespace, op.key, expired=True)
        if op.value is None:
            if found is None:
                return
            self.provider.delete(found.entry.id or "")  # WhiteBox has none: memcore's error says so
            self._ids.pop((True, op.namespace, op.key), None)
            return
        entry = self._entry(op, found.entry if found else None)
        if found is None:
            added = self.provider.add(entry)
            if added.id:
                self._ids[(True, op.namespace, op.key)] = added.id
        else:
            save(self.provider, entry)

    def _entry(self, op: PutOp, old: MemoryEntry | None) -> MemoryEntry:
        """The entry that holds ``op``'s value: a copy of ``old`` (keeping its id and format data) or new."""
        value = dict(op.value or {})
        native = [name for name, field in NATIVE_FIELDS.items() if name in value and _fits(field, value[name])]
        fields = {k: v for k, v in value.items() if k not in native}
        try:
            json.dumps(fields, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{self._label()}: the value of {op.namespace}/{op.key!r} must be JSON data to be kept in a file: {exc}"
            ) from None
        data: dict[str, Any] = {"namespace": list(op.namespace), "key": op.key, "native": native, "fields": fields}
        now = utc_now()
        entry = old.model_copy(deep=True) if old is not None else MemoryEntry(kind=self.mapping.kind, created_at=now)
        if old is None and self.mapping.entry_id is not None:
            entry.id = self.mapping.entry_id(op.namespace, op.key)
        entry.title = value["title"] if "title" in native else op.key
        entry.body = value["content"] if "content" in native else _readable(fields)
        entry.tags = list(value["tags"]) if "tags" in native else []
        if self.mapping.namespace_scope:
            entry.scope = ".".join(op.namespace)
        entry.expires_at = None
        entry.status = Status.ACTIVE  # a put revives an item whose format archived it at expiry (Maka)
        if op.ttl is not None:
            data["ttl"] = op.ttl
            entry.expires_at = now + timedelta(minutes=op.ttl)
        entry.updated_at = now
        entry.extra = {**entry.extra, NAMESPACE: data}
        return entry

    @contextmanager
    def _no_machine_paths(self) -> Iterator[None]:
        """Re-raise a memcore error with the store's absolute location replaced by its last name."""
        try:
            yield
        except MemcoreError as exc:
            location = getattr(self.provider, "location", "")
            shown = (Path(location).name if isinstance(location, str) else "") or "store"
            exc.args = tuple(scrub_location(arg, location, shown) if isinstance(arg, str) else arg for arg in exc.args)
            raise

    def _label(self) -> str:
        """The store as errors name it: its format, never its place on this machine."""
        return f"{getattr(self.provider, 'format_name', 'memcore')} store"

    def sweep(self) -> int:
        """Delete every expired item the adapter wrote; return how many were deleted.

        Raises:
            UnsupportedOperationError: The format has no delete (WhiteBox) or the store is
                read-only.
        """
        with self._lock:
            now = utc_now()
            expired = [
                e.id
                for e in self.provider.iter_entries()
                if e.expires_at is not None and e.expires_at <= now and isinstance(e.extra.get(NAMESPACE), dict)
            ]
            for entry_id in expired:
                self.provider.delete(entry_id or "")
            return len(expired)


def _check_put(op: PutOp) -> None:
    """Refuse a put the store could not keep, before anything is read or written.

    Raises:
        ValueError: The key or a namespace label holds a lone surrogate (no file can hold it),
            the value is neither a dict nor ``None``, or ``ttl`` is not a finite number of minutes
            that ends before the year 10000.
    """
    for what, text in (("key", op.key), *(("namespace label", label) for label in op.namespace)):
        if isinstance(text, str):
            bad = next((c for c in text if 0xD800 <= ord(c) <= 0xDFFF), None)
            if bad is not None:
                raise ValueError(
                    f"the {what} {text!r} holds a lone surrogate U+{ord(bad):04X}: not valid Unicode, so no "
                    "file can hold it (decode the source with errors='replace' or remove the character)"
                )
    if op.value is not None and not isinstance(op.value, dict):
        raise ValueError(f"a LangGraph item's value must be a dict (or None to delete), got {type(op.value).__name__}")
    if op.ttl is not None:
        try:
            utc_now() + timedelta(minutes=op.ttl)
        except (OverflowError, ValueError, TypeError):
            raise ValueError(
                f"ttl={op.ttl!r}: a ttl is a finite number of minutes that ends before the year 10000 "
                "(or None for no expiry)"
            ) from None


def _readable(fields: dict[str, Any]) -> str:
    """A body listing a value's fields (``key: JSON`` lines), so the file reads and search finds them."""
    return "".join(f"- {k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in fields.items())


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's prefix/suffix match: ``*`` matches any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(want == "*" or got == want for got, want in pairs)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: bool(a == b),
    "$ne": lambda a, b: bool(a != b),
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _matches(got: Any, want: Any) -> bool:
    """LangGraph's filter semantics: equality, nested dicts and lists, ``$eq $ne $gt $gte $lt $lte``.

    Raises:
        ValueError: An operator LangGraph does not define.
    """
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            for name, operand in want.items():
                if name not in _OPERATORS:
                    raise ValueError(f"Unsupported operator: {name}")
                if got is None and name not in ("$eq", "$ne"):
                    return False
                if not _OPERATORS[name](got, operand):
                    return False
            return True
        return isinstance(got, dict) and all(_matches(got.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (
            isinstance(got, (list, tuple))
            and len(got) == len(want)
            and all(_matches(g, w) for g, w in zip(got, want, strict=False))
        )
    return bool(got == want)
