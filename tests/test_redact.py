"""memcore.redact: the shared redactor (idempotent, loses no data, leaves plain text alone)."""

from __future__ import annotations

import pytest

from memcore.models import MemoryEntry, Relation
from memcore.redact import REDACTED, holds_secret, redact_entry, redact_secrets, redact_tree

FORMS = [
    "curl -u admin:K7l1Curlpass3Ee9 https://api.test",
    "https://deploy:I5j9Urlpass1Cc7@git.example.test/repo",
    "Authorization: Basic E1f5Basic7Yy3",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.C9d3Jwtsig5Ww1",
    "the password is N0o4Pwphrase6Hh2",
    "DB_PASSWORD='Q3r7 Dbpw9Kk5'",
]


@pytest.mark.parametrize("text", FORMS)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_secrets(text)
    assert REDACTED in once
    assert redact_secrets(once) == once
    assert holds_secret(text) and not holds_secret(once)


def test_keys_that_redact_alike_keep_both_values() -> None:
    data = {"token=abc123secret": 1, "token=zzz999secret": 2, "plain": ["password=x1y2z3", 3]}
    assert redact_tree(data) == {"token=[redacted]": 1, "token=[redacted]#2": 2, "plain": ["password=[redacted]", 3]}


def test_redact_entry_covers_every_string_and_leaves_the_input_alone() -> None:
    entry = MemoryEntry(
        id="e1",
        title="t",
        body="b",
        tags=["ghp_U1v5Github7Oo3abcdefghij"],
        source="token=S1",
        scope="password=S2",
        parent="api_key=S3",
        relations=[Relation(type="secret=S4", target="https://u:S5@h.test", resolved=False)],
        extra={"ns": {"k": "sk-ant-api03-S6abcdefgh"}},
    )
    out = redact_entry(entry)
    assert out.tags == [REDACTED]
    assert (out.source, out.scope, out.parent) == ("token=[redacted]", "password=[redacted]", "api_key=[redacted]")
    assert out.relations[0].type == "secret=[redacted]"
    assert out.relations[0].target == "https://u:[redacted]@h.test"
    assert out.extra == {"ns": {"k": REDACTED}}
    assert out.id == "e1"
    assert entry.tags == ["ghp_U1v5Github7Oo3abcdefghij"]  # a copy: the caller's entry is untouched


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("{'Authorization': 'Basic aHVudGVyMlhRWg=='}", "aHVudGVyMlhRWg"),
        ('Authorization: "Basic aHVudGVyMlhRWg=="', "aHVudGVyMlhRWg"),
        ('Authorization = "Token abcdefghijk"', "abcdefghijk"),
        ('Authorization: Bearer "abcdefghijkl"', "abcdefghijkl"),
        ("{'password': 'hunter2XQZ'}", "hunter2XQZ"),
        ('password => "hunter2XQZ"', "hunter2XQZ"),
        ("ASIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
        ("AKIAIOSFODNN7EXAMPLE_prod", "IOSFODNN7EXAMPLE"),
        ("tok_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "c2lnbmF0dXJl"),
        ("eyAiYWxnIjoiSFMyNTYifQ.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "c2lnbmF0dXJl"),
    ],
)
def test_quoted_arrow_and_prefixed_secret_shapes_are_redacted(text: str, secret: str) -> None:
    once = redact_secrets(text)
    assert secret not in once
    assert "[redacted]" in once
    assert redact_secrets(once) == once
