"""The static pictures of chapter 3's live figures (shown without JavaScript and in print)."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import lib.viz.live as live  # noqa: E402

QUERY = [1.0, 0.5]
KEYS = [[1.0, 0.0], [0.0, 1.0], [-1.0, -0.5]]
PHONE_POINTS = 11  # the smallest text size legible in a phone's 330 px column at 72 dpi


@pytest.fixture
def drawn(monkeypatch):
    """The figures the live figures draw, kept open instead of turned into PNG bytes."""
    figures = []
    monkeypatch.setattr(live, "figure_png", lambda fig: figures.append(fig) or b"\x89PNG")
    return figures


def test_the_score_bars_have_a_legend_naming_each_key(drawn):
    live.score_functions_figure(QUERY, KEYS)
    legend = drawn[0].axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["k1", "k2", "k3"]


def test_the_score_plane_fits_its_vectors_with_room_for_their_labels():
    """Review ch03_s22, point 10: a fixed -4 .. 4 plane drew the chapter's vectors 35-40 px long in
    300 px. The plane fits the longest coordinate, with 30% for its label, rounded up to a half."""
    span = live.score_functions_figure(QUERY, KEYS).example["span"]
    assert span == 1.5  # the longest coordinate, 1, at 2/3 of the half-width
    long_k2 = [KEYS[0], [0.0, 3.0], KEYS[2]]  # the chapter's experiment
    assert live.score_functions_figure(QUERY, long_k2).example["span"] == 4.0
    assert live.score_plane_span([[0.0, -2.0], *KEYS]) == 3.0
    assert live.score_plane_span([[0.1, 0.0]]) == 1.0  # never smaller than 1
    for points in ([QUERY, *KEYS], [QUERY, *long_k2], [[-2.5, 0.2]]):
        span = live.score_plane_span(points)
        longest = max(abs(x) for p in points for x in p)
        assert 1.3 * longest <= span < 1.3 * longest + 0.5 or span == 1.0


def test_the_masked_softmax_picture_has_phone_sized_ticks_and_numbers(drawn):
    live.masked_softmax_figure([[0.1, 0.2], [0.3, 0.4]], ["1", "2"])
    ax = drawn[0].axes[0]
    sizes = [t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels() + ax.texts]
    assert sizes and min(sizes) >= PHONE_POINTS


def test_the_untrained_general_and_additive_scores_are_not_flat():
    """Both redrawn from N(0, 1), as the chapter's modules: the small initial weights of the library
    (Luong's uniform +-0.1 for W_a) would give the general score nearly 1/3 for every key."""
    weights = live.score_functions_figure(QUERY, KEYS).example["weights"]
    for name in ("general", "additive"):
        assert max(weights[name]) - min(weights[name]) > 0.3, name


def test_the_example_weights_follow_from_the_params_the_page_reads():
    import torch

    example = live.score_functions_figure(QUERY, KEYS).example
    q, k = torch.tensor(example["query"]), torch.tensor(example["keys"])  # [2], [3, 2]
    params = {name: torch.tensor(value) for name, value in example["params"].items()}
    general = torch.softmax(k @ params["W_a"].T @ q, -1)  # q^T W_a k_i for each key
    hidden = torch.tanh(q @ params["W_q"].T + k @ params["W_k"].T)  # [3, H]
    additive = torch.softmax(hidden @ params["v_a"], -1)
    assert torch.allclose(general, torch.tensor(example["weights"]["general"]), atol=1e-6)
    assert torch.allclose(additive, torch.tensor(example["weights"]["additive"]), atol=1e-6)
    assert params["W_a"].abs().max() > 0.5  # an N(0, 1) draw, not the small uniform initialisation


def test_the_gpt_figure_s_alt_text_gives_the_first_token_s_probability_to_three_decimals(drawn):
    """Chapter 13's live GPT figure: its caption writes the first token's probability to three
    decimals (0.996); the alt text of its static picture writes the same number, not 1.00 (review
    ch13_s17)."""
    import torch

    from lib.gpt import GPT, GPTConfig

    itos = ["<bos>", "the", "bank", "market"]
    model = GPT(GPTConfig(vocab_size=4, block_size=8, n_layer=1, n_head=1, n_embd=8)).eval()
    with torch.no_grad():
        # the last hidden state is ln_f's bias alone, e_0 * 6.5, and only "bank"'s output row reads it:
        # logits 6.5 and three 0s, e^6.5 / (e^6.5 + 3) = 0.9955
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.zero_()[0] = 6.5
        model.lm_head.weight.zero_()[2, 0] = 1.0
    figure = live.gpt_next_token(model, itos, "the")
    first = max(figure.example["next_probs"])
    assert abs(first - 0.9955) < 1e-4
    assert f"the first is 'bank' with probability {first:.3f}." in figure.alt


def test_gpt_next_token_names_punctuation_written_against_a_word():
    # review ch13_s21, point 6: 'tired.' is the reader's likeliest unknown word
    itos = ["<bos>", "too", "tired", "."]
    with pytest.raises(ValueError, match=r"\['tired\.'\].*punctuation apart.*'too tired \.'"):
        live.gpt_next_token(None, itos, "too tired.")
