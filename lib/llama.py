"""A modern decoder: the Llama architecture (Touvron et al. 2023; Llama 3, Grattafiori et al. 2024)
and its two relatives Qwen3 (QK-norm) and Mistral 7B v0.1 (sliding-window attention), beside
chapter 13's GPT-2: the same decoder-only Transformer with five changes.

Shape legend (used in every docstring and shape comment below):

    B    batch                        T    tokens in this call
    P    positions already seen (the first new token sits at position P)
    S    keys kept in the cache (P for ``KVCache``, at most W - 1 for ``SlidingWindowCache``)
    D    hidden_size                  F    intermediate_size, the SwiGLU width
    H    num_attention_heads          Hkv  num_key_value_heads
    G    H / Hkv, query heads per key/value head
    Dh   head_dim                     V    vocab_size                W   sliding_window
    K    hypotheses alive in the beam

The changes from GPT-2 (``lib.gpt``), one per component:

- ``RMSNorm`` instead of LayerNorm (Zhang & Sennrich 2019): no mean subtracted, no bias;
- ``SwiGLU`` instead of the GELU MLP (Shazeer 2020): down(silu(gate(x)) * up(x)), F about 8/3 D;
- RoPE (``lib.rope``) instead of learned positions: queries and keys are rotated;
- grouped-query attention (Ainslie et al. 2023; multi-query, Shazeer 2019, is Hkv = 1): G query
  heads share each key/value head, so the key/value cache is G times smaller;
- no biases anywhere; input and output embeddings tied or not, per model.

Options: ``qk_norm`` (Qwen3: an RMSNorm over each head's q and k, before RoPE) and
``sliding_window`` (Mistral 7B v0.1, as in Longformer: query t attends keys t - W + 1 ... t only,
so ``SlidingWindowCache`` keeps W - 1 positions whatever the length).

Mask convention (as everywhere in this library): boolean, True where a query may attend.
Pipeline: ids [B, T] -> embed_tokens -> num_hidden_layers x DecoderLayer -> norm -> lm_head.
DecoderLayer (pre-norm): x = x + self_attn(input_layernorm(x));
                         x = x + mlp(post_attention_layernorm(x)).
Submodules carry the names of transformers' checkpoints of these three models
(``model.layers.0.self_attn.q_proj``, ``model.layers.0.mlp.gate_proj``, ...), so that
``lib.pretrained.llama.llama_from_hf`` is a loop over the state dict. Decoding, as for every
model of the library: ``sample``, ``greedy_decode`` and ``beam_search`` on ``step_function``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding, gpt
from lib._checks.llama import check_llama_config, check_llama_decoding, check_llama_inputs
from lib._validate import check_type
from lib.attention import _merge_heads, _split_heads, attention_heads, causal_mask
from lib.decoding import Decoded, Step
from lib.gpt import KVCache
from lib.rope import Llama3RopeScaling, apply_rope, rope_cos_sin, rope_frequencies

__all__ = [
    "LlamaConfig",
    "Llama",
    "LlamaOutput",
    "DecoderLayer",
    "Attention",
    "SwiGLU",
    "RMSNorm",
    "repeat_kv",
    "sliding_window_mask",
    "swiglu_hidden",
    "KVCache",
    "SlidingWindowCache",
    "new_cache",
    "step_function",
    "sample",
    "greedy_decode",
    "beam_search",
    "count_parameters",
    "kv_cache_bytes_per_token",
]


def swiglu_hidden(d: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> int:
    """F from D as Meta's Llama code computes it: 2/3 of GPT's 4D (so that the three SwiGLU matrices
    hold as many weights as GPT's two), times ``ffn_dim_multiplier``, rounded up to a multiple of
    ``multiple_of``. Llama 2 7B: 11008 = swiglu_hidden(4096); Llama 3 8B: 14336 =
    swiglu_hidden(4096, 1024, 1.3); Llama 3.2 1B: 8192 = swiglu_hidden(2048, 256, 1.5)."""
    hidden = int(2 * (4 * d) / 3)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * -(-hidden // multiple_of)  # rounded up


@dataclass(frozen=True)
class LlamaConfig:
    """Hyper-parameters of the decoder, named as in transformers' config.json of these models.

    The defaults are Llama 3.2 1B's numbers without its RoPE scaling and its tied embeddings
    (``llama3_2_1b()`` adds both). ``head_dim`` is its own number (Qwen3 0.6B: D = 1024 but
    H * Dh = 2048). ``rope_style``: "halves" (transformers' checkpoints) or "interleaved" (Meta's
    original code), see ``lib.rope``.
    ``sliding_window``: None, or W. ``dropout`` on the attention weights and on each residual
    branch: 0 in all four published models (an option for training small models). The presets'
    parameter counts equal transformers' models built from the published config.json files
    (tests/test_pretrained_llama.py)."""

    vocab_size: int = 128256
    hidden_size: int = 2048
    intermediate_size: int = 8192
    num_hidden_layers: int = 16
    num_attention_heads: int = 32
    num_key_value_heads: int = 8
    head_dim: int = 64
    max_position_embeddings: int = 131072
    rms_norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    rope_scaling: Llama3RopeScaling | None = None
    rope_style: str = "halves"
    qk_norm: bool = False
    sliding_window: int | None = None
    tie_word_embeddings: bool = False
    dropout: float = 0.0
    initializer_range: float = 0.02

    def __post_init__(self):
        check_llama_config(self, Llama3RopeScaling)

    @classmethod
    def llama3_2_1b(cls, **overrides) -> "LlamaConfig":
        """Llama 3.2 1B: 16 layers, D 2048, 32 query / 8 key-value heads, tied; 1,235,814,400."""
        return cls(**{"rope_scaling": Llama3RopeScaling(32.0, 1.0, 4.0, 8192),
                      "tie_word_embeddings": True, **overrides})  # fmt: skip

    @classmethod
    def llama3_1_8b(cls, **overrides) -> "LlamaConfig":
        """Llama 3.1 8B: 32 layers, D 4096, 32 / 8 heads of 128, F 14336; 8,030,261,248."""
        return cls(**{"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                      "head_dim": 128, "rope_scaling": Llama3RopeScaling(8.0, 1.0, 4.0, 8192),
                      **overrides})  # fmt: skip

    @classmethod
    def qwen3_0_6b(cls, **overrides) -> "LlamaConfig":
        """Qwen3 0.6B: 28 layers, D 1024, 16 / 8 heads of 128, QK-norm, tied; 596,049,920."""
        return cls(**{"vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072,
                      "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
                      "head_dim": 128, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6,
                      "rope_theta": 1000000.0, "qk_norm": True, "tie_word_embeddings": True,
                      **overrides})  # fmt: skip

    @classmethod
    def mistral_7b(cls, **overrides) -> "LlamaConfig":
        """Mistral 7B v0.1: 32 layers, D 4096, 32 / 8 heads of 128, window 4096; 7,241,732,096."""
        return cls(**{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                      "num_hidden_layers": 32, "head_dim": 128, "max_position_embeddings": 32768,
                      "rope_theta": 10000.0, "sliding_window": 4096, **overrides})  # fmt: skip

    @classmethod
    def small(cls, **overrides) -> "LlamaConfig":
        """The book's model: 2 layers, D 64, 4 query / 2 key-value heads of 16, F 176
        (``swiglu_hidden(64, 16)``), untied, 1024 positions, theta 10,000."""
        return cls(**{"vocab_size": 256, "hidden_size": 64, "intermediate_size": 176,
                      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                      "head_dim": 16, "max_position_embeddings": 1024, "rope_theta": 10000.0,
                      **overrides})  # fmt: skip


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last dim (Zhang & Sennrich 2019, eq. 4):
    LayerNorm without the mean subtracted and without the bias. forward(x [..., D]) -> [..., D].
    float16 / bfloat16 inputs are normalized in float32 and cast back before the weight, as in
    transformers; equal to ``torch.nn.RMSNorm(D, eps)`` (tests)."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))  # the gain g, [D]

    def forward(self, x: Tensor) -> Tensor:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)  # [..., D], RMS 1
        return self.weight * h.to(x.dtype)


class SwiGLU(nn.Module):
    """The feed-forward block FFN_SwiGLU(x) = (Swish_1(x W) * x V) W_2  (Shazeer 2020, eq. 6):
    down_proj(silu(gate_proj(x)) * up_proj(x)), D -> F -> D, no biases. forward(x [B, T, D])."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        D, Fw = config.hidden_size, config.intermediate_size
        self.gate_proj = nn.Linear(D, Fw, bias=False)  # W, through silu: the gate
        self.up_proj = nn.Linear(D, Fw, bias=False)  # V: the value the gate scales
        self.down_proj = nn.Linear(Fw, D, bias=False)  # W_2
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)  # [B, T, F]: the gate times the value
        return self.dropout(self.down_proj(h))  # [B, T, D]


def repeat_kv(x: Tensor, groups: int) -> Tensor:
    """[B, Hkv, T, Dh] -> [B, Hkv * groups, T, Dh]: key/value head j serves query heads
    j * G ... j * G + G - 1 (consecutive query heads share one, as in every checkpoint). The
    classic mistake, ``x.repeat(1, G, 1, 1)``, gives query head h the key head h % Hkv instead."""
    return x.repeat_interleave(groups, dim=1)


def sliding_window_mask(T: int, window: int, past: int = 0, device=None) -> Tensor:
    """bool [T, past + T]: query i (position t = past + i) may attend key j iff t - W < j <= t, the W
    positions t - W + 1 ... t (itself included), as transformers' MistralForCausalLM counts the window
    (the Mistral paper's text: "between i - W and i"); ``causal_mask`` is an infinite window."""
    causal = causal_mask(T, device=device, past=past)  # [T, past + T], j <= past + i
    too_old = torch.ones_like(causal).tril(diagonal=past - window)  # j <= past + i - W
    return causal & ~too_old


class Attention(nn.Module):
    """Grouped-query causal self-attention with RoPE (Ainslie et al. 2023; Su et al. 2021).

    forward(x [B, T, D], cos, sin [T, Dh/2], kv_cache=None, layer=0, need_weights=False)
        -> (y [B, T, D], weights [B, H, T, S + T] or None).

    q_proj gives H query heads, k_proj and v_proj Hkv key/value heads (no biases); with
    ``qk_norm`` each head's q and k go through an RMSNorm over Dh (``q_norm``, ``k_norm``) before
    RoPE (Qwen3). The cache stores the Hkv rotated key heads, not the H repeated ones; the
    repeat (``repeat_kv``) comes after it. Dropout acts on the weights and the output."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        c = config
        self.H, self.Hkv, self.Dh = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.window, self.style, self.dropout = c.sliding_window, c.rope_style, c.dropout
        self.q_proj = nn.Linear(c.hidden_size, self.H * self.Dh, bias=False)
        self.k_proj = nn.Linear(c.hidden_size, self.Hkv * self.Dh, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, self.Hkv * self.Dh, bias=False)
        self.o_proj = nn.Linear(self.H * self.Dh, c.hidden_size, bias=False)
        self.q_norm = RMSNorm(self.Dh, c.rms_norm_eps) if c.qk_norm else None  # Qwen3
        self.k_norm = RMSNorm(self.Dh, c.rms_norm_eps) if c.qk_norm else None
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x, cos, sin, kv_cache=None, layer: int = 0, need_weights: bool = False):
        T = x.shape[1]
        q = _split_heads(self.q_proj(x), self.H)  # [B, H, T, Dh]
        k = _split_heads(self.k_proj(x), self.Hkv)  # [B, Hkv, T, Dh]
        v = _split_heads(self.v_proj(x), self.Hkv)  # [B, Hkv, T, Dh]
        if self.q_norm is not None:  # Qwen3: each head's q and k at RMS 1, then RoPE
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, cos, sin, self.style), apply_rope(k, cos, sin, self.style)
        if kv_cache is not None:
            k, v = kv_cache.update(layer, k, v)  # [B, Hkv, S + T, Dh]: the kept keys, then ours
        S = k.shape[2] - T  # keys before ours
        if self.window is not None:
            mask = sliding_window_mask(T, self.window, S, x.device)  # [T, S + T]
        else:  # one new token after the cache may attend every key: no mask
            mask = None if T == 1 else causal_mask(T, device=x.device, past=S)  # [T, S + T]
        G = self.H // self.Hkv
        k, v = repeat_kv(k, G), repeat_kv(v, G)  # [B, H, S + T, Dh]
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = attention_heads(q, k, v, mask, dropout_p, need_weights)  # [B, H, T, Dh]
        return self.resid_dropout(self.o_proj(_merge_heads(heads))), weights  # [B, T, D]


class DecoderLayer(nn.Module):
    """One pre-norm block: x = x + self_attn(input_layernorm(x)), then
    x = x + mlp(post_attention_layernorm(x)); forward -> (x [B, T, D], weights or None)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = Attention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = SwiGLU(config)

    def forward(self, x, cos, sin, kv_cache=None, layer: int = 0, need_weights: bool = False):
        a, weights = self.self_attn(
            self.input_layernorm(x), cos, sin, kv_cache, layer, need_weights
        )
        x = x + a  # [B, T, D]
        return x + self.mlp(self.post_attention_layernorm(x)), weights  # [B, T, D]


class LlamaOutput(NamedTuple):
    """What ``Llama.forward`` returns, as ``lib.gpt.GPTOutput``: logits [B, T, V]; loss (None
    without targets); attentions, one [B, H, T, S + T] per layer (None unless asked);
    hidden_states, the embeddings, each layer's output, the last one after ``norm``."""

    logits: Tensor
    loss: Tensor | None
    attentions: tuple[Tensor, ...] | None
    hidden_states: tuple[Tensor, ...] | None


class Llama(nn.Module):
    """The decoder-only language model: ``model.embed_tokens`` [V, D], ``model.layers``,
    ``model.norm`` (RMSNorm), ``lm_head`` (D -> V, no bias; its weight is embed_tokens' when
    ``tie_word_embeddings``). No position table: RoPE rotates q and k inside each layer.

    Initialization, as transformers' (the Llama papers do not state theirs): every Linear and
    Embedding weight N(0, initializer_range^2), RMSNorm gains 1. Deviations from the published
    models: none in the computation (equal to transformers' LlamaForCausalLM, Qwen3ForCausalLM and
    MistralForCausalLM with the same weights, see the tests); the optional ``dropout``.
    """

    def __init__(self, config: LlamaConfig):
        super().__init__()
        check_type(config, "config", LlamaConfig)  # its fields: LlamaConfig.__post_init__
        self.config = c = config
        self.model = nn.ModuleDict(
            dict(
                embed_tokens=nn.Embedding(c.vocab_size, c.hidden_size),
                layers=nn.ModuleList(DecoderLayer(c) for _ in range(c.num_hidden_layers)),
                norm=RMSNorm(c.hidden_size, c.rms_norm_eps),
            )
        )
        self.lm_head = nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        self.apply(self._init_weights)
        if c.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight  # one Parameter [V, D]

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=self.config.initializer_range)

    @staticmethod
    def positions(T: int, kv_cache: KVCache | None = None, device=None) -> Tensor:
        """The positions of T new tokens, [T]: P, ..., P + T - 1, where P = ``kv_cache.length``
        is the number of positions already seen (0 without a cache), so that RoPE turns each new
        query and key by its place in the whole sequence, not in this call."""
        P = kv_cache.length if kv_cache is not None else 0
        return torch.arange(P, P + T, device=device)

    def forward(
        self,
        input_ids: Tensor,
        targets: Tensor | None = None,
        return_attention: bool = False,
        return_hidden_states: bool = False,
        kv_cache: KVCache | None = None,
    ) -> LlamaOutput:
        """input_ids [B, T] -> LlamaOutput, exactly as ``lib.gpt.GPT.forward``: targets [B, T]
        (-100 ignored) give the mean cross-entropy; kv_cache (``KVCache`` or, for a model with a
        sliding window, ``SlidingWindowCache``): input_ids then holds the tokens after the P
        positions seen. Raises ValueError for ids outside the vocabulary or P + T >
        max_position_embeddings."""
        c = self.config
        check_llama_inputs(c, input_ids, targets, kv_cache, KVCache)
        positions = self.positions(input_ids.shape[1], kv_cache, input_ids.device)  # [T]
        frequencies = rope_frequencies(c.head_dim, c.rope_theta, c.rope_scaling)  # [Dh/2]
        x = self.model.embed_tokens(input_ids)  # [B, T, D]
        cos, sin = rope_cos_sin(positions, frequencies, x.dtype)  # [T, Dh/2] each
        attentions, hidden_states = [], [x]
        for layer, block in enumerate(self.model.layers):
            x, weights = block(x, cos, sin, kv_cache, layer, return_attention)  # [B, T, D]
            attentions.append(weights)  # [B, H, T, S + T], or None
            hidden_states.append(x)
        x = self.model.norm(x)  # [B, T, D]
        hidden_states[-1] = x  # the last hidden state is what lm_head reads
        logits = self.lm_head(x)  # [B, T, V]
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        return LlamaOutput(
            logits,
            loss,
            tuple(attentions) if return_attention else None,
            tuple(hidden_states) if return_hidden_states else None,
        )


# --- the key/value caches of generation -----------------------------------------------------------


class SlidingWindowCache(KVCache):
    """``lib.gpt.KVCache`` for a model with a sliding window W: after each update, each layer keeps
    only the last W - 1 positions ([B, Hkv, S, Dh], S <= W - 1), the ones the next token can still
    see (with its own key that makes W). Memory stays flat however long the generation. ``length``
    is P, the positions seen (the next token's position, for RoPE), not S, the positions kept."""

    def __init__(self, window: int):
        super().__init__()
        self.window = window
        self.seen = 0  # P

    @property
    def length(self) -> int:
        """P, the number of positions seen (0 when empty)."""
        return self.seen

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append k, v [B, Hkv, T, Dh]; return the kept and the new ones [B, Hkv, S + T, Dh]; then
        keep the last W - 1."""
        keys, values = super().update(layer, k, v)  # [B, Hkv, S + T, Dh]
        if layer == 0:
            self.seen += k.shape[2]
        first = max(keys.shape[2] - (self.window - 1), 0)  # the oldest position still in view
        self.keys[layer], self.values[layer] = keys[:, :, first:], values[:, :, first:]
        return keys, values


def new_cache(config: LlamaConfig) -> KVCache:
    """The cache a model of ``config`` generates with: ``SlidingWindowCache(W)`` with a window,
    else ``KVCache()`` (both store Hkv key heads per layer, see ``kv_cache_bytes_per_token``)."""
    if config.sliding_window is not None:
        return SlidingWindowCache(config.sliding_window)
    return KVCache()


def kv_cache_bytes_per_token(config: LlamaConfig, dtype: torch.dtype = torch.bfloat16) -> int:
    """2 (keys and values) x layers x Hkv x Dh x bytes per number: what a ``KVCache`` grows by per
    token (a ``SlidingWindowCache`` stops at W - 1 tokens). Llama 3.1 8B in bfloat16: 131,072 (128
    KiB); with H = 32 key heads instead of Hkv = 8 it would be four times as much."""
    c = config
    return 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * dtype.itemsize


def count_parameters(config: LlamaConfig) -> int:
    """Number of distinct parameters of Llama(config), built on the meta device (no memory); a tied
    lm_head counts once."""
    with torch.device("meta"):
        model = Llama(config)
    return sum(p.numel() for p in model.parameters())


# --- decoding: lib.decoding's decoders with this model's step -------------------------------------


def step_function(model: Llama, use_cache: bool = True) -> Step:
    """The decoding step of `model` (``lib.decoding``'s interface), as ``lib.gpt.step_function``:
    with ``use_cache`` a ``new_cache(model.config)`` (reordered by beam search), so each call runs
    the model on the tokens after the P seen; without, the whole sequence at each call."""
    # the same step as GPT's: only the cache differs (a rolling one for a sliding window)
    return gpt.step_function(model, use_cache, cache_type=lambda: new_cache(model.config))


@torch.no_grad()
def sample(
    model: Llama,
    input_ids: Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Decoded:
    """``lib.gpt.sample`` for this model: input_ids [B, T] -> ``Decoded`` (tokens
    [B, max_new_tokens], log_prob [B]); temperature=0 is greedy. Put the model in eval mode."""
    check_llama_decoding(model, Llama, input_ids, max_new_tokens)
    return decoding.sample(
        step_function(model, use_cache),
        input_ids,
        max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        generator=generator,
    )


def greedy_decode(
    model: Llama, input_ids: Tensor, max_new_tokens: int, use_cache: bool = True
) -> Decoded:
    """The most probable token at every step: ``sample`` with temperature 0."""
    return sample(model, input_ids, max_new_tokens, temperature=0, use_cache=use_cache)


@torch.no_grad()
def beam_search(
    model: Llama,
    input_ids: Tensor,
    max_new_tokens: int,
    beam_width: int = 4,
    eos_id: int | None = None,
    length_penalty: float = 0.0,
) -> Decoded:
    """``lib.gpt.beam_search`` for this model: one prompt [1, T] -> ``Decoded`` tokens [1, L]."""
    check_llama_decoding(model, Llama, input_ids, max_new_tokens, one_prompt=True, eos_id=eos_id)
    return decoding.beam_search(
        step_function(model), input_ids, max_new_tokens, beam_width, eos_id, length_penalty
    )
