"""The input checks of lib.bpe, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_int, check_word_counts


def check_end_of_word(end_of_word) -> None:
    """ValueError unless end_of_word is None or a non-empty str."""
    if end_of_word is not None and (not isinstance(end_of_word, str) or not end_of_word):
        raise ValueError(f"end_of_word: expected a non-empty str or None, got {end_of_word!r}")


def check_bpe_input(word_counts, num_merges, end_of_word) -> None:
    """The arguments of BPE learning: a dictionary, a number of merges >= 0, a marker."""
    check_word_counts(word_counts)
    check_int(num_merges, "num_merges", 0)
    check_end_of_word(end_of_word)


def check_bpe_merges(merges) -> None:
    """ValueError unless every merge is a pair of non-empty str."""
    for p in merges:
        if len(p) != 2 or not all(isinstance(s, str) and s for s in p):
            raise ValueError(f"merges: expected pairs of non-empty str, got {p!r}")
