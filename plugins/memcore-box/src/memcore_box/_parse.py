"""Bytes of a memory file -> the parsed file (frontmatter, body, key lines), fail-open.

:func:`parse` gives a :class:`_File` or the ``box.orphan`` diagnostic (with its line) of a file
that is no memory; it never raises for bad bytes. ``fast=True`` (the read and check paths) takes
plain frontmatter from libyaml where that is exact (:func:`parse_fast`), else the round-trip
parse decides; both give the same values.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from memcore.errors import ParseError
from memcore.frontmatter import FrontmatterDocument, load_fast, load_own, parse_frontmatter, split_frontmatter
from memcore.models import Diagnostic, Severity
from memcore.storage import Item, TextFile, join

__all__ = [
    "_File",
    "_PlainMeta",
    "_key_lines",
    "is_memory_name",
    "parse",
    "parse_fast",
    "plain_meta",
    "read_memory_files",
    "read_meta",
]


@dataclass
class _File:
    """One parsed memory file.

    ``meta`` is the frontmatter. Files parsed with ``_parse(..., fast=True)`` (the checking
    path, and ``_read_file`` for get/update/delete) hold, where it is exact, the plain dict
    :func:`~memcore.frontmatter.load_own` or :func:`~memcore.frontmatter.load_fast` gave, equal
    to ``plain(doc.metadata)``, as a :class:`_PlainMeta` knowing its keys' lines, and parse
    ``doc`` only if something asks for it (``update()`` does when it cannot patch the text from
    the plain values). Other files hold the round-trip ``CommentedMap`` of ``doc`` (line
    information for :meth:`~memcore.frontmatter.YAMLWriter.patch`).
    """

    path: str
    version: str
    size: int
    text: TextFile
    yaml_text: str
    meta: Any
    body: str
    file_id: str | None = None
    _doc: FrontmatterDocument | None = field(default=None, repr=False)

    @property
    def doc(self) -> FrontmatterDocument:
        """The round-trip document (parsed on first use for files of the checking path)."""
        if self._doc is None:
            self._doc = parse_frontmatter(self.text.text, path=self.path)
        return self._doc

    @property
    def folder(self) -> str:
        """``posixpath.dirname(path)``: the paths joined by :func:`memcore.storage.join` hold no ``//``."""
        head = self.path.rpartition("/")[0]
        return posixpath.dirname(self.path) if head.endswith("/") else head

    @property
    def name(self) -> str:
        """``posixpath.basename(path)``."""
        return self.path.rpartition("/")[2]


class _KeyLines:
    """``lc`` of a :class:`_PlainMeta`: ``key(k)`` gives ``(line, column)`` like ruamel's maps."""

    __slots__ = ("lines",)

    def __init__(self, lines: dict[str, int]) -> None:
        self.lines = lines

    def key(self, key: str) -> tuple[int, int]:
        """Return the 0-based line in the YAML text and the column (0) of top-level ``key``.

        Raises:
            KeyError: No such key.
        """
        return self.lines[key], 0


class _PlainMeta(dict[Any, Any]):
    """Plain frontmatter (from :func:`load_fast`) that knows its top-level keys' lines.

    Diagnostics name the line of the field they are about (``record._line_of`` asks
    ``meta.lc.key(k)``); this gives the line ruamel's round-trip map gives.
    """

    __slots__ = ("lc",)

    def __init__(self, meta: dict[Any, Any], lines: dict[str, int]) -> None:
        super().__init__(meta)
        self.lc = _KeyLines(lines)


# A top-level key at column 0 in the form ``key:`` (plain key, followed by a blank or the end).
_TOP_KEY = re.compile(r"([A-Za-z0-9_][^:#\n]*?):(?:[ ]|\Z)")


def _key_lines(yaml_text: str, keys: list[Any]) -> dict[str, int] | None:
    """Return each top-level key's 0-based line in ``yaml_text``, or ``None`` when unsure.

    Sure only for a block mapping at column 0 whose every column-0 line (other than comments
    and ``- `` items of a key's sequence) is ``key:`` for the next key of ``keys`` in order,
    and without carriage returns (another line break for YAML). Anything else: ``None``.
    """
    if "\r" in yaml_text:
        return None
    lines: dict[str, int] = {}
    expected = iter(keys)
    for number, line in enumerate(yaml_text.split("\n")):
        if not line or line[0] in " \t#" or (line[0] == "-" and line[1:2] in ("", " ")):
            continue
        found = _TOP_KEY.match(line)
        if found is None or found.group(1) != next(expected, None):
            return None
        lines[found.group(1)] = number
    return lines if len(lines) == len(keys) else None


def is_memory_name(name: str) -> bool:
    # The authors' rebuild reads every *.md except README.md (and never _*.json); dot files are
    # hidden or the temp files of interrupted atomic writes.
    return name.lower().endswith(".md") and name.lower() != "readme.md" and not name.startswith(".")


def read_memory_files(
    folder: str, items: Iterable[Item], read: Callable[[str], tuple[bytes, str | None]]
) -> Iterator[tuple[Item, str, bytes, str | None]]:
    """Yield ``(item, path, bytes, version)`` of each memory file of ``folder``'s listing, in its order.

    Folders and other files (:func:`is_memory_name`) are passed over; each memory file is read
    with ``read`` (``storage.read`` or a :func:`memcore.storage.file_reader`), and one gone since
    the listing is skipped.
    """
    for item in items:
        if item.is_folder or not is_memory_name(item.name):
            continue
        path = join(folder, item.name)
        try:
            data, version = read(path)
        except FileNotFoundError:
            continue
        yield item, path, data, version


# -- reading ----------------------------------------------------------------------
def plain_meta(yaml_text: str | None, fast_yaml: bool = True) -> dict[Any, Any] | None:
    """Return frontmatter YAML as plain Python from libyaml, or ``None``: parse it round-trip.

    :func:`load_fast` where it is exact (it says ``None`` for a text that may hold an
    anchor, ``&name``, too); ``None`` also for no frontmatter and when :attr:`fast_yaml` is
    off.
    """
    if yaml_text is None or not fast_yaml:
        return None
    return load_fast(yaml_text)


def parse_fast(path: str, data: bytes, version: str, file_id: str | None, fast_yaml: bool = True) -> _File | None:
    """Return the memory file with plain frontmatter (``doc`` left unparsed), or ``None``.

    ``None`` whenever :meth:`_parse`'s round-trip parse must decide: undecodable bytes, no
    frontmatter or unclosed frontmatter, YAML outside :func:`load_fast`'s exact subset or
    malformed, no ``id`` or ``kind`` (the orphans, whose diagnostics come from there), a
    layout whose key lines :func:`_key_lines` cannot tell.
    """
    try:
        text = TextFile.decode(data, path=path)
        yaml_text, body, _ = split_frontmatter(text.text)
    except ParseError:
        return None
    if yaml_text is None or not fast_yaml:
        return None
    own = load_own(yaml_text)  # memcore's own layout: the keys' lines come with it
    if own is not None:
        meta, lines = own
    else:
        found = plain_meta(yaml_text, fast_yaml)
        if found is None:
            return None
        meta, key_lines = found, _key_lines(yaml_text, list(found))
        if key_lines is None:
            return None
        lines = key_lines
    for key in ("id", "kind"):
        if meta.get(key) is None or not str(meta.get(key)).strip():
            return None
    return _File(
        path=path,
        version=version,
        size=len(data),
        text=text,
        yaml_text=yaml_text,
        meta=_PlainMeta(meta, lines),
        body=body,
        file_id=file_id,
    )


def parse(
    path: str, data: bytes, version: str, file_id: str | None = None, *, fast: bool = False, fast_yaml: bool = True
) -> _File | Diagnostic:
    """Return the parsed memory file, or the ``box.orphan`` diagnostic of a file that is none.

    Args:
        path: Workspace-relative path (for the diagnostic and messages).
        data: The file's bytes.
        version: The storage's version token of those bytes.
        file_id: The storage's id of the file, if any.
        fast: Read-only use (checking): take plain frontmatter from :func:`parse_fast`
            when it can; the file's ``doc`` is then parsed only if asked for. Writes keep
            the default (round-trip ``meta`` with line information).
        fast_yaml: ``False`` turns the libyaml reader off (every file parsed round-trip).
    """
    if fast:
        quick = parse_fast(path, data, version, file_id, fast_yaml)
        if quick is not None:
            return quick

    def orphan(message: str, line: int | None = None) -> Diagnostic:
        return Diagnostic(
            path=path,
            line=line,
            code="box.orphan",
            severity=Severity.ERROR,
            message=f"{message}; the file is left as it is (fix it, then `memcore reindex`)",
        )

    try:
        text = TextFile.decode(data, path=path)
        doc = parse_frontmatter(text.text, path=path)
        yaml_text = split_frontmatter(text.text)[0] or ""
    except ParseError as exc:
        return orphan(str(exc).removeprefix(f"{path}:{exc.line}: ").removeprefix(f"{path}: "), exc.line)
    if not doc.has_frontmatter:
        return orphan("no frontmatter (the file must start with a '---' line)", 1)
    meta = doc.metadata
    if meta.get("id") is None or not str(meta.get("id")).strip():
        return orphan("frontmatter has no 'id'", 1)
    if meta.get("kind") is None or not str(meta.get("kind")).strip():
        return orphan("frontmatter has no 'kind'", 1)
    return _File(
        path=path,
        version=version,
        size=len(data),
        text=text,
        yaml_text=yaml_text,
        meta=meta,
        body=doc.body,
        file_id=file_id,
        _doc=doc,
    )


def read_meta(path: str, data: bytes, fast_yaml: bool = True) -> tuple[Mapping[str, Any], str] | None:
    """Return ``(frontmatter, body)`` of a memory file for reading, or ``None`` for an orphan.

    The read path: frontmatter comes back as plain Python from :func:`load_fast` (libyaml)
    when the YAML is in the subset it reads exactly, else from the round-trip parse that
    :func:`parse` (writes, validate) uses; both give the same values, so the same entry.
    Orphan decisions are :func:`parse`'s.
    """
    try:
        text = TextFile.decode(data, path=path).text
        yaml_text, body, _ = split_frontmatter(text)
    except ParseError:
        return None
    meta = plain_meta(yaml_text, fast_yaml)
    if meta is None:
        parsed = parse(path, data, "", fast_yaml=fast_yaml)
        return (parsed.meta, parsed.body) if isinstance(parsed, _File) else None
    for key in ("id", "kind"):
        if meta.get(key) is None or not str(meta.get(key)).strip():
            return None
    return meta, body
