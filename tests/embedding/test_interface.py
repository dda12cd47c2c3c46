"""validated_vector: the check every provider's answer passes before it can be stored."""

from __future__ import annotations

import pytest

from shared.embedding import validated_vector
from shared.errors import EmbeddingError


def test_numbers_of_the_right_width_pass_as_floats() -> None:
    assert validated_vector([1, 0.5, -2], model="m", dim=3) == [1.0, 0.5, -2.0]
    assert all(type(x) is float for x in validated_vector([1, 2, 3], model="m", dim=3))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, "response from m had no embedding in it"),
        ({"embedding": [1.0]}, "response from m had no embedding in it"),
        ([], "response from m had no embedding in it"),
        ([1.0, "2", 3.0], "had no embedding in it"),
        ([1.0, True, 3.0], "had no embedding in it"),
        ([1.0, None, 3.0], "had no embedding in it"),
        ([1.0, float("nan"), 3.0], "non-finite"),
        ([1.0, float("inf"), 3.0], "non-finite"),
        ([0.0, 0, -0.0], "all-zero embedding"),
    ],
)
def test_unusable_answers_are_refused(raw: object, expected: str) -> None:
    with pytest.raises(EmbeddingError, match=expected):
        validated_vector(raw, model="m", dim=3)


def test_a_width_mismatch_names_model_both_widths_and_the_fix() -> None:
    with pytest.raises(EmbeddingError) as caught:
        validated_vector([0.1] * 4, model="titan", dim=3)
    message = str(caught.value)
    assert "titan returned a 4-dimension embedding but EMBEDDING_DIM is 3" in message
    assert "cannot be changed after it is created" in message
