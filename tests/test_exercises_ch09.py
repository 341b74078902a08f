"""Exercise 1 of the chapter *The Transformer* (a pre-LN layer by hand): the checker in the notebook
refuses the answers that do not write the sub-layers, as the course grader does (reader's report:
calling the library's layer through its class, or a copy of the layer or of the checker's reference,
passed in the book and got 0 from the grader). Mistakes of a written answer: tests/test_exercises.py."""

from __future__ import annotations

import copy

import pytest
import torch

from lib import transformer
from lib.exercises import ExerciseFailed, ch09
from tests.test_exercises import ROOT, solution_function

CHAPTER = ROOT / "notebooks" / "09_the_transformer.ipynb"
# what the exercise asks, in the words of each refusal
ASKS = (
    "compute the layer from its sub-modules (self_attn, ff, norm1, norm2)",
    "write the pre-LN sub-layers yourself",
    "from layer.self_attn, layer.ff, layer.norm1 and layer.norm2",
)


def _class_forward(layer, x):
    return transformer.EncoderLayer.forward(layer, x)[0]


def _type_forward(layer, x):
    return type(layer).forward(layer, x)[0]


def _rebuilt(layer, x):
    """A new layer of the library, the given one's weights copied in."""
    D = x.shape[-1]
    mine = transformer.EncoderLayer(
        D, layer.self_attn.n_heads, layer.ff.linear1.out_features, 0.0, True
    )
    mine.load_state_dict(layer.state_dict())
    return mine.eval()(x)[0]


def _deep_copy(layer, x):
    """A copy of the layer, the checker's refusal on its forward taken off."""
    mine = copy.deepcopy(layer)
    vars(mine).pop("forward", None)
    return mine(x)[0]


def _torchs_layer(layer, x):
    """torch's own pre-LN layer with the given layer's weights."""
    D, a = x.shape[-1], layer.self_attn
    mine = torch.nn.TransformerEncoderLayer(
        D, a.n_heads, layer.ff.linear1.out_features, 0.0, batch_first=True, norm_first=True
    ).eval()
    with torch.no_grad():
        mine.self_attn.in_proj_weight.copy_(
            torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight])
        )
        mine.self_attn.in_proj_bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        mine.self_attn.out_proj.load_state_dict(a.out_proj.state_dict())
        mine.linear1.load_state_dict(layer.ff.linear1.state_dict())
        mine.linear2.load_state_dict(layer.ff.linear2.state_dict())
        mine.norm1.load_state_dict(layer.norm1.state_dict())
        mine.norm2.load_state_dict(layer.norm2.state_dict())
    return mine(x)


def _checkers_reference(layer, x):
    return ch09._variant(layer, x, "pre-LN")


@pytest.mark.parametrize(
    "answer, saw",
    [
        (_class_forward, "it called an EncoderLayer's own forward"),
        (_type_forward, "it called an EncoderLayer's own forward"),
        (_rebuilt, "it called an EncoderLayer's own forward"),
        (_deep_copy, "it called an EncoderLayer's own forward"),
        (_torchs_layer, "it called torch's TransformerEncoderLayer"),
        (_checkers_reference, "it called `lib.exercises.ch09._variant`, the checker's own code"),
    ],
    ids=["class", "type", "rebuilt", "deepcopy", "torch", "reference"],
)
def test_the_notebooks_checker_refuses_an_answer_that_does_not_write_the_sublayers(answer, saw):
    """Each passed in the notebook before (only the grader refused it): now refused, the message
    saying what the answer called and what the exercise asks, and naming no formula."""
    with pytest.raises(ExerciseFailed) as failed:
        ch09.check_pre_ln(answer)
    message = str(failed.value)
    assert saw in message, message
    assert any(asks in message for asks in ASKS), message
    assert "LN2(y)" not in message and "LN1(x)" not in message  # the answer is not given away


REFUSED_ANSWERS = (
    _class_forward,
    _type_forward,
    _rebuilt,
    _deep_copy,
    _torchs_layer,
    _checkers_reference,
)


def test_each_such_answer_computes_the_right_output_outside_the_checker():
    """The refusals are what stops them: each answer is right, so the checker could not tell it by
    its output (and everything is itself again after the checker)."""
    originals = (
        transformer.EncoderLayer.forward,
        torch.nn.TransformerEncoderLayer.forward,
        ch09._variant,
    )
    for answer in REFUSED_ANSWERS:
        with pytest.raises(ExerciseFailed):
            ch09.check_pre_ln(answer)
    assert (
        transformer.EncoderLayer.forward,
        torch.nn.TransformerEncoderLayer.forward,
        ch09._variant,
    ) == originals
    torch.manual_seed(0)
    layer = transformer.EncoderLayer(16, 2, 32, norm_first=True).eval()
    x = torch.randn(2, 3, 16)
    with torch.no_grad():
        expected = layer(x)[0]
        for answer in REFUSED_ANSWERS:
            assert (answer(layer, x) - expected).abs().max() < 1e-5, answer.__name__


def test_the_model_answer_passes_and_still_passes_after_a_refusal():
    honest = solution_function(CHAPTER, "check_pre_ln", "pre_ln_layer")
    assert ch09.check_pre_ln(honest).passed
    with pytest.raises(ExerciseFailed):
        ch09.check_pre_ln(_class_forward)
    assert ch09.check_pre_ln(honest).passed


def test_the_notebooks_refusals_include_the_graders_table():
    """One list for both: the notebook refuses through the grader's REFUSALS row, so a target added
    there is refused in the notebook too."""
    import inspect
    import re

    assert re.search(
        r'refused\(\s*REFUSALS\["check_pre_ln"\]', inspect.getsource(ch09.check_pre_ln)
    )
