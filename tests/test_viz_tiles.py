"""lib.viz.tiles: FlashAttention's tiling diagram and the explorer of its loop, whose numbers must be
the library's (lib.flash)."""

import math

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from lib import viz  # noqa: E402
from lib.attention import causal_mask  # noqa: E402
from lib.flash import tiled_attention  # noqa: E402
from tests.tolerance import assert_float_close  # noqa: E402


def qkv(T=8, D=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(T, D, generator=g, dtype=torch.float64) for _ in range(3))


@pytest.mark.parametrize("causal, n_tiles", [(True, 6), (False, 8)])
def test_tiling_diagram_numbers_the_tiles_it_computes(causal, n_tiles):
    fig = viz.tiling_diagram(8, 4, 2, causal=causal)
    numbers = [t.get_text() for t in fig.axes[1].texts if t.get_text().isdigit()]
    assert numbers == [str(n) for n in range(1, n_tiles + 1)]
    assert f"numbered 1 to {n_tiles}" in fig.alt_text
    assert ("2 tiles above the diagonal are grey" in fig.alt_text) == causal
    # the tiles the diagonal crosses, not only those on it (0-3 x 2-3 too): 4 of them
    assert ("the 4 tiles that the diagonal crosses mask" in fig.alt_text) == causal
    for label in (t for t in fig.axes[1].texts if t.get_text().isdigit()):
        x, y = label.get_position()  # key j across, query i down
        assert not causal or math.floor(x) <= math.floor(y)  # on a computed cell, not a dotted one


def test_tiling_diagram_rejects_bad_sizes():
    with pytest.raises(ValueError, match="T"):
        viz.tiling_diagram(32, 4, 4)
    with pytest.raises(ValueError, match="block_q"):
        viz.tiling_diagram(8, 0, 2)
    with pytest.raises(TypeError, match="block_k"):
        viz.tiling_diagram(8, 2, 2.0)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("block_q, block_k", [(2, 2), (4, 2), (3, 5)])
def test_tile_states_are_the_librarys_numbers(causal, block_q, block_k):
    q, k, v = qkv()
    states = viz.tile_states(q, k, v, block_q, block_k, causal)
    out, lse = tiled_attention(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
    scores = (q / 2) @ k.T  # D = 4
    if causal:
        scores = scores.masked_fill(~causal_mask(8), -math.inf)
    for s in states:
        i0, i1, j0, j1 = s["tile"]
        assert torch.equal(s["m"], scores[i0:i1, :j1].amax(-1))  # the maximum of what was read
        read = torch.exp(scores[i0:i1, :j1] - s["m"][:, None]).sum(-1)
        # the sum over at most 8 terms, rescaled at each of at most 8 tiles: 16 terms of l's size
        assert_float_close(s["total"], read, terms=16)
        if s["exact"] == i1:  # the block's last tile: its rows are final, and the library's
            # the library's and the explorer's sums in other groupings: 2 (8 + 8) + 8 + 1 terms
            assert_float_close(s["out"], out[i0:i1], terms=2 * 16 + 9, scale=v.abs().max())
            assert_float_close(s["m"] + s["total"].log(), lse[i0:i1], terms=2 * 16 + 1,
                               scale=lse.abs().max())  # fmt: skip
    ends = [s["tile"] for s in states if s["exact"] == s["tile"][1]]
    assert len(ends) == math.ceil(8 / block_q)  # one per block of queries


def test_tile_explorer_steps_through_every_tile():
    q, k, v = qkv()
    box = viz.tile_explorer(q, k, v, block_q=2, block_k=2, causal=True)
    assert len(box.states) == 1 + 2 + 3 + 4  # block i of queries reads i + 1 tiles
    slider, stack = box.children
    assert len(stack.children) == 10 and list(slider.options) == [str(n) for n in range(1, 11)]
    assert "Step 4 of 10: the tile of queries 4 to 5 and keys 0 to 1" in stack.children[3].value
    assert "output rows 0 to 3 are final" in stack.children[3].value
    # the colour scale: the largest size among the final rows (each block's last state)
    vmax = max(s["out"].abs().max().item() for s in box.states if s["exact"] == s["tile"][1])
    assert f"orange ({-vmax:.2f}) through white (0) to purple ({vmax:.2f}), as its colour bar" in (
        stack.children[3].value
    )
    with pytest.raises(ValueError, match="q"):
        viz.tile_explorer(*qkv(T=16))
    with pytest.raises(TypeError, match="k"):
        viz.tile_explorer(q, k.float(), v)


def test_tile_explorer_labels_fit_and_name_the_rescaling(monkeypatch):
    """Every label inside the picture (the grid's "key j" was clipped below it); the output's
    columns named; under the picture, as page text (readable on a phone, where the picture's own
    text was too small for the numbers), a line per query, with the factor where the tile raised
    its maximum."""
    import matplotlib.pyplot as plt

    q, k, v = qkv(seed=18)
    box = viz.tile_explorer(q, k, v, block_q=2, block_k=2, causal=True)
    states = box.states
    rose = [
        n
        for n in range(1, len(states))
        if states[n]["tile"][0] == states[n - 1]["tile"][0]
        and (states[n]["m"] > states[n - 1]["m"]).any()
    ]
    assert rose  # seed 18 has rescalings to show
    for n in (0, rose[0]):
        html = box.children[1].children[n].value
        assert html.startswith("<img") and 'alt="Step' in html
    made = []  # the figures the explorer draws, one per state, to measure their labels
    mosaic = plt.subplot_mosaic

    def keep(*args, **kwargs):
        made.append(mosaic(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(plt, "subplot_mosaic", keep)
    viz.tile_explorer(q, k, v, block_q=2, block_k=2, causal=True)
    n = rose[0]
    fig, axes = made[n]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # the figure was closed once saved
    fig.draw(renderer)
    whole = fig.bbox
    for ax in axes.values():
        for text in [ax.xaxis.label, ax.yaxis.label, ax.title, *ax.texts]:
            if text.get_text():
                box_ = text.get_window_extent(renderer)
                assert whole.x0 <= box_.x0 and box_.x1 <= whole.x1, text.get_text()
                assert whole.y0 <= box_.y0 and box_.y1 <= whole.y1, text.get_text()
    # the figure's title clear of the panels' titles ("output O" ran into it, reader s37)
    title = fig.get_suptitle() and fig._suptitle.get_window_extent(renderer)
    assert title
    for ax in axes.values():
        for side in ("left", "center", "right"):
            if ax.get_title(loc=side):
                extent = {"left": ax._left_title, "center": ax.title, "right": ax._right_title}[
                    side
                ]
                assert not title.overlaps(extent.get_window_extent(renderer)), ax.get_title(
                    loc=side
                )
    assert axes["grid"].get_xlabel() == "key j"
    assert axes["out"].get_xlabel() == "value dimension"
    assert min(t.get_fontsize() for ax in axes.values() for t in ax.texts) >= 11
    # every text of the picture (title, tick labels, "query i", "value dimension", the colour
    # bar's) at least 11 CSS px (em) in the 328 px column of a 360 px phone (Fig. 18.2)
    from matplotlib.text import Text

    shown = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert {"query i", "value dimension", "output value"} <= {t.get_text() for t in shown}
    assert fig.get_figwidth() == 5.2
    # 15.5 px there: at 14 (16 points) a reader measured the letters of the tick labels and of
    # "final" at 9-10 px on a phone (s28), at 13 points 7 to 9 px (s22)
    assert min(t.get_fontsize() / 72 * 328 / 5.2 for t in shown) >= 15.5
    assert not any("m rose" in t.get_text() for ax in axes.values() for t in ax.texts)
    plt.close("all")
    page = box.children[1].children[n].value
    notes = page[page.index('<p class="book-figure-notes"') :]
    lines = notes[notes.index(">") + 1 : notes.index("</p>")].split("<br>")
    i0 = states[n]["tile"][0]
    factor = (states[n - 1]["m"] - states[n]["m"]).exp()
    assert lines[0].startswith("The running numbers")
    rows = states[n]["tile"][1] - i0
    # a phone wraps a line between its "name = value" parts, never inside one (no-break spaces:
    # "(m rose: old ℓ × 0.094)" was split at 360 px, reader s24)
    lines = [line.replace("\u00a0", " ") for line in lines]
    assert all(" = " not in line and " × " not in line for line in notes.split("<br>"))
    for r, line in enumerate(lines[1 : 1 + rows]):
        rose_here = bool(states[n]["m"][r] > states[n - 1]["m"][r])
        assert line.startswith(
            f"row {i0 + r}: m = {states[n]['m'][r].item():.3f}, ℓ = {states[n]['total'][r].item():.3f}"
        )
        assert ("m rose" in line) == rose_here
        if rose_here:
            assert line.endswith(f"× {factor[r].item():.3f})")
    # then the tile's scores, so that a reader can redo the step by hand (first reader s22, 10)
    j0, j1 = states[n]["tile"][2:]
    assert (
        lines[1 + rows]
        == "This tile&#x27;s scores S_ij, keys "
        + " and ".join([", ".join(str(j) for j in range(j0, j1 - 1)), str(j1 - 1)])
        + ":"
    )
    assert len(lines) == 2 + 2 * rows
    for r, line in enumerate(lines[2 + rows :]):
        expected = [
            "masked" if x == -math.inf else f"{x:.3f}" for x in states[n]["scores"][r].tolist()
        ]
        assert line == f"row {i0 + r}: " + ", ".join(expected)
        # the step's numbers follow from them: the new maximum is the old one or a score here
        assert float(states[n]["m"][r]) == max(float(states[n - 1]["m"][r]),
                                                float(states[n]["scores"][r].max()))  # fmt: skip


def test_tiling_diagram_is_stacked_for_a_phone():
    """Narrow (the grid above the memories) with text of 11 points or more: about 9 CSS pixels
    where a phone shows the picture 330 pixels wide."""
    import io
    import struct

    fig = viz.tiling_diagram(8, 4, 2, causal=True)
    assert fig.get_figheight() > fig.get_figwidth()
    # saved as the page saves it (110 dpi, the tight box): at most 600 px wide, or the site makes a
    # phone scroll it sideways as a figure drawn for the desktop (book/_static/reader.js)
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches="tight")
    width = struct.unpack(">I", png.getvalue()[16:20])[0]
    assert width <= 600, width
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    sizes += [ax.xaxis.label.get_fontsize() for ax in fig.axes[1:]]
    assert min(sizes) >= 11
    # every text, tick labels, axis labels and the grid's title included, at least 13 CSS px (em)
    # once the 594 px picture is shown in the 328 px column of a 360 px phone (at 9 to 12 points,
    # then at 14, readers measured their letters at 7-9 px: reports on Fig. 18.1, the last s24),
    # and the memories' text, whose subscripts are 70% of it, at least 14 px
    from matplotlib.text import Text

    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert {"query i", "key j", "never stored: the [T, T] matrices S and P"} <= {
        t.get_text() for t in texts
    }
    assert min(t.get_fontsize() / 72 * 110 * 328 / width for t in texts) >= 13
    memories = [t for t in texts if "SRAM" in t.get_text() or "HBM" in t.get_text()]
    assert len(memories) == 2
    assert min(t.get_fontsize() / 72 * 110 * 328 / width for t in memories) >= 14
    assert fig.alt_text.startswith("Above: the grid") and ". Below: the slow memory" in fig.alt_text


def test_tiling_diagram_legend_is_optional_and_keys_the_hatched_and_dotted_cells():
    import io
    import struct

    assert viz.tiling_diagram(8, 4, 2, causal=True).axes[0].get_legend() is None
    assert viz.tiling_diagram(8, 4, 2, causal=False, legend=True).axes[0].get_legend() is None
    fig = viz.tiling_diagram(8, 4, 2, causal=True, legend=True)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["never computed", "masked in its tile"]
    assert min(t.get_fontsize() for t in fig.axes[0].get_legend().get_texts()) >= 11
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches="tight")
    assert struct.unpack(">I", png.getvalue()[16:20])[0] <= 600  # still fits a phone
