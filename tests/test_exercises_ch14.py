"""The exercises of the chapter *BERT*: the checkers accept the chapter's solutions and reject typical wrong
answers with the right feedback (layout and student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch

import lib.pretraining_data
from lib.bert import BertConfig, count_parameters
from lib.exercises import ExerciseFailed, ch14
from lib.pretraining_data import mask_tokens
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "14_bert.ipynb"


def test_the_chapter_has_both_checked_exercises_and_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == {"check_mask_for_mlm", "check_medium_size"} == set(ch14.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 2 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


# --- exercise 1: the 80/10/10 rule -----------------------------------------------------------------------


def _library(ids, V, mask_id, special, prob=0.15):
    return mask_tokens(ids, V, mask_id, special, prob=prob)


def _solution():
    solution = exercises(CHAPTER)[0]
    return defined_functions("\n".join(c.source for c in solution["solutions"]))["mask_for_mlm"]


def test_check_mask_for_mlm_accepts_the_chapters_solution_and_its_rules_pass_the_library():
    mask_for_mlm = _solution()
    assert ch14.check_mask_for_mlm(mask_for_mlm).passed

    def as_list(*a):
        return list(mask_for_mlm(*a))  # a list instead of a tuple is fine

    assert ch14.check_mask_for_mlm(as_list).passed
    # the checker's rules, without its refusal, pass the library's own mask_tokens
    assert len(ch14._check_mlm_cases(_library)) == 2


def test_check_mask_for_mlm_refuses_the_librarys_mask_tokens_under_any_name():
    """The exercise says "without calling mask_tokens": the notebook's checker refuses it, as the
    course grader's sandbox does (ch14.REFUSALS); the reader's report ch14 s15, point 1."""
    for answer in (_library, mask_tokens):
        with pytest.raises(ExerciseFailed, match="calls the library's `mask_tokens`"):
            ch14.check_mask_for_mlm(answer)
    namespace: dict = {}
    exec(
        "from lib.pretraining_data import mask_tokens as corrupt\n"
        "def mask_for_mlm(ids, V, mask_id, special, prob=0.15):\n"
        "    return corrupt(ids, V, mask_id, special, prob=prob)\n",
        namespace,
    )
    # under another name: refused while it runs
    with pytest.raises(ExerciseFailed, match="it called the library's mask_tokens"):
        ch14.check_mask_for_mlm(namespace["mask_for_mlm"])
    # the library is itself again afterwards, in the module and under the reader's name
    assert namespace["corrupt"] is mask_tokens
    assert lib.pretraining_data.mask_tokens is mask_tokens
    assert set(ch14.REFUSALS) == {"check_mask_for_mlm"}


def test_the_hidden_cases_look_like_bert_input():
    cases = ch14._mlm_cases()
    for _, ids, V, mask_id, special, prob in cases:
        assert (ids[:, 0] == ids[0, 0]).all() and ids[0, 0].item() in special  # [CLS] first
        assert mask_id in special and 0 < prob < 1 and ids.max() < V
        ordinary = ~torch.isin(ids, torch.tensor(special))
        assert ordinary.float().mean() > 0.5  # mostly ordinary tokens
    _, _, V, _, special, _ = cases[0]
    # a draw from the whole vocabulary hits a special id often enough to see
    assert len(special) / V > 0.15


def _variant(kind):
    """A wrong mask_for_mlm: the library's rule with one of the usual mistakes."""

    def mask_for_mlm(ids, V, mask_id, special, prob=0.15):
        if kind == "seeds inside":  # the reader's report ch14 s17, M7: static masking
            torch.manual_seed(0)
        is_special = torch.isin(ids, torch.tensor(special))
        chosen = torch.rand(ids.shape) < (0.15 if kind == "prob hard-coded" else prob)
        if kind == "nothing chosen":
            chosen = torch.zeros_like(chosen)
        if kind == "fixed count per row":  # round(prob n) of each row's non-special tokens
            chosen = torch.zeros_like(chosen)
            for row, keep in zip(chosen, ~torch.isin(ids, torch.tensor(special))):
                where = keep.nonzero()[:, 0]
                row[where[torch.randperm(len(where))[: round(prob * len(where))]]] = True
        if kind in ("fixed count per batch", "prob of every position"):
            # round(prob N) of the batch's N non-special tokens, or prob of its every position
            where = (~torch.isin(ids, torch.tensor(special))).flatten().nonzero()[:, 0]
            n = len(where) if kind == "fixed count per batch" else ids.numel()
            chosen = torch.zeros(ids.numel(), dtype=torch.bool)
            chosen[where[torch.randperm(len(where))[: round(prob * n)]]] = True
            chosen = chosen.view(ids.shape)
        if kind != "specials chosen":
            chosen &= ~is_special
        action = torch.rand(ids.shape)
        if kind == "one fate per row":  # one random number per row, for all its chosen tokens
            action = torch.rand(ids.shape[0], 1).expand(ids.shape)
        allowed = torch.tensor([i for i in range(V) if i not in special])
        random_ids = (
            torch.randint(V, ids.shape)
            if kind == "random from the whole vocabulary"
            else torch.full_like(ids, allowed[0].item())
            if kind == "one replacement"
            else allowed[torch.randint(len(allowed), ids.shape)]
        )
        where = torch.ones_like(chosen) if kind == "corrupts everything" else chosen
        # wrong proportions: 80/20/0, 10/10/80 (the shares read the other way round), 50/25/25
        mask_share = {"always mask": 1.0, "no unchanged": 0.8, "10/10/80": 0.1, "50/25/25": 0.5}
        mask_share = mask_share.get(kind, 0.8)
        random_share = {"always mask": 1.0, "no unchanged": 1.0, "10/10/80": 0.2, "50/25/25": 0.75}
        random_share = random_share.get(kind, 0.9)
        inputs = torch.where(where & (action < mask_share), mask_id, ids)
        inputs = torch.where(
            where & (action >= mask_share) & (action < random_share), random_ids, inputs
        )
        if kind == "two independent draws":  # the reader's report ch14 s13, point 3
            inputs = torch.where(where & (action < 0.8), mask_id, ids)
            second = torch.rand(ids.shape)
            inputs = torch.where(where & (second < 0.1), random_ids, inputs)
        if kind == "overlapping ranges":  # the reader's report ch14 s17, T2: one number, r < 0.1
            inputs = torch.where(where & (action < 0.8), mask_id, ids)
            inputs = torch.where(where & (action < 0.1), random_ids, inputs)
        labelled = {
            "labels everywhere": torch.ones_like(chosen),
            # the reader's report ch14 s17, T1: torch.where(is_special, -100, input_ids)
            "labels at every ordinary token": ~is_special,
            "labels at [MASK] only": chosen & (action < 0.8),
            "labels on changed tokens only": chosen & (inputs != ids),
            # the reader's report 14 s4: the [MASK] and random actions labelled, whatever the
            # random id drawn (it is sometimes the original token)
            "labels at [MASK] and random only": chosen & (action < 0.9),
        }
        labels = torch.where(
            labelled.get(kind, chosen),
            inputs if kind == "labels are the inputs" else ids,
            -1 if kind == "labels -1" else 0 if kind == "labels 0" else -100,
        )
        if kind == "float labels":
            labels = labels.float()
        if kind == "int32 labels":
            labels = labels.int()
        if kind == "int32 inputs":
            inputs = inputs.int()
        if kind == "in place":
            ids.copy_(inputs)
            return ids, labels
        if kind == "swapped":
            return labels, inputs
        return (inputs, labels) if kind != "one tensor" else inputs

    return mask_for_mlm


def _raises(*args):
    raise ValueError("my own bug")


def _forgot_return(ids, V, mask_id, special, prob=0.15):
    inputs = ids.clone()  # noqa: F841 (the mistake: computed, never returned)


MASK_WRONG = [
    ("100% [MASK]", _variant("always mask"), "every chosen token became [MASK]"),
    (
        "two independent draws",
        _variant("two independent draws"),
        "two independent draws give when the second (random id, probability 0.1) overwrites",
    ),
    (
        "random ids include specials",
        _variant("random from the whole vocabulary"),
        "some random replacements are special ids",
    ),
    (
        "overlapping ranges of one number",
        _variant("overlapping ranges"),
        "what one random number per chosen token gives when the ranges of its fates overlap",
    ),
    ("labels on every token", _variant("labels everywhere"), "every position has a label"),
    (
        "labels on every ordinary token",
        _variant("labels at every ordinary token"),
        "your labels hold the original id at tokens you did not choose",
    ),
    (
        "a seed set inside: the same masks every call",
        _variant("seeds inside"),
        "returned exactly the same inputs and labels",
    ),
    (
        "labels hold the corrupted input",
        _variant("labels are the inputs"),
        "your labels hold the corrupted tokens",
    ),
    (
        "labels at [MASK] only",
        _variant("labels at [MASK] only"),
        "only the [MASK] positions carry a label",
    ),
    (
        "unchanged tokens unlabelled",
        _variant("labels on changed tokens only"),
        "The chosen tokens left unchanged must keep their label too",
    ),
    (
        "unchanged tokens unlabelled, random ids included",
        _variant("labels at [MASK] and random only"),
        "The chosen tokens left unchanged must keep their label too",
    ),
    (
        "unchanged tokens unlabelled: the choice is not blamed",
        _variant("labels at [MASK] and random only"),
        "your choice of tokens may be right",
    ),
    ("(labels, inputs)", _variant("swapped"), "in the order (inputs, labels)"),
    ("labels -1", _variant("labels -1"), "a label of -1 is not a valid class index"),
    ("labels 0", _variant("labels 0"), "predict token id 0 at every unchosen position"),
    ("special tokens chosen", _variant("specials chosen"), "you chose special tokens"),
    ("0.15 hard-coded", _variant("prob hard-coded"), "instead of writing 0.15"),
    ("nothing chosen", _variant("nothing chosen"), "probability prob = 0.15."),
    # each message says what it measured (reader's report x14, 1)
    (
        "a fixed count per row",
        _variant("fixed count per row"),
        "rows with the same number of non-special tokens have (almost) the same number of chosen",
    ),
    (
        "one fate per row",
        _variant("one fate per row"),
        "within each row the selected tokens got the same fate",
    ),
    (
        "one fate per row: the rule said",
        _variant("one fate per row"),
        "BERT draws the 80/10/10 fate for each chosen token independently",
    ),
    (
        "a fixed count over the batch",
        _variant("fixed count per batch"),
        "each call chose prob x the batch's non-special tokens, rounded",
    ),
    (
        "prob of every position of the batch",
        _variant("prob of every position"),
        "prob of every position of the batch, [CLS], [SEP] and padding counted",
    ),
    ("10/10/80", _variant("10/10/80"), "stayed unchanged, where the rule gives about 0.8, 0.1"),
    ("50/25/25", _variant("50/25/25"), "stayed unchanged, where the rule gives about 0.8, 0.1"),
    ("80/20/0", _variant("no unchanged"), "leaving none unchanged"),
    ("corrupts unchosen tokens", _variant("corrupts everything"), "tokens that have no label"),
    ("always the same replacement", _variant("one replacement"), "use only one id of the"),
    ("changes input_ids in place", _variant("in place"), "changed its input number 1 in place"),
    ("float labels", _variant("float labels"), "labels have dtype torch.float32"),
    # cross_entropy refuses int32 labels (the reader's report ch14 s16, T1)
    ("int32 labels", _variant("int32 labels"), "labels have dtype torch.int32"),
    ("int32 inputs", _variant("int32 inputs"), "inputs have dtype torch.int32"),
    ("returns one tensor", _variant("one tensor"), "expected a pair (inputs, labels)"),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    ("returns a list", lambda ids, *a: (ids.tolist(), ids.tolist()), "inputs are a list"),
    ("wrong shape", lambda ids, *a: (ids[:, :-1], ids[:, :-1]), "inputs have shape"),
    ("raises", _raises, "raised ValueError: my own bug"),
    ("a number", lambda *a: 3, "expected a pair"),
]


@pytest.mark.parametrize("name, wrong, message", MASK_WRONG, ids=[w[0] for w in MASK_WRONG])
def test_check_mask_for_mlm_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch14.check_mask_for_mlm(wrong)


def test_overlapping_ranges_and_two_draws_are_told_apart_and_labels_are_not_blamed_on_the_choice():
    """The reader's report ch14 s17, T1 and T2: each mistake named, not the other."""
    for kind, other in [
        ("overlapping ranges", "two independent draws"),
        ("two independent draws", "overlap"),
        ("labels at every ordinary token", "Choose each non-special token"),
    ]:
        with pytest.raises(ExerciseFailed) as caught:
            ch14.check_mask_for_mlm(_variant(kind))
        assert other not in str(caught.value), (kind, str(caught.value))


def test_each_wrong_choice_or_fate_is_told_what_it_did_not_another_mistake():
    """The reader's report x14, 1: one fate per row passed, and the fixed-count message described a
    mistake the answer had not made. Each message now says what it measured."""
    for kind, other in [
        ("one fate per row", "fixed count"),
        ("one fate per row", "Of the chosen tokens, 80% become [MASK]"),
        ("fixed count per row", "same fate"),
        ("fixed count per batch", "same fate"),
        ("fixed count per batch", "per row"),
        ("prob of every position", "fixed count"),
    ]:
        with pytest.raises(ExerciseFailed) as caught:
            ch14.check_mask_for_mlm(_variant(kind))
        assert other not in str(caught.value), (kind, str(caught.value))
    # wrong proportions: the three shares measured, in the message
    with pytest.raises(ExerciseFailed) as caught:
        ch14.check_mask_for_mlm(_variant("10/10/80"))
    shares = re.search(
        r"(\d\.\d{3}) became \[MASK\], (\d\.\d{3}) a random id and (\d\.\d{3}) stayed unchanged",
        str(caught.value),
    )
    assert shares and float(shares[1]) < 0.15 and float(shares[3]) > 0.75


def test_the_fate_and_count_measures_leave_a_right_answer_far_from_their_limits():
    """On the practice seed, the course's grading seed (grading/ch14.py) and another, the model
    answer's fates in a row agree about as often as independent draws make them, and its counts vary
    as much as a binomial: far from the limits that flag one fate per row or a fixed count."""
    saved = dict(ch14.SEEDS)
    try:
        for seed in (14, 141, 2024):
            ch14.SEEDS["mask_for_mlm"] = seed
            assert ch14.check_mask_for_mlm(_solution()).passed
            torch.manual_seed(seed)
            for _, ids, V, mask_id, special, prob in ch14._mlm_cases():
                inputs, labels = _solution()(ids, V, mask_id, special, prob)
                pairs, same, independent = ch14._same_fate_in_rows(ids, inputs, labels, mask_id)
                assert pairs > 1000 and abs(same - independent) < 0.1 * (1 - independent)
                ordinary = ~torch.isin(ids, torch.tensor(special))
                spread = ch14._count_spread(labels != -100, ordinary, prob)
                assert spread > 2 * ch14.FIXED_COUNT_SPREAD
    finally:
        ch14.SEEDS.clear()
        ch14.SEEDS.update(saved)


def test_check_mask_for_mlm_templates_are_not_attempted_and_the_random_state_is_left_alone():
    def template(input_ids, vocab_size, mask_token_id, special_ids, prob=0.15):
        """Docstring."""
        ...  # your code here

    def todo(*args):
        raise NotImplementedError

    assert ch14.check_mask_for_mlm(template).status == "not attempted"
    assert ch14.check_mask_for_mlm(todo).status == "not attempted"
    assert ch14.check_mask_for_mlm(None).status == "not attempted"
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    # the reader's draws run under a forked state
    assert ch14.check_mask_for_mlm(_solution()).passed
    assert torch.equal(torch.rand(3), expected)


def test_the_rate_tolerance_can_fail():
    assert ch14._rate_problem("x", 150, 1000, 0.15) is None
    assert ch14._rate_problem("x", 200, 1000, 0.15) is None  # 4.4 standard errors: accepted
    assert "0.220" in ch14._rate_problem("x", 220, 1000, 0.15)  # 6.2 standard errors: rejected


# --- exercise 2: BERT-Medium -----------------------------------------------------------------------------


def test_the_medium_numbers_are_the_librarys():
    assert count_parameters(BertConfig(**ch14.MEDIUM)) == ch14.MEDIUM_PARAMS
    assert (
        ch14.MEDIUM_EMBEDDINGS
        + ch14.MEDIUM["num_hidden_layers"] * ch14.MEDIUM_LAYER
        + ch14.MEDIUM_POOLER
        == ch14.MEDIUM_PARAMS
    )
    assert abs(ch14.EMBEDDING_SHARE - 0.3841) < 1e-4


def test_check_medium_size_accepts_right_answers_in_several_spellings():
    assert ch14.check_medium_size(41_373_184, 0.384)
    assert ch14.check_medium_size(torch.tensor(41_373_184), torch.tensor(0.384))
    assert ch14.check_medium_size(41_373_184, 15_891_456 / 41_373_184)  # computed: exact
    assert ch14.check_medium_size(41_373_184, 0.3841)
    # one rule, however many decimals (the reader's report ch14 s13, point 2): a correctly
    # rounded hand division passes, as a rougher value does
    for share in (0.38409, 0.38412, 0.384076, 0.383, 0.386, 15_890_432 / 41_373_184):
        assert ch14.check_medium_size(41_373_184, share)
    half = ch14.check_medium_size(None, 0.384)
    assert half.status == "not attempted" and "medium_params" in half.message
    assert ch14.check_medium_size(None, None).status == "not attempted"
    assert "embedding_share" in ch14.check_medium_size(41_373_184, None).message


MEDIUM_WRONG = [
    ((41.37, None), "not in millions"),
    # no rounded number proposed, which would itself be refused (the reader's report ch14 s16, M9)
    ((41.37, None), "written in full (every digit"),
    ((12 * 8 * 512**2, None), "counts the 8 layers only"),
    ((41_373_184 + 30522 * 512, None), "counts the word embeddings twice"),
    ((41_373_184 + 4 * 3_152_384, None), "BERT-Medium has 8"),
    ((15_891_456 + 8 * 4 * 512**2, None), "but not the feed-forward network"),
    ((30e6, None), "is not it"),
    ((30e6, None), "27.5% below the exact count"),
    ((50e6, None), "20.9% above the exact count"),
    # the natural estimate 12 L D^2 + V D: the parts it leaves out named (reader s26, ch14, 8)
    ((12 * 8 * 512**2 + 30522 * 512, None), "the estimate 12 L D^2 + V D = 40,793,088"),
    ((12 * 8 * 512**2 + 30522 * 512, None), "position and segment tables, every bias"),
    # a number near the estimate is not called the estimate itself (reader s36b, ch14)
    ((40_837_120, None), "40,837,120 is close to the estimate 12 L D^2 + V D = 40,793,088"),
    ((41_110_528, None), "leaves out the pooler"),
    ((41_373_184 - 514 * 512, None), "the position and segment tables (512 and 2 vectors"),
    ((41_373_184 + 512 * 512 + 3 * 512 + 30522, None), "masked-LM head"),
    (
        (12 * 8 * 512**2 + (30522 + 512 + 2) * 512 + 512 * 512, None),
        "close (within 0.5% of the exact count) but not exact",
    ),
    ((41_373_184 - 1024, None), "either exactly one LayerNorm"),
    ((41_373_184 - 1024, None), "or the 2 segment vectors of 512 numbers"),
    ((41_373_184 - 2 * 1024, None), "-2 x 1,024, a whole number of LayerNorms"),
    ((None, 15_627_264 / 41_373_184), "counts the word table only"),
    ((None, 0.378), "counts the word table only"),
    ((None, (30522 * 512 + 1024) / 41_373_184), "leaves out the position and segment tables"),
    # the tolerance is the prompt's, however many decimals: within 0.002 of the exact one
    ((None, 0.39), "embedding_share = 0.39 is not it"),
    ((None, 0.379), "A share must lie within 0.002 of the exact ratio, however many decimals"),
    # 0.38 is also the word table's share rounded (0.3777): two decimals do not show the count
    # (reader's report x14, 2), and the message says so without naming the right share
    ((None, 0.38), "embedding_share = 0.38 has two decimals, too few to show which embeddings"),
    ((41_373_184, 0.38), "The exercise asks for three decimals (within 0.002"),
    ((None, round(15_627_264 / 41_373_184, 3)), "counts the word table only"),
    ((None, 0.3789), "embedding_share = 0.3789"),
    ((None, 0.5123456), "embedding_share = 0.5123456 is not it"),
    ((41.3e6, None), "but not exact"),
    (("41M", None), "medium_params should be a number"),
    ((None, 38.4), "looks like a percentage"),
    ((None, 0.218), "BERT-base's share"),
    ((None, 0.6), "is not it"),
    # embeddings over the rest, and the generic message: a hint, not the formula (reader 14 s11)
    ((None, 15_891_456 / 25_481_728), "compares the embeddings with the rest of the model"),
    ((None, 0.6236), "compares the embeddings with the rest of the model"),
    ((None, 0.6), "what is the share a fraction of?"),
]


def test_check_medium_size_holds_a_share_written_by_hand_within_0_002_of_the_exact_one():
    """The prompt's and the messages' tolerance: 0.3841 +- 0.002, so 0.386 passes and 0.382 fails;
    three decimals tell the whole embeddings from the word table alone, two do not (both round to
    0.38: the reader's report x14, 2)."""
    assert ch14.SHARE_TOLERANCE == 0.002
    assert ch14.check_medium_size(41_373_184, 0.386)
    word_table = 30522 * 512 / 41_373_184
    assert round(word_table, 2) == round(ch14.EMBEDDING_SHARE, 2) == 0.38
    for wrong in (0.382, 0.379, 0.38, round(word_table, 3), word_table):
        with pytest.raises(ExerciseFailed):
            ch14.check_medium_size(41_373_184, wrong)


def test_the_two_decimals_message_names_neither_share():
    with pytest.raises(ExerciseFailed) as caught:
        ch14.check_medium_size(None, 0.38)
    message = str(caught.value)
    assert "0.384" not in message and "0.378" not in message and "38%" not in message


def test_check_medium_size_says_nothing_of_precision_to_a_share_written_far_off():
    """0.6 by hand is wrong for its value, not its decimals: no note on precision or tolerance."""
    with pytest.raises(ExerciseFailed) as caught:
        ch14.check_medium_size(None, 0.6)
    assert "within" not in str(caught.value)


@pytest.mark.parametrize("args, message", MEDIUM_WRONG, ids=[m[:30] for _, m in MEDIUM_WRONG])
def test_check_medium_size_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch14.check_medium_size(*args)


def test_the_layers_only_message_leaves_the_embeddings_to_count():
    """It names what to add, not the sum the exercise asks the student to work out (reader s10)."""
    with pytest.raises(ExerciseFailed) as caught:
        ch14.check_medium_size(12 * 8 * 512**2, None)
    message = str(caught.value)
    assert "counts the 8 layers only" in message and "LayerNorm" in message
    assert (
        f"{ch14.MEDIUM_EMBEDDINGS:,}" not in message and str(ch14.MEDIUM_EMBEDDINGS) not in message
    )


@pytest.mark.parametrize("wrong", [41_000_000, 41_373_184 + 2_000, 12 * 8 * 512**2 + 30522 * 512])
def test_check_medium_size_never_prints_the_gap_to_the_count(wrong):
    """A near miss is told how near as a band, never by the exact gap, which added to the answer
    would pass without counting anything (reader s28, ch14, 1)."""
    with pytest.raises(ExerciseFailed) as caught:
        ch14.check_medium_size(wrong, None)
    message = str(caught.value)
    gap = abs(wrong - 41_373_184)
    assert f"{gap:,}" not in message and str(gap) not in message, message
    assert "41,373,184" not in message


def test_check_medium_size_gives_a_near_miss_its_band():
    with pytest.raises(ExerciseFailed, match=re.escape("within 1% of the exact count")):
        ch14.check_medium_size(41_000_000, None)
    with pytest.raises(ExerciseFailed, match=re.escape("within 0.1% of the exact count")):
        ch14.check_medium_size(41_373_184 + 2_000, None)
