"""RightMemory's rules as diagnostics, and the refusals a write gets from them.

The graph's own rules (ids, edges, backing files, Focus, the Agent Corrections limits) are
checked where the graph is assembled (:mod:`memcore_rightmemory._graph`,
:mod:`memcore_rightmemory._corrections`). This module adds what memcore checks beyond them,
:func:`unread_text` (text no entry carries), and the write-side judgements: :func:`introduced`
(errors a write would add), :func:`check_roots` (a store whose root files are unusable takes
no write) and :func:`same_parents` (a detail-file move changes no item's parent).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memcore.errors import InvalidEntryError
from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore_rightmemory._graph import ROOT_CODES, ROOTS, Graph
from memcore_rightmemory._header import HEADER_OPEN
from memcore_rightmemory._parse import (
    FENCE_RE,
    META_RE,
    NODE_RE,
    Doc,
    Source,
    fenced_lines,
    match_anchor,
    read_fast_enabled,
)
from memcore_rightmemory.mapping import EDGE_TYPES

__all__ = [
    "FOCUS_PLACEHOLDER",
    "GraphInvariantError",
    "UnusableRootError",
    "check_new_edge",
    "check_roots",
    "introduced",
    "same_parents",
    "unread_in",
    "unread_text",
]

FORMAT = "rightmemory"
#: The reference template's text under an empty ``## Focus`` (format text, in no entry).
FOCUS_PLACEHOLDER = "No Pursuit is focused yet."
#: Marks the reference installer puts in its starter-template text (``<!-- rightmemory:example:start -->``).
_TEMPLATE_MARK = "<!-- rightmemory:"
#: What ``str.splitlines()`` (graph.py's line split) breaks at beyond LF and CR, by name.
_REFERENCE_BREAKS = {
    "\x0b": "U+000B (LINE TABULATION)",
    "\x0c": "U+000C (FORM FEED)",
    "\x1c": "U+001C (FILE SEPARATOR)",
    "\x1d": "U+001D (GROUP SEPARATOR)",
    "\x1e": "U+001E (RECORD SEPARATOR)",
    "\x85": "U+0085 (NEXT LINE)",
    "\u2028": "U+2028 (LINE SEPARATOR)",
    "\u2029": "U+2029 (PARAGRAPH SEPARATOR)",
}
_REFERENCE_BREAK_RE = re.compile("[" + "".join(_REFERENCE_BREAKS) + "]")
_THEMATIC_BREAK = re.compile(r"^(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LINE_NO_RE = re.compile(r":\d+")


class _Refused(InvalidEntryError):
    """A write refused for the diagnostics it names (listed in the message, one a line)."""

    def __init__(self, message: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(message + "".join(f"\n  {d}" for d in diagnostics))
        self.diagnostics = diagnostics


class GraphInvariantError(_Refused):
    """A write was refused because it would break a RightMemory graph invariant.

    Attributes:
        diagnostics: The diagnostics the write would have caused (code, file, line).
    """


class UnusableRootError(_Refused):
    """A write was refused because the store's root files are not a usable RightMemory graph.

    Raised (before anything is planned or written) while ``validate()`` reports one of the
    root diagnostics ``rm.missing-root``, ``rm.irregular-file``, ``rm.unreadable`` or
    ``rm.foreign-root`` for MEMORY.md or PURSUITS.md. The message names the file and the fix.

    Attributes:
        diagnostics: The root diagnostics found (code, file relative to the root, line).
    """


def check_roots(graph: Graph, root: Path) -> None:
    """Refuse to write while MEMORY.md or PURSUITS.md has a root diagnostic.

    The rule (docs/formats/rightmemory.md "Writing"): any error among ``ROOT_CODES`` on a
    root file (missing, not a regular file inside the root, not UTF-8, or another format's
    file holding no RightMemory item) blocks every write, even one that would not touch
    that file, because RightMemory's own validator rejects such a store as a whole.

    Raises:
        UnusableRootError: Naming the file and the fix; nothing has been written.
    """
    roots = {name for name, _family in ROOTS}
    found = [d for d in graph.diags if d.severity == Severity.ERROR and d.code in ROOT_CODES and d.path in roots]
    if not found:
        return
    order = ("rm.foreign-root", "rm.irregular-file", "rm.unreadable", "rm.missing-root")
    found.sort(key=lambda d: order.index(d.code))
    first = found[0]
    path = root / str(first.path)
    init = f"`memcore init --store {FORMAT}:{root}`"
    if first.code == "rm.foreign-root":
        fix = (
            f"{path} is a Maka memory file, not a RightMemory graph; open it with "
            f"`--store maka:{path}`, or keep RightMemory in another folder "
            f"(`memcore init --store {FORMAT}:<dir>`)"
        )
    elif first.code == "rm.irregular-file":
        fix = f"{path} is a symlink or not a regular file inside the root; replace it with the file itself"
    elif first.code == "rm.unreadable":
        fix = f"{path} is not UTF-8 text; re-save it as UTF-8"
    else:
        fix = f"{path} is missing; create it with {init} (existing files are left alone)"
    raise UnusableRootError(f"{FORMAT}: write refused, nothing written: {fix}; `memcore validate` lists:", found)


def check_new_edge(entry: MemoryEntry, edge_type: str, target: str) -> None:
    """Refuse adding the edge ``edge_type:target`` to ``entry``: an unknown type, or an edge it has.

    ``update`` writes a repeated edge once; asked for explicitly (``add_edge``), it is refused.

    Raises:
        GraphInvariantError: ``rm.unknown-edge-type`` or ``rm.duplicate-edge``.
    """
    if edge_type not in EDGE_TYPES:
        found = Diagnostic(code="rm.unknown-edge-type", message=f"unknown edge type `{edge_type}`", entry_id=entry.id)
    elif any(r.type == edge_type and r.target == target and r.resolved for r in entry.relations):
        message = f"duplicate edge `{edge_type}:{target}` on `{entry.id}`"
        found = Diagnostic(code="rm.duplicate-edge", message=message, entry_id=entry.id)
    else:
        return
    raise GraphInvariantError(f"{FORMAT}: write refused; it would break the graph:", [found])


def introduced(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """Return error diagnostics in ``after`` that ``before`` did not have (line shifts ignored)."""

    def key(d: Diagnostic) -> tuple[str, str | None, str | None, str]:
        return (d.code, d.path, d.entry_id, _LINE_NO_RE.sub("", d.message))

    old = Counter(key(d) for d in before if d.severity == Severity.ERROR)
    out = []
    for diag in after:
        if diag.severity != Severity.ERROR:
            continue
        k = key(diag)
        if old[k] > 0:
            old[k] -= 1
        else:
            out.append(diag)
    return out


def same_parents(before: Graph) -> Callable[[Graph], None]:
    """Return a check that a changed graph has the same items with the same parents as ``before``."""
    expected = {ident: before.parent_id(ref) for ident, ref in before.items.items()}

    def check(after: Graph) -> None:
        got = {ident: after.parent_id(ref) for ident, ref in after.items.items()}
        if got != expected:
            moved = sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
            raise InvalidEntryError(f"{FORMAT}: the move would change the items or parents of {', '.join(moved)}")

    return check


def _format_text(text: str) -> bool:
    """Whether a stripped line is format markup, not content: a thematic break, a template mark."""
    return (
        text == FOCUS_PLACEHOLDER
        or _THEMATIC_BREAK.match(text) is not None
        or (text.startswith(_TEMPLATE_MARK) and text.endswith("-->"))
    )


def unread_text(graph: Graph) -> list[Diagnostic]:
    """Return an ``rm.unread-text`` warning for each run of lines no entry reads.

    An entry carries its heading line and, for an anchored heading, the lead up to its first
    node or child heading (its body); a node carries its one line and its memcore comment.
    Anything else that is not blank, a memcore comment, a Focus reference or format markup
    (a thematic break, the reference's ``No Pursuit is focused yet.`` and starter-template
    notes marked ``<!-- rightmemory:...-->``) is in no entry
    and no conversion carries it: continuation lines and nested plain bullets of a node's
    list item, paragraphs after a node list, text under a plain heading or before the first
    heading of a file. One warning per run of such lines (blank or read lines end a run), at
    its first line (1-based), path root-relative like the other diagnostics.
    """
    out: list[Diagnostic] = []
    for rel in sorted(graph.docs):
        out.extend(unread_in(rel, graph.docs[rel]))
    return out


def _graph_syntax(line: str) -> bool:
    """Whether graph.py reads ``line`` as a node with its edge list or an anchored heading."""
    return NODE_RE.match(line) is not None or (line.startswith("#") and match_anchor(line) is not None)


def _warning(rel: str, number: int, code: str, message: str) -> Diagnostic:
    return Diagnostic(path=rel, line=number, code=code, severity=Severity.WARNING, message=message)


def _line_break(rel: str, number: int, line: str) -> Diagnostic:
    """``rm.reference-line-break``: a character graph.py splits lines at and Markdown does not."""
    found = sorted({_REFERENCE_BREAKS[c] for c in _REFERENCE_BREAK_RE.findall(line)})
    return _warning(
        rel,
        number,
        "rm.reference-line-break",
        f"this line holds {', '.join(found)}: RightMemory's graph.py splits lines there "
        "(str.splitlines), Markdown and memcore do not, so the two read different items here; "
        "replace it with a line break or a space",
    )


def _reference_reads(rel: str, number: int, line: str) -> Diagnostic:
    """``rm.reference-reads-syntax``: graph syntax graph.py reads where Markdown has none."""
    return _warning(
        rel,
        number,
        "rm.reference-reads-syntax",
        f"{line.strip()[:40]!r} is a node or anchored heading to RightMemory's graph.py, which "
        "skips only fenced code; in Markdown it is inside an HTML block or comment (or indented "
        "code, a block quote, a list item's text), so memcore reads no item here; move it out to "
        "make it an item, or into fenced code",
    )


_Runs = list[list[tuple[int, str]]]


def _not_unread(line: str, stripped: str) -> bool:
    """Whether a line no item covers is still no unread text: blank, a meta line, format text, the header's opening."""
    return not stripped or META_RE.match(line) is not None or _format_text(stripped) or stripped == HEADER_OPEN


def _scan(rel: str, lines: list[str], covered: set[int], items: set[int]) -> tuple[list[Diagnostic], _Runs]:
    """Look at every line: the line-break and graph-syntax warnings, and the runs of unread lines."""
    out: list[Diagnostic] = []
    runs: _Runs = []
    inside = False
    for number, line, in_code in fenced_lines(lines):
        text = line.strip()
        if _REFERENCE_BREAK_RE.search(line) is not None:
            out.append(_line_break(rel, number, line))
        if not in_code and number not in items and _graph_syntax(line):
            out.append(_reference_reads(rel, number, line))
        if in_code and inside and number not in covered:
            runs[-1].append((number, text))  # a code block is one passage, blank lines and all
            continue
        if number in covered or _not_unread(line, text):
            inside = False
            continue
        if not inside:
            runs.append([])
        runs[-1].append((number, text))
        inside = True
    return out, runs


#: The lines :func:`_scan_fast` looks at one by one: a fence, and a line that may be graph
#: syntax (``-`` after leading whitespace: a node line; ``#``: an anchored heading).
_SCAN_CANDIDATE_RE = re.compile(r"^(?: {0,3}(?:`{3,}|~{3,})|[^\S\n]*-|#)", re.MULTILINE)


def _scan_fast(rel: str, lines: list[str], covered: set[int], items: set[int]) -> tuple[list[Diagnostic], _Runs] | None:
    """:func:`_scan`'s results, from one search of the file's text and a walk of its unread lines.

    Fences and the lines that may be graph syntax are found by one regular expression over
    the joined lines (fenced code is then the same as :func:`~memcore_rightmemory._parse.fenced_lines`
    tells); only lines no item covers are walked for runs (a covered line between two ends a
    run). ``None`` when the text holds a character graph.py splits lines at (:func:`_scan`
    reports it where it is).
    """
    text = "\n".join(lines)
    if any(char in text for char in _REFERENCE_BREAKS):
        return None
    code: set[int] = set()
    maybe_syntax: list[int] = []
    fence_char: str | None = None
    fence_len = opened = 0
    number, at = 1, 0
    for match in _SCAN_CANDIDATE_RE.finditer(text):
        number += text.count("\n", at, match.start())
        at = match.start()
        if match.group()[-1] in "-#":  # not a fence
            if fence_char is None and number not in items:
                maybe_syntax.append(number)
            continue
        fence = FENCE_RE.match(lines[number - 1])
        if fence is not None:
            marker = fence.group(1)
            if fence_char is None:
                fence_char, fence_len, opened = marker[0], len(marker), number
            elif marker[0] == fence_char and len(marker) >= fence_len:
                code.update(range(opened, number + 1))
                fence_char, fence_len = None, 0
            code.add(number)  # a fence line is code, whether it opens, closes or neither
    if fence_char is not None:
        code.update(range(opened, len(lines) + 1))
    out = [_reference_reads(rel, n, lines[n - 1]) for n in maybe_syntax if _graph_syntax(lines[n - 1])]
    runs: _Runs = []
    inside = False
    previous = 0
    for number in sorted(set(range(1, len(lines) + 1)).difference(covered)):
        if number != previous + 1:
            inside = False  # a covered line ends a run
        previous = number
        line = lines[number - 1]
        stripped = line.strip()
        if inside and number in code:
            runs[-1].append((number, stripped))  # a code block is one passage, blank lines and all
            continue
        if _not_unread(line, stripped):
            inside = False
            continue
        if not inside:
            runs.append([])
        runs[-1].append((number, stripped))
        inside = True
    return out, runs


def unread_in(rel: str, doc: Doc) -> list[Diagnostic]:
    """Return :func:`unread_text`'s warnings for one file (its lines released after, if split here)."""
    covered: set[int] = {line for _ident, line in doc.focus}
    for heading in doc.headings:
        covered.add(heading.line)
        if heading.id is not None:
            covered.update(range(heading.line + 1, heading.lead_end + 1))
    for node in doc.nodes:
        covered.add(node.line)
        if node.meta_line is not None:
            covered.add(node.meta_line)
    # lines memcore reads as items, or reports itself: only the rest can be syntax graph.py alone sees
    items = (
        {h.line for h in doc.headings}
        | {n.line for n in doc.nodes}
        | {d[1] for d in doc.diags}
        | {ln for _i, ln in doc.focus}
    )
    source = doc.source
    unsplit = type(source) is Source and getattr(source, "_lines", None) is None
    found = _scan_fast(rel, source.lines, covered, items) if read_fast_enabled() else None
    out, runs = found if found is not None else _scan(rel, source.lines, covered, items)
    for run in runs:
        if any(_TEMPLATE_MARK in text for _number, text in run):
            continue  # the reference installer's starter-template note
        number, text = run[0]
        out.append(
            Diagnostic(
                path=rel,
                line=number,
                code="rm.unread-text",
                severity=Severity.WARNING,
                message=f"text {text[:40]!r} is not part of any entry (not a heading's body nor a "
                "node line): conversions do not carry it",
            )
        )
    if unsplit:
        source.release()
    return out
