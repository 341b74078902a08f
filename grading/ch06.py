"""Chapter 6's grading material (grading/__init__.py): the seed of the grader's cases of exercise 3
(its reference is the library's causal attention, which the chapter teaches)."""

SEEDS = {"incremental": 6}
REFERENCES: dict = {}
