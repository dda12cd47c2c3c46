"""Does a new fact update an older one? Text evidence only, no model: the two say the same thing
about the same subject, and one value in it changed (pure).

"The frontend is built with webpack." and "The frontend is built with vite since the rewrite."
share their subject and all but one slot; "Anna was born in Oslo." and "Omar was born in Oslo."
share a sentence pattern, but what changed is who the sentence is about. The rules:

1. **Enough in common.** The content words (the keyword leg's terms: stop words left out, plain
   words stemmed) the two share are at least half of the shorter one's, or, between long texts,
   a quarter: a chat message that revises a figure rewords everything around it.
2. **A value changed, in place.** A number, a number word, a day, a month, a version or an
   identifier that one text holds and the other does not, standing among words both hold (its
   *slot*: "port 8080" and "port 9090"); or, in a short text, one run of words replaced after
   its first words ("with webpack" → "with vite"); or a negation added or taken away where
   little else changed ("goes to Datadog" → "no longer goes to Datadog").
3. **Not another subject.** In a short text, a change that takes in its first content word (the
   subject, as English puts it first) is another fact of the same pattern, unless the newer
   text says it changed ("now", "since", "moved", "switched", …); so is a text that changes two
   separate places of the sentence (the service *and* its port, or a name and the value after
   its "is"), and, announced or not, one that names before its first "is" someone the other
   does not ("The native language of Omar Haddad is Thai." / "… of Lucia Romero is Thai."). A
   newer text that says it adds ("also", "too", "another") never updates, and one identifier
   for another (``E1042`` → ``E1024``, ``--drain-cache`` → ``--drain-queue``) is another thing
   unless the change is announced; an address (a host name, a URL) is where something is
   reached, so another one in its place is a value that changed. A value with its unit ("30
   days") is one value.
4. **What is said, not to whom.** A text of questions alone ("Is the standup still on
   Monday?") states nothing that an update could change or be read from, and a name the text
   speaks to ("Hey Mel!", "That's great, Ben!") is not read: another one there is the same small
   talk to someone else.
5. **Long texts, sentence by sentence.** Between texts past ``LONG_TERMS`` content words, one
   prose sentence of the newer must update one of the older's by the rules above; code lines
   are never read.

How a text is read (its terms, values and marks) is ``shared.ranking.wording``.

The figures behind the thresholds are in docs/calibration.md (bench/supersede_pairs.py).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from shared.model import Hit, Scope
from shared.model.tokens import indexed_form, is_name
from shared.ranking.wording import (
    CHANGE_TERMS,
    NEGATIONS,
    Wording,
    content_terms,
    is_address,
    is_value,
    prose_sentences,
    states_something,
    unaddressed,
    value_follows,
    value_slot,
)

# The shared share of the shorter text's content words (rule 1).
MIN_SHARED: Final = 0.5
MIN_SHARED_LONG: Final = 0.25
# The most content words a replaced value may take on either side ("GitHub Actions").
MAX_SLOT_TERMS: Final = 2
# The verbs before which an English sentence names what it is about ("The native language of
# Omar Haddad is …"): stop words, so read from ``Wording.spaced``.
COPULAS: Final = frozenset({"is", "are", "was", "were"})

Evidence = Literal["value", "replaced", "negation"]

# The value a newer text says it left: "from X to", "from X and Y to".
_FROM_TO: Final = re.compile(r"\bfrom ([\w.\-/]+)(?: (?:and|or) [\w.\-/]+)? to\b")
# The name a newer text says it dropped: "dropped X", "replaced the X", "instead of X", "X was
# retired". Only a value the older text names (a name, a version, an identifier) counts: the
# verbs also stand alone ("she retired a long time ago").
_DROPPED: Final = (
    re.compile(
        r"\b(?:dropped|replaced|retired|removed|ditched|abandoned|instead of)"
        r" (?:the |our )?([\w.\-/]+)"
    ),
    re.compile(
        r"\b([\w.\-/]+) (?:was|is|has been|got) "
        r"(?:dropped|retired|removed|replaced|deprecated|decommissioned)\b"
    ),
)


class Update(msgspec.Struct, frozen=True, kw_only=True):
    """Why a text was taken to update another: the kind of evidence and the values it names
    (what the older text says, what the newer says instead; either may be empty)."""

    evidence: Evidence
    old: tuple[str, ...]
    new: tuple[str, ...]


class UpdateCheck:
    """One newer text, read once, checked against any number of older ones."""

    __slots__ = ("_newer", "_sentences", "_states", "_terms", "_text")

    def __init__(self, new: str) -> None:
        new = unaddressed(new)
        self._text = new
        self._newer = Wording(new)
        self._sentences: list[Wording] | None = None
        self._terms = content_terms(new)
        self._states = states_something(new)

    def of(self, old: str) -> Update | None:
        """The evidence that this text updates ``old`` (see the module docstring), or None."""
        old = unaddressed(old)
        if not (self._states and states_something(old)):
            return None  # questions alone: nothing stated to update or be updated
        if self._terms.isdisjoint(content_terms(old)):
            return None  # not one content term in common: read no further (most neighbours)
        newer, older = self._newer, Wording(old)
        if not newer.distinct or not older.distinct or newer.adds_to(older):
            return None
        if not (newer.long or older.long):
            return _short_update(newer, older)
        if not long_texts_share(newer, older):
            return None
        if self._sentences is None:
            self._sentences = [Wording(s) for s in prose_sentences(self._text)]
        return _sentence_update(self._sentences, old, older)


def probable_update(new: str, old: str) -> Update | None:
    """The evidence that ``new`` updates ``old`` (see the module docstring), or None."""
    return UpdateCheck(new).of(old)


def long_texts_share(newer: Wording, older: Wording) -> bool:
    """Whether two texts share enough content words to be about one thing, by the share asked
    of long texts (rule 1): a quarter."""
    return _shared_enough(newer, older, MIN_SHARED_LONG) is not None


def _names_a_thing(term: str) -> bool:
    """An identifier that names one thing (``E1042``, ``PAY-4821``): a sentence that says the
    same of another one is about that other thing. An address is where something is reached:
    another one in its place is the same thing moved."""
    return is_name(term) and not is_address(term)


def _shared_enough(newer: Wording, older: Wording, share: float) -> frozenset[str] | None:
    """The content words the two share, when they are ``share`` of the fewer either says
    besides its values (and the newer besides its change marks); None when they are not."""
    shared = newer.distinct & older.distinct
    said_new = newer.distinct - CHANGE_TERMS - newer.values
    said_old = older.distinct - older.values
    wording = min(len(said_new), len(said_old))
    if not wording:
        # Every word a name ("The CEO of Microsoft is Satya Nadella."): the names are the words.
        enough = len(shared) >= share * min(len(newer.distinct), len(older.distinct))
        # Or the newer says nothing but the older's names, its new values and that it changed
        # ("Our Python version is 3.10." → "We upgraded Python to 3.12.").
        restated = newer.distinct - CHANGE_TERMS - (newer.values - older.values)
        return shared if enough or (restated and restated <= shared) else None
    if len(shared - older.values) < share * wording:
        return None
    return shared


def _sentence_update(sentences: Sequence[Wording], old: str, older: Wording) -> Update | None:
    """Between long texts: one sentence of the newer that updates one of the older's. Only
    prose is read (a line of code is no statement of fact), and only the newer's sentences
    that say something the older text does not (a value, a negation, a change), against the
    older sentences they share two content words with."""
    olds = [Wording(sentence) for sentence in prose_sentences(old)]
    for said in sentences:
        if not (said.values - older.values or said.announces(older) or said.words & NEGATIONS):
            continue
        for before in olds:
            if len(said.distinct & before.distinct - before.values) < 2:
                continue
            found = _short_update(said, before)
            if found is not None:
                return found
    return None


def _short_update(newer: Wording, older: Wording) -> Update | None:
    if newer.distinct == older.distinct:
        return _negation(newer, older)
    # "… from <what the older text says> to …", "dropped <it>" announce the change itself, and
    # may reword everything else: only the subject must be the same.
    left = _left_value(newer, older)
    if left is not None:
        return left if _same_subject(newer, older, announced=True) else None
    shared = _shared_enough(newer, older, MIN_SHARED)
    if shared is None:
        return None
    announced = newer.announces(older)
    if not _same_subject(newer, older, announced=announced):
        return None
    slot = _changed_slot(newer, older, shared, announced=announced)
    if slot is not None:
        return slot
    gone, came = older.values - newer.values, newer.values - older.values
    if announced and gone and came:
        return Update(evidence="value", old=tuple(sorted(gone)), new=tuple(sorted(came)))
    if not announced and _value_stands(newer, older):
        return None  # what changed is what the sentence is about
    return _replaced_span(newer, older, announced=announced) or _denied(newer, older)


def _value_stands(newer: Wording, older: Wording) -> bool:
    """Both texts hold the same values and one of them stands after where the words change:
    the sentence says the same value of something else ("We deploy the billing service on
    Friday." / "… the search service on Friday."). A value before the change belongs to the
    subject ("The admin UI is built with parcel." → "… with vite.")."""
    if not newer.values or newer.values != older.values:
        return False
    sites = _change_sites(newer, older)
    if not sites:
        return True
    first_change = min(j1 for _, _, j1, _ in sites)
    return any(term in newer.values for term in newer.terms[first_change:])


def _changed_slot(
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
            if around_old & around_new:
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


def _change_sites(newer: Wording, older: Wording) -> list[tuple[int, int, int, int]]:
    """The runs of content words that differ between the two, in the older text's order."""
    matcher = difflib.SequenceMatcher(a=older.terms, b=newer.terms, autojunk=False)
    sites = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        added = [t for t in newer.terms[j1:j2] if t not in CHANGE_TERMS]
        if i1 == i2 and not added:
            continue  # only a change mark added ("now", "since the rewrite" is not)
        sites.append((i1, i2, j1, j2))
    return sites


def _same_subject(newer: Wording, older: Wording, *, announced: bool) -> bool:
    """Rule 3: what the sentence names before its "is" kept (``_renames_subject``), the first
    content word kept and one thing changed (``_places``); where the newer text
    announces a change, what either text is about (its first content word) said by the other
    too (the rest may be reworded, and a clause may lead: "After the incident we raised the
    webhook dispatcher's retries …"), or one thing changed ("Maria owns the billing service."
    → "Tom owns the billing service now.")."""
    if _renames_subject(newer, older):
        return False
    places = _places(newer, older)
    one_change = sum(_changes(newer, older, gone, came) for gone, came in places) <= 1
    touches_subject = any(i1 == 0 or j1 == 0 for i1, _, j1, _ in _change_sites(newer, older))
    if not announced:
        return one_change and not touches_subject
    opening, said = newer.subject(), older.subject()
    # An opening word names the subject only when it is not the word the older text's value
    # follows ("We changed the port of the API" after "The admin dashboard runs on port 9090").
    beside = {w for v in older.values - newer.values for w in value_follows(older.terms, v)}
    return (
        opening is None
        or said is None
        or said in newer.distinct
        or (opening in older.distinct and opening not in beside)
        or one_change
    )


def _left_value(newer: Wording, older: Wording) -> Update | None:
    """The newer text says it left what the older one says ("we switched the frontend from
    Axios to fetch", "migrated the tests from Mocha and Chai to Vitest", "we dropped SQLAlchemy
    and use plain asyncpg queries", "Jenkins was retired")."""
    for match in _FROM_TO.finditer(newer.lowered):
        was = indexed_form(match.group(1))
        if was in older.distinct and was not in CHANGE_TERMS:
            return Update(evidence="value", old=(was,), new=())
    for pattern in _DROPPED:
        for match in pattern.finditer(newer.lowered):
            # Read lower-cased, a name loses its capitals: "sqlalchemy" is the older text's
            # value, though the term read from "SQLAlchemy" is not this word's stem.
            word = match.group(1).rstrip(".-/")
            was = word if word in older.values else indexed_form(word)
            if was in older.values:
                return Update(evidence="value", old=(was,), new=())
    return None


def _places(newer: Wording, older: Wording) -> list[tuple[list[str], list[str]]]:
    """The separate places where the two differ, as the content terms each loses and gains: runs
    of differing words with a word both keep between them, a stop word included ("The native
    language of Arjun Mehta is Arabic." → "… of Liam Walsh is French." changes two places, who
    and what, where the content terms alone run together). A change mark added alone is none."""
    matcher = difflib.SequenceMatcher(a=older.spaced, b=newer.spaced, autojunk=False)
    places = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        gone = [t for t in older.spaced[i1:i2] if t in older.distinct]
        came = [t for t in newer.spaced[j1:j2] if t in newer.distinct]
        if gone or any(t not in CHANGE_TERMS for t in came):
            places.append((gone, came))
    return places


def _renames_subject(newer: Wording, older: Wording) -> bool:
    """Whether each text names, before its first "is" (are, was, were), someone or something the
    other does not: that part of an English sentence says what it is about, as the first word of
    "Anna was born in Oslo." does ("The native language of Omar Haddad is Thai." / "… of Lucia
    Romero is Thai."; "The CEO of Microsoft is …" / "The CEO of Apple is …"). A number there is
    the value itself ("Port 9100 is where the websocket server accepts connections." → "Port
    3000 is …"), and a possessive names the same one ("Nora Lindqvist's favourite sport is …")."""
    said_new, said_old = _names_before_copula(newer), _names_before_copula(older)
    return bool(said_new - said_old) and bool(said_old - said_new)


def _names_before_copula(wording: Wording) -> frozenset[str]:
    cut = next((i for i, word in enumerate(wording.spaced) if word in COPULAS), 0)
    return frozenset(
        term.removesuffix("'s")
        for term in wording.spaced[:cut]
        if term in wording.values and not is_value(term)
    )


def _changes(newer: Wording, older: Wording, gone_terms: list[str], came_terms: list[str]) -> int:
    """How many things one place changes: a value, other words, or both (the service and its
    port: "for the ingest worker" → "for the CI image" beside "Node 18" → "Node 22")."""
    gone, came = set(gone_terms), set(came_terms) - CHANGE_TERMS
    values = bool((gone & older.values) or (came & newer.values))
    if values and len(gone) <= MAX_SLOT_TERMS and len(came) <= MAX_SLOT_TERMS:
        return 1  # a value with its unit ("30 days" → "12 hours")
    words = bool(gone - older.values) and bool(came - newer.values)
    return max(1, values + words)


def _replaced_span(newer: Wording, older: Wording, *, announced: bool) -> Update | None:
    """One run of the older text's words replaced by others, or words added where the newer
    text says that something changed ("…, Jenkins was retired")."""
    for i1, i2, j1, j2 in _change_sites(newer, older):
        gone = [t for t in older.terms[i1:i2] if t not in newer.distinct]
        came = [t for t in newer.terms[j1:j2] if t not in older.distinct | CHANGE_TERMS]
        if len(gone) > MAX_SLOT_TERMS or len(came) > MAX_SLOT_TERMS:
            continue  # a predicate rewritten, not a value: another attribute of the subject
        if not announced and any(_names_a_thing(t) for t in (*gone, *came)):
            continue  # one identifier for another: another thing (see _changed_slot)
        if came and (announced or len(gone) == len(came) == 1):
            return Update(evidence="replaced", old=tuple(gone), new=tuple(came))
    return None


def _denied(newer: Wording, older: Wording) -> Update | None:
    """A negation added or taken away where little else changed: each text says at most a
    slot's words and one more the other does not ("goes to Datadog" → "no longer goes to
    Datadog; we use Grafana Loki"). A reply that says much else beside a "can't" ("Wow! What
    did you get?" → "Wow, they look great! Can't wait to see them …") denies nothing."""
    said_new = newer.distinct - older.distinct - CHANGE_TERMS
    said_old = older.distinct - newer.distinct
    if max(len(said_new), len(said_old)) > MAX_SLOT_TERMS + 1:
        return None
    return _negation(newer, older)


def _negation(newer: Wording, older: Wording) -> Update | None:
    said_new = bool(newer.words & NEGATIONS)
    said_old = bool(older.words & NEGATIONS)
    if said_new == said_old:
        return None
    return Update(evidence="negation", old=(), new=())


def probably_updated(content: str, visible: Sequence[Hit], *, scope: Scope) -> Hit | None:
    """The visible memory ``content`` most probably updates: the nearest with text evidence
    that it restates it with another value, whose readers all see the new one (a note never
    stands in for a project memory), or None."""
    check = UpdateCheck(content)
    for hit in sorted(visible, key=lambda hit: hit.similarity, reverse=True):
        if scope == "conversation" and hit.memory.scope == "project":
            continue
        if check.of(hit.memory.content) is not None:
            return hit
    return None
