"""Subword tokenization: byte-pair encoding (Sennrich et al., 2016) and BERT's WordPiece (Wu et al., 2016;
Devlin et al., 2019).

**BPE, learning** (Sennrich et al. 2016, section 3.2 and their Algorithm 1). Each word of a dictionary
``{word: count}`` starts as its sequence of characters, followed by an end-of-word marker ``</w>``.
Repeatedly: count every pair of adjacent symbols, each occurrence weighted by the count of its word;
merge the most frequent pair everywhere into one new symbol; record the merge. The vocabulary is the
initial characters plus one new symbol per merge.

*Ties* (several pairs equally frequent) are broken by taking the smallest pair in Python's string
order (the pair ``(a, b)`` with the smallest ``a``, then the smallest ``b``). So the merges do not
depend on the order of the dictionary. (The reference implementation, subword-nmt, takes the largest
pair instead; with it the lectures' dictionary would merge ``s t`` before ``e s``.)

The lectures' dictionary {low: 5, lower: 2, newest: 6, widest: 3}: ``e s`` and ``s t`` both occur
9 times; the tie gives ``(e, s)``, then ``(es, t)`` (9 times). Without the marker (``end_of_word=None``,
what the lecture's slide does) the third merge is ``(l, o)`` (7 times) and the vocabulary after three
merges is the slide's: l o w e r n s t i d es est lo. With the marker, ``est`` followed by ``</w>`` is
also 9 times frequent, so the third merge is ``(est, </w>)`` and ``(l, o)`` comes fourth: the marker
is what lets BPE tell the ending "est" (newest) from "est" inside a word (estimate).

**BPE, applying** (``apply_bpe``): split a word into characters (+ ``</w>``), then merge adjacent pairs
in the order the merges were learned (the pair with the earliest merge first, all its occurrences at
once), until no learned merge applies. A character never seen in training stays a symbol of its own;
``BPETokenizer.encode`` maps it to ``<unk>``.

**WordPiece** (``WordPieceTokenizer``): BERT's tokenizer, for a vocabulary file with one token per line
(the id of a token is its line number). First the *basic tokenizer*: drop NUL, U+FFFD and control
characters, turn every whitespace character into a space, put spaces around CJK ideographs, normalize
to NFC, split on whitespace; then lower-case each word and strip its accents (NFD, drop the
combining marks), and split every punctuation character off as a token of its own (ASCII symbols
such as ``$`` and ``^`` count as punctuation). Then each word is cut into pieces by greedy
longest-match-first: the longest prefix in the vocabulary, then the longest continuation of the
rest written with ``##``, and so on; a word longer than 100 characters, or one that cannot be
covered, becomes ``[UNK]``. With pieces un, ##aff, ##able: ``unaffable`` -> ``un ##aff ##able`` (the
uncased BERT vocabulary has ``una`` and gives ``una ##ffa ##ble``). Special tokens written in the
text ("[MASK]", exact case) are kept whole, as transformers' ``BertTokenizer`` does. The NFC step is
transformers' addition to Google's original code; the outputs agree with ``BertTokenizer``.

The difference between the two: BPE marks the *end* of a word (``</w>``) and builds its vocabulary by
merging the most *frequent* pair; WordPiece marks the *continuation* of a word (``##``) and chooses the
merge that most increases the likelihood of the training data under a unigram language model of the
pieces (Schuster and Nakajima 2012; Wu et al. 2016). ``wordpiece_merge_gains`` computes that gain
exactly and ``learn_wordpiece`` merges greedily by it, for small dictionaries; the real BERT vocabulary
is read from its file, not learned here.
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Sequence

import torch
from torch import Tensor

from lib._validate import check_int

__all__ = [
    "END_OF_WORD",
    "BPEStep",
    "bpe_steps",
    "learn_bpe",
    "apply_bpe",
    "pre_tokenize",
    "word_counts",
    "BPETokenizer",
    "wordpiece_split",
    "wordpiece_merge_gains",
    "learn_wordpiece",
    "Encoding",
    "BatchEncoding",
    "basic_tokenize",
    "wordpiece",
    "WordPieceTokenizer",
]

END_OF_WORD = "</w>"


# --- BPE ------------------------------------------------------------------------------------------


def _check_end_of_word(end_of_word) -> None:
    if end_of_word is not None and (not isinstance(end_of_word, str) or not end_of_word):
        raise ValueError(f"end_of_word: expected a non-empty str or None, got {end_of_word!r}")


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


def _check_word_counts(word_counts) -> dict[str, int]:
    if not isinstance(word_counts, Mapping):
        raise TypeError(
            f"word_counts: expected a dict {{word: count}}, got {type(word_counts).__name__}"
        )
    if not word_counts:
        raise ValueError("word_counts: expected at least one word, got an empty dict")
    for w, c in word_counts.items():
        if not isinstance(w, str) or not w or any(ch.isspace() for ch in w):
            raise ValueError(f"word_counts: expected non-empty words without whitespace, got {w!r}")
        check_int(c, f"word_counts[{w!r}]", 1)
    return dict(word_counts)


def bpe_steps(
    word_counts: Mapping[str, int],
    num_merges: int,
    end_of_word: str | None = END_OF_WORD,
    trace: bool = True,
) -> list[BPEStep]:
    """Learn BPE merges (Sennrich et al. 2016) and return every step (see ``BPEStep``).

    Stops early, with fewer than `num_merges` steps, when every word is a single symbol. With
    trace=False the steps carry an empty vocabulary and segmentation (faster on large dictionaries).
    Incremental: after a merge only the words that held the pair are recounted, and a heap finds the
    most frequent pair, so thousands of merges on ten thousand distinct words take seconds.
    """
    word_counts = _check_word_counts(word_counts)
    check_int(num_merges, "num_merges", 0)
    _check_end_of_word(end_of_word)
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


def learn_bpe(
    word_counts: Mapping[str, int], num_merges: int, end_of_word: str | None = END_OF_WORD
) -> list[tuple[str, str]]:
    """The BPE merges learned from a dictionary {word: count} (Sennrich et al. 2016), in order.

    end_of_word: the marker appended to every word ("</w>", as in the paper), or None for none (as in
    the lecture's slide). Ties are broken by the smallest pair (see the module docstring). Returns
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
    if not isinstance(word, str) or not word:
        raise ValueError(f"word: expected a non-empty str, got {word!r}")
    _check_end_of_word(end_of_word)
    return _apply(word, {tuple(p): r for r, p in reversed(list(enumerate(merges)))}, end_of_word)


def _apply(word: str, ranks: dict[tuple[str, str], int], end_of_word: str | None) -> list[str]:
    symbols = _symbols(word, end_of_word)
    while len(symbols) > 1:
        rank, pair = min(
            ((ranks.get(p, len(ranks)), p) for p in zip(symbols, symbols[1:])), key=lambda x: x[0]
        )
        if rank == len(ranks):
            break
        symbols = _merge(symbols, pair)
    return symbols


_WORD_OR_PUNCT = re.compile(r"\w+|[^\w\s]")


def pre_tokenize(text: str) -> list[str]:
    """Split text into words (runs of letters, digits and _) and single punctuation characters;
    whitespace is dropped. The words BPE is learned on and applied to."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
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
        _check_end_of_word(end_of_word)
        self.merges = [tuple(p) for p in merges]
        for p in self.merges:
            if len(p) != 2 or not all(isinstance(s, str) and s for s in p):
                raise ValueError(f"merges: expected pairs of non-empty str, got {p!r}")
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
        merges = learn_bpe(counts, num_merges, end_of_word)
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
        ids = _ids_list(ids)
        tokens = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self):
                raise ValueError(f"ids: expected token ids in [0, {len(self)}), got {i!r}")
            tokens.append(self.vocabulary[i])
        return self.detokenize(tokens)


def _ids_list(ids) -> list:
    """Token ids as a list of ints: a list, a tuple, or a 1-D integer tensor (ValueError otherwise)."""
    if isinstance(ids, Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
            raise ValueError(
                f"ids: expected a 1-D tensor of integer token ids, got dtype {ids.dtype} and shape {tuple(ids.shape)}"
            )
        return ids.tolist()
    return list(ids)


# --- WordPiece: the likelihood criterion ----------------------------------------------------------


def wordpiece_split(word: str) -> list[str]:
    """A word as WordPiece's initial pieces: its first character, then every other one with ``##``."""
    if not isinstance(word, str) or not word:
        raise ValueError(f"word: expected a non-empty str, got {word!r}")
    return [word[0]] + ["##" + c for c in word[1:]]


def _join(a: str, b: str) -> str:
    return a + (b[2:] if b.startswith("##") else b)


def _merge_pieces(pieces: list[str], pair: tuple[str, str]) -> list[str]:
    out, i = [], 0
    while i < len(pieces):
        if i + 1 < len(pieces) and (pieces[i], pieces[i + 1]) == pair:
            out.append(_join(*pair))
            i += 2
        else:
            out.append(pieces[i])
            i += 1
    return out


def _xlogx(x: float) -> float:
    return x * math.log(x) if x > 0 else 0.0


def wordpiece_merge_gains(
    word_counts: Mapping[str, int], segmentation: Mapping[str, Sequence[str]] | None = None
) -> dict[tuple[str, str], float]:
    """For every pair of adjacent pieces: how much merging it into one piece would increase the
    log-likelihood (in nats) of the training words under a unigram model of the pieces.

    WordPiece's vocabulary is built by adding, at each step, the piece that increases the likelihood of
    the training data the most (Schuster and Nakajima 2012; Wu et al. 2016, section 4.1), where BPE adds
    the most frequent pair. The unigram model gives a text of pieces with counts c_x, N in all, the
    log-likelihood L = sum_x c_x log(c_x / N); a merge of (a, b) occurring n times lowers c_a and c_b
    by n, adds n to c_ab and removes n from N, so the gain needs only those counts.

    segmentation: the current pieces of each word (default: ``wordpiece_split``, ``l ##o ##w``). Pieces
    join as WordPiece writes them: ``l`` + ``##o`` -> ``lo``, ``##e`` + ``##s`` -> ``##es``.
    """
    word_counts = _check_word_counts(word_counts)
    seg = {
        w: list(segmentation[w]) if segmentation is not None else wordpiece_split(w)
        for w in word_counts
    }
    counts: dict[str, int] = defaultdict(int)
    occurrences: dict[tuple[str, str], int] = defaultdict(int)  # non-overlapping, left to right
    for w, pieces in seg.items():
        for p in pieces:
            counts[p] += word_counts[w]
        for pair in set(zip(pieces, pieces[1:])):
            n = len(pieces) - len(_merge_pieces(pieces, pair))  # "x x x" merges (x, x) once
            occurrences[pair] += n * word_counts[w]
    total = sum(counts.values())
    gains = {}
    for (a, b), n in occurrences.items():
        new = dict.fromkeys({a, b, _join(a, b)}, 0)
        for x in new:
            new[x] = counts.get(x, 0)
        new[a] -= n
        new[b] -= n
        new[_join(a, b)] += n
        changed = sum(_xlogx(new[x]) - _xlogx(counts.get(x, 0)) for x in new)
        gains[(a, b)] = changed - (_xlogx(total - n) - _xlogx(total))
    return gains


def learn_wordpiece(word_counts: Mapping[str, int], num_merges: int) -> list[tuple[str, str]]:
    """The merges of WordPiece's likelihood criterion (``wordpiece_merge_gains``), greedily, from
    ``wordpiece_split`` of every word; ties broken by the smallest pair, as in ``learn_bpe``.

    Deviations: Wu et al. learn the vocabulary from pieces of whole sentences and stop at a target
    vocabulary size; this recounts every pair after every merge and is meant for small dictionaries.
    """
    word_counts = _check_word_counts(word_counts)
    check_int(num_merges, "num_merges", 0)
    seg = {w: wordpiece_split(w) for w in word_counts}
    merges = []
    for _ in range(num_merges):
        gains = wordpiece_merge_gains(word_counts, seg)
        if not gains:
            break
        best = min(gains, key=lambda p: (-round(gains[p], 9), p))
        merges.append(best)
        seg = {w: _merge_pieces(s, best) for w, s in seg.items()}
    return merges


# --- WordPiece: the tokenizer ---------------------------------------------------------------------


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:  # all ASCII symbols
        return True
    return unicodedata.category(ch).startswith("P")


_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _strip_accents(word: str) -> str:
    return "".join(
        ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn"
    )


# The ASCII fast path of basic_tokenize, the same tokens about 4x faster (tests/test_tokenization.py compares
# the two on every ASCII character): for ASCII text the control characters (except tab, newline, carriage
# return) are dropped, those three become spaces, and NFC, accent stripping and CJK do nothing.
_ASCII_CLEAN = {c: None for c in (*range(32), 127)} | {ord(c): " " for c in "\t\n\r"}
# one ASCII symbol, or a run of others
_ASCII_PIECES = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~ ]+")


def _basic_tokenize_ascii(text: str, do_lower_case: bool) -> list[str]:
    text = text.translate(_ASCII_CLEAN)  # only spaces are left as whitespace
    return _ASCII_PIECES.findall(text.lower() if do_lower_case else text)


def basic_tokenize(
    text: str,
    do_lower_case: bool = True,
    strip_accents: bool | None = None,
    tokenize_chinese_chars: bool = True,
) -> list[str]:
    """BERT's basic tokenizer (see the module docstring): words and punctuation, before WordPiece.
    strip_accents=None means "strip when lower-casing", as in BERT.

    >>> basic_tokenize("Héllo, WORLD!")
    ['hello', ',', 'world', '!']
    """
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    if text.isascii():
        return _basic_tokenize_ascii(text, do_lower_case)
    chars = []
    for ch in text:
        if ch in ("\x00", "\ufffd") or _is_control(ch):
            continue
        if _is_whitespace(ch):
            chars.append(" ")
        elif tokenize_chinese_chars and _is_cjk(ch):
            chars += [" ", ch, " "]
        else:
            chars.append(ch)
    text = unicodedata.normalize("NFC", "".join(chars))
    out = []
    for word in text.split():
        if do_lower_case:
            word = word.lower()
        if strip_accents or (strip_accents is None and do_lower_case):
            word = _strip_accents(word)
        piece = ""
        for ch in word:  # every punctuation character is its own token
            if _is_punctuation(ch):
                out += [piece, ch] if piece else [ch]
                piece = ""
            else:
                piece += ch
        if piece:
            out.append(piece)
    return [w for w in out if w.strip()]


def wordpiece(
    word: str,
    vocab: Mapping[str, int],
    unk_token: str = "[UNK]",
    max_input_chars_per_word: int = 100,
) -> list[str]:
    """Greedy longest-match-first segmentation of one word into vocabulary pieces, continuations
    written with ``##``; [`unk_token`] if the word is longer than `max_input_chars_per_word`
    characters or some part of it matches no piece."""
    if len(word) > max_input_chars_per_word:
        return [unk_token]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return [unk_token]
        pieces.append(piece)
        start = end
    return pieces


@dataclass(frozen=True)
class Encoding:
    """What ``WordPieceTokenizer.encode`` returns (lists of equal length L, no padding):

    input_ids: token ids, ``[CLS] a [SEP]`` or ``[CLS] a [SEP] b [SEP]`` with add_special_tokens;
    token_type_ids: the segment of each token, 0 for ``[CLS] a [SEP]``, 1 for ``b [SEP]``;
    attention_mask: all ones (kept for the models' signature: 1 where a query may attend);
    tokens: the tokens themselves, for reading.
    """

    input_ids: list[int]
    token_type_ids: list[int]
    attention_mask: list[int]
    tokens: list[str]

    def __len__(self) -> int:
        return len(self.input_ids)


class BatchEncoding(NamedTuple):
    """What ``WordPieceTokenizer.encode_batch`` returns: tensors [B, T] (torch.long), padded on the right
    to the longest sequence of the batch with ``pad_token_id`` (token ids), 0 (segments) and 0 (mask).

    input_ids, token_type_ids; attention_mask: 1 at real tokens, 0 at padding (``lib.bert.Bert``'s
    ``attention_mask``)."""

    input_ids: Tensor
    token_type_ids: Tensor
    attention_mask: Tensor


class WordPieceTokenizer:
    """BERT's tokenizer (see the module docstring) for a WordPiece vocabulary.

    vocab: {token: id}. Special tokens: [PAD] [UNK] [CLS] [SEP] [MASK] (their ids: ``pad_token_id`` ...).
    """

    special_tokens = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

    def __init__(
        self,
        vocab: Mapping[str, int],
        do_lower_case: bool = True,
        strip_accents: bool | None = None,
        tokenize_chinese_chars: bool = True,
        max_input_chars_per_word: int = 100,
    ):
        if not isinstance(vocab, Mapping) or not vocab:
            raise ValueError(
                f"vocab: expected a non-empty dict {{token: id}}, got {type(vocab).__name__}"
            )
        missing = [t for t in self.special_tokens if t not in vocab]
        if missing:
            raise ValueError(
                f"vocab: expected the special tokens {self.special_tokens}, missing {missing}"
            )
        ids = sorted(vocab.values())
        if ids != list(range(len(vocab))):
            raise ValueError(f"vocab: expected the ids 0..{len(vocab) - 1}, each once")
        self.vocab = dict(vocab)
        self.ids_to_tokens = {i: t for t, i in self.vocab.items()}
        self.do_lower_case, self.strip_accents = do_lower_case, strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.max_input_chars_per_word = max_input_chars_per_word
        (
            self.pad_token_id,
            self.unk_token_id,
            self.cls_token_id,
            self.sep_token_id,
            self.mask_token_id,
        ) = (self.vocab[t] for t in self.special_tokens)
        self._split_specials = re.compile(
            "(" + "|".join(re.escape(t) for t in self.special_tokens) + ")"
        )

    @classmethod
    def from_vocab_file(cls, path: str | Path, **kwargs) -> "WordPieceTokenizer":
        """Read a vocab.txt (one token per line; a token's id is its line number, from 0)."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"path: expected a vocabulary file, got {str(path)!r} (not a file)")
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        vocab: dict[str, int] = {}
        for i, token in enumerate(lines):
            vocab.setdefault(token, i)
        if len(vocab) != len(lines):
            raise ValueError(
                f"path: {str(path)!r} holds {len(lines) - len(vocab)} duplicate tokens"
            )
        return cls(vocab, **kwargs)

    @classmethod
    def from_texts(cls, texts: Iterable[str], min_count: int = 1, **kwargs) -> "WordPieceTokenizer":
        """A whole-word vocabulary for a small corpus: the five special tokens (ids 0-4, in the order of
        ``special_tokens``), then every word of ``basic_tokenize(text)`` occurring at least ``min_count``
        times over `texts`, most frequent first (ties alphabetical, so the ids do not depend on the
        order of the texts). No ``##`` pieces: a word outside the vocabulary becomes [UNK]. This is how
        the book pretrains small BERTs on its generated corpus, where every word is frequent; a real
        WordPiece vocabulary is learned with ``learn_wordpiece`` or read with ``from_vocab_file``.
        kwargs: as for the constructor (``do_lower_case``, ...)."""
        if isinstance(texts, str):
            raise TypeError(f"texts: expected an iterable of str texts, got the str {texts[:40]!r}")
        check_int(min_count, "min_count", 1)
        keys = {
            k: kwargs[k]
            for k in ("do_lower_case", "strip_accents", "tokenize_chinese_chars")
            if k in kwargs
        }
        counts: dict[str, int] = defaultdict(int)
        n = 0
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts: expected str texts, got {type(text).__name__} {text!r}")
            n += 1
            for word in basic_tokenize(text, **keys):
                counts[word] += 1
        if n == 0:
            raise ValueError("texts: expected at least one text, got none")
        words = sorted(
            (w for w, c in counts.items() if c >= min_count and w not in cls.special_tokens),
            key=lambda w: (-counts[w], w),
        )
        return cls({t: i for i, t in enumerate((*cls.special_tokens, *words))}, **kwargs)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer({len(self)} tokens, do_lower_case={self.do_lower_case})"

    def tokenize(self, text: str) -> list[str]:
        """Word pieces of `text`: basic tokenization, then greedy longest-match-first per word."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        out = []
        for part in self._split_specials.split(text):
            if part in self.special_tokens:
                out.append(part)
                continue
            for word in basic_tokenize(
                part, self.do_lower_case, self.strip_accents, self.tokenize_chinese_chars
            ):
                out += wordpiece(word, self.vocab, "[UNK]", self.max_input_chars_per_word)
        return out

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        """Id of a token (a str) or ids of tokens; unknown tokens get ``unk_token_id``."""
        if isinstance(tokens, str):
            return self.vocab.get(tokens, self.unk_token_id)
        return [self.vocab.get(t, self.unk_token_id) for t in tokens]

    def convert_ids_to_tokens(self, ids: int | Sequence[int]) -> str | list[str]:
        if isinstance(ids, int) and not isinstance(ids, bool):
            return self._token(ids)
        return [self._token(i) for i in ids]

    def _token(self, i) -> str:
        if isinstance(i, bool) or not isinstance(i, int) or i not in self.ids_to_tokens:
            raise ValueError(f"ids: expected token ids in [0, {len(self)}), got {i!r}")
        return self.ids_to_tokens[i]

    def encode(
        self,
        text: str,
        text_pair: str | None = None,
        add_special_tokens: bool = True,
        max_length: int | None = None,
    ) -> Encoding:
        """Encode one text or a pair (BERT's input, Devlin et al. 2019, section 3): an ``Encoding``
        with ``[CLS] a [SEP] b [SEP]`` and segment ids 0 for the first part, 1 for the second.

        max_length: truncate to this many tokens in all (specials included), removing one token at a
        time from the end of the longer text (of the second when they are equally long), as
        transformers' ``truncation="longest_first"`` does."""
        a = self.tokenize(text)
        b = self.tokenize(text_pair) if text_pair is not None else None
        n_special = (2 + (b is not None)) if add_special_tokens else 0
        if max_length is not None:
            if (
                isinstance(max_length, bool)
                or not isinstance(max_length, int)
                or max_length < n_special
            ):
                raise ValueError(
                    f"max_length: expected an int >= {n_special} (the special tokens), got {max_length!r}"
                )
            while len(a) + (len(b) if b else 0) + n_special > max_length:
                if b is not None and len(b) >= len(a):
                    b.pop()
                else:
                    a.pop()
        if add_special_tokens:
            tokens, types = ["[CLS]", *a, "[SEP]"], [0] * (len(a) + 2)
            if b is not None:
                tokens += [*b, "[SEP]"]
                types += [1] * (len(b) + 1)
        else:
            tokens, types = a + (b or []), [0] * len(a) + [1] * len(b or [])
        return Encoding(self.convert_tokens_to_ids(tokens), types, [1] * len(tokens), tokens)

    def encode_batch(
        self,
        texts: Sequence[str],
        text_pairs: Sequence[str] | None = None,
        max_length: int | None = None,
    ) -> BatchEncoding:
        """Encode B texts (or B pairs ``texts[i], text_pairs[i]``) as ``encode`` does and pad them into
        tensors [B, T], T the longest encoding (at most ``max_length``): a ``BatchEncoding``."""
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ValueError(f"texts: expected a non-empty list of str, got {texts!r:.60}")
        if text_pairs is not None and (
            isinstance(text_pairs, str)
            or not isinstance(text_pairs, Sequence)
            or len(text_pairs) != len(texts)
        ):
            got = (
                len(text_pairs)
                if isinstance(text_pairs, Sequence) and not isinstance(text_pairs, str)
                else type(text_pairs).__name__
            )
            raise ValueError(
                f"text_pairs: expected None or a list of {len(texts)} str (one per text), got {got}"
            )
        encodings = [
            self.encode(a, None if text_pairs is None else text_pairs[i], max_length=max_length)
            for i, a in enumerate(texts)
        ]
        T = max(len(e) for e in encodings)
        padding = [[0] * (T - len(e)) for e in encodings]  # one tensor per row would be slow
        ids = [e.input_ids + [self.pad_token_id] * len(p) for e, p in zip(encodings, padding)]
        types = [e.token_type_ids + p for e, p in zip(encodings, padding)]
        mask = [[1] * len(e) + p for e, p in zip(encodings, padding)]
        # [B, T] each
        return BatchEncoding(*(torch.tensor(rows, dtype=torch.long) for rows in (ids, types, mask)))

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """The text of `ids`: tokens joined by spaces, each ``##`` continuation glued to the piece
        before it. Lower-casing and accent stripping are not undone, and punctuation stays
        separated by spaces ("hello , world")."""
        tokens = [self._token(i) for i in _ids_list(ids)]
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in self.special_tokens]
        return " ".join(tokens).replace(" ##", "")
