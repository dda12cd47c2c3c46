"""Tokenisation: identifiers stay whole and findable, case-insensitively, with their parts."""

from __future__ import annotations

import pytest

from shared.lexical import terms
from shared.lexical.segments import PASSAGE_TERMS, passage_counts
from shared.model.tokens import names, shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("error E1042 again", {"e1042"}),
        ("see snake_case_name", {"snake_case_name", "snake", "case", "name"}),
        ("call a.b_c now", {"a.b_c"}),
        ("open src/app/main.py.", {"src/app/main.py", "src", "app", "main", "py"}),
        ("needs Python 3.12, not 3.11", {"3.12", "3.11", "python"}),
        ("run it with --local", {"--local", "local"}),
        ("the HttpClient class", {"httpclient", "http", "client"}),
        ("ticket JIRA-1234 is open", {"jira-1234", "jira", "1234"}),
        ("config at settings.DATABASE_URL", {"settings.database_url", "database_url"}),
        ("v2.3.0-rc1 shipped", {"v2.3.0-rc1"}),
    ],
)
def test_identifiers_are_kept_whole_and_split(text: str, expected: set[str]) -> None:
    assert expected <= set(terms(text))


def test_case_does_not_matter() -> None:
    assert set(terms("E1042 HttpClient")) == set(terms("e1042 httpclient")) | {"http", "client"}


def test_stop_words_are_dropped_but_never_an_identifier() -> None:
    found = list(terms("what is the fix for the IS-12 issue"))
    assert "the" not in found and "what" not in found and "is" not in found
    assert "is-12" in found and "fix" in found


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("embedding", "embeddings"),
        ("changed", "change"),
        ("caches", "cache"),
        ("running", "runs"),
        ("stories", "story"),
        ("painting", "paints"),
    ],
)
def test_inflections_of_a_plain_word_are_one_term(one: str, other: str) -> None:
    assert list(terms(one)) == list(terms(other))


def test_identifiers_and_short_words_are_never_stemmed() -> None:
    # "ios" must not also be "io"; nor may a CamelCase word or a snake_case name's parts lose
    # their endings.
    assert "io" not in set(terms("the iOS build of app_ios"))
    assert set(terms("HttpClients")) == {"httpclients", "http", "clients"}
    assert set(terms("cached_pages")) == {"cached_pages", "cached", "pages"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A plain word, whatever its first letter's case: its stem, or itself when short.
        ("Deploying deploys api Api", ["deploy", "deploy", "api", "api"]),
        # All capitals: no hump, stemmed as the word it is lower-cased to.
        ("HTTP URLS", ["http", "url"]),
        # A capital inside: whole and humps, never stemmed.
        ("HttpClient iOS", ["httpclient", "http", "client", "ios", "os"]),
        # Not ASCII: lower-cased whole, a word's letters but no stem of its own.
        ("Cafés naïve", ["cafés", "naïve"]),
        # One letter, and stop words in either case: dropped.
        ("x The WHAT", ["x"]),
    ],
)
def test_each_kind_of_word_gives_its_own_terms(text: str, expected: list[str]) -> None:
    assert list(terms(text)) == expected


def test_shown_names_the_word_a_stem_came_from() -> None:
    words = shown("Which cities use embeddings? JIRA-1234")
    assert words["citi"] == "cities" and words["embed"] == "embeddings"
    assert words["jira-1234"] == "jira-1234" and words["1234"] == "1234"


def test_punctuation_around_words_is_not_part_of_them() -> None:
    found = set(terms('("quoted"), [bracketed]; done.'))
    assert found == set(terms("quoted bracketed done")) == {"quot", "bracket", "done"}
    assert not any(ch in term for term in found for ch in '()[];."')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("E1042", {"e1042"}),
        ("what broke PAY-4821?", {"pay-4821"}),
        ("NGINX_PROXY_TIMEOUT_Q2000", {"nginx_proxy_timeout_q2000"}),
        ("run it with --drain-cache", {"--drain-cache"}),
        ("settings.DATABASE_URL", {"settings.database_url"}),
        ("open src/app/main.py", {"src/app/main.py"}),
        ("bump to 2.14.3", {"2.14.3"}),
        ("node.js and socket.io", {"node.js", "socket.io"}),
        # Quantities, ordinals, years, hyphenated and CamelCase words, abbreviations: prose.
        ("in 2024 we used 200MB, 5K and 3.12", set()),
        ("the 18th of May, a real-time follow-up", set()),
        ("JavaScript, e.g. TypeScript", set()),
        ("3/5 of the 8-hour shift", set()),
    ],
)
def test_names_are_identifiers_that_pick_one_thing_not_quantities_or_words(
    text: str, expected: set[str]
) -> None:
    assert names(text) == expected


def test_a_name_is_among_the_terms_it_is_indexed_as() -> None:
    text = "set NGINX_PROXY_TIMEOUT_Q2000 and ship PAY-4821 with --drain-cache"
    assert names(text) <= set(terms(text))


def test_a_long_text_is_indexed_as_passages_of_64_terms_in_order() -> None:
    text = " ".join(f"word{i}" for i in range(150))
    passages = passage_counts(text)
    assert [sum(p.values()) for p in passages] == [PASSAGE_TERMS, PASSAGE_TERMS, 150 - 128]
    assert "word0" in passages[0] and "word149" in passages[2]
    assert passage_counts("") == [{}]
