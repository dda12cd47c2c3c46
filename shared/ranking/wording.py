"""How the probable-update rules read a text (``shared.ranking.updates``): its content terms
in order, which of them are values (numbers, days, dates, versions, identifiers, names inside a
sentence), its plain words, and the words by which English says that something changed or was
added; its prose sentences; and where a value stands among its words (pure)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

from shared.model.tokens import STOP_WORDS, indexed_form, terms
from shared.ranking.change_phrases import phrases_as_marks
from shared.ranking.values import is_number_word, is_value

NEGATIONS: Final = frozenset(
    "no not never nothing none nobody nor without cannot can't don't doesn't didn't isn't "
    "aren't wasn't weren't won't wouldn't shouldn't hasn't haven't hadn't longer anymore".split()
)
# Words by which a newer text says that something changed: they let a change of the first
# content word stand as an update (rule 3).
CHANGE_MARKS: Final = frozenset(
    """
    now since moved move switched switch changed change changes replaced replace migrated
    migrate upgraded upgrade upgrades downgraded downgrade renamed rename became become instead
    anymore longer new newer latest updated update currently took takes taken handed transferred
    reassigned raised lowered increased decreased reduced dropped rewrote rewrite rewritten
    retired deprecated replaced bumped scaled turned actually correction corrected relocated
    shortened extended lengthened doubled halved postponed rescheduled rebuilt
    redesigned reworked swapped reverted nowadays ditched abandoned consolidated
    """.split()
)
# The same marks as the content terms spell them (stemmed: "since" is "sinc").
CHANGE_TERMS: Final = frozenset(t for mark in CHANGE_MARKS for t in terms(mark)) | CHANGE_MARKS
# The marks that tell of a change done: the only ones a question says ("Now that we moved to
# Postgres, how do I tune vacuum?"). One that asks whether to change ("Is it time to migrate to
# KRaft?", "Should I use CSV instead?") says nothing changed.
DONE_MARKS: Final = frozenset(m for m in CHANGE_MARKS if m.endswith("ed")) | frozenset(
    "took taken became rewrote rewritten rebuilt".split()
)
# Verbs that open a sentence without naming what it is about ("We use Node 18 for …").
LIGHT_VERBS: Final = frozenset(
    t
    for verb in "use uses hold holds have has make makes keep keeps run runs".split()
    for t in terms(verb)
)
# The verbs before which an English sentence names what it is about ("The native language of
# Omar Haddad is …", "The company retreat will be in …"): stop words, so read from
# ``Wording.spaced``.
COPULAS: Final = frozenset({"is", "are", "was", "were", "be"})


# Words by which a newer text says it adds to what was said: never an update.
ADDITION_MARKS: Final = frozenset("also too another additionally additional besides".split())
# A short text also adds with "adding" and "extra" ("We're adding an extra design review slot
# Fridays."); a long one says them of what it builds, beside what it states.
_SHORT_ADDITION_MARKS: Final = ADDITION_MARKS | {"adding", "extra"}
# "too" before a word is a degree ("too many people were late", "too slow"), not an addition;
# before a word that joins another clause ("I'm into cars too and love …") it ends its own.
_DEGREE_TOO: Final = re.compile(
    r"\btoo (?!(?:and|or|but|so|because|since|as|with|for|then|if|when|though|while)\b)"
    r"(?=[^\W\d_])"
)
# A clause that opens a sentence with what came first ("After adding back-translation
# augmentation, the classifier gets 88% accuracy"): what it adds is the cause of what the
# sentence says now, not one more of it.
_LEADING_CAUSE: Final = re.compile(r"^\W*(?:after|since|once|now that|thanks to)\b[^,;]*[,;]")
# Verbs in the past tense that report something added or made, not something changed.
ADDITION_VERBS: Final = frozenset("added created introduced included enabled started".split())
# Who a note of something done may open with before its verb.
_REPORTERS: Final = frozenset("we i i've we've just finally".split())
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+|\n+")
_SENTENCE_SPLIT: Final = re.compile(rf"({_SENTENCE_END.pattern})")
# A fenced block of code, to its closing fence or the end of the text.
_FENCED: Final = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# What marks a line as code rather than prose.
_CODE: Final = re.compile(r"[{}();=<>`|\[\]]|^\s{2,}|\w\(|->|=>|::")
_PIECE: Final = re.compile(r"[\w.\-/:#@+~']+")
_NON_WORD: Final = re.compile(r"[\W_]+")
_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_POSSESSIVE_ENDS: Final = ("'s", "\u2019s")
# What a channel or a handle opens with ("#ops-pager", "@platform-team"): it names one place,
# a value that may change, however it is cased.
_HANDLE_MARKS: Final = "#@"


# A text is long past this many content words: it is read sentence by sentence.
LONG_TERMS: Final = 24
# The most content words of a fact told in a sentence or so ("standup is 9:30 every day"), as
# opposed to a chat turn, which says more around what it shares with another text.
FACT_TERMS: Final = 12


def lowered(text: str) -> str:
    """``text`` lower-cased, its apostrophes straight and its runs of space one space: as the
    rules' patterns read it."""
    return " ".join(text.replace("\u2019", "'").lower().split())


class Wording:
    """One text as the rules read it: its content terms in order, which of them are values, and
    its plain words (negations and the change and addition marks are stop words to the terms).
    ``spaced``: the terms with the stop words between them, as written (lower-cased), so that
    two changes a stop word keeps apart ("of Arjun Mehta is Arabic") read as two places."""

    __slots__ = ("distinct", "lowered", "marks", "spaced", "terms", "values", "words")

    def __init__(self, text: str) -> None:
        self._read_words(text)
        written = text
        text = phrases_as_marks(text, self.words)
        if text != written:
            self._read_words(text)  # the marks the phrases were read as
        found: list[str] = []
        spaced: list[str] = []
        named: set[str] = set()
        # Number words written as such: "lasts" and "seconds" share a term with "last" and
        # "second", but say no number.
        counted: set[str] = set()
        for match in _PIECE.finditer(text):
            piece = match.group()
            term = _term_of(piece)
            if term is None and len(piece) <= 2 and piece[0].isupper():
                term = _label_of(piece, text, match.start())
            if term is None:
                word = piece.strip(".:/#@+~-").lower()
                if word in STOP_WORDS:
                    spaced.append(word)
                continue
            found.append(term)
            spaced.append(term)
            if piece.strip(".:/#@+~-'").lower() == term:
                counted.add(term)
            if _is_name(piece, text, match.start()) or piece[:1] in _HANDLE_MARKS:
                named.add(term)
        self.terms: tuple[str, ...] = tuple(found)
        self.spaced: tuple[str, ...] = tuple(spaced)
        self.distinct = frozenset(self.terms)
        self.values = frozenset(
            t
            for t in self.distinct
            if t in named or (is_value(t) and (t in counted or not is_number_word(t)))
        )

    def _read_words(self, text: str) -> None:
        self.lowered = lowered(text)
        self.words = frozenset(_WORD.findall(self.lowered))
        self.marks = _change_marks(self.lowered, self.words)

    @property
    def long(self) -> bool:
        return len(self.distinct) > LONG_TERMS

    def subject(self) -> str | None:
        """The first content word that is neither a value, a change mark nor a light verb: what
        an English sentence is about, as near as words alone tell."""
        skipped = CHANGE_TERMS | LIGHT_VERBS
        return next((t for t in self.terms if not is_value(t) and t not in skipped), None)

    def announces(self, older: Wording) -> bool:
        """Whether this text says that something changed, where ``older`` did not."""
        return bool(self.marks - older.words)

    def reported_action(self) -> str | None:
        """The term of the past-tense verb the text opens on, after its subject pronoun at most
        ("bumped all services to node 20", "We resized the node group to m6i.xlarge"): a note of
        something done to what it names, which is a change. None for any other opening, and
        for a verb that reports something added or made ("added", "created")."""
        words = self.lowered.split(maxsplit=2)
        if words and words[0] in _REPORTERS:
            words = words[1:]
        if not words:
            return None
        opening = words[0].strip(".,;:!")
        if (
            len(opening) <= 4
            or not opening.endswith("ed")
            or opening in STOP_WORDS
            or opening in ADDITION_VERBS
        ):
            return None
        return _term_of(opening)

    def adds_to(self, older: Wording) -> bool:
        """Whether this text says it adds to what was said ("also", "as well")."""
        # A fact's "too" before a word is a degree; a long text's is read wherever it stands,
        # since which sentence says it, and of what, is not read here, and a long turn that
        # adds a word to another's is as often another moment of the talk as a revision.
        said = self.words & ADDITION_MARKS if self.long else addition_marks(self.lowered)
        return bool(said - older.words) or (
            "as well" in self.lowered and "as well" not in older.lowered
        )


# Short forms a project's notes use for the word they write out elsewhere ("db backups" and
# "database backups" are one subject), as the rules read them; only those that stand for one
# word ("dev" may be a developer or development, "req" a request or a requirement).
_SHORT_FORMS: Final = dict(
    pair.split(":")
    for pair in (
        "db:database dbs:databases prod:production k8s:kubernetes repo:repository "
        "repos:repositories config:configuration configs:configurations env:environment "
        "envs:environments svc:service svcs:services infra:infrastructure "
        "deps:dependencies msg:message msgs:messages perf:performance "
        "notif:notification notifs:notifications stg:staging"
    ).split()
)
_WRITTEN_OUT: Final = {
    indexed_form(short): indexed_form(word) for short, word in _SHORT_FORMS.items()
}


@functools.lru_cache(maxsize=1 << 14)
def _term_of(piece: str) -> str | None:
    """The content term a piece of text stands for, or None for a stop word or punctuation
    (cached: a project's vocabulary repeats itself from one text to the next)."""
    piece = piece.rstrip(".:/#@+~-")
    flag = piece.lstrip("-")
    if piece != flag and flag[:1].isalpha():
        return piece.lower()  # a command-line flag names one thing ("--drain-cache"), as written
    piece = flag.lstrip(".:/#@+~")
    if not piece or piece.lower() in STOP_WORDS:
        return None
    if piece[:1].isupper() and piece[-2:] in _POSSESSIVE_ENDS:
        # A name's possessive names its owner ("Ledgerly's backend" is Ledgerly's), as the
        # keyword leg reads it; a contraction ("Let's", "It's") is a stop word, seen above.
        # Lower-cased, "the patient's" or "support's" in a chat turn links more small talk
        # than it finds revisions (docs/calibration.md).
        piece = piece[:-2]
    term = indexed_form(piece)
    return _WRITTEN_OUT.get(term, term)


def _label_of(piece: str, text: str, start: int) -> str | None:
    """The term of a capital letter that labels something inside a sentence ("Hall D", "plan
    B"), or None: lower-cased it is a stop word ("d" of "I'd"), but a room, an option or a
    grade is a value that may change. "I" is the one capital letter that is a word."""
    letter = piece.rstrip(".:/#@+~-")
    if len(letter) != 1 or not letter.isupper() or letter == "I":
        return None
    return letter.lower() if _is_name(letter, text, start) else None


def _is_name(piece: str, text: str, start: int) -> bool:
    """Whether ``piece``, standing at ``start`` in ``text``, is a capitalised word inside a
    sentence (``PostgreSQL``, ``Datadog``, ``Tom``): a proper name. The first word of a sentence
    is capitalised whatever it is, so it is never one; a lower-case word never is either."""
    if piece.islower():
        return False
    at = start - 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at >= 0 and text[at] not in ".!?:;\n"


def addition_marks(text: str) -> frozenset[str]:
    """The words of ``text`` that say it adds to what was said ("also", "another", "too" at
    the end of a clause), outside a clause that opens it with what came first."""
    lowered = _LEADING_CAUSE.sub("", text.lower(), count=1)
    return _SHORT_ADDITION_MARKS.intersection(_WORD.findall(_DEGREE_TOO.sub("", lowered)))


def word_set(text: str) -> frozenset[str]:
    """Lower-cased runs of Unicode letters and digits (works for Korean as well as English)."""
    return frozenset(word for word in _NON_WORD.split(text.lower()) if word)


def written_out(words: frozenset[str]) -> frozenset[str]:
    """``words`` (``word_set``'s) with each short form written out ("svc" as "service")."""
    if words.isdisjoint(_SHORT_FORMS):
        return words
    return frozenset(_SHORT_FORMS.get(word, word) for word in words)


def content_terms(text: str) -> frozenset[str]:
    """The content terms of ``text``, as ``Wording.distinct`` holds them, without reading which
    are names or values: a first, cheap look at what two texts share (every rule needs one term
    in common). Terms, not words: "Errors are tracked" and "Our error tracker" share "error"."""
    return frozenset(term for piece in _PIECE.findall(text) if (term := _term_of(piece)))


def is_one_sentence(text: str) -> bool:
    """Whether ``text`` is a single sentence (a clause after a comma or a semicolon included)."""
    return sum(1 for sentence in _SENTENCE_END.split(text.strip()) if sentence) == 1


def prose_sentences(text: str) -> list[str]:
    """The sentences of ``text`` written in words: code (brackets, operators, a fenced block's
    lines) and headings ("### Corrected Code", or a comment line) left out."""
    if "```" in text:
        text = _FENCED.sub("\n", text)
    return [
        sentence
        for sentence in _SENTENCE_END.split(text)
        if sentence.strip() and not _CODE.search(sentence) and not sentence.lstrip().startswith("#")
    ]


def _change_marks(lowered: str, words: frozenset[str]) -> frozenset[str]:
    """The change marks a text says: those of its statements, and of its questions only those
    that tell of a change done (``DONE_MARKS``)."""
    marks = words & CHANGE_MARKS
    if not marks or "?" not in lowered:
        return marks
    stated = frozenset(_WORD.findall(statements(lowered)))
    return marks & (stated | DONE_MARKS)


def states_something(text: str) -> bool:
    """Whether ``text`` holds a sentence that is not a question: a question states nothing that
    can change or be changed ("Wow! What did you get?" holds only an exclamation besides)."""
    if "?" not in text:
        return True
    return any(
        sentence.strip() and not sentence.rstrip().endswith("?")
        for sentence in _SENTENCE_END.split(text)
    )


def statements(text: str) -> str:
    """``text`` without its questions ("Should we move to Python 3.12? The perf numbers look
    decent." says only that the numbers look decent)."""
    if "?" not in text:
        return text
    pieces = _SENTENCE_SPLIT.split(text)
    return "".join(
        sentence + after
        for sentence, after in zip(pieces[::2], [*pieces[1::2], ""], strict=True)
        if not sentence.rstrip().endswith("?")
    )


def value_follows(wording: Wording, value: str) -> set[str]:
    """The word each place ``value`` stands after (values, change marks and stop words left
    out): the noun a value is given for ("port 9090", "Node 18"). Not across an "is": the word
    before it is what the sentence is about ("attachments is 20 MB")."""
    spaced, terms = wording.spaced, wording.distinct
    follows = set()
    for i, word in enumerate(spaced):
        if word != value:
            continue
        for before in reversed(spaced[:i]):
            if before in COPULAS:
                break
            if before in terms and not is_value(before) and before not in CHANGE_TERMS:
                follows.add(before)
                break
    return follows


def value_slot(terms: Sequence[str], value: str) -> set[str]:
    """The nearest word either side of each place ``value`` stands, values and change marks
    left out: what the value is the value of."""
    around: set[str] = set()
    for i, term in enumerate(terms):
        if term != value:
            continue
        before = [t for t in terms[:i] if not is_value(t) and t not in CHANGE_TERMS]
        after = [t for t in terms[i + 1 :] if not is_value(t) and t not in CHANGE_TERMS]
        around.update(before[-1:])
        around.update(after[:1])
    return around
