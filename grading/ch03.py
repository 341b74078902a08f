"""Chapter 3's grading material (grading/__init__.py): the seeds of the grader's cases (the references
are the chapter's own formulas and the library's masked_softmax, which the chapter teaches)."""

SEEDS = {"projection": 11, "masked_softmax": 5}
REFERENCES: dict = {}
