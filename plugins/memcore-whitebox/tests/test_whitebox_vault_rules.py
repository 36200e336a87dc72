"""Stable facts and proposals, tags.md, scopes.md, promotion, concurrent appends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.errors import ConfigError, ConflictError, EntryNotFoundError
from memcore.models import Kind, MemoryEntry, Severity, Status
from memcore_whitebox.promotion import find_candidates
from memcore_whitebox.provider import OutOfScopeError, WhiteBoxProvider


def obs(**kw: object) -> MemoryEntry:
    data: dict[str, object] = {
        "kind": Kind.OBSERVATION,
        "body": "An observation.",
        "source": "claude",
        "tags": ["preference"],
        "confidence": 0.7,
        "created_at": "2026-04-20",
        "date_only": True,
    }
    data.update(kw)
    return MemoryEntry(**data)  # type: ignore[arg-type]


# -- stable facts -------------------------------------------------------------------------
def test_agent_update_of_a_stable_fact_writes_a_proposal(vault: Path) -> None:
    identity = (vault / "identity.md").read_bytes()
    with WhiteBoxProvider(str(vault), source="claude") as store:
        fact = store.get("identity.md")
        fact.body = fact.body.replace("- Name:", "- Name: Ada")
        proposal = store.update(fact)
        assert (vault / "identity.md").read_bytes() == identity
        assert proposal.kind is Kind.PROPOSAL and proposal.status is Status.PROPOSED
        assert proposal.id is not None and proposal.id.startswith("proposed/") and proposal.id.endswith("-identity.md")
        assert [(r.type, r.target) for r in proposal.relations] == [("proposes", "identity.md")]
        assert "- Name: Ada" in str(proposal.extra["whitebox"]["proposed_content"])
        assert store.get(proposal.id).id == proposal.id
    text = (vault / proposal.id).read_text(encoding="utf-8")
    head, body = text.split("\n---\n", 1)
    assert [line.split(":")[0] for line in head.split("\n")[1:]] == ["target", "source", "proposed_at", "status"]
    assert head.split("\n")[1:3] == ["target: identity.md", "source: claude"]
    assert body.startswith("\n## Rationale\n\n") and "\n\n## Proposed content\n\n# Identity\n" in body


def test_a_proposal_that_changes_the_title_or_tags_proposes_the_whole_edited_file(vault: Path) -> None:
    identity = (vault / "identity.md").read_bytes()
    with WhiteBoxProvider(str(vault), source="claude") as store:
        fact = store.get("identity.md")
        fact.title, fact.tags = "Who I am", ["identity", "profile"]
        proposal = store.update(fact)
        content = str(proposal.extra["whitebox"]["proposed_content"])
    assert (vault / "identity.md").read_bytes() == identity
    head, _, body = content.partition("\n---\n")
    assert "title: Who I am" in head.split("\n") and "tags: [identity, profile]" in head.split("\n")
    assert body.lstrip("\n").startswith("# Identity\n")


def test_a_proposal_that_changes_only_the_body_proposes_the_body(vault: Path) -> None:
    with WhiteBoxProvider(str(vault), source="claude") as store:
        fact = store.get("identity.md")
        fact.body = "# Identity\n\nOnly the body changes.\n"
        content = str(store.update(fact).extra["whitebox"]["proposed_content"])
    assert content == "# Identity\n\nOnly the body changes."


def test_a_proposal_for_a_file_with_broken_frontmatter_lists_the_new_fields_before_the_body(vault: Path) -> None:
    (vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nBody.\n", encoding="utf-8")
    with WhiteBoxProvider(str(vault), source="claude") as store:
        fact = store.get("broken.md")
        fact.title = "Fixed"
        content = str(store.update(fact).extra["whitebox"]["proposed_content"])
    assert content.startswith("Proposed fields:\n\n- title: 'Fixed'\n")


def test_user_edit_in_place_touches_only_what_changed(vault: Path) -> None:
    path = vault / "working-style.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        fact = store.get("working-style.md")
        old_version = fact.version
        fact.body = fact.body.replace(
            "## Pace\n\n(e.g., one step at a time, or full plans up front)", "## Pace\n\nFast."
        )
        updated = store.update(fact)
        assert updated.version != old_version
        with pytest.raises(ConflictError):
            store.update(fact, expected_version=old_version)
    data = path.read_bytes()
    assert data.startswith(b"---\r\nschema: whitebox/1.0\r\n---\r\n\r\n# Working style")
    assert b"## Pace\r\n\r\nFast.\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert not (vault / "proposed").exists()


def test_add_fact_and_refuse_overwrite(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        fact = store.add(
            MemoryEntry(kind=Kind.FACT, id="projects/memcore.md", title="memcore", body="\n# memcore\n\nA library.\n")
        )
        assert fact.id == "projects/memcore.md" and fact.title == "memcore"
        with pytest.raises(ConflictError):
            store.add(MemoryEntry(kind=Kind.FACT, id="projects/memcore.md", body="again"))
        with pytest.raises(EntryNotFoundError):
            store.get("projects/nothing.md")
        with pytest.raises(EntryNotFoundError):
            store.get("../../etc/passwd")
    text = (vault / "projects" / "memcore.md").read_text(encoding="utf-8")
    assert text.startswith("---\nschema: whitebox/1.0\n")


def test_dispute_writes_a_conflict_observation(vault: Path) -> None:
    with WhiteBoxProvider(str(vault), source="claude") as store:
        stored = store.dispute("identity.md", "User said they moved to Lyon.", confidence=0.7)
    assert stored.kind is Kind.OBSERVATION and stored.tags == ["conflict"]
    assert [(r.type, r.target) for r in stored.relations] == [("disputes", "identity.md")]


# -- tags.md ------------------------------------------------------------------------------
def test_unknown_tags_are_appended_to_proposed_and_nothing_else_changes(vault: Path) -> None:
    before = (vault / "tags.md").read_text(encoding="utf-8")
    with WhiteBoxProvider(str(vault)) as store:
        store.add(obs(tags=["preference", "relationship:alex", "sleep-pattern", "project:memcore"]))
        store.add(obs(tags=["sleep-pattern", "tooling"]))
    after = (vault / "tags.md").read_text(encoding="utf-8")
    assert after == before.rstrip("\n") + (
        "\n- `sleep-pattern` \u2014 first used by claude (status: proposed)"
        "\n- `tooling` \u2014 first used by claude (status: proposed)\n"
    )
    with WhiteBoxProvider(str(vault)) as store:
        registry = store.tag_registry()
        assert registry is not None and registry.proposed == ["sleep-pattern", "tooling"]
        assert not [d for d in store.validate() if d.code == "wb.unregistered-tag"]


# -- scopes.md ----------------------------------------------------------------------------
SCOPES = (
    "# Scopes\n\n"
    "- `public` \u2014 root files only\n"
    "- `work` \u2014 root + `projects/`, observations\n"
    "- `private` - relationships, sensitive\n"
    "- `broken` \u2014 ../outside\n"
)


@pytest.fixture
def scoped(vault: Path) -> Path:
    (vault / "scopes.md").write_text(SCOPES, encoding="utf-8")
    for folder, name in (("projects", "memcore.md"), ("relationships", "alex.md"), ("sensitive", "health.md")):
        (vault / folder).mkdir()
        (vault / folder / name).write_text(f"# {name}\n", encoding="utf-8")
    (vault / "misc").mkdir()
    (vault / "misc" / "loose.md").write_text("# loose\n", encoding="utf-8")
    return vault


def _ids(store: WhiteBoxProvider) -> list[str]:
    return [e.id or "" for e in store.iter_entries()]


def test_active_scope_limits_reads_and_writes(scoped: Path) -> None:
    with WhiteBoxProvider(str(scoped)) as store:
        assert "sensitive/health.md" not in _ids(store)  # never served by default
        assert "relationships/alex.md" in _ids(store)
    with WhiteBoxProvider(str(scoped), scope="public") as store:
        assert _ids(store) == ["identity.md", "working-style.md"]
        with pytest.raises(OutOfScopeError):
            store.add(obs())
        with pytest.raises(EntryNotFoundError):
            store.get("projects/memcore.md")
    with WhiteBoxProvider(str(scoped), scope="work") as store:
        assert _ids(store) == ["identity.md", "observations/2026-04.md#1", "projects/memcore.md", "working-style.md"]
        assert {e.scope for e in store.iter_entries()} == {"work"}
        assert store.add(obs()).id == "observations/2026-04.md#2"
        with pytest.raises(OutOfScopeError):
            store.add(MemoryEntry(kind=Kind.FACT, id="relationships/bob.md", body="x"))
    with WhiteBoxProvider(str(scoped), scope="private") as store:
        assert _ids(store) == ["relationships/alex.md", "sensitive/health.md"]
    with WhiteBoxProvider(str(scoped), scope="work") as store:  # proposals go to proposed/ whatever the scope
        fact = store.get("projects/memcore.md")
        fact.body = "# memcore\n\nNow in Rust.\n"
        assert store.update(fact).kind is Kind.PROPOSAL
        with pytest.raises(EntryNotFoundError):  # invisible in this scope
            store.update(MemoryEntry(kind=Kind.FACT, id="relationships/alex.md", body="x"))


def test_unknown_scope_is_an_error(scoped: Path, vault: Path) -> None:
    with pytest.raises(ConfigError, match="unknown scope 'broken'"):
        WhiteBoxProvider(str(scoped), scope="broken").open()  # no include left: dropped
    with pytest.raises(ConfigError, match="unknown scope"):
        WhiteBoxProvider(str(scoped), scope="nope").open()


def test_validate_warns_about_files_outside_every_scope(scoped: Path) -> None:
    with WhiteBoxProvider(str(scoped)) as store:
        outside = {d.path for d in store.validate() if d.code == "wb.outside-scopes"}
    assert outside == {"misc/loose.md"}


# -- promotion ----------------------------------------------------------------------------
def _promote(vault: Path, *args: str) -> list[dict[str, object]]:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from memcore.cli import main; main()",
            "whitebox",
            "promote",
            "--store",
            f"whitebox:{vault}",
            "--as-of",
            "2026-04-24",
            "--json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_promotion_proposes_and_never_edits_facts(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        for n, (source, conf) in enumerate([("claude", 0.7), ("gpt", 0.5), ("claude", 0.9), ("gpt", 0.3)]):
            store.add(
                obs(
                    body=f"Terse answers {n}.",
                    tags=["Preference", "tooling"],
                    source=source,
                    confidence=conf,
                    created_at=f"2026-04-2{n}",
                )
            )
    facts = {p: p.read_bytes() for p in vault.glob("*.md")}
    dry = _promote(vault, "--dry-run")
    row = next(r for r in dry if r["tags"] == ["preference", "tooling"])
    assert row["eligible"] == 3 and row["meets_rule"] is True and row["action"] == "would-propose"
    assert row["distinct_sources"] == 2 and row["reference_promote"] is True
    assert row["target"] == "identity.md"
    assert not (vault / "proposed").exists()
    done = _promote(vault)
    row = next(r for r in done if r["tags"] == ["preference", "tooling"])
    assert row["action"] == "proposed" and str(row["path"]).startswith("proposed/")
    with WhiteBoxProvider(str(vault)) as store:
        proposal = store.get(str(row["path"]))
        assert proposal.extra["whitebox"]["frontmatter"] == {
            "derived_from": ["observations/2026-04.md#2", "observations/2026-04.md#3", "observations/2026-04.md#4"]
        }
        assert len([e for e in store.iter_entries() if e.kind is Kind.OBSERVATION]) == 5  # originals stay
    assert {p: p.read_bytes() for p in vault.glob("*.md")} == facts
    again = _promote(vault)
    assert next(r for r in again if r["tags"] == ["preference", "tooling"])["action"] == "already-proposed"


def test_reference_score_matches_the_reference_formula(vault: Path) -> None:
    entries = [
        obs(source="a", confidence=0.7, created_at="2026-04-20"),
        obs(source="a", confidence=0.5, created_at="2026-03-21", extra={"whitebox": {"kind": "inference"}}),
    ]
    from datetime import UTC, datetime

    (cand,) = find_candidates(entries, as_of=datetime(2026, 4, 20, tzinfo=UTC))
    assert cand.score == pytest.approx(0.7 + 0.5 * 0.5 * 1.3)  # 30 days = one half-life
    assert cand.distinct_sources == 1 and cand.reference_promote is False and cand.meets_rule is False


def test_auto_promotion_when_authorised_for_the_scope(vault: Path) -> None:
    (vault / "scopes.md").write_text("- `work` \u2014 root, observations, projects\n", encoding="utf-8")
    (vault / "promotion.md").write_text("# Promotion\n\n- auto-promote: `work`\n", encoding="utf-8")
    with WhiteBoxProvider(str(vault)) as store:
        for n in range(3):
            store.add(obs(body=f"Uses uv {n}.", tags=["project:memcore"], source=f"s{n}", created_at="2026-04-23"))
    rows = _promote(vault, "--scope", "work")
    row = next(r for r in rows if r["tags"] == ["project:memcore"])
    assert row["action"] == "promoted" and row["path"] == "projects/memcore.md"
    text = (vault / "projects" / "memcore.md").read_text(encoding="utf-8")
    assert "- Uses uv 0. (observations/2026-04.md#2)" in text


# -- concurrency --------------------------------------------------------------------------
CHILD = """
import sys
from memcore.models import Kind, MemoryEntry
from memcore_whitebox.provider import WhiteBoxProvider
location, who, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with WhiteBoxProvider(location) as store:
    for n in range(count):
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body=f"worker {who} note {n}", source=f"w{who}",
                              tags=[f"w{who}"], confidence=0.5, created_at="2026-04-20", date_only=True))
"""


@pytest.mark.slow
def test_concurrent_appends_lose_nothing(vault: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(vault), str(who), "15"], stderr=subprocess.PIPE)
        for who in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with WhiteBoxProvider(str(vault)) as store:
        bodies = sorted(e.body for e in store.iter_entries() if e.source and e.source.startswith("w"))
        assert bodies == sorted(f"worker {w} note {n}" for w in range(4) for n in range(15))
        assert [d for d in store.validate() if d.severity is Severity.ERROR] == []
        registry = store.tag_registry()
        assert registry is not None and sorted(registry.proposed) == ["w0", "w1", "w2", "w3"]
    assert os.path.getsize(vault / "observations" / "2026-04.md") > 0


# -- init, read-only, own entries ---------------------------------------------------------
def test_init_store_makes_an_empty_valid_vault(tmp_path: Path) -> None:
    WhiteBoxProvider.init_store(str(tmp_path / "v"))
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == ["AGENTS.md", "observations", "tags.md"]
    assert WhiteBoxProvider.sniff(tmp_path / "v")
    with WhiteBoxProvider(str(tmp_path / "v")) as store:
        assert list(store.iter_entries()) == [] and store.validate() == []
    with pytest.raises(ConflictError):
        WhiteBoxProvider.init_store(str(tmp_path / "v"))
    WhiteBoxProvider.init_store(str(tmp_path / "w"), stable_files=True)
    with WhiteBoxProvider(str(tmp_path / "w")) as store:
        assert [e.id for e in store.iter_entries()] == ["identity.md", "working-style.md"]


def test_read_only_store_refuses_writes(vault: Path) -> None:
    from memcore.errors import ReadOnlyStoreError
    from memcore.migrate import source_options_for

    assert source_options_for(WhiteBoxProvider) == {"read_only": True}
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    with WhiteBoxProvider(str(vault), read_only=True) as store:
        with pytest.raises(ReadOnlyStoreError):
            store.add(obs())
        with pytest.raises(ReadOnlyStoreError):
            store.update(store.get("identity.md"))
    assert {p: p.read_bytes() for p in vault.rglob("*.md")} == before


def test_a_session_may_amend_the_fact_it_created_but_not_the_users(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        mine = store.add(MemoryEntry(kind=Kind.FACT, id="projects/new.md", title="New", body="v1\n"))
        mine.body = "v2\n"
        assert store.update(mine).id == "projects/new.md"
        assert (vault / "projects" / "new.md").read_text(encoding="utf-8").endswith("---\nv2\n")
    with WhiteBoxProvider(str(vault)) as other:  # another session: the file is the user's now
        fact = other.get("projects/new.md")
        fact.body = "v3\n"
        assert other.update(fact).kind is Kind.PROPOSAL
    assert (vault / "projects" / "new.md").read_text(encoding="utf-8").endswith("---\nv2\n")


def test_blocks_of_another_scope_are_hidden_but_still_numbered(scoped: Path) -> None:
    month = scoped / "observations" / "2026-04.md"
    month.write_text(
        month.read_text(encoding="utf-8")
        + "\n---\n\n```\n---\ndate: 2026-04-20\nsource: a\ntags: [health]\nconfidence: low\nscope: private\n---\n\nPrivate.\n```\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(scoped), scope="work") as store:
        assert [e.id for e in store.iter_entries() if e.kind is Kind.OBSERVATION] == ["observations/2026-04.md#1"]
        assert store.add(obs()).id == "observations/2026-04.md#3"
        with pytest.raises(OutOfScopeError):
            store.add(obs(scope="private"))
    with WhiteBoxProvider(str(scoped)) as store:
        assert store.get("observations/2026-04.md#2").scope == "private"
        assert store.get("observations/2026-04.md#3").body == "An observation."


def test_derived_from_becomes_relations_and_round_trips(vault: Path) -> None:
    (vault / "synthesized").mkdir()
    (vault / "synthesized" / "profile-2026-04-30.md").write_text(
        "---\nsynthesized_at: 2026-04-30\nsynthesized_by: claude\n"
        "derived_from: [observations/2026-04.md#1]\nversion: 1\n---\n\n# Profile\n\nTerse.\n",
        encoding="utf-8",
    )
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        profile = store.get("synthesized/profile-2026-04-30.md")
        assert profile.kind is Kind.NOTE and profile.extra["whitebox"]["layer"] == "synthesized"
        assert [(r.type, r.target) for r in profile.relations] == [("derived_from", "observations/2026-04.md#1")]
        assert profile.created_at is not None and profile.date_only
        profile.relations = [*profile.relations, profile.relations[0].model_copy(update={"type": "related"})]
        store.update(profile)
        again = store.get("synthesized/profile-2026-04-30.md")
    assert [(r.type, r.target) for r in again.relations] == [
        ("derived_from", "observations/2026-04.md#1"),
        ("related", "observations/2026-04.md#1"),
    ]
    text = (vault / "synthesized" / "profile-2026-04-30.md").read_text(encoding="utf-8")
    assert text.startswith(
        "---\nsynthesized_at: 2026-04-30\nsynthesized_by: claude\nderived_from: [observations/2026-04.md#1]\n"
    )
