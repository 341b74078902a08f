"""Sphinx extension: a slide deck per chapter (issue 14), made at the end of every HTML build.

The decks (``slides/<chapter>.html``) are written by ``tools/make_slides.py`` from the chapters the build
has just executed (its execution cache, ``_build/.jupyter_cache``), with reveal.js from the npm registry, so they
show the page's own figures and work offline. Every chapter page gets a link to its deck at the top.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from live_lab import ESBUILD, WEB, bundle
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "notebooks/"
REVEAL = ROOT / "node_modules" / "reveal.js" / "dist"
logger = logging.getLogger(__name__)


def _link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    # not in the ePub, which holds no decks (tools/print_book.py): the line would link nowhere
    if app.builder.name.startswith("epub"):
        return
    if not pagename.startswith(CHAPTER) or "body" not in context:
        return
    deck = context["pathto"](f"slides/{pagename[len(CHAPTER) :]}.html", 1)
    context["body"] = (
        f'<p class="book-slides-link"><a href="{deck}">Slides for this chapter</a> (reveal.js; press <kbd>s</kbd> in the deck for the speaker notes)</p>\n'
        + context["body"]
    )


def _assets(site: Path) -> None:
    """The decks' scripts and styles under _static/slides: reveal.js's style sheets (npm) and
    web/src/slides.js bundled with reveal.js."""
    for path in (REVEAL / "reveal.css", ESBUILD):
        if not path.exists():
            raise ExtensionError(f"slides: {path} is missing: run `npm ci` (make book does)")
    static = site / "_static" / "slides"
    (static / "dist" / "theme").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REVEAL / "reveal.css", static / "dist" / "reveal.css")
    shutil.copyfile(REVEAL / "theme" / "white.css", static / "dist" / "theme" / "white.css")
    shutil.copyfile(WEB / "slides.css", static / "slides.css")
    bundle("slides.js", "iife", static / "slides.js")


def _decks(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    _assets(Path(app.outdir))
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_slides
    finally:
        sys.path.pop(0)
    cache = Path(app.outdir).parent / ".jupyter_cache"  # execute_notebooks: cache (_config.yml)
    try:
        written = make_slides.write_decks(Path(app.outdir), cache)
    except FileNotFoundError as e:
        raise ExtensionError(f"slides: {e}") from e
    logger.info(f"slides: {len(written)} decks written to {Path(app.outdir) / 'slides'}")


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _link)
    app.connect("build-finished", _decks)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
