"""Deterministic embeddings for the fake embedding servers: a sum of hashed word vectors.

Similarity tracks shared words, so end-to-end tests can write fixtures that recall (or fail to
recall) on purpose without a real model. Each word's vector is SHAKE-256 of the word, one byte per
dimension mapped to [-0.5, 0.5]; the text's vector is their sum, L2-normalised. Measured at 1024d
(tests/embedding/test_fake_vectors.py keeps these honest):

    same words (any order, case, punctuation)   1.0
    9 of 10 words shared                        ≈ 0.90 (below the 0.92 dedup threshold)
    5 of 10 words shared                        ≈ 0.50
    no words shared                             ≈ 0 (|cos| < 0.15 at 256d and wider)
"""

from __future__ import annotations

import hashlib
import math
import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9가-힣]+")


def words(text: str) -> list[str]:
    """Lower-cased words of two or more characters; a text with none embeds as the word 'empty'."""
    found = [w for w in _WORD.findall(text.lower()) if len(w) >= 2]
    return found or [" empty"]


@lru_cache(maxsize=4096)
def _word_vector(word: str, dim: int) -> tuple[float, ...]:
    digest = hashlib.shake_256(word.encode()).digest(dim)
    return tuple(b / 255 - 0.5 for b in digest)


def text_vector(text: str, dim: int) -> list[float]:
    """The unit vector of ``text`` at width ``dim``."""
    total = [0.0] * dim
    for word in words(text):
        for i, value in enumerate(_word_vector(word, dim)):
            total[i] += value
    norm = math.sqrt(sum(v * v for v in total)) or 1.0
    return [v / norm for v in total]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))
