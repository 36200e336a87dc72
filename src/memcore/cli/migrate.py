"""``memcore migrate SRC DST``: move a store into another format and print what could not move.

Exit codes: 0 every entry was written (losses, if any, are listed), 1 some entries could not be
written, were left alone (a conflict, or a change the target cannot take: not updatable), the source
reported errors (unreadable files, ``source_errors``) or ``--strict`` refused,
2 usage or configuration error (including a target that overlaps the source).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from memcore.cli.helpers import handle_errors, json_option, parse_options
from memcore.migrate import ConversionReport, ProgressCallback, migrate
from memcore.models import Diagnostic
from memcore.registry import get_registry

__all__ = ["register", "render_report"]

_PHASES = {
    "read": "reading source",
    "plan": "planning ids",
    "write": "writing target",
    "link": "linking",
    "verify": "reading back",
}
#: Runs with fewer entries than this finish before a bar is worth drawing.
_BAR_MIN_ENTRIES = 200


@contextmanager
def _progress(enabled: bool) -> Iterator[ProgressCallback | None]:
    if not enabled:
        yield None
        return
    console = Console(stderr=True)
    bar = Progress(
        TextColumn("{task.description:<15}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    tasks: dict[str, TaskID] = {}
    started = False

    def update(phase: str, done: int, total: int) -> None:
        nonlocal started
        if phase == "write" and not started and total >= _BAR_MIN_ENTRIES:
            bar.start()
            started = True
        if not started:
            return
        if phase not in tasks:
            tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total or None)
        bar.update(tasks[phase], completed=done, total=total or None)

    try:
        yield update
    finally:
        if started:
            bar.stop()


def render_report(report: ConversionReport, console: Console, *, max_rows: int = 20) -> None:
    """Print the human summary of ``report``: counts by kind, lost fields, failures, links.

    Args:
        report: The measured report.
        console: Where to print.
        max_rows: At most this many rows of per-entry detail (losses, failures, links).
    """
    mode = "dry run (scratch copy) — " if report.dry_run and not report.refused else ""
    console.print(
        f"[bold]{escape(f'{mode}{report.source} → {report.target}')}[/bold]  ({escape(report.converter)} converter)"
    )
    columns = ["read", "written", "updated", "unchanged", "lossy", "failed"]
    for extra in ("not_updatable", "conflict"):
        if report.counts[extra]:
            columns.insert(4, extra)
    table = Table("kind", *(c.replace("_", " ") for c in columns), title="entries")
    table.columns[0].no_wrap = True
    for kind, row in report.by_kind.items():
        table.add_row(Text(kind), *(str(row[c]) for c in columns))
    c = report.counts
    table.add_row("[bold]total[/bold]", *(f"[bold]{c[k]}[/bold]" for k in columns))
    console.print(table)
    _print_diagnostics(
        console,
        report.source_errors,
        f"[red]source: {len(report.source_errors)} error(s); what they name could not be read "
        "and was not migrated[/red] (fix the source, then run again):",
        max_rows,
    )
    _print_diagnostics(
        console,
        report.unread_text,
        f"[yellow]source: {len(report.unread_text)} passage(s) of text belong to no entry and were not "
        "migrated[/yellow] (move them into an entry to carry them):",
        max_rows,
    )
    kept: dict[str, int] = {}
    for entry in report.entries:
        for change in entry.kept:
            kept[change.field] = kept.get(change.field, 0) + 1
    if kept:
        console.print(
            "kept in free data (extra.memcore.kept), restored when migrated back: "
            + ", ".join(f"{f} x{n}" for f, n in sorted(kept.items())),
            markup=False,
        )
    if report.lost_fields:
        lost = Table("field the target could not hold", "entries", title="losses")
        for field, count in report.lost_fields.items():
            lost.add_row(Text(field), str(count))
        console.print(lost)
        _print_entry_rows(
            console,
            [
                f"{entry.source_id} {entry.title[:40]!r}: {loss.field}: {_short(loss.written)} → {_short(loss.stored)}"
                for entry in report.entries
                for loss in entry.losses
            ],
            max_rows,
        )
    _print_fidelity(console, report, max_rows)
    failed = [e for e in report.entries if e.action == "failed"]
    conflicts = [e for e in report.entries if e.action == "conflict"]
    not_updatable = [e for e in report.entries if e.action == "not_updatable"]
    if not report.lost_fields:
        if failed or conflicts or not_updatable or report.source_errors or report.unread_text:
            console.print(
                "no field lost in the entries written, but not everything moved: "
                f"{_count(len(failed), 'entry', 'entries')} failed, "
                f"{_count(len(conflicts) + len(not_updatable), 'change', 'changes')} not applied, "
                f"{_count(len(report.source_errors), 'source error', 'source errors')}, "
                f"{_count(len(report.unread_text), 'passage', 'passages')} of text outside every entry",
                markup=False,
            )
        elif kept:
            console.print(
                "nothing lost: every field written was read back the same or kept in free data "
                "(kept fields look different in the target itself, e.g. another status or date)",
                markup=False,
            )
        else:
            console.print("nothing lost: every field written was read back the same", markup=False)
    for entry in failed[:max_rows]:
        console.print(f"[red]failed[/red] {escape(f'{entry.source_id}: {entry.error}')}", highlight=False)
    _print_more(console, len(failed), max_rows)
    if conflicts:
        _print_left_alone(
            console,
            f"[yellow]{_count(len(conflicts), 'entry', 'entries')} changed in the source "
            f"{'was' if len(conflicts) == 1 else 'were'} also edited in the target since the last run: left as "
            "in the target[/yellow] (--overwrite replaces them with the source's):",
            [f"  {e.source_id} → {e.target_id} {e.title[:40]!r}" for e in conflicts],
            max_rows,
        )
    if not_updatable:
        _print_left_alone(
            console,
            f"[yellow]{_count(len(not_updatable), 'entry', 'entries')} changed in the source cannot be updated "
            "in the target (not updatable): left as in the target[/yellow]:",
            [f"  {e.source_id} → {e.target_id}: {e.error}" for e in not_updatable],
            max_rows,
        )
    if report.unresolved_links:
        console.print(f"unresolved links: {len(report.unresolved_links)}", markup=False)
        for link in report.unresolved_links[:max_rows]:
            console.print(f"  {link.source_id} → {link.type}:{link.target} ({link.reason})", markup=False)
        _print_more(console, len(report.unresolved_links), max_rows)
    errors = [d for d in report.diagnostics if d.severity.value == "error"]
    if report.diagnostics:
        console.print(
            f"target validate: {len(errors)} error(s), {len(report.diagnostics) - len(errors)} warning(s)",
            markup=False,
        )
        for diag in report.diagnostics[:max_rows]:
            console.print(f"  {diag}", markup=False)
        _print_more(console, len(report.diagnostics), max_rows)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    console.print(f"took {report.duration_ms / 1000:.2f} s", markup=False)


def _print_fidelity(console: Console, report: ConversionReport, max_rows: int) -> None:
    """Print what the target format's own reader shows differently, per field then per entry."""
    if not report.fidelity_fields:
        return
    readers = sorted({n.reader for e in report.entries for n in e.fidelity if n.reader})
    table = Table(
        "field", "entries", title=f"the target's own reader ({', '.join(readers) or 'reference'}) shows differently"
    )
    for field, count in report.fidelity_fields.items():
        table.add_row(field, str(count))
    console.print(table)
    _print_entry_rows(
        console,
        [
            f"{entry.source_id} {entry.title[:40]!r}: {note.field}: {_short(note.kept)} shown as "
            f"{_short(note.shown)} ({note.why})"
            for entry in report.entries
            for note in entry.fidelity
        ],
        max_rows,
    )


def _print_entry_rows(console: Console, rows: list[str], max_rows: int) -> None:
    """Print the first ``max_rows`` of ``rows`` (one per entry and field), indented, then how many were left out."""
    for row in rows[:max_rows]:
        console.print(f"  {row}", markup=False)
    _print_more(console, len(rows), min(len(rows), max_rows))


def _print_diagnostics(console: Console, diagnostics: list[Diagnostic], heading: str, max_rows: int) -> None:
    """Print ``heading`` and up to ``max_rows`` diagnostics (nothing when there are none)."""
    if not diagnostics:
        return
    console.print(heading, highlight=False)
    for diag in diagnostics[:max_rows]:
        console.print(f"  {diag}", markup=False)
    _print_more(console, len(diagnostics), max_rows)


def _print_left_alone(console: Console, heading: str, lines: list[str], max_rows: int) -> None:
    """Print ``heading`` (rich markup), then up to ``max_rows`` of ``lines`` (plain text) and how many more."""
    console.print(heading, highlight=False)
    for line in lines[:max_rows]:
        console.print(line, markup=False)
    _print_more(console, len(lines), max_rows)


def _print_more(console: Console, total: int, shown: int) -> None:
    """Say how many of ``total`` rows were left out after the first ``shown`` (nothing when none were)."""
    if total > shown:
        console.print(f"  … and {total - shown} more (see --report FILE, or --json)", markup=False)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _short(value: Any, width: int = 50) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def register(cli: click.Group) -> None:
    """Add the ``migrate`` command to ``cli``."""

    @cli.command("migrate")
    @click.argument("src", metavar="SRC")
    @click.argument("dst", metavar="DST")
    @click.option("--dry-run", is_flag=True, help="Convert into a scratch copy of DST and report; DST is untouched.")
    @click.option("--strict", is_flag=True, help="Write nothing unless a trial run shows no loss and no failure.")
    @click.option(
        "--overwrite",
        is_flag=True,
        help="Update entries changed in SRC even where they were edited in DST since the last run "
        "(default: report them as conflicts and leave them alone).",
    )
    @click.option(
        "--report",
        "report_file",
        type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=Path),
        default=None,
        help="Write the full report (every entry and field) as JSON to FILE; - writes it to stdout "
        "(the summary then goes to stderr).",
    )
    @click.option("--src-option", "src_options", multiple=True, metavar="KEY=VALUE", help="Source provider option.")
    @click.option("--dst-option", "dst_options", multiple=True, metavar="KEY=VALUE", help="Target provider option.")
    @json_option
    @handle_errors
    def migrate_cmd(
        src: str,
        dst: str,
        dry_run: bool,
        strict: bool,
        overwrite: bool,
        report_file: Path | None,
        src_options: tuple[str, ...],
        dst_options: tuple[str, ...],
        as_json: bool,
    ) -> None:
        """Migrate store SRC into store DST (any format to any other) and report every loss.

        SRC and DST are store URLs, e.g. whitebox:./vault box:./workspace. DST is created when
        it does not exist. SRC is only read. Running the same migration again writes nothing
        new; entries changed in SRC since are updated, except those also edited in DST since
        the last run (conflicts, left alone: --overwrite replaces them), and those the target
        cannot update (append-only entries: not updatable). Exit code 1 when an entry failed or
        was left alone for a conflict or as not updatable.
        """
        show_bar = not as_json and sys.stderr.isatty()
        with _progress(show_bar) as progress:
            report = migrate(
                src,
                dst,
                dry_run=dry_run,
                strict=strict,
                overwrite=overwrite,
                registry=get_registry(),
                progress=progress,
                source_options=parse_options(src_options),
                target_options=parse_options(dst_options),
            )
        to_stdout = report_file is not None and str(report_file) == "-"
        if report_file is not None and not to_stdout:
            report_file.parent.mkdir(parents=True, exist_ok=True)
            report_file.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        if as_json or to_stdout:
            click.echo(report.model_dump_json(indent=2))
        if not as_json:
            console = Console(highlight=False, soft_wrap=True, stderr=to_stdout)
            render_report(report, console)
            if report_file is not None and not to_stdout:
                console.print(f"full report: {report_file}", markup=False)
        sys.exit(0 if report.ok else 1)
