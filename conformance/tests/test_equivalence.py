"""``assert_equivalent``: passes when a fast path agrees with its reference, names the first input that does not."""

from __future__ import annotations

import pytest

from memcore_conformance import assert_equivalent


def _reference_int(text: str) -> int:
    return int(text.strip())


def test_equal_results_pass_and_count_the_inputs() -> None:
    assert assert_equivalent(lambda s: int(s), _reference_int, ["1", "22", " 3 "]) == 3


def test_inputs_may_be_a_generator() -> None:
    assert assert_equivalent(str.upper, lambda s: s.upper(), (c for c in "abc")) == 3


def test_the_first_differing_result_is_reported_with_its_input() -> None:
    def fast(text: str) -> int:
        return 0 if text == "bad" else _reference_int(text)

    with pytest.raises(AssertionError) as caught:
        assert_equivalent(fast, _reference_int, ["1", "7", "bad", "also-bad"])
    message = str(caught.value)
    assert "input #2 'bad'" in message
    assert "fast:      returned int 0" in message
    assert "reference: raised ValueError: invalid literal for int() with base 10: 'bad'" in message
    assert "also-bad" not in message


def test_same_exception_type_and_message_is_equivalent() -> None:
    assert assert_equivalent(lambda s: int(s), _reference_int, ["x", "1"]) == 2


def test_a_different_exception_message_differs() -> None:
    def fast(text: str) -> int:
        raise ValueError("not a number")

    with pytest.raises(AssertionError, match=r"input #0 'x'.*\n  fast:      raised ValueError: not a number"):
        assert_equivalent(fast, _reference_int, ["x"])


def test_a_different_exception_type_differs() -> None:
    def fast(text: str) -> int:
        raise TypeError("invalid literal for int() with base 10: 'x'")

    with pytest.raises(AssertionError, match="raised TypeError"):
        assert_equivalent(fast, _reference_int, ["x"])


def test_equal_values_of_different_types_differ() -> None:
    with pytest.raises(AssertionError, match=r"fast:      returned float 1\.0\n  reference: returned int 1"):
        assert_equivalent(lambda s: float(s), _reference_int, ["1"])


def test_no_inputs_is_a_failure() -> None:
    with pytest.raises(AssertionError, match="no inputs"):
        assert_equivalent(str.upper, str.upper, [])


def test_long_inputs_are_shortened_in_the_message() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_equivalent(lambda s: s, lambda s: s + "!", ["x" * 10_000])
    assert len(str(caught.value)) < 1_200
    assert "chars)" in str(caught.value)
