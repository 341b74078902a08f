"""The nbgrader course (tools/make_course.py) through a whole grading cycle, offline, in a temporary
course directory: nbgrader's own commands, its exchange and its SQLite gradebook (issue 14).

- ``generate_assignment`` for all 18 chapters: every worked solution and model answer is gone from the
  student's release, every exercise keeps its checker test, locked.
- Chapter 2 (the cheapest chapter that has every kind of exercise: predicted values, a function to
  implement, an experiment with a written explanation) is released, fetched and submitted by six
  students through the exchange, collected, autograded, given feedback and exported:
  the worked solutions (full marks), a typical wrong answer per exercise (zero, and the checker's
  message in the feedback), an untouched notebook (zero), one that raises, one that loops forever
  (the cell timeout stops it) and one that deleted a test cell (nbgrader restores it): each graded,
  none crashes the grader. About 2 minutes.
- In the same cycle, three students cheat, each on one exercise, and answer the other honestly (issue 22):
  one rebinds the checkers' names in the notebook, one patches the checker module (its ``fail`` and its
  ``check_*`` functions), one returns a tensor whose ``__torch_function__`` answers every ``allclose`` with
  True. Each gets 0 for the exercise they cheat on and full marks for the honest one: the locked test cell
  loads the checker afresh, and the checker compares plain tensors and numbers (``lib.exercises.plain``).
- Every student works as the "For teachers" page says: the course's ``student_nbgrader_config.py`` as
  their ``nbgrader_config.py`` (the exchange is outside the course, as on a hub), then
  ``nbgrader fetch_assignment <chapter>`` and ``nbgrader submit <chapter>``. Two more students get
  feedback they can read: a function that never returns ("did not finish in 30 s", from the checker's
  time limit), a cell and a function that crash (the error and its line, not "not attempted"). The
  feedback page wraps its lines and typesets its maths offline (MathJax inline), and
  ``nbgrader zip_collect`` files a zip of two notebooks named as a learning-management system names them.
- Each written answer has a rubric made from the chapter's model answer (the questions of the statement,
  the model answer's sentences under them, the points per question), in an nbgrader task cell's mark
  scheme: in the instructor's source, the gradebook, the graded copy the Formgrader shows and the
  feedback page, never in the students' release. One chapter's ``generate_assignment`` checks it in
  about 30 s (``-k rubric``).
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CH = "02_attention_as_soft_lookup"
BIN = Path(sys.executable).parent
STUDENTS = ["correct", "wrong", "untouched", "raises", "loops", "deleted"]
CHEATERS = ["rebinds", "patches", "claims"]
# feedback a student can read: a function that never returns, an answer cell that crashes
STUCK = ["stalls", "crashes"]
EVERYONE = STUDENTS + CHEATERS + STUCK

# Each cheat would have passed the test cell as it was before issue 22 (a call of the notebook's name).
REBIND = """
from lib.exercises import Verdict


def check_sharpen(*args, **kwargs):
    return Verdict("sharpen", "passed", "trust me")


def check_duplicate_key(*args, **kwargs):
    return Verdict("duplicated key", "passed", "trust me")
"""
PATCH = """
import lib.exercises
import lib.exercises.ch02

lib.exercises.ch02.fail = lambda message: None  # every failure of the checker is ignored
lib.exercises.fail = lib.exercises.ch02.fail
lib.exercises.ch02.check_duplicate_key = lambda *a, **k: lib.exercises.Verdict("duplicated key", "passed", "")
"""
CLAIM = """
class Agree(torch.Tensor):
    # a tensor that answers every comparison with "close"
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.allclose:
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def sharpen(w, gamma):
    return w.as_subclass(Agree)  # w itself, not sharpened
"""


def nbgrader(
    *args, cwd: Path, user: str | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if user:  # on JupyterHub the login; here `--student` names the submission
        env["JUPYTERHUB_USER"] = user
    done = subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def cells_by_id(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    # the exchange outside the course, as on a hub (/srv/nbgrader/exchange)
    exchange = tmp_path_factory.mktemp("srv") / "exchange"
    written = make_course.write_course(root, [], exchange=exchange)
    return root, dict(written)


def generate_assignments(root: Path, chapters) -> None:
    """``nbgrader generate_assignment`` for each chapter, through nbgrader's own Python API in this
    process (the same code as the command, without starting 16 processes)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{BIN}{os.pathsep}{path}"  # the gradebook runs alembic, in .venv/bin
    try:
        for chapter in chapters:
            result = api.generate_assignment(chapter, force=True)
            assert result["success"], (chapter, result.get("log", "")[-3000:])
    finally:
        os.environ["PATH"] = path


def test_every_chapter_is_an_assignment_without_its_solutions(course):
    root, exercises = course
    assert len(exercises) == 18
    generate_assignments(root, exercises)
    for chapter, exs in exercises.items():
        source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        release = nbformat.read(root / "release" / chapter / f"{chapter}.ipynb", as_version=4)
        src, rel = cells_by_id(source), cells_by_id(release)
        assert exs and all(e["answer"] or e["written"] for e in exs), chapter
        for grade_id, cell in src.items():
            meta = cell.metadata["nbgrader"]
            if meta["solution"] and cell.cell_type == "code":
                template, rest = cell.source.split(make_course.BEGIN)
                solution = rest.split(make_course.END)[0]
                # what the solution adds to the template (a signature both share is no giveaway)
                lines = [
                    ln
                    for ln in solution.splitlines()
                    if len(ln.strip()) > 12 and ln not in template
                ]
                assert lines and not any(ln in rel[grade_id].source for ln in lines), (
                    chapter,
                    grade_id,
                )
                assert rel[grade_id].source == template + "# YOUR CODE HERE", (chapter, grade_id)
            elif meta["solution"]:
                assert rel[grade_id].source == "YOUR ANSWER HERE", (chapter, grade_id)
            if meta["grade"] and cell.cell_type == "code":
                assert rel[grade_id].source == cell.source and meta["locked"]
                assert "assert verdict.passed" in cell.source
                assert cell.source.endswith(
                    "print(verdict)  # the checker's verdict: a passing test says so"
                )
                # the checker is imported afresh, after lib.exercises left sys.modules
                assert "del _sys.modules[_name]" in cell.source
                assert f"from lib.exercises.ch{chapter[:2]} import check_" in cell.source
        # the story is read-only: every cell but the answers is locked
        assert all(
            c.metadata["nbgrader"]["locked"]
            for c in release.cells
            if not c.metadata["nbgrader"]["solution"]
        )


def student_answers(kind: str, release, source):
    """The released notebook as a student of this kind hands it in."""
    nb = nbformat.from_dict(release)
    cells, src = cells_by_id(nb), cells_by_id(source)
    if kind == "correct":
        for grade_id in ("ex1_answer", "ex2_answer", "ex3_answer"):
            cells[grade_id].source = src[grade_id].source
        for grade_id in ("ex1_written", "ex2_written", "ex3_written"):
            cells[grade_id].source = "My explanation: " + src[grade_id].source[:200]
    elif kind == "wrong":  # the hard lookup's answer for the soft limit; no normalisation
        cells["ex1_answer"].source = "soft_limit = tuple(V[2].tolist())\nhard_key = 6"
        cells["ex2_answer"].source = "def sharpen(w, gamma):\n    return w ** gamma"
    elif kind == "raises":
        cells[
            "ex2_answer"
        ].source = "def sharpen(w, gamma):\n    return w ** gamma\nraise RuntimeError('oops')"
        cells["ex1_answer"].source = src["ex1_answer"].source
    elif kind == "loops":
        cells["ex1_answer"].source = src["ex1_answer"].source
        cells["ex2_answer"].source = "while True:\n    pass"
    elif kind == "rebinds":  # ex2 wrong, the checkers' names rebound; ex1 honest
        cells["ex1_answer"].source = src["ex1_answer"].source
        cells["ex2_answer"].source = "def sharpen(w, gamma):\n    return w ** gamma\n" + REBIND
    elif kind == "patches":  # ex1 wrong, the checker module patched; ex2 honest
        cells["ex1_answer"].source = "soft_limit = (1.0, 1.0)\nhard_key = 4\n" + PATCH
        cells["ex2_answer"].source = src["ex2_answer"].source
    elif kind == "claims":  # ex2 a tensor that claims to be close to anything; ex1 honest
        cells["ex1_answer"].source = src["ex1_answer"].source
        cells["ex2_answer"].source = CLAIM
    elif kind == "stalls":  # ex2's function never returns
        cells["ex1_answer"].source = src["ex1_answer"].source
        cells["ex2_answer"].source += "\ndef sharpen(w, gamma):\n    while True:\n        pass"
    elif kind == "crashes":  # ex1's cell stops before its answers; ex2's function divides by 0
        cells["ex1_answer"].source += "\nscale = 1 / 0\nsoft_limit, hard_key = (0.0, 0.0), 2"
        cells[
            "ex2_answer"
        ].source += "\ndef sharpen(w, gamma):\n    rows = len(w) - w.shape[0]\n    return w**gamma / (1 / rows)"
    elif kind == "deleted":
        cells["ex1_answer"].source = src["ex1_answer"].source
        nb.cells = [c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] != "ex1_test"]
    return nb


@pytest.fixture(scope="module")
def graded(course):
    root, _ = course
    nbgrader("generate_assignment", CH, "--force", cwd=root)
    nbgrader("release_assignment", CH, "--force", cwd=root)
    source = nbformat.read(root / "source" / CH / f"{CH}.ipynb", as_version=4)
    for student in EVERYONE:
        # each student's machine: the course's student_nbgrader_config.py as their nbgrader_config.py
        # (what the teachers' page tells them), then the commands exactly as the page writes them
        home = root.parent / f"home-{root.name}-{student}"
        home.mkdir()
        (home / "nbgrader_config.py").write_text((root / "student_nbgrader_config.py").read_text())
        nbgrader("fetch_assignment", CH, cwd=home, user=student)
        path = home / CH / f"{CH}.ipynb"
        release = nbformat.read(path, as_version=4)
        nbformat.write(student_answers(student, release, source), path)
        nbgrader("submit", CH, f"--student={student}", cwd=home, user=student)
    nbgrader("collect", CH, cwd=root)
    roster = root / "students.csv"  # the class list, imported at once as a teacher would
    roster.write_text("id\n" + "".join(f"{s}\n" for s in EVERYONE))
    nbgrader("db", "student", "import", str(roster), cwd=root)
    # a short cell timeout for the student who loops forever (the chapter's own cells take < 2 s on an
    # idle machine, 30 s leaves room for a loaded one); the others with the course's own two minutes
    nbgrader("autograde", CH, "--student=loops", "--ExecutePreprocessor.timeout=30", cwd=root)
    nbgrader("autograde", CH, cwd=root)  # skips the student already graded
    feedback = nbgrader("generate_feedback", CH, cwd=root)
    (root / "generate_feedback.log").write_text(feedback.stdout + feedback.stderr)
    nbgrader("export", "--to", str(root / "grades.csv"), cwd=root)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        scores = {
            s: {g.name: g.score for g in gb.find_submission_notebook(CH, CH, s).grades}
            for s in EVERYONE
        }
        totals = {s: gb.find_submission(CH, s).score for s in EVERYONE}
    return root, scores, totals


def test_the_gradebook_holds_the_expected_scores(graded):
    _, scores, totals = graded
    p = make_course.POINTS["checked"]
    assert scores["correct"]["ex1_test"] == p and scores["correct"]["ex2_test"] == p
    for student in ("wrong", "untouched"):
        assert scores[student]["ex1_test"] == 0 and scores[student]["ex2_test"] == 0, student
    # a raise or an endless loop in one answer costs that exercise, not the others
    assert scores["raises"]["ex1_test"] == p and scores["raises"]["ex2_test"] == 0
    assert scores["loops"]["ex1_test"] == p and scores["loops"]["ex2_test"] == 0
    # the deleted test cell was restored from the gradebook and graded
    assert scores["deleted"]["ex1_test"] == p
    # written answers wait for the teacher: no automatic score
    assert all(scores[s]["ex1_written"] in (None, 0) for s in STUDENTS)
    assert totals["correct"] == 2 * p and totals["untouched"] == 0


def test_students_who_cheat_get_zero_for_that_exercise(graded):
    _, scores, _ = graded
    p = make_course.POINTS["checked"]
    assert scores["rebinds"]["ex1_test"] == p and scores["rebinds"]["ex2_test"] == 0
    assert scores["patches"]["ex1_test"] == 0 and scores["patches"]["ex2_test"] == p
    assert scores["claims"]["ex1_test"] == p and scores["claims"]["ex2_test"] == 0


def test_the_cheats_fool_a_test_cell_that_trusts_the_notebook():
    """The cheats above are real. Run in one namespace, the rebound name and the patched module pass the
    test as it was before issue 22 (the notebook's own name called); the lying tensor claims to be close
    to anything, and only the checker's plain copy of it tells the truth. In a subprocess, so that the
    patched module does not leak into this one."""
    program = f"""
import torch
from lib.exercises.ch02 import check_duplicate_key, check_sharpen
ns = dict(globals())
exec({REBIND!r}, ns)
assert ns["check_sharpen"](lambda w, g: w ** g).passed
ns = dict(globals())
exec({CLAIM!r}, ns)
w = torch.rand(2, 5)
assert torch.allclose(ns["sharpen"](w, 2.0), torch.zeros(2, 5))  # it claims to be anything
try:
    check_sharpen(ns["sharpen"])  # the checker compares a plain tensor: w itself
    raise SystemExit("the checker trusted the tensor")
except AssertionError as e:
    assert "was not applied" in str(e), e
ns2 = dict(globals())
exec({PATCH!r}, ns2)
assert check_duplicate_key((1.0, 1.0), 4).passed  # the notebook's own name, its module patched
print("fooled")
"""
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == "fooled", done.stderr[-2000:]


def page_text(path: Path) -> str:
    """The text a reader sees in an HTML page: tags dropped, entities decoded, spaces collapsed."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text())).split())


def test_feedback_carries_the_checkers_message(graded):
    root, _, _ = graded
    from lib.exercises import ExerciseFailed
    from lib.exercises.ch02 import check_sharpen

    try:
        check_sharpen(lambda w, gamma: w**gamma)
        raise AssertionError("the wrong answer passed")
    except ExerciseFailed as e:
        expected = " ".join(str(e).split())
    middle = expected[len(expected) // 2 :][:60]  # the checker's own words, past its header
    assert "without the division" in expected
    assert middle in page_text(root / "feedback" / "wrong" / CH / f"{CH}.html")
    assert "not attempted" in page_text(root / "feedback" / "untouched" / CH / f"{CH}.html")


def feedback_page(root: Path, student: str) -> Path:
    return root / "feedback" / student / CH / f"{CH}.html"


def test_feedback_says_when_a_function_never_returns_or_an_answer_crashes(graded):
    """A function that loops forever is stopped by the checker's time limit and reported as such (no
    KeyboardInterrupt through lib/exercises); a crash in the student's cell or function is reported
    as that crash, with its line, not as "not attempted"."""
    root, scores, _ = graded
    p = make_course.POINTS["checked"]
    assert scores["stalls"]["ex1_test"] == p and scores["stalls"]["ex2_test"] == 0
    assert scores["crashes"]["ex1_test"] == 0 and scores["crashes"]["ex2_test"] == 0
    from lib.exercises import CALL_TIME_LIMIT

    stalls = page_text(feedback_page(root, "stalls"))
    assert f"your function `sharpen` did not finish in {CALL_TIME_LIMIT} s" in stalls
    assert "KeyboardInterrupt" not in stalls and "lib/exercises" not in stalls
    crashes = page_text(feedback_page(root, "crashes"))
    said = re.search(
        r"The cell above stopped with ZeroDivisionError at line (\d+) \(`scale = 1 / 0`\): "
        "division by zero",
        crashes,
    )
    # the line named is the line of the student's cell, as the traceback beside it numbers it
    traceback = re.search(r"---->\s+(\d+)\s+scale\s*=\s*1\s*/\s*0", crashes)
    assert said and traceback and said.group(1) == traceback.group(1), (said, traceback)
    # this course is graded on the practice cases (no grading material): nothing private, the
    # exception's message is shown (on private cases it is withheld: test_course_grading.py)
    assert (
        "`sharpen` raised ZeroDivisionError: division by zero, at line 12 of your cell" in crashes
    )
    assert (
        "duplicated key: not attempted" not in crashes and "sharpen: not attempted" not in crashes
    )
    untouched = page_text(feedback_page(root, "untouched"))  # where nothing was written, as before
    assert "duplicated key: not attempted" in untouched and "sharpen: not attempted" in untouched


def test_feedback_pages_wrap_long_lines_and_render_maths_offline(graded):
    """The course's templates/feedback/mathjax.html.j2 replaces nbconvert's in nbgrader's feedback page:
    the checker's message wraps (no sideways scrolling), and MathJax is inline, not from a CDN."""
    root, _, _ = graded
    page = feedback_page(root, "wrong").read_text()
    head = page.split("</head>")[0]
    assert "white-space: pre-wrap" in head and "overflow-x: visible" in head
    assert "cdnjs" not in page and "<script src=" not in page  # nothing loaded from elsewhere
    assert "MathJax 3.2.2" in head and "window.MathJax" in head
    assert len(head) > (make_course.MATHJAX.stat().st_size)  # the whole bundle, inline
    # offline, a browser typesets the chapter's maths (Debian's chromium, where installed)
    chromium = shutil.which("chromium")
    if chromium:
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000"]
            + ["--dump-dom", feedback_page(root, "wrong").as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
        )
        body = re.sub(r"<script.*?</script>", "", done.stdout.split("<body", 1)[-1], flags=re.S)
        assert body.count("<mjx-container") > 50 and "mjx-merror" not in body, done.stderr[-2000:]
    # the chapter's maths is there as TeX for MathJax to typeset
    assert r"$\lambda \to \infty$" in page


def test_feedback_pages_give_the_figures_their_alt_text_without_a_warning(graded):
    """nbgrader's generate_feedback warned twice on every run: "Config option `display_data_priority`
    not recognized by `MarkSchemeWithoutMarkers`" (nbgrader's base class declares the trait that
    nbconvert configures without config=True) and "Alternative text is missing on 6 image(s)" (the
    chapter's figure descriptions live in the cells' mystnb metadata, which nbconvert does not read,
    and its classic template gives an SVG no alt text at all). The course's config and its
    templates/feedback/base.html.j2 give each figure the chapter's own description."""
    root, _, _ = graded
    log = (root / "generate_feedback.log").read_text()
    assert "WARNING" not in log, log[-3000:]
    page = feedback_page(root, "correct").read_text()
    assert "No description has been provided for this image" not in page
    source = nbformat.read(ROOT / "notebooks" / f"{CH}.ipynb", as_version=4)
    described = [
        c.metadata["mystnb"]["image"]["alt"]
        for c in source.cells
        if c.cell_type == "code" and c.metadata.get("mystnb", {}).get("image", {}).get("alt")
    ]
    shown = [html.unescape(a) for a in re.findall(r'<img [^>]*?alt="([^"]*)"', page, re.S)]
    assert len(shown) >= 6 and set(shown) <= set(described), shown


def test_zip_collect_files_a_learning_management_systems_download(graded):
    """``nbgrader zip_collect`` with the course's FileNameCollectorPlugin.named_regexp: a zip of two
    students' notebooks, named as the teachers' page says an LMS names them, lands in submitted/."""
    import zipfile

    root, _, _ = graded
    page = (ROOT / "book" / "teachers.md").read_text()
    names = re.findall(r"`(\w+_(?:LATE_)?\d+_\d+_\w+?(?:-\d+)?\.ipynb)`", page)
    assert len(names) >= 2, "the teachers' page shows the file names zip_collect reads"
    release = root / "release" / CH / f"{CH}.ipynb"
    archive = root / "downloaded" / CH / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as z:
        for name in names:
            z.writestr(name.replace("02_attention_as_soft_lookup", CH), release.read_text())
    nbgrader("zip_collect", CH, cwd=root)
    for name in names:
        student = re.match(make_course.ZIP_NAMES, "/" + name).group("student_id")
        assert (
            root / "submitted" / student / CH / f"{CH}.ipynb"
        ).read_text() == release.read_text()


def test_grades_export_as_csv(graded):
    root, _, totals = graded
    rows = list(csv.DictReader(open(root / "grades.csv")))
    by_student = {r["student_id"]: r for r in rows if r["assignment"] == CH}
    assert set(by_student) == set(EVERYONE)
    assert float(by_student["correct"]["raw_score"]) == totals["correct"]
    assert json.dumps(totals)  # plain numbers


def test_the_teachers_page_states_what_the_course_gives(course):
    """The "For teachers" page's exercise column is the course's, and its commands are the test's."""
    _, exercises = course
    page = (ROOT / "book" / "teachers.md").read_text()
    rows = re.findall(
        r"^\| (\d+) [^|]+\|[^|]+\|[^|]+\|[^|]+\| (\d+) exercises, (\d+) points \| (\d+) points \|$",
        page,
        re.M,
    )
    stated = {int(n): (int(e), int(p)) for n, e, p, _ in rows}
    computed = {
        int(ch[:2]): (len(exs), sum(e["points"] for e in exs)) for ch, exs in exercises.items()
    }
    assert stated == computed
    # the last column: a graded course's points (make course GRADED=1), as make_course counts them
    # (lecturer review s16, M1: a lecturer copies the table into a syllabus)
    graded = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        exs = make_course.course_notebook(nb, path.stem, predictions_at_collection=True)[1]
        graded[int(path.stem[:2])] = sum(e["points"] for e in exs)
    assert {int(n): int(g) for n, _, _, g in rows} == graded
    assert graded != {n: p for n, (_, p) in computed.items()}  # a prediction is worth less there
    for command in (
        "generate_assignment",
        "release_assignment",
        "fetch_assignment",
        "submit",
        "collect",
        "db student add",
        "generate_feedback",
    ):
        assert f"nbgrader {command} " in page, command
    # grading and export are the kit's tools (test_course_feedback.py: no block runs nbgrader autograde)
    assert "python ../tools/export_grades.py --course ." in page
    assert f"is worth {make_course.POINTS['checked']} points" in page.replace("\n", " ")
    # the students' side and zip_collect's configuration are on the page
    assert "student_nbgrader_config.py" in page and "FileNameCollectorPlugin.named_regexp" in page
    from lib.exercises import CALL_TIME_LIMIT

    flat = " ".join(page.split())
    assert f"stopped by the checker after {CALL_TIME_LIMIT} seconds per call" in flat
    assert f'did not finish in {CALL_TIME_LIMIT} s"' in flat
    assert f"is worth {make_course.POINTS['written']} point per question it asks" in flat
    assert "=== BEGIN MARK SCHEME ===" in flat and make_course.MARK_BEGIN in flat
    # the written answers' points and the rubrics given whole, as the page counts them
    root, _ = course
    per_answer, whole = {}, 0
    for chapter in exercises:
        nb = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata["nbgrader"]
            if meta.get("task"):
                whole += "**Part 1" not in cell.source
            elif meta["solution"] and meta["grade"] and cell.cell_type == "markdown":
                n = int(meta["points"] / make_course.POINTS["written"])
                per_answer[n] = per_answer.get(n, 0) + 1
    # course-kit review s23 (M2): parts that re-graded predictions or autograded values dropped;
    # chapter 18's exercise 4 added one written answer of one question
    assert per_answer == {1: 34, 2: 14, 3: 3, 4: 1}
    assert "of the 52 written answers, 34 ask one question, 14 two, 3 three and one four" in flat
    assert f"{whole} of the 52 written answers)" in flat, whole


def test_a_rubric_splits_the_model_answer_by_the_questions():
    """The parts are the statement's questions; each sentence of the model answer goes under the
    question it shares words with, and a written answer is worth POINTS["written"] per part."""
    statement = (
        "**Exercise 4 (change and explain): bigger rows.** Scale the rows of `M` by 16. "
        "Which accuracy changes, and why does the cosine keep its own? (This one is answered in "
        "prose: compare yours with the model answer.)"
    )
    assert make_course.parts(statement) == [
        "Which accuracy changes?",
        "Why does the cosine keep its own?",
    ]
    model = (
        "The dot product's accuracy changes: long rows win.\n\n"
        "The cosine divides by both lengths, so it keeps its own."
    )
    text, points = make_course.rubric(4, statement, model)
    assert points == 2 * make_course.POINTS["written"]
    scheme = text.split(make_course.MARK_BEGIN)[1].split(make_course.MARK_END)[0]
    part1, part2 = scheme.split("**Part 2")
    assert '"Which accuracy changes?"' in part1 and "- The dot product's accuracy changes" in part1
    assert '"Why does the cosine keep its own?"' in part2 and "- The cosine divides" in part2
    # what the student reads (before the markers) states the questions and the points (lecturer
    # review s15, S4) and no part of the model answer
    visible = text.split(make_course.MARK_BEGIN)[0]
    assert "(2 points, 1 for each of its 2 questions)" in visible
    assert (
        "1. Which accuracy changes?" in visible
        and "2. Why does the cosine keep its own?" in visible
    )
    assert "divides" not in visible and "long rows win" not in visible.lower()
    # one paragraph per question: paragraph i goes under question i, whatever words it shares
    # (lecturer review s9, M5: chapter 9's reason shared more words with the first question)
    model = (
        "Long rows win, so the accuracy changes.\n\nThe accuracy of the cosine divides lengths out."
    )
    scheme = make_course.rubric(4, statement, model)[0].split(make_course.MARK_BEGIN)[1]
    part1, part2 = scheme.split("**Part 2")
    assert "- Long rows win" in part1 and "- The accuracy of the cosine" in part2
    # a model answer that does not split by the questions is given whole, under the list of parts
    text, points = make_course.rubric(4, statement, "Long rows win.")
    assert points == 2 and "**Part 1" not in text and "> Long rows win." in text


def test_the_formgrader_shows_each_rubric_and_the_release_does_not(tmp_path):
    """generate_assignment on one chapter: every written answer has a task cell whose mark scheme (the
    chapter's model answer, by question) is in the instructor's source and in the gradebook, from
    which autograde restores it for the Formgrader and the feedback page (nbgrader's OverwriteCells,
    run here on the released cell as autograde runs it on a submission); the release holds none of
    it, and no released sentence tells the student to compare with a model answer it lacks."""
    root = tmp_path / "course"
    written = dict(make_course.write_course(root, [CH], exchange=tmp_path / "exchange"))
    generate_assignments(root, [CH])
    source = nbformat.read(root / "source" / CH / f"{CH}.ipynb", as_version=4)
    release = nbformat.read(root / "release" / CH / f"{CH}.ipynb", as_version=4)
    src, rel = cells_by_id(source), cells_by_id(release)
    exercises = written[CH]
    rubrics = [e for e in exercises if e["written"]]
    assert len(rubrics) == 3  # chapter 2: every exercise asks for an explanation
    for e in rubrics:
        task, answer = src[e["rubric"]], src[e["written"]]
        meta = task.metadata["nbgrader"]
        assert meta["task"] and meta["locked"] and meta["points"] == 0
        scheme = task.source.split(make_course.MARK_BEGIN)[1].split(make_course.MARK_END)[0]
        # the rubric is the model answer: every sentence of it is in the mark scheme
        flat = " ".join(scheme.replace("\n> ", "\n").split())  # the whole answer is quoted
        for sentence in make_course._sentences(answer.source):
            assert sentence in flat, (e["number"], sentence)
        n = len(re.findall(r'^\*\*Part \d|^\d+\. "', scheme, re.M))
        assert n >= 1 and answer.metadata["nbgrader"]["points"] == n * make_course.POINTS["written"]
        # the release: the question and its points, no mark scheme, no model answer
        released = rel[e["rubric"]].source
        assert released == task.source.split(make_course.MARK_BEGIN)[0].rstrip("\n") + "\n"
        assert "BEGIN MARK SCHEME" not in released and "Rubric" not in released
        assert f"{n * make_course.POINTS['written']} point" in released
        assert rel[e["written"]].source == "YOUR ANSWER HERE"
    # exercise 3 asks three questions, and its model answer splits by them
    ex3 = src[rubrics[2]["rubric"]].source
    assert "**Part 1" in ex3 and "**Part 2" in ex3 and "**Part 3" in ex3
    assert '"Which score\'s accuracy changes when the rows are scaled?"' in ex3
    # the points add up: each exercise's tests and written answer, the gradebook's maximum
    graded_points = sum(
        c.metadata["nbgrader"].get("points", 0)
        for c in source.cells
        if c.metadata["nbgrader"].get("grade") or c.metadata["nbgrader"].get("task")
    )
    assert graded_points == sum(e["points"] for e in exercises)
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import OverwriteCells

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assert gb.find_assignment(CH).max_score == graded_points
        stored = gb.find_source_cell(rubrics[0]["rubric"], CH, CH).source
        assert stored == src[rubrics[0]["rubric"]].source  # the gradebook keeps the mark scheme
    # what autograde writes for the Formgrader (and generate_feedback renders): the whole rubric
    db = f"sqlite:///{root / 'gradebook.db'}"
    resources = {"nbgrader": {"assignment": CH, "notebook": CH, "db_url": db}}
    graded_nb, _ = OverwriteCells().preprocess(nbformat.from_dict(release), resources)
    for e in rubrics:
        assert cells_by_id(graded_nb)[e["rubric"]].source == src[e["rubric"]].source
    # the statements that said "compare yours with the model answer" now say where it is
    page = "\n".join(c.source for c in release.cells)
    assert not make_course.COMPARE.search(page)
    assert "model answer comes back with your feedback" in " ".join(page.split())


def test_the_graded_copy_and_the_feedback_carry_the_rubric(graded):
    """After autograde, the copy the Formgrader shows has each rubric back above the student's text
    (the release had none), the rubric's cell is not scored, and the feedback page shows it."""
    root, scores, _ = graded
    graded_nb = nbformat.read(root / "autograded" / "correct" / CH / f"{CH}.ipynb", as_version=4)
    cells = cells_by_id(graded_nb)
    for number in (1, 2, 3):
        rubric = cells[f"ex{number}_rubric"].source
        assert make_course.MARK_BEGIN in rubric and "A full answer says:" in rubric
        assert cells[f"ex{number}_written"].source.startswith("My explanation: ")
        assert scores["correct"].get(f"ex{number}_rubric") in (None, 0)
    # a passing test cell prints the checker's verdict (nbgrader executed it in autograde)
    printed = "".join(o.get("text", "") for o in cells["ex2_test"].outputs)
    assert printed.startswith("✓ sharpen: passed"), cells["ex2_test"].outputs
    page = page_text(feedback_page(root, "correct"))
    assert "Rubric: 3 points." in page
    assert "MARK SCHEME" not in page  # the rubric without nbgrader's markers (nbgrader_config.py)
    assert "Which score's accuracy changes when the rows are scaled?" in page


def test_a_graded_course_counts_predictions_for_less_and_names_chapters_without_variants(
    tmp_path, capsys
):
    """In a graded course (predictions checked at collection, make course GRADED=1) a prediction's
    test is worth POINTS["prediction"], an implementation's POINTS["checked"]; with --variants the
    command names the chosen chapters that have none (lecturer review s15, S5)."""
    assert make_course.POINTS["prediction"] < make_course.POINTS["checked"]
    out = tmp_path / "c"
    make_course.main(["06", "09", "--out", str(out), "--predictions-at-collection", "--variants"])
    printed = capsys.readouterr().out
    assert "06_self_attention: no exercise has variants" in printed
    assert "09_the_transformer: no exercise has variants" not in printed
    nb = nbformat.read(out / "source" / "06_self_attention" / "06_self_attention.ipynb", 4)
    points = {
        c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_test")
    }
    # chapter 6: exercises 1 and 3 implement, exercise 2 predicts
    assert points == {
        "ex1_test": make_course.POINTS["checked"],
        "ex2_test": make_course.POINTS["prediction"],
        "ex3_test": make_course.POINTS["checked"],
    }


def test_the_in_words_cell_asks_the_question_and_a_part_grades_few_claims():
    """The read-only cell above a written answer states the question it asks, and a part of a rubric
    asks for at most CLAIMS claims (lecturer review s15, S4: the cell asked nothing, and chapter 17's
    exercise 4 gave 9 claims for 1 point); chapter 17's statements each ask a question."""
    nb = nbformat.read(ROOT / "notebooks" / "17_modern_decoder.ipynb", 4)
    statements = [
        c.source
        for c in nb.cells
        if c.cell_type == "markdown" and make_course.EXERCISE.match(c.source)
    ]
    asked = [make_course.parts(s) for s in statements]
    assert len(asked) == 4 and all(len(a) == 1 and a[0].endswith("?") for a in asked), asked
    course, _ = make_course.course_notebook(nb, "17_modern_decoder")
    cells = [c for c in course.cells if "in words.**" in c.source]
    assert len(cells) == 4
    for cell, (question,) in zip(cells, asked):
        shown = cell.source.split(make_course.MARK_BEGIN)[0]
        assert question in shown, (question, shown)
        for part in re.split(r"\*\*Part \d", cell.source)[1:]:
            claims = part.split("The model answer also says")[0]
            assert 1 <= claims.count("\n- ") <= make_course.CLAIMS, part
