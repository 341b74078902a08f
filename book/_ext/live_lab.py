"""Sphinx extension: the live figures (issue 13). The site computes: the book's models, exported from
lib to ONNX (tools/export_models.py, `make live-models`), run in the reader's browser.

At the end of an HTML build it writes ``_static/live/`` of the site:

- ``live.js`` and ``worker.js``: the book's own code in ``web/src`` bundled by esbuild (from the npm
  registry, pinned in package.json). live.js (~15 KB) is the only script a page with a live figure
  loads; worker.js holds onnxruntime-web (npm, WebAssembly backend) and runs only when a reader asks
  for a model.
- ``ort-wasm-simd-threaded.wasm``: onnxruntime-web's WebAssembly, served by the site itself (the
  worker points ``ort.env.wasm.wasmPaths`` at it; the runtime's default would fetch it from a CDN).
- ``models/`` and ``reference.json`` from ``$BOOK_LIVE_DIR`` (default ``_build/live``): the ONNX files,
  vocabularies and manifest (with the runtime's size added), and the PyTorch values the browser tests
  compare with. If that folder is missing the build fails: run ``make live-models``.

A Markdown page (the Lab) gets the Attention Playground from the ``{playground}`` directive: the
figure that ``lib.viz.playground.playground_figure`` returns (its default run, computed by lib when
the page is read), its content the caption. A chapter gets it from a code cell instead.

Pages whose body holds a live figure (``<div class="book-live" ...>``, written by lib.viz.live) get
``live.js`` and ``live.css``; other pages load nothing more.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web" / "src"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
ORT_DIST = ROOT / "node_modules" / "onnxruntime-web" / "dist"
WASM = "ort-wasm-simd-threaded.wasm"  # what onnxruntime-web/wasm's bundle loads (SIMD, one thread)


def live_dir() -> Path:
    return Path(os.environ.get("BOOK_LIVE_DIR", ROOT / "_build" / "live"))


def _check(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    manifest = live_dir() / "models" / "manifest.json"
    if not manifest.is_file():
        raise ExtensionError(
            f"live_lab: no exported models at {manifest.parent}: run `make live-models` (python tools/export_models.py --out _build/live) before building the book"
        )
    if not (live_dir() / "playground" / "manifest.json").is_file():
        raise ExtensionError(
            f"live_lab: no Playground graphs at {live_dir() / 'playground'}: run `make live-models` (python tools/export_playground.py --out _build/live)"
        )
    for path in (ESBUILD, ORT_DIST / WASM):
        if not path.exists():
            raise ExtensionError(f"live_lab: {path} is missing: run `npm ci` (make book does)")


def bundle(entry: str, fmt: str, outfile: Path) -> None:
    """Bundle the book's web/src/<entry> (and what it imports from npm) with esbuild into outfile:
    minified, licences in a linked file. The one place the book's JS is bundled (the live figures
    here, the slide decks in book/_ext/slides.py)."""
    done = subprocess.run(
        [
            str(ESBUILD),
            str(WEB / entry),
            "--bundle",
            f"--format={fmt}",
            "--minify",
            "--legal-comments=linked",
            f"--outfile={outfile}",
            "--log-level=error",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise ExtensionError(f"esbuild failed on web/src/{entry}:\n{done.stderr}")


def _write_static(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / "live"
    if out.exists():
        shutil.rmtree(out)
    (out / "models").mkdir(parents=True)
    bundle("live.js", "iife", out / "live.js")
    bundle("worker.js", "esm", out / "worker.js")
    bundle("playground/worker.js", "esm", out / "playground_worker.js")
    shutil.copyfile(WEB / "live.css", out / "live.css")
    shutil.copyfile(ORT_DIST / WASM, out / WASM)
    source = live_dir()
    for f in (source / "models").iterdir():
        if f.name != "manifest.json":
            shutil.copyfile(f, out / "models" / f.name)
    manifest = json.loads((source / "models" / "manifest.json").read_text())
    manifest["runtime_bytes"] = (out / WASM).stat().st_size + (out / "worker.js").stat().st_size
    (out / "models" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.copyfile(source / "reference.json", out / "reference.json")
    # the Playground's graphs (tools/export_playground.py): step, steps (K steps) and probe of every size
    shutil.copytree(source / "playground", out / "playground")


def _add_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    body = context.get("body") or ""
    if 'class="book-live"' in body:
        pathto = context["pathto"]
        context["body"] = (
            f'<link rel="stylesheet" href="{pathto("_static/live/live.css", 1)}">\n'
            + body
            + f'\n<script defer src="{pathto("_static/live/live.js", 1)}"></script>\n'
        )


class PlaygroundDirective(SphinxDirective):
    """```{playground}``` with the caption as content: the Playground on a page without a kernel."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        from lib.viz.playground import playground_figure

        figure = playground_figure(caption=" ".join(self.content).strip() or None)
        return [nodes.raw("", figure.html(), format="html")]


def setup(app: Sphinx) -> dict:
    app.add_directive("playground", PlaygroundDirective)
    app.connect("builder-inited", _check)
    app.connect("html-page-context", _add_scripts)
    app.connect("build-finished", _write_static)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
