"""``memcore migrate`` against copies of the real example stores: overlapping locations are
refused before anything is written (D1), unreadable source entries are reported (D2), and the
messages say what really happened (N5)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memcore.cli.migrate import register
from memcore.errors import ConfigError
from memcore.migrate import migrate
from memcore.registry import get_registry

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FORMATS = ("whitebox", "box", "rightmemory", "maka")

pytestmark = pytest.mark.skipif(
    not set(FORMATS) <= set(get_registry().names()), reason="the four format plugins are not all installed"
)


@pytest.fixture
def app() -> click.Group:
    @click.group()
    def group() -> None:  # a fresh group: the global `memcore` group stays untouched
        pass

    register(group)
    return group


def _tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (relative path -> hex), so any write shows."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, Path]:
    """Writable copies of the example stores under tmp_path."""
    out = {
        "whitebox": tmp_path / "WB",
        "box": tmp_path / "BOX",
        "rightmemory": tmp_path / "RM",
        "maka": tmp_path / "MK",
    }
    shutil.copytree(EXAMPLES / "whitebox-vault", out["whitebox"])
    shutil.copytree(EXAMPLES / "box-workspace", out["box"])
    shutil.copytree(EXAMPLES / "rightmemory", out["rightmemory"])
    shutil.copytree(EXAMPLES / "maka", out["maka"])
    return out


def _overlapping(s: dict[str, Path]) -> list[tuple[str, str]]:
    wb, box, mk = s["whitebox"], s["box"], s["maka"]
    return [
        (f"whitebox:{wb}", f"maka:{wb / 'tags.md'}"),  # a single-file target inside the source
        (f"whitebox:{wb}", f"box:{wb / 'inner'}"),  # a new folder inside the source
        (f"box:{box}", f"whitebox:{box / 'memories'}"),  # an existing folder inside the source
        (f"whitebox:{wb / 'observations'}", f"box:{wb}"),  # the target contains the source
        (f"maka:{mk / 'MEMORY.md'}", f"whitebox:{mk}"),  # the target holds the source file's folder
        (f"maka:{mk / 'MEMORY.md'}", f"maka:{mk}"),  # the same file, named through its folder
        (f"maka:{mk / 'MEMORY.md'}", f"maka:{mk / 'OTHER.md'}"),  # one folder: PENDING.md shared
        (f"box:{box}", f"box:{box / '.' / 'memories' / '..'}"),  # the same folder, spelled otherwise
    ]


def test_overlapping_source_and_target_are_refused_before_writing(
    stores: dict[str, Path], tmp_path: Path, app: click.Group
) -> None:
    link = tmp_path / "link-to-wb"
    os.symlink(stores["whitebox"], link)
    cases = [*_overlapping(stores), (f"whitebox:{stores['whitebox']}", f"box:{link / 'inner'}")]
    before = _tree(tmp_path)
    for src, dst in cases:
        with pytest.raises(ConfigError, match=r"inside|same|contains|folder"):
            migrate(src, dst)
        for extra in ([], ["--dry-run"], ["--strict"], ["--json"]):
            result = CliRunner().invoke(app, ["migrate", src, dst, *extra])
            assert result.exit_code == 2, (src, dst, extra, result.output)
        assert _tree(tmp_path) == before, (src, dst)
    assert not (stores["whitebox"] / "inner").exists()
    assert not (stores["maka"] / "OTHER.md").exists()


def test_neighbouring_locations_still_migrate(stores: dict[str, Path], tmp_path: Path) -> None:
    # a single-file target beside the source folder (same parent) is not inside it
    report = migrate(f"whitebox:{stores['whitebox']}", f"maka:{tmp_path / 'MEMORY.md'}")
    assert report.ok and report.counts["written"] > 0
    # a folder target beside a single-file source, in a sibling folder
    report = migrate(f"maka:{stores['maka'] / 'MEMORY.md'}", f"box:{tmp_path / 'WB2'}")
    assert report.ok and report.counts["written"] > 0
    # a name sharing a prefix with the source is not inside it
    report = migrate(f"box:{stores['box']}", f"whitebox:{tmp_path / 'BOX-copy'}")
    assert report.ok and report.counts["written"] > 0


def _break_sources(stores: dict[str, Path]) -> dict[str, str]:
    """Make one entry unreadable in the box and the whitebox copies; return their URLs."""
    memory = sorted((stores["box"] / "memories").glob("decision__*.md"))[0]
    memory.write_bytes(bytes(range(256)) * 2)  # binary noise, no frontmatter, not UTF-8
    (stores["whitebox"] / "broken-latin1.md").write_bytes("---\ntitle: caf\xe9\n---\nd\xe9j\xe0 vu\n".encode("latin-1"))
    return {"box": f"box:{stores['box']}", "whitebox": f"whitebox:{stores['whitebox']}"}


@pytest.mark.parametrize("fmt", ["box", "whitebox"])
def test_unreadable_source_entries_are_reported_not_silently_dropped(
    fmt: str, stores: dict[str, Path], tmp_path: Path, app: click.Group
) -> None:
    src = _break_sources(stores)[fmt]
    report = migrate(src, f"maka:{tmp_path / 'R' / 'M.md'}")
    assert report.source_errors, "the unreadable source file is not in the report"
    assert all(d.severity.value == "error" for d in report.source_errors)
    assert report.counts["unreadable"] == len(report.source_errors)
    assert not report.lossless and not report.ok
    data = json.loads(report.model_dump_json())
    assert data["counts"]["unreadable"] >= 1 and data["source_errors"][0]["path"]
    assert "read" in data["counts"] and "failed" in data["counts"]  # old keys kept
    result = CliRunner().invoke(app, ["migrate", src, f"maka:{tmp_path / 'R2' / 'M.md'}"])
    assert result.exit_code == 1, result.output
    assert "nothing lost" not in result.output
    assert "could not be read" in result.output
    # --strict refuses and writes nothing
    strict = CliRunner().invoke(app, ["migrate", src, f"maka:{tmp_path / 'R3' / 'M.md'}", "--strict", "--json"])
    assert strict.exit_code == 1, strict.output
    assert json.loads(strict.output)["refused"] is True
    assert not (tmp_path / "R3").exists()


def test_clean_source_has_no_source_errors(stores: dict[str, Path], tmp_path: Path) -> None:
    report = migrate(f"box:{stores['box']}", f"maka:{tmp_path / 'M.md'}")
    assert report.source_errors == [] and report.counts["unreadable"] == 0


def test_dry_run_says_would_create_and_names_the_real_target(
    stores: dict[str, Path], tmp_path: Path, app: click.Group
) -> None:
    dst = tmp_path / "m3" / "MEMORY.md"
    result = CliRunner().invoke(app, ["migrate", f"whitebox:{stores['whitebox']}", f"maka:{dst}", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"note: would create a new maka store at {dst}" in result.output
    assert "created" not in result.output
    assert "memcore-migrate-" not in result.output  # no scratch path shown
    assert not dst.parent.exists()
    real = CliRunner().invoke(app, ["migrate", f"whitebox:{stores['whitebox']}", f"maka:{dst}"])
    assert f"note: created a new maka store at {dst}" in real.output


def test_refused_strict_run_prints_no_success_words(stores: dict[str, Path], tmp_path: Path, app: click.Group) -> None:
    src = _break_sources(stores)["whitebox"]
    dst = tmp_path / "bigm"
    result = CliRunner().invoke(app, ["migrate", src, f"maka:{dst}", "--strict"])
    assert result.exit_code == 1, result.output
    out = result.output
    assert "nothing lost" not in out and "created" not in out and "would create" not in out
    assert "--strict: the target was not written" in out
    assert f"maka:{dst}" in out and "memcore-migrate-" not in out
    assert not dst.exists()


def test_scratch_paths_in_errors_and_diagnostics_name_the_real_target() -> None:
    from memcore.migrate import ConversionReport, EntryReport
    from memcore.migrate.stores import _unscratch
    from memcore.models import Diagnostic, Kind, Severity

    scratch = "/tmp/memcore-migrate-abcd/bigm"
    report = ConversionReport(
        source="whitebox:v",
        target="maka:./bigm",
        notes=[f"created a new maka store at {scratch}"],
        entries=[
            EntryReport(source_id="a", kind=Kind.FACT, action="failed", error=f"StoreLimitError: {scratch}/MEMORY.md")
        ],
        diagnostics=[
            Diagnostic(path=f"{scratch}/MEMORY.md", code="c", severity=Severity.ERROR, message=f"see {scratch}"),
            Diagnostic(path="v/x.md", code="s", severity=Severity.WARNING, message="a source file"),
        ],
    )
    _unscratch(report, scratch, "./bigm")
    assert report.notes == ["would create a new maka store at ./bigm"]
    assert report.entries[0].error == "StoreLimitError: ./bigm/MEMORY.md"
    assert report.diagnostics[0].path == "./bigm/MEMORY.md"
    assert report.diagnostics[0].message == "in the trial run's scratch copy (the target is untouched): see ./bigm"
    assert (report.diagnostics[1].path, report.diagnostics[1].message) == ("v/x.md", "a source file")


@pytest.mark.parametrize(("fmt", "where"), [("whitebox", "T"), ("rightmemory", "T"), ("maka", "T/MEMORY.md")])
def test_no_migrated_file_names_the_source_location_and_entries_carry_an_opaque_key(
    stores: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, where: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if fmt == "maka":
        (tmp_path / "T").mkdir()
    report = migrate("box:BOX", f"{fmt}:{where}")
    assert report.ok
    written = [p for p in (tmp_path / "T").rglob("*") if p.is_file()]
    leaks = [str(p) for p in written if str(tmp_path).encode() in p.read_bytes() or b"BOX" in p.read_bytes()]
    assert leaks == []
    with get_registry().get(fmt)(str(tmp_path / where)) as target:
        read = list(target.iter_entries())
        # also what the files hold encoded (Maka's base64 mcData): no entry names the source
        assert [e.id for e in read if str(tmp_path) in e.model_dump_json() or "BOX" in e.model_dump_json()] == []
        stamps = {
            e.extra["memcore"]["migrated_from"]  # type: ignore[index]
            for e in read
            if "migrated_from" in e.extra.get("memcore", {})
        }
    assert len(stamps) == report.counts["written"]
    assert all(re.fullmatch(r"[0-9a-f]{12}\.[0-9a-f]{8}", str(s)) for s in stamps), stamps
    # the same migration without its journal (another machine) still recognises every entry
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "other-machine-state"))
    again = migrate("box:BOX", f"{fmt}:{where}", validate=False)
    assert (again.counts["written"], again.counts["updated"]) == (0, 0)


@pytest.mark.parametrize(("target_fmt", "target_name"), [("maka", "y2.md"), ("box", "x4")])
def test_a_source_that_cannot_be_opened_leaves_no_new_target(tmp_path: Path, target_fmt: str, target_name: str) -> None:
    """The source is opened before the target is created (new-user trial: an empty store was left behind)."""
    (tmp_path / "src").mkdir()  # a folder, but no Box-memory workspace
    target = tmp_path / target_name
    with pytest.raises(ConfigError, match="not a Box-memory workspace"):
        migrate(f"box:{tmp_path / 'src'}", f"{target_fmt}:{target}")
    assert not target.exists()


@pytest.mark.parametrize(
    ("target_fmt", "target_name", "option"), [("box", "bx", "bogus"), ("maka", "m.md", "aply_decay")]
)
def test_a_mistyped_target_option_leaves_no_new_target(
    stores: dict[str, Path], tmp_path: Path, target_fmt: str, target_name: str, option: str
) -> None:
    """Options are checked (the provider's constructor) before the target is created."""
    target = tmp_path / target_name
    with pytest.raises(ConfigError, match=f"unknown option '{option}'"):
        migrate(f"whitebox:{stores['whitebox']}", f"{target_fmt}:{target}", target_options={option: "1"})
    assert not target.exists()


_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: format -> (examples/ store, the part of it that is the store's location)
_EXAMPLE_STORES = {
    "whitebox": ("whitebox-vault", ""),
    "box": ("box-workspace", ""),
    "rightmemory": ("rightmemory", ""),
    "maka": ("maka", "MEMORY.md"),
    "basicmemory": ("basicmemory-project", ""),
    "mcpmemory": ("mcpmemory", "memory.jsonl"),
    "claudecode": ("claudecode-memory", ""),
}
_FOUR = ("whitebox", "box", "rightmemory", "maka")


@pytest.mark.parametrize("target", list(_EXAMPLE_STORES))
@pytest.mark.parametrize("source", _FOUR)
def test_no_file_a_migration_writes_holds_a_path_of_the_machine(source: str, target: str, tmp_path: Path) -> None:
    folder, name = _EXAMPLE_STORES[source]
    machine = tmp_path / "home-of-Zq7xUser" / "src-store-Kp3w"
    shutil.copytree(_EXAMPLES / folder, machine)
    dest = tmp_path / "dest"
    target_name = _EXAMPLE_STORES[target][1]
    location = dest / target_name if target_name else dest
    if target_name:
        dest.mkdir()
    report = migrate(f"{source}:{machine / name if name else machine}", f"{target}:{location}", validate=False)
    assert report.counts["written"] > 20
    leaks = {
        p.relative_to(dest).as_posix()
        for p in dest.rglob("*")
        if p.is_file()
        for needle in (str(tmp_path), "Zq7xUser", "Kp3w", os.sep + "tmp" + os.sep)
        if needle.encode() in p.read_bytes()
    }
    assert leaks == set()


def test_a_target_holding_another_formats_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(_EXAMPLES / "whitebox-vault", vault)
    before = {p.relative_to(vault): p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    with pytest.raises(ConfigError, match=r"holds a whitebox store, not a basicmemory one.*whitebox:"):
        migrate(f"rightmemory:{_EXAMPLES / 'rightmemory'}", f"basicmemory:{vault}")
    assert {p.relative_to(vault): p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before
    # the same format, or a folder no format recognises, is still a target
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine\n", encoding="utf-8")
    assert migrate(f"rightmemory:{_EXAMPLES / 'rightmemory'}", f"whitebox:{vault}").ok
    assert migrate(f"rightmemory:{_EXAMPLES / 'rightmemory'}", f"basicmemory:{tmp_path / 'notes'}").ok
    assert (tmp_path / "notes" / "todo.txt").read_text(encoding="utf-8") == "mine\n"
