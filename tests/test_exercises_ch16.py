"""The exercises of the chapter *Beyond BERT*: the checkers accept the chapter's solutions and reject typical
wrong answers with the right feedback (layout and student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch
import torch.nn.functional as F

from lib.exercises import ExerciseFailed, ch16
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "16_beyond_bert.ipynb"


def test_the_chapter_has_both_checked_exercises_and_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert (
        set(found) == {"check_discriminator_loss", "check_albert_prediction"} == set(ch16.__all__)
    )
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 2 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


def test_check_discriminator_loss_accepts_the_chapters_solution_and_the_reference():
    solution = [e for e in exercises(CHAPTER) if e["checker"] == "check_discriminator_loss"][0]
    mine = defined_functions("\n".join(c.source for c in solution["solutions"]))[
        "discriminator_loss"
    ]
    assert ch16.check_discriminator_loss(mine).passed
    assert ch16.check_discriminator_loss(ch16.discriminator_loss_reference).passed


def test_the_hidden_cases_hold_the_two_traps():
    for _, (logits, original, masked, corrupted, mask) in ch16._cases()[::2]:
        chosen = masked != original
        assert (chosen & (corrupted == original)).any()  # a sample equal to the original
        assert (mask == 0).any()  # padding


def _bce(logits, labels):
    return F.binary_cross_entropy_with_logits(logits, labels)


def _forgot_return(logits, original, masked, corrupted, attention_mask):
    labels = (corrupted != original).float()  # noqa: F841 (the mistake: computed, never returned)


WRONG = [
    (
        "labels from the masked positions",
        lambda lg, o, m, c, a: _bce(lg[a.bool()], (m != o).float()[a.bool()]),
        "A sampled token equal to the original",
    ),
    (
        "padding counted",
        lambda lg, o, m, c, a: _bce(lg, (c != o).float()),
        "Padding must not be counted",
    ),
    (
        "labels inverted",
        lambda lg, o, m, c, a: _bce(lg[a.bool()], (c == o).float()[a.bool()]),
        "wrong way round",
    ),
    (
        "sum",
        lambda lg, o, m, c, a: F.binary_cross_entropy_with_logits(
            lg[a.bool()], (c != o).float()[a.bool()], reduction="sum"
        ),
        "you summed",
    ),
    (
        "sigmoid twice",
        lambda lg, o, m, c, a: _bce(torch.sigmoid(lg[a.bool()]), (c != o).float()[a.bool()]),
        "sigmoid twice",
    ),
    (
        "per-token losses",
        lambda lg, o, m, c, a: F.binary_cross_entropy_with_logits(
            lg, (c != o).float(), reduction="none"
        ),
        "return one number",
    ),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    ("raises", lambda lg, o, m, c, a: lg[99], "raised IndexError"),
    ("something else", lambda lg, o, m, c, a: lg.mean(), "Label each real token 1"),
]


@pytest.mark.parametrize("name, wrong, message", WRONG, ids=[w[0] for w in WRONG])
def test_check_discriminator_loss_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch16.check_discriminator_loss(wrong)


def test_check_albert_prediction_accepts_right_answers_and_says_what_is_missing():
    assert ch16.check_albert_prediction(11_683_584, True)
    assert ch16.check_albert_prediction(11.7e6, True)  # rounded to 0.1M: within 0.3%
    assert ch16.check_albert_prediction(None, None).status == "not attempted"
    half = ch16.check_albert_prediction(None, True)
    assert half.status == "not attempted" and "albert_base_parameters" in half.message
    assert "xxlarge_fewer_than_bert_large" in ch16.check_albert_prediction(11_683_584, None).message


PREDICTIONS_WRONG = [
    ((11_683_584 + 11 * 7_087_872, None), "count it once"),
    (
        (11_683_584 - 30000 * 128 - 99_072 + 30000 * 768, None),
        "the token embeddings are factorized",
    ),
    ((11_683_584 - 99_072, None), "the projection from E = 128"),
    ((11_683_584 - 590_592, None), "the pooler"),
    ((12_000_000, None), "the paper's rounded 12M"),
    ((5_000_000, None), "is off by"),
    (("11.7M", None), "should be a number"),
    ((None, False), "fewer than BERT-large"),
    ((None, "yes"), "True or False"),
]


@pytest.mark.parametrize(
    "args, message", PREDICTIONS_WRONG, ids=[m[:30] for _, m in PREDICTIONS_WRONG]
)
def test_check_albert_prediction_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch16.check_albert_prediction(*args)


def test_the_counts_are_the_librarys():
    assert ch16.albert_counts() == {
        "albert_base": 11_683_584,
        "albert_xxlarge": 222_595_584,
        "bert_large": 335_141_888,
    }


def test_the_checker_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert ch16.check_discriminator_loss(ch16.discriminator_loss_reference).passed
    assert torch.equal(torch.rand(3), expected)
