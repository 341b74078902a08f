"""Smoke tests of benchmarks/llama.py (benchmark 9) at tiny sizes: that what it measures is measured
right, not how fast anything is. The reference Llama computes lib.llama's loss from the same weights
(so that the throughput ratio compares like with like), the learned-positions model is lib.llama's
without RoPE and nothing else, the GQA cache holds exactly Hkv / H of MHA's bytes, the
sliding-window cache's memory stays the same past the window, and the section renders.
"""

import pytest
import torch

from benchmarks import common, run
from benchmarks import llama as bench
from lib import llama
from lib.gpt import KVCache
from lib.llama import Llama, LlamaConfig, SlidingWindowCache
from tests.test_benchmarks_smoke import check_rows
from tests.tolerance import assert_float_close, float_bound

QUICK = run.QUICK["llama"]


@pytest.fixture(autouse=True)
def keep_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def config(**overrides) -> LlamaConfig:
    """D 32, 4 query heads and 1 key/value head of 8, F 96, 2 layers, 97 tokens, 64 positions."""
    return LlamaConfig(
        **{
            "vocab_size": 97,
            "hidden_size": 32,
            "intermediate_size": 96,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 8,
            "max_position_embeddings": 64,
            "rope_theta": 10000.0,
            **overrides,
        }
    )


def model(c: LlamaConfig, seed=0) -> Llama:
    """Weights redrawn larger than the initialization (std 0.2, norm gains 1 +- 0.2), so that every
    weight visibly moves the output."""
    torch.manual_seed(seed)
    m = Llama(c)
    with torch.no_grad():
        for name, p in m.named_parameters():
            gain = name.endswith("norm.weight")
            p.copy_((1 if gain else 0) + 0.2 * torch.randn_like(p))
    return m


def ids(*shape, seed=1, V=97):
    return torch.randint(0, V, shape, generator=torch.Generator().manual_seed(seed))


def logit_terms(c: LlamaConfig, T: int) -> int:
    """The roundings that can reach one logit when two computations order their sums differently
    (tests/tolerance.py), as tests/test_llama.py counts them: per layer the two RMSNorms (D each),
    q/k/v (D), RoPE (2), the scores (Dh), the softmax and the weighted sum (T each), o_proj (H Dh),
    gate and up (D), the product (2), down (F), the residuals (2); the final norm and lm_head (2 D)."""
    D, H, Dh, Fw = c.hidden_size, c.num_attention_heads, c.head_dim, c.intermediate_size
    layer = D + D + 2 + Dh + 2 * T + H * Dh + 1 + D + D + 2 + Fw + 1
    return c.num_hidden_layers * layer + 2 * D


# --- the reference computes what lib.llama computes -----------------------------------------------


def test_the_reference_computes_lib_llamas_loss_from_the_same_weights():
    c = config()
    ours = model(c)
    ref = bench.load_lib_weights(bench.RefLlama(bench.ref_config(c)), ours)
    assert bench.count_parameters(ref) == bench.count_parameters(ours)
    x = ids(3, 40)
    with torch.no_grad():
        out = ours(x[:, :-1], targets=x[:, 1:])
        logits, loss = ref(x[:, :-1], x[:, 1:])
    assert_float_close(logits, out.logits, terms=logit_terms(c, 39))
    # the loss moves at most twice as far as the logits, plus the roundings of the log of a sum
    # over V and of the mean over B T
    bound = 2 * float_bound(out.logits, logit_terms(c, 39)) + float_bound(out.loss, 97 + 3 * 39)
    assert abs(loss.item() - out.loss.item()) <= bound

    # the comparison can fail: the gate and the value swapped, or no rotation, change the loss
    swapped = bench.RefLlama(bench.ref_config(c))
    bench.load_lib_weights(swapped, ours)
    with torch.no_grad():
        for block in swapped.trf_blocks:
            w1 = block.ff.fc1.weight.clone()
            block.ff.fc1.weight.copy_(block.ff.fc2.weight)
            block.ff.fc2.weight.copy_(w1)
        assert abs(swapped(x[:, :-1], x[:, 1:])[1].item() - out.loss.item()) > 0.01
        ref.cos.fill_(1.0)
        ref.sin.fill_(0.0)
        assert abs(ref(x[:, :-1], x[:, 1:])[1].item() - out.loss.item()) > 0.01


def test_the_reference_trains_as_lib_llama():
    """One AdamW step of each (the benchmark's step) from the same weights: the same loss after."""
    c = config()
    ours = model(c)
    ref = bench.load_lib_weights(bench.RefLlama(bench.ref_config(c)), ours)
    x = ids(2, 17)
    bench._step_fn(ours, x[:, :-1], x[:, 1:])()
    bench._step_fn(ref, x[:, :-1], x[:, 1:])()
    with torch.no_grad():
        after, ref_after = ours(x[:, :-1], x[:, 1:]).loss.item(), ref(x[:, :-1], x[:, 1:])[1].item()
    assert abs(after - ref_after) < 1e-4


def test_the_reference_refuses_what_it_does_not_have():
    with pytest.raises(ValueError, match="window"):
        bench.ref_config(config(sliding_window=8))


# --- learned positions: lib.llama without RoPE, nothing else changed -------------------------------


def test_learned_positions_model_is_lib_llama_without_the_rotation(monkeypatch):
    c = config()
    rope = model(c).eval()
    learned = bench.LearnedPositionsLlama(c).eval()
    missing, unexpected = learned.load_state_dict(rope.state_dict(), strict=False)
    assert missing == ["model.embed_positions.weight"] and unexpected == []
    x = ids(2, 30)
    with torch.no_grad():
        learned.model.embed_positions.weight.zero_()
        with_rope = rope(x).logits
        assert (learned(x).logits - with_rope).abs().max() > 0.01  # RoPE moves the logits
        # with the rotation taken out of lib.llama, the two are the same computation, bit for bit
        monkeypatch.setattr(llama, "apply_rope", lambda t, cos, sin, style: t)
        assert torch.equal(learned(x).logits, rope(x).logits)
        # the position table is added to the embeddings: changing one row changes that position only
        learned.model.embed_positions.weight[5] = 1.0
        moved = (learned(x).logits - rope(x).logits).abs().amax(dim=(0, 2))  # [T]
        assert (moved[:5] == 0).all() and (moved[5:] > 0).all()


# --- the caches --------------------------------------------------------------------------------------


def test_gqa_cache_holds_exactly_a_quarter_of_mhas_bytes():
    gqa, mha = config(), config(num_key_value_heads=4)
    for L in (5, 24):
        sizes = {}
        for name, c in (("gqa", gqa), ("mha", mha)):
            cache = KVCache()
            first = bench.prefill(model(c).eval(), ids(1, L), cache)
            assert first.shape == (1, 1)
            sizes[name] = bench.cache_bytes(cache)
        # 2 (keys, values) x 2 layers x Hkv x Dh 8 x 4 bytes x L, the tensors and the memory held
        assert sizes["gqa"] == (2 * 2 * 1 * 8 * 4 * L,) * 2
        assert sizes["mha"] == (2 * 2 * 4 * 8 * 4 * L,) * 2
        assert sizes["gqa"][0] * 4 == sizes["mha"][0]


def test_decoding_a_copy_leaves_the_prefilled_cache_as_it_was():
    m = model(config()).eval()
    cache = KVCache()
    first = bench.prefill(m, ids(1, 6), cache)
    before = [k.clone() for k in cache.keys]
    tokens = bench.decode(m, bench.copy_of(cache), first, 4)
    assert tokens.shape == (1, 4) and cache.length == 6
    assert all(torch.equal(a, b) for a, b in zip(before, cache.keys))
    assert torch.equal(bench.decode(m, bench.copy_of(cache), first, 4), tokens)  # repeatable
    # the prompt's greedy token, then three more: what lib.llama's own greedy decoding gives
    assert torch.equal(llama.greedy_decode(m, ids(1, 6), 4).tokens, tokens)


def test_the_window_cache_stays_the_same_size_past_the_window():
    W, c = 6, config(sliding_window=6)
    m = model(c).eval()
    lengths = (3, 6, 10, 20, 40)
    start = ids(1, 1)
    rolling, tokens = bench.window_memory(m, SlidingWindowCache(W), lengths, start)
    full, full_tokens = bench.window_memory(m, KVCache(), lengths, start)
    per_token = llama.kv_cache_bytes_per_token(c, torch.float32)  # 2 x 2 x 1 x 8 x 4 = 128
    assert per_token == 128 and tokens.shape == (1, 40)
    assert torch.equal(tokens, full_tokens)  # the window's mask: the same computation
    assert rolling[3] == (3 * per_token, 3 * per_token)  # not full yet
    for P in (6, 10, 20, 40):  # past the window: W - 1 kept, a block of W held, whatever P
        assert rolling[P] == ((W - 1) * per_token, W * per_token)
        assert full[P] == (P * per_token, P * per_token)


# --- the benchmark -----------------------------------------------------------------------------------


def test_llama_benchmark():
    section = bench.run(**QUICK)
    check_rows(section, 1)
    row = section.rows[0]
    assert row["params_lib"] == row["params_ref"]
    tables = {c.split("*")[1]: rows for c, _, rows in section.extra_tables if c.startswith("*")}
    generation = tables["Generation, GQA against MHA"]
    window = tables["The sliding-window cache"]
    rope = tables["RoPE against learned positions"]
    H, Hkv = QUICK["num_attention_heads"], QUICK["num_key_value_heads"]
    assert Hkv / H == 1 / 4
    assert [r["cached"] for r in generation] == list(QUICK["cached"])
    for r in generation:
        assert r["bytes_ratio"] == 0.25 and r["gqa_bytes"] * 4 == r["mha_bytes"]
        assert r["gqa_bytes"] == r["expected_bytes"] and r["held_equal"]
        assert r["gqa_tok_s"] > 0 and r["mha_tok_s"] > 0
    W = QUICK["window"]
    past = [r for r in window if r["seen"] >= W]
    assert len(past) == 3 and len({r["rolling_held"] for r in past}) == 1
    assert all(r["kept"] == W - 1 for r in past)
    assert [r["full_held"] for r in past] == sorted({r["full_held"] for r in past})  # grows
    assert [r["T"] for r in rope] == list(QUICK["rope_lengths"])
    assert all(0 < r["rotation_share"] < 1 for r in rope)
    goals = section.goals
    assert len(goals) == 4 and goals[1]["met"] is True and goals[2]["met"] is True
    text = common.render_section(section)
    assert "GQA / MHA bytes" in text and "0.2500" in text
