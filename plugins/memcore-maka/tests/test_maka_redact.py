"""Secrets are redacted on the write path: one test per pattern, and none reaches the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import MemoryEntry
from memcore_maka import MakaProvider, redact_secrets

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAv3Xq7examplekeymaterial\nQ2xvc2VkIGtleQ==\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected", "secret"),
    [
        ("key: sk-ant-api03-abc123def456ghi789", "key: [redacted]", "sk-ant-api03"),
        ("openai sk-proj-AbCdEf0123456789xyz here", "openai [redacted] here", "sk-proj-"),
        ("google AIzaSyA1234567890abcdefghijklmnop", "google [redacted]", "AIzaSy"),
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123 x", "gh [redacted] x", "ghp_"),
        ("slack xoxb-1234567890-abcdefghij", "slack [redacted]", "xoxb-"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws [redacted]", "AKIAABCD"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "Authorization: Bearer [redacted]", "eyJhbG"),
        ("curl -H 'bearer abcdefghijkl12345'", "curl -H 'bearer [redacted]'", "abcdefghijkl12345"),
        ("password=hunter2 ok", "password=[redacted] ok", "hunter2"),
        ("PASSWORD: 'correct horse'", "PASSWORD: '[redacted]'", "horse"),
        ('{"api_key": "abc-123", "n": 1}', '{"api_key": "[redacted]", "n": 1}', "abc-123"),
        ("api_key = s3cr3tvalue", "api_key = [redacted]", "s3cr3tvalue"),
        ("https://x.test/a?key=abc&token=def&page=2", "https://x.test/a?key=[redacted]&token=[redacted]&page=2", "abc"),
        (f"before\n{PRIVATE_KEY}\nafter", "before\n[redacted private key]\nafter", "MIIEow"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n", "[redacted private key]", "b3Blbn"),
    ],
)
def test_pattern(text: str, expected: str, secret: str) -> None:
    out = redact_secrets(text)
    assert out == expected
    assert secret not in out
    assert redact_secrets(out) == out  # idempotent


def test_plain_text_is_untouched() -> None:
    text = "Prefer concise answers. The token budget is 12000; keys are sorted. mem-e060c48e23fe4573"
    assert redact_secrets(text) == text


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    stored = provider.add(
        MemoryEntry(
            title="Deploy password=hunter2",
            body=f"Use Authorization: Bearer abcdefghijklmnopqrstuvwxyz\n{PRIVATE_KEY}\napi_key=zzz-secret\n",
            extra={"other": {"note": "token: t0ps3cret"}},
        )
    )
    text = provider.path.read_text(encoding="utf-8")
    for secret in ("hunter2", "abcdefghijklmnopqrstuvwxyz", "MIIEow", "zzz-secret"):
        assert secret not in text
    assert stored.title == "Deploy password=[redacted]"
    assert stored.extra["other"]["note"] == "token: [redacted]"
    current = provider.get(stored.id or "")
    current.body = "rotated to sk-ant-api03-newsecret1234567"
    provider.update(current)
    assert "newsecret" not in provider.path.read_text(encoding="utf-8")
    assert "newsecret" not in provider.backup_path.read_text(encoding="utf-8")
