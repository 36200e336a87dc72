"""Maka's settings and what one read of its file is (pure, no I/O).

- :func:`switch`: Maka's on/off settings (``enabled``, ``agentReadEnabled``, ``apply_decay``).
- :class:`IncognitoBlockedError`: incognito refuses every read and write.
- :class:`Loaded`: one read of MEMORY.md or PENDING.md: the bytes, their parse, the entries,
  the diagnostics and Maka's state (``ok``, ``safe_mode``, ``error``…), built by
  :func:`parse_bytes` and :meth:`Loaded.fill`.
- :class:`MakaState`: Maka's ``LocalMemoryState``, what a host shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memcore.errors import ReadOnlyStoreError
from memcore.models import Diagnostic, Status
from memcore_maka import validate
from memcore_maka._parse import MAX_BYTES, Document, parse_document
from memcore_maka.codec import EntryView, view

__all__ = ["IncognitoBlockedError", "Loaded", "MakaState", "StateStatus", "parse_bytes", "switch"]

StateStatus = Literal["ok", "disabled", "safe_mode", "incognito_blocked", "error"]

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def switch(value: Any) -> bool | None:
    """Return an on/off option as a bool, ``None`` when missing or unknown.

    Reads ``True``/``False``, ``1``/``0`` and the strings ``true``/``false``, ``yes``/``no``,
    ``on``/``off``, ``1``/``0`` (any case, trimmed).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


class IncognitoBlockedError(ReadOnlyStoreError):
    """Incognito is on: Maka memory is neither read nor written (nothing on disk was touched).

    Raised by every read and write of a :class:`~memcore_maka.MakaProvider` opened with
    ``incognito=True`` (``render_prompt`` returns ``""`` instead). A
    :class:`~memcore.errors.ReadOnlyStoreError`.
    """


@dataclass(frozen=True)
class MakaState:
    """Maka's ``LocalMemoryState``: what a host shows about the memory file.

    Attributes:
        path: The MEMORY.md path.
        enabled: The ``enabled`` setting.
        agent_read_enabled: The ``agentReadEnabled`` setting.
        incognito: Whether incognito is on.
        status: ``ok``, ``disabled``, ``safe_mode``, ``incognito_blocked`` or ``error``.
        entry_count: Entries Maka shows (0 unless ``ok``).
        active_count: Entries with status active.
        archived_count: Entries with status archived.
        size: File size in bytes, when read.
        reason: Why the status is not ``ok`` (``oversize``, ``not-utf8``, an I/O error), or
            ``empty`` / ``missing`` for an empty or absent file.
    """

    path: str
    enabled: bool
    agent_read_enabled: bool
    incognito: bool
    status: StateStatus
    entry_count: int = 0
    active_count: int = 0
    archived_count: int = 0
    size: int | None = None
    reason: str | None = None


@dataclass
class Loaded:
    """One read of a Maka file (see the module docstring)."""

    path: Path
    pending: bool
    data: bytes | None = None
    size: int | None = None
    doc: Document = field(default_factory=lambda: Document(size=0))
    views: list[EntryView] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    status: StateStatus = "ok"
    reason: str | None = None

    @property
    def writable(self) -> bool:
        """Whether memcore may rewrite the file (it was parsed fully)."""
        return self.status == "ok"

    def fill(self, doc: Document, *, full: bool) -> None:
        """Take ``doc`` as the file's parse; with ``full``, build every entry and the diagnostics."""
        self.doc = doc
        if doc.reason == "empty" and self.reason is None:
            self.reason = "empty"
        if full:
            self.views = [view(doc, section, self.pending) for section in doc.entries]
            self.diagnostics.extend(validate.document_diagnostics(doc, self.views, str(self.path)))

    def state(self, enabled: bool, agent_read_enabled: bool, incognito: bool) -> MakaState:
        """Return Maka's state object for this read."""
        statuses = [v.entry.status for v in self.views]
        return MakaState(
            str(self.path),
            enabled,
            agent_read_enabled,
            incognito,
            status=self.status,
            entry_count=len(self.views),
            active_count=statuses.count(Status.ACTIVE),
            archived_count=statuses.count(Status.ARCHIVED),
            size=self.size,
            reason=self.reason,
        )


def parse_bytes(loaded: Loaded, data: bytes, cached: tuple[bytes, Document] | None) -> Document | None:
    """Record ``data`` in ``loaded`` and return its parse; ``None`` in safe mode (over 128 KiB).

    ``cached`` is the provider's last ``(bytes, parse)``: the same bytes get the same parse. A
    file that is not UTF-8 is read with replacement characters and put in the ``error`` state.
    """
    shown = str(loaded.path)
    loaded.data, loaded.size = data, len(data)
    if len(data) > MAX_BYTES:
        loaded.status, loaded.reason = "safe_mode", "oversize"
        loaded.doc = Document(size=len(data), safe_mode=True, reason="oversize")
        loaded.diagnostics.append(validate.oversize_diagnostic(shown, len(data)))
        return None
    if cached is not None and cached[0] == data:
        return cached[1]  # the bytes this provider last parsed or wrote (never edited in place)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        loaded.status, loaded.reason = "error", "not-utf8"
        loaded.diagnostics.append(validate.encoding_diagnostic(shown, data, exc))
    return parse_document(text, size=len(data))
