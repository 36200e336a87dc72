"""Readability of what memcore writes: memcore-only bytes per entry, per format (issue 19).

A file memcore writes should be what the format's own writer would write; memcore-only
metadata appears only for a field the target cannot hold natively. This measures it:

- **plain add**: a fresh store of each format, one ``add`` of a title and a body (the fields
  every format holds), then the bytes of memcore-only metadata in the store's markdown files
  (target 0);
- **migration**: each ``examples/`` store migrated into a fresh store of each format, then the
  median (and the maximum) of the memcore-only bytes per target entry.

memcore-only metadata, as each writer puts it: a ``<!-- memcore: {…} -->`` line or a line of
the file's ``<!-- memcore: items`` header (RightMemory; the header's opening and closing lines
count once), a ``memcore:`` key with its indented continuation lines (WhiteBox front matter
and observation fields, Box-memory front matter), an ``mcData=`` / ``mcData_<n>=`` attribute of a
``<!-- maka-memory: … -->`` comment (Maka). Each such piece belongs to one entry; entries with
none count 0. Store-level JSON files (Box's ``_box-memory.json``) are not entries and are left
out. Run: ``python benchmarks/bench_readability.py`` (prints a markdown table).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry
from memcore.registry import get_registry

REPO = Path(__file__).resolve().parents[1]
FORMATS = ("whitebox", "box", "rightmemory", "maka")
EXAMPLES = {
    "whitebox": REPO / "examples" / "whitebox-vault",
    "box": REPO / "examples" / "box-workspace",
    "rightmemory": REPO / "examples" / "rightmemory",
    "maka": REPO / "examples" / "maka" / "MEMORY.md",
}

_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?memcore:(?:\s|$)")
_COMMENT_LINE = re.compile(r"^\s*<!-- memcore: .* -->\s*$")
_HEADER_OPEN = "<!-- memcore: items"
_MAKA_ATTR = re.compile(r" mcData(?:_\d+)?=\S+")


def memcore_pieces(text: str) -> list[int]:
    """Return the size in UTF-8 bytes of every memcore-only piece of one markdown file."""
    pieces: list[int] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip("\r\n") == _HEADER_OPEN:
            # RightMemory's header: one line per item (its id and comment), opened and closed once
            frame = len(line.encode("utf-8"))
            i += 1
            while i < len(lines) and lines[i].strip() != "-->":
                pieces.append(len(lines[i].encode("utf-8")) + frame)
                frame, i = 0, i + 1
            if i < len(lines) and pieces:
                pieces[-1] += len(lines[i].encode("utf-8"))
        elif _COMMENT_LINE.match(line):
            pieces.append(len(line.encode("utf-8")))
        elif (found := _KEY_LINE.match(line)) is not None:
            size, indent = len(line.encode("utf-8")), len(found.group(1))
            while (
                i + 1 < len(lines) and lines[i + 1].strip() and len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent
            ):
                i += 1
                size += len(lines[i].encode("utf-8"))
            pieces.append(size)
        else:
            attrs = _MAKA_ATTR.findall(line)
            if attrs:
                pieces.append(sum(len(a.encode("utf-8")) for a in attrs))
        i += 1
    return pieces


def store_pieces(location: str) -> list[int]:
    """Return the memcore-only pieces of every markdown file of a store (a folder or one file)."""
    root = Path(location)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*.md") if p.is_file())
    return [size for path in files for size in memcore_pieces(path.read_text(encoding="utf-8", errors="replace"))]


def _new_store(fmt: str, where: Path) -> str:
    location = str(where / "MEMORY.md") if fmt == "maka" else str(where / "store")
    if fmt == "maka":
        where.mkdir(parents=True, exist_ok=True)
    get_registry().get(fmt).init_store(location)
    return location


#: A plain add per format: a title and a body with the fields that format's own items have
#: (WhiteBox wants a source; Maka's ``origin=manual`` reads as source ``manual``, and its reader
#: gives a section's content without a final newline, as WhiteBox's does for a stable file).
PLAIN: dict[str, MemoryEntry] = {
    "whitebox": MemoryEntry(kind=Kind.FACT, title="Editor: helix", body="I use helix as my editor.\n", source="chat"),
    "box": MemoryEntry(kind=Kind.FACT, title="Editor: helix", body="I use helix as my editor.\n"),
    "rightmemory": MemoryEntry(kind=Kind.FACT, title="Editor: helix", body="I use helix as my editor.\n"),
    "maka": MemoryEntry(kind=Kind.FACT, title="Editor: helix", body="I use helix as my editor.", source="manual"),
}


def plain_add_bytes(fmt: str, where: Path) -> int:
    """Return the memcore-only bytes a plain add (:data:`PLAIN`) writes into a fresh store."""
    location = _new_store(fmt, where)
    before = sum(store_pieces(location))
    with get_registry().get(fmt)(location) as store:
        store.add(PLAIN[fmt])
    return sum(store_pieces(location)) - before


def migration_bytes(src_fmt: str, fmt: str, where: Path) -> tuple[float, int, int]:
    """Return ``(median, max, entries)`` of memcore-only bytes per entry of examples/<src> migrated into ``fmt``."""
    target = str(where / "MEMORY.md") if fmt == "maka" else str(where / "store")
    where.mkdir(parents=True, exist_ok=True)
    migrate(f"{src_fmt}:{EXAMPLES[src_fmt]}", f"{fmt}:{target}", validate=False)
    with get_registry().get(fmt)(target, read_only=True) as store:
        entries = sum(1 for _ in store.iter_entries())
    pieces = store_pieces(target)
    per_entry = pieces + [0] * max(0, entries - len(pieces))
    return statistics.median(per_entry), max(per_entry, default=0), entries


def main() -> None:
    """Print the figures as a markdown table (the one docs/mapping.md shows)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("MEMCORE_STATE_DIR", str(Path(tmp) / "state"))
        base = Path(tmp)
        sources = " | ".join(f"from examples/{s}: median / max" for s in FORMATS)
        print(f"| target | plain add (bytes) | {sources} |")
        print("|---|---|" + "---|" * len(FORMATS))
        for fmt in FORMATS:
            cells = [str(plain_add_bytes(fmt, base / f"add-{fmt}"))]
            for src in FORMATS:
                median, largest, _ = migration_bytes(src, fmt, base / f"{src}-to-{fmt}")
                cells.append(f"{median:g} / {largest}")
            print(f"| {fmt} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
