"""The knowledge graph -> bytes, laid out as the reference server's ``saveGraph`` writes it (spec §2).

Entity lines first, then relation lines, each in graph order; lines joined with ``"\\n"`` and no
trailing newline, so an empty graph is a 0-byte file. Records nobody changed keep their exact
text (an older key order, a fork's extra keys); a line of another ``type`` stays among the
entities, where it was. A file that used ``\\r\\n`` keeps it, and so does one with a BOM
(nothing of a file is dropped; ``validate`` warns that the server's ``JSON.parse`` fails on it).
"""

from __future__ import annotations

from memcore_mcpmemory._parse import Graph

__all__ = ["render"]


def render(graph: Graph) -> bytes:
    """Return the bytes of ``graph`` as the server would write it (unreadable records are never rendered).

    Raises:
        ValueError: The graph holds an unreadable record (writers refuse such a file first).
    """
    if any(r.type == "bad" for r in graph.records):
        raise ValueError("mcpmemory: a graph with unreadable lines is never rendered")
    lines = [r.text for r in graph.records if r.type != "relation"]
    lines += [r.text for r in graph.records if r.type == "relation"]
    text = ("\r\n" if graph.crlf else "\n").join(lines)
    return (b"\xef\xbb\xbf" if graph.bom else b"") + text.encode("utf-8")
