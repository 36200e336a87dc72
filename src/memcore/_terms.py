"""How text splits into search terms, kept apart from the pydantic models.

:mod:`memcore.models` re-exports :func:`text_terms`; :mod:`memcore.query_syntax` imports it from
here, so that parsing a query (the CLI's indexed search) imports no pydantic.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["text_terms"]

_TERM = re.compile(r"[^\W_]+")


def text_terms(text: str) -> list[str]:
    """Split text into search terms: runs of letters and digits, case-folded, accents removed.

    The same rule as the search index's FTS5 ``unicode61 remove_diacritics 2`` tokenizer, so a
    full scan and an indexed search agree: ``"Café-Übersicht_v2"`` gives
    ``["cafe", "ubersicht", "v2"]``.
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _TERM.findall(stripped)
