"""Which versions of a chain whose body is gone (forgotten, expired, or never imported) a
request may be shown in memory_history (pure).

A body carries the memory's scope and conversation; once it is deleted nothing in the store
says who could see it, and its id alone would tell another conversation that a note existed.
So such a version is shown only to a request that can prove it could have seen it,
and the proof rests on one rule every replacement record obeys: **a replacement is seen
wherever what it replaced was seen**. remember keeps it (a request replaces only a memory it
sees; the replacement is a new memory of that request's conversation, or one it sees; a
conversation note never replaces a project memory) and so does import (it refuses a link that
breaks it). From that rule:

* a version that replaced a memory this request sees is seen by this request too (forward);
* a version replaced by a conversation note this request sees is a note of that same
  conversation (backward): a note is seen in one conversation, so what it replaced was too.

Nothing follows from a project memory's predecessors (it may have replaced a note of any
conversation), so those stay hidden from everyone, the note's own conversation included: the
safe side. Each step follows only the records that stand (a void record on a cycle was never
checked), and a proof carries through versions that are themselves without a body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from shared.model import Memory
from shared.revisions.chain import Replacements, reached


def provably_seen(
    replacements: Replacements, bodies: Mapping[str, Memory], conversation: str | None
) -> frozenset[str]:
    """The ids without a body (not in ``bodies``) that a request in ``conversation`` is proven
    to have been able to see, reached from the memories of ``bodies`` it sees."""
    seen = [m for m in bodies.values() if m.visible_to(conversation)]
    forward = _reach([m.id for m in seen], replacements.replaced_by, bodies)
    backward = _reach(
        [m.id for m in seen if m.scope == "conversation"], replacements.replaces, bodies
    )
    return frozenset(forward | backward)


def _reach(
    starts: Iterable[str], step: Callable[[str], Iterable[str]], bodies: Mapping[str, Memory]
) -> set[str]:
    """The bodiless ids reached from ``starts`` by ``step``, through bodiless ids only (a
    version with a body is judged by its body)."""
    return reached(starts, lambda at: [linked for linked in step(at) if linked not in bodies])
