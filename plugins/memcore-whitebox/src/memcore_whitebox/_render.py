"""Writing observation blocks exactly as the WhiteBox reference writer lays them out.

Reference notes 1-2 (``formatObservation`` / ``appendObservation`` in whitebox-mcp): a block is
a fence line, ``---``, ``date``, ``source``, ``tags: ["a", "b"]``, ``confidence``, then the
optional ``source_ref``, ``context``, ``kind`` in that order, ``---``, an empty line, the
trimmed body and the closing fence; the fence is four backticks when the body holds three.
A new month file starts with ``# Observations — <Month YYYY>``, a blank line, the append-only
sentence, a blank line, ``---`` and a blank line; every later block is preceded by a blank
line, ``---`` and a blank line.

memcore adds keys after the reference ones when an entry carries more than WhiteBox has
(``title``, ``scope``, unknown keys read from other tools, and one ``memcore:`` line holding a
JSON object with the rest). The reference parser ignores keys it does not know; YAML reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "field_scalar",
    "json_line",
    "month_header",
    "reference_reads_differently",
    "render_block",
    "yaml_dq",
    "yaml_scalar",
]

# What the reference writer writes raw and memcore too (yaml_scalar): text that YAML 1.1 and 1.2
# readers both read back as the same string, in the shapes the reference writer produces.
_RAW = re.compile(r"^[A-Za-z_(/][^#\[\]{},\"'`|>&*!%@]*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YAML_WORDS = frozenset({"true", "false", "null", "~", "yes", "no", "on", "off", "y", "n"})
# Characters YAML does not accept raw inside a double-quoted scalar (or reads as line breaks).
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")

HEADER_SENTENCE = "Append-only. Each entry is one observation. Never edit another agent's entries."


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def yaml_dq(value: str) -> str:
    """Return ``value`` as a double-quoted scalar that both JSON and YAML 1.2 read back exactly."""
    return _YAML_UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))


def json_line(value: Any) -> str:
    """Return ``value`` as one line of JSON that is also a valid YAML 1.2 flow value."""
    return _YAML_UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False))


def yaml_scalar(value: str) -> str:
    """Return ``value`` unquoted when YAML reads it back as the same string, else double-quoted.

    The reference writer writes values raw (``source: claude-opus-4-7``); memcore does the same
    whenever that is safe and quotes the rest (the reference parser then keeps the quotes):
    everything a YAML 1.1 or 1.2 reader would type (``yes``, ``0x1F``, ``1e3``, ``~``,
    ``2024-01-01``, ``10:00``...).
    """
    # memcore reads dates as text, but YAML 1.1 and 1.2 readers type 2024-01-01 as a date
    if (
        value
        and value == value.strip()
        and "\n" not in value
        and not _DATE.match(value)
        and _RAW.match(value)
        and value.lower() not in _YAML_WORDS
        and ": " not in value
        and " #" not in value
        and not value.endswith(":")
        and not value.startswith("//")
    ):
        return value
    return yaml_dq(value)


#: The first characters of a plain scalar that no YAML reader takes for syntax (an indicator,
#: a quote, a flow collection, a comment, an alias or a tag would be).
_PLAIN_START = re.compile(r"^(?:[A-Za-z0-9_(/.~+$^=<]|-[^\s])")


def field_scalar(value: str) -> str:
    """Return an observation field's value as the reference writer writes it, quoted only where YAML must.

    The reference writer writes ``key: value`` raw and its parser reads the line's text back
    as is (quotes kept). So a value is written raw whenever YAML can hold it as a plain scalar
    (``source: yes``, ``date: 2026-04-12``, ``context: 10:00``; memcore's reader, like the
    reference parser, reads these fields as the text written). Only where YAML requires quoting
    (``: `` or `` #`` inside, a leading indicator, surrounding blanks, a line break, characters
    YAML rejects) is it double-quoted; the reference parser then reads the quotes too, which
    :func:`reference_reads_differently` tells.
    """
    if reference_reads_differently(value):
        return yaml_dq(value)
    return value


def reference_reads_differently(value: str) -> bool:
    """Whether :func:`field_scalar` must quote ``value`` (the reference parser keeps the quotes)."""
    return not (
        value
        and value == value.strip()
        and "\n" not in value
        and "\r" not in value
        and _PLAIN_START.match(value) is not None
        and ": " not in value
        and " #" not in value
        and "\t#" not in value
        and not value.endswith(":")
        and not value.startswith("//")
        and _YAML_UNSAFE.search(value) is None
    )


def render_tags(tags: Iterable[str]) -> str:
    """Return ``["a", "b"]``: each tag double-quoted, as the reference writer does."""
    return "[" + ", ".join(yaml_dq(tag) for tag in tags) + "]"


def fence_for(body: str) -> str:
    """Return the fence for ``body``.

    Three backticks; four when the body holds three (as the reference writer does); longer
    when a body line starts with a longer run, so the body can never close the block.
    """
    if "```" not in body:
        return "```"
    longest = 3
    for m in re.finditer(r"^(`{3,})", body, re.M):
        longest = max(longest, len(m.group(1)))
    return "`" * (longest + 1)


def render_block(lines: Iterable[str], body: str) -> str:
    """Return one observation block (no trailing newline).

    Args:
        lines: Frontmatter lines (``key: value``), in order.
        body: The body; trimmed as the reference writer trims it.
    """
    text = body.strip()
    fence = fence_for(text)
    front = "\n".join(["---", *lines, "---"])
    return f"{fence}\n{front}\n\n{text}\n{fence}"


#: English month names, as in the reference header ("April 2026"), whatever the locale.
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def month_header(month: str) -> str:
    """Return the reference writer's header of a new month file (``month`` is ``YYYY-MM``).

    Ends with the ``---`` separator and a blank line, ready for the first block.
    """
    year, mon = month.split("-")
    label = f"{_MONTHS[int(mon) - 1]} {year}"
    return f"# Observations \u2014 {label}\n\n{HEADER_SENTENCE}\n\n---\n\n"
