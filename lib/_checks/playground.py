"""The input checks of lib.playground, built on the primitives of ``lib._validate``. The playground's
constants (its tasks, positions, norms, table length, longest sequence and vocabulary) come in as
arguments: this file does not import lib.playground."""

from __future__ import annotations

from lib._validate import check_bool, check_choice, check_int, check_number, check_sizes


def check_playground_config(c, tasks, positionals, norms, table, max_length, vocab) -> None:
    """A PlaygroundConfig: its choices among ``tasks``, ``positionals`` and ``norms``; sizes >= 1,
    n_kv_heads dividing n_heads and n_heads dividing d_model (an even head width for RoPE); a
    training length as ``check_length`` allows, ``table`` for learned positions; a bool ``causal``
    and a learning rate in (0, 10]."""
    check_choice(c.task, "task", tasks)
    check_choice(c.positional, "positional", positionals)
    check_choice(c.norm, "norm", norms)
    check_sizes(
        n_layers=c.n_layers, n_heads=c.n_heads, n_kv_heads=c.n_kv_heads, d_model=c.d_model,
        batch_size=c.batch_size,
    )  # fmt: skip
    if c.n_heads % c.n_kv_heads:
        raise ValueError(
            f"n_kv_heads: each key/value head serves the same number of query heads, expected a "
            f"divisor of n_heads={c.n_heads}, got {c.n_kv_heads}"
        )
    check_int(c.seed, "seed", 0)
    if c.d_model % c.n_heads:
        raise ValueError(f"d_model: expected a multiple of n_heads={c.n_heads}, got {c.d_model}")
    check_length(c.task, c.train_length, max_length, vocab)
    if c.positional == "learned" and c.train_length != table:
        raise ValueError(
            f"train_length: learned positions have a table of {table} rows, "
            f"expected {table}, got {c.train_length}"
        )
    if c.positional == "rope" and (c.d_model // c.n_heads) % 2:
        raise ValueError(
            f"d_model: rope turns pairs of coordinates, expected an even head width "
            f"d_model / n_heads, got {c.d_model} / {c.n_heads}"
        )
    check_bool(c.causal, "causal")
    check_number(c.lr, "lr", "a learning rate in (0, 10]", lambda v: 0 < v <= 10)


def check_length(task: str, length: int, max_length: int, vocab: int) -> None:
    """A sequence length for ``task``: an int in 2 .. max_length, even for brackets (pairs), at most
    ``vocab`` for position (its answers are positions)."""
    check_int(length, "length", 2)
    if length > max_length:
        raise ValueError(f"length: expected at most {max_length}, got {length}")
    if task == "brackets" and length % 2:
        raise ValueError(f"length: brackets come in pairs, expected an even length, got {length}")
    if task == "position" and length > vocab:
        raise ValueError(
            f"length: position's answers are positions, symbols 0 to {vocab - 1}; "
            f"expected at most {vocab}, got {length}"
        )


def check_batch_args(task, batch_size, length, tasks, max_length, vocab) -> None:
    """make_batch's arguments: ``task`` one of ``tasks``, batch_size >= 1, ``check_length``."""
    check_choice(task, "task", tasks)
    check_int(batch_size, "batch_size", 1)
    check_length(task, length, max_length, vocab)


def check_beyond_table(positional: str, L: int, table: int) -> None:
    """Positions beyond the ``table`` rows (L > table): none for learned positions, which have no
    vector there."""
    if positional == "learned":
        raise ValueError(
            f"input_ids: learned positions have a table of {table} rows and no vector for "
            f"a position beyond it; expected at most {table} tokens, got {L}"
        )
