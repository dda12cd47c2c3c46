"""The restated-figure rule of remember (``shared.ranking.figures``) on pairs of texts outside
the server: the sentence pairs it finds, embedded with the local model as remember embeds them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.embedding.local import LocalEmbedder
from shared.model import Hit, Memory
from shared.ranking.figures import figure_candidates, first_restated
from shared.ranking.updates import linked_update

CREATED: Final = "2026-01-01T00:00:00.000Z"


async def restated(embedder: LocalEmbedder, pairs: Sequence[tuple[str, str]]) -> list[bool]:
    """For each (newer, older) pair of texts: whether remember links them by a restated figure
    (the word rules aside: the caller reads them first)."""
    found = []
    for new, old in pairs:
        hit = Hit(
            memory=Memory(id="older", tenant="bench", content=old, created_at=CREATED),
            similarity=1.0,
        )
        candidates = figure_candidates(new, [hit], scope="project")
        if not candidates:
            found.append(False)
            continue
        sentences = sorted({s for _, pairs in candidates for pair in pairs for s in pair})
        vectors = await embedder.embed_many(sentences)
        found.append(
            first_restated(candidates, dict(zip(sentences, vectors, strict=True))) is not None
        )
    return found


async def remember_links(pairs: Sequence[tuple[str, str]], *, words_only: bool) -> list[bool]:
    """For each (newer, older) pair of texts: whether remember links them, by the word rules
    or, unless ``words_only``, where they say no, by a restated figure."""
    found = [linked_update(new, old) is not None for new, old in pairs]
    if words_only:
        return found
    embedder = await LocalEmbedder.open()
    try:
        unlinked = [i for i, linked in enumerate(found) if not linked]
        figures = await restated(embedder, [pairs[i] for i in unlinked])
        for i, linked in zip(unlinked, figures, strict=True):
            found[i] = linked
    finally:
        await embedder.close()
    return found
