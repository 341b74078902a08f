"""BERT's WordPiece (Wu et al., 2016; Devlin et al., 2019): the likelihood criterion that learns a
vocabulary, and the tokenizer that reads one.

**WordPiece** (``WordPieceTokenizer``): BERT's tokenizer, for a vocabulary file with one token per
line (the id of a token is its line number counted from 0: the first line, ``[PAD]`` in BERT's file,
is id 0). First BERT's basic tokenizer (``lib.basic_tokenizer``) splits the text into lower-cased
words and punctuation. Then each word is cut into pieces by greedy longest-match-first: the longest
prefix in the vocabulary, then the longest continuation of the rest written with ``##``, and so on;
a word longer than 100 characters (the default of Hugging Face's ``BertTokenizer``; BERT's own
``tokenization.py`` allows 200), or one that cannot be covered, becomes ``[UNK]``. With pieces un,
##aff, ##able: ``unaffable`` -> ``un ##aff ##able`` (the uncased BERT vocabulary has ``una`` and
gives ``una ##ffa ##ble``). Special tokens written in the text ("[MASK]", exact case) are kept
whole, as transformers' ``BertTokenizer`` does; the outputs agree with ``BertTokenizer``.

The difference from BPE (``lib.bpe``): BPE marks the *end* of a word (``</w>``) and builds its
vocabulary by merging the most *frequent* pair; WordPiece marks the *continuation* of a word (``##``)
and chooses the merge that most increases the likelihood of the training data under a unigram
language model of the pieces (Schuster and Nakajima 2012; Wu et al. 2016). ``wordpiece_merge_gains``
computes that gain exactly and ``learn_wordpiece`` merges greedily by it, for small dictionaries;
the real BERT vocabulary is read from its file, not learned here.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Sequence

import torch
from torch import Tensor

from lib._checks.wordpiece import (
    check_file,
    check_max_length,
    check_no_duplicates,
    check_text_batch,
    check_texts,
    check_wordpiece_vocab,
)
from lib._validate import (
    check_id_list,
    check_int,
    check_text,
    check_word,
    check_word_counts,
    is_int,
)
from lib.basic_tokenizer import basic_tokenize_fast

__all__ = [
    "wordpiece_split",
    "wordpiece_merge_gains",
    "learn_wordpiece",
    "wordpiece",
    "Encoding",
    "BatchEncoding",
    "WordPieceTokenizer",
]


# --- WordPiece: the likelihood criterion ----------------------------------------------------------


def wordpiece_split(word: str) -> list[str]:
    """A word as WordPiece's initial pieces: its first character, then every other one with ``##``."""
    check_word(word)
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
    check_word_counts(word_counts)
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
    check_word_counts(word_counts)
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
        check_wordpiece_vocab(vocab, self.special_tokens)
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
        check_file(path, "path", "a vocabulary file")
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        vocab: dict[str, int] = {}
        for i, token in enumerate(lines):
            vocab.setdefault(token, i)
        check_no_duplicates(path, len(lines) - len(vocab))
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
        texts = texts if isinstance(texts, str) else list(texts)
        check_texts(texts)
        check_int(min_count, "min_count", 1)
        keys = {
            k: kwargs[k]
            for k in ("do_lower_case", "strip_accents", "tokenize_chinese_chars")
            if k in kwargs
        }
        counts: dict[str, int] = defaultdict(int)
        for text in texts:
            for word in basic_tokenize_fast(text, **keys):
                counts[word] += 1
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
        check_text(text)
        out = []
        for part in self._split_specials.split(text):
            if part in self.special_tokens:
                out.append(part)
                continue
            for word in basic_tokenize_fast(
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
        if is_int(ids):
            return self._token(ids)
        return [self._token(i) for i in ids]

    def _token(self, i) -> str:
        check_id_list([i], len(self))
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
        check_max_length(max_length, n_special)
        if max_length is not None:
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
        check_text_batch(texts, text_pairs)
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
        ids = ids if isinstance(ids, Tensor) else list(ids)
        check_id_list(ids, len(self))
        tokens = [self.ids_to_tokens[int(i)] for i in ids]
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in self.special_tokens]
        return " ".join(tokens).replace(" ##", "")
