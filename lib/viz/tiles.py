"""FlashAttention's tiles (chapter 18), drawn: :func:`tiling_diagram`, the grid of score tiles and
what sits in the fast on-chip memory while one tile is computed, and :func:`tile_explorer`, an
interactive figure (:func:`lib.viz.interactive`) that steps through the loop of
``lib.flash.tiled_attention`` on a small case. The numbers of each step come from
:func:`tile_states`, which applies the library's ``online_softmax`` to the scores read so far.
"""

from __future__ import annotations

import math

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
from torch import Tensor

from lib._validate import check_int, check_tensor
from lib.viz.diagrams import _arrow, _box, _canvas, _t

__all__ = ["tiling_diagram", "tile_states", "tile_explorer"]

_READ, _DONE, _SKIP, _NOW = "#9ecae1", "#deebf7", "#f0f0f0", "#d62728"


def _tiles(T: int, block_q: int, block_k: int, causal: bool) -> list[tuple[int, int, int, int]]:
    """(i0, i1, j0, j1) of each tile in the order ``tiled_attention`` reads them (causal: none past
    the diagonal)."""
    order = []
    for i0 in range(0, T, block_q):
        i1 = min(i0 + block_q, T)
        for j0 in range(0, i1 if causal else T, block_k):
            order.append((i0, i1, j0, min(j0 + block_k, T)))
    return order


def _grid(ax, T, block_q, block_k, causal, read=(), now=None, fontsize=11):
    """The T x T scores as cells, tiles outlined: read tiles tinted, the current one framed in red,
    causal tiles that are never read grey."""
    read = set(read)
    for i0 in range(0, T, block_q):
        for j0 in range(0, T, block_k):
            i1, j1 = min(i0 + block_q, T), min(j0 + block_k, T)
            key = (i0, i1, j0, j1)
            skipped = causal and j0 >= i1
            color = _SKIP if skipped else _NOW if key == now else _DONE if key in read else "white"
            face = _READ if key == now else color
            ax.add_patch(mpatches.Rectangle((j0, i0), j1 - j0, i1 - i0, fc=face, ec="0.2", lw=1.2))
            if skipped:
                ax.add_patch(mpatches.Rectangle((j0, i0), j1 - j0, i1 - i0, fill=False,
                                                hatch="//", ec="0.6", lw=0))  # fmt: skip
    # the cells above the diagonal inside the tiles it crosses are masked: dense dark dots, which
    # a phone shows (sparse grey ones faded there, s32)
    if causal:
        for i in range(T):
            for j in range(i + 1, T):
                if j < (i // block_q + 1) * block_q:
                    ax.add_patch(mpatches.Rectangle((j, i), 1, 1, fill=False, hatch="...", ec="0.25",
                                                    lw=0))  # fmt: skip
    if now is not None:
        i0, i1, j0, j1 = now
        ax.add_patch(mpatches.Rectangle((j0, i0), j1 - j0, i1 - i0, fill=False, ec=_NOW, lw=3))
    ax.set(xlim=(0, T), ylim=(T, 0), aspect="equal")
    ax.set_xticks([j + 0.5 for j in range(T)], range(T))
    ax.set_yticks([i + 0.5 for i in range(T)], range(T))
    ax.tick_params(length=0, labelsize=fontsize)
    ax.set_xlabel("key j", fontsize=fontsize)
    ax.set_ylabel("query i", fontsize=fontsize)


# the tiling diagram's text, in points: its grid's and arrows' labels, the tiles' numbers and the
# grid's title, and its two memories' boxes
_GRID_PT, _TITLE_PT, _MEMORY_PT = 16, 16, 17
# the tile explorer's text, in points, 5.2 inches wide: 18 points are 15.8 CSS px in the 328 px
# column of a 360 px phone (at 16, a reader measured the letters of the tick labels and of "final"
# at 9-10 px there, s28; at 13, 7 to 9 px); the output's row labels get this many cells' width
_EXPLORER_PT, _LABEL_CELLS = 18, 5.8


def tiling_diagram(
    T: int = 8, block_q: int = 4, block_k: int = 2, causal: bool = True, legend: bool = False
):
    """Chapter 18's tiling (Dao et al. 2022, fig. 1), stacked for narrow pages: above, the T x T
    scores cut into tiles of block_q queries by block_k keys, numbered in the order
    ``lib.flash.tiled_attention`` computes them (with ``causal``, the tiles above the diagonal are
    never computed and the tiles the diagonal crosses mask their upper cells); below, the slow memory (HBM) holding Q, K, V, O and L, and the fast
    on-chip memory (SRAM) holding one tile's worth. ``legend`` (with ``causal``): a key to the
    hatched and dotted cells under the grid. Returns the Figure (with ``alt_text``)."""
    for name, value in (("T", T), ("block_q", block_q), ("block_k", block_k)):
        check_int(value, name, 1)
    if T > 16 or block_q > T or block_k > T:
        raise ValueError(f"T: expected at most 16 and at least block_q, block_k, got T={T}, "
                         f"block_q={block_q}, block_k={block_k}")  # fmt: skip
    order = _tiles(T, block_q, block_k, causal)
    n_all = math.ceil(T / block_q) * math.ceil(T / block_k)
    diagonal = sum(1 for i0, i1, j0, j1 in order if causal and j1 - 1 > i0)
    alt = (
        f"Above: the grid of {T} by {T} scores, query i down, key j across, cut into tiles of "
        f"{block_q} queries by {block_k} keys; the {len(order)} tiles that are computed are numbered "
        f"1 to {len(order)} row of tiles by row of tiles"
        + (
            f"; the {n_all - len(order)} tiles above the diagonal are grey and never computed, and "
            f"the {diagonal} tiles that the diagonal crosses mask their cells above it (dotted)"
            + (
                "; a legend under the grid reads: hatched, never computed; dotted, masked in its tile"
                if legend
                else ""
            )
            if causal
            else ""
        )  # fmt: skip
        + ". Below: the slow memory (HBM) holds Q, K and V, the output O and the log-sum-exp L; "
        "arrows carry one block of queries and one block of keys and values into the fast on-chip "
        "memory (SRAM), which holds them, the tile of scores S and weights P, the running maximum "
        "m, the running sum l and the output accumulator of the block of queries, and writes O "
        "and L back once per block of queries."
    )
    # stacked and narrow: 5.2 inches, 594 px as the page saves it (110 dpi, 0.1-inch margins), under
    # the 600 px above which the site treats a picture as drawn for the desktop and makes a phone
    # scroll it sideways (book/_static/reader.js). In a 328 px column a point is 110/72 * 328/594 =
    # 0.84 CSS px: the grid's and arrows' labels of 16 points are 13.5 px, the memories' text of 17
    # points 14.3 px, so that their subscripts ($B_q$, 70% of the text) still read at about 10 px
    # (at 14 and 15 points a reader measured 7-9 px letters there, s24)
    key = legend and causal  # the key takes a strip of 0.55 inches between grid and memories
    width, height, mid = 5.2, 8.0 + 0.55 * key, 2.6
    fig, ax = _canvas(width, height, alt)
    grid = fig.add_axes((1.15 / width, (4.3 + 0.55 * key) / height, 3.3 / width, 3.3 / height))
    _grid(grid, T, block_q, block_k, causal, fontsize=_GRID_PT)
    for n, (i0, i1, j0, j1) in enumerate(order, 1):
        # at the middle of the tile's computed cells (below a diagonal tile's dotted ones), on white
        cells = [(i, j) for i in range(i0, i1) for j in range(j0, j1) if not causal or j <= i]
        x = sum(j for _, j in cells) / len(cells) + 0.5
        y = sum(i for i, _ in cells) / len(cells) + 0.5
        grid.text(x, y, str(n), **_t(_TITLE_PT), weight="bold",
                  bbox=dict(boxstyle="circle,pad=0.2", fc="white", ec="none"))  # fmt: skip
    grid.set_title(f"scores S, tiles of {block_q} x {block_k}" + (", causal" if causal else ""),
                   fontsize=_TITLE_PT)  # fmt: skip
    _box(ax, mid, 3.2, "HBM (slow, large)\nQ, K, V [T, D]   O [T, D]   L [T]", "io", w=5.0, h=0.9,
         fontsize=_MEMORY_PT)  # fmt: skip
    sram = "SRAM (fast, on chip, small)\n$Q_i$ [$B_q$, D]   $K_j$, $V_j$ [$B_k$, D]\n"
    sram += "$S_{ij}$, $P_{ij}$ [$B_q$, $B_k$]\n$m_i$, $\\ell_i$ [$B_q$]   $a_i$ [$B_q$, D]"
    _box(ax, mid, 1.25, sram, "attn", w=5.0, h=1.7, fontsize=_MEMORY_PT)
    _arrow(ax, mid - 0.6, 2.75, mid - 0.6, 2.1)
    ax.text(mid - 1.6, 2.43, "read $Q_i$, then\neach $K_j$, $V_j$", **_t(_GRID_PT))
    _arrow(ax, mid + 0.6, 2.1, mid + 0.6, 2.75)
    ax.text(mid + 1.6, 2.43, "write $O_i$, $L_i$\nonce per $i$", **_t(_GRID_PT))
    ax.text(mid, 0.17, "never stored: the [T, T] matrices S and P", **_t(_GRID_PT))
    if key:
        skipped = mpatches.Patch(fc=_SKIP, ec="0.6", hatch="//", label="never computed")
        masked = mpatches.Patch(fc="white", ec="0.25", hatch="...", label="masked in its tile")
        ax.legend(handles=[skipped, masked], loc="center", bbox_to_anchor=(mid, 4.05),
                  bbox_transform=ax.transData, ncol=2, frameon=False, fontsize=_GRID_PT,
                  handlelength=1.6, columnspacing=1.2)  # fmt: skip
    return fig


def tile_states(q: Tensor, k: Tensor, v: Tensor, block_q: int, block_k: int, causal: bool = True):
    """The state after each tile of ``tiled_attention`` on q, k [T, D], v [T, Dv]: a list of dicts
    with the tile (i0, i1, j0, j1), the running maximum ``m`` and sum ``total`` [i1 - i0] of its
    block of queries (``lib.flash.online_softmax`` over the scores read so far, in blocks of
    block_k) and ``out``, the output rows as they stand ([i1 - i0, Dv], exact once the block's last
    tile is read), ``scores``, the tile's scores S_ij [i1 - i0, j1 - j0] (-inf where masked), plus
    ``exact``, the number of rows whose output is final."""
    from lib.attention import causal_mask
    from lib.flash import online_softmax

    check_tensor(q, "q", "[T, D]", 2, exact=True)
    check_tensor(k, "k", "[T, D]", 2, q.dtype, "q", exact=True, width=q.shape[-1])
    check_tensor(v, "v", "[T, Dv]", 2, q.dtype, "q", exact=True)
    T = q.shape[0]
    scores = (q / math.sqrt(q.shape[-1])) @ k.T  # [T, T]
    if causal:
        scores = scores.masked_fill(~causal_mask(T), -math.inf)
    states = []
    for i0, i1, j0, j1 in _tiles(T, block_q, block_k, causal):
        read = online_softmax(scores[i0:i1, :j1], block_k)  # the scores read so far, by tiles
        last = j1 >= (i1 if causal else T)  # the last tile of this block of queries
        states.append(dict(tile=(i0, i1, j0, j1), m=read.maximum, total=read.total,
                           out=read.weights @ v[:j1], exact=i1 if last else i0,
                           scores=scores[i0:i1, j0:j1]))  # fmt: skip
    return states


# Long by design: the arguments' checks at the door, then one drawing step after another.
def tile_explorer(q: Tensor, k: Tensor, v: Tensor, block_q: int = 2, block_k: int = 2,
                  causal: bool = True, description: str = "step"):  # fmt: skip
    """FlashAttention's loop, one tile per state (:func:`lib.viz.interactive`): left, the grid of
    tiles with the tile being read framed; right, the output O [T, Dv] (a column per value
    dimension) with the rows that are final, the rows in progress and the rows not reached, and its
    colour bar; under the picture, as the page's own text (readable on a phone at the page's size),
    the running maximum m and sum l of the block of queries, with the factor exp(m_old - m_new)
    where the tile raised a maximum, and the tile's scores S_ij. 5.2 inches wide with 18-point
    text, so that a phone shows it whole and readable. q, k [T, D], v [T, Dv] with T <= 12.
    Returns the box of :func:`interactive` with ``.states`` (:func:`tile_states`) for the chapter's
    checks."""
    from lib.viz.heatmap import DIVERGING_CMAP
    from lib.viz.interactive import interactive

    check_int(block_q, "block_q", 1)
    check_int(block_k, "block_k", 1)
    states = tile_states(q, k, v, block_q, block_k, causal)
    T = q.shape[0]
    if T > 12:
        raise ValueError(
            f"q: expected at most 12 queries (one cell each), got shape {tuple(q.shape)}"
        )
    Dv = v.shape[-1]
    final = states[-1]["out"].new_zeros(T, Dv)
    for s in states:  # the rows of each block of queries, as they end
        final[s["tile"][0] : s["tile"][1]] = s["out"]
    vmax = float(final.abs().max())

    def running(n):  # the running numbers after tile n, then the tile's scores, as lines of text
        # under the picture: with the previous step's numbers, enough to redo the step by hand
        s = states[n]
        i0, _, j0, j1 = s["tile"]
        before = states[n - 1] if n and states[n - 1]["tile"][0] == i0 else None
        lines = ["The running numbers of these queries, after this tile:"]
        # no-break spaces (nb) in each "name = value" and in the parenthesis: a phone wraps a line
        # between them, never inside one (it split "old ℓ × 0.094", a reader's report, s24)
        nb = "\u00a0"
        for r, (m, t) in enumerate(zip(s["m"], s["total"])):
            line = f"row {i0 + r}: m{nb}={nb}{float(m):.3f}, ℓ{nb}={nb}{float(t):.3f}"
            if before is not None and m > before["m"][r]:  # the maximum rose: the sum was rescaled
                line += f" (m{nb}rose:{nb}old{nb}ℓ{nb}×{nb}{math.exp(before['m'][r] - m):.3f})"
            lines.append(line)
        keys = [str(j) for j in range(j0, j1)]
        keys = keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + " and " + keys[-1]
        lines.append(f"This tile's scores S_ij, keys {keys}:")
        for r, row in enumerate(s["scores"].tolist()):
            cells = ", ".join("masked" if x == -math.inf else f"{x:.3f}" for x in row)
            lines.append(f"row {i0 + r}: {cells}")
        return "\n".join(lines)

    def draw(n):
        s = states[n]
        i0, i1, j0, j1 = s["tile"]
        # 5.2 inches with _EXPLORER_PT text: shown whole in a phone's column, the text about 16
        # CSS px there; the output's rows level with the grid's rows of queries
        fig, axes = plt.subplot_mosaic([["grid", "out"]], figsize=(5.2, 4.5),
                                       width_ratios=(T, Dv + _LABEL_CELLS),
                                       layout="constrained")  # fmt: skip
        # room between the figure's title and the output's "output O" above it: without it the
        # two overlapped (reader s37); the figure 0.3 inch taller for it, so the panels keep their size
        fig.get_layout_engine().set(h_pad=0.12)
        left, right = axes["grid"], axes["out"]
        _grid(left, T, block_q, block_k, causal, [x["tile"] for x in states[:n]], s["tile"],
              fontsize=_EXPLORER_PT)  # fmt: skip
        fig.suptitle(
            f"tile {n + 1}: queries {i0}-{i1 - 1}, keys {j0}-{j1 - 1}", fontsize=_EXPLORER_PT + 1
        )
        shown = final.clone()
        shown[i0:i1] = s["out"]
        shown[i1:] = float("nan")  # not reached yet
        # row r of the output spans r to r + 1, as query r's row of the grid does
        image = right.imshow(shown.numpy(), cmap=DIVERGING_CMAP, vmin=-vmax, vmax=vmax,
                             aspect="equal", extent=(0, Dv, T, 0))  # fmt: skip
        bar = fig.colorbar(image, ax=[left, right], location="bottom", shrink=0.55, pad=0.02)
        bar.set_label("output value", fontsize=_EXPLORER_PT)
        bar.ax.tick_params(labelsize=_EXPLORER_PT)
        # ticks at the ends of the scale: the darkest rows' values can be read off (a reader's
        # report, s35b: ticks to 0.8 only, rows drawn darker than any tick)
        bar.set_ticks([-vmax, 0.0, vmax], labels=[f"\u2212{vmax:.2f}", "0", f"{vmax:.2f}"])
        # one label per group of rows, beside a bracket spanning them: a label on every row crowded
        # the rows on a phone (reader s36b)
        for label, r0, r1 in (("final", 0, s["exact"]), ("in progress", s["exact"], i1)):
            if r1 > r0:
                right.plot([Dv + 0.25] * 2, [r0 + 0.12, r1 - 0.12], color="0.25", lw=2,
                           solid_capstyle="butt")  # fmt: skip
                right.text(Dv + 0.45, (r0 + r1) / 2, label, fontsize=_EXPLORER_PT, va="center",
                           ha="left")  # fmt: skip
        # the widest label at every step, unseen (alpha 0): the layout makes room for it, so
        # that the grid and the output keep their places from step to step
        right.text(Dv + 0.45, 0.5, "in progress", fontsize=_EXPLORER_PT, va="center", ha="left",
                   alpha=0)  # fmt: skip
        right.set(xlim=(0, Dv + _LABEL_CELLS), ylim=(T, 0), xticks=[c + 0.5 for c in range(Dv)],
                  xticklabels=range(Dv), yticks=[])  # fmt: skip
        right.set_title("output O", fontsize=_EXPLORER_PT, loc="left", pad=8)  # clear of row 0
        right.set_xlabel("value dimension", fontsize=_EXPLORER_PT, loc="left")
        right.tick_params(labelsize=_EXPLORER_PT, length=0)
        for side in ("top", "right", "bottom", "left"):
            right.spines[side].set_visible(False)
        return fig

    def describe(n):
        s = states[n]
        i0, i1, j0, j1 = s["tile"]
        maxima = ", ".join(f"{float(m):.3f}" for m in s["m"])
        sums = ", ".join(f"{float(t):.3f}" for t in s["total"])
        done = f"output rows 0 to {s['exact'] - 1} are final" if s["exact"] else "no row is final"
        return (f"Step {n + 1} of {len(states)}: the tile of queries {i0} to {i1 - 1} and keys "
                f"{j0} to {j1 - 1} is read; the running maxima of these queries are {maxima}, "
                f"their running sums {sums}; {done}. The output's numbers are coloured from "
                f"orange ({-vmax:.2f}) through white (0) to purple ({vmax:.2f}), as its colour "
                "bar shows; rows not reached yet are blank.")  # fmt: skip

    box = interactive(draw, [(str(n + 1), n) for n in range(len(states))],
                      description=description, alt=describe, notes=running)  # fmt: skip
    box.states = states
    return box
