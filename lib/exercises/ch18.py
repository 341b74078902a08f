"""Checkers for the exercises of the chapter *Attention at scale*.

- :func:`check_running_max_and_sum`: exercise 1 (implement): the online softmax's running maximum and
  rescaled running sum over blocks (Milakov and Gimelshein 2018), as ``lib.flash.online_softmax``,
  read in one pass over blocks of the given size (:class:`_Scores` watches the reads).
- :func:`check_alibi_slopes`: exercise 2 (implement): ALiBi's slopes for any number of heads, by the
  rule of Press et al.'s released code, as ``lib.alibi.alibi_slopes``.
- :func:`check_tile_mask`: exercise 3 (implement): the causal mask of one tile of scores, as
  ``lib.flash``'s tiles build it from positions.
- :func:`check_tile_backward`: exercise 4 (implement): one tile's share of dQ, dK and dV, from the
  weights recomputed with the saved log-sum-exp, as ``lib.flash.FlashAttention.backward`` adds it.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np
import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    leaves,
    passing_everywhere,
    plain,
    refusing,
)

__all__ = [
    "check_running_max_and_sum",
    "check_alibi_slopes",
    "check_tile_mask",
    "check_tile_backward",
]


# --- exercise 1: the running maximum and sum -------------------------------------------------------------


def running_reference(x: Tensor, block: int, *, mistake: str | None = None) -> tuple[float, float]:
    """(m, l) after reading x [N] in blocks of ``block``: m = max x, l = sum exp(x - m), in float64,
    block by block as the online softmax does. ``mistake``: "no rescale" (the old sum is not
    multiplied by exp(m_old - m_new)); "rescaled upwards" (multiplied by exp(m_new - m_old)); "block
    maximum" (each block's terms taken against the block's own maximum, the sum never rescaled)."""
    x = x.detach().double()
    m, total = -math.inf, 0.0
    for start in range(0, x.shape[-1], block):
        x_b = x[start : start + block]
        m_new = max(m, x_b.max().item())
        if mistake == "block maximum":
            total += torch.exp(x_b - x_b.max()).sum().item()
        elif mistake == "no rescale":
            total += torch.exp(x_b - m_new).sum().item()
        elif mistake == "rescaled upwards":
            factor = 0.0 if m == -math.inf else math.exp(m_new - m)
            total = total * factor + torch.exp(x_b - m_new).sum().item()
        else:
            total = total * math.exp(m - m_new) + torch.exp(x_b - m_new).sum().item()
        m = m_new
    return m, total


# The seeds of the implement exercises' cases: practice values here; a course's grader sets its own
# (grading/ch18.py of the repository, which the package does not ship: lib/exercises/__init__.py).
# Seed 0 of slopes_for and tile_mask is the practice lists _SLOPE_CASES and _TILE_CASES as they are;
# another seed draws head counts and tiles of the same kinds from it (_slope_cases, _tile_cases).
# The seed of tile_backward draws the queries, keys, values and dO of its cases (their sizes are fixed).
SEEDS = {"running_max_and_sum": 18, "slopes_for": 0, "tile_mask": 0, "tile_backward": 4}


def _running_cases() -> list[tuple[str, Tensor, int]]:
    g = torch.Generator().manual_seed(SEEDS["running_max_and_sum"])
    return [
        ("x = [1, 3, 2, 5, 0], block 2", torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0]), 2),
        ("12 scores that rise, block 3", torch.arange(12.0) * 0.7, 3),
        ("10 random scores, block 4", 2 * torch.randn(10, generator=g), 4),
        ("scores up to 1000, block 2", torch.tensor([0.0, 10.0, 300.0, 299.0, 1000.0, 998.0]), 2),
        ("negative scores, block 2", torch.tensor([-3.0, -2.0, -5.0]), 2),
        ("scores down to -4e9, block 2", torch.tensor([-3e9, -2e9, -2e9, -4e9]), 2),
    ]


_RUNNING_MISTAKES = [
    (
        "no rescale",
        "your sum keeps the old terms as they were: when a block brings a larger maximum, the terms already summed are still exp(x_j - m_old), relative to the old maximum, while the block's new terms are relative to the new one.",
    ),
    (
        "rescaled upwards",
        "you multiplied the old sum by exp(m_new - m_old), which is >= 1: when the maximum rises, should each old term exp(x_j - m_old) grow or shrink?",
    ),
    (
        "block maximum",
        "each block's terms are taken against that block's own maximum: all terms of the sum must be taken against the same, running, maximum m (rescale the old sum when m grows).",
    ),
]


class _Reads:
    """The positions of x that each operation of the reader's function read, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[int]]] = []  # (operation, positions read)
        self.active = False  # only while the reader's function runs (not the checker's own reads)


# operations that read no score: sizes, dtypes, new tensors of the same kind
_NO_READ = {"__len__", "size", "dim", "ndimension", "numel", "nelement", "stride", "element_size",
            "is_floating_point", "is_contiguous", "storage_offset", "get_device", "__repr__",
            "__format__", "__str__", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
            "zeros_like", "ones_like", "empty_like", "full_like"}  # fmt: skip
# operations that make a tensor of the same scores, in another dtype or a copy
_SAME_SCORES = {"to", "float", "double", "half", "bfloat16", "type", "cpu", "clone", "detach",
                "contiguous", "requires_grad_", "data"}  # fmt: skip
# operations that pick or arrange scores without reading them (slices, splits, reshapes)
_ARRANGE = {"__getitem__", "split", "split_with_sizes", "chunk", "tensor_split", "narrow", "view",
            "reshape", "flatten", "unsqueeze", "squeeze", "view_as", "reshape_as", "expand",
            "expand_as", "unfold", "flip", "roll", "permute", "transpose", "movedim", "t", "T",
            "mT", "cat", "concat", "concatenate", "stack", "index_select", "take"}  # fmt: skip


class _Scores(Tensor):
    """The scores handed to the reader's ``running_max_and_sum``: a tensor that notes which of its
    positions every operation reads (a slice or a split only picks them; ``chunk.max()``,
    ``chunk - m``, ``x.tolist()`` or a loop over a tensor read them). The checker tells from these
    notes whether x was read in one pass, block by block, in blocks of ``block``."""

    _positions: Tensor  # the position in x of each score this tensor holds
    _reads: _Reads

    @staticmethod
    def of(data: Tensor, positions: Tensor, reads: _Reads) -> _Scores:
        scores = data.as_subclass(_Scores)
        scores._positions, scores._reads = positions, reads
        return scores

    # The course's grader runs the reader's function in another process, on a copy of the scores:
    # the reads noted there come back to these scores as data (tools/sandbox.py's ``_state_of``).
    def __sandbox_state__(self) -> list[list]:
        return [[name, sorted(read)] for name, read in self._reads.events]

    def __sandbox_restore__(self, events: list[list]) -> None:
        self._reads.events[:] = [(str(name), frozenset(read)) for name, read in events]

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        prop = name == "__get__"  # a property: x.shape, x.dtype, x.T ...
        if prop:
            name = getattr(getattr(func, "__self__", None), "__name__", name)
        tracked = [a for a in leaves((args, kwargs)) if isinstance(a, _Scores)]
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
            if not tracked or name in _NO_READ or prop and name not in _SAME_SCORES | _ARRANGE:
                return result
            reads = tracked[0]._reads
            if name in _SAME_SCORES:
                return _track(result, tracked[0]._positions, reads)
            if name in _ARRANGE:

                def positions(a):
                    return a._positions if isinstance(a, _Scores) else a

                try:  # the same picking, applied to the positions
                    where = func(*_swap(args, positions), **_swap(kwargs, positions))
                    return _track(result, where, reads)
                except Exception:  # an arrangement the positions cannot follow: a read
                    pass
            if reads.active:  # any other operation reads the values of its tracked arguments
                read = frozenset(p for a in tracked for p in a._positions.flatten().tolist())
                reads.events.append((name, read))
            return result


class _Copies(TorchFunctionMode):
    """While the reader's function runs: a copy of the scores made by a constructor,
    ``torch.tensor(x)``, ``torch.as_tensor(x, dtype=...)``, ``torch.asarray(x)`` or
    ``x.new_tensor(x)``, holds the same scores, as ``x.double()`` does (a constructor reaches no
    ``_Scores.__torch_function__``, only a mode)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        data = args[1:2] if name == "new_tensor" else args[:1]
        data = data or [kwargs.get("data", kwargs.get("obj"))]
        if name in {"tensor", "as_tensor", "asarray", "new_tensor"} and isinstance(
            data[0], _Scores
        ):
            return _track(result, data[0]._positions, data[0]._reads)
        return result


def _swap(value, f):
    if isinstance(value, (list, tuple)):
        return type(value)(_swap(v, f) for v in value)
    if isinstance(value, dict):
        return {k: _swap(v, f) for k, v in value.items()}
    return f(value)


def _track(result, positions, reads):
    """The tensors of ``result`` (one, or a tuple or list of them) as _Scores at ``positions``."""
    if isinstance(result, Tensor) and isinstance(positions, Tensor):
        return _Scores.of(result, positions.expand_as(result), reads)
    if isinstance(result, (list, tuple)):
        return type(result)(_track(r, p, reads) for r, p in zip(result, positions))
    return result


def _scores(first: int, last: int) -> str:
    return f"score {first}" if first == last else f"scores {first} to {last}"


# operations that turn the whole tensor into other numbers at once (NumPy, Python)
_CONVERT = {"numpy", "tolist", "__array__"}
# a loop over the tensor itself (`for v in x`), which hands out its scores one by one
_ONE_BY_ONE = {"unbind", "__iter__"}


def _reading_problem(events: list[tuple[str, frozenset[int]]], n: int, block: int) -> str | None:
    """What is wrong with how the reader's function read x [n], from the positions each of its
    operations read: None for one pass, block after block (in any order: the update does not depend
    on it), each block read as one tensor and never again once another was read."""
    current, left, whole = None, set(), set()  # the block being read, those read before it
    for name, event in events:
        blocks = sorted({p // block for p in event})
        if not blocks:
            continue
        if len(event) == n and len(blocks) > 1 and name in _CONVERT:
            how = {"numpy": "x.numpy()", "tolist": "x.tolist()"}
            return f"your function converts all {n} scores at once ({how.get(name, 'np.asarray(x)')}) and reads the blocks from the copy: that reads x whole, which the online softmax never does (it never holds more than a block). Slice the tensor itself, x[start:start + block], one block after the other, and convert each block if you want NumPy or Python numbers."
        if len(event) == n and len(blocks) > 1 and name in _ONE_BY_ONE:
            return "your function loops over x score by score (`for v in x`): one pass, but in blocks of 1, not of `block`; the online softmax takes a whole block at a time, as FlashAttention takes a tile. Loop over the starts instead, range(0, len(x), block), and take each block as one slice, x[start:start + block]."
        if len(event) == n and len(blocks) > 1:
            return f"one operation of your function reads all {n} scores at once (such as `x.max()`, `x - m`, `x.tolist()` or a loop over x): that is the softmax of two passes over the whole row, or blocks of your own size. Read x[start:start + block], one block after the other, and keep only the running maximum and sum between blocks."
        if len(blocks) > 1:
            return f"one operation of your function reads scores {min(event)} to {max(event)} together, which lie in different blocks of {block}: read the blocks of `block` scores the exercise gives, x[start:start + block], not blocks of another size."
        if blocks[0] in left:  # any order of the blocks is exact; reading one twice is not one pass
            return f"your function reads block {blocks[0]} (scores {blocks[0] * block} to {min(n, (blocks[0] + 1) * block) - 1}) again after block {current}: that is a second pass over x. The online softmax reads each block once: when a block brings a larger maximum, it rescales the sum so far instead of going back."
        if blocks[0] != current and current is not None:
            left.add(current)
        current = blocks[0]
        if len(event) == min(n, (current + 1) * block) - current * block:
            whole.add(current)
    missing = [b for b in range(math.ceil(n / block)) if b not in whole]
    if missing and not any(p // block >= missing[0] for _, event in events for p in event):
        b = missing[0]
        return f"your function reads {_scores(b * block, n - 1)} from a copy of x that the checker cannot follow (such as torch.Tensor(x)), not from x itself. Slice x itself, x[start:start + block], or copy it in a way the checker follows, such as x.double() or torch.tensor(x)."
    if missing:
        b = missing[0]
        return f"your function never reads block {b} (scores {b * block} to {min(n, (b + 1) * block) - 1}) as one tensor: it reads the scores one by one or in pieces smaller than `block`. Take each block as one slice, x[start:start + block], and work from the slice (its maximum and its sum of exponentials, or its numbers with .tolist())."
    return None


def _observed_run(running_max_and_sum: Any, x: Tensor, block: int, case: str):
    """The reader's (m, l) on x, as two numbers, and the reads it made of x (``_Reads``)."""
    reads = _Reads()
    scores = _Scores.of(x, torch.arange(len(x)), reads)

    def observed(x, block):  # notes the reads of the reader's function only
        reads.active = True
        try:
            with _Copies():
                return running_max_and_sum(x, block)
        finally:
            reads.active = False

    result = call(observed, scores, block, name="running_max_and_sum", case=case)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail(
            f"on the case {case}, `running_max_and_sum` returned {fmt(result)}; expected two numbers, (m, l)."
        )
    m_raw, l_raw = (plain(r) for r in result)
    as_float = [r.item() if isinstance(r, Tensor) and r.numel() == 1 else r for r in result]
    if any(isinstance(r, float) and not math.isfinite(r) for r in as_float):
        if _rescaled_by_the_inverse(running_max_and_sum, x, block, case):
            fail(
                f"on the case {case}, your result is {fmt(as_float[0])}, {fmt(as_float[1])}: the factor that rescales your old sum has a positive exponent, new maximum minus old (+inf at the first block, where the old maximum is -inf, and inf times the sum 0 is nan). When the maximum rises, should each old term exp(x_j - m_old) grow or shrink?"
            )
        fail(
            f"on the case {case}, your result is {fmt(as_float[0])}, {fmt(as_float[1])}: an exponential overflowed. Update the maximum with the block first, then take exp(x_j - m) with the new maximum, so that no exponent is positive, the one of the factor that rescales the old sum included."
        )
    m = expect_number(m_raw, "the maximum m")
    total = expect_number(l_raw, "the sum l")
    return m, total, reads


class _Exponents(TorchFunctionMode):
    """While the reader's function runs: the arguments of torch's exponentials (torch.exp, x.exp())."""

    def __init__(self, seen: list[float]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in {"exp", "exp_"} and isinstance(args[0], Tensor):
            self.seen += torch.as_tensor(args[0]).detach().double().flatten().tolist()
        return func(*args, **(kwargs or {}))


def _rescaled_by_the_inverse(running_max_and_sum: Any, x: Tensor, block: int, case: str) -> bool:
    """Whether the reader's function, run again on x, took positive exponents only in the rescale
    factor, each the rise of the running maximum at a block (+inf at the first, from m = -inf):
    exp(m_new - m_old), the inverse of the factor, with the block's terms taken right. Reads the
    exponentials of torch, math.exp and np.exp (as module attributes)."""
    seen: list[float] = []
    real_math, real_np = math.exp, np.exp

    def math_exp(v):
        seen.append(float(v))
        return real_math(v)

    def np_exp(v, *args, **kwargs):
        seen.extend(np.asarray(v, dtype=float).ravel().tolist())
        return real_np(v, *args, **kwargs)

    math.exp, np.exp = math_exp, np_exp
    try:
        with _Exponents(seen):
            call(running_max_and_sum, x.clone(), block, name="running_max_and_sum", case=case)
    finally:
        math.exp, np.exp = real_math, real_np
    rises, m = [], -math.inf
    for start in range(0, len(x), block):
        m_new = max(m, x[start : start + block].max().item())
        if m_new > m:
            rises.append(m_new - m)
        m = m_new
    positive = [v for v in seen if v > 0]
    return len(positive) == len(rises) and all(
        a == b or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5) for a, b in zip(positive, rises)
    )


def _name_sum_mistake(case: str, x: Tensor, block: int, total: float) -> NoReturn:
    """Fail with the mistake behind a wrong l: a usual slip of the update, a logarithm, or else."""
    m_expected, l_expected = running_reference(x, block)
    for mistake, message in _RUNNING_MISTAKES:
        _, l_wrong = running_reference(x, block, mistake=mistake)
        if abs(total - l_wrong) <= 1e-5 * abs(l_wrong):
            fail(f"on the case {case}, {message}")
    close = 1e-5 * max(1.0, abs(m_expected))
    if abs(total - (m_expected + math.log(l_expected))) <= close:
        fail(
            f"on the case {case}, your l is the log-sum-exp m + log l, the number the backward pass keeps; return the sum l itself, the sum of exp(x_j - m)."
        )
    if abs(total - math.log(l_expected)) <= close:
        fail(
            f"on the case {case}, your l is the logarithm of the sum; return the sum l itself, the sum of exp(x_j - m)."
        )
    _imprecise(case, "sum l", total, l_expected)
    fail(
        f"on the case {case}, your sum l is {total:.6g}, which is not the sum of exp(x_j - m) over the scores: check that each block's terms are taken against the new maximum and that the old sum is rescaled before adding them."
    )


def _imprecise(case: str, name: str, value: float, expected: float) -> None:
    """Fail if ``value`` is off by more than float32's rounding but within 1e-2 relative: the right
    algorithm in a low precision (float16 or bfloat16 keep about 3 significant digits)."""
    error = abs(value - expected) / max(1.0, abs(expected))  # as the tolerances below
    if 1e-5 < error <= 1e-2:
        fail(
            f"on the case {case}, your {name} is {value:.6g}, close to the right {expected:.6g} (relative error {error:.1e}) but not to float32 precision: compute in float32 or float64, not float16 or bfloat16."
        )


def _check_max_and_sum(case: str, x: Tensor, block: int, m: float, total: float) -> None:
    """Fail if (m, l) is not the reference: swapped, a loop cut short, a wrong start, a wrong sum,
    or the right algorithm in too low a precision."""
    m_expected, l_expected = running_reference(x, block)
    _imprecise(case, "maximum m", m, m_expected)
    swapped = abs(total - m_expected) <= 1e-5 * max(1.0, abs(m_expected))
    if swapped and abs(m - l_expected) <= 1e-5 * l_expected and m != total:
        fail(
            f"on the case {case}, your m, {fmt(m)}, is the sum of the exponentials and your l, {fmt(total)}, is the largest score: you returned (l, m). Return (m, l), the maximum first, then the sum."
        )
    for end in range(block, len(x), block):  # the blocks before the end only: a loop cut short
        m_cut, l_cut = running_reference(x[:end], block)
        if abs(m - m_cut) <= 1e-5 * max(1.0, abs(m_cut)) and abs(total - l_cut) <= 1e-5 * l_cut:
            if abs(total - l_expected) > 1e-5 * l_expected:
                fail(
                    f"on the case {case}, your m and l are those of scores 0 to {end - 1} only: your sum misses {_scores(end, len(x) - 1)}, at the end of x. The loop stops before the end of x (range(0, len(x) - block, block) does); go up to len(x): range(0, len(x), block), whose last block may be shorter."
                )
    if m > m_expected and m not in x.tolist():
        fail(
            f"on the case {case}, your maximum is {fmt(m)}, above every score (the largest is {fmt(m_expected)}): you started the running maximum at {fmt(m)}. Scores can all be below any number you pick; start it at -inf (-math.inf), which every score replaces."
        )
    if abs(m - m_expected) > 1e-5 * max(1.0, abs(m_expected)):
        last = x[(len(x) - 1) // block * block :].max().item()  # the last block's own maximum
        if len(x) > block and abs(m - last) <= 1e-5 * max(1.0, abs(last)):
            fail(
                f"on the case {case}, your maximum is {fmt(m)}, the last block's own maximum; the largest score is {fmt(m_expected)}. Your running maximum is not carried from block to block: after each block, the new maximum must become m."
            )
        fail(
            f"on the case {case}, your maximum is {fmt(m)}; the largest score is {fmt(m_expected)}."
        )
    if abs(total - l_expected) > 1e-5 * l_expected:
        _name_sum_mistake(case, x, block, total)


_refuse_online = refusing(
    "online_softmax", "; compute the maximum and the sum yourself, block by block"
)


_refuse_alibi = refusing(
    "alibi_slopes", "; compute the slopes yourself, from 2^(-8/n) and the released code's rule"
)


_refuse_torch_logsumexp = refusing(
    "logsumexp",
    ", which the exercise forbids; compute the maximum and the sum yourself, block by block",
    whose="torch's",
)


_refuse_torch_softmax = refusing(
    "softmax",
    ", which the exercise forbids; compute the maximum and the sum yourself, block by block",
    whose="torch's",
)


_refuse_flash_backward = refusing(
    "FlashAttention.backward",
    "; write dV, dP, dS, dQ and dK yourself, as the section on the backward pass derived them",
)
_refuse_autograd = refusing(
    "automatic differentiation (torch.autograd)",
    "; write dV, dP, dS, dQ and dK yourself, as the section on the backward pass derived them",
    whose="torch's",
)


_refuse_hf_alibi = refusing(
    "build_alibi_tensor",
    ": no library's may be used; compute the slopes yourself",
    whose="transformers'",
)


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The library function the exercise asks to write is refused under any name (a wrapper too).
REFUSALS = {
    "check_running_max_and_sum": [
        ("lib.flash.online_softmax", None, _refuse_online),
        # the statement's "without torch.softmax or torch.logsumexp", under any name (course-kit
        # review s24, S2: `from torch import logsumexp as L`); the ops under any spelling too
        ("torch.logsumexp", None, _refuse_torch_logsumexp),
        ("torch.special.logsumexp", None, _refuse_torch_logsumexp),
        ("torch.softmax", None, _refuse_torch_softmax),
        ("torch.nn.functional.softmax", None, _refuse_torch_softmax),
    ],
    "check_alibi_slopes": [
        ("lib.alibi.alibi_slopes", None, _refuse_alibi),
        # another library's copy, every checkpoint module's (course review s15, S3: any library's)
        ("transformers.models.*.modeling_*.build_*alibi_tensor", None, _refuse_hf_alibi),
    ],
    # "without `lib.flash` or automatic differentiation" (course-kit review s24, S1: the library's
    # backward called with a made-up ctx, and torch.autograd.grad, got 2/2): every function of
    # lib.flash (the grader's module-wide rule) and every way into autograd's engine; the checker's
    # own reference, which uses autograd, runs outside the student's call
    "check_tile_backward": [
        ("lib.flash.FlashAttention.backward", None, _refuse_flash_backward),
        ("lib.flash.flash_attention", None, _refuse_flash_backward),
        ("torch.autograd.grad", None, _refuse_autograd),
        ("torch.autograd.backward", None, _refuse_autograd),
        ("torch.Tensor.backward", None, _refuse_autograd),
        ("torch.autograd.graph._engine_run_backward", None, _refuse_autograd),
        ("torch.func.grad", None, _refuse_autograd),
        ("torch.func.grad_and_value", None, _refuse_autograd),
        ("torch.func.vjp", None, _refuse_autograd),
    ],
}


def _mistakes_passing_running() -> list[str]:
    """The known mistakes (``_RUNNING_MISTAKES``) whose (m, l) the checker's own comparison,
    :func:`_check_max_and_sum`, finds right on every case (it fails a wrong one)."""
    cases = _running_cases()

    def right(mistake: str) -> bool:
        for case, x, block in cases:
            _check_max_and_sum(case, x, block, *running_reference(x, block, mistake=mistake))
        return True

    return passing_everywhere(_RUNNING_MISTAKES, right)


def _constant_answer(fn: Any, cases: list[tuple], values_of: Any) -> Any:
    """The one value that ``fn`` returns on every case alike (a stub returning a constant), else
    None. ``cases``: the argument tuples of its calls; ``values_of(result)``: the values of one
    result, as a list (None: not a constant answer). A call that raises gives None: the checker's own
    calls report it, with their case."""
    seen = set()
    for args in cases:
        try:
            values = values_of(call(fn, *args, name="", case=""))
        except Exception:
            return None
        if values is None:
            return None
        seen.update(values)
        if len(seen) > 1:
            return None
    return seen.pop() if seen else None


@checker("running_max_and_sum")
def check_running_max_and_sum(running_max_and_sum: Any) -> str:
    """Check ``running_max_and_sum(x [N], block) -> (m, l)`` against :func:`running_reference` on
    hidden cases (scores up to 1000, and all negative down to -4e9), relative tolerance 1e-5 on l (float32 sums of a few terms),
    then how it read x (:class:`_Scores`): one pass, each block of ``block`` scores read as one
    tensor, in any order, never a block again after another."""
    attempted(running_max_and_sum, "running_max_and_sum")
    names = getattr(getattr(running_max_and_sum, "__code__", None), "co_names", ())
    used = [n for n in ("softmax", "logsumexp", "online_softmax") if n in names]
    if used:
        fail(
            f"your `running_max_and_sum` calls {used[0]}; compute the maximum and the sum yourself, block by block."
        )
    # a stub returning a constant (m, l), whose 0 was named "the last block's own maximum" on the
    # first case
    constant = _constant_answer(
        running_max_and_sum,
        [(x, block) for _, x, block in _running_cases()],
        lambda result: [tuple(map(float, result))] if len(result) == 2 else None,
    )
    if constant is not None:
        fail(
            f"your `running_max_and_sum` returns (m, l) = ({fmt(constant[0])}, {fmt(constant[1])}) on every case, whatever the scores: m and l must be computed from x, the largest score and the sum of exp(x_j - m)."
        )
    for description, x, block in _running_cases():
        case = f"'{description}'"
        m, total, reads = _observed_run(running_max_and_sum, x, block, case)
        _check_max_and_sum(case, x, block, m, total)
        problem = _reading_problem(reads.events, len(x), block)
        if problem:
            fail(f"on the case {case}, the values are right but {problem}")
    cases = _running_cases()
    named = "; ".join(description for description, *_ in cases)
    return f"your running maximum and sum equal the softmax's on all {len(cases)} hidden cases ({named}), in one pass over blocks of `block` scores"


# --- exercise 2: ALiBi's slopes ------------------------------------------------------------------------


def slopes_reference(n: int, *, mistake: str | None = None) -> list[float]:
    """ALiBi's slopes of n heads (Press et al.'s released code). ``mistake``: "geometric" (2^(-8/n)
    to the powers 1 ... n for any n); "first ones" (the missing slopes are the first of 2^(k+1)
    heads', not every other); "odd ones" (every other, starting at the second); "ascending" (the
    power-of-two list reversed, smallest first)."""

    def power_of_two(n):
        start = 2 ** (-8 / n)
        slopes = [start ** (h + 1) for h in range(n)]
        return slopes[::-1] if mistake == "ascending" else slopes

    if n & (n - 1) == 0 or mistake == "geometric":
        return power_of_two(n)
    below = 2 ** math.floor(math.log2(n))
    more = power_of_two(2 * below)  # the slopes of twice as many heads
    picked = {"first ones": more, "odd ones": more[1::2]}.get(mistake, more[0::2])
    return power_of_two(below) + picked[: n - below]


_SLOPE_CASES = [8, 4, 6, 12, 3, 24]


def _slope_cases() -> list[int]:
    """The head counts of the cases: _SLOPE_CASES at seed 0; else two powers of two (2 to 64) and four
    other counts, one of them above 16 (where every rule of the released code shows), and last one
    count from 1000 to 9999, drawn from the seed."""
    seed = SEEDS["slopes_for"]
    if seed == 0:
        return list(_SLOPE_CASES)
    g = torch.Generator().manual_seed(seed)
    powers = [2, 4, 8, 16, 32, 64]
    others = [n for n in range(3, 49) if n & (n - 1)]
    large = [n for n in others if n > 16]
    picked = [powers[i] for i in torch.randperm(len(powers), generator=g)[:2].tolist()]
    picked += [others[i] for i in torch.randperm(len(others), generator=g)[:3].tolist()]
    picked.append(large[int(torch.randint(len(large), (1,), generator=g))])
    picked = [picked[i] for i in torch.randperm(len(picked), generator=g).tolist()]
    # one in the thousands, beyond any table of answers a student could paste (course-kit review s22,
    # S3: a 256-entry table passed every case)
    while True:
        n = int(torch.randint(1000, 10000, (1,), generator=g))
        if n & (n - 1):
            return picked + [n]


_SLOPE_MISTAKES = [
    (
        "geometric",
        "you used the power-of-two formula 2^(-8 (h + 1) / n), h = 0 ... n - 1, for a head count that is not a power of two. The released code takes the slopes of the largest power of two 2^k below n, then every other slope of 2^(k+1) heads (the first, the third, ...) until there are n.",
    ),
    (
        "first ones",
        "the missing slopes are the first ones of 2^(k+1) heads, which repeat slopes already chosen (the second slope of 2^(k+1) heads is the first of 2^k). The released code takes every other one ([0::2]), the slopes that 2^k heads lack: the first above the largest slope already chosen, the next ones each between two of them.",
    ),
    (
        "odd ones",
        "the missing slopes are every other slope of 2^(k+1) heads starting at the second ([1::2]); the released code starts at the first ([0::2]), 2^(-8 / 2^(k+1)).",
    ),
    ("ascending", "your slopes are in reverse order: head 0 gets the largest slope, 2^(-8/n)."),
]


def _mistakes_passing_slopes() -> list[str]:
    """The known mistakes (``_SLOPE_MISTAKES``) whose slopes are right for every head count."""
    counts = _slope_cases()

    def right(mistake: str) -> bool:
        for n in counts:
            wrong, expected = slopes_reference(n, mistake=mistake), slopes_reference(n)
            if len(wrong) != n or any(
                abs(x - y) > _slope_tolerance(n, y) for x, y in zip(wrong, expected)
            ):
                return False
        return True

    return passing_everywhere(_SLOPE_MISTAKES, right)


@checker("slopes_for")
def check_alibi_slopes(slopes_for: Any) -> str:
    """Check ``slopes_for(n)``, a list of n floats, against :func:`slopes_reference` for n = 8, 4, 6,
    12, 3, 24, within :func:`_slope_tolerance` (a float32 answer passes)."""
    attempted(slopes_for, "slopes_for")
    if _calls_lib_alibi(slopes_for):
        fail(
            f"your `slopes_for` calls lib.alibi ({_calls_lib_alibi(slopes_for)}); compute the slopes yourself, from 2^(-8/n) and the released code's rule."
        )
    for n in _slope_cases():
        case = f"'n = {n}'"
        result = call(slopes_for, n, name="slopes_for", case=case)
        if isinstance(result, (Tensor, np.ndarray)):
            kind = "a torch.Tensor" if isinstance(result, Tensor) else "a NumPy array"
            fail(
                f"on the case {case}, `slopes_for` returned {kind}; expected a list of {n} floats, as the task asks (`.tolist()` turns one into the other)."
            )
        values = result
        if not isinstance(values, (list, tuple)):
            fail(
                f"on the case {case}, `slopes_for` returned {type(result).__name__} {fmt(result)}; expected a list of {n} floats."
            )
        if len(values) != n:
            fail(
                f"on the case {case}, `slopes_for` returned {len(values)} numbers; expected a list of {n} floats, one per head."
            )
        got = [expect_number(v, f"slope {h}") for h, v in enumerate(values)]

        def same(a, b):
            return all(abs(x - y) <= _slope_tolerance(n, y) for x, y in zip(a, b))

        expected = slopes_reference(n)
        if same(got, expected):
            continue
        if sorted(got, reverse=True) == sorted(expected, reverse=True) and n & (n - 1):
            fail(
                f"on the case {case}, you have the right slopes in another order: the released code lists the 2^k slopes of the largest power of two below n first, then the new ones."
            )
        for mistake, message in _SLOPE_MISTAKES:
            if same(got, slopes_reference(n, mistake=mistake)):
                fail(f"on the case {case}, {message}")
        for wrong, message in _slope_slips(n):
            if same(got, wrong):
                fail(f"on the case {case}, {message}")
        first = next(h for h in range(n) if not same([got[h]], [expected[h]]))
        mine, right = _apart(got[first], expected[first])
        fail(f"on the case {case}, head {first} gets {mine}; expected {right}.")
    counts = [str(n) for n in sorted(_slope_cases())]
    return (
        f"your slopes equal the released code's for {', '.join(counts[:-1])} and {counts[-1]} heads"
    )


def _slope_slips(n: int) -> list[tuple[list[float], str]]:
    """Other wrong slopes of n heads, each with the message that names its mistake."""
    expected = slopes_reference(n)
    above = 2 ** math.ceil(math.log2(n))
    return [
        (
            [2 ** (-8 * h / n) for h in range(n)],
            "your slopes are one head off: head 0 gets 2^0 = 1. The exponent of head h is h + 1, so the first slope is 2^(-8/n), not 1.",
        ),
        (
            [1 / s for s in expected],
            "your slopes are the inverses of ALiBi's (above 1): a slope is 2 to a negative power, so that the bias -s |i - j| stays small for the nearest heads.",
        ),
        (
            slopes_reference(above)[:n],
            f"you took the first {n} slopes of the next power of two ({above} heads): the released code starts from the largest power of two below n, 2^k, and adds every other slope of 2^(k+1) heads.",
        ),
        (
            [math.log2(s) for s in expected],
            "your slopes are logarithms (base 2) of ALiBi's: return the slopes themselves, 2 to those powers.",
        ),
    ]


def _calls_lib_alibi(function: Any) -> str | None:
    """The function of lib.alibi that ``function``'s code calls (``alibi_slopes(n)``,
    ``lib.alibi._slopes(n)``, a global or closure variable that holds one), "the module itself"
    where it names the module and none of its functions; None where it calls none."""
    import lib.alibi

    code = getattr(function, "__code__", None)
    names = getattr(code, "co_names", ())
    own = {k for k, v in vars(lib.alibi).items() if getattr(v, "__module__", None) == "lib.alibi"}
    scope = getattr(function, "__globals__", {})
    values = [scope.get(name) for name in names]
    values += [cell.cell_contents for cell in getattr(function, "__closure__", None) or ()]
    held = [v.__name__ for v in values if getattr(v, "__module__", None) == "lib.alibi"]
    called = [name for name in names if name in own] + held
    if called:
        return called[0]
    if "alibi" in names or any(getattr(v, "__name__", None) == "lib.alibi" for v in values):
        return "the module itself"
    return None


def _slope_tolerance(n: int, expected: float) -> float:
    """How far a slope of n heads may be from the released code's (tests/tolerance.py's rule):
    float32's eps, the coarsest dtype an answer may compute in, times the roundings of the
    computation, up to n + 2 (2^(-8/n), then up to n multiplications by it), times the slope."""
    return (n + 2) * torch.finfo(torch.float32).eps * abs(expected)


def _apart(a: float, b: float) -> tuple[str, str]:
    """a and b with the fewest significant digits (at least 6) that show them different."""
    for digits in range(6, 18):
        if f"{a:.{digits}g}" != f"{b:.{digits}g}":
            break
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


# --- exercise 3: the causal mask of a tile ------------------------------------------------------------


def tile_mask_reference(
    i0: int, i1: int, j0: int, j1: int, *, mistake: str | None = None
) -> Tensor:
    """bool [i1 - i0, j1 - j0], True where query i may attend key j (j <= i) for the queries
    i0 ... i1 - 1 and keys j0 ... j1 - 1 of a causal self-attention. ``mistake``: "local" (the tile's
    own lower triangle, positions ignored); "strict" (j < i, the diagonal masked); "inverted" (True
    where masked); "transposed" (j >= i); "no_j0" (columns taken as keys 0, 1, ... instead of j0,
    j0 + 1, ...); "no_i0" (rows taken as queries 0, 1, ... instead of i0, i0 + 1, ...); "tril_sign"
    (``tril`` with its offset's sign reversed, diagonal=j0 - i0 instead of i0 - j0)."""
    rows = torch.arange(0 if mistake == "no_i0" else i0, i1 - (i0 if mistake == "no_i0" else 0))
    cols = torch.arange(0 if mistake == "no_j0" else j0, j1 - (j0 if mistake == "no_j0" else 0))
    rows, cols = rows[:, None], cols[None, :]
    if mistake == "local":
        return torch.ones(i1 - i0, j1 - j0, dtype=torch.bool).tril()
    if mistake == "tril_sign":
        return torch.ones(i1 - i0, j1 - j0, dtype=torch.bool).tril(diagonal=j0 - i0)
    if mistake == "strict":
        return cols < rows
    if mistake == "inverted":
        return cols > rows
    if mistake == "transposed":
        return cols >= rows
    return cols <= rows


_TILE_CASES = [(4, 8, 4, 8), (0, 4, 2, 4), (6, 9, 4, 8), (8, 12, 0, 4), (3, 5, 3, 6)]


def _tile_cases() -> list[tuple[int, int, int, int]]:
    """The tiles of the cases: _TILE_CASES at seed 0; else each of them moved along the diagonal by
    an offset drawn from the seed (queries and keys alike: the same kind of tile, on, below or across
    the diagonal, at other positions)."""
    seed = SEEDS["tile_mask"]
    if seed == 0:
        return list(_TILE_CASES)
    g = torch.Generator().manual_seed(seed)
    offsets = torch.randint(1, 200, (len(_TILE_CASES),), generator=g).tolist()
    return [(i0 + o, i1 + o, j0 + o, j1 + o) for (i0, i1, j0, j1), o in zip(_TILE_CASES, offsets)]


_TILE_MISTAKES = [
    (
        "local",
        "you built the tile's own lower triangle, as if its first query and first key were both at position 0: row r of the tile is query i0 + r and column c is key j0 + c, and causality is about positions in the sequence, not places in the tile.",
    ),
    (
        "strict",
        "your mask hides the diagonal (j < i): a query may attend its own position, j <= i.",
    ),
    (
        "inverted",
        "your mask is True where a query may NOT attend; the book's masks are True where a query may attend (j <= i).",
    ),
    ("transposed", "your mask lets each query see the keys after it (j >= i): causal is j <= i."),
    (
        "no_j0",
        "your mask compares each query's position with the key's place in the tile, ignoring j0: columns are keys j0 + c, not c. Compare query i0 + r with key j0 + c.",
    ),
    (
        "no_i0",
        "your mask compares the query's place in the tile with each key's position, ignoring i0: rows are queries i0 + r, not r. Compare query i0 + r with key j0 + c.",
    ),
    (
        "tril_sign",
        "your mask is `tril(diagonal=j0 - i0)`: the offset's sign is reversed. `tril(diagonal=k)` keeps row r, column c where c - r <= k: work out when key j0 + c may be seen by query i0 + r, in terms of c - r.",
    ),
]


def _mistakes_passing_tile_mask() -> list[str]:
    """The known mistakes (``_TILE_MISTAKES``) whose masks are right on every tile."""
    cases = _tile_cases()

    def right(mistake: str) -> bool:
        return all(
            torch.equal(tile_mask_reference(*c, mistake=mistake), tile_mask_reference(*c))
            for c in cases
        )

    return passing_everywhere(_TILE_MISTAKES, right)


@checker("tile_mask")
def check_tile_mask(tile_mask: Any) -> str:
    """Check ``tile_mask(i0, i1, j0, j1) -> bool [i1 - i0, j1 - j0]`` against
    :func:`tile_mask_reference` on tiles on, below and across the diagonal; exactly."""
    attempted(tile_mask, "tile_mask")
    for i0, i1, j0, j1 in _tile_cases():
        case = f"'queries {i0}..{i1 - 1}, keys {j0}..{j1 - 1}'"
        result = call(tile_mask, i0, i1, j0, j1, name="tile_mask", case=case)
        shape = (i1 - i0, j1 - j0)
        if not isinstance(result, Tensor):
            fail(
                f"on the case {case}, `tile_mask` returned {type(result).__name__} {fmt(result)}; expected a bool tensor of shape {list(shape)}."
            )
        if tuple(result.shape) != shape:
            fail(
                f"on the case {case}, `tile_mask` returned a tensor of shape {list(result.shape)}; expected shape {list(shape)}, [i1 - i0, j1 - j0]: one row per query, one column per key."
            )
        if result.dtype != torch.bool:
            additive = result.is_floating_point() and bool(
                ((result == 0) | (result == -math.inf)).all()
            )
            if additive:  # 0 / -inf: right in the additive convention, not the book's
                fail(
                    f"on the case {case}, `tile_mask` returned a {result.dtype} mask of 0 and -inf: an additive mask, to be added to the scores (the convention of PyTorch's `attn_mask` as a float). The book's masks are booleans, torch.bool, True where a query may attend."
                )
            fail(
                f"on the case {case}, `tile_mask` returned dtype {result.dtype}; expected torch.bool (True where a query may attend)."
            )
        if torch.equal(result, tile_mask_reference(i0, i1, j0, j1)):
            continue
        # a stub's constant tensor of the right shape matched "ignoring j0" or "ignoring i0" (the
        # course review's was told it ignored j0)
        constant = _constant_answer(
            tile_mask,
            _tile_cases(),
            lambda result: (
                result.flatten().tolist()
                if isinstance(result, Tensor) and result.numel() > 0
                else None
            ),
        )
        if constant is not None:
            fail(
                f"your `tile_mask` returns a mask that is {bool(constant)} at every query and key, whatever the tile: on the case {case} it is wrong. Which keys a query may attend depends on where the tile lies: on the positions i0 + r of its queries and j0 + c of its keys."
            )
        for mistake, message in _TILE_MISTAKES:
            if torch.equal(result, tile_mask_reference(i0, i1, j0, j1, mistake=mistake)):
                fail(f"on the case {case}, {message}")
        wrong = (result != tile_mask_reference(i0, i1, j0, j1)).nonzero()[0].tolist()
        fail(
            f"on the case {case}, your mask is wrong at query {i0 + wrong[0]}, key {j0 + wrong[1]}."
        )
    tiles = [f"queries {i0}..{i1 - 1} by keys {j0}..{j1 - 1}" for i0, i1, j0, j1 in _tile_cases()]
    return f"your tile masks are right on all {len(tiles)} hidden cases, tiles on, below and across the diagonal: {'; '.join(tiles)}"


# --- exercise 4: the backward of one tile -------------------------------------------------------------


def tile_backward_reference(
    q: Tensor, k: Tensor, v: Tensor, do: Tensor, lse: Tensor, delta: Tensor, scale: float,
    *, mistake: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """One tile's share (dQ, dK, dV) of the backward pass, in float64, as FlashAttention.backward
    adds it: q, do [Bq, D], k, v [Bk, D], lse, delta [Bq]. ``mistake``: "renormalised" (the tile's
    own softmax instead of exp(S - L)); "scores unscaled" (S = q k^T, no scale); "no delta"
    (dS = P dP); "delta from the tile" (delta_i the tile's own sum of P dP); "scale forgotten" (dQ
    and dK without the scale); "scale twice" (dQ and dK with scale^2); "transposed" (dQ from dS^T,
    dK from dS: square tiles only); "dv transposed" (dV = P dO, square tiles only)."""
    q, k, v, do, lse, delta = (t.detach().double() for t in (q, k, v, do, lse, delta))
    s = q @ k.T * (1.0 if mistake == "scores unscaled" else scale)  # [Bq, Bk]
    p = torch.softmax(s, -1) if mistake == "renormalised" else torch.exp(s - lse[:, None])
    dv = p @ do if mistake == "dv transposed" else p.T @ do  # dV = P^T dO
    dp = do @ v.T  # dP = dO V^T
    if mistake == "delta from the tile":
        delta = (p * dp).sum(-1)
    ds = p * dp if mistake == "no delta" else p * (dp - delta[:, None])
    factor = {"scale forgotten": 1.0, "scale twice": scale * scale}.get(mistake, scale)
    if mistake == "transposed":
        return factor * ds.T @ k, factor * ds @ q, dv
    return factor * ds @ k, factor * ds.T @ q, dv


# (name, T, block of queries, block of keys, D, the largest score or None): T queries and keys, every
# tile of a full attention; the last tiles shorter where the blocks do not divide T; in the last case
# the scores reach 150, beyond float32's exp (88.72)
_BACKWARD_CASES = [
    ("T = 8, tiles of 4 by 4, D = 4", 8, 4, 4, 4, None),
    ("T = 12, tiles of 4 queries by 6 keys, D = 8", 12, 4, 6, 8, None),
    ("T = 10, tiles of 4 queries by 3 keys, D = 5", 10, 4, 3, 5, None),
    ("scores up to 150, T = 8, tiles of 4 by 4, D = 4", 8, 4, 4, 4, 150.0),
]


def _backward_cases() -> list[tuple[str, int, int, Tensor, Tensor, Tensor, Tensor, float]]:
    """(name, block of queries, block of keys, q, k, v, dO, largest |score|) of each case, float32,
    drawn from the seed (a course's grader sets its own: the same sizes, other numbers)."""
    g = torch.Generator().manual_seed(SEEDS["tile_backward"])
    cases = []
    for name, T, bq, bk, d, top in _BACKWARD_CASES:
        q, k, v, do = (torch.randn(T, d, generator=g) for _ in range(4))
        reach = (q @ k.T).abs().max().item() / math.sqrt(d)
        if top is not None:  # the queries stretched until the largest score is `top`
            q, reach = q * (top / reach), top
        cases.append((name, bq, bk, q, k, v, do, reach))
    return cases


def _full_backward(q: Tensor, k: Tensor, v: Tensor, do: Tensor):
    """(lse [T], delta [T], dQ, dK, dV) of softmax(q k^T / sqrt(D)) v in float64, by autograd."""
    q, k, v = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    scores = q @ k.T / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, -1) @ v
    grads = torch.autograd.grad(out, (q, k, v), do.double())
    lse = torch.logsumexp(scores, -1).detach()
    return lse, (do.double() * out.detach()).sum(-1), *grads


def _backward_tolerance(expected: Tensor, reach: float, sizes: int) -> float:
    """How far float32 may move a gradient: float32's eps times the terms summed (``sizes``) and
    the size of the scores (exp(S - L) carries the rounding of S and L, relative), times the
    largest gradient."""
    eps = torch.finfo(torch.float32).eps
    return 4 * eps * (sizes + 2 * reach) * max(1.0, expected.abs().max().item())


_BACKWARD_MISTAKES = [
    (
        "renormalised",
        "your weights are the softmax of the tile's own scores, each row summing to 1 over this tile's keys: the weights of the attention are a softmax over ALL the keys of the row, and the saved log-sum-exp L = lse carries that whole row. Recompute P from S and lse, not from the tile alone.",
    ),
    (
        "scores unscaled",
        "you recomputed the scores as q k^T, without `scale`: the forward computed S = q k^T * scale, and lse is the log-sum-exp of those scores.",
    ),
    (
        "no delta",
        "your dS is P * dP: the softmax's backward subtracts, from each dP_ij, the weighted mean of the row, which the exercise hands you as `delta`.",
    ),
    (
        "delta from the tile",
        "you summed P * dP over this tile's keys and used that for delta: delta must be the same number for every tile of a row. Is yours? Use the `delta` you are given, computed once from dO and O.",
    ),
    (
        "scale forgotten",
        "your dQ and dK lack the factor `scale`: S = q k^T * scale, so the chain rule brings `scale` into both.",
    ),
    (
        "scale twice",
        "your dQ and dK carry `scale` twice: S = q k^T * scale brings the factor once, into each of them.",
    ),
    (
        "transposed",
        "your dQ and dK use dS the wrong way round: dS is [queries, keys]; which of the two needs its transpose to give one row per query, and which one row per key?",
    ),
    (
        "dv transposed",
        "your dV is P dO: dV has one row per key, and O = P V puts the keys in the columns of P.",
    ),
]


def _tiles(n: int, block: int) -> list[tuple[int, int]]:
    return [(a, min(a + block, n)) for a in range(0, n, block)]


# reader s30: an answer that asks autograd for the tile's gradients met torch's bare "does not
# require grad" error; the checker calls tile_backward with autograd off, as the exercise asks
_AUTOGRAD_HINT = {
    "does not require grad": "The exercise asks for the tile's gradients written out, without "
    "autograd: the checker calls tile_backward with autograd off, so torch.autograd.grad and "
    ".backward() have nothing to differentiate. Write dV, dP, dS, dQ and dK yourself, as the section "
    "on the backward pass derived them."
}


def _mistakes_passing_backward() -> list[str]:
    """The known mistakes (``_BACKWARD_MISTAKES``) whose gradients are right on every tile."""
    tiles = []
    for _, bq, bk, q, k, v, do, reach in _backward_cases():
        T, d = q.shape
        lse, delta, *_ = _full_backward(q, k, v, do)
        lse, delta = lse.float(), delta.float()
        for i0, i1 in _tiles(T, bq):
            for j0, j1 in _tiles(T, bk):
                args = (q[i0:i1], k[j0:j1], v[j0:j1], do[i0:i1], lse[i0:i1], delta[i0:i1])
                args += (1 / math.sqrt(d),)
                expected = tile_backward_reference(*args)
                tol = _backward_tolerance(torch.cat(expected), reach, j1 - j0 + d)
                tiles.append((args, expected, tol))

    def right(mistake: str) -> bool:
        for args, expected, tol in tiles:
            wrong = tile_backward_reference(*args, mistake=mistake)
            if any(
                w.shape != e.shape or (w - e).abs().max().item() > tol
                for w, e in zip(wrong, expected)
            ):
                return False
        return True

    return passing_everywhere(_BACKWARD_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {
    "running_max_and_sum": _mistakes_passing_running,
    "slopes_for": _mistakes_passing_slopes,
    "tile_mask": _mistakes_passing_tile_mask,
    "tile_backward": _mistakes_passing_backward,
}


@checker("tile_backward")
def check_tile_backward(tile_backward: Any) -> str:
    """Check ``tile_backward(q, k, v, do, lse, delta, scale) -> (dq, dk, dv)`` on every tile of
    full attentions (float32 inputs): each tile against :func:`tile_backward_reference`, then the
    shares summed over the tiles against autograd through the whole attention, in float64, within
    :func:`_backward_tolerance`."""
    attempted(tile_backward, "tile_backward")
    cases = _backward_cases()
    for name, bq, bk, q, k, v, do, reach in cases:
        T, d = q.shape
        scale = 1 / math.sqrt(d)
        lse, delta, *expected = _full_backward(q, k, v, do)
        lse, delta = lse.float(), delta.float()  # as the forward saves them
        total = [torch.zeros(T, d, dtype=torch.float64) for _ in range(3)]
        for i0, i1 in _tiles(T, bq):
            for j0, j1 in _tiles(T, bk):
                case = f"'{name}', the tile of queries {i0}..{i1 - 1} and keys {j0}..{j1 - 1}"
                args = (q[i0:i1], k[j0:j1], v[j0:j1], do[i0:i1], lse[i0:i1], delta[i0:i1], scale)
                result = call(
                    tile_backward, *args, name="tile_backward", case=case, hints=_AUTOGRAD_HINT
                )
                if not isinstance(result, (tuple, list)) or len(result) != 3:
                    fail(
                        f"on the case {case}, `tile_backward` returned {fmt(result)}; expected three tensors, (dq, dk, dv)."
                    )
                if any(isinstance(r, Tensor) and not r.isfinite().all() for r in result):
                    fail(
                        f"on the case {case}, your gradients hold inf or nan: an exponential overflowed. Take exp(S - lse) in one step, not exp(S) / exp(lse): S - lse is never above 0, while exp(S) is infinite in float32 for scores above 88.72."
                    )
                shapes = ((i1 - i0, d), (j1 - j0, d), (j1 - j0, d))
                got = [
                    expect_tensor(r, shape, name=f"tile_backward's {what}", case=case)
                    for r, shape, what in zip(result, shapes, ("dq", "dk", "dv"))
                ]
                right = tile_backward_reference(*args)
                tol = _backward_tolerance(torch.cat(right), reach, j1 - j0 + d)

                def same(a, b):
                    return all((x - y).abs().max().item() <= tol for x, y in zip(a, b))

                if not same(got, right):
                    for what, a, b in zip(("dq", "dk", "dv"), got, right):
                        value = a.flatten()[0].item()
                        if (a == value).all() and not (b == value).all():  # a stub's constant
                            fail(
                                f"on the case {case}, your {what} is {fmt(value)} at every entry, the same number everywhere: a gradient of this tile depends on its q, k, v and dO, entry by entry. Compute it from them, as the section on the backward pass derived it."
                            )
                    square = i1 - i0 == j1 - j0
                    for mistake, message in _BACKWARD_MISTAKES:
                        if "transposed" in mistake and not square:
                            continue
                        wrong = tile_backward_reference(*args, mistake=mistake)
                        if same(got, wrong) and not same(wrong, right):
                            fail(f"on the case {case}, {message}")
                    if square and same([got[1], got[0], got[2]], right):
                        fail(
                            f"on the case {case}, you returned (dk, dq, dv): return dq first, then dk, then dv."
                        )
                    what, a, b = next(
                        (w, a, b) for w, a, b in zip(("dq", "dk", "dv"), got, right)
                        if (a - b).abs().max().item() > tol
                    )  # fmt: skip
                    fail(f"on the case {case}, your {what} is wrong: {largest_difference(a, b)}.")
                for t, a, (lo, hi) in zip(total, got, ((i0, i1), (j0, j1), (j0, j1))):
                    t[lo:hi] += a
        for what, t, e in zip(("dQ", "dK", "dV"), total, expected):  # summed over the tiles
            if (t - e).abs().max().item() > _backward_tolerance(e, reach, T + d):
                fail(
                    f"on the case '{name}', every tile is right but your {what} summed over the tiles is not autograd's: {largest_difference(t, e)}."
                )
    named = "; ".join(name for name, *_ in _BACKWARD_CASES)
    return f"your tile shares sum to autograd's dQ, dK and dV of the whole attention on all {len(cases)} hidden cases ({named})"
