"""The language models: lib.ngram's bigram model against hand counts, recurrent LMs (causality, the backward model is the
forward one on reversed input, perplexity; lib.rnnlm), lib.word2vec's skip-gram with negative sampling against its formula,
nearest neighbours, lib.rnn_classifier's transfer classifier, and bad input."""

from __future__ import annotations

import math

import pytest
import torch

from lib import decoding
from lib.data import Vocab, stories
from lib.decoding import Decoded
from lib.ngram import EOS, BigramLM
from lib.rnn_classifier import RNNClassifier
from lib.rnnlm import (
    RNNLM,
    lm_batches,
    make_lm_batch,
    perplexity,
    reading_order,
    reverse_padded,
    sample,
    step_function,
)
from lib.train import fit
from lib.word2vec import (
    SkipGram,
    nearest_neighbours,
    noise_distribution,
    skipgram_batches,
    skipgram_pairs,
)
from tests.tolerance import assert_float_close

TOY = ["the dog barks", "the dog runs", "the cat runs", "a dog"]


@pytest.fixture(scope="module")
def toy_vocab():
    return Vocab.build([s.split() for s in TOY])


def batch_of(vocab, sentences):
    return make_lm_batch(sentences, vocab)


EPS32, EPS64 = torch.finfo(torch.float32).eps, torch.finfo(torch.float64).eps


def approx_rule(expected, terms, eps=EPS64, scale=None):
    """pytest.approx with tests/tolerance.py's bound, terms * eps * scale (scale: |expected| unless
    given), for Python floats (float64, unless the value was computed in float32: eps=EPS32)."""
    return pytest.approx(expected, abs=terms * eps * (abs(expected) if scale is None else scale))


# --- the bigram model ------------------------------------------------------------------------------


def test_bigram_estimates_equal_hand_counts():
    lm = BigramLM(TOY)
    # C(the) = 3: "the dog" twice, "the cat" once; C(<s>) = 4, "the" starts 3 of the 4 sentences
    # a count divided by a count against the fraction: one rounding each side
    assert lm.prob("dog", "the") == approx_rule(2 / 3, terms=2)
    assert lm.prob("cat", "the") == approx_rule(1 / 3, terms=2)
    assert lm.prob("the", "the") == 0.0
    assert lm.prob("the", "<s>") == approx_rule(3 / 4, terms=2)
    assert lm.prob(EOS, "runs") == 1.0
    # C(dog) = 3, followed by barks, runs and the end once each
    assert lm.prob("barks", "dog") == lm.prob(EOS, "dog") == approx_rule(1 / 3, terms=2)
    # P(the dog runs) = 3/4 * 2/3 * 1/3 * 1 = 1/6
    # 4 divisions, 4 logs, the sum of 4; the reference: a division and a log
    assert lm.log_prob("the dog runs") == approx_rule(math.log(1 / 6), terms=4 + 4 + 4 + 2)
    assert lm.log_prob(["the", "dog", "runs"]) == lm.log_prob("the dog runs")
    # perplexity: exp(-(ln 1/6 + ln P(a dog)) / (4 + 3)), P(a dog) = 1/4 * 1 * 1/3
    expected = math.exp(-(math.log(1 / 6) + math.log(1 / 12)) / 7)
    assert lm.perplexity(["the dog runs", "a dog"]) == pytest.approx(expected, rel=1e-12)


def test_add_k_smoothing_and_distributions_sum_to_one():
    lm = BigramLM(TOY, k=1.0)
    V = len(lm.vocab)
    assert V == 6 + 2  # a barks cat dog runs the, </s>, <unk>
    # (count + k) / (total + k V): integers, one division each side
    assert lm.prob("dog", "the") == approx_rule((2 + 1) / (3 + V), terms=2)
    assert lm.prob("the", "the") == approx_rule(1 / (3 + V), terms=2)
    # unknown: <unk>, count 0
    assert lm.prob("zebra", "the") == approx_rule(1 / (3 + V), terms=2)
    # V divisions and the sum over V, of probabilities summing to 1
    for prev in ["<s>", "the", "dog", "runs", "zebra"]:
        assert sum(lm.distribution(prev).values()) == approx_rule(1.0, terms=V + V)
    assert sum(BigramLM(TOY).distribution("dog").values()) == approx_rule(1.0, terms=V + V)
    first = next(iter(BigramLM(TOY).distribution("the")))
    assert first == "dog"  # most probable first


def test_unseen_bigrams_have_probability_zero_without_smoothing():
    mle, smooth = BigramLM(TOY), BigramLM(TOY, k=0.5)
    assert mle.log_prob("the cat barks") == -math.inf  # "cat barks" never seen
    assert mle.perplexity(["the dog runs", "the cat barks"]) == math.inf
    assert math.isfinite(smooth.perplexity(["the dog runs", "the cat barks"]))
    assert mle.prob("dog", "zebra") == 0.0  # unseen context: 0 (documented)


def test_lectures_example_on_the_story_corpus():
    """P(dog | the) > P(the | the): "the dog" occurs in the corpus, "the the" never."""
    lm = BigramLM(stories.generate_sentences(500, seed=0))
    assert lm.prob("dog", "the") > 0.005
    assert lm.prob("the", "the") == 0.0


def test_uniform_bigram_model_has_perplexity_v():
    lm = BigramLM(TOY, k=1e12)  # counts drowned: P -> 1/V
    assert lm.perplexity(TOY) == pytest.approx(len(lm.vocab), rel=1e-9)


# --- recurrent language models ---------------------------------------------------------------------


def test_reverse_padded_reverses_the_real_tokens_only():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [6, 7, 8, 9]])
    lengths = torch.tensor([3, 2, 4])
    assert reverse_padded(x, lengths).tolist() == [[3, 2, 1, 0], [5, 4, 0, 0], [9, 8, 7, 6]]
    y = torch.randn(3, 4, 5)
    assert torch.equal(reverse_padded(reverse_padded(y, lengths), lengths), y)
    assert torch.equal(reverse_padded(y, lengths)[0, 0], y[0, 2])


def test_make_lm_batch_adds_bos_eos_and_pads(toy_vocab):
    ids, mask = batch_of(toy_vocab, ["the dog runs", "a dog"])
    assert ids.shape == mask.shape == (2, 5)
    assert ids[0].tolist() == toy_vocab.encode("the dog runs".split(), add_bos=True, add_eos=True)
    assert ids[1, :4].tolist() == toy_vocab.encode(["a", "dog"], add_bos=True, add_eos=True)
    assert ids[1, 4] == toy_vocab.pad_id and mask.sum(1).tolist() == [5, 4]


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_forward_model_is_causal(cell):
    torch.manual_seed(0)
    model = RNNLM(20, d_emb=8, d_hidden=16, cell=cell).eval()
    ids = torch.randint(4, 20, (2, 9))
    for t in range(8):
        changed = ids.clone()
        changed[:, t + 1] = (ids[:, t + 1] - 4 + 1) % 16 + 4  # another token at t + 1
        with torch.no_grad():
            a, b = model(ids).logits, model(changed).logits
        assert (a[:, : t + 1] - b[:, : t + 1]).abs().max() == 0  # up to t: unchanged
        assert (a[:, t + 1 :] - b[:, t + 1 :]).abs().max() > 1e-4  # from t + 1 on: changed


def test_backward_model_is_anticausal():
    torch.manual_seed(0)
    model = RNNLM(20, d_emb=8, d_hidden=16, reverse=True).eval()
    ids = torch.randint(4, 20, (2, 9))
    for t in range(1, 9):
        changed = ids.clone()
        changed[:, t - 1] = (ids[:, t - 1] - 4 + 1) % 16 + 4
        with torch.no_grad():
            a, b = model(ids).logits, model(changed).logits
        assert (a[:, t:] - b[:, t:]).abs().max() == 0  # from t on: reads only t..end
        assert (a[:, :t] - b[:, :t]).abs().max() > 1e-4


def test_backward_model_is_the_forward_model_on_reversed_input(toy_vocab):
    torch.manual_seed(0)
    fwd = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16).eval()
    bwd = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, reverse=True).eval()
    bwd.load_state_dict(fwd.state_dict())
    ids, mask = batch_of(toy_vocab, ["the dog runs", "a dog", "the cat runs", "the dog barks"])
    lengths = mask.sum(1)
    flipped = reverse_padded(ids, lengths)
    with torch.no_grad():
        expected = reverse_padded(fwd(flipped, mask).logits, lengths)
        assert (bwd(ids, mask).logits - expected).abs().max() < 1e-6
        assert (bwd.loss(ids, mask) - fwd.loss(flipped, mask)).abs() < 1e-6
        # but a different model of the data
        assert (bwd.loss(ids, mask) - fwd.loss(ids, mask)).abs() > 1e-4


@pytest.mark.parametrize("reverse", [False, True])
def test_padding_changes_nothing(toy_vocab, reverse):
    torch.manual_seed(0)
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, reverse=reverse).eval()
    ids, mask = batch_of(toy_vocab, ["the dog runs", "a dog"])
    alone, alone_mask = batch_of(toy_vocab, ["a dog"])
    with torch.no_grad():
        assert (
            model(ids, mask).logits[1, :4] - model(alone, alone_mask).logits[0]
        ).abs().max() < 1e-6
        total, count = model.nll(ids, mask)
        t1, c1 = model.nll(*batch_of(toy_vocab, ["the dog runs"]))
        t2, c2 = model.nll(alone, alone_mask)
    assert count == c1 + c2 == 4 + 3 and abs(total - t1 - t2) < 1e-5


@pytest.mark.parametrize("reverse", [False, True])
def test_loss_is_the_cross_entropy_of_the_predicted_tokens(toy_vocab, reverse):
    torch.manual_seed(1)
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, reverse=reverse).eval()
    ids, mask = batch_of(toy_vocab, ["the dog runs", "a dog"])
    with torch.no_grad():
        logp = model(ids, mask).logits.log_softmax(-1)
        terms = []
        for b, n in enumerate(mask.sum(1).tolist()):
            for t in range(n - 1):
                if reverse:  # position t + 1 predicts the token before it
                    terms.append(-logp[b, t + 1, ids[b, t]])
                else:  # position t predicts the token after it
                    terms.append(-logp[b, t, ids[b, t + 1]])
        assert abs(model.loss(ids, mask) - torch.stack(terms).mean()) < 1e-6
        assert abs(perplexity(model, [(ids, mask)]) - math.exp(torch.stack(terms).mean())) < 1e-4


def test_uniform_rnn_model_has_perplexity_v(toy_vocab):
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16)
    with torch.no_grad():
        model.out.weight.zero_()
        model.out.bias.zero_()  # every logit 0: P = 1/V
    batches = [batch_of(toy_vocab, TOY[:2]), batch_of(toy_vocab, TOY[2:])]
    assert perplexity(model, batches) == pytest.approx(len(toy_vocab), rel=1e-5)
    assert model.training  # mode restored


def test_training_lowers_perplexity_below_the_bigram_model():
    """On a corpus with a dependency longer than one word, the RNN beats the bigram model."""
    # the first word decides the last: "x ... x" or "y ... y"; the middle is the same
    sentences = [f"{a} m m m {a}" for a in "xy"] * 40
    vocab = Vocab.build([s.split() for s in sentences])
    torch.manual_seed(0)
    model = RNNLM(len(vocab), d_emb=8, d_hidden=16)
    fit(
        model,
        lm_batches(sentences, vocab, 16, seed=0),
        lambda m, b: m.loss(*b),
        steps=300,
        lr=5e-2,
        progress=False,
        seed=0,
    )
    rnn_ppl = perplexity(model, [make_lm_batch(sentences[:2], vocab)])
    bigram_ppl = BigramLM(sentences).perplexity(sentences[:2])
    # bigram: P(x|<s>) = 1/2, P(m|x) = 1/2, P(m|m) = 2/3, P(x|m) = 1/6, P(</s>|x) = 1/2
    assert bigram_ppl == pytest.approx(
        math.exp(-math.log(0.5 * 0.5 * (2 / 3) ** 2 * (1 / 6) * 0.5) / 6), rel=1e-9
    )
    # 6 predictions per sentence, only the first is uncertain: the best possible is 2^(1/6) = 1.12; a model
    # that does not carry the first word to the last guesses that one too: 4^(1/6) = 1.26
    assert rnn_ppl < 1.2 < 2.0 < bigram_ppl


def test_sample_is_deterministic_and_follows_a_peaked_model(toy_vocab):
    torch.manual_seed(0)
    for reverse in (False, True):
        model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, reverse=reverse)
        drawn = sample(model, 4, toy_vocab.bos_id, toy_vocab.eos_id, max_len=6, seed=3)
        assert isinstance(drawn, Decoded) and drawn.tokens.shape[0] == 4
        again = sample(model, 4, toy_vocab.bos_id, toy_vocab.eos_id, max_len=6, seed=3)
        assert torch.equal(drawn.tokens, again.tokens) and torch.equal(
            drawn.log_prob, again.log_prob
        )
        a = reading_order(model, drawn, toy_vocab.bos_id, toy_vocab.eos_id)
        assert all(len(s) <= 6 and all(0 <= i < len(toy_vocab) for i in s) for s in a)
    # a model that always says "dog" then (after a dog) the end: forward "dog", backward "dog" too
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16)
    with torch.no_grad():
        model.out.weight.zero_()
        model.out.bias.fill_(-50.0)
        model.out.bias[toy_vocab.stoi["dog"]] = 50.0
    drawn = sample(model, 2, toy_vocab.bos_id, toy_vocab.eos_id, max_len=5, seed=0)
    out = reading_order(model, drawn, toy_vocab.bos_id, toy_vocab.eos_id)
    assert out == [[toy_vocab.stoi["dog"]] * 5] * 2  # never stops: cut at max_len
    # P(dog) = 1 - e^-100: log p = -1e-43; each of the 5 steps' log-softmax over V is off by V eps of
    # the logits' size 50, and the 5 are summed
    V = len(toy_vocab)
    assert_float_close(drawn.log_prob, torch.zeros(2), terms=5 * V + 5, scale=50.0)


def test_step_function_decodes_as_the_teacher_forced_model(toy_vocab):
    """Greedy search and beam search through step_function agree with one teacher-forced pass: the
    greedy tokens are the argmax of the forward's logits, the beam's log_prob is the log-probability
    of its tokens (so the state followed the beam's reordering)."""
    torch.manual_seed(0)
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, n_layers=2, cell="lstm").eval()
    bos, eos = toy_vocab.bos_id, toy_vocab.eos_id
    start = torch.full((1, 1), bos)

    def teacher_forced_logp(tokens):  # [L] -> log p(tokens | <bos>), up to <eos>
        n = tokens.tolist().index(eos) + 1 if eos in tokens.tolist() else len(tokens)
        with torch.no_grad():
            logp = model(torch.cat([start[0], tokens[: n - 1]])[None]).logits[0].log_softmax(-1)
        return logp, logp.gather(-1, tokens[:n, None]).sum(), n

    with torch.no_grad():
        greedy = decoding.greedy(step_function(model), start, 8, eos)
        beam = decoding.beam_search(step_function(model), start, 8, 3, eos)
    logp, total, n = teacher_forced_logp(greedy.tokens[0])
    assert torch.equal(greedy.tokens[0, :n], logp.argmax(-1))
    assert abs(float(greedy.log_prob[0] - total)) < 1e-5
    assert abs(float(beam.log_prob[0] - teacher_forced_logp(beam.tokens[0])[1])) < 1e-5
    assert beam.log_prob[0] >= greedy.log_prob[0] - 1e-6


def test_reading_order_cuts_and_reverses_the_rows(toy_vocab):
    """A backward model draws right to left: reading_order() cuts each row at <bos> and reverses it."""
    model = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, reverse=True)
    the, dog, bos, eos = (
        toy_vocab.stoi["the"],
        toy_vocab.stoi["dog"],
        toy_vocab.bos_id,
        toy_vocab.eos_id,
    )
    drawn = Decoded(torch.tensor([[dog, the, bos, 0], [dog, dog, dog, dog]]), torch.zeros(2), None)
    assert reading_order(model, drawn, bos, eos) == [[the, dog], [dog] * 4]
    forward = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16)
    drawn = Decoded(torch.tensor([[the, dog, eos, 0]]), torch.zeros(1), None)
    assert reading_order(forward, drawn, bos, eos) == [[the, dog]]


# --- skip-gram ----------------------------------------------------------------------------------------


def test_skipgram_loss_equals_the_formula():
    torch.manual_seed(0)
    model = SkipGram(10, dim=4)
    with torch.no_grad():
        model.out_embed.weight.normal_()  # zero at init: make it interesting
        model.in_embed.weight.normal_()
    center, context = torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])
    negatives = torch.tensor([[7, 8], [9, 1], [2, 2]])
    v, u = model.in_embed.weight.detach(), model.out_embed.weight.detach()

    def sigma(x):
        return 1 / (1 + math.exp(-x))

    expected = 0.0
    for c, o, ns in zip(center.tolist(), context.tolist(), negatives.tolist()):
        expected -= math.log(sigma(float(u[o] @ v[c])))
        expected -= sum(math.log(sigma(-float(u[n] @ v[c]))) for n in ns)
    assert abs(model.loss(center, context, negatives).item() - expected / 3) < 1e-5
    assert torch.equal(model.vectors, model.in_embed.weight.detach())


def test_skipgram_initialization_is_word2vecs():
    model = SkipGram(50, dim=10)
    assert model.out_embed.weight.abs().max() == 0
    assert model.in_embed.weight.abs().max() <= 0.5 / 10
    assert model.loss(
        torch.tensor([4]), torch.tensor([5]), torch.tensor([[6, 7]])
    ).item() == approx_rule(
        3 * math.log(2), terms=3 + 3, eps=EPS32
    )  # all scores 0: 3 log-sigmoids, their sum


def test_skipgram_pairs_within_the_window(toy_vocab):
    center, context = skipgram_pairs(["the dog barks"], toy_vocab, window=1)
    words = [
        (toy_vocab.itos[c], toy_vocab.itos[o]) for c, o in zip(center.tolist(), context.tolist())
    ]
    assert words == [("the", "dog"), ("dog", "the"), ("dog", "barks"), ("barks", "dog")]
    center, _ = skipgram_pairs(["the dog barks"], toy_vocab, window=2)
    assert len(center) == 6
    # unknown words dropped first
    center, _ = skipgram_pairs(["the zebra barks"], toy_vocab, window=1)
    assert len(center) == 2


def test_subsampling_thins_out_frequent_words():
    sentences = ["a " * 50 + "b c d"] * 20
    vocab = Vocab.build([s.split() for s in sentences])
    c1, _ = skipgram_pairs(sentences, vocab, window=1, subsample=1e-2, seed=0)
    c2, _ = skipgram_pairs(sentences, vocab, window=1, subsample=1e-2, seed=0)
    assert torch.equal(c1, c2)  # deterministic
    full, _ = skipgram_pairs(sentences, vocab, window=1)

    def share(c):
        return (c == vocab.stoi["a"]).float().mean().item()

    assert share(full) > 0.9 and share(c1) < 0.8  # "a" loses its dominance


def test_noise_distribution_is_unigram_to_the_three_quarters(toy_vocab):
    noise = noise_distribution(TOY, toy_vocab)
    counts = {"the": 3, "dog": 3, "barks": 1, "runs": 2, "cat": 1, "a": 1}
    z = sum(c**0.75 for c in counts.values())
    for w, c in counts.items():
        assert noise[toy_vocab.stoi[w]].item() == pytest.approx(c**0.75 / z, rel=1e-5)
    # float32: the powers and divisions (2), the normalizer's sum over V and this sum over V, summing to 1
    V = len(toy_vocab)
    assert noise[:4].sum() == 0 and noise.sum().item() == approx_rule(
        1.0, terms=2 + V + V, eps=EPS32
    )


def test_skipgram_batches_draw_negatives_from_the_noise(toy_vocab):
    center, context = skipgram_pairs(TOY, toy_vocab, window=1)
    noise = torch.zeros(len(toy_vocab))
    noise[toy_vocab.stoi["cat"]], noise[toy_vocab.stoi["a"]] = 0.75, 0.25
    stream = skipgram_batches(center, context, noise, batch_size=4, negatives=3, seed=0)
    drawn = []
    for _ in range(200):
        c, o, n = next(stream)
        assert c.shape == o.shape and n.shape == (len(c), 3)
        drawn.append(n.flatten())
    drawn = torch.cat(drawn)
    assert set(drawn.tolist()) == {toy_vocab.stoi["cat"], toy_vocab.stoi["a"]}
    assert abs((drawn == toy_vocab.stoi["cat"]).float().mean().item() - 0.75) < 0.03


def test_skipgram_learns_which_words_share_contexts():
    """Two groups of words that never appear together: after training, a word's neighbours are its group."""
    sentences = [f"{a} {b} {a}" for a in "abc" for b in "abc" if a != b] * 10 + [
        f"{a} {b} {a}" for a in "xyz" for b in "xyz" if a != b
    ] * 10
    vocab = Vocab.build([s.split() for s in sentences])
    center, context = skipgram_pairs(sentences, vocab, window=2)
    torch.manual_seed(0)
    model = SkipGram(len(vocab), dim=8)
    fit(
        model,
        skipgram_batches(center, context, noise_distribution(sentences, vocab), 64, 3, seed=0),
        lambda m, b: m.loss(*b),
        steps=300,
        lr=2e-2,
        progress=False,
        seed=0,
    )
    for word, group in [("a", {"b", "c"}), ("y", {"x", "z"})]:
        assert {w for w, _ in nearest_neighbours(model.vectors, vocab, word, k=2)} == group


def test_nearest_neighbours_of_a_planted_structure():
    vocab = Vocab(["a1", "a2", "a3", "b1", "b2"])
    vectors = torch.zeros(len(vocab), 3)
    vectors[:4] = torch.tensor([0.0, 0.0, 1.0])  # specials: left out by default
    vectors[4:] = torch.tensor(
        [
            [1.0, 0.0, 0.0],
            [2.0, 0.2, 0.0],
            [1.0, 0.5, 0.0],  # a's: along x
            [0.0, 1.0, 0.1],
            [0.1, 3.0, 0.0],
        ]
    )  # b's: along y
    out = nearest_neighbours(vectors, vocab, "a1", k=3)
    assert [w for w, _ in out] == ["a2", "a3", "b2"]
    # float32 cosine: two norms over 3 (+ sqrt), the product over 3, the division; cosines <= 1
    cosine = 2.0 / math.hypot(2.0, 0.2)
    assert out[0][1] == approx_rule(cosine, terms=2 * (3 + 1) + 3 + 1, eps=EPS32, scale=1.0)
    assert [w for w, _ in nearest_neighbours(vectors, vocab, "b1", k=1)] == ["b2"]
    with_specials = [
        w for w, _ in nearest_neighbours(vectors, vocab, "b1", k=3, exclude_specials=False)
    ]
    assert with_specials[:2] == ["b2", "a3"] and with_specials[2] in vocab.specials


# --- transfer ----------------------------------------------------------------------------------------


def test_classifier_from_lm_starts_with_the_lms_states(toy_vocab):
    torch.manual_seed(0)
    lm = RNNLM(len(toy_vocab), d_emb=8, d_hidden=16, cell="gru").eval()
    clf = RNNClassifier.from_lm(lm, n_classes=3).eval()
    ids, mask = batch_of(toy_vocab, ["the dog runs", "a dog"])
    with torch.no_grad():
        states, _ = lm.rnn(lm.embedding(ids))  # [B, T, H]
        last = states[torch.arange(2), mask.sum(1) - 1]  # [B, H]
        assert (clf(ids, mask).logits - clf.head(last)).abs().max() < 1e-6
        clf.embedding.weight.add_(1.0)
    assert lm.embedding.weight.abs().max() <= 0.1  # a copy: the LM is untouched
    alone = batch_of(toy_vocab, ["a dog"])
    with torch.no_grad():
        # the last real token, not the padding
        assert (clf(ids, mask).logits[1] - clf(*alone).logits[0]).abs().max() < 1e-6


def test_classifier_loads_word_vectors(toy_vocab):
    clf = RNNClassifier(len(toy_vocab), d_emb=4, d_hidden=8)
    vectors = torch.randn(len(toy_vocab), 4)
    assert torch.equal(clf.load_word_vectors(vectors).embedding.weight.detach(), vectors)
    with pytest.raises(ValueError, match="vectors"):
        clf.load_word_vectors(torch.randn(len(toy_vocab), 5))


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_input_names_the_argument(toy_vocab):
    with pytest.raises(ValueError, match="k: expected a finite number >= 0, got -1"):
        BigramLM(TOY, k=-1)
    with pytest.raises(ValueError, match="sentences"):
        BigramLM([])
    with pytest.raises(TypeError, match="sentences"):
        BigramLM("the dog")
    with pytest.raises(ValueError, match="reserved"):
        BigramLM(["the </s> dog"])
    with pytest.raises(TypeError, match="word"):
        BigramLM(TOY).prob(3, "the")
    with pytest.raises(ValueError, match="cell: expected 'lstm' or 'gru', got 'rnn'"):
        RNNLM(10, cell="rnn")
    with pytest.raises(ValueError, match="vocab_size"):
        RNNLM(0)
    model = RNNLM(10, d_emb=4, d_hidden=4)
    with pytest.raises(ValueError, match=r"input_ids: expected ids in \[0, 10\)"):
        model(torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match=r"input_ids: expected shape \[B, T\]"):
        model(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="input_ids: expected a tensor of token ids"):
        model(torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="attention_mask: expected True on a prefix of each row"):
        model(torch.tensor([[1, 2, 3]]), torch.tensor([[True, False, True]]))
    with pytest.raises(TypeError, match="attention_mask: expected a bool or 0/1 integer tensor"):
        model(torch.tensor([[1, 2, 3]]), torch.ones(1, 3))
    with pytest.raises(ValueError, match=r"attention_mask: expected 0/1 values, got \[1, 2\]"):
        model(torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2, 1]]))
    # a 0/1 attention_mask, as Hugging Face's, means the same as the bool one
    x, m = torch.tensor([[1, 2, 3], [4, 5, 0]]), torch.tensor([[1, 1, 1], [1, 1, 0]])
    assert torch.equal(model(x, m).logits, model(x, m.bool()).logits)
    with pytest.raises(ValueError, match="temperature"):
        sample(model, 1, 1, 2, temperature=0)
    sg = SkipGram(10, 4)
    with pytest.raises(ValueError, match="negatives"):
        sg.loss(torch.tensor([1]), torch.tensor([2]), torch.tensor([3]))
    with pytest.raises(ValueError, match=r"context: expected ids in \[0, 10\)"):
        sg.loss(torch.tensor([1]), torch.tensor([12]), torch.tensor([[3]]))
    with pytest.raises(ValueError, match="center, context, negatives"):
        sg.loss(torch.tensor([1, 2]), torch.tensor([2]), torch.tensor([[3]]))
    with pytest.raises(ValueError, match="window: expected an int >= 1, got 0"):
        skipgram_pairs(TOY, toy_vocab, window=0)
    with pytest.raises(ValueError, match="subsample"):
        skipgram_pairs(TOY, toy_vocab, subsample=-1.0)
    with pytest.raises(ValueError, match="word: 'zebra' is not in the vocabulary"):
        nearest_neighbours(torch.randn(len(toy_vocab), 3), toy_vocab, "zebra")
    with pytest.raises(ValueError, match="vectors: expected a tensor"):
        nearest_neighbours(torch.randn(3, 3), toy_vocab, "dog")
    with pytest.raises(ValueError, match="lm: expected a forward model"):
        RNNClassifier.from_lm(RNNLM(10, reverse=True))
    with pytest.raises(TypeError, match="lm: expected an RNNLM"):
        RNNClassifier.from_lm(sg)
    with pytest.raises(ValueError, match="lengths"):
        reverse_padded(torch.zeros(2, 3), torch.tensor([1, 4]))
    with pytest.raises(ValueError, match="power"):
        noise_distribution(TOY, toy_vocab, power=-1)
