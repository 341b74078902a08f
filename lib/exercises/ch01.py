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

import math
from functools import lru_cache
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from lib.data import Pair, build_vocabs, generate_pairs, make_batch, split_pairs
from lib.seq2seq import (
    BahdanauDecoder,
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
    passing_everywhere,
    plain,
)

__all__ = ["check_greedy_or_reference", "check_loss_by_length"]


# --- exercise 1: search error or model error? ---------------------------------------------------------

# The chapter's decoding limit, as its greedy_by_hand and lib.seq2seq.greedy_decode apply it: at most
# MAX_LEN decoding steps, each choosing one token, <eos> included. An <eos> chosen at step MAX_LEN ends
# a finished sentence of MAX_LEN - 1 words; an output of MAX_LEN words never chose <eos>: it was cut off.
MAX_LEN = 60
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
    # [B, T]: log p of each target token, the <pad> targets after <eos> included
    every = logits.log_softmax(-1).gather(-1, batch.tgt_out[..., None])[..., 0].double()
    picked = every.masked_fill(~batch.tgt_mask, 0.0)
    total, n = picked.sum(1), batch.tgt_mask.sum(1)  # [B], [B]: tokens, <eos> included
    last = picked.gather(1, (n - 1)[:, None])[:, 0]  # the <eos> step
    return {
        "right": total,
        "per token": total / n,
        "without <eos>": total - last,
        "with padding": every.sum(1),
    }


def _load(name: str, decoder_class: type, pairs: list[Pair], src_vocab, tgt_vocab) -> Seq2Seq:
    """The shipped model ``name`` with the chapter's sizes (D_EMB 32, D_HIDDEN 64, d_attn 64); the
    global random state is left untouched (building a model draws weights)."""
    from lib.checkpoints import (
        load_seq2seq,
    )  # here: the checkpoints import the models, not the reverse

    extra = {"d_attn": 64} if decoder_class is BahdanauDecoder else {}
    with torch.random.fork_rng():
        decoder = decoder_class(len(tgt_vocab), 32, 64, 128, **extra)
        model, _, _ = load_seq2seq(
            name, decoder, pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
        )
    return model


@lru_cache(maxsize=2)
def _long_sentences(max_len: int = MAX_LEN) -> dict[str, Any]:
    """What exercise 1 asks, computed as the chapter computes it: the corpus, the shipped plain model,
    its greedy translations of the 400 test sentences (in one batch, as the chapter's ``translate``,
    at most ``max_len`` decoding steps) and, for the test sentences of 30+ words in test order, the
    log-probabilities of the references and of the greedy outputs, each scored as a sentence with its
    final <eos>, with what the typical mistakes give instead."""
    pairs = generate_pairs(4000, seed=0)
    train_pairs, _, test_pairs = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train_pairs)
    model = _load("plain", PlainDecoder, pairs, src_vocab, tgt_vocab)
    batch = make_batch(test_pairs, src_vocab, tgt_vocab)
    decoded = greedy_decode(
        model, batch.src, batch.src_lengths, max_len, tgt_vocab.bos_id, tgt_vocab.eos_id
    )
    long_idx = [i for i, p in enumerate(test_pairs) if len(p.src) >= 30]
    long_pairs = [test_pairs[i] for i in long_idx]
    outputs = [tgt_vocab.decode(decoded.tokens[i]) for i in long_idx]
    greedy_pairs = [Pair(p.src, tuple(o), (0,) * len(o)) for p, o in zip(long_pairs, outputs)]
    ended = (decoded.tokens[long_idx] == tgt_vocab.eos_id).any(1)  # [N]: chose <eos> in time
    # a mistake to name: the <eos> kept among the words (make_batch then adds a second one)
    twice = {
        what: _variants(
            model,
            [Pair(p.src, p.tgt + ("<eos>",), p.alignment + (0,)) for p in scored],
            src_vocab,
            tgt_vocab,
        )["right"]
        for what, scored in [("reference", long_pairs), ("greedy", greedy_pairs)]
    }
    return {
        "max_len": max_len,
        "long_idx": long_idx,
        "reference": _variants(model, long_pairs, src_vocab, tgt_vocab)
        | {"<eos> twice": twice["reference"]},
        "greedy": _variants(model, greedy_pairs, src_vocab, tgt_vocab)
        | {"<eos> twice": twice["greedy"]},
        # greedy_decode's own score: the same as "right" where the output chose <eos>; an output cut
        # off at max_len words has no <eos> step in it
        "decoded": decoded.log_prob[long_idx].double(),
        "ended": ended,
        # decoding steps each output took: its words, and its <eos> where it chose one
        "steps": torch.tensor([len(o) for o in outputs]) + ended.long(),
        "scored": (pairs, long_pairs, greedy_pairs, src_vocab, tgt_vocab),
    }


@lru_cache(maxsize=2)
def _under_attention(max_len: int = MAX_LEN) -> dict[str, Tensor]:
    """log p of the same references and greedy outputs under the shipped attention model: a mistake
    to name, computed only when an answer is wrong."""
    pairs, long_pairs, greedy_pairs, src_vocab, tgt_vocab = _long_sentences(max_len)["scored"]
    model = _load("bahdanau", BahdanauDecoder, pairs, src_vocab, tgt_vocab)
    under = {
        what: _variants(model, scored, src_vocab, tgt_vocab)["right"]
        for what, scored in [("reference", long_pairs), ("greedy", greedy_pairs)]
    }
    # the attention model's own greedy outputs (the 400 test sentences in one batch, as the chapter's
    # hypotheses["attention"]), scored under the plain model: the right scoring of the wrong outputs
    _, _, test_pairs = split_pairs(pairs, seed=0)
    batch = make_batch(test_pairs, src_vocab, tgt_vocab)
    decoded = greedy_decode(
        model, batch.src, batch.src_lengths, max_len, tgt_vocab.bos_id, tgt_vocab.eos_id
    )
    long_idx = _long_sentences(max_len)["long_idx"]
    outputs = [tgt_vocab.decode(decoded.tokens[i]) for i in long_idx]
    its_pairs = [Pair(p.src, tuple(o), (0,) * len(o)) for p, o in zip(long_pairs, outputs)]
    plain_model = _load("plain", PlainDecoder, pairs, src_vocab, tgt_vocab)
    under["its greedy under plain"] = _variants(plain_model, its_pairs, src_vocab, tgt_vocab)[
        "right"
    ]
    return under


def _as_log_probs(value: Any, name: str, n: int) -> Tensor:
    """``value`` as a float64 tensor [n], or feedback naming what is wrong with its type or shape."""
    value = plain(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        value = torch.from_numpy(value.astype(np.float64))  # as a list of numbers is accepted
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
        if value.numel() == 1:
            fail(
                f"{name} is a single number; the exercise compares the two sentence by sentence: one value per sentence of long_idx, a tensor of shape [{n}]."
            )
        fail(
            f"{name} has shape {list(value.shape)}; expected [{n}], one value per sentence of long_idx."
        )
    if not value.is_floating_point() or not torch.isfinite(value).all():
        fail(f"{name} should hold finite floating-point numbers; got {fmt(value)}.")
    return value.detach().to(torch.float64)


def _close_each(a: Tensor, b: Tensor) -> Tensor:
    """[N] bool: where ``a`` and ``b`` agree within ATOL."""
    return (a - b).abs() <= ATOL


def _close(a: Tensor, b: Tensor) -> bool:
    return bool(_close_each(a, b).all())


def _sentences(wrong: Tensor, case: dict) -> str:
    """Where a mistake is, for feedback: "" when it is in every sentence, else how many and the
    first, as " in 3 of the 129 sentences, the first at position 7 of long_idx (test pair 123)"."""
    if wrong.all():
        return ""
    first = int(wrong.nonzero()[0, 0])
    return f" in {int(wrong.sum())} of the {len(wrong)} sentences, the first at position {first} of long_idx (test pair {case['long_idx'][first]})"


def _diagnose(value: Tensor, name: str, what: str, case: dict) -> str | None:
    """None if ``value`` is the plain model's log p of ``what`` ("greedy" or "reference"), else what
    went wrong, without the values themselves (:func:`_mistake`'s message)."""
    mistake = _mistake(value, name, what, case)
    return mistake and mistake[1]


def _mistake(value: Tensor, name: str, what: str, case: dict) -> tuple[str | None, str] | None:
    """None if ``value`` is the plain model's log p of ``what`` ("greedy" or "reference"), else
    (the mistake's name, or None for an unnamed difference; what went wrong, without the values).

    Every sentence is scored with its final <eos>. For an output cut off at MAX_LEN words, which
    never chose <eos>, greedy_decode's own log_prob (without that step) is accepted too: it is what
    the decoder computed while it decoded. An <eos> chosen at step MAX_LEN is the sentence's own, as
    at any other step: leaving it out is a mistake."""
    mine, noun = case[what], ("greedy output" if what == "greedy" else "reference")
    right = mine["right"]
    ok = _close_each(value, right)
    if what == "greedy":
        ok |= ~case["ended"] & _close_each(value, case["decoded"])
    if ok.all():
        return None
    wrong, other = ~ok, ("reference" if what == "greedy" else "greedy")
    # mistakes that change every sentence the same way
    if _close(value, case[other]["right"]):
        if what == "greedy":
            # log_p_reference, checked first, was right (or not given): the same numbers twice
            return (
                "references",
                f'{name} holds the log-probabilities of the references, not of the greedy outputs. Score the plain model\'s own outputs, hypotheses["plain"][i] for i in long_idx.',
            )
        return (
            "swapped",
            f"{name} holds the log-probabilities of the greedy outputs: log_p_greedy and log_p_reference are swapped.",
        )
    if _close(value.sort().values, right.sort().values):
        return (
            "order",
            f"{name} holds the right values in another order: keep the order of long_idx.",
        )
    if _close(value, _under_attention(case["max_len"])[what]):
        return (
            "attention model",
            f"{name} holds log-probabilities under the attention model (attentive); the exercise asks for those of the plain model, `plain`, whose bottleneck it is about.",
        )
    if _close(value, right / math.log(10)):
        return (
            "base 10",
            f"{name} is in logarithms to base 10 (log10): each of your values is the natural-log value divided by ln 10 = 2.303. Use natural logarithms, as log_softmax and sequence_log_prob do: the chapter measures log-probabilities in nats.",
        )
    if _close(value, right / math.log(2)):
        return (
            "bits",
            f"{name} is in bits (logarithms to base 2). Use natural logarithms, as log_softmax and sequence_log_prob do: the chapter measures log-probabilities in nats.",
        )
    if (value > 0).all() and _close(value.log(), right):
        return (
            "probabilities",
            f"{name} holds probabilities p(y | x); the exercise asks for their logarithms, log p(y | x), sums of log p(y_t | y_<t, x): a product of 40 probabilities soon underflows.",
        )
    # mistakes that may touch some sentences only: the message says which
    where = _sentences(wrong, case)

    def matches(variant: Tensor) -> bool:
        return bool(_close_each(value, variant)[wrong].all())

    if matches(-right):
        return (
            "loss",
            f"{name} holds -log p(y | x), the loss of each sentence (positive numbers){where}. A log-probability is a sum of log p(y_t | y_<t, x), each at most 0.",
        )
    if matches(mine["per token"]) or matches(-mine["per token"]):
        return (
            "per token",
            f"{name} is a mean per token (as model.loss computes it){where}. log p(y | x) of a sentence is the sum over its tokens, as sequence_log_prob returns it.",
        )
    if matches(mine["with padding"]):
        return (
            "padding",
            f"{name} also adds the log-probabilities of the padding{where}: the positions after <eos>, where tgt_out is <pad> (batch.tgt_mask is False), are not part of the sentence. Leave them out, as sequence_log_prob does.",
        )
    if matches(mine["without <eos>"]):
        at_the_limit = case["ended"] & (case["steps"] == case["max_len"])
        if what == "greedy" and bool(at_the_limit[wrong].all()):
            return (
                "eos at the limit",
                f"{name} leaves out the <eos> step of the greedy output{where}, an output whose <eos> came at step {case['max_len']}, the last that MAX_LEN allows. That output was not cut off: it chose <eos> itself, and its {case['max_len'] - 1} words end there like any other sentence. Only an output of MAX_LEN words, which never chose <eos>, was cut off by the limit.",
            )
        return (
            "eos",
            f"{name} leaves out the last step, the probability of <eos>{',' + where if where else ''}. A sentence is only finished when the model ends it: make_batch puts <eos> at the end of tgt_out; score that too.",
        )
    if matches(mine["<eos> twice"]):
        return (
            "eos twice",
            f"{name} scores each {noun} with two <eos> at its end{where}: your target words already end with <eos>, and make_batch adds one more. Give make_batch the words only, as tgt_vocab.decode returns them by default.",
        )
    if what == "greedy" and matches(_under_attention(case["max_len"])["its greedy under plain"]):
        return (
            "attention outputs",
            f"{name} scores the greedy outputs of the attention model (attentive){where}: the scoring under `plain` is right, but the outputs scored are the wrong model's. Score the plain model's own greedy outputs, hypotheses[\"plain\"].",
        )
    if (value >= 0).all() and (value <= 1).all():
        return (
            "zero to one",
            f"{name} holds numbers between 0 and 1: probabilities? The exercise asks for log-probabilities, log p(y | x), sums of log p(y_t | y_<t, x), each at most 0.",
        )
    if (value > 0).all():
        return (
            "positive",
            f"{name} holds positive numbers, but a log-probability is at most 0: a sum of log p(y_t | y_<t, x). Did you compute a loss?",
        )
    if what == "greedy" and not bool(case["ended"][wrong].any()):
        # only outputs cut off at max_len are off: decoded again with another limit, they differ
        return (
            "cut off",
            f"{name} differs from the plain model's (`plain`) log p(greedy output | x){where}, only where the output was cut off at MAX_LEN = {case['max_len']} words without choosing <eos>. Score the chapter's own outputs, hypotheses[\"plain\"][i] for i in long_idx, not outputs decoded again with another limit.",
        )
    return (
        None,
        f"{name} differs from the plain model's (`plain`) log p({noun} | x){where or ' in every sentence'}. Score each target sentence with sequence_log_prob, on a batch that make_batch builds from its pairs, under torch.no_grad().",
    )


@checker("greedy or reference")
def check_greedy_or_reference(log_p_greedy: Any, log_p_reference: Any) -> str:
    """Check exercise 1: ``log_p_greedy`` and ``log_p_reference``, tensors [N] holding, for each of the N
    test sentences of 30+ words (in the order of the chapter's long_idx), log p(greedy output | x) and
    log p(reference | x) under the plain model, each sentence scored with its final <eos> (an output cut
    off at MAX_LEN words, which never chose <eos>, may also be given without that step, as
    greedy_decode's own log_prob has it)."""
    if log_p_greedy is None and log_p_reference is None:
        not_attempted(
            "compute log_p_greedy and log_p_reference in the cell above, then run this cell again."
        )
    case = _long_sentences()
    n = len(case["long_idx"])
    problems = [
        _mistake(_as_log_probs(value, name, n), name, what, case)
        for value, name, what in [
            (log_p_reference, "log_p_reference", "reference"),
            (log_p_greedy, "log_p_greedy", "greedy"),
        ]
        if value is not None
    ]
    problems = [p for p in problems if p]
    if len(problems) == 2 and problems[0][0] is not None and problems[0][0] == problems[1][0]:
        # one round trip, not two: the student would otherwise fix log_p_reference alone
        fail(f"{problems[0][1]} log_p_greedy has the same mistake: correct both.")
    if problems:
        fail(problems[0][1])
    if log_p_greedy is None:
        not_attempted("log_p_reference is right; now compute log_p_greedy.")
    if log_p_reference is None:
        not_attempted("log_p_greedy is right; now compute log_p_reference.")
    return f"both are the plain model's log-probabilities, on all {n} test sentences of 30+ words. Now compare them sentence by sentence and answer the questions of the exercise."


# --- exercise 3: loss per length ------------------------------------------------------------------------

HIDDEN_BINS = [(3, 8), (9, 17), (18, 40)]
# the chapter's BINS, whose count names the mistake of looping over them instead of ``bins``
CHAPTER_BINS = [(3, 9), (10, 14), (15, 19), (20, 24), (25, 29), (30, 34), (35, 40)]

# The seed of exercise 3's case (its sentences and its model's weights): a practice value here; a
# course's grader sets its own (grading/ch01.py of the repository, which the package does not ship:
# lib/exercises/__init__.py).
SEEDS = {"loss_by_length": 21}
PRACTICE_SEED = 21


def _edge_pairs(pairs: list, chosen: list) -> list:
    """Pairs of ``pairs`` that tell the known mistakes about groups apart where ``chosen`` has none
    that does: a target length (with or without <eos>) in another of HIDDEN_BINS than the source
    length, a source length on a bin's lower end and one on its upper end. Without them, grouping by
    the target length passed on 6 of 10 drawn seeds (course-kit review s33, S1)."""

    def group(n: int) -> int:
        return next((k for k, (lo, hi) in enumerate(HIDDEN_BINS) if lo <= n <= hi), -1)

    needs = [
        lambda p: -1 < group(len(p.src)) != group(len(p.tgt)) > -1,
        lambda p: -1 < group(len(p.src)) != group(len(p.tgt) + 1) > -1,
        lambda p: len(p.src) in {lo for lo, _ in HIDDEN_BINS},
        lambda p: len(p.src) in {hi for _, hi in HIDDEN_BINS},
    ]
    extra = []
    for need in needs:
        if not any(need(p) for p in chosen + extra):
            extra += [p for p in pairs if need(p) and p not in extra][:3]
    return extra


def _hidden_case() -> tuple[Seq2Seq, Any, list[tuple[int, int]]]:
    """A small seq2seq model in float64 with random weights (decoder sharpened so that losses differ) and a batch
    of 36 generated pairs of 3 to 40 words, with source lengths on the bins' edges; global RNG untouched."""
    seed = SEEDS["loss_by_length"]
    pairs = generate_pairs(200, seed=seed)
    chosen, seen = [], set()
    for p in pairs:  # every length once where possible, edges included
        if len(p.src) not in seen or len(chosen) < 20:
            chosen.append(p)
            seen.add(len(p.src))
        if len(chosen) == 36:
            break
    # a course's seed: pairs at the bins' edges where none is (drawn from other pairs of the seed)
    extra = (
        [] if seed == PRACTICE_SEED else _edge_pairs(generate_pairs(1000, seed=seed + 1), chosen)
    )
    src_vocab, tgt_vocab = build_vocabs(pairs + extra)
    chosen += extra
    with torch.random.fork_rng():
        torch.manual_seed(SEEDS["loss_by_length"])
        encoder = Encoder(len(src_vocab), 8, 8)
        model = Seq2Seq(encoder, PlainDecoder(len(tgt_vocab), 8, 8, encoder.d_enc)).eval()
        with torch.no_grad():
            for p in model.decoder.parameters():
                p.mul_(12.0)
    # in float64: the sharpened cell is chaotic, and in float32 a sentence's loss depended on the other
    # sentences of its batch by about 1e-3 (a right answer looping over sentences one at a time failed)
    return model.double(), make_batch(chosen, src_vocab, tgt_vocab), HIDDEN_BINS


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


def _mistakes_passing_loss_by_length() -> list[str]:
    """The known mistakes (``_loss_mistakes``) whose values are right on the case."""
    model, batch, bins = _hidden_case()
    expected = loss_by_length_reference(model, batch, bins)
    answers = dict((message, values) for values, message in _loss_mistakes(model, batch, bins))

    def right(message: str) -> bool:
        values = answers[message]
        return bool(
            torch.isfinite(values).all() and torch.allclose(values, expected, rtol=1e-4, atol=1e-5)
        )

    return passing_everywhere(list(answers), right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"loss_by_length": _mistakes_passing_loss_by_length}


@checker("loss_by_length")
def check_loss_by_length(loss_by_length: Any) -> str:
    """Check ``loss_by_length(model, batch, bins) -> [len(bins)]``: for each (lo, hi) in ``bins`` the mean, over
    the sentences of ``batch`` with lo <= source length <= hi, of each sentence's loss per target token."""
    attempted(loss_by_length, "loss_by_length")
    model, batch, bins = _hidden_case()
    case = f"a hidden batch of {len(batch.src)} sentences, bins {bins}"
    # the library's messages say "on the case ...": the case quoted, as the other chapters' are
    quoted = f"'{case}'"
    result = call(loss_by_length, model, batch, list(bins), name="loss_by_length", case=quoted)
    if isinstance(result, np.ndarray) and result.dtype.kind in "fiu":
        result = torch.from_numpy(result.astype(np.float64))  # as exercise 1's checker accepts it
    if (
        isinstance(result, (list, tuple))
        and len(result) == len(bins)
        and all(
            isinstance(r, (int, float, np.number)) or (isinstance(r, Tensor) and r.numel() == 1)
            for r in result
        )
    ):
        result = torch.tensor([float(r) for r in result])
    if isinstance(result, Tensor) and result.shape == (len(batch.src),) != (len(bins),):
        fail(
            f"on {case}, `loss_by_length` returned one value per sentence (shape {list(result.shape)}); average them within each group of bins: one value per group, shape [{len(bins)}]."
        )
    if isinstance(result, Tensor) and result.dim() == 0:
        fail(
            f"on {case}, `loss_by_length` returned shape [], one number for the whole batch; the exercise asks for one per group of bins, shape [{len(bins)}]."
        )
    if (
        isinstance(result, Tensor)
        and result.shape == (len(bins),)
        and result.is_floating_point()
        and result.isnan().any()
    ):
        group = int(result.isnan().nonzero()[0, 0])
        fail(
            f"on {case}, group {group} {bins[group]} came out NaN, the mean of no sentences, but the hidden batch has sentences in every group. Select a group's sentences by their source length, batch.src_lengths, with lo <= length <= hi."
        )
    if isinstance(result, Tensor) and result.shape == (len(CHAPTER_BINS),) != (len(bins),):
        fail(
            f"on {case}, `loss_by_length` returned shape [{len(CHAPTER_BINS)}], one value per group of the chapter's BINS; the checker's bins are {bins}, shape [{len(bins)}]. Did you loop over the global `BINS` instead of the argument `bins`?"
        )
    result = expect_tensor(result, (len(bins),), name="loss_by_length", case=quoted)
    expected = loss_by_length_reference(model, batch, bins)
    if torch.allclose(result, expected, rtol=1e-4, atol=1e-5):
        vocabulary = model.decoder.out.out_features
        return (
            f"`loss_by_length` gives the mean sentence loss of each group on {case} ({', '.join(f'{v:.3f}' for v in expected.tolist())}). "
            f"These come from the checker's own small untrained model (random weights, a target vocabulary of {vocabulary} words), "
            f"so they lie near log V = {math.log(vocabulary):.2f}, the loss of a uniform guess; your numbers for the chapter's trained models are far lower."
        )
    for values, message in _loss_mistakes(model, batch, bins):
        if torch.isfinite(values).all() and torch.allclose(result, values, rtol=1e-4, atol=1e-5):
            fail(f"on {case}, {message}")
    if _ignores_batch(loss_by_length, model, batch, bins, result, expected):
        fail(
            f"on {case}, your values stay the same when `batch` changes (the checker tried half of its sentences, whose losses differ): compute them from the argument `batch`, not from a batch of the chapter such as `test_batch`."
        )
    if (result > 0).all() and torch.allclose(result.log(), expected, rtol=0, atol=0.05):
        # exp of (nearly) the right losses, in a form the table above does not name
        fail(
            f"on {case}, your values are exp of the losses, perplexities (their logarithms are within 0.05 nats of the losses). The exercise asks for the loss itself, -log p(y | x) per token: leave out the exp."
        )
    if (result < 0).all():
        fail(
            f"on {case}, `loss_by_length` returned negative numbers; a loss, -log p per token, is at least 0. {largest_difference(result, expected)}."
        )
    if ((result - expected).abs() > 1).all():  # every group a nat or more off
        vocabulary = model.decoder.out.out_features
        fail(
            f"on {case}, {largest_difference(result, expected)}. Every group is more than 1 nat off: check the model you use (the `model` argument, not a model of the chapter) and the units of your loss (nats, natural logarithms). The checker's own model is untrained, so its losses lie near log V = {math.log(vocabulary):.2f}."
        )
    fail(f"on {case}, {largest_difference(result, expected)}.")


def _ignores_batch(loss_by_length, model: Seq2Seq, batch, bins, result, expected) -> bool:
    """Whether ``loss_by_length`` gives ``result`` (not one number for every group) again on every
    other sentence of ``batch``, where the right values (``expected`` on all of it) change: an answer
    that reads a global batch (the chapter's ``test_batch``), whose word ids the checker's model, with
    vocabularies of the chapter's sizes, reads without an error."""
    half = type(batch)(*(getattr(batch, f)[::2] for f in batch.__dataclass_fields__))
    if result.unique().numel() == 1 or any(not g.any() for g in _groups(half.src_lengths, bins)):
        return False
    try:
        again = loss_by_length(model, half, list(bins))
        again = torch.tensor(
            [float(v) for v in (again.tolist() if hasattr(again, "tolist") else again)]
        )
    except Exception:  # the second call is a test of this one mistake, not of the answer
        return False
    moved = not torch.allclose(loss_by_length_reference(model, half, bins), expected)
    return again.shape == result.shape and moved and torch.allclose(again.double(), result.double())


def _sentence_losses(model: Seq2Seq, batch) -> tuple[Tensor, Tensor]:
    """-log p(y | x) of each sentence [B], and -log p of every target token [B, T], the <pad>
    targets after <eos> included."""
    with torch.no_grad():
        nll = -sequence_log_prob(
            model, batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out
        ).double()  # [B]
        logits = model(batch.src, batch.src_lengths, batch.tgt_in).logits  # [B, T, V]
        every = F.cross_entropy(logits.transpose(1, 2), batch.tgt_out, reduction="none").double()
    return nll, every  # [B], [B, T]


# Long by design: a table of the usual mistakes, each computed the way a reader would write it.
def _loss_mistakes(model: Seq2Seq, batch, bins) -> list[tuple[Tensor, str]]:
    """What exercise 3's typical mistakes return on ``batch``, each with the feedback that names it."""
    nll, every = _sentence_losses(model, batch)
    tokens = batch.tgt_mask.sum(1).double()  # [B], <eos> included
    # [B]: -log p of each sentence without its last step, the <eos>
    without_eos = nll - every.gather(1, (batch.tgt_mask.sum(1) - 1)[:, None])[:, 0]
    per_token = nll / tokens
    lengths = batch.src_lengths
    groups = _groups(lengths, bins)

    def grouped(values: Tensor, by: list[Tensor] = groups, reduce=Tensor.mean) -> Tensor:
        return torch.stack(
            [reduce(values[g]) if g.any() else torch.tensor(float("nan")) for g in by]
        )

    target_lengths = torch.tensor([int(m.sum()) - 1 for m in batch.tgt_mask])
    whole_batch = nll.sum() / tokens.sum()  # [], model.loss(batch): every token of the batch pooled
    left_open = [(lengths > lo) & (lengths <= hi) for lo, hi in bins]
    pooled = torch.stack([nll[g].sum() / tokens[g].sum() for g in groups])  # [len(bins)]
    return [
        (
            pooled,
            "you pooled the tokens of a group (total loss / total tokens), as model.loss of a batch made of the group's sentences does, so long sentences count more. The exercise asks for the mean of model.loss per sentence: first each sentence's loss per token, then the mean over the sentences of the group.",
        ),
        (
            grouped(nll / batch.tgt_out.shape[1]),
            "you divided each sentence's loss by the padded length T of the batch. Count only its real target tokens (<eos> included): batch.tgt_mask.sum(1).",
        ),
        (
            grouped(nll / (tokens - 1)),
            "you left <eos> out of the token count. model.loss averages over every non-pad token of tgt_out, <eos> included.",
        ),
        (
            grouped(without_eos / (tokens - 1)),
            "you left out the last step, the probability of <eos>: each sentence's loss covers its n - 1 words only. A sentence is only finished when the model ends it: model.loss scores every non-pad token of tgt_out, <eos> included, and counts it.",
        ),
        (
            grouped(nll / lengths),
            "you divided each sentence's loss by its source length; the loss per token counts the target tokens it predicts (<eos> included): batch.tgt_mask.sum(1).",
        ),
        (
            grouped(every.sum(1) / tokens),
            "your loss counts the padding: the positions after <eos>, where tgt_out is <pad> (batch.tgt_mask is False), are not part of a sentence. Leave their losses out (F.cross_entropy with ignore_index=model.pad_id does, and so does sequence_log_prob).",
        ),
        (
            grouped(every.mean(1)),
            "you averaged each sentence's token losses over all T positions of the batch, padding included. Average over its real target tokens only (<eos> included): batch.tgt_mask.",
        ),
        (
            grouped(nll),
            "your values are the mean of -log p(y | x) per sentence, not per token: divide each sentence's loss by its number of target tokens.",
        ),
        (
            grouped(per_token, reduce=Tensor.sum),
            "you summed the sentence losses of each group; the exercise asks for their mean, so that groups of different sizes compare.",
        ),
        (
            grouped(per_token.exp()),
            "you returned perplexities: a perplexity is exp of the loss, the number of equally likely words that the model's uncertainty amounts to; the exercise asks for the loss itself, -log p(y | x) per token.",
        ),
        (
            grouped(per_token).exp(),
            "you returned exp of each group's mean loss, a perplexity (the number of equally likely words that the model's uncertainty amounts to); the exercise asks for the mean loss itself: leave out the exp.",
        ),
        (
            pooled.exp(),
            "you returned exp of each group's pooled loss (total loss / total tokens), a perplexity. The exercise asks for the loss itself, and not pooled: first each sentence's loss per token, then the mean over the sentences of the group.",
        ),
        (
            grouped(per_token) / math.log(2),
            "your losses are in bits (logarithms to base 2: each value is the loss in nats divided by ln 2 = 0.693). Use natural logarithms, as log_softmax, F.cross_entropy and sequence_log_prob do: the chapter measures losses in nats.",
        ),
        (
            grouped(per_token) / math.log(10),
            "your losses are in logarithms to base 10 (log10: each value is the loss in nats divided by ln 10 = 2.303). Use natural logarithms, as log_softmax, F.cross_entropy and sequence_log_prob do: the chapter measures losses in nats.",
        ),
        (
            grouped(per_token, by=_groups(lengths, bins, right_open=True)),
            "a group (lo, hi) includes both ends: lo <= length <= hi (the chapter's BINS are inclusive); yours leaves out the sentences of length hi.",
        ),
        (
            grouped(per_token, by=left_open),
            "a group (lo, hi) includes both ends: lo <= length <= hi (the chapter's BINS are inclusive); yours leaves out the sentences of length lo.",
        ),
        (
            grouped(per_token, by=_groups(target_lengths, bins)),
            "you grouped the sentences by their target length; group them by their source length, batch.src_lengths.",
        ),
        (
            grouped(per_token, by=_groups(target_lengths + 1, bins)),
            "you grouped the sentences by their target length, counted with its <eos> (batch.tgt_mask.sum(1)); group them by their source length, batch.src_lengths.",
        ),
        (
            grouped(-per_token),
            "your values are log p(y | x) per token, negative numbers; the loss is its negative, -log p(y | x) per token.",
        ),
        (
            whole_batch.expand(len(bins)),
            "every group got the same number, model.loss of the whole batch: its tokens pooled over all the sentences, whatever their length. Give each group its own number: select its sentences by their source length, batch.src_lengths, with lo <= length <= hi, and average their own losses per token.",
        ),
        (
            per_token.mean().expand(len(bins)),
            "every group got the same number, the mean per-sentence loss of the whole batch. Give each group its own number: select its sentences by their source length, batch.src_lengths, with lo <= length <= hi, and average only theirs.",
        ),
    ]
