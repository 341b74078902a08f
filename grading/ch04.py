"""Chapter 4's grading material (grading/__init__.py): the seed of the grader's cases of
`local_m_weights` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"local_m_weights": 41}
REFERENCES: dict = {}
