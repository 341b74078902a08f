"""The Transformer encoder-decoder of Vaswani et al. 2017, "Attention Is All You Need", with greedy
decoding and beam search.

Shape legend (used in every docstring and shape comment below):

    B    batch                      K    hypotheses alive in the beam (<= beam_width)
    S    source length              T    target length (decoder input, = number of logits rows)
    D    d_model, the model width   F    d_ff, the feed-forward hidden width
    H    attention heads            V    vocabulary size (Vs source, Vt target)

Mask convention (as everywhere in this library): boolean, True where a query may attend,
broadcastable to the attention weights [B, H, Tq, Tk]. Here that means a source padding mask
[B, 1, 1, S] (True at real tokens, from ``config.pad_id``) and the causal mask [T, T] of the decoder's
self-attention (lib.attention.causal_mask). torch.nn.Transformer*Layer use the opposite convention
(True = may NOT attend) for their ``*_key_padding_mask`` and boolean ``*_mask`` arguments.

Pipeline: src ids -> embedding * sqrt(D) + positions -> Encoder (N x EncoderLayer) -> memory;
tgt_in ids -> embedding * sqrt(D) + positions -> Decoder (N x DecoderLayer, attending to memory)
-> generator (linear, tied to the target embedding) -> logits.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn

from lib import decoding
from lib._checks.transformer import (
    check_transformer_config,
    check_transformer_decode_inputs,
    check_transformer_decoding,
    check_transformer_ids,
    check_transformer_inputs,
)
from lib.attention import MultiHeadAttention, causal_mask
from lib.decoding import Decoded, Step
from lib.positional import SinusoidalPositionalEncoding

__all__ = [
    "TransformerConfig",
    "FeedForward",
    "EncoderLayer",
    "DecoderLayer",
    "Encoder",
    "Decoder",
    "Transformer",
    "count_parameters",
    "EncoderOutput",
    "TransformerOutput",
    "greedy_decode",
    "beam_search",
    "step_function",
]


class EncoderOutput(NamedTuple):
    """What ``Transformer.encode`` returns: memory [B, S, D], the encoder's output that every
    decoder layer attends to; attentions None, or (``return_attention=True``) a tuple with one
    tensor [B, H, S, S] per encoder layer."""

    memory: Tensor
    attentions: tuple[Tensor, ...] | None = None


class TransformerOutput(NamedTuple):
    """What ``Transformer.forward`` and ``Transformer.decode`` return: logits [B, T, Vt], and the
    attention weights, None unless ``return_attention=True``: tuples with one tensor per layer,
    named as Hugging Face names them: encoder_attentions [B, H, S, S] (the encoder's
    self-attention; None from ``decode``, whose encoder ran in ``encode``), decoder_attentions
    [B, H, T, T] (the decoder's causal self-attention) and cross_attentions [B, H, T, S] (decoder
    queries over the source)."""

    logits: Tensor
    encoder_attentions: tuple[Tensor, ...] | None = None
    decoder_attentions: tuple[Tensor, ...] | None = None
    cross_attentions: tuple[Tensor, ...] | None = None


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of the Transformer; ``base()`` and ``big()`` are the paper's Table 3 models.

    ``n_layers`` is N, the number of layers in the encoder and in the decoder each. ``tie_embeddings``
    shares one matrix between the target embedding and the pre-softmax linear layer (sec. 3.4);
    ``share_src_tgt_embeddings`` also shares it with the source embedding, as the paper does for its
    shared English-German BPE vocabulary of about 37000 tokens (sec. 5.1); it needs equal vocabularies.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 512
    norm_first: bool = False
    tie_embeddings: bool = True
    share_src_tgt_embeddings: bool = False
    pad_id: int = 0

    def __post_init__(self):
        check_transformer_config(self)

    @classmethod
    def base(cls, src_vocab_size: int = 37000, tgt_vocab_size: int = 37000, **overrides):
        """Transformer (base), Table 3: N=6, d_model=512, d_ff=2048, h=8, P_drop=0.1. One shared
        source/target vocabulary (and embedding matrix) when the two sizes are equal."""
        return cls(
            **{
                "src_vocab_size": src_vocab_size,
                "tgt_vocab_size": tgt_vocab_size,
                "share_src_tgt_embeddings": src_vocab_size == tgt_vocab_size,
                **overrides,
            }
        )

    @classmethod
    def big(cls, src_vocab_size: int = 37000, tgt_vocab_size: int = 37000, **overrides):
        """Transformer (big), Table 3: N=6, d_model=1024, d_ff=4096, h=16, P_drop=0.3."""
        return cls.base(
            src_vocab_size,
            tgt_vocab_size,
            **{"d_model": 1024, "d_ff": 4096, "n_heads": 16, "dropout": 0.3, **overrides},
        )


# --- the layers: feed-forward network, encoder layer, decoder layer ------------------------------


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position alone (sec. 3.3, eq. 2).

    forward(x [B, T, D]) -> [B, T, D]. ``linear1`` is D -> F, ``linear2`` is F -> D (torch's names).
    Initialization: xavier_uniform_ weights, zero biases (as the attention projections).
    Deviation: no dropout inside (torch's layers and the Annotated Transformer drop the hidden units;
    the paper only drops sub-layer outputs, sec. 5.4, which the layers below do).
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        for linear in (self.linear1, self.linear2):
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))  # [B, T, F] -> [B, T, D]


class EncoderLayer(nn.Module):
    """One encoder layer (sec. 3.1): self-attention, then the feed-forward network, each wrapped in a
    residual connection and LayerNorm.

    Post-LN (default, the paper): x = LayerNorm(x + Dropout(Sublayer(x))).
    Pre-LN (``norm_first=True``): x = x + Dropout(Sublayer(LayerNorm(x))). Most later models (GPT-2
    onwards) and the Annotated Transformer use pre-LN: it trains more stably without warm-up
    (Xiong et al. 2020), and a pre-LN stack ends with one more LayerNorm (see ``Encoder``).
    forward(x [B, S, D], mask bool broadcastable to [B, H, S, S], need_weights) ->
    (x [B, S, D], weights [B, H, S, S] or None).
    Dropout (sec. 5.4, "residual dropout") only on each sub-layer's output; none on the attention
    weights (torch's layers and the Annotated Transformer add that).
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, check_inputs=False)
        self.ff = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
        if self.norm_first:
            h = self.norm1(x)  # [B, S, D]
            a, weights = self.self_attn(h, h, h, mask=mask, need_weights=need_weights)
            x = x + self.dropout(a)  # [B, S, D]
            x = x + self.dropout(self.ff(self.norm2(x)))  # [B, S, D]
        else:
            a, weights = self.self_attn(x, x, x, mask=mask, need_weights=need_weights)
            x = self.norm1(x + self.dropout(a))  # [B, S, D]
            x = self.norm2(x + self.dropout(self.ff(x)))  # [B, S, D]
        return x, weights


class DecoderLayer(nn.Module):
    """One decoder layer (sec. 3.1): masked self-attention, cross-attention over the encoder's output
    ("encoder-decoder attention", sec. 3.2.3), then the feed-forward network; each sub-layer wrapped
    in a residual connection and LayerNorm, post-LN or pre-LN exactly as in ``EncoderLayer``.

    forward(y [B, T, D], memory [B, S, D], self_mask (e.g. causal [T, T]), cross_mask (e.g. source
    padding [B, 1, 1, S]), need_weights) -> (y [B, T, D], self weights [B, H, T, T] or None,
    cross weights [B, H, T, S] or None). Queries of the cross-attention come from the decoder, keys and
    values from ``memory``.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, check_inputs=False)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, check_inputs=False)
        self.ff = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        y: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        cross_mask: Tensor | None = None,
        need_weights: bool = False,
    ):
        if self.norm_first:
            h = self.norm1(y)  # [B, T, D]
            a, self_w = self.self_attn(h, h, h, mask=self_mask, need_weights=need_weights)
            y = y + self.dropout(a)  # [B, T, D]
            a, cross_w = self.cross_attn(
                self.norm2(y), memory, memory, mask=cross_mask, need_weights=need_weights
            )
            y = y + self.dropout(a)  # [B, T, D]
            y = y + self.dropout(self.ff(self.norm3(y)))  # [B, T, D]
        else:
            a, self_w = self.self_attn(y, y, y, mask=self_mask, need_weights=need_weights)
            y = self.norm1(y + self.dropout(a))  # [B, T, D]
            a, cross_w = self.cross_attn(
                y, memory, memory, mask=cross_mask, need_weights=need_weights
            )
            y = self.norm2(y + self.dropout(a))  # [B, T, D]
            y = self.norm3(y + self.dropout(self.ff(y)))  # [B, T, D]
        return y, self_w, cross_w


# --- the two stacks ------------------------------------------------------------------------------


def _layers(layer: type[nn.Module], config: TransformerConfig) -> nn.ModuleList:
    """N = config.n_layers layers of one kind, each with its own parameters."""
    c = config
    return nn.ModuleList(
        layer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first) for _ in range(c.n_layers)
    )


def _final_norm(config: TransformerConfig) -> nn.Module:
    """The LayerNorm after the last layer of a pre-LN stack; post-LN layers already end with one."""
    return nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()


class Encoder(nn.Module):
    """N encoder layers (``layers``); ``norm`` is the final LayerNorm of a pre-LN stack (nn.Identity
    for post-LN, whose layers already end with one).

    forward(x [B, S, D] (embedded), mask, need_weights) -> (memory [B, S, D], a tuple of N weights
    [B, H, S, S], or None when need_weights=False).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.layers = _layers(EncoderLayer, config)
        self.norm = _final_norm(config)

    def forward(self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
        weights = []
        for layer in self.layers:
            x, w = layer(x, mask, need_weights)  # [B, S, D], [B, H, S, S] or None
            weights.append(w)
        return self.norm(x), tuple(weights) if need_weights else None


class Decoder(nn.Module):
    """N decoder layers (``layers``) and, for pre-LN, a final LayerNorm ``norm``.

    forward(y [B, T, D] (embedded), memory [B, S, D], self_mask, cross_mask, need_weights) ->
    (y [B, T, D], tuple of N self-attention weights [B, H, T, T], tuple of N cross-attention
    weights [B, H, T, S]; both None when need_weights=False).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.layers = _layers(DecoderLayer, config)
        self.norm = _final_norm(config)

    def forward(
        self,
        y: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        cross_mask: Tensor | None = None,
        need_weights: bool = False,
    ):
        self_weights, cross_weights = [], []
        for layer in self.layers:
            y, sw, cw = layer(y, memory, self_mask, cross_mask, need_weights)  # [B, T, D]
            self_weights.append(sw)
            cross_weights.append(cw)
        if not need_weights:
            return self.norm(y), None, None
        return self.norm(y), tuple(self_weights), tuple(cross_weights)


# --- the whole model -----------------------------------------------------------------------------


class Transformer(nn.Module):
    """The encoder-decoder Transformer (Vaswani et al. 2017, sec. 3, Figure 1).

    Submodules: ``src_embed`` and ``tgt_embed`` (nn.Embedding; one object when
    ``share_src_tgt_embeddings``), ``pos_encoding`` (sinusoidal, sec. 3.5, with dropout on the sum,
    sec. 5.4), ``encoder``, ``decoder``, ``generator`` (the pre-softmax linear layer D -> Vt, no bias;
    its weight is ``tgt_embed.weight`` when ``tie_embeddings``, sec. 3.4).
    Embeddings are multiplied by sqrt(D) (sec. 3.4). The source padding mask comes from
    ``config.pad_id``; the decoder's self-attention is causal. Target padding needs no mask of its own:
    with padding at the end, a real target token never sees a later pad through the causal mask, and
    the loss ignores the pad positions.
    Initialization: xavier_uniform_ matrices and zero biases (as torch and the Annotated Transformer;
    the paper does not say), LayerNorm gain 1 and bias 0, embeddings N(0, 1/D) (our choice; the paper
    gives neither this nor a reason for the sqrt(D)), so that the scaled embedding sqrt(D) e has unit
    variance per coordinate, about the scale of the positional encodings it is added to (their entries
    have mean square 1/2 at every position).
    Deviations: no dropout on attention weights or inside the FFN (see the layers); no label smoothing
    here (it belongs to the loss).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        c = self.config = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        if c.share_src_tgt_embeddings:
            self.tgt_embed = self.src_embed  # one module, one [V, D] matrix
        else:
            self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.pos_encoding = SinusoidalPositionalEncoding(
            c.d_model, c.max_len, c.dropout, check_inputs=False
        )  # the ids were checked at the door (T <= max_len)
        self.encoder = Encoder(c)
        self.decoder = Decoder(c)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        for embedding in (self.src_embed, self.tgt_embed):
            nn.init.normal_(embedding.weight, std=c.d_model**-0.5)
        if c.tie_embeddings:
            self.generator.weight = self.tgt_embed.weight  # one Parameter [Vt, D]
        else:
            nn.init.xavier_uniform_(self.generator.weight)

    def src_mask(self, src: Tensor) -> Tensor:
        """Source padding mask: src [B, S] -> bool [B, 1, 1, S], True at real (non-pad) tokens."""
        return (src != self.config.pad_id)[:, None, None, :]  # [B, 1, 1, S]

    def encode(self, src: Tensor, return_attention: bool = False) -> EncoderOutput:
        """src [B, S] -> ``EncoderOutput(memory [B, S, D], attentions)``."""
        check_transformer_ids(src, "src", self.config.src_vocab_size, self.config.max_len)
        return self._encode(src, return_attention)

    def decode(
        self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor, return_attention: bool = False
    ) -> TransformerOutput:
        """tgt_in [B, T], memory [B, S, D], src_mask [B, 1, 1, S] -> ``TransformerOutput(logits
        [B, T, Vt], None, decoder_attentions, cross_attentions)``."""
        check_transformer_decode_inputs(self.config, tgt_in, memory)
        return self._decode(tgt_in, memory, src_mask, return_attention)

    def forward(
        self, src: Tensor, tgt_in: Tensor, return_attention: bool = False
    ) -> TransformerOutput:
        """src [B, S], tgt_in [B, T] (the target shifted right: BOS y1 ... y_{T-1}) ->
        ``TransformerOutput(logits [B, T, Vt], encoder_attentions, decoder_attentions,
        cross_attentions)``, the attentions None unless ``return_attention``: then tuples (one
        tensor per layer) of weights [B, H, S, S], [B, H, T, T], [B, H, T, S] -- the arguments of
        ``lib.viz.encoder_decoder_view`` (and bertviz's)."""
        check_transformer_inputs(self.config, src, tgt_in)
        encoded = self._encode(src, return_attention)
        out = self._decode(tgt_in, encoded.memory, self.src_mask(src), return_attention)
        return out._replace(encoder_attentions=encoded.attentions)

    def _encode(self, src: Tensor, return_attention: bool) -> EncoderOutput:
        x = self.pos_encoding(self.src_embed(src) * math.sqrt(self.config.d_model))  # [B, S, D]
        memory, weights = self.encoder(x, self.src_mask(src), return_attention)  # [B, S, D]
        return EncoderOutput(memory, weights)

    def _decode(self, tgt_in, memory, src_mask, return_attention: bool) -> TransformerOutput:
        T = tgt_in.shape[1]
        # [B, T, D]
        y = self.pos_encoding(self.tgt_embed(tgt_in) * math.sqrt(self.config.d_model))
        mask = causal_mask(T, device=tgt_in.device)  # [T, T]: position t sees 0 .. t
        y, self_w, cross_w = self.decoder(y, memory, mask, src_mask, return_attention)
        return TransformerOutput(self.generator(y), None, self_w, cross_w)  # logits [B, T, Vt]


def count_parameters(config: TransformerConfig) -> int:
    """Number of distinct parameters of Transformer(config), built on the meta device (no memory).

    Tied matrices count once. For the paper's models, with one shared 37000-token vocabulary and
    all three embedding matrices tied (post-LN; pre-LN adds two final LayerNorms, 2 D):
      base  63,082,496 = embedding 37000*512 = 18,944,000
                       + 6 encoder layers x 3,152,384 (attention 4*(512*512 + 512) = 1,050,624,
                         FFN 2*512*2048 + 2048 + 512 = 2,099,712, 2 LayerNorms 2*2*512 = 2,048)
                       + 6 decoder layers x 4,204,032 (2 attentions 2,101,248, FFN 2,099,712,
                         3 LayerNorms 3,072);
            Table 3 says 65M, 3% more; the paper does not say what else it counted (untying the
            source embedding would give 82.0M, a 32768-token vocabulary 60.9M).
      big  214,245,376 = 37,888,000 + 6 x 12,596,224 + 6 x 16,796,672; Table 3 says 213M.
    """
    with torch.device("meta"):
        model = Transformer(config)
    return sum(p.numel() for p in model.parameters())  # .parameters() yields a tied one once


# --- decoding --------------------------------------------------------------------------------------


def step_function(model: Transformer, src: Tensor) -> Step:
    """The model's decoding step for the sentences src [B, S] (``lib.decoding``'s interface): the
    encoder runs once; each call runs the decoder over the whole prefix of every row (no key/value
    cache: simpler, O(t^2) per sentence) and returns (logits of the last position [K, Vt], None).
    The step keeps no state, so beam search's reordering needs nothing."""
    memory, src_mask = model.encode(src).memory, model.src_mask(src)  # [B, S, D], [B, 1, 1, S]

    def step(tokens: Tensor, parents: Tensor | None):
        K = tokens.shape[0]  # B, or the hypotheses of one sentence
        # the decoder without decode's checks: the tokens are the decoder's own
        out = model._decode(tokens, memory.expand(K, -1, -1), src_mask.expand(K, -1, -1, -1), False)
        return out.logits[:, -1], None  # [K, Vt]

    return step


def _with_attention(model: Transformer, src: Tensor, bos_id: int, out: Decoded) -> Decoded:
    """``out`` with its attentions: the cross_attentions of ``Transformer.forward`` for the decoder
    input BOS + tokens[:, :-1], one query row per decoded token."""
    bos = torch.full_like(out.tokens[:, :1], bos_id)
    tgt_in = torch.cat([bos, out.tokens[:, :-1]], dim=1)  # [B, L]
    cross = model(src, tgt_in, return_attention=True).cross_attentions  # N x [B, H, L, S]
    return out._replace(attentions=cross)


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Decoded:
    """Greedy decoding: start from BOS and append the most probable next token until EOS or
    ``max_len`` generated tokens.

    src [B, S] -> ``lib.decoding.Decoded``: tokens [B, L] (L <= max_len: the generated tokens
    without BOS, ending with EOS where one was produced, then ``config.pad_id``), log_prob [B],
    attentions: the cross_attentions of ``Transformer.forward`` for the decoder input BOS +
    tokens[:, :-1] (a tuple, one tensor [B, H, L, S] per layer), i.e. one row per generated token:
    row t is where the decoder looked when it chose tokens[:, t]. Put the model in eval mode first,
    or dropout will change the tokens.
    """
    check_transformer_decoding(model.config, src, max_len, bos_id, eos_id)
    start = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # [B, 1]
    out = decoding.greedy(step_function(model, src), start, max_len, eos_id, model.config.pad_id)
    return _with_attention(model, src, bos_id, out)


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    beam_width: int = 4,
    length_penalty: float = 0.0,
) -> Decoded:
    """Beam search for one sentence (the paper: beam 4, length penalty alpha = 0.6, sec. 6.1), that
    is ``lib.decoding.beam_search`` with this model's step.

    src [1, S] -> ``Decoded``: tokens [1, L] (the best hypothesis without BOS, L <= max_len),
    log_prob [1] (its sum_t log p(y_t | y_<t, src)), attentions (as in ``greedy_decode``). The
    finished hypotheses are ranked by log_prob / ``lib.decoding.gnmt_penalty(L, length_penalty)``
    (0 ranks by log_prob alone). beam_width=1 is greedy decoding.
    """
    check_transformer_decoding(model.config, src, max_len, bos_id, eos_id, one_sentence=True)
    start = torch.full((1, 1), bos_id, dtype=torch.long, device=src.device)  # [1, 1]
    out = decoding.beam_search(
        step_function(model, src), start, max_len, beam_width, eos_id, length_penalty
    )
    return _with_attention(model, src, bos_id, out)
