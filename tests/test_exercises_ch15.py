"""The exercises of the chapter *Inside a real pretrained model*: the checkers accept the chapter's solutions and
reject typical wrong answers with the right feedback (layout and student edition: tests/test_exercises.py; the
chapter's solution asserts the weights that check_other_adjectives knows, and so does this file)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch
import torch.nn.functional as F

from lib.exercises import ExerciseFailed, ch15
from tests.test_exercises import PATHOLOGICAL, ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "15_inside_a_pretrained_model.ipynb"


def test_the_chapter_has_two_checked_exercises_and_three_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == {"check_other_adjectives", "check_embed"} == set(ch15.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 3 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


# --- exercise 1: other adjectives ---------------------------------------------------------------------------


def test_the_checkers_weights_are_the_models():
    model, tokenizer = ch15._minilm()
    for adjective, (to_animal, to_street) in ch15.WEIGHTS.items():
        enc = tokenizer.encode(
            f"The animal didn't cross the street because it was too {adjective}."
        )
        assert enc.tokens[2] == "animal" and enc.tokens[8] == "street" and enc.tokens[10] == "it"
        with torch.no_grad():
            # head (3, 1)
            row = model(torch.tensor([enc.input_ids]), return_attention=True).attentions[3][
                0, 1, 10
            ]
        assert abs(row[2].item() - to_animal) < 0.001 and abs(row[8].item() - to_street) < 0.001


RIGHT = (0.608, 0.350)  # w_scared, w_narrow as the model gives them


def test_check_other_adjectives_accepts_and_says_what_is_missing():
    assert ch15.check_other_adjectives(True, False, *RIGHT)
    assert ch15.check_other_adjectives(True, False, 0.61, 0.35)  # two decimals are enough
    # the verdict is shown as plain text: no Markdown asterisks
    assert "*" not in ch15.check_other_adjectives(True, False, *RIGHT).message
    # the book's shared rule for predictions (expect_bool): bools, not words or 1/0
    assert ch15.check_other_adjectives(torch.tensor(True), torch.tensor(False), *RIGHT)
    half = ch15.check_other_adjectives(True, None)
    assert half.status == "not attempted" and "narrow_above_half" in half.message
    assert "scared_above_half" in ch15.check_other_adjectives(None, False).message
    # a missing prediction is named without a word on the other one
    assert "right" not in half.message
    assert ch15.check_other_adjectives(None, None).status == "not attempted"


@pytest.mark.parametrize(
    "predictions", [(True, False), (False, True), (False, False), (True, True)]
)
def test_check_other_adjectives_judges_no_prediction_before_the_weights(predictions):
    """Review s38 m3: "scared_above_half = False is not what the head does" gave a True/False answer away
    after one try. Right or wrong, two predictions alone get the same answer: measure the weights."""
    verdict = ch15.check_other_adjectives(*predictions)
    assert verdict.status == "not attempted" and verdict.exercise == "w_scared"
    assert "set w_scared and w_narrow" in verdict.message
    assert ch15.check_other_adjectives(*predictions, 0.608).exercise == "w_narrow"
    assert verdict.message == ch15.check_other_adjectives(True, False).message


def _other_heads(adjective: str) -> list[tuple[float, int, int]]:
    """Weights from *it* to *animal* of heads other than (3, 1), each at least 0.02 from every weight
    the checker knows and at least OTHER_HEADS from every other head's (so that a three-decimal
    rounding still points at one head), with their layer and head: the largest such weight and the
    smallest."""
    att = ch15._adjective_attention(adjective)[:, :, 10, 2]  # [L, H]
    known = [w for pair in ch15.WEIGHTS.values() for w in pair]
    found = []
    for k in att.flatten().argsort(descending=True).tolist():
        layer, head = divmod(k, 12)
        weight = att[layer, head].item()
        others = torch.cat([att.flatten()[:k], att.flatten()[k + 1 :]])
        alone = (others - weight).abs().min().item() >= ch15.OTHER_HEADS + ch15.SAME_HEAD
        if (layer, head) != (3, 1) and alone and all(abs(weight - w) > 0.02 for w in known):
            found.append((weight, layer, head))
    assert len(found) >= 2, "no other head stands alone"
    return [found[0], found[-1]]


def _with(adjective: str, weight: float) -> tuple:
    """The arguments of check_other_adjectives with ``weight`` as the measured weight of ``adjective``."""
    return (True, False, weight, 0.350) if adjective == "scared" else (True, False, 0.608, weight)


@pytest.mark.parametrize("adjective", ["scared", "narrow"])
def test_check_other_adjectives_names_the_other_head(adjective):
    for weight, layer, head in _other_heads(adjective):
        # as read from att (float precision), and rounded to three decimals
        for given in (weight, round(weight, 3)):
            with pytest.raises(ExerciseFailed, match=re.escape(f"of layer {layer}, head {head}.")):
                ch15.check_other_adjectives(*_with(adjective, given))


def _generic(adjective: str) -> str:
    return (
        f"is not the weight of layer 3, head 1 from 'it' to 'animal' in the '{adjective}' sentence"
    )


@pytest.mark.parametrize("adjective", ["scared", "narrow"])
def test_check_other_adjectives_names_no_head_that_a_number_only_lands_near(adjective):
    """Review s41, T1: the 72 weights lie closer together than 0.005, so a wrong number was often said
    to be some head's weight. The reader's two examples: the mean over layer 3's heads ("layer 4, head
    0" in the scared sentence, 0.001 away) and the weight one token off (att[3, 1, 9, 1], "layer 2, head
    5", 0.003 away). Neither names a head now; nor does a number between two heads 0.001 apart."""
    att = ch15._adjective_attention(adjective)
    weights = att[:, :, 10, 2]  # [L, H]
    for wrong in (weights[3].mean().item(), att[3, 1, 9, 1].item()):
        with pytest.raises(ExerciseFailed, match=re.escape(_generic(adjective))) as failure:
            ch15.check_other_adjectives(*_with(adjective, wrong))
        assert "'animal' of layer" not in failure.value.message
    # two heads whose weights are less than OTHER_HEADS / 2 apart: a number rounded to three decimals
    # or between them names neither; only the exact weight of one, read from att, names it
    w = weights.flatten().sort().values
    close = [
        (a, b)
        for a, b in zip(w.tolist(), w[1:].tolist())
        if 1e-4 < b - a < ch15.OTHER_HEADS / 2 and 0.01 < a and b < 0.2
    ]
    a, b = close[0]
    for given in (round(a, 3), (a + b) / 2):
        with pytest.raises(ExerciseFailed, match=re.escape(_generic(adjective))):
            ch15.check_other_adjectives(*_with(adjective, given))
    assert ch15._matching_head(a, weights) is not None


@pytest.mark.parametrize("adjective, slip", [("scared", 0.584), ("narrow", 0.293)])
def test_check_other_adjectives_asks_about_the_final_period(adjective, slip):
    """Reader s41: the sentence read without its final period (0.584 for 'scared', not 0.608), a likely
    slip since the chapter Self-attention read its sentences so."""
    without = ch15._adjective_attention(adjective, period=False)[3, 1, 10, 2].item()
    assert f"{without:.3f}" == f"{slip:.3f}"
    for given in (without, round(without, 2)):
        with pytest.raises(ExerciseFailed, match=re.escape("Did you keep the final '.'?")):
            ch15.check_other_adjectives(*_with(adjective, given))


def test_check_other_adjectives_names_both_wrong_predictions_at_once():
    # (False, True): both wrong; the reader learns of both in one run, not one after the other
    with pytest.raises(ExerciseFailed) as failure:
        ch15.check_other_adjectives(False, True, *RIGHT)
    message = failure.value.message
    assert "scared_above_half = False is not" in message
    assert "narrow_above_half = True is not" in message


# --- exercise 2: embed ----------------------------------------------------------------------------------------------


def _solution():
    exercise = next(e for e in exercises(CHAPTER) if e["checker"] == "check_embed")
    return defined_functions("\n".join(c.source for c in exercise["solutions"]))["embed"]


def test_check_embed_accepts_the_chapters_solution_the_reference_and_one_sentence_at_a_time():
    solution = _solution()
    assert ch15.check_embed(solution).passed
    assert ch15.check_embed(
        lambda model, tokenizer, texts: ch15.embed_reference(model, tokenizer, texts).float()
    )
    one_at_a_time = ch15.check_embed(
        lambda model, tokenizer, texts: torch.cat([solution(model, tokenizer, [t]) for t in texts])
    )
    # right vectors, so it passes, but the verdict says it skipped the padded batch the exercise asks for
    assert one_at_a_time.passed and "ran the model 3 times" in one_at_a_time.message
    assert "one padded batch" in one_at_a_time.message
    assert "ran the model" not in ch15.check_embed(solution).message


def test_the_reference_is_sentence_transformers_mean_pooling_worked_by_hand():
    model, tokenizer = ch15._minilm()
    texts = ["A bank lends money.", "Hi."]
    with torch.no_grad():
        vectors = [
            model(torch.tensor([tokenizer.encode(t).input_ids])).sequence_output[0].mean(0)
            for t in texts
        ]
    by_hand = torch.stack([v / v.norm() for v in vectors]).double()  # no padding at all
    assert (ch15.embed_reference(model, tokenizer, texts) - by_hand).abs().max() < 1e-6


def test_every_named_mistake_is_far_from_the_answer_on_the_first_hidden_batch():
    """The checker compares to 1e-4; each mistake it names differs from the answer by more than 1e-2 there."""
    model, tokenizer = ch15._minilm()
    texts = ch15.EMBED_CASES[0]
    expected = ch15.embed_reference(model, tokenizer, texts)
    for kwargs, _ in ch15._EMBED_MISTAKES:
        assert (
            ch15.embed_reference(model, tokenizer, texts, **kwargs) - expected
        ).abs().max() > 1e-2, kwargs


def _variant(**kwargs):
    return lambda model, tokenizer, texts: ch15.embed_reference(
        model, tokenizer, texts, **kwargs
    ).float()


def _specials_left_out_off_by_one(model, tokenizer, texts):
    """Reader s36b's attempt to leave out [CLS] and [SEP]: [SEP] sought after position 0 is zeroed."""
    batch = tokenizer.encode_batch(texts)
    mask = batch.attention_mask.clone()
    with torch.no_grad():
        h = model(batch.input_ids, attention_mask=batch.attention_mask).sequence_output
    mask[:, 0] = 0
    mask[torch.arange(len(texts)), mask.sum(1) - 1] = 0  # one before [SEP]
    m = mask[..., None].float()
    return F.normalize((h * m).sum(1) / m.sum(1), dim=-1)


def _in_training_mode(model, tokenizer, texts):
    model.train()
    return ch15.embed_reference(model, tokenizer, texts)


def _dropout_on_then_eval(model, tokenizer, texts):
    model.train()  # the mistake: dropout on while computing; eval mode again afterwards
    batch = tokenizer.encode_batch(texts)
    h = model(batch.input_ids, attention_mask=batch.attention_mask).sequence_output
    model.eval()
    mask = batch.attention_mask[..., None].float()
    v = (h * mask).sum(1) / mask.sum(1)
    return (v / v.norm(dim=-1, keepdim=True)).detach()


def _token_vectors(model, tokenizer, texts):
    batch = tokenizer.encode_batch(texts)
    return model(batch.input_ids, attention_mask=batch.attention_mask).sequence_output


def _mask_as_second_argument(model, tokenizer, texts):
    # the mask passed by position: Bert.forward's second parameter is token_type_ids
    batch = tokenizer.encode_batch(texts)
    with torch.no_grad():
        h = model(batch.input_ids, batch.attention_mask).sequence_output  # [B, T, D]
    mask = batch.attention_mask[..., None].float()  # [B, T, 1]
    return F.normalize((h * mask).sum(1) / mask.sum(1), dim=-1)


def _forgot_return(model, tokenizer, texts):
    vectors = ch15.embed_reference(model, tokenizer, texts)  # noqa: F841 (the mistake: computed, never returned)


EMBED_WRONG = [
    ("mean over the padding too", _variant(mask_mean=False), "you averaged over the padding too"),
    (
        "no mask for the model",
        _variant(mask_model=False),
        "you did not give the model the attention_mask",
    ),
    (
        "no mask at all",
        _variant(mask_model=False, mask_mean=False),
        "you used no attention_mask at all",
    ),
    (
        "the mask as the second positional argument",
        _mask_as_second_argument,
        "you passed the attention mask as the model's second positional argument, which is "
        "token_type_ids",
    ),
    ("[CLS] vector", _variant(pooling="cls"), "you returned the [CLS] token's last-layer vector"),
    ("pooled output", _variant(pooling="pooled"), "you returned the pooled output"),
    (
        "pooled output, not normalized",
        _variant(pooling="pooled", normalize=False),
        "you returned the pooled output (the pooler on the [CLS] vector), which this model was not trained to use. Average the last layer's token vectors over the real tokens. Then scale each vector to length 1.",
    ),
    (
        "special tokens left out",
        _variant(specials=False),
        "you left [CLS] and [SEP] out of the mean",
    ),
    ("[CLS] left out", _variant(specials="cls"), "you left [CLS] out of the mean."),
    (
        # reader s36b: position 0 zeroed, then [SEP] sought at mask.sum(1) - 1, one too early
        "[CLS] and the token before [SEP] left out",
        _variant(specials="cls_off_by_one"),
        "you left [CLS] out of the mean, and with it the last token before [SEP], not [SEP]",
    ),
    (
        "the reader's code for it",
        _specials_left_out_off_by_one,
        "you left [CLS] out of the mean, and with it the last token before [SEP], not [SEP]",
    ),
    (
        # the reader's slice: sequence_output[:, 1:-1].mean(1), the mask given to the model
        "positions 1 to T-2 of the padded batch",
        lambda m, t, x: F.normalize(
            m(
                t.encode_batch(x).input_ids,
                attention_mask=t.encode_batch(x).attention_mask,
            )
            .sequence_output[:, 1:-1]
            .mean(1),
            dim=-1,
        ).detach(),
        "you averaged positions 1 to T-2 of the padded batch",
    ),
    (
        "the slice, then the masked mean",
        _variant(sliced=True),
        "you cut the first and the last position off the padded batch",
    ),
    ("the embeddings", _variant(layer=0), "you averaged the embeddings (hidden_states[0])"),
    (
        "the second-to-last layer",
        _variant(layer=-2),
        "you averaged hidden_states[5] (hidden_states[-2]), the vectors after 5 of the 6 layers, not after the last.",
    ),
    ("the third layer", _variant(layer=3), "you averaged hidden_states[3] (hidden_states[-4])"),
    (
        "not normalized",
        _variant(normalize=False),
        "you took the right mean but did not scale it to length 1",
    ),
    (
        "normalized over the sentences",
        lambda m, t, x: (lambda v: v / v.norm(dim=0, keepdim=True))(
            ch15.embed_reference(m, t, x, normalize=False)
        ),
        "you normalized over the sentences (dim 0)",
    ),
    (
        # in float32, as a reader's code computes it: the dead dimensions' columns have norm 0
        "normalized over the sentences, in float32",
        lambda m, t, x: (lambda v: v / v.norm(dim=0, keepdim=True))(
            ch15.embed_reference(m, t, x, normalize=False).float()
        ),
        "you divided each column by its norm, over the sentences (dim 0)",
    ),
    (
        # F.normalize floors the norm at 1e-12: the dead dimensions stay near 0, no inf or NaN
        "F.normalize over the sentences",
        lambda m, t, x: F.normalize(ch15.embed_reference(m, t, x, normalize=False).float(), dim=0),
        "you normalized over the sentences (dim 0): each column",
    ),
    ("training mode", _in_training_mode, "put the model in training mode"),
    ("dropout on, then eval", _dropout_on_then_eval, "most likely dropout"),
    ("a vector per token", _token_vectors, "a vector per token"),
    (
        "a list of vectors",
        lambda m, t, x: list(ch15.embed_reference(m, t, x)),
        "returned a list of tensors",
    ),
    ("zeros", lambda m, t, x: torch.zeros(len(x), 384), "is all zeros"),
    (
        "random unit vectors",
        lambda m, t, x: torch.nn.functional.normalize(torch.randn(len(x), 384), dim=-1),
        "its largest difference is",
    ),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    ("uses the texts as ids", lambda m, t, x: m(torch.tensor(x)), "raised"),
]


@pytest.mark.parametrize("name, wrong, message", EMBED_WRONG, ids=[w[0] for w in EMBED_WRONG])
def test_check_embed_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch15.check_embed(wrong)
    model, _ = ch15._minilm()
    assert not model.training  # the checker's model is back in eval mode


def test_the_checkers_case_names_cut_sentences_after_a_whole_word():
    assert ch15._opening("Hi.") == "Hi."
    assert ch15._opening("The cat sat on the mat.") == "The cat sat on the…"
    assert ch15._opening("Children were playing on the muddy bank") == "Children were…"
    assert ch15._opening("Antidisestablishmentarianism rules.") == "Antidisestablishment…"
    # the message a reader sees quotes the hidden batch that way
    with pytest.raises(ExerciseFailed) as failure:
        ch15.check_embed(lambda m, t, x: torch.zeros(len(x), 384))
    assert "('The cat sat on the…', 'Hi.', 'Children were…')" in str(failure.value)


def test_check_embed_reports_a_wrong_direction_by_cosine_and_a_live_dimension():
    """A wrong answer that no named mistake explains is told its smallest cosine with the answer and
    the largest difference among the dimensions that are not about 0 in every sentence (not "expected
    4.584e-33" at a dead one)."""
    model, tokenizer = ch15._minilm()
    expected = ch15.embed_reference(model, tokenizer, ch15.EMBED_CASES[0])
    dead = (expected.abs().amax(0) <= ch15.DEAD).nonzero().flatten().tolist()
    assert dead  # the model has dead dimensions, where the old message pointed

    def wrong(m, t, x):  # the answer, with two coordinates swapped: no named mistake
        v = ch15.embed_reference(m, t, x).float()
        return v[:, torch.arange(v.shape[1]).roll(1)]

    with pytest.raises(ExerciseFailed) as failed:
        ch15.check_embed(wrong)
    message = str(failed.value)
    assert "has cosine" in message and "dimensions that this model leaves at about 0" in message
    index = int(re.search(r"at index \[\d+, (\d+)\]", message).group(1))
    assert index not in dead and "e-3" not in message


def test_check_embed_names_one_sentence_in_its_difference():
    """Review s41, T3: with max pooling, the message named sentence 2 by its cosine and gave the largest
    difference at index [0, 99], in sentence 0. The index is now in the sentence the message names."""

    def max_pooled(m, t, x):
        batch = t.encode_batch(x)
        with torch.no_grad():
            h = m(batch.input_ids, attention_mask=batch.attention_mask).sequence_output
        h = h.masked_fill(batch.attention_mask[..., None] == 0, float("-inf"))
        return F.normalize(h.amax(1), dim=-1)

    with pytest.raises(ExerciseFailed) as failed:
        ch15.check_embed(max_pooled)
    message = str(failed.value)
    named = re.search(r"your vector of sentence (\d+) \(counting from 0\) has cosine", message)
    index = re.search(r"at index \[(\d+), \d+\]", message)
    assert named and index and named.group(1) == index.group(1)


@pytest.mark.parametrize("answer", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_check_embed_reports_any_wrong_type_or_shape_instead_of_crashing(answer):
    with pytest.raises(ExerciseFailed) as failure:
        ch15.check_embed(answer)
    assert failure.value.message and "Traceback" not in failure.value.message


def test_check_embed_leaves_the_global_random_state_alone():
    """Loading the model draws initial weights before the real ones are copied in: not from the reader's RNG."""
    ch15._minilm.cache_clear()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert ch15.check_embed(_solution()).passed
    assert torch.equal(torch.rand(3), expected)


def test_the_checkers_weights_are_the_ones_the_chapter_compares_with():
    """Exercise 1's hidden check compares the measured weights with these, written out (a worked
    solution reads no checker's constant: lecturer review s16, M2)."""
    assert ch15.WEIGHTS == {
        "tired": (0.677, 0.050),
        "wide": (0.281, 0.121),
        "scared": (0.608, 0.060),
        "narrow": (0.350, 0.221),
    }
