"""The input checks of lib.captioning, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from torch import Tensor

from lib._validate import check_id, check_ids, check_int


def check_even(x: int, name: str) -> None:
    """ValueError unless x is divisible by 2."""
    if x % 2:
        raise ValueError(f"{name}={x} is not divisible by 2")


def check_images(images, in_channels: int, max_grid: int) -> None:
    """images [B, in_channels, H, W], float, B >= 1, H and W multiples of 16 and at most 16 * max_grid."""
    if not isinstance(images, Tensor):
        raise TypeError(
            f"images: expected a torch.Tensor [B, {in_channels}, H, W], got {type(images).__name__}"
        )
    if images.dim() != 4 or images.shape[1] != in_channels or not images.is_floating_point():
        raise ValueError(
            f"images: expected a float tensor [B, {in_channels}, H, W], got shape {tuple(images.shape)} and dtype {images.dtype}"
        )
    if images.shape[2] % 16 or images.shape[3] % 16 or images.shape[0] == 0:
        raise ValueError(
            f"images: expected B >= 1 and H, W multiples of 16, got shape {tuple(images.shape)}"
        )
    h, w = images.shape[2] // 16, images.shape[3] // 16
    if max(h, w) > max_grid:
        raise ValueError(f"images: a {h} x {w} region grid exceeds max_grid={max_grid}")


def check_caption_ids(ids, name: str, vocab_size: int, batch: int) -> None:
    """``check_ids`` for [B, T] ids, and the batch size of the images."""
    check_ids(ids, name, vocab_size)
    if ids.shape[0] != batch:
        raise ValueError(
            f"{name}: expected batch size {batch} (that of images), got {ids.shape[0]}"
        )


def check_caption_target(tgt_in, tgt_out, vocab_size: int, batch: int) -> None:
    """tgt_out [B, T] ids of tgt_in's shape."""
    check_caption_ids(tgt_out, "tgt_out", vocab_size, batch)
    if tgt_out.shape != tgt_in.shape:
        raise ValueError(
            f"tgt_out: expected the shape of tgt_in {tuple(tgt_in.shape)}, got {tuple(tgt_out.shape)}"
        )


def check_caption_decoding(max_len, bos_id, eos_id, vocab_size: int) -> None:
    """max_len >= 1 and bos/eos ids of the vocabulary."""
    check_int(max_len, "max_len", 1)
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_id(value, name, vocab_size, "the vocabulary")
