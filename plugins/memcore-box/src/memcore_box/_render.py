"""Byte-preserving edits: a memory file's text made from frontmatter, or patched to new values."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memcore.frontmatter import INDENTED
from memcore.models import MemoryEntry
from memcore.storage import TextFile
from memcore_box._parse import _File, _PlainMeta
from memcore_box.codec import meta_from_entry
from memcore_box.mapping import FIELD_ORDER

__all__ = ["patched", "render"]

# Line breaks str.splitlines() knows besides "\n" (patch_yaml numbers lines with it).
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def render(meta: dict[str, Any], body: str) -> bytes:
    return TextFile(text="").encode(f"---\n{INDENTED.dump_mapping(meta)}---\n{body}")


def patched(
    current: _File,
    entry: MemoryEntry,
    slug: str,
    *,
    title_of: Callable[[str], str | None],
    resolve: Callable[[str], str | None],
) -> tuple[dict[str, Any], str]:
    """Return the frontmatter mapping for ``entry`` and the file's YAML text patched to it.

    From the plain frontmatter of the read path (``current.meta`` a :class:`_PlainMeta`,
    its keys' lines known) when the patch works on it: unchanged keys keep their lines
    byte for byte either way. When it does not (:meth:`~memcore.frontmatter.YAMLWriter.patch` would dump the whole
    mapping, where values kept from the file keep their quoting only as ruamel's
    round-trip objects), and for any text with a line break other than ``\n``, both are
    made again from the round-trip parse, as before.
    """
    if isinstance(current.meta, _PlainMeta) and not _OTHER_BREAKS.search(current.yaml_text):
        meta = meta_from_entry(entry, slug=slug, title_of=title_of, existing=current.meta, resolve=resolve)
        patched = INDENTED.patch(current.yaml_text, current.meta, meta, FIELD_ORDER, fallback=False)
        if patched is not None:
            return meta, patched
    old = current.doc.metadata
    meta = meta_from_entry(entry, slug=slug, title_of=title_of, existing=old, resolve=resolve)
    patched = INDENTED.patch(current.yaml_text, old, meta, FIELD_ORDER)
    assert patched is not None
    return meta, patched
