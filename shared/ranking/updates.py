"""Does a new fact update an older one? Text evidence only, no model: the two say the same thing
about the same subject, and one value in it changed (pure).

"The frontend is built with webpack." and "The frontend is built with vite since the rewrite."
share their subject and all but one slot; "Anna was born in Oslo." and "Omar was born in Oslo."
share a sentence pattern, but what changed is who the sentence is about. The rules:

1. **Enough in common.** The content words (the keyword leg's terms: stop words left out, plain
   words stemmed) the two share are at least half of the shorter one's, or, between long texts,
   a quarter: a chat message that revises a figure rewords everything around it. A newer text
   that says nothing but the older's words, its new values and that something changed has
   enough in common, however the older reads its words ("CI was migrated to GitHub Actions.");
   so does a short text that says a name of the older was left and gives another in its place
   ("we moved login over to Clerk, Auth0 contract ended"), or that it dropped the value the
   older gives ("ruff replaced flake8 and isort": ``shared.ranking.terse_notes``).
2. **A value changed, in place.** A number, a number word, a day, a month, a version or an
   identifier that one text holds and the other does not, standing among words both hold (its
   *slot*: "port 8080" and "port 9090"); or, in a short text, one run of words replaced after
   its first words ("with webpack" → "with vite"); or, where the newer text says it changed,
   a value lost for one of its kind gained (a figure for a figure, a name for a name: hours
   that become a provider's name are another attribute); or a negation added or taken away
   where little else changed ("goes to Datadog" → "no longer goes to Datadog"). Between two
   facts of one short sentence that share fewer words, a terse note of a change ("resized the
   search nodes to r6g.xlarge") that says again what the older is about, keeps another of its
   words and gives a value of the kind the older loses (``shared.ranking.terse_notes``).
3. **Not another subject** (``shared.ranking.same_subject``). In a short text, a change that takes
   in its first content word (the subject, as English puts it first) is another fact of the same
   pattern, unless the newer text says it changed ("now", "since", "moved", "switched", …, or a
   phrase read as one of them: "went up to $15", "these days", "starting next week"); so is a
   text that changes two separate places of the sentence (the service *and* its port, or a name and
   the value after its "is"), and, announced or not, one that names before its first "is" someone
   the other does not ("The native language of Omar Haddad is Thai." / "… of Lucia Romero is
   Thai."). A newer text that says it adds ("also", "too", "another") never updates, and one
   identifier for another (``E1042`` → ``E1024``, ``--drain-cache`` → ``--drain-queue``) is another
   thing unless the change is announced; an address (a host name, a URL) is where something is
   reached, so another one in its place is a value that changed. A value with its unit ("30 days")
   is one value. A fact told the other way round leads with its value and names what the older
   was about after it ("Vite builds the frontend."): the same subject
   (``shared.ranking.turned_around``).
4. **What is said, not to whom.** A text of questions alone ("Is the standup still on
   Monday?") states nothing that an update could change or be read from, and a name the text
   speaks to ("Hey Mel!", "That's great, Ben!") is not read: another one there is the same small
   talk to someone else.
5. **Long texts, sentence by sentence.** Between texts past ``LONG_TERMS`` content words, one
   prose sentence of the newer must update one of the older's by the rules above; code (a line
   with brackets or operators, a fenced block) and headings are never read.
   This reading tells dedup that a long text which revises another is no duplicate of it;
   remember links texts read whole only (``first_updated``).

How a text is read (its terms, values and marks) is ``shared.ranking.wording``; what changed
in place (rule 2's slot, run of words and negation), ``shared.ranking.changed_in_place``.

The figures behind the thresholds are in docs/calibration.md (bench/supersede_pairs.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from shared.model import Hit, Memory, Scope
from shared.ranking.changed_in_place import changed_slot, denied, negation, replaced_span
from shared.ranking.chat_turns import speaker, unaddressed, unlabelled
from shared.ranking.evidence import Update
from shared.ranking.left_values import left_value
from shared.ranking.measures import swapped_in_kind
from shared.ranking.other_times import of_another_time, sentence_of_another_time
from shared.ranking.same_subject import change_sites, same_subject
from shared.ranking.terse_notes import (
    announced_swap,
    name_left_for_another,
    one_fact,
    value_dropped,
)
from shared.ranking.turned_around import turned_around
from shared.ranking.values import is_figure, is_file
from shared.ranking.wording import (
    CHANGE_TERMS,
    NEGATIONS,
    Wording,
    content_terms,
    prose_sentences,
    statements,
    states_something,
)

# The shared share of the shorter text's content words (rule 1).
MIN_SHARED: Final = 0.5
MIN_SHARED_LONG: Final = 0.25
# How many older texts' readings are kept: remember reads each new memory against its nearest
# ones, and the nearest of one memory are often the nearest of the next (a conversation told
# in order, a project's facts on one subject).
READ_OLDER: Final = 512


class UpdateCheck:
    """One newer text, read once, checked against any number of older ones."""

    __slots__ = (
        "_as_written",
        "_labelled",
        "_newer",
        "_one_fact",
        "_sentences",
        "_speaker",
        "_stated",
        "_states",
        "_terms",
        "_text",
        "_written",
    )

    def __init__(self, new: str, *, labelled: bool = False) -> None:
        new = unaddressed(new)
        # A speaker label both turns share says nothing of what either is about; two speakers'
        # turns are read with their labels, who says each being its first word.
        self._written = new
        self._labelled = labelled
        self._speaker = None if labelled else speaker(new)
        self._as_written: UpdateCheck | None = None
        if self._speaker is not None:
            new = unlabelled(new)
        self._text = new
        self._newer = Wording(new)
        self._sentences: list[Wording] | None = None
        self._stated: frozenset[str] | None = None
        self._terms = content_terms(new)
        self._states = states_something(new)
        self._one_fact = one_fact(new, self._newer)

    @property
    def long(self) -> bool:
        """Whether this text is long: read sentence by sentence (rule 5)."""
        return self._newer.long

    def nearest_updated(self, visible: Sequence[Hit], *, scope: Scope) -> Hit | None:
        """The visible memory this text most probably updates: the nearest with text evidence
        that it restates it with another value, whose readers all see the new one (a note never
        stands in for a project memory), or None."""
        nearest_first = sorted(visible, key=lambda hit: hit.similarity, reverse=True)
        found = self.first_updated([hit.memory for hit in nearest_first], scope=scope)
        return next((hit for hit in nearest_first if hit.memory is found), None)

    def first_updated(self, memories: Sequence[Memory], *, scope: Scope) -> Memory | None:
        """The first of ``memories``, in their order, that this text probably updates, as
        ``nearest_updated`` reads each, or None. Only texts read whole are linked: between long
        texts (rule 5) a sentence that reads as a revision of another is far more often a
        worked example of another case or the same advice reworded, and recall follows a link
        whatever the question, bringing the newer text in and labelling the older outdated.
        Recall's own newer-first rules, which read the question, order long texts
        (docs/calibration.md)."""
        if self.long:
            return None  # what ``of`` would answer for each: no neighbour is read
        for memory in memories:
            if scope == "conversation" and memory.scope == "project":
                continue
            if self.of(memory.content, long_texts=False) is not None:
                return memory
        return None

    def of(self, old: str, *, long_texts: bool = True) -> Update | None:
        """The evidence that this text updates ``old`` (see the module docstring), or None;
        without ``long_texts``, None for a pair either text of which is long."""
        said_by = speaker(old)
        if said_by is not None and self._speaker is not None and said_by != self._speaker:
            if self._as_written is None:
                self._as_written = UpdateCheck(self._written, labelled=True)
            return self._as_written.of(old, long_texts=long_texts)
        found = self._evidence(old, long_texts=long_texts)
        return None if found is not None and self._only_asked(found) else found

    def _only_asked(self, found: Update) -> bool:
        """Whether every new value of ``found`` stands in a question of the newer text only:
        asked about ("Should we move to Python 3.12? The perf numbers look decent."), not said
        to be so."""
        if not found.new or "?" not in self._text:
            return False
        if self._stated is None:
            self._stated = Wording(statements(self._text)).distinct
        return self._stated.isdisjoint(found.new)

    def _evidence(self, written: str, *, long_texts: bool) -> Update | None:
        read = _older(written, unlabel=self._speaker is not None)
        old = read.text
        if not (self._states and read.states):
            return None  # questions alone: nothing stated to update or be updated
        if self._terms.isdisjoint(read.terms):
            return None  # not one content term in common: read no further (most neighbours)
        newer, older = self._newer, read.whole()
        if older is None:
            if not long_texts:
                return None
            older = Wording(old)
        if not newer.distinct or not older.distinct or newer.adds_to(older):
            return None
        if not (newer.long or older.long):
            if of_another_time(self._text, old):
                return None  # what was so before, may be one day or is so once: not now
            found = (
                _short_update(newer, older)
                or name_left_for_another(newer, older)
                or value_dropped(newer, older)
            )
            if found is None and self._one_fact and one_fact(old, older):
                found = announced_swap(newer, older)
                if found is None and not self._labelled:
                    # A labelled turn opens with who speaks, not with what it is about.
                    found = turned_around(newer, older)
            return found
        if not long_texts or not long_texts_share(newer, older):
            return None
        if self._sentences is None:
            self._sentences = [Wording(s) for s in prose_sentences(self._text)]
        return _sentence_update(self._sentences, old, older)


class _Older:
    """An older text as every check first reads it: without the names it speaks to (and its
    speaker's label, for a check that leaves it off), whether it states something, its content
    terms and, once a pair gets that far, its whole reading. A long text's reading is not kept
    (it holds every term of the text), only that it is long."""

    __slots__ = ("_long", "_wording", "states", "terms", "text")

    def __init__(self, written: str, *, unlabel: bool) -> None:
        text = unaddressed(written)
        self.text = unlabelled(text) if unlabel else text
        self.states = states_something(self.text)
        self.terms = content_terms(self.text)
        self._long: bool | None = None  # not read whole yet
        self._wording: Wording | None = None

    def whole(self) -> Wording | None:
        """The text as the rules read it, or None for a long text (read sentence by sentence,
        rule 5)."""
        if self._long is None:
            wording = Wording(self.text)
            # The reading before the mark that it was read: a reader never finds one without
            # the other.
            self._wording = None if wording.long else wording
            self._long = wording.long
        return self._wording


@functools.lru_cache(maxsize=READ_OLDER)
def _older(written: str, *, unlabel: bool) -> _Older:
    return _Older(written, unlabel=unlabel)


def probable_update(new: str, old: str) -> Update | None:
    """The evidence that ``new`` updates ``old`` (see the module docstring), or None."""
    return UpdateCheck(new).of(old)


def linked_update(new: str, old: str) -> Update | None:
    """The evidence on which remember links ``new`` to ``old`` by the word rules: that of
    ``probable_update`` between texts read whole, None where either is long
    (``first_updated``)."""
    return UpdateCheck(new).of(old, long_texts=False)


def long_texts_share(newer: Wording, older: Wording) -> bool:
    """Whether two texts share enough content words to be about one thing, by the share asked
    of long texts (rule 1): a quarter."""
    return _shared_enough(newer, older, MIN_SHARED_LONG) is not None


def _shared_enough(newer: Wording, older: Wording, share: float) -> frozenset[str] | None:
    """The content words the two share, when they are ``share`` of the fewer either says
    besides its values (and the newer besides its change marks); None when they are not."""
    shared = newer.distinct & older.distinct
    said_new = newer.distinct - CHANGE_TERMS - newer.values
    said_old = older.distinct - older.values
    wording = min(len(said_new), len(said_old))
    # The newer says nothing the older did not but its new values and change marks ("Our Python
    # version is 3.10." → "We upgraded Python to 3.12."): what it restates is all it is about,
    # where every word of one text is a name, or where it says that something changed, however
    # the older reads its words ("Our CI runs on Jenkins." → "CI was migrated to GitHub
    # Actions.", "CI" a name inside the older sentence only).
    restated = newer.distinct - CHANGE_TERMS - (newer.values - older.values)
    if restated and restated <= shared and (not wording or newer.announces(older)):
        return shared
    if not wording:
        # Every word a name ("The CEO of Microsoft is Satya Nadella."): the names are the words.
        enough = len(shared) >= share * min(len(newer.distinct), len(older.distinct))
        return shared if enough else None
    if len(shared - older.values) < share * wording:
        return None
    return shared


def _sentence_update(sentences: Sequence[Wording], old: str, older: Wording) -> Update | None:
    """Between long texts: one sentence of the newer that updates one of the older's. Only
    prose is read (a line of code is no statement of fact), and only the newer's sentences
    that say something the older text does not (a value, a negation, a change), against the
    older sentences they share two content words with; a sentence said of another time than
    now (``shared.ranking.other_times``) updates none of them."""
    olds = [Wording(sentence) for sentence in prose_sentences(old)]
    for said in sentences:
        if not (said.values - older.values or said.announces(older) or said.words & NEGATIONS):
            continue
        for before in olds:
            if len(said.distinct & before.distinct - before.values) < 2:
                continue
            if sentence_of_another_time(said.lowered, before.lowered):
                continue  # "Back in 2021, the API listened on 9090.": not what is so now
            found = _short_update(said, before)
            # Words added beside a change mark, no value gained or lost ("… makes a lot more
            # sense now" after "That makes sense!"): what a chat says in passing, not a change.
            if found is not None and (
                found.old
                or found.evidence != "replaced"
                or set(found.new) & said.values
                or before.values - said.values
            ):
                return found
    return None


def _short_update(newer: Wording, older: Wording) -> Update | None:
    if newer.distinct == older.distinct:
        return negation(newer, older)
    # "… from <what the older text says> to …", "dropped <it>" announce the change itself, and
    # may reword everything else: only the subject must be the same.
    left = left_value(newer, older)
    if left is not None:
        if not same_subject(newer, older, announced=True):
            return None
        return Update(evidence="value", old=(left,), new=())
    shared = _shared_enough(newer, older, MIN_SHARED)
    if shared is None:
        return None
    announced = newer.announces(older)
    if not same_subject(newer, older, announced=announced):
        return None
    slot = changed_slot(newer, older, shared, announced=announced)
    if slot is not None:
        return slot
    gone, came = older.values - newer.values, newer.values - older.values
    if announced and _of_one_kind(newer, older, gone, came):
        return Update(evidence="value", old=tuple(sorted(gone)), new=tuple(sorted(came)))
    if not announced and _value_stands(newer, older):
        return None  # what changed is what the sentence is about
    return replaced_span(newer, older, announced=announced) or denied(newer, older)


def _of_one_kind(
    newer: Wording, older: Wording, gone: frozenset[str], came: frozenset[str]
) -> bool:
    """Whether a value the older text lost and one the newer gained are of one kind: a figure
    (a number, a day, a time) for a figure of the same measure, a name (or an identifier) for
    a name. Opening hours that become a provider's name are two attributes of one subject
    ("The support phone line is open 9 to 5." / "Phone support is handled through Dialpad
    now."), as are a supported version and a download's size ("iOS 15" / "48 MB"), and a tool
    and a file ("Webpack" / "package-lock.json")."""
    return swapped_in_kind(older, gone, newer, came, _figure_or_file)


def _figure_or_file(term: str) -> tuple[bool, bool]:
    return is_figure(term), is_file(term)


def _value_stands(newer: Wording, older: Wording) -> bool:
    """Both texts hold the same values and one of them stands after where the words change:
    the sentence says the same value of something else ("We deploy the billing service on
    Friday." / "… the search service on Friday."). A value before the change belongs to the
    subject ("The admin UI is built with parcel." → "… with vite.")."""
    if not newer.values or newer.values != older.values:
        return False
    sites = change_sites(newer, older)
    if not sites:
        return True
    first_change = min(j1 for _, _, j1, _ in sites)
    return any(term in newer.values for term in newer.terms[first_change:])


def probably_updated(content: str, visible: Sequence[Hit], *, scope: Scope) -> Hit | None:
    """The visible memory ``content`` most probably updates (``UpdateCheck.nearest_updated``)."""
    return UpdateCheck(content).nearest_updated(visible, scope=scope)


def first_updated(content: str, memories: Sequence[Memory], *, scope: Scope) -> Memory | None:
    """The first of ``memories``, in their order, that ``content`` probably updates
    (``UpdateCheck.first_updated``)."""
    return UpdateCheck(content).first_updated(memories, scope=scope)
