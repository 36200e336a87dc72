"""The commands that change existing entries (memcore update, edit, insert, delete, archive,
supersede, rename, move, relate, unrelate, graph, recent), `-` as stdin/stdout, and --json errors,
on real Box-memory, WhiteBox and RightMemory stores."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memcore.cli import _load_plugin_commands, cli
from memcore.registry import get_registry


@pytest.fixture(autouse=True)
def _commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_STORE", raising=False)
    _load_plugin_commands()


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


def new_store(tmp_path: Path, fmt: str, name: str) -> str:
    location = str(tmp_path / name)
    get_registry().get(fmt).init_store(location)
    return f"{fmt}:{location}"


@pytest.fixture
def box(tmp_path: Path) -> str:
    return new_store(tmp_path, "box", "ws")


def add(store: str, title: str, body: str) -> str:
    result = run("add", "--store", store, "--title", title, "--body", body, "--json")
    assert result.exit_code == 0, result.output
    entry_id: str = as_json(result)["id"]
    return entry_id


def test_update_edit_insert_rename_on_box(box: str) -> None:
    eid = add(box, "Deploys", "Deploy on Friday.\n")
    result = run("update", eid, "--store", box, "--tag", "ops", "--tag", "release", "--json")
    assert result.exit_code == 0 and as_json(result)["tags"] == ["ops", "release"]
    assert as_json(result)["body"] == "Deploy on Friday.\n"  # fields not given are kept
    result = run("edit", eid, "--store", box, "--old", "Friday", "--new", "Thursday")
    assert (result.exit_code, result.stdout) == (0, f"edited {eid}\n")
    result = run("insert", eid, "--store", box, "--text", "-", "--line", "0", stdin="Ask ops first.\n")
    assert result.exit_code == 0
    result = run("rename", eid, "Release days", "--store", box, "--json")
    shown = as_json(run("show", eid, "--store", box, "--json"))
    assert shown["title"] == "Release days" and shown["body"] == "Ask ops first.\nDeploy on Thursday.\n"
    result = run("update", eid, "--store", box)
    assert result.exit_code == 2 and "nothing to change" in result.output


def test_update_of_a_whitebox_fact_says_it_filed_a_proposal_and_the_proposal_holds_every_change(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "whitebox-vault", vault)
    store = f"whitebox:{vault}"
    result = run("update", "languages.md", "--store", store, "--title", "Languages spoken", "--tag", "lang")
    assert result.exit_code == 0
    assert result.stdout.startswith("proposed proposed/") and "a proposal to change languages.md" in result.stdout
    assert "-o as_user=true" in result.stdout
    proposal = result.stdout.split()[1].rstrip(":")
    text = (vault / proposal).read_text(encoding="utf-8")
    assert "title: Languages spoken" in text and "tags: [lang]" in text
    assert as_json(run("show", "languages.md", "--store", store, "--json"))["title"] == "Languages"


def test_body_dash_reads_stdin_for_add_update_and_supersede(box: str) -> None:
    result = run("add", "--store", box, "--title", "Piped", "--body", "-", "--json", stdin="from stdin\n")
    eid = as_json(result)["id"]
    assert as_json(result)["body"] == "from stdin\n"
    result = run("update", eid, "--store", box, "--body", "-", "--json", stdin="changed\n")
    assert as_json(result)["body"] == "changed\n"
    result = run("supersede", eid, "--store", box, "--body", "-", "--json", stdin="replaced\n")
    new = as_json(result)
    assert new["body"] == "replaced\n" and new["title"] == "Piped"  # title copied from the old entry
    assert {"type": "supersedes", "target": eid, "resolved": True} in new["relations"]
    assert as_json(run("show", eid, "--store", box, "--json"))["status"] == "superseded"


@pytest.mark.parametrize(
    "args",
    [("add", "--title", "T", "--body", "-"), ("add", "--title", "T"), ("edit", "{id}", "--old", "a", "--new", "-")],
    ids=["add --body -", "add piped", "edit --new -"],
)
def test_stdin_that_is_not_utf8_is_a_usage_error_naming_the_byte_and_nothing_is_written(
    box: str, args: tuple[str, ...]
) -> None:
    eid = add(box, "Kept", "a body\n")
    argv = [a.replace("{id}", eid) for a in args]
    result = CliRunner().invoke(cli, [*argv, "--store", box], input=b"caf\xe9 \xff")
    assert result.exit_code == 2
    assert "stdin is not UTF-8 (byte 0xE9 at offset 3)" in result.stderr and "nothing was written" in result.stderr
    listed = as_json(run("ls", "--store", box, "--json"))
    assert [e["id"] for e in listed] == [eid] and as_json(run("show", eid, "--store", box, "--json"))[
        "body"
    ] == "a body\n"


def test_archive_delete_move_relate_graph_recent_on_box(box: str) -> None:
    top = add(box, "Project", "p")
    child = add(box, "Task", "t")
    assert run("move", child, "--store", box, "--parent", top).stdout == f"moved {child}\n"
    assert as_json(run("show", child, "--store", box, "--json"))["parent"] == top
    assert run("relate", top, f"related:{child}", "--store", box).exit_code == 0
    graph = as_json(run("graph", top, "--store", box, "--depth", "1", "--json"))
    assert [(n["id"], n["depth"]) for n in graph["entries"]] == [(top, 0), (child, 1)]
    assert {(e["source"], e["type"], e["target"]) for e in graph["edges"]} == {
        (top, "related", child),
        (child, "parent", top),
    }
    assert run("unrelate", top, f"related:{child}", "--store", box).exit_code == 0
    assert as_json(run("show", top, "--store", box, "--json"))["relations"] == []
    assert [e["id"] for e in as_json(run("recent", "--store", box, "--json"))][:1] == [top]
    assert as_json(run("archive", child, "--store", box, "--json"))["status"] == "archived"
    assert as_json(run("delete", top, "--store", box, "--json")) == {"deleted": top}
    assert [e["id"] for e in as_json(run("ls", "--store", box, "--json"))] == [child]
    result = run("move", child, "--store", box)
    assert result.exit_code == 2 and "give exactly one of --parent ID and --top" in result.output


def errors(result: Result) -> Any:
    assert result.stdout == ""  # a failed command prints no result
    return json.loads(result.stderr)


def test_json_errors_are_json_on_stderr_with_the_exit_codes(box: str, tmp_path: Path) -> None:
    eid = add(box, "Days", "Friday, Friday")
    result = run("edit", eid, "--store", box, "--old", "Friday", "--json")
    assert result.exit_code == 1
    assert errors(result) == {
        "error": {
            "code": "edit_mismatch",
            "message": f"box: edit of {eid!r}: the text to replace occurs 2 times in the body; "
            "include more of the surrounding text so that it occurs once",
            "hint": "give text that occurs exactly once in the body (`memcore show` prints it)",
        }
    }
    result = run("show", "mem_nope", "--store", box, "--json")
    assert result.exit_code == 1 and errors(result)["error"]["code"] == "not_found"
    result = run("ls", "--store", "nope:x", "--json")
    assert result.exit_code == 2 and errors(result)["error"]["code"] == "unknown_format"
    result = run("relate", eid, "no-colon", "--store", box, "--json")
    assert result.exit_code == 2
    assert errors(result)["error"] == {
        "code": "usage",
        "message": "relation 'no-colon' must be TYPE:TARGET",
        "hint": "see the command's --help",
    }
    result = run("edit", eid, "--store", box, "--old", "nope")  # without --json: one line on stderr
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"memcore: error: box: edit of {eid!r}: the text to replace does not occur")


def test_refusals_name_the_format_rule(tmp_path: Path) -> None:
    vault = new_store(tmp_path, "whitebox", "vault")
    result = run("add", "--store", vault, "--kind", "observation", "--body", "Alex moved to Lyon.", "--json")
    obs = as_json(result)["id"]
    result = run("edit", obs, "--store", vault, "--old", "Lyon", "--new", "Paris", "--json")
    assert result.exit_code == 1
    error = errors(result)["error"]
    assert error["code"] == "unsupported"
    assert error["message"].startswith(f"whitebox: observations are append-only; {obs} cannot be updated")
    result = run("delete", obs, "--store", vault, "--json")
    assert errors(result)["error"]["message"] == (
        "whitebox: `delete` is not supported by this format (provider WhiteBoxProvider lacks the 'delete' capability)"
    )
    rm = new_store(tmp_path, "rightmemory", "rm")
    a, b = add(rm, "A", "a"), add(rm, "B", "b")
    result = run("move", b, "--store", rm, "--parent", a, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)["parent"] == a  # RightMemory's own move keeps the id


def test_migrate_report_dash_writes_the_report_to_stdout(tmp_path: Path) -> None:
    src = new_store(tmp_path, "box", "src")
    add(src, "One", "one")
    dst = f"maka:{tmp_path / 'out' / 'MEMORY.md'}"
    result = run("migrate", src, dst, "--report", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["counts"]["written"] == 1
    assert "→" in result.stderr  # the human summary moved to stderr
    assert not Path("-").exists()


def test_a_usage_error_click_finds_is_json_under_json_too() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "edit", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert json.loads(proc.stderr) == {
        "error": {"code": "usage", "message": "Missing argument 'ENTRY_ID'.", "hint": "see the command's --help"}
    }
    plain = subprocess.run(
        [sys.executable, "-m", "memcore", "edit"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert plain.returncode == 2 and "Error: Missing argument 'ENTRY_ID'." in plain.stderr and plain.stdout == ""


def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly() -> None:
    vault = Path(__file__).resolve().parents[1] / "examples" / "whitebox-vault"
    args = [sys.executable, "-m", "memcore", "recent", "--store", f"whitebox:{vault}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    with proc.stderr:
        err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (1, b"")
