"""possible_revision: the hint that a new fact may update a visible memory."""

from __future__ import annotations

import pytest

from shared.model import Hit, Memory
from shared.ranking.dedup import REVISION_SIMILARITY, possible_revision

PORT_8080 = "The API listens on port 8080 behind the gateway."
PORT_8443 = "The API listens on port 8443 behind the gateway."


def hit(content: str, similarity: float, memory_id: str = "m") -> Hit:
    memory = Memory(
        id=memory_id, tenant="t", content=content, created_at="2026-01-01T00:00:00.000Z"
    )
    return Hit(memory=memory, similarity=similarity)


@pytest.mark.parametrize(
    ("new", "stored", "similarity", "hinted"),
    [
        (PORT_8443, PORT_8080, 0.9, True),
        ("Request timeout is 5 s for uploads.", "Request timeout is 8 s for uploads.", 0.8, True),
        ("Run the suite with --drain-all.", "Run the suite with --drain-cache.", 0.85, True),
        (PORT_8443, PORT_8080, REVISION_SIMILARITY, True),  # the threshold itself qualifies
        # The same numbers: a rewording, not a revision.
        ("Our API listens on port 8080, behind the gateway.", PORT_8080, 0.9, False),
        # The same text (up to case and spacing) is a resend.
        (PORT_8080, PORT_8080, 0.99, False),
        ("the API listens on  port 8080 behind the gateway.", PORT_8080, 0.99, False),
        (PORT_8443, PORT_8080, REVISION_SIMILARITY - 0.01, False),
        # Close in meaning, but hardly a word in common.
        ("Gateway traffic now reaches 8443.", "Deploys run nightly at 02:00 UTC.", 0.9, False),
    ],
)
def test_a_hint_needs_close_wording_and_different_numbers(
    new: str, stored: str, similarity: float, hinted: bool
) -> None:
    found = possible_revision(new, [hit(stored, similarity)])
    assert (found is not None) is hinted
    if found is not None:
        assert found.memory.content == stored


def test_the_most_similar_qualifying_hit_is_chosen() -> None:
    hits = [
        hit("The API listens on port 9000 behind the gateway.", 0.80, "lower"),
        hit(PORT_8443, 0.99, "same-text"),  # more similar, but the text itself
        hit("Our API listens on port 8443, behind the gateway.", 0.97, "same-numbers"),
        hit(PORT_8080, 0.90, "best"),
        hit("The API listens on port 7000 behind the gateway.", 0.60, "too-far"),
    ]
    found = possible_revision(PORT_8443, hits)
    assert found is not None and found.memory.id == "best"


def test_nothing_visible_means_no_hint() -> None:
    assert possible_revision(PORT_8443, []) is None
