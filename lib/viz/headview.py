"""bertviz's views of the attention of the library's models: head view, model view, encoder-decoder.

Shape legend: L layers, H heads, T tokens (S encoder tokens, T decoder tokens in the encoder-decoder
view). The library's models return their attention weights as a list with one tensor [1, H, T, T] per
layer (the library returns weights, it never stashes them); that is exactly what bertviz (Vig 2019, "A
Multiscale Visualization of Attention in the Transformer Model") takes. These wrappers check the shapes
at the boundary, so a mistake gives a message that names the argument instead of an error inside
bertviz's JavaScript, and return the HTML instead of displaying it.

- :func:`head_view`: one layer at a time, lines from each token to the tokens it attends to.
- :func:`model_view`: every layer and head at once, a grid of thumbnails (click one to enlarge it).
- :func:`encoder_decoder_view`: the encoder's self-attention, the decoder's (causal) self-attention and
  the decoder's cross-attention to the encoder, behind a drop-down, as a head view or a model view.

The HTML loads require.js from a CDN, and require.js then loads d3 and jQuery; the book's Sphinx
extension rewrites those addresses to local copies, so the built site works offline.
"""

from __future__ import annotations

import numpy as np

from lib._validate import check_choice

DECIMALS = 4  # weights are rounded in the page: 1e-4 is far below what a line's opacity can show


def _as_layers(attention, name: str = "attention", square: bool = True) -> list:
    """A list of float64 tensors [1, H, Tq, Tk], one per layer, from a list/tuple or a single tensor.
    `square`: self-attention, Tq == Tk (cross-attention is not square). `name` goes into the messages."""
    import torch

    if isinstance(attention, (torch.Tensor, np.ndarray)):
        attention = [attention]  # a single layer [H, T, T] or [1, H, T, T]
    if not isinstance(attention, (list, tuple)):
        raise TypeError(
            f"{name}: expected a list/tuple of tensors [1, H, T, T] (one per layer) or one such tensor, got {type(attention).__name__}"
        )
    if len(attention) == 0:
        raise ValueError(f"{name}: expected at least one layer, got an empty list")
    layout = (
        "[1, H, T, T] or [H, T, T] (batch of one, square self-attention)"
        if square
        else "[1, H, Tq, Tk] or [H, Tq, Tk] (batch of one)"
    )
    layers = []
    for i, layer in enumerate(attention):
        if isinstance(layer, np.ndarray):
            layer = torch.from_numpy(layer)
        if not isinstance(layer, torch.Tensor):
            raise TypeError(
                f"{name}[{i}]: expected a tensor {layout.split(' or ')[0]}, got {type(layer).__name__}"
            )
        layer = layer.detach().cpu().double()
        if layer.ndim == 3:
            layer = layer.unsqueeze(0)  # [H, T, T] -> [1, H, T, T]
        if (
            layer.ndim != 4
            or layer.shape[0] != 1
            or (square and layer.shape[-1] != layer.shape[-2])
        ):
            raise ValueError(f"{name}[{i}]: expected shape {layout}, got {tuple(layer.shape)}")
        layers.append(torch.round(layer, decimals=DECIMALS))  # short numbers keep the page small

    def dims(t):  # "H=2, T=3" (self-attention) or "H=2, Tq=3, Tk=4"
        _, h, tq, tk = t.shape
        return f"H={h}, T={tk}" if square else f"H={h}, Tq={tq}, Tk={tk}"

    for i, t in enumerate(layers):  # bertviz draws one grid of layers x heads: they must agree
        if t.shape[1:] != layers[0].shape[1:]:
            what = "heads" if t.shape[1] != layers[0].shape[1] else "tokens"
            raise ValueError(
                f"{name}: expected the same number of {what} in every layer, got {dims(layers[0])} in {name}[0] and {dims(t)} in {name}[{i}]"
            )
    return layers


def _as_tokens(tokens, n_tokens: int, name: str, attention_name: str, shape) -> list:
    """The tokens as a list of strings, checked against the number of positions of the attention."""
    if isinstance(tokens, str) or tokens is None:
        raise TypeError(
            f"{name}: expected a list of strings (one per position), got {type(tokens).__name__}"
        )
    tokens = list(tokens)
    if not all(isinstance(tok, str) for tok in tokens):
        raise TypeError(
            f"{name}: expected strings, got types {sorted({type(t).__name__ for t in tokens})}"
        )
    if len(tokens) != n_tokens:
        raise ValueError(
            f"{name}: expected {n_tokens} entries, one per position of {attention_name} ({attention_name}[0] has shape {tuple(shape)}), got {len(tokens)}"
        )
    return tokens


def _check_selection(layer, heads, n_layers: int, n_heads: int):
    """The initial layer and heads of a head view, checked: (layer or None, list of heads or None)."""
    if layer is not None and not (isinstance(layer, (int, np.integer)) and 0 <= layer < n_layers):
        raise ValueError(f"layer: expected an index in [0, {n_layers - 1}], got {layer!r}")
    if heads is not None:
        heads = [heads] if isinstance(heads, (int, np.integer)) else list(heads)
        bad = [h for h in heads if not (isinstance(h, (int, np.integer)) and 0 <= h < n_heads)]
        if bad or not heads:
            raise ValueError(
                f"heads: expected a non-empty list of indices in [0, {n_heads - 1}], got {heads!r}"
            )
        heads = [int(h) for h in heads]
    return (None if layer is None else int(layer)), heads


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
    tokens = _as_tokens(tokens, layers[0].shape[-1], "tokens", "attention", layers[0].shape)
    layer, heads = _check_selection(layer, heads, len(layers), layers[0].shape[1])
    return bertviz_head_view(
        attention=layers, tokens=tokens, layer=layer, heads=heads, html_action="return"
    )


def model_view(attention, tokens):
    """bertviz's model view: every layer (rows) and every head (columns) at once, as small thumbnails
    of the head view's lines; click a thumbnail to enlarge it.

    Args:
        attention: as for :func:`head_view`, a list with one tensor [1, H, T, T] per layer (a 3-D
            [H, T, T] is promoted; one tensor is one layer). Rounded to 4 decimals in the page.
        tokens: the T tokens, in order (strings).

    Returns:
        IPython.display.HTML: the output of ``bertviz.model_view(..., html_action="return")``.

    Raises:
        ValueError: a layer of the wrong shape, layers with different numbers of heads or tokens,
            T != len(tokens).
        TypeError: `attention` is not a tensor or a list of tensors; a token is not a string.
    """
    from bertviz import model_view as bertviz_model_view

    layers = _as_layers(attention)
    tokens = _as_tokens(tokens, layers[0].shape[-1], "tokens", "attention", layers[0].shape)
    return bertviz_model_view(attention=layers, tokens=tokens, html_action="return")


# Long by its docstring (each argument explained); the layers' checks are a helper below.
def encoder_decoder_view(
    encoder_attention,
    decoder_attention,
    cross_attention,
    encoder_tokens,
    decoder_tokens,
    view="head",
    *,
    layer=None,
    heads=None,
):
    """bertviz's encoder-decoder mode: a drop-down switches between the encoder's self-attention, the
    decoder's self-attention and the cross-attention (decoder queries, encoder keys).

    Args:
        encoder_attention: tuple or list, one tensor [1, H, S, S] per layer (encoder self-attention),
            or None.
        decoder_attention: tuple or list, one tensor [1, H, T, T] per layer (decoder
            self-attention), or None.
        cross_attention: tuple or list, one tensor [1, H, T, S] per layer (decoder -> encoder), or
            None.
            A 3-D [H, ., .] is promoted, one tensor is one layer; at least one of the three is given,
            and those given have the same numbers of layers and heads. This is the format of the
            ``encoder_attentions``, ``decoder_attentions`` and ``cross_attentions`` tuples of
            ``lib.transformer.Transformer(..., return_attention=True)`` for a batch of one.
        encoder_tokens: the S source tokens (needed with encoder or cross attention).
        decoder_tokens: the T target tokens (needed with decoder or cross attention).
        view: "head" (one layer at a time, bertviz's head view) or "model" (all layers and heads).
        layer, heads: initial layer and heads of the head view (as in :func:`head_view`); not for
            view="model".

    Returns:
        IPython.display.HTML from ``bertviz.head_view``/``bertviz.model_view(..., html_action="return")``.

    Raises:
        ValueError: wrong shapes, token counts that do not match S or T, different numbers of layers
            or heads between the three, all three None, an unknown `view`, `layer`/`heads` out of range
            or given with view="model".
        TypeError: an attention that is not a tensor or list of tensors; tokens that are not strings.
    """
    from bertviz import head_view as bertviz_head_view
    from bertviz import model_view as bertviz_model_view

    check_choice(view, "view", ("head", "model"))
    if view == "model" and (layer is not None or heads is not None):
        raise ValueError(
            'layer and heads select the initial state of view="head"; the model view shows all'
        )
    first, enc, dec, cross, S, T = _encoder_decoder_layers(
        encoder_attention, decoder_attention, cross_attention
    )
    kwargs = {}
    # each side's tokens are checked against its own attention, or else against the cross-attention
    for side, tokens, own, n in (
        ("encoder", encoder_tokens, enc, S),
        ("decoder", decoder_tokens, dec, T),
    ):
        if n is not None:
            source, shape = (
                (f"{side}_attention", own[0].shape)
                if own is not None
                else ("cross_attention", cross[0].shape)
            )
            kwargs[f"{side}_tokens"] = _as_tokens(tokens, n, f"{side}_tokens", source, shape)
    kwargs.update(
        encoder_attention=enc, decoder_attention=dec, cross_attention=cross, html_action="return"
    )
    if view == "model":
        return bertviz_model_view(**kwargs)
    layer, heads = _check_selection(layer, heads, len(first), first[0].shape[1])
    return bertviz_head_view(layer=layer, heads=heads, **kwargs)


def _encoder_decoder_layers(encoder_attention, decoder_attention, cross_attention):
    """encoder_decoder_view's attentions as lists of layers, checked against each other: (the first
    given, encoder, decoder and cross-attention layers or None, S and T, None where unknown)."""
    given = {
        name: _as_layers(att, name, square=(name != "cross_attention"))
        for name, att in (
            ("encoder_attention", encoder_attention),
            ("decoder_attention", decoder_attention),
            ("cross_attention", cross_attention),
        )
        if att is not None
    }
    if not given:
        raise ValueError(
            "encoder_attention, decoder_attention, cross_attention: expected at least one of them, got None for all three"
        )
    first_name, first = next(iter(given.items()))
    for name, layers in given.items():
        if len(layers) != len(first):
            raise ValueError(
                f"{name} has {len(layers)} layers but {first_name} has {len(first)}: the view shows the same layers for all three"
            )
        if layers[0].shape[1] != first[0].shape[1]:
            raise ValueError(
                f"{name} has {layers[0].shape[1]} heads but {first_name} has {first[0].shape[1]}"
            )
    enc, dec, cross = (
        given.get(n) for n in ("encoder_attention", "decoder_attention", "cross_attention")
    )
    S = enc[0].shape[-1] if enc is not None else (cross[0].shape[-1] if cross is not None else None)
    T = dec[0].shape[-1] if dec is not None else (cross[0].shape[-2] if cross is not None else None)
    if enc is not None and cross is not None and cross[0].shape[-1] != S:
        raise ValueError(
            f"cross_attention: expected shape [1, H, T, S] with S={S} encoder positions (as encoder_attention), got {tuple(cross[0].shape)}"
        )
    if dec is not None and cross is not None and cross[0].shape[-2] != T:
        raise ValueError(
            f"cross_attention: expected shape [1, H, T, S] with T={T} decoder positions (as decoder_attention), got {tuple(cross[0].shape)}"
        )
    return first, enc, dec, cross, S, T
