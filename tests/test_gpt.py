"""Tests of lib/gpt.py: shapes; properties (causality, the KV cache equals recomputation, decoding,
sampling distributions, padding of the classifier); parameter counts of GPT-2's four sizes; initialization;
bad input; and a tiny model that learns a pattern. Equivalence with transformers' GPT2LMHeadModel is in
tests/test_pretrained_gpt.py.

Tolerances are explicit everywhere; the comment next to each says why it is the right size.
"""

import dataclasses
import itertools
import json
import math
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from lib import decoding, gpt_fast
from lib.gpt import (
    GPT,
    GPTClassifier,
    GPTClassifierOutput,
    GPTConfig,
    GPTOutput,
    KVCache,
    beam_search,
    count_parameters,
    greedy_decode,
    sample,
    sampling_distribution,
    step_function,
)
from lib.gpt_fast import FastKVCache
from lib.train import fit
from tests.tolerance import assert_float_close, float_bound

V, BLOCK = 23, 40
D, DH, D_FF = 32, 8, 128  # small_config: n_embd 32, 4 heads of 8, MLP width 4 x 32


def block_terms(keys):
    """The roundings one block adds to a value (tests/tolerance.py's terms): LN 32 + qkv 32 + scores 8
    + softmax over the keys + weighted sum over the keys + c_proj 32 + LN 32 + c_fc 32 + c_proj 128."""
    return D + D + DH + keys + keys + D + D + D + D_FF


def logits_terms(keys, layers=2):
    """From the token ids to the logits: the blocks, then ln_f 32 + lm_head 32."""
    return layers * block_terms(keys) + D + D


def weights_terms(layer, keys):
    """To layer `layer`'s attention weights: the blocks below, then LN 32 + qkv 32 + scores 8 + softmax."""
    return layer * block_terms(keys) + D + D + DH + keys


def kv_terms(layer, keys):
    """To layer `layer`'s keys and values: the blocks below, then LN 32 + qkv 32."""
    return layer * block_terms(keys) + D + D


def log_prob_bound(model, sequence, n, keys):
    """How far two computations of the log-probability of the last n tokens of `sequence` [1 or B, L]
    (different caches, forwards or kernels) may be apart: each of the n terms log_softmax(logits)[y] is
    off by what the logits are (2 layers over <= `keys` keys) plus the log-softmax over V; the n terms
    are summed (n more). Scale: the size of the logits."""
    with torch.no_grad():
        scale = model(sequence).logits.abs().max().item()
    return float_bound(torch.zeros(()), terms=n * (logits_terms(keys) + V) + n, scale=scale)


def assert_log_probs_close(model, prompt, a, b, keys):
    """Two decodings' log_prob [B] of the same tokens (see log_prob_bound)."""
    bound = log_prob_bound(model, torch.cat([prompt, a.tokens], 1), a.tokens.shape[1], keys)
    torch.testing.assert_close(b.log_prob, a.log_prob, rtol=0, atol=bound)


def small_config(**overrides):
    return GPTConfig(
        **{
            "vocab_size": V,
            "block_size": BLOCK,
            "n_layer": 2,
            "n_head": 4,
            "n_embd": 32,
            "dropout": 0.0,
            **overrides,
        }
    )


def small_model(seed=0, sharp=True, **overrides):
    """A small GPT in eval mode. GPT-2's initialization (std 0.02) gives almost uniform next-token
    distributions, on which greedy decoding and sampling tests would be weak (near-ties everywhere); with
    sharp=True every weight is redrawn larger, so the model has peaked, varied predictions."""
    torch.manual_seed(seed)
    model = GPT(small_config(**overrides)).eval()
    if sharp:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                    p.copy_(1 + 0.2 * torch.randn_like(p))
                else:
                    p.copy_(0.3 * torch.randn_like(p))
    return model


def ids(*shape, seed=0, vocab=V):
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))


def generate(model, prompt, n, **kwargs):
    """The prompt and its sampled continuation [B, T + n] (what GPT.generate returned)."""
    return torch.cat([prompt, sample(model, prompt, n, **kwargs).tokens], dim=1)


def sequence_log_prob(model, tokens, prompt_len):
    """sum over the generated tokens of log p(token | prefix), by one full forward pass: an independent
    way to score what beam search returns (tokens [1, L])."""
    with torch.no_grad():
        log_probs = model(tokens[:, :-1]).logits.log_softmax(-1)  # [1, L-1, V]
    picked = log_probs.gather(-1, tokens[:, 1:, None])[0, :, 0]  # [L-1]
    return picked[prompt_len - 1 :].sum().item()


# ============================================ tier 1: shapes ============================================


def test_forward_shapes_loss_and_attention_format():
    model = small_model()
    x = ids(3, 9)
    out = model(x)
    assert isinstance(out, GPTOutput) and out.logits.shape == (3, 9, V)
    assert out.loss is None and out.attentions is None and out.hidden_states is None
    logits, loss, attention, _ = model(x, targets=ids(3, 9, seed=1), return_attention=True)
    assert loss.shape == () and isinstance(attention, tuple) and len(attention) == 2
    for w in attention:
        assert w.shape == (3, 4, 9, 9)
        # softmax rows of <= 9 probabilities: softmax's sum over 9 + this sum over 9, of terms summing to 1
        assert_float_close(w.sum(-1), torch.ones(3, 4, 9), terms=9 + 9, scale=1)
        assert torch.all(w.triu(1) == 0)  # masked weights are exactly 0
    # explicit (masked_softmax) vs fused attention: two summation orders, 2 layers over 9 keys
    assert_float_close(logits, out.logits, terms=logits_terms(9))
    hidden = model(x, return_hidden_states=True).hidden_states
    assert isinstance(hidden, tuple) and len(hidden) == 3  # the embeddings, then 2 blocks
    assert all(h.shape == (3, 9, 32) for h in hidden)
    torch.testing.assert_close(model.lm_head(hidden[-1]), out.logits, rtol=0, atol=0)
    # the first is the embedding output, the second block 1's output, the last after ln_f
    emb = model.transformer.wte(x) + model.transformer.wpe(torch.arange(9))
    torch.testing.assert_close(hidden[0], emb, rtol=0, atol=0)
    torch.testing.assert_close(hidden[1], model.transformer.h[0](emb)[0], rtol=0, atol=0)
    last = model.transformer.ln_f(model.transformer.h[1](hidden[1])[0])
    torch.testing.assert_close(hidden[2], last, rtol=0, atol=0)


def test_submodule_names_follow_the_gpt2_checkpoint():
    names = set(dict(small_model(sharp=False).named_parameters()))
    for name in (
        "transformer.wte.weight",
        "transformer.wpe.weight",
        "transformer.ln_f.weight",
        "transformer.ln_f.bias",
    ):
        assert name in names
    for sub in (
        "ln_1.weight",
        "ln_1.bias",
        "attn.c_attn.weight",
        "attn.c_attn.bias",
        "attn.c_proj.weight",
        "attn.c_proj.bias",
        "ln_2.weight",
        "ln_2.bias",
        "mlp.c_fc.weight",
        "mlp.c_fc.bias",
        "mlp.c_proj.weight",
        "mlp.c_proj.bias",
    ):
        assert f"transformer.h.1.{sub}" in names
    assert "lm_head.weight" not in names  # tied: listed once, as transformer.wte.weight
    assert len(names) == 4 + 2 * 12


def test_loss_is_next_token_cross_entropy_and_ignores_minus_100():
    model = small_model()
    x, y = ids(2, 8), ids(2, 8, seed=5)
    logits, loss, _, _ = model(x, y)
    by_hand = -logits.log_softmax(-1).gather(-1, y[..., None]).mean()
    # cross_entropy's kernel vs log_softmax + gather + mean: log-softmax over V 23 + the mean over 16
    assert_float_close(loss, by_hand, terms=V + 16)
    y_ignored = y.clone()
    y_ignored[:, 4:] = -100
    _, loss_part, _, _ = model(x, y_ignored)
    by_hand = -logits[:, :4].log_softmax(-1).gather(-1, y[:, :4, None]).mean()
    assert_float_close(loss_part, by_hand, terms=V + 8)  # log-softmax over 23 + the mean over 8
    assert abs(loss_part.item() - loss.item()) > 1e-3  # the ignored positions did change the loss


# ============================================ tier 2: properties =========================================


def test_causality_later_tokens_do_not_change_earlier_logits():
    model = small_model()
    x = ids(2, 12)
    for t in (0, 5, 10):
        changed = x.clone()
        # every later token differs
        changed[:, t + 1 :] = (changed[:, t + 1 :] + 1 + ids(2, 11 - t, seed=t, vocab=V - 1)) % V
        a, b = model(x).logits, model(changed).logits
        # masked keys contribute exp(-inf) = 0 exactly, but the rows share kernels with other data (a
        # kernel may block the keys differently): 2 layers over 12 keys
        assert_float_close(a[:, : t + 1], b[:, : t + 1], terms=logits_terms(12))
        assert (a[:, t + 1 :] - b[:, t + 1 :]).abs().max() > 1e-2  # and the later ones did change
    # with the weights asked for as well
    a = model(x, return_attention=True).logits
    changed = x.clone()
    changed[:, 6] = (changed[:, 6] + 1) % V
    assert_float_close(  # as above: 2 layers over 12 keys
        a[:, :6], model(changed, return_attention=True).logits[:, :6], terms=logits_terms(12)
    )


def test_kv_cache_equals_recomputing_the_whole_sequence():
    model = small_model()
    x = ids(2, 15)
    full, _, full_attention, _ = model(x, return_attention=True)  # [2, 15, V]
    cache = KVCache()
    pieces, chunks = [], [4, 1, 1, 3, 1, 5]  # a prompt, then single tokens and chunks
    start = 0
    for n in chunks:
        out = model(x[:, start : start + n], kv_cache=cache, return_attention=True)
        pieces.append(out.logits)
        for layer in range(2):  # the cached rows of the full weight matrix
            # one chunk's products against the whole sequence's: the layers below, LN, qkv, scores
            # and softmax over <= 15 keys
            assert_float_close(
                out.attentions[layer],
                full_attention[layer][:, :, start : start + n, : start + n],
                terms=weights_terms(layer, 15),
            )
        start += n
        assert cache.length == start and cache.keys[0].shape == (2, 4, start, 8)
    # the chunks' products against the whole sequence's: 2 layers over <= 15 keys
    assert_float_close(torch.cat(pieces, dim=1), full, terms=logits_terms(15))
    # the same with the fused kernel (no weights asked for)
    cache, pieces = KVCache(), []
    for t in range(15):
        pieces.append(model(x[:, t : t + 1], kv_cache=cache).logits)
    assert_float_close(torch.cat(pieces, dim=1), full, terms=logits_terms(15))  # as above
    # the readable cache is torch.cat of the past keys and values: the full pass's keys, from one-token
    # products against the whole sequence's (issue 34: 3 ulps apart on AVX2): LN 32 + qkv 32
    first = model.transformer.h[0]
    h0 = model(x, return_hidden_states=True).hidden_states[0]  # [B, T, D], block 1's input
    q_k_v = first.attn.c_attn(first.ln_1(h0))  # [B, T, 3D]
    keys = q_k_v[..., 32:64].view(2, 15, 4, 8).transpose(1, 2)  # [B, H, T, Dh]
    assert_float_close(cache.keys[0], keys, terms=kv_terms(0, 15))


def test_fast_kv_cache_equals_the_simple_one():
    # lib.gpt_fast.FastKVCache (preallocated, doubling buffers) against lib.gpt.KVCache (torch.cat):
    # the same keys, logits, weights and generated tokens, including past the first doubling (64)
    model = small_model(block_size=150)
    x = ids(2, 150)
    simple, fast = KVCache(), FastKVCache()
    start = 0
    for n in [5, 1, 1, 60, 1, 2, 80]:
        a = model(x[:, start : start + n], kv_cache=simple, return_attention=True)
        b = model(x[:, start : start + n], kv_cache=fast, return_attention=True)
        # the same numbers, but the fast cache's keys are a view of a larger buffer, which a kernel may
        # read in another order: 2 layers over <= 150 keys
        assert_float_close(b.logits, a.logits, terms=logits_terms(150))
        for layer, (wa, wb) in enumerate(zip(a.attentions, b.attentions)):
            assert_float_close(wb, wa, terms=weights_terms(layer, 150))
        start += n
        assert simple.length == fast.length == start
    # layer 0's keys and values: the same c_attn on the same embeddings, chunk by chunk: exact
    torch.testing.assert_close(fast.keys[0], simple.keys[0], rtol=0, atol=0)
    torch.testing.assert_close(fast.values[0], simple.values[0], rtol=0, atol=0)
    # layer 1's come through layer 0's attention over the two caches: block 1 over <= 150 keys, LN, qkv
    assert_float_close(fast.keys[1], simple.keys[1], terms=kv_terms(1, 150))
    assert_float_close(fast.values[1], simple.values[1], terms=kv_terms(1, 150))
    rows = torch.tensor([1, 1, 0])
    simple.reorder(rows)
    fast.reorder(rows)
    assert fast.keys[0].shape == simple.keys[0].shape == (3, 4, 150, 8)
    assert_float_close(fast.values[1], simple.values[1], terms=kv_terms(1, 150))  # as above
    # generation and beam search through the step function: the same tokens
    prompt = ids(3, 4, seed=2)
    for kwargs in (dict(temperature=0), dict(temperature=1.0, top_p=0.9)):
        runs = [
            decoding.sample(
                step_function(model, cache_type=c),
                prompt,
                100,
                generator=torch.Generator().manual_seed(5),
                **kwargs,
            )
            for c in (KVCache, FastKVCache)
        ]
        assert torch.equal(runs[0].tokens, runs[1].tokens)
        assert_log_probs_close(model, prompt, runs[0], runs[1], keys=104)
    beams = [
        decoding.beam_search(step_function(model, cache_type=c), prompt[:1], 70, beam_width=3)
        for c in (KVCache, FastKVCache)
    ]
    assert torch.equal(beams[0].tokens, beams[1].tokens)
    # the fast path as a whole (FastKVCache under inference_mode): the readable path's tokens
    fast_greedy = gpt_fast.greedy_decode(model, prompt, 100)
    readable = greedy_decode(model, prompt, 100)
    assert torch.equal(fast_greedy.tokens, readable.tokens)
    assert_log_probs_close(model, prompt, readable, fast_greedy, keys=104)
    with pytest.raises(ValueError, match="max_new_tokens"):
        gpt_fast.greedy_decode(model, prompt, 0)


def test_fast_forward_equals_the_readable_forward():
    # lib.gpt_fast.fast_forward (GPT.forward with the module calls unrolled) against GPT.forward with
    # the same kind of cache: the same logits, over a prompt (causal mask), one-token steps and a
    # chunk of several tokens after the cache (causal mask with a past), at batch 2
    model = small_model(block_size=150)
    x = ids(2, 150)
    readable, fast = FastKVCache(), FastKVCache(capacity=150)
    start = 0
    for n in [5, 1, 1, 7, 1, 60]:
        want = model(x[:, start : start + n], kv_cache=readable).logits
        with torch.inference_mode():
            got = gpt_fast.fast_forward(model, x[:, start : start + n], fast)
        # the same operations, unrolled, on the same numbers; but F.* calls on other views may take
        # other kernels: 2 layers over <= 75 keys
        assert_float_close(got, want, terms=logits_terms(75))
        start += n
        assert fast.length == readable.length == start
    assert fast._k[0].shape[2] == 150  # room made once: the buffers never grew
    for layer in range(2):  # the blocks below over <= 75 keys, LN 32, qkv 32
        assert_float_close(fast.keys[layer], readable.keys[layer], terms=kv_terms(layer, 75))
        assert_float_close(fast.values[layer], readable.values[layer], terms=kv_terms(layer, 75))


def test_fast_step_function_decodes_as_the_readable_step():
    model = small_model(block_size=150)
    prompt = ids(3, 4, seed=2)
    # sampling and beam search (which reorders the cache) through the fast step: the same tokens
    for kwargs in (dict(temperature=0), dict(temperature=1.0, top_p=0.9)):
        runs = [
            decoding.sample(step, prompt, 100, generator=torch.Generator().manual_seed(5), **kwargs)
            for step in (step_function(model), gpt_fast.fast_step_function(model))
        ]
        assert torch.equal(runs[0].tokens, runs[1].tokens)
        assert_log_probs_close(model, prompt, runs[0], runs[1], keys=104)
    beams = [
        decoding.beam_search(step, prompt[:1], 70, beam_width=3)
        for step in (step_function(model), gpt_fast.fast_step_function(model, capacity=74))
    ]
    assert torch.equal(beams[0].tokens, beams[1].tokens)
    # in training mode with dropout the fast forward (which has no dropout) is not used: the same
    # random draws give the same logits as the readable step
    model = small_model(dropout=0.3).train()
    logits = []
    for step in (step_function(model, cache_type=FastKVCache), gpt_fast.fast_step_function(model)):
        torch.manual_seed(0)
        logits.append(step(prompt, None)[0])
    torch.testing.assert_close(logits[1], logits[0], rtol=0, atol=0)
    with torch.no_grad():
        assert (model(prompt).logits[:, -1] - logits[0]).abs().max() > 1e-3  # dropout did act


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(temperature=0),
        dict(temperature=1.0),
        dict(temperature=0.7, top_k=5),
        dict(temperature=1.3, top_p=0.8),
    ],
)
def test_generate_with_cache_equals_without(kwargs):
    model = small_model()
    prompt = ids(3, 4)
    runs = [
        generate(
            model, prompt, 20, generator=torch.Generator().manual_seed(7), use_cache=c, **kwargs
        )
        for c in (True, False)
    ]
    assert runs[0].shape == (3, 24) and torch.equal(runs[0][:, :4], prompt)
    assert torch.equal(runs[0], runs[1])


def test_greedy_generation_is_the_argmax_of_a_full_forward_pass():
    model = small_model()
    seq = ids(2, 3)
    out = generate(model, seq, 12, temperature=0)
    assert torch.equal(out[:, 3:], greedy_decode(model, seq, 12).tokens)
    for _ in range(12):  # independent, step by step, no cache
        seq = torch.cat([seq, model(seq).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, seq)
    assert len(set(out[0, 3:].tolist())) > 2  # not a constant: the test could fail
    assert torch.equal(
        generate(model, out[:, :3], 12, top_k=1, generator=torch.Generator().manual_seed(0)), out
    )


def test_sampling_is_reproducible_and_follows_the_generator():
    model = small_model()
    prompt = ids(4, 2)
    a = generate(model, prompt, 15, generator=torch.Generator().manual_seed(1))
    b = generate(model, prompt, 15, generator=torch.Generator().manual_seed(1))
    c = generate(model, prompt, 15, generator=torch.Generator().manual_seed(2))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_sampling_frequencies_match_the_distribution():
    # 4000 one-token draws from one prompt: each frequency is within 4 standard errors of its probability
    model = small_model()
    prompt = ids(1, 5).expand(4000, 5)
    probs = sampling_distribution(model(prompt[:1]).logits[0, -1], temperature=1.5, top_k=6)
    draws = generate(
        model, prompt, 1, temperature=1.5, top_k=6, generator=torch.Generator().manual_seed(3)
    )[:, -1]
    freq = torch.bincount(draws, minlength=V).float() / 4000
    se = (probs * (1 - probs) / 4000).sqrt()
    assert torch.all((freq - probs).abs() <= 4 * se + 1e-9)
    assert torch.all(freq[probs == 0] == 0) and int((probs > 0).sum()) == 6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_width_one_is_greedy(seed):
    model = small_model(seed)
    prompt = ids(1, 3, seed=seed)
    tokens, log_prob, _ = beam_search(model, prompt, 10, beam_width=1)
    greedy = generate(model, prompt, 10, temperature=0)
    assert torch.equal(torch.cat([prompt, tokens], dim=1), greedy)
    # the cache's steps against one full pass: 10 log-probs, 2 layers over <= 13 keys
    assert abs(log_prob - sequence_log_prob(model, greedy, 3)) <= log_prob_bound(
        model, greedy, 10, 13
    )
    # the same search through lib.decoding, with and without the cache: the same tokens
    for use_cache in (True, False):
        again = decoding.greedy(step_function(model, use_cache), prompt, 10)
        assert torch.equal(again.tokens, tokens)
        assert abs(again.log_prob - log_prob) <= log_prob_bound(model, greedy, 10, 13)  # as above
    # top-k with k = 1 keeps only the most probable token: sampling is then greedy decoding
    top1 = generate(model, prompt, 10, top_k=1, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(top1, greedy)


def test_beam_search_is_exact_when_the_beam_holds_every_hypothesis():
    # V=4 tokens, 3 new tokens: 64 sequences; a beam of 16 = V^2 never drops a prefix of the best one,
    # so beam search must return the best of all 64, found here by enumeration
    model = small_model(3, vocab_size=4)
    prompt = ids(1, 2, vocab=4)
    scores = {
        seq: sequence_log_prob(model, torch.cat([prompt, torch.tensor([seq])], dim=1), 2)
        for seq in itertools.product(range(4), repeat=3)
    }
    best = max(scores, key=scores.get)
    tokens, log_prob, _ = beam_search(model, prompt, 3, beam_width=16)
    assert tuple(tokens[0].tolist()) == best
    # 3 log-probs, 2 layers over <= 5 keys
    sequence = torch.cat([prompt, tokens], dim=1)
    assert abs(log_prob - scores[best]) <= log_prob_bound(model, sequence, 3, 5)
    greedy = tuple(generate(model, prompt, 3, temperature=0)[0, 2:].tolist())
    assert scores[best] >= scores[greedy]


def test_beam_search_stops_at_eos_and_ranks_with_the_length_penalty():
    model = small_model(4)
    prompt = ids(1, 3, seed=4)
    # the token greedy decoding would pick third: every hypothesis that produces it ends there
    eos = generate(model, prompt, 3, temperature=0)[0, -1].item()
    tokens, log_prob, _ = beam_search(model, prompt, 12, beam_width=3, eos_id=eos)
    new = tokens[0].tolist()
    assert eos not in new[:-1] and (new[-1] == eos or len(new) == 12)
    sequence = torch.cat([prompt, tokens], 1)  # <= 12 log-probs, 2 layers over <= 15 keys
    bound = log_prob_bound(model, sequence, tokens.shape[1], 15)
    assert abs(log_prob - sequence_log_prob(model, sequence, 3)) <= bound
    # with a strong length penalty the longest finished hypothesis wins more easily: never a shorter one
    longer = beam_search(model, prompt, 12, beam_width=3, eos_id=eos, length_penalty=2.0).tokens
    assert longer.shape[1] >= tokens.shape[1]


def test_sampling_distribution_temperature_top_k_top_p():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs.log()
    # temperature 1: the softmax of the logits, i.e. probs back: log + softmax over 4 + renormalizing over
    # 4, of probabilities summing to 1
    assert_float_close(sampling_distribution(logits), probs, terms=1 + 4 + 4, scale=1)
    # temperature T: p_i^(1/T) renormalized
    for T in (0.5, 2.0):
        expected = probs ** (1 / T) / (probs ** (1 / T)).sum()
        # log, / T, softmax over 4, renormalizing over 4; expected: pow, sum over 4, division
        assert_float_close(
            sampling_distribution(logits, temperature=T),
            expected,
            terms=1 + 1 + 4 + 4 + 1 + 4 + 1,
            scale=1,
        )
    assert torch.equal(sampling_distribution(logits, temperature=0), torch.tensor([1.0, 0, 0, 0]))
    assert sampling_distribution(logits, temperature=0.01)[0] > 1 - 1e-6  # the greedy limit
    # the uniform limit
    assert (sampling_distribution(logits, temperature=1000) - 0.25).abs().max() < 1e-3
    # top-k: the k most probable, renormalized
    # against values written exactly (0.5/0.8, 0.3/0.8): log + softmax over 4 + renormalizing over 4
    assert_float_close(
        sampling_distribution(logits, top_k=2), torch.tensor([0.625, 0.375, 0, 0]), terms=9, scale=1
    )
    assert_float_close(sampling_distribution(logits, top_k=10), probs, terms=9, scale=1)
    # top-p: smallest set with mass >= p (0.5 -> 1 token, 0.7 -> 2, 0.9 -> 3, 1 -> all)
    for p, kept in ((0.4, 1), (0.7, 2), (0.9, 3), (1.0, 4)):
        out = sampling_distribution(logits, top_p=p)
        assert int((out > 0).sum()) == kept
        # log + softmax over 4 + renormalizing over 4; expected: a sum over <= 4 and a division
        assert_float_close(out[:kept], probs[:kept] / probs[:kept].sum(), terms=9 + 5, scale=1)
    # top-p acts on the distribution after temperature: at T=0.5 the top token has 0.5^2/0.365 = 0.685
    assert int((sampling_distribution(logits, top_p=0.65) > 0).sum()) == 2
    assert int((sampling_distribution(logits, temperature=0.5, top_p=0.65) > 0).sum()) == 1
    # batched, any order of the vocabulary
    perm = torch.tensor([2, 0, 3, 1])
    batch = torch.stack([logits, logits[perm]])
    out = sampling_distribution(batch, top_p=0.7)
    # permuted: softmax's sum over 4 and the renormalizing sum over 4 in other orders
    assert_float_close(out[1], out[0][perm], terms=4 + 4, scale=1)


def test_classifier_reads_the_last_real_token_and_ignores_padding():
    torch.manual_seed(0)
    clf = GPTClassifier(small_model(), n_classes=3).eval()
    x = ids(2, 6)
    padded = torch.cat([x, ids(2, 4, seed=9)], dim=1)  # 4 arbitrary tokens after the real ones
    mask = torch.arange(10) < torch.tensor([6, 6])[:, None]  # [2, 10]: 6 real tokens, then padding
    out = clf(x)
    assert isinstance(out, GPTClassifierOutput) and out.attentions is None
    alone = out.logits
    assert alone.shape == (2, 3)
    # causal attention: position 5 never sees the padding, so the logits are the same up to the other
    # shapes' kernels: 2 layers over <= 10 keys, ln_f and the head (32, as lm_head)
    assert_float_close(clf(padded, mask).logits, alone, terms=logits_terms(10))
    assert_float_close(clf(padded, mask.long()).logits, alone, terms=logits_terms(10))  # 0/1
    assert (clf(padded).logits - alone).abs().max() > 1e-3  # reading the last position differs
    h = clf.gpt(x, return_hidden_states=True).hidden_states[-1]
    # the same head on the same numbers in the same (contiguous) layout as the classifier's gather: exact
    torch.testing.assert_close(alone, clf.head(h[:, -1].contiguous()), rtol=0, atol=0)
    # rows of different lengths: each reads its own last real token
    ragged = torch.arange(10) < torch.tensor([4, 9])[:, None]
    both = clf(padded, ragged).logits
    assert_float_close(both[0], clf(padded[:1, :4]).logits[0], terms=logits_terms(10))  # as above
    assert_float_close(both[1], clf(padded[1:, :9]).logits[0], terms=logits_terms(10))
    assert len(clf(x, return_attention=True).attentions) == 2
    with pytest.raises(ValueError, match="attention_mask"):
        clf(padded, torch.arange(10).expand(2, 10) >= 3)  # padding before the real tokens
    with pytest.raises(ValueError, match="attention_mask"):
        clf(padded, mask[:, :5])
    empty = mask.clone()
    empty[1] = False  # row 1: all padding, no token to read (its last position would be -1)
    no_token = r"attention_mask: expected at least one real token.*got an empty row \(row 1\)"
    for m in (empty, empty.long()):  # bool and 0/1
        with pytest.raises(ValueError, match=no_token):
            clf(padded, m)
    with pytest.raises(ValueError, match="n_classes"):
        GPTClassifier(small_model(), n_classes=1)


# ======================================= parameter counts, initialization ================================


@pytest.mark.parametrize(
    "preset, expected",
    [
        ("gpt2", 124_439_808),
        ("gpt2_medium", 354_823_168),
        ("gpt2_large", 774_030_080),
        ("gpt2_xl", 1_557_611_200),
    ],
)
def test_parameter_counts_of_gpt2s_four_sizes(preset, expected):
    config = getattr(GPTConfig, preset)()
    assert (config.vocab_size, config.block_size) == (50257, 1024)
    assert count_parameters(config) == expected
    # the formula: V D + block D + L (12 D^2 + 13 D) + 2 D (per block: c_attn 3D^2+3D, attn.c_proj D^2+D,
    # c_fc 4D^2+4D, mlp.c_proj 4D^2+D, two LayerNorms 4D; then ln_f)
    D, L = config.n_embd, config.n_layer
    assert 50257 * D + 1024 * D + L * (12 * D * D + 13 * D) + 2 * D == expected


def test_count_parameters_equals_an_instantiated_model():
    config = small_config(n_layer=3, n_embd=48, n_head=6)
    model = GPT(config)
    assert count_parameters(config) == sum(p.numel() for p in model.parameters())
    # lm_head
    assert count_parameters(config) == sum(p.numel() for p in model.state_dict().values()) - 23 * 48


def test_tied_embeddings_and_gpt2_initialization():
    torch.manual_seed(0)
    model = GPT(small_config(vocab_size=2000, n_embd=256, n_head=8, n_layer=8, block_size=256))
    assert model.lm_head.weight is model.transformer.wte.weight
    # N(0, 0.02^2) with 512,000 (wte) or 196,608 (c_attn) draws: std within 1% (we allow 2%)
    for w in (
        model.transformer.wte.weight,
        model.transformer.wpe.weight,
        model.transformer.h[0].attn.c_attn.weight,
        model.transformer.h[3].mlp.c_fc.weight,
    ):
        assert abs(w.std().item() - 0.02) < 0.02 * 0.02
    # residual projections: 0.02 / sqrt(2 * 8) = 0.005 (65,536 or 262,144 draws: within 2%)
    for block in model.transformer.h:
        for w in (block.attn.c_proj.weight, block.mlp.c_proj.weight):
            assert abs(w.std().item() - 0.005) < 0.005 * 0.02
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        elif name.startswith("transformer.ln") or ".ln_" in name:
            assert torch.all(p == 1), name


def test_gelu_is_the_tanh_approximation():
    x = torch.linspace(-5, 5, 101, dtype=torch.float64)
    formula = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    mlp = small_model().transformer.h[0].mlp
    # torch's kernel vs the formula in float64 ops: x**3, * 0.044715, + x, * sqrt(2/pi), tanh, 1 +,
    # * x, * 0.5: 8 roundings of each side, of the values' size (tanh's 1 + cancels for x << 0 only
    # to values far below it)
    assert_float_close(mlp.gelu(x), formula, terms=2 * 8)
    assert (F.gelu(x) - formula).abs().max() > 1e-5  # the exact GELU differs: this test can fail


def test_dropout_only_in_training_mode():
    model = small_model(dropout=0.3)
    x = ids(2, 10)
    eval_logits = model(x).logits
    torch.testing.assert_close(model(x).logits, eval_logits, rtol=0, atol=0)
    model.train()
    torch.manual_seed(0)
    assert (model(x).logits - eval_logits).abs().max() > 1e-3
    torch.manual_seed(0)
    assert (model(x, return_attention=True).logits - eval_logits).abs().max() > 1e-3


# ============================================ bad input =================================================


def test_bad_config():
    with pytest.raises(ValueError, match="n_embd=30 is not divisible by n_head=4"):
        small_config(n_embd=30)
    for name, value in (
        ("vocab_size", 0),
        ("block_size", 2.5),
        ("n_layer", True),
        ("dropout", 1.0),
        ("layer_norm_epsilon", 0),
    ):
        with pytest.raises((ValueError, TypeError), match=name):  # TypeError: not an int
            small_config(**{name: value})
    with pytest.raises(TypeError, match="config"):
        GPT({"vocab_size": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        small_config().n_layer = 3


def test_bad_model_input():
    model = small_model()
    with pytest.raises(ValueError, match=rf"vocab_size={V}\).*got ids from 0 to {V}"):
        model(torch.tensor([[0, V]]))
    with pytest.raises(ValueError, match=rf"vocab_size={V}"):
        model(torch.tensor([[-1, 3]]))
    with pytest.raises(ValueError, match=rf"41 tokens is longer than block_size={BLOCK}"):
        model(torch.zeros(1, BLOCK + 1, dtype=torch.long))
    with pytest.raises(TypeError, match="token ids"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"shape \[B, T\]"):
        model(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="targets: expected shape"):
        model(ids(2, 5), targets=ids(2, 4))
    with pytest.raises(ValueError, match="targets: expected ids"):
        model(ids(2, 5), targets=torch.full((2, 5), V))
    cache = KVCache()
    model(ids(1, 30), kv_cache=cache)
    with pytest.raises(
        ValueError,
        match=r"plus 30 cached positions is longer than "
        rf"block_size={BLOCK}",
    ):
        model(ids(1, 11), kv_cache=cache)
    with pytest.raises(ValueError, match="kv_cache: holds a batch of 1"):
        model(ids(2, 1), kv_cache=cache)
    fast = FastKVCache()
    model(ids(1, 3), kv_cache=fast)
    with pytest.raises(ValueError, match="kv_cache: holds a batch of 1"):
        model(ids(2, 1), kv_cache=fast)
    with pytest.raises(TypeError, match="kv_cache: expected a lib.gpt.KVCache"):
        model(ids(1, 2), kv_cache=[])


def test_bad_decoding_input():
    model = small_model()
    with pytest.raises(
        ValueError,
        match=r"prompt of 30 tokens \+ 11 new tokens is longer than "
        rf"block_size={BLOCK}",
    ):
        sample(model, ids(1, 30), 11)
    with pytest.raises(ValueError, match="max_new_tokens"):
        sample(model, ids(1, 3), 0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_decode(model, ids(1, 3), 0)
    with pytest.raises(ValueError, match="temperature"):
        sample(model, ids(1, 3), 2, temperature=-1)
    with pytest.raises(ValueError, match="top_k"):
        sample(model, ids(1, 3), 2, top_k=0)
    with pytest.raises(ValueError, match="top_p"):
        sample(model, ids(1, 3), 2, top_p=1.5)
    with pytest.raises(ValueError, match=rf"vocab_size={V}"):
        sample(model, torch.tensor([[V + 3]]), 2)
    with pytest.raises(ValueError, match=r"shape \[1, T\]"):
        beam_search(model, ids(2, 3), 4)
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(model, ids(1, 3), 4, beam_width=0)
    with pytest.raises(ValueError, match="eos_id"):
        beam_search(model, ids(1, 3), 4, eos_id=V)
    with pytest.raises(TypeError, match="model: expected a GPT"):
        sample(GPTClassifier(model, 2), ids(1, 3), 2)
    with pytest.raises(TypeError, match="logits"):
        sampling_distribution([0.1, 0.2])


# ============================================ learning ==================================================


def test_tiny_model_learns_to_continue_a_pattern():
    # sequences a, a+3, a+6, ... (mod 23): after a short training run, greedy generation continues any of them
    torch.manual_seed(0)
    model = GPT(small_config(n_embd=32, n_layer=2))
    starts = torch.arange(V)
    seqs = (starts[:, None] + 3 * torch.arange(17)) % V  # [23, 17]
    x, y = seqs[:, :-1], seqs[:, 1:]
    history = fit(
        model,
        [(x, y)],
        lambda m, b: m(b[0], b[1]).loss,
        steps=150,
        lr=1e-2,
        warmup_steps=10,
        progress=False,
        seed=0,
    )
    assert history.losses[-1] < 0.05 < history.losses[0]
    out = generate(model, seqs[:, :3], 20, temperature=0)
    expected = (starts[:, None] + 3 * torch.arange(23)) % V
    assert torch.equal(out, expected)


def test_the_chapters_auxiliary_language_model_loss_leaves_the_padding_out():
    """Chapter 13's lines for L_3 = L_2 + 0.5 L_1 (the fenced code of the fine-tuning section), run on a
    padded batch: the next-token term is the mean over the real tokens' targets only, and it differs from
    the one-line version that would also predict <pad> after <eos> (review ch13_s17)."""
    chapter = Path(__file__).resolve().parents[1] / "notebooks" / "13_gpt.ipynb"
    markdown = "".join(
        "".join(c["source"])
        for c in json.loads(chapter.read_text())["cells"]
        if c["cell_type"] == "markdown"
    )
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", markdown, re.DOTALL) if "-100" in c]
    torch.manual_seed(0)
    m = GPTClassifier(small_model(), n_classes=2).eval()
    pad = 0
    x = ids(3, 9, seed=4).clamp(min=1)  # [3, 9], no pad id among the real tokens
    lengths = torch.tensor([9, 5, 3])
    mask = torch.arange(9) < lengths[:, None]  # [3, 9]
    x = x.masked_fill(~mask, pad)
    y = torch.tensor([0, 1, 1])
    scope = {"F": F, "torch": torch, "m": m, "b": (x, mask, y)}
    with torch.no_grad():
        exec(code, scope)
        # by hand: the classification loss, and the mean next-token loss over the targets that are real
        # tokens (the positions after <eos>, whose targets are <pad>, left out)
        log_probs = m.gpt(x[:, :-1]).logits.log_softmax(-1)  # [3, 8, V]
        token_losses = -log_probs.gather(-1, x[:, 1:, None])[..., 0]  # [3, 8]
        real = mask[:, 1:]
        expected = F.cross_entropy(m(x, mask).logits, y) + 0.5 * token_losses[real].mean()
        with_padding = F.cross_entropy(m(x, mask).logits, y) + 0.5 * token_losses.mean()
    # means over at most 24 cross-entropies of V = 23 logits, in another order
    assert_float_close(scope["loss"], expected, terms=24 + V, scale=4)
    assert abs(scope["loss"] - with_padding) > 1e-2  # the padding would change it
