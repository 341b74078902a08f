"""Chapter 9's grading material (grading/__init__.py): the seed of the grader's cases of
`pre_ln_layer` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"pre_ln_layer": 91}
REFERENCES: dict = {}
