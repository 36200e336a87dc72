"""The rules of a memory.jsonl file -> diagnostics (file:line), beside what the reader found.

Errors: lines that cannot be read (writes refuse the file until they are fixed). Warnings:
what the reference server reads differently from memcore (spec §3): a BOM, legacy key names,
records of another ``type``, a name used by an earlier entity (the server's lookups take the
first), a relation repeated, from a name that is no entity, or to one (a "ghost" node).
"""

from __future__ import annotations

from memcore.models import Diagnostic, Severity
from memcore_mcpmemory._parse import Graph, Record
from memcore_mcpmemory.codec import entity_ids

__all__ = ["check"]


def _warn(name: str, record: Record, code: str, message: str, entry_id: str | None = None) -> Diagnostic:
    return Diagnostic(
        path=name,
        line=record.number or None,
        code=f"mcpmemory.{code}",
        severity=Severity.WARNING,
        message=message,
        entry_id=entry_id,
    )


def check(graph: Graph, name: str, notes: dict[int, str] | None = None) -> list[Diagnostic]:
    """Return the findings of the file ``name``, in line order within each rule.

    Args:
        graph: The parsed file.
        name: The file's name (the diagnostics' ``path``).
        notes: Line number -> why that entity's ``memcore`` key was ignored (from the reader).
    """
    found: list[Diagnostic] = []
    if graph.bom:
        found.append(
            Diagnostic(
                path=name,
                line=1,
                code="mcpmemory.bom",
                severity=Severity.WARNING,
                message="the file starts with a UTF-8 BOM, on which the reference server fails to parse line 1 "
                "(memcore keeps it); re-save the file as UTF-8 without a BOM",
            )
        )
    for record in graph.records:
        if record.problem is not None:
            found.append(record.problem)
        found.extend(record.notes)
    entities = graph.entities()
    first: dict[str, Record] = {}
    for record, entry_id in zip(entities, entity_ids(entities), strict=True):
        if record.name in first:
            earlier = first[record.name].number
            found.append(
                _warn(
                    name,
                    record,
                    "duplicate-name",
                    f"entity name {record.name!r} is already used on line {earlier}: the reference server looks up "
                    f"the first; memcore reads this one as {entry_id!r}",
                    entry_id,
                )
            )
        first.setdefault(record.name, record)
        if notes and record.number in notes:
            found.append(_warn(name, record, "memcore-key", notes[record.number], entry_id))
    seen: dict[tuple[str, str, str], int] = {}
    for record in graph.relations():
        triple = record.triple
        if triple in seen:
            found.append(
                _warn(
                    name,
                    record,
                    "duplicate-relation",
                    f"relation {triple} repeats line {seen[triple]}; memcore shows it once",
                )
            )
            continue
        seen[triple] = record.number
        if record.name not in first:
            found.append(
                _warn(
                    name,
                    record,
                    "ghost-source",
                    f"relation {record.relation_type!r} starts at {record.name!r}, which is no entity: no memcore "
                    "entry shows it (the line is kept as it is)",
                )
            )
        elif not record.to or not record.relation_type:
            found.append(
                _warn(
                    name,
                    record,
                    "empty-relation",
                    f"relation {triple} has an empty 'to' or 'relationType': "
                    "no memcore relation can hold it (the line is kept as it is)",
                )
            )
        elif record.to not in first:
            found.append(
                _warn(
                    name,
                    record,
                    "dangling-relation",
                    f"relation {record.relation_type!r} points at {record.to!r}, which is no entity (the server "
                    "allows this); memcore reads it as an unresolved link",
                )
            )
    return found
