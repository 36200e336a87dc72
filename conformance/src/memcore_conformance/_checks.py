"""Helpers shared by the suite's tests: snapshots, comparisons, damaged files, hypothesis profiles.

Private module (assertion rewriting is on for it); the public names are re-exported where a
provider needs them (:class:`BadFile` from :mod:`memcore_conformance`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore.provider import Capability

__all__ = [
    "CONTENT_FIELDS",
    "VICTIM_MARKER",
    "BadFile",
    "assert_entry_matches",
    "changed_files",
    "default_bad_files",
    "entry_overrides",
    "errors_of",
    "missing_capabilities",
    "read_tree",
    "register_hypothesis_profiles",
    "stat_tree",
]

#: Every field of MemoryEntry that is content (all but the ``version`` token).
CONTENT_FIELDS: tuple[str, ...] = tuple(name for name in MemoryEntry.model_fields if name != "version")

#: Text the bad-input test puts in its victim entry's body, so the default ``memcore_bad_files``
#: can find the file that holds it.
VICTIM_MARKER = "memcore-conformance-bad-input-victim"


@dataclass(frozen=True)
class BadFile:
    """One damaged file the bad-input test writes into a store.

    Attributes:
        name: Short case name, shown in failures (``"garbage-bytes"``).
        path: Path relative to the store root, posix separators.
        data: The complete bytes to write there.
        must_diagnose: The provider's ``validate()`` must report an ``error`` for this file
            (true for bytes that are not UTF-8). Otherwise reporting one is the provider's
            choice, but an error-reported file must then never be rewritten.
        must_read: The damage is harmless (BOM, CRLF, mixed line endings): the entry must still
            be read, with its id and title.
        preserved: What a rewrite of this file must keep: ``"bom"`` (still starts with a UTF-8
            BOM), ``"crlf"`` (no bare LF), or ``None``.
    """

    name: str
    path: str
    data: bytes
    must_diagnose: bool = False
    must_read: bool = False
    preserved: str | None = None


def read_tree(root: Path) -> dict[str, bytes]:
    """Return ``{posix path relative to root: bytes}`` of every regular file under ``root``."""
    out: dict[str, bytes] = {}
    if not root.exists():
        return out
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def stat_tree(root: Path) -> dict[str, tuple[int, int]]:
    """Return ``{posix path relative to root: (st_ino, st_mtime_ns)}`` of every file under ``root``."""
    out: dict[str, tuple[int, int]] = {}
    if not root.exists():
        return out
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            st = path.lstat()
            out[path.relative_to(root).as_posix()] = (st.st_ino, st.st_mtime_ns)
    return out


def is_index_file(path: str, patterns: Iterable[str]) -> bool:
    """Return whether ``path`` matches one of the ``index_files`` glob patterns."""
    return any(fnmatch.fnmatchcase(path, pat) for pat in patterns)


def changed_files(
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
    ident_before: Mapping[str, tuple[int, int]] | None = None,
    ident_after: Mapping[str, tuple[int, int]] | None = None,
    *,
    ignore: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Compare two snapshots; return ``{"added": [...], "removed": [...], "changed": [...], "rewritten": [...]}``.

    ``rewritten`` lists files with the same bytes but a new inode or mtime (written again).
    Paths matching the ``ignore`` glob patterns, and leftover temp files (``.*.tmp``), are
    left out.
    """
    patterns = [*ignore, ".*.tmp", "*/.*.tmp"]

    def keep(path: str) -> bool:
        return not is_index_file(path, patterns)

    added = sorted(p for p in after if p not in before and keep(p))
    removed = sorted(p for p in before if p not in after and keep(p))
    changed = sorted(p for p in before if p in after and before[p] != after[p] and keep(p))
    rewritten: list[str] = []
    if ident_before and ident_after:
        rewritten = sorted(
            p
            for p in before
            if p in after
            and before[p] == after[p]
            and keep(p)
            and p in ident_before
            and p in ident_after
            and ident_before[p] != ident_after[p]
        )
    return {"added": added, "removed": removed, "changed": changed, "rewritten": rewritten}


def errors_of(diagnostics: Iterable[Diagnostic]) -> list[str]:
    """Return the ``error``-severity diagnostics as strings (for readable assertion failures)."""
    return [str(d) for d in diagnostics if d.severity == Severity.ERROR]


_LONG = 4000


def _short(value: Any) -> Any:
    """Replace a very long string by its length, digest and ends, so failures stay readable."""
    if isinstance(value, str) and len(value) > _LONG:
        import hashlib

        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"<{len(value)} chars sha256:{digest} starts {value[:60]!r} ends {value[-60:]!r}>"
    return value


def view(entry: MemoryEntry, fields: Iterable[str]) -> dict[str, Any]:
    """Return the JSON form of ``entry`` restricted to ``fields`` (sorted), ``extra`` excluded."""
    data = entry.model_dump(mode="json")
    return {name: _short(data[name]) for name in sorted(fields) if name != "extra"}


def assert_entry_matches(got: MemoryEntry, expected: MemoryEntry, fields: Iterable[str], context: str) -> None:
    """Assert that ``got`` equals ``expected`` on ``fields``.

    ``extra`` (when listed) is compared as a subset: every ``expected.extra[ns][key]`` must be
    in ``got.extra`` with the same value (a provider may add keys of its own).
    """
    fields = set(fields)
    assert view(got, fields) == view(expected, fields), context
    if "extra" in fields:
        kept = {
            ns: {key: got.extra.get(ns, {}).get(key, "<missing>") for key in values}
            for ns, values in expected.extra.items()
        }
        assert kept == expected.extra, f"{context}: extra lost or changed"


def missing_capabilities(provider_cls: type[Any], marks: Iterable[pytest.Mark]) -> list[str]:
    """Return the capabilities named by ``memcore_requires`` marks that ``provider_cls`` lacks."""
    declared = set(getattr(provider_cls, "capabilities", frozenset()))
    missing: list[str] = []
    for mark in marks:
        for arg in mark.args:
            cap = Capability(arg)
            if cap not in declared and cap.value not in missing:
                missing.append(cap.value)
    return missing


def _splice(data: bytes, at: int, insert: bytes) -> bytes:
    return data[:at] + insert + data[at:]


def default_bad_files(raw: Mapping[str, bytes], marker: str = VICTIM_MARKER) -> list[BadFile]:
    """Damage the file holding ``marker`` every way the suite knows.

    Args:
        raw: Snapshot of the store (``memcore_raw_files()``) holding the victim entry.
        marker: Text of the victim's body.

    Returns:
        One :class:`BadFile` per kind of damage: ``truncated``, ``garbage-bytes`` (must be
        diagnosed), ``nul-byte``, ``bom``, ``crlf``, ``mixed-newlines`` (these three must still
        read), ``unterminated-frontmatter``, ``unterminated-comment``.

    Raises:
        AssertionError: No file holds the marker.
    """
    holders = [path for path, data in sorted(raw.items()) if marker.encode() in data]
    assert holders, f"no store file holds the victim body {marker!r}; override memcore_bad_files"
    path = holders[0]
    data = raw[path]
    mid = data.find(marker.encode())
    line_start = data.rfind(b"\n", 0, mid) + 1
    cases = [
        BadFile("truncated", path, data[: max(1, len(data) // 2)]),
        BadFile("garbage-bytes", path, _splice(data, mid, b"\xc3\x28\xff\xfe\x80garbage"), must_diagnose=True),
        BadFile("nul-byte", path, _splice(data, mid, b"\x00")),
        BadFile("crlf", path, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"), must_read=True, preserved="crlf"),
    ]
    if not data.startswith(b"\xef\xbb\xbf"):
        cases.append(BadFile("bom", path, b"\xef\xbb\xbf" + data, must_read=True, preserved="bom"))
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    mixed = b"".join(line + (b"\r\n" if i % 2 else b"\n") for i, line in enumerate(lines[:-1])) + lines[-1]
    cases.append(BadFile("mixed-newlines", path, mixed, must_read=True))
    if data.startswith(b"---\n") and b"\n---" in data[4:]:
        close = data.index(b"\n---", 4)
        cases.append(BadFile("unterminated-frontmatter", path, data[:close] + data[close + 4 :]))
    else:
        cases.append(BadFile("unterminated-frontmatter", path, b"---\ntitle: [unclosed\n" + data))
    if b"-->" in data:
        at = data.index(b"-->")
        cases.append(BadFile("unterminated-comment", path, data[:at] + data[at + 3 :]))
    else:
        cases.append(BadFile("unterminated-comment", path, _splice(data, line_start, b"<!-- never closed\n")))
    return cases


def entry_overrides(format_name: str, fields: Iterable[str]) -> Any:
    """Hypothesis strategy of ``memcore_make_entry`` overrides for the property test.

    Generates ``title`` (one line, not blank), ``body`` (not blank; any printable unicode, tabs,
    newlines, U+2028/2029), ``tags`` (``word`` or ``namespace:word``), ``source``,
    ``confidence`` (hundredths) and, when those fields are in ``fields``, ``created_at`` (UTC,
    2000-2099) and ``extra[format_name]`` (JSON values under hostile and plain keys).

    Args:
        format_name: Namespace of the generated ``extra``.
        fields: The provider's ``roundtrip_fields``.

    Returns:
        A ``SearchStrategy[dict[str, Any]]``.
    """
    from datetime import UTC, datetime

    from hypothesis import strategies as st

    fields = set(fields)
    printable = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Co", "Cn", "Zl", "Zp"))
    body_chars = st.one_of(printable, st.sampled_from(["\n", "\t", "\u2028", "\u2029", "\n"]))
    title = st.text(printable, min_size=1, max_size=60).filter(lambda s: s.strip() != "")
    body = st.text(body_chars, min_size=1, max_size=300).filter(lambda s: s.strip() != "")
    tag = st.from_regex(r"[a-z][a-z0-9_-]{0,12}(:[a-z0-9][a-z0-9_-]{0,10})?", fullmatch=True)
    optional: dict[str, Any] = {
        "tags": st.lists(tag, max_size=4, unique=True),
        "source": st.from_regex(r"[A-Za-z][A-Za-z0-9._-]{0,20}", fullmatch=True),
        "confidence": st.integers(0, 100).map(lambda n: n / 100),
    }
    if "created_at" in fields:
        optional["created_at"] = st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC)
        )
    if "extra" in fields:
        scalar = st.one_of(
            st.text(printable, max_size=20),
            st.integers(-(2**53), 2**53),
            st.floats(allow_nan=False, allow_infinity=False),
            st.booleans(),
            st.none(),
        )
        value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
        key = st.one_of(
            st.sampled_from(["content", "handler", "id", "type", "title", "no", "on"]),
            st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
        )
        optional["extra"] = st.dictionaries(key, value, min_size=1, max_size=4).map(lambda d: {format_name: d})
    return st.fixed_dictionaries({"title": title, "body": body}, optional=optional)


def register_hypothesis_profiles() -> None:
    """Register ``memcore-ci`` (200 examples) and ``memcore-dev`` (25) hypothesis profiles.

    Both: no deadline, and no health check against function-scoped fixtures (the property test
    adds each example to the test's store, so ids are unique and no fixture needs resetting).
    """
    from hypothesis import HealthCheck, settings

    common: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": [
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    }
    settings.register_profile("memcore-ci", max_examples=200, **common)
    settings.register_profile("memcore-dev", max_examples=25, **common)
