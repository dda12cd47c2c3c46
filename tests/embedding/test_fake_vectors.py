"""The fake servers' vectors behave as tests/fakes/_vectors.py documents, at every width used."""

from __future__ import annotations

import pytest

from tests.fakes._vectors import cosine, text_vector

BASE = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


@pytest.mark.parametrize("dim", [256, 1024, 1536])
def test_similarity_tracks_shared_words(dim: int) -> None:
    def sim(other: str) -> float:
        return cosine(text_vector(BASE, dim), text_vector(other, dim))

    assert sim("Juliet, India; HOTEL golf foxtrot echo delta charlie bravo alpha") == (
        pytest.approx(1.0)
    )
    assert sim("alpha bravo charlie delta echo foxtrot golf hotel india kilo") == pytest.approx(
        0.9, abs=0.03
    )
    assert sim("alpha bravo charlie delta echo lima mike november oscar papa") == pytest.approx(
        0.5, abs=0.06
    )
    assert abs(sim("quebec romeo sierra tango uniform victor whiskey xray yankee zulu")) < 0.15


def test_vectors_are_deterministic_unit_length_and_never_zero() -> None:
    assert text_vector("same text", 1024) == text_vector("same text", 1024)
    for text in ("", "a", "!!"):
        vector = text_vector(text, 256)
        assert cosine(vector, vector) == pytest.approx(1.0)
