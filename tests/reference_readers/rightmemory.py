"""RightMemory's ``graph.py`` (``build_graph_manifest``) as reference-notes/rightmemory.md describes it.

One graph over ``MEMORY.md`` and ``PURSUITS.md`` plus the files their F# headings reach
(``MEMORY_<id>.md`` / ``PURSUIT_<id>.md``, parsed recursively). Lines are split with
``str.splitlines()``; lines inside fenced code (````` or ``~~~``, fence length tracked) are no
graph syntax. A heading is ``^(#{1,})\\s+.*?\\{(F#|M#|S#|MF#|MQ#|#)(<id>)\\}(?:\\s*(?:→|->)\\s*\\[(.*?)\\])?\\s*$``
(plain headings group, they are no item); a node is a bullet whose first token is a backticked
id, followed by free text, whitespace and a mandatory edge list ``→ [type:target, …]``. Edges
are ``^\\s*([A-Za-z][A-Za-z0-9_-]*):\\s*(<id>)\\s*$``. A heading's body is the paragraphs directly
under it (up to its first child heading or node); a node is one line. An item's parent is its
nearest addressable ancestor heading, across F# files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_ID = r"[A-Za-z0-9_.-]+"
HEADING = re.compile(rf"^(#{{1,}})\s+(.*?)\{{(F#|M#|S#|MF#|MQ#|#)({_ID})\}}(?:\s*(?:→|->)\s*\[(.*?)\])?\s*$")
_ANY_HEADING = re.compile(r"^(#{1,})\s")
NODE = re.compile(rf"^\s*[-*]\s+`({_ID})`(.*?)\s+(?:→|->)\s*\[(.*?)\]\s*$")
EDGE = re.compile(rf"^\s*([A-Za-z][A-Za-z0-9_-]*):\s*({_ID})\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: The fifteen edge types (schema "Edge Types").
EDGE_TYPES = ("dep", "emb", "bak", "agg", "ver", "ext", "up", "rel", "loc", "run", "cfg", "out", "in", "doc", "todo")
ROOTS = (("MEMORY.md", "memory"), ("PURSUITS.md", "pursuit"))


@dataclass
class Item:
    """One addressable item of the graph.

    Attributes:
        id: The graph id.
        item: ``heading`` or ``node``.
        marker: ``#``, ``F#``, ``M#``, ``S#``, ``MF#``, ``MQ#`` (headings) or ``node``.
        module: ``memory`` or ``pursuit`` (the tree it belongs to).
        title: Heading text before the anchor, or the node's text before the arrow (trimmed).
        body: A heading's paragraphs (blank lines at the edges dropped); ``""`` for a node.
        edges: ``(type, target)`` pairs in written order.
        parent: Nearest addressable ancestor heading's id.
        file: The file holding the line.
    """

    id: str
    item: str
    marker: str
    module: str
    title: str
    body: str = ""
    edges: list[tuple[str, str]] = field(default_factory=list)
    parent: str | None = None
    file: str = ""


def parse_edges(raw: str | None) -> list[tuple[str, str]]:
    """The ``type:target`` pairs of an edge list (a pair that does not match is no edge)."""
    out: list[tuple[str, str]] = []
    for part in (raw or "").split(","):
        found = EDGE.match(part)
        if found is not None:
            out.append((found.group(1), found.group(2)))
    return out


def _close(item: Item | None, body: list[str]) -> None:
    if item is not None and item.item == "heading":
        item.body = "\n".join(body).strip("\n")


def parse_file(text: str, module: str, file: str, parent: str | None = None) -> list[Item]:
    """Return the items of one file in line order (F# files are not followed here)."""
    items: list[Item] = []
    stack: list[tuple[int, str]] = []  # (level, id) of addressable headings open above
    fence: str | None = None
    current: Item | None = None
    body: list[str] = []
    collecting = False
    for line in text.splitlines():
        found_fence = _FENCE.match(line)
        if fence is not None:
            if found_fence and found_fence.group(1)[0] == fence[0] and len(found_fence.group(1)) >= len(fence):
                fence = None
            if collecting:
                body.append(line)
            continue
        if found_fence:
            fence = found_fence.group(1)
            if collecting:
                body.append(line)
            continue
        heading = HEADING.match(line)
        plain = _ANY_HEADING.match(line)
        if heading is not None or plain is not None:
            _close(current, body)
            body, collecting, current = [], False, None
            level = len((heading or plain).group(1))  # type: ignore[union-attr]
            while stack and stack[-1][0] >= level:
                stack.pop()
            if heading is None:
                continue
            up = stack[-1][1] if stack else parent
            current = Item(
                id=heading.group(4),
                item="heading",
                marker=heading.group(3),
                module=module,
                title=heading.group(2).strip(),
                edges=parse_edges(heading.group(5)),
                parent=up,
                file=file,
            )
            items.append(current)
            stack.append((level, current.id))
            collecting = True
            continue
        node = NODE.match(line)
        if node is not None:
            _close(current, body)
            body, collecting, current = [], False, None
            up = stack[-1][1] if stack else parent
            items.append(
                Item(
                    id=node.group(1),
                    item="node",
                    marker="node",
                    module=module,
                    title=node.group(2).strip(),
                    edges=parse_edges(node.group(3)),
                    parent=up,
                    file=file,
                )
            )
            continue
        if collecting:
            body.append(line)
    _close(current, body)
    return items


def parse_graph(root: Path) -> list[Item]:
    """Return every item of the graph rooted in ``root`` (both trees, F# files followed, in reading order)."""
    out: list[Item] = []
    seen: set[str] = set()

    def walk(name: str, module: str, parent: str | None) -> None:
        path = root / name
        if name in seen or not path.is_file():
            return
        seen.add(name)
        for item in parse_file(path.read_text(encoding="utf-8"), module, name, parent):
            out.append(item)
            if item.marker == "F#":
                walk(f"{'MEMORY' if module == 'memory' else 'PURSUIT'}_{item.id}.md", module, item.id)

    for name, module in ROOTS:
        walk(name, module, None)
    return out
