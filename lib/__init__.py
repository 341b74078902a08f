"""The library of the book: small, tested implementations of the models and figures the chapters
show.

One concept per module (the README's "Layout" and "Decisions" say how they fit together):

- :mod:`lib.attention` -- score functions, masked softmax, scaled dot-product and multi-head
  attention.
- :mod:`lib.positional` -- sinusoidal, learned and binary position encodings.
- :mod:`lib.transformer` -- the encoder-decoder Transformer, greedy and beam decoding.
- :mod:`lib.seq2seq`, :mod:`lib.hard_attention` -- RNN encoder-decoders with Bahdanau and Luong
  attention.
- :mod:`lib.data` -- the generated corpora (a parallel corpus with word reordering, ...).
- :mod:`lib.train` -- the one small training loop every chapter that trains uses.
- :mod:`lib.viz` -- every plotting helper and view (heatmaps, masked-softmax tables, head views,
  interactive figures).
- :mod:`lib.exercises` -- the checkers of the chapters' exercises.

Models never plot; plots never train.
"""

__version__ = "0.1.0"
