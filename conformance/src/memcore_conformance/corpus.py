# ruff: noqa: RUF001 - the corpus is made of confusable characters on purpose
"""The adversarial round-trip corpus.

:func:`build_corpus` returns ``{case name: MemoryEntry}``; :data:`CORPUS_CASES` lists the names
(the suite parametrizes one test per name). Every case must either round-trip through a
reopened store (after the provider's ``normalize_expected``) or, when the provider lists it in
``rejected_corpus``, be refused by ``add`` with :class:`~memcore.errors.InvalidEntryError`
leaving every file unchanged. Dropping or mangling a case silently is a failure.

Cases (bodies end with a newline unless the case is about that):

- unicode: ``cjk``, ``rtl`` (Arabic and Hebrew mixed with LTR), ``emoji`` (ZWJ sequences, flags,
  skin tones), ``nfd`` (decomposed accents; the body must keep them decomposed, the title is
  NFC by the model's rule), ``astral`` (characters outside the BMP, a BOM character inside);
- bodies: ``empty-body``, ``whitespace-body``, ``no-final-newline``, ``many-final-newlines``,
  ``leading-blank-lines``, ``large-body`` (1 MiB), ``dashes-body`` (``---`` lines),
  ``frontmatter-like-body``, ``fenced-code``, ``html-comment``, ``heading-lines``,
  ``tabs-and-trailing-spaces``;
- YAML-hostile titles, one case each: ``KB: x``, ``no``, ``on``, ``10:00``, ``1.10``, ``01234``,
  ``2025-10-24``, ``@bob``, ``[draft] x``, ``#tag``, ``abc "def" ghi``;
- ``yaml-tags`` (tags ``no``, ``on``, ``10:00``, ``1.10``, ``01234``, ``2025-10-24``),
  ``yaml-tags-symbols`` (``@bob``, ``#tag``, ``KB:x``), ``yaml-source`` (source ``KB: x``);
- ``extra-hostile-keys``: ``extra[<format>]`` with keys ``content``, ``handler``, ``id``, ``type``
  and a nested value; ``extra-scalars``: strings that YAML 1.1 would retype (``"no"``,
  ``"01234"``, ``"1.10"``, ``"2025-10-24"``) next to real ints, floats, booleans and null.
"""

from __future__ import annotations

from collections.abc import Callable

from memcore.models import MemoryEntry

__all__ = ["CORPUS_CASES", "HOSTILE_TITLES", "LARGE_BODY_BYTES", "build_corpus"]

#: Size of the ``large-body`` case's body, in bytes (1 MiB).
LARGE_BODY_BYTES = 1024 * 1024

#: YAML-hostile scalars used as titles, one corpus case each (``yaml-title-<n>``).
HOSTILE_TITLES: tuple[str, ...] = (
    "KB: x",
    "no",
    "on",
    "10:00",
    "1.10",
    "01234",
    "2025-10-24",
    "@bob",
    "[draft] x",
    "#tag",
    'abc "def" ghi',
)


def _large_body() -> str:
    line = "Large body line: 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
    text = line * (LARGE_BODY_BYTES // len(line) + 1)
    return text[: LARGE_BODY_BYTES - 1] + "\n"


def build_corpus(make_entry: Callable[..., MemoryEntry], format_name: str) -> dict[str, MemoryEntry]:
    """Build the corpus with ``make_entry(**overrides)`` (the ``memcore_make_entry`` fixture).

    Args:
        make_entry: Factory of entries the format can add.
        format_name: The provider's format name; ``extra`` cases use that namespace.

    Returns:
        ``{case name: entry}`` in :data:`CORPUS_CASES` order.
    """
    cases: dict[str, MemoryEntry] = {
        "cjk": make_entry(
            title="記憶の整理 中文标题 한국어", body="東京で会議。\n决定：使用新的格式。\n한국어 문장.\n"
        ),
        "rtl": make_entry(
            title="ذاكرة العميل עברית",
            body="النص العربي mixed with English و 123.\nשלום עולם (hello) עברית.\n\u200fRLM mark\n",
        ),
        "emoji": make_entry(
            title="Launch 🚀 plan 👩‍👩‍👧",
            body="Family 👨‍👩‍👧‍👦, flag 🇫🇷, skin tone 👍🏽, keycap 1️⃣.\n",
        ),
        "nfd": make_entry(title="re\u0301sume\u0301 cafe\u0301", body="Cafe\u0301 de\u0301ja\u0300 vu, n\u0303.\n"),
        "astral": make_entry(title="𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈", body="Math 𝑥² + 𝑦², Gothic 𐌰𐌱, zero\u200bwidth, BOM\ufeffinside.\n"),
        "empty-body": make_entry(body=""),
        "whitespace-body": make_entry(body="   \n\t\n  "),
        "no-final-newline": make_entry(body="No newline at the end"),
        "many-final-newlines": make_entry(body="Three newlines follow\n\n\n"),
        "leading-blank-lines": make_entry(body="\n\n  indented start after blank lines\n"),
        "large-body": make_entry(body=_large_body()),
        "dashes-body": make_entry(body="Intro\n---\nAfter a rule\n---\n\n---\nEnd\n"),
        "frontmatter-like-body": make_entry(body="---\ntitle: fake\nid: evil\ntype: x\n---\nText after\n"),
        "fenced-code": make_entry(
            body="Code:\n\n```yaml\n---\nkey: value\n## not a heading\n<!-- not a comment -->\n```\n\n"
            "~~~\n# also not a heading\n~~~\n"
        ),
        "html-comment": make_entry(
            body="before\n<!-- maka-memory: id=fake kind=fact -->\n<!-- a plain comment -->\nafter\n"
        ),
        "heading-lines": make_entry(
            body="# H1 line\n## H2 line {#fake-id}\n### H3 line {F#fake}\n#hashtag-not-heading\n####### seven\n"
        ),
        "tabs-and-trailing-spaces": make_entry(body="\tTabbed\ttext  \ntrailing spaces   \n \t \nend\n"),
        # written on Windows, or by a format that keeps a body's bytes (Maka): a format whose
        # files have one line ending of their own stores LF and says so in normalize_expected
        "crlf-body": make_entry(body="Line one\r\nLine two\r\n"),
        "cr-body": make_entry(body="Old Mac line\rnext line\r"),
    }
    for n, title in enumerate(HOSTILE_TITLES, start=1):
        cases[f"yaml-title-{n}"] = make_entry(title=title)
    cases["yaml-tags"] = make_entry(tags=["no", "on", "10:00", "1.10", "01234", "2025-10-24"])
    cases["yaml-tags-symbols"] = make_entry(tags=["@bob", "#tag", "KB:x"])
    cases["yaml-source"] = make_entry(source="KB: x")
    cases["extra-hostile-keys"] = make_entry(
        extra={
            format_name: {
                "content": "KB: x",
                "handler": "no",
                "id": "10:00",
                "type": "2025-10-24",
                "nested": {"list": [1, "on", None, True], "text": '[draft] abc "def" ghi'},
            }
        }
    )
    cases["extra-scalars"] = make_entry(
        extra={
            format_name: {
                "no_text": "no",
                "zero_padded": "01234",
                "version_text": "1.10",
                "date_text": "2025-10-24",
                "time_text": "10:00",
                "at": "@bob",
                "integer": 1234,
                "float": 1.1,
                "false": False,
                "null": None,
            }
        }
    )
    return cases


def _names() -> tuple[str, ...]:
    return tuple(build_corpus(lambda **kw: MemoryEntry(**kw), "x"))


#: The corpus case names, in order.
CORPUS_CASES: tuple[str, ...] = _names()
