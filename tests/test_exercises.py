"""The exercises: checkers accept the chapters' own solutions and reject typical wrong answers with the
right feedback, never crash on a reader's mistakes, and the student edition has no solutions and runs.

Layout of an exercise in a chapter (issue 22):
    markdown (the exercise) -> answer cell (a template) -> check cell `check_...(...)` of the reader's answer
    (tagged "remove-output": the site shows no verdict under it) -> the worked solution's code cell(s), the
    same check run on the solution, and an optional model answer (markdown <details>), all tagged
    "solution": book/_ext/exercises.py folds them together on the site behind "Show a worked solution".
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import math
import re
import sys
from pathlib import Path
from unittest import mock

import nbformat
import numpy as np
import pytest
import torch

from lib import attention
from lib.attention import GeneralScore
from lib.bert import IGNORE_INDEX
from lib.exercises import ExerciseFailed, Verdict, is_stub
from lib.exercises.ch02 import check_duplicate_key, check_sharpen
from lib.exercises.ch03 import (
    check_key_strength,
    check_masked_softmax,
    check_projected_as_general,
    check_unit_length,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student_edition  # noqa: E402
import plain_notebooks  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# a call on one line, or on several where its arguments do not fit (chapter 13's exercise 3)
CHECK_CALL = re.compile(r"^(check_\w+)\((.*)\)$", re.S)


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def exercises(path: Path) -> list[dict]:
    """Each exercise of a chapter that has a check cell: its answer cell, solution cells and check call."""
    cells = nbformat.read(path, as_version=4).cells
    found = []
    for i, cell in enumerate(cells):
        match = CHECK_CALL.match(cell.source.strip()) if cell.cell_type == "code" else None
        if not match or "solution" in tags(cell):
            continue
        j = i + 1
        while j < len(cells) and "solution" in tags(cells[j]):
            j += 1
        folded = cells[i + 1 : j]
        found.append(
            {
                "chapter": path.stem,
                "checker": match.group(1),
                "args": match.group(2),
                "answer": cells[i - 1],
                "check": cell,
                "solutions": [
                    c
                    for c in folded
                    if c.cell_type == "code" and not CHECK_CALL.match(c.source.strip())
                ],
                "solution_checks": [
                    c
                    for c in folded
                    if c.cell_type == "code" and CHECK_CALL.match(c.source.strip())
                ],
                "model_answers": [c for c in folded if c.cell_type == "markdown"],
            }
        )
    return found


EXERCISES = [e for path in CHAPTERS for e in exercises(path)]
FUNCTION_EXERCISES = [
    e
    for e in EXERCISES
    if all(f"def {name.strip()}(" in e["answer"].source for name in e["args"].split(","))
]
CHECKED_CHAPTERS = sorted({e["chapter"] for e in EXERCISES})


def checker_module(chapter: str):
    return importlib.import_module(f"lib.exercises.ch{chapter[:2]}")


def checker_of(exercise: dict):
    return getattr(checker_module(exercise["chapter"]), exercise["checker"])


def solution_function(chapter, checker: str, name: str):
    """The function ``name`` that a chapter's worked solution to ``checker``'s exercise defines."""
    exercise = next(e for e in exercises(chapter) if e["checker"] == checker)
    namespace = defined_functions("\n".join(c.source for c in exercise["solutions"]))
    return namespace[name]


def defined_functions(source: str) -> dict:
    """Exec only the imports, class and function definitions of a cell (not the chapter-dependent rest)."""
    kept = [
        node
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
    ]
    namespace = {
        "torch": torch,
        "math": math,
        "nn": torch.nn,
        "GeneralScore": GeneralScore,
        "masked_softmax": attention.masked_softmax,
        "IGNORE_INDEX": IGNORE_INDEX,  # chapter 14 imports it from lib.bert
    }
    exec(compile(ast.Module(body=kept, type_ignores=[]), "<solution>", "exec"), namespace)
    return {node.name: namespace[node.name] for node in kept if isinstance(node, ast.FunctionDef)}


# --- the chapters' exercises are laid out as the README says -----------------------------------------


def test_the_chapters_have_checked_exercises():
    assert {"02_attention_as_soft_lookup", "03_scoring_functions"} <= set(CHECKED_CHAPTERS)
    assert len(FUNCTION_EXERCISES) >= 3
    for chapter in CHECKED_CHAPTERS:
        module = checker_module(chapter)
        used = {e["checker"] for e in EXERCISES if e["chapter"] == chapter}
        assert used == set(module.__all__), (
            f"{chapter}: checkers without an exercise, or the reverse"
        )


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e["checker"])
def test_each_check_follows_its_template_and_precedes_the_folded_solution(exercise):
    answer, check = exercise["answer"], exercise["check"]
    assert answer.cell_type == "code" and "solution" not in tags(answer)
    assert "your code here" in answer.source or "= None" in answer.source, (
        "the answer cell is a template"
    )
    assert tags(check) == ["remove-output"], "the site shows no verdict under the reader's answer"
    assert exercise["solutions"], f"{exercise['checker']}: no worked solution after the check"
    # the worked solution's verdict: the same call, folded with the solution
    assert [c.source.strip() for c in exercise["solution_checks"]] == [check.source.strip()]
    for cell in exercise["solutions"] + exercise["solution_checks"]:
        # folded on the site by book/_ext/exercises.py; a check of the worked solution's numbers
        # ("remove-input") runs there without being shown
        assert tags(cell) in (["solution"], ["solution", "remove-input"])
        assert cell in exercise["solutions"] or tags(cell) == ["solution"]
        # collapsed in JupyterLab and in Colab: not in plain view under the exercise
        assert cell.metadata["jupyter"] == {"source_hidden": True}
        assert cell.metadata["cellView"] == "form"


def test_model_answers_fold_in_jupyter_colab_and_the_site_and_leave_the_student_edition():
    for path in CHAPTERS:
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            if cell.cell_type == "markdown" and "solution" in tags(cell):
                assert re.fullmatch(
                    r'<details class="model-answer">\n<summary>Model answer[^<]*</summary>\n\n.+\n\n</details>',
                    cell.source,
                    re.S,
                ), (path.name, i)
                assert "solution" in tags(cells[i - 1]), "right after the worked solution"
            if cell.cell_type == "code" and "solution" in tags(cell):
                assert tags(cell) in (["solution"], ["solution", "remove-input"])
                assert cell.metadata["jupyter"]["source_hidden"]


# --- reference solutions pass; templates are "not attempted" ---------------------------------------------


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES, ids=lambda e: e["checker"])
def test_checker_accepts_the_chapters_reference_solution(exercise):
    functions = defined_functions("\n".join(c.source for c in exercise["solutions"]))
    verdict = checker_of(exercise)(*[functions[n.strip()] for n in exercise["args"].split(",")])
    assert isinstance(verdict, Verdict) and verdict.passed, verdict


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES, ids=lambda e: e["checker"])
def test_the_unwritten_template_is_not_attempted_not_an_error(exercise):
    templates = defined_functions(exercise["answer"].source)
    stubs = [templates[n.strip()] for n in exercise["args"].split(",")]
    assert all(is_stub(t) for t in stubs)
    verdict = checker_of(exercise)(*stubs)
    assert verdict.status == "not attempted" and not verdict and "template" in verdict.message


@pytest.mark.parametrize(
    "exercise", [e for e in EXERCISES if e not in FUNCTION_EXERCISES], ids=lambda e: e["checker"]
)
def test_unwritten_predictions_are_not_attempted(exercise):
    namespace = {}
    exec(exercise["answer"].source, namespace)
    names = [name.strip() for name in exercise["args"].split(",")]
    # an argument the answer cell does not write is the chapter's own object (chapter 5's trained
    # `model`, measured against the reader's; chapter 13's `accuracy`, its run's accuracies); not
    # built here, so the checker's default
    assert {n for n in names if n not in namespace} <= {"model", "accuracy"}, names
    args = [namespace.get(name) for name in names]
    assert all(a is None for a in args)
    assert checker_of(exercise)(*args).status == "not attempted"


def test_is_stub_knows_a_template_from_an_attempt():
    def template(w, gamma):
        """Docstring."""
        ...  # your code here

    def passing(w):
        pass

    def forgot_return(w, gamma):
        w = w**gamma

    assert is_stub(template) and is_stub(passing)
    assert not is_stub(forgot_return) and not is_stub(lambda w, g: w) and not is_stub(torch.softmax)


def test_a_function_that_raises_not_implemented_is_not_attempted():
    def todo(w, gamma):
        raise NotImplementedError

    assert check_sharpen(todo).status == "not attempted"


# --- wrong answers get the right feedback ---------------------------------------------------------------


def _forgot_return(w, gamma):
    w = w**gamma / (w**gamma).sum(dim=-1, keepdim=True)


SHARPEN_WRONG = [
    ("no division", lambda w, g: w**g, "without the division"),
    (
        "normalised across the batch",
        lambda w, g: w**g / (w**g).sum(dim=0, keepdim=True),
        "normalised over the first dimension",
    ),
    (
        "softmax(gamma * w)",
        lambda w, g: torch.softmax(g * w, dim=-1),
        "your result is softmax(gamma * w)",
    ),
    (
        "w**gamma underflows",
        lambda w, g: w**g / (w**g).sum(dim=-1, keepdim=True),
        "underflows to 0",
    ),
    (
        "NaNs of the underflow replaced by 0",
        lambda w, g: torch.nan_to_num(w**g / (w**g).sum(dim=-1, keepdim=True)),
        "hides the underflow instead of avoiding it",
    ),
    (
        "epsilon in the sum hides the underflow",
        lambda w, g: w**g / ((w**g).sum(dim=-1, keepdim=True) + 1e-12),
        "row 0 of your weights is all 0",
    ),
    (
        "a tiny epsilon before the log",
        lambda w, g: torch.softmax(g * torch.log(w + 1e-6), dim=-1),
        "has weight exactly 0, and yours gives it",
    ),
    (
        "a 1e-12 epsilon before the log (exactly 0 in float32 at gamma = 4, not at gamma = 1)",
        lambda w, g: torch.softmax(g * torch.log(w + 1e-12), dim=-1),
        "on the case 'gamma = 1 on one row of 6 weights, two of them exactly 0', slot 1 of row 0 "
        "has weight exactly 0, and yours gives it",
    ),
    ("sum without keepdim", lambda w, g: w**g / (w**g).sum(dim=-1), "keepdim=True"),
    ("gamma ignored", lambda w, g: w.clone(), "gamma = 2 was not applied"),
    (
        "zero weights revived",
        lambda w, g: (lambda v: v / v.sum(-1, keepdim=True))(torch.where(w == 0, 0.2, w) ** g),
        "a zero weight must stay 0",
    ),
    (
        "changes w in place",
        lambda w, g: w.pow_(g).div_(w.sum(-1, keepdim=True)),
        "changed its input number 1 in place",
    ),
    ("returns a list", lambda w, g: (w**g).tolist(), "returned a list"),
    ("returns NumPy", lambda w, g: (w**g).numpy(), "returned a NumPy array"),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    ("wrong shape", lambda w, g: (w**g).sum(-1), "returned shape"),
]


@pytest.mark.parametrize("name, wrong, message", SHARPEN_WRONG, ids=[w[0] for w in SHARPEN_WRONG])
def test_check_sharpen_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check_sharpen(wrong)


def _general(W_a: torch.Tensor) -> GeneralScore:
    module = GeneralScore(W_a.shape[0], W_a.shape[1])
    with torch.no_grad():
        module.W_a.weight.copy_(W_a)
    return module


PROJECTION_WRONG = [
    ("no scaling", lambda Q, K: _general(Q.T @ K), "sqrt(d_k) = 1.41 times too large"),
    (
        "scaled by sqrt(d)",
        lambda Q, K: _general(Q.T @ K / math.sqrt(Q.shape[1])),
        "you divided by sqrt(d) = 2.83, the width of the raw vectors",
    ),
    ("scaled by d_k", lambda Q, K: _general(Q.T @ K / Q.shape[0]), "times too small"),
    (
        "transposed",
        lambda Q, K: _general(K.T @ Q / math.sqrt(Q.shape[0])),
        "your W_a is transposed",
    ),
    (
        "[d_k, d_k] matrix",
        lambda Q, K: _general(Q @ K.T / math.sqrt(Q.shape[0])),
        "the shape of one that compares projected (2-dimensional) vectors",
    ),
    (
        "returns the matrix",
        lambda Q, K: Q.T @ K / math.sqrt(Q.shape[0]),
        "you returned the matrix W_a itself",
    ),
    (
        "returns another module",
        lambda Q, K: torch.nn.Identity(),
        "expected a lib.attention.GeneralScore",
    ),
    ("raises", lambda Q, K: Q @ K, "raised RuntimeError"),
    (
        "W_Q used for both sides (rank d_k, not a random W_a)",
        lambda Q, K: _general(Q.T @ Q / math.sqrt(Q.shape[0])),
        "built from W_Q alone",
    ),
    ("negated", lambda Q, K: _general(-Q.T @ K / math.sqrt(Q.shape[0])), "the sign is wrong"),
    (
        "random W_a (never copied in)",
        lambda Q, K: GeneralScore(Q.shape[1], Q.shape[1]),
        "W_a.weight has rank 8, but a score that compares the vectors only through their 2-dimensional projections",
    ),
]


@pytest.mark.parametrize(
    "name, wrong, message", PROJECTION_WRONG, ids=[w[0] for w in PROJECTION_WRONG]
)
def test_check_projected_as_general_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check_projected_as_general(wrong)


def test_a_matrix_of_the_wrong_shape_copied_in_gets_no_unrelated_hint():
    def copies_a_small_matrix(W_Q, W_K):
        module = GeneralScore(W_Q.shape[1], W_Q.shape[1])
        with torch.no_grad():
            module.W_a.weight.copy_(W_Q @ W_K.T)  # [d_k, d_k] into [d, d]
        return module

    with pytest.raises(ExerciseFailed) as failure:
        check_projected_as_general(copies_a_small_matrix)
    assert "does not have its shape [d, d]" in failure.value.message
    assert "keepdim" not in failure.value.message and "W_Q.T @ W_K" not in failure.value.message


def test_wrong_answers_do_not_get_the_solution():
    """A wrong answer is told what is wrong, not handed the formula or the answer."""
    wrongs = [
        (check_projected_as_general, PROJECTION_WRONG),
        (check_masked_softmax, MASKED_WRONG),
        (check_sharpen, SHARPEN_WRONG),
    ]
    for check, cases in wrongs:
        for _, wrong, _ in cases:
            with pytest.raises(ExerciseFailed) as failure:
                check(wrong)
            text = failure.value.message
            for solution in ("W_Q.T @ W_K", "masked_fill(~mask", "softmax(gamma * log w)"):
                assert solution not in text, text
    for args in [({"k2"}, 0.5), ({"k1", "k2", "k3"}, 0.5), ({"k1", "k2"}, 1.0)]:
        with pytest.raises(ExerciseFailed) as failure:
            check_key_strength(*args)
        assert "k1 and k2" not in failure.value.message and "1/2" not in failure.value.message
    for args in [({"cosine", "scaled dot"}, {"cosine"}), ({"general"}, {"location"})]:
        with pytest.raises(ExerciseFailed) as failure:
            check_unit_length(*args)
        text = failure.value.message
        assert "missing: " not in text and "identical to cosine" not in text
        assert "dot" not in text.replace("scaled dot", "")
    with pytest.raises(ExerciseFailed) as failure:
        check_duplicate_key((-0.6, 1.04), 6)
    assert "midpoint" not in failure.value.message and "1/2" not in failure.value.message


def _filled(value: float):
    return lambda s, m: torch.softmax(s.masked_fill(~m, value), dim=-1)


def _allowed_maximum(s, m):
    """Each row's largest allowed score (0 for a fully masked row): the right shift, [..., 1]."""
    top = s.masked_fill(~m, float("-inf")).amax(-1, keepdim=True)
    return top.masked_fill(top.isinf(), 0.0)


MASKED_WRONG = [
    (
        "softmax, then zero the masked weights",
        lambda s, m: torch.softmax(s, dim=-1) * m,
        "you set the masked weights to 0 after the softmax",
    ),
    (
        "NaN on a fully masked row",
        _filled(float("-inf")),
        "fully masked and your weights there are NaN",
    ),
    (
        # reader s20, chapter 3: the NaN came from exp(+inf) * 0, not from a zero sum
        "the masked row maximum subtracted, exp times the mask",
        lambda s, m: (lambda e: e / e.sum(-1, keepdim=True).clamp_min(1e-30))(
            (s - s.masked_fill(~m, float("-inf")).amax(-1, keepdim=True)).exp() * m
        ),
        "the score minus it is +inf",
    ),
    ("-1e9 fill: a fully masked row is uniform", _filled(-1e9), "the row becomes uniform"),
    ("finite fill -10", _filled(-10.0), "must get weight exactly 0"),
    (
        "finite fill -1e4, fully masked rows zeroed",
        lambda s, m: _filled(-1e4)(s, m) * m.any(-1, keepdim=True),
        "below a finite fill value such as -1e4",
    ),
    (
        "finite fill -1e4 above the allowed scores, then times the mask",
        lambda s, m: _filled(-1e4)(s, m) * m,
        "below your fill value for the masked scores",
    ),
    (
        "the raw row maximum subtracted before masking",
        lambda s, m: (lambda e: torch.nan_to_num(e / e.sum(-1, keepdim=True)))(
            (s - s.amax(-1, keepdim=True)).exp() * m
        ),
        "the maximum of the raw scores, masked ones included",
    ),
    (
        "row maximum over the allowed scores, but exp before masking: inf * 0 = NaN",
        lambda s, m: (lambda e: e / e.sum(-1, keepdim=True).clamp_min(1e-30))(
            (s - _allowed_maximum(s, m)).exp() * m
        ),
        "Mask before the exp, not after it",
    ),
    (
        "exp before masking, its NaN cleaned up",
        lambda s, m: (lambda e: torch.nan_to_num(e / e.sum(-1, keepdim=True)))(
            (s - _allowed_maximum(s, m)).exp() * m
        ),
        "exponentiating before masking lets that masked score's exp overflow",
    ),
    (
        "softmax, zero the masked weights, renormalise",
        lambda s, m: (lambda w: w / w.sum(-1, keepdim=True))(torch.softmax(s, dim=-1) * m),
        "the sum the row is divided by (of the exps, or of the weights left after masking) is 0",
    ),
    (
        "scores times mask",
        lambda s, m: torch.softmax(s * m, dim=-1),
        "multiplying the scores by the mask",
    ),
    (
        "inverted mask",
        lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(m, float("-inf")), -1)),
        "non-zero exactly where the mask is False",
    ),
    (
        "exp overflows",
        lambda s, m: (lambda e: e / e.sum(-1, keepdim=True).clamp_min(1e-30))(s.exp() * m),
        "the exp of any score above 88 overflows",
    ),
    (
        "normalised over the queries",
        lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), -2)),
        "your columns sum to 1",
    ),
    (
        "fills the scores in place",
        lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill_(~m, float("-inf")), -1)),
        "changed its input number 1 in place",
    ),
    ("indexing with a broadcast mask", lambda s, m: s[m], "returned shape"),
    ("the library's function", attention.masked_softmax, "the library's masked_softmax"),
    (
        "calls the library's function",
        lambda s, m: attention.masked_softmax(s, m) + 0,
        "it called the library's masked_softmax",
    ),
    (
        "exp without the row maximum, NaN cleaned up",
        lambda s, m: (lambda e: torch.nan_to_num(e / e.sum(-1, keepdim=True)))(
            s.masked_fill(~m, float("-inf")).exp()
        ),
        "the exp of any score above 88 overflows to inf",
    ),
]


@pytest.mark.parametrize("name, wrong, message", MASKED_WRONG, ids=[w[0] for w in MASKED_WRONG])
def test_check_masked_softmax_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check_masked_softmax(wrong)


def _index_filled(s, m):
    """The masked scores set by boolean indexing: fails where the mask only broadcasts."""
    s = s.clone()
    s[~m] = float("-inf")
    return torch.nan_to_num(torch.softmax(s, dim=-1))


def test_check_masked_softmax_hints_at_a_broadcast_mask():
    """Reader s23, chapter 3: scores[~mask] = -inf with a padding mask [B, 1, Tk] raises torch's
    IndexError; the checker adds what to do about it."""
    with pytest.raises(ExerciseFailed, match=r"IndexError.*mask\.expand_as\(scores\)"):
        check_masked_softmax(_index_filled)


def test_check_masked_softmax_uniform_row_without_a_finite_fill():
    """Reader s23, chapter 3: -inf, then the fully masked row's NaN turned into 1/Tk, is uniform
    there, but no finite fill value made it so: the checker does not blame one."""
    uniform = lambda s, m: torch.nan_to_num(  # noqa: E731
        torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1), nan=1 / s.shape[-1]
    )
    with pytest.raises(ExerciseFailed) as failure:
        check_masked_softmax(uniform)
    text = failure.value.message
    assert "row 1 is fully masked" in text and "must be all zeros" in text
    assert "finite" not in text and "-1e9" not in text


def test_masked_softmax_exercise_states_the_checkers_range():
    """The exercise's text gives the size of the scores the checker tries (reader s23, chapter 3:
    it said 10^4 while the cases go to 3e4, so a fill value the text allowed was refused)."""
    from lib.exercises.ch03 import _masked_softmax_cases

    largest = max(scores.max().item() for _, scores, _ in _masked_softmax_cases())
    lowest = min(scores.min().item() for _, scores, _ in _masked_softmax_cases())
    assert (largest, lowest) == (3e4, -2e10)
    cells = nbformat.read(ROOT / "notebooks" / "03_scoring_functions.ipynb", as_version=4).cells
    text = next(c.source for c in cells if c.get("id") == "ch03-ex4")
    assert (
        "not overflow on large scores (the checker tries some up to $3\\times10^4$)" in text
        and "let allowed scores far below zero (down to $-2\\times10^{10}$) still beat the masked ones"
        in text
    )


def test_check_masked_softmax_names_the_row_sum():
    with pytest.raises(
        ExerciseFailed,
        match=r"row 0 \(counting from 0\) of your weights sums to 0\.17",
    ):
        check_masked_softmax(lambda s, m: torch.softmax(s, dim=-1) * m)


PREDICTIONS_WRONG = [
    (check_duplicate_key, ((-0.6, 1.04), 2), "is v_2, the value of k_2 alone"),
    (check_duplicate_key, ((0.0, -1.5), 2), "the new value alone"),
    (check_duplicate_key, ((-0.04, -0.19), 2), "the output at lambda = 0"),
    (check_duplicate_key, ((1.0, 1.0), 2), "not where the soft output goes"),
    (check_duplicate_key, ((-0.3, -0.23), 6), "which index it returns when several entries share"),
    (check_duplicate_key, ((-0.3, -0.23), 4), "does not have the highest score"),
    (check_duplicate_key, ("midpoint", 2), "a pair of two numbers"),
    (check_duplicate_key, ((-0.3, -0.23), "2"), "the index of a key"),
    (check_key_strength, ({"k2"}, 0.5), "you left out a key whose score"),
    (
        check_key_strength,
        ({"k1", "k2", "k3"}, 0.5),
        "k3 has a smaller cosine with q1 than some other key",
    ),
    (check_key_strength, ({"k1", "k2"}, 1.0), "approaches 1 only if k2's score beats every other"),
    (check_key_strength, ({"k1", "k2"}, 1 / 6), "the limit beta -> 0"),
    (check_key_strength, ({"k1", "k2"}, 0.31), "the weight of k2 at beta = 1"),
    (check_key_strength, ({"k1", "k2"}, 0.489), "the weight of k2 at beta = 5"),
    (check_key_strength, ({1, 2}, 0.5), "name each one by its label"),
    (check_key_strength, ({"k1", "k2"}, "one half"), "k2_limit should be a number"),
    (check_unit_length, ({"cosine", "scaled dot"}, {"cosine"}), "scaled dot does not belong"),
    (
        check_unit_length,
        ({"cosine", "dot"}, {"cosine", "location"}),
        "location does not belong: it reads only the query, W_a q; did the queries change?",
    ),
    (
        check_unit_length,
        ({"cosine", "dot"}, set()),
        "unchanged: a score function whose weights do not change at all is missing",
    ),
    (check_unit_length, ({"cosine", "dot product!"}, {"cosine"}), "is not one of"),
    (check_unit_length, ("cosine and dot", {"cosine"}), "is not one of"),
    (check_unit_length, (42, {"cosine"}), "should be a set of names"),
]


@pytest.mark.parametrize(
    "check, args, message",
    PREDICTIONS_WRONG,
    ids=[f"{c.__name__}-{m[:30]}" for c, _, m in PREDICTIONS_WRONG],
)
def test_prediction_checkers_reject(check, args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check(*args)


def test_check_duplicate_key_accepts_the_right_index_written_as_a_float():
    assert check_duplicate_key((-0.3, -0.23), 2.0)
    with pytest.raises(ExerciseFailed, match="the index of a key"):
        check_duplicate_key((-0.3, -0.23), 2.5)  # not an index
    with pytest.raises(ExerciseFailed, match="hard_key = 6, the copy"):
        check_duplicate_key((-0.3, -0.23), 6.0)


def test_check_duplicate_key_names_both_wrong_predictions_at_once():
    """A reader with both predictions wrong learnt of the second only on a second run (review s34)."""
    with pytest.raises(ExerciseFailed) as failure:
        check_duplicate_key((-0.6, 1.039), 6)
    text = failure.value.message
    assert text.startswith("Neither prediction is right yet.")
    assert "is v_2, the value of k_2 alone" in text and "hard_key = 6, the copy" in text
    assert "midpoint" not in text and "1/2" not in text


def test_check_duplicate_key_names_swapped_coordinates_and_the_right_half():
    """A reader's right midpoint written (y, x) was sent back to ties; a right hard_key went
    unconfirmed (review s36)."""
    with pytest.raises(ExerciseFailed) as failure:
        check_duplicate_key((-0.2304, -0.3), 2)
    text = failure.value.message
    assert text.startswith("hard_key is right. ") and "coordinates swapped" in text
    with pytest.raises(ExerciseFailed) as failure:
        check_duplicate_key((-0.3, -0.23), 6)
    assert failure.value.message.startswith("soft_limit is right. hard_key = 6, the copy")
    with pytest.raises(ExerciseFailed) as failure:
        check_duplicate_key((1.0, 1.0), 4)  # both wrong: no "is right"
    assert "is right." not in failure.value.message


def test_prediction_checkers_accept_right_answers_in_several_spellings():
    assert check_duplicate_key((-0.3, -0.23), 2) and check_duplicate_key(
        torch.tensor([-0.3, -0.2304]), torch.tensor(2)
    )
    assert check_key_strength({"k1", "k2"}, 0.5) and check_key_strength(
        ["K2", "k1"], torch.tensor(0.5)
    )
    assert check_unit_length({"cosine", "dot product"}, "cosine")
    assert check_unit_length(("Dot", "content-based"), {"cos"})


def test_expect_number_accepts_every_real_number_and_rejects_the_rest():
    """A numeric answer may come as any real number: NumPy scalars and fractions included."""
    from fractions import Fraction

    import numpy as np

    from lib.exercises import CheckFailed, expect_number

    for value, expected in [
        (16, 16.0),
        (np.float32(16), 16.0),
        (np.int64(3), 3.0),
        (np.array([2.5]), 2.5),
        (Fraction(1, 3), 1 / 3),
        (torch.tensor(0.5), 0.5),
    ]:
        assert expect_number(value, "x") == expected
    for value in [True, np.bool_(True), "16", 1j, np.array([1.0, 2.0]), float("nan")]:
        with pytest.raises(CheckFailed, match="x should be a"):
            expect_number(value, "x")


def test_half_answered_predictions_say_what_is_missing():
    verdict = check_duplicate_key((-0.3, -0.23), None)
    assert verdict.status == "not attempted" and "now predict hard_key" in verdict.message
    with pytest.raises(ExerciseFailed, match="torch.argmax"):
        check_duplicate_key(None, 6)  # a wrong half is reported at once
    assert "unchanged" in check_unit_length({"cosine", "dot"}, None).message


# --- a reader's mistakes never crash a checker ---------------------------------------------------------


def _raises(*args):
    raise ValueError("my own bug")


PATHOLOGICAL = [
    lambda *a: "text",
    lambda *a: 3,
    lambda *a: torch.zeros(0),
    lambda *a: torch.ones(7, 7, 7),
    lambda *a: torch.ones(2, 5, dtype=torch.long),
    lambda *a: torch.full((2, 5), float("nan")),
    lambda *a: torch.tensor(1.0),
    lambda: 1,
    _raises,
    3,
    "sharpen",
]


@pytest.mark.parametrize(
    "check",
    [check_sharpen, check_projected_as_general, check_masked_softmax],
    ids=lambda c: c.__name__,
)
@pytest.mark.parametrize("answer", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_checkers_report_any_wrong_type_or_shape_instead_of_crashing(check, answer):
    with pytest.raises(ExerciseFailed) as failure:
        check(answer)
    assert failure.value.message and "Traceback" not in failure.value.message


def test_reader_errors_are_reported_with_their_message():
    with pytest.raises(ExerciseFailed, match="raised ValueError: my own bug"):
        check_sharpen(_raises)


def test_feedback_renders_without_a_traceback_and_verdicts_render_as_html():
    with pytest.raises(ExerciseFailed) as failure:
        check_sharpen(lambda w, g: w**g)
    lines = failure.value._render_traceback_()
    assert (
        len(lines) == 2
        and "sharpen: not yet right" in lines[0]
        and "without the division" in lines[1]
    )
    html = check_sharpen(lambda w, g: torch.softmax(g * w.log(), dim=-1))._repr_html_()
    assert "passed" in html and ">sharpen</code>" in html and "`" not in html
    assert "color: inherit" in html  # readable in dark mode too (tests/test_accessibility.py)


# --- the student edition ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory) -> list[Path]:
    """The student edition of every chapter, written by tools/make_student_edition.py (as `make student`)."""
    return make_student_edition.write_student_edition(tmp_path_factory.mktemp("student"))


def _squash(text: str) -> str:
    return " ".join(text.split())


# statements a solution shares with its exercise's template and that give nothing away (chapter 7's
# SeparateHeads and the template's class both call the parent's __init__ first)
_BOILERPLATE = {"super().__init__()"}


def _solution_statements(source: str) -> list[str]:
    """A solution cell's statements and those of its functions' bodies, whitespace squashed: none of them
    (but the boilerplate) may appear in the student edition."""
    tree = ast.parse(source)
    bodies = [
        stmt for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for stmt in node.body
    ]
    statements = []
    for stmt in tree.body + bodies:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring or `...`: shared with the template
        statements.append(_squash(ast.get_source_segment(source, stmt) or ""))
    return [s for s in statements if len(s) > 12 and s not in _BOILERPLATE]


def test_student_edition_has_every_chapter_and_no_solution(student_edition):
    assert [p.name for p in student_edition] == [p.name for p in CHAPTERS]
    for original, student in zip(CHAPTERS, student_edition):
        nb = nbformat.read(original, as_version=4)
        edition = nbformat.read(student, as_version=4)
        nbformat.validate(edition)
        assert not [c for c in edition.cells if "solution" in tags(c)]
        assert edition.cells[0].source == nb.cells[0].source, "the Colab setup cell stays first"
        assert all(
            not c.get("outputs") and c.get("execution_count") is None
            for c in edition.cells
            if c.cell_type == "code"
        )
        kept = _squash("\n".join(c.source for c in edition.cells))
        # statements an exercise's prompt quotes for the reader to use (chapter 2's `scale = ...`)
        given = _squash(
            "\n".join(
                c.source
                for c in nb.cells
                if c.cell_type == "markdown" and "solution" not in tags(c)
            )
        )
        solutions = [c for c in nb.cells if "solution" in tags(c)]
        assert solutions or original.stem not in CHECKED_CHAPTERS, (
            f"{original.name} has no solutions to remove"
        )
        for cell in solutions:
            if cell.cell_type == "code" and CHECK_CALL.match(cell.source.strip()):
                continue  # the worked solution's check: the same call as the reader's check, kept
            if cell.cell_type == "code":
                leaked = [
                    stmt
                    for stmt in _solution_statements(cell.source)
                    if stmt in kept and stmt not in given
                ]
                assert not leaked, f"{student.name}: solution code left in: {leaked}"
            else:
                assert _squash(cell.source) not in kept
        notes = [c for c in edition.cells if make_student_edition.NOTE_TAG in tags(c)]
        # the figures' captions, in cells of their own (tools/plain_notebooks.py), but the solutions'
        captions = [c for c in edition.cells if plain_notebooks.CAPTION_TAG in tags(c)]
        assert len(edition.cells) == len(nb.cells) - len(solutions) + len(notes) + len(captions)
        checks = [
            c.source
            for c in edition.cells
            if c.cell_type == "code" and CHECK_CALL.match(c.source.strip())
        ]
        assert checks == [f"{e['checker']}({e['args']})" for e in exercises(original)], (
            "the checks are kept"
        )


def _solution_runs(nb) -> list[tuple[str, int, list]]:
    """Each run of consecutive solution cells of a chapter: (its exercise's number, the index of the
    cell before it, its cells)."""
    runs, number = [], None
    for i, cell in enumerate(nb.cells):
        found = re.match(r"\*\*Exercise (\d+)", cell.source.strip())
        if cell.cell_type == "markdown" and found and "solution" not in tags(cell):
            number = found[1]
        if "solution" in tags(cell):
            if i and "solution" in tags(nb.cells[i - 1]):
                runs[-1][2].append(cell)
            else:
                runs.append((number, i - 1, [cell]))
    return runs


def test_student_edition_says_where_the_solutions_are(student_edition):
    """First-time readers of chapters 1, 5 and 8: the student edition said "compare yours with the model
    answer" and never where the model answer is. Where each exercise's solution cells were, one note
    names the exercise and the chapter's page on the book's site (html.baseurl), at its Exercises
    section, "unless your course's copy of the book leaves them out"; the exercises' introduction no
    longer promises them folded below each check."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = config["html"]["baseurl"].rstrip("/") + "/"
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for original, student in zip(CHAPTERS, student_edition):
        nb = nbformat.read(original, as_version=4)
        edition = nbformat.read(student, as_version=4)
        # the address: the chapter's page (a page of the book) at its one section "Exercises"
        url = f"{base}notebooks/{original.stem}.html#exercises"
        assert f"file: notebooks/{original.stem}\n" in toc
        headings = [
            line
            for c in nb.cells
            if c.cell_type == "markdown"
            for line in c.source.splitlines()
            if line.startswith("#")
        ]
        assert headings.count("## Exercises") == 1, original.name
        runs = _solution_runs(nb)
        numbers = [
            m[1]
            for c in nb.cells
            if c.cell_type == "markdown" and (m := re.match(r"\*\*Exercise (\d+)", c.source))
        ]
        assert [n for n, _, _ in runs] == numbers, f"{original.name}: one run of solutions each"
        ids = [c.get("id") for c in edition.cells]
        assert len(set(ids)) == len(ids)
        notes = [
            (i, c) for i, c in enumerate(edition.cells) if make_student_edition.NOTE_TAG in tags(c)
        ]
        assert len(notes) == len(runs), original.name
        for (number, before, removed), (i, note) in zip(runs, notes):
            text = _squash(note.source)
            # in place of the solutions: right after the cell that preceded them (the reader's check)
            assert edition.cells[i - 1].source == nb.cells[before].source
            assert text.startswith(f"**Exercise {number}'s worked solution"), text
            assert f"<{url}>" in text and f"under Exercise {number}," in text
            assert "unless your course's copy of the book leaves" in text
            answer = any('<details class="model-answer">' in c.source for c in removed)
            assert ("model answer" in text) == answer, text
        intro = _squash("\n".join(c.source for c in edition.cells if c.cell_type == "markdown"))
        assert "folded together" not in intro and "leaves the solutions out" not in intro
        assert make_student_edition.FOLDED_STUDENT in intro, original.name


def test_student_edition_for_a_course_without_answers_names_no_site():
    """`make student SOLUTIONS=0` (--answers-withheld), for a course whose own site leaves the answers
    out (`make book SOLUTIONS=0`): the notes point to the teacher, not to any site."""
    for path in CHAPTERS[:: len(CHAPTERS) - 1]:  # the first chapter and the last
        nb = nbformat.read(path, as_version=4)
        edition = make_student_edition.student_notebook(nb, path.stem, withheld=True)
        notes = [c.source for c in edition.cells if make_student_edition.NOTE_TAG in tags(c)]
        assert notes and len(notes) == len(_solution_runs(nb))
        for note in notes:
            assert "://" not in note and "site" not in note and "your teacher has" in note
        text = _squash("\n".join(c.source for c in edition.cells))
        assert make_student_edition.base_url() not in text
        assert make_student_edition.FOLDED_WITHHELD in text and "folded together" not in text


def test_the_leak_test_finds_solution_statements():
    """The leak test above must be able to fail: it looks at every statement, inside functions too."""
    source = (
        'def f(w):\n    """doc"""\n    with torch.no_grad():\n        return '
        "torch.softmax(4 * w.log(),\n"
        "  dim=-1)\n\nhard_key = 2\nsoft_limit = (0.5, 0.5)\n"
    )
    statements = _solution_statements(source)
    assert "with torch.no_grad(): return torch.softmax(4 * w.log(), dim=-1)" in statements
    # the def, its body, soft_limit
    assert "soft_limit = (0.5, 0.5)" in statements and len(statements) == 3


def test_student_edition_runs_top_to_bottom_before_anything_is_written(student_edition):
    """Nothing written = every template as handed out: the checkers answer "not attempted", no cell fails.

    Only chapters with checked exercises differ from the chapter itself (which the build runs); those run here."""
    from nbclient import NotebookClient

    for path in [p for p in student_edition if p.stem in CHECKED_CHAPTERS]:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        outputs = {
            c.source.strip(): c.outputs
            for c in nb.cells
            if c.cell_type == "code" and CHECK_CALL.match(c.source.strip())
        }
        assert outputs
        for check, out in outputs.items():
            text = " ".join(
                o.get("data", {}).get("text/plain", "")
                for o in out
                if o.output_type == "execute_result"
            )
            assert "not attempted" in text, f"{path.name}: {check} -> {out}"


# --- chapters 05 to 09 -------------------------------------------------------------------------------------

from lib.exercises import ch05, ch06, ch07, ch08, ch09  # noqa: E402

# The book's run: exactly right captions with 1, 2 and 3 shapes, for the chapter's captioner (86 of
# 88, 96 of 104, 78 of 108) and without positions (86 of 88, 85 of 104, 29 of 108): 0, 11 and 45
# points lost.
BOOK_CHAPTER = {1: 86 / 88, 2: 96 / 104, 3: 78 / 108}
BOOK_BLIND = {1: 86 / 88, 2: 85 / 104, 3: 29 / 108}
# ... and of the 79 three-shape captions it gets wrong without positions, 22 in the wrong order
BOOK_ERRORS = (79, 22)


def _blind_captioner(blind=True):
    """A Captioner (untrained) with its row and column embeddings at zero, as exercise 2's
    blind_model; with ``blind=False``, as the chapter's model."""
    from lib.captioning import Captioner
    from lib.data.shapes import VOCAB

    torch.manual_seed(0 if blind else 1)  # two models, as a student's two: not the same weights
    m = Captioner(len(VOCAB), d_feature=64, d_emb=32, d_hidden=64, d_attn=32)
    if blind:
        with torch.no_grad():
            m.encoder.row_embedding.weight.zero_()
            m.encoder.col_embedding.weight.zero_()
    return m


def _mock_ch05(scores, errors):
    """exact_by_shapes and three_shape_errors replaced by ``scores`` (by id of the captioner) and
    ``errors`` (the blind model's wrong three-shape captions, and how many in the wrong order)."""
    return mock.patch.multiple(
        ch05,
        exact_by_shapes=mock.Mock(side_effect=lambda m: scores[id(m)]),
        three_shape_errors=mock.Mock(return_value=errors),
    )


def ch05_without_positions(
    suffers_most, mostly_wrong_order, measured=None, chapter=None, errors=None
):
    """check_without_positions given a blind_model and the chapter's model whose exactly right
    captions by number of shapes are ``measured`` and ``chapter`` (the book's run by default), and
    the blind model's wrong three-shape captions ``errors`` (BOOK_ERRORS): the evaluation replaced,
    since training takes minutes (the chapter's solution runs the real one)."""
    blind, model = _blind_captioner(), _blind_captioner(blind=False)
    scores = {id(blind): measured or BOOK_BLIND, id(model): chapter or BOOK_CHAPTER}
    with _mock_ch05(scores, errors or BOOK_ERRORS):
        return ch05.check_without_positions(suffers_most, mostly_wrong_order, blind, model)


LATER = [
    "05_attention_beyond_translation",
    "06_self_attention",
    "07_multi_head_attention",
    "08_positional_encoding",
    "09_the_transformer",
]
EXERCISE_TITLE = re.compile(r"^\*\*Exercise (\d) \(([^)]*)\)")


@pytest.mark.parametrize("chapter", LATER)
def test_later_chapters_have_two_to_four_exercises_each_checked_or_answered(chapter):
    """Every exercise has a hidden solution and either a checker or a model answer; kinds are varied."""
    cells = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4).cells
    starts = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and EXERCISE_TITLE.match(c.source)
    ]
    assert 2 <= len(starts) <= 4 and chapter in CHECKED_CHAPTERS
    kinds = {EXERCISE_TITLE.match(cells[i].source).group(2).split(":")[0] for i in starts}
    assert len(kinds) >= 2, f"{chapter}: exercises of one kind only: {kinds}"
    for i, end in zip(starts, starts[1:] + [len(cells)]):
        block = cells[i + 1 : end]
        assert any(c.cell_type == "code" and "solution" in tags(c) for c in block), (
            f"{chapter}: cell {i} has no solution"
        )
        checked = any(c.cell_type == "code" and CHECK_CALL.match(c.source.strip()) for c in block)
        answered = any(c.cell_type == "markdown" and "solution" in tags(c) for c in block)
        assert checked or answered, (
            f"{chapter}: exercise at cell {i} has neither a checker nor a model answer"
        )
        assert block[0].cell_type == "code" and "solution" not in tags(block[0]), (
            "an answer cell comes first"
        )


def test_the_checkers_copy_of_the_self_attention_model_is_the_chapters():
    """The chapter's solution asserts it too; here the copy is checked against what the chapter prints."""
    embedding, W_Q, W_K, W_V = ch06.hand_made_model()
    assert W_Q.shape == (10, 5) and W_Q.sum() == 4 * 5 and W_K.sum() == 6 and W_V.trace() == 5
    tokens = "The animal didn't cross the street because it was too tired".split()
    X = torch.stack([embedding[t] for t in tokens]).double()
    A = attention.masked_softmax((X @ W_Q.double()) @ (X @ W_K.double()).T / math.sqrt(5))
    # the chapter's asserted weight of 'it' on animal
    assert abs(A[tokens.index("it"), 1].item() - 0.231) < 1e-3


def _channels(query: dict, key: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """W_Q2, W_K2 [10, 2] with entries {feature: channel} (query strength 4, key 1)."""
    W_Q2, W_K2 = torch.zeros(10, 2), torch.zeros(10, 2)
    for feature, channel in query.items():
        W_Q2[ch06.FEATURES.index(feature), channel] = 4.0
    for feature, channel in key.items():
        W_K2[ch06.FEATURES.index(feature), channel] = 1.0
    return W_Q2, W_K2


RIGHT_CHANNELS = _channels({"animate": 0, "place": 1}, {"animate": 0, "place": 1})


def _incremental(scale=None, rows=lambda t: slice(0, t + 1), keep=-1):
    def incremental_outputs(X, W_Q, W_K, W_V):
        out = []
        for t in range(len(X)):
            P = X[rows(t)]
            w = torch.softmax((P @ W_Q) @ (P @ W_K).T / (scale or math.sqrt(W_Q.shape[1])), dim=-1)
            out.append((w @ (P @ W_V))[keep])
        return torch.stack(out)

    return incremental_outputs


def _separate_heads(variant=""):
    """A separate-heads module built from mha, right or with one of the usual mistakes."""

    class Heads(torch.nn.Module):
        def __init__(self, d, h):
            super().__init__()
            make = (
                (lambda: [torch.nn.Linear(d, d // h) for _ in range(h)])
                if variant == "plain list"
                else (lambda: torch.nn.ModuleList([torch.nn.Linear(d, d // h)] * h))
                if variant == "shared layer"
                else (lambda: torch.nn.ModuleList(torch.nn.Linear(d, d // h) for _ in range(h)))
            )
            self.q, self.k, self.v, self.o = make(), make(), make(), torch.nn.Linear(d, d)
            self.scale = math.sqrt(d) if variant == "sqrt D" else math.sqrt(d // h)

        def forward(self, x):
            heads = [
                torch.softmax(q(x) @ k(x).transpose(-2, -1) / self.scale, -1) @ v(x)
                for q, k, v in zip(self.q, self.k, self.v)
            ]
            if variant == "output and weights":  # the library's function, its [0] forgotten
                heads = [
                    attention.scaled_dot_product_attention(q(x), k(x), v(x))
                    for q, k, v in zip(self.q, self.k, self.v)
                ]
            z = torch.cat(heads, dim=-1)
            return z if variant == "no W_O" else self.o(z)

    def separate_heads_from(mha):
        m, dh = Heads(mha.d_model, mha.n_heads), mha.d_head
        with torch.no_grad():
            for mine, fused in [(m.q, mha.q_proj), (m.k, mha.k_proj), (m.v, mha.v_proj)]:
                for h, layer in enumerate(mine):
                    rows = slice(h * dh, (h + 1) * dh)
                    if variant == "heads transposed, assigned":
                        layer.weight = torch.nn.Parameter(fused.weight[rows].T.clone())
                    else:
                        layer.weight.copy_(
                            fused.weight[:, rows].T
                            if variant == "columns"
                            else fused.weight[rows].T
                            if variant == "heads transposed"
                            else fused.weight[rows]
                        )
                    if variant != "no biases":
                        layer.bias.copy_(fused.bias[rows])
            m.o.load_state_dict(mha.out_proj.state_dict())
            if variant == "W_O transposed":
                m.o.weight.copy_(mha.out_proj.weight.T)
        return m

    return separate_heads_from


@pytest.mark.parametrize("variant", ["heads transposed", "heads transposed, assigned"])
def test_ch07_a_per_head_weight_copied_transposed_is_named(variant):
    """The likeliest slip of exercise 2 (reader report s5): `.T` on a head's rows of q_proj.weight. torch's
    error is about shapes; the checker names the transpose instead of the general broadcasting advice."""
    with pytest.raises(ExerciseFailed) as failure:
        ch07.check_separate_heads(_separate_heads(variant))
    message = failure.value.message
    assert "A head's weight reached its layer transposed, as [D, D/H] = [12, 4]" in message
    assert "without `.T`" in message and "keepdim" not in message


def test_ch07_a_square_per_head_weight_held_transposed_is_named():
    """With H = 1 a head's weight is square, so `.T` raises nothing: the output is wrong, and the checker
    finds the transposed weight in the reader's layers."""
    mha = attention.MultiHeadAttention(8, 1)
    wrong = _separate_heads("heads transposed")(mha)
    assert ch07._owner_problem(wrong, mha).startswith(
        "your layer for the query of head 0 holds its weight transposed."
    )


def _pre_ln(kind, variant=ch09._variant):
    # the reference held here, not looked up in ch09 at call time: the checker refuses a call of its
    # own reference, as the course grader does (tests/test_exercises_ch09.py)
    return lambda layer, x: variant(layer, x, kind)


def _unbiased_std_eps_outside(layer, x):
    """A hand-written LayerNorm with torch's default (unbiased) .std() and eps outside the root."""

    def norm(ln, t):
        mu = t.mean(-1, keepdim=True)
        return ln.weight * (t - mu) / (t.std(-1, keepdim=True) + ln.eps) + ln.bias

    h = norm(layer.norm1, x)
    y = x + layer.self_attn(h, h, h)[0]
    return y + layer.ff(norm(layer.norm2, y))


FUNCTION_WRONG = [
    (ch05.check_word_importance, lambda w, s: s[:, None, :] * w, "broadcast along the words"),
    (ch05.check_word_importance, lambda w, s: s * w, "needs a trailing dimension of size 1"),
    (ch05.check_word_importance, lambda w, s: s[..., None] + w, "you added the two weights"),
    (
        ch05.check_word_importance,
        lambda w, s: (lambda p: p / p.sum(-1, keepdim=True))(s[..., None] * w),
        "equals the word weights alone",
    ),  # renormalising undoes the product
    (ch05.check_word_importance, lambda w, s: s[..., None] * w / w.sum(-1, keepdim=True), "0 / 0"),
    (ch05.check_word_importance, lambda w, s: w.clone(), "equals the word weights alone"),
    (
        ch05.check_word_importance,
        lambda w, s: s.sqrt()[..., None] * w,
        "square root of the sentence's weight",
    ),
    (
        ch06.check_incremental,
        lambda X, Q, K, V: torch.softmax((X @ Q) @ (X @ K).T / math.sqrt(Q.shape[1]), -1) @ (X @ V),
        "depends on the rows after t",
    ),
    (ch06.check_incremental, _incremental(keep=0), "you kept the first row of each step"),
    (ch06.check_incremental, _incremental(scale=1.0), "did not divide the scores by sqrt(d_k)"),
    (ch06.check_incremental, _incremental(rows=lambda t: slice(0, t)), "X[:t] is empty at t = 0"),
    (
        ch06.check_incremental,
        lambda X, Q, K, V: [r for r in _incremental()(X, Q, K, V)],
        "torch.stack",
    ),
    (ch07.check_separate_heads, _separate_heads("sqrt D"), "you divided the scores by sqrt(D)"),
    (
        ch07.check_separate_heads,
        _separate_heads("no W_O"),
        "concatenation of the heads; multiply it by W^O",
    ),
    (ch07.check_separate_heads, _separate_heads("columns"), "a head owns rows, not columns"),
    (ch07.check_separate_heads, _separate_heads("no biases"), "does not have its bias"),
    (ch07.check_separate_heads, _separate_heads("W_O transposed"), "out_proj.weight transposed"),
    (ch07.check_separate_heads, _separate_heads("plain list"), "use nn.ModuleList"),
    (ch07.check_separate_heads, _separate_heads("shared layer"), "the same nn.Linear object"),
    (ch07.check_separate_heads, lambda mha: mha, "you returned a MultiHeadAttention"),
    (
        ch07.check_separate_heads,
        _separate_heads("output and weights"),
        "returns a tuple (output, weights)",
    ),
    (
        ch08.check_sinusoidal,
        lambda m, d: ch08._table(m, d, exponent="j/d").float(),
        "their own frequency",
    ),
    (
        ch08.check_sinusoidal,
        lambda m, d: ch08._table(m, d, first="cos").float(),
        "your columns are swapped",
    ),
    (
        ch08.check_sinusoidal,
        lambda m, d: ch08._table(m, d, exponent="i/d").float(),
        "your exponent is i/d",
    ),
    (
        ch08.check_sinusoidal,
        lambda m, d: ch08._table(m, d, layout="halves").float(),
        "all the sines first",
    ),
    (
        ch08.check_sinusoidal,
        lambda m, d: ch08._table(m, d, start=1).float(),
        "encoding of position 1",
    ),
    (ch08.check_sinusoidal, lambda m, d: ch08._table(m, d).float().T, "transposed"),
    (ch08.check_sinusoidal, ch08.sinusoidal_encoding, "the library's sinusoidal_encoding"),
    (ch09.check_pre_ln, _pre_ln("post-LN"), "that is post-LN"),
    (ch09.check_pre_ln, _pre_ln("norm1 twice"), "has its own, norm2"),
    (ch09.check_pre_ln, _pre_ln("keys not normalized"), "the keys and values are x"),
    (ch09.check_pre_ln, _pre_ln("normalized residual"), "carries x itself"),
    (ch09.check_pre_ln, _pre_ln("normalized residuals"), "to its normalized input"),
    (ch09.check_pre_ln, _pre_ln("normalized second residual"), "carries y itself"),
    (ch09.check_pre_ln, _pre_ln("no attention residual"), "first residual connection is missing"),
    (ch09.check_pre_ln, _pre_ln("feed-forward not normalized"), "it reads LN2(y)"),
    (ch09.check_pre_ln, lambda layer, x: layer(x)[0], "not to call the layer itself"),
    (ch09.check_pre_ln, _pre_ln("unbiased std"), "1/(D - 1) under the root"),
    (ch09.check_pre_ln, _unbiased_std_eps_outside, "the unbiased standard deviation"),
    (ch09.check_pre_ln, _pre_ln("eps outside the root"), "put it under the square root"),
    (ch09.check_pre_ln, _pre_ln("batch statistics"), "over the batch and the positions"),
    (
        ch09.check_pre_ln,
        _pre_ln("batch statistics per position"),
        "over the batch at each position",
    ),
    (
        ch09.check_pre_ln,
        lambda layer, x: x + layer.self_attn(layer.norm1(x), layer.norm1(x), layer.norm1(x)),
        "returns a pair (output, weights)",
    ),
]


@pytest.mark.parametrize(
    "check, wrong, message",
    FUNCTION_WRONG,
    ids=[f"{c.__name__}-{m[:30]}" for c, _, m in FUNCTION_WRONG],
)
def test_later_function_checkers_reject_typical_mistakes(check, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check(wrong)


# what a reader's notebook holds when exercise 3 of chapter 6 is done: the chapter's globals and its
# self_attention, which reads them
_CH06_NOTEBOOK = """
def self_attention(X, mask=None):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    A = masked_softmax(Q @ K.T / math.sqrt(d_k), mask)
    return A @ V, A

def step(P, q, W_K, W_V, scale):
    return torch.softmax(P @ W_K @ q / scale, dim=-1) @ (P @ W_V)

def with_global_d_k(X, W_Q, W_K, W_V):
    return torch.stack([step(X[: t + 1], X[t] @ W_Q, W_K, W_V, math.sqrt(d_k)) for t in range(len(X))])

def with_sqrt_5(X, W_Q, W_K, W_V):
    return torch.stack([step(X[: t + 1], X[t] @ W_Q, W_K, W_V, math.sqrt(5)) for t in range(len(X))])

def with_d_v(X, W_Q, W_K, W_V):
    scale = math.sqrt(W_V.shape[1])
    return torch.stack([step(X[: t + 1], X[t] @ W_Q, W_K, W_V, scale) for t in range(len(X))])

def with_self_attention(X, W_Q, W_K, W_V):
    return torch.stack([self_attention(X[: t + 1])[0][-1] for t in range(len(X))])
"""


def _ch06_notebook() -> dict:
    _, W_Q, W_K, W_V = ch06.hand_made_model()
    space = {"torch": torch, "math": math, "masked_softmax": attention.masked_softmax}
    space.update(W_Q=W_Q, W_K=W_K, W_V=W_V, d_k=5, d_model=10)
    exec(_CH06_NOTEBOOK, space)
    return space


@pytest.mark.parametrize(
    "answer, message",
    [
        (
            "with_global_d_k",
            "sqrt(d_k) with the notebook's global `d_k` = 5, not by the square root of the width of the W_Q passed in (d_k = 4 here)",
        ),
        ("with_sqrt_5", "sqrt(5), the chapter's d_k"),
        ("with_d_v", "you divided by sqrt(d_v) instead of sqrt(d_k) (d_k = 4)"),
        (
            "with_self_attention",
            "the notebook's own `W_Q` [10, 5], `W_K` [10, 5] and `W_V` [10, 10] (through `self_attention`, which reads them)",
        ),
    ],
)
def test_ch06_incremental_names_a_global_width_or_the_chapters_own_matrices(answer, message):
    """The likeliest mistakes of a reader who has the chapter's globals at hand: d_k = 5 read from the
    notebook (the first hidden case's d_k = 4, d_v = 3 and d_model = 8 tell it from sqrt(d_v) and
    sqrt(d_model)), and the chapter's W_Q, W_K, W_V used through self_attention (a shape error, named)."""
    with pytest.raises(ExerciseFailed) as failed:
        ch06.check_incremental(_ch06_notebook()[answer])
    assert message in str(failed.value)
    assert "sqrt(d_v)" not in str(failed.value) or answer == "with_d_v"


PREDICTIONS_WRONG_LATER = [
    (ch05_without_positions, (1, False), "the captions with 1 shape, is not the group"),
    (ch05_without_positions, (2, False), "captions with 2 shapes, is not the group"),
    (ch05_without_positions, (3, True), "mostly_wrong_order: your prediction is not"),
    (ch05_without_positions, ("three", False), "1, 2 or 3"),
    (ch05_without_positions, (3.0, False), "should be an int"),
    (ch05_without_positions, (3.0, False), "the float 3.0"),
    (ch05_without_positions, (True, False), "got the bool True"),
    (ch05_without_positions, (4, False), "1, 2 or 3; got 4"),
    (
        ch06.check_second_layer,
        _channels({"animate": 0, "place": 1}, {"place": 0, "animate": 1}),
        "are swapped",
    ),
    (
        ch06.check_second_layer,
        _channels({"pronoun": 0}, {"thing": 0}),
        "reads only what 'it' is in X",  # issue 22: the query is the side that reads only X here
    ),
    (
        ch06.check_second_layer,
        _channels({"animate": 0, "place": 1}, {"animate": 0, "town": 1}),
        "the practice case with 'criminal' and 'river'",
    ),
    (ch06.check_second_layer, (RIGHT_CHANNELS[0].T, RIGHT_CHANNELS[1]), "transposed"),
    (ch06.check_second_layer, (torch.zeros(10, 2), RIGHT_CHANNELS[1]), "all zeros"),
    (ch06.check_wider_entries, (4, "orange"), "4 is the variance of one entry"),
    (ch06.check_wider_entries, (1, "orange"), "corrects for the width d_k"),
    (ch06.check_wider_entries, (1024, "orange"), "before the division"),
    (ch06.check_wider_entries, (16, "blue"), "variance 1 at every width"),
    (ch06.check_wider_entries, (16, "green"), '"blue" or "orange"'),
    (ch07.check_one_head, (4224, False), "the attention layer alone"),
    (ch07.check_one_head, (10_041, False), "the number of heads changes no matrix"),
    (ch07.check_one_head, (13_209, True, 0.197), "look with relation_weights"),
    (ch07.check_one_head, (13_209, "no"), "True or False"),
    (ch07.check_one_head, (13_209, False, 19.7), "between 0 and 1"),
    (ch07.check_one_head, (13_209, False, 0.9997), "not the accuracy of the exercise's run"),
    (ch08.check_small_base, (2 * math.pi * 100, False), "2 pi x 100, the limit"),
    (ch08.check_small_base, (100 ** (126 / 128), False), "positions per radian"),
    (ch08.check_small_base, (2 * math.pi * 100 ** (127 / 128), False), "the odd column's index"),
    (ch08.check_small_base, (54_410, False), "base 10000"),
    (
        ch08.check_small_base,
        (584.7, True),
        "measure it before you keep this answer",
    ),
    (ch09.check_parameter_counts, (2 * 18_944_000, None, None), "stays tied"),
    (ch09.check_parameter_counts, (18.9, None, None), "looks like an answer in millions"),
    (ch09.check_parameter_counts, (18.9, 12.6, 107.2), "gain_separate = 18.9 looks like"),
    (ch09.check_parameter_counts, (None, 12.6, None), "each answer is a count of parameters"),
    (
        ch09.check_parameter_counts,
        (None, -12_595_200, None),
        "loss_half_ff = -12,595,200 is negative",
    ),
    (ch09.check_parameter_counts, (None, 6_297_600, None), "the encoder's 6 layers only"),
    (ch09.check_parameter_counts, (None, 6_303_744, None), "counts one matrix per network"),
    # 6 networks x 2 matrices = 12 networks x 1 matrix without biases: either mistake, named both
    (ch09.check_parameter_counts, (None, 12 * 512 * 1024, None), "either the encoder's 6"),
    (ch09.check_parameter_counts, (None, 6 * 512 * 1024, None), "misses two things"),
    (ch09.check_parameter_counts, (0.30, 0.20, 1.70), "gain_separate = 0.3 looks like a share"),
    (ch09.check_parameter_counts, (None, 0.2, None), "the variables hold counts"),
    (ch09.check_parameter_counts, (None, 25_190_400, None), "as if halving d_ff removed every one"),
    # 1024 x 1024 matrices: the same count, within 0.1%, told what it equals, not how it was made
    (ch09.check_parameter_counts, (None, 12 * 2 * 1024 * 1024, None), "512 x 2048 to 512 x 1024"),
    # d_model read as 1024: two matrices counted; the message names both readings
    (ch09.check_parameter_counts, (37_000 * 1024, None, None), "1024 is the big model's"),
    # the layers doubled, the embedding left out (within 0.03% of base + 6 decoder layers)
    (
        ch09.check_parameter_counts,
        (None, None, 2 * (63_082_496 - 37_000 * 512)),
        "doubled without the embedding",
    ),
    (ch09.check_parameter_counts, (None, None, 2 * 63_082_496), "does not grow with N"),
    (
        ch09.check_parameter_counts,
        (None, None, 63_082_496 + 6 * 3_152_384),
        "of the encoder and of the decoder",
    ),
]


def test_ch09_parameter_counts_names_every_wrong_answer_at_once():
    """Two wrong predictions are both diagnosed in one message, not one per run (review s32)."""
    with pytest.raises(ExerciseFailed) as failed:
        ch09.check_parameter_counts(2 * 18_944_000, 6_297_600, 107_220_992)
    message = str(failed.value)
    assert "2 of your answers are not right yet" in message
    assert "stays tied" in message and "the encoder's 6 layers only" in message
    assert "total_n12" not in message  # the right one is not called wrong


@pytest.mark.parametrize("guess", [100_000_000, 90_000_000, 112_000_000])
def test_ch09_parameter_count_never_gives_the_total_away(guess):
    """A round or stray guess for total_n12 gets no diagnosis it did not earn (100M is within 1% of
    "12 layers of encoder size", but a reader who wrote 100M did not compute that) and no number that
    leads to the answer."""
    with pytest.raises(ExerciseFailed) as failed:
        ch09.check_parameter_counts(None, None, guess)
    message = str(failed.value)
    assert "is not it" in message and "cross-attention" in message
    numbers = {int(n.replace(",", "")) for n in re.findall(r"\d[\d,]{4,}", message)}
    assert numbers <= {int(guess)}, numbers


@pytest.mark.parametrize(
    "args",
    [
        (2 * 18_944_000, None, None),
        (None, 12 * 512 * 1024, None),
        (None, 6 * 512 * 1024, None),
        (None, 25_190_400, None),
    ],
)
def test_ch09_parameter_counts_name_no_ratio_to_the_answer(args):
    """A miscount that is a multiple of the answer is named by its mistake, not by the ratio ("twice
    the answer"), which would let a reader divide and pass (reader s36b)."""
    with pytest.raises(ExerciseFailed) as failed:
        ch09.check_parameter_counts(*args)
    message = str(failed.value)
    assert not re.search(r"(twice|half|quarter) (of )?the answer", message), message


@pytest.mark.parametrize(
    "score_variance, looks_like",
    [(1, None), (2, None), (4, None), (8, None), (15, None), (64, None), (256, None), (1024, None)]
    + [(None, "blue"), (None, "scaled")],
)
def test_ch06_wider_entries_names_the_mistake_without_the_answer(score_variance, looks_like):
    """A wrong prediction is told what went wrong, never the answer (16) or the step that gives it."""
    with pytest.raises(ExerciseFailed) as failed:
        ch06.check_wider_entries(score_variance, looks_like)
    message = str(failed.value)
    assert "is not it" in message or "variance" in message
    assert not re.search(r"\b16\b", message), message
    assert "4 * 4" not in message and "multiply" not in message, message


@pytest.mark.parametrize(
    "check, args, message",
    PREDICTIONS_WRONG_LATER,
    ids=[f"{c.__name__}-{m[:30]}" for c, _, m in PREDICTIONS_WRONG_LATER],
)
def test_later_prediction_checkers_reject(check, args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        check(*args)


@pytest.mark.parametrize("args", [(1, False), (2, False), (3, True), (2, True)])
def test_a_wrong_shape_prediction_names_the_prediction_and_not_the_answer(args):
    """A wrong prediction says which one is wrong and where to look, never what the model does."""
    with pytest.raises(ExerciseFailed) as failed:
        ch05_without_positions(*args)
    message = str(failed.value)
    assert "suffers_most: your prediction" in message or "mostly_wrong_order: your" in message
    # the second prediction's group says "three"; nothing else may
    message = message.replace("the three-shape captions", "")
    for answer in ("three", " 3 ", "lose most", "more than half", "stay", "not every sense"):
        assert answer not in message


def test_two_wrong_shape_predictions_are_named_together():
    """(2, True) names both predictions in one run (reader's report 5, s3, item 9), not the first
    alone, and still gives no answer away."""
    with pytest.raises(ExerciseFailed) as failed:
        ch05_without_positions(2, True)
    message = str(failed.value)
    assert "both predictions are wrong" in message
    assert "suffers_most: your prediction" in message and "mostly_wrong_order: your" in message
    message = message.replace("the three-shape captions", "")
    for answer in ("three", " 3 ", "lose most", "more than half"):
        assert answer not in message
    # a wrong type is named first, even after a wrong prediction
    with pytest.raises(ExerciseFailed, match="mostly_wrong_order"):
        ch05_without_positions(2, "yes")


@pytest.mark.parametrize("args", [(3, True), (1, False), (2, True), (3, False)])
def test_shape_predictions_are_not_judged_without_the_trained_model(args):
    """Reader s28, ch05, 3: without blind_model the predictions are not judged, right or wrong,
    so that the check cannot be passed by trying the answers one after another; and the checker
    does not claim to record them (reader s30: nothing was kept)."""
    verdict = ch05.check_without_positions(*args)
    assert verdict.status == "not attempted" and "train blind_model" in verdict.message
    assert verdict.exercise == "blind_model"  # the part still to do (reader s36b, ch04)
    assert "recorded" not in verdict.message and "does not keep them" in verdict.message
    for answer in ("three", " 3 ", "lose most", "right", "wrong"):
        assert answer not in verdict.message


def test_shape_predictions_are_judged_against_the_readers_own_model():
    """The drops and the errors come from the reader's blind_model: where its three-shape captions
    gain 2 points instead of losing 45, the two-shape ones lose most; where most of its wrong
    three-shape captions are in the wrong order (20 of 30), 'True' is right and 'False' wrong."""
    close = {**BOOK_BLIND, 3: 80 / 108}  # 78 - 80 = -2 of 108 captions: -1.9 points
    with pytest.raises(ExerciseFailed, match="suffers_most: your prediction"):
        ch05_without_positions(3, False, close)
    assert ch05_without_positions(2, False, close).passed
    assert "loses 0, 11, -2 points" in ch05_without_positions(2, False, close).message
    with pytest.raises(ExerciseFailed, match="mostly_wrong_order: your prediction"):
        ch05_without_positions(3, False, errors=(30, 20))
    verdict = ch05_without_positions(3, True, errors=(30, 20))
    assert verdict.passed and "20 of its 30 wrong three-shape captions" in verdict.message
    assert "mostly order errors" in verdict.message
    # half is not most: 15 of 30 in the wrong order make 'False' right
    assert ch05_without_positions(3, False, errors=(30, 15)).passed
    verdict = ch05_without_positions(3, False)
    assert "22 of its 79 wrong three-shape captions" in verdict.message
    assert "keeps each colour with its form" in verdict.message


def test_the_points_lost_are_measured_against_the_readers_own_chapter_model():
    """Reader s35, ch05, 1: the points lost are those against the chapter's model of the reader's
    run, not against the book's stored numbers. The reader's run: the chapter's model 86 of 88, 92 of
    104, 73 of 108 right; blind_model 86, 85, 40: 0, 7 and 31 points (against the book's 96 and 78:
    11 and 35)."""
    chapter = {1: 86 / 88, 2: 92 / 104, 3: 73 / 108}
    blind = {1: 86 / 88, 2: 85 / 104, 3: 40 / 108}
    verdict = ch05_without_positions(3, False, blind, chapter)
    assert verdict.passed and "loses 0, 7, 31 points" in verdict.message
    # reader s39, ch05, 1: the run without the setup cell's kernel settings, where the two-shape
    # captions gained 4 points and the three-shape ones lost 44: the same answers pass
    blind_unset = {1: 86 / 88, 2: 100 / 104, 3: 29 / 108}
    chapter_unset = {1: 84 / 88, 2: 96 / 104, 3: 77 / 108}
    verdict = ch05_without_positions(3, False, blind_unset, chapter_unset)
    assert verdict.passed and "loses -2, -4, 44 points" in verdict.message


def test_the_blind_model_is_checked_before_the_predictions():
    """blind_model must be a Captioner, without its embeddings, and trained; model, the chapter's
    captioner, another one, with its embeddings, and trained."""
    model = _blind_captioner(blind=False)
    with pytest.raises(ExerciseFailed, match="blind_model should be your trained Captioner"):
        ch05.check_without_positions(3, True, "blind_model", model)
    untrained = _blind_captioner()
    with pytest.raises(ExerciseFailed, match="model, the chapter's trained captioner, is not"):
        ch05.check_without_positions(3, True, untrained)  # outside a notebook, no model
    with pytest.raises(ExerciseFailed, match="model should be the chapter's trained Captioner"):
        ch05.check_without_positions(3, True, untrained, "model")
    with pytest.raises(ExerciseFailed, match="are the same captioner"):
        ch05.check_without_positions(3, True, untrained, untrained)
    with pytest.raises(ExerciseFailed, match="has lost its row and column embeddings"):
        ch05.check_without_positions(3, True, untrained, _blind_captioner())
    with pytest.raises(ExerciseFailed, match="0% of the one-shape captions"):
        ch05.check_without_positions(3, True, untrained, model)  # the real evaluation: a second
    with mock.patch.object(
        ch05, "exact_by_shapes", side_effect=lambda m: BOOK_BLIND if m is untrained else {1: 0.0}
    ):
        with pytest.raises(ExerciseFailed, match="model gets only 0%.*train it"):
            ch05.check_without_positions(3, True, untrained, model)
    with torch.no_grad():
        untrained.encoder.row_embedding.weight[0, 0] = 1.0
    with pytest.raises(ExerciseFailed, match="still has row and column embeddings"):
        ch05.check_without_positions(3, True, untrained, model)


def test_the_chapters_own_model_with_its_embeddings_zeroed_is_not_a_blind_model():
    """Reader s41b, ch05: a copy of the chapter's trained model with its row and column embeddings
    zeroed passed the check ("loses 6, 28, 45 points"), though it measures a model trained with
    positions and deprived of them, not one that learned without them."""
    import copy

    model = _blind_captioner(blind=False)
    zeroed = copy.deepcopy(model)
    with torch.no_grad():
        zeroed.encoder.row_embedding.weight.zero_()
        zeroed.encoder.col_embedding.weight.zero_()
    with pytest.raises(ExerciseFailed, match="has the chapter's trained weights.*fresh Captioner"):
        ch05.check_without_positions(3, False, zeroed, model)
    # a fresh captioner with the same shapes is not taken for a copy
    verdict = ch05_without_positions(3, False)
    assert verdict.passed


def test_the_chapters_model_is_read_from_the_notebook_when_not_passed():
    """The check cell passes the exercise's three names; the chapter's model is the one of the
    namespace the check cell runs in (``__main__``: a notebook's kernel, or the course grader's
    sandbox, which has no IPython)."""
    blind, model = _blind_captioner(), _blind_captioner(blind=False)
    chapter = {1: 86 / 88, 2: 92 / 104, 3: 73 / 108}
    scores = {id(blind): {1: 86 / 88, 2: 85 / 104, 3: 40 / 108}, id(model): chapter}
    cell = {"__name__": "__main__", "model": model, "blind": blind, "ch05": ch05}
    with _mock_ch05(scores, BOOK_ERRORS):
        exec("verdict = ch05.check_without_positions(3, False, blind)", cell)
        assert cell["verdict"].passed and "loses 0, 7, 31 points" in cell["verdict"].message
        del cell["model"]
        with pytest.raises(ExerciseFailed, match="model, the chapter's trained captioner"):
            exec("ch05.check_without_positions(3, False, blind)", cell)


def test_exact_by_shapes_is_the_chapters_measure():
    """The test images' captions by number of shapes: 88, 104 and 108 (the counts of the book's
    run in BOOK_CHAPTER); an untrained model gets none right."""
    from lib.data import shapes

    images = shapes.generate_images(300, seed=1)
    assert [sum(len(ex.items) == k for ex in images) for k in (1, 2, 3)] == [88, 104, 108]
    assert ch05.exact_by_shapes(_blind_captioner()) == {1: 0.0, 2: 0.0, 3: 0.0}
    # ... and all 108 three-shape captions wrong, none with the right shapes in another order
    assert ch05.three_shape_errors(_blind_captioner()) == (108, 0)


def test_later_prediction_checkers_accept_right_answers_and_say_what_is_missing():
    assert ch05_without_positions(3, False)
    assert ch05_without_positions(np.int64(3), np.bool_(False))
    assert ch06.check_second_layer(*RIGHT_CHANNELS)
    assert ch06.check_wider_entries(torch.tensor(16.0), "Unscaled")
    assert ch07.check_one_head(13_209.0, False, 0.197)
    assert ch07.check_one_head(13_209, False, {"both digits": 0.197, "previous digit": 1.0})
    # the experiment shows one head does not learn both lookups, not that it cannot
    assert "cannot" not in str(ch07.check_one_head(13_209, False, 0.197))
    with pytest.raises(ExerciseFailed, match="relation_weights") as wrong:
        ch07.check_one_head(13_209, True, 0.197)
    # the why is the exercise's own question: the message points to the measurement, the model
    # answer explains (first reader s11)
    assert "distribution" not in str(wrong.value) and "split" not in str(wrong.value)
    # graded only with both predictions: a lone answer, right or wrong, is neither confirmed nor
    # corrected (a lone True/False would give the answer away)
    for partial in [(None, False), (None, True), (13_209, None), (4224, None)]:
        verdict = ch07.check_one_head(*partial)
        assert verdict.status == "not attempted", partial
        assert "right" not in verdict.message and "no." not in verdict.message, partial
        assert "grades the two predictions together" in verdict.message
    assert "learns_task too" in ch07.check_one_head(13_209, None).message
    assert "n_params too" in ch07.check_one_head(None, True).message
    with pytest.raises(
        ExerciseFailed, match="True or False"
    ):  # a lone answer's type is still checked
        ch07.check_one_head(None, "no")
    assert ch08.check_small_base(585, False)  # by hand: within 1%
    assert ch09.check_parameter_counts(18.9e6, 12.6e6, 107.1e6)  # rounded to 0.1M: within 1%
    half = ch09.check_parameter_counts(18_944_000, None, None)
    assert half.status == "not attempted" and "loss_half_ff, total_n12" in half.message
    assert ch06.check_second_layer(RIGHT_CHANNELS[0], None).status == "not attempted"
    assert "last_wavelength" in ch08.check_small_base(None, False).message


@pytest.mark.parametrize(
    "check",
    [
        ch05.check_word_importance,
        ch06.check_incremental,
        ch07.check_separate_heads,
        ch08.check_sinusoidal,
        ch09.check_pre_ln,
    ],
    ids=lambda c: c.__name__,
)
@pytest.mark.parametrize("answer", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_later_checkers_report_any_wrong_type_or_shape_instead_of_crashing(check, answer):
    with pytest.raises(ExerciseFailed) as failure:
        check(answer)
    assert failure.value.message and "Traceback" not in failure.value.message


def test_checkers_leave_the_global_random_state_alone():
    """A checker runs inside the reader's notebook: it must not change what the reader's next random draw is."""
    right = [
        (ch05.check_word_importance, lambda w, s: s[..., None] * w),
        (ch06.check_incremental, _incremental()),
        (ch07.check_separate_heads, _separate_heads()),
        # exercise 1 of chapter 8 checks the table and the rotation M_k (issue 22)
        (lambda f: ch08.check_sinusoidal(lambda m, d: ch08._table(m, d), f), ch08._rotation),
        (ch09.check_pre_ln, _pre_ln("pre-LN")),
    ]
    for check, answer in right:
        torch.manual_seed(123)
        expected = torch.rand(3)
        torch.manual_seed(123)
        assert check(answer).passed
        assert torch.equal(torch.rand(3), expected), getattr(check, "__name__", check)


# --- the shared feedback helpers -------------------------------------------------------------------

from lib.exercises import CheckFailed, call, expect_bool, expect_tensor, fail_as_percentage  # noqa: E402


def test_expect_bool_takes_bools_and_with_words_yes_and_no():
    assert expect_bool(True, "x") is True and expect_bool(torch.tensor(False), "x") is False
    assert (
        expect_bool(" Yes", "x", words=True) is True
        and expect_bool("false", "x", words=True) is False
    )
    for wrong, words in (("yes", False), ("maybe", True), (1, False), (None, True)):
        with pytest.raises(CheckFailed, match="x should be True or False"):
            expect_bool(wrong, "x", words=words)


def test_fail_as_percentage_names_the_value():
    with pytest.raises(
        CheckFailed, match=r"share = 42 looks like a percentage\. Write it as a fraction of 1"
    ):
        fail_as_percentage(42.0, "share")


def test_call_adds_the_first_matching_hint_and_only_then():
    def broken(x):
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")

    hints = {"not in this message": "WRONG", "size 0": "Start at row 0.", "bounds": "SECOND"}
    with pytest.raises(CheckFailed, match=r"raised IndexError: .* Start at row 0\.$"):
        call(broken, torch.ones(2), name="f", case="c", hints=hints)
    with pytest.raises(CheckFailed) as plain_error:
        call(broken, torch.ones(2), name="f", case="c", hints={"absent": "WRONG"})
    assert "WRONG" not in str(plain_error.value)
    assert call(lambda x: x + 1, torch.ones(2), name="f", case="c", hints=hints).tolist() == [2, 2]


def test_expect_tensor_says_to_stack_a_list_of_tensors():
    with pytest.raises(
        CheckFailed,
        match=r"returned a list of tensors \(3 of them\); stack them into one tensor of shape \[3, 2\]",
    ):
        expect_tensor([torch.ones(2)] * 3, (3, 2), name="f", case="c")


def test_a_message_that_begins_with_a_variable_keeps_its_spelling():
    """Half-answered and wrong predictions name the reader's variable first; it is not capitalised
    ("identical is right", not "Identical is right"), in text, in the traceback and in HTML."""
    verdict = check_unit_length({"cosine", "dot"}, None)
    assert str(verdict).split(". ", 1)[1].startswith("identical is right")
    assert "</strong> identical is right" in verdict._repr_html_()
    assert "soft_limit is right" in str(check_duplicate_key((-0.3, -0.23), None))
    with pytest.raises(ExerciseFailed) as failure:
        check_key_strength(None, 1.0)
    assert failure.value._render_traceback_()[1].startswith("k2_limit: ")


def _messages_beginning_with_an_argument():
    """(module, checker node, first word, literal) for every fail/not_attempted message of every
    chapter's checkers that begins with one of the checker's arguments."""
    found = []
    for path in sorted((ROOT / "lib" / "exercises").glob("ch*.py")):
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            params = {a.arg for a in fn.args.args}
            for node in ast.walk(fn):
                if not (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) in ("fail", "not_attempted")
                    and node.args
                ):
                    continue
                arg = node.args[0]
                first = arg.values[0] if isinstance(arg, ast.JoinedStr) and arg.values else arg
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    word = re.match(r"[A-Za-z_]\w*", first.value)
                    if word and word.group() in params:
                        found.append((path.name, fn, word.group(), first.value))
    return found


def test_every_chapters_messages_keep_the_variable_names_they_begin_with():
    from lib.exercises import _sentence

    found = _messages_beginning_with_an_argument()
    assert len(found) > 50  # every chapter's prediction checkers
    for module, fn, word, text in found:
        # the message is rendered with the names of the @checker it fails (the checker itself, or
        # one that calls this step of it, such as _check_loss_half_ff)
        checkers = _checkers_reaching(module, fn.name)
        assert checkers, (
            f"{module}: no @checker reaches {fn.name}, so {word!r} would be capitalised"
        )
        for names in checkers:
            assert _sentence(text, names).startswith(word), (module, text)


def _checkers_reaching(module: str, name: str) -> list[tuple[str, ...]]:
    """The argument names of every @checker of lib/exercises/<module> that is, or calls (directly
    or through the module's other functions), the function ``name``."""
    tree = ast.parse((ROOT / "lib" / "exercises" / module).read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    calls = {
        f: {getattr(c.func, "id", None) for c in ast.walk(node) if isinstance(c, ast.Call)}
        for f, node in functions.items()
    }
    found = []
    for f, node in functions.items():
        if not any(
            isinstance(d, ast.Call) and getattr(d.func, "id", None) == "checker"
            for d in node.decorator_list
        ):
            continue
        reached, todo = set(), [f]
        while todo:
            g = todo.pop()
            if g not in reached and g in functions:
                reached.add(g)
                todo += calls[g]
        if name in reached:
            found.append(tuple(a.arg for a in node.args.args))
    return found


def test_numpy_numbers_and_arrays_are_accepted_like_tensors():
    np = pytest.importorskip("numpy")
    V = torch.tensor([-0.6, 1.04])  # v_2 of the chapter, to two decimals
    new = torch.tensor([0.0, -1.5])
    assert check_duplicate_key(((V + new) / 2).numpy(), np.int64(2))
    assert check_duplicate_key(np.array([[-0.3, -0.23]]), np.array(2))
    assert check_key_strength({"k1", "k2"}, np.float64(0.5))
    assert check_key_strength({"k1", "k2"}, np.array([0.5]))
    with pytest.raises(ExerciseFailed, match="a pair of two numbers"):
        check_duplicate_key(np.array([1.0, 2.0, 3.0]), 2)


def _divides_by_zero(w, gamma):
    empty = w.shape[0] - len(w)
    return w**gamma / (1 / empty)


def test_reader_errors_say_where_in_the_readers_code():
    with pytest.raises(ExerciseFailed) as failure:
        check_sharpen(_divides_by_zero)
    line = _divides_by_zero.__code__.co_firstlineno + 2
    assert (
        f"raised ZeroDivisionError: division by zero, at line {line} of your cell "
        "(`return w**gamma / (1 / empty)`)." in failure.value.message
    )


def test_an_error_below_the_checkers_own_wrapper_is_said_to_be_in_the_checker():
    """Chapter 18's checker calls the reader's function through a wrapper of its own: a line of that
    wrapper is not "line 237 of your cell" (lecturer review s22, M7)."""
    from lib.exercises.ch18 import check_running_max_and_sum

    def refused(x, block):
        raise RuntimeError("it called a function the exercise does not allow")

    with pytest.raises(ExerciseFailed) as failure:
        check_running_max_and_sum(refused)
    assert "does not allow, in the checker." in failure.value.message
    assert "of your cell" not in failure.value.message


def test_an_answer_that_never_returns_is_stopped_with_a_time_limit(monkeypatch):
    import time

    import lib.exercises

    def loops(w, gamma):
        while True:
            pass

    monkeypatch.setattr(lib.exercises, "CALL_TIME_LIMIT", 0.5)
    start = time.monotonic()
    with pytest.raises(ExerciseFailed) as failure:
        check_sharpen(loops)
    assert time.monotonic() - start < 10
    assert "your function `sharpen` did not finish in 0.5 s" in failure.value.message
    # the timer is off again: a right answer afterwards runs to the end
    assert check_sharpen(lambda w, g: torch.softmax(g * w.log(), dim=-1)).passed


def test_an_answer_cell_that_crashed_is_reported_as_a_crash_not_as_not_attempted():
    """In a notebook (an IPython shell), the check after an answer cell that stopped with an error
    names the error and its line instead of "not attempted". In a subprocess: the shell is global."""
    program = r"""
from IPython.core.interactiveshell import InteractiveShell
from lib.exercises import ExerciseFailed

shell = InteractiveShell.instance()
shell.run_cell("from lib.exercises.ch02 import check_duplicate_key")
shell.run_cell("soft_limit, hard_key = None, None\nhard_key = 2\nsoft_limit = (1 / 0, 0.0)")
result = shell.run_cell("check_duplicate_key(soft_limit, None)")
assert isinstance(result.error_in_exec, ExerciseFailed), result.error_in_exec
print("MSG:", result.error_in_exec.message)
shell.run_cell("soft_limit, hard_key = None, None\nraise KeyboardInterrupt")  # a cell stopped by a timeout
result = shell.run_cell("check_duplicate_key(soft_limit, None)")
print("MSG:", result.error_in_exec.message)
shell.run_cell("soft_limit, hard_key = None, None")  # a cell that ran: "not attempted" as before
result = shell.run_cell("verdict = check_duplicate_key(soft_limit, hard_key)")
print("MSG:", shell.user_ns["verdict"].status)
"""
    import os
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    lines = [ln[5:] for ln in done.stdout.splitlines() if ln.startswith("MSG: ")]
    assert len(lines) == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert lines[0] == (
        "the cell above stopped with ZeroDivisionError at line 3 (`soft_limit = (1 / 0, 0.0)`): "
        "division by zero, so write your two predictions (soft_limit and hard_key) in the cell "
        "above, then run this cell again."
    ), done.stdout[-2000:] + done.stderr[-2000:]
    assert lines[1].startswith(
        "the cell above was interrupted at line 2 (`raise KeyboardInterrupt`) before it finished "
        "(when graded: it ran past the time limit of a cell; does a loop never end?), so write"
    ), lines[1]
    assert lines[2] == "not attempted"


def _checker_constants_read(source: str, bound: dict[str, str]) -> list[str]:
    """What ``source`` takes from the checkers' package: an import of ``lib.exercises``, or an
    UPPER_CASE name of one of its modules (``ch04.LUONG_NE_LEFT``, or the name imported alone).
    ``bound``: the names the chapter's cells bound to the package (name -> what it is)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(
            a.name.startswith("lib.exercises") for a in node.names
        ):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and (
            (node.module or "").startswith("lib.exercises")
            or (node.module == "lib" and any(a.name == "exercises" for a in node.names))
        ):
            found.append(ast.unparse(node))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.isupper()
            and isinstance(node.value, ast.Name)
            and bound.get(node.value.id) == "module"
        ):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Name) and bound.get(node.id) == "constant":
            found.append(node.id)
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem[:2])
def test_no_worked_solution_reads_the_checkers_constants(path):
    """The teachers' page says no worked solution takes a value from the checkers' package, as an
    answer that does gets 0 and "needs manual review" in a graded course (lecturer review s16, M2:
    chapter 4's imported lib.exercises and compared with ``ch04.LUONG_*``; a student who copied it
    kept the point, another who wrote the same constants lost it; chapters 11, 12, 13 and 15 too,
    some in the hidden check of the model answer's numbers, which the course puts into the worked
    solution). A worked solution compares with the numbers it states, or computes them."""
    cells = nbformat.read(path, as_version=4).cells
    bound: dict[str, str] = {}
    for cell in cells:  # what the chapter's cells bind to the package
        if cell.cell_type != "code":
            continue
        with contextlib.suppress(SyntaxError):
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lib"):
                    for a in node.names:
                        if (node.module or "").startswith("lib.exercises") and a.name.isupper():
                            bound[a.asname or a.name] = "constant"
                        elif node.module in ("lib", "lib.exercises"):
                            bound[a.asname or a.name] = "module"
    found = {}
    for cell in cells:
        if cell.cell_type == "code" and "solution" in tags(cell):
            read = _checker_constants_read(cell.source, bound)
            if read:
                found[cell.get("id")] = read
    assert not found, found


def test_an_error_raised_in_the_graders_own_code_is_said_to_be_in_the_grader():
    """The course grader's stand-in for a reader's module is code of tools/grade_course.py; a refusal
    it raises is not "at line 1958 of your cell" (lecturer review s24, M2)."""
    from lib.exercises import _where

    space: dict = {}
    source = "def forward(x):\n    raise RuntimeError('it called a forbidden function')\n"
    grader = Path(__file__).resolve().parents[1] / "tools" / "grade_course.py"
    exec(compile(source, str(grader), "exec"), space)
    try:
        space["forward"](1)
    except RuntimeError as e:
        error = e
    assert _where(error, space["forward"]) == ", in the grader"


def test_an_error_the_grader_brings_back_from_the_sandbox_names_the_readers_line():
    """Lecturer review s29, m2: a module whose forward raised in the sandbox was "raised
    RuntimeError, in the grader": the grader raises the error again at the line of the reader's
    cell it came from (``<answer ...>``, in linecache), and the feedback names that line."""
    import linecache

    from lib.exercises import _where

    cell = "<answer ex2_answer>"
    linecache.cache[cell] = (0, None, ["x = 1\n", "return torch.cat(heads, dim=1)\n"], cell)
    space: dict = {}
    source = "def forward(x):\n    raise_it()\n"
    grader = Path(__file__).resolve().parents[1] / "tools" / "grade_course.py"
    exec(compile(source, str(grader), "exec"), space)
    space["raise_it"] = lambda: exec(
        compile("\nraise RuntimeError('sizes of tensors must match')", cell, "exec"), {}
    )
    try:
        space["forward"](1)
    except RuntimeError as e:
        error = e
    assert _where(error, space["forward"]) == (
        ", at line 2 of your cell (`return torch.cat(heads, dim=1)`)"
    )


def test_chapter_5s_check_cells_hand_the_chapters_model_to_the_checker():
    """The course's grader calls check_without_positions in its own process, with the check cell's
    arguments read from the sandbox: a model the checker looked up in the notebook's namespace was
    missing there, and every student's verdict said "model ... is not defined" (lecturer review s36,
    M4). The check cells pass it."""
    path = ROOT / "notebooks" / "05_attention_beyond_translation.ipynb"
    calls = [
        ast.parse(cell.source).body[-1].value
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code" and "check_without_positions(" in cell.source
    ]
    assert len(calls) == 2
    for checked in calls:
        assert [ast.unparse(a) for a in checked.args] == [
            "suffers_most",
            "mostly_wrong_order",
            "blind_model",
            "model",
        ]
