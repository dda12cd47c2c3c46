"""A fact told the other way round: the newer leads with its value and names what the older was
about after it."""

from __future__ import annotations

import pytest

from shared.ranking.turned_around import turned_around
from shared.ranking.updates import UpdateCheck, probable_update
from shared.ranking.wording import Wording


@pytest.mark.parametrize(
    ("older", "newer", "old", "new"),
    [
        ("The frontend is built with webpack.", "Vite builds the frontend.", "webpack", "vite"),
        ("The web app is deployed to Heroku.", "Fly.io hosts the web app.", "heroku", "fly.io"),
        ("Logs are shipped with Fluentd.", "Vector ships the logs.", "fluentd", "vector"),
        ("The team lead for mobile is Aiko.", "Bruno leads the mobile team.", "aiko", "bruno"),
        (
            "The analytics warehouse is on Redshift.",
            "Snowflake hosts our analytics warehouse.",
            "redshift",
            "snowflak",
        ),
        # The subject said again as the first word of a longer name.
        ("Our CI runs on CircleCI.", "GitHub Actions runs our CI pipelines.", "circleci", "github"),
    ],
)
def test_a_fact_turned_round_updates_what_it_names_last(
    older: str, newer: str, old: str, new: str
) -> None:
    found = probable_update(newer, older)
    assert found is not None
    assert old in found.old and new in found.new


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # Another subject in the same pattern: what the older is about is not said at all.
        ("Anna was born in Oslo.", "Omar was born in Oslo."),
        ("Vite builds the frontend.", "Parcel builds the admin site."),
        # What the newer says anew stands after the subject too: another moment, not a value.
        (
            "Deploys go through GitLab CI.",
            "Last Tuesday we deployed by hand because GitLab was down.",
        ),
        # More than a slot's words gained: another attribute of the subject.
        ("The frontend is built with webpack.", "Storybook and Chromatic test the frontend."),
        # A word after the subject with no determiner before it: the subject is a verb there
        # and the word its object, a value of the newer's own.
        ("I use pnpm in the frontend repo.", "the docs site repo uses yarn"),
        # One identifier for another names another thing.
        ("Checkout fails with E1042.", "E1024 breaks checkout."),
    ],
)
def test_a_fact_not_turned_round_from_the_older_is_not_read_so(older: str, newer: str) -> None:
    assert turned_around(Wording(newer), Wording(older)) is None
    assert probable_update(newer, older) is None


def test_two_speakers_turns_are_not_read_turned_round() -> None:
    """A labelled turn opens with who speaks: the other speaker's name said later in a reply is
    no subject kept."""
    check = UpdateCheck("Gina: Remember Jon, just do it!")
    assert check.of("Jon: Thanks for having my back.") is None
