"""Ids planned before a write: ``plan_ids`` of the Box-memory provider.

A Box memory's id is ``mem_`` + a ULID (box-memory-schema.md, "id"), minted by the writer, so
the ids a run of adds will get can be minted up front: :func:`plan_box_ids` mints them (writing
nothing) and keeps them in the provider's :class:`Reservations`, from which the next adds
without an id take theirs, in order. An add given an id (the planned one, as
:mod:`memcore.migrate` proposes it, or any other) keeps it, checked as always.

A ``related`` relation is written as ``"[[<title of the target>]]"``: the reservations also
keep each planned memory's title, so an entry written before its ``related`` target names
that target by the title it will be indexed under.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from ulid import ULID

from memcore.errors import MemcoreError
from memcore.models import MemoryEntry

__all__ = ["Reservations", "plan_box_ids"]


class _Planner(Protocol):
    """What :func:`plan_box_ids` needs of the provider."""

    def _check_new_id(self, entry_id: str) -> str: ...

    def _is_known(self, entry_id: str) -> bool: ...

    def _tombstones(self) -> set[str]: ...


class Reservations:
    """Ids :func:`plan_box_ids` minted, handed to the next adds without an id, oldest first.

    Also the title each planned memory will be indexed under, until it is added. Thread-safe
    (one lock); holds one ``str`` per planned id not yet taken and one title per planned
    memory not yet added.
    """

    def __init__(self) -> None:
        self._ids: deque[str] = deque()
        self._titles: dict[str, str] = {}
        self._by_title: dict[str, str] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def reserve(self, ids: Iterable[str], titles: Mapping[str, str]) -> None:
        """Append ``ids`` (in order) for the next adds without an id; note the planned ``titles`` (id -> title)."""
        with self._lock:
            self._ids.extend(ids)
            self._titles.update(titles)
            for entry_id, title in titles.items():
                self._by_title.setdefault(title, entry_id)

    def title(self, entry_id: str) -> str | None:
        """Return the title a planned memory not yet added will have, or ``None``."""
        return self._titles.get(entry_id)

    def planned_id(self, title: str) -> str | None:
        """Return the planned memory not yet added that ``[[title]]`` names (its title, or its id), or ``None``."""
        found = self._by_title.get(title)
        return found if found is not None else (title if title in self._titles else None)

    def take(self, usable: Callable[[str], bool]) -> str | None:
        """Return the oldest reserved id ``usable`` accepts, dropping the unusable ones before it.

        Args:
            usable: Whether an id is still free (not on a memory, not tombstoned).

        Returns:
            The id, or ``None`` when none is left (the caller mints a fresh one).
        """
        with self._lock:
            while self._ids:
                entry_id = self._ids.popleft()
                if usable(entry_id):
                    return entry_id
            return None

    def given(self, entry_id: str) -> None:
        """An add was given ``entry_id``: when it is the oldest reserved id, it is taken."""
        with self._lock:
            if self._ids and self._ids[0] == entry_id:
                self._ids.popleft()

    def added(self, entry_id: str) -> None:
        """``entry_id`` is on a memory now: its planned title is the index's to tell."""
        with self._lock:
            title = self._titles.pop(entry_id, None)
            if title is not None and self._by_title.get(title) == entry_id:
                del self._by_title[title]

    def clear(self) -> None:
        """Forget every reserved id and planned title (the store was closed)."""
        with self._lock:
            self._ids.clear()
            self._titles.clear()
            self._by_title.clear()


def plan_box_ids(provider: _Planner, reserved: Reservations, entries: Sequence[MemoryEntry]) -> list[str | None]:
    """Return the ids ``add`` will give ``entries`` added in this order now; write nothing.

    An entry without an id gets a fresh ``mem_<ULID>`` (none on a memory or tombstoned), reserved
    in ``reserved`` for the next adds without an id. An entry with an id keeps it (NFC, as add
    stores it); ``None`` where add would refuse that id (taken, tombstoned, blank-padded,
    given twice in ``entries``). Each planned memory's title is noted in ``reserved``: its
    own, or for an untitled one its id (what the writer puts in ``title``).

    Args:
        provider: The open Box provider.
        reserved: Its reservations (the minted ids are appended).
        entries: Entries about to be added, in order.

    Returns:
        One id or ``None`` per entry, in order.
    """
    dead = provider._tombstones()
    seen: set[str] = set()
    planned: list[str | None] = []
    minted: list[str] = []
    titles: dict[str, str] = {}
    for entry in entries:
        if entry.id is None:
            while True:
                new_id = f"mem_{ULID()}"
                if new_id not in seen and new_id not in dead and not provider._is_known(new_id):
                    break
            minted.append(new_id)
            seen.add(new_id)
            planned.append(new_id)
            titles[new_id] = unicodedata.normalize("NFC", entry.title) if entry.title else new_id
            continue
        entry_id = unicodedata.normalize("NFC", entry.id)
        try:
            ok = entry_id not in seen and provider._check_new_id(entry_id) == entry_id
        except MemcoreError:
            ok = False
        seen.add(entry_id)
        planned.append(entry_id if ok else None)
        if ok:
            titles[entry_id] = unicodedata.normalize("NFC", entry.title) if entry.title else entry_id
    reserved.reserve(minted, titles)
    return planned
