"""BERT's basic tokenizer (Devlin et al. 2019; Google's tokenization.py, as transformers'
``BertTokenizer`` runs it): the words and punctuation that WordPiece (``lib.wordpiece``) then cuts into
pieces.

Drop NUL, U+FFFD and control characters, turn every whitespace character into a space, put spaces
around CJK ideographs, normalize to NFC, split on whitespace; then lower-case each word and strip its
accents (NFD, drop the combining marks), and split every punctuation character off as a token of its
own (ASCII symbols such as ``$`` and ``^`` count as punctuation). The NFC step is transformers'
addition to Google's original code; the outputs agree with ``BertTokenizer``.

``basic_tokenize`` is that, character by character, the version to read. ``basic_tokenize_fast``
gives the same tokens (tests/test_tokenization.py compares the two on every ASCII character and on
real text) with a shortcut for ASCII text, where NFC, accents and CJK change nothing;
``lib.wordpiece.WordPieceTokenizer`` uses it.
"""

from __future__ import annotations

import re
import unicodedata

from lib._validate import check_text

__all__ = ["basic_tokenize", "basic_tokenize_fast"]


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
    check_text(text)
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


# --- the fast path -------------------------------------------------------------------------------

# The ASCII shortcut of basic_tokenize_fast, the same tokens about 19x faster (tests/test_tokenization.py compares
# the two on every ASCII character): for ASCII text the control characters (except tab, newline, carriage
# return) are dropped, those three become spaces, and NFC, accent stripping and CJK do nothing.
_ASCII_CLEAN = {c: None for c in (*range(32), 127)} | {ord(c): " " for c in "\t\n\r"}
# one ASCII symbol, or a run of others
_ASCII_PIECES = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~ ]+")


def basic_tokenize_fast(
    text: str,
    do_lower_case: bool = True,
    strip_accents: bool | None = None,
    tokenize_chinese_chars: bool = True,
) -> list[str]:
    """``basic_tokenize``, the same tokens, with a shortcut for ASCII text (two regular-expression
    passes instead of a loop over the characters): 0.18 s instead of 3.5 s for 8,000 story
    sentences (``lib.data.stories``, the corpus of chapters 14 and 16). Other text goes through ``basic_tokenize``."""
    check_text(text)
    if text.isascii():
        text = text.translate(_ASCII_CLEAN)  # only spaces are left as whitespace
        return _ASCII_PIECES.findall(text.lower() if do_lower_case else text)
    return basic_tokenize(text, do_lower_case, strip_accents, tokenize_chinese_chars)
