"""lib.data.shapes (synthetic captioned images) and lib.captioning (Show, Attend and Tell)."""

from __future__ import annotations

import pytest
import torch

from lib.attention import AdditiveScore
from lib.captioning import Captioner, ConvEncoder, greedy_decode
from lib.data import shapes
from lib.data.shapes import VOCAB
from lib.train import fit
from tests.tolerance import assert_float_close

# one decoder step of the fixture's Captioner (d_feature 16, d_emb 8, d_hidden 16, d_attn 8, 9 regions),
# tests/tolerance.py's terms: the additive score (16 + 16 + sum + tanh + v over 8), softmax over 9, the
# context over 9, the cell's gates over the embedding 8 + context 16 and the state 16 + 2 biases + ~5
# ops, the output over 16 + 16 + bias
STEP_TERMS = (16 + 16 + 1 + 1 + 8) + 9 + 9 + (8 + 16 + 16 + 2 + 5) + (16 + 16 + 1)

COLOUR_OF = {name: torch.tensor(rgb) for name, rgb in shapes.COLOURS.items()}


@pytest.fixture(scope="module")
def examples():
    return shapes.generate_images(40, seed=3)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Captioner(len(VOCAB), d_feature=16, d_emb=8, d_hidden=16, d_attn=8).eval()


# --- the generator -----------------------------------------------------------------------------------


def test_same_seed_same_images_other_seed_other_images():
    a, b, c = (shapes.generate_images(20, seed=s) for s in (7, 7, 8))
    assert [x.caption for x in a] == [x.caption for x in b]
    assert all(torch.equal(x.image, y.image) for x, y in zip(a, b))
    assert [x.items for x in a] == [x.items for x in b]
    assert [x.caption for x in a] != [x.caption for x in c]


def test_images_have_the_documented_size_and_range(examples):
    for ex in examples:
        assert ex.image.shape == (3, 48, 48) and ex.image.dtype == torch.float32
        assert ex.image.min() >= 0 and ex.image.max() <= 1
        assert 1 <= len(ex.items) <= 3
    other = shapes.generate_images(5, seed=0, grid=(2, 4), cell=12, min_shapes=2, max_shapes=2)
    assert all(ex.image.shape == (3, 24, 48) and len(ex.items) == 2 for ex in other)


def test_captions_name_the_shapes_in_reading_order(examples):
    for ex in examples:
        cells = [(it.row, it.col) for it in ex.items]
        assert cells == sorted(cells) and len(set(cells)) == len(cells)
        expected = " , ".join(f"{it.colour} {it.shape}" for it in ex.items).split()
        assert list(ex.caption) == expected
    ex = shapes.ShapeImage(
        torch.ones(3, 48, 48),
        (),
        shapes.caption_of(
            [
                shapes.ShapeItem("blue", "cross", 2, 0, (40.0, 8.0), 10.0),
                shapes.ShapeItem("orange", "circle", 0, 2, (8.0, 40.0), 10.0),
            ]
        ),
        (3, 3),
    )
    assert " ".join(ex.caption) == "orange circle , blue cross"


def test_the_pixels_show_what_the_caption_says(examples):
    """Each shape's centre pixel has the shape's colour; cells without a shape are white; a shape's
    pixels stay inside its own cell."""
    for ex in examples:
        occupied = {(it.row, it.col): it for it in ex.items}
        for r in range(3):
            for c in range(3):
                patch = ex.image[:, 16 * r : 16 * r + 16, 16 * c : 16 * c + 16]  # [3, 16, 16]
                if (r, c) not in occupied:
                    assert (patch == 1).all()
                    continue
                it = occupied[(r, c)]
                y, x = int(it.centre[0]), int(it.centre[1])
                if it.shape != "triangle":  # a triangle's centre may sit at its edge
                    assert torch.allclose(ex.image[:, y, x], COLOUR_OF[it.colour])
                ink = (patch != 1).any(0)  # [16, 16]
                painted = patch[:, ink]  # [3, n]
                assert ink.sum() >= 20
                assert torch.allclose(painted, COLOUR_OF[it.colour][:, None].expand_as(painted))


def test_the_four_forms_differ():
    masks = {}
    for form in shapes.SHAPES:
        img = shapes.draw([shapes.ShapeItem("blue", form, 0, 0, (8.0, 8.0), 12.0)], grid=(1, 1))
        masks[form] = (img != 1).any(0)
    circle = masks["circle"].sum().item()
    assert abs(circle - 3.14159 * 36) < 12  # area of a disc of radius 6
    assert masks["square"].sum() > masks["triangle"].sum()
    forms = list(masks.values())
    assert all(not torch.equal(a, b) for i, a in enumerate(forms) for b in forms[i + 1 :])


def test_word_regions_point_at_the_cell_of_each_named_shape(examples):
    for ex in examples:
        regions = shapes.word_regions(ex)
        assert len(regions) == len(ex.caption)
        for word, region in zip(ex.caption, regions):
            if word == ",":
                assert region is None
                continue
            it = next(it for it in ex.items if it.row * 3 + it.col == region)
            assert word in (it.colour, it.shape)


def test_batches_pad_and_shift_the_captions(examples):
    batch = shapes.make_batch(examples[:5])
    B, T = batch.tgt_in.shape
    assert batch.images.shape == (5, 3, 48, 48) and batch.tgt_out.shape == (B, T)
    assert (batch.tgt_in[:, 0] == VOCAB.bos_id).all()
    for b, ex in enumerate(examples[:5]):
        n = len(ex.caption)
        assert batch.lengths[b] == n + 1 and T == max(len(e.caption) for e in examples[:5]) + 1
        assert VOCAB.decode(batch.tgt_out[b]) == list(ex.caption)
        assert (
            batch.tgt_out[b, n] == VOCAB.eos_id
            and (batch.tgt_out[b, n + 1 :] == VOCAB.pad_id).all()
        )
        assert torch.equal(batch.tgt_in[b, 1 : n + 1], batch.tgt_out[b, :n])
    assert sum(len(b) for b in shapes.batches(examples, 16)) == len(examples)
    stream = shapes.epochs(examples, 16, seed=1)
    assert sum(len(next(stream)) for _ in range(6)) == 2 * len(examples)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: shapes.generate_images(0), "n"),
        (lambda: shapes.generate_images(3, max_shapes=10), "max_shapes"),
        (lambda: shapes.generate_images(3, min_shapes=3, max_shapes=2), "max_shapes"),
        (lambda: shapes.generate_images(3, grid=(3,)), "grid"),
        (lambda: shapes.make_batch([]), "examples"),
        (lambda: list(shapes.batches(shapes.generate_images(2), 0)), "batch_size"),
        (
            lambda: shapes.draw([shapes.ShapeItem("teal", "circle", 0, 0, (8.0, 8.0), 10.0)]),
            "colour",
        ),
        (
            lambda: shapes.draw([shapes.ShapeItem("orange", "star", 0, 0, (8.0, 8.0), 10.0)]),
            "shape",
        ),
    ],
)
def test_generator_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the model ---------------------------------------------------------------------------------------


def test_encoder_gives_one_feature_per_16px_cell():
    enc = ConvEncoder(d_feature=16)
    assert enc(torch.rand(2, 3, 48, 48)).shape == (2, 9, 16)
    assert enc(torch.rand(1, 3, 32, 64)).shape == (1, 8, 16)
    assert ConvEncoder.grid_size(32, 64) == (2, 4)


def test_encoder_regions_see_only_their_neighbourhood():
    """Changing the pixels of the top-left cell changes the features of its neighbours at most
    (the 28-pixel receptive field), never those of the far corner."""
    torch.manual_seed(0)
    enc = ConvEncoder(d_feature=16)
    x = torch.rand(1, 3, 48, 48)
    y = x.clone()
    y[:, :, :16, :16] = torch.rand(1, 3, 16, 16)
    change = (enc(x) - enc(y)).abs().amax(-1)[0]  # [9]
    assert change[0] > 1e-4 and change[8] == 0


def test_encoder_windows_run_up_and_left_of_their_cell():
    """Each region's 28-pixel window runs from 12 pixels above and left of its cell to the
    cell's bottom-right corner (stride 2, padding 1 on even sizes), as the docstring says."""
    torch.manual_seed(0)
    enc = ConvEncoder(d_feature=16)
    x = torch.rand(1, 3, 48, 48)
    for pixel, region, reaches in [
        (15, 0, True),  # the last pixel of cell (0, 0), on its diagonal
        (16, 0, False),  # the first pixel past its bottom-right corner
        (4, 4, True),  # 12 pixels above and left of cell (1, 1)
        (3, 4, False),  # 13 pixels: outside its window
    ]:
        y = x.clone()
        y[:, :, pixel, pixel] = 1 - y[:, :, pixel, pixel]
        change = (enc(x) - enc(y)).abs().amax(-1)[0]  # [9]
        assert (change[region] > 0) == reaches, (pixel, region)


def test_a_blank_image_tells_apart_only_top_row_and_left_column():
    """Without the embeddings, only the top row and left column see the zero padding: on a
    blank image the 9 regions fall into 4 groups of equal vectors."""
    torch.manual_seed(0)
    enc = ConvEncoder(d_feature=16)
    with torch.no_grad():
        enc.row_embedding.weight.zero_()
        enc.col_embedding.weight.zero_()
        regions = enc(torch.ones(1, 3, 48, 48))[0]  # [9, 16]
    same = torch.cdist(regions, regions) < 1e-6
    groups = sorted({tuple(torch.nonzero(row).flatten().tolist()) for row in same})
    assert groups == [(0,), (1, 2), (3, 6), (4, 5, 7, 8)]


def teacher_forced(model, *args, **kwargs):
    """(logits [B, T, V], alpha [B, T, R]): the forward with return_attention=True, its one
    cross-attention layer's one head."""
    out = model(*args, return_attention=True, **kwargs)
    return out.logits, out.cross_attentions[0][:, 0]


def test_forward_returns_cross_attentions_only_when_asked(examples, model):
    """CaptionerOutput(logits, cross_attentions): None by default; with return_attention=True one
    layer of one head over the regions, ([B, 1, T, R],)."""
    batch = shapes.make_batch(examples[:2])
    with torch.no_grad():
        plain = model(batch.images, batch.tgt_in)
        asked = model(batch.images, batch.tgt_in, return_attention=True)
    assert plain.cross_attentions is None and torch.equal(plain.logits, asked.logits)
    (alpha,) = asked.cross_attentions
    assert alpha.shape == (2, 1, batch.tgt_in.shape[1], 9)


def test_attention_weights_sum_to_one_and_match_additive_score(examples, model):
    batch = shapes.make_batch(examples[:4])
    logits, alpha = teacher_forced(model, batch.images, batch.tgt_in)
    B, T = batch.tgt_in.shape
    assert logits.shape == (B, T, len(VOCAB)) and alpha.shape == (B, T, 9)
    assert (alpha >= 0).all()
    # softmax's sum over 9 regions + this sum over 9, of probabilities summing to 1
    assert_float_close(alpha.sum(-1), torch.ones(B, T), terms=9 + 9, scale=1)
    dec = model.decoder
    assert isinstance(dec.attention, AdditiveScore)
    features = model.encoder(batch.images)
    h = torch.randn(B, 16)
    _, a_fast = dec.attend(h, features, dec.attention.W_k(features))
    scores = dec.attention(h[:, None, :], features)  # [B, 1, R]
    reference = torch.softmax(scores, dim=-1)[:, 0]  # [B, R]
    # W_q h over 16 on another shape, the sum, tanh, v over 8: of the scores' size (a score error moves
    # a weight by at most twice it); then softmax over 9
    s = max(1.0, scores.abs().max().item())
    assert_float_close(a_fast, reference, terms=2 * (16 + 1 + 1 + 8) + 9, scale=s)


def test_teacher_forcing_equals_stepping_the_decoder(examples, model):
    batch = shapes.make_batch(examples[:3])
    logits, alpha = teacher_forced(model, batch.images, batch.tgt_in)
    features = model.encoder(batch.images)
    state = model.decoder.init_state(features)
    for t in range(batch.tgt_in.shape[1]):
        step_logits, state, step_alpha = model.decoder.step(batch.tgt_in[:, t], state, features)
        assert (step_logits - logits[:, t]).abs().max() < 1e-5
        assert (step_alpha - alpha[:, t]).abs().max() < 1e-6


def test_hard_attention_reads_one_region(examples, model):
    batch = shapes.make_batch(examples[:3])
    _, soft = teacher_forced(model, batch.images, batch.tgt_in)
    _, hard = teacher_forced(model, batch.images, batch.tgt_in, attention="hard")
    assert set(hard.unique().tolist()) <= {0.0, 1.0} and (hard.sum(-1) == 1).all()
    assert (hard[:, 0].argmax(-1) == soft[:, 0].argmax(-1)).all()  # same first state, same argmax


def test_greedy_decode_returns_one_map_per_word(examples, model):
    images = shapes.make_batch(examples[:6]).images
    tokens, log_prob, alpha = greedy_decode(
        model, images, max_len=7, bos_id=VOCAB.bos_id, eos_id=VOCAB.eos_id
    )
    B, L = tokens.shape
    assert B == 6 and L <= 7 and alpha.shape == (6, L, 9)
    for b in range(B):
        ids = tokens[b].tolist()
        end = ids.index(VOCAB.eos_id) + 1 if VOCAB.eos_id in ids else L
        assert_float_close(alpha[b, :end].sum(-1), torch.ones(end), terms=9 + 9, scale=1)
        assert (alpha[b, end:] == 0).all() and (tokens[b, end:] == VOCAB.pad_id).all()
    # the first word is the argmax of the first step, computed by hand
    features = model.encoder(images)
    logits, _, _ = model.decoder.step(
        torch.full((6,), VOCAB.bos_id), model.decoder.init_state(features), features
    )
    assert torch.equal(tokens[:, 0], logits.argmax(-1))
    # log_prob: the teacher-forced log-probabilities of the caption's words, up to <eos>
    tgt_in = torch.cat([torch.full((6, 1), VOCAB.bos_id), tokens[:, :-1]], dim=1)
    with torch.no_grad():
        forced, _ = teacher_forced(model, images, tgt_in)  # [B, L, V]
    picked = forced.log_softmax(-1).gather(-1, tokens[..., None])[..., 0]
    real = alpha.sum(-1) > 0  # the words up to and including <eos>
    # greedy's steps against teacher forcing's: step t's logits carry t decoder steps (STEP_TERMS),
    # the log-softmax over V adds V, the sum over the L words adds L; of the logits' size
    V = len(VOCAB)
    terms = sum(t * STEP_TERMS + V for t in range(1, L + 1)) + L
    assert_float_close(
        log_prob, (picked * real).sum(1), terms=terms, scale=forced.abs().max().item()
    )


def test_doubly_stochastic_penalty(examples, model):
    batch = shapes.make_batch(examples[:4])
    plain = model.loss(batch.images, batch.tgt_in, batch.tgt_out)
    with torch.no_grad():
        _, alpha = teacher_forced(model, batch.images, batch.tgt_in)
    real = (batch.tgt_out != VOCAB.pad_id).float()[:, :, None]
    expected = ((1 - (alpha * real).sum(1)) ** 2).sum(-1).mean()
    penalized = model.loss(batch.images, batch.tgt_in, batch.tgt_out, penalty=0.5)
    assert abs(penalized.item() - plain.item() - 0.5 * expected.item()) < 1e-5


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda m, b: m(b.images[:, :2], b.tgt_in), "images"),
        (lambda m, b: m(b.images[:, :, :40], b.tgt_in), "images"),
        (lambda m, b: m(b.images, b.tgt_in.float()), "tgt_in"),
        (lambda m, b: m(b.images, b.tgt_in + 100), "tgt_in"),
        (lambda m, b: m(b.images, b.tgt_in[:1]), "tgt_in"),
        (lambda m, b: m.loss(b.images, b.tgt_in, b.tgt_out[:, :-1]), "tgt_out"),
        (lambda m, b: m(b.images, b.tgt_in, attention="medium"), "attention"),
        (lambda m, b: greedy_decode(m, b.images, 0, 1, 2), "max_len"),
        (lambda m, b: greedy_decode(m, b.images, 5, 99, 2), "bos_id"),
    ],
)
def test_model_bad_input_names_the_argument(examples, model, call, name):
    batch = shapes.make_batch(examples[:2])
    with pytest.raises((ValueError, TypeError), match=name):  # TypeError: float ids
        call(model, batch)


def test_a_tiny_captioner_learns_to_name_one_shape(one_thread):
    """One shape per image: after 80 steps the loss has fallen well below its start."""
    torch.manual_seed(0)
    train = shapes.generate_images(400, seed=0, max_shapes=1)
    m = Captioner(len(VOCAB), d_feature=32, d_emb=16, d_hidden=32, d_attn=16)
    history = fit(
        m,
        shapes.epochs(train, 32),
        lambda m, b: m.loss(b.images, b.tgt_in, b.tgt_out),
        steps=80,
        lr=5e-3,
        decay="constant",
        progress=False,
    )
    first, last = sum(history.losses[:5]) / 5, sum(history.losses[-10:]) / 10
    assert last < 0.6 * first, (first, last)
