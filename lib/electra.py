"""ELECTRA: replaced-token detection (Clark et al. 2020, "ELECTRA: Pre-training Text Encoders as
Discriminators Rather Than Generators", ICLR).

A small **generator**, a masked language model, fills the masked positions of a sentence by *sampling*
from its predictions; a **discriminator** reads the corrupted sentence and says, for *every* token,
whether it is the original or a replacement (sec. 2, Figure 2). BERT learns from the ~15% of tokens it
masks; the discriminator gets a training signal from all of them, which is the paper's argument for its
sample efficiency. The loss (sec. 2, the equation after eq. 2) is

    L = L_MLM(generator) + lambda * L_Disc(discriminator),   lambda = 50,

with L_Disc the binary cross-entropy of "replaced or not" averaged over the real (non-padding) tokens.
After pretraining the generator is dropped and the discriminator is fine-tuned like BERT.

Shapes: B batch, T tokens, D width, V vocabulary.

Deviations from the paper, on purpose:
- The generator is a *shallower* ``lib.bert.Bert`` of the same width (``generator_layers``), not a
  narrower one, so that it can share the discriminator's whole embedding module (token, position and
  segment embeddings and their LayerNorm) without a projection. The paper shares the token and position
  embeddings (sec. 3.2) and finds generators 1/4 to 1/2 of the discriminator's size work best.
- Which tokens are corrupted follows ``lib.bert.mask_tokens``' rule (each non-special token with
  probability ``mask_prob``, independently), and every chosen token becomes [MASK] in the generator's
  input, with none of BERT's 10% random / 10% unchanged (the paper masks them all, sec. 2).
- A sampled token that happens to equal the original counts as *original* (label 0), as in the paper.
- Nothing of the discriminator's loss reaches the generator: the sampled ids are integers, drawn without
  gradient (sec. 2: the discriminator loss is not back-propagated through the generator).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._random import rand
from lib.bert import IGNORE_INDEX, Bert, BertConfig, BertLMPredictionHead, init_weights

__all__ = [
    "ElectraConfig",
    "Corruption",
    "ElectraOutput",
    "ElectraGenerator",
    "ElectraDiscriminator",
    "Electra",
    "corrupt",
]


@dataclass(frozen=True)
class ElectraConfig:
    """discriminator: the BertConfig of the model that is kept; generator_layers: the depth of the
    generator (same width, shared embeddings); mask_prob: the share of tokens corrupted; disc_weight:
    lambda, the weight of the discriminator's loss (50 in the paper)."""

    discriminator: BertConfig
    generator_layers: int = 1
    mask_prob: float = 0.15
    disc_weight: float = 50.0

    def __post_init__(self):
        if not isinstance(self.discriminator, BertConfig):
            raise TypeError(
                f"discriminator: expected a BertConfig, got {type(self.discriminator).__name__}"
            )
        g = self.generator_layers
        if (
            isinstance(g, bool)
            or not isinstance(g, int)
            or not 1 <= g <= self.discriminator.num_hidden_layers
        ):
            raise ValueError(
                f"generator_layers: expected an int in 1..{self.discriminator.num_hidden_layers} (the discriminator's depth), got {g!r}"
            )
        p = self.mask_prob
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p <= 1.0:
            raise ValueError(f"mask_prob: expected a probability in (0, 1], got {p!r}")
        w = self.disc_weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ValueError(f"disc_weight: expected a number >= 0, got {w!r}")

    @property
    def generator(self) -> BertConfig:
        return replace(self.discriminator, num_hidden_layers=self.generator_layers)


class Corruption(NamedTuple):
    """What one corruption step made, every tensor [B, T]:
    masked: the generator's input ([MASK] at the chosen positions); mlm_labels: the original id at the
    chosen positions, IGNORE_INDEX elsewhere; corrupted: the discriminator's input (the generator's samples
    at the chosen positions, the original elsewhere); replaced: bool, True where corrupted != original
    (the discriminator's labels)."""

    masked: Tensor
    mlm_labels: Tensor
    corrupted: Tensor
    replaced: Tensor


class ElectraOutput(NamedTuple):
    loss: Tensor  # mlm_loss + disc_weight * disc_loss
    mlm_loss: Tensor  # the generator's cross-entropy at the masked positions
    disc_loss: Tensor  # the discriminator's binary cross-entropy over the real tokens
    disc_logits: Tensor  # [B, T], > 0 means "replaced"
    corruption: Corruption


class ElectraGenerator(nn.Module):
    """A masked LM: ``bert`` (sharing ``embeddings`` with the discriminator) and a tied MLM head.
    forward(input_ids [B, T], token_type_ids, attention_mask) -> logits [B, T, V]."""

    def __init__(self, config: BertConfig, embeddings: nn.Module):
        super().__init__()
        self.bert = Bert(config)
        self.bert.embeddings = embeddings  # shared (sec. 3.2): one module, two users
        self.predictions = BertLMPredictionHead(config, embeddings.word_embeddings)
        init_weights(self.predictions.transform, config.initializer_range)

    def forward(self, input_ids: Tensor, token_type_ids=None, attention_mask=None) -> Tensor:
        x = self.bert(input_ids, token_type_ids, attention_mask).sequence_output  # [B, T, D]
        return self.predictions(x)  # [B, T, V]


class ElectraDiscriminator(nn.Module):
    """The encoder that is kept: ``bert`` and a per-token head dense -> GELU -> dense_prediction (D -> 1),
    as in the published checkpoints. forward(...) -> logits [B, T] (> 0: "replaced")."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.bert = Bert(config)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dense_prediction = nn.Linear(config.hidden_size, 1)
        init_weights(self.dense, config.initializer_range)
        init_weights(self.dense_prediction, config.initializer_range)

    def forward(self, input_ids: Tensor, token_type_ids=None, attention_mask=None) -> Tensor:
        x = self.bert(input_ids, token_type_ids, attention_mask).sequence_output  # [B, T, D]
        return self.dense_prediction(F.gelu(self.dense(x))).squeeze(-1)  # [B, T]


def _check_specials(special_ids, mask_token_id, vocab_size, device=None) -> Tensor:
    ids = sorted(set(special_ids)) if not isinstance(special_ids, (str, bytes, int)) else None
    if ids is None or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < vocab_size for i in ids
    ):
        raise ValueError(
            f"special_ids: expected a collection of ids in [0, {vocab_size}), got {special_ids!r}"
        )
    if (
        isinstance(mask_token_id, bool)
        or not isinstance(mask_token_id, int)
        or not 0 <= mask_token_id < vocab_size
    ):
        raise ValueError(
            f"mask_token_id: expected an id in [0, {vocab_size}), got {mask_token_id!r}"
        )
    is_special = torch.zeros(vocab_size, dtype=torch.bool, device=device)
    is_special[ids] = True
    return is_special


def _choose(
    input_ids: Tensor,
    vocab_size: int,
    mask_token_id: int,
    special_ids,
    mask_prob: float,
    generator: torch.Generator | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """(chosen bool [B, T], masked input [B, T], MLM labels [B, T]) after checking the arguments."""
    if (
        not isinstance(input_ids, Tensor)
        or input_ids.dtype not in (torch.int64, torch.int32)
        or input_ids.dim() != 2
    ):
        raise ValueError(
            f"input_ids: expected a [B, T] tensor of token ids, got {getattr(input_ids, 'dtype', type(input_ids).__name__)} {tuple(getattr(input_ids, 'shape', ()))}"
        )
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(
            f"input_ids: expected ids in [0, {vocab_size}), got ids from {input_ids.min().item()} to {input_ids.max().item()}"
        )
    is_special = _check_specials(special_ids, mask_token_id, vocab_size, input_ids.device)
    draws = rand(input_ids.shape, input_ids.device, generator)  # [B, T]
    chosen = (draws < mask_prob) & ~is_special[input_ids]  # [B, T]
    masked = input_ids.masked_fill(chosen, mask_token_id)  # [B, T]
    mlm_labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    return chosen, masked, mlm_labels


def _sample(
    gen_logits: Tensor, chosen: Tensor, input_ids: Tensor, generator
) -> tuple[Tensor, Tensor]:
    """The discriminator's input and labels: the generator's samples at the chosen positions. No gradient."""
    with torch.no_grad():
        probs = gen_logits.detach()[chosen].float().softmax(-1)  # [N, V], N chosen tokens
        samples = (
            torch.multinomial(probs, 1, generator=generator).squeeze(1)
            if len(probs)
            else input_ids.new_empty(0)
        )  # [N]
        corrupted = input_ids.clone()
        corrupted[chosen] = samples
    return corrupted, corrupted != input_ids  # [B, T], [B, T]


@torch.no_grad()
def corrupt(
    generator_model: ElectraGenerator,
    input_ids: Tensor,
    *,
    mask_token_id: int,
    special_ids,
    mask_prob: float = 0.15,
    token_type_ids=None,
    attention_mask=None,
    generator: torch.Generator | None = None,
) -> Corruption:
    """Mask, let the generator sample, and label (sec. 2): the whole corruption step, without gradient.

    input_ids [B, T]; special_ids: ids never chosen ([CLS], [SEP], [PAD]... include the padding id);
    generator: a torch.Generator for the choice of positions and for the samples.
    """
    V = generator_model.bert.config.vocab_size
    chosen, masked, mlm_labels = _choose(
        input_ids, V, mask_token_id, special_ids, mask_prob, generator
    )
    logits = generator_model(masked, token_type_ids, attention_mask)  # [B, T, V]
    corrupted, replaced = _sample(logits, chosen, input_ids, generator)
    return Corruption(masked, mlm_labels, corrupted, replaced)


class Electra(nn.Module):
    """Generator and discriminator, trained together; keep ``discriminator`` afterwards.

    forward(input_ids [B, T], mask_token_id, special_ids, token_type_ids=None, attention_mask=None
    (1 at real tokens), generator=None) -> ElectraOutput. The corruption is drawn afresh at every call.
    """

    def __init__(self, config: ElectraConfig):
        super().__init__()
        if not isinstance(config, ElectraConfig):
            raise TypeError(f"config: expected an ElectraConfig, got {type(config).__name__}")
        self.config = config
        self.discriminator = ElectraDiscriminator(config.discriminator)
        self.generator = ElectraGenerator(config.generator, self.discriminator.bert.embeddings)

    def forward(
        self,
        input_ids: Tensor,
        mask_token_id: int,
        special_ids,
        token_type_ids=None,
        attention_mask=None,
        generator: torch.Generator | None = None,
    ) -> ElectraOutput:
        V = self.config.discriminator.vocab_size
        chosen, masked, mlm_labels = _choose(
            input_ids, V, mask_token_id, special_ids, self.config.mask_prob, generator
        )
        # [B, T, V], with gradient
        gen_logits = self.generator(masked, token_type_ids, attention_mask)
        corrupted, replaced = _sample(gen_logits, chosen, input_ids, generator)  # without
        c = Corruption(masked, mlm_labels, corrupted, replaced)
        if (c.mlm_labels != IGNORE_INDEX).any():
            mlm_loss = F.cross_entropy(
                gen_logits.flatten(0, 1), c.mlm_labels.flatten(), ignore_index=IGNORE_INDEX
            )
        else:  # nothing masked
            mlm_loss = gen_logits.sum() * 0.0
        disc_logits = self.discriminator(c.corrupted, token_type_ids, attention_mask)  # [B, T]
        real = (
            torch.ones_like(input_ids, dtype=torch.bool)
            if attention_mask is None
            else attention_mask.to(torch.bool)
        )  # [B, T]
        disc_loss = F.binary_cross_entropy_with_logits(disc_logits[real], c.replaced[real].float())
        return ElectraOutput(
            mlm_loss + self.config.disc_weight * disc_loss, mlm_loss, disc_loss, disc_logits, c
        )
