"""lib.decoding, the one decoding toolkit: greedy search, sampling and beam search over a step
function, checked on small hand-made "models" whose every probability is known."""

import itertools
import math

import pytest
import torch

from lib import decoding
from lib.decoding import Decoded, beam_hypotheses, beam_search, gnmt_penalty, greedy, sample

V, EOS, PAD, BOS = 5, 4, 0, 1


def table(seed: int, vocab: int = V) -> torch.Tensor:
    """A random [vocab ** 2, vocab] table of logits: the next token depends on the last two."""
    g = torch.Generator().manual_seed(seed)
    return 2.0 * torch.randn(vocab * vocab, vocab, generator=g, dtype=torch.float64)


def stateless(logits_table: torch.Tensor, vocab: int = V):
    """A step that reads the whole prefix: logits of the next token from its last two tokens."""

    def step(tokens, parents):
        prev = tokens[:, -2] if tokens.shape[1] > 1 else torch.zeros_like(tokens[:, -1])
        return logits_table[prev * vocab + tokens[:, -1]], None

    return step


def stateful(logits_table: torch.Tensor, vocab: int = V):
    """The same model as ``stateless``, but keeping the previous token as its own state (as an RNN
    keeps its hidden state), so that it is right only if it follows ``parents``. It also reports an
    'attention' row [K, 3] (a function of the state) for the decoders to collect."""
    state = None

    def step(tokens, parents):
        nonlocal state
        if state is None:
            state = tokens[:, -2] if tokens.shape[1] > 1 else torch.zeros_like(tokens[:, -1])
        elif parents is not None:
            state = state[parents]
        logits = logits_table[state * vocab + tokens[:, -1]]
        attention = torch.stack([state, tokens[:, -1], state + 1], dim=1).double()
        state = tokens[:, -1]
        return logits, attention

    return step


def log_prob_of(logits_table, start, tokens) -> float:
    """log p(tokens | start) under the table, summed by hand."""
    seq, total = list(start), 0.0
    for y in tokens:
        prev = seq[-2] if len(seq) > 1 else 0
        total += torch.log_softmax(logits_table[prev * V + seq[-1]], -1)[y].item()
        seq.append(y)
    return total


@pytest.mark.parametrize("seed", range(6))
def test_beam_width_one_is_greedy_and_follows_the_parents(seed):
    logits_table, start = table(seed), torch.tensor([[BOS, 2]])
    g = greedy(stateless(logits_table), start, 8, EOS, PAD)
    for step in (stateless(logits_table), stateful(logits_table)):
        b = beam_search(step, start, 8, beam_width=1, eos_id=EOS)
        assert torch.equal(b.tokens, g.tokens) and torch.allclose(b.log_prob, g.log_prob)
    # wider beams: the stateful step, reordered by parents, finds what the stateless one finds
    for width in (2, 3, 7):
        a = beam_search(stateless(logits_table), start, 8, width, EOS)
        b = beam_search(stateful(logits_table), start, 8, width, EOS)
        assert torch.equal(a.tokens, b.tokens) and torch.equal(a.log_prob, b.log_prob)
        # log_prob is the hypothesis' own log-probability
        assert (
            abs(b.log_prob.item() - log_prob_of(logits_table, [BOS, 2], b.tokens[0].tolist()))
            < 1e-9
        )
        # the attention rows follow the hypothesis: row t was reported for its token t
        assert b.attentions.shape == (1, b.tokens.shape[1], 3)
        assert b.attentions[0, :, 1].long().tolist() == [2] + b.tokens[0, :-1].tolist()


def test_greedy_pads_after_eos_and_collects_attention():
    logits_table = table(3)
    start = torch.tensor([[BOS, 0], [BOS, 2], [BOS, 3], [0, 1]])
    out = greedy(stateful(logits_table), start, 12, EOS, PAD)
    assert isinstance(out, Decoded) and out.tokens.shape[0] == 4 and out.tokens.shape[1] <= 12
    for b in range(4):
        row = out.tokens[b].tolist()
        end = row.index(EOS) + 1 if EOS in row else len(row)
        assert all(t == PAD for t in row[end:])
        assert (out.attentions[b, end:] == 0).all() and (out.attentions[b, :end, 2] > 0).all()
        expected = log_prob_of(logits_table, start[b].tolist(), row[:end])
        assert abs(out.log_prob[b].item() - expected) < 1e-9
        # each row is decoded as if it were alone
        alone = greedy(stateless(logits_table), start[b : b + 1], 12, EOS, PAD)
        assert alone.tokens[0].tolist() == row[: alone.tokens.shape[1]]
    # without eos_id: exactly max_len tokens
    assert greedy(stateless(logits_table), start, 6).tokens.shape == (4, 6)


@pytest.mark.parametrize("seed", range(4))
def test_top_k_one_and_temperature_zero_are_greedy(seed):
    logits_table, start = table(seed).float(), torch.tensor([[BOS, 1], [2, 3]])
    g = greedy(stateless(logits_table), start, 10, EOS, PAD)
    gen = torch.Generator().manual_seed(seed)
    k1 = sample(stateless(logits_table), start, 10, EOS, PAD, top_k=1, generator=gen)
    assert torch.equal(k1.tokens, g.tokens) and torch.equal(k1.log_prob, g.log_prob)
    tiny_p = sample(stateless(logits_table), start, 10, EOS, PAD, top_p=1e-6, generator=gen)
    assert torch.equal(tiny_p.tokens, g.tokens)  # the nucleus is the most probable token alone


def test_sampling_draws_from_the_model_and_is_reproducible():
    logits_table, start = table(5), torch.full((4000, 1), BOS)

    def draw(seed, **kw):
        gen = torch.Generator().manual_seed(seed)
        return sample(stateless(logits_table), start, 1, generator=gen, **kw).tokens[:, 0]

    assert torch.equal(draw(0), draw(0)) and not torch.equal(draw(0), draw(1))
    # first token after [BOS]: frequencies within 4 standard errors of softmax(logits)
    p = torch.softmax(logits_table[BOS], -1)  # prev = 0 (the padding of a one-token prefix)
    freq = torch.bincount(draw(2), minlength=V).double() / 4000
    assert ((freq - p).abs() <= 4 * (p * (1 - p) / 4000).sqrt() + 1e-12).all()
    # temperature 2 flattens: softmax(logits / 2)
    p2 = torch.softmax(logits_table[BOS] / 2, -1)
    freq2 = torch.bincount(draw(3, temperature=2.0), minlength=V).double() / 4000
    assert ((freq2 - p2).abs() <= 4 * (p2 * (1 - p2) / 4000).sqrt() + 1e-12).all()


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_a_beam_that_holds_every_hypothesis_is_exhaustive_search(alpha):
    max_len, start = 3, torch.tensor([[BOS, 2]])
    words = [v for v in range(V) if v != EOS]
    hypotheses = [
        list(p) + [EOS] for n in range(max_len) for p in itertools.product(words, repeat=n)
    ]
    hypotheses += [list(p) for p in itertools.product(words, repeat=max_len)]
    beats_greedy = 0
    for seed in range(6):
        logits_table = table(10 + seed)
        scored = [(log_prob_of(logits_table, [BOS, 2], h), h) for h in hypotheses]
        best_lp, best = max(scored, key=lambda s: s[0] / gnmt_penalty(len(s[1]), alpha))
        out = beam_search(stateful(logits_table), start, max_len, V**max_len, EOS, alpha)
        assert out.tokens[0].tolist() == best and abs(out.log_prob.item() - best_lp) < 1e-9
        # every hypothesis was finished, none twice
        finished = beam_hypotheses(stateless(logits_table), start, max_len, V**max_len, EOS)
        assert sorted(h.tokens.tolist() for h in finished) == sorted(hypotheses)
        g = greedy(stateless(logits_table), start, max_len, EOS, PAD).tokens[0].tolist()
        beats_greedy += g[: len(best)] != best
    assert beats_greedy >= 1  # so that the test tells a search from greedy decoding


def test_gnmt_penalty():
    assert gnmt_penalty(7, 0.0) == 1.0
    assert gnmt_penalty(1, 1.0) == 1.0  # (5 + 1) / 6
    assert abs(gnmt_penalty(7, 0.6) - 2.0**0.6) < 1e-12  # (5 + 7) / 6 = 2


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda s: greedy(s, torch.tensor([BOS]), 3),
            ValueError,
            r"start: expected shape \[B, t\]",
        ),
        (lambda s: greedy(s, torch.tensor([[0.5]]), 3), TypeError, "start: expected a tensor"),
        (
            lambda s: greedy(s, torch.tensor([[BOS]]), 0),
            ValueError,
            "max_len: expected an int >= 1",
        ),
        (lambda s: greedy(s, torch.tensor([[BOS]]), 3, eos_id=-1), ValueError, "eos_id"),
        (lambda s: sample(s, torch.tensor([[BOS]]), 3, temperature=-1), ValueError, "temperature"),
        (lambda s: sample(s, torch.tensor([[BOS]]), 3, top_k=0), ValueError, "top_k"),
        (lambda s: sample(s, torch.tensor([[BOS]]), 3, top_p=0), ValueError, "top_p"),
        (
            lambda s: beam_search(s, torch.tensor([[BOS], [BOS]]), 3),
            ValueError,
            r"start: expected shape \[1, t\] \(one sequence\)",
        ),
        (lambda s: beam_search(s, torch.tensor([[BOS]]), 3, 0), ValueError, "beam_width"),
        (
            lambda s: beam_search(s, torch.tensor([[BOS]]), 3, length_penalty=-1),
            ValueError,
            "length_penalty: expected alpha >= 0, got -1",
        ),
    ],
)
def test_bad_arguments_name_themselves(call, error, message):
    with pytest.raises(error, match=message):
        call(stateless(table(0)))


def test_sampling_distribution_is_the_one_sampler():
    # lib.gpt and lib.viz use this function, not copies of it
    from lib import gpt
    from lib.viz.interactive import sampling_probabilities

    assert gpt.sampling_distribution is decoding.sampling_distribution
    z = torch.tensor([1.0, 3.0, 3.0, 0.5], dtype=torch.float64)
    for kw in ({}, {"temperature": 0}, {"top_k": 2}, {"top_p": 0.6}, {"temperature": 0.5}):
        assert torch.equal(
            sampling_probabilities(z.tolist(), **kw), decoding.sampling_distribution(z, **kw)
        )
    assert math.isclose(decoding.sampling_distribution(z).sum().item(), 1.0)
