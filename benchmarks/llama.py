"""Benchmark 9: lib.llama, the modern decoder: its training throughput against a minimal reference,
the grouped-query and sliding-window key/value caches in generation, and RoPE's cost per forward.

The reference (``RefLlama``) is the Llama architecture as the small from-scratch ports write it
(rasbt's LLMs-from-scratch Llama 3, karpathy's nanochat ``gpt.py``): token embedding, n_layers
pre-norm blocks (RMSNorm -> grouped-query causal self-attention with RoPE, split halves, cos and sin
tables computed once at construction, keys and values repeated to the query heads, torch's
F.scaled_dot_product_attention(is_causal=True) -> residual; RMSNorm -> SwiGLU -> residual), a final
RMSNorm and an untied output head; no biases. It is written here in plain PyTorch, with torch's own
``nn.RMSNorm``. ``load_lib_weights`` copies a ``lib.llama.Llama``'s weights into it by name, so that
both train from the same weights (tests/test_benchmark_llama.py checks that they give the same loss).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.common import (
    TIMING_NOTE,
    Column,
    Section,
    comparison_columns,
    comparison_row,
    profile_ops,
    summarize,
    time_side_by_side,
    yes_no,
)
from benchmarks.gpt_training import _step_fn, count_parameters
from lib._checks.llama import check_llama_inputs
from lib.attention import _merge_heads, _split_heads, attention_heads, causal_mask
from lib.gpt import KVCache
from lib.llama import (
    Llama,
    LlamaConfig,
    LlamaOutput,
    SlidingWindowCache,
    kv_cache_bytes_per_token,
    repeat_kv,
)
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies

GOAL_TRAINING = 0.95  # lib.llama's tokens/s over the reference's: at least this
GOAL_ROPE = 1.10  # a forward with RoPE over the same forward with learned positions: at most this


# --- the reference: a minimal Llama, as the from-scratch ports write it ----------------------------


@dataclass(frozen=True)
class RefLlamaConfig:
    vocab_size: int
    context_length: int
    emb_dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_dim: int
    rope_base: float = 10000.0
    eps: float = 1e-5


def compute_rope_params(head_dim: int, base: float, context_length: int):
    """cos and sin [context_length, head_dim]: angle m w_i for position m and frequency
    w_i = base^(-2i / head_dim), each frequency written twice (split halves). The angles in float64,
    rounded once to float32, as lib.rope does (so that both compute the same numbers)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # [Dh/2]
    angles = torch.arange(context_length, dtype=torch.float64)[:, None] * inv_freq  # [T, Dh/2]
    angles = torch.cat([angles, angles], dim=1)  # [T, Dh]
    return angles.cos().float(), angles.sin().float()


def rope(x, cos, sin):
    """Rotate the pairs (i, i + Dh/2) of x [B, H, T, Dh] by their angles (transformers' rotate_half)."""
    x1, x2 = x.chunk(2, dim=-1)  # [B, H, T, Dh/2] each
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class RefGroupedQueryAttention(nn.Module):
    def __init__(self, c: RefLlamaConfig):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = c.n_heads, c.n_kv_heads, c.head_dim
        self.W_query = nn.Linear(c.emb_dim, c.n_heads * c.head_dim, bias=False)
        self.W_key = nn.Linear(c.emb_dim, c.n_kv_heads * c.head_dim, bias=False)
        self.W_value = nn.Linear(c.emb_dim, c.n_kv_heads * c.head_dim, bias=False)
        self.out_proj = nn.Linear(c.n_heads * c.head_dim, c.emb_dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # [B, H, T, Dh]
        k = (
            self.W_key(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        )  # [B, Hkv, ...]
        v = self.W_value(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        group = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # [B, H, T, Dh]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, H, T, Dh]
        return self.out_proj(y.transpose(1, 2).reshape(B, T, -1))  # [B, T, D]


class RefFeedForward(nn.Module):
    def __init__(self, c: RefLlamaConfig):
        super().__init__()
        self.fc1 = nn.Linear(c.emb_dim, c.hidden_dim, bias=False)  # the gate
        self.fc2 = nn.Linear(c.emb_dim, c.hidden_dim, bias=False)  # the value
        self.fc3 = nn.Linear(c.hidden_dim, c.emb_dim, bias=False)

    def forward(self, x):
        return self.fc3(F.silu(self.fc1(x)) * self.fc2(x))


class RefBlock(nn.Module):
    def __init__(self, c: RefLlamaConfig):
        super().__init__()
        self.norm1, self.att = nn.RMSNorm(c.emb_dim, eps=c.eps), RefGroupedQueryAttention(c)
        self.norm2, self.ff = nn.RMSNorm(c.emb_dim, eps=c.eps), RefFeedForward(c)

    def forward(self, x, cos, sin):
        x = x + self.att(self.norm1(x), cos, sin)
        return x + self.ff(self.norm2(x))


class RefLlama(nn.Module):
    """The minimal reference: forward(idx [B, T], targets [B, T] or None) -> (logits [B, T, V], loss)."""

    def __init__(self, c: RefLlamaConfig):
        super().__init__()
        self.config = c
        self.tok_emb = nn.Embedding(c.vocab_size, c.emb_dim)
        self.trf_blocks = nn.ModuleList(RefBlock(c) for _ in range(c.n_layers))
        self.final_norm = nn.RMSNorm(c.emb_dim, eps=c.eps)
        self.out_head = nn.Linear(c.emb_dim, c.vocab_size, bias=False)
        cos, sin = compute_rope_params(c.head_dim, c.rope_base, c.context_length)
        self.register_buffer("cos", cos, persistent=False)  # [context_length, Dh]
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.tok_emb(idx)  # [B, T, D]
        for block in self.trf_blocks:
            x = block(x, self.cos[:T], self.sin[:T])
        logits = self.out_head(self.final_norm(x))  # [B, T, V]
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def ref_config(c: LlamaConfig) -> RefLlamaConfig:
    """The reference's configuration for lib.llama's ``c`` (no window, no QK-norm, halves, untied)."""
    if c.sliding_window or c.qk_norm or c.rope_scaling or c.tie_word_embeddings:
        raise ValueError("config: the reference has no window, QK-norm, RoPE scaling or tying")
    if c.rope_style != "halves":
        raise ValueError(
            f"config: the reference rotates split halves, got rope_style={c.rope_style!r}"
        )
    return RefLlamaConfig(
        vocab_size=c.vocab_size,
        context_length=c.max_position_embeddings,
        emb_dim=c.hidden_size,
        n_layers=c.num_hidden_layers,
        n_heads=c.num_attention_heads,
        n_kv_heads=c.num_key_value_heads,
        head_dim=c.head_dim,
        hidden_dim=c.intermediate_size,
        rope_base=c.rope_theta,
        eps=c.rms_norm_eps,
    )


# lib.llama's checkpoint names (transformers') -> the reference's
REF_NAMES = {
    "model.embed_tokens": "tok_emb",
    "model.norm": "final_norm",
    "lm_head": "out_head",
    "model.layers": "trf_blocks",
    "input_layernorm": "norm1",
    "post_attention_layernorm": "norm2",
    "self_attn.q_proj": "att.W_query",
    "self_attn.k_proj": "att.W_key",
    "self_attn.v_proj": "att.W_value",
    "self_attn.o_proj": "att.out_proj",
    "mlp.gate_proj": "ff.fc1",
    "mlp.up_proj": "ff.fc2",
    "mlp.down_proj": "ff.fc3",
}


def load_lib_weights(ref: RefLlama, model: Llama) -> RefLlama:
    """Copy every weight of ``model`` into ``ref`` by name (strict: each one has its place)."""
    state = {}
    for name, tensor in model.state_dict().items():
        for ours, theirs in REF_NAMES.items():
            name = name.replace(ours, theirs)
        state[name] = tensor.clone()
    ref.load_state_dict(state, strict=True)
    return ref


# --- learned positions instead of RoPE, the model otherwise the same --------------------------------


class LearnedPositionsLlama(Llama):
    """lib.llama.Llama with GPT-2's learned positions instead of RoPE: a table
    ``model.embed_positions`` [max_position_embeddings, D] added to the token embeddings, queries and
    keys not rotated. Everything else runs lib.llama's own modules; no window, no QK-norm.
    forward(input_ids [B, T]) -> LlamaOutput (logits only)."""

    def __init__(self, config: LlamaConfig):
        if config.sliding_window or config.qk_norm:
            raise ValueError("config: LearnedPositionsLlama has no window and no QK-norm")
        super().__init__(config)
        table = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        nn.init.normal_(table.weight, mean=0.0, std=config.initializer_range)
        self.model["embed_positions"] = table

    def forward(self, input_ids, targets=None):
        check_llama_inputs(self.config, input_ids)  # as Llama.forward
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)  # [T]
        x = self.model.embed_tokens(input_ids) + self.model.embed_positions(positions)  # [B, T, D]
        for layer in self.model.layers:
            x = _layer_without_rope(layer, x)  # [B, T, D]
        return LlamaOutput(self.lm_head(self.model.norm(x)), None, None, None)


def _layer_without_rope(layer, x):
    """lib.llama.DecoderLayer.forward with Attention.forward written out, without its RoPE line."""
    a, T = layer.self_attn, x.shape[1]
    h = layer.input_layernorm(x)  # [B, T, D]
    q = _split_heads(a.q_proj(h), a.H)  # [B, H, T, Dh]
    k = _split_heads(a.k_proj(h), a.Hkv)  # [B, Hkv, T, Dh]
    v = _split_heads(a.v_proj(h), a.Hkv)
    G = a.H // a.Hkv
    mask = causal_mask(T, device=x.device)  # [T, T]
    p = a.dropout if a.training else 0.0
    heads, _ = attention_heads(q, repeat_kv(k, G), repeat_kv(v, G), mask, p, False)
    x = x + a.resid_dropout(a.o_proj(_merge_heads(heads)))  # [B, T, D]
    return x + layer.mlp(layer.post_attention_layernorm(x))


def rotation_alone(c: LlamaConfig, B: int, T: int):
    """A callable running what Llama.forward runs for RoPE and nothing else: the frequencies and
    the cos and sin of T positions once, then apply_rope on queries [B, H, T, Dh] and keys
    [B, Hkv, T, Dh] in each of the layers."""
    g = torch.Generator().manual_seed(0)
    q = torch.randn(B, c.num_attention_heads, T, c.head_dim, generator=g)  # [B, H, T, Dh]
    k = torch.randn(B, c.num_key_value_heads, T, c.head_dim, generator=g)  # [B, Hkv, T, Dh]

    def rotate():
        positions = torch.arange(T)  # [T]
        cos, sin = rope_cos_sin(positions, rope_frequencies(c.head_dim, c.rope_theta))
        for _ in range(c.num_hidden_layers):
            apply_rope(q, cos, sin, c.rope_style)
            apply_rope(k, cos, sin, c.rope_style)

    return rotate


# --- generation with a cache -----------------------------------------------------------------------


def copy_of(cache: KVCache) -> KVCache:
    """A new KVCache over the same tensors (``KVCache.update`` concatenates into new tensors and
    never writes into these, so the copy can be extended while the original stays as it is)."""
    new = KVCache()
    new.keys, new.values = list(cache.keys), list(cache.values)
    return new


@torch.no_grad()
def prefill(model: Llama, prompt, cache: KVCache):
    """Run the model on the prompt [1, L] into ``cache``; -> the greedy next token [1, 1]."""
    return model(prompt, kv_cache=cache).logits[:, -1].argmax(-1, keepdim=True)


@torch.no_grad()
def decode(model: Llama, cache: KVCache, token, n: int):
    """n greedy steps after what the cache holds, one token at a time; -> the tokens [1, n]."""
    out = []
    for _ in range(n):
        out.append(token)
        token = model(token, kv_cache=cache).logits[:, -1].argmax(-1, keepdim=True)  # [1, 1]
    return torch.cat(out, dim=1)


def cache_bytes(cache: KVCache) -> tuple[int, int]:
    """(bytes of the cache's key and value tensors, bytes of the memory they hold): a slice holds
    the whole block it was cut from, so the second counts each tensor's storage, once."""
    tensors = [*cache.keys, *cache.values]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(t.nbytes for t in tensors), sum(storages.values())


def window_memory(model: Llama, cache: KVCache, lengths, first_token):
    """Greedy generation from one token until the cache has seen max(lengths) positions, one token
    at a time; -> ({P: cache_bytes(cache) once P positions were seen, for P in lengths}, tokens)."""
    sizes, tokens, token = {}, [], first_token
    with torch.no_grad():
        while cache.length < max(lengths):
            tokens.append(token)
            token = model(token, kv_cache=cache).logits[:, -1].argmax(-1, keepdim=True)
            if cache.length in lengths:
                sizes[cache.length] = cache_bytes(cache)
    return sizes, torch.cat(tokens, dim=1)


# --- the benchmark ---------------------------------------------------------------------------------


PROFILE_COLUMNS = [
    Column("op", "operator"),
    Column("calls", "calls"),
    Column("self_ms", "self CPU (ms)", ".1f"),
    Column("share", "share", ".0%"),
]


def _kib(n) -> str:
    return f"{n / 1024:,.1f}"


def _ratio_text(row) -> str:
    return f"{row['ratio_cpu']:.3f} (IQR {row['ratio_cpu_iqr'][0]:.3f} to {row['ratio_cpu_iqr'][1]:.3f})"


def run(
    vocab_size: int = 512,
    hidden_size: int = 128,
    num_hidden_layers: int = 4,
    num_attention_heads: int = 8,
    num_key_value_heads: int = 2,
    head_dim: int = 16,
    intermediate_size: int = 352,
    batch: int = 8,
    block_size: int = 128,
    cached=(256, 1024),
    new_tokens: int = 32,
    window: int = 128,
    window_lengths=(64, 128, 256, 512, 1024),
    rope_lengths=(256, 1024),
    rope_batch: int = 2,
    repeats: int = 15,
    warmup: int = 2,
    min_block_s: float = 0.1,
) -> Section:
    contexts = (block_size, max(cached) + new_tokens, max(window_lengths), max(rope_lengths))
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        head_dim=head_dim,
        max_position_embeddings=max(contexts),
        rope_theta=10000.0,
    )
    H, Hkv = num_attention_heads, num_key_value_heads
    shape = f"vocab_size={vocab_size}, hidden_size={hidden_size}, intermediate_size={intermediate_size}, num_hidden_layers={num_hidden_layers}, num_attention_heads={H}, num_key_value_heads={Hkv}, head_dim={head_dim}, RoPE theta 10,000 (split halves), untied, dropout 0"
    method = f"Three measurements of `lib.llama.Llama` (configuration {shape}; random weights, seed 0), float32. *Training*: one step, the loss of `model(idx, targets)`, `loss.backward()`, `AdamW.step()` (lr 3e-4, weight decay 0.1), gradients set to None, on a batch of {batch} sequences of {block_size} random token ids ({batch * block_size} tokens per step), against the minimal reference written in `benchmarks/llama.py` (`RefLlama`, the same architecture as rasbt's and nanochat's from-scratch ports write it: `nn.RMSNorm`, cos and sin tables computed once, `F.scaled_dot_product_attention(is_causal=True)`), loaded with the same weights (tests/test_benchmark_llama.py checks that both compute the same loss). {TIMING_NOTE.format(repeats=repeats, warmup=warmup)} Here *ratio* is lib.llama's throughput over the reference's (the reference's time over lib.llama's): above 1, lib.llama trains faster; the goal is judged on the CPU-time ratio. *tokens/CPU s*, here and below: tokens per second of the process's CPU time (the median CPU time of a call), which does not count the waits for a core that the wall clock counts on a shared machine (the step times in ms are wall-clock). *Generation* and *RoPE*: see the tables below."
    columns = [
        Column("batch", "batch x block"),
        Column("params_lib", "parameters (lib.llama)", ","),
        Column("params_ref", "parameters (reference)", ","),
        Column("lib_tok_s", "lib.llama (tokens/CPU s)", ",.0f"),
        Column("ref_tok_s", "reference (tokens/CPU s)", ",.0f"),
        *comparison_columns("ref", "lib", "reference step", "lib.llama step"),
        Column("goal", "goal", lambda g: f">= {g:.2f}"),
        Column("met", "met", yes_no),
    ]
    section = Section(
        "llama",
        "9. A modern decoder (lib.llama): training throughput, the GQA and sliding-window caches, RoPE's cost",
        method,
        columns,
    )

    # 1. training throughput against the reference
    torch.manual_seed(0)
    ours = Llama(config).train()
    ref = load_lib_weights(RefLlama(ref_config(config)), ours).train()
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(vocab_size, (batch, block_size), generator=g)  # [B, T]
    targets = torch.randint(vocab_size, (batch, block_size), generator=g)  # [B, T]
    with torch.no_grad():
        loss_diff = abs(ours(idx, targets).loss.item() - ref(idx, targets)[1].item())
    times = time_side_by_side(
        {"lib": _step_fn(ours, idx, targets), "ref": _step_fn(ref, idx, targets)},
        repeats,
        warmup,
        min_block_s,
    )
    row = {
        "batch": f"{batch} x {block_size}",
        "params_lib": count_parameters(ours),
        "params_ref": count_parameters(ref),
        "goal": GOAL_TRAINING,
    }
    row.update(comparison_row(times["ref"], times["lib"], "ref", "lib"))  # t_ref / t_lib
    tokens = batch * block_size
    # per second of the process's CPU time: on a shared machine the wall clock counts the waits
    row["lib_tok_s"], row["ref_tok_s"] = tokens / row["lib_cpu_s"], tokens / row["ref_cpu_s"]
    row["met"] = row["ratio_cpu"] >= GOAL_TRAINING
    section.rows.append(row)
    section.goals.append(
        {
            "goal": f"training tokens/s lib.llama / reference >= {GOAL_TRAINING:.2f}",
            "measured": _ratio_text(row),
            "met": row["met"],
        }
    )
    section.findings.append(
        f"Training: lib.llama {row['lib_tok_s']:,.0f} tokens per CPU second, the reference {row['ref_tok_s']:,.0f}: ratio {_ratio_text(row)} against the goal >= {GOAL_TRAINING:.2f} ({'met' if row['met'] else 'not met'}). Before timing, both computed the loss of the same batch from the same weights: {loss_diff:.1e} apart."
    )
    if not row["met"]:
        ops, total = profile_ops(_step_fn(ours, idx, targets), top=10)
        ref_ops, ref_total = profile_ops(_step_fn(ref, idx, targets), top=10)
        for who, rows, seconds in (
            ("lib.llama", ops, total),
            ("the reference", ref_ops, ref_total),
        ):
            section.extra_tables.append(
                (
                    f"Where a training step of {who} spends its time (torch.profiler, operators by self CPU time, {1e3 * seconds:.0f} ms in all, profiler overhead included):",
                    PROFILE_COLUMNS,
                    rows,
                )
            )
    del ours, ref

    # 2. generation: GQA against MHA at the same query heads; the sliding-window cache
    gqa_config = config
    mha_config = replace(config, num_key_value_heads=H)
    models = {}
    for name, c in (("gqa", gqa_config), ("mha", mha_config)):
        torch.manual_seed(0)
        models[name] = Llama(c).eval()
    gen_rows = []
    for L in cached:
        prompt = torch.randint(vocab_size, (1, L), generator=torch.Generator().manual_seed(L))
        prefilled, first = {}, {}
        for name, model in models.items():
            prefilled[name] = KVCache()
            first[name] = prefill(model, prompt, prefilled[name])
        times = time_side_by_side(
            {
                name: (
                    lambda m=model, c=prefilled[name], t=first[name]: decode(
                        m, copy_of(c), t, new_tokens
                    )
                )
                for name, model in models.items()
            },
            repeats,
            1,
            0.0,
        )
        shown = {name: cache_bytes(c)[0] for name, c in prefilled.items()}
        held = {name: cache_bytes(c)[1] for name, c in prefilled.items()}
        r = {
            "cached": L,
            "gqa_bytes": shown["gqa"],
            "mha_bytes": shown["mha"],
            "expected_bytes": L * kv_cache_bytes_per_token(gqa_config, torch.float32),
            "held_equal": held == shown,
            "bytes_ratio": shown["gqa"] / shown["mha"],
        }
        r.update(comparison_row(times["mha"], times["gqa"], "mha", "gqa"))  # t_mha / t_gqa
        r["gqa_tok_s"], r["mha_tok_s"] = new_tokens / r["gqa_cpu_s"], new_tokens / r["mha_cpu_s"]
        gen_rows.append(r)
    expected_ratio = Hkv / H
    exact = all(
        r["gqa_bytes"] * H == r["mha_bytes"] * Hkv and r["gqa_bytes"] == r["expected_bytes"]
        for r in gen_rows
    )
    section.extra_tables.append(
        (
            f"*Generation, GQA against MHA*: greedy decoding of {new_tokens} new tokens, one at a time, with `lib.gpt.KVCache` (what `lib.llama.step_function` uses without a window) already holding the keys and values of a prompt of L random ids (filled before timing, a new copy for every call), batch 1, under `torch.no_grad()`; GQA is the configuration above ({H} query heads, {Hkv} key/value heads: {H // Hkv} query heads per key/value head), MHA the same with {H} key/value heads (every other size the same). *cache bytes*: the keys and values of every layer the cache holds after the prompt, measured (`Tensor.nbytes`, and the storages they hold, the same here), against 2 x layers x Hkv x Dh x 4 bytes x L (`lib.llama.kv_cache_bytes_per_token`). Times and *speed-up* (MHA's time over GQA's, CPU time; above 1 GQA is faster) over {repeats} interleaved rounds after a warm-up call each.",
            [
                Column("cached", "cached tokens L"),
                Column("gqa_bytes", "GQA cache (KiB)", _kib),
                Column("mha_bytes", "MHA cache (KiB)", _kib),
                Column("bytes_ratio", "GQA / MHA bytes", ".4f"),
                Column("expected_bytes", "GQA, computed (KiB)", _kib),
                Column("gqa_tok_s", "GQA (tokens/CPU s)", ",.0f"),
                Column("mha_tok_s", "MHA (tokens/CPU s)", ",.0f"),
                Column("ratio", "speed-up, wall", ".3f"),
                Column("ratio_cpu", "speed-up, CPU", ".3f"),
                Column("ratio_cpu_iqr", "IQR", lambda p: f"[{p[0]:.3f}, {p[1]:.3f}]"),
            ],
            gen_rows,
        )
    )
    section.goals.append(
        {
            "goal": f"GQA's KV cache exactly {Hkv}/{H} of MHA's bytes at {' and '.join(map(str, cached))} cached tokens; tokens/s reported",
            "measured": "; ".join(
                f"L = {r['cached']}: {r['bytes_ratio']:.4f} ({r['gqa_bytes']:,} / {r['mha_bytes']:,} bytes), {r['gqa_tok_s']:,.0f} against {r['mha_tok_s']:,.0f} tokens per CPU second (GQA against MHA)"
                for r in gen_rows
            ),
            "met": exact,
        }
    )
    section.findings.append(
        f"Generation: GQA's cache holds {expected_ratio:.4g} of MHA's bytes at every length ({'exactly, as computed' if exact else 'NOT exactly as computed'}); greedy decoding with it runs at "
        + ", ".join(
            f"{r['gqa_tok_s']:,.0f} tokens per CPU second against MHA's {r['mha_tok_s']:,.0f} with {r['cached']} cached tokens (speed-up {r['ratio_cpu']:.2f})"
            for r in gen_rows
        )
        + "."
        + (
            ""
            if all(r["held_equal"] for r in gen_rows)
            else " (The storages the caches hold are larger than their tensors.)"
        )
        + " lib.llama repeats the kept key/value heads to the H query heads at every step (`repeat_kv`), so the attention itself reads as many numbers as MHA's; GQA saves the cache's memory, the smaller k_proj and v_proj, and the copy of a smaller cache at each step (`KVCache.update` concatenates)."
    )

    # the sliding-window cache: bytes held at lengths past the window
    window_config = replace(config, sliding_window=window)
    torch.manual_seed(0)
    windowed = Llama(window_config).eval()
    start = torch.randint(vocab_size, (1, 1), generator=torch.Generator().manual_seed(1))
    rolling, rolling_tokens = window_memory(
        windowed, SlidingWindowCache(window), window_lengths, start
    )
    full, full_tokens = window_memory(windowed, KVCache(), window_lengths, start)
    per_token = kv_cache_bytes_per_token(window_config, torch.float32)
    window_rows = [
        {
            "seen": P,
            "kept": rolling[P][0] // per_token,
            "rolling_shown": rolling[P][0],
            "rolling_held": rolling[P][1],
            "full_held": full[P][1],
        }
        for P in window_lengths
    ]
    past = [r for r in window_rows if r["seen"] >= window]
    flat = len(past) >= 2 and len({r["rolling_held"] for r in past}) == 1
    same = torch.equal(rolling_tokens, full_tokens)
    section.extra_tables.append(
        (
            f"*The sliding-window cache*: the same GQA model with a window W = {window} (`sliding_window={window}`), greedy generation from one token, one token at a time, with `lib.llama.SlidingWindowCache({window})` and, on the same model, with the full `lib.gpt.KVCache`; the bytes of the caches' key and value tensors of every layer once P positions were seen: *kept*, the tensors' own bytes (`Tensor.nbytes`), and *held*, the memory they hold (their storages, each once: the kept W - 1 positions are a slice of the last concatenation, which stays alive whole).",
            [
                Column("seen", "positions seen P"),
                Column("kept", "positions kept"),
                Column("rolling_shown", "window cache, kept (KiB)", _kib),
                Column("rolling_held", "window cache, held (KiB)", _kib),
                Column("full_held", "full cache, held (KiB)", _kib),
            ],
            window_rows,
        )
    )
    if flat:
        measured = f"{_kib(past[0]['rolling_held'])} KiB held at P = {', '.join(str(r['seen']) for r in past)} (the full cache: {_kib(past[-1]['full_held'])} KiB at {past[-1]['seen']})"
    else:
        measured = "held: " + ", ".join(
            f"{_kib(r['rolling_held'])} KiB at {r['seen']}" for r in past
        )
    section.goals.append(
        {
            "goal": f"the sliding-window cache's memory flat beyond the window (W = {window})",
            "measured": measured,
            "met": flat,
        }
    )
    if past:
        section.findings.append(
            f"The sliding-window cache keeps W - 1 = {window - 1} positions per layer and holds the memory of {past[-1]['rolling_held'] // per_token} positions (the kept ones are a slice of the step's concatenation); past the window it {'stays at' if flat else 'does NOT stay flat:'} {_kib(past[-1]['rolling_held'])} KiB at P = {past[-1]['seen']}, while the full cache grows by {_kib(per_token)} KiB a token. "
            + (
                "Both caches gave the same tokens (the window's mask hides from the full cache what the rolling one dropped)."
                if same
                else "The two caches did NOT give the same tokens."
            )
        )

    # 3. RoPE against learned positions, forward only
    torch.manual_seed(0)
    with_rope = Llama(config).eval()
    learned = LearnedPositionsLlama(config).eval()
    learned.load_state_dict(with_rope.state_dict(), strict=False)  # all but the position table
    rope_rows = []
    for T in rope_lengths:
        x = torch.randint(vocab_size, (rope_batch, T), generator=torch.Generator().manual_seed(T))
        rotation = rotation_alone(config, rope_batch, T)
        with torch.no_grad():
            times = time_side_by_side(
                {
                    "rope": lambda x=x: with_rope(x),
                    "learned": lambda x=x: learned(x),
                    "rotation": rotation,
                },
                repeats,
                warmup,
                min_block_s,
            )
        r = {"T": T, "goal": GOAL_ROPE}
        r.update(comparison_row(times["rope"], times["learned"], "rope", "learned"))
        r["rotation_cpu_s"] = summarize(times["rotation"].cpu).median
        r["rotation_share"] = r["rotation_cpu_s"] / r["rope_cpu_s"]
        r["met"] = r["ratio_cpu"] <= GOAL_ROPE
        rope_rows.append(r)
    section.extra_tables.append(
        (
            f"*RoPE against learned positions*: one forward pass of `lib.llama.Llama` (the configuration above; RoPE in every layer, with its cos and sin computed in each forward) against the same model with a table of learned positions added to the token embeddings and no rotation (`LearnedPositionsLlama` in `benchmarks/llama.py`, the same weights otherwise), eval mode, `torch.no_grad()`, a batch of {rope_batch} sequences of T random ids. *ratio*: RoPE's time over learned positions' time (below {GOAL_ROPE:.2f}: the goal), over {repeats} interleaved rounds. *RoPE's operators alone*: what lib.llama's forward runs for RoPE and nothing else, timed in the same rounds: `rope_frequencies` and `rope_cos_sin` once, and `apply_rope` on a query and a key tensor of this shape in every layer (`rotation_alone`), in CPU time, and its share of the forward's CPU time.",
            [
                Column("T", "T"),
                *comparison_columns("rope", "learned", "RoPE", "learned positions"),
                Column(
                    "rotation_cpu_s", "RoPE's operators alone (ms, CPU)", lambda v: f"{1e3 * v:.2f}"
                ),
                Column("rotation_share", "share of the forward (CPU)", ".1%"),
                Column("goal", "goal", lambda v: f"<= {v:.2f}"),
                Column("met", "met", yes_no),
            ],
            rope_rows,
        )
    )
    section.goals.append(
        {
            "goal": f"forward with RoPE / with learned positions <= {GOAL_ROPE:.2f} at T = {' and '.join(map(str, rope_lengths))}",
            "measured": "; ".join(f"T = {r['T']}: {_ratio_text(r)}" for r in rope_rows),
            "met": all(r["met"] for r in rope_rows),
        }
    )
    T_prof = max(rope_lengths)
    x = torch.randint(vocab_size, (rope_batch, T_prof), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ops, total = profile_ops(lambda: with_rope(x), top=10)
    section.extra_tables.append(
        (
            f"Where a forward with RoPE spends its time (T = {T_prof}; torch.profiler, operators by self CPU time, {1e3 * total:.0f} ms in all, profiler overhead included):",
            PROFILE_COLUMNS,
            ops,
        )
    )
    section.findings.append(
        "RoPE's cost per forward: "
        + ", ".join(f"{r['ratio_cpu']:.3f} at T = {r['T']}" for r in rope_rows)
        + f" (goal <= {GOAL_ROPE:.2f}: {'met' if all(r['met'] for r in rope_rows) else 'not met'}). RoPE adds, per layer, the rotation of the queries and keys (`apply_rope`: products, a sum and a difference over half of each head, and a `torch.cat`), and once per forward the cos and sin of the angles; learned positions add one table lookup and one sum. RoPE's operators alone take "
        + ", ".join(
            f"{r['rotation_share']:.1%} of the forward's CPU time at T = {r['T']}"
            for r in rope_rows
        )
        + ": a ratio of about 1 plus that share is what the rotation itself costs."
    )
    return section
