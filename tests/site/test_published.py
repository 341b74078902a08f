"""The site as it is published (README, "Publishing the book"): under a path, in Chromium, network off.

GitHub Pages serves a repository's site under a path (https://<owner>.github.io/attention-book/), not at
a host's root as ``make serve`` and the other browser tests do, and a file a page asks of the host's
root ("/_static/...") is found locally and missing once published. So the built site is placed at the
path of ``html.baseurl`` (``_config.yml``) in a temporary folder (tools/publish.py ``mount``) and served
from there on 127.0.0.1; every host but 127.0.0.1 fails to resolve (tests/site/conftest.py). There the
home page leads to the chapters and to the PDF and ePub, chapter 4's live translator downloads its model
and translates as the library did when the site was built, and the Lab's Playground trains as the
library does; every request stays under the site's path, none fails, no console error. The built
site's own checks (tools/publish.py ``check``: sitemap and canonical links under the base URL, no
absolute path) and the launch buttons' ref are tested here too.
"""

from __future__ import annotations

import json
import sys
from urllib.parse import urlparse

import numpy as np
import pytest
import yaml

from lib import playground as pg

from .conftest import ROOT, toc_entries
from .test_browser import LOCAL_SCHEMES, console_errors, open_page, wait_until
from .test_live_figures import TRANSLATOR, read, translate
from .test_live_minilm import message, wait_state
from .test_playground_page import DEFAULT, library_run, load, steps
from .test_playground_page import ROOT as PLAYGROUND

sys.path.insert(0, str(ROOT / "tools"))
import publish  # noqa: E402
import sync_colab_cell  # noqa: E402

pytestmark = pytest.mark.browser

CH04 = "notebooks/04_bahdanau_and_luong.html"
LAB = "book/lab.html"


@pytest.fixture(scope="module")
def published(site, tmp_path_factory):
    """The site's address on a loopback host that serves it under its published path, ending in /."""
    host = tmp_path_factory.mktemp("host")
    path = publish.mount(site, host)
    assert path.strip("/") and not (host / "index.html").exists()  # nothing at the host's root
    httpd = publish.serve_folder(host)
    yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    httpd.shutdown()


def traffic(driver, published: str) -> dict:
    """The page's requests since it was opened, from the DevTools log: those outside the site's path
    (another host, or this host's root) and those answered with an error status."""
    outside, failed, urls = [], [], {}
    for entry in driver.get_log("performance"):
        m = json.loads(entry["message"])["message"]
        if m.get("method") == "Network.requestWillBeSent":
            url = m["params"]["request"]["url"]
            urls[m["params"]["requestId"]] = url
            if urlparse(url).scheme not in LOCAL_SCHEMES and not url.startswith(published):
                outside.append(url)
        elif m.get("method") == "Network.responseReceived":
            response = m["params"]["response"]
            if response["status"] >= 400:
                failed.append((response["status"], response["url"]))
    return {"outside": outside, "failed": failed, "urls": list(urls.values())}


def test_a_request_to_the_hosts_root_is_caught(published, browser):
    """The check itself can fail: a file asked of the host's root (what an absolute path does) is
    outside the site's path and, there being nothing at the root, answered 404."""
    open_page(browser, f"{published}book/notation.html")
    traffic(browser, published)
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/_static/book.css').then((r) => done(r.status), (e) => done(String(e)));"
    )
    seen = traffic(browser, published)
    root = published.split("/", 3)[:3]
    assert seen["outside"] == ["/".join(root) + "/_static/book.css"]
    assert [status for status, _ in seen["failed"]] == [404]


def test_the_home_page_leads_to_the_chapters_and_the_printed_book(published, browser):
    open_page(browser, published)  # the site's folder: index.html, which forwards to the first page
    assert wait_until(browser, "location.pathname.endsWith('/book/intro.html')")
    assert browser.current_url == f"{published}book/intro.html"
    # the theme's style sheets and scripts came from under the path: the navigation is laid out
    assert browser.execute_script("return document.styleSheets.length;") >= 5
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map((a) => a.href);"
    )
    chapters = [e for e in toc_entries() if e.startswith("notebooks/")]
    for entry in chapters:
        assert f"{published}{entry}.html" in hrefs, entry
    for name in publish.PRINTED:
        assert f"{published}{name}" in hrefs, name
        status = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {method: 'HEAD'}).then((r) => done(r.status), (e) => done(String(e)));",
            f"{published}{name}",
        )
        assert status == 200, (name, status)
    seen = traffic(browser, published)
    assert len(seen["urls"]) > 10 and not seen["outside"] and not seen["failed"], seen
    assert not console_errors(browser)


def test_a_chapters_live_figure_computes_under_the_path(published, browser, site):
    """Chapter 4's translator: the model, the runtime's WebAssembly and the worker come from under the
    site's path, and the page translates as the library did when the site was built."""
    reference = json.loads((site / "_static" / "live" / "reference.json").read_text())["translator"]
    open_page(browser, f"{published}{CH04}")
    root = f"document.querySelector({TRANSLATOR!r})"
    assert browser.execute_script(f"return {root}.dataset.state;") == "example"
    assert wait_until(browser, f"{root}.querySelector('.book-live-button')")
    browser.execute_script(f"{root}.querySelector('.book-live-button').click();")
    assert wait_state(browser, TRANSLATOR, ("computed", "error"), 90) == "computed", message(
        browser, TRANSLATOR
    )
    ref = reference[0]
    assert translate(browser, ref["source"]) == "computed", message(browser, TRANSLATOR)
    tokens, attention = read(browser)
    assert tokens == ref["tokens"]
    # float32 on both sides, summed in another order (test_live_figures.py's tolerance)
    assert np.abs(attention - np.array(ref["attention"])).max() < 1e-4
    seen = traffic(browser, published)
    assert not seen["outside"] and not seen["failed"], seen
    assert [u for u in seen["urls"] if u.endswith(".onnx")], "the model was not fetched"
    assert not console_errors(browser)


def test_the_playground_trains_under_the_path(published, browser):
    """The Lab's Playground, its graph and worker from under the site's path: 5 steps in the page,
    each loss within 1e-4 of the library's (test_playground_page.py's tolerance)."""
    load(browser, published.rstrip("/"), DEFAULT, LAB)
    steps(browser, 5)
    losses = browser.execute_script(f"return {PLAYGROUND}.playground.losses;")
    ref = library_run(pg.PlaygroundConfig(task="reverse", positional="learned", seed=0), 5)
    assert [t for t, _ in losses] == [1, 2, 3, 4, 5]
    assert max(abs(a - b[0]) for (_, a), b in zip(losses, ref.history)) < 1e-4
    seen = traffic(browser, published)
    assert not seen["outside"] and not seen["failed"], seen
    assert not console_errors(browser)


@pytest.mark.site
def test_the_built_site_is_ready_to_publish(site):
    """tools/publish.py check (make publish): every page and the PDF and ePub present, the sitemap
    lists every page under html.baseurl, each page's canonical link is its address there, no page
    asks for a file by an absolute path or links a loopback server."""
    assert publish.check(site) == []


@pytest.mark.site
def test_launch_buttons_open_the_ref_the_setup_cell_installs(site):
    """Colab opens each chapter at repository.branch, the ref its setup cell installs the library from."""
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    owner_name = urlparse(repo["url"]).path.strip("/")
    ref = sync_colab_cell.repository_ref()
    assert f"git+{repo['url']}@{ref}" in sync_colab_cell.colab_cell_source()
    for entry in (e for e in toc_entries() if e.startswith("notebooks/")):
        text = (site / f"{entry}.html").read_text(encoding="utf-8")
        colab = f"https://colab.research.google.com/github/{owner_name}/blob/{ref}/{entry}.ipynb"
        assert colab in text, f"{entry}: no launch button to {colab}"
