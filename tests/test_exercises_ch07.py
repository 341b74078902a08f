"""Chapter *Multi-head attention*, exercise 2 (more of its checker's cases are in
tests/test_exercises.py): a module that holds the per-head layers but whose forward does not use them
is named, and the course's grader refuses the library's layers that run all heads at once (lecturer
review s23, S1: a module whose forward called a hidden copy of ``mha`` got 2/2)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from lib.attention import scaled_dot_product_attention
from lib.exercises import ExerciseFailed, ch07

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import grade_course  # noqa: E402


class _Heads(nn.Module):
    """The per-head layers of the statement; ``forward`` set per test."""

    def __init__(self, mha):
        super().__init__()
        D, H, Dh = mha.d_model, mha.n_heads, mha.d_head
        self.W_Q, self.W_K, self.W_V = (
            nn.ModuleList(nn.Linear(D, Dh) for _ in range(H)) for _ in range(3)
        )
        self.W_O = nn.Linear(D, D)
        with torch.no_grad():
            for layers, fused in [
                (self.W_Q, mha.q_proj),
                (self.W_K, mha.k_proj),
                (self.W_V, mha.v_proj),
            ]:
                for h, layer in enumerate(layers):
                    rows = slice(h * Dh, (h + 1) * Dh)
                    layer.weight.copy_(fused.weight[rows])
                    layer.bias.copy_(fused.bias[rows])
            self.W_O.load_state_dict(mha.out_proj.state_dict())

    def heads(self, x, layers):
        q, k, v = layers
        out = [scaled_dot_product_attention(a(x), b(x), c(x))[0] for a, b, c in zip(q, k, v)]
        return self.W_O(torch.cat(out, dim=-1))


class _Honest(_Heads):
    def forward(self, x):
        return self.heads(x, (self.W_Q, self.W_K, self.W_V))


class _CallsACopyOfMha(_Heads):
    """Heidi's answer: the layers are there, the forward calls a deep copy of mha kept in a list."""

    def __init__(self, mha):
        super().__init__(mha)
        self._inner = [copy.deepcopy(mha)]

    def forward(self, x):
        return self._inner[0](x, x, x)[0]


class _StaleCopies(_Heads):
    """The per-head attention written out, on copies of the layers taken when it was built."""

    def __init__(self, mha):
        super().__init__(mha)
        self._frozen = [copy.deepcopy((self.W_Q, self.W_K, self.W_V))]

    def forward(self, x):
        return self.heads(x, self._frozen[0])


def test_the_right_module_passes():
    assert ch07.check_separate_heads(_Honest).passed


@pytest.mark.parametrize("module", [_CallsACopyOfMha, _StaleCopies])
def test_a_forward_that_ignores_its_layers_is_named(module):
    """The checker adds noise to two of the module's per-head layers: the output must follow."""
    with pytest.raises(ExerciseFailed, match="your forward does not use your per-head layers"):
        ch07.check_separate_heads(module)


def test_the_grader_refuses_the_layers_that_run_all_heads_at_once():
    """ch07.REFUSALS for the course's sandbox: MultiHeadAttention's forward (and the fast one's),
    attention_heads and torch's multi-head attention refuse; none of the helpers the allowed
    scaled_dot_product_attention goes through is added by the grader's module rule."""
    table = ch07.REFUSALS["check_separate_heads"]
    targets = {t for t, _, _ in table}
    assert {"lib.attention.MultiHeadAttention.forward", "lib.attention.attention_heads"} <= targets
    assert "torch.nn.MultiheadAttention.forward" in targets
    added = {t for t, _, _ in grade_course._module_refusals(table, "")}
    assert not added & {
        "lib.attention._scaled_dot_product_attention",
        "lib.attention._masked_softmax",
        "lib.attention.scaled_dot_product_attention",
    }, added
    script = """
import sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.attention import MultiHeadAttention, attention_heads, scaled_dot_product_attention
from lib.exercises import ch07
refusals = [{"target": t, "when": w or "always"} for c in ch07.REFUSALS.values() for t, w, _ in c]
sandbox._guard({}, refusals)
mha, x = MultiHeadAttention(8, 2), torch.randn(1, 3, 8)
q = torch.randn(1, 2, 3, 4)
calls = {
    "lib.attention.MultiHeadAttention.forward": lambda: mha(x, x, x),
    "lib.attention.attention_heads": lambda: attention_heads(q, q, q),
    "torch.nn.MultiheadAttention.forward": lambda: torch.nn.MultiheadAttention(8, 2)(x, x, x),
}
for call in calls.values():
    call()  # the cells may use them
for target, call in calls.items():
    try:
        with sandbox._calling():
            call()
    except sandbox._Refused as e:
        assert refusals[e.index]["target"] == target, (target, refusals[e.index])
    else:
        raise SystemExit(f"{target} was not refused")
with sandbox._calling():  # the statement's own function stays allowed
    assert scaled_dot_product_attention(q, q, q)[0].shape == q.shape
print("refused")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "refused" in done.stdout, (done.stdout + done.stderr)[-3000:]


class _Fused(_Heads):
    """Eve's answer (lecturer review s29, S1): the per-head layers are there and used, but the
    forward fuses their weights back and runs all heads in one call of torch's
    scaled_dot_product_attention on [B, H, T, D/H]."""

    fold = "heads"  # how the heads are fused: as a dimension, or into the batch

    def forward(self, x):
        B, T, D = x.shape
        H = len(self.W_Q)
        Dh = D // H

        def fused(layers):
            weight = torch.cat([m.weight for m in layers])
            bias = torch.cat([m.bias for m in layers])
            y = torch.nn.functional.linear(x, weight, bias).view(B, T, H, Dh).transpose(1, 2)
            return y.reshape(B * H, T, Dh) if self.fold == "batch" else y

        q, k, v = fused(self.W_Q), fused(self.W_K), fused(self.W_V)
        if self.fold == "library":
            z = scaled_dot_product_attention(q, k, v)[0]
        else:
            z = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        z = z.reshape(B, H, T, Dh).transpose(1, 2).reshape(B, T, D)
        return self.W_O(z)


class _FusedIntoTheBatch(_Fused):
    fold = "batch"


class _FusedThroughTheLibrary(_Fused):
    fold = "library"


class _TorchPerHead(_Heads):
    """The statement's forward with torch's scaled_dot_product_attention, one head at a time."""

    def forward(self, x):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        out = [sdpa(q(x), k(x), v(x)) for q, k, v in zip(self.W_Q, self.W_K, self.W_V)]
        return self.W_O(torch.cat(out, dim=-1))


@pytest.mark.parametrize("module", [_Fused, _FusedIntoTheBatch, _FusedThroughTheLibrary])
def test_heads_fused_into_one_attention_call_are_refused(module):
    """The output is right, but the forward does not run the H heads one after another."""
    with pytest.raises(ExerciseFailed, match="runs the H = 3 heads one after another"):
        ch07.check_separate_heads(module)


def test_torch_attention_one_head_at_a_time_passes():
    assert ch07.check_separate_heads(_TorchPerHead).passed


# --- exercise 1: the prediction is graded against the reader's run -------------------------------------


def test_learns_task_is_graded_only_against_the_readers_run():
    """Reader s32, 5: before the run, True and False get the same words (neither is confirmed nor
    corrected: a True/False graded before training gives the answer away); with the run, a wrong
    True is named, a right False passes."""
    before = [ch07.check_one_head(13_209, guess) for guess in (True, False)]
    assert [v.status for v in before] == ["not attempted", "not attempted"]
    # reader s36b (ch04): the headline names the part still to do, not the exercise
    assert [v.exercise for v in before] == ["accuracy", "accuracy"]
    assert before[0].message == before[1].message
    assert "set accuracy to accuracies(one_head)['both digits']" in before[0].message
    assert "no" not in before[0].message.split()
    with pytest.raises(ExerciseFailed, match="learns_task: your run says otherwise"):
        ch07.check_one_head(13_209, True, 0.197)
    assert ch07.check_one_head(13_209, False, 0.197).passed


def test_a_wrong_count_gets_the_parts_not_their_sizes():
    """Reader s32, 5: the hint names the parts to count, not their sizes (which sum to the answer)."""
    with pytest.raises(ExerciseFailed, match="Count every part") as wrong:
        ch07.check_one_head(12_345, False, 0.197)
    for size in ("40 x 32", "8 x 32", "32 -> 128", "4D^2"):
        assert size not in str(wrong.value)


def test_accuracy_over_all_positions_is_named():
    """Reader s33, 2: accuracy over all positions 1-7 (0.481 for the exercise's run) is not the
    exercise's measure (0.197, where the two lookups differ): the checker says what was measured."""
    assert f"{ch07.RUN_ALL_POSITIONS:.3f}" == "0.481"
    for wrong in (0.4811, {"both digits": 0.4811, "previous digit": 1.0}):
        with pytest.raises(ExerciseFailed, match="looks like the accuracy at all positions") as err:
            ch07.check_one_head(13_209, False, wrong)
        assert "where the two lookups differ" in str(err.value)
    with pytest.raises(ExerciseFailed, match="at all positions"):
        ch07.check_one_head(13_209, True, 0.4811)
    assert ch07.check_one_head(13_209, False, 0.197).passed


def test_an_accuracy_between_chance_and_99_percent_is_not_the_exercises_run():
    """Reader s35, T1: with one lookup and the other digit at chance (1 in 5), both digits are right
    about 20% of the time; 0.6 is not the exercise's run, and the verdict would say something false."""
    for wrong in (0.6, 0.36, {"both digits": 0.9}):
        with pytest.raises(ExerciseFailed, match="does not look like accuracies"):
            ch07.check_one_head(13_209, False, wrong)
    with pytest.raises(ExerciseFailed, match="does not look like accuracies"):
        ch07.check_one_head(13_209, True, 0.6)
    assert ch07.check_one_head(13_209, False, 0.25).passed
