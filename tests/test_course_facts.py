"""The teachers' page's one-screen table of graded-course facts (lecturer review r3, problem 13) states
what the repository does: the chapters with private grading cases are those of grading/, the chapters
whose forbidden library calls are enforced are those whose checker module has REFUSALS, only answer
cells are graded, and one chapter's deadline can be moved."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "book" / "teachers.md").read_text()


def _chapters(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def _row(what: str) -> str:
    return re.search(rf"^\| {what} \| (.*) \|$", PAGE, re.M).group(1)


def test_the_private_cases_row_lists_grading():
    private = sorted(int(p.stem[2:]) for p in (ROOT / "grading").glob("ch[0-9][0-9].py"))
    listed = "1 to 18" if private == list(range(1, 19)) else _chapters(private)
    assert _row("Private grading cases").startswith(f"Chapters {listed} (")


def test_the_constraints_row_lists_the_chapters_with_refusals():
    enforced = [
        c
        for c in range(1, 19)
        if getattr(importlib.import_module(f"lib.exercises.ch{c:02d}"), "REFUSALS", None)
    ]
    assert _row("Forbidden library calls enforced").startswith(f"Chapters {_chapters(enforced)}:")


def test_the_table_says_only_answer_cells_count_and_how_to_move_a_deadline():
    assert _row("What is graded").startswith("Only the answer cells.")
    assert "nbgrader db assignment add 17_modern_decoder --duedate=" in _row(
        "One chapter's deadline"
    )
    assert "were not tried" not in PAGE  # "are not graded by the repository's tests" instead


def test_the_table_and_the_banner_say_an_earlier_answer_cell_may_run_too():
    """Course review s40, m1: both said each answer cell runs alone, but the grader also runs an
    earlier answer cell (a 0-point experiment's too) that defines a name a later one uses
    (grade_course._needed; teachers_security.md says so)."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import make_course

    said = "after an earlier answer cell that defines a name it uses"
    for text in (_row("What is graded"), make_course.GRADED_CELLS_NOTE):
        assert said in text and "alone" not in text
    assert "never run by it" not in _row("What is graded")


def test_the_page_says_a_prediction_checkers_distance_helps_a_trial():
    """Lecturer review r3, problem 7: documented, not changed (the book's readers need the distance)."""
    page = " ".join(PAGE.split())
    assert "a few calls are enough where the checker's message gives the distance" in page


def test_the_grading_time_counts_the_rubrics_parts():
    """Lecturer review r3, problem 8: a teacher grades a written answer part by part, so the page's
    weekly grading time counts the rubrics' parts (counted in the rubric cells make_course writes),
    not the answer cells."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import instructor_notes
    import term_plan

    chapters = term_plan.chapters()
    parts = [n for c in chapters for n in instructor_notes.rubric_parts(c)]
    weeks = len(term_plan.WEEKS)
    per_week = round(sum(parts) / weeks)
    low, high = instructor_notes.GRADING_MINUTES_PER_PART
    hours = (per_week * 30 * low / 60, per_week * 30 * high / 60)
    page = " ".join(PAGE.split())
    assert f"The 18 chapters ask {len(parts)} of them" in page
    assert (
        f"{sum(parts)} parts (counted in the rubric cells `make course` writes), about {per_week} a "
        f"week over the {weeks} weeks. At an estimated {low} to {high} minutes a part, a class of 30 "
        f"takes about {hours[0]:g} to {hours[1]:g} hours a week ({per_week} parts × 30 students × "
        f"{low} to {high} minutes)" in page
    )


def test_the_term_states_the_weekly_home_load():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import term_plan

    load = term_plan.weekly_load()
    teaching = [m for w, m in load.items() if w < len(term_plan.WEEKS)]
    page = " ".join(PAGE.split())
    assert (
        f"{term_plan._minutes(min(teaching))} to {term_plan._minutes(max(teaching))} a week in weeks 1 "
        f"to {len(term_plan.WEEKS) - 1}, {sum(load.values()) / 60:g} hours in all" in page
    )
    assert term_plan.table() in PAGE


def test_the_page_states_the_peak_marking_load_by_week():
    """Lecturer review r4, problem 4: the average of 6 parts a week hid that the chapters of weeks 1 and
    2 carry about twice that; the page states the peak and the typical week (from the rubrics' parts of
    each week's chapters, term_plan.marking_load), and the term's table has a column of them."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import term_plan

    load = term_plan.marking_load(30)
    parts = load["parts"]
    assert (
        sum(parts.values()) == 75 and parts[1] == 11 and parts[6] == 11
    )  # the review's count, + 2 (lecturer review s17, M4: ch12 ex2, ch16 ex3), - 8 (lecturer review
    # s23, M2: predictions and checked values no longer parts, in chapters 1, 3, 5, 10 and 11), + 1 (s22,
    # M11: ch18 ex4)
    assert load["max"] == max(parts.values()) and load["typical"] < load["max"]
    weeks = " and ".join(str(w) for w in load["max_weeks"])
    marked = " and ".join(str(w + 2) for w in load["max_weeks"])
    page = " ".join(PAGE.split())
    assert (
        f"the chapters of weeks {weeks} have the most, {load['max']} parts each, which is "
        f"{load['hours_max'][0]:g} to {load['hours_max'][1]:g} hours for a class of 30, marked after "
        f"their deadlines in weeks {marked}; a typical week's chapters (the median) have "
        f"{load['typical']:g}, {load['hours_typical'][0]:g} to {load['hours_typical'][1]:g} hours"
        in page
    )
    assert "| Rubric parts to mark |" in PAGE


def test_the_term_table_gives_the_marking_minutes_per_student_and_how_they_were_estimated():
    """Course review s40, m5: the table listed rubric parts to mark but no marking time, for booking
    TA hours. Each week (each chapter with --order) gives the parts at GRADING_MINUTES_PER_PART, and
    the page says where the figure comes from."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import instructor_notes
    import term_plan

    low, high = instructor_notes.GRADING_MINUTES_PER_PART
    rows = term_plan.table(["05", "10", "12", "16"]).splitlines()
    assert rows[0].endswith("| Rubric parts to mark | Marking, per student |")
    for row in rows[2:6]:
        parts = int(row.split(" | ")[-2])
        assert row.endswith(f"| {parts} | {parts * low:g} to {parts * high:g} min |")
    assert rows[3].endswith("| 6 | 6 to 12 min |")  # chapter 10
    page = " ".join(PAGE.split())
    assert "*Marking, per student* is the week's rubric parts at 1 to 2 minutes a part" in page
    assert "How it was estimated: a lecturer timed a three-part written answer of chapter 2" in page


def test_the_setup_gives_make_courses_command_for_an_existing_environment():
    """Lecturer review s16, M6: `make course GRADED=1` depends on `make venv`, which creates .venv and
    pip-installs; a lecturer whose hub already holds the environment needs the command it runs, on a
    line of its own in the setup, the same as the Makefile's."""
    import subprocess

    made = subprocess.run(
        ["make", "-n", "course", "GRADED=1", "PY=python"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    command = " ".join(next(line for line in made.splitlines() if "make_course.py" in line).split())
    assert (
        command
        == "python tools/make_course.py --out course --predictions-at-collection --private-cases"
    )
    setup = PAGE.split("## Running the course with nbgrader", 1)[1].split(
        "**Graded-course facts**"
    )[0]
    assert f"\n{command}   # = make course GRADED=1\n" in setup


def test_the_page_says_a_notebook_put_in_by_hand_has_no_submission_time():
    """Lecturer review s16, S2: a notebook put in submitted/ by hand has no timestamp.txt, so it is
    never late; the page said the collection time was used. Where the page tells a teacher to put one
    there, it says it has no submission time and no late penalty, and the words the tools print."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import term_plan

    flat = " ".join(PAGE.split())
    for where in ("by hand (below):", "`python ../tools/grade_course.py <chapter>`, on."):
        after = flat.split(where, 1)[1][:400]
        assert "no submission time" in after and "no late penalty" in after, where
    assert "submission time unknown" in term_plan.untimed_warning("02_x", "grace")
    assert '"submission time unknown"' in flat
    assert "or without an exchange with the collection time" not in flat


def test_the_grading_time_is_stated_per_chapter_where_it_differs():
    """Lecturer review s23, M9: "a class of 40 is graded in about 2.5 minutes" was measured on
    chapters 2, 3 and 6; chapter 15's embed checks run the real model, 130 s for 8 students in the
    review: about 16 s a student, 11 minutes for 40, stated with where it was measured."""
    page = " ".join(PAGE.split())
    per_student = 130 / 8
    assert f"about {round(per_student)} s per student (130 s for 8 students, measured" in page
    assert f"so about {round(40 * per_student / 60)} minutes for a class of 40" in page
    assert "about 2.5 minutes in chapters 2, 3 and 6, about 11 in chapter 15" in page


def test_the_pages_count_of_written_questions_adds_up_to_the_rubric_parts():
    """Lecturer review s24, M4: *Points* said "of the 52 written answers, 31 ask one question, 14
    two, 5 three, one four and one five", 83 questions, where the term plan's table adds up 75 rubric
    parts. The sentence is generated (tools/teachers_page.py) from the same parts."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import term_plan

    page = " ".join(PAGE.split())
    said = re.search(r"of the (\d+) written answers, ([^)]*)\)", page)
    assert said, "the page's count of written questions"
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    counts = re.findall(r"(\d+|one) (?:asks? )?(one|two|three|four|five|six)", said.group(2))
    answers = sum(int(n) if n.isdigit() else 1 for n, _ in counts)
    questions = sum((int(n) if n.isdigit() else 1) * words[k] for n, k in counts)
    assert answers == int(said.group(1)), said.group(0)
    assert questions == sum(term_plan.marking_parts().values()), said.group(0)


def test_the_page_states_chapter_18s_grading_time():
    """Lecturer review s24, M7: chapter 18 took 110 s for 8 students and chapter 7 58 s; the page
    gave figures for chapters 2, 3, 6 and 15 only. Course review s27, M6: chapter 5, whose answer
    cells may hold experiments, was missing and much slower; chapter 18 measured again (its code
    181 s for a lecturer). The page's projections are its measurements' arithmetic."""
    page = " ".join(PAGE.split())
    story, per_student = 239, 3.1
    assert f"Chapter 18's code took {story} s once, then {per_student} s per student" in page
    assert f"so about {round((story + 40 * per_student) / 60)} minutes for a class of 40" in page
    story, per_student = 181, 260
    assert f"its code took {story} s, then {per_student} s per student" in page
    assert f"would take about {round((story + 40 * per_student) / 3600)} hours at that load" in page
    assert "about 6 in chapter 18, and up to hours in chapter 5" in page
    assert "Chapter 7 took 58 s for 8" in page


def test_the_page_warns_of_the_decks_that_teach_a_graded_answer():
    """Lecturer review s24, M5: chapter 7's slide *Why several heads* says exercise 1's part 2's
    point, chapter 18's *The backward pass, from one number per row* derives exercise 4; the page
    listed what --exclude-answers leaves out, and not these, which it keeps."""
    page = " ".join(PAGE.split())
    for chapter, title, exercise in (
        ("07", "Why several heads", "exercise 1's part 2"),
        ("18", "The backward pass, from one number per row", "exercise 4"),
        # lecturer review s34, m7: ALBERT-xxlarge saves memory, not time; exercise 2's written part
        ("16", "ALBERT: fewer parameters, not less compute", "exercise 2's graded written"),
        # lecturer review s39, m2: equal scores for equal m - n, exercise 1's "why do they agree?"
        (
            "17",
            "From the rotation of *Positional encoding* to RoPE",
            "why do the two scores agree?",
        ),
    ):
        notebook = next((ROOT / "notebooks").glob(f"{chapter}_*.ipynb")).read_text()
        assert f"## {title}" in notebook, (
            title
        )  # "##" or "###"  # the deck's slide: the chapter's section
        assert f"*{title.replace('*', '')}*" in page and exercise in page, title
    assert "Four decks teach what a graded answer says, and the flag keeps them" in page


def test_the_page_gives_grading_times_for_chapters_4_9_13_and_17():
    """Lecturer review s31, M4: the page gave grading times for chapters 2, 3, 5, 6, 7, 12, 15, 16
    and 18, not for 4, 9 and 13 (13 took 582 s for 6 students); the lecturer's times, said as theirs."""
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    section = page[page.index("## Grading a large class") :]
    for said in (
        "chapter 4 in 244 s",
        "chapter 9 in 329 s",
        "chapter 13 in 582 s",
        "chapter 17 in 160 s",
        "measured by another lecturer on a shared 2-core machine",
    ):
        assert said in section, said


def test_the_formgrader_keys_the_page_gives_are_nbgraders():
    """Lecturer review s31, m9: each submission page holds the whole chapter, the written answers at
    its end; the page gives the Formgrader's keys that move between score boxes and submissions, as
    nbgrader's formgrade.js binds them."""
    import nbgrader

    js = (
        Path(nbgrader.__file__).parent / "server_extensions/formgrader/static/js/formgrade.js"
    ).read_text()
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    for key, binding in (("`Tab`", "tab"), ("`Ctrl-.`", "control-."), ("`Ctrl-,`", "control-,")):
        assert key in page and f'"keybinding": "{binding}"' in js, key
    # the copy report's limit, said (lecturer review s31, m8): a literal counts as code
    assert "A literal counts as code: a worked experiment copied with one number" in page


def test_the_first_week_releases_before_it_rehearses_in_a_throwaway_course():
    """Lecturer review s33, M2: a fake student cannot fetch before the release, and one who submits in
    the real course stays in its gradebook and every export."""
    steps = dict(re.findall(r"^(\d+)\. \*\*([^*]+)\*\*", PAGE, re.M))
    release = next(int(n) for n, what in steps.items() if what.startswith("Release"))
    rehearse = next(int(n) for n, what in steps.items() if what.startswith("Rehearse"))
    assert release < rehearse, steps
    section = PAGE[PAGE.index("**Rehearse with fake students.**") :][:2000]
    assert section.index("release_assignment") < section.index("fetch_assignment")
    assert "--out /tmp/rehearsal" in section
    assert "nbgrader db student remove alice --force" in section


def test_the_first_week_sets_deadlines_in_the_courses_own_order():
    """Lecturer review s34, m1: step 2 and the checklist gave term_plan.py deadlines without --order,
    which a course taking its chapters out of the book's order needs (table has no --order)."""
    steps = PAGE[PAGE.index("2. **Set the deadlines**") : PAGE.index("3. **Give the students**")]
    assert "--order 16 12 01 17" in steps
    checklist = PAGE[PAGE.index("**Every week, the checklist**") :][:1500]
    assert "term_plan.py deadlines" in checklist and "--order" in checklist
    import subprocess
    import sys

    help_text = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "term_plan.py"), "deadlines", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--order" in help_text


def test_the_week_table_follows_a_courses_own_order():
    """Lecturer review s38, m5: `term_plan.py table --order 05 08 13 18` was refused, so a course in
    its own order computed each week's home work by hand. The table takes --order as deadlines does:
    one chapter a week, its class and home hours, the week's home work (half of this week's chapter
    and half of last week's), its rubric parts, and a last week in which the last chapter is due."""
    import subprocess
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import instructor_notes
    import term_plan

    printed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "term_plan.py"), "table", "--order", "05", "08"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    home = {c: instructor_notes.home_minutes(n)["total"] for c, n in [
        ("05", "05_attention_beyond_translation"), ("08", "08_positional_encoding")]}  # fmt: skip
    rows = printed.splitlines()[2:]
    assert len(rows) == 3, printed
    assert rows[0].startswith(
        "| 1 | `05_attention_beyond_translation` | 1 h | "
        f"{term_plan._minutes(home['05'])} | "
        f"{term_plan._minutes(15 * -(-home['05'] // 30))} | Monday of week 1, 09:00 "
        "| Sunday of week 2, 23:59 | "
    )
    both = 15 * -(-(home["05"] + home["08"]) // 30)
    assert rows[1].startswith(
        f"| 2 | `08_positional_encoding` | 1 h | {term_plan._minutes(home['08'])} "
        f"| {term_plan._minutes(both)} |"
    )
    assert rows[2].startswith("| 3 | review, questions; chapter 8 due | | | ")
    assert term_plan.table(["05", "08"]) == printed
    refused = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "term_plan.py"), "table", "--order", "05", "99"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "'99' is not a chapter of the book" in refused.stderr
    steps = " ".join(
        PAGE[
            PAGE.index("2. **Set the deadlines**") : PAGE.index("3. **Give the students**")
        ].split()
    )
    assert "`python ../tools/term_plan.py table --order 16 12 01 17` then prints" in steps
    assert "book's order only" not in PAGE


def test_the_page_says_what_the_grader_does_with_0_point_checks():
    """Lecturer review s38, m6: chapter 5's 0-point experiment cost 75 to 190 s of sandbox time a
    student. The grader keeps running 0-point checks (their verdict is the feedback on a prediction,
    the only check of it in a course with --predictions-at-collection, and a lower limit would fail
    a right but slow experiment); the page says so, beside the cost."""
    page = " ".join(PAGE.split())
    assert (
        "The grader runs a 0-point check (a prediction, a measurement) as it runs the others, within"
        " the same limits, and never skips one" in page
    )
    assert "the only check of it" in page and "75 to 190 s a student" in page


def test_the_page_collects_late_work_with_update():
    """Lecturer review s39, M1: a plain ``nbgrader collect`` keeps the copy it already collected
    ("Submission already exists, use --update to update"), so the page's late work and the late policy
    never applied. First graded week step 6, the weekly checklist, the grading cycle and the late
    policy say ``--update``."""
    page = " ".join(PAGE.split())
    step6 = page.split("6. **After the deadline, collect**", 1)[1].split("7. **Grade the code**")[0]
    assert "nbgrader collect --update 02_attention_as_soft_lookup" in step6
    checklist = PAGE.split("**Every week, the checklist**", 1)[1].split("```", 2)[1]
    assert "\nnbgrader collect --update 02_attention_as_soft_lookup\n" in checklist
    late = page.split("**The late policy.**", 1)[1]
    assert "`nbgrader collect --update` keeps the last submission" in late
    assert page.count("nbgrader collect --update") >= 4


def test_the_worked_solutions_decision_per_student_and_from_make():
    """Lecturer review s39, m4: under --worked-solutions flag, the page did not say how to act on a
    per-student decision, and make course had no variable for the setting."""
    page = " ".join(PAGE.split())
    assert "make course GRADED=1 WORKED_SOLUTIONS=zero" in page
    assert "into the manual score of the exercise's test cell" in page
    makefile = (ROOT / "Makefile").read_text()
    assert "$(if $(WORKED_SOLUTIONS),--worked-solutions $(WORKED_SOLUTIONS))" in makefile
