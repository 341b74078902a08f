"""Hierarchical attention network for document classification (Yang et al. 2016).

Shape legend:

    B  documents in the batch     S  sentences per document (padded)     W  words per sentence (padded)
    E  word-embedding width       Hw, Hs  GRU state width per direction at the word / sentence level
    Da hidden width of an attention's small network          C  number of classes

A document is read twice, bottom up (sec. 2):

    word level      h_it = [GRU_fwd(x_it); GRU_bwd(x_it)]           bidirectional GRU over each sentence (eqs. 1-4)
                    u_it = tanh(W_w h_it + b_w)                       (eq. 5)
                    alpha_it = softmax_t(u_it^T u_w)                  (eq. 6, over the sentence's real words)
                    s_i = sum_t alpha_it h_it                         (eq. 7: the sentence vector)
    sentence level  h_i = [GRU_fwd(s_i); GRU_bwd(s_i)]             bidirectional GRU over the sentences (eqs. 8-9)
                    alpha_i = softmax_i(tanh(W_s h_i + b_s)^T u_s)    (eq. 10, over the document's real sentences)
                    v = sum_i alpha_i h_i                             (the document vector)
    classifier      p = softmax(W_c v + b_c)                          (eq. 11; we return the logits W_c v + b_c)

u_w and u_s are *learned context vectors*: a query that no decoder provides, learned with the rest
("which word is informative?"). ``ContextAttention`` implements eqs. 5-7 with lib.attention's
AdditiveScore and masked_softmax: score_t = v_a^T tanh(W_q q + W_k h_t) with the constant query q = [1]
is exactly u^T tanh(W h_t + b), since W_q [1] is a learned bias b, W_k is W and v_a is the context vector u.

Deviations from the paper: small widths (the paper: 200-dim word2vec embeddings, GRUs of 50 per
direction) and randomly initialized embeddings; padding handled with packed sequences and masks
(words of padding sentences and padding words get weight exactly 0); the attention's W_k and v_a
start Xavier-uniform, not at AdditiveScore's v_a = 0 (which makes every weight uniform at first and,
in lib.captioning, learns to look more slowly).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib._validate import check_int
from lib.attention import AdditiveScore, masked_softmax

__all__ = ["ContextAttention", "HierarchicalAttentionNetwork", "HANOutput"]


class HANOutput(NamedTuple):
    """What ``HierarchicalAttentionNetwork.forward`` returns: logits [B, C]; word_weights [B, S,
    W], the word-level attention inside every sentence (0 on padding); sentence_weights [B, S], the
    sentence-level attention."""

    logits: Tensor
    word_weights: Tensor
    sentence_weights: Tensor


class ContextAttention(nn.Module):
    """Attention pooling with a learned context vector (Yang et al. 2016, eqs. 5-7 and 10).

    forward(h [B, T, D], mask bool [B, T] (True at real positions)) -> (pooled [B, D], weights [B, T]).
    ``score`` is an AdditiveScore(1, D, Da) fed the constant query [1] (see the module docstring), so
    ``score.v_a.weight`` [1, Da] is the paper's context vector u and ``score.W_q.weight`` [Da, 1] its bias b.
    A row with no real position (a padding sentence) gets zero weights and a zero vector.
    """

    def __init__(self, d_in: int, d_attn: int):
        super().__init__()
        self.score = AdditiveScore(1, d_in, d_attn)
        for layer in (self.score.W_q, self.score.W_k, self.score.v_a):
            nn.init.xavier_uniform_(layer.weight)

    def forward(self, h: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        one = h.new_ones(h.shape[0], 1, 1)  # the constant query [B, 1, 1]
        scores = self.score(one, h)  # [B, 1, T]
        weights = masked_softmax(scores, mask[:, None, :])  # [B, 1, T], 0 on padding
        return (weights @ h).squeeze(1), weights.squeeze(1)  # [B, D], [B, T]


class HierarchicalAttentionNetwork(nn.Module):
    """Yang et al. 2016's HAN. forward(docs [B, S, W] long, padded with pad_id) ->
    (logits [B, C], word_weights [B, S, W], sentence_weights [B, S]).

    word_weights[b, i] sums to 1 over the real words of sentence i (all 0 for a padding sentence);
    sentence_weights[b] sums to 1 over the document's real sentences; padding gets exactly 0.
    A sentence is real if it has at least one non-pad word; sentences and words are padded at the end.
    Initialization: torch's defaults (embedding N(0, 1), GRUs and linear layers uniform), Xavier for
    the attention (see ContextAttention).
    """

    def __init__(
        self,
        vocab_size: int,
        n_classes: int = 2,
        d_emb: int = 32,
        d_word: int = 32,
        d_sentence: int = 32,
        d_attn: int = 32,
        pad_id: int = 0,
    ):
        super().__init__()
        for name, value in (
            ("vocab_size", vocab_size),
            ("n_classes", n_classes),
            ("d_emb", d_emb),
            ("d_word", d_word),
            ("d_sentence", d_sentence),
            ("d_attn", d_attn),
        ):
            check_int(value, name, 1)
        self.vocab_size, self.pad_id = vocab_size, pad_id
        self.embedding = nn.Embedding(vocab_size, d_emb, padding_idx=pad_id)
        self.word_gru = nn.GRU(d_emb, d_word, batch_first=True, bidirectional=True)
        self.word_attention = ContextAttention(2 * d_word, d_attn)
        self.sentence_gru = nn.GRU(2 * d_word, d_sentence, batch_first=True, bidirectional=True)
        self.sentence_attention = ContextAttention(2 * d_sentence, d_attn)
        self.classifier = nn.Linear(2 * d_sentence, n_classes)

    def _check(self, docs) -> None:
        if not isinstance(docs, Tensor) or docs.dtype != torch.long or docs.dim() != 3:
            got = (
                f"shape {tuple(docs.shape)} and dtype {docs.dtype}"
                if isinstance(docs, Tensor)
                else type(docs).__name__
            )
            raise ValueError(f"docs: expected a long tensor [B, S, W], got {got}")
        if docs.numel() == 0:
            raise ValueError(
                f"docs: expected a non-empty [B, S, W] tensor, got shape {tuple(docs.shape)}"
            )
        if docs.min() < 0 or docs.max() >= self.vocab_size:
            raise ValueError(
                f"docs: expected token ids in [0, {self.vocab_size}), got min {int(docs.min())} and max {int(docs.max())}"
            )
        empty = ~(docs != self.pad_id).any(-1).any(-1)  # [B]
        if empty.any():
            raise ValueError(
                f"docs: document {int(empty.nonzero()[0])} has no word (all pad_id={self.pad_id})"
            )

    @staticmethod
    def _bigru(gru: nn.GRU, x: Tensor, lengths: Tensor) -> Tensor:
        """Run a bidirectional GRU over x [N, T, Din] with lengths [N] (>= 1), padding ignored -> [N, T, 2H]."""
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = gru(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]

    def forward(self, docs: Tensor) -> HANOutput:
        self._check(docs)
        B, S, W = docs.shape
        word_mask = docs != self.pad_id  # [B, S, W]
        sentence_mask = word_mask.any(-1)  # [B, S]
        # word level: every real sentence of every document at once
        real = docs[sentence_mask]  # [N, W], N real sentences
        real_mask = word_mask[sentence_mask]  # [N, W]
        h_words = self._bigru(self.word_gru, self.embedding(real), real_mask.sum(-1))  # [N, W, 2Hw]
        s_real, w_real = self.word_attention(h_words, real_mask)  # [N, 2Hw], [N, W]
        sentences = s_real.new_zeros(B, S, s_real.shape[-1])  # [B, S, 2Hw]
        sentences[sentence_mask] = s_real
        word_weights = w_real.new_zeros(B, S, W)  # [B, S, W]
        word_weights[sentence_mask] = w_real
        # sentence level
        # [B, S, 2Hs]
        h_sentences = self._bigru(self.sentence_gru, sentences, sentence_mask.sum(-1))
        # [B, 2Hs], [B, S]
        document, sentence_weights = self.sentence_attention(h_sentences, sentence_mask)
        # [B, C], [B, S, W], [B, S]
        return HANOutput(self.classifier(document), word_weights, sentence_weights)
