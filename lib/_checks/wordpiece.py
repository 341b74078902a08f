"""The input checks of lib.wordpiece, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lib._validate import is_int


def check_texts(texts) -> None:
    """TypeError unless texts is a list of str (a str alone is not); ValueError if it is empty."""
    if isinstance(texts, str):
        raise TypeError(f"texts: expected an iterable of str texts, got the str {texts[:40]!r}")
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts: expected str texts, got {type(text).__name__} {text!r}")
    if not texts:
        raise ValueError("texts: expected at least one text, got none")


def check_text_batch(texts, text_pairs) -> None:
    """texts a non-empty list of str; text_pairs None or a list of as many."""
    if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
        raise ValueError(f"texts: expected a non-empty list of str, got {texts!r:.60}")
    if text_pairs is not None and (
        isinstance(text_pairs, str)
        or not isinstance(text_pairs, Sequence)
        or len(text_pairs) != len(texts)
    ):
        is_list = isinstance(text_pairs, Sequence) and not isinstance(text_pairs, str)
        got = len(text_pairs) if is_list else type(text_pairs).__name__
        raise ValueError(
            f"text_pairs: expected None or a list of {len(texts)} str (one per text), got {got}"
        )


def check_max_length(max_length, n_special: int) -> None:
    """None, or an int that leaves room for the ``n_special`` special tokens."""
    if max_length is not None and (not is_int(max_length) or max_length < n_special):
        raise ValueError(
            f"max_length: expected an int >= {n_special} (the special tokens), got {max_length!r}"
        )


def check_wordpiece_vocab(vocab, special_tokens) -> None:
    """A vocabulary {token: id}: not empty, holding the special tokens, ids 0..V-1 each once."""
    if not isinstance(vocab, Mapping) or not vocab:
        raise ValueError(
            f"vocab: expected a non-empty dict {{token: id}}, got {type(vocab).__name__}"
        )
    missing = [t for t in special_tokens if t not in vocab]
    if missing:
        raise ValueError(f"vocab: expected the special tokens {special_tokens}, missing {missing}")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise ValueError(f"vocab: expected the ids 0..{len(vocab) - 1}, each once")


def check_file(path, name: str, what: str) -> None:
    """ValueError unless path (a pathlib.Path) is a file."""
    if not path.is_file():
        raise ValueError(f"{name}: expected {what}, got {str(path)!r} (not a file)")


def check_no_duplicates(path, n_duplicates: int) -> None:
    """ValueError if a vocabulary file holds a token twice."""
    if n_duplicates:
        raise ValueError(f"path: {str(path)!r} holds {n_duplicates} duplicate tokens")
