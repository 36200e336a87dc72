from __future__ import annotations

import frontmatter
import pytest

from memcore.errors import ParseError
from memcore.frontmatter import (
    FrontmatterDocument,
    RoundTripYAMLHandler,
    flow_list,
    parse_frontmatter,
    plain_text,
    split_frontmatter,
)

HOSTILE = """---
KB: "x: y"
answer: no
toggle: on
time: 10:00
version: 1.10
zip: 01234
day: 2025-10-24
who: '@bob'
draft: '[draft] x'
tag: '#tag'
quote: abc "def" ghi
content: body-key
handler: h
tags: [a, "b c"]  # keep this comment
---

  leading blank line and indented text stay  
--- a dash line in the body ---

"""


def test_yaml_12_semantics_and_dates_as_text() -> None:
    doc = parse_frontmatter(HOSTILE)
    m = doc.metadata
    assert m["answer"] == "no" and m["toggle"] == "on"
    assert m["time"] == "10:00"
    assert m["day"] == "2025-10-24" and isinstance(m["day"], str)
    assert m["who"] == "@bob" and m["draft"] == "[draft] x" and m["tag"] == "#tag"
    assert m["quote"] == 'abc "def" ghi'
    assert m["content"] == "body-key" and m["handler"] == "h"
    assert list(m["tags"]) == ["a", "b c"]
    assert doc.body == "\n  leading blank line and indented text stay  \n--- a dash line in the body ---\n\n"
    assert doc.body_line == 17


def test_untouched_document_is_byte_identical() -> None:
    assert parse_frontmatter(HOSTILE).dumps() == HOSTILE


def test_touched_document_changes_only_what_was_touched() -> None:
    doc = parse_frontmatter(HOSTILE)
    doc.metadata["quote"] = "changed"
    doc.metadata["new"] = "no"
    doc.metadata["when"] = plain_text("2026-04-19T10:00:00Z")
    out = doc.dumps()
    before = HOSTILE.splitlines()
    after = out.splitlines()
    changed = [(a, b) for a, b in zip(before[:15], after[:15], strict=True) if a != b]
    assert changed == [('quote: abc "def" ghi', "quote: changed")]
    assert after[15:18] == ['new: "no"', "when: 2026-04-19T10:00:00Z", "---"]
    assert after[18:] == before[16:]
    assert 'tags: [a, "b c"]  # keep this comment' in after
    again = parse_frontmatter(out)
    assert again.metadata["new"] == "no" and again.metadata["when"] == "2026-04-19T10:00:00Z"


def test_new_document_keeps_key_order_and_quotes_hostile_values() -> None:
    doc = FrontmatterDocument.new(
        {"id": "x", "content": "y", "time": "10:00", "day": "2025-10-24", "tags": flow_list(["no", "a"])}, "body\n"
    )
    text = doc.dumps()
    assert text == '---\nid: x\ncontent: "y"\ntime: "10:00"\nday: "2025-10-24"\ntags: ["no", a]\n---\nbody\n'
    back = parse_frontmatter(text).metadata
    assert dict(back) == {"id": "x", "content": "y", "time": "10:00", "day": "2025-10-24", "tags": ["no", "a"]}


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("---\nid: x\nno end\n", 1, "never closed"),
        ("---\nid: [x\n---\nbody", 3, "invalid YAML"),
        ("---\n- a\n- b\n---\n", 2, "must be a YAML mapping"),
    ],
)
def test_bad_frontmatter_names_file_and_line(text: str, line: int, match: str) -> None:
    with pytest.raises(ParseError, match=match) as info:
        parse_frontmatter(text, path="f.md")
    assert info.value.path == "f.md"
    assert info.value.line == line
    assert str(info.value).startswith(f"f.md:{line}:")


@pytest.mark.parametrize("value", ["-_", "+_", "0x_", "0o_", "0b_"])
def test_a_scalar_ruamel_cannot_construct_is_a_parse_error_not_a_crash(value: str) -> None:
    with pytest.raises(ParseError, match=r"ruamel\.yaml cannot read .*quote the value") as info:
        parse_frontmatter(f"---\nid: {value}\n---\nbody\n", path="f.md")
    assert (info.value.path, info.value.line) == ("f.md", 2)


def test_no_frontmatter_and_empty_frontmatter() -> None:
    assert split_frontmatter("# title\n---\n") == (None, "# title\n---\n", 1)
    doc = parse_frontmatter("---\n---\nbody")
    assert doc.has_frontmatter and dict(doc.metadata) == {} and doc.body == "body"
    assert doc.dumps() == "---\n---\nbody"


def test_python_frontmatter_with_the_round_trip_handler() -> None:
    post = frontmatter.loads("---\nanswer: no\nday: 2025-10-24\n---\nbody\n", handler=RoundTripYAMLHandler())
    assert post["answer"] == "no" and post["day"] == "2025-10-24"
    assert post.content == "body"


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    levels = ["a: &a [x,x,x,x,x,x,x,x,x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "---\n" + "\n".join(levels) + "\n---\nbody\n"
    with pytest.raises(ParseError, match="expands to more than 100,000 values") as info:
        parse_frontmatter(text, path="bomb.md")
    assert info.value.path == "bomb.md" and info.value.line == 2


@pytest.mark.parametrize("yaml", ["a: " + "[" * 5000 + "]" * 5000, "a: " + "[" * 70 + "]" * 70])
def test_deep_nesting_is_a_parse_error(yaml: str) -> None:
    with pytest.raises(ParseError, match="nest"):
        parse_frontmatter(f"---\n{yaml}\n---\nbody\n", path="deep.md")


def test_small_aliases_still_read() -> None:
    doc = parse_frontmatter("---\nbase: &b [a, b]\ncopy: *b\n---\n")
    assert list(doc.metadata["copy"]) == ["a", "b"]


def test_values_the_emitter_would_mangle_are_double_quoted_and_read_back() -> None:
    """``: x`` / ``? y`` in a flow list and U+0085 / U+2028 anywhere read back exactly."""
    from memcore.frontmatter import flow_list, load_plain_yaml

    meta = {"title": "Caf\x85e", "note": "a\u2028b", "tags": flow_list([": x", "? y", "?z", "a, b", "ok"])}
    text = FrontmatterDocument.new(meta, "body\n").dumps()
    assert 'tags: [": x", "? y", "?z", \'a, b\', ok]' in text
    assert 'title: "Caf\\Ne"' in text
    yaml_text = text.split("---\n")[1]
    assert load_plain_yaml(yaml_text) == {
        "title": "Caf\x85e",
        "note": "a\u2028b",
        "tags": [": x", "? y", "?z", "a, b", "ok"],
    }


def test_frontmatter_that_would_not_read_back_is_refused_before_writing() -> None:
    from ruamel.yaml.scalarstring import PlainScalarString

    from memcore.errors import InvalidEntryError
    from memcore.frontmatter import flow_list

    forced_plain = flow_list([PlainScalarString(": x")])  # a caller forcing the plain style
    with pytest.raises(InvalidEntryError, match="would not parse"):
        FrontmatterDocument.new({"tags": forced_plain}, "").dumps()
    with pytest.raises(InvalidEntryError, match="for tags would read back differently"):
        FrontmatterDocument.new({"tags": flow_list([PlainScalarString("? y")])}, "").dumps()
