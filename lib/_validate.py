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


# --- lib.attention ---------------------------------------------------------------------------------


def check_batch(a_shape, a_name: str, b: Tensor, b_name: str) -> None:
    """ValueError unless the leading (batch) dims of a and b broadcast against each other;
    a_shape is a's shape (a may be a tensor not computed yet, such as the scores)."""
    if broadcast_shape(tuple(a_shape)[:-2], b.shape[:-2]) is None:
        raise ValueError(
            f"{b_name}: expected batch dims broadcastable with {a_name} (batch dims {tuple(a_shape)[:-2]}), got shape {tuple(b.shape)}"
        )


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


def check_scores_and_mask(scores, mask) -> None:
    """masked_softmax's arguments: scores a floating tensor, mask None or bool broadcastable to it."""
    check_tensor(scores, "scores", "[..., Tq, Tk]", 1)
    if mask is not None:
        check_bool_mask(mask, scores.shape)


def check_additive_mask_args(mask, dtype) -> None:
    check_mask_dtype(mask)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point torch.dtype, got {dtype}")


def check_query_key(q, k, min_dim: int = 3) -> None:
    """The parameter-free scores' q [B, Tq, D], k [B, Tk, D], batch dims broadcast."""
    lead = "..., " if min_dim < 3 else "B, "
    check_tensor(q, "q", f"[{lead}Tq, D]", min_dim)
    D = q.shape[-1]
    check_tensor(k, "k", f"[{lead}Tk, {D}] (same width D as q)", min_dim, q.dtype, "q", width=D)
    check_batch(q.shape, "q", k, "k")


def check_score_module_inputs(q, k, d_query: int, d_key: int, dtype) -> None:
    """GeneralScore's and AdditiveScore's q [B, Tq, Dq], k [B, Tk, Dk] of the parameters' dtype."""
    of = "the module's parameters"
    check_tensor(q, "q", f"[B, Tq, {d_query}]", 3, dtype, of, width=d_query)
    check_tensor(k, "k", f"[B, Tk, {d_key}]", 3, dtype, of, width=d_key)
    check_batch(q.shape, "q", k, "k")


def check_location_score_inputs(q, k, d_query: int, n_keys: int, dtype) -> None:
    """LocationScore's q [B, Tq, Dq]; k, if given, with Tk == n_keys."""
    check_tensor(q, "q", f"[B, Tq, {d_query}]", 3, dtype, "the module's parameters", width=d_query)
    if k is not None:
        check_tensor(k, "k", f"[B, {n_keys}, Dk]", 3)
        if k.shape[-2] != n_keys:
            raise ValueError(
                f"k: expected shape [B, {n_keys}, Dk] (Tk = n_keys), got shape {tuple(k.shape)}"
            )


def check_attend_args(scores, values, mask) -> None:
    check_tensor(scores, "scores", "[..., Tq, Tk]", 2)
    check_tensor(values, "values", "[..., Tk, Dv]", 2, scores.dtype, "scores")
    if values.shape[-2] != scores.shape[-1]:
        raise ValueError(
            f"values: expected shape [..., {scores.shape[-1]}, Dv] (Tk = scores' last dim), got shape {tuple(values.shape)}"
        )
    check_batch(scores.shape, "scores", values, "values")
    if mask is not None:
        check_bool_mask(mask, scores.shape)


def check_attention_args(q, k, v, mask) -> None:
    """scaled_dot_product_attention's q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv], mask."""
    check_query_key(q, k, min_dim=2)
    check_tensor(v, "v", "[..., Tk, Dv]", 2, q.dtype, "q")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v: expected shape [..., {k.shape[-2]}, Dv] (same length Tk as k), got shape {tuple(v.shape)}"
        )
    scores = broadcast_shape(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
    check_batch(scores, "q and k", v, "v")
    if mask is not None:
        check_bool_mask(mask, scores)


def check_split_heads_args(x, n_heads) -> None:
    check_int(n_heads, "n_heads", 1)
    check_tensor(x, "x", "[B, T, D]", 3, exact=True, floating=False)
    if x.shape[-1] % n_heads:
        raise ValueError(
            f"x: expected a width D divisible by n_heads={n_heads}, got shape {tuple(x.shape)}"
        )


def check_merge_heads_args(x) -> None:
    check_tensor(x, "x", "[B, H, T, Dh]", 4, exact=True, floating=False)


def check_causal_mask_args(T, past) -> None:
    check_int(T, "T", 1)
    check_int(past, "past", 0)


def check_padding_mask_args(lengths, T) -> None:
    """padding_mask's T >= 1 and lengths: an integer tensor [B] of values in [0, T]."""
    check_int(T, "T", 1)
    check_tensor(lengths, "lengths", "[B]", 1, exact=True, floating=False)
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise TypeError(f"lengths: expected integer lengths, got dtype {lengths.dtype}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(
            f"lengths: expected values in [0, T={T}], got min {int(lengths.min())} and max {int(lengths.max())}"
        )


def check_mha_config(d_model, n_heads, dropout) -> None:
    check_int(d_model, "d_model", 1)
    check_int(n_heads, "n_heads", 1)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    if not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout: expected a probability in [0, 1), got {dropout!r}")


def check_mha_inputs(query, key, value, mask, d_model: int, n_heads: int, dtype) -> None:
    """MultiHeadAttention's query [B, Tq, D], key and value [B, Tk, D] of the parameters' dtype, and
    mask: None or bool broadcastable to [B, H, Tq, Tk], not 3-D unless its first dim is 1."""
    D, of = d_model, "the module's parameters"
    check_tensor(query, "query", f"[B, Tq, {D}]", 3, dtype, of, width=D)
    check_tensor(key, "key", f"[B, Tk, {D}]", 3, dtype, of, width=D)
    check_tensor(value, "value", f"[B, Tk, {D}]", 3, dtype, of, width=D)
    for name, x, T in (("query", query, "Tq"), ("key", key, "Tk"), ("value", value, "Tk")):
        if x.dim() != 3:
            raise ValueError(
                f"{name}: expected shape [B, {T}, {D}] (3 dims), got shape {tuple(x.shape)}"
            )
    if value.shape[1] != key.shape[1]:
        raise ValueError(
            f"value: expected shape [B, {key.shape[1]}, {D}] (same length Tk={key.shape[1]} as key), got shape {tuple(value.shape)}"
        )
    check_batch(query.shape, "query", key, "key")
    check_batch(query.shape, "query", value, "value")
    if mask is None:
        return
    check_mask_dtype(mask)
    B = max(query.shape[0], key.shape[0], value.shape[0])  # the batch dims broadcast (checked)
    scores = (B, n_heads, query.shape[1], key.shape[1])
    if mask.dim() == 3 and mask.shape[0] != 1:
        raise ValueError(
            f"mask: a 3-D mask is ambiguous (it would broadcast as [H, Tq, Tk], not [B, Tq, Tk]); expected [Tq, Tk], [B, 1, 1, Tk] or [B, 1, Tq, Tk], got shape {tuple(mask.shape)}"
        )
    if broadcast_shape(mask.shape, scores) != scores:
        raise ValueError(
            f"mask: expected a shape broadcastable to [B, H, Tq, Tk] = {scores} (e.g. [Tq, Tk], [B, 1, 1, Tk]), got shape {tuple(mask.shape)}"
        )


# --- lib.positional --------------------------------------------------------------------------------


def check_table_args(max_len, d_model, base: float = 10000.0) -> None:
    check_int(max_len, "max_len", 1)
    check_int(d_model, "d_model", 1)
    check_base(base)


def check_base(base) -> None:
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not (0 < base < math.inf):
        raise ValueError(f"base: expected a positive finite number, got {base!r}")


def check_binary_encoding_args(n_positions, n_bits) -> None:
    check_int(n_positions, "n_positions", 1)
    check_int(n_bits, "n_bits", 1)
    if n_bits > 62 or n_positions > 2**n_bits:
        raise ValueError(
            f"n_positions={n_positions} does not fit in n_bits={n_bits} (at most 2**{n_bits} positions, and n_bits <= 62)"
        )


def check_relative_rotation_args(k, d_model, base) -> None:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k: expected an int (a shift in positions), got {type(k).__name__}")
    check_int(d_model, "d_model", 2)
    if d_model % 2:
        raise ValueError(
            f"d_model={d_model} must be even: the last sin column of an odd-width table has no cos partner to rotate with"
        )
    check_base(base)


def check_position_input(x, d_model: int, max_len: int, dtype=None) -> None:
    """x [..., T, D] with D = d_model and T <= max_len (ValueError naming T and max_len)."""
    check_tensor(x, "x", f"[B, T, {d_model}]", 2, dtype, "the module's parameters", width=d_model)
    T = x.shape[-2]
    if T > max_len:
        raise ValueError(
            f"x: sequence length T={T} exceeds max_len={max_len} (the table has {max_len} rows; build the module with a larger max_len)"
        )


# --- lib.transformer -------------------------------------------------------------------------------


def check_transformer_config(c) -> None:
    """TransformerConfig's sizes, dropout, shared vocabularies and pad_id."""
    for name in (
        "src_vocab_size",
        "tgt_vocab_size",
        "d_model",
        "n_heads",
        "n_layers",
        "d_ff",
        "max_len",
    ):
        check_int(getattr(c, name), name, 1)
    if c.d_model % c.n_heads != 0:
        raise ValueError(f"d_model={c.d_model} is not divisible by n_heads={c.n_heads}")
    if not 0.0 <= c.dropout < 1.0:
        raise ValueError(f"dropout: expected a probability in [0, 1), got {c.dropout!r}")
    if c.share_src_tgt_embeddings and c.src_vocab_size != c.tgt_vocab_size:
        raise ValueError(
            f"share_src_tgt_embeddings needs src_vocab_size == tgt_vocab_size, got {c.src_vocab_size} and {c.tgt_vocab_size}"
        )
    smallest = min(c.src_vocab_size, c.tgt_vocab_size)
    if not 0 <= c.pad_id < smallest:
        raise ValueError(
            f"pad_id: expected an id in [0, {smallest}) (inside both vocabularies), got {c.pad_id!r}"
        )


def check_transformer_ids(ids, name: str, vocab_size: int, max_len: int) -> None:
    """check_ids, and a length of at most max_len (the positions the model has)."""
    check_ids(ids, name, vocab_size, layout="[B, L]")
    if ids.shape[1] > max_len:
        raise ValueError(
            f"{name}: expected shape [B, L] with 1 <= L <= max_len={max_len}, got shape {tuple(ids.shape)}"
        )


def check_transformer_inputs(c, src, tgt_in) -> None:
    """Transformer.forward's src [B, S] and tgt_in [B, T], ids in their vocabularies."""
    check_transformer_ids(src, "src", c.src_vocab_size, c.max_len)
    check_transformer_ids(tgt_in, "tgt_in", c.tgt_vocab_size, c.max_len)
    if src.shape[0] != tgt_in.shape[0]:
        raise ValueError(
            f"tgt_in: expected batch size {src.shape[0]} (that of src), got shape {tuple(tgt_in.shape)}"
        )


def check_transformer_decode_inputs(c, tgt_in, memory) -> None:
    """Transformer.decode's tgt_in [B, T] and memory [B, S, D] (the encoder's output)."""
    check_transformer_ids(tgt_in, "tgt_in", c.tgt_vocab_size, c.max_len)
    check_tensor(memory, "memory", f"[B, S, {c.d_model}]", 3, exact=True, width=c.d_model)
    if memory.shape[0] != tgt_in.shape[0]:
        raise ValueError(
            f"memory: expected batch size {tgt_in.shape[0]} (that of tgt_in), got shape {tuple(memory.shape)}"
        )


def check_transformer_decoding(c, src, max_len, bos_id, eos_id, one_sentence: bool = False) -> None:
    """greedy_decode's and beam_search's arguments (beam search: src of one sentence [1, S])."""
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= c.max_len:
        raise ValueError(
            f"max_len: expected an int in [1, {c.max_len}] (the model's max_len), got {max_len!r}"
        )
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_id(value, name, c.tgt_vocab_size, "the target vocabulary")
    if one_sentence and (not isinstance(src, Tensor) or src.dim() != 2 or src.shape[0] != 1):
        got = tuple(src.shape) if isinstance(src, Tensor) else type(src).__name__
        raise ValueError(f"src: expected shape [1, S] (one sentence), got {got}")


# --- lib.metrics -----------------------------------------------------------------------------------


def check_bleu_args(hypotheses: list, references: list, max_n) -> None:
    """corpus_bleu's arguments: max_n >= 1, as many hypotheses as references (at least one), each
    sentence a list of tokens, not a string."""
    check_int(max_n, "max_n", 1)
    if len(hypotheses) != len(references):
        raise ValueError(
            f"hypotheses and references: expected as many of each, got {len(hypotheses)} hypotheses and {len(references)} references"
        )
    if not hypotheses:
        raise ValueError("hypotheses: expected at least one sentence, got none")
    for name, sents in (("hypotheses", hypotheses), ("references", references)):
        for i, s in enumerate(sents):
            if isinstance(s, str):
                raise TypeError(
                    f"{name}[{i}]: expected a list of tokens, got the string {s!r}; split it first"
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
