"""The input checks of lib.rnn_classifier, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._checks.rnnlm import check_rnn_config
from lib._validate import check_token_batch, check_type


def check_rnn_classifier(vocab_size, n_classes, d_emb, d_hidden, n_layers, cell) -> None:
    check_rnn_config(
        cell,
        vocab_size=vocab_size,
        n_classes=n_classes,
        d_emb=d_emb,
        d_hidden=d_hidden,
        n_layers=n_layers,
    )


def check_classifier_inputs(input_ids, attention_mask, vocab_size: int) -> None:
    check_token_batch(input_ids, attention_mask, vocab_size)
    if attention_mask is not None and not attention_mask.bool().any(1).all():
        raise ValueError("attention_mask: every sentence needs at least one real token")


def check_forward_lm(lm, lm_type: type) -> None:
    """RNNClassifier's language model: a ``lm_type`` (lib.rnnlm.RNNLM) that reads left to right."""
    check_type(lm, "lm", lm_type)
    if lm.reverse:
        raise ValueError(
            "lm: expected a forward model (reverse=False): the classifier reads left to right"
        )
