"""The library's input-check primitives: every public entry point checks its
arguments with these, naming the argument, so that bad input gets a ``TypeError`` or ``ValueError``
that says the argument, what was expected and what was received, in one style everywhere in lib
and lib.viz (``name: expected ..., got ...``).

This module holds only what is generic or shared by several modules: ints, numbers, probabilities,
choices, types, tensors and their shapes, token ids, masks, words. Each model module's own checks
(``check_gpt_config``, ``check_mha_inputs``, ...) live in ``lib._checks.<module>``, built on these;
neither imports a model module (a check that needs a model's type takes it as an argument). Internal
calls between the library's own modules do not check again."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

# --- numbers, choices and types -------------------------------------------------------------------


def is_int(x) -> bool:
    """Whether ``x`` is an int; a bool is not (True is an int to Python, never a size here)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_number(x) -> bool:
    """Whether ``x`` is an int or a float; a bool is not."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_int(x, name: str, minimum: int | None = None) -> None:
    """TypeError unless ``x`` is an int (a bool is not); ValueError if ``x < minimum``."""
    if not is_int(x):
        raise TypeError(f"{name}: expected an int, got {type(x).__name__}")
    if minimum is not None and x < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {x}")


def check_size(x, name: str, minimum: int | None = None) -> None:
    """``check_int`` for a size read from a tensor's shape: while torch.jit traces a model (as
    torch.onnx.export does), such a size is a 0-d integer tensor, so that the graph serves every length;
    that passes unchecked."""
    traced = isinstance(x, Tensor) and x.dim() == 0 and not x.is_floating_point()
    if not (traced and torch.jit.is_tracing()):
        check_int(x, name, minimum)


def check_sizes(**sizes) -> None:
    """Every size an int >= 1 (``check_int``, naming it)."""
    for name, value in sizes.items():
        check_int(value, name, 1)


def check_number(x, name: str, expected: str, ok) -> None:
    """ValueError unless x is an int or float (a bool is not) for which ``ok(x)`` holds; ``expected``
    says what was wanted ("a number > 0")."""
    if not is_number(x) or not ok(x):
        raise ValueError(f"{name}: expected {expected}, got {x!r}")


def check_probability(p, name: str, interval: str = "(0, 1]") -> None:
    """ValueError unless ``p`` is a number (not a bool) in ``interval``, "(0, 1]" or "[0, 1)"."""
    low, high = interval[0] == "[", interval[-1] == "]"  # closed ends

    def inside(v):
        return (0 <= v if low else 0 < v) and (v <= 1 if high else v < 1)

    check_number(p, name, f"a probability in {interval}", inside)


def check_bool(x, name: str) -> None:
    """TypeError unless x is True or False."""
    if not isinstance(x, bool):
        raise TypeError(f"{name}: expected a bool, got {type(x).__name__} {x!r}")


def check_str(x, name: str) -> None:
    """TypeError unless x is a str."""
    if not isinstance(x, str):
        raise TypeError(f"{name}: expected a str, got {type(x).__name__} {x!r}")


def check_choice(x, name: str, choices: tuple) -> None:
    """ValueError unless x is one of ``choices``."""
    if x not in choices:
        names = [repr(c) for c in choices]
        expected = f"{', '.join(names[:-1])} or {names[-1]}"
        raise ValueError(f"{name}: expected {expected}, got {x!r}")


def check_type(x, name: str, expected: type) -> None:
    """TypeError unless x is an instance of ``expected``: "config: expected a BertConfig, got dict"."""
    if not isinstance(x, expected):
        raise TypeError(f"{name}: expected {_a(expected.__name__)}, got {type(x).__name__}")


def _a(noun: str) -> str:
    """``noun`` with its article: "a GPT", "an ELMoConfig", "an RNNLM" (an acronym read letter by
    letter: "an" before a letter whose name starts with a vowel sound)."""
    acronym = len(noun) > 1 and noun[:2].isupper()
    vowel_sound = noun[0] in ("AEFHILMNORSX" if acronym else "AEIOU")
    return f"{'an' if vowel_sound else 'a'} {noun}"


# --- tensors, shapes and token ids ----------------------------------------------------------------


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


def check_shape(x, name: str, shape: tuple, layout: str) -> None:
    """ValueError unless x is a tensor of exactly ``shape`` (``layout`` names its dims, "[V, E]")."""
    if not isinstance(x, Tensor) or tuple(x.shape) != tuple(shape):
        got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"{name}: expected a tensor of shape {tuple(shape)} {layout}, got {got}")


def broadcast_shape(a, b) -> tuple | None:
    """The shape that shapes a and b broadcast to, or None if they do not broadcast. The same rule as
    torch.broadcast_shapes(a, b), in a few microseconds instead of about ten: these checks run on
    every call of the public functions."""
    if len(a) < len(b):
        a, b = b, a
    b = (1,) * (len(a) - len(b)) + tuple(b)
    if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
        return None
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def check_id(value, name: str, size: int, what: str = "", optional: bool = False) -> None:
    """ValueError unless ``value`` is an int id in [0, size) (a bool is not); ``what`` names the
    table the id indexes; ``optional`` lets None through."""
    if optional and value is None:
        return
    if not is_int(value) or not 0 <= value < size:
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


def check_id_list(ids, size: int) -> None:
    """ValueError unless ids (a list, or a 1-D integer tensor) are token ids in [0, size)."""
    if isinstance(ids, Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
            raise ValueError(
                f"ids: expected a 1-D tensor of integer token ids, got dtype {ids.dtype} and shape {tuple(ids.shape)}"
            )
        ids = ids.tolist()
    for i in ids:
        if not is_int(i) or not 0 <= i < size:
            raise ValueError(f"ids: expected token ids in [0, {size}), got {i!r}")


# --- masks (the one convention: bool, True where a query may attend) ------------------------------


def check_mask_dtype(mask) -> None:
    """TypeError unless mask is a bool tensor (the library's one mask convention)."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask: expected a bool tensor (True = may attend), got {got}")


def check_bool_mask(mask, scores_shape, examples: str = "[Tk], [B, 1, Tk], [B, Tq, Tk]") -> None:
    """TypeError unless mask is a bool tensor; ValueError unless it broadcasts to the scores."""
    check_mask_dtype(mask)
    if broadcast_shape(mask.shape, scores_shape) != tuple(scores_shape):
        raise ValueError(
            f"mask: expected a shape broadcastable to the scores' {tuple(scores_shape)} (e.g. {examples}), got shape {tuple(mask.shape)}"
        )


def check_padding_mask(mask, input_ids: Tensor, name: str = "attention_mask") -> None:
    """The padding mask of right-padded ``input_ids`` [B, T]: bool, or 0/1 integers as Hugging
    Face's ``attention_mask``, of the shape of input_ids, True (1) on a prefix of every row (the
    real tokens). Only checks: the caller builds its bool mask itself (``mask.bool()``), in plain
    sight. TypeError for another dtype; ValueError for another shape, other values, or padding
    before a real token."""
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
    mask = mask.bool()  # a local copy to compare with the prefix below, not returned
    lengths = mask.sum(1)  # [B]
    prefix = torch.arange(mask.shape[1], device=mask.device) < lengths[:, None]  # [B, T]
    if not torch.equal(prefix, mask):
        raise ValueError(
            f"{name}: expected True on a prefix of each row (right padding), got a row with padding before a real token"
        )


def check_token_batch(input_ids, attention_mask, vocab_size: int) -> None:
    """input_ids [B, T] ids in [0, vocab_size) (``check_ids``) and attention_mask None or a padding
    mask of their shape (``check_padding_mask``)."""
    check_ids(input_ids, "input_ids", vocab_size)
    if attention_mask is not None:
        check_padding_mask(attention_mask, input_ids)


# --- words and texts ------------------------------------------------------------------------------


def check_text(text, name: str = "text") -> None:
    """TypeError unless text is a str."""
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected a str, got {type(text).__name__}")


def check_word(word, name: str = "word") -> None:
    """ValueError unless word is a non-empty str."""
    if not isinstance(word, str) or not word:
        raise ValueError(f"{name}: expected a non-empty str, got {word!r}")


def check_word_counts(word_counts) -> None:
    """A dictionary {word: count}: non-empty words without whitespace, each counted an int >= 1."""
    if not isinstance(word_counts, Mapping):
        raise TypeError(
            f"word_counts: expected a dict {{word: count}}, got {type(word_counts).__name__}"
        )
    if not word_counts:
        raise ValueError("word_counts: expected at least one word, got an empty dict")
    for w, c in word_counts.items():
        if not isinstance(w, str) or not w or any(ch.isspace() for ch in w):
            raise ValueError(f"word_counts: expected non-empty words without whitespace, got {w!r}")
        check_int(c, f"word_counts[{w!r}]", 1)
