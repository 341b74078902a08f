"""bertviz's head view of the attention of the library's models.

Shape legend: L layers, H heads, T tokens. The library's models return their attention weights as a
list with one tensor [1, H, T, T] per layer (DESIGN.md: weights are returned, not stashed); that is
exactly what bertviz (Vig 2019, "A Multiscale Visualization of Attention in the Transformer Model")
takes. This wrapper checks the shapes at the boundary, so a mistake gives a message that names the
argument instead of an error inside bertviz's JavaScript, and returns the HTML instead of displaying it.

The HTML loads require.js from a CDN, and require.js then loads d3 and jQuery; the book's Sphinx
extension rewrites those addresses to local copies, so the built site works offline.
"""

from __future__ import annotations

import numpy as np

DECIMALS = 4  # weights are rounded in the page: 1e-4 is far below what a line's opacity can show


def _as_layers(attention) -> list:
    """A list of float64 tensors [1, H, T, T], one per layer, from a list/tuple or a single tensor."""
    import torch

    if isinstance(attention, (torch.Tensor, np.ndarray)):
        attention = [attention]  # a single layer [H, T, T] or [1, H, T, T]
    if not isinstance(attention, (list, tuple)):
        raise TypeError(
            "attention must be a list/tuple of tensors [1, H, T, T] (one per layer) or one such tensor; "
            f"got {type(attention).__name__}"
        )
    if len(attention) == 0:
        raise ValueError("attention must hold at least one layer; got an empty list")
    layers = []
    for i, layer in enumerate(attention):
        if isinstance(layer, np.ndarray):
            layer = torch.from_numpy(layer)
        if not isinstance(layer, torch.Tensor):
            raise TypeError(f"attention[{i}] must be a tensor [1, H, T, T]; got {type(layer).__name__}")
        layer = layer.detach().cpu().double()
        if layer.ndim == 3:
            layer = layer.unsqueeze(0)  # [H, T, T] -> [1, H, T, T]
        if layer.ndim != 4 or layer.shape[0] != 1 or layer.shape[-1] != layer.shape[-2]:
            raise ValueError(
                f"attention[{i}] must have shape [1, H, T, T] or [H, T, T] (batch of one, square self-attention); "
                f"got {tuple(layer.shape)}"
            )
        layers.append(torch.round(layer, decimals=DECIMALS))  # short numbers keep the page small
    return layers


def head_view(attention, tokens, *, layer=None, heads=None):
    """bertviz's interactive head view: lines from each token to the tokens it attends to.

    Args:
        attention: list/tuple with one tensor per layer, each [1, H, T, T] (a 3-D [H, T, T] is
            promoted), e.g. the attention list a library model returns; one tensor is taken as one layer.
            Weights are rounded to 4 decimals in the page (a deviation too small to see).
        tokens: the T tokens, in order (strings).
        layer: the layer selected initially (0-based); default 0.
        heads: the heads selected initially (0-based indices); default all.

    Returns:
        IPython.display.HTML: the view (a div with id "bertviz-...", and its script). It is the output
        of ``bertviz.head_view(..., html_action="return")``; display it or end a cell with it.

    Raises:
        ValueError: a layer of the wrong shape, layers with different numbers of heads or tokens,
            T != len(tokens), or `layer`/`heads` out of range.
        TypeError: `attention` is not a tensor or a list of tensors; a token is not a string.
    """
    from bertviz import head_view as bertviz_head_view

    layers = _as_layers(attention)
    n_heads, n_tokens = layers[0].shape[1], layers[0].shape[-1]
    for i, t in enumerate(layers):
        if t.shape[1] != n_heads:
            raise ValueError(
                f"attention: every layer must have the same number of heads; attention[0] has {n_heads}, "
                f"attention[{i}] has {t.shape[1]}"
            )
        if t.shape[-1] != n_tokens:
            raise ValueError(
                f"attention: every layer must cover the same tokens; attention[0] has T={n_tokens}, "
                f"attention[{i}] has T={t.shape[-1]}"
            )
    tokens = list(tokens)
    if not all(isinstance(tok, str) for tok in tokens):
        raise TypeError(f"tokens must be strings; got types {sorted({type(t).__name__ for t in tokens})}")
    if len(tokens) != n_tokens:
        raise ValueError(
            f"tokens must have one entry per position of attention: expected {n_tokens} (attention[0] has shape "
            f"{tuple(layers[0].shape)}), got {len(tokens)}"
        )
    if layer is not None and not (isinstance(layer, (int, np.integer)) and 0 <= layer < len(layers)):
        raise ValueError(f"layer must be an index in [0, {len(layers) - 1}]; got {layer!r}")
    if heads is not None:
        heads = [heads] if isinstance(heads, (int, np.integer)) else list(heads)
        bad = [h for h in heads if not (isinstance(h, (int, np.integer)) and 0 <= h < n_heads)]
        if bad or not heads:
            raise ValueError(f"heads must be a non-empty list of indices in [0, {n_heads - 1}]; got {heads!r}")
        heads = [int(h) for h in heads]
    layer = None if layer is None else int(layer)
    return bertviz_head_view(attention=layers, tokens=tokens, layer=layer, heads=heads, html_action="return")
