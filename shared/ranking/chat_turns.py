"""Who a chat turn is said by and to, which is not what it says (pure): the speaker label it
opens with ("user: …", "Caroline: …") and the names it speaks to ("Hey Mel!", "Thanks,
Caroline!"). The probable-update rules (``shared.ranking.updates``) and the relation reader
(``shared.ranking.relations``) read a turn without them."""

from __future__ import annotations

import re
from typing import Final

from shared.ranking.values import is_value
from shared.ranking.wording import ADDITION_MARKS, CHANGE_MARKS

# Words after which a capitalised name is the one spoken to ("Hey Mel!", "thank you Priya").
_GREETINGS: Final = (
    *"hey hi hello thanks congrats congratulations bye sorry wow yeah yes oh dear".split(),
    "thank you",
)
# Each greeting with the space or comma after it, so that "hi" is not looked at inside "this".
_GREETING_HEADS: Final = tuple(greeting + after for greeting in _GREETINGS for after in " ,")
_NAME_AFTER_GREETING: Final = re.compile(r",? ([A-Z][a-z]+)(?=[ ,!.?])")
# A chat turn's speaker label ("user: …", "Caroline: …") says who spoke, not what the turn is
# about.
_SPEAKER: Final = re.compile(r"^([A-Za-z][a-z]+): ")
# A name after a comma at a sentence's end ("That's great news, Ben!").
_NAME_AT_END: Final = re.compile(r", ([A-Z][a-z]+)(?=[!.?])")


def speaker(text: str) -> str | None:
    """Who a chat turn's label says spoke ("user", "caroline"), or None without a label. A
    note's heading that says a change or an addition ("Update: …", "Correction: …",
    "Addition: …") is no speaker: the rules read it as the mark it is."""
    label = _SPEAKER.match(text)
    if label is None:
        return None
    said_by = label.group(1).lower()
    return None if said_by in CHANGE_MARKS or said_by in ADDITION_MARKS else said_by


def unlabelled(text: str) -> str:
    """``text`` without the speaker label it opens with ("user: ", "Caroline: ")."""
    return text.split(": ", 1)[1] if speaker(text) is not None else text


def unaddressed(text: str) -> str:
    """``text`` without the names it speaks to ("Hey Mel!", "Thanks, Caroline!", "That's
    awesome, Melanie!"): whom a chat turn addresses is not something it says, so another name
    there is the same small talk to someone else, not a value that changed. A day or a month
    after a comma stays ("moved to Friday, Tom." loses only "Tom")."""
    spans = {match.span(1) for match in _NAME_AT_END.finditer(text)}
    # str.find for each greeting, not one regular expression tried at every place of the text:
    # a fraction of the cost on a long message.
    lowered = text.lower()
    for greeting in _GREETING_HEADS:
        at = lowered.find(greeting)
        while at != -1:
            if at == 0 or not lowered[at - 1].isalnum():
                match = _NAME_AFTER_GREETING.match(text, at + len(greeting) - 1)
                if match:
                    spans.add(match.span(1))
            at = lowered.find(greeting, at + 1)
    kept = [(start, end) for start, end in spans if not is_value(text[start:end].lower())]
    if not kept:
        return text
    pieces, last = [], 0
    for start, end in sorted(kept):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
