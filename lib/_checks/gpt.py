"""The input checks of lib.gpt, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import (
    check_id,
    check_ids,
    check_int,
    check_number,
    check_padding_mask,
    check_probability,
    check_type,
)


def check_gpt_config(config) -> None:
    """The fields of a lib.gpt.GPTConfig (its ``__post_init__``): sizes >= 1, n_embd divisible by
    n_head, dropout in [0, 1), layer_norm_epsilon > 0."""
    for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
        check_int(getattr(config, name), name, 1)
    if config.n_embd % config.n_head:
        raise ValueError(f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}")
    check_probability(config.dropout, "dropout", "[0, 1)")
    check_number(config.layer_norm_epsilon, "layer_norm_epsilon", "a number > 0", lambda v: v > 0)


def check_gpt_inputs(config, input_ids, targets=None, kv_cache=None) -> None:
    """GPT.forward's arguments: input_ids [B, T] ids in [0, vocab_size) with P cached + T new tokens
    <= block_size; targets (optional) ids of the same shape, -100 allowed (ignored); kv_cache
    (optional) a cache of the same batch."""
    if kv_cache is not None and not (hasattr(kv_cache, "update") and hasattr(kv_cache, "reorder")):
        raise TypeError(
            f"kv_cache: expected a lib.gpt.KVCache (or lib.gpt_fast.FastKVCache), got {type(kv_cache).__name__}"
        )
    limit = f"block_size={config.block_size}, the model's context length"
    check_lm_input(input_ids, config.vocab_size, config.block_size, limit, targets, kv_cache)


def check_lm_input(input_ids, V: int, context: int, limit: str, targets, kv_cache) -> None:
    """A language model's input_ids [B, T], ids in [0, V), with the P positions of ``kv_cache`` and T
    <= ``context`` (``limit`` names it); kv_cache of the same batch; targets as ``check_targets``."""
    check_ids(input_ids, "input_ids", V, f"vocab_size={V}")
    P = kv_cache.length if kv_cache is not None else 0
    if P + input_ids.shape[1] > context:
        cached = f" plus {P} cached positions" if P else ""
        raise ValueError(
            f"input_ids: sequence of {input_ids.shape[1]} tokens{cached} is longer than {limit}"
        )
    keys = kv_cache.keys if kv_cache is not None else []
    if keys and keys[0].shape[0] != input_ids.shape[0]:
        raise ValueError(
            f"kv_cache: holds a batch of {keys[0].shape[0]}, but input_ids has shape {tuple(input_ids.shape)}"
        )
    if targets is not None:
        check_targets(targets, input_ids, V)


def check_targets(targets, input_ids, V: int) -> None:
    """A language model's targets: ids shaped like input_ids, in [0, V) or -100 (ignored)."""
    if not isinstance(targets, Tensor) or targets.dtype not in (torch.int64, torch.int32):
        got = targets.dtype if isinstance(targets, Tensor) else type(targets).__name__
        raise TypeError(f"targets: expected a tensor of token ids (torch.long), got {got}")
    if targets.shape != input_ids.shape:
        raise ValueError(
            f"targets: expected shape {tuple(input_ids.shape)} (that of input_ids), got {tuple(targets.shape)}"
        )
    real = targets[targets != -100]
    if real.numel() and (real.min() < 0 or real.max() >= V):
        raise ValueError(
            f"targets: expected ids in [0, vocab_size={V}) or -100 (ignored), got ids from {real.min().item()} to {real.max().item()}"
        )


def check_prompt_room(input_ids, max_new_tokens, length, limit, one_prompt, eos_id, vocab_size):
    """What every decoder of a model with a context of ``length`` positions (``limit`` names it)
    checks after its inputs: max_new_tokens >= 1 with room for them, one prompt where asked, eos_id
    in the vocabulary."""
    check_int(max_new_tokens, "max_new_tokens", 1)
    if input_ids.shape[1] + max_new_tokens > length:
        raise ValueError(
            f"max_new_tokens: prompt of {input_ids.shape[1]} tokens + {max_new_tokens} new tokens is longer than {limit}"
        )
    if one_prompt and input_ids.shape[0] != 1:
        raise ValueError(
            f"input_ids: expected shape [1, T] (one prompt), got shape {tuple(input_ids.shape)}"
        )
    check_id(eos_id, "eos_id", vocab_size, f"vocab_size={vocab_size}", optional=True)


def check_gpt_decoding(
    model, model_type: type, input_ids, max_new_tokens, one_prompt: bool = False, eos_id=None
) -> None:
    """lib.gpt's decoders: model a ``model_type`` (lib.gpt.GPT); input_ids a batch of prompts (one
    if ``one_prompt``); max_new_tokens >= 1 with prompt + new tokens <= block_size; eos_id None or
    an id of the vocabulary. The sampling and beam arguments are lib.decoding's to check."""
    check_type(model, "model", model_type)
    c = model.config
    check_gpt_inputs(c, input_ids)
    limit = f"block_size={c.block_size}, the model's context length"
    check_prompt_room(
        input_ids, max_new_tokens, c.block_size, limit, one_prompt, eos_id, c.vocab_size
    )


def check_gpt_classifier(gpt, gpt_type: type, n_classes) -> None:
    """GPTClassifier's arguments: gpt a ``gpt_type`` (lib.gpt.GPT), n_classes an int >= 2."""
    check_type(gpt, "gpt", gpt_type)
    check_int(n_classes, "n_classes", 2)


def check_classifier_mask(attention_mask, input_ids) -> None:
    """GPTClassifier.forward's attention_mask: a padding mask of input_ids (``check_padding_mask``)
    with at least one real token per row, the token whose hidden state the classifier reads.
    Checked before the model runs; input_ids' ids are GPT.forward's to check."""
    check_type(input_ids, "input_ids", Tensor)
    check_padding_mask(attention_mask, input_ids)
    empty = attention_mask.long().sum(1) == 0  # [B]
    if empty.any():
        raise ValueError(
            f"attention_mask: expected at least one real token per row (the classifier reads the last one), got an empty row (row {int(empty.nonzero()[0])})"
        )
