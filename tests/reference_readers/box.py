"""A Box-memory workspace read by the schema (``references/schema.md``), as reference-notes/box-memory.md describes it.

The authors' "implementation" is skills that follow the schema, so this is the schema's reading:
every ``*.md`` of ``memories/``, ``companions/`` and ``teams/<team>/{memories,companions}/``
except ``README.md``; YAML frontmatter between ``---`` lines (no delimiters or no ``id`` /
``kind``: an orphan, not a memory); the body is the markdown after it. Fields: ``id``, ``slug``,
``title``, ``kind``, ``status``, ``team``, ``agent``, ``confidence``, ``tags``, ``related``
(``"[[Title]]"`` strings, resolved through ``by_wikilink``: the title of a memory → its id),
``supersedes``, ``superseded_by``, ``created_at``, ``updated_at``, ``expires_at``. Each folder's
``_index.json`` entry for the file is read too (the recall path's first stop).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_FRONTMATTER = re.compile(r"\A---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)")
_WIKILINK = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")
FOLDERS = ("memories", "companions")


@dataclass
class BoxMemory:
    """One memory file as the schema reads it.

    Attributes:
        path: Workspace-relative path.
        frontmatter: The YAML mapping (timestamps as the strings written).
        body: The markdown after the frontmatter.
        index: The file's entry in its folder's ``_index.json`` (``None``: not indexed).
    """

    path: str
    frontmatter: dict[str, Any]
    body: str
    index: dict[str, Any] | None = None
    related: list[str] = field(default_factory=list)


class _Loader(yaml.SafeLoader):
    """Safe YAML that keeps timestamps as written (the schema's values are ISO strings)."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in value if tag != "tag:yaml.org,2002:timestamp"]
    for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_memory(text: str) -> tuple[dict[str, Any], str] | None:
    """Return ``(frontmatter, body)`` of a memory file, or ``None`` for an orphan (no delimiters, id or kind)."""
    text = text.removeprefix("\ufeff")
    found = _FRONTMATTER.match(text)
    if found is None:
        return None
    try:
        data = yaml.load(found.group(1), Loader=_Loader)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not data.get("id") or not data.get("kind"):
        return None
    return data, text[found.end() :]


def wikilink_title(value: object) -> str | None:
    """The title a ``"[[Title]]"`` (``|alias`` / ``#heading`` dropped) names, else ``None``."""
    found = _WIKILINK.match(str(value).strip())
    return found.group(1).strip() if found else None


def read_workspace(root: Path) -> list[BoxMemory]:
    """Return every memory of a workspace, ``related`` resolved to ids by title, sorted by path."""
    folders = [root / name for name in FOLDERS]
    teams = root / "teams"
    if teams.is_dir():
        folders += [team / name for team in sorted(teams.iterdir()) for name in FOLDERS]
    out: list[BoxMemory] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        index_path = folder / "_index.json"
        index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
        by_file = {e.get("filename"): e for e in index.get("entries", [])}
        for path in sorted(folder.glob("*.md")):
            if path.name == "README.md":
                continue
            parsed = parse_memory(path.read_text(encoding="utf-8"))
            if parsed is None:
                continue
            out.append(BoxMemory(str(path.relative_to(root)), parsed[0], parsed[1], by_file.get(path.name)))
    by_wikilink = {str(m.frontmatter.get("title", "")): str(m.frontmatter["id"]) for m in out}
    for memory in out:
        for link in memory.frontmatter.get("related") or []:
            title = wikilink_title(link)
            memory.related.append(by_wikilink.get(title, title or str(link)) if title is not None else str(link))
    return out
