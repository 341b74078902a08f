"""The live figures' kernel widgets, run by a notebook executor as the build runs the chapters.

A widget whose Output is filled with `with out: display(...)` while its cell runs makes nbclient (the
executor of Jupyter Book's build and of nbval) echo the Output's state back to the kernel; now and then
the executor then waits a whole cell timeout before it starts the next cell. Measured: 6 waits of
exactly the 5 s timeout in 150 such cells; chapter 9 took 157.7 s instead of ~35 s in CI (one wait of
the build's 120 s); jupyter/nbclient#312 (open) reports the same block. The library fills the Output directly (`Output.append_display_data`) instead."""

import base64
import io
from datetime import datetime

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

TIMEOUT_S = 10  # the cell timeout: a stall lasts exactly this long
IMPORT_TIMEOUT_S = 300  # the setup cell's
CELLS = 80  # widget cells: the old code stalled in about one cell of 25


def _png() -> bytes:
    fig = plt.figure(figsize=(1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _largest_gap(sources: list[str]) -> tuple[float, int]:
    """Run the cells with nbclient; the longest time (s) from a cell's end to the next one's start."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    first = nb.cells[0]

    def timeout(cell):
        # the first cell imports torch and the library: on a busy machine that alone can take 10 s
        return IMPORT_TIMEOUT_S if cell is first else TIMEOUT_S

    NotebookClient(nb, timeout_func=timeout, kernel_name="python3", record_timing=True).execute()

    def at(cell, key):
        return datetime.fromisoformat(cell.metadata["execution"][key].rstrip("Z"))

    gaps = [
        ((at(b, "iopub.status.busy") - at(a, "iopub.status.idle")).total_seconds(), i + 1)
        for i, (a, b) in enumerate(zip(nb.cells, nb.cells[1:]))
    ]
    return max(gaps)


def test_the_playground_widget_opens_on_its_example_without_stalling_the_executor():
    setup = (
        "from lib import playground as pg\n"
        "from lib.viz.playground import PROBES, _widget, parse_probe\n"
        f"png = {_png()!r}\n"
        "config = pg.PlaygroundConfig()\n"
        "probe = parse_probe(config.task, PROBES[config.task])"
    )
    widget = "_widget(config, 300, probe, png)"
    gap, cell = _largest_gap([setup] + [widget, "x = 1"] * CELLS)
    # a stall is the whole timeout; anything else (a loaded machine) is well under a second
    assert gap < TIMEOUT_S / 2, f"the executor waited {gap:.1f} s before cell {cell}"


def test_the_widget_shows_the_example_picture():
    pytest.importorskip("ipywidgets")
    from lib import playground as pg
    from lib.viz.playground import PROBES, _widget, parse_probe

    png = _png()
    config = pg.PlaygroundConfig()
    view = _widget(config, 300, parse_probe(config.task, PROBES[config.task]), png)
    out = view.children[-1]
    assert out.msg_id == ""  # nothing captures the kernel's output
    assert [o["output_type"] for o in out.outputs] == ["display_data"]
    assert "image/png" in out.outputs[0]["data"]


def test_the_minilm_widget_shows_the_example_picture():
    from lib.pretrained import load_minilm
    from lib.viz.live import minilm_attention

    model, tokenizer = load_minilm()
    figure = minilm_attention(model, tokenizer, "the cat sat on the mat", layer=3, head=1)
    out = figure.widget.children[-1]
    assert out.msg_id == ""
    assert [o["output_type"] for o in out.outputs] == ["display_data"]
    assert base64.b64decode(out.outputs[0]["data"]["image/png"]) == figure.png  # the example
