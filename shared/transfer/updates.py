"""Probable updates among imported memories, found by remember's text rules (``import
--link-updates``): for data from another tool, which carries no links of its own.

Each new memory, oldest first, is compared with the nearest memories of its tenant (remember
also reads the memories that share a short fact's words; an import does not) that are older
than it, that its readers see (a note of its own conversation, or a project memory), and
that nothing retired; the nearest it probably updates (``shared.ranking.updates``) is linked by
the record remember writes. An export of this server's carries its links (``superseded_by``)
and the links its owner undid are not in it, so its import does not look for more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.errors import ConflictError
from shared.model import Hit, Memory, iso_ms
from shared.model.keys import link_key
from shared.ranking import probably_updated
from shared.revisions import Replacements
from shared.storage import Stores

# As remember: the five nearest memories are the candidates.
NEIGHBOURS: Final = 5


async def link_imported_updates(
    stores: Stores,
    tenant: str,
    memories: Sequence[Memory],
    embeddings: Sequence[list[float]],
    replacements: Replacements,
    *,
    now_ms: int,
) -> int:
    """Link each of ``memories`` (just written, with their ``embeddings``) to the stored memory
    it probably updates; how many links were written."""
    now_iso = iso_ms(now_ms)
    written = 0
    ordered = sorted(zip(memories, embeddings, strict=True), key=lambda pair: pair[0].id)
    for memory, embedding in ordered:
        hits = await stores.vectors.query(tenant, embedding, top_k=NEIGHBOURS + 1)
        seen = [hit for hit in hits if _older_and_seen(hit, memory, replacements, now_iso=now_iso)]
        updated = probably_updated(memory.content, seen, scope=memory.scope)
        if updated is None:
            continue
        try:
            key = link_key(tenant, updated.memory.id, memory.id, "supersedes")
            await stores.objects.put(key, "", if_none_match=True)
        except ConflictError:
            continue  # written by an earlier run
        written += 1
    return written


def _older_and_seen(hit: Hit, memory: Memory, replacements: Replacements, *, now_iso: str) -> bool:
    other = hit.memory
    return (
        other.id < memory.id
        and other.visible_to(memory.conversation)
        and not other.expired(now_iso)
        and not replacements.retired(other.id)
    )
