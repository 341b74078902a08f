"""Chapter 1's grading material (grading/__init__.py): the seed of the grader's case of exercise 3,
`loss_by_length` (its sentences and its model's weights; the reference is the checker's own)."""

SEEDS = {"loss_by_length": 211}
REFERENCES: dict = {}
