"""Practice and grading kept apart (issue 36): the package students install holds the checkers with their
practice cases and references that give no solution away; the grader's cases (their seeds) and its
reference solutions are in grading/, which the package does not ship, copied by tools/make_course.py into
the course's folder and put into the checkers by tools/grade_course.py when it grades.

The grades themselves are those of tests/test_course_sandbox.py, whose class is graded with this
material (honest students full marks, every cheat 0); here: what the wheel holds, what a student's
``show_source`` shows, and that the grader's cases are the book's hidden cases (or the course's own,
with ``--private-cases``), never the practice ones.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from lib.exercises import ExerciseFailed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import grade_course  # noqa: E402
import make_course  # noqa: E402

GRADED = sorted(p.stem for p in (ROOT / "grading").glob("ch[0-9][0-9].py"))


def _references() -> dict[str, str]:
    """{"chNN._name": source} of every reference solution in grading/."""
    found = {}
    for chapter in GRADED:
        spec = importlib.util.spec_from_file_location(
            f"_grading_{chapter}", ROOT / "grading" / f"{chapter}.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, function in module.REFERENCES.items():
            found[f"{chapter}.{name}"] = inspect.getsource(function)
    return found


def _body(source: str) -> list[str]:
    """The code lines of a function, without its def line and docstring."""
    lines = [line.strip() for line in source.splitlines()[1:]]
    return [
        line for line in lines if line and not line.startswith(('"""', "#")) and '"""' not in line
    ]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel pip builds from the repository (what the Colab cell's ``pip install git+...`` gets)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in ["pyproject.toml", "README.md", "LICENSE", "lib", "grading"]:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(path, source / name)
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(work / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (built,) = (work / "dist").glob("*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_no_grading_material(wheel):
    names = wheel.namelist()
    assert any(n == "lib/exercises/ch02.py" for n in names)
    assert not [n for n in names if n.startswith("grading/") or "/grading/" in n]
    texts = {n: wheel.read(n).decode("utf-8", "replace") for n in names if n.endswith(".py")}
    references = _references()
    assert "ch02._sharpened" in references
    for name, source in references.items():
        for line in _body(source):
            holders = [n for n, text in texts.items() if line in text]
            assert not holders, f"{name}'s line {line!r} is in the wheel's {holders}"


def test_a_students_show_source_of_the_reference_gives_no_solution():
    """Issue 36's example: ``viz.show_source('lib.exercises.ch02._sharpened')`` printed chapter 2's
    solution (a softmax of gamma * log w). In the package it is the statement's formula, computed
    exactly in rational numbers, which is no way to compute it in floating point."""
    from lib import viz

    shown = viz.show_source("lib.exercises.ch02._sharpened").text
    assert "Fraction" in shown
    assert "softmax" not in shown and "log" not in shown and "amax" not in shown


def test_practice_reference_equals_the_graders_where_floats_do_not_underflow():
    """The practice reference is right: equal to the grader's on the practice cases, gamma = 300 on 32
    weights near 1/32 included (where w**gamma underflows in float64)."""
    from lib.exercises import ch02

    spec = importlib.util.spec_from_file_location("_g02", ROOT / "grading" / "ch02.py")
    grading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grading)
    for case, w, gamma in ch02._sharpen_cases():
        exact, graders = ch02._sharpened(w, gamma), grading._sharpened(w, gamma)
        assert (exact - graders).abs().max() < 1e-12, case


@pytest.fixture
def restored():
    """The checker modules as they were (install_grading changes them in this process)."""
    modules = [importlib.import_module(f"lib.exercises.{c}") for c in GRADED]
    saved = [
        (m, dict(m.SEEDS), {n: getattr(m, n) for n in dir(m) if n.startswith("_")}) for m in modules
    ]
    yield
    for module, seeds, names in saved:
        module.SEEDS.clear()
        module.SEEDS.update(seeds)
        for name, value in names.items():
            setattr(module, name, value)


def _leaves(value) -> list:
    """The numbers, strings and tensors of a case, those of its nested tuples and modules (chapter
    17's ffn_sublayer's weights, chapter 9's layers) included."""
    if isinstance(value, torch.nn.Module):
        value = list(value.state_dict().values())
    if isinstance(value, (torch.Tensor, str, int, float)):
        return [value]
    if isinstance(value, dict):
        value = list(value.items())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _leaves(v)]
    return []


def _case_functions(module) -> list:
    """A checker module's functions that draw its cases (``_cases``, ``_rope_cases``,
    ``_hidden_case``, ``_embed_batches``...), those that take no argument."""
    found = []
    for name in dir(module):
        function = getattr(module, name)
        if not (name.startswith("_") and callable(function)):
            continue
        if not (name.endswith(("_cases", "_case")) or name == "_embed_batches"):
            continue
        parameters = inspect.signature(function).parameters.values()
        if all(p.default is not p.empty for p in parameters):
            found.append(function)
    return found


def _cases(module) -> list[list]:
    return [_leaves(f()) for f in _case_functions(module)]


def _same(a, b) -> bool:
    return all(
        len(x) == len(y)
        and all(
            type(s) is type(t)
            and (
                s.shape == t.shape and torch.equal(s, t) if isinstance(s, torch.Tensor) else s == t
            )
            for s, t in zip(x, y)
        )
        for x, y in zip(a, b)
    )


@pytest.mark.parametrize("private", [False, True], ids=["book seeds", "private cases"])
def test_the_grader_uses_the_courses_cases_and_references(tmp_path, restored, private):
    from lib.exercises import ch02

    practice = {c: _cases(importlib.import_module(f"lib.exercises.{c}")) for c in GRADED}
    chapters = [p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")]
    written = make_course.write_grading(
        tmp_path / "grading", [c for c in chapters if f"ch{c[:2]}" in GRADED], private
    )
    assert sorted(p.stem for p in written) == GRADED
    for chapter in GRADED:
        module_name = f"lib.exercises.{chapter}"
        said = grade_course.install_grading(tmp_path / "grading", module_name)
        assert "the grader's cases" in said, said
        module = importlib.import_module(module_name)
        assert not _same(_cases(module), practice[chapter]), chapter  # never the practice cases
    assert "Fraction" not in inspect.getsource(ch02._sharpened)  # the grader's reference
    if not private:  # the book's hidden cases: the grades of tests/test_course_sandbox.py
        assert ch02.SEEDS == {"sharpen": 7}

    def sharpen(w, gamma):  # a right answer, and the usual wrong one
        return torch.softmax(gamma * torch.log(w), dim=-1)

    def naive(w, gamma):
        return w**gamma / (w**gamma).sum(dim=-1, keepdim=True)

    assert ch02.check_sharpen(sharpen).passed
    with pytest.raises(Exception, match="gamma = 300"):
        ch02.check_sharpen(naive)


def test_private_cases_are_kept_when_the_course_is_written_again(tmp_path):
    """make_course.py --private-cases over a course that has them keeps its seeds (a regrade uses the
    same cases); without the option it refuses rather than put the book's public seeds back."""
    chapter = next(p.stem for p in (ROOT / "notebooks").glob("02_*.ipynb"))
    folder = tmp_path / "grading"
    (first,) = make_course.write_grading(folder, [chapter], private_cases=True)
    seeds = make_course.private_seeds(first)
    assert seeds and set(seeds) == {"sharpen"}
    make_course.write_grading(folder, [chapter], private_cases=True)
    assert make_course.private_seeds(first) == seeds
    with pytest.raises(SystemExit, match="--private-cases"):
        make_course.write_grading(folder, [chapter])
    with pytest.raises(SystemExit, match="private grading cases"):
        make_course.write_course(tmp_path, ["02"])
    assert make_course.private_seeds(first) == seeds
    # a graded course written again (make course GRADED=1): the same seeds; its exchange is sticky
    make_course.write_course(tmp_path, ["02"], private_cases=True, predictions_at_collection=True)
    assert make_course.private_seeds(first) == seeds
    assert (tmp_path / "exchange").stat().st_mode & 0o7777 == 0o1777
    # chapter 2's exercise 2 asks "why, in one line of algebra?": its rubric names that part
    source = (tmp_path / "source" / chapter / f"{chapter}.ipynb").read_text()
    assert "They agree: why, in one line of algebra?" in source
    assert "the explanation the exercise asks for" not in source


def test_the_grader_says_when_a_course_has_no_grading_material(tmp_path, restored):
    said = grade_course.install_grading(tmp_path, "lib.exercises.ch02")
    assert "practice cases" in said


def test_grading_material_that_does_not_fit_its_checker_is_refused(tmp_path, restored):
    (tmp_path / "ch02.py").write_text("SEEDS = {'sharpen': 1, 'sharpened': 2}\nREFERENCES = {}\n")
    with pytest.raises(ValueError, match="sharpened"):
        grade_course.install_grading(tmp_path, "lib.exercises.ch02")


# --- a table of the practice cases' answers gets no points (lecturer review r3, problem 2) ---------

# The implement exercises whose cases the grader draws from grading/chNN.py's SEEDS: (chapter, checker,
# the function the worked solution defines). A student who records what a right function returns on
# the practice cases (the package's) and submits those answers as a table passes in their notebook,
# and must fail on the grader's cases.
TABULATED = [
    ("02", "check_sharpen", "sharpen"),
    ("03", "check_projected_as_general", "projected_as_general"),
    ("03", "check_masked_softmax", "my_masked_softmax"),
    ("06", "check_incremental", "incremental_outputs"),
    ("17", "check_rope_halves", "rope_halves"),
    ("17", "check_expand_kv", "expand_kv"),
    ("17", "check_ffn_sublayer", "ffn_sublayer"),
    ("18", "check_running_max_and_sum", "running_max_and_sum"),
    ("18", "check_alibi_slopes", "slopes_for"),
    ("18", "check_tile_mask", "tile_mask"),
    ("04", "check_local_m", "local_m_weights"),
    ("05", "check_word_importance", "word_importance"),
    ("07", "check_separate_heads", "separate_heads_from"),
    ("09", "check_pre_ln", "pre_ln_layer"),
    ("12", "check_bilm_loss", "bilm_loss"),
    ("13", "check_top_p_filter", "top_p_filter"),
    ("14", "check_mask_for_mlm", "mask_for_mlm"),
    ("16", "check_discriminator_loss", "discriminator_loss"),
    ("01", "check_loss_by_length", "loss_by_length"),
    ("08", "check_sinusoidal", "my_sinusoidal,my_rotation"),
    ("10", "check_replay", "replay"),
    ("11", "check_interpolation", "interpolated_perplexity"),
    ("15", "check_embed", "embed"),
]


def _key(args: tuple) -> bytes:
    """The arguments of a call as bytes: what a table of the practice cases is looked up by."""
    parts = []
    for arg in args:
        if isinstance(arg, torch.nn.Module) and sum(p.numel() for p in arg.parameters()) < 10**6:
            arg = list(arg.state_dict().values())  # a case's own layer (chapters 7 and 9)
        if isinstance(arg, (list, tuple)):
            parts.append(_key(tuple(arg)))
        elif isinstance(arg, torch.Tensor):
            parts.append(f"{arg.dtype}{tuple(arg.shape)}".encode() + arg.detach().numpy().tobytes())
        elif isinstance(arg, (str, int, float, bool, type(None))):
            parts.append(repr(arg).encode())
        else:  # the same for every case (chapter 15's pretrained model and tokenizer)
            parts.append(type(arg).__name__.encode())
    return b"|".join(parts)


def _blockwise(args: tuple) -> tuple:
    """Chapter 18's running_max_and_sum refuses an answer that reads x whole, or twice: a table of
    its cases reads x once, one block at a time, as the checker asks (a plain copy of x)."""
    x, block = args
    blocks = [torch.tensor(x[s : s + block].tolist()) for s in range(0, len(x), block)]
    return torch.cat(blocks), block


def _blockwise_key(args: tuple) -> bytes:
    return _key(_blockwise(args))


def _tables_of(answers: list, check, key) -> list[dict[bytes, list]]:
    """What each of ``answers`` returns on each case ``check`` calls it with, call after call (the
    practice cases, as a student's notebook runs them)."""
    tables: list[dict[bytes, list]] = [{} for _ in answers]

    def recording(answer, table):
        def run(*args):
            if key is _blockwise_key:  # x read once, block after block, as the answer would
                args = _blockwise(args)
            result = answer(*args)
            table.setdefault(_key(args), []).append(result)
            return result

        return run

    assert check(*map(recording, answers, tables)).passed
    return tables


def _tabulated(table: dict[bytes, list], key):
    calls: dict[bytes, int] = {}

    def answer(*args):  # a lookup table: a case it has not seen raises KeyError
        case = key(args)  # once: chapter 18's key reads x, which its checker lets be read once
        results = table[case]
        # the same case called again gets the next result recorded: chapter 14's checker calls
        # mask_for_mlm twice on the same ids and refuses the same masks twice (a seed set inside)
        n = calls[case] = calls.get(case, -1) + 1
        return results[n % len(results)]

    return answer


@pytest.mark.parametrize(
    "chapter, checker, names", TABULATED, ids=[f"ch{c}.{n.split(',')[0]}" for c, _, n in TABULATED]
)
def test_a_table_of_the_practice_cases_fails_on_the_graders_cases(
    tmp_path, restored, chapter, checker, names
):
    """The worked solution passes on the grader's cases (the book's hidden seeds, installed as
    tools/grade_course.py installs them), and a table of its answers on the practice cases, which
    passes in the student's notebook, does not."""
    from tests.test_exercises import solution_function

    notebook = next((ROOT / "notebooks").glob(f"{chapter}_*.ipynb"))
    module = importlib.import_module(f"lib.exercises.ch{chapter}")
    check = getattr(module, checker)
    references = [solution_function(notebook, checker, name) for name in names.split(",")]
    key = _blockwise_key if names == "running_max_and_sum" else _key
    tables = [_tabulated(table, key) for table in _tables_of(references, check, key)]
    assert check(*tables).passed  # in the student's notebook, the table passes
    make_course.write_grading(tmp_path / "grading", [notebook.stem])
    said = grade_course.install_grading(tmp_path / "grading", module.__name__)
    assert "the grader's cases" in said, said
    assert check(*references).passed
    with pytest.raises(ExerciseFailed, match="KeyError"):  # a case the table does not hold
        check(*tables)


def test_an_exception_text_is_withheld_from_the_feedback_on_private_cases(monkeypatch):
    """Lecturer review r3, problem 11: a student's function can raise an exception that holds its
    inputs; graded on the course's private cases, the feedback keeps the exception's type and line but
    not its text, which goes to the teacher's log (``WITHHELD``)."""
    from lib import exercises as lib_exercises
    from lib.exercises import ch02

    def leaky(w, gamma):
        raise KeyError(f"inputs {w.tolist()} {gamma}")

    with pytest.raises(ExerciseFailed) as public:  # the book, its practice cases: the text is shown
        ch02.check_sharpen(leaky)
    assert "inputs [" in str(public.value)
    monkeypatch.setattr(lib_exercises, "WITHHOLD_EXCEPTION_TEXT", True)
    monkeypatch.setattr(lib_exercises, "WITHHELD", [])
    with pytest.raises(ExerciseFailed) as private:
        ch02.check_sharpen(leaky)
    said = str(private.value)
    assert "raised KeyError" in said and "inputs [" not in said
    assert "its message is withheld: it may show the grader's private inputs" in said
    (kept,) = lib_exercises.WITHHELD
    assert "inputs [" in kept and "raised KeyError" in kept
    # the grader's own words and a name the answer lacks stay (a refusal; "needs manual review")
    import lib.exercises.ch17  # noqa: F401 (registers its refusals' messages)

    for error in [
        RuntimeError(
            "it called the library's apply_rope; write the rotation yourself, then compare"
        ),
        NameError("name 'helper' is not defined"),
    ]:

        def raising(w, gamma, _error=error):
            raise _error

        with pytest.raises(ExerciseFailed) as shown:
            ch02.check_sharpen(raising)
        assert str(error) in str(shown.value) and "withheld" not in str(shown.value)
    assert len(lib_exercises.WITHHELD) == 1
    from lib.exercises import ch09  # a checker's own refusal, raised inside the student's function

    assert lib_exercises._own_text(ch09._LAYER_REFUSED)
    # the grader turns it on for a chapter with private cases, off for one graded on practice cases
    source = inspect.getsource(grade_course.Grader.grade_one)
    assert "lib_exercises.WITHHOLD_EXCEPTION_TEXT = private" in source
    assert "withheld from the feedback" in inspect.getsource(grade_course._grade_students)


def test_a_student_graded_alone_is_compared_with_the_class(tmp_path, monkeypatch):
    """Lecturer review s21, S2: ivan, graded later with --student, had alice's notebook byte for byte
    and was not flagged. A run's students are compared with every submission of the chapter (the
    pairs of two earlier students not again), and the new flags are merged into
    reports/<chapter>-flags.json, the earlier students' flags kept."""
    import json

    import nbformat

    chapter = "02_attention_as_soft_lookup"
    written = (
        "Sharpening raises every weight to the power gamma and renormalizes, so the largest weight "
        "grows at the expense of the others; as gamma grows the lookup tends to a hard one."
    )
    code = "\n".join(
        ["def sharpen(weights, gamma):", "    powered = [w ** gamma for w in weights]"]
        + [
            f"    total_{i} = sum(powered) + {i} * len(powered) - {i} * len(powered)"
            for i in range(4)
        ]
        + ["    return [p / total_0 for p in powered]"]
    )

    def notebook(text: str, answer: str):
        cells = [nbformat.v4.new_code_cell(answer), nbformat.v4.new_markdown_cell(text)]
        cells[0].metadata["nbgrader"] = {"grade_id": "ex1_answer", "solution": True, "grade": False}
        cells[1].metadata["nbgrader"] = {"grade_id": "ex3_written", "solution": True, "grade": True}
        return nbformat.v4.new_notebook(cells=cells)

    other = "With a larger exponent the big scores dominate after normalising, like a hard read."
    other_code = "def sharpen(weights, gamma):\n    return weights"
    for student, text, answer in (
        ("alice", written, code),
        ("erin", written, code),  # flagged in the earlier full run
        ("ivan", written, code),
        ("zoe", other, other_code),
    ):
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        nbformat.write(notebook(text, answer), folder / f"{chapter}.ipynb")
    flags = grade_course.copy_flags(tmp_path, chapter, ["ivan"])
    assert any(
        f.startswith("alice ex3_written: like ivan's answer (similarity 1.00") for f in flags
    )
    assert any(f.startswith("erin ex3_written: like ivan's answer") for f in flags)
    assert not [f for f in flags if "alice" in f and "erin" in f]  # not graded now: not again
    code_flags = grade_course.code_copy_flags(tmp_path, chapter, ["ivan"])
    assert any(f.startswith("alice ex1_answer: the same code as ivan's") for f in code_flags)
    assert not [f for f in code_flags if "alice" in f and "erin" in f]
    reports = tmp_path / "reports"
    reports.mkdir()
    saved = reports / f"{chapter}-flags.json"
    saved.write_text(
        json.dumps({"erin": ["possible copy"], "bob": ["ex1_test needs manual review"]})
    )
    for name in ("FLAGGED", "REFUSED", "REPAIRED"):  # {student: ...} of this run
        monkeypatch.setattr(grade_course, name, {}, raising=False)
    monkeypatch.setattr(grade_course, "_flags", lambda *a: None)
    grade_course._print_flags(tmp_path, chapter, ["ivan"], [])
    known = json.loads(saved.read_text())
    # pairs, not roles; no timestamp.txt here, so the order is unknown (lecturer review s23, M1);
    # each pair with the answers alike (lecturer review s41, m3)
    both = "ex1_answer, ex3_written"
    assert known["ivan"] == [
        f"alike with alice in {both}; order unknown",
        f"alike with erin in {both}; order unknown",
    ]
    assert known["alice"] == [f"alike with ivan in {both}; order unknown"]
    assert known["bob"] == ["ex1_test needs manual review"]
    assert known["erin"] == [f"alike with ivan in {both}; order unknown", "possible copy"]
    assert "zoe" not in known


def test_a_written_answer_copied_from_the_model_or_a_classmate_is_flagged(tmp_path):
    """Lecturer review r3, problem 14: the grader's output lists written answers that are near-verbatim
    copies of the model answer or of another student's answer; an honest answer is not listed."""
    import nbformat

    chapter = "02_attention_as_soft_lookup"
    model = (
        "Sharpening raises every weight to the power gamma and renormalizes, so the largest weight "
        "grows at the expense of the others; as gamma grows the lookup tends to a hard one."
    )

    def notebook(text: str):
        cell = nbformat.v4.new_markdown_cell(text)
        cell.metadata["nbgrader"] = {"grade_id": "ex3_written", "solution": True, "grade": True}
        return nbformat.v4.new_notebook(cells=[cell])

    texts = {
        "copier": model.replace("Sharpening", "sharpening") + " That is all.",
        "friend": "Sharpening raises every weight to the power gamma and renormalizes, so "
        "the biggest weight wins over the others.",
        "honest": "With a larger exponent the big scores dominate after normalising: "
        "the soft read moves toward picking a single memory slot, like a hard read.",
        "blank": "YOUR ANSWER HERE",
    }
    source = tmp_path / "source" / chapter
    source.mkdir(parents=True)
    nbformat.write(notebook(model), source / f"{chapter}.ipynb")
    for student, text in texts.items():
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        nbformat.write(notebook(text), folder / f"{chapter}.ipynb")
    flags = grade_course.copy_flags(tmp_path, chapter, sorted(texts))
    assert any(
        f.startswith("copier ex3_written: like the model answer (similarity 0.9") for f in flags
    )
    assert any(f.startswith("friend ex3_written: like the model answer") for f in flags)
    # each pair once (lecturer review r4): copier and friend, not also friend and copier
    assert any(f.startswith("copier ex3_written: like friend's answer") for f in flags)
    assert not [f for f in flags if f.startswith("friend ex3_written: like copier's")]
    # the copies of the model answer first
    kinds = ["the model answer" in f for f in flags]
    assert kinds == sorted(kinds, reverse=True) and kinds[0] and not kinds[-1]
    assert not [f for f in flags if f.startswith(("honest", "blank"))]
    assert not [f for f in flags if "honest's" in f or "blank's" in f]
    ratio, shared = grade_course.likeness(texts["honest"], model)
    assert ratio < grade_course.COPY_RATIO and shared == 0
    # listed apart from the possible copies: a likeness of one or two shared runs (lecturer review s13)
    strong, weak = grade_course.strong_and_weak(
        flags
        + ["dora ex3_written: like the model answer (similarity 0.36, 1 runs of 8 words in common)"]
    )
    assert weak == [
        "dora ex3_written: like the model answer (similarity 0.36, 1 runs of 8 words in common)"
    ]
    assert strong[0].startswith("copier ex3_written: like the model answer (similarity 0.9")
    assert len(strong) == len(flags)


def test_a_grading_run_names_no_feedback_time_and_shows_each_sandbox_reason_whole(
    tmp_path, monkeypatch, capsys
):
    """Lecturer review s16, M3: a plain grading run ended with "not yet time for feedback", which
    nobody asked for (--feedback says it), and the "stopped by the sandbox" list cut a reason at 200
    characters, after "It got 0 anyway:", before what the sandbox stopped."""
    import term_plan

    monkeypatch.setattr(
        term_plan, "feedback_too_early", lambda *a, **k: "not yet time for feedback"
    )
    monkeypatch.setattr(grade_course, "copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "code_copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "release_advice", lambda *a: None)
    monkeypatch.setattr(grade_course, "_untimed", lambda *a: [])
    why = (
        "Your code tried to read course/source/17_modern_decoder/17_modern_decoder.ipynb: the "
        "grader's sandbox does not allow it"
    )
    message = (
        "needs manual review: the answer cell uses `linecache`, which reads the book's checkers "
        "(lib.exercises) or imports by a computed name, or reads files or code; an answer may "
        f"not. It got 0 anyway: ✗ apply RoPE: {why}"
    )
    assert len(f"dave ex1_test: {message}".split(why)[0]) > 200  # past the old cut
    result = grade_course.Result("dave", "ex1_test", 0.0, 2.0, message, 0.1)
    result.review = True
    grade_course._flags(tmp_path, "17_modern_decoder", ["dave"], [result])
    out = capsys.readouterr().out
    assert "not yet time for feedback" not in out
    listed = out.split("stopped by the sandbox (", 1)[1].split("\n")[1]
    assert listed == f"  dave ex1_test: {message}"


def test_the_copy_list_gives_submission_times_and_lists_a_quote_apart(tmp_path):
    """Lecturer review s17, M6: each pair of alike answers says when each student submitted and who
    first (the original author was listed exactly like the copier), and a pair under a similarity of
    WEAK_RATIO (an answer that quotes a long sentence of the question) is a weaker likeness."""
    import nbformat

    chapter = "12_elmo"
    quote = "the bank lent tom some money and the river bank was wet after the long rain"

    def notebook(text: str):
        cell = nbformat.v4.new_markdown_cell(text)
        cell.metadata["nbgrader"] = {"grade_id": "ex4_written", "solution": True, "grade": True}
        return nbformat.v4.new_notebook(cells=[cell])

    original = (
        "The probe reads the sense from the context words, and with no twin in training it has to "
        "generalize from phrases it never saw, so its accuracy falls to chance."
    )
    texts = {
        "alice": (original, "2026-12-05 10:00:00.000000 UTC"),
        "dave": (original.replace("falls", "drops"), "2026-12-05 11:30:00.000000 UTC"),
        "erin": (
            f"As in '{quote}', a probe " + " ".join(f"w{i}" for i in range(120)),
            "2026-12-05 09:00:00.000000 UTC",
        ),
        "fay": (
            f"The sentence '{quote}' shows it; " + " ".join(f"v{i}" for i in range(120)),
            None,
        ),
    }
    (tmp_path / "source" / chapter).mkdir(parents=True)
    nbformat.write(notebook("x"), tmp_path / "source" / chapter / f"{chapter}.ipynb")
    for student, (text, when) in texts.items():
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        nbformat.write(notebook(text), folder / f"{chapter}.ipynb")
        if when:
            (folder / "timestamp.txt").write_text(when)
    flags = grade_course.copy_flags(tmp_path, chapter, sorted(texts))
    (pair,) = [f for f in flags if f.startswith("alice ex4_written: like dave's answer")]
    assert pair.endswith(
        "; submitted: alice 2026-12-05 10:00:00 UTC, dave 2026-12-05 11:30:00 UTC, alice first"
    )
    strong, weak = grade_course.strong_and_weak(flags)
    assert strong == [pair]
    (quoted,) = weak
    assert quoted.startswith("erin ex4_written: like fay's answer")
    ratio = float(re.search(r"similarity ([0-9.]+)", quoted)[1])
    runs = int(re.search(r"(\d+) runs", quoted)[1])
    assert ratio < grade_course.WEAK_RATIO and runs >= grade_course.COPY_STRONG_RUNS
    assert quoted.endswith("; submitted: erin 2026-12-05 09:00:00 UTC, fay at an unknown time")


def _untouched_course(tmp_path: Path, claimed: str) -> Path:
    """A course whose exchange holds alice's chapter 2 submission, timestamp.txt ``claimed``."""
    course, chapter = tmp_path / "course", "02_attention_as_soft_lookup"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = 'c1'\n"
        f"c.Exchange.root = {str(tmp_path / 'exchange')!r}\n"
    )
    for folder in (
        course / "submitted" / "alice" / chapter,
        tmp_path / "exchange" / "c1" / "inbound" / f"alice+{chapter}+{claimed}+1a2b",
    ):
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(claimed)
        (folder / f"{chapter}.ipynb").write_text("{}")
    return course


def test_a_folder_changed_after_submission_is_said_not_made_late(tmp_path, monkeypatch):
    """Lecturer review s23, M8: inbound/ is world-writable, so a later touch (a TA's editor, a
    classmate) moved the submission time and made an honest student late. The grader records the
    inbound folder's times when it first sees them, counts when timestamp.txt was written there (a
    backdated one is still caught: the lower bound stays), and says "changed after submission" of a
    later change without making it late."""
    import datetime

    from nbgrader.utils import parse_utc

    claimed = "2026-12-01 10:00:00.000000 UTC"
    course = _untouched_course(tmp_path, claimed)
    chapter = "02_attention_as_soft_lookup"
    stamp = course / "submitted" / "alice" / chapter / "timestamp.txt"
    at = parse_utc(claimed).timestamp()
    folder, written, changed = grade_course._inbound_times(course, chapter, "alice", claimed)
    assert folder.startswith(f"alice+{chapter}+") and written <= changed
    # the exchange's clock: timestamp.txt written at submission, the folder touched an hour later
    times = {"now": (at + 5, at + 5)}
    monkeypatch.setattr(grade_course, "_inbound_times", lambda *a: (folder, *times["now"]))
    # first seen 5 s after the time it states: not flagged, and the later time counts (lecturer
    # review s31, M3: the later of the two always, flagged only over CLOCK_SLACK)
    assert grade_course.check_timestamp(course, chapter, "alice") is None
    written_at = datetime.datetime.fromtimestamp(at + 5, datetime.timezone.utc)
    assert stamp.read_text() == f"{written_at:%Y-%m-%d %H:%M:%S.%f} UTC"
    times["now"] = (at + 3600, at + 3600)  # then anyone touched it, timestamp.txt included
    said = grade_course.check_timestamp(course, chapter, "alice")
    assert said.startswith("changed after submission: its inbound folder"), said
    # and the way back, should the notebook not be hers (lecturer review s41, m4)
    assert (
        f"ask alice for the copy nbgrader submit kept in their home, ~/.local/share/jupyter/"
        f"nbgrader_cache/c1/alice+{chapter}+{claimed}, and put it back with python ../tools/"
        f"term_plan.py restore --course . {chapter} alice FOLDER"
    ) in said, said
    assert stamp.read_text() == f"{written_at:%Y-%m-%d %H:%M:%S.%f} UTC"  # the touch: not counted
    assert stamp.with_name("timestamp.txt.student").read_text() == claimed
    # a timestamp.txt written an hour after the time it states, when first seen: backdated
    (course / "reports" / grade_course.INBOUND_SEEN).unlink()
    stamp.write_text(claimed)
    said = grade_course.check_timestamp(course, chapter, "alice")
    assert said.startswith(f"timestamp.txt says {claimed}, 60 min from when it was written"), said
    later = datetime.datetime.fromtimestamp(at + 3600, datetime.timezone.utc)
    assert stamp.read_text().startswith(f"{later:%Y-%m-%d %H:%M:%S}")


def test_a_submission_changed_in_the_exchange_is_restored_from_the_students_copy(tmp_path, capsys):
    """Lecturer review s41, m4: judy replaced carol's notebook in the exchange's world-writable
    inbound/ before it was collected; the grader flagged "changed after submission", but carol's
    work was gone from the server, and putting her own copy into submitted/ by hand lost its time.
    ``term_plan.py restore`` takes the copy ``nbgrader submit`` kept in her home (the same
    submission_secret.txt and timestamp.txt as the exchange's): the notebook comes back, the one
    replaced is kept, the time stays. A copy of another submission is refused, saying why."""
    import term_plan

    claimed = "2026-12-01 10:00:00.000000 UTC"
    course = _untouched_course(tmp_path, claimed)
    chapter = "02_attention_as_soft_lookup"
    collected = course / "submitted" / "alice" / chapter
    (collected / "submission_secret.txt").write_text("a1" * 64)
    (collected / "timestamp.txt.student").write_text(claimed)  # the grader set a later one
    (collected / "timestamp.txt").write_text("2026-12-01 10:00:05.000000 UTC")
    (collected / f"{chapter}.ipynb").write_text('{"blank": "judy\'s"}')
    cache = tmp_path / "home" / term_plan.cache_folder(f"alice+{chapter}+{claimed}+1a2b", "c1")[2:]
    cache.mkdir(parents=True)
    (cache / "submission_secret.txt").write_text("a1" * 64)
    (cache / "timestamp.txt").write_text(claimed)
    (cache / f"{chapter}.ipynb").write_text('{"work": "alice\'s"}')
    term_plan.main(["restore", "--course", str(course), chapter, "alice", str(cache)])
    out = capsys.readouterr().out
    assert f"alice {chapter}: {collected / f'{chapter}.ipynb'} restored from" in out
    assert f"grade_course.py {chapter} --student alice" in out
    assert (collected / f"{chapter}.ipynb").read_text() == '{"work": "alice\'s"}'
    assert (collected / f"{chapter}.ipynb.before-restore").read_text() == '{"blank": "judy\'s"}'
    assert (collected / "timestamp.txt").read_text() == "2026-12-01 10:00:05.000000 UTC"
    (cache / "submission_secret.txt").write_text("b2" * 64)  # another submission's copy
    with pytest.raises(ValueError, match=f"take the one whose timestamp.txt says {claimed}"):
        term_plan.restore_submission(course, chapter, "alice", cache)
    with pytest.raises(ValueError, match="student: expected an nbgrader id"):
        term_plan.restore_submission(course, chapter, "../alice", cache)


def test_a_timestamp_set_back_by_under_a_minute_gains_nothing(tmp_path, monkeypatch):
    """Lecturer review s31, M3: frank submitted at 08:21:30.832 against a deadline of 08:21:30 and
    wrote 08:20:59 into his timestamp.txt; 31 s apart, under CLOCK_SLACK, it counted as on time. The
    later of the two times counts always; only a difference over CLOCK_SLACK is flagged. A student's
    clock a little ahead keeps its own, later, time."""
    import datetime

    from nbgrader.utils import parse_utc

    chapter = "02_attention_as_soft_lookup"
    deadline = parse_utc("2026-12-06 08:21:30 UTC")
    written = "2026-12-06 08:20:59.000000 UTC"
    course = _untouched_course(tmp_path, written)
    stamp = course / "submitted" / "alice" / chapter / "timestamp.txt"
    submitted = parse_utc("2026-12-06 08:21:30.832 UTC").timestamp()
    monkeypatch.setattr(
        grade_course, "_inbound_times", lambda *a: ("alice+x", submitted, submitted)
    )
    assert grade_course.check_timestamp(course, chapter, "alice") is None  # 31.8 s: not flagged
    counted = parse_utc(stamp.read_text())
    assert counted > deadline  # late, as submitted
    utc = counted.replace(tzinfo=datetime.timezone.utc)
    assert utc.timestamp() == pytest.approx(submitted, abs=1e-6)  # when it reached the exchange
    assert stamp.with_name("timestamp.txt.student").read_text() == written
    # run again (a second grading): the same time, the student's own kept
    assert grade_course.check_timestamp(course, chapter, "alice") is None
    assert parse_utc(stamp.read_text()) == counted
    assert stamp.with_name("timestamp.txt.student").read_text() == written
    # a clock 10 s ahead of the exchange's: the student's later time stands, untouched
    ahead = "2026-12-06 08:21:40.000000 UTC"
    (tmp_path / "ahead").mkdir()
    course = _untouched_course(tmp_path / "ahead", ahead)
    stamp = course / "submitted" / "alice" / chapter / "timestamp.txt"
    assert grade_course.check_timestamp(course, chapter, "alice") is None
    assert stamp.read_text() == ahead and not stamp.with_name("timestamp.txt.student").exists()


def _hand_graded_course(root: Path, texts: dict[str, str]) -> str:
    """A course folder with one chapter whose written answers ``texts`` ({grade id: text}, 2 points
    each) carol submitted, in autograded/ as nbgrader's autograde leaves them, graded by hand 0 each;
    returns the gradebook's url."""
    import nbformat
    from nbgrader.api import Gradebook

    chapter = "03_scoring_functions"
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = 'demo'\nc.CourseDirectory.root = {str(root)!r}\n"
    )
    cells = []
    for grade_id, text in texts.items():
        cell = nbformat.v4.new_markdown_cell(text)
        cell.metadata["nbgrader"] = {
            "grade": True,
            "solution": True,
            "grade_id": grade_id,
            "points": 2,
        }
        cells.append(cell)
    folder = root / "autograded" / "carol" / chapter
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{chapter}.ipynb")
    url = f"sqlite:///{root / 'gradebook.db'}"
    with Gradebook(url, course_id="demo") as gb:
        if not gb.students:
            gb.update_or_create_assignment(chapter)
            gb.add_notebook(chapter, chapter)
            for grade_id in texts:
                gb.add_grade_cell(grade_id, chapter, chapter, max_score=2, cell_type="markdown")
            gb.add_student("carol")
            gb.add_submission(chapter, "carol")
    return url


def test_a_regrade_asks_again_for_a_written_answer_whose_text_changed(tmp_path, monkeypatch):
    """Lecturer review s39, S1: carol's ex1_written was graded by hand, then she resubmitted a new
    text. The regrade kept the old grade, and the export said nothing. Now each grading run keeps a
    fingerprint of the texts it saw (grading/, 0600); at a regrade a changed text's hand grade is
    cleared (needs a manual grade again, so the export says "not final") and named; an unchanged one
    keeps its grade."""
    from nbgrader.api import Gradebook

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")  # alembic
    chapter = "03_scoring_functions"
    first = {"ex1_written": "full rank 8", "ex2_written": "the scores grow as sqrt(d)"}
    url = _hand_graded_course(tmp_path, first)
    lines = grade_course.finish(tmp_path, chapter, ["carol"])  # the first grading run
    saved = tmp_path / "grading" / grade_course.FINGERPRINTS
    assert saved.stat().st_mode & 0o777 == 0o600
    assert "0 answers graded by hand before (a regrade) kept as graded" in lines
    with Gradebook(url, course_id="demo") as gb:  # the TA grades both by hand
        for g in gb.find_submission_notebook(chapter, chapter, "carol").grades:
            g.manual_score, g.needs_manual_grade = 0.0, False
        gb.db.commit()
    # she resubmits a new ex1_written; nbgrader's autograde marks both as needing a grade
    _hand_graded_course(tmp_path, {**first, "ex1_written": "its rank is at most d_k = 2, not 8"})
    with Gradebook(url, course_id="demo") as gb:
        for g in gb.find_submission_notebook(chapter, chapter, "carol").grades:
            g.needs_manual_grade = True
        gb.db.commit()
    lines = grade_course.finish(tmp_path, chapter, ["carol"])
    assert "1 answers graded by hand before (a regrade) kept as graded" in lines
    said = "carol ex1_written changed since it was graded by hand: grade it again"
    assert any(line.startswith(said) for line in lines), lines
    assert not any("ex2_written changed" in line for line in lines)
    with Gradebook(url, course_id="demo") as gb:
        grades = {g.name: g for g in gb.find_submission_notebook(chapter, chapter, "carol").grades}
        assert grades["ex1_written"].manual_score is None
        assert grades["ex1_written"].needs_manual_grade
        assert (
            grades["ex2_written"].manual_score == 0 and not grades["ex2_written"].needs_manual_grade
        )
    assert grade_course.ungraded_answers(tmp_path, chapter) == [
        f"carol {chapter}: 1 written answer still needs a manual grade (ex1_written)"
    ]
    # graded again by hand, then a regrade of the same text: the new grade stands
    with Gradebook(url, course_id="demo") as gb:
        for g in gb.find_submission_notebook(chapter, chapter, "carol").grades:
            g.manual_score, g.needs_manual_grade = 2.0, True
        gb.db.commit()
    lines = grade_course.finish(tmp_path, chapter, ["carol"])
    assert "2 answers graded by hand before (a regrade) kept as graded" in lines
    assert not any("changed since" in line for line in lines)


def test_a_refusal_gives_nbgraders_reason_when_its_exception_is_not_an_error():
    """Lecturer review s39, m5: a submission whose answer cell was made a graded cell was refused
    with "NbGraderException: Please see the the above traceback" and no reason: the reason line,
    ``nbgrader.api.MissingEntry: ...``, names neither Error nor Exception. The log as nbgrader's
    autograde captures it (a real run's, shortened)."""
    log = (
        "[ERROR] There was an error processing assignment: /c/submitted/trudy/17_modern_decoder\n"
        "    Traceback (most recent call last):\n"
        '      File "nbgrader/api.py", line 1846, in find_graded_cell\n'
        '        raise MissingEntry("No such grade cell: {}/{}/{}".format(assignment, nb, name))\n'
        "    nbgrader.api.MissingEntry: No such grade cell: "
        "17_modern_decoder/17_modern_decoder/ex4_answer\n"
        "    \n"
        "[WARNING] Removing failed assignment: /c/autograded/trudy/17_modern_decoder\n"
        "[ERROR] There was an error processing assignment '17_modern_decoder' for student 'trudy'\n"
        "[ERROR] Please see the the above traceback for details on the specific errors on the "
        "above failures.\n"
    )
    error = (
        "Traceback (most recent call last):\n"
        "nbgrader.converters.base.NbGraderException: Please see the the above traceback for "
        "details on the specific errors on the above failures.\n"
    )
    reason = grade_course._refusal_reason(log, error)
    assert reason.startswith("nbgrader.api.MissingEntry: No such grade cell: "), reason
    assert "Please see the" not in reason and "File " not in reason
    assert "cell ex4_answer is marked as a graded cell" in reason and "release/" in reason
    # the exceptions it gave before stay as they were
    assert grade_course._refusal_reason("    KeyError: 'mine'\n[ERROR] Please see the", "") == (
        "KeyError: 'mine'"
    )
