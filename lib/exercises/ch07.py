"""Checkers for the exercises of the chapter *Multi-head attention*.

- :func:`check_one_head`: exercise 1 (predict, then check): the bracket model with a single head.
- :func:`check_separate_heads`: exercise 2 (implement): the heads as separate matrices, as the formula
  writes them, holding the weights of a ``lib.attention.MultiHeadAttention``.

Exercise 3 (removing pairs of heads, change and explain) is answered in prose; the chapter's solution
computes it.
"""

from __future__ import annotations

import copy
import math
from typing import Any, NoReturn

import torch
from torch import Tensor, nn

from lib.attention import MultiHeadAttention, merge_heads, split_heads

from . import (
    attempted,
    call,
    checker,
    expect_bool,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    leaves,
    not_attempted,
    refusing,
)

__all__ = ["check_one_head", "check_separate_heads"]


# --- exercise 1: one head ------------------------------------------------------------------------------------

# The chapter's BracketModel: 40 tokens, 8 positions, D = 32, a readout 32 -> 128 -> 25 classes.
VOCAB, POSITIONS, D, HIDDEN, CLASSES = 40, 8, 32, 128, 25
ATTENTION = 4 * D * D + 4 * D  # 4D^2 + 4D, for any number of heads
N_PARAMETERS = (
    VOCAB * D + POSITIONS * D + ATTENTION + (D * HIDDEN + HIDDEN) + (HIDDEN * CLASSES + CLASSES)
)


# The test set's positions 1..7 (make_dataset(2_000, seed=2): 14,000), and the 9,048 of them where the
# previous token is not the partner: where the exercise measures (accuracies' default `where`). At the
# other 4,952 one lookup gives both digits, so accuracy over all positions (where=all) is about
# SAME + DIFFER * (the exercise's measure): 0.48 for the exercise's run, against 0.197 where they differ.
TEST_POSITIONS, DIFFER_POSITIONS = 14_000, 9_048
SAME_SHARE = 1 - DIFFER_POSITIONS / TEST_POSITIONS
RUN_WHERE_DIFFER = 0.197  # the exercise's run (both seeds reset), as the chapter measures it
RUN_ALL_POSITIONS = SAME_SHARE + (1 - SAME_SHARE) * RUN_WHERE_DIFFER  # 0.481
# With one lookup learned and the other digit at chance (1 in 5), both digits are right about 20% of the
# time where the lookups differ; a run of the exercise's setup that gives more than this is not that run.
CHANCE_CEILING = 0.35


# what a count can leave out, each alone
_PARTS = {
    f"token embeddings ({VOCAB} x {D})": VOCAB * D,
    f"position vectors ({POSITIONS} x {D})": POSITIONS * D,
    "attention's four biases (4D)": 4 * D,
    f"readout's first layer ({D} x {HIDDEN} + {HIDDEN})": D * HIDDEN + HIDDEN,
    f"readout's second layer ({HIDDEN} x {CLASSES} + {CLASSES})": HIDDEN * CLASSES + CLASSES,
    f"readout's biases ({HIDDEN} + {CLASSES})": HIDDEN + CLASSES,
}


@checker("one head")
def check_one_head(n_params: Any, learns_task: Any, accuracy: Any = None) -> str:
    """Check the predictions of exercise 1: ``n_params``, the number of parameters of
    ``BracketModel(n_heads=1)``, and ``learns_task`` (True/False): does it reach 99% test accuracy in the
    chapter's 300 training steps? ``accuracy``: the reader's own measurement once trained,
    ``accuracies(one_head)["both digits"]`` (a number, or the whole dict). The two predictions are
    graded together, only once both are given, and ``learns_task`` only against the reader's run (a
    True/False confirmed or corrected before it would give the answer away)."""
    if n_params is None and learns_task is None:
        not_attempted(
            "write your two predictions (n_params and learns_task) in the cell above, then run this cell again."
        )
    if (
        n_params is None or learns_task is None
    ):  # grade the two together: a lone yes/no would be given away
        if n_params is not None:
            expect_number(n_params, "n_params")
        if learns_task is not None:
            expect_bool(learns_task, "learns_task")
        missing = "n_params" if n_params is None else "learns_task"
        not_attempted(
            f"write your prediction of {missing} too: this cell grades the two predictions together, once both are written."
        )
    n = expect_number(n_params, "n_params")
    if n != N_PARAMETERS:
        if n == ATTENTION:
            fail(
                f"n_params = {n:,.0f} is the attention layer alone (4D^2 + 4D); the model also has its embeddings, its position vectors and its readout."
            )
        if n in (
            N_PARAMETERS - ATTENTION + ATTENTION / 4,
            N_PARAMETERS - ATTENTION + 4 * ATTENTION,
        ):
            fail(
                f"n_params = {n:,.0f}: the number of heads changes no matrix. One head of width D or four of width D/4 use the same four D x D projections (4D^2 + 4D parameters)."
            )
        for part, size in _PARTS.items():
            if n == N_PARAMETERS - size:
                fail(f"n_params = {n:,.0f} leaves out the {part}; the rest of your count is right.")
        fail(
            f"n_params = {n:,.0f} is not it. Count every part of BracketModel: its token embeddings, its position vectors, its attention layer and its readout, each with its biases. The number of heads changes none of their sizes."
        )
    predicts_learning = expect_bool(learns_task, "learns_task")
    if accuracy is None:  # the same words for True and False: the run decides
        not_attempted(  # the headline names the part still to do, as in chapter 4 (reader s36b)
            "your two predictions are recorded, and n_params is right; the measurement is still to do (so this part is not complete yet): learns_task is graded against your run. Train BracketModel(n_heads=1) as the exercise says, set accuracy to accuracies(one_head)['both digits'] and run this cell again.",
            "accuracy",
        )
    if isinstance(accuracy, dict) and "both digits" in accuracy:
        accuracy = accuracy["both digits"]
    measured = expect_number(accuracy, "accuracy")
    if not 0 <= measured <= 1:
        fail(
            f"accuracy = {fmt(measured)} is not a share between 0 and 1: use accuracies(one_head)['both digits']."
        )
    if abs(measured - RUN_ALL_POSITIONS) < 0.03:  # one lookup, counted at every position
        fail(
            f"accuracy = {measured:.3f} looks like the accuracy at all positions 1 to 7 (where=all: {RUN_ALL_POSITIONS:.0%} in the exercise's run). At the {SAME_SHARE:.0%} of positions whose previous token is also the partner, one lookup gives both digits. The exercise counts only the positions where the two lookups differ: use accuracies(one_head)['both digits'], with its default where ({RUN_WHERE_DIFFER:.0%} in the exercise's run)."
        )
    if measured >= 0.99:
        fail(
            f"accuracy = {measured:.3f} is not the accuracy of the exercise's run: train BracketModel(n_heads=1) after resetting both seeds, with the same call to fit, and measure it with accuracies."
        )
    if measured > CHANCE_CEILING:
        fail(
            f"accuracy = {measured:.3f} does not look like accuracies(one_head)['both digits'] of the exercise's run: train BracketModel(n_heads=1) after resetting both seeds, with the same call to fit (300 steps, lr 1e-2), and measure it with accuracies' default where."
        )
    if predicts_learning:
        fail(
            f"learns_task: your run says otherwise (both digits right at {measured:.0%} of the positions, short of 99%); look with relation_weights(one_head(X_test)[1], M_test): where does the single head put its weight, and which digit stays at chance?"
        )
    return f"both predictions are right, and your run agrees ({measured:.0%}): {N_PARAMETERS:,} parameters, as with four heads, but in these 300 steps the one head settles on one of the two lookups and leaves the other digit to chance. A blend that serves both is possible in principle (see the model answer); this training does not find it."


# --- exercise 2: heads as separate matrices --------------------------------------------------------------


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch07.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"separate_heads_from": 7}


def _mha_cases() -> list[tuple[str, MultiHeadAttention, Tensor]]:
    """(description, a MultiHeadAttention with random weights and biases, x [2, 5, D]) for three shapes."""
    g = torch.Generator().manual_seed(SEEDS["separate_heads_from"])
    cases = []
    for d_model, n_heads in [(12, 3), (8, 1), (16, 8)]:
        mha = MultiHeadAttention(d_model, n_heads)
        with torch.no_grad():
            for p in mha.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (0.4 if p.ndim == 2 else 0.2))
        cases.append(
            (f"D = {d_model}, H = {n_heads}", mha, torch.randn(2, 5, d_model, generator=g))
        )
    return cases


def _reference(
    mha: MultiHeadAttention, x: Tensor, scale: float | None = None, out_proj: str = "full"
) -> Tensor:
    """mha's self-attention computed from its weights; a scale or an output projection of the usual mistakes."""
    H, Dh = mha.n_heads, mha.d_model // mha.n_heads
    q, k, v = (split_heads(p(x), H) for p in (mha.q_proj, mha.k_proj, mha.v_proj))  # [B, H, T, D/H]
    w = torch.softmax(q @ k.transpose(-2, -1) / (scale or math.sqrt(Dh)), dim=-1)  # [B, H, T, T]
    z = merge_heads(w @ v)  # [B, T, D]
    if out_proj == "none":
        return z
    if out_proj == "no bias":
        return z @ mha.out_proj.weight.T
    return mha.out_proj(z)


def _linears(module: nn.Module) -> list[nn.Linear]:
    return [m for m in module.modules() if isinstance(m, nn.Linear)]


def _shared_linear(module: nn.Module) -> str | None:
    """The name of an nn.Linear that ``module`` holds under more than one name, if any."""
    seen: dict[int, str] = {}
    for name, m in module.named_modules(remove_duplicate=False):
        if isinstance(m, nn.Linear):
            if id(m) in seen:
                return f"{seen[id(m)]} and {name}"
            seen[id(m)] = name
    return None


# a head's rows of mha.q_proj.weight (or k_proj, v_proj) copied with .T: the likeliest copying slip
_AS_IT_IS = (
    "nn.Linear stores its weight as [out, in], and mha's projections are nn.Linear too, so head h's "
    "rows of {weights} are already [D/H, D], the layout of your nn.Linear(D, D/H): copy them as they "
    "are, without `.T`."
)


def _owner_problem(module: nn.Module, mha: MultiHeadAttention) -> str | None:
    """If some block of mha's weights is not held by a Linear of ``module``, a sentence saying which."""
    H, Dh = mha.n_heads, mha.d_model // mha.n_heads
    layers = _linears(module)

    def held(weight: Tensor, bias: Tensor) -> tuple[bool, bool]:
        same_weight = [
            m for m in layers if m.weight.shape == weight.shape and torch.equal(m.weight, weight)
        ]
        return bool(same_weight), any(
            m.bias is not None and torch.equal(m.bias, bias) for m in same_weight
        )

    for role, proj in [("query", mha.q_proj), ("key", mha.k_proj), ("value", mha.v_proj)]:
        for h in range(H):
            rows = slice(h * Dh, (h + 1) * Dh)
            has_weight, has_bias = held(proj.weight[rows], proj.bias[rows])
            name = {"query": "q_proj", "key": "k_proj", "value": "v_proj"}[role]
            if not has_weight and any(torch.equal(m.weight, proj.weight[rows].T) for m in layers):
                return (
                    f"your layer for the {role} of head {h} holds its weight transposed. "
                    + _AS_IT_IS.format(weights=f"mha.{name}.weight")
                )
            if not has_weight:
                return f"none of your layers holds the {role} weight of head {h}: it is rows {rows.start} to {rows.stop - 1} of mha.{name}.weight (nn.Linear stores [out, in], so a head owns rows, not columns)."
            if not has_bias:
                return f"your layer with the {role} weight of head {h} does not have its bias: copy mha.{name}.bias[{rows.start}:{rows.stop}] too."
    has_weight, has_bias = held(mha.out_proj.weight, mha.out_proj.bias)
    if not has_weight:
        if any(
            m.weight.shape == mha.out_proj.weight.shape
            and torch.equal(m.weight, mha.out_proj.weight.T)
            for m in layers
        ):
            return "your W^O layer holds mha.out_proj.weight transposed. nn.Linear stores its weight as [out, in] and mha.out_proj is an nn.Linear too, so the two weights have the same layout: copy it as it is."
        return "none of your layers holds W^O: copy mha.out_proj.weight into your nn.Linear(D, D)."
    if not has_bias:
        return "your output layer has W^O but not its bias: copy mha.out_proj.bias too."
    return None


# the library's scaled_dot_product_attention returns (output, weights): a head kept as that tuple
# reaches torch.cat (or torch.stack), which names a tuple where it expected a tensor
_TUPLE_HINT = {
    "got tuple": "`scaled_dot_product_attention` returns a tuple (output, weights): keep only its "
    "first element, `scaled_dot_product_attention(q, k, v)[0]`, before you concatenate the heads.",
}


def _transposed_head_hints(mha: MultiHeadAttention, x: Tensor) -> dict[str, str]:
    """Advice for a head's weight that reaches its nn.Linear(D, D/H) as [D, D/H], keyed by what torch
    says: ``weight.copy_`` names the two sizes that differ, and a layer whose weight was replaced
    names the two matrices its call cannot multiply (x [B, T, D] flattened to [B * T, D])."""
    D, Dh, BT = mha.d_model, mha.d_head, x.shape[0] * x.shape[1]
    advice = (
        f"A head's weight reached its layer transposed, as [D, D/H] = [{D}, {Dh}]. "
        + _AS_IT_IS.format(weights="mha.q_proj.weight (and of k_proj, v_proj)")
    )
    return {
        f"tensor a ({D}) must match the size of tensor b ({Dh}) at non-singleton dimension 1": advice,
        f"({BT}x{D} and {Dh}x{D})": advice,
    }


@checker("separate_heads_from")
def check_separate_heads(separate_heads_from: Any) -> str:
    """Check ``separate_heads_from(mha) -> nn.Module``: one nn.Linear(D, D/H) per head for each of W^Q, W^K,
    W^V (in nn.ModuleLists) and one nn.Linear(D, D) for W^O, holding mha's weights, whose call on x [B, T, D]
    returns mha(x, x, x)'s output [B, T, D], with the same number of parameters."""
    attempted(separate_heads_from, "separate_heads_from")
    # building modules draws random numbers: not from the reader's stream
    with torch.random.fork_rng():
        return _check_separate_heads(separate_heads_from)


def _check_module(case: str, mha: MultiHeadAttention, before: dict, module: Any) -> None:
    """The module returned: mha left as it was (``before``: its state dict), then 3H per-head layers
    and W^O, each its own nn.Linear, registered, with as many parameters as mha."""
    H, Dm = mha.n_heads, mha.d_model
    Dh = Dm // H
    if any(not torch.equal(before[k], v) for k, v in mha.state_dict().items()):
        fail(
            f"on the case {case}, `separate_heads_from` changed the weights of mha. Copy them into new layers; leave mha as it is."
        )
    if module is None:
        fail(
            f"on the case {case}, `separate_heads_from` returned None. Did you forget the `return` statement?"
        )
    if module is mha or isinstance(module, MultiHeadAttention):
        fail(
            f"on the case {case}, you returned a MultiHeadAttention; the exercise is a new module that keeps one small nn.Linear per head and role."
        )
    if not isinstance(module, nn.Module):
        fail(
            f"on the case {case}, `separate_heads_from` returned {type(module).__name__} {fmt(module)}; expected an nn.Module (an instance of your class)."
        )
    n_mine, n_theirs = (
        sum(p.numel() for p in module.parameters()),
        sum(p.numel() for p in mha.parameters()),
    )
    layers = _linears(module)
    heads = [m for m in layers if (m.in_features, m.out_features) == (Dm, Dh)]
    if n_mine == 0 and not layers:
        fail(
            f"on the case {case}, your module has no parameters at all. Layers kept in a plain Python list (or dict) are not registered: keep them in nn.ModuleList, and assign it as an attribute in __init__ after super().__init__()."
        )
    shared = _shared_linear(module)
    if shared:
        fail(
            f"on the case {case}, the same nn.Linear object ({shared}) appears in your module more than once, so the heads that hold it share one set of weights: `nn.ModuleList([layer] * H)` holds H references to one layer, not H layers. Make a new nn.Linear for each head and role."
        )
    expected_heads = 3 * H + (1 if Dh == Dm else 0)  # with H = 1, W^O has the heads' shape too
    if len(heads) != expected_heads or not any(
        (m.in_features, m.out_features) == (Dm, Dm) for m in layers
    ):
        shapes = sorted({f"Linear({m.in_features}, {m.out_features})" for m in layers}) or ["none"]
        fail(
            f"on the case {case}, your module holds {len(layers)} nn.Linear layer{'' if len(layers) == 1 else 's'} ({', '.join(shapes)}); expected 3H = {3 * H} of Linear({Dm}, {Dh}), one per head for W^Q, W^K and W^V, and one Linear({Dm}, {Dm}) for W^O."
            + (
                " Layers kept in a plain Python list are not registered as parts of the module: use nn.ModuleList."
                if not heads
                else ""
            )
        )
    if n_mine != n_theirs:
        if n_mine < n_theirs:
            why = "biases (bias=True) or a layer are missing"
        else:
            why = "your module has extra parameters"
        fail(
            f"on the case {case}, your module has {n_mine:,} parameters and mha has {n_theirs:,}; {why}."
        )


def _name_forward_mistake(
    case: str, mha: MultiHeadAttention, module: nn.Module, x: Tensor, out: Tensor, expected: Tensor
) -> NoReturn:
    """Fail with the mistake behind a wrong output: weights not mha's, a wrong scale, W^O left out;
    else the largest difference."""
    H, Dm = mha.n_heads, mha.d_model
    Dh = Dm // H
    problem = _owner_problem(module, mha)
    if problem:
        fail(f"on the case {case}, {problem}")
    with torch.no_grad():
        for scale, what in [
            (
                math.sqrt(Dm),
                f"you divided the scores by sqrt(D) = {math.sqrt(Dm):.3g}; each head divides by the square root of its own width, sqrt(D/H) = {math.sqrt(Dh):.3g}",
            ),
            (1.0, "you did not divide the scores by sqrt(D/H)"),
            (Dh, "you divided the scores by D/H instead of sqrt(D/H)"),
        ]:
            if H > 1 or scale != math.sqrt(Dm):
                if abs(scale - math.sqrt(Dh)) > 1e-9 and torch.allclose(
                    out, _reference(mha, x, scale).double(), atol=1e-5
                ):
                    fail(f"on the case {case}, {what}.")
        if torch.allclose(out, _reference(mha, x, out_proj="none").double(), atol=1e-5):
            fail(
                f"on the case {case}, your output is the concatenation of the heads; multiply it by W^O (your nn.Linear(D, D) holding mha.out_proj)."
            )
    fail(
        f"on the case {case}, {largest_difference(out, expected)}. The layers hold mha's weights, so look at the forward pass: one softmax per head over the keys (dim=-1), heads concatenated in order 0 to H - 1 along the last dimension, then W^O."
    )


# The layers' rows a check changes after the module was built (course-kit review s23, S1: a module that
# held the per-head layers but whose forward called a hidden copy of mha got full marks): the query
# weight of head 0 and the value weight of the last head.
def _perturbed(
    mha: MultiHeadAttention, module: nn.Module, g: torch.Generator
) -> tuple[MultiHeadAttention, list[tuple[Tensor, Tensor]]]:
    """Add noise to the student's layers holding the query of head 0 and the value of head H - 1 (in
    place), and return a copy of mha with the same noise in its rows, the reference the module's
    output must now follow, and (weight, its value before) to put back. Their layers are found by
    their weights (``_owner_problem`` checks it)."""
    H, Dh = mha.n_heads, mha.d_model // mha.n_heads
    changed, saved = copy.deepcopy(mha), []
    with torch.no_grad():
        for proj, h in [("q_proj", 0), ("v_proj", H - 1)]:
            rows = slice(h * Dh, (h + 1) * Dh)
            weight = getattr(mha, proj).weight[rows]
            layer = next(
                m
                for m in _linears(module)
                if m.weight.shape == weight.shape and torch.equal(m.weight, weight)
            )
            noise = torch.randn(weight.shape, generator=g) * 0.5
            saved.append((layer.weight, layer.weight.detach().clone()))
            layer.weight.add_(noise)
            getattr(changed, proj).weight[rows] += noise
    return changed, saved


def _check_uses_its_layers(
    case: str, mha: MultiHeadAttention, module: nn.Module, x: Tensor, expected: Tensor
) -> None:
    """The module's output follows its own per-head layers: after noise is added to two of them, it
    equals the reference computed from the changed weights."""
    problem = _owner_problem(module, mha)
    if problem:
        fail(f"on the case {case}, {problem}")
    changed, saved = _perturbed(
        mha, module, torch.Generator().manual_seed(SEEDS["separate_heads_from"])
    )
    try:
        out = call(module, x, name="your module", case=case, hints=_TUPLE_HINT)
    finally:  # the reader's module as it was
        with torch.no_grad():
            for weight, before in saved:
                weight.copy_(before)
    if isinstance(out, tuple):
        fail(f"on the case {case}, your module returned a tuple; return only the output [B, T, D].")
    out = expect_tensor(out, tuple(x.shape), name="your module", case=case)
    if torch.allclose(out, _reference(changed, x).detach().double(), atol=1e-5):
        return
    if torch.allclose(out, expected, atol=1e-5):
        fail(
            f"on the case {case}, your forward does not use your per-head layers: after a change to the weights of your layers for the query of head 0 and the value of head {mha.n_heads - 1}, your module's output stayed that of mha. The forward pass must compute each head from your own layers W_Q[h], W_K[h], W_V[h] with scaled_dot_product_attention, not call mha or a copy of it."
        )
    fail(
        f"on the case {case}, after a change to the weights of your layers for the query of head 0 and the value of head {mha.n_heads - 1}, your module's output is not the one those weights give: {largest_difference(out, _reference(changed, x).detach().double())}. Compute each head from your own layers W_Q[h], W_K[h], W_V[h]."
    )


# --- the heads run one after another (course-kit review s29, S1) ---------------------------------------------
# An answer that held the per-head layers, then fused their weights back and ran all heads in one call of
# torch's scaled_dot_product_attention on [B, H, T, D/H], got 2/2: the outputs are the same. The checker
# hands the module an x that notes each attention its forward computes: a call of
# scaled_dot_product_attention (torch's, on its query) or a softmax (the library's
# scaled_dot_product_attention computes one, on the scores). The statement's forward computes H of
# them, one per head: a query [B, T, D/H] or scores [B, T, T].

_ATTENTION_OPS = {"scaled_dot_product_attention": "query", "softmax": "scores"}


class _Attentions:
    """The attentions the reader's forward computed: [operation, shape of its query or scores]."""

    def __init__(self) -> None:
        self.calls: list[list] = []
        self.active = False  # only while the reader's module runs (not the checker's own work)


class _Traced(Tensor):
    """x as the checker hands it to the reader's module: every tensor computed from it is traced
    too, and notes each attention op it reaches (``_ATTENTION_OPS``). The course's grader runs the
    module in another process, on a copy of x: the notes come back as data
    (tools/sandbox.py's ``_state_of``, as chapter 18's scores do)."""

    _attentions: _Attentions

    @staticmethod
    def of(data: Tensor, attentions: _Attentions) -> _Traced:
        traced = data.as_subclass(_Traced)
        traced._attentions = attentions
        return traced

    def __sandbox_state__(self) -> list[list]:
        return [[str(name), [int(n) for n in shape]] for name, shape in self._attentions.calls]

    def __sandbox_restore__(self, calls: list[list]) -> None:
        self._attentions.calls[:] = [[str(name), [int(n) for n in shape]] for name, shape in calls]

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        traced = [a for a in leaves((args, kwargs)) if isinstance(a, _Traced)]
        name = getattr(func, "__name__", "")
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        if not traced:
            return result
        attentions = traced[0]._attentions
        if attentions.active and name in _ATTENTION_OPS:
            first = args[0] if args else kwargs.get(_ATTENTION_OPS[name], kwargs.get("input"))
            shape = list(first.shape) if isinstance(first, Tensor) else []
            attentions.calls.append([name, shape])
        return _trace(result, attentions)


def _trace(result: Any, attentions: _Attentions) -> Any:
    if isinstance(result, Tensor) and not isinstance(result, _Traced):
        return _Traced.of(result, attentions)
    if isinstance(result, (list, tuple)) and type(result) in (list, tuple):
        return type(result)(_trace(r, attentions) for r in result)
    return result


def _plain(x: Any) -> Any:
    """The reader's output as a plain tensor (the checker's comparisons are not the reader's)."""
    if isinstance(x, _Traced):
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.as_subclass(x, Tensor)
    return x


def _check_heads_one_by_one(case: str, mha: MultiHeadAttention, x: Tensor, calls: list) -> None:
    """The forward computed H attentions, each on one head: a query [B, T, D/H] (torch's
    scaled_dot_product_attention) or scores [B, T, T] (a softmax: the library's computes one)."""
    B, T, _ = x.shape
    H, Dh = mha.n_heads, mha.d_head
    per_head = {"query": [B, T, Dh], "scores": [B, T, T]}
    right = [c for c in calls if c[1] == per_head[_ATTENTION_OPS[c[0]]]]
    if len(calls) == H and len(right) == H:
        return
    seen = "; ".join(
        f"{name} on {_ATTENTION_OPS[name]} [{', '.join(map(str, shape))}]"
        for name, shape in calls[:4]
    ) + ("; ..." if len(calls) > 4 else "")
    did = (
        "your forward computed no attention with scaled_dot_product_attention"
        if not calls
        else f"your forward computed {len(calls)} attention{'' if len(calls) == 1 else 's'} ({seen})"
    )
    fail(
        f"on the case {case}, {did}. The exercise's forward pass runs the H = {H} heads one after "
        f"another: {H} call{'' if H == 1 else 's'} of scaled_dot_product_attention, each on one "
        f"head's query [B, T, D/H] = [{B}, {T}, {Dh}] (scores [{B}, {T}, {T}]), then torch.cat of "
        "the heads; not the heads fused back into one call on [B, H, T, D/H] or [B * H, T, D/H]."
    )


def _check_separate_heads(separate_heads_from: Any) -> str:
    cases = _mha_cases()
    for case, mha, x in cases:
        before = {k: v.clone() for k, v in mha.state_dict().items()}
        transposed = _transposed_head_hints(mha, x)
        module = call(
            separate_heads_from, mha, name="separate_heads_from", case=case, hints=transposed
        )
        _check_module(case, mha, before, module)
        attentions = _Attentions()
        attentions.active = True
        try:
            out = call(
                module,
                _Traced.of(x, attentions),
                name="your module",
                case=case,
                hints=_TUPLE_HINT | transposed,
            )
        finally:
            attentions.active = False
        out = _plain(out) if not isinstance(out, tuple) else out
        if isinstance(out, tuple):
            fail(
                f"on the case {case}, your module returned a tuple; return only the output [B, T, D]."
            )
        out = expect_tensor(out, tuple(x.shape), name="your module", case=case)
        expected = _reference(mha, x).detach().double()
        if not torch.allclose(out, expected, atol=1e-5):
            _name_forward_mistake(case, mha, module, x, out, expected)
        _check_uses_its_layers(case, mha, module, x, expected)
        _check_heads_one_by_one(case, mha, x, attentions.calls)
    return f"your module equals MultiHeadAttention, with the same number of parameters, on all {len(cases)} hidden cases ({'; '.join(c for c, *_ in cases)})."


_refuse_heads_together = refusing(
    "multi-head attention",
    ": the exercise's forward pass runs the H heads one after another with "
    "scaled_dot_product_attention and concatenates them with torch.cat",
)
_refuse_torch_mha = refusing(
    "MultiheadAttention",
    ": the exercise's forward pass runs the H heads one after another with "
    "scaled_dot_product_attention and concatenates them with torch.cat",
    whose="torch's",
)

# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's module
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The statement's forward pass runs the heads one by one, so the layers that run them all at once
# refuse, under any name (course-kit review s23, S1). attention_heads refuses a call that passes q,
# which every call does: with None, the grader would refuse the helpers it calls too
# (_scaled_dot_product_attention, through which the allowed scaled_dot_product_attention goes).
REFUSALS = {
    "check_separate_heads": [
        ("lib.attention.MultiHeadAttention.forward", None, _refuse_heads_together),
        ("lib.attention_fast.FastMultiHeadAttention.forward", None, _refuse_heads_together),
        ("lib.attention.attention_heads", "q", _refuse_heads_together),
        ("torch.nn.MultiheadAttention.forward", None, _refuse_torch_mha),
        ("torch.nn.functional.multi_head_attention_forward", None, _refuse_torch_mha),
    ]
}
