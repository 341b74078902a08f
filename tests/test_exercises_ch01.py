"""The exercises of the chapter *From sequence-to-sequence to attention*: the checkers accept the chapter's
solutions and reject typical wrong answers with the right feedback (layout and student edition:
tests/test_exercises.py; the chapter's solution asserts the numbers check_greedy_or_reference knows)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch

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
    assert ch01.check_loss_by_length(solution).passed
    as_list = ch01.check_loss_by_length(
        lambda m, b, bins: ch01.loss_by_length_reference(m, b, bins).tolist()
    )
    assert as_list.passed  # a list of floats is fine


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
    ("per sentence, not per token", _grouped(_nll), "not per token"),
    ("hi excluded", _grouped(PER_TOKEN, right_open=True), "includes both ends"),
    (
        "target lengths",
        _grouped(PER_TOKEN, by=lambda b: b.tgt_mask.sum(1) - 1),
        "by their target length",
    ),
    ("whole-batch loss", lambda m, b, bins: m.loss(b), "returned shape []"),
    (
        "log p, not its negative",
        _grouped(lambda m, b: -PER_TOKEN(m, b)),
        "the largest difference is",
    ),
]


@pytest.mark.parametrize("name, wrong, message", LOSS_WRONG, ids=[w[0] for w in LOSS_WRONG])
def test_check_loss_by_length_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch01.check_loss_by_length(wrong)


def test_check_greedy_or_reference_accepts_and_says_what_is_missing():
    assert ch01.check_greedy_or_reference("greedy", 0)
    assert ch01.check_greedy_or_reference(" Greedy output", torch.tensor(0))
    assert ch01.check_greedy_or_reference("greedy", None).status == "not attempted"
    assert "more_probable" in ch01.check_greedy_or_reference(None, 0).message


GREEDY_WRONG = [
    (("reference", 0), "the errors are the model's"),
    (("beam", 0), '"greedy" or "reference"'),
    (("greedy", 129), "instead of the reverse"),
    (("greedy", 12), "is not what the plain model gives"),
    (("greedy", 2.5), "a count of sentences"),
    (("greedy", "none"), "reference_wins should be a number"),
]


@pytest.mark.parametrize("args, message", GREEDY_WRONG, ids=[m[:30] for _, m in GREEDY_WRONG])
def test_check_greedy_or_reference_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch01.check_greedy_or_reference(*args)


def test_a_wrong_prediction_is_not_told_the_measured_numbers():
    # the exercise asks the reader to compute both log-probabilities: a wrong guess must not print them
    with pytest.raises(ExerciseFailed) as failed:
        ch01.check_greedy_or_reference("reference", None)
    message = str(failed.value)
    for value in (ch01.MEAN_LOG_P_GREEDY, ch01.MEAN_LOG_P_REFERENCE):
        assert f"{value:.1f}" not in message and f"{value:.0f}" not in message
