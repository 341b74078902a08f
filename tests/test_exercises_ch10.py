"""The exercises of the chapter *Subword tokenization*: the checkers accept the chapter's solutions and reject
typical wrong answers with the right feedback (layout and student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re
from fractions import Fraction

import nbformat
import numpy as np
import pytest

from lib.bpe import apply_bpe, learn_bpe
from lib.exercises import ExerciseFailed, ch10
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "10_subword_tokenization.ipynb"


def test_the_chapter_has_three_checked_exercises_each_with_a_model_answer():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert (
        set(found)
        == {"check_pair_score", "check_replay", "check_cased_length"}
        == set(ch10.__all__)
    )
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 3 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


def test_check_replay_accepts_the_chapters_solution_and_the_reference():
    solution = exercises(CHAPTER)[1]
    replay = defined_functions("\n".join(c.source for c in solution["solutions"]))["replay"]
    assert ch10.check_replay(replay).passed
    assert ch10.check_replay(ch10.replay_reference).passed
    message = str(ch10.check_replay(ch10.replay_reference))
    # the two hidden cases of 'aaa' are told apart
    assert (
        "'aaa', 'bananas', 'anaconda', 'nab', 'cabbage', 'b' with the 12 merges learned" in message
    )
    assert "'aaa' with the hand-made merge (a, a)" in message


def _calls_apply_bpe(word, merges):
    return apply_bpe(word, merges)


def _no_marker(word, merges):
    return ch10._replay_from(list(word), merges)  # the mistake: no end-of-word marker


def test_check_replay_refuses_apply_bpe_and_a_tuple():
    """The exercise asks to reimplement apply_bpe and return a list: both are named, not passed."""
    assert "calls `apply_bpe`" in verdict(_calls_apply_bpe)
    alias = {"segment": apply_bpe}  # called under another name: caught while it runs
    hidden = eval("lambda w, m: segment(w, m)", alias)
    assert "your `replay` calls `apply_bpe`" in verdict(hidden)
    assert "returned a tuple" in verdict(lambda w, m: tuple(ch10.replay_reference(w, m)))
    import lib.bpe  # restored after the check

    assert lib.bpe.apply_bpe is apply_bpe


def verdict(replay):
    try:
        return str(ch10.check_replay(replay))
    except ExerciseFailed as e:
        return e.message


def test_the_hidden_cases_agree_with_apply_bpe_except_the_worked_solutions_case():
    merges = learn_bpe(ch10.HIDDEN_DICTIONARY, 12)
    cases = ch10._cases()
    for word, m, expected in cases:
        assert ch10.replay_reference(word, m) == expected
    assert any(m == merges for _, m, _ in cases)
    differ = [(w, m) for w, m, expected in cases if apply_bpe(w, m) != expected]
    assert differ == [ch10.DIFFERING_CASE]  # the case that tells replay from apply_bpe (review s13)


def _best_ranked_by_hand(word, merges):
    """apply_bpe's algorithm written out: merge the best-ranked pair present until none is left."""
    rank = {pair: r for r, pair in enumerate(merges)}
    symbols = list(word) + ["</w>"]
    while True:
        ranks = [rank[p] for p in zip(symbols, symbols[1:]) if p in rank]
        if not ranks:
            return symbols
        symbols = ch10._merge(symbols, merges[min(ranks)])


def _until_nothing_changes(word, merges):
    """The merge list applied again and again until nothing changes."""
    symbols, before = list(word) + ["</w>"], None
    while symbols != before:
        before = symbols
        symbols = ch10._replay_from(symbols, merges)
    return symbols


def _glued_start(word, merges):
    # the mistake: subword-nmt's start, the marker glued to the last character
    return ch10._replay_from(list(word[:-1]) + [word[-1] + "</w>"], merges)


def _forgot_return(word, merges):
    symbols = list(word) + ["</w>"]  # noqa: F841 (the mistake: computed, never returned)


def _consumes_merges(word, merges):
    """A right replay that empties its list of merges as it goes (merges.pop(0))."""
    symbols = list(word) + ["</w>"]
    while merges:
        symbols = ch10._merge(symbols, merges.pop(0))
    return symbols


def _replaces_text(word, merges):
    """The string-replace mistake, written as a reader writes it."""
    text = " ".join(list(word) + ["</w>"])
    for a, b in merges:
        text = text.replace(f"{a} {b}", a + b)
    return text.split()


REPLAY_WRONG = [
    (
        "no end-of-word marker",
        _no_marker,
        "no end-of-word marker",
    ),
    ("first occurrence only", ch10._first_only, "only the first occurrence"),
    ("overlaps from the right", ch10._right_to_left, "from the right"),
    (
        "replace in a joined string",
        ch10._joined_replace,
        "Work on the list of symbols, not on a string",
    ),
    (
        "returns a string",
        lambda w, m: " ".join(ch10.replay_reference(w, m)),
        "returned the string",
    ),
    ("drops characters", lambda w, m: ch10.replay_reference(w, m)[:-1], "do not spell the word"),
    (
        "merges in reverse order",
        lambda w, m: ch10.replay_reference(w, m[::-1]),
        "from the last learned to the first",
    ),
    (
        "the marker glued to the last letter (subword-nmt's start)",
        _glued_start,
        "glue the marker to the last letter",
    ),
    ("merges skipped", lambda w, m: ch10.replay_reference(w, m[:3]), "Follow one merge at a time"),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    (
        "apply_bpe's algorithm written by hand",
        _best_ranked_by_hand,
        "You merged the best-ranked pair present",
    ),
    (
        "the list again until nothing changes",
        _until_nothing_changes,
        "went through the list more than once",
    ),
    ("raises", lambda w, m: m[0][5], "raised IndexError"),
    ("the whole word, no merge applied", lambda w, m: [w + "</w>"], "the whole word as one symbol"),
    ("merges consumed with pop", _consumes_merges, "emptied or modified the list `merges`"),
]


@pytest.mark.parametrize("name, wrong, message", REPLAY_WRONG, ids=[w[0] for w in REPLAY_WRONG])
def test_check_replay_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch10.check_replay(wrong)


def test_the_pair_scores_are_the_chapters():
    scores = ch10.pair_scores()
    assert scores[("w", "##i")] == scores[("##i", "##d")] == 1 / 3
    assert (
        abs(scores[("l", "##o")] - 1 / 7) < 1e-12 and abs(scores[("##e", "##s")] - 1 / 17) < 1e-12
    )


def test_check_pair_score_accepts_the_right_answer_in_several_spellings():
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, 1 / 3)
    assert ch10.check_pair_score([["##i", "##d"], ("w", "##i")], 0.333)
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, Fraction(1, 3))
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, np.float64(1 / 3))
    half = ch10.check_pair_score(None, 1 / 3)
    assert half.status == "not attempted" and "top_pairs" in half.message
    assert ch10.check_pair_score(None, None).status == "not attempted"


PAIR_WRONG = [
    (({("##s", "##t")}, None), "largest likelihood gain"),
    (({("##e", "##s")}, None), "Frequency is not what this score measures"),
    (({("l", "##o")}, None), "1 / its count"),
    # a right pair with a lower one: the message names the extra pair, not a rarer one (reader s18)
    (({("l", "##o"), ("w", "##i")}, None), "but so is ('l', '##o') (0.143), which scores less"),
    (({("w", "##i"), ("##i", "##d"), ("l", "##o")}, 1 / 3), "keep only the pairs tied at the best"),
    (({("w", "##i")}, None), "it is a tie: 1 other pair has the same score"),
    (({("w", "i")}, None), "Did you mean ('w', '##i')?"),
    # ## on both pieces of a pair inside a word: the hint names that form too
    (({("i", "d")}, None), "Did you mean ('##i', '##d')?"),
    (({("w", "i"), ("i", "d")}, None), "Did you mean ('##i', '##d')?"),
    (({("w", "i")}, None), "starts with the two characters ##, which say that the piece continues"),
    (({("##w", "##i")}, None), "Did you mean ('w', '##i')?"),  # ## on a word's first piece
    (({("x", "##y")}, None), "List pairs of adjacent pieces of wordpiece_split(word)."),
    (({("n", "##e")}, None), "below the best score"),
    (("w ##i", None), "should be a set of pairs"),
    ((None, 3), "is c_ab, the count of the pair"),
    # c_a c_b / c_ab is 3 too for the best pairs: the message names that inversion (reader s17)
    ((None, 3), "or the inverse ratio c_a c_b / c_ab"),
    # no pair at all: the message says so, not that "your pair scores the most" (reader s17)
    ((set(), 1 / 3), "top_pairs is empty"),
    (([], None), "top_pairs is empty"),
    ((None, 1 / 7), "The best pairs are rarer"),
    # the right pairs with l ##o's or ##s ##t's score: the message points at the score only
    (({("w", "##i"), ("##i", "##d")}, 1 / 9), "Your top_pairs are right"),
    ((None, 0.11), "is 1 / 9: the score of ##s ##t"),  # 1/9 written to two decimals
    ((None, 0.14), "is 1 / 7: the score of l ##o"),  # 1/7 written to two decimals (reader s35)
    # c_ab / N, the commonest pairs' frequency (BPE's ranking): not 1/9 (lecturer review s22, M2)
    ((None, 9 / 79), "is 9 / 79, c_ab / N: the frequency of ##e ##s or ##s ##t"),
    (({("w", "##i"), ("##i", "##d")}, 0.1139), "is 9 / 79, c_ab / N"),
    ((None, 7 / 79), "is 7 / 79, c_ab / N: the frequency of ##o ##w or l ##o"),
    # N c_ab / (c_a c_b), the ratio to independence: the exercise's score without N = 79
    ((None, 79 / 3), "leaves out the constant N"),
    (({("w", "##i"), ("##i", "##d")}, 26.33), "with N = 79 the number of pieces"),
    (({("w", "##i"), ("##i", "##d")}, 1), "the missing factor is the count of the other piece"),
    (({("w", "##i"), ("##i", "##d")}, 1), "Or you counted each dictionary word once"),
    ((None, 0.5), "is not the best score"),
    ((None, "a third"), "top_score should be a number"),
    ((None, Fraction(1, 2)), "is not the best score"),  # a fraction is a number
]


@pytest.mark.parametrize("args, message", PAIR_WRONG, ids=[m[:30] for _, m in PAIR_WRONG])
def test_check_pair_score_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch10.check_pair_score(*args)


def test_check_pair_score_st_message_does_not_point_at_the_answer():
    # the first wrong try, ##s ##t: name the mistake, not "the rarest never-apart pair" (reader s34)
    with pytest.raises(ExerciseFailed) as failed:
        ch10.check_pair_score({("##s", "##t")}, 1 / 9)
    message = str(failed.value)
    assert "counts of its pieces as well as counting the pair" in message
    assert "rare" not in message and "##i" not in message


def test_check_replay_messages_name_the_mistake_without_the_code():
    for _, wrong, _ in REPLAY_WRONG:
        message = verdict(wrong)
        assert "list(word) + ['</w>']" not in message or "no end-of-word marker" in message
        assert "symbols[i] == a" not in message and "while i <" not in message


# --- exercise 3: keep the capitals -------------------------------------------------------------------


def test_check_cased_length_accepts_the_chapters_solution_and_three_decimals():
    right = ch10.cased_tokens_per_word()
    assert (
        abs(right - 1.369) < 0.07
    )  # the chapter's 1.369 on Python 3.11; other versions differ a little
    assert ch10.check_cased_length(right).passed
    assert ch10.check_cased_length(round(right, 3)).passed
    assert ch10.check_cased_length(np.float32(right)).passed
    assert ch10.check_cased_length(None).status == "not attempted"
    cells = nbformat.read(CHAPTER, as_version=4).cells
    i = next(
        k for k, c in enumerate(cells) if c.source.strip() == "check_cased_length(cased_per_unit)"
    )
    assert "cased_per_unit = None" in cells[i - 1].source and tags(cells[i]) == ["remove-output"]


def _cased(**kwargs):
    train, test = ch10._docs_split()
    text = {"lower": test.lower(), "train": train, "whole": train + test}.get(
        kwargs.pop("text", ""), test
    )
    return ch10.tokens_per_word(text, **kwargs)


CASED_WRONG = [
    ("the lower-cased run", lambda: _cased(text="lower", lower_case_merges=True), "the lower-cased run"),
    ("held-out text lower-cased", lambda: _cased(text="lower"), "the held-out text you measured is lower-cased"),
    ("the lower-cased merges", lambda: _cased(lower_case_merges=True), "with the merges of the lower-cased run"),
    ("words split on spaces", lambda: _cased(per="space"), "separated by spaces"),
    # the tokens per alphanumeric word, the chapter's second measure (review ch10_s24)
    ("alphanumeric words only", lambda: _cased(per="alphanumeric"), "tokens per alphanumeric word"),
    ("the training text", lambda: _cased(text="train"), "that is the training text"),
    # the whole text, cased merges (review ch10_s22)
    ("the whole text", lambda: _cased(text="whole"), "you measured the whole text"),
    ("the whole text, rounded", lambda: round(_cased(text="whole"), 3), "you measured the whole text"),
    # merges learned without the end-of-word marker, as the chapter's byte-level run does: named as
    # the marker, not as the case (reader s42)
    ("no end-of-word marker", lambda: _cased(marker="none"), "without the end-of-word marker"),
    ("no marker, rounded", lambda: round(_cased(marker="none"), 3), "end_of_word=None"),
    ("learned without the marker", lambda: _cased(marker="tokenizer"), "one extra token per unit"),
    ("words per token", lambda: 1 / ch10.cased_tokens_per_word(), "that is units per token"),
    ("the lower-cased run, as printed", lambda: round(_cased(text="lower", lower_case_merges=True), 2), "is the lower-cased run's value"),
    ("the number of tokens", lambda: ch10.cased_token_count(), "is the number of held-out tokens"),
    ("another count", lambda: 12_730, "is a count, not tokens per unit"),
    ("a guess", lambda: 1.5, "Check each step against the exercise"),
    ("a guess, the merges", lambda: 1.5, "how many merges you learn (exactly 1,000)"),
    # the chapter's other run learns 5,000 merges: a reader may reuse that number (reader s17)
    ("5,000 merges", lambda: _cased(n_merges=5000), "that is what 5,000 merges give"),
    ("5,000 merges, rounded", lambda: round(_cased(n_merges=5000), 3), "Did you learn exactly 1,000 merges?"),
    ("500 merges", lambda: _cased(n_merges=500), "that is what 500 merges give"),
    ("below 1", lambda: 0.5, "every unit takes at least one token"),
    # the right value, rounded to one decimal (reader s18)
    ("rounded to 1 decimal", lambda: round(ch10.cased_tokens_per_word(), 1), "give the value to at least 3 decimals"),
    # below the lower-cased run, a guess or the right value cut to one decimal (1.2): the wrong
    # direction, never called close (reader s38)
    ("cut to 1 decimal", lambda: int(ch10.cased_tokens_per_word() * 10) / 10, "is shorter than the lower-cased run"),
    ("a guess below the lower-cased run", lambda: 1.15, "is shorter than the lower-cased run"),
    # cut to two decimals (1.27) does not round to the right value: not called close either (reader s38)
    ("cut to 2 decimals", lambda: int(ch10.cased_tokens_per_word() * 100) / 100, "Check each step against the exercise"),
    # rounded to 2 decimals, told as cut to 2 is: both are short of the unrounded value asked (review ch10_s21)
    ("rounded to 2 decimals", lambda: round(ch10.cased_tokens_per_word(), 2), "give the value to at least 3 decimals"),
]  # fmt: skip


@pytest.mark.parametrize("name, wrong, message", CASED_WRONG, ids=[w[0] for w in CASED_WRONG])
def test_check_cased_length_names_the_mistake(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)) as failure:
        ch10.check_cased_length(wrong())
    right = f"{ch10.cased_tokens_per_word():.3f}"
    assert right not in failure.value.message and "learn_bpe_fast(" not in failure.value.message


def test_check_cased_length_calls_close_only_the_right_value_rounded():
    """'close' only for the right value rounded to 1 or 2 decimals, float32 too; not for a value that
    does not round to it, nor one below the lower-cased run (reader s38)."""
    right = ch10.cased_tokens_per_word()
    lower_run = ch10._cased_mistakes()[0][0]
    for k in (1, 2):
        for value in (round(right, k), np.float32(round(right, k))):
            with pytest.raises(ExerciseFailed, match="is close"):
                ch10.check_cased_length(value)
    for value in (int(right * 10) / 10, int(right * 100) / 100, round(right, 2) - 0.03, 1.2, 1.25):
        with pytest.raises(ExerciseFailed) as failure:
            ch10.check_cased_length(value)
        assert "close" not in failure.value.message
        assert ("shorter than the lower-cased run" in failure.value.message) == (value < lower_run)


def test_check_cased_length_rejects_what_is_not_a_number():
    for answer in ["1.28", [1.28], True]:
        with pytest.raises(ExerciseFailed, match="cased_per_unit should be a number"):
            ch10.check_cased_length(answer)


def test_the_token_count_is_the_right_runs():
    _, test = ch10._docs_split()
    from lib.bpe import pre_tokenize

    assert ch10.cased_token_count() / len(pre_tokenize(test)) == ch10.cased_tokens_per_word()


def test_the_mistakes_are_told_apart():
    """Each named mistake is more than twice the tolerance away from the right value, and a value near
    two mistakes names both: none is named for another (review ch10_s22)."""
    right = ch10.cased_tokens_per_word()
    mistakes = ch10._cased_mistakes()
    assert min(abs(v - right) for v, _ in mistakes) > 2 * ch10.CASED_TOLERANCE
    for value, message in mistakes:
        with pytest.raises(ExerciseFailed) as failure:
            ch10.check_cased_length(value)
        assert message in failure.value.message
        for other, other_message in mistakes:
            if abs(other - value) <= ch10.MISTAKE_WINDOW:
                assert other_message in failure.value.message


def test_the_joined_string_message_names_the_pair_of_the_failing_case():
    """Not a generic example: the merge and the text where replacing text goes wrong (reader 10 s11)."""
    merges = [("a", "a"), ("a", "</w>"), ("a", "a</w>")]
    assert ch10._joined_replace("aaa", merges) != ch10.replay_reference("aaa", merges)
    message = ch10._joined_replace_message("aaa", merges)
    assert "at the merge ('a', 'a</w>') the text 'aa a</w>' contains 'a a</w>'" in message
    assert "'ba b'" not in message


def test_a_changed_list_of_merges_is_told_as_a_list_not_a_tensor():
    """Reader ch10 s41: a replay that empties `merges` with pop(0) was told about tensors and
    operations ending in `_`; the message names the list and how to read it unchanged."""
    message = verdict(_consumes_merges)
    assert "changed its input number 2 in place" in message
    assert "the list `merges`" in message and "a `for` loop over `merges`" in message
    assert "tensor" not in message and "ending in `_`" not in message


def test_the_string_replace_diagnosis_fires_only_on_a_string_replace():
    """Reader ch10 s41: returning the whole word gives the string replacement's ['aaa</w>'] on one
    case and was told "you replaced text"; the diagnosis now needs the replacement's output on every
    case, and the whole word has a message of its own."""
    whole = verdict(lambda w, m: [w + "</w>"])
    assert "you returned ['aaa</w>']" in whole  # the case where the two coincide
    assert "replaced text" not in whole and "the whole word as one symbol" in whole
    replaced = verdict(_replaces_text)
    assert "you replaced text in the symbols joined with spaces" in replaced
    assert "the whole word" not in replaced
    # the reader's own string replacement gives the library's on every case
    assert all(
        _replaces_text(w, list(m)) == ch10._joined_replace(w, list(m)) for w, m, _ in ch10._cases()
    )
