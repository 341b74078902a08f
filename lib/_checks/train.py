"""The input checks of lib.train, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_choice, check_int, check_number, is_int


def check_schedule(steps, lr, warmup_steps, decay, decays, step=None) -> None:
    """A learning-rate schedule: steps >= 1, lr > 0, 0 <= warmup_steps <= steps, decay one of
    ``decays``; and, if given, 0 <= step < steps."""
    check_int(steps, "steps", 1)
    check_number(lr, "lr", "a number > 0", lambda v: v > 0)
    if not is_int(warmup_steps) or not 0 <= warmup_steps <= steps:
        raise ValueError(
            f"warmup_steps: expected an int in [0, steps={steps}], got {warmup_steps!r}"
        )
    check_choice(decay, "decay", tuple(decays))
    if step is not None and (not is_int(step) or not 0 <= step < steps):
        raise ValueError(f"step: expected an int in [0, steps={steps}), got {step!r}")


def check_fit(
    model, steps, lr, warmup_steps, decay, decays, clip, weight_decay, stop_after
) -> None:
    """lib.train.fit's arguments: a torch.nn.Module, a schedule (``check_schedule``), clip None or
    > 0, weight_decay >= 0, stop_after None or in 1..steps; and the model has trainable parameters."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    check_schedule(steps, lr, warmup_steps, decay, decays)
    if clip is not None:
        check_number(clip, "clip", "None or a number > 0", lambda v: v > 0)
    check_number(weight_decay, "weight_decay", "a number >= 0", lambda v: v >= 0)
    if stop_after is not None and (not is_int(stop_after) or not 1 <= stop_after <= steps):
        raise ValueError(
            f"stop_after: expected None or an integer in 1..steps={steps}, got {stop_after!r}"
        )
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model: has no trainable parameters")


def check_loss(loss, step: int, rate: float) -> None:
    """What a loss_fn returned at a training step: a finite scalar tensor (ValueError if not a
    scalar tensor, FloatingPointError if not finite; the weights are then not updated)."""
    if not isinstance(loss, Tensor) or loss.numel() != 1:
        got = f"shape {tuple(loss.shape)}" if isinstance(loss, Tensor) else type(loss).__name__
        raise ValueError(f"loss_fn: expected a scalar tensor, got {got}")
    if not torch.isfinite(loss.detach()).all():
        raise FloatingPointError(
            f"loss_fn: the loss is {loss.item()} at step {step} (learning rate {rate:.3g}); the weights were not updated. Lower lr, clip the gradients or check the data."
        )


def check_epoch(n: int, epoch: int) -> None:
    """One pass over fit's ``batches`` (the ``epoch``-th, from 0) yielded ``n`` >= 1 batches."""
    if n == 0:
        what = "the iterable" if epoch == 0 else f"epoch {epoch + 1} (an exhausted iterator?)"
        raise ValueError(
            f"batches: {what} yielded no batch; pass a list of batches or a callable returning a fresh iterable, e.g. lambda: batches(...)"
        )


def check_metric_pair(out: tuple) -> None:
    """What a metric_fn returned as a tuple: a (total, count) pair."""
    if len(out) != 2:
        raise ValueError(
            f"metric_fn: expected a number or a (total, count) pair, got a tuple of {len(out)}"
        )


def check_metric_results(values: list, counts: float) -> None:
    """evaluate's results over all batches: numbers or (total, count) pairs, not both, and some."""
    if values and counts:
        raise ValueError(
            "metric_fn: returned numbers for some batches and (total, count) pairs for others"
        )
    if not values and not counts:
        raise ValueError("batches: yielded no batch (or only batches with count 0)")
