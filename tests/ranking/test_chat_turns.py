"""Chat turns as the probable-update rules read them: a speaker label is who spoke, not what
the turn is about, and a question that proposes a change says nothing changed."""

from __future__ import annotations

import pytest

from shared.ranking.chat_turns import speaker, unlabelled
from shared.ranking.updates import probable_update
from shared.ranking.wording import Wording

RECOMMENDATIONS = (
    "user: Load testing with k6 shows the recommendations endpoint has an average response time "
    "of 480ms at 200 virtual users. The database query for similar items seems to be the "
    "bottleneck."
)
SEARCH = (
    "user: The search endpoint has an average response time of 220ms at 200 virtual users, so "
    "it's fine for now. Should I still add it to the k6 test suite?"
)
KAFKA = (
    "user: The Kafka cluster is using around 3.2TB of disk across the brokers and we keep "
    "getting low-disk alerts. Retention is 14 days on every topic. How can I find the topics "
    "worth shortening?"
)
ZOOKEEPER = (
    "user: The ZooKeeper nodes next to the Kafka cluster use about 20GB of disk each. Is it time "
    "to migrate to KRaft mode so we can drop them?"
)


@pytest.mark.parametrize(
    ("text", "said_by", "said"),
    [
        ("user: The API listens on 8080.", "user", "The API listens on 8080."),
        ("Caroline: I went to the support group.", "caroline", "I went to the support group."),
        ("The API listens on 8080.", None, "The API listens on 8080."),
        ("Note that the API listens on 8080: see the runbook.", None, None),
        # A heading that says a change is read as the mark it is, not as who spoke.
        ("Correction: the timeout is 2 seconds.", None, None),
        ("Update: invoices go to billing@example.com.", None, None),
    ],
)
def test_a_speaker_label_opens_a_turn(text: str, said_by: str | None, said: str | None) -> None:
    assert speaker(text) == said_by
    assert unlabelled(text) == (said if said is not None else text)


def test_a_label_both_turns_share_is_no_word_they_share() -> None:
    # The same speaker's label would be the one subject both name first.
    assert probable_update(SEARCH, RECOMMENDATIONS) is None
    revised = "user: The recommendations endpoint is down to 210ms at 200 virtual users now."
    assert probable_update(revised, RECOMMENDATIONS) is not None


def test_two_speakers_turns_keep_their_labels() -> None:
    older = "Audrey: Yep! I hope you find the perfect dog-friendly spot soon for the dogs."
    assert probable_update("Andrew: Hope I find one soon. Can't wait!", older) is None
    assert probable_update(
        "user: The API listens on port 9090 now.", "user: The API listens on port 8080."
    )


def test_an_older_turn_is_read_for_each_speaker_whichever_reads_it_first() -> None:
    # Older texts' readings are kept: the same speaker's check reads the turn without its
    # label, another speaker's with it, and neither reading stands in for the other.
    older = "Audrey: The dog park opens at 8am."
    same_speaker = "Audrey: The dog park opens at 9am now."
    other_speaker = "Andrew: The dog park opens at 9am now."
    for _ in range(2):
        assert probable_update(same_speaker, older) is not None
        assert probable_update(other_speaker, older) is None
    # The other speaker first, on a turn no check has read yet.
    older = "Audrey: The dog park closes at 8pm."
    closing = ("Audrey: The dog park closes at 9pm now.", "Andrew: The dog park closes at 9pm now.")
    for _ in range(2):
        assert probable_update(closing[1], older) is None
        assert probable_update(closing[0], older) is not None


def test_a_question_proposing_a_change_announces_none() -> None:
    running = Wording("We run Kafka with ZooKeeper.")
    assert not Wording("Is it time to migrate to KRaft?").announces(running)
    assert not Wording("Should I use CSV instead?").announces(running)
    assert Wording("Now that we moved to KRaft, how do I size the controllers?").announces(running)
    assert Wording("We migrate to KRaft next week.").announces(running)
    assert probable_update(ZOOKEEPER, KAFKA) is None


ASKED_AGAIN = (
    "user: That makes sense! The formula definitely seems quicker and more efficient, especially "
    "for larger values of n. Thanks for the detailed explanation! Can you give me another "
    "example to practice with, maybe a series with a smaller common ratio?"
)
THANKED = (
    "user: Got it! The sigma notation for geometric series makes a lot more sense now. The "
    "examples you provided really helped clarify how to identify the first term and the common "
    "ratio, and how to use the formula to find the sum. Thanks for the detailed explanation!"
)
OWNED = " The billing service is owned by Grace."


def test_a_long_turns_sentence_that_only_adds_words_updates_nothing() -> None:
    # "makes a lot more sense now" after "That makes sense!": words added, a "now", no value
    # gained or lost, which chat says in passing all the time.
    assert probable_update(THANKED + OWNED, ASKED_AGAIN + OWNED) is None
    found = probable_update(
        THANKED + " The billing service is owned by Tom now.", ASKED_AGAIN + OWNED
    )
    assert found is not None and found.old == ("grace",)
