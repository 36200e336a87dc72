"""render_prompt includes and excludes exactly what Maka's own prompt tests expect."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore_maka import TRUNCATION_MARKER, MakaProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"


def lines(name: str) -> list[str]:
    return (SAMPLES / name).read_text(encoding="utf-8").split("\n")


def reader(path: Path, **options: object) -> MakaProvider:
    return MakaProvider(path, agent_read_enabled=True, **options)


def test_active_only_with_tags(sample_copy) -> None:
    name = "fixture-active-vs-archived-prompt-body.md"
    src = lines(name)
    body = reader(sample_copy(name)).render_prompt()
    assert body == "\n".join([src[2], "Tags: style", src[4]])  # "## Keep", tags, content
    assert "maka-memory" not in body
    assert src[6][3:] not in body and src[8] not in body  # the archived entry


def test_session_scope(sample_copy) -> None:
    name = "fixture-session-scope.md"
    src = lines(name)
    workspace, session_a, session_b, unowned = src[4], src[8], src[12], src[16]
    provider = reader(sample_copy(name))
    without = provider.render_prompt()
    assert workspace in without
    assert session_a not in without and session_b not in without and unowned not in without
    in_a = provider.render_prompt(session_id="session-a")
    assert workspace in in_a and session_a in in_a
    assert session_b not in in_a and unowned not in in_a
    in_b = provider.render_prompt(session_id="session-b")
    assert workspace in in_b and session_b in in_b
    assert session_a not in in_b and unowned not in in_b
    assert unowned not in provider.render_prompt(session_id="")


def test_pending_rejected_unknown_excluded(sample_copy) -> None:
    name = "fixture-statuses-pending-rejected-unknown.md"
    src = lines(name)
    body = reader(sample_copy(name)).render_prompt()
    assert body == "\n".join([src[2], src[4]])
    for excluded in (src[8], src[12], src[16]):
        assert excluded not in body


def test_first_comment_sample(sample_copy) -> None:
    name = "fixture-first-metadata-comment-authoritative.md"
    src = lines(name)
    body = reader(sample_copy(name)).render_prompt()
    assert body == "\n".join([src[2], src[4], src[6]])
    assert "shadow" not in body and "maka-memory" not in body


def test_v01_entries_without_comment_are_active(sample_copy) -> None:
    name = "fixture-v0.1-best-effort-metadata.md"
    src = lines(name)
    body = reader(sample_copy(name)).render_prompt()
    assert body == "\n".join([src[2], src[4], "", src[6], src[7]])


def test_gates_before_anything(sample_copy) -> None:
    path = sample_copy("fixture-active-vs-archived-prompt-body.md")
    assert MakaProvider(path).render_prompt() == ""  # agent read is off by default
    assert MakaProvider(path, agent_read_enabled="maybe").render_prompt() == ""  # only a true value
    assert MakaProvider(path, agent_read_enabled="true").render_prompt() != ""
    assert reader(path, enabled=False).render_prompt() == ""
    assert reader(path, incognito=True).render_prompt() == ""


def test_incognito_does_not_touch_the_disk(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "MEMORY.md"
    assert reader(missing, incognito=True).render_prompt() == ""
    assert not (tmp_path / "nowhere").exists()


def test_truncation_never_splits_a_character(tmp_path: Path) -> None:
    prefix = ("word " * 2400)[:11987]
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## Boundary\n<!-- maka-memory: id=boundary origin=manual status=active -->\n"
        f"{prefix}\U0001f600tail\n",
        encoding="utf-8",
    )
    body = reader(path).render_prompt()
    # 12 + 11987 UTF-16 units fit; the emoji's surrogate pair would straddle the 12,000 budget.
    assert body == f"## Boundary\n{prefix}\n\n{TRUNCATION_MARKER}"
    assert TRUNCATION_MARKER == "[本地记忆已按长度截断]"


def test_budget_is_counted_in_utf16_units(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## A\n" + "x" * 100 + "\n", encoding="utf-8")
    provider = reader(path)
    assert provider.render_prompt(budget=105) == "## A\n" + "x" * 100
    assert provider.render_prompt(budget=50) == "## A\n" + "x" * 45 + f"\n\n{TRUNCATION_MARKER}"


def test_long_content_is_not_cut_at_the_preview_length(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## Long\n" + "a" * 520 + "tail-marker\n", encoding="utf-8")
    assert reader(path).render_prompt().endswith("tail-marker")


def test_legacy_secrets_redacted_in_prompt(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## Pasted credential sk-ant-api03-title123456789abcdef\n"
        "<!-- maka-memory: id=legacy-secret origin=manual status=active -->\n"
        "Authorization: Bearer sk-ant-api03-abc123def456ghi789jkl0mn1opq\n"
        "Endpoint: https://api.example.test/models?api_key=raw-secret-value&timeout=30\n",
        encoding="utf-8",
    )
    body = reader(path).render_prompt()
    assert "sk-ant-api03" not in body and "raw-secret-value" not in body and "title123456789abcdef" not in body
    assert "Authorization: Bearer [redacted]" in body
    assert "api_key=[redacted]&timeout=30" in body
    # The file itself is not changed by rendering.
    assert "raw-secret-value" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("size", [131_072, 131_073])
def test_safe_mode_renders_nothing(tmp_path: Path, size: int) -> None:
    path = tmp_path / "MEMORY.md"
    head = "## Big\n<!-- maka-memory: id=big status=active -->\n"
    path.write_text(head + "x" * (size - len(head) - 1) + "\n", encoding="utf-8")
    assert path.stat().st_size == size
    body = reader(path).render_prompt()
    assert (body == "") is (size > 131_072)


def test_expired_entries_never_reach_the_prompt_even_read_only(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "## Old\n<!-- maka-memory: id=old createdAt=1000 decayTtlMs=1000 status=active -->\nstale\n\n"
        "## Fresh\n<!-- maka-memory: id=fresh status=active -->\nfresh\n",
        encoding="utf-8",
    )
    before = path.read_bytes()
    assert reader(path, read_only=True).render_prompt() == "## Fresh\nfresh"
    assert path.read_bytes() == before
