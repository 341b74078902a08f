"""Decoding, written once for every model: greedy search, sampling (temperature, top-k, top-p) and
beam search with the GNMT length penalty.

A model is decoded through a *step function*, which the model's module builds (for example
``lib.seq2seq.step_function``, ``lib.transformer.step_function``, ``lib.gpt.step_function``):

    logits [K, V], attention [K, ...] or None = step(tokens [K, t], parents [K] or None)

``tokens`` holds every token so far, the start (BOS, or a prompt) included; row k of the result
predicts the token after ``tokens[k]``. ``parents`` says which row of the previous call each row
continues: None when the rows are the same as before (greedy search and sampling), an index tensor
when beam search has reordered, repeated or dropped hypotheses, so that a step that keeps state
(an RNN's hidden state, GPT's key/value cache) reorders it. ``attention`` is what the model looked
at to predict this token (the source weights of an RNN decoder, the regions of a captioner), or
None; the decoders collect it into ``Decoded.attentions``.

Shape legend: B batch, K hypotheses alive in the beam (<= beam_width), t tokens so far, L tokens
decoded, V vocabulary.

Every decoder returns a :class:`Decoded`. A sequence ends at ``eos_id`` (kept in ``tokens``); the
positions after it hold ``pad_id``, and log_prob counts the tokens up to and including ``eos_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from lib._checks.decoding import check_decoding, check_length_penalty, check_sampling
from lib._random import multinomial

__all__ = [
    "Decoded",
    "Step",
    "greedy",
    "sample",
    "beam_search",
    "beam_hypotheses",
    "Hypothesis",
    "gnmt_penalty",
    "sampling_distribution",
]

Step = Callable[[Tensor, Tensor | None], tuple[Tensor, Tensor | None]]


class Decoded(NamedTuple):
    """What every decoder of the library returns.

    tokens [B, L]: the decoded tokens, without the start (BOS or the prompt), each row ending with
    eos_id where one was produced, then pad_id. log_prob [B]: sum over the decoded tokens (up to
    and including eos_id) of log p(token | everything before it), under the model's own
    distribution (temperature 1, no top-k or top-p cut). attentions: what the model
    attended to while producing each token ([B, L, ...], zero after the end), or None for a model
    that does not report it."""

    tokens: Tensor
    log_prob: Tensor
    attentions: Tensor | dict | None


def gnmt_penalty(length: int, alpha: float) -> float:
    """lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016, GNMT, sec. 7, eq. 14); beam search ranks the
    finished hypotheses by log p(Y) / lp(Y). alpha = 0 turns it off (lp = 1); larger alpha favours
    longer outputs."""
    return ((5 + length) / 6) ** alpha


def sampling_distribution(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    """The distribution a sampler draws the next token from: logits [..., V] -> probabilities [..., V].

    In this order: (1) temperature: softmax(logits / temperature); temperature=0 is the limit, all mass on
    the argmax (greedy; the first one on ties); (2) top-k (Fan et al. 2018): keep the k most probable
    tokens (ties with the k-th are kept too), k larger than V keeps all; (3) top-p, nucleus sampling
    (Holtzman et al. 2020, sec. 3.1, eq. 3): keep the smallest set of most probable tokens whose total
    probability is >= p (always at least the most probable one; among equal probabilities the lower
    token id first); then renormalize. The order is that of
    transformers' generate; top-k and top-p act on the distribution after temperature.
    """
    check_sampling(temperature, top_k, top_p, logits)
    return _distribution(logits, temperature, top_k, top_p)


def _distribution(logits: Tensor, temperature: float, top_k, top_p) -> Tensor:
    """sampling_distribution for arguments already checked (``sample`` checks them once per call);
    NaN logits are still refused at every step, as a model can diverge at any step."""
    if torch.isnan(logits).any():
        raise ValueError("logits: expected numbers, got NaN (did the model's weights diverge?)")
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)  # [..., V]
    probs = torch.softmax(logits / temperature, dim=-1)  # [..., V]
    if top_k is not None and top_k < logits.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]  # [..., 1], the k-th largest probability
        probs = probs.masked_fill(probs < kth, 0.0)
    if top_p is not None and top_p < 1:
        # stable: among equal probabilities the lower token id counts as the more probable one, so
        # the nucleus is the same on every machine (and in the site's sampler, web/src/sampling.js)
        sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)  # [..., V]
        before = sorted_probs.cumsum(-1) - sorted_probs  # mass of the more probable tokens
        keep_sorted = before < top_p * sorted_probs.sum(-1, keepdim=True)  # smallest set reaching p
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # vocabulary order
        probs = probs.masked_fill(~keep, 0.0)
    return probs / probs.sum(-1, keepdim=True)


# --- greedy search and sampling ------------------------------------------------------------------


def sample(
    step: Step,
    start: Tensor,
    max_len: int,
    eos_id: int | None = None,
    pad_id: int = 0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Decoded:
    """Sampling: from ``start`` [B, t0], append one token per step, drawn from
    ``sampling_distribution(logits, temperature, top_k, top_p)``, until every row has produced
    ``eos_id`` or ``max_len`` tokens are decoded. temperature=0 is greedy search (the argmax, no
    draw). ``generator`` (a torch.Generator) makes the draws reproducible; a row that has ended
    still draws (so a row's tokens do not depend on when the others end) and is then given
    ``pad_id``. Without ``eos_id``, exactly ``max_len`` tokens are decoded. Returns a
    :class:`Decoded` with tokens [B, L], L <= max_len."""
    check_decoding(start, max_len, eos_id, pad_id)
    check_sampling(temperature, top_k, top_p)
    B = start.shape[0]
    tokens = start
    done = torch.zeros(B, dtype=torch.bool, device=start.device)  # [B] rows that have ended
    log_prob = None  # [B]
    attention = []  # L x [B, ...]
    for _ in range(max_len):
        logits, weights = step(tokens, None)  # [B, V]
        if temperature == 0:
            y = logits.argmax(-1)  # [B]
        else:
            probs = _distribution(logits, temperature, top_k, top_p)  # [B, V]
            y = multinomial(probs, generator)[:, 0]  # [B]
        picked = logits.log_softmax(-1).gather(-1, y[:, None])[:, 0]  # [B] log p(y)
        if eos_id is not None:  # rows that have ended get pad_id, and no more log-probability
            y, picked = y.masked_fill(done, pad_id), picked.masked_fill(done, 0.0)
        log_prob = picked if log_prob is None else log_prob + picked
        if weights is not None:
            attention.append(weights.masked_fill(done.view(-1, *[1] * (weights.dim() - 1)), 0.0))
        tokens = torch.cat([tokens, y[:, None]], dim=1)  # [B, t + 1]
        if eos_id is not None:
            done = done | (y == eos_id)
            if done.all():
                break
    attention = torch.stack(attention, dim=1) if attention else None  # [B, L, ...]
    return Decoded(tokens[:, start.shape[1] :], log_prob, attention)


def greedy(
    step: Step, start: Tensor, max_len: int, eos_id: int | None = None, pad_id: int = 0
) -> Decoded:
    """Greedy search: the most probable token at every step (``sample`` with temperature 0)."""
    return sample(step, start, max_len, eos_id, pad_id, temperature=0)


# --- beam search ---------------------------------------------------------------------------------


class Hypothesis(NamedTuple):
    """A finished beam-search hypothesis: tokens [L] (without the start), log_prob (a 0-dim tensor,
    the sum of the log-probabilities of its tokens), and attentions [L, ...] or None."""

    tokens: Tensor
    log_prob: Tensor
    attentions: Tensor | None


def beam_hypotheses(
    step: Step, start: Tensor, max_len: int, beam_width: int = 4, eos_id: int | None = None
) -> list[Hypothesis]:
    """Every hypothesis beam search finishes, in the order it finishes them: ``beam_search`` picks
    the best of these, a chapter can rank them another way.

    From ``start`` [1, t0], each step extends every alive hypothesis by every token and keeps the
    beam_width - (number finished) best by summed log-probability; one that produces ``eos_id`` or
    reaches ``max_len`` tokens is finished, so the beam shrinks until none is alive. beam_width=1
    is greedy search; a beam at least as wide as the number of possible outputs is exhaustive
    search."""
    check_decoding(start, max_len, eos_id, beam_width=beam_width)
    t0 = start.shape[1]
    alive, log_prob, parents = start, torch.zeros(1, device=start.device), None  # [K, t], [K]
    attention = None  # [K, t - t0, ...]
    finished = []
    for t in range(max_len):
        logits, weights = step(alive, parents)  # [K, V]
        candidates = log_prob[:, None] + logits.log_softmax(-1)  # [K, V]
        n = min(beam_width - len(finished), candidates.numel())
        log_prob, flat = candidates.flatten().topk(n)  # [n], [n] indices into K * V
        parents, y = flat // candidates.shape[1], flat % candidates.shape[1]  # [n], [n]
        alive = torch.cat([alive[parents], y[:, None]], dim=1)  # [n, t + 1]
        if weights is not None:
            if attention is None:
                attention = weights.new_zeros(weights.shape[0], 0, *weights.shape[1:])
            attention = torch.cat([attention[parents], weights[parents, None]], dim=1)
        ended = (y == eos_id) if eos_id is not None else torch.zeros_like(y, dtype=torch.bool)
        ended |= t == max_len - 1  # [n]
        for i in ended.nonzero()[:, 0].tolist():
            finished.append(
                Hypothesis(
                    alive[i, t0:],
                    log_prob[i],
                    None if attention is None else attention[i],
                )
            )
        keep = ~ended
        alive, log_prob, parents = alive[keep], log_prob[keep], parents[keep]
        attention = None if attention is None else attention[keep]
        if alive.shape[0] == 0:
            break
    return finished


def beam_search(
    step: Step,
    start: Tensor,
    max_len: int,
    beam_width: int = 4,
    eos_id: int | None = None,
    length_penalty: float = 0.0,
) -> Decoded:
    """Beam search for one sequence: the best of ``beam_hypotheses``, ranked by log_prob /
    ``gnmt_penalty(L, length_penalty)`` (length_penalty is GNMT's alpha; 0 ranks by log_prob
    alone; on a tie, the one finished first). Returns a :class:`Decoded` with tokens [1, L].

    Beam search is a heuristic: it usually finds a likelier output than greedy search, but it can
    drop the prefix of the likeliest one, so it is not guaranteed to."""
    check_length_penalty(length_penalty)
    finished = beam_hypotheses(step, start, max_len, beam_width, eos_id)
    best = max(
        finished, key=lambda h: h.log_prob.item() / gnmt_penalty(len(h.tokens), length_penalty)
    )
    attention = None if best.attentions is None else best.attentions[None]
    return Decoded(best.tokens[None], best.log_prob[None], attention)
