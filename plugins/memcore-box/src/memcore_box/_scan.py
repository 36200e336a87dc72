"""Iterating fast: a memory file's order keys, and its frontmatter, read from its bytes.

:func:`stream_entries <memcore_box._stream.stream_entries>` needs from each file, before it maps
any, only whether the file is a memory (not an orphan), its ``id``, ``title`` and
``created_at``. :func:`order_keys` answers that from the bytes of a file in the layout memcore
writes, when it is sure: the answer is then what :func:`memcore_box._parse.read_meta` would
give (a file it does not orphan, with those three values); otherwise ``None``, and the caller
reads the file the general way. :func:`flat_meta` gives, for the same files, the whole of
``read_meta``'s answer (the frontmatter as plain Python and the body) without decoding and
splitting the text first. ``MEMCORE_BOX_STREAM_FAST=0`` (or the YAML fast paths off,
``MEMCORE_YAML_FAST=0``) turns both off.

Sure means: no carriage return (so decoding changes no line break), ``---`` on the first line,
a closing ``---``/``...`` line, bytes after it that are UTF-8, and between them at most 64 KiB
of ``key: value`` lines at column 0 (so ASCII), each key an identifier that reads as a string
and none twice, each value one that the round-trip loader surely reads without an error: plain
text whose first character starting with a letter or ``_`` (text, a boolean or null), a UTC
timestamp as memcore writes it (read as itself), a decimal number, ``true``/``false``, quoted
text with nothing to escape, or a flow list of such items. ``id`` and ``kind`` must be there,
and ``id``, ``kind``, ``title`` and ``created_at`` must be plain text read as a string or
timestamps (values read as themselves).
plugins/memcore-box/tests/test_box_scan.py compares both with ``read_meta``.
"""

from __future__ import annotations

import re
from typing import Any

from memcore import frontmatter
from memcore.frontmatter import UNSURE, _own_value, _reads_as_str
from memcore.switches import switch_on

__all__ = ["ENV", "enabled", "flat_meta", "order_keys"]

ENV = "MEMCORE_BOX_STREAM_FAST"

# Plain text read as itself: a first character no implicit resolver rule starts with (a letter
# but t/f/n, either case, or "_"), then printable ASCII without "#", ",", ":", brackets or
# braces, not ending in a blank (what memcore.frontmatter._SURE_TEXT reads).
_PLAIN = rb"[a-eg-mo-su-zA-EG-MO-SU-Z_](?:[ !\"$-+\--9;-Z\\^-z|~]*[!\"$-+\--9;-Z\\^-z|~])?"
# Any plain text starting with a letter or "_", same characters: read as text, a boolean or null,
# never an error.
_WORDS = rb"[A-Za-z_](?:[ !\"$-+\--9;-Z\\^-z|~]*[!\"$-+\--9;-Z\\^-z|~])?"
_STAMP = rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z"
_NUMBER = rb"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?"
_QUOTED = rb'"[ !#-\[\]-~]*"|\'[ -&(-~]*\''  # printable, nothing to escape, no quote inside
_ITEM = rb"(?:" + _WORDS + rb"|" + _NUMBER + rb"|" + _QUOTED + rb")"
_VALUE = rb"(?:" + _WORDS + rb"|" + _STAMP + rb"|" + _NUMBER + rb"|" + _QUOTED
_VALUE += rb"|\[(?:" + _ITEM + rb"(?:, " + _ITEM + rb")*)?\])"
_LINES = re.compile(rb"(?:[A-Za-z_][A-Za-z0-9_]{0,99}: " + _VALUE + rb"\n)+\Z")
_TEXT = re.compile(rb"(?:" + _PLAIN + rb"|" + _STAMP + rb")\Z")
_WORDS_TEXT = re.compile(_WORDS + rb"\Z")
_CLOSE = re.compile(rb"\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)")
# The keys of _LINES that do not read as strings (YAML 1.2: a boolean or null; the other letters
# and "_" start no implicit type). tests/test_box_scan.py checks this against the resolver.
_NOT_TEXT_KEYS = frozenset({b"true", b"True", b"TRUE", b"false", b"False", b"FALSE", b"null", b"Null", b"NULL"})
_NOT_TEXT = frozenset(key.decode("ascii") for key in _NOT_TEXT_KEYS)
_CHECKED_TEXT = frozenset({"id", "kind", "title", "created_at"})  # what order_keys checks with _is_text
_MAX_YAML = 64 * 1024  # well under frontmatter.MAX_VALUES values, whatever the lines hold


def enabled() -> bool:
    """Return whether :func:`order_keys` is used (``MEMCORE_BOX_STREAM_FAST`` not ``0``, YAML fast paths on)."""
    return frontmatter.FAST_PATHS and switch_on(ENV)


def _is_text(value: bytes) -> bool:
    """Whether a value of :data:`_LINES` is plain text the round-trip loader reads as itself."""
    return bool(_TEXT.match(value)) or (bool(_WORDS_TEXT.match(value)) and _reads_as_str(value.decode("ascii")))


def _utf8_after(data: bytes, start: int) -> bool:
    """Whether ``data[start:]`` is UTF-8 (then the whole file decodes: what comes before is ASCII)."""
    if data.isascii():
        return True
    try:
        data[start:].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def order_keys(data: bytes) -> tuple[str, str | None, str | None] | None:
    """Return ``(id, title, created_at)`` of a memory file in memcore's layout, or ``None`` when unsure.

    Args:
        data: The file's bytes.

    Returns:
        The three values as :func:`memcore_box._parse.read_meta` reads them (``title`` and
        ``created_at`` ``None`` when absent); ``None`` for anything outside the sure subset (see
        the module docstring), orphans included.
    """
    if not data.startswith(b"---\n") or b"\r" in data:
        return None
    closing = _CLOSE.search(data, 3)
    if closing is None:
        return None
    yaml = data[4 : closing.start() + 1]
    if len(yaml) > _MAX_YAML or not _LINES.match(yaml) or not _utf8_after(data, closing.end()):
        return None
    pairs = dict(line.split(b": ", 1) for line in yaml[:-1].split(b"\n"))
    if len(pairs) != yaml.count(b"\n"):
        return None  # a key twice
    entry_id, kind = pairs.get(b"id"), pairs.get(b"kind")
    title, created = pairs.get(b"title"), pairs.get(b"created_at")
    if entry_id is None or kind is None or not _is_text(entry_id) or not _is_text(kind):
        return None
    if (title is not None and not _is_text(title)) or (created is not None and not _is_text(created)):
        return None
    if not _NOT_TEXT_KEYS.isdisjoint(pairs):
        return None
    return (
        entry_id.decode("ascii"),
        None if title is None else title.decode("ascii"),
        None if created is None else created.decode("ascii"),
    )


def flat_meta(data: bytes, *, checked: bool = False) -> tuple[dict[str, Any], str] | None:
    """Return what :func:`memcore_box._parse.read_meta` returns for a file in the sure form, or ``None``.

    For the files :func:`order_keys` accepts (see the module docstring; ``title`` and
    ``created_at`` may be anything the lines allow here), ``(frontmatter, body)``: each
    value read by :func:`memcore.frontmatter.load_own`'s own value reader, as ``load_own``
    reads such lines, and the body decoded after the closing line. ``None`` for anything
    else (an orphan too): the caller reads it the general way.

    Args:
        data: The file's bytes.
        checked: ``order_keys(data)`` was not ``None`` (the lines need no second look).
    """
    if not checked and (not data.startswith(b"---\n") or b"\r" in data):
        return None
    closing = _CLOSE.search(data, 3)
    if closing is None:
        return None
    end = closing.start()
    if not checked and (end - 3 > _MAX_YAML or not _LINES.match(data, 4, end + 1)):
        return None
    try:
        body = data[closing.end() :].decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = data[4:end].decode("ascii").split("\n")
    meta: dict[str, Any] = {}
    as_text = _CHECKED_TEXT if checked else ()  # order_keys found these read as themselves
    for line in lines:
        key, _, text = line.partition(": ")
        value = text if key in as_text else _own_value(text)
        if value is UNSURE or key in meta or key in _NOT_TEXT:
            return None
        meta[key] = value
    for key in ("id", "kind"):
        if meta.get(key) is None or not str(meta[key]).strip():
            return None
    return meta, body
