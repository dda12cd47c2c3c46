"""Which bodiless versions a request is proven to have been able to see (pure)."""

from __future__ import annotations

from shared.model import Memory, Scope, iso_ms, new_ulid
from shared.revisions import Replacements, provably_seen

NOW_MS = 1_800_000_000_000
A, B, C, D = (new_ulid(NOW_MS + n) for n in range(4))


def body(memory_id: str, scope: Scope = "project", conversation: str | None = None) -> Memory:
    return Memory(
        id=memory_id,
        tenant="acme",
        content="a fact",
        created_at=iso_ms(NOW_MS),
        scope=scope,
        conversation=conversation,
    )


def note(memory_id: str, conversation: str) -> Memory:
    return body(memory_id, "conversation", conversation)


def test_what_replaced_a_memory_the_request_sees_is_seen_by_it_too() -> None:
    chain = Replacements([(A, B), (B, C)])
    bodies = {A: body(A)}  # B and C forgotten
    for conversation in (None, "thread-1"):
        assert provably_seen(chain, bodies, conversation) == {B, C}
    bodies = {A: note(A, "thread-1")}
    assert provably_seen(chain, bodies, "thread-1") == {B, C}
    assert provably_seen(chain, bodies, "thread-2") == frozenset()
    assert provably_seen(chain, bodies, None) == frozenset()


def test_what_a_project_memory_replaced_is_proven_to_nobody() -> None:
    # Issue 29: a note of thread-1, replaced there by a project memory, then forgotten.
    chain = Replacements([(A, B)])
    bodies = {B: body(B, conversation="thread-1")}
    for conversation in (None, "thread-1", "thread-2"):
        assert provably_seen(chain, bodies, conversation) == frozenset()


def test_what_a_note_replaced_is_a_note_of_its_conversation() -> None:
    chain = Replacements([(A, B), (B, C)])
    bodies = {C: note(C, "thread-1")}
    assert provably_seen(chain, bodies, "thread-1") == {A, B}
    assert provably_seen(chain, bodies, "thread-2") == frozenset()


def test_a_proof_does_not_pass_through_a_version_the_request_cannot_see() -> None:
    chain = Replacements([(A, B), (B, C)])
    bodies = {A: body(A), B: note(B, "thread-1")}  # B breaks the rule: never through it
    assert provably_seen(chain, bodies, "thread-2") == frozenset()
    assert provably_seen(chain, bodies, "thread-1") == {C}


def test_a_void_record_on_a_cycle_proves_nothing() -> None:
    chain = Replacements([(A, B), (B, A), (C, D)])
    assert provably_seen(chain, {A: body(A)}, None) == frozenset()
    assert provably_seen(chain, {D: note(D, "t")}, "t") == {C}
