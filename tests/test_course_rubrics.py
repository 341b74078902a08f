"""The written answers' rubrics require the claims that answer each part's question (lecturer review
s16, S3): chapter 16's reason that BERT-base is faster is required, not "context", chapter 17's
rubrics do not require what their questions do not ask, and ``make course`` warns of a rubric whose
required sentence shares no word with its question (none of the book's chapters does)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402
import rubric_claims  # noqa: E402

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _course(chapter: str):
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    return make_course.course_notebook(nb, chapter, predictions_at_collection=True)


def _required(chapter: str) -> dict[int, list[tuple[str, str]]]:
    """{exercise: [(part's question, its required claims as one text)]} of a chapter's rubrics."""
    course, _ = _course(chapter)
    out = {}
    for cell in course.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if not grade_id.endswith("_rubric"):
            continue
        found = re.findall(
            r'\*\*Part \d+ \(\d+ pt\)\.\*\* "(.*?)" A full answer says:\n\n(.*?)\n\n',
            cell.source,
            re.S,
        )
        out[int(grade_id[2 : grade_id.index("_")])] = found
    return out


def test_chapter_16_requires_the_reason_bert_base_is_faster():
    ((question, claims),) = _required("16_beyond_bert")[2]
    # the question, not the "Check both" order
    assert question == "Which of ALBERT-xlarge and BERT-base is faster per token, and why?"
    assert "BERT-base is the faster model" in claims
    assert "every token goes through the xlarge layer 24 times" in claims  # the reason: required
    assert "ALBERT-large has" not in claims  # the predictions' numbers: context


def test_chapter_17_requires_only_what_its_questions_ask():
    required = _required("17_modern_decoder")
    ((_, why_agree),) = required[1]
    # the reason, R_m^T R_n = R_{n-m}, at any (m, n): not the worked solution's positions (lecturer
    # review s17, M4)
    assert "R_m^\\top R_n k = q^\\top R_{n-m} k" in why_agree and "offset $m - n$" in why_agree
    assert "109 - 104" not in why_agree
    assert "Compute the frequencies" not in why_agree and "usual mistakes" not in why_agree
    ((_, tiled),) = required[2]
    assert "`k.repeat(1, G, 1, 1)` has the same shape and tiles instead" in tiled
    assert "dimension 2" not in tiled
    ((_, mistakes),) = required[3]
    assert "subtracting the mean first" in mistakes and "putting SiLU on `up`" in mistakes
    assert "RMSNorm divides" not in mistakes
    ((_, window),) = required[4]
    assert "each layer keeps only what its next query can see" in window


def test_no_chapter_rubric_requires_a_sentence_unrelated_to_its_question():
    """What ``make course`` warns of, for every chapter: a required claim, chosen by shared words,
    that shares no word with its part's question. Each of tools/rubric_claims.py's openings is
    found (else course_notebook raises)."""
    warned = {}
    for chapter in CHAPTERS:
        _, exercises = _course(chapter)
        for e in exercises:
            if e["unrelated"]:
                warned[(chapter, e["number"])] = e["unrelated"]
    assert not warned, warned
    assert set(rubric_claims.REQUIRED) <= {c[:2] for c in CHAPTERS}


STATEMENT = "**Exercise 4 (explain): rows.** Which rows win, and why do they win?"


def test_make_course_warns_of_a_required_claim_that_shares_no_word(capsys):
    model = "Long rows win the dot product. Cats sleep all afternoon."
    exercise = {"number": 4, "points": 0}
    one = "**Exercise 4 (explain): rows.** Which rows win the dot product?"
    make_course._written_cells(model, one, exercise, lambda g: g, "99_none")
    # the second sentence stays with the only part, and shares no word with its question
    assert exercise["unrelated"] == [(one.split("** ")[1], "Cats sleep all afternoon.")]
    assert make_course.unrelated("Which rows win?", ["Long rows win."]) == []


def test_a_named_claim_that_the_model_answer_lost_stops_make_course():
    model = "Long rows win the dot product. Their length scales the score."
    text, points, graded = make_course.graded_parts(
        4, STATEMENT, model, [["Long rows win"], ["Their length"]], "99, exercise 4"
    )
    assert points == 2 and graded[1] == (
        "Why do they win?",
        ["Their length scales the score."],
        True,
    )
    with pytest.raises(ValueError, match="rubric_claims"):
        make_course.graded_parts(4, STATEMENT, model, [["Long rows"], ["Short rows"]], "x")
    # a claim and its reason, named by a tuple, are one required bullet
    one = "**Exercise 4 (explain): rows.** Which rows win?"
    _, _, graded = make_course.graded_parts(4, one, model, [[("Long rows win", "Their length")]])
    assert graded == [("Which rows win?", [model], True)]


def test_without_its_named_claims_chapter_17_is_warned_of(tmp_path, capsys, monkeypatch):
    """The rubrics the lecturer found wrong (s16, S3), as shared words alone chose them: make course
    names them (exercise 1 required how to compute RoPE and its usual mistakes, exercise 3 what
    RMSNorm and SwiGLU compute); with the table, it prints no warning."""
    out = tmp_path / "c"
    make_course.main(["17", "--out", str(out)])
    assert "warning" not in capsys.readouterr().out
    monkeypatch.setitem(rubric_claims.REQUIRED, "17", {})
    make_course.main(["17", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "warning: 17_modern_decoder, exercise 1: the rubric requires a sentence" in printed
    assert "'Compute the frequencies" in printed and "'RMSNorm divides" in printed
    assert "exercise 2:" not in printed


def test_chapter_12_grades_the_explanations_not_the_checked_count():
    """Lecturer review s17, M4: chapter 12's exercise 2 graded the softmax's count, which its checker
    grades already; its rubric grades "which part is largest, and why" and "which tensor is extra,
    and why"."""
    (largest, largest_claims), (tensor, tensor_claims) = _required("12_elmo")[2]
    assert largest.startswith("Which part holds most") and largest.endswith("and why?")
    assert "The LSTMs: 75.6M" in largest_claims and "4 gates × 4096 cells" in largest_claims
    assert tensor.startswith("Which tensor of `nn.LSTM`") and "why is it extra?" in tensor
    assert "`bias_hh_l0`" in tensor_claims and "always added" in tensor_claims
    assert "793,471 × 513" not in largest_claims + tensor_claims


def test_chapter_16_counts_its_two_questions_on_lambda_as_two_parts():
    (which, which_claims), (how, how_claims) = _required("16_beyond_bert")[3]
    assert which == "Which parameters does $\\lambda$ actually affect?"
    assert how == "Through which two mechanisms does it affect them?"
    assert "The discriminator's own weights receive gradient" in which_claims
    # lecturer review s21, M1: the shared embeddings answer the first question, not the second only
    assert "The parameters $\\lambda$ affects are the shared embeddings" in which_claims
    assert "What $\\lambda$ sets is who shapes" not in which_claims
    # lecturer review s29, M1: both mechanisms in the point, not the first alone
    point = how_claims.split("\n")[0]
    assert "the shared embeddings, where the two gradients add" in point
    assert "global gradient clipping" in point
    _, exercises = _course("16_beyond_bert")
    assert exercises[2]["points"] == 2  # a point per question


def test_a_part_with_several_claims_says_which_one_earns_its_point():
    """Lecturer review s21, M2: a 1-point part listed three "required" claims (chapter 12's exercises
    3 and 4) and the guide did not say whether all three were needed: one is marked as the point, the
    others as what a full answer may add, and the guide (the Formgrader's rubric text) says so."""
    course, _ = _course("12_elmo")
    rubrics = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in course.cells
        if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_rubric")
    }
    for rubric in rubrics.values():
        if make_course.THE_POINT not in rubric.split("\n\n", 3)[-1]:
            # every part one claim: the guide does not speak of several (lecturer review s23, M3)
            assert "several claims" not in rubric
            continue
        assert f"the point is for the one marked {make_course.THE_POINT}" in rubric
        assert f"those marked {make_course.MAY_ADD} are what a full answer may add" in rubric
        for part in re.findall(r"A full answer says:\n\n(.*?)\n\n", rubric, re.S):
            bullets = part.split("\n")
            if len(bullets) > 1:  # one point, and the rest marked as additions
                assert bullets[0].startswith(f"- {make_course.THE_POINT} ")
                assert all(b.startswith(f"- {make_course.MAY_ADD} ") for b in bullets[1:])
            else:
                assert make_course.THE_POINT not in bullets[0]
    ex4 = re.search(r"A full answer says:\n\n(.*?)\n\n", rubrics["ex4_rubric"], re.S).group(1)
    point = ex4.split("\n")[0]
    assert "*Contextual nearest neighbours*" in point and "40.8%" not in point
    ex3 = re.search(r"A full answer says:\n\n(.*?)\n\n", rubrics["ex3_rubric"], re.S).group(1)
    assert "from its spelling" in ex3.split("\n")[0]
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "the point is for the one the rubric marks **The point:**" in page


def _chapters() -> dict[str, str]:
    return {p.stem[:2]: p.stem for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}


_OWN_RUN = [(_chapters()[c], n) for c, found in rubric_claims.OWN_RUN.items() for n in found]


def test_every_exercise_whose_code_no_checker_grades_has_the_own_run_guard():
    """Lecturer review s32, M2: chapter 14's exercise 3 had no checker and the generic rubric, so a
    written answer quoting the book's numbers earned the point with no run. Every exercise with a
    written answer and no test cell is in rubric_claims.OWN_RUN, and no other."""
    unchecked = set()
    for prefix, chapter in _chapters().items():
        _, exercises = _course(chapter)
        unchecked |= {(chapter, e["number"]) for e in exercises if e["written"] and not e["test"]}
    assert ("14_bert", 3) in unchecked
    assert unchecked == set(_OWN_RUN)


@pytest.mark.parametrize("chapter, number", _OWN_RUN)
def test_an_unchecked_experiments_rubric_asks_for_the_students_own_run(chapter, number):
    """Lecturer review s21, M3: the experiments of ch12 ex3 and ch16 ex3 (s32, M2: and every other
    exercise whose code no checker grades) carry 0 points and no checker, and their claims quote the
    book's numbers: the rubric tells the marker to look for the student's own numbers in the code
    cell's output, and what a written answer with no run earns. The numbers it quotes are the model
    answer's (held: a rerun that changes them fails here)."""
    course, _ = _course(chapter)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id", ""): c.source for c in course.cells}
    rubric = cells[f"ex{number}_rubric"]
    head, scheme = rubric.split(make_course.MARK_BEGIN)
    what = rubric_claims.OWN_RUN[chapter[:2]][number]
    assert scheme.lstrip().startswith(make_course.OWN_RUN_RUBRIC.format(what=what))
    assert "earns its point only if the run that prints it is there" in scheme
    assert "no run above it gets at most half the point" in scheme
    assert "**The student's own run.**" not in head  # the marker's, not the student's
    model = cells[f"ex{number}_written"]
    for n in re.findall(r"\d+\.\d+", what):
        assert n in model, n
    others = [
        c.metadata["nbgrader"]["grade_id"]
        for c in course.cells
        if "**The student's own run.**" in c.source
    ]
    assert others == [f"ex{number}_rubric"]


def _points(chapter: str) -> dict[int, list[tuple[str, str]]]:
    """{exercise: [(part's question, the claim marked "The point")]} of a chapter's rubrics."""
    return {
        number: [
            (question, claims.split("\n")[0].removeprefix(f"- {make_course.THE_POINT} "))
            for question, claims in parts
        ]
        for number, parts in _required(chapter).items()
    }


def test_each_point_is_the_claim_its_question_asks_for():
    """Lecturer review s22, S1: four parts gave "The point" to a claim their question did not ask
    for (a restated premise, the measured 47.8%, the nucleus being a prefix, "Start from m = -inf");
    chapter 18's three parts were "print it" instructions: each now asks a question, and its point
    answers it."""
    ((agree, why), _) = _points("10_subword_tokenization")[2]
    assert "why do the two agree" in agree.lower()
    assert why.startswith("Given the property, the symbol merge") and "never creates a pair" in why
    ((one_k, point),) = _points("13_gpt")[1]
    assert "choosing one `k`" in one_k and point.startswith("No single $k$ serves both steps")
    (mask, point), _ = _points("13_gpt")[3]
    assert "causal mask" in mask and point.startswith("Under the causal mask")
    assert "47.8%" not in point
    ch18 = _points("18_attention_at_scale")
    assert [q for parts in ch18.values() for q, _ in parts] == [
        "Why does the first block need no special case, although your running maximum starts at"
        " $m = -\\infty$ and your sum at $\\ell = 0$?",
        "Why would the power-of-two formula applied to 12, $2^{-8(h+1)/12}$, be wrong for a model"
        " trained with the released code, although its 12 slopes, like the released ones, span steep"
        " to flat (and, unlike them, in even steps)?",
        "Why is the tile's own lower triangle, `torch.ones(4, 4).tril()`, wrong for this tile?",
        "Why must $\\delta_i$ be the $dO_i \\cdot o_i$ you are given, and not the tile's own sum"
        " $\\sum_j P_{ij}\\, dP_{ij}$ over its keys?",
    ]
    assert "$e^{-\\infty} = 0$" in ch18[1][0][1]
    assert ch18[2][0][1].startswith("The slopes are part of what a checkpoint learned")
    assert "hides keys 3 and 4" in ch18[3][0][1]
    # exercise 4 (lecturer review s22, M11): the point is that a tile sees part of the row's sum
    assert ch18[4][0][1].startswith("The sum $\\delta_i") and "sees only" in ch18[4][0][1]
    assert not [q for parts in ch18.values() for q, _ in parts if "print" in q.lower()]


def test_an_italic_sub_heading_is_not_part_of_a_rubrics_question():
    """Lecturer review s41, m5: chapter 4's exercise 3 rubric's first part read "*The questions.*
    When does normalisation matter?": the statement's sub-heading, not the question."""
    nb = nbformat.read(ROOT / "notebooks" / "04_bahdanau_and_luong.ipynb", as_version=4)
    statements = [c.source for c in nb.cells if c.cell_type == "markdown"]
    (ex3,) = [s for s in statements if s.startswith("**Exercise 3 ")]
    assert make_course.parts(ex3)[0] == "When does normalisation matter?"


def test_a_written_part_is_its_question_not_the_code_cells_orders():
    """Lecturer review s22, M3: chapter 13's exercise 3 asked, as its first written part, "Then
    measure it (`first_word_accuracy`, ...), write your fine-tuned classifier ..., and explain the
    result with the causal mask."; chapter 10's exercise 3 "Explain with what happens to *The*, *the*
    and *THE*?", a question mark added to an order."""
    questions = {
        chapter[:2]: [
            make_course.parts(c.source)
            for c in nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4).cells
            if c.cell_type == "markdown" and make_course.EXERCISE.match(c.source)
        ]
        for chapter in ("10_subword_tokenization", "13_gpt")
    }
    assert questions["13"][2][0] == "Explain the result with the causal mask."
    assert questions["10"][2][1] == "Explain with what happens to *The*, *the* and *THE*."
    assert questions["10"][2][0].endswith("lower-cased run?")  # a question keeps its mark
    assert questions["10"][1][1] == "Which one does less work for a long list of merges?"


def test_chapter_15_exercise_2s_point_says_which_separates_better():
    """Lecturer review s23, S3: "which of the two separates the pairs better?" had the mean's two
    cosines as its point; the point is the sentence that says the mean separates far better, and why
    (every pair gets a high cosine from the pooled output)."""
    ((question, point),) = _points(_ch("15"))[2]
    assert question.endswith("which of the two separates the pairs better?")
    assert "the mean separates far better" in point and "0.46 at least" in point
    assert not point.startswith("With the mean of the tokens")


def test_chapter_8_exercise_2s_point_is_the_explanation_with_the_clocks():
    """Course review s27, M4: "explain the result with the clocks of the binary table" gave its
    point to the measured distances ("But an exact repeat is not the question; ... 9.93 at the
    least") and made the explanation optional; the point is that a position is the whole code,
    shared only if every clock agrees, and the numbers are what may support it."""
    ((question, point),) = _points(_ch("08"))[2]
    assert "how do the clocks of the binary table explain the result?" in question
    assert point.startswith("It is the binary table again") and "*every* bit agrees" in point
    assert "9.93" not in point
    ((_, claims),) = _required(_ch("08"))[2]
    assert f"{make_course.MAY_ADD} But an exact repeat is not the question" in claims


def _ch(prefix: str) -> str:
    return next(c for c in CHAPTERS if c.startswith(prefix))


def _every_point_passes(misses, read_table):
    """Every part's point of every chapter passes ``misses(question, point)``, or is read and named in
    ``read_table`` (and no entry there is stale)."""
    missing, read = [], set()
    for chapter in CHAPTERS:
        for number, parts_ in _points(chapter).items():
            for i, (question, point) in enumerate(parts_, 1):
                if misses(question, point):
                    if (chapter[:2], number, i) in read_table:
                        read.add((chapter[:2], number, i))
                    else:
                        missing.append((chapter[:2], number, i, question[-60:], point[:80]))
    assert not missing, missing
    assert read == set(read_table)  # no stale entry


def test_each_point_shares_its_questions_key_words():
    """Lecturer review s23, S3: make course's warning fires only when a point shares no word at all
    with its question; each part's point shares a key word of the clause that asks (or is read and
    named in rubric_claims.KEY_WORDS_READ with why it answers the question), in every chapter."""
    _every_point_passes(rubric_claims.misses_key_words, rubric_claims.KEY_WORDS_READ)
    # the check itself: the old point of ch15 ex2 misses, the sentence that answers does not
    question = "Do the same with the pooled output: which of the two separates the pairs better?"
    assert rubric_claims.key_words(question) == {"separ", "pair", "bette"}
    assert rubric_claims.misses_key_words(
        question, "With the mean, related sentences are close, an unrelated one is orthogonal."
    )
    assert not rubric_claims.misses_key_words(question, "The mean separates far better.")


PREDICTION = re.compile(r"^(?:Before computing, )?predict\b|write down your prediction", re.I)


def test_no_rubric_part_grades_a_prediction_or_a_checked_value():
    """Lecturer review s23, M2: chapter 3's exercise 2 graded its two predictions again as written
    points, exercise 3 the two sets `ex3_test` scores; such a part asks only for the reason or is
    dropped, in every chapter. A checked value: a name in brackets, "(`identical`)", that a code cell
    of the chapter assigns."""
    found = {}
    for chapter in CHAPTERS:
        course, _ = _course(chapter)
        code = "\n".join(c.source for c in course.cells if c.cell_type == "code")
        for cell in course.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if not grade_id.endswith("_rubric"):
                continue
            head = cell.source.split(make_course.MARK_BEGIN)[0]
            head = re.sub(r"^\*\*Exercise \d+, in words\.\*\* ", "", head)
            asked = re.findall(r"^\d+\. (.*)$", head, re.M) or [head]
            bad = [
                q
                for q in asked
                if PREDICTION.search(q)
                or any(
                    re.search(rf"^{name}\s*=", code, re.M)
                    for name in re.findall(r"\(`([A-Za-z_][A-Za-z_0-9]*)`[,)]", q)
                )
            ]
            if bad:
                found[(chapter[:2], grade_id)] = bad
    assert not found, found
    (limit,), (formulas,) = _required(_ch("03"))[2], _required(_ch("03"))[3]
    assert "why does the weight of `k2` approach the number you predicted?" in limit[0]
    assert limit[1].startswith("- **The point:** Relative to `k2`, key $i$ gets")
    assert (
        "identical weights" in formulas[0]
        and "$\\mathbf q^\\top\\mathbf k = \\cos\\theta$" in formulas[1]
    )


def test_rubric_cosmetics_a_marker_reads_at_once():
    """Lecturer review s23, M3: chapter 7's exercise 1, part 1 had no marked point (one bullet of five
    numbers); chapter 15's exercise 1 listed its model answer's own question "Where does the weight go
    instead?" among the claims; a one-part rubric's header explained "Each part ... Where a part
    lists several claims"."""
    ((digit, digit_claims), _) = _required(_ch("07"))[1]
    assert digit == "Which digit does it get right?"
    point, *more = digit_claims.split("\n")
    assert point.startswith(f"- {make_course.THE_POINT} The previous digit") and more
    assert "0.999" in point and "0.20" in point and "ln 5" not in point
    course, _ = _course(_ch("15"))
    rubrics = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in course.cells
        if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_rubric")
    }
    assert "Where does the weight go instead?" not in rubrics["ex1_rubric"]
    for one in ("ex1_rubric", "ex2_rubric"):  # one part each
        assert "Each part" not in rubrics[one] and "Where a part lists" not in rubrics[one]
        assert "**Rubric: 1 point.** The answer: 1 point" in rubrics[one]
        assert (
            f"Of the several claims, the point is for the one marked {make_course.THE_POINT}"
            in (rubrics[one])
        )
    assert "Each part: 1 point" in rubrics["ex3_rubric"]
    text, _, _ = make_course.graded_parts(
        4,
        STATEMENT.replace(", and why do they win", ""),
        "Long rows win the dot product.",
        [["Long rows win"]],
    )
    assert "several claims" not in text  # one part, one claim


def test_chapter_18s_claims_neither_restate_the_question_nor_cite_the_worked_demo():
    """Lecturer review s24, M6: exercise 1's rubric listed "Start from m = -inf and l = 0", the
    question's own premise, as a claim; exercise 4's point said "the demo shows it differ from delta
    on the first tile", the worked solution's printout, which no student sees."""
    course, _ = _course("18_attention_at_scale")
    rubrics = {
        c.metadata.get("nbgrader", {}).get("grade_id", ""): c.source
        for c in course.cells
        if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_rubric")
    }
    scheme = {  # the claims: what a full answer says, not the model answer's context
        k: v.split(make_course.MARK_BEGIN)[1]
        .split("A full answer says:")[1]
        .split("The model answer also says")[0]
        for k, v in rubrics.items()
    }
    assert "Start from $m = -\\infty$" not in scheme["ex1_rubric"], scheme["ex1_rubric"]
    assert "demo" not in scheme["ex4_rubric"], scheme["ex4_rubric"]
    assert "sees only $B_k$ of them" in scheme["ex4_rubric"]


def _point(chapter: str, number: int, part: int = 1) -> str:
    """The bullet that earns a rubric part's point (its only bullet where it lists one claim)."""
    _, claims = _required(chapter)[number][part - 1]
    return claims.split("\n")[0]


def test_the_point_is_what_the_question_asks():
    """Lecturer review s29, M1: "The point:" went to the wrong claim. Chapter 16's "through which
    two mechanisms" gave it for one mechanism; chapter 2's "what the hard lookup hides" for argmax's
    tie-breaking, not the tie; chapter 12's "which direction ..., and why?" left both reasons
    optional; chapter 7's part 1 listed its point again as its "May add"."""
    two = _point("16_beyond_bert", 3, 2)
    assert "shared embeddings" in two and "clipping" in two and "each needed for the point" in two
    hides = _point("02_attention_as_soft_lookup", 1)
    assert hides.startswith(f"- {make_course.THE_POINT} What it hides is the tie itself")
    assert "torch.argmax" not in hides
    why = _point("12_elmo", 1)
    assert "The backward LM finds *money* far more surprising" in why
    assert 'The forward LM has read "the bank lent tom some"' in why  # the reasons: required
    assert "has read nothing of the sentence but the final" in why
    ((_, digit),) = _required("07_multi_head_attention")[1][:1]
    point, *more = digit.split("\n")
    assert more and all("0.999" not in m for m in more)  # no "May add" repeats the point
    assert "After 300 steps" not in _required("07_multi_head_attention")[1][0][1]


def test_a_why_or_two_part_question_requires_both_halves():
    """Lecturer review s29, M1 (every rubric read against its question): a part that asks "and why"
    has the reason in its point, a "which two" both, a "when" its condition."""
    assert "mixes" in _point("02_attention_as_soft_lookup", 3, 3)
    assert "1.8 nats less probable" in _point("04_bahdanau_and_luong", 3, 2)
    assert "Normalisation matters when" in _point("04_bahdanau_and_luong", 3, 1)
    assert "term $Z$" in _point("06_self_attention", 1)
    assert _point("05_attention_beyond_translation", 2, 2).startswith(
        f"- {make_course.THE_POINT} Position alone thus says only"
    )
    both = _point("01_seq2seq_to_attention", 2)
    assert "plain decoder's only view" in both and "attention decoder reads" in both
    for chapter in CHAPTERS:
        for number, found in _required(chapter).items():
            for question, claims in found:
                if re.search(r"\band why\b|\bwhich two\b", question, re.I):
                    first = claims.split("\n")[0]
                    assert len(first) > 120, (chapter, number, question, first)


def test_each_point_answers_its_questions_focus():
    """Lecturer review s31, M1: three points shared their question's subject ("post-LN", "heads",
    "reaches") but missed what it asks: chapter 9's "explain with the gradient norms" had the runs'
    result, chapter 17's "what goes wrong" the right method, its "why W - 1, when the stack reaches
    32,768?" the arithmetic of W = 1,025. Every part's point holds its question's focus
    (rubric_claims.focus), or is read and named in rubric_claims.FOCUS_READ."""
    _every_point_passes(rubric_claims.misses_focus, rubric_claims.FOCUS_READ)
    # the three points the lecturer found: the old ones miss the focus, the new ones answer
    ((_, _), (norms, point)) = _points("09_the_transformer")[2]
    assert rubric_claims.misses_focus(
        norms,
        "So here post-LN trains with a warm-up or with the smaller rate, pre-LN with neither.",
    )
    assert point.startswith("Xiong et al. (2020) show the cause") and "gradients" in point
    assert "Pre-LN gives every layer gradients of about the same size" in point
    ((tiled, point),) = _points("17_modern_decoder")[2]
    assert rubric_claims.misses_focus(
        tiled, "`k.repeat_interleave(n_heads // Hkv, dim=1)` repeats each key head $G$ times."
    )
    assert point.startswith("`k.repeat(1, G, 1, 1)` has the same shape and tiles instead")
    assert "wrong keys" in point
    ((window, point),) = _points("17_modern_decoder")[4]
    assert rubric_claims.misses_focus(
        window,
        "A window of $W$ positions includes the token itself, so each layer reaches $W - 1$.",
    )
    assert point.startswith("The 32,768 positions that information can travel")
    assert "1{,}025" not in point
    # chapter 2's "why, in one line of algebra?": the line is part of the point
    ((_, point),) = _points("02_attention_as_soft_lookup")[2]
    assert "cancels when we normalise" in point


def test_a_model_answers_list_is_split_into_its_items():
    """Lecturer review s32, m7: chapter 3's exercise 3 answers in a list, and its rubric showed
    "- - **cosine** does not change ... - **dot** changes ..." run together: each item is a claim of
    its own, its marker dropped, in every chapter's rubric."""
    text = "- **cosine** stays: it divides.\n- **dot** changes:\n  the same. It ends.\n1. One more."
    assert make_course._sentences(text) == [
        "**cosine** stays: it divides.",
        "**dot** changes: the same.",
        "It ends.",
        "One more.",
    ]
    assert make_course._sentences("No list - here. Two.") == ["No list - here.", "Two."]
    for chapter in _chapters().values():
        course, _ = _course(chapter)
        for cell in course.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_rubric"):
                scheme = cell.source.split(make_course.MARK_BEGIN)[-1]
                assert not re.search(r"^- - |[.:] - (?:\*\*|[A-Z])", scheme, re.M), chapter
    rubric = next(
        c.source
        for c in _course("03_scoring_functions")[0].cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "ex3_rubric"
    )
    assert "\n- **cosine** does not change at all: it divides by both lengths" in rubric


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_written_parts_questions_are_sentences_and_the_list_ends_before_the_next_line(chapter):
    """Each question of a written part starts with a capital (chapter 3's "2. what does that say
    ...?", cut from "..., and what does that say ...?"), and the sentence after a numbered list is a
    paragraph of its own, not glued onto the list's last item (lecturer review s35, m2)."""
    course, _ = _course(chapter)
    for cell in course.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type != "markdown" or not grade_id.endswith("_rubric"):
            continue
        student = cell.source.split(make_course.MARK_BEGIN)[0]
        lines = student.splitlines()
        for i, line in enumerate(lines):
            item = re.match(r"\d+\. (\S)", line)
            if item:
                assert not item.group(1).islower(), (chapter, grade_id, line)
            if re.match(r"\d+\. ", line) and i + 1 < len(lines) and lines[i + 1].strip():
                assert re.match(r"\d+\. ", lines[i + 1]), (chapter, grade_id, lines[i + 1][:80])


def test_chapter_14_exercise_3s_point_is_the_finding_not_the_measurement():
    """Lecturer review s39, m6: "What do the measurements say?" had the frozen head's 48.1% against
    85.4% as its point and the finding the exercise is built for (the information is there; chance
    comes from how the head was trained) as "May add", so the misconception ("chance, so [CLS] holds
    nothing") earned half a point by the rubric's letter."""
    ((question, point),) = _points(_ch("14"))[3]
    assert question == "What do the measurements say?"
    assert "So the information is there" in point and "how the head was trained" in point
    assert "48.1%" not in point
    ((_, claims),) = _required(_ch("14"))[3]
    assert f"{make_course.MAY_ADD} Measured: with the body frozen" in claims
