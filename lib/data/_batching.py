"""The batching that every corpus of lib.data shares: one epoch's order of the examples, cut into
batches, and epochs one after another for ``lib.train.fit``."""

from __future__ import annotations

import random
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


def index_batches(
    n: int,
    batch_size: int,
    shuffle: bool,
    rng: random.Random,
    sort_key: Callable[[int], int] | None = None,
) -> list[list[int]]:
    """The indices 0..n-1 in batches of batch_size (the last one may be smaller): one epoch.

    shuffle: the order is shuffled by ``rng``. sort_key: the indices are then sorted by it, so
    that a batch holds examples of similar length (less padding), and the order of the batches is
    shuffled instead (if shuffle).
    """
    order = list(range(n))
    if shuffle:
        rng.shuffle(order)
    if sort_key is not None:
        order.sort(key=sort_key)
    chunks = [order[i : i + batch_size] for i in range(0, n, batch_size)]
    if shuffle and sort_key is not None:
        rng.shuffle(chunks)
    return chunks


def endless(epoch: Callable[[], Iterator[T]]) -> Iterator[T]:
    """Epoch after epoch for ever, each one a new call of ``epoch`` (which draws from an rng it
    shares with the others, so that every epoch has a new order)."""
    while True:
        yield from epoch()
