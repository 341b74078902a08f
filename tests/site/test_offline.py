"""The built site loads nothing from another host: no external script, style sheet or font.

Links to other sites (<a href>) are fine; what a page *loads* is not: <script src>, <link href> of a
style sheet, font, icon or preload, <img src>, <iframe src>, CSS @import and url(...) in style sheets.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from .conftest import site_pages

pytestmark = pytest.mark.site

EXTERNAL = re.compile(r"^(https?:)?//", re.IGNORECASE)
LOADING_LINK_RELS = {
    "stylesheet",
    "preload",
    "modulepreload",
    "icon",
    "shortcut",
    "apple-touch-icon",
    "manifest",
    "prefetch",
    "dns-prefetch",
    "preconnect",
}


class _Loads(HTMLParser):
    """Collects every URL a page would load, with the tag that loads it."""

    def __init__(self):
        super().__init__()
        self.loads: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed") and a.get("src"):
            self.loads.append((tag, a["src"]))
        if tag == "link" and a.get("href"):
            rels = set((a.get("rel") or "").lower().split())
            if rels & LOADING_LINK_RELS or a.get("as") in ("font", "script", "style"):
                self.loads.append((f"link rel={a.get('rel')}", a["href"]))
        if tag == "object" and a.get("data"):
            self.loads.append((tag, a["data"]))


def external_loads(html: str) -> list[tuple[str, str]]:
    parser = _Loads()
    parser.feed(html)
    found = [(tag, url) for tag, url in parser.loads if EXTERNAL.match(url)]
    # require.js module paths and similar addresses inside inline scripts
    found += [
        ("inline script", url)
        for url in re.findall(
            r"""['"]((?:https?:)?//(?:cdnjs|cdn\.jsdelivr|unpkg|code\.jquery|d3js|fonts\.g)[^'"]*)['"]""",
            html,
        )
    ]
    return found


def test_parser_finds_external_loads():
    """The checker itself must be able to fail."""
    html = (
        '<script src="https://cdn.example.org/x.js"></script><link rel="stylesheet" '
        'href="//fonts.example/x.css">'
        '<a href="https://example.org">fine</a><link rel="canonical" '
        'href="https://example.org/">'
        "<script>require.config({paths: {d3: 'https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min'}})</script>"
    )
    found = external_loads(html)
    assert [u for _, u in found] == [
        "https://cdn.example.org/x.js",
        "//fonts.example/x.css",
        "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min",
    ]


def test_pages_exist(site):
    names = {p.relative_to(site).as_posix() for p in site_pages(site)}
    for page in (
        "index.html",
        "book/intro.html",
        "book/how_to_use.html",
        "book/notation.html",
        "notebooks/02_attention_as_soft_lookup.html",
        "notebooks/03_scoring_functions.html",
    ):
        assert page in names, f"{page} missing from the built site"


def test_no_page_loads_from_another_host(site):
    offenders = {}
    for page in site_pages(site):
        found = external_loads(page.read_text(encoding="utf-8", errors="replace"))
        if found:
            offenders[page.relative_to(site).as_posix()] = found
    assert not offenders, f"pages that load from the network: {offenders}"


def test_no_stylesheet_loads_from_another_host(site):
    offenders = {}
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        found = re.findall(r"""@import\s+(?:url\()?\s*['"]?((?:https?:)?//[^'")\s]+)""", text)
        found += re.findall(r"""url\(\s*['"]?((?:https?:)?//[^'")\s]+)""", text)
        if found:
            offenders[css.relative_to(site).as_posix()] = found
    assert not offenders, f"style sheets that load from the network: {offenders}"


def test_vendored_assets_are_served(site):
    vendor = site / "_static" / "vendor"
    for name in (
        "mathjax/tex-chtml.js",
        "require.js",
        "d3.min.js",
        "jquery.min.js",
        "html-manager/embed-amd.js",
    ):
        path = vendor / name
        assert path.is_file() and path.stat().st_size > 10_000, f"{path} missing or truncated"
