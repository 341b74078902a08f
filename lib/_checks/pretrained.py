"""The input checks of lib.pretrained (gpt, llama), built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_choice


def check_hf_gpt2(model) -> None:
    """TypeError unless ``model`` is a transformers GPT2LMHeadModel; ValueError for the options of
    its config that lib.gpt.GPT does not implement."""
    if type(model).__name__ != "GPT2LMHeadModel" or not hasattr(model, "config"):
        raise TypeError(
            f"model: expected a transformers GPT2LMHeadModel, got {type(model).__name__}"
        )
    c = model.config
    unsupported = {
        "activation_function": (c.activation_function, ("gelu_new", "gelu_pytorch_tanh")),
        "n_inner": (c.n_inner, (None, 4 * c.n_embd)),
        "scale_attn_weights": (c.scale_attn_weights, (True,)),
        "scale_attn_by_inverse_layer_idx": (c.scale_attn_by_inverse_layer_idx, (False,)),
        "add_cross_attention": (getattr(c, "add_cross_attention", False), (False,)),
        "tie_word_embeddings": (getattr(c, "tie_word_embeddings", True), (True,)),
    }
    for name, (value, allowed) in unsupported.items():
        if value not in allowed:
            raise ValueError(
                f"model.config.{name}: lib.gpt.GPT implements {' or '.join(map(repr, allowed))}, got {value!r}"
            )


def check_state_dicts_match(ours: dict, theirs: dict, what: str = "lib.gpt.GPT") -> None:
    """ValueError unless the state dict ``theirs`` (already in our layout) has exactly the keys of
    ``ours``, the state dict of the library's model ``what``, each of the same shape."""
    missing, unexpected = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    if missing or unexpected:
        raise ValueError(
            f"model: state dict does not match {what}: missing {missing}, unexpected {unexpected}"
        )
    for name, target in ours.items():
        if theirs[name].shape != target.shape:
            raise ValueError(
                f"model: {name} has shape {tuple(theirs[name].shape)} after loading, {what} expects {tuple(target.shape)}"
            )


def check_hf_llama(model, rope_style) -> None:
    """TypeError unless ``model`` is a transformers LlamaForCausalLM, Qwen3ForCausalLM or
    MistralForCausalLM; ValueError for the options of its config that lib.llama does not implement
    (biases, another activation, a RoPE scaling other than Llama 3's, Qwen3's window on some
    layers only)."""
    kinds = ("LlamaForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM")
    if type(model).__name__ not in kinds or not hasattr(model, "config"):
        raise TypeError(
            f"model: expected a transformers {', '.join(kinds)}, got {type(model).__name__}"
        )
    check_choice(rope_style, "rope_style", ("halves", "interleaved"))
    c = model.config
    rope_type = (getattr(c, "rope_parameters", None) or {}).get("rope_type", "default")
    layer_types = set(getattr(c, "layer_types", None) or ["full_attention"])
    unsupported = {
        "hidden_act": (c.hidden_act, ("silu",)),
        "attention_bias": (getattr(c, "attention_bias", False), (False,)),
        "mlp_bias": (getattr(c, "mlp_bias", False), (False,)),
        "rope_parameters['rope_type']": (rope_type, ("default", "llama3")),
    }
    for name, (value, allowed) in unsupported.items():
        if value not in allowed:
            raise ValueError(
                f"model.config.{name}: lib.llama implements {' or '.join(map(repr, allowed))}, got {value!r}"
            )
    if len(layer_types) > 1:
        raise ValueError(
            f"model.config.layer_types: lib.llama implements one attention type on every layer, got {sorted(layer_types)}"
        )
