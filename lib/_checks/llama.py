"""The input checks of lib.llama, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._checks.gpt import check_lm_input, check_prompt_room
from lib._checks.rope import check_rope_args
from lib._validate import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_probability,
    check_type,
)


def check_llama_config(c, scaling_type: type) -> None:
    """The fields of a ``lib.llama.LlamaConfig`` (its ``__post_init__``); ``scaling_type``:
    lib.rope.Llama3RopeScaling, the type of its rope_scaling."""
    for name in (
        "vocab_size",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "max_position_embeddings",
    ):
        check_int(getattr(c, name), name, 1)
    H, Hkv = c.num_attention_heads, c.num_key_value_heads
    if H % Hkv:
        raise ValueError(f"num_key_value_heads={Hkv} does not divide num_attention_heads={H}")
    check_rope_args(c.head_dim, c.rope_theta, c.rope_scaling, scaling_type, "rope_theta")
    check_choice(c.rope_style, "rope_style", ("halves", "interleaved"))
    if c.sliding_window is not None:
        check_int(c.sliding_window, "sliding_window", 1)
    for name in ("qk_norm", "tie_word_embeddings"):
        check_bool(getattr(c, name), name)
    for name in ("rms_norm_eps", "initializer_range"):
        check_number(getattr(c, name), name, "a number > 0", lambda v: v > 0)
    check_probability(c.dropout, "dropout", "[0, 1)")


def check_llama_inputs(config, input_ids, targets=None, kv_cache=None, cache_type=None) -> None:
    """Llama.forward's arguments, as ``check_gpt_inputs`` with max_position_embeddings as the
    context length; kv_cache a ``cache_type`` (lib.gpt.KVCache), a ``SlidingWindowCache`` only for
    a model with its window."""
    if kv_cache is not None and not isinstance(kv_cache, cache_type):
        raise TypeError(
            f"kv_cache: expected a lib.gpt.KVCache or lib.llama.SlidingWindowCache, got {type(kv_cache).__name__}"
        )
    window = getattr(kv_cache, "window", None)
    if window is not None and window != config.sliding_window:
        raise ValueError(
            f"kv_cache: a SlidingWindowCache of window {window} needs sliding_window={window}, got sliding_window={config.sliding_window}"
        )
    n = config.max_position_embeddings
    limit = f"max_position_embeddings={n}"
    check_lm_input(input_ids, config.vocab_size, n, limit, targets, kv_cache)


def check_llama_decoding(
    model, model_type: type, input_ids, max_new_tokens, one_prompt: bool = False, eos_id=None
):
    """lib.llama's decoders: model a ``model_type`` (lib.llama.Llama), then as
    ``check_gpt_decoding``."""
    check_type(model, "model", model_type)
    c = model.config
    check_llama_inputs(c, input_ids)
    limit = f"max_position_embeddings={c.max_position_embeddings}"
    check_prompt_room(
        input_ids,
        max_new_tokens,
        c.max_position_embeddings,
        limit,
        one_prompt,
        eos_id,
        c.vocab_size,
    )
