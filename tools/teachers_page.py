"""The teachers' page's computed numbers (issue 36): book/teachers.md states the checkers' named
mistakes, the exercise and home-time estimates of tools/instructor_notes.py and the week table of
tools/term_plan.py. A chapter's prose or exercises change them (the reading estimate counts the
chapter's words), and tests/test_instructor_notes.py and tests/test_course_facts.py hold the page to
them. This writes them into the page again.

    python tools/teachers_page.py          # rewrite book/teachers.md's computed numbers
    python tools/teachers_page.py --check  # exit 1 if the page is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "teachers.md"
sys.path.insert(0, str(ROOT / "tools"))
import instructor_notes as notes  # noqa: E402
import make_course  # noqa: E402
import term_plan  # noqa: E402


def numbers() -> dict:
    """What the page states, computed: named mistakes, exercise minutes, home minutes per chapter."""
    chapters = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    found = {c: notes.exercises(c) for c in chapters}
    minutes = {c[:2]: sum(notes.estimate_minutes(e)[0] for e in ex) for c, ex in found.items()}
    return {
        "named": sum(len(e.mistakes) for ex in found.values() for e in ex),
        "minutes": minutes,
        "home": {c[:2]: notes.home_minutes(c) for c in chapters},
        "course": {c[:2]: course_points(c) for c in chapters},
        "written": [p for c in chapters for p in notes.rubric_parts(c)],
    }


def course_points(chapter: str) -> tuple[int, float, float]:
    """A chapter's exercises, its points in the practice course and in a graded course (``make
    course GRADED=1``: ``--predictions-at-collection``), as tools/make_course.py counts them: the
    points follow ``POINTS`` and whatever else make_course changes (lecturer review s16, M1: the
    table showed only the practice course's points)."""
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    totals = []
    for graded in (False, True):
        exercises = make_course.course_notebook(nb, chapter, predictions_at_collection=graded)[1]
        totals.append(sum(e["points"] for e in exercises))
    return len(exercises), totals[0], totals[1]


def _span(values: dict, show) -> tuple[str, str]:
    low, high = min(values, key=values.get), max(values, key=values.get)
    return (
        f"{show(values[low])} (chapter {int(low)})",
        f"{show(values[high])} (chapter {int(high)})",
    )


# Why regular expressions: the page is prose written by hand, and its numbers sit inside
# sentences that Markdown lets wrap at any space. Each function below finds one sentence (or
# table) by the words around its numbers, with ``(\s+)`` between them, and writes the same words
# and the same whitespace back with the numbers replaced: the page's line breaks stay put.


def rewrite(raw: str, n: dict) -> str:
    """``raw`` with every computed number replaced by its value in ``n`` (``numbers()``)."""
    raw = _named_mistakes(raw, n["named"])
    raw = _exercise_span(raw, n["minutes"])
    raw = _reading_constants(raw, n["home"])
    raw = _home_span(raw, n["home"])
    raw = _home_cells(raw, n["home"])
    raw = _exercise_cells(raw, n["course"])
    raw = _timed_chapters(raw, n["home"])
    raw = _weekly_load(raw)
    raw = _written_answers(raw, n["written"])
    return _week_table(raw)


def written_sentence(parts: list[int]) -> str:
    """ "of the N written answers, A ask one question, B two, ... and one four": how many questions
    each written answer's rubric has (tools/instructor_notes.py ``rubric_parts``, the parts the term
    plan's table adds up; lecturer review s24, M4: the page's 31/14/5/1/1 added up to 83, not 75)."""
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    counts = [(k, parts.count(k)) for k in sorted(set(parts))]
    said = [f"{'one' if n == 1 else n} {words.get(k, k)}" for k, n in counts]
    k, n = counts[0]
    said[0] = f"{'one' if n == 1 else n} ask{'s' if n == 1 else ''} {words.get(k, k)} question"
    said[0] += "" if k == 1 else "s"
    listed = ", ".join(said[:-1]) + f" and {said[-1]}" if len(said) > 1 else said[0]
    return f"of the {len(parts)} written answers, {listed}"


def _written_answers(raw: str, parts: list[int]) -> str:
    """The sentence "(of the N written answers, A ask one question, B two, ...)" on *Points*."""
    return re.sub(
        r"of(\s+)the(\s+)\d+(\s+)written(\s+)answers,[^)]*",
        lambda m: written_sentence(parts),
        raw,
    )


def _named_mistakes(raw: str, named: int) -> str:
    """The sentence "checkers name N mistakes": the checkers' named mistakes, all chapters."""
    return re.sub(r"checkers name \d+ mistakes", f"checkers name {named} mistakes", raw)


def _exercise_span(raw: str, minutes: dict) -> str:
    """The sentence "A (chapter a) to B (chapter b) minutes, H hours": the exercises' shortest
    and longest chapter, and their total."""
    low, high = _span(minutes, lambda m: f"{m:g}")
    ex_hours = f"{sum(minutes.values()) / 60:.1f}"
    return re.sub(
        r"\d+ \(chapter\s+\d+\)\s+to\s+\d+\s+\(chapter\s+\d+\)(\s+)minutes,(\s+)[\d.]+ hours",
        lambda m: f"{low} to {high}{m.group(1)}minutes,{m.group(2)}{ex_hours} hours",
        raw,
    )


def _reading_constants(raw: str, home: dict) -> str:
    """The reading estimate's constants (words a minute, minutes a code cell) where the page states
    them: the first table's note, and the notes' section with the total reading hours."""
    wpm, cell = notes.MINUTES["chapter_words_per_minute"], notes.MINUTES["per_chapter_code_cell"]
    per_cell = "a minute" if cell == 1 else f"{cell:g} minutes"
    reading = sum(h["reading"] for h in home.values()) / 60
    raw = re.sub(
        r"prose at(\s+)\d+(\s+)words(\s+)a(\s+)minute(\s+)and(\s+)(?:a|[\d.]+)(\s+)minutes?(\s+)for",
        lambda m: (
            f"prose at{m.group(1)}{wpm}{m.group(2)}words{m.group(3)}a{m.group(4)}minute{m.group(5)}"
            f"and{m.group(6)}{per_cell.split()[0]}{m.group(7)}{per_cell.split()[1]}{m.group(8)}for"
        ),
        raw,
    )
    return re.sub(
        r"prose at(\s+)\d+(\s+)words(\s+)a(\s+)minute,(\s+)[\d.]+(\s+)minutes?(\s+)a(\s+)code(\s+)"
        r"cell:(\s+)[\d.]+(\s+)hours",
        lambda m: (
            f"prose at{m.group(1)}{wpm}{m.group(2)}words{m.group(3)}a{m.group(4)}minute,{m.group(5)}"
            f"{cell:g}{m.group(6)}minute{'' if cell == 1 else 's'}{m.group(7)}a{m.group(8)}code"
            f"{m.group(9)}cell:{m.group(10)}{reading:.1f}{m.group(11)}hours"
        ),
        raw,
    )


def _home_span(raw: str, home: dict) -> str:
    """The sentence "home time of the table at the top of this page: A (chapter a) to B
    (chapter b), H hours": the shortest and longest home time, and their total."""
    hm = term_plan._minutes
    total = {c: h["total"] for c, h in home.items()}
    low, high = _span(total, hm)
    return re.sub(
        r"home time of the table at the top of this page:(\s+)[^,]+?\(chapter\s+\d+\)\s+to\s+[^,]+?"
        r"\(chapter\s+\d+\),(\s+)[\d.]+ hours",
        lambda m: (
            f"home time of the table at the top of this page:{m.group(1)}{low} to {high},"
            f"{m.group(2)}{sum(total.values()) / 60:.1f} hours"
        ),
        raw,
    )


def _home_cells(raw: str, home: dict) -> str:
    """The table at the top: each chapter's row ends in its home time, "T (reading + exercises
    min)"; the cells before it are kept."""
    hm = term_plan._minutes

    def home_cell(m: re.Match) -> str:
        h = home[f"{int(m.group(1)):02d}"]
        return f"{m.group(0)[: m.start(2) - m.start(0)]}{hm(h['total'])} ({h['reading']} + {h['exercises']} min) |"

    return re.sub(
        r"^\| (\d+) .*?\| \d+ min \| ([^|(]+) \(\d+ \+ \d+ min\) \|", home_cell, raw, flags=re.M
    )


def _exercise_cells(raw: str, course: dict) -> str:
    """The table at the top: each chapter's row ends in its exercises and points, "E exercises, P
    points | G points", P in the practice course and G in a graded course."""

    def cells(m: re.Match) -> str:
        n, practice, graded = course[f"{int(m.group(2)):02d}"]
        return f"{m.group(1)}| {n} exercises, {practice:g} points | {graded:g} points |"

    return re.sub(
        r"^(\| (\d+) .*?\| \d+ min \| [^|]+ )\| \d+ exercises, \d+ points \|(?: \d+ points \|)?$",
        cells,
        raw,
        flags=re.M,
    )


def _timed_chapters(raw: str, home: dict) -> str:
    """The sentence "they now give A (chapter 3) and B (chapter 13)": the two chapters a lecturer
    timed (5 to 5.5 and 6 to 6.5 hours), and what the constants give them."""
    hm = term_plan._minutes
    return re.sub(
        r"they(\s+)now(\s+)give(\s+)[^()]+?(\s+)\(chapter(\s+)3\)(\s+)and(\s+)[^()]+?(\s+)\(chapter(\s+)13\)",
        lambda m: (
            f"they{m.group(1)}now{m.group(2)}give{m.group(3)}{hm(home['03']['total'])}{m.group(4)}"
            f"(chapter{m.group(5)}3){m.group(6)}and{m.group(7)}{hm(home['13']['total'])}{m.group(8)}"
            f"(chapter{m.group(9)}13)"
        ),
        raw,
    )


def _weekly_load(raw: str) -> str:
    """The sentence "A to B a week in weeks 1 to W, H hours in all": the term's weekly home load
    (tools/term_plan.py ``weekly_load``), stated before its table."""
    hm = term_plan._minutes
    load = term_plan.weekly_load()
    teaching = [m for w, m in load.items() if w < len(term_plan.WEEKS)]
    return re.sub(
        r"\d+ h(?: \d\d)?(\s+)to(\s+)\d+ h(?: \d\d)?(\s+)a(\s+)week(\s+)in(\s+)weeks(\s+)1(\s+)to(\s+)\d+,"
        r"(\s+)[\d.]+(\s+)hours(\s+)in(\s+)all",
        lambda m: (
            f"{hm(min(teaching))}{m.group(1)}to{m.group(2)}{hm(max(teaching))}{m.group(3)}a"
            f"{m.group(4)}week{m.group(5)}in{m.group(6)}weeks{m.group(7)}1{m.group(8)}to"
            f"{m.group(9)}{len(term_plan.WEEKS) - 1},{m.group(10)}{sum(load.values()) / 60:g}"
            f"{m.group(11)}hours{m.group(12)}in{m.group(13)}all"
        ),
        raw,
    )


def _week_table(raw: str) -> str:
    """The week table (tools/term_plan.py ``table``), written whole in place of the page's."""
    lines = raw.split("\n")
    start = next(
        i for i, line in enumerate(lines) if line.startswith("| Week | Chapters (assignments)")
    )
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines[start:end] = term_plan.table().strip("\n").split("\n")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = parser.parse_args()
    raw = PAGE.read_text()
    new = rewrite(raw, numbers())
    if args.check:
        if new != raw:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python tools/teachers_page.py")
            return 1
        return 0
    if new != raw:
        PAGE.write_text(new)
        print(f"rewrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
