"""The input checks of lib.electra, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._checks.pretraining_data import check_special_ids
from lib._validate import check_number, check_probability, check_type, is_int


def check_electra_config(c, bert_config_type: type) -> None:
    """The fields of a ``lib.electra.ElectraConfig``."""
    check_type(c.discriminator, "discriminator", bert_config_type)
    g, depth = c.generator_layers, c.discriminator.num_hidden_layers
    if not is_int(g) or not 1 <= g <= depth:
        raise ValueError(
            f"generator_layers: expected an int in 1..{depth} (the discriminator's depth), got {g!r}"
        )
    check_probability(c.mask_prob, "mask_prob")
    check_number(c.disc_weight, "disc_weight", "a number >= 0", lambda w: w >= 0)


def check_electra_inputs(input_ids, vocab_size: int, mask_token_id, special_ids) -> None:
    """The batch of ELECTRA's corruption: ids [B, T] of the vocabulary, and the masking ids."""
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
    check_special_ids(special_ids, mask_token_id, vocab_size)
