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
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

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


def _cases(module) -> list[list[torch.Tensor]]:
    functions = [
        getattr(module, n) for n in dir(module) if n.endswith("_cases") and n.startswith("_")
    ]
    return [[t for case in f() for t in case if isinstance(t, torch.Tensor)] for f in functions]


def _same(a, b) -> bool:
    return all(
        len(x) == len(y) and all(s.shape == t.shape and torch.equal(s, t) for s, t in zip(x, y))
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
    # chapter 2's exercise 2 asks to "show why": its rubric names that part
    source = (tmp_path / "source" / chapter / f"{chapter}.ipynb").read_text()
    assert "show why with one line of algebra" in source
    assert "the explanation the exercise asks for" not in source


def test_the_grader_says_when_a_course_has_no_grading_material(tmp_path, restored):
    said = grade_course.install_grading(tmp_path, "lib.exercises.ch02")
    assert "practice cases" in said


def test_grading_material_that_does_not_fit_its_checker_is_refused(tmp_path, restored):
    (tmp_path / "ch02.py").write_text("SEEDS = {'sharpen': 1, 'sharpened': 2}\nREFERENCES = {}\n")
    with pytest.raises(ValueError, match="sharpened"):
        grade_course.install_grading(tmp_path, "lib.exercises.ch02")
