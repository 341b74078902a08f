"""Synthetic images for image captioning: coloured shapes on a grid, captioned in reading order.

An image is a grid of ``rows x cols`` cells of ``cell x cell`` pixels (default 3 x 3 cells of 16 px:
48 x 48 px, white background). A few cells hold one shape each, in one of four colours and four
forms, drawn a little smaller than its cell and shifted at random inside it. The caption names the
shapes in reading order (row by row, left to right), separated by commas:

    orange circle , blue square , green triangle

Every caption word that names a shape (its colour and its form) is tied to the cell that holds the
shape (:func:`word_regions`), so a chapter can check *where* a captioning model looked when it
wrote the word.

Colours: four of the Okabe-Ito palette (Okabe and Ito 2008), which readers with any common form of
colour blindness can tell apart, named as they look: the palette's vermillion is called orange and its
reddish purple pink, so that a caption never says "red" under a shape a reader sees as orange.
Same seed -> same images on every machine: all randomness comes from one ``random.Random(seed)``;
drawing is deterministic float32 arithmetic on pixel centres (numpy).

Shapes: images [B, 3, H, W] float in [0, 1]; captions [B, T] long; R = rows * cols regions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np
import torch
from torch import Tensor

from lib._validate import check_choice, check_int, is_int
from lib.data._batching import endless, index_batches
from lib.data.translation import Vocab

__all__ = [
    "COLOURS",
    "SHAPES",
    "VOCAB",
    "ShapeItem",
    "ShapeImage",
    "draw",
    "caption_of",
    "generate_images",
    "word_regions",
    "CaptionBatch",
    "make_batch",
    "batches",
    "epochs",
]

# Okabe-Ito's vermillion, bluish green, blue and reddish purple, named as they look
COLOURS: dict[str, tuple[float, float, float]] = {
    "orange": (0.835, 0.369, 0.0),
    "green": (0.0, 0.620, 0.451),
    "blue": (0.0, 0.447, 0.698),
    "pink": (0.800, 0.475, 0.655),
}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "cross")
SEPARATOR = ","


@dataclass(frozen=True)
class ShapeItem:
    """One shape: its colour and form, its cell (row, col), its centre (y, x) and size in pixels."""

    colour: str
    shape: str
    row: int
    col: int
    centre: tuple[float, float]
    size: float


@dataclass(frozen=True, eq=False)
class ShapeImage:
    """An image [3, H, W], its shapes in reading order, and its caption (a tuple of words)."""

    image: Tensor = field(repr=False)
    items: tuple[ShapeItem, ...]
    caption: tuple[str, ...]
    grid: tuple[int, int]


# --- drawing ---------------------------------------------------------------------------------------


def _shape_mask(
    shape: str, ys: np.ndarray, xs: np.ndarray, cy: float, cx: float, size: float
) -> np.ndarray:
    """bool [H, W]: the pixels (centres ys, xs) inside one shape of width ``size`` centred at (cy, cx)."""
    dy, dx, half = ys - cy, xs - cx, size / 2
    if shape == "circle":
        return dy**2 + dx**2 <= half**2
    if shape == "square":  # a bit smaller: about the circle's area
        return (abs(dy) <= 0.85 * half) & (abs(dx) <= 0.85 * half)
    if shape == "triangle":  # pointing up: width grows from apex to base
        t = (dy + half) / size  # 0 at the apex, 1 at the base
        return (t >= 0) & (t <= 1) & (abs(dx) <= t * half)
    if shape == "cross":  # a plus sign, arms a third of the size wide
        arm = size / 6
        return ((abs(dx) <= arm) & (abs(dy) <= half)) | ((abs(dy) <= arm) & (abs(dx) <= half))
    raise ValueError(f"shape: expected one of {SHAPES}, got {shape!r}")


def draw(items: Sequence[ShapeItem], grid: tuple[int, int] = (3, 3), cell: int = 16) -> Tensor:
    """The image [3, rows*cell, cols*cell] of the given shapes on a white background. Each shape is
    drawn inside its own cell (pixels whose centre lies in the shape are painted its colour)."""
    rows, cols = grid
    image = np.ones((3, rows * cell, cols * cell), dtype=np.float32)
    local = np.arange(cell, dtype=np.float32) + 0.5  # pixel centres inside a cell [cell]
    for item in items:
        if item.colour not in COLOURS:
            check_choice(item.colour, "colour", tuple(COLOURS))
        if not (0 <= item.row < rows and 0 <= item.col < cols):
            raise ValueError(
                f"items: cell ({item.row}, {item.col}) is outside the {rows} x {cols} grid"
            )
        top, left = item.row * cell, item.col * cell
        ys, xs = (top + local)[:, None], (left + local)[None, :]  # [cell, 1], [1, cell]
        mask = _shape_mask(item.shape, ys, xs, *item.centre, item.size)  # [cell, cell]
        patch = image[
            :, top : top + cell, left : left + cell
        ]  # a view: painting it paints the image
        patch[:, mask] = np.array(COLOURS[item.colour], dtype=np.float32)[:, None]
    return torch.from_numpy(image)


def caption_of(items: Sequence[ShapeItem]) -> tuple[str, ...]:
    """'colour shape , colour shape , ...' for the items in reading order (row by row, left to right)."""
    words: list[str] = []
    for item in sorted(items, key=lambda it: (it.row, it.col)):
        words += ([SEPARATOR] if words else []) + [item.colour, item.shape]
    return tuple(words)


def generate_images(
    n: int,
    seed: int = 0,
    grid: tuple[int, int] = (3, 3),
    cell: int = 16,
    min_shapes: int = 1,
    max_shapes: int = 3,
) -> list[ShapeImage]:
    """``n`` images, each with between ``min_shapes`` and ``max_shapes`` shapes (uniform) in distinct
    cells chosen at random; colour and form uniform and independent; size uniform in
    [0.6, 0.85] * cell; centre shifted from the cell's centre so that the shape stays inside its cell.
    Deterministic: the same arguments give the same images on every machine."""
    check_int(n, "n", 1)
    check_int(cell, "cell", 8)
    if (
        not isinstance(grid, (tuple, list))
        or len(grid) != 2
        or not all(is_int(g) and g >= 1 for g in grid)
    ):
        raise ValueError(f"grid: expected (rows, cols) of two ints >= 1, got {grid!r}")
    rows, cols = grid
    check_int(min_shapes, "min_shapes", 1)
    check_int(max_shapes, "max_shapes", min_shapes)
    if max_shapes > rows * cols:
        raise ValueError(
            f"max_shapes: expected at most rows*cols = {rows * cols}, got {max_shapes}"
        )
    rng = random.Random(seed)
    examples = []
    for _ in range(n):
        # reading order
        cells = sorted(rng.sample(range(rows * cols), rng.randint(min_shapes, max_shapes)))
        items = []
        for c in cells:
            row, col = divmod(c, cols)
            size = cell * rng.uniform(0.6, 0.85)
            slack = (cell - size) / 2 - 0.5  # keep a pixel of margin inside the cell
            centre = (
                (row + 0.5) * cell + rng.uniform(-slack, slack),
                (col + 0.5) * cell + rng.uniform(-slack, slack),
            )
            items.append(
                ShapeItem(rng.choice(list(COLOURS)), rng.choice(SHAPES), row, col, centre, size)
            )
        examples.append(
            ShapeImage(draw(items, grid, cell), tuple(items), caption_of(items), (rows, cols))
        )
    return examples


def word_regions(example: ShapeImage) -> list[int | None]:
    """For each caption word, the index row * cols + col of the cell holding the shape it names
    (colour and form words), or None for a comma."""
    cols = example.grid[1]
    regions: list[int | None] = []
    for item in example.items:
        regions += ([None] if regions else []) + [item.row * cols + item.col] * 2
    return regions


# --- vocabulary and batches ------------------------------------------------------------------------

VOCAB = Vocab([SEPARATOR, *COLOURS, *SHAPES])
"""The closed caption vocabulary (lib.data.Vocab): <pad> 0, <bos> 1, <eos> 2, <unk> 3, then ',', the
colours and the forms."""


@dataclass
class CaptionBatch:
    """images [B, 3, H, W]; tgt_in [B, T] = <bos> + caption; tgt_out [B, T] = caption + <eos>
    (both padded with VOCAB.pad_id = 0); lengths [B] = number of caption words + 1."""

    images: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    lengths: Tensor

    def __len__(self) -> int:
        return self.images.shape[0]


def _check_examples(examples) -> None:
    if len(examples) == 0:
        raise ValueError("examples: expected at least one ShapeImage, got an empty sequence")
    bad = [type(ex).__name__ for ex in examples if not isinstance(ex, ShapeImage)]
    if bad:
        raise ValueError(f"examples: expected ShapeImage objects, got {bad[0]}")


def make_batch(examples: Sequence[ShapeImage]) -> CaptionBatch:
    """Stack images and pad captions (teacher forcing: the input is the caption shifted right by one,
    starting with <bos>; the target ends with <eos>)."""
    _check_examples(examples)
    ids = [VOCAB.encode(ex.caption) for ex in examples]
    B, T = len(ids), max(len(x) for x in ids) + 1
    tgt_in = torch.full((B, T), VOCAB.pad_id, dtype=torch.long)  # [B, T]
    tgt_out = torch.full((B, T), VOCAB.pad_id, dtype=torch.long)  # [B, T]
    for b, x in enumerate(ids):
        tgt_in[b, : len(x) + 1] = torch.tensor([VOCAB.bos_id, *x])
        tgt_out[b, : len(x) + 1] = torch.tensor([*x, VOCAB.eos_id])
    images = torch.stack([ex.image for ex in examples])  # [B, 3, H, W]
    return CaptionBatch(images, tgt_in, tgt_out, torch.tensor([len(x) + 1 for x in ids]))


def _epoch(examples, batch_size: int, shuffle: bool, rng: random.Random) -> Iterator[CaptionBatch]:
    for chunk in index_batches(len(examples), batch_size, shuffle, rng):
        yield make_batch([examples[i] for i in chunk])


def batches(
    examples: Sequence[ShapeImage], batch_size: int, shuffle: bool = True, seed: int = 0
) -> Iterator[CaptionBatch]:
    """One epoch: every example once, in batches (order shuffled by ``random.Random(seed)``)."""
    _check_examples(examples)
    check_int(batch_size, "batch_size", 1)
    return _epoch(examples, batch_size, shuffle, random.Random(seed))


def epochs(
    examples: Sequence[ShapeImage], batch_size: int, shuffle: bool = True, seed: int = 0
) -> Iterator[CaptionBatch]:
    """Endless batches, epoch after epoch, reshuffled each time by one ``random.Random(seed)``
    (for ``lib.train.fit``, which stops after its number of steps)."""
    _check_examples(examples)
    check_int(batch_size, "batch_size", 1)
    rng = random.Random(seed)
    return endless(lambda: _epoch(examples, batch_size, shuffle, rng))
