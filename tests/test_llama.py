"""Tests of lib/llama.py and lib/rope.py on tiny models: shapes, the components against the
built-ins and the formulas they re-implement, RoPE's two conventions and its relative property,
grouped-query attention's head order, causality and the sliding window's receptive field, the caches against the
full pass (and their bytes), decoding, the presets' sizes, and bad input. Equivalence with
transformers' Llama, Qwen3 and Mistral is in tests/test_pretrained_llama.py.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from lib import llama
from lib.gpt import KVCache
from lib.llama import Llama, LlamaConfig, RMSNorm, SlidingWindowCache, repeat_kv
from lib.positional import relative_rotation
from lib.rope import (
    Llama3RopeScaling,
    apply_rope,
    rope_cos_sin,
    rope_frequencies,
    to_halves,
    to_interleaved,
)
from tests.tolerance import assert_float_close

V = 97


@pytest.fixture(autouse=True)
def no_grad():
    """No test here needs gradients."""
    with torch.no_grad():
        yield


def tiny(**overrides) -> LlamaConfig:
    """The book's small model with a 97-token vocabulary and 64 positions (D 64, 4 query and 2
    key/value heads of 16, F 176, 2 layers)."""
    return LlamaConfig.small(**{"vocab_size": V, "max_position_embeddings": 64, **overrides})


def model(seed=0, **overrides) -> Llama:
    """A tiny model in eval mode whose weights are redrawn larger than the initialization (std 0.2,
    norm gains 1 +- 0.2), so that every weight visibly moves the output."""
    torch.manual_seed(seed)
    m = Llama(tiny(**overrides)).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(
                1 + 0.2 * torch.randn_like(p)
                if name.endswith("norm.weight")
                else 0.2 * torch.randn_like(p)
            )
    return m


def ids(*shape, seed=1):
    return torch.randint(0, V, shape, generator=torch.Generator().manual_seed(seed))


def logit_terms(c: LlamaConfig, T: int) -> int:
    """How many roundings can reach one logit when two computations order their sums differently
    (tests/tolerance.py): per layer, the RMSNorm (D), the q/k/v projections (D), QK-norm (Dh),
    RoPE (2, and 2 T for an angle m w rounded in float32 at m < T), the scores (Dh), the softmax
    and the weighted sum (Tk = T each), o_proj (H Dh), the residual (1), the second RMSNorm (D),
    gate and up (D), silu and the product (2), down (F), the residual (1); then the final norm and
    lm_head (2 D)."""
    D, H, Dh, Fw = c.hidden_size, c.num_attention_heads, c.head_dim, c.intermediate_size
    layer = D + D + Dh * c.qk_norm + 2 + 2 * T + Dh + 2 * T + H * Dh + 1 + D + D + 2 + Fw + 1
    return c.num_hidden_layers * layer + 2 * D


# --- shapes and outputs -------------------------------------------------------------------------


def test_shapes_attentions_hidden_states_and_loss():
    m = model()
    x = ids(3, 10)
    out = m(x[:, :-1], targets=x[:, 1:], return_attention=True, return_hidden_states=True)
    assert out.logits.shape == (3, 9, V)
    assert len(out.attentions) == 2 and all(w.shape == (3, 4, 9, 9) for w in out.attentions)
    for w in out.attentions:  # rows are distributions over the past only
        assert_float_close(w.sum(-1), torch.ones(3, 4, 9), terms=9)
        assert (w.triu(1) == 0).all()
    assert len(out.hidden_states) == 3 and all(h.shape == (3, 9, 64) for h in out.hidden_states)
    assert torch.equal(
        m.lm_head(out.hidden_states[-1]), out.logits
    )  # the last is what lm_head reads
    expected = F.cross_entropy(out.logits.flatten(0, 1), x[:, 1:].flatten())
    assert torch.equal(out.loss, expected)
    plain = m(x)
    assert plain.attentions is None and plain.hidden_states is None and plain.loss is None


def test_no_biases_and_tied_or_untied_embeddings():
    m = Llama(tiny())
    assert not any(name.endswith("bias") for name, _ in m.named_parameters())
    assert m.lm_head.weight is not m.model.embed_tokens.weight
    tied = Llama(tiny(tie_word_embeddings=True))
    assert tied.lm_head.weight is tied.model.embed_tokens.weight
    assert (
        llama.count_parameters(tiny()) - llama.count_parameters(tiny(tie_word_embeddings=True))
        == V * 64
    )
    # initialization: N(0, 0.02^2) weights, RMSNorm gains 1
    w = Llama(tiny(vocab_size=4096)).model.embed_tokens.weight
    assert abs(w.std().item() - 0.02) < 0.001 and abs(w.mean().item()) < 0.001
    assert torch.equal(m.model.norm.weight, torch.ones(64))


# --- RMSNorm and SwiGLU ---------------------------------------------------------------------------


def test_rmsnorm_equals_torch():
    torch.manual_seed(0)
    x = 3 * torch.randn(4, 7, 64) + 1  # a mean far from 0: LayerNorm would differ
    ours = RMSNorm(64, eps=1e-5)
    ref = torch.nn.RMSNorm(64, eps=1e-5)
    with torch.no_grad():
        ours.weight.copy_(torch.randn(64))
        ref.weight.copy_(ours.weight)
    # a sum of D squares, the mean, the root, two products
    assert_float_close(ours(x), ref(x), terms=64 + 4)
    assert (ours(x) - F.layer_norm(x, (64,), ours.weight, None, 1e-5)).abs().max() > 0.1
    # bfloat16 is normalized in float32, then rounded once before the gain
    xb = x.bfloat16()
    expected = (
        ours.weight.bfloat16()
        * (xb.float() * torch.rsqrt(xb.float().pow(2).mean(-1, keepdim=True) + 1e-5)).bfloat16()
    )
    assert ours.bfloat16()(xb).dtype == torch.bfloat16 and torch.equal(ours(xb), expected)


def test_swiglu_is_the_gated_formula_and_the_widths():
    torch.manual_seed(0)
    mlp = llama.SwiGLU(tiny())
    x = torch.randn(2, 5, 64)
    gate, up, down = mlp.gate_proj.weight, mlp.up_proj.weight, mlp.down_proj.weight
    assert gate.shape == up.shape == (176, 64) and down.shape == (64, 176)
    expected = (F.silu(x @ gate.T) * (x @ up.T)) @ down.T
    assert_float_close(mlp(x), expected, terms=64 + 176 + 2)
    swapped = (F.silu(x @ up.T) * (x @ gate.T)) @ down.T  # the gate and the value exchanged
    assert (mlp(x) - swapped).abs().max() > 1e-2
    # Meta's rounding of 8/3 D: Llama 2 7B, Llama 3 8B (and Mistral 7B), Llama 3.2 1B, the book's
    assert llama.swiglu_hidden(4096) == 11008
    assert (
        llama.swiglu_hidden(4096, 1024, 1.3) == 14336 == LlamaConfig.llama3_1_8b().intermediate_size
    )
    assert (
        llama.swiglu_hidden(2048, 256, 1.5) == 8192 == LlamaConfig.llama3_2_1b().intermediate_size
    )
    assert llama.swiglu_hidden(64, 16) == 176 == LlamaConfig.small().intermediate_size


# --- RoPE -----------------------------------------------------------------------------------------


def rotate(x, positions, style="halves", theta=10000.0):
    cos, sin = rope_cos_sin(
        torch.as_tensor(positions), rope_frequencies(x.shape[-1], theta), x.dtype
    )
    return apply_rope(x, cos, sin, style)


@pytest.mark.parametrize("style", ["halves", "interleaved"])
def test_rope_scores_depend_on_m_minus_n_only(style):
    torch.manual_seed(0)
    q, k = torch.randn(16, dtype=torch.float64), torch.randn(16, dtype=torch.float64)
    pairs = [(m, m - 3) for m in (3, 10, 50, 1000)]  # m - n = 3 in every pair
    scores = torch.stack(
        [rotate(q[None], [m], style) @ rotate(k[None], [n], style).T for m, n in pairs]
    )
    assert_float_close(scores, scores[0].expand_as(scores), terms=16 + 4)
    # a rotation: norms kept, and another offset gives another score
    assert_float_close(rotate(q[None], [7], style).norm(), q.norm(), terms=16 + 4)
    other = rotate(q[None], [10], style) @ rotate(k[None], [6], style).T
    assert (other - scores[0]).abs() > 1e-3


def test_interleaved_rope_is_chapter_8s_rotation():
    """RoFormer's rotation of pair (2i, 2i + 1) by m w_i is chapter 8's M_{-m} (whose pairs hold
    (sin, cos), turned the other way)."""
    torch.manual_seed(0)
    x = torch.randn(5, 16)
    for m in (0, 1, 7, 30):
        assert_float_close(
            rotate(x, [m] * 5, "interleaved"), x @ relative_rotation(-m, 16).T, terms=16 + 4
        )


def test_the_two_conventions_agree_after_permuting_the_rows():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 9, 16)  # [B, H, T, Dh]
    positions = torch.arange(9)
    halves_of_x = to_halves(x.transpose(0, -1), 1).transpose(0, -1)  # coordinates reordered
    # the same products on the same numbers: exactly equal
    expected = to_halves(rotate(x, positions, "interleaved").transpose(0, -1), 1).transpose(0, -1)
    assert torch.equal(rotate(halves_of_x, positions, "halves"), expected)
    w = torch.randn(3 * 16, 8)  # a projection of 3 heads
    assert torch.equal(to_interleaved(to_halves(w, 3), 3), w)
    assert torch.equal(to_halves(torch.arange(8.0), 1), torch.tensor([0.0, 2, 4, 6, 1, 3, 5, 7]))


def test_a_model_in_either_convention_is_the_same_model():
    halves = model()
    inter = Llama(tiny(rope_style="interleaved")).eval()
    state = halves.state_dict()
    for name in state:
        if name.endswith(("q_proj.weight", "k_proj.weight")):
            heads = 4 if "q_proj" in name else 2
            state[name] = to_interleaved(state[name], heads)
    inter.load_state_dict(state)
    x = ids(2, 20)
    expected = halves(x).logits
    assert_float_close(inter(x).logits, expected, terms=logit_terms(halves.config, 20))
    # the same weights read with the other convention: another model
    inter.load_state_dict(halves.state_dict())
    assert (inter(x).logits - expected).abs().max() > 0.1


def test_llama3_scaling_keeps_high_divides_low_and_blends_between():
    base = rope_frequencies(16, 500000.0)
    s = Llama3RopeScaling(
        factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=64
    )
    scaled = rope_frequencies(16, 500000.0, s)
    wavelength = 2 * math.pi / base  # 6.3, 32.4, 167, ... positions
    high, low = wavelength < 64 / 4, wavelength > 64 / 1
    assert high.sum() == 1 and low.sum() == 6  # one of each regime, and one between
    assert torch.equal(scaled[high], base[high]) and torch.equal(scaled[low], base[low] / 8)
    between = ~high & ~low
    assert ((scaled[between] < base[between]) & (scaled[between] > base[between] / 8)).all()


# --- grouped-query attention ---------------------------------------------------------------------


def test_repeat_kv_gives_query_head_h_the_key_head_h_over_g():
    k = torch.arange(2.0)[None, :, None, None].expand(1, 2, 3, 4)  # key head j holds the value j
    r = repeat_kv(k, 3)  # [1, 6, 3, 4]
    assert [int(r[0, h, 0, 0]) for h in range(6)] == [0, 0, 0, 1, 1, 1]  # h // G
    wrong = k.repeat(1, 3, 1, 1)  # the classic mistake: h % Hkv
    assert [int(wrong[0, h, 0, 0]) for h in range(6)] == [0, 1, 0, 1, 0, 1]


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_gqa_is_mha_with_the_key_value_heads_copied(kv_heads):
    gqa = model(num_key_value_heads=kv_heads)
    mha = Llama(tiny(num_key_value_heads=4)).eval()
    state = gqa.state_dict()
    for name in state:
        if name.endswith(("k_proj.weight", "v_proj.weight")):  # [Hkv Dh, D] -> [H Dh, D]
            state[name] = (
                state[name]
                .unflatten(0, (kv_heads, 16))
                .repeat_interleave(4 // kv_heads, 0)
                .flatten(0, 1)
            )
    mha.load_state_dict(state)
    x = ids(2, 12)
    assert_float_close(gqa(x).logits, mha(x).logits, terms=logit_terms(gqa.config, 12))
    assert mha.config.num_key_value_heads == 4 and llama.count_parameters(
        gqa.config
    ) < llama.count_parameters(mha.config)


# --- causality and the sliding window -------------------------------------------------------------


def test_causal_no_position_sees_the_future():
    m = model()
    x = ids(1, 16)
    y = x.clone()
    y[0, 9:] = (y[0, 9:] + 1) % V
    a, b = m(x).logits, m(y).logits
    assert_float_close(a[:, :9], b[:, :9], terms=logit_terms(m.config, 16))
    assert (a[:, 9] - b[:, 9]).abs().max() > 1e-2


def test_sliding_window_mask_is_the_band():
    mask = llama.sliding_window_mask(5, window=3)
    expected = torch.tensor(
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]],
        dtype=torch.bool,
    )
    assert torch.equal(mask, expected)
    assert torch.equal(
        llama.sliding_window_mask(2, 3, past=2), expected[3:, 1:]
    )  # after 2 kept keys
    from lib.attention import causal_mask

    assert torch.equal(
        llama.sliding_window_mask(6, window=6, past=3),
        causal_mask(6, past=3) & ~torch.ones(6, 9, dtype=torch.bool).tril(-3),
    )
    assert torch.equal(llama.sliding_window_mask(6, window=9), causal_mask(6))


def test_the_receptive_field_grows_by_the_window_with_each_layer():
    """W = 4, 2 layers: position 20 sees, through two layers, positions 20 - 2 * 3 = 14 ... 20."""
    m = model(sliding_window=4)
    x = ids(1, 21)
    base = m(x).logits[0, 20]
    for t, moves in [(13, False), (14, True), (20, True)]:
        y = x.clone()
        y[0, t] = (y[0, t] + 1) % V
        change = (m(y).logits[0, 20] - base).abs().max()
        assert (change > 1e-3) if moves else (change < 1e-5), (t, change)


# --- the caches -----------------------------------------------------------------------------------


def cached_logits(m, x, chunks):
    """Logits of x fed through a cache in chunks of the given sizes."""
    cache = llama.new_cache(m.config)
    out, start = [], 0
    for n in chunks:
        out.append(m(x[:, start : start + n], kv_cache=cache).logits)
        start += n
    return torch.cat(out, dim=1), cache


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"num_key_value_heads": 1},
        {"qk_norm": True},
        {"sliding_window": 5},
        {"sliding_window": 1},
    ],
)
def test_cache_equals_the_full_pass(overrides):
    m = model(**overrides)
    x = ids(2, 24)
    full = m(x).logits
    for chunks in ([7] + [1] * 17, [3, 8, 1, 12], [1] * 24):
        got, cache = cached_logits(m, x, chunks)
        assert_float_close(got, full, terms=logit_terms(m.config, 24))
        assert cache.length == 24
    window = overrides.get("sliding_window")
    if window is not None:  # the rolling cache keeps W - 1 positions
        assert isinstance(cache, SlidingWindowCache) and cache.keys[0].shape[2] == window - 1
        # and a plain cache (every position kept) gives the same logits
        kept = KVCache()
        plain = torch.cat(
            [m(x[:, :7], kv_cache=kept).logits]
            + [m(x[:, t : t + 1], kv_cache=kept).logits for t in range(7, 24)],
            1,
        )
        assert_float_close(plain, full, terms=logit_terms(m.config, 24))


def cache_bytes(cache) -> int:
    return sum(t.nbytes for t in cache.keys + cache.values)


def test_the_cache_stores_key_value_heads_and_its_bytes():
    m = model()  # 2 layers, Hkv = 2 key/value heads of 16 (H = 4 query heads)
    c = m.config
    per_token = llama.kv_cache_bytes_per_token(c, torch.float32)
    assert per_token == 2 * 2 * 2 * 16 * 4 == 512
    _, cache = cached_logits(m, ids(1, 30), [10] + [1] * 20)
    assert cache.keys[0].shape == (1, 2, 30, 16)  # Hkv heads, not H
    assert cache_bytes(cache) == 30 * per_token
    mha = Llama(tiny(num_key_value_heads=4)).eval()
    _, full_heads = cached_logits(mha, ids(1, 30), [30])
    assert cache_bytes(full_heads) == 2 * cache_bytes(cache)  # G = 2 times more
    # the rolling cache: flat at W - 1 positions beyond the window
    w = model(sliding_window=8)
    sizes = [cache_bytes(cached_logits(w, ids(1, n), [n])[1]) for n in (4, 7, 8, 20, 40)]
    assert sizes == [4 * per_token, 7 * per_token, 7 * per_token, 7 * per_token, 7 * per_token]


def test_kv_cache_bytes_of_the_published_models():
    b = {
        name: llama.kv_cache_bytes_per_token(getattr(LlamaConfig, name)())
        for name in ("llama3_2_1b", "llama3_1_8b", "qwen3_0_6b", "mistral_7b")
    }
    assert b == {
        "llama3_2_1b": 32768,
        "llama3_1_8b": 131072,
        "qwen3_0_6b": 114688,
        "mistral_7b": 131072,
    }


# --- decoding -------------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [{}, {"sliding_window": 4}])
def test_decoding_with_and_without_the_cache(overrides):
    m = model(**overrides)
    prompt = ids(2, 5)
    greedy = llama.greedy_decode(m, prompt, 20)
    assert greedy.tokens.shape == (2, 20) and len(set(greedy.tokens[0].tolist())) > 2
    assert torch.equal(llama.greedy_decode(m, prompt, 20, use_cache=False).tokens, greedy.tokens)
    # the greedy continuation is the argmax of the full pass at every step
    full = m(torch.cat([prompt, greedy.tokens], 1)).logits[:, 4:-1].argmax(-1)
    assert torch.equal(full, greedy.tokens)
    assert torch.equal(llama.beam_search(m, prompt[:1], 20, beam_width=1).tokens, greedy.tokens[:1])
    wide = llama.beam_search(m, prompt[:1], 20, beam_width=4)
    assert wide.log_prob >= greedy.log_prob[0] - 1e-4
    a = llama.sample(m, prompt, 20, top_k=5, generator=torch.Generator().manual_seed(0))
    b = llama.sample(
        m, prompt, 20, top_k=5, generator=torch.Generator().manual_seed(0), use_cache=False
    )
    assert torch.equal(a.tokens, b.tokens)


# --- the presets ----------------------------------------------------------------------------------


def test_presets_parameter_counts():
    """The published counts (tests/test_pretrained_llama.py builds transformers' models from the
    published config.json files and counts the same)."""
    counts = {
        "llama3_2_1b": 1_235_814_400,
        "llama3_1_8b": 8_030_261_248,
        "qwen3_0_6b": 596_049_920,
        "mistral_7b": 7_241_732_096,
        "small": 125_248,
    }
    assert {name: llama.count_parameters(getattr(LlamaConfig, name)()) for name in counts} == counts


# --- bad input ------------------------------------------------------------------------------------


def test_bad_config():
    with pytest.raises(
        ValueError, match="num_key_value_heads=3 does not divide num_attention_heads=8"
    ):
        tiny(num_attention_heads=8, num_key_value_heads=3)
    with pytest.raises(ValueError, match="head_dim=15"):
        tiny(head_dim=15)
    with pytest.raises(ValueError, match="rope_style"):
        tiny(rope_style="rotate_half")
    with pytest.raises(TypeError, match="rope_scaling"):
        tiny(rope_scaling={"rope_type": "yarn", "factor": 4.0})
    with pytest.raises(ValueError, match="low_freq_factor"):
        tiny(rope_scaling=Llama3RopeScaling(8.0, 4.0, 1.0, 8192))
    with pytest.raises(ValueError, match="sliding_window"):
        tiny(sliding_window=0)
    with pytest.raises(TypeError, match="num_hidden_layers"):
        tiny(num_hidden_layers=2.0)
    with pytest.raises(ValueError, match="dropout"):
        tiny(dropout=1.0)
    with pytest.raises(TypeError, match="qk_norm"):
        tiny(qk_norm=1)
    with pytest.raises(TypeError, match="config"):
        Llama({"hidden_size": 64})


def test_bad_inputs():
    m = model()
    with pytest.raises(ValueError, match="input_ids"):
        m(torch.tensor([[0, V]]))
    with pytest.raises(TypeError, match="input_ids"):
        m(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="max_position_embeddings=64"):
        m(ids(1, 65))
    cache = KVCache()
    m(ids(1, 60), kv_cache=cache)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        m(ids(1, 5), kv_cache=cache)
    with pytest.raises(ValueError, match="kv_cache"):
        m(ids(2, 1), kv_cache=cache)
    with pytest.raises(ValueError, match="sliding_window"):
        m(ids(1, 3), kv_cache=SlidingWindowCache(4))
    with pytest.raises(TypeError, match="kv_cache"):
        m(ids(1, 3), kv_cache={})
    with pytest.raises(ValueError, match="targets"):
        m(ids(1, 3), targets=ids(1, 4))
    with pytest.raises(TypeError, match="model"):
        llama.greedy_decode(torch.nn.Linear(2, 2), ids(1, 3), 4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        llama.greedy_decode(m, ids(1, 60), 10)
    with pytest.raises(ValueError, match="one prompt"):
        llama.beam_search(m, ids(2, 3), 4)
    with pytest.raises(ValueError, match="head_dim"):
        rope_frequencies(7)
    with pytest.raises(ValueError, match="theta"):
        rope_frequencies(8, theta=-1.0)
    with pytest.raises(ValueError, match="rope_theta"):
        tiny(rope_theta=0.0)
    with pytest.raises(ValueError, match="weight"):
        to_halves(torch.zeros(10, 4), 2)
