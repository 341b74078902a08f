"""Corpora the book generates itself, deterministically from a seed (no downloads).

- :mod:`lib.data.translation` -- a small English -> "French-like" parallel corpus whose translations
  reorder words (gendered articles, adjectives after the noun, pronouns before the verb...), with
  the gold word alignment of every pair; vocabularies, padded batches and masks. Its names are
  re-exported here: ``from lib.data import generate_pairs, build_vocabs, batches``.

Other corpora live in their own submodules, imported by name (``from lib.data import shapes``),
since their batching functions would clash with the translation corpus's.
"""

from lib.data import translation
from lib.data.translation import *  # noqa: F403 (its __all__ is part of this package's)

__all__ = list(translation.__all__)
