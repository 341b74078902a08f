"""Every chapter ran top to bottom in a fresh kernel, from its current source, against the current lib.

The build (`make book`) executes each chapter in a fresh kernel with `allow_errors: false`, so a cell
that raises, an assertion included, fails the build. These tests read what that execution left, rather
than executing every chapter a second time inside `make test` (that took about 8 of its minutes):
- the execution cache holds a record for each chapter's current code, made against the current lib/
  (tools/chapter_cache.py empties the cache before a build when lib/ changed, and records which lib
  filled it);
- in the notebook that execution produced, every code cell ran once, top to bottom, in one kernel,
  and none has an error output.
The time each execution took is `make bench`'s (benchmarks/book.py reads it from the same cache and
reports it against the 90 s budget): a timing assertion here failed on a 2-core machine twice as slow
as another for that reason alone, and speed goals live in the benchmarks.
`make test-notebooks` runs the chapters under nbval as well, for a developer who wants that by itself.
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import chapter_cache  # noqa: E402

from lib.prose import NOTE, REASONS, SAME_REASON, on_text_processor  # noqa: E402
from lib.viz.interactive import phone_shown_px, svg_text  # noqa: E402

# a tqdm line: "desc: 100%|####| 40/40 [00:01<00:00, 25.3it/s]"
PROGRESS_BAR = re.compile(r"\d+%\|.*\| *\d+/\d+")
CHAPTERS = chapter_cache.CHAPTERS

pytestmark = pytest.mark.site


def executed(path: Path):
    """The cache's record of the chapter's current code and the notebook that execution produced."""
    from jupyter_cache import get_cache

    cache = get_cache(chapter_cache.CACHE)
    source = nbformat.read(path, as_version=4)
    try:
        record = cache.match_cache_notebook(source)
    except KeyError:
        pytest.fail(
            f"the build's cache holds no execution of {path.name} as it is now: run `make book`"
        )
    return source, record, cache.get_cache_bundle(record.pk).nb


def test_every_chapter_is_checked():
    assert len(CHAPTERS) == 18, [p.name for p in CHAPTERS]


def test_the_cache_was_filled_by_the_current_lib(site):
    recorded = chapter_cache.recorded_fingerprint()
    assert recorded is not None, (
        "no record of the lib that filled the build's cache: run `make book`"
    )
    assert recorded == chapter_cache.lib_fingerprint(), (
        "lib/ or requirements.txt changed since the build executed the chapters: run `make book`"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_build_ran_the_current_chapter_top_to_bottom_without_error(site, path):
    source, record, nb = executed(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [c.source for c in source.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code if c.source.strip()]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: its cells were not executed once each, top to bottom, in one kernel: {counts}"
    )
    for cell in code:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: a cell raised {errors[0].ename}: {errors[0].evalue}"
        # lib.prose: on the kind of processor that computed the text (Intel, with the Makefile's
        # pins) the text's numbers about trained models are this run's; on another (an AMD EPYC
        # trains to other numbers) each disagreement is a note, whole and with its reason
        notes = [o.text for o in cell.outputs if o.output_type == "stream" and NOTE in o.text]
        if on_text_processor():
            assert not notes, f"{path.name}: the text and this build's run disagree: {notes[0]}"
        # the first note of a cell gives its reason; the next ones may end on "(the same reason)."
        lines = [line for text in notes for line in text.splitlines() if NOTE in line]
        for i, line in enumerate(lines):
            assert line.startswith(NOTE) and (
                line.endswith(tuple(REASONS.values())) or (i > 0 and line.endswith(SAME_REASON))
            ), f"{path.name}: not a note of lib.prose: {line}"
        # Nothing a reader sees comes from stderr: a warning (matplotlib's findfont when its font
        # cache is broken, a deprecation, torch's UserWarning) lands on the page as a block of text.
        # Progress bars (tqdm writes them to stderr) are the only stderr a chapter may print.
        warnings = [
            line
            for o in cell.outputs
            if o.output_type == "stream" and o.name == "stderr"
            for line in o.text.replace("\r", "\n").splitlines()
            if line.strip() and not PROGRESS_BAR.search(line)
        ]
        assert not warnings, f"{path.name}: a cell printed to stderr: {warnings[:3]}"


# A figure's smallest text where a 360 px phone shows it (lib.viz.interactive.phone_text_px, measured
# from what the build drew): matplotlib's SVG writes each text as glyph paths under "scale(s -s)", s its
# size in points / 100, on a canvas of the SVG's width in points; the site shows the PNG, whose width in
# pixels is the picture's natural width. Readers on phones called 9-10 px figure text too small (chapters
# 5, 12, 16, 17, 18); the book's floor for every static figure and slider picture is 11 CSS px.
PHONE_TEXT_PX = 11.0  # slider pictures: SLIDER_TEXT_PX, tests/site/test_rendering.py


def svg_phone_text_px(svg: str, png_width: int) -> float:
    """The smallest text of a figure drawn as ``svg`` (matplotlib's, text as paths) and as a PNG
    ``png_width`` pixels wide, in CSS px on a 360 px phone; inf for a figure without text."""
    measured = svg_text(svg)
    if measured is None:
        return float("inf")
    return measured[0] * phone_shown_px(png_width) / measured[1]


def test_svg_phone_text_px_agrees_with_phone_text_px():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.viz.interactive import figure_png, phone_text_px

    for width, size in [(5.2, 11), (4.4, 11), (8, 13), (3, 9)]:
        fig, ax = plt.subplots(figsize=(width, 3), dpi=110)
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set_title("a title", fontsize=size + 2)
        ax.set_xlabel(r"$\alpha_t$ by position", fontsize=size)
        ax.legend(fontsize=size + 1)
        ax.tick_params(labelsize=size + 1)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg")
        png = figure_png(fig)
        png_width = int.from_bytes(png[16:20], "big")
        assert png_width == round(width * 110)
        assert svg_phone_text_px(buffer.getvalue().decode(), png_width) == pytest.approx(
            phone_text_px(fig, drawn=True), rel=1e-6
        )
        plt.close(fig)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_reads_on_a_phone(site, path):
    _, _, nb = executed(path)
    small = []
    for number, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/svg+xml" in data and "image/png" in data:
                png = base64.b64decode(data["image/png"])
                px = svg_phone_text_px(data["image/svg+xml"], int.from_bytes(png[16:20], "big"))
                if px < PHONE_TEXT_PX:
                    small.append(f"code cell {number}: {px:.1f} px")
    assert not small, f"{path.name}: figure text under {PHONE_TEXT_PX} CSS px on a phone: {small}"
