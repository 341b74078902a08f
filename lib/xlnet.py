"""The attention masks of XLNet (Yang et al. 2019, "XLNet: Generalized Autoregressive Pretraining for
Language Understanding", NeurIPS) and of the Transformer-XL it is built on (Dai et al. 2019,
"Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context", ACL). Masks only: what each
position may see, and how far information travels through the layers. No model.

**Permutation language modelling** (XLNet, sec. 2.2-2.3). A left-to-right language model factorizes
P(x) in the order 1, 2, ..., T. XLNet samples a *factorization order* z, a permutation of the positions,
and predicts x_{z_t} from x_{z_<t}: over all orders, every token learns to use context on both sides,
as BERT does, without a [MASK] token and without BERT's assumption that the masked tokens are
independent of each other. The tokens stay in their places (positions are unchanged); only the
attention masks follow the order. Two streams (sec. 2.3, Figure 2):

- the **content stream** h_{z_t} may attend to z_1 ... z_t, itself included (it represents the token);
- the **query stream** g_{z_t} may attend to z_1 ... z_{t-1} only: it knows the *position* z_t it must
  predict but not the token there, which is what it predicts.

**Segment recurrence** (Transformer-XL, sec. 3.2; XLNet, sec. 2.4). Text longer than a segment of L
tokens is processed segment by segment; layer n of segment tau attends to its own segment (causally)
*and* to the cached layer-(n-1) states of the previous segment (no gradient through the cache). Each
layer reaches one segment further back, so the longest dependency grows like N x L with N layers
(sec. 3.2), where a model without recurrence never looks past its own segment.

Mask convention (as everywhere in this library): boolean, True where a query (row) may attend a key
(column). Shapes: T tokens; every mask is [T, T].

Deviations: XLNet predicts only the last 1/K of each order ("partial prediction", sec. 2.3) and trains
on two segments with memory; here the masks are for one sequence and every position of the order. The
recurrence mask treats the cached states like the current ones for reachability; Transformer-XL's
relative position encoding (sec. 3.3), which makes the recurrence work, is not modelled.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lib._checks.xlnet import check_permutation, check_segments, check_square_mask
from lib._validate import check_int

__all__ = ["permutation_masks", "recurrence_mask", "reachable", "longest_dependency"]


def permutation_masks(order) -> tuple[Tensor, Tensor]:
    """XLNet's two attention masks for the factorization order ``order`` (a permutation of 0..T-1; the
    token at position order[0] is predicted first). Returns (content, query), each bool [T, T], rows and
    columns in *position* order:

        content[i, j] = rank(j) <= rank(i)     (the content stream sees itself and what comes before it)
        query[i, j]   = rank(j) <  rank(i)     (the query stream does not see its own token)

    where rank(i) is the index of position i in ``order``. With order = 0, 1, ..., T-1 the content mask is
    the causal mask of a left-to-right language model and the query mask is that mask without its
    diagonal. The first position of the order attends to nothing in the query stream (a zero row: it
    is predicted from its position alone, plus the memory in the real model).
    """
    check_permutation(order)
    z = torch.as_tensor(
        order, dtype=torch.long
    )  # [T], the positions in the order they are predicted
    rank = torch.empty_like(z)
    rank[z] = torch.arange(len(z))  # rank[position] = index in the order
    content = rank[None, :] <= rank[:, None]  # [T, T]: row i (query), column j (key)
    query = rank[None, :] < rank[:, None]  # [T, T]
    return content, query


def recurrence_mask(length: int, segment_length: int, memory_length: int | None = None) -> Tensor:
    """What one Transformer-XL layer may attend to over a text of ``length`` tokens cut into segments of
    ``segment_length``: bool [T, T], True where query i may attend key j, i.e.

        j <= i   and   j >= start(i) - memory_length,     start(i) = i - i % segment_length,

    its own segment up to itself plus the last ``memory_length`` positions before the segment (the cached
    states; default: one whole segment, memory_length = segment_length, as in training, sec. 3.2).
    memory_length = 0 is the vanilla model that sees only its own segment.
    """
    check_segments(length, segment_length, memory_length)
    if memory_length is None:
        memory_length = segment_length
    i = torch.arange(length)[:, None]  # [T, 1] queries
    j = torch.arange(length)[None, :]  # [1, T] keys
    start = i - i % segment_length
    return (j <= i) & (j >= start - memory_length)  # [T, T]


def reachable(mask: Tensor, n_layers: int) -> Tensor:
    """Which inputs can reach which outputs through ``n_layers`` layers that each attend with ``mask``
    (bool [T, T]): bool [T, T], True where the output of position i after n_layers depends on input j.
    Each layer composes the mask with what was reachable before (boolean matrix product), and the
    residual connection keeps what a position already had (the diagonal is added)."""
    check_square_mask(mask)
    check_int(n_layers, "n_layers", 0)
    # [T, T], residual: i always reaches i
    step = (mask | torch.eye(len(mask), dtype=torch.bool)).float()
    out = torch.eye(len(mask))
    for _ in range(n_layers):
        out = ((step @ out) > 0).float()  # i -> k in this layer, k -> j before
    return out.bool()


def longest_dependency(mask: Tensor, n_layers: int) -> int:
    """The largest i - j such that output i depends on input j after ``n_layers`` layers of ``mask``."""
    r = reachable(mask, n_layers)
    i, j = r.nonzero(as_tuple=True)
    return int((i - j).max())
