"""Between two short facts that share few words: a terse note that something changed
(``shared.ranking.updates``, rule 2). A note rewords what it updates ("raised the coverage
gate to 80" after "CI fails if coverage drops below 70%."; "ruff replaced flake8 and isort"
after "We lint Python with flake8."), so these rules ask for what the note says of the change
itself, not for words in common. A long text's sentences are never read so (pure)."""

from __future__ import annotations

from shared.ranking.evidence import Update
from shared.ranking.left_values import dropped_value, word_replaced
from shared.ranking.measures import swapped_in_kind
from shared.ranking.same_subject import is_its_value, same_subject
from shared.ranking.values import value_kind
from shared.ranking.wording import CHANGE_TERMS, FACT_TERMS, Wording, is_one_sentence, value_follows


def value_dropped(newer: Wording, older: Wording) -> Update | None:
    """Between short texts: the newer says it dropped the value the older gives ("ruff
    replaced flake8 and isort" after "We lint Python with flake8."), whatever else each says:
    the value names what the older is about well enough; so does a plain word of the older
    it says it replaced, renamed or converted ("Renamed master to main" after "Default branch
    is master.": ``word_replaced``). Not what the older is about ("Anna replaced Omar" says
    nothing of "Omar was born in Oslo."), nor inside a long text, where a sentence of
    instructions replaces and drops things of its own ("Replace `your_script.py` with …")."""
    dropped = dropped_value(newer, older)
    if dropped is None or not is_its_value(older, dropped):
        dropped = word_replaced(newer, older)
    if dropped is None:
        return None
    return Update(evidence="value", old=(dropped,), new=())


def name_left_for_another(newer: Wording, older: Wording) -> Update | None:
    """Between short texts: the newer says it left a name the older holds and gives another
    in its place ("We track issues in Jira." → "We're on Linear now, … Jira's being
    archived."), whatever else each says: the tool or the provider is what the older was
    about, however each sentence opens. A long text's sentences are not read so: a heading's
    capitals make names of plain words ("Lazy Loading")."""
    came = sorted(v for v in newer.values - older.values if value_kind(v) == "name")
    if not came:
        return None
    left = dropped_value(newer, older)
    if left is None or value_kind(left) != "name":
        return None
    return Update(evidence="value", old=(left,), new=tuple(came))


def one_fact(text: str, wording: Wording) -> bool:
    """A fact told in one sentence of a few words (``FACT_TERMS``): what a note of a change
    restates in other words. A chat turn says more, and its "since we last spoke" or "now"
    announces nothing of the fact it shares a word with."""
    return len(wording.distinct) <= FACT_TERMS and is_one_sentence(text)


def announced_swap(newer: Wording, older: Wording) -> Update | None:
    """Between two short texts that share few words: the newer says that something changed (or
    reports an action done: "raised the coverage gate to 80"), keeps a plain word of the older
    ("coverage"), and gives a value of the kind the older loses ("70%" → "80")."""
    action = newer.reported_action()
    if action is None and not newer.announces(older):
        return None
    gone, came = older.values - newer.values, newer.values - older.values
    # One kind as finely as words tell it: "the Friday before each release" and "the 4.2
    # hotfix" are both figures, but a day is no version.
    if not swapped_in_kind(older, gone, newer, came, value_kind):
        return None
    # What the older text is about must be said again: "We raised the retries of the email
    # sender to 5." keeps the retries of "The webhook dispatcher retries a failed call four
    # times.", not the dispatcher.
    if older.subject() not in newer.distinct:
        return None
    # The subject must be kept: not the noun a value is given for ("port 3000" after "Port 9090
    # is where the auth proxy …"), nor the verb that reports the action ("We scheduled the
    # security audit for May 20." after "We scheduled the beta launch for October 30.").
    labels = {w for v in gone for w in value_follows(older, v)}
    labels |= {w for v in came for w in value_follows(newer, v)}
    kept = newer.distinct & older.distinct - newer.values - older.values - CHANGE_TERMS - labels
    kept -= {action}
    if not kept or not same_subject(newer, older, announced=True):
        return None
    return Update(evidence="value", old=tuple(sorted(gone)), new=tuple(sorted(came)))
