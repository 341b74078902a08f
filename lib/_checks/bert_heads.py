"""The input checks of lib.bert_heads, built on the primitives of ``lib._validate``."""

from __future__ import annotations


def check_pretraining_labels(mlm_logits, nsp_logits, mlm_labels, nsp_labels, ignore_index) -> None:
    """The labels of ``lib.bert_heads.pretraining_loss``: mlm_labels shaped like mlm_logits without its
    last dim, holding ids of its vocabulary or ``ignore_index``; NSP logits and labels both or
    neither, nsp_labels [B]."""
    if mlm_logits.shape[:-1] != mlm_labels.shape:
        raise ValueError(
            f"mlm_labels: expected shape {tuple(mlm_logits.shape[:-1])} (mlm_logits without its last dim), got shape {tuple(mlm_labels.shape)}"
        )
    V = mlm_logits.shape[-1]
    real = mlm_labels[mlm_labels != ignore_index]
    if real.numel() and (real.min() < 0 or real.max() >= V):
        raise ValueError(
            f"mlm_labels: expected token ids in [0, {V}) (the vocabulary of mlm_logits) or {ignore_index} (not chosen), got ids from {real.min().item()} to {real.max().item()}"
        )
    if (nsp_logits is None) != (nsp_labels is None):
        raise ValueError("nsp_logits and nsp_labels: expected both or neither, got only one")
    if nsp_logits is not None and nsp_labels.shape != nsp_logits.shape[:1]:
        raise ValueError(
            f"nsp_labels: expected shape {tuple(nsp_logits.shape[:1])}, got shape {tuple(nsp_labels.shape)}"
        )
