"""Would embedding long memories in windows help? The figures behind a proposal (not built).

    python bench/embed_windows.py

all-MiniLM-L6-v2 reads at most 256 tokens, so a long memory is embedded from its beginning only.
For the long technical notes of bench/data/, this compares plain cosine over one vector per note
(as stored today) with the best of several vectors per note, one per window of words (overlapping
by half), on the ordinary and the hard questions: R@5. Windows would change the key layout
(several vectors per memory), so this only measures.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_tech_notes
from shared.embedding.local import LocalEmbedder

WINDOWS = ((120, 60), (180, 90))  # (words per window, step)
BATCH = 32


def windows(text: str, size: int, step: int) -> list[str]:
    words = text.split()
    found = [
        " ".join(words[s : s + size]) for s in range(0, max(1, len(words) - size + step), step)
    ]
    return found or [text]


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
                plain: list[float] = []
                windowed: list[float] = []
                for k in chosen:
                    want = set(tech.questions[k].answers)
                    best = np.full(len(texts), -1.0)
                    np.maximum.at(best, owners, matrix @ questions[k])
                    for scores, into in ((whole @ questions[k], plain), (best, windowed)):
                        top = {ids[j] for j in np.argsort(-scores)[:5]}
                        into.append(len(top & want) / len(want))
                print(
                    f"{size}-word windows, step {step}, {'hard' if hard else 'ordinary'} "
                    f"questions: R@5 one vector {np.mean(plain):.3f}, best window "
                    f"{np.mean(windowed):.3f}; {len(pieces) / len(texts):.1f} vectors per note"
                )
    finally:
        await embedder.close()


if __name__ == "__main__":
    asyncio.run(main())
