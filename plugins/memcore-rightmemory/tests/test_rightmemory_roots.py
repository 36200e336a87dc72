"""Store roots: open() refuses a folder that is not a RightMemory store, writes refuse unusable roots.

From a new-user trial: ``memcore add --store rightmemory:DIR`` appended a RightMemory heading into
a Maka MEMORY.md (corrupting the Maka entry above it), and ``memcore ls --store rightmemory:DIR``
on a WhiteBox vault or a missing folder printed an empty table and exited 0.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import cli
from memcore.errors import ConfigError, InvalidEntryError
from memcore.models import Kind, MemoryEntry
from memcore_rightmemory.provider import RightMemoryProvider, UnusableRootError

REPO = Path(__file__).resolve().parents[3]
WHITEBOX_VAULT = REPO / "examples" / "whitebox-vault"
SAMPLES = REPO / ".." / "shared" / "samples" / "rightmemory"
PURSUITS = "# Pursuits\n\n## Focus\n\nNo Pursuit is focused yet.\n"
#: What Maka writes for one entry (header, ``## title`` section, metadata comment, body).
MAKA = (
    "# Maka Memory\n\n## x\n"
    "<!-- maka-memory: id=mem-0123456789abcdef origin=user createdAt=1770023100000 "
    "updatedAt=1770023100000 status=active -->\ny\n"
)


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _store(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8", newline="")
    return root


def _entry(title: str = "t", body: str = "b") -> MemoryEntry:
    return MemoryEntry(kind=Kind.FACT, title=title, body=body)


# -- writes refuse a store whose root files are not a RightMemory graph ----------------------------
@pytest.mark.parametrize("with_pursuits", [False, True], ids=["maka-only", "after-rightmemory-init"])
def test_add_into_a_maka_memory_file_is_refused_and_writes_nothing(tmp_path: Path, with_pursuits: bool) -> None:
    root = _store(tmp_path / "wbcopy", {"MEMORY.md": MAKA, **({"PURSUITS.md": PURSUITS} if with_pursuits else {})})
    before = _tree(root)
    with RightMemoryProvider(root) as provider:
        with pytest.raises(UnusableRootError) as caught:
            provider.add(_entry())
        codes = [d.code for d in provider.validate()]
    assert isinstance(caught.value, InvalidEntryError)
    message = str(caught.value)
    assert str(root / "MEMORY.md") in message
    assert "maka:" in message  # names the format the file is in and how to open it
    assert caught.value.diagnostics[0].code == "rm.foreign-root"
    assert caught.value.diagnostics[0].path == "MEMORY.md"
    assert caught.value.diagnostics[0].line == 1  # the `# Maka Memory` header
    assert "rm.foreign-root" in codes
    assert _tree(root) == before


def test_an_empty_maka_file_is_foreign_too(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", {"MEMORY.md": "# Maka Memory\n", "PURSUITS.md": PURSUITS})
    before = _tree(root)
    with RightMemoryProvider(root) as provider:
        assert [(d.code, d.path, d.line) for d in provider.validate()] == [("rm.foreign-root", "MEMORY.md", 1)]
        with pytest.raises(UnusableRootError, match=r"Maka"):
            provider.add(_entry())
    assert _tree(root) == before


def test_maka_text_inside_fenced_code_or_beside_items_is_not_foreign(tmp_path: Path) -> None:
    fenced = "# Memory\n\n```\n" + MAKA + "```\n"
    mixed = "# Memory\n\n## Keep {#keep}\n\n" + MAKA.split("\n", 3)[3]
    for name, text in (("fenced", fenced), ("mixed", mixed)):
        root = _store(tmp_path / name, {"MEMORY.md": text, "PURSUITS.md": PURSUITS})
        with RightMemoryProvider(root) as provider:
            # fenced: the code block sits under the plain `# Memory` heading, in no entry
            unread = [("rm.unread-text", "MEMORY.md", 3)] if name == "fenced" else []
            assert [(d.code, d.path, d.line) for d in provider.validate()] == unread, name
            assert provider.add(_entry()).id == "t"


def test_write_into_a_store_missing_pursuits_is_refused_with_the_init_fix(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", {"MEMORY.md": "# Memory\n\n- `a` A \u2192 []\n"})
    before = _tree(root)
    with RightMemoryProvider(root) as provider:
        with pytest.raises(UnusableRootError, match=r"memcore init --store rightmemory:") as caught:
            provider.add(_entry())
        assert [d.code for d in caught.value.diagnostics] == ["rm.missing-root"]
        assert str(root / "PURSUITS.md") in str(caught.value)
        stored = provider.get("a")
        with pytest.raises(UnusableRootError):
            provider.update(stored.model_copy(update={"title": "A2"}), expected_version=stored.version)
        with pytest.raises(UnusableRootError):
            provider.delete("a")
    assert _tree(root) == before
    RightMemoryProvider.init_store(str(root))  # the fix the message gives
    with RightMemoryProvider(root) as provider:
        assert provider.add(_entry()).id == "t"
        assert provider.validate() == []


def test_write_refused_when_a_root_is_a_symlink(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", {"MEMORY.md": "# Memory\n"})
    (tmp_path / "elsewhere.md").write_text(PURSUITS, encoding="utf-8")
    (root / "PURSUITS.md").symlink_to(tmp_path / "elsewhere.md")
    with RightMemoryProvider(root) as provider:
        with pytest.raises(UnusableRootError) as caught:
            provider.add(_entry())
    assert [d.code for d in caught.value.diagnostics] == ["rm.irregular-file"]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == "# Memory\n"


def test_fresh_init_store_and_authors_fixture_still_take_writes(tmp_path: Path) -> None:
    RightMemoryProvider.init_store(str(tmp_path / "new"))
    fixture = tmp_path / "fixture"
    shutil.copytree(SAMPLES / "test-fixture-extracted-test_graph", fixture)
    for root in (tmp_path / "new", fixture):
        with RightMemoryProvider(root) as provider:
            assert provider.add(_entry(title="Fresh item")).id == "fresh-item"
            assert provider.validate() == []


# -- open() refuses a folder that is not a RightMemory store ---------------------------------------
def test_open_refuses_a_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=r"memcore init --store rightmemory:") as caught:
        RightMemoryProvider(missing).open()
    assert str(missing) in str(caught.value)
    assert not missing.exists()


@pytest.mark.parametrize("as_file", [False, True], ids=["folder", "memory-md-path"])
def test_open_refuses_a_folder_without_memory_md(tmp_path: Path, as_file: bool) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(WHITEBOX_VAULT, vault)
    before = _tree(vault)
    location = vault / "MEMORY.md" if as_file else vault
    with pytest.raises(ConfigError) as caught:
        RightMemoryProvider(location).open()
    message = str(caught.value)
    assert str(vault / "MEMORY.md") in message
    assert f"memcore init --store rightmemory:{vault}" in message
    assert _tree(vault) == before


def test_validate_without_open_still_fails_open(tmp_path: Path) -> None:
    diags = RightMemoryProvider(tmp_path / "nope").validate()
    assert sorted(d.code for d in diags) == ["rm.missing-root", "rm.missing-root"]


def test_cli_ls_on_a_whitebox_vault_exits_2_naming_init(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(WHITEBOX_VAULT, vault)
    result = CliRunner().invoke(cli, ["ls", "--store", f"rightmemory:{vault}"])
    assert result.exit_code == 2, result.output
    assert "memcore init --store rightmemory:" in result.output


def test_cli_add_into_a_maka_store_fails_and_keeps_the_file(tmp_path: Path) -> None:
    pytest.importorskip("memcore_maka")
    store = tmp_path / "wbcopy"
    store.mkdir()
    runner = CliRunner()
    made = runner.invoke(cli, ["add", "--store", f"maka:{store}", "--title", "x", "--body", "y"])
    assert made.exit_code == 0, made.output
    before = (store / "MEMORY.md").read_bytes()
    result = runner.invoke(cli, ["add", "--store", f"rightmemory:{store}", "--title", "t", "--body", "b"])
    assert result.exit_code != 0, result.output
    assert "added" not in result.output
    assert str(store / "MEMORY.md") in result.output
    assert (store / "MEMORY.md").read_bytes() == before
    assert not (store / "PURSUITS.md").exists()
