"""The page's tokenizers (web/src/tokenizers.js, run under node) equal the library's.

WordPiece against lib.wordpiece.WordPieceTokenizer on MiniLM's vocabulary, and the translator's word
vocabulary against lib.data's, on 1,400+ sentences: the story and translation corpora, the chapters'
sentences, and generated text mixing accents, CJK, emoji, other scripts, punctuation, control and odd
whitespace characters and words over the 100-character limit (seeded, the same on every run).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOKENIZERS = ROOT / "web" / "src" / "tokenizers.js"

NODE_SCRIPT = """
import { readFileSync } from "node:fs";
import { WordPiece, WordVocab } from "%s";
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const wp = new WordPiece(readFileSync(job.vocab, "utf8"));
const words = new WordVocab(job.source, job.unk);
const out = {
  wordpiece: job.texts.map((t) => wp.encode(t, job.max_tokens)),
  words: job.word_texts.map((t) => words.encode(t)),
};
process.stdout.write(JSON.stringify(out));
"""

POOL = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?'\"()[]{}-_$^&*/\\éèêëàâäôöûüçñÅÉÎØßœæ ЖжПривет ΑΣΩας 日本語中文字 한국어 العربية हिन्दी 🙂🚀👍🏽 \t\n\r\u00a0\u2028\u200b\u0301\ufeff\x00\x07\ufffd"
CHAPTER_SENTENCES = [
    "The trophy didn't fit in the suitcase because it was too big",
    "The animal didn't cross the street because it was too tired.",
    "The FBI is chasing a criminal on the run.",
    "I put my money in the bank.",
    "She is eating a green apple",
    "unaffable",
    "Héllo, WORLD!",
    "[CLS] a [MASK] b [SEP]",
    "",
    "   ",
    "naïve café résumé Ångström",
    "x" * 101,
    "y" * 100,
    "日本語のテキスト",
    "The trophy was too big. " * 30,
]


def sentences(n_random: int = 700) -> list[str]:
    from lib.data.stories import generate_sentences
    from lib.data.translation import generate_pairs

    rng = random.Random(0)
    texts = list(CHAPTER_SENTENCES) + generate_sentences(300, seed=1)
    texts += [" ".join(p.src) for p in generate_pairs(200, seed=2)]
    texts += [" ".join(p.tgt).capitalize() + "." for p in generate_pairs(100, seed=3)]
    for _ in range(n_random):
        length = rng.choice([1, 5, 20, 60, 130])
        texts.append("".join(rng.choice(POOL) for _ in range(length)))
    return texts


def test_enough_sentences():
    assert len(sentences()) >= 1000


def source_vocab():
    from lib.data import build_vocabs, generate_pairs, split_pairs

    train, _, _ = split_pairs(generate_pairs(4000, seed=0), seed=0)  # the translator's corpus
    return build_vocabs(train)[0]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    from lib.pretrained import minilm_files
    from lib.wordpiece import WordPieceTokenizer

    node = shutil.which("node")
    assert node, "node is required (it runs the page's JavaScript in the tests)"
    tmp = tmp_path_factory.mktemp("tok")
    vocab_file = minilm_files()[1]
    texts = sentences()
    word_texts = [t for t in texts if t.isascii()][:400] + ["a cow", "A COW runs", "zebra cow", ""]
    src = source_vocab()
    job = {
        "vocab": str(vocab_file),
        "source": src.itos,
        "unk": src.unk_id,
        "max_tokens": 128,
        "texts": texts,
        "word_texts": word_texts,
    }
    (tmp / "job.json").write_text(json.dumps(job))
    (tmp / "run.mjs").write_text(NODE_SCRIPT % TOKENIZERS.as_uri())
    done = subprocess.run(
        [node, str(tmp / "run.mjs"), str(tmp / "job.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return (
        json.loads(done.stdout),
        texts,
        word_texts,
        WordPieceTokenizer.from_vocab_file(vocab_file),
        src,
    )


def test_wordpiece_equals_the_library(compared):
    js, texts, _, tokenizer, _ = compared
    mismatches = []
    for text, got in zip(texts, js["wordpiece"], strict=True):
        enc = tokenizer.encode(text, max_length=128)
        if got["tokens"] != enc.tokens or got["ids"] != enc.input_ids:
            mismatches.append((text, got["tokens"], enc.tokens))
        assert got["truncated"] == (len(tokenizer.tokenize(text)) + 2 > 128)
    assert not mismatches, mismatches[:3]
    # the sample holds what the issue asks for: truncation, [UNK] words, CJK, accents
    assert any(g["truncated"] for g in js["wordpiece"]) and any(
        g["unknown"] for g in js["wordpiece"]
    )


def test_word_vocabulary_equals_the_library(compared):
    js, _, word_texts, _, src = compared
    for text, got in zip(word_texts, js["words"], strict=True):
        words = text.lower().split()
        assert got["tokens"] == words and got["ids"] == src.encode(words)
        assert got["unknown"] == [w for w in words if w not in src.stoi]
