"""The input checks of lib.seq2seq, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_choice, check_id, check_ids, check_int, check_sizes


def check_encoder(vocab_size, d_emb, d_hidden, cell, pad_id) -> None:
    """The sizes of a recurrent encoder, its cell ('gru' or 'lstm') and its padding id."""
    check_sizes(vocab_size=vocab_size, d_emb=d_emb, d_hidden=d_hidden)
    check_choice(cell, "cell", ("gru", "lstm"))
    check_id(pad_id, "pad_id", vocab_size)


def check_source(src, src_lengths, vocab_size: int) -> None:
    """src [B, S] ids in [0, vocab_size); src_lengths (a tensor or a list of ints) [B], each in [1, S]
    (an empty sequence has nothing to encode)."""
    check_ids(src, "src", vocab_size, layout="[B, S]")
    if isinstance(src_lengths, (list, tuple)):
        src_lengths = torch.tensor(src_lengths)
    if not isinstance(src_lengths, Tensor) or src_lengths.dtype not in (torch.int64, torch.int32):
        got = src_lengths.dtype if isinstance(src_lengths, Tensor) else type(src_lengths).__name__
        raise TypeError(f"src_lengths: expected an integer tensor [B], got {got}")
    B, S = src.shape
    if src_lengths.shape != (B,):
        raise ValueError(
            f"src_lengths: expected shape [{B}] (src's batch size), got shape {tuple(src_lengths.shape)}"
        )
    if src_lengths.min() < 1 or src_lengths.max() > S:
        raise ValueError(
            f"src_lengths: expected lengths in [1, S={S}] (no empty sequence), got lengths from {src_lengths.min().item()} to {src_lengths.max().item()}"
        )


def check_summary(summary, d_enc: int) -> None:
    """summary [B, d_enc]: the encoder's summary a decoder starts from."""
    if not isinstance(summary, Tensor) or summary.dim() != 2 or summary.shape[1] != d_enc:
        got = tuple(summary.shape) if isinstance(summary, Tensor) else type(summary).__name__
        raise ValueError(f"summary: expected shape [B, {d_enc}] (d_enc), got {got}")


def check_decoder_step(
    y_prev, state: dict, enc_states, src_mask, vocab_size: int, d_enc: int
) -> None:
    """One decoder step's inputs: y_prev [B] ids, a state of batch B, enc_states [B, S, d_enc] and a
    bool src_mask [B, S]."""
    check_ids(y_prev, "y_prev", vocab_size, layout="[B]", n_dims=1)
    B = y_prev.shape[0]
    if state["h"].shape[0] != B:
        raise ValueError(
            f"state: expected batch size {B} (that of y_prev), got {state['h'].shape[0]}"
        )
    if enc_states.dim() != 3 or enc_states.shape[0] != B or enc_states.shape[2] != d_enc:
        raise ValueError(
            f"enc_states: expected shape [{B}, S, {d_enc}], got {tuple(enc_states.shape)}"
        )
    if src_mask.dtype != torch.bool or src_mask.shape != enc_states.shape[:2]:
        raise ValueError(
            f"src_mask: expected a bool tensor of shape {tuple(enc_states.shape[:2])}, got {src_mask.dtype} {tuple(src_mask.shape)}"
        )


def check_luong(score, window, d_attn, d_hidden, d_enc) -> None:
    """Luong et al.'s score ('dot' needs d_hidden == d_enc), window (None or an int >= 1), d_attn."""
    check_int(d_attn, "d_attn", 1)
    if score == "dot" and d_hidden != d_enc:
        raise ValueError(
            f"score='dot' needs d_hidden == d_enc, got d_hidden={d_hidden} and d_enc={d_enc}"
        )
    check_choice(score, "score", ("dot", "general", "concat"))
    if window is not None:
        check_int(window, "window", 1)


def check_parts(encoder, decoder, encoder_type, decoder_type) -> None:
    """An encoder and a decoder that fit: the decoder reads states as wide as the encoder's."""
    if not isinstance(encoder, encoder_type):
        raise TypeError(f"encoder: expected a lib.seq2seq.Encoder, got {type(encoder).__name__}")
    if not isinstance(decoder, decoder_type):
        raise TypeError(f"decoder: expected a lib.seq2seq decoder, got {type(decoder).__name__}")
    if decoder.d_enc != encoder.d_enc:
        raise ValueError(
            f"decoder: expected d_enc={encoder.d_enc} (the encoder's state width), got d_enc={decoder.d_enc}"
        )


def check_target_input(tgt_in, src, vocab_size: int) -> None:
    """tgt_in [B, T] ids, with src's batch size."""
    check_ids(tgt_in, "tgt_in", vocab_size)
    if isinstance(src, Tensor) and src.dim() == 2 and tgt_in.shape[0] != src.shape[0]:
        raise ValueError(
            f"tgt_in: expected batch size {src.shape[0]} (that of src), got shape {tuple(tgt_in.shape)}"
        )


def check_batch(batch) -> None:
    """TypeError unless batch has src, src_lengths, tgt_in and tgt_out (e.g. lib.data.Batch)."""
    missing = [a for a in ("src", "src_lengths", "tgt_in", "tgt_out") if not hasattr(batch, a)]
    if missing:
        raise TypeError(
            f"batch: expected an object with src, src_lengths, tgt_in, tgt_out (e.g. lib.data.Batch), got {type(batch).__name__} without {missing}"
        )


def check_target(tgt_in, tgt_out, vocab_size: int, pad_id: int) -> None:
    """tgt_out [B, T] ids of tgt_in's shape, every row with at least one non-pad token."""
    check_ids(tgt_out, "tgt_out", vocab_size)
    if not isinstance(tgt_in, Tensor) or tgt_out.shape != tgt_in.shape:
        got = tuple(tgt_in.shape) if isinstance(tgt_in, Tensor) else type(tgt_in).__name__
        raise ValueError(
            f"tgt_out: expected the shape of tgt_in {got}, got shape {tuple(tgt_out.shape)}"
        )
    if not (tgt_out != pad_id).any(dim=1).all():
        raise ValueError(
            "tgt_out: every sequence needs at least one non-pad token (an empty target)"
        )


def check_decode_args(model, max_len, bos_id, eos_id, model_type) -> None:
    """A model of ``model_type``, max_len >= 1, and bos/eos ids of its target vocabulary."""
    if not isinstance(model, model_type):
        raise TypeError(f"model: expected a lib.seq2seq.Seq2Seq, got {type(model).__name__}")
    check_int(max_len, "max_len", 1)
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_id(value, name, model.decoder.vocab_size, "the target vocabulary")


def check_one_sentence(src) -> None:
    """src [1, S]: beam search reads one sentence."""
    if not isinstance(src, Tensor) or src.dim() != 2 or src.shape[0] != 1:
        got = tuple(src.shape) if isinstance(src, Tensor) else type(src).__name__
        raise ValueError(f"src: expected shape [1, S] (one sentence), got {got}")
