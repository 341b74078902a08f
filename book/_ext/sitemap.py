"""Sphinx extension: the site's sitemap.xml, under the base URL of ``_config.yml``.

The site's address is written once, ``html.baseurl`` in ``_config.yml`` (Sphinx's ``html_baseurl``).
Sphinx writes each page's canonical link from it; this extension lists every page of the book under it
in ``sitemap.xml`` (the sitemaps.org protocol) when the HTML builder finishes (no robots.txt: crawlers
read it only at a host's root, and a project site of GitHub Pages lives under a path; a sitemap is
submitted to a search engine by its address). Nothing is written without a base URL (a sitemap needs absolute addresses) or for the
other builders (the single page the PDF prints, the ePub). sphinx-sitemap would do the same with one
more dependency, and it lists pages from the builder's writes, which the execution cache skips.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from xml.sax.saxutils import escape

from sphinx.application import Sphinx

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"


def page_urls(baseurl: str, targets: list[str]) -> list[str]:
    """The absolute address of each page (``targets`` are the builder's target URIs, relative to the
    site's root), in order, without duplicates."""
    if not baseurl.startswith(("https://", "http://")):
        raise ValueError(f"html.baseurl must be an absolute http(s) address, got {baseurl!r}")
    base = baseurl if baseurl.endswith("/") else baseurl + "/"
    return list(dict.fromkeys(posixpath.join(base, target) for target in targets))


def sitemap_xml(urls: list[str]) -> str:
    entries = "".join(f"  <url><loc>{escape(url)}</loc></url>\n" for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NAMESPACE}">\n{entries}</urlset>\n'


def _write(app: Sphinx, exception: Exception | None) -> None:
    baseurl = app.config.html_baseurl
    if exception is not None or app.builder.name not in ("html", "dirhtml") or not baseurl:
        return
    docs = [app.config.root_doc] + sorted(d for d in app.env.found_docs if d != app.config.root_doc)
    urls = page_urls(baseurl, [app.builder.get_target_uri(d) for d in docs])
    out = Path(app.outdir)
    (out / "sitemap.xml").write_text(sitemap_xml(urls), encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
