from __future__ import annotations

import pytest

from shared.model import Hit, Memory
from shared.ranking import already_known, word_overlap


def hit(content: str, similarity: float, memory_id: str = "m") -> Hit:
    memory = Memory(
        id=memory_id, tenant="t", content=content, created_at="2026-01-01T00:00:00.000Z"
    )
    return Hit(memory=memory, similarity=similarity)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("deploy with helm", "Deploy with Helm!", 1.0),
        ("a b c d", "a b x y", 2 / 6),
        ("", "anything", 0.0),
        ("배포는 헬름으로 한다", "배포는 헬름으로 한다", 1.0),
        ("snake_case names", "snake case names", 1.0),
    ],
)
def test_word_overlap_is_jaccard_over_unicode_words(
    first: str, second: str, expected: float
) -> None:
    assert word_overlap(first, second) == pytest.approx(expected)


def test_already_known_needs_both_cosine_above_threshold_and_shared_words() -> None:
    text = "the api listens on port 3000 behind a clusterip service"
    assert already_known(text, [hit(text, 0.95)]) is not None
    assert already_known(text, [hit(text, 0.92)]) is None  # strictly above 0.92
    assert already_known(text, [hit("completely different words here", 0.99)]) is None


def test_already_known_compares_with_the_most_similar_hit_not_the_first() -> None:
    text = "use pnpm not npm in this repository"
    hits = [hit("unrelated", 0.5, "first"), hit(text, 0.97, "best")]
    found = already_known(text, hits)
    assert found is not None and found.memory.id == "best"


def test_nothing_visible_means_not_known() -> None:
    assert already_known("x", []) is None


@pytest.mark.parametrize(
    ("stored", "new"),
    [
        ("The API listens on port 8080.", "The API listens on port 8000."),
        ("Request timeout is 8 s.", "Request timeout is 5 s."),
        ("We run Python 3.12 in CI.", "We run Python 3.13 in CI."),
    ],
)
def test_a_changed_number_is_an_update_never_a_duplicate(stored: str, new: str) -> None:
    assert already_known(new, [hit(stored, 0.97)]) is None


def test_same_numbers_still_merge() -> None:
    text = "The API listens on port 8080."
    assert already_known(text + " ", [hit(text, 0.99)]) is not None


@pytest.mark.parametrize(
    ("stored", "new"),
    [
        (
            "Run the exporter migration with --run-drain-cache before deploying.",
            "Run the exporter migration with --run-drain-all before deploying.",
        ),
        ("Settings live in config/app_settings.yaml.", "Settings live in config/app_env.yaml."),
        ("Call billing.sync_invoices nightly.", "Call billing.sync_refunds nightly."),
    ],
)
def test_a_changed_identifier_is_never_a_duplicate(stored: str, new: str) -> None:
    """The keyword probe lost two planted flags this way: same words, another identifier."""
    assert already_known(new, [hit(stored, 0.97)]) is None


def test_the_same_identifiers_still_merge() -> None:
    text = "Run the exporter migration with --run-drain-cache before deploying."
    assert already_known(text.replace("Run", "run"), [hit(text, 0.99)]) is not None


@pytest.mark.parametrize("text", ["😀😀😀😀", "€€€ €€", "!!! ???", "----", "The Port is 8080."])
def test_the_same_text_sent_again_is_always_known_even_without_words(text: str) -> None:
    assert already_known(text, [hit(text, 0.999)]) is not None
    assert already_known(f"  {text.upper()} ", [hit(text, 0.999)]) is not None


def test_texts_without_words_that_differ_are_not_merged() -> None:
    assert already_known("😀😀😀", [hit("😢😢😢", 0.99)]) is None
