"""The public API: :func:`migrate` (store URLs, dry runs, strict, the journal) and :func:`convert`."""

from __future__ import annotations

import contextlib
import inspect
import os
import time
from typing import Any, Protocol, runtime_checkable

import pluggy

from memcore.errors import ConfigError
from memcore.migrate.journal import (
    EditCheck,
    journal_path,
    load_journal_state,
    load_origins,
    save_journal,
    save_origins,
)
from memcore.migrate.report import ConversionReport, ProgressCallback, _collect_source_diagnostics
from memcore.migrate.run import _Run
from memcore.migrate.stores import (
    _exists,
    _init_if_missing,
    _refuse_other_format,
    _refuse_overlap,
    _scratch_copy,
    _unscratch,
)
from memcore.models import Severity
from memcore.provider import Capability, MemoryProvider
from memcore.registry import ProviderRegistry, get_registry
from memcore.storage import scratch_writes

__all__ = ["Converter", "convert", "find_converter", "migrate", "source_options_for"]


@runtime_checkable
class Converter(Protocol):
    """A direct converter between two formats, registered through ``memcore_register_converters``.

    A direct converter replaces the generic conversion for its pair. It must keep the promises
    of the generic one: never modify ``source``, record every entry and every loss in
    ``report`` (``report.entries``, ``report.unresolved_links``), and leave the target valid.

    Attributes:
        source_format: Format name it reads, e.g. ``"whitebox"``.
        target_format: Format name it writes, e.g. ``"box"``.
    """

    source_format: str
    target_format: str

    def convert(self, source: MemoryProvider, target: MemoryProvider, report: ConversionReport) -> None:
        """Copy every entry of the opened ``source`` into the opened ``target``, filling ``report``."""


def convert(
    source: MemoryProvider,
    target: MemoryProvider,
    report: ConversionReport | None = None,
    *,
    progress: ProgressCallback | None = None,
    validate: bool = True,
    check_source: bool = True,
    edits: EditCheck | None = None,
) -> ConversionReport:
    """Copy every entry of ``source`` into ``target`` through :class:`MemoryEntry` and measure it.

    This is the generic conversion (:mod:`memcore.migrate`, steps 1-4). Both stores must be open.
    Entries that fail (the target refuses them) are reported as ``failed`` and the run goes
    on; nothing is raised for a single entry. The target's ``validate()`` diagnostics of
    severity error or warning are added to the report.

    Args:
        source: The opened source store; only read.
        target: The opened target store; written.
        report: Report to fill (default: a new one).
        progress: Called as ``progress(phase, done, total)`` while running.
        validate: Run the target's ``validate()`` afterwards and add its errors and warnings
            to the report.
        check_source: Read the source with ``read_all()`` (its ``validate()`` in the same pass)
            and put its errors in ``report.source_errors``: entries a provider could not read
            are skipped by ``iter_entries`` and would otherwise vanish without a word.
        edits: The last run's target versions: an entry to update that was edited in the
            target since is reported as ``conflict`` and left alone (unless
            ``edits.overwrite``); ``edits.current`` receives this run's versions
            (:mod:`memcore.migrate.journal`). ``None``: no check.

    Returns:
        The filled report.

    Raises:
        MemcoreError: Reading the source or indexing the target failed as a whole.
    """
    started = time.perf_counter()
    if report is None:
        report = ConversionReport(source=_url(source), target=_url(target))
    _Run(source, target, report, progress, check_source=check_source, validate=validate, edits=edits).run()
    report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return report


def _collect_source_errors(source: MemoryProvider, report: ConversionReport) -> None:
    """Add the source's ``validate()`` errors and unread text to the report (validate never raises)."""
    _collect_source_diagnostics(source.validate(), report)


def _url(provider: MemoryProvider) -> str:
    url = getattr(provider, "url", None)
    return url if isinstance(url, str) else f"{provider.format_name}:{provider.location}"


def find_converter(source_format: str, target_format: str, pm: pluggy.PluginManager | None = None) -> Converter | None:
    """Return the first direct converter registered for the pair, or ``None``.

    Args:
        source_format: Source format name.
        target_format: Target format name.
        pm: Plugin manager to ask (default: the process-wide one).
    """
    if pm is None:
        from memcore.plugins import get_plugin_manager

        pm = get_plugin_manager()
    for batch in pm.hook.memcore_register_converters():
        for conv in batch or []:
            if (
                getattr(conv, "source_format", None) == source_format
                and getattr(conv, "target_format", None) == target_format
            ):
                found: Converter = conv
                return found
    return None


def source_options_for(cls: type[Any]) -> dict[str, Any]:
    """Return the options that open a store of provider ``cls`` read-only.

    ``read_only`` is the option name the built-in providers share (a read-only Maka store, for
    example, never rewrites expired entries as archived while being read). It is passed when
    the provider names a ``read_only`` parameter in ``__init__``, lists ``"read_only"`` in a
    class attribute ``options``, or takes arbitrary ``**options`` (as
    :class:`~memcore.provider.BaseProvider` does); otherwise this returns ``{}``. Either way
    the conversion only ever reads the source.
    """
    declared = getattr(cls, "options", None)
    if isinstance(declared, (set, frozenset, list, tuple, dict)) and "read_only" in declared:
        return {"read_only": True}
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return {}
    if "read_only" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return {"read_only": True}
    return {}


def _open(
    url: str | MemoryProvider, registry: ProviderRegistry, **options: Any
) -> tuple[type[Any], str, dict[str, Any]]:
    """Return ``(provider class, location, options)`` for a URL or an (unopened) provider."""
    if isinstance(url, str):
        from memcore.config import parse_store_url

        spec = parse_store_url(url, registry=registry)
        cls = registry.get(spec.format_name)
        return cls, spec.location, {**spec.options, **options}
    cls = type(url)
    return cls, os.fspath(url.location), {**dict(getattr(url, "options", {})), **options}


def _run_once(
    src_cls: type[Any],
    src_loc: str,
    src_opts: dict[str, Any],
    dst_cls: type[Any],
    dst_loc: str,
    dst_opts: dict[str, Any],
    report: ConversionReport,
    pm: pluggy.PluginManager | None,
    progress: ProgressCallback | None,
    validate: bool = True,
    edits: EditCheck | None = None,
) -> ConversionReport:
    conv = find_converter(src_cls.format_name, dst_cls.format_name, pm) if pm is not None else None
    with contextlib.ExitStack() as stack:
        # the source is opened and the target's options checked (its constructor) first: a
        # source that cannot be opened or a mistyped option leaves no new target behind
        source = stack.enter_context(src_cls(src_loc, **src_opts))
        target_provider = dst_cls(dst_loc, **dst_opts)
        created = _init_if_missing(dst_cls, dst_loc, dst_opts, like=source)
        if created is not None:
            report.notes.append(f"created a new {dst_cls.format_name} store at {dst_loc}")
            report.notes.extend(created)
        target = stack.enter_context(target_provider)
        if conv is not None:
            report.converter = f"{type(conv).__module__}.{type(conv).__qualname__}"
            started = time.perf_counter()
            _collect_source_errors(source, report)
            conv.convert(source, target, report)
            if validate:
                report.diagnostics.extend(d for d in target.validate() if d.severity is not Severity.INFO)
            report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        else:
            convert(source, target, report, progress=progress, validate=validate, edits=edits)
    return report


def migrate(
    source: str | MemoryProvider,
    target: str | MemoryProvider,
    *,
    dry_run: bool = False,
    strict: bool = False,
    registry: ProviderRegistry | None = None,
    progress: ProgressCallback | None = None,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    validate: bool = True,
    overwrite: bool = False,
) -> ConversionReport:
    """Migrate a store into another (any format to any format) and return the measured report.

    ``source`` and ``target`` are store URLs (``whitebox:./vault``) or provider objects (not
    opened; their class, ``location`` and ``options`` are used). The target is created with
    its provider's ``init_store`` when its location does not exist. A direct converter for the
    pair is used when a plugin registers one; otherwise :func:`convert`.

    Args:
        source: Where to read from; never modified.
        target: Where to write to.
        dry_run: Convert into a scratch copy of the target and report; the target is untouched.
        strict: First convert into a scratch copy; write the target only when that run had no
            loss, no failure and no unreadable source entry (``source_errors``), else return
            its report with ``refused=True``.
        registry: Provider registry (default: the process-wide one); its plugin manager is
            asked for direct converters.
        progress: ``progress(phase, done, total)`` callback.
        source_options: Extra provider options for the source.
        target_options: Extra provider options for the target.
        validate: Add the target's ``validate()`` errors and warnings to the report (one
            more full read of the target).
        overwrite: Update target entries whose source changed even when they were edited in
            the target since the last run (default: such an entry is a ``conflict``, left
            alone). The last run is known from its journal (:mod:`memcore.migrate.journal`), written
            after every real run (not after dry runs or a refused ``strict``).

    Returns:
        The :class:`ConversionReport` of the run that decided the outcome (the scratch run for
        ``dry_run`` and for a refused ``strict``).

    Raises:
        ConfigError: A URL cannot be parsed, or source and target overlap: the same location,
            the target inside the source or containing it (resolved real paths; remote
            locations are not checked), or the target location holds another format's store;
            nothing is written then.
        UnknownFormatError: A format is not installed.
        MemcoreError: The source cannot be read or the target cannot be created.
    """
    reg = registry or get_registry()
    src_cls, src_loc, src_opts = _open(source, reg, **(source_options or {}))
    src_opts = {**source_options_for(src_cls), **src_opts}
    dst_cls, dst_loc, dst_opts = _open(target, reg, **(target_options or {}))
    dst_opts = {**dict(getattr(dst_cls, "migration_target_options", None) or {}), **dst_opts}
    _refuse_overlap(src_cls, src_loc, dst_cls, dst_loc)
    _refuse_other_format(reg, dst_cls, dst_loc)
    if not _exists(src_loc) and Capability.REMOTE not in getattr(src_cls, "capabilities", frozenset()):
        raise ConfigError(f"{src_cls.format_name}: source {src_loc} does not exist")
    src_url, dst_url = f"{src_cls.format_name}:{src_loc}", f"{dst_cls.format_name}:{dst_loc}"
    pm = reg.pm
    journal_key = (_journal_url(src_cls, src_loc), _journal_url(dst_cls, dst_loc))
    previous, digests, journal_problem = load_journal_state(*journal_key)
    homes = load_origins(journal_key[0])

    def edit_check() -> EditCheck:
        return EditCheck(previous=previous, overwrite=overwrite, homes=homes, digests=digests)

    def noted(report: ConversionReport) -> ConversionReport:
        if journal_problem is not None:
            report.notes.append(f"{journal_problem}: target edits since the last run were not checked")
        return report

    def scratch_run() -> ConversionReport:
        report = ConversionReport(source=src_url, target=dst_url, dry_run=True, strict=strict)
        with _scratch_copy(dst_loc) as scratch, scratch_writes():
            _run_once(
                src_cls, src_loc, src_opts, dst_cls, scratch, dst_opts, report, pm, progress, validate, edit_check()
            )
        _unscratch(report, scratch, dst_loc)
        return noted(report)

    remote_target = Capability.REMOTE in getattr(dst_cls, "capabilities", frozenset())
    if (dry_run or strict) and remote_target:
        raise ConfigError(
            f"{dst_cls.format_name}: --dry-run and --strict convert into a local scratch copy of the "
            "target, which a remote store cannot have; migrate into a local store of the same format "
            "first, or run without them"
        )
    if dry_run:
        return scratch_run()
    if strict:
        trial = scratch_run()
        if not trial.lossless:
            trial.refused = True
            trial.notes = [n for n in trial.notes if not n.startswith("would create ")]
            trial.notes.append(
                "--strict: the target was not written because the trial run lists losses, failures, "
                "conflicts (entries edited in the target since the last run) or source entries that could not be read"
            )
            return trial
    report = ConversionReport(source=src_url, target=dst_url, strict=strict)
    edits = edit_check()
    finished = False
    try:
        _run_once(src_cls, src_loc, src_opts, dst_cls, dst_loc, dst_opts, report, pm, progress, validate, edits)
        finished = True
    finally:
        # also when interrupted (Ctrl-C, a crash): what was written is recorded, the rest keeps
        # what the last run recorded
        if report.converter == "generic":  # a direct converter does not report versions
            versions = edits.current if finished else {**previous, **edits.current}
            kept_digests = edits.current_digests if finished else {**digests, **edits.current_digests}
            try:
                save_journal(*journal_key, versions, {k: v for k, v in kept_digests.items() if k in versions})
                save_origins(journal_key[1], edits.origins)
            except OSError as exc:
                report.notes.append(
                    f"the migration journal could not be written ({exc}): the next run cannot tell "
                    "target edits made in between"
                )
    if edits.unknown:
        report.notes.append(
            f"{edits.unknown} entries migrated by an earlier run had no version in the migration journal "
            f"({journal_path(*journal_key)}; first run with it, deleted, or the target reached by another "
            "path): edits made to them in the target before this run could not be told apart, and their "
            "current state is the baseline from now on"
        )
    return noted(report)


def _journal_url(cls: type[Any], location: str) -> str:
    """``format:location`` naming a store in the journal (resolved real path for file stores)."""
    remote = Capability.REMOTE in getattr(cls, "capabilities", frozenset())
    return f"{cls.format_name}:{location if remote else os.path.realpath(location)}"
