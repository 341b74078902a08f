"""Chapter 11's grading material (grading/__init__.py): the seed of the story case of exercise 2,
`interpolated_perplexity` (its sentences; the reference is the checker's own)."""

SEEDS = {"interpolated_perplexity": 111}
REFERENCES: dict = {}
