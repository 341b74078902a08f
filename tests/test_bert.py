"""Tests of lib/bert.py: the config and its presets' parameter counts; shapes of the encoder and of every
head; properties (masking, padding, bidirectionality, weight tying); one layer against the formula with
torch's own attention, LayerNorm and erf-GELU; the masked-LM corruption's statistics (mask_tokens); the
next-sentence pairs (make_nsp_pairs); bad input.

Equivalence with transformers' BertModel (random and the real MiniLM) is in test_pretrained_bert.py.
Tolerances are explicit; the comment next to each says why it is the right size.
"""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from lib.bert import (
    IGNORE_INDEX,
    Bert,
    BertConfig,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSentencePairClassification,
    BertForSequenceClassification,
    BertForTokenClassification,
    NSPPair,
    count_parameters,
    make_nsp_pairs,
    mask_tokens,
    pretraining_loss,
)

V, D, H, L, T = 50, 32, 4, 2, 9


def small_config(**overrides):
    return BertConfig(
        **{
            "vocab_size": V,
            "hidden_size": D,
            "num_hidden_layers": L,
            "num_attention_heads": H,
            "intermediate_size": 64,
            "max_position_embeddings": 16,
            "hidden_dropout_prob": 0.0,
            "attention_probs_dropout_prob": 0.0,
            **overrides,
        }
    )


def small_model(cls=Bert, seed=0, *args, **overrides):
    torch.manual_seed(seed)
    return cls(small_config(**overrides), *args).eval()


def ids(*shape, high=V, seed=0, low=0):
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed))


# ====================================== config and parameter counts ======================================


def test_presets_and_published_parameter_counts():
    base, large = BertConfig.base(), BertConfig.large()
    assert (
        base.num_hidden_layers,
        base.hidden_size,
        base.num_attention_heads,
        base.intermediate_size,
    ) == (12, 768, 12, 3072)
    assert (
        large.num_hidden_layers,
        large.hidden_size,
        large.num_attention_heads,
        large.intermediate_size,
    ) == (24, 1024, 16, 4096)
    # the published bert-base-uncased / bert-large-uncased BertModel checkpoints (encoder + pooler)
    assert count_parameters(base) == 109_482_240
    assert count_parameters(large) == 335_141_888
    # the same number, term by term (the docstring's sum)
    emb = 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768
    layer = 4 * (768 * 768 + 768) + (768 * 3072 + 3072 + 3072 * 768 + 768) + 2 * 2 * 768
    assert emb + 12 * layer + 768 * 768 + 768 == 109_482_240
    assert BertConfig.base(num_hidden_layers=3).num_hidden_layers == 3


def test_pretraining_model_ties_the_lm_output_to_the_word_embeddings():
    with torch.device("meta"):
        model = BertForPreTraining(BertConfig.base())
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    # BertForPreTraining of bert-base-uncased: + transform (768*768 + 768 + LayerNorm 2*768) + output bias
    # 30522 + NSP (768*2 + 2); the tied matrix counted once
    assert sum(p.numel() for p in model.parameters()) == 109_482_240 + 590_592 + 1536 + 30522 + 1538
    model = small_model(BertForPreTraining)
    mlm, _, _ = model(ids(2, T))
    mlm.sum().backward()
    assert model.bert.embeddings.word_embeddings.weight.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "field, value",
    [
        ("hidden_size", 30),
        ("vocab_size", 0),
        ("num_hidden_layers", 1.5),
        ("hidden_dropout_prob", 1.0),
        ("layer_norm_eps", 0.0),
        ("type_vocab_size", True),
    ],
)
def test_config_refuses_bad_values(field, value):
    # a float or a bool where an int belongs is the wrong type (TypeError); the others, values
    with pytest.raises(
        (ValueError, TypeError), match=field if field != "hidden_size" else "not divisible"
    ):
        small_config(**{field: value})


def test_initialization_is_normal_002():
    torch.manual_seed(0)
    model = Bert(
        BertConfig(
            vocab_size=3000,
            hidden_size=64,
            num_hidden_layers=1,
            num_attention_heads=4,
            intermediate_size=256,
        )
    )
    w = model.embeddings.word_embeddings.weight  # 192,000 draws
    # std of N(0, 0.02^2) estimated from n = 192,000 draws: relative standard error 1/sqrt(2n) = 0.16%
    assert abs(w.std().item() - 0.02) < 0.02 * 0.01
    assert abs(w.mean().item()) < 5 * 0.02 / math.sqrt(w.numel())  # 5 standard errors of the mean
    q = model.encoder.layer[0].attention.self.query
    assert abs(q.weight.std().item() - 0.02) < 0.02 * 0.05  # 4096 draws: s.e. 1.1%, 5 s.e. ~ 5%
    assert q.bias.abs().max() == 0 and model.pooler.dense.bias.abs().max() == 0
    ln = model.encoder.layer[0].output.LayerNorm
    assert (ln.weight == 1).all() and (ln.bias == 0).all() and ln.eps == 1e-12


# ================================================ shapes ================================================


def test_forward_shapes_and_outputs():
    model = small_model()
    x = ids(3, T)
    out = model(x)
    assert out.sequence_output.shape == (3, T, D) and out.pooled_output.shape == (3, D)
    assert out.attentions is None and out.hidden_states is None
    out = model(x, return_attention=True, return_hidden_states=True)
    assert len(out.attentions) == L and all(a.shape == (3, H, T, T) for a in out.attentions)
    assert len(out.hidden_states) == L + 1 and all(h.shape == (3, T, D) for h in out.hidden_states)
    # the last hidden state is the sequence output; the pooled output is tanh(dense(first token))
    assert torch.equal(out.hidden_states[-1], out.sequence_output)
    pooled = torch.tanh(model.pooler.dense(out.sequence_output[:, 0]))
    torch.testing.assert_close(out.pooled_output, pooled, rtol=0, atol=0)
    # attention rows are softmax rows: sums of <= 9 float32 terms in [0, 1], so 1e-6 is generous
    for a in out.attentions:
        torch.testing.assert_close(a.sum(-1), torch.ones(3, H, T), rtol=0, atol=1e-6)


def test_heads_shapes():
    x, seg = ids(2, T), torch.tensor([[0] * 5 + [1] * 4] * 2)
    mlm, nsp, att = small_model(BertForPreTraining)(x, seg, return_attention=True)
    assert mlm.shape == (2, T, V) and nsp.shape == (2, 2) and len(att) == L
    logits, att = small_model(BertForSequenceClassification, 0, 3)(x)
    assert logits.shape == (2, 3) and att is None
    logits, _ = small_model(BertForSentencePairClassification, 0, 3)(x, seg)
    assert logits.shape == (2, 3)
    logits, _ = small_model(BertForTokenClassification, 0, 5)(x)
    assert logits.shape == (2, T, 5)
    start, end, _ = small_model(BertForQuestionAnswering)(x, seg)
    assert start.shape == (2, T) and end.shape == (2, T)


def test_classification_heads_read_cls_and_tokens():
    """The sequence head sees only the pooled [CLS] vector; the token head is position-wise."""
    model = small_model(BertForSequenceClassification, 0, 3)
    x = ids(1, T)
    logits, _ = model(x)
    pooled = model.bert(x).pooled_output
    torch.testing.assert_close(logits, model.classifier(pooled), rtol=0, atol=0)
    model = small_model(BertForTokenClassification, 0, 5)
    logits, _ = model(x)
    torch.testing.assert_close(
        logits, model.classifier(model.bert(x).sequence_output), rtol=0, atol=0
    )


def test_pretraining_loss_is_mlm_plus_nsp_cross_entropy():
    model = small_model(BertForPreTraining)
    x = ids(4, T)
    inputs, labels = mask_tokens(
        x, V, 3, [0, 1, 2], prob=0.5, generator=torch.Generator().manual_seed(0)
    )
    mlm, nsp, _ = model(inputs)
    nsp_labels = torch.tensor([0, 1, 1, 0])
    chosen = labels != IGNORE_INDEX
    by_hand = (
        -mlm.log_softmax(-1)[chosen].gather(1, labels[chosen][:, None]).mean()
        - nsp.log_softmax(-1).gather(1, nsp_labels[:, None]).mean()
    )
    # two means of float32 log-probabilities of size ~4: 1e-5 covers the summation order
    torch.testing.assert_close(
        pretraining_loss(mlm, nsp, labels, nsp_labels), by_hand, rtol=0, atol=1e-5
    )
    torch.testing.assert_close(
        pretraining_loss(mlm, None, labels),
        -mlm.log_softmax(-1)[chosen].gather(1, labels[chosen][:, None]).mean(),
        rtol=0,
        atol=1e-5,
    )
    with pytest.raises(ValueError, match="mlm_labels"):
        pretraining_loss(mlm, nsp, labels[:, :-1], nsp_labels)
    with pytest.raises(ValueError, match="nsp_logits and nsp_labels"):
        pretraining_loss(mlm, nsp, labels)


# ============================================== properties ==============================================


def test_one_layer_equals_the_formula_with_torch_reference_functions():
    """x1 = LN(x + MHA(x) W_O), x2 = LN(x1 + GELU(x1 W1) W2) with torch's F.scaled_dot_product_attention,
    F.layer_norm and GELU written with erf: checks post-LN, the head split and the exact GELU."""
    model = small_model()
    with torch.no_grad():  # non-trivial LayerNorm gains and biases
        for p in model.parameters():
            if p.dim() == 1:
                p.copy_(
                    torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.5
                    + (p == 1)
                )
    layer = model.encoder.layer[0]
    x = torch.randn(2, T, D, generator=torch.Generator().manual_seed(1))
    a = layer.attention.self

    def heads(lin):
        return lin(x).view(2, T, H, D // H).transpose(1, 2)  # [B, H, T, Dh]

    ctx = F.scaled_dot_product_attention(heads(a.query), heads(a.key), heads(a.value))
    ctx = ctx.transpose(1, 2).reshape(2, T, D)
    ln1 = layer.attention.output.LayerNorm
    x1 = F.layer_norm(x + layer.attention.output.dense(ctx), (D,), ln1.weight, ln1.bias, 1e-12)
    h = layer.intermediate.dense(x1)
    gelu = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))
    ln2 = layer.output.LayerNorm
    x2 = F.layer_norm(x1 + layer.output.dense(gelu), (D,), ln2.weight, ln2.bias, 1e-12)
    out, weights = layer(x)
    # float32, width 32, two LayerNorms: different summation orders differ by ~1e-6
    torch.testing.assert_close(out, x2, rtol=0, atol=1e-5)
    scores = heads(a.query) @ heads(a.key).transpose(-1, -2) / math.sqrt(D // H)
    torch.testing.assert_close(weights, scores.softmax(-1), rtol=0, atol=1e-6)
    # the tanh approximation of GELU would differ by up to ~1e-3 on these inputs: the check can fail
    assert (F.gelu(h, approximate="tanh") - gelu).abs().max() > 1e-5


def test_padding_is_never_attended_and_does_not_change_the_real_tokens():
    model = small_model()
    short = ids(1, 6, low=5)
    # [1, 9], 3 pads at the end
    padded = torch.cat([short, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    mask = torch.tensor([[1] * 6 + [0] * 3])
    out = model(padded, attention_mask=mask, return_attention=True)
    for a in out.attentions:
        assert (a[..., 6:] == 0).all()  # exactly 0, not just small
    alone = model(short)
    # the same arithmetic on 6 real tokens, except for sums with 3 exact zeros: float32 rounding only
    torch.testing.assert_close(out.sequence_output[:, :6], alone.sequence_output, rtol=0, atol=1e-5)
    torch.testing.assert_close(out.pooled_output, alone.pooled_output, rtol=0, atol=1e-5)
    bool_mask = model(padded, attention_mask=mask.bool()).sequence_output
    assert torch.equal(bool_mask, out.sequence_output)  # 1/0 and True/False mean the same
    # a [B, T, T] mask: query i may attend to keys 0..i only (a causal encoder)
    causal = torch.ones(T, T, dtype=torch.bool).tril()[None]
    att = model(padded, attention_mask=causal, return_attention=True).attentions[0]
    assert (att[0][:, ~causal[0]] == 0).all()


def test_every_position_sees_both_directions():
    """Bidirectional: changing the last token changes the first token's output, and the first the last
    (a causal model would keep the first unchanged)."""
    model = small_model()
    x = ids(1, T, low=5)
    y = x.clone()
    y[0, -1] = 4
    first = (model(x).sequence_output[0, 0] - model(y).sequence_output[0, 0]).abs().max()
    z = x.clone()
    z[0, 0] = 4
    last = (model(x).sequence_output[0, -1] - model(z).sequence_output[0, -1]).abs().max()
    assert first > 1e-3 and last > 1e-3


def test_segments_and_positions_change_the_output():
    model = small_model()
    x = ids(1, T, low=5)
    seg = torch.tensor([[0] * 4 + [1] * 5])
    assert (model(x).sequence_output - model(x, seg).sequence_output).abs().max() > 1e-3
    # no segments given means segment 0 everywhere
    assert torch.equal(model(x).sequence_output, model(x, torch.zeros_like(x)).sequence_output)
    # same tokens in reverse order: without positions the outputs would be the reversed outputs
    rev = model(x.flip(1)).sequence_output.flip(1)
    assert (model(x).sequence_output - rev).abs().max() > 1e-3


def test_dropout_only_in_train_mode():
    model = small_model(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    x = ids(2, T)
    assert torch.equal(model(x).sequence_output, model(x).sequence_output)
    model.train()
    assert not torch.equal(model(x).sequence_output, model(x).sequence_output)


# ================================================ bad input ================================================


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (
            {"input_ids": torch.tensor([[1, 2, V]])},
            ValueError,
            rf"input_ids: expected ids in \[0, {V}\).*got ids from 1 to {V}",
        ),
        (
            {"input_ids": torch.tensor([[-1, 2, 3]])},
            ValueError,
            r"input_ids: expected ids in \[0, 50\)",
        ),
        (
            {"input_ids": torch.ones(1, 17, dtype=torch.long)},
            ValueError,
            r"input_ids: expected at most max_position_embeddings=16 .*got shape \(1, 17\)",
        ),
        (
            {"input_ids": torch.ones(1, 3)},
            TypeError,
            r"input_ids: expected a tensor of token ids .*got torch.float32",
        ),
        (
            {"input_ids": torch.ones(3, dtype=torch.long)},
            ValueError,
            r"input_ids: expected shape \[B, T\]",
        ),
        (
            {"token_type_ids": torch.tensor([[0, 1, 2]])},
            ValueError,
            r"token_type_ids: expected ids in \[0, 2\) \(segment ids: 0 for sentence A, 1 for sentence B\)",
        ),
        (
            {"token_type_ids": torch.tensor([[0, 1]])},
            ValueError,
            r"token_type_ids: expected shape \(1, 3\)",
        ),
        (
            {"attention_mask": torch.ones(1, 4, dtype=torch.long)},
            ValueError,
            r"attention_mask: expected shape \[B, T\] = \(1, 3\).*got shape \(1, 4\)",
        ),
        (
            {"attention_mask": torch.ones(1, 1, 3, dtype=torch.long)},
            ValueError,
            r"attention_mask: expected shape",
        ),
        (
            {"attention_mask": torch.tensor([[1, 2, 0]])},
            ValueError,
            r"attention_mask: expected values 0 and 1",
        ),
        (
            {"attention_mask": torch.ones(1, 3)},
            TypeError,
            r"attention_mask: expected a bool or integer tensor",
        ),
    ],
)
def test_bad_input_names_the_argument(kwargs, exc, pattern):
    model = small_model()
    args = {"input_ids": torch.tensor([[1, 2, 3]]), **kwargs}
    with pytest.raises(exc, match=pattern):
        model(**args)


def test_sentence_pair_head_requires_segments():
    with pytest.raises(ValueError, match="token_type_ids: expected the segment ids"):
        small_model(BertForSentencePairClassification, 0, 2)(ids(1, T))
    with pytest.raises(ValueError, match="num_labels"):
        BertForSequenceClassification(small_config(), 0)
    with pytest.raises(TypeError, match="config: expected a BertConfig"):
        Bert({"hidden_size": 8})


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
    from lib.bert import pretraining_batches
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
    from lib.bert import pretraining_batches
    from lib.wordpiece import WordPieceTokenizer

    tok = WordPieceTokenizer.from_texts(["a b c"])
    with pytest.raises(ValueError, match="^examples:"):
        pretraining_batches(tok, [], 4)
    with pytest.raises(TypeError, match="^examples:.*mix"):
        pretraining_batches(tok, ["a", NSPPair("a", "b", True)], 4)
    with pytest.raises(ValueError, match="^batch_size:"):
        pretraining_batches(tok, ["a"], 0)
