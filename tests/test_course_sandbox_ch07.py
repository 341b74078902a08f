"""Chapter 7's exercise 2 graded by tools/grade_course.py in its sandbox (lecturer review s23, S1): the
checker adds noise to two of the student's per-head layers and requires the output to follow. The
student's module runs in the child, so the grader sends the weights it changed with the next call of
the module (``_Remote.forward``, ``sandbox._load_changed``): the worked solution keeps its 2 points.
A module that holds the layers but calls a hidden copy of ``mha`` is refused (``ch07.REFUSALS``), and
one that runs stale copies of its layers is named, and so is one that fuses the heads back into one
call of torch's scaled_dot_product_attention (lecturer review s29, S1). About 2 minutes on the book's 2-core machine (the
chapter's code runs once, in the sandbox's zygote)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.test_course_sandbox import _generate, _grade_json, _solutions, _submit

CH7 = "07_multi_head_attention"
_LAYERS = """
import copy

from lib.attention import scaled_dot_product_attention


class Heads(nn.Module):
    def __init__(self, mha):
        super().__init__()
        D, H, Dh = mha.d_model, mha.n_heads, mha.d_head
        self.W_Q = nn.ModuleList(nn.Linear(D, Dh) for _ in range(H))
        self.W_K = nn.ModuleList(nn.Linear(D, Dh) for _ in range(H))
        self.W_V = nn.ModuleList(nn.Linear(D, Dh) for _ in range(H))
        self.W_O = nn.Linear(D, D)
        with torch.no_grad():
            for layers, fused in [(self.W_Q, mha.q_proj), (self.W_K, mha.k_proj), (self.W_V, mha.v_proj)]:
                for h, layer in enumerate(layers):
                    layer.weight.copy_(fused.weight[h * Dh : (h + 1) * Dh])
                    layer.bias.copy_(fused.bias[h * Dh : (h + 1) * Dh])
            self.W_O.load_state_dict(mha.out_proj.state_dict())
        self._inner = [copy.deepcopy(mha)]
        self._frozen = [copy.deepcopy((self.W_Q, self.W_K, self.W_V))]

    def heads(self, x, layers):
        out = [scaled_dot_product_attention(q(x), k(x), v(x))[0] for q, k, v in zip(*layers)]
        return self.W_O(torch.cat(out, dim=-1))


def separate_heads_from(mha):
    return Heads(mha)
"""
# {student: (the forward of Heads, words of the message)}
WRONG = {
    "calls_a_copy": (
        "Heads.forward = lambda self, x: self._inner[0](x, x, x)[0]",
        "it called the library's multi-head attention",
    ),
    "stale_copies": (
        "Heads.forward = lambda self, x: self.heads(x, self._frozen[0])",
        "your forward does not use your per-head layers",
    ),
    # lecturer review s29, S1: the heads' weights fused back, all heads in one call of torch's
    # scaled_dot_product_attention on [B, H, T, D/H]; the output is right
    "fused_heads": (
        """
def fused(self, x):
    B, T, D = x.shape
    H = len(self.W_Q)
    def heads(layers):
        w = torch.cat([m.weight for m in layers])
        b = torch.cat([m.bias for m in layers])
        return torch.nn.functional.linear(x, w, b).view(B, T, H, D // H).transpose(1, 2)
    z = torch.nn.functional.scaled_dot_product_attention(
        heads(self.W_Q), heads(self.W_K), heads(self.W_V)
    )
    return self.W_O(z.transpose(1, 2).reshape(B, T, D))


Heads.forward = fused""",
        "runs the H = 3 heads one after another",
    ),
    # lecturer review s29, m2: an exception of the module's forward names the student's line (it
    # was "raised RuntimeError, in the grader")
    "concatenated_on_dim_1": (
        "Heads.forward = lambda self, x: self.W_O(torch.cat(self.parts(x), dim=1))\n"
        "Heads.parts = lambda self, x: [\n"
        "    scaled_dot_product_attention(q(x), k(x), v(x))[0]\n"
        "    for q, k, v in zip(self.W_Q, self.W_K, self.W_V)\n"
        "]",
        "raised RuntimeError, at line 31 of your cell (`Heads.forward = lambda self, x: "
        "self.W_O(torch.cat(self.parts(x), dim=1))`)",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("course")
    _generate(root, [CH7], predictions_at_collection=True)
    source = nbformat.read(root / "source" / CH7 / f"{CH7}.ipynb", as_version=4)
    honest = _solutions(source)
    _submit(root, "honest", CH7, honest)
    for student, (forward, _) in WRONG.items():
        _submit(root, student, CH7, {**honest, "ex2_answer": _LAYERS + forward + "\n"})
    run, records = _grade_json(root, CH7)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {(r["student"], r["test"]): r for r in records}, run


def test_the_worked_solution_keeps_its_points(graded):
    records, _ = graded
    record = records[("honest", "ex2_test")]
    assert record["score"] == record["points"] == 2, record["message"]


@pytest.mark.parametrize("student", list(WRONG))
def test_a_module_that_ignores_its_layers_gets_zero(graded, student):
    records, _ = graded
    record = records[(student, "ex2_test")]
    assert record["score"] == 0 and WRONG[student][1] in record["message"], record["message"]
