"""What a student of the nbgrader course reads (the lecturer's review, items 13): a passing test cell
says so, the feedback page shows the rubric without nbgrader's mark-scheme markers, and every rubric
part is labelled by a sentence of the exercise's statement. Fast: the course is written, not graded
(tests/test_course.py runs the whole cycle, generate_feedback included)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CH2 = next(p.stem for p in (ROOT / "notebooks").glob("02_*.ipynb"))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("course")
    make_course.write_course(root, [])
    return root


def _tasks(root: Path):
    for path in sorted((root / "source").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata["nbgrader"].get("task"):
                yield path.stem, cell


def test_a_passing_test_cell_prints_the_checkers_verdict():
    source = make_course._test_source("check_sharpen(sharpen)", "lib.exercises.ch02")
    assert source.splitlines()[-1].startswith("print(verdict)")
    namespace = {"sharpen": lambda w, gamma: (gamma * w.log()).softmax(-1)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, namespace)  # noqa: S102 (the test cell as nbgrader runs it)
    assert out.getvalue().startswith("✓ sharpen: passed")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(Exception, match="sharpen"):
        exec(source, {"sharpen": lambda w, gamma: w**gamma})  # noqa: S102 (a wrong answer)
    assert out.getvalue() == ""


def test_the_feedback_shows_the_rubric_without_the_mark_scheme_markers(course):
    """nbgrader's generate_feedback renders the graded copy, whose task cells hold the mark scheme
    whole; the course's nbgrader_config.py adds a preprocessor to nbgrader's feedback converter that
    drops the two marker lines and keeps the rubric and model answer."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.preprocessors import GetGrades

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    preprocessors = GenerateFeedback(config=config).preprocessors
    assert preprocessors[0] is GetGrades and len(preprocessors) == 6
    names = [p.__name__ for p in preprocessors[1:4]]
    # the next tests: FigureAltText, RubricAsText
    assert names == ["MarkSchemeWithoutMarkers", "FigureAltText", "RubricAsText"]
    nb = nbformat.read(course / "source" / CH2 / f"{CH2}.ipynb", as_version=4)
    rubric = next(c for c in nb.cells if c.metadata["nbgrader"].get("task")).source
    assert make_course.MARK_BEGIN in rubric
    # as nbgrader's converter runs it: registered on the exporter, where only an enabled one runs
    from nbconvert.exporters import NotebookExporter

    exporter = NotebookExporter()
    exporter.register_preprocessor(preprocessors[1])
    shown, _ = exporter._preprocess(nb, {})
    cell = next(c for c in shown.cells if c.metadata["nbgrader"].get("task"))
    assert "MARK SCHEME" not in cell.source
    markers = (make_course.MARK_BEGIN, make_course.MARK_END)
    kept = "\n".join(ln for ln in rubric.split("\n") if ln not in markers)
    assert cell.source == kept and "A full answer says:" in cell.source


def test_the_feedback_gives_each_figure_its_description(course):
    """nbconvert reads a figure's alt text from the cell's "alt"; the chapters keep it in mystnb's
    metadata (what the site shows): the feedback converter's FigureAltText copies it, for every figure
    of the chapter (tests/test_course.py checks the page nbgrader writes)."""
    from nbconvert.exporters import NotebookExporter
    from nbgrader.converters import GenerateFeedback

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    figure_alt = GenerateFeedback(config=config).preprocessors[2]
    nb = nbformat.read(course / "source" / CH2 / f"{CH2}.ipynb", as_version=4)
    described = {
        c.id: c.metadata["mystnb"]["image"]["alt"]
        for c in nb.cells
        if c.metadata.get("mystnb", {}).get("image", {}).get("alt")
    }
    assert len(described) >= 6
    exporter = NotebookExporter()
    exporter.register_preprocessor(figure_alt)
    shown, _ = exporter._preprocess(nb, {})
    assert {c.id: c.metadata.get("alt") for c in shown.cells if c.id in described} == described
    assert (course / "templates" / "feedback" / "base.html.j2").read_text() == (
        make_course.FEEDBACK_SVG
    )


def test_a_rubric_reads_as_text_not_as_a_task_scored_0_of_0(course):
    """Lecturer review s11, M9: nbgrader's feedback page listed each rubric (a 0-point task cell) as
    "Task (Score: 0.0 / 0.0)" and labelled it "Student's task". RubricAsText, after GetGrades, makes
    a 0-point task an ordinary cell of text there; a task with points stays one."""
    from nbconvert.exporters import NotebookExporter
    from nbgrader.converters import GenerateFeedback

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    as_text = GenerateFeedback(config=config).preprocessors[3]
    nb = nbformat.read(course / "source" / CH2 / f"{CH2}.ipynb", as_version=4)
    tasks = [c.id for c in nb.cells if c.metadata["nbgrader"].get("task")]
    assert tasks and all(c.metadata["nbgrader"]["points"] == 0 for c in nb.cells if c.id in tasks)
    graded = nbformat.v4.new_markdown_cell("a task worth 2 points")
    graded.metadata["nbgrader"] = {"task": True, "points": 2, "grade_id": "t", "locked": True}
    nb.cells.append(graded)
    exporter = NotebookExporter()
    exporter.register_preprocessor(as_text)
    shown, _ = exporter._preprocess(nb, {})
    assert not any(c.metadata["nbgrader"].get("task") for c in shown.cells if c.id in tasks)
    assert shown.cells[-1].metadata["nbgrader"]["task"]


def test_every_rubric_part_is_labelled_by_the_statement(course):
    """A statement that asks no question gets one part, labelled by its sentence that asks to say,
    relate, compare, explain... (or its last sentence), never a placeholder."""
    labels = {}
    for chapter, cell in _tasks(course):
        found = re.findall(r'\*\*Part \d+ \(\d+ pt\)\.\*\* "(.*?)" A full', cell.source)
        found += re.findall(r'^\d+\. "(.*)"$', cell.source, re.M)
        assert found, (chapter, cell.metadata["nbgrader"]["grade_id"])
        labels[chapter[:2], cell.metadata["nbgrader"]["grade_id"]] = found
    assert len(labels) == 52  # chapter 18's exercise 4 (course-kit review s22, M11) added one
    assert not [k for k, v in labels.items() for label in v if "asks for" in label]
    assert labels["12", "ex4_rubric"] == [
        "How does the result relate to the nearest neighbours that differ in more than a name?"
    ]
    assert labels["14", "ex3_rubric"] == ["What do the measurements say?"]  # after "(...)"
    # chapter 14's exercise 2 ends on a question for the class that its checker answers: the
    # written part stays the estimate (rubric_claims.PARTS)
    assert labels["14", "ex2_rubric"][0].startswith("Estimate its number of parameters first")
    assert labels["18", "ex2_rubric"][0].startswith("Why would the power-of-two formula")
    with pytest.raises(ValueError, match="statement"):
        make_course.parts("**Exercise 1 (implement): x.**\n\n- a list only")


@pytest.mark.parametrize("at_collection", [False, True])
def test_the_release_promises_no_worked_solution_it_does_not_hold(at_collection):
    """The chapters' introduction to their exercises promises, below each check, a worked solution and
    a model answer; the course's release has neither, and a graded course's prediction checks only
    record: the course says what the student gets instead."""
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        book = nbformat.read(path, as_version=4)
        nb, _ = make_course.course_notebook(
            book, path.stem, predictions_at_collection=at_collection
        )
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        promised = "Show a worked solution" in "\n".join(c.source for c in book.cells)
        assert "folded together under *Show a worked solution*" not in text, path.stem
        if promised and "folded together" in "\n".join(c.source for c in book.cells):
            assert make_course.FOLDED_COURSE in text, path.stem
            assert (make_course.RECORDED_COURSE.strip() in text) is at_collection, path.stem


def test_no_command_block_of_the_teachers_page_grades_with_nbgrader_autograde():
    """The page's rule "never nbgrader autograde" holds in every command block: grading is
    tools/grade_course.py's, the export tools/export_grades.py's."""
    page = (ROOT / "book" / "teachers.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", page, re.S)
    assert len(blocks) > 5
    for block in blocks:
        commands = [ln.split("#")[0].strip() for ln in block.splitlines()]
        assert not any(c.startswith(("nbgrader autograde", "nbgrader export")) for c in commands), (
            block
        )
    assert sum("python ../tools/grade_course.py" in b for b in blocks) >= 2
    assert sum("python ../tools/export_grades.py" in b for b in blocks) >= 2


def test_the_teachers_page_estimates_the_weekly_written_grading(course):
    """The written answers a week (all chapters' over the term's weeks) as the page states them."""
    import term_plan

    written = 0
    for path in sorted((course / "source").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata["nbgrader"]
            written += cell.cell_type == "markdown" and meta.get("grade") and meta.get("solution")
    weeks = len(term_plan.WEEKS)
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    # the hours come from the rubrics' parts, not the answers (lecturer review r3, problem 8):
    # tests/test_course_facts.py holds the parts, the weekly hours and the peak weeks
    assert f"The 18 chapters ask {written} of them, but you grade their rubrics' parts" in page
    assert f"a week over the {weeks} weeks" in page


def test_feedback_of_a_submission_outside_the_exchange_goes_back_through_the_lms(tmp_path):
    """A submission put in submitted/ by hand or by zip_collect has no submission_secret.txt (and
    no timestamp.txt, unless zip_collect's plugin gives a time): nbgrader release_feedback stops at
    it (FileNotFoundError) and releases no one after it. The
    grader's output names such students and gives the release command that leaves them out, which
    releases everyone else's feedback (lecturer review s11, S1)."""
    import subprocess

    import grade_course

    chapter = CH2
    for student, through_exchange in [("amira", True), ("bo", False), ("chen", True)]:
        for top in ("submitted", "feedback"):
            folder = tmp_path / top / student / chapter
            folder.mkdir(parents=True)
            if through_exchange:  # what nbgrader submit writes, and generate_feedback copies
                (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
                (folder / "submission_secret.txt").write_text(f"secret-of-{student}")
        (tmp_path / "feedback" / student / chapter / f"{chapter}.html").write_text(student)
    assert grade_course.outside_exchange(tmp_path, chapter) == ["bo"]
    advice = grade_course.release_advice(tmp_path, chapter)
    assert "came without the exchange (1:" in advice and "through your LMS: bo" in advice
    command = advice.split("\n  ", 1)[1].split()
    assert command == [
        "nbgrader",
        "release_feedback",
        chapter,
        "--CourseDirectory.student_id_exclude=bo",
    ]
    nbgrader = str(Path(sys.executable).with_name("nbgrader"))
    options = [
        f"--CourseDirectory.root={tmp_path}",
        "--CourseDirectory.course_id=course",
        f"--Exchange.root={tmp_path / 'exchange'}",
    ]
    (tmp_path / "exchange").mkdir()
    released = tmp_path / "exchange" / "course" / "feedback"
    plain = subprocess.run(
        [nbgrader, "release_feedback", chapter, *options], capture_output=True, text=True
    )
    said = plain.stdout + plain.stderr
    assert plain.returncode != 0 and "No such file" in said and f"feedback/bo/{chapter}" in said
    for f in released.glob("*.html"):
        f.unlink()
    run = subprocess.run([nbgrader, *command[1:], *options], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert sorted(f.read_text() for f in released.glob("*.html")) == ["amira", "chen"]
    # every submission outside the exchange: nothing to release there
    for student in ("amira", "chen"):
        (tmp_path / "submitted" / student / chapter / "submission_secret.txt").unlink()
    advice = grade_course.release_advice(tmp_path, chapter)
    assert advice.endswith("do not run nbgrader release_feedback") and "amira, bo, chen" in advice


def test_a_teachers_grade_after_a_review_is_said_above_the_graders_note(course):
    """Lecturer review s13: after the teacher graded an answer the grader had sent for manual review,
    the feedback showed "Score: 2.0 / 2.0" above "needs manual review ... 0 of 2 points". The
    TeachersGrade preprocessor (after GetGrades) says the teacher graded it; a 0 is left alone."""
    from nbconvert.exporters import NotebookExporter
    from nbgrader.converters import GenerateFeedback

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    teachers = GenerateFeedback(config=config).preprocessors[4]
    assert teachers.__name__ == "TeachersGrade"
    note = "needs manual review: uses log_sharpen defined outside the answer cell"
    cells = []
    for score in (2.0, 0.0):
        cell = nbformat.v4.new_code_cell("check_sharpen(sharpen)")
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": "t", "score": score, "points": 2.0}
        cell.outputs = [nbformat.v4.new_output("error", ename="E", evalue=note, traceback=[])]
        cells.append(cell)
    exporter = NotebookExporter()
    exporter.register_preprocessor(teachers)
    shown, _ = exporter._preprocess(nbformat.v4.new_notebook(cells=cells), {})
    graded, zero = shown.cells
    assert graded.outputs[0]["text"].startswith("graded by your teacher: 2 of 2 points")
    assert graded.outputs[1]["evalue"] == note and len(zero.outputs) == 1


def test_the_feedback_command_waits_for_the_late_period_and_leaves_out_hand_ins(
    tmp_path, capsys, monkeypatch
):
    """Lecturer review s13: the checklist's nbgrader release_feedback ran 9 days before the deadline
    without a word, and stopped half-way at a submission put in by hand. `grade_course.py CH
    --feedback` refuses before the late period ends (unless --force) and releases through the
    exchange only what came through it, naming the others for the LMS."""
    import datetime as dt
    import subprocess

    import grade_course
    from nbgrader.api import Gradebook

    db, now = _course_due(tmp_path, monkeypatch, days=-2)
    for student, secret in (("amira", True), ("bo", False), ("chen", True)):
        folder = tmp_path / "submitted" / student / CH2
        folder.mkdir(parents=True)
        if secret:
            (folder / "submission_secret.txt").write_text("s")
    ran = []

    def run(command, cwd):
        ran.append(command)
        return subprocess.CompletedProcess(command, 0)

    assert grade_course.give_feedback(tmp_path, CH2, run=run) == 2 and ran == []
    assert "not yet time for feedback" in capsys.readouterr().out
    assert grade_course.give_feedback(tmp_path, CH2, force=True, run=run) == 0
    assert ran == [
        ["nbgrader", "generate_feedback", CH2],
        ["nbgrader", "release_feedback", CH2, "--CourseDirectory.student_id_exclude=bo"],
    ]
    forced = capsys.readouterr().out
    assert "through your LMS" in forced
    # said out loud: --force before the deadline releases the private cases (lecturer review s15, M6)
    assert "releases the grader's verdicts on its private cases" in forced
    with Gradebook(f"sqlite:///{db}") as gb:  # the late period over: no --force needed
        gb.update_or_create_assignment(CH2, duedate=now - dt.timedelta(days=8))
    ran.clear()
    for student in ("amira", "chen"):  # and every submission by hand: nothing to release
        (tmp_path / "submitted" / student / CH2 / "submission_secret.txt").unlink()
    assert grade_course.give_feedback(tmp_path, CH2, run=run) == 0
    assert ran == [["nbgrader", "generate_feedback", CH2]]


def test_the_feedback_command_refuses_while_written_answers_are_ungraded(
    tmp_path, capsys, monkeypatch
):
    """Lecturer review s21, S3: --feedback released pages showing the unmarked written answers as
    0 points. It refuses, naming student, chapter and cells as export_grades.py does, until they are
    graded or --allow-ungraded is given."""
    import datetime as dt
    import os
    import subprocess

    import grade_course
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    db = tmp_path / "gradebook.db"
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment(CH2, duedate=now - dt.timedelta(days=8))
        gb.add_notebook(CH2, CH2)
        gb.add_grade_cell("ex1_written", CH2, CH2, max_score=2, cell_type="markdown")
        gb.add_grade_cell("ex1_test", CH2, CH2, max_score=1, cell_type="code")
        gb.add_grade_cell("ex2_written", CH2, CH2, max_score=0, cell_type="markdown")
        for student in ("amira", "bo"):
            gb.add_student(student)
            gb.add_submission(CH2, student)
            folder = tmp_path / "submitted" / student / CH2
            folder.mkdir(parents=True)
            (folder / "submission_secret.txt").write_text("s")
        for student in ("amira", "bo"):
            for name in ("ex1_written", "ex2_written"):
                grade = gb.find_grade(name, CH2, CH2, student)
                grade.needs_manual_grade = True
            test = gb.find_grade("ex1_test", CH2, CH2, student)
            test.auto_score, test.needs_manual_grade = 1, False
        gb.db.commit()
    ran = []

    def run(command, cwd):
        ran.append(command)
        return subprocess.CompletedProcess(command, 0)

    assert grade_course.give_feedback(tmp_path, CH2, run=run) == 2 and ran == []
    out = capsys.readouterr().out
    assert f"amira {CH2}: 1 written answer still needs a manual grade (ex1_written)" in out
    assert f"bo {CH2}: 1 written answer still needs a manual grade (ex1_written)" in out
    assert "ex2_written" not in out and "--allow-ungraded" in out
    assert grade_course.give_feedback(tmp_path, CH2, run=run, allow_ungraded=True) == 0
    assert ran[0] == ["nbgrader", "generate_feedback", CH2]
    ran.clear()
    with Gradebook(f"sqlite:///{db}") as gb:  # graded in the Formgrader: released
        for student in ("amira", "bo"):
            grade = gb.find_grade("ex1_written", CH2, CH2, student)
            grade.manual_score, grade.needs_manual_grade = 2, False
        gb.db.commit()
    assert grade_course.give_feedback(tmp_path, CH2, run=run) == 0 and ran
    assert "still need a manual grade" not in capsys.readouterr().out


def test_a_test_cell_held_for_review_is_named_as_one():
    """Lecturer review s22, M4: "1 answers still need a manual grade (ex3_test)" called a test cell
    the grader held for manual review a written answer."""
    import grade_course

    said = grade_course.manual_grades_said(["ex3_test"])
    assert said == "1 test cell held for manual review still needs a manual grade (ex3_test)"
    said = grade_course.manual_grades_said(["ex1_test", "ex2_written", "ex3_written"])
    assert said.startswith("2 written answers and 1 test cell held for manual review still need")


def test_the_feedback_gives_no_order_to_run_a_cell_again():
    """Course review s27, m15: an exercise left as the template read, in feedback after the
    deadline, "Write its body in the cell above, run that cell, then run this one again"."""
    import grade_course

    stub = (
        "✗ flash_forward: not attempted. `flash_forward` is still the template (its body does "
        "nothing). Write its body in the cell above, run that cell, then run this one again."
    )
    said = grade_course.graded_wording(stub)
    assert said.endswith("The submitted notebook has no body for it.")
    assert "run" not in said.split("nothing).")[1]
    for advice in (
        "define `f` in the cell above, then run this cell again.",
        "write your two predictions (a and b) in the cell above, then run this cell again.",
        "`t` is right; now build M_k in `my_rotation` and run this cell again.",
    ):
        said = grade_course.graded_wording(advice)
        assert "again" not in said and said.endswith("; the submitted notebook has none.")
    # every such advice of the checkers is rewritten
    root = Path(grade_course.__file__).resolve().parents[1]
    for path in sorted((root / "lib" / "exercises").glob("ch*.py")):
        for advice in re.findall(
            r"[^\"']*run (?:this|that) (?:cell|one) again[^\"']*", path.read_text()
        ):
            assert "again" not in grade_course.graded_wording(advice), (path.name, advice)


def test_a_teachers_zero_after_a_review_is_said_too(course, tmp_path):
    """Lecturer review s29, m3: a teacher's 0 on an answer sent for manual review read as not
    reviewed ("needs manual review ... It got 0 anyway"). TeachersGrade asks the gradebook whether
    the teacher graded the cell: a manual 0 is said as the teacher's; a cell not graded by hand is
    left alone."""
    from nbconvert.exporters import NotebookExporter
    from nbgrader.api import Gradebook
    from nbgrader.converters import GenerateFeedback

    chapter = "02_attention_as_soft_lookup"
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment(chapter)
        gb.add_notebook(chapter, chapter)
        for cell in ("reviewed", "pending"):
            gb.add_grade_cell(cell, chapter, chapter, max_score=2, cell_type="code")
        gb.add_student("eve")
        gb.add_submission(chapter, "eve")
        gb.find_grade("reviewed", chapter, chapter, "eve").manual_score = 0.0
        gb.db.commit()
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    teachers = GenerateFeedback(config=config).preprocessors[4]
    assert teachers.__name__ == "TeachersGrade"
    note = "needs manual review: the answer cell uses `globals(...)`"
    cells = []
    for grade_id in ("reviewed", "pending"):
        cell = nbformat.v4.new_code_cell("check_sharpen(sharpen)")
        cell.metadata["nbgrader"] = {
            "grade": True,
            "grade_id": grade_id,
            "score": 0.0,
            "points": 2.0,
        }
        cell.outputs = [nbformat.v4.new_output("error", ename="E", evalue=note, traceback=[])]
        cells.append(cell)
    exporter = NotebookExporter()
    exporter.register_preprocessor(teachers)
    resources = {
        "nbgrader": {"db_url": url, "notebook": chapter, "assignment": chapter, "student": "eve"}
    }
    shown, _ = exporter._preprocess(nbformat.v4.new_notebook(cells=cells), resources)
    reviewed, pending = shown.cells
    assert reviewed.outputs[0]["text"].startswith("graded by your teacher: 0 of 2 points")
    assert reviewed.outputs[1]["evalue"] == note and len(pending.outputs) == 1


def test_a_reviewed_cells_feedback_names_its_one_offence_and_its_grade(tmp_path, monkeypatch):
    """Lecturer review s31, m7: eve's released feedback still said "needs manual review: the answer
    cell uses `import subprocess`, which reads the book's checkers (lib.exercises) or imports by a
    computed name, or reads files or code", after the teacher had graded it: it names the one
    offence, and once graded says "reviewed by your teacher" with the grade."""
    import os

    import grade_course
    import nbformat
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    assert grade_course.offence("import subprocess") == (
        "reads files or code instead of computing (the checkers' source among them)"
    )
    assert grade_course.offence("getattr(_F, 'rms' + '_norm')").startswith(
        "looks up a module or a function by a computed name"
    )
    assert grade_course.offence("__import__('lib.exer' + 'cises.ch09')").startswith("looks up")
    assert grade_course.offence("lib.exercises.ch04.luong_left_shares").startswith(
        "reads the book's checkers (lib.exercises)"
    )
    db = tmp_path / "gradebook.db"
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment(CH2)
        gb.add_notebook(CH2, CH2)
        gb.add_grade_cell("ex2_test", CH2, CH2, max_score=2, cell_type="code")
        for student in ("eve", "zoe"):
            gb.add_student(student)
            gb.add_submission(CH2, student)
        grade = gb.find_grade("ex2_test", CH2, CH2, "eve")
        grade.manual_score = 0
        gb.db.commit()
    said = (
        "needs manual review: the answer cell uses `import subprocess`, which "
        + grade_course.offence("import subprocess")
        + "; an answer may not. It got 0 anyway: ..."
    )
    for student in ("eve", "zoe"):  # zoe's is not graded yet: it stays as it is
        result = grade_course.Result(student, "ex2_test", 2.0, 0.0, said, 0.1)
        cell = nbformat.v4.new_code_cell("check()", outputs=[grade_course._output(result)])
        cell.metadata["nbgrader"] = {"grade_id": "ex2_test", "grade": True, "points": 2}
        path = tmp_path / "autograded" / student / CH2 / f"{CH2}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    assert grade_course.settle_reviewed(tmp_path, CH2) == 1
    (out,) = (
        nbformat.read(tmp_path / "autograded" / "eve" / CH2 / f"{CH2}.ipynb", 4).cells[0].outputs
    )
    assert out.evalue.startswith("reviewed by your teacher (0 of 2 points): the answer cell uses")
    assert "needs manual review" not in out.evalue + "".join(out.traceback)
    assert "imports by a computed name" not in out.evalue
    (kept,) = (
        nbformat.read(tmp_path / "autograded" / "zoe" / CH2 / f"{CH2}.ipynb", 4).cells[0].outputs
    )
    assert kept.evalue.startswith("needs manual review: ")
    assert grade_course.settle_reviewed(tmp_path, CH2) == 0  # once only
    import instructor_notes

    assert instructor_notes.held(out.evalue)  # still counted apart from the named mistakes


def test_a_hand_score_other_than_the_sandboxs_is_said_with_its_reason(tmp_path, monkeypatch):
    """Course review s40, M1: under --worked-solutions flag, the teacher zeroed a pasted worked
    solution in the Formgrader; the feedback said "Score: 0.0 / 2.0" above "passed ... (graded in the
    course's sandbox: 2 of 2 points)" with no reason. A manual score other than the sandbox's opens
    the verdict with what happened and the flag's reason; a manual score equal to the sandbox's, and
    a cell not scored by hand, are left alone; a later manual score replaces the line."""
    import os

    import grade_course
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    db = tmp_path / "gradebook.db"
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    students = {"eve": (2.0, 0.0), "zoe": (0.0, 1.0), "ann": (2.0, 2.0), "bob": (2.0, None)}
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment(CH2)
        gb.add_notebook(CH2, CH2)
        gb.add_grade_cell("ex2_test", CH2, CH2, max_score=2, cell_type="code")
        for student, (_, manual) in students.items():
            gb.add_student(student)
            gb.add_submission(CH2, student)
            gb.find_grade("ex2_test", CH2, CH2, student).manual_score = manual
        gb.db.commit()
    for student, (sandbox, _) in students.items():
        said = "✓ sharpen: passed." if sandbox else "✗ sharpen: not yet right. You divided by T."
        result = grade_course.Result(student, "ex2_test", 2.0, sandbox, said, 0.1)
        cell = nbformat.v4.new_code_cell("check()", outputs=[grade_course._output(result)])
        cell.metadata["nbgrader"] = {"grade_id": "ex2_test", "grade": True, "points": 2}
        path = tmp_path / "autograded" / student / CH2 / f"{CH2}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    flags = [
        "eve ex2_answer: the same code as the worked solution (up to names, comments and spacing; "
        "60 syntax nodes)"
    ]
    monkeypatch.setattr(grade_course, "code_copy_flags", lambda course, chapter, students: flags)

    def said(student):
        path = tmp_path / "autograded" / student / CH2 / f"{CH2}.ipynb"
        (out,) = nbformat.read(path, 4).cells[0].outputs
        return out

    assert grade_course.settle_reviewed(tmp_path, CH2) == 2
    eve = said("eve").text.splitlines()
    assert eve[0].startswith(
        "reviewed by your teacher: 0 of 2 points; the sandbox's verdict, below, was 2 of 2. "
        "The grader found that this answer is the book's worked solution"
    )
    assert eve[1:] == ["✓ sharpen: passed.", "(graded in the course's sandbox: 2 of 2 points)"]
    zoe = said("zoe")
    assert zoe.traceback[0] == (
        "reviewed by your teacher: 1 of 2 points; the sandbox's verdict, below, was 0 of 2 (your "
        "teacher's comment, if any, says why)."
    )
    assert zoe.evalue.startswith("✗ sharpen")  # the sandbox's verdict, as the notes count it
    assert not said("ann").text.startswith("reviewed") and not said("bob").text.startswith("rev")
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.find_grade("ex2_test", CH2, CH2, "eve").manual_score = 1.0
        gb.db.commit()
    assert grade_course.settle_reviewed(tmp_path, CH2) == 2
    eve = said("eve").text.splitlines()
    assert eve[0].startswith("reviewed by your teacher: 1 of 2 points") and len(eve) == 3


def _course_due(tmp_path: Path, monkeypatch, days: float):
    """A course folder in ``tmp_path`` whose gradebook has chapter 2 due ``days`` from now (negative:
    past); returns the gradebook's path and now (UTC, naive, as nbgrader keeps it)."""
    import datetime as dt
    import os

    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    db = tmp_path / "gradebook.db"  # (the gradebook runs alembic, in the environment's bin)
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment(CH2, duedate=now + dt.timedelta(days=days))
    return db, now


def test_feedback_too_early_is_refused_before_the_graders_start_up(tmp_path, monkeypatch):
    """``grade_course.py --feedback`` before the late period ends refuses before it imports torch
    (lecturer review s35, m3: the refusal came after a minute or more of start-up). A torch that
    cannot be imported shows it: the refusal comes all the same."""
    import os
    import subprocess

    _course_due(tmp_path, monkeypatch, days=2)
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text("raise ImportError('torch imported before the date check')\n")
    env = dict(os.environ, PYTHONPATH=str(fake))
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "grade_course.py"), CH2, "--feedback"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "not yet time for feedback" in done.stdout
    assert "Nothing done (--force gives the feedback now)." in done.stdout
    # --force goes on to the whole tool, which imports torch (here the fake one, which stops it)
    forced = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "grade_course.py"), CH2, "--feedback", "--force"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "torch imported before the date check" in forced.stderr
