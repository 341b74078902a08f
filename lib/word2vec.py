"""Static word vectors: word2vec's skip-gram with negative sampling, and the nearest neighbours of a word.

Shape legend (used in every docstring and shape comment below):

    V    vocabulary size            D    word-vector width
    N    (center, context) pairs    K    negative samples per pair

``SkipGram``: word2vec's skip-gram (Mikolov et al. 2013a, "Efficient estimation of word representations
in vector space"): a word predicts the words around it; the rows of its input embedding are the word
vectors. Trained with negative sampling and subsampling of frequent words (Mikolov et al. 2013b,
"Distributed representations of words and phrases and their compositionality", eq. 4 and sec. 2.3).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Iterable, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.word2vec import check_neighbours, check_skipgram_batches, check_skipgram_pairs
from lib._validate import check_int, check_number, check_sizes
from lib.ngram import split_sentences

__all__ = [
    "SkipGram",
    "skipgram_pairs",
    "noise_distribution",
    "skipgram_batches",
    "nearest_neighbours",
]


class SkipGram(nn.Module):
    """word2vec's skip-gram with negative sampling (Mikolov et al. 2013b, eq. 4).

    Every word w has an input vector v_w (``in_embed``, the word vectors one keeps) and an output vector
    v'_w (``out_embed``). For a center word c, a context word o seen near it and K noise words n_k drawn
    from P_n(w) ~ U(w)^(3/4) (the unigram distribution to the 3/4 power, ``noise_distribution``):

        loss = -ln sigma(v'_o . v_c) - sum_k ln sigma(-v'_{n_k} . v_c)

    averaged over the pairs. Initialization as in the word2vec C code: v uniform in [-0.5/D, 0.5/D],
    v' zero. Deviation: trained with minibatches and AdamW (``lib.train.fit``), not word2vec's
    one-pair-at-a-time SGD with a linearly decaying rate.
    """

    def __init__(self, vocab_size: int, dim: int = 32):
        super().__init__()
        check_sizes(vocab_size=vocab_size, dim=dim)
        self.vocab_size = vocab_size
        self.in_embed = nn.Embedding(vocab_size, dim)  # v_w
        self.out_embed = nn.Embedding(vocab_size, dim)  # v'_w
        nn.init.uniform_(self.in_embed.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.out_embed.weight)

    @property
    def vectors(self) -> Tensor:
        """The word vectors [V, D]: the input embedding, detached."""
        return self.in_embed.weight.detach()

    def loss(self, center: Tensor, context: Tensor, negatives: Tensor) -> Tensor:
        """center [N], context [N], negatives [N, K] (long ids) -> the mean loss over the N pairs."""
        check_skipgram_pairs(center, context, negatives, self.vocab_size)
        v = self.in_embed(center)  # [N, D]
        positive = (self.out_embed(context) * v).sum(-1)  # [N]
        negative = torch.einsum("nkd,nd->nk", self.out_embed(negatives), v)  # [N, K]
        return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(-1)).mean()


def _encoded(sentences, vocab) -> list[list[int]]:
    """Each sentence's ids, special and unknown tokens dropped."""
    n_specials = len(vocab.specials)
    return [
        [i for i in vocab.encode(tokens) if i >= n_specials]
        for tokens in split_sentences(sentences)
    ]


def noise_distribution(
    sentences: Iterable[str | Sequence[str]], vocab, power: float = 0.75
) -> Tensor:
    """P_n(w) ~ count(w)^power over the vocabulary [V] (0 for specials and words not in the sentences);
    power = 3/4 as in Mikolov et al. 2013b, power = 1 is the unigram distribution."""
    check_number(power, "power", "a number >= 0", lambda p: p >= 0)
    counts = torch.zeros(len(vocab), dtype=torch.float64)
    for ids in _encoded(sentences, vocab):
        counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=len(vocab)).double()
    weights = torch.where(counts > 0, counts**power, torch.zeros_like(counts))
    return (weights / weights.sum()).float()


def skipgram_pairs(
    sentences: Iterable[str | Sequence[str]],
    vocab,
    window: int = 2,
    subsample: float | None = None,
    seed: int = 0,
) -> tuple[Tensor, Tensor]:
    """(center [N], context [N]): every pair of words at most `window` apart within a sentence, both
    directions (Mikolov et al. 2013a's skip-gram; specials and unknown words dropped first).

    subsample: None, or the threshold t of Mikolov et al. 2013b, sec. 2.3: each occurrence of a word of
    relative frequency f is discarded with probability 1 - sqrt(t / f) (when positive) before the
    pairs are formed, which thins out "the" and "." and shortens the distances between the other words.
    Deterministic for a given seed. Deviation: a fixed window (word2vec draws it uniformly in 1..window).
    """
    check_int(window, "window", 1)
    if subsample is not None:
        check_number(subsample, "subsample", "None or a number > 0", lambda t: t > 0)
    encoded = _encoded(sentences, vocab)
    if subsample is not None:
        counts = Counter(i for ids in encoded for i in ids)
        total, rng = sum(counts.values()), random.Random(seed)
        keep = {i: min(1.0, math.sqrt(subsample * total / c)) for i, c in counts.items()}
        encoded = [[i for i in ids if rng.random() < keep[i]] for ids in encoded]
    centers, contexts = [], []
    for ids in encoded:
        for a, c in enumerate(ids):
            for b in range(max(0, a - window), min(len(ids), a + window + 1)):
                if b != a:
                    centers.append(c)
                    contexts.append(ids[b])
    if not centers:
        raise ValueError("sentences: no pair of known words within the window")
    return torch.tensor(centers), torch.tensor(contexts)


def skipgram_batches(
    center: Tensor,
    context: Tensor,
    noise: Tensor,
    batch_size: int,
    negatives: int = 5,
    seed: int = 0,
) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    """Endless (center [N], context [N], negatives [N, K]) batches for ``SkipGram.loss``: the pairs
    shuffled every epoch, K = `negatives` noise words per pair drawn from `noise` [V] (with
    replacement; a noise word may equal the context word, as in word2vec). Deterministic for a seed."""
    check_skipgram_batches(center, context, noise, batch_size, negatives)
    generator = torch.Generator().manual_seed(seed)
    while True:
        order = torch.randperm(len(center), generator=generator)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            drawn = torch.multinomial(
                noise, len(rows) * negatives, replacement=True, generator=generator
            )
            yield center[rows], context[rows], drawn.view(len(rows), negatives)


def nearest_neighbours(
    vectors: Tensor, vocab, word: str, k: int = 5, exclude_specials: bool = True
) -> list[tuple[str, float]]:
    """The k words whose vectors have the highest cosine similarity with `word`'s, as (word, cosine),
    most similar first; the word itself (and, with exclude_specials, <pad>, <bos>...) left out.
    vectors [V, D] with row i the vector of ``vocab.itos[i]``."""
    check_neighbours(vectors, vocab, word, k)
    unit = F.normalize(vectors.float(), dim=-1)  # [V, D]
    cosine = unit @ unit[vocab.stoi[word]]  # [V]
    cosine[vocab.stoi[word]] = -math.inf
    if exclude_specials:
        cosine[: len(vocab.specials)] = -math.inf
    top = cosine.topk(min(k, int(torch.isfinite(cosine).sum())))
    return [(vocab.itos[i], v) for i, v in zip(top.indices.tolist(), top.values.tolist())]
