"""The exercises of the chapter *From GPT-2 to a modern decoder*: the checkers accept the chapter's
solutions and the library, and reject the typical wrong answers with the right feedback (layout and
student edition: tests/test_exercises.py)."""

from __future__ import annotations

import math
import re

import nbformat
import pytest
import torch
import torch.nn.functional as F

from lib.exercises import ExerciseFailed, ch17
from lib.llama import (
    Llama,
    LlamaConfig,
    count_parameters,
    kv_cache_bytes_per_token,
    repeat_kv,
)
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies
from tests.test_exercises import ROOT, exercises, solution_function, tags

CHAPTER = ROOT / "notebooks" / "17_modern_decoder.ipynb"


def test_the_chapter_has_four_checked_exercises_and_four_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == set(ch17.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 4 and all(
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
    assert "root mean square about 1e-3 and 1e-5" in verdict  # it names its cases
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


def test_the_checkers_refuse_the_library_and_say_not_attempted_to_a_stub():
    """The library's repeat_kv is refused in the notebook as the course grader refuses it (reader's
    report ch17 s31, 1: the exercise text forbids it)."""
    with pytest.raises(ExerciseFailed, match="it called the library's repeat_kv"):
        ch17.check_expand_kv(lambda k, n: repeat_kv(k, n // k.shape[1]))

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
        ("exponent 4i/Dh", "you doubled i twice"),
        ("from 1", "position m + 1"),
        ("pairs from 1", "your fastest pair does not turn one radian per position"),
        ("one angle", "every pair turns by the same angle"),
        ("positions ignored", "not by positions[t]"),
        ("angles interleaved", "your angles are laid out for neighbouring pairs"),
    ],
)
def test_check_rope_halves_names_each_mistake(mistake, message):
    def wrong(x, positions, theta=10000.0):
        return ch17.rope_reference(x, positions, theta, mistake=mistake).float()

    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch17.check_rope_halves(wrong)


def test_the_exponent_mistake_states_the_factors_of_its_case():
    # the first case, Dh = 8 and theta = 10,000: theta^(3/4) = 1,000 and theta^(3/8) = 31.6
    def wrong(x, positions, theta=10000.0):
        return ch17.rope_reference(x, positions, theta, mistake="exponent i/Dh").float()

    with pytest.raises(ExerciseFailed) as failure:
        ch17.check_rope_halves(wrong)
    assert "Dh = 8, theta = 10000" in failure.value.message
    assert "theta^(1 - 2/Dh) = 1,000 times slower" in failure.value.message
    assert "wavelength is 31.6 times too short" in failure.value.message


def test_the_tiled_message_does_not_give_the_answer_away():
    # it names the mistake (tiled heads), not the call that fixes it
    with pytest.raises(ExerciseFailed) as failure:
        ch17.check_expand_kv(lambda k, n: k.repeat(1, n // k.shape[1], 1, 1))
    assert "query head 1 reads key head 1" in failure.value.message
    assert "repeat_interleave" not in failure.value.message


@pytest.mark.parametrize("row", [0, -1], ids=["first", "last"])
def test_check_rope_halves_names_one_position_for_every_row(row):
    # a reader's answer that turns every row by one of the positions: before, the first position
    # (0 on the first case) left x unchanged and was told "you returned x unchanged"
    def wrong(x, positions, theta=10000.0):
        one = positions[row : row + 1 or None].expand(len(positions))
        return _rope_as_written()(x, one, theta)

    with pytest.raises(ExerciseFailed) as failure:
        ch17.check_rope_halves(wrong)
    message = failure.value.message
    assert "every row is turned by the same position" in message
    assert "positions[t]" in message and "unchanged" not in message
    first = ch17._rope_cases()[0][2]
    j = row % len(first)
    assert f"positions[{j}] = {first[j].item()}" in message


def test_check_rope_halves_refuses_a_right_rotation_in_another_dtype():
    """Reader s41: a rotation returned in float64 for float32 x passed; in the model it meets
    float32 values and weights."""

    def in_float64(x, positions, theta=10000.0):
        return ch17.rope_reference(x, positions, theta)  # right, but float64

    assert ch17.rope_reference(torch.ones(2, 4), torch.arange(2), 10.0).dtype == torch.float64
    with pytest.raises(ExerciseFailed) as failed:
        ch17.check_rope_halves(in_float64)
    message = failed.value.message
    assert (
        "your rotation is right but comes back as torch.float64 where x is torch.float32" in message
    )
    assert ch17.check_rope_halves(_rope_as_written()).status == "passed"


def test_check_rope_halves_names_an_unrotated_answer():
    with pytest.raises(ExerciseFailed, match="unchanged"):
        ch17.check_rope_halves(lambda x, positions, theta=10000.0: x.clone())


def test_check_rope_halves_names_an_answer_that_ignores_theta():
    """Reader's report ch17 s4, 9: an answer that always uses theta = 10,000 is told so."""

    def fixed_base(x, positions, theta=10000.0):
        return ch17.rope_reference(x, positions, 10000.0).float()

    with pytest.raises(ExerciseFailed) as failed:
        ch17.check_rope_halves(fixed_base)
    message = str(failed.value)
    assert "theta = 500000" in message and "does not change with theta" in message


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda k, n: k.repeat(1, n // k.shape[1], 1, 1), "come tiled"),
        (lambda k, n: torch.cat([k] * (n // k.shape[1]), 1), "come tiled"),
        (lambda k, n: k.repeat_interleave(n // k.shape[1], dim=2), "time axis"),
        (
            lambda k, n: k.repeat_interleave(n // k.shape[1], dim=2).reshape(
                k.shape[0], n, *k.shape[2:]
            ),
            "time axis \\(dim 2\\), then reshaped",
        ),
        (lambda k, n: k.expand(-1, n, -1, -1) if k.shape[1] == 1 else k, "shape"),
        (lambda k, n: k, "as they are"),
        (lambda k, n: k.repeat_interleave(n, dim=1), "key/value heads 8 times"),
        (lambda k, n: k.repeat_interleave(k.shape[1], dim=1), "key/value heads 4 times"),
        (lambda k, n: k[:, torch.arange(n) // k.shape[1]], "reads key head h // Hkv"),
    ],
    ids=[
        "tiled",
        "tiled by cat",
        "time axis",
        "time axis, reshaped",
        "not expanded",
        "unchanged",
        "G = n_heads",
        "G = Hkv",
        "h // Hkv",
    ],
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
        ("std", "divided x by its standard deviation"),
        ("std, 1/D", "divided x by its standard deviation"),
        ("sum", "root of the sum of the squares"),
        ("eps outside", "eps outside the square root"),
        ("silu after", "SiLU to the product"),
        ("residual on h", "to the normalized h"),
        ("sigmoid", "the plain GLU"),
        ("no up", "leaves out up"),
        ("rms over rows", "over dimension 0"),
        ("rms over all", "one root mean square"),
        ("weight added", "you added RMSNorm's gain"),
    ],
)
def test_check_ffn_sublayer_names_each_mistake(mistake, message):
    def wrong(*args):
        return ch17.ffn_reference(*args, mistake=mistake).float()

    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch17.check_ffn_sublayer(wrong)


def _ffn_as_written(eps=1e-6, where="inside", divide_by="rms", residual="x", silu="gate"):
    """ffn_sublayer as a reader writes it, in float32, with one of the usual mistakes."""

    def ffn_sublayer(x, weight, gate, up, down):
        if divide_by == "std":
            rms = torch.sqrt(x.var(-1, keepdim=True) + eps)
        elif divide_by == "sum":
            rms = torch.sqrt(x.pow(2).sum(-1, keepdim=True) + eps)
        elif where == "outside":
            rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True)) + eps
        else:
            rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        h = x / rms * weight
        g, v = h @ gate.T, h @ up.T
        out = (F.silu(g * v) if silu == "product" else F.silu(g) * v) @ down.T
        return (h if residual == "h" else x) + out

    return ffn_sublayer


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(eps=0.0), "has no eps (eps = 0)"),
        (dict(eps=1e-4), "uses eps = 0.0001;"),
        (dict(eps=1e-3), "uses eps = 0.001;"),
        (dict(eps=1e-5), "uses eps = 1e-05;"),
        (dict(where="outside"), "eps outside the square root"),
        (dict(divide_by="std"), "divided x by its standard deviation"),
        (dict(divide_by="sum"), "root of the sum of the squares"),
        (dict(residual="h"), "to the normalized h"),
        (dict(silu="product"), "SiLU to the product"),
    ],
    ids=lambda v: str(v) if isinstance(v, dict) else "",
)
def test_check_ffn_sublayer_names_the_mistakes_of_a_written_answer(options, message):
    assert ch17.check_ffn_sublayer(_ffn_as_written()).passed
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch17.check_ffn_sublayer(_ffn_as_written(**options))


def _rope_as_written(positions_used="given", angles="halves"):
    """rope_halves as a reader writes it, with rotate_half, in float32."""

    def rope_halves(x, positions, theta=10000.0):
        Dh = x.shape[-1]
        w = theta ** (-2 * torch.arange(Dh // 2, dtype=torch.float64) / Dh)
        m = positions if positions_used == "given" else torch.arange(len(x))
        a = m.double()[:, None] * w  # [T, Dh/2]
        cos, sin = a.cos().float(), a.sin().float()
        if angles == "halves":
            cos, sin = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        else:
            cos, sin = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1)
        first, second = x[:, : Dh // 2], x[:, Dh // 2 :]
        return x * cos + torch.cat([-second, first], -1) * sin

    return rope_halves


def test_check_rope_halves_names_the_mistakes_of_a_written_answer():
    assert ch17.check_rope_halves(_rope_as_written()).passed
    with pytest.raises(ExerciseFailed, match=re.escape("not by positions[t]")):
        ch17.check_rope_halves(_rope_as_written(positions_used="index"))
    with pytest.raises(ExerciseFailed, match="laid out for neighbouring pairs"):
        ch17.check_rope_halves(_rope_as_written(angles="repeat_interleave"))


def test_an_unnamed_mistake_shows_digits_that_differ():
    # eps = 1e-3 printed "yours 1.679, expected 1.679" at 4 digits: the message adds digits
    def wrong(*args):
        return ch17.ffn_reference(*args).float() + torch.tensor(2e-4)

    with pytest.raises(ExerciseFailed) as failure:
        ch17.check_ffn_sublayer(wrong)
    yours, expected = re.search(r"yours (\S+), expected (\S+)\.$", failure.value.message).groups()
    assert yours != expected and abs(float(yours) - float(expected) - 2e-4) < 1e-5


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
    for eps in ch17._WRONG_EPS:  # a wrong eps shows on the cases of tiny rows
        assert any(
            (ch17.ffn_reference(*a, eps=eps) - ch17.ffn_reference(*a)).abs().max() > 1e-3
            for _, a in ch17._ffn_cases()
        ), eps


# --- exercise 4: a long context -----------------------------------------------------------------------


def _long_context_solution():
    """The three predictions of the chapter's worked solution (its cell computes them from lib.llama)."""
    exercise = next(e for e in exercises(CHAPTER) if e["checker"] == "check_long_context")
    namespace = {
        "math": math,
        "LlamaConfig": LlamaConfig,
        "count_parameters": count_parameters,
        "kv_cache_bytes_per_token": kv_cache_bytes_per_token,
    }
    exec("\n".join(c.source for c in exercise["solutions"]), namespace)
    return [namespace[n.strip()] for n in exercise["args"].split(",")]


def test_check_long_context_accepts_the_worked_solution_and_other_spellings():
    assert _long_context_solution() == [4.375, 1025, 128.0]
    assert ch17.check_long_context(*_long_context_solution()).passed
    for answer in [(4.38, 1025, 128), (4.4, 1025.0, 128.0), (torch.tensor(4.375), 1025, 128.004)]:
        assert ch17.check_long_context(*answer).passed, answer
    verdict = ch17.check_long_context(4.375, 1025, 128)
    assert "3.9 times its weights" in verdict.message


def test_check_long_context_says_not_attempted_and_what_is_missing():
    assert ch17.check_long_context(None, None, None).status == "not attempted"
    verdict = ch17.check_long_context(4.375, None, None)
    assert (
        verdict.status == "not attempted"
        and "smallest_window and window_cache_mib" in verdict.message
    )


@pytest.mark.parametrize(
    "answer, message",
    [
        ((8.75, 1025, 128), "qwen3_cache_gib = 8.75: twice too large"),
        ((8.75, 1025, 128), "or 4 bytes a number where bfloat16 takes 2"),
        ((17.5, 1025, 128), "four times too large"),
        ((2.1875, 1025, 128), "the keys and the values"),
        ((0.15625, 1025, 128), "every one of the 28 layers"),
        ((4.7, 1025, 128), "in GB"),
        ((4480, 1025, 128), "that is in MiB"),
        ((3.5, 1025, 128), "for 32,768 tokens"),
        ((5.0, 1025, 128), "too large by 14.3%"),
        ((4375, 1025, 128), "qwen3_cache_gib = 4375 is 1,000 times too large"),
        ((0.4375, 1025, 128), "10 times too small"),
        ((4.375 * 2**30, 1025, 128), "that is in bytes; the question asks for GiB"),
        ((4.375 * 2**20, 1025, 128), "that is in KiB; the question asks for GiB"),
        (
            (4.375, 1024, 128),
            "smallest_window = 1,024 is too small: a window of W positions includes",
        ),
        ((4.375, 1026, 128), "a smaller window already reaches"),
        ((4.375, 32768, 128), "in one layer"),
        ((4.375, 1024.5, 128), "whole number"),
        ((4.375, 1025, 128.125), "keeps W - 1"),
        ((4.375, 1025, 128.1), "keeps W - 1"),  # rounded: still named
        ((4.375, 1025, 127.875), "the cache of a window of 1,024, which falls 32 positions"),
        ((4.375, 1025, 127.9), "keeps 1,023 positions per layer"),  # rounded
        ((4.375, 1025, 128.05), "too large by 0.04%"),  # neither 128 nor 128.125
        ((4.375, 1025, 4096), "how far information travels"),
        (
            (4.375, 1025, 512),
            "Mistral 7B v0.1's own window (the chapter's table prints its cache as 512 MiB)",
        ),
        ((4.375, 1025, 512), "or you counted its H = 32 query heads"),
        (
            (4.375, 1025, 511.875),
            "the rolling cache of Mistral 7B v0.1's own window of 4,096 (W - 1 = 4,095",
        ),
        ((4.375, 1025, 511.9), "own window of 4,096 (W - 1"),  # rounded
        ((4.375, 1025, 512.0), "four times too large. Either you kept 4,096 positions"),
        ((4.375, 1025, 256), "2 bytes a number"),
        ((4.375, 1025, 64), "window_cache_mib = 64: half the size"),
        # reader s39b: a factor 2 that is not the bytes gets both causes
        (
            (4.375, 1025, 256),
            "window_cache_mib = 256: twice too large, one factor 2 too many: either",
        ),
        ((4.375, 1025, 4), "each of the 32 layers"),
        ((4.375, 1025, 130), "too large by 1.6%"),
        ((4.375, 1025, "128"), "should be a number"),
        ((4.375, 1025, 0.125), "window_cache_mib = 0.125: that is in GiB"),
        ((4.375, 1025, 0.13), "that is in GiB"),  # rounded
        ((4.375, 1025, 131072), "that is in KiB"),
        ((4.375, 1025, 134.2), "that is in MB (10^6 bytes)"),
        ((4.375, 1025, 0.5), "256 times too small"),  # not a unit slip
        ((4.375, 1025, 134217728), "window_cache_mib = 1.342e+08: that is in bytes"),
        ((4.375, 1025, 1280), "10 times too large"),
    ],
)
def test_check_long_context_names_each_mistake(answer, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch17.check_long_context(*answer)


def test_check_long_context_names_every_wrong_prediction_at_once():
    with pytest.raises(ExerciseFailed) as failed:
        ch17.check_long_context(8.75, 1024, 128.125)
    said = str(failed.value)
    for part in (
        "qwen3_cache_gib = 8.75: twice too large",
        "smallest_window = 1,024 is too small",
        "window_cache_mib = 128.1: that keeps W = 1,025 positions",
    ):
        assert part in said, said
    # one wrong, two right: only the wrong one is named
    with pytest.raises(ExerciseFailed) as failed:
        ch17.check_long_context(4.375, 1026, 128)
    assert "smallest_window" in str(failed.value)
    assert "qwen3_cache_gib" not in str(failed.value)
    assert "window_cache_mib" not in str(failed.value)


def test_the_long_context_answers_are_the_librarys():
    right = ch17._long_context_answers()
    qwen = LlamaConfig.qwen3_0_6b()
    assert right["qwen3_cache_gib"] * 2**30 == 2 * 28 * 8 * 128 * 2 * 40_960
    assert qwen.max_position_embeddings == 40_960 == ch17.CONTEXT
    W = right["smallest_window"]
    assert 32 * (W - 1) >= 32_768 > 32 * (W - 2)
    mistral = LlamaConfig.mistral_7b()
    assert right["window_cache_mib"] == kv_cache_bytes_per_token(mistral) * (W - 1) / 2**20


# --- what the exercise texts forbid, refused in the notebook (reader's report ch17 s31, 1 and 3) ---


def _hf_rope(x, positions, theta=10000.0):
    from transformers.models.llama.modeling_llama import rotate_half

    Dh = x.shape[-1]
    angles = positions[:, None].float() * theta ** -(torch.arange(0, Dh, 2).float() / Dh)
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    return x * cos + rotate_half(x) * sin


def _hf_expand(k, n_heads):
    from transformers.models.llama.modeling_llama import repeat_kv as copies  # another name

    return copies(k, n_heads // k.shape[1])


def _ffn_with(norm):
    def ffn_sublayer(x, weight, gate, up, down):
        h = norm(x, weight)
        return x + (F.silu(h @ gate.T) * (h @ up.T)) @ down.T

    return ffn_sublayer


def _torch_module_norm(x, weight):
    norm = torch.nn.RMSNorm(x.shape[-1], eps=1e-6)
    with torch.no_grad():
        norm.weight.copy_(weight)
    return norm(x)


def _hf_module_norm(x, weight):
    from transformers.models.qwen3.modeling_qwen3 import Qwen3RMSNorm

    norm = Qwen3RMSNorm(x.shape[-1], eps=1e-6)
    with torch.no_grad():
        norm.weight.copy_(weight)
    return norm(x)


@pytest.mark.parametrize(
    "checker, answer, names",
    [
        ("check_rope_halves", _hf_rope, "it called transformers' rotate_half"),
        ("check_expand_kv", _hf_expand, "it called transformers' repeat_kv"),
        (
            "check_ffn_sublayer",
            _ffn_with(lambda x, w: torch.rms_norm(x, (x.shape[-1],), w, 1e-6)),
            "it called torch's rms_norm",
        ),
        (
            "check_ffn_sublayer",
            _ffn_with(lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)),
            "it called torch's rms_norm",
        ),
        (
            "check_ffn_sublayer",
            _ffn_with(lambda x, w: torch.ops.aten.rms_norm(x, [x.shape[-1]], w, 1e-6)),
            "it called torch's rms_norm",
        ),
        ("check_ffn_sublayer", _ffn_with(_torch_module_norm), "it called torch's rms_norm"),
        ("check_ffn_sublayer", _ffn_with(_hf_module_norm), "it called transformers' RMSNorm"),
    ],
)
def test_the_notebooks_checkers_refuse_what_the_exercise_forbids_naming_whose(
    checker, answer, names
):
    """The reader's four answers that passed (transformers' rotate_half and repeat_kv, torch.rms_norm,
    F.rms_norm), torch's and transformers' RMSNorm modules: refused, the message naming the library
    used, never "the library's" for torch's (s31, 3). Afterwards every function is itself again."""
    originals = (torch.rms_norm, F.rms_norm, torch.nn.RMSNorm.forward)
    with pytest.raises(ExerciseFailed) as failed:
        getattr(ch17, checker)(answer)
    assert names in str(failed.value)
    assert "the library's" not in str(failed.value)
    assert (torch.rms_norm, F.rms_norm, torch.nn.RMSNorm.forward) == originals
    x = torch.randn(2, 4)
    assert torch.allclose(F.rms_norm(x, (4,), eps=1e-6), _torch_module_norm(x, torch.ones(4)))


def test_the_notebooks_refusals_are_the_graders_table():
    """One list for both (s31, 1): each checker of exercises 1-3 refuses through its REFUSALS row,
    so a target added there is refused in the notebook too."""
    import inspect

    for checker in ("check_rope_halves", "check_expand_kv", "check_ffn_sublayer"):
        source = inspect.getsource(getattr(ch17, checker))
        assert re.search(rf'refused\(\s*REFUSALS\["{checker}"\]', source)


def test_the_honest_solutions_still_pass_after_a_refusal():
    with pytest.raises(ExerciseFailed):
        ch17.check_rope_halves(_hf_rope)
    for checker, name in [
        ("check_rope_halves", "rope_halves"),
        ("check_expand_kv", "expand_kv"),
        ("check_ffn_sublayer", "ffn_sublayer"),
    ]:
        assert getattr(ch17, checker)(solution_function(CHAPTER, checker, name)).passed


def test_refused_takes_only_refusals_of_every_call():
    from lib.exercises import refused

    with pytest.raises(ValueError, match="table"):
        with refused(
            [("lib.llama.repeat_kv", "groups", ch17.REFUSALS["check_expand_kv"][0][2])], None
        ):
            pass
