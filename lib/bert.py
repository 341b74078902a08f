"""BERT, the bidirectional Transformer encoder of Devlin et al. 2019, "BERT: Pre-training of Deep
Bidirectional Transformers for Language Understanding". Its pretraining and fine-tuning heads and the
pretraining loss are in lib.bert_heads, the pretraining data (masked tokens, sentence pairs, batches)
in lib.pretraining_data.

Shape legend (used in every docstring and shape comment below):

    B    batch                      T    tokens per sequence (<= max_position_embeddings)
    D    hidden_size, the width     F    intermediate_size, the feed-forward hidden width
    H    attention heads            Dh   width of one head, D / H
    V    vocab_size                 L    num_hidden_layers

Mask convention (as everywhere in this library): boolean, True where a query may attend, broadcastable
to the attention weights [B, H, T, T]. ``Bert.forward`` takes Hugging Face's ``attention_mask`` [B, T]
(1 = real token, 0 = padding) and turns it into that form, [B, 1, 1, T], with
``extended_attention_mask``; a 3-D [B, T, T] mask (query i may attend to key j) is accepted as well.

Pipeline: token + segment + position embeddings -> LayerNorm -> L encoder layers (post-LN, as the
Transformer of Vaswani et al. 2017: self-attention, Add & LayerNorm, GELU feed-forward, Add & LayerNorm)
-> sequence output [B, T, D]; the pooler maps the first token's ([CLS]) vector to the pooled output [B, D].

Every submodule is named as in the published checkpoints (Google's TF checkpoints converted by Hugging
Face): ``embeddings.word_embeddings``, ``encoder.layer.3.attention.self.query``, ``pooler.dense``, ...
so loading real weights (lib.pretrained.bert) is ``load_state_dict`` after dropping a prefix and a
buffer, with no tensor renamed or transposed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.bert import check_bert_config, check_bert_inputs
from lib._validate import check_type
from lib.attention import _merge_heads, _split_heads, attention_heads

__all__ = [
    "BertConfig",
    "BertOutput",
    "Bert",
    "extended_attention_mask",
    "count_parameters",
    "init_weights",
    "IGNORE_INDEX",
]

IGNORE_INDEX = -100  # label of the tokens the masked-LM loss skips (torch's cross_entropy default)


@dataclass(frozen=True)
class BertConfig:
    """Hyper-parameters of BERT, with the names of the published ``config.json`` files.

    ``base()`` and ``large()`` are the paper's BERT_BASE (L=12, H=768, A=12, 110M parameters) and
    BERT_LARGE (L=24, H=1024, A=16, 340M), sec. 3 (the paper's H is our width D, its A our heads H),
    with the uncased WordPiece vocabulary of 30522 tokens, 512 positions and 2 segments. The exact
    counts of ``Bert`` (encoder and pooler, no heads) are 109,482,240 and 335,141,888
    (``count_parameters``). Dropout 0.1 everywhere (sec. A.2).
    ``initializer_range`` is the standard deviation of the initial weights.
    """

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    initializer_range: float = 0.02

    def __post_init__(self):
        check_bert_config(self)

    @classmethod
    def base(cls, **overrides) -> "BertConfig":
        """BERT_BASE (sec. 3): L=12 layers, width D=768 (the paper's H), 12 heads (its A), feed-forward
        4D = 3072."""
        return cls(**overrides)

    @classmethod
    def large(cls, **overrides) -> "BertConfig":
        """BERT_LARGE (sec. 3): L=24 layers, width D=1024 (the paper's H), 16 heads (its A),
        feed-forward 4D = 4096."""
        return cls(
            **{
                "hidden_size": 1024,
                "num_hidden_layers": 24,
                "num_attention_heads": 16,
                "intermediate_size": 4096,
                **overrides,
            }
        )


# --- the layers ----------------------------------------------------------------------------------


class BertEmbeddings(nn.Module):
    """E = LayerNorm(token embedding + segment embedding + position embedding), then dropout (sec. 3,
    Figure 2). The positions are learned, not sinusoidal. forward(input_ids [B, T], token_type_ids [B, T])
    -> [B, T, D]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor) -> Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)  # [T]
        x = (
            self.word_embeddings(input_ids)
            + self.token_type_embeddings(token_type_ids)
            + self.position_embeddings(positions)
        )  # [B, T, D]
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention (Vaswani et al. 2017, sec. 3.2.2, eq. 1):
    ``lib.attention.MultiHeadAttention`` without W^O, under the checkpoints' names.

    forward(x [B, T, D], mask bool broadcastable to [B, H, T, T] or None, need_weights=False)
        -> (context [B, T, D], weights [B, H, T, T] or None).

    ``query``, ``key``, ``value`` are nn.Linear(D, D) holding the H heads' projections side by side
    (rows h*Dh ... (h+1)*Dh - 1 belong to head h). ``_split_heads``, ``attention_heads`` and
    ``_merge_heads`` are lib.attention's (the split and the merge without input checks:
    ``Bert.forward`` checked the input once); need_weights=False takes torch's fused kernel (the
    same context, no T x T matrix kept). Dropout on the attention weights (as BERT and Hugging
    Face); the returned weights are those before it. The output projection W^O lives in
    ``BertAttention.output`` (a ``BertAddNorm``)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(c.attention_probs_dropout_prob)

    def forward(self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
        q = _split_heads(self.query(x), self.num_heads)  # [B, T, D] -> [B, H, T, Dh]
        k = _split_heads(self.key(x), self.num_heads)  # [B, H, T, Dh]
        v = _split_heads(self.value(x), self.num_heads)  # [B, H, T, Dh]
        dropout_p = self.dropout.p if self.training else 0.0
        # softmax(q k^T / sqrt(Dh)) v, the library's one attention computation
        context, weights = attention_heads(q, k, v, mask, dropout_p, need_weights)  # [B, H, T, Dh]
        return _merge_heads(context), weights  # [B, T, D], [B, H, T, T] or None


class BertAddNorm(nn.Module):
    """A projection, dropout and the residual Add & LayerNorm (post-LN), closing each sub-layer:
    forward(h [B, T, F], x [B, T, D]) -> LayerNorm(x + Dropout(h W + b)) [B, T, D].
    After the heads (F = D, the output projection W^O: ``attention.output``) and after the feed-forward
    network (F = intermediate size, W2: ``output``). Hugging Face has two classes for it, BertSelfOutput
    and BertOutput; the attribute names, and so the checkpoint keys, are the same."""

    def __init__(self, c: BertConfig, in_features: int):
        super().__init__()
        self.dense = nn.Linear(in_features, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, h: Tensor, x: Tensor) -> Tensor:
        return self.LayerNorm(x + self.dropout(self.dense(h)))  # [B, T, D]


class BertAttention(nn.Module):
    """The first sub-layer's modules under the checkpoints' names: ``self`` (the heads) and
    ``output`` (W^O, residual, LayerNorm). ``BertLayer.forward`` calls the two in turn."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertAddNorm(c, c.hidden_size)  # W^O, residual, LayerNorm


class BertIntermediate(nn.Module):
    """The feed-forward network's first half: GELU(x W1 + b1), D -> F. GELU is the exact one,
    x * Phi(x) with the Gaussian CDF written with erf (Hendrycks and Gimpel 2016; BERT, sec. 3);
    forward(x [B, T, D]) -> [B, T, F]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(self.dense(x))  # [B, T, F], approximate="none": erf


class BertLayer(nn.Module):
    """One encoder layer, post-LN as in the Transformer's encoder (Vaswani et al. 2017, sec. 3.1):
    x = LN(x + SelfAttn(x)); x = LN(x + FFN(x)).
    forward(x [B, T, D], mask, need_weights) -> (x [B, T, D], weights [B, H, T, T] or None)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = BertAttention(c)  # attention.self, attention.output
        self.intermediate = BertIntermediate(c)  # W1 and GELU
        self.output = BertAddNorm(c, c.intermediate_size)  # W2, residual, LayerNorm

    def forward(self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
        # sub-layer 1: multi-head self-attention, then Add & LayerNorm
        context, weights = self.attention.self(x, mask, need_weights)  # [B, T, D], [B, H, T, T]
        x = self.attention.output(context, x)  # LN(x + Dropout(context W^O + b))  [B, T, D]
        # sub-layer 2: the position-wise feed-forward network, then Add & LayerNorm
        h = self.intermediate(x)  # GELU(x W1 + b1)  [B, T, F]
        x = self.output(h, x)  # LN(x + Dropout(h W2 + b2))  [B, T, D]
        return x, weights  # weights None unless need_weights


class BertEncoder(nn.Module):
    """The stack: ``layer`` is an nn.ModuleList of L ``BertLayer`` (checkpoint keys encoder.layer.<i>...).
    forward(x [B, T, D], mask, need_weights) -> (x [B, T, D], hidden states: a tuple of L + 1
    [B, T, D], the input first; attention weights: a tuple of L [B, H, T, T], or of L None without
    need_weights)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c.num_hidden_layers))

    def forward(self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
        return run_layers(self.layer, x, mask, need_weights)


def run_layers(layers, x: Tensor, mask: Tensor | None = None, need_weights: bool = False):
    """x through each of ``layers`` in turn (BERT's stack; ALBERT passes its one shared layer L times).
    Returns (x [B, T, D], hidden states: the input, then each layer's output; weights: one per layer,
    [B, H, T, T] or None without need_weights)."""
    hidden_states, attentions = [x], []
    for layer in layers:
        x, weights = layer(x, mask, need_weights)  # [B, T, D], [B, H, T, T] or None
        hidden_states.append(x)
        attentions.append(weights)
    return x, tuple(hidden_states), tuple(attentions)


class BertPooler(nn.Module):
    """pooled = tanh(h_[CLS] W + b): the first token's last-layer vector through a dense layer with
    tanh (BERT's code; the paper calls its input C, the "aggregate sequence representation", sec. 3).
    forward(x [B, T, D]) -> [B, D]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, x: Tensor) -> Tensor:
        return torch.tanh(self.dense(x[:, 0]))  # [B, D]


def init_weights(module: nn.Module, std: float) -> None:
    """BERT's initialization: every weight matrix and embedding N(0, std^2) with std =
    initializer_range = 0.02, biases 0, LayerNorm gain 1 and bias 0. Deviation: Google's code draws
    from a normal truncated at 2 std; we draw from the plain normal, as Hugging Face does."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=std)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


# --- the encoder ---------------------------------------------------------------------------------


class BertOutput(NamedTuple):
    """What ``Bert.forward`` returns.

    sequence_output [B, T, D]: the last layer's vector of every token (Hugging Face: last_hidden_state).
    pooled_output [B, D]: tanh(W h_[CLS] + b), the pooler applied to the first token's vector.
    attentions: tuple of L tensors [B, H, T, T] (the weights of every layer), or None if not asked.
    hidden_states: tuple of L + 1 tensors [B, T, D] (the embeddings' output, then every layer's), or None.
    """

    sequence_output: Tensor
    pooled_output: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


class Bert(nn.Module):
    """The BERT encoder with its pooler (Devlin et al. 2019, sec. 3): what the published
    ``BertModel`` checkpoints hold. Submodules: ``embeddings``, ``encoder.layer[i]``
    (``attention.self.query/key/value``, ``attention.output.dense/LayerNorm``,
    ``intermediate.dense``, ``output.dense/LayerNorm``), ``pooler``.

    forward(input_ids [B, T], token_type_ids [B, T] or None (all segment 0), attention_mask or None
    (attend everywhere), return_attention=False, return_hidden_states=False) -> ``BertOutput``.

    ``attention_mask`` is Hugging Face's: [B, T] with 1 (or True) at real tokens and 0 (False) at
    padding; it becomes the library's boolean mask [B, 1, 1, T] (True = may attend), so that no
    query attends to padding. A [B, T, T] mask says per query which keys it may attend to. The
    padding's own rows are still computed (they attend to the real tokens) and are meaningless:
    ignore them. Without ``return_attention`` the layers take torch's fused attention: the same
    outputs up to float32 rounding, faster, and no [T, T] weights kept.

    Deviations from Hugging Face's BertModel, which this reproduces to float32 rounding with the
    same weights (tests/test_pretrained_bert.py): masked weights are exactly 0 instead of
    exp(-3.4e38) ~ 0, and a query that may attend to nothing (an all-zero mask row) gets zero
    weights instead of uniform ones; no position_ids, no relative positions, no decoder mode, no
    cache. Initialization: ``init_weights``, N(0, 0.02^2).
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        check_type(config, "config", BertConfig)
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config)
        init_weights(self, config.initializer_range)

    def forward(
        self,
        input_ids: Tensor,
        token_type_ids: Tensor | None = None,
        attention_mask: Tensor | None = None,
        return_attention: bool = False,
        return_hidden_states: bool = False,
    ) -> BertOutput:
        token_type_ids, mask = bert_inputs(self.config, input_ids, token_type_ids, attention_mask)
        x = self.embeddings(input_ids, token_type_ids)  # [B, T, D]
        # [B, T, D], L + 1 and L tensors; the fused attention path unless weights are asked for
        x, hidden_states, attentions = self.encoder(x, mask, need_weights=return_attention)
        return BertOutput(
            x,  # [B, T, D]
            self.pooler(x),  # [B, D]
            attentions if return_attention else None,
            hidden_states if return_hidden_states else None,
        )


def bert_inputs(config, input_ids, token_type_ids, attention_mask) -> tuple[Tensor, Tensor | None]:
    """The inputs checked (as ``Bert.forward`` documents them) and made ready for the layers:
    token_type_ids (zeros, everything segment A, when None) and the mask for the heads (see
    ``extended_attention_mask``). ALBERT's forward starts the same way."""
    check_bert_inputs(config, input_ids, token_type_ids, attention_mask)
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)  # [B, T], everything segment A
    mask = extended_attention_mask(attention_mask)  # bool [B, 1, 1|T, T] or None
    return token_type_ids, mask


def extended_attention_mask(attention_mask: Tensor | None) -> Tensor | None:
    """Hugging Face's ``attention_mask`` as the library's mask for the heads: [B, T] (1 or True at
    real tokens) -> bool [B, 1, 1, T], the same keys for every query and head; [B, T, T] (query i
    may attend to key j) -> [B, 1, T, T]; None -> None (attend everywhere)."""
    if attention_mask is None:
        return None
    mask = attention_mask.bool()  # 0/1 -> False/True
    if mask.dim() == 2:
        return mask[:, None, None, :]  # [B, 1, 1, T]
    return mask[:, None, :, :]  # [B, 1, T, T]


def count_parameters(config: BertConfig) -> int:
    """Number of parameters of Bert(config) (encoder and pooler, no heads), built on the meta device.

    base  109,482,240 = embeddings 23,837,184 (30522*768 words + 512*768 positions + 2*768 segments
                        + LayerNorm 2*768) + 12 layers x 7,087,872 (attention 4*(768*768 + 768) =
                        2,362,368, feed-forward 768*3072 + 3072 + 3072*768 + 768 = 4,722,432,
                        2 LayerNorms 3,072) + pooler 768*768 + 768 = 590,592; the paper says 110M.
    large 335,141,888 (24 layers of width 1024, feed-forward 4096, 16 heads); the paper says 340M.
    """
    with torch.device("meta"):
        model = Bert(config)
    return sum(p.numel() for p in model.parameters())
