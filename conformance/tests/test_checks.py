"""Direct tests of the suite's helpers: damaged-file generation, snapshot diffs, corpus, gates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.models import MemoryEntry
from memcore.provider import Capability
from memcore_conformance import CORPUS_CASES, BadFile, build_corpus, default_bad_files
from memcore_conformance._checks import VICTIM_MARKER, changed_files, missing_capabilities, read_tree, stat_tree
from memcore_conformance.corpus import LARGE_BODY_BYTES
from memcore_conformance.reference import ReferenceProvider


def _cases(data: bytes) -> dict[str, BadFile]:
    return {c.name: c for c in default_bad_files({"a.md": b"unrelated\n", "entry.md": data})}


def test_default_bad_files_damage_the_file_holding_the_victim() -> None:
    data = f"---\ntitle: Victim\n---\n<!-- meta: x -->\n{VICTIM_MARKER}\n".encode()
    cases = _cases(data)
    assert set(cases) == {
        "truncated",
        "garbage-bytes",
        "nul-byte",
        "crlf",
        "bom",
        "mixed-newlines",
        "unterminated-frontmatter",
        "unterminated-comment",
    }
    assert {c.path for c in cases.values()} == {"entry.md"}
    assert cases["truncated"].data == data[: len(data) // 2]
    with pytest.raises(UnicodeDecodeError):
        cases["garbage-bytes"].data.decode("utf-8")
    assert cases["garbage-bytes"].must_diagnose and not cases["truncated"].must_diagnose
    assert cases["nul-byte"].data.count(b"\x00") == 1
    assert cases["crlf"].data == data.replace(b"\n", b"\r\n") and cases["crlf"].preserved == "crlf"
    assert cases["bom"].data == b"\xef\xbb\xbf" + data and cases["bom"].must_read
    mixed = cases["mixed-newlines"].data
    assert b"\r\n" in mixed and b"\n" in mixed.replace(b"\r\n", b"")
    # the closing '---' of the frontmatter is gone, the opening one kept
    assert (
        cases["unterminated-frontmatter"].data
        == b"---\ntitle: Victim\n<!-- meta: x -->\n" + VICTIM_MARKER.encode() + b"\n"
    )
    assert b"-->" not in cases["unterminated-comment"].data and b"<!-- meta: x" in cases["unterminated-comment"].data


def test_default_bad_files_without_frontmatter_or_comment_add_them_unclosed() -> None:
    data = f'{{"body": "{VICTIM_MARKER}"}}\n'.encode()
    cases = _cases(data)
    assert cases["unterminated-frontmatter"].data == b"---\ntitle: [unclosed\n" + data
    assert cases["unterminated-comment"].data == b"<!-- never closed\n" + data


def test_default_bad_files_needs_the_marker() -> None:
    with pytest.raises(AssertionError, match="override memcore_bad_files"):
        default_bad_files({"a.md": b"nothing here\n"})


def test_changed_files_sees_adds_removals_changes_and_same_byte_rewrites(tmp_path: Path) -> None:
    for name in ("keep.md", "change.md", "remove.md", "rewrite.md", "_index.json"):
        (tmp_path / name).write_bytes(b"v1\n")
    before, ident = read_tree(tmp_path), stat_tree(tmp_path)
    (tmp_path / "change.md").write_bytes(b"v2\n")
    (tmp_path / "remove.md").unlink()
    (tmp_path / "new.md").write_bytes(b"new\n")
    (tmp_path / "_index.json").write_bytes(b"v2\n")
    (tmp_path / ".rewrite.md.tmp").write_bytes(b"v1\n")
    os.replace(tmp_path / ".rewrite.md.tmp", tmp_path / "rewrite.md")  # same bytes, new inode
    (tmp_path / ".stray.md.abc.tmp").write_bytes(b"litter")
    diff = changed_files(before, read_tree(tmp_path), ident, stat_tree(tmp_path), ignore=["_index.json"])
    assert diff == {
        "added": ["new.md"],
        "removed": ["remove.md"],
        "changed": ["change.md"],
        "rewritten": ["rewrite.md"],
    }


def test_corpus_has_every_named_case() -> None:
    corpus = build_corpus(lambda **kw: MemoryEntry(**kw), "myformat")
    assert tuple(corpus) == CORPUS_CASES
    assert len(corpus["large-body"].body.encode()) == LARGE_BODY_BYTES
    assert corpus["empty-body"].body == "" and corpus["whitespace-body"].body.strip() == ""
    assert corpus["nfd"].body == "Cafe\u0301 de\u0301ja\u0300 vu, n\u0303.\n"  # bodies keep NFD
    assert corpus["nfd"].title == "résumé café"  # titles are NFC by the model's rule
    assert set(corpus["extra-hostile-keys"].extra["myformat"]) >= {"content", "handler", "id", "type"}
    titles = {corpus[f"yaml-title-{n}"].title for n in range(1, 12)}
    assert {"no", "on", "10:00", "1.10", "01234", "2025-10-24", "KB: x", "@bob", "#tag"} <= titles


def test_missing_capabilities_names_what_is_absent() -> None:
    marks = [pytest.mark.memcore_requires(Capability.ADD, "remote").mark, pytest.mark.memcore_requires("scopes").mark]
    assert missing_capabilities(ReferenceProvider, marks) == ["remote", "scopes"]
    assert missing_capabilities(ReferenceProvider, [pytest.mark.memcore_requires("add", "delete").mark]) == []
