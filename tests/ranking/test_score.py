"""Recall ranking rules, table-tested on hand-built hits (no I/O, clock injected)."""

from __future__ import annotations

import pytest

from shared.lexical import KeywordHit, KeywordResult
from shared.model import DAY_MS, Hit, Memory, MemoryType
from shared.model.counters import ZERO_COUNT, AccessCount
from shared.model.ids import iso_ms
from shared.operations.fusion import fuse, fuse_again
from shared.ranking import MODE_PROFILES, Candidate, RecallOutcome, rank, trust
from shared.ranking.score import TIE_BAND

NOW_MS = 1_800_000_000_000


def hit(
    memory_id: str,
    similarity: float,
    *,
    age_days: float = 0,
    memory_type: MemoryType = "project",
    scope: str = "project",
    content: str | None = None,
) -> Hit:
    created = iso_ms(NOW_MS - int(age_days * DAY_MS))
    memory = Memory(
        id=memory_id,
        tenant="t",
        content=content if content is not None else f"content {memory_id}",
        memory_type=memory_type,
        created_at=created,
        scope=scope,  # type: ignore[arg-type]
    )
    return Hit(memory=memory, similarity=similarity)


def ranked(
    hits: list[Hit],
    counts: dict[str, AccessCount] | None = None,
    *,
    mode: str = "balanced",
    limit: int = 5,
    floor: float = 0.1,
    high: float = 0.3,
    keyword: KeywordResult | None = None,
    names_absent: bool = False,
) -> RecallOutcome:
    return rank(
        fuse(hits, keyword, floor=floor),
        counts or {},
        profile=MODE_PROFILES[mode],  # type: ignore[index]
        limit=limit,
        floor=floor,
        high_similarity=high,
        now_ms=NOW_MS,
        names_absent=names_absent,
    )


def ids(outcome: RecallOutcome) -> list[str]:
    return [r.memory.id for r in outcome.results]


def keyword_hit(
    memory_id: str,
    *,
    score: float = 1.0,
    matched: tuple[str, ...] = ("x",),
    all_rare: bool = False,
    coverage: float = 1.0,
    names: int = 0,
    sole: bool = False,
    labelled: bool = False,
) -> KeywordHit:
    return KeywordHit(
        memory_id=memory_id,
        score=score,
        matched=matched,
        all_rare=all_rare,
        coverage=coverage,
        names=names,
        sole=sole,
        labelled=labelled,
    )


def keywords(*hits: KeywordHit, spread: float = 1e9) -> KeywordResult:
    """A keyword result whose scores barely move relevance (spread 1e9) unless told."""
    return KeywordResult(
        hits=hits, spread=spread, documents=100, names=max((h.names for h in hits), default=0)
    )


@pytest.mark.parametrize(
    ("similarities", "expected"),
    [
        ((0.33,), "high"),  # alone, at the HIGH line (Titan's: 3 x floor 0.1)
        ((0.30,), "high"),  # inclusive
        ((0.29,), "medium"),  # under the line
        ((0.50, 0.40), "medium"),  # at the line, but the next one is close (1.25x)
        ((0.50, 0.27), "high"),  # stands clear: 1.85x the next
        ((0.50, 0.28), "medium"),  # 1.79x: not clear enough
    ],
)
def test_high_needs_the_high_line_and_the_first_result_clear_of_the_next(
    similarities: tuple[float, ...], expected: str
) -> None:
    hits = [hit(f"m{i}", s) for i, s in enumerate(similarities)]
    assert ranked(hits).confidence == expected


def test_the_query_words_alone_are_never_high() -> None:
    """A long memory holds most words of any question about its subject: coverage is no
    evidence that it answers it."""
    keyword = keywords(keyword_hit("a", coverage=1.0, all_rare=True))
    outcome = ranked([hit("a", 0.15), hit("b", 0.14)], keyword=keyword)
    assert outcome.confidence == "medium"


def test_the_sole_holder_of_the_query_name_is_high_whatever_its_cosine() -> None:
    keyword = keywords(keyword_hit("a", names=1, sole=True, all_rare=True))
    outcome = ranked([hit("b", 0.29), hit("a", 0.12)], keyword=keyword)
    assert ids(outcome)[0] == "a"
    assert [r.confidence for r in outcome.results] == ["high", "medium"]
    assert outcome.confidence == "high"


def test_nothing_is_high_when_the_query_names_what_no_memory_holds() -> None:
    """E1042 asked, only E1024 stored: however close E1024 reads, it is not the answer."""
    outcome = ranked([hit("e1024", 0.60)], names_absent=True)
    assert ids(outcome) == ["e1024"]
    assert outcome.confidence == "medium"
    keyword = keywords(keyword_hit("a", names=1, sole=True))
    assert ranked([hit("a", 0.2)], keyword=keyword, names_absent=True).confidence == "medium"


def test_each_result_has_its_own_confidence_and_the_answer_takes_the_best() -> None:
    keyword = keywords(keyword_hit("rare", all_rare=True, score=1.0))
    outcome = ranked([hit("top", 0.20), hit("rare", 0.08)], keyword=keyword, mode="exploratory")
    # "rare" is under the floor, let through by holding every rare query word: LOW.
    assert [(r.memory.id, r.confidence) for r in outcome.results] == [
        ("top", "medium"),
        ("rare", "low"),
    ]
    assert outcome.confidence == "medium"


def test_a_second_result_is_never_high_by_cosine() -> None:
    outcome = ranked([hit("a", 0.90), hit("b", 0.85)])
    assert [r.confidence for r in outcome.results] == ["medium", "medium"]


def test_the_memory_holding_the_query_name_whole_ranks_above_closer_ones() -> None:
    """PAY-4821 asked: OPS-4821 matches a part and reads closer; the whole name decides."""
    keyword = keywords(
        keyword_hit("pay", names=1, matched=("pay-4821", "pay", "4821")),
        keyword_hit("ops", names=0, matched=("4821",)),
    )
    outcome = ranked([hit("ops", 0.60), hit("close", 0.58), hit("pay", 0.40)], keyword=keyword)
    assert ids(outcome)[0] == "pay"


def test_more_of_the_query_names_held_ranks_first() -> None:
    keyword = keywords(
        keyword_hit("both", names=2), keyword_hit("one", names=1), keyword_hit("other", names=1)
    )
    outcome = ranked([hit("one", 0.6), hit("other", 0.5), hit("both", 0.3)], keyword=keyword)
    assert ids(outcome) == ["both", "one", "other"]


def test_a_name_holder_is_never_cut_by_the_fraction_of_top() -> None:
    keyword = keywords(keyword_hit("named", names=1))
    outcome = ranked([hit("top", 0.90), hit("named", 0.12)], keyword=keyword, mode="precision")
    assert ids(outcome) == ["named", "top"]


def test_a_newer_look_alike_never_passes_the_memory_holding_the_name() -> None:
    """E1042 stored first, E1024 later; the query E1042 must not get the revision rule."""
    keyword = keywords(keyword_hit("e1042", names=1))
    old = hit("e1042", 0.50, age_days=30, content="Error E1042 means the Node cache is stale")
    new = hit("e1024", 0.52, age_days=1, content="Error E1024 means the Node cache is stale")
    assert ids(ranked([new, old], keyword=keyword)) == ["e1042", "e1024"]


def test_a_query_made_of_a_memory_labels_selects_it_under_the_floor_never_high() -> None:
    """The query "database", a memory filed under it whose text never says the word: returned
    first, past the floor and the fraction of the top, and LOW, as a keyword-gated result."""
    keyword = keywords(keyword_hit("filed", labelled=True), keyword_hit("says", labelled=False))
    outcome = ranked(
        [hit("says", 0.25), hit("filed", 0.04), hit("other", 0.05)],
        keyword=keyword,
        mode="precision",
    )
    assert ids(outcome) == ["filed", "says"]
    assert [r.confidence for r in outcome.results] == ["low", "medium"]
    alone = ranked([hit("filed", 0.04), hit("other", 0.05)], keyword=keyword)
    assert ids(alone) == ["filed"] and alone.confidence == "low"


def test_a_label_never_makes_a_result_high() -> None:
    keyword = keywords(keyword_hit("filed", labelled=True, all_rare=True))
    outcome = ranked([hit("filed", 0.29), hit("b", 0.28)], keyword=keyword, high=0.25)
    assert outcome.confidence == "medium"


def test_no_result_is_low_confidence() -> None:
    assert ranked([hit("a", 0.05)]).confidence == "low"


def test_a_single_hit_scores_its_relevance_plus_a_tie_break_within_the_band() -> None:
    outcome = ranked([hit("a", 0.5)])
    score = outcome.results[0].score
    assert 0.5 < score <= 0.5 + TIE_BAND * 0.1


def test_floor_and_fraction_of_top_gate_and_count_what_they_drop() -> None:
    hits = [hit("top", 0.50), hit("near", 0.26), hit("far", 0.24), hit("below", 0.05)]
    outcome = ranked(hits)
    # balanced keeps >= 0.5 x 0.50 = 0.25: "far" is ratio-gated, "below" is under the floor.
    assert ids(outcome) == ["top", "near"]
    assert outcome.gated == 2


def test_nothing_above_the_floor_returns_no_results_and_counts_all_gated() -> None:
    outcome = ranked([hit("a", 0.05), hit("b", 0.02)])
    assert outcome.results == ()
    assert outcome.gated == 2
    assert outcome.confidence == "low"


def test_under_a_weak_top_a_result_just_below_the_floor_comes_with_it_labelled_low() -> None:
    """Floor 0.1: the top reaches it, a companion at 0.09 is within the fraction of the top and
    above 0.8 x floor, one at 0.07 is not."""
    outcome = ranked([hit("top", 0.12), hit("companion", 0.09), hit("remote", 0.07)])
    assert ids(outcome) == ["top", "companion"]
    assert [r.confidence for r in outcome.results] == ["medium", "low"]
    assert outcome.gated == 1


def test_a_result_just_below_the_floor_never_comes_back_alone() -> None:
    outcome = ranked([hit("a", 0.095), hit("b", 0.09)])
    assert outcome.results == ()
    assert outcome.gated == 2


def test_under_a_strong_top_the_fraction_of_the_top_still_cuts_above_the_floor() -> None:
    outcome = ranked([hit("top", 0.60), hit("near", 0.31), hit("weak", 0.29)])
    assert ids(outcome) == ["top", "near"]


def test_store_order_does_not_matter_top_is_a_maximum() -> None:
    outcome = ranked([hit("b", 0.40), hit("a", 0.60), hit("c", 0.45)])
    assert ids(outcome) == ["a", "c", "b"]


def test_recency_breaks_a_relevance_tie_towards_the_newer_memory() -> None:
    outcome = ranked([hit("old", 0.50, age_days=90), hit("new", 0.50, age_days=1)])
    assert ids(outcome) == ["new", "old"]


def test_access_counts_lift_a_used_memory_over_an_equal_unused_one() -> None:
    hits = [hit("unused", 0.50, age_days=10), hit("used", 0.50, age_days=10)]
    counts = {"used": AccessCount(access=9, last_at=iso_ms(NOW_MS - 10 * DAY_MS))}
    assert ids(ranked(hits, counts, mode="exploratory")) == ["used", "unused"]


@pytest.mark.parametrize("mode", ["precision", "balanced", "exploratory"])
def test_the_composite_never_buries_a_clearly_more_relevant_memory(mode: str) -> None:
    """Old, never used, against new and used a hundred times: relevance 0.02 apart decides."""
    hits = [hit("relevant", 0.52, age_days=400), hit("popular", 0.50, age_days=0)]
    counts = {"popular": AccessCount(access=100, last_at=iso_ms(NOW_MS))}
    assert ids(ranked(hits, counts, mode=mode))[0] == "relevant"


def test_limit_cuts_after_sorting() -> None:
    hits = [hit(str(i), 0.5 + i / 100) for i in range(10)]
    assert ids(ranked(hits, mode="precision", limit=3)) == ["9", "8", "7"]


def test_scope_does_not_change_the_score() -> None:
    a = ranked([hit("a", 0.5)], limit=1)
    b = ranked([hit("a", 0.5, scope="conversation")], limit=1)
    assert a.results[0].score == b.results[0].score


def test_a_newer_memory_on_the_same_subject_outranks_the_older_one() -> None:
    old = hit("old", 0.60, age_days=20, content="The API listens on port 8080 in staging")
    new = hit("new", 0.55, age_days=1, content="The API listens on port 8443 in staging now")
    other = hit("other", 0.58, age_days=1, content="Deploys run from the release branch")
    # The revision takes the place of what it revises; the older follows it.
    assert ids(ranked([old, other, new])) == ["new", "old", "other"]


def test_a_reworded_revision_with_a_new_value_outranks_what_it_revises() -> None:
    # Under dedup's word overlap (0.4 here), but the retry count changed: still a revision.
    old = hit(
        "old",
        0.80,
        age_days=20,
        content="The webhook dispatcher retries failed deliveries 3 times before the DLQ.",
    )
    new = hit(
        "new",
        0.77,
        age_days=1,
        content="We raised the webhook dispatcher retries for failed deliveries to 7.",
    )
    assert ids(ranked([old, new])) == ["new", "old"]


@pytest.mark.parametrize(
    ("older", "newer", "order"),
    [
        # A short form and the word written out are one word of a revision.
        ("billing-service listens on 8081 internally", "billing svc port is 9090", "new old"),
        # A question revises nothing, however many words it shares; stated, it does.
        ("Prod database is in us-east-1.", "Should we move the prod db to us-west-2?", "old new"),
        ("Prod database is in us-east-1.", "We moved the prod db to us-west-2.", "new old"),
        # What was so before, or may be so one day, is no newer version of what is so now.
        ("Sam owns the billing service.", "Before Sam, billing was owned by Rita.", "old new"),
        ("Prod DB is on Postgres 14.", "We might look at moving prod to Postgres 16.", "old new"),
        ("Prod DB is on Postgres 14.", "We upgraded prod to Postgres 16 last week.", "new old"),
    ],
)
def test_a_revision_nearly_as_relevant_goes_first_as_its_words_tell(
    older: str, newer: str, order: str
) -> None:
    old = hit("old", 0.80, age_days=20, content=older)
    new = hit("new", 0.76, age_days=1, content=newer)
    assert ids(ranked([old, new])) == order.split()


def test_a_newer_memory_on_the_same_subject_but_clearly_less_relevant_keeps_its_place() -> None:
    """Half a floor (0.05 here) is as far below as a revision may stand and still go first."""
    old = hit("old", 0.80, age_days=20, content="The API listens on port 8080 in staging")
    new = hit("new", 0.70, age_days=1, content="The API listens on port 8443 in staging now")
    assert ids(ranked([old, new])) == ["old", "new"]


def test_newer_first_reorders_what_is_returned_and_never_brings_in_another() -> None:
    old = hit("old", 0.80, age_days=20, content="The API listens on port 8080 in staging")
    mid = hit("mid", 0.79, age_days=20, content="Deploys run from the release branch")
    new = hit("new", 0.78, age_days=1, content="The API listens on port 8443 in staging now")
    assert ids(ranked([old, mid, new], limit=2)) == ["old", "mid"]
    assert ids(ranked([old, mid, new], limit=3)) == ["new", "old", "mid"]


def test_a_newer_memory_moves_up_at_most_two_places_past_what_it_revises() -> None:
    """Every memory it passes is more relevant than the newer one: two places (one memory and
    what it revises) are allowed, three are not."""
    old = hit("old", 0.80, age_days=20, content="The API listens on port 8080 in staging")
    fillers = [
        hit(f"f{n}", 0.79 - n / 100, age_days=20, content=f"Unrelated note number {n} on billing")
        for n in range(2)
    ]
    new = hit("new", 0.76, age_days=1, content="The API listens on port 8443 in staging now")
    near = ranked([old, *fillers[:1], new], limit=5)
    assert ids(near) == ["new", "old", "f0"]
    far = ranked([old, *fillers, new], limit=5)
    assert ids(far) == ["old", "f0", "f1", "new"]


def test_a_loosely_related_newer_memory_with_the_same_facts_keeps_its_place() -> None:
    # The same loose overlap without a changed value is no revision: relevance decides.
    old = hit("old", 0.80, age_days=20, content="The webhook dispatcher sends deliveries to Slack.")
    new = hit("new", 0.70, age_days=1, content="We document the webhook dispatcher in the wiki.")
    assert ids(ranked([old, new])) == ["old", "new"]


def _asked(*matched: tuple[str, tuple[str, ...]]) -> KeywordResult:
    """The keyword leg's hits, the same score each, holding the question's ``matched`` terms."""
    hits = tuple(
        KeywordHit(memory_id=memory_id, score=2.0, matched=terms, all_rare=False, coverage=0.5)
        for memory_id, terms in matched
    )
    return KeywordResult(hits=hits, spread=1.0, documents=20)


def test_a_reworded_fact_holding_the_same_words_of_the_question_goes_first() -> None:
    # Few words in common, no value the word rules pair up: what ties the two together is that
    # the question finds the same of its words in both.
    old = hit("old", 0.80, age_days=20, content="Background jobs in Harbor go through RabbitMQ.")
    new = hit("new", 0.77, age_days=1, content="Harbor's job queue runs on Amazon SQS.")
    both = _asked(("old", ("harbor", "job")), ("new", ("harbor", "job")))
    assert ids(ranked([old, new], keyword=both)) == ["new", "old"]
    # The newer holds fewer of the question's words: it may be about something else.
    fewer = _asked(("old", ("harbor", "job")), ("new", ("harbor",)))
    assert ids(ranked([old, new], keyword=fewer)) == ["old", "new"]
    # More of them, every one the older holds among them: it answers the question as fully.
    more = _asked(("old", ("harbor",)), ("new", ("harbor", "job")))
    assert ids(ranked([old, new], keyword=more)) == ["new", "old"]
    # Nor does a newer fact that gives no value of its own say anything in place of the older.
    other = hit("new", 0.77, age_days=1, content="Harbor's job queue has a runbook in the wiki.")
    assert ids(ranked([old, other], keyword=both)) == ["old", "new"]


def test_a_fact_led_by_another_name_holding_the_same_words_of_the_question_goes_first() -> None:
    """The first word of a sentence is capitalised whatever it is, so "Felix" there is no value
    to the word rules; two facts holding the same words of the question, or the newer part of
    the older's and none that names what the older is about, each led by a word the other
    lacks, answer it with that word."""
    old = hit("old", 0.80, age_days=20, content="Ana reviews all database migrations.")
    new = hit("new", 0.77, age_days=1, content="Felix is the reviewer for database migrations.")
    both = _asked(
        ("old", ("review", "databas", "migrat")), ("new", ("review", "databas", "migrat"))
    )
    assert ids(ranked([old, new], keyword=both)) == ["new", "old"]
    # A rewording may leave one of the question's words unsaid ("owns" as "owner").
    old = hit("old", 0.80, age_days=20, content="Marta owns the billing service.")
    new = hit("new", 0.77, age_days=1, content="Kenji is the billing service owner.")
    part = _asked(("old", ("own", "bill")), ("new", ("bill",)))
    assert ids(ranked([old, new], keyword=part)) == ["new", "old"]
    # Not when what it leaves unsaid is said with other words in its place: another subject.
    old = hit("old", 0.80, age_days=20, content="Ana reviews all database migrations.")
    new = hit("new", 0.77, age_days=1, content="Felix is the reviewer for frontend changes.")
    other = _asked(("old", ("review", "databas", "migrat")), ("new", ("review",)))
    assert ids(ranked([old, new], keyword=other)) == ["old", "new"]
    # Two speakers' turns open with who speaks and small talk: no answer read there.
    old = hit("old", 0.80, age_days=20, content="Ana: Wow, database migrations again.")
    new = hit("new", 0.77, age_days=1, content="Felix: Great, database migrations again!")
    talk = _asked(("old", ("databas", "migrat")), ("new", ("databas", "migrat")))
    assert ids(ranked([old, new], keyword=talk)) == ["old", "new"]


def test_a_terse_note_of_a_change_goes_first_however_much_less_relevant() -> None:
    """The question is asked in the older's words; a one-sentence note that says the value
    changed holds fewer of them, and its relevance falls far outside the band."""
    old = hit("old", 0.80, age_days=20, content="Checkout p99 latency SLO is 800ms.")
    new = hit("new", 0.50, age_days=1, content="we tightened checkout p99 to 500ms")
    asked = _asked(("old", ("latenc", "slo", "checkout")), ("new", ("checkout",)))
    assert ids(ranked([old, new], keyword=asked)) == ["new", "old"]
    # No value in place of the older's, but the same words of the question, a plain one.
    old = hit("old", 0.80, age_days=20, content="Standup is at 9:30 every morning.")
    new = hit("new", 0.60, age_days=1, content="standup's at ten now, please be on time")
    same = _asked(("old", ("standup",)), ("new", ("standup",)))
    assert ids(ranked([old, new], keyword=same)) == ["new", "old"]
    # Not said to have changed: relevance decides.
    plain = hit("new", 0.50, age_days=1, content="checkout p99 is 500ms")
    assert ids(ranked([old, plain], keyword=asked)) == ["old", "new"]


def _ranked_pair(
    older: str, newer: str, matched_old: tuple[str, ...], matched_new: tuple[str, ...]
) -> list[str]:
    """The order of an older fact and a newer one far less relevant (0.80 against 0.55), each
    holding the question's terms given."""
    old = hit("old", 0.80, age_days=20, content=older)
    new = hit("new", 0.55, age_days=1, content=newer)
    return ids(ranked([old, new], keyword=_asked(("old", matched_old), ("new", matched_new))))


@pytest.mark.parametrize(
    ("older", "newer", "matched_old", "matched_new"),
    [
        # "too" before a word is a degree, not an addition.
        (
            "Daily standup is at 9:30am.",
            "Standup moved to 10:15, too many people were rolling in late.",
            ("standup",),
            ("standup",),
        ),
        # "as of this morning" says since when.
        (
            "Prod is hosted on Heroku.",
            "prod's on fly.io as of this morning",
            ("prod", "host"),
            ("prod",),
        ),
        # A cutover is a move.
        (
            "static assets are served through CloudFront",
            "We cut the static assets over to Fastly yesterday.",
            ("front", "static"),
            ("static",),
        ),
        # A plain word of the question in common, another the older holds left unsaid.
        (
            "The orders API expects the key in an X-Api-Key header.",
            "orders api takes bearer tokens now: Authorization: Bearer <token>",
            ("header", "order", "api"),
            ("order", "api"),
        ),
        # A word of the question only the older holds ("use"), another in its place none.
        (
            "All our containers use ubuntu:20.04 as the base image.",
            "We switched the container base image to debian bookworm-slim, way smaller.",
            ("base", "imag", "contain", "use"),
            ("base", "imag", "contain"),
        ),
    ],
)
def test_a_note_of_a_change_in_other_words_goes_first(
    older: str, newer: str, matched_old: tuple[str, ...], matched_new: tuple[str, ...]
) -> None:
    assert _ranked_pair(older, newer, matched_old, matched_new) == ["new", "old"]


@pytest.mark.parametrize(
    ("older", "newer", "matched_old", "matched_new"),
    [
        # Only the asked person's name in common: another attribute of theirs.
        (
            "Tara Walsh's favourite colour is white.",
            "Tara Walsh's favourite food is now pho.",
            ("tara", "walsh", "favourit", "colour"),
            ("tara", "walsh", "favourit"),
        ),
        # The same words of the question, but only the name of whom it asks about.
        (
            "Ximena Cruz works as a teacher.",
            "Ximena Cruz's favourite colour is now white.",
            ("ximena", "cruz"),
            ("ximena", "cruz"),
        ),
        # A value of another kind in place of the older's: another attribute.
        (
            "Code freeze starts the Friday before each release.",
            "We skipped the code freeze for the 4.2 hotfix.",
            ("code", "freez", "start"),
            ("code", "freez"),
        ),
        # A word of the question the older lacks: the note may answer something else.
        (
            "Prod API pods have a 512Mi memory limit.",
            "bumped the worker pods to a 1Gi memory limit",
            ("memori", "limit"),
            ("memori", "limit", "worker"),
        ),
        # A note that adds to the older fact revises nothing.
        (
            "Deploy notifications go to #deploys in Slack.",
            "Deploy alerts now also post to #eng-releases.",
            ("deploy", "notif"),
            ("deploy",),
        ),
    ],
)
def test_a_note_that_does_not_answer_the_question_anew_keeps_its_place(
    older: str, newer: str, matched_old: tuple[str, ...], matched_new: tuple[str, ...]
) -> None:
    assert _ranked_pair(older, newer, matched_old, matched_new) == ["old", "new"]


@pytest.mark.parametrize(
    ("older", "newer", "matched"),
    [
        # A time of day for a time of day, in other words, no change said.
        ("Standup is at 9:30.", "We meet for standup at 10:15.", ("standup",)),
        # A day for a day.
        (
            "Retro is on Friday afternoons.",
            "Retros happen Wednesdays right after demo.",
            ("retro",),
        ),
        # A duration for a duration.
        (
            "Application logs are kept in Loki for 30 days.",
            "Legal asked us to trim log retention, so Loki purges anything older than 14 days.",
            ("log",),
        ),
    ],
)
def test_a_reworded_fact_giving_another_figure_of_the_same_measure_goes_first(
    older: str, newer: str, matched: tuple[str, ...]
) -> None:
    """Both hold the same words of the question and the newer gives, in place of the older's
    figure, one that measures the same: another answer to it, however much less relevant."""
    assert _ranked_pair(older, newer, matched, matched) == ["new", "old"]


@pytest.mark.parametrize(
    ("older", "newer", "matched_old", "matched_new"),
    [
        # The question's verb reworded ("run" → "kicks off"), its subject kept.
        (
            "Nightly backups run at 2am UTC.",
            "The nightly backup job kicks off at 4am UTC.",
            ("backup", "run"),
            ("backup",),
        ),
        (
            "The public API rate limit is 1,000 requests per minute per key.",
            "Per-key throttling on the public API kicks in at 600 requests a minute.",
            ("api", "rate", "limit", "key"),
            ("api", "key"),
        ),
    ],
)
def test_a_reworded_fact_holding_part_of_the_questions_words_goes_first(
    older: str, newer: str, matched_old: tuple[str, ...], matched_new: tuple[str, ...]
) -> None:
    """The newer holds some of the words of the question the older holds and no other, says
    none of the rest with another word in its place, and gives a figure of the same measure:
    the older's words reworded, the same answer asked for."""
    assert _ranked_pair(older, newer, matched_old, matched_new) == ["new", "old"]


@pytest.mark.parametrize(
    ("older", "newer", "matched_old", "matched_new"),
    [
        # The newer holds fewer of the question's words: another subject's time.
        (
            "The mobile team's sprint demo is Thursday at 3pm.",
            "The web team's sprint demo is Friday at 2pm.",
            ("mobil", "demo"),
            ("demo",),
        ),
        # What the older is about is a word of the question the newer does not say.
        ("Staging runs Node 18.", "The build agents run Node 22.", ("stage", "node"), ("node",)),
        (
            "The invoicing worker is deployed every Tuesday afternoon.",
            "The notifications worker is deployed every Thursday morning.",
            ("invoic", "worker", "deploy"),
            ("worker", "deploy"),
        ),
        # A figure whose words tell only what it counts or follows: "one release" and "every
        # second Tuesday" share a word, not a measure.
        (
            "Database migrations are written with Alembic and must stay backward compatible "
            "for one release.",
            "Release branches are cut every second Tuesday; hotfixes go to the release branch.",
            ("releas",),
            ("releas",),
        ),
        # A second slot beside the first.
        (
            "Design reviews happen Wednesdays at 1pm.",
            "We're adding an extra design review slot Fridays at 11 for urgent stuff.",
            ("design", "review"),
            ("design", "review"),
        ),
        # A kind of the older's subject: another subject in the same words.
        (
            "Logs are kept for 30 days.",
            "Audit logs are kept for 7 years.",
            ("log", "kept"),
            ("log", "kept"),
        ),
        # A house number is no time of day.
        (
            "The Singapore office is at 8 Marina View, #17-01.",
            "The Singapore office closes at 7pm on Fridays.",
            ("singapor", "offic"),
            ("singapor", "offic"),
        ),
    ],
)
def test_a_fact_giving_a_figure_of_something_else_keeps_its_place(
    older: str, newer: str, matched_old: tuple[str, ...], matched_new: tuple[str, ...]
) -> None:
    assert _ranked_pair(older, newer, matched_old, matched_new) == ["old", "new"]


def test_a_chat_message_answering_with_another_figure_goes_first() -> None:
    """Two long messages whose sentences answering the question give one figure two values:
    the newer goes first, however much less relevant (a chat message rewords all around it)."""
    older = (
        "I'm working on sprint planning for the Twitter API integration and I need to set a "
        "sprint deadline of April 1, 2024, to complete the Instagram automation prototype. Can "
        "you help me create a project plan and timeline for this?"
    )
    newer = (
        "I'm trying to adjust the sprint deadline for my Instagram automation prototype to "
        "April 5, 2024, as mentioned, but I'm having trouble updating the schedule. Can you "
        "help me implement a function to update the deadline in my project management tool?"
    )
    asked = ("deadlin", "instagram", "autom", "prototyp", "sprint")
    assert _ranked_pair(older, newer, asked, asked) == ["new", "old"]


def test_a_chat_message_giving_the_figure_of_another_thing_keeps_its_place() -> None:
    """The same measure of another thing: "graphing quiz score" for "proof writing quiz
    score"."""
    graphing = (
        "By studying for 4.5 hours, I reached a 95% score on my graphing quiz. What should I "
        "review before the next one?"
    )
    proof_writing = (
        "I noticed that when I extended my study time to 6 hours this week, my proof writing "
        "quiz score went up to 90%. How should I plan next week?"
    )
    asked_old = ("hour", "studi", "week", "proof", "write", "quiz", "score")
    asked_new = ("hour", "studi", "quiz", "score")
    assert _ranked_pair(proof_writing, graphing, asked_old, asked_new) == ["old", "new"]


def test_a_chat_turn_saying_now_is_no_note_of_a_change() -> None:
    old = hit("old", 0.80, age_days=20, content="Nate: I just took my turtles out for a walk.")
    new = hit(
        "new",
        0.55,
        age_days=1,
        content="Nate: I've always liked turtles. I know all about them now!",
    )
    asked = _asked(("old", ("turtl",)), ("new", ("turtl",)))
    assert ids(ranked([old, new], keyword=asked)) == ["old", "new"]


def test_chat_turns_holding_the_same_words_of_the_question_keep_their_order() -> None:
    """A turn says more than a fact; a later one with the question's words is as often another
    moment of the conversation."""
    old = hit(
        "old",
        0.80,
        age_days=20,
        content="Caroline: I went to a support group yesterday and it was so powerful, the "
        "stories people shared really moved me and made me feel brave.",
    )
    new = hit(
        "new",
        0.77,
        age_days=1,
        content="Caroline: Thanks, Melanie! The support group keeps growing and we plan a "
        "march next month with posters, music and a picnic afterwards.",
    )
    both = _asked(("old", ("support", "group")), ("new", ("support", "group")))
    assert ids(ranked([old, new], keyword=both)) == ["old", "new"]


def test_a_strong_keyword_hit_under_the_floor_is_returned_with_its_words() -> None:
    under = hit("under", 0.05)
    found = KeywordHit(
        memory_id="under", score=3.0, matched=("e1042",), all_rare=True, coverage=0.5
    )
    keyword = KeywordResult(hits=(found,), spread=10.0, documents=100)
    outcome = ranked([under], keyword=keyword)
    assert ids(outcome) == ["under"]
    assert outcome.results[0].matched == ("e1042",)
    # Under the floor, let through by its words alone: LOW, and the answer with it.
    assert outcome.confidence == "low"


@pytest.mark.parametrize(
    ("memory_type", "age_days", "expected"),
    [
        ("project", 180, 0.5),
        ("reference", 120, 0.5),
        ("pattern", 60, 0.5),
        ("conversation", 30, 0.5),
        ("project", 0, 1.0),
    ],
)
def test_trust_halves_at_the_type_half_life(
    memory_type: MemoryType, age_days: float, expected: float
) -> None:
    memory = hit("x", 0.5, memory_type=memory_type).memory
    assert trust(memory, ZERO_COUNT, age_days=age_days) == pytest.approx(expected)


def test_use_slows_trust_decay_but_never_lifts_it_above_base() -> None:
    memory = hit("x", 0.5).memory
    used = AccessCount(access=50, last_at="")
    assert trust(memory, used, age_days=180) > trust(memory, ZERO_COUNT, age_days=180)
    assert trust(memory, used, age_days=0) == 1.0


def test_unparseable_timestamp_sinks_rather_than_nan() -> None:
    broken = Hit(
        memory=Memory(id="bad", tenant="t", content="c", created_at="not a date"),
        similarity=0.5,
    )
    outcome = ranked([broken, hit("ok", 0.5)])
    assert [r.memory.id for r in outcome.results] == ["ok", "bad"]
    assert all(r.score == r.score for r in outcome.results)  # no NaN


def test_a_revision_is_judged_on_the_question_own_relevance_not_the_feedback() -> None:
    """The feedback lifted the older memory past half a floor above its revision; on the
    question's own words the revision is within it, and goes first."""
    old = hit("old", 0.80, age_days=20, content="The API listens on port 8080 in staging")
    new = hit("new", 0.76, age_days=1, content="The API listens on port 8443 in staging now")
    first = fuse([old, new], None, floor=0.1)
    again = fuse_again(first, {"old": 4.0}, spread=1.0, floor=0.1)
    outcome = _rank(again)
    assert again[0].relevance - again[1].relevance > 0.05
    assert ids(outcome) == ["new", "old"]
    assert ids(ranked([old, new], keyword=keywords(keyword_hit("old", score=4.0), spread=1.0))) == [
        "old",
        "new",
    ]


def _fused_again(old: list[Hit], lifted: dict[str, float]) -> list[Candidate]:
    """The candidates of ``old`` fused again with a feedback that lifts ``lifted`` (BM25 at a
    spread of 1: UNIT per point at floor 0.1)."""
    return fuse_again(fuse(old, None, floor=0.1), lifted, spread=1.0, floor=0.1)


def _rank(candidates: list[Candidate]) -> RecallOutcome:
    return rank(
        candidates,
        {},
        profile=MODE_PROFILES["balanced"],
        limit=5,
        floor=0.1,
        high_similarity=0.3,
        now_ms=NOW_MS,
    )


def test_the_feedback_alone_never_makes_an_answer_exist() -> None:
    """Under the floor on the question's own relevance, nothing is stored, however the
    feedback lifted it (0.012 per BM25 point here)."""
    candidates = _fused_again([hit("a", 0.09), hit("b", 0.07)], {"a": 2.0})
    assert candidates[0].relevance > 0.1 > candidates[0].own_relevance
    assert _rank(candidates).results == ()


def test_confidence_is_read_on_the_question_own_relevance() -> None:
    """The feedback lifted the runner-up to 0.43, where 0.5 no longer stands 1.8 x clear of
    it; on the question's own relevance (0.25) it does."""
    candidates = _fused_again([hit("a", 0.5), hit("b", 0.25)], {"b": 15.0})
    outcome = _rank(candidates)
    assert ids(outcome) == ["a", "b"]
    assert outcome.results[0].confidence == "high"
    # and a result the feedback lifted over the floor is still LOW on the question's own words
    low = _fused_again([hit("a", 0.2), hit("b", 0.09)], {"b": 2.0})
    assert [r.confidence for r in _rank(low).results] == ["medium", "low"]
