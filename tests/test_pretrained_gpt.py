"""Tests of lib/pretrained/gpt.py: a randomly initialized transformers GPT2LMHeadModel, loaded into lib.gpt.GPT,
gives the same logits, loss, attention weights and greedy generations (offline: no download).

transformers 5.x computes attention with torch's SDPA by default and then returns no attention weights;
the reference model is built with attn_implementation="eager", which returns them (output_attentions=True)
and computes the same logits.
"""

import pytest
import torch

from lib.gpt import KVCache, beam_search, greedy_decode
from lib.pretrained import gpt_from_hf
from lib.pretrained.gpt import TRANSPOSED
from tests.tolerance import assert_float_close

transformers = pytest.importorskip("transformers")
V, N_POSITIONS = 97, 48


D, DH = 64, 16  # hf_model: n_embd 64, 4 heads of 16, MLP width 4 x 64


def block_terms(keys):
    """The roundings one block adds (tests/tolerance.py's terms): LN 64 + qkv 64 + scores 16 + softmax
    over the keys + sum over the keys + c_proj 64 + LN 64 + c_fc 64 + c_proj 256."""
    return D + D + DH + keys + keys + D + D + D + 4 * D


def logits_terms(keys, layers=2):
    """The blocks, ln_f 64 and lm_head 64."""
    return layers * block_terms(keys) + D + D


def hf_model(seed=0, **overrides):
    """A small GPT2LMHeadModel whose weights are redrawn larger than GPT-2's initialization (std 0.02 gives
    nearly uniform predictions, on which greedy generation would be a weak test), with random biases and
    LayerNorm gains, so that a swapped or untransposed tensor changes the output."""
    torch.manual_seed(seed)
    config = transformers.GPT2Config(
        **{
            "n_layer": 2,
            "n_head": 4,
            "n_embd": 64,
            "vocab_size": V,
            "n_positions": N_POSITIONS,
            "bos_token_id": None,
            "eos_token_id": None,
            "attn_implementation": "eager",
            **overrides,
        }
    )
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.2 * torch.randn_like(p))
    return model


def ids(*shape, seed=0):
    return torch.randint(0, V, shape, generator=torch.Generator().manual_seed(seed))


def test_config_and_weights_are_copied():
    hf = hf_model()
    gpt = gpt_from_hf(hf)
    c = gpt.config
    assert (c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd) == (V, N_POSITIONS, 2, 4, 64)
    assert c.layer_norm_epsilon == hf.config.layer_norm_epsilon and not gpt.training
    assert gpt.lm_head.weight is gpt.transformer.wte.weight
    theirs = hf.state_dict()
    for name, p in gpt.state_dict().items():
        expected = theirs[name].t() if name.endswith(TRANSPOSED) else theirs[name]
        assert torch.equal(p, expected), name
    # the transposed list is exactly the Conv1D weights: 4 per block
    assert sum(name.endswith(TRANSPOSED) for name in gpt.state_dict()) == 4 * 2


def test_logits_loss_and_attention_equal_transformers():
    hf = hf_model()
    gpt = gpt_from_hf(hf)
    x = ids(3, 30)
    with torch.no_grad():
        ref = hf(x, labels=x, output_attentions=True, output_hidden_states=True)
        logits, loss, attention, _ = gpt(x[:, :-1], targets=x[:, 1:], return_attention=True)
        fused, _, _, hidden = gpt(x, return_hidden_states=True)
    # the two implementations sum in different orders: 2 layers over <= 30 keys
    assert_float_close(fused, ref.logits, terms=logits_terms(30))
    assert_float_close(logits, ref.logits[:, :-1], terms=logits_terms(30))
    assert ref.logits.abs().max() > 1  # not a trivially flat model
    # transformers shifts the labels inside: its loss is ours on idx[:, :-1] -> idx[:, 1:]
    # + the log-softmax over V and the mean over 3 x 29 positions, of the logits' size
    scale = ref.logits.abs().max().item()
    assert_float_close(loss, ref.loss, terms=logits_terms(30) + V + 3 * 29, scale=scale)
    assert len(ref.attentions) == len(attention) == 2
    # eager attention: [B, H, T, T] probabilities
    for ours, theirs in zip(attention, ref.attentions):
        # the layers below, LN 64 + qkv 64 + scores 16 + softmax over 30 (the last block's, the larger)
        terms = block_terms(30) + D + D + DH + 30
        assert_float_close(ours, theirs[:, :, :-1, :-1], terms=terms)
    # hidden states as transformers counts them: the embeddings, each block's output, the last after ln_f
    # (the blocks below over 30 keys, + ln_f 64 for the last)
    assert len(hidden) == len(ref.hidden_states) == 3
    for layer, (ours, theirs) in enumerate(zip(hidden, ref.hidden_states)):
        assert_float_close(ours, theirs, terms=1 + layer * block_terms(30) + D * (layer == 2))
    # and the same logits as transformers' default (SDPA) attention
    sdpa = hf_model(attn_implementation="sdpa")
    with torch.no_grad():
        assert_float_close(gpt_from_hf(sdpa)(x).logits, sdpa(x).logits, terms=logits_terms(30))


def test_untransposed_weights_would_be_wrong():
    # c_proj is square [64, 64], so copying it without the transpose would load silently: check it matters
    hf = hf_model()
    gpt = gpt_from_hf(hf)
    x = ids(2, 12)
    with torch.no_grad():
        good = gpt(x).logits
        w = gpt.transformer.h[0].attn.c_proj.weight
        w.copy_(w.t().clone())
        assert (gpt(x).logits - good).abs().max() > 1e-2


@pytest.mark.parametrize("seed", [0, 1])
def test_greedy_generation_equals_transformers(seed):
    hf = hf_model(seed)
    gpt = gpt_from_hf(hf)
    prompt = ids(2, 5, seed=seed)
    with torch.no_grad():
        ref = hf.generate(prompt, max_new_tokens=30, do_sample=False, pad_token_id=0)
    assert ref.shape == (2, 35)
    assert len(set(ref[0, 5:].tolist())) > 2  # a varied continuation, not one repeated token
    assert torch.equal(greedy_decode(gpt, prompt, 30).tokens, ref[:, 5:])
    assert torch.equal(greedy_decode(gpt, prompt, 30, use_cache=False).tokens, ref[:, 5:])
    assert torch.equal(beam_search(gpt, prompt[:1], 30, beam_width=1).tokens, ref[:1, 5:])


def test_kv_cache_matches_transformers_cache():
    hf = hf_model()
    gpt = gpt_from_hf(hf)
    x = ids(1, 20)
    cache = KVCache()
    with torch.no_grad():
        out = hf(x[:, :12], use_cache=True)
        ours = gpt(x[:, :12], kv_cache=cache).logits
        step = hf(x[:, 12:13], past_key_values=out.past_key_values, use_cache=True)
        ours_step = gpt(x[:, 12:13], kv_cache=cache).logits
    assert_float_close(ours, out.logits, terms=logits_terms(12))  # 2 layers over 12 keys
    assert_float_close(ours_step, step.logits, terms=logits_terms(13))  # over 13
    assert cache.length == 13


def test_bad_input():
    with pytest.raises(TypeError, match="GPT2LMHeadModel"):
        gpt_from_hf(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="activation_function"):
        gpt_from_hf(hf_model(activation_function="relu"))
    with pytest.raises(ValueError, match="n_inner"):
        gpt_from_hf(hf_model(n_inner=100))
    with pytest.raises(ValueError, match="scale_attn_by_inverse_layer_idx"):
        gpt_from_hf(hf_model(scale_attn_by_inverse_layer_idx=True))
    with pytest.raises(ValueError, match="tie_word_embeddings"):
        gpt_from_hf(hf_model(tie_word_embeddings=False))
