"""memcore.layout: a frontmatter's layout read as hints and followed by a writer, values unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memcore.frontmatter import FLUSH, load_plain_yaml
from memcore.layout import apply_layout, layout_file, open_blocks, order_like, read_layout
from memcore.mapping import format_utc, parse_iso_time

TEXT = 'permalink: a\ntitle: "A"\ntype: note\ntags: [x, z]\nmetadata: \n  b: 1\n  a: 2\n'


def test_order_like_puts_an_unnamed_key_after_every_key_written_before_it() -> None:
    mapping = {"title": 1, "type": 2, "permalink": 3, "tags": 4}
    assert list(order_like(mapping, ["tags", "title", "type"])) == ["tags", "title", "type", "permalink"]
    assert list(order_like(mapping, ["gone", "type"])) == ["title", "type", "permalink", "tags"]


def test_read_layout_names_only_what_the_writer_would_write_otherwise() -> None:
    meta = load_plain_yaml(TEXT)
    written = ["title", "type", "permalink", "tags", "metadata"]
    assert read_layout(TEXT, meta, written, {"metadata": ["a", "b"]}) == {
        "keys": ["permalink", "title", "type", "tags", "metadata"],
        "nested": {"metadata": ["b", "a"]},
        "quoted": ["title"],
        "flow": ["tags"],
        "spaced": ["metadata"],
    }
    assert read_layout("title: A\n", {"title": "A"}, ["title"]) == {}


def test_a_layout_followed_gives_the_text_back_and_the_same_values() -> None:
    meta = load_plain_yaml(TEXT)
    layout = read_layout(TEXT, meta, ["title", "type", "permalink", "tags", "metadata"], {"metadata": ["a", "b"]})
    canonical = {"title": "A", "type": "note", "permalink": "a", "tags": ["x", "z"], "metadata": {"a": 2, "b": 1}}
    laid = apply_layout(canonical, layout)
    assert open_blocks(FLUSH.dump_mapping(laid), layout) == TEXT
    assert load_plain_yaml(open_blocks(FLUSH.dump_mapping(laid), layout)) == canonical


def test_droppable_keys_are_left_out_only_where_the_layout_has_keys_without_them() -> None:
    meta = {"title": "A", "type": "note", "permalink": "a"}
    assert apply_layout(meta, {"keys": ["title"]}, {"type": True, "permalink": False}) == {
        "title": "A",
        "permalink": "a",
    }
    assert apply_layout(meta, {}, {"type": True}) == meta
    assert apply_layout(meta, "not a layout") == meta


@pytest.mark.parametrize(
    ("layout", "name"),
    [
        ({"file": "x.md"}, "x.md"),
        ({"file": "X.MD"}, "X.MD"),
        ({"file": "../x.md"}, None),
        ({"file": "a/x.md"}, None),
        ({"file": ".x.md"}, None),
        ({"file": "con.md"}, None),
        ({"file": "x.txt"}, None),
        ({"file": 3}, None),
        (None, None),
    ],
)
def test_layout_file_is_one_safe_file_name(layout: object, name: str | None) -> None:
    assert layout_file(layout, ".md") == name


def test_parse_iso_time_naive_and_dates_are_none_unless_taken_as_utc() -> None:
    assert parse_iso_time("2026-01-15") == (datetime(2026, 1, 15, tzinfo=UTC), True)
    assert parse_iso_time("2026-01-15T10:00:00") == (datetime(2026, 1, 15, 10, tzinfo=UTC), False)
    assert parse_iso_time("2026-01-15", naive_utc=False) is None
    assert parse_iso_time("2026-01-15T10:00:00", naive_utc=False) is None
    assert parse_iso_time("2026-01-15T10:00:00z", naive_utc=False) == (datetime(2026, 1, 15, 10, tzinfo=UTC), False)
    assert parse_iso_time("soon") is None


def test_format_utc_writes_milliseconds_when_the_time_has_whole_ones() -> None:
    base = datetime(2026, 1, 15, 10, tzinfo=UTC)
    assert format_utc(base, milliseconds=None) == "2026-01-15T10:00:00Z"
    assert format_utc(base.replace(microsecond=250000), milliseconds=None) == "2026-01-15T10:00:00.250Z"
    assert format_utc(base.replace(microsecond=250001), milliseconds=None) == "2026-01-15T10:00:00.250001Z"
