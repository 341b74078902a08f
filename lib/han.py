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
AdditiveScore and masked_softmax: score_t = v_a^T tanh(W_q q + W_k h_t) with the dummy argument q = [1]
is exactly u^T tanh(W h_t + b), since W_q [1] is a learned bias b, W_k is W and v_a is the context vector u.

Deviations from the paper: small widths (the paper: 200-dim word2vec embeddings, GRUs of 50 per
direction) and randomly initialized embeddings; padding handled with packed sequences and masks
(words of padding sentences and padding words get weight exactly 0); the attention's W_k and v_a
start Xavier-uniform, not at AdditiveScore's v_a = 0 (which makes every weight uniform at first:
exercise 1 of the chapter on attention beyond translation compares the two starts for the captioner).
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib._checks.han import check_documents, check_han
from lib.attention import AdditiveScore, _masked_softmax

__all__ = ["ContextAttention", "HierarchicalAttentionNetwork", "HANOutput"]


class HANOutput(NamedTuple):
    """What ``HierarchicalAttentionNetwork.forward`` returns: logits [B, C], and the attention of the
    two levels, each None unless asked for (``return_attention=True``), else a tuple with the tensor
    of its one layer, shaped as the library's attentions [B, H, Tq, Tk] with one head (H = 1) and one
    query (Tq = 1, the learned context vector):

    word_attentions      (w [B, S, 1, 1, W],)  w[b, i, 0, 0]: the weights over the words of sentence i
                                               of document b (the batch of the word level is B x S)
    sentence_attentions  (w [B, 1, 1, S],)     w[b, 0, 0]: the weights over the sentences of document b

    Padding words and padding sentences get weight exactly 0."""

    logits: Tensor
    word_attentions: tuple[Tensor] | None
    sentence_attentions: tuple[Tensor] | None


class ContextAttention(nn.Module):
    """Attention pooling with a learned context vector (Yang et al. 2016, eqs. 5-7 and 10).

    forward(h [B, T, D], mask bool [B, T] (True at real positions)) -> (pooled [B, D], weights [B, T]).
    ``score`` is an AdditiveScore(1, D, Da) fed the dummy argument q = [1] (module docstring), so
    ``score.v_a.weight`` [1, Da] is the paper's context vector u and ``score.W_q.weight`` [Da, 1] its bias b.
    A row with no real position (a padding sentence) gets zero weights and a zero vector.
    """

    def __init__(self, d_in: int, d_attn: int):
        super().__init__()
        self.score = AdditiveScore(1, d_in, d_attn, check_inputs=False)  # the HAN checks
        for layer in (self.score.W_q, self.score.W_k, self.score.v_a):
            nn.init.xavier_uniform_(layer.weight)

    def forward(self, h: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        one = h.new_ones(h.shape[0], 1, 1)  # the dummy argument q = [1]: [B, 1, 1]
        scores = self.score(one, h)  # [B, 1, T]
        weights = _masked_softmax(scores, mask[:, None, :])  # [B, 1, T], 0 on padding
        return (weights @ h).squeeze(1), weights.squeeze(1)  # [B, D], [B, T]


class HierarchicalAttentionNetwork(nn.Module):
    """Yang et al. 2016's HAN. forward(input_ids [B, S, W] long, padded with pad_id, attention_mask
    [B, S, W] or None, return_attention=False) -> ``HANOutput(logits [B, C], word_attentions,
    sentence_attentions)``.

    The word weights of sentence i sum to 1 over its real words (all 0 for a padding sentence); the
    sentence weights sum to 1 over the document's real sentences; padding gets exactly 0. The mask
    is True (1) at the real words; without one, the real words are those that are not pad_id. A
    sentence is real if it has at least one real word; sentences and words are padded at the end.
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
        check_han(vocab_size, n_classes, d_emb, d_word, d_sentence, d_attn)
        self.vocab_size, self.pad_id = vocab_size, pad_id
        self.embedding = nn.Embedding(vocab_size, d_emb, padding_idx=pad_id)
        self.word_gru = nn.GRU(d_emb, d_word, batch_first=True, bidirectional=True)
        self.word_attention = ContextAttention(2 * d_word, d_attn)
        self.sentence_gru = nn.GRU(2 * d_word, d_sentence, batch_first=True, bidirectional=True)
        self.sentence_attention = ContextAttention(2 * d_sentence, d_attn)
        self.classifier = nn.Linear(2 * d_sentence, n_classes)

    @staticmethod
    def _bigru(gru: nn.GRU, x: Tensor, lengths: Tensor) -> Tensor:
        """Run a bidirectional GRU over x [N, T, Din] with lengths [N] (>= 1), padding ignored -> [N, T, 2H]."""
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = gru(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor | None = None,
        return_attention: bool = False,
    ) -> HANOutput:
        check_documents(input_ids, attention_mask, self.vocab_size, self.pad_id)
        B, S, W = input_ids.shape
        word_mask = self.word_mask(input_ids, attention_mask)  # [B, S, W]
        sentence_mask = word_mask.any(-1)  # [B, S]
        # word level: every real sentence of every document at once
        real = input_ids[sentence_mask]  # [N, W], N real sentences
        real_mask = word_mask[sentence_mask]  # [N, W]
        h_words = self._bigru(self.word_gru, self.embedding(real), real_mask.sum(-1))  # [N, W, 2Hw]
        s_real, w_real = self.word_attention(h_words, real_mask)  # [N, 2Hw], [N, W]
        sentences = s_real.new_zeros(B, S, s_real.shape[-1])  # [B, S, 2Hw]
        sentences[sentence_mask] = s_real
        word_weights = w_real.new_zeros(B, S, W)  # [B, S, W]
        word_weights[sentence_mask] = w_real
        # sentence level
        lengths = sentence_mask.sum(-1)  # [B]
        h_sentences = self._bigru(self.sentence_gru, sentences, lengths)  # [B, S, 2Hs]
        # [B, 2Hs], [B, S]
        document, sentence_weights = self.sentence_attention(h_sentences, sentence_mask)
        logits = self.classifier(document)  # [B, C]
        if not return_attention:
            return HANOutput(logits, None, None)
        # [B, S, 1, 1, W], [B, 1, 1, S]: one layer, one head, one query
        return HANOutput(
            logits, (word_weights[:, :, None, None],), (sentence_weights[:, None, None],)
        )

    def word_mask(self, input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
        """The real words [B, S, W] (bool): the attention mask, or the words that are not pad_id."""
        return input_ids != self.pad_id if attention_mask is None else attention_mask.bool()
