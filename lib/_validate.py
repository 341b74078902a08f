"""The library's input checks, written once (issue 16): every public entry point calls these with
the argument's name, so that bad input gets a ``TypeError`` or ``ValueError`` that names the
argument, what was expected and what was received. Internal calls between the library's own modules
do not check again."""

from __future__ import annotations

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
