"""Corpora the book generates itself, deterministically from a seed (no downloads).

- :mod:`lib.data.translation` -- a small English -> "French-like" parallel corpus whose translations
  reorder words (gendered articles, adjectives after the noun, pronouns before the verb...), with
  the gold word alignment of every pair; vocabularies, padded batches and masks. Its names are
  re-exported here: ``from lib.data import generate_pairs, build_vocabs, batches``.

Other corpora live in their own submodules, imported by name (``from lib.data import shapes``),
since their batching functions would clash with the translation corpus's.
"""

from lib.data.translation import (
    ADJECTIVES,
    ADVERBS,
    ANIMATE,
    ARTICLES,
    CONJUNCTIONS,
    INTRANSITIVE_VERBS,
    LEXICON,
    NOUNS,
    OBJECT_PRONOUNS,
    PREPOSITIONS,
    SOURCE_WORDS,
    SUBJECT_PRONOUNS,
    TARGET_WORDS,
    TRANSITIVE_VERBS,
    Batch,
    Pair,
    Vocab,
    alignment_matrix,
    batches,
    build_vocabs,
    corpus_fingerprint,
    epochs,
    generate_pairs,
    make_batch,
    split_pairs,
)

__all__ = [
    "NOUNS",
    "ANIMATE",
    "ADJECTIVES",
    "TRANSITIVE_VERBS",
    "INTRANSITIVE_VERBS",
    "ADVERBS",
    "PREPOSITIONS",
    "ARTICLES",
    "SUBJECT_PRONOUNS",
    "OBJECT_PRONOUNS",
    "CONJUNCTIONS",
    "LEXICON",
    "SOURCE_WORDS",
    "TARGET_WORDS",
    "Pair",
    "generate_pairs",
    "split_pairs",
    "alignment_matrix",
    "corpus_fingerprint",
    "Vocab",
    "build_vocabs",
    "Batch",
    "make_batch",
    "batches",
    "epochs",
]
