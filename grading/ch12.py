"""Chapter 12's grading material (grading/__init__.py): the seed of the grader's cases of
`bilm_loss` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"bilm_loss": 121}
REFERENCES: dict = {}
