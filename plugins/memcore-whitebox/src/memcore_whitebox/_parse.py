"""WhiteBox bytes -> native document: observation blocks numbered as the reader counts them.

Fail-open, with line numbers: what cannot be read is a diagnostic (``wb.unread-text`` for
prose between blocks, ``on_problem`` for malformed blocks), never an exception, except where a
writer must refuse (:func:`month_state` on a file ending inside an open fence). The block
scanner and frontmatter reader themselves are :mod:`memcore_whitebox._blocks`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcore.errors import ParseError
from memcore.models import Diagnostic, Severity
from memcore.storage import TextFile
from memcore_whitebox._blocks import Fields, RawBlock, parse_fields, scan_blocks
from memcore_whitebox._render import month_header

__all__ = [
    "Gaps",
    "MONTH_FILE",
    "MonthState",
    "diag",
    "looks_like_vault",
    "month_state",
    "numbered",
    "numbered_blocks",
]

#: A monthly observation file's name: ``YYYY-MM.md`` or ``YYYY-MM-part-N.md``.
MONTH_FILE = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])(?:-part-(\d+))?\.md$")


_CHUNK_KEYS = frozenset({"group_id", "part", "schema", "total_parts"})


def numbered(
    text: str,
    rel: str,
    diags: list[Diagnostic] | None,
    on_problem: Any,
) -> Iterator[tuple[int, RawBlock, Fields, dict[str, Any] | None]]:
    """Yield ``(N, block, fields, chunk frontmatter)`` for each observation block of a file.

    N counts observation blocks from 1, in document order, whatever the active scope; a
    chunk file's own frontmatter (a leading bare block with ``group_id``/``part`` and no
    ``date``) is not counted. Other blocks go to ``on_problem(rel, block, diags)`` when
    ``diags`` is given.
    """
    number = 0
    file_meta: dict[str, Any] | None = None
    gaps = Gaps(text, rel) if diags is not None else None
    for blk in scan_blocks(text):
        if gaps is not None:
            assert diags is not None
            gaps.before(blk, diags)
        if not blk.is_observation:
            if diags is not None and on_problem is not None:
                on_problem(rel, blk, diags)
            continue
        assert blk.frontmatter is not None
        fields = parse_fields(blk.frontmatter)
        if number == 0 and file_meta is None and blk.start == 0 and blk.layout == "bare":
            if "date" not in fields.values and not _CHUNK_KEYS.isdisjoint(fields.values):
                file_meta = fields.values
                continue
        number += 1
        yield number, blk, fields, file_meta
    if gaps is not None:
        assert diags is not None
        gaps.finish(diags)


def numbered_blocks(text: str) -> Iterator[tuple[int, RawBlock]]:
    """Yield ``(N, block)`` for each observation block of a file, numbered as :func:`numbered` does.

    For a caller that needs where each block is, not what it holds: only a leading bare block
    (the one that may be a chunk file's own frontmatter, which is not counted) has its fields
    read.
    """
    number = 0
    for blk in scan_blocks(text):
        if not blk.is_observation:
            continue
        if number == 0 and blk.start == 0 and blk.layout == "bare":
            assert blk.frontmatter is not None
            values = parse_fields(blk.frontmatter).values
            if "date" not in values and not _CHUNK_KEYS.isdisjoint(values):
                continue  # the chunk file's own frontmatter: at start 0, so seen once
        number += 1
        yield number, blk


#: Month-file text that is the format's own: the ``# Observations — <Month YYYY>`` header, its
#: ``Append-only. ...`` sentence (the writer's and the reference vault's wording) and ``---``.
_MONTH_FORMAT_LINE = re.compile(r"^(?:# Observations\b.*|Append-only\..*|---[ \t]*)$")


class Gaps:
    """Report text between and after a month file's blocks as ``wb.unread-text`` warnings.

    Only fenced or bare blocks are read; prose outside them (an agent appending a paragraph
    by hand) is in no entry and no conversion carries it. One warning per run of such lines
    (blank lines and the month header, its sentence and ``---`` separators end a run and are
    never reported), at its first line. Non-observation fenced code is reported as well,
    unless it already has a ``wb.block-malformed`` / ``wb.fence-info`` diagnostic.
    """

    __slots__ = ("_line", "_pos", "_prev", "_rel", "_text")

    def __init__(self, text: str, rel: str) -> None:
        self._text, self._rel = text, rel
        self._prev = 0  # end of the last block seen
        self._pos, self._line = 0, 1  # line-number cursor

    def _line_at(self, pos: int) -> int:
        if pos >= self._pos:
            self._line += self._text.count("\n", self._pos, pos)
            self._pos = pos
            return self._line
        return self._text.count("\n", 0, pos) + 1

    def _report(self, start: int, end: int, diags: list[Diagnostic]) -> None:
        if start >= end or not self._text[start:end].strip():
            return
        first = self._line_at(start)
        inside = False
        for offset, line in enumerate(self._text[start:end].split("\n")):
            stripped = line.strip()
            if not stripped or _MONTH_FORMAT_LINE.match(stripped):
                inside = False
                continue
            if not inside:
                diags.append(
                    diag(
                        self._rel,
                        first + offset,
                        "wb.unread-text",
                        Severity.WARNING,
                        f"text {stripped[:40]!r} outside every observation block is not part of any entry: "
                        "conversions do not carry it (put it in a block of its own)",
                    )
                )
            inside = True

    def before(self, blk: RawBlock, diags: list[Diagnostic]) -> None:
        """Report the gap before ``blk``, and ``blk`` itself when it is plain fenced code."""
        self._report(self._prev, blk.start, diags)
        self._prev = max(self._prev, blk.end)
        plain_code = blk.frontmatter is None and blk.problem is None and blk.info
        if plain_code and not blk.body.lstrip().startswith("---"):
            diags.append(
                diag(
                    self._rel,
                    self._line_at(blk.start),
                    "wb.unread-text",
                    Severity.WARNING,
                    f"fenced code ({blk.info!r}) outside every observation block is not part of any entry: "
                    "conversions do not carry it",
                )
            )

    def finish(self, diags: list[Diagnostic]) -> None:
        """Report the text after the last block."""
        self._report(self._prev, len(self._text), diags)


def diag(
    path: str, line: int | None, code: str, severity: Severity, message: str, entry_id: str | None = None
) -> Diagnostic:
    return Diagnostic(path=path, line=line, code=code, severity=severity, message=message, entry_id=entry_id)


@dataclass(slots=True)
class MonthState:
    """Where the next observation of one monthly file goes, so that an add needs no rescan.

    Attributes:
        version: The storage version of the file this state describes (``None``: no file).
        count: Observation blocks of the file's text including ``pending``.
        newline: The file's line ending (records are written with it).
        prefix: What goes before the next block (the month header for an empty file; the
            ``---`` separator with its blank lines otherwise).
        rescan: The file's text when the next record is appended to text memcore did not write
            (then ``count`` is recounted on that text plus the record, exactly as a scan of the
            file would count it); ``None`` when the file ends with a block memcore appended.
        rewrite: The file holds only blank bytes: the first write replaces it whole.
        pending: Records (``\n`` line endings) acknowledged, not yet staged.
    """

    version: str | None
    count: int
    newline: str
    prefix: str
    rescan: str | None
    rewrite: bool
    pending: list[str] = field(default_factory=list)

    def append(self, block: str) -> int:
        """Add ``block`` (a self-contained observation block) as a pending record; return its N."""
        record = self.prefix + block + "\n"
        if self.rescan is not None:
            # The record may complete what the text left open (a bare block's frontmatter
            # closed by the "---" separator): count the blocks of the text as it will be.
            # The new block is the last one.
            number = sum(1 for _ in numbered(self.rescan + record, "", None, None))
            self.rescan = None
        else:
            number = self.count + 1
        self.count = number
        self.prefix = "\n---\n\n"  # what the reference appendObservation puts after a block
        self.pending.append(record)
        return number

    def appended(self, data: bytes) -> bytes:
        """Return the file's new bytes: ``data`` (its bytes now) and the pending records; clear them.

        As an append to the file would write them: a file not ending in a line break gets one
        first (CRLF when its last 4 KiB or the records use CRLF); a blank-only file is replaced.
        """
        payload = "".join(self.pending)
        self.pending = []
        if self.newline != "\n":
            payload = payload.replace("\n", self.newline)
        raw = payload.encode("utf-8")
        if self.rewrite or not data:
            self.rewrite = False
            return raw
        gap = b""
        if not data.endswith((b"\n", b"\r")):
            gap = b"\r\n" if b"\r\n" in data[-4096:] or raw.endswith(b"\r\n") else b"\n"
        return data + gap + raw


def month_state(rel: str, month: str, data: bytes, version: str | None) -> MonthState:
    """Return the state of ``observations/<month>.md`` from its bytes (``b""``: no file).

    Raises:
        ParseError: The file is not UTF-8, or ends inside an unterminated fence (nothing
            may be appended after it).
    """
    if not data.strip():
        # reference appendObservation: a new file starts with the month header
        return MonthState(version, 0, "\n", month_header(month), "", bool(data))
    tf = TextFile.decode(data, path=rel)
    text = tf.text

    def refuse(_rel: str, blk: RawBlock, _diags: list[Diagnostic]) -> None:
        if blk.problem is not None and blk.end >= len(text) and blk.layout == "fenced":
            raise ParseError(
                f"{blk.problem}; memcore will not append after it (fix the file first)", path=rel, line=blk.line
            )

    count = sum(1 for _ in numbered(text, rel, [], refuse))
    stripped = text.rstrip()
    tail = text[len(stripped) :]
    dangling = stripped == "---" or stripped.endswith("\n---")
    # Target layout (reference appendObservation): <text without trailing whitespace> +
    # blank line + "---" + blank line + block + newline. Only bytes can be appended, so
    # the whitespace already there is counted in.
    lead = "" if tail.endswith("\n\n") else "\n"
    prefix = lead + ("" if dangling else "---\n\n")
    return MonthState(version, count, tf.newline, prefix, text, False)


def looks_like_vault(path: Path) -> bool:
    """Return whether ``path`` looks like a WhiteBox vault (cheap, never raises).

    True for a folder with tags.md or AGENTS.md next to an observations/ folder, or with an
    AGENTS.md that names WhiteBox in its first 4 KiB (AGENTS.md alone is a file many agent
    tools use, so it is not enough by itself).
    """
    try:
        if not path.is_dir():
            return False
        agents = path / "AGENTS.md"
        if (path / "observations").is_dir() and ((path / "tags.md").is_file() or agents.is_file()):
            return True
        if agents.is_file():
            with agents.open("rb") as fh:
                return b"whitebox" in fh.read(4096).lower()
        return False
    except OSError:
        return False
