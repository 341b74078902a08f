"""Transfer learning for a sentence classifier: start from word vectors or from a language model.

Shape legend: B batch (sentences), T tokens per sentence (padded), V vocabulary size, E embedding
width, H recurrent state width, C classes.

``RNNClassifier``: a sentence classifier (embedding -> LSTM/GRU -> linear) whose embedding can start from
word vectors (``load_word_vectors``, the word2vec way, ``lib.word2vec``), or whose embedding and
recurrent layers can start from a trained forward ``lib.rnnlm.RNNLM`` (``from_lm``, the way of Howard
& Ruder 2018's ULMFiT, without their gradual unfreezing and discriminative learning rates).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from lib._checks.rnn_classifier import (
    check_classifier_inputs,
    check_forward_lm,
    check_rnn_classifier,
)
from lib._validate import check_shape
from lib.rnnlm import RNNLM, sentence_lengths

__all__ = ["ClassifierOutput", "RNNClassifier"]


class ClassifierOutput(NamedTuple):
    """What ``RNNClassifier.forward`` returns: logits [B, C]."""

    logits: Tensor


class RNNClassifier(nn.Module):
    """embedding -> LSTM or GRU -> linear on the state at each sentence's last real token -> logits.

    forward(input_ids [B, T], attention_mask [B, T] or None) -> ClassifierOutput(logits [B, C]). The submodules are
    named as in ``RNNLM`` (``embedding``, ``rnn``), so ``from_lm`` copies a forward language model's
    weights into them; the linear layer ``head`` is new. Initialization: uniform in [-0.1, 0.1], as
    ``RNNLM``.
    """

    def __init__(
        self,
        vocab_size: int,
        n_classes: int = 2,
        d_emb: int = 64,
        d_hidden: int = 128,
        n_layers: int = 1,
        cell: str = "lstm",
    ):
        super().__init__()
        check_rnn_classifier(vocab_size, n_classes, d_emb, d_hidden, n_layers, cell)
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, d_emb)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(
            d_emb, d_hidden, n_layers, batch_first=True
        )
        self.head = nn.Linear(d_hidden, n_classes)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)

    @classmethod
    def from_lm(cls, lm: RNNLM, n_classes: int = 2) -> "RNNClassifier":
        """A classifier whose embedding and recurrent layers are copies of a forward ``RNNLM``'s (the
        LM is left untouched; its output layer is not used)."""
        check_forward_lm(lm, RNNLM)
        model = cls(
            lm.vocab_size,
            n_classes,
            lm.embedding.embedding_dim,
            lm.rnn.hidden_size,
            lm.rnn.num_layers,
            lm.cell,
        )
        model.embedding.load_state_dict(lm.embedding.state_dict())
        model.rnn.load_state_dict(lm.rnn.state_dict())
        return model

    @torch.no_grad()
    def load_word_vectors(self, vectors: Tensor) -> "RNNClassifier":
        """Copy word vectors [V, E] (row i for token id i, e.g. ``SkipGram.vectors``) into the embedding."""
        check_shape(vectors, "vectors", tuple(self.embedding.weight.shape), "[V, E]")
        self.embedding.weight.copy_(vectors)
        return self

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> ClassifierOutput:
        check_classifier_inputs(input_ids, attention_mask, self.vocab_size)
        lengths = sentence_lengths(input_ids, attention_mask)  # [B]
        h, _ = self.rnn(self.embedding(input_ids))  # [B, T, H]
        rows = torch.arange(input_ids.shape[0], device=input_ids.device)
        return ClassifierOutput(self.head(h[rows, lengths - 1]))  # [B, C]
