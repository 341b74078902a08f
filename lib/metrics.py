"""Scores of generated text.

:func:`corpus_bleu` is BLEU (Papineni et al. 2002, "BLEU: a method for automatic evaluation of machine
translation", sec. 2): clipped n-gram precisions p_n pooled over the whole corpus for n = 1..N, their
geometric mean, times the brevity penalty BP = exp(1 - r / c) when the c hypothesis words are fewer than
the r reference words (BP = 1 otherwise):

    BLEU = BP * exp( (1/N) * sum_n log p_n )

One reference per sentence, no smoothing: a corpus with no matching n-gram for some n scores 0, as in the
paper. Scaled to 0..100 like the scores papers report. Tokens are compared as given (no tokenization,
no lower-casing).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from lib._checks.metrics import check_bleu_args


def _ngrams(words: Sequence[str], n: int) -> Counter:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def corpus_bleu(
    hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]], max_n: int = 4
) -> float:
    """BLEU (0..100) of tokenized hypotheses against one tokenized reference each.

    hypotheses, references: equally long lists of sentences, each a list of tokens.
    """
    hypotheses, references = list(hypotheses), list(references)
    check_bleu_args(hypotheses, references, max_n)
    matches, totals = [0] * max_n, [0] * max_n
    for hyp, ref in zip(hypotheses, references):
        for n in range(1, max_n + 1):
            # clipped by the reference counts
            matches[n - 1] += sum((_ngrams(hyp, n) & _ngrams(ref, n)).values())
            totals[n - 1] += max(len(hyp) - n + 1, 0)
    if min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    c, r = sum(map(len, hypotheses)), sum(map(len, references))
    return 100 * math.exp(log_precision + min(0.0, 1 - r / c))
