"""Tests of lib/checkpoints: every shipped model loads, checks its corpus, and translates."""

import pytest
import torch

from lib.checkpoints import SEQ2SEQ, load_seq2seq, seq2seq_path
from lib.data import build_vocabs, corpus_fingerprint, generate_pairs, make_batch, split_pairs
from lib.hard_attention import HardAttentionDecoder
from lib.seq2seq import BahdanauDecoder, LuongDecoder, PlainDecoder, greedy_decode


@pytest.fixture(scope="module")
def corpus():
    pairs = generate_pairs(4000, seed=0)
    train, _, test = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train)
    return pairs, test, src_vocab, tgt_vocab


def decoder(name, V):
    E, H = 32, 64
    return {
        "plain": lambda: PlainDecoder(V, E, H, 2 * H),
        "bahdanau": lambda: BahdanauDecoder(V, E, H, 2 * H, d_attn=64),
        "hard": lambda: HardAttentionDecoder(V, E, H, 2 * H, d_attn=64, reinforce_weight=0.05),
        "luong_global": lambda: LuongDecoder(V, E, H, 2 * H, score="concat"),
        "luong_local": lambda: LuongDecoder(V, E, H, 2 * H, score="concat", window=7),
    }[name]()


def test_fingerprint_is_stable_and_sensitive():
    a, b = generate_pairs(50, seed=0), generate_pairs(50, seed=1)
    assert corpus_fingerprint(a) == corpus_fingerprint(generate_pairs(50, seed=0))
    assert corpus_fingerprint(a) != corpus_fingerprint(b) and corpus_fingerprint(
        a
    ) != corpus_fingerprint(a[:-1])
    assert len(corpus_fingerprint(a)) == 64


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_every_shipped_model_loads_and_translates_short_sentences(corpus, name):
    pairs, test, src_vocab, tgt_vocab = corpus
    model, losses, meta = load_seq2seq(
        name, decoder(name, len(tgt_vocab)), pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
    )
    assert (
        not model.training
        and losses.ndim == 1
        and len(losses)
        == meta["training"]["steps"] * len(meta["config"].get("window_schedule", [None]))
    )
    short = [p for p in test if len(p.src) <= 8][:40]
    batch = make_batch(short, src_vocab, tgt_vocab)
    with torch.no_grad():
        tokens, _, _ = greedy_decode(
            model, batch.src, batch.src_lengths, 30, tgt_vocab.bos_id, tgt_vocab.eos_id
        )
    exact = sum(tgt_vocab.decode(t) == list(p.tgt) for t, p in zip(tokens, short)) / len(short)
    # every model, even the plain and the hard one, translates most short sentences (the chapters
    # measure > 60%); a random or mis-loaded model gets none right
    assert exact > 0.5, f"{name}: {exact:.0%} of short test sentences exact"


def test_the_wrong_corpus_vocabulary_or_decoder_is_refused(corpus):
    pairs, _, src_vocab, tgt_vocab = corpus
    V = len(tgt_vocab)
    with pytest.raises(ValueError, match="pairs: not the corpus 'plain' was trained on"):
        load_seq2seq(
            "plain", decoder("plain", V), pairs=pairs[:-1], src_vocab=src_vocab, tgt_vocab=tgt_vocab
        )
    with pytest.raises(ValueError, match="tgt_vocab: not the vocabulary 'plain' was trained with"):
        load_seq2seq(
            "plain", decoder("plain", V), pairs=pairs, src_vocab=src_vocab, tgt_vocab=src_vocab
        )
    with pytest.raises(
        ValueError, match="decoder: 'plain' holds a PlainDecoder, got a BahdanauDecoder"
    ):
        load_seq2seq(
            "plain", decoder("bahdanau", V), pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
        )
    with pytest.raises(
        ValueError, match="decoder: 'luong_local' was trained with window=7, got window=5"
    ):
        load_seq2seq(
            "luong_local",
            LuongDecoder(V, 32, 64, 128, score="concat", window=5),
            pairs=pairs,
            src_vocab=src_vocab,
            tgt_vocab=tgt_vocab,
        )
    with pytest.raises(ValueError, match="decoder: its sizes differ from the saved 'plain'"):
        load_seq2seq(
            "plain",
            PlainDecoder(V, 32, 48, 128),
            pairs=pairs,
            src_vocab=src_vocab,
            tgt_vocab=tgt_vocab,
        )
    with pytest.raises(ValueError, match="name: expected"):
        seq2seq_path("transformer")


def test_the_story_llama_loads_and_matches_its_stored_run():
    import json

    from lib.checkpoints import STORY_LLAMA_CURVES_PATH, load_story_llama
    from lib.llama import Llama

    model, vocab, info = load_story_llama()
    stored = json.loads(STORY_LLAMA_CURVES_PATH.read_text())
    assert isinstance(model, Llama) and not model.training
    assert len(vocab) == model.config.vocab_size == stored["recipe"]["vocab_size"]
    assert model.lm_head.weight is model.model.embed_tokens.weight  # tied, saved once
    # the run of seed 0 of the curves file: the same held-out loss before the float16 rounding
    assert abs(info["val_loss"] - stored["variants"]["llama"]["val_loss"][0]) < 1e-4
    assert info["training"]["steps"] == stored["recipe"]["steps"]
    assert all(p.dtype == torch.float32 for p in model.parameters())
