"""lib.llama held equal to transformers, offline: transformers' LlamaForCausalLM, Qwen3ForCausalLM
(QK-norm) and MistralForCausalLM (sliding window) built from small configs with random weights,
loaded by key name into lib.llama.Llama (lib/pretrained/llama.py), give the same logits (eager and
SDPA attention, with and without the caches, with grouped-query attention, past the window), loss,
attention weights, hidden states and greedy generations; a checkpoint read with the wrong RoPE
convention or the wrong key/value head order does not. And the presets' parameter counts equal
those of transformers' models built on the meta device from the published config.json values.

The bound is tests/tolerance.py's terms * eps * scale, with terms counted from the computation
(``logit_terms`` in tests/test_llama.py: 1,356 roundings for these models, 1,388 with QK-norm).
Measured on the x86 CPU where these tests were written (float32, logits up to 6.8): the logits
differ by at most 7.7e-6 (eager or SDPA, with or without the cache, either RoPE convention) against
bounds of 1.06e-3 to 1.09e-3, 0.7% of the bound; a wrong convention or head order moves them by
more than 0.1.
"""

import pytest
import torch

import lib.llama
from lib.llama import Llama, LlamaConfig, count_parameters, greedy_decode
from lib.pretrained.llama import PERMUTED, config_from_hf, llama_from_hf
from lib.rope import Llama3RopeScaling, rope_frequencies
from tests.test_llama import logit_terms
from tests.tolerance import assert_float_close

transformers = pytest.importorskip("transformers")
V, WINDOW = 97, 5

SMALL = dict(
    vocab_size=V,
    hidden_size=64,
    intermediate_size=176,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,  # grouped-query attention, G = 2
    head_dim=16,
    max_position_embeddings=128,
    bos_token_id=None,
    eos_token_id=None,
    pad_token_id=None,
)
KINDS = {
    # Llama 3 with its RoPE scaling (original context 64: one frequency kept, one blended) and tied
    "llama": (
        "LlamaConfig",
        "LlamaForCausalLM",
        dict(
            rope_parameters={
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
            tie_word_embeddings=True,
        ),
    ),
    "qwen3": (
        "Qwen3Config",
        "Qwen3ForCausalLM",
        dict(rope_parameters={"rope_type": "default", "rope_theta": 1e6}, rms_norm_eps=1e-6),
    ),
    "mistral": (
        "MistralConfig",
        "MistralForCausalLM",
        dict(rope_parameters={"rope_type": "default", "rope_theta": 1e4}, sliding_window=WINDOW),
    ),
}


def hf_model(kind="llama", impl="eager", seed=0, **overrides):
    """A small transformers model whose weights are redrawn larger than the initialization (std
    0.2, norm gains 1 +- 0.2), so that a swapped or misplaced tensor changes the output."""
    config_name, model_name, options = KINDS[kind]
    config = getattr(transformers, config_name)(
        **{**SMALL, **options, "attn_implementation": impl, **overrides}
    )
    torch.manual_seed(seed)
    model = getattr(transformers, model_name)(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            big = (
                1 + 0.2 * torch.randn_like(p)
                if name.endswith("norm.weight")
                else 0.2 * torch.randn_like(p)
            )
            p.copy_(big)
    return model


def ids(*shape, seed=1):
    return torch.randint(0, V, shape, generator=torch.Generator().manual_seed(seed))


def test_config_and_weights_are_copied():
    for kind in KINDS:
        hf = hf_model(kind)
        ours = llama_from_hf(hf)
        c = ours.config
        assert not ours.training and c.num_key_value_heads == 2 and c.head_dim == 16
        assert c.qk_norm == (kind == "qwen3") and c.sliding_window == (
            WINDOW if kind == "mistral" else None
        )
        assert c.tie_word_embeddings == (kind == "llama")
        assert (ours.lm_head.weight is ours.model.embed_tokens.weight) == (kind == "llama")
        assert c.rope_scaling == (Llama3RopeScaling(8.0, 1.0, 4.0, 64) if kind == "llama" else None)
        theirs = hf.state_dict()
        for name, p in ours.state_dict().items():
            assert torch.equal(p, theirs[name]), name  # copied by name, no transform
        # QK-norm: two more weights per layer, listed in PERMUTED for the other convention
        extra = sum(n.endswith(("q_norm.weight", "k_norm.weight")) for n in ours.state_dict())
        assert extra == (4 if kind == "qwen3" else 0)
        assert sum(n.endswith(PERMUTED) for n in ours.state_dict()) == 4 + extra


def test_llama3_frequencies_equal_transformers():
    hf = hf_model("llama")
    theirs = hf.model.rotary_emb.inv_freq  # float32, computed in float32
    ours = rope_frequencies(16, 500000.0, Llama3RopeScaling(8.0, 1.0, 4.0, 64))
    # a power, a division, the wavelength, the blend: a few float32 roundings of each frequency
    assert_float_close(ours.float() / theirs, torch.ones(8), terms=8)
    assert (ours != rope_frequencies(16, 500000.0)).any()  # the scaling acts on these frequencies


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_logits_loss_attention_and_hidden_states_equal_transformers(kind, impl):
    hf = hf_model(kind, impl)
    ours = llama_from_hf(hf)
    x = ids(3, 24)  # past the window (W = 5) for Mistral
    bound = logit_terms(ours.config, 24)
    eager = impl == "eager"
    with torch.no_grad():
        ref = hf(x, labels=x, output_attentions=eager, output_hidden_states=True)
        out = ours(x, return_attention=True, return_hidden_states=True)
        shifted = ours(x[:, :-1], targets=x[:, 1:])
    assert ref.logits.abs().max() > 1  # not a flat model
    assert_float_close(out.logits, ref.logits, terms=bound)
    # transformers shifts the labels inside: its loss is ours on x[:, :-1] -> x[:, 1:]
    assert_float_close(shifted.loss, ref.loss, terms=bound + V + 3 * 24)
    for h, theirs in zip(out.hidden_states, ref.hidden_states, strict=True):
        assert_float_close(h, theirs, terms=bound)
    if eager:  # [B, H, T, T]: the weights of every query head, GQA's head order included
        for w, theirs in zip(out.attentions, ref.attentions, strict=True):
            assert_float_close(w, theirs, terms=bound, scale=1.0)
        if kind == "mistral":  # the band: query t sees t - W + 1 ... t only
            assert (out.attentions[0][:, :, 10, : 10 - WINDOW + 1] == 0).all()
            assert (out.attentions[0][:, :, 10, 10 - WINDOW + 1 : 11] > 0).all()


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_caches_equal_transformers(kind):
    hf = hf_model(kind, "sdpa")
    ours = llama_from_hf(hf)
    x = ids(2, 20)
    cache = lib.llama.new_cache(ours.config)
    with torch.no_grad():
        full = hf(x).logits
        step = hf(x[:, :8], use_cache=True)
        theirs, past = [step.logits], step.past_key_values
        got = [ours(x[:, :8], kv_cache=cache).logits]
        for t in range(8, 20):  # one token at a time, past the window for Mistral
            step = hf(x[:, t : t + 1], past_key_values=past, use_cache=True)
            theirs.append(step.logits)
            past = step.past_key_values
            got.append(ours(x[:, t : t + 1], kv_cache=cache).logits)
    bound = logit_terms(ours.config, 20)
    assert_float_close(torch.cat(got, 1), torch.cat(theirs, 1), terms=bound)
    assert_float_close(torch.cat(got, 1), full, terms=bound)
    kept = cache.keys[0].shape[2]
    assert cache.length == 20 and kept == (WINDOW - 1 if kind == "mistral" else 20)


@pytest.mark.parametrize("kind", list(KINDS))
def test_greedy_generation_equals_transformers(kind):
    hf = hf_model(kind)
    ours = llama_from_hf(hf)
    prompt = ids(2, 5)
    with torch.no_grad():
        ref = hf.generate(prompt, max_new_tokens=25, do_sample=False, pad_token_id=0)
    assert len(set(ref[0, 5:].tolist())) > 2  # a varied continuation
    assert torch.equal(greedy_decode(ours, prompt, 25).tokens, ref[:, 5:])


def test_the_wrong_rope_convention_fails_against_a_checkpoint():
    """transformers' checkpoints pair (i, i + Dh/2): read as interleaved pairs without permuting the
    q and k rows, the same weights make another model; permuted (``rope_style="interleaved"``), the
    same one."""
    for kind in ("llama", "qwen3"):
        hf = hf_model(kind)
        x = ids(2, 16)
        with torch.no_grad():
            ref = hf(x).logits
            right = llama_from_hf(hf, rope_style="interleaved")
            assert_float_close(right(x).logits, ref, terms=logit_terms(right.config, 16))
            wrong = Llama(right.config).eval()
            wrong.load_state_dict(hf.state_dict(), strict=False)  # no permutation
            assert (wrong(x).logits - ref).abs().max() > 0.1


def test_the_wrong_key_value_head_order_fails_against_a_checkpoint(monkeypatch):
    hf = hf_model("llama")
    ours = llama_from_hf(hf)
    x = ids(2, 16)
    monkeypatch.setattr(lib.llama, "repeat_kv", lambda k, groups: k.repeat(1, groups, 1, 1))
    with torch.no_grad():
        assert (ours(x).logits - hf(x).logits).abs().max() > 0.1


# --- the presets against the published configs ----------------------------------------------------

# config.json of each published model (the fields that set the shapes and the computation), the
# transformers class that reads it, and its parameter count
PUBLISHED = {
    "llama3_2_1b": ("LlamaForCausalLM", 1_235_814_400, dict(  # meta-llama/Llama-3.2-1B
        vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True,
        rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192, "rope_type": "llama3"})),
    "llama3_1_8b": ("LlamaForCausalLM", 8_030_261_248, dict(  # meta-llama/Llama-3.1-8B
        vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
        rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192, "rope_type": "llama3"})),
    "qwen3_0_6b": ("Qwen3ForCausalLM", 596_049_920, dict(  # Qwen/Qwen3-0.6B
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
        num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, sliding_window=None,
        use_sliding_window=False, max_window_layers=28)),
    "mistral_7b": ("MistralForCausalLM", 7_241_732_096, dict(  # mistralai/Mistral-7B-v0.1
        vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=32768,
        rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=4096, tie_word_embeddings=False)),
}  # fmt: skip


@pytest.mark.parametrize("preset", list(PUBLISHED))
def test_presets_equal_the_published_models(preset):
    model_name, count, fields = PUBLISHED[preset]
    hf_config = getattr(transformers, model_name.replace("ForCausalLM", "Config"))(**fields)
    with torch.device("meta"):  # shapes only: no memory, no initialization cost
        hf = getattr(transformers, model_name)(hf_config)
    assert sum(p.numel() for p in hf.parameters()) == count
    ours = getattr(LlamaConfig, preset)()
    assert count_parameters(ours) == count
    assert config_from_hf(hf_config) == ours  # every field, RoPE scaling and window included


def test_bad_input():
    with pytest.raises(TypeError, match="LlamaForCausalLM"):
        llama_from_hf(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="rope_style"):
        llama_from_hf(hf_model("llama"), rope_style="rotate_half")
    with pytest.raises(ValueError, match="hidden_act"):
        llama_from_hf(hf_model("llama", hidden_act="gelu"))
    with pytest.raises(ValueError, match="attention_bias"):
        llama_from_hf(hf_model("llama", attention_bias=True))
    with pytest.raises(ValueError, match="rope_type"):
        llama_from_hf(
            hf_model(
                "llama", rope_parameters={"rope_type": "linear", "rope_theta": 1e4, "factor": 2.0}
            )
        )
    with pytest.raises(ValueError, match="layer_types"):  # Qwen3's window on the last layer only
        llama_from_hf(
            hf_model("qwen3", use_sliding_window=True, sliding_window=4, max_window_layers=1)
        )
