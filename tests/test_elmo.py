"""Tests of lib/elmo.py: shapes; the directions (forward states blind to later tokens, backward states to
earlier ones), padding, residual connections, each direction against the plain LSTMs run by hand; the
loss against a direct computation; ScalarMix against its formula; the character CNN; the paper's
parameter count; a tiny model that learns; bad input.

Most checks run in float64; two computations of the same quantity in different orders or kernels are
compared by tests/tolerance.py's rule (float64's eps, terms counted below), far below the O(0.01) change
of any mistake.
"""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from lib.data import stories
from lib.elmo import (
    BOW,
    CHAR_VOCAB_SIZE,
    EOW,
    BiLM,
    ELMoConfig,
    Highway,
    ScalarMix,
    char_ids,
    char_ids_fast,
    count_parameters,
    pad_sentences,
    reverse_padded,
)
from tests.tolerance import assert_float_close

V, H = 23, 8
TOKEN_TERMS = 6 + 1  # small_model's word embedding (6) projected to H: the product over 6 + bias
# one LSTM step (M = H = 8 cells): gates over the input 8 + the recurrent 8 + 2 biases, the cell
# f * c + i * g (3), h = o * tanh(c) (2); a state carries the roundings of every step before it
LSTM_STEP = H + H + 2 + 3 + 2


def state_terms(layer, T):
    """To layer `layer`'s states over T positions: the token representation, then per layer T steps
    and the residual sum."""
    return TOKEN_TERMS + layer * (T * LSTM_STEP + 1)


def logits_terms(T, layers=2):
    """The top states, then the softmax layer's product over H + bias."""
    return state_terms(layers, T) + H + 1


def small_model(seed=0, words=None, **overrides):
    """A float64 biLM in eval mode (no dropout): word_dim 6, H 8, 2 layers unless overridden."""
    cfg = ELMoConfig(
        **{
            "vocab_size": V,
            "word_dim": 6,
            "hidden_dim": H,
            "n_layers": 2,
            "dropout": 0.0,
            **overrides,
        }
    )
    torch.manual_seed(seed)
    return BiLM(cfg, words).double().eval()


def padded_batch():
    """Three sentences of lengths 7, 4, 6 (ids in [4, V): no padding id inside), right-padded with 0."""
    g = torch.Generator().manual_seed(1)
    sentences = [torch.randint(4, V, (n,), generator=g).tolist() for n in (7, 4, 6)]
    return sentences, *pad_sentences(sentences)


# ============================================ shapes =====================================================


@pytest.mark.parametrize("overrides", [{}, {"cell_dim": 20}, {"n_layers": 3}, {"n_layers": 1}])
def test_output_shapes(overrides):
    model = small_model(**overrides)
    _, ids, mask = padded_batch()
    out = model(ids, mask)
    L = model.config.n_layers
    assert torch.stack(out.hidden_states).shape == (L + 1, 3, 7, 2 * H)
    assert out.forward_logits.shape == out.backward_logits.shape == (3, 7, V)
    assert torch.equal(out.mask, mask)
    if "cell_dim" in overrides:  # LSTMP: 20 cells projected to H = 8
        lstm = model.forward_layers[0]
        assert lstm.hidden_size == 20 and lstm.proj_size == H and lstm.weight_hr_l0.shape == (H, 20)


def test_layer_zero_is_the_token_representation_twice_and_padding_is_zero():
    model = small_model()
    _, ids, mask = padded_batch()
    states = torch.stack(model(ids, mask).hidden_states)
    x = model.token_encoder(ids)  # [B, T, H]
    # the same encoder on the same ids: exact
    torch.testing.assert_close(states[0, ..., :H][mask], x[mask], rtol=0, atol=0)
    torch.testing.assert_close(states[0, ..., H:][mask], x[mask], rtol=0, atol=0)
    assert states[:, ~mask].abs().max() == 0  # every layer 0 at padding
    # not all zero
    assert states[1:, mask].abs().min() < 1.0 and states[1:, mask].abs().max() > 1e-3


# ============================================ directions =================================================


def test_forward_states_do_not_see_later_tokens_backward_states_do_not_see_earlier_ones():
    model = small_model()
    sentences, ids, mask = padded_batch()
    before = model(ids, mask)
    for row, s in ((0, 3), (1, 2), (2, 0), (2, 5)):  # change token s of sentence `row`
        changed = ids.clone()
        changed[row, s] = 4 if ids[row, s] != 4 else 5
        after = model(changed, mask)
        n = len(sentences[row])
        for j in range(1, model.config.n_layers + 1):
            f0, f1 = (
                torch.stack(before.hidden_states)[j, row, :, :H],
                torch.stack(after.hidden_states)[j, row, :, :H],
            )
            b0, b1 = (
                torch.stack(before.hidden_states)[j, row, :, H:],
                torch.stack(after.hidden_states)[j, row, :, H:],
            )
            assert torch.equal(f0[:s], f1[:s])  # forward: positions before s
            assert torch.equal(b0[s + 1 : n], b1[s + 1 : n])  # backward: positions after s
            # ... while the other direction does change there, and both change at s (the test can fail)
            if s > 0:
                assert (b0[:s] - b1[:s]).abs().max() > 1e-4
            if s < n - 1:
                assert (f0[s + 1 : n] - f1[s + 1 : n]).abs().max() > 1e-4
            assert (f0[s] - f1[s]).abs().max() > 1e-4 and (b0[s] - b1[s]).abs().max() > 1e-4
        # the logits: the forward ones up to position s - 1 predict tokens <= s without reading token s
        assert torch.equal(before.forward_logits[row, :s], after.forward_logits[row, :s])
        assert torch.equal(
            before.backward_logits[row, s + 1 : n], after.backward_logits[row, s + 1 : n]
        )
        # other sentences of the batch are untouched
        others = [r for r in range(3) if r != row]
        assert torch.equal(
            torch.stack(before.hidden_states)[:, others],
            torch.stack(after.hidden_states)[:, others],
        )


def test_each_direction_equals_the_lstms_run_by_hand_with_the_residual_connection():
    """Sentence 1 of the batch (length 4, padded to 7): forward layer 1 = LSTM_1(x), layer 2 =
    LSTM_2(h1) + h1 (the residual); backward = the same on the flipped sentence, flipped back."""
    model = small_model()
    sentences, ids, mask = padded_batch()
    states = torch.stack(model(ids, mask).hidden_states)[:, 1, :4]  # [N, 4, 2H]
    x = model.token_encoder(torch.tensor(sentences[1]))[None]  # [1, 4, H], alone, no padding
    directions = (
        (model.forward_layers, slice(0, H), False),
        (model.backward_layers, slice(H, None), True),
    )
    for layers, half, flip in directions:
        h = x.flip(1) if flip else x
        h1 = layers[0](h)[0]
        h2 = layers[1](h1)[0] + h1
        for j, hj in ((1, h1), (2, h2)):
            expected = hj.flip(1) if flip else hj
            # the batch of 7 positions against the sentence alone: other shapes, other kernels
            assert_float_close(states[j, :, half], expected[0], terms=state_terms(j, 7))
    # without the residual the second layer would be off by |h1| ~ 0.1: the comparison can fail
    assert (model.forward_layers[1](h1)[0] - h2).abs().max() > 1e-2


def test_padding_does_not_change_the_states_of_real_tokens():
    model = small_model(cell_dim=12, n_layers=3)
    sentences, ids, mask = padded_batch()
    batched = model(ids, mask)
    for row, s in enumerate(sentences):
        alone = model(torch.tensor([s]))  # no padding at all
        n = len(s)
        # padded batch against the sentence alone: other shapes, other kernels; 2 layers over 7
        assert_float_close(
            torch.stack(batched.hidden_states)[:, row, :n],
            torch.stack(alone.hidden_states)[:, 0],
            terms=state_terms(2, 7),
        )
        assert_float_close(
            batched.forward_logits[row, :n], alone.forward_logits[0], terms=logits_terms(7)
        )
        assert_float_close(
            batched.backward_logits[row, :n], alone.backward_logits[0], terms=logits_terms(7)
        )
    # what the padding positions hold does not matter either, given the mask
    garbage = torch.where(
        mask, ids, torch.randint(1, V, ids.shape, generator=torch.Generator().manual_seed(5))
    )
    # (other data in the padding rows of the same kernels, which may block them differently)
    assert_float_close(
        torch.stack(model(garbage, mask).hidden_states),
        torch.stack(batched.hidden_states),
        terms=state_terms(2, 7),
    )
    # the default mask is ids != pad_id: the same computation on the same numbers, exact
    torch.testing.assert_close(
        torch.stack(model(ids).hidden_states), torch.stack(batched.hidden_states), rtol=0, atol=0
    )


def test_reverse_padded():
    x = torch.arange(12).view(2, 6)
    out = reverse_padded(x, torch.tensor([6, 3]))
    assert out.tolist() == [[5, 4, 3, 2, 1, 0], [8, 7, 6, 9, 10, 11]]
    y = torch.randn(3, 5, 2, 4)
    lengths = torch.tensor([5, 1, 3])
    assert torch.equal(reverse_padded(reverse_padded(y, lengths), lengths), y)  # its own inverse
    assert torch.equal(reverse_padded(y, lengths)[2, :3], y[2, :3].flip(0))


# ============================================ the loss ===================================================


def test_lm_loss_equals_a_direct_computation():
    """The summed forward and backward NLL, one sentence and one token at a time, from the top layer's
    states and the softmax weights (log p = z - logsumexp z)."""
    model = small_model(n_layers=3)
    sentences, ids, mask = padded_batch()
    W, b = model.softmax.weight, model.softmax.bias
    total, count, fwd_total, bwd_total = 0.0, 0, 0.0, 0.0
    for s in sentences:
        top = torch.stack(model(torch.tensor([s])).hidden_states)[-1, 0]  # [n, 2H]
        for t in range(1, len(s)):  # forward: t-1 -> token t
            z = W @ top[t - 1, :H] + b
            fwd_total += -(z[s[t]] - torch.logsumexp(z, 0)).item()
        for t in range(len(s) - 1):  # backward: t+1 -> token t
            z = W @ top[t + 1, H:] + b
            bwd_total += -(z[s[t]] - torch.logsumexp(z, 0)).item()
        count += len(s) - 1
    total = fwd_total + bwd_total
    loss = model.lm_loss(ids, mask)
    assert abs(loss.item() - total / count) < 1e-10
    nll = model.token_nll(ids, mask)
    assert nll.count == count == 6 + 3 + 5
    assert (
        abs(nll.forward.sum().item() - fwd_total) < 1e-10
        and abs(nll.backward.sum().item() - bwd_total) < 1e-10
    )
    # nothing is predicted at padding, at the first token (forward) or at the last (backward)
    assert nll.forward[:, 0].abs().max() == 0 and nll.forward[~mask].abs().max() == 0
    assert nll.backward[1, 3:].abs().max() == 0 and nll.backward[0, 6] == 0
    # the two directions differ (they have their own LSTMs), so swapping them would be caught
    assert abs(fwd_total - bwd_total) > 1e-3
    # at initialization the loss is near 2 log V (uniform predictions in both directions); 0.5 allows
    # for the random logits of N(0, 1/H) weights on O(1) states
    assert abs(loss.item() - 2 * math.log(V)) < 0.5


def test_the_softmax_and_token_encoder_are_shared_between_directions_lstms_are_not():
    model = small_model()
    names = [n for n, _ in model.named_parameters()]
    assert sum(n.startswith("softmax.") for n in names) == 2  # one weight, one bias
    assert (
        "token_encoder.word_embeddings.weight" in names
        and "token_encoder.projection.weight" in names
    )
    assert model.forward_layers[0].weight_ih_l0 is not model.backward_layers[0].weight_ih_l0
    # gradients of both directions' losses reach the one softmax
    _, ids, mask = padded_batch()
    nll = model.token_nll(ids, mask)
    g_fwd = torch.autograd.grad(nll.forward.sum(), model.softmax.weight)[0]
    g_bwd = torch.autograd.grad(model.token_nll(ids, mask).backward.sum(), model.softmax.weight)[0]
    assert g_fwd.abs().max() > 1e-3 and g_bwd.abs().max() > 1e-3


def test_initialization():
    model = small_model(pad_id=2)
    assert model.token_encoder.word_embeddings.weight[2].abs().max() == 0  # padding embedding 0
    lstm = model.forward_layers[1]
    M = model.config.cells
    forget = lstm.bias_ih_l0[M : 2 * M] + lstm.bias_hh_l0[M : 2 * M]
    assert torch.equal(forget, torch.ones(M, dtype=forget.dtype))  # forget bias 1
    assert model.softmax.bias.abs().max() == 0


def test_a_tiny_bilm_learns_a_deterministic_language():
    """Sentences <bos> a b c d e <eos> and <bos> e d c b a <eos> (ids 4..8): after the first word everything
    is determined in both directions, so the per-token NLL (both directions summed) falls from ~2 log V
    to about (log 2 + log 2) / 6 (the first word forward and the last one backward are coin flips) + a little."""
    torch.manual_seed(0)
    model = BiLM(ELMoConfig(vocab_size=9, word_dim=8, hidden_dim=16, n_layers=2, dropout=0.0))
    up, down = [1, 4, 5, 6, 7, 8, 2], [1, 8, 7, 6, 5, 4, 2]
    ids, mask = pad_sentences([up, down] * 8)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    first = model.lm_loss(ids, mask).item()
    for _ in range(150):
        loss = model.lm_loss(ids, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    final = model.lm_loss(ids, mask).item()
    floor = 2 * math.log(2) / 6
    assert abs(first - 2 * math.log(9)) < 0.5
    assert floor - 1e-3 < final < floor + 0.05, (first, final, floor)


# ============================================ ScalarMix ==================================================


def test_scalar_mix_weights_and_formula():
    mix = ScalarMix(3).double()
    assert torch.equal(mix.weights, torch.full((3,), 1 / 3, dtype=torch.float64))  # starts uniform
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([0.5, -1.0, 2.0]))
        mix.gamma.fill_(1.7)
    s = mix.weights
    assert abs(s.sum().item() - 1) < 1e-12 and (s > 0).all()
    e = torch.exp(torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64))
    assert_float_close(s, e / e.sum(), terms=3 + 2, scale=1)  # softmax over 3 vs exp, sum, division
    h = torch.randn(3, 2, 5, 4, dtype=torch.float64)
    expected = 1.7 * (s[0] * h[0] + s[1] * h[1] + s[2] * h[2])
    # the weighted sum over 3 layers, its 3 products and gamma's, in another order
    assert_float_close(mix(h), expected, terms=3 + 3 + 1)
    assert_float_close(mix(list(h)), expected, terms=3 + 3 + 1)  # a list of layers
    assert (mix(h) - h.mean(0)).abs().max() > 1e-2  # not a plain mean


def test_scalar_mix_learns_to_pick_the_useful_layer():
    """Only layer 1 of three holds the target (the others are noise): the learned weights move to it."""
    g = torch.Generator().manual_seed(0)
    h = torch.randn(3, 256, 4, generator=g)
    target = h[1, :, 0] * 2.0
    mix, lin = ScalarMix(3), torch.nn.Linear(4, 1)
    opt = torch.optim.Adam([*mix.parameters(), *lin.parameters()], lr=5e-2)
    for _ in range(300):
        loss = F.mse_loss(lin(mix(h))[:, 0], target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert mix.weights[1] > 0.9 and loss.item() < 0.05


def test_scalar_mix_bad_input():
    with pytest.raises(ValueError, match="num_layers: expected an int >= 1, got 0"):
        ScalarMix(0)
    with pytest.raises(
        ValueError,
        match=r"states: expected shape \[N=3, \.\.\., D\], got \(2, 5, 4\)",
    ):
        ScalarMix(3)(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match="states: expected 3 tensors"):
        ScalarMix(3)([torch.randn(5, 4)] * 2)
    with pytest.raises(TypeError, match="states: expected a floating-point tensor"):
        ScalarMix(3)(torch.zeros(3, 5, 4, dtype=torch.long))


# ============================================ the character CNN =========================================


def test_char_ids():
    out = char_ids(["ab", "", "é", "abcdefgh"], 5)
    assert out.tolist() == [
        [BOW, 98, 99, EOW, 0],
        [BOW, EOW, 0, 0, 0],
        [BOW, 0xC3 + 1, 0xA9 + 1, EOW, 0],
        [BOW, 98, 99, 100, EOW],
    ]  # bytes + 1; cut to C - 2
    assert out.max() < CHAR_VOCAB_SIZE


def test_char_ids_fast_equals_char_ids():
    """The vectorised table the token encoder uses is char_ids', word for word: empty, one-byte,
    multi-byte (UTF-8) words, words cut at C - 2 bytes, and the story vocabulary."""
    words = [
        "",
        "a",
        "ab",
        "é",
        "日本",
        "a" * 60,
        "héllo wörld",
        *stories.generate_sentences(50, seed=0),
    ]
    for max_chars in (3, 5, 16, 50):
        assert torch.equal(char_ids_fast(words, max_chars), char_ids(words, max_chars))
    assert char_ids_fast([], 5).shape == char_ids([], 5).shape == (0, 5)


def test_highway_formula():
    torch.manual_seed(0)
    hw = Highway(5).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    t = torch.sigmoid(x @ hw.gate.weight.T + hw.gate.bias)
    expected = t * torch.relu(x @ hw.transform.weight.T + hw.transform.bias) + (1 - t) * x
    # nn.Linear against @ W^T + b: the products over 5 + bias, sigmoid, 1 - t, the two products, the sum
    assert_float_close(hw(x), expected, terms=5 + 1 + 1 + 4)
    assert torch.equal(hw.gate.bias, torch.full((5,), -1.0, dtype=torch.float64))


def test_character_cnn_token_encoder():
    words = ["<pad>", "<bos>", "<eos>", "<unk>", "play", "plays", "bank", "play", "x"]
    cfg = dict(
        vocab_size=len(words),
        word_dim=0,
        char_filters=((1, 4), (2, 4), (3, 6)),
        max_chars=8,
        n_highway=1,
    )
    model = small_model(words=words, **cfg)
    enc = model.token_encoder
    assert enc.chars.shape == (9, 8) and model.config.char_features == 14
    x = enc(torch.arange(9)[None])[0]  # [V, H]
    # same spelling, same vector, computed in other rows of the batch (a kernel may treat rows
    # differently): convolutions over <= 3 x 16 + bias, the highway over 14 (+ bias, sigmoid, 4 ops),
    # the projection over 14 + bias
    cnn_terms = 3 * 16 + 1 + (14 + 1 + 1 + 4) + 14 + 1
    assert_float_close(x[4], x[7], terms=cnn_terms)
    assert (x[4] - x[5]).abs().max() > 1e-3  # "plays" differs from "play"
    # the features of "bank" by hand: embed, convolve, max over positions, ReLU, highway, projection
    e = enc.char_embeddings(enc.chars[6]).T[None]  # [1, Dc, C]
    feats = torch.cat([F.conv1d(e, c.weight, c.bias).amax(-1) for c in enc.convs], -1).relu()
    assert_float_close(x[6], enc.projection(enc.highways[0](feats))[0], terms=cnn_terms)
    # with a word embedding as well, both parts feed the projection
    both = small_model(words=words, **{**cfg, "word_dim": 6})
    assert both.token_encoder.projection.in_features == 6 + 14
    _, ids, mask = padded_batch()
    ids = ids.clamp(max=8)
    assert torch.stack(both(ids, mask).hidden_states).shape == (3, 3, 7, 2 * H)


def test_paper_parameter_count():
    """ELMoConfig.paper() without the softmax, against the released model's "93.6M". By hand: character
    embeddings 259 x 16, convolutions sum(w * 16 * n + n), two highway layers 2048 -> 2 x 2048, projection
    2048 -> 512, and 4 LSTMs of 4096 cells projected to 512, each with torch's two bias vectors b_ih and b_hh
    (the authors' LSTM cell has one: 4 x 4 x 4096 = 65,536 parameters fewer)."""
    cfg = ELMoConfig.paper()
    chars = CHAR_VOCAB_SIZE * 16
    convs = sum(w * 16 * n + n for w, n in cfg.char_filters)
    highway = 2 * 2 * (2048 * 2048 + 2048)
    projection = 2048 * 512 + 512
    lstm = 4 * 4096 * 512 + 4 * 4096 * 512 + 2 * 4 * 4096 + 4096 * 512
    expected = chars + convs + highway + projection + 4 * lstm
    n = count_parameters(cfg, softmax=False)
    assert n == expected == 93_666_352
    assert round((n - 4 * 4 * 4096) / 1e5) == 936  # with one bias per gate: 93.6M
    assert count_parameters(cfg) == n + 512 * 793471 + 793471


# ============================================ bad input ==================================================


def test_config_bad_input():
    with pytest.raises(ValueError, match="vocab_size: expected an int >= 1, got 0"):
        ELMoConfig(vocab_size=0)
    with pytest.raises(
        ValueError, match=r"cell_dim: expected None or an int >= hidden_dim=8, got 4"
    ):
        ELMoConfig(vocab_size=5, hidden_dim=8, cell_dim=4)
    with pytest.raises(ValueError, match=r"dropout: expected a probability in \[0, 1\), got 1.0"):
        ELMoConfig(vocab_size=5, dropout=1.0)
    with pytest.raises(ValueError, match=r"pad_id: expected an id in \[0, vocab_size=5\), got 5"):
        ELMoConfig(vocab_size=5, pad_id=5)
    with pytest.raises(ValueError, match="char_filters: expected a tuple of"):
        ELMoConfig(vocab_size=5, char_filters=((1, 0),))
    with pytest.raises(ValueError, match="char_filters: the widest filter"):
        ELMoConfig(vocab_size=5, char_filters=((20, 4),), max_chars=16)
    with pytest.raises(ValueError, match="word_dim=0 and char_filters=()"):
        ELMoConfig(vocab_size=5, word_dim=0)
    with pytest.raises(ValueError, match="word_dim: expected an int >= 0, got -1"):
        ELMoConfig(vocab_size=5, word_dim=-1)
    with pytest.raises(
        ValueError, match="words: the character CNN needs the vocabulary's 5 words.*got None"
    ):
        BiLM(ELMoConfig(vocab_size=5, char_filters=((2, 3),)))
    with pytest.raises(ValueError, match="words: .*got 2 words"):
        BiLM(ELMoConfig(vocab_size=5, char_filters=((2, 3),)), ["a", "b"])
    with pytest.raises(TypeError, match="config: expected an ELMoConfig, got dict"):
        BiLM({"vocab_size": 5})


def test_forward_bad_input():
    model = small_model()
    _, ids, mask = padded_batch()
    expected = f"input_ids: expected ids in [0, {V}) (vocab_size={V}), got ids from 0 to {V}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        model(torch.tensor([[0, V]]))
    with pytest.raises(ValueError, match=r"input_ids: .*from -1"):
        model(torch.tensor([[-1, 3]]))
    with pytest.raises(TypeError, match="input_ids: expected a tensor of token ids.*torch.float32"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"input_ids: expected shape \[B, T\].*got shape \(5,\)"):
        model(torch.tensor([4, 5, 6, 7, 8]))
    with pytest.raises(
        ValueError, match=r"attention_mask: expected the shape of input_ids \(3, 7\), got \(3, 6\)"
    ):
        model(ids, mask[:, :6])
    with pytest.raises(TypeError, match="attention_mask: expected a bool or 0/1 integer tensor"):
        model(ids, mask.float())
    # 0/1 integers, as Hugging Face's attention_mask, are the bool mask
    assert torch.equal(model(ids, mask.long()).forward_logits, model(ids, mask).forward_logits)
    holes = mask.clone()
    holes[0, 2] = False
    with pytest.raises(ValueError, match="attention_mask: expected True on a prefix of each row"):
        model(ids, holes)
    # pad id inside a sentence
    with pytest.raises(ValueError, match=r"attention_mask \(input_ids != pad_id.*prefix"):
        model(torch.tensor([[5, 0, 6]]))
    empty = mask.clone()
    empty[1] = False
    with pytest.raises(
        ValueError,
        match=r"attention_mask: expected at least one real token per sentence.*row 1",
    ):
        model(ids, empty)
    with pytest.raises(ValueError, match="input_ids: every sentence has a single token"):
        model.lm_loss(torch.tensor([[5], [6]]))
    with pytest.raises(ValueError, match="sentences: every sentence needs at least one token"):
        pad_sentences([[4, 5], []])
    with pytest.raises(ValueError, match="sentences: expected a non-empty list"):
        pad_sentences([])
    with pytest.raises(
        ValueError, match=r"max_chars \(two markers and a character\): expected an int >= 3"
    ):
        char_ids(["a"], 2)
    with pytest.raises(TypeError, match="words: expected a sequence of str"):
        char_ids("abc", 5)
