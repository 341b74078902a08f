"""The library of the book: small, tested implementations of the models and figures the chapters show.

One concept per module (see DESIGN.md):

- :mod:`lib.attention` -- score functions, masked softmax, scaled dot-product attention.
- :mod:`lib.viz` -- every plotting helper and view (heatmaps, masked-softmax tables, head views,
  interactive figures).

Models never plot; plots never train.
"""

__version__ = "0.1.0"
