"""How large each figure's smallest text reads on the site: on a phone's column and on a laptop's.

    python tools/figure_text.py 03             # chapters whose file name starts with 03
    python tools/figure_text.py 03 04 --md report.md   # also write the tables to a Markdown file
    python tools/figure_text.py 03 --png /tmp/figs    # also write every PNG (/tmp/figs/03_.../)
    python tools/figure_text.py                # all chapters (one after the other, 1-3 min each)

Runs a chapter in a fresh kernel (cwd notebooks/, as tools/time_chapters.py) with one cell put in
front that wraps matplotlib's ``FigureCanvasBase.print_figure``, through which every inline figure
and every picture of ``lib.viz.figure_png`` (sliders, live figures' static form) is saved. For each
picture saved it records the cell it comes from, its saved size in pixels (read from the PNG, so
the tight bounding box of an inline figure is the one measured), the dpi, and the font size of every
Text actually drawn (visible, with text). A page shows an image at its natural width (1 image pixel
= 1 CSS px) or shrunk to the page column, whichever is smaller; the site's column is about 720 CSS
px in a 1280 px window and about 330 CSS px on a 360 px phone. The report gives, per figure, the
smallest text in CSS px in both columns and flags those under 9 px on the phone.

A figure is named by its number among the chapter's captioned figures (cell metadata
``mystnb.figure``) and its name, or by the cell id when the cell has no caption. A cell that saves
several pictures (a slider's states) is one row: its smallest text over all of them.
"""

from __future__ import annotations

import json
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHONE_COLUMN_PX = 330  # the page column on a 360 px phone
PAGE_COLUMN_PX = 720  # the page column in a 1280 px window
LEGIBLE_PX = 9.0


def text_css_px(size_pt: float, px_per_pt: float, width_px: float, column_px: float) -> float:
    """Height in CSS px of text of ``size_pt`` points in an image ``width_px`` pixels wide, drawn at
    ``px_per_pt`` image pixels per point (dpi / 72 for a PNG), shown at its natural width or shrunk
    to a ``column_px`` column, whichever is smaller."""
    return size_pt * px_per_pt * min(1.0, column_px / width_px)


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG's header, or None if ``data`` is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


# ----------------------------------------------------------------------------------------------
# in the kernel: record every picture saved

RECORDS: list[dict] = []  # one per picture saved
_drawn: list[list[float]] = []  # the font sizes drawn by the print_figure calls in progress
_cell = [0]  # the number of the chapter's code cell now running (1 = its first)
_out: list[Path] = []  # the JSON-lines file the records also go to, if any


def measure_saved(fig, target, kwargs: dict, sizes_pt: list[float]) -> dict:
    """The record of one picture: ``fig`` saved to ``target`` (a file-like object or a path) with
    print_figure's ``kwargs``; ``sizes_pt`` the font sizes of the Texts drawn."""
    import matplotlib as mpl

    fmt = kwargs.get("format")
    if fmt is None and isinstance(target, (str, Path)):
        fmt = Path(target).suffix.lstrip(".")
    fmt = (fmt or mpl.rcParams["savefig.format"]).lower()
    dpi = kwargs.get("dpi") or mpl.rcParams["savefig.dpi"]
    if dpi == "figure":
        dpi = getattr(fig, "_original_dpi", fig.dpi)
    width = height = None
    if fmt == "png":
        if hasattr(target, "getvalue"):
            size = png_size(target.getvalue())
        else:
            size = (
                png_size(Path(target).read_bytes()[:24])
                if isinstance(target, (str, Path))
                else None
            )
        if size:
            width, height = size
        px_per_pt = float(dpi) / 72
    else:  # svg and pdf are measured in points; a browser shows 1 pt as 96/72 CSS px
        px_per_pt = 96 / 72
    if width is None:  # not read back: the figure's own size (exact unless bbox_inches='tight')
        w_in, h_in = fig.get_size_inches()
        width, height = round(w_in * 72 * px_per_pt), round(h_in * 72 * px_per_pt)
    smallest = min(sizes_pt) if sizes_pt else None
    record = {
        "format": fmt,
        "dpi": float(dpi),
        "tight": kwargs.get("bbox_inches") == "tight",
        "width_px": width,
        "height_px": height,
        "figsize_in": [round(float(x), 3) for x in fig.get_size_inches()],
        "smallest_pt": smallest,
    }
    for column in (PHONE_COLUMN_PX, PAGE_COLUMN_PX):
        record[f"px_at_{column}"] = (
            None if smallest is None else text_css_px(smallest, px_per_pt, width, column)
        )
    return record


def install(out: str | None = None, png_dir: str | None = None):
    """Wrap print_figure and Text.draw; count the cells run after this one (IPython's pre_run_cell).
    Each record is appended to RECORDS and, if ``out`` is given, written to it as a JSON line.
    ``png_dir``: also write each PNG there, as cell<N>-<k>.png (to look at them).
    Returns a function that puts matplotlib's own methods back."""
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.text import Text

    if out:
        _out.append(Path(out))
    original_print, original_draw = FigureCanvasBase.print_figure, Text.draw

    def draw(self, renderer, *args, **kwargs):
        if _drawn and self.get_visible() and self.get_text().strip():
            _drawn[-1].append(float(self.get_fontsize()))
        return original_draw(self, renderer, *args, **kwargs)

    def print_figure(self, filename, *args, **kwargs):
        _drawn.append([])
        try:
            result = original_print(self, filename, *args, **kwargs)
        finally:
            sizes = _drawn.pop()
        try:
            record = measure_saved(self.figure, filename, kwargs, sizes)
            record["cell"] = _cell[0]
            record["via"] = _caller()
            RECORDS.append(record)
            if png_dir and hasattr(filename, "getvalue") and record["format"] == "png":
                k = sum(1 for r in RECORDS if r["cell"] == record["cell"])
                record["png"] = str(Path(png_dir) / f"cell{record['cell']:03d}-{k:02d}.png")
                Path(record["png"]).write_bytes(filename.getvalue())
            for path in _out:
                with path.open("a") as f:
                    f.write(json.dumps(record) + "\n")
        except Exception as error:  # measuring must never break a chapter
            print(f"figure_text: not measured ({error!r})", file=sys.stderr)
        return result

    FigureCanvasBase.print_figure, Text.draw = print_figure, draw
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:

        def count(info):
            _cell[0] += 1

        shell.events.register("pre_run_cell", count)

    def uninstall():
        FigureCanvasBase.print_figure, Text.draw = original_print, original_draw
        _out.clear()
        if shell is not None:
            shell.events.unregister("pre_run_cell", count)

    return uninstall


def _caller() -> str:
    """Who saved the picture: a live figure (lib.viz.live: its static form, what print and a reader
    without JavaScript see), lib.viz's figure_png (a slider's states), the inline backend (a figure
    shown by the cell) or savefig."""
    frame, names, modules = sys._getframe(2), [], []
    while frame is not None:
        names.append(frame.f_code.co_name)
        modules.append(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    if "lib.viz.live" in modules:  # the site draws a live figure itself; this is its static form
        return "live figure's static form"
    if "figure_png" in names:
        return "figure_png"
    if any(m.startswith(("matplotlib_inline", "IPython.core.pylabtools")) for m in modules):
        return "inline"
    return "savefig"


# ----------------------------------------------------------------------------------------------
# the client: run a chapter, group the records by cell


def run_chapter(path: Path, timeout: int = 600, png_dir: Path | None = None) -> list[dict]:
    """Execute ``path`` in a fresh kernel and return one row per cell that saved a picture
    (``png_dir``: write every PNG saved there too)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    figure_numbers, n = {}, 0
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.get("metadata", {}).get("mystnb", {}).get("figure"):
            n += 1
            figure_numbers[id(cell)] = n
    records, error = _execute_recording(nb, path, timeout, png_dir)
    rows = {}
    for record in records:
        index = record["cell"] - 1
        if not 0 <= index < len(code_cells):
            continue
        cell = code_cells[index]
        meta = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        row = rows.setdefault(
            index,
            {
                "cell_id": cell.get("id", f"cell {index}"),
                "number": figure_numbers.get(id(cell)),
                "name": meta.get("name"),
                "caption": meta.get("caption"),
                "pictures": [],
            },
        )
        row["pictures"].append(record)
    result = [_worst_picture(rows[index]) for index in sorted(rows)]
    if error is not None:
        result.append({"error": f"{type(error).__name__}: {str(error)[-300:]}"})
    return result


def _execute_recording(nb, path: Path, timeout: int, png_dir: Path | None):
    """Run ``nb`` with ``install`` recording every picture it saves: (the records, the error that
    stopped the run or None)."""
    import nbformat
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "records.jsonl"
        out.touch()
        setup = (
            f"import sys\nsys.path.insert(0, {str(ROOT / 'tools')!r})\n"
            f"import figure_text as _figure_text\n"
            f"_figure_text.install({str(out)!r}, {str(png_dir) if png_dir else None!r})"
        )
        nb.cells.insert(0, nbformat.v4.new_code_cell(setup))
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        error = None
        try:
            client.execute()
        except Exception as e:  # report what was measured before the failure
            error = e
        records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return records, error


def _worst_picture(row: dict) -> dict:
    """A cell's row with the measures of its picture whose text is smallest on a phone."""
    measured = [p for p in row["pictures"] if p["smallest_pt"] is not None]
    worst = min(measured, key=lambda p: p["px_at_330"]) if measured else row["pictures"][0]
    row.update(
        {
            "n": len(row["pictures"]),
            "via": sorted({p["via"] for p in row["pictures"]}),
            "width_px": worst["width_px"],
            "height_px": worst["height_px"],
            "dpi": worst["dpi"],
            "smallest_pt": worst["smallest_pt"],
            "px_at_330": worst["px_at_330"],
            "px_at_720": min((p["px_at_720"] for p in measured), default=None),
        }
    )
    return row


def label(row: dict, chapter: str) -> str:
    if row.get("number"):
        return f"Fig. {int(chapter[:2])}.{row['number']} `{row['name']}`"
    return f"cell `{row['cell_id']}`"


def table(chapter: str, rows: list[dict], seconds: float | None = None) -> str:
    head = f"### {chapter}" + (f" ({seconds:.0f} s)" if seconds is not None else "")
    lines = [
        head,
        "",
        "| figure | pictures | size (px) | dpi | smallest (pt) | px at 330 | px at 720 | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"\nthe chapter stopped: {row['error']}")
            continue

        def px(x):
            return "-" if x is None else f"{x:.1f}"

        small = row["px_at_330"] is not None and row["px_at_330"] < LEGIBLE_PX
        small_720 = row["px_at_720"] is not None and row["px_at_720"] < LEGIBLE_PX
        flag = "**< 9 px on a phone**" if small else ""
        if small_720:
            flag += " **< 9 px at 720**"
        via = "" if row["via"] == ["inline"] else f" ({', '.join(row['via'])})"
        lines.append(
            f"| {label(row, chapter)} | {row['n']}{via} | {row['width_px']} x {row['height_px']} "
            f"| {row['dpi']:g} | {px(row['smallest_pt'])} | {px(row['px_at_330'])} "
            f"| {px(row['px_at_720'])} | {flag} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    md = png = None
    if "--md" in argv:
        i = argv.index("--md")
        md, argv = Path(argv[i + 1]), argv[:i] + argv[i + 2 :]
    if "--png" in argv:
        i = argv.index("--png")
        png, argv = Path(argv[i + 1]), argv[:i] + argv[i + 2 :]
    paths = [
        p
        for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if not argv or any(p.name.startswith(x) for x in argv)
    ]
    small = 0
    for path in paths:
        start = time.perf_counter()
        png_dir = None
        if png is not None:
            png_dir = (png / path.stem).resolve()
            png_dir.mkdir(parents=True, exist_ok=True)
        rows = run_chapter(path, png_dir=png_dir)
        text = table(path.stem, rows, time.perf_counter() - start)
        small += sum(
            1 for r in rows if r.get("px_at_330") is not None and r["px_at_330"] < LEGIBLE_PX
        )
        print(text, flush=True)
        if md is not None:
            with md.open("a") as f:
                f.write(text + "\n")
    print(f"{small} figure(s) with text under {LEGIBLE_PX:g} px in a {PHONE_COLUMN_PX} px column")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
