"""The exercises of the chapter *From GPT-2 to a modern decoder*: the checkers accept the chapter's
solutions and the library, and reject the typical wrong answers with the right feedback (layout and
student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch

from lib.exercises import ExerciseFailed, ch17
from lib.llama import Llama, LlamaConfig, repeat_kv
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies
from tests.test_exercises import ROOT, exercises, solution_function, tags

CHAPTER = ROOT / "notebooks" / "17_modern_decoder.ipynb"


def test_the_chapter_has_three_checked_exercises_and_three_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == set(ch17.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 3 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


@pytest.mark.parametrize(
    "checker, name",
    [
        ("check_rope_halves", "rope_halves"),
        ("check_expand_kv", "expand_kv"),
        ("check_ffn_sublayer", "ffn_sublayer"),
    ],
)
def test_the_checkers_accept_the_chapters_solutions(checker, name):
    assert getattr(ch17, checker)(solution_function(CHAPTER, checker, name)).passed


def test_the_success_messages_read_as_sentences():
    # the verdict capitalizes a message's first letter: one starting with a variable ("x + ...") would
    # read "X + SwiGLU(RMSNorm(x))", a stray capital
    verdict = str(
        ch17.check_ffn_sublayer(solution_function(CHAPTER, "check_ffn_sublayer", "ffn_sublayer"))
    )
    assert "Your x + SwiGLU(RMSNorm(x)) equals the library's sub-layer" in verdict
    assert "X + " not in verdict


def _library_rope(x, positions, theta=10000.0):
    cos, sin = rope_cos_sin(positions, rope_frequencies(x.shape[-1], theta))
    return apply_rope(x, cos, sin, "halves")


def test_the_references_are_the_librarys():
    for _, x, positions, theta in ch17._rope_cases():
        expected = ch17.rope_reference(x, positions, theta)
        assert (_library_rope(x, positions, theta).double() - expected).abs().max() < 1e-5
    for _, k, H in ch17._expand_cases():
        assert torch.equal(repeat_kv(k, H // k.shape[1]), k.repeat_interleave(H // k.shape[1], 1))
    torch.manual_seed(0)
    layer = Llama(LlamaConfig.small(rms_norm_eps=1e-6)).model.layers[0]
    x = torch.randn(5, 64) + 0.5
    with torch.no_grad():
        library = x + layer.mlp(layer.post_attention_layernorm(x))
        mine = ch17.ffn_reference(
            x,
            layer.post_attention_layernorm.weight,
            layer.mlp.gate_proj.weight,
            layer.mlp.up_proj.weight,
            layer.mlp.down_proj.weight,
        )
    assert (library.double() - mine).abs().max() < 1e-5


def test_the_checkers_accept_the_library_and_say_not_attempted_to_a_stub():
    assert ch17.check_expand_kv(lambda k, n: repeat_kv(k, n // k.shape[1])).passed

    def stub(x, positions, theta=10000.0): ...

    assert ch17.check_rope_halves(stub).status == "not attempted"
    with pytest.raises(ExerciseFailed, match="apply_rope"):
        ch17.check_rope_halves(_library_rope)


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("interleaved", "the interleaved convention"),
        ("exponent i/Dh", "theta^(-i/Dh)"),
        ("multiplied", "your frequencies grow with i"),
        ("backwards", "opposite sign of the offset"),
        ("from 1", "position m + 1"),
        ("one angle", "every pair turns by the same angle"),
    ],
)
def test_check_rope_halves_names_each_mistake(mistake, message):
    def wrong(x, positions, theta=10000.0):
        return ch17.rope_reference(x, positions, theta, mistake=mistake).float()

    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch17.check_rope_halves(wrong)


def test_check_rope_halves_names_an_unrotated_answer():
    with pytest.raises(ExerciseFailed, match="unchanged"):
        ch17.check_rope_halves(lambda x, positions, theta=10000.0: x.clone())


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda k, n: k.repeat(1, n // k.shape[1], 1, 1), "repeat_interleave"),
        (lambda k, n: k.repeat_interleave(n // k.shape[1], dim=2), "time axis"),
        (lambda k, n: k.expand(-1, n, -1, -1) if k.shape[1] == 1 else k, "shape"),
    ],
    ids=["tiled", "time axis", "not expanded"],
)
def test_check_expand_kv_names_each_mistake(answer, message):
    with pytest.raises(ExerciseFailed, match=message):
        ch17.check_expand_kv(answer)


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("mean subtracted", "LayerNorm without its bias"),
        ("swapped", "the gate and the value are swapped"),
        ("gelu", "you used GELU"),
        ("no residual", "residual connection"),
        ("no weight", "gain `weight`"),
    ],
)
def test_check_ffn_sublayer_names_each_mistake(mistake, message):
    def wrong(*args):
        return ch17.ffn_reference(*args, mistake=mistake).float()

    with pytest.raises(ExerciseFailed, match=message):
        ch17.check_ffn_sublayer(wrong)


def test_the_mistakes_are_distinguishable_on_the_hidden_cases():
    # each wrong answer differs from the right one on some case, else its message could never show
    for mistake, _ in ch17._ROPE_MISTAKES:
        assert any(
            (ch17.rope_reference(x, p, t, mistake=mistake) - ch17.rope_reference(x, p, t))
            .abs()
            .max()
            > 1e-3
            for _, x, p, t in ch17._rope_cases()
        ), mistake
    for mistake, _ in ch17._FFN_MISTAKES:
        assert any(
            (ch17.ffn_reference(*a, mistake=mistake) - ch17.ffn_reference(*a)).abs().max() > 1e-3
            for _, a in ch17._ffn_cases()
        ), mistake
