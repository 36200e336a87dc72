"""The rules of a Claude Code memory folder -> diagnostics, each with its file and line.

Errors (the file is read as text, as Claude Code reads it, and never rewritten until fixed):
invalid frontmatter YAML, a file that is not UTF-8, unreadable memcore free data. Warnings:
index lines linking to files that do not exist (a known Claude Code drift, B.3), topics the
index does not list, an index past the 200 lines or 25 KB Claude Code loads, an unknown topic
``type``, a ``modified`` that is not a time, imports that are refused, missing or too deep (A.2),
relations to ids not in the store. Info: ``[[slug]]`` links to no topic (Claude Code does not
resolve them either).
"""

from __future__ import annotations

from memcore.models import Diagnostic, Severity
from memcore_claudecode._parse import problem
from memcore_claudecode._store import Snapshot
from memcore_claudecode.mapping import FORMAT, INDEX_FILE, INDEX_MAX_BYTES, INDEX_MAX_LINES, KIND_OF_TYPE, RELATION_LINK

__all__ = ["check"]


def _line_of(text: str, key: str) -> int | None:
    return next((n for n, line in enumerate(text.split("\n"), 1) if line.lstrip().startswith(f"{key}:")), None)


def check(snap: Snapshot) -> list[Diagnostic]:
    """Return every finding of the store ``snap`` holds (see the module docstring)."""
    found: list[Diagnostic] = [*snap.index.problems]

    def warn(path: str, code: str, why: str, line: int | None = None, level: Severity = Severity.WARNING) -> None:
        found.append(problem(path, code, why, line, level, entry_id=None if path == INDEX_FILE else path))

    for doc in [*snap.unreadable, *(snap.docs[p] for p in snap.order())]:
        found.extend(doc.problems)
    found.extend(snap.import_problems)
    index = snap.index
    for target, line in sorted(index.links.items(), key=lambda item: item[1].number):
        if snap.roles.get(target) != "topic":
            warn(INDEX_FILE, "index-missing-file", f"links to {target}, which is not a memory file here", line.number)
    if len(index.lines) > INDEX_MAX_LINES:
        why = f"{len(index.lines)} lines: Claude Code loads only the first {INDEX_MAX_LINES}; shorten the hooks"
        warn(INDEX_FILE, "index-too-long", why, INDEX_MAX_LINES + 1)
    size = len(index.file.text.encode("utf-8")) if index.file is not None else 0
    if size > INDEX_MAX_BYTES:
        warn(INDEX_FILE, "index-too-large", f"{size} bytes: Claude Code loads only the first 25 KB")
    for path in snap.order():
        entry, problems = snap.decoded(path)
        found.extend(problems)
        text, cc = snap.docs[path].text, entry.extra.get(FORMAT, {})
        if snap.roles[path] == "topic" and path not in index.links:
            warn(path, "not-indexed", f"{INDEX_FILE} does not list this memory; Claude Code may not see it")
        if snap.roles[path] == "topic" and "type" in cc:
            why = f"type {cc['type']!r} is none of {', '.join(KIND_OF_TYPE)}; read as a note"
            warn(path, "unknown-type", why, _line_of(text, "type"))
        frontmatter = cc.get("frontmatter") if snap.roles[path] == "topic" else None
        frontmatter = frontmatter if isinstance(frontmatter, dict) else {}
        nested = frontmatter.get("metadata")
        if "modified" in {*frontmatter, *(nested if isinstance(nested, dict) else ())}:
            warn(path, "modified", "modified is not an ISO 8601 time with a zone", _line_of(text, "modified"))
        for relation in entry.relations:
            if relation.resolved and relation.target not in snap.docs:
                why = f"relation {relation.type!r} points at {relation.target!r}, which is not in the store"
                warn(path, "dangling-relation", why)
            elif not relation.resolved and relation.type == RELATION_LINK:
                why = f"[[{relation.target}]] names no memory of this folder"
                warn(path, "unresolved-link", why, None, Severity.INFO)
    return found
