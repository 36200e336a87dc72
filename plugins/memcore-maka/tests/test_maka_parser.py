"""Maka's reading rules, one by one (the cases of its parser and its tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import Status
from memcore_maka import MakaProvider
from memcore_maka._parse import (
    js_number,
    parse_document,
    parse_finite_number,
    parse_meta_comment,
    parse_tags,
    slug_id,
)


def sections(text: str) -> list[tuple[str, str, dict[str, str] | None]]:
    return [(s.title, s.content, s.meta) for s in parse_document(text).entries]


def test_only_h2_lines_start_entries() -> None:
    text = "intro\n# H1\n## A\n### not a heading\n##\n##   \n##\tTabbed  \nbody\n\ufeff## bom\n####x\n"
    assert sections(text) == [
        ("A", "### not a heading\n##", None),
        ("Tabbed", "body\n\ufeff## bom\n####x", None),
    ]
    # As in JavaScript, "##   " is a heading whose title is a space (an empty section, dropped).
    assert [s.title for s in parse_document(text).sections] == ["A", " ", "Tabbed"]


def test_metadata_comment_must_be_the_whole_trimmed_line() -> None:
    text = (
        "## A\n"
        "text <!-- maka-memory: id=inline -->\n"
        "<!-- maka-memory id=nocolon -->\n"
        "<!-- maka-memory: id=split\n"
        "-->\n"
        "<!-- maka-memory: id=tail --> trailing\n"
        "   <!-- maka-memory: id=real status=archived -->   \n"
        "<!--maka-memory:id=second-->\n"
    )
    doc = parse_document(text)
    [section] = doc.entries
    assert section.meta == {"id": "real", "status": "archived"}
    assert section.meta_index == 6 and section.shadow_indices == [7]
    assert section.content.split("\n") == [
        "text <!-- maka-memory: id=inline -->",
        "<!-- maka-memory id=nocolon -->",
        "<!-- maka-memory: id=split",
        "-->",
        "<!-- maka-memory: id=tail --> trailing",
    ]
    assert doc.malformed == [1, 2, 3, 5]


def test_comment_tokens_validated_like_maka() -> None:
    comment = parse_meta_comment(
        "<!-- maka-memory: id=a =x novalue 1bad=1 ok_key-2=v k=" + "v" * 128 + " long=" + "w" * 129 + " id=b -->"
    )
    assert comment is not None
    assert comment.meta == {"id": "b", "ok_key-2": "v", "k": "v" * 128}
    assert [token.split("=")[0] for token, _ in comment.dropped] == ["", "novalue", "1bad", "long"]
    assert parse_meta_comment("<!-- maka-memory: -->") is not None
    assert parse_meta_comment("<!-- maka-memory: -->").meta == {}  # type: ignore[union-attr]


def test_empty_sections_are_dropped_even_with_metadata(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## Empty\n<!-- maka-memory: id=e status=active -->\n  \n\n## Full\nx\n", encoding="utf-8")
    provider = MakaProvider(path)
    assert [e.id for e in provider.iter_entries()] == ["full"]
    assert [(d.code, d.line) for d in provider.validate()] == [("maka.empty-section", 1)]


def test_slug_ids() -> None:
    assert slug_id("  Hello, World!  ") == "hello-world"
    assert slug_id("手写 条目 Ünïcode") == "手写-条目-n-code"
    assert slug_id("!!!") == "memory-entry"
    assert slug_id("a" * 60) == "a" * 48
    assert sections("## X\n<!-- maka-memory: id= status=active -->\nbody\n")[0][2] == {"id": "", "status": "active"}
    assert [s.id for s in parse_document("## Title Here\n<!-- maka-memory: id= -->\nbody\n").entries] == ["title-here"]


def test_tags_like_maka() -> None:
    assert parse_tags("work,AI,work") == ["work", "ai"]
    assert parse_tags(" Writing Style ,a+b,,--x--") == ["writing-style", "a-b", "x"]
    assert parse_tags(",".join(f"t{i}" for i in range(10))) == [f"t{i}" for i in range(8)]
    assert parse_tags("x" * 40) == ["x" * 32]
    assert parse_tags("中文,偏好") == ["中文", "偏好"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1700000000000", 1700000000000.0),
        ("1.5", 1.5),
        ("1e12", 1e12),
        ("0x10", 16.0),
        (" 42 ", 42.0),
        ("-1", None),
        ("abc", None),
        ("Infinity", None),
        ("", None),
        (None, None),
    ],
)
def test_timestamps_as_javascript_number(raw: str | None, expected: float | None) -> None:
    assert parse_finite_number(raw) == expected


def test_js_number_edge_cases() -> None:
    assert js_number("") == 0.0
    assert js_number("1_000") != js_number("1_000")  # NaN, as in JavaScript
    assert js_number(".5") == 0.5


def test_v02_metadata_fail_open(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## Active preference\n"
        "<!-- maka-memory: id=pref-active origin=imported createdAt=1700000000000 updatedAt=1700000001000 "
        "status=active tags=work,AI,work decayTtlMs=86400000000 unknownField=ok -->\n"
        "Keep answers concise.\n\n## Archived preference\n"
        "<!-- maka-memory: id=pref-old origin=extracted status=archived tags=old -->\nDo not use this anymore.\n",
        encoding="utf-8",
    )
    active, archived = MakaProvider(path, apply_decay=False).iter_entries()
    assert (active.source, active.tags, active.status) == ("imported", ["work", "ai"], Status.ACTIVE)
    assert active.updated_at is not None and active.updated_at.timestamp() == 1700000001
    assert active.expires_at is not None and active.created_at is not None
    assert (active.expires_at - active.created_at).days == 1000
    assert active.extra == {"maka": {"unknownField": "ok"}}
    assert (archived.source, archived.status, archived.tags) == ("extracted", Status.ARCHIVED, ["old"])


def test_crlf_and_lone_cr(tmp_path: Path) -> None:
    text = "## A\r\n<!-- maka-memory: id=a -->\r\nline one\r\nline\rtwo\r\n"
    [(title, content, meta)] = sections(text)
    assert (title, content, meta) == ("A", "line one\nline\rtwo", {"id": "a"})
    assert parse_document(text).text() == text
