"""ELMo: the bidirectional language model (biLM) of Peters et al. 2018, "Deep contextualized word
representations", and the learned layer mix (``ScalarMix``) that turns its layers into contextual
word vectors.

Shape legend (used in every docstring and shape comment below):

    B    batch (sentences)            T    tokens per sentence, <bos> and <eos> included
    V    vocabulary size (words)      E    word-embedding width (``word_dim``; 0 = none)
    C    characters per word          Dc   character-embedding width (``char_dim``)
    F    character-CNN features, the sum of the filter counts (``char_filters``)
    H    width of every layer of one direction (``hidden_dim``): the token representation and
         each LSTM layer's output (the LSTM's projection when ``cell_dim`` > H)
    M    LSTM memory-cell width (``cell_dim``)     L    LSTM layers per direction (``n_layers``)
    N    number of representations of a token: L + 1 (the token layer and L LSTM layers)

Mask convention (as everywhere in this library): boolean, True at real tokens. Here it is a
padding mask [B, T] whose True entries form a prefix of each row (right padding).

Pipeline (sec. 3.1 of the paper):

    ids [B, T] -> TokenEncoder -> x [B, T, H]                    h_{k,0}: context-independent
      forward:  L LSTM layers, left to right            -> h->_{k,j} [B, T, H]   (j = 1..L)
      backward: L LSTM layers, right to left (each sentence reversed within its length)
                                                        -> h<-_{k,j} [B, T, H]
      hidden_states[0] = [x; x], hidden_states[j] = [h->_{k,j}; h<-_{k,j}]   N = L + 1 tensors [B, T, 2H]
      softmax (shared): logits of the next word from h->_{k,L}, of the previous word from h<-_{k,L}

Objective (sec. 3.1 of the paper, which does not number it): jointly maximise the log likelihood of both
directions; ``BiLM.lm_loss`` minimises the summed negative log likelihood

    L = - sum_k [ log p(t_k | t_1..t_{k-1}; Θx, Θ->LSTM, Θs) + log p(t_k | t_{k+1}..t_N; Θx, Θ<-LSTM, Θs) ],

divided by the number of predicted tokens. As in the paper, the token representation (Θx) and the
softmax (Θs) are shared between the two directions; each direction has its own LSTMs.

ELMo (eq. 1 of the paper): ELMo_k = gamma * sum_j s_j h_{k,j} with s = softmax(w), ``ScalarMix``.

Deviations from the paper (a model that trains in seconds on a CPU, on a closed vocabulary):
- Token encoder: the paper uses characters only (a character CNN with 2048 filters, two highway
  layers, a projection to 512). Here a word embedding (E) is the default, and the character CNN is
  optional (``char_filters``); with both, their features are concatenated before the projection.
  Characters are looked up from a table of the vocabulary's words (``char_ids``), so the input is
  still word ids. Words are cut to C - 2 bytes.
- Softmax: a full softmax over the vocabulary (the paper, with 793,471 words, a sampled softmax).
- Residual connections: from each LSTM layer's input to its output for layers 2..L (the paper
  adds "a residual connection from the first to second layer"; the first layer has none, as in
  the authors' implementation).
- LSTM: PyTorch's ``nn.LSTM``; with ``cell_dim`` > ``hidden_dim`` it projects its M cells to H
  (the paper's LSTMP: 4096 cells, projection 512), without the cell and projection clipping of the
  authors' code.
- Dropout on the input of every LSTM layer and on the input of the softmax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.elmo import (
    check_bilm_input,
    check_elmo_config,
    check_id_sentences,
    check_layer_states,
    check_something_to_predict,
    check_vocabulary_words,
    check_words,
)
from lib._validate import check_int, check_type
from lib.rnnlm import reverse_padded  # one implementation, shared with the RNN language models

__all__ = [
    "ELMoConfig",
    "BiLM",
    "BiLMOutput",
    "TokenNLL",
    "TokenEncoder",
    "Highway",
    "ScalarMix",
    "char_ids",
    "char_ids_fast",
    "reverse_padded",
    "pad_sentences",
    "count_parameters",
    "CHAR_VOCAB_SIZE",
]

# Character ids: 0 pads a word to C characters, 1..256 are the bytes of its UTF-8 encoding (+ 1),
# 257 and 258 mark the beginning and the end of the word.
CHAR_PAD, BOW, EOW = 0, 257, 258
CHAR_VOCAB_SIZE = 259


@dataclass(frozen=True)
class ELMoConfig:
    """Hyper-parameters of the biLM; ``paper()`` is the model of Peters et al. 2018, sec. 3.4.

    vocab_size V; word_dim E (0: no word embedding, characters only, as in the paper); hidden_dim H,
    the width of the token representation and of each LSTM layer's output in each direction;
    cell_dim M, the LSTM memory cells (None: = H, a plain LSTM; > H: an LSTM with a projection to H);
    n_layers L; dropout; pad_id, the id of the padding token (its word embedding is 0).
    Character CNN (off when ``char_filters`` is empty): char_filters, (width, count) of each
    convolution; char_dim Dc; max_chars C per word, the markers included; n_highway highway layers.
    """

    vocab_size: int
    word_dim: int = 64
    hidden_dim: int = 128
    cell_dim: int | None = None
    n_layers: int = 2
    dropout: float = 0.1
    pad_id: int = 0
    char_filters: tuple[tuple[int, int], ...] = ()
    char_dim: int = 16
    max_chars: int = 16
    n_highway: int = 2

    def __post_init__(self):
        check_elmo_config(self)

    @property
    def cells(self) -> int:
        """M, the LSTM memory-cell width."""
        return self.hidden_dim if self.cell_dim is None else self.cell_dim

    @property
    def char_features(self) -> int:
        """F, the width of the character CNN's output (0 without it)."""
        return sum(count for _, count in self.char_filters)

    @classmethod
    def paper(cls, vocab_size: int = 793471, **overrides) -> "ELMoConfig":
        """The biLM of sec. 3.4 (the released "original" ELMo): characters only, filters of widths 1..7
        with 32, 32, 64, 128, 256, 512, 1024 maps (2048 features; Józefowicz et al. 2016's CNN-BIG-LSTM,
        halved), 16-dim character embeddings, 50 characters per word, two highway layers, a projection
        to 512; two LSTM layers of 4096 cells projected to 512. Vocabulary: the 793,471 words of the 1B
        Word Benchmark. Without the softmax: 93.67M parameters (``count_parameters``), the released model's
        "93.6M" plus, almost exactly, the second bias vector of every ``nn.LSTM`` gate (torch keeps b_ih
        and b_hh: 4 LSTMs x 4 gates x 4096 = 65,536 parameters)."""
        return cls(
            **{
                "vocab_size": vocab_size,
                "word_dim": 0,
                "hidden_dim": 512,
                "cell_dim": 4096,
                "n_layers": 2,
                "dropout": 0.1,
                "char_filters": (
                    (1, 32),
                    (2, 32),
                    (3, 64),
                    (4, 128),
                    (5, 256),
                    (6, 512),
                    (7, 1024),
                ),
                "char_dim": 16,
                "max_chars": 50,
                "n_highway": 2,
                **overrides,
            }
        )


def char_ids(words: Sequence[str], max_chars: int) -> Tensor:
    """The character ids of each word: [BOW, byte + 1, ..., EOW, CHAR_PAD, ...], cut or padded to
    max_chars (C). Returns [len(words), C] (long). Words longer than C - 2 bytes are cut."""
    check_words(words, max_chars)
    rows = []
    for word in words:
        row = [BOW] + [byte + 1 for byte in word.encode("utf-8")[: max_chars - 2]] + [EOW]
        rows.append(row + [CHAR_PAD] * (max_chars - len(row)))
    with torch.device("cpu"):  # a lookup table, on the CPU even inside `with torch.device("meta")`
        return torch.tensor(rows, dtype=torch.long).view(len(words), max_chars)


def char_ids_fast(words: Sequence[str], max_chars: int) -> Tensor:
    """``char_ids``, the same table, built with tensor operations instead of a loop over the words:
    3 s instead of 36 s for the paper's 793,471 words (``count_parameters(ELMoConfig.paper())``
    builds that table twice in chapter 12). tests/test_elmo.py compares the two."""
    check_words(words, max_chars)
    encoded = [w.encode("utf-8")[: max_chars - 2] for w in words]
    with torch.device("cpu"):
        return _char_ids_fast(encoded, max_chars)


def _char_ids_fast(encoded: list[bytes], max_chars: int) -> Tensor:
    V = len(encoded)
    lengths = torch.tensor([len(e) for e in encoded], dtype=torch.long)  # [V] bytes kept
    flat = torch.frombuffer(bytearray(b"".join(encoded)) or bytearray(1), dtype=torch.uint8)[
        : int(lengths.sum())
    ]
    row = torch.repeat_interleave(torch.arange(V), lengths)  # [sum of lengths]
    start = torch.repeat_interleave(torch.cumsum(lengths, 0) - lengths, lengths)
    out = torch.full((V, max_chars), CHAR_PAD, dtype=torch.long)  # [V, C]
    out[:, 0] = BOW
    out[row, 1 + torch.arange(len(row)) - start] = flat.long() + 1  # the bytes, shifted by 1
    out[torch.arange(V), lengths + 1] = EOW
    return out


def pad_sentences(sentences: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[Tensor, Tensor]:
    """Right-pad lists of token ids into (ids [B, T] long, mask [B, T] bool, True at real tokens)."""
    check_id_sentences(sentences)
    T = max(len(s) for s in sentences)
    flat = []
    for s in sentences:
        flat += list(s) + [pad_id] * (T - len(s))
    lengths = torch.tensor([len(s) for s in sentences])  # [B]
    ids = torch.tensor(flat, dtype=torch.long).view(len(sentences), T)  # [B, T]
    return ids, torch.arange(T) < lengths[:, None]  # [T] < [B, 1] -> mask [B, T]


# --- the token encoder: word embeddings and/or a character CNN with highway layers --------------


class Highway(nn.Module):
    """One highway layer (Srivastava et al. 2015), as in the paper's character encoder:
    t = sigmoid(W_T x + b_T), y = t * relu(W_H x + b_H) + (1 - t) * x.

    forward(x [..., D]) -> [..., D]. ``transform`` holds W_H and ``gate`` W_T. Initialization: the
    gate's bias b_T = -1, so that each layer starts close to passing its input through (Srivastava
    et al. recommend a negative bias); the rest PyTorch's default.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.transform = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        nn.init.constant_(self.gate.bias, -1.0)

    def forward(self, x: Tensor) -> Tensor:
        t = torch.sigmoid(self.gate(x))  # [..., D]
        return t * torch.relu(self.transform(x)) + (1 - t) * x


class TokenEncoder(nn.Module):
    """The context-independent token representation x_k = h_{k,0} (sec. 3.1, "token representation").

    forward(ids [B, T]) -> [B, T, H]: the word embedding [E] and/or the character features [F],
    concatenated, then ``projection`` to H. Character features of a word (Kim et al. 2016, as used
    by the paper): embed its C characters [C, Dc], one 1-D convolution per filter width, max over the
    positions, ReLU, concatenate [F], then ``n_highway`` highway layers. They are computed once per call
    for the whole vocabulary (the table ``chars`` [V, C] of ``char_ids(words)``) and then looked up.
    Initialization: word embeddings N(0, 1) (0 for ``pad_id``); the rest PyTorch's default.
    """

    def __init__(self, config: ELMoConfig, words: Sequence[str] | None = None):
        super().__init__()
        c = config
        self.word_embeddings = (
            nn.Embedding(c.vocab_size, c.word_dim, padding_idx=c.pad_id) if c.word_dim else None
        )
        if c.char_filters:
            check_vocabulary_words(words, c.vocab_size)
            self.register_buffer("chars", char_ids_fast(words, c.max_chars))  # [V, C], as char_ids
            self.char_embeddings = nn.Embedding(CHAR_VOCAB_SIZE, c.char_dim, padding_idx=CHAR_PAD)
            self.convs = nn.ModuleList(
                nn.Conv1d(c.char_dim, count, width) for width, count in c.char_filters
            )
            self.highways = nn.ModuleList(Highway(c.char_features) for _ in range(c.n_highway))
        else:
            self.chars = None
        self.projection = nn.Linear(c.word_dim + c.char_features, c.hidden_dim)

    def char_features(self) -> Tensor:
        """The character features of every word of the vocabulary: [V, F]."""
        e = self.char_embeddings(self.chars).transpose(1, 2)  # [V, Dc, C]
        # [V, F]: max over positions
        x = torch.cat([conv(e).amax(-1) for conv in self.convs], -1).relu()
        for highway in self.highways:
            x = highway(x)  # [V, F]
        return x

    def forward(self, ids: Tensor) -> Tensor:
        parts = []
        if self.word_embeddings is not None:
            parts.append(self.word_embeddings(ids))  # [B, T, E]
        if self.chars is not None:
            parts.append(F.embedding(ids, self.char_features()))  # [B, T, F]
        return self.projection(torch.cat(parts, -1))  # [B, T, H]


# --- the biLM ------------------------------------------------------------------------------------


class BiLMOutput(NamedTuple):
    """hidden_states: a tuple of N = L + 1 tensors [B, T, 2H] (always returned: they are what ELMo
    mixes), layer 0 the token representation twice ([x; x]), layer j the forward and backward LSTM
    states [h->_j; h<-_j], 0 at padding (``torch.stack`` gives [N, B, T, 2H]). forward_logits
    [B, T, V]: at position t, scores of token t + 1 from tokens 0..t. backward_logits [B, T, V]: at
    position t, scores of token t - 1 from tokens t..end. mask [B, T], True at real tokens."""

    hidden_states: tuple[Tensor, ...]
    forward_logits: Tensor
    backward_logits: Tensor
    mask: Tensor


class TokenNLL(NamedTuple):
    """Per-token negative log likelihoods, indexed by the predicted token: forward[b, t] =
    -log p(t_t | t_0..t_{t-1}) for 1 <= t < length, backward[b, t] = -log p(t_t | t_{t+1}..end) for
    0 <= t < length - 1, 0 elsewhere (both [B, T]); count = sum of (length - 1), the number of tokens
    each direction predicts."""

    forward: Tensor
    backward: Tensor
    count: int


class BiLM(nn.Module):
    """The bidirectional language model of Peters et al. 2018 (sec. 3.1); see the module docstring
    for the pipeline, the objective and the deviations from the paper.

    BiLM(config, words=None): ``words`` (the vocabulary's words in id order, e.g. ``vocab.itos``)
    only when the config has a character CNN. Submodules: ``token_encoder``, ``forward_layers`` and
    ``backward_layers`` (L one-layer ``nn.LSTM`` each, batch first), ``softmax`` (H -> V, shared by
    both directions), ``dropout``.

    forward(input_ids [B, T], attention_mask [B, T] or None) -> BiLMOutput (hidden_states, N tensors
    [B, T, 2H], forward and backward logits [B, T, V], mask). The mask defaults to ``ids != config.pad_id``; it
    must be True on a prefix of each row, with at least one token. Sentences should start with <bos>
    and end with <eos>, so that the forward LM predicts the first word and the backward LM the last
    one.

    Initialization (the paper does not give one): LSTMs PyTorch's default uniform(+-1/sqrt(M)) with
    the forget-gate bias set to 1 (Jozefowicz et al. 2015); softmax weights N(0, 1/H), bias 0.
    """

    def __init__(self, config: ELMoConfig, words: Sequence[str] | None = None):
        super().__init__()
        check_type(config, "config", ELMoConfig)
        self.config = c = config
        self.token_encoder = TokenEncoder(config, words)
        proj = c.hidden_dim if c.cells > c.hidden_dim else 0  # LSTMP: M cells -> H
        self.forward_layers = nn.ModuleList(
            nn.LSTM(c.hidden_dim, c.cells, proj_size=proj, batch_first=True)
            for _ in range(c.n_layers)
        )
        self.backward_layers = nn.ModuleList(
            nn.LSTM(c.hidden_dim, c.cells, proj_size=proj, batch_first=True)
            for _ in range(c.n_layers)
        )
        self.softmax = nn.Linear(c.hidden_dim, c.vocab_size)
        self.dropout = nn.Dropout(c.dropout)
        with torch.no_grad():
            for lstm in [*self.forward_layers, *self.backward_layers]:
                M = c.cells  # gates in torch's order i, f, g, o: forget = 1
                lstm.bias_ih_l0[M : 2 * M].fill_(1.0)
                lstm.bias_hh_l0[M : 2 * M].fill_(0.0)  # (the two biases are added)
            nn.init.normal_(self.softmax.weight, std=1 / math.sqrt(c.hidden_dim))
            nn.init.zeros_(self.softmax.bias)
            if self.token_encoder.word_embeddings is not None:
                nn.init.normal_(self.token_encoder.word_embeddings.weight)
                self.token_encoder.word_embeddings.weight[c.pad_id].zero_()

    def padding_mask(self, input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
        """The real tokens [B, T] (bool): the attention mask, or the tokens that are not pad_id."""
        if attention_mask is None:
            return input_ids != self.config.pad_id
        return attention_mask.bool()

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> BiLMOutput:
        check_bilm_input(input_ids, attention_mask, self.config.vocab_size, self.config.pad_id)
        attention_mask = self.padding_mask(input_ids, attention_mask)  # [B, T]
        lengths = attention_mask.sum(1)  # [B]
        keep = attention_mask[..., None].to(self.softmax.weight.dtype)  # [B, T, 1]
        x = self.token_encoder(input_ids) * keep  # [B, T, H]
        states = [torch.cat([x, x], -1)]  # layer 0: [B, T, 2H]
        fwd, bwd = x, reverse_padded(x, lengths)  # bwd in reversed order
        for j, (f_lstm, b_lstm) in enumerate(zip(self.forward_layers, self.backward_layers)):
            f_out, _ = f_lstm(self.dropout(fwd))  # [B, T, H]
            b_out, _ = b_lstm(self.dropout(bwd))  # [B, T, H]
            if j > 0:  # residual connection
                f_out, b_out = f_out + fwd, b_out + bwd
            fwd, bwd = f_out, b_out
            states.append(torch.cat([fwd, reverse_padded(bwd, lengths)], -1) * keep)  # [B, T, 2H]
        forward_logits = self.softmax(self.dropout(fwd))  # [B, T, V]
        backward_logits = self.softmax(self.dropout(reverse_padded(bwd, lengths)))  # [B, T, V]
        # N tensors [B, T, 2H]
        return BiLMOutput(tuple(states), forward_logits, backward_logits, attention_mask)

    def token_nll(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> TokenNLL:
        """-log p of every predicted token, by direction (see ``TokenNLL``)."""
        out = self(input_ids, attention_mask)
        attention_mask, B = out.mask, input_ids.shape[0]
        target = attention_mask[:, 1:]  # [B, T-1]: pairs (t, t+1) both real
        f = F.cross_entropy(
            out.forward_logits[:, :-1].transpose(1, 2), input_ids[:, 1:], reduction="none"
        )
        b = F.cross_entropy(
            out.backward_logits[:, 1:].transpose(1, 2), input_ids[:, :-1], reduction="none"
        )
        zero = f.new_zeros(B, 1)
        forward = torch.cat([zero, f * target], 1)  # [B, T], by predicted token
        backward = torch.cat([b * target, zero], 1)  # [B, T]
        return TokenNLL(forward, backward, int(target.sum()))

    def lm_loss(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        """The summed forward and backward negative log likelihood (the loss L above) per predicted
        token: (sum of forward NLL + sum of backward NLL) / count. A scalar; its exp is not a perplexity
        (each direction's perplexity is exp(its own mean NLL), see ``token_nll``)."""
        nll = self.token_nll(input_ids, attention_mask)
        check_something_to_predict(nll.count)
        return (nll.forward.sum() + nll.backward.sum()) / nll.count


def count_parameters(config: ELMoConfig, softmax: bool = True) -> int:
    """Number of parameters of ``BiLM(config)``, built on the meta device (no memory), with or without
    the softmax layer (the released ELMo weights leave it out)."""
    words = [""] * config.vocab_size if config.char_filters else None
    with torch.device("meta"):
        model = BiLM(config, words)
    total = sum(p.numel() for p in model.parameters())
    return total if softmax else total - sum(p.numel() for p in model.softmax.parameters())


# --- ELMo: the learned mix of the layers -----------------------------------------------------------


class ScalarMix(nn.Module):
    """ELMo_k = gamma * sum_j s_j h_{k,j}, with s = softmax(w) (Peters et al. 2018, eq. 1): a task-specific
    weighted average of the N layers, learned with the downstream task while the biLM stays frozen.

    ScalarMix(num_layers N, gamma=1.0): parameters ``scalar_parameters`` w [N] (initialized to 0, so every
    layer starts with weight 1/N) and ``gamma`` (a scalar). ``weights`` is s = softmax(w) [N].
    forward(states [N, ..., D] or a sequence of N tensors [..., D]) -> [..., D].
    Deviation: no optional layer normalization of each layer before mixing (the paper uses it in some
    tasks).
    """

    def __init__(self, num_layers: int, gamma: float = 1.0):
        super().__init__()
        check_int(num_layers, "num_layers", 1)
        self.num_layers = num_layers
        self.scalar_parameters = nn.Parameter(torch.zeros(num_layers))
        self.gamma = nn.Parameter(torch.tensor(float(gamma)))

    @property
    def weights(self) -> Tensor:
        """s = softmax(w): [N], non-negative, summing to 1."""
        return torch.softmax(self.scalar_parameters, 0)

    def forward(self, states: Tensor | Sequence[Tensor]) -> Tensor:
        check_layer_states(states, self.num_layers)
        if isinstance(states, (list, tuple)):
            states = torch.stack(list(states))  # [N, ..., D]
        s = self.weights.to(states.dtype).view(-1, *([1] * (states.dim() - 1)))  # [N, 1, ..., 1]
        return self.gamma.to(states.dtype) * (s * states).sum(0)  # [..., D]
