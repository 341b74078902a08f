"""The copy report's noise (lecturer review s29, M2): short code whose shape the statement fixes is
not called "the book's worked solution" unless it is near-verbatim (chapter 16's
``discriminator_loss``: the natural four lines, 50 syntax nodes); a teacher can mark a chapter's flags
reviewed, and later exports stop warning about them; the export says its grades are not final only
while something is pending."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import export_grades  # noqa: E402
import grade_course  # noqa: E402
import make_course  # noqa: E402

from tests.test_course_wording import _submit_answers  # noqa: E402

# eve's and frank's answer in the review: the worked solution's code, with a label name of her own
NATURAL = """def discriminator_loss(logits, original, masked, corrupted, attention_mask):
    real = attention_mask.bool()
    y = (corrupted != original).float()
    return torch.nn.functional.binary_cross_entropy_with_logits(logits[real], y[real])
"""
# the worked solution's function with its own names, its comments and docstring dropped
VERBATIM = """def discriminator_loss(logits, original, masked, corrupted, attention_mask):
    real = attention_mask.bool()
    labels = (corrupted != original).float()
    return torch.nn.functional.binary_cross_entropy_with_logits(logits[real], labels[real])
"""


def _course(tmp_path: Path, submitted: dict[str, str]) -> tuple[str, str]:
    make_course.write_course(tmp_path, ["16"])
    chapter = next((tmp_path / "source").iterdir()).name
    _submit_answers(tmp_path, chapter, "ex1_answer", grade_course.SOLUTION_MARKS[0], submitted)
    return chapter, "ex1_answer"


def test_short_natural_code_is_not_the_worked_solution_unless_near_verbatim(tmp_path):
    leak = "import numpy as _np\nprint('no leak')\n\n\n"  # frank's cell: more than the function
    chapter, grade_id = _course(
        tmp_path, {"eve": NATURAL, "frank": leak + NATURAL, "ali": VERBATIM}
    )
    assert grade_course.code_shape(NATURAL)[1] == 50 < grade_course.CHANCE_NODES
    flags = grade_course.code_copy_flags(tmp_path, chapter, ["ali", "eve", "frank"])
    chance = [f for f in flags if grade_course.BY_CHANCE in f]
    assert [f.split()[0] for f in chance] == ["eve", "frank"], flags
    for line in chance:  # the worked solution's cell holds more: its function is compared
        assert "the short function discriminator_loss is like the worked solution's" in line
        assert "(50 syntax nodes, under 60; expected by chance)" in line
    book = [f for f in flags if grade_course.BY_CHANCE not in f and "worked solution" in f]
    assert [f.split()[0] for f in book] == ["ali"], flags  # near-verbatim: still the book's
    clusters = grade_course.copy_clusters(tmp_path, chapter, book)
    assert f"{grade_id}: 1 answer is the book's worked solution: ali" in clusters


def test_the_report_keeps_expected_coincidences_out_of_the_flags(tmp_path, capsys):
    chapter, _ = _course(tmp_path, {"eve": NATURAL})
    grade_course._print_flags(tmp_path, chapter, ["eve"], [])
    out = capsys.readouterr().out
    assert "short code like the worked solution (1 answers under 60 syntax nodes" in out
    saved = tmp_path / "reports" / f"{chapter}-flags.json"
    # (her written answers are the source's model answers: those are flagged, her code is not)
    assert "alike with the worked solution" not in json.loads(saved.read_text()).get("eve", [])


def _flags(reports: Path, chapter: str) -> None:
    reports.mkdir()
    flags = {
        "alice": ["alike with the worked solution"],
        "bob": ["alike with frank; bob submitted first"],
        "frank": ["alike with bob; bob submitted first", "ex1_test needs manual review"],
    }
    (reports / f"{chapter}-flags.json").write_text(json.dumps(flags))


def test_a_chapter_marked_reviewed_no_longer_warns(tmp_path):
    reports, chapter = tmp_path / "reports", "16_beyond_bert"
    _flags(reports, chapter)
    assert len(export_grades.flag_warnings(reports, [chapter])) == 3
    said = export_grades.mark_reviewed(reports, chapter, ["alice"])
    assert said == [f"alice {chapter}: 1 flags marked reviewed"]
    warnings = export_grades.flag_warnings(reports, [chapter])
    assert len(warnings) == 2 and not any("worked solution" in w for w in warnings), warnings
    export_grades.mark_reviewed(reports, chapter)
    assert export_grades.flag_warnings(reports, [chapter]) == []
    # a flag a later grading run raises anew warns again
    flags = json.loads((reports / f"{chapter}-flags.json").read_text())
    flags["frank"].append("ex2_test needs manual review")
    (reports / f"{chapter}-flags.json").write_text(json.dumps(flags))
    (new,) = export_grades.flag_warnings(reports, [chapter])
    assert new.startswith(f"frank {chapter}: flagged when graded (ex2_test needs manual review")
    with pytest.raises(ValueError, match="students: 16_beyond_bert has no flags for zed"):
        export_grades.mark_reviewed(reports, chapter, ["zed"])
    with pytest.raises(ValueError, match="no flags to mark reviewed for 07"):
        export_grades.mark_reviewed(reports, "07")


def test_the_command_marks_a_chapter_reviewed(tmp_path, capsys):
    reports, chapter = tmp_path / "course" / "reports", "16_beyond_bert"
    reports.parent.mkdir()
    _flags(reports, chapter)
    assert export_grades.main(["--course", str(tmp_path / "course"), "--reviewed", chapter]) == 0
    assert "frank 16_beyond_bert: 2 flags marked reviewed" in capsys.readouterr().out
    assert export_grades.flag_warnings(reports, [chapter]) == []


def test_the_formgrader_renders_its_maths_offline(tmp_path):
    """Lecturer review s29, M4: the Formgrader showed raw TeX, loading MathJax 2 from a CDN (and its
    formgrade.js stopped on "MathJax is not defined" offline). The course's templates/formgrade gives
    its page the book's own MathJax 3 inline, with the startup signal formgrade.js waits for; the
    page is rendered here as the Formgrader renders it (its exporter, the course's template folders)."""
    import os

    import nbgrader
    from nbconvert.exporters import HTMLExporter

    if not make_course.MATHJAX.exists():
        pytest.skip("node_modules/mathjax is missing (npm ci)")
    make_course._write_configs(tmp_path, tmp_path / "exchange")
    nbgrader_templates = os.path.join(
        os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"
    )
    exporter = HTMLExporter(
        template_name="formgrade",
        extra_template_basedirs=[str(tmp_path / "templates"), nbgrader_templates],
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("$w(i)^\\gamma$")])
    resources = {"base_url": "", "notebook_path": "x", "index": 0, "total": 1}
    resources |= {"assignment_id": "a", "notebook_id": "n", "submission_id": "s"}
    resources |= {"student": "eve", "first_name": "", "last_name": ""}
    html, _ = exporter.from_notebook_node(nb, resources=resources)
    assert "cdnjs" not in html and "MathJax 3" in html  # the book's copy, inline
    assert "MathJax.Hub = {" in html and "MathJax.startup.promise" in html


def test_several_chapters_after_reviewed_say_one_chapter_per_call(tmp_path, capsys):
    """Lecturer review s31, m5: `--reviewed 04_... 09_... 17_...` said "students: 04_... has no flags
    for 09_..., 17_...", back to front; it says they are chapters, and one chapter per call."""
    reports, chapter = tmp_path / "reports", "16_beyond_bert"
    _flags(reports, chapter)
    with pytest.raises(ValueError) as raised:
        export_grades.mark_reviewed(reports, chapter, ["09_the_transformer", "17_modern_decoder"])
    said = str(raised.value)
    assert said.startswith("students: 09_the_transformer, 17_modern_decoder are chapters, not")
    assert "not students of 16_beyond_bert's flags" in said and "one chapter per call" in said
    args = ["--course", str(tmp_path), "--reviewed", chapter, "09_the_transformer"]
    assert export_grades.main(args) != 0
    err = capsys.readouterr().err
    assert "09_the_transformer is a chapter, not a student of 16_beyond_bert's flags" in err, err


def test_flags_on_0_point_cells_are_listed_apart_from_the_cells_to_grade(tmp_path, capsys):
    """Lecturer review s31, m6: the summary listed frank's 0-point ex4_test under "needs manual
    review (...; 0 until you grade it in the Formgrader)", whose cell says there is no grade to
    give; the 0-point flags now have a list of their own, with nothing to grade."""
    chapter, _ = _course(tmp_path, {"eve": NATURAL})
    results = [
        grade_course.Result("eve", "ex2_test", 2.0, 0.0, "needs manual review: uses x", 0.1),
        grade_course.Result("frank", "ex4_test", 0.0, 0.0, "needs manual review: computed", 0.1),
    ]
    for r in results:
        r.review = True
    grade_course._print_flags(tmp_path, chapter, ["eve", "frank"], results)
    out = capsys.readouterr().out
    graded = next(line for line in out.splitlines() if line.startswith("needs manual review ("))
    assert graded.startswith("needs manual review (1:") and graded.endswith("): eve ex2_test")
    assert (
        "such as a name defined in a cell the student added, the checkers' package, a name" in out
    )
    read = next(line for line in out.splitlines() if line.startswith("flags on 0-point cells"))
    assert read.endswith("nothing to grade in the Formgrader, a flag to read): frank ex4_test")
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert 'those it lists under "flags on 0-point cells" have nothing to grade' in page


# eve's answer to chapter 14's exercise 3 in the review: the model answer's numbers, no run
EVE_14 = (
    "Frozen, the chapter's head stays at chance, 48.1%, against more than three quarters fully"
    " fine-tuned. Longer training alone gives a little over 60%, standardising alone a little"
    " under, both about two thirds."
)


def _write_exercise_3(course, chapter, student, answer, outputs, code="run_experiment()"):
    """Put ``answer`` in a submission's exercise-3 written cell and ``outputs`` under its code cell,
    whose template gets the line ``code`` where it has outputs (the run that printed them)."""
    path = course / "submitted" / student / chapter / f"{chapter}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "ex3_written":
            cell.source = answer
        elif grade_id == "ex3_answer":
            cell.outputs = outputs
            if outputs and code:
                cell.source += "\n" + code
    nbformat.write(nb, path)


def test_an_answer_quoting_the_books_numbers_with_no_run_is_flagged(tmp_path):
    """Lecturer review s32, M2: eve answered chapter 14's exercise 3 with the book's numbers and no
    experiment code, and nothing was flagged. The same words under a code cell that printed its own
    numbers (alice), or an answer with no number (bob), are not flagged."""
    make_course.write_course(tmp_path, ["14"])
    chapter = next((tmp_path / "source").iterdir()).name
    students = {"alice": "", "bob": "", "eve": ""}  # the release's templates, written below
    _submit_answers(tmp_path, chapter, "none", grade_course.SOLUTION_MARKS[0], students)
    printed = nbformat.v4.new_output("stream", text="frozen: test accuracy 49.0%\n")
    for student, answer, outputs in (
        ("eve", EVE_14, []),
        ("alice", EVE_14, [printed]),
        ("bob", "It stays at chance.", []),
    ):
        _write_exercise_3(tmp_path, chapter, student, answer, outputs)
    flags = grade_course.book_numbers_flags(tmp_path, chapter, ["alice", "bob", "eve"])
    assert len(flags) == 1 and flags[0].startswith(f"eve ex3_written: {grade_course.BOOK_NUMBERS}")
    assert "(it quotes 48.1, 60%;" in flags[0]
    assert "the code cell ex3_answer printed no number" in flags[0]


# alice's run of chapter 04's exercise 3 in review s41: the worked experiment's Markdown table
TABLE_04 = (
    "| k = 8 | λ = 0 | λ = 0.5 | λ = 1 |\n|---|---|---|---|\n"
    "| plain: mean length / exact | 20.18 / 10% | 20.36 / 14% | 21.90 / 14% |\n"
    "| attention: mean length / exact | 20.44 / 94% | 20.44 / 94% | 20.44 / 94% |"
)
ANSWER_04 = (
    "Normalisation matters when the model is not sure of the length: the plain model's outputs get"
    " longer (20.2 to 21.9 words). For the attention model it changes nothing (20.44 words, 94%)."
)


def test_a_displayed_table_is_a_run_and_an_output_under_no_code_is_not(
    tmp_path, monkeypatch, capsys
):
    """Lecturer review s41, M1: alice ran chapter 04's worked experiment, which shows a Markdown
    table (display_data, its text/plain "<IPython.core.display.Markdown object>"), and was flagged
    "printed no number"; ivan typed the book's numbers as the output of a cell holding only
    "# ran it in Colab" and passed. A displayed result (text/markdown, text/html, text/plain) is a
    run; an output under a cell with no code is flagged, here and among the flags saved."""
    make_course.write_course(tmp_path, ["04"])
    chapter = next((tmp_path / "source").iterdir()).name
    names = ["alice", "carol", "ivan"]
    _submit_answers(
        tmp_path, chapter, "none", grade_course.SOLUTION_MARKS[0], dict.fromkeys(names, "")
    )
    markdown = nbformat.v4.new_output(
        "display_data",
        data={"text/markdown": TABLE_04, "text/plain": "<IPython.core.display.Markdown object>"},
    )
    html = nbformat.v4.new_output(
        "execute_result",
        data={"text/html": "<table><tr><td>20.18</td><td>21.90</td></tr></table>"},
        execution_count=3,
    )
    typed = nbformat.v4.new_output("stream", text="lam 0: 20.18, exact 10%\nlam 1: 21.90, 14%\n")
    _write_exercise_3(tmp_path, chapter, "alice", ANSWER_04, [markdown])
    _write_exercise_3(tmp_path, chapter, "carol", ANSWER_04, [html])
    _write_exercise_3(tmp_path, chapter, "ivan", ANSWER_04, [typed], code="# ran it in Colab")
    flags = grade_course.book_numbers_flags(tmp_path, chapter, names)
    assert len(flags) == 1 and flags[0].startswith(f"ivan ex3_written: {grade_course.BOOK_NUMBERS}")
    assert "the code cell ex3_answer holds no code, its output typed in" in flags[0]
    typed_lines = grade_course.typed_outputs(tmp_path, chapter, names)
    assert typed_lines == [f"ivan ex3_answer: {grade_course.TYPED_OUTPUT}"]
    for name in ("FLAGGED", "REFUSED", "REPAIRED"):  # {student: ...} of this run
        monkeypatch.setattr(grade_course, name, {}, raising=False)
    for name in ("copy_flags", "code_copy_flags"):
        monkeypatch.setattr(grade_course, name, lambda *a: [])
    grade_course._print_flags(tmp_path, chapter, names, [])
    out = capsys.readouterr().out
    assert "outputs with no code (1:" in out and typed_lines[0] in out
    saved = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    assert set(saved) == {"ivan"}
    assert f"ex3_answer {grade_course.TYPED_OUTPUT}" in saved["ivan"]


@pytest.mark.parametrize("setting", ["flag", "allowed", "zero"])
def test_the_courses_worked_solutions_setting_decides_what_the_grader_does(
    tmp_path, monkeypatch, capsys, setting
):
    """Lecturer review s32, M1: the honest students who took the worked solution, as the book
    allows, were listed in the same groups as the copier, and the lecturer decided by hand each
    week. The course records its decision (make_course.py --worked-solutions): "flag" lists them
    apart from copies between students, "allowed" flags nothing, "zero" gives the test 0 points."""
    make_course.write_course(tmp_path, ["16"], worked_solutions=setting)
    assert make_course.course_settings(tmp_path) == {"worked_solutions": setting}
    chapter = next((tmp_path / "source").iterdir()).name
    answers = {"ali": VERBATIM, "bea": "# my own\n" + VERBATIM}
    _submit_answers(tmp_path, chapter, "ex1_answer", grade_course.SOLUTION_MARKS[0], answers)
    results = [grade_course.Result(s, "ex1_test", 2.0, 2.0, "✓ right", 0.1) for s in answers]
    recorded = []
    monkeypatch.setattr(grade_course, "record", lambda course, ch, rs: recorded.extend(rs))
    zeroed = grade_course.zero_worked_solutions(tmp_path, chapter, sorted(answers), results)
    scores = [r.score for r in results]
    if setting == "zero":
        assert zeroed == recorded == results and scores == [0.0, 0.0]
        assert results[0].message == f"{grade_course.WORKED_ZERO}\n✓ right"
    else:
        assert not zeroed and not recorded and scores == [2.0, 2.0]
    for written in ("copy_flags", "book_numbers_flags"):  # the written answers' flags: apart
        monkeypatch.setattr(grade_course, written, lambda *a: [])
    grade_course._print_flags(tmp_path, chapter, sorted(answers), results)
    out = capsys.readouterr().out
    assert "the book's worked solution taken (2 code answers" in out
    assert "ex1_answer: 2 answers are the book's worked solution: ali, bea" in out
    assert "possible copied code" not in out  # no copy between students: the book's, apart
    assert f"--worked-solutions {setting}" in out or setting == "flag"
    flags = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    if setting == "flag":
        assert flags == {s: ["alike with the worked solution"] for s in answers}
    else:
        assert flags == {}


def test_a_course_setting_is_checked():
    with pytest.raises(ValueError, match="worked_solutions: expected one of allowed, flag, zero"):
        make_course.write_course(Path("/nonexistent"), ["16"], worked_solutions="yes")


def test_experiment_cells_no_checker_grades_are_not_compared(tmp_path):
    """Lecturer review s33, M4: honest students who ran chapter 10's experiment with the worked code
    (exercise 3, 0 points, no checker) were flagged "the book's worked solution" in every chapter;
    exercise 2's function, which a checker grades, is still compared."""
    make_course.write_course(tmp_path, ["10"], predictions_at_collection=True)
    chapter = next((tmp_path / "source").iterdir()).name
    source = nbformat.read(tmp_path / "source" / chapter / f"{chapter}.ipynb", as_version=4)
    # exercise 1, a prediction, is 0 points too
    assert grade_course.unchecked_answers(source) == {"ex1_answer", "ex3_answer"}
    worked = grade_course.code_answers(source)
    begin = grade_course.SOLUTION_MARKS[0]
    for student in ("alice", "bob"):
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        nb = nbformat.read(tmp_path / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:  # the worked code in exercises 2 and 3, templates elsewhere
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code" and grade_id in ("ex2_answer", "ex3_answer"):
                cell.source = (
                    worked[grade_id].replace(begin, "").replace(grade_course.SOLUTION_MARKS[1], "")
                )
            elif cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                cell.source = cell.source.split(begin, 1)[0]
        nbformat.write(nb, folder / f"{chapter}.ipynb")
    flags = grade_course.code_copy_flags(tmp_path, chapter, ["alice", "bob"])
    assert flags and all("ex3_answer" not in f and "ex1_answer" not in f for f in flags), flags
    assert any(f.startswith("alice ex2_answer:") for f in flags), flags


def test_a_regrade_of_one_student_keeps_a_reviewed_group_reviewed(tmp_path):
    """Lecturer review s33, M4: after alice, bob and dave's likeness was marked reviewed, grading gina
    alone (`--student gina`) warned again of "alice, bob, dave and gina: these 4 answers are alike"."""
    reports, chapter = tmp_path / "reports", "10_subword_tokenization"
    reports.mkdir()
    trio = ["alice", "bob", "dave"]
    flags = {s: [f"alike with {o}; order unknown" for o in trio if o != s] for s in trio}
    (reports / f"{chapter}-flags.json").write_text(json.dumps(flags))
    export_grades.mark_reviewed(reports, chapter)
    assert export_grades.flag_warnings(reports, [chapter]) == []
    for s in trio:  # gina graded alone: alike with each of them
        flags[s].append("alike with gina; order unknown")
    flags["gina"] = [f"alike with {o}; order unknown" for o in trio]
    (reports / f"{chapter}-flags.json").write_text(json.dumps(flags))
    (warning,) = export_grades.flag_warnings(reports, [chapter])
    assert warning.startswith(
        f"gina {chapter}: answers alike with alice, bob and dave's, whose likeness you marked reviewed"
    ), warning


# alice's answer to chapter 16's exercise 3 in review s34: the book's numbers rounded, no run
ROUNDED_16 = (
    "The MLM gradient is much larger: 1.83 vs 0.31 at lambda=1, 15.5 at 50; the clipped total is"
    " 37 at lambda=50 vs 3.2."
)


def test_an_answer_quoting_the_books_numbers_rounded_with_no_run_is_flagged(tmp_path):
    """Lecturer review s34, m3: alice quoted chapter 16's 1.832, 0.311, 15.53 and 3.22 as 1.83, 0.31,
    15.5 and 3.2 with no run, unflagged. Rounded quotes count (at two significant digits at least,
    never a bare integer); the same words under a code cell that printed its own numbers are not
    flagged, nor an answer whose numbers are its own (1.91, 0.29, 16.2)."""
    assert grade_course.quoted_forms("1.832") == ["1.832", "1.83", "1.8"]
    assert grade_course.quoted_forms("0.311") == ["0.311", "0.31"]  # not 0.3
    assert grade_course.quoted_forms("37.39") == ["37.39", "37.4"]  # not 37
    make_course.write_course(tmp_path, ["16"])
    chapter = next((tmp_path / "source").iterdir()).name
    students = {"alice": "", "bob": "", "dave": ""}
    _submit_answers(tmp_path, chapter, "none", grade_course.SOLUTION_MARKS[0], students)
    printed = nbformat.v4.new_output("stream", text="MLM 1.829, disc 0.312\n")
    own = "The MLM gradient is larger: 1.91 against 0.29, and 16.2 at lambda = 50 (total 39)."
    for student, answer, outputs in (
        ("alice", ROUNDED_16, []),
        ("bob", ROUNDED_16, [printed]),
        ("dave", own, []),
    ):
        _write_exercise_3(tmp_path, chapter, student, answer, outputs)
    flags = grade_course.book_numbers_flags(tmp_path, chapter, ["alice", "bob", "dave"])
    assert len(flags) == 1 and flags[0].startswith(
        f"alice ex3_written: {grade_course.BOOK_NUMBERS}"
    )
    assert "1.83 (the book's 1.832), 0.31 (the book's 0.311), 15.5 (the book's 15.53)" in flags[0]


def test_an_edited_locked_test_cell_is_listed_among_the_flags(tmp_path, monkeypatch, capsys):
    """Lecturer review s34, m2: frank rewrote chapter 16's locked ex1_test to print('passed'); the
    grader ran the original, rightly, but said nothing. It is listed now, per student and cell, in
    the output, the report and reports/<chapter>-flags.json; an untouched notebook is not."""
    make_course.write_course(tmp_path, ["16"])
    chapter = next((tmp_path / "source").iterdir()).name
    _submit_answers(
        tmp_path, chapter, "none", grade_course.SOLUTION_MARKS[0], {"alice": "", "frank": ""}
    )
    path = tmp_path / "submitted" / "frank" / chapter / f"{chapter}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex1_test":
            cell.source = "print('passed')"
    nbformat.write(nb, path)
    edited = grade_course.edited_locked_cells(tmp_path, chapter, ["alice", "frank"])
    assert edited == [f"frank ex1_test: {grade_course.LOCKED_EDITED}"]
    for name in ("FLAGGED", "REFUSED", "REPAIRED"):  # {student: ...} of this run
        monkeypatch.setattr(grade_course, name, {}, raising=False)
    for name in ("copy_flags", "book_numbers_flags", "code_copy_flags"):
        monkeypatch.setattr(grade_course, name, lambda *a: [])
    grade_course._print_flags(tmp_path, chapter, ["alice", "frank"], [])
    out = capsys.readouterr().out
    assert (
        "locked cells edited (1:" in out and f"frank ex1_test: {grade_course.LOCKED_EDITED}" in out
    )
    saved = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    assert saved == {"frank": [f"ex1_test {grade_course.LOCKED_EDITED}"]}
    report = next((tmp_path / "reports").glob(f"{chapter}-2*.txt")).read_text()
    assert f"frank ex1_test: {grade_course.LOCKED_EDITED}" in report


def test_quoted_forms_rounds_decimals_and_keeps_percents_and_integers_as_written():
    """The book's numbers are found by \\d+\\.\\d+ or \\d+%: an integer percent ("30%", chapter 9's and
    11's model answers) made Decimal raise, and grade_course.py stopped on the whole chapter (the
    fresh-clone run of s34: 7 errors in test_course_sandbox_models)."""
    assert grade_course.quoted_forms("1.832") == ["1.832", "1.83", "1.8"]
    assert grade_course.quoted_forms("0.311") == ["0.311", "0.31"]
    assert grade_course.quoted_forms("30%") == ["30%"]
    assert grade_course.quoted_forms("12") == ["12"]


def test_a_line_about_two_students_is_parsed_in_one_place():
    """A copy report's line about two students gives its student, exercise and other student by one
    regular expression (``_PAIR``, through ``_pair``), not a split of the line beside it; a line about
    one student and the book is no pair, and split_worked drops two students' likeness through it."""
    line = "bob ex1_answer: like frank's answer (similarity 0.91, 3 runs of 8 words), bob first"
    assert grade_course._pair(line) == ("bob", "ex1_answer", "frank")
    code = "eve ex2_test: the same code as gina's (up to names, comments and docstrings)"
    assert grade_course._pair(code) == ("eve", "ex2_test", "gina")
    book = "eve ex2_test: the same code as the worked solution (up to names)"
    assert grade_course._pair(book) is None
    worked, others = grade_course.split_worked(
        [book, "gina ex2_test: the same code as the worked solution (up to names)", code]
    )
    assert len(worked) == 2 and others == []
