"""Chapter 7's grading material (grading/__init__.py): the seed of the grader's cases of
`separate_heads_from` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"separate_heads_from": 71}
REFERENCES: dict = {}
