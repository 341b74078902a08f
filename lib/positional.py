"""Positional encodings: the sinusoidal table of the Transformer, the binary counting that motivates
it, relative positions as rotations, and learned position embeddings.

Shape legend (used in every docstring and shape comment below):

    B    batch (any leading dims, where a docstring says so)
    T    sequence length: positions 0 ... T-1
    P    number of rows of a position table (``max_len`` or ``n_positions``)
    D    model width (``d_model``); the table's column pair (2i, 2i+1) has frequency w_i
    Db   number of bits (``n_bits``)

Why: self-attention is blind to order (permuting the tokens only permutes the outputs), so each token's
embedding gets a vector that depends on its position added to it. The sinusoidal table (Vaswani et al.
2017, sec. 3.5) is the smooth cousin of writing the position in binary: column 0 flips fastest, each
later column more slowly. Its pair of columns (2i, 2i+1) is a point (sin w_i pos, cos w_i pos) on a
circle, so moving k positions rotates every pair by the angle w_i k: a fixed linear map that depends on
k only (``relative_rotation``), which is why the paper hoped the model could attend by relative position.

The tables are computed in float64 and rounded once to float32: a float32 angle pos * w_i would be off
by up to pos * 6e-8 radians before the sine is even taken.
"""

import torch
from torch import Tensor, nn

from lib._checks.positional import (
    check_binary_encoding_args,
    check_position_input,
    check_relative_rotation_args,
    check_table_args,
)

__all__ = [
    "sinusoidal_encoding",
    "binary_encoding",
    "relative_rotation",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
]


def _frequencies(d_model: int, base: float) -> Tensor:
    """w_i = 1 / base^(2i / d_model) for i = 0 ... ceil(D/2) - 1, float64 [ceil(D/2)]."""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # [ceil(D/2)]: 0, 2, 4, ...
    return base ** (-two_i / d_model)  # [ceil(D/2)]


def sinusoidal_encoding(max_len: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The sinusoidal table PE [max_len, d_model], float32  (Vaswani et al. 2017, sec. 3.5):

        PE[pos, 2i]     = sin(pos / base^(2i / d_model))
        PE[pos, 2i + 1] = cos(pos / base^(2i / d_model))

    Column pair i has wavelength 2 pi base^(2i / d_model): from 2 pi (columns 0, 1) up to nearly
    2 pi base. Row 0 is [0, 1, 0, 1, ...]. Deviation: none; the paper's d_model is even, here an odd
    d_model is allowed and its last column is a sin without its cos.
    """
    check_table_args(max_len, d_model, base)
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # [P, 1]
    angles = pos * _frequencies(d_model, base)  # [P, ceil(D/2)]
    pe = torch.empty(max_len, d_model, dtype=torch.float64)  # [P, D]
    pe[:, 0::2] = torch.sin(angles)  # even columns: [P, ceil(D/2)]
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])  # odd columns:  [P, floor(D/2)]
    return pe.float()


def binary_encoding(n_positions: int, n_bits: int) -> Tensor:
    """Positions 0 ... n_positions-1 written in binary, one bit per column, float 0/1 [P, Db].

    Column j holds bit j, bit 0 the least significant (so row 6 = [0, 1, 1, 0] with 4 bits, the
    reverse of how 0110 is written). Bit j flips every 2^j positions: the lowest bit changes fastest,
    the next at half that rate, and so on -- the intuition behind the sinusoidal table.
    """
    check_binary_encoding_args(n_positions, n_bits)
    pos = torch.arange(n_positions)[:, None]  # [P, 1]
    bits = torch.arange(n_bits)  # [Db]
    return ((pos >> bits) & 1).float()  # [P, Db]


def relative_rotation(k: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The fixed matrix M_k [d_model, d_model], float32, with PE[pos + k] = PE[pos] @ M_k.T for every pos
    (PE = ``sinusoidal_encoding``; k may be negative).

    Block-diagonal: the 2x2 block of column pair i is the rotation by the angle w_i k,
        [[cos w_i k,  sin w_i k],
         [-sin w_i k, cos w_i k]],
    from sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b. It does not
    depend on pos: this is the property Vaswani et al. 2017, sec. 3.5, give for choosing sinusoids
    ("PE_{pos+k} can be represented as a linear function of PE_pos"). M_k is orthogonal,
    M_a M_b = M_{a+b}, M_{-k} = M_k^T. d_model must be even: the last (sin) column of an odd-width
    table has no cos partner, and no fixed matrix shifts it.
    """
    check_relative_rotation_args(k, d_model, base)
    theta = k * _frequencies(d_model, base)  # [D/2]
    c, s = torch.cos(theta), torch.sin(theta)  # [D/2]
    even = torch.arange(0, d_model, 2)  # [D/2]: the sin columns 2i
    m = torch.zeros(d_model, d_model, dtype=torch.float64)  # [D, D]
    m[even, even], m[even, even + 1] = c, s  # sin(a + b) row
    m[even + 1, even], m[even + 1, even + 1] = -s, c  # cos(a + b) row
    return m.float()


class SinusoidalPositionalEncoding(nn.Module):
    """x + PE[:T], then dropout  (Vaswani et al. 2017, sec. 3.5; dropout on the sum as in sec. 5.4).

    forward(x [B, T, D]) -> [B, T, D] (any leading dims), T <= max_len. The table is the buffer ``pe``
    [max_len, D] = ``sinusoidal_encoding(max_len, d_model)``, cast to x's dtype. It has no parameters.
    ``pe`` is not persistent: a fixed function of (max_len, d_model) is not a weight, so it stays out of
    state_dicts. Scaling the embeddings by sqrt(d_model) (sec. 3.4) is the embedding's job, not this one's.
    check_inputs=False: no input checks in forward (a model that checked its input at its door).
    """

    def __init__(
        self, d_model: int, max_len: int = 512, dropout: float = 0.0, check_inputs: bool = True
    ):
        super().__init__()
        self.d_model, self.max_len, self.check_inputs = d_model, max_len, check_inputs
        pe = sinusoidal_encoding(max_len, d_model)  # [P, D]
        self.register_buffer("pe", pe, persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        if self.check_inputs:
            check_position_input(x, self.d_model, self.max_len)
        T = x.shape[-2]
        return self.dropout(x + self.pe[:T].to(x.dtype))  # [B, T, D] + [T, D] -> [B, T, D]


class LearnedPositionalEmbedding(nn.Module):
    """x + E[:T] with a learned table E [max_len, D]: the alternative that Vaswani et al. 2017, sec. 3.5,
    found "nearly identical" in results, and what GPT and BERT use (GPT-2 calls its table ``wpe``).

    forward(x [B, T, D]) -> [B, T, D] (any leading dims), T <= max_len; x must have the parameters' dtype.
    The table is ``embedding.weight`` of the nn.Embedding ``embedding``. Unlike the sinusoids, it
    cannot go past max_len: positions it never saw have no row.
    Initialization: N(0, 0.02^2), as GPT-1 (Radford et al. 2018, sec. 4.1) and Hugging Face's GPT-2
    do (OpenAI's GPT-2 code draws ``wpe`` with std 0.01); BERT's original code truncates the same
    normal at two standard deviations (nn.Embedding's default N(0, 1) would drown token embeddings of
    that scale).
    """

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        check_table_args(max_len, d_model)
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)  # weight [P, D]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: Tensor) -> Tensor:
        check_position_input(x, self.d_model, self.max_len, self.embedding.weight.dtype)
        T = x.shape[-2]
        return x + self.embedding.weight[:T]  # [B, T, D] + [T, D] -> [B, T, D]
