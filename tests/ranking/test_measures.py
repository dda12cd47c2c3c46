"""What a figure measures: a figure swapped for one that measures something else is another
attribute of the same subject, announced or not, and never links as an update."""

from __future__ import annotations

import pytest

from shared.ranking.measures import measure, same_measure
from shared.ranking.updates import probable_update
from shared.ranking.wording import Wording


@pytest.mark.parametrize(
    ("text", "value", "measured"),
    [
        ("Backups are kept for 14 days.", "14", "time"),
        ("The worker uses 2 GB of memory.", "2", "size"),
        ("Checkout p99 latency is 800ms.", "800ms", "time"),
        ("Conversion is 3.2% now.", "3.2", "share"),
        ("The plan costs $15 a month.", "15", "money"),
        ("The limit is 100 requests per minute.", "100", "rate"),
        ("The release is planned for May 20.", "20", "calendar"),
        ("The checkout service runs 3 replicas.", "3", "count:replica"),
        ("The mobile app supports iOS 15 and up.", "15", "version"),
        ("The admin dashboard runs on port 9090.", "9090", "label:port"),
        ("The pool size is 20.", "20", None),
        ("Checkout answers in 40 ms at p99.", "p99", "percentile"),
        ("Standup is at 9:30.", "9:30", "clock"),
        ("The cutover window opens at 23:45.", "23:45", "clock"),
        ("Videos are cropped to 16:9.", "16:9", None),
    ],
)
def test_a_figure_is_read_with_what_it_measures(
    text: str, value: str, measured: str | None
) -> None:
    assert measure(Wording(text), value) == measured


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The mobile app supports iOS 15 and up.", "The mobile app bundle is about 48 MB now."),
        ("The worker uses 2 GB of memory.", "The worker now runs 8 threads."),
        ("The build cache holds 20 GB.", "The build now takes 12 minutes."),
        ("The search service runs 3 pods.", "The search service now answers in 40 ms."),
        ("Checkout p99 latency is 800ms.", "Checkout conversion is now 3.2%."),
        ("The security audit happens on May 20.", "The security audit now uses 4 GB of memory."),
        ("The auth proxy runs on port 4000.", "The auth proxy runs 6 replicas now."),
        (
            "The billing service is owned by Grace.",
            "The billing service now answers in 40 ms at p99.",
        ),
    ],
)
def test_another_figure_said_to_be_so_now_is_another_attribute(older: str, newer: str) -> None:
    assert probable_update(newer, older) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The upload limit is 20 MB.", "The upload limit is 50 MB now."),
        ("The session timeout is 30 minutes.", "Session timeout is 2 hours now."),
        ("The plan costs $15 a month.", "The plan costs $20 a month now."),
        ("The worker uses 2 GB of memory.", "The worker now uses 4 GB of memory."),
        ("The data migration happens on October 30.", "The data migration was moved to April 14."),
        ("Our latency SLO is set on p95.", "The latency SLO moved to p99."),
        (
            "API rate limit for free-tier customers is 100 requests per minute.",
            "The free-tier API rate limit is 60 rpm now.",
        ),
    ],
)
def test_a_figure_of_the_same_measure_still_updates(older: str, newer: str) -> None:
    assert probable_update(newer, older) is not None


def test_counted_things_may_be_named_two_ways() -> None:
    older = Wording("The checkout service runs 3 replicas in production.")
    newer = Wording("Production checkout has been scaled to 6 pods.")
    assert same_measure(older, "3", newer, "6")


def test_a_unit_word_alone_is_a_name_that_may_change() -> None:
    """ "UTC" names a time zone; only after a figure is such a word a unit."""
    older = "The nightly report runs at midnight UTC."
    newer = "The nightly report runs at midnight CET now."
    assert probable_update(newer, older) is not None


def test_a_version_of_a_name_written_in_lower_case_is_the_same_measure() -> None:
    older = Wording("We're on Node 18 LTS.")
    newer = Wording("bumped all services to node 20 last week")
    assert same_measure(older, "18", newer, "20")
    assert same_measure(newer, "20", older, "18")
    # Not any figure after the word: one with a unit measures what its unit does.
    assert not same_measure(Wording("The node image is 48 MB."), "48", newer, "20")
