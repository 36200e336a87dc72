"""The ``/memories`` tree over a memcore store: paths, the path ↔ entry table, view formatting.

Pure logic shared by :mod:`memcore.adapters.anthropic`, importable without the Anthropic SDK.
The rules and strings are those of ``../shared/specs/anthropic-memory-tool.md`` (§3 results,
§4 formatting, §5 paths); :class:`TreeError` carries the exact result text an SDK handler
returns for the case.

Each stored entry is one virtual file whose text is the entry's body. Where it sits in the tree
is decided per format by one :class:`PathScheme` (see :data:`SCHEMES`):

* ``file`` (WhiteBox, Box-memory): the entry's own file in the store, relative to the store root
  (``languages.md``, ``memories/fact__languages.md``); a WhiteBox observation, one block of a
  monthly log, is its id (``observations/2026-02.md#1``).
* ``title`` (RightMemory, Maka, mcpmemory, claudecode, basic-memory): the entry's title, plus
  ``.md`` unless the title already ends in a file extension (``notes.txt``); ``/`` in a title
  makes folders. An untitled entry is named after its id. Two entries with one title are told
  apart by their id (``Title~<id>.md``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from memcore.contract import FileBackedProvider, MemoryProvider
from memcore.models import Kind, MemoryEntry

__all__ = [
    "LINE_NUMBER_WIDTH",
    "MAX_LINES",
    "ROOT",
    "SCHEMES",
    "PathScheme",
    "Tree",
    "TreeError",
    "format_size",
    "listing",
    "numbered",
    "relative_path",
    "scheme_for",
]

#: The root every path must sit under (spec §5).
ROOT = "/memories"
#: The most lines ``view`` shows of one file (spec §3).
MAX_LINES = 999_999
#: Line numbers are right-aligned to the width of :data:`MAX_LINES` (spec §4).
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
#: The size a directory is listed with: a folder's ``st_size`` on ext4, as the SDK prints it.
DIR_SIZE = 4096
#: Endings a title may already carry as its file name (otherwise ``.md`` is added).
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_ENCODED_DOTS = re.compile(r"%2e", re.IGNORECASE)


class TreeError(Exception):
    """A command that cannot be done; ``str(exc)`` is the tool result text (spec §3)."""


def relative_path(path: str) -> str:
    """Return ``path`` relative to ``/memories`` ("" for the root), refusing what escapes it.

    Stricter than the SDK's prefix check (spec §5): ``/memories_backup/x`` is refused, so are
    ``..`` segments (also ``..\\`` and URL-encoded ``%2e%2e``), backslashes and NUL; so are
    control characters, line and paragraph separators and lone surrogates (a name is one line
    of text), and a name that begins or ends with whitespace (stores trim titles, so the file
    would not be found again at the path given).

    Args:
        path: The ``path`` / ``old_path`` / ``new_path`` of a command.

    Returns:
        The POSIX path below ``/memories`` without leading or trailing ``/``, NFC.

    Raises:
        TreeError: With the SDK's ``Path must start with /memories, got: …`` or ``Path … would
            escape /memories directory`` text, or naming the character or space refused.
    """
    if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
        raise TreeError(f"Path must start with {ROOT}, got: {path}")
    if "\x00" in path:
        raise TreeError(f"Path {path!r} would escape /memories directory (it holds a NUL character)")
    rest = path[len(ROOT) :]
    decoded = _ENCODED_DOTS.sub(".", rest).replace("%2f", "/").replace("%2F", "/")
    parts = [p for p in re.split(r"[/\\]", decoded) if p not in ("", ".")]
    if ".." in parts or "\\" in rest:
        raise TreeError(f"Path {path} would escape /memories directory")
    for char in rest:
        if unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cs"):
            raise TreeError(
                f"Path {path!r} is refused: a name in /memories is one line of printable text, and this one "
                f"holds U+{ord(char):04X} (remove it)"
            )
    for part in parts:
        if part != part.strip():
            raise TreeError(
                f"Path {path!r} is refused: the name {part!r} begins or ends with a space, which the store "
                "would trim, so the file could not be found at this path (remove the space)"
            )
    return unicodedata.normalize("NFC", "/".join(parts))


def format_size(size: int) -> str:
    """Return a size as the SDK lists it: ``0B``, ``19B``, ``4K``, ``1.5K`` (spec §4).

    Args:
        size: Bytes (>= 0).
    """
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / 1024**i
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def numbered(lines: Sequence[str], start: int) -> str:
    """Return ``lines`` numbered from ``start``, one ``{n:>6}\\t{line}`` per line (spec §4)."""
    return "\n".join(f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{line}" for n, line in enumerate(lines, start))


def listing(path: str, rel: str, files: dict[str, int]) -> str:
    """Return the ``view`` text of a directory: two levels, sorted, hidden names skipped (spec §4).

    Args:
        path: The path as the command gave it (echoed in every line).
        rel: The directory, relative to ``/memories`` ("" for the root).
        files: Every file of the tree (relative path → size in bytes).
    """
    prefix = f"{rel}/" if rel else ""
    below: dict[str, int | None] = {}  # relative to the directory; None: a directory
    for name, size in files.items():
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix) :].split("/")
        if any(p.startswith(".") for p in parts):
            continue
        for depth in range(1, min(len(parts), 2) + 1):
            key = "/".join(parts[:depth])
            below[key] = size if depth == len(parts) else None
    lines = [f"{format_size(DIR_SIZE)}\t{path}"]
    for key in sorted(below, key=lambda k: k.split("/")):
        shown = below[key]
        if shown is None:
            lines.append(f"{format_size(DIR_SIZE)}\t{path}/{key}/")
        else:
            lines.append(f"{format_size(shown)}\t{path}/{key}")
    header = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    return header + "\n" + "\n".join(lines)


@dataclass(frozen=True)
class PathScheme:
    """How one format's entries sit in the tree: the one place the path ↔ entry mapping lives.

    Attributes:
        kind: ``file`` (the entry's file in the store) or ``title`` (a file named after the title).
        rule: The format's naming rule, quoted when a new path does not follow it.
        pattern: For ``file`` schemes, what a new file's path must match; its named groups
            ``team``, ``kind`` and ``slug`` fill the new entry (Box-memory).
    """

    kind: Literal["file", "title"]
    rule: str = ""
    pattern: re.Pattern[str] | None = None

    def path_of(self, provider: MemoryProvider, entry: MemoryEntry) -> str:
        """Return the relative path ``entry`` is shown at (before telling twins apart)."""
        if self.kind == "file":
            if entry.id and "#" in entry.id:
                return entry.id  # one block of a shared file (a WhiteBox observation)
            if isinstance(provider, FileBackedProvider):
                return provider.file_of(entry)
            return entry.id or ""
        name = entry.title.strip() or _safe_id(entry.id or "untitled")
        return name if _EXTENSION.search(name) else f"{name}.md"

    def new_entry(self, rel: str, text: str) -> MemoryEntry:
        """Return the entry ``create`` adds for a new file at ``rel`` holding ``text``.

        Raises:
            TreeError: ``rel`` does not follow the format's naming rule (:attr:`rule`).
        """
        stem = PurePosixPath(rel).name
        if self.kind == "title":
            title = rel[: -len(".md")] if rel.endswith(".md") else rel
            return MemoryEntry(title=title, body=text)
        match = self.pattern.fullmatch(rel) if self.pattern is not None else None
        if match is None:
            raise TreeError(f"Cannot create {ROOT}/{rel}: {self.rule}")
        groups = match.groupdict()
        if "slug" in groups:  # Box-memory: the file name's kind is the store's own kind name
            return MemoryEntry(
                title=groups["slug"].replace("-", " "),
                body=text,
                scope=groups.get("team"),
                extra={"box": {"slug": groups["slug"], "kind": groups["kind"]}},
            )
        return MemoryEntry(id=rel, kind=Kind.FACT, title=stem.removesuffix(".md"), body=text)


def _safe_id(entry_id: str) -> str:
    return re.sub(r"[/\\#\x00]", "_", entry_id)


#: format name → its scheme. A format not listed (a third party's) gets the ``title`` scheme.
SCHEMES: dict[str, PathScheme] = {
    "whitebox": PathScheme(
        "file",
        rule="a WhiteBox fact is a markdown file (a path ending in .md outside observations/); "
        "observations are added by the store's own tools",
        pattern=re.compile(r"(?!observations/)(?!proposals/)[^#]+\.md"),
    ),
    "box": PathScheme(
        "file",
        rule="Box-memory files are memories/<kind>__<slug>.md or teams/<team>/memories/<kind>__<slug>.md "
        "(slug: lowercase letters, digits and -)",
        pattern=re.compile(r"(?:teams/(?P<team>[a-z0-9-]+)/)?memories/(?P<kind>[a-z0-9-]+)__(?P<slug>[a-z0-9-]+)\.md"),
    ),
}


def scheme_for(provider: MemoryProvider) -> PathScheme:
    """Return the :class:`PathScheme` of ``provider``'s format (``title`` when not listed)."""
    return SCHEMES.get(getattr(provider, "format_name", ""), PathScheme("title"))


@dataclass
class Tree:
    """One read of the store as a tree: relative path → entry, and the folders they make.

    Attributes:
        entries: Relative file path → the entry shown there.
        folders: Every folder path that holds a file ("" is the root).
    """

    entries: dict[str, MemoryEntry] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, provider: MemoryProvider, scheme: PathScheme, entries: Iterable[MemoryEntry]) -> Tree:
        """Build the tree of ``entries`` (what the session may see) under ``scheme``."""
        tree = cls(folders={""})
        for entry in entries:
            path = unicodedata.normalize("NFC", scheme.path_of(provider, entry))  # as relative_path gives
            if path in tree.entries:  # a second entry with the same title: name it by its id too
                stem, dot, ext = path.rpartition(".")
                path = f"{stem}~{_safe_id(entry.id or '')}{dot}{ext}"
            tree.entries[path] = entry
            parts = path.split("/")[:-1]
            tree.folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return tree

    def under(self, rel: str) -> list[str]:
        """Return the file paths at or below ``rel`` (a file path or a folder)."""
        return [p for p in self.entries if p == rel or p.startswith(f"{rel}/") or not rel]

    def sizes(self) -> dict[str, int]:
        """Return relative path → size of the file text in UTF-8 bytes."""
        return {p: len(e.body.encode("utf-8")) for p, e in self.entries.items()}
