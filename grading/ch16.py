"""Chapter 16's grading material (grading/__init__.py): the seed of the grader's cases of
`discriminator_loss` (its reference is the checker's own, which gives no solution away)."""

SEEDS = {"discriminator_loss": 161}
REFERENCES: dict = {}
