"""WhiteBox rules -> diagnostics: what ``validate`` reports beside what reading records.

Each function appends :class:`~memcore.models.Diagnostic` objects (code ``wb.*``, the file
vault-relative, the line where known); none raises for a bad file.

Diagnostics (code, severity): ``wb.block-malformed`` error (unterminated fence, block
without frontmatter), ``wb.missing-date`` / ``wb.bad-date`` / ``wb.wrong-month`` /
``wb.missing-source`` / ``wb.unknown-confidence`` errors, ``wb.frontmatter`` error
(a stable file's YAML), ``wb.not-utf8`` error, ``wb.unregistered-tag`` warning (a tag
not in tags.md), ``wb.outside-scopes`` warning (a file no scope of scopes.md covers),
``wb.missing-confidence`` / ``wb.missing-tags`` / ``wb.yaml`` / ``wb.fence-info`` /
``wb.month-file-name`` / ``wb.unread-text`` (prose in a month file outside every block)
warnings, ``wb.bare-block`` / ``wb.nested-fence`` info.
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from memcore.errors import AmbiguousIdError, UnsafePathError
from memcore.mapping import CONFIDENCE_LABELS, confidence_from_label
from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore.storage import gate_allows, list_names, resolved_rel
from memcore.switches import switch_on
from memcore_whitebox._blocks import Fields, RawBlock
from memcore_whitebox._parse import MONTH_FILE, diag
from memcore_whitebox._scopes import ScopeTable, listing, name_allowed, walk
from memcore_whitebox._tags import TagRegistry
from memcore_whitebox.codec import as_tags, is_month_path, parse_date
from memcore_whitebox.mapping import SKIPPED_FOLDERS

if TYPE_CHECKING:
    from memcore_whitebox.provider import WhiteBoxProvider

__all__ = [
    "block_problem",
    "check_observation",
    "hands_bytes",
    "is_observation_file",
    "refuse_twins",
    "scan",
    "symlink_diagnostics",
]


#: Whether ``rel`` is a monthly observation file (``observations/<name>.md``).
is_observation_file = is_month_path


def symlink_diagnostics(root: Path, scopes: ScopeTable) -> list[Diagnostic]:
    """``wb.symlink`` for every link the listing skips in the visible part of the vault.

    An error where the link leads outside the vault or past a gate (``sensitive/``, another
    scope: never served), or where writes go through it (``observations/``, a month log);
    a warning otherwise (the link is not listed).
    """
    diags: list[Diagnostic] = []
    allowed = functools.partial(name_allowed, scopes)

    def walk(folder: Path, prefix: str) -> None:
        for name, item in listing(folder):
            rel = prefix + name
            if name.startswith(".") or (not prefix and name in {*SKIPPED_FOLDERS, "tags.md", "scopes.md"}):
                continue  # tags.md has its own wb.symlink; a linked scopes.md refuses to open
            if item.is_symlink():
                if not (scopes.folder_visible(rel) or scopes.visible(rel)):
                    continue
                real = resolved_rel(root, rel)
                if real is None:
                    why, severity = "it leads outside the vault; never read", Severity.ERROR
                elif not gate_allows(root, rel, allowed) and allowed(rel):
                    why, severity = f"it leads to {real}, past the vault's gates; never served", Severity.ERROR
                elif rel == "observations" or is_observation_file(rel):
                    why, severity = "observation writes fail through a link", Severity.ERROR
                else:
                    why, severity = f"it leads to {real}; links are not listed", Severity.WARNING
                diags.append(
                    diag(
                        rel,
                        None,
                        "wb.symlink",
                        severity,
                        f"{rel} is a symlink: {why}; put the file or folder itself there",
                    )
                )
            elif item.is_dir() and scopes.folder_visible(rel):
                walk(Path(item.path), rel + "/")

    walk(root, "")
    return diags


def block_problem(rel: str, blk: RawBlock, diags: list[Diagnostic]) -> None:
    """Diagnose a block that is not an observation (malformed, or fenced with an info string)."""
    if blk.problem is not None:
        diags.append(diag(rel, blk.line, "wb.block-malformed", Severity.ERROR, blk.problem + "; fix the block"))
    elif blk.info and blk.body.lstrip().startswith("---"):
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.fence-info",
                Severity.WARNING,
                f"fenced block with info string {blk.info!r} looks like an observation but is "
                "not read as one (WhiteBox fences have no info string)",
            )
        )


def check_observation(
    rel: str, entry_id: str, blk: RawBlock, fields: Fields, registry: TagRegistry | None, diags: list[Diagnostic]
) -> None:
    """Diagnose one observation block against the format's rules (spec "Observations", "Tags")."""
    values = fields.values

    def at(key: str) -> int:
        return blk.fm_line + fields.lines.get(key, 1) - 1

    if blk.layout == "bare":
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.bare-block",
                Severity.INFO,
                "unfenced observation (as the spec draws it): memcore reads it, the reference parser does not",
                entry_id,
            )
        )
    if fields.yaml_error is not None:
        diags.append(
            diag(
                rel,
                blk.fm_line,
                "wb.yaml",
                Severity.WARNING,
                f"frontmatter is not valid YAML, read line by line: {fields.yaml_error}",
                entry_id,
            )
        )
    date_value = values.get("date")
    if date_value in (None, ""):
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.missing-date",
                Severity.ERROR,
                "observation has no date; add `date: YYYY-MM-DD`",
                entry_id,
            )
        )
    elif not isinstance(date_value, str) or parse_date(date_value) is None:
        diags.append(
            diag(
                rel,
                at("date"),
                "wb.bad-date",
                Severity.ERROR,
                f"date {date_value!r} is not a YYYY-MM-DD date",
                entry_id,
            )
        )
    else:
        m = MONTH_FILE.match(rel.rsplit("/", 1)[-1])
        if m is not None and date_value[:7] != f"{m.group(1)}-{m.group(2)}":
            diags.append(
                diag(
                    rel,
                    at("date"),
                    "wb.wrong-month",
                    Severity.ERROR,
                    f"date {date_value} belongs in observations/{date_value[:7]}.md",
                    entry_id,
                )
            )
    if values.get("source") in (None, ""):
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.missing-source",
                Severity.ERROR,
                "observation has no source; add `source: <agent or model>`",
                entry_id,
            )
        )
    label = values.get("confidence")
    if label in (None, ""):
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.missing-confidence",
                Severity.WARNING,
                "observation has no confidence; add `confidence: <" + " | ".join(CONFIDENCE_LABELS) + ">`",
                entry_id,
            )
        )
    elif not isinstance(label, str) or confidence_from_label(label) is None:
        diags.append(
            diag(
                rel,
                at("confidence"),
                "wb.unknown-confidence",
                Severity.ERROR,
                f"unknown confidence {label!r}; use one of {', '.join(CONFIDENCE_LABELS)}",
                entry_id,
            )
        )
    elif label not in CONFIDENCE_LABELS:
        diags.append(
            diag(
                rel,
                at("confidence"),
                "wb.confidence-spelling",
                Severity.WARNING,
                f"confidence {label!r} read as {confidence_from_label(label)}; the reference tools "
                f"only know {', '.join(CONFIDENCE_LABELS)} exactly",
                entry_id,
            )
        )
    if "tags" not in values:
        diags.append(diag(rel, blk.line, "wb.missing-tags", Severity.WARNING, "observation has no tags line", entry_id))
    elif values["tags"] is not None and not isinstance(values["tags"], list):
        diags.append(
            diag(
                rel,
                at("tags"),
                "wb.tags-not-list",
                Severity.WARNING,
                "tags should be an inline list, e.g. [a, b]",
                entry_id,
            )
        )
    if registry is not None:
        for tag in as_tags(values.get("tags")):
            if not registry.knows(tag):
                diags.append(
                    diag(
                        rel,
                        at("tags"),
                        "wb.unregistered-tag",
                        Severity.WARNING,
                        f"tag {tag!r} is not in tags.md (Active or Proposed); agents append new tags under Proposed",
                        entry_id,
                    )
                )
    if "```" in blk.body and blk.layout == "fenced":
        diags.append(
            diag(
                rel,
                blk.line,
                "wb.nested-fence",
                Severity.INFO,
                "body holds fenced code: the reference parser truncates it there",
                entry_id,
            )
        )


def _spellings(root: Path, rel: str) -> list[str]:
    """Return every vault-relative path on disk that normalises (NFC) to ``rel``, sorted.

    More than one means NFC/NFD twins somewhere along the path (a file or a folder).
    """
    found = [""]
    for component in unicodedata.normalize("NFC", rel).split("/"):
        if component in {"", ".", ".."}:
            return []
        found = [
            prefix + name + "/"
            for prefix in found
            for name in list_names(root / prefix if prefix else root).get(component, [])
        ]
        if not found:
            return []
    return sorted(p[:-1] for p in found)


def refuse_twins(root: Path, entry_id: str) -> None:
    """Raise :class:`AmbiguousIdError` when the file of ``entry_id`` has NFC/NFD twins.

    Two files whose names differ only in Unicode normalisation read under one id; memcore
    would read one and write one of them, not saying which. Nothing is read or written.
    """
    rel = unicodedata.normalize("NFC", entry_id).split("#", 1)[0]
    if rel.isascii():  # an ASCII name has one spelling
        return
    places = _spellings(root, rel)
    if len(places) > 1:
        raise AmbiguousIdError(
            f"whitebox: id {entry_id!a} names {len(places)} files whose names differ only in Unicode "
            f"normalisation (NFC/NFD twins): {', '.join(ascii(p) for p in places)}; memcore will not pick "
            "one. Merge them by hand and delete the other spelling (`memcore validate` reports "
            "whitebox.name-twins)",
            entry_id=entry_id,
            places=tuple(places),
        )


def hands_bytes() -> bool:
    """Whether :func:`scan` hands core each file's bytes (default: yes; ``MEMCORE_WHITEBOX_SOURCE_BYTES=0``: no).

    Core checks every source file of a ``read_all``/``validate`` for refused control characters;
    a file the scan handed over (:meth:`memcore.provider.BaseProvider.source_bytes_read`) is
    checked from those bytes, one not handed over is read from disk a second time.
    """
    return switch_on("MEMCORE_WHITEBOX_SOURCE_BYTES")


def scan(provider: WhiteBoxProvider, entries: list[MemoryEntry] | None) -> list[Diagnostic]:
    """Return what ``provider.validate()`` reports; collect every entry into ``entries`` when it is a list.

    Each file read is handed to core's control-character check (:func:`hands_bytes`), under the
    path ``source_files()`` gives it (both list the files with the same walk).
    """
    provider._sync()
    handed = hands_bytes()
    diags: list[Diagnostic] = []
    if (provider.root / "tags.md").is_symlink():
        diags.append(
            diag(
                "tags.md",
                None,
                "wb.symlink",
                Severity.ERROR,
                "tags.md is a symlink: not read (it may point outside the vault) and never "
                "replaced; put the file itself there",
            )
        )
    diags.extend(symlink_diagnostics(provider.root, provider.scopes))
    registry = provider.tag_registry()
    scopes = provider.scopes
    for rel in walk(provider.root, provider.scopes):
        try:
            data, version = provider.storage.read(rel)
        except (OSError, UnsafePathError) as exc:
            diags.append(diag(rel, None, "wb.unreadable", Severity.ERROR, str(exc)))
            continue
        if handed:
            provider.source_bytes_read(rel, data)
        if scopes.present and not scopes.in_any_scope(rel):
            diags.append(
                diag(rel, None, "wb.outside-scopes", Severity.WARNING, "no scope of scopes.md includes this file")
            )
        if is_observation_file(rel):
            if MONTH_FILE.match(rel.rsplit("/", 1)[-1]) is None:
                diags.append(
                    diag(
                        rel,
                        None,
                        "wb.month-file-name",
                        Severity.WARNING,
                        "observation files are named YYYY-MM.md (or YYYY-MM-part-N.md)",
                    )
                )
            found = provider._observations(rel, data, diags, registry)
            if entries is None:
                for _ in found:
                    pass
            else:
                entries.extend(found)
        else:
            entry = provider._built.file_entry(rel, data, version, diags, provider.scopes.active)
            if entry is not None and entries is not None:
                entries.append(entry)
    return diags
