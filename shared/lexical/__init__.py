"""The keyword leg: tokenising, a BM25 index per tenant, and the lexicon objects behind it."""

from shared.lexical.index import LexicalIndex
from shared.lexical.lexicon import Lexicon
from shared.lexical.query import KeywordQuery, KeywordResult
from shared.lexical.segments import LEXICON_LOG
from shared.model import KeywordHit
from shared.model.tokens import terms

__all__ = [
    "LEXICON_LOG",
    "KeywordHit",
    "KeywordQuery",
    "KeywordResult",
    "LexicalIndex",
    "Lexicon",
    "terms",
]
