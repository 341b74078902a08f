"""Language models and static word vectors: a bigram model by counting, forward and backward recurrent
language models, and word2vec's skip-gram with negative sampling.

Shape legend (used in every docstring and shape comment below):

    B    batch (sentences)          T    tokens per sentence, <bos> and <eos> included, padded
    V    vocabulary size            E    embedding width            H    recurrent state width
    N    (center, context) pairs    K    negative samples per pair  D    word-vector width

Mask convention (as everywhere in this library): boolean, True at the real tokens. Sentences are
padded at the end, so the mask of a sentence is a prefix of True: mask [B, T] and lengths [B] say the same.

A language model gives a sentence w_1 .. w_n the probability (chain rule)

    P(w_1 .. w_n) = prod_i P(w_i | w_1 .. w_{i-1})          here with w_{n+1} = end of sentence,

and its **perplexity** on a text of M predicted tokens is exp(-(1/M) sum log P): the number of equally
likely words a model that guessed uniformly would hesitate between. A model that always gives 1/V has
perplexity V.

- ``BigramLM``: the Markov assumption P(w_i | w_1 .. w_{i-1}) ~ P(w_i | w_{i-1}), estimated by counting,
  P(w | v) = C(v w) / C(v) (maximum likelihood), or with add-k smoothing (C(v w) + k) / (C(v) + k V).
- ``RNNLM``: an embedding, an LSTM or GRU and a linear layer: no Markov assumption, the state carries the
  whole prefix (Bengio et al. 2003 introduced neural LMs with a feed-forward net over a fixed window;
  the recurrent form is Mikolov et al. 2010's). ``reverse=True`` gives the backward model, which reads
  each sentence right to left and predicts P(w_i | w_{i+1} .. w_n), as ELMo's backward LSTM does.
- ``SkipGram``: word2vec's skip-gram (Mikolov et al. 2013a, "Efficient estimation of word representations
  in vector space"): a word predicts the words around it; the rows of its input embedding are the word
  vectors. Trained with negative sampling and subsampling of frequent words (Mikolov et al. 2013b,
  "Distributed representations of words and phrases and their compositionality", eq. 4 and sec. 2.3).
- ``RNNClassifier``: a sentence classifier (embedding -> LSTM/GRU -> linear) for transfer learning: its
  embedding can start from word vectors (``load_word_vectors``, the word2vec way), or its embedding
  and recurrent layers from a trained forward ``RNNLM`` (``from_lm``, the way of Howard & Ruder 2018's
  ULMFiT, without their gradual unfreezing and discriminative learning rates).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Iterable, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding
from lib._validate import check_ids, check_int, check_padding_mask

__all__ = [
    "BOS",
    "EOS",
    "UNK",
    "BigramLM",
    "RNNLM",
    "reverse_padded",
    "make_lm_batch",
    "lm_batches",
    "perplexity",
    "sample",
    "SkipGram",
    "skipgram_pairs",
    "noise_distribution",
    "skipgram_batches",
    "nearest_neighbours",
    "RNNClassifier",
]

BOS, EOS, UNK = "<s>", "</s>", "<unk>"  # the bigram model's sentence boundaries and unknown word


def _token_lists(sentences, name: str = "sentences") -> list[list[str]]:
    """Sentences as lists of tokens: a str is split on spaces, a sequence of str taken as is."""
    if isinstance(sentences, str):
        raise TypeError(
            f"{name}: expected an iterable of sentences, got the str {sentences[:40]!r}"
        )
    out = []
    for s in sentences:
        tokens = s.split() if isinstance(s, str) else list(s)
        if not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"{name}: expected sentences as str or lists of str, got {s!r}")
        out.append(tokens)
    if not out:
        raise ValueError(f"{name}: expected at least one sentence, got none")
    return out


# --- the bigram model ------------------------------------------------------------------------------


class BigramLM:
    """A bigram language model estimated by counting (the lectures' "Language modeling" slides).

    P(w | v) = (C(v w) + k) / (C(v) + k V), with C the counts of the training sentences, each read as
    <s> w_1 .. w_n </s>; k = 0 is the maximum-likelihood estimate C(v w) / C(v), k > 0 add-k smoothing
    (k = 1: Laplace). ``vocab`` is what can be predicted: the training words, </s> and <unk>, so V =
    len(vocab). A word never seen in training is read as <unk> (count 0), as a previous word too.
    Deviation: when the previous word was never seen (C(v) = 0) the maximum-likelihood estimate is 0/0;
    with k = 0 we return 0 for every word, as for any unseen bigram (with k > 0 the formula gives 1/V).
    """

    def __init__(self, sentences: Iterable[str | Sequence[str]], k: float = 0.0):
        if (
            isinstance(k, bool)
            or not isinstance(k, (int, float))
            or not (k >= 0 and math.isfinite(k))
        ):
            raise ValueError(f"k: expected a finite number >= 0, got {k!r}")
        token_lists = _token_lists(sentences)
        self.k = float(k)
        words = sorted({w for s in token_lists for w in s})
        for special in (BOS, EOS, UNK):
            if special in words:
                raise ValueError(
                    f"sentences: the token {special!r} is reserved for the model, found it in the corpus"
                )
        self.vocab: tuple[str, ...] = tuple(words) + (EOS, UNK)
        self._known = set(words)
        self.bigram_counts: Counter = Counter()  # (v, w) -> C(v w)
        self.context_counts: Counter = Counter()  # v -> C(v), the times v is followed by something
        for s in token_lists:
            padded = [BOS] + s + [EOS]
            self.bigram_counts.update(zip(padded[:-1], padded[1:]))
            self.context_counts.update(padded[:-1])

    def _norm(self, word: str, name: str, allowed: str) -> str:
        if not isinstance(word, str):
            raise TypeError(f"{name}: expected a str, got {type(word).__name__} {word!r}")
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
        tokens = _token_lists([sentence], "sentence")[0]
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
        token_lists = _token_lists(sentences)
        total = sum(self.log_prob(s) for s in token_lists)
        return math.exp(-total / sum(len(s) + 1 for s in token_lists))


# --- recurrent language models ---------------------------------------------------------------------


def _check_rnn_sizes(**sizes: int) -> None:
    """Every size of an RNN model an int >= 1 (ValueError naming it)."""
    for name, value in sizes.items():
        check_int(value, name, 1)


def _check_cell(cell) -> None:
    if cell not in ("lstm", "gru"):
        raise ValueError(f"cell: expected 'lstm' or 'gru', got {cell!r}")


def _check_batch(input_ids, attention_mask, vocab_size: int) -> Tensor:
    """Check input_ids [B, T] and attention_mask [B, T] (``lib._validate``); return lengths [B]."""
    check_ids(input_ids, "input_ids", vocab_size)
    if attention_mask is None:
        B, T = input_ids.shape
        return torch.full((B,), T, dtype=torch.long, device=input_ids.device)
    check_padding_mask(attention_mask, input_ids)
    return attention_mask.bool().sum(1)  # [B]


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse the first lengths[b] entries of each row b along dim 1, leaving the padding where it is.

    x [B, T, ...], lengths [B] ints in [0, T]. Applied twice it gives x back."""
    if not isinstance(x, Tensor) or x.dim() < 2:
        raise ValueError(
            f"x: expected a tensor [B, T, ...], got {getattr(x, 'shape', type(x).__name__)}"
        )
    lengths = torch.as_tensor(lengths, device=x.device)
    B, T = x.shape[:2]
    if lengths.shape != (B,) or lengths.min() < 0 or lengths.max() > T:
        raise ValueError(f"lengths: expected {B} ints in [0, {T}], got {lengths.tolist()}")
    t = torch.arange(T, device=x.device)  # [T]
    index = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # [B, T]
    index = index.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


class RNNLM(nn.Module):
    """A recurrent language model: embedding -> LSTM or GRU (n_layers) -> linear -> logits.

    forward(input_ids [B, T], attention_mask [B, T] or None) -> logits [B, T, V]. Forward model
    (reverse=False): logits[:, t] scores the token *after* position t, given ids[:, :t+1]. Backward
    model (reverse=True): each sentence is read right to left within its real tokens, and logits[:,
    t] scores the token *before* position t, given ids[:, t:length]. The backward model is exactly
    the forward model run on the reversed sentences (``reverse_padded``), with its outputs reversed
    back. Sentences are <bos> w_1 .. w_n <eos>: both models make n + 1 predictions per sentence (the
    words and <eos>, or the words and <bos>).

    Initialization: every weight uniform in [-0.1, 0.1], as in Zaremba et al. 2014's LSTM language
    models. Dropout (Zaremba et al. 2014: between layers, not on the recurrent connections) is
    applied to the embeddings and to the last layer's outputs.
    """

    def __init__(
        self,
        vocab_size: int,
        d_emb: int = 64,
        d_hidden: int = 128,
        n_layers: int = 1,
        cell: str = "lstm",
        reverse: bool = False,
        dropout: float = 0.0,
    ):
        super().__init__()
        _check_rnn_sizes(vocab_size=vocab_size, d_emb=d_emb, d_hidden=d_hidden, n_layers=n_layers)
        _check_cell(cell)
        if not isinstance(reverse, bool):
            raise TypeError(f"reverse: expected a bool, got {type(reverse).__name__} {reverse!r}")
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout: expected a probability in [0, 1), got {dropout!r}")
        self.vocab_size, self.cell, self.reverse = vocab_size, cell, reverse
        self.embedding = nn.Embedding(vocab_size, d_emb)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(
            d_emb, d_hidden, n_layers, batch_first=True, dropout=dropout if n_layers > 1 else 0.0
        )
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(d_hidden, vocab_size)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)

    def run(self, input_ids: Tensor, state=None) -> tuple[Tensor, object]:
        """The network in its own reading direction, with no reversal: input_ids [B, T] -> (logits
        [B, T, V], state) where logits[:, t] scores the next token to read. ``state`` carries on a
        sequence (used by ``sample``)."""
        h, state = self.rnn(self.drop(self.embedding(input_ids)), state)  # [B, T, H]
        return self.out(self.drop(h)), state  # [B, T, V]

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        return self._logits(input_ids, _check_batch(input_ids, attention_mask, self.vocab_size))

    def _logits(self, input_ids: Tensor, lengths: Tensor) -> Tensor:
        """forward for inputs already checked, with their lengths [B]."""
        if not self.reverse:
            return self.run(input_ids)[0]  # causal: padding at the end is harmless
        logits, _ = self.run(reverse_padded(input_ids, lengths))  # read right to left
        return reverse_padded(logits, lengths)  # [B, T, V], back in reading order

    def nll(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> tuple[Tensor, int]:
        """(sum of -ln P over the predicted tokens, their number): forward, input_ids[:, 1:] from
        logits[:, :-1]; backward, input_ids[:, :-1] from logits[:, 1:]; only pairs of real tokens
        count."""
        lengths = _check_batch(input_ids, attention_mask, self.vocab_size)
        logits = self._logits(input_ids, lengths)  # [B, T, V], checked once
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        real = (positions < lengths[:, None])[:, 1:]  # [B, T-1]: both ends real
        if self.reverse:
            scores, targets = logits[:, 1:], input_ids[:, :-1]
        else:
            scores, targets = logits[:, :-1], input_ids[:, 1:]
        # [B (T-1)]
        losses = F.cross_entropy(scores.flatten(0, 1), targets.flatten(), reduction="none")
        return losses[real.flatten()].sum(), int(real.sum())

    def loss(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        """Mean negative log-likelihood per predicted token (the cross-entropy; exp of it is the perplexity)."""
        total, count = self.nll(input_ids, attention_mask)
        if count == 0:
            raise ValueError("input_ids: no sentence has two real tokens, nothing to predict")
        return total / count


def make_lm_batch(sentences: Sequence[str | Sequence[str]], vocab) -> tuple[Tensor, Tensor]:
    """Encode sentences as <bos> w_1 .. w_n <eos> with a ``lib.data.Vocab`` and pad them at the end:
    (ids [B, T] long, mask [B, T] bool, True at real tokens). Unknown words become <unk>."""
    token_lists = _token_lists(sentences)
    encoded = [vocab.encode(tokens, add_bos=True, add_eos=True) for tokens in token_lists]
    T = max(len(e) for e in encoded)
    ids = torch.full((len(encoded), T), vocab.pad_id, dtype=torch.long)  # [B, T]
    for b, e in enumerate(encoded):
        ids[b, : len(e)] = torch.tensor(e)
    lengths = torch.tensor([len(e) for e in encoded])
    return ids, torch.arange(T) < lengths[:, None]


def lm_batches(
    sentences: Sequence[str | Sequence[str]], vocab, batch_size: int, seed: int = 0
) -> Iterator:
    """Endless (ids, mask) batches (``make_lm_batch``): epoch after epoch, shuffled by
    ``random.Random(seed)``. For ``lib.train.fit``, which stops after its number of steps."""
    token_lists = _token_lists(sentences)
    check_int(batch_size, "batch_size", 1)
    rng = random.Random(seed)
    order = list(range(len(token_lists)))
    while True:
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            yield make_lm_batch([token_lists[i] for i in order[start : start + batch_size]], vocab)


@torch.no_grad()
def perplexity(model: RNNLM, batches: Iterable[tuple[Tensor, Tensor]]) -> float:
    """exp(total negative log-likelihood / number of predicted tokens) over (ids, mask) batches, in eval
    mode (the model's mode is restored)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        for ids, mask in batches:
            t, c = model.nll(ids, mask)
            total, count = total + float(t), count + c
    finally:
        model.train(was_training)
    if count == 0:
        raise ValueError("batches: yielded no token to predict")
    return math.exp(total / count)


@torch.no_grad()
def sample(
    model: RNNLM,
    n: int,
    bos_id: int,
    eos_id: int,
    max_len: int = 30,
    temperature: float = 1.0,
    seed: int = 0,
) -> list[list[int]]:
    """n sentences drawn from the model, token by token from softmax(logits / temperature), as lists
    of ids in reading order without <bos> and <eos>. A forward model starts from <bos> and stops at
    <eos>; a backward model starts from <eos>, generates right to left and stops at <bos>. A sentence
    that reaches max_len tokens is cut there."""
    check_int(n, "n", 1)
    check_int(max_len, "max_len", 1)
    if not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"temperature: expected a number > 0, got {temperature!r}")
    start, stop = (eos_id, bos_id) if model.reverse else (bos_id, eos_id)
    generator = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    state = None

    def step(tokens: Tensor, parents: Tensor | None):  # lib.decoding's interface
        nonlocal state
        logits, state = model.run(tokens[:, -1:], state)  # [n, 1, V]
        return logits[:, -1], None

    try:
        first = torch.full((n, 1), start, dtype=torch.long, device=device)  # [n, 1]
        tokens = decoding.sample(
            step, first, max_len, stop, temperature=temperature, generator=generator
        ).tokens
    finally:
        model.train(was_training)
    out = []
    for row in tokens.tolist():
        out.append(row[: row.index(stop)] if stop in row else row)
    return [s[::-1] for s in out] if model.reverse else out


# --- word2vec: skip-gram with negative sampling ----------------------------------------------------


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
        check_int(vocab_size, "vocab_size", 1)
        check_int(dim, "dim", 1)
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
        for name, x, dims in (
            ("center", center, 1),
            ("context", context, 1),
            ("negatives", negatives, 2),
        ):
            if not isinstance(x, Tensor) or x.dtype != torch.long or x.dim() != dims:
                got = (
                    f"shape {tuple(x.shape)}, dtype {x.dtype}"
                    if isinstance(x, Tensor)
                    else type(x).__name__
                )
                raise ValueError(f"{name}: expected a long tensor with {dims} dims, got {got}")
            if x.numel() and (x.min() < 0 or x.max() >= self.vocab_size):
                raise ValueError(
                    f"{name}: expected ids in [0, {self.vocab_size}), got min {int(x.min())} and max {int(x.max())}"
                )
        if not (center.shape[0] == context.shape[0] == negatives.shape[0] > 0):
            raise ValueError(
                f"center, context, negatives: expected the same N > 0 rows, got {center.shape[0]}, {context.shape[0]} and {negatives.shape[0]}"
            )
        v = self.in_embed(center)  # [N, D]
        positive = (self.out_embed(context) * v).sum(-1)  # [N]
        negative = torch.einsum("nkd,nd->nk", self.out_embed(negatives), v)  # [N, K]
        return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(-1)).mean()


def _encoded(sentences, vocab) -> list[list[int]]:
    """Each sentence's ids, special and unknown tokens dropped."""
    n_specials = len(vocab.specials)
    return [
        [i for i in vocab.encode(tokens) if i >= n_specials] for tokens in _token_lists(sentences)
    ]


def noise_distribution(
    sentences: Iterable[str | Sequence[str]], vocab, power: float = 0.75
) -> Tensor:
    """P_n(w) ~ count(w)^power over the vocabulary [V] (0 for specials and words not in the sentences);
    power = 3/4 as in Mikolov et al. 2013b, power = 1 is the unigram distribution."""
    if not isinstance(power, (int, float)) or isinstance(power, bool) or power < 0:
        raise ValueError(f"power: expected a number >= 0, got {power!r}")
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
    if subsample is not None and (
        isinstance(subsample, bool) or not isinstance(subsample, (int, float)) or not subsample > 0
    ):
        raise ValueError(f"subsample: expected None or a number > 0, got {subsample!r}")
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
    check_int(batch_size, "batch_size", 1)
    check_int(negatives, "negatives", 1)
    if center.shape != context.shape or center.dim() != 1:
        raise ValueError(
            f"center, context: expected two [N] tensors, got {tuple(center.shape)} and {tuple(context.shape)}"
        )
    if (
        not isinstance(noise, Tensor)
        or noise.dim() != 1
        or (noise < 0).any()
        or not noise.sum() > 0
    ):
        raise ValueError(
            f"noise: expected a 1-D tensor of non-negative weights [V] with a positive sum, got {noise if not isinstance(noise, Tensor) else tuple(noise.shape)}"
        )
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
    if not isinstance(vectors, Tensor) or vectors.dim() != 2 or vectors.shape[0] != len(vocab):
        got = tuple(vectors.shape) if isinstance(vectors, Tensor) else type(vectors).__name__
        raise ValueError(f"vectors: expected a tensor [V={len(vocab)}, D], got {got}")
    if word not in vocab.stoi:
        raise ValueError(f"word: {word!r} is not in the vocabulary")
    check_int(k, "k", 1)
    unit = F.normalize(vectors.float(), dim=-1)  # [V, D]
    cosine = unit @ unit[vocab.stoi[word]]  # [V]
    cosine[vocab.stoi[word]] = -math.inf
    if exclude_specials:
        cosine[: len(vocab.specials)] = -math.inf
    top = cosine.topk(min(k, int(torch.isfinite(cosine).sum())))
    return [(vocab.itos[i], v) for i, v in zip(top.indices.tolist(), top.values.tolist())]


# --- transfer: a sentence classifier that starts from word vectors or from a language model ---------


class RNNClassifier(nn.Module):
    """embedding -> LSTM or GRU -> linear on the state at each sentence's last real token -> logits.

    forward(input_ids [B, T], attention_mask [B, T] or None) -> logits [B, C]. The submodules are
    named as in ``RNNLM`` (``embedding``, ``rnn``), so ``from_lm`` copies a forward language model's
    weights into them; the linear layer ``head`` is new. Initialization: uniform in [-0.1, 0.1], as
    ``RNNLM``.
    """

    def __init__(
        self,
        vocab_size: int,
        n_classes: int = 2,
        d_emb: int = 64,
        d_hidden: int = 128,
        n_layers: int = 1,
        cell: str = "lstm",
    ):
        super().__init__()
        _check_rnn_sizes(
            vocab_size=vocab_size,
            n_classes=n_classes,
            d_emb=d_emb,
            d_hidden=d_hidden,
            n_layers=n_layers,
        )
        _check_cell(cell)
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, d_emb)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(
            d_emb, d_hidden, n_layers, batch_first=True
        )
        self.head = nn.Linear(d_hidden, n_classes)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)

    @classmethod
    def from_lm(cls, lm: RNNLM, n_classes: int = 2) -> "RNNClassifier":
        """A classifier whose embedding and recurrent layers are copies of a forward ``RNNLM``'s (the
        LM is left untouched; its output layer is not used)."""
        if not isinstance(lm, RNNLM):
            raise TypeError(f"lm: expected an RNNLM, got {type(lm).__name__}")
        if lm.reverse:
            raise ValueError(
                "lm: expected a forward model (reverse=False): the classifier reads left to right"
            )
        model = cls(
            lm.vocab_size,
            n_classes,
            lm.embedding.embedding_dim,
            lm.rnn.hidden_size,
            lm.rnn.num_layers,
            lm.cell,
        )
        model.embedding.load_state_dict(lm.embedding.state_dict())
        model.rnn.load_state_dict(lm.rnn.state_dict())
        return model

    @torch.no_grad()
    def load_word_vectors(self, vectors: Tensor) -> "RNNClassifier":
        """Copy word vectors [V, E] (row i for token id i, e.g. ``SkipGram.vectors``) into the embedding."""
        if not isinstance(vectors, Tensor) or tuple(vectors.shape) != tuple(
            self.embedding.weight.shape
        ):
            got = tuple(vectors.shape) if isinstance(vectors, Tensor) else type(vectors).__name__
            raise ValueError(
                f"vectors: expected a tensor of shape {tuple(self.embedding.weight.shape)} [V, E], got {got}"
            )
        self.embedding.weight.copy_(vectors)
        return self

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        lengths = _check_batch(input_ids, attention_mask, self.vocab_size)
        if (lengths == 0).any():
            raise ValueError("attention_mask: every sentence needs at least one real token")
        h, _ = self.rnn(self.embedding(input_ids))  # [B, T, H]
        rows = torch.arange(input_ids.shape[0], device=input_ids.device)
        return self.head(h[rows, lengths - 1])  # [B, C]
