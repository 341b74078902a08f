"""GPT: a decoder-only Transformer language model (Radford et al. 2018; the GPT-2 variant of Radford
et al. 2019), with sampling (temperature, top-k, top-p), beam search and a key/value cache.

Shape legend (used in every docstring and shape comment below):

    B    batch                      K    hypotheses alive in the beam (<= beam_width)
    T    tokens in this call        P    tokens already in the key/value cache (0 without one)
    D    n_embd, the model width    H    n_head, attention heads       Dh   D / H, width of one head
    V    vocab_size                 C    classes of a classifier head

Mask convention (as everywhere in this library): boolean, True where a query may attend. Here the
only mask is causal: query i (absolute position P + i) may attend keys 0 .. P + i:
``lib.attention.causal_mask(T, past=P)``, the last T rows of ``causal_mask(P + T)``.

Pipeline: ids [B, T] -> wte(ids) + wpe(positions) -> dropout -> n_layer x Block -> ln_f -> lm_head
-> logits. Block (pre-LN): x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)).

Submodules carry the names of transformers' GPT2LMHeadModel, OpenAI's under a ``transformer.``
prefix (``transformer.wte``, ``transformer.h.0.attn.c_attn``, ...), so that
``lib.pretrained.gpt_from_hf`` is a loop over the state dict. OpenAI's checkpoint stores its linear
layers as "Conv1D" with the weight transposed ([in, out]); ours are nn.Linear ([out, in]).

Decoding, as for every model of the library: ``sample``, ``greedy_decode`` and ``beam_search``
(model, input_ids, ...) -> ``lib.decoding.Decoded``, built on this module's ``step_function``.
The KV cache here is the readable one (``torch.cat``); ``lib.gpt_fast.FastKVCache`` is the fast one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding
from lib._checks.gpt import (
    check_classifier_mask,
    check_gpt_classifier,
    check_gpt_config,
    check_gpt_decoding,
    check_gpt_inputs,
)
from lib._validate import check_type
from lib.attention import _merge_heads, _split_heads, attention_heads, causal_mask
from lib.decoding import Decoded, Step, sampling_distribution

__all__ = [
    "GPTConfig",
    "GPT",
    "GPTOutput",
    "Block",
    "CausalSelfAttention",
    "MLP",
    "KVCache",
    "step_function",
    "sample",
    "greedy_decode",
    "beam_search",
    "GPTClassifier",
    "GPTClassifierOutput",
    "count_parameters",
    "sampling_distribution",  # lib.decoding's, kept here: the sampling GPT made famous
]


@dataclass(frozen=True)
class GPTConfig:
    """Hyper-parameters of GPT; ``gpt2()``, ``gpt2_medium()``, ``gpt2_large()``, ``gpt2_xl()`` are the four
    models of Radford et al. 2019, Table 2 (vocabulary 50,257 byte-level BPE tokens, context 1024).

    ``block_size`` is the context length (the number of learned positions). ``dropout`` is used for the
    embeddings, the attention weights and each residual branch (GPT-2's embd_pdrop, attn_pdrop and
    resid_pdrop, all 0.1). ``layer_norm_epsilon`` is the epsilon of every LayerNorm (GPT-2: 1e-5).
    """

    vocab_size: int = 50257
    block_size: int = 1024
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.1
    layer_norm_epsilon: float = 1e-5

    def __post_init__(self):
        check_gpt_config(self)

    @classmethod
    def gpt2(cls, **overrides) -> "GPTConfig":
        """GPT-2 small: 12 layers, width 768, 12 heads; 124,439,808 parameters (the paper says 117M, see
        ``count_parameters``)."""
        return cls(**{"n_layer": 12, "n_head": 12, "n_embd": 768, **overrides})

    @classmethod
    def gpt2_medium(cls, **overrides) -> "GPTConfig":
        """GPT-2 medium: 24 layers, width 1024, 16 heads; 354,823,168 parameters (paper: 345M)."""
        return cls(**{"n_layer": 24, "n_head": 16, "n_embd": 1024, **overrides})

    @classmethod
    def gpt2_large(cls, **overrides) -> "GPTConfig":
        """GPT-2 large: 36 layers, width 1280, 20 heads; 774,030,080 parameters (paper: 762M)."""
        return cls(**{"n_layer": 36, "n_head": 20, "n_embd": 1280, **overrides})

    @classmethod
    def gpt2_xl(cls, **overrides) -> "GPTConfig":
        """GPT-2 XL: 48 layers, width 1600, 25 heads; 1,557,611,200 parameters (paper: 1542M)."""
        return cls(**{"n_layer": 48, "n_head": 25, "n_embd": 1600, **overrides})


class CausalSelfAttention(nn.Module):
    """Masked multi-head self-attention (Vaswani et al. 2017, sec. 3.2.2-3.2.3), GPT-2's layout.

    forward(x [B, T, D], kv_cache=None, layer=0, need_weights=False)
        -> (y [B, T, D], weights [B, H, T, P + T] or None).

    ``c_attn`` projects to queries, keys and values at once (D -> 3D: columns [0, D) are the
    queries, [D, 2D) the keys, [2D, 3D) the values); ``c_proj`` is the output projection W^O.
    ``_split_heads``, ``attention_heads`` and ``_merge_heads`` are lib.attention's (the split and
    the merge without input checks: ``GPT.forward`` checked the input once). need_weights=False
    takes torch's fused kernel (the same output, no T x T matrix kept). Dropout acts on the
    attention weights and on the output (attn_pdrop, resid_pdrop); the returned weights are those
    before dropout.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.dropout = config.dropout
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        x: Tensor,
        kv_cache: KVCache | None = None,
        layer: int = 0,
        need_weights: bool = False,
    ):
        T = x.shape[1]  # tokens in this call
        # c_attn's 3D columns are [queries | keys | values]: cut into 3H heads, they are
        # the H query heads, then the H key heads, then the H value heads: [B, H, T, Dh]
        q, k, v = _split_heads(self.c_attn(x), 3 * self.n_head).chunk(3, dim=1)
        P = 0  # positions before ours: none without a cache
        if kv_cache is not None:
            # the cached keys and values, then ours: [B, H, P + T, Dh]
            k, v = kv_cache.update(layer, k, v)
            P = k.shape[2] - T
        # query i sits at position P + i and may attend keys 0 .. P + i: [T, P + T]; the
        # one new token of a generation step comes last, may attend every key: no mask
        one_new_token = kv_cache is not None and T == 1
        mask = None if one_new_token else causal_mask(T, device=x.device, past=P)
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = attention_heads(q, k, v, mask, dropout_p, need_weights)
        y = self.c_proj(_merge_heads(heads))  # heads [B, H, T, Dh] -> [B, T, D]
        return self.resid_dropout(y), weights


class MLP(nn.Module):
    """The position-wise feed-forward network: c_proj(GELU(c_fc(x))), D -> 4D -> D, with GELU's tanh
    approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as in GPT (Radford et al. 2018, sec.
    4.1, citing Hendrycks & Gimpel 2016) and in OpenAI's GPT-2 code ("gelu_new" in transformers).
    forward(x [B, T, D]) -> [B, T, D]; dropout on the output (resid_pdrop)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        h = self.gelu(self.c_fc(x))  # [B, T, 4D]
        return self.dropout(self.c_proj(h))  # [B, T, D]


class Block(nn.Module):
    """One GPT-2 block, pre-LN (Radford et al. 2019, sec. 2.3: "Layer normalization was moved to the input
    of each sub-block"): x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)).
    forward(x [B, T, D], kv_cache, layer, need_weights) -> (x [B, T, D], weights [B, H, T, P + T] or None).
    GPT-1 (Radford et al. 2018) was post-LN, like the original Transformer."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = MLP(config)

    def forward(
        self,
        x: Tensor,
        kv_cache: KVCache | None = None,
        layer: int = 0,
        need_weights: bool = False,
    ):
        a, weights = self.attn(self.ln_1(x), kv_cache, layer, need_weights)
        x = x + a  # [B, T, D]
        x = x + self.mlp(self.ln_2(x))  # [B, T, D]
        return x, weights


class GPTOutput(NamedTuple):
    """What ``GPT.forward`` returns. logits [B, T, V]; loss, the mean cross-entropy of next-token
    prediction (a scalar tensor; None without targets); attentions, a tuple of n_layer weights
    [B, H, T, P + T] (None unless return_attention=True); hidden_states, a tuple of n_layer + 1
    tensors [B, T, D] (None unless return_hidden_states=True): ``hidden_states[0]`` is the
    embeddings (after dropout), ``hidden_states[l]`` the output of block ``h[l - 1]`` for l = 1 ..
    n_layer - 1, and ``hidden_states[n_layer]`` the last block's output after ``ln_f``, what
    ``lm_head`` reads (as transformers' GPT2Model counts them)."""

    logits: Tensor
    loss: Tensor | None
    attentions: tuple[Tensor, ...] | None
    hidden_states: tuple[Tensor, ...] | None


class GPT(nn.Module):
    """The GPT-2 language model (Radford et al. 2019, sec. 2.3; GPT-1's decoder-only Transformer of
    Radford et al. 2018, sec. 3.1, with pre-LN blocks and a final LayerNorm).

    p(u_t | u_<t) = softmax(h_L W_e^T)_t with h_0 = U W_e + W_p, h_l = block(h_{l-1})  (2018, eq. 2).
    Submodules: ``transformer.wte`` (token embedding W_e, [V, D]), ``transformer.wpe`` (learned positions
    W_p, [block_size, D]), ``transformer.h`` (n_layer Blocks), ``transformer.ln_f`` (final LayerNorm),
    ``lm_head`` (D -> V, no bias, its weight *is* wte's: tied input and output embeddings).
    Initialization, as transformers and nanoGPT implement GPT-2's: every Linear and Embedding weight
    N(0, 0.02^2) (GPT-1, 2018, sec. 4.1), biases 0, LayerNorms gain 1 bias 0; the two projections that end
    a residual branch (``attn.c_proj``, ``mlp.c_proj``) N(0, (0.02 / sqrt(2 n_layer))^2), GPT-2's "scale the
    weights of residual layers at initialization by a factor of 1/sqrt(N) where N is the number of residual
    layers" (2019, sec. 2.3), with N = 2 n_layer (one attention and one MLP branch per block).
    Deviations from GPT-2: none in the computation (it equals transformers' GPT2LMHeadModel with the same
    weights, see the tests); one ``dropout`` rate instead of three; no sliding context window.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        check_type(config, "config", GPTConfig)  # its fields: GPTConfig.__post_init__
        self.config = c = config
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(c.vocab_size, c.n_embd),
                wpe=nn.Embedding(c.block_size, c.n_embd),
                drop=nn.Dropout(c.dropout),
                h=nn.ModuleList(Block(c) for _ in range(c.n_layer)),
                ln_f=nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon),
            )
        )
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied: one Parameter [V, D]
        self.apply(self._init_weights)
        for block in self.transformer.h:
            for proj in (block.attn.c_proj, block.mlp.c_proj):
                nn.init.normal_(proj.weight, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(
        self,
        input_ids: Tensor,
        targets: Tensor | None = None,
        return_attention: bool = False,
        return_hidden_states: bool = False,
        kv_cache: KVCache | None = None,
    ) -> GPTOutput:
        """input_ids [B, T] token ids -> GPTOutput(logits [B, T, V], loss, attentions, hidden_states).

        targets [B, T]: the next token at every position (usually input_ids shifted left by one);
        positions with target -100 are ignored (F.cross_entropy's ignore_index). loss = mean
        cross-entropy over the other positions. return_attention: also the tuple of n_layer weights
        [B, H, T, P + T]; return_hidden_states: also the tuple of n_layer + 1 hidden states [B, T, D]
        (see ``GPTOutput``). kv_cache: a KVCache; input_ids then holds only the new tokens, at
        positions P .. P+T-1, and the cache grows by T. Raises ValueError for ids outside
        [0, vocab_size) or P + T > block_size.
        """
        check_gpt_inputs(self.config, input_ids, targets, kv_cache)
        P = kv_cache.length if kv_cache is not None else 0  # positions already in the cache
        positions = torch.arange(P, P + input_ids.shape[1], device=input_ids.device)  # [T]
        x = self.transformer.wte(input_ids) + self.transformer.wpe(positions)  # [B, T, D]
        x = self.transformer.drop(x)
        attentions, hidden_states = [], [x]
        for layer, block in enumerate(self.transformer.h):
            x, weights = block(x, kv_cache, layer, return_attention)  # [B, T, D]
            attentions.append(weights)  # [B, H, T, P + T], or None
            hidden_states.append(x)
        x = self.transformer.ln_f(x)  # [B, T, D]
        hidden_states[-1] = x  # the last hidden state is what lm_head reads
        logits = self.lm_head(x)  # [B, T, V]
        loss = None
        if targets is not None:
            # F.cross_entropy's default ignore_index, -100, leaves those targets out
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return GPTOutput(
            logits,
            loss,
            tuple(attentions) if return_attention else None,
            tuple(hidden_states) if return_hidden_states else None,
        )


# --- the key/value cache of generation ------------------------------------------------------------


class KVCache:
    """The keys and values of every layer for the tokens processed so far, so that generating token
    t only computes the new token's query, key and value instead of re-running the whole prefix.

    ``keys[l]`` and ``values[l]`` are [B, H, P, Dh] for layer l (empty lists before the first call).
    ``GPT.forward(input_ids, kv_cache=cache)`` reads the cache for positions 0 .. P-1 and appends the
    T new ones with ``torch.cat``, so P grows by T. ``reorder(rows)`` keeps (and repeats) batch rows,
    as beam search does when it keeps the best hypotheses. The appending copies all P positions of
    every layer at every step: ``lib.gpt_fast.FastKVCache`` writes into preallocated buffers instead
    (the same numbers, faster for long generations).
    """

    def __init__(self):
        self.keys: list[Tensor] = []  # per layer: [B, H, P, Dh]
        self.values: list[Tensor] = []

    @property
    def length(self) -> int:
        """P, the number of positions cached (0 when empty)."""
        return self.keys[0].shape[2] if self.keys else 0

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new k, v [B, H, T, Dh] of `layer`; return all of them,
        [B, H, P + T, Dh]."""
        if layer == len(self.keys):  # the layer's first tokens
            self.keys.append(k)
            self.values.append(v)
        else:
            self.keys[layer] = torch.cat([self.keys[layer], k], dim=2)
            self.values[layer] = torch.cat([self.values[layer], v], dim=2)
        return self.keys[layer], self.values[layer]

    def reorder(self, rows: Tensor) -> None:
        """Keep the batch rows `rows` (int [B'], repeats allowed) of every layer's keys
        and values."""
        self.keys = [k[rows] for k in self.keys]
        self.values = [v[rows] for v in self.values]


# --- decoding: lib.decoding's decoders with this model's step --------------------------------------


def step_function(
    model: GPT, use_cache: bool = True, cache_type: Callable[[], KVCache] = KVCache
) -> Step:
    """The decoding step of `model` (``lib.decoding``'s interface): step(tokens [K, t], parents)
    -> (logits of the next token [K, V], None). use_cache=True keeps the cache ``cache_type()``
    returns: ``cache_type`` is anything that makes a new cache when called with no argument, a
    class (``KVCache`` by default, ``lib.gpt_fast.FastKVCache`` for the preallocated one) or a
    function (``lib.llama.step_function``'s, for its model's cache). Each call runs the model only
    on the tokens the cache has not seen (the whole prompt first, then one token), and reorders the
    cache with beam search's hypotheses (``KVCache.reorder``); use_cache=False re-runs the model on
    the whole sequence at each call (same logits, more work)."""
    cache = cache_type() if use_cache else None

    def step(tokens: Tensor, parents: Tensor | None):
        if cache is None:
            return model(tokens).logits[:, -1], None  # [K, V]
        if parents is not None:
            cache.reorder(parents)  # each hypothesis continues its parent's keys and values
        return model(tokens[:, cache.length :], kv_cache=cache).logits[:, -1], None  # [K, V]

    return step


@torch.no_grad()
def sample(
    model: GPT,
    input_ids: Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Decoded:
    """Autoregressive generation: append ``max_new_tokens`` tokens to each prompt, each drawn from
    ``lib.decoding.sampling_distribution(last logits, temperature, top_k, top_p)``; temperature=0
    is greedy decoding.

    input_ids [B, T] -> ``Decoded``: tokens [B, max_new_tokens], the continuation (prepend
    input_ids for the whole text); log_prob [B], its log-probability under the model's own
    distribution; attentions None. ``generator`` (a torch.Generator) makes the draws reproducible.
    use_cache: see ``step_function``. The whole sequence must fit in ``block_size`` (no sliding
    window). Put the model in eval mode first, or dropout changes the tokens.
    """
    check_gpt_decoding(model, GPT, input_ids, max_new_tokens)
    step = step_function(model, use_cache)
    return decoding.sample(
        step,
        input_ids,
        max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        generator=generator,
    )


def greedy_decode(
    model: GPT, input_ids: Tensor, max_new_tokens: int, use_cache: bool = True
) -> Decoded:
    """Greedy decoding: the most probable token at every step (``sample`` with temperature 0).
    input_ids [B, T] -> ``Decoded`` with tokens [B, max_new_tokens], the continuation."""
    return sample(model, input_ids, max_new_tokens, temperature=0, use_cache=use_cache)


@torch.no_grad()
def beam_search(
    model: GPT,
    input_ids: Tensor,
    max_new_tokens: int,
    beam_width: int = 4,
    eos_id: int | None = None,
    length_penalty: float = 0.0,
) -> Decoded:
    """Beam search for one prompt (``lib.decoding.beam_search`` with this model's cached step):
    input_ids [1, T] -> ``Decoded``: tokens [1, L], the continuation (L <= max_new_tokens,
    ending at ``eos_id`` if it was produced); log_prob [1], the sum over the L new tokens of log
    p(token | everything before it); attentions None.

    A hypothesis that produces ``eos_id`` or reaches ``max_new_tokens`` is finished; finished
    ones are ranked by log_prob / ``lib.decoding.gnmt_penalty(L, length_penalty)`` (0 ranks
    by log_prob). beam_width=1 is greedy decoding. A heuristic: it usually finds a likelier
    continuation than greedy, and is not guaranteed to find the likeliest.
    """
    check_gpt_decoding(model, GPT, input_ids, max_new_tokens, one_prompt=True, eos_id=eos_id)
    return decoding.beam_search(
        step_function(model), input_ids, max_new_tokens, beam_width, eos_id, length_penalty
    )


def count_parameters(config: GPTConfig) -> int:
    """Number of distinct parameters of GPT(config), built on the meta device (shapes only, no memory).

    The tied lm_head counts once. For GPT-2 small (V = 50257, block 1024, D = 768, 12 layers):
    wte 50257*768 = 38,597,376 + wpe 1024*768 = 786,432
    + 12 blocks x 7,087,872 (ln_1, ln_2 2*2*768 = 3,072; c_attn 768*2304 + 2304 = 1,771,776;
      attn.c_proj 768*768 + 768 = 590,592; mlp.c_fc 768*3072 + 3072 = 2,362,368; mlp.c_proj 3072*768 + 768
      = 2,360,064) + ln_f 1,536 = 124,439,808, which transformers' GPT2LMHeadModel also counts. The paper's
    Table 2 says 117M, 345M, 762M and 1542M; OpenAI's gpt-2 repository later noted that these counts were
    wrong "due to an error" (the released checkpoints have 124M, 355M, 774M and 1558M).
    """
    with torch.device("meta"):
        model = GPT(config)
    return sum(p.numel() for p in model.parameters())  # .parameters() yields the tied one once


class GPTClassifierOutput(NamedTuple):
    """What ``GPTClassifier.forward`` returns: logits [B, C]; attentions, GPT's tuple of n_layer
    weights [B, H, T, T] (None unless return_attention=True)."""

    logits: Tensor
    attentions: tuple[Tensor, ...] | None


class GPTClassifier(nn.Module):
    """GPT fine-tuned as a classifier (Radford et al. 2018, sec. 3.2): a linear layer on the final
    hidden state of the last token of each input, P(y | x_1..x_m) = softmax(h_L^m W_y)  (eq. 3).

    forward(input_ids [B, T], attention_mask=None, return_attention=False) -> GPTClassifierOutput
    (logits [B, C], attentions). Inputs are padded at the end; ``attention_mask`` [B, T] (bool or
    0/1, True at real tokens, at least one per row; default: all real) says where each one ends.
    Because attention is causal, the hidden state of the last real token never sees the padding
    after it, so the mask only says which position to read. ``gpt`` is the (pretrained or fresh) language model; ``head``
    is nn.Linear(D, C), initialized N(0, 0.02^2), bias 0. Deviation: no auxiliary
    language-modelling loss (eq. 5's lambda L1); add gpt's loss yourself.
    """

    def __init__(self, gpt: GPT, n_classes: int):
        super().__init__()
        check_gpt_classifier(gpt, GPT, n_classes)
        self.gpt = gpt
        self.head = nn.Linear(gpt.config.n_embd, n_classes)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor | None = None,
        return_attention: bool = False,
    ) -> GPTClassifierOutput:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)  # no padding
        else:
            check_classifier_mask(attention_mask, input_ids)
        out = self.gpt(
            input_ids,
            return_attention=return_attention,
            return_hidden_states=True,
        )
        last = attention_mask.long().sum(1) - 1  # [B], each row's last real position
        h = out.hidden_states[-1]  # [B, T, D], after ln_f
        logits = self.head(h[torch.arange(h.shape[0], device=h.device), last])  # [B, C]
        return GPTClassifierOutput(logits, out.attentions)
