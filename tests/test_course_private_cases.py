"""A course's private cases against the checkers' known mistakes (lecturer review s33, S1): every
checker that draws its cases from a seed and names its known mistakes lists them in
``PRIVATE_CASE_MISTAKES``; on the cases of any seed, none of them passes, and
``tools/make_course.py --private-cases`` draws a seed again if one did."""

from __future__ import annotations

import importlib
import random
import re
import sys
from pathlib import Path

import pytest

from lib.exercises import ExerciseFailed, mistakes_passing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

MODULES = sorted(p.stem for p in (ROOT / "lib" / "exercises").glob("ch[0-9][0-9].py"))
# lists of known mistakes that are not about a seed's cases: predicted numbers, checked as typed
PREDICTIONS = {"ch11": {"_SHARE_MISTAKES"}, "ch14": {"SHARE_MISTAKES"}, "ch16": {"MISTAKES"}}
# seeds a test draws per checker; chapter 15's cases run a real model (about 13 s a seed)
DRAWS = {"ch15": 2, "ch10": 100}


def _checks() -> list[tuple[str, str]]:
    return [
        (name, seed)
        for name in MODULES
        for seed in getattr(
            importlib.import_module(f"lib.exercises.{name}"), "PRIVATE_CASE_MISTAKES", {}
        )
    ]


def test_every_checker_with_seeded_cases_and_named_mistakes_is_listed():
    """A module with seeds and a list of known mistakes (or a function that makes them) lists the
    checks of its seeds' cases; no other module needs one."""
    for name in MODULES:
        module = importlib.import_module(f"lib.exercises.{name}")
        source = Path(module.__file__).read_text()
        named = set(re.findall(r"^(?:def )?(_?[A-Z_]*MISTAKES|_\w*mistakes)\b", source, re.M))
        named -= PREDICTIONS.get(name, set())
        listed = getattr(module, "PRIVATE_CASE_MISTAKES", {})
        if named and getattr(module, "SEEDS", None):
            assert listed, f"{name}: {sorted(named)} but no PRIVATE_CASE_MISTAKES"
        assert set(listed) <= set(module.SEEDS), name


@pytest.mark.parametrize("name, seed", _checks(), ids=lambda v: str(v))
def test_no_known_mistake_passes_on_any_seeds_cases(name, seed):
    """The practice seed, the book's grading seed and many drawn seeds: every known mistake fails."""
    module = importlib.import_module(f"lib.exercises.{name}")
    grading: dict = {}
    exec((ROOT / "grading" / f"{name}.py").read_text(), grading)
    g = random.Random(f"{name}-{seed}")
    seeds = [module.SEEDS[seed], grading["SEEDS"][seed]]
    seeds += [1 + g.randrange(2**31 - 1) for _ in range(DRAWS.get(name, 12))]
    for value in seeds:
        assert mistakes_passing(module, {seed: value})[seed] == [], (name, seed, value)
    assert module.SEEDS[seed] == seeds[0]  # the module's own seeds are back


def test_carols_replay_fails_on_the_lecturers_private_cases():
    """Lecturer review s33, S1: the first occurrence of each pair only got 2/2 on the course's seed."""
    from lib.exercises import ch10

    def replay(word, merges):  # carol's
        syms = list(word) + ["</w>"]
        for a, b in merges:
            for i in range(len(syms) - 1):
                if syms[i] == a and syms[i + 1] == b:
                    syms[i : i + 2] = [a + b]
                    break
        return syms

    saved = dict(ch10.SEEDS)
    try:
        ch10.SEEDS["replay"] = 213142149
        with pytest.raises(ExerciseFailed, match="only the first occurrence"):
            ch10.check_replay(replay)
    finally:
        ch10.SEEDS.update(saved)
    assert ch10.SEEDS == saved


def test_mistakes_passing_names_a_bad_seed():
    from lib.exercises import ch10

    with pytest.raises(ValueError, match="no seed"):
        mistakes_passing(ch10, {"repaly": 3})
    with pytest.raises(TypeError, match="seeds"):
        mistakes_passing(ch10, [("replay", 3)])


def test_make_course_draws_a_seed_again_while_a_known_mistake_passes(monkeypatch, capsys):
    from lib.exercises import ch10

    monkeypatch.setattr(
        ch10,
        "PRIVATE_CASE_MISTAKES",
        {"replay": lambda: ["first_only"] if ch10.SEEDS["replay"] < 10 else []},
    )
    draws = iter([3, 4, 50, 60])
    assert make_course.checked_seeds("ch10", {"replay": 5}, {}, lambda: next(draws)) == {
        "replay": 50
    }
    with pytest.raises(SystemExit, match="first_only"):
        make_course.checked_seeds("ch10", {"replay": 5}, {}, lambda: 7)
    # a seed kept from an earlier run stays, with a warning
    assert make_course.checked_seeds("ch10", {"replay": 5}, {"replay": 5}) == {"replay": 5}
    assert "first_only" in capsys.readouterr().out
