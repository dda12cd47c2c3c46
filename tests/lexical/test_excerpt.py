"""Which part of a long memory recall shows (pure text arithmetic)."""

from __future__ import annotations

from shared.lexical import terms
from shared.lexical.excerpt import EXCERPT_CHARS, LONG_MEMORY_CHARS, excerpt

FILLER = "The deploy pipeline builds images and pushes them to the registry. "


def test_a_short_memory_is_shown_whole() -> None:
    assert excerpt("x " * (LONG_MEMORY_CHARS // 2), {"x"}) is None


def test_the_passage_holds_the_identifier_wherever_it_stands() -> None:
    for position in (0.1, 0.5, 1.0):
        cut = int(len(FILLER) * 300 * position)
        text = (FILLER * 300)[:cut] + " set NGINX_PROXY_TIMEOUT_Q2000 to 75s. " + FILLER * 20
        part = excerpt(text, set(terms("NGINX_PROXY_TIMEOUT_Q2000")))
        assert part is not None
        assert "NGINX_PROXY_TIMEOUT_Q2000" in part.of(text)
        assert part.end - part.start <= EXCERPT_CHARS


def test_a_name_outweighs_a_common_word_found_elsewhere() -> None:
    text = FILLER * 40 + "Error E1042 means the cache is stale. " + FILLER * 40
    part = excerpt(text, set(terms("E1042 pipeline")))
    assert part is not None and "E1042" in part.of(text)


def test_a_memory_found_by_meaning_alone_shows_its_beginning() -> None:
    text = "Postmortem: the checkout outage. " + FILLER * 60
    part = excerpt(text, set())
    assert part is not None and part.start == 0
    assert part.of(text).startswith("Postmortem: the checkout outage.")
    assert part.of(text).endswith("…")


def test_an_excerpt_is_cut_at_word_boundaries_and_marked() -> None:
    text = FILLER * 60 + "the E1042 code" + FILLER * 60
    part = excerpt(text, {"e1042"})
    assert part is not None
    shown = part.of(text)
    assert shown.startswith("…") and shown.endswith("…")
    assert text[part.start - 1] == " " and text[part.end] == " "


def test_the_pieces_read_give_the_texts_own_spans_of_the_terms_asked() -> None:
    from shared.lexical.excerpt import _hits
    from shared.model.tokens import term_spans

    text = (
        "Don\u2019t restart: HttpClient.getURLs() in src/app/main.py threw E1042 twice -- "
        "see settings.DATABASE_URL, --run-drain-cache, v2.3.1 and the user\u2019s notes (a_b_c). "
        "Using it, the flying workers kept dying; the studies say so. "
    ) * 3
    spans = list(term_spans(text))
    assert _hits(text, frozenset(term for _, _, term in spans)) == spans
    # Terms a stem changed the letters of ("using" → use, "flying" → fli, "dying" → die,
    # "studies" → studi), parts inside an identifier, and a flag.
    some = frozenset({"use", "fli", "die", "studi", "geturls", "database_url", "drain", "e1042"})
    assert {term for _, _, term in _hits(text, some)} == some
    assert _hits(text, some) == [span for span in spans if span[2] in some]
    assert _hits(text, frozenset()) == []


def test_a_text_whose_lower_case_is_longer_is_read_whole() -> None:
    from shared.lexical.excerpt import _hits
    from shared.model.tokens import term_spans

    # "İ" lower-cases to two characters, so positions in the lowered text are not the text's.
    text = "İstanbul office: the E1042 alarm fired at night. " * 40
    wanted = frozenset({"e1042", "alarm"})
    assert _hits(text, wanted) == [s for s in term_spans(text) if s[2] in wanted]
    part = excerpt(text, wanted)
    assert part is not None and "E1042 alarm" in part.of(text)


def test_an_excerpt_asked_again_for_the_same_words_is_not_worked_out_again() -> None:
    from shared.lexical.excerpt import _window

    text = FILLER * 40 + "Error E1042 means the cache is stale. " + FILLER * 40
    first = excerpt(text, ["e1042", "stale"])
    kept_before = _window.cache_info().hits
    assert excerpt(text, ("stale", "e1042")) == first
    assert _window.cache_info().hits == kept_before + 1


def test_the_window_holding_most_distinct_terms_wins_and_the_first_of_equals() -> None:
    # A word repeated all over counts once per window: the later window holding both terms
    # wins over the early one holding the word twenty times.
    crowded = "the cache " * 20
    text = crowded + FILLER * 30 + "cache misses in the queue worker. " + FILLER * 30
    part = excerpt(text, {"cach", "queue"})
    assert part is not None and "the queue worker" in part.of(text)
    # Two windows holding both: the first is shown.
    first = "cache for the queue one. "
    second = "cache for the queue two. "
    text = FILLER * 30 + first + FILLER * 30 + second + FILLER * 30
    part = excerpt(text, {"cach", "queue"})
    assert part is not None and "queue one" in part.of(text) and "queue two" not in part.of(text)
