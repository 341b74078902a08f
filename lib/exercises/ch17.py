"""Checkers for the exercises of the chapter *From GPT-2 to a modern decoder*.

- :func:`check_rope_halves`: exercise 1 (implement): rotary position embedding in the split-halves
  convention, pairs (i, i + Dh/2) as transformers' ``rotate_half`` forms them, as
  ``lib.rope.apply_rope(x, cos, sin, "halves")`` computes it. The rotation of each pair is Su et al.
  2021's (eq. 34); their eq. 34 pairs neighbours (2i, 2i + 1), the interleaved convention.
- :func:`check_expand_kv`: exercise 2 (implement): grouped-query attention's key/value heads repeated
  for the query heads (Ainslie et al. 2023), as ``lib.llama.repeat_kv``.
- :func:`check_ffn_sublayer`: exercise 3 (implement): a modern decoder's feed-forward sub-layer,
  x + SwiGLU(RMSNorm(x)) (Zhang & Sennrich 2019; Shazeer 2020), as ``lib.llama`` computes it.
- :func:`check_long_context`: exercise 4 (predict, then check): the key/value cache of Qwen3 0.6B
  at its config's position limit, the smallest sliding window whose stack of 32 layers reaches 32,768
  positions, and that window's rolling cache (``lib.llama.kv_cache_bytes_per_token``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from lib.llama import LlamaConfig, count_parameters, kv_cache_bytes_per_token

from . import (
    CheckFailed,
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    failures,
    fmt,
    largest_difference,
    not_attempted,
    passing_everywhere,
    refused,
    refusing,
    variant,
)

__all__ = ["check_rope_halves", "check_expand_kv", "check_ffn_sublayer", "check_long_context"]

TOLERANCE = 1e-4  # float32 angles m w_i at m < 2,000 are off by ~1e-4 radians at most


# --- exercise 1: RoPE, split halves -------------------------------------------------------------------


def rope_reference(x: Tensor, positions: Tensor, theta: float = 10000.0, *,
                   mistake: str | None = None) -> Tensor:  # fmt: skip
    """x [T, Dh] rotated by RoPE at ``positions`` [T] in the halves convention, in float64.

    ``mistake`` computes a usual wrong answer instead: "interleaved" pairs (2i, 2i + 1);
    "exponent i/Dh" uses theta^(-i/Dh); "exponent 4i/Dh" theta^(-4i/Dh) (2i doubled once more); "multiplied" uses theta^(+2i/Dh); "backwards" turns by
    -m w_i; "from 1" counts positions from 1 (m + 1); "pairs from 1" counts
    the pairs from 1 (theta^(-2(i + 1)/Dh)); "one angle" turns every pair by m w_0 = m;
    "positions ignored" turns row t by t; "angles interleaved" pairs the halves, as
    ``rotate_half`` does, but lays the angles out for neighbours (cos m w_0, cos m w_0, cos m w_1,
    ..., what ``repeat_interleave`` gives), so coordinates i and i + Dh/2 turn by different angles."""
    x = x.detach().double()
    Dh = x.shape[-1]
    i = torch.arange(Dh // 2, dtype=torch.float64)
    exponent = {
        "exponent i/Dh": i / Dh,
        "exponent 4i/Dh": 4 * i / Dh,
        "pairs from 1": 2 * (i + 1) / Dh,
    }.get(mistake, 2 * i / Dh)
    w = theta**exponent if mistake == "multiplied" else theta**-exponent  # [Dh/2]
    if mistake == "one angle":
        w = torch.ones_like(w)
    m = positions.double() + (1 if mistake == "from 1" else 0)
    if mistake == "positions ignored":
        m = torch.arange(len(positions), dtype=torch.float64)
    angles = m[:, None] * w  # [T, Dh/2]
    if mistake == "backwards":
        angles = -angles
    cos, sin = angles.cos(), angles.sin()
    if mistake == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)
    a, b = x.chunk(2, dim=-1)
    if mistake == "angles interleaved":
        turned = torch.cat([-b, a], dim=-1)  # rotate_half, [T, Dh]
        cos, sin = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1)  # [T, Dh]
        return x * cos + turned * sin
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


# The seed of each implement exercise's cases: practice values here; a course's grader sets its own
# (grading/ch17.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"rope_halves": 17, "expand_kv": 170, "ffn_sublayer": 1700}


def _rope_cases() -> list[tuple[str, Tensor, Tensor, float]]:
    g = torch.Generator().manual_seed(SEEDS["rope_halves"])
    cases = []
    # the first case starts past 0: an answer that turns every row by one position (the first)
    # would leave x unchanged at 0 and read as no rotation at all
    for T, Dh, theta, start in [(6, 8, 10000.0, 3), (5, 16, 500000.0, 0), (4, 4, 100.0, 37),
                                (3, 64, 10000.0, 1000)]:  # fmt: skip
        x = torch.randn(T, Dh, generator=g)
        positions = torch.arange(start, start + T)
        cases.append((f"T = {T}, Dh = {Dh}, theta = {theta:g}, positions {start} to {start + T - 1}", x,
                      positions, theta))  # fmt: skip
    return cases


_ROPE_MISTAKES = [
    (
        "interleaved",
        "you paired neighbouring coordinates (2i, 2i + 1), the interleaved convention of RoFormer and Meta's original code. This exercise asks for transformers' split halves: coordinate i pairs with coordinate i + Dh/2.",
    ),
    (
        "exponent i/Dh",
        "your frequencies are theta^(-i/Dh) with i the pair index; pair i turns at w_i = theta^(-2i/Dh), chapter 8's frequencies.",
    ),
    (
        "exponent 4i/Dh",
        "your frequencies are theta^(-4i/Dh) with i the pair index: you doubled i twice (`torch.arange(0, Dh, 2)` already holds 2i, the exponent's numerator). Pair i turns at w_i = theta^(-2i/Dh).",
    ),
    (
        "multiplied",
        "your frequencies grow with i (theta^(+2i/Dh)): divide by theta^(2i/Dh), so that w_0 = 1 and the last pairs turn slowly.",
    ),
    (
        "backwards",
        "you turn each pair by -m w_i: (a, b) -> (a cos + b sin, -a sin + b cos). Scores still depend on m - n only, but with the opposite sign of the offset: every key appears at the mirrored offset, as if it came after its query, so a checkpoint trained the other way finds none of its positional patterns where it learned them.",
    ),
    (
        "from 1",
        "your first row is rotated as position m + 1: use the positions you are given as they are (the first token of a prompt sits at 0).",
    ),
    (
        "pairs from 1",
        "your fastest pair does not turn one radian per position: your frequencies are theta^(-2(i + 1)/Dh), the pairs counted from 1. Pair 0 turns at w_0 = theta^0 = 1, so the fastest pair turns one radian per position whatever theta is.",
    ),
    (
        "one angle",
        "every pair turns by the same angle m: each pair i has its own frequency w_i = theta^(-2i/Dh).",
    ),
    (
        "positions ignored",
        "you turned row t by the angle t w_i, its index in x, not by positions[t]: the positions need not start at 0 (a cached generation goes on from the prompt's length), so use the ones you are given.",
    ),
    (
        "angles interleaved",
        "your pairs are the split halves, but your angles are laid out for neighbouring pairs (pair i's angle at coordinates 2i and 2i + 1): coordinates i and i + Dh/2 then turn by different angles. In the split-halves layout both coordinates of pair i turn by m w_i, so the second half of the angles repeats the first.",
    ),
]


def _exponent_message(message: str, Dh: int, theta: float) -> str:
    """The message of the exponent i/Dh, with the slowest pair's factors for this case: it should turn
    theta^(1 - 2/Dh) times slower than the fastest, and theta^(-i/Dh) gives theta^(1/2 - 1/Dh)."""
    right, yours = (
        f"{v:,.0f}" if v >= 100 else f"{v:.1f}"
        for v in (theta ** (1 - 2 / Dh), theta ** (0.5 - 1 / Dh))
    )
    return (
        f"{message} Here the slowest pair, i = Dh/2 - 1 = {Dh // 2 - 1}, should turn theta^(1 - 2/Dh)"
        f" = {right} times slower than the fastest; yours turns theta^(1/2 - 1/Dh) = {yours} times"
        f" slower, so its wavelength is {yours} times too short."
    )


_refuse_rope = refusing("apply_rope", "; write the rotation yourself, then compare")


_refuse_repeat_kv = refusing("repeat_kv", ", which the exercise asks you to write yourself")


_refuse_rmsnorm = refusing("RMSNorm", ", which the exercise asks you to write yourself")


_refuse_swiglu = refusing("SwiGLU", ", which the exercise asks you to write yourself")


# another library's copy of what an exercise forbids (course review s15, S3): any library's is refused
_refuse_hf_rope = refusing(
    "apply_rotary_pos_emb", ": no library's may be used; write it yourself", whose="transformers'"
)
_refuse_hf_rotate = refusing(
    "rotate_half", ": no library's may be used; write it yourself", whose="transformers'"
)
_refuse_hf_repeat_kv = refusing(
    "repeat_kv", ": no library's may be used; write it yourself", whose="transformers'"
)
_refuse_torch_rmsnorm = refusing(
    "rms_norm (or RMSNorm)", ": no library's may be used; write it yourself", whose="torch's"
)
_refuse_hf_rmsnorm = refusing(
    "RMSNorm", ": no library's may be used; write it yourself", whose="transformers'"
)
_refuse_hf_t5norm = refusing(
    "RMSNorm (the T5 family's LayerNorm is one)",
    ": no library's may be used; write it yourself",
    whose="transformers'",
)
# the T5 family's "LayerNorm" is an exact RMSNorm (no mean, no bias) under another name (course-kit
# review s17, M1): each checkpoint's class that transformers has (4.x: all seven)
_T5_NORMS = (
    "T5LayerNorm",
    "LongT5LayerNorm",
    "MT5LayerNorm",
    "UMT5LayerNorm",
    "SwitchTransformersLayerNorm",
    "Pop2PianoLayerNorm",
    "UdopLayerNorm",
)
_refuse_hf_mlp = refusing(
    "gated MLP (SwiGLU)", ": no library's may be used; write it yourself", whose="transformers'"
)


# every checkpoint's module of transformers (modeling_llama, modeling_qwen3, ...) has its own copy
_TRANSFORMERS = "transformers.models.*.modeling_*"

# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The library function the exercise asks to write is refused under any name (a wrapper too).
# Another library's identical function is refused too (course review s15, S3: transformers' repeat_kv,
# apply_rotary_pos_emb and torch's rms_norm got full marks), a pattern's modules as the answer imports
# them (tools/sandbox.py, _targets).
REFUSALS = {
    "check_rope_halves": [
        ("lib.rope.apply_rope", None, _refuse_rope),
        (f"{_TRANSFORMERS}.apply_rotary_pos_emb", None, _refuse_hf_rope),
        (f"{_TRANSFORMERS}.rotate_half", None, _refuse_hf_rotate),
    ],
    "check_expand_kv": [
        ("lib.llama.repeat_kv", None, _refuse_repeat_kv),
        (f"{_TRANSFORMERS}.repeat_kv", None, _refuse_hf_repeat_kv),
    ],
    # classes: their forward is refused, so an instance built in the answer (weights copied in)
    # refuses too
    "check_ffn_sublayer": [
        ("lib.llama.RMSNorm.forward", None, _refuse_rmsnorm),
        ("lib.llama.SwiGLU.forward", None, _refuse_swiglu),
        ("torch.nn.functional.rms_norm", None, _refuse_torch_rmsnorm),
        ("torch.rms_norm", None, _refuse_torch_rmsnorm),  # and torch.ops.aten.rms_norm, any name
        ("torch._fused_rms_norm", None, _refuse_torch_rmsnorm),  # where torch has it
        ("torch.nn.RMSNorm.forward", None, _refuse_torch_rmsnorm),
        (f"{_TRANSFORMERS}.*RMSNorm.forward", None, _refuse_hf_rmsnorm),
        *((f"{_TRANSFORMERS}.{norm}.forward", None, _refuse_hf_t5norm) for norm in _T5_NORMS),
        (f"{_TRANSFORMERS}.*MLP.forward", None, _refuse_hf_mlp),
    ],
}  # fmt: skip


DEFAULT_THETA = 10000.0  # rope_halves's default base, the one an answer that ignores theta uses


def _mistakes_passing_rope() -> list[str]:
    """The known mistakes (``_ROPE_MISTAKES``) whose rotations are right on every case."""
    cases = _rope_cases()

    def right(mistake: str) -> bool:
        return all(
            (rope_reference(x, pos, theta, mistake=mistake) - rope_reference(x, pos, theta))
            .abs()
            .max()
            <= TOLERANCE
            for _, x, pos, theta in cases
        )

    return passing_everywhere(_ROPE_MISTAKES, right)


@checker("rope_halves")
def check_rope_halves(rope_halves: Any) -> str:
    """Check ``rope_halves(x [T, Dh], positions [T], theta) -> [T, Dh]`` against
    :func:`rope_reference` to 1e-4 on hidden cases (Dh from 4 to 64, positions up to 1002)."""
    attempted(rope_halves, "rope_halves")
    with refused(
        REFUSALS["check_rope_halves"], rope_halves
    ) as again:  # what the course grader refuses
        return _check_rope_cases(rope_halves, again)


def _same_dtype(returned: Tensor, x: Tensor, case: str) -> None:
    """Fail if a right rotation came back in another dtype than ``x``'s (reader s41: float64 passed)."""
    dtype = getattr(returned, "dtype", x.dtype)  # a tensor subclass or a tensor, by expect_tensor
    if dtype != x.dtype:
        fail(
            f"on the case {case}, your rotation is right but comes back as {dtype} where x is {x.dtype}: in the model, queries and keys in another dtype than the values and weights make torch refuse the next matrix product (or double the memory). Compute the angles in any precision you like, and return a tensor of x's dtype."
        )


def _check_rope_cases(rope_halves: Any, again: Any) -> str:
    for description, x, positions, theta in _rope_cases():
        again()  # modules the answer imported on its last call refuse too
        case = f"'{description}'"
        returned = call(rope_halves, x, positions, theta, name="rope_halves", case=case)
        result = expect_tensor(returned, tuple(x.shape), name="rope_halves", case=case)
        expected = rope_reference(x, positions, theta)
        if (result - expected).abs().max() <= TOLERANCE:
            _same_dtype(returned, x, case)
            continue
        for mistake, message in _ROPE_MISTAKES:
            if (
                result - rope_reference(x, positions, theta, mistake=mistake)
            ).abs().max() <= TOLERANCE:
                if mistake == "exponent i/Dh":
                    message = _exponent_message(message, x.shape[-1], theta)
                fail(f"on the case {case}, {message}")
        for j, p in enumerate(positions.tolist()):  # one position for every row
            same = rope_reference(x, positions.new_full(positions.shape, p), theta)
            if p and (result - same).abs().max() <= TOLERANCE:
                fail(
                    f"on the case {case}, every row is turned by the same position, positions[{j}] = {p}: the positions of the other rows were ignored. Row t turns by its own position, positions[t]."
                )
        if (result - x.double()).abs().max() <= TOLERANCE:
            fail(f"on the case {case}, you returned x unchanged: each pair must turn by m w_i.")
        if (
            theta != DEFAULT_THETA
            and (result - rope_reference(x, positions, DEFAULT_THETA)).abs().max() <= TOLERANCE
        ):
            fail(
                f"on the case {case}, your result does not change with theta: it is the rotation for theta = 10,000 whatever theta is given. The frequencies w_i = theta^(-2i/Dh) use the argument `theta`."
            )
        fail(f"on the case {case}, {largest_difference(result, expected)}.")
    return "your rotation equals transformers' convention on every case, positions up to 1002"


# --- exercise 2: grouped-query attention's key/value heads --------------------------------------------


def _expand_cases() -> list[tuple[str, Tensor, int]]:
    g = torch.Generator().manual_seed(SEEDS["expand_kv"])
    return [
        (
            f"B = {B}, Hkv = {Hkv}, T = {T}, Dh = {Dh}, n_heads = {H}",
            torch.randn(B, Hkv, T, Dh, generator=g),
            H,
        )  # fmt: skip
        for B, Hkv, T, Dh, H in [(2, 4, 5, 2, 8), (1, 2, 3, 4, 8), (1, 1, 4, 3, 4), (2, 3, 2, 2, 3)]
    ]


def _wrong_group(result: Tensor, k: Tensor, H: int, case: str) -> None:
    """Fail with the number of repeats ``result`` [B, ?, T, Dh] used, if it is ``k``'s heads each
    repeated some wrong number of times G' (n_heads in place of G, Hkv in place of G...)."""
    B, Hkv, T, Dh = k.shape
    n = result.shape[1]
    if tuple(result.shape) != (B, n, T, Dh) or n % Hkv or not result.is_floating_point():
        return
    repeats = n // Hkv
    if torch.equal(result.double(), k.double().repeat_interleave(repeats, dim=1)) or torch.equal(
        result.double(), k.double().repeat(1, repeats, 1, 1)
    ):
        done = (
            f"you returned the Hkv = {Hkv} key/value heads as they are"
            if repeats == 1
            else f"you repeated each of the Hkv = {Hkv} key/value heads {repeats} times"
        )
        fail(
            f"on the case {case}, your result has shape {list(result.shape)}, {n} heads where n_heads = {H} were asked for: {done}. The number of query heads that share a key/value head is G = n_heads / Hkv = {H // Hkv}, each key/value head's number of copies."
        )


@checker("expand_kv")
def check_expand_kv(expand_kv: Any) -> str:
    """Check ``expand_kv(k [B, Hkv, T, Dh], n_heads) -> [B, n_heads, T, Dh]``: query head h reads key
    head h // (n_heads / Hkv), as every checkpoint's ``repeat_kv``; exactly (it only copies)."""
    attempted(expand_kv, "expand_kv")
    with refused(REFUSALS["check_expand_kv"], expand_kv) as again:  # what the course grader refuses
        return _check_expand_cases(expand_kv, again)


def _check_expand_cases(expand_kv: Any, again: Any) -> str:
    for description, k, H in _expand_cases():
        again()  # modules the answer imported on its last call refuse too
        case = f"'{description}'"
        B, Hkv, T, Dh = k.shape
        result = call(expand_kv, k, H, name="expand_kv", case=case)
        if isinstance(result, Tensor) and result.shape == (B, Hkv, T * (H // Hkv), Dh) and H > Hkv:
            fail(
                f"on the case {case}, you repeated along the time axis (dim 2): the result has {T * (H // Hkv)} keys per head. Repeat the heads, dim 1."
            )
        if isinstance(result, Tensor) and result.dim() == 4 and result.shape[1] != H:
            _wrong_group(result, k, H, case)
        result = expect_tensor(result, (B, H, T, Dh), name="expand_kv", case=case)
        expected = k.double().repeat_interleave(H // Hkv, dim=1)
        if torch.equal(result, expected):
            continue
        if Hkv >= H // Hkv and torch.equal(result, k.double()[:, torch.arange(H) // Hkv]):
            fail(
                f"on the case {case}, query head h reads key head h // Hkv = h // {Hkv}: divide by the size of a group instead, G = n_heads / Hkv = {H // Hkv} (the number of query heads that share one key/value head), so that query head h reads key head h // G."
            )
        G = H // Hkv
        if G > 1 and torch.equal(
            result, k.double().repeat_interleave(G, dim=2).reshape(B, H, T, Dh)
        ):
            fail(
                f"on the case {case}, you repeated each key along the time axis (dim 2), then reshaped: the shape is right, but the reshape cuts each head's {G * T} repeated keys into {G} heads of {T}, so query head 0 reads the positions {', '.join(str(t // G) for t in range(T))}, not 0 to {T - 1}. Repeat the heads, dim 1, and leave time alone."
            )
        if torch.equal(result, k.double().repeat(1, H // Hkv, 1, 1)):
            fail(
                f"on the case {case}, your key/value heads come tiled, {', '.join(str(i % Hkv) for i in range(2 * Hkv))}, ... (as `repeat` or `cat` lays them out), so query head 1 reads key head 1, not key head 1 // G = 0."
            )
        fail(f"on the case {case}, {largest_difference(result, expected)}.")
    return "query head h reads key/value head h // G on every case, one key/value head for all (multi-query) and one per query head (G = 1) included, as the checkpoints do"


# --- exercise 3: the feed-forward sub-layer -------------------------------------------------------------


def ffn_reference(x, weight, gate, up, down, eps=1e-6, *, mistake: str | None = None) -> Tensor:
    """x + down(silu(gate(h)) * up(h)) with h = RMSNorm(x) * weight, in float64 (weights in the
    nn.Linear layout [out, in]). ``mistake``: "mean subtracted" (LayerNorm without bias), "std"
    (x divided by its standard deviation, torch's ``std``: centred inside, D - 1; "std, 1/D" with
    1/D), "sum" (the sum
    of the squares for their mean), "eps outside" (x / (RMS + eps)), "swapped" (silu on up, gate
    as the value), "silu after" (silu of the product), "gelu" (GELU for SiLU), "no residual",
    "residual on h" (h + ..., not x + ...), "no weight", "sigmoid" (a sigmoid gate: plain GLU),
    "no up" (silu(gate h) alone, without the value), "rms over rows" (the mean square over dimension
    0, the tokens), "rms over all" (one mean square for the whole of x), "weight added" (h + weight
    for h * weight). A wrong ``eps`` is the argument."""
    x, weight, gate, up, down = (t.detach().double() for t in (x, weight, gate, up, down))
    centred = x - x.mean(-1, keepdim=True) if mistake == "mean subtracted" else x
    ms = centred.pow(2).mean(-1, keepdim=True)  # [T, 1]
    if mistake == "rms over rows":
        ms = x.pow(2).mean(0, keepdim=True)  # [1, D]
    if mistake == "rms over all":
        ms = x.pow(2).mean()
    if mistake == "sum":
        ms = x.pow(2).sum(-1, keepdim=True)
    if mistake in ("std", "std, 1/D"):
        ms = x.var(-1, keepdim=True, correction=1 if mistake == "std" else 0)
    h = centred / (ms.sqrt() + eps if mistake == "eps outside" else (ms + eps).sqrt())
    if mistake == "weight added":
        h = h + weight
    elif mistake != "no weight":
        h = h * weight
    g, v = h @ gate.T, h @ up.T  # [..., F]
    if mistake == "swapped":
        g, v = v, g
    if mistake == "no up":
        v = torch.ones_like(v)
    act = {"gelu": F.gelu, "sigmoid": torch.sigmoid}.get(mistake, F.silu)(g)
    out = (F.silu(g * v) if mistake == "silu after" else act * v) @ down.T  # [..., D]
    if mistake == "no residual":
        return out
    return (h if mistake == "residual on h" else x) + out


def _ffn_cases():
    g = torch.Generator().manual_seed(SEEDS["ffn_sublayer"])
    cases = []
    # the last two cases have rows of tiny root mean square, about 1e-3 and 1e-5, where eps = 1e-6 is
    # not negligible: a wrong eps, or eps outside the square root, shows only there
    for T, D, Fw, scale in [(3, 8, 24, 1), (5, 16, 44, 1), (2, 4, 12, 1), (4, 8, 24, 1e-3),
                            (3, 16, 44, 1e-5)]:  # fmt: skip
        # a mean far from 0, as residual streams have; root mean square ~2 * scale
        x = (torch.randn(T, D, generator=g) * 2 + 0.7) * scale / 2
        weight = 1 + 0.3 * torch.randn(D, generator=g)
        gate, up = (
            torch.randn(Fw, D, generator=g) / D**0.5,
            torch.randn(Fw, D, generator=g) / D**0.5,
        )
        down = torch.randn(D, Fw, generator=g) / Fw**0.5
        size = f", rows of root mean square ~{scale:g}" if scale != 1 else ""
        cases.append((f"T = {T}, D = {D}, F = {Fw}{size}", (x, weight, gate, up, down)))
    return cases


_FFN_MISTAKES = [
    (
        "mean subtracted",
        "you subtracted the mean before dividing: that is LayerNorm without its bias. RMSNorm divides x itself by its root mean square, sqrt(mean(x^2) + eps).",
    ),
    (
        "std",
        "you divided x by its standard deviation: a standard deviation subtracts the mean inside (and torch's std divides by D - 1). RMSNorm divides by the root mean square of x itself, sqrt(mean(x^2) + eps), no mean subtracted anywhere.",
    ),
    (
        "std, 1/D",
        "you divided x by its standard deviation: a standard deviation subtracts the mean inside. RMSNorm divides by the root mean square of x itself, sqrt(mean(x^2) + eps), no mean subtracted anywhere.",
    ),
    (
        "sum",
        "you divided by the root of the sum of the squares (the norm of the row): RMSNorm takes their mean, so your rows come out sqrt(D) times too small.",
    ),
    (
        "eps outside",
        "you added eps outside the square root, x / (sqrt(mean(x^2)) + eps): RMSNorm adds it inside, sqrt(mean(x^2) + eps). The two agree on ordinary rows and differ on rows as small as this case's, whose mean square is near eps.",
    ),
    (
        "swapped",
        "the gate and the value are swapped: silu goes on gate_proj's output (x W), which then scales up_proj's output (x V): silu(h @ gate.T) * (h @ up.T).",
    ),
    (
        "silu after",
        "you applied SiLU to the product of the two projections: SwiGLU applies it to the gate's projection alone, and that gate then multiplies the value's projection.",
    ),
    ("gelu", "you used GELU; SwiGLU's gate is Swish_1 = SiLU, x sigmoid(x) (F.silu)."),
    (
        "no residual",
        "you returned the sub-layer's output alone: the pre-norm sub-layer adds it to x (the residual connection).",
    ),
    (
        "residual on h",
        "you added the sub-layer's output to the normalized h: the residual connection adds it to the input x, the stream itself, which the normalization only reads.",
    ),
    ("no weight", "you left out RMSNorm's gain `weight`: multiply the normalized x by it."),
    (
        "weight added",
        "you added RMSNorm's gain `weight` to the normalized x: it is a gain, a factor per feature; multiply by it, h = x / RMS(x) * weight.",
    ),
    (
        "rms over rows",
        "you took the mean square over dimension 0, down the tokens: RMSNorm normalizes each token by the root mean square of its own D features, mean(x^2) over the last dimension (-1, keepdim=True).",
    ),
    (
        "rms over all",
        "you divided the whole of x by one root mean square, over all its numbers: RMSNorm normalizes each token (row) by the root mean square of its own D features, mean(x^2) over the last dimension (-1, keepdim=True).",
    ),
    (
        "sigmoid",
        "your gate is a sigmoid, sigmoid(h @ gate.T): that is the plain GLU. SwiGLU's gate is Swish_1 = SiLU, z sigmoid(z) (F.silu).",
    ),
    (
        "no up",
        "your answer leaves out up: SwiGLU multiplies the gate, silu(h @ gate.T), by the value's projection h @ up.T before down.",
    ),
]

# epsilons a reader may use instead of 1e-6: none, and 1, 2, 3 or 5 times a power of ten from 1e-9
# to 0.5 (1e-5 is LayerNorm's default, 1e-12 BERT's)
_WRONG_EPS = (0.0, 1e-12) + tuple(
    m * 10.0**p for p in range(-9, 0) for m in (1, 2, 3, 5) if (m, p) != (1, -6)
)


def _eps_message(eps: float) -> str:
    if eps == 0:
        return "your RMSNorm has no eps (eps = 0): the exercise asks for eps = 1e-6 inside the square root, sqrt(mean(x^2) + eps). It changes little on ordinary rows and much on rows whose mean square is near eps or below, as on this case (and it keeps an all-zero row from dividing by 0)."
    return f"your RMSNorm uses eps = {eps:g}; the exercise asks for eps = 1e-6 (inside the square root). The difference grows as a row's mean square comes down towards eps."


def _closest_mistake(result: Tensor, args: tuple) -> str | None:
    """The message of the usual mistake (or wrong eps) whose answer is nearest ``result``, if within
    the tolerance: the nearest, since on a row of tiny norm, eps = 0 and eps outside the square
    root differ by less than either differs from the right answer."""
    answers = [(message, ffn_reference(*args, mistake=m)) for m, message in _FFN_MISTAKES]
    answers += [(_eps_message(eps), ffn_reference(*args, eps=eps)) for eps in _WRONG_EPS]
    gaps = [((result - answer).abs().max().item(), message) for message, answer in answers]
    gap, message = min(gaps, key=lambda pair: pair[0])  # the first of equals: the list's order
    return message if gap <= 1e-4 else None


def _mistakes_passing_ffn() -> list[str]:
    """The known mistakes (``_FFN_MISTAKES``, a wrong eps) whose outputs are right on every case."""
    cases = [args for _, args in _ffn_cases()]
    answers = {m: (lambda a, m=m: ffn_reference(*a, mistake=m)) for m, _ in _FFN_MISTAKES}
    answers |= {f"eps = {eps:g}": (lambda a, e=eps: ffn_reference(*a, eps=e)) for eps in _WRONG_EPS}

    def right(name: str) -> bool:
        return all((answers[name](a) - ffn_reference(*a)).abs().max() <= 1e-4 for a in cases)

    return passing_everywhere(list(answers), right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {
    "rope_halves": _mistakes_passing_rope,
    "ffn_sublayer": _mistakes_passing_ffn,
}


@checker("ffn_sublayer")
def check_ffn_sublayer(ffn_sublayer: Any) -> str:
    """Check ``ffn_sublayer(x [T, D], weight [D], gate [F, D], up [F, D], down [D, F]) -> [T, D]``
    = x + down(silu(gate h) * up h), h = RMSNorm(x) (eps 1e-6), against :func:`ffn_reference`, on
    ordinary rows and on rows of root mean square about 1e-3 and 1e-5, where eps matters."""
    attempted(ffn_sublayer, "ffn_sublayer")
    with refused(
        REFUSALS["check_ffn_sublayer"], ffn_sublayer
    ) as again:  # what the course grader refuses
        return _check_ffn_cases(ffn_sublayer, again)


def _check_ffn_cases(ffn_sublayer: Any, again: Any) -> str:
    for description, args in _ffn_cases():
        again()  # modules the answer imported on its last call refuse too
        case = f"'{description}'"
        result = call(ffn_sublayer, *args, name="ffn_sublayer", case=case)
        result = expect_tensor(result, tuple(args[0].shape), name="ffn_sublayer", case=case)
        expected = ffn_reference(*args)
        if (result - expected).abs().max() <= 1e-4:
            continue
        message = _closest_mistake(result, args)
        if message:
            fail(f"on the case {case}, {message}")
        fail(f"on the case {case}, {largest_difference(result, expected)}.")
    return "your x + SwiGLU(RMSNorm(x)) equals the library's sub-layer on every case: widths D = 4 to 16, and rows of root mean square about 1e-3 and 1e-5, where eps matters"


# --- exercise 4: how much a cache holds, how far a window reaches ---------------------------------------

CONTEXT = 40_960  # Qwen3 0.6B's max_position_embeddings
REACH, LAYERS = 32_768, 32  # the positions the stack must reach, Mistral 7B v0.1's layers

# Part 1's numbers: Qwen3 0.6B's (the book's), or, in a course with per-student variants
# (tools/make_course.py --variants; course-kit review s17, S4), each student's own model of Qwen3's
# kind, drawn from these (realistic sizes: 16 to 40 layers, 2 to 8 key/value heads of 64 to 128
# numbers, H = 2 Hkv query heads as Qwen3's, contexts of 8K to 128K tokens). Parts 2 and 3 keep
# Mistral 7B v0.1's.
VARIANT_BOOK = {"n_layers": 28, "n_kv_heads": 8, "head_dim": 128, "context": CONTEXT}
VARIANT_CHOICES = {
    "n_layers": [16, 20, 24, 28, 32, 36, 40],
    "n_kv_heads": [2, 4, 8],
    "head_dim": [64, 80, 96, 128],
    "context": [8_192, 16_384, 32_768, 40_960, 65_536, 131_072],
}
VARIANTS = {4: "cache_variant"}  # exercise -> the function that gives a student their numbers


def cache_variant() -> dict[str, int]:
    """Part 1 of exercise 4's numbers for the current reader: layers, key/value heads Hkv, their
    width Dh, the context in tokens, and H = 2 Hkv query heads; Qwen3 0.6B's for a reader of the
    book, a student's own in a course with variants."""
    numbers = variant("ch17 cache size", VARIANT_CHOICES, VARIANT_BOOK)
    return {**numbers, "n_heads": 2 * numbers["n_kv_heads"]}


def _cache_config(numbers: dict[str, int]) -> LlamaConfig:
    """Qwen3 0.6B with part 1's numbers (the book's: Qwen3 0.6B itself)."""
    return LlamaConfig.qwen3_0_6b(
        num_hidden_layers=numbers["n_layers"],
        num_key_value_heads=numbers["n_kv_heads"],
        num_attention_heads=numbers["n_heads"],
        head_dim=numbers["head_dim"],
        max_position_embeddings=numbers["context"],
    )


def _long_context_answers() -> dict[str, float]:
    """The three right answers, from the library's presets (private: a public function that returns
    them is an answer a student could import, course review s15, S1): the cache of Qwen3 0.6B (or of
    the student's variant, :func:`cache_variant`) at its config's position limit in GiB (bfloat16), the smallest
    W with L (W - 1) >= 32,768 at L = 32, and the rolling cache of Mistral 7B v0.1 with that window
    (W - 1 positions kept) in MiB."""
    numbers = cache_variant()
    window = -(-REACH // LAYERS) + 1  # W - 1 >= 32,768 / 32
    mistral = LlamaConfig.mistral_7b(sliding_window=window)
    return {
        "qwen3_cache_gib": kv_cache_bytes_per_token(_cache_config(numbers))
        * numbers["context"]
        / 2**30,
        "smallest_window": window,
        "window_cache_mib": kv_cache_bytes_per_token(mistral) * (window - 1) / 2**20,
    }


def _near(value: float, target: float, rel: float = 1e-3) -> bool:
    return abs(value - target) <= rel * abs(target)


def _how_far(value: float, right: float) -> str:
    """How far ``value`` is from ``right``: "N times too large/small" from a factor of 2 on, else a
    percentage (to 0.01% under 0.1%)."""
    ratio = value / right
    if ratio >= 2 or 0 < ratio <= 0.5:
        factor = float(f"{max(ratio, 1 / ratio):.3g}")  # three significant digits: 1,000, 2.5
        times = f"{factor:,.0f}" if factor >= 100 else f"{factor:g}"
        return f"{times} times {'too large' if ratio > 1 else 'too small'}"
    off = abs(ratio - 1)
    return f"{'too large' if ratio > 1 else 'too small'} by {off:.{1 if off >= 0.001 else 2}%}"


def _check_qwen(gib: float, right: float) -> None:
    """qwen3_cache_gib within 1% of ``right``, the cache for the reader's :func:`cache_variant`."""
    if _near(gib, right, 0.01):
        return
    n, book = cache_variant(), {**VARIANT_BOOK, "n_heads": 16}
    L, Hkv, Dh, H, context = (
        n[k] for k in ("n_layers", "n_kv_heads", "head_dim", "n_heads", "context")
    )
    mistakes = [
        (2 * right, f"twice too large, one factor 2 too many: either you counted the H = {H} query heads where the cache stores the Hkv = {Hkv} key/value heads, or 4 bytes a number where bfloat16 takes 2."),
        (4 * right, f"four times too large: the cache keeps the Hkv = {Hkv} key/value heads, not the H = {H} query heads, and bfloat16 takes 2 bytes a number, not 4."),
        (right / 2, "half the size: the cache keeps two tensors per layer, the keys and the values."),
        (right / L, f"the cache of one layer: every one of the {L} layers keeps its own keys and values."),
        (right * 2**30 / 1e9, "that is in GB (10^9 bytes); the question asks for GiB, 2^30 bytes."),
        (right * 1024, "that is in MiB; the question asks for GiB (1 GiB = 1,024 MiB)."),
        (right * 2**20, "that is in KiB; the question asks for GiB (1 GiB = 2^20 KiB)."),
        (right * 2**30, "that is in bytes; the question asks for GiB: divide by 2^30."),
    ]  # fmt: skip
    if n != book:  # a student with numbers of their own who answered for the book's (first: the
        # published answer, even where it is also a slip on the student's numbers)
        mistakes.insert(
            0,
            (
                kv_cache_bytes_per_token(_cache_config(book)) * CONTEXT / 2**30,
                f"that is the cache of Qwen3 0.6B itself (the book's numbers); yours are {L} layers, Hkv = {Hkv} heads of Dh = {Dh} and {context:,} tokens, printed under the exercise's statement.",
            ),
        )
    if context != REACH:
        mistakes.append(
            (
                right * REACH / context,
                f"that is for 32,768 tokens; the exercise asks for {context:,}, "
                + (
                    "Qwen3 0.6B's position limit (max_position_embeddings)."
                    if n == book
                    else "your model's context."
                ),
            )
        )
    for wrong, message in mistakes:
        if _near(gib, wrong, 0.01):
            fail(f"qwen3_cache_gib = {fmt(gib)}: {message}")
    fail(
        f"qwen3_cache_gib = {fmt(gib)} is {_how_far(gib, right)}. Per token the cache holds 2 (keys and values) x layers x Hkv x Dh numbers of 2 bytes; multiply by the tokens and divide by 2^30."
    )


def _check_window(window: float, right: int) -> None:
    if window == right:
        return
    if window != int(window):
        fail(f"smallest_window = {window:,}: a window is a whole number of positions.")
    reach = LAYERS * (int(window) - 1)
    if window == REACH or window == REACH + 1:
        fail(
            f"smallest_window = {window:,.0f} reaches 32,768 positions in one layer; each of the {LAYERS} layers reaches W - 1 positions further back, so the stack reaches {LAYERS} (W - 1)."
        )
    if window < right:
        fail(
            f"smallest_window = {window:,.0f} is too small: a window of W positions includes the token itself, so each layer reaches only W - 1 positions further back, and {LAYERS} layers with this window fall short of 32,768."
        )
    fail(
        f"smallest_window = {window:,.0f} reaches {reach:,} positions, more than 32,768: a smaller window already reaches them."
    )


def _check_window_cache(mib: float, right: float, per_token: int) -> None:
    if abs(mib - right) <= 0.01:
        return
    own = LlamaConfig.mistral_7b().sliding_window  # the window Mistral 7B v0.1 was released with
    mistakes = [
        (per_token * (right_window := round(right * 2**20 / per_token) + 1) / 2**20, f"that keeps W = {right_window:,} positions per layer: between two steps the rolling cache keeps W - 1, and the new token adds its own key."),
        (per_token * (right_window - 2) / 2**20, f"that keeps {right_window - 2:,} positions per layer, the cache of a window of {right_window - 1:,}, which falls {REACH - LAYERS * (right_window - 2):,} positions short of {REACH:,}; the smallest window is {right_window:,}, and its cache keeps W - 1 = {right_window - 1:,}."),
        (per_token * REACH / 2**20, "that keeps 32,768 positions per layer, how far information travels through the stack; each layer's rolling cache keeps only the W - 1 positions its next query can see."),
        (per_token * (own - 1) / 2**20, f"that is the rolling cache of Mistral 7B v0.1's own window of {own:,} (W - 1 = {own - 1:,} positions); use the smallest window that reaches 32,768 positions (your smallest_window), and keep its W - 1 positions."),
        (per_token * own / 2**20, f"four times too large. Either you kept {own:,} positions, Mistral 7B v0.1's own window (the chapter's table prints its cache as {per_token * own / 2**20:g} MiB): use the smallest window that reaches 32,768 positions (your smallest_window), and keep its W - 1 positions; or you counted its H = 32 query heads, where it caches only its Hkv = 8 key/value heads."),
        (2 * right, "twice too large, one factor 2 too many: either you counted 4 bytes a number (bfloat16 takes 2 bytes a number), or the keys and the values twice (the factor 2 for the two tensors belongs in once)."),
        (right / 2, "half the size: the cache keeps two tensors per layer, the keys and the values."),
        (right / LAYERS, f"the cache of one layer: each of the {LAYERS} layers keeps its own."),
    ]  # fmt: skip
    for wrong, message in mistakes:  # within half a position: a rounded wrong answer is named too
        if abs(mib - wrong) < per_token / 2**21:
            fail(f"window_cache_mib = {fmt(mib)}: {message}")
    units = [  # the right cache in another unit: within 1%, or 0.125 GiB given to two decimals
        (right / 1024, "that is in GiB; the question asks for MiB (1 GiB = 1,024 MiB)."),
        (right * 1024, "that is in KiB; the question asks for MiB (1 MiB = 1,024 KiB)."),
        (right * 2**20 / 1e6, "that is in MB (10^6 bytes); the question asks for MiB, 2^20 bytes."),
        (right * 2**20, "that is in bytes; the question asks for MiB: divide by 2^20."),
    ]  # fmt: skip
    for wrong, message in units:
        if abs(mib - wrong) < max(0.01 * wrong, 0.006):
            fail(f"window_cache_mib = {fmt(mib)}: {message}")
    fail(
        f"window_cache_mib = {fmt(mib)} is {_how_far(mib, right)}. Each layer keeps W - 1 positions of Hkv key and value heads of Dh numbers, 2 bytes each; 1 MiB is 2^20 bytes."
    )


@checker("a long context")
def check_long_context(qwen3_cache_gib: Any, smallest_window: Any, window_cache_mib: Any) -> str:
    """Check the predictions of exercise 4 against :func:`_long_context_answers` (in a course with
    per-student variants, part 1's model is the student's own, :func:`cache_variant`): the GiB to 1%
    (3 significant digits), the window exactly, the MiB to 0.01 MiB (one position of the cache is
    0.125 MiB, so 128 and 128.125 must be told apart). Each usual slip (H for Hkv, 4 bytes, keys
    without values, one layer, GB, W kept for W - 1, MiB given in GiB, KiB, MB or bytes, the cache of a window one too small, the reach
    for the cache, Mistral's own window of 4,096 kept instead of the new one) is named, also when rounded (within half a position); every
    wrong prediction is named at once."""
    given = (qwen3_cache_gib, smallest_window, window_cache_mib)
    names = ("qwen3_cache_gib", "smallest_window", "window_cache_mib")
    if all(v is None for v in given):
        not_attempted(
            "write your three predictions (qwen3_cache_gib, smallest_window and window_cache_mib) in the cell above, then run this cell again."
        )
    right = _long_context_answers()
    per_token = kv_cache_bytes_per_token(LlamaConfig.mistral_7b())
    values = {n: (None if v is None else expect_number(v, n)) for n, v in zip(names, given)}
    checks = {
        "qwen3_cache_gib": lambda v: _check_qwen(v, right["qwen3_cache_gib"]),
        "smallest_window": lambda v: _check_window(v, right["smallest_window"]),
        "window_cache_mib": lambda v: _check_window_cache(v, right["window_cache_mib"], per_token),
    }
    wrong = failures(checks, values)  # every wrong prediction at once, each naming its variable
    if wrong:  # raised, not fail(): the mistakes are those named above, none new
        raise CheckFailed(" ".join(wrong))
    missing = [n for n in names if values[n] is None]
    if missing:
        not_attempted(f"what you gave is right; now give {' and '.join(missing)}.")
    numbers = cache_variant()
    weights = count_parameters(_cache_config(numbers)) * 2 / 2**30  # bfloat16, GiB
    book = numbers == {**VARIANT_BOOK, "n_heads": 16}
    model = "Qwen3 0.6B's cache" if book else "Your model's cache (Qwen3 0.6B with your numbers)"
    return f"{model} at {numbers['context']:,} tokens is {right['qwen3_cache_gib']:g} GiB per sequence, {right['qwen3_cache_gib'] / weights:.1f} times its weights in bfloat16 ({weights:.2f} GiB); a window of {right['smallest_window']:,} positions lets the 32 layers reach 32,768 positions, with a rolling cache of only {right['window_cache_mib']:g} MiB."
