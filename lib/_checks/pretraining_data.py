"""The input checks of lib.pretraining_data, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_id, check_int, check_probability, is_int


def check_special_ids(special_ids, mask_token_id, vocab_size: int) -> None:
    """The masking ids of ``mask_tokens`` and ELECTRA's corruption: ``special_ids`` a collection of
    ids in [0, vocab_size) that leaves at least one ordinary id, ``mask_token_id`` an id there."""
    ids = None if isinstance(special_ids, (str, bytes, int)) else list(special_ids)
    if ids is None or not all(is_int(i) and 0 <= i < vocab_size for i in ids):
        raise ValueError(
            f"special_ids: expected a collection of ids in [0, {vocab_size}), got {special_ids!r}"
        )
    if len(set(ids)) >= vocab_size:
        raise ValueError(
            "special_ids: every id of the vocabulary is special; nothing can be chosen"
        )
    check_id(mask_token_id, "mask_token_id", vocab_size)


def check_mask_tokens(input_ids, vocab_size, mask_token_id, special_ids, prob, generator) -> None:
    """The arguments of ``lib.pretraining_data.mask_tokens`` (ids of any shape)."""
    if not isinstance(input_ids, Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
        got = input_ids.dtype if isinstance(input_ids, Tensor) else type(input_ids).__name__
        raise TypeError(f"input_ids: expected a tensor of token ids (torch.long), got {got}")
    check_int(vocab_size, "vocab_size", 2)
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(
            f"input_ids: expected ids in [0, {vocab_size}) (the vocabulary), got ids from {input_ids.min().item()} to {input_ids.max().item()}"
        )
    check_special_ids(special_ids, mask_token_id, vocab_size)
    check_probability(prob, "prob")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator: expected a torch.Generator or None, got {type(generator).__name__}"
        )


def check_nsp_stories(stories, n) -> None:
    """The arguments of ``lib.pretraining_data.make_nsp_pairs``: at least two stories (lists of
    sentences) with a sentence each, one of them with two or more; ``n`` >= 1."""
    if not isinstance(stories, (list, tuple)) or not all(
        isinstance(s, (list, tuple)) and all(isinstance(x, str) for x in s) for s in stories
    ):
        raise TypeError(
            f"stories: expected a list of stories, each a list of sentences (str), got {type(stories).__name__}"
        )
    if len(stories) < 2:
        raise ValueError(
            f"stories: expected at least 2 stories (NotNext takes a sentence from another story), got {len(stories)}"
        )
    if not any(len(s) >= 2 for s in stories):
        raise ValueError("stories: expected at least one story with 2 or more sentences, got none")
    check_int(n, "n", 1)
    non_empty = sum(len(s) >= 1 for s in stories)
    if non_empty < 2:
        raise ValueError(
            f"stories: expected two stories with at least one sentence each, got {non_empty}"
        )


def check_pretraining_examples(examples, batch_size, pair_type: type) -> None:
    """The examples of ``lib.pretraining_data.pretraining_batches``: a non-empty list (or tuple),
    all sentence pairs (``pair_type``) or all str; ``batch_size`` >= 1."""
    if not isinstance(examples, (list, tuple)) or not examples:
        raise ValueError(
            f"examples: expected a non-empty list of NSPPair or of str, got {examples!r:.60}"
        )
    if not (
        all(isinstance(e, pair_type) for e in examples) or all(isinstance(e, str) for e in examples)
    ):
        raise TypeError(
            f"examples: expected all NSPPair (sentence pairs) or all str (sentences), got a mix of {sorted({type(e).__name__ for e in examples})}"
        )
    check_int(batch_size, "batch_size", 1)
