"""The library's input checks, written once (issue 16): every public entry point calls these with
the argument's name, so that bad input gets a ``TypeError`` or ``ValueError`` that names the
argument, what was expected and what was received. Internal calls between the library's own modules
do not check again."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def check_int(x, name: str, minimum: int | None = None) -> None:
    """TypeError unless ``x`` is an int (a bool is not); ValueError if ``x < minimum``."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name}: expected an int, got {type(x).__name__}")
    if minimum is not None and x < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {x}")


def check_id(value, name: str, size: int, what: str = "", optional: bool = False) -> None:
    """ValueError unless ``value`` is an int id in [0, size) (a bool is not); ``what`` names the
    table the id indexes; ``optional`` lets None through."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        table = f" ({what})" if what else ""
        none = "None or " if optional else ""
        raise ValueError(f"{name}: expected {none}an id in [0, {size}){table}, got {value!r}")


def check_ids(
    ids, name: str, size: int, what: str = "the vocabulary", layout: str = "[B, T]", n_dims: int = 2
) -> None:
    """TypeError unless ``ids`` is an integer tensor; ValueError unless it has ``n_dims`` dims, none
    of them empty, and every id is in [0, size) (``what`` names the table the ids index)."""
    if not isinstance(ids, Tensor) or ids.dtype not in (torch.int64, torch.int32):
        got = ids.dtype if isinstance(ids, Tensor) else type(ids).__name__
        raise TypeError(f"{name}: expected a tensor of token ids (torch.long), got {got}")
    if ids.dim() != n_dims or 0 in ids.shape:
        raise ValueError(
            f"{name}: expected shape {layout} with no empty dim, got shape {tuple(ids.shape)}"
        )
    if ids.min() < 0 or ids.max() >= size:
        raise ValueError(
            f"{name}: expected ids in [0, {size}) ({what}), got ids from {ids.min().item()} to {ids.max().item()}"
        )


def check_tensor(
    x,
    name: str,
    layout: str,
    min_dim: int,
    dtype=None,
    dtype_of: str = "",
    width: int | None = None,
    exact: bool = False,
    floating: bool = True,
) -> None:
    """TypeError unless x is a tensor, floating-point if ``floating`` (of `dtype`, that of
    `dtype_of`, if given); ValueError if x.dim() < min_dim (!= min_dim if ``exact``) or (if `width`
    is given) x.shape[-1] != width."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}: expected a torch.Tensor of shape {layout}, got {type(x).__name__}"
        )
    if floating and not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"{name}: expected dtype {dtype} (same as {dtype_of}), got {x.dtype}")
    if x.dim() < min_dim or (exact and x.dim() != min_dim):
        dims = f"{'' if exact else 'at least '}{min_dim} dim{'s' * (min_dim > 1)}"
        raise ValueError(f"{name}: expected shape {layout} ({dims}), got shape {tuple(x.shape)}")
    if width is not None and x.shape[-1] != width:
        raise ValueError(f"{name}: expected shape {layout}, got shape {tuple(x.shape)}")


def check_padding_mask(mask, input_ids: Tensor, name: str = "attention_mask") -> Tensor:
    """The padding mask of right-padded ``input_ids`` [B, T]: bool, or 0/1 integers as Hugging
    Face's ``attention_mask``, of the shape of input_ids, True (1) on a prefix of every row (the
    real tokens). Returns it as bool. TypeError for another dtype; ValueError for another shape,
    other values, or padding before a real token."""
    if not isinstance(mask, Tensor) or mask.is_floating_point() or mask.is_complex():
        got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(
            f"{name}: expected a bool or 0/1 integer tensor [B, T] (True at real tokens), got {got}"
        )
    if mask.shape != input_ids.shape:
        raise ValueError(
            f"{name}: expected the shape of input_ids {tuple(input_ids.shape)}, got {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool:
        if ((mask != 0) & (mask != 1)).any():
            raise ValueError(f"{name}: expected 0/1 values, got {mask.unique().tolist()}")
        mask = mask.bool()
    lengths = mask.sum(1)  # [B]
    prefix = torch.arange(mask.shape[1], device=mask.device) < lengths[:, None]  # [B, T]
    if not torch.equal(prefix, mask):
        raise ValueError(
            f"{name}: expected True on a prefix of each row (right padding), got a row with padding before a real token"
        )
    return mask


# --- lib.gpt -------------------------------------------------------------------------------------


def check_gpt_config(config) -> None:
    """TypeError unless ``config`` is a lib.gpt.GPTConfig; ValueError for sizes < 1, n_embd not
    divisible by n_head, dropout outside [0, 1) or layer_norm_epsilon <= 0."""
    from lib.gpt import GPTConfig  # here: lib.gpt imports this module

    if not isinstance(config, GPTConfig):
        raise TypeError(f"config: expected a GPTConfig, got {type(config).__name__}")
    for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
        check_int(getattr(config, name), name, 1)
    if config.n_embd % config.n_head:
        raise ValueError(f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}")
    if not isinstance(config.dropout, (int, float)) or not 0.0 <= config.dropout < 1.0:
        raise ValueError(f"dropout: expected a probability in [0, 1), got {config.dropout!r}")
    eps = config.layer_norm_epsilon
    if not isinstance(eps, (int, float)) or not eps > 0:
        raise ValueError(f"layer_norm_epsilon: expected a number > 0, got {eps!r}")


def check_gpt_inputs(config, input_ids, targets=None, kv_cache=None) -> None:
    """GPT.forward's arguments: input_ids [B, T] ids in [0, vocab_size) with P cached + T new tokens
    <= block_size; targets (optional) ids of the same shape, -100 allowed (ignored); kv_cache
    (optional) a cache of the same batch."""
    if kv_cache is not None and not (hasattr(kv_cache, "update") and hasattr(kv_cache, "reorder")):
        raise TypeError(
            f"kv_cache: expected a lib.gpt.KVCache (or lib.gpt_fast.FastKVCache), got {type(kv_cache).__name__}"
        )
    V = config.vocab_size
    check_ids(input_ids, "input_ids", V, f"vocab_size={V}")
    P = kv_cache.length if kv_cache is not None else 0
    if P + input_ids.shape[1] > config.block_size:
        cached = f" plus {P} cached positions" if P else ""
        raise ValueError(
            f"input_ids: sequence of {input_ids.shape[1]} tokens{cached} is longer than block_size={config.block_size}, the model's context length"
        )
    keys = kv_cache.keys if kv_cache is not None else []
    if keys and keys[0].shape[0] != input_ids.shape[0]:
        raise ValueError(
            f"kv_cache: holds a batch of {keys[0].shape[0]}, but input_ids has shape {tuple(input_ids.shape)}"
        )
    if targets is None:
        return
    if not isinstance(targets, Tensor) or targets.dtype not in (torch.int64, torch.int32):
        got = targets.dtype if isinstance(targets, Tensor) else type(targets).__name__
        raise TypeError(f"targets: expected a tensor of token ids (torch.long), got {got}")
    if targets.shape != input_ids.shape:
        raise ValueError(
            f"targets: expected shape {tuple(input_ids.shape)} (that of input_ids), got {tuple(targets.shape)}"
        )
    real = targets[targets != -100]
    if real.numel() and (real.min() < 0 or real.max() >= V):
        raise ValueError(
            f"targets: expected ids in [0, vocab_size={V}) or -100 (ignored), got ids from {real.min().item()} to {real.max().item()}"
        )


def check_gpt_decoding(
    model, input_ids, max_new_tokens, one_prompt: bool = False, eos_id=None
) -> None:
    """lib.gpt's decoders: model a lib.gpt.GPT; input_ids a batch of prompts (one if
    ``one_prompt``); max_new_tokens >= 1 with prompt + new tokens <= block_size; eos_id None or
    an id of the vocabulary. The sampling and beam arguments are lib.decoding's to check."""
    from lib.gpt import GPT  # here: lib.gpt imports this module

    if not isinstance(model, GPT):
        raise TypeError(f"model: expected a lib.gpt.GPT, got {type(model).__name__}")
    c = model.config
    check_gpt_inputs(c, input_ids)
    if (
        isinstance(max_new_tokens, bool)
        or not isinstance(max_new_tokens, int)
        or max_new_tokens < 1
    ):
        raise ValueError(f"max_new_tokens: expected an int >= 1, got {max_new_tokens!r}")
    if input_ids.shape[1] + max_new_tokens > c.block_size:
        raise ValueError(
            f"max_new_tokens: prompt of {input_ids.shape[1]} tokens + {max_new_tokens} new tokens is longer than block_size={c.block_size}, the model's context length"
        )
    if one_prompt and input_ids.shape[0] != 1:
        raise ValueError(
            f"input_ids: expected shape [1, T] (one prompt), got shape {tuple(input_ids.shape)}"
        )
    check_id(eos_id, "eos_id", c.vocab_size, f"vocab_size={c.vocab_size}", optional=True)


def check_gpt_classifier(gpt, n_classes) -> None:
    """GPTClassifier's arguments: gpt a lib.gpt.GPT, n_classes an int >= 2."""
    from lib.gpt import GPT  # here: lib.gpt imports this module

    if not isinstance(gpt, GPT):
        raise TypeError(f"gpt: expected a lib.gpt.GPT, got {type(gpt).__name__}")
    check_int(n_classes, "n_classes", 2)


# --- lib.train -----------------------------------------------------------------------------------


def check_schedule(steps, lr, warmup_steps, decay, decays, step=None) -> None:
    """A learning-rate schedule: steps >= 1, lr > 0, 0 <= warmup_steps <= steps, decay one of
    ``decays``; and, if given, 0 <= step < steps."""
    check_int(steps, "steps", 1)
    if not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr: expected a number > 0, got {lr!r}")
    if (
        isinstance(warmup_steps, bool)
        or not isinstance(warmup_steps, int)
        or not 0 <= warmup_steps <= steps
    ):
        raise ValueError(
            f"warmup_steps: expected an int in [0, steps={steps}], got {warmup_steps!r}"
        )
    if decay not in decays:
        raise ValueError(f"decay: expected one of {decays}, got {decay!r}")
    if step is not None and (
        isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < steps
    ):
        raise ValueError(f"step: expected an int in [0, steps={steps}), got {step!r}")


def check_fit(
    model, steps, lr, warmup_steps, decay, decays, clip, weight_decay, stop_after
) -> None:
    """lib.train.fit's arguments: a torch.nn.Module, a schedule (``check_schedule``), clip None or
    > 0, weight_decay >= 0, stop_after None or in 1..steps."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    check_schedule(steps, lr, warmup_steps, decay, decays)
    if clip is not None and not (isinstance(clip, (int, float)) and clip > 0):
        raise ValueError(f"clip: expected None or a number > 0, got {clip!r}")
    if not isinstance(weight_decay, (int, float)) or weight_decay < 0:
        raise ValueError(f"weight_decay: expected a number >= 0, got {weight_decay!r}")
    if stop_after is not None and (
        isinstance(stop_after, bool)
        or not isinstance(stop_after, int)
        or not 1 <= stop_after <= steps
    ):
        raise ValueError(
            f"stop_after: expected None or an integer in 1..steps={steps}, got {stop_after!r}"
        )


def check_loss(loss, step: int, rate: float) -> None:
    """What a loss_fn returned at a training step: a finite scalar tensor (ValueError if not a
    scalar tensor, FloatingPointError if not finite; the weights are then not updated)."""
    if not isinstance(loss, Tensor) or loss.numel() != 1:
        got = f"shape {tuple(loss.shape)}" if isinstance(loss, Tensor) else type(loss).__name__
        raise ValueError(f"loss_fn: expected a scalar tensor, got {got}")
    if not torch.isfinite(loss.detach()).all():
        raise FloatingPointError(
            f"loss_fn: the loss is {loss.item()} at step {step} (learning rate {rate:.3g}); the weights were not updated. Lower lr, clip the gradients or check the data."
        )


# --- lib.decoding --------------------------------------------------------------------------------


def check_sampling(temperature, top_k, top_p, logits=None) -> None:
    """Sampling arguments: temperature a finite number >= 0, top_k None or an int >= 1, top_p None
    or in (0, 1]; logits, if given, a floating-point tensor [..., V]."""
    if logits is not None and (
        not isinstance(logits, Tensor) or not logits.is_floating_point() or logits.dim() < 1
    ):
        got = (
            f"dtype {logits.dtype}, shape {tuple(logits.shape)}"
            if isinstance(logits, Tensor)
            else type(logits).__name__
        )
        raise TypeError(f"logits: expected a floating-point tensor [..., V], got {got}")
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not 0 <= temperature < math.inf
    ):
        raise ValueError(
            f"temperature: expected a finite number >= 0 (0 = greedy), got {temperature!r}"
        )
    if top_k is not None:
        check_int(top_k, "top_k", 1)
    if top_p is not None and (
        isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1
    ):
        raise ValueError(f"top_p: expected None or a number in (0, 1], got {top_p!r}")


def check_decoding(start, max_len, eos_id=None, pad_id=0, beam_width=None) -> None:
    """A decoder's arguments: start a tensor of token ids [B, t] (t >= 1; [1, t] when beam_width
    is given, beam search decoding one sequence), max_len >= 1, eos_id None or an int >= 0, pad_id
    an int >= 0, beam_width (if given) an int >= 1."""
    one = beam_width is not None
    if not isinstance(start, Tensor) or start.dtype not in (torch.int64, torch.int32):
        got = start.dtype if isinstance(start, Tensor) else type(start).__name__
        raise TypeError(f"start: expected a tensor of token ids [B, t], got {got}")
    if start.dim() != 2 or start.shape[1] < 1 or (one and start.shape[0] != 1):
        want = "[1, t] (one sequence)" if one else "[B, t] with t >= 1"
        raise ValueError(f"start: expected shape {want}, got {tuple(start.shape)}")
    check_int(max_len, "max_len", 1)
    if one:
        check_int(beam_width, "beam_width", 1)
    if eos_id is not None:
        check_int(eos_id, "eos_id", 0)
    check_int(pad_id, "pad_id", 0)


def check_length_penalty(length_penalty) -> None:
    """GNMT's alpha: a finite number >= 0."""
    if (
        isinstance(length_penalty, bool)
        or not isinstance(length_penalty, (int, float))
        or not 0 <= length_penalty < math.inf
    ):
        raise ValueError(f"length_penalty: expected alpha >= 0, got {length_penalty!r}")


# --- lib.pretrained.gpt --------------------------------------------------------------------------


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


def check_state_dicts_match(ours: dict, theirs: dict) -> None:
    """ValueError unless the state dict ``theirs`` (already in our layout) has exactly the keys of
    lib.gpt.GPT's ``ours``, each of the same shape."""
    missing, unexpected = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    if missing or unexpected:
        raise ValueError(
            f"model: state dict does not match lib.gpt.GPT: missing {missing}, unexpected {unexpected}"
        )
    for name, target in ours.items():
        if theirs[name].shape != target.shape:
            raise ValueError(
                f"model: {name} has shape {tuple(theirs[name].shape)} after loading, lib.gpt expects {tuple(target.shape)}"
            )
