"""BERT, the bidirectional Transformer encoder of Devlin et al. 2019, "BERT: Pre-training of Deep
Bidirectional Transformers for Language Understanding", with its pretraining and fine-tuning heads and
its two pretraining tasks' data: masked tokens (``mask_tokens``) and sentence pairs (``make_nsp_pairs``),
batched by ``pretraining_batches``.

Shape legend (used in every docstring and shape comment below):

    B    batch                      T    tokens per sequence (<= max_position_embeddings)
    D    hidden_size, the width     F    intermediate_size, the feed-forward hidden width
    H    attention heads            Dh   width of one head, D / H
    V    vocab_size                 L    num_hidden_layers

Mask convention (as everywhere in this library): boolean, True where a query may attend, broadcastable
to the attention weights [B, H, T, T]. ``Bert.forward`` takes Hugging Face's ``attention_mask`` [B, T]
(1 = real token, 0 = padding) and turns it into that form, [B, 1, 1, T]; a 3-D [B, T, T] mask
(query i may attend to key j) is accepted as well.

Pipeline: token + segment + position embeddings -> LayerNorm -> L encoder layers (post-LN, as the
Transformer of Vaswani et al. 2017: self-attention, Add & LayerNorm, GELU feed-forward, Add & LayerNorm)
-> sequence output [B, T, D]; the pooler maps the first token's ([CLS]) vector to the pooled output [B, D].

Every submodule is named as in the published checkpoints (Google's TF checkpoints converted by Hugging
Face): ``embeddings.word_embeddings``, ``encoder.layer.3.attention.self.query``, ``pooler.dense``, ...
so loading real weights (lib.pretrained.bert) is ``load_state_dict`` after dropping a prefix and a
buffer, with no tensor renamed or transposed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._random import rand, randint
from lib._validate import check_ids, check_int
from lib.attention import attention_heads, merge_heads, split_heads

__all__ = [
    "BertConfig",
    "BertOutput",
    "Bert",
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertForSentencePairClassification",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
    "check_inputs",
    "count_parameters",
    "init_weights",
    "pretraining_loss",
    "mask_tokens",
    "NSPPair",
    "make_nsp_pairs",
    "IGNORE_INDEX",
    "PretrainingBatch",
    "pretraining_batches",
]

IGNORE_INDEX = -100  # label of the tokens the masked-LM loss skips (torch's cross_entropy default)


@dataclass(frozen=True)
class BertConfig:
    """Hyper-parameters of BERT, with the names of the published ``config.json`` files.

    ``base()`` and ``large()`` are the paper's BERT_BASE (L=12, H=768, A=12, 110M parameters) and
    BERT_LARGE (L=24, H=1024, A=16, 340M), sec. 3, with the uncased WordPiece vocabulary of 30522
    tokens, 512 positions and 2 segments. The exact counts of ``Bert`` (encoder and pooler, no heads)
    are 109,482,240 and 335,141,888 (``count_parameters``). Dropout 0.1 everywhere (sec. A.2).
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
        for name in (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        ):
            value = getattr(self, name)
            check_int(value, name, 1)
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size={self.hidden_size} is not divisible by num_attention_heads={self.num_attention_heads}"
            )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ValueError(f"{name}: expected a probability in [0, 1), got {value!r}")
        for name in ("layer_norm_eps", "initializer_range"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{name}: expected a positive number, got {value!r}")

    @classmethod
    def base(cls, **overrides) -> "BertConfig":
        """BERT_BASE (sec. 3): L=12 layers, H=768, A=12 heads, feed-forward 4H = 3072."""
        return cls(**overrides)

    @classmethod
    def large(cls, **overrides) -> "BertConfig":
        """BERT_LARGE (sec. 3): L=24 layers, H=1024, A=16 heads, feed-forward 4H = 4096."""
        return cls(
            **{
                "hidden_size": 1024,
                "num_hidden_layers": 24,
                "num_attention_heads": 16,
                "intermediate_size": 4096,
                **overrides,
            }
        )


class BertOutput(NamedTuple):
    """What ``Bert.forward`` returns.

    sequence_output [B, T, D]: the last layer's vector of every token (Hugging Face: last_hidden_state).
    pooled_output [B, D]: tanh(W h_[CLS] + b), the pooler applied to the first token's vector.
    attentions: list of L tensors [B, H, T, T] (the weights of every layer), or None if not asked.
    hidden_states: list of L + 1 tensors [B, T, D] (the embeddings' output, then every layer's), or None.
    """

    sequence_output: Tensor
    pooled_output: Tensor
    attentions: list[Tensor] | None = None
    hidden_states: list[Tensor] | None = None


class PreTrainingOutput(NamedTuple):
    """What ``BertForPreTraining.forward`` returns: mlm_logits [B, T, V], nsp_logits [B, 2],
    attentions (as in ``BertOutput``) or None. ``pretraining_loss`` turns the logits into the
    training objective."""

    mlm_logits: Tensor
    nsp_logits: Tensor
    attentions: list[Tensor] | None = None


class ClassifierOutput(NamedTuple):
    """What the classification heads return: logits [B, num_labels] (one label per sequence) or [B,
    T, num_labels] (one per token), and attentions (as in ``BertOutput``) or None."""

    logits: Tensor
    attentions: list[Tensor] | None = None


class SpanOutput(NamedTuple):
    """What ``BertForQuestionAnswering.forward`` returns: start_logits [B, T], end_logits [B, T]
    (the scores of every token as the start and the end of the answer), attentions or None."""

    start_logits: Tensor
    end_logits: Tensor
    attentions: list[Tensor] | None = None


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
    """Multi-head scaled dot-product self-attention (Vaswani et al. 2017, sec. 3.2.2, eq. 1) with
    lib.attention's functions (``split_heads``, ``attention_heads``, ``merge_heads``); ``query``,
    ``key``, ``value`` are nn.Linear(D, D) holding the H heads' projections side by side (rows h*Dh
    ... (h+1)*Dh - 1 belong to head h, as ``split_heads`` cuts them). Dropout on the attention
    weights (as BERT and Hugging Face); the returned weights are those before it. forward(x [B, T,
    D], mask bool broadcastable to [B, H, T, T] or None) -> (context [B, T, D], weights [B, H, T,
    T]); the output projection lives in ``BertAttention.output`` (a ``BertAddNorm``)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(c.attention_probs_dropout_prob)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = split_heads(self.query(x), self.num_heads)  # [B, T, D] -> [B, H, T, Dh]
        k = split_heads(self.key(x), self.num_heads)  # [B, H, T, Dh]
        v = split_heads(self.value(x), self.num_heads)  # [B, H, T, Dh]
        p = self.dropout.p if self.training else 0.0
        # softmax(q k^T / sqrt(Dh)) v, the library's one attention computation
        context, weights = attention_heads(q, k, v, mask, p)  # [B, H, T, Dh], [B, H, T, T]
        return merge_heads(context), weights  # [B, T, D], [B, H, T, T]


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
    """The first sub-layer: ``self`` (the heads) then ``output`` (projection, residual, LayerNorm).
    forward(x [B, T, D], mask) -> (x [B, T, D], weights [B, H, T, T])."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertAddNorm(c, c.hidden_size)  # W^O, residual, LayerNorm

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        context, weights = self.self(x, mask)  # [B, T, D], [B, H, T, T]
        return self.output(context, x), weights


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
    x = LN(x + SelfAttn(x)); x = LN(x + FFN(x)). forward(x [B, T, D], mask) -> (x [B, T, D], weights)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertAddNorm(c, c.intermediate_size)  # W2, residual, LayerNorm

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        x, weights = self.attention(x, mask)  # [B, T, D], [B, H, T, T]
        return self.output(self.intermediate(x), x), weights  # [B, T, D]


class BertEncoder(nn.Module):
    """The stack: ``layer`` is an nn.ModuleList of L ``BertLayer`` (checkpoint keys encoder.layer.<i>...).
    forward(x [B, T, D], mask) -> (x [B, T, D], hidden states: list of L + 1 [B, T, D] (the input first),
    attention weights: list of L [B, H, T, T])."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c.num_hidden_layers))

    def forward(self, x: Tensor, mask: Tensor | None = None):
        hidden_states, attentions = [x], []
        for layer in self.layer:
            x, weights = layer(x, mask)  # [B, T, D], [B, H, T, T]
            hidden_states.append(x)
            attentions.append(weights)
        return x, hidden_states, attentions


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
    ignore them.

    Deviations from Hugging Face's BertModel, which this reproduces to float32 rounding with the
    same weights (tests/test_pretrained_bert.py): masked weights are exactly 0
    (lib.attention.masked_softmax) instead of exp(-3.4e38) ~ 0, and a query that may attend to
    nothing (an all-zero mask row) gets zero weights instead of uniform ones; no position_ids, no
    relative positions, no decoder mode, no cache. Initialization: ``init_weights`` (normal(0,
    0.02)).
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(f"config: expected a BertConfig, got {type(config).__name__}")
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
        # bool [B, 1, 1|T, T] or None
        mask = check_inputs(self.config, input_ids, token_type_ids, attention_mask)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)  # [B, T], everything segment A
        x = self.embeddings(input_ids, token_type_ids)  # [B, T, D]
        x, hidden_states, attentions = self.encoder(x, mask)  # [B, T, D], L + 1 and L tensors
        return BertOutput(
            x,
            self.pooler(x),  # [B, T, D], [B, D]
            attentions if return_attention else None,
            hidden_states if return_hidden_states else None,
        )


def check_inputs(config, input_ids, token_type_ids=None, attention_mask=None) -> Tensor | None:
    """The checks of a BERT-family encoder's inputs (BERT, ALBERT), naming the argument: ids within
    ``config``'s vocabulary and position table, segment ids, and the attention mask ([B, T] or
    [B, T, T], bool or 0/1). Returns the boolean mask (True = may attend) shaped for the heads, or
    None."""
    c = config
    check_ids(input_ids, "input_ids", c.vocab_size, "the vocabulary")
    B, T = input_ids.shape
    if T > c.max_position_embeddings:
        raise ValueError(
            f"input_ids: expected at most max_position_embeddings={c.max_position_embeddings} tokens per sequence (the position table), got shape {tuple(input_ids.shape)}"
        )
    if token_type_ids is not None:
        check_ids(
            token_type_ids,
            "token_type_ids",
            c.type_vocab_size,
            "segment ids: 0 for sentence A, 1 for sentence B"
            if c.type_vocab_size == 2
            else "the segment table",
        )
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids: expected shape {tuple(input_ids.shape)} (that of input_ids), got shape {tuple(token_type_ids.shape)}"
            )
    if attention_mask is None:
        return None
    if (
        not isinstance(attention_mask, Tensor)
        or attention_mask.is_floating_point()
        or attention_mask.is_complex()
    ):
        got = (
            attention_mask.dtype
            if isinstance(attention_mask, Tensor)
            else type(attention_mask).__name__
        )
        raise TypeError(
            f"attention_mask: expected a bool or integer tensor (1/True = real token), got {got}"
        )
    if attention_mask.shape not in ((B, T), (B, T, T)):
        raise ValueError(
            f"attention_mask: expected shape [B, T] = {(B, T)} (1 = real token, 0 = padding) or [B, T, T] = {(B, T, T)}, got shape {tuple(attention_mask.shape)}"
        )
    if attention_mask.dtype != torch.bool:
        if attention_mask.numel() and ((attention_mask != 0) & (attention_mask != 1)).any():
            raise ValueError(
                f"attention_mask: expected values 0 and 1, got values from {attention_mask.min().item()} to {attention_mask.max().item()}"
            )
        attention_mask = attention_mask == 1
    if attention_mask.dim() == 2:
        return attention_mask[:, None, None, :]  # [B, 1, 1, T]: every query, every head
    return attention_mask[:, None, :, :]  # [B, 1, T, T]


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


# --- heads ---------------------------------------------------------------------------------------


class BertPredictionHeadTransform(nn.Module):
    """The masked-LM head's transform: LayerNorm(GELU(x W + b)), D -> D. forward([B, T, D]) -> [B, T, D]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: Tensor) -> Tensor:
        return self.LayerNorm(F.gelu(self.dense(x)))  # [B, T, D]


class BertLMPredictionHead(nn.Module):
    """Masked-LM logits = transform(x) E^T + b, with E the word-embedding matrix [V, D] (tied: ``decoder.weight``
    *is* ``embeddings.word_embeddings.weight``) and an output bias ``bias`` [V]. forward([B, T, D]) -> [B, T, V]."""

    def __init__(self, c: BertConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # one Parameter [V, D]
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, x: Tensor) -> Tensor:
        return self.decoder(self.transform(x)) + self.bias  # [B, T, V]


class BertPreTrainingHeads(nn.Module):
    """``predictions`` (masked LM, [B, T, V]) and ``seq_relationship`` (next-sentence prediction from the
    pooled output, [B, 2]; class 0 = IsNext, 1 = NotNext, the order of BERT's checkpoints)."""

    def __init__(self, c: BertConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.predictions = BertLMPredictionHead(c, word_embeddings)
        self.seq_relationship = nn.Linear(c.hidden_size, 2)

    def forward(self, sequence_output: Tensor, pooled_output: Tensor) -> tuple[Tensor, Tensor]:
        return self.predictions(sequence_output), self.seq_relationship(pooled_output)


class _BertWithHead(nn.Module):
    """Shared plumbing of the models with a head: ``bert`` (a Bert) plus the head's modules."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.bert = Bert(config)
        self.config = config

    def _encode(self, input_ids, token_type_ids, attention_mask, return_attention) -> BertOutput:
        return self.bert(
            input_ids, token_type_ids, attention_mask, return_attention=return_attention
        )


class BertForPreTraining(_BertWithHead):
    """BERT with its two pretraining heads (sec. 3.1): the masked LM (Task #1) and next-sentence
    prediction (Task #2), under the checkpoints' names ``bert`` and ``cls.predictions`` /
    ``cls.seq_relationship``. The LM's output matrix is tied to the word embeddings (as in BERT's
    code).

    forward(input_ids, token_type_ids=None, attention_mask=None, return_attention=False) ->
    ``PreTrainingOutput(mlm_logits [B, T, V], nsp_logits [B, 2], attentions or None)``.
    ``pretraining_loss`` turns them into the training objective.
    """

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.cls = BertPreTrainingHeads(config, self.bert.embeddings.word_embeddings)
        init_weights(self.cls.predictions.transform, config.initializer_range)
        init_weights(self.cls.seq_relationship, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_attention=False):
        out = self._encode(input_ids, token_type_ids, attention_mask, return_attention)
        # [B, T, V], [B, 2]
        mlm_logits, nsp_logits = self.cls(out.sequence_output, out.pooled_output)
        return PreTrainingOutput(mlm_logits, nsp_logits, out.attentions)


def pretraining_loss(
    mlm_logits: Tensor,
    nsp_logits: Tensor | None,
    mlm_labels: Tensor,
    nsp_labels: Tensor | None = None,
) -> Tensor:
    """BERT's pretraining objective (sec. A.2): the mean cross-entropy of the masked-LM predictions over
    the chosen tokens (labels != IGNORE_INDEX, from ``mask_tokens``) plus, if NSP logits and labels are
    given, the mean cross-entropy of next-sentence prediction (labels 0 = IsNext, 1 = NotNext).

    mlm_logits [B, T, V], mlm_labels [B, T]; nsp_logits [B, 2], nsp_labels [B] -> scalar.
    """
    if mlm_logits.shape[:-1] != mlm_labels.shape:
        raise ValueError(
            f"mlm_labels: expected shape {tuple(mlm_logits.shape[:-1])} (mlm_logits without its last dim), got shape {tuple(mlm_labels.shape)}"
        )
    V = mlm_logits.shape[-1]
    real = mlm_labels[mlm_labels != IGNORE_INDEX]
    if real.numel() and (real.min() < 0 or real.max() >= V):
        raise ValueError(
            f"mlm_labels: expected token ids in [0, {V}) (the vocabulary of mlm_logits) or {IGNORE_INDEX} (not chosen), got ids from {real.min().item()} to {real.max().item()}"
        )
    loss = F.cross_entropy(
        mlm_logits.flatten(0, -2), mlm_labels.flatten(), ignore_index=IGNORE_INDEX
    )
    if (nsp_logits is None) != (nsp_labels is None):
        raise ValueError("nsp_logits and nsp_labels: expected both or neither, got only one")
    if nsp_logits is not None:
        if nsp_labels.shape != nsp_logits.shape[:1]:
            raise ValueError(
                f"nsp_labels: expected shape {tuple(nsp_logits.shape[:1])}, got shape {tuple(nsp_labels.shape)}"
            )
        loss = loss + F.cross_entropy(nsp_logits, nsp_labels)
    return loss


class _BertWithClassifier(_BertWithHead):
    """A Bert with dropout and a linear layer ``classifier`` (D -> num_labels), as BERT's fine-tuning heads."""

    def __init__(self, config: BertConfig, num_labels: int):
        super().__init__(config)
        check_int(num_labels, "num_labels", 1)
        self.num_labels = num_labels
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        init_weights(self.classifier, config.initializer_range)


class BertForSequenceClassification(_BertWithClassifier):
    """Fine-tuning for a label per sequence (sec. 3.2, Figure 4 (b)): a linear layer on the pooled
    [CLS] vector, after dropout. forward(input_ids, token_type_ids=None, attention_mask=None,
    return_attention=False) -> ``ClassifierOutput(logits [B, num_labels], attentions or None)``.
    Sentence pairs (entailment, paraphrase: Figure 4 (a)) use the same head on ``[CLS] A [SEP] B
    [SEP]`` with segment ids 0 for A and 1 for B: see ``BertForSentencePairClassification``."""

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_attention=False):
        out = self._encode(input_ids, token_type_ids, attention_mask, return_attention)
        logits = self.classifier(self.dropout(out.pooled_output))  # [B, num_labels]
        return ClassifierOutput(logits, out.attentions)


class BertForSentencePairClassification(BertForSequenceClassification):
    """The same head as ``BertForSequenceClassification`` (sec. 3.2, Figure 4 (a)); only the input
    differs: ``[CLS] A [SEP] B [SEP]`` with ``token_type_ids`` 0 on A (and its [CLS], [SEP]) and 1 on B,
    which this class requires, so that a pair is never silently fed as one segment."""

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_attention=False):
        if token_type_ids is None:
            raise ValueError(
                "token_type_ids: expected the segment ids of the pair (0 for sentence A, 1 for sentence B), got None"
            )
        return super().forward(input_ids, token_type_ids, attention_mask, return_attention)


class BertForTokenClassification(_BertWithClassifier):
    """Fine-tuning for a label per token, e.g. named entities (sec. 3.2, Figure 4 (d)): a linear
    layer on every token's last-layer vector, after dropout. forward(...) -> (logits [B, T,
    num_labels], attentions or None), a ``ClassifierOutput``."""

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_attention=False):
        out = self._encode(input_ids, token_type_ids, attention_mask, return_attention)
        logits = self.classifier(self.dropout(out.sequence_output))  # [B, T, num_labels]
        return ClassifierOutput(logits, out.attentions)


class BertForQuestionAnswering(_BertWithHead):
    """Span question answering, SQuAD-style (sec. 4.2, Figure 4 (c)): the question is segment A, the
    passage segment B; a start vector S and an end vector E score every token, P(start = i) =
    softmax_i(S . T_i), likewise the end. ``qa_outputs`` = nn.Linear(D, 2) holds S and E (with
    biases). forward(...) -> ``SpanOutput(start_logits [B, T], end_logits [B, T], attentions or
    None)``."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)
        init_weights(self.qa_outputs, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_attention=False):
        out = self._encode(input_ids, token_type_ids, attention_mask, return_attention)
        start, end = self.qa_outputs(out.sequence_output).unbind(-1)  # [B, T, 2] -> 2 x [B, T]
        return SpanOutput(start, end, out.attentions)


# --- pretraining data: masked tokens and sentence pairs -------------------------------------------


def mask_tokens(
    input_ids: Tensor,
    vocab_size: int,
    mask_token_id: int,
    special_ids,
    prob: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """The masked-LM corruption of BERT (sec. 3.1, Task #1): choose each token with probability ``prob``;
    of the chosen ones, replace 80% by [MASK], 10% by a random token and leave 10% unchanged.

    input_ids [B, T] (or any shape) of ids in [0, vocab_size) -> (inputs, labels), both shaped like
    input_ids: ``inputs`` is the corrupted copy (input_ids is not changed); ``labels`` holds the
    original id where a token was chosen and IGNORE_INDEX (-100) everywhere else, so that the loss is
    taken over the chosen tokens only. Tokens whose id is in ``special_ids`` ([CLS], [SEP], [PAD], ...)
    are never chosen: include the padding id there and padding is never chosen either.
    ``generator``: a torch.Generator for reproducible draws (the same generator state gives the same result).

    Deviations from Google's code, as in Hugging Face's data collator: each token is chosen
    independently (so the number chosen per sequence varies around prob * T instead of being exactly
    round(prob * T)), and the 80/10/10 split is drawn per chosen token. One of ours: the random
    replacement is drawn uniformly from the non-special ids (Google draws from the whole vocabulary,
    [CLS] and [MASK] included); it equals the original token with probability 1 / (number of
    non-special ids), which the 10% "unchanged" does not count.
    """
    if not isinstance(input_ids, Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
        got = input_ids.dtype if isinstance(input_ids, Tensor) else type(input_ids).__name__
        raise TypeError(f"input_ids: expected a tensor of token ids (torch.long), got {got}")
    check_int(vocab_size, "vocab_size", 2)
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(
            f"input_ids: expected ids in [0, {vocab_size}) (the vocabulary), got ids from {input_ids.min().item()} to {input_ids.max().item()}"
        )
    if (
        isinstance(mask_token_id, bool)
        or not isinstance(mask_token_id, int)
        or not 0 <= mask_token_id < vocab_size
    ):
        raise ValueError(
            f"mask_token_id: expected an id in [0, {vocab_size}), got {mask_token_id!r}"
        )
    special = sorted(set(special_ids)) if not isinstance(special_ids, (str, bytes)) else None
    if special is None or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < vocab_size for i in special
    ):
        raise ValueError(
            f"special_ids: expected a collection of ids in [0, {vocab_size}), got {special_ids!r}"
        )
    if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0.0 < prob <= 1.0:
        raise ValueError(f"prob: expected a probability in (0, 1], got {prob!r}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator: expected a torch.Generator or None, got {type(generator).__name__}"
        )
    device = input_ids.device
    is_special = torch.zeros(vocab_size, dtype=torch.bool, device=device)
    is_special[special] = True
    ordinary = (~is_special).nonzero().squeeze(1)  # ids a random replacement may take
    if len(ordinary) == 0:
        raise ValueError(
            "special_ids: every id of the vocabulary is special; nothing can be chosen"
        )

    ids = input_ids
    can_choose = ~is_special[ids]  # like input_ids, bool
    chosen = (rand(ids.shape, device, generator) < prob) & can_choose
    action = rand(ids.shape, device, generator)  # 80% [MASK], 10% random, 10% unchanged
    replacement = ordinary[randint(len(ordinary), ids.shape, device, generator)]
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_token_id
    random_here = chosen & (action >= 0.8) & (action < 0.9)
    inputs[random_here] = replacement[random_here]
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE_INDEX))
    return inputs, labels


class NSPPair(NamedTuple):
    """One next-sentence-prediction example: ``is_next`` is True when ``second`` follows ``first`` in
    the same story. ``label`` is the NSP head's class: 0 = IsNext, 1 = NotNext (BERT's order)."""

    first: str
    second: str
    is_next: bool

    @property
    def label(self) -> int:
        return 0 if self.is_next else 1


def make_nsp_pairs(stories, n: int, seed: int = 0) -> list[NSPPair]:
    """``n`` sentence pairs for next-sentence prediction (BERT, sec. 3.1, Task #2): sentence A is drawn
    at random from a story with at least two sentences (not its last one); with probability 1/2
    sentence B is the sentence that follows A in the same story (IsNext), otherwise a random sentence
    of a different story (NotNext).

    stories: a list of stories, each a list of sentences (str), e.g. lib.data.stories.generate_stories;
    at least two stories, and one of them with two sentences or more. Deterministic given ``seed``.
    Deviations: BERT pairs *segments* (spans of several sentences filling up to 512 tokens) taken from
    documents; here one sentence each. A NotNext sentence may by chance read the same as the true next
    one when a generated corpus repeats sentences.
    """
    if not isinstance(stories, (list, tuple)) or not all(
        isinstance(s, (list, tuple)) and all(isinstance(x, str) for x in s) for s in stories
    ):
        raise TypeError(
            f"stories: expected a list of stories, each a list of sentences (str), got {type(stories).__name__}"
        )
    if len(stories) < 2:
        raise ValueError(
            f"stories: expected at least 2 stories (NotNext takes a sentence from another story), got {len(stories)}"
        )
    firsts = [i for i, s in enumerate(stories) if len(s) >= 2]
    if not firsts:
        raise ValueError("stories: expected at least one story with 2 or more sentences, got none")
    others = [i for i, s in enumerate(stories) if len(s) >= 1]
    check_int(n, "n", 1)
    if len(others) < 2:
        raise ValueError(
            f"stories: expected two stories with at least one sentence each, got {len(others)}"
        )
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        s = rng.choice(firsts)
        i = rng.randrange(len(stories[s]) - 1)
        if rng.random() < 0.5:
            pairs.append(NSPPair(stories[s][i], stories[s][i + 1], True))
        else:
            j = rng.randrange(len(others) - 1)  # any non-empty story but s:
            j = others[j + (others[j] >= s)]  # skip s (others is sorted, holds s)
            pairs.append(NSPPair(stories[s][i], rng.choice(stories[j]), False))
    return pairs


class PretrainingBatch(NamedTuple):
    """One batch for ``BertForPreTraining`` (all torch.long, [B, T] unless said):

    input_ids: the masked-LM input (``mask_tokens`` applied); token_type_ids, attention_mask: as
    ``WordPieceTokenizer.encode_batch`` gives them; mlm_labels: the original id where a token was
    chosen, IGNORE_INDEX elsewhere; nsp_labels [B]: 0 = IsNext, 1 = NotNext, or None for single
    sentences (no next-sentence task)."""

    input_ids: Tensor
    token_type_ids: Tensor
    attention_mask: Tensor
    mlm_labels: Tensor
    nsp_labels: Tensor | None


def pretraining_batches(
    tokenizer,
    examples,
    batch_size: int,
    *,
    max_length: int | None = None,
    prob: float = 0.15,
    seed: int = 0,
):
    """An endless iterator of ``PretrainingBatch``: the examples shuffled afresh every epoch, encoded
    with ``tokenizer.encode_batch`` (a ``lib.wordpiece.WordPieceTokenizer``), masked with
    ``mask_tokens`` (specials: [PAD] [UNK] [CLS] [SEP] [MASK] never chosen).

    examples: a list of ``NSPPair`` (``make_nsp_pairs``: sentence pairs with NSP labels) or of str
    (single sentences: nsp_labels is None). Deterministic given ``seed`` (shuffling and masking).
    Deviation, on purpose: the masks are drawn again every time a sentence comes round ("dynamic
    masking", Liu et al. 2019, RoBERTa, sec. 4.1); BERT fixed them once when it wrote its training
    data, duplicated 10 times with different masks.
    """
    examples = list(examples) if isinstance(examples, (list, tuple)) else examples
    if not isinstance(examples, list) or not examples:
        raise ValueError(
            f"examples: expected a non-empty list of NSPPair or of str, got {examples!r:.60}"
        )
    pairs = all(isinstance(e, NSPPair) for e in examples)
    if not pairs and not all(isinstance(e, str) for e in examples):
        raise TypeError(
            f"examples: expected all NSPPair (sentence pairs) or all str (sentences), got a mix of {sorted({type(e).__name__ for e in examples})}"
        )
    check_int(batch_size, "batch_size", 1)
    special = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.special_tokens]
    order_rng, mask_rng = random.Random(seed), torch.Generator().manual_seed(seed)

    def batches():
        while True:
            order = list(range(len(examples)))
            order_rng.shuffle(order)
            for start in range(0, len(order), batch_size):
                chunk = [examples[i] for i in order[start : start + batch_size]]
                if pairs:
                    enc = tokenizer.encode_batch(
                        [p.first for p in chunk], [p.second for p in chunk], max_length
                    )
                    nsp = torch.tensor([p.label for p in chunk], dtype=torch.long)
                else:
                    enc, nsp = tokenizer.encode_batch(chunk, max_length=max_length), None
                inputs, labels = mask_tokens(
                    enc.input_ids,
                    tokenizer.vocab_size,
                    tokenizer.mask_token_id,
                    special,
                    prob=prob,
                    generator=mask_rng,
                )
                yield PretrainingBatch(inputs, enc.token_type_ids, enc.attention_mask, labels, nsp)

    return batches()
