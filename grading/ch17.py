"""Chapter 17's grading material (grading/__init__.py): the seeds of the grader's cases of exercises 1
to 3 (their references are the checker's float64 formulas, which give no solution away that the
chapter does not teach)."""

SEEDS = {"rope_halves": 71, "expand_kv": 710, "ffn_sublayer": 7100}
REFERENCES: dict = {}
