"""Exact top-k BM25 for the index's common query shape, without scoring every match.

SQLite's FTS5 ``bm25()`` scores every row a text matches and, for its IDF, counts every row
holding each term on every query: a word in most of a large store costs about a microsecond a
match. :class:`Ranker` answers the same ranking from in-process postings of each term (weighted
term frequency and document length per matching row, read once from FTS5's own index through
an ``fts5vocab`` table) and stops as soon as no unseen row can enter the top ``k``:

* each term's postings are grouped by weighted term frequency ``f`` and sorted by document
  length ``D`` inside a group; a term's BM25 part falls as ``D`` grows, so merging the groups'
  heads gives the term's rows best first (a stream, as in Fagin's threshold algorithm);
* the streams are read in turn; each row read is scored whole (the other terms' ``f`` from a
  rowid map), and reading stops when the ``k``-th best score is strictly above the sum of the
  streams' next parts (no unseen row can reach it, nor tie it) or a stream ends (every row
  holding all the terms was read);
* an AND of words searched a second time (same generation) is answered from its joint groups
  instead: the rows holding every word, grouped by all the words' weighted frequencies and
  sorted by length inside a group, so the score falls along each group and merging the groups'
  heads reads the ``k`` best (and their ties) and nothing more;
* scores are FTS5's own formula with its constants, in the order FTS5 evaluates it
  (``fts5_aux.c``: IDF ``log((N - n + 0.5) / (n + 0.5))``, at least ``1e-6``; ``k1`` 1.2,
  ``b`` 0.75; ``N`` and the token totals from FTS5's averages record), so each score is the
  same double ``bm25()`` returns and equal scores stay equal (the caller breaks them by file
  and position, as the SQL ranking does).

Only a text that is one word, or words joined by AND or by OR, without filters and with a limit, takes
this path (``None`` otherwise: the caller ranks with ``bm25()``). Postings are built on the
second search of an index (a one-shot ``memcore search`` never pays for them) and dropped when
the index's generation (``meta``, bumped by every refresh that changes an entry, in any
process) moves, so a hand edit is ranked by the next search. ``MEMCORE_FAST_RANK=0`` turns the
path off.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

from memcore.query_syntax import TOKENIZE
from memcore.switches import switch_on

__all__ = ["FAST_RANK_ENV", "Ranker", "fast_rank_enabled", "single_token"]

#: Environment switch: ``0`` / ``false`` / ``off`` / ``no`` ranks every text with FTS5's ``bm25()``.
FAST_RANK_ENV = "MEMCORE_FAST_RANK"
#: FTS5's BM25 constants (fts5_aux.c).
K1 = 1.2
B = 0.75
#: Column weights of the index's ranking (title, body, tags), as in ``bm25(fts, 10.0, 1.0, 5.0)``.
WEIGHTS = (10.0, 1.0, 5.0)
#: Postings kept in memory, all terms together (about 40 bytes each).
MAX_POSTINGS = 2_000_000


def fast_rank_enabled() -> bool:
    """Return whether the fast ranking is on (``MEMCORE_FAST_RANK`` unset or not ``0``/``false``/``off``/``no``)."""
    return switch_on(FAST_RANK_ENV)


_local = threading.local()


@lru_cache(maxsize=4096)
def single_token(word: str) -> str | None:
    """Return the one index token ``word`` becomes (stemmed, folded), or ``None`` if not exactly one.

    ``word`` goes through the index's own tokenizer (:data:`memcore.query_syntax.TOKENIZE`) in a
    one-row in-memory FTS5 table, so ``prefers`` gives ``prefer`` exactly as a MATCH would.
    """
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE one USING fts5(x, tokenize = '{TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE one_i USING fts5vocab(one, instance)")
        _local.conn = conn
    conn.execute("DELETE FROM one")
    conn.execute("INSERT INTO one (rowid, x) VALUES (1, ?)", (word,))
    tokens = [row[0] for row in conn.execute("SELECT term FROM one_i")]
    return tokens[0] if len(tokens) == 1 else None


def query_words(fts: str) -> tuple[list[str], bool] | None:
    """Return the words of ``"w"``, ``("w1" AND "w2" ...)`` or ``("w1" OR "w2" ...)``, and whether it is an OR.

    ``fts`` is :attr:`memcore.query_syntax.ParsedQuery.fts`: every term is quoted, so a part
    ``"w"`` holding no blank and no quote is one bare word (not a phrase, not a prefix).
    ``None`` for any other shape (phrases, prefixes, NOT, nested groups, AND mixed with OR).
    """
    body = fts[1:-1] if fts.startswith("(") and fts.endswith(")") else fts
    any_of = " OR " in body
    words = []
    for part in body.split(" OR " if any_of else " AND "):
        if len(part) < 3 or part[0] != '"' or part[-1] != '"' or any(c in part[1:-1] for c in ' "()*'):
            return None
        words.append(part[1:-1])
    return words, any_of


def varints(blob: bytes) -> list[int]:
    """Decode a run of SQLite varints (big-endian 7-bit groups; a ninth byte holds 8 bits)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(value)
    return out


@dataclass
class Postings:
    """One token's rows in the index.

    Attributes:
        rowids: Matching rowids, ascending.
        freqs: Weighted term frequency of each (parallel to ``rowids``).
        groups: ``(f, lengths, rowids)`` per distinct weighted frequency ``f``; ``lengths``
            (document lengths in tokens) ascending, ``rowids`` parallel.
    """

    rowids: array[int]
    freqs: array[float]
    groups: list[tuple[float, array[int], array[int]]]
    _by_row: dict[int, float] | None = None

    def __len__(self) -> int:
        return len(self.rowids)

    def by_row(self) -> dict[int, float]:
        """Return rowid -> weighted frequency (made on first use: only an AND of words reads it)."""
        if self._by_row is None:
            self._by_row = dict(zip(self.rowids, self.freqs, strict=True))
        return self._by_row


_POSTINGS_SQL = (
    "SELECT i.doc, sum(CASE i.col WHEN 'title' THEN ? WHEN 'body' THEN ? ELSE ? END), e.dlen"
    " FROM temp.memcore_fts_i AS i JOIN entries AS e ON e.rowid = i.doc"
    " WHERE i.term = ? GROUP BY i.doc ORDER BY i.doc"
)


def _part(idf: float, f: float, d: float, avgdl: float) -> float:
    # fts5_aux.c, fts5Bm25Function: the same operations in the same order.
    return idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))


class Ranker:
    """Postings of the tokens searched in one index database, and the top-k over them.

    Not thread-safe: the owning :class:`memcore.index.SearchIndex` calls it under its lock.
    """

    def __init__(self) -> None:
        self._generation: str | None = None
        self._postings: OrderedDict[str, Postings] = OrderedDict()
        self._held = 0
        self._searches = 0
        self._vocab_ready = False
        # an AND of words searched again: its matches grouped by every word's weighted frequency
        self._joint: OrderedDict[tuple[str, ...], list[_JointGroup]] = OrderedDict()
        self._asked: dict[tuple[str, ...], int] = {}

    @property
    def tokens(self) -> list[str]:
        """The tokens whose postings are held now, least recently searched first."""
        return list(self._postings)

    def top(self, conn: sqlite3.Connection, fts: str, k: int) -> list[tuple[int, float]] | None:
        """Return the rows that can be among the ``k`` best for ``fts``, with their BM25 scores.

        Args:
            conn: The index database, inside a read transaction (one snapshot for the
                generation, the averages and the postings).
            fts: The FTS5 expression (:attr:`ParsedQuery.fts`).
            k: The limit (at least 1).

        Returns:
            ``(rowid, score)`` pairs (score as ``bm25()`` gives it: negative, lower is better):
            every match whose score is at least as good as the ``k``-th best, so ordering them
            by (score, file, position) and keeping ``k`` equals the full ranking's first
            ``k``; or ``None`` when this path does not apply (the caller uses ``bm25()``).
        """
        self._searches += 1
        shape = query_words(fts)
        if shape is None or self._searches < 2:
            return None
        words, any_of = shape
        tokens = [single_token(w) for w in words]
        if any(t is None for t in tokens):
            return None
        head = conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'generation'), (SELECT block FROM fts_data WHERE id = 1)"
        ).fetchone()
        if head is None or head[1] is None:
            return None
        generation = str(head[0])
        if generation != self._generation:
            self._postings.clear()
            self._joint.clear()
            self._asked.clear()
            self._held = 0
            self._generation = generation
        counts = varints(head[1])
        n_rows, n_tokens = counts[0], sum(counts[1:])
        if n_rows <= 0:
            return []
        lists = [self._get(conn, t) for t in tokens if t is not None]
        if any_of:
            # a word no entry holds adds 0.0 to every score in bm25(): leaving it out changes none
            lists = [p for p in lists if len(p)]
        if not lists or any(len(p) == 0 for p in lists):
            return []
        avgdl = float(n_tokens) / float(n_rows)
        idfs = []
        for p in lists:
            idf = math.log((n_rows - len(p) + 0.5) / (len(p) + 0.5))
            idfs.append(idf if idf > 0.0 else 1e-6)
        if len(lists) == 1 or any_of:
            return _threshold_top(lists, idfs, avgdl, k, any_of=any_of)
        key = tuple(t for t in tokens if t is not None)
        joint = self._joint.get(key)
        if joint is None:
            self._asked[key] = self._asked.get(key, 0) + 1
            if self._asked[key] < 2:  # a first AND of these words: the threshold algorithm
                return _threshold_top(lists, idfs, avgdl, k)
            joint = _join(lists)
            self._joint[key] = joint
            self._held += sum(len(rowids) for _fs, _l, rowids in joint)
            self._evict()
        else:
            self._joint.move_to_end(key)
        return _joint_top(joint, idfs, avgdl, k)

    def _evict(self) -> None:
        while self._held > MAX_POSTINGS and self._joint:
            _gone, groups = self._joint.popitem(last=False)
            self._held -= sum(len(rowids) for _fs, _l, rowids in groups)
        while self._held > MAX_POSTINGS and len(self._postings) > 1:
            _token, old = self._postings.popitem(last=False)
            self._held -= len(old)

    def _get(self, conn: sqlite3.Connection, token: str) -> Postings:
        found = self._postings.get(token)
        if found is not None:
            self._postings.move_to_end(token)
            return found
        if not self._vocab_ready:
            conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memcore_fts_i USING fts5vocab(main, fts, instance)")
            self._vocab_ready = True
        rowids: array[int] = array("q")
        freqs: array[float] = array("d")
        by_freq: dict[float, list[tuple[int, int]]] = {}
        for rowid, f, dlen in conn.execute(_POSTINGS_SQL, (*WEIGHTS, token)):
            rowids.append(rowid)
            freqs.append(f)
            by_freq.setdefault(f, []).append((dlen, rowid))
        groups = []
        for f, members in by_freq.items():
            members.sort()
            groups.append((f, array("q", [m[0] for m in members]), array("q", [m[1] for m in members])))
        postings = Postings(rowids, freqs, groups)
        self._postings[token] = postings
        self._held += len(postings)
        self._evict()
        return postings


def _threshold_top(
    lists: list[Postings], idfs: list[float], avgdl: float, k: int, *, any_of: bool = False
) -> list[tuple[int, float]]:
    """The threshold algorithm over the terms' streams; see the module docstring.

    ``any_of``: the words are alternatives (OR): a row lacking a word adds nothing for it (as
    ``bm25()``, whose part for a word that is absent is 0.0), and a stream that ends stops
    bounding unseen rows instead of ending the search.

    Always ends: at worst every row of a term is read (about as costly as ``bm25()`` over
    every match, which is what it replaces).

    Returns:
        Every match scoring at least the ``k``-th best, as ``(rowid, bm25 score)``.
    """
    k1p1 = K1 + 1.0
    # fts5_aux.c computes idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / avgdl))); the
    # same operations in the same order below, with the D term computed once per row.
    heaps: list[list[tuple[float, int, int]]] = []  # per term: (-part, group, position) of each group's head
    for p, idf in zip(lists, idfs, strict=True):
        heap = [(-_part(idf, f, float(lengths[0]), avgdl), g, 0) for g, (f, lengths, _r) in enumerate(p.groups)]
        heapq.heapify(heap)
        heaps.append(heap)
    lookups = [p.by_row() if len(lists) > 1 else {} for p in lists]
    seen: set[int] = set()
    hits: list[tuple[int, float]] = []
    best: list[float] = []  # min-heap of the k best sums
    terms = range(len(lists))
    while True:
        for t in terms:
            heap = heaps[t]
            if not heap:
                if any_of:
                    if not any(heaps):
                        return _cut(hits, best, k)  # every row of every word was read
                    continue
                return _cut(hits, best, k)  # this term's every row was read: so was every match
            _neg, g, pos = heapq.heappop(heap)
            f, lengths, rowids = lists[t].groups[g]
            if pos + 1 < len(rowids):
                norm = K1 * (1 - B + B * float(lengths[pos + 1]) / avgdl)
                heapq.heappush(heap, (-(idfs[t] * ((f * k1p1) / (f + norm))), g, pos + 1))
            rowid = rowids[pos]
            if rowid in seen:
                continue
            seen.add(rowid)
            norm = K1 * (1 - B + B * float(lengths[pos]) / avgdl)
            total = 0.0
            for j in terms:
                fj = f if j == t else lookups[j].get(rowid)
                if fj is None:
                    if any_of:
                        continue
                    break
                total += idfs[j] * ((fj * k1p1) / (fj + norm))
            else:
                hits.append((rowid, -1.0 * total))
                if len(best) < k:
                    heapq.heappush(best, total)
                elif total > best[0]:
                    heapq.heapreplace(best, total)
        if len(best) >= k:
            bound = 0.0  # the best an unread row can score: each word's next part
            for heap in heaps:
                if heap:
                    bound += -heap[0][0]
                elif not any_of:
                    return _cut(hits, best, k)
            if best[0] > bound:
                return _cut(hits, best, k)


#: One group of an AND's matches: (each word's weighted frequency, lengths ascending, rowids).
_JointGroup = tuple[tuple[float, ...], "array[int]", "array[int]"]


def _join(lists: list[Postings]) -> list[_JointGroup]:
    """Group the rows holding every word by their words' weighted frequencies, shortest first."""
    rare = min(range(len(lists)), key=lambda j: len(lists[j]))
    lookups = [p.by_row() for p in lists]
    by: dict[tuple[float, ...], list[tuple[int, int]]] = {}
    for f, lengths, rowids in lists[rare].groups:
        for length, rowid in zip(lengths, rowids, strict=True):
            found: list[float] = []
            for j, lookup in enumerate(lookups):
                fj = f if j == rare else lookup.get(rowid)
                if fj is None:
                    break
                found.append(fj)
            else:
                by.setdefault(tuple(found), []).append((length, rowid))
    groups: list[_JointGroup] = []
    for key, members in by.items():
        members.sort()
        groups.append((key, array("q", [m[0] for m in members]), array("q", [m[1] for m in members])))
    return groups


def _joint_top(groups: list[_JointGroup], idfs: list[float], avgdl: float, k: int) -> list[tuple[int, float]]:
    """Top ``k`` of an AND from its joint groups: inside a group the score falls as the length grows.

    Returns:
        Every match scoring at least the ``k``-th best, as ``(rowid, bm25 score)``.
    """
    k1p1 = K1 + 1.0

    def score(fs: tuple[float, ...], length: int) -> float:
        # the threshold algorithm's sum: the same operations in the same order
        norm = K1 * (1 - B + B * float(length) / avgdl)
        total = 0.0
        for idf, f in zip(idfs, fs, strict=True):
            total += idf * ((f * k1p1) / (f + norm))
        return total

    heap = [(-score(fs, lengths[0]), g, 0) for g, (fs, lengths, _r) in enumerate(groups) if len(lengths)]
    heapq.heapify(heap)
    hits: list[tuple[int, float]] = []
    best: list[float] = []
    while heap:
        neg, g, pos = heap[0]
        total = -neg
        if len(best) >= k and total < best[0]:
            break  # every row left scores strictly less than the k-th best
        fs, lengths, rowids = groups[g]
        if pos + 1 < len(rowids):
            heapq.heapreplace(heap, (-score(fs, lengths[pos + 1]), g, pos + 1))
        else:
            heapq.heappop(heap)
        hits.append((rowids[pos], -1.0 * total))
        if len(best) < k:
            heapq.heappush(best, total)
        elif total > best[0]:
            heapq.heapreplace(best, total)
    return _cut(hits, best, k)


def _cut(hits: list[tuple[int, float]], best: list[float], k: int) -> list[tuple[int, float]]:
    """Keep the hits at least as good as the ``k``-th best (all of them when fewer than ``k``)."""
    if len(best) < k:
        return hits
    floor = -1.0 * best[0]
    return [(rowid, score) for rowid, score in hits if score <= floor]
