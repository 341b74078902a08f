"""The grading material of the course's checkers (issue 36): each chapter's seeds of the grader's cases
and its reference solutions, kept out of the package that students install.

The book's package, ``lib`` (pyproject.toml ships ``lib`` and ``lib.*`` only: the wheel, the Colab
cell's install), holds the checkers with their **practice** cases and references that give no solution
away: a student's notebook checks their answer on those. This folder holds what the grader uses
instead: ``chNN.py`` defines

- ``SEEDS``: {exercise: seed} of the cases the grader draws (the practice ones draw from other seeds;
  where the practice cases are a list written out, such as chapter 18's head counts, the practice
  seed is 0, which stands for that list, and any other seed draws cases of the same kinds);
- ``REFERENCES``: {name: function}: the reference solutions that replace the practice ones of
  ``lib.exercises.chNN`` (the practice ``_sharpened`` computes the statement's formula in exact
  rational arithmetic; the grader's is the floating-point solution).

``tools/make_course.py`` copies the modules of the course's chapters into ``course/grading/``, which
the students' sandbox may not read; ``tools/grade_course.py`` loads them from there and puts them into
the checker modules of its own process before it grades (``install_grading``). A lecturer who wants
cases that no one outside the course can compute changes the seeds there
(``make_course.py --private-cases`` draws new ones).
"""
