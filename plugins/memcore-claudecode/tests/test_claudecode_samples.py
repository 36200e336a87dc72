"""Every sample Claude Code (or its docs) wrote reads with the values the spec says Claude Code gives.

One test per sample folder or file of ../shared/samples/claude-code-memory: auto-memory folders
(B.2-B.4: MEMORY.md index, topic files with ``name``, ``description``, ``type`` at the top level
or under ``metadata``), Anthropic's CLAUDE.md files (A.2: no frontmatter; ``@`` in backticks is
no import) and the docs' import and rule examples (A.2, A.3), each placed in a store as the file
it is an example of.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from memcore.models import Kind, Relation, Severity
from memcore_claudecode.provider import ClaudeCodeProvider

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "claude-code-memory"


def _codes(store: ClaudeCodeProvider) -> list[tuple[str | None, int | None, str]]:
    return [(d.path, d.line, d.code) for d in store.validate() if d.severity is not Severity.INFO]


def test_mpechner_older_shape_top_level_type_and_origin_session(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("auto-memory/mpechner-jenkins_lab")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = list(store.iter_entries())
        diagnostics = _codes(store)
    assert [e.id for e in entries] == ["user_role.md", "feedback_no_bitnami.md"]  # MEMORY.md order
    user, bitnami = entries
    assert (user.kind, user.title) == (Kind.FACT, "User profile — senior infra/platform engineer")
    assert user.body.startswith("Senior platform / DevOps engineer. Comfortable with:\n- Kubernetes")
    assert user.extra["claudecode"] == {
        "path": "user_role.md",
        "shape": "top-level",
        "description": "Experienced platform/devops engineer comfortable with Kubernetes, Jenkins, Helm, RBAC, "
        "image registries. Expects production-grade thinking and minimal hand-holding.",
        "frontmatter": {"originSessionId": "82f6605b-ac88-43bd-b6c6-39af3d38feda"},
        "index_title": "User profile",
        "hook": "senior platform/devops engineer; skip 101-level explanations",
    }
    assert (bitnami.kind, bitnami.title) == (Kind.PREFERENCE, "Avoid bitnami/* container images")
    assert bitnami.body.startswith("\nDo not use `bitnami/*` Docker Hub images.")
    assert bitnami.extra["claudecode"]["hook"] == (
        "Broadcom-relicensed; use first-party / Docker Hub Official Library / alpine/k8s"
    )
    assert "index_title" not in bitnami.extra["claudecode"]  # the link text is the name
    assert all(e.created_at is None and e.updated_at is None and e.tags == [] for e in entries)  # no `modified`
    # the index lists two memories that were never written (a known Claude Code drift)
    assert diagnostics == [
        ("MEMORY.md", 2, "claudecode.index-missing-file"),
        ("MEMORY.md", 4, "claudecode.index-missing-file"),
    ]


def test_0waq_metadata_shape_node_type_and_wikilinks(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("auto-memory/0WAQ-gsim-ops")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = {e.id: e for e in store.iter_entries()}
        order = [e.id for e in store.iter_entries()]
        diagnostics = _codes(store)
    assert order == ["feedback_reply_style.md", "project_factor_state_machine.md"]  # index lines 3 and 14
    reply = entries["feedback_reply_style.md"]
    assert (reply.kind, reply.title) == (Kind.PREFERENCE, "feedback-reply-style")
    assert reply.extra["claudecode"] == {
        "path": "feedback_reply_style.md",
        "description": "User prefers terse Chinese replies, terminal-friendly output, no emoji anywhere",
        "frontmatter": {"metadata": {"node_type": "memory", "originSessionId": "a8aa7342-1004-49e0-b73c-995062472e90"}},
        "index_title": "Reply Style",
        "hook": "Chinese, terse, no emoji anywhere (chat / code / commits / CLI output)",
        # how its frontmatter is laid out where a new topic's would not be (followed when it is copied)
        "layout": {
            "nested": {"metadata": ["node_type", "type", "originSessionId"]},
            "quoted": ["description"],
            "spaced": ["metadata"],
        },
    }
    assert reply.relations == [Relation(type="related", target="feedback-commit-style", resolved=False)]
    state = entries["project_factor_state_machine.md"]
    # the file name says project, the frontmatter says reference: the frontmatter is the memory's type
    assert (state.kind, state.title) == (Kind.REFERENCE, "factor-state-machine")
    assert state.extra["claudecode"]["description"] == (
        "因子状态机设计:SUBMITTED/ACTIVE/REJECTED,转移规则,数据产物处理,版本控制方向"
    )
    assert "hook" not in state.extra["claudecode"]  # the index hook is the description
    assert state.extra["claudecode"]["index_title"] == "Factor State Machine"
    assert [r.target for r in state.relations] == ["factor-command-semantics", "factor-business-context"]
    missing = [line for path, line, code in diagnostics if code == "claudecode.index-missing-file"]
    assert len(missing) == 32 and 3 not in missing and 14 not in missing
    assert {code for _, _, code in diagnostics} == {"claudecode.index-missing-file"}


def test_episteme_index_heading_metadata_type_only_and_unindexed_topic(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("auto-memory/AlexanderReaper7-episteme")
    with ClaudeCodeProvider(root, read_only=True) as store:
        (entry,) = store.iter_entries()
        diagnostics = _codes(store)
    assert (entry.id, entry.kind, entry.title) == ("testing-small-batches.md", Kind.PREFERENCE, "testing-small-batches")
    assert entry.extra["claudecode"] == {
        "path": "testing-small-batches.md",
        "description": "When testing the pipeline, cap expensive stages at 1-3 items, never full runs",
        "indexed": False,
    }
    assert entry.body.startswith("\nWhen live-testing the Episteme pipeline, run 1-3 articles")
    assert diagnostics == [
        ("MEMORY.md", 3, "claudecode.index-missing-file"),
        ("MEMORY.md", 4, "claudecode.index-missing-file"),
        ("testing-small-batches.md", None, "claudecode.not-indexed"),
    ]


def test_anthropic_claude_md_files_are_stable_memory_without_imports(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("anthropic-claude-md")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = list(store.iter_entries())
        diagnostics = _codes(store)
    titles = {e.id: e.title for e in entries}
    assert titles == {
        "anthropic-sdk-typescript/CLAUDE.md": "anthropic-sdk-typescript/CLAUDE.md",  # no `# ` heading
        "claude-agent-sdk-python/CLAUDE.md": "Workflow",
        "claude-code-action/CLAUDE.md": "CLAUDE.md",
        "claude-code-action/base-action/CLAUDE.md": "CLAUDE.md",
        "claude-quickstarts/CLAUDE.md": "Claude Quickstarts Development Guide",
        "claude-quickstarts/managed-agents/chat-sdk/CLAUDE.md": "Chat SDK \u00d7 Claude Managed Agents analyst",
        "claude-cookbooks/claude_code_sdk/chief_of_staff_agent/CLAUDE.md": "CLAUDE.md - Chief of Staff Context",
    }
    # broadest first: shallower folders before deeper ones
    depths = [e.id.count("/") for e in entries if e.id]
    assert depths == sorted(depths)
    for entry in entries:
        source = (SAMPLES / "anthropic-claude-md" / str(entry.id)).read_text(encoding="utf-8")
        assert entry.body == source  # no frontmatter: the whole file, byte for byte
        assert entry.kind == Kind.FACT and entry.extra["claudecode"]["role"] == "instructions"
        # `@claude` and `@anthropic-ai/sdk` are in backticks: not imports
        assert entry.relations == []
    assert diagnostics == []


def _docs_store(tmp_path: Path, sample: str, name: str = "CLAUDE.md") -> Path:
    root = tmp_path / "store"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / "docs-extracted" / sample, root / name)
    return root


def test_docs_imports_example_follows_relative_imports_inside_the_store(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "CLAUDE.imports-example.md")
    (root / "README").write_text("# Project\n", encoding="utf-8")
    (root / "package.json").write_text("{}\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "git-instructions.md").write_text("# Git\n\nRebase, never merge.\n", encoding="utf-8")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = {e.id: e for e in store.iter_entries()}
        assert _codes(store) == []
    claude = entries["CLAUDE.md"]
    assert claude.title == "Additional Instructions"
    assert claude.relations == [
        Relation(type="imports", target="README", resolved=False),  # not markdown: followed, not an entry
        Relation(type="imports", target="package.json", resolved=False),
        Relation(type="imports", target="docs/git-instructions.md", resolved=True),
    ]
    imported = entries["docs/git-instructions.md"]
    assert (imported.title, imported.body, imported.extra["claudecode"]["role"]) == (
        "Git",
        "# Git\n\nRebase, never merge.\n",
        "import",
    )


def test_docs_imports_example_reports_missing_targets_by_line(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "CLAUDE.imports-example.md")
    with ClaudeCodeProvider(root, read_only=True) as store:
        assert _codes(store) == [
            ("CLAUDE.md", 1, "claudecode.import-missing"),
            ("CLAUDE.md", 1, "claudecode.import-missing"),
            ("CLAUDE.md", 4, "claudecode.import-missing"),
        ]
        assert [e.id for e in store.iter_entries()] == ["CLAUDE.md"]


def test_docs_home_import_is_refused_and_never_read(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "CLAUDE.home-import-example.md")
    with ClaudeCodeProvider(root, read_only=True) as store:
        (entry,) = store.iter_entries()
        diagnostics = store.validate()
    assert entry.relations == [Relation(type="imports", target="~/.claude/my-project-instructions.md", resolved=False)]
    (refused,) = diagnostics
    assert (refused.path, refused.line, refused.code) == ("CLAUDE.md", 2, "claudecode.import-refused")
    assert "home folder" in refused.message and "never read" in refused.message


def test_docs_escaped_space_import_names_a_folder_with_a_space(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "CLAUDE.escaped-space-import-example.md")
    (root / "Design Docs").mkdir()
    (root / "Design Docs" / "api-conventions.md").write_text("Use snake_case.\n", encoding="utf-8")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = {e.id: e for e in store.iter_entries()}
    assert entries["CLAUDE.md"].relations == [
        Relation(type="imports", target="Design Docs/api-conventions.md", resolved=True)
    ]
    assert entries["Design Docs/api-conventions.md"].body == "Use snake_case.\n"


def test_docs_agents_md_import_links_the_two_instruction_files(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "CLAUDE.agents-md-import-example.md")
    (root / "AGENTS.md").write_text("# Agents\n\nRun the tests before committing.\n", encoding="utf-8")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = {e.id: e for e in store.iter_entries()}
    assert entries["CLAUDE.md"].relations == [Relation(type="imports", target="AGENTS.md", resolved=True)]
    assert entries["CLAUDE.md"].title == "CLAUDE.md"  # only a `## ` heading: the path
    assert entries["AGENTS.md"].extra["claudecode"]["role"] == "instructions"


def test_docs_rule_with_paths_frontmatter(tmp_path: Path) -> None:
    root = _docs_store(tmp_path, "rules/api-rules.paths-example.md", ".claude/rules/api-rules.md")
    with ClaudeCodeProvider(root, read_only=True) as store:
        (entry,) = store.iter_entries()
    assert (entry.id, entry.kind, entry.title) == (".claude/rules/api-rules.md", Kind.FACT, "API Development Rules")
    assert entry.extra["claudecode"] == {
        "path": ".claude/rules/api-rules.md",
        "role": "rule",
        "frontmatter": {"paths": ["src/api/**/*.ts"]},
    }
    assert entry.body.startswith("\n# API Development Rules\n\n- All API endpoints must include input validation")
