"""Every built page states the licences in its footer (issue 25)."""

from __future__ import annotations

import pytest

from .conftest import site_pages

pytestmark = pytest.mark.site


def test_every_page_has_the_licence_footer(site):
    pages = site_pages(site)
    assert len(pages) > 20
    missing = []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in html.lower() and "<footer" not in html:
            continue  # the root index.html only redirects to the home page
        if page.parent.name == "slides":
            continue  # the reveal.js decks (tools/make_slides.py) are slides, without a page footer
        footer = html.split('class="book-licence"', 1)
        if len(footer) < 2 or "CC BY 4.0" not in footer[1][:600] or "MIT" not in footer[1][:600]:
            missing.append(page.relative_to(site).as_posix())
    assert not missing, f"pages without the licence footer: {missing}"
