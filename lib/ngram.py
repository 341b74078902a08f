"""The bigram language model, estimated by counting, and the sentences every language model reads.

A language model gives a sentence w_1 .. w_n the probability (chain rule)

    P(w_1 .. w_n) = prod_i P(w_i | w_1 .. w_{i-1})          here with w_{n+1} = end of sentence,

and its **perplexity** on a text of M predicted tokens is exp(-(1/M) sum log P): the number of equally
likely words a model that guessed uniformly would hesitate between. A model that always gives 1/V has
perplexity V.

``BigramLM``: the Markov assumption P(w_i | w_1 .. w_{i-1}) ~ P(w_i | w_{i-1}), estimated by counting,
P(w | v) = C(v w) / C(v) (maximum likelihood), or with add-k smoothing (C(v w) + k) / (C(v) + k V).
The neural language models are in ``lib.rnnlm``, word vectors in ``lib.word2vec``.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

from lib._checks.ngram import check_no_specials, check_sentences
from lib._validate import check_number, check_str

__all__ = ["BOS", "EOS", "UNK", "split_sentences", "BigramLM"]

BOS, EOS, UNK = "<s>", "</s>", "<unk>"  # the bigram model's sentence boundaries and unknown word


def split_sentences(sentences, name: str = "sentences") -> list[list[str]]:
    """Sentences as lists of tokens: a str is split on spaces, a sequence of str taken as is."""
    sentences = sentences if isinstance(sentences, str) else list(sentences)
    check_sentences(sentences, name)
    return [s.split() if isinstance(s, str) else list(s) for s in sentences]


class BigramLM:
    """A bigram language model estimated by counting (maximum likelihood, with optional add-k smoothing).

    P(w | v) = (C(v w) + k) / (C(v) + k V), with C the counts of the training sentences, each read as
    <s> w_1 .. w_n </s>; k = 0 is the maximum-likelihood estimate C(v w) / C(v), k > 0 add-k smoothing
    (k = 1: Laplace). ``vocab`` is what can be predicted: the training words, </s> and <unk>, so V =
    len(vocab). A word never seen in training is read as <unk> (count 0), as a previous word too.
    Deviation: when the previous word was never seen (C(v) = 0) the maximum-likelihood estimate is 0/0;
    with k = 0 we return 0 for every word, as for any unseen bigram (with k > 0 the formula gives 1/V).
    """

    def __init__(self, sentences: Iterable[str | Sequence[str]], k: float = 0.0):
        check_number(k, "k", "a finite number >= 0", lambda k: k >= 0 and math.isfinite(k))
        token_lists = split_sentences(sentences)
        self.k = float(k)
        words = sorted({w for s in token_lists for w in s})
        check_no_specials(words, (BOS, EOS, UNK))
        self.vocab: tuple[str, ...] = tuple(words) + (EOS, UNK)
        self._known = set(words)
        self.bigram_counts: Counter = Counter()  # (v, w) -> C(v w)
        self.context_counts: Counter = Counter()  # v -> C(v), the times v is followed by something
        for s in token_lists:
            padded = [BOS] + s + [EOS]
            self.bigram_counts.update(zip(padded[:-1], padded[1:]))
            self.context_counts.update(padded[:-1])

    def _norm(self, word: str, name: str, allowed: str) -> str:
        check_str(word, name)
        return word if word in self._known or word == allowed else UNK

    def prob(self, word: str, prev: str) -> float:
        """P(word | prev). word may be </s> (EOS), prev may be <s> (BOS)."""
        w, v = self._norm(word, "word", EOS), self._norm(prev, "prev", BOS)
        denominator = self.context_counts[v] + self.k * len(self.vocab)
        return 0.0 if denominator == 0 else (self.bigram_counts[(v, w)] + self.k) / denominator

    def distribution(self, prev: str) -> dict[str, float]:
        """P(. | prev) over the whole vocabulary, most probable first (ties alphabetical)."""
        probs = {w: self.prob(w, prev) for w in self.vocab}
        return dict(sorted(probs.items(), key=lambda item: (-item[1], item[0])))

    def log_prob(self, sentence: str | Sequence[str]) -> float:
        """ln P(sentence) = sum_{i=1}^{n+1} ln P(w_i | w_{i-1}) with w_0 = <s>, w_{n+1} = </s>; -inf if a
        bigram has probability 0."""
        tokens = split_sentences([sentence], "sentence")[0]
        padded = [BOS] + tokens + [EOS]
        total = 0.0
        for v, w in zip(padded[:-1], padded[1:]):
            p = self.prob(w, v)
            if p == 0.0:
                return -math.inf
            total += math.log(p)
        return total

    def perplexity(self, sentences: Iterable[str | Sequence[str]]) -> float:
        """exp(-(sum of log_prob) / M), M the number of predicted tokens (each sentence's words and its
        </s>); inf if some bigram has probability 0."""
        token_lists = split_sentences(sentences)
        total = sum(self.log_prob(s) for s in token_lists)
        return math.exp(-total / sum(len(s) + 1 for s in token_lists))
