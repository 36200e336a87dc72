"""``RobustnessTests``: damaged files and hostile names.

Readers fail open, writers fail closed: for each damaged file (``memcore_bad_files``) reading
raises nothing but a :class:`~memcore.errors.MemcoreError`, ``validate`` reports instead of
raising, and a file reported as an error is never changed by a write. Ids, titles, tags, scopes
and slugs that try to leave the store (``../``, ``/``, ``\\``, NUL, reserved device names) are
refused or stored inside it; nothing outside the store changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import MemcoreError, UnsafePathError
from memcore.models import MemoryEntry, Severity
from memcore.provider import Capability
from memcore.storage import check_component
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import VICTIM_MARKER, BadFile, errors_of, read_tree

__all__ = ["HOSTILE_IDS", "HOSTILE_NAMES", "RobustnessTests"]


class RobustnessTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: bad input and path safety."""

    # == bad input ====================================================================
    @requires(C.ADD)
    def test_bad_input_fails_open_and_closed(
        self,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_store_root: Path,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_bad_files: Any,
    ) -> None:
        """Damaged files: reading yields diagnostics, never a non-memcore exception; writes never touch them.

        For each ``BadFile`` (written into a copy of a one-entry store): opening, iterating,
        getting, searching raise nothing but ``MemcoreError``; ``validate()`` raises nothing and
        every error diagnostic names a path; ``must_diagnose`` damage gets an ``error`` naming the
        file; ``must_read`` damage still reads the entry. A file the provider reports as an
        error is never changed by update, delete, archive or add. A file it accepts may be
        rewritten by an update, keeping what ``preserved`` names.
        """
        victim = memcore_provider.add(memcore_make_entry(title="Bad input victim", body=f"{VICTIM_MARKER}\n"))
        memcore_provider.close()
        pristine = memcore_raw_files()
        cases = [
            case if isinstance(case, BadFile) else BadFile(name=str(case[0]), path=str(case[0]), data=bytes(case[1]))
            for case in memcore_bad_files(memcore_location)
        ]
        assert cases, "memcore_bad_files returned no cases"
        caps = memcore_provider_cls.capabilities
        for case in cases:
            _restore(memcore_store_root, pristine)
            target = memcore_store_root / case.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(case.data)
            provider = memcore_provider_cls(memcore_location, **memcore_provider_options)
            try:
                self._check_bad_file(
                    case, provider, victim, caps, memcore_store_root, memcore_raw_files, memcore_make_entry
                )
            finally:
                provider.close()

    def _check_bad_file(
        self,
        case: BadFile,
        provider: Any,
        victim: MemoryEntry,
        caps: frozenset[Capability],
        root: Path,
        raw_files: Callable[[], dict[str, bytes]],
        make_entry: Any,
    ) -> None:
        """One case of :meth:`test_bad_input_fails_open_and_closed` (the file is already written)."""
        where = f"bad file {case.name!r} ({case.path})"
        try:
            provider.open()
        except MemcoreError:
            assert raw_files()[case.path] == case.data, f"{where}: a refused open changed it"
            return
        entries = _call_failing_open(where, "iter_entries", lambda: list(provider.iter_entries()))
        _call_failing_open(where, "search", lambda: provider.search("victim"))
        got = _call_failing_open(where, "get", lambda: provider.get(str(victim.id)))
        try:
            diagnostics = provider.validate()
        except Exception as exc:  # noqa: BLE001 - any exception is the failure reported
            pytest.fail(f"{where}: validate() raised {exc!r}; it must report, never raise")
        unplaced = [str(d) for d in diagnostics if d.severity == Severity.ERROR and not d.path]
        assert not unplaced, f"{where}: error diagnostics without a path: {unplaced}"
        about = [d for d in diagnostics if _same_file(d.path, case.path, root)]
        errors = [d for d in about if d.severity == Severity.ERROR]
        if case.must_diagnose:
            assert errors, f"{where}: validate() reported no error for it: {diagnostics}"
        if case.must_read:
            assert entries is not None and victim.id in [e.id for e in entries], f"{where}: the entry is no longer read"
            assert isinstance(got, MemoryEntry) and got.title == victim.title, f"{where}: get {got!r}"
        assert raw_files()[case.path] == case.data, f"{where}: reading changed it"
        writes = _write_attempts(provider, caps, victim, make_entry)
        if errors:
            for name, write in writes:
                _call_failing_open(where, name, write)
                assert raw_files().get(case.path) == case.data, (
                    f"{where}: {name} changed a file validate() reported as an error"
                )
        elif case.must_read and C.UPDATE in caps and isinstance(got, MemoryEntry):
            _call_failing_open(
                where,
                "update",
                lambda: provider.update(
                    got.model_copy(update={"title": "Bad input victim edited"}), expected_version=got.version
                ),
            )
            rewritten = raw_files().get(case.path)
            if rewritten is not None and rewritten != case.data:
                if case.preserved == "bom":
                    assert rewritten.startswith(b"\xef\xbb\xbf"), f"{where}: a rewrite dropped the BOM"
                if case.preserved == "crlf":
                    assert b"\n" not in rewritten.replace(b"\r\n", b""), f"{where}: a rewrite mixed LF into a CRLF file"
            assert errors_of(d for d in provider.validate() if _same_file(d.path, case.path, root)) == [], (
                f"{where}: the rewrite left an invalid file"
            )

    # == path safety ==================================================================
    @requires(C.ADD)
    def test_hostile_names_stay_inside_the_store(
        self,
        tmp_path: Path,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_store_root: Path,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
    ) -> None:
        """Ids, titles, tags, slugs with ../, /, \\, NUL or reserved names never touch a file outside the store.

        Each hostile entry is either refused with a ``MemcoreError`` or stored and readable
        by its returned id. Lookups and deletes by hostile ids raise ``MemcoreError``. Files
        planted outside the store (a sentinel folder and siblings) keep their bytes, no file
        appears outside, and every path the provider created inside is portable.
        """
        fmt = memcore_provider_cls.format_name
        outside = _plant_sentinels(tmp_path)
        parent_listing = sorted(os.listdir(tmp_path.parent))
        before_outside = _outside_snapshot(tmp_path, memcore_store_root)
        stored_ids: set[str] = set()
        attempts: list[tuple[str, dict[str, Any]]] = []
        for value in HOSTILE_IDS:
            attempts.append((f"id={value!r}", {"id": value}))
        for value in HOSTILE_NAMES:
            attempts.append((f"title={value!r}", {"title": value}))
            attempts.append((f"tags=[{value!r}]", {"tags": [value]}))
        attempts.append(("scope", {"scope": "../../escape"}))
        attempts.append(("source", {"source": "../../escape"}))
        attempts.append(
            ("extra slug/path", {"extra": {fmt: {"slug": "../../escape", "path": "../../escape.md", "file": "/tmp/x"}}})
        )
        for label, overrides in attempts:
            try:
                entry = memcore_make_entry(**overrides)
            except ValueError:
                continue  # the model itself refuses it (e.g. NUL in an id)
            try:
                stored = memcore_provider.add(entry)
            except MemcoreError:
                continue
            except Exception as exc:  # noqa: BLE001 - any other exception is the failure reported
                pytest.fail(f"add with hostile {label} raised {exc!r}; refuse with a MemcoreError (UnsafePathError)")
            stored_ids.add(str(stored.id))
            assert memcore_provider.get(stored.id).id == stored.id, f"hostile {label}: stored but not readable"
        for hostile in HOSTILE_IDS:
            if hostile in stored_ids:
                continue
            for name in ("get", "delete"):
                if name == "delete" and C.DELETE not in memcore_provider.capabilities:
                    continue
                try:
                    getattr(memcore_provider, name)(hostile)
                except MemcoreError:
                    pass
                except Exception as exc:  # noqa: BLE001 - reported
                    pytest.fail(f"{name}({hostile!r}) raised {exc!r}; expected EntryNotFoundError or UnsafePathError")
                else:
                    pytest.fail(f"{name}({hostile!r}) succeeded for an id that was never stored")
        assert _outside_snapshot(tmp_path, memcore_store_root) == before_outside, (
            "files outside the store were created, changed or removed"
        )
        assert sorted(os.listdir(tmp_path.parent)) == parent_listing, "a file appeared beside the test folder"
        assert all(p.exists() for p in outside)
        for rel in memcore_raw_files():
            for component in rel.split("/"):
                try:
                    check_component(component)
                except UnsafePathError as exc:
                    pytest.fail(f"the provider created a non-portable path {rel!r}: {exc}")


def _restore(root: Path, snapshot: dict[str, bytes]) -> None:
    """Make the files under ``root`` exactly ``snapshot`` again (test-side, not the provider)."""
    for rel in read_tree(root):
        if rel not in snapshot:
            (root / rel).unlink()
    for rel, data in snapshot.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


#: Ids that try to leave the store or are not portable file names.
HOSTILE_IDS: tuple[str, ...] = (
    "../escape",
    "../../escape",
    "../../../escape",
    "../sentinel/victim",
    "../../sentinel/victim",
    "/tmp/memcore-escape",
    "a/../../escape",
    "sub/dir",
    "a\\b",
    "..\\..\\escape",
    "C:\\escape",
    "CON",
    "nul",
    "aux.txt",
    "COM1",
    "LPT1.md",
    ".",
    "..",
    "...",
    "~",
    "x\x00y",
    "trailing.",
    "trailing ",
)

#: Titles and tags that try to leave the store through a derived slug or file name.
HOSTILE_NAMES: tuple[str, ...] = (
    "../escape",
    "../../escape",
    "../sentinel/victim",
    "/etc/passwd",
    "a\\..\\..\\escape",
    "CON",
    "nul.txt",
    "x\x00y",
    "..",
    "~/escape",
)


def _plant_sentinels(tmp_path: Path) -> list[Path]:
    """Files a naive provider would hit with the hostile names above, all outside the store."""
    planted = []
    for folder in (tmp_path, tmp_path / "sentinel"):
        folder.mkdir(exist_ok=True)
        for stem in ("escape", "victim", "CON"):
            for suffix in ("", ".md", ".json", ".jsonl"):
                path = folder / f"{stem}{suffix}"
                path.write_bytes(b"sentinel: must stay byte-identical\n")
                planted.append(path)
    return planted


def _outside_snapshot(tmp_path: Path, store_root: Path) -> dict[str, bytes]:
    store = store_root.resolve()
    return {
        rel: data
        for rel, data in read_tree(tmp_path).items()
        if store != (tmp_path / rel).resolve() and store not in (tmp_path / rel).resolve().parents
    }


def _same_file(diag_path: str | None, rel: str, root: Path) -> bool:
    """Whether a diagnostic's path (relative to the store root, or absolute) is ``rel``."""
    if not diag_path:
        return False
    path = Path(diag_path)
    if not path.is_absolute():
        if path.as_posix() == rel or path.as_posix().endswith("/" + rel):
            return True
        path = root / path
    try:
        return path.resolve() == (root / rel).resolve()
    except OSError:
        return False


def _call_failing_open(where: str, name: str, call: Callable[[], Any]) -> Any:
    """Call ``call``; a MemcoreError is allowed (returns None), any other exception fails the test."""
    try:
        return call()
    except MemcoreError:
        return None
    except Exception as exc:  # noqa: BLE001 - any other exception is the failure reported
        pytest.fail(
            f"{where}: {name} raised {type(exc).__name__}: {exc}; readers fail open and writers "
            "refuse with a MemcoreError subclass"
        )


def _write_attempts(
    provider: Any, caps: frozenset[Capability], victim: MemoryEntry, make_entry: Any
) -> list[tuple[str, Callable[[], Any]]]:
    """The writes the bad-input test tries against a store holding a damaged file."""
    edited = victim.model_copy(update={"title": "Bad input victim edited"})
    attempts: list[tuple[str, Callable[[], Any]]] = []
    if C.UPDATE in caps:
        attempts.append(("update", lambda: provider.update(edited, expected_version=victim.version)))
    if C.ARCHIVE in caps:
        attempts.append(("archive", lambda: provider.archive(str(victim.id))))
    if C.DELETE in caps:
        attempts.append(("delete", lambda: provider.delete(str(victim.id))))
    attempts.append(("add", lambda: provider.add(make_entry(title="Added beside a damaged file"))))
    return attempts
