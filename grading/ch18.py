"""Chapter 18's grading material (grading/__init__.py): the seeds of the grader's cases of its four
implement exercises (their references are the checker's own, which give no solution away)."""

SEEDS = {"running_max_and_sum": 181, "slopes_for": 182, "tile_mask": 183, "tile_backward": 184}
REFERENCES: dict = {}
