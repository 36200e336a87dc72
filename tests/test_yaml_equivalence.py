"""The YAML layer's fast paths give what its general path gives.

- the fast emitter (``YAMLWriter.fast_dump``) writes ruamel.yaml's bytes of the quoted mapping,
  in both layouts (``FLUSH``, ``INDENTED``), or declines;
- the fast loader (``load_own``, ``load_fast``, ``read_scalar``, ``read_flow_list``) reads the
  round-trip loader's values, or declines;
- ``read_frontmatter`` gives ``to_plain`` of ``parse_frontmatter`` (the python-frontmatter
  handler's load);
- with the off switch (``FAST_PATHS`` / ``MEMCORE_YAML_FAST=0``) every fast path declines and
  the results stay the same.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import frontmatter
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcore.frontmatter as fm
from memcore.errors import ParseError
from memcore.frontmatter import (
    FLUSH,
    INDENTED,
    UNSURE,
    YAMLWriter,
    flow_list,
    load_fast,
    load_own,
    load_yaml,
    parse_frontmatter,
    plain_text,
    read_flow_list,
    read_frontmatter,
    read_scalar,
    to_plain,
)

WRITERS = [pytest.param(FLUSH, id="flush"), pytest.param(INDENTED, id="indented")]
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TRICKY = [
    "yes",
    "no",
    "on",
    "null",
    "~",
    "true",
    "False",
    "1.5",
    "0x1F",
    "0o17",
    "012",
    "1_000",
    "1e5",
    ".inf",
    "-.5",
    "+1",
    "-0",
    "0",
    "10:00",
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "a: b",
    "a #b",
    "C#",
    "#x",
    "it's",
    "'q'",
    '"q"',
    "x:",
    " lead",
    "trail ",
    "a  b",
    "[x]",
    "{x}",
    "- x",
    "? x",
    "@x",
    "`x",
    "%x",
    "!x",
    "&x",
    "*x",
    "|x",
    ">x",
    "=",
    "<<",
    "a,b",
    "a, b",
    "tab\tx",
    "é",
    "Companion — x",
    "",
    "http://x.y/z",
    "a:b",
    "-",
    "--- x",
    "...",
    "\\x",
    'a"b',
    "0.30",
    "00",
    "-1",
    "1.",
    "[[Title]]",
    "caf\u00e9 \u2014 ok",
    "\u3000x",
    "x\u00a0",
    "\u2028",
    "\x85",
    "//x",
    "(x)",
    "a;b",
    "$x",
    "^x",
    "x?",
    "?",
    ":",
    "a,",
]
text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet="abXY09_ ./-:#,'\"()[]{}@%=+", max_size=14),
    st.text(max_size=8),
)
scalar = st.one_of(
    text,
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    text.map(fm.DoubleQuotedScalarString),
    st.sampled_from(["2026-05-22T18:32:00Z", "2026-05-22T18:32:00.123456Z", "2026-05-22", "yes", "x"]).map(plain_text),
)
key = st.one_of(
    st.sampled_from(["id", "title", "tags", "b-c", "x_1", "weird key", "2nd", "true", "null", "y"]),
    st.text(alphabet="abc_-1 ", min_size=1, max_size=6),
)


def _values(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return scalar
    inner = _values(depth - 1)
    return st.one_of(
        scalar,
        st.lists(scalar, max_size=3).map(flow_list),
        st.lists(st.one_of(scalar, st.dictionaries(key, inner, min_size=1, max_size=3)), max_size=3),
        st.dictionaries(key, inner, max_size=3),
    )


mappings = st.dictionaries(key, _values(2), min_size=1, max_size=6)


def _general(writer: YAMLWriter, mapping: dict[str, Any]) -> str:
    return writer.general_dump(copy.deepcopy(mapping))


# -- the fast emitter ----------------------------------------------------------------------


@pytest.mark.parametrize("writer", WRITERS)
@SETTINGS
@given(mapping=mappings)
def test_fast_emitter_writes_ruamels_bytes_or_declines(writer: YAMLWriter, mapping: dict[str, Any]) -> None:
    before = copy.deepcopy(mapping)
    fast = writer.fast_dump(mapping)
    assert mapping == before  # the caller's mapping is not changed
    if fast is not None:
        assert fast == _general(writer, mapping)
        assert writer.dump_mapping(mapping) == fast


def _memory_meta(i: int) -> dict[str, Any]:
    return {
        "id": f"mem_01HXYZA1B2C3D4E5F6G7H8J{i:03d}",
        "title": f"memo {i} we decided",
        "kind": "decision",
        "status": "active",
        "created_at": plain_text("2026-11-29T21:00:00.123456Z"),
        "confidence": 0.7,
        "tags": flow_list(["auth", "ops", "2026"]),
        "related": [fm.DoubleQuotedScalarString("[[Other]]")],
        "memcore": {"relations": [{"type": "related", "target": "x.md"}], "n": i, "ok": True},
    }


@pytest.mark.parametrize("writer", WRITERS)
def test_what_memcore_writes_takes_the_fast_emitter(writer: YAMLWriter) -> None:
    for i in range(50):
        meta = _memory_meta(i)
        fast = writer.fast_dump(meta)
        assert fast is not None and fast == _general(writer, meta)


def test_the_layouts_differ_only_in_block_sequences() -> None:
    meta = {"a": "x", "seq": ["p", {"k": "v", "j": 1}], "m": {"s": ["q"]}}
    assert FLUSH.fast_dump(meta) == "a: x\nseq:\n- p\n- k: v\n  j: 1\nm:\n  s:\n  - q\n"
    assert INDENTED.fast_dump(meta) == "a: x\nseq:\n  - p\n  - k: v\n    j: 1\nm:\n  s:\n    - q\n"


# -- the fast loader -----------------------------------------------------------------------


def _round_trip(yaml_text: str) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():  # ruamel warns of a reused anchor (&x ... &x)
            warnings.simplefilter("ignore")
            return "ok", to_plain(load_yaml(yaml_text)) if yaml_text.strip() else {}
    except ParseError:
        return "error", None


@pytest.mark.parametrize("writer", WRITERS)
@SETTINGS
@given(mapping=mappings)
def test_fast_loader_reads_what_the_emitters_write(writer: YAMLWriter, mapping: dict[str, Any]) -> None:
    yaml_text = writer.dump_mapping(copy.deepcopy(mapping))
    expected = _round_trip(yaml_text)
    own = load_own(yaml_text)
    if own is not None:
        assert ("ok", own[0]) == expected
        assert [type(v) for v in own[0].values()] == [type(v) for v in expected[1].values()]
    fast = load_fast(yaml_text)
    if fast is not None:
        assert ("ok", fast) == expected


lines = st.lists(
    st.one_of(
        st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(["a", "b", "tags", "c_d"]), text),
        st.builds(lambda v: f"  - {v}", text),
        st.builds(lambda v: f"- {v}", text),
        st.builds(lambda k, v: f"  {k}: {v}", st.sampled_from(["a", "k"]), text),
        st.builds(lambda k: f"{k}:", st.sampled_from(["a", "m", "tags"])),
        st.builds(lambda vs: "tags: [" + ", ".join(vs) + "]", st.lists(text, max_size=3)),
    ),
    min_size=1,
    max_size=6,
)


def test_an_integer_past_pythons_digit_limit_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(ParseError, match="fix the value") as info:
        load_yaml("x: " + "9" * 5000 + "\n", path="notes/a.md", first_line=2)
    assert (info.value.path, info.value.line) == ("notes/a.md", 2)


def test_a_mapping_used_as_a_key_is_a_parse_error_naming_the_line_not_a_crash() -> None:
    with pytest.raises(ParseError, match="a key that is a mapping or list") as info:
        load_yaml("- ?\n  - ?\n", path="notes/a.md", first_line=2)
    assert (info.value.path, info.value.line) == ("notes/a.md", 2)
    assert load_own("- ?\n  - ?\n") is None and load_fast("- ?\n  - ?\n") is None


@SETTINGS
@given(rows=lines)
def test_fast_loader_equals_the_round_trip_loader_or_declines(rows: list[str]) -> None:
    yaml_text = "\n".join(rows) + "\n"
    expected = _round_trip(yaml_text)
    own = load_own(yaml_text)
    if own is not None:
        assert ("ok", own[0]) == expected
    fast = load_fast(yaml_text)
    if fast is not None:
        assert ("ok", fast) == expected


@SETTINGS
@given(value=text)
def test_read_scalar_reads_what_the_round_trip_loader_reads(value: str) -> None:
    got = read_scalar(value)
    if got is not UNSURE:
        expected = _round_trip(f"k: {value}\n")
        assert expected == ("ok", {"k": got})
        assert type(got) is type(expected[1]["k"])
    items = read_flow_list(f"[{value}, x]")
    if items is not None:
        assert _round_trip(f"k: [{value}, x]\n") == ("ok", {"k": items})


stamps = st.builds(
    lambda y, mo, d, h, mi, se, frac: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{se:02d}{frac}Z",
    st.integers(0, 9999),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["", ".0", ".938", ".123456"]),
)


def test_the_sure_text_pattern_starts_with_no_resolver_rules_first_character() -> None:
    table = fm._YAML.resolver.versioned_resolver
    assert None not in table
    firsts = [chr(c) for c in range(32, 127) if fm._SURE_TEXT.match(chr(c))]
    assert firsts and all(not table.get(c) for c in firsts)
    assert set(firsts).isdisjoint("tTfFnN~.-+0123456789<=!&*\"'[]{}#,:?|>%@` ")


@SETTINGS
@given(value=st.one_of(text, stamps, st.text(alphabet="aZ_ !$'()*+-./09;<=>?@\\^`|~\"#:,", max_size=12)))
def test_sure_text_is_what_read_scalar_reads_as_itself(value: str) -> None:
    if fm._SURE_TEXT.match(value):
        assert read_scalar(value) == value and type(read_scalar(value)) is str
        assert _round_trip(f"k: {value}\n") == ("ok", {"k": value})


@pytest.mark.parametrize(
    "value",
    ["mem_01M8W0RWZJ4HT06TZG9WX1Z4HG", "memo 1 a mobile because", "2026-12-02T18:37:49.938Z", "A/b (c) 'd' e!"],
)
def test_one_off_values_are_read_without_filling_the_value_memo(value: str) -> None:
    fm._OWN_VALUES.clear()
    assert load_own(f"k: {value}\n") == ({"k": value}, {"k": 0})
    assert value not in fm._OWN_VALUES


flat_lines = st.lists(
    st.one_of(
        st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(["a", "b", "tags", "c_d", "true", "2x", "a b"]), text),
        st.builds(lambda k: f"{k}:", st.sampled_from(["a", "m"])),
        st.builds(lambda vs: "tags: [" + ", ".join(vs) + "]", st.lists(text, max_size=3)),
        st.sampled_from(["", "# c", "a:b", "a :b", "a:  b", "k: v #c", "k: 'x'", 'k: "y"', "k: [a, [b]]"]),
    ),
    min_size=1,
    max_size=6,
)


@SETTINGS
@given(rows=flat_lines)
def test_the_flat_reader_gives_what_the_row_reader_gives(rows: list[str]) -> None:
    yaml_text = "\n".join(rows) + "\n"
    if yaml_text[0] in " -" or "\n " in yaml_text or "\n-" in yaml_text or not fm._OWN_TEXT.match(yaml_text):
        return
    flat = fm._own_flat(yaml_text)
    assert flat == fm._own_rows(yaml_text) and load_own(yaml_text) == flat
    if flat is not None:
        assert ("ok", flat[0]) == _round_trip(yaml_text)


def test_flow_lists_read_from_the_memo_are_new_lists() -> None:
    first = load_own("tags: [a, b]\n")
    second = load_own("tags: [a, b]\n")
    assert first is not None and second is not None
    assert first[0]["tags"] == second[0]["tags"] == ["a", "b"]
    assert first[0]["tags"] is not second[0]["tags"]


# -- documents -----------------------------------------------------------------------------


def _documents() -> Iterator[str]:
    for i in range(30):
        meta = _memory_meta(i)
        yield f"---\n{FLUSH.dump_mapping(meta)}---\nbody {i}\n"
        yield f"---\n{INDENTED.dump_mapping(meta)}---\n\n# body {i}\n\n"
    yield "---\na: &x 1\nb: *x\n---\n"
    yield "---\n%YAML 1.1\n---\n"
    yield "---\n- a\n---\n"
    yield "---\nwhen: 2026-01-01\nok: no\nt: 10:00\n---\nx"
    yield "no frontmatter\n"


@pytest.mark.parametrize("text", list(_documents()))
def test_read_frontmatter_equals_the_general_path(text: str) -> None:
    def general() -> Any:
        try:
            doc = parse_frontmatter(text, path="x.md")
        except ParseError as exc:
            return "error", str(exc), exc.line
        return "ok", to_plain(doc.metadata), doc.body, doc.has_frontmatter, doc.body_line

    try:
        got: Any = read_frontmatter(text, path="x.md")
        fast: Any = ("ok", got.metadata, got.body, got.has_frontmatter, got.body_line)
    except ParseError as exc:
        fast = ("error", str(exc), exc.line)
    assert fast == general()


def test_the_general_path_is_python_frontmatter_with_memcores_handler() -> None:
    text = "---\ntitle: x\ncontent: kept\nwhen: 2026-01-01\nok: no\n---\n\n  body kept  \n"
    doc = parse_frontmatter(text)
    post = doc.to_post()
    assert isinstance(post, frontmatter.Post) and isinstance(post.handler, frontmatter.default_handlers.YAMLHandler)
    assert post.handler is fm.HANDLER
    assert dict(post.metadata) == {"title": "x", "content": "kept", "when": "2026-01-01", "ok": "no"}
    assert post.content == doc.body == "\n  body kept  \n"
    assert fm.FrontmatterDocument.from_post(post).dumps() == fm.FrontmatterDocument.new(doc.metadata, doc.body).dumps()
    assert doc.dumps() == text


# -- the off switch ------------------------------------------------------------------------


def test_with_the_switch_off_every_fast_path_declines(monkeypatch: pytest.MonkeyPatch) -> None:
    meta = _memory_meta(1)
    yaml_text = FLUSH.dump_mapping(meta)
    on = (FLUSH.dump_mapping(meta), INDENTED.dump_mapping(meta), read_frontmatter(f"---\n{yaml_text}---\nb\n"))
    assert load_own(yaml_text) is not None and read_scalar("x") == "x"
    monkeypatch.setattr(fm, "FAST_PATHS", False)
    assert FLUSH.fast_dump(meta) is None and INDENTED.fast_dump(meta) is None
    assert load_own(yaml_text) is None and load_fast(yaml_text) is None
    assert read_scalar("x") is UNSURE and read_flow_list("[a, b]") is None
    with pytest.raises(fm._Unsure):
        fm._load_fast(yaml_text)
    off = (FLUSH.dump_mapping(meta), INDENTED.dump_mapping(meta), read_frontmatter(f"---\n{yaml_text}---\nb\n"))
    assert off == on


def test_the_environment_variable_switches_the_fast_paths_off() -> None:
    code = "import memcore.frontmatter as f; print(f.FAST_PATHS, f.FLUSH.fast_dump({'a': 'b'}))"
    for value, expected in (("0", "False None"), ("off", "False None"), ("1", "True a: b\n")):
        env = {**os.environ, "MEMCORE_YAML_FAST": value}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout == expected + "\n"


def test_set_fast_paths_reaches_child_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fm, "FAST_PATHS", True)
    monkeypatch.setenv("MEMCORE_YAML_FAST", "1")
    fm.set_fast_paths(False)
    assert fm.FAST_PATHS is False and os.environ["MEMCORE_YAML_FAST"] == "0"
    fm.set_fast_paths(True)
    assert fm.FAST_PATHS is True and os.environ["MEMCORE_YAML_FAST"] == "1"
