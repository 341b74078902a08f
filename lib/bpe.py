"""Byte-pair encoding (Sennrich et al., 2016): learning merges from a dictionary, applying them, and a
tokenizer built on them. WordPiece, BERT's subword tokenizer, is in ``lib.wordpiece``.

**BPE, learning** (Sennrich et al. 2016, section 3.2 and their Algorithm 1). Each word of a dictionary
``{word: count}`` starts as its sequence of characters, followed by an end-of-word marker ``</w>``.
Repeatedly: count every pair of adjacent symbols, each occurrence weighted by the count of its word;
merge the most frequent pair everywhere into one new symbol; record the merge. The vocabulary is the
initial characters plus one new symbol per merge.

*Ties* (several pairs equally frequent) are broken by taking the smallest pair in Python's string
order (the pair ``(a, b)`` with the smallest ``a``, then the smallest ``b``). So the merges do not
depend on the order of the dictionary. (The reference implementation, subword-nmt, takes the largest
pair instead; with it Sennrich et al.'s toy dictionary would merge ``s t`` before ``e s``.)

Sennrich et al.'s toy dictionary {low: 5, lower: 2, newest: 6, widest: 3}: ``e s`` and ``s t`` both
occur 9 times; the tie gives ``(e, s)``, then ``(es, t)`` (9 times). Without the marker
(``end_of_word=None``) the third merge is ``(l, o)`` (7 times) and the vocabulary after three merges is
l o w e r n s t i d es est lo. With the marker, ``est`` followed by ``</w>`` is
also 9 times frequent, so the third merge is ``(est, </w>)`` and ``(l, o)`` comes fourth: the marker
is what lets BPE tell the ending "est" (newest) from "est" inside a word (estimate).

**BPE, applying** (``apply_bpe``): split a word into characters (+ ``</w>``), then merge adjacent pairs
in the order the merges were learned (the pair with the earliest merge first, all its occurrences at
once), until no learned merge applies. A character never seen in training stays a symbol of its own;
``BPETokenizer.encode`` maps it to ``<unk>``.

The code a student reads is ``bpe_steps``, the paper's loop as written: count every pair, merge the most
frequent, repeat. It recounts every pair after every merge, which is quick for the toy dictionary
and slow for thousands of merges on real text; ``bpe_steps_fast`` and ``learn_bpe_fast`` give the same
merges (tests/test_tokenization.py compares them) and recount only the words a merge touched.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from torch import Tensor

from lib._checks.bpe import check_bpe_input, check_bpe_merges, check_end_of_word
from lib._validate import check_id_list, check_str, check_word

__all__ = [
    "END_OF_WORD",
    "BPEStep",
    "pair_counts",
    "bpe_steps",
    "learn_bpe",
    "apply_bpe",
    "pre_tokenize",
    "word_counts",
    "BPETokenizer",
    "bpe_steps_fast",
    "learn_bpe_fast",
]

END_OF_WORD = "</w>"


def _symbols(word: str, end_of_word: str | None) -> list[str]:
    return list(word) + ([end_of_word] if end_of_word else [])


def _merge(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    """Every occurrence of `pair` in `symbols`, left to right, replaced by the joined symbol."""
    out, i, a, b = [], 0, pair[0], pair[1]
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


@dataclass(frozen=True)
class BPEStep:
    """One merge of ``bpe_steps``: the pair merged, how often it occurred (weighted by word counts),
    the vocabulary after the merge (the initial symbols in order of first appearance, then the merged
    symbols in order), and every word's segmentation after the merge."""

    pair: tuple[str, str]
    count: int
    vocabulary: tuple[str, ...]
    segmentation: dict[str, tuple[str, ...]]


def pair_counts(segmentation: Mapping[str, Sequence[str]], word_counts: Mapping[str, int]) -> dict:
    """{(a, b): how often the symbol a is followed by b}, every occurrence weighted by its word's count."""
    pairs: dict[tuple[str, str], int] = defaultdict(int)
    for word, symbols in segmentation.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += word_counts[word]
    return pairs


def bpe_steps(
    word_counts: Mapping[str, int],
    num_merges: int,
    end_of_word: str | None = END_OF_WORD,
    trace: bool = True,
) -> list[BPEStep]:
    """Learn BPE merges (Sennrich et al. 2016, Algorithm 1) and return every step (see ``BPEStep``).

    Stops early, with fewer than `num_merges` steps, when every word is a single symbol. With
    trace=False the steps carry an empty vocabulary and segmentation.
    """
    check_bpe_input(word_counts, num_merges, end_of_word)
    segmentation = {w: _symbols(w, end_of_word) for w in word_counts}
    vocabulary = list(dict.fromkeys(s for symbols in segmentation.values() for s in symbols))
    steps: list[BPEStep] = []
    for _ in range(num_merges):
        pairs = pair_counts(segmentation, word_counts)  # count every pair of adjacent symbols
        if not pairs:
            break  # every word is a single symbol
        # the most frequent pair; ties: the smallest
        best = min(pairs, key=lambda p: (-pairs[p], p))
        segmentation = {w: _merge(symbols, best) for w, symbols in segmentation.items()}
        vocabulary.append(best[0] + best[1])
        steps.append(
            BPEStep(
                best,
                pairs[best],
                tuple(vocabulary) if trace else (),
                {w: tuple(s) for w, s in segmentation.items()} if trace else {},
            )
        )
    return steps


def learn_bpe(
    word_counts: Mapping[str, int], num_merges: int, end_of_word: str | None = END_OF_WORD
) -> list[tuple[str, str]]:
    """The BPE merges learned from a dictionary {word: count} (Sennrich et al. 2016), in order.

    end_of_word: the marker appended to every word ("</w>", as in the paper), or None for none (the
    chapter's first example). Ties are broken by the smallest pair (see the module docstring). Returns
    fewer than `num_merges` merges if every word has become a single symbol.

    >>> learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 3, end_of_word=None)
    [('e', 's'), ('es', 't'), ('l', 'o')]
    """
    return [s.pair for s in bpe_steps(word_counts, num_merges, end_of_word, trace=False)]


def apply_bpe(
    word: str, merges: Sequence[tuple[str, str]], end_of_word: str | None = END_OF_WORD
) -> list[str]:
    """The BPE segmentation of one word: its characters (+ `end_of_word`), merged by the learned
    merges in their order (Sennrich et al. 2016, section 3.2). `end_of_word` must be the marker
    the merges were learned with.

    >>> apply_bpe("lowest", [("e", "s"), ("es", "t"), ("l", "o")], end_of_word=None)
    ['lo', 'w', 'est']
    """
    check_word(word)
    check_end_of_word(end_of_word)
    return _apply(word, {tuple(p): r for r, p in reversed(list(enumerate(merges)))}, end_of_word)


def _apply(word: str, ranks: dict[tuple[str, str], int], end_of_word: str | None) -> list[str]:
    symbols = _symbols(word, end_of_word)
    while len(symbols) > 1:
        # a pair not in the list ranks after every merge: infinity, not len(ranks) (a list that
        # repeats a pair has ranks up to len(merges) - 1 >= len(ranks); reader review s25)
        rank, pair = min(
            ((ranks.get(p, math.inf), p) for p in zip(symbols, symbols[1:])), key=lambda x: x[0]
        )
        if rank == math.inf:
            break
        symbols = _merge(symbols, pair)
    return symbols


_WORD_OR_PUNCT = re.compile(r"\w+|[^\w\s]")


def pre_tokenize(text: str) -> list[str]:
    """Split text into words (runs of letters, digits and _) and single punctuation characters;
    whitespace is dropped. The words BPE is learned on and applied to."""
    check_str(text, "text")
    return _WORD_OR_PUNCT.findall(text)


def word_counts(texts: str | Iterable[str]) -> dict[str, int]:
    """{word: count} of the pre-tokenized words of a text or of several texts, in order of first
    appearance: the dictionary ``learn_bpe`` takes."""
    if isinstance(texts, str):
        texts = [texts]
    counts: dict[str, int] = {}
    for text in texts:
        for w in pre_tokenize(text):
            counts[w] = counts.get(w, 0) + 1
    return counts


class BPETokenizer:
    """Text <-> BPE tokens <-> ids, from learned merges.

    The vocabulary (ids in this order): ``<unk>`` (id 0), the alphabet (the characters seen in
    training, and `end_of_word`), then one symbol per merge. ``tokenize`` pre-tokenizes the text
    (``pre_tokenize``) and segments every word with ``apply_bpe``; ``detokenize`` joins the tokens and
    turns each `end_of_word` into a space (with end_of_word=None word boundaries are lost, and
    detokenize raises). No lower-casing: train on lower-cased text to get a lower-cased vocabulary.
    """

    unk_token = "<unk>"

    def __init__(
        self,
        merges: Sequence[tuple[str, str]],
        alphabet: Iterable[str],
        end_of_word: str | None = END_OF_WORD,
    ):
        check_end_of_word(end_of_word)
        self.merges = [tuple(p) for p in merges]
        check_bpe_merges(self.merges)
        self.end_of_word = end_of_word
        alphabet = list(dict.fromkeys([*alphabet, *([end_of_word] if end_of_word else [])]))
        self.vocabulary = list(
            dict.fromkeys([self.unk_token, *alphabet, *(a + b for a, b in self.merges)])
        )
        self.token_to_id = {t: i for i, t in enumerate(self.vocabulary)}
        self._ranks = {p: r for r, p in reversed(list(enumerate(self.merges)))}
        self._cache: dict[str, list[str]] = {}

    @classmethod
    def train(
        cls, texts: str | Iterable[str], num_merges: int, end_of_word: str | None = END_OF_WORD
    ) -> "BPETokenizer":
        """Learn `num_merges` merges from the pre-tokenized words of `texts` (a str or several)."""
        counts = word_counts(texts)
        merges = learn_bpe_fast(counts, num_merges, end_of_word)  # the same merges as learn_bpe
        return cls(merges, sorted({c for w in counts for c in w}), end_of_word)

    def __len__(self) -> int:
        return len(self.vocabulary)

    def __repr__(self) -> str:
        return f"BPETokenizer({len(self.merges)} merges, {len(self)} tokens, end_of_word={self.end_of_word!r})"

    def tokenize(self, text: str) -> list[str]:
        out = []
        for w in pre_tokenize(text):
            if w not in self._cache:
                self._cache[w] = _apply(w, self._ranks, self.end_of_word)
            out += self._cache[w]
        return out

    def detokenize(self, tokens: Sequence[str]) -> str:
        if self.end_of_word is None:
            raise ValueError(
                "detokenize: this tokenizer has end_of_word=None, so word boundaries are lost"
            )
        return "".join(tokens).replace(self.end_of_word, " ").strip()

    def encode(self, text: str) -> list[int]:
        """Token ids; a symbol outside the vocabulary (an unseen character) becomes <unk> (id 0)."""
        return [self.token_to_id.get(t, 0) for t in self.tokenize(text)]

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        ids = ids if isinstance(ids, Tensor) else list(ids)
        check_id_list(ids, len(self))
        return self.detokenize([self.vocabulary[int(i)] for i in ids])


# --- the fast path: the same merges, found incrementally -------------------------------------------


def bpe_steps_fast(
    word_counts: Mapping[str, int],
    num_merges: int,
    end_of_word: str | None = END_OF_WORD,
    trace: bool = True,
) -> list[BPEStep]:
    """``bpe_steps``, the same steps, incrementally: after a merge only the words that held the pair
    are recounted, and a heap finds the most frequent pair, so thousands of merges on ten thousand
    distinct words take seconds (``bpe_steps`` recounts every word after every merge)."""
    check_bpe_input(word_counts, num_merges, end_of_word)
    words = list(word_counts)
    symbols = [_symbols(w, end_of_word) for w in words]
    counts = [word_counts[w] for w in words]
    vocabulary = list(dict.fromkeys(s for syms in symbols for s in syms))

    pair_counts: dict[tuple[str, str], int] = defaultdict(int)
    where: dict[tuple[str, str], set[int]] = defaultdict(set)  # pair -> words that (may) hold it
    for i, syms in enumerate(symbols):
        for pair in zip(syms, syms[1:]):
            pair_counts[pair] += counts[i]
            where[pair].add(i)
    heap = [(-c, p) for p, c in pair_counts.items()]  # (-count, pair): the smallest entry is the
    heapq.heapify(heap)  # most frequent pair, ties -> smallest pair

    steps: list[BPEStep] = []
    while len(steps) < num_merges:
        while heap and (heap[0][0] == 0 or pair_counts.get(heap[0][1], 0) != -heap[0][0]):
            heapq.heappop(heap)  # stale entry: the count has changed
        if not heap:
            break
        neg, best = heapq.heappop(heap)
        touched = set()
        for i in sorted(where.pop(best)):
            old = symbols[i]
            new = _merge(old, best)
            if len(new) == len(old):
                continue
            for pair in zip(old, old[1:]):
                pair_counts[pair] -= counts[i]
                touched.add(pair)
            for pair in zip(new, new[1:]):
                pair_counts[pair] += counts[i]
                where[pair].add(i)
                touched.add(pair)
            symbols[i] = new
        for pair in touched:
            if pair_counts[pair] > 0:
                heapq.heappush(heap, (-pair_counts[pair], pair))
            else:
                del pair_counts[pair]
        vocabulary.append(best[0] + best[1])
        steps.append(
            BPEStep(
                best,
                -neg,
                tuple(vocabulary) if trace else (),
                {w: tuple(s) for w, s in zip(words, symbols)} if trace else {},
            )
        )
    return steps


def learn_bpe_fast(
    word_counts: Mapping[str, int], num_merges: int, end_of_word: str | None = END_OF_WORD
) -> list[tuple[str, str]]:
    """``learn_bpe``, the same merges, with ``bpe_steps_fast``: for thousands of merges on real text."""
    return [s.pair for s in bpe_steps_fast(word_counts, num_merges, end_of_word, trace=False)]
