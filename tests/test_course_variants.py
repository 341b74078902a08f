"""Per-student variants (issue 36): where an answer is a value a neighbour could copy, a course written
with ``tools/make_course.py --variants`` gives each student numbers of their own, drawn from the
student's id (``lib.exercises.variant``), the same in the student's notebook and in the grader
(tools/grade_course.py sets the id from the submission); the checker names the usual mistakes on each
variant. Chapter 9's exercise 3 (parameter counts: the vocabulary of (a), the N of (c)) is the first.

The whole cycle through the sandbox (a student answering for their own numbers gets full marks, one
who copies a neighbour's 0) is in tests/test_course_sandbox_models.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lib.exercises import ExerciseFailed, ch09, ch12, ch13, ch16, ch17, student_id, variant
from lib.transformer import TransformerConfig, count_parameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

COURSE = make_course.COURSE_ID
STUDENTS = ["alice", "bob", "chen", "dana", "emre", "fatou", "gao", "hana", "ivan", "jo"]


@contextlib.contextmanager
def as_student(student: str | None, course: str | None = COURSE):
    """The environment of a student's notebook in a course with variants (or a reader's: None)."""
    keys = ("COURSE_VARIANTS", "COURSE_STUDENT", "JUPYTERHUB_USER")
    saved = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ.pop(k, None)
    if student is not None:
        os.environ.update(COURSE_VARIANTS=course, COURSE_STUDENT=student)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _right(numbers: dict[str, int]) -> tuple[int, int, int]:
    base = count_parameters(TransformerConfig.base())
    return (
        numbers["vocab"] * 512,
        base - count_parameters(TransformerConfig.base(d_ff=1024)),
        count_parameters(TransformerConfig.base(n_layers=numbers["n_layers"])),
    )


def test_a_reader_of_the_book_gets_the_books_numbers():
    with as_student(None):
        assert student_id() is None
        assert ch09.parameter_variant() == {"vocab": 37000, "n_layers": 12}
    with as_student(None):  # on a hub, without a course's variants: still the book's
        os.environ["JUPYTERHUB_USER"] = "alice"
        assert ch09.parameter_variant() == ch09.VARIANT_BOOK


def test_a_students_numbers_are_theirs_everywhere():
    """The same student draws the same numbers every time, in another process too (the grader's),
    and on a hub without COURSE_STUDENT from the user name; the class does not share one set."""
    with as_student("alice"):
        alice = ch09.parameter_variant()
        assert alice == ch09.parameter_variant()
    env = {**os.environ, "COURSE_VARIANTS": COURSE, "JUPYTERHUB_USER": "alice"}
    env.pop("COURSE_STUDENT", None)
    run = subprocess.run(
        [sys.executable, "-c", "from lib.exercises import ch09; print(ch09.parameter_variant())"],
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout.strip() == repr(alice), run.stderr
    drawn = []
    for student in STUDENTS:
        with as_student(student):
            drawn.append(tuple(ch09.parameter_variant().values()))
    assert len(set(drawn)) >= 7  # ten students, 90 possible pairs
    for vocab, n_layers in drawn:
        assert vocab in ch09.VARIANT_CHOICES["vocab"]
        assert n_layers in ch09.VARIANT_CHOICES["n_layers"]
    with as_student("alice", course="another-course"):  # another course draws otherwise
        others = [variant("x", {"k": list(range(1000))}, {}) for _ in range(2)]
    with as_student("alice"):
        assert variant("x", {"k": list(range(1000))}, {}) != others[0] == others[1]


@pytest.mark.parametrize("student", STUDENTS[:5])
def test_each_variant_is_checked_and_its_mistakes_named(student):
    with as_student(student):
        numbers = ch09.parameter_variant()
        gain, loss, total = _right(numbers)
        n, more = numbers["n_layers"], numbers["n_layers"] - 6
        base = count_parameters(TransformerConfig.base())
        encoder_layer = 2 * 512 * 2048 + 4 * 512**2
        assert ch09.check_parameter_counts(gain, loss, total).passed
        mistakes = [
            ((2 * gain, None, None), "stays tied"),
            ((base + gain, None, None), "is the new total"),
            ((None, None, n / 6 * base), "does not grow with N"),
            ((None, None, total - base), f"what the {2 * more} new layers add"),
            ((None, None, base + 2 * more * encoder_layer), "of an encoder layer's size"),
            ((None, None, base + more * encoder_layer), f"so {more} more encoder layers"),
        ]
        for args, words in mistakes:
            with pytest.raises(ExerciseFailed, match=words):
                ch09.check_parameter_counts(*args)


def test_a_neighbours_numbers_are_wrong():
    with as_student("alice"):
        alice = ch09.parameter_variant()
        copied = _right(alice)
    with as_student("bob"):
        bob = ch09.parameter_variant()
        assert bob != alice
        # the checker names whose numbers an answer is right for (lecturer review s11, S3)
        for k, name in enumerate(["vocab", None, "n_layers"]):
            if name is None or alice[name] == bob[name]:
                continue
            one = [None, None, None]
            one[k] = copied[k]
            words = {"vocab": "a vocabulary of {:,}", "n_layers": "N = {}"}[name]
            said = f"is the answer for {words.format(alice[name])} (another student's numbers); "
            said += f"yours are {words.format(bob[name])}"
            with pytest.raises(ExerciseFailed, match=re.escape(said)):
                ch09.check_parameter_counts(*one)
        with pytest.raises(ExerciseFailed):
            ch09.check_parameter_counts(*copied)
        assert ch09.check_parameter_counts(*_right(bob)).passed
    # nor are the book's numbers (the worked solution's) right for a student with other numbers
    with as_student("alice"):
        assert alice != ch09.VARIANT_BOOK
        with pytest.raises(ExerciseFailed):
            ch09.check_parameter_counts(*_right(ch09.VARIANT_BOOK))
        book = _right(ch09.VARIANT_BOOK)
        if alice["vocab"] != 37000:
            with pytest.raises(
                ExerciseFailed, match=r"a vocabulary of 37,000 \(the book's numbers\)"
            ):
                ch09.check_parameter_counts(book[0], None, None)
        if alice["n_layers"] != 12:
            with pytest.raises(ExerciseFailed, match=r"N = 12 \(the book's numbers\)"):
                ch09.check_parameter_counts(None, None, book[2])
    # a reader of the book is never told of other numbers
    with as_student(None):
        with pytest.raises(ExerciseFailed) as failed:
            ch09.check_parameter_counts(*_right(alice))
        assert "numbers)" not in str(failed.value)


def test_the_course_tells_each_student_their_numbers(tmp_path):
    """make_course.py --variants puts a locked cell under exercise 3's statement that prints the
    student's numbers (and marks the course for the grader); without it, nothing changes."""
    make_course.write_course(tmp_path / "plain", ["09"])
    make_course.write_course(tmp_path / "variants", ["09"], variants=True)
    chapter = "09_the_transformer"

    def cells(which):
        nb = nbformat.read(tmp_path / which / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        return [c for c in nb.cells if "_variant_" in c.metadata["nbgrader"]["grade_id"]]

    assert cells("plain") == [] and not (tmp_path / "plain" / "grading" / "variants.json").exists()
    text, code = cells("variants")
    assert (
        text.metadata["nbgrader"]["grade_id"] == "ex3_variant_0" and "Your numbers" in text.source
    )
    assert code.metadata["nbgrader"]["locked"] and "parameter_variant()" in code.source
    assert (tmp_path / "variants" / "grading" / "variants.json").exists()
    # the answer cell's template asks for the student's numbers, not the book's (lecturer review s11)
    for which, book in (("plain", True), ("variants", False)):
        nb = nbformat.read(tmp_path / which / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        (answer,) = [
            c.source for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "ex3_answer"
        ]
        template = answer.split(make_course.BEGIN, 1)[0]  # what the release keeps
        assert ("37,000" in template and "N = 12" in template) is book, template
        assert ("your own size (printed above)" in template) is not book, template
    # the written part's rubric and model answer say that their numbers are the book's (lecturer
    # review s9): inside the mark scheme, so the students' release holds neither
    for which, expected in (("plain", False), ("variants", True)):
        nb = nbformat.read(tmp_path / which / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells}
        rubric, model = by_id["ex3_rubric"].source, by_id["ex3_written"].source
        scheme = rubric.split(make_course.MARK_BEGIN, 1)[1].split(make_course.MARK_END, 1)[0]
        assert (make_course.VARIANT_RUBRIC in scheme) is expected
        assert model.startswith(make_course.VARIANT_MODEL) is expected
        assert make_course.VARIANT_RUBRIC not in rubric.split(make_course.MARK_BEGIN, 1)[0]
    with as_student(None):
        os.environ["COURSE_STUDENT"] = "alice"
        namespace: dict = {}
        exec(code.source, namespace)  # the cell as the student runs it: it turns the variants on
        try:
            shown = eval("parameter_variant()", namespace)
        finally:
            os.environ.pop("COURSE_VARIANTS", None)
    with as_student("alice"):
        assert shown == ch09.parameter_variant()


# --- chapters 12, 16 and 17 (lecturer review s17, S4) ---------------------------------------------------


def _albert_right(n: dict[str, int]) -> int:
    V, E, H = n["vocab"], n["E"], n["H"]
    return (V + 512 + 2 + 2) * E + E * H + H + (12 * H * H + 13 * H) + H * H + H


def _cache_right(n: dict[str, int]) -> float:
    return 2 * n["n_layers"] * n["n_kv_heads"] * n["head_dim"] * 2 * n["context"] / 2**30


def test_the_books_numbers_for_chapters_12_16_17():
    """A reader of the book keeps the book's numbers and the book's answers."""
    with as_student(None):
        assert ch12.vocabulary_variant() == {"vocab": 793_471}
        assert ch12.check_elmo_size(None, None, 793_471 * 513).passed is not None
        n16 = ch16.albert_variant()
        assert (n16["vocab"], n16["E"], n16["H"]) == (30000, 128, 1024)
        assert n16["layer_parameters"] == ch16.LAYER == 12_596_224
        assert _albert_right(n16) == 17_683_968
        assert ch16.check_albert_prediction(17_683_968, True).passed
        n17 = ch17.cache_variant()
        assert n17 == {
            "n_layers": 28,
            "n_kv_heads": 8,
            "head_dim": 128,
            "context": 40_960,
            "n_heads": 16,
        }
        assert _cache_right(n17) == 4.375
        assert ch17.check_long_context(4.375, 1025, 128).passed


@pytest.mark.parametrize("student", STUDENTS[:5])
def test_chapters_12_16_17_check_each_students_own_numbers(student):
    """Each student's numbers are realistic, the checker computes the answer from them, names the
    usual mistakes on them, and says so when the answer is the book's."""
    with as_student(student):
        V = ch12.vocabulary_variant()["vocab"]
        assert 500_000 <= V < 1_000_000
        assert ch12.check_elmo_size(None, None, V * 513).passed is not None
        with pytest.raises(ExerciseFailed, match="not the biases"):
            ch12.check_elmo_size(None, None, V * 512)
        if V != 793_471:
            with pytest.raises(ExerciseFailed, match=r"793,471 words, the book's numbers"):
                ch12.check_elmo_size(None, None, 793_471 * 513)

        n16 = ch16.albert_variant()
        assert n16["E"] < n16["H"] and n16["H"] % 16 == 0 and 20_000 <= n16["vocab"] <= 50_000
        right = _albert_right(n16)
        assert ch16.check_albert_prediction(right, True).passed
        with pytest.raises(ExerciseFailed, match="one layer applied 24 times"):
            ch16.check_albert_prediction(right + 23 * n16["layer_parameters"], None)
        with pytest.raises(ExerciseFailed, match=f"left out the pooler \\(its {n16['H']} x"):
            ch16.check_albert_prediction(right - n16["H"] ** 2 - n16["H"], None)
        if right != 17_683_968:
            with pytest.raises(ExerciseFailed, match="the book's numbers"):
                ch16.check_albert_prediction(17_683_968, None)

        n17 = ch17.cache_variant()
        assert 16 <= n17["n_layers"] <= 40 and n17["n_heads"] == 2 * n17["n_kv_heads"]
        assert 8_192 <= n17["context"] <= 131_072
        gib = _cache_right(n17)
        assert ch17.check_long_context(gib, 1025, 128).passed
        with pytest.raises(ExerciseFailed, match=f"counted the H = {n17['n_heads']} query heads"):
            ch17.check_long_context(2 * gib, None, None)
        with pytest.raises(ExerciseFailed, match=f"every one of the {n17['n_layers']} layers"):
            ch17.check_long_context(gib / n17["n_layers"], None, None)
        if abs(gib / 4.375 - 1) > 0.01:
            with pytest.raises(ExerciseFailed, match="the book's numbers"):
                ch17.check_long_context(4.375, None, None)


def test_chapters_12_16_17_numbers_differ_between_students():
    drawn = {12: set(), 16: set(), 17: set()}
    for student in STUDENTS:
        with as_student(student):
            drawn[12].add(ch12.vocabulary_variant()["vocab"])
            drawn[16].add(tuple(ch16.albert_variant().values()))
            drawn[17].add(tuple(ch17.cache_variant().values()))
    assert all(len(d) >= 7 for d in drawn.values()), drawn
    with as_student("alice"):
        alice = _cache_right(ch17.cache_variant())
    with as_student("bob"):
        if abs(alice / _cache_right(ch17.cache_variant()) - 1) > 0.01:
            with pytest.raises(ExerciseFailed):
                ch17.check_long_context(alice, None, None)


@pytest.mark.parametrize(
    ("prefix", "number", "function"),
    [("12", 2, "vocabulary_variant"), ("16", 2, "albert_variant"), ("17", 4, "cache_variant")],
)
def test_the_course_gives_chapters_12_16_17_variants(tmp_path, prefix, number, function):
    make_course.write_course(tmp_path / "variants", [prefix], variants=True)
    (source,) = (tmp_path / "variants" / "source").glob(f"{prefix}_*/*.ipynb")
    nb = nbformat.read(source, as_version=4)
    ids = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    assert f"{function}()" in ids[f"ex{number}_variant_1"].source
    if prefix == "12":  # the template asks for the student's vocabulary, not the book's
        template = ids["ex2_answer"].source.split(make_course.BEGIN, 1)[0]
        assert "793,471" not in template and "your own vocabulary" in template


def test_a_classmates_right_answer_is_named_in_the_copy_report(tmp_path, capsys):
    """Lecturer review s21, M5: erin typed alice's per-student numbers and read "too large by 43.4 %";
    the grader knows every student's numbers, and the copy report and the flags say "equals alice's
    right answer" (not in the student's feedback)."""
    import json

    import grade_course

    with as_student("alice"):
        alice = _cache_right(ch17.cache_variant())
        with as_student("erin"):
            erin = _cache_right(ch17.cache_variant())
        assert alice != erin
        # erin's answer: alice's cache, a right window, alice's third number (whatever it is)
        args = [alice, 1025, 128]
        found = grade_course.classmates_answer(
            ch17.check_long_context, args, "erin", ["alice", "bob", "erin"]
        )
        assert os.environ["COURSE_STUDENT"] == "alice"  # put back
    with as_student("erin"):
        assert found[0] == "alice (qwen3_cache_gib)"
        assert not any(f.startswith(("erin", "bob (qwen3")) for f in found)
        # her own right number: no classmate named
        right = [erin, 1025, 128]
        assert not any(
            "qwen3_cache_gib" in f
            for f in grade_course.classmates_answer(
                ch17.check_long_context, right, "erin", ["alice"]
            )
        )
    result = grade_course.Result("erin", "ex4_test", 0.0, 0.0, "✗ wrong", 0.1)
    result.classmates = found[:1]
    assert grade_course.classmate_flags([result]) == [
        "erin ex4_test: equals alice's right answer (qwen3_cache_gib)"
    ]
    course = tmp_path / "course"
    (course / "submitted").mkdir(parents=True)
    grade_course._print_flags(course, "17_modern_decoder", ["erin"], [result])
    out = capsys.readouterr().out
    assert "a classmate's right answer (1 wrong per-student numbers" in out
    assert "erin ex4_test: equals alice's right answer (qwen3_cache_gib)" in out
    flags = json.loads((course / "reports" / "17_modern_decoder-flags.json").read_text())
    assert flags == {"erin": ["ex4_test equals alice's right answer"]}
    import inspect

    assert "classmates_answer(check, args, student, self.classmates)" in inspect.getsource(
        grade_course.Grader.grade_one
    )
    assert "grader.classmates = _with_class(" in inspect.getsource(grade_course._grade_run)
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "a wrong number that is a classmate's right one is listed too" in page


# --- chapter 13, exercise 2: a GPT-3 row of the paper's table per student (lecturer review s22, M8) ---


def _four_figures(x: float) -> float:
    return float(f"{x:.4g}")


def test_chapter_13_counts_every_gpt3_row_as_the_library_does():
    from lib.gpt import GPTConfig
    from lib.gpt import count_parameters as gpt_parameters

    for name, (N, D, H, _) in ch13.GPT3_MODELS.items():
        config = GPTConfig(vocab_size=50257, block_size=2048, n_layer=N, n_head=H, n_embd=D)
        n = ch13.gpt3_numbers(name)
        assert n["params"] == gpt_parameters(config), name
        assert n["estimate"] == 12 * N * D**2 + (50257 + 2048) * D
    assert ch13.gpt3_numbers("175B")["params"] == ch13.GPT3_PARAMS
    with as_student(None):
        assert ch13.gpt3_variant() == {
            "model": "GPT-3 175B",
            "n_layer": 96,
            "n_embd": 12288,
            "n_head": 96,
        }
        assert ch13.check_gpt3_size(174.6e9, 0.0037).passed


@pytest.mark.parametrize("student", STUDENTS)
def test_chapter_13_checks_each_students_gpt3_row_and_names_its_mistakes(student):
    """Each student's own row: the exact count, the estimate 12 N D^2 + (V + T) D and either to four
    significant figures pass, with the share to two; the usual mistakes are named on every row, and a
    count for the book's model or a classmate's is said to be one."""
    with as_student(student):
        numbers = ch13.gpt3_variant()
        n = ch13.gpt3_numbers(numbers["model"].removeprefix("GPT-3 "))
        assert not n["book"] and numbers["n_layer"] == n["N"] and numbers["n_embd"] == n["D"]
        assert n["D"] % numbers["n_head"] == 0
        share = f"{n['share']:.2g}"
        for total in (n["params"], n["estimate"], _four_figures(n["params"])):
            assert ch13.check_gpt3_size(total, float(share)).passed, total
        assert ch13.check_gpt3_size(_four_figures(n["estimate"]), n["share"]).passed
        assert f"{n['params'] / 1e6:.1f} million" in str(
            ch13.check_gpt3_size(n["params"], n["share"])
        ) or f"{n['params'] / 1e9:.1f} billion" in str(
            ch13.check_gpt3_size(n["params"], n["share"])
        )
        N, D, V = n["N"], n["D"], 50257
        mistakes = [
            ((n["blocks"], None), "is 12 N D^2 alone"),
            ((n["params"] + V * D, None), "counts the token embedding twice"),
            ((n["blocks"] / N + n["embeddings"], None), f"has one block: GPT-3 has N = {N}"),
            ((n["params"] - n["T"] * D, None), "has no position embedding W_p"),
            ((n["params"] - 1024 * D, None), "for GPT-2's context"),
            ((n["headline"], None), "the paper's headline figure"),
            ((ch13.GPT3_PARAMS, None), "GPT-3 175B (the book's numbers)"),
            ((None, V * D / n["params"]), "counts the token embedding only"),
            ((None, 100 * n["share"]), "looks like a percentage"),
            ((None, n["embeddings"] / n["blocks"]), "divides the embeddings by the blocks"),
            ((None, ch13.EMBEDDING_SHARE), "GPT-3 175B (the book's numbers)"),
        ]
        other = next(m for m in ch13.VARIANT_CHOICES["model"] if m != n["name"])
        mistakes.append(((ch13.gpt3_numbers(other)["params"], None), f"GPT-3 {other} (another"))
        for args, words in mistakes:
            if (
                words == "the paper's headline figure"
                and _four_figures(n["params"]) == n["headline"]
            ):
                continue  # a headline that is the count to four figures is right
            with pytest.raises(ExerciseFailed, match=re.escape(words)):
                ch13.check_gpt3_size(*args)


def test_chapter_13_numbers_differ_between_students():
    drawn = set()
    for student in STUDENTS:
        with as_student(student):
            drawn.add(ch13.gpt3_variant()["model"])
    assert len(drawn) >= 4, drawn
    assert (
        "GPT-3 175B" not in drawn
    )  # a student's is never the book's: a copied model answer is wrong


def test_the_course_gives_chapter_13_exercise_2_variants(tmp_path):
    make_course.write_course(tmp_path / "variants", ["13"], variants=True)
    (source,) = (tmp_path / "variants" / "source").glob("13_*/*.ipynb")
    nb = nbformat.read(source, as_version=4)
    ids = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    assert "gpt3_variant()" in ids["ex2_variant_1"].source
    template = ids["ex2_answer"].source.split(make_course.BEGIN, 1)[0]
    assert "largest model" not in template and "your GPT-3 model (printed above)" in template
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "Today five exercises have variants" in page
    assert "chapter 13's exercise 2 (a row of the GPT-3 paper's table" in page
