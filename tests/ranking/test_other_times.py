"""Which facts speak of another time than now: before, maybe one day, or once."""

from __future__ import annotations

import pytest

from shared.ranking.other_times import (
    of_another_time,
    opens_in_another_time,
    speaks_of_another_time,
)


@pytest.mark.parametrize(
    ("text", "another_time"),
    [
        ("Before Mei, Carlos was QA lead for two years.", True),
        ("Back in 2021 the help desk number was 1-800-555-0199.", True),
        ("We used to deploy with Jenkins.", True),
        ("We might look at upgrading prod to Postgres 16 next year.", True),
        ("Should we move the release train to Tuesdays?", True),
        ("Upgrading the customer portal to React 18 is on the roadmap for Q3.", True),
        ("thinking about going to 3.13 sometime next quarter", True),
        ("This week only, design review is in Cedar since Oak is being painted.", True),
        ("Last Monday's sprint planning got pushed to Tuesday because of the holiday.", True),
        # A change reported in the past tense is a change, said of now.
        ("We moved everyone to Microsoft Teams last week.", False),
        ("Mobile goes out weekly.", False),
        ("The board meeting was brought forward to the 9th.", False),
        ("Standups start before ten.", False),  # "before" inside the sentence is a time
        # What is so now, said beside what was so or what may be.
        ("We used to deploy with Jenkins; it's GitHub Actions now.", False),
        ("The standup is at 10 now, previously 9.", False),
        ("Originally planned for May, the launch is currently set for June 3.", False),
        # A value a change replaced, named inside the sentence; a change said since.
        ("The API listens on port 9090 (previously 8080).", False),
        ("Before the migration we ran MySQL; Postgres since March.", False),
        ("Considering the load, the pool is 50 connections per pod.", False),
    ],
)
def test_a_fact_said_of_before_maybe_or_once_is_of_another_time(
    text: str, another_time: bool
) -> None:
    assert speaks_of_another_time(text) is another_time


def test_a_plan_after_a_plan_is_read_as_of_the_same_time() -> None:
    older = "We might move the docs site to Vercel."
    assert not of_another_time("We might move the docs site to Netlify instead.", older)
    assert of_another_time(older, "The docs site is hosted on Netlify.")


@pytest.mark.parametrize(
    ("sentence", "another_time"),
    [
        ("Back in 2021, the auth proxy ran on port 8443 in staging.", True),
        ("Maybe next quarter the cache expires after 30 days.", True),
        ("We might move the nightly job to 3am.", True),
        # Of a longer text, a sentence is read by its opening: its clauses say "might" of
        # themselves.
        ("I scheduled the nightly job at 2:00 AM, but errors might occur during it.", False),
        ("The cache expires after 30 days, which is maybe too long.", False),
    ],
)
def test_a_sentence_of_a_longer_text_is_of_another_time_by_its_opening(
    sentence: str, another_time: bool
) -> None:
    assert opens_in_another_time(sentence) is another_time
