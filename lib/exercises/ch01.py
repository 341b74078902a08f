"""Checkers for the exercises of the chapter *From sequence-to-sequence to attention*.

- :func:`check_greedy_or_reference`: exercise 1 (predict, then compute): for the plain model and the test
  sentences of 30+ words, log p(greedy output | x) and log p(reference | x) of each sentence. The checker
  computes both itself, from the shipped model, and names the mistake of a wrong answer without giving
  the values or which of the two is larger.
- :func:`check_loss_by_length`: exercise 3 (implement): the mean per-sentence loss (the cross-entropy per
  target token, Sutskever et al. 2014, sec. 2) of each group of source lengths.

Exercise 2 (take the summary away) is answered in prose; the chapter's solution computes its numbers.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from lib.data import Pair, build_vocabs, generate_pairs, make_batch, split_pairs
from lib.seq2seq import (
    Encoder,
    PlainDecoder,
    Seq2Seq,
    greedy_decode,
    sequence_log_prob,
)

from . import (
    attempted,
    call,
    checker,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    not_attempted,
    plain,
)

__all__ = ["check_greedy_or_reference", "check_loss_by_length"]


# --- exercise 1: is greedy the most probable translation? ---------------------------------------------

MAX_LEN = 60  # the chapter's decoding limit: longer than any target sentence of the corpus
# Two computations of one log p(y | x): float32 sums of up to 60 log-probabilities, in batches of other
# shapes, differ by about 1e-5 nats; each mistake below moves a sentence's value by far more (leaving
# out an <eos> step the model is sure of moves it by less, and changes nothing the exercise asks).
ATOL = 1e-3


def _variants(model: Seq2Seq, pairs: list[Pair], src_vocab, tgt_vocab) -> dict[str, Tensor]:
    """log p(y | x) [B] of each pair's target (<eos> included) under ``model``, and the wrong sums that
    exercise 1's mistakes give."""
    batch = make_batch(pairs, src_vocab, tgt_vocab)
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.tgt_in).logits  # [B, T, V]
    picked = logits.log_softmax(-1).gather(-1, batch.tgt_out[..., None])[..., 0]  # [B, T]
    picked = picked.masked_fill(~batch.tgt_mask, 0.0).double()
    total, n = picked.sum(1), batch.tgt_mask.sum(1)  # [B], [B]: tokens, <eos> included
    last = picked.gather(1, (n - 1)[:, None])[:, 0]  # the <eos> step
    return {"right": total, "per token": total / n, "without <eos>": total - last}


@lru_cache(maxsize=1)
def _long_sentences() -> dict[str, Any]:
    """What exercise 1 asks, computed as the chapter computes it: the corpus, the shipped plain model,
    its greedy translations of the 400 test sentences (in one batch, as the chapter's ``translate``) and,
    for the test sentences of 30+ words in test order, the log-probabilities of the references and of
    the greedy outputs. The global random state is left untouched (building a model draws weights)."""
    from lib.checkpoints import (
        load_seq2seq,
    )  # here: the checkpoints import the models, not the reverse

    pairs = generate_pairs(4000, seed=0)
    train_pairs, _, test_pairs = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train_pairs)
    with torch.random.fork_rng():
        decoder = PlainDecoder(len(tgt_vocab), 32, 64, 128)  # the chapter's D_EMB, D_HIDDEN
        model, _, _ = load_seq2seq(
            "plain", decoder, pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
        )
    batch = make_batch(test_pairs, src_vocab, tgt_vocab)
    decoded = greedy_decode(
        model, batch.src, batch.src_lengths, MAX_LEN, tgt_vocab.bos_id, tgt_vocab.eos_id
    )
    long_idx = [i for i, p in enumerate(test_pairs) if len(p.src) >= 30]
    long_pairs = [test_pairs[i] for i in long_idx]
    outputs = [tgt_vocab.decode(decoded.tokens[i]) for i in long_idx]
    greedy_pairs = [Pair(p.src, tuple(o), (0,) * len(o)) for p, o in zip(long_pairs, outputs)]
    return {
        "long_idx": long_idx,
        "reference": _variants(model, long_pairs, src_vocab, tgt_vocab),
        "greedy": _variants(model, greedy_pairs, src_vocab, tgt_vocab),
        # greedy_decode's own score, which has no <eos> step where the output reached MAX_LEN
        "decoded": decoded.log_prob[long_idx].double(),
        "ended": (decoded.tokens[long_idx] == tgt_vocab.eos_id).any(1),
    }


def _as_log_probs(value: Any, name: str, n: int) -> Tensor:
    """``value`` as a float64 tensor [n], or feedback naming what is wrong with its type or shape."""
    value = plain(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
        fail(
            f"{name} is a {type(value).__name__} of tensors; stack them into one tensor of shape [{n}]."
        )
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
        value = torch.tensor(value, dtype=torch.float64)
    if not isinstance(value, Tensor):
        fail(f"{name} should be a tensor of shape [{n}], one value per sentence; got {fmt(value)}.")
    if value.shape != (n,):
        if value.numel() == 400:
            fail(
                f"{name} has one value per test sentence (400); keep those of the sentences of 30 or more words, in the order of long_idx ({n})."
            )
        fail(
            f"{name} has shape {list(value.shape)}; expected [{n}], one value per sentence of long_idx."
        )
    if not value.is_floating_point() or not torch.isfinite(value).all():
        fail(f"{name} should hold finite floating-point numbers; got {fmt(value)}.")
    return value.detach().to(torch.float64)


def _close(a: Tensor, b: Tensor) -> bool:
    return bool(((a - b).abs() <= ATOL).all())


def _diagnose(value: Tensor, name: str, what: str, case: dict) -> str | None:
    """None if ``value`` is the plain model's log p of ``what`` ("greedy" or "reference"), else what
    went wrong, without the values themselves."""
    mine = case[what]
    if _close(value, mine["right"]):
        return None
    if what == "greedy":  # greedy_decode's log_prob: the same where the output ends with <eos>
        decoded = case["decoded"]
        if bool(
            (((value - mine["right"]).abs() <= ATOL) | ((value - decoded).abs() <= ATOL)).all()
        ):
            return None
    other = "reference" if what == "greedy" else "greedy"
    if _close(value, -mine["right"]):
        return f"{name} holds -log p(y | x), the loss of each sentence (positive numbers). A log-probability is a sum of log p(y_t | y_<t, x), each at most 0."
    if _close(value, mine["per token"]) or _close(value, -mine["per token"]):
        return f"{name} is a mean per token (as model.loss computes it). log p(y | x) of a sentence is the sum over its tokens, as sequence_log_prob returns it."
    if _close(value, mine["without <eos>"]):
        return f"{name} leaves out the last step, the probability of <eos>. A sentence is only finished when the model ends it: make_batch puts <eos> at the end of tgt_out; score that too."
    if _close(value, case[other]["right"]):
        return f"{name} holds the log-probabilities of the {'greedy outputs' if other == 'greedy' else 'references'}: log_p_greedy and log_p_reference are swapped."
    if _close(value.sort().values, mine["right"].sort().values):
        return f"{name} holds the right values in another order: keep the order of long_idx."
    wrong = (value - mine["right"]).abs() > ATOL
    first = int(wrong.nonzero()[0, 0])
    return (
        f"{name} differs from the plain model's (`plain`) log p({'greedy output' if what == 'greedy' else 'reference'} | x) in {int(wrong.sum())} of the {len(value)} sentences, "
        f"the first at position {first} of long_idx (test pair {case['long_idx'][first]}). Score each target sentence with sequence_log_prob, on a batch that make_batch builds from its pairs, under torch.no_grad()."
    )


@checker("greedy or reference")
def check_greedy_or_reference(log_p_greedy: Any, log_p_reference: Any) -> str:
    """Check exercise 1: ``log_p_greedy`` and ``log_p_reference``, tensors [N] holding, for each of the N
    test sentences of 30+ words (in the order of the chapter's long_idx), log p(greedy output | x) and
    log p(reference | x) under the plain model, <eos> included."""
    if log_p_greedy is None and log_p_reference is None:
        not_attempted(
            "compute log_p_greedy and log_p_reference in the cell above, then run this cell again."
        )
    case = _long_sentences()
    n = len(case["long_idx"])
    for value, name, what in [
        (log_p_reference, "log_p_reference", "reference"),
        (log_p_greedy, "log_p_greedy", "greedy"),
    ]:
        if value is None:
            continue
        problem = _diagnose(_as_log_probs(value, name, n), name, what, case)
        if problem:
            fail(problem)
    if log_p_greedy is None:
        not_attempted("log_p_reference is right; now compute log_p_greedy.")
    if log_p_reference is None:
        not_attempted("log_p_greedy is right; now compute log_p_reference.")
    return f"both are the plain model's log-probabilities, on all {n} test sentences of 30+ words. Now compare them sentence by sentence and answer the questions of the exercise."


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
