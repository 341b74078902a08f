"""Chapter 13's grading material (grading/__init__.py): the seed of the grader's cases of
`top_p_filter` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"top_p_filter": 131}
REFERENCES: dict = {}
