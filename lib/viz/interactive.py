"""THE one mechanism for every interactive figure of the book (DESIGN.md, "Figures and interactivity").

Why this design: the book is read in two places. In Jupyter or Colab a kernel runs, but on the
published static site no kernel runs, so a figure that redraws itself through a Python callback
(``ipywidgets.interact``) would be frozen there. Instead every state of the figure is drawn once,
up front, as a PNG; the PNGs sit in a ``widgets.Stack`` (only the selected child is visible), and a
``widgets.SelectionSlider`` is linked to the stack with ``widgets.jslink``, a link that lives in the
browser. Moving the slider then shows another precomputed picture without asking Python anything:
the figure responds in Jupyter, in Colab and on the static site alike (the site saves the widget
state and serves the ipywidgets HTML manager itself). The cost is one PNG per state, in the time to
draw it and in the size of the page, so keep the options to a few dozen at most.
"""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def _labelled(options) -> list[tuple[str, object]]:
    """(label, value) pairs from a list of values or of (label, value) pairs."""
    options = list(options)
    if not options:
        raise ValueError("options must hold at least one value; got an empty list")
    if all(isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str) for o in options):
        pairs = [(label, value) for label, value in options]
    else:
        pairs = [(str(value), value) for value in options]
    labels = [label for label, _ in pairs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"options must have distinct labels (the slider shows them); got {labels}")
    return pairs


def _alt_text(alt, value, label: str, description: str) -> str:
    if alt is None:
        return f"Figure for {description} = {label}"
    if callable(alt):
        text = alt(value)
        if not isinstance(text, str):
            raise TypeError(f"alt(value) must return a string; got {type(text).__name__} for value {value!r}")
        return text
    if isinstance(alt, str):
        return f"{alt} ({description} = {label})"
    raise TypeError(f"alt must be None, a string or a callable(value) -> str; got {type(alt).__name__}")


def figure_png(fig: Figure) -> bytes:
    """The PNG bytes of a figure at its own dpi (the same size for every state drawn the same way)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi, facecolor="white")
    return buffer.getvalue()


def interactive(draw, options, *, description="value", alt=None):
    """A figure with a slider over precomputed states; responds with or without a running kernel.

    Args:
        draw: ``draw(value) -> matplotlib.figure.Figure``; called once per option, up front. The
            figure (and any other figure ``draw`` opened) is closed after it is saved.
        options: a list of values (labelled ``str(value)``) or of ``(label, value)`` pairs.
        description: the slider's label, e.g. ``"d_k"``.
        alt: alternative text of each picture: a callable ``alt(value) -> str`` (best: describe what
            this state shows), a string (used for every state, followed by "(description = label)"),
            or None for "Figure for description = label".

    Returns:
        ``ipywidgets.VBox([slider, stack])``: ``stack`` is a ``widgets.Stack`` with one
        ``widgets.HTML`` per option, holding ``<img src="data:image/png;base64,..." alt="...">``;
        ``slider`` is a ``widgets.SelectionSlider`` over the labels, starting at index 0, linked in the
        browser by ``widgets.jslink((slider, "index"), (stack, "selected_index"))``. The link is also
        kept as the attribute ``.link`` of the returned box.

    Raises:
        ValueError: no options, or two options with the same label.
        TypeError: ``draw`` did not return a Figure, or ``alt`` is of the wrong type.
    """
    import ipywidgets as widgets

    pairs = _labelled(options)
    pages = []
    for label, value in pairs:
        open_before = set(plt.get_fignums())
        fig = None
        try:
            fig = draw(value)
            if not isinstance(fig, Figure):
                raise TypeError(f"draw(value) must return a matplotlib Figure; got {type(fig).__name__} for {value!r}")
            png = base64.b64encode(figure_png(fig)).decode("ascii")
        finally:  # never leave a figure open: inline backends would show every state below the widget
            if isinstance(fig, Figure):
                plt.close(fig)
            for number in set(plt.get_fignums()) - open_before:
                plt.close(number)
        text = html.escape(_alt_text(alt, value, label, description), quote=True)
        img = f'<img src="data:image/png;base64,{png}" alt="{text}" style="max-width:100%;height:auto">'
        pages.append(widgets.HTML(value=img))

    stack = widgets.Stack(children=pages, selected_index=0)
    slider = widgets.SelectionSlider(
        options=[label for label, _ in pairs],
        index=0,
        description=description,
        continuous_update=True,  # the pictures are precomputed, so following the drag costs nothing
        readout=True,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="100%", max_width="40em"),
    )
    link = widgets.jslink((slider, "index"), (stack, "selected_index"))  # runs in the browser, no kernel
    box = widgets.VBox([slider, stack])
    box.link = link  # keeps the link reachable (tests, and anyone who wants to unlink)
    return box
