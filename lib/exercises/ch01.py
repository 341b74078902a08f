"""Checkers for the exercises of the chapter *From sequence-to-sequence to attention*.

- :func:`check_greedy_or_reference`: exercise 1 (predict, then check): for the plain model on the test
  sentences of 30+ words, is log p(greedy output | x) or log p(reference | x) higher on average, and in how
  many sentences is the reference more probable than the greedy output?
- :func:`check_loss_by_length`: exercise 3 (implement): the mean per-sentence loss (the cross-entropy per
  target token, Sutskever et al. 2014, sec. 2) of each group of source lengths.

Exercise 2 (take the summary away) is answered in prose; the chapter's solution computes its numbers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from lib.data import build_vocabs, generate_pairs, make_batch
from lib.seq2seq import Encoder, PlainDecoder, Seq2Seq, sequence_log_prob

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    not_attempted,
)

__all__ = ["check_greedy_or_reference", "check_loss_by_length"]


# --- exercise 1: is greedy the most probable translation? ---------------------------------------------

# Measured in the chapter with the shipped plain model (its solution asserts these numbers).
MEAN_LOG_P_GREEDY = -22.67  # mean log p(greedy output | x) over the 129 test sentences of 30+ words
MEAN_LOG_P_REFERENCE = -55.49  # mean log p(reference | x) over the same sentences
REFERENCE_WINS = 0  # sentences where the reference is more probable than the greedy output
N_LONG = 129

_ANSWERS = {
    "greedy": "greedy",
    "greedy output": "greedy",
    "the greedy output": "greedy",
    "reference": "reference",
    "the reference": "reference",
}


@checker("greedy or reference")
def check_greedy_or_reference(more_probable: Any, reference_wins: Any) -> str:
    """Check exercise 1: ``more_probable``, "greedy" or "reference" (which has the higher mean log p(. | x)
    under the plain model on the test sentences of 30+ words), and ``reference_wins``, the number of those
    sentences whose reference is more probable than the greedy output."""
    if more_probable is None and reference_wins is None:
        not_attempted(
            "write your prediction (more_probable) and your count (reference_wins) in the cell above, then run this cell again."
        )
    if more_probable is not None:
        if not isinstance(more_probable, str) or more_probable.strip().lower() not in _ANSWERS:
            fail(f'more_probable should be "greedy" or "reference", got {fmt(more_probable)}.')
        if _ANSWERS[more_probable.strip().lower()] == "reference":
            fail(
                "more_probable: not under the plain model. The reference is the right translation, but a model that squeezed a long sentence through 128 numbers does not believe it: the errors are the model's, not the search's. Compute both mean log-probabilities with sequence_log_prob to see by how much."
            )
    if reference_wins is not None:
        n = expect_number(reference_wins, "reference_wins")
        if n != int(n) or not 0 <= n <= N_LONG:
            fail(
                f"reference_wins should be a count of sentences between 0 and {N_LONG}, got {fmt(n)}."
            )
        if n == N_LONG:
            fail(
                f"reference_wins = {N_LONG} is every long sentence: did you count where the greedy output is more probable (log p greedy > log p reference) instead of the reverse?"
            )
        if n != REFERENCE_WINS:
            fail(
                f"reference_wins = {int(n)} is not what the plain model gives. Compare, sentence by sentence, sequence_log_prob of the reference with that of the greedy output (both with <eos>, built with make_batch), and count where the reference's is larger."
            )
    if more_probable is None:
        not_attempted("your count is right; now give your prediction (more_probable).")
    if reference_wins is None:
        not_attempted("your prediction is right; now count the sentences (reference_wins).")
    return f"the greedy output is more probable under the model than the reference in every one of the {N_LONG} long sentences (mean log p {MEAN_LOG_P_GREEDY:.1f} against {MEAN_LOG_P_REFERENCE:.1f}): greedy search is not what fails here, the model is."


# --- exercise 3: loss per length ------------------------------------------------------------------------

HIDDEN_BINS = [(3, 8), (9, 17), (18, 40)]


def _hidden_case() -> tuple[Seq2Seq, Any, list[tuple[int, int]]]:
    """A small seq2seq model with random weights (output layer sharpened so that losses differ) and a batch
    of 36 generated pairs of 3 to 40 words, with source lengths on the bins' edges; global RNG untouched."""
    pairs = generate_pairs(200, seed=21)
    src_vocab, tgt_vocab = build_vocabs(pairs)
    chosen, seen = [], set()
    for p in pairs:  # every length once where possible, edges included
        if len(p.src) not in seen or len(chosen) < 20:
            chosen.append(p)
            seen.add(len(p.src))
        if len(chosen) == 36:
            break
    with torch.random.fork_rng():
        torch.manual_seed(21)
        encoder = Encoder(len(src_vocab), 8, 8)
        model = Seq2Seq(encoder, PlainDecoder(len(tgt_vocab), 8, 8, encoder.d_enc)).eval()
        with torch.no_grad():
            for p in model.decoder.parameters():
                p.mul_(12.0)
    return model, make_batch(chosen, src_vocab, tgt_vocab), HIDDEN_BINS


def _groups(lengths: Tensor, bins, right_open: bool = False) -> list[Tensor]:
    return [
        (lengths >= lo) & ((lengths < hi) if right_open else (lengths <= hi)) for lo, hi in bins
    ]


def loss_by_length_reference(model: Seq2Seq, batch, bins) -> Tensor:
    """The answer of exercise 3: for each (lo, hi) of ``bins``, the mean over the sentences with lo <= source
    length <= hi of the sentence's loss (-log p(y | x) / its number of target tokens, <eos> included) -> [len(bins)]."""
    with torch.no_grad():
        # [B]
        log_p = sequence_log_prob(model, batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out)
    per_sentence = -log_p.double() / batch.tgt_mask.sum(1)
    return torch.stack([per_sentence[g].mean() for g in _groups(batch.src_lengths, bins)])


@checker("loss_by_length")
def check_loss_by_length(loss_by_length: Any) -> str:
    """Check ``loss_by_length(model, batch, bins) -> [len(bins)]``: for each (lo, hi) in ``bins`` the mean, over
    the sentences of ``batch`` with lo <= source length <= hi, of each sentence's loss per target token."""
    attempted(loss_by_length, "loss_by_length")
    model, batch, bins = _hidden_case()
    case = f"a hidden batch of {len(batch.src)} sentences, bins {bins}"
    result = call(loss_by_length, model, batch, list(bins), name="loss_by_length", case=case)
    if (
        isinstance(result, (list, tuple))
        and len(result) == len(bins)
        and all(
            isinstance(r, (int, float)) or (isinstance(r, Tensor) and r.numel() == 1)
            for r in result
        )
    ):
        result = torch.tensor([float(r) for r in result])
    result = expect_tensor(result, (len(bins),), name="loss_by_length", case=case)
    expected = loss_by_length_reference(model, batch, bins)
    if torch.allclose(result, expected, rtol=1e-4, atol=1e-5):
        return f"`loss_by_length` gives the mean sentence loss of each group on {case} ({', '.join(f'{v:.3f}' for v in expected.tolist())})."
    with torch.no_grad():
        nll = -sequence_log_prob(
            model, batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out
        ).double()
    tokens = batch.tgt_mask.sum(1).double()
    groups = _groups(batch.src_lengths, bins)
    target_lengths = torch.tensor([int(m.sum()) - 1 for m in batch.tgt_mask])
    variants = [
        (
            torch.stack([nll[g].sum() / tokens[g].sum() for g in groups]),
            "you pooled the tokens of a group (total loss / total tokens), so long sentences count more. The exercise asks for the mean of model.loss per sentence: first each sentence's loss per token, then the mean over the sentences of the group.",
        ),
        (
            torch.stack([(nll / batch.tgt_out.shape[1])[g].mean() for g in groups]),
            "you divided each sentence's loss by the padded length T of the batch. Count only its real target tokens (<eos> included): batch.tgt_mask.sum(1).",
        ),
        (
            torch.stack([(nll / (tokens - 1))[g].mean() for g in groups]),
            "you left <eos> out of the token count. model.loss averages over every non-pad token of tgt_out, <eos> included.",
        ),
        (
            torch.stack([nll[g].mean() for g in groups]),
            "your values are the mean of -log p(y | x) per sentence, not per token: divide each sentence's loss by its number of target tokens.",
        ),
        (
            torch.stack(
                [
                    (nll / tokens)[g].mean() if g.any() else torch.tensor(float("nan"))
                    for g in _groups(batch.src_lengths, bins, right_open=True)
                ]
            ),
            "a group (lo, hi) includes both ends: lo <= length <= hi (the chapter's BINS are inclusive).",
        ),
        (
            torch.stack(
                [
                    (nll / tokens)[g].mean() if g.any() else torch.tensor(float("nan"))
                    for g in _groups(target_lengths, bins)
                ]
            ),
            "you grouped the sentences by their target length; group them by their source length, batch.src_lengths.",
        ),
    ]
    for values, message in variants:
        if torch.isfinite(values).all() and torch.allclose(result, values, rtol=1e-4, atol=1e-5):
            fail(f"on {case}, {message}")
    fail(f"on {case}, {largest_difference(result, expected)}.")
