"""The Attention Playground as a figure: the same run in the kernel and in the page.

:func:`playground_figure` trains ``lib.playground.Run`` in the kernel (the same batches, weights and
steps as the page: web/src/figures/playground.js) and returns a :class:`lib.viz.live.LiveFigure`:

- on the site, the page draws this run at once and trains again in the reader's browser on Play;
- in Jupyter and Colab, a form with the same settings trains in the kernel and redraws the same
  pictures (loss and held-out accuracy against steps, every head's attention on a probe sequence);
- a test length beyond the training length 8 (``test_length``) adds, as in the page, the held-out
  accuracy on longer sequences (``Run.held_out(length)``) as a second, dashed curve;
- elsewhere, the PNG of the run.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from lib import playground as pg
from lib.viz.heatmap import attention_heatmap
from lib.viz.interactive import PHONE_RC, figure_png
from lib.viz.live import LiveFigure

__all__ = ["PROBES", "playground_figure", "train_run", "draw_run"]

HELD_EVERY = 25  # as the page: held-out accuracy every 25 steps
TEST_LENGTHS = (8, 16, 32)  # as the page's test-length control (tools/export_playground.py)

PROBES = {
    "copy": "3 1 4 1 5 9 2 6",
    "reverse": "3 1 4 1 5 9 2 6",
    "sort": "3 1 4 1 5 9 2 6",
    "brackets": "(1 [2 ]0 )3 [1 ]2 (0 )1",
    "induction": "1 2 3 1 2 4 1 2",
    "position": "- 3 1 4 1 5 9 2",
}


def parse_probe(task: str, text: str) -> list[int]:
    """The ids of a probe written as the page writes it (``lib.playground.symbols``)."""
    table = {s: i for i in range(pg.VOCAB) for s in [pg.symbols(task, [i])[0]]}
    ids = [table.get(p) for p in text.split()]
    if None in ids or len(ids) != pg.LENGTH or pg.answer(task, ids) is None:
        raise ValueError(f"probe: expected {pg.LENGTH} symbols of the {task} task, got {text!r}")
    return ids


def train_run(
    config: pg.PlaygroundConfig, steps: int, test_length: int | None = None
) -> tuple[pg.Run, list[list[float]]]:
    """``steps`` steps of a run; returns it and its held-out sequence accuracy every 25 steps,
    [t, accuracy], or with a ``test_length`` beyond 8 [t, accuracy, accuracy at that length]."""
    if test_length not in (None, *TEST_LENGTHS):
        raise ValueError(f"test_length: expected one of {TEST_LENGTHS}, got {test_length!r}")
    test = test_length if test_length and test_length != config.train_length else None
    if test and config.positional == "learned":
        raise ValueError(
            f"test_length: learned positions have a table of {pg.LENGTH} rows and no vector for "
            f"a position beyond it; expected {pg.LENGTH} with them, got {test_length}"
        )
    if test:  # a task with no sequences of that length: said now, not after the training
        pg.make_batch(config.task, 1, pg.Mulberry32(0), test)
    run, held = pg.Run(config), []
    # One thread: as fast for a model this small, and far faster when the cores are busy (two
    # threads then wait for each other: on this book's 2-core machine under load, 69 and 88 s for
    # two 300-step runs with two threads, 3 to 5 s each with one).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(steps):
            run.step()
            if run.t % HELD_EVERY == 0:
                held.append([run.t, run.held_out()[1]] + ([run.held_out(test)[1]] if test else []))
    finally:
        torch.set_num_threads(threads)
    return run, held


def probe_run(run: pg.Run, probe: list[int]) -> tuple[torch.Tensor, list[int]]:
    """Every layer's and head's attention on ``probe`` ([N, H, L, L]) and the model's answer."""
    with torch.no_grad():
        out = run.sync()(torch.tensor([probe]), return_attention=True)
    return torch.stack(out.attentions)[:, 0], out.logits[0].argmax(-1).tolist()


def draw_run(
    run: pg.Run, held: list, probe: list[int], narrow: bool = False, test_length: int | None = None
) -> plt.Figure:
    """Loss and held-out accuracy against steps, then every layer's and head's attention on ``probe``.
    ``narrow``: drawn for a phone (5.2 inches wide, 11-point text), the curves above the maps;
    ``test_length``: the length of ``held``'s third column (``train_run``), drawn dashed and thin
    over the wide curve of the training length, so that both show where they coincide."""
    if not isinstance(narrow, bool):
        raise TypeError(f"narrow: expected True or False, got {narrow!r}")
    c = run.config
    att = probe_run(run, probe)[0]  # [N, H, L, L]
    if narrow:
        # The curves across the top, the maps below two to a row (layer by layer, head by
        # head), 5.2 inches wide with 11-point text: about 9.5 CSS px high where a 360 px phone
        # shows it 330 px wide.
        n_maps = c.n_layers * c.n_heads
        cols = min(n_maps, 2)
        rows = -(-n_maps // cols)
        with plt.rc_context(PHONE_RC):
            fig = plt.figure(figsize=(5.2, 3.6 + 3.0 * rows), dpi=100, layout="constrained")
            grid = fig.add_gridspec(1 + rows, cols, height_ratios=[2.8] + [2.6] * rows)
            ax = fig.add_subplot(grid[0, :])
            maps = [fig.add_subplot(grid[1 + i // cols, i % cols]) for i in range(n_maps)]
            _draw_run(fig, ax, maps, run, held, probe, att, small=11, test_length=test_length)
        return fig
    # One row of maps per layer, the curves on the left across all rows: a figure at most
    # 1 + n_heads panels wide, whose text stays readable at the page's width (9 pt ticks at
    # 100 dpi: 12.5 px, about 11 px where a 720 px column scales the picture down).
    fig = plt.figure(
        figsize=(3.6 + 2.4 * c.n_heads, 2.8 * c.n_layers), dpi=100, layout="constrained"
    )
    grid = fig.add_gridspec(c.n_layers, 1 + c.n_heads)
    ax = fig.add_subplot(grid[:, 0])
    maps = [
        fig.add_subplot(grid[layer, 1 + head])
        for layer in range(c.n_layers)
        for head in range(c.n_heads)
    ]
    _draw_run(fig, ax, maps, run, held, probe, att, test_length=test_length)
    return fig


# the held-out curve at the training length, drawn wide under the thin dashed one at the test
# length: where both are at the same accuracy (copy with ALiBi: 100% at 8 and at 32), a band of
# the first shows on each side of the second
_HELD_LW, _HELD_MS = 4.5, 6


# Long by design: one drawing step after another of one picture, in the order they are drawn.
def _draw_run(fig, ax, maps, run, held, probe, att, small=None, test_length=None):
    """The curves on ``ax`` and the maps on ``maps``; ``small``: the legend's and title's size in
    points, and one colour bar below the maps (default: 8 and 9, a colour bar beside each map)."""
    c = run.config
    losses = [h[0] for h in run.history]
    ax.plot(range(1, len(losses) + 1), losses, color="#e8710a", label="training loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax2 = ax.twinx()
    ax2.plot(
        [h[0] for h in held],
        [h[1] for h in held],
        color="#1f77b4",
        marker="o",
        ms=_HELD_MS,
        lw=_HELD_LW,
        label="held-out sequences right",
    )
    test = [h for h in held if len(h) > 2]  # [t, accuracy, accuracy at the test length]
    if test:
        ax2.plot(
            [h[0] for h in test],
            [h[2] for h in test],
            color="#9e3d9e",
            marker="s",
            ms=3,
            lw=1.5,
            linestyle="--",
            label="held out at the test length",
        )
    # headroom above both curves (loss at most its first value, accuracy at most 1) for the key,
    # of two entries or, with the test length's curve, three
    room = 2.1 if test else 1.35
    ax.set_ylim(0, room * max(losses, default=1.0))
    ax2.set_ylim(0, room)
    ax2.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax2.set_ylabel("held-out sequences right")
    ax2.spines["right"].set_visible(True)  # the book's style hides it: the ticks would float
    # a key to the two curves, as the page's own has; on the twin axes, which are drawn last,
    # with an opaque frame, so that an accuracy curve at 1.0 passes behind it, not through its text
    ax2.legend(
        ax.get_lines() + ax2.get_lines(),
        ["training loss (left axis)", "held-out sequences\nright (right axis)"]
        + ([f"held out at length {test_length}\n(sequences right)"] if test else []),
        loc="upper right",
        fontsize=small or 8,
        handlelength=1.5,
        frameon=True,
        framealpha=1.0,
        facecolor="white",
        edgecolor="0.8",
    )
    mask = "causal" if c.causal else "bidirectional"
    ax.set_title(f"{c.task}, positions: {c.positional}, {mask}", fontsize=small or 9)
    labels = pg.symbols(c.task, probe)
    for i, ax in enumerate(maps):
        layer, head = divmod(i, c.n_heads)
        attention_heatmap(
            att[layer, head],
            labels,
            labels,
            ax=ax,
            title=f"layer {layer}, head {head}",
            annotate=False,
            colorbar=small is None,
        )
    if small is not None:  # one colour bar for all the maps, below them
        fig.colorbar(
            maps[0].images[0], ax=maps, location="bottom", shrink=0.7, label="attention weight"
        )


# Long by its data: the alt text and the page's example, written out one field a line.
def playground_figure(
    config: pg.PlaygroundConfig | None = None,
    steps: int = 300,
    probe: str | None = None,
    caption: str | None = None,
    trained: tuple[pg.Run, list] | None = None,
    narrow: bool = False,
    test_length: int = pg.LENGTH,
) -> LiveFigure:
    """The Playground, first showing ``steps`` steps of ``config`` trained in the kernel (or the
    ``trained`` run and held-out list that ``train_run(config, steps, test_length)`` returned).
    ``narrow``: its pictures drawn for a phone, the curves above the attention maps
    (:func:`draw_run`); ``test_length``: the page's test-length setting, 16 or 32 for a second
    held-out curve on longer sequences."""
    config = config or pg.PlaygroundConfig()
    probe_ids = parse_probe(config.task, probe or PROBES[config.task])
    if trained is not None and (trained[0].config != config or trained[0].t != steps):
        raise ValueError(
            f"trained: expected a run of {steps} steps of {config}, got {trained[0].t} steps of {trained[0].config}"
        )
    run, held = trained or train_run(config, steps, test_length)
    fig = draw_run(run, held, probe_ids, narrow, test_length)
    png = figure_png(fig)
    plt.close(fig)
    last = held[-1][1] if held else run.held_out()[1]
    first, second = ("Top", "Below") if narrow else ("Left", "Right")
    alt = (
        f"{first}: the training loss of the {config.task} task falling from {run.history[0][0]:.2f} to "
        f"{run.history[-1][0]:.3f} over {steps} steps, and the held-out sequence accuracy reaching {100 * last:.0f}%. "
        f"{second}: the attention of each of the {config.n_layers * config.n_heads} heads on the probe "
        f"{' '.join(pg.symbols(config.task, probe_ids))}."
    )
    if held and len(held[-1]) > 2:
        alt = alt.replace(
            f"reaching {100 * last:.0f}%.",
            f"reaching {100 * last:.0f}%, and {100 * held[-1][2]:.0f}% at length {test_length} (dashed).",
        )
    defaults = {
        "task": config.task, "layers": config.n_layers, "heads": config.n_heads, "width": config.d_model,
        "pos": config.positional, "mask": "causal" if config.causal else "bidirectional",
        "lr": config.lr, "batch": config.batch_size, "seed": config.seed,
    }  # fmt: skip
    if test_length != pg.LENGTH:  # the page's test-length setting (8 where the link has none)
        defaults["test"] = test_length
    if config.norm != "layernorm":  # the page's norm (LayerNorm where the link names none)
        defaults["norm"] = config.norm
    if config.n_kv_heads != config.n_heads:  # key/value heads (as many as heads where none named)
        defaults["kv"] = config.n_kv_heads
    att, answer = probe_run(run, probe_ids)
    example = {
        "defaults": defaults,
        "history": [round(h[0], 5) for h in run.history],
        "held_out": [h[:2] for h in held],
        "held_test": [[h[0], h[2]] for h in held if len(h) > 2],
        "probes": {**PROBES, config.task: probe or PROBES[config.task]},
        # the maps the page draws before Play (the picture's): the probe's attention after the run
        "probe": {
            "t": run.t,
            "layers": config.n_layers,
            "heads": config.n_heads,
            "answer": answer,
            "attentions": [round(w, 4) for w in att.flatten().tolist()],
        },
    }
    return LiveFigure(
        "playground",
        example,
        png=png,
        alt=alt,
        widget=_widget(config, steps, probe_ids, png, narrow, test_length),
        caption=caption,
    )


# Long by design: the kernel's form, one control a few lines, then its Train button's handler.
def _widget(
    config: pg.PlaygroundConfig,
    steps: int,
    probe_ids: list[int],
    png: bytes,
    narrow: bool = False,
    test_length: int = pg.LENGTH,
):
    """The kernel's form: the page's settings, a Train button, the same pictures."""
    try:
        import ipywidgets as widgets
        from IPython.display import Image, display
    except ImportError:  # pragma: no cover - the book's environment has both
        return None
    choose = {
        "task": widgets.Dropdown(options=list(pg.TASKS), value=config.task, description="task"),
        "n_layers": widgets.Dropdown(options=[1, 2], value=config.n_layers, description="layers"),
        "n_heads": widgets.Dropdown(options=[1, 2, 4], value=config.n_heads, description="heads"),
        "n_kv_heads": widgets.Dropdown(
            options=[1, 2, 4], value=config.n_kv_heads, description="kv heads"
        ),
        "d_model": widgets.Dropdown(
            options=[16, 32, 64], value=config.d_model, description="width"
        ),
        "positional": widgets.Dropdown(
            options=list(pg.POSITIONAL), value=config.positional, description="positions"
        ),
        "norm": widgets.Dropdown(options=list(pg.NORMS), value=config.norm, description="norm"),
        "causal": widgets.Checkbox(value=config.causal, description="causal"),
        "lr": widgets.Dropdown(
            options=[3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 1.0], value=config.lr, description="lr"
        ),
        "batch_size": widgets.Dropdown(
            options=[8, 16, 32, 64, 128], value=config.batch_size, description="batch"
        ),
        "seed": widgets.BoundedIntText(value=config.seed, min=0, max=2**32 - 1, description="seed"),
    }
    test = widgets.Dropdown(
        options=list(TEST_LENGTHS), value=test_length, description="test length"
    )
    n_steps = widgets.BoundedIntText(value=steps, min=1, max=5000, description="steps")
    button = widgets.Button(description="Train")
    out = widgets.Output()

    def train(_=None):
        try:  # learned positions at a longer test length, 4 key/value heads for 2 heads: said, not raised
            c = pg.PlaygroundConfig(**{k: w.value for k, w in choose.items()})
            ids = probe_ids if c.task == config.task else parse_probe(c.task, PROBES[c.task])
            run, held = train_run(c, n_steps.value, test.value)
        except ValueError as err:
            with out:
                out.clear_output(wait=True)
                print(f"Not trained: {err}.")
            return
        fig = draw_run(run, held, ids, narrow, test.value)
        png = figure_png(fig)
        plt.close(fig)
        with out:
            out.clear_output(wait=True)
            display(Image(png))

    button.on_click(train)
    # the run above, until the reader trains another (not `with out:`: see lib/viz/live.py)
    out.append_display_data(Image(png))
    return widgets.VBox(
        [
            widgets.HBox(list(choose.values())[:6]),
            widgets.HBox([*list(choose.values())[6:], test, n_steps, button]),
            out,
        ]
    )
