"""LocalStorage's text-path read, the two-part join and the LF-only decode give what the general paths give."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.errors import UnsafePathError
from memcore.storage import LocalStorage, TextFile, join


def test_a_plain_path_reads_the_bytes_and_version_and_remembers_large_files(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "fact__x.md").write_bytes(b"---\nid: a\n---\n")
    big = b"{" + b" " * 70_000 + b"}\n"
    (tmp_path / "memories" / "_index.json").write_bytes(big)
    storage = LocalStorage(tmp_path)
    data, version = storage.read("memories/fact__x.md")
    assert data == b"---\nid: a\n---\n" and version.startswith("sha256:")
    assert storage.read("memories/_index.json")[1] == storage.stat("memories/_index.json").version


@pytest.mark.parametrize("name", ["con.md", "NUL", "com1.md", "x.", "x "])
def test_a_plain_path_still_refuses_device_names_and_trailing_dots(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnsafePathError):
        LocalStorage(tmp_path).read(f"memories/{name}")


def test_join_of_two_parts_equals_the_general_join() -> None:
    assert join("memories", "fact__x.md") == "memories/fact__x.md"
    assert join("teams/core/", "/x.md") == "teams/core/x.md"
    assert join("", "x.md") == "x.md"


def test_an_lf_only_file_decodes_as_the_counting_path_says() -> None:
    decoded = TextFile.decode(b"a\nb\n")
    assert (decoded.text, decoded.newline, decoded.mixed, decoded.bom) == ("a\nb\n", "\n", False, False)
    crlf = TextFile.decode(b"a\r\nb\n")
    assert (crlf.text, crlf.newline, crlf.mixed) == ("a\nb\n", "\n", True)
