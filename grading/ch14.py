"""Chapter 14's grading material (grading/__init__.py): the seed of the grader's cases of
`mask_for_mlm` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"mask_for_mlm": 141}
REFERENCES: dict = {}
