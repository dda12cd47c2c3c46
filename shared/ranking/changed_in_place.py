"""Rule 2 of the probable updates (``shared.ranking.updates``): what changed in place between
two texts about one subject (pure). A value of each the other lacks, standing among words both
hold (its slot: "port 8080" / "port 9090"); one run of words replaced by another ("with
webpack" → "with vite"); or a negation added or taken away where little else changed ("goes to
Datadog" → "no longer goes to Datadog")."""

from __future__ import annotations

from shared.model.tokens import is_name
from shared.ranking.evidence import Update
from shared.ranking.measures import figures_agree, measured_outright, same_measure
from shared.ranking.same_subject import MAX_SLOT_TERMS, change_sites
from shared.ranking.values import is_address, is_figure, is_value
from shared.ranking.wording import CHANGE_TERMS, NEGATIONS, Wording, value_slot


def _names_a_thing(term: str) -> bool:
    """An identifier that names one thing (``E1042``, ``PAY-4821``): a sentence that says the
    same of another one is about that other thing. An address is where something is reached:
    another one in its place is the same thing moved."""
    return is_name(term) and not is_address(term)


def changed_slot(
    newer: Wording, older: Wording, shared: frozenset[str], *, announced: bool
) -> Update | None:
    """A value of each text the other lacks, their neighbours sharing content words: the same
    slot holding another value. A short text may also drop a value or gain one ("every two
    weeks" → "every week"). Identifiers (``E1042``, ``PAY-4821``, ``a.b_c``) name things: a
    sentence that says the same of another one is about another thing ("checkout failed
    because of E1042" / "… of E1024"), unless the newer text says that something changed."""
    gone = older.values - newer.values
    came = newer.values - older.values
    if not announced:
        gone = frozenset(v for v in gone if not _names_a_thing(v))
        came = frozenset(v for v in came if not _names_a_thing(v))
    if not gone and not came:
        return None
    context_old = {v: value_slot(older.terms, v) & shared for v in gone}
    context_new = {v: value_slot(newer.terms, v) & shared for v in came}
    for old_value, around_old in context_old.items():
        for new_value, around_new in context_new.items():
            if around_old & around_new and not _measure_apart(older, old_value, newer, new_value):
                return Update(evidence="value", old=(old_value,), new=(new_value,))
    if not (older.distinct - older.values) <= newer.distinct:
        return None
    if not (newer.distinct - newer.values - CHANGE_TERMS) <= older.distinct:
        return None
    # All the older text said but its value is still said: a value dropped or one added.
    for value, around in context_old.items():
        if around and not came:
            return Update(evidence="value", old=(value,), new=())
    for value, around in context_new.items():
        if around and not gone:
            return Update(evidence="value", old=(), new=(value,))
    return None


def _measure_apart(older: Wording, was: str, newer: Wording, now: str) -> bool:
    """Two figures that each carry what they measure, and measure different things: two
    attributes beside the same words ("Standup is at 9:30." / "Standup lasts 15 minutes.").
    A figure whose words tell only what it counts or follows ("room 2A", "300/min per key")
    is read too loosely to keep two apart."""
    return (
        measured_outright(older, was)
        and measured_outright(newer, now)
        and not same_measure(older, was, newer, now)
    )


def replaced_span(newer: Wording, older: Wording, *, announced: bool) -> Update | None:
    """One run of the older text's words replaced by others, or words added where the newer
    text says that something changed ("…, Jenkins was retired")."""
    for i1, i2, j1, j2 in change_sites(newer, older):
        gone = [t for t in older.terms[i1:i2] if t not in newer.distinct]
        came = [t for t in newer.terms[j1:j2] if t not in older.distinct | CHANGE_TERMS]
        if len(gone) > MAX_SLOT_TERMS or len(came) > MAX_SLOT_TERMS:
            continue  # a predicate rewritten, not a value: another attribute of the subject
        if not announced and any(_names_a_thing(t) for t in (*gone, *came)):
            continue  # one identifier for another: another thing (see changed_slot)
        if not figures_agree(older, gone, newer, came):
            continue  # "on port 4000" → "6 replicas": another attribute (shared.ranking.measures)
        if _said_of_another_attribute(newer, older, gone, came):
            continue
        if came and (announced or (_one_value(gone) and _one_value(came))):
            return Update(evidence="replaced", old=tuple(gone), new=tuple(came))
    return None


def _said_of_another_attribute(
    newer: Wording, older: Wording, gone: list[str], came: list[str]
) -> bool:
    """Both texts give the same figures and the run replaced holds none of them: what is said of
    the figure changed, not the figure, so it is another attribute that has it ("The upload URL
    expires after 30 days." / "The upload URL now keeps its logs for 30 days.")."""
    if newer.values != older.values or not any(is_figure(v) for v in newer.values):
        return False
    return not (set(gone) | set(came)) & newer.values


def _one_value(replaced: list[str]) -> bool:
    """Whether a replaced run is one word, or a number with its unit after it ("every hour" →
    "every 10 minutes")."""
    return len(replaced) == 1 or (len(replaced) == 2 and is_value(replaced[0]))


def denied(newer: Wording, older: Wording) -> Update | None:
    """A negation added or taken away where little else changed: each text says at most a
    slot's words and one more the other does not ("goes to Datadog" → "no longer goes to
    Datadog; we use Grafana Loki"). A reply that says much else beside a "can't" ("Wow! What
    did you get?" → "Wow, they look great! Can't wait to see them …") denies nothing."""
    said_new = newer.distinct - older.distinct - CHANGE_TERMS
    said_old = older.distinct - newer.distinct
    if max(len(said_new), len(said_old)) > MAX_SLOT_TERMS + 1:
        return None
    return negation(newer, older)


def negation(newer: Wording, older: Wording) -> Update | None:
    said_new = bool(newer.words & NEGATIONS)
    said_old = bool(older.words & NEGATIONS)
    if said_new == said_old:
        return None
    return Update(evidence="negation", old=(), new=())
