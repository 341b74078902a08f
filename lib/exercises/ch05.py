"""Checkers for the exercises of the chapter *Attention beyond translation*.

- :func:`check_without_positions`: exercise 2 (predict, then check): the captioner without its row and
  column embeddings, measured against the chapter's captioner of the reader's own run.
- :func:`check_word_importance`: exercise 3 (implement): each word's importance score alpha_i * alpha_it in
  a hierarchical attention network (a heuristic for a highlight, not an exact share of the document
  vector: that is sum_i alpha_i h_i, and each h_i of the sentence GRU mixes every sentence).

Exercise 1 (a flat start for the attention, every region weighted 1/9 at first, change and explain) is answered in prose; the chapter's
solution computes it.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

import torch
from torch import Tensor

from . import (
    CheckFailed,
    attempted,
    call,
    checker,
    expect_bool,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    not_attempted,
)

__all__ = ["check_without_positions", "check_word_importance"]


# --- exercise 2: no row and column embeddings ----------------------------------------------------------------


def _test_captions(captioner: Any) -> tuple[Any, list]:
    """Greedy captions (token ids) of the chapter's 300 test images
    (``shapes.generate_images(300, seed=1)``), and the images."""
    from ..captioning import greedy_decode
    from ..data import shapes

    images = shapes.generate_images(300, seed=1)
    tokens, _, _ = greedy_decode(
        captioner,
        shapes.make_batch(images).images,
        max_len=12,
        bos_id=shapes.VOCAB.bos_id,
        eos_id=shapes.VOCAB.eos_id,
    )
    return tokens, images


def exact_by_shapes(captioner: Any) -> dict[int, float]:
    """The share of exactly right captions by number of shapes (1, 2, 3), as the chapter measures it:
    greedy captions of the 300 test images (``shapes.generate_images(300, seed=1)``)."""
    from ..data import shapes

    tokens, images = _test_captions(captioner)
    right = [shapes.VOCAB.decode(t) == list(ex.caption) for t, ex in zip(tokens, images)]
    return {
        k: sum(r for r, ex in zip(right, images) if len(ex.items) == k)
        / sum(len(ex.items) == k for ex in images)
        for k in (1, 2, 3)
    }


def three_shape_errors(captioner: Any) -> tuple[int, int]:
    """The three-shape test captions ``captioner`` gets wrong, and how many of them name the right
    shapes in the wrong order (the chapter's solution counts them the same way): greedy captions of
    the 300 test images, as :func:`exact_by_shapes` writes them."""
    from ..data import shapes

    tokens, images = _test_captions(captioner)
    wrong = in_wrong_order = 0
    for t, ex in zip(tokens, images):
        if len(ex.items) == 3:
            named, truth = (
                " ".join(w).split(f" {shapes.SEPARATOR} ")
                for w in (shapes.VOCAB.decode(t), ex.caption)
            )
            if named != truth:
                wrong += 1
                in_wrong_order += sorted(named) == sorted(truth)  # the right shapes
    return wrong, in_wrong_order


def _number_of_shapes(value: Any) -> int:
    """``suffers_most`` as the int 1, 2 or 3, or feedback that names what came instead."""
    if isinstance(value, bool):
        fail(
            f"suffers_most should be an int, the number of shapes 1, 2 or 3; got the bool {value}."
        )
    if isinstance(value, numbers.Integral):
        if value in (1, 2, 3):
            return int(value)
        fail(f"suffers_most should be the number of shapes, 1, 2 or 3; got {int(value)}.")
    if isinstance(value, numbers.Real):
        fail(
            f"suffers_most should be an int, the number of shapes 1, 2 or 3; got the {type(value).__name__} {value!r}. Write it without a decimal point."
        )
    fail(
        f"suffers_most should be an int, the number of shapes 1, 2 or 3; got {type(value).__name__} {fmt(value)}."
    )


def _captioner(value: Any, name: str, what: str) -> Any:
    """``value`` if it is a Captioner, or feedback that names what came instead."""
    from ..captioning import Captioner

    if not isinstance(value, Captioner):
        fail(f"{name} should be {what}; got {type(value).__name__} {fmt(value)}.")
    return value


def _chapter_model(model: Any) -> Any:
    """``model`` if given (the check cell passes it: the course's grader reads it from its sandbox,
    where the chapter's code trained it; course review s36, M4: looked up here, it was missing in
    the grader's process), or else the chapter's captioner ``model`` of the notebook's kernel."""
    frame = sys._getframe(1)
    while model is None and frame is not None:  # the check cell's namespace: the notebook's, or the
        if frame.f_globals.get("__name__") == "__main__":  # course grader's sandbox's
            model = frame.f_globals.get("model")
            break
        frame = frame.f_back
    if model is None:
        fail(
            "model, the chapter's trained captioner, is not defined: run the chapter's cells from the top (the section 'Show, attend and tell' trains it), or pass it, check_without_positions(..., model=model)."
        )
    return model


def _blind_drops(blind_model: Any, model: Any) -> dict[int, float]:
    """The points of exactly right captions ``blind_model`` loses against ``model``, the reader's
    own chapter captioner (both measured here), by number of shapes, once ``blind_model`` is known
    to be a trained captioner without row and column embeddings."""
    _captioner(
        blind_model, "blind_model", "your trained Captioner without row and column embeddings"
    )
    encoder = blind_model.encoder
    if any(bool((t.weight != 0).any()) for t in (encoder.row_embedding, encoder.col_embedding)):
        fail(
            "blind_model still has row and column embeddings: set blind_model.encoder.row_embedding.weight and blind_model.encoder.col_embedding.weight to zero and freeze them (requires_grad_(False)) before training it."
        )
    model = _captioner(
        _chapter_model(model),
        "model",
        "the chapter's trained Captioner, the one blind_model is compared with",
    )
    if model is blind_model:
        fail(
            "model and blind_model are the same captioner: pass the chapter's model as model, and your new captioner as blind_model."
        )
    if all(
        not (t.weight != 0).any()
        for t in (model.encoder.row_embedding, model.encoder.col_embedding)
    ):
        fail(
            "model, the chapter's captioner, has lost its row and column embeddings (they are all zero): zero those of a fresh Captioner, blind_model, and keep the chapter's model as it was trained."
        )
    embeddings = {"encoder.row_embedding.weight", "encoder.col_embedding.weight"}
    theirs = dict(model.named_parameters())
    if all(
        name in theirs and p.shape == theirs[name].shape and torch.equal(p, theirs[name])
        for name, p in blind_model.named_parameters()
        if name not in embeddings
    ):
        fail(
            "blind_model has the chapter's trained weights, with only its row and column embeddings zeroed: that measures a model trained WITH positions and then deprived of them, not one that learned without them. Make a fresh Captioner, zero and freeze its embeddings, and train it as the chapter's was."
        )
    measured = exact_by_shapes(blind_model)
    if measured[1] < 0.5:
        fail(
            f"blind_model gets only {measured[1]:.0%} of the one-shape captions exactly right: train it as the chapter's captioner was trained (400 steps) before checking."
        )
    chapter = exact_by_shapes(model)
    if chapter[1] < 0.5:
        fail(
            f"model gets only {chapter[1]:.0%} of the one-shape captions exactly right: run the chapter's cells that train it (section 'Show, attend and tell') before checking."
        )
    return {k: chapter[k] - measured[k] for k in (1, 2, 3)}


@checker("without positions")
def check_without_positions(
    suffers_most: Any, mostly_wrong_order: Any, blind_model: Any = None, model: Any = None
) -> str:
    """Check the predictions of exercise 2 against ``blind_model``, the reader's captioner trained with
    its row and column embeddings fixed at zero: ``suffers_most`` (1, 2 or 3), the number of shapes of
    the captions whose exact-match rate falls most, and ``mostly_wrong_order`` (True/False): of the
    three-shape captions ``blind_model`` gets wrong, do most name the right shapes in the wrong order?
    (It replaces "do the two-shape captions lose more than 5 points?", whose answer changed with the
    processor's kernels: reader s39, ch05, 1; and then "do the three-shape captions lose any?", which
    more than 30 points lost on every processor made a free answer. The wrong-order share was 22 of
    79 on an Intel Xeon, 21 of 68 on an AMD EPYC.) The drops are measured on ``blind_model`` against ``model``, the chapter's captioner
    as the reader's own run trained it (by default the notebook's ``model``) (:func:`exact_by_shapes`, about a second each): the predictions
    are judged only once the experiment is run (reader s28, ch05, 3), and the points are those of
    the reader's run, not of the book's (reader s35, ch05, 1)."""
    if suffers_most is None and mostly_wrong_order is None:
        not_attempted(
            "write your two predictions (suffers_most and mostly_wrong_order) in the cell above, then run this cell again."
        )
    # both read first, so that a wrong type is named before a wrong prediction
    if suffers_most is not None:
        suffers_most = _number_of_shapes(suffers_most)
    if mostly_wrong_order is not None:
        mostly_wrong_order = expect_bool(mostly_wrong_order, "mostly_wrong_order")
    # a part still to write is named in the headline, as in chapter 4 (reader s36b there)
    if suffers_most is None:
        not_attempted(
            "now predict which captions suffer most (suffers_most) as well.", "suffers_most"
        )
    if mostly_wrong_order is None:
        not_attempted(
            "now predict whether most of the wrong three-shape captions name the right shapes in the wrong order (mostly_wrong_order) as well.",
            "mostly_wrong_order",
        )
    if blind_model is None:
        not_attempted(
            "your two predictions are written; now train blind_model as the exercise says and hand it in beside them: the checker judges them only against what your blind_model does, and it does not keep them, so leave the ones you wrote first.",
            "blind_model",
        )
    drops = _blind_drops(blind_model, model)
    wrong_three, in_wrong_order = three_shape_errors(blind_model)
    wrong = []  # every wrong prediction, so that a second run does not reveal another
    if suffers_most != max(drops, key=drops.get):
        wrong.append(
            f"suffers_most: your prediction, the captions with {suffers_most} shape{'s' if suffers_most > 1 else ''}, is not the group that loses most. Compare your blind_model's exactly right captions by number of shapes with this chapter's, printed in the section 'Where the model looks, word by word'."
        )
    if mostly_wrong_order != (2 * in_wrong_order > wrong_three):
        wrong.append(
            "mostly_wrong_order: your prediction is not what your blind_model does. Decode the test images with it and set each of the three-shape captions it gets wrong beside the true one: does it name the same shapes, in another order?"
        )
    if len(wrong) == 2:
        fail(f"both predictions are wrong. {wrong[0]} And {wrong[1]}")
    if wrong:
        fail(wrong[0])
    points = ", ".join(f"{100 * drops[k]:.0f}" for k in (1, 2, 3))
    binding = (
        "Your run's wrong captions are mostly order errors: it kept each colour with its form and lost the order."
        if 2 * in_wrong_order > wrong_three
        else "And position does more than order the shapes: it keeps each colour with its form, so most of the wrong captions get a shape wrong."
    )
    return f"both predictions are right: your blind_model loses {points} points of exactly right captions with 1, 2 and 3 shapes against your model, and {in_wrong_order} of its {wrong_three} wrong three-shape captions name the right shapes in the wrong order. Without the embeddings, position comes only from the zero padding, which only the cells of the top row and of the left column see (a blank image tells apart just 4 groups of regions); the rest of the order must come from what each region sees of its neighbours. {binding}"


# --- exercise 3: each word's importance score --------------------------------------------------------------------


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch05.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"word_importance": 5}


def _importance_cases() -> list[tuple[str, Tensor, Tensor]]:
    """(description, word_weights [B, S, W], sentence_weights [B, S]) with padding like the chapter's batches."""
    g = torch.Generator().manual_seed(SEEDS["word_importance"])

    def weights(shape, lengths):  # softmax rows, 0 beyond each row's length
        scores = torch.randn(*shape, generator=g)
        allowed = torch.arange(shape[-1]) < lengths[..., None]
        w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return torch.nan_to_num(w)  # a padding row (length 0) is all zeros

    # document 1 has two sentences (and a padding one)
    word_lengths = torch.tensor([[4, 2, 3], [3, 4, 0]])
    sentence_lengths = torch.tensor([3, 2])
    square = torch.tensor([[3, 3, 1], [2, 3, 3], [1, 2, 3], [3, 3, 3]])
    return [
        (
            "4 documents of 3 sentences of 3 words (S = W)",
            weights((4, 3, 3), square),
            weights((4, 3), torch.full((4,), 3)),
        ),
        (
            "2 documents, 3 sentences of at most 4 words, with padding",
            weights((2, 3, 4), word_lengths),
            weights((2, 3), sentence_lengths),
        ),
        ("1 document, 1 sentence of 1 word", torch.ones(1, 1, 1), torch.ones(1, 1)),
    ]


@checker("word_importance")
def check_word_importance(word_importance: Any) -> str:
    """Check ``word_importance(word_weights [B, S, W], sentence_weights [B, S]) -> [B, S, W]``, the products
    alpha_i * alpha_it of each sentence's weight and each word's weight inside its sentence (the importance
    scores of exercise 3)."""
    attempted(word_importance, "word_importance")
    cases = _importance_cases()
    for case, words, sentences in cases:
        B, S, W = words.shape
        try:
            result = call(
                word_importance, words, sentences, name="word_importance", case=f"'{case}'"
            )
        except CheckFailed as e:
            if "size of tensor" in str(e) or "broadcast" in str(e):
                # without the generic hint
                said = str(e).split(" Two tensors' shapes do not broadcast")[0]
                fail(
                    f"{said} sentence_weights has shape [B, S]; to multiply every word of sentence i by the sentence's weight it needs a trailing dimension of size 1, after the sentence axis."
                )
            raise
        result = expect_tensor(
            result, (B, S, W), name="word_importance", case=f"'{case}'", allow_nan=True
        )
        expected = (sentences[..., None] * words).double()
        if torch.allclose(result, expected, atol=1e-6):
            continue
        if not torch.isfinite(result).all():
            fail(
                f"on the case '{case}', your result has NaN or inf. A padding sentence has all its word weights 0 and weight 0 itself: do not divide by its sum (0 / 0); the plain product needs no normalising."
            )
        if S == W and torch.allclose(result, (sentences[:, None, :] * words).double(), atol=1e-6):
            fail(
                f"on the case '{case}', you multiplied word t of every sentence by the weight of sentence t: sentence_weights [B, S] was broadcast along the words. Give it a trailing dimension of size 1 instead, so that it broadcasts along the words of each sentence."
            )
        if torch.allclose(result, (sentences[..., None] + words).double(), atol=1e-6):
            fail(
                f"on the case '{case}', you added the two weights; the importance score is their product alpha_i * alpha_it: the sentence's weight scales the weights inside it, so that the scores of a document sum to 1, like the weights of one distribution over all its words."
            )
        if torch.allclose(result, (sentences.sqrt()[..., None] * words).double(), atol=1e-6):
            fail(
                f"on the case '{case}', you multiplied by the square root of the sentence's weight, sqrt(alpha_i) * alpha_it: that is the visualisation of Yang et al., which the exercise mentions; the importance score uses the sentence weight alpha_i itself, so that the scores of a document sum to 1."
            )
        if torch.allclose(result, words.double(), atol=1e-6) and not torch.allclose(
            expected, words.double()
        ):
            fail(
                f"on the case '{case}', your result equals the word weights alone: multiply them by their sentence's weight."
            )
        sums = result.sum(dim=(1, 2))
        fail(
            f"on the case '{case}', {largest_difference(result, expected)}. (Each document's scores should sum to 1; yours sum to {', '.join(f'{s:.3g}' for s in sums.tolist())}.)"
        )
    return f"`word_importance` is right on all {len(cases)} hidden cases (padding sentences and words, S = W, a single word)."
