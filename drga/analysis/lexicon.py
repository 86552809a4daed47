"""Word lists that name what attention falls on: function words, sentiment words, negators, intensifiers.

- :data:`STOP_WORDS`: the Snowball English stop-word list (Porter, snowballstem.org,
  ``algorithms/english/stop.txt``, BSD-3-Clause): its 174 entries (the lines the file leaves
  commented out, such as "us", "will", "can", are left out too), plus the halves of its
  contractions as the Penn Treebank tokenization of SST splits them (n't 's 're 've 'd 'll 'm,
  and "ca", "wo" of "ca n't", "wo n't"). A token on the list is a *function word*; any other
  token a *content word*.
- :func:`sentiment_lexicon`: the VADER lexicon (Hutto & Gilbert 2014; the ``vaderSentiment``
  package ships it, so it works offline): 7,500 entries rated from −4 to +4; the single words
  among them (a letter first) are the *sentiment words*.
- :func:`is_negator`: VADER's negation rule (its ``NEGATE`` list, or "n't" inside the token);
  :data:`INTENSIFIERS`: VADER's booster words that raise intensity (``BOOSTER_DICT``, one word, > 0).

The lists are fixed by the installed packages' versions (vaderSentiment 3.3.2), never fetched.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence

import numpy as np

from drga.analysis.extra import needs_extra

SNOWBALL_ENGLISH = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing would should could ought i'm you're he's she's it's we're they're
i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't
wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't
mustn't let's that's who's what's here's there's when's where's why's how's a an the and but if or because as
until while of at by for with about against between into through during before after above below to from up down
in out on off over under again further then once here there when where why how all any both each few more most
other some such no nor not only own same so than too very
""".split()
#: SST's tokenization splits "doesn't" into "does n't" and "can't" into "ca n't": the halves of the list's contractions.
CLITICS = ("n't", "'s", "'re", "'ve", "'d", "'ll", "'m", "ca", "wo")
#: Function words (see the module's docstring).
STOP_WORDS = frozenset(SNOWBALL_ENGLISH) | frozenset(CLITICS)
#: Words a sentiment word may follow by at most this many tokens to count as modified by them (VADER looks 3 back).
WINDOW = 3

_WORD = re.compile(r"^[a-z][a-z'\-]*$")


@functools.lru_cache(maxsize=1)
def sentiment_lexicon() -> dict[str, float]:
    """VADER's single-word entries: word → mean valence rating (−4 … +4)."""
    vader = needs_extra("vaderSentiment.vaderSentiment", "the sentiment lexicon")  # imported when first used
    return {word: valence for word, valence in vader.SentimentIntensityAnalyzer().lexicon.items() if _WORD.match(word)}


def _vader_lists() -> tuple[frozenset[str], frozenset[str]]:
    vader = needs_extra("vaderSentiment.vaderSentiment", "the negators and intensifiers")
    return frozenset(vader.NEGATE), frozenset(word for word, boost in vader.BOOSTER_DICT.items() if boost > 0 and " " not in word)


def is_negator(token: str) -> bool:
    """VADER's negation rule: a word of its NEGATE list, or a token containing "n't"."""
    return token in _vader_lists()[0] or "n't" in token


def is_intensifier(token: str) -> bool:
    """One of VADER's booster words that raise intensity ("very", "really", "so", "most", ...)."""
    return token in _vader_lists()[1]


def mass_on(weights: Sequence[float], tokens: Sequence[str], words: Collection[str]) -> float:
    """The attention mass on the tokens that are in ``words``."""
    if len(weights) != len(tokens):
        raise ValueError(f"{len(weights)} weights for {len(tokens)} tokens")
    return float(sum(w for w, t in zip(weights, tokens) if t in words))


def word_class_masses(sentences: Sequence[tuple[Sequence[str], Sequence[float]]]) -> dict[str, float]:
    """Means over sentences of the attention mass on function words and on sentiment words, and, for
    scale, of the share of the tokens that are such words (the mass a uniform attention would give them)."""
    lexicon = sentiment_lexicon()
    stop, sentiment, stop_tokens, sentiment_tokens = [], [], [], []
    for tokens, weights in sentences:
        stop.append(mass_on(weights, tokens, STOP_WORDS))
        sentiment.append(mass_on(weights, tokens, lexicon))
        stop_tokens.append(np.mean([t in STOP_WORDS for t in tokens]))
        sentiment_tokens.append(np.mean([t in lexicon for t in tokens]))
    return {
        "function_word_mass": float(np.mean(stop)),
        "sentiment_word_mass": float(np.mean(sentiment)),
        "function_word_share": float(np.mean(stop_tokens)),
        "sentiment_word_share": float(np.mean(sentiment_tokens)),
    }
