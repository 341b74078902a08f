"""The exercises of the chapter *From sequence-to-sequence to attention*: the checkers accept the chapter's
solutions and reject typical wrong answers with the right feedback (layout and student edition:
tests/test_exercises.py). check_greedy_or_reference computes exercise 1 itself, from the shipped models."""

from __future__ import annotations

import functools
import math
import re

import nbformat
import pytest
import torch
import torch.nn.functional as F

from lib.data import build_vocabs, generate_pairs, make_batch, split_pairs
from lib.exercises import ExerciseFailed, ch01
from lib.seq2seq import sequence_log_prob
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "01_seq2seq_to_attention.ipynb"


def test_the_chapter_has_two_checked_exercises_and_three_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == {"check_greedy_or_reference", "check_loss_by_length"} == set(ch01.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    assert sum(c.cell_type == "markdown" and "solution" in tags(c) for c in cells) == 3


def test_check_loss_by_length_accepts_the_chapters_solution():
    exercise = next(e for e in exercises(CHAPTER) if e["checker"] == "check_loss_by_length")
    solution = defined_functions("\n".join(c.source for c in exercise["solutions"]))[
        "loss_by_length"
    ]
    passed = ch01.check_loss_by_length(solution)
    assert passed.passed
    # reader's report 1, item 6: the message says which model its numbers (about 4.4) come from
    assert "small untrained model" in str(passed)
    # the three means, printed to 3 decimals: within 0.002 of 4.408, 4.431, 4.426 (a kernel path other than
    # AVX2 moves the untrained model's float32 losses in their last digits, and a rounding with them)
    printed = re.search(r"\((\d\.\d{3}), (\d\.\d{3}), (\d\.\d{3})\)", str(passed))
    assert printed, str(passed)
    assert [float(x) for x in printed.groups()] == pytest.approx([4.408, 4.431, 4.426], abs=0.002)
    assert "vocabulary of 81 words" in str(passed) and "log V = 4.39" in str(passed)
    as_list = ch01.check_loss_by_length(
        lambda m, b, bins: ch01.loss_by_length_reference(m, b, bins).tolist()
    )
    assert as_list.passed  # a list of floats is fine
    # a NumPy array too, as exercise 1's checker accepts one (reader s15, point 4)
    as_array = ch01.check_loss_by_length(
        lambda m, b, bins: ch01.loss_by_length_reference(m, b, bins).numpy()
    )
    assert as_array.passed
    as_float32 = ch01.check_loss_by_length(
        lambda m, b, bins: ch01.loss_by_length_reference(m, b, bins).float().numpy()
    )
    assert as_float32.passed


def test_check_loss_by_length_quotes_its_case():
    # "on the case 'a practice batch ...'", not "on the case a practice batch" (reader s15,
    # point 6); "practice", not "hidden", in the reader's kernel (reader s25, point 2)
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_loss_by_length(lambda m, b, bins: torch.zeros(5))
    assert "on the case 'a practice batch of 36 sentences" in str(failed.value)
    assert "the case a practice" not in str(failed.value)


def test_the_hidden_case_has_sentences_on_every_bin_edge_and_is_reproducible():
    model, batch, bins = ch01._hidden_case()
    lengths = set(batch.src_lengths.tolist())
    assert all(lo in lengths and hi in lengths for lo, hi in bins)
    again = ch01.loss_by_length_reference(*ch01._hidden_case())
    assert torch.equal(ch01.loss_by_length_reference(model, batch, bins), again)


def _nll(model, batch):
    return -sequence_log_prob(model, batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out)


def _grouped(per_sentence, by=lambda b: b.src_lengths, right_open=False):
    def loss_by_length(model, batch, bins):
        values, key = per_sentence(model, batch), by(batch)
        return torch.stack(
            [
                values[(key >= lo) & ((key < hi) if right_open else (key <= hi))].mean()
                for lo, hi in bins
            ]
        )

    return loss_by_length


def _pooled(model, batch, bins):
    nll, n, L = _nll(model, batch), batch.tgt_mask.sum(1), batch.src_lengths
    return torch.stack(
        [nll[(L >= lo) & (L <= hi)].sum() / n[(L >= lo) & (L <= hi)].sum() for lo, hi in bins]
    )


PER_TOKEN = lambda m, b: _nll(m, b) / b.tgt_mask.sum(1)  # noqa: E731


def _token_nll(model, batch):
    """-log p [B, T] of every target token, the <pad> targets after <eos> included (no ignore_index)."""
    logits = model(batch.src, batch.src_lengths, batch.tgt_in).logits
    return F.cross_entropy(logits.transpose(1, 2), batch.tgt_out, reduction="none")


def _last_step(model, batch):
    """-log p [B] of each sentence's last target token, its <eos>."""
    last = batch.tgt_mask.sum(1) - 1
    return _token_nll(model, batch).gather(1, last[:, None])[:, 0]


def _summed(model, batch, bins):
    values, L = PER_TOKEN(model, batch), batch.src_lengths
    return torch.stack([values[(L >= lo) & (L <= hi)].sum() for lo, hi in bins])


@functools.cache
def _chapter_test_batch():
    """The chapter's `test_batch`: its 400 test pairs, with its vocabularies (85 and 81 words, as the
    checker's own, so that the checker's model reads its word ids without an error)."""
    pairs = generate_pairs(4000, seed=0)
    train, _, test = split_pairs(pairs, seed=0)
    return make_batch(test, *build_vocabs(train))


LOSS_WRONG = [
    ("pooled tokens", _pooled, "you pooled the tokens of a group"),
    (
        "padded length",
        _grouped(lambda m, b: _nll(m, b) / b.tgt_out.shape[1]),
        "the padded length T",
    ),
    (
        "<eos> left out",
        _grouped(lambda m, b: _nll(m, b) / (b.tgt_mask.sum(1) - 1)),
        "you left <eos> out",
    ),
    (
        "<eos> step left out, n - 1 tokens",
        _grouped(
            lambda m, b: (_nll(m, b) - _last_step(m, b)) / (b.tgt_mask.sum(1) - 1),
        ),
        "you left out the last step, the probability of <eos>: each sentence's loss covers its n - 1",
    ),
    ("per sentence, not per token", _grouped(_nll), "not per token"),
    ("hi excluded", _grouped(PER_TOKEN, right_open=True), "includes both ends"),
    (
        "target lengths",
        _grouped(PER_TOKEN, by=lambda b: b.tgt_mask.sum(1) - 1),
        "by their target length",
    ),
    (
        "target lengths with <eos>",
        _grouped(PER_TOKEN, by=lambda b: b.tgt_mask.sum(1)),
        "by their target length, counted with its <eos>",
    ),
    ("whole-batch loss", lambda m, b, bins: m.loss(b), "returned shape []"),
    (
        "whole-batch loss in every group",
        lambda m, b, bins: [m.loss(b).item()] * len(bins),
        "every group got the same number, model.loss of the whole batch",
    ),
    (
        "mean sentence loss of the batch in every group",
        lambda m, b, bins: PER_TOKEN(m, b).mean().expand(len(bins)),
        "every group got the same number, the mean per-sentence loss of the whole batch",
    ),
    (
        "log p, not its negative",
        _grouped(lambda m, b: -PER_TOKEN(m, b)),
        "your values are log p(y | x) per token, negative numbers",
    ),
    (
        "lo excluded",
        _grouped(PER_TOKEN, by=lambda b: b.src_lengths - 1, right_open=True),
        "yours leaves out the sentences of length lo",
    ),
    (
        "divided by the source length",
        _grouped(lambda m, b: _nll(m, b) / b.src_lengths),
        "divided each sentence's loss by its source length",
    ),
    (
        "padding in the loss",
        _grouped(lambda m, b: _token_nll(m, b).sum(1) / b.tgt_mask.sum(1)),
        "your loss counts the padding",
    ),
    (
        "mean over all positions",
        _grouped(lambda m, b: _token_nll(m, b).mean(1)),
        "over all T positions of the batch, padding included",
    ),
    ("summed, not averaged", _summed, "you summed the sentence losses of each group"),
    ("perplexity", _grouped(lambda m, b: PER_TOKEN(m, b).exp()), "you returned perplexities"),
    (
        "one value per sentence",
        lambda m, b, bins: PER_TOKEN(m, b),
        "returned one value per sentence (shape [36])",
    ),
    (
        "grouped by the padded width",
        _grouped(PER_TOKEN, by=lambda b: torch.full_like(b.src_lengths, b.src.shape[1])),
        "came out NaN, the mean of no sentences",
    ),
    ("negative, and wrong", lambda m, b, bins: -torch.ones(len(bins)), "returned negative numbers"),
    # a reader's report (s21, point 8): the chapter's global BINS, and another model than `model`
    (
        "the chapter's BINS",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, b, ch01.CHAPTER_BINS),
        "instead of the argument `bins`",
    ),
    (
        "another model",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, b, bins) + 3,
        "check the model you use (the `model` argument",
    ),
    # a reader's report (s23, M8): the right computation on the chapter's global test_batch
    (
        "the chapter's test_batch",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, _chapter_test_batch(), bins),
        "your values stay the same when `batch` changes",
    ),
    # a reader's report (s22, T1): perplexity in other forms, and other units, named as such
    (
        "exp of the group mean",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, b, bins).exp(),
        "exp of each group's mean loss",
    ),
    ("exp of the pooled loss", lambda m, b, bins: _pooled(m, b, bins).exp(), "pooled loss"),
    (
        "exp of a near loss",
        lambda m, b, bins: (_grouped(PER_TOKEN)(m, b, bins) + 0.01).exp(),
        "your values are exp of the losses",
    ),
    (
        "bits",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, b, bins) / math.log(2),
        "your losses are in bits",
    ),
    (
        "log10",
        lambda m, b, bins: _grouped(PER_TOKEN)(m, b, bins) / math.log(10),
        "base 10",
    ),
]


@pytest.mark.parametrize("name, wrong, message", LOSS_WRONG, ids=[w[0] for w in LOSS_WRONG])
def test_check_loss_by_length_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch01.check_loss_by_length(wrong)


def test_the_checker_computes_exercise_1_as_the_chapter_does():
    case = ch01._long_sentences()
    assert len(case["long_idx"]) == 129
    greedy, reference, ended = case["greedy"], case["reference"], case["ended"]
    # the chapter's model answer: the greedy output is far more probable, in every sentence
    assert (
        f"{greedy['right'].mean():.1f}" == "-22.7" and f"{reference['right'].mean():.1f}" == "-55.5"
    )
    assert (greedy["right"] - reference["right"]).min() > 11
    # greedy_decode scores its own output the same way, where the output ends with <eos>; one long
    # output reached the length limit without it
    assert (case["decoded"] - greedy["right"])[ended].abs().max() < ch01.ATOL
    assert ended.sum() == 128 and (case["decoded"] - greedy["right"])[~ended].min() > 1
    # the mistakes the checker names move every variant well past its tolerance somewhere
    for variants in (greedy, reference):
        assert (variants["per token"] - variants["right"]).abs().max() > 100 * ch01.ATOL
    assert (reference["without <eos>"] - reference["right"]).abs().max() > 100 * ch01.ATOL


def test_check_greedy_or_reference_accepts_the_right_values_and_says_what_is_missing():
    case = ch01._long_sentences()
    greedy, reference = case["greedy"]["right"], case["reference"]["right"]
    assert ch01.check_greedy_or_reference(greedy.float(), reference.float()).passed
    # greedy_decode's own log_prob (no <eos> step where an output reached the length limit) too
    assert ch01.check_greedy_or_reference(case["decoded"], reference).passed
    assert ch01.check_greedy_or_reference(greedy.tolist(), reference.tolist()).passed
    # NumPy arrays as well as lists, float32 too
    assert ch01.check_greedy_or_reference(greedy.numpy(), reference.float().numpy()).passed
    assert ch01.check_greedy_or_reference(None, None).status == "not attempted"
    half = ch01.check_greedy_or_reference(None, reference)
    assert half.status == "not attempted" and "log_p_greedy" in half.message
    assert "log_p_reference" in ch01.check_greedy_or_reference(greedy, None).message


def _answers(name):
    """Exercise 1's typical wrong answers, built from the checker's own computation."""
    case = ch01._long_sentences()
    g, r = case["greedy"], case["reference"]
    return {
        "the loss, not log p": (-g["right"], r["right"]),
        "per token": (g["right"], r["per token"]),
        "the loss per token": (g["right"], -r["per token"]),
        "<eos> left out": (g["right"], r["without <eos>"]),
        "swapped": (r["right"], g["right"]),
        "the references twice": (r["right"], r["right"]),
        "<eos> kept in the greedy words": (g["<eos> twice"], r["right"]),
        "<eos> kept in the reference words": (g["right"], r["<eos> twice"]),
        "another order": (g["right"].flip(0), r["right"]),
        "all 400 test sentences": (g["right"], torch.zeros(400)),
        "a few sentences": (g["right"][:5], r["right"]),
        "a prediction, not a tensor": ("greedy", r["right"]),
        "a list of tensors": (list(g["right"]), r["right"]),
        "off somewhere": (g["right"] + 0.5 * (torch.arange(129) == 7), r["right"]),
        "under the attention model": (g["right"], ch01._under_attention()["reference"]),
        "in bits": (g["right"] / math.log(2), r["right"]),
        "base 10": (g["right"] / math.log(10), r["right"] / math.log(10)),
        "probabilities": (g["right"], r["right"].exp()),
        "padding included": (g["right"], r["with padding"]),
        "<eos> left out of one sentence": (g["right"], _at(r["right"], r["without <eos>"], 3)),
        "the loss of one sentence": (_at(g["right"], -g["right"], 11), r["right"]),
        "a single number": (g["right"], r["right"].mean()),
        "positive numbers": (g["right"], 1 - r["right"]),
        "between 0 and 1": (torch.full((129,), 0.5), r["right"]),
    }[name]


def _at(values, other, i):
    """``values`` with its entry i taken from ``other``."""
    return torch.where(torch.arange(len(values)) == i, other, values)


GREEDY_WRONG = [
    ("the loss, not log p", "holds -log p(y | x), the loss of each sentence"),
    ("per token", "is a mean per token"),
    ("the loss per token", "is a mean per token"),
    ("<eos> left out", "leaves out the last step, the probability of <eos>"),
    ("swapped", "log_p_greedy and log_p_reference are swapped"),
    ("the references twice", "log_p_greedy holds the log-probabilities of the references, not of"),
    ("<eos> kept in the greedy words", "scores each greedy output with two <eos> at its end"),
    ("<eos> kept in the reference words", "scores each reference with two <eos> at its end"),
    ("another order", "keep the order of long_idx"),
    ("all 400 test sentences", "in the order of long_idx (129)"),
    ("a few sentences", "has shape [5]; expected [129]"),
    ("a prediction, not a tensor", "should be a tensor of shape [129]"),
    ("a list of tensors", "stack them into one tensor of shape [129]"),
    ("off somewhere", "in 1 of the 129 sentences, the first at position 7 of long_idx"),
    ("under the attention model", "under the attention model (attentive)"),
    ("in bits", "is in bits (logarithms to base 2)"),
    ("base 10", "log_p_reference is in logarithms to base 10 (log10)"),
    ("probabilities", "holds probabilities p(y | x)"),
    ("padding included", "also adds the log-probabilities of the padding"),
    (
        "<eos> left out of one sentence",
        "leaves out the last step, the probability of <eos>, in 1 of the 129 sentences, the first at "
        "position 3 of long_idx",
    ),
    ("the loss of one sentence", "the loss of each sentence (positive numbers) in 1 of the 129"),
    ("a single number", "is a single number"),
    ("positive numbers", "holds positive numbers, but a log-probability is at most 0"),
    ("between 0 and 1", "holds numbers between 0 and 1: probabilities?"),
]


@pytest.mark.parametrize("name, message", GREEDY_WRONG, ids=[w[0] for w in GREEDY_WRONG])
def test_check_greedy_or_reference_names_the_mistake_and_not_the_answer(name, message):
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(*_answers(name))
    feedback = str(failed.value)
    assert message in feedback
    # the exercise asks the reader to compute the values and compare them: no feedback gives either
    case = ch01._long_sentences()
    for variants in (case["greedy"], case["reference"]):
        mean = variants["right"].mean()
        assert f"{mean:.1f}" not in feedback and f"{mean:.0f}" not in feedback
    assert "more probable" not in feedback and "model error" not in feedback
    if name == "the references twice":  # nothing was swapped
        assert "swapped" not in feedback


BOTH_WRONG = {
    "both per token": ("per token", "is a mean per token"),
    "both in another order": ("another order", "holds the right values in another order"),
    "both in base 10": ("base 10", "is in logarithms to base 10"),
    "both the loss": ("the loss", "holds -log p(y | x), the loss of each sentence"),
}


@pytest.mark.parametrize("name", BOTH_WRONG)
def test_a_mistake_in_both_tensors_is_named_for_both(name):
    """Reader s27: with the same mistake in both, the feedback named log_p_reference alone, and a
    student who fixed only that one failed a second time on log_p_greedy."""
    case = ch01._long_sentences()
    g, r = case["greedy"], case["reference"]
    wrong = {
        "per token": lambda v: v["per token"],
        "another order": lambda v: v["right"].flip(0),
        "base 10": lambda v: v["right"] / math.log(10),
        "the loss": lambda v: -v["right"],
    }[BOTH_WRONG[name][0]]
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(wrong(g), wrong(r))
    feedback = str(failed.value)
    assert f"log_p_reference {BOTH_WRONG[name][1]}" in feedback
    assert "log_p_greedy has the same mistake" in feedback
    # two different mistakes: the first is named, and nothing claims they are the same
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(g["right"].flip(0), r["per token"])
    assert "is a mean per token" in str(failed.value) and "same mistake" not in str(failed.value)


def test_an_eos_chosen_at_the_last_step_ends_the_sentence():
    """The chapter's decoding rule (greedy_by_hand, greedy_decode): at most MAX_LEN steps, each choosing
    one token, <eos> included. Decoded with a limit k at which some long output chooses <eos> exactly at
    step k, that output is finished (k - 1 words and its own <eos>), not cut off: its <eos> step counts,
    and leaving it out is named as that mistake. The outputs that need more steps are cut off at k words."""
    full = ch01._long_sentences()
    k = int(full["steps"][full["ended"]].median())
    case = ch01._long_sentences(k)
    at_the_limit = case["ended"] & (case["steps"] == k)
    assert at_the_limit.sum() == (full["ended"] & (full["steps"] == k)).sum() > 0
    assert torch.equal(~case["ended"], full["steps"] > k) and (case["steps"] <= k).all()
    greedy = case["greedy"]
    # greedy_decode's own score includes an <eos> chosen at step k, as the right answer does
    assert (case["decoded"] - greedy["right"])[at_the_limit].abs().max() < ch01.ATOL
    assert (case["decoded"] - greedy["without <eos>"])[~case["ended"]].abs().max() < ch01.ATOL
    assert ch01._diagnose(greedy["right"], "log_p_greedy", "greedy", case) is None
    assert ch01._diagnose(case["decoded"], "log_p_greedy", "greedy", case) is None
    dropped = torch.where(at_the_limit, greedy["without <eos>"], greedy["right"])
    feedback = ch01._diagnose(dropped, "log_p_greedy", "greedy", case)
    assert f"whose <eos> came at step {k}, the last that MAX_LEN allows" in feedback
    assert "was not cut off" in feedback and f"its {k - 1} words" in feedback
    # leaving out <eos> everywhere is the general mistake, not the one at the limit
    everywhere = torch.where(case["ended"], greedy["without <eos>"], greedy["right"])
    feedback = ch01._diagnose(everywhere, "log_p_greedy", "greedy", case)
    assert "leaves out the last step, the probability of <eos>" in feedback


def test_the_checker_decodes_with_the_chapters_limit():
    cells = nbformat.read(CHAPTER, as_version=4).cells
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert re.findall(r"^MAX_LEN = (\d+)", code, re.MULTILINE) == [str(ch01.MAX_LEN)]
    # and no greedy output of the plain model chose <eos> exactly at that limit: the test above
    # makes one at a smaller limit
    case = ch01._long_sentences()
    assert not (case["ended"] & (case["steps"] == ch01.MAX_LEN)).any()
    assert (~case["ended"]).sum() == 1 and case["steps"][~case["ended"]].item() == ch01.MAX_LEN


def test_an_output_decoded_again_with_another_limit_is_named():
    """Decoded again with more than MAX_LEN steps, the output cut off at MAX_LEN words becomes another
    sentence with another log p: the feedback names the cut-off output, not the scoring."""
    case = ch01._long_sentences()
    greedy, reference = case["greedy"]["right"], case["reference"]["right"]
    redecoded = torch.where(case["ended"], greedy, greedy - 3.0)
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(redecoded, reference)
    feedback = str(failed.value)
    assert f"cut off at MAX_LEN = {ch01.MAX_LEN} words" in feedback
    assert 'hypotheses["plain"][i]' in feedback and "in 1 of the 129 sentences" in feedback
    # an error in a sentence that chose <eos> is not that mistake
    off = torch.where(torch.arange(len(greedy)) == 7, greedy - 3.0, greedy)
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(off, reference)
    assert "cut off" not in str(failed.value)


def test_every_named_mistake_of_exercise_3_differs_from_the_answer_and_from_the_others():
    model, batch, bins = ch01._hidden_case()
    expected = ch01.loss_by_length_reference(model, batch, bins)
    mistakes = ch01._loss_mistakes(model, batch, bins)
    for i, (values, message) in enumerate(mistakes):
        assert (values - expected).abs().max() > 1e-3, message
        for other, _ in mistakes[i + 1 :]:
            assert (values - other).abs().max() > 1e-3, message


def test_greedy_outputs_of_the_attention_model_scored_under_plain_are_named_the_wrong_models():
    # the mistake: the right scoring (under `plain`) of hypotheses["attention"], not hypotheses["plain"]
    from lib.checkpoints import load_seq2seq
    from lib.data import Pair, build_vocabs, generate_pairs, make_batch, split_pairs
    from lib.seq2seq import BahdanauDecoder, PlainDecoder, greedy_decode

    pairs = generate_pairs(4000, seed=0)
    train_pairs, _, test_pairs = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train_pairs)
    models = {}
    with torch.random.fork_rng():
        for name, decoder in [
            ("plain", PlainDecoder(len(tgt_vocab), 32, 64, 128)),
            ("bahdanau", BahdanauDecoder(len(tgt_vocab), 32, 64, 128, d_attn=64)),
        ]:
            models[name] = load_seq2seq(
                name, decoder, pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
            )[0]
    batch = make_batch(test_pairs, src_vocab, tgt_vocab)
    with torch.no_grad():
        decoded = greedy_decode(
            models["bahdanau"], batch.src, batch.src_lengths, 60, tgt_vocab.bos_id, tgt_vocab.eos_id
        )
        long_idx = [i for i, p in enumerate(test_pairs) if len(p.src) >= 30]
        outputs = [tuple(tgt_vocab.decode(decoded.tokens[i])) for i in long_idx]
        scored = make_batch(
            [Pair(test_pairs[i].src, o, (0,) * len(o)) for i, o in zip(long_idx, outputs)],
            src_vocab,
            tgt_vocab,
        )
        wrong = sequence_log_prob(
            models["plain"], scored.src, scored.src_lengths, scored.tgt_in, scored.tgt_out
        )
    case = ch01._long_sentences()
    # the plain model translates no long sentence as the attention model does: every value differs
    assert ((wrong.double() - case["greedy"]["right"]).abs() > ch01.ATOL).all()
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference(wrong, case["reference"]["right"])
    feedback = str(failed.value)
    assert "scores the greedy outputs of the attention model (attentive)" in feedback
    assert "the outputs scored are the wrong model's" in feedback
    assert 'hypotheses["plain"]' in feedback and "sequence_log_prob" not in feedback
