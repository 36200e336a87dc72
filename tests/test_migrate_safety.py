"""``memcore migrate`` against copies of the real example stores: overlapping locations are
refused before anything is written (D1), unreadable source entries are reported (D2), and the
messages say what really happened (N5)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memcore.cli.migrate import register
from memcore.convert import migrate
from memcore.errors import ConfigError
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
