"""Smaller points of lecturer review r4: a checker calls the cases it tries in the reader's own kernel
"practice cases" (they ship with the package), and a course's grader "hidden" on its own private
cases; every exercise's heading in the instructor notes has a title."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import instructor_notes as notes  # noqa: E402

import lib.exercises as lib_exercises  # noqa: E402
from lib.exercises import ch03  # noqa: E402


def _worked_masked_softmax(scores, allowed):
    scores = scores.masked_fill(~allowed, float("-inf"))
    top = scores.amax(dim=-1, keepdim=True).clamp(min=-1e30)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(scores - top) * allowed
    total = e.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, e / total.clamp(min=1e-38), torch.zeros_like(e))


def test_the_practice_checker_says_practice_cases(monkeypatch):
    verdict = str(ch03.check_masked_softmax(_worked_masked_softmax))
    assert verdict.startswith("✓") and "practice cases" in verdict and "hidden" not in verdict
    monkeypatch.setattr(lib_exercises, "CASES_WORD", "hidden")  # as the grader sets it
    verdict = str(ch03.check_masked_softmax(_worked_masked_softmax))
    assert "hidden cases" in verdict


def test_the_grader_calls_its_private_cases_hidden():
    import inspect

    import grade_course

    source = inspect.getsource(grade_course.Grader.grade_one)
    assert 'lib_exercises.CASES_WORD = "hidden" if private else "practice"' in source


def test_every_exercise_heading_has_a_title():
    for chapter in ("03", "05"):
        for ex in notes.exercises(chapter):
            title = notes.heading_title(ex)
            assert title and title.count("$") % 2 == 0, (chapter, ex.number, title)
    first = notes.exercises("03")[0]
    assert not first.title and notes.heading_title(first).startswith("In a Transformer, queries")


def test_a_partial_verdict_names_the_cases_as_a_pass_does():
    """One part right and another still to write: the right part's cases are 'practice' in the
    reader's kernel too (first reader s11, chapter 8: 'all 4 hidden cases' beside a pass's 'practice')."""
    from lib.exercises import ch08
    from lib.positional import sinusoidal_encoding

    def my_sinusoidal(max_len, d_model):
        return sinusoidal_encoding(max_len, d_model).clone()

    verdict = ch08.check_sinusoidal(my_sinusoidal, None)
    assert verdict.status == "not attempted", verdict
    assert "practice cases" in verdict.message and "hidden" not in verdict.message


def test_the_grader_takes_several_students_after_one_option():
    """Lecturer review s11, M3: `--student mallory alice` stopped with 'unrecognized arguments'."""
    import grade_course

    parser = grade_course._parser()
    assert parser.parse_args(["02", "--student", "mallory", "alice"]).student == [
        "mallory",
        "alice",
    ]
    assert parser.parse_args(["02", "--student", "a*", "--student", "b"]).student == ["a*", "b"]
    assert parser.parse_args(["02"]).student == []


def test_a_cell_with_nbgrader_metadata_but_no_grade_id_is_repaired(tmp_path):
    """Lecturer review s11, M6: a submitted cell with ``"nbgrader": {}`` made nbgrader refuse the
    notebook with a bare KeyError: 'grade_id'. The grader keeps it as the student's own cell (its
    nbgrader metadata removed), says so, and keeps the notebook as submitted beside it."""
    import grade_course
    import nbformat

    nb = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("x = 1")
    answer.metadata["nbgrader"] = {"grade_id": "ex1_answer", "solution": True}
    stray = nbformat.v4.new_code_cell("y = 2")
    stray.metadata["nbgrader"] = {}
    nb.cells = [answer, stray]
    path = tmp_path / "ch.ipynb"
    nbformat.write(nb, path)
    said = grade_course.repair_duplicates(path)
    assert said == [
        "cell 2 had nbgrader metadata without a grade_id (not a cell of the release; nbgrader "
        "would refuse the notebook with KeyError: 'grade_id'): kept as the student's own cells, "
        "without it"
    ]
    repaired = nbformat.read(path, as_version=4)
    assert "nbgrader" not in repaired.cells[1].metadata and repaired.cells[1].source == "y = 2"
    assert repaired.cells[0].metadata["nbgrader"]["grade_id"] == "ex1_answer"
    assert (tmp_path / "ch.ipynb.before-repair").exists()
    assert grade_course.repair_duplicates(path) == []  # nothing left to repair


def test_changed_nbgrader_metadata_is_set_back_from_the_courses_notebook(
    tmp_path, monkeypatch, capsys
):
    """Lecturer review s41, M2: ivan set ``grade`` to False on chapter 06's ex2_written (nbgrader:
    "ValidationError: Markdown solution cell is not marked as a grade cell: 16 and orange.") and
    added a graded cell of his own, ex9_bonus, 100 points (a bare "KeyError: 'grade_id'"): both
    notebooks were refused whole, 0 and no feedback. The grader sets the course's metadata back, keeps
    his own cell ungraded, keeps the notebook as submitted, says so per cell, and names the cell of a
    refusal."""
    import grade_course
    import make_course
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator, ValidationError

    make_course.write_course(tmp_path, ["06"])
    chapter = next((tmp_path / "source").iterdir()).name
    _submit_answers(tmp_path, chapter, "none", grade_course.SOLUTION_MARKS[0], {"ivan": ""})
    path = tmp_path / "submitted" / "ivan" / chapter / f"{chapter}.ipynb"
    nb = nbformat.read(path, as_version=4)
    index = {c.metadata.get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(nb.cells)}
    written = nb.cells[index["ex2_written"]]
    written.source = "16 and orange."
    written.metadata["nbgrader"]["grade"] = False
    nb.cells[index["ex2_test"]].metadata["nbgrader"]["points"] = 200
    bonus = nbformat.v4.new_code_cell("print('bonus')")
    bonus.metadata["nbgrader"] = {
        "grade": True, "solution": False, "locked": False, "points": 100,
        "grade_id": "ex9_bonus", "schema_version": 3,
    }  # fmt: skip
    nb.cells.append(bonus)
    nbformat.write(nb, path)
    with pytest.raises(ValidationError, match="not marked as a grade cell: 16 and orange"):
        MetadataValidator().validate_nb(nbformat.read(path, as_version=4))
    reason = (
        "jsonschema.exceptions.ValidationError: Markdown solution cell is not marked as a grade"
        " cell: 16 and orange."
    )
    (named,) = grade_course.refused_cells(path, reason)
    assert named.startswith(
        f"(that is cell {index['ex2_written'] + 1} of the submitted notebook, ex2_written"
    )
    known = grade_course.course_cells(tmp_path, chapter)
    said = grade_course.repair_metadata(path, known)
    assert said == [
        f"cell {index['ex2_test'] + 1} (ex2_test) had its nbgrader metadata changed (graded,"
        " locked, 200 points, where the course's notebook has graded, locked, 2 points): set back"
        " as in source/",
        f"cell {index['ex2_written'] + 1} (ex2_written) had its nbgrader metadata changed (a"
        " solution, 1 point, where the course's notebook has graded, a solution, 1 point): set"
        " back as in source/",
        f"cell {len(nb.cells)} (ex9_bonus, graded, 100 points) is not a cell of the course's"
        " notebook (nbgrader would refuse the notebook): kept as the student's own cell, ungraded,"
        " without its nbgrader metadata",
    ]
    repaired = nbformat.read(path, as_version=4)
    MetadataValidator().validate_nb(repaired)  # nbgrader takes it now
    assert repaired.cells[index["ex2_written"]].metadata["nbgrader"]["grade"] is True
    assert repaired.cells[index["ex2_written"]].source == "16 and orange."  # the answer kept
    assert "nbgrader" not in repaired.cells[-1].metadata
    before = nbformat.read(path.with_name(path.name + ".before-repair"), as_version=4)
    assert before.cells[-1].metadata["nbgrader"]["grade_id"] == "ex9_bonus"
    assert grade_course.repair_metadata(path, known) == []  # nothing left to repair
    # the report says which notebook was repaired, and how
    for name in ("FLAGGED", "REFUSED"):
        monkeypatch.setattr(grade_course, name, {})
    monkeypatch.setattr(
        grade_course, "REPAIRED", {"ivan": {f"x{i}": line for i, line in enumerate(said)}}
    )
    grade_course._flags(
        tmp_path, chapter, ["ivan"], [], grade_course._FlagLists([], [], [], [], [])
    )
    out = capsys.readouterr().out
    assert "notebooks repaired (1: cells copied twice or nbgrader metadata changed" in out
    assert f"ivan: {said[2]}" in out


def test_copied_code_is_flagged_up_to_names_comments_and_spacing(tmp_path):
    """Lecturer review s11, M11: two students' code answers the same but for names went unflagged,
    as did the worked solution copied. The grader's output lists them (a flag, not a grade); a
    different implementation, and the untouched template, are not listed."""
    import grade_course

    chapter, grade_id, begin, template, solution = _worked_answer(tmp_path, "02", "def sharpen")
    assert grade_course.code_shape(solution)[1] >= grade_course.CODE_NODES
    renamed = "# my own work\n" + solution.replace("gamma", "g").replace("    ", "  ")
    mine = (
        "def sharpen(w, gamma):\n"
        "    powered = [[x ** gamma for x in row] for row in w.tolist()]\n"
        "    sums = [sum(row) for row in powered]\n"
        "    return torch.tensor([[x / s for x in row] for row, s in zip(powered, sums)])\n"
    )
    # eve keeps the template's lines and pastes the worked solution under them, as an nbgrader
    # student answers (lecturer review s13, SERIOUS 4: unflagged)
    submitted = {
        "ann": renamed,
        "bo": renamed.replace("w", "weights"),
        "cy": mine,
        "di": template,
        "eve": template + "\n" + solution,
    }
    _submit_answers(tmp_path, chapter, grade_id, begin, submitted)
    flags = grade_course.code_copy_flags(tmp_path, chapter, sorted(submitted))
    who = [f.split(":")[0].split()[0] for f in flags]
    assert who == ["ann", "bo", "eve", "ann", "ann", "bo"], flags
    assert all("the same code as the worked solution" in f for f in flags[:3])
    assert flags[3].startswith(f"ann {grade_id}: the same code as bo's (up to names")
    assert flags[4].startswith(f"ann {grade_id}: the same code as eve's (up to names")
    assert not any(s in f for f in flags for s in ("cy", "di"))


def test_an_answer_cell_stopped_by_a_helper_of_the_students_own_needs_review():
    """Lecturer review s13, SERIOUS 5: in a prediction exercise, an answer cell that stops on a name
    from a cell the student added got a bare 0 ("the cell above stopped with NameError at line 2:
    ..."): it needs manual review, as a function's NameError does."""
    import grade_course

    added = {"my_counts": 41}
    for said in (
        "✗ parameter_counts: the cell above stopped with NameError at line 2: name "
        "'my_counts' is not defined",
        "✗ sharpen: on the case 'a', `sharpen` raised NameError: name 'my_counts' is not defined",
    ):
        result = grade_course.Result("dave", "ex3_test", 2.0, 0.0, said, 0.1)
        reviewed = grade_course.needs_review(result, added)
        assert reviewed.review and reviewed.message.startswith(
            "needs manual review: uses my_counts defined outside the answer cell (in cell 41"
        )
    other = grade_course.Result("eve", "ex3_test", 2.0, 0.0, said.replace("my_counts", "x"), 0.1)
    assert not grade_course.needs_review(other, added).review  # not a name of an added cell


def test_a_pasted_copy_with_only_the_header_does_not_replace_the_answer(tmp_path):
    """Lecturer review s17, S3: a second copy of an answer cell holding only the course's header line
    and a comment was kept (the last with content) and the correct answer dropped: 0 points and a
    NameError in the feedback. A copy with nothing but comments and the template's own statements is
    empty; the copy that defines the exercise's names is kept; the feedback says so."""
    import grade_course
    import nbformat

    header = "# Only this cell is graded: put every helper your answer needs here."
    template = f"{header}\ndef expand_kv(k, n_rep):\n    ...\n"
    answer = f"{header}\ndef expand_kv(k, n_rep):\n    return k.repeat_interleave(n_rep, dim=1)\n"
    nb = nbformat.v4.new_notebook()
    cells = [answer, f"{header}\n# scratch copy\n", template]
    for source in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["nbgrader"] = {"grade_id": "ex2_answer", "solution": True}
        nb.cells.append(cell)
    path = tmp_path / "ch.ipynb"
    nbformat.write(nb, path)
    said = grade_course.repair_duplicates(path, {"ex2_answer": template})
    assert said == [
        "ex2_answer was in 3 cells: kept copy 1 (the last that defines the exercise's names), "
        "dropped the others"
    ]
    kept = nbformat.read(path, as_version=4).cells
    assert [c.source for c in kept] == [answer]
    # without a template, the comment-only copy is still not content
    nbformat.write(nb, path)
    assert "kept copy 3 (the last with content)" in grade_course.repair_duplicates(path)[0]
    nb.cells = nb.cells[:2]
    nbformat.write(nb, path)
    assert "kept copy 1 (the last with content)" in grade_course.repair_duplicates(path)[0]
    # the student's feedback for that exercise says it
    result = grade_course.Result("heidi", "ex2_test", 2, 2, "expand_kv: passed", 0.1)
    told = grade_course._said_repaired(result, {"ex2_answer": said[0]})
    assert told.message.startswith("Your notebook had 3 copies of this answer cell (ex2_answer")
    assert "graded copy 1 only" in told.message and told.message.endswith("expand_kv: passed")
    other = grade_course.Result("heidi", "ex3_test", 2, 2, "ffn_sublayer: passed", 0.1)
    assert grade_course._said_repaired(other, {"ex2_answer": said[0]}) == other


def test_a_worked_function_without_its_demonstration_lines_is_flagged(tmp_path):
    """Lecturer review s17, S2: the worked solution's function pasted verbatim, with an import added
    and the demonstration/check lines after it dropped, changed the whole cell's shape and went
    unflagged (7/7). Each top-level function is compared too; an honest answer stays unflagged."""
    import ast

    import grade_course

    chapter, grade_id, begin, template, solution = _worked_answer(tmp_path, "17", "def rope_halves")
    function = next(
        ast.get_source_segment(solution, s)
        for s in ast.parse(solution).body
        if isinstance(s, ast.FunctionDef) and s.name == "rope_halves"
    )
    mine = (
        "def rope_halves(x, positions, theta=10000.0):\n"
        "    T, D = x.shape\n"
        "    out = x.clone()\n"
        "    for t in range(T):\n"
        "        for i in range(D // 2):\n"
        "            a = positions[t] * theta ** (-2 * i / D)\n"
        "            c, s = torch.cos(a), torch.sin(a)\n"
        "            out[t, i] = x[t, i] * c - x[t, i + D // 2] * s\n"
        "            out[t, i + D // 2] = x[t, i] * s + x[t, i + D // 2] * c\n"
        "    return out\n"
    )
    submitted = {
        "cy": template + "\n" + mine,
        "ivan": "import torch\n\n" + function.replace("positions", "pos") + "\n",
    }
    _submit_answers(tmp_path, chapter, grade_id, begin, submitted)
    assert grade_course.code_shape(submitted["ivan"]) != grade_course.code_shape(solution)
    flags = grade_course.code_copy_flags(tmp_path, chapter, sorted(submitted))
    assert flags == [
        f"ivan {grade_id}: the function rope_halves is the worked solution's rope_halves (up to names, "
        f"comments and spacing; {grade_course.code_shape(function)[1]} syntax nodes; the rest of "
        "the cell differs)"
    ], flags


def _submit_answers(tmp_path, chapter: str, grade_id: str, begin: str, submitted: dict) -> None:
    """Each student's notebook in submitted/: their text in the answer cell grade_id, the release's
    template (the source's cell cut at the solution's begin marker) in every other answer cell."""
    import nbformat

    for student, text in submitted.items():
        nb = nbformat.read(tmp_path / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade_id") == grade_id:
                cell.source = text
            elif meta.get("solution") and cell.cell_type == "code":
                cell.source = cell.source.split(begin, 1)[0]
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{chapter}.ipynb")


def _library_copy_flags(course, chapter, grade_id, begin, solution, heidi) -> list[str]:
    """The copy report's flags that name a library function, when alice hands in the worked solution
    and heidi the answer `heidi` in the cell `grade_id` of `chapter`."""
    import grade_course

    _submit_answers(course, chapter, grade_id, begin, {"alice": solution, "heidi": heidi})
    flags = grade_course.code_copy_flags(course, chapter, ["alice", "heidi"])
    return [f for f in flags if "library's" in f]


def _saved_flags(monkeypatch, course, chapter: str, students: list[str]) -> dict:
    """The flags grade_course._print_flags saves in reports/<chapter>-flags.json for `students`, with
    no other flag of the grader's run (none stopped, refused or repaired; no copies but the code's)."""
    import json

    import grade_course

    for name in ("FLAGGED", "REFUSED", "REPAIRED"):  # {student: ...} of this run
        monkeypatch.setattr(grade_course, name, {}, raising=False)
    monkeypatch.setattr(grade_course, "_flags", lambda *a: None)
    monkeypatch.setattr(grade_course, "copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "book_numbers_flags", lambda *a: [])
    grade_course._print_flags(course, chapter, students, [])
    return json.loads((course / "reports" / f"{chapter}-flags.json").read_text())


def _worked_answer(tmp_path, number: str, defines: str) -> tuple[str, str, str, str, str]:
    """A course of chapter `number` written to tmp_path, and its code answer that holds `defines`:
    (the chapter's folder name, the answer cell's grade_id, the solution's begin marker, the
    template above the solution, the worked solution)."""
    import grade_course
    import make_course
    import nbformat

    make_course.write_course(tmp_path, [number])
    chapter = next((tmp_path / "source").iterdir()).name
    source = nbformat.read(tmp_path / "source" / chapter / f"{chapter}.ipynb", as_version=4)
    answers = grade_course.code_answers(source)
    begin, end = grade_course.SOLUTION_MARKS
    grade_id = next(k for k, v in answers.items() if defines in v)
    template, solution = answers[grade_id].split(begin, 1)
    return chapter, grade_id, begin, template, solution.split(end, 1)[0]


def test_the_position_one_classifier_is_not_the_worked_solutions_and_the_source_is_named(
    tmp_path, monkeypatch
):
    """Lecturer review s22, S6, with the review's case: alice's own ``PosOneClassifier`` (one
    ``forward`` of two statements, the only natural way to read ``h[:, 1]``) was reported as "the
    worked solution's FirstWordClassifier", and the flags that tools/export_grades.py warns of named
    alice, who submitted first, exactly like dave, who copied her. Her class is no longer compared on
    its own with the worked solution's. The flags name the pair and who submitted first, no role
    (lecturer review s23, M1: "source of copies" and "possible copy" read as findings about each)."""
    import json

    import grade_course

    chapter, grade_id, begin, template, _ = _worked_answer(tmp_path, "13", "FirstWordClassifier")
    alice = (
        "first_word_prediction = 'c'\n\n\n"
        "class PosOneClassifier(GPTClassifier):\n"
        "    def forward(self, input_ids, attention_mask=None):\n"
        "        h = self.gpt(input_ids, return_hidden_states=True).hidden_states[-1]\n"
        "        return GPTClassifierOutput(self.head(h[:, 1]), None)\n\n\n"
        "torch.manual_seed(1)\n"
        "mine = PosOneClassifier(copy.deepcopy(gpt), n_classes=2)\n"
        "fit(mine, shuffled_batches(torch.Generator().manual_seed(0)),\n"
        "    lambda m, b: F.cross_entropy(m(b[0], b[1]).logits, b[2]), steps=150, lr=3e-3,\n"
        "    warmup_steps=10, seed=0)\n"
        "with torch.no_grad():\n"
        "    guessed = mine(test_x, test_mask).logits.argmax(-1)\n"
        "first_word_accuracy = (guessed == test_y).float().mean().item()\n"
        "first_word_classifier = mine\n"
    )
    dave = alice.replace("mine", "clf").replace("guessed", "preds")
    _submit_answers(tmp_path, chapter, grade_id, begin, {"alice": alice, "dave": dave})
    for student, when in (("alice", "2026-09-01 10:00:00"), ("dave", "2026-09-01 11:00:00")):
        (tmp_path / "submitted" / student / chapter / "timestamp.txt").write_text(when)
    flags = grade_course.code_copy_flags(tmp_path, chapter, ["alice", "dave"])
    assert not [f for f in flags if "worked solution" in f], flags
    assert [f for f in flags if f.startswith(f"alice {grade_id}: the same code as dave's")]
    assert flags[-1].endswith("alice first")
    known = _saved_flags(monkeypatch, tmp_path, chapter, ["alice", "dave"])
    assert known == {
        "alice": [f"alike with dave in {grade_id}; alice submitted first"],
        "dave": [f"alike with alice in {grade_id}; alice submitted first"],
    }
    (tmp_path / "submitted" / "dave" / chapter / "timestamp.txt").unlink()  # put in by hand
    grade_course._print_flags(tmp_path, chapter, ["alice", "dave"], [])
    known = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    assert known == {
        "alice": [f"alike with dave in {grade_id}; order unknown"],
        "dave": [f"alike with alice in {grade_id}; order unknown"],
    }
    text = json.dumps(known)
    assert "possible copy" not in text and "source of copies" not in text


def test_the_forbidden_library_function_retyped_is_flagged(tmp_path, monkeypatch):
    """Lecturer review s23, S2: heidi retyped the body of ``lib.attention._masked_softmax`` into
    chapter 3's ``my_masked_softmax`` ("without the library's masked_softmax"); the copy report
    compared answers only with the worked solution and classmates. It compares them with the
    functions the exercise's refusal table forbids and their private twins, up to names, comments,
    annotations and defaults; an answer of one's own is not flagged."""

    chapter, grade_id, begin, template, solution = _worked_answer(
        tmp_path, "03", "my_masked_softmax"
    )
    heidi = (
        "def my_masked_softmax(scores, mask):\n"
        "    x = scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores\n"
        "    if mask is not None:\n"
        "        x = x.masked_fill(~mask, float('-inf'))  # as the library does\n"
        "    w = torch.softmax(x, dim=-1)\n"
        "    if mask is not None:\n"
        "        w = w.masked_fill(~mask, 0.0)\n"
        "    return w.to(scores.dtype)\n"
    )
    said = _library_copy_flags(tmp_path, chapter, grade_id, begin, solution, heidi)
    assert len(said) == 1 and said[0].startswith(
        f"heidi {grade_id}: the same code as the library's _masked_softmax (up to names"
    ), said
    known = _saved_flags(monkeypatch, tmp_path, chapter, ["alice", "heidi"])
    assert known["heidi"] == ["alike with the library's _masked_softmax"]


def test_the_course_release_says_who_grades_an_explanation_in_one_sentence():
    """Chapter 10's "the explanation it asks for is yours to compare with the model answer" becomes a
    sentence in the release, not "... is your teacher grades it by a rubric" (lecturer review s22, M1)."""
    import json

    import make_course

    said = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "markdown":
                text = " ".join(make_course._course_text("".join(cell["source"]), True).split())
                said.append(text)
                assert "is your teacher grades" not in text, path.name
    assert any(
        "checks its measurement; your teacher grades the explanation it asks for by a rubric, and the"
        " model answer comes back with your feedback." in text
        for text in said
    )


def test_chapter_18s_private_slopes_retyped_is_flagged(tmp_path, monkeypatch):
    """Lecturer review s24, S3: heidi retyped ``lib.alibi._slopes`` (its comment kept, the recursive
    call renamed) as chapter 18's ``slopes_for``; the copy report guessed the private twin of
    ``alibi_slopes`` as ``_alibi_slopes``, which does not exist, and compared with nothing. It
    compares with the functions the refusal covers (module-wide: ``lib.alibi``'s, ``_slopes`` too)."""

    chapter, grade_id, begin, template, solution = _worked_answer(tmp_path, "18", "slopes_for")
    heidi = (
        "def slopes_for(n):\n"
        "    # a power of two: start at 2^(-8/n), each next slope times the same ratio\n"
        "    if n & (n - 1) == 0:\n"
        "        start = 2 ** (-8 / n)\n"
        "        return [start ** (h + 1) for h in range(n)]\n"
        "    below = 2 ** math.floor(math.log2(n))  # the largest power of two below n\n"
        "    return slopes_for(below) + slopes_for(2 * below)[0::2][: n - below]\n"
    )
    said = _library_copy_flags(tmp_path, chapter, grade_id, begin, solution, heidi)
    assert len(said) == 1 and said[0].startswith(
        f"heidi {grade_id}: the same code as the library's _slopes (up to names"
    ), said


def test_the_copy_report_lists_groups_not_pairs(tmp_path):
    """Course review s27, M3: the report listed alike answers pair by pair, C(n, 2) lines, and a
    student who pasted the worked solution also as alike with every other who did. One line per
    group: "N answers are the book's worked solution", then "these N answers are alike" in the order
    submitted; two students who both gave the worked solution are not a pair again."""
    import grade_course

    chapter, code = (
        "08_positional_encoding",
        "(up to names, comments and spacing; 464 syntax nodes)",
    )
    for student, when in (("cy", "2026-09-01 09:00:00"), ("bo", "2026-09-01 10:00:00")):
        folder = tmp_path / "submitted" / student / chapter
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(when)
    lines = [f"{s} ex1_answer: the same code as the worked solution {code}" for s in "abc"]
    lines += [
        f"a ex1_answer: the same code as b's {code}",
        f"a ex1_answer: the same code as c's {code}",
    ]
    lines += [
        f"{a} ex3_answer: the same code as {b}'s {code}"
        for a, b in (("ann", "bo"), ("ann", "cy"), ("bo", "cy"), ("dan", "eve"))
    ]
    lines.append("heidi ex1_answer: the same code as the library's _slopes (up to names")
    assert grade_course.copy_clusters(tmp_path, chapter, lines) == [
        "ex1_answer: 3 answers are the book's worked solution: a, b, c",
        "ex3_answer: these 3 answers are alike (submission time unknown for ann): cy, bo, ann",
        "ex3_answer: these 2 answers are alike (order unknown): dan, eve",
        "heidi ex1_answer: the same code as the library's _slopes (up to names",
    ]
    written = [
        "fay ex2_written: like the model answer (similarity 0.95, 4 runs of 8 words in common)",
        "gus ex2_written: like hal's answer (similarity 0.91, 3 runs of 8 words in common)",
        "hal ex2_written: like ivy's answer (similarity 0.85, 3 runs of 8 words in common)",
    ]
    assert grade_course.copy_clusters(tmp_path, chapter, written) == [
        "ex2_written: 1 answer is near-verbatim the model answer: fay",
        "ex2_written: these 3 answers are alike (similarity 0.85 to 0.91; order unknown): gus, hal, "
        "ivy",
    ]


def test_a_call_after_one_that_ran_out_of_time_says_it_did_not_finish(monkeypatch):
    """Lecturer review s38, m1: chapter 18's checker calls the student's function again after a
    call that ran out of time (it first tries every case for a constant answer); the grader had
    killed the child, and the next call reported "Your code crashed the Python process (signal 9)"
    for a loop that never ends. It says the call did not finish, as the other chapters do."""
    import grade_course

    class Zygote:
        def receive(self, timeout):
            return {"signal": 9}

    child = grade_course.Child.__new__(grade_course.Child)
    child.zygote, child.pid, child.requests = Zygote(), 0, -1
    child.ended, child.killed_because = None, None
    child.limits = {"cpu_seconds": 600, "memory_bytes": 4 << 30}
    monkeypatch.setattr(grade_course.os, "killpg", lambda *a: None)
    monkeypatch.setattr(grade_course.os, "kill", lambda *a: None)
    sent = []

    def send(fd, message, deadline):  # the first call runs until the checker's timer; then gone
        sent.append(message)
        if len(sent) == 1:
            raise lib_exercises._TimeLimit
        raise BrokenPipeError

    monkeypatch.setattr(grade_course, "_send", send)
    grader = type("Grader", (), {"time_limit": 10, "memory_gb": 4})()
    answer = grade_course.Answer(
        child, {"function": 0, "name": "running_max_and_sum"}, None, grader
    )
    monkeypatch.setattr(lib_exercises, "CALL_TIME_LIMIT", 10)
    try:
        lib_exercises.call(answer, torch.zeros(3), 2, name="running_max_and_sum", case="'a'")
    except Exception as e:  # noqa: BLE001 (the checker's failure)
        assert "did not finish in 10 s" in str(e)
    else:
        raise AssertionError("the first call did not fail")
    try:
        answer(torch.zeros(3), 2)
    except grade_course.SandboxStop as stop:
        message = str(stop)
    assert "did not finish in 10 s" in message and "running_max_and_sum" in message
    assert "crashed" not in message and not grade_course.STOPPED.search(message)
    # a SIGKILL the grader did not send: the system's, for memory or the CPU limit's last step
    child.ended, child.killed_because = {"signal": 9}, None
    assert "ran past its CPU time (600 s) or its memory (4 GB)" in child.why_ended()
    assert grade_course.STOPPED.search(child.why_ended())


def test_two_answers_near_the_model_answer_are_not_flagged_alike_each_other(monkeypatch, tmp_path):
    """Lecturer review s38, m4: s1good (honest, close to the model answer) and s6cheat (the model
    answer pasted) were "near-verbatim the model answer" in the grader's report, and nothing more;
    the flags made them a pair, and the export warned "answers alike (s1good submitted first)",
    pointing at the honest student. Each is flagged alike with the model answer; a pair whose
    likeness is not the book's is still a pair."""
    import json

    import export_grades
    import grade_course

    chapter = "13_gpt"
    lines = [
        "s1good ex2_written: like the model answer (similarity 0.86, 9 runs of 8 words in common)",
        "s6cheat ex2_written: like the model answer (similarity 1.00, 12 runs of 8 words in common)",
        "s1good ex2_written: like s6cheat's answer (similarity 0.86, 9 runs of 8 words in common)"
        ", s1good first",
        "bob ex3_written: like carol's answer (similarity 0.95, 6 runs of 8 words in common)"
        ", bob first",
    ]
    for name in ("FLAGGED", "REFUSED", "REPAIRED"):
        monkeypatch.setattr(grade_course, name, {}, raising=False)
    monkeypatch.setattr(grade_course, "_flags", lambda *a: None)
    monkeypatch.setattr(grade_course, "copy_flags", lambda *a: list(lines))
    monkeypatch.setattr(grade_course, "code_copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "book_numbers_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "edited_locked_cells", lambda *a: [])
    monkeypatch.setattr(grade_course, "worked_solutions_setting", lambda course: "flag")
    monkeypatch.setattr(grade_course, "flag_in_gradebook", lambda *a: [])
    students = ["bob", "carol", "s1good", "s6cheat"]
    grade_course._print_flags(tmp_path, chapter, students, [])
    saved = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    assert saved["s1good"] == saved["s6cheat"] == ["alike with the model answer"]
    assert saved["bob"] == ["alike with carol in ex3_written; bob submitted first"]
    warnings = export_grades.flag_warnings(tmp_path / "reports", [chapter])
    assert not any("s1good" in w and "answers alike" in w for w in warnings), warnings
    assert any("bob and carol" in w and "answers alike (bob submitted first" in w for w in warnings)
