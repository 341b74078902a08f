"""Recurrent language models, forward and backward, trained on padded batches of sentences.

Shape legend (used in every docstring and shape comment below):

    B    batch (sentences)          T    tokens per sentence, <bos> and <eos> included, padded
    V    vocabulary size            E    embedding width            H    recurrent state width

Mask convention (as everywhere in this library): boolean, True at the real tokens. Sentences are
padded at the end, so the mask of a sentence is a prefix of True: mask [B, T] and lengths [B] say the same.

``RNNLM``: an embedding, an LSTM or GRU and a linear layer: no Markov assumption (the bigram model of
``lib.ngram`` has one), the state carries the whole prefix (Bengio et al. 2003 introduced neural LMs
with a feed-forward net over a fixed window; the recurrent form is Mikolov et al. 2010's).
``reverse=True`` gives the backward model, which reads each sentence right to left and predicts
P(w_i | w_{i+1} .. w_n), as ELMo's backward LSTM does. Its perplexity is exp of the mean negative
log-likelihood per predicted token (``perplexity``); ``sample`` draws sentences from it (through
``step_function`` and ``lib.decoding``, like every model family), ``reading_order`` reads them.
"""

from __future__ import annotations

import math
import random
from typing import Iterable, Iterator, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding
from lib._checks.rnnlm import check_reverse_padded, check_rnnlm, check_sample
from lib._validate import check_int, check_token_batch
from lib.decoding import Decoded, Step
from lib.ngram import split_sentences

__all__ = [
    "LMOutput",
    "RNNLM",
    "reverse_padded",
    "sentence_lengths",
    "make_lm_batch",
    "lm_batches",
    "perplexity",
    "step_function",
    "sample",
    "reading_order",
]


class LMOutput(NamedTuple):
    """What ``RNNLM.forward`` returns: logits [B, T, V] (see ``RNNLM`` for what each row predicts)."""

    logits: Tensor


def sentence_lengths(input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
    """The number of real tokens of each sentence [B]: the sum of its mask row (all T without a mask)."""
    if attention_mask is None:
        B, T = input_ids.shape
        return torch.full((B,), T, dtype=torch.long, device=input_ids.device)
    return attention_mask.long().sum(1)  # [B]


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse the first lengths[b] entries of each row b along dim 1, leaving the padding where it is.

    x [B, T, ...], lengths [B] ints in [0, T]. Applied twice it gives x back."""
    lengths = torch.as_tensor(lengths, device=getattr(x, "device", None))
    check_reverse_padded(x, lengths)
    B, T = x.shape[:2]
    t = torch.arange(T, device=x.device)  # [T]
    index = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # [B, T]
    index = index.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


class RNNLM(nn.Module):
    """A recurrent language model: embedding -> LSTM or GRU (n_layers) -> linear -> logits.

    forward(input_ids [B, T], attention_mask [B, T] or None) -> LMOutput(logits [B, T, V]). Forward model
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
        check_rnnlm(vocab_size, d_emb, d_hidden, n_layers, cell, reverse, dropout)
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
        sequence (used by ``step_function``)."""
        h, state = self.rnn(self.drop(self.embedding(input_ids)), state)  # [B, T, H]
        return self.out(self.drop(h)), state  # [B, T, V]

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> LMOutput:
        check_token_batch(input_ids, attention_mask, self.vocab_size)
        return LMOutput(self._logits(input_ids, sentence_lengths(input_ids, attention_mask)))

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
        check_token_batch(input_ids, attention_mask, self.vocab_size)
        lengths = sentence_lengths(input_ids, attention_mask)  # [B]
        logits = self._logits(input_ids, lengths)  # [B, T, V]
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        real = (positions < lengths[:, None])[:, 1:]  # [B, T-1]: both ends real
        if self.reverse:
            scores, targets = logits[:, 1:], input_ids[:, :-1]
        else:
            scores, targets = logits[:, :-1], input_ids[:, 1:]
        scores = scores.flatten(0, 1)  # [B (T-1), V]
        losses = F.cross_entropy(scores, targets.flatten(), reduction="none")  # [B (T-1)]
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
    token_lists = split_sentences(sentences)
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
    token_lists = split_sentences(sentences)
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


def step_function(model: RNNLM) -> Step:
    """The model's decoding step (``lib.decoding``'s interface): each call reads the last token of
    every row, in the model's own reading direction, and returns (logits [K, V] of the next token,
    None: no attention). The recurrent state is carried from call to call, and follows beam
    search's reordering (``parents``)."""
    state = None

    def step(tokens: Tensor, parents: Tensor | None):
        nonlocal state
        if (
            parents is not None and state is not None
        ):  # each hypothesis continues its parent's state
            state = (
                tuple(s[:, parents] for s in state)
                if isinstance(state, tuple)
                else state[:, parents]
            )
        logits, state = model.run(tokens[:, -1:], state)  # [K, 1, V]
        return logits[:, -1], None

    return step


@torch.no_grad()
def sample(
    model: RNNLM,
    n: int,
    bos_id: int,
    eos_id: int,
    max_len: int = 30,
    temperature: float = 1.0,
    seed: int = 0,
) -> Decoded:
    """n sentences drawn from the model, token by token from softmax(logits / temperature), as a
    ``lib.decoding.Decoded``: tokens [n, L] in the order they were drawn, log_prob [n]. A forward
    model starts from <bos> and draws left to right until <eos>; a backward model starts from <eos>,
    draws right to left until <bos>. A row that reaches max_len tokens is cut there.
    ``reading_order`` turns the result into lists of ids in reading order."""
    check_sample(n, max_len, temperature)
    start, stop = (eos_id, bos_id) if model.reverse else (bos_id, eos_id)
    was_training = model.training
    model.eval()
    try:
        device = next(model.parameters()).device
        first = torch.full((n, 1), start, dtype=torch.long, device=device)  # [n, 1]
        generator = torch.Generator().manual_seed(seed)
        return decoding.sample(
            step_function(model), first, max_len, stop, temperature=temperature, generator=generator
        )
    finally:
        model.train(was_training)


def reading_order(model: RNNLM, decoded: Decoded, bos_id: int, eos_id: int) -> list[list[int]]:
    """The sentences of ``sample``, as lists of ids in reading order without <bos> and <eos>: each
    row cut at its stop token (<eos> for a forward model, <bos> for a backward one), a backward
    model's rows reversed."""
    stop = bos_id if model.reverse else eos_id
    out = []
    for row in decoded.tokens.tolist():
        row = row[: row.index(stop)] if stop in row else row
        out.append(row[::-1] if model.reverse else row)
    return out
