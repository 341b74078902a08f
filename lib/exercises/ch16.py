"""Checkers for the exercises of the chapter *Beyond BERT*.

- :func:`check_discriminator_loss`: exercise 1 (implement): ELECTRA's discriminator loss from the
  corruption step's tensors (Clark et al. 2020, sec. 2), on hidden cases with padding and with samples
  that equal the original.
- :func:`check_albert_prediction`: exercise 2 (predict, then check): ALBERT-large's exact parameter count
  (a count that leaves out or widens one or two parts is told which), and whether ALBERT-xlarge has fewer
  parameters than BERT-base.

Exercise 3 (the discriminator's weight lambda) has no checker: the reader compares a measurement with the
worked solution and the model answer.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from lib.albert import AlbertConfig, count_parameters
from lib.bert import BertConfig
from lib.bert import count_parameters as bert_count_parameters

from . import (
    attempted,
    call,
    checker,
    expect_bool,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    not_attempted,
    passing_everywhere,
    variant,
)

__all__ = ["check_discriminator_loss", "check_albert_prediction"]

MASK = 4  # the [MASK] id of the hidden cases (ids 0-4 are special: [PAD] 0, [CLS] 2, [SEP] 3)
SEP = 3
LAMBDA = 50  # ELECTRA's weight of L_Disc in the total loss (a mistake is to apply it here)


# --- exercise 1: the discriminator's loss --------------------------------------------------------------


def discriminator_loss_reference(
    logits: Tensor, original: Tensor, masked: Tensor, corrupted: Tensor, attention_mask: Tensor
) -> Tensor:
    """The answer: BCE with logits of "replaced" (corrupted != original) over the real tokens only."""
    real = attention_mask.bool()
    labels = (corrupted != original).float()
    return F.binary_cross_entropy_with_logits(logits[real], labels[real])


def _case(seed: int, B: int, T: int, pad: int, same_sample: bool, vocab: int = 30):
    """(logits, original, masked, corrupted, attention_mask) of one hidden case: [CLS] ... [SEP]
    sentences, some chosen positions, some of whose samples equal the original; padding (id 0) with
    logits that must not count."""
    g = torch.Generator().manual_seed(seed)
    original = torch.randint(5, vocab, (B, T), generator=g)
    original[:, 0] = 2  # [CLS]
    attention_mask = torch.ones(B, T, dtype=torch.long)
    if pad:
        original[0, T - pad :] = 0
        attention_mask[0, T - pad :] = 0
    original[torch.arange(B), attention_mask.sum(dim=1) - 1] = SEP  # the last real token
    chosen = (torch.rand(B, T, generator=g) < 0.4) & (original > 4)
    masked = original.masked_fill(chosen, MASK)
    samples = torch.randint(5, vocab, (B, T), generator=g)
    if same_sample:  # the generator guessed right
        keep = torch.rand(B, T, generator=g) < 0.5
        samples = torch.where(keep, original, samples)
    corrupted = torch.where(chosen, samples, original)
    logits = 2.0 * torch.randn(B, T, generator=g)
    logits[attention_mask == 0] = 6.0  # confident nonsense on the padding
    return logits, original, masked, corrupted, attention_mask


# The seed of the implement exercise's cases (case k draws from seed + k): a practice value here; a
# course's grader sets its own (grading/ch16.py of the repository, which the package does not ship:
# lib/exercises/__init__.py).
SEEDS = {"discriminator_loss": 0}


def _cases():
    seed = SEEDS["discriminator_loss"]
    return [
        (
            "A (2 sentences, padding, some samples equal to the original)",
            _case(seed, 2, 9, 3, True),
        ),
        ("B (3 sentences, no padding)", _case(seed + 1, 3, 7, 0, False)),
        (
            "C (4 sentences, padding, some samples equal to the original)",
            _case(seed + 2, 4, 12, 5, True),
        ),
    ]


# Long by design: one branch per usual mistake, each computed the way a reader would write it.
def _mistakes(logits, original, masked, corrupted, attention_mask) -> list[tuple[Tensor, str]]:
    real = attention_mask.bool()
    replaced = (corrupted != original).float()
    replaced_bool = corrupted != original
    chosen = (masked != original).float()
    bce = F.binary_cross_entropy_with_logits
    # the real tokens without the first and the last of each sentence ([CLS] and [SEP])
    ends_dropped = real.clone()
    ends_dropped[:, 0] = False
    ends_dropped[torch.arange(len(real)), attention_mask.sum(dim=1) - 1] = False
    return [
        (
            bce(logits[real], chosen[real]),
            "you labelled every chosen (masked) position as replaced. A sampled token equal to the original is labelled original: which of your inputs tells you what the discriminator actually read at each position?",
        ),
        (
            bce(logits, replaced),
            "you averaged over every position, padding included. Padding must not be counted: keep the positions where attention_mask is 1.",
        ),
        (
            -bce(logits[real], replaced[real]),
            "your loss is the negative of the right one: you left out the minus sign. L_Disc is minus the mean log-likelihood of the labels, so it is positive; log D and log(1 - D) are negative.",
        ),
        (
            bce(logits[real], 1 - replaced[real]),
            "your labels are the wrong way round: 1 means replaced (the discriminator's logit > 0 says 'replaced').",
        ),
        (
            LAMBDA * bce(logits[real], replaced[real]),
            f"you multiplied the loss by lambda = {LAMBDA}. The weight belongs to ELECTRA's total loss, L_MLM + lambda L_Disc, which lib.electra.Electra forms from the two; discriminator_loss returns L_Disc itself, unweighted.",
        ),
        (
            bce(logits[real], replaced[real], reduction="sum"),
            "you summed over the tokens; the loss is the mean over the real tokens.",
        ),
        (
            bce(torch.sigmoid(logits[real]), replaced[real]),
            "you applied the sigmoid twice: binary_cross_entropy_with_logits applies it itself, so it takes the logits themselves (and binary_cross_entropy takes the probabilities, one sigmoid of the logits).",
        ),
        (
            (bce(logits, replaced, reduction="none") * attention_mask).mean(),
            "you zeroed the padding's losses but still divided by every position, padding included, so the loss comes out too small. Divide by the number of real tokens, attention_mask.sum(), or take the mean of the real positions only.",
        ),
        (
            (
                (bce(logits, replaced, reduction="none") * attention_mask).sum(dim=1)
                / attention_mask.sum(dim=1)
            ).mean(),
            "you averaged each sentence over its tokens, then averaged the sentences, so a token of a short sentence weighs more. The loss is the mean over all the real tokens of the batch at once.",
        ),
        (
            bce(logits[attention_mask.long()], replaced[attention_mask.long()]),
            "you indexed with attention_mask itself, a tensor of 0s and 1s of dtype torch.long: PyTorch reads it as row numbers (rows 0 and 1, again and again), not as a mask. Index with a boolean tensor: attention_mask.bool().",
        ),
        (
            bce(2 * logits[real], replaced[real]),
            "your loss is that of sigmoid(2 x logit): two-class logits (-l, l) for a softmax double the logit. With cross_entropy, the two classes' logits are (0, l); or use binary_cross_entropy_with_logits on l itself.",
        ),
        (
            (replaced * bce(logits, replaced, reduction="none"))[real].mean(),
            "you counted the loss at the replaced tokens only. The discriminator learns from every real token, the originals too: that is ELECTRA's point.",
        ),
        (
            bce(logits[real & (chosen > 0)], replaced[real & (chosen > 0)]),
            "you took the loss at the masked positions only, as a masked LM does. The discriminator answers for every real token, the ones the generator never touched too: that is ELECTRA's point.",
        ),
        (
            bce(logits[ends_dropped], replaced[ends_dropped]),
            "you left out [CLS] and [SEP], the first and the last real token of each sentence. The mean runs over every real token, special tokens included: the discriminator answers 'original' for them too.",
        ),
        (
            bce(replaced[real], logits[real]),
            "The loss takes the model's output first and the labels second (input, then target): you passed the labels first and the logits second, so the loss took each label for a logit and each logit for a label.",
        ),
        (
            F.binary_cross_entropy(replaced[real], torch.sigmoid(logits[real])),
            "The loss takes the model's output first and the labels second (input, then target): you passed the labels first and the probabilities second, so the loss took each label for a probability (log 0 is clamped to -100) and each probability for a label.",
        ),
        (
            bce(logits[real & replaced_bool], replaced[real & replaced_bool]),
            "you took the loss at the replaced tokens only, so every label you kept is 1. The discriminator learns from every real token, the originals too: that is ELECTRA's point.",
        ),
        (
            F.cross_entropy(logits[real], replaced[real]),
            f"you used cross_entropy on the real tokens' logits, a 1-D tensor: it took them as the classes of one example, a softmax across the tokens, so the tokens compete for one probability. {_SOFTMAX}",
        ),
        (
            F.cross_entropy(logits, replaced),
            f"you used cross_entropy on the logits [B, T]: it took each sentence's positions as classes, a softmax across the tokens, padding included. {_SOFTMAX}",
        ),
        *[
            (
                F.binary_cross_entropy(probs.clamp(1e-12, 1 - 1e-12), replaced[real]),
                "you made the probabilities with a softmax, which makes the tokens compete (their probabilities sum to 1, across the tokens): the probability that a token was replaced is the sigmoid of its own logit.",
            )
            for probs in (
                torch.softmax(logits[real], dim=0),
                torch.softmax(logits, dim=-1)[real],
                torch.softmax(logits.masked_fill(~real, -torch.inf), dim=-1)[real],
            )
        ],
        *[
            (
                F.binary_cross_entropy(logits[real].clamp(eps, 1 - eps), replaced[real]),
                "you gave binary_cross_entropy the logits themselves, clamped into [0, 1]. It takes probabilities; the discriminator gives logits (any real number): use binary_cross_entropy_with_logits, which applies the sigmoid itself.",
            )
            for eps in (1e-12, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
        ],
    ]


def _mistakes_passing_discriminator() -> list[str]:
    """The known mistakes (``_mistakes``) whose losses are right on every case."""
    cases = []
    for _, args in _cases():
        expected = discriminator_loss_reference(*args).double()
        cases.append(
            {message: wrong.double() for wrong, message in _mistakes(*args)} | {"": expected}
        )

    def right(message: str) -> bool:
        return all(abs(c[message] - c[""]) <= 1e-5 * max(1.0, abs(c[""].item())) for c in cases)

    return passing_everywhere([m for m in cases[0] if m], right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"discriminator_loss": _mistakes_passing_discriminator}


_LABELS_HINT = "The labels of binary_cross_entropy_with_logits are float numbers, 0.0 or 1.0: convert the comparison with .float() (not .long() or .int())."
_SOFTMAX = "cross_entropy is the loss of a softmax over classes, for a model that gives one logit per class; the discriminator gives one logit per token, for a yes-or-no question: its probability of replaced is the sigmoid of that logit, and its loss the binary cross-entropy."


@checker("discriminator loss")
def check_discriminator_loss(discriminator_loss: Any) -> str:
    """Check ``discriminator_loss(logits, original, masked, corrupted, attention_mask) -> scalar tensor``,
    ELECTRA's discriminator loss from one corruption step."""
    attempted(discriminator_loss, "discriminator_loss")
    cases = _cases()
    for name, args in cases:
        result = call(
            discriminator_loss,
            *args,
            name="discriminator_loss",
            case=name,
            # advice for the errors the usual mistakes raise, by what the feedback says: the
            # first key found in it wins, so a specific key comes before a general one it contains
            hints={
                # binary_cross_entropy_with_logits(labels, logits), labels bool or long: no sigmoid for that dtype
                "not implemented for '": "The loss takes the model's output first and the labels second (input, then target): the labels went first, where the logits go, and the loss could not apply its sigmoid to them.",
                # binary_cross_entropy(labels, logits): the logits (any real number) in the labels' place
                "target should be between 0 and 1": "The loss takes the model's output first and the labels second (input, then target): the logits went second, where the labels (0 or 1) go. And binary_cross_entropy takes probabilities, not logits: use binary_cross_entropy_with_logits, which applies the sigmoid itself.",
                "between 0 and 1": "binary_cross_entropy takes probabilities, and the discriminator gives logits (any real number): use binary_cross_entropy_with_logits, which applies the sigmoid itself (more stably).",
                "bool tensors": _LABELS_HINT,
                "Bool": _LABELS_HINT,
                "can't be cast to the desired output type": _LABELS_HINT,
                # cross_entropy with integer labels: on [N] logits (one example, N classes), or on [N, 1]
                "target with class probabilities": _SOFTMAX,
                "IndexError: Target ": _SOFTMAX,
                "must match the size of tensor": "One tensor was indexed with the boolean mask of the real tokens, which makes it flat ([N], one entry per real token), and the other was not ([B, T]): index the logits and the labels with the same mask.",
            },
        )
        if isinstance(result, Tensor) and result.numel() != 1:
            fail(
                f"on the case {name}, `discriminator_loss` returned shape {list(result.shape)}; return one number, the mean over the real tokens (a tensor of shape [])."
            )
        value = expect_tensor(
            result.reshape(()) if isinstance(result, Tensor) else result,
            (),
            name="discriminator_loss",
            case=name,
        )
        expected = discriminator_loss_reference(*args).double()
        if abs(value - expected) <= 1e-5 * max(1.0, abs(expected.item())):
            continue
        for wrong, message in _mistakes(*args):
            if abs(value - wrong.double()) <= 1e-5 * max(1.0, abs(wrong.item())):
                fail(
                    f"on the case {name} your loss is {fmt(value.item())}, expected {fmt(expected.item())}: {message}"
                )
        fail(
            f"on the case {name} your loss is {fmt(value.item())}, expected {fmt(expected.item())}, and it matches none of the mistakes this checker knows. Go back to the definition of L_Disc in the section on ELECTRA: which tokens the mean runs over, what each token's label is, and what the loss function expects as its input."
        )
    return f"`discriminator_loss` agrees with ELECTRA's loss on all {len(cases)} hidden cases, with padding and with samples that happened to equal the original."


# --- exercise 2: ALBERT-large's size -------------------------------------------------------------------

# The pieces of ALBERT-large (vocabulary 30,000, E = 128, H = 1024, feed-forward 4,096, 24 layers shared).
EMBEDDINGS = 30000 * 128 + 512 * 128 + 2 * 128 + 2 * 128  # words, positions, segments, LayerNorm
PROJECTION = 128 * 1024 + 1024  # E -> H
LAYER = 12_596_224  # one BERT-large layer, given in the exercise
POOLER = 1024 * 1024 + 1024

# Exercise 2's numbers: ALBERT-large's (the book's), or, in a course with per-student variants
# (tools/make_course.py --variants; course-kit review s17, S4), each student's own ALBERT of the same
# kind (24 shared layers, feed-forward 4H, 16 heads, 512 positions), drawn from these realistic sizes.
VARIANT_BOOK = {"vocab": 30000, "E": 128, "H": 1024}
VARIANT_CHOICES = {
    "vocab": [20000, 25000, 30000, 32000, 40000, 50000],
    "E": [64, 96, 128, 192, 256],
    "H": [768, 1024, 1536, 2048],
}
VARIANTS = {2: "albert_variant"}  # exercise -> the function that gives a student their numbers


def albert_variant() -> dict[str, int]:
    """Exercise 2's numbers for the current reader: the vocabulary, E, H, and (given, as the
    statement gives BERT-large's) the parameters of one BERT layer of width H with a feed-forward of
    4H; ALBERT-large's for a reader of the book, a student's own in a course with variants."""
    n = variant("ch16 albert size", VARIANT_CHOICES, VARIANT_BOOK)
    H = n["H"]
    return {**n, "feed_forward": 4 * H, "layer_parameters": 12 * H * H + 13 * H}


def _config(n: dict[str, int]) -> AlbertConfig:
    return AlbertConfig.large(
        vocab_size=n["vocab"],
        embedding_size=n["E"],
        hidden_size=n["H"],
        intermediate_size=4 * n["H"],
    )


def albert_counts() -> dict[str, int]:
    """The numbers of exercise 2, from the library's configs (ALBERT-large's, or the variant's)."""
    return {
        "albert_large": count_parameters(_config(albert_variant())),
        "albert_xlarge": count_parameters(AlbertConfig.xlarge()),
        "bert_base": bert_count_parameters(BertConfig.base()),
    }


# What a count that leaves out or widens one part of ALBERT-large adds to the right answer, the parts
# of the model it touches, and what the checker says about it. Two mistakes that touch the same part
# (the pooler and the pooler's bias, say) cannot both be made: a combination of them is no diagnosis.
# Parts of the same size (the segment embeddings and the LayerNorm, the projection's bias and the
# pooler's) give the same count: the message then names both. A bias of width H too many touches every
# part, so it is only ever diagnosed alone (review s35: 17,684,992 was read as two mistakes not made).
def _size_mistakes(V: int, E: int, H: int) -> list[tuple[int, set, str]]:
    """The mistakes for a vocabulary V, embeddings of width E and layers of width H."""
    projection, pooler, layer = E * H + H, H * H + H, 12 * H * H + 13 * H
    mistakes = [
        (
            23 * layer,
            {"layer"},
            "you counted 24 layers, but ALBERT's 24 layers are one layer applied 24 times: count it once.",
        ),
        (
            V * (H - E) - projection,
            {"token", "projection", "projection bias"},
            f"the token embeddings are factorized: a {V:,} x {E} table and a {E} x {H} projection, not a {V:,} x {H} table.",
        ),
        (
            (V + 512 + 2 + 2) * (H - E) - projection,
            {"token", "projection", "projection bias", "position", "segment", "layernorm"},
            f"you counted BERT's embeddings, all {H:,} wide, with no projection. In ALBERT the token embeddings are factorized: a {V:,} x {E} table, the position and segment embeddings and their LayerNorm at E = {E} too, and then a {E} x {H} projection to the layers' width.",
        ),
        (
            -projection,
            {"projection", "projection bias"},
            f"you left out the projection from E = {E} to H = {H} (its {E} x {H} weights and its bias).",
        ),
        (
            -H,
            {"projection bias"},
            f"you left out the bias of the projection from E = {E} to H = {H} ({H:,} numbers).",
        ),
        (
            -pooler,
            {"pooler", "pooler bias"},
            f"you left out the pooler (its {H} x {H} weights and its bias), which ALBERT keeps from BERT.",
        ),
        (-H, {"pooler bias"}, f"you left out the pooler's bias ({H:,} numbers)."),
        (
            -(512 + 2) * E,
            {"position", "segment"},
            f"you left out the position and segment embeddings (512 and 2 rows of width E = {E}).",
        ),
        (
            -512 * E,
            {"position"},
            f"you left out the position embeddings (512 rows of width E = {E}).",
        ),
        (-2 * E, {"segment"}, f"you left out the segment embeddings (2 rows of width E = {E})."),
        (  # one slip that some combinations of two or three other mistakes add up to as well
            H,
            {"token", "projection", "projection bias", "position", "segment", "layernorm"}
            | {"layer", "pooler", "pooler bias"},
            f"your count is {H:,} too large, the size of one bias of width H = {H:,}: did you count a bias twice, or one that the model does not have?",
        ),
        (
            -2 * E,
            {"layernorm"},
            f"you left out the embeddings' LayerNorm (a gain and a bias, each of width E = {E}).",
        ),
        (
            512 * (H - E),
            {"position"},
            f"you made the position embeddings {H:,} wide. In ALBERT they are E = {E} wide, like the token embeddings: the three embeddings are added at width E, and the projection to H comes after.",
        ),
        (
            2 * (H - E),
            {"segment"},
            f"you made the segment embeddings {H:,} wide. In ALBERT they are E = {E} wide, like the token embeddings.",
        ),
        (
            2 * (H - E),
            {"layernorm"},
            f"you made the embeddings' LayerNorm {H:,} wide. It normalizes the sum of the embeddings before the projection, at width E = {E}.",
        ),
    ]
    if V == 30000:  # the vocabulary of BERT's 30,522 tokens in place of ALBERT's
        mistakes.insert(
            3,
            (
                522 * E,
                {"token"},
                "you used BERT's vocabulary of 30,522 tokens; ALBERT's vocabulary has 30,000 (the exercise gives it).",
            ),
        )
    return mistakes


E, H = 128, 1024
MISTAKES = _size_mistakes(30000, E, H)  # the book's


def _compatible(combination: tuple) -> bool:
    """Whether the mistakes of ``combination`` touch different parts, so that one count can make them all."""
    parts = [part for _, touched, _ in combination for part in touched]
    return len(parts) == len(set(parts))


def _diagnosis(difference: int, mistakes: list | None = None) -> str | None:
    """What a count that is off by ``difference`` left out or got wrong: one mistake, else two, else
    three (the fewest that explain it, each part at most once; alternatives joined by "Or")."""
    mistakes = MISTAKES if mistakes is None else mistakes
    for k in (1, 2, 3):
        found = [
            " And ".join(message for _, _, message in combination)
            for combination in itertools.combinations(mistakes, k)
            if _compatible(combination) and sum(delta for delta, _, _ in combination) == difference
        ]
        if found:
            return " Or, with the same count: ".join(found) if k > 1 else " Or ".join(found)
    return None


@checker("ALBERT's size")
def check_albert_prediction(albert_large_parameters: Any, xlarge_fewer_than_bert_base: Any) -> str:
    """Check the predictions of exercise 2: ALBERT-large's exact parameter count (in a course with
    per-student variants, that of the student's own ALBERT, :func:`albert_variant`) and whether
    ALBERT-xlarge has fewer parameters than BERT-base (a bool)."""
    if albert_large_parameters is None and xlarge_fewer_than_bert_base is None:
        not_attempted(
            "write your two predictions (albert_large_parameters and xlarge_fewer_than_bert_base) in the cell above, then run this cell again."
        )
    counts, numbers = albert_counts(), albert_variant()
    right = counts["albert_large"]
    book = {k: numbers[k] for k in VARIANT_BOOK} == VARIANT_BOOK
    V, E_, H_ = numbers["vocab"], numbers["E"], numbers["H"]
    layer, mistakes = numbers["layer_parameters"], _size_mistakes(V, E_, H_)
    if albert_large_parameters is not None:
        n = expect_number(albert_large_parameters, "albert_large_parameters")
        if n != right:
            if n != int(n):
                fail(
                    f"albert_large_parameters = {n:,}: a parameter count is a whole number; count each part exactly."
                )
            if not book and n == count_parameters(AlbertConfig.large()):  # the book's answer
                fail(
                    f"albert_large_parameters = {n:,.0f} is ALBERT-large's count, the book's numbers; yours are a vocabulary of {V:,}, E = {E_} and H = {H_:,}, printed under the exercise's statement."
                )
            found = _diagnosis(int(n) - right, mistakes)
            if found:
                fail(f"albert_large_parameters = {n:,.0f}: {found}")
            if abs(n - 23 * layer - right) <= 0.01 * right:
                fail(
                    f"albert_large_parameters = {n:,.0f}: {mistakes[0][2]} (Then check the rest too.)"
                )
            if abs(n - right) <= 0.02 * right and n % 10_000 == 0:
                fail(
                    f"albert_large_parameters = {n:,.0f} looks rounded (the paper's 18M is); the exercise asks for the exact count: embeddings, projection, one layer, pooler, each to the last parameter."
                )
            off = abs(n - right) / right
            by = (
                f"by {off:.1%}"
                if off >= 0.001
                else "by less than 0.1%: the large parts are right; look for a small one (a bias, a LayerNorm, a few rows) counted too many or too few times, or too wide"
            )
            fail(
                f"albert_large_parameters = {n:,.0f} is {'too large' if n > right else 'too small'} {by}. Go through the parts of the model one by one: which of them does ALBERT keep at width E, which at width H, and which does it hold only once?"
            )
    if xlarge_fewer_than_bert_base is not None:
        if not expect_bool(xlarge_fewer_than_bert_base, "xlarge_fewer_than_bert_base"):
            fail(
                "xlarge_fewer_than_bert_base = False is wrong: ALBERT-xlarge has fewer parameters than BERT-base, although its layers are wider (2,048 against 768) and it has twice as many. Count the layers' weights that each model stores, not the layers a token goes through."
            )
    if albert_large_parameters is None:
        not_attempted("your second prediction is right; now give albert_large_parameters.")
    if xlarge_fewer_than_bert_base is None:
        not_attempted("your parameter count is right; now give xlarge_fewer_than_bert_base.")
    embeddings, projection = (V + 512 + 2 + 2) * E_, E_ * H_ + H_
    which = "ALBERT-large has" if book else "Your ALBERT has"
    return f"{which} {right:,} parameters: {embeddings:,} in the embeddings, {projection:,} in the projection, {layer:,} in its one layer and {H_ * H_ + H_:,} in the pooler; ALBERT-xlarge ({counts['albert_xlarge']:,}) is smaller than BERT-base with BERT's vocabulary of 30,522 tokens ({counts['bert_base']:,})."
