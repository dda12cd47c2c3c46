"""Rule 3 of the probable updates (``shared.ranking.updates``): is a newer text about the same
subject as an older one, with one thing changed, or does it say the same of another subject
("Anna was born in Oslo." / "Omar was born in Oslo.")? English names what a sentence is about
first, or before its "is"; two changes a kept word stands between are two things changed (pure).
"""

from __future__ import annotations

import difflib
from typing import Final

from shared.ranking.values import is_value
from shared.ranking.wording import CHANGE_TERMS, COPULAS, Wording, value_follows

# The most content words a replaced value may take on either side ("GitHub Actions").
MAX_SLOT_TERMS: Final = 2


def same_subject(newer: Wording, older: Wording, *, announced: bool) -> bool:
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
    touches_subject = any(i1 == 0 or j1 == 0 for i1, _, j1, _ in change_sites(newer, older))
    if not announced:
        return one_change and not touches_subject
    opening, said = newer.subject(), older.subject()
    # An opening word names the subject only when it is not the word the older text's value
    # follows ("We changed the port of the API" after "The admin dashboard runs on port 9090").
    beside = {w for v in older.values - newer.values for w in value_follows(older, v)}
    return (
        opening is None
        or said is None
        or said in newer.distinct
        or (opening in older.distinct and opening not in beside)
        or one_change
    )


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


def is_its_value(older: Wording, term: str) -> bool:
    """Whether ``term`` is a value ``older`` gives rather than what it is about: a value of it
    that is neither its first content word nor named before its "is" ("flake8" of "We lint
    Python with flake8."; not "Omar" of "Omar was born in Oslo.")."""
    return (
        term in older.values
        and term not in (older.subject(), older.terms[0])
        and term not in _names_before_copula(older)
    )


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


def change_sites(newer: Wording, older: Wording) -> list[tuple[int, int, int, int]]:
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
