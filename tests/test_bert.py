"""Tests of lib/bert.py: the config and its presets' parameter counts; shapes of the encoder and of every
head; properties (masking, padding, bidirectionality, weight tying); one layer against the formula with
torch's own attention, LayerNorm and erf-GELU; the fused attention path (no weights asked for) equals
the one that returns weights; bad input. The pretraining data is tested in test_pretraining_data.py.

Equivalence with transformers' BertModel (random and the real MiniLM) is in test_pretrained_bert.py.
Tolerances are explicit; the comment next to each says why it is the right size.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from lib.bert import IGNORE_INDEX, Bert, BertConfig, count_parameters
from lib.bert_heads import (
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSentencePairClassification,
    BertForSequenceClassification,
    BertForTokenClassification,
    pretraining_loss,
)
from lib.pretraining_data import mask_tokens
from tests.tolerance import assert_float_close

V, D, H, L, T = 50, 32, 4, 2, 9


D_FF = 64  # small_config's intermediate_size; heads of D / H = 8


def layer_terms(keys):
    """The roundings one post-LN layer adds (tests/tolerance.py's terms): q/k/v 32, scores over 8 +
    scaling, softmax over the keys, sum over the keys, dense 32, LN 32, intermediate 32, output 64, LN 32."""
    return D + D // H + 1 + keys + keys + D + D + D + D_FF + D


def hidden_terms(layers, keys=T):
    """To the output of `layers` layers: the embeddings' sum of 3 and LN 32, then the layers."""
    return 2 + D + layers * layer_terms(keys)


POOLED_TERMS = hidden_terms(L) + D + 1  # the pooler's dense 32 and tanh


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
    mlm = model(ids(2, T)).mlm_logits
    mlm.sum().backward()
    assert model.bert.embeddings.word_embeddings.weight.grad.abs().sum() > 0


BERT_KEYS = [
    "embeddings.word_embeddings.weight",
    "embeddings.position_embeddings.weight",
    "embeddings.token_type_embeddings.weight",
    "embeddings.LayerNorm.weight",
    "embeddings.LayerNorm.bias",
    *[
        f"encoder.layer.0.{part}.{p}"
        for part in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "attention.output.LayerNorm",
            "intermediate.dense",
            "output.dense",
            "output.LayerNorm",
        )
        for p in ("weight", "bias")
    ],
    "pooler.dense.weight",
    "pooler.dense.bias",
]
HEAD_KEYS = {  # the names of the published checkpoints (Hugging Face's BertFor... classes)
    BertForPreTraining: [
        "cls.predictions.bias",
        "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.decoder.weight",
        "cls.seq_relationship.weight",
        "cls.seq_relationship.bias",
    ],
    BertForSequenceClassification: ["classifier.weight", "classifier.bias"],
    BertForSentencePairClassification: ["classifier.weight", "classifier.bias"],
    BertForTokenClassification: ["classifier.weight", "classifier.bias"],
    BertForQuestionAnswering: ["qa_outputs.weight", "qa_outputs.bias"],
}


@pytest.mark.parametrize("cls", HEAD_KEYS, ids=lambda c: c.__name__)
def test_state_dict_keys_are_the_checkpoints_names(cls):
    config = small_config(num_hidden_layers=1)
    kw = {"num_labels": 3} if "Classification" in cls.__name__ else {}
    assert list(Bert(config).state_dict()) == BERT_KEYS
    keys = list(cls(config, **kw).state_dict())
    assert keys == [f"bert.{k}" for k in BERT_KEYS] + HEAD_KEYS[cls]


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
    # attention rows: softmax's sum over 9 + this sum over 9, of probabilities summing to 1
    for a in out.attentions:
        assert_float_close(a.sum(-1), torch.ones(3, H, T), terms=T + T, scale=1)


def test_heads_shapes():
    x, seg = ids(2, T), torch.tensor([[0] * 5 + [1] * 4] * 2)
    mlm, nsp, att, states = small_model(BertForPreTraining)(x, seg, return_attention=True)
    assert mlm.shape == (2, T, V) and nsp.shape == (2, 2) and len(att) == L and states is None
    logits, att, states = small_model(BertForSequenceClassification, 0, 3)(x)
    assert logits.shape == (2, 3) and att is None and states is None
    logits, *_ = small_model(BertForSentencePairClassification, 0, 3)(x, seg)
    assert logits.shape == (2, 3)
    logits, *_ = small_model(BertForTokenClassification, 0, 5)(x)
    assert logits.shape == (2, T, 5)
    start, end, att, states = small_model(BertForQuestionAnswering)(
        x, seg, return_hidden_states=True
    )
    assert start.shape == (2, T) and end.shape == (2, T)
    assert att is None and isinstance(states, tuple) and len(states) == L + 1
    # every head's output is a NamedTuple with tuples of per-layer tensors, whatever the flags
    for head, args in [
        (BertForPreTraining, ()),
        (BertForSequenceClassification, (3,)),
        (BertForTokenClassification, (5,)),
        (BertForQuestionAnswering, ()),
    ]:
        out = small_model(head, 0, *args)(x, seg, return_attention=True, return_hidden_states=True)
        assert type(out) is type(small_model(head, 0, *args)(x, seg))
        assert isinstance(out.attentions, tuple) and len(out.attentions) == L
        assert all(a.shape == (2, H, T, T) for a in out.attentions)
        assert isinstance(out.hidden_states, tuple) and len(out.hidden_states) == L + 1


def test_classification_heads_read_cls_and_tokens():
    """The sequence head sees only the pooled [CLS] vector; the token head is position-wise."""
    model = small_model(BertForSequenceClassification, 0, 3)
    x = ids(1, T)
    logits = model(x).logits
    pooled = model.bert(x).pooled_output
    torch.testing.assert_close(logits, model.classifier(pooled), rtol=0, atol=0)
    model = small_model(BertForTokenClassification, 0, 5)
    logits = model(x).logits
    torch.testing.assert_close(
        logits, model.classifier(model.bert(x).sequence_output), rtol=0, atol=0
    )


def test_pretraining_loss_is_mlm_plus_nsp_cross_entropy():
    model = small_model(BertForPreTraining)
    x = ids(4, T)
    inputs, labels = mask_tokens(
        x, V, 3, [0, 1, 2], prob=0.5, generator=torch.Generator().manual_seed(0)
    )
    mlm, nsp, *_ = model(inputs)
    nsp_labels = torch.tensor([0, 1, 1, 0])
    chosen = labels != IGNORE_INDEX
    by_hand = (
        -mlm.log_softmax(-1)[chosen].gather(1, labels[chosen][:, None]).mean()
        - nsp.log_softmax(-1).gather(1, nsp_labels[:, None]).mean()
    )
    # cross_entropy's kernels against log_softmax + gather + mean: log-softmax over V, the mean over the
    # chosen tokens, log-softmax over 2, the mean over 4, the sum of the two
    n = int(chosen.sum())
    assert_float_close(
        pretraining_loss(mlm, nsp, labels, nsp_labels), by_hand, terms=V + n + 2 + 4 + 1
    )
    assert_float_close(
        pretraining_loss(mlm, None, labels),
        -mlm.log_softmax(-1)[chosen].gather(1, labels[chosen][:, None]).mean(),
        terms=V + n,
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
    out, weights = layer(x, need_weights=True)
    # torch's kernels against the layer's: one layer over 9 keys, + 3 for GELU written with erf
    assert_float_close(out, x2, terms=layer_terms(T) + 3)
    scores = heads(a.query) @ heads(a.key).transpose(-1, -2) / math.sqrt(D // H)
    # q and k 32, scores over 8 + scaling, of the scores' size (a score error moves a weight by at most
    # twice it), then softmax over 9
    s = max(1.0, scores.abs().max().item())
    assert_float_close(weights, scores.softmax(-1), terms=2 * (D + D // H + 1) + T, scale=s)
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
    # the same arithmetic on 6 real tokens, except for sums with 3 exact zeros, on other shapes (other
    # kernels): 2 layers over <= 9 keys
    assert_float_close(out.sequence_output[:, :6], alone.sequence_output, terms=hidden_terms(L))
    assert_float_close(out.pooled_output, alone.pooled_output, terms=POOLED_TERMS)
    bool_mask = model(padded, attention_mask=mask.bool(), return_attention=True).sequence_output
    assert torch.equal(bool_mask, out.sequence_output)  # 1/0 and True/False mean the same
    # a [B, T, T] mask: query i may attend to keys 0..i only (a causal encoder)
    causal = torch.ones(T, T, dtype=torch.bool).tril()[None]
    att = model(padded, attention_mask=causal, return_attention=True).attentions[0]
    assert (att[0][:, ~causal[0]] == 0).all()


def test_the_fused_path_without_weights_equals_the_path_with_weights():
    """return_attention=False takes torch's fused attention (no [T, T] weights kept); the outputs are
    those of the path that computes and returns the weights, with padding, with a [B, T, T] mask that
    leaves a query nothing to attend to, and in both precisions."""
    model = small_model()
    x = torch.cat([ids(2, 6, low=5), torch.zeros(2, 3, dtype=torch.long)], dim=1)  # [2, 9]
    padding = torch.tensor([[1] * 6 + [0] * 3, [1] * 9])
    nothing = torch.ones(2, T, T, dtype=torch.bool).tril()
    nothing[0, 2] = False  # query 2 of the first row may attend to nothing
    layer = model.encoder.layer[0]
    assert layer(torch.randn(2, T, D))[1] is None  # no weights asked, none computed
    for mask in (None, padding, nothing):
        fused = model(x, attention_mask=mask, return_hidden_states=True)
        weighted = model(x, attention_mask=mask, return_attention=True, return_hidden_states=True)
        assert fused.attentions is None and len(weighted.attentions) == L
        # the fused kernel sums in another order: the embeddings, then layer l over 9 keys
        for layer, (a, b) in enumerate(zip(fused.hidden_states, weighted.hidden_states)):
            assert_float_close(a, b, terms=hidden_terms(layer))
        assert_float_close(fused.pooled_output, weighted.pooled_output, terms=POOLED_TERMS)
    double = model.double()
    a = double(x, attention_mask=nothing).sequence_output
    b = double(x, attention_mask=nothing, return_attention=True).sequence_output
    assert_float_close(a, b, terms=hidden_terms(L))  # float64's eps, as above


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
