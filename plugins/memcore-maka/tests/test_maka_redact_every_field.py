"""No secret reaches a Maka file, whatever field it is in (issue 17, item 4).

Table-driven: every secret form below is put in every string field of an entry in turn, the
entry is added (to MEMORY.md) or proposed (to PENDING.md), and the raw bytes of every file in the
store, plus the base64 ``mcData`` blobs decoded, must not hold the secret. Before, only title,
body and ``extra`` values were redacted: a token in a tag, the source, the scope, a relation or
the parent reached the file (in ``mcData`` as base64).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import MemoryEntry, Relation
from memcore.redact import redact_secrets
from memcore_maka import MakaProvider

#: (name, text holding the secret, the secret itself: alphanumeric, so that a case-folded search
#: also finds it after Maka's tag normalisation)
SECRET_FORMS: list[tuple[str, str, str]] = [
    ("anthropic-key", "sk-ant-api03-Q7w1Anthropic9Zx", "Q7w1Anthropic9Zx"),
    ("openai-key", "sk-proj-R8e2Openai4Kk0", "R8e2Openai4Kk0"),
    ("stripe-key", "sk_live_S9t3Stripe5Lm1q", "S9t3Stripe5Lm1q"),
    ("google-key", "AIzaSyT0u4Google6Nn2abcdefgh", "T0u4Google6Nn2abcdefgh"),
    ("github-token", "ghp_U1v5Github7Oo3abcdefghij", "U1v5Github7Oo3abcdefghij"),
    ("github-pat", "github_pat_V2w6Githubpat8Pp4abcdef", "V2w6Githubpat8Pp4abcdef"),
    ("slack-token", "xoxb-1234-W3x7Slack9Qq5", "W3x7Slack9Qq5"),
    ("aws-access-key", "AKIAX4Y8AWSKEY0RR6ST", "X4Y8AWSKEY0RR6ST"),
    ("gitlab-token", "glpat-Y5z9Gitlab1Ss7abcdefgh", "Y5z9Gitlab1Ss7abcdefgh"),
    ("huggingface-token", "hf_Z6a0Huggingface2Tt8abcd", "Z6a0Huggingface2Tt8abcd"),
    ("npm-token", "npm_A7b1Npmtoken3Uu9abcdefgh", "A7b1Npmtoken3Uu9abcdefgh"),
    ("google-oauth", "ya29.B8c2Googleoauth4Vv0abcd", "B8c2Googleoauth4Vv0abcd"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.C9d3Jwtsig5Ww1", "C9d3Jwtsig5Ww1"),
    ("auth-bearer", "Authorization: Bearer D0e4Bearer6Xx2", "D0e4Bearer6Xx2"),
    ("auth-basic", "Authorization: Basic E1f5Basic7Yy3", "E1f5Basic7Yy3"),
    ("auth-token", "authorization: token F2g6Ghtoken8Zz4", "F2g6Ghtoken8Zz4"),
    ("auth-plain", "Authorization=G3h7Plainauth9Aa5", "G3h7Plainauth9Aa5"),
    ("bare-bearer", "use bearer H4i8Barebearer0Bb6", "H4i8Barebearer0Bb6"),
    ("url-credentials", "https://deploy:I5j9Urlpass1Cc7@git.example.test/repo", "I5j9Urlpass1Cc7"),
    ("db-url-credentials", "postgres://app:J6k0Dbpass2Dd8@db:5432/app", "J6k0Dbpass2Dd8"),
    ("curl-u", "curl -u admin:K7l1Curlpass3Ee9 https://api.test", "K7l1Curlpass3Ee9"),
    ("curl-user", "curl --user=admin:L8m2Curluser4Ff0 https://api.test", "L8m2Curluser4Ff0"),
    ("password-assignment", "password=M9n3Pwassign5Gg1", "M9n3Pwassign5Gg1"),
    ("password-phrase", "the password is N0o4Pwphrase6Hh2", "N0o4Pwphrase6Hh2"),
    ("api-key-colon", "api_key: O1p5Apikey7Ii3", "O1p5Apikey7Ii3"),
    ("env-secret", "AWS_SECRET_ACCESS_KEY=P2q6Awssecret8Jj4", "P2q6Awssecret8Jj4"),
    ("env-password-quoted", "DB_PASSWORD='Q3r7 Dbpw9Kk5'", "Dbpw9Kk5"),
    ("json-secret", '{"client_secret": "R4s8Jsonsecret0Ll6"}', "R4s8Jsonsecret0Ll6"),
    ("url-query", "https://api.test/v1?token=S5t9Querytoken1Mm7&page=2", "S5t9Querytoken1Mm7"),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nT6u0Privatekey2Nn8\n-----END OPENSSH PRIVATE KEY-----",
        "T6u0Privatekey2Nn8",
    ),
]

FIELDS = [
    "title",
    "body",
    "tag",
    "source",
    "scope",
    "parent",
    "relation-target",
    "relation-type",
    "extra-value",
    "extra-key",
    "extra-nested",
    "id",
]

_MC_DATA = re.compile(r"\bmcData(?:_(\d+))?=(\S+)")


def _entry(field: str, text: str) -> MemoryEntry:
    data: dict[str, object] = {"title": "Redaction probe", "body": "probe body"}
    if field == "title":
        data["title"] = text.replace("\n", " ")
    elif field == "body":
        data["body"] = text
    elif field == "tag":
        data["tags"] = ["probe", text]
    elif field in ("source", "scope", "parent", "id"):
        data[field] = text
    elif field == "relation-target":
        data["relations"] = [Relation(type="related", target=text, resolved=False)]
    elif field == "relation-type":
        data["relations"] = [Relation(type=text, target="other-entry", resolved=False)]
    elif field == "extra-value":
        data["extra"] = {"notes": {"deploy": text}}
    elif field == "extra-key":
        data["extra"] = {"notes": {text: "value"}}
    elif field == "extra-nested":
        data["extra"] = {"notes": {"list": [1, {"deep": [text]}]}}
    return MemoryEntry(**data)


def _decoded_metadata(text: str) -> str:
    """Every mcData blob of ``text`` (one per comment line), joined in chunk order and decoded."""
    out = []
    for line in text.splitlines():
        chunks = sorted((int(n) if n else -1, value) for n, value in _MC_DATA.findall(line))
        if chunks:
            out.append(base64.b64decode("".join(v for _, v in chunks)).decode("utf-8"))
    return "\n".join(out)


def _store_text(folder: Path) -> str:
    raw = b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())
    text = raw.decode("utf-8")
    return text + "\n" + _decoded_metadata(text)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize(("form", "text", "secret"), SECRET_FORMS, ids=[f[0] for f in SECRET_FORMS])
def test_no_secret_reaches_the_file_from_any_field(
    tmp_path: Path, form: str, text: str, secret: str, field: str
) -> None:
    assert secret not in redact_secrets(text), f"{form}: the redactor itself misses it"
    folder = tmp_path / "store"
    provider = MakaProvider(folder / "MEMORY.md")
    for write in (provider.add, provider.propose):
        try:
            write(_entry(field, text))
        except InvalidEntryError:
            # the field cannot hold this text (an id with a secret is refused): nothing written
            assert field == "id" or "\n" in text, f"{form} in {field}: refused"
        stored = _store_text(folder) if folder.exists() else ""
        assert secret.lower() not in stored.lower(), f"{form} in {field} reached the file by {write.__name__}"


def test_an_update_redacts_every_field_too(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "store" / "MEMORY.md")
    entry = provider.add(MemoryEntry(title="Plain", body="plain body"))
    provider.update(
        entry.model_copy(
            update={
                "tags": ["deploy", "ghp_U1v5Github7Oo3abcdefghij"],
                "source": "curl -u admin:K7l1Curlpass3Ee9",
                "relations": [Relation(type="related", target="https://u:I5j9Urlpass1Cc7@h.test", resolved=False)],
            }
        )
    )
    stored = _store_text(tmp_path / "store")
    for secret in ("U1v5Github7Oo3abcdefghij", "K7l1Curlpass3Ee9", "I5j9Urlpass1Cc7"):
        assert secret.lower() not in stored.lower()
    assert "[redacted]" in stored


def test_plain_text_like_secrets_is_left_alone() -> None:
    for text in (
        "max_tokens=4096 and the token budget is 12000",
        "git push -u origin main",
        "see https://example.test/path?page=2",
        "the key is in the drawer; keys are sorted",
        "monkey=business",
    ):
        assert redact_secrets(text) == text, text


@pytest.mark.parametrize(
    ("extra", "relations"),
    [
        ({"maka": {"password": "hunter2XQZ"}}, []),
        ({"box": {"client_secret": "hunter2XQZ"}}, []),
        ({"app": {"DB_PASSWORD": ["hunter2XQZ", {"old": "hunter2XQZ"}]}}, []),
        ({}, [Relation(type="password", target="hunter2XQZ", resolved=False)]),
    ],
    ids=["maka-password-key", "other-namespace-secret-key", "nested-under-secret-key", "relation-type"],
)
def test_a_value_under_a_secret_name_is_redacted_whole(
    tmp_path: Path, extra: dict[str, object], relations: list[Relation]
) -> None:
    """A key and a value harmless alone are a secret once written as ``password=hunter2XQZ``."""
    folder = tmp_path / "store"
    MakaProvider(folder / "MEMORY.md").add(MemoryEntry(title="t", body="b", extra=extra, relations=relations))
    stored = _store_text(folder)
    assert "hunter2xqz" not in stored.lower()
    assert "[redacted]" in stored
