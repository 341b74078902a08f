"""One small training loop for every chapter that trains a model: ``fit`` and ``evaluate``.

    history = fit(model, lambda: batches(train, src_vocab, tgt_vocab, 64), loss_fn, steps=500,
                  lr=3e-3, warmup_steps=50, decay="cosine")
    plt.plot(history.smoothed(20))

Each step: loss = loss_fn(model, batch); backward; clip the gradient norm; one AdamW step
(Loshchilov & Hutter 2019: Adam with weight decay applied to the weights directly, not through the
gradient) at the learning rate of the schedule ``lr_at``: linear warmup from lr / warmup_steps
to lr over the first warmup_steps steps, as in Vaswani et al. 2017 (sec. 5.3, who then decay with
1/sqrt(step); we offer cosine, linear or constant decay instead), then a decay to 0 at ``steps``.

The model is in train mode during fit (dropout on) and in eval mode afterwards. Each batch is
moved to the device of the model's parameters before ``loss_fn`` sees it (tensors inside tuples,
lists, dicts, NamedTuples and dataclasses too), so the same call trains on a CPU or a GPU: move the
model (``model.to("cuda")``) and nothing else.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from lib._checks.train import (
    check_epoch,
    check_fit,
    check_loss,
    check_metric_pair,
    check_metric_results,
    check_schedule,
)
from lib._validate import check_int

__all__ = ["History", "fit", "evaluate", "lr_at"]

DECAYS = ("cosine", "linear", "constant")


@dataclass
class History:
    """What ``fit`` records: one entry per step in ``losses``, ``lrs`` (the learning rate used) and
    ``grad_norms`` (the gradient's total L2 norm before clipping); ``seconds`` of wall time."""

    losses: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    grad_norms: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def smoothed(self, window: int = 20) -> list[float]:
        """Trailing moving average of the losses: entry i is the mean of losses[max(0, i-window+1) : i+1]
        (same length as ``losses``; the first entries average fewer steps)."""
        check_int(window, "window", 1)
        out, total = [], 0.0
        for i, x in enumerate(self.losses):
            total += x
            if i >= window:
                total -= self.losses[i - window]
            out.append(total / min(i + 1, window))
        return out


def lr_at(
    step: int, *, steps: int, lr: float, warmup_steps: int = 0, decay: str = "cosine"
) -> float:
    """The learning rate of 0-based step `step` of `steps`.

    Warmup: lr * (step + 1) / warmup_steps for step < warmup_steps. After it, with
    p = (step - warmup_steps) / (steps - warmup_steps) in [0, 1): "cosine" lr * (1 + cos(pi p)) / 2,
    "linear" lr * (1 - p), "constant" lr. So the first step after warmup uses the full lr and the
    last step a small positive one.
    """
    check_schedule(steps, lr, warmup_steps, decay, DECAYS, step)
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    p = (step - warmup_steps) / (steps - warmup_steps) if steps > warmup_steps else 0.0
    if decay == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * p))
    if decay == "linear":
        return lr * (1.0 - p)
    return lr


def _batch_stream(batches) -> Iterable:
    """Endless stream of batches: re-calls a callable (or re-iterates a re-iterable such as a list)
    each time an epoch ends."""
    make = batches if callable(batches) else (lambda: batches)
    epoch = 0
    while True:
        n = 0
        for batch in make():
            n += 1
            yield batch
        check_epoch(n, epoch)
        epoch += 1


def to_device(batch, device: torch.device):
    """``batch`` with every tensor in it moved to ``device`` (tuples, lists, dicts, NamedTuples and
    dataclasses are rebuilt around the moved tensors; anything else is returned as it is). A batch
    already on ``device`` is returned itself, not a copy."""
    if isinstance(batch, Tensor):
        return batch.to(device)
    if isinstance(batch, (tuple, list)):
        items = [to_device(x, device) for x in batch]
        if all(a is b for a, b in zip(items, batch)):
            return batch
        if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a NamedTuple
            return type(batch)(*items)
        return type(batch)(items)
    if isinstance(batch, dict):
        items = {k: to_device(v, device) for k, v in batch.items()}
        return batch if all(items[k] is batch[k] for k in batch) else items
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        fields = [f.name for f in dataclasses.fields(batch) if f.init]
        moved = {name: to_device(getattr(batch, name), device) for name in fields}
        if all(moved[name] is getattr(batch, name) for name in fields):
            return batch
        return dataclasses.replace(batch, **moved)
    return batch


def _step(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], Tensor],
    batch: Any,
    optimizer: torch.optim.Optimizer,
    params: list[nn.Parameter],
    clip: float | None,
    step: int,
    rate: float,
) -> tuple[float, float]:
    """One optimizer step on `batch`: the loss, its gradient clipped to `clip` (None: not clipped),
    the update. Returns the loss and the gradient norm before clipping; raises, before any update,
    where either is not finite."""
    loss = loss_fn(model, batch)
    check_loss(loss, step, rate)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    max_norm = clip if clip is not None else float("inf")
    # returns the norm before clipping
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
    if not math.isfinite(float(norm)):
        optimizer.zero_grad(set_to_none=True)
        raise FloatingPointError(
            f"loss_fn: the gradient norm is {float(norm)} at step {step} (learning rate {rate:.3g}); the weights were not updated. Lower lr or clip the gradients."
        )
    optimizer.step()
    return loss.item(), float(norm)


# Long in its arguments and their docstring only: the body is some 30 lines.
def fit(
    model: nn.Module,
    batches: Iterable | Callable[[], Iterable],
    loss_fn: Callable[[nn.Module, Any], Tensor],
    *,
    steps: int,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    warmup_steps: int = 0,
    decay: str = "cosine",
    clip: float | None = 1.0,
    progress: bool = True,
    desc: str = "training",
    seed: int | None = None,
    stop_after: int | None = None,
) -> History:
    """Train `model` for `steps` optimizer steps and return the History.

    batches: an iterable of batches (a list is re-iterated every epoch; an endless generator such
        as ``lib.data.epochs(...)`` is simply consumed), or a zero-argument callable returning a
        fresh iterable, called again whenever one is exhausted (i.e. once per epoch).
    loss_fn(model, batch) -> scalar tensor to minimize.
    lr, warmup_steps, decay: the schedule (see ``lr_at``); weight_decay: AdamW's decoupled decay.
    clip: maximum L2 norm of the whole gradient (``torch.nn.utils.clip_grad_norm_``), None for no
        clipping. The clipped gradients of the last step stay in the parameters' ``.grad``.
    progress: a tqdm progress bar showing a running loss. seed: if given, ``torch.manual_seed(seed)``
        first (dropout and any other torch randomness inside the loop are then reproducible).
    stop_after: if given, stop after this many of the `steps` steps, with the schedule of the full run
        (to replay the beginning of a long training run exactly, as a check that it is reproducible).
    """
    check_fit(model, steps, lr, warmup_steps, decay, DECAYS, clip, weight_decay, stop_after)
    if seed is not None:
        torch.manual_seed(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    device = params[0].device
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    run = steps if stop_after is None else stop_after
    bar = tqdm(total=run, desc=desc, disable=not progress, leave=True)
    history, running = History(), None
    stream = _batch_stream(batches)
    model.train()
    start = time.perf_counter()
    try:
        for step in range(run):
            rate = lr_at(step, steps=steps, lr=lr, warmup_steps=warmup_steps, decay=decay)
            for group in optimizer.param_groups:
                group["lr"] = rate
            batch = to_device(next(stream), device)
            value, norm = _step(model, loss_fn, batch, optimizer, params, clip, step, rate)
            history.losses.append(value)
            history.lrs.append(rate)
            history.grad_norms.append(norm)
            running = value if running is None else 0.95 * running + 0.05 * value
            bar.update(1)
            if step % 10 == 0 or step == run - 1:
                bar.set_postfix(loss=f"{running:.4f}")
    finally:
        bar.close()
        history.seconds = time.perf_counter() - start
        model.eval()
    return history


@torch.no_grad()
def evaluate(
    model: nn.Module, batches: Iterable, metric_fn: Callable[[nn.Module, Any], Any]
) -> float:
    """Average a metric over batches, in eval mode and without gradients (the model's mode is
    restored afterwards).

    Each batch is moved to the model's device first (see ``fit``). metric_fn(model, batch) returns
    either a number (averaged over batches, each counting once) or
    a pair (total, count), e.g. (correct tokens, tokens), summed over batches: total / count.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters(), torch.empty(0)).device
    totals, counts, values = 0.0, 0.0, []
    try:
        for batch in batches:
            out = metric_fn(model, to_device(batch, device))
            if isinstance(out, tuple):
                check_metric_pair(out)
                totals += float(out[0])
                counts += float(out[1])
            else:
                values.append(float(out))
    finally:
        model.train(was_training)
    check_metric_results(values, counts)
    return sum(values) / len(values) if values else totals / counts
