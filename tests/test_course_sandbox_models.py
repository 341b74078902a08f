"""Checkers whose cases are models, graded by tools/grade_course.py (issue 36): chapter 9's
``pre_ln_layer`` (the checker's layers cross to the sandbox pickled, each refusing its own forward) and
chapter 11's ``backward_agreement`` (the student passes the chapter's backward RNNLM, which comes back
to the grader as data and is rebuilt there as an RNNLM with its weights and settings, to run).

For each chapter: an honest student (the worked solutions) gets full marks, and a student with one
wrong answer gets 0 on it with the checker's own diagnosis, which needs the model on the other side
(the refusal of the layer's forward; the mistake recomputed from the student's model). About 3
minutes on the book's 2-core machine, shared: the two chapters' code runs once each in the sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.test_course_sandbox import BIN, POINTS, _gradebook_scores, _solutions, _submit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CH9, CH11 = "09_the_transformer", "11_language_models"
# {student: (chapter, answer cell, source, words of the message)}
WRONG = {
    "calls_the_layer": (
        CH9,
        "ex1_answer",
        """
def pre_ln_layer(layer, x):
    return layer(x)[0]
""",
        "not to call the layer itself",
    ),
    "unnormalised_share": (
        CH11,
        "ex2_answer",
        """
backward = models["backward"]
words = "the keys that the man found are old .".split()
ids_ = torch.tensor([vocab.encode(words, add_bos=True, add_eos=True)])
with torch.no_grad():
    p = backward(ids_).logits[0, words.index("old") + 1].softmax(-1)
plural_share = p[vocab.stoi["are"]].item() + p[vocab.stoi["were"]].item()
same_for_singular = True
""",
        "P(are) + P(were) alone",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import PyFileConfigLoader

    root = tmp_path_factory.mktemp("course")
    make_course.write_course(root, ["09", "11"], predictions_at_collection=True)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    path, here = os.environ["PATH"], os.getcwd()
    os.environ["PATH"] = f"{BIN}{os.pathsep}{path}"
    try:
        os.chdir(root)
        api = NbGraderAPI(CourseDirectory(config=config), config=config)
        for chapter in (CH9, CH11):
            result = api.generate_assignment(chapter, force=True)
            assert result["success"], result.get("log", "")[-3000:]
    finally:
        os.environ["PATH"], _ = path, os.chdir(here)
    expected = {}
    for chapter in (CH9, CH11):
        source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        honest = _solutions(source)
        tests = [
            c.metadata["nbgrader"]["grade_id"]
            for c in source.cells
            if c.metadata.get("nbgrader", {}).get("grade")
            and c.metadata["nbgrader"]["grade_id"].endswith("_test")
        ]
        _submit(root, "honest", chapter, honest)
        expected[("honest", chapter)] = dict.fromkeys(tests, POINTS)
        for student, (where, answer, text, _) in WRONG.items():
            if where == chapter:
                _submit(root, student, chapter, {**honest, answer: text})
                scores = dict.fromkeys(tests, POINTS)
                scores[answer.replace("_answer", "_test")] = 0
                expected[(student, chapter)] = scores
    messages = {}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{BIN}{os.pathsep}{path}"}
    for chapter in (CH9, CH11):
        out = root / f"{chapter}.json"
        run = subprocess.run(
            [sys.executable, str(ROOT / "tools" / "grade_course.py"), chapter]
            + ["--course", str(root), "--json", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert "did not run in the sandbox" not in run.stderr, run.stderr[-3000:]
        for r in json.loads(out.read_text()):
            messages[(r["student"], chapter, r["test"])] = r["message"]
    return root, expected, messages


@pytest.mark.parametrize("chapter", [CH9, CH11])
def test_honest_student_gets_full_marks(graded, chapter):
    root, expected, messages = graded
    scores = _gradebook_scores(root, "honest", chapter)
    wrong = {k: messages[("honest", chapter, k)] for k, v in scores.items() if v != POINTS}
    assert not wrong and scores == expected[("honest", chapter)], wrong


@pytest.mark.parametrize("student", sorted(WRONG))
def test_wrong_answer_gets_zero_with_the_checkers_diagnosis(graded, student):
    root, expected, messages = graded
    chapter, answer, _, words = WRONG[student]
    assert _gradebook_scores(root, student, chapter) == expected[(student, chapter)], messages
    message = messages[(student, chapter, answer.replace("_answer", "_test"))]
    assert words in message, message
