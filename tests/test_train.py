"""Tests of lib/train.py: the loss goes down, the schedule, clipping, determinism, epochs, evaluate,
and bad input."""

import math

import pytest
import torch
from torch import nn

from lib.train import History, evaluate, fit, lr_at


def regression_batches(n_batches=8, batch_size=16, seed=0):
    """A tiny linear regression task y = x w* + 0.5 (no noise), as a list of (x, y) batches."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(4, 1, generator=g)
    out = []
    for _ in range(n_batches):
        x = torch.randn(batch_size, 4, generator=g)
        out.append((x, x @ w + 0.5))
    return out


def mse(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def linear(seed=0):
    torch.manual_seed(seed)
    return nn.Linear(4, 1)


def test_loss_decreases_on_a_tiny_regression_task():
    model = linear()
    history = fit(model, regression_batches(), mse, steps=200, lr=0.05, progress=False)
    assert isinstance(history, History)
    assert len(history.losses) == len(history.lrs) == len(history.grad_norms) == 200
    assert history.seconds > 0
    assert sum(history.losses[-10:]) / 10 < 1e-3 * sum(history.losses[:10]) / 10


def test_schedule_values():
    # warmup: lr * (step + 1) / warmup_steps
    assert [lr_at(s, steps=10, lr=1.0, warmup_steps=4) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    # after warmup, p = (step - 4) / 6
    assert lr_at(4, steps=10, lr=2.0, warmup_steps=4, decay="cosine") == 2.0
    assert abs(lr_at(7, steps=10, lr=2.0, warmup_steps=4, decay="cosine") - 1.0) < 1e-12  # p = 1/2
    assert (
        abs(
            lr_at(9, steps=10, lr=2.0, warmup_steps=4, decay="cosine")
            - (1 + math.cos(math.pi * 5 / 6))
        )
        < 1e-12
    )
    assert abs(lr_at(7, steps=10, lr=2.0, warmup_steps=4, decay="linear") - 1.0) < 1e-12
    assert abs(lr_at(9, steps=10, lr=2.0, warmup_steps=4, decay="linear") - 2.0 / 6) < 1e-12
    assert lr_at(9, steps=10, lr=2.0, warmup_steps=4, decay="constant") == 2.0
    assert lr_at(0, steps=1, lr=0.1) == 0.1
    assert lr_at(0, steps=3, lr=0.3, warmup_steps=3, decay="linear") == pytest.approx(0.1)


def test_fit_uses_the_schedule():
    """With a constant gradient, each AdamW step moves the weight by (almost exactly) the step's
    learning rate: Adam's bias-corrected m / sqrt(v) is then 1. So the weight's path shows the rates."""
    w = nn.Parameter(torch.zeros(1))
    model = nn.Module()
    model.w = w
    history = fit(
        model,
        [None],
        lambda m, _: 3.0 * m.w.sum(),
        steps=6,
        lr=0.1,
        warmup_steps=2,
        decay="linear",
        clip=None,
        progress=False,
    )
    expected = [lr_at(s, steps=6, lr=0.1, warmup_steps=2, decay="linear") for s in range(6)]
    assert history.lrs == expected
    assert abs(w.item() + sum(expected)) < 1e-6  # Adam's eps=1e-8 changes it by ~1e-9 / step


def test_clipping_bounds_the_gradient_norm():
    def huge(model, batch):
        return 1e4 * mse(model, batch)

    model = linear()
    history = fit(model, regression_batches(), huge, steps=1, clip=0.5, progress=False)
    norm = torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()
    assert history.grad_norms[0] > 100  # the gradient was large...
    assert abs(norm - 0.5) < 1e-5  # ...and was scaled to the clip norm
    model = linear()
    history = fit(model, regression_batches(), huge, steps=1, clip=None, progress=False)
    norm = torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()
    assert abs(norm - history.grad_norms[0]) < 1e-3 * norm  # no clipping: unchanged


def dropout_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 1))


def test_same_seed_same_losses():
    def run(seed):
        return fit(
            dropout_model(), regression_batches(), mse, steps=20, progress=False, seed=seed
        ).losses

    a, b, c = run(1), run(1), run(2)
    assert a == b
    assert a != c  # dropout masks differ with the seed


def test_stop_after_replays_the_beginning_of_a_longer_run():
    full = fit(
        linear(),
        regression_batches(),
        mse,
        steps=30,
        warmup_steps=5,
        lr=0.05,
        progress=False,
        seed=0,
    )
    start = fit(
        linear(),
        regression_batches(),
        mse,
        steps=30,
        warmup_steps=5,
        lr=0.05,
        progress=False,
        seed=0,
        stop_after=12,
    )
    short = fit(
        linear(),
        regression_batches(),
        mse,
        steps=12,
        warmup_steps=5,
        lr=0.05,
        progress=False,
        seed=0,
    )
    assert start.losses == full.losses[:12] and start.lrs == full.lrs[:12]
    assert short.lrs[6:] != full.lrs[6:12]  # a shorter run decays sooner: not the same replay
    for bad in (0, 31, 2.0, True):
        with pytest.raises(
            ValueError,
            match=r"stop_after: expected None or an integer in 1..steps=30",
        ):
            fit(linear(), regression_batches(), mse, steps=30, progress=False, stop_after=bad)


def test_callable_batches_are_re_called_and_lists_re_iterated():
    calls = []

    def make():
        calls.append(1)
        return iter(regression_batches(n_batches=3))

    fit(linear(), make, mse, steps=7, progress=False)
    assert len(calls) == 3  # epochs of 3, 3 and 1 batches
    seen = []
    fit(
        linear(),
        regression_batches(n_batches=3),
        lambda m, b: seen.append(b) or mse(m, b),
        steps=7,
        progress=False,
    )
    assert len(seen) == 7 and seen[3] is seen[0] and seen[6] is seen[0]


def test_exhausted_or_empty_batches_are_an_error():
    with pytest.raises(ValueError, match="batches: epoch 2 .* yielded no batch"):
        fit(linear(), iter(regression_batches(n_batches=2)), mse, steps=5, progress=False)
    with pytest.raises(ValueError, match="batches: the iterable yielded no batch"):
        fit(linear(), [], mse, steps=5, progress=False)


def test_train_mode_during_fit_and_eval_mode_after():
    modes = []
    model = linear()
    fit(
        model,
        regression_batches(),
        lambda m, b: modes.append(m.training) or mse(m, b),
        steps=3,
        progress=False,
    )
    assert modes == [True] * 3 and model.training is False


def test_progress_bar(capsys):
    fit(linear(), regression_batches(), mse, steps=3, progress=False)
    assert capsys.readouterr().err == ""
    fit(linear(), regression_batches(), mse, steps=3, progress=True, desc="my run")
    err = capsys.readouterr().err
    assert "my run" in err and "loss=" in err


def test_history_smoothed():
    h = History(losses=[4.0, 2.0, 6.0, 0.0])
    assert h.smoothed(2) == [4.0, 3.0, 4.0, 3.0]
    assert h.smoothed(1) == h.losses
    assert h.smoothed(10) == [4.0, 3.0, 4.0, 3.0]
    with pytest.raises(ValueError, match="window: expected an int >= 1, got 0"):
        h.smoothed(0)


def test_evaluate_weights_totals_and_restores_mode():
    model = linear()
    model.train()
    data = [1, 2, 3]
    assert evaluate(model, data, lambda m, b: float(b)) == 2.0  # mean over batches
    assert evaluate(model, data, lambda m, b: (b, b * 2)) == 0.5  # sum(total) / sum(count)
    assert model.training
    grads = []
    evaluate(model, data, lambda m, b: grads.append(torch.is_grad_enabled() or m.training) or 0.0)
    assert grads == [False] * 3


def test_bad_input():
    model, data = linear(), regression_batches()
    for kwargs, message in [
        (dict(steps=0), "steps: expected an int >= 1, got 0"),
        (dict(steps=5, lr=0), "lr: expected a number > 0, got 0"),
        (dict(steps=5, warmup_steps=6), r"warmup_steps: expected an int in \[0, steps=5\], got 6"),
        (dict(steps=5, decay="exp"), "decay: expected"),
        (dict(steps=5, clip=0), "clip: expected None or a number > 0, got 0"),
        (dict(steps=5, weight_decay=-1), "weight_decay"),
    ]:
        with pytest.raises(ValueError, match=message):
            fit(model, data, mse, progress=False, **kwargs)
    with pytest.raises(ValueError, match=r"loss_fn: expected a scalar tensor, got shape \(16, 1\)"):
        fit(model, data, lambda m, b: m(b[0]), steps=2, progress=False)
    with pytest.raises(TypeError, match="model: expected a torch.nn.Module"):
        fit(lambda x: x, data, mse, steps=2, progress=False)
    with pytest.raises(ValueError, match="batches: yielded no batch"):
        evaluate(model, [], lambda m, b: 1.0)
