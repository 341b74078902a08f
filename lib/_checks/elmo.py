"""The input checks of lib.elmo, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from torch import Tensor

from lib._validate import check_ids, check_int, check_padding_mask, check_probability, is_int


def check_words(words, max_chars) -> None:
    """words a sequence of str (a str alone is not); max_chars room for two markers and a character."""
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"words: expected a sequence of str, got {type(words).__name__}")
    check_int(max_chars, "max_chars (two markers and a character)", 3)


def check_vocabulary_words(words, vocab_size: int) -> None:
    """The character CNN's words: the vocabulary's vocab_size words in id order."""
    if words is None or isinstance(words, str) or len(words) != vocab_size:
        got = "None" if words is None else f"{len(words)} words"
        raise ValueError(
            f"words: the character CNN needs the vocabulary's {vocab_size} words in id order (e.g. vocab.itos), got {got}"
        )


def check_id_sentences(sentences) -> None:
    """A non-empty list of non-empty lists of token ids."""
    if isinstance(sentences, Tensor) or not sentences:
        raise ValueError(
            f"sentences: expected a non-empty list of lists of token ids, got {sentences!r:.60}"
        )
    if any(len(s) == 0 for s in sentences):
        raise ValueError("sentences: every sentence needs at least one token, got an empty one")


def check_bilm_input(input_ids, attention_mask, vocab_size: int, pad_id: int) -> None:
    """input_ids [B, T] ids; the mask (given, or input_ids != pad_id) a padding mask with at least one
    real token per row."""
    check_ids(input_ids, "input_ids", vocab_size, f"vocab_size={vocab_size}")
    if attention_mask is None:
        name = "attention_mask (input_ids != pad_id, no mask given)"
        check_padding_mask(input_ids != pad_id, input_ids, name)
        empty = (input_ids != pad_id).sum(1) == 0  # [B]
    else:
        check_padding_mask(attention_mask, input_ids)
        empty = attention_mask.long().sum(1) == 0  # [B]
    if empty.any():
        raise ValueError(
            f"attention_mask: expected at least one real token per sentence, got an empty row (row {int(empty.nonzero()[0])})"
        )


def check_something_to_predict(count: int) -> None:
    """ValueError if no sentence has two tokens."""
    if count == 0:
        raise ValueError(
            "input_ids: every sentence has a single token, so there is nothing to predict; add <bos> and <eos>"
        )


def check_layer_states(states, num_layers: int) -> None:
    """states [N, ..., D] floating point, or a sequence of N such tensors [..., D]."""
    if isinstance(states, (list, tuple)):
        if len(states) != num_layers or not all(isinstance(s, Tensor) for s in states):
            raise ValueError(
                f"states: expected {num_layers} tensors (one per layer), got {len(states)} items"
            )
        layers, shape = states, (num_layers, *states[0].shape)
    else:
        layers, shape = [states], tuple(getattr(states, "shape", ()))
    for x in layers:
        if not isinstance(x, Tensor) or not x.is_floating_point():
            got = f"dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
            raise TypeError(f"states: expected a floating-point tensor [N, ..., D], got {got}")
    if len(shape) < 2 or shape[0] != num_layers:
        raise ValueError(f"states: expected shape [N={num_layers}, ..., D], got {shape}")


def check_elmo_config(config) -> None:
    """The hyper-parameters of an ELMoConfig (see its docstring)."""
    for name in ("vocab_size", "hidden_dim", "n_layers", "char_dim", "max_chars"):
        value = getattr(config, name)
        check_int(value, name, 1)
    for name in ("word_dim", "n_highway"):
        value = getattr(config, name)
        check_int(value, name, 0)
    if config.cell_dim is not None and (
        not is_int(config.cell_dim) or config.cell_dim < config.hidden_dim
    ):
        raise ValueError(
            f"cell_dim: expected None or an int >= hidden_dim={config.hidden_dim}, got {config.cell_dim!r}"
        )
    check_probability(config.dropout, "dropout", "[0, 1)")
    if not is_int(config.pad_id) or not 0 <= config.pad_id < config.vocab_size:
        raise ValueError(
            f"pad_id: expected an id in [0, vocab_size={config.vocab_size}), got {config.pad_id!r}"
        )
    filters = config.char_filters
    ok = isinstance(filters, tuple) and all(
        isinstance(f, tuple) and len(f) == 2 and all(is_int(v) and v >= 1 for v in f)
        for f in filters
    )
    if not ok:
        raise ValueError(
            f"char_filters: expected a tuple of (width, count) pairs of positive ints, got {filters!r}"
        )
    if filters and max(w for w, _ in filters) > config.max_chars:
        raise ValueError(
            f"char_filters: the widest filter ({max(w for w, _ in filters)}) is wider than max_chars={config.max_chars}"
        )
    if config.word_dim == 0 and not filters:
        raise ValueError(
            "word_dim=0 and char_filters=() leave no token representation: give word_dim > 0 or some char_filters"
        )
