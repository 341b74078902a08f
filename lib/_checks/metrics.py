"""The input checks of lib.metrics, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_int


def check_bleu_args(hypotheses: list, references: list, max_n) -> None:
    """corpus_bleu's arguments: max_n >= 1, as many hypotheses as references (at least one), each
    sentence a list of tokens, not a string."""
    check_int(max_n, "max_n", 1)
    if len(hypotheses) != len(references):
        raise ValueError(
            f"hypotheses and references: expected as many of each, got {len(hypotheses)} hypotheses and {len(references)} references"
        )
    if not hypotheses:
        raise ValueError("hypotheses: expected at least one sentence, got none")
    for name, sents in (("hypotheses", hypotheses), ("references", references)):
        for i, s in enumerate(sents):
            if isinstance(s, str):
                raise TypeError(
                    f"{name}[{i}]: expected a list of tokens, got the string {s!r}; split it first"
                )
