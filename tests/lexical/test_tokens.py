"""Tokenisation: identifiers stay whole and findable, case-insensitively, with their parts."""

from __future__ import annotations

import pytest

from shared.lexical import terms
from shared.lexical.tokens import shown


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


def test_shown_names_the_word_a_stem_came_from() -> None:
    words = shown("Which cities use embeddings? JIRA-1234")
    assert words["citi"] == "cities" and words["embed"] == "embeddings"
    assert words["jira-1234"] == "jira-1234" and words["1234"] == "1234"


def test_punctuation_around_words_is_not_part_of_them() -> None:
    found = set(terms('("quoted"), [bracketed]; done.'))
    assert found == set(terms("quoted bracketed done")) == {"quot", "bracket", "done"}
    assert not any(ch in term for term in found for ch in '()[];."')
