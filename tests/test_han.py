"""lib.data.documents (synthetic reviews with a documented label rule) and lib.han (Yang et al. 2016)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lib.data import documents as D
from lib.han import ContextAttention, HierarchicalAttentionNetwork
from lib.train import fit
from tests.tolerance import assert_float_close


@pytest.fixture(scope="module")
def docs():
    return D.generate_documents(300, seed=5)


@pytest.fixture(scope="module")
def vocab():
    return D.build_vocab()


@pytest.fixture(scope="module")
def model(vocab):
    torch.manual_seed(0)
    return HierarchicalAttentionNetwork(
        len(vocab), d_emb=8, d_word=8, d_sentence=8, d_attn=8
    ).eval()


# --- the generator -----------------------------------------------------------------------------------


def test_same_seed_same_documents_other_seed_other_documents():
    assert D.generate_documents(30, seed=2) == D.generate_documents(30, seed=2)
    assert D.generate_documents(30, seed=2) != D.generate_documents(30, seed=3)


def test_the_label_rule_holds(docs):
    """The label is the polarity of the opinions about dishes, stored in the key sentences."""
    for d in docs:
        assert 4 <= len(d.sentences) <= 8 and d.label in (0, 1)
        assert D.label_of(d.sentences) == d.label
        assert 1 <= len(d.key_sentences) <= 2 and len(d.key_words) == len(d.key_sentences)
        for (s, w), (s2, w2) in zip(d.key_words, d.dish_words):
            assert s == s2 and s in d.key_sentences
            assert d.sentences[s][w] in (D.POSITIVE if d.label else D.NEGATIVE)
            assert d.sentences[s][w2] in D.DISHES
        for i, sentence in enumerate(d.sentences):
            opinion = any(w in D.POSITIVE + D.NEGATIVE for w in sentence)
            about_a_dish = any(w in D.DISHES for w in sentence)
            assert (i in d.key_sentences) == (opinion and about_a_dish)
        assert any(
            w in D.POSITIVE + D.NEGATIVE
            for i, s in enumerate(d.sentences)
            if i not in d.key_sentences
            for w in s
        )  # at least one distractor opinion
    long = D.generate_documents(50, seed=1, min_sentences=12, max_sentences=12)
    assert all(len(d.sentences) == 12 and D.label_of(d.sentences) == d.label for d in long)


def test_only_a_dish_is_ordered_or_brought(docs):
    """A neutral sentence makes sense: what a friend orders or the kitchen brings is a dish, while
    "i asked about the X ." may name anything."""
    served = [s for d in docs for s in d.sentences if "ordered" in s or "brought" in s]
    asked = {s[-2] for d in docs for s in d.sentences if s[:3] == ("i", "asked", "about")}
    assert len(served) > 50 and all(s[s.index("the") + 1] in D.DISHES for s in served)
    assert asked & set(D.OTHERS) and asked & set(D.DISHES)


def test_labels_are_balanced_and_counting_words_is_not_enough(docs):
    positive = sum(d.label for d in docs) / len(docs)
    counting = sum(D.count_rule(d.sentences) == d.label for d in docs) / len(docs)
    assert 0.4 < positive < 0.6
    assert 0.6 < counting < 0.95  # a real baseline, not a solution


def test_label_of_rejects_documents_without_a_clear_opinion_on_the_food():
    with pytest.raises(ValueError, match="sentences"):
        D.label_of([("the", "music", "was", "great", ".")])
    with pytest.raises(ValueError, match="sentences"):
        D.label_of([("the", "soup", "was", "great", "."), ("the", "fish", "was", "awful", ".")])


def test_vocab_covers_every_word_and_batches_pad(docs, vocab):
    words = {w for d in docs for s in d.sentences for w in s}
    assert words <= set(vocab.itos) and vocab.pad_id == 0
    batch = D.make_batch(docs[:7], vocab)
    S = max(len(d.sentences) for d in docs[:7])
    W = max(len(s) for d in docs[:7] for s in d.sentences)
    assert batch.docs.shape == (7, S, W) and batch.labels.tolist() == [d.label for d in docs[:7]]
    for b, d in enumerate(docs[:7]):
        for i in range(S):
            got = vocab.decode(batch.docs[b, i])
            assert got == (list(d.sentences[i]) if i < len(d.sentences) else [])
    assert sum(len(b) for b in D.batches(docs, vocab, 64)) == len(docs)
    stream = D.epochs(docs, vocab, 100, seed=1)
    assert sum(len(next(stream)) for _ in range(6)) == 2 * len(docs)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: D.generate_documents(0), "n"),
        (lambda v: D.generate_documents(5, min_sentences=3), "min_sentences"),
        (lambda v: D.generate_documents(5, min_sentences=6, max_sentences=5), "max_sentences"),
        (lambda v: D.generate_documents(5, max_sentences=13), "max_sentences"),
        (lambda v: D.make_batch([], v), "documents"),
        (lambda v: list(D.batches(D.generate_documents(3), v, 0)), "batch_size"),
    ],
)
def test_generator_bad_input_names_the_argument(vocab, call, name):
    with pytest.raises(ValueError, match=name):
        call(vocab)


# --- the model ---------------------------------------------------------------------------------------


def test_context_attention_is_yangs_formula():
    """alpha_t = softmax_t(u^T tanh(W h_t + b)), computed with a loop over positions."""
    torch.manual_seed(1)
    attn = ContextAttention(6, 5)
    h = torch.randn(2, 4, 6)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    pooled, weights = attn(h, mask)
    W, b, u = attn.score.W_k.weight, attn.score.W_q.weight[:, 0], attn.score.v_a.weight[0]
    for i in range(2):
        n = int(mask[i].sum())
        scores = torch.stack([u @ torch.tanh(W @ h[i, t] + b) for t in range(n)])
        expected = torch.softmax(scores, 0)
        assert (weights[i, :n] - expected).abs().max() < 1e-6 and (weights[i, n:] == 0).all()
        assert (pooled[i] - expected @ h[i, :n]).abs().max() < 1e-6


def levels(model, input_ids, attention_mask=None):
    """(logits [B, C], word weights [B, S, W], sentence weights [B, S]): the forward with
    return_attention=True, each level's one layer, one head and one query."""
    out = model(input_ids, attention_mask, return_attention=True)
    return out.logits, out.word_attentions[0][:, :, 0, 0], out.sentence_attentions[0][:, 0, 0]


def test_attentions_only_when_asked_and_the_mask_is_the_padding(docs, vocab, model):
    """HANOutput(logits, word_attentions, sentence_attentions): None by default; with
    return_attention=True ([B, S, 1, 1, W],) and ([B, 1, 1, S],). attention_mask = ids != pad_id
    gives the same output as no mask; a mask that hides a sentence's last word drops it."""
    batch = D.make_batch(docs[:3], vocab).docs
    B, S, W = batch.shape
    mask = batch != vocab.pad_id
    with torch.no_grad():
        plain, asked = model(batch), model(batch, mask.long(), return_attention=True)
    assert plain.word_attentions is None and plain.sentence_attentions is None
    assert torch.equal(plain.logits, asked.logits)
    assert asked.word_attentions[0].shape == (B, S, 1, 1, W)
    assert asked.sentence_attentions[0].shape == (B, 1, 1, S)
    shorter = mask.clone()
    n = int(mask[0, 0].sum())
    shorter[0, 0, n - 1] = False  # the last real word of the first sentence, hidden
    _, words, _ = levels(model, batch, shorter)
    assert words[0, 0, n - 1] == 0 and abs(float(words[0, 0].sum()) - 1) < 1e-6
    with pytest.raises(ValueError, match="attention_mask"):
        model(batch, mask[:, :, :1])


def test_forward_shapes_and_weights_sum_to_one_on_real_words_only(docs, vocab, model):
    batch = D.make_batch(docs[:9], vocab)
    logits, word_w, sent_w = levels(model, batch.docs)
    B, S, W = batch.docs.shape
    assert logits.shape == (B, 2) and word_w.shape == (B, S, W) and sent_w.shape == (B, S)
    words = batch.docs != vocab.pad_id
    sentences = words.any(-1)
    assert (word_w[~words] == 0).all() and (sent_w[~sentences] == 0).all()
    # softmax's sum over the W words + this sum over W (and over the S sentences), of probabilities
    # summing to 1
    assert_float_close(
        word_w.sum(-1)[sentences], torch.ones(int(sentences.sum())), terms=W + W, scale=1
    )
    assert_float_close(sent_w.sum(-1), torch.ones(B), terms=S + S, scale=1)


def test_padding_changes_nothing(docs, vocab, model):
    """A document alone, or padded with extra words and sentences inside a batch, gets the same output."""
    d = docs[0]
    alone = D.make_batch([d], vocab).docs
    padded = F.pad(alone, (0, 3, 0, 2), value=vocab.pad_id)  # 3 more pad words, 2 pad sentences
    a_logits, a_words, a_sents = levels(model, alone)
    p_logits, p_words, p_sents = levels(model, padded)
    S, W = alone.shape[1:]
    assert (a_logits - p_logits).abs().max() < 1e-5
    assert (a_words - p_words[:, :S, :W]).abs().max() < 1e-6 and (p_words[:, :, W:] == 0).all()
    assert (a_sents - p_sents[:, :S]).abs().max() < 1e-6 and (p_sents[:, S:] == 0).all()
    batch = D.make_batch(docs[:5], vocab).docs
    assert (model(batch)[0][0] - a_logits[0]).abs().max() < 1e-5


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda x: x.float(), "input_ids"),
        (lambda x: x[0], "input_ids"),
        (lambda x: x + 1000, "input_ids"),
        (lambda x: torch.zeros_like(x), "input_ids"),
    ],
)
def test_bad_input_names_the_argument(docs, vocab, model, make, name):
    batch = D.make_batch(docs[:2], vocab).docs
    with pytest.raises(ValueError, match=name):
        model(make(batch))
    with pytest.raises(ValueError, match="vocab_size"):
        HierarchicalAttentionNetwork(0)


def test_a_tiny_han_learns_the_rule_and_attends_to_the_key_sentence(vocab, one_thread):
    """Trained briefly, the network classifies held-out reviews well and its largest sentence weight
    falls on a key sentence far more often than chance."""
    torch.manual_seed(0)
    train, test = D.generate_documents(600, seed=0), D.generate_documents(200, seed=1)
    m = HierarchicalAttentionNetwork(len(vocab), d_emb=16, d_word=16, d_sentence=16, d_attn=16)
    fit(
        m,
        D.epochs(train, vocab, 32),
        lambda m, b: F.cross_entropy(m(b.docs)[0], b.labels),
        steps=80,
        lr=5e-3,
        decay="constant",
        progress=False,
    )
    batch = D.make_batch(test, vocab)
    with torch.no_grad():
        logits, _, sent_w = levels(m, batch.docs)
    accuracy = (logits.argmax(-1) == batch.labels).float().mean().item()
    on_key = sum(int(sent_w[i].argmax()) in d.key_sentences for i, d in enumerate(test)) / len(test)
    chance = sum(len(d.key_sentences) / len(d.sentences) for d in test) / len(test)
    assert accuracy > 0.9, accuracy
    assert on_key > 2 * chance, (on_key, chance)
