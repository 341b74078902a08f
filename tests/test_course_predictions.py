"""A graded course's "predict, then check" exercises (lecturer review s16, S4): the statement does not
tell the student to check a prediction with the library before submitting, the notebook does not
import the prediction's checker (whose answers confirmed each value on its own), the test cell
answers only "recorded", and the prediction's points are a choice (``--prediction-points``). The
practice course keeps the chapter's statement and its checkers."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CH16, CH17 = "16_beyond_bert", "17_modern_decoder"


def _course(chapter: str, graded: bool, **kwargs):
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    return make_course.course_notebook(nb, chapter, graded, **kwargs)


def _statement(course, number: int) -> str:
    return next(
        c.source
        for c in course.cells
        if c.cell_type == "markdown" and c.source.startswith(f"**Exercise {number} ")
    )


def _code(course) -> str:
    return "\n".join(c.source for c in course.cells if c.cell_type == "code")


def test_a_graded_statement_does_not_send_the_student_to_the_library_first():
    graded, _ = _course(CH16, True)
    text = " ".join(_statement(graded, 2).split())
    assert "count_parameters" not in text and "Check both" not in text
    assert "the checker checks" not in text
    assert "Which of ALBERT-xlarge and BERT-base is faster per token, and why?" in text  # it stays
    # chapter 14's exercise 2 asks the class "Does `count_parameters` then agree with your count?"
    # (lecturer review s38): an order to check with the library, taken out as the others
    graded, _ = _course("14_bert", True)
    text = " ".join(_statement(graded, 2).split())
    assert "count_parameters" not in text and "Estimate its number of parameters first" in text
    assert make_course.PREDICTION_COURSE in text
    graded, _ = _course(CH17, True)
    text = " ".join(_statement(graded, 4).split())
    assert "check your numbers with" not in text and "kv_cache_bytes_per_token" not in text
    assert "why does the rolling cache keep only" in text and make_course.PREDICTION_COURSE in text
    # an exercise that implements keeps its statement, with its "Then check"
    assert "Then check that the property `rope_score` showed holds" in " ".join(
        _statement(graded, 1).split()
    )


def test_the_practice_course_keeps_the_statement_and_the_checkers():
    practice, _ = _course(CH16, False)
    text = " ".join(_statement(practice, 2).split())
    assert "Check both with `lib.albert.count_parameters`" in text
    assert make_course.PREDICTION_COURSE not in text
    code = _code(practice)
    assert "from lib.exercises.ch16 import check_albert_prediction" in code
    assert "check_albert_prediction(albert_large_parameters" in code  # the test cell checks


def test_a_graded_notebook_does_not_import_the_prediction_checkers():
    for chapter, checker, kept in [
        (CH16, "check_albert_prediction", "check_discriminator_loss"),
        (CH17, "check_long_context", "check_rope_halves"),
    ]:
        graded, _ = _course(chapter, True)
        story = "\n".join(
            c.source
            for c in graded.cells
            if c.cell_type == "code" and "_test" not in c.metadata["nbgrader"]["grade_id"]
        )
        assert checker not in story, chapter  # no cell of the student's puts it in scope
        assert kept in story  # an implementation's checker is still imported
        tests = [c for c in graded.cells if c.metadata["nbgrader"]["grade_id"].endswith("_test")]
        recorded = [c for c in tests if "course" in c.metadata]
        assert len(recorded) == 1, chapter
        # the cell answers only "recorded"; the grader's real check is in its metadata
        assert checker not in recorded[0].source and "recorded" in recorded[0].source
        assert checker in recorded[0].metadata["course"]["test"]


def test_the_prediction_points_are_a_choice(tmp_path, capsys):
    # lecturer review s21, S5: 0 by default (a student can compute a prediction with the library);
    # 1 where the predictions are made in a supervised lab
    assert make_course.POINTS["prediction"] == 0
    _, exercises = _course(CH17, True)
    assert exercises[3]["points"] == 1  # the written answer alone; the verdict is in the feedback
    _, exercises = _course(CH17, True, prediction_points=1)
    assert exercises[3]["points"] == 2
    out = tmp_path / "c"
    make_course.main(
        [CH17[:2], "--out", str(out), "--predictions-at-collection", "--prediction-points", "0"]
    )
    printed = capsys.readouterr().out
    assert "17_modern_decoder: 4 exercises, 10 points" in printed
    assert "each prediction's test is worth 0 points (--prediction-points)" in printed
    assert "compute a prediction with the library" in printed
    with pytest.raises(SystemExit):
        make_course.main([CH17[:2], "--out", str(out), "--prediction-points", "2"])


def test_the_teachers_page_says_a_prediction_can_be_computed_and_how_to_weigh_it():
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "--prediction-points" in page
    assert "compute it with the library in a cell of their own" in page
    assert "PREDICTION_POINTS=1" in page


def test_a_zero_point_verdict_reaches_the_feedback_as_it_is():
    """Lecturer review s21, S5: with predictions worth 0, the grader's verdict still goes into the
    test cell's output in autograded/ (what the feedback shows), a wrong one as a failure."""
    import grade_course

    wrong = grade_course.Result("bo", "ex4_test", 0.0, 0.0, "✗ a long context: not yet right.", 0.1)
    out = grade_course._output(wrong)
    assert out.output_type == "error" and out.evalue == wrong.message
    assert "0 of 0 points" in "\n".join(out.traceback)
    right = grade_course.Result("bo", "ex4_test", 0.0, 0.0, "✓ a long context: passed.", 0.1)
    out = grade_course._output(right)
    assert out.output_type == "stream" and out.text.startswith(right.message)


def test_a_measurement_is_checked_in_the_notebook_not_recorded():
    """Chapter 12's exercise 4 asks for a measurement (unseen_accuracy) as well as a prediction in a
    comment: a graded course checks the measurement in the student's notebook, as any answer, worth
    an ordinary check's points, so a student whose run is off learns it before submitting (lecturer
    review s17, M7); chapter 12's exercise 2 stays a prediction, recorded."""
    graded, exercises = _course("12_elmo", True)
    tests = {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in graded.cells
        if c.metadata["nbgrader"]["grade_id"].endswith("_test")
    }
    assert "check_unseen_phrases(unseen_accuracy" in tests["ex4_test"].source
    assert "course" not in tests["ex4_test"].metadata and "recorded" not in tests["ex4_test"].source
    assert "course" in tests["ex2_test"].metadata  # a prediction: recorded
    assert make_course.PREDICTION_COURSE not in _statement(graded, 4)
    story = "\n".join(
        c.source
        for c in graded.cells
        if c.cell_type == "code" and "_test" not in c.metadata["nbgrader"]["grade_id"]
    )
    assert "check_unseen_phrases" in story  # imported: the student can run the check
    assert exercises[3]["test"] == "ex4_test"
    # lecturer review s21, S1: its value is the same for everyone and a yes/no checker can be
    # searched, so its check is worth 0 in a graded course (2 in the practice course); it is called a
    # measurement, and the exercises' introduction says so
    assert tests["ex4_test"].metadata["nbgrader"]["points"] == make_course.POINTS["measured"] == 0
    assert exercises[3]["points"] == 1  # its written part, graded by its rubric
    assert _statement(graded, 4).startswith("**Exercise 4 (measure, then check): ")
    assert _statement(graded, 2).startswith("**Exercise 2 (predict, then check): ")
    intro = next(c.source for c in graded.cells if make_course.MEASURED_COURSE in c.source)
    assert "only records that it is written" in intro
    practice, exercises = _course("12_elmo", False)
    assert _statement(practice, 4).startswith("**Exercise 4 (measure, then check): ")
    assert exercises[3]["points"] == make_course.POINTS["checked"] + 1
    assert not any(make_course.MEASURED_COURSE in c.source for c in practice.cells)
    assert not any(make_course.MEASURED_COURSE in c.source for c in _course(CH17, True)[0].cells)


def test_chapter_11s_backward_share_is_a_measurement():
    """Course review s27, M2: chapter 11's exercise 2 asks to compute plural_share and
    same_for_singular and give the checker the computed values; a graded course called them
    predictions ("write each prediction before you compute anything") and did not flag one computed
    in the answer cell. It is a measurement (the checker's MEASURED), as chapter 12's exercise 4:
    checked live for 0 points, titled so, and no paragraph tells the student not to compute."""
    graded, exercises = _course("11_language_models", True)
    test = next(c for c in graded.cells if c.metadata["nbgrader"]["grade_id"] == "ex2_test")
    assert "check_backward_agreement(plural_share" in test.source
    assert "course" not in test.metadata and "recorded" not in test.source
    assert test.metadata["nbgrader"]["points"] == make_course.POINTS["measured"] == 0
    statement = _statement(graded, 2)
    assert statement.startswith("**Exercise 2 (measure, then check): ")
    assert make_course.PREDICTION_COURSE not in statement
    assert "before you compute" not in statement and "compute both" in statement
    assert "the checker does not grade them" in statement  # the prediction: a comment


def test_the_help_lists_the_exercises_with_variants(capsys):
    """Lecturer review s21, M7: --help named chapter 9's exercise alone; it is computed from the
    checkers' VARIANTS."""
    with pytest.raises(SystemExit):
        make_course.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "chapter/exercise 9/3, 12/2, 13/2, 16/2, 17/4" in text
    assert make_course.variant_exercises() == "chapter/exercise 9/3, 12/2, 13/2, 16/2, 17/4"


def test_a_collected_prediction_says_the_verdict_below_is_its_check():
    """Lecturer review s21, M8: in autograded/ and the feedback, a prediction's test cell read "This
    cell checks that each one is written" above the real verdict; the grader puts a first line."""
    import grade_course

    graded, _ = _course(CH17, True)
    test = next(c for c in graded.cells if "test" in c.metadata.get("course", {}))
    once = grade_course.collected_source(test.source)
    assert once.split("\n", 1) == ["# checked at collection: the verdict below", test.source]
    assert grade_course.collected_source(once) == once
    import inspect

    assert "collected_source(cell.source)" in inspect.getsource(grade_course.record)


def test_a_collected_prediction_names_every_part_that_is_wrong(monkeypatch):
    """Lecturer review s21, M4: bob's ch12 ex2 (three values) came back naming only his first
    mistake (largest_part); at collection each part is checked on its own and every mistake is in
    the verdict, with the parts that were right; the points stay the full check's. In the notebook
    a checker still stops at its first mistake."""
    import inspect

    import grade_course

    from lib import exercises as lib_exercises
    from lib.exercises.ch12 import check_elmo_size

    # the book's numbers: no per-student variant, whatever the shell or an earlier test left set
    monkeypatch.delenv(lib_exercises.VARIANTS_ENV, raising=False)
    args = ["highway", "bias_ih", 793_471 * 512]  # bias_ih right, the softmax's biases left out
    # an ExerciseFailed (an AssertionError) by name: an earlier test may have reloaded lib.exercises,
    # leaving the checker raising the class of the module it was imported with
    failed = AssertionError
    with pytest.raises(failed) as first:
        check_elmo_size(*args)
    assert type(first.value).__name__ == "ExerciseFailed"
    assert first.value.message.startswith("largest_part:")
    assert "softmax_params" not in first.value.message  # the live check stops at the first
    added = grade_course.every_mistake(check_elmo_size, args, first.value.message)
    assert added.startswith(f"\n{grade_course.ALSO_WRONG}\n- softmax_params = 406,257,152")
    assert "not the biases" in added and "largest_part" not in added
    assert added.endswith("Right when checked alone: extra_tensor.")
    # one part, or nothing else wrong: nothing added
    assert grade_course.every_mistake(check_elmo_size, ["highway"], "x") == ""
    with pytest.raises(failed) as only:
        check_elmo_size("highway", "bias_ih", 793_471 * 513)
    assert grade_course.every_mistake(
        check_elmo_size, ["highway", "bias_ih", 793_471 * 513], only.value.message
    ) == ("\nRight when checked alone: extra_tensor, softmax_params.")
    # the grader marks a prediction checked at collection, and adds the parts there only
    graded, _ = _course("12_elmo", True)
    _, exercises = grade_course.plan_chapter(graded)
    collected = {e.test: e.collected for e in exercises}
    assert collected["ex2_test"] and not collected["ex1_test"] and not collected["ex4_test"]
    source = inspect.getsource(grade_course.Grader.grade_one)
    assert "if exercise.collected and not crash_text:" in source
    assert "every_mistake(check, args, e.message)" in source
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "at collection a prediction with several parts is also checked part by part" in page
    assert "only the first mistake a checker finds in an answer is counted" in page  # the notes


def test_predictions_a_check_stops_before_are_judged_against_the_book(monkeypatch):
    """Course review s40, m2: chapter 5's exercise 2 with an unusable blind_model (embeddings not
    frozen, or the chapter's model itself) said only "blind_model still has row and column
    embeddings", nothing of the two predictions. At collection each prediction the failure does not
    name is compared with the worked solution's value (the sandbox gives it full marks first)."""
    import inspect

    import grade_course

    graded, _ = _course("05_attention_beyond_translation", True)
    _, exercises = grade_course.plan_chapter(graded)
    (ex2,) = [e for e in exercises if e.test == "ex2_test"]
    assert ex2.collected and ex2.references == {"suffers_most": 3, "mostly_wrong_order": False}
    first = "blind_model still has row and column embeddings: set ..."
    said = grade_course.unjudged_predictions(ex2.references, ex2.args, [2, True, "m", "m"], first)
    assert said == (
        f"\n{grade_course.UNJUDGED} suffers_most: not right; mostly_wrong_order: not right."
    )
    said = grade_course.unjudged_predictions(ex2.references, ex2.args, [3, None, "m", "m"], first)
    assert said.endswith("suffers_most: right; mostly_wrong_order: not written.")
    said = grade_course.unjudged_predictions(ex2.references, ex2.args, [3, 1, "m", "m"], first)
    assert said.endswith("mostly_wrong_order: not judged (not a plain bool).")
    # a failure that judged a prediction already: nothing added
    wrong = "suffers_most: your prediction, the captions with 2 shapes, is not the group ..."
    assert grade_course.unjudged_predictions(ex2.references, ex2.args, [2, 1, 0, 0], wrong) == ""
    source = inspect.getsource(grade_course.Grader.grade_one)
    assert "unjudged_predictions(" in source


def test_chapter_4s_predictions_are_judged_beside_a_wrong_measurement():
    """Lecturer review s41, m1: carol predicted chapter 4's articles_left=True, ne_left=False (both
    wrong) with ne_share_left=0.94; the verdict said only "ne_share_left = 0.94 is close but rounded".
    The worked solution writes its predictions on one line, ``articles_left, ne_left = False, True``,
    which the grader did not read as the book's values: each is now judged at collection."""
    import grade_course

    assert grade_course.solution_literals("a, b = False, 3\nc = 'x'\nd, e = f()") == {
        "a": False,
        "b": 3,
        "c": "x",
    }
    graded, _ = _course("04_bahdanau_and_luong", True)
    _, exercises = grade_course.plan_chapter(graded)
    (ex1,) = [e for e in exercises if e.test == "ex1_test"]
    assert ex1.collected and ex1.references == {"articles_left": False, "ne_left": True}
    first = "ne_share_left = 0.94 is close but rounded: give the share unrounded ..."
    said = grade_course.unjudged_predictions(ex1.references, ex1.args, [True, False, 0.94], first)
    assert said == f"\n{grade_course.UNJUDGED} articles_left: not right; ne_left: not right."
    said = grade_course.unjudged_predictions(ex1.references, ex1.args, [False, True, 93.8], first)
    assert said.endswith("articles_left: right; ne_left: right.")


def test_chapter_10_and_13_measurements_carry_no_points_of_their_own():
    """Lecturer review s22, S2 and S4: chapter 10's exercise 3 (cased_per_unit, 1.369) and chapter
    13's exercise 3 (first_word_accuracy, 0.478) are measurements, the same for every student and
    public, as chapter 12's exercise 4. Chapter 10's check is the value alone: 0 points in a graded
    course, its written part graded. Chapter 13's one check also checks the classifier, which must
    score the value written: it keeps its points, for the code (MEASURED_WITH_CODE)."""
    graded, exercises = _course("10_subword_tokenization", True)
    test = next(c for c in graded.cells if c.metadata["nbgrader"]["grade_id"] == "ex3_test")
    assert test.metadata["nbgrader"]["points"] == make_course.POINTS["measured"] == 0
    assert exercises[2]["points"] == 3  # its three written parts
    assert _statement(graded, 3).startswith("**Exercise 3 (change and explain): ")
    assert any(make_course.MEASURED_COURSE in c.source for c in graded.cells)
    practice, exercises = _course("10_subword_tokenization", False)
    assert exercises[2]["points"] == make_course.POINTS["checked"] + 3
    graded, exercises = _course("13_gpt", True)
    test = next(c for c in graded.cells if c.metadata["nbgrader"]["grade_id"] == "ex3_test")
    assert test.metadata["nbgrader"]["points"] == make_course.POINTS["checked"]
    assert not any(make_course.MEASURED_COURSE in c.source for c in graded.cells)


HEIDI = """# your prediction: the number of parameters of GPT-3's largest model
gpt3_params = count_parameters(
    GPTConfig(vocab_size=50257, block_size=2048, n_layer=96, n_head=96, n_embd=12288)
)
embedding_share = 0.0037
"""


def test_a_prediction_computed_with_the_library_is_flagged_at_collection(monkeypatch, capsys):
    """Lecturer review s22, M6: heidi's ch13 ex2, ``gpt3_params = count_parameters(GPTConfig(...))``
    in the answer cell itself, came back "✓ Both predictions are right" with no remark. At
    collection the grader reads the submitted cell: a prediction that comes from a call of the
    book's library (any ``lib.*`` function, or a library model built there) is 0 and "needs manual
    review", named in the verdict and in the teacher's flags. The worked solution, which makes its
    estimate by hand and checks it with the library afterwards, is not."""
    import grade_course

    graded, _ = _course("13_gpt", True)
    story, exercises = grade_course.plan_chapter(graded)
    earlier = [c["source"] for c in story]  # each cell parsed alone (a cell magic in one)
    ex2 = next(e for e in exercises if e.test == "ex2_test")
    assert ex2.collected and ex2.args == ["gpt3_params", "embedding_share"]
    computed = grade_course.prediction_computed
    assert computed(HEIDI, ex2.args, earlier) == "lib.gpt.count_parameters"
    # under other names: an alias, the module, a name on the way, a model of the library counted
    alias = "from lib.gpt import count_parameters as n\ngpt3_params = n(GPTConfig())\n"
    assert computed(alias, ex2.args, earlier) == "lib.gpt.count_parameters"
    module = "import lib.gpt as g\nx = g.count_parameters(GPTConfig())\ngpt3_params = x + 1\n"
    assert computed(module, ex2.args, earlier) == "lib.gpt.count_parameters"
    counted = "m = GPT(GPTConfig())\ngpt3_params = sum(p.numel() for p in m.parameters())\n"
    assert computed(counted, ex2.args, earlier) == "lib.gpt.GPT"
    # not computed: by hand, a configuration read, a function of one's own, a check after the fact
    by_hand = (
        "c = GPTConfig()\ngpt3_params = 12 * c.n_layer * c.n_embd**2\nembedding_share = 0.004\n"
    )
    assert computed(by_hand, ex2.args, earlier) is None
    own = "def count_parameters(c):\n    return 12 * c.n_layer * c.n_embd**2\n"
    assert (
        computed(own + "gpt3_params = count_parameters(GPTConfig())\n", ex2.args, earlier) is None
    )
    answers = grade_course.answers_of(graded)
    assert computed(answers["ex2_answer"], ex2.args, earlier) is None  # the worked solution
    assert "count_parameters(gpt3)" in answers["ex2_answer"]
    # the verdict: 0, manual review, the call named
    right = "✓ GPT-3 size: passed. both predictions are right"
    result = grade_course.Result("heidi", "ex2_test", 1.0, 1.0, right, 0.1)
    result = grade_course.prediction_review(result, ex2, {"ex2_answer": HEIDI}, earlier)
    said = "computed with lib.gpt.count_parameters: a prediction is made before running"
    assert result.score == 0 and result.review and result.computed == "lib.gpt.count_parameters"
    assert result.message.startswith("needs manual review: " + said) and right in result.message
    honest = grade_course.Result("alice", "ex2_test", 1.0, 1.0, right, 0.1)
    kept = grade_course.prediction_review(honest, ex2, answers, earlier)
    assert kept.score == 1 and not kept.review and kept.computed is None
    # a test that is not a prediction checked at collection: never
    ex1 = next(e for e in exercises if e.test == "ex1_test")
    other = grade_course.Result("heidi", "ex1_test", 2.0, 2.0, "✓", 0.1)
    assert grade_course.prediction_review(other, ex1, {"ex1_answer": HEIDI}, earlier).score == 2
    # the teacher's flags say it
    for name in ("copy_flags", "code_copy_flags", "_untimed", "classmate_flags"):
        monkeypatch.setattr(grade_course, name, lambda *a, **k: [])
    monkeypatch.setattr(grade_course, "release_advice", lambda *a: None)
    grade_course._flags(Path("."), "13_gpt", ["heidi"], [result])
    printed = capsys.readouterr().out
    assert "predictions computed with the library (1:" in printed
    assert f"heidi ex2_test: {said}" in printed
    # the instructor notes count it among the answers held for review, and say so
    import instructor_notes

    row = instructor_notes._mistakes_table([], {"graded": 1, "passed": 0, None: 0})[-2]
    assert "computed a prediction with the library" in row
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "the grader flags a prediction computed in the answer cell itself" in page
    assert "no grader can tell that from a prediction" not in page


def _collected(chapter: str):
    """The chapter's collected prediction, the cells above its answer and its worked solution."""
    import grade_course

    graded, _ = _course(chapter, True)
    story, exercises = grade_course.plan_chapter(graded)
    exercise = next(e for e in exercises if e.collected)
    answers = grade_course.answers_of(graded)
    earlier = [c["source"] for c in story]
    own = next(c["answer"] for c in exercise.cells if "answer" in c and not c["optional"])
    return exercise, earlier, answers, answers[own]


def test_a_prediction_computed_with_the_chapters_own_code_is_flagged():
    """Lecturer review course46, M1: chapter 7's exercise 1 predicts the parameters of
    ``BracketModel(n_heads=1)``, a class the chapter defines, and the chapter's ``model`` is built
    from it: a prediction computed with them (or with a function the chapter defines) is flagged
    as one computed with the library; a function the answer cell defines itself is its own."""
    import grade_course

    exercise, earlier, answers, _ = _collected("07_multi_head_attention")
    assert exercise.test == "ex1_test"
    assert exercise.args == ["n_params", "learns_task", "accuracy"]
    # the accuracy is the run the statement asks for ("set `accuracy` to"), not a prediction
    assert grade_course.predicted(exercise) == ["n_params", "learns_task"]
    assert any("class BracketModel(nn.Module)" in cell for cell in earlier)
    computed = grade_course.prediction_computed
    built = "one = BracketModel(n_heads=1)\nn_params = sum(p.numel() for p in one.parameters())\n"
    assert computed(built, exercise.args, earlier) == "BracketModel"
    counted = "n_params = sum(p.numel() for p in model.parameters())\n"  # the chapter's model
    assert computed(counted, exercise.args, earlier) == "model.parameters"
    looped = "n_params = 0\nfor p in model.parameters():\n    n_params += p.numel()\n"
    assert computed(looped, exercise.args, earlier) == "model.parameters"
    # a function the chapter defines (def n_parameters(module) in a story cell)
    assert any("def n_parameters(module)" in cell for cell in earlier)
    helper = "n_params = n_parameters(BracketModel(n_heads=1))\nlearns_task = False\n"
    assert computed(helper, exercise.args, earlier) == "n_parameters"
    trained = "one = BracketModel(n_heads=1)\nlearns_task = accuracies(one)['all'] > 0.99\n"
    assert computed(trained, exercise.args, earlier) == "accuracies"  # the chapter's too
    # the answer cell's own function and class stay its own; by hand is by hand
    own = "def n_parameters(m):\n    return 4 * 32 * 32\nn_params = n_parameters(None)\n"
    assert computed(own, exercise.args, earlier) is None
    mine = (
        "class BracketModel:\n    def count(self):\n        return 13_209\n"
        "n_params = BracketModel().count()\n"
    )
    assert computed(mine, exercise.args, earlier) is None
    assert computed("n_params = 13_209\nlearns_task = False\n", exercise.args, earlier) is None
    # a function a student's earlier answer cell defines is the student's own too
    theirs = [*earlier, grade_course._Answer("def size(m):\n    return 13_209\n")]
    assert computed("n_params = size(model)\n", exercise.args, theirs) is None
    # the verdict names the call and where it comes from
    result = grade_course.Result("ivan", "ex1_test", 1.0, 1.0, "✓ one head: passed.", 0.1)
    result = grade_course.prediction_review(result, exercise, {"ex1_answer": built}, earlier)
    said = "computed with BracketModel: a prediction is made before running"
    assert result.score == 0 and result.review and result.computed == "BracketModel"
    assert result.message.startswith("needs manual review: " + said)
    assert "with `BracketModel` of the chapter's code" in result.message


# the worked solutions that compute a prediction with the library: their notebooks' to fix
WORKED_WITH_LIBRARY: dict[str, str] = {}  # none since chapter 12's statement asks to "set
# `softmax_params` to" the count it measures (a measurement, as chapter 4's)
COLLECTED = [
    pytest.param(
        p.stem,
        marks=[pytest.mark.xfail(strict=True, reason="computes with the library")]
        if p.stem in WORKED_WITH_LIBRARY
        else [],
    )
    for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    # none collected (chapter 11's exercise 2 is a measurement: course review s27, M2)
    if p.stem not in ("01_seq2seq_to_attention", "11_language_models", "18_attention_at_scale")
]


@pytest.mark.parametrize("chapter", COLLECTED)
def test_no_worked_solution_computes_its_prediction(chapter):
    """Lecturer review course46, M1: no worked solution of a collected prediction is flagged, by
    the library rule or the chapter's own code (chapter 4's ``ne_share_left`` is a measurement its
    statement asks for, not a prediction)."""
    import grade_course

    exercise, earlier, answers, worked = _collected(chapter)
    names = grade_course.predicted(exercise)
    assert grade_course.prediction_computed(worked, names, earlier) is None
    result = grade_course.Result("w", exercise.test, 1.0, 1.0, "✓", 0.1)
    assert not grade_course.prediction_review(result, exercise, answers, earlier).review


def test_a_worked_solution_is_never_flagged_for_the_chapters_own_code():
    """The chapter rule adds no flag to a worked solution: those the library rule flags (the
    xfails above) are flagged for the library call, and chapter 4's measurement is not a
    prediction."""
    import grade_course

    seen = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        graded, _ = _course(path.stem, True)
        _, exercises = grade_course.plan_chapter(graded)
        if not any(e.collected for e in exercises):
            continue
        exercise, earlier, answers, worked = _collected(path.stem)
        call = grade_course.prediction_computed(worked, grade_course.predicted(exercise), earlier)
        assert call == WORKED_WITH_LIBRARY.get(path.stem), path.stem
        seen.append(path.stem[:2])
    # 15: chapters 1 and 18 collect no prediction, nor chapter 11, whose exercise 2 is a
    # measurement (course review s27, M2)
    assert len(seen) == 15 and "11" not in seen
    exercise, *_ = _collected("04_bahdanau_and_luong")
    assert grade_course.predicted(exercise) == ["articles_left", "ne_left"]


def test_a_0_point_prediction_computed_is_a_flag_not_a_grade_to_give():
    """Course review s27, m13: eve's chapter 8 prediction, worth 0 points and computed with the
    library, read "It gets 0 until the teacher grades it (0 of 0 points without it)" and waited in
    the Formgrader's queue. A 0-point cell has no grade to give: flagged, with no wait."""
    import grade_course

    exercise, earlier, answers, _ = _collected("13_gpt")
    computed = {**answers, "ex2_answer": HEIDI}
    right = "✓ GPT-3 size: passed. both predictions are right"
    result = grade_course.Result("eve", "ex2_test", 0.0, 0.0, right, 0.1)
    result = grade_course.prediction_review(result, exercise, computed, earlier)
    assert result.review and result.score == 0
    assert "no grade to give: a flag to read" in result.message
    assert "until the teacher grades it" not in result.message
    one = grade_course.Result("eve", "ex2_test", 1.0, 1.0, right, 0.1)
    one = grade_course.prediction_review(one, exercise, computed, earlier)
    assert "It gets 0 until the teacher grades it (1 of 1 points without it)" in one.message


def test_chapter_3s_exercise_3_is_a_prediction_in_a_graded_course():
    """Its answers are two sets of six names: a live check worth points is an oracle (a blind search
    finds them in 68 calls), so a graded course records them and checks them at collection
    (lecturer review s35, M1)."""
    chapter = "03_scoring_functions"
    graded, exercises = _course(chapter, True)
    ex3 = next(e for e in exercises if e["number"] == 3)
    test = next(c for c in graded.cells if c.metadata["nbgrader"].get("grade_id") == ex3["test"])
    assert test.metadata["nbgrader"]["points"] == make_course.POINTS["prediction"]
    assert make_course.RECORDED in test.source and "check_unit_length(" not in test.source
    assert "check_unit_length" not in _code(graded).replace(test.source, "")
    text = " ".join(_statement(graded, 3).split())
    assert "Predict, check" not in text and make_course.PREDICTION_COURSE in text
    practice, exercises = _course(chapter, False)
    assert next(e for e in exercises if e["number"] == 3)["points"] == 3  # live there, 2 + 1
    assert "check_unit_length(identical, unchanged)" in _code(practice)


CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_cell_of_a_graded_prediction_sends_the_student_to_the_library(chapter):
    """The rewrite of a prediction's statement reaches every cell of the exercise the student sees:
    chapter 9's written part still said "Check your predictions with `count_parameters`" and gave the
    configuration that answers (a) (lecturer review s35, m1)."""
    graded, exercises = _course(chapter, True)
    recorded = {e["number"] for e in exercises if e["test"] and _recorded(graded, e["test"])}
    for cell in graded.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        number = grade_id[2:].split("_")[0] if grade_id.startswith("ex") else ""
        if not number.isdigit() or int(number) not in recorded or cell.cell_type != "markdown":
            continue
        student = cell.source.split("=== BEGIN MARK SCHEME ===")[0]
        assert not make_course.CHECK_WITH.search(student), (chapter, grade_id, student[:300])
        assert not make_course.CHECK_THEN.search(student), (chapter, grade_id, student[:300])
        assert "Predict, check" not in student, (chapter, grade_id)


def _recorded(course, grade_id: str) -> bool:
    cell = next(c for c in course.cells if c.metadata["nbgrader"].get("grade_id") == grade_id)
    return make_course.RECORDED in cell.source
