"""BERT's heads (Devlin et al. 2019): the two pretraining heads (masked LM and next-sentence
prediction, sec. 3.1) with the pretraining loss, and the fine-tuning heads of sec. 3.2 and Figure 4
(a label per sequence, per sentence pair, per token; an answer span). Each model is a ``lib.bert.Bert``
named ``bert`` plus its head, under the published checkpoints' names (``cls.predictions``,
``cls.seq_relationship``, ``classifier``, ``qa_outputs``), and returns a NamedTuple that carries the
encoder's ``attentions`` and ``hidden_states`` (as ``lib.bert.BertOutput``).

Shape legend as in lib/bert.py: B batch, T tokens, D hidden_size, V vocab_size.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.bert_heads import check_pretraining_labels
from lib._validate import check_int
from lib.bert import IGNORE_INDEX, Bert, BertConfig, BertOutput, init_weights

__all__ = [
    "PreTrainingOutput",
    "ClassifierOutput",
    "SpanOutput",
    "BertForPreTraining",
    "BertForSequenceClassification",
    "BertForSentencePairClassification",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
    "pretraining_loss",
]


# --- outputs -------------------------------------------------------------------------------------


class PreTrainingOutput(NamedTuple):
    """What ``BertForPreTraining.forward`` returns: mlm_logits [B, T, V], nsp_logits [B, 2],
    attentions and hidden_states (as in ``BertOutput``) or None. ``pretraining_loss`` turns the
    logits into the training objective."""

    mlm_logits: Tensor
    nsp_logits: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


class ClassifierOutput(NamedTuple):
    """What the classification heads return: logits [B, num_labels] (one label per sequence) or
    [B, T, num_labels] (one per token), attentions and hidden_states (as in ``BertOutput``) or None."""

    logits: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


class SpanOutput(NamedTuple):
    """What ``BertForQuestionAnswering.forward`` returns: start_logits [B, T], end_logits [B, T]
    (the scores of every token as the start and the end of the answer), attentions and
    hidden_states or None."""

    start_logits: Tensor
    end_logits: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


# --- the pretraining heads -----------------------------------------------------------------------


class BertPredictionHeadTransform(nn.Module):
    """The masked-LM head's transform: LayerNorm(GELU(x W + b)), D -> D.
    forward(x [B, T, D]) -> [B, T, D]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: Tensor) -> Tensor:
        return self.LayerNorm(F.gelu(self.dense(x)))  # [B, T, D]


class BertLMPredictionHead(nn.Module):
    """Masked-LM logits = transform(x) E^T + b, with E the word-embedding matrix [V, D] (tied:
    ``decoder.weight`` *is* ``embeddings.word_embeddings.weight``) and an output bias ``bias`` [V].
    forward(x [B, T, D]) -> [B, T, V]."""

    def __init__(self, c: BertConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # one Parameter [V, D]
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, x: Tensor) -> Tensor:
        return self.decoder(self.transform(x)) + self.bias  # [B, T, V]


class BertPreTrainingHeads(nn.Module):
    """``predictions`` (masked LM, [B, T, V]) and ``seq_relationship`` (next-sentence prediction
    from the pooled output, [B, 2]; class 0 = IsNext, 1 = NotNext, the order of BERT's checkpoints)."""

    def __init__(self, c: BertConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.predictions = BertLMPredictionHead(c, word_embeddings)
        self.seq_relationship = nn.Linear(c.hidden_size, 2)

    def forward(self, sequence_output: Tensor, pooled_output: Tensor) -> tuple[Tensor, Tensor]:
        return self.predictions(sequence_output), self.seq_relationship(pooled_output)


class _BertWithHead(nn.Module):
    """Shared plumbing of the models with a head: ``bert`` (a Bert) plus the head's modules.
    forward(input_ids, token_type_ids=None, attention_mask=None, return_attention=False,
    return_hidden_states=False) runs ``bert``, then ``head`` on its ``BertOutput``."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.bert = Bert(config)
        self.config = config

    def forward(
        self,
        input_ids: Tensor,
        token_type_ids: Tensor | None = None,
        attention_mask: Tensor | None = None,
        return_attention: bool = False,
        return_hidden_states: bool = False,
    ):
        flags = (return_attention, return_hidden_states)
        return self.head(self.bert(input_ids, token_type_ids, attention_mask, *flags))


class BertForPreTraining(_BertWithHead):
    """BERT with its two pretraining heads (sec. 3.1): the masked LM (Task #1) and next-sentence
    prediction (Task #2), under the checkpoints' names ``bert`` and ``cls.predictions`` /
    ``cls.seq_relationship``. The LM's output matrix is tied to the word embeddings (as in BERT's
    code).

    forward(input_ids, token_type_ids=None, attention_mask=None, return_attention=False,
    return_hidden_states=False) -> ``PreTrainingOutput(mlm_logits [B, T, V], nsp_logits [B, 2],
    attentions, hidden_states)``.
    ``pretraining_loss`` turns them into the training objective.
    """

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.cls = BertPreTrainingHeads(config, self.bert.embeddings.word_embeddings)
        init_weights(self.cls.predictions.transform, config.initializer_range)
        init_weights(self.cls.seq_relationship, config.initializer_range)

    def head(self, out: BertOutput):
        # [B, T, V], [B, 2]
        mlm_logits, nsp_logits = self.cls(out.sequence_output, out.pooled_output)
        return PreTrainingOutput(mlm_logits, nsp_logits, out.attentions, out.hidden_states)


def pretraining_loss(
    mlm_logits: Tensor,
    nsp_logits: Tensor | None,
    mlm_labels: Tensor,
    nsp_labels: Tensor | None = None,
) -> Tensor:
    """BERT's pretraining objective (sec. A.2): the mean cross-entropy of the masked-LM predictions
    over the chosen tokens (labels != IGNORE_INDEX, from ``lib.pretraining_data.mask_tokens``) plus,
    if NSP logits and labels are given, the mean cross-entropy of next-sentence prediction (labels
    0 = IsNext, 1 = NotNext).

    mlm_logits [B, T, V], mlm_labels [B, T]; nsp_logits [B, 2], nsp_labels [B] -> scalar.
    """
    check_pretraining_labels(mlm_logits, nsp_logits, mlm_labels, nsp_labels, IGNORE_INDEX)
    loss = F.cross_entropy(
        mlm_logits.flatten(0, -2), mlm_labels.flatten(), ignore_index=IGNORE_INDEX
    )
    if nsp_logits is not None:
        loss = loss + F.cross_entropy(nsp_logits, nsp_labels)
    return loss


# --- the fine-tuning heads -----------------------------------------------------------------------


class _BertWithClassifier(_BertWithHead):
    """A Bert with dropout and a linear layer ``classifier`` (D -> num_labels): BERT's fine-tuning
    heads."""

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
    return_attention=False, return_hidden_states=False)
    -> ``ClassifierOutput(logits [B, num_labels], attentions, hidden_states)``.
    Sentence pairs (entailment, paraphrase: Figure 4 (a)) use the same head on ``[CLS] A [SEP] B
    [SEP]`` with segment ids 0 for A and 1 for B: see ``BertForSentencePairClassification``."""

    def head(self, out: BertOutput):
        logits = self.classifier(self.dropout(out.pooled_output))  # [B, num_labels]
        return ClassifierOutput(logits, out.attentions, out.hidden_states)


class BertForSentencePairClassification(BertForSequenceClassification):
    """The same head as ``BertForSequenceClassification`` (sec. 3.2, Figure 4 (a)); only the input
    differs: ``[CLS] A [SEP] B [SEP]`` with ``token_type_ids`` 0 on A (and its [CLS], [SEP]) and 1
    on B, which this class requires, so that a pair is never silently fed as one segment."""

    def forward(
        self,
        input_ids,
        token_type_ids=None,
        attention_mask=None,
        return_attention=False,
        return_hidden_states=False,
    ):
        if token_type_ids is None:
            raise ValueError(
                "token_type_ids: expected the segment ids of the pair (0 for sentence A, 1 for sentence B), got None"
            )
        flags = (return_attention, return_hidden_states)
        return super().forward(input_ids, token_type_ids, attention_mask, *flags)


class BertForTokenClassification(_BertWithClassifier):
    """Fine-tuning for a label per token, e.g. named entities (sec. 3.2, Figure 4 (d)): a linear
    layer on every token's last-layer vector, after dropout.
    forward(...) -> ``ClassifierOutput(logits [B, T, num_labels], attentions, hidden_states)``."""

    def head(self, out: BertOutput):
        logits = self.classifier(self.dropout(out.sequence_output))  # [B, T, num_labels]
        return ClassifierOutput(logits, out.attentions, out.hidden_states)


class BertForQuestionAnswering(_BertWithHead):
    """Span question answering, SQuAD-style (sec. 4.2, Figure 4 (c)): the question is segment A, the
    passage segment B; a start vector S and an end vector E score every token, P(start = i) =
    softmax_i(S . T_i), likewise the end. ``qa_outputs`` = nn.Linear(D, 2) holds S and E (with
    biases). forward(...) -> ``SpanOutput(start_logits [B, T], end_logits [B, T], attentions,
    hidden_states)``."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)
        init_weights(self.qa_outputs, config.initializer_range)

    def head(self, out: BertOutput):
        start, end = self.qa_outputs(out.sequence_output).unbind(-1)  # [B, T, 2] -> 2 x [B, T]
        return SpanOutput(start, end, out.attentions, out.hidden_states)
