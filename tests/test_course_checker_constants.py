"""An answer that takes its value from the checkers' package gets 0 and "needs manual review"
(lecturer review r4, problem 3): chapter 13's predictions are public constants of
``lib.exercises.ch13`` (``GPT3_PARAMS``, ``FIRST_WORD_ACCURACY``), which one import gave full marks.
Unit level: the grader's reading of the answer cells and its verdict, without nbgrader."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import grade_course  # noqa: E402

IMPORTED = [
    "from lib.exercises import ch13 as _a\ngpt3_params = _a.GPT3_PARAMS\n"
    "embedding_share = _a.EMBEDDING_SHARE",
    "from lib.exercises.ch13 import FIRST_WORD_ACCURACY as f\nfirst_word_accuracy = f",
    "import lib.exercises.ch13\nfirst_word_accuracy = lib.exercises.ch13.FIRST_WORD_ACCURACY",
    "from lib import exercises\ngpt3_params = exercises.ch13.GPT3_PARAMS",
    "from lib.exercises import ch13\ngpt3_params = getattr(ch13, 'GPT3_' + 'PARAMS')",
    "import importlib\nm = importlib.import_module('lib.' + 'exer' + 'cises.ch13')",
    "gpt3_params = sys.modules['lib.exercises.ch13'].GPT3_PARAMS",
    # a checker's private function computes the values it compares with (lecturer review s9)
    "from lib.exercises import ch02\nvalues = ch02._values()\nnew_item = values[6]",
    "from lib.exercises.ch02 import _values\nv = _values()",
    # the package's source read as text, the path not spelled out (lecturer review s11, S2)
    "import re, torch\nsrc = open(torch.__file__[:-17] + 'li' + 'b/exer' + 'cises/ch13.py').read()\n"
    "gpt3_params = int(re.search(r'GPT3_PARAMS = ([0-9_]+)', src)[1])",
    "from pathlib import Path\nsrc = next(Path('/').rglob('ch13.py')).read_text()",
    "import glob\nsrc = [p for p in glob.glob('/**/ch1?.py', recursive=True)]",
    "import subprocess\nout = subprocess.run(['grep', '-r', 'GPT3_PARAMS', '/'], capture_output=True)",
    "import lib.viz as v\nconstants = v.attention_heatmap.__globals__",
    "gpt3_params = eval('__imp' + 'ort__(\"lib.exer\" \"cises.ch13\").GPT3_PARAMS')",
    "import inspect, lib.viz\ngpt3_params = inspect.getsource(lib.viz)",
    # a checker in scope from the chapter's import cell, called to try values (lecturer review s13)
    "for _x in [(0.0, -1.5), (0.35, 0.6)]:\n    for _k in range(7):\n        try:\n"
    "            if check_duplicate_key(_x, _k).passed:\n                soft_limit, hard_key = _x, _k\n"
    "        except Exception:\n            pass",
    "for _c in 'abc':\n    if check_first_word(_c, 0.478).passed:\n        first_word_prediction = _c",
    # a function of the package that returns the answers (lecturer review s15, S1), or computes the
    # checker's reference, whatever it is called
    "from lib.exercises.ch17 import _long_context_answers as _lca\n_a = _lca()\n"
    "qwen3_cache_gib = _a['qwen3_cache_gib']",
    "from lib.exercises import ch16\nalbert_large = ch16.albert_counts()['albert_large']",
    "from lib.exercises.ch17 import rope_reference\n\n\ndef rope_halves(x, positions, theta):\n"
    "    return rope_reference(x, positions, theta).float()",
    # the checker's source run anew by runpy, its name computed (lecturer review s15, S2)
    "import runpy as _r\n_a = _r.run_module('lib.' + 'exer' + 'cises.ch17')['_long_context_answers']()",
    "from runpy import run_path\nns = run_path(p)",
    "name = f\"{'li'}b.{'exer'}cises.ch17\"",
    "name = '.'.join(['lib', 'exer' + 'cises', 'ch17'])",
    # sys under another name, and an attribute taken by a computed name (lecturer review s16, S1)
    "import sys as _s\n"
    "_ch = [v for k, v in list(_s.modules.items()) if k.endswith('s.ch' + '17')][0]\n"
    "_ans = getattr(_ch, '_long_context' + '_answers')()\n"
    "qwen3_cache_gib = _ans['qwen3_cache_gib']",
    "import sys\n_m = sys\nx = _m.modules",
    "from sys import modules as _m\nx = _m",
    "import sys as _s\nx = getattr(_s, 'mod' + 'ules')",
    "import sys as _s\nx = getattr(_s, 'modules')",
    "x = getattr(_ch, '_long_context' + '_answers')()",
    "from lib import viz\nname = 'attention_heatmap'\nf = getattr(viz, name)",
    "x = getattr(obj, '_long_context_answers')()",
]
OWN = [
    "gpt3_params = 174_604_259_328\nembedding_share = 0.00368",  # typed: a prediction may be
    "from lib.exercises.ch06 import hand_made_model\nembedding, *rest = hand_made_model()",
    "from lib.exercises.ch09 import parameter_variant\nvocab = parameter_variant()['vocab']",
    "name = 'lib.' + 'attention'",  # a computed name of another module is no import yet
    "from lib.exercises import ch13\nx = 1\nassert x != ch13.GPT3_PARAMS",  # the solutions' self-check
    "import sys\nprint(sys.version_info)",  # sys itself, without its modules
    "for key in ('d_model', 'n_heads'):\n    print(getattr(config, key))",  # an object's fields
    "name = getattr(f, '__name__')",
]


@pytest.mark.parametrize("source", IMPORTED)
def test_an_answer_from_the_checkers_constants_is_found(source):
    assert grade_course.checker_module_use(source)


@pytest.mark.parametrize("source", OWN)
def test_an_answer_of_its_own_is_not(source):
    assert grade_course.checker_module_use(source) is None


def _exercise():
    cells = [
        {"answer": "ex2_answer", "filename": "<ex2>", "optional": True},
        {"answer": "ex3_answer", "filename": "<ex3>", "optional": False},
    ]
    return grade_course.Exercise(
        "ex3_test", 3, 2.0, "lib.exercises.ch13", "check_first_word", [], cells
    )


def test_the_import_gets_0_and_needs_manual_review():
    answers = {
        "ex2_answer": "from lib.exercises import ch13 as _a\ngpt3_params = _a.GPT3_PARAMS",
        # the import in the earlier answer cell, the constant in this one
        "ex3_answer": "first_word_prediction = _a.FIRST_WORD_RIGHT_CHOICE\n"
        "first_word_accuracy = _a.FIRST_WORD_ACCURACY",
    }
    passed = grade_course.Result("s", "ex3_test", 2.0, 2.0, "✓ read the first token: passed", 0.1)
    result = grade_course.checker_review(passed, _exercise(), answers)
    assert result.score == 0 and result.review
    assert result.message.startswith("needs manual review: the answer cell uses `_a.FIRST_WORD_")
    assert "lib.exercises" in result.message and "2 of 2 points without it" in result.message


def test_a_worked_out_answer_keeps_its_points():
    answers = {
        "ex2_answer": "",
        "ex3_answer": "first_word_prediction = 'c'\nfirst_word_accuracy = 0.478",
    }
    passed = grade_course.Result("s", "ex3_test", 2.0, 2.0, "✓ read the first token: passed", 0.1)
    result = grade_course.checker_review(passed, _exercise(), answers)
    assert result.score == 2 and not result.review


def test_no_worked_solution_of_the_course_is_flagged(tmp_path):
    import make_course
    import nbformat

    make_course.write_course(tmp_path / "c", [])  # every chapter
    answers = 0
    for path in sorted((tmp_path / "c" / "source").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if cell.cell_type == "code" and "answer" in grade_id:
                answers += 1
                assert grade_course.checker_module_use(cell.source) is None, (path.name, grade_id)
    assert answers >= 40


def test_no_public_function_of_the_checkers_returns_a_prediction_without_a_flag():
    """Every public function of a chapter's checker module other than its checkers is one the chapter's
    own cells call (grade_course.TEMPLATE_FUNCTIONS) or is flagged when an answer cell calls it
    (lecturer review s15, S1: chapter 17's ``long_context_answers()`` returned the three answers)."""
    import importlib
    import types

    for chapter in range(1, 19):
        module = importlib.import_module(f"lib.exercises.ch{chapter:02d}")
        for name, value in vars(module).items():
            if (
                name.startswith("_")
                or name.startswith("check_")
                or not isinstance(value, types.FunctionType)
                or value.__module__ != module.__name__
            ):
                continue
            source = f"from {module.__name__} import {name} as f\nx = f()"
            found = grade_course.checker_module_use(source)
            assert (found is None) == (name in grade_course.TEMPLATE_FUNCTIONS), (chapter, name)
    from lib.exercises import ch17

    assert not hasattr(ch17, "long_context_answers")


def test_the_sandbox_refuses_the_checkers_public_references_too():
    """A student's function that calls the checker's reference (chapter 17's public
    ``rope_reference``) is refused in the sandbox as a private one is; the checkers and the functions
    the chapter's cells call are not (lecturer review s15, S1)."""
    from lib.exercises import ch06, ch17

    refused = {target for target, _, _ in grade_course._checker_own_refusals(ch17)}
    assert {"lib.exercises.ch17.rope_reference", "lib.exercises.ch17.ffn_reference"} <= refused
    assert "lib.exercises.ch17._long_context_answers" in refused
    assert not any(t.rpartition(".")[2].startswith("check_") for t in refused)
    refused = {target for target, _, _ in grade_course._checker_own_refusals(ch06)}
    assert "lib.exercises.ch06.hand_made_model" not in refused


def test_a_failed_computed_name_import_is_listed_for_review_with_its_0():
    """Lecturer review s15, M3: chapter 14's importlib.import_module("lib." + "pretraining" + "_data")
    got a plain 0 with no review flag; it is listed for review, its 0 kept."""
    answers = {
        "ex2_answer": "",
        "ex3_answer": "import importlib\nm = importlib.import_module('lib.' + 'pretraining' + '_data')",
    }
    failed = grade_course.Result("s", "ex3_test", 2.0, 0.0, "✗ it called mask_tokens", 0.1)
    result = grade_course.checker_review(failed, _exercise(), answers)
    assert result.score == 0 and result.review
    assert result.message.startswith("needs manual review: the answer cell uses `import importlib`")
    assert "✗ it called mask_tokens" in result.message
