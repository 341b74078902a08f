"""Checkers for the exercises of the chapter *Language models and transfer learning*.

- :func:`check_interpolation`: exercise 1 (implement): the held-out perplexity of a bigram model
  interpolated with the unigram frequencies, P(w | v) = lam P_bigram(w | v) + (1 - lam) U(w) (Jelinek and
  Mercer's interpolation), with P_bigram = ``lib.ngram.BigramLM``.
- :func:`check_backward_agreement`: exercise 2 (predict, then check): what the chapter's backward LSTM
  language model predicts for the verb of "the keys that the man found ___ old .", and whether it
  predicts the same for "the key that the men found ___ old .".

Exercise 3 (do word vectors help here?) has no checker: its accuracies are averages over a few noisy draws
and its answer is an explanation, compared with the model answer; the chapter's solution computes its numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Any

import torch

from lib.data import stories
from lib.ngram import BOS, EOS, BigramLM

from . import (
    attempted,
    call,
    checker,
    expect_bool,
    fail,
    fmt,
    not_attempted,
    passing_everywhere,
)

__all__ = ["check_interpolation", "check_backward_agreement"]


# --- exercise 1: interpolation instead of add-k ------------------------------------------------------


# Long in its signature and docstring only: one keyword per usual mistake, each named.
def interpolated_perplexity_reference(
    train: list[str],
    test: list[str],
    lam: float,
    *,
    swap: bool = False,
    swap_args: bool = False,
    unigram_from: str = "train",
    eos_in_u: bool = True,
    bos_in_u: bool = False,
    uniform_u: bool = False,
    uniform_over_counted: bool = False,
    k: float = 0.0,
    count_eos: bool = True,
    per_sentence: bool = False,
    cross_entropy: bool = False,
    u_total_without_eos: bool = False,
    log10: bool = False,
    log2: bool = False,
    mean_sentence_entropy: bool = False,
    per_sentence_count: bool = False,
    predict_eos: bool = True,
    predict_first: bool = True,
) -> float:
    """exp(-(1/M) sum ln P(w | v)) over the tokens of ``test`` (each sentence's words and its </s>), with
    P(w | v) = lam BigramLM(train).prob(w, v) + (1 - lam) U(w) and U the frequencies of the words of
    ``train`` and of </s> (one per sentence); inf if some token gets probability 0.

    The keywords give the usual mistakes: the weights swapped, prob's arguments swapped (P(v | w)), U counted on the test sentences, without
    </s> or with <s>, U uniform (over the bigram model's vocabulary, or over the words counted), an add-k
    bigram, M without the </s>, the mean of the sentences' perplexities, or ln of the perplexity (the
    cross-entropy), U divided by the number of words alone, log10 or log2 undone by exp, the mean of the
    sentences' cross-entropies, the log probability divided by the number of sentences, the </s> of the test
    sentences not predicted at all, the first word of each test sentence not predicted (no <s> before it)."""
    lam = 1.0 - lam if swap else lam
    bigram = BigramLM(train, k=k)
    source = train if unigram_from == "train" else test
    counts = Counter(w for s in source for w in s.split())
    if eos_in_u:
        counts[EOS] += len(source)
    if bos_in_u:
        counts[BOS] += len(source)
    total = sum(counts.values()) - (counts[EOS] if u_total_without_eos else 0)

    def unigram(w: str) -> float:
        if uniform_u or uniform_over_counted:
            return 1.0 / (len(counts) if uniform_over_counted else len(bigram.vocab))
        return counts[w] / total

    log_probs, sizes = [], []
    for s in test:
        tokens = ([BOS] if predict_first else []) + s.split() + ([EOS] if predict_eos else [])
        logp, m = 0.0, 0
        for v, w in zip(tokens, tokens[1:]):
            p_bigram = bigram.prob(v, w) if swap_args else bigram.prob(w, v)
            p = lam * p_bigram + (1 - lam) * unigram(w)
            if p <= 0.0:
                return math.inf
            logp += math.log10(p) if log10 else math.log2(p) if log2 else math.log(p)
            m += 1 if (count_eos or w != EOS) else 0
        log_probs.append(logp)
        sizes.append(m)
    if per_sentence:
        return sum(math.exp(-lp / m) for lp, m in zip(log_probs, sizes)) / len(sizes)
    if mean_sentence_entropy:
        return math.exp(sum(-lp / m for lp, m in zip(log_probs, sizes)) / len(sizes))
    ce = -sum(log_probs) / (len(sizes) if per_sentence_count else sum(sizes))
    return ce if cross_entropy else math.exp(ce)


TOY_TRAIN = ["the dog ran home", "the cat ran", "a dog sat on the mat", "the cat sat on a dog"]
TOY_TEST = ["a cat ran home", "the dog sat"]  # 'a cat' and 'sat </s>' never occur in TOY_TRAIN


# The seed of the story case's sentences (the training ones; the test ones draw from seed + 1): a
# practice value here; a course's grader sets its own (grading/ch11.py of the repository, which the
# package does not ship: lib/exercises/__init__.py).
SEEDS = {"interpolated_perplexity": 11}


def _story_case() -> tuple[list[str], list[str]]:
    """300 training sentences of the story corpus, and 40 new ones made of their words only."""
    return _story_sentences(SEEDS["interpolated_perplexity"])


@lru_cache(maxsize=4)
def _story_sentences(seed: int) -> tuple[list[str], list[str]]:
    train = stories.generate_sentences(300, seed=seed)
    known, seen = {w for s in train for w in s.split()}, set(train)
    test = [
        s
        for s in stories.generate_sentences(200, seed=seed + 1)
        if s not in seen and set(s.split()) <= known
    ]
    return train, test[:40]


def _cases() -> list[tuple[str, list[str], list[str], float]]:
    """(description, train, test, lam) of the hidden cases. The story case comes first: there every mistake
    gives a finite perplexity of its own, so the feedback can name it (on the toy corpus, leaving </s> out
    of U gives inf, as ignoring lam does)."""
    story_train, story_test = _story_case()
    return [
        (
            f"{len(story_train)} story sentences and {len(story_test)} new ones, lam = 0.95",
            story_train,
            story_test,
            0.95,
        ),
        ("the toy corpus, lam = 0.8", TOY_TRAIN, TOY_TEST, 0.8),
        ("the toy corpus, lam = 0.3", TOY_TRAIN, TOY_TEST, 0.3),
        ("the toy corpus, lam = 0 (the unigram model alone)", TOY_TRAIN, TOY_TEST, 0.0),
    ]


SMOOTHED = "your bigram estimate is smoothed: BigramLM(train, k=...) gives unseen bigrams a share of probability. Interpolate the maximum-likelihood estimate, BigramLM(train) with k = 0: the unigram term already does the smoothing."

_MISTAKES: list[tuple[dict, str]] = [
    (
        dict(swap=True),
        "you swapped the weights: lam multiplies the bigram estimate and 1 - lam the unigram frequency, so that lam = 1 is the bigram model and lam = 0 the unigram model.",
    ),
    (
        dict(swap_args=True),
        "you swapped the arguments of prob: BigramLM.prob(word, prev) takes the predicted word first, as P(w | v) writes it, so prob(v, w) is P(v | w), the previous word given the next one.",
    ),
    (
        dict(eos_in_u=False),
        "your U leaves out </s>. The model predicts </s> at the end of every sentence, so U counts it as a word, once per training sentence; without it P(</s> | v) is 0 whenever the bigram (v, </s>) never occurred.",
    ),
    (
        dict(bos_in_u=True),
        "your U counts <s> too. <s> is never predicted, only read: count the words and </s> of each training sentence, not its <s>.",
    ),
    (
        # U from BigramLM(train).context_counts, which the chapter prints as C(the): the same total,
        # <s> in place of </s> (reader s42, m3: it matched none of the above, 0.04% off)
        dict(eos_in_u=False, bos_in_u=True),
        "your U counts <s> in place of </s>, as BigramLM's context_counts does: C(v) counts each word as a context, the word before a prediction, so it has every sentence's <s> and never its </s>. U counts the predicted words: each word of a training sentence and its </s>, never its <s>.",
    ),
    (
        dict(unigram_from="test"),
        "you counted U on the test sentences. Every probability of the model, U too, is estimated on the training sentences only: the test text is what it has not seen.",
    ),
    (
        dict(uniform_u=True),
        "your U is uniform, the same for every word. U is the unigram distribution of the training sentences: a frequent word gets more of it than a rare one.",
    ),
    (
        dict(uniform_over_counted=True),
        "your U is uniform, one over the number of distinct words and </s>. U is the unigram distribution of the training sentences: a frequent word gets more of it than a rare one.",
    ),
    (
        dict(per_sentence_count=True),
        "you divided the total log probability by the number of test sentences. The perplexity averages over the predicted tokens: M counts every word and every </s> of the test sentences.",
    ),
    (dict(k=1.0), "your bigram estimate is add-one smoothed. " + SMOOTHED.split(". ", 1)[1]),
    (
        dict(count_eos=False),
        "your M counts only the words. Each sentence has one prediction more, its </s>: M is the number of words plus the number of sentences.",
    ),
    (
        dict(predict_eos=False),
        "you left out the </s> of the test sentences. The model also predicts where each sentence ends, P(</s> | its last word): that prediction is one of the M tokens, its log probability in the sum.",
    ),
    (
        # both at once, a common n-gram mistake (course review s27, m12: it matched none of the above)
        dict(eos_in_u=False, predict_eos=False),
        "you left out </s> altogether: your U does not count it and your test sentences never predict it. The model predicts where each sentence ends: count </s> in U, once per training sentence, and predict it after each test sentence's last word, P(</s> | that word), one of the M tokens.",
    ),
    (
        dict(predict_first=False),
        "you never predict the first word of a sentence. Read each test sentence as <s> w1 ... wn </s>: the first prediction is P(w1 | <s>), and it is one of the M tokens, its log probability in the sum.",
    ),
    (
        dict(per_sentence=True),
        "you averaged the perplexities of the sentences. The perplexity of a text is exp of the mean negative log probability over all its M tokens, pooled.",
    ),
    (
        dict(cross_entropy=True),
        "you returned the cross-entropy, -(1/M) sum ln P: the perplexity is its exponential.",
    ),
    (
        dict(u_total_without_eos=True),
        "your U counts </s> but divides by the number of words alone, so the U(w) add up to more than 1 and every probability is a little too large. Divide by the number of training tokens, words and </s> together: sum(counts.values()).",
    ),
    (
        dict(log10=True),
        "you mixed two bases: log10 for the log probabilities and exp to undo them. Take exp of the mean of ln P (math.log), or 10 to the power of the mean of log10 P.",
    ),
    (
        dict(log2=True),
        "you mixed two bases: log2 for the log probabilities and exp to undo them, which gives the right perplexity raised to the power 1 / ln 2, about 1.44. Take exp of the mean of ln P (math.log), or 2 to the power of the mean of log2 P.",
    ),
    (
        dict(mean_sentence_entropy=True),
        "you averaged the sentences' cross-entropies, each over its own tokens, so a short sentence counts as much as a long one. Pool the tokens: one sum of log probabilities over all the sentences, divided once by the number of tokens predicted in all of them.",
    ),
]


# add-k values a reader may pass to BigramLM (the chapter's best k is 6e-4)
_SMOOTHING_KS = (0.5, 0.1, 0.05, 0.01, 5e-3, 1e-3, 6e-4, 5e-4, 1e-4)


def _smoothed_bigram(interpolated_perplexity: Any, value: float, case: tuple) -> bool:
    """True if the reader's result matches an add-k bigram for a usual k, or if, with lam = 1 (the bigram
    term alone) on the toy corpus, where 'a cat' was never seen, the perplexity comes out finite: only a
    smoothed bigram estimate gives that bigram a probability above 0."""
    _, train, test, lam = case
    if any(
        _close(value, interpolated_perplexity_reference(train, test, lam, k=k))
        for k in _SMOOTHING_KS
    ):
        return True
    try:
        with_counts_alone = float(interpolated_perplexity(list(TOY_TRAIN), list(TOY_TEST), 1.0))
        unigram_alone = float(interpolated_perplexity(list(TOY_TRAIN), list(TOY_TEST), 0.0))
    except Exception:  # math.log(0): the maximum-likelihood estimate, as it should be
        return False
    # lam is used and U is right (lam = 0), yet the bigram term alone never gives 0
    return math.isfinite(with_counts_alone) and _close(
        unigram_alone, interpolated_perplexity_reference(TOY_TRAIN, TOY_TEST, 0.0)
    )


def _number(value: Any, case: str) -> float:
    """The reader's result as a float; inf is allowed (a perplexity can be infinite), NaN is not."""
    if value is None:
        fail(
            f"on the case {case}, `interpolated_perplexity` returned None. Did you forget the `return` statement?"
        )
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    # a NumPy scalar
    elif hasattr(value, "item") and type(value).__name__.startswith(("float", "int")):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(
            f"on the case {case}, `interpolated_perplexity` returned {type(value).__name__} {fmt(value)}; expected one number, the perplexity."
        )
    if math.isnan(value):
        fail(
            f"on the case {case}, `interpolated_perplexity` returned nan. A log of a negative number, or 0 * inf?"
        )
    return float(value)


def _close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-4 * abs(b)


def _mistakes_passing_perplexity() -> list[str]:
    """The known mistakes (``_MISTAKES``) whose perplexities are right on every case."""
    cases = _cases()

    def right(kwargs: dict) -> bool:
        return all(
            _close(
                interpolated_perplexity_reference(train, test, lam, **kwargs),
                interpolated_perplexity_reference(train, test, lam),
            )
            for _, train, test, lam in cases
        )

    return passing_everywhere(_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"interpolated_perplexity": _mistakes_passing_perplexity}


@checker("interpolated_perplexity")
def check_interpolation(interpolated_perplexity: Any) -> str:
    """Check ``interpolated_perplexity(train, test, lam) -> float``: the perplexity on the sentences ``test`` of
    P(w | v) = lam P_bigram(w | v) + (1 - lam) U(w), P_bigram the maximum-likelihood bigram model of ``train``
    (``BigramLM(train)``) and U the frequencies of the words and </s> of ``train``.

    Tolerance: a relative 1e-4, far below every mistake's difference (at least 0.7% on the first case) and far
    above float32 rounding, if the reader computes in torch."""
    attempted(interpolated_perplexity, "interpolated_perplexity")
    cases = _cases()
    for case, train, test, lam in cases:
        result = call(
            interpolated_perplexity,
            list(train),
            list(test),
            lam,
            name="interpolated_perplexity",
            case=f"'{case}'",
        )
        value = _number(result, f"'{case}'")
        expected = interpolated_perplexity_reference(train, test, lam)
        if _close(value, expected):
            continue
        for kwargs, message in _MISTAKES:
            if _close(value, interpolated_perplexity_reference(train, test, lam, **kwargs)):
                fail(
                    f"on the case '{case}', your perplexity is {fmt(value)}, expected {fmt(expected)}: {message}"
                )
        if not math.isinf(value) and _smoothed_bigram(
            interpolated_perplexity, value, (case, train, test, lam)
        ):
            fail(
                f"on the case '{case}', your perplexity is {fmt(value)}, expected {fmt(expected)}: {SMOOTHED}"
            )
        if math.isinf(value):
            fail(
                f"on the case '{case}', your perplexity is inf, expected {fmt(expected)}: some token got probability 0. With lam < 1 every word of the training sentences and </s> has U(w) > 0, so no token of these test sentences should."
            )
        if value < 1:
            fail(
                f"on the case '{case}', your perplexity is {fmt(value)}, below 1: a perplexity is exp of a mean of -ln P >= 0, so it is at least 1. Check the sign of the log."
            )
        fail(
            f"on the case '{case}', your perplexity is {fmt(value)}, expected {fmt(expected)}, and it matches none of the usual mistakes. Work out one token of a test sentence by hand and print your function's probability for it: the bigram estimate, U and lam; then check which tokens you sum over and what you divide by."
        )
    return f"`interpolated_perplexity` gives the right perplexity on all {len(cases)} hidden cases ({'; '.join(c for c, *_ in cases)})."


# --- exercise 2: the backward model on agreement -------------------------------------------------------

# Exercise 2's checked answers are measurements, not predictions: the statement asks to compute both
# and give the checker the computed values (the prediction is written down first, not graded). A
# graded course checks them live in the student's notebook, for 0 points, as chapter 12's exercise 4
# (tools/make_course.py; course-kit review s27, M2: the course told the student to submit the
# prediction uncomputed).
MEASURED = {2}

# Measured in the chapter with its backward LSTM (the solution asserts them at the precision its
# model answer writes): the probabilities of the four verb forms at the verb of "the keys that the man
# found ___ old ." (the same for "the key that the men found ___ old ."), and the plural share
# (are + were) / (is + was + are + were). The checker compares with the reader's own model, not with
# these: the share comes out of training, which differs a little by processor.
BACKWARD_VERB_PROBS = {"is": 0.248, "was": 0.160, "are": 0.158, "were": 0.141}
PLURAL_SHARE = 0.423
# a trained backward model puts 0.71 of its probability on the four verb forms at the verb (the chapter's
# 0.248 + 0.160 + 0.158 + 0.141); an untrained one spreads it over the vocabulary, about 4 / 250 = 0.016,
# and gives every share about 0.5, so that some mistakes would pass: under this, the model is refused
MIN_VERB_MASS = 0.2
# with the reader's model: its own share, to the second decimal (0.005 accepts a share rounded to two
# decimals; float rounding is below 1e-6)
MODEL_TOLERANCE = 0.005
VERBS = ("is", "was", "are", "were")
KEYS_SENTENCE = "the keys that the man found"


@lru_cache(maxsize=1)
def _chapter_vocab():
    """The chapter's vocabulary: its 2700 training sentences (``generate_sentences(3000, seed=0)[:2700]``)."""
    return stories.word_vocab(stories.generate_sentences(3000, seed=0)[:2700])


def _model_shares(backward: Any) -> tuple[dict[str, float], dict[str, float]]:
    """From the reader's backward model: the four verb probabilities at the verb of the keys sentence, and
    the plural share that each usual mistake gives with that model (key "right" for the right one)."""
    from lib.rnnlm import RNNLM

    if not isinstance(backward, RNNLM):
        fail(
            f"the model given as backward should be the chapter's backward model, models['backward'] (an RNNLM), got {type(backward).__name__}."
        )
    if not backward.reverse:
        fail(
            "the model given as backward is a forward model (RNNLM(reverse=False)): pass the backward one, models['backward']."
        )
    vocab = _chapter_vocab()
    if backward.vocab_size != len(vocab):
        fail(
            f"the model given as backward has a vocabulary of {backward.vocab_size} words, the chapter's has {len(vocab)}: pass the model trained in the chapter, models['backward']."
        )
    words = f"{KEYS_SENTENCE} are old .".split()
    old = words.index("old")

    def probs(ids_words: list[str], position: int, eos: bool = True) -> dict[str, float]:
        ids = torch.tensor([vocab.encode(ids_words, add_bos=True, add_eos=eos)])
        was_training = backward.training
        backward.eval()
        try:
            with torch.no_grad():
                p = backward(ids).logits[0, position].softmax(-1)
        finally:
            backward.train(was_training)
        return {v: p[vocab.stoi[v]].item() for v in VERBS}

    def share(d: dict[str, float]) -> float:
        return (d["are"] + d["were"]) / sum(d.values())

    right = probs(words, old + 1)
    if sum(right.values()) < MIN_VERB_MASS:
        fail(
            f"the model given as backward looks untrained: at the verb it gives the four verb forms {sum(right.values()):.3f} of its probability together, where the chapter's trained model gives them {sum(BACKWARD_VERB_PROBS.values()):.2f}. Pass models['backward'] after the chapter's training cell has run, not a new RNNLM(..., reverse=True)."
        )
    shares = {
        "right": share(right),
        "unnormalised": right["are"] + right["were"],
        "are alone": right["are"] / sum(right.values()),
        "singular": 1 - share(right),
        "off by one": share(probs(words, old)),
        "at the full stop": share(probs(words, old + 2)),
        "no eos": share(probs(words, old + 1, eos=False)),
        # the reversed sentence read at its own 'old'
        "reversed": share(probs(words[::-1], words[::-1].index("old") + 1)),
    }
    # the logits at the verb's position have read the verb itself, so that mistake's share depends on
    # the word the reader wrote in the blank (a reader's "is" gave 0.513, named by none of the above:
    # course review s35, r11); "___" is encoded as <unk>
    for blank in ("is", "was", "were", "___"):
        filled = f"{KEYS_SENTENCE} {blank} old .".split()
        shares[f"off by one, {blank}"] = share(probs(filled, old))
        shares[f"reversed, {blank}"] = share(probs(filled[::-1], filled[::-1].index("old") + 1))
    return right, shares


_SHARE_MISTAKES = {
    "unnormalised": "looks like P(are) + P(were) alone. The share is of the four verb forms' probability: divide by P(is) + P(was) + P(are) + P(were).",
    "are alone": "looks like the share of are alone. The plural forms are two: are and were.",
    "singular": "looks like the share of is and was, the singular forms. plural_share is the share of the plural ones, are and were.",
    "off by one": "comes from the logits at the verb's own position: they score the word before the verb, 'found'. The backward model's logits at position t score the word at t - 1, so the verb is scored by the logits at the position of 'old' (counting <bos>).",
    "at the full stop": "comes from the logits at '.', one position after 'old': they score 'old', the word before '.'. Read them at the position of 'old' (counting <bos>), which score the word before 'old'.",
    "no eos": "looks like the sentence without its <eos>. The backward model was trained on sentences that end with <eos>, and reads from there; without it, it starts in a state it never saw in training. Encode with add_bos=True and add_eos=True.",
    "reversed": "looks like the sentence reversed before the backward model. RNNLM(reverse=True) reverses the sentence itself: give it the ids in reading order, as the forward model gets them, or it reads the sentence forwards again.",
}


def _share(value: Any) -> float:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        fail(f"plural_share should be a number between 0 and 1, got {fmt(value)}.")
    if 1 < value <= 100:
        fail(
            f"plural_share = {fmt(value)}: write the share as a fraction between 0 and 1 (0.3, not 30)."
        )
    if not 0 <= value <= 1:
        fail(f"plural_share = {fmt(value)}: a share of a probability is between 0 and 1.")
    return float(value)


def _check_plural_share(plural_share: Any, backward: Any) -> tuple[float, dict]:
    """plural_share against the share the checker computes from the reader's backward model
    (MODEL_TOLERANCE), each usual mistake recomputed from that model and named; returns the share
    and the model's four verb probabilities."""
    share = _share(plural_share)
    verb_probs, shares = _model_shares(backward)
    if abs(share - shares["right"]) > MODEL_TOLERANCE:
        if share == 0.5:  # before the mistakes: some of them give shares near 0.5
            fail(
                "plural_share = 0.5 is a round guess. Compute the share from the backward model's probabilities for the four verb forms."
            )
        for name, value in shares.items():
            mistake = name.split(",")[0]  # "off by one, is": with "is" in the blank
            if mistake in _SHARE_MISTAKES and abs(share - value) <= MODEL_TOLERANCE:
                fail(f"plural_share = {fmt(share)} {_SHARE_MISTAKES[mistake]}")
        if share > 0.8:
            fail(
                f"plural_share = {fmt(share)} is what the forward model does: after 'the keys that the man found' it puts more than 90% of the verbs' probability on are and were. The backward model reads the sentence from its end: when it predicts the verb, it has read 'old .' and nothing else, so it cannot know the subject is plural. Compute the share from its logits at 'old'."
            )
        fail(
            f"plural_share = {fmt(share)} matches none of the usual mistakes. Check the model (the backward one), the position whose logits you read (the one that scores the verb), how the sentence is framed, and what the share is a share of."
        )
    return share, verb_probs


@checker("backward model on agreement")
def check_backward_agreement(
    plural_share: Any, same_for_singular: Any, backward: Any = None
) -> str:
    """Check the computed values of exercise 2: ``plural_share``, the share of are + were in the
    probability that the backward model gives the four verb forms (is, was, are, were) at the verb of
    "the keys that the man found ___ old ."; ``same_for_singular`` (True or False): does it give the
    same four probabilities for "the key that the men found ___ old ."?; ``backward``, the model they
    were computed with (``models["backward"]``), required.

    The reader predicts first, in a comment, then computes (the prediction is not graded). A model that
    gives the four verb forms less than MIN_VERB_MASS of its probability at the verb is refused as
    untrained. plural_share is compared with the share the checker computes from the reader's model
    (MODEL_TOLERANCE), and each usual mistake is recomputed from it too, so that a right answer from any
    processor passes and every mistake is named: P(are) + P(were) alone, P(are) alone, the singular
    share, the logits at the verb (whatever verb the blank holds) or at '.', the sentence without <eos>,
    the sentence reversed twice;
    and a round 0.5 and the forward model's share."""
    if plural_share is None and same_for_singular is None:
        not_attempted(
            "compute plural_share and same_for_singular in the cell above, set backward to the model you computed them with, then run this cell again."
        )
    if backward is None:
        fail(
            "backward is None: give the checker the model you computed your values with, backward = models['backward']. The share comes out of training, which differs a little from one processor to another, so the checker compares yours with what your own model gives."
        )
    verb_probs = None
    if plural_share is not None:
        share, verb_probs = _check_plural_share(plural_share, backward)
    if same_for_singular is not None and not expect_bool(same_for_singular, "same_for_singular"):
        fail(
            "same_for_singular: the two sentences end alike, 'old . <eos>', and the backward model's prediction for the verb is computed from those tokens only (it reads right to left and has not reached the subject yet). Same input, same output: the four probabilities are identical, to the last bit."
        )
    if plural_share is None:
        not_attempted("your same_for_singular is right; now compute plural_share.")
    if same_for_singular is None:
        not_attempted("your plural_share is right; now compute same_for_singular.")
    numbers = ", ".join(f"{v} {p:.3f}" for v, p in verb_probs.items())
    return f"plural_share and same_for_singular are right: having read only 'old .', the backward model gives the verb forms the same probabilities whatever the subject (your backward model gives {numbers}, plural share {share:.3f}), the same numbers for both sentences. The forward model knows the number because it has read the subject when it reaches the verb; the backward model reaches the subject only after the verb."
