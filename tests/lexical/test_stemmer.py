"""The stemmer the keyword leg runs is the compiled one, and stems as the reference does.

Stems are written into every lexicon shard, so a stemmer that stemmed one word differently
would leave stored memories unfound by the same word in a question."""

from __future__ import annotations

import snowballstemmer
import Stemmer
from snowballstemmer.english_stemmer import EnglishStemmer

from shared.model.tokens import _stem

# Porter2's own awkward cases (exceptions, -eed/-ing/-ly, y after a consonant, apostrophes)
# and the words a project's memories are made of.
WORDS = """
    generously generous generate general arsenal communism communities news skies skis dying
    lying tying cannings canning inning outing proceed exceed succeed agreed feed bleed
    happily happy cries cried caresses ponies ties dogs goodness relational conditional
    rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli
    vietnamization predication operator feudalism decisiveness hopefulness callousness
    formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical
    hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible
    irritant replacement adjustment dependent adoption homologou communism activate
    angulariti homologous effective bowdlerize probate rate cease controll roll andes atlas
    cosmos bias howe only singly sky ugly early idly gently deploying deployed deployments
    migrations migrating configured configuration caching cached databases indexes indices
    queued queues rebuilding builds tested testing releases released servers serving
    kubernetes postgresql's users' it's o'clock naïve café über
""".split()


def test_the_stemmer_in_use_is_pystemmers() -> None:
    assert isinstance(snowballstemmer.stemmer("english"), Stemmer.Stemmer)


def test_each_word_stems_as_the_reference_stemmer_stems_it() -> None:
    reference = EnglishStemmer()
    assert [_stem(word) for word in WORDS] == [reference.stemWord(word) for word in WORDS]
