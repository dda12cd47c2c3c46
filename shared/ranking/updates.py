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
   its first words ("with webpack" → "with vite"); or a negation added or taken away ("goes to
   Datadog" → "no longer goes to Datadog").
3. **Not another subject.** In a short text, a change that takes in its first content word (the
   subject, as English puts it first) is another fact of the same pattern, unless the newer
   text says it changed ("now", "since", "moved", "switched", …); so is a text that changes two
   separate places of the sentence (the service *and* its port). A newer text that says it adds
   ("also", "too", "another") never updates.

The figures behind the thresholds are in docs/calibration.md (bench/supersede_pairs.py).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from shared.lexical.tokens import STOP_WORDS, indexed_form, is_name, terms
from shared.model import Hit, Scope

# The shared share of the shorter text's content words (rule 1).
MIN_SHARED: Final = 0.5
MIN_SHARED_LONG: Final = 0.25
# A text is long past this many content words: its slot rule needs two shared neighbours.
LONG_TERMS: Final = 24
# The most content words a replaced value may take on either side ("GitHub Actions").
MAX_SLOT_TERMS: Final = 2

Evidence = Literal["value", "replaced", "negation"]

_NUMBER_WORDS: Final = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    twenty thirty forty fifty sixty hundred thousand million billion once twice thrice half
    quarter double triple single daily weekly monthly yearly hourly nightly biweekly quarterly
    first second third fourth fifth last
    """.split()
)
_CALENDAR: Final = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec today tomorrow yesterday morning afternoon
    evening night noon midnight weekend weekday
    """.split()
)
_NEGATIONS: Final = frozenset(
    "no not never nothing none nobody nor without cannot can't don't doesn't didn't isn't "
    "aren't wasn't weren't won't wouldn't shouldn't hasn't haven't hadn't longer anymore".split()
)
# Words by which a newer text says that something changed: they let a change of the first
# content word stand as an update (rule 3).
_CHANGE_MARKS: Final = frozenset(
    """
    now since moved move switched switch changed change changes replaced replace migrated
    migrate upgraded upgrade upgrades downgraded downgrade renamed rename became become instead
    anymore longer new newer latest updated update currently took takes taken handed transferred
    reassigned raised lowered increased decreased reduced dropped rewrote rewrite rewritten
    retired deprecated replaced bumped scaled turned actually correction corrected relocated
    shortened extended lengthened doubled halved postponed rescheduled
    """.split()
)
# The same marks as the content terms spell them (stemmed: "since" is "sinc").
_CHANGE_TERMS: Final = frozenset(t for mark in _CHANGE_MARKS for t in terms(mark)) | _CHANGE_MARKS
# Verbs that open a sentence without naming what it is about ("We use Node 18 for …").
_LIGHT_VERBS: Final = frozenset(
    t
    for verb in "use uses hold holds have has make makes keep keeps run runs".split()
    for t in terms(verb)
)
# Words by which a newer text says it adds to what was said: never an update.
_ADDITION_MARKS: Final = frozenset("also too another additionally additional besides".split())
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+|\n+")
# What marks a line as code rather than prose.
_CODE: Final = re.compile(r"[{}();=<>`|\[\]]|^\s{2,}|\w\(|->|=>|::")
# "from X to", "from X and Y to": the value a newer text says it left.
_FROM_TO: Final = re.compile(r"\bfrom ([\w.\-/]+)(?: (?:and|or) [\w.\-/]+)? to\b")
_PIECE: Final = re.compile(r"[\w.\-/:#@+~']+")
# A digit or an identifier character: a term that carries one is a value.
_VALUE_MARK: Final = re.compile(r"[\d_./:#@+~]")
_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


class Update(msgspec.Struct, frozen=True, kw_only=True):
    """Why a text was taken to update another: the kind of evidence and the values it names
    (what the older text says, what the newer says instead; either may be empty)."""

    evidence: Evidence
    old: tuple[str, ...]
    new: tuple[str, ...]


class _Text:
    """One text as the rules read it: its content terms in order, which of them are values, and
    its plain words (negations and the change and addition marks are stop words to the terms)."""

    __slots__ = ("distinct", "lowered", "terms", "values", "words")

    def __init__(self, text: str) -> None:
        found: list[str] = []
        named: set[str] = set()
        for match in _PIECE.finditer(text):
            term = _term_of(match.group())
            if term is None:
                continue
            found.append(term)
            if _is_name(text, match.start(), match.end()):
                named.add(term)
        self.terms: tuple[str, ...] = tuple(found)
        self.distinct = frozenset(self.terms)
        self.values = frozenset(t for t in self.terms if t in named or _is_value(t))
        self.lowered = " ".join(text.replace("\u2019", "'").lower().split())
        self.words = frozenset(_WORD.findall(self.lowered))

    @property
    def long(self) -> bool:
        return len(self.distinct) > LONG_TERMS

    def subject(self) -> str | None:
        """The first content word that is neither a value, a change mark nor a light verb: what
        an English sentence is about, as near as words alone tell."""
        skipped = _CHANGE_TERMS | _LIGHT_VERBS
        return next((t for t in self.terms if not _is_value(t) and t not in skipped), None)

    def announces(self, older: _Text) -> bool:
        """Whether this text says that something changed, where ``older`` did not."""
        return bool(self.words & _CHANGE_MARKS - older.words)

    def adds_to(self, older: _Text) -> bool:
        """Whether this text says it adds to what was said ("also", "as well")."""
        return bool(self.words & _ADDITION_MARKS - older.words) or (
            "as well" in self.lowered and "as well" not in older.lowered
        )


@functools.lru_cache(maxsize=1 << 14)
def _term_of(piece: str) -> str | None:
    """The content term a piece of text stands for, or None for a stop word or punctuation
    (cached: a project's vocabulary repeats itself from one text to the next)."""
    piece = piece.strip(".:/#@+~-")
    if not piece or piece.lower() in STOP_WORDS:
        return None
    return indexed_form(piece)


def _is_name(text: str, start: int, end: int) -> bool:
    """A capitalised word inside a sentence (``PostgreSQL``, ``Datadog``, ``Tom``): a proper
    name. The first word of a sentence is capitalised whatever it is, so it is never one."""
    if text[start:end].islower():
        return False
    at = start - 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at >= 0 and text[at] not in ".!?:;\n"


def _is_value(term: str) -> bool:
    return (
        term in _NUMBER_WORDS
        or term in _CALENDAR
        or _VALUE_MARK.search(term) is not None
        or term.startswith("-")
    )


class UpdateCheck:
    """One newer text, read once, checked against any number of older ones."""

    __slots__ = ("_newer", "_sentences", "_text", "_words")

    def __init__(self, new: str) -> None:
        self._text = new
        self._newer = _Text(new)
        self._sentences: list[_Text] | None = None
        self._words = _plain_words(new)

    def of(self, old: str) -> Update | None:
        """The evidence that this text updates ``old`` (see the module docstring), or None."""
        if self._words.isdisjoint(_plain_words(old)):
            return None  # not one content word in common: read no further (most neighbours)
        newer, older = self._newer, _Text(old)
        if not newer.distinct or not older.distinct or newer.adds_to(older):
            return None
        if not (newer.long or older.long):
            return _short_update(newer, older)
        if _shared_enough(newer, older, MIN_SHARED_LONG) is None:
            return None
        if self._sentences is None:
            self._sentences = [_Text(s) for s in _prose_sentences(self._text)]
        return _sentence_update(self._sentences, old, older)


def _plain_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` but stop words: a first, cheap look at what two texts
    share (every rule needs at least one word in common)."""
    return set(_WORD.findall(text.lower())) - STOP_WORDS


def probable_update(new: str, old: str) -> Update | None:
    """The evidence that ``new`` updates ``old`` (see the module docstring), or None."""
    return UpdateCheck(new).of(old)


def _shared_enough(newer: _Text, older: _Text, share: float) -> frozenset[str] | None:
    """The content words the two share, when they are ``share`` of the fewer either says
    besides its values (and the newer besides its change marks); None when they are not."""
    shared = newer.distinct & older.distinct
    said_new = newer.distinct - _CHANGE_TERMS - newer.values
    said_old = older.distinct - older.values
    wording = min(len(said_new), len(said_old))
    if not wording or len(shared - older.values) < share * wording:
        return None
    return shared


def _sentence_update(sentences: Sequence[_Text], old: str, older: _Text) -> Update | None:
    """Between long texts: one sentence of the newer that updates one of the older's. Only
    prose is read (a line of code is no statement of fact), and only the newer's sentences
    that say something the older text does not (a value, a negation, a change), against the
    older sentences they share two content words with."""
    olds = [_Text(sentence) for sentence in _prose_sentences(old)]
    for said in sentences:
        if not (said.values - older.values or said.announces(older) or said.words & _NEGATIONS):
            continue
        for before in olds:
            if len(said.distinct & before.distinct - before.values) < 2:
                continue
            found = _short_update(said, before)
            if found is not None:
                return found
    return None


def _prose_sentences(text: str) -> list[str]:
    """The sentences of ``text`` written in words: code (brackets, operators) left out."""
    return [
        sentence
        for sentence in _SENTENCE_END.split(text)
        if sentence.strip() and not _CODE.search(sentence)
    ]


def _short_update(newer: _Text, older: _Text) -> Update | None:
    if newer.distinct == older.distinct:
        return _negation(newer, older)
    # "… from <what the older text says> to …" announces the change itself, and may reword
    # everything else: only the subject must be the same.
    moved = _moved_from(newer, older)
    if moved is not None:
        return moved if _same_subject(newer, older, announced=True) else None
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
    if newer.values and newer.values == older.values and not announced:
        return None  # the value stands: what changed is what the sentence is about
    return _replaced_span(newer, older, announced=announced) or _negation(newer, older)


def _changed_slot(
    newer: _Text, older: _Text, shared: frozenset[str], *, announced: bool
) -> Update | None:
    """A value of each text the other lacks, their neighbours sharing content words: the same
    slot holding another value. A short text may also drop a value or gain one ("every two
    weeks" → "every week"). Identifiers (``E1042``, ``PAY-4821``, ``a.b_c``) name things: a
    sentence that says the same of another one is about another thing ("checkout failed
    because of E1042" / "… of E1024"), unless the newer text says that something changed."""
    gone = older.values - newer.values
    came = newer.values - older.values
    if not announced:
        gone = frozenset(v for v in gone if not is_name(v))
        came = frozenset(v for v in came if not is_name(v))
    if not gone and not came:
        return None
    context_old = {v: _slot(older.terms, v) & shared for v in gone}
    context_new = {v: _slot(newer.terms, v) & shared for v in came}
    for old_value, around_old in context_old.items():
        for new_value, around_new in context_new.items():
            if around_old & around_new:
                return Update(evidence="value", old=(old_value,), new=(new_value,))
    if not (older.distinct - older.values) <= newer.distinct:
        return None
    if not (newer.distinct - newer.values - _CHANGE_TERMS) <= older.distinct:
        return None
    # All the older text said but its value is still said: a value dropped or one added.
    for value, around in context_old.items():
        if around and not came:
            return Update(evidence="value", old=(value,), new=())
    for value, around in context_new.items():
        if around and not gone:
            return Update(evidence="value", old=(), new=(value,))
    return None


def _before(terms: Sequence[str], value: str) -> set[str]:
    """The word each place ``value`` stands follows (values and change marks left out): the
    noun a value is given for ("port 9090", "Node 18")."""
    return {
        kept[-1]
        for i, term in enumerate(terms)
        if term == value
        and (kept := [t for t in terms[:i] if not _is_value(t) and t not in _CHANGE_TERMS])
    }


def _slot(terms: Sequence[str], value: str) -> set[str]:
    """The nearest word either side of each place ``value`` stands, values and change marks
    left out: what the value is the value of."""
    around: set[str] = set()
    for i, term in enumerate(terms):
        if term != value:
            continue
        before = [t for t in terms[:i] if not _is_value(t) and t not in _CHANGE_TERMS]
        after = [t for t in terms[i + 1 :] if not _is_value(t) and t not in _CHANGE_TERMS]
        around.update(before[-1:])
        around.update(after[:1])
    return around


def _change_sites(newer: _Text, older: _Text) -> list[tuple[int, int, int, int]]:
    """The runs of content words that differ between the two, in the older text's order."""
    matcher = difflib.SequenceMatcher(a=older.terms, b=newer.terms, autojunk=False)
    sites = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        added = [t for t in newer.terms[j1:j2] if t not in _CHANGE_TERMS]
        if i1 == i2 and not added:
            continue  # only a change mark added ("now", "since the rewrite" is not)
        sites.append((i1, i2, j1, j2))
    return sites


def _same_subject(newer: _Text, older: _Text, *, announced: bool) -> bool:
    """Rule 3: the first content word kept and one thing changed; where the newer text
    announces a change, what either text is about (its first content word) said by the other
    too (the rest may be reworded, and a clause may lead: "After the incident we raised the
    webhook dispatcher's retries …"), or one thing changed ("Maria owns the billing service."
    → "Tom owns the billing service now.")."""
    sites = _change_sites(newer, older)
    one_change = sum(_changes(newer, older, site) for site in sites) <= 1
    touches_subject = any(i1 == 0 or j1 == 0 for i1, _, j1, _ in sites)
    if not announced:
        return one_change and not touches_subject
    opening, said = newer.subject(), older.subject()
    # An opening word names the subject only when it is not the word the older text's value
    # follows ("We changed the port of the API" after "The admin dashboard runs on port 9090").
    beside = {w for v in older.values - newer.values for w in _before(older.terms, v)}
    return (
        opening is None
        or said is None
        or said in newer.distinct
        or (opening in older.distinct and opening not in beside)
        or one_change
    )


def _moved_from(newer: _Text, older: _Text) -> Update | None:
    """The newer text says it moved from what the older one says ("we switched the frontend
    from Axios to fetch", "migrated the tests from Mocha and Chai to Vitest")."""
    for match in _FROM_TO.finditer(newer.lowered):
        was = indexed_form(match.group(1))
        if was in older.distinct and was not in _CHANGE_TERMS:
            return Update(evidence="value", old=(was,), new=())
    return None


def _changes(newer: _Text, older: _Text, site: tuple[int, int, int, int]) -> int:
    """How many things one site changes: a value, other words, or both (the service and its
    port: "for the ingest worker" → "for the CI image" beside "Node 18" → "Node 22")."""
    i1, i2, j1, j2 = site
    gone, came = set(older.terms[i1:i2]), set(newer.terms[j1:j2]) - _CHANGE_TERMS
    values = bool((gone & older.values) or (came & newer.values))
    words = bool(gone - older.values) and bool(came - newer.values)
    return max(1, values + words)


def _replaced_span(newer: _Text, older: _Text, *, announced: bool) -> Update | None:
    """One run of the older text's words replaced by others, or words added where the newer
    text says that something changed ("…, Jenkins was retired")."""
    for i1, i2, j1, j2 in _change_sites(newer, older):
        gone = [t for t in older.terms[i1:i2] if t not in newer.distinct]
        came = [t for t in newer.terms[j1:j2] if t not in older.distinct | _CHANGE_TERMS]
        if len(gone) > MAX_SLOT_TERMS or len(came) > MAX_SLOT_TERMS:
            continue  # a predicate rewritten, not a value: another attribute of the subject
        if not announced and any(is_name(t) for t in (*gone, *came)):
            continue  # one identifier for another: another thing (see _changed_slot)
        if came and (announced or len(gone) == len(came) == 1):
            return Update(evidence="replaced", old=tuple(gone), new=tuple(came))
    return None


def _negation(newer: _Text, older: _Text) -> Update | None:
    said_new = bool(newer.words & _NEGATIONS)
    said_old = bool(older.words & _NEGATIONS)
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
