"""Write an nbgrader course from the chapters (issue 14): `make course` -> course/ (never
committed).

    python tools/make_course.py                 # every chapter ->
    course/source/<chapter>/<chapter>.ipynb python tools/make_course.py --out DIR 02    # chapters
    whose file name starts with 02, into DIR

The course directory is nbgrader's (https://nbgrader.readthedocs.io): ``source/`` holds one
assignment per chapter, ``nbgrader_config.py`` the settings, and nbgrader itself creates the
gradebook (``gradebook.db``, SQLite) and the ``release/``, ``submitted/``, ``autograded/`` and
``feedback/`` folders as the teacher runs its commands (the "For teachers" page lists them).

Each chapter's assignment is the whole chapter, so that a student's answers run on the models the
chapter trains; every cell of the story is locked (read-only). Each exercise becomes:

- its **answer cell**, autograded: the template the chapter gives, then the worked solution between
  nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers (``generate_assignment`` removes
  it, so the student sees the template and a ``# YOUR CODE HERE`` line);
- its **test cell**, locked, worth the exercise's points: it calls the same ``lib.exercises``
  checker as the chapter, asserts that it passed and prints its verdict, so a wrong answer fails
  with the checker's own feedback (the reason the student reads in nbgrader's feedback) and an
  untouched one with "not attempted"; the checker's hidden cases are in ``lib.exercises``, never in the notebook, so no test
  gives the answer away. The test imports the checker afresh (``lib.exercises`` dropped from
  ``sys.modules`` first), so a student's cell that rebinds ``check_...`` or patches the checker module
  does not change what runs (issue 22; the teachers' page says why);
- its **written answer**, where the chapter has a model answer (its folded prose answer): a manually
  graded cell for the student's text (the model answer in the instructor's source, "YOUR ANSWER
  HERE" in the release), below a locked nbgrader *task cell* that asks the question, states the
  points and holds the **rubric** between nbgrader's ``=== BEGIN MARK SCHEME ===`` /
  ``=== END MARK SCHEME ===`` markers (:func:`rubric`): the model answer's sentences under the
  questions the statement asks (:func:`parts`), or the model answer whole under the list of parts
  where it does not split by them, and a partial-credit guide. ``generate_assignment`` strips the
  rubric from the release and keeps it in the gradebook; ``autograde`` restores it in the graded
  copy, which the Formgrader shows and ``generate_feedback`` renders (without the two marker lines:
  ``MarkSchemeWithoutMarkers`` in :data:`CONFIG`), so the student gets the model answer with the
  feedback. The sentence of a statement that tells the reader to compare with the
  model answer says so in the course (:data:`COMPARE`).

With ``--predictions-at-collection`` (a graded course, issue 36), the test cell of a "predict, then
check" exercise only checks that each prediction is written and says it is recorded: the student gets
no verdict to try values against. The real test is kept in the cell's metadata (``course.test``), and
tools/grade_course.py, which grades the course outside the students' kernels, runs it after
collection; its verdict comes back with the feedback. The statement of such an exercise no longer
tells the student to check the prediction with the library first (:func:`graded_statement`), the
notebook does not import its checker, and ``--prediction-points N`` sets what its test is worth
(default ``POINTS["prediction"]``; a student can still compute a prediction with the library, so a
course whose students work unsupervised may give it 0, the verdict still in the feedback).

The grader's cases and references (the repository's grading/, which the students' package does not
hold) are copied into ``grading/`` of the course, where tools/grade_course.py reads them
(:func:`write_grading`; ``--private-cases`` draws seeds of the course's own). With ``--variants``, an
exercise whose checker module declares per-student numbers (``VARIANTS``, chapter 9's exercise 3)
gets a locked cell under its statement that prints the student's numbers, and ``grading/variants.json``
tells the grader to draw them too.

Points: :data:`POINTS` (one place): every checked exercise is worth ``POINTS["checked"]``, every
written answer ``POINTS["written"]`` per question it asks (the rubric's task cell is worth 0: the
score goes in the student's text cell).

Besides ``source/`` and ``nbgrader_config.py`` (the teacher's), the course directory holds:

- ``exchange/`` (or ``--exchange DIR``), nbgrader's exchange, writable by everyone;
- ``student_nbgrader_config.py``, the students' side: the course id and where the exchange is, so
  that ``nbgrader fetch_assignment`` and ``submit`` work as the "For teachers" page writes them
  (without it nbgrader looks for ``/usr/local/share/nbgrader/exchange``);
- ``templates/feedback/base.html.j2``, nbconvert's classic template with the figures' alt text on
  their SVG images (:data:`FEEDBACK_SVG`);
- ``templates/feedback/mathjax.html.j2``, which nbgrader's feedback page uses in place of nbconvert's:
  the long lines of a checker's message wrap instead of scrolling sideways, and MathJax (the npm
  copy the site serves, ``node_modules/mathjax``) is inline, so the maths of the feedback renders
  offline. Without ``node_modules`` (``npm ci``) the page loads MathJax from nbgrader's CDN.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
# The published book, where a students' notebook's links to the book's pages point (a hub has no
# ../book/ folder beside the notebook): _config.yml's html.baseurl
SITE = "https://attention-book.github.io/attention-book/"
# A chapter without grading material (grading/chNN.py) is graded on its practice cases, which the
# students' package holds: its notebook does not call them cases the student does not see
# What the book's exercises say of the checker's cases (the reader's package holds them: first
# readers s11, "cases you do not see" beside a pass that names them), and what a course says: its
# grader's private cases, or where a chapter has none, the practice cases, which the grader uses too.
BOOK_CASES = re.compile(
    r"on\s+practice\s+cases\s+of\s+its\s+own,\s+which\s+it\s+names\s+when\s+you\s+pass,"
)
UNSEEN = "on cases you do not see"
PRACTICE = "on cases of its own (its practice cases, which the grader uses too)"
BOOK_LINK = re.compile(r"\]\(\.\./book/([\w-]+)\.md(#[^)\s]*)?\)")
# Points: a checked exercise is worth POINTS["checked"]; a written answer POINTS["written"] per part,
# a part being one question its statement asks (see `parts`).
# In a graded course (predictions checked at collection, make course GRADED=1) a prediction's test is
# worth POINTS["prediction"]: its answer is a constant the book prints (lecturer review s15, S5).
POINTS = {"checked": 2, "written": 1, "prediction": 0, "measured": 0}
# "prediction": a prediction's test in a graded course (--predictions-at-collection): 0 by default,
# its verdict in the feedback only, since a student can compute it with the library in a cell of
# their own (lecturer review s21, S5); --prediction-points 1 (PREDICTION_POINTS=1) for a supervised lab.
# "measured": the test of a measurement (a checker's MEASURED) in a graded course: checked live in
# the notebook for the student's own feedback, but worth nothing, since its value is the same for
# every student and a yes/no checker can be searched (lecturer review s21, S1); its written part is
# graded by its rubric as before.
CLAIMS = 3  # the most claims a rubric's part asks for its point
# a part with several claims: which one earns its point, and what a full answer may add (lecturer
# review s21, M2: "1 point" above three "required" bullets did not say whether all three were needed)
THE_POINT, MAY_ADD = "**The point:**", "*May add:*"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
# nbgrader's mark-scheme markers (ClearMarkScheme): generate_assignment removes every line from the
# first to the second from a task cell of the students' release; the gradebook keeps the whole cell,
# and autograde puts it back, so the Formgrader and the feedback page show it.
MARK_BEGIN, MARK_END = "=== BEGIN MARK SCHEME ===", "=== END MARK SCHEME ==="
# What the chapters tell the reader of a written answer, and what the course's release says instead
# (the release holds no model answer; the feedback page does, with the rubric).
COMPARE = re.compile(
    r"compare\s+yours\s+with(?:\s+the\s+worked\s+solution\s+and)?\s+the\s+model\s+answer"
    # "the explanation it asks for is yours to compare ...": the thing named becomes what is graded
    # (lecturer review s22, M1: "the explanation it asks for is your teacher grades it by a rubric")
    r"|(?P<what>\bthe\s[^.;:,]*?)\s+is\s+yours\s+to\s+compare\s+with\s+the\s+model\s+answer"
    r"|yours\s+to\s+compare\s+with\s+the\s+model\s+answer"
)


def COMPARED(match: re.Match) -> str:  # noqa: N802 (COMPARE's replacement, as re.sub takes it)
    what = " ".join(match["what"].split()) if match["what"] else "it"
    return f"your teacher grades {what} by a rubric, and the model answer comes back with your feedback"


# The exercises' introduction promises, below each check, a worked solution and a model answer; the
# course's release has neither (nbgrader removes them), and with --predictions-at-collection a
# prediction's check only records it: the release says what the student gets instead.
FOLDED = re.compile(
    r"Below\s+the\s+check,\s+folded\s+together\s.*?leaves\s+the\s+solutions\s+out\.", re.S
)
FOLDED_COURSE = (
    "This course's notebook holds no worked solution and no model answer: your teacher grades what you"
    " submit, and your feedback brings the checker's verdicts and the model answers."
)
RECORDED_COURSE = (
    " The check of a prediction (an exercise to predict, then check) only records that it is written:"
    " whether it is right comes with your feedback."
)
MEASURED_COURSE = (
    " A measurement (an exercise to measure, then check, or a value your own run measures) is checked"
    " here in the notebook, for your own feedback, and its check carries no points: the value it"
    " measures is the same for everyone; its written part is graded."
)
MEASURE = (
    "(measure, then check)"  # a measurement's kind in the course's title (lecturer review s21)
)
# A graded course's statement of a prediction (lecturer review s16, S4): no order to check the
# prediction with a library function before submitting ("Check both with `f`, and say ...", "Then check
# your numbers with `f` and `g`."), no note on what the checker checks, and what to do instead.
CHECK_WITH = re.compile(
    r"(?:Then\s+)?[Cc]heck\s+(?:both\s+|them\s+|your\s+\w+\s+)?with\s+`[^`]*`(?:\s+and\s+`[^`]*`)?"
    r"(?:\s*\([^()]*(?:\([^()]*\)[^()]*)*\))?(?:\.\s*|,\s*(?:and|then),?\s+(\w))"
)
CHECK_THEN = re.compile(
    r"(?<=[.?!:]\s)(?:Then\s+)?[Cc]heck\s+(?:them|both|your\s+predictions?)\s*[;,]\s*then\s+(\w)"
)
PREDICT_CHECK = re.compile(r"\b(Predict),\s+check,\s+and\s+")  # "Predict, check, and explain ..."
# the same order asked as a question (chapter 14's exercise 2: "Does `count_parameters` then agree with
# your count?", the question it asks the class, lecturer review s38)
CHECK_ASKED = re.compile(r"\s*Does\s+`[^`]*`\s+(?:then\s+)?agree\s+with\s+your\s+[\w ]+\?")
CHECKER_NOTE = re.compile(r"\s*\(the checker checks [^)]*\)")
PREDICTION_COURSE = (
    "**In this course.** What the cell below asks for is checked when your work is collected, not in"
    " this notebook, and your feedback says whether it was right. Write each prediction before you"
    " compute anything and submit it as it is; check it yourself afterwards, with the library as the"
    " chapter does, once you have submitted: a prediction changed after computing it is no longer a"
    " prediction."
)
AND_ASK = re.compile(r",\s+and\s+(?=(?:why|what|which|how|where|when|does|do|is|say)\s+\w+\s+\w)")
STOP = set(
    "this that with what which from your their them then than they there these those does when where"
    " each every more most much into only also both same other about after before first second"
    " over under many some such explain compare measure predict write answer model chapter".split()
)
EXERCISE = re.compile(r"^\*\*Exercise (\d+)")
# Only the answer cells are graded (tools/grade_course.py runs each after the chapter's own cells,
# with an earlier answer cell that defines a name it uses: course review s40, m1): said once at the top of the students' notebook and in the first line of each answer cell
# (lecturer review r3, problem 1: a helper in a cell of one's own passes here and fails when graded).
GRADED_CELLS_NOTE = (
    "**How this notebook is graded.** Only the answer cells are graded: each exercise's answer cell,"
    " whose first line says so. The grader runs each answer cell after the chapter's own cells (and"
    " after an earlier answer cell that defines a name it uses), and runs no cell you add. Put every helper function and variable an answer needs in its answer"
    " cell: an answer that uses a name defined only in a cell of your own passes its check in your"
    " notebook but fails when graded (your teacher is told, and grades it by hand)."
)
ANSWER_CELL_NOTE = "# Only this cell is graded: put every helper your answer needs here (a cell you add is not run)."

CONFIG = """# nbgrader configuration of the course written by tools/make_course.py (the chapters).
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
# The student sees the template and this line where the worked solution was; no exception is raised,
# so an untouched notebook still runs top to bottom (its checkers answer "not attempted").
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE"}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# A chapter's cells train small models: allow two minutes per cell, as the book's build does.
c.ExecutePreprocessor.timeout = 120
# A test cell a student deleted is put back from the gradebook and graded
# (nbgrader's default: lost).
c.OverwriteCells.add_missing_cells = True
# A student's cells (written answers, answer cells' saved outputs) are HTML that the Formgrader and the
# feedback pages show: sanitized (unsafe tags escaped), so that a <script> or an <img onerror> in them
# never runs in your browser. nbgrader's formgrade and feedback templates ignore nbconvert's
# sanitize_html, so a preprocessor cleans the students' cells first (the chapter's own are left as
# they are).
from nbconvert.preprocessors.sanitize import SanitizeHTML  # noqa: E402


class SanitizeStudentCells(SanitizeHTML):
    def preprocess_cell(self, cell, resources, index):
        if cell.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
            return super().preprocess_cell(cell, resources, index)
        return cell, resources


c.HTMLExporter.sanitize_html = True
c.HTMLExporter.preprocessors = [SanitizeStudentCells]
# Where release_assignment, collect and release_feedback find the students (student_nbgrader_config.py
# gives the students the same place).
c.Exchange.root = {exchange!r}
# nbgrader zip_collect: the file names of a learning-management system's download,
# <student>_<number>_<number>_<chapter>.ipynb (Canvas's; a late one has LATE_ after the student).
c.FileNameCollectorPlugin.named_regexp = {zip_names!r}
# The feedback page: nbgrader's template "feedback", with templates/feedback/mathjax.html.j2 in place of
# nbconvert's (wrapped lines, MathJax inline so that the maths renders offline).
import os  # noqa: E402

import nbgrader  # noqa: E402

c.HTMLExporter.extra_template_basedirs = [
    {templates!r},
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
]
# The feedback page shows each rubric and model answer (the graded copy holds them) without nbgrader's
# "=== BEGIN/END MARK SCHEME ===" lines: nbgrader's own feedback converter, its preprocessors
# (GetGrades, CSSHTMLHeaderPreprocessor) with this one between them.
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearMarkScheme, GetGrades, NbGraderPreprocessor  # noqa: E402
from traitlets import List  # noqa: E402


class FeedbackPreprocessor(NbGraderPreprocessor):  # nbgrader's kind: enabled by default
    # nbconvert's HTML exporter configures display_data_priority for every preprocessor it runs;
    # nbgrader's base class redeclares that trait without config=True, so each generate_feedback
    # warned "Config option `display_data_priority` not recognized" (as nbgrader's GetGrades does,
    # the trait is configurable here)
    display_data_priority = List(NbGraderPreprocessor.display_data_priority.default_value).tag(
        config=True
    )


class MarkSchemeWithoutMarkers(FeedbackPreprocessor):
    # a task cell's mark scheme as the student reads it in the feedback: its marker lines removed
    def preprocess_cell(self, cell, resources, index):
        markers = (ClearMarkScheme.begin_mark_scheme_delimeter.default_value,
                   ClearMarkScheme.end_mark_scheme_delimeter.default_value)
        if cell.get("metadata", {{}}).get("nbgrader", {{}}).get("task"):
            lines = cell.source.split("\\n")
            cell.source = "\\n".join(ln for ln in lines if not any(m in ln for m in markers))
        return cell, resources


class FigureAltText(FeedbackPreprocessor):
    # a figure's alt text (the chapter's cell metadata mystnb.image.alt, what the book's site shows)
    # where nbconvert's template reads it (the cell's "alt"): without it the feedback page's figures
    # had nbconvert's "No description has been provided for this image" and a warning
    def preprocess_cell(self, cell, resources, index):
        alt = ((cell.get("metadata", {{}}).get("mystnb") or {{}}).get("image") or {{}}).get("alt")
        if alt and cell.cell_type == "code":
            cell.metadata["alt"] = alt
        return cell, resources


class RubricAsText(FeedbackPreprocessor):
    # a rubric (a 0-point task cell, the mark scheme's place) reads as text in the feedback, not as a
    # "Task" scored 0 / 0 in the page's list of graded cells and under a "Student's task" label
    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {{}}).get("nbgrader", {{}})
        if meta.get("task") and not meta.get("points"):
            meta["task"] = False
        return cell, resources


class TeachersGrade(FeedbackPreprocessor):
    # an answer the grader sent for manual review (0 points) that the teacher then graded: the
    # feedback says so above the grader's note, which still says 0 (lecturer review s13), a
    # teacher's 0 too: the gradebook holds a manual grade (lecturer review s29, m3); without the
    # gradebook, a score above the grader's 0 is the teacher's
    def preprocess(self, nb, resources):
        self.manual = {{}}  # grade_id -> whether the gradebook holds a teacher's grade
        info = (resources or {{}}).get("nbgrader", {{}})
        if info.get("db_url"):
            from nbgrader.api import Gradebook, MissingEntry

            with Gradebook(info["db_url"]) as gb:
                for cell in nb.cells:
                    meta = cell.get("metadata", {{}}).get("nbgrader", {{}})
                    if not (meta.get("grade") and meta.get("grade_id")):
                        continue
                    try:
                        grade = gb.find_grade(
                            meta["grade_id"], info["notebook"], info["assignment"], info["student"]
                        )
                    except MissingEntry:
                        continue
                    self.manual[meta["grade_id"]] = grade.manual_score is not None
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {{}}).get("nbgrader", {{}})
        said = " ".join(
            str(o.get("evalue", "")) + str(o.get("text", "")) for o in cell.get("outputs", [])
        )
        teacher = getattr(self, "manual", {{}}).get(meta.get("grade_id"), bool(meta.get("score")))
        if meta.get("grade") and teacher and "needs manual review" in said:
            from nbformat.v4 import new_output

            cell.outputs.insert(0, new_output("stream", name="stdout", text=(
                f"graded by your teacher: {{meta['score']:g}} of {{meta['points']:g}} points "
                "(below, the grader's note from before the review)\\n"
            )))
        return cell, resources


c.GenerateFeedback.preprocessors = [
    GetGrades,
    MarkSchemeWithoutMarkers,
    FigureAltText,
    RubricAsText,
    TeachersGrade,
    CSSHTMLHeaderPreprocessor,
]
"""

STUDENT_CONFIG = """# nbgrader configuration for the students of the course written by tools/make_course.py.
# Each student saves it as ~/.jupyter/nbgrader_config.py, or the hub's administrator once for everyone
# as /etc/jupyter/nbgrader_config.py: then `nbgrader fetch_assignment <chapter>` and
# `nbgrader submit <chapter>` find the course's exchange (nbgrader's own default,
# /usr/local/share/nbgrader/exchange, does not exist on most machines).
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
"""

COURSE_ID = "attention-book"
# The file names zip_collect reads: Canvas's "Download submissions", e.g.
# jsmith_12345_67890_02_attention_as_soft_lookup.ipynb (a late one jsmith_LATE_12345_67890_..., a second
# upload ..._02_attention_as_soft_lookup-1.ipynb).
ZIP_NAMES = (
    r".*/(?P<student_id>[^/_]+)_(?:LATE_)?\d+_\d+_(?P<file_id>\d\d_[a-z0-9_]+?)(?:-\d+)?\.ipynb$"
)
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5" / "tex-svg-full.js"
FEEDBACK_HEAD = """{{#- Written by tools/make_course.py. nbgrader's feedback page (its template "feedback") calls
mathjax() in its <head>; this file takes the place of nbconvert's mathjax.html.j2 there (and only there:
no other template reads this folder). -#}}
{{%- macro mathjax(url=None) -%}}
<style>
/* A checker's feedback wraps at the page's width instead of scrolling sideways in its box. */
div.output_subarea {{ overflow-x: visible; }}
div.output_area pre, div.output_subarea pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
</style>
<script>
window.MathJax = {{
  tex: {{
    inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]],
    displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]],
    processEscapes: true,
    processEnvironments: true,
  }},
  svg: {{ fontCache: "global" }},
}};
</script>
<!-- MathJax {version} (npm, the copy the book's site serves), inline: the maths renders offline -->
<script>{{% raw %}}{script}{{% endraw %}}</script>
{{%- endmacro %}}
"""

# The Formgrader's page (nbgrader's template "formgrade") calls the same mathjax() macro, which loads
# MathJax 2 from a CDN: offline, the rubrics and answers showed raw TeX, and formgrade.js stopped on
# "MathJax is not defined" (lecturer review s29, M4; measured with headless Chromium on the review's
# course: 0 formulas typeset and that error; with this file, 189 and none). The same inline MathJax 3,
# with the one piece of MathJax 2 that formgrade.js calls (its startup signal) on top.
FORMGRADE_SHIM = """<script>
/* nbgrader's formgrade.js waits for MathJax 2's startup signal: MathJax 3's startup promise */
MathJax.Hub = {
  Startup: { signal: { Interest: function (f) {
    MathJax.startup.promise.then(function () { f("End"); });
  } } },
  Queue: function () { return MathJax.typesetPromise(); },
};
</script>
"""

# The feedback page's figures: nbconvert's classic template gives a PNG the alt text of its cell (the
# chapter's figure description, copied there by FigureAltText in CONFIG) but not an SVG, which the
# page prefers; this base.html.j2 takes the place of classic's and gives the SVG the same alt text.
FEEDBACK_SVG = """{#- Written by tools/make_course.py: nbconvert's classic base.html.j2, with the cell's alt text
(the chapter's figure description) on an SVG image as on a PNG. -#}
{%- extends 'nbconvert/templates/classic/base.html.j2' -%}
{% block data_svg scoped -%}
{%- set alttext=(output | get_metadata('alt', 'image/svg+xml')) or (cell | get_metadata('alt')) -%}
<div class="output_svg output_subarea {{ extra_class }}">
{%- if output.svg_filename %}
<img src="{{ output.svg_filename | posix_path | escape_html }}"
{%- if alttext is not none %} alt="{{ alttext | escape_html }}"{% endif %}>
{%- elif resources.should_not_encode_svg %}
    {{ output.data['image/svg+xml'].encode("utf-8") | clean_html }}
{%- else %}
<img src="data:image/svg+xml;base64,{{ output.data['image/svg+xml'] | text_base64 | escape_html }}"
{%- if alttext is not none %} alt="{{ alttext | escape_html }}"{% endif %}>
{%- endif %}
</div>
{%- endblock data_svg %}
"""


def _nbgrader(
    cell, grade_id: str, *, grade=False, solution=False, locked=False, points=None
) -> None:
    meta = {
        "grade": grade,
        "solution": solution,
        "locked": locked,
        "grade_id": grade_id,
        "schema_version": 3,
    }
    if points is not None:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _test_source(check_source: str, module: str) -> str:
    """The check cell as an autograder test that a student's cells cannot fool.

    The test imports the checker afresh from the library's files: it first drops ``lib.exercises``
    and its chapter modules from ``sys.modules``, so a name the student rebound (``check_x = ...``)
    or an attribute they patched (``lib.exercises.ch06.check_x = ...``, ``lib.exercises.fail = ...``)
    is not what runs. Then the verdict must have passed, and the cell prints it ("✓ sharpen: passed
    ..."), so that a passing test does not leave the cell silent."""
    tree = ast.parse(check_source)
    last = tree.body[-1]
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        raise ValueError(f"check cell does not end with a checker call: {check_source!r}")
    lines = check_source.rstrip().splitlines()
    head, expr = lines[: last.lineno - 1], "\n".join(lines[last.lineno - 1 :])
    name = ast.unparse(last.value.func)
    return "\n".join(
        [
            *head,
            "# Locked test: the checker is loaded afresh from the library's files, so what the cells",
            "# above rebound or patched (names, lib.exercises' attributes) does not reach it.",
            "import sys as _sys",
            "",
            'for _name in [n for n in list(_sys.modules) if n.startswith("lib.exercises")]:',
            "    del _sys.modules[_name]",
            f"from {module} import {name}  # noqa: E402",
            "",
            f"verdict = {expr}",
            "assert verdict.passed, str(verdict)",
            "print(verdict)  # the checker's verdict: a passing test says so",
        ]
    )


PREDICT = "(predict, then check)"  # in the title of an exercise whose answers are predictions
RECORDED = "predictions are recorded when you submit; your teacher's grader checks them"


def _recorded_source(check_source: str) -> str:
    """The test cell of a prediction in a course that checks predictions at collection
    (``--predictions-at-collection``): it says whether each prediction is written, never whether it is
    right, so that trying values until one passes is not possible in the notebook. The grader
    (tools/grade_course.py) runs the real check, kept in the cell's metadata ``course.test``."""
    call = ast.parse(check_source).body[-1].value
    names = [ast.unparse(a) for a in call.args]
    pairs = ", ".join(f"({n!r}, {n})" for n in names)
    return "\n".join(
        [
            "# Locked test: your predictions are recorded when you submit, and checked only when your",
            "# teacher grades the chapter (checked here, a prediction could be changed until it passed).",
            "# This cell checks that each one is written.",
            f"for _name, _value in [{pairs}]:",
            '    assert _value is not None, f"write your prediction {_name} in the cell above, then run it"',
            f'print("Your {RECORDED} after the deadline.")',
        ]
    )


def _is_check(cell) -> bool:
    return cell.cell_type == "code" and bool(re.search(r"\bcheck_\w+\(", cell.source))


def _model_answer(source: str) -> str:
    """The model answer's text, without its fold (``<details>`` in the chapter)."""
    body = re.sub(r"^<details[^>]*>\s*<summary>[^<]*</summary>\s*", "", source.strip())
    body = re.sub(r"^:::\{admonition\}[^\n]*\n(:class:[^\n]*\n)?", "", body)
    return re.sub(r"\s*(</details>|:::)$", "", body).rstrip()


# a Markdown list item's marker at the start of a line ("- ", "* ", "1. "; up to 3 spaces before it)
LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])\s+", re.M)


def _sentences(text: str) -> list[str]:
    """The sentences of a paragraph of prose (not inside $...$; "e.g." and "i.e." do not end one).
    A list's items are split apart first, their markers dropped (lecturer review s32, m7: chapter
    3's list ran together into "... changes nothing. - **dot** changes ..." in the rubric)."""
    items = [item for item in LIST_ITEM.split(text) if item.strip()]
    if len(items) > 1 or LIST_ITEM.match(text):
        return [s for item in items for s in _sentences(item)]
    text = re.sub(r"\s+", " ", text.strip())
    text = text.replace("e.g. ", "e.g.\0").replace("i.e. ", "i.e.\0")
    parts = re.split(r"(?<=[.?!])\s+(?=[A-Z*$(`])", text)
    return [p.replace("\0", " ").strip() for p in parts if p.strip()]


# "(d) **Explain.** ...", and a sub-heading in italics, "*The questions.* When does ...?" (lecturer
# review s41, m5: chapter 4's "*The questions.*" opened its rubric's first part and a slide)
STEP_LABEL = re.compile(r"^(?:\([a-z]\)\s*(?:\*\*[^*]+\*\*\s*)?|\*[A-Z][^*]{0,40}[.:]\*\s+)")


def parts(statement: str) -> list[str]:
    """The questions an exercise's statement asks: its sentences that end with a question mark or
    ask to explain, a sentence that joins two questions by ", and why/what/which/..." split in two (its title, in bold, and its parenthesised notes left out). At least one:
    a statement that asks none is one part, labelled by what it asks to write (:func:`_asked_for`)."""
    body = re.sub(r"^\*\*Exercise[^*]*\*\*", "", statement.strip())
    body = re.sub(r"\((?:This one|Predict)[^)]*\)", "", body)
    asked = []
    for paragraph in re.split(r"\n\s*\n", body):
        if paragraph.lstrip().startswith(("-", "```", "|")):
            continue  # a list of quantities, code or a table: instructions, not questions
        asked += [
            s
            # a step's label ("(d) **Explain.** Which one ...?") is not a parenthesised note
            for s in (STEP_LABEL.sub("", s) for s in _sentences(paragraph))
            # "explain", or "show why" (chapter 2's exercise 2: "They agree: show why with ...")
            if (s.endswith("?") or re.search(r"\bexplain\b|\bshow why\b", s, re.I))
            and not s.startswith("(")
        ]
    # "Which digit does it get right, and why ...?" asks two questions: one part each (not "..., and
    # how well?": the second clause needs three words)
    asked = [q for a in asked for q in re.split(AND_ASK, a)]
    # each part a sentence of its own: "what does that say ...?" cut from "..., and what does that
    # say ...?" starts with a capital (lecturer review s35, m2)
    asked = [q[0].upper() + q[1:] if q[:1].islower() else q for q in asked]
    # "Then measure it (...), write your classifier as `c`, and explain the result with ...": the
    # question is the clause that asks to explain, not the code cell's instructions before it
    # (lecturer review s22, M3)
    asked = [
        m.group(1)[0].upper() + m.group(1)[1:] if (m := ORDERS_THEN_EXPLAIN.match(q)) else q
        for q in asked
    ]
    # a clause cut from a question ends with "?", one cut from an order ("Explain with what
    # happens to ...", ", and say why ...") with "." (lecturer review s22, M3)
    asked = [q if q.endswith((".", "?")) else q + ("." if ORDER.match(q) else "?") for q in asked]
    # "In words: why ...?" (chapter 17): the cell that asks it already says "in words"
    asked = [re.sub(r"^In words:\s*(\w)", lambda m: m.group(1).upper(), q) for q in asked]
    # the question, not the instruction to check that comes before it ("Check both with
    # `lib.albert.count_parameters`, and say which ...", lecturer review s16, S3) nor a note on
    # what the checker checks
    asked = [CHECK_FIRST.sub(lambda m: m.group(1).upper(), q) for q in asked or [_asked_for(body)]]
    return [re.sub(r"\s*\(the checker [^)]*\)", "", q) for q in asked]


ORDERS_THEN_EXPLAIN = re.compile(
    r"^(?!Explain\b)(?=.*\bwrite\s+your\b).*?,\s+and\s+((?:explain|say)\b[^,]*[.?]?)$", re.S | re.I
)  # orders for the code cell ("write your ... as `name`"), then the question
ORDER = re.compile(r"^(?:Then\s+)?(?:explain|say|show|relate|compare|give|write|describe)\b", re.I)
# "Check them; then compute ...", "Check both with `f`, and say ...": the question is what follows
CHECK_FIRST = re.compile(r"^(?:Then\s+)?[Cc]heck\s+(?!that\b)[^,;]*?(?:,\s*and|[;,]\s*then)\s+(\w)")
# What a statement that asks no question wants written: "say which ...", "relate ...", "compare ..."
ASKS = re.compile(r"\b(?:explain|say|relate|compare|express|predict|estimate)\b", re.I)


def _asked_for(body: str) -> str:
    """The one part of a statement that asks no question: its last sentence that asks the reader to
    explain, say, relate, compare, express, predict or estimate something, else its last sentence
    (what the written answer reports), its hints and lists left out."""
    body = re.sub(r"<details.*?</details>", "", body, flags=re.S)
    said = [
        re.sub(
            r"^\([^)]*\)\s*", "", s
        )  # "(The probe's ... first.) Explain what ..." -> "Explain ..."
        for paragraph in re.split(r"\n\s*\n", body)
        if paragraph.strip() and not paragraph.lstrip().startswith(("-", "```", "|", "1.", "<"))
        for s in _sentences(paragraph)
    ]
    said = [s for s in said if s]
    if not said:
        raise ValueError(f"statement: no sentence to grade a written answer by: {body[:80]!r}")
    return next((s for s in reversed(said) if ASKS.search(s)), said[-1])


def _words(text: str) -> set[str]:
    text = re.sub(r"\$[^$]*\$|`[^`]*`", " ", text.lower())
    return {w for w in re.findall(r"[a-z][a-z-]{3,}", text) if w not in STOP}


def _claim(sentences: list[str], opening, where: str) -> list[int]:
    """The indices of the sentences that make one required claim: the sentence that starts with
    ``opening``, or (a tuple of openings) consecutive sentences, a claim and its reason."""
    found = []
    for start in (opening,) if isinstance(opening, str) else opening:
        hits = [j for j, s in enumerate(sentences) if s.startswith(start) and j not in found]
        if not hits:
            raise ValueError(
                f"{where}: the model answer has no sentence that starts with {start!r} "
                "(tools/rubric_claims.py names it as a required claim: update the table)"
            )
        found.append(hits[0])
    return found


def unrelated(question: str, claims: list[str]) -> list[str]:
    """The required claims of a rubric's part that share no word with its question (lecturer review
    s16, S3: a rubric required what its question does not ask): ``make course`` warns of them."""

    def stems(text: str) -> set[str]:  # "agree" and "agrees", "head" and "heads" alike
        return {w[:5] for w in _words(text)}

    key = stems(question)
    return [c for c in claims if not key & stems(c)]


def rubric(
    number: int, statement: str, model: str, required: list | None = None, where: str = ""
) -> tuple[str, int]:
    """The task cell of a written answer and its points (:func:`graded_parts`)."""
    text, points, _ = graded_parts(number, statement, model, required, where)
    return text, points


def graded_parts(
    number: int,
    statement: str,
    model: str,
    required: list | None = None,
    where: str = "",
    questions: list[str] | None = None,
) -> tuple[str, int, list[tuple[str, list[str], bool]]]:
    """The task cell of a written answer, its points and each part's (question, required claims,
    named in tools/rubric_claims.py): what the student reads (the question, the points), then,
    between nbgrader's mark-scheme markers, the criteria of each part.

    The criteria come from the chapter's model answer. One with a paragraph per question answers
    them in order: paragraph i goes under question i. Otherwise each of its sentences goes to the
    part whose question shares the most words with it (a sentence sharing none stays with the part
    before). If every part gets a sentence, the rubric lists them under their questions; if not,
    the model answer does not split by question, and the rubric gives it whole under the list of
    parts.

    A part's required claims (at most CLAIMS) are those that ``required`` names for it (one list of
    openings per part, tools/rubric_claims.py: a claim is the sentence that starts with an opening,
    or consecutive sentences for a tuple of openings), the rest of the model answer is context;
    without ``required``, the part's sentences that share the most words with its question.
    ``questions`` (tools/rubric_claims.py's ``PARTS``) replaces the questions found in the statement
    where they are not its sentences (lecturer review s17, M4); a required claim that is a
    ``rubric_claims.Written`` is stated in the rubric's own words, not taken from the model answer
    (the sentences it names as ``replaces`` are taken, not repeated)."""
    asked = list(questions) if questions else parts(statement)
    points = POINTS["written"] * len(asked)
    keys = [_words(q) for q in asked]
    groups: list[list[str]] = [[] for _ in asked]
    k = 0
    paragraphs = re.split(r"\n\s*\n", model.strip())
    if len(asked) > 1 and len(paragraphs) == len(asked):
        # one paragraph per question, in order: the model answer splits itself (lecturer review s9,
        # M5: by shared words, chapter 9's reason went under the part that does not ask for it)
        groups = [_sentences(p) for p in paragraphs]
    else:
        for sentence in (s for paragraph in paragraphs for s in _sentences(paragraph)):
            shared = [len(key & _words(sentence)) for key in keys]
            if max(shared) > 0:
                k = shared.index(max(shared))
            groups[k].append(sentence)
    each = POINTS["written"]
    # a one-part rubric's guide speaks of its one answer, and of several claims only if it lists
    # them (lecturer review s23, M3: "Each part ... Where a part lists several claims" above one part)
    guide = (
        f"{'Each part' if len(asked) > 1 else 'The answer'}: {each} point{'s' if each != 1 else ''}"
        " for the claim and its reason as the model answer gives them (the student's own run may"
        " print slightly different numbers; what counts is the claim and the reason), half of that"
        " for the right claim with its reason missing or wrong, 0 for a wrong claim or none."
    )
    several = (
        f" {'Where a part lists' if len(asked) > 1 else 'Of the'} several claims, the point is for"
        f" the one marked {THE_POINT}; those marked {MAY_ADD} are what a full answer may add, not"
        " needed for the point."
    )
    worth = f"{points} point{'s' if points != 1 else ''}"
    if len(asked) > 1:
        worth += f", {each} for each of its {len(asked)} questions"
    # the question itself, not only its points (lecturer review s15, S4: the cell asked nothing)
    if len(asked) == 1:
        question = [f"**Exercise {number}, in words.** {asked[0]}"]
    else:
        question = [f"**Exercise {number}, in words.** Answer these questions:", ""]
        question += [f"{i}. {q}" for i, q in enumerate(asked, 1)] + [""]
    lines = [
        *question[:-1],
        # after a numbered list, a blank line: the sentence is not glued onto its last item
        # (lecturer review s35, m2)
        *([""] if len(asked) > 1 else []),
        question[-1]
        + (" " if len(asked) == 1 else "")
        + f"Answer in the cell below, in a few sentences ({worth})."
        " Your teacher grades it by a rubric, and the model answer comes back with your feedback.",
        "",
        MARK_BEGIN,
        "",
        f"**Rubric: {points} point{'s' if points != 1 else ''}.** {guide}",
        "",
    ]
    if required is not None:
        # the claims named for each part (lecturer review s16, S3: by shared words, chapter 16's
        # reason went to "context" and chapter 17's rubrics required what their questions do not ask)
        if len(required) != len(asked):
            raise ValueError(
                f"{where}: {len(required)} parts of required claims, {len(asked)} asked"
            )
        sentences = [s for paragraph in paragraphs for s in _sentences(paragraph)]
        written = getattr(sys.modules.get("rubric_claims"), "Written", ())
        chosen = [
            [[] if isinstance(o, written) else _claim(sentences, o, where) for o in openings]
            for openings in required
        ]
        taken = {j for part in chosen for claim in part for j in claim}
        # the sentences a Written claim restates: taken, not listed again (lecturer review s29, M1)
        taken |= {
            j
            for openings in required
            for o in openings
            if isinstance(o, written)
            for j in _claim(sentences, getattr(o, "replaces", ()), where)
        }
        texts = [
            [
                str(o) if not claim else " ".join(sentences[j] for j in claim)
                for o, claim in zip(os_, part)
            ]
            for os_, part in zip(required, chosen)
        ]
        groups = [
            said_claims + [s for s in said if s not in [sentences[j] for j in taken]]
            for said_claims, said in zip(texts, groups if all(groups) else [[] for _ in asked])
        ]
        claims_of = [len(part) for part in chosen]
    else:
        claims_of = [None] * len(asked)
    # each part's question, its required claims, and whether tools/rubric_claims.py named them
    graded: list[tuple[str, list[str], bool]] = []
    if all(groups):
        for i, (question, said) in enumerate(zip(asked, groups), 1):
            # at most CLAIMS gradeable claims a part, those that share most words with its question
            # (lecturer review s15, S4: 9 bullets for 1 point); the rest is context, not required
            order = sorted(range(len(said)), key=lambda j: -len(keys[i - 1] & _words(said[j])))
            # the claim that earns the point first: the one sharing most words with the question,
            # or the first that tools/rubric_claims.py names (lecturer review s21, M2)
            kept = order[:1] + sorted(order[1:CLAIMS])
            if claims_of[i - 1] is not None:  # named in tools/rubric_claims.py
                kept = list(range(claims_of[i - 1]))
            lines += [f'**Part {i} ({each} pt).** "{question}" A full answer says:', ""]
            if len(kept) == 1:
                lines += [f"- {said[kept[0]]}", ""]
            else:
                lines += [f"- {THE_POINT} {said[kept[0]]}"]
                lines += [f"- {MAY_ADD} {said[j]}" for j in kept[1:]] + [""]
            graded.append((question, [said[j] for j in kept], claims_of[i - 1] is not None))
            # a question the model answer asks itself ("Where does the weight go instead?") is
            # neither a claim nor context (lecturer review s23, M3)
            rest = [
                said[j] for j in range(len(said)) if j not in kept and not said[j].endswith("?")
            ]
            if rest:
                lines += ["The model answer also says (context, not needed for the point):", ""]
                lines += [f"- {s}" for s in rest] + [""]
    else:
        lines += ["**Parts** (the model answer, below, answers them together):", ""]
        lines += [f'{i}. "{q}"' for i, q in enumerate(asked, 1)] + [""]
        lines += ["**Model answer.**", ""] + [f"> {line}".rstrip() for line in model.splitlines()]
        lines += [""]
    lines.append(MARK_END)
    if any(len(claims) > 1 for _, claims, _ in graded):
        lines[lines.index(f"**Rubric: {points} point{'s' if points != 1 else ''}.** {guide}")] += (
            several
        )
    return "\n".join(lines), points, graded


VARIANT_TEXT = (
    "**Your numbers.** In this course each student answers this exercise for numbers of their own, "
    "which the cell below prints: use them in place of the statement's (your teacher's grader "
    "uses yours). A neighbour's answer is an answer to other numbers."
)
# In the rubric and before the model answer of an exercise with per-student numbers: the model
# answer's numbers are the book's (lecturer review s9: a marker following the rubric docked right answers)
VARIANT_RUBRIC = (
    "**Per-student numbers.** In this course each student answers this exercise for numbers of their"
    " own (the locked cell under the statement prints them). The numbers below are the book's: grade"
    " the claim and the reason against the student's own numbers; the output of the exercise's test"
    " cell gives the checker's verdict on the student's counts."
)
# In the rubric of an experiment that no checker grades (tools/rubric_claims.py's OWN_RUN): the
# claims quote the book's run; the marker looks for the student's own (lecturer review s21, M3)
OWN_RUN_RUBRIC = (
    "**The student's own run.** The code cell of this exercise is an experiment that no checker"
    " grades (0 points), and the claims below quote the book's run: {what}. Look for the student's"
    " own numbers in the output of their code cell, above the written answer (as submitted: the"
    " grader does not run it). A claim that rests on a measured number earns its point only if the"
    " run that prints it is there (its numbers may differ a little from the book's); a written"
    " answer that quotes the book's numbers with no run above it gets at most half the point, a"
    " claim without its evidence."
)
VARIANT_MODEL = (
    "*This model answer uses the book's numbers; this course gave you numbers of your own, so your"
    " counts differ. What counts is the claim and the reason.*"
)
VARIANT_CELL = """import os

# this course gives each student their own numbers for this exercise (lib.exercises.variant)
os.environ["COURSE_VARIANTS"] = {course_id!r}
from lib.exercises import student_id  # noqa: E402
from lib.exercises.{module} import {function}  # noqa: E402

print(f"the numbers of student {{student_id()!r}}", end="")
if not (os.environ.get("COURSE_STUDENT") or os.environ.get("JUPYTERHUB_USER")):
    print(
        " (this computer's login name: if your id in the course is another, the one your "
        "submission goes in under, run os.environ['COURSE_STUDENT'] = 'your id' in a cell of "
        "your own above this one, then this one again; else your teacher's grader uses other "
        "numbers)",
        end="",
    )
print(":")
{function}()"""


def _variant_cells(chapter: str, number: int, course_id: str) -> list:
    """The cells that tell a student their own numbers for exercise ``number`` of ``chapter``, if its
    checker module declares a variant for it (``VARIANTS`` {exercise: function}); else none."""
    import importlib

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    module = importlib.import_module(f"lib.exercises.ch{chapter[:2]}")
    function = getattr(module, "VARIANTS", {}).get(number)
    if function is None:
        return []
    code = VARIANT_CELL.format(
        course_id=course_id, module=module.__name__.rpartition(".")[2], function=function
    )
    return [nbformat.v4.new_markdown_cell(VARIANT_TEXT), nbformat.v4.new_code_cell(code)]


# Long by design: one pass over the chapter's cells, a branch per kind of cell, in their order.
def course_notebook(
    nb: nbformat.NotebookNode,
    chapter: str,
    predictions_at_collection: bool = False,
    variants: bool = False,
    prediction_points: float | None = None,
) -> tuple[nbformat.NotebookNode, list[dict]]:
    """The instructor's version of a chapter (nbgrader metadata on every cell) and its exercises
    [{"number", "answer", "test", "points", "written"}].

    An exercise in a chapter is: its statement, the answer cell (a template), the check of the
    reader's answer (if the exercise is checked), then the cells tagged "solution": the worked
    solution, the check run on it and the model answer. In the course the answer cell holds the
    template and the worked solution between nbgrader's markers, the check becomes the locked test,
    the check of the worked solution goes (the test runs it in the instructor's copy), and the model
    answer becomes the rubric of a written answer."""
    nb = _with_captions(nbformat.from_dict(nb), chapter)
    module = f"lib.exercises.ch{chapter[:2]}"
    if prediction_points is None:
        prediction_points = POINTS["prediction"]
    measured = _measured(chapter)
    # measurements whose check also checks the student's code (a checker's MEASURED_WITH_CODE): the
    # check keeps its points, for the code (lecturer review s22, S4)
    with_code = _measured(chapter, "MEASURED_WITH_CODE")
    # a graded course's notebook does not import the prediction checkers (lecturer review s16, S4)
    # exercises whose answers are predictions over a small answer space, whatever their title says
    predicted = _measured(chapter, "PREDICTED")
    unimported = (
        _prediction_checkers(nb, measured, predicted) if predictions_at_collection else set()
    )
    cells, exercises, current = [], [], None
    used: set[str] = set()

    def unique(grade_id: str) -> str:  # an exercise may have several answer or check cells
        k, name = 1, grade_id
        while name in used:
            k += 1
            name = f"{grade_id}_{k}"
        used.add(name)
        return name

    template = None  # the current exercise's answer cell
    for i, cell in enumerate(nb.cells):
        src = cell.source
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown" and EXERCISE.match(src):
            current = {
                "number": int(EXERCISE.match(src).group(1)),
                "answer": None,
                "test": None,
                "points": 0,
                "written": None,
                "rubric": None,
                "variant": False,  # per-student numbers (--variants and a VARIANTS entry)
                "unrelated": [],  # the rubric's required claims that share no word with a question
            }
            exercises.append(current)
            template = None
            statement = src
            cell.source = COMPARE.sub(COMPARED, src)
            predicting = _predicts(src, current["number"], measured, predicted)
            measuring = current["number"] in measured
            # a measurement, not a prediction: so called (lecturer review s21, S1)
            if measuring and PREDICT in src.split("\n", 1)[0].lower():
                first, _, rest = cell.source.partition("\n")
                first = re.sub(re.escape(PREDICT), MEASURE, first, count=1, flags=re.I)
                cell.source = first + ("\n" + rest if rest else "")
            if predictions_at_collection and predicting:
                cell.source = graded_statement(cell.source)
                # the written part quotes the statement's questions: without the orders too
                statement = _without_check_orders(statement)
            _nbgrader(cell, unique(f"ex{current['number']}_text"), locked=True)
            cells.append(cell)
            if variants:
                extra = _variants(chapter, current["number"])
                current["variant"] = bool(extra)
                cells += extra
            continue
        if current is not None and cell.cell_type == "markdown" and src.startswith("#"):
            current = None  # the exercises section ended
        if current is None:
            if cell.cell_type == "markdown":
                cell.source = _course_text(
                    src, predictions_at_collection, bool(measured - with_code)
                )
            elif unimported:
                cell.source = _without_checkers(src, unimported)
            _nbgrader(cell, f"cell_{i}", locked=True)
            cells.append(cell)
            continue
        solution = "solution" in _tags(cell)
        if cell.cell_type == "code" and solution and _is_check(cell):
            continue  # the check of the worked solution: the test does it in this copy
        if cell.cell_type == "code" and solution:
            if template is None:
                raise ValueError(
                    f"{chapter}: exercise {current['number']}'s solution has no answer cell before it"
                )
            _add_solution(template, src, current)
            continue
        if cell.cell_type == "code" and _is_check(cell):
            recorded = predictions_at_collection and predicting
            grade_id = unique(f"ex{current['number']}_test")
            points = prediction_points if recorded else POINTS["checked"]
            if predictions_at_collection and measuring and current["number"] not in with_code:
                points = POINTS["measured"]
            cells.append(_test_cell(cell, module, grade_id, recorded, points))
            current["test"], current["points"] = grade_id, current["points"] + points
            continue
        if cell.cell_type == "markdown" and solution:
            cells += _written_cells(_model_answer(src), statement, current, unique, chapter)
            if current["variant"]:
                _for_variants(*cells[-2:])
            continue
        if cell.cell_type == "code" and template is None:
            template = cell  # the answer cell: the template, then (below) the worked solution
            if current["variant"]:
                cell.source = _variant_template(chapter, current["number"], src)
            _nbgrader(cell, unique(f"ex{current['number']}_answer"), solution=False)
            cells.append(cell)
            continue
        _nbgrader(cell, f"cell_{i}", locked=True)
        cells.append(cell)
    for exercise in exercises:
        if exercise["test"] and not exercise["answer"]:
            raise ValueError(
                f"{chapter}: exercise {exercise['number']} is checked but has no worked solution"
            )
    nb.cells = _finished(cells, chapter)
    nb.metadata.pop("widgets", None)
    return nb, exercises


def graded_statement(src: str) -> str:
    """A prediction's statement as a graded course gives it (``--predictions-at-collection``): its
    orders to check the prediction with the library before submitting taken out, and
    :data:`PREDICTION_COURSE` below it (lecturer review s16, S4: chapter 16's statement said "Check
    both with `lib.albert.count_parameters`", so every student submitted the computed number)."""
    return f"{_without_check_orders(src).rstrip()}\n\n{PREDICTION_COURSE}"


def _without_check_orders(src: str) -> str:
    """A prediction's statement without its orders to check the prediction with the library (the
    statement cell's, :func:`graded_statement`, and the written part's questions, which quote it:
    lecturer review s35, m1)."""
    text = CHECK_WITH.sub(lambda m: m.group(1).upper() if m.group(1) else "", src)
    text = CHECK_THEN.sub(lambda m: m.group(1).upper(), text)
    text = CHECKER_NOTE.sub("", CHECK_ASKED.sub("", text))
    return PREDICT_CHECK.sub(r"\1, then ", text)


def _without_checkers(source: str, names: set[str]) -> str:
    """A story cell's code without the import of ``names`` (a graded course's prediction checkers,
    lecturer review s16, S4): the notebook does not put them in the student's kernel, where each
    confirmed a value on its own. A student can still import one, or compute the value with the
    library: the teachers' page says so."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines()
    for node in reversed(tree.body):
        if not (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("lib.exercises")
            and any(a.name in names for a in node.names)
        ):
            continue
        kept = [a for a in node.names if a.name not in names]
        text = [ast.unparse(ast.ImportFrom(node.module, kept, node.level))] if kept else []
        text.insert(
            0, "# the prediction checkers are not imported: your predictions are checked when"
        )
        text.insert(1, "# your work is collected")
        lines[node.lineno - 1 : node.end_lineno] = text
    return "\n".join(lines)


def _measured(chapter: str, name: str = "MEASURED") -> set[int]:
    """The "predict, then check" exercises of ``chapter`` whose checked answers are measurements
    (its checker module's ``MEASURED``): a course checks them in the notebook like any answer, so a
    student whose own run is off learns it before submitting; only the prediction, a comment, is
    not graded (lecturer review s17, M7)."""
    import importlib

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        module = importlib.import_module(f"lib.exercises.ch{chapter[:2]}")
    except ModuleNotFoundError:
        return set()
    return set(getattr(module, name, ()))


def _predicts(
    statement: str, number: int, measured: set[int], predicted: set[int] = frozenset()
) -> bool:
    """Whether an exercise's answers are predictions, which a graded course records at collection:
    its title says "predict, then check", or its checker module's ``PREDICTED`` names it (answers
    from a small set, such as chapter 3's exercise 3, where a live check is an oracle: lecturer
    review s35, M1)."""
    if number in measured:
        return False
    return number in predicted or PREDICT in statement.split("\n", 1)[0].lower()


def _prediction_checkers(
    nb: nbformat.NotebookNode,
    measured: set[int] = frozenset(),
    predicted: set[int] = frozenset(),
) -> set[str]:
    """The checkers a chapter's "predict, then check" exercises call (their check cells), but those
    of exercises whose answers are measurements (:func:`_measured`)."""
    names, predicting = set(), False
    for cell in nb.cells:
        if cell.cell_type == "markdown" and EXERCISE.match(cell.source):
            number = int(EXERCISE.match(cell.source).group(1))
            predicting = _predicts(cell.source, number, measured, predicted)
        elif predicting and _is_check(cell) and "solution" not in _tags(cell):
            call = ast.parse(cell.source).body[-1].value
            names.add(ast.unparse(call.func))
    return names


def _course_text(src: str, predictions_at_collection: bool, measured: bool = False) -> str:
    """A markdown cell of the story as the course's release says it: no promise of a worked solution,
    a model answer or (``predictions_at_collection``) a prediction's verdict in the notebook, and
    (``measured``: the chapter has measurements) what a measurement's check is."""
    folded = FOLDED_COURSE + (RECORDED_COURSE if predictions_at_collection else "")
    if predictions_at_collection and measured:
        folded += MEASURED_COURSE
    return FOLDED.sub(folded, COMPARE.sub(COMPARED, src))


def _variant_template(chapter: str, number: int, src: str) -> str:
    """An answer cell's template where each student has numbers of their own: its words that name
    the book's numbers replaced as the checker module says (``VARIANT_TEMPLATE`` {exercise: [(the
    book's words, the course's)]}), so a student's template does not ask for the book's numbers."""
    import importlib

    module = importlib.import_module(f"lib.exercises.ch{chapter[:2]}")
    for book, course in getattr(module, "VARIANT_TEMPLATE", {}).get(number, []):
        if book not in src:
            raise ValueError(f"{chapter}: exercise {number}'s answer cell no longer says {book!r}")
        src = src.replace(book, course)
    return src


def variant_exercises() -> str:
    """The exercises with per-student numbers, from the checker modules' ``VARIANTS`` ("9/3, 12/2,
    ..."; lecturer review s21, M7: --help named chapter 9's alone)."""
    import importlib

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    found = []
    for path in sorted((ROOT / "lib" / "exercises").glob("ch[0-9][0-9].py")):
        module = importlib.import_module(f"lib.exercises.{path.stem}")
        found += [f"{int(path.stem[2:])}/{n}" for n in sorted(getattr(module, "VARIANTS", {}))]
    return "chapter/exercise " + ", ".join(found)


def _variants(chapter: str, number: int) -> list:
    """The locked cells of an exercise's variant for this course (``--variants``)."""
    cells = _variant_cells(chapter, number, COURSE_ID)
    for k, extra in enumerate(cells):
        _nbgrader(extra, f"ex{number}_variant_{k}", locked=True)
    return cells


def _written_cells(model: str, statement: str, exercise: dict, unique, chapter: str = "") -> list:
    """A written answer's two cells: the rubric (locked, the mark scheme's place) and the answer
    cell the student writes in, with the model answer as its solution."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    import rubric_claims

    named = rubric_claims.REQUIRED.get(chapter[:2], {}).get(exercise["number"])
    questions = rubric_claims.PARTS.get(chapter[:2], {}).get(exercise["number"])
    where = f"{chapter}, exercise {exercise['number']}"
    text, points, graded = graded_parts(
        exercise["number"], statement, model, named, where, questions
    )
    # a required claim, chosen by shared words, that shares no word with its question (lecturer
    # review s16, S3): make course prints them, for the teacher to read that rubric before grading
    # with it (a claim tools/rubric_claims.py names was chosen by reading the question)
    exercise["unrelated"] = [
        (q, c) for q, claims, named in graded if not named for c in unrelated(q, claims)
    ]
    own_run = rubric_claims.OWN_RUN.get(chapter[:2], {}).get(exercise["number"])
    if own_run:
        head, rest = text.split(MARK_BEGIN, 1)
        text = f"{head}{MARK_BEGIN}\n\n{OWN_RUN_RUBRIC.format(what=own_run)}\n{rest}"
    prompt = nbformat.v4.new_markdown_cell(text)
    _nbgrader(prompt, unique(f"ex{exercise['number']}_rubric"), locked=True, points=0)
    prompt.metadata["nbgrader"]["task"] = True  # the mark scheme's place (ClearMarkScheme)
    answer = nbformat.v4.new_markdown_cell(model)
    written = unique(f"ex{exercise['number']}_written")
    _nbgrader(answer, written, grade=True, solution=True, points=points)
    exercise["written"], exercise["rubric"] = written, prompt.metadata["nbgrader"]["grade_id"]
    exercise["points"] += points
    return [prompt, answer]


def _for_variants(prompt: nbformat.NotebookNode, answer: nbformat.NotebookNode) -> None:
    """A written answer's rubric and model answer where each student has numbers of their own: the
    rubric says to grade against those, the model answer that its numbers are the book's."""
    head, rest = prompt.source.split(MARK_BEGIN, 1)
    prompt.source = f"{head}{MARK_BEGIN}\n\n{VARIANT_RUBRIC}\n{rest}"
    answer.source = f"{VARIANT_MODEL}\n\n{answer.source}"


def _add_solution(template: nbformat.NotebookNode, src: str, exercise: dict) -> None:
    """A cell of the worked solution, put into its answer cell between nbgrader's markers (a
    second solution cell inside the same markers)."""
    if BEGIN in template.source:
        head, _ = template.source.rsplit(END, 1)
        template.source = f"{head.rstrip()}\n\n{src.rstrip()}\n{END}"
    else:
        stub = template.source.rstrip() + "\n" if template.source.strip() else ""
        template.source = f"{stub}{BEGIN}\n{src.rstrip()}\n{END}"
        exercise["answer"] = template.metadata["nbgrader"]["grade_id"]
    template.metadata["nbgrader"]["solution"] = True


def _test_cell(
    cell, module: str, grade_id: str, recorded: bool, points: float = POINTS["checked"]
) -> nbformat.NotebookNode:
    """The check of the reader's answer as nbgrader's locked test worth ``points`` (``recorded``: a
    prediction's, kept for the grader while the cell records the student's values)."""
    src = cell.source
    cell.source = _test_source(src, module)
    if recorded:
        cell.metadata["course"] = {"test": cell.source}  # what the grader runs
        cell.source = _recorded_source(src)
    cell.metadata["tags"] = [t for t in _tags(cell) if t != "remove-output"]
    _nbgrader(cell, grade_id, grade=True, locked=True, points=points)
    return cell


@functools.cache
def _citations() -> dict[str, tuple[str, str]]:
    sys.path.insert(0, str(ROOT / "tools"))
    from make_slides import citations

    return citations()


def course_markdown(text: str) -> str:
    """A markdown cell as a notebook outside the book shows it (tools/plain_notebooks.py): the
    citations as author-year text ("{cite:p}`graves2014neural`" -> "(Graves et al., 2014)",
    {cite:t} -> "Graves et al. (2014)"; the model answers' become rubric text), the admonitions as
    folds or blockquotes, and links to the book's pages ("../book/glossary.md#term-x") and to other
    chapters to the published site's."""
    return _plain().plain_markdown(text, base=SITE, cite_links=False)  # rubrics quote citations


@functools.cache
def _plain():
    sys.path.insert(0, str(ROOT / "tools"))
    import plain_notebooks

    return plain_notebooks


def _with_captions(nb: nbformat.NotebookNode, chapter: str) -> nbformat.NotebookNode:
    """``nb`` with a Markdown cell after each captioned figure, "**Figure N.k.** caption", numbered as
    the site numbers it (tools/plain_notebooks.py); a worked solution's figure (its code goes into
    the answer cell) keeps none. The other cells are converted later, by :func:`course_markdown`."""
    plain = _plain()
    out = nbformat.from_dict(nb)
    cells = []
    for cell, converted in zip(
        nb.cells, _caption_runs(plain.plain_notebook(nb, chapter, base=SITE))
    ):
        cells.append(cell)
        cells += [c for c in converted if "solution" not in c.metadata.get("tags", [])]
    out.cells = cells
    return out


def _caption_runs(plain_nb) -> list[list]:
    """The caption cells that follow each original cell of a notebook plain_notebook converted."""
    runs: list[list] = []
    for cell in plain_nb.cells:
        if _is_caption(cell):
            runs[-1].append(cell)
        else:
            runs.append([])
    return runs


def _is_caption(cell) -> bool:
    return _plain().CAPTION_TAG in cell.metadata.get("tags", [])


def _finished(cells: list, chapter: str) -> list:
    """The course's cells, with a template that has no solution below it locked (a cell of the
    story), book markup turned into text and links (:func:`course_markdown`) and an id of its own
    for every cell."""
    public = not (ROOT / "grading" / f"ch{chapter[:2]}.py").exists()
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = course_markdown(cell.source)
            cell.source = BOOK_CASES.sub(PRACTICE if public else UNSEEN, cell.source)
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if (
            meta.get("grade_id", "").startswith("ex")
            and "_answer" in meta["grade_id"]
            and not meta["solution"]
        ):
            meta["locked"] = True
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and "_answer" in meta["grade_id"]:
            cell.source = f"{ANSWER_CELL_NOTE}\n{cell.source}"
    if any(c.metadata.get("nbgrader", {}).get("solution") for c in cells):
        note = nbformat.v4.new_markdown_cell(GRADED_CELLS_NOTE)
        _nbgrader(note, "how_graded", locked=True)
        title = next(  # after the chapter's title
            (
                k
                for k, c in enumerate(cells)
                if c.cell_type == "markdown" and c.source.startswith("# ")
            ),
            -1,
        )
        cells.insert(title + 1, note)
    for k, cell in enumerate(cells):  # every cell needs its own id
        cell["id"] = f"{chapter[:2]}-{k:03d}"
    return cells


PRIVATE_MARK = "# Drawn for this course by tools/make_course.py --private-cases"


def private_seeds(path: Path) -> dict | None:
    """The seeds a course's grading/chNN.py drew with ``--private-cases`` (None if it has the book's)."""
    if not path.exists():
        return None
    text = path.read_text()
    if PRIVATE_MARK not in text:
        return None
    for line in text.split(PRIVATE_MARK, 1)[1].splitlines():
        if line.startswith("SEEDS = "):
            return ast.literal_eval(line.removeprefix("SEEDS = "))
    return None


def check_private_cases(folder: Path, private_cases: bool) -> None:
    """Refuse to write a course over one with private cases without ``--private-cases``: its
    grading/chNN.py would get the book's public seeds back, and the students would be graded on
    other cases than before (with ``--private-cases``, the existing seeds are kept)."""
    if private_cases or not folder.is_dir():
        return
    private = sorted(p.name for p in folder.glob("ch[0-9][0-9].py") if private_seeds(p) is not None)
    if private:
        raise SystemExit(
            f"{folder} holds this course's private grading cases ({', '.join(private)}): write the "
            "course again with --private-cases (make course GRADED=1), which keeps them, or delete "
            "those files to go back to the book's public cases"
        )


SEED_DRAWS = 20  # a seed whose cases let a known mistake pass is drawn again, at most this often


def draw_seed() -> int:
    """A course's seed for one checker's private cases: never 0, which is a book's practice cases."""
    import secrets

    return 1 + secrets.randbelow(2**31 - 1)


def checked_seeds(
    module: str, seeds: dict, kept: dict, draw: Callable[[], int] | None = None
) -> dict:
    """``seeds`` of ``lib.exercises.<module>`` with each newly drawn seed whose cases let one of the
    checker's known mistakes pass drawn again (lib.exercises.mistakes_passing; lecturer review s33, S1:
    chapter 10's "first occurrence only" got full marks on 63 of 100 seeds). A seed kept from an
    earlier run stays (the students may have been graded on it); a warning names its mistakes."""
    from lib.exercises import mistakes_passing

    draw = draw or draw_seed
    checker = importlib.import_module(f"lib.exercises.{module}")
    seeds = dict(seeds)
    for name in seeds:
        if name not in getattr(checker, "PRIVATE_CASE_MISTAKES", {}):
            continue
        for _ in range(SEED_DRAWS):
            passing = mistakes_passing(checker, {name: seeds[name]})[name]
            if not passing or name in kept:
                break
            seeds[name] = draw()
        else:
            raise SystemExit(
                f"{module}: {SEED_DRAWS} seeds drawn for {name}, and on each one's cases a known "
                f"mistake passes ({'; '.join(passing)}): the checker's cases need a fixed case that "
                "catches it (lib.exercises.mistakes_passing)"
            )
        if passing:
            print(
                f"warning: {module}: on the cases of the seed kept for {name}, these known mistakes "
                f"pass: {'; '.join(passing)}. Delete grading/{module}.py and write the course again to "
                "draw new seeds, before anyone is graded on them"
            )
    return seeds


def write_grading(folder: Path, chapters: list[str], private_cases: bool = False) -> list[Path]:
    """The grading material of the course's chapters (the repository's grading/chNN.py, which the
    students' package does not hold) into ``folder``, where tools/grade_course.py reads it. With
    ``private_cases``, each module ends with seeds drawn for this course, in place of the book's, so
    that no one outside the course can compute the grader's cases."""
    check_private_cases(folder, private_cases)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(
        "# The grader's cases and references\n\n"
        "tools/grade_course.py puts these into the checkers when it grades; the students' package "
        "holds practice cases only. Keep this folder private (the grader's sandbox cannot read it).\n"
    )
    written = []
    for chapter in chapters:
        source = ROOT / "grading" / f"ch{chapter[:2]}.py"
        if not source.exists():
            continue
        text = source.read_text()
        if private_cases:
            namespace: dict = {}
            exec(compile(text, str(source), "exec"), namespace)
            # a course's seeds, once drawn, are kept: a regrade uses the same cases
            kept = private_seeds(folder / source.name) or {}
            seeds = {
                name: kept[name] if name in kept else draw_seed()
                for name in namespace.get("SEEDS", {})
            }
            seeds = checked_seeds(source.stem, seeds, kept)
            text += f"\n{PRIVATE_MARK}, in place of the book's seeds above.\nSEEDS = {seeds!r}\n"
        target = folder / source.name
        target.write_text(text)
        written.append(target)
    return written


def _write_configs(out: Path, exchange: Path) -> None:
    """nbgrader's configuration for the instructor and for the students, and the feedback pages'
    MathJax (the site's own copy, so that feedback shows its maths offline)."""
    templates = out / "templates"
    config = out / "nbgrader_config.py"
    # the term plan's block (deadlines' zone, the late policy: tools/term_plan.py deadlines), kept
    # when the course is written again (lecturer review s13: a rerun dropped it without a word)
    import term_plan

    old = config.read_text() if config.is_file() else ""
    plan = ""
    if term_plan.MARK_BEGIN in old and term_plan.MARK_END in old:
        begin, end = old.index(term_plan.MARK_BEGIN), old.index(term_plan.MARK_END)
        plan = old[begin : end + len(term_plan.MARK_END)]
    config.write_text(
        CONFIG.format(
            course_id=COURSE_ID,
            root=str(out),
            db=str(out / "gradebook.db"),
            exchange=str(exchange),
            zip_names=ZIP_NAMES,
            templates=str(templates),
        )
        + (f"\n{plan}\n" if plan else "")
    )
    if plan:
        print(f"kept the term plan's deadlines and late policy in {config}")
    (out / "student_nbgrader_config.py").write_text(
        STUDENT_CONFIG.format(course_id=COURSE_ID, exchange=str(exchange))
    )
    (templates / "feedback").mkdir(parents=True, exist_ok=True)
    (templates / "feedback" / "base.html.j2").write_text(FEEDBACK_SVG)
    head = templates / "feedback" / "mathjax.html.j2"
    if MATHJAX.exists():
        version = json.loads((MATHJAX.parents[1] / "package.json").read_text())["version"]
        head.parent.mkdir(parents=True, exist_ok=True)
        head.write_text(FEEDBACK_HEAD.format(version=version, script=MATHJAX.read_text()))
        # the Formgrader's page too (lecturer review s29, M4): FORMGRADE_SHIM before the macro ends
        formgrade = templates / "formgrade" / "mathjax.html.j2"
        formgrade.parent.mkdir(parents=True, exist_ok=True)
        end = "{%- endmacro %}"
        text = head.read_text().rstrip()
        formgrade.write_text(text.removesuffix(end) + FORMGRADE_SHIM + end + "\n")
    else:
        head.unlink(missing_ok=True)
        (templates / "formgrade" / "mathjax.html.j2").unlink(missing_ok=True)
        print(
            f"note: {MATHJAX.relative_to(ROOT)} is missing (run `npm ci`): the feedback pages and "
            "the Formgrader will load MathJax from nbgrader's CDN, and their maths shows as TeX "
            "offline"
        )


# What tools/grade_course.py does with a code answer that is the book's worked solution (lecturer
# review s32, M1: the honest students who used it, as the book allows, were flagged with the copier
# each week): "flag" lists them for the teacher to decide (the default, as before), "allowed" keeps
# their points and flags nothing, "zero" gives that exercise's test 0 points. Copies between
# students are flagged whatever the setting. Recorded in grading/settings.json.
WORKED_SOLUTIONS = ("allowed", "flag", "zero")
SETTINGS = "settings.json"


def course_settings(course: Path) -> dict:
    """The course's settings that tools/grade_course.py reads (``grading/settings.json``, written by
    :func:`write_course`): ``worked_solutions`` ("flag" for a course written before the setting)."""
    path = Path(course) / "grading" / SETTINGS
    found = json.loads(path.read_text()) if path.is_file() else {}
    return {"worked_solutions": "flag", **found}


def write_course(
    out: Path,
    prefixes: list[str],
    exchange: Path | None = None,
    predictions_at_collection: bool = False,
    private_cases: bool = False,
    variants: bool = False,
    prediction_points: float | None = None,
    worked_solutions: str = "flag",
) -> list[tuple[str, list[dict]]]:
    """Write the course into ``out`` (the chapters whose file names start with one of ``prefixes``;
    all if empty), with nbgrader's exchange in ``exchange`` (default ``out/exchange``) and the
    grader's material in ``out/grading`` (:func:`write_grading`); ``worked_solutions`` (one of
    :data:`WORKED_SOLUTIONS`) goes into ``grading/settings.json``."""
    if worked_solutions not in WORKED_SOLUTIONS:
        raise ValueError(
            f"worked_solutions: expected one of {', '.join(WORKED_SOLUTIONS)}, got {worked_solutions!r}"
        )
    out = out.resolve()
    check_private_cases(out / "grading", private_cases)  # before anything is written
    written = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if prefixes and not any(path.name.startswith(p) for p in prefixes):
            continue
        chapter = path.stem
        nb, exercises = course_notebook(
            nbformat.read(path, as_version=4),
            chapter,
            predictions_at_collection,
            variants,
            prediction_points,
        )
        target = out / "source" / chapter / f"{chapter}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append((chapter, exercises))
    write_grading(out / "grading", [chapter for chapter, _ in written], private_cases)
    marker = out / "grading" / "variants.json"  # the grader draws each student's numbers too
    if variants:
        marker.write_text(json.dumps({"course": COURSE_ID}) + "\n")
    else:
        marker.unlink(missing_ok=True)
    settings = {**course_settings(out), "worked_solutions": worked_solutions}
    (out / "grading" / SETTINGS).write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")
    exchange = Path(exchange).resolve() if exchange else out / "exchange"
    exchange.mkdir(parents=True, exist_ok=True)
    # every student writes there (nbgrader's instructions for an exchange); sticky, as /tmp is: no
    # student can rename or delete what another (or the instructor) put there
    exchange.chmod(0o1777)
    _write_configs(out, exchange)
    if private_cases:  # a graded course (make course GRADED=1)
        lock_course(out, exchange)
    return written


# The instructor's folders of a course: solutions and rubrics (source, release), the private seeds,
# the submissions and their grades. Made in advance so that nbgrader finds them, already private.
PRIVATE_FOLDERS = ("source", "release", "grading", "submitted", "autograded", "feedback")
EXCHANGE_INSIDE = """
!!! WARNING: nbgrader's exchange {exchange} is inside the course folder {out}.
!!! Students must be able to pass through {out} to reach it, so the course folder stays 0711
!!! (no listing); its instructor folders are 0700 and its gradebook.db 0600 (tools/grade_course.py
!!! and tools/term_plan.py set it again), but a student who knows a file's name can still try it
!!! there. On a machine students log in to, write the course again with the exchange outside it,
!!! adding to this command:
!!!     --exchange /srv/nbgrader/exchange
!!! (or, where you install with make: make course GRADED=1 EXCHANGE=/srv/nbgrader/exchange)
"""


# A graded course's files at its top that hold grades, rubrics or the instructor's setup: 0600. nbgrader
# adds some of them later (gradebook.db, with SQLite's journal beside it), so every tool that writes
# the gradebook of a graded course (tools/grade_course.py, tools/term_plan.py) calls protect_files.
SENSITIVE_FILES = ("gradebook.db", "gradebook.db-journal", "gradebook.db-wal", "nbgrader_config.py")


def is_graded(course: Path) -> bool:
    """A course written with ``--private-cases`` (make course GRADED=1): its grading/ has its own seeds."""
    folder = Path(course) / "grading"
    return folder.is_dir() and any(
        private_seeds(p) is not None for p in folder.glob("ch[0-9][0-9].py")
    )


def protect_files(course: Path, graded: bool | None = None) -> list[Path]:
    """:data:`SENSITIVE_FILES` of a graded course 0600 (those that exist); nothing for an ungraded
    one (``graded`` None: :func:`is_graded`). Returns the files it set."""
    course = Path(course)
    if not (is_graded(course) if graded is None else graded):
        return []
    done = []
    for name in SENSITIVE_FILES:
        path = course / name
        if path.is_file() and not path.is_symlink():
            path.chmod(0o600)
            done.append(path)
    return done


def lock_course(out: Path, exchange: Path) -> list[str]:
    """A graded course's folders readable by its instructor alone: ``out`` 0700 (0711 if the exchange
    is inside it, with a loud warning on stderr), each of :data:`PRIVATE_FOLDERS` 0700 (made if
    missing), ``gradebook.db`` 0600 (an empty one made if missing, which nbgrader fills and keeps
    0600) and ``nbgrader_config.py`` 0600 (:func:`protect_files`). Returns the warnings printed."""
    inside = exchange == out or out in exchange.parents
    out.chmod(0o711 if inside else 0o700)
    for name in PRIVATE_FOLDERS:
        (out / name).mkdir(exist_ok=True)
        (out / name).chmod(0o700)
    gradebook = out / "gradebook.db"
    if not gradebook.exists():
        # nbgrader keeps an existing file's mode (SQLite reads an empty file as an empty database),
        # so the gradebook it fills on its first run is 0600 whatever the instructor's umask
        gradebook.touch(mode=0o600)
    protect_files(out, graded=True)
    warnings = [EXCHANGE_INSIDE.format(exchange=exchange, out=out)] if inside else []
    for warning in warnings:
        print(warning, file=sys.stderr)
    return warnings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="file-name prefixes (default: every chapter)")
    parser.add_argument("--out", type=Path, default=ROOT / "course")
    parser.add_argument(
        "--exchange",
        type=Path,
        default=None,
        help="nbgrader's exchange, a folder every student can write (default: OUT/exchange)",
    )
    parser.add_argument(
        "--predictions-at-collection",
        action="store_true",
        help="the test cell of a prediction checks only that it is written; tools/grade_course.py "
        "checks it after collection (a graded course: no verdict to try values against)",
    )
    parser.add_argument(
        "--prediction-points",
        type=float,
        default=None,
        metavar="N",
        help=f"with --predictions-at-collection, the points of a prediction's test (default "
        f"{POINTS['prediction']}; 0: its verdict in the feedback only). A student can compute a "
        "prediction with the library in a cell of their own: more than a little weight only where "
        "the work is supervised",
    )
    parser.add_argument(
        "--private-cases",
        action="store_true",
        help="draw the grader's cases from seeds of this course's own (in OUT/grading), not the book's",
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="per-student numbers where an exercise has them ("
        + variant_exercises()
        + "), drawn from the student's id in the notebook and in tools/grade_course.py",
    )
    parser.add_argument(
        "--worked-solutions",
        choices=WORKED_SOLUTIONS,
        default="flag",
        help="a code answer that is the book's worked solution: flag it for you to decide (the "
        "default), allow it (full marks, no flag) or give its test 0 points (tools/grade_course.py "
        "reads this from OUT/grading/settings.json); copies between students are flagged whatever",
    )
    args = parser.parse_args(argv)
    if args.prediction_points is not None and (
        args.prediction_points < 0 or not args.predictions_at_collection
    ):
        parser.error("--prediction-points takes a number >= 0, with --predictions-at-collection")
    for chapter, exercises in write_course(
        args.out,
        args.chapters,
        args.exchange,
        args.predictions_at_collection,
        args.private_cases,
        args.variants,
        args.prediction_points,
        args.worked_solutions,
    ):
        total = sum(e["points"] for e in exercises)
        print(f"{chapter}: {len(exercises)} exercises, {total:g} points")
        for e in exercises:
            for question, claim in e["unrelated"]:
                print(
                    f"  warning: {chapter}, exercise {e['number']}: the rubric requires a sentence"
                    f" that shares no word with its question {question!r}: {claim[:100]!r}..."
                    " (read that rubric before grading with it; tools/rubric_claims.py names the"
                    " claims that answer a question)"
                )
        if args.variants and not any(e["variant"] for e in exercises):
            # lecturer review s15, S5: VARIANTS=1 did nothing for the chosen chapters, silently
            print(f"  {chapter}: no exercise has variants; every student gets the book's numbers")
    if args.predictions_at_collection:
        worth = POINTS["prediction"] if args.prediction_points is None else args.prediction_points
        print(
            f"each prediction's test is worth {worth:g} point{'s' if worth != 1 else ''}"
            " (--prediction-points): a student can still compute a prediction with the library in a"
            " cell of their own, so it measures a prediction only where the work is supervised"
        )
    print(
        f"course written to {args.out}; next: cd {args.out} && nbgrader generate_assignment <chapter>"
    )
    print(f"the students' nbgrader_config.py: {args.out / 'student_nbgrader_config.py'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
