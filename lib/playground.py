"""The Attention Playground: six small sequence tasks and a tiny Transformer that learns them, one
training step at a time, in the notebook and (exported to ONNX) in the page.

Shape legend: B sequences in a batch, L = 8 positions, V = 16 symbols (inputs and answers share
one table), D width, H heads, N layers, P weights in all (the length of Adam's flat m and v).

Tasks (``make_batch``): each is a sequence x [L] and an answer y [L], one symbol per position.

    copy       y_t = x_t                                   (attend to yourself)
    reverse    y_t = x_{L-1-t}                             (attend to the mirror position)
    sort       y   = sorted(x)                             (count what is smaller)
    brackets   x: four nested pairs of ( ) [ ] , each with a digit 0-3;
               y_t = the digit of the bracket that matches x_t   (chapter 7's head)
    induction  y_t = the symbol after the previous occurrence of x_t, or NONE
               (two heads in two layers: previous token, then induction; Olsson et al. 2022)
    position   x: a start symbol (NONE, written "-") and 7 digits; y_t = t
               (a causal model counts without any encoding: Haviv et al. 2022, chapter 8)

The sequences come from ``Mulberry32``, a 32-bit generator written the same way in the page
(web/src/playground/tasks.js), so a seed gives the same batches in Python and in the browser
(tests/test_playground.py). Weights are drawn from it too (``init_weights``), for the same reason.

The model (``PlaygroundModel``): token embedding + a position table (learned, sinusoidal or none)
-> N of the Transformer's encoder layers (``lib.transformer.EncoderLayer``, pre-LN, no dropout),
bidirectional or causal -> LayerNorm -> a linear read-out to V symbols. Without positions and
without a causal mask the layers are permutation-equivariant (chapter 8), so reverse cannot be
learned; with a causal mask a model can find positions without any encoding (Haviv et al. 2022).
Two more kinds of positions act inside attention instead, with no table (chapters 17 and 18):
``rope`` rotates each head's queries and keys by their positions (``lib.rope``, halves, theta
10,000), ``alibi`` adds -s_h |i - j| to head h's scores (``lib.alibi``); the layers' weights are
the same, only their attention is computed by ``_attend_with_positions``.
Two settings of the modern decoder (chapter 17, ``lib.llama``) change the layers themselves:
``norm="rmsnorm"`` puts an RMSNorm (no mean subtracted, no bias: ``lib.llama.RMSNorm``) where every
LayerNorm was, the final one included; ``n_kv_heads`` below ``n_heads`` is grouped-query attention
(Ainslie et al. 2023): k_proj and v_proj give n_kv_heads heads of width D / H each, and key/value
head j serves query heads j G ... j G + G - 1 (G = H / n_kv_heads, ``_repeat_kv``). n_kv_heads =
n_heads (the default) is the encoder layer's multi-head attention, computed as before.

Lengths: the model trains on L = 8 (``train_length``: the page's graphs are exported for 8; the
chapter trains a control on longer sequences) and can be tested on longer ones (``make_batch``'s
and ``Run.held_out``'s ``length``). Sinusoidal positions extend their formula to the new rows, RoPE
and ALiBi need no table, none has nothing to extend; learned positions have a table of 8 rows and
no vector for a position beyond it, so such a model refuses a longer input (``forward``): it
cannot be tested there, rather than being tested on rows that training never touched.

Training (``train_step``): cross-entropy over every position, Adam (Kingma and Ba 2015, alg. 1)
written out, so that the whole step, weights and optimizer state in and out, is one pure function
that tools/export_playground.py exports as an ordinary ONNX graph for the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn

from lib._checks.playground import (
    check_batch_args,
    check_beyond_table,
    check_playground_config,
)
from lib.alibi import _alibi, alibi_slopes
from lib.attention import _masked_softmax, _merge_heads, _split_heads
from lib.llama import RMSNorm
from lib.positional import sinusoidal_encoding
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies
from lib.transformer import EncoderLayer

__all__ = [
    "LENGTH",
    "MAX_LENGTH",
    "VOCAB",
    "NONE",
    "TASKS",
    "POSITIONAL",
    "IN_ATTENTION",
    "NORMS",
    "Mulberry32",
    "make_batch",
    "answer",
    "PlaygroundConfig",
    "PlaygroundOutput",
    "PlaygroundModel",
    "StepOutput",
    "AdamState",
    "flat_size",
    "init_weights",
    "token_loss",
    "train_step",
    "evaluate",
    "Run",
    "HELD_OUT_SALT",
    "HELD_OUT_SIZE",
    "DIVERGED",
    "symbols",
]

LENGTH = 8
VOCAB = 16
NONE = 15  # induction's answer where x_t has not occurred before; position's start symbol
TASKS = ("copy", "reverse", "sort", "brackets", "induction", "position")
POSITIONAL = ("learned", "sinusoidal", "none", "rope", "alibi")
NORMS = ("layernorm", "rmsnorm")  # every norm of the model: the two in each layer and the last
NORM_EPS = 1e-5  # LayerNorm's (torch's default) and RMSNorm's (lib.llama's models')
IN_ATTENTION = ("rope", "alibi")  # inside attention; the page's graphs have tables only
MAX_LENGTH = 64  # the longest sequence make_batch draws (a test length, not a training one)
_ALPHABET = {"copy": 10, "reverse": 10, "sort": 10, "induction": 6, "position": 10}  # 0 .. n-1
_BRACKETS = "()[]"  # token 4 * kind + digit: "(" 0-3, ")" 4-7, "[" 8-11, "]" 12-15


class Mulberry32:
    """A 32-bit generator (Tommy Ettinger's mulberry32), written bit for bit as in JavaScript."""

    def __init__(self, seed: int):
        self.state = seed & 0xFFFFFFFF

    def random(self) -> float:
        """A float in [0, 1), a multiple of 2^-32."""
        self.state = (self.state + 0x6D2B79F5) & 0xFFFFFFFF
        t = self.state
        t = _imul(t ^ (t >> 15), t | 1)
        t = (t + _imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF ^ t
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    def randint(self, n: int) -> int:
        """An integer in [0, n)."""
        return int(self.random() * n)


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF  # JavaScript's Math.imul, read as unsigned


def _sequence(task: str, rng: Mulberry32, L: int = LENGTH) -> tuple[list[int], list[int]]:
    if task == "brackets":
        x, y, stack, opened = [], [0] * L, [], 0
        for t in range(L):
            if opened < L // 2 and (not stack or rng.random() < 0.5):
                kind, digit = rng.randint(2), rng.randint(4)
                stack.append((t, kind, digit))
                x.append(8 * kind + digit)  # "(" or "["
                opened += 1
            else:
                start, kind, digit = stack.pop()
                closing = rng.randint(4)
                x.append(8 * kind + 4 + closing)  # ")" or "]"
                y[start], y[t] = closing, digit
        return x, y
    if task == "position":
        return [NONE] + [rng.randint(_ALPHABET[task]) for _ in range(L - 1)], list(range(L))
    x = [rng.randint(_ALPHABET[task]) for _ in range(L)]
    if task == "copy":
        return x, list(x)
    if task == "reverse":
        return x, x[::-1]
    if task == "sort":
        return x, sorted(x)
    last, y = {}, []  # induction: the symbol after the previous occurrence
    for t, s in enumerate(x):
        y.append(x[last[s] + 1] if s in last else NONE)
        last[s] = t
    return x, y


def answer(task: str, x: list[int]) -> list[int] | None:
    """The right answer y for an input x of ``task`` (None if x is not a valid input of the task)."""
    if task == "brackets":
        y, stack = [0] * len(x), []
        for t, s in enumerate(x):
            if (s // 4) % 2 == 0:
                stack.append(t)
            elif not stack or x[stack[-1]] // 8 != s // 8:
                return None
            else:
                start = stack.pop()
                y[start], y[t] = s % 4, x[start] % 4
        return None if stack else y
    if task == "position":
        valid = list(x[:1]) == [NONE] and all(0 <= s < _ALPHABET[task] for s in x[1:])
        return list(range(len(x))) if valid else None
    if task in ("copy", "reverse", "sort") and all(0 <= s < _ALPHABET[task] for s in x):
        return {"copy": list(x), "reverse": x[::-1], "sort": sorted(x)}[task]
    if task == "induction" and all(0 <= s < _ALPHABET[task] for s in x):
        last, y = {}, []
        for t, s in enumerate(x):
            y.append(x[last[s] + 1] if s in last else NONE)
            last[s] = t
        return y
    return None


def make_batch(
    task: str, batch_size: int, rng: Mulberry32, length: int = LENGTH
) -> tuple[Tensor, Tensor]:
    """``batch_size`` sequences of ``task`` drawn from ``rng`` -> (x [B, L], y [B, L]), int64.
    ``length``: L, 8 for training; longer for a test (brackets: even, L / 2 pairs; position: at most
    V = 16, its answers are positions)."""
    check_batch_args(task, batch_size, length, TASKS, MAX_LENGTH, VOCAB)
    pairs = [_sequence(task, rng, length) for _ in range(batch_size)]
    return torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])


def symbols(task: str, ids) -> list[str]:
    """How the page writes a sequence: digits, brackets with their digit, or "-" for NONE."""
    if task == "brackets":
        return [_BRACKETS[i // 4] + str(i % 4) for i in ids]
    return ["-" if i == NONE else str(i) for i in ids]


@dataclass(frozen=True)
class PlaygroundConfig:
    """What the reader sets: the model's sizes, its positions and mask, and the training run."""

    task: str = "reverse"
    n_layers: int = 1
    n_heads: int = 2
    d_model: int = 32
    positional: str = "learned"
    causal: bool = False
    lr: float = 3e-3
    batch_size: int = 32
    seed: int = 0
    train_length: int = LENGTH  # the page trains on 8; the chapter's control on longer sequences
    norm: str = "layernorm"  # or "rmsnorm" (chapter 17)
    n_kv_heads: int | None = None  # key/value heads; None: n_heads (multi-head attention)

    def __post_init__(self):
        if self.n_kv_heads is None:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        check_playground_config(self, TASKS, POSITIONAL, NORMS, LENGTH, MAX_LENGTH, VOCAB)


class PlaygroundOutput(NamedTuple):
    logits: Tensor  # [B, L, V]
    attentions: tuple[Tensor, ...] | None  # one [B, H, L, L] per layer


class PlaygroundModel(nn.Module):
    """Embedding + positions -> N encoder layers -> LayerNorm -> read-out (module docstring).

    forward(input_ids [B, L], return_attention) -> PlaygroundOutput(logits [B, L, V], attentions).
    The position table ``pos`` [L, D] is a parameter in every mode, so that every configuration has
    the same weights; it is trained only when ``positional == "learned"`` (``train_step``)."""

    def __init__(self, config: PlaygroundConfig):
        super().__init__()
        self.config = config
        D = config.d_model
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(LENGTH, D))
        self.layers = nn.ModuleList(_layer(config) for _ in range(config.n_layers))
        self.norm = _norm(config)
        self.out = nn.Linear(D, VOCAB)
        init_weights(self, config.seed)

    def mask(self, L: int = LENGTH) -> Tensor:
        """bool [L, L], True where a query may attend: causal (on and below the diagonal) or all."""
        if self.config.causal:
            return torch.ones(L, L, dtype=torch.bool).tril()
        return torch.ones(L, L, dtype=torch.bool)

    def forward(
        self, input_ids: Tensor, attn_mask: Tensor | None = None, return_attention: bool = False
    ) -> PlaygroundOutput:
        """input_ids [B, L], attn_mask bool [L, L] (True = may attend; default ``self.mask(L)``) ->
        logits [B, L, V] and, if asked, the attention weights of every layer. L > 8 (a test
        length): not with learned positions, which have no row for position 8 and beyond."""
        L = input_ids.shape[1]
        mask = self.mask(L) if attn_mask is None else attn_mask
        x = self.tok(input_ids) + self.positions(L)  # [B, L, D]
        c, rope, bias = self.config, None, None
        groups = c.n_heads // c.n_kv_heads  # G query heads per key/value head
        if c.positional == "rope":  # cos and sin of every position's angles, [L, Dh/2] each
            rope = rope_cos_sin(torch.arange(L), rope_frequencies(c.d_model // c.n_heads))
        elif c.positional == "alibi":
            at = torch.arange(L)  # the positions of the queries and of the keys
            bias = _alibi(alibi_slopes(c.n_heads), at, at).float()  # [H, L, L]
        attentions = []
        for layer in self.layers:
            if rope is not None or bias is not None or groups > 1:
                x, weights = _layer_with_positions(layer, x, mask, rope, bias, groups)
            else:
                x, weights = layer(x, mask=mask, need_weights=True)  # weights [B, H, L, L]
            attentions.append(weights)
        logits = self.out(self.norm(x))  # [B, L, V]
        return PlaygroundOutput(logits, tuple(attentions) if return_attention else None)

    def positions(self, L: int) -> Tensor:
        """The position vectors added to the first L tokens, [L, D]: the table's first rows, and
        beyond its 8 rows sinusoidal's formula continued, or zeros (none, rope, alibi)."""
        if L <= LENGTH:
            return self.pos[:L]
        kind = self.config.positional
        check_beyond_table(kind, L, LENGTH)  # learned positions have no vector beyond the table
        more = (
            sinusoidal_encoding(L, self.config.d_model)[LENGTH:]
            if kind == "sinusoidal"
            else self.pos.new_zeros(L - LENGTH, self.config.d_model)
        )  # [L - 8, D]
        return torch.cat([self.pos, more])  # [L, D]


def _norm(config: PlaygroundConfig) -> nn.Module:
    """One of the model's norms over D: LayerNorm, or RMSNorm (gain only) for ``norm="rmsnorm"``."""
    if config.norm == "rmsnorm":
        return RMSNorm(config.d_model, NORM_EPS)
    return nn.LayerNorm(config.d_model, eps=NORM_EPS)


def _layer(config: PlaygroundConfig) -> EncoderLayer:
    """A pre-LN encoder layer (``lib.transformer.EncoderLayer``) with the config's norm in both
    places, and, for grouped-query attention, k_proj and v_proj of n_kv_heads heads: D -> Hkv Dh."""
    D, H, Hkv = config.d_model, config.n_heads, config.n_kv_heads
    layer = EncoderLayer(D, H, 4 * D, dropout=0.0, norm_first=True)
    if config.norm != "layernorm":
        layer.norm1, layer.norm2 = _norm(config), _norm(config)
    if Hkv != H:  # the same places in named_parameters, smaller matrices
        layer.self_attn.k_proj = nn.Linear(D, Hkv * (D // H))
        layer.self_attn.v_proj = nn.Linear(D, Hkv * (D // H))
    return layer


def _repeat_kv(x: Tensor, groups: int) -> Tensor:
    """[B, Hkv, L, Dh] -> [B, Hkv G, L, Dh], key/value head j repeated for query heads j G ...
    j G + G - 1: ``lib.llama.repeat_kv`` (equal, tests), written as an expand and a reshape, which
    the exported graph and its gradient (a sum over the G copies) take as plain operators."""
    if groups == 1:
        return x
    B, Hkv, L, Dh = x.shape
    return x[:, :, None].expand(B, Hkv, groups, L, Dh).reshape(B, Hkv * groups, L, Dh)


def _layer_with_positions(layer: EncoderLayer, x: Tensor, mask: Tensor, rope, bias, groups=1):
    """``layer`` (pre-LN, its own weights) with RoPE (``rope`` = (cos, sin) [L, Dh/2]) or ALiBi
    (``bias`` [H, L, L]) in its attention, and ``groups`` query heads per key/value head (G > 1:
    grouped-query attention) -> (x [B, L, D], weights [B, H, L, L])."""
    attn = layer.self_attn
    h = layer.norm1(x)  # [B, L, D]
    q = _split_heads(attn.q_proj(h), attn.n_heads)  # [B, H, L, Dh]
    k = _split_heads(attn.k_proj(h), attn.n_heads // groups)  # [B, Hkv, L, Dh]
    v = _split_heads(attn.v_proj(h), attn.n_heads // groups)
    heads, weights = _attend_with_positions(q, k, v, mask, rope, bias, groups)
    x = x + attn.out_proj(_merge_heads(heads))  # [B, L, D]
    return x + layer.ff(layer.norm2(x)), weights


def _attend_with_positions(q, k, v, mask, rope=None, bias=None, groups=1) -> tuple[Tensor, Tensor]:
    """lib.attention's ``_scaled_dot_product_attention``, q [B, H, L, Dh], k, v [B, H / G, L, Dh]
    (``groups`` G query heads per key/value head), with RoPE's rotation of q and k (chapter 17) or
    ALiBi's bias added to the scores (chapter 18) -> (heads [B, H, L, Dh], weights [B, H, L, L]). Either way the
    positions enter the scores through i - j only."""
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)  # [B, H, L, Dh], [B, H / G, L, Dh]
    k, v = _repeat_kv(k, groups), _repeat_kv(v, groups)  # [B, H, L, Dh]
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # [B, H, L, L]
    if bias is not None:
        scores = scores + bias  # [H, L, L] broadcast over the batch
    weights = _masked_softmax(scores, mask)  # [B, H, L, L]
    return weights @ v, weights


def init_weights(model: PlaygroundModel, seed: int) -> None:
    """Every weight drawn from Mulberry32(seed) in ``named_parameters`` order, so the page draws the
    same numbers (``init_plan`` tells it how): LayerNorm gains 1, biases 0, embeddings and
    matrices uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010); the position table
    is the sinusoidal encoding, zeros, or uniform in +-0.1 when learned."""
    rng = Mulberry32(seed)
    with torch.no_grad():
        for name, p, kind, bound in init_plan(model):
            if kind == "uniform":
                draws = [(2 * rng.random() - 1) * bound for _ in range(p.numel())]
                p.copy_(torch.tensor(draws, dtype=torch.float64).view_as(p))
            elif kind == "ones":
                p.fill_(1.0)
            elif kind == "zeros":
                p.zero_()
            else:  # "sinusoidal"
                p.copy_(sinusoidal_encoding(LENGTH, model.config.d_model))


def init_plan(model: PlaygroundModel) -> list[tuple[str, nn.Parameter, str, float]]:
    """(name, parameter, kind, bound) for every parameter, in ``named_parameters`` order."""
    plan = []
    for name, p in model.named_parameters():
        if name == "pos":
            kind = {"learned": "uniform", "sinusoidal": "sinusoidal"}.get(
                model.config.positional, "zeros"
            )  # none, rope, alibi: no table
            plan.append((name, p, kind, 0.1))
        elif name.endswith("bias"):
            plan.append((name, p, "zeros", 0.0))
        elif p.dim() == 1:  # LayerNorm's and RMSNorm's gains
            plan.append((name, p, "ones", 0.0))
        else:
            plan.append((name, p, "uniform", math.sqrt(6.0 / (p.shape[0] + p.shape[1]))))
    return plan


def token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy over every position, as log_softmax and gather (F.cross_entropy gave
    wrong gradients once exported to ONNX; this form is exact)."""
    logp = torch.log_softmax(logits, dim=-1)  # [B, L, V]
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()


class AdamState(NamedTuple):
    step: int
    m: Tensor  # [P] first moments of every parameter, as one flat vector (train_step)
    v: Tensor  # [P] second moments


class StepOutput(NamedTuple):
    loss: Tensor  # [] before the update
    token_accuracy: Tensor  # [] share of positions right, before the update
    sequence_accuracy: Tensor  # [] share of sequences entirely right
    params: tuple[Tensor, ...]  # the new parameters, each in its shape
    m: Tensor  # [P] the new first moments
    v: Tensor  # [P] the new second moments


BETAS, EPS = (0.9, 0.999), 1e-6


def flat_size(model: PlaygroundModel) -> int:
    """P, the number of weights: the length of Adam's flat m and v."""
    return sum(p.numel() for p in model.parameters())


def train_step(model: PlaygroundModel, params, m, v, step, x, y, lr, train_pos, mask) -> StepOutput:
    """One step of Adam on one batch, as a pure function of tensors (what the page runs).

    params: a tuple in ``model.named_parameters()`` order, each in its shape; m, v [P]: Adam's
    first and second moments of every weight, one flat vector each (the parameters' ``reshape(-1)``
    one after the other, in the same order); step: the step number t >= 1 (a float tensor); lr:
    the learning rate; train_pos: 1.0 to train the position table, 0.0 to keep it (sinusoidal or
    none); mask: ``model.mask()``. Returns the loss and accuracies before the update, and the new
    state. m and v are flat because Adam treats every weight alike: one vector each makes its
    update a dozen operators in the exported graph instead of a dozen per parameter, and two
    inputs and outputs instead of two per parameter (the page pays a fixed cost per operator and
    per tensor it hands over; benchmarks/playground.py), with the same arithmetic element by
    element (tests/test_playground.py)."""
    names = [n for n, _ in model.named_parameters()]
    out = torch.func.functional_call(model, dict(zip(names, params)), (x, mask))
    logits = out.logits  # [B, L, V]
    loss = token_loss(logits, y)
    grads = torch.autograd.grad(loss, params)
    right = logits.argmax(-1) == y  # [B, L]
    b1, b2 = BETAS
    g = torch.cat(
        [
            (grad * train_pos if name == "pos" else grad).detach().reshape(-1)
            for name, grad in zip(names, grads)
        ]
    )  # [P], the gradient of every weight in m's order
    m = b1 * m + (1 - b1) * g  # Adam, alg. 1
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1**step)
    v_hat = v / (1 - b2**step)
    update = (lr * m_hat / (v_hat.sqrt() + EPS)).split([p.numel() for p in params])
    # each parameter's share of the update, in its shape (the parameters are not copied into a
    # flat vector: a graph input reshaped is a copy in onnxruntime)
    new_params = tuple(p.detach() - u.view(p.shape) for p, u in zip(params, update))
    return StepOutput(
        loss.detach(), right.float().mean(), right.all(-1).float().mean(), new_params, m, v
    )


def evaluate(model: PlaygroundModel, x: Tensor, y: Tensor) -> tuple[float, float]:
    """(token accuracy, sequence accuracy) of ``model`` on held-out sequences."""
    with torch.no_grad():
        right = model(x).logits.argmax(-1) == y
    return right.float().mean().item(), right.all(-1).float().mean().item()


DIVERGED = 3 * math.log(VOCAB)  # a loss above three times a uniform guess's: training has diverged
HELD_OUT_SALT = 0x5EED  # the held-out sequences come from Mulberry32(seed ^ HELD_OUT_SALT)
HELD_OUT_SIZE = 256


class Run:
    """A training run as the page runs it: the batches from Mulberry32(seed), the weights from
    ``init_weights``, one ``train_step`` per ``step()``; ``history`` holds (loss, token accuracy,
    sequence accuracy) of every step, ``held_out()`` the accuracies on 256 held-out sequences."""

    def __init__(self, config: PlaygroundConfig):
        self.config = config
        self.model = PlaygroundModel(config)
        self.params = tuple(p.detach().clone() for p in self.model.parameters())
        self.m = torch.zeros(flat_size(self.model))  # [P] Adam's moments, flat (train_step)
        self.v = torch.zeros(flat_size(self.model))
        self.t = 0
        self.rng = Mulberry32(config.seed)
        self.held_x, self.held_y = make_batch(
            config.task,
            HELD_OUT_SIZE,
            Mulberry32(config.seed ^ HELD_OUT_SALT),
            config.train_length,
        )
        self.history: list[tuple[float, float, float]] = []

    def step(self) -> StepOutput:
        c = self.config
        x, y = make_batch(c.task, c.batch_size, self.rng, c.train_length)
        self.t += 1
        params = tuple(p.requires_grad_(True) for p in self.params)
        out = train_step(
            self.model, params, self.m, self.v, torch.tensor(float(self.t)), x, y,
            torch.tensor(float(c.lr)), torch.tensor(1.0 if c.positional == "learned" else 0.0), self.model.mask(c.train_length),
        )  # fmt: skip
        self.params, self.m, self.v = out.params, out.m, out.v
        self.history.append(
            (out.loss.item(), out.token_accuracy.item(), out.sequence_accuracy.item())
        )
        return out

    def sync(self) -> PlaygroundModel:
        """The model with the run's current weights."""
        with torch.no_grad():
            for p, q in zip(self.model.parameters(), self.params):
                p.copy_(q)
        return self.model

    def held_out(self, length: int | None = None) -> tuple[float, float]:
        """(token, sequence accuracy) on 256 held-out sequences, of the training length or of
        ``length`` (a test length: the same generator, longer sequences)."""
        return evaluate(self.sync(), *self._held_out_batch(length))

    def held_out_answers(self, length: int | None = None) -> tuple[Tensor, Tensor]:
        """(right, y) on the held-out sequences of :meth:`held_out`: ``right`` [256, length] is
        True where the model answers a position right, ``y`` the answers. A score over some
        positions only (those past the training length) is a mean of ``right`` there."""
        x, y = self._held_out_batch(length)
        with torch.no_grad():
            return self.sync()(x).logits.argmax(-1) == y, y

    def _held_out_batch(self, length: int | None) -> tuple[Tensor, Tensor]:
        if length is None or length == self.config.train_length:
            return self.held_x, self.held_y
        seed = self.config.seed ^ HELD_OUT_SALT
        return make_batch(self.config.task, HELD_OUT_SIZE, Mulberry32(seed), length)
