"""Maka's rules as diagnostics: what a read of MEMORY.md / PENDING.md reports (pure, no I/O).

Each function turns a parse (:class:`memcore_maka._parse.Document`) or a fact the provider
found on disk (a symlink, an oversize or non-UTF-8 file, an entry the decay rewrite archived)
into :class:`~memcore.models.Diagnostic` objects; :class:`memcore_maka.provider.MakaProvider`
collects them in ``validate`` and ``read_all``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memcore.mapping import format_utc
from memcore.models import Diagnostic, Severity, Status
from memcore_maka._parse import MAX_BYTES, Document, parse_finite_number
from memcore_maka.codec import EntryView, from_ms
from memcore_maka.mapping import MEMORY_HEADER, PENDING_HEADER

__all__ = [
    "Decayed",
    "decay_notes",
    "document_diagnostics",
    "encoding_diagnostic",
    "io_error_diagnostic",
    "oversize_diagnostic",
    "symlink_diagnostic",
    "symlinked_backup_diagnostic",
    "unread_text",
]


@dataclass(frozen=True)
class Decayed:
    """An entry a load archived because ``createdAt + decayTtlMs`` had passed.

    Attributes:
        entry_id: Its id.
        title: Its heading text.
        line: Line index (0-based) of its metadata comment.
        meta: The comment as it was before (its ``createdAt`` and ``decayTtlMs``).
        now: The time of the rewrite (unix ms): its ``archivedAt``.
    """

    entry_id: str
    title: str
    line: int
    meta: dict[str, str]
    now: int


def symlink_diagnostic(shown: str) -> Diagnostic:
    """``maka.symlink``: the store file is a link (not read, never replaced)."""
    return Diagnostic(
        path=shown,
        code="maka.symlink",
        message=f"{shown} is a symlink: not read (it may point outside the store) and "
        "never replaced; put the file itself there",
    )


def symlinked_backup_diagnostic(name: str, of: str) -> Diagnostic:
    """``maka.symlink``: ``<name>.bak`` is a link, so every save of ``of`` is refused."""
    return Diagnostic(
        path=name,
        code="maka.symlink",
        message=f"{name} is a symlink: every save of {of} is refused (memcore never "
        "writes through or replaces a link); remove the link",
    )


def io_error_diagnostic(shown: str, exc: OSError) -> Diagnostic:
    """``maka.io-error``: the file could not be read."""
    return Diagnostic(path=shown, code="maka.io-error", message=f"cannot read {shown}: {exc}")


def oversize_diagnostic(shown: str, size: int) -> Diagnostic:
    """``maka.oversize``: over 128 KiB, the store is in safe mode."""
    return Diagnostic(
        path=shown,
        code="maka.oversize",
        message=(
            f"{size:,} bytes is over Maka's 128 KiB limit ({MAX_BYTES:,} bytes): safe mode, "
            "no entries are read and memcore will not write to this file; shorten it below "
            "the limit (archive old entries elsewhere) to use it again"
        ),
    )


def encoding_diagnostic(shown: str, data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """``maka.encoding``: not UTF-8, read with replacement characters, writes refused."""
    return Diagnostic(
        path=shown,
        line=data[: exc.start].count(b"\n") + 1,
        code="maka.encoding",
        message=(
            f"not UTF-8 (bad byte at offset {exc.start}); read with replacement characters, "
            "writes refused; re-save the file as UTF-8"
        ),
    )


def unread_text(doc: Document, shown: str) -> list[Diagnostic]:
    """Return a ``maka.unread-text`` warning for each paragraph before the first ``##`` section.

    Maka reads only ``##`` sections: prose between the ``# Maka Memory`` title and the first
    section belongs to no entry, so no conversion carries it. Blank lines and the file's own
    title (``# Maka Memory`` / ``# Maka Pending Memory``) are not reported.
    """
    end = doc.sections[0].start if doc.sections else len(doc.lines)
    out: list[Diagnostic] = []
    inside = False
    for index in range(end):
        line = doc.lines[index].lstrip("\ufeff") if index == 0 else doc.lines[index]
        text = line.strip()
        if not text or text in (MEMORY_HEADER, PENDING_HEADER):
            inside = False
            continue
        if not inside:
            out.append(
                Diagnostic(
                    path=shown,
                    line=index + 1,
                    code="maka.unread-text",
                    severity=Severity.WARNING,
                    message=f"text before the first `## ` section ({text[:40]!r}) is not part of any entry: "
                    "Maka ignores it and conversions do not carry it",
                )
            )
        inside = True
    return out


def document_diagnostics(doc: Document, views: Iterable[EntryView], shown: str) -> list[Diagnostic]:
    """Return what Maka's rules find in a parsed file whose entries read as ``views``."""
    out = unread_text(doc, shown)
    for index in doc.malformed:
        out.append(
            Diagnostic(
                path=shown,
                line=index + 1,
                code="maka.malformed-comment",
                severity=Severity.WARNING,
                message="looks like a maka-memory comment but is not one whole comment line; Maka keeps it as content",
            )
        )
    for section in doc.sections:
        for index, token, why in section.dropped:
            out.append(
                Diagnostic(
                    path=shown,
                    line=index + 1,
                    code="maka.token-dropped",
                    severity=Severity.WARNING,
                    message=f"comment token {token[:40]!r} is ignored by Maka ({why})",
                    entry_id=section.id,
                )
            )
        for index in section.shadow_indices:
            out.append(
                Diagnostic(
                    path=shown,
                    line=index + 1,
                    code="maka.unread-text",
                    severity=Severity.WARNING,
                    message="a later metadata comment in the section: ignored (the first one is "
                    "authoritative; Maka V0.1 used the last one) and removed from the content, so it is "
                    "part of no entry: memcore keeps the line when it rewrites the section in place, "
                    "conversions do not carry it",
                    entry_id=section.id,
                )
            )
        if not section.is_entry:
            out.append(
                Diagnostic(
                    path=shown,
                    line=section.start + 1,
                    code="maka.empty-section",
                    severity=Severity.INFO,
                    message=f"section {section.title!r} has no content; Maka does not show it",
                )
            )
    out.extend(_entry_diagnostics(views, shown))
    return out


def _entry_diagnostics(views: Iterable[EntryView], shown: str) -> list[Diagnostic]:
    """Duplicate ids, unknown statuses, ownerless session entries, unreadable values."""
    out: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for view in views:
        entry, section = view.entry, view.section
        where = (section.meta_index if section.meta_index is not None else section.start) + 1
        assert entry.id is not None
        if entry.id in seen:
            out.append(
                Diagnostic(
                    path=shown,
                    line=section.start + 1,
                    code="maka.duplicate-id",
                    severity=Severity.WARNING,
                    message=f"id {entry.id!r} is also used at line {seen[entry.id]}; memcore will not "
                    "update or delete an ambiguous id",
                    entry_id=entry.id,
                )
            )
        else:
            seen[entry.id] = section.start + 1
        notes: list[tuple[str, str]] = []
        if entry.status is Status.UNKNOWN:
            notes.append(
                (
                    "maka.unknown-status",
                    f"status {view.meta.get('status')!r} is not one Maka knows; shown, never given to a model",
                )
            )
        if view.meta.get("scope") == "session" and not view.meta.get("sessionId"):
            notes.append(("maka.session-without-owner", "scope=session without sessionId: never given to a model"))
        notes.extend(("maka.bad-value", problem) for problem in view.problems)
        out.extend(
            Diagnostic(path=shown, line=where, code=code, severity=Severity.WARNING, message=message, entry_id=entry.id)
            for code, message in notes
        )
    return out


def decay_notes(shown: str, archived: Iterable[Decayed]) -> list[Diagnostic]:
    """Return a ``maka.decayed`` warning for each entry the decay rewrite archived."""
    out: list[Diagnostic] = []
    for item in archived:
        created = parse_finite_number(item.meta.get("createdAt")) or 0.0
        ttl = parse_finite_number(item.meta.get("decayTtlMs")) or 0.0
        expired = from_ms(created + ttl)
        when = format_utc(expired, milliseconds=True) if expired is not None else f"{created + ttl:.0f} ms"
        now = from_ms(item.now)
        out.append(
            Diagnostic(
                path=shown,
                line=item.line + 1,
                code="maka.decayed",
                severity=Severity.WARNING,
                message=(
                    f"entry {item.entry_id!r} ({item.title[:60]!r}) expired at {when} (its decayTtlMs="
                    f"{item.meta.get('decayTtlMs')} ms had run out) and was archived by this read, as Maka "
                    "archives expired entries when it loads the file: its comment now says status=archived "
                    f"archiveReason=decayTtlMs-expired archivedAt={item.now}"
                    + (f" ({format_utc(now, milliseconds=True)})" if now is not None else "")
                    + "; the file before is kept in MEMORY.md.bak (open the store with apply_decay=false "
                    "to keep expired entries active)"
                ),
                entry_id=item.entry_id,
            )
        )
    return out
