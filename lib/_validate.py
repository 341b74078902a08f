"""The library's input checks, written once (issue 16): every public entry point calls these with
the argument's name, so that bad input gets a ``TypeError`` or ``ValueError`` that names the
argument, what was expected and what was received. Internal calls between the library's own modules
do not check again."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def is_int(x) -> bool:
    """Whether ``x`` is an int; a bool is not (True is an int to Python, never a size here)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_number(x) -> bool:
    """Whether ``x`` is an int or a float; a bool is not."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_int(x, name: str, minimum: int | None = None) -> None:
    """TypeError unless ``x`` is an int (a bool is not); ValueError if ``x < minimum``."""
    if not is_int(x):
        raise TypeError(f"{name}: expected an int, got {type(x).__name__}")
    if minimum is not None and x < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {x}")


def check_size(x, name: str, minimum: int | None = None) -> None:
    """``check_int`` for a size read from a tensor's shape: while torch.jit traces a model (as
    torch.onnx.export does), such a size is a 0-d integer tensor, so that the graph serves every length;
    that passes unchecked."""
    traced = isinstance(x, Tensor) and x.dim() == 0 and not x.is_floating_point()
    if not (traced and torch.jit.is_tracing()):
        check_int(x, name, minimum)


def check_id(value, name: str, size: int, what: str = "", optional: bool = False) -> None:
    """ValueError unless ``value`` is an int id in [0, size) (a bool is not); ``what`` names the
    table the id indexes; ``optional`` lets None through."""
    if optional and value is None:
        return
    if not is_int(value) or not 0 <= value < size:
        table = f" ({what})" if what else ""
        none = "None or " if optional else ""
        raise ValueError(f"{name}: expected {none}an id in [0, {size}){table}, got {value!r}")


def check_ids(
    ids, name: str, size: int, what: str = "the vocabulary", layout: str = "[B, T]", n_dims: int = 2
) -> None:
    """TypeError unless ``ids`` is an integer tensor; ValueError unless it has ``n_dims`` dims, none
    of them empty, and every id is in [0, size) (``what`` names the table the ids index)."""
    if not isinstance(ids, Tensor) or ids.dtype not in (torch.int64, torch.int32):
        got = ids.dtype if isinstance(ids, Tensor) else type(ids).__name__
        raise TypeError(f"{name}: expected a tensor of token ids (torch.long), got {got}")
    if ids.dim() != n_dims or 0 in ids.shape:
        raise ValueError(
            f"{name}: expected shape {layout} with no empty dim, got shape {tuple(ids.shape)}"
        )
    if ids.min() < 0 or ids.max() >= size:
        raise ValueError(
            f"{name}: expected ids in [0, {size}) ({what}), got ids from {ids.min().item()} to {ids.max().item()}"
        )


def check_tensor(
    x,
    name: str,
    layout: str,
    min_dim: int,
    dtype=None,
    dtype_of: str = "",
    width: int | None = None,
    exact: bool = False,
    floating: bool = True,
) -> None:
    """TypeError unless x is a tensor, floating-point if ``floating`` (of `dtype`, that of
    `dtype_of`, if given); ValueError if x.dim() < min_dim (!= min_dim if ``exact``) or (if `width`
    is given) x.shape[-1] != width."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}: expected a torch.Tensor of shape {layout}, got {type(x).__name__}"
        )
    if floating and not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"{name}: expected dtype {dtype} (same as {dtype_of}), got {x.dtype}")
    if x.dim() < min_dim or (exact and x.dim() != min_dim):
        dims = f"{'' if exact else 'at least '}{min_dim} dim{'s' * (min_dim > 1)}"
        raise ValueError(f"{name}: expected shape {layout} ({dims}), got shape {tuple(x.shape)}")
    if width is not None and x.shape[-1] != width:
        raise ValueError(f"{name}: expected shape {layout}, got shape {tuple(x.shape)}")


def broadcast_shape(a, b) -> tuple | None:
    """The shape that shapes a and b broadcast to, or None if they do not broadcast. The same rule as
    torch.broadcast_shapes(a, b), in a few microseconds instead of about ten: these checks run on
    every call of the public functions."""
    if len(a) < len(b):
        a, b = b, a
    b = (1,) * (len(a) - len(b)) + tuple(b)
    if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
        return None
    return tuple(y if x == 1 else x for x, y in zip(a, b))


# --- lib.attention ---------------------------------------------------------------------------------


def check_mask_dtype(mask) -> None:
    """TypeError unless mask is a bool tensor (the library's one mask convention)."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask: expected a bool tensor (True = may attend), got {got}")


def check_bool_mask(mask, scores_shape, examples: str = "[Tk], [B, 1, Tk], [B, Tq, Tk]") -> None:
    """TypeError unless mask is a bool tensor; ValueError unless it broadcasts to the scores."""
    check_mask_dtype(mask)
    if broadcast_shape(mask.shape, scores_shape) != tuple(scores_shape):
        raise ValueError(
            f"mask: expected a shape broadcastable to the scores' {tuple(scores_shape)} (e.g. {examples}), got shape {tuple(mask.shape)}"
        )


# --- lib.metrics -----------------------------------------------------------------------------------


def check_padding_mask(mask, input_ids: Tensor, name: str = "attention_mask") -> None:
    """The padding mask of right-padded ``input_ids`` [B, T]: bool, or 0/1 integers as Hugging
    Face's ``attention_mask``, of the shape of input_ids, True (1) on a prefix of every row (the
    real tokens). Only checks: the caller builds its bool mask itself (``mask.bool()``), in plain
    sight. TypeError for another dtype; ValueError for another shape, other values, or padding
    before a real token."""
    if not isinstance(mask, Tensor) or mask.is_floating_point() or mask.is_complex():
        got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(
            f"{name}: expected a bool or 0/1 integer tensor [B, T] (True at real tokens), got {got}"
        )
    if mask.shape != input_ids.shape:
        raise ValueError(
            f"{name}: expected the shape of input_ids {tuple(input_ids.shape)}, got {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool:
        if ((mask != 0) & (mask != 1)).any():
            raise ValueError(f"{name}: expected 0/1 values, got {mask.unique().tolist()}")
    mask = mask.bool()  # a local copy to compare with the prefix below, not returned
    lengths = mask.sum(1)  # [B]
    prefix = torch.arange(mask.shape[1], device=mask.device) < lengths[:, None]  # [B, T]
    if not torch.equal(prefix, mask):
        raise ValueError(
            f"{name}: expected True on a prefix of each row (right padding), got a row with padding before a real token"
        )


# --- the language models and their sentences (lib.ngram, lib.rnnlm, lib.word2vec, lib.rnn_classifier) ---


def check_number(x, name: str, expected: str, ok) -> None:
    """ValueError unless x is an int or float (a bool is not) for which ``ok(x)`` holds; ``expected``
    says what was wanted ("a number > 0")."""
    if not is_number(x) or not ok(x):
        raise ValueError(f"{name}: expected {expected}, got {x!r}")


def check_bool(x, name: str) -> None:
    """TypeError unless x is True or False."""
    if not isinstance(x, bool):
        raise TypeError(f"{name}: expected a bool, got {type(x).__name__} {x!r}")


def check_str(x, name: str) -> None:
    """TypeError unless x is a str."""
    if not isinstance(x, str):
        raise TypeError(f"{name}: expected a str, got {type(x).__name__} {x!r}")


def check_choice(x, name: str, choices: tuple) -> None:
    """ValueError unless x is one of ``choices``."""
    if x not in choices:
        names = [repr(c) for c in choices]
        expected = f"{', '.join(names[:-1])} or {names[-1]}"
        raise ValueError(f"{name}: expected {expected}, got {x!r}")


def check_sizes(**sizes) -> None:
    """Every size an int >= 1 (``check_int``, naming it)."""
    for name, value in sizes.items():
        check_int(value, name, 1)


def check_token_batch(input_ids, attention_mask, vocab_size: int) -> None:
    """input_ids [B, T] ids in [0, vocab_size) (``check_ids``) and attention_mask None or a padding
    mask of their shape (``check_padding_mask``)."""
    check_ids(input_ids, "input_ids", vocab_size)
    if attention_mask is not None:
        check_padding_mask(attention_mask, input_ids)


def check_shape(x, name: str, shape: tuple, layout: str) -> None:
    """ValueError unless x is a tensor of exactly ``shape`` (``layout`` names its dims, "[V, E]")."""
    if not isinstance(x, Tensor) or tuple(x.shape) != tuple(shape):
        got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"{name}: expected a tensor of shape {tuple(shape)} {layout}, got {got}")


# --- the tokenizers (lib.bpe, lib.wordpiece, lib.basic_tokenizer) --------------------------------------


def check_word(word, name: str = "word") -> None:
    """ValueError unless word is a non-empty str."""
    if not isinstance(word, str) or not word:
        raise ValueError(f"{name}: expected a non-empty str, got {word!r}")


def check_word_counts(word_counts) -> None:
    """A dictionary {word: count}: non-empty words without whitespace, each counted an int >= 1."""
    from collections.abc import Mapping

    if not isinstance(word_counts, Mapping):
        raise TypeError(
            f"word_counts: expected a dict {{word: count}}, got {type(word_counts).__name__}"
        )
    if not word_counts:
        raise ValueError("word_counts: expected at least one word, got an empty dict")
    for w, c in word_counts.items():
        if not isinstance(w, str) or not w or any(ch.isspace() for ch in w):
            raise ValueError(f"word_counts: expected non-empty words without whitespace, got {w!r}")
        check_int(c, f"word_counts[{w!r}]", 1)


def check_id_list(ids, size: int) -> None:
    """ValueError unless ids (a list, or a 1-D integer tensor) are token ids in [0, size)."""
    if isinstance(ids, Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
            raise ValueError(
                f"ids: expected a 1-D tensor of integer token ids, got dtype {ids.dtype} and shape {tuple(ids.shape)}"
            )
        ids = ids.tolist()
    for i in ids:
        if not is_int(i) or not 0 <= i < size:
            raise ValueError(f"ids: expected token ids in [0, {size}), got {i!r}")


def check_text(text, name: str = "text") -> None:
    """TypeError unless text is a str."""
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected a str, got {type(text).__name__}")


# --- ELMo (lib.elmo) -----------------------------------------------------------------------------------


def check_type(x, name: str, expected: type) -> None:
    """TypeError unless x is an instance of ``expected``: "config: expected a BertConfig, got dict"."""
    if not isinstance(x, expected):
        raise TypeError(f"{name}: expected {_a(expected.__name__)}, got {type(x).__name__}")


def _a(noun: str) -> str:
    """``noun`` with its article: "a GPT", "an ELMoConfig", "an RNNLM" (an acronym read letter by
    letter: "an" before a letter whose name starts with a vowel sound)."""
    acronym = len(noun) > 1 and noun[:2].isupper()
    vowel_sound = noun[0] in ("AEFHILMNORSX" if acronym else "AEIOU")
    return f"{'an' if vowel_sound else 'a'} {noun}"


def check_probability(p, name: str, interval: str = "(0, 1]") -> None:
    """ValueError unless ``p`` is a number (not a bool) in ``interval``, "(0, 1]" or "[0, 1)"."""
    low, high = interval[0] == "[", interval[-1] == "]"  # closed ends

    def inside(v):
        return (0 <= v if low else 0 < v) and (v <= 1 if high else v < 1)

    check_number(p, name, f"a probability in {interval}", inside)


# --- the BERT family (lib.bert, lib.albert, lib.electra, lib.pretraining_data) -------------------


def check_bert_config(c) -> None:
    """The fields of a ``lib.bert.BertConfig``: sizes positive ints, heads dividing the width,
    dropout probabilities in [0, 1), layer_norm_eps and initializer_range positive."""
    for name in (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "type_vocab_size",
    ):
        check_int(getattr(c, name), name, 1)
    if c.hidden_size % c.num_attention_heads:
        raise ValueError(
            f"hidden_size={c.hidden_size} is not divisible by num_attention_heads={c.num_attention_heads}"
        )
    for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
        check_probability(getattr(c, name), name, "[0, 1)")
    for name in ("layer_norm_eps", "initializer_range"):
        check_number(getattr(c, name), name, "a positive number", lambda v: v > 0)


def check_bert_inputs(c, input_ids, token_type_ids=None, attention_mask=None) -> None:
    """The inputs of a BERT-family encoder (BERT, ALBERT) with config ``c``: ids within the
    vocabulary and the position table, segment ids of input_ids' shape, and the attention mask
    ([B, T] or [B, T, T], bool or 0/1)."""
    check_ids(input_ids, "input_ids", c.vocab_size, "the vocabulary")
    B, T = input_ids.shape
    if T > c.max_position_embeddings:
        raise ValueError(
            f"input_ids: expected at most max_position_embeddings={c.max_position_embeddings} tokens per sequence (the position table), got shape {tuple(input_ids.shape)}"
        )
    if token_type_ids is not None:
        segments = "segment ids: 0 for sentence A, 1 for sentence B"
        what = segments if c.type_vocab_size == 2 else "the segment table"
        check_ids(token_type_ids, "token_type_ids", c.type_vocab_size, what)
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids: expected shape {tuple(input_ids.shape)} (that of input_ids), got shape {tuple(token_type_ids.shape)}"
            )
    if attention_mask is None:
        return
    m = attention_mask
    if not isinstance(m, Tensor) or m.is_floating_point() or m.is_complex():
        got = m.dtype if isinstance(m, Tensor) else type(m).__name__
        raise TypeError(
            f"attention_mask: expected a bool or integer tensor (1/True = real token), got {got}"
        )
    if m.shape not in ((B, T), (B, T, T)):
        raise ValueError(
            f"attention_mask: expected shape [B, T] = {(B, T)} (1 = real token, 0 = padding) or [B, T, T] = {(B, T, T)}, got shape {tuple(m.shape)}"
        )
    if m.dtype != torch.bool and m.numel() and ((m != 0) & (m != 1)).any():
        raise ValueError(
            f"attention_mask: expected values 0 and 1, got values from {m.min().item()} to {m.max().item()}"
        )


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


def check_special_ids(special_ids, mask_token_id, vocab_size: int) -> None:
    """The masking ids of ``mask_tokens`` and ELECTRA's corruption: ``special_ids`` a collection of
    ids in [0, vocab_size) that leaves at least one ordinary id, ``mask_token_id`` an id there."""
    ids = None if isinstance(special_ids, (str, bytes, int)) else list(special_ids)
    if ids is None or not all(is_int(i) and 0 <= i < vocab_size for i in ids):
        raise ValueError(
            f"special_ids: expected a collection of ids in [0, {vocab_size}), got {special_ids!r}"
        )
    if len(set(ids)) >= vocab_size:
        raise ValueError(
            "special_ids: every id of the vocabulary is special; nothing can be chosen"
        )
    check_id(mask_token_id, "mask_token_id", vocab_size)


def check_mask_tokens(input_ids, vocab_size, mask_token_id, special_ids, prob, generator) -> None:
    """The arguments of ``lib.pretraining_data.mask_tokens`` (ids of any shape)."""
    if not isinstance(input_ids, Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
        got = input_ids.dtype if isinstance(input_ids, Tensor) else type(input_ids).__name__
        raise TypeError(f"input_ids: expected a tensor of token ids (torch.long), got {got}")
    check_int(vocab_size, "vocab_size", 2)
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(
            f"input_ids: expected ids in [0, {vocab_size}) (the vocabulary), got ids from {input_ids.min().item()} to {input_ids.max().item()}"
        )
    check_special_ids(special_ids, mask_token_id, vocab_size)
    check_probability(prob, "prob")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator: expected a torch.Generator or None, got {type(generator).__name__}"
        )


def check_nsp_stories(stories, n) -> None:
    """The arguments of ``lib.pretraining_data.make_nsp_pairs``: at least two stories (lists of
    sentences) with a sentence each, one of them with two or more; ``n`` >= 1."""
    if not isinstance(stories, (list, tuple)) or not all(
        isinstance(s, (list, tuple)) and all(isinstance(x, str) for x in s) for s in stories
    ):
        raise TypeError(
            f"stories: expected a list of stories, each a list of sentences (str), got {type(stories).__name__}"
        )
    if len(stories) < 2:
        raise ValueError(
            f"stories: expected at least 2 stories (NotNext takes a sentence from another story), got {len(stories)}"
        )
    if not any(len(s) >= 2 for s in stories):
        raise ValueError("stories: expected at least one story with 2 or more sentences, got none")
    check_int(n, "n", 1)
    non_empty = sum(len(s) >= 1 for s in stories)
    if non_empty < 2:
        raise ValueError(
            f"stories: expected two stories with at least one sentence each, got {non_empty}"
        )


def check_pretraining_examples(examples, batch_size, pair_type: type) -> None:
    """The examples of ``lib.pretraining_data.pretraining_batches``: a non-empty list (or tuple),
    all sentence pairs (``pair_type``) or all str; ``batch_size`` >= 1."""
    if not isinstance(examples, (list, tuple)) or not examples:
        raise ValueError(
            f"examples: expected a non-empty list of NSPPair or of str, got {examples!r:.60}"
        )
    if not (
        all(isinstance(e, pair_type) for e in examples) or all(isinstance(e, str) for e in examples)
    ):
        raise TypeError(
            f"examples: expected all NSPPair (sentence pairs) or all str (sentences), got a mix of {sorted({type(e).__name__ for e in examples})}"
        )
    check_int(batch_size, "batch_size", 1)


def check_electra_config(c, bert_config_type: type) -> None:
    """The fields of a ``lib.electra.ElectraConfig``."""
    check_type(c.discriminator, "discriminator", bert_config_type)
    g, depth = c.generator_layers, c.discriminator.num_hidden_layers
    if not is_int(g) or not 1 <= g <= depth:
        raise ValueError(
            f"generator_layers: expected an int in 1..{depth} (the discriminator's depth), got {g!r}"
        )
    check_probability(c.mask_prob, "mask_prob")
    check_number(c.disc_weight, "disc_weight", "a number >= 0", lambda w: w >= 0)


def check_electra_inputs(input_ids, vocab_size: int, mask_token_id, special_ids) -> None:
    """The batch of ELECTRA's corruption: ids [B, T] of the vocabulary, and the masking ids."""
    if (
        not isinstance(input_ids, Tensor)
        or input_ids.dtype not in (torch.int64, torch.int32)
        or input_ids.dim() != 2
    ):
        raise ValueError(
            f"input_ids: expected a [B, T] tensor of token ids, got {getattr(input_ids, 'dtype', type(input_ids).__name__)} {tuple(getattr(input_ids, 'shape', ()))}"
        )
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(
            f"input_ids: expected ids in [0, {vocab_size}), got ids from {input_ids.min().item()} to {input_ids.max().item()}"
        )
    check_special_ids(special_ids, mask_token_id, vocab_size)


# --- XLNet's masks (lib.xlnet) -------------------------------------------------------------------


def check_permutation(order) -> None:
    """``order`` is a permutation of 0..T-1: a 1-D integer tensor or a sequence of ints."""
    if isinstance(order, Tensor):
        if order.dim() != 1 or order.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"order: expected a 1-D tensor of positions, got {order.dtype} {tuple(order.shape)}"
            )
        values = order.tolist()
    elif isinstance(order, Sequence) and not isinstance(order, (str, bytes)):
        values = list(order)
    else:
        raise TypeError(
            f"order: expected a sequence of positions (a permutation of 0..T-1), got {type(order).__name__}"
        )
    if (
        not values
        or not all(is_int(v) for v in values)
        or sorted(values) != list(range(len(values)))
    ):
        raise ValueError(f"order: expected a permutation of 0..T-1, got {values!r:.80}")


def check_square_mask(mask, name: str = "mask") -> None:
    """``mask`` is a square bool tensor [T, T]."""
    if (
        not isinstance(mask, Tensor)
        or mask.dtype != torch.bool
        or mask.dim() != 2
        or mask.shape[0] != mask.shape[1]
    ):
        raise ValueError(
            f"{name}: expected a square bool tensor [T, T], got {getattr(mask, 'dtype', type(mask).__name__)} {tuple(getattr(mask, 'shape', ()))}"
        )


def check_segments(length, segment_length, memory_length) -> None:
    """``length`` and ``segment_length`` ints >= 1, ``memory_length`` None or an int >= 0."""
    check_int(length, "length", 1)
    check_int(segment_length, "segment_length", 1)
    if memory_length is not None:
        check_int(memory_length, "memory_length", 0)
