"""lib.extrapolation: the tiny decoder of chapter 18's length measurement, with each of its five kinds of
positions, and the previous-token task."""

import pytest
import torch

from lib.extrapolation import (
    POSITIONS,
    TinyConfig,
    TinyDecoder,
    previous_token_accuracy,
    previous_token_batch,
    previous_token_loss,
)
from lib.train import fit


def ids(B=2, T=12, seed=0):
    return previous_token_batch(B, T, 16, torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("positions", POSITIONS)
def test_shapes_and_causality(positions):
    torch.manual_seed(0)
    model = TinyDecoder(TinyConfig(positions=positions, max_len=16)).eval()
    x = ids()
    changed = x.clone()
    changed[:, 7:] = (changed[:, 7:] + 1) % 16  # only the future of position 6 changes
    with torch.no_grad():
        a, b = model(x), model(changed)
    assert a.shape == (2, 12, 16)
    assert torch.equal(a[:, :7], b[:, :7]) and (a[:, 7:] - b[:, 7:]).abs().max() > 1e-4


@pytest.mark.parametrize("positions, reaches", [("learned", False), ("sinusoidal", False),
                                                ("rope", True), ("alibi", True), ("none", True)])  # fmt: skip
def test_only_tables_stop_at_max_len(positions, reaches):
    model = TinyDecoder(TinyConfig(positions=positions, max_len=8))
    if reaches:
        assert model(ids(T=20)).shape == (2, 20, 16)
    else:
        with pytest.raises(ValueError, match="max_len"):
            model(ids(T=20))


def test_positions_change_the_model_and_none_sees_none():
    torch.manual_seed(0)
    none = TinyDecoder(TinyConfig(positions="none"))
    torch.manual_seed(0)
    alibi = TinyDecoder(TinyConfig(positions="alibi"))
    x = ids()
    with torch.no_grad():
        assert (none(x) - alibi(x)).abs().max() > 1e-6  # the same weights, the bias differs
        # without positions, the first token's output depends on that token only
        first = none(x[:, :1])
        assert torch.allclose(none(x)[:, :1], first, atol=1e-6)


def test_a_short_training_learns_the_previous_token():
    torch.manual_seed(0)
    model = TinyDecoder(TinyConfig(positions="rope"))
    g = torch.Generator().manual_seed(0)
    before = previous_token_accuracy(model, ids(64, 16, seed=5))
    fit(model, lambda: (previous_token_batch(32, 16, 16, g) for _ in range(50)), previous_token_loss,
        steps=150, lr=3e-3, warmup_steps=15, progress=False)  # fmt: skip
    after = previous_token_accuracy(model, ids(64, 16, seed=5))
    assert before < 0.2 and after > 0.9


def test_bad_configs_are_named():
    with pytest.raises(ValueError, match="positions"):
        TinyConfig(positions="relative")
    with pytest.raises(ValueError, match="n_heads"):
        TinyConfig(d_model=30, n_heads=4)
    with pytest.raises(TypeError, match="config"):
        TinyDecoder({"positions": "rope"})
    with pytest.raises(ValueError, match="length"):
        previous_token_batch(2, 1, 16, torch.Generator())
