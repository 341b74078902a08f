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
- Which tokens are corrupted follows ``lib.pretraining_data.mask_tokens``' rule (each non-special token with
  probability ``mask_prob``, independently), and every chosen token becomes [MASK] in the generator's
  input, with none of BERT's 10% random / 10% unchanged (the paper masks them all, sec. 2).
- A sampled token that happens to equal the original counts as *original* (label 0), as in the paper.
- Nothing of the discriminator's loss reaches the generator's layers or head: the sampled ids are
  integers, drawn without gradient (sec. 2: the discriminator loss is not back-propagated through the
  generator). It does reach the embedding module that the two share.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.electra import check_electra_config, check_electra_inputs
from lib._random import rand
from lib._validate import check_type
from lib.bert import IGNORE_INDEX, BertConfig, BertOutput, init_weights
from lib.bert_heads import BertLMPredictionHead, _BertWithHead
from lib.pretraining_data import special_mask

__all__ = [
    "ElectraConfig",
    "Corruption",
    "ElectraOutput",
    "ElectraGeneratorOutput",
    "ElectraDiscriminatorOutput",
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
        check_electra_config(self, BertConfig)

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


class ElectraGeneratorOutput(NamedTuple):
    """What ``ElectraGenerator.forward`` returns: logits [B, T, V] of the masked LM, attentions and
    hidden_states of its encoder (as in ``lib.bert.BertOutput``) or None."""

    logits: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


class ElectraDiscriminatorOutput(NamedTuple):
    """What ``ElectraDiscriminator.forward`` returns: logits [B, T] (> 0: "replaced"), attentions
    and hidden_states of its encoder (as in ``lib.bert.BertOutput``) or None."""

    logits: Tensor
    attentions: tuple[Tensor, ...] | None = None
    hidden_states: tuple[Tensor, ...] | None = None


class ElectraGenerator(_BertWithHead):
    """A masked LM: ``bert`` (sharing ``embeddings`` with the discriminator) and a tied MLM head.
    forward(input_ids [B, T], token_type_ids, attention_mask, return_attention=False,
    return_hidden_states=False) -> ``ElectraGeneratorOutput(logits [B, T, V], ...)``."""

    def __init__(self, config: BertConfig, embeddings: nn.Module):
        super().__init__(config)
        self.bert.embeddings = embeddings  # shared (sec. 3.2): one module, two users
        self.predictions = BertLMPredictionHead(config, embeddings.word_embeddings)
        init_weights(self.predictions.transform, config.initializer_range)

    def head(self, out: BertOutput) -> ElectraGeneratorOutput:
        logits = self.predictions(out.sequence_output)  # [B, T, D] -> [B, T, V]
        return ElectraGeneratorOutput(logits, out.attentions, out.hidden_states)


class ElectraDiscriminator(_BertWithHead):
    """The encoder that is kept: ``bert`` and a per-token head dense -> GELU -> dense_prediction (D -> 1),
    as in the published checkpoints. forward(...) -> ``ElectraDiscriminatorOutput(logits [B, T] (> 0:
    "replaced"), attentions, hidden_states)``."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dense_prediction = nn.Linear(config.hidden_size, 1)
        init_weights(self.dense, config.initializer_range)
        init_weights(self.dense_prediction, config.initializer_range)

    def head(self, out: BertOutput) -> ElectraDiscriminatorOutput:
        x = out.sequence_output  # [B, T, D]
        logits = self.dense_prediction(F.gelu(self.dense(x))).squeeze(-1)  # [B, T]
        return ElectraDiscriminatorOutput(logits, out.attentions, out.hidden_states)


def _choose(
    input_ids: Tensor,
    vocab_size: int,
    mask_token_id: int,
    special_ids,
    mask_prob: float,
    generator: torch.Generator | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """(chosen bool [B, T], masked input [B, T], MLM labels [B, T]): the positions to corrupt."""
    is_special = special_mask(special_ids, vocab_size, input_ids.device)  # [V]
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
    check_electra_inputs(input_ids, V, mask_token_id, special_ids)
    chosen, masked, mlm_labels = _choose(
        input_ids, V, mask_token_id, special_ids, mask_prob, generator
    )
    logits = generator_model(masked, token_type_ids, attention_mask).logits  # [B, T, V]
    corrupted, replaced = _sample(logits, chosen, input_ids, generator)
    return Corruption(masked, mlm_labels, corrupted, replaced)


class Electra(nn.Module):
    """Generator and discriminator, trained together; keep ``discriminator`` afterwards.

    forward(input_ids [B, T], mask_token_id, special_ids, token_type_ids=None, attention_mask=None
    (1 at real tokens), generator=None) -> ElectraOutput. The corruption is drawn afresh at every call.
    """

    def __init__(self, config: ElectraConfig):
        super().__init__()
        check_type(config, "config", ElectraConfig)
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
        check_electra_inputs(input_ids, V, mask_token_id, special_ids)
        chosen, masked, mlm_labels = _choose(
            input_ids, V, mask_token_id, special_ids, self.config.mask_prob, generator
        )
        # [B, T, V], with gradient
        gen_logits = self.generator(masked, token_type_ids, attention_mask).logits
        corrupted, replaced = _sample(gen_logits, chosen, input_ids, generator)  # without
        c = Corruption(masked, mlm_labels, corrupted, replaced)
        if (c.mlm_labels != IGNORE_INDEX).any():
            mlm_loss = F.cross_entropy(
                gen_logits.flatten(0, 1), c.mlm_labels.flatten(), ignore_index=IGNORE_INDEX
            )
        else:  # nothing masked
            mlm_loss = gen_logits.sum() * 0.0
        disc_logits = self.discriminator(c.corrupted, token_type_ids, attention_mask).logits
        real = (
            torch.ones_like(input_ids, dtype=torch.bool)
            if attention_mask is None
            else attention_mask.to(torch.bool)
        )  # [B, T]
        disc_loss = F.binary_cross_entropy_with_logits(disc_logits[real], c.replaced[real].float())
        return ElectraOutput(
            mlm_loss + self.config.disc_weight * disc_loss, mlm_loss, disc_loss, disc_logits, c
        )
