"""Tests of lib/pretraining_data.py: the masked-LM corruption's statistics (mask_tokens), the
next-sentence pairs (make_nsp_pairs), the batches (pretraining_batches), bad input. (Moved with the code
from test_bert.py; the assertions are unchanged.)
"""

import math
import re

import pytest
import torch

from lib.bert import IGNORE_INDEX
from lib.pretraining_data import (
    NSPPair,
    make_nsp_pairs,
    mask_tokens,
    pretraining_batches,
)

# ========================================= mask_tokens: the 80/10/10 rule =========================================

PAD, CLS, SEP, MASK, VOCAB = 0, 1, 2, 3, 1000
SPECIAL = [PAD, CLS, SEP, MASK]


def corpus(n=2000, length=128, seed=0):
    """n sequences [CLS] tokens [SEP] [PAD]...: lengths 20..length, ordinary ids 4..VOCAB-1."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(4, VOCAB, (n, length), generator=g)
    lengths = torch.randint(20, length + 1, (n,), generator=g)
    pos = torch.arange(length)
    x[:, 0] = CLS
    x[pos[None] == (lengths[:, None] - 1)] = SEP
    x[pos[None] >= lengths[:, None]] = PAD
    return x


def binomial_bound(p, n, z=5.0):
    """Half-width of a z-sigma band for a proportion with success probability p over n trials. At z = 5 a
    correct implementation leaves the band with probability < 1e-6 per check (the draws are seeded, so the
    result is fixed anyway); a rule off by one percentage point leaves it at the sample sizes used here."""
    return z * math.sqrt(p * (1 - p) / n)


def test_mask_tokens_statistics_over_a_large_batch():
    x = corpus()
    before = x.clone()
    inputs, labels = mask_tokens(
        x, VOCAB, MASK, SPECIAL, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(x, before)  # the input is not changed in place
    eligible = ~torch.isin(x, torch.tensor(SPECIAL))
    chosen = labels != IGNORE_INDEX
    n_eligible, n_chosen = eligible.sum().item(), chosen.sum().item()
    assert n_eligible > 100_000  # the sample sizes the bounds assume
    # specials and padding are never chosen
    assert not (chosen & ~eligible).any()
    # labels: the original id where chosen, IGNORE_INDEX elsewhere; unchosen tokens untouched
    assert torch.equal(labels[chosen], x[chosen]) and (labels[~chosen] == IGNORE_INDEX).all()
    assert torch.equal(inputs[~chosen], x[~chosen])
    # about 15% of the eligible tokens are chosen: n ~ 145,000, band +-0.47 percentage points
    assert abs(n_chosen / n_eligible - 0.15) < binomial_bound(0.15, n_eligible)
    # of the chosen (~22,000): 80% [MASK], 10% another ordinary token, 10% unchanged (band +-1.4 / +-1.0 pt).
    # A random replacement equals the original with probability 1/996 (996 ordinary ids), so "random" is
    # 10% * 995/996 and "unchanged" 10% + 10%/996.
    k = VOCAB - len(SPECIAL)
    masked = (inputs[chosen] == MASK).float().mean().item()
    random_ = ((inputs[chosen] != MASK) & (inputs[chosen] != x[chosen])).float().mean().item()
    same = (inputs[chosen] == x[chosen]).float().mean().item()
    assert abs(masked - 0.8) < binomial_bound(0.8, n_chosen)
    assert abs(random_ - 0.1 * (k - 1) / k) < binomial_bound(0.1, n_chosen)
    assert abs(same - (0.1 + 0.1 / k)) < binomial_bound(0.1, n_chosen)
    # random replacements are ordinary ids, spread over the vocabulary (~2,200 draws over 996 ids)
    replaced = inputs[chosen][(inputs[chosen] != MASK) & (inputs[chosen] != x[chosen])]
    assert not torch.isin(replaced, torch.tensor(SPECIAL)).any()
    assert replaced.unique().numel() > 800  # expected 996 * (1 - e^-2.2) ~ 885
    # the proportion is the same at the start and at the end of a sequence (choices are independent)
    early, late = (
        chosen[:, 1:10].sum() / eligible[:, 1:10].sum(),
        chosen[:, 10:19].sum() / eligible[:, 10:19].sum(),
    )
    assert abs(early - late).item() < 2 * binomial_bound(0.15, eligible[:, 1:10].sum().item())


def test_mask_tokens_other_probability_and_determinism():
    x = corpus(n=500)
    eligible = ~torch.isin(x, torch.tensor(SPECIAL))
    _, labels = mask_tokens(
        x, VOCAB, MASK, SPECIAL, prob=0.4, generator=torch.Generator().manual_seed(1)
    )
    share = ((labels != IGNORE_INDEX).sum() / eligible.sum()).item()
    assert abs(share - 0.4) < binomial_bound(0.4, eligible.sum().item())
    a = mask_tokens(x, VOCAB, MASK, SPECIAL, generator=torch.Generator().manual_seed(7))
    b = mask_tokens(x, VOCAB, MASK, SPECIAL, generator=torch.Generator().manual_seed(7))
    c = mask_tokens(x, VOCAB, MASK, SPECIAL, generator=torch.Generator().manual_seed(8))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[1], c[1])
    everything = mask_tokens(
        x, VOCAB, MASK, SPECIAL, prob=1.0, generator=torch.Generator().manual_seed(0)
    )[1]
    assert torch.equal(everything != IGNORE_INDEX, eligible)  # prob 1: every eligible token


@pytest.mark.parametrize(
    "args, kwargs, exc, pattern",
    [
        (
            (torch.tensor([[5, VOCAB]]), VOCAB, MASK, SPECIAL),
            {},
            ValueError,
            r"input_ids: expected ids in \[0, 1000\)",
        ),
        (
            (torch.ones(2, 3), VOCAB, MASK, SPECIAL),
            {},
            TypeError,
            "input_ids: expected a tensor of token ids",
        ),
        (
            (torch.ones(2, 3, dtype=torch.long), VOCAB, VOCAB, SPECIAL),
            {},
            ValueError,
            "mask_token_id",
        ),
        ((torch.ones(2, 3, dtype=torch.long), VOCAB, MASK, [0, -1]), {}, ValueError, "special_ids"),
        (
            (torch.ones(2, 3, dtype=torch.long), VOCAB, MASK, SPECIAL),
            {"prob": 0.0},
            ValueError,
            r"prob: expected",
        ),
        (
            (torch.ones(2, 3, dtype=torch.long), VOCAB, MASK, SPECIAL),
            {"prob": 1.5},
            ValueError,
            r"prob: expected",
        ),
        (
            (torch.ones(2, 3, dtype=torch.long), VOCAB, MASK, SPECIAL),
            {"generator": 3},
            TypeError,
            "generator",
        ),
        (
            (torch.ones(2, 3, dtype=torch.long), 4, MASK, [0, 1, 2, 3]),
            {},
            ValueError,
            "every id of the vocabulary",
        ),
    ],
)
def test_mask_tokens_bad_input(args, kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        mask_tokens(*args, **kwargs)


# ========================================= next-sentence pairs =========================================


def stories(n=60, seed=0):
    """Stories with distinct sentences "s<story> n<index>.", 1 to 8 sentences each, so that a pair can be
    traced back to where its sentences come from."""
    g = torch.Generator().manual_seed(seed)
    return [
        [f"s{s} n{i}." for i in range(torch.randint(1, 9, (1,), generator=g).item())]
        for s in range(n)
    ]


def where(sentence):
    story, index = re.fullmatch(r"s(\d+) n(\d+)\.", sentence).groups()
    return int(story), int(index)


def test_nsp_pairs_are_half_true_next_sentences():
    corpus_ = stories()
    n = 4000
    pairs = make_nsp_pairs(corpus_, n, seed=0)
    assert len(pairs) == n and all(isinstance(p, NSPPair) for p in pairs)
    for p in pairs:
        (sa, ia), (sb, ib) = where(p.first), where(p.second)
        assert ia < len(corpus_[sa]) - 1  # A is never the last sentence of its story
        if p.is_next:
            assert (sb, ib) == (sa, ia + 1) and p.label == 0
        else:
            assert sb != sa and p.label == 1  # from another story
    share = sum(p.is_next for p in pairs) / n
    # Bernoulli(1/2) over 4000 pairs: 5 sigma = 4.0 percentage points
    assert abs(share - 0.5) < binomial_bound(0.5, n)
    # NotNext sentences come from many different stories, and every eligible story supplies A sentences
    assert len({where(p.second)[0] for p in pairs if not p.is_next}) > 50
    assert {where(p.first)[0] for p in pairs} == {i for i, s in enumerate(corpus_) if len(s) >= 2}
    assert make_nsp_pairs(corpus_, 50, seed=3) == make_nsp_pairs(corpus_, 50, seed=3)
    assert make_nsp_pairs(corpus_, 50, seed=3) != make_nsp_pairs(corpus_, 50, seed=4)


@pytest.mark.parametrize(
    "stories_, n, exc, pattern",
    [
        ([["a.", "b."]], 5, ValueError, "at least 2 stories"),
        ([["a."], ["b."]], 5, ValueError, "2 or more sentences"),
        ([["a.", "b."], []], 5, ValueError, "two stories with at least one sentence"),
        ("a. b.", 5, TypeError, "stories: expected a list of stories"),
        ([["a.", "b."], ["c."]], 0, ValueError, "n: expected an int >= 1"),
    ],
)
def test_nsp_pairs_bad_input(stories_, n, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make_nsp_pairs(stories_, n)


# ========================================= pretraining_batches =========================================


def test_pretraining_batches_of_pairs_and_of_sentences():
    from lib.data.stories import generate_stories
    from lib.wordpiece import WordPieceTokenizer

    stories = generate_stories(60, seed=0)
    tok = WordPieceTokenizer.from_texts([s for story in stories for s in story])
    pairs = make_nsp_pairs(stories, 50, seed=0)
    stream = pretraining_batches(tok, pairs, 16, seed=3)
    seen = [next(stream) for _ in range(8)]  # 4 batches per epoch (16+16+16+2): 2 epochs
    assert [len(b.nsp_labels) for b in seen] == [16, 16, 16, 2] * 2
    for b in seen:
        chosen = b.mlm_labels != IGNORE_INDEX
        assert (
            b.input_ids.shape
            == b.mlm_labels.shape
            == b.token_type_ids.shape
            == b.attention_mask.shape
        )
        assert not chosen[b.attention_mask == 0].any()  # padding is never chosen
        assert not torch.isin(b.mlm_labels[chosen], torch.arange(5)).any()  # nor a special token
        assert set(b.token_type_ids.unique().tolist()) == {0, 1}
    labels = sorted(x for b in seen[:4] for x in b.nsp_labels.tolist())  # one epoch: each pair once
    assert labels == sorted(p.label for p in pairs)
    # unmasking the first batch gives back the encoded pairs, in some order
    b = seen[0]
    original = torch.where(b.mlm_labels != IGNORE_INDEX, b.mlm_labels, b.input_ids)
    encoded = {tuple(tok.encode(p.first, p.second).input_ids) for p in pairs}
    for row, mask in zip(original, b.attention_mask):
        assert tuple(row[mask.bool()].tolist()) in encoded

    # the masks are drawn afresh in the second epoch; everything is reproducible from the seed
    def masks_by_example(epoch):  # {encoded pair: positions chosen} (a pair may occur twice)
        out = {}
        for b in epoch:
            original = torch.where(b.mlm_labels != IGNORE_INDEX, b.mlm_labels, b.input_ids)
            for row, labels, mask in zip(original, b.mlm_labels, b.attention_mask):
                key = tuple(row[mask.bool()].tolist())
                out.setdefault(key, []).append(
                    tuple((labels != IGNORE_INDEX).nonzero().flatten().tolist())
                )
        return out

    first, second = masks_by_example(seen[:4]), masks_by_example(seen[4:])
    assert first.keys() == second.keys()
    assert sum(first[k] != second[k] for k in first) > len(first) // 2
    again = pretraining_batches(tok, pairs, 16, seed=3)
    assert all(torch.equal(next(again).input_ids, x.input_ids) for x in seen)
    single = next(pretraining_batches(tok, [p.first for p in pairs], 8, max_length=6))
    assert (
        single.nsp_labels is None
        and single.input_ids.shape[1] <= 6
        and not single.token_type_ids.any()
    )


def test_pretraining_batches_bad_input():
    from lib.wordpiece import WordPieceTokenizer

    tok = WordPieceTokenizer.from_texts(["a b c"])
    with pytest.raises(ValueError, match="^examples:"):
        pretraining_batches(tok, [], 4)
    with pytest.raises(TypeError, match="^examples:.*mix"):
        pretraining_batches(tok, ["a", NSPPair("a", "b", True)], 4)
    with pytest.raises(ValueError, match="^batch_size:"):
        pretraining_batches(tok, ["a"], 0)
