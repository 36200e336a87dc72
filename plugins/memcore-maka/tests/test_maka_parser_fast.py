"""The fast paths of the parser give exactly what the plain rules give (fuzzed against them).

The oracle below is the parser's earlier, direct transcription of Maka's rules (the whole-line
regex, the token loop, the ``\\r?\\n`` split); the fast paths (string checks instead of the
regex, one ``findall`` for all-valid ASCII comments, ``str.split`` without ``\\r``) must agree
with it on every input.
"""

from __future__ import annotations

import random
import re

import pytest

from memcore_maka._parse import (
    _JS_WS,
    META_KEY_RE,
    META_RE,
    MetaComment,
    js_trim,
    parse_meta_comment,
    split_lines,
)

_SPLIT_WS = re.compile(f"[{_JS_WS}]+")


def oracle_meta(line: str) -> MetaComment | None:
    match = META_RE.match(js_trim(line))
    if match is None:
        return None
    meta: dict[str, str] = {}
    dropped: list[tuple[str, str]] = []
    for part in _SPLIT_WS.split(match.group(1)):
        if not part:
            continue
        idx = part.find("=")
        if idx <= 0:
            dropped.append((part, "no key=value"))
            continue
        key, value = part[:idx], part[idx + 1 :]
        if not META_KEY_RE.match(key):
            dropped.append((part, "key must match [a-zA-Z][a-zA-Z0-9_-]*"))
            continue
        if len(value.encode("utf-16-le")) // 2 > 128:
            dropped.append((part, "value longer than 128 characters"))
            continue
        meta[key] = value
    return MetaComment(meta, tuple(dropped))


def oracle_split(text: str) -> tuple[list[str], list[str]]:
    parts = re.split(r"(\r?\n)", text)
    return parts[0::2], [*parts[1::2], ""]


PIECES = [
    "<!--", "-->", "maka-memory:", " maka-memory: ", "<!-- maka-memory:", "id=a", "k=v", "tags=x,y", "=v",
    "1bad=x", "a=b=c", "x", "é=1", "k=é", "k=\U0001f600", " ", "\t", "\u00a0", "\u2028", "\u3000", "\ufeff",
    "\x1c", "\x1f", "\x85", "\r", "\x00", "-", ">", "a_b-c=", "k=" + "v" * 128, "k=" + "v" * 129,
    "k=" + "é" * 129, "k=" + "\U0001f600" * 64, "k=" + "\U0001f600" * 65,
]


def random_line(rnd: random.Random) -> str:
    body = "".join(rnd.choice(PIECES) + rnd.choice(["", " ", "  ", "\t"]) for _ in range(rnd.randint(0, 7)))
    shape = rnd.random()
    if shape < 0.6:
        return rnd.choice(["", " ", "\u3000"]) + "<!--" + rnd.choice(["", " ", "\u2028"]) + "maka-memory:" + body + "-->"
    if shape < 0.8:
        return "<!-- maka-memory: " + body + rnd.choice(["-->", "--", " -->  ", "-->\u2029"])
    return body


@pytest.mark.parametrize("seed", range(20))
def test_meta_comment_fast_paths_match_the_rules(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(400):
        line = random_line(rnd)
        assert parse_meta_comment(line) == oracle_meta(line), repr(line)


@pytest.mark.parametrize(
    "line",
    [
        "<!--maka-memory:-->",
        "<!-- maka-memory: a=b --> x -->",
        "<!-- maka-memory: a=b\rc=d -->",
        "<!-- maka-memory:\r a=b \u2028-->",
        "  <!-- maka-memory: id=x id=y k=v -->\ufeff",
        "<!-- maka-memory: id=x\x1cy=z -->",
        "<!-- maka-memory: id=x\x85y=z -->",
        "<!-- maka-memory: k=" + "v" * 128 + " -->",
        "<!-- maka-memory: k=" + "v" * 129 + " -->",
        "<!--\u00a0maka-memory:\u3000id=a\u3000-->",
    ],
)
def test_meta_comment_edge_cases_match_the_rules(line: str) -> None:
    assert parse_meta_comment(line) == oracle_meta(line)


@pytest.mark.parametrize("seed", range(10))
def test_split_lines_matches_the_regex_split(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(200):
        text = "".join(rnd.choice(["a", "\n", "\r\n", "\r", "\u2028", " ", "## x"]) for _ in range(rnd.randint(0, 20)))
        assert split_lines(text) == oracle_split(text), repr(text)
