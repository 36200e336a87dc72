from __future__ import annotations

import json
import unicodedata
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from memcore import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, Status


def test_datetimes_become_utc_and_naive_ones_are_refused() -> None:
    cet = timezone(timedelta(hours=1))
    entry = MemoryEntry(created_at=datetime(2026, 4, 19, 12, 0, tzinfo=cet), updated_at="2026-04-19T10:00:00Z")
    assert entry.created_at == datetime(2026, 4, 19, 11, 0, tzinfo=UTC)
    assert entry.created_at.tzinfo is UTC
    assert entry.updated_at == datetime(2026, 4, 19, 10, 0, tzinfo=UTC)
    with pytest.raises(ValidationError, match="naive datetime"):
        MemoryEntry(created_at=datetime(2026, 4, 19, 12, 0))


def test_date_only_becomes_midnight_utc() -> None:
    entry = MemoryEntry(created_at=date(2026, 4, 19), date_only=True)
    assert entry.created_at == datetime(2026, 4, 19, tzinfo=UTC)
    assert entry.date_only is True


def test_ids_titles_tags_are_nfc() -> None:
    nfd = unicodedata.normalize("NFD", "café")
    entry = MemoryEntry(id=nfd, title=nfd, tags=[nfd], parent=nfd)
    assert entry.id == entry.title == entry.tags[0] == entry.parent == "café"
    assert len(entry.id) == 4
    assert Relation(type="related", target=nfd).target == "café"


@pytest.mark.parametrize("bad", ["", "a\x00b"])
def test_bad_ids_are_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        MemoryEntry(id=bad)


def test_extra_must_be_json() -> None:
    entry = MemoryEntry(extra={"box": {"team": "core", "links": [{"url": "https://x", "label": None}]}})
    assert json.loads(entry.model_dump_json())["extra"]["box"]["team"] == "core"
    with pytest.raises(ValidationError):
        MemoryEntry(extra={"box": {"when": datetime.now(UTC)}})  # type: ignore[dict-item]
    with pytest.raises(ValidationError):
        MemoryEntry(extra={"box": {"nan": float("nan")}})


def test_content_dict_ignores_version_and_hash_is_stable() -> None:
    a = MemoryEntry(id="x", title="t", version="v1")
    b = MemoryEntry(id="x", title="t", version="v2")
    assert "version" not in a.content_dict()
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() != MemoryEntry(id="x", title="u").content_hash()


def test_confidence_range() -> None:
    assert MemoryEntry(confidence=0.7).confidence == 0.7
    with pytest.raises(ValidationError):
        MemoryEntry(confidence=1.5)


def test_query_filters() -> None:
    entries = [
        MemoryEntry(
            id="a",
            kind=Kind.FACT,
            title="Tea",
            body="likes green tea",
            tags=["food"],
            created_at="2026-01-05T00:00:00Z",
        ),
        MemoryEntry(
            id="b",
            kind=Kind.OBSERVATION,
            title="Code",
            body="prefers small PRs",
            tags=["work", "style"],
            status=Status.ARCHIVED,
            created_at="2026-02-05T00:00:00Z",
        ),
        MemoryEntry(id="c", kind=Kind.OBSERVATION, title="", body="Green light", tags=["work"], parent="a"),
    ]
    ids = lambda q: [e.id for e in q.apply(entries)]  # noqa: E731
    assert ids(Query(text="GREEN")) == ["a", "c"]
    assert ids(Query(text="green tea")) == ["a"]
    assert ids(Query(kinds=[Kind.OBSERVATION])) == ["b", "c"]
    assert ids(Query(statuses=[Status.ACTIVE])) == ["a", "c"]
    assert ids(Query(tags_any=["style", "food"])) == ["a", "b"]
    assert ids(Query(tags_all=["work", "style"])) == ["b"]
    assert ids(Query(parent="a")) == ["c"]
    assert ids(Query(created_after="2026-02-01")) == ["b"]
    assert ids(Query(created_before="2026-02-01")) == ["a"]
    assert ids(Query(limit=1)) == ["a"]
    assert ids(Query(ids=["c", "a"])) == ["a", "c"]


def test_diagnostic_str_names_file_and_line() -> None:
    d = Diagnostic(path="observations/2026-04.md", line=12, code="wb.missing-date", message="no date")
    assert str(d) == "observations/2026-04.md:12: error wb.missing-date: no date"
    assert d.severity is Severity.ERROR


def test_schema_is_json_schema() -> None:
    schema = MemoryEntry.model_json_schema()
    assert schema["type"] == "object"
    assert {"id", "kind", "title", "body", "relations", "extra"} <= set(schema["properties"])


def test_text_matches_stemmed_words_and_prefixes_like_the_index() -> None:
    from memcore.models import text_terms

    assert text_terms("Café-Übersicht_v2, DEPLOYS!") == ["cafe", "ubersicht", "v2", "deploys"]
    entries = [
        MemoryEntry(id="a", body="We redeploy nightly"),
        MemoryEntry(id="b", title="Deploys on Friday"),
        MemoryEntry(id="c", tags=["snake_case"]),
    ]
    assert [e.id for e in Query(text="deploy").apply(entries)] == ["b"]
    assert [e.id for e in Query(text="case").apply(entries)] == ["c"]
    assert [e.id for e in Query(text="FRI* dep*").apply(entries)] == ["b"]
    assert [e.id for e in Query(text="FRI dep").apply(entries)] == []  # whole words without *
    assert [e.id for e in Query(text="?!").apply(entries)] == []  # no searchable term: nothing
    assert [e.id for e in Query(text="  ").apply(entries)] == ["a", "b", "c"]  # no text: no filter


@pytest.mark.parametrize("field", ["title", "body", "source", "scope", "id", "parent"])
def test_lone_surrogates_are_refused_with_their_position(field: str) -> None:
    """No UTF-8 file can hold a lone surrogate: the model refuses it before any writer sees it."""
    with pytest.raises(ValidationError, match=r"lone surrogate U\+DC80 at character 3"):
        MemoryEntry(**{field: "abc\udc80"})
    with pytest.raises(ValidationError, match=r"lone surrogate U\+D800 at character 0"):
        MemoryEntry(tags=["ok", "\ud800x"])
    with pytest.raises(ValidationError, match="lone surrogate"):
        Relation(type="related", target="x\udfff")
    assert MemoryEntry(title="😀 é", body="\U0010ffff").title == "😀 é"  # paired / astral text is fine


def test_lone_surrogates_in_extra_are_refused() -> None:
    for extra in ({"memcore": {"k": "x\ud800"}}, {"memcore": {"k\udc80": 1}}, {"box": {"list": ["ok", "\udfff"]}}):
        with pytest.raises(ValidationError, match="extra holds a lone surrogate"):
            MemoryEntry(extra=extra)
    assert MemoryEntry(extra={"box": {"k": "é 😀"}}).extra == {"box": {"k": "é 😀"}}


def test_json_copy_is_a_deep_copy() -> None:
    """Plain JSON copied by hand, anything else (a tuple, ruamel's CommentedMap) by deepcopy."""
    from ruamel.yaml.comments import CommentedMap

    from memcore.models import json_copy

    inner = CommentedMap([("k", ["v"])])
    value = {"a": {"b": [1, 2.5, None, True, "s", {"c": []}]}, "t": (1, [2]), "r": inner}
    copied = json_copy(value)
    assert copied == value
    assert copied["a"] is not value["a"] and copied["a"]["b"] is not value["a"]["b"]
    assert copied["a"]["b"][5] is not value["a"]["b"][5]
    assert copied["t"][1] is not value["t"][1]  # a tuple goes through deepcopy
    assert copied["r"] is not inner and copied["r"]["k"] is not inner["k"]
    copied["a"]["b"].append("x")
    assert value["a"]["b"][-1] == {"c": []}


def _holds_itself() -> list[object]:
    loop: list[object] = [1]
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"a": 1.5, "b": ["x", float("nan")]}, "the data.b[1] is nan, which is not a JSON number"),
        ({"first": float("-inf"), "second": float("inf")}, "the data.first is -inf"),
        ({"k\ud800": 1}, "the data key 'k\\ud800' has a lone surrogate (U+D800)"),
        ({"tags": ["ok", "é\udfff"]}, "the data.tags[1] has a lone surrogate (U+DFFF)"),
        (_holds_itself(), "the data[1] contains itself (a recursive alias)"),
    ],
    ids=["nan", "first-infinity-found", "surrogate-key", "surrogate-value", "cycle"],
)
def test_unholdable_names_the_first_place_holding_what_no_entry_field_can_hold(value: object, said: str) -> None:
    from memcore.models import unholdable

    assert (unholdable(value, "the data") or "").startswith(said)


def test_unholdable_accepts_json_text_dates_shared_containers_and_deep_values() -> None:
    from memcore.models import unholdable

    shared = [1, 2]
    deep: list[object] = []
    for _ in range(50_000):
        deep = [deep]
    value = {"é": "Zürich 🚀", "when": date(2024, 1, 2), "a": shared, "b": shared, "deep": deep, "n": None}
    assert unholdable(value) is None
