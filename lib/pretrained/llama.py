"""Load a transformers ``LlamaForCausalLM``, ``Qwen3ForCausalLM`` or ``MistralForCausalLM`` (for
example Llama 3.2 1B, Qwen3 0.6B or Mistral 7B from the hub) into :class:`lib.llama.Llama`.

lib.llama names its submodules after these checkpoints (``model.layers.0.self_attn.q_proj.weight``,
...), stores its linear layers as nn.Linear [out, in] as they do, and rotates the pairs
(i, i + Dh/2) as they do (``rope_style="halves"``): so no tensor needs a transform, and loading is
a copy by name. Asked for ``rope_style="interleaved"`` (the pairs (2i, 2i + 1) of RoFormer and
Meta's original code), the loader permutes the rows of each head of the tensors in ``PERMUTED``
(``lib.rope.to_interleaved``), and the model computes the same function.
"""

import torch
from torch import nn

from lib._checks.pretrained import check_hf_llama, check_state_dicts_match
from lib.llama import Llama, LlamaConfig
from lib.rope import Llama3RopeScaling, to_interleaved

__all__ = ["llama_from_hf", "config_from_hf", "PERMUTED"]

# The tensors whose rows follow RoPE's pairing, permuted head by head when the convention changes.
PERMUTED = (
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.q_norm.weight",
    "self_attn.k_norm.weight",
)


def config_from_hf(hf_config, rope_style: str = "halves") -> LlamaConfig:
    """The LlamaConfig of a transformers LlamaConfig, Qwen3Config or MistralConfig (options checked
    by ``llama_from_hf``). Qwen3's per-head RMSNorm (``q_norm``, ``k_norm``) is ``qk_norm=True``;
    the attention dropout, 0 in the published models and off in eval mode, is not carried over."""
    c = hf_config
    rope = dict(c.rope_parameters)
    scaling = None
    if rope.get("rope_type", "default") == "llama3":
        scaling = Llama3RopeScaling(
            float(rope["factor"]),
            float(rope["low_freq_factor"]),
            float(rope["high_freq_factor"]),
            int(rope["original_max_position_embeddings"]),
        )
    return LlamaConfig(
        vocab_size=c.vocab_size,
        hidden_size=c.hidden_size,
        intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_hidden_layers,
        num_attention_heads=c.num_attention_heads,
        num_key_value_heads=c.num_key_value_heads,
        head_dim=getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads,
        max_position_embeddings=c.max_position_embeddings,
        rms_norm_eps=c.rms_norm_eps,
        rope_theta=float(rope["rope_theta"]),
        rope_scaling=scaling,
        rope_style=rope_style,
        qk_norm=c.model_type == "qwen3",
        sliding_window=getattr(c, "sliding_window", None),
        tie_word_embeddings=bool(c.tie_word_embeddings),
        initializer_range=c.initializer_range,
    )


def llama_from_hf(model: nn.Module, rope_style: str = "halves") -> Llama:
    """A :class:`lib.llama.Llama` with the weights of a transformers ``LlamaForCausalLM``,
    ``Qwen3ForCausalLM`` or ``MistralForCausalLM``, in eval mode; a tied ``lm_head`` stays tied.

    Every tensor is copied by name; with ``rope_style="interleaved"`` those in ``PERMUTED`` are
    first reordered with ``lib.rope.to_interleaved``. Every parameter of the result is checked to be
    filled (a missing or extra key raises ValueError). Typical use, online only:
    ``llama_from_hf(transformers.AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B"))``.
    """
    check_hf_llama(model, rope_style)
    config = config_from_hf(model.config, rope_style)
    ours = Llama(config)
    target = ours.state_dict()
    theirs = dict(model.state_dict())
    if config.tie_word_embeddings:  # one tensor in both models, listed once or twice
        theirs.setdefault("lm_head.weight", theirs["model.embed_tokens.weight"])
    if rope_style == "interleaved":
        heads = {"q_proj": config.num_attention_heads, "k_proj": config.num_key_value_heads}
        for name in [n for n in theirs if n.endswith(PERMUTED)]:
            # a projection holds H (or Hkv) heads of rows; a QK-norm weight is one head of Dh
            theirs[name] = to_interleaved(theirs[name], heads.get(name.split(".")[-2], 1))
    check_state_dicts_match(target, theirs, "lib.llama.Llama")
    with torch.no_grad():
        for name, tensor in target.items():
            tensor.copy_(theirs[name])  # state_dict tensors share the parameters' storage
    return ours.eval()
