"""Checkers for the exercises of the chapter *BERT*.

- :func:`check_mask_for_mlm`: exercise 1 (implement): BERT's masked-LM corruption (Devlin et al. 2019,
  sec. 3.1, Task #1): choose each non-special token with probability ``prob``; of the chosen, 80% become
  [MASK], 10% a random token, 10% stay; the labels are the original ids at the chosen positions and -100
  elsewhere. Checked by its statistics on hidden batches, as ``lib.pretraining_data.mask_tokens`` computes it,
  each token chosen and given its fate independently (not a count per row or batch, not a fate per row).
- :func:`check_medium_size`: exercise 2 (predict, then check): the parameters of BERT-Medium (8 layers of
  width 512, 8 heads, feed-forward 2048; Turc et al. 2019) and the share of them in the embeddings, to
  three decimals (at two, the word table alone rounds to the same share).

Exercise 3 (freeze the body) is answered in prose; the chapter's solution computes its numbers.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
from torch import Tensor

import lib.pretraining_data
from lib.bert import IGNORE_INDEX, BertConfig, count_parameters
from lib.pretraining_data import mask_tokens

from . import (
    attempted,
    call,
    checker,
    expect_number,
    fail,
    fail_as_percentage,
    fail_if_in_units,
    fmt,
    names_used,
    near,
    not_attempted,
    refusing,
    replaced,
)

__all__ = ["check_mask_for_mlm", "check_medium_size"]


# --- exercise 1: the 80/10/10 rule --------------------------------------------------------------------

# tolerance of every measured rate: 5 binomial standard errors (a right answer fails with p < 1e-6)
Z = 5.0
# the chapter's rate: a function that writes it instead of using prob chooses it at every prob
HARD_CODED = 0.15
# labels at the replaced tokens only leave about 0.1 / 0.9 x 1 / (ordinary ids) of the labels at an
# unchanged token (a random id equal to the original); a right answer, 0.1 of them. Below this share
# of the labels, the unchanged tokens were left without a label.
UNLABELLED_UNCHANGED = 0.05


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch14.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"mask_for_mlm": 14}


def _mlm_cases(specs: list | None = None) -> list[tuple[str, Tensor, int, int, list[int], float]]:
    """(description, input_ids [B, T], vocab_size, mask_token_id, special_ids, prob) of the hidden cases.

    Rows look like BERT's input: [CLS] at 0, tokens, [SEP], then padding. The vocabularies are small, with
    several special ids, so that a random replacement drawn from the whole vocabulary lands on a special id
    often enough to be seen (5 of 30 ids), and the second case moves the special ids and the probability.
    specs: other cases, in the same form (the larger case of :func:`_overlapping_ranges`)."""
    g = torch.Generator().manual_seed(SEEDS["mask_for_mlm"])
    cases = []
    for description, B, T, V, pad, cls, sep, mask, extra, prob in specs or [
        (
            "1000 rows of up to 40 tokens, vocabulary of 30 ids, prob 0.15",
            1000,
            40,
            30,
            0,
            2,
            3,
            4,
            [1],
            0.15,
        ),
        (
            "600 rows of up to 30 tokens, vocabulary of 50 ids, [MASK] = 7, prob 0.4",
            600,
            30,
            50,
            49,
            5,
            6,
            7,
            [0],
            0.4,
        ),
    ]:
        special = sorted({pad, cls, sep, mask, *extra})
        ordinary = torch.tensor([i for i in range(V) if i not in special])
        ids = ordinary[torch.randint(len(ordinary), (B, T), generator=g)]  # [B, T]
        lengths = torch.randint(5, T + 1, (B,), generator=g)  # [B], [CLS] ... [SEP] included
        position = torch.arange(T)[None, :]  # [1, T]
        ids = torch.where(position >= lengths[:, None], pad, ids)
        ids[:, 0] = cls
        ids[torch.arange(B), lengths - 1] = sep
        cases.append((description, ids, V, mask, special, prob))
    return cases


def _rate_problem(what: str, got: int, n: int, expected: float) -> str | None:
    """None if got / n is within Z standard errors of ``expected``; else a sentence saying what was measured."""
    sd = math.sqrt(max(expected * (1 - expected), 1e-12) / n)
    if abs(got / n - expected) <= Z * sd + 1e-12:
        return None
    return f"{what} is {got / n:.3f} ({got:,} of {n:,}), expected {expected:.3f}"


def _count_spread(labelled: Tensor, ordinary: Tensor, prob: float) -> float | None:
    """How much the number of chosen tokens varies between rows of the same length, as a share of how
    much independent choices make it vary (about 1 for a right answer; None without rows to compare).

    Rows are grouped by their number n of non-special tokens; under independent choices the counts within a
    group have variance n prob (1 - prob). A fixed count per row (round(prob n)) gives a variance near 0:
    flagged under FIXED_COUNT_SPREAD (on the hidden cases, hundreds of rows: the binomial ratio stays within
    a few percent of 1)."""
    counts = labelled.sum(1).double()  # [B]
    sizes = ordinary.sum(1)  # [B]
    spread, expected = 0.0, 0.0
    for n in sizes.unique().tolist():
        group = counts[sizes == n]
        if len(group) < 2:
            continue
        spread += float(((group - group.mean()) ** 2).sum())
        expected += (len(group) - 1) * n * prob * (1 - prob)
    return spread / expected if expected > 0 else None


FIXED_COUNT_SPREAD = 0.25


def _fixed_batch_count(chosen: int, n_ordinary: int, prob: float) -> bool:
    """True if ``chosen`` is prob x the batch's non-special tokens, rounded either way: what choosing a
    fixed count over the whole batch gives. Independent choices land there about 1 time in 40 on each
    hidden case (a binomial standard deviation of about 50 tokens), so a right answer is flagged only
    when all four calls of the two cases land there (about 1 in 3 million)."""
    return abs(chosen - prob * n_ordinary) <= 1


def _as_pair(result: Any, shape: tuple[int, ...], case: str) -> tuple[Tensor, Tensor]:
    if result is None:
        fail(
            f"on the case {case}, `mask_for_mlm` returned None. Did you forget the `return` statement?"
        )
    if isinstance(result, Tensor) or not isinstance(result, (tuple, list)) or len(result) != 2:
        fail(
            f"on the case {case}, `mask_for_mlm` returned {fmt(result)}; expected a pair (inputs, labels) of two tensors."
        )
    for name, x in zip(("inputs", "labels"), result):
        if not isinstance(x, Tensor):
            fail(
                f"on the case {case}, your {name} are a {type(x).__name__}; expected a torch.Tensor of shape {list(shape)}."
            )
        if tuple(x.shape) != shape:
            fail(
                f"on the case {case}, your {name} have shape {list(x.shape)}; expected {list(shape)}, that of input_ids."
            )
        # torch.long only: cross_entropy refuses int32 labels ("expected target dtype to be Long")
        if x.dtype != torch.long:
            fail(
                f"on the case {case}, your {name} have dtype {x.dtype}; token ids and labels are integers of dtype torch.long, since cross_entropy takes class indices as torch.long."
            )
    return result[0].long(), result[1].long()


def _check_labels(case: str, ids: Tensor, inputs: Tensor, labels: Tensor, special: list) -> None:
    """The labels: the original id at a chosen token, -100 elsewhere, never at a special token."""
    is_special = torch.isin(ids, torch.tensor(special))
    labelled = labels != IGNORE_INDEX
    if bool((inputs == IGNORE_INDEX).any()) and not bool((labels == IGNORE_INDEX).any()):
        fail(
            f"on the case {case}, your inputs hold -100 and your labels do not: the inputs are token ids, and -100 marks a label to skip. Return the pair in the order (inputs, labels)."
        )
    if bool(labelled.all()):
        others = labels[labels != ids].unique()
        if others.numel() == 1 and int((labels != ids).sum()) > ids.numel() // 4:
            other = int(others)
            effect = (
                f"a label of {other} is not a valid class index, so the loss fails with an error"
                if other < 0
                else f"with {other} the loss would train the model to predict token id {other} at every unchosen position"
            )
            fail(
                f"on the case {case}, the tokens that were not chosen have the label {other}; it must be exactly -100 (IGNORE_INDEX). cross_entropy skips -100 only (its ignore_index): {effect}."
            )
        fail(
            f"on the case {case}, every position has a label, so the loss would be taken over all tokens, most of which the model can simply read from its input. Give the label -100 (IGNORE_INDEX, which cross_entropy skips) to every token that was not chosen."
        )
    if not bool((labels[labelled] == ids[labelled]).all()):
        wrong = labelled & (labels != ids)
        if bool((labels[wrong] == inputs[wrong]).all()):
            fail(
                f"on the case {case}, your labels hold the corrupted tokens ([MASK] or the random id): the label is the ORIGINAL token, the one the model must recover. Take it from input_ids, not from inputs."
            )
        values = sorted(set(labels[~(labels == ids)].tolist()))[:5]
        fail(
            f"on the case {case}, your labels hold {values} where no token was chosen, or ids that are not the original token. A label is the original id where a token was chosen and exactly -100 elsewhere."
        )
    if bool((labelled & is_special).any()):
        kinds = sorted(set(ids[labelled & is_special].tolist()))
        fail(
            f"on the case {case}, you chose special tokens (ids {kinds}: [CLS], [SEP], padding...). They are never chosen: compute the choice only where input_ids is not in special_ids."
        )


def _check_chosen_share(
    case: str, ids: Tensor, inputs: Tensor, labels: Tensor, special: list, mask_id: int, prob: float
) -> None:
    """Which tokens were chosen: each non-special token independently, with probability prob, and
    only the chosen ones changed."""
    ordinary = ~torch.isin(ids, torch.tensor(special))
    labelled = labels != IGNORE_INDEX
    n_ordinary = int(ordinary.sum())
    chosen = int(labelled.sum())
    share_problem = _rate_problem(
        "the share of non-special tokens you chose", chosen, n_ordinary, prob
    )
    if (
        share_problem
        and chosen
        and bool((inputs[labelled] == mask_id).all())
        and not _rate_problem("", chosen, n_ordinary, 0.8 * prob)
    ):
        fail(
            f"on the case {case}, only the [MASK] positions carry a label ({chosen / n_ordinary:.3f} of the tokens, about 0.8 x prob = {0.8 * prob:.3f}). The tokens replaced by a random id and those left unchanged were chosen too, and the model must predict them as well: label every chosen token."
        )
    # labels only where the action was [MASK] or a random id: a labelled token is then unchanged
    # only when its random id happened to be the original (1 in the number of ordinary ids)
    unchanged_labelled = int((labelled & (inputs == ids)).sum())
    if (
        share_problem
        and chosen
        and unchanged_labelled < UNLABELLED_UNCHANGED * chosen
        and not _rate_problem("", chosen, n_ordinary, 0.9 * prob)
    ):
        fail(
            f"on the case {case}, your choice of tokens may be right, but only the tokens you replaced ([MASK] or a random id) carry a label ({chosen / n_ordinary:.3f} of the tokens, about 0.9 x prob = {0.9 * prob:.3f}; {unchanged_labelled:,} of your {chosen:,} labels are at an unchanged token). The chosen tokens left unchanged must keep their label too: the model is asked to predict the word at a position that looks like any other, which is what the 10% unchanged are for."
        )
    # labels at tokens that were not chosen: the corruption shows the choice ([MASK] at about
    # 0.8 x prob of the tokens), while the labels cover far more (the reader's report ch14 s17, T1)
    n_mask = int((ordinary & (inputs == mask_id)).sum())
    if (
        share_problem
        and chosen > prob * n_ordinary
        and n_mask
        and not _rate_problem("", n_mask, n_ordinary, 0.8 * prob)
    ):
        fail(
            f"on the case {case}, your labels cover {chosen / n_ordinary:.3f} of the non-special tokens ({chosen:,} of {n_ordinary:,}), but only {n_mask / n_ordinary:.3f} of them became [MASK], about 0.8 x prob = {0.8 * prob:.3f}: your choice of tokens looks right, and your labels hold the original id at tokens you did not choose. A label is the original id at a chosen token and -100 everywhere else, at the ordinary tokens that were not chosen too."
        )
    changed = inputs != ids
    if bool((changed & ~labelled).any()):
        n = int((changed & ~labelled).sum())
        fail(
            f"on the case {case}, you changed {n} tokens that have no label (-100). Only the chosen tokens are corrupted, and each chosen token gets its label: draw the 80/10/10 action for the chosen tokens only."
        )
    if share_problem and abs(chosen - prob * ids.numel()) <= 1:
        fail(
            f"on the case {case}, {share_problem}. You chose {chosen:,} tokens, prob x {ids.numel():,}: prob of every position of the batch, [CLS], [SEP] and padding counted, then only non-special tokens taken. prob is the chance of each non-special token: choose each of them independently with probability prob = {prob}."
        )
    if share_problem:
        if prob != HARD_CODED and not _rate_problem("", chosen, n_ordinary, HARD_CODED):
            fail(
                f"on the case {case}, {share_problem}: the share is {HARD_CODED}, not prob = {prob}. Use the argument prob instead of writing {HARD_CODED} in the function."
            )
        fail(
            f"on the case {case}, {share_problem}. Choose each non-special token independently with probability prob = {prob}."
        )
    ratio = _count_spread(labelled, ordinary, prob)
    if ratio is not None and ratio < FIXED_COUNT_SPREAD:
        fail(
            f"on the case {case}, rows with the same number of non-special tokens have (almost) the same number of chosen tokens: their counts vary {ratio:.0%} as much as independent choices make them vary. That is what a fixed count per row (such as round(prob x n)) gives. BERT's own code does pick a count, but the exercise asks, as mask_tokens does, for an independent choice of each token, whose count varies from row to row (a binomial)."
        )


# One fate per row: pairs of chosen tokens in one row share their fate far more often than the
# squares of the fates' shares say (about 0.66 for 0.8 / 0.1 / 0.1; 1 when a row draws one fate).
# Flagged above this fraction of the way from the independent value to 1 (on the hidden cases,
# thousands of pairs: a right answer stays within a few hundredths of the independent value).
SAME_FATE_EXCESS = 0.5
SAME_FATE_MIN_PAIRS = 200


def _same_fate_in_rows(ids: Tensor, inputs: Tensor, labels: Tensor, mask_id: int):
    """(pairs of chosen tokens in the same row, the share of them with the same fate, the share that
    independent fates would give with the measured shares of [MASK], random id and unchanged)."""
    labelled = labels != IGNORE_INDEX
    fates = [inputs == mask_id, (inputs != ids) & (inputs != mask_id), inputs == ids]
    counts = torch.stack([(labelled & f).sum(1) for f in fates], 1).double()  # [B, 3]
    n = counts.sum(1)  # [B]
    pairs = float((n * (n - 1) / 2).sum())
    if pairs == 0:
        return 0, 0.0, 0.0
    same = float((counts * (counts - 1) / 2).sum()) / pairs
    independent = float(((counts.sum(0) / n.sum()) ** 2).sum())
    return int(pairs), same, independent


# One random number whose ranges overlap ([MASK] if r < 0.8, then a random id if r < 0.1) gives
# [MASK] / random / unchanged = 0.7 / 0.1 / 0.2; two independent draws give 0.72 / 0.1 / 0.18. On a
# hidden case the two are 2 to 3 standard errors apart, so a larger case tells them apart: on its
# ~102,000 chosen tokens the [MASK] shares are 14 standard errors apart, OVERLAP_MASK_SHARE between.
BIG_CASE = ("4000 rows of up to 100 tokens, vocabulary of 30 ids, prob 0.5",)
BIG_CASE += (4000, 100, 30, 0, 2, 3, 4, [1], 0.5)
OVERLAP_MASK_SHARE = 0.71


def _fates(ids: Tensor, inputs: Tensor, labels: Tensor, mask_id: int) -> tuple[int, int, int, int]:
    """(chosen, [MASK], replaced by another id, unchanged): counts over the labelled tokens."""
    labelled = labels != IGNORE_INDEX
    changed = inputs != ids
    at_mask = labelled & (inputs == mask_id)
    replaced = labelled & changed & (inputs != mask_id)
    return (
        int(labelled.sum()),
        int(at_mask.sum()),
        int(replaced.sum()),
        int((labelled & ~changed).sum()),
    )


def _overlapping_ranges(mask_for_mlm: Any) -> tuple[bool, str]:
    """Whether ``mask_for_mlm`` makes [MASK]s at 0.7 (overlapping ranges) rather than 0.72 (two
    independent draws), measured on the larger case; and the shares measured there."""
    (description, ids, V, mask_id, special, prob) = _mlm_cases([BIG_CASE])[0]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        result = call(
            mask_for_mlm, ids, V, mask_id, list(special), prob, name="mask_for_mlm",
            case=f"'{description}'",
        )  # fmt: skip
    inputs, labels = _as_pair(result, tuple(ids.shape), f"'{description}'")
    chosen, n_mask, n_replaced, n_same = _fates(ids, inputs, labels, mask_id)
    shares = f"{n_mask / chosen:.3f}, {n_replaced / chosen:.3f} and {n_same / chosen:.3f}"
    return n_mask / chosen < OVERLAP_MASK_SHARE, shares


def _check_80_10_10(
    case: str,
    ids: Tensor,
    inputs: Tensor,
    labels: Tensor,
    V: int,
    special: list,
    mask_id: int,
    mask_for_mlm: Any = None,
) -> None:
    """What became of the chosen tokens: 80% [MASK], 10% a random ordinary id, 10% unchanged.
    mask_for_mlm: run again on a larger case where two mistakes give nearly the same shares."""
    labelled = labels != IGNORE_INDEX
    replaced = labelled & (inputs != ids) & (inputs != mask_id)
    chosen, n_mask, n_replaced, n_same = _fates(ids, inputs, labels, mask_id)
    if n_mask == chosen:
        fail(
            f"on the case {case}, every chosen token became [MASK]. That is the mismatch BERT avoids: [MASK] never occurs when the model is fine-tuned, so of the chosen tokens only 80% become [MASK], 10% a random token and 10% stay as they are."
        )
    bad_random = sorted(set(inputs[replaced & torch.isin(inputs, torch.tensor(special))].tolist()))
    if bad_random:
        fail(
            f"on the case {case}, some random replacements are special ids ({bad_random}): the exercise asks for a random id that is not special. That is this book's choice, as in the chapter's mask_tokens (BERT's released code draws from the whole vocabulary): it keeps a [CLS] or [PAD] out of the middle of a sentence, where real text never has one. Which ids may be drawn?"
        )
    pairs, same, independent = _same_fate_in_rows(ids, inputs, labels, mask_id)
    if pairs >= SAME_FATE_MIN_PAIRS and same > independent + SAME_FATE_EXCESS * (1 - independent):
        fail(
            f"on the case {case}, within each row the selected tokens got the same fate: of the {pairs:,} pairs of chosen tokens that share a row, {same:.0%} have the same fate ([MASK], random id or unchanged), where fates drawn independently give about {independent:.0%} with your shares ({n_mask / chosen:.3f}, {n_replaced / chosen:.3f} and {n_same / chosen:.3f}). BERT draws the 80/10/10 fate for each chosen token independently: one random number per token, not one per row."
        )
    problem = _rate_problem("the share of chosen tokens that became [MASK]", n_mask, chosen, 0.8)
    if (
        problem
        and not (
            _rate_problem("", n_mask, chosen, 0.8 * 0.9) and _rate_problem("", n_mask, chosen, 0.7)
        )
        and not _rate_problem("", n_replaced, chosen, 0.1)
    ):
        # the reader's report ch14 s17, T2: overlapping ranges of one number are not two draws
        overlapping, shares = (
            _overlapping_ranges(mask_for_mlm) if mask_for_mlm is not None else (False, "")
        )
        on_big = f" (on a larger batch of {BIG_CASE[0]}: {shares})" if shares else ""
        if overlapping:
            fail(
                f"on the case {case}, {problem}, {n_replaced / chosen:.3f} became a random id and {n_same / chosen:.3f} stayed unchanged{on_big}: about 0.7, 0.1 and 0.2, what one random number per chosen token gives when the ranges of its fates overlap. The random id's range lies inside the [MASK] range, so the random ids are taken from the [MASK]s, and the range left to the unchanged tokens is 0.2 wide, twice their share. Give each fate its own range of the number, with no number in two of them: widths 0.8, 0.1 and 0.1."
            )
        fail(
            f"on the case {case}, {problem}, {n_replaced / chosen:.3f} became a random id and {n_same / chosen:.3f} stayed unchanged{on_big}: about 0.8 x 0.9 = 0.72, 0.1 and 0.18, what two independent draws give when the second (random id, probability 0.1) overwrites some of the [MASK]s of the first. One random number per chosen token should decide among the three fates, so that no draw overwrites another."
        )
    if problem:
        fail(
            f"on the case {case}, of your {chosen:,} chosen tokens {n_mask / chosen:.3f} became [MASK], {n_replaced / chosen:.3f} a random id and {n_same / chosen:.3f} stayed unchanged, where the rule gives about 0.8, 0.1 and 0.1 (the [MASK] share is more than {Z:g} standard errors from 0.8). Of the chosen tokens, 80% become [MASK]."
        )
    n_ordinary_ids = V - len(special)
    if n_replaced and n_replaced / chosen < 0.05 and n_same / chosen > 0.15:
        fail(
            f"on the case {case}, only {n_replaced / chosen:.3f} of the chosen tokens became a random id ({n_replaced:,} of {chosen:,}), and {n_same / chosen:.3f} stayed unchanged; expected about 0.1 each. The 10% and 10% are shares of ALL the chosen tokens: of the 20% that do not become [MASK], half get a random id. If you draw a second time among those 20%, the probability is 0.5, not 0.1."
        )
    problem = _rate_problem(
        "the share of chosen tokens left unchanged", n_same, chosen, 0.1 + 0.1 / n_ordinary_ids
    )
    if problem:
        hint = (
            " You replaced the other 20% by random tokens, leaving none unchanged."
            if n_same / chosen < 0.05
            else " One random number per chosen token can decide which of the three it gets."
        )
        fail(
            f"on the case {case}, {problem} (10%, plus the random draws that happen to return the original token, 1 in {n_ordinary_ids}).{hint}"
        )
    distinct = len(set(inputs[replaced].tolist()))
    if distinct < n_ordinary_ids // 2:
        fail(
            f"on the case {case}, your random replacements use only {'one id' if distinct == 1 else f'{distinct} different ids'} of the {n_ordinary_ids} ordinary ones: draw each replacement uniformly at random from the ordinary ids."
        )


_refuse_mask_tokens = refusing("mask_tokens", ", which the exercise asks you to write yourself")


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The library function the exercise asks to write is refused under any name (a wrapper too).
REFUSALS = {
    "check_mask_for_mlm": [
        ("lib.pretraining_data.mask_tokens", None, _refuse_mask_tokens),
    ],
}


WRITE_IT = "the exercise asks you to write the 80/10/10 rule yourself (choose the tokens, then one random number per chosen token), and to compare your result with `mask_tokens` afterwards, outside `mask_for_mlm`."


def _check_mlm_cases(mask_for_mlm: Any) -> list[tuple[str, Tensor, int, int, list[int], float]]:
    """Fails (``fail``) where ``mask_for_mlm`` breaks a rule on a hidden case; else the cases. The
    library's ``mask_tokens`` passes it (tests/test_exercises_ch14.py)."""
    cases = _mlm_cases()
    fixed_counts = []  # per case: the two calls' counts, if both are prob x the batch's tokens
    for description, ids, V, mask_id, special, prob in cases:
        case = f"'{description}'"
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            args = (mask_for_mlm, ids, V, mask_id, list(special), prob)
            result = call(*args, name="mask_for_mlm", case=case)
            # the same input_ids again, the random state moved on: other tokens must be chosen
            again = call(*args, name="mask_for_mlm", case=case)
        inputs, labels = _as_pair(result, tuple(ids.shape), case)
        _check_labels(case, ids, inputs, labels, special)
        _check_chosen_share(case, ids, inputs, labels, special, mask_id, prob)
        _check_80_10_10(case, ids, inputs, labels, V, special, mask_id, mask_for_mlm)
        again = _as_pair(again, tuple(ids.shape), case)
        _check_a_new_draw(case, (inputs, labels), again)
        n_ordinary = int((~torch.isin(ids, torch.tensor(special))).sum())
        counts = [int((x != IGNORE_INDEX).sum()) for x in (labels, again[1])]
        if all(_fixed_batch_count(c, n_ordinary, prob) for c in counts):
            fixed_counts.append(f"{counts[0]:,} and {counts[1]:,} of {n_ordinary:,} at prob {prob}")
    if len(fixed_counts) == len(cases):
        fail(
            f"on every hidden case, each call chose prob x the batch's non-special tokens, rounded ({'; '.join(fixed_counts)}): a fixed count for the whole batch, such as the first round(prob x N) positions of a shuffled list. The exercise asks for each non-special token to be chosen independently with probability prob, so that the count varies from call to call (a binomial, by about 50 tokens on these cases)."
        )
    return cases


def _check_a_new_draw(
    case: str, first: tuple[Tensor, Tensor], second: tuple[Tensor, Tensor]
) -> None:
    """Two calls on the same input_ids choose other tokens: a function that seeds a generator inside
    itself masks a sentence the same way at every epoch (the reader's report ch14 s17, M7)."""
    if torch.equal(first[0], second[0]) and torch.equal(first[1], second[1]):
        fail(
            f"on the case {case}, two calls of your `mask_for_mlm` on the same input_ids returned exactly the same inputs and labels. Is a seed set inside it (torch.manual_seed, or a generator seeded there)? Then a sentence is masked the same way every time it comes round, instead of afresh as in the chapter's dynamic masking, and a seed set on the global generator also resets the random state of the code that calls it. Leave the seed to the caller."
        )


@checker("mask_for_mlm")
def check_mask_for_mlm(mask_for_mlm: Any) -> str:
    """Check ``mask_for_mlm(input_ids [B, T], vocab_size, mask_token_id, special_ids, prob) -> (inputs, labels)``.

    On each hidden case: the labels are the original ids where a token was chosen and -100 elsewhere; no
    special id is chosen; unchosen tokens are unchanged; and the rates, each within 5 binomial standard errors:
    chosen / non-special = prob; among the chosen, [MASK] 0.8, unchanged 0.1 + 0.1 / (number of non-special
    ids) (a random draw can return the original), replaced by another ordinary id the rest. Random
    replacements must be ordinary ids, drawn from most of them; a second call on the same ids draws other
    masks. Each token is chosen and given its fate on its own: a count fixed per row or per batch, or one
    fate for all the chosen tokens of a row, is refused with what was measured. The reader's random draws run under a fixed seed and do not change the notebook's random state. An answer that calls the library's
    ``mask_tokens`` is refused: by name before it runs, under any other name while it runs."""
    attempted(mask_for_mlm, "mask_for_mlm")
    if mask_for_mlm is mask_tokens or "mask_tokens" in names_used(mask_for_mlm):
        fail(f"your `mask_for_mlm` calls the library's `mask_tokens`: {WRITE_IT}")
    # under another name (`corrupt = mask_tokens`), refused while it runs (the grader's REFUSALS)
    with replaced({mask_tokens: _refuse_mask_tokens}, lib.pretraining_data, mask_for_mlm):
        cases = _check_mlm_cases(mask_for_mlm)
    return f"`mask_for_mlm` follows the 80/10/10 rule on all {len(cases)} hidden cases ({'; '.join(d for d, *_ in cases)}): the right share chosen, each chosen token's fate drawn on its own, no special token touched, labels -100 except at the chosen tokens."


# --- exercise 2: the size of BERT-Medium -----------------------------------------------------------------

# Turc et al. 2019
MEDIUM = dict(num_hidden_layers=8, hidden_size=512, num_attention_heads=8, intermediate_size=2048)
MEDIUM_PARAMS = 41_373_184  # count_parameters(BertConfig(**MEDIUM)); the tests check it
_D, _N, _V, _P = MEDIUM["hidden_size"], MEDIUM["num_hidden_layers"], 30522, 512
MEDIUM_EMBEDDINGS = (_V + _P + 2) * _D + 2 * _D  # words, positions, segments, LayerNorm
# attention, feed-forward, 2 LayerNorms
MEDIUM_LAYER = 4 * (_D * _D + _D) + 2 * _D * 4 * _D + 4 * _D + _D + 4 * _D
MEDIUM_POOLER = _D * _D + _D
# the masked-LM head of BertForPreTraining: transform (dense and LayerNorm) and the output bias (the
# output weights are the tied word embeddings); the NSP head: 2 x d + 2
MEDIUM_MLM_HEAD = _D * _D + _D + 2 * _D + _V
MEDIUM_NSP_HEAD = 2 * _D + 2
EMBEDDING_SHARE = MEDIUM_EMBEDDINGS / MEDIUM_PARAMS  # 0.384
LAYER_NORM = 2 * _D  # a gain and a bias
TOTAL_TOLERANCE = 0.01  # relative: near misses, diagnosed
# embedding_share: any number within SHARE_TOLERANCE of the exact share passes, however many decimals
# it has and whether written by hand or computed (0.384, 0.38409, 0.383 and 0.386 pass; 0.38, 0.379
# and 0.39 do not): one rule, so that a more accurate value is never refused where a rougher one
# passes. Three decimals, since at two the word table alone (0.3777) rounds to the exact share's 0.38:
# a reader who counted the word table only got 0.38 accepted (reader's report x14, 2)
SHARE_TOLERANCE = 0.002
TWO_DECIMALS = 0.005  # a share rounded to two decimals lies this close to the one it rounds
NEAR_SHARE = 0.02  # a share this close is told the tolerance it missed
# shares that leave out a part of the embeddings, each named when it comes
SHARE_MISTAKES = {
    "counts the word table only (30,522 x 512); the embeddings are also the 512 position "
    "vectors, the 2 segment vectors and their LayerNorm": _V * _D / MEDIUM_PARAMS,
    "leaves out the position and segment tables (512 x 512 and 2 x 512)": (_V * _D + LAYER_NORM)
    / MEDIUM_PARAMS,
    "compares the embeddings with the rest of the model; the share is a fraction of the whole "
    "model": MEDIUM_EMBEDDINGS / (MEDIUM_PARAMS - MEDIUM_EMBEDDINGS),
}


_near = partial(near, tolerance=TOTAL_TOLERANCE)  # relative


def _band(v: float) -> str:
    """How far ``v`` is from the count, as a band (within 0.5%, 1%, 2% ...), never the gap itself: the
    exact gap added to the answer would pass without counting anything (reader s28, ch14, 1)."""
    gap = abs(v / MEDIUM_PARAMS - 1)
    return (
        next(f"{b:g}%" for b in (0.1, 0.5, 1, 2, 5, 10, 100) if gap <= b / 100)
        + " of the exact count"
    )


def _check_medium_params(medium_params: Any) -> None:
    """medium_params: the exact count; the near misses (estimates, parts left out or added) named."""
    v = expect_number(medium_params, "medium_params")
    if v != MEDIUM_PARAMS:
        if v == MEDIUM_PARAMS - (_P + 2) * _D:
            fail(
                f"medium_params = {v:,.0f} is {(_P + 2) * _D:,} = {_P + 2} x {_D} short: most likely the position and segment tables ({_P} and 2 vectors of {_D} numbers) are missing; the embeddings are the three tables and their LayerNorm. (The same number is also the pooler, {MEDIUM_POOLER:,}, and one more vector of {_D}: if you counted the pooler, look at the embeddings.)"
            )
        if v == MEDIUM_PARAMS - MEDIUM_POOLER:
            fail(
                f"medium_params = {v:,.0f} leaves out the pooler: `Bert` ends with a dense layer and tanh on the [CLS] vector, which the count includes."
            )
        if v in (
            MEDIUM_PARAMS + MEDIUM_MLM_HEAD,
            MEDIUM_PARAMS + MEDIUM_MLM_HEAD + MEDIUM_NSP_HEAD,
            MEDIUM_PARAMS + MEDIUM_MLM_HEAD + _V * _D,
        ):
            fail(
                f"medium_params = {v:,.0f} includes the masked-LM head of pretraining. The exercise counts `Bert`, the encoder and its pooler, without the pretraining heads."
            )
        off = round(v - MEDIUM_PARAMS)
        if off == -LAYER_NORM:
            fail(
                f"medium_params = {v:,.0f} is {LAYER_NORM:,} = 2 x {_D} short: either exactly one LayerNorm, a gain and a bias of {_D} numbers each (most likely the one that normalizes the sum of the three embeddings, which the paper does not mention and `BertEmbeddings` applies), or the 2 segment vectors of {_D} numbers. Check both."
            )
        if v == int(v) and off % LAYER_NORM == 0 and abs(off) <= (2 * _N + 1) * LAYER_NORM:
            fail(
                f"medium_params = {v:,.0f} is off by {off:+,} = {off // LAYER_NORM:+d} x {LAYER_NORM:,}, a whole number of LayerNorms (a gain and a bias of {_D} numbers each). There is one after the embeddings and two in each layer, {2 * _N + 1} in all."
            )
        if _near(v, MEDIUM_PARAMS):
            fail(
                f"medium_params = {v:,.0f} is close (within {_band(v)}) but not exact. The exercise asks for the exact count: an estimate by d^2 leaves out biases, LayerNorm weights or a table of the embeddings; count every one."
            )
        if near(v * 1e6, MEDIUM_PARAMS, TOTAL_TOLERANCE):  # no rounded number proposed: it fails
            fail(
                f"medium_params = {fmt(v)} looks like a count in millions: the exercise asks for the exact count of parameters, written in full (every digit, as count_parameters returns it), not in millions."
            )
        fail_if_in_units(v, "medium_params", MEDIUM_PARAMS, TOTAL_TOLERANCE)
        blocks = 12 * _N * _D**2
        if _near(v, blocks) or _near(v, _N * MEDIUM_LAYER):
            fail(
                f"medium_params = {v:,.0f} counts the {_N} layers only. Add the embeddings: {_V:,} words, {_P} positions and 2 segments, each a vector of {_D} numbers, and the LayerNorm that follows their sum."
            )
        if _near(v, MEDIUM_PARAMS + _V * _D):
            fail(
                f"medium_params = {v:,.0f} counts the word embeddings twice. The masked-LM output layer reuses them (tied weights), and `Bert` has no output layer at all."
            )
        if _near(v, MEDIUM_PARAMS + 4 * MEDIUM_LAYER) or _near(
            v, MEDIUM_EMBEDDINGS + 12 * 12 * _D**2
        ):
            fail(f"medium_params = {v:,.0f} has 12 layers, as BERT-base. BERT-Medium has {_N}.")
        if _near(v, MEDIUM_EMBEDDINGS + _N * 4 * _D**2 + MEDIUM_POOLER) or _near(
            v, MEDIUM_EMBEDDINGS + _N * 4 * _D**2
        ):
            fail(
                f"medium_params = {v:,.0f} has the 4 d^2 of attention per layer but not the feed-forward network: it is 4d wide, so it holds 8 d^2 more weights (d x 4d and 4d x d), 12 d^2 per layer in all."
            )
        estimate = 12 * _N * _D**2 + _V * _D
        if _near(v, estimate):
            fail(
                f"medium_params = {v:,.0f} is {'' if v == estimate else 'close to '}the estimate 12 L D^2 + V D = {estimate:,}, short of the exact count. The estimate leaves out the position and segment tables, every bias, every LayerNorm and the pooler: count each of them."
            )  # "close to": a near number need not be the estimate itself (reader s36b, ch14)
        below = "below" if v < MEDIUM_PARAMS else "above"
        fail(
            f"medium_params = {v:,.0f} is not it: it is {abs(v / MEDIUM_PARAMS - 1):.1%} {below} the exact count. Count one layer (attention and feed-forward network, with their biases and LayerNorms), then the embeddings and the pooler."
        )


def _shown_share(s: float) -> str:
    """The share as the student gave it: all of its decimals (up to 10), so that a message never
    shows a rounded value that looks right."""
    return f"{s:.10g}"


def _precision_note(s: float) -> str:
    """The tolerance, told to a share that missed it by little."""
    if abs(s - EMBEDDING_SHARE) <= NEAR_SHARE:
        return f" (A share must lie within {SHARE_TOLERANCE} of the exact ratio, however many decimals it has.)"
    return ""


def _check_embedding_share(embedding_share: Any) -> None:
    """embedding_share: within SHARE_TOLERANCE of the exact share, however it was written."""
    s = expect_number(embedding_share, "embedding_share")
    if abs(s - EMBEDDING_SHARE) > SHARE_TOLERANCE:
        if abs(s - 100 * EMBEDDING_SHARE) <= 100 * TWO_DECIMALS:
            fail_as_percentage(s, "embedding_share")
        shown, precision = _shown_share(s), _precision_note(s)
        if abs(s - EMBEDDING_SHARE) <= TWO_DECIMALS and round(s, 2) == s:
            fail(
                f"embedding_share = {shown} has two decimals, too few to show which embeddings you counted: a count of the word table alone and a count of all the embeddings differ only from the third decimal on. The exercise asks for three decimals (within {SHARE_TOLERANCE} of the exact share): divide your count of the embeddings by the total and keep three decimals."
            )
        # a usual mistake: computed exactly, else written near it (the first two differ by 0.00003)
        for near in (1e-9, 5e-4):
            for mistake, share in SHARE_MISTAKES.items():
                if abs(s - share) <= near:
                    fail(f"embedding_share = {shown} {mistake}.{precision}")
        base = count_parameters(BertConfig.base())
        if abs(s - (23_837_184 / base)) <= TWO_DECIMALS:
            fail(
                f"embedding_share = {shown} is BERT-base's share (22%). BERT-Medium is narrower: its embeddings shrink like d, its layers like d^2, so their share grows."
            )
        fail(
            f"embedding_share = {shown} is not it: which tables (and which normalization) make up the embeddings, and what is the share a fraction of?{precision}"
        )


@checker("BERT-Medium size")
def check_medium_size(medium_params: Any, embedding_share: Any) -> str:
    """Check the predictions of exercise 2: ``medium_params``, the parameters of BERT-Medium as the library's
    ``Bert`` (encoder and pooler, the uncased 30,522-token vocabulary, 512 positions, 2 segments), and
    ``embedding_share``, the fraction of them in the embeddings (words, positions, segments and their LayerNorm).

    ``medium_params`` must be the exact count (the exercise asks for it as ``count_parameters`` gives it):
    the estimate 12 N d^2 + embeddings (0.13% low), a count without the pooler or with the pretraining
    heads are near misses, each named. ``embedding_share``:
    any number within 0.002 of the exact share, 0.3841..., passes, however many decimals it has (0.384,
    0.38409 and 0.386 pass; 0.39, the word table alone, 0.378, and 0.38, to which the word table's
    share rounds too, do not; the usual parts left out are named)."""
    if medium_params is None and embedding_share is None:
        not_attempted(
            "write your two predictions (medium_params and embedding_share) in the cell above, then run this cell again."
        )
    if medium_params is not None:
        _check_medium_params(medium_params)
    if embedding_share is not None:
        _check_embedding_share(embedding_share)
    if medium_params is None:
        not_attempted("your embedding_share is right; now predict the total (medium_params).")
    if embedding_share is None:
        not_attempted(
            "your medium_params is right; now predict the embeddings' share of it (embedding_share)."
        )
    return f"BERT-Medium has {MEDIUM_PARAMS:,} parameters, {EMBEDDING_SHARE:.0%} of them in the embeddings ({MEDIUM_EMBEDDINGS:,}); {_N} layers of {MEDIUM_LAYER:,} and a pooler of {MEDIUM_POOLER:,}. At width {_D} the vocabulary table is a large part of a small BERT; in BERT-base it is 22%."
