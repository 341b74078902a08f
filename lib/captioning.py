"""Image captioning with soft attention over image regions ("Show, Attend and Tell", Xu et al. 2015).

Shape legend:

    B  batch                 C  image channels (3)         H, W  image height and width in pixels
    R  number of regions = h * w, the cells of the encoder's output grid (h = H / 16, w = W / 16)
    D  width of a region feature (the paper's annotation vector a_i: D = 512 there, for 14 x 14 = 196
       regions of 16 x 16 pixels each; ours are 16 x 16 pixels too)
    E  word-embedding width  Hd  LSTM state width  Da  hidden width of the attention's small network
    T  caption length (teacher forcing)      L  generated length      V  vocabulary size

Pipeline: image -> ConvEncoder -> region features a [B, R, D] -> at every step t the decoder scores each
region against its previous state h_{t-1} (lib.attention.AdditiveScore, eq. 4), turns the scores into
weights alpha_t [B, R] (masked_softmax, eq. 5), reads the context z_t = sum_i alpha_ti a_i (soft
attention, eq. 13), feeds [E y_{t-1}; z_t] to an LSTM, and predicts the next word from the deep
output layer (eq. 7). ``greedy_decode`` returns the weights of every generated word: one map [R]
over the image per word, which is what the paper's figures draw.

Deviations from the paper, for tiny synthetic images and a training run of seconds:
- The encoder is a small CNN trained from scratch with the decoder, not a pretrained VGG's conv5_4.
- Learned row and column embeddings are added to the region features. The paper's deep CNN knows
  roughly where each region is; our three-layer CNN hardly does, and a caption in reading order needs it.
- The gate beta_t (sec. 4.2.1) is off by default (``gate=True`` turns it on): here it slows learning.
- The attention's parameters start from Xavier-uniform values instead of AdditiveScore's Bahdanau
  initialization (v_a = 0, i.e. uniform attention at first); the chapter's exercise 1 compares
  the two.
- No hard attention as the paper trains it (one region sampled from alpha_t, REINFORCE, sec. 4.1):
  the model is trained soft only. ``attention="hard"`` is an argmax reading of that soft model at
  inference: the region of largest weight replaces the weighted sum; nothing is sampled.
- No dropout, no ensemble; the doubly stochastic penalty (eq. 14) is optional (``penalty``).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib import decoding
from lib._checks.captioning import (
    check_caption_decoding,
    check_caption_ids,
    check_caption_target,
    check_even,
    check_images,
)
from lib._validate import check_choice
from lib.attention import AdditiveScore, _masked_softmax
from lib.decoding import Decoded, Step

__all__ = [
    "ConvEncoder",
    "AttentionDecoder",
    "Captioner",
    "CaptionerOutput",
    "greedy_decode",
    "step_function",
]


class ConvEncoder(nn.Module):
    """Image [B, C, H, W] -> region features a [B, R, D], R = (H/16) * (W/16), row by row.

    The encoder sees 1 - image ("ink on paper": the white background is 0). ``conv1`` cuts it into
    4 x 4-pixel patches (kernel 4, stride 4: C -> D/2 channels); ``conv2`` and ``conv3`` (3 x 3, stride 2:
    -> D) mix neighbouring patches; ReLU after each. Every region is a 16 x 16-pixel cell of the image
    and sees a 28 x 28-pixel window that is not centred on it: with stride 2 and padding 1 on even
    sizes (12 -> 6 -> 3 for a 48-pixel image), the window runs from 12 pixels above and to the left of
    the cell to the cell's own bottom-right corner. So only the cells of the top row and of the left
    column see the convolutions' zero padding: on a blank image (and without the embeddings below)
    the regions fall into 4 groups of equal vectors, the corner (0, 0), the rest of the top row, the
    rest of the left column, and all the other cells.
    Then learned row and column embeddings are added (``row_embedding``, ``col_embedding``, up to
    ``max_grid`` cells each; a deviation from the paper, see the module docstring). Initialization:
    torch's default for the convolutions (Kaiming uniform), N(0, 0.1^2) for the embeddings.
    """

    def __init__(self, d_feature: int = 64, in_channels: int = 3, max_grid: int = 16):
        super().__init__()
        check_even(d_feature, "d_feature")
        self.d_feature, self.in_channels, self.max_grid = d_feature, in_channels, max_grid
        self.conv1 = nn.Conv2d(in_channels, d_feature // 2, 4, stride=4)
        self.conv2 = nn.Conv2d(d_feature // 2, d_feature, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(d_feature, d_feature, 3, stride=2, padding=1)
        self.row_embedding = nn.Embedding(max_grid, d_feature)
        self.col_embedding = nn.Embedding(max_grid, d_feature)
        nn.init.normal_(self.row_embedding.weight, std=0.1)
        nn.init.normal_(self.col_embedding.weight, std=0.1)

    @staticmethod
    def grid_size(height: int, width: int) -> tuple[int, int]:
        """(h, w) of the region grid for an image of height x width pixels; R = h * w."""
        return height // 16, width // 16

    def forward(self, images: Tensor) -> Tensor:
        check_images(images, self.in_channels, self.max_grid)
        h, w = self.grid_size(images.shape[2], images.shape[3])
        x = F.relu(self.conv1(1.0 - images))  # ink on paper: white is 0  [B, D/2, H/4, W/4]
        x = F.relu(self.conv2(x))  # [B, D, H/8, W/8]
        x = F.relu(self.conv3(x))  # [B, D, h, w] = [B, D, H/16, W/16]
        position = (
            self.row_embedding.weight[:h, None, :]  # [h, 1, D]
            + self.col_embedding.weight[None, :w, :]
        )  # [1, w, D] -> [h, w, D]
        return x.flatten(2).transpose(1, 2) + position.reshape(h * w, -1)  # [B, R, D]


class AttentionDecoder(nn.Module):
    """The LSTM decoder with soft attention of Xu et al. 2015, sec. 3.1.2 and 4.2.

    ``init_state(features [B, R, D]) -> (h, c)``: h_0 = tanh(init_h(mean_i a_i)), c_0 likewise (sec. 3.1.2).
    ``step(y_prev [B], state, features [B, R, D], attention="soft") -> (logits [B, V], state, alpha [B, R])``:
        e_ti = v_a^T tanh(W_q h_{t-1} + W_k a_i)      (eq. 4, f_att: lib.attention.AdditiveScore)
        alpha_t = softmax(e_t)                         (eq. 5, masked_softmax; every region may be attended)
        z_t = sum_i alpha_ti a_i                       (eq. 13; with ``gate=True`` multiplied by
                                                        beta_t = sigmoid(f_beta(h_{t-1})), sec. 4.2.1)
        h_t, c_t = LSTM([E y_{t-1}; z_t], (h_{t-1}, c_{t-1}))   (eqs. 1-3)
        logits = L_o(E y_{t-1} + L_h h_t + L_z z_t)    (eq. 7, the deep output layer)
      With attention="hard", alpha_t is replaced by the one-hot vector of its largest entry (the
      deterministic limit of the paper's sampled hard attention); the returned alpha is that one-hot.
    Initialization: torch's defaults for the LSTM and linear layers; Xavier uniform for the attention's
    W_q, W_k and v_a (not AdditiveScore's v_a = 0, see the module docstring).
    """

    def __init__(
        self,
        vocab_size: int,
        d_feature: int,
        d_emb: int = 32,
        d_hidden: int = 64,
        d_attn: int = 32,
        gate: bool = False,
        pad_id: int = 0,
    ):
        super().__init__()
        self.vocab_size, self.d_feature, self.gate = vocab_size, d_feature, gate
        self.embedding = nn.Embedding(vocab_size, d_emb, padding_idx=pad_id)
        self.init_h = nn.Linear(d_feature, d_hidden)
        self.init_c = nn.Linear(d_feature, d_hidden)
        self.attention = AdditiveScore(d_hidden, d_feature, d_attn)
        self.f_beta = nn.Linear(d_hidden, 1) if gate else None
        self.lstm = nn.LSTMCell(d_emb + d_feature, d_hidden)
        self.L_h = nn.Linear(d_hidden, d_emb)
        self.L_z = nn.Linear(d_feature, d_emb, bias=False)
        self.L_o = nn.Linear(d_emb, vocab_size)
        for layer in (self.attention.W_q, self.attention.W_k, self.attention.v_a):
            nn.init.xavier_uniform_(layer.weight)

    def init_state(self, features: Tensor) -> tuple[Tensor, Tensor]:
        mean = features.mean(dim=1)  # [B, D]
        return torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean))  # [B, Hd] each

    def attend(
        self, h: Tensor, features: Tensor, keys: Tensor | None = None, attention: str = "soft"
    ) -> tuple[Tensor, Tensor]:
        """(z [B, D], alpha [B, R]) for the state h [B, Hd]: eqs. 4, 5, 13 and the gate.

        ``keys`` = ``self.attention.W_k(features)`` [B, R, Da] may be passed in, computed once per
        image instead of once per word (the trick of Bahdanau et al. 2015, appendix A.1.2); the scores
        are then exactly ``self.attention(h[:, None], features)``.
        """
        if keys is None:
            keys = self.attention.W_k(features)  # [B, R, Da]
        query = self.attention.W_q(h)[:, None, :]  # [B, 1, Da]
        scores = self.attention.v_a(torch.tanh(query + keys)).squeeze(-1)  # [B, R]
        alpha = _masked_softmax(scores)  # [B, R]
        if attention == "hard":
            alpha = F.one_hot(alpha.argmax(-1), alpha.shape[-1]).to(alpha.dtype)  # [B, R]
        z = (alpha[:, None, :] @ features).squeeze(1)  # [B, 1, R] @ [B, R, D] -> [B, D]
        if self.gate:
            z = torch.sigmoid(self.f_beta(h)) * z  # [B, 1] * [B, D]
        return z, alpha

    def output(self, e: Tensor, h: Tensor, z: Tensor) -> Tensor:
        """Deep output layer (eq. 7): logits = L_o(E y_{t-1} + L_h h_t + L_z z_t), any leading dims."""
        return self.L_o(e + self.L_h(h) + self.L_z(z))  # [..., V]

    def step(
        self,
        y_prev: Tensor,
        state: tuple[Tensor, Tensor],
        features: Tensor,
        attention: str = "soft",
        keys: Tensor | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor], Tensor]:
        h, c = state  # [B, Hd] each
        z, alpha = self.attend(h, features, keys, attention)  # [B, D], [B, R]
        e = self.embedding(y_prev)  # [B, E]
        h, c = self.lstm(torch.cat([e, z], dim=-1), (h, c))  # [B, Hd] each
        return self.output(e, h, z), (h, c), alpha  # [B, V]


class CaptionerOutput(NamedTuple):
    """What ``Captioner.forward`` returns: logits [B, T, V]; cross_attentions, None unless asked for
    (``return_attention=True``), else one tensor [B, 1, T, R] in a tuple: alpha, the attention over
    the R image regions at every step, as one layer with one head (the vocabulary of lib.seq2seq's
    cross_attentions, with the regions as the source)."""

    logits: Tensor
    cross_attentions: tuple[Tensor] | None


class Captioner(nn.Module):
    """Encoder + attention decoder. ``forward(images [B, C, H, W], tgt_in [B, T], attention="soft",
    return_attention=False)`` -> ``CaptionerOutput(logits [B, T, V], cross_attentions ([B, 1, T, R],)
    or None)`` with teacher forcing: the decoder reads the true previous word at every step.

    ``loss(images, tgt_in, tgt_out, penalty=0.0)``: Xu et al. 2015, eq. 14: the negative log-likelihood
    of the caption (cross-entropy, here averaged over the non-pad target words) plus, if ``penalty``
    (their lambda) > 0, the doubly stochastic regularizer penalty * sum_i (1 - sum_t alpha_ti)^2
    (averaged over the images), which pushes the caption, over all its words, to look at every
    region about once (sec. 4.2.1).
    """

    def __init__(
        self,
        vocab_size: int,
        d_feature: int = 64,
        d_emb: int = 32,
        d_hidden: int = 64,
        d_attn: int = 32,
        gate: bool = False,
        pad_id: int = 0,
        in_channels: int = 3,
    ):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = ConvEncoder(d_feature, in_channels)
        self.decoder = AttentionDecoder(
            vocab_size, d_feature, d_emb, d_hidden, d_attn, gate, pad_id
        )

    def forward(
        self,
        images: Tensor,
        tgt_in: Tensor,
        attention: str = "soft",
        return_attention: bool = False,
    ) -> CaptionerOutput:
        logits, alpha = self.teacher_forced(images, tgt_in, attention)  # [B, T, V], [B, T, R]
        return CaptionerOutput(logits, (alpha[:, None],) if return_attention else None)

    def teacher_forced(
        self, images: Tensor, tgt_in: Tensor, attention: str = "soft"
    ) -> tuple[Tensor, Tensor]:
        """(logits [B, T, V], alpha [B, T, R]): the decoder run over the caption tgt_in."""
        features = self.encoder(images)  # [B, R, D]
        check_caption_ids(tgt_in, "tgt_in", self.decoder.vocab_size, images.shape[0])
        check_choice(attention, "attention", ("soft", "hard"))
        dec = self.decoder
        keys = dec.attention.W_k(features)  # [B, R, Da], once per image
        e = dec.embedding(tgt_in)  # [B, T, E], all steps at once
        h, c = dec.init_state(features)  # [B, Hd] each
        hs, zs, alphas = [], [], []
        for t in range(tgt_in.shape[1]):  # the same computation as dec.step
            z, alpha = dec.attend(h, features, keys, attention)
            h, c = dec.lstm(torch.cat([e[:, t], z], dim=-1), (h, c))
            hs.append(h)
            zs.append(z)
            alphas.append(alpha)
        # [B, T, V], all steps at once
        logits = dec.output(e, torch.stack(hs, 1), torch.stack(zs, 1))
        return logits, torch.stack(alphas, 1)  # [B, T, V], [B, T, R]

    def loss(self, images: Tensor, tgt_in: Tensor, tgt_out: Tensor, penalty: float = 0.0) -> Tensor:
        check_caption_target(tgt_in, tgt_out, self.decoder.vocab_size, images.shape[0])
        logits, alpha = self.teacher_forced(images, tgt_in)  # [B, T, V], [B, T, R]
        nll = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=self.pad_id)
        if penalty == 0.0:
            return nll
        real = (tgt_out != self.pad_id).to(alpha.dtype)[:, :, None]  # [B, T, 1]
        coverage = (alpha * real).sum(1)  # [B, R]: total weight per region
        return nll + penalty * ((1.0 - coverage) ** 2).sum(-1).mean()


def step_function(model: Captioner, images: Tensor, attention: str = "soft") -> Step:
    """The captioner's decoding step for images [B, C, H, W] (``lib.decoding``'s interface): the
    images are encoded once; each call runs the decoder one step on the last word of every row and
    returns (logits [K, V], alpha [K, R]). The LSTM state follows beam search's reordering."""
    check_choice(attention, "attention", ("soft", "hard"))
    features = model.encoder(images)  # [B, R, D]
    keys = model.decoder.attention.W_k(features)  # [B, R, Da], computed once
    state = model.decoder.init_state(features)

    def step(tokens: Tensor, parents: Tensor | None):
        nonlocal state, features, keys
        if parents is not None:
            state = tuple(s[parents] for s in state)
            features, keys = features[parents], keys[parents]
        logits, state, alpha = model.decoder.step(tokens[:, -1], state, features, attention, keys)
        return logits, alpha  # [K, V], [K, R]

    return step


@torch.no_grad()
def greedy_decode(
    model: Captioner,
    images: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    attention: str = "soft",
) -> Decoded:
    """Greedy captions: at each step the most probable word, fed back as the next input.

    images [B, C, H, W] -> ``lib.decoding.Decoded``: tokens [B, L], L <= max_len; log_prob [B];
    attentions [B, L, R], where attentions[b, t] is the map over the regions that produced word t
    (reshape to ``model.encoder.grid_size(H, W)`` to draw it). A caption stops at its <eos> (which
    is included; later positions hold ``model.pad_id`` and zero weights); decoding stops when every
    caption has ended. ``attention="hard"`` reads only the region of largest weight at every step
    (see AttentionDecoder). The model is put in eval mode for the call.
    """
    check_caption_decoding(max_len, bos_id, eos_id, model.decoder.vocab_size)
    was_training = model.training
    model.eval()
    try:
        step = step_function(model, images, attention)  # checks the images
        start = torch.full((images.shape[0], 1), bos_id, dtype=torch.long, device=images.device)
        return decoding.greedy(step, start, max_len, eos_id, model.pad_id)
    finally:
        model.train(was_training)
