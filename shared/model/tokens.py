"""Words as the keyword leg indexes and queries them: identifiers kept whole and findable.

A text is split on whitespace and on punctuation that never sits inside an identifier; what is
left of each piece, lower-cased, is a *whole* term (``e1042``, ``snake_case``, ``a.b_c``,
``src/app/main.py``, ``3.12``, ``--local``, ``jira-1234``). A whole term that joins several
parts also yields each part (``snake``, ``case``; ``src``, ``app``, ``main``, ``py``), and a
CamelCase word its humps (``HttpClient`` → ``httpclient``, ``http``, ``client``), so a query
may name an identifier either way. Common English words are dropped, but never a whole term
that carries a digit or an identifier character. A plain word of four letters or more (all
letters, no inner capital) is indexed and queried as its Snowball (Porter2) English stem
(``embeddings``, ``embedding`` → ``embed``; ``changed``, ``change`` → ``chang``); identifiers,
CamelCase words and short words never are (``ios`` → ``io`` would mangle one), nor the parts
and humps of an identifier: stemmed as words, long notes full of paths (``apps/web``) outrank a
short answer. The price is that the query word "package" does not meet ``package-lock.json``.

Only the stem is indexed, not the word beside it: indexing both makes a query word count twice
where a memory holds it as written and once where it holds another form, so long notes holding
"package" and "use" in several forms outrank a short fact. The stem alone read best of the rules
measured with ``bench/sweep_fusion.py`` (the figures: docs/calibration.md, "Stems"). ``shown``
maps a stem back to the query's word, so an answer names the query's words, not stems.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from typing import Final

import snowballstemmer

# Characters that may sit inside an identifier: kept within a piece, split on at its ends.
_PIECE_CLASS: Final = r"[\w.\-/:#@+~]"
PIECE: Final = re.compile(_PIECE_CLASS + "+")
PIECE_CHAR: Final = re.compile(_PIECE_CLASS)
_EDGE_PUNCTUATION: Final = ".:/#@+~"
_PART: Final = re.compile(r"[^\W_]+")
# A dotted or slashed name's segments that are identifiers themselves (``settings.DATABASE_URL``
# → ``database_url``), beside its letter-and-digit parts.
_SEGMENT_SEPARATORS: Final = re.compile(r"[./:#@+~]+")
_HUMP: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_LETTERS: Final = re.compile(r"[A-Za-z]+")
# An inner hump: "tC" (camelCase) or "PRes" (HTTPResponse); "URLs" has none.
_INNER_CAPITAL: Final = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]{2}")
_IDENTIFIER_MARK: Final = re.compile(r"[\d_.\-/:#@+~]")
MAX_TERM_CHARS: Final = 64

STOP_WORDS: Final = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having
    he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've
    if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off
    on once only or other ought our ours ourselves out over own same shan't she she'd she'll
    she's should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves also just like get got s t d ll m re ve
    will shall may might must us yes yeah oh ok okay really whats hows wheres whos thats
    """.split()
)


# A stemmer object keeps its working buffer on itself: one per thread.
_STEMMERS: Final = threading.local()
_MIN_STEMMED_LETTERS: Final = 4


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (cached: a vocabulary repeats itself).
    snowballstemmer hands out PyStemmer's compiled stemmer, a dependency, in place of its own
    pure-Python one: the same stems, so an index written by either reads the same."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def _indexed_form(piece: str, whole: str) -> str:
    """A plain word's stem (``_plain_form``); the word itself when it is CamelCase or not all
    letters."""
    if _LETTERS.fullmatch(piece) and not _humps(piece):
        return _plain_form(whole)
    return whole


def _is_plain_word(piece: str) -> bool:
    """ASCII letters with no capital after the first (``deploy``, ``Deploy``): a piece that is
    its own one term, a plain word's, with no identifier mark, parts or humps. String methods
    say so at a fraction of what the regular expressions cost."""
    return len(piece) > 1 and piece.isascii() and piece.isalpha() and piece[1:].islower()


def _plain_form(whole: str) -> str:
    """A plain word's term, given lower-cased as ``whole``: its stem, or itself when short."""
    return _stem(whole) if len(whole) >= _MIN_STEMMED_LETTERS else whole


def indexed_form(piece: str) -> str:
    """The one term the index holds for a piece of text as its whole (a plain word's stem, an
    identifier lower-cased), without its parts: what a caller comparing two texts word by word
    needs, at a fraction of ``terms``'s cost."""
    whole = piece.lower()[:MAX_TERM_CHARS]
    return whole if _IDENTIFIER_MARK.search(piece) else _indexed_form(piece, whole)


def _humps(word: str) -> list[str]:
    """``HttpClient`` → ``["Http", "Client"]``; a word with no inner capital is one hump."""
    if not _LETTERS.fullmatch(word) or not _INNER_CAPITAL.search(word):
        return []
    humps = _HUMP.findall(word)
    return humps if len(humps) > 1 else []


def identifiers(text: str) -> frozenset[str]:
    """The whole terms of ``text`` that carry a digit or an identifier character (``e1042``,
    ``--run-drain-cache``, ``a.b_c``, ``3.12``): what tells two otherwise alike facts apart."""
    found = set()
    for match in PIECE.finditer(text.replace("\u2019", "'")):
        piece = match.group().strip(_EDGE_PUNCTUATION)
        piece = piece.rstrip("-") if not piece.startswith("-") else piece
        if piece.strip("-") and _IDENTIFIER_MARK.search(piece):
            found.add(piece.lower()[:MAX_TERM_CHARS])
    return frozenset(found)


# What makes a whole term a name rather than a word or a quantity. A term that starts with a
# letter is a name when it carries a digit (``e1042``, ``pay-4821``, ``v2``, ``yolov5s``) or an
# identifier character other than a hyphen (``snake_case``, ``node.js``, ``ci/cd``,
# ``cs:go``); a flag is one (``--local``); a term that starts with a digit is one only with
# several separators (``1.2.3``, ``2024-03-01``, ``10.0.0.1``). Not names: numbers, quantities
# and ordinals (``2024``, ``3.12``, ``200mb``, ``5k``, ``18th``, ``3/5``), hyphenated words
# (``real-time``), abbreviations (``e.g``) and CamelCase words (``JavaScript``): prose is full
# of those.
_NAME_MARK: Final = re.compile(r"[_.\/:#@+~]")
_DIGIT: Final = re.compile(r"\d")
_SEPARATOR: Final = re.compile(r"[_.\-/:#@+~]")
_MIN_NUMERIC_SEPARATORS: Final = 2
# Single letters joined by dots are an abbreviation (``e.g``, ``i.e``, ``j.k``), not a name.
_ABBREVIATION: Final = re.compile(r"[a-z](?:\.[a-z])+")


def is_name(term: str) -> bool:
    """Whether a whole (lower-cased) term is an identifier that names one thing (see above)."""
    head = term[:1]
    if head == "-":
        return len(term.strip("-")) > 0
    if head.isdigit():
        return len(_SEPARATOR.findall(term)) >= _MIN_NUMERIC_SEPARATORS
    if _ABBREVIATION.fullmatch(term):
        return False
    return bool(_DIGIT.search(term) or _NAME_MARK.search(term))


def names(text: str) -> frozenset[str]:
    """The whole terms of ``text`` that are names (``is_name``): what an exact-name query asks
    for, as the index holds them (a part of a name is not a name of its own)."""
    return frozenset(term for term in identifiers(text) if is_name(term))


def terms(text: str) -> Iterator[str]:
    """Every term of ``text`` in order, repeats included (term frequency counts them)."""
    for term, _ in _terms_shown(text):
        yield term


def shown(text: str) -> dict[str, str]:
    """Each term of ``text`` and the word to show for it: a stem, the word it came from; any
    other term, itself (a part of an identifier is a word of its own)."""
    found: dict[str, str] = {}
    for term, word in _terms_shown(text):
        found.setdefault(term, word)
    return found


def term_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Every term of ``text`` with the span of the piece it came from (an identifier's parts
    share its span): where in a text a query's terms stand."""
    for start, end, term, _ in _spanned_terms(text):
        yield start, end, term


def _terms_shown(text: str) -> Iterator[tuple[str, str]]:
    for _, _, term, word in _spanned_terms(text):
        yield term, word


def _spanned_terms(text: str) -> Iterator[tuple[int, int, str, str]]:
    # The replacement keeps every offset: one character for one.
    for match in PIECE.finditer(text.replace("\u2019", "'")):
        piece = match.group().strip(_EDGE_PUNCTUATION)
        # "--local" keeps its dashes; a trailing dash or a lone one is punctuation.
        piece = piece.rstrip("-") if not piece.startswith("-") else piece
        if not piece or piece.strip("-") == "":
            continue
        start, end = match.span()
        whole = piece.lower()[:MAX_TERM_CHARS]
        if _is_plain_word(piece):
            # Most of a text: no identifier mark, no parts, no humps, so none of the regular
            # expressions below can find anything in it.
            if whole not in STOP_WORDS:
                yield start, end, _plain_form(whole), whole
            continue
        marked = bool(_IDENTIFIER_MARK.search(piece))
        if marked or whole not in STOP_WORDS:
            yield start, end, (whole if marked else _indexed_form(piece, whole)), whole
        for term in _inner_terms(piece, whole):
            yield start, end, term, term


def _inner_terms(piece: str, whole: str) -> Iterator[str]:
    """The identifiers, parts and humps inside one piece (see the module docstring)."""
    parts = _PART.findall(piece)
    for segment in _SEGMENT_SEPARATORS.split(piece) if len(parts) > 2 else ():
        lowered = segment.lower().strip("-")
        if lowered != whole and ("_" in lowered or "-" in lowered):
            yield lowered[:MAX_TERM_CHARS]
    if len(parts) > 1 or (parts and parts[0] != piece):
        for part in parts:
            lowered = part.lower()
            if len(lowered) > 1 and lowered != whole and lowered not in STOP_WORDS:
                yield lowered[:MAX_TERM_CHARS]
    for hump in _humps(piece) if len(parts) <= 1 else ():
        lowered = hump.lower()
        if lowered != whole and lowered not in STOP_WORDS:
            yield lowered
