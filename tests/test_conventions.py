"""Every model speaks the one vocabulary of lib/__init__.py (issue 21 part 3).

For each model family, on a tiny instance: the argument names of ``forward`` (``input_ids``,
``attention_mask``, ``return_attention``, ``return_hidden_states``; none of the old names), the output a
NamedTuple of the same type whatever the flags, the attention fields named as the table says and each
a tuple with one [B, H, Tq, Tk] tensor per layer (None when not asked for), ``hidden_states`` a tuple of
[B, T, D], and decoding as module functions that take the model first.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Callable

import pytest
import torch

from tests.tolerance import assert_float_close

B, T, S = 2, 5, 6
ATTENTION_FIELDS = {"attentions", "encoder_attentions", "decoder_attentions", "cross_attentions"}
OLD_NAMES = {"idx", "ids", "lengths", "mask", "docs", "output_attentions", "output_hidden_states"}
OLD_FIELDS = {"attention", "attn", "alpha", "weights", "word_weights", "sentence_weights", "states"}


@dataclass
class Case:
    name: str
    build: Callable[[], torch.nn.Module]
    args: Callable[[], tuple]  # positional inputs of forward
    attention: dict  # field -> (H, Tq, Tk) of every layer, or a callable check
    layers: int
    single_stream: bool = True  # takes input_ids
    padding: bool = True  # takes attention_mask
    hidden: tuple | None = None  # (n_entries, T, D) when the model offers hidden states
    hidden_flag: bool = True  # hidden states behind return_hidden_states (ELMo always returns them)


def ids(V=11, b=B, t=T):
    return torch.randint(1, V, (b, t), generator=torch.Generator().manual_seed(0))


def _gpt():
    from lib.gpt import GPT, GPTConfig

    return GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8, dropout=0.0))


def _bert_config():
    from lib.bert import BertConfig

    return BertConfig(
        vocab_size=11,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=16,
    )


def _bert():
    from lib.bert import Bert

    return Bert(_bert_config())


def _bert_head(cls_name, **kw):
    def build():
        from lib import bert_heads

        return getattr(bert_heads, cls_name)(_bert_config(), **kw)

    return build


def _albert():
    from lib.albert import Albert, AlbertConfig

    return Albert(
        AlbertConfig(
            vocab_size=11,
            embedding_size=4,
            hidden_size=8,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=16,
            max_position_embeddings=16,
        )
    )


def _transformer():
    from lib.transformer import Transformer, TransformerConfig

    return Transformer(
        TransformerConfig(
            11, 13, d_model=8, n_heads=2, n_layers=2, d_ff=16, dropout=0.0, max_len=16
        )
    )


def _seq2seq():
    from lib.seq2seq import BahdanauDecoder, Encoder, Seq2Seq

    return Seq2Seq(Encoder(11, 4, 5), BahdanauDecoder(13, 4, 6, 10, 7))


def _captioner():
    from lib.captioning import Captioner

    return Captioner(13, d_feature=8, d_emb=4, d_hidden=8, d_attn=4)


def _han():
    from lib.han import HierarchicalAttentionNetwork

    return HierarchicalAttentionNetwork(11, n_classes=3, d_emb=4, d_word=4, d_sentence=4, d_attn=4)


def _rnnlm():
    from lib.rnnlm import RNNLM

    return RNNLM(11, d_emb=4, d_hidden=8)


def _rnn_classifier():
    from lib.rnn_classifier import RNNClassifier

    return RNNClassifier(11, n_classes=3, d_emb=4, d_hidden=8)


def _bilm():
    from lib.elmo import BiLM, ELMoConfig

    return BiLM(ELMoConfig(vocab_size=11, word_dim=4, hidden_dim=8, n_layers=2, dropout=0.0))


def _llama():
    from lib.llama import Llama, LlamaConfig

    return Llama(LlamaConfig.small(vocab_size=11, max_position_embeddings=8, qk_norm=True))


def _gpt_classifier():
    from lib.gpt import GPTClassifier

    return GPTClassifier(_gpt(), n_classes=3)


def _playground():
    from lib.playground import PlaygroundConfig, PlaygroundModel

    return PlaygroundModel(PlaygroundConfig(n_layers=2, n_heads=2, d_model=16))


IMAGES = torch.rand(B, 3, 32, 32, generator=torch.Generator().manual_seed(1))
DOCS = torch.randint(1, 11, (B, 3, 4), generator=torch.Generator().manual_seed(2))

CASES = [
    Case(
        "GPT", _gpt, lambda: (ids(),), {"attentions": (2, T, T)}, 2, padding=False, hidden=(3, T, 8)
    ),
    Case(
        "Llama",
        _llama,
        lambda: (ids(),),
        {"attentions": (4, T, T)},
        2,
        padding=False,
        hidden=(3, T, 64),
    ),
    Case("GPTClassifier", _gpt_classifier, lambda: (ids(),), {"attentions": (2, T, T)}, 2),
    Case("Bert", _bert, lambda: (ids(),), {"attentions": (2, T, T)}, 2, hidden=(3, T, 8)),
    Case(
        "BertForPreTraining",
        _bert_head("BertForPreTraining"),
        lambda: (ids(),),
        {"attentions": (2, T, T)},
        2,
        hidden=(3, T, 8),
    ),
    Case(
        "BertForSequenceClassification",
        _bert_head("BertForSequenceClassification", num_labels=3),
        lambda: (ids(),),
        {"attentions": (2, T, T)},
        2,
        hidden=(3, T, 8),
    ),
    Case(
        "BertForTokenClassification",
        _bert_head("BertForTokenClassification", num_labels=3),
        lambda: (ids(),),
        {"attentions": (2, T, T)},
        2,
        hidden=(3, T, 8),
    ),
    Case(
        "BertForQuestionAnswering",
        _bert_head("BertForQuestionAnswering"),
        lambda: (ids(),),
        {"attentions": (2, T, T)},
        2,
        hidden=(3, T, 8),
    ),
    Case("Albert", _albert, lambda: (ids(),), {"attentions": (2, T, T)}, 2, hidden=(3, T, 8)),
    Case(
        "Transformer",
        _transformer,
        lambda: (ids(11, B, S), ids(13)),
        {
            "encoder_attentions": (2, S, S),
            "decoder_attentions": (2, T, T),
            "cross_attentions": (2, T, S),
        },
        2,
        single_stream=False,
        padding=False,
    ),
    Case(
        "Seq2Seq",
        _seq2seq,
        lambda: (ids(11, B, S), torch.tensor([S, S - 2]), ids(13)),
        {"cross_attentions": (1, T, S)},
        1,
        single_stream=False,
        padding=False,
    ),
    Case(
        "Captioner",
        _captioner,
        lambda: (IMAGES, ids(13)),
        {"cross_attentions": (1, T, None)},
        1,
        single_stream=False,
        padding=False,
    ),
    Case(
        "HierarchicalAttentionNetwork",
        _han,
        lambda: (DOCS,),
        {"word_attentions": None, "sentence_attentions": None},
        1,
    ),
    Case("RNNLM", _rnnlm, lambda: (ids(),), {}, 0),
    Case("RNNClassifier", _rnn_classifier, lambda: (ids(),), {}, 0),
    Case("BiLM", _bilm, lambda: (ids(),), {}, 0, hidden=(3, T, 16), hidden_flag=False),
    Case(
        "PlaygroundModel",
        _playground,
        lambda: (torch.randint(0, 16, (B, 8)),),
        {"attentions": (2, 8, 8)},
        2,
        padding=False,
    ),
]


def params_of(model) -> dict:
    return inspect.signature(type(model).forward).parameters


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_forward_takes_the_vocabulary(case):
    params = params_of(case.build())
    names = list(params)[1:]
    assert not OLD_NAMES & set(names), f"{case.name}.forward still takes {OLD_NAMES & set(names)}"
    if case.single_stream:
        assert names[0] == "input_ids", names
    if case.padding:
        assert "attention_mask" in names, names
    if case.attention:
        assert "return_attention" in names and params["return_attention"].default is False
    if case.hidden is not None and case.hidden_flag:
        assert "return_hidden_states" in names and params["return_hidden_states"].default is False


def _is_layer_tuple(value, shape, layers):
    assert isinstance(value, tuple) and len(value) == layers, type(value)
    for w in value:
        assert w.dim() == 4 and w.shape[0] == B, w.shape
        H, Tq, Tk = shape
        assert w.shape[1] == H and w.shape[2] == Tq and (Tk is None or w.shape[3] == Tk), w.shape
        # rows are distributions: softmax's sum over Tk + this sum over Tk, summing to 1
        rows = w.sum(-1)[w.sum(-1) > 0]
        assert_float_close(rows, torch.ones_like(rows), terms=2 * w.shape[-1], scale=1)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_outputs_speak_the_vocabulary(case):
    torch.manual_seed(0)
    model = case.build().eval()
    args = case.args()
    names = list(params_of(model))
    with torch.no_grad():
        plain = model(*args)
        asked = model(*args, return_attention=True) if "return_attention" in names else plain
    assert hasattr(plain, "_fields"), (
        f"{case.name}: expected a NamedTuple, got {type(plain).__name__}"
    )
    assert type(asked) is type(plain), "the return type must not depend on a flag"
    fields = set(plain._fields)
    assert not OLD_FIELDS & fields, f"{case.name}: old field names {OLD_FIELDS & fields}"
    # scores are "logits" (or named per head: mlm_logits, start_logits, forward_logits); encoders
    # without a head (Bert, Albert) return their sequence_output
    assert any(f.endswith("logits") for f in fields) or "sequence_output" in fields, plain._fields
    for field, shape in case.attention.items():
        assert getattr(plain, field) is None, f"{case.name}.{field} must be None unless asked for"
        if shape is not None:
            _is_layer_tuple(getattr(asked, field), shape, case.layers)
        else:
            assert isinstance(getattr(asked, field), tuple)
    extra = {f for f in fields if "attention" in f} - set(case.attention)
    assert not extra, f"{case.name}: attention fields {extra} not in the table"
    if case.hidden is not None:
        out = model(*args, return_hidden_states=True) if case.hidden_flag else plain
        hs = out.hidden_states
        n, t, d = case.hidden
        assert isinstance(hs, tuple) and len(hs) == n, (
            type(hs),
            len(hs) if isinstance(hs, tuple) else None,
        )
        assert all(h.shape == (B, t, d) for h in hs), [tuple(h.shape) for h in hs]
        if case.hidden_flag:
            assert plain.hidden_states is None


DECODERS = {
    "lib.gpt": ("greedy_decode", "sample", "beam_search"),
    "lib.llama": ("greedy_decode", "sample", "beam_search"),
    "lib.seq2seq": ("greedy_decode", "beam_search"),
    "lib.transformer": ("greedy_decode", "beam_search"),
    "lib.captioning": ("greedy_decode",),
    "lib.rnnlm": ("sample",),
}


@pytest.mark.parametrize("module", DECODERS)
def test_decoding_is_module_functions_that_take_the_model_first(module):
    mod = importlib.import_module(module)
    assert callable(getattr(mod, "step_function")), f"{module} has no step_function"
    for name in DECODERS[module]:
        fn = getattr(mod, name)
        assert inspect.isfunction(fn), f"{module}.{name}"
        assert next(iter(inspect.signature(fn).parameters)) == "model", f"{module}.{name}"


def test_no_model_decodes_by_a_method():
    from lib.gpt import GPT
    from lib.llama import Llama

    for model in (GPT, Llama):
        for method in ("generate", "beam_search", "greedy_decode", "sample"):
            assert not hasattr(model, method), f"{model.__name__}.{method}: decoding is a function"


def test_decoded_names_its_attention_fields_as_the_table():
    from lib.decoding import Decoded

    assert Decoded._fields == ("tokens", "log_prob", "attentions")


# The checks of lib.attention's building blocks (split_heads, merge_heads, masked_softmax,
# attend, scaled_dot_product_attention, the score functions and modules, MultiHeadAttention.forward).
# A model checks its input once at its own forward; the attention layers inside it call the unchecked
# computations (``_masked_softmax``, ``_attend``, ...; modules built with ``check_inputs=False``), so
# none of these runs during a forward pass of any model, nor at any step of an RNN decoder (whose
# own step check, ``check_decoder_step``, runs only when a decoder's public ``step`` is called).
LAYER_CHECKS = (
    "check_split_heads_args",
    "check_merge_heads_args",
    "check_scores_and_mask",
    "check_attend_args",
    "check_attention_args",
    "check_query_key",
    "check_score_module_inputs",
    "check_location_score_inputs",
    "check_mha_inputs",
)


def _seq2seq_with(decoder):
    def build():
        from lib import hard_attention, seq2seq

        make = {
            "luong-dot-local": lambda: seq2seq.LuongDecoder(13, 4, 10, 10, score="dot", window=2),
            "luong-general": lambda: seq2seq.LuongDecoder(13, 4, 6, 10, score="general"),
            "luong-concat": lambda: seq2seq.LuongDecoder(13, 4, 6, 10, score="concat"),
            "hard": lambda: hard_attention.HardAttentionDecoder(13, 4, 6, 10, 7),
        }[decoder]
        return seq2seq.Seq2Seq(seq2seq.Encoder(11, 4, 5), make())

    return build


SEQ2SEQ_ARGS = CASES[[c.name for c in CASES].index("Seq2Seq")].args
LAYER_CASES = CASES + [
    Case(f"Seq2Seq-{d}", _seq2seq_with(d), SEQ2SEQ_ARGS, {}, 1)
    for d in ("luong-dot-local", "luong-general", "luong-concat", "hard")
]


def _record_layer_checks(monkeypatch) -> list:
    import lib.attention
    import lib.positional
    import lib.seq2seq

    calls = []
    for module, name in [(lib.attention, n) for n in LAYER_CHECKS] + [
        (lib.seq2seq, "check_decoder_step"),
        (lib.positional, "check_position_input"),
    ]:
        check = getattr(module, name)
        monkeypatch.setattr(
            module,
            name,
            lambda *a, _name=name, _check=check, **k: calls.append(_name) or _check(*a, **k),
        )
    return calls


@pytest.mark.parametrize("case", LAYER_CASES, ids=[c.name for c in LAYER_CASES])
def test_layers_do_not_check_again(case, monkeypatch):
    import lib.attention

    calls = _record_layer_checks(monkeypatch)
    model = case.build().eval()
    flags = [{}]
    if "return_attention" in inspect.signature(model.forward).parameters:
        flags.append({"return_attention": True})
    for kwargs in flags:
        with torch.no_grad():
            model(*case.args(), **kwargs)
    assert calls == [], f"{case.name}: layer checks ran during forward: {sorted(set(calls))}"
    # the recorder itself works: a public building block still checks its input
    lib.attention.split_heads(torch.zeros(1, 2, 4), 2)
    assert calls == ["check_split_heads_args"]


def test_rnn_decoding_does_not_check_again(monkeypatch):
    """Greedy and beam decoding run the same steps as teacher forcing: no layer check either."""
    from lib import captioning, seq2seq

    calls = _record_layer_checks(monkeypatch)
    torch.manual_seed(0)
    src, src_lengths, _ = SEQ2SEQ_ARGS()
    for build in (_seq2seq, _seq2seq_with("luong-dot-local"), _seq2seq_with("luong-concat")):
        model = build().eval()
        seq2seq.greedy_decode(model, src, src_lengths, 4, bos_id=1, eos_id=2)
        seq2seq.beam_search(model, src[:1], src_lengths[:1], 4, bos_id=1, eos_id=2, beam_width=2)
    captioning.greedy_decode(_captioner(), IMAGES, 4, bos_id=1, eos_id=2)
    assert calls == [], f"layer checks ran during decoding: {sorted(set(calls))}"
    # a decoder's public step still checks its arguments
    model = _seq2seq()
    enc = model.encode(src, src_lengths)
    model.decoder.step(src[:, 0].clamp(max=12), model.decoder.init_state(enc.summary), *enc[::2])
    assert calls == ["check_decoder_step"]


def test_score_modules_still_check_when_called_directly():
    from lib.attention import AdditiveScore, GeneralScore, LocationScore

    q, k = torch.zeros(2, 3, 4), torch.zeros(2, 5, 7)
    with pytest.raises(ValueError, match="6"):
        GeneralScore(4, 6)(q, k)
    with pytest.raises(ValueError, match="6"):
        AdditiveScore(4, 6, 3)(q, k)
    with pytest.raises(ValueError):
        LocationScore(4, 6)(q, k)
