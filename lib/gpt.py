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

Submodules carry the names of the published GPT-2 checkpoint (``transformer.wte``,
``transformer.h.0.attn .c_attn``, ...), so that ``lib.pretrained.gpt_from_hf`` is a loop over the
state dict. OpenAI's checkpoint stores its linear layers as "Conv1D" with the weight transposed
([in, out]); ours are nn.Linear ([out, in]).
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding
from lib._validate import check_id, check_ids, check_int
from lib.attention import attention_heads, causal_mask, merge_heads, split_heads
from lib.decoding import Decoded, Step, sampling_distribution

__all__ = [
    "GPTConfig",
    "GPT",
    "GPTOutput",
    "Block",
    "CausalSelfAttention",
    "MLP",
    "KVCache",
    "GPTClassifier",
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
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            check_int(value, name, 1)
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")
        if not isinstance(self.dropout, (int, float)) or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout: expected a probability in [0, 1), got {self.dropout!r}")
        if not isinstance(self.layer_norm_epsilon, (int, float)) or not self.layer_norm_epsilon > 0:
            raise ValueError(
                f"layer_norm_epsilon: expected a number > 0, got {self.layer_norm_epsilon!r}"
            )

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


class KVCache:
    """The keys and values of every layer for the tokens processed so far, so that generating token
    t only computes the new token's query, key and value instead of re-running the whole prefix.

    ``keys[l]`` and ``values[l]`` are [B, H, P, Dh] for layer l (empty lists before the first call).
    ``GPT.forward(input_ids, kv_cache=cache)`` reads the cache for positions 0 .. P-1, appends the T
    new ones and advances ``length`` to P + T. ``reorder(rows)`` keeps (and repeats) batch rows, as
    beam search does when it keeps the best hypotheses.

    Storage: each layer's keys and values live in a buffer [B, H, capacity, Dh] that doubles when
    full, and new positions are written in place, so a generation step copies one position, not the
    whole cache (appending with torch.cat would copy all P positions of every layer at every step).
    """

    def __init__(self):
        self._k: list[Tensor] = []  # per layer: [B, H, capacity, Dh]
        self._v: list[Tensor] = []
        self._n: list[int] = []  # per layer: positions filled

    def __len__(self) -> int:
        return len(self._k)  # the number of layers cached so far

    @property
    def keys(self) -> list[Tensor]:
        return [k[:, :, :n] for k, n in zip(self._k, self._n)]  # views [B, H, P, Dh]

    @property
    def values(self) -> list[Tensor]:
        return [v[:, :, :n] for v, n in zip(self._v, self._n)]  # views [B, H, P, Dh]

    @property
    def length(self) -> int:
        """P, the number of positions cached (0 when empty)."""
        return self._n[0] if self._n else 0

    def cached(self, layer: int) -> int:
        """The number of positions cached for `layer` (0 before its first update)."""
        return self._n[layer] if layer < len(self._n) else 0

    @property
    def batch_size(self) -> int | None:
        return self._k[0].shape[0] if self._k else None

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new k, v [B, H, T, Dh] of `layer`; return all of them [B, H, P + T, Dh]."""
        B, H, T, Dh = k.shape
        if layer == len(self._k):  # first call: an empty buffer
            self._k.append(k.new_empty(B, H, max(2 * T, 64), Dh))
            self._v.append(v.new_empty(B, H, max(2 * T, 64), Dh))
            self._n.append(0)
        n = self._n[layer]
        if n + T > self._k[layer].shape[2]:  # full: double the capacity
            for store in (self._k, self._v):
                bigger = store[layer].new_empty(B, H, 2 * (n + T), Dh)
                bigger[:, :, :n] = store[layer][:, :, :n]
                store[layer] = bigger
        self._k[layer][:, :, n : n + T] = k  # written in place
        self._v[layer][:, :, n : n + T] = v
        self._n[layer] = n + T
        return self._k[layer][:, :, : n + T], self._v[layer][:, :, : n + T]  # [B, H, P + T, Dh]

    def reorder(self, rows: Tensor) -> None:
        """Keep the batch rows `rows` (int [B'], repeats allowed) of every layer's keys and values."""
        self._k = [k[rows] for k in self._k]
        self._v = [v[rows] for v in self._v]


class CausalSelfAttention(nn.Module):
    """Masked multi-head self-attention (Vaswani et al. 2017, sec. 3.2.2-3.2.3), GPT-2's layout.

    ``c_attn`` projects to queries, keys and values at once (D -> 3D; columns [0, D) are the
    queries, [D, 2D) the keys, [2D, 3D) the values), each cut into H heads by
    ``lib.attention.split_heads``; ``c_proj`` is the output projection W^O. forward(x [B, T, D],
    kv_cache=None, layer=0, need_weights=False) -> (y [B, T, D], weights [B, H, T, P + T] or None).
    The attention itself is ``lib.attention.attention_heads``: need_weights=True computes and
    returns the weights, need_weights=False uses torch's fused kernel (same output, faster, no T x
    T matrix kept). Dropout acts on the attention weights and on the output (GPT-2's attn_pdrop,
    resid_pdrop); the returned weights are those before dropout.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.dropout = config.dropout
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(
        self, x: Tensor, kv_cache: KVCache | None = None, layer: int = 0, need_weights: bool = False
    ):
        T = x.shape[1]  # from x itself, so that an ONNX export keeps the length a variable
        # c_attn's 3D columns are [queries | keys | values]: cut into 3H heads, they are the H
        # query heads, then the H key heads, then the H value heads
        q, k, v = split_heads(self.c_attn(x), 3 * self.n_head).chunk(3, dim=1)  # 3 x [B, H, T, Dh]
        P = 0
        if kv_cache is not None:
            P = kv_cache.cached(layer)
            k, v = kv_cache.update(layer, k, v)  # [B, H, P + T, Dh]: the cached keys, then ours
        if kv_cache is not None and T == 1:  # one new token (a generation step) sees every key
            mask = None
        else:
            mask = causal_mask(T, device=x.device, past=P)  # [T, P + T]: query P+i sees 0..P+i
        p = self.dropout if self.training else 0.0
        heads, weights = attention_heads(q, k, v, mask, p, need_weights)  # [B, H, T, Dh]
        return self.resid_dropout(self.c_proj(merge_heads(heads))), weights  # [B, T, D]


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
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))  # [B, T, 4D] -> [B, T, D]


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
        self, x: Tensor, kv_cache: KVCache | None = None, layer: int = 0, need_weights: bool = False
    ):
        a, weights = self.attn(self.ln_1(x), kv_cache, layer, need_weights)
        x = x + a  # [B, T, D]
        x = x + self.mlp(self.ln_2(x))  # [B, T, D]
        return x, weights


class GPTOutput(NamedTuple):
    """What ``GPT.forward`` returns: logits [B, T, V]; loss, the mean cross-entropy of next-token
    prediction (a scalar tensor; None without targets); attention, a list of n_layer weights
    [B, H, T, P + T] (None unless return_attention=True). Unpacks as ``logits, loss, attention = out``."""

    logits: Tensor
    loss: Tensor | None
    attention: list[Tensor] | None


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
        if not isinstance(config, GPTConfig):
            raise TypeError(f"config: expected a GPTConfig, got {type(config).__name__}")
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

    def hidden_states(
        self, input_ids: Tensor, kv_cache: KVCache | None = None, return_attention: bool = False
    ):
        """input_ids [B, T] -> (h [B, T, D], the output of ln_f, i.e. what lm_head reads;
        attention: list of n_layer weights [B, H, T, P + T], or None). With a cache, input_ids holds
        only the T new tokens."""
        if kv_cache is not None and not isinstance(kv_cache, KVCache):
            raise TypeError(f"kv_cache: expected a lib.gpt.KVCache, got {type(kv_cache).__name__}")
        P = kv_cache.length if kv_cache is not None else 0
        self._check_input_ids(input_ids, P, kv_cache)
        positions = torch.arange(P, P + input_ids.shape[1], device=input_ids.device)  # [T]
        # [B, T, D]
        x = self.transformer.drop(self.transformer.wte(input_ids) + self.transformer.wpe(positions))
        attention = [] if return_attention else None
        for layer, block in enumerate(self.transformer.h):
            x, weights = block(x, kv_cache, layer, return_attention)  # [B, T, D]
            if return_attention:
                attention.append(weights)
        return self.transformer.ln_f(x), attention  # [B, T, D]

    def forward(
        self,
        input_ids: Tensor,
        targets: Tensor | None = None,
        return_attention: bool = False,
        kv_cache: KVCache | None = None,
    ) -> GPTOutput:
        """input_ids [B, T] token ids -> GPTOutput(logits [B, T, V], loss, attention).

        targets [B, T]: the next token at every position (usually input_ids shifted left by one);
        positions with target -100 are ignored (F.cross_entropy's ignore_index). loss = mean
        cross-entropy over the other positions. return_attention: also the list of n_layer weights
        [B, H, T, P + T]. kv_cache: a KVCache; input_ids then holds only the new tokens, at
        positions P .. P+T-1, and the cache grows by T. Raises ValueError for ids outside [0,
        vocab_size) or P + T > block_size.
        """
        h, attention = self.hidden_states(input_ids, kv_cache, return_attention)
        logits = self.lm_head(h)  # [B, T, V]
        loss = None
        if targets is not None:
            self._check_targets(targets, input_ids)
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        return GPTOutput(logits, loss, attention)

    # --- input checks --------------------------------------------------------------------------------

    def _check_input_ids(self, input_ids, P: int = 0, kv_cache=None) -> None:
        """lib._validate.check_ids, then the context: P cached + T new tokens <= block_size."""
        c = self.config
        check_ids(input_ids, "input_ids", c.vocab_size, f"vocab_size={c.vocab_size}")
        if P + input_ids.shape[1] > c.block_size:
            cached = f" plus {P} cached positions" if P else ""
            raise ValueError(
                f"input_ids: sequence of {input_ids.shape[1]} tokens{cached} is longer than block_size={c.block_size}, the model's context length"
            )
        if kv_cache is not None and kv_cache.batch_size not in (None, input_ids.shape[0]):
            raise ValueError(
                f"kv_cache: holds a batch of {kv_cache.batch_size}, but input_ids has shape {tuple(input_ids.shape)}"
            )

    def _check_targets(self, targets, input_ids) -> None:
        if not isinstance(targets, Tensor) or targets.dtype not in (torch.int64, torch.int32):
            got = targets.dtype if isinstance(targets, Tensor) else type(targets).__name__
            raise TypeError(f"targets: expected a tensor of token ids (torch.long), got {got}")
        if targets.shape != input_ids.shape:
            raise ValueError(
                f"targets: expected shape {tuple(input_ids.shape)} (that of input_ids), got {tuple(targets.shape)}"
            )
        real = targets[targets != -100]
        if real.numel() and (real.min() < 0 or real.max() >= self.config.vocab_size):
            raise ValueError(
                f"targets: expected ids in [0, vocab_size={self.config.vocab_size}) or -100 (ignored), got ids from {real.min().item()} to {real.max().item()}"
            )

    def _check_new_tokens(self, input_ids, max_new_tokens) -> None:
        self._check_input_ids(input_ids)
        if (
            isinstance(max_new_tokens, bool)
            or not isinstance(max_new_tokens, int)
            or max_new_tokens < 1
        ):
            raise ValueError(f"max_new_tokens: expected an int >= 1, got {max_new_tokens!r}")
        if input_ids.shape[1] + max_new_tokens > self.config.block_size:
            raise ValueError(
                f"max_new_tokens: prompt of {input_ids.shape[1]} tokens + {max_new_tokens} new tokens is longer than block_size={self.config.block_size}, the model's context length"
            )

    # --- decoding ------------------------------------------------------------------------------------

    def step_function(self, use_cache: bool = True) -> Step:
        """This model's decoding step (``lib.decoding``'s interface): step(tokens [K, t], parents)
        -> (logits of the next token [K, V], None). use_cache=True keeps a KVCache, so each call
        runs the model only on the tokens the cache has not seen (the whole prompt first, then one
        token), and reorders the cache with beam search's hypotheses (``KVCache.reorder``);
        use_cache=False re-runs the model on the whole sequence at each call (same logits, more
        work)."""
        cache = KVCache() if use_cache else None

        def step(tokens: Tensor, parents: Tensor | None):
            if cache is None:
                return self(tokens).logits[:, -1], None  # [K, V]
            if parents is not None:
                cache.reorder(parents)  # each hypothesis continues its parent's keys and values
            return self(tokens[:, cache.length :], kv_cache=cache).logits[:, -1], None  # [K, V]

        return step

    @torch.no_grad()
    def generate(
        self,
        input_ids: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        generator: torch.Generator | None = None,
        use_cache: bool = True,
    ) -> Tensor:
        """Autoregressive generation: append ``max_new_tokens`` tokens to each prompt, each drawn
        from ``lib.decoding.sampling_distribution(last logits, temperature, top_k, top_p)``;
        temperature=0 is greedy decoding.

        input_ids [B, T] -> [B, T + max_new_tokens], the prompt and its continuation (as nanoGPT's
        generate; ``lib.decoding.sample(model.step_function(), input_ids, ...)`` gives the
        continuation with its log-probability). ``generator`` (a torch.Generator) makes the draws
        reproducible. use_cache: see ``step_function``. The whole sequence must fit in
        ``block_size`` (no sliding window). Put the model in eval mode first, or dropout changes the
        tokens.
        """
        self._check_new_tokens(input_ids, max_new_tokens)
        out = decoding.sample(
            self.step_function(use_cache),
            input_ids,
            max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            generator=generator,
        )
        return torch.cat([input_ids, out.tokens], dim=1)

    @torch.no_grad()
    def beam_search(
        self,
        input_ids: Tensor,
        max_new_tokens: int,
        beam_width: int = 4,
        eos_id: int | None = None,
        length_penalty: float = 0.0,
    ) -> Decoded:
        """Beam search for one prompt (``lib.decoding.beam_search`` with this model's cached step):
        input_ids [1, T] -> ``Decoded``: tokens [1, L], the continuation (L <= max_new_tokens,
        ending at ``eos_id`` if it was produced); log_prob [1], the sum over the L new tokens of log
        p(token | everything before it); attention None.

        A hypothesis that produces ``eos_id`` or reaches ``max_new_tokens`` is finished; finished
        ones are ranked by log_prob / ``lib.decoding.gnmt_penalty(L, length_penalty)`` (0 ranks
        by log_prob). beam_width=1 is greedy decoding. A heuristic: it usually finds a likelier
        continuation than greedy, and is not guaranteed to find the likeliest.
        """
        self._check_new_tokens(input_ids, max_new_tokens)
        if input_ids.shape[0] != 1:
            raise ValueError(
                f"input_ids: expected shape [1, T] (one prompt), got shape {tuple(input_ids.shape)}"
            )
        V = self.config.vocab_size
        check_id(eos_id, "eos_id", V, f"vocab_size={V}", optional=True)
        return decoding.beam_search(
            self.step_function(), input_ids, max_new_tokens, beam_width, eos_id, length_penalty
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


class GPTClassifier(nn.Module):
    """GPT fine-tuned as a classifier (Radford et al. 2018, sec. 3.2): a linear layer on the final
    hidden state of the last token of each input, P(y | x_1..x_m) = softmax(h_L^m W_y)  (eq. 3).

    forward(input_ids [B, T], lengths=None) -> class logits [B, C]. Inputs are padded at the end;
    ``lengths`` [B] (ints, default T) says where each one ends. Because attention is causal, the
    hidden state at position length-1 never sees the padding after it, so no padding mask is needed.
    ``gpt`` is the (pretrained or fresh) language model; ``head`` is nn.Linear(D, C), initialized
    N(0, 0.02^2), bias 0. Deviation: no auxiliary language-modelling loss (eq. 5's lambda L1); add
    gpt's loss yourself.
    """

    def __init__(self, gpt: GPT, n_classes: int):
        super().__init__()
        if not isinstance(gpt, GPT):
            raise TypeError(f"gpt: expected a lib.gpt.GPT, got {type(gpt).__name__}")
        check_int(n_classes, "n_classes", 2)
        self.gpt = gpt
        self.head = nn.Linear(gpt.config.n_embd, n_classes)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: Tensor, lengths: Tensor | None = None) -> Tensor:
        h, _ = self.gpt.hidden_states(input_ids)  # [B, T, D]
        B, T = input_ids.shape
        if lengths is None:
            last = torch.full((B,), T - 1, device=input_ids.device)  # [B]
        else:
            lengths = torch.as_tensor(lengths, device=input_ids.device)
            if (
                lengths.shape != (B,)
                or lengths.is_floating_point()
                or lengths.min() < 1
                or lengths.max() > T
            ):
                raise ValueError(
                    f"lengths: expected {B} integer lengths in [1, T={T}], got {lengths.tolist()}"
                )
            last = lengths - 1  # [B]
        return self.head(h[torch.arange(B, device=input_ids.device), last])  # [B, D] -> [B, C]
