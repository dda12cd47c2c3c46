"""The keyword leg: tokenising, a BM25 index per tenant, and the lexicon objects behind it."""

from shared.lexical.index import KeywordHit, KeywordQuery, KeywordResult, LexicalIndex
from shared.lexical.lexicon import Lexicon, LexiconStats, fold_lexicon_tenant
from shared.lexical.tokens import terms

__all__ = [
    "KeywordHit",
    "KeywordQuery",
    "KeywordResult",
    "LexicalIndex",
    "Lexicon",
    "LexiconStats",
    "fold_lexicon_tenant",
    "terms",
]
