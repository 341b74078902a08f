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


def _ends_dropped(logits, original, masked, corrupted, attention_mask):
    keep = attention_mask.bool().clone()
    keep[:, 0] = False  # [CLS]
    keep[torch.arange(len(keep)), attention_mask.sum(1) - 1] = False  # the last real token
    return _bce(logits[keep], (corrupted != original).float()[keep])


def _labels_not_indexed(logits, original, masked, corrupted, attention_mask):
    # the logits indexed with the mask ([N]), the labels not ([B, T]): shapes that do not broadcast
    real = attention_mask.bool()
    y = (corrupted != original).float()
    p = torch.sigmoid(logits[real])
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


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
    # review of chapter 16 (s4): a hand-written cross-entropy without its minus sign
    (
        "minus sign forgotten",
        lambda lg, o, m, c, a: (
            (c != o).float()[a.bool()] * F.logsigmoid(lg[a.bool()])
            + (c == o).float()[a.bool()] * F.logsigmoid(-lg[a.bool()])
        ).mean(),
        "you left out the minus sign",
    ),
    # review of chapter 16 (s5): the section's L_MLM + lambda L_Disc invites weighing L_Disc here
    (
        "multiplied by lambda",
        lambda lg, o, m, c, a: 50 * _bce(lg[a.bool()], (c != o).float()[a.bool()]),
        "you multiplied the loss by lambda = 50",
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
    (
        "masked positions only",
        lambda lg, o, m, c, a: _bce(lg[a.bool() & (m != o)], (c != o).float()[a.bool() & (m != o)]),
        "at the masked positions only",
    ),
    ("[CLS] and [SEP] left out", _ends_dropped, "the first and the last real token"),
    # review of chapter 16: the special tokens left out by id, as a reader would (the chapter's
    # `specials` are ids 0-4), get the same message: the hidden sentences end in [SEP]
    (
        "special tokens left out by id",
        lambda lg, o, m, c, a: _bce(lg[a.bool() & (o > 4)], (c != o).float()[a.bool() & (o > 4)]),
        "you left out [CLS] and [SEP]",
    ),
    (
        "special tokens left out with isin",
        lambda lg, o, m, c, a: _bce(
            lg[~torch.isin(o, torch.arange(5))], (c != o).float()[~torch.isin(o, torch.arange(5))]
        ),
        "you left out [CLS] and [SEP]",
    ),
    (
        "labels as long",
        lambda lg, o, m, c, a: _bce(lg[a.bool()], (c != o).long()[a.bool()]),
        "convert the comparison with .float() (not .long() or .int())",
    ),
    (
        "labels as int",
        lambda lg, o, m, c, a: _bce(lg[a.bool()], (c != o).int()[a.bool()]),
        "convert the comparison with .float()",
    ),
    (
        "labels not indexed with the mask",
        _labels_not_indexed,
        "index the logits and the labels with the same mask",
    ),
    (
        "binary_cross_entropy on clamped logits",
        lambda lg, o, m, c, a: F.binary_cross_entropy(
            lg[a.bool()].clamp(1e-6, 1 - 1e-6), (c != o).float()[a.bool()]
        ),
        "gave binary_cross_entropy the logits themselves",
    ),
    ("something else", lambda lg, o, m, c, a: lg.mean(), "matches none of the mistakes"),
    # each plausible wrong answer gets the hint of what it did: the arguments of the loss swapped
    # (labels first), as floats, bools or integers, with or without the sigmoid
    (
        "arguments swapped",
        lambda lg, o, m, c, a: _bce((c != o).float()[a.bool()], lg[a.bool()]),
        "you passed the labels first and the logits second",
    ),
    (
        "arguments swapped, bool labels",
        lambda lg, o, m, c, a: _bce((c != o)[a.bool()], lg[a.bool()]),
        "the labels went first, where the logits go",
    ),
    (
        "arguments swapped, long labels",
        lambda lg, o, m, c, a: _bce((c != o).long()[a.bool()], lg[a.bool()]),
        "the labels went first, where the logits go",
    ),
    (
        "binary_cross_entropy, arguments swapped",
        lambda lg, o, m, c, a: F.binary_cross_entropy(
            (c != o).float()[a.bool()], torch.sigmoid(lg[a.bool()])
        ),
        "you passed the labels first and the probabilities second",
    ),
    (
        "binary_cross_entropy on the logits, arguments swapped",
        lambda lg, o, m, c, a: F.binary_cross_entropy((c != o).float()[a.bool()], lg[a.bool()]),
        "the logits went second, where the labels (0 or 1) go",
    ),
    (
        "binary_cross_entropy on the logits",
        lambda lg, o, m, c, a: F.binary_cross_entropy(lg[a.bool()], (c != o).float()[a.bool()]),
        "binary_cross_entropy takes probabilities, and the discriminator gives logits",
    ),
    # a softmax or cross_entropy where the loss is binary
    (
        "cross_entropy on the real tokens",
        lambda lg, o, m, c, a: F.cross_entropy(lg[a.bool()], (c != o).float()[a.bool()]),
        "a softmax across the tokens, so the tokens compete",
    ),
    (
        "cross_entropy on [B, T]",
        lambda lg, o, m, c, a: F.cross_entropy(lg, (c != o).float()),
        "it took each sentence's positions as classes",
    ),
    (
        "cross_entropy with integer labels",
        lambda lg, o, m, c, a: F.cross_entropy(lg[a.bool()], (c != o).long()[a.bool()]),
        "cross_entropy is the loss of a softmax over classes",
    ),
    (
        "cross_entropy on one logit per token",
        lambda lg, o, m, c, a: F.cross_entropy(
            lg[a.bool()].unsqueeze(-1), (c != o).long()[a.bool()]
        ),
        "cross_entropy is the loss of a softmax over classes",
    ),
    (
        "softmax over the tokens",
        lambda lg, o, m, c, a: F.binary_cross_entropy(
            torch.softmax(lg[a.bool()], dim=0), (c != o).float()[a.bool()]
        ),
        "you made the probabilities with a softmax",
    ),
    (
        "softmax over each sentence",
        lambda lg, o, m, c, a: F.binary_cross_entropy(
            torch.softmax(lg, dim=-1)[a.bool()], (c != o).float()[a.bool()]
        ),
        "you made the probabilities with a softmax",
    ),
    (
        "two-class logits (-l, l)",
        lambda lg, o, m, c, a: F.cross_entropy(
            torch.stack([-lg, lg], -1)[a.bool()], (c != o).long()[a.bool()]
        ),
        "sigmoid(2 x logit)",
    ),
    # the mean over the wrong tokens
    (
        "replaced tokens only",
        lambda lg, o, m, c, a: _bce(lg[a.bool() & (c != o)], (c != o).float()[a.bool() & (c != o)]),
        "at the replaced tokens only, so every label you kept is 1",
    ),
    # the sigmoid applied twice, with either loss
    (
        "sigmoid twice, binary_cross_entropy",
        lambda lg, o, m, c, a: F.binary_cross_entropy(
            torch.sigmoid(torch.sigmoid(lg[a.bool()])), (c != o).float()[a.bool()]
        ),
        "sigmoid twice",
    ),
]


def test_the_fallback_does_not_give_the_answer_away():
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_discriminator_loss(lambda lg, o, m, c, a: lg.mean())
    message = failed.value.message
    assert (
        "corrupted != original" not in message and "binary_cross_entropy_with_logits" not in message
    )
    assert "*" not in message


def test_the_masked_labels_hint_does_not_give_the_label_away():
    # review of chapter 16 (s8): the hint names the mistake and leaves the fix to the student
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_discriminator_loss(
            lambda lg, o, m, c, a: _bce(lg[a.bool()], (m != o).float()[a.bool()])
        )
    message = failed.value.message
    assert "labelled every chosen (masked) position" in message
    assert "corrupted != original" not in message and "c != o" not in message


def test_no_message_holds_literal_markdown_emphasis():
    for _, args in ch16._cases():
        for _, message in ch16._mistakes(*args):
            assert not re.search(r"\*\w", message), message


def test_the_hidden_sentences_end_in_sep():
    for _, (_, original, _, _, mask) in ch16._cases():
        last = original[torch.arange(len(mask)), mask.sum(1) - 1]
        assert (last == ch16.SEP).all() and (original[:, 0] == 2).all()


def test_a_shape_mismatch_gets_the_chapters_hint_not_the_general_one():
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_discriminator_loss(_labels_not_indexed)
    assert "keepdim" not in failed.value.message


@pytest.mark.parametrize("name, wrong, message", WRONG, ids=[w[0] for w in WRONG])
def test_check_discriminator_loss_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch16.check_discriminator_loss(wrong)


def test_check_albert_prediction_accepts_right_answers_and_says_what_is_missing():
    assert ch16.check_albert_prediction(17_683_968, True)
    assert ch16.check_albert_prediction(17_683_968.0, True)
    # reader s35b of chapter 16 (1): the chapter's table gives BERT-base ALBERT's vocabulary
    # (109.1 million); the verdict says which BERT-base its 109,482,240 is
    assert "vocabulary of 30,522 tokens (109,482,240)" in str(
        ch16.check_albert_prediction(17_683_968, True).message
    )
    assert ch16.check_albert_prediction(None, None).status == "not attempted"
    half = ch16.check_albert_prediction(None, True)
    assert half.status == "not attempted" and "albert_large_parameters" in half.message
    assert "xlarge_fewer_than_bert_base" in ch16.check_albert_prediction(17_683_968, None).message
    # review of chapter 16 (s4): the right count with the wrong boolean says the prediction is wrong
    with pytest.raises(ExerciseFailed, match="xlarge_fewer_than_bert_base = False is wrong"):
        ch16.check_albert_prediction(17_683_968, False)


PREDICTIONS_WRONG = [
    ((17_683_968 + 23 * 12_596_224, None), "count it once"),
    (
        (17_683_968 - 30000 * 128 - 132_096 + 30000 * 1024, None),
        "the token embeddings are factorized",
    ),
    ((17_683_968 - 132_096, None), "the projection from E = 128"),
    ((17_683_968 - 1_049_600, None), "the pooler"),
    ((18_000_000, None), "looks rounded"),
    ((17.7e6, None), "looks rounded"),
    # review of chapter 16: counts off by a small part are named, never accepted
    ((17_683_968 - 256, None), "the embeddings' LayerNorm"),
    ((17_683_968 - 256, None), "the segment embeddings"),
    ((17_683_968 - 1024, None), "the bias of the projection"),
    ((17_683_968 - 2048, None), "the projection from E = 128 to H = 1024 (1,024 numbers). And"),
    ((17_683_968 + 2 * 896, None), "the segment embeddings 1,024 wide"),
    # review s35: one bias of width H counted twice, not BERT's vocabulary and no position embeddings
    ((17_684_992, None), "1,024 too large, the size of one bias of width H"),
    ((17_683_968 + 50_000, None), "too large by 0.3%"),
    # review of chapter 16: BERT's embeddings, every one 1,024 wide, and no projection
    ((17_683_968 + 30_516 * 896 - 132_096, None), "you counted BERT's embeddings"),
    # a small slip: no "0.0%"
    ((17_684_968, None), "too large by less than 0.1%"),
    ((17_682_968, None), "too small by less than 0.1%"),
    ((18_142_720, None), "the position embeddings 1,024 wide"),
    ((18_146_304, None), "the embeddings' LayerNorm 1,024 wide"),
    ((17_683_968.5, None), "a whole number"),
    ((5_000_000, None), "is too small by"),
    (("17.7M", None), "should be a number"),
    ((None, False), "fewer parameters than BERT-base"),
    ((None, "yes"), "True or False"),
]


@pytest.mark.parametrize(
    "args, message", PREDICTIONS_WRONG, ids=[m[:30] for _, m in PREDICTIONS_WRONG]
)
def test_check_albert_prediction_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch16.check_albert_prediction(*args)


def test_the_generic_messages_hint_without_the_recipe_or_the_counts():
    # reader of chapter 16: a count off by 1.9% was told every part to add up, with the
    # layer's 12,596,224; a wrong True/False was told both exact counts
    with pytest.raises(ExerciseFailed) as wrong_count:
        ch16.check_albert_prediction(17_683_968 + 336_000, None)
    assert "too large by 1.9%" in str(wrong_count.value)
    for recipe in ("12,596,224", "30,000 + 512", "128 -> 1024"):
        assert recipe not in str(wrong_count.value)
    with pytest.raises(ExerciseFailed) as wrong_bool:
        ch16.check_albert_prediction(None, False)
    for count in ("58,724,864", "109,482,240", "58724864", "109482240"):
        assert count not in str(wrong_bool.value)


def test_the_counts_are_the_librarys():
    assert ch16.albert_counts() == {
        "albert_large": 17_683_968,
        "albert_xlarge": 58_724_864,
        "bert_base": 109_482_240,
    }
    assert ch16.EMBEDDINGS + ch16.PROJECTION + ch16.LAYER + ch16.POOLER == 17_683_968


def test_the_exercise_is_not_answered_in_the_chapter_above_it():
    # the ALBERT section counts ALBERT-base and ALBERT-xxlarge; the exercise asks for others
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "16_beyond_bert.ipynb").read_text())
    ids = [c.get("id") for c in nb["cells"]]
    before = nb["cells"][: ids.index("ch16-ex2")]
    text = "".join(
        "".join(c["source"]) for c in before if "solution" not in c["metadata"].get("tags", [])
    )
    assert "17,683,968" not in text and "17683968" not in text
    assert "AlbertConfig.large()" not in text and "AlbertConfig.xlarge()" not in text


def test_the_checker_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert ch16.check_discriminator_loss(ch16.discriminator_loss_reference).passed
    assert torch.equal(torch.rand(3), expected)


def test_check_albert_prediction_names_each_part_once():
    # review of chapter 16 (s7): the projection's bias and the pooler left out were also read as
    # "the pooler and the pooler's bias", naming the pooler twice; one part is counted once
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_albert_prediction(17_683_968 - 1_049_600 - 1024, None)
    message = str(failed.value)
    assert "the bias of the projection" in message and message.count("the pooler") == 1
    assert " Or" not in message


def test_an_extra_bias_is_not_read_as_a_compound_mistake():
    # review of chapter 16 (s35): 17,684,992 equals BERT's vocabulary plus no position and segment
    # embeddings (522 x 128 - 514 x 128), but one bias of width H counted twice is the simpler reading
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_albert_prediction(17_684_992, None)
    message = str(failed.value)
    assert "30,522" not in message and "position" not in message and " And" not in message


@pytest.mark.parametrize("name, wrong, message", WRONG, ids=[w[0] for w in WRONG])
def test_each_mistake_gets_only_its_own_hint(name, wrong, message):
    """Each wrong answer's message holds its own hint and not another mistake's: the hint for swapped
    arguments only where the arguments are swapped, the labels' dtype only where the labels are the
    target; no mistake is taken for an unwritten body (torch's NotImplementedError for a dtype)."""
    with pytest.raises(ExerciseFailed) as failed:
        ch16.check_discriminator_loss(wrong)
    said = failed.value.message
    swapped = "labels second (input, then target)" in said
    assert swapped == ("swapped" in name), said
    assert ("convert the comparison with .float()" in said) == name.startswith("labels as"), said
    assert ("softmax over classes" in said) == name.startswith("cross_entropy"), said


def test_a_stub_still_raises_not_implemented():
    def stub(logits, original, masked, corrupted, attention_mask):
        raise NotImplementedError("write the body")

    assert ch16.check_discriminator_loss(stub).status == "not attempted"
