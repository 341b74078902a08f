"""Sphinx extension: the built site serves every browser asset itself, so it works with the network off.

What it does:

1. Copies the browser assets that `npm install` put in ``node_modules`` (versions pinned in
   ``package.json``; nothing third-party is committed) into ``_static/vendor/`` of the built site:
   MathJax 3, require.js, d3 and jQuery (for bertviz's head views) and the ipywidgets HTML manager.
2. Rewrites, in every page body, the CDN addresses that notebook outputs carry (bertviz's head view
   loads require.js, d3 and jQuery from cdnjs) to those local copies, with a path relative to the page.
3. Fails the build if a page body still names a CDN host afterwards, so a new output that loads
   something from the network is caught when the book is built, not when a reader is offline.

``_config.yml`` points ``mathjax_path`` and myst-nb's ``nb_ipywidgets_js`` at the same ``vendor/`` files.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"

# destination under _static/vendor -> source under node_modules (a file or a whole folder)
VENDOR_FILES = {
    "mathjax": "mathjax/es5",
    "require.js": "requirejs/require.js",
    "d3.min.js": "d3/dist/d3.min.js",
    "jquery.min.js": "jquery/dist/jquery.min.js",
    "html-manager": "@jupyter-widgets/html-manager/dist",
}
# our own small scripts, copied next to the vendored ones
OWN_FILES = {
    name: Path(__file__).with_name(name) for name in ("require-config.js", "mathjax2-shim.js")
}

# CDN address found in notebook outputs -> local file under _static/vendor (require.js module paths
# carry no ".js" suffix, so neither do their replacements). bertviz 1.4.1 asks for jQuery 2.0.0,
# which the npm registry does not have; 2.2.4 is the last 2.x release and what package.json pins.
CDN_REWRITES = {
    "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js": "require.js",
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min": "d3.min",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min": "jquery.min",
}

CDN_HOSTS = re.compile(
    r"https?://(cdnjs\.cloudflare\.com|cdn\.jsdelivr\.net|unpkg\.com|code\.jquery\.com|d3js\.org|fonts\.googleapis\.com|fonts\.gstatic\.com)[^\"'\s)]*"
)


def _check_sources(app: Sphinx) -> None:
    missing = [src for src in VENDOR_FILES.values() if not (NODE_MODULES / src).exists()]
    if missing:
        raise ExtensionError(
            f"offline_assets: browser assets missing from {NODE_MODULES}: {missing}. Run `npm ci` (make book does) before building the book."
        )


def _drop_thebe(context: dict) -> None:
    """Remove sphinx-thebe's scripts. Jupyter Book 1.x always loads sphinx-thebe; this book does not use
    it (launch_buttons.thebe is false), yet its inline config names unpkg.com and is added twice, which
    throws "Identifier 'THEBE_JS_URL' has already been declared" on every page."""

    def is_thebe(script) -> bool:
        # by file name (sphinx-thebe.js), or the inline config by its first line; never by the body of
        # any other inline script: a widget state's base64 images can contain "thebe" by chance
        filename = str(
            getattr(script, "filename", None) or (script if isinstance(script, str) else "")
        )
        body = getattr(script, "attributes", {}).get("body", "") or ""
        return "thebe" in filename.lower() or body.startswith("const THEBE_JS_URL")

    context["script_files"] = [s for s in context.get("script_files", []) if not is_thebe(s)]


def _rewrite_body(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    _drop_thebe(context)
    body = context.get("body")
    if not body:
        return
    for cdn, local in CDN_REWRITES.items():
        if cdn in body:
            body = body.replace(cdn, context["pathto"](f"_static/vendor/{local}", 1))
    leftover = sorted(set(m.group(0) for m in CDN_HOSTS.finditer(body)))
    if leftover:
        raise ExtensionError(
            f"offline_assets: page {pagename!r} loads {leftover} from the network; add a local copy (package.json) and a rewrite in book/_ext/offline_assets.py"
        )
    context["body"] = body


def _copy_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    vendor = Path(app.outdir) / "_static" / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    for dest, src in VENDOR_FILES.items():
        source, target = NODE_MODULES / src, vendor / dest
        if source.is_dir():
            shutil.copytree(
                source,
                target,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns(
                    "*.map", "libembed-amd.js", "embed.js", "*.LICENSE.txt"
                ),
            )
        else:
            shutil.copy2(source, target)
    for dest, source in OWN_FILES.items():
        shutil.copy2(source, vendor / dest)


def _write_index_redirect(app: Sphinx, exception: Exception | None) -> None:
    """The site's index.html: a redirect to the first page, with the favicon, so that a browser opening
    it does not ask the server for /favicon.ico (sphinx-external-toc's own redirect has no icon link)."""
    if exception is not None or app.builder.format != "html":
        return
    index = Path(app.outdir) / "index.html"
    if app.config.root_doc == "index":
        return
    target = app.builder.get_target_uri(app.config.root_doc)
    title = app.config.html_title or app.config.project
    index.write_text(
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title><link rel="icon" href="_static/favicon.svg" type="image/svg+xml"><meta http-equiv="Refresh" content="0; url={target}"></head><body><a href="{target}">{title}</a></body></html>\n',
        encoding="utf-8",
    )


def setup(app: Sphinx) -> dict:
    # A config value that changes with this file and its scripts: Sphinx compares "env" config values
    # with the previous build's, so an edit here rebuilds every page (the pages are written by this code).
    own = [
        Path(__file__),
        *(Path(__file__).parent / name for name in ("require-config.js", "mathjax2-shim.js")),
    ]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in own if p.exists())).hexdigest()
    app.add_config_value("offline_assets_digest", digest, "env")
    app.connect("builder-inited", _check_sources)
    app.connect("html-page-context", _rewrite_body)
    app.connect("build-finished", _copy_assets)
    # before sphinx-external-toc's
    app.connect("build-finished", _write_index_redirect, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
