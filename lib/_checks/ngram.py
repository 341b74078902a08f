"""The input checks of lib.ngram, built on the primitives of ``lib._validate``."""

from __future__ import annotations


def check_sentences(sentences, name: str = "sentences") -> None:
    """TypeError unless sentences is a list of sentences, each a str or a sequence of str (a str
    alone is not a list of sentences); ValueError if there is none."""
    if isinstance(sentences, str):
        raise TypeError(
            f"{name}: expected an iterable of sentences, got the str {sentences[:40]!r}"
        )
    for s in sentences:
        if not isinstance(s, str) and not all(isinstance(t, str) for t in s):
            raise TypeError(f"{name}: expected sentences as str or lists of str, got {s!r}")
    if not sentences:
        raise ValueError(f"{name}: expected at least one sentence, got none")


def check_no_specials(words, specials) -> None:
    """ValueError if a word of the corpus is one of the model's reserved tokens."""
    for special in specials:
        if special in words:
            raise ValueError(
                f"sentences: the token {special!r} is reserved for the model, found it in the corpus"
            )
