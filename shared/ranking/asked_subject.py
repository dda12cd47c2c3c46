"""Does a newer fact that leaves unsaid some of the question's words the older holds still tell
the same subject? A question is asked in the older's words; a rewording drops some of them
("owns" → "is the … owner"), another subject in the same words drops what the older is about
(``shared.ranking.versions``, ``shared.ranking.revises``; pure)."""

from __future__ import annotations

from shared.ranking.same_subject import change_sites
from shared.ranking.values import is_value
from shared.ranking.wording import CHANGE_TERMS, Wording


def leaves_asked_subject(newer: Wording, older: Wording, only_older: frozenset[str]) -> bool:
    """Whether a word of the question that only ``older`` holds (``only_older``) is what the
    older is about (its first content word) or is said in the older's sentence with another word
    in its place: the newer then tells the same of another subject ("The build agents run Node
    22." after "Staging runs Node 18.", for "what node version is staging on"). A word of the
    question the newer only rewords ("run" of "Nightly backups run at 2am UTC." → "The nightly
    backup job kicks off at 4am UTC.") leaves the subject as it was."""
    if not only_older:
        return False
    return older.terms[0] in only_older or in_place_of(newer, older, only_older)


def in_place_of(newer: Wording, older: Wording, words: frozenset[str]) -> bool:
    """Whether ``newer`` says one of ``words`` of ``older`` with another plain word in its
    place: a run of words that differ, as long in each (change marks aside), the word at the
    same place in it."""
    for i1, i2, j1, j2 in change_sites(newer, older):
        before = [t for t in older.terms[i1:i2] if t not in CHANGE_TERMS]
        after = [t for t in newer.terms[j1:j2] if t not in CHANGE_TERMS]
        if len(before) != len(after):
            continue
        for was, now in zip(before, after, strict=True):
            if was in words and not is_value(now):
                return True
    return False
