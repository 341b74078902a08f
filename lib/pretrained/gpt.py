"""Load a transformers ``GPT2LMHeadModel`` (for example OpenAI's GPT-2 from the hub) into :class:`lib.gpt.GPT`.

Both models use the same parameter names (``transformer.wte.weight``, ``transformer.h.0.attn.c_attn.weight``,
...), because lib.gpt names its submodules after GPT-2's checkpoint. The one difference is the layout of
the four linear layers of each block: OpenAI's code, and transformers after it, store them as a "Conv1D"
whose weight is [in, out] (y = x W + b), while nn.Linear stores [out, in] (y = x W^T + b). Those four
weights, listed in ``TRANSPOSED``, are transposed on the way in; everything else is copied as it is.
"""

import torch
from torch import nn

from lib._checks.pretrained import check_hf_gpt2, check_state_dicts_match
from lib.gpt import GPT, GPTConfig

__all__ = ["gpt_from_hf", "TRANSPOSED"]

# The Conv1D weights of every block, stored [in, out] by transformers and [out, in] by nn.Linear.
TRANSPOSED = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")

# Entries of transformers' state dict that are not parameters of the model (older versions kept the causal
# mask as a buffer called attn.bias / attn.masked_bias); lib.gpt builds its mask with causal_mask instead.
_IGNORED = (".attn.bias", ".attn.masked_bias")


def _config_from_hf(hf_config) -> GPTConfig:
    """GPTConfig from a transformers GPT2Config (its options checked by ``check_hf_gpt2``)."""
    return GPTConfig(
        vocab_size=hf_config.vocab_size,
        block_size=hf_config.n_positions,
        n_layer=hf_config.n_layer,
        n_head=hf_config.n_head,
        n_embd=hf_config.n_embd,
        dropout=hf_config.resid_pdrop,
        layer_norm_epsilon=hf_config.layer_norm_epsilon,
    )


def gpt_from_hf(model: nn.Module) -> GPT:
    """A :class:`lib.gpt.GPT` with the weights of a transformers ``GPT2LMHeadModel``, in eval mode.

    The config is read from ``model.config`` (vocab_size, n_positions -> block_size, n_layer, n_head, n_embd,
    layer_norm_epsilon; resid_pdrop -> dropout, lib.gpt having one rate where GPT-2 has three). The four
    Conv1D weights per block in ``TRANSPOSED`` are transposed; ``lm_head.weight`` is tied to
    ``transformer.wte.weight`` in both models and is copied once. Every parameter of the result is checked
    to be filled (a missing or extra key raises ValueError). Typical use, online only:
    ``gpt_from_hf(transformers.GPT2LMHeadModel.from_pretrained("gpt2"))``.
    """
    check_hf_gpt2(model)
    gpt = GPT(_config_from_hf(model.config))
    ours = gpt.state_dict()
    theirs = {k: v for k, v in model.state_dict().items() if not k.endswith(_IGNORED)}
    theirs = {k: v.t() if k.endswith(TRANSPOSED) else v for k, v in theirs.items()}  # to [out, in]
    check_state_dicts_match(ours, theirs)
    with torch.no_grad():
        for name, target in ours.items():
            target.copy_(theirs[name])  # state_dict tensors share the parameters' storage
    return gpt.eval()
