"""Grade a chapter of the course where no student's code can reach the verdict (issue 36):

    python tools/grade_course.py 02_attention_as_soft_lookup              # the course in ./course
    python tools/grade_course.py 06_self_attention --course DIR --student alice bob

Run it in place of the autograding step of nbgrader (``nbgrader autograde``): nbgrader stays the
course's tool (its gradebook, Formgrader, ``generate_feedback``, ``export``), only the points of the
locked test cells come from here. For each submitted notebook in ``submitted/<student>/<chapter>/``:

1. **nbgrader's autograde, without running the notebook**: its Execute step is left out, so no cell of
   the submission runs in a kernel on the lecturer's account; nbgrader still puts back the locked cells
   and the test cells from its gradebook, records the submission and its late penalty, and writes
   ``autograded/``. Every test cell's score is then set to 0 until this tool has graded it.
2. **The answers as source**: from the submitted notebook it takes the student's answer cells (by their
   nbgrader ``grade_id``) as text, and nothing else: every other cell that runs is the instructor's,
   from ``source/``.
3. **A sandbox per (student, exercise)** (tools/sandbox.py says how it is built): a process that ran
   the chapter's code up to its exercises once (the instructor's source) forks a child for each answer;
   the child locks itself in (resource limits, Landlock, no capabilities for root, or the user
   ``nobody`` for root where the kernel has no Landlock, an audit hook), runs the locked cells of the
   exercises section with the student's answer cells in their place, one request per cell, and answers
   the grader's requests. An earlier exercise's answer cell runs too where this exercise reads a name
   it binds (``_needed``: a helper from exercise 1 used in exercise 4); if it stops the child (a loop,
   a violation, an exit), the cells run again in a new child without it, so it costs only its own
   exercise.
4. **The verdict in this process**, which never runs a student's code: the chapter's own checker
   (``lib.exercises``) is called with the test cell's arguments, read from the child: a value arrives
   as data (tensors, numbers, strings, lists, ... read with ``torch.load(weights_only=True)``), a
   function as a proxy whose calls send the checker's inputs to the child (pickled: the child may
   unpickle the grader's objects, such as a model of the chapter's; the grader never unpickles the
   child's) and bring back only data; a module of the student's own class as its layers and weights
   (torch.nn layers as themselves), whose forward runs in the child.
   The proxy carries the function's code compiled here from the student's source (never run), so the
   checks that read an answer's code (``is_stub``, ``names_used``, the line of an error) work as in the
   notebook. What a student's cell does to its own process (IPython hooks, patched builtins or torch
   functions, ``sys.modules``, a printed "passed" and an exit) stays in the child.
5. **A constraint an exercise states** ("without the library's masked_softmax", "no mask") is enforced
   in the child too: a chapter's checker module lists them in ``REFUSALS`` {checker: [(library
   function, argument or None, raiser)]}; the child swaps that function's code, so every reference to
   it refuses (with ``None``: any call; with an argument name: a call that passes it), and the grader
   raises the checker's own exception for it.
6. **Predictions checked at collection**: in a course written with ``make_course.py
   --predictions-at-collection``, a prediction's test cell in the release only checks that it is
   written; its real test is in the cell's metadata (``course.test``), which this tool runs. A
   prediction whose answer cell computes it with the book's library (``prediction_computed``: a
   ``lib.*`` function, or a library model built there) or with the chapter's own code (a function or
   an ``nn.Module`` class its cells define, a model they build) is 0 and "needs manual review".
7. **The grader's cases**: the checkers' practice cases and references (what the students' package
   holds) are replaced, in this process, by the course's (``course/grading/chNN.py``, copied there by
   make_course.py from the repository's grading/, which no package ships; ``install_grading``). In a
   course with per-student variants (``make_course.py --variants``) the student's id, from the
   submission's folder, draws the student's numbers here and in the child (``lib.exercises.variant``).
8. **Points** into nbgrader's gradebook (``Grade.auto_score`` of each test cell) and the verdict into
   the test cell's output in ``autograded/``, so the Formgrader, ``generate_feedback`` and ``export``
   use them. A time limit, a crash, the end of the process or a sandbox violation is 0 for that
   exercise with a message that says which; nothing a student does changes another's grades.
9. **Afterwards** (``finish``): the rubric's 0-point task cells are marked as needing no grade (the
   Formgrader's "needs manual grade" then clears once the written answers are graded), and the late
   penalties are computed again from the sandbox's points (``term_plan.py penalties``).

While it grades, the run keeps a marker in the course folder, ``grading-CHAPTER.lock``
(tools/grading_marker.py), and removes it at the end; a run stopped by an error, Ctrl-C or SIGTERM
leaves it, saying so. ``export_grades.py`` refuses to export while a marker is there (``--force``).

The time limits: ``--time-limit`` seconds of wall time for each call of a student's function (the
checker's feedback says "did not finish in N s"), ``--cell-limit`` for running the answer cells, and
``--cpu-limit`` CPU seconds for the whole child; ``--memory`` GB of address space for the child.

What the sandbox does not cover (the teachers' page says it too): a student who copies the library's
source into an answer passes a constraint on calling it, as one who retypes it would (the copy report
lists an answer that is the forbidden function up to names: ``code_copy_flags``); without Landlock
(Linux before 5.13) and not as root, a C extension's own file access (``torch.save`` to a path) is not
seen by the audit hook; run the grader in a container or as a separate user there.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import copy
import dataclasses
import datetime
import fnmatch
import functools
import glob
import hashlib
import importlib
import importlib.util
import inspect
import io
import json
import linecache
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import nbformat

# nbformat's note on cells without an id (a notebook edited by hand or by an older Jupyter), once per
# notebook read: noise in the grader's output
warnings.filterwarnings("ignore", message="Cell is missing an id field")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT)]  # the clone's library and checkers


def _course_folder(given: Path | None) -> Path:
    """The course folder: ``--course``, or the current folder when it holds nbgrader_config.py,
    or ``course``."""
    return given or (Path(".") if Path("nbgrader_config.py").exists() else Path("course"))


def _too_early(early: str) -> int:
    """Say that ``--feedback`` waits for the late period (``early``: why); the exit status."""
    print(f"{early}.\nNothing done (--force gives the feedback now).")
    return 2


def _feedback_refused_first(argv: list[str]) -> int | None:
    """``--feedback`` before the late period ends, without ``--force``: the refusal, said before the
    grader's start-up (torch and the book's kernels; lecturer review s35, m3: it came after a minute
    or more). The exit status (2) when refused, None otherwise (the whole tool runs)."""
    if "--feedback" not in argv or "--force" in argv:
        return None
    early_parser = argparse.ArgumentParser(add_help=False)
    early_parser.add_argument("chapter", nargs="?")
    early_parser.add_argument("--course", type=Path)
    known, _ = early_parser.parse_known_args(argv)
    if not known.chapter:
        return None  # the whole parser says what is missing
    course = _course_folder(known.course)
    try:
        from term_plan import feedback_too_early

        early = feedback_too_early(course.resolve(), known.chapter.removesuffix(".ipynb"))
    except Exception:  # noqa: BLE001 (any trouble: the whole tool runs and says it)
        return None
    if not early:
        return None
    return _too_early(early)


if __name__ == "__main__" and (_refused := _feedback_refused_first(sys.argv[1:])) is not None:
    raise SystemExit(_refused)
import grading_marker  # noqa: E402
from sandbox import read_exact, transform, use_book_kernels  # noqa: E402 (as the child does)

# the book's CPU kernels, as its build has them, before torch is imported: the checkers' references
# here and the chapter's code in the zygote compute what the chapter computed (course review s27, M1)
use_book_kernels()
import torch  # noqa: E402

SANDBOX = ROOT / "tools" / "sandbox.py"
VIOLATION_EXIT = 86  # tools/sandbox.py
MAX_MESSAGE = 256 << 20  # bytes: a reply larger than this is refused
REFUSED: dict[str, str] = {}  # {student: nbgrader's reason} of this run's refused submissions
FLAGGED: dict[str, str] = {}  # {student: why} of this run's submissions whose timestamp.txt was off


# --- the plan of a chapter: its story, its exercises --------------------------------------------------


@dataclass
class Exercise:
    """One locked test cell: what runs before it and which checker decides."""

    test: str  # the test cell's grade_id
    number: int
    points: float
    module: str  # lib.exercises.chNN
    checker: str  # check_...
    args: list[str]  # the expressions the test passes to the checker
    cells: list[dict] = field(default_factory=list)  # {"source"|"answer": ..., "filename": ...}
    collected: bool = False  # a prediction checked at collection (its real test in the metadata)
    statement: str = ""  # the exercise's statement (its markdown cell), as the student reads it
    # {argument: value} of the arguments the worked solution sets to a literal (a prediction:
    # suffers_most = 3): the book's reference, judged when the check stops before them (s40, m2)
    references: dict = field(default_factory=dict)


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _test_call(source: str) -> tuple[list[str], str, str, list[str]]:
    """(head statements, module, checker, argument expressions) of a test cell written by
    tools/make_course.py (``verdict = check_x(a, b)`` after ``from lib.exercises.chNN import check_x``)."""
    tree = ast.parse(source)
    head, module, name, args = [], None, None, None
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith(
            "lib.exercises"
        ):
            module, name = statement.module, statement.names[0].name
        elif (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Call)
            and getattr(statement.targets[0], "id", "") == "verdict"
        ):
            call = statement.value
            args = [ast.unparse(a) for a in call.args]
            if call.keywords:
                raise ValueError(f"a test cell's checker call with keywords: {ast.unparse(call)}")
        elif module is None and not (
            isinstance(statement, ast.Import) and statement.names[0].name == "sys"
        ):
            head.append(ast.unparse(statement))
    if module is None or args is None:
        raise ValueError(f"not a test cell written by tools/make_course.py:\n{source}")
    return head, module, name, args


def plan_chapter(source: nbformat.NotebookNode) -> tuple[list[dict], list[Exercise]]:
    """The chapter's story (its code cells before the exercises) and its exercises, from the
    instructor's source notebook."""
    story, exercises, section = [], [], []
    started, statements, literals = False, {}, {}
    for i, cell in enumerate(source.cells):
        meta = _meta(cell)
        grade_id = meta.get("grade_id", "")
        if cell.cell_type == "markdown" and grade_id.startswith("ex") and "_text" in grade_id:
            started = True
            number = grade_id[2:].split("_")[0]
            if number.isdigit():
                statements[int(number)] = statements.get(int(number), "") + cell.source
        if cell.cell_type != "code":
            continue
        filename = f"<chapter cell {i}>"
        if not started:
            story.append({"source": cell.source, "filename": filename})
            continue
        if meta.get("grade") and grade_id.startswith("ex"):
            number = int(grade_id[2:].split("_")[0])
            # a prediction checked at collection keeps its real test in the metadata (make_course.py)
            collected = cell.get("metadata", {}).get("course", {}).get("test")
            test = collected or cell.source
            head, module, checker, args = _test_call(test)
            # the exercises section so far: the locked cells, this exercise's answer cells, and the
            # earlier exercises' answers (optional: a helper defined there may be used here)
            cells = [
                {**c, "optional": not c["answer"].startswith(f"ex{number}_answer")}
                if "answer" in c
                else c
                for c in section
            ]
            if head:
                cells.append({"source": "\n".join(head), "filename": f"<test {grade_id}>"})
            exercises.append(
                Exercise(
                    grade_id,
                    number,
                    float(meta.get("points", 0)),
                    module,
                    checker,
                    args,
                    cells,
                    collected=bool(collected),
                    statement=statements.get(number, ""),
                    references={a: literals[a] for a in args if a in literals},
                )
            )
            continue
        if meta.get("solution"):
            section.append({"answer": grade_id, "filename": f"<answer {grade_id}>"})
            if started:
                literals.update(solution_literals(cell.source))
        else:
            section.append({"source": cell.source, "filename": filename})
    return story, exercises


def solution_literals(source: str) -> dict:
    """{name: value} of the top-level assignments of a literal (an int, a bool, a string: a float
    prediction is judged within a tolerance only its checker knows) in an answer cell's worked
    solution (after nbgrader's BEGIN SOLUTION mark where it has one)."""
    begin, end = SOLUTION_MARKS
    text = source.split(begin, 1)[1].split(end, 1)[0] if begin in source else source
    try:
        tree = ast.parse(transform(text))
    except (SyntaxError, ValueError):
        return {}
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        # "articles_left, ne_left = False, True" too (lecturer review s41, m1: chapter 4's two
        # predictions, written so, went unjudged beside a wrong measurement)
        pairs = (
            zip(target.elts, value.elts)
            if isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            else [(target, value)]
        )
        for name, constant in pairs:
            if (
                isinstance(name, ast.Name)
                and isinstance(constant, ast.Constant)
                and isinstance(constant.value, (bool, int, str))
            ):
                found[name.id] = constant.value
    return found


UNJUDGED = "Your predictions, checked at collection against the book's (its worked solution's):"


def unjudged_predictions(references: dict, names: list[str], args: list, first: str) -> str:
    """A verdict on each prediction of a check that stopped before judging them (course review s40,
    m2: chapter 5's "blind_model still has row and column embeddings" said nothing of
    ``suffers_most`` and its second prediction, now ``mostly_wrong_order``): each argument the worked solution sets to a literal
    and the failure does not name, compared with the worked solution's value (the course's sandbox
    gives that solution full marks before any student is graded). "" where the failure names one."""
    judged = [n for n in names if n in references]
    if not judged or any(re.search(rf"\b{re.escape(n)}\b", first) for n in judged):
        return ""
    parts = []
    for name in judged:
        value = args[names.index(name)]
        book = references[name]
        if value is None:
            parts.append(f"{name}: not written")
        elif isinstance(value, (bool, int, float, str)) and (
            isinstance(value, bool) == isinstance(book, bool)
        ):
            parts.append(f"{name}: {'right' if value == book else 'not right'}")
        else:
            parts.append(f"{name}: not judged (not a plain {type(book).__name__})")
    return f"\n{UNJUDGED} " + "; ".join(parts) + "."


def answers_of(submission: nbformat.NotebookNode) -> dict[str, str]:
    """The student's answer cells as text, by grade_id (the first code cell of each id)."""
    found: dict[str, str] = {}
    for cell in submission.cells:
        grade_id = _meta(cell).get("grade_id")
        if cell.cell_type == "code" and isinstance(grade_id, str) and grade_id not in found:
            found[grade_id] = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    return found


def public_wording(message: str) -> str:
    """A verdict of a chapter graded on its practice cases (it has no grading material): they are in
    the students' package, so the verdict does not call them hidden."""
    return re.sub(r"\bhidden (cases?)\b", r"practice \1", message)


# a checker's advice to a reader at work, as the grader's feedback says it after the deadline, when
# nothing can be run again (course review s27, m15: "Write its body in the cell above, run that cell,
# then run this one again" read oddly in feedback on an exercise left blank)
AFTER_DEADLINE = [
    (
        re.compile(r"Write its body in the cell above, run that cell, then run this one again\."),
        "The submitted notebook has no body for it.",
    ),
    (
        re.compile(
            r"(?:,? and|,)? then run this (?:cell|one) again\.|,? and run this cell again\."
        ),
        "; the submitted notebook has none.",
    ),
]


def graded_wording(message: str) -> str:
    """A verdict as the feedback gives it: no order to run a cell again (:data:`AFTER_DEADLINE`)."""
    for pattern, said in AFTER_DEADLINE:
        message = pattern.sub(said, message)
    return message


# a NameError as the checker reports it ("NameError: name 'x' is not defined") and as the grader reports
# an answer cell that stopped ("stopped with NameError at line 2: name 'x' ...", lecturer review s13:
# a prediction's helper from the student's own cell got a bare 0 there)
UNDEFINED = re.compile(r"NameError\b[^'\n]{0,80}?: name '(\w+)' is not defined")


def added_definitions(submission: nbformat.NotebookNode) -> dict[str, int]:
    """{name: the cell's number, from 1} of the names bound by the code cells a student added (cells
    without an nbgrader grade_id): the grader never runs them, only the answer cells."""
    found: dict[str, int] = {}
    for number, cell in enumerate(submission.cells, 1):
        if cell.cell_type == "code" and not isinstance(_meta(cell).get("grade_id"), str):
            source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
            for name in sorted(_names(source)[0]):
                found.setdefault(name, number)
    return found


def needs_review(result: Result, added: dict[str, int]) -> Result:
    """A failed answer whose NameError names a name that a cell the student added defines: not a bare
    0 but "needs manual review", in the grader's output, the feedback and the gradebook (the
    exercise then needs a manual grade in the Formgrader). Its score stays 0 until the teacher gives
    one."""
    match = UNDEFINED.search(result.message)
    if result.score >= result.points or not match or match.group(1) not in added:
        return result
    name = match.group(1)
    result.review = True
    result.message = (
        f"needs manual review: uses {name} defined outside the answer cell (in cell "
        f"{added[name]} of the notebook, a cell the student added, which the grader does not run: "
        f"only the answer cells are graded). The grader's verdict: {result.message}"
    )
    return result


def _resolve_dotted(path: str):
    """The object a dotted name such as ``lib.exercises.ch13.GPT3_PARAMS`` stands for (None if none)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def _package_bindings(tree: ast.AST) -> dict[str, str]:
    """{name: dotted path} of the names ``tree``'s imports bind to the checkers' package."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("lib.exercises") or alias.name == "lib":
                    name = alias.asname or alias.name.split(".")[0]
                    bound[name] = alias.name if alias.asname else name
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                if module.startswith("lib.exercises") or (
                    module == "lib" and alias.name == "exercises"
                ):
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


def _import_bindings(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``tree`` binds to the ``sys`` module (``import sys as _s``, ``s = sys``), and every
    name an import binds (a module, or what was taken from one)."""
    sys_names: set[str] = set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.add(alias.asname or alias.name.split(".")[0])
                if alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
        elif isinstance(node, ast.ImportFrom):
            imported.update(alias.asname or alias.name for alias in node.names)
    changed = True
    while changed:  # s = sys; t = s
        changed = False
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Name)
                and node.value.id in sys_names
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in sys_names:
                        sys_names.add(target.id)
                        changed = True
    return sys_names, imported


def _computed_lookup(node: ast.AST, sys_names: set[str], imported: set[str]) -> str | None:
    """The words of ``node`` if it reaches into ``sys.modules`` under another name of ``sys``
    (``_s.modules``, ``from sys import modules``, ``getattr(_s, 'modules')``) or takes an attribute by
    a computed name from a module or a private name (``getattr(_ch, '_long_context' + '_answers')``):
    lecturer review s16, S1, where an alias and a concatenated name read chapter 17's answers."""
    if isinstance(node, ast.ImportFrom) and node.module == "sys":
        if any(alias.name == "modules" for alias in node.names):
            return "from sys import modules"
    elif (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id in sys_names
    ):
        return ast.unparse(node)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
    ):
        owner, name = node.args[0], node.args[1]
        text = _folded_string(name)
        on_sys = isinstance(owner, ast.Name) and owner.id in sys_names
        on_module = isinstance(owner, ast.Name) and owner.id in imported
        literal = isinstance(name, ast.Constant)
        if (
            (on_sys and text in (None, "modules"))
            or (not literal and (on_module or text is not None))
            or ((text or "").startswith("_") and not (text or "").endswith("__"))
        ):
            return ast.unparse(node)
    return None


# what reads files or code objects rather than computing (lecturer review s11, S2: a prediction read
# as text from the installed package's source, lib/exercises/chNN.py, got full marks unflagged); no
# worked solution does any of it (tests/test_course_checker_constants.py)
# runpy runs a module's source anew, the checkers' among them, with the name computed (lecturer review
# s15, S2: ``runpy.run_module('lib.' + 'exer' + 'cises.ch17')`` returned the answers unflagged)
READING_MODULES = (
    "subprocess", "inspect", "linecache", "pkgutil", "glob", "shutil", "site", "runpy", "zipimport",
)  # fmt: skip
READING_CALLS = {"open", "exec", "eval", "compile", "vars", "globals", "locals"}
READING_METHODS = {
    "read_text", "read_bytes", "getsource", "getsourcelines", "getsourcefile", "getfile",
    "get_data", "popen", "system", "listdir", "scandir", "walk", "iterdir", "glob", "rglob",
    "getlines", "files", "read_binary", "open_text", "open_binary", "open",
}  # fmt: skip
READING_ATTRIBUTES = {
    "__file__", "__spec__", "__loader__", "__path__", "__globals__", "__code__", "__closure__",
    "__builtins__", "__dict__", "co_consts",
}  # fmt: skip


# the functions of the checkers' package that the chapters' own cells call, the only ones an answer cell
# may call too (lecturer review s15, S1: a public function returned chapter 17's predictions): every
# other function of lib.exercises in an answer is flagged for review
TEMPLATE_FUNCTIONS = frozenset({"hand_made_model", "parameter_variant", "student_id"})


@functools.cache
def checker_names() -> frozenset[str]:
    """The public checkers of every chapter (``check_...`` of ``lib.exercises.chNN``): an answer cell
    that calls one tries values until one passes (lecturer review s13, SERIOUS 1: a prediction
    brute-forced in the grader, where the chapter's import cell had put the checker in scope)."""
    import lib.exercises

    names = set()
    for path in Path(lib.exercises.__file__).parent.glob("ch[0-9][0-9].py"):
        module = importlib.import_module(f"lib.exercises.{path.stem}")
        names |= {n for n in vars(module) if n.startswith("check_")}
    return frozenset(names)


def _reads_files(node: ast.AST) -> str | None:
    """The words of ``node`` if it reads files, runs a program or looks inside code objects: an
    import of such a module, ``open(...)`` or ``eval(...)``, ``.read_text()`` and its kin, or a
    dunder attribute that leads to a module's file or a function's constants."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in READING_MODULES:
                return f"import {alias.name}"
    elif isinstance(node, ast.ImportFrom):
        if (node.module or "").split(".")[0] in READING_MODULES:
            return f"from {node.module} import ..."
    elif isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in READING_CALLS:
            return f"{func.id}(...)"
        if isinstance(func, ast.Attribute) and func.attr in READING_METHODS:
            return f"{ast.unparse(func)}(...)"
    elif isinstance(node, ast.Attribute) and node.attr in READING_ATTRIBUTES | checker_names():
        return ast.unparse(node)
    elif isinstance(node, ast.Name) and node.id in READING_ATTRIBUTES | checker_names():
        return node.id
    return None


def _folded_string(node: ast.AST) -> str | None:
    """The text a string expression of constants spells (``'lib.' + 'exer' + 'cises'``, an f-string of
    constants, ``'.'.join(['lib', 'exercises'])``, ``'lib/exer' 'cises'``), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded_string(node.left), _folded_string(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [
            _folded_string(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values
        ]
        return None if None in parts else "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], (ast.List, ast.Tuple))
    ):
        sep = _folded_string(node.func.value)
        parts = [_folded_string(e) for e in node.args[0].elts]
        return None if sep is None or None in parts else sep.join(parts)
    return None


def checker_module_use(source: str, earlier: str = "") -> str | None:
    """What in an answer cell takes a value from the checkers' package, ``lib.exercises``, whose
    constants hold the answers (lecturer review r4, problem 3: ``ch13.GPT3_PARAMS``), or imports a
    module by a computed name (``importlib``, ``__import__``, ``sys.modules``), which could: the words
    to quote, or None. Not counted: a function of the package called (chapter 6's
    ``hand_made_model()``), and a constant inside an ``assert`` or a ``holds(...)`` check, as the
    worked solutions compare their own numbers with the checker's."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        found = re.search(r"\blib\s*\.\s*exercises\b|\bimportlib\b|\b__import__\b", source)
        return found.group(0) if found else None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    bound: dict[str, str] = {}  # a name bound to the package (here or in an earlier answer cell)
    with contextlib.suppress(SyntaxError, ValueError):
        bound.update(_package_bindings(ast.parse(transform(earlier))))
    bound.update(_package_bindings(tree))
    sys_names, imported = _import_bindings(tree)
    with contextlib.suppress(SyntaxError, ValueError):
        more = _import_bindings(ast.parse(transform(earlier + "\n" + source)))
        sys_names |= more[0]
        imported |= more[1]
    for node in ast.walk(tree):
        found = _reads_files(node) or _computed_lookup(node, sys_names, imported)
        if found:
            return found
        if isinstance(node, ast.Import) and any(a.name.startswith("importlib") for a in node.names):
            return "import importlib"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("importlib"):
            return f"from {node.module} import ..."
        elif isinstance(node, ast.Attribute) and (
            node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys"
        ):
            return "sys.modules"
        elif isinstance(node, ast.Name) and node.id in ("__import__", "importlib"):
            return node.id
        elif isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)):
            text = _folded_string(node)  # a name spelled in pieces: 'lib.' + 'exer' + 'cises'
            if text and re.search(r"\bexercises\b", text) and "lib" in text:
                return repr(text) if isinstance(node, ast.Constant) else ast.unparse(node)

    def checked(node) -> bool:  # inside an assert or a holds(...) call
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.Assert) or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "holds"
            ):
                return True
        return False

    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load)):
            continue
        top, path = node, bound[node.id]
        while isinstance(parents.get(top), ast.Attribute) and parents[top].value is top:
            top = parents[top]
            path += f".{top.attr}"
        value = _resolve_dotted(path)
        if isinstance(value, type) or (callable(value) and not isinstance(value, types.ModuleType)):
            public = not any(part.startswith("_") for part in path.split("."))
            if public and (
                isinstance(value, type) or path.rpartition(".")[2] in TEMPLATE_FUNCTIONS
            ):
                continue  # a class, or a function the chapter's own cells call: gives nothing away
            # any other function computes what a checker compares with (chapter 2's _values, chapter
            # 17's long-context answers, a checker's reference): flagged (lecturer review s15, S1)
        if not path.startswith("lib.exercises") and path != "lib":
            continue
        if path == "lib" or not checked(top):
            return ast.unparse(top)
    return None


COMPUTED_NAME = re.compile(
    r"importlib|__import__|sys\.modules|from sys import modules|getattr|runpy|\+|\bjoin\b"
)


def offence(found: str) -> str:
    """The one thing the words ``found`` (:func:`checker_module_use`) do, for the student's feedback
    (lecturer review s31, m7: one sentence named three offences, "reads the book's checkers ... or
    imports by a computed name, or reads files or code")."""
    if COMPUTED_NAME.search(found):
        return "looks up a module or a function by a computed name"
    if re.search(r"\bexercises\b|^lib$", found):
        return "reads the book's checkers (lib.exercises), whose constants hold the answers"
    return "reads files or code instead of computing (the checkers' source among them)"


def checker_review(result: Result, exercise: Exercise, answers: dict[str, str]) -> Result:
    """An answer that earned points while one of its answer cells reads ``lib.exercises`` (or imports
    by a computed name): 0 and "needs manual review", as :func:`needs_review` does, with the words
    that set it off (the checker's public constants hold the predictions' answers). An answer that
    earned nothing is listed for review too, its 0 kept (lecturer review s15, M3: an import by a
    computed name that failed was a plain 0, missing from the teacher's list of attempts)."""
    if result.review:
        return result
    earlier = ""  # the answer cells before (an earlier exercise's may import what this one reads)
    for cell in exercise.cells:
        if "answer" not in cell:
            continue
        source = answers.get(cell["answer"], "")
        if not cell["optional"]:
            found = checker_module_use(source, earlier)
            if found:
                break
        earlier += source + "\n"
    else:
        return result
    result.review = True
    if result.score <= 0:
        result.message = (
            f"needs manual review: the answer cell uses `{found}`, which {offence(found)}; an"
            f" answer may not. It got 0 anyway: {result.message}"
        )
        return result
    result.message = (
        f"needs manual review: the answer cell uses `{found}`, which reads the book's checkers "
        "(lib.exercises), whose constants hold the answers, or calls a checker (which would try "
        "values until one passes), or reads files or code (the checkers' source among them) "
        "instead of computing; an answer may not, so it gets 0 until the "
        f"teacher grades it. The grader's verdict ({result.score:g} of {result.points:g} "
        f"points without it): {result.message}"
    )
    result.score = 0.0
    return result


# --- a prediction computed with the library (lecturer review s22, M6) -----------------------------------

# heidi's chapter 13 exercise 2 was `gpt3_params = count_parameters(GPTConfig(...))`: a prediction made by
# running the library the chapter teaches, in the answer cell itself. The rule: a prediction cell whose
# prediction comes from a call of any function of the book's library (``lib.*``) or from a model of the
# library built there (an ``nn.Module`` class: its parameters can be counted) was not made before running.
# The chapter's own code counts the same (lecturer review course46, M1): a function or an ``nn.Module``
# class its cells define (chapter 7's ``BracketModel``), and a model they build (its ``model``).
COMPUTED = "computed with {call}: a prediction is made before running"


def _library_bindings(tree: ast.AST) -> dict[str, str]:
    """{name: dotted path} of the names ``tree``'s imports bind to the book's library (``lib``)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "lib" or alias.name.startswith("lib."):
                    bound[alias.asname or "lib"] = alias.name if alias.asname else "lib"
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            if module == "lib" or module.startswith("lib."):
                for alias in node.names:
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


def _library_call(node: ast.Call, bound: dict[str, str]) -> str | None:
    """The dotted name of the library function ``node`` calls, or of the library's model class it
    builds; None for anything else (a configuration such as ``GPTConfig(...)`` computes nothing)."""
    func, attrs = node.func, []
    while isinstance(func, ast.Attribute):
        attrs.insert(0, func.attr)
        func = func.value
    if not (isinstance(func, ast.Name) and func.id in bound):
        return None
    path = ".".join([bound[func.id], *attrs])
    value = _resolve_dotted(path)
    if isinstance(value, type):
        return path if issubclass(value, torch.nn.Module) else None
    # a function of the library; not a method (a configuration's preset, such as
    # LlamaConfig.qwen3_0_6b()) nor a constant's (a dict's .values())
    module = getattr(value, "__module__", "") or ""
    return path if isinstance(value, types.FunctionType) and module.startswith("lib") else None


class _Answer(str):
    """A student's earlier answer cell, among the cells :func:`prediction_computed` reads: its imports
    and the library's models it builds count, its functions and classes are the student's own."""


_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}
_KEEPS_MODEL = {"to", "eval", "train", "cpu", "cuda", "float", "double", "half", "requires_grad_"}


def _call_name(func: ast.expr) -> str:
    """The name of what a call calls, as written (``model.parameters``, ``model.blocks[0].attn``)."""
    return ast.unparse(func)


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute, item or call chain starts from (``model`` of ``model.a[0].b()``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _top_level(tree: ast.AST):
    """The nodes of ``tree`` outside its functions, classes and lambdas (what runs when it runs)."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop(0)
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


class _Chapter:
    """What the cells above an answer cell leave in scope that computes: the library's names their
    imports bind, the functions and the ``nn.Module`` classes the chapter defines, and the models
    (built from a model class of the library or of the chapter) they assign."""

    def __init__(self):
        self.bound: dict[str, str] = {}  # {name: the library's dotted path}
        self.functions: set[str] = set()
        self.classes: set[str] = set()  # nn.Module classes
        self.models: set[str] = set()

    def forget(self, names: set[str]):
        for name in names:
            self.bound.pop(name, None)
            self.functions.discard(name)
            self.classes.discard(name)
            self.models.discard(name)

    def _model_class(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name) and node.id in self.classes:
            return True
        call = _library_call(ast.Call(func=node, args=[], keywords=[]), self.bound)
        return call is not None and isinstance(_resolve_dotted(call), type)

    def _builds_model(self, value: ast.expr) -> bool:
        """Whether ``value`` is a model: a model class called, a model's part, a model moved
        (``GPT(c).to(device)``, ``model.blocks[0]``); not a model's output (``model(x)``)."""
        while True:
            if isinstance(value, (ast.Attribute, ast.Subscript)):
                value = value.value
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                if value.func.attr not in _KEEPS_MODEL:
                    return False
                value = value.func.value
            else:
                break
        if isinstance(value, ast.Call):
            return self._model_class(value.func)
        return isinstance(value, ast.Name) and value.id in self.models

    def read(self, tree: ast.Module, chapter: bool):
        """Take in one cell above: its names replace the same names of the cells before it."""
        self.forget(_defined(tree))
        self.bound.update(_library_bindings(tree))
        for statement in tree.body if chapter else []:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(statement.name)
            elif isinstance(statement, ast.ClassDef) and any(
                ast.unparse(base) in _MODULE_BASES or self._model_class(base)
                for base in statement.bases
            ):
                self.classes.add(statement.name)
        for node in _top_level(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                if self._builds_model(node.value):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    self.models |= {t.id for t in targets if isinstance(t, ast.Name)}

    def call(self, node: ast.Call) -> str | None:
        """The chapter's function or model class ``node`` calls, or the chapter's model whose
        method (or itself) it calls, as written; None for anything else."""
        if isinstance(node.func, ast.Name) and node.func.id in self.functions | self.classes:
            return node.func.id
        if _root_name(node.func) in self.models:
            return _call_name(node.func)
        return None


def prediction_computed(source: str, names: list[str], earlier: str | list[str] = "") -> str | None:
    """The call (``lib.gpt.count_parameters``, ``BracketModel``, ``model.parameters``) from which an
    answer cell computes one of the predictions ``names`` (directly, or through the names it assigns
    on the way), or None. The call counts where it is of the book's library (the names the cell and
    ``earlier``, the chapter's cells above it, import), of a function or an ``nn.Module`` class the
    chapter's cells define, or of a model those cells build from a model class of the library or the
    chapter (lecturer review, course46 M1). A name the cell defines itself is its own, and so is one
    a student's earlier answer cell (:class:`_Answer`) defines. A call whose result no prediction
    uses (a worked solution's check, ``exact = count_parameters(gpt3)``, after its estimate) does not
    count."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return None
    scope = _Chapter()
    for cell in [earlier] if isinstance(earlier, str) else earlier:  # each cell parsed alone
        with contextlib.suppress(SyntaxError, ValueError):
            scope.read(ast.parse(transform(cell)), chapter=not isinstance(cell, _Answer))
    scope.forget(_defined(tree))
    scope.bound.update(_library_bindings(tree))
    computed: dict[str, str] = {}  # a name assigned from a library call: {name: the call}
    changed = True
    while changed:  # through the names assigned on the way (m = GPT(c); n = count(m); p = n)
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                value, targets = node.iter, [node.target]  # for p in model.parameters(): ...
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            else:
                continue
            call = None
            for inner in ast.walk(value):
                if isinstance(inner, ast.Call):
                    call = call or _library_call(inner, scope.bound) or scope.call(inner)
                elif isinstance(inner, ast.Name) and inner.id in computed:
                    call = call or computed[inner.id]
            if call is None:
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in computed:
                        computed[name.id] = call
                        changed = True
    return next((computed[n] for n in names if n in computed), None)


# a measurement a prediction exercise asks for beside its predictions (chapter 4's exercise 1: "Then
# compute the table ... `rates_table(...)`, set `ne_share_left` to the share ..."): computed, as asked
MEASUREMENT = re.compile(r"\b[Ss]et `(\w+)` to\b")


def predicted(exercise: Exercise) -> list[str]:
    """The names of an exercise's predictions: its arguments but the measurements its statement asks
    the student to compute (``set `ne_share_left` to``)."""
    measured = set(MEASUREMENT.findall(" ".join(exercise.statement.split())))
    return [name for name in exercise.args if name not in measured]


def _whose(call: str) -> str:
    """Where a call of :func:`prediction_computed` comes from, in words."""
    return "the book's library" if call.split(".")[0] == "lib" else "the chapter's code"


def prediction_review(
    result: Result, exercise: Exercise, answers: dict[str, str], story: str | list[str] = ""
) -> Result:
    """A prediction checked at collection whose answer cell computes it with the library
    (:func:`prediction_computed`): 0 points and "needs manual review", as every answer that computes
    what it should give (:func:`checker_review`), with the call named, in the verdict, the feedback
    and the teacher's flags; the checker's verdict follows (a right number is no prediction)."""
    if not exercise.collected or result.review:
        return result
    earlier = [story] if isinstance(story, str) else list(story)
    for cell in exercise.cells:
        if "source" in cell:
            earlier.append(cell["source"])
            continue
        source = answers.get(cell.get("answer", ""), "")
        call = None
        if not cell.get("optional"):
            call = prediction_computed(source, predicted(exercise), earlier)
        if call:
            break
        earlier.append(_Answer(source))
    else:
        return result
    result.review = True
    result.computed = call
    # a cell worth 0 points (a graded course's prediction by default) has no grade to give: a flag
    # to read, not a manual grade the feedback waits for (course review s27, m13)
    held = (
        f"It gets 0 until the teacher grades it ({result.score:g} of {result.points:g} points "
        "without it)."
        if result.points
        else "It is worth 0 points, so there is no grade to give: a flag to read."
    )
    result.message = (
        f"needs manual review: {COMPUTED.format(call=call)}, and this cell computes the prediction "
        f"with `{call}` of {_whose(call)}. {held} The checker's verdict: {result.message}"
    )
    result.score = 0.0
    return result


# --- written answers that copy the model answer or another student's (lecturer review r3, problem 14) -

COPY_RATIO = 0.8  # difflib's similarity of two answers' words, from which an answer is flagged
COPY_RUN = 8  # or: this many words in a row shared with the other text


def _words(text: str) -> list[str]:
    """An answer's words, normalized: lower case, no markup or punctuation."""
    return re.findall(r"[a-z0-9]+(?:['.][a-z0-9]+)*", text.lower())


def written_answers(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{grade_id: text} of a notebook's written answers (markdown cells graded by hand)."""
    found = {}
    for cell in nb.cells:
        meta = _meta(cell)
        if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade"):
            found.setdefault(meta.get("grade_id"), cell.source)
    return found


def likeness(answer: str, other: str) -> tuple[float, int]:
    """How close an answer is to another text: (difflib's ratio of their normalized words, the number
    of runs of COPY_RUN words of the answer found in the other)."""
    import difflib

    a, b = _words(answer), _words(other)
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() if a and b else 0.0
    runs = {tuple(b[i : i + COPY_RUN]) for i in range(len(b) - COPY_RUN + 1)}
    shared = sum(tuple(a[i : i + COPY_RUN]) in runs for i in range(len(a) - COPY_RUN + 1))
    return ratio, shared


COPY_STRONG_RUNS = (
    3  # shared runs of COPY_RUN words from which a likeness is listed as a possible copy
)
# under this similarity, shared runs alone make a weaker likeness, not a possible copy (lecturer
# review s17, M6: an answer that quoted one sentence of the question, similarity 0.15, was listed
# among the possible copies)
WEAK_RATIO = 0.3


def submitted_at(course: Path, chapter: str, student: str) -> str | None:
    """When ``student`` submitted ``chapter``: the collected timestamp.txt (nbgrader's exchange
    writes it; :func:`check_timestamp` sets it to the exchange's own time where the two differ), as
    "YYYY-MM-DD HH:MM:SS UTC"; None without one."""
    path = course / "submitted" / student / chapter / "timestamp.txt"
    try:
        from nbgrader.utils import parse_utc

        when = parse_utc(path.read_text().strip())
    except Exception:  # noqa: BLE001 (no timestamp.txt, or one that is not a time)
        return None
    return f"{when:%Y-%m-%d %H:%M:%S} UTC"


def submission_times(course: Path, chapter: str, first: str, second: str) -> str:
    """The words that end a line about two students' alike answers: when each submitted, and who
    first (lecturer review s17, M6: the original author was listed exactly like the copier)."""
    a, b = (submitted_at(course, chapter, s) for s in (first, second))
    if a is None and b is None:
        return ""
    text = f"; submitted: {first} {a or 'at an unknown time'}, {second} {b or 'at an unknown time'}"
    if a and b and a != b:
        text += f", {first if a < b else second} first"
    return text


def strong_and_weak(flags: list[str]) -> tuple[list[str], list[str]]:
    """``copy_flags``' lines split (lecturer review s13: one shared run at similarity 0.36 was listed
    as "near-verbatim"): the possible copies (similarity >= COPY_RATIO or COPY_STRONG_RUNS runs or
    more at a similarity of WEAK_RATIO or more) and the weaker likenesses, each most similar first."""
    strong, weak = [], []
    for line in flags:
        found = re.search(r"similarity ([0-9.]+), (\d+) runs", line)
        ratio, runs = (float(found[1]), int(found[2])) if found else (1.0, COPY_STRONG_RUNS)
        copy = ratio >= COPY_RATIO or (runs >= COPY_STRONG_RUNS and ratio >= WEAK_RATIO)
        (strong if copy else weak).append((ratio, line))
    return [line for _, line in sorted(strong, key=lambda x: -x[0])], [
        line for _, line in sorted(weak, key=lambda x: -x[0])
    ]


def _with_class(course: Path, chapter: str, students: list[str]) -> list[str]:
    """``students`` and every other submission of ``chapter`` in ``submitted/``: a run that grades a
    few students (``--student``) compares them with the whole class (lecturer review s21, S2)."""
    return sorted(set(students) | set(submitted_students(course, chapter)))


def copy_flags(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The written answers that may be copies: near-verbatim (ratio >= COPY_RATIO) or sharing a run of
    COPY_RUN words with the model answer (the instructor's source) or with another student's answer to
    the same question. A line each, for the teacher to read: a flag, not a grade. The copies of the
    model answer come first; two students alike are one line, not one each way (lecturer review r4).
    ``students`` are compared with every submission of the chapter, the pairs of two students not in
    ``students`` left out (lecturer review s21, S2)."""
    source = course / "source" / chapter / f"{chapter}.ipynb"
    model = written_answers(nbformat.read(source, as_version=4)) if source.is_file() else {}
    graded = set(students)
    answers: dict[str, dict[str, str]] = {}
    for student in _with_class(course, chapter, students):
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        with contextlib.suppress(Exception):
            answers[student] = {
                k: v
                for k, v in written_answers(nbformat.read(path, as_version=4)).items()
                if len(_words(v)) >= COPY_RUN  # not the empty template
            }
    of_model, of_students = [], []
    for student, theirs in sorted(answers.items()):
        for grade_id, text in sorted(theirs.items()):
            others = [("the model answer", model.get(grade_id, ""))] if student in graded else []
            others += [
                (f"{other}'s answer", answers[other].get(grade_id, ""))
                for other in sorted(answers)
                if other > student  # each pair once
                and (student in graded or other in graded)
            ]
            for who, other in others:
                if len(_words(other)) < COPY_RUN:
                    continue
                ratio, shared = likeness(text, other)
                if ratio >= COPY_RATIO or shared:
                    line = (
                        f"{student} {grade_id}: like {who} (similarity {ratio:.2f}, "
                        f"{shared} runs of {COPY_RUN} words in common)"
                    )
                    if who == "the model answer":
                        of_model.append(line)
                    else:  # who: "<other>'s answer"
                        other_id = who[: -len("'s answer")]
                        times = submission_times(course, chapter, student, other_id)
                        of_students.append(line + times)
    return of_model + of_students


def _printed(cell) -> str:
    """What a submitted code cell showed, as submitted (the grader does not run it): its streams and
    its displayed results, text/plain, text/markdown and text/html with the tags left out (lecturer
    review s41, M1: the book's worked experiments show their numbers with ``display(Markdown(...))``,
    whose text/plain is "<IPython.core.display.Markdown object>", and alice was flagged "no run")."""
    out = []
    for output in cell.get("outputs", []) if cell is not None else []:
        out.append(_text(output.get("text", "")))
        data = output.get("data", {})
        out += [_text(data.get(kind, "")) for kind in ("text/plain", "text/markdown")]
        out.append(re.sub(r"<[^>]*>", " ", _text(data.get("text/html", ""))))
    return "".join(out)


def _text(value) -> str:
    """An output's text: nbformat keeps it as a string, or as a list of lines in the file."""
    return "".join(value) if isinstance(value, list) else str(value)


def holds_code(cell) -> bool:
    """Whether a code cell holds a line that runs: a cell of comments and blank lines prints
    nothing, so an output under it was typed into the notebook (lecturer review s41, M1: ivan's
    "# ran it in Colab" came with the book's numbers as its output)."""
    return any(
        line.strip() and not line.strip().startswith("#") for line in cell.source.splitlines()
    )


TYPED_OUTPUT = (
    "an output under a cell that holds no code (typed into the file, or left by code since deleted)"
)


def typed_outputs(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The code cells of each submission that hold outputs and no code: one line per student and
    cell, "<student> <grade_id or cell N>: ..." (lecturer review s41, M1)."""
    out = []
    for student in students:
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        try:
            cells = nbformat.read(path, as_version=4).cells
        except Exception:  # noqa: BLE001 (no notebook, or not one: said by the grading itself)
            continue
        for index, cell in enumerate(cells, 1):
            if cell.cell_type == "code" and cell.get("outputs") and not holds_code(cell):
                name = _meta(cell).get("grade_id") or f"cell {index}"
                out.append(f"{student} {name}: {TYPED_OUTPUT}")
    return out


BOOK_NUMBERS = "quotes the book's numbers with no run above it"
SIGNIFICANT = (
    2  # a rounded quote keeps this many significant digits at least (1.8 of 1.832, not 0.3)
)


def quoted_forms(number: str) -> list[str]:
    """How an answer may quote the book's ``number`` ("1.832"): as written, then rounded to fewer
    decimals, one at least (lecturer review s34, m3: "1.83 ... 15.5 ... 3.2" went unflagged), each
    with SIGNIFICANT digits at least: never a bare integer ("37" of 37.39, which an answer writes for
    many other reasons) nor "0.3" of 0.311."""
    from decimal import ROUND_HALF_UP, Decimal

    forms = [number]
    # "30%", "12": nothing to round (a percent made Decimal raise: the fresh-clone run of s34)
    if not re.fullmatch(r"\d+\.\d+", number):
        return forms
    value = Decimal(number)
    for places in range(-value.as_tuple().exponent - 1, 0, -1):
        rounded = str(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
        if len(rounded.replace(".", "").lstrip("0")) < SIGNIFICANT:
            break
        forms.append(rounded)
    return forms


def book_numbers_flags(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The written answers of an experiment that no checker grades (tools/rubric_claims.py's
    OWN_RUN) that quote the book's measured numbers (two of them, or the only one: a decimal or a
    percentage that the rubric names) while the exercise's code cell, as submitted, printed no
    number at all (lecturer review s32, M2: chapter 14's exercise 3 answered from the public book,
    unflagged). The rubric gives such an answer at most half the point; this says where to look."""
    import rubric_claims

    own = rubric_claims.OWN_RUN.get(chapter[:2], {})
    out = []
    for student in students if own else []:
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        try:
            cells = {_meta(c).get("grade_id"): c for c in nbformat.read(path, as_version=4).cells}
        except Exception:  # noqa: BLE001 (no notebook, or not one: said by the grading itself)
            continue
        for number, what in sorted(own.items()):
            written, code = cells.get(f"ex{number}_written"), cells.get(f"ex{number}_answer")
            book = list(dict.fromkeys(re.findall(r"\d+\.\d+|\d+%", what)))
            typed = code is not None and code.get("outputs") and not holds_code(code)
            if written is None or not book or (not typed and re.search(r"\d", _printed(code))):
                continue
            quoted = []  # each book number once: as written, or rounded where the book has two
            for n in book:
                forms = quoted_forms(n) if len(book) >= 2 else [n]
                found = next(
                    (
                        f
                        for f in forms
                        if re.search(rf"(?<![\d.]){re.escape(f)}(?![\d]|\.\d)", written.source)
                    ),
                    None,
                )
                if found:
                    quoted.append(found if found == n else f"{found} (the book's {n})")
            if len(quoted) >= min(2, len(book)):
                out.append(
                    f"{student} ex{number}_written: {BOOK_NUMBERS} (it quotes {', '.join(quoted)};"
                    f" the code cell ex{number}_answer "
                    + ("holds no code, its output typed in" if typed else "printed no number")
                    + "): at most half the point"
                    " by the rubric, unless the student ran it elsewhere"
                )
    return out


LOCKED_EDITED = "locked cell edited in the submission; graded with the original"


def _lines(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def edited_locked_cells(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The locked code cells (a test cell, a setup cell) that a submitted notebook holds edited: its
    source differs from the release's and the source's cell of the same ``grade_id`` (lecturer review
    s34, m2: frank's ``ex1_test`` rewritten to ``print('passed')`` was put back silently). nbgrader
    and the sandbox run the originals, so it costs nothing, but it is a deliberate act: one line per
    student and cell, "<student> <grade_id>: ..."."""
    originals: dict[str, set[str]] = {}
    for folder in ("release", "source"):
        path = course / folder / chapter / f"{chapter}.ipynb"
        with contextlib.suppress(Exception):
            for cell in nbformat.read(path, as_version=4).cells:
                meta = _meta(cell)
                if cell.cell_type == "code" and meta.get("locked") and not meta.get("solution"):
                    originals.setdefault(meta["grade_id"], set()).add(_lines(cell.source))
    out = []
    for student in students if originals else []:
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        try:
            cells = nbformat.read(path, as_version=4).cells
        except Exception:  # noqa: BLE001 (no notebook, or not one: said by the grading itself)
            continue
        edited = []
        for cell in cells:
            grade_id = _meta(cell).get("grade_id")
            if grade_id in originals and _lines(cell.source) not in originals[grade_id]:
                edited.append(grade_id)
        out += [f"{student} {g}: {LOCKED_EDITED}" for g in dict.fromkeys(edited)]
    return out


# code answers alike up to names, comments and spacing (lecturer review s11, M11: copied code went
# unflagged); an answer this many syntax nodes or more: a short one is often the same by chance
CODE_NODES = 40
SOLUTION_MARKS = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
)  # nbgrader's, as make_course writes them


def code_shape(source: str, template: str = "", keep_names: bool = False) -> tuple[str, int] | None:
    """An answer cell's code with every name renamed in order of appearance, docstrings dropped (the
    parser drops comments and spacing) and the statements of the answer cell's ``template`` left out
    where the student kept them (the stub ``def f(...): ...``, ``x = None``: lecturer review s13, a
    worked solution pasted under them went unflagged): (its dump, its number of syntax nodes), or
    None if it does not parse. Two answers with the same dump are the same code with other names;
    with ``keep_names``, the same code with the same names (near-verbatim: :data:`CHANCE_NODES`)."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return None
    with contextlib.suppress(SyntaxError, ValueError):
        kept = {ast.dump(statement) for statement in ast.parse(transform(template)).body}
        tree.body = [statement for statement in tree.body if ast.dump(statement) not in kept]
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        return name if keep_names else names.setdefault(name, f"n{len(names)}")

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]  # a docstring
        if isinstance(node, ast.Name):
            node.id = rename(node.id)
        elif isinstance(node, ast.arg):
            node.arg = rename(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.name = rename(node.name)
    return ast.dump(tree, annotate_fields=False), sum(1 for _ in ast.walk(tree))


def _must_write(statement: ast.stmt) -> bool:
    """Whether a class is one method of at most two statements (docstrings left out): chapter 13's
    position-1 classifier, ``class C(GPTClassifier)`` with a ``forward`` that takes the hidden states
    and applies the head to ``h[:, 1]``, which every right answer writes in the same few words
    (lecturer review s22, S6: 5 of 8 students were reported as having pasted the worked solution's
    ``FirstWordClassifier``). Such a class is not compared with the worked solution's alone; a
    whole cell the same as the worked solution still is."""

    def body(node) -> list:
        rest = node.body
        if rest and isinstance(rest[0], ast.Expr) and isinstance(rest[0].value, ast.Constant):
            rest = rest[1:]
        return rest

    if not isinstance(statement, ast.ClassDef):
        return False
    methods = body(statement)
    return (
        len(methods) == 1
        and isinstance(methods[0], ast.FunctionDef)
        and len(body(methods[0])) <= SHORT_METHOD
    )


SHORT_METHOD = 2  # statements of a one-method class that every right answer writes (_must_write)


def definition_shapes(source: str, keep_names: bool = False) -> dict[str, tuple[str, int]]:
    """{its name: (dump, syntax nodes)} of each top-level function or class of a cell of CODE_NODES
    nodes or more, normalised as ``code_shape`` normalises a cell (lecturer review s17, S2: a worked
    solution's function pasted without its demonstration lines, or with an import added, changed the
    cell's dump and went unflagged)."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return {}
    found = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if _must_write(statement):
                continue
            shape = code_shape(ast.unparse(statement), keep_names=keep_names)
            if shape and shape[1] >= CODE_NODES:
                found[statement.name] = shape
    return found


# Under this many syntax nodes, code that is the worked solution's only up to names is not called
# "the book's worked solution" (lecturer review s29, M2): where the statement fixes the answer's
# shape, short natural code coincides by chance. Measured on the review's case, chapter 16's
# discriminator_loss: the worked solution's function is 50 nodes (mask, labels, BCE with logits),
# and eve's and frank's, the same four lines with their own label name, 50 too; bob's own version is
# 50 nodes of another shape. The book's smallest worked functions whose statement fixes their shape
# (chapter 1's log_probs 46, chapter 4's local_m_weights 43, chapter 5's without_positions 45,
# chapter 18's tile_mask 46, chapter 11's bank_batch 58) all lie under 60. Such a match is a copy
# only if it is near-verbatim: the same code with the same names (comments and spacing aside).
CHANCE_NODES = 60
# how such a line says it: not a flag, not in the Formgrader's flags nor the export's warnings
BY_CHANCE = "expected by chance"


def _by_chance(size: int, mine: tuple | None, book: tuple | None) -> bool:
    """Whether code of ``size`` nodes that is the worked solution's up to names is a likeness
    expected by chance (:data:`CHANCE_NODES`): short, and its shape with names kept (``mine``) not
    the worked solution's (``book``), so not near-verbatim either."""
    return size < CHANCE_NODES and not (mine and book and mine[0] == book[0])


def _short_match(size: int, theirs: str, worked: str, template: str = "") -> bool:
    """:func:`_by_chance` for a whole answer cell ``theirs`` against the worked cell ``worked``."""
    mine, book = code_shape(theirs, template, keep_names=True), code_shape(worked, keep_names=True)
    return _by_chance(size, mine, book)


def code_answers(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{grade_id: source} of a notebook's code answer cells (nbgrader's solution cells)."""
    found = {}
    for cell in nb.cells:
        meta = _meta(cell)
        if cell.cell_type == "code" and meta.get("solution") and meta.get("grade_id"):
            found.setdefault(meta["grade_id"], cell.source)
    return found


def forbidden_shapes(source: nbformat.NotebookNode) -> dict[int, dict[str, tuple[str, int]]]:
    """{exercise number: {library function: its shape}} of the library functions each exercise's
    checker refuses (its module's ``REFUSALS``, with the functions ``_module_refusals`` adds, such
    as ``lib.alibi._slopes``) and their private twins (``masked_softmax`` and
    ``_masked_softmax``), shaped as ``definition_shapes`` shapes an answer's functions: an answer
    that retypes one is the same code (lecturer review s23, S2: chapter 3's exercise 4 answered with
    the body of ``lib.attention._masked_softmax`` got full marks and no flag)."""
    import textwrap

    try:
        _, exercises = plan_chapter(source)
    except ValueError:
        return {}
    found: dict[int, dict[str, tuple[str, int]]] = {}
    for exercise in exercises:
        with contextlib.suppress(ImportError):
            module = importlib.import_module(exercise.module)
            table = getattr(module, "REFUSALS", {}).get(exercise.checker, [])
            # the functions the refusal covers (lecturer review s24, S3: alibi_slopes' twin is
            # _slopes, not _alibi_slopes): the table's, and those the module-wide rule adds
            table = table + _module_refusals(table, exercise.statement)
            for target, _, _ in table:
                if not target.startswith("lib.") or "*" in target:
                    continue
                where, _, name = target.rpartition(".")
                twin = name[1:] if name.startswith("_") else f"_{name}"
                for full in dict.fromkeys((target, f"{where}.{twin}")):
                    function = _library_function(full)
                    with contextlib.suppress(OSError, TypeError):
                        text = textwrap.dedent(inspect.getsource(function)) if function else ""
                        for i, shape in enumerate(bare_shapes(text, inline_defaults=True)):
                            short = full.removeprefix(where.partition(".")[0] + ".")
                            found.setdefault(exercise.number, {})[f"{short}#{i}"] = shape
    return found


def bare_shapes(source: str, inline_defaults: bool = False) -> list[tuple[str, int]]:
    """The shapes (``code_shape``) of each top-level function of ``source`` without its annotations
    and defaults, the signature a student retypes differently (``def f(scores, mask)`` for the
    library's ``scores: Tensor, mask: Tensor | None = None, dim: int = -1``); with
    ``inline_defaults``, each also with its parameters of constant default (not None) written into
    the body as that constant (``dim=-1``)."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        variants = [node]
        arguments = node.args.posonlyargs + node.args.args
        constants = {}
        defaulted = arguments[len(arguments) - len(node.args.defaults) :]
        for a, d in zip(defaulted, node.args.defaults):
            with contextlib.suppress(ValueError, TypeError, SyntaxError):
                value = ast.literal_eval(d)  # -1 is a unary minus of a constant
                if value is not None and isinstance(value, (int, float, str, bool)):
                    constants[a.arg] = value
        if inline_defaults and constants:
            inlined = copy.deepcopy(node)
            for name_node in ast.walk(inlined):
                for field_name, value in ast.iter_fields(name_node):
                    if isinstance(value, ast.Name) and value.id in constants:
                        setattr(name_node, field_name, ast.Constant(constants[value.id]))
                    elif isinstance(value, list):
                        value[:] = [
                            ast.Constant(constants[v.id])
                            if isinstance(v, ast.Name) and v.id in constants
                            else v
                            for v in value
                        ]
            kept = [a for a in inlined.args.args if a.arg not in constants]
            inlined.args.args, inlined.args.defaults = kept, []
            variants.append(inlined)
        for variant in variants:
            bare = copy.deepcopy(variant)
            bare.returns, bare.args.defaults, bare.args.kw_defaults = None, [], []
            for a in bare.args.posonlyargs + bare.args.args + bare.args.kwonlyargs:
                a.annotation = None
            shape = code_shape(ast.unparse(bare))
            if shape and shape[1] >= CODE_NODES:
                found.append(shape)
    return found


def _library_function(full: str):
    """The function (or method) ``lib.x.f`` / ``lib.x.C.f`` names, or None."""
    parts = full.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        with contextlib.suppress(ImportError):
            value = importlib.import_module(".".join(parts[:cut]))
            for part in parts[cut:]:
                value = getattr(value, part, None)
            return value if callable(value) else None
    return None


def unchecked_answers(source: nbformat.NotebookNode) -> set[str]:
    """The grade_ids of the code answers of exercises that no checker gives points: an experiment
    (the chapter's own run, whose natural code is the worked one; its written answer is marked by
    hand) or a prediction, both 0 points. :func:`code_copy_flags` leaves them out (lecturer review s33, M4: honest students were
    flagged "the book's worked solution" in every chapter, on cells worth 0 points)."""
    try:
        _, exercises = plan_chapter(source)
    except ValueError:
        return set()
    checked = {e.number for e in exercises if e.points > 0}
    return {
        grade_id
        for grade_id in code_answers(source)
        if (number := re.match(r"ex(\d+)_", grade_id)) and int(number[1]) not in checked
    }


def code_copy_flags(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The code answers of CODE_NODES syntax nodes or more that are the same, up to names, comments and
    spacing, as the worked solution (the instructor's source) or as another student's answer to the
    same exercise: a line each, for the teacher to read (a flag, not a grade)."""
    source = course / "source" / chapter / f"{chapter}.ipynb"
    solutions: dict[str, str] = {}
    templates: dict[str, str] = {}
    forbidden: dict[int, dict[str, tuple[str, int]]] = {}
    unchecked: set[str] = set()
    if source.is_file():
        begin, end = SOLUTION_MARKS
        forbidden = forbidden_shapes(nbformat.read(source, as_version=4))
        unchecked = unchecked_answers(nbformat.read(source, as_version=4))
        for grade_id, text in code_answers(nbformat.read(source, as_version=4)).items():
            if begin in text:
                templates[grade_id], rest = text.split(begin, 1)
                solutions[grade_id] = rest.split(end, 1)[0]
    shapes: dict[str, dict[str, tuple[str, int]]] = {}
    definitions: dict[str, dict[str, dict[str, tuple[str, int]]]] = {}

    @functools.cache
    def worked_defs(grade_id: str) -> dict[str, tuple[str, int]]:
        return definition_shapes(solutions.get(grade_id, ""))

    graded = set(students)
    answers: dict[str, dict[str, str]] = {}
    for student in _with_class(course, chapter, students):  # lecturer review s21, S2
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        definitions[student], answers[student] = {}, {}
        with contextlib.suppress(Exception):
            theirs = answers[student] = code_answers(nbformat.read(path, as_version=4))
            definitions[student] = {k: definition_shapes(v) for k, v in theirs.items()}
            shapes[student] = {
                k: shape
                for k, v in theirs.items()
                if k not in unchecked
                and (shape := code_shape(v, templates.get(k, "")))
                and shape[1] >= CODE_NODES
            }
    of_model, of_students, by_chance = [], [], []
    for student, theirs in sorted(shapes.items()):
        for grade_id, (dump, size) in sorted(theirs.items()):
            solution = code_shape(solutions.get(grade_id, ""))
            if student not in graded:
                solution = None  # compared with the graded students below, not with the book
            theirs_text = answers[student].get(grade_id, "")
            if solution and solution[0] == dump:
                worked_text, template = solutions.get(grade_id, ""), templates.get(grade_id, "")
                if _short_match(size, theirs_text, worked_text, template):
                    by_chance.append(
                        f"{student} {grade_id}: short code like the worked solution's up to names "
                        f"({size} syntax nodes, under {CHANCE_NODES}; {BY_CHANCE})"
                    )
                else:
                    of_model.append(
                        f"{student} {grade_id}: the same code as the worked solution (up to names, "
                        f"comments and spacing; {size} syntax nodes)"
                    )
            worked = {d: name for name, (d, _) in worked_defs(grade_id).items()}
            whole = bool(solution and solution[0] == dump)  # said already
            for name, (their_dump, their_size) in definitions[student].get(grade_id, {}).items():
                if their_dump in worked and not whole and student in graded:
                    verbatim = definition_shapes(theirs_text, keep_names=True).get(name)
                    book = definition_shapes(solutions.get(grade_id, ""), keep_names=True).get(
                        worked[their_dump]
                    )
                    if _by_chance(their_size, verbatim, book):
                        by_chance.append(
                            f"{student} {grade_id}: the short function {name} is like the worked "
                            f"solution's {worked[their_dump]} up to names ({their_size} syntax "
                            f"nodes, under {CHANCE_NODES}; {BY_CHANCE})"
                        )
                        continue
                    of_model.append(
                        f"{student} {grade_id}: the function {name} is the worked solution's "
                        f"{worked[their_dump]} (up to names, comments and spacing; {their_size} "
                        "syntax nodes; the rest of the cell differs)"
                    )
            number = re.match(r"ex(\d+)_", grade_id)
            library = forbidden.get(int(number[1]), {}) if number and student in graded else {}
            library = {d: name.split("#")[0] for name, (d, _) in library.items()}
            retyped = bare_shapes(answers[student].get(grade_id, "")) if library else []
            for their_dump, their_size in retyped:
                if their_dump in library:
                    of_model.append(
                        f"{student} {grade_id}: the same code as the library's "
                        f"{library[their_dump].rpartition('.')[2]} (up to names, comments and "
                        f"spacing; {their_size} syntax nodes), which the exercise forbids"
                    )
            for other in sorted(shapes):
                if (
                    other > student
                    and (student in graded or other in graded)
                    and shapes[other].get(grade_id, ("", 0))[0] == dump
                ):
                    of_students.append(
                        f"{student} {grade_id}: the same code as {other}'s (up to names, comments "
                        f"and spacing; {size} syntax nodes)"
                        + submission_times(course, chapter, student, other)
                    )
    return of_model + of_students + by_chance


# --- the course's grading material: cases and references the students' package does not hold --------


def install_grading(folder: Path, module_name: str) -> str:
    """Put a course's grading material (``folder/chNN.py``; grading/__init__.py says what it holds)
    into the checker module ``module_name`` of this process: its ``SEEDS`` in place of the practice
    seeds, its ``REFERENCES`` in place of the practice references. The student's notebook checks
    against the practice ones; the points come from these. Returns a line for the log."""
    module = importlib.import_module(module_name)
    chapter = module_name.rpartition(".")[2]
    path = folder / f"{chapter}.py"
    if not path.exists():
        return f"{module_name}: no grading material ({path}): its checkers use their practice cases"
    spec = importlib.util.spec_from_file_location(f"_course_grading_{chapter}", path)
    grading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grading)
    seeds = dict(getattr(grading, "SEEDS", {}))
    practice = getattr(module, "SEEDS", {})
    references = dict(getattr(grading, "REFERENCES", {}))
    unknown = sorted(set(seeds) - set(practice)) + sorted(
        n for n in references if not hasattr(module, n)
    )
    if unknown:
        raise ValueError(f"{path}: {module_name} has no {', '.join(unknown)} to replace")
    practice.update(seeds)
    for name, function in references.items():
        setattr(module, name, function)
    return f"{module_name}: the grader's cases ({len(seeds)} seeds) and {len(references)} references from {path}"


# --- talking to the sandbox -------------------------------------------------------------------------


class ZygoteGone(RuntimeError):
    """The chapter's process does not answer: the grading run stops (a problem of the grader's, never
    a student's 0)."""


class SandboxStop(BaseException):
    """The child stopped (time, violation, exit, crash): the exercise is 0 with ``str()`` as the reason.
    A BaseException, so that the checker's own handlers of a student's errors do not catch it."""


def _receive(fd: int, deadline: float | None):
    import torch

    kind = read_exact(fd, 1, deadline)
    (n,) = struct.unpack(">Q", read_exact(fd, 8, deadline))
    if n > MAX_MESSAGE or kind not in (b"J", b"T"):
        raise SandboxStop(
            f"your answer sent the grader {n / 2**20:.0f} MB, more than it reads "
            f"({MAX_MESSAGE >> 20} MB)"
        )
    payload = read_exact(fd, n, deadline)
    if kind == b"J":
        return json.loads(payload)
    return torch.load(io.BytesIO(payload), weights_only=True)


def _send(fd: int, message, deadline: float) -> None:
    """Write a request; a child that stops reading cannot make the grader wait past ``deadline``."""
    import torch

    buffer = io.BytesIO()
    # the grader's pickling of a checker's tensor is no operation of the student's (chapter 18's
    # scores would note it as a read of every score; lecturer review s22, B1)
    with torch._C.DisableTorchFunctionSubclass():
        torch.save(message, buffer)
    data = b"T" + struct.pack(">Q", len(buffer.getvalue())) + buffer.getvalue()
    view = memoryview(data)
    while view:
        _, ready, _ = select.select([], [fd], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise TimeoutError
        view = view[os.write(fd, view[: 1 << 16]) :]


def encode(x):
    """The grader's inputs for the child (the checker's cases: tensors, numbers, lists, models ...)."""
    import numpy as np
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, tuple):
        return {"__tuple__": [encode(v) for v in x]}
    if isinstance(x, list):
        return [encode(v) for v in x]
    if isinstance(x, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in x.items()]}
    if isinstance(x, (set, frozenset)):
        return {"__set__": [encode(v) for v in x]}
    if isinstance(x, np.ndarray):
        return {"__ndarray__": torch.from_numpy(x.copy())}
    if isinstance(x, torch.nn.Module) and any(getattr(x, h, None) for h in _HOOKS):
        # the checker's hooks on a model (chapter 15's count of the model's calls, a local lambda
        # that cannot be pickled: every answer, the worked solution's too, got 0; found by the
        # canary, lecturer review s22, B1) stay here: the child gets the model without them
        x = copy.copy(x)
        for name in _HOOKS:
            if getattr(x, name, None):
                object.__setattr__(x, name, type(getattr(x, name))())
    # anything else of the checker's (a model of the chapter's, say) goes pickled: the child may
    # unpickle what the grader sends; the grader never unpickles what the child sends
    return x


# an nn.Module's hooks (the checker's, on a model it passes): not sent to the child
_HOOKS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_backward_hooks",
    "_backward_pre_hooks",
)


class Opaque:
    """A value of the student's that is not data (an object of their own class): its type's name and
    a short repr, which is all a checker's feedback says of it."""

    def __init__(self, text: str):
        self._text = text

    def __repr__(self) -> str:
        return self._text


def _library_class(path: str):
    """The class at ``path`` if it is a module class of the library (not a checker's) or of torch.nn,
    else None: the only classes the grader builds from what a child sends."""
    import torch

    module_name, _, name = path.rpartition(".")
    if not (
        (module_name.startswith("lib.") and not module_name.startswith("lib.exercises"))
        or module_name.startswith("torch.nn")
    ):
        return None
    with contextlib.suppress(ImportError, AttributeError):
        cls = getattr(importlib.import_module(module_name), name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            return cls
    return None


_NO_SETTING = object()


def _setting_value(setting: dict):
    """A module's setting from the child's data: plain data, or a dataclass of the library's (a config)
    made by calling it with plain fields; anything else is left out."""
    import dataclasses

    if "value" in setting:
        return decode(setting["value"])
    module_name, _, name = str(setting.get("dataclass", "")).rpartition(".")
    if module_name.startswith("lib.") and not module_name.startswith("lib.exercises"):
        with contextlib.suppress(Exception):
            cls = getattr(importlib.import_module(module_name), name)
            fields = decode(setting.get("fields"))
            if dataclasses.is_dataclass(cls) and isinstance(fields, dict):
                return cls(**fields)
    return _NO_SETTING


def _library_module(path: str, tree: dict):
    """A module of a library class (lib.*, torch.nn.*) rebuilt here from the child's data, to run here:
    each submodule as its own class (a library's or torch's; any other as a plain Module) with the
    student's weights and its settings (``reverse``, ``num_layers``, a config), put in place by the
    class's ``__setstate__``, as unpickling does, but from data only (the chapter's RNNLM that a
    student passes to chapter 11's checker)."""
    import torch

    if _library_class(path) is None:
        return Opaque(f"<{path.rpartition('.')[2]} module>")
    specs = dict(tree.get("modules", {}))
    built: dict[str, torch.nn.Module] = {}

    def build(key: str, depth: int = 0) -> torch.nn.Module:
        if key in built:
            return built[key]
        spec = dict(specs.get(key, {}))
        cls = _library_class(str(spec.get("class", ""))) or torch.nn.Module
        module = cls.__new__(cls)
        torch.nn.Module.__init__(module)
        built[key] = module
        state = dict(module.__dict__)  # torch's own bookkeeping (hooks) stays as Module made it
        settable = {"training", "_non_persistent_buffers_set"}
        for name, setting in dict(spec.get("settings", {})).items():
            value = _setting_value(dict(setting))
            if value is not _NO_SETTING and (str(name) not in state or str(name) in settable):
                state[str(name)] = value
        parameters = {str(n): None for n in spec.get("parameters", [])}  # None: bias=False
        buffers = {}
        for tname, value in dict(spec.get("tensors", {})).items():
            value = decode(value)
            if isinstance(value, torch.Tensor) and str(tname) in parameters:
                parameters[str(tname)] = torch.nn.Parameter(value, requires_grad=False)
            elif isinstance(value, torch.Tensor):
                buffers[str(tname)] = value
        children = {
            str(c): build(str(k), depth + 1)
            for c, k in spec.get("children", [])
            if depth < 50 and "." not in str(c)
        }
        state.update(_parameters=parameters, _buffers=buffers, _modules=children)
        if isinstance(
            state.get("_flat_weights_names"), list
        ):  # torch's RNNs: the weights as a list
            state["_flat_weights"] = [parameters.get(n) for n in state["_flat_weights_names"]]
        module.__setstate__(state)
        return module

    try:
        return build(str(tree.get("root")))
    except Exception:  # noqa: BLE001 (data that does not fit its class: the module is a name, no more)
        return Opaque(f"<{path.rpartition('.')[2]} module>")


_CALLER: list = []  # the child whose remote modules decode() builds (set by Answer.__call__)


def _remote_module(x: dict):
    """A module of the student's own class, rebuilt here as structure and weights (torch.nn layers as
    themselves, shared layers shared, the student's classes as plain modules of the same name), whose
    call runs the student's forward in the child."""
    import torch

    tree = dict(x.get("tree", {}))
    specs = dict(tree.get("modules", {}))
    built: dict[str, torch.nn.Module] = {}

    def build(key: str, depth: int = 0) -> torch.nn.Module:
        if key in built:
            return built[key]
        spec = dict(specs.get(key, {}))
        module_name, _, name = str(spec.get("class", "")).rpartition(".")
        cls = None
        if module_name.startswith("torch.nn"):
            with contextlib.suppress(ImportError, AttributeError):
                cls = getattr(importlib.import_module(module_name), name)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            cls = type(str(spec.get("name", "Module")), (torch.nn.Module,), {})
        if key == tree.get("root"):
            cls = type(str(x.get("name", "Module")), (_Remote,), {})
        module = cls.__new__(cls)
        torch.nn.Module.__init__(module)
        built[key] = module
        parameters = set(spec.get("parameters", []))
        for tname, value in dict(spec.get("tensors", {})).items():
            value = decode(value)
            if isinstance(value, torch.Tensor) and "." not in tname:
                with contextlib.suppress(KeyError, TypeError):
                    if tname in parameters:
                        module.register_parameter(tname, torch.nn.Parameter(value, False))
                    else:
                        module.register_buffer(tname, value)
        for aname, value in dict(spec.get("attributes", {})).items():
            if (
                str(aname).isidentifier()
                and not str(aname).startswith("_")
                and not hasattr(module, str(aname))
            ):
                if type(value) in (int, float, bool, str) or (
                    type(value) is tuple and all(type(i) is int for i in value)
                ):
                    module.__dict__[str(aname)] = value
        for cname, child_key in spec.get("children", []):
            if depth < 50 and "." not in str(cname):
                module._modules[str(cname)] = build(str(child_key), depth + 1)
        return module

    root = build(str(tree.get("root")))
    if isinstance(root, _Remote):
        root._remote = (_CALLER[-1] if _CALLER else None, int(x["__remote__"]))
        # the weights as the child has them: a later change here is sent with the next call
        root.__dict__["_sent_versions"] = {
            n: p._version for n, p in torch.nn.Module.named_parameters(root)
        }
    return root


def decode(x):
    """The child's data as the values a checker expects (never an object of the student's class)."""
    import numpy as np
    import torch

    if x is None or type(x) in (bool, int, float, str):
        return x
    if isinstance(x, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.as_subclass(x, torch.Tensor)
    if isinstance(x, list):
        return [decode(v) for v in x]
    if isinstance(x, tuple):
        return tuple(decode(v) for v in x)
    if isinstance(x, dict):
        if "__tuple__" in x:
            return tuple(decode(v) for v in x["__tuple__"])
        if "__set__" in x:
            values = [decode(v) for v in x["__set__"]]
            try:
                return set(values)
            except TypeError:
                return Opaque("a set")
        if "__dict__" in x:
            try:
                return {decode(k): decode(v) for k, v in x["__dict__"]}
            except TypeError:
                return Opaque("a dict")
        if "__ndarray__" in x:
            return x["__ndarray__"].numpy()
        if "__numpy__" in x:
            value = decode(x["__numpy__"])
            try:
                return np.dtype(str(x["dtype"])).type(value)
            except (TypeError, ValueError):
                return value
        if "__module__" in x:
            return _library_module(str(x["__module__"]), dict(x.get("tree", {})))
        if "__remote__" in x:
            return _remote_module(x)
        if "__object__" in x:
            kind = type(str(x["__object__"]), (Opaque,), {})
            return kind(str(x.get("repr", "")))
        return Opaque("a dict")
    return Opaque(type(x).__name__)


def _student_error(info: dict, note: str = "") -> BaseException:
    """An exception like the one the student's code raised in the child, raised here from the line of
    their cell it came from (so the checker's feedback names that line, as in the notebook)."""
    name = str(info.get("type", "Exception"))
    message = str(info.get("message", "")) + note
    builtin = getattr(builtins, name, None)
    if (
        info.get("builtin")
        and isinstance(builtin, type)
        and issubclass(builtin, Exception)
        and builtin not in (StopIteration, StopAsyncIteration)
    ):
        try:
            error = builtin(message)
        except Exception:  # noqa: BLE001
            error = type(name, (Exception,), {})(message)
    else:
        error = type(name if name.isidentifier() else "Exception", (Exception,), {})(message)
    frames = info.get("frames") or []
    if frames:
        filename, lineno = str(frames[-1][0]), int(frames[-1][1])
        if filename in linecache.cache and lineno > 0:
            try:
                exec(
                    compile("\n" * (lineno - 1) + "raise __error__", filename, "exec"),
                    {"__error__": error},
                )
            except Exception as raised:  # noqa: BLE001 (now with a frame at the student's line)
                return raised
    return error


# what a file written or read outside the scratch folder by C code raises (torch.save to a path, whose
# C++ writer makes no audit event for the hook to stop): the system's refusal, Landlock's or the user
# nobody's, "open file failed because of errno 13 on fopen: Permission denied" (lecturer review s41,
# m2: it went unlisted among the sandbox's stops)
DENIED = re.compile(
    r"Permission denied|errno 13\b|Operation not permitted|Read-only file system|\[Errno (?:1|13|30)\]"
)


def denied_by_system(info: dict | None) -> str | None:
    """The sentence the verdict adds when the student's code ended in the system's refusal of a file
    (:data:`DENIED`), else None. Without the error's text: a private case's may show its inputs."""
    if not info or not DENIED.search(f"{info.get('type')} {info.get('message')}"):
        return None
    return (
        f"Your code was refused a file by the system ({info.get('type')}: permission denied): a file "
        "written or read outside its scratch folder, by Python or by C code such as torch.save to a "
        "path, which the grader's sandbox does not allow."
    )


def _memory_note(info: dict, limit_gb: float) -> str:
    text = f"{info.get('type')} {info.get('message')}"
    if info.get("type") == "MemoryError" or "allocate" in text:
        return f" (the grader gives an answer {limit_gb:g} GB of memory)"
    return ""


class Child:
    """One sandboxed process running one student's answers to one exercise."""

    def __init__(self, zygote: Zygote, scratch: Path, limits: dict):
        self.zygote, self.limits = zygote, limits
        zygote.ready  # noqa: B018 (the chapter's code has run)
        requests_r, self.requests = os.pipe()
        self.replies, replies_w = os.pipe()
        order = {"scratch": str(scratch), "limits": limits}
        socket.send_fds(zygote.control, [json.dumps(order).encode()], [requests_r, replies_w])
        os.close(requests_r)
        os.close(replies_w)
        self.pid = zygote.receive(120)["pid"]
        self.ended: dict | None = None
        # why the grader itself killed it, for a later request that finds it gone (lecturer review
        # s38, m1: chapter 18's checker calls on after a call that ran out of time, and the student
        # read "crashed the Python process (signal 9)" instead of "did not finish")
        self.killed_because: str | None = None
        self.sandbox = self.receive(time.monotonic() + 120).get("sandbox", {})

    def receive(self, deadline: float | None):
        try:
            message = _receive(self.replies, deadline)
        except TimeoutError:
            raise
        except (EOFError, OSError):
            raise SandboxStop(self.why_ended()) from None
        except SandboxStop:
            raise
        except Exception as e:  # noqa: BLE001 (unreadable: the student wrote into the pipe)
            self.kill()
            raise SandboxStop(
                f"the grader could not read what your answer sent back ({e})"
            ) from None
        if isinstance(message, dict) and "violation" in message:
            self.kill()
            raise SandboxStop(
                f"your code tried to {message['violation']}, which the grader's sandbox does not allow"
            )
        return message

    def why_ended(self) -> str:
        try:
            ended = self.wait(5)
        except TimeoutError:  # it closed its pipe and goes on: stopped here
            self.kill()
            return "your code closed the sandbox's pipe to the grader, so it was stopped"
        if ended.get("exit") == VIOLATION_EXIT:
            return "your code did something the grader's sandbox does not allow, so it was stopped"
        if ended.get("killed") and self.killed_because:
            return self.killed_because
        if ended.get("signal") == signal.SIGXCPU and not ended.get("killed"):
            return (
                f"your code used more than {self.limits['cpu_seconds']} s of CPU time (the grader's "
                "limit), so it was stopped"
            )
        if ended.get("signal") == signal.SIGKILL and not ended.get("killed"):
            # the CPU limit's last step, or the system when the process took too much memory
            return (
                f"your code was stopped by the system (signal 9): it ran past its CPU time "
                f"({self.limits['cpu_seconds']} s) or its memory "
                f"({self.limits['memory_bytes'] / 2**30:g} GB), the grader's limits. Look for a "
                "loop whose condition never becomes false, or one that keeps a value at every step"
            )
        if "signal" in ended:
            return f"your code crashed the Python process (signal {ended['signal']})"
        return (
            f"your code ended the process (exit status {ended.get('exit')}: sys.exit or os._exit?) "
            "before the check could run"
        )

    def request(self, message: dict, seconds: float):
        deadline = time.monotonic() + seconds
        try:
            _send(self.requests, message, deadline)
            return self.receive(deadline)
        except TimeoutError:
            self.kill()
            raise
        except OSError:  # the child is gone (a broken pipe)
            raise SandboxStop(self.why_ended()) from None

    def wait(self, timeout: float = 10) -> dict:
        if self.ended is None:
            self.ended = self.zygote.receive(timeout)
        return self.ended

    def kill(self, because: str | None = None) -> None:
        """Kill the process; ``because``: what a later request that finds it gone says."""
        if self.ended is None:
            self.killed_because = because
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            self.wait()
            self.ended["killed"] = True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.requests)
        if self.ended is None:
            try:
                self.ended = self.zygote.receive(2)
            except TimeoutError:
                self.kill()
        with contextlib.suppress(OSError):
            os.close(self.replies)


class Zygote:
    """The chapter's process: it ran the chapter's code up to the exercises, and forks the children."""

    def __init__(self, story: list[dict], read: list[str], private: list[str], work: Path):
        self.work = work
        plan = work / "plan.json"
        plan.write_text(
            json.dumps({"root": str(ROOT), "story": story, "read": read, "private": private})
        )
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = open(work / "zygote.log", "wb")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if not k.startswith("JPY")}
        env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        use_book_kernels(env)
        self.process = subprocess.Popen(
            [sys.executable, str(SANDBOX), str(plan), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=work,
            env=env,
        )
        theirs.close()
        self._ready: dict | None = None

    @property
    def ready(self) -> dict:
        """The zygote's report once it has run the chapter's code (it starts at once and runs while
        nbgrader's autograde does its part)."""
        if self._ready is None:
            self._ready = self.receive(900)
            if self._ready.get("errors"):
                # what it means for the grades and what to do (course review s27, M1)
                print(
                    "note: a cell of the chapter's own code, before the exercises, failed in the "
                    "sandbox (usually one of the chapter's checks of its text, on numbers that "
                    "training gave otherwise on this machine):"
                )
                for error in self._ready["errors"]:
                    print("  ", error)
                print(
                    "   The grades are safe if the next line reads 'worked solutions: N/N exercises "
                    "full marks': the worked solutions ran on the same code. Otherwise grading "
                    "stops before any student; report the lines above either way."
                )
        return self._ready

    def receive(self, timeout: float | None = None) -> dict:
        ready, _, _ = select.select([self.control], [], [], timeout)
        if not ready:
            raise ZygoteGone(f"the sandbox's zygote did not answer in {timeout} s")
        data = self.control.recv(1 << 16)
        if not data:
            log = (self.work / "zygote.log").read_text(errors="replace")[-2000:]
            raise ZygoteGone(f"the sandbox's zygote ended:\n{log}")
        return json.loads(data)

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class _Remote(torch.nn.Module):
    """The root of a student's module (``_remote_module``): its forward runs in the child."""

    def forward(self, *args):
        holder, index = getattr(self, "_remote", (None, 0))
        if holder is None:
            raise RuntimeError("this module's forward is in the sandbox, which has ended")
        info = {"function": index, "name": type(self).__name__}
        # the weights a checker changed here since the child last had them go with the call, so the
        # forward that runs there uses the layers the checker sees (lecturer review s23, S1: chapter
        # 7's check adds noise to a head's layer and requires the output to follow)
        sent = self.__dict__.setdefault("_sent_versions", {})
        named = dict(torch.nn.Module.named_parameters(self))
        state = {n: p.detach().clone() for n, p in named.items() if sent.get(n) != p._version}
        sent.update({n: p._version for n, p in named.items()})
        return Answer(holder._child, info, None, holder._grader, state)(*args)


@dataclass
class _Holder:
    """Which child a module decoded from its data belongs to."""

    _child: Child
    _grader: Grader


class Answer:
    """A student's function, as a checker sees it: calling it runs it in the child; ``__code__`` is
    its code compiled here from the student's source (never run here)."""

    def __init__(self, child: Child, info: dict, code, grader: Grader, state: dict | None = None):
        self._child, self._index, self._grader = child, int(info["function"]), grader
        self._state = state or {}  # a module's weights changed here: {name: tensor} (_Remote)
        self.__name__ = self.__qualname__ = str(info.get("name", "function"))
        if code is not None:
            self.__code__ = code
            with contextlib.suppress(TypeError, ValueError):  # its parameters, for inspect
                self.__signature__ = inspect.signature(types.FunctionType(code, {}))
        self.__globals__ = {str(k): decode(v) for k, v in dict(info.get("globals", {})).items()}

    def __call__(self, *args):
        import torch

        from lib import exercises

        limit = exercises.CALL_TIME_LIMIT or self._grader.time_limit
        seconds = limit + 5
        # what a later call says if the checker goes on after this one ran out of time (s38, m1)
        late = (
            f"an earlier call of your `{self.__name__}` did not finish in {limit:g} s (the hidden "
            "cases are small: a right answer takes far less), so the grader stopped it. Look for a "
            "loop whose condition never becomes false."
        )
        try:
            reply = self._child.request(
                # with grad as the checker's call() set it (chapter 3's exercise 1 calls with it on:
                # a copy into a parameter outside no_grad fails there, as in the student's own run)
                {
                    "op": "call",
                    "fn": self._index,
                    "args": [encode(a) for a in args],
                    "grad": torch.is_grad_enabled(),
                    "state": self._state,
                },
                seconds,
            )
        except TimeoutError:
            self._child.killed_because = self._child.killed_because or late
            raise exercises._TimeLimit from None
        except exercises._TimeLimit:  # the checker's own time limit (lib.exercises.call)
            self._child.kill(late)
            raise
        except BaseException:
            self._child.kill()
            raise
        if not isinstance(reply, dict):
            raise SandboxStop("the grader could not read what your function returned")

        if "refused" in reply:
            self._grader.refuse(int(reply["refused"]))
        if "error" in reply:
            info = dict(reply["error"])
            self._grader.note_denied(info)
            raise _student_error(info, _memory_note(info, self._grader.memory_gb))
        for arg, after in zip(args, reply.get("inputs", [])):  # an input changed in place
            if isinstance(arg, torch.Tensor) and isinstance(after, torch.Tensor):
                # as plain tensors: the copy is no operation of the student's (chapter 18's
                # scores would note it as a read of every score)
                with torch._C.DisableTorchFunctionSubclass():
                    if after.shape == arg.shape and after.dtype == arg.dtype:
                        arg.copy_(after)
        for arg, state in zip(args, reply.get("states") or []):  # what the argument noted there
            if state is not None and hasattr(type(arg), "__sandbox_restore__"):
                type(arg).__sandbox_restore__(arg, decode(state))
        _CALLER.append(self)  # a module it returns calls back through this child
        try:
            return decode(reply.get("result"))
        finally:
            _CALLER.pop()


def _code_of(source: str, filename: str, name: str, firstlineno: int):
    """The code object of the function ``name`` defined at ``firstlineno`` of a student's cell,
    compiled here (compiling runs nothing), or None."""
    try:
        code = compile(transform(source), filename, "exec")
    except (SyntaxError, ValueError):
        return None
    todo = [code]
    while todo:
        c = todo.pop()
        if c.co_name == name and c.co_firstlineno == firstlineno:
            return c
        todo.extend(k for k in c.co_consts if hasattr(k, "co_consts"))
    return None


def _stand_in(info: dict):
    """A code object for a function not defined by a ``def`` of the answer cell: the names it uses
    and whether it is a stub, as the child read them (checks of a constraint read only these)."""

    def busy():
        return 1

    def stub():
        pass

    code = (stub if info.get("stub") else busy).__code__
    names = tuple(str(n) for n in info.get("names", []))
    return code.replace(co_names=names, co_filename=str(info.get("filename", "<answer>")))


def _module_refusals(refusals: list, statement: str) -> list:
    """More refusals (``REFUSALS``' form) for each library function the table refuses on every call,
    ``lib.X.f``: every function of ``lib.X`` where the statement says "without `lib.X`", private ones
    included; else the functions of ``lib.X`` that ``f`` calls, at any depth (lecturer review s22,
    S3: ``lib.alibi._slopes``, which does ``alibi_slopes``' work, passed; ``lib.bpe._apply`` too).
    Each refuses as ``f``'s refusal does, naming itself where the refusal is made by
    ``lib.exercises.refusing`` ("it called the library's _slopes; ...")."""
    found, seen = [], {target for target, _, _ in refusals}
    for target, when, raiser in refusals:
        if when is not None or "*" in target or not target.startswith("lib."):
            continue
        module_name, _, name = target.rpartition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue  # a class's method (lib.transformer.EncoderLayer.forward)
        own = {
            key: value
            for key, value in vars(module).items()
            if isinstance(value, types.FunctionType) and value.__module__ == module_name
        }
        if re.search(rf"without\s+`?{re.escape(module_name)}\b", statement, re.IGNORECASE):
            names = set(own)
        else:  # the helpers behind f: the module's functions its code names, and theirs
            names, todo = set(), [name]
            while todo:
                function = own.get(todo.pop())
                codes = [function.__code__] if function else []
                while codes:
                    code = codes.pop()
                    codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
                    todo += [n for n in code.co_names if n in own and n not in names]
                    names |= {n for n in code.co_names if n in own}
        for key in sorted(names):
            if f"{module_name}.{key}" not in seen:
                seen.add(f"{module_name}.{key}")
                # named as it is called (course46 M3: `_slopes`, not `alibi_slopes`)
                naming = getattr(raiser, "naming", None)
                found.append((f"{module_name}.{key}", None, naming(key) if naming else raiser))
    return found


def _checker_own_refusals(module) -> list:
    """A refusal (``REFUSALS``' form) of each function of a chapter's checker module but its checkers
    and the few the chapter's own cells call (its exact references, such as chapter 2's ``_sharpened``
    or chapter 17's public ``rope_reference``, and its helpers): an answer that calls one, under any
    name, gets 0 for that exercise (lecturer review s15, S1: the public ones too)."""
    refusals = []
    for name, value in sorted(vars(module).items()):
        if (
            not name.startswith("__")
            and not name.startswith("check_")
            and name not in TEMPLATE_FUNCTIONS
            and isinstance(value, types.FunctionType)
            # the module's own, or the course's reference put in its place (install_grading)
            and value.__module__
            in (module.__name__, f"_course_grading_{module.__name__.rpartition('.')[2]}")
            and not value.__code__.co_freevars
        ):
            target = f"{module.__name__}.{name}"

            def raiser(*args, _target=target, **kwargs):
                raise RuntimeError(
                    f"it called `{_target}`, the checker's own code, which an answer may not use"
                )

            refusals.append((target, None, raiser))
    return refusals


@dataclass
class Result:
    student: str
    test: str
    points: float
    score: float
    message: str
    seconds: float
    sandbox: dict = field(default_factory=dict)
    review: bool = (
        False  # the teacher must look: the answer uses a name of a cell the student added
    )
    withheld: list[str] = field(default_factory=list)  # full messages left out of the feedback
    # a wrong per-student number that is a classmate's right one: "alice (softmax_params)" (s21, M5)
    classmates: list[str] = field(default_factory=list)
    # a prediction computed with the library: the call, "lib.gpt.count_parameters" (s22, M6)
    computed: str | None = None


@contextlib.contextmanager
def _settings_put_back(environment: dict[str, str]):
    """The child's environment in os.environ while one grading runs; after it, os.environ and the
    settings of lib.exercises that a grading changes as they were before."""
    from lib import exercises as lib_exercises

    saved = (
        lib_exercises._cell_above_crashed,
        lib_exercises.CALL_TIME_LIMIT,
        lib_exercises.WITHHOLD_EXCEPTION_TEXT,
        lib_exercises.CASES_WORD,
    )
    saved_environment = {k: os.environ.get(k) for k in environment}
    os.environ.update(environment)
    try:
        yield
    finally:
        (
            lib_exercises._cell_above_crashed,
            lib_exercises.CALL_TIME_LIMIT,
            lib_exercises.WITHHOLD_EXCEPTION_TEXT,
            lib_exercises.CASES_WORD,
        ) = saved
        for key, value in saved_environment.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _not_graded(
    student: str, exercise: Exercise, error: Exception, private: bool, withheld: list[str]
) -> str:
    """The student's sentence when the checker could not run on what came back (0 points), after
    the traceback and a note for the teacher on stderr; a private checker's error text is withheld."""
    from lib import exercises as lib_exercises

    traceback.print_exc()
    print(
        f"note: {exercise.test} of {student}: the checker {exercise.checker} did not run in "
        "the sandbox (above); grade this exercise another way (nbgrader autograde)",
        file=sys.stderr,
    )
    said = f"{type(error).__name__}: {str(error)[:200]}"
    if private:
        withheld.append(said)
        said = f"{type(error).__name__}; {lib_exercises.WITHHELD_NOTE}"
    return (
        f"✗ {exercise.checker.removeprefix('check_')}: 0 points. The grader could not grade "
        f"this exercise in its sandbox ({said}); your teacher has been told."
    )


class Grader:
    """Grades every test cell of one chapter for some students."""

    def __init__(
        self,
        course: Path,
        chapter: str,
        *,
        time_limit: float = 10,
        cell_limit: float = 120,
        cpu_limit: float = 600,
        memory_gb: float = 4,
        exchange: Path | None = None,
        read: list[str] | None = None,
    ):
        self.course, self.chapter = course.resolve(), chapter
        self.time_limit, self.cell_limit, self.cpu_limit = time_limit, cell_limit, cpu_limit
        self.memory_gb = memory_gb
        source = nbformat.read(self.course / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        self.story, self.exercises = plan_chapter(source)
        self.story_names = set().union(*(_names(c["source"])[0] for c in self.story))
        self.story_names |= set(dir(builtins))
        self.work = Path(tempfile.mkdtemp(prefix=f"grade-{chapter[:2]}-"))
        self.work.chmod(0o711)
        # the course's folder, the exchange and the repository's grading material stay out of reach
        private = [str(self.course), str(ROOT / "grading")]
        private += [str(exchange.resolve())] if exchange else []
        self.zygote = Zygote(self.story, self._readable(read or []), private, self.work)
        self.refusals: list = []
        grading = self.course / "grading"
        if not grading.is_dir():  # a course written before its grading material was
            grading = ROOT / "grading"
        for name in sorted({e.module for e in self.exercises}):
            print(install_grading(grading, name))
        # the chapters graded on their practice cases, which the students' package holds
        self.public = {
            e.module
            for e in self.exercises
            if not (grading / f"{e.module.rpartition('.')[2]}.py").exists()
        }
        # per-student variants (make_course.py --variants): each student's numbers, here and in the child
        marker = grading / "variants.json"
        self.variants = json.loads(marker.read_text())["course"] if marker.exists() else None
        # whose right answers a wrong per-student number is compared with: the whole class in
        # submitted/, those graded later included (main sets it; lecturer review s21, M5)
        self.classmates: list[str] = []

    def _readable(self, extra: list[str]) -> list[str]:
        """What a child may read: Python's installation, the book's library, the system's folders."""
        paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
        holds_course = lambda p: Path(p).resolve() in (self.course, *self.course.parents)  # noqa: E731
        paths |= {
            p
            for p in sys.path
            if p and Path(p).is_dir() and not holds_course(p) and Path(p).resolve() != ROOT
        }
        paths |= {str(ROOT / "lib"), "/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/sys"}
        paths |= {"/dev/urandom", "/dev/null", "/dev/zero"} | set(extra)
        readable = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
        for p in readable:  # none may hold the course (its gradebook, the submissions)
            if self.course == Path(p) or Path(p) in self.course.parents:
                raise SystemExit(
                    f"the course folder {self.course} lies inside {p}, which the sandbox must let "
                    "answers read: put the course elsewhere"
                )
        return readable

    def refuse(self, index: int):
        _, _, raiser = self.refusals[index]
        raiser()  # the checker's own exception (RuntimeError, _MaskUsed, ...)
        raise RuntimeError("it called a library function the exercise does not allow")

    def grade(
        self, student: str, submission: nbformat.NotebookNode, computed: bool = True
    ) -> list[Result]:
        """Every exercise's verdict; ``computed=False`` leaves out :func:`prediction_review` (the
        worked solutions check their predictions with the library, after making them)."""
        answers = answers_of(submission)
        added = added_definitions(submission)
        story = [c["source"] for c in self.story]
        return [
            (prediction_review if computed else lambda r, *_: r)(
                checker_review(
                    needs_review(self.grade_one(student, exercise, answers), added),
                    exercise,
                    answers,
                ),
                exercise,
                answers,
                story,
            )
            for exercise in self.exercises
        ]

    # Long by its error handling: each way a grading can end gives the student its own sentence.
    def grade_one(self, student: str, exercise: Exercise, answers: dict[str, str]) -> Result:
        from lib import exercises as lib_exercises

        # the chapter's code runs once, before the first answer: not counted in this answer's time
        # (lecturer review s13: the first student's first exercise showed 45 s)
        self.zygote.ready  # noqa: B018
        start = time.monotonic()
        scratch = self.work / f"{_safe(student)}-{exercise.test}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(mode=0o700)
        module = importlib.import_module(exercise.module)
        check = getattr(module, exercise.checker)
        self.refusals = list(getattr(module, "REFUSALS", {}).get(exercise.checker, []))
        self.refusals += _module_refusals(self.refusals, exercise.statement)
        self.refusals += _checker_own_refusals(
            module
        )  # the checker's own code, such as its references
        cells = _needed(_exercise_cells(exercise, answers), self.story_names, exercise.args)
        limits = self._limits(student)
        score, message, child, crash_text, matched = 0.0, "", None, None, []
        self.denied: list[str] = []  # the system's refusals of a file (note_denied)
        private = exercise.module not in getattr(self, "public", ())
        with _settings_put_back(limits["environment"]):
            lib_exercises.WITHHOLD_EXCEPTION_TEXT = private  # review r3, problem 11
            # the grader's own cases are hidden from the students; the book's ship with the package
            lib_exercises.CASES_WORD = "hidden" if private else "practice"
            withheld = lib_exercises.WITHHELD = []
            try:
                child, reply = self._run_cells(exercise, cells, scratch, limits)
                crash = reply.get("crash")
                crash_text = self._crash_text(crash, answers) if crash else None
                lib_exercises._cell_above_crashed = lambda: crash_text
                lib_exercises.CALL_TIME_LIMIT = self.time_limit
                args = [self._argument(child, info, cells) for info in reply["args"]]
                verdict = check(*args)
                message = str(verdict)
                if verdict.passed:
                    score = exercise.points
            except lib_exercises.ExerciseFailed as e:
                message = (
                    f"✗ {e.exercise}: not yet right. {lib_exercises._sentence(e.message, e.names)}"
                )
                if exercise.collected and not crash_text:
                    message += every_mistake(check, args, e.message)
                    if exercise.number not in getattr(module, "VARIANTS", {}):  # per-student
                        message += unjudged_predictions(  # numbers: no one book value
                            exercise.references, exercise.args, args, e.message
                        )
                if self.variants and exercise.number in getattr(module, "VARIANTS", {}):
                    matched = classmates_answer(check, args, student, self.classmates)
            except SandboxStop as e:
                message = (
                    f"✗ {exercise.checker.removeprefix('check_')}: 0 points. {_sentence(str(e))}."
                )
            except _Missing as e:
                message = f"✗ {exercise.checker.removeprefix('check_')}: 0 points. {e}"
            except ZygoteGone:
                raise
            except Exception as e:  # noqa: BLE001 (the checker could not run on what came back: 0, said)
                message = _not_graded(student, exercise, e, private, withheld)
            finally:
                if child is not None:
                    child.close()
                if not os.environ.get("GRADE_KEEP_SCRATCH"):
                    shutil.rmtree(scratch, ignore_errors=True)
        if self.denied and not STOPPED.search(message):  # listed with the sandbox's stops
            message = f"{message.rstrip()} {self.denied[0]}"
        if not private:
            message = public_wording(message)
        message = graded_wording(message)
        return Result(
            student,
            exercise.test,
            exercise.points,
            score,
            message,
            time.monotonic() - start,
            child.sandbox if child is not None else {},
            withheld=list(withheld),
            classmates=matched,
        )

    def _limits(self, student: str) -> dict:
        """The child's resource limits, and its environment: whose numbers a checker with
        per-student variants uses (lib.exercises.variant), here and in the child (where the
        student's cells may ask for them)."""
        from lib import exercises as lib_exercises

        environment = {lib_exercises.STUDENT_ENV: student}
        if self.variants:
            environment[lib_exercises.VARIANTS_ENV] = self.variants
        return {
            "memory_bytes": int(self.memory_gb * 2**30),
            "cpu_seconds": self.cpu_limit,
            "file_bytes": 64 << 20,
            "processes": 64,
            "environment": environment,
        }

    def _run_cells(self, exercise: Exercise, cells: list[dict], scratch: Path, limits: dict):
        """A child that ran ``cells`` one by one, and its reply with the test's arguments. An earlier
        exercise's answer cell that stops the child (a loop, a violation, an exit) is left out and the
        cells are run again in a new child: it costs its own exercise, not this one."""
        refusals = [
            {"target": target, "when": when or "always"} for target, when, _ in self.refusals
        ]
        skipped: set[int] = set()
        while True:
            child = Child(self.zygote, scratch, limits)
            crash = None
            try:
                for i, cell in enumerate(cells):
                    if i in skipped:
                        continue
                    try:
                        reply = child.request(
                            {"op": "cell", "cell": cell, "refusals": refusals}, self.cell_limit
                        )
                    except (TimeoutError, SandboxStop) as stop:
                        if cell["optional"]:
                            skipped.add(i)
                            raise _Again from None
                        if isinstance(stop, TimeoutError):
                            raise SandboxStop(
                                f"your answer cell did not finish in {self.cell_limit:g} s (the "
                                "grader's limit for running it; does a loop never end?)"
                            ) from None
                        raise
                    if cell["student"] and not cell["optional"] and crash is None:
                        crash = reply.get("crash")
                reply = child.request({"op": "args", "args": exercise.args}, self.cell_limit)
                return child, {**reply, "crash": crash}
            except _Again:
                child.close()
            except BaseException:
                child.close()
                raise

    def note_denied(self, info: dict | None) -> None:
        """Keep :func:`denied_by_system`'s sentence for the verdict of the exercise being graded."""
        sentence = denied_by_system(info)
        if sentence and sentence not in getattr(self, "denied", []):
            self.denied = [*getattr(self, "denied", []), sentence]

    def _crash_text(self, crash: dict, answers) -> str:
        from lib.exercises import _at_line

        self.note_denied(crash)

        if "refused" in crash:
            try:
                self.refuse(int(crash["refused"]))
            except BaseException as e:  # noqa: BLE001
                crash = {"type": type(e).__name__, "message": str(e), "frames": crash.get("frames")}
        frames = crash.get("frames") or []
        where = ""
        if frames:
            filename, lineno, line = frames[-1]
            where = " " + _at_line(
                traceback.FrameSummary(str(filename), int(lineno), "", line=str(line))
            )
        text = str(crash.get("message", "")).strip()[:300].rstrip(".")
        return f"the cell above stopped with {crash.get('type')}{where}" + (
            f": {text}" if text else ""
        )

    def _argument(self, child: Child, info: dict, cells: list[dict]):
        from lib import exercises as lib_exercises

        if "data" in info:
            _CALLER.append(_Holder(child, self))
            try:
                return decode(info["data"])
            finally:
                _CALLER.pop()
        if "library" in info:
            path = str(info["library"])
            module_name, _, name = path.rpartition(".")
            if module_name.startswith("lib.") and not module_name.startswith("lib.exercises"):
                with contextlib.suppress(ImportError, AttributeError):
                    return getattr(importlib.import_module(module_name), name)
            return Opaque(path)
        if "missing" in info:
            error = dict(info["missing"])
            crash = lib_exercises._cell_above_crashed()
            if crash:
                raise _Missing(f"{_sentence(crash)}, so the test could not read your answer.")
            raise _Missing(
                f"the test could not read your answer: {error.get('type')}: {error.get('message')}"
                " (did the answer cell define it?)"
            )
        code = None
        filename = str(info.get("filename", ""))
        for cell in cells:
            if cell["student"] and cell["filename"] == filename:
                code = _code_of(
                    cell["source"], filename, str(info.get("name")), int(info.get("firstlineno", 0))
                )
        if code is None and "filename" in info:
            code = _stand_in(info)
        return Answer(child, info, code, self)

    def close(self) -> None:
        self.zygote.close()
        shutil.rmtree(self.work, ignore_errors=True)


def classmates_answer(check, args: list, student: str, classmates: list[str]) -> list[str]:
    """The classmates whose right answer a wrong answer of ``student`` to an exercise with per-student
    numbers is, as "alice (softmax_params)": each part the student got wrong (checked alone, the
    others unwritten) that is right for the classmate (lecturer review s21, M5: erin's typed copy of
    alice's numbers read as ordinary wrong numbers). For the teacher, in the copy report and the
    flags: evidence of copying that no likeness of the text gives. Several students may share a
    variant: a match names whose right answer it is, not who copied from whom."""
    from lib import exercises as lib_exercises

    names = list(inspect.signature(check).parameters)

    def right(who: str, i: int) -> bool:  # part i alone passes, or is "right so far"
        os.environ[lib_exercises.STUDENT_ENV] = who
        try:
            check(*[a if j == i else None for j, a in enumerate(args)])
        except Exception:  # noqa: BLE001 (wrong, or not checkable alone)
            return False
        return True

    saved = os.environ.get(lib_exercises.STUDENT_ENV)
    try:
        wrong = [i for i, a in enumerate(args) if a is not None and not right(student, i)]
        found = []
        for other in classmates:
            if other == student or not wrong:
                continue
            parts = [i for i in wrong if right(other, i)]
            if parts:
                found.append(f"{other} ({', '.join(names[i] for i in parts)})")
        return found
    finally:
        if saved is None:
            os.environ.pop(lib_exercises.STUDENT_ENV, None)
        else:
            os.environ[lib_exercises.STUDENT_ENV] = saved


ALSO_WRONG = "Checked one by one at collection, also not right:"


def every_mistake(check, args: list, first: str) -> str:
    """The other parts' mistakes of a prediction with several parts, for its verdict at collection
    (lecturer review s21, M4: the feedback named only the first one). A checker stops at its first
    mistake, in the student's notebook as here; at collection each part is checked again on its own,
    the others left unwritten (None), and every mistake found is added below :data:`ALSO_WRONG`. The
    points do not change: the full check decided them. A part the checker cannot check alone (an
    error other than a named mistake) adds nothing."""
    from lib import exercises as lib_exercises

    if len(args) < 2:
        return ""
    found, right = [], []
    for i in range(len(args)):
        if args[i] is None:
            continue
        try:
            verdict = check(*[a if j == i else None for j, a in enumerate(args)])
        except lib_exercises.ExerciseFailed as e:
            if e.message != first and e.message not in found:
                found.append(e.message)
            continue
        except Exception:  # noqa: BLE001, S112 (this part cannot be checked alone: nothing to add)
            continue
        names = getattr(verdict, "names", ())
        if getattr(verdict, "status", "") == "not attempted" and i < len(names):
            right.append(names[i])
    text = f"\n{ALSO_WRONG}" + "".join(f"\n- {m}" for m in found) if found else ""
    if right and (found or len(right) < len(args)):
        text += f"\nRight when checked alone: {', '.join(right)}."
    return text


def _names(source: str) -> tuple[set[str], set[str]]:
    """(names a cell binds at its top level, names it reads), from its text (parsed, never run)."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, read


def _needed(cells: list[dict], known: set[str], args: list[str]) -> list[dict]:
    """``cells`` without the earlier exercises' answer cells that this exercise does not need: one is
    kept if it binds a name that this exercise's cells (or a kept earlier answer) read and that the
    chapter's code before the exercises does not define (a helper the student wrote in exercise 1 and
    uses in exercise 3)."""
    wanted: set[str] = set()
    for cell in cells:
        if not cell.get("optional"):
            wanted |= _names(cell["source"])[1]
    for arg in args:
        wanted |= _names(arg)[1]
    wanted -= known
    keep = {i for i, c in enumerate(cells) if not c.get("optional")}
    changed = True
    while changed:
        changed = False
        for i, cell in enumerate(cells):
            if i not in keep:
                bound, read = _names(cell["source"])
                if bound & wanted:
                    keep.add(i)
                    wanted |= read - known
                    changed = True
    return [c for i, c in enumerate(cells) if i in keep]


def _exercise_cells(exercise: Exercise, answers: dict[str, str]) -> list[dict]:
    """The cells the child runs for an exercise: the chapter's locked cells as they are, the
    student's answers in place of the answer cells (registered with linecache, so that a traceback
    shows the student's lines)."""
    cells = []
    for cell in exercise.cells:
        if "answer" not in cell:
            cells.append({**cell, "student": False, "optional": False})
            continue
        source = answers.get(cell["answer"], "")
        linecache.cache[cell["filename"]] = (
            len(source),
            None,
            [line + "\n" for line in transform(source).splitlines()],
            cell["filename"],
        )
        cells.append(
            {
                "source": source,
                "filename": cell["filename"],
                "student": True,
                "optional": cell["optional"],
            }
        )
    return cells


class _Missing(Exception):
    pass


class _Again(Exception):
    """Run the cells again in a new child, without the earlier answer cell that stopped this one."""


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60]


# --- nbgrader: autograde without running, then the gradebook -----------------------------------------


def _config(course: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()


def autograde_without_running(course: Path, chapter: str, students: list[str]) -> dict[str, str]:
    """nbgrader's autograde of each student's submission with its Execute step left out (nothing of
    the student's runs); {student: error} for those nbgrader could not take."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters.autograde import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import Execute

    warnings.filterwarnings("ignore", module="nbgrader")  # SQLAlchemy's notes on nbgrader's session
    config = _config(course)
    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [p for p in steps if p is not Execute]
    with _cwd(course):
        api = NbGraderAPI(CourseDirectory(config=config), config=config)
        errors = {}
        for student in students:
            result = api.autograde(chapter, student, force=True, create=True)
            if not result.get("success"):
                reason = _refusal_reason(result.get("log", ""), result.get("error", ""))
                path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
                errors[student] = reason + "".join(f"\n  {c}" for c in refused_cells(path, reason))
    return errors


def refused_cells(path: Path, reason: str) -> list[str]:
    """The cells of a refused notebook that nbgrader's ``reason`` names, by their number in the
    notebook and their ``grade_id`` (lecturer review s41, M2: "ValidationError: Markdown solution
    cell is not marked as a grade cell: 16 and orange." named the cell by its text only): those whose
    grade_id, or the first line of whose text, the reason quotes."""
    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:  # noqa: BLE001 (not a notebook: the reason says it)
        return []
    out = []
    for i, cell in enumerate(cells, 1):
        grade_id = _meta(cell).get("grade_id")
        first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
        if (grade_id and re.search(rf"(?<![\w]){re.escape(grade_id)}(?!\w)", reason)) or (
            len(first) >= 8 and first[:80] in reason
        ):
            out.append(
                f"(that is cell {i} of the submitted notebook"
                + (
                    f", {grade_id}, whose nbgrader metadata is {_said_meta(_meta(cell))})"
                    if grade_id
                    else ")"
                )
            )
    return out


def _defined(tree: ast.Module) -> set[str]:
    """The names a cell's top-level statements define (functions, classes, assignments)."""
    found = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def _copy_content(source: str, template: str) -> tuple[bool, bool]:
    """(has content, defines the exercise's names) of one copy of an answer cell: comments, the
    course's header line and the template's own statements (the stub) are not content (lecturer
    review s17, S3: a pasted copy holding only the header and ``# scratch copy`` was kept and the
    real answer dropped); the exercise's names are those the template defines."""
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError):
        return bool(source.strip()), False  # not Python: content, whatever it is
    wanted: set[str] = set()
    with contextlib.suppress(SyntaxError, ValueError):
        stub = ast.parse(transform(template))
        wanted = _defined(stub)
        kept = {ast.dump(statement) for statement in stub.body}
        tree.body = [statement for statement in tree.body if ast.dump(statement) not in kept]
    return bool(tree.body), bool(wanted & _defined(tree))


def answer_templates(course: Path, chapter: str) -> dict[str, str]:
    """{grade_id: the template of the answer cell}: what the release gives the student (the stub and
    the header line), from the source notebook's text above ``### BEGIN SOLUTION`` and the released
    cell."""
    found: dict[str, str] = {}
    for folder in ("source", "release"):
        path = course / folder / chapter / f"{chapter}.ipynb"
        with contextlib.suppress(Exception):
            for grade_id, text in code_answers(nbformat.read(path, as_version=4)).items():
                text = text.split(SOLUTION_MARKS[0], 1)[0]
                found[grade_id] = found.get(grade_id, "") + "\n" + text
    return found


REPAIRED: dict[str, dict[str, str]] = {}  # {student: {grade_id: the repair}} of this run


def repair_duplicates(path: Path, templates: dict[str, str] | None = None) -> list[str]:
    """Keep one cell of each nbgrader ``grade_id`` that the submitted notebook holds twice or more (what
    a copy and paste in JupyterLab makes; nbgrader refuses such a notebook whole): the last copy that
    defines the exercise's names (those the cell's template in ``templates`` defines), else the last
    with content (comments, the header line and the template's statements are not content), else the
    last. The notebook as submitted is kept beside it (``.ipynb.before-repair``).
    A cell with nbgrader metadata but no ``grade_id`` (``"nbgrader": {}``, which nbgrader's own
    de-duplication or a notebook extension leaves; nbgrader refuses the notebook with a bare
    ``KeyError: 'grade_id'``, lecturer review s11, M6) is not a cell of the release: its nbgrader
    metadata is removed, leaving a cell of the student's own.
    Returns a sentence per repair (none: the notebook is left as it is)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 (not a notebook: the grader says so later)
        return []
    copies: dict[str, list[int]] = {}
    said, unnamed = [], []
    for i, cell in enumerate(nb.cells):
        metadata = cell.get("metadata", {})
        if "nbgrader" in metadata and not metadata["nbgrader"].get("grade_id"):
            del metadata["nbgrader"]
            unnamed.append(str(i + 1))
            continue
        grade_id = metadata.get("nbgrader", {}).get("grade_id")
        if grade_id:
            copies.setdefault(grade_id, []).append(i)
    if unnamed:
        said.append(
            f"cell{'s' * (len(unnamed) > 1)} {', '.join(unnamed)} had nbgrader metadata without a "
            "grade_id (not a cell of the release; nbgrader would refuse the notebook with "
            "KeyError: 'grade_id'): kept as the student's own cells, without it"
        )
    drop = set()
    for grade_id, found in copies.items():
        if len(found) < 2:
            continue
        template = (templates or {}).get(grade_id, "")
        content = {i: _copy_content(nb.cells[i].source, template) for i in found}
        defining = [i for i in found if content[i][1]]
        filled = [i for i in found if content[i][0]]
        keep = (defining or filled or found)[-1]
        why = (
            "the last that defines the exercise's names"
            if defining
            else "the last with content"
            if filled
            else "all were empty: the last"
        )
        drop |= set(found) - {keep}
        said.append(
            f"{grade_id} was in {len(found)} cells: kept copy {found.index(keep) + 1} "
            f"({why}), dropped the others"
        )
    if drop or unnamed:
        shutil.copy2(path, path.with_name(path.name + ".before-repair"))
        nb.cells = [c for i, c in enumerate(nb.cells) if i not in drop]
        nbformat.write(nb, path)
    return said


NBGRADER_KEYS = ("grade", "solution", "locked", "task", "points")  # what nbgrader grades by


def course_cells(course: Path, chapter: str) -> dict[str, dict]:
    """{grade_id: nbgrader metadata} of the course's own notebook: source/, else release/."""
    for folder in ("source", "release"):
        path = course / folder / chapter / f"{chapter}.ipynb"
        with contextlib.suppress(Exception):
            return {
                meta["grade_id"]: dict(meta)
                for meta in map(_meta, nbformat.read(path, as_version=4).cells)
                if meta.get("grade_id")
            }
    return {}


def _said_meta(meta: dict) -> str:
    """A cell's nbgrader flags in words: "graded, 100 points", "a solution", "locked"."""
    said = [
        ("graded" if key == "grade" else "a solution" if key == "solution" else key)
        for key in ("grade", "solution", "locked", "task")
        if meta.get(key)
    ]
    points = meta.get("points")
    if isinstance(points, (int, float)):
        said.append(f"{points:g} point{'s' * (points != 1)}")
    return ", ".join(said) or "no flag"


def repair_metadata(path: Path, known: dict[str, dict], keep: bool = True) -> list[str]:
    """Set back the nbgrader metadata that a submitted notebook changed, from ``known`` (the course's
    notebook's, :func:`course_cells`), which nbgrader would refuse whole, 0 points and no feedback
    (lecturer review s41, M2: a written cell's ``grade`` set to False, "ValidationError: Markdown
    solution cell is not marked as a grade cell"; a graded cell of the student's own, a bare
    "KeyError: 'grade_id'"). A cell of a ``grade_id`` the course has gets the course's flags and
    points back; a cell of a ``grade_id`` it has not is kept as the student's own cell, without
    nbgrader metadata (a cell the student adds is never run nor graded). The notebook as submitted is
    kept beside it (``.ipynb.before-repair``) where ``keep`` (not when :func:`repair_duplicates` has
    just kept it).
    Returns a sentence per cell repaired, naming it (none: the notebook is left as it is)."""
    if not known:
        return []
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 (not a notebook: the grader says so later)
        return []
    said = []
    for i, cell in enumerate(nb.cells, 1):
        meta = cell.get("metadata", {}).get("nbgrader")
        grade_id = (meta or {}).get("grade_id")
        if not grade_id:  # none, or without a grade_id: repair_duplicates's
            continue
        if grade_id not in known:
            del cell.metadata["nbgrader"]
            said.append(
                f"cell {i} ({grade_id}, {_said_meta(meta)}) is not a cell of the course's notebook"
                " (nbgrader would refuse the notebook): kept as the student's own cell, ungraded,"
                " without its nbgrader metadata"
            )
            continue
        theirs = {k: meta[k] for k in NBGRADER_KEYS if k in meta}
        ours = {k: known[grade_id][k] for k in NBGRADER_KEYS if k in known[grade_id]}
        if {k: v for k, v in theirs.items() if v or k == "points"} == {
            k: v for k, v in ours.items() if v or k == "points"
        }:
            continue
        for key in NBGRADER_KEYS:
            meta.pop(key, None)
        meta.update(ours)
        said.append(
            f"cell {i} ({grade_id}) had its nbgrader metadata changed ({_said_meta(theirs)}, where"
            f" the course's notebook has {_said_meta(ours)}): set back as in source/"
        )
    if said:
        if keep:
            shutil.copy2(path, path.with_name(path.name + ".before-repair"))
        nbformat.write(nb, path)
    return said


CLOCK_SLACK = (
    60  # seconds: a timestamp.txt further than this from the exchange's own time is flagged
)


def _inbound_times(
    course: Path, chapter: str, student: str, written: str
) -> tuple[str, float, float] | None:
    """The student's submission in nbgrader's exchange, by the kernel's clock (times no user can set
    back: writing or touching a file sets its ctime to now): (its inbound folder's name, the ctime
    of its timestamp.txt, the latest ctime of the folder and every file in it). The folder whose
    timestamp.txt is ``written`` (the one collected), else the latest; None without an exchange or
    a submission there."""
    config = _config(course)
    try:
        root = Path(config.Exchange.root)
    except Exception:  # noqa: BLE001 (no exchange configured: an LMS's submissions)
        return None
    course_id = config.CourseDirectory.get("course_id", "default_course")
    folders = sorted((root / course_id / "inbound").glob(f"{student}+{chapter}+*"))
    if not folders:
        return None

    def changed(folder: Path) -> float:
        return max(p.stat().st_ctime for p in [folder, *folder.rglob("*")])

    def stamp(folder: Path) -> str:
        with contextlib.suppress(OSError):
            return (folder / "timestamp.txt").read_text().strip()
        return ""

    same = [f for f in folders if stamp(f) == written.strip()]
    folder = max(same or folders, key=changed)
    stamp_file = folder / "timestamp.txt"
    written_at = stamp_file.stat().st_ctime if stamp_file.exists() else changed(folder)
    return folder.name, written_at, changed(folder)


INBOUND_SEEN = (
    "inbound-seen.json"  # in the course's reports/: each inbound folder's times, first seen
)


def _first_seen(course: Path, folder: str, times: tuple[float, float]) -> tuple[float, float]:
    """An inbound folder's (timestamp.txt's ctime, latest ctime) as the grader first saw them,
    recorded in ``reports/inbound-seen.json`` on that first run (lecturer review s23, M8: the folder
    is world-writable, so a later touch by anyone moved the submission time)."""
    reports = course / "reports"
    reports.mkdir(mode=0o700, exist_ok=True)
    path = reports / INBOUND_SEEN
    known = {}
    with contextlib.suppress(OSError, ValueError):
        known = json.loads(path.read_text())
    if folder not in known:
        known[folder] = list(times)
        path.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    first = known[folder]
    return float(first[0]), float(first[1])


def _utc(seconds: float) -> str:
    return (
        f"{datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    )


def check_timestamp(course: Path, chapter: str, student: str) -> str | None:
    """Compare the submission's timestamp.txt, which the student writes (``nbgrader submit`` takes the
    student's clock, and the inbound folder is theirs to edit), with a time they cannot set: when its
    timestamp.txt was written in the exchange (its ctime, as the grader first saw it:
    ``_first_seen``), else when it was collected (the ctime of ``submitted/``'s copy, an upper
    bound). With an exchange, timestamp.txt is always set to the later of the two (the student's own
    is kept as ``timestamp.txt.student``), so the late policy uses it (lecturer review s31, M3: a
    time set back by under a minute counted); over ``CLOCK_SLACK`` apart, a sentence says so.
    Without one, only a timestamp.txt over ``CLOCK_SLACK`` after its collection is replaced.
    Where the folder changed after that (a TA's editor, a classmate: inbound/ is world-writable),
    a sentence says "changed after submission" and the submission time stays (lecturer review s23,
    M8). Else None."""
    from nbgrader.utils import parse_utc

    path = course / "submitted" / student / chapter / "timestamp.txt"
    if not path.exists():
        return None
    written = path.read_text()
    try:
        claimed = parse_utc(written.strip()).timestamp()
    except Exception:  # noqa: BLE001 (unreadable: nbgrader says so itself)
        return None
    inbound = _inbound_times(course, chapter, student, written)
    after = None
    if inbound is not None:
        # the way back, said with the flag: the student's own copy (lecturer review s41, m4)
        from term_plan import cache_folder

        course_id = _config(course).CourseDirectory.get("course_id", "default_course")
        folder, *now = inbound
        real, first_changed = _first_seen(course, folder, (now[0], now[1]))
        source = "when it was written in the exchange's inbound folder"
        changed = max(first_changed, now[1])
        if changed > max(claimed, real) + CLOCK_SLACK:
            after = (
                f"changed after submission: its inbound folder {folder} last changed at "
                f"{_utc(changed)}, {(changed - max(claimed, real)) / 60:.0f} min after its "
                "timestamp.txt; the late policy does not count that change (the folder is "
                "world-writable: a TA's editor or a classmate may have touched it), look at it. If "
                f"its notebook is not {student}'s work (a blank one, a classmate's), ask {student} "
                "for the copy nbgrader submit kept in their home, "
                f"{cache_folder(folder, course_id)}, and put it back with python ../tools/"
                f"term_plan.py restore --course . {chapter} {student} FOLDER"
            )
    else:
        collected = path.stat().st_ctime
        if claimed <= collected + CLOCK_SLACK:
            return None  # no exchange: only a time after the collection itself is impossible
        real, source = collected, "its collection"
    if claimed >= real and claimed - real <= CLOCK_SLACK:
        return after  # the student's clock a little ahead: their later time stands
    # the later of the two, always: a timestamp.txt set back by under a minute gains nothing (lecturer
    # review s31, M3: 0.8 s late, written back 31 s, it counted as on time, unflagged)
    later = max(claimed, real)
    student_copy = path.with_name("timestamp.txt.student")
    if not student_copy.exists():
        shutil.copy2(path, student_copy)
    when = datetime.datetime.fromtimestamp(later, datetime.timezone.utc)
    path.write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    if abs(claimed - real) <= CLOCK_SLACK:
        return after  # within the clocks' tolerance: used, not flagged
    return (
        f"timestamp.txt says {written.strip()}, {abs(claimed - real) / 60:.0f} min from {source} "
        f"({_utc(real)}): the late policy uses the later, {when:%Y-%m-%d %H:%M:%S} UTC"
        + (f"; {after}" if after else "")
    )


def _refusal_reason(log: str, error: str) -> str:
    """nbgrader's own reason for refusing a submission, from its captured log: the exception lines
    and its error messages, without the generic "see the above traceback"."""
    generic = ("Please see the", "There was an error processing", "Traceback (most recent")
    lines = [line.strip() for line in (log or "").splitlines()]
    # an exception's line: "KeyError: ...", or one whose name says neither Error nor Exception,
    # "nbgrader.api.MissingEntry: No such grade cell: ..." (lecturer review s39, m5: it was left out,
    # and the teacher read only "see the above traceback")
    exception = r"^(?:[A-Za-z_]\w*\.)*(?:[\w]+(?:Error|Exception)\b|[A-Z]\w*: \S)"
    reasons = [
        line
        for line in lines
        if (re.match(exception, line) or line.startswith("[ERROR]"))
        and not line.startswith("File ")
        and not any(g in line for g in generic)
    ]
    reasons = list(dict.fromkeys(reasons))  # once each, in order
    for line in list(reasons):
        cell = re.search(r"No such grade cell: [^/\s]+/[^/\s]+/(\S+)", line)
        if cell:
            reasons.append(
                f"(the submitted notebook's cell {cell.group(1)} is marked as a graded cell, which "
                "the course's notebook does not have: its nbgrader metadata was changed; set it "
                "back as in release/ in the notebook in submitted/, then grade it again)"
            )
    if reasons:
        return "\n  ".join(reasons[-5:])
    return (error or log or "no reason given").strip()[-1500:]


@contextlib.contextmanager
def _cwd(path: Path):
    here = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(here)


def _said_repaired(result: Result, repaired: dict[str, str]) -> Result:
    """A test's verdict with a line for the student when the grader repaired the answer cell it tests
    (``exN_answer`` for ``exN_test``; lecturer review s17, S3: the feedback said nothing of it)."""
    exercise = result.test.split("_", 1)[0]
    for grade_id, line in repaired.items():
        if grade_id and grade_id.split("_", 1)[0] == exercise:
            match = re.search(r"was in (\d+) cells: kept copy (\d+) \((.*)\)", line)
            if match is None:
                continue
            n, kept, why = match.groups()
            note = (
                f"Your notebook had {n} copies of this answer cell ({grade_id}; a copy and paste "
                f"makes them): the grader graded copy {kept} only ({why}) and left out the others."
            )
            return dataclasses.replace(result, message=f"{note}\n{result.message}")
    return result


def record(course: Path, chapter: str, results: list[Result]) -> None:
    """The scores into nbgrader's gradebook, the verdicts into the autograded notebooks."""
    from nbgrader.api import Gradebook

    config = _config(course)
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    by_student: dict[str, list[Result]] = {}
    for result in results:
        by_student.setdefault(result.student, []).append(result)
    with Gradebook(url, course_id=config.CourseDirectory.get("course_id", "default_course")) as gb:
        for student, graded in by_student.items():
            for result in graded:
                grade = gb.find_grade(result.test, chapter, chapter, student)
                grade.auto_score = result.score
                if result.review and result.points:  # the Formgrader lists it as needing a
                    grade.needs_manual_grade = True  # manual grade; a 0-point cell has none to give
            gb.db.commit()
            path = course / "autograded" / student / chapter / f"{chapter}.ipynb"
            if path.exists():
                nb = nbformat.read(path, as_version=4)
                verdicts = {r.test: r for r in graded}
                for cell in nb.cells:
                    result = verdicts.get(_meta(cell).get("grade_id"))
                    if cell.cell_type == "code" and result is not None:
                        cell.outputs = [_output(result)]
                        if "test" in cell.get("metadata", {}).get("course", {}):
                            cell.source = collected_source(cell.source)
                nbformat.write(nb, path)


COLLECTED = "# checked at collection: the verdict below"


def collected_source(source: str) -> str:
    """A prediction's test cell as autograded/ and the feedback show it: a first line saying that the
    verdict under it is the real check, above the cell's "checks that each one is written"
    (lecturer review s21, M8). Once only."""
    return source if source.startswith(COLLECTED) else f"{COLLECTED}\n{source}"


def _output(result: Result):
    text = f"{result.message}\n(graded in the course's sandbox: {result.score:g} of {result.points:g} points)"
    # a 0-point test (a prediction or a measurement in a graded course) shows its verdict as it is:
    # a failed one as a failure, not as a pass (lecturer review s21, S5)
    if result.score >= result.points and (result.points > 0 or result.message.startswith("✓")):
        return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")
    return nbformat.v4.new_output(
        "error", ename="ExerciseFailed", evalue=result.message, traceback=text.splitlines()
    )


def zero_tests(course: Path, chapter: str, grader: Grader, students: list[str]) -> None:
    """Every test cell at 0 until graded here (nbgrader's run without execution counts them as passed)."""
    record(
        course,
        chapter,
        [
            Result(s, e.test, e.points, 0.0, "not graded yet (tools/grade_course.py)", 0.0)
            for s in students
            for e in grader.exercises
        ],
    )


# The texts of the written answers as each grading run left them in autograded/ (what the Formgrader
# shows, so what a hand grade was given to), by their sha256: {chapter: {student: {grade_id: hex}}}.
# A regrade compares the new texts with them (lecturer review s39, S1). In the private grading/ folder.
FINGERPRINTS = "written_fingerprints.json"


def written_texts(course: Path, chapter: str, student: str) -> dict[str, str]:
    """{grade_id: sha256 of the text} of the answers graded by hand (nbgrader's solution and grade
    cells: the written answers) in ``student``'s autograded notebook of ``chapter``; {} if none."""
    path = course / "autograded" / student / chapter / f"{chapter}.ipynb"
    if not path.exists():
        return {}
    found = {}
    for cell in nbformat.read(path, as_version=4).cells:
        meta = _meta(cell)
        if meta.get("solution") and meta.get("grade") and meta.get("grade_id"):
            text = "\n".join(line.rstrip() for line in cell.source.strip().splitlines())
            found[meta["grade_id"]] = hashlib.sha256(text.encode()).hexdigest()
    return found


def _fingerprints(course: Path) -> dict:
    path = course / "grading" / FINGERPRINTS
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _save_fingerprints(course: Path, saved: dict) -> None:
    """The fingerprints into the course's grading/ folder, 0600 (its files are the instructor's)."""
    path = course / "grading" / FINGERPRINTS
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    path.chmod(0o600)


def finish(course: Path, chapter: str, students: list[str]) -> list[str]:
    """After grading: each rubric cell (the 0-point "task" cell above a written answer) marked as
    needing no grade, so nbgrader's "needs manual grade" clears once the written answers are graded;
    an answer already graded by hand (a regrade) kept as graded, not needing a grade again, if its
    text is the one this grader saw at the run before (:data:`FINGERPRINTS`); one whose text the
    student has changed since (a resubmission) needs a grade again, its hand grade cleared and named
    (lecturer review s39, S1); and the late penalties computed again from the sandbox's scores
    (``term_plan.py penalties``), since nbgrader's autograde took them from its own count, every test
    cell passed. Returns what it did."""
    from nbgrader.api import Gradebook, MissingEntry
    from term_plan import recompute_penalties

    config = _config(course)
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    rubrics = kept = 0
    changed, unknown = [], []
    saved = _fingerprints(course)
    before = saved.get(chapter, {})
    now = {student: written_texts(course, chapter, student) for student in students}
    with Gradebook(url, course_id=config.CourseDirectory.get("course_id", "default_course")) as gb:
        for student in students:
            try:
                submission = gb.find_submission(chapter, student)
            except MissingEntry:
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.max_score == 0 and grade.needs_manual_grade:
                        grade.needs_manual_grade = False
                        rubrics += 1
                    elif grade.manual_score is not None and grade.name in now[student]:
                        graded = before.get(student, {}).get(grade.name)
                        if graded is not None and graded != now[student][grade.name]:
                            # the text graded by hand is not the one submitted now: grade it again
                            grade.manual_score = None
                            grade.needs_manual_grade = True
                            changed.append(f"{student} {grade.name}")
                        elif grade.needs_manual_grade:
                            # a written answer graded before this regrade, which nbgrader's autograde
                            # marked as needing a grade again: its grade stands
                            grade.needs_manual_grade = False
                            kept += 1
                            if graded is None:
                                unknown.append(f"{student} {grade.name}")
                    elif grade.needs_manual_grade and grade.manual_score is not None:
                        grade.needs_manual_grade = False  # a hand-graded cell with no text here
                        kept += 1
        gb.db.commit()
    for student in students:
        if now[student]:
            before[student] = now[student]
    saved[chapter] = before
    _save_fingerprints(course, saved)
    late = [(n, s, p) for n, s, p in recompute_penalties(url, [chapter]) if s in students]
    lines = [
        f"{rubrics} rubric cells (0 points) marked as needing no grade",
        f"{kept} answers graded by hand before (a regrade) kept as graded",
    ]
    if unknown:
        lines.append(
            f"  of them {len(unknown)} with no record of the text graded (graded before the grader "
            f"kept grading/{FINGERPRINTS}): if the student resubmitted, read them again: "
            + ", ".join(unknown)
        )
    lines += [
        f"{name} changed since it was graded by hand: grade it again (its hand grade is cleared)"
        for name in changed
    ]
    lines.append(
        f"late penalties computed again from these scores: {len(late)} late submissions"
        + "".join(f"\n  {s}: late penalty {p:g}" for _, s, p in late)
    )
    return lines


def submitted_students(course: Path, chapter: str) -> list[str]:
    folder = course / "submitted"
    return (
        sorted(p.name for p in folder.iterdir() if (p / chapter / f"{chapter}.ipynb").exists())
        if folder.exists()
        else []
    )


def ungraded_answers(course: Path, chapter: str) -> list[str]:
    """The graded cells of ``chapter`` (points > 0) that still need a manual grade and have none, one
    line per student as ``export_grades.py`` warns of them: "<student> <chapter>: N answers still
    need a manual grade (<cells>)" (lecturer review s21, S3)."""
    from nbgrader.api import Gradebook, MissingEntry
    from term_plan import _gradebook

    url, course_id = _gradebook(course)
    found = []
    with Gradebook(url, course_id=course_id) as gb:
        try:
            submissions = gb.assignment_submissions(chapter)
        except MissingEntry:
            return []
        for sub in sorted(submissions, key=lambda s: s.student_id):
            cells = sorted(
                g.name
                for notebook in sub.notebooks
                for g in notebook.grades
                if g.max_score > 0 and g.needs_manual_grade and g.manual_score is None
            )
            if cells:
                found.append(f"{sub.student_id} {chapter}: {manual_grades_said(cells)}")
    return found


def manual_grades_said(cells: list[str]) -> str:
    """ "1 written answer and 1 test cell held for manual review still need a manual grade (...)":
    a test cell the grader held for review is named as one, not as a written answer (lecturer
    review s22, M4), and one is one."""
    tests = [c for c in cells if c.endswith("_test")]
    parts = [
        f"{n} {what}{'' if n == 1 else 's'}{after}"
        for n, what, after in (
            (len(cells) - len(tests), "written answer", ""),
            (len(tests), "test cell", " held for manual review"),
        )
        if n
    ]
    verb = "needs" if len(cells) == 1 else "need"
    return f"{' and '.join(parts)} still {verb} a manual grade ({', '.join(cells)})"


REVIEW_OPENING = "needs manual review: "


def settle_reviewed(course: Path, chapter: str) -> int:
    """Before the feedback: each test cell held for manual review that the teacher has graded says
    so, "reviewed by your teacher (0 of 2 points): ...", not "needs manual review" (lecturer review
    s31, m7: released feedback read as if the case were still open). Returns the cells changed."""
    from nbgrader.api import Gradebook, MissingEntry

    config = _config(course)
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    changed = 0
    with Gradebook(url, course_id=config.CourseDirectory.get("course_id", "default_course")) as gb:
        for path in sorted((course / "autograded").glob(f"*/{chapter}/{chapter}.ipynb")):
            student = path.parent.parent.name
            nb, edited = nbformat.read(path, as_version=4), False
            for cell in nb.cells:
                grade_id = _meta(cell).get("grade_id")
                outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
                if not grade_id or not outputs:
                    continue
                said = outputs[0].get("evalue") or outputs[0].get("text") or ""
                if not said.startswith(REVIEW_OPENING):
                    continue
                try:
                    grade = gb.find_grade(grade_id, chapter, chapter, student)
                except MissingEntry:
                    continue
                if grade.manual_score is None:
                    continue
                done = f"reviewed by your teacher ({grade.manual_score:g} of {grade.max_score:g}"
                done += " points): "
                for out in outputs:
                    for key in ("evalue", "text"):
                        if isinstance(out.get(key), str):
                            out[key] = out[key].replace(REVIEW_OPENING, done, 1)
                    if out.get("traceback"):
                        out["traceback"] = [
                            line.replace(REVIEW_OPENING, done, 1) for line in out["traceback"]
                        ]
                edited, changed = True, changed + 1
            if edited:
                nbformat.write(nb, path)
    return changed + settle_overridden(course, chapter)


# the line _output writes under every verdict of the sandbox
SANDBOX_SAID = re.compile(r"\(graded in the course's sandbox: ([\d.]+) of ([\d.]+) points\)")
OVERRIDDEN = "reviewed by your teacher: "


def overridden_line(manual: float, sandbox: float, points: float, reason: str = "") -> str:
    """The first line of a test cell's verdict whose manual score (the Formgrader's) differs from
    the sandbox's (course review s40, M1: "Score: 0.0 / 2.0" above "passed ... 2 of 2 points")."""
    line = (
        f"{OVERRIDDEN}{manual:g} of {points:g} points; the sandbox's verdict, below, was "
        f"{sandbox:g} of {points:g}"
    )
    return f"{line}. {reason}" if reason else f"{line} (your teacher's comment, if any, says why)."


def worked_solution_reason(course: Path, chapter: str, students: list[str]) -> dict:
    """{(student, exercise number): why}: the answers :func:`code_copy_flags` found to be the book's
    worked solution, the flag a teacher's 0 most often follows under ``--worked-solutions flag``."""
    reasons = {}
    for line in code_copy_flags(course, chapter, students):
        found = _BOOK.match(line)
        number = found and re.match(r"ex(\d+)_", found[2])
        if BY_CHANCE not in line and is_worked_solution(line) and number:
            reasons[(found[1], number[1])] = (
                "The grader found that this answer is the book's worked solution (the same code "
                "but for names, comments and spacing), which is not your own work."
            )
    return reasons


def settle_overridden(course: Path, chapter: str) -> int:
    """Before the feedback: each test cell the teacher scored by hand (the manual score in the
    Formgrader) to other than the sandbox's score opens with what happened, "reviewed by your
    teacher: 0 of 2 points; the sandbox's verdict, below, was 2 of 2", and the reason the grader's
    flag gave (a pasted worked solution), above the sandbox's verdict (course review s40, M1).
    Again after another manual score: the line is replaced. Returns the cells changed."""
    from nbgrader.api import Gradebook, MissingEntry

    config = _config(course)
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    found: list[tuple[Path, object, list[tuple[object, float, float, float, str]]]] = []
    with Gradebook(url, course_id=config.CourseDirectory.get("course_id", "default_course")) as gb:
        for path in sorted((course / "autograded").glob(f"*/{chapter}/{chapter}.ipynb")):
            student = path.parent.parent.name
            nb, cells = nbformat.read(path, as_version=4), []
            for cell in nb.cells:
                grade_id = _meta(cell).get("grade_id")
                outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
                if not grade_id or not outputs:
                    continue
                out = outputs[0]
                text = out.get("text") or "\n".join(out.get("traceback") or [])
                said = SANDBOX_SAID.search(text or "")
                if not said or text.startswith("reviewed by your teacher ("):  # settle_reviewed's
                    continue
                try:
                    grade = gb.find_grade(grade_id, chapter, chapter, student)
                except MissingEntry:
                    continue
                sandbox, points = float(said[1]), float(said[2])
                if grade.manual_score is None or abs(grade.manual_score - sandbox) < 1e-9:
                    continue
                cells.append((out, float(grade.manual_score), sandbox, points, grade_id))
            if cells:
                found.append((path, nb, cells))
    if not found:
        return 0
    students = [path.parent.parent.name for path, _, _ in found]
    reasons = worked_solution_reason(course, chapter, students)
    changed = 0
    for path, nb, cells in found:
        student = path.parent.parent.name
        for out, manual, sandbox, points, grade_id in cells:
            number = re.match(r"ex(\d+)_", grade_id)
            reason = reasons.get((student, number[1] if number else ""), "")
            line = overridden_line(manual, sandbox, points, reason)
            if out.get("output_type") == "stream":
                text = out["text"]
                if text.startswith(OVERRIDDEN):
                    text = text.split("\n", 1)[1]
                out["text"] = f"{line}\n{text}"
            else:  # the traceback is what the feedback shows; evalue stays the sandbox's verdict
                lines = list(out.get("traceback") or [])
                if lines and lines[0].startswith(OVERRIDDEN):
                    lines = lines[1:]
                out["traceback"] = [line, *lines]
            changed += 1
        nbformat.write(nb, path)
    return changed


def give_feedback(
    course: Path,
    chapter: str,
    force: bool = False,
    run=subprocess.run,
    allow_ungraded: bool = False,
) -> int:
    """``--feedback``: nbgrader's generate_feedback and release_feedback for ``chapter``, after the
    late period only (``--force`` before it), releasing through the exchange only the submissions
    that came through it (lecturer review s13: the checklist's plain release_feedback stopped half-way
    at a submission put in by hand, and ran 9 days before the deadline without a word). ``run``: how
    a command is run (tests pass their own). Returns the exit status."""
    from term_plan import feedback_too_early

    early = feedback_too_early(course, chapter)
    if early and not force:
        return _too_early(early)
    if early:  # lecturer review s15, M6: --force before the late period ends, said out loud
        print(
            f"{early}. --force: this releases the grader's verdicts on its private cases, their "
            "inputs and expected values, before the late period ends; a late student may read them. "
            "Use it for a rehearsal, in a course folder you will not use for the class."
        )
    ungraded = ungraded_answers(course, chapter)
    if ungraded and not allow_ungraded:  # lecturer review s21, S3: released feedback showed the
        # unmarked written answers as 0 points, and cannot be taken back
        held = (
            f"1 submission of {chapter} has"
            if len(ungraded) == 1
            else f"{len(ungraded)} submissions of {chapter} have"
        )
        print(
            f"{held} cells not graded by hand yet (written answers, or test cells held for manual "
            "review); their feedback would show them as 0 points:\n  "
            + "\n  ".join(ungraded)
            + "\nNothing done: grade them in the Formgrader first (--allow-ungraded releases the "
            "feedback anyway)."
        )
        return 2
    if ungraded:
        print(f"--allow-ungraded: {len(ungraded)} submissions' unmarked answers show as 0 points")
    settled = settle_reviewed(course, chapter)
    if settled:
        print(
            f"{settled} cells graded by hand after a manual review or to other than the sandbox's "
            "score: their feedback says so"
        )
    outside = outside_exchange(course, chapter)
    commands = [["nbgrader", "generate_feedback", chapter]]
    if len(outside) < len(_submission_folders(course, chapter)):
        exclude = [f"--CourseDirectory.student_id_exclude={','.join(outside)}"] if outside else []
        commands.append(["nbgrader", "release_feedback", chapter, *exclude])
    for command in commands:
        print("$", " ".join(command))
        done = run(command, cwd=course)
        if done.returncode:
            print(f"{command[1]} failed (exit status {done.returncode}): nothing more done")
            return done.returncode
    if outside:
        print(
            f"give these {len(outside)} students their feedback through your LMS (their submission "
            f"came without the exchange): feedback/<student>/{chapter}/{chapter}.html for "
            + ", ".join(outside)
        )
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    course = _course_folder(args.course).resolve()
    chapter = args.chapter.removesuffix(".ipynb")
    if args.feedback:
        return give_feedback(course, chapter, force=args.force, allow_ungraded=args.allow_ungraded)
    found = submitted_students(course, chapter)
    students = (
        sorted({s for s in found for g in args.student if fnmatch.fnmatchcase(s, g)})
        if args.student
        else found
    )
    if not students:
        print(f"no submission of {chapter} in {course / 'submitted'}")
        return 1
    # a marker in the course folder while the run writes scores: export_grades.py refuses to export
    # past it (lecturer review s29, M3); a run that stops before the end leaves it, saying so
    marker = grading_marker.start(course, chapter, students)
    previous = signal.getsignal(signal.SIGTERM)
    with contextlib.suppress(ValueError):  # not the main thread: no handler
        signal.signal(signal.SIGTERM, _terminated)
    try:
        code = _grade_run(args, course, chapter, students)
    except BaseException as e:
        why = (
            "interrupted (Ctrl-C)"
            if isinstance(e, KeyboardInterrupt)
            else "stopped by a kill signal (SIGTERM)"
            if isinstance(e, _Terminated)
            else f"stopped by an error, {type(e).__name__}: {str(e)[:200]}"
        )
        grading_marker.interrupted(marker, why)
        print(
            f"grading of {chapter} {why}: the gradebook may hold a part of it, and "
            f"{marker.name} in the course folder says so (export_grades.py refuses to export "
            "while it is there): grade the chapter again",
            file=sys.stderr,
        )
        raise
    finally:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)
    grading_marker.finished(marker)
    return code


class _Terminated(Exception):
    """The grading run got SIGTERM."""


def _terminated(signum, frame):
    raise _Terminated("SIGTERM")


def _grade_run(args, course: Path, chapter: str, students: list[str]) -> int:
    """Grade ``students``' submissions of ``chapter`` (main, between the markers)."""
    exchange = None
    with contextlib.suppress(Exception):
        exchange = Path(_config(course).Exchange.root)
    start = time.monotonic()
    grader = Grader(
        course,
        chapter,
        time_limit=args.time_limit,
        cell_limit=args.cell_limit,
        cpu_limit=args.cpu_limit,
        memory_gb=args.memory,
        exchange=exchange if exchange and exchange.exists() else None,
        read=args.read,
    )
    grader.classmates = _with_class(course, chapter, students)
    try:
        failing = worked_solution_fails(grader)  # the canary, before any student's grade
        if failing:
            print(
                f"STOPPED: the grader could not grade this exercise in its sandbox: the worked "
                f"solution fails ({chapter}, source/). No student was graded, so none gets a 0 "
                "for the grader's fault; report it with these lines:",
                *(f"  {line}" for line in failing),
                sep="\n",
                file=sys.stderr,
            )
            return 3
        # said when it passes, so that the log shows it ran (lecturer review s23, M10)
        checked = getattr(grader, "canary_checked", 0)
        print(f"worked solutions: {checked}/{checked} exercises full marks in the sandbox")
        for line in getattr(grader, "canary_zero_point", []):
            print(
                "WARNING: a 0-point verdict fails on the worked solution, so every student's "
                f"feedback may say it wrongly (a grader's fault; report it): {line}"
            )
        students, autograde_s, results = _grade_students(
            course, chapter, grader, students, autograde=not args.no_autograde
        )
    finally:
        grader.close()
    zeroed = zero_worked_solutions(course, chapter, students, results)
    if zeroed:  # before finish: the late penalties follow the scores
        print(
            f"worked solutions given 0 points ({len(zeroed)} test cells; this course was written"
            " with --worked-solutions zero): " + ", ".join(f"{r.student} {r.test}" for r in zeroed)
        )
    for line in finish(course, chapter, students):
        print(line)
    from make_course import protect_files  # the gradebook nbgrader wrote: 0600 in a graded course

    protect_files(course)
    seconds = time.monotonic() - start
    print(
        f"{len(students)} students graded in {seconds:.0f} s (nbgrader's autograde without "
        f"execution {autograde_s:.0f} s; the chapter's code in the sandbox "
        f"{(grader.zygote._ready or {}).get('seconds', 0):.0f} s, alongside) "
        f"({60 * len(students) / max(seconds, 1e-9):.1f} students per minute); the scores are in "
        "the gradebook (nbgrader generate_feedback and export use them)"
    )
    _print_flags(course, chapter, students, results)
    if args.json:
        args.json.write_text(
            json.dumps([r.__dict__ for r in results], indent=1, ensure_ascii=False)
        )
    return 0


def outside_exchange(course: Path, chapter: str) -> list[str]:
    """The students whose submission of ``chapter`` did not come through nbgrader's exchange (put in
    ``submitted/`` by hand or by ``zip_collect``): it has no ``submission_secret.txt``, which
    ``nbgrader release_feedback`` needs to release their feedback (it stops with a
    FileNotFoundError at the first such student, and releases no one after them)."""
    return sorted(
        folder.parent.name
        for folder in _submission_folders(course, chapter)
        if not (folder / "submission_secret.txt").exists()
    )


def _submission_folders(course: Path, chapter: str) -> list[Path]:
    """``submitted/<student>/<chapter>/`` of every student who handed ``chapter`` in, by any way."""
    return [p for p in (course / "submitted").glob(f"*/{glob.escape(chapter)}") if p.is_dir()]


def release_advice(course: Path, chapter: str) -> str | None:
    """What to run to give feedback back when some submissions came without the exchange."""
    outside = outside_exchange(course, chapter)
    if not outside:
        return None
    lms = (
        f"came without the exchange ({len(outside)}: no submission_secret.txt, so nbgrader "
        f"release_feedback cannot release their feedback and would stop at the first of them): "
        f"return feedback/<student>/{chapter}/{chapter}.html to each through your LMS: "
        + ", ".join(outside)
    )
    if len(outside) == len(_submission_folders(course, chapter)):
        return lms + "; do not run nbgrader release_feedback"
    return (
        f"{lms}; release the others' through the exchange with\n  nbgrader release_feedback "
        f"{chapter} --CourseDirectory.student_id_exclude={','.join(outside)}"
    )


# the words of a verdict from a child the sandbox stopped (Child.why_ended, the violation report)
STOPPED = re.compile(
    r"the grader's sandbox does not allow|of CPU time \(the grader's limit\)|GB of memory\)"
    r"|crashed the Python process|your code ended the process|closed the sandbox's pipe"
    r"|stopped by the system \(signal 9\)",
    re.I,  # a verdict's sentence begins with a capital: "Your code ended the process" (s21, M6)
)


def classmate_flags(results: list) -> list[str]:
    """The copy report's lines of the wrong per-student numbers that are a classmate's right ones
    (lecturer review s21, M5)."""
    return [
        f"{r.student} {r.test}: equals {other.split(' (')[0]}'s right answer "
        f"({other.split(' (', 1)[1]}"
        for r in results
        for other in r.classmates
    ]


# a copy report's line about two students: "<student> <id>: like <other>'s answer ..." or "... the
# same code as <other>'s ...", ending ", <who> first" where both times are known and differ
_PAIR = re.compile(r"^(\S+) (\S+): (?:like (\S+)'s answer|the same code as (\S+)'s )")


def _pair(line: str) -> tuple[str, str, str] | None:
    """(student, grade id, other student) of a copy report's line about two students (:data:`_PAIR`),
    else None: the one place such a line is parsed."""
    found = _PAIR.match(line)
    return (found[1], found[2], found[3] or found[4]) if found else None


_FIRST = re.compile(r", ([\w.@+-]+) first$")


# a line of copy_flags or code_copy_flags about one student and the book: (student, exercise, what)
_BOOK = re.compile(
    r"^(\S+) (\S+): (?:the same code as (the worked solution)|the function \S+ is (the worked "
    r"solution)'s|like (the model answer))"
)


def is_worked_solution(line: str) -> bool:
    """Whether a line of :func:`code_copy_flags` says a student's code is the book's worked solution
    (not another student's, not a library function's)."""
    found = _BOOK.match(line)
    return bool(found and (found[3] or found[4]))


def split_worked(lines: list[str]) -> tuple[list[str], list[str]]:
    """:func:`code_copy_flags`' lines split in two (lecturer review s32, M1): those that say a code
    answer is the book's worked solution, and the others (copies between students, a forbidden
    library function). Two students alike because both took the worked solution are in neither:
    their likeness is the book's."""
    worked = [line for line in lines if is_worked_solution(line)]
    book = {(found[1], found[2]) for found in map(_BOOK.match, worked)}
    others = []
    for line in lines:
        pair = _pair(line)
        if line in worked or (pair and (pair[0], pair[1]) in book and (pair[2], pair[1]) in book):
            continue
        others.append(line)
    return worked, others


def worked_solutions_setting(course: Path) -> str:
    """The course's ``--worked-solutions`` (tools/make_course.py): "flag", "allowed" or "zero"."""
    from make_course import course_settings

    return course_settings(course)["worked_solutions"]


WORKED_ZERO = (
    "0 points: this code is the book's worked solution, which this course does not give points for"
    " (tools/make_course.py --worked-solutions zero). The check's verdict on it:"
)


def zero_worked_solutions(
    course: Path, chapter: str, students: list[str], results: list[Result]
) -> list[Result]:
    """In a course written with ``--worked-solutions zero``: the test cells of each exercise whose
    code answer is the book's worked solution (:func:`code_copy_flags`, a likeness expected by chance
    aside) get 0 points in ``results`` and in the gradebook, the reason above the verdict (lecturer
    review s32, M1). Returns the results it set to 0; none in another course."""
    if worked_solutions_setting(course) != "zero":
        return []
    zeroed = []
    for line in code_copy_flags(course, chapter, students):
        if BY_CHANCE in line or not is_worked_solution(line):
            continue
        found = _BOOK.match(line)
        number = re.match(r"ex(\d+)_", found[2])
        for r in results:
            same = number and re.match(rf"ex{number[1]}_", r.test)
            if r.student == found[1] and same and r.score > 0 and r not in zeroed:
                r.score, r.message = 0.0, f"{WORKED_ZERO}\n{r.message}"
                zeroed.append(r)
    if zeroed:
        record(course, chapter, zeroed)
    return zeroed


def copy_clusters(course: Path, chapter: str, lines: list[str]) -> list[str]:
    """``copy_flags``' or ``code_copy_flags``' lines grouped, one line per group (course review s27,
    M3: a pair a line made C(n, 2) lines of students who all pasted the worked solution): per
    exercise, "N answers are the book's worked solution" (or the model answer's words) with their
    students, then "these N answers are alike" for each group of students whose answers are alike
    (each with at least one other of the group), in the order they submitted. Two students who
    both gave the book's answer are not a group again. Other lines (a library function the
    exercise forbids) are kept as they are."""
    book: dict[tuple[str, str], list[str]] = {}
    pairs: dict[str, list[tuple[str, str, float | None]]] = {}
    kept = []
    for line in lines:
        found, pair = _BOOK.match(line), _pair(line)
        if found:
            what = found[3] or found[4] or found[5]
            students = book.setdefault((found[2], what), [])
            if found[1] not in students:
                students.append(found[1])
        elif pair:
            student, grade_id, other = pair
            similarity = re.search(r"similarity ([0-9.]+)", line)
            pairs.setdefault(grade_id, []).append(
                (student, other, float(similarity[1]) if similarity else None)
            )
        else:
            kept.append(line)
    out = []
    for (grade_id, what), students in sorted(book.items()):
        n = len(students)
        verb = "answer is" if n == 1 else "answers are"
        what = "near-verbatim the model answer" if "model" in what else "the book's worked solution"
        out.append(f"{grade_id}: {n} {verb} {what}: {', '.join(sorted(students))}")
    for grade_id, found in sorted(pairs.items()):
        same = set().union(*(set(v) for (g, _), v in book.items() if g == grade_id))
        groups: list[set[str]] = []
        for a, b, _ in found:
            if a in same and b in same:  # both the book's answer: said above
                continue
            joined = [g for g in groups if a in g or b in g]
            groups = [g for g in groups if g not in joined] + [set().union({a, b}, *joined)]
        for group in sorted(groups, key=lambda g: (-len(g), sorted(g))):
            times = {s: submitted_at(course, chapter, s) for s in group}
            order = sorted(group, key=lambda s: (times[s] is None, times[s] or "", s))
            unknown = [s for s in order if times[s] is None]
            when = (
                "in the order submitted"
                if not unknown
                else "submission time unknown for " + ", ".join(unknown)
                if len(unknown) < len(order)
                else "order unknown"
            )
            span = sorted({r for a, b, r in found if a in group and r is not None})
            alike = ""
            if span:  # written answers: how alike, the least and the most
                alike = "similarity " + " to ".join(
                    f"{r:.2f}" for r in dict.fromkeys((span[0], span[-1]))
                )
                alike += "; "
            out.append(
                f"{grade_id}: these {len(group)} answers are alike ({alike}{when}): "
                + ", ".join(order)
            )
    return out + kept


def pair_flag(other: str, first: str | None, grade_ids: list[str] | None = None) -> str:
    """The flag of a student whose answer is alike with ``other``'s: it names the pair, the answers
    alike and who submitted first, never a role (lecturer review s23, M1: the first submitter,
    honest, was labelled "source of copies", and both "possible copy" when one time was unknown).
    The answers let the export group students per exercise (lecturer review s41, m3: alice~ivan in
    exercise 1 and carol~ivan in exercise 3 made "alice, carol, ivan and judy: these 4 answers are
    alike"): "alike with judy in ex2_answer, ex3_written; alice submitted first"."""
    where = f" in {', '.join(sorted(set(grade_ids)))}" if grade_ids else ""
    return f"alike with {other}{where}; " + (
        f"{first} submitted first" if first else "order unknown"
    )


class _FlagLists(NamedTuple):
    """The flag lists read from a chapter's submissions, once per grading run."""

    copy: list[str]
    code: list[str]
    book_numbers: list[str]
    edited: list[str]
    typed: list[str]


def _read_flag_lists(course: Path, chapter: str, students: list[str]) -> _FlagLists:
    return _FlagLists(
        copy=copy_flags(course, chapter, students),
        code=code_copy_flags(course, chapter, students),
        book_numbers=book_numbers_flags(course, chapter, students),
        edited=edited_locked_cells(course, chapter, students),
        typed=typed_outputs(course, chapter, students),
    )


def _print_flags(course: Path, chapter: str, students: list[str], results: list) -> None:
    """What the teacher must look at after a grading run, printed and saved in the course's
    ``reports/<chapter>-<date>.txt`` (lecturer review s15, M2: a closed terminal lost them), with the
    flagged students in ``reports/<chapter>-flags.json``, which tools/export_grades.py warns about."""
    # each list read from the submissions once per run, for both the printed report and the flags
    found = _read_flag_lists(course, chapter, students)
    lines: list[str] = []
    with contextlib.redirect_stdout(_Tee(lines)):
        _flags(course, chapter, students, results, found)
    flagged: dict[str, list[str]] = {}
    for r in results:
        if r.review:
            flagged.setdefault(r.student, []).append(f"{r.test} needs manual review")
        # a prediction computed with the library is one of these; its reason is in the report, not
        # here: export_grades.py clears "<test> needs manual review" once the cell has a manual grade
    for (
        student
    ) in students:  # lecturer review s17, S3: a repair was said in the scrolling output only
        for line in REPAIRED.get(student, {}).values():
            flagged.setdefault(student, []).append(f"notebook repaired: {line}")
    for line in found.book_numbers:
        student, grade_id = line.split(" ", 2)[:2]
        flagged.setdefault(student, []).append(f"{grade_id.rstrip(':')} {BOOK_NUMBERS}")
    for line in found.edited + found.typed:  # lecturer reviews s34, m2, and s41, M1
        student, rest = line.split(" ", 1)
        flagged.setdefault(student, []).append(rest.replace(":", "", 1))
    strong, _ = strong_and_weak(found.copy)
    code = [line for line in found.code if BY_CHANCE not in line]
    worked, code = split_worked(code)
    if worked_solutions_setting(course) == "flag":  # allowed, or zeroed: nothing to decide
        code = worked + code
    # two students each near-verbatim the model answer (or each the worked solution) in one exercise
    # are alike through the book: each is flagged alike with it, not with the other, as the printed
    # report groups them (lecturer review s38, m4: the export warned "s1good and s6cheat: answers
    # alike (s1good submitted first)", pointing at the honest student, when the grader had found
    # only "2 answers are near-verbatim the model answer")
    of_book = {(found[1], found[2]) for found in map(_BOOK.match, strong + code) if found}
    # {(student, other): (who submitted first, the answers alike)}: one flag per pair, naming its
    # answers (lecturer review s41, m3)
    alike: dict[tuple[str, str], tuple[str | None, list[str]]] = {}
    for line in strong + code:  # a likeness expected by chance is no flag (lecturer review s29, M2)
        # two students alike: the pair and who submitted first, for each of them, no role (lecturer
        # review s23, M1); one alike with the model answer or the worked solution: that
        pair, first = _pair(line), _FIRST.search(line)
        if pair:
            a, grade_id, b = pair
            if (a, grade_id) in of_book and (b, grade_id) in of_book:
                continue
            for student, other in ((a, b), (b, a)):
                known_first, ids = alike.get((student, other), (None, []))
                alike[(student, other)] = (known_first or (first and first[1]), [*ids, grade_id])
        else:
            student = line.split(" ", 1)[0]
            library = re.search(r"the same code as (the library's \S+) \(", line)
            book = (
                library[1]
                if library
                else "the model answer"
                if "the model answer" in line
                else "the worked solution"
            )
            flagged.setdefault(student, []).append(f"alike with {book}")
    for (student, other), (first, grade_ids) in alike.items():
        flagged.setdefault(student, []).append(pair_flag(other, first, grade_ids))
    for student, why in FLAGGED.items():  # lecturer review s33, m9: in the flags and the export too
        if student in students:
            off = re.search(r"(\d+) min from", why)
            flagged.setdefault(student, []).append(
                f"submission time flagged (timestamp.txt {off[1] + ' min ' if off else ''}off the "
                "exchange's clock; the late policy uses the later time)"
            )
    for r in results:
        for other in r.classmates:
            flagged.setdefault(r.student, []).append(
                f"{r.test} equals {other.split(' (')[0]}'s right answer"
            )
    reports = course / "reports"
    reports.mkdir(mode=0o700, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d")
    with open(reports / f"{chapter}-{stamp}.txt", "a", encoding="utf-8") as f:
        f.write(f"--- {datetime.datetime.now():%Y-%m-%d %H:%M}: {', '.join(students)}\n")
        f.write("".join(lines) or "nothing flagged\n")
    saved = reports / f"{chapter}-flags.json"
    known = json.loads(saved.read_text()) if saved.exists() else {}
    for student in students:  # this run's students: their flags replaced, the others' kept
        known.pop(student, None)
        if student in flagged:
            known[student] = sorted(set(flagged[student]))
    for student, flags in flagged.items():  # an earlier student like one graded now: merged in
        if student not in students:  # (lecturer review s21, S2)
            known[student] = sorted(set(known.get(student, [])) | set(flags))
    saved.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    print(f"flags saved in {reports / f'{chapter}-{stamp}.txt'} and {saved.name}")
    marked = flag_in_gradebook(course, chapter, sorted(s for s in students if known.get(s)))
    if marked:
        print(f"flagged in the Formgrader (nbgrader's flag): {', '.join(marked)}")


def flag_in_gradebook(course: Path, chapter: str, students: list[str]) -> list[str]:
    """Set nbgrader's ``flagged`` on the submitted notebook of each of ``students`` (whom the grader
    flagged), so that the Formgrader's submission list shows the flag (course review s27, m7: the
    flags were only in the grader's output and reports/). Only set, never cleared: a flag the teacher
    set or cleared by hand for another student stays. Returns the students flagged; none without a
    gradebook or a submission there."""
    from nbgrader.api import Gradebook, MissingEntry
    from term_plan import _gradebook

    if not students:
        return []
    try:
        url, course_id = _gradebook(course)
    except Exception:  # noqa: BLE001 (no nbgrader_config.py: no gradebook)
        return []
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return []  # nothing graded yet: no gradebook to make
    marked = []
    with Gradebook(url, course_id=course_id) as gb:
        for student in students:
            try:
                notebook = gb.find_submission_notebook(chapter, chapter, student)
            except MissingEntry:
                continue
            notebook.flagged = True
            marked.append(student)
        gb.db.commit()
    return marked


class _Tee:
    """stdout that also keeps what is written."""

    def __init__(self, kept: list[str]):
        self.kept, self.out = kept, sys.stdout

    def write(self, text: str) -> int:
        self.kept.append(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def _untimed(course: Path, chapter: str, students: list[str]) -> list[str]:
    """The warning of each of ``students``' submissions without a submission time (no timestamp.txt:
    put in submitted/ by hand), which nbgrader never finds late (lecturer review s16, S2)."""
    from term_plan import _gradebook, untimed_submissions, untimed_warning

    try:
        url, _ = _gradebook(course)
        found = untimed_submissions(url, [chapter])
    except Exception:  # noqa: BLE001 (no gradebook: nothing was graded)
        return []
    return [untimed_warning(name, s) for name, s in found if s in students]


def _flags(
    course: Path,
    chapter: str,
    students: list[str],
    results: list,
    found: _FlagLists | None = None,
) -> None:
    """The flags of :func:`_print_flags`, printed; ``found``, the lists it read from the
    submissions (read here when not given)."""
    found = found or _read_flag_lists(course, chapter, students)
    if FLAGGED:
        print(
            f"submission time flagged ({len(FLAGGED)}: timestamp.txt over a minute from the exchange's "
            "clock; the later time counts): " + ", ".join(sorted(FLAGGED))
        )
    for line in _untimed(course, chapter, students):
        print(f"WARNING: {line}")
    # a 0-point cell's flag has no grade to give: listed apart from the cells to grade (lecturer
    # review s31, m6: one list asked for clicks on cells with nothing to grade)
    review = [r for r in results if r.review and r.points]
    read_only = [r for r in results if r.review and not r.points]
    if review:
        print(
            # the reasons in general, each one's in its test cell (lecturer review s32, m6: the
            # header named two reasons; eve's was globals(), frank's a file, others os.system)
            f"needs manual review ({len(review)}: the answer does what the grader does not run or "
            "allow, such as a name defined in a cell the student added, the checkers' package, a "
            "name computed at run time, a file or a process; each one's reason is in its test "
            "cell's output and feedback; 0 until you grade it in the Formgrader): "
            + ", ".join(f"{r.student} {r.test}" for r in review)
        )
    if read_only:
        print(
            f"flags on 0-point cells ({len(read_only)}: a prediction computed or an answer refused"
            " in a cell worth 0 points; nothing to grade in the Formgrader, a flag to read): "
            + ", ".join(f"{r.student} {r.test}" for r in read_only)
        )
    stopped = [r for r in results if STOPPED.search(r.message)]
    if stopped:  # attempts the sandbox blocked (lecturer review s11, M2: they went unreported)
        # each reason whole, on one line (lecturer review s16, M3: cut at 200 characters, a review's
        # reason ended at "It got 0 anyway:", before what the sandbox stopped)
        print(
            f"stopped by the sandbox ({len(stopped)}: an answer tried what the sandbox does not "
            "allow or ran past a limit; 0 for that exercise, nothing else affected; worth a look):\n  "
            + "\n  ".join(f"{r.student} {r.test}: {' '.join(r.message.split())}" for r in stopped)
        )
    strong, weak = strong_and_weak(found.copy)
    if strong:
        print(
            f"possible copies ({len(strong)} likenesses of written answers near-verbatim like the "
            f"model answer or another student's, or sharing {COPY_STRONG_RUNS} or more runs of "
            f"{COPY_RUN} words, in groups; read them before grading):\n  "
            + "\n  ".join(copy_clusters(course, chapter, strong))
        )
    if weak:
        print(
            f"weaker likeness ({len(weak)} written answers sharing one or two runs of {COPY_RUN} "
            f"words, or more at a similarity under {WEAK_RATIO}, often a phrase of the question; "
            "a glance):\n  " + "\n  ".join(weak)
        )
    edited = found.edited
    if edited:  # lecturer review s34, m2: put back silently before
        print(
            f"locked cells edited ({len(edited)}: a test or setup cell the student changed; the "
            "grader ran the original, so it scored nothing, but the edit was deliberate; worth a "
            "look):\n  " + "\n  ".join(edited)
        )
    quoted = found.book_numbers
    if quoted:  # lecturer review s32, M2
        print(
            f"the book's numbers with no run ({len(quoted)} written answers of an experiment that "
            "no checker grades quote the book's measured numbers, and the code cell above printed "
            "none, or holds no code; grade them by the rubric's own-run rule):\n  "
            + "\n  ".join(quoted)
        )
    if found.typed:  # lecturer review s41, M1: a forged output passed unflagged
        print(
            f"outputs with no code ({len(found.typed)}: a code cell of comments only, with an "
            "output in the submitted file; nothing in it could print that: typed in, or left by "
            "code since deleted; worth a look):\n  " + "\n  ".join(found.typed)
        )
    computed = [r for r in results if r.computed]
    if computed:  # lecturer review s22, M6
        print(
            f"predictions computed with the library ({len(computed)}: the answer cell computes the "
            "prediction with a function of the book's library or of the chapter's code, where a "
            "prediction is made before running; 0 and needs manual review):\n  "
            + "\n  ".join(
                f"{r.student} {r.test}: {COMPUTED.format(call=r.computed)}" for r in computed
            )
        )
    theirs = classmate_flags(results)
    if theirs:
        print(
            f"a classmate's right answer ({len(theirs)} wrong per-student numbers that are another "
            "student's own numbers: a copy of their answers, or their variant computed; several "
            "students may share a variant):\n  " + "\n  ".join(theirs)
        )
    code = found.code
    chance = [line for line in code if BY_CHANCE in line]
    code = [line for line in code if BY_CHANCE not in line]
    # the book's worked solution apart from copies between students (lecturer review s32, M1: the
    # honest students who took it were listed in the copier's groups): what the course's setting
    # says of it
    worked, code = split_worked(code)
    if worked:
        setting = worked_solutions_setting(course)
        what = {
            "flag": "flagged for you to decide: the book lets its readers use them (tools/"
            "make_course.py --worked-solutions allowed or zero decides it for the course)",
            "allowed": "this course allows them (--worked-solutions allowed): full marks kept, not"
            " flagged",
            "zero": "this course gives them no points (--worked-solutions zero): their test cells"
            " are at 0, the reason in the feedback; not flagged",
        }[setting]
        print(
            f"the book's worked solution taken ({len(worked)} code answer"
            f"{'' if len(worked) == 1 else 's'} of {CODE_NODES} syntax"
            f" nodes or more, the worked solution's but for names, comments and spacing; {what}):"
            "\n  " + "\n  ".join(copy_clusters(course, chapter, worked))
        )
    if code:
        print(
            f"possible copied code ({len(code)} likenesses of answers of {CODE_NODES} syntax nodes "
            "or more, the same as another student's or as a library function the exercise forbids, "
            "but for names, comments and spacing, in groups: read them):\n  "
            + "\n  ".join(copy_clusters(course, chapter, code))
        )
    if chance:  # lecturer review s29, M2: natural four-line answers were "the worked solution"
        print(
            f"short code like the worked solution ({len(chance)} answers under {CHANCE_NODES} "
            "syntax nodes, the same as the worked solution's but for their names: where the "
            "statement fixes the answer's shape, such code is often written so by chance; not "
            "flagged, and not in the export's warnings):\n  " + "\n  ".join(chance)
        )
    repaired = {s: REPAIRED[s] for s in students if REPAIRED.get(s)}
    if repaired:  # lecturer review s41, M2: which notebooks, and how, in the report too
        print(
            f"notebooks repaired ({len(repaired)}: cells copied twice or nbgrader metadata changed,"
            " which nbgrader refuses whole; graded as repaired, the notebook as submitted kept"
            " beside it as .ipynb.before-repair):\n  "
            + "\n  ".join(
                f"{s}: {line}" for s, lines in repaired.items() for line in lines.values()
            )
        )
    if REFUSED:
        print(
            f"refused by nbgrader ({len(REFUSED)}: 0 points and no feedback; each one's reason is"
            " above; see the teachers' page, *A submission nbgrader refuses*, for the repair, then"
            " grade them again with --student): " + ", ".join(sorted(REFUSED))
        )
    # no "not yet time for feedback" here: a grading run gives no feedback, and --feedback says it
    # when asked (lecturer review s16, M3)
    advice = release_advice(course, chapter)
    if advice:
        print(advice)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "chapter", help="the assignment: a chapter's name, e.g. 02_attention_as_soft_lookup"
    )
    parser.add_argument(
        "--course",
        type=Path,
        default=None,
        help="the course folder (default: this folder if it holds nbgrader_config.py, else ./course)",
    )
    parser.add_argument(
        "--student",
        action="extend",
        nargs="+",
        default=[],
        help="only these students: ids or globs such as 'a*' (--student a b, or repeated)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=10, help="seconds per call of a student's function"
    )
    parser.add_argument(
        "--cell-limit",
        type=float,
        default=120,
        help="seconds to run each answer cell (nbgrader: 120 per cell)",
    )
    parser.add_argument(
        "--cpu-limit", type=float, default=600, help="CPU seconds per (student, exercise)"
    )
    parser.add_argument(
        "--memory", type=float, default=4, help="GB of memory per (student, exercise)"
    )
    parser.add_argument(
        "--read", action="append", default=[], help="another folder answers may read"
    )
    parser.add_argument(
        "--no-autograde", action="store_true", help="nbgrader autograde ran already"
    )
    parser.add_argument("--json", type=Path, help="also write every verdict here")
    parser.add_argument(
        "--feedback",
        action="store_true",
        help="instead of grading: generate and release the chapter's feedback (after the late "
        "period), through the exchange for the submissions that came through it",
    )
    parser.add_argument(
        "--force", action="store_true", help="with --feedback: even before the late period ends"
    )
    parser.add_argument(
        "--allow-ungraded",
        action="store_true",
        help="with --feedback: even while written answers still need a manual grade (shown as 0)",
    )
    return parser


CANARY = "the-worked-solution"  # the name the canary grading runs under (no student's: a hyphen)


def worked_solution_fails(grader: Grader) -> list[str]:
    """The exercises whose worked solution, the instructor's ``source/`` notebook, the grader does
    not give full marks in its sandbox, each with the verdict: a fault of the grader, not of any
    student (lecturer review s22, B1: chapter 18's exercise 1 gave 0 to every answer). An exercise
    with per-student variants is left out: the worked solution answers the book's numbers."""
    path = grader.course / "source" / grader.chapter / f"{grader.chapter}.ipynb"
    varied = {
        e.test
        for e in grader.exercises
        if grader.variants
        and e.number in getattr(importlib.import_module(e.module), "VARIANTS", {})
    }
    # the worked solutions compute their predictions with the library after making them (chapter 12's
    # count_parameters): not flagged here, where a grader's fault is looked for
    results = grader.grade(CANARY, nbformat.read(path, as_version=4), computed=False)
    grader.canary_checked = sum(r.test not in varied for r in results)  # for the line that says so
    # a 0-point verdict (a prediction) that fails on the worked solution cannot lose points, but its
    # message reaches every student's feedback: said, not stopped (lecturer review s36, M4)
    grader.canary_zero_point = [
        f"{r.test}: {r.message.splitlines()[0][:400]}"
        for r in results
        if r.points == 0 and r.message.startswith("✗") and r.test not in varied
    ]
    return [
        f"{r.test}: {r.score:g} / {r.points:g}: {r.message.splitlines()[0][:400]}"
        + "".join(f"\n    withheld from the feedback: {said[:600]}" for said in r.withheld)
        for r in results
        if r.score < r.points and r.test not in varied
    ]


def _grade_students(
    course: Path, chapter: str, grader: Grader, students: list[str], *, autograde: bool
) -> tuple[list[str], float, list[Result]]:
    """Grade each student's submission, print and record the scores: (the students graded,
    nbgrader's autograde's seconds, every verdict)."""
    autograde_s = 0.0
    results: list[Result] = []
    if autograde:  # while the sandbox runs the chapter's code
        for student in students:
            path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
            copies = repair_duplicates(path, answer_templates(course, chapter))
            # lecturer review s41, M2: changed nbgrader metadata, refused whole, is set back too
            changed = repair_metadata(path, course_cells(course, chapter), keep=not copies)
            for line in copies + changed:
                print(f"{student}: repaired the submitted notebook: {line}")
                grade_id = line.split(" was in ", 1)[0] if " was in " in line else line
                REPAIRED.setdefault(student, {})[grade_id] = line
            flagged = check_timestamp(course, chapter, student)
            if flagged:
                print(f"{student}: submission time flagged: {flagged}")
                FLAGGED[student] = flagged
        began = time.monotonic()
        failed = autograde_without_running(course, chapter, students)
        autograde_s = time.monotonic() - began
        for student, error in failed.items():
            print(f"{student}: nbgrader refused the submission (0 points, no feedback):\n  {error}")
        REFUSED.update(failed)
        students = [s for s in students if s not in failed]
    zero_tests(course, chapter, grader, students)
    for student in students:
        path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
        try:
            submission = nbformat.read(path, as_version=4)
        except Exception as e:  # noqa: BLE001 (a notebook that is not one: every test 0)
            submission = nbformat.v4.new_notebook()
            print(f"{student}: the submitted notebook cannot be read ({e}); every test gets 0")
        graded = [
            _said_repaired(r, REPAIRED.get(student, {})) for r in grader.grade(student, submission)
        ]
        results += graded
        record(course, chapter, graded)
        total = sum(r.score for r in graded)
        print(f"{student}: {total:g} / {sum(r.points for r in graded):g}")
        for r in graded:
            first, *more = r.message.split("\n")
            print(f"  {r.test}: {r.score:g} / {r.points:g} ({r.seconds:.1f} s) {first[:300]}")
            for line in more[:8]:  # a collected prediction's other parts (lecturer review s21, M4)
                print(f"    {line[:300]}")
            for said in r.withheld:  # the teacher's log only: not in the feedback
                print(f"    withheld from the feedback: {said[:600]}")
    return students, autograde_s, results


if __name__ == "__main__":
    sys.exit(main())
