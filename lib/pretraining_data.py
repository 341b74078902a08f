"""BERT's pretraining data (Devlin et al. 2019, sec. 3.1): the two tasks' examples, batched.

- Task #1, the masked LM: ``mask_tokens`` chooses 15% of the tokens and corrupts them (80% [MASK],
  10% a random token, 10% unchanged); the labels are the original ids there, ``IGNORE_INDEX``
  elsewhere.
- Task #2, next-sentence prediction: ``make_nsp_pairs`` draws sentence pairs, half of them a
  sentence and the one that follows it (IsNext), half a sentence and one of another story (NotNext).
- ``pretraining_batches``: an endless stream of ``PretrainingBatch`` for ``lib.bert_heads.BertForPreTraining``,
  encoded with a ``lib.wordpiece.WordPieceTokenizer`` and masked afresh every epoch.

The model and its loss (``pretraining_loss``) are in lib.bert_heads. Shapes: B batch, T tokens, V vocabulary.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import torch
from torch import Tensor

from lib._checks.pretraining_data import (
    check_mask_tokens,
    check_nsp_stories,
    check_pretraining_examples,
)
from lib._random import rand, randint
from lib.bert import IGNORE_INDEX
from lib.data._batching import endless, index_batches

__all__ = [
    "IGNORE_INDEX",
    "special_mask",
    "mask_tokens",
    "NSPPair",
    "make_nsp_pairs",
    "PretrainingBatch",
    "pretraining_batches",
]


def special_mask(special_ids, vocab_size: int, device=None) -> Tensor:
    """bool [V], True at the ids that are never chosen for masking ([CLS], [SEP], [PAD], ...)."""
    is_special = torch.zeros(vocab_size, dtype=torch.bool, device=device)
    is_special[sorted(set(special_ids))] = True
    return is_special


def mask_tokens(
    input_ids: Tensor,
    vocab_size: int,
    mask_token_id: int,
    special_ids,
    prob: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """The masked-LM corruption of BERT (sec. 3.1, Task #1): choose each token with probability ``prob``;
    of the chosen ones, replace 80% by [MASK], 10% by a random token and leave 10% unchanged.

    input_ids [B, T] (or any shape) of ids in [0, vocab_size) -> (inputs, labels), both shaped like
    input_ids: ``inputs`` is the corrupted copy (input_ids is not changed); ``labels`` holds the
    original id where a token was chosen and IGNORE_INDEX (-100) everywhere else, so that the loss is
    taken over the chosen tokens only. Tokens whose id is in ``special_ids`` ([CLS], [SEP], [PAD], ...)
    are never chosen: include the padding id there and padding is never chosen either.
    ``generator``: a torch.Generator for reproducible draws (the same generator state gives the same result).

    Deviations from Google's code, as in Hugging Face's data collator: each token is chosen
    independently (so the number chosen per sequence varies around prob * T instead of being exactly
    round(prob * T)), and the 80/10/10 split is drawn per chosen token. One of ours: the random
    replacement is drawn uniformly from the non-special ids (Google draws from the whole vocabulary,
    [CLS] and [MASK] included); it equals the original token with probability 1 / (number of
    non-special ids), which the 10% "unchanged" does not count.
    """
    check_mask_tokens(input_ids, vocab_size, mask_token_id, special_ids, prob, generator)
    device = input_ids.device
    is_special = special_mask(special_ids, vocab_size, device)  # [V]
    ordinary = (~is_special).nonzero().squeeze(1)  # ids a random replacement may take
    ids = input_ids
    can_choose = ~is_special[ids]  # like input_ids, bool
    chosen = (rand(ids.shape, device, generator) < prob) & can_choose
    action = rand(ids.shape, device, generator)  # 80% [MASK], 10% random, 10% unchanged
    replacement = ordinary[randint(len(ordinary), ids.shape, device, generator)]
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_token_id
    random_here = chosen & (action >= 0.8) & (action < 0.9)
    inputs[random_here] = replacement[random_here]
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE_INDEX))
    return inputs, labels


class NSPPair(NamedTuple):
    """One next-sentence-prediction example: ``is_next`` is True when ``second`` follows ``first`` in
    the same story. ``label`` is the NSP head's class: 0 = IsNext, 1 = NotNext (BERT's order)."""

    first: str
    second: str
    is_next: bool

    @property
    def label(self) -> int:
        return 0 if self.is_next else 1


def make_nsp_pairs(stories, n: int, seed: int = 0) -> list[NSPPair]:
    """``n`` sentence pairs for next-sentence prediction (BERT, sec. 3.1, Task #2): sentence A is drawn
    at random from a story with at least two sentences (not its last one); with probability 1/2
    sentence B is the sentence that follows A in the same story (IsNext), otherwise a random sentence
    of a different story (NotNext).

    stories: a list of stories, each a list of sentences (str), e.g. lib.data.stories.generate_stories;
    at least two stories, and one of them with two sentences or more. Deterministic given ``seed``.
    Deviations: BERT pairs *segments* (spans of several sentences filling up to 512 tokens) taken from
    documents; here one sentence each. A NotNext sentence may by chance read the same as the true next
    one when a generated corpus repeats sentences.
    """
    check_nsp_stories(stories, n)
    firsts = [i for i, s in enumerate(stories) if len(s) >= 2]  # stories that can give sentence A
    others = [
        i for i, s in enumerate(stories) if len(s) >= 1
    ]  # and those that can give a NotNext B
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        s = rng.choice(firsts)
        i = rng.randrange(len(stories[s]) - 1)
        if rng.random() < 0.5:
            pairs.append(NSPPair(stories[s][i], stories[s][i + 1], True))
        else:
            j = rng.randrange(len(others) - 1)  # any non-empty story but s:
            j = others[j + (others[j] >= s)]  # skip s (others is sorted, holds s)
            pairs.append(NSPPair(stories[s][i], rng.choice(stories[j]), False))
    return pairs


class PretrainingBatch(NamedTuple):
    """One batch for ``BertForPreTraining`` (all torch.long, [B, T] unless said):

    input_ids: the masked-LM input (``mask_tokens`` applied); token_type_ids, attention_mask: as
    ``WordPieceTokenizer.encode_batch`` gives them; mlm_labels: the original id where a token was
    chosen, IGNORE_INDEX elsewhere; nsp_labels [B]: 0 = IsNext, 1 = NotNext, or None for single
    sentences (no next-sentence task)."""

    input_ids: Tensor
    token_type_ids: Tensor
    attention_mask: Tensor
    mlm_labels: Tensor
    nsp_labels: Tensor | None


def pretraining_batches(
    tokenizer,
    examples,
    batch_size: int,
    *,
    max_length: int | None = None,
    prob: float = 0.15,
    seed: int = 0,
):
    """An endless iterator of ``PretrainingBatch``: the examples shuffled afresh every epoch, encoded
    with ``tokenizer.encode_batch`` (a ``lib.wordpiece.WordPieceTokenizer``), masked with
    ``mask_tokens`` (specials: [PAD] [UNK] [CLS] [SEP] [MASK] never chosen).

    examples: a list of ``NSPPair`` (``make_nsp_pairs``: sentence pairs with NSP labels) or of str
    (single sentences: nsp_labels is None). Deterministic given ``seed`` (shuffling and masking).
    Deviation, on purpose: the masks are drawn again every time a sentence comes round ("dynamic
    masking", Liu et al. 2019, RoBERTa, sec. 4.1); BERT fixed them once when it wrote its training
    data, duplicated 10 times with different masks.
    """
    check_pretraining_examples(examples, batch_size, NSPPair)
    examples = list(examples)
    pairs = isinstance(examples[0], NSPPair)  # else single sentences
    special = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.special_tokens]
    order_rng, mask_rng = random.Random(seed), torch.Generator().manual_seed(seed)

    def epoch():
        for indices in index_batches(len(examples), batch_size, True, order_rng):
            chunk = [examples[i] for i in indices]
            if pairs:
                enc = tokenizer.encode_batch(
                    [p.first for p in chunk], [p.second for p in chunk], max_length
                )
                nsp = torch.tensor([p.label for p in chunk], dtype=torch.long)
            else:
                enc, nsp = tokenizer.encode_batch(chunk, max_length=max_length), None
            inputs, labels = mask_tokens(
                enc.input_ids,
                tokenizer.vocab_size,
                tokenizer.mask_token_id,
                special,
                prob=prob,
                generator=mask_rng,
            )
            yield PretrainingBatch(inputs, enc.token_type_ids, enc.attention_mask, labels, nsp)

    return endless(epoch)
