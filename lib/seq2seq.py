"""Recurrent sequence-to-sequence models: the encoder-decoder without attention (the fixed-vector
bottleneck), with the attention of Bahdanau et al. 2015 and of Luong et al. 2015 (global and local),
trained by maximum likelihood with teacher forcing, decoded greedily or by beam search.
Hard attention (Xu et al. 2015) lives in lib/hard_attention.py and plugs into the same interface.

Shape legend (used in every docstring and shape comment below):

    B    batch                      K    hypotheses alive in the beam (<= beam_width)
    S    source length              T    target length (decoder input = number of logits rows)
    L    length of a decoded output
    E    embedding width (d_emb)    H    decoder hidden width (d_hidden)
    He   encoder state width (d_enc = d_hidden of the encoder, times 2 if bidirectional)
    A    hidden width of the additive score / of Luong's position network (d_attn)
    V    vocabulary size (source or target)

Mask convention (as everywhere in this library): boolean, True where the decoder may attend; here
the source padding mask src_mask [B, S], True at the real tokens, built from src_lengths.

Every decoder has the same step interface, so that teacher forcing (``Seq2Seq.forward``) and
decoding (``step_function``, run by ``lib.decoding``'s greedy and beam search) are written once:

    state = decoder.init_state(summary [B, He])      a dict of tensors, each with the batch as dim 0
    logits [B, V], state, weights [B, S] or None = decoder.step(y_prev [B], state, enc_states, src_mask)

``weights`` are the attention weights the decoder used to choose this step's word (None without
attention). ``step`` checks its arguments, then runs ``_step``, the decoder's computation; Seq2Seq
and ``step_function``, which check their input once at the door, call ``_step`` at every step. Beam search reorders hypotheses by indexing every tensor of the state along dim 0.
``greedy_decode`` and ``beam_search`` return a ``lib.decoding.Decoded`` (tokens, log_prob,
attentions).
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib import decoding
from lib._checks.seq2seq import (
    check_batch,
    check_decode_args,
    check_decoder_step,
    check_encoder,
    check_luong,
    check_one_sentence,
    check_parts,
    check_source,
    check_summary,
    check_target,
    check_target_input,
)
from lib._validate import check_int, check_sizes
from lib.attention import (
    AdditiveScore,
    GeneralScore,
    _attend,
    _dot_product_score,
    _masked_softmax,
    padding_mask,
)
from lib.decoding import Decoded, Step

__all__ = [
    "Encoder",
    "PlainDecoder",
    "BahdanauDecoder",
    "LuongDecoder",
    "Seq2Seq",
    "EncoderOutput",
    "Seq2SeqOutput",
    "TeacherForcedSteps",
    "cross_attentions",
    "greedy_decode",
    "beam_search",
    "step_function",
    "sequence_log_prob",
]


def _init_bahdanau(module: nn.Module) -> None:
    """Bahdanau et al. 2015, appendix B.1: recurrent matrices random orthogonal (one block per gate),
    biases zero, every other matrix N(0, 0.01^2). The additive score (submodule ``score``) keeps its
    own initialization, also from B.1 (W_a, U_a ~ N(0, 0.001^2), v_a = 0)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.startswith("score."):
                continue
            if "weight_hh" in name:  # [gates * H, H]: one [H, H] per gate
                for block in p.split(p.shape[1], dim=0):
                    nn.init.orthogonal_(block)
            elif "bias" in name:
                nn.init.zeros_(p)
            else:
                nn.init.normal_(p, std=0.01)


# --- the encoder ---------------------------------------------------------------------------------


class Encoder(nn.Module):
    """A (bidirectional) recurrent encoder: embedding -> GRU or LSTM over the source.

    forward(src [B, S], src_lengths [B]) -> (states [B, S, He], summary [B, He]).
    ``states[:, j]`` is the annotation h_j = [forward h_j; backward h_j] of Bahdanau et al. 2015
    (sec. 3.2): the forward RNN read x_1 ... x_j, the backward one x_S ... x_j. ``summary`` is the
    fixed-size vector c of Cho et al. 2014 and Sutskever et al. 2014: the final forward state
    (after the last real word) and the final backward state (after the first word), concatenated.
    Sequences are packed (pack_padded_sequence), so padding never enters the RNN: the states and
    summary of a sentence do not depend on how much padding it has; states at padded positions are 0.
    Submodules ``embedding`` (nn.Embedding), ``rnn`` (nn.GRU or nn.LSTM, batch_first).
    With cell="lstm" the summary holds the final hidden states h (the cell states c are dropped).
    ``pad_id`` is the id that marks padding (Seq2Seq's loss skips it in the targets); which source
    positions are padding is told by src_lengths, whatever ids sit there.
    Initialization: Bahdanau et al. 2015, appendix B.1 (orthogonal recurrent matrices, N(0, 0.01^2)).
    Deviations: one layer, as Bahdanau et al. (Sutskever et al. use 4 unidirectional LSTM layers and
    reverse the source sentence, which a bidirectional encoder does not need).
    """

    def __init__(
        self,
        vocab_size: int,
        d_emb: int,
        d_hidden: int,
        cell: str = "gru",
        bidirectional: bool = True,
        pad_id: int = 0,
    ):
        super().__init__()
        check_encoder(vocab_size, d_emb, d_hidden, cell, pad_id)
        self.vocab_size, self.pad_id, self.cell = vocab_size, pad_id, cell
        self.d_enc = d_hidden * (2 if bidirectional else 1)
        self.embedding = nn.Embedding(vocab_size, d_emb)
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(d_emb, d_hidden, batch_first=True, bidirectional=bidirectional)
        _init_bahdanau(self)

    def forward(self, src: Tensor, src_lengths) -> tuple[Tensor, Tensor]:
        check_source(src, src_lengths, self.vocab_size)
        # a list or a tensor [B]
        src_lengths = torch.as_tensor(src_lengths, device=src.device).long()
        x = self.embedding(src)  # [B, S, E]
        packed = pack_padded_sequence(x, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        if self.cell == "lstm":
            final = final[0]  # (h_n, c_n) -> h_n
        S = src.shape[1]
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # [B, S, He]
        summary = torch.cat(list(final), dim=-1)  # [directions, B, He/dirs] -> [B, He]
        return states, summary


# --- the decoders --------------------------------------------------------------------------------


class _Decoder(nn.Module):
    """What every decoder shares: the target embedding ``embedding``, the initial state
    s_0 = tanh(W_s summary) (``bridge`` is W_s, Bahdanau et al. 2015, appendix A.2.2; Cho et al. 2014,
    appendix A.1.2), input checks for ``step`` and the maximum-likelihood ``loss``."""

    def __init__(self, vocab_size: int, d_emb: int, d_hidden: int, d_enc: int):
        super().__init__()
        check_sizes(vocab_size=vocab_size, d_emb=d_emb, d_hidden=d_hidden, d_enc=d_enc)
        self.vocab_size, self.d_emb, self.d_hidden, self.d_enc = vocab_size, d_emb, d_hidden, d_enc
        self.embedding = nn.Embedding(vocab_size, d_emb)
        self.bridge = nn.Linear(d_enc, d_hidden)

    def init_state(self, summary: Tensor) -> dict:
        check_summary(summary, self.d_enc)
        return {"h": torch.tanh(self.bridge(summary))}  # s_0 [B, H]

    def step(self, y_prev: Tensor, state: dict, enc_states: Tensor, src_mask: Tensor):
        """One decoder step (the interface of the module docstring): checks its arguments, then runs
        ``_step``, each decoder's computation, which Seq2Seq and the decoding loop call directly."""
        check_decoder_step(y_prev, state, enc_states, src_mask, self.vocab_size, self.d_enc)
        return self._step(y_prev, state, enc_states, src_mask)

    def loss(self, logits: Tensor, tgt_out: Tensor, states: list, pad_id: int) -> Tensor:
        """Maximum likelihood: the cross-entropy -log p(y_t | y_<t, x) averaged over the non-pad target
        tokens. logits [B, T, V], tgt_out [B, T]; ``states`` (one per step) is unused here, but the
        hard-attention decoder needs it."""
        return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id)


class PlainDecoder(_Decoder):
    """The encoder-decoder without attention of Cho et al. 2014 (sec. 2.2): the summary c is the only
    view of the source, the fixed-size bottleneck.

    s_0 = tanh(W_s c);  s_t = GRU(s_{t-1}, [E y_{t-1}; c]);  logits_t = W_o [s_t; E y_{t-1}; c].
    step returns weights None; the state is {"h": s_t [B, H], "context": c [B, He]}.
    Sutskever et al. 2014 give c to the decoder only through s_0; Cho et al. also feed it at every
    step, as the Bahdanau decoder below feeds its context c_t, so the two differ only in c vs c_t.
    Deviations: Cho et al.'s output layer is a maxout network, here one linear layer (``out``).
    Initialization: Bahdanau et al. 2015, appendix B.1 (the paper that compares the two models).
    """

    def __init__(self, vocab_size: int, d_emb: int, d_hidden: int, d_enc: int):
        super().__init__(vocab_size, d_emb, d_hidden, d_enc)
        self.cell = nn.GRUCell(d_emb + d_enc, d_hidden)
        self.out = nn.Linear(d_hidden + d_emb + d_enc, vocab_size)
        _init_bahdanau(self)

    def init_state(self, summary: Tensor) -> dict:
        return {**super().init_state(summary), "context": summary}

    def _step(self, y_prev: Tensor, state: dict, enc_states: Tensor, src_mask: Tensor):
        c = state["context"]  # [B, He], the same at every step
        y = self.embedding(y_prev)  # [B, E]
        h = self.cell(torch.cat([y, c], dim=-1), state["h"])  # [B, H]
        logits = self.out(torch.cat([h, y, c], dim=-1))  # [B, V]
        return logits, {"h": h, "context": c}, None


class BahdanauDecoder(_Decoder):
    """The attention decoder of Bahdanau et al. 2015 (sec. 3.1, appendix A.2.2):

    e_tj = v_a^T tanh(W_a s_{t-1} + U_a h_j)        (eq. 6; lib.attention.AdditiveScore, ``score``)
    alpha_tj = softmax_j(e_tj) over the real source words,   c_t = sum_j alpha_tj h_j   (eqs. 5-6)
    s_t = GRU(s_{t-1}, [E y_{t-1}; c_t]),   logits_t = W_o [s_t; E y_{t-1}; c_t]     (eq. 4)
    where h_j are the encoder's concatenated bidirectional states. step returns weights alpha_t [B, S];
    the state is {"h": s_t [B, H]}.
    Deviations: the output layer is one linear layer (``out``) instead of the paper's maxout network,
    and it reads s_t (eq. 4) where appendix A.2.2 reads s_{t-1}; s_0 = tanh(W_s [forward h_S;
    backward h_1]) where the paper uses the backward state alone.
    Initialization: appendix B.1 (orthogonal recurrent matrices, W_a, U_a ~ N(0, 0.001^2), v_a = 0 so
    the first attention is uniform, all else N(0, 0.01^2)).
    """

    def __init__(self, vocab_size: int, d_emb: int, d_hidden: int, d_enc: int, d_attn: int):
        super().__init__(vocab_size, d_emb, d_hidden, d_enc)
        check_int(d_attn, "d_attn", 1)
        self.score = AdditiveScore(d_hidden, d_enc, d_attn, check_inputs=False)
        self.cell = nn.GRUCell(d_emb + d_enc, d_hidden)
        self.out = nn.Linear(d_hidden + d_emb + d_enc, vocab_size)
        _init_bahdanau(self)

    def _step(self, y_prev: Tensor, state: dict, enc_states: Tensor, src_mask: Tensor):
        scores = self.score(state["h"][:, None], enc_states)  # query s_{t-1}: [B, 1, S]
        context, weights = _attend(scores, enc_states, src_mask[:, None])  # [B, 1, He], [B, 1, S]
        c = context[:, 0]  # [B, He]
        y = self.embedding(y_prev)  # [B, E]
        h = self.cell(torch.cat([y, c], dim=-1), state["h"])  # [B, H]
        logits = self.out(torch.cat([h, y, c], dim=-1))  # [B, V]
        return logits, {"h": h}, weights[:, 0]


class LuongDecoder(_Decoder):
    """The attention decoder of Luong et al. 2015 (sec. 3): the new state h_t asks the question.

    h_t = GRU(h_{t-1}, [E y_{t-1}; h~_{t-1}])   (input feeding, sec. 3.3; without it the input is E y_{t-1})
    score(h_t, h_s): "dot" h_t^T h_s, "general" h_t^T W_a h_s, "concat" v_a^T tanh(W_a [h_t; h_s]) (eq. 8;
        lib.attention's dot_product_score, GeneralScore, AdditiveScore as ``score``)
    global (window=None, sec. 3.1): a_t = softmax over the real source words of the scores (eq. 7)
    local-p (window=D, sec. 3.2): p_t = S * sigmoid(v_p^T tanh(W_p h_t)) with S the sentence's own
        length (eq. 10), so p_t is in [0, S]; a_t(s) = align_t(s) * exp(-(s - p_t)^2 / (2 sigma^2)),
        sigma = D / 2 (eq. 11), where align_t is the softmax of the scores over the real positions s
        (0-based) inside the window [p_t - D, p_t + D]; outside it a_t(s) = 0. As in the paper these
        weights do not sum to 1 (the Gaussian factor shrinks them).
    c_t = sum_s a_t(s) h_s,  h~_t = tanh(W_c [c_t; h_t]) (eq. 5),  logits_t = W_s h~_t (eq. 6, ``out``).
    step returns weights a_t [B, S]; the state is {"h": h_t, "h_tilde": h~_t} and, for local
    attention, "position": p_t [B] (for plotting the predicted position).
    Deviations: one GRU layer instead of the paper's 4-layer LSTM; s_0 = tanh(W_s summary) from a
    bidirectional encoder (the paper: the last state of a unidirectional one); an output bias;
    the "location" score and local-m (p_t = t) are left out; the window is not differentiable in p_t
    (as in the paper), p_t learns through the Gaussian factor only.
    Initialization: every parameter uniform in [-0.1, 0.1] (sec. 4.1).
    """

    def __init__(
        self,
        vocab_size: int,
        d_emb: int,
        d_hidden: int,
        d_enc: int,
        score: str = "general",
        window: int | None = None,
        input_feeding: bool = True,
        d_attn: int | None = None,
    ):
        super().__init__(vocab_size, d_emb, d_hidden, d_enc)
        d_attn = d_hidden if d_attn is None else d_attn
        check_luong(score, window, d_attn, d_hidden, d_enc)
        if score == "dot":
            self.score = None  # dot_product_score has no parameters
        elif score == "general":
            self.score = GeneralScore(d_hidden, d_enc, check_inputs=False)
        else:  # "concat"
            self.score = AdditiveScore(d_hidden, d_enc, d_attn, check_inputs=False)
        if window is not None:
            self.W_p = nn.Linear(d_hidden, d_attn, bias=False)
            self.v_p = nn.Linear(d_attn, 1, bias=False)
        self.score_name, self.window, self.input_feeding = score, window, input_feeding
        self.cell = nn.GRUCell(d_emb + (d_hidden if input_feeding else 0), d_hidden)
        self.W_c = nn.Linear(d_enc + d_hidden, d_hidden, bias=False)
        self.out = nn.Linear(d_hidden, vocab_size)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)

    def init_state(self, summary: Tensor) -> dict:
        state = super().init_state(summary)
        return {**state, "h_tilde": torch.zeros_like(state["h"])}  # h~_0 = 0 [B, H]

    def scores(self, h: Tensor, enc_states: Tensor) -> Tensor:
        """score(h_t, h_s) for every source position: h [B, H], enc_states [B, S, He] -> [B, S]."""
        q = h[:, None]  # [B, 1, H]
        s = _dot_product_score(q, enc_states) if self.score is None else self.score(q, enc_states)
        return s[:, 0]  # [B, 1, S] -> [B, S]

    def local_weights(self, h: Tensor, scores: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        """Local-p attention (eqs. 10-11): h [B, H], scores [B, S], src_mask [B, S] -> (p_t [B], a_t [B, S])."""
        lengths = src_mask.sum(-1).to(h.dtype)  # [B] each sentence's own S
        p = lengths * torch.sigmoid(self.v_p(torch.tanh(self.W_p(h))))[:, 0]  # [B] in [0, S]
        positions = torch.arange(src_mask.shape[1], device=h.device, dtype=h.dtype)  # [S]
        distance = positions[None] - p[:, None]  # [B, S] s - p_t
        in_window = src_mask & (distance.abs() <= self.window)  # [B, S]
        align = _masked_softmax(scores, in_window)  # [B, S], 0 outside the window
        sigma = self.window / 2
        return p, align * torch.exp(-(distance**2) / (2 * sigma**2))  # [B], [B, S]

    def _step(self, y_prev: Tensor, state: dict, enc_states: Tensor, src_mask: Tensor):
        y = self.embedding(y_prev)  # [B, E]
        x = torch.cat([y, state["h_tilde"]], dim=-1) if self.input_feeding else y  # [B, E (+ H)]
        h = self.cell(x, state["h"])  # [B, H]
        scores = self.scores(h, enc_states)  # [B, S]
        new_state = {"h": h}
        if self.window is None:
            weights = _masked_softmax(scores, src_mask)  # [B, S]
        else:
            new_state["position"], weights = self.local_weights(h, scores, src_mask)  # [B], [B, S]
        c = (weights[:, None] @ enc_states)[:, 0]  # [B, 1, S] @ [B, S, He] -> [B, He]
        h_tilde = torch.tanh(self.W_c(torch.cat([c, h], dim=-1)))  # [B, H]
        new_state["h_tilde"] = h_tilde
        return self.out(h_tilde), new_state, weights  # [B, V], state, [B, S]


# --- the whole model -----------------------------------------------------------------------------


class EncoderOutput(NamedTuple):
    """What ``Seq2Seq.encode`` returns: the encoder's states [B, S, He], its summary [B, He] and the
    source padding mask src_mask [B, S] (bool, True at the real words)."""

    states: Tensor
    summary: Tensor
    src_mask: Tensor


class Seq2SeqOutput(NamedTuple):
    """What ``Seq2Seq.forward`` returns: logits [B, T, V]; cross_attentions, None unless asked for
    (``return_attention=True``), else one tensor [B, 1, T, S] in a tuple: the weights the decoder
    used over the source at every target step, as one layer with one head (the names and shapes of
    Hugging Face's encoder-decoders); None for a decoder without attention."""

    logits: Tensor
    cross_attentions: tuple[Tensor] | None


class TeacherForcedSteps(NamedTuple):
    """What ``Seq2Seq.forward_with_states`` returns: ``Seq2SeqOutput``'s fields (cross_attentions
    always, None only without attention) and states, the list of the T decoder states (dicts)."""

    logits: Tensor
    cross_attentions: tuple[Tensor] | None
    states: list


def cross_attentions(weights: Tensor | None) -> tuple[Tensor] | None:
    """The weights [B, T, S] of every target step as the one-layer, one-head tuple ([B, 1, T, S],)."""
    return None if weights is None else (weights[:, None],)


class Seq2Seq(nn.Module):
    """An encoder and a decoder (any of the above, or lib.hard_attention.HardAttentionDecoder).

    forward(src [B, S], src_lengths [B], tgt_in [B, T], return_attention=False) ->
    ``Seq2SeqOutput(logits [B, T, V], cross_attentions)`` with teacher forcing: at step t the
    decoder reads the true previous word tgt_in[:, t] (BOS y_1 ... y_{T-1}), never its own guess.
    cross_attentions is None unless return_attention=True, then ``(weights [B, 1, T, S],)``, row t
    the attention the decoder used to choose word t (None for a decoder without attention).
    ``forward_with_states`` also returns the list of the T decoder states (dicts; e.g. local
    attention's p_t is ``torch.stack([s["position"] for s in states], 1)`` [B, T]). loss(batch) -> the mean
    cross-entropy over the non-pad tokens of batch.tgt_out: the negative log-likelihood of the
    targets per token, so minimizing it is maximum likelihood (Sutskever et al. 2014, sec. 2;
    Bahdanau et al. 2015, sec. 2.1). ``batch`` is any object with src, src_lengths, tgt_in and
    tgt_out (e.g. lib.data.Batch). The decoder computes it (``decoder.loss``), because hard
    attention adds a REINFORCE term. The pad id is the encoder's (``encoder.pad_id``).
    """

    def __init__(self, encoder: Encoder, decoder: _Decoder):
        super().__init__()
        check_parts(encoder, decoder, Encoder, _Decoder)
        self.encoder, self.decoder, self.pad_id = encoder, decoder, encoder.pad_id

    def encode(self, src: Tensor, src_lengths) -> EncoderOutput:
        """src [B, S], src_lengths [B] -> ``EncoderOutput(states [B, S, He], summary [B, He], src_mask
        bool [B, S])``."""
        enc_states, summary = self.encoder(src, src_lengths)  # checks src and src_lengths
        lengths = torch.as_tensor(src_lengths, device=src.device)
        src_mask = padding_mask(lengths, src.shape[1])[:, 0, 0]  # [B, 1, 1, S] -> [B, S]
        return EncoderOutput(enc_states, summary, src_mask)

    def forward(
        self, src: Tensor, src_lengths, tgt_in: Tensor, return_attention: bool = False
    ) -> Seq2SeqOutput:
        logits, attentions, _ = self.forward_with_states(src, src_lengths, tgt_in)
        return Seq2SeqOutput(logits, attentions if return_attention else None)

    def forward_with_states(self, src: Tensor, src_lengths, tgt_in: Tensor) -> TeacherForcedSteps:
        """``forward``, and the list of the T decoder states (dicts): ``TeacherForcedSteps(logits
        [B, T, V], cross_attentions ([B, 1, T, S],) or None, states)``."""
        check_target_input(tgt_in, src, self.decoder.vocab_size)
        enc_states, summary, src_mask = self.encode(src, src_lengths)
        state = self.decoder.init_state(summary)
        logits, weights, states = [], [], []
        for t in range(tgt_in.shape[1]):
            step_logits, state, w = self.decoder._step(tgt_in[:, t], state, enc_states, src_mask)
            logits.append(step_logits)
            weights.append(w)
            states.append(state)
        logits = torch.stack(logits, dim=1)  # [B, T, V]
        weights = None if weights[0] is None else torch.stack(weights, dim=1)  # [B, T, S]
        return TeacherForcedSteps(logits, cross_attentions(weights), states)

    def loss(self, batch) -> Tensor:
        check_batch(batch)
        check_target(batch.tgt_in, batch.tgt_out, self.decoder.vocab_size, self.pad_id)
        logits, _, states = self.forward_with_states(batch.src, batch.src_lengths, batch.tgt_in)
        return self.decoder.loss(logits, batch.tgt_out, states, self.pad_id)


def sequence_log_prob(
    model: Seq2Seq, src: Tensor, src_lengths, tgt_in: Tensor, tgt_out: Tensor
) -> Tensor:
    """log p(y | x) = sum_t log p(y_t | y_<t, x) over the non-pad tokens of tgt_out -> [B].

    One teacher-forced pass; differentiable (wrap it in torch.no_grad() to score). The mean over the
    tokens of minus this is ``Seq2Seq.loss``'s cross-entropy.
    """
    check_target(tgt_in, tgt_out, model.decoder.vocab_size, model.pad_id)
    logits = model(src, src_lengths, tgt_in).logits  # [B, T, V]
    picked = logits.log_softmax(-1).gather(-1, tgt_out[..., None])[..., 0]  # [B, T]
    return picked.masked_fill(tgt_out == model.pad_id, 0.0).sum(dim=1)  # [B]


# --- decoding ------------------------------------------------------------------------------------


def step_function(model: Seq2Seq, src: Tensor, src_lengths) -> Step:
    """The model's decoding step for the sentences src [B, S] (``lib.decoding``'s interface): the
    source is encoded once; each call runs the decoder one step on the last token of every row and
    returns (logits [K, V], attention weights [K, S] or None). The decoder state follows beam
    search's reordering (``parents``)."""
    enc_states, summary, src_mask = model.encode(src, src_lengths)  # [B, S, He], [B, He], [B, S]
    state = model.decoder.init_state(summary)

    def step(tokens: Tensor, parents: Tensor | None):
        nonlocal state
        if parents is not None:  # beam search: each hypothesis continues its parent's state
            state = {key: value[parents] for key, value in state.items()}
        K = tokens.shape[0]  # B, or the hypotheses of one sentence
        logits, state, weights = model.decoder._step(
            tokens[:, -1], state, enc_states.expand(K, -1, -1), src_mask.expand(K, -1)
        )
        return logits, weights  # [K, V], [K, S] or None

    return step


def _start(src: Tensor, bos_id: int) -> Tensor:
    return torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # [B, 1]


@torch.no_grad()
def greedy_decode(
    model: Seq2Seq, src: Tensor, src_lengths, max_len: int, bos_id: int, eos_id: int
) -> Decoded:
    """Greedy decoding: from BOS, feed back the most probable word until EOS or ``max_len`` tokens.

    src [B, S], src_lengths [B] -> ``lib.decoding.Decoded``: tokens [B, L] (L <= max_len, the
    words without BOS, ending with EOS where one was produced, then ``model.pad_id``), log_prob
    [B], attentions [B, L, S] or None (row t is the attention the decoder used when it chose
    tokens[:, t]; rows after EOS are 0). Put the model in eval mode first (hard attention samples
    in training mode).
    """
    check_decode_args(model, max_len, bos_id, eos_id, Seq2Seq)
    step = step_function(model, src, src_lengths)
    return decoding.greedy(step, _start(src, bos_id), max_len, eos_id, model.pad_id)


@torch.no_grad()
def beam_search(
    model: Seq2Seq,
    src: Tensor,
    src_lengths,
    max_len: int,
    bos_id: int,
    eos_id: int,
    beam_width: int = 4,
    length_penalty: float = 0.0,
) -> Decoded:
    """Beam search for one sentence (``lib.decoding.beam_search`` with this model's step): keep the
    ``beam_width`` most probable prefixes at every step.

    src [1, S], src_lengths [1] -> ``Decoded``: tokens [1, L] (the best hypothesis without BOS, L
    <= max_len), log_prob [1] (its log p(y | x) = sum_t log p(y_t | y_<t, x)), attentions [1, L, S]
    or None. A hypothesis that ends with EOS, or reaches max_len tokens (EOS counts as one), is finished; the best
    finished one by log p(y | x) / ``lib.decoding.gnmt_penalty(L, length_penalty)`` wins
    (length_penalty = 0: by log-probability alone, no length normalization). beam_width=1 is
    greedy decoding. Put the model in eval mode first.
    """
    check_decode_args(model, max_len, bos_id, eos_id, Seq2Seq)
    check_one_sentence(src)
    step = step_function(model, src, src_lengths)
    return decoding.beam_search(
        step, _start(src, bos_id), max_len, beam_width, eos_id, length_penalty
    )
