"""Chapter 5's grading material (grading/__init__.py): the seed of the grader's cases of
`word_importance` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"word_importance": 51}
REFERENCES: dict = {}
