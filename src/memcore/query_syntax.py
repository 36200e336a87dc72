"""memcore's search query syntax, parsed by memcore and compiled to a safe FTS5 expression.

The syntax (docs/search.md) is the same for ``memcore search``, ``store.search()``,
:class:`memcore.index.SearchIndex` and the MCP ``recall`` tool:

* ``deploy friday`` — every term must occur (AND is the default; ``AND`` may be written);
* ``deploy OR release`` — either;
* ``deploy NOT friday`` (or ``-friday``) — the first without the second;
* ``"deploy on friday"`` — the words in this order, next to each other;
* ``dep*`` — any word starting with ``dep``;
* ``(deploy OR release) NOT friday`` — parentheses group.

``OR``, ``AND`` and ``NOT`` are operators only in capitals; in lower case they are words.
Words are matched as the index tokenizes text (FTS5 ``porter unicode61 remove_diacritics 2``):
case and accents are ignored and words are stemmed, so ``deploys`` finds "deploy" and ``cafe``
finds "Café". A word holding no letter or digit (``🚀``, ``!!!``) is not searchable and is left
out; a query left with no searchable term matches nothing, and :attr:`ParsedQuery.note` says why.

User text never reaches FTS5 as it was typed: every term is re-quoted from the letters and
digits :func:`memcore.models.text_terms` keeps, so no FTS5 syntax (column filters, ``NEAR``,
``^``) can be injected and a malformed query raises :class:`~memcore.errors.QuerySyntaxError`
naming the column and the fix, never an SQLite error.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from dataclasses import dataclass
from typing import Literal

from memcore._terms import text_terms
from memcore.errors import QuerySyntaxError

__all__ = ["TOKENIZE", "ParsedQuery", "parse_query", "text_matches"]

_TOKEN = re.compile(r'\s+|(?P<lp>\()|(?P<rp>\))|(?P<quote>")|(?P<word>[^\s()"]+)')
_OPERATORS = {"AND", "OR", "NOT"}


@dataclass(frozen=True)
class ParsedQuery:
    """A query in memcore's syntax, ready for the index.

    Attributes:
        text: The query as given.
        fts: The FTS5 MATCH expression (only quoted terms and FTS5 operators), or ``None`` when
            the query has no searchable term.
        terms: The searchable terms, folded (for highlighting and relevance in scans).
        note: Why the query matches nothing (no searchable term), else ``None``.
    """

    text: str
    fts: str | None
    terms: tuple[str, ...]
    note: str | None = None


@dataclass
class _Tok:
    kind: Literal["lp", "rp", "phrase", "word", "op"]
    value: str
    column: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None  # the pattern matches any character
        column = pos + 1
        pos = m.end()
        if m.group("lp"):
            out.append(_Tok("lp", "(", column))
        elif m.group("rp"):
            out.append(_Tok("rp", ")", column))
        elif m.group("quote"):
            end = text.find('"', pos)
            if end < 0:
                raise QuerySyntaxError(
                    f'search query: the quote at column {column} is not closed; end the phrase with another " '
                    f'(e.g. "deploy on friday")'
                )
            out.append(_Tok("phrase", text[pos:end], column))
            pos = end + 1
        elif m.group("word"):
            word = m.group("word")
            out.append(_Tok("op" if word in _OPERATORS else "word", word, column))
    return out


def _quote(terms: list[str], prefix: bool = False) -> str:
    body = " ".join(terms).replace('"', '""')  # terms hold letters and digits only; kept safe regardless
    return f'"{body}"' + ("*" if prefix else "")


class _Parser:
    """Recursive descent over the tokens; each method returns an FTS5 expression or ``None``.

    ``None`` is a sub-query with no searchable term: it drops out of AND / OR groups.
    """

    def __init__(self, tokens: list[_Tok], default_or: bool) -> None:
        self.tokens = tokens
        self.pos = 0
        self.default_or = default_or
        self.terms: list[str] = []
        self.dropped: list[str] = []

    def peek(self) -> _Tok | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def parse(self) -> str | None:
        expr = self.or_expr()
        tok = self.peek()
        if tok is not None:
            assert tok.kind == "rp"
            raise QuerySyntaxError(
                f"search query: ')' at column {tok.column} closes no '('; remove it or add the '(' it closes"
            )
        return expr

    def or_expr(self) -> str | None:
        parts = [self.and_expr()]
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.value == "OR":
            self.pos += 1
            nxt = self.peek()
            if nxt is None or nxt.kind == "rp" or (nxt.kind == "op" and nxt.value in {"OR", "AND"}):
                raise QuerySyntaxError(
                    f"search query: OR at column {tok.column} has nothing after it; write `deploy OR release`"
                )
            parts.append(self.and_expr())
        kept = [p for p in parts if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else "(" + " OR ".join(kept) + ")"

    def and_expr(self) -> str | None:
        positives: list[str | None] = []
        negatives: list[str | None] = []
        first = self.peek()
        while (tok := self.peek()) is not None and tok.kind != "rp" and not (tok.kind == "op" and tok.value == "OR"):
            if tok.kind == "op" and tok.value == "AND":
                self.pos += 1
                nxt = self.peek()
                if (
                    not (positives or negatives)
                    or nxt is None
                    or nxt.kind == "rp"
                    or (nxt.kind == "op" and nxt.value != "NOT")
                ):
                    raise QuerySyntaxError(
                        f"search query: AND at column {tok.column} needs a term on each side; "
                        "write `deploy AND friday` (or just `deploy friday`)"
                    )
                continue
            negate = False
            if tok.kind == "op" and tok.value == "NOT":
                self.pos += 1
                nxt = self.peek()
                if nxt is None or nxt.kind in {"rp", "op"}:
                    raise QuerySyntaxError(
                        f"search query: NOT at column {tok.column} has nothing after it; write `deploy NOT friday`"
                    )
                negate = True
            elif tok.kind == "word" and tok.value.startswith("-") and len(tok.value) > 1:
                tok.value = tok.value[1:]
                negate = True
            (negatives if negate else positives).append(self.primary())
        if first is None or first is self.peek():
            tok = self.peek()
            where = f"at column {tok.column}" if tok is not None else "at the end"
            raise QuerySyntaxError(f"search query: a term is missing {where}; write `deploy OR release`")
        pos = [p for p in positives if p is not None]
        neg = [n for n in negatives if n is not None]
        if not pos:
            if neg:
                raise QuerySyntaxError(
                    "search query: NOT needs a term to exclude from; write `deploy NOT friday`, not `NOT friday` alone"
                )
            return None
        joiner = " OR " if self.default_or and len(pos) > 1 else " AND "
        expr = pos[0] if len(pos) == 1 else "(" + joiner.join(pos) + ")"
        for n in neg:
            expr = f"({expr} NOT {n})"
        return expr

    def primary(self) -> str | None:
        tok = self.peek()
        assert tok is not None
        self.pos += 1
        if tok.kind == "lp":
            inner = self.or_expr()
            close = self.peek()
            if close is None or close.kind != "rp":
                raise QuerySyntaxError(
                    f"search query: '(' at column {tok.column} is not closed; add the ')' that ends the group"
                )
            self.pos += 1
            return inner
        if tok.kind == "phrase":
            terms = text_terms(tok.value)
            return self._atom(tok.value, terms, prefix=False)
        if tok.kind == "word":
            prefix = tok.value.endswith("*")
            word = tok.value.rstrip("*")
            return self._atom(tok.value, text_terms(word), prefix=prefix)
        raise QuerySyntaxError(  # an operator where a term belongs ("deploy NOT OR x")
            f"search query: {tok.value} at column {tok.column} stands where a term belongs; "
            'put a word or a "phrase" there'
        )

    def _atom(self, raw: str, terms: list[str], *, prefix: bool) -> str | None:
        if not terms:
            self.dropped.append(raw)
            return None
        self.terms.extend(terms)
        return _quote(terms, prefix)


@functools.lru_cache(maxsize=256)
def parse_query(text: str, *, default_operator: Literal["AND", "OR"] = "AND") -> ParsedQuery:
    """Parse ``text`` in memcore's search syntax (see the module docstring and docs/search.md).

    Args:
        text: The query as the user typed it.
        default_operator: How terms written side by side combine: ``"AND"`` (every one must
            occur; the default everywhere) or ``"OR"`` (MCP ``recall`` with ``match="any"``).

    Returns:
        The parsed query; its ``fts`` is ``None`` and ``note`` says why when no term is
        searchable.

    Raises:
        QuerySyntaxError: Unclosed quote or parenthesis, a dangling ``OR`` / ``AND`` / ``NOT``,
            or a group of ``NOT`` terms only; the message names the column and the fix.
    """
    parser = _Parser(_tokens(text), default_operator == "OR")
    fts = parser.parse() if parser.tokens else None
    note = None
    if fts is None:
        shown = text.strip()
        note = (
            f"nothing to search for in {shown!r}: search terms are words of letters or digits "
            "(symbols and emoji are not indexed)"
        )
    return ParsedQuery(text=text, fts=fts, terms=tuple(dict.fromkeys(parser.terms)), note=note)


#: The FTS5 tokenizer of every index and scan: Porter stemming over unicode61 words with
#: diacritics removed. One constant, so that a scan (no index) and the index stem alike.
TOKENIZE = "porter unicode61 remove_diacritics 2"

_local = threading.local()


def text_matches(parsed: ParsedQuery, title: str, body: str, tags: str) -> bool:
    """Return whether one entry's text matches ``parsed``, with the index's own tokenizer.

    Used where there is no index (``Query.matches``): the entry is put in a one-row in-memory
    FTS5 table and the same expression runs on it, so stemming and folding agree with the
    index by construction. A query without a searchable term matches nothing.
    """
    if parsed.fts is None:
        return False
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE one USING fts5(title, body, tags, tokenize = '{TOKENIZE}')")
        _local.conn = conn
    conn.execute("DELETE FROM one")
    conn.execute("INSERT INTO one (rowid, title, body, tags) VALUES (1, ?, ?, ?)", (title, body, tags))
    return conn.execute("SELECT 1 FROM one WHERE one MATCH ?", (parsed.fts,)).fetchone() is not None
