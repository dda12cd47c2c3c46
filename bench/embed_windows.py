"""Would embedding long memories in windows help? The figures behind a proposal (not built).

    python bench/embed_windows.py

all-MiniLM-L6-v2 reads at most 256 tokens, so a long memory is embedded from its beginning only.
For the long technical notes of bench/data/, this compares plain cosine over one vector per note
(as stored today) with the best of several vectors per note, one per window of words (overlapping
by half), on the ordinary and the hard questions: R@5. Windows would change the key layout
(several vectors per memory), so this only measures.

Each is also shown fused with the keyword leg as recall fuses it (``shared.operations.fusion``: the
cosine plus KEYWORD_WEIGHT × floor × BM25 / spread, BM25 over all notes), without recall's gates
and tie-break: whether windows still help once the keyword leg is there.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_tech_notes
from shared.config import PROVIDER_DEFAULTS
from shared.embedding.local import LocalEmbedder
from shared.lexical.index import LexicalIndex
from shared.lexical.query import KeywordQuery
from shared.lexical.segments import passage_counts
from shared.model.tokens import terms
from shared.operations.fusion import KEYWORD_WEIGHT

WINDOWS = ((120, 60), (180, 90))  # (words per window, step)
BATCH = 32


def windows(text: str, size: int, step: int) -> list[str]:
    words = text.split()
    found = [
        " ".join(words[s : s + size]) for s in range(0, max(1, len(words) - size + step), step)
    ]
    return found or [text]


FLOOR = PROVIDER_DEFAULTS["local"].min_similarity


def keyword_scores(texts: list[str], question: str) -> np.ndarray:
    """Each note's BM25 for the question, scaled as fusion scales it (0 where nothing matched)."""
    index = LexicalIndex()
    for i, text in enumerate(texts):
        index.add(str(i), passage_counts(text))
    scored = KeywordQuery(index, terms(question)).result(top_k=len(texts))
    out = np.zeros(len(texts))
    if scored.spread:
        for hit in scored.hits:
            out[int(hit.memory_id)] = KEYWORD_WEIGHT * FLOOR * hit.score / scored.spread
    return out


def recall_at_5(scores: np.ndarray, ids: list[str], want: set[str]) -> float:
    top = {ids[j] for j in np.argsort(-scores)[:5]}
    return len(top & want) / len(want)


async def main() -> None:
    tech = load_tech_notes()
    ids = list(tech.notes)
    texts = [tech.notes[i] for i in ids]
    embedder = await LocalEmbedder.open()
    try:
        whole = np.array(await embedder.embed_many(texts), np.float32)
        questions = np.array(
            await embedder.embed_many([q.text for q in tech.questions]), np.float32
        )
        keyword = [keyword_scores(texts, q.text) for q in tech.questions]
        for size, step in WINDOWS:
            owner: list[int] = []
            pieces: list[str] = []
            for i, text in enumerate(texts):
                for piece in windows(text, size, step):
                    owner.append(i)
                    pieces.append(piece)
            vectors: list[list[float]] = []
            for start in range(0, len(pieces), BATCH):
                vectors += await embedder.embed_many(pieces[start : start + BATCH])
            matrix = np.array(vectors, np.float32)
            owners = np.array(owner)
            for hard in (False, True):
                chosen = [k for k, q in enumerate(tech.questions) if q.hard is hard]
                figures: dict[str, list[float]] = {
                    "one vector": [],
                    "best window": [],
                    "one vector + keyword": [],
                    "best window + keyword": [],
                }
                for k in chosen:
                    want = set(tech.questions[k].answers)
                    best = np.full(len(texts), -1.0)
                    np.maximum.at(best, owners, matrix @ questions[k])
                    plain = (whole @ questions[k]).astype(np.float64)
                    for name, scores in (
                        ("one vector", plain),
                        ("best window", best),
                        ("one vector + keyword", plain + keyword[k]),
                        ("best window + keyword", best + keyword[k]),
                    ):
                        figures[name].append(recall_at_5(scores, ids, want))
                shown = ", ".join(f"{name} {np.mean(v):.3f}" for name, v in figures.items())
                print(
                    f"{size}-word windows, step {step}, {'hard' if hard else 'ordinary'} "
                    f"questions ({len(chosen)}): R@5 {shown}; "
                    f"{len(pieces) / len(texts):.1f} vectors per note"
                )
    finally:
        await embedder.close()


if __name__ == "__main__":
    asyncio.run(main())
