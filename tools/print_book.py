"""The whole book for print and e-readers (issue 25): ``make pdf`` and ``make epub``.

PDF: Jupyter Book 1.x's ``pdfhtml`` builder prints with pyppeteer, which downloads its own Chromium (there
is no network on the build machine), and ``pdflatex`` needs a TeX installation of a few GB and turns the
book's HTML outputs (head views, live figures, widget pictures, styled tables) into nothing or raw text.
So the book is built as one HTML page (Sphinx's ``singlehtml`` builder through jupyter-book, reusing the
execution cache) and printed by the system's Chromium (Debian's, the one the browser tests use), driven
through the DevTools protocol: the page is loaded from a loopback server with the network off, MathJax
typesets every equation, the head views and sliders draw, then ``Page.printToPDF`` prints it. Chromium
prints what a reader sees on the site, fonts, SVG and MathJax included, which is why it was picked over
LaTeX.

The printed book's apparatus (issue 33) is CSS Paged Media as Chromium implements it, in
tools/print/pdf.css, with tools/print/prepare.js adding what a web page lacks: a title page (title,
authors and version from CITATION.cff, the commit from ``git describe``, the date, the licences, the
site's address), a contents whose entries link to the chapters, a named page per chapter (so each starts
a page, and the ``@top-right`` margin box of its pages carries its title: the running head), the page
number in a ``@bottom-center`` margin box, break-after/-inside rules that keep a heading with its text
and a short code block or table whole while a long one breaks between lines, the web page's controls
turned into print (folded code cells out, worked solutions open under a label, progress bars and
drop-downs out), the site's address wherever the text says "the book's website", and "On the website, "
before a sentence that tells the reader to drag, hover or click (tools/print/web_wording.json; the ePub
gets the same words, reword_for_print). Chromium writes the
PDF outline from the headings (``generateDocumentOutline``) and a named destination for every link
target. It has no ``target-counter()``, so the book is printed twice: the first printing's named
destinations give each chapter's page, which fills the contents (its numbers take the place of "000",
so nothing moves), and the second printing is the book; make_pdf checks that no chapter moved. The
index at the book's end (prepare.js: the glossary's terms, each with the pages where a chapter defines
or first links it, in two columns) is filled the same way from the same printing (FILL_INDEX), and
make_pdf checks that none of its places moved either. When
the report of the PDF printed last (its .json) has a page for every chapter, the contents is filled
with those numbers before the first printing, and when no chapter moved that printing is the book:
printed once (the same check). A rebuild that moved a chapter prints twice, as before.

Measured before choosing (issue 33, Chromium 156, this 2-core machine): paged.js 0.4.3 (npm's latest, the
CSS Paged Media polyfill that R's pagedown uses) gives string-set running heads and target-counter page
numbers, but stops with a SyntaxError on the theme's style sheets (``:is(...:focus-visible)+label:hover``,
a selector its css-tree 1.x cannot parse): it ran only after 133 rules were cut out of them, took 6.2 s
to paginate a 10-page sample that Chromium's own pagination printed in 0.3 s, left a heading alone at a
page's foot (it ignored break-after: avoid before a table) and broke the contents' flex layout.
Chromium's own engine already does named pages, margin boxes, break-* and orphans/widows (checked on
the same sample), and the second printing costs one more ``printToPDF``. Sphinx's LaTeX builder needs
TeX Live (not installed: no ``xelatex``; Debian's texlive-xetex, texlive-latex-extra and
texlive-fonts-recommended are 73 packages, 228 MB to download and 666 MB installed, on every build machine) and drops the outputs LaTeX cannot show (head views, live figures, HTML
tables); Typst has no Sphinx builder.
The whole book (2026-12-02, 2 cores shared with seven other builds, load 11 to 16): the singlehtml build
from the execution cache 373 s, this script 482 s (loading and MathJax 82 s, each printing about 170 s);
623 A4 pages at 10.5 pt (the web page as it was printed: 658 pages at about 8 pt).
Issue 33 (2026-12-02, the same machine at load 9 to 13): loading 203 s, the first printing 396 s, the
second 180 s (610 pages; timings in the report's ``timings``); reprinted with the contents' numbers
right, loading 63 s and one printing 156 s, 249 s in all. make_pdf also read the second printing's
named destinations once per chapter (pypdf reads the whole book's names each time): once now.

ePub: Sphinx's ``epub`` builder through jupyter-book's custom builder writes the book as XHTML; this
script then makes it a valid EPUB 3 (checked by Debian's ``epubcheck`` in ``make epub``): scripts are
removed (widget state, the live figures' JSON, bertviz's JavaScript: an e-reader runs none of it), every
picture embedded as a data URI is written out as a file of the book and listed in its manifest, each
equation is typeset to SVG by MathJax under Node (the same MathJax the site serves), the interactive
figures keep their static picture with a line saying where they are live, bertviz's head and model
views (which draw only with JavaScript) become a picture of the view as it opens on the site (taken by
the system's Chromium from the built site, ``_build/html``) with the figure's alt text and that line, the
navigation (nav.xhtml and toc.ncx) lists every part and chapter of ``_toc.yml`` (Sphinx's lists only the
home page: Jupyter Book's toctrees are hidden), and the archive is zipped with ``mimetype`` first and
uncompressed, as EPUB requires. It has a cover (make_cover: the title and authors of CITATION.cff, drawn
by Pillow) and a description and contributor (epub_metadata) for a reader's library.

A rebuild that changes nothing a reader sees does not print again: ``digest`` writes a sha256 of every file of
the built site (but its print/ folder, where the PDF and ePub are copied) to _build/site-content.sha256 and
rewrites that file only when the sum changed; the PDF and ePub rules depend on it, and make, which looks at
a prerequisite's time again after its recipe ran, leaves them alone when it did not change.

Usage:  python tools/print_book.py digest [--site _build/html] [--out _build/site-content.sha256]
        python tools/print_book.py pdf  [--html _build/singlehtml] [--out _build/print/attention-book.pdf]
        python tools/print_book.py epub [--epub-dir _build/epub] [--site _build/html]
                                        [--out _build/print/attention-book.epub]
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import html
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRINT_DIR = ROOT / "_build" / "print"
LIVE_NOTE = (
    "Live figure: this is its precomputed example. On the book's website the page computes it "
    "for your own input, in your browser, on this chapter's page."
)
SLIDER_NOTE = (
    "Interactive figure: shown at its first setting. On the book's website a slider steps "
    "through the others."
)
HEADVIEW_NOTE = (
    "Interactive view (bertviz): this is a picture of it as it opens. On the book's website, on this "
    "chapter's page, pointing at a token shows its lines, and the menu or the coloured squares pick "
    "another layer or head."
)

WEB_WORDING = json.loads(
    (ROOT / "tools" / "print" / "web_wording.json").read_text(encoding="utf-8")
)


def _spaced(pattern: str) -> str:
    """A wording pattern whose spaces match any run of white space (a line break of the HTML source)."""
    return pattern.replace(" ", r"\s+")


def web_sentences(text: str, rules: dict = WEB_WORDING) -> list[int]:
    """Where the sentences of ``text`` that name a web control (a slider to drag, a token to hover
    over, a box to click) without saying where it works start: each gets ``rules["prefix"]`` ("On the
    website, ") in print and in the ePub. tools/print/prepare.js does the same for the PDF."""
    web = re.compile(_spaced(rules["web"]), re.I)
    already = re.compile(_spaced(rules["already"]), re.I)
    not_end = re.compile(rules["not_ends"], re.I)
    starts = [0] + [
        m.end()
        for m in re.finditer(r"[.!?][\u2019\u201d)\]]*\s+", text)
        # the few characters before the period (pos keeps the word boundary before them): searching
        # the whole text before each period took minutes on the book's PDF
        if not not_end.search(text, max(0, m.start() - 15), m.start() + 1)
    ]
    found = []
    for start, end in zip(starts, starts[1:] + [len(text)]):
        sentence = text[start:end]
        if web.search(sentence) and not already.search(sentence):
            found.append(start)
    return found


def web_wording(text: str, rules: dict = WEB_WORDING) -> str:
    """``text`` with rules["replace"] made, and "On the website, " before each sentence that
    web_sentences finds (its first word lower-cased when it is an ordinary capitalised word)."""
    for pattern, replacement in rules["replace"]:
        text = re.sub(_spaced(pattern), replacement, text, flags=re.I)
    for start in reversed(web_sentences(text, rules)):
        rest = text[start:]
        if re.match(r"(?:A|[A-Z][a-z]+(?:-[a-z]+)?)\b", rest):
            rest = rest[0].lower() + rest[1:]
        text = text[:start] + rules["prefix"] + rest
    return text


# --- PDF ---------------------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _chromium(scale: float = 1.0, width: int = 1100):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        sys.exit(
            "make pdf needs Debian's chromium and chromium-driver (make browser installs them)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="book-print-")
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--no-first-run",
        f"--window-size={width},1400",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}",
        f"--force-device-scale-factor={scale}",
    ]:
        options.add_argument(flag)
    d = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    d.command_executor._client_config.timeout = 900  # printing the whole book takes minutes
    d.set_page_load_timeout(600)
    d.set_script_timeout(300)
    return d, profile


def site_url() -> str:
    """The published site's address, ``html.baseurl`` of ``_config.yml`` (ending in a slash)."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = str((config.get("html") or {}).get("baseurl") or "")
    if not base.startswith(("https://", "http://")):
        sys.exit(f"html.baseurl in _config.yml must be the site's http(s) address, got {base!r}")
    return base if base.endswith("/") else base + "/"


# The single page's links, made right for a PDF. It is printed from a loopback server as print.html,
# a copy of book/intro.html, and Sphinx's singlehtml links its own sections as "book/intro.html#id",
# so every cross-reference and citation would print as a link to http://127.0.0.1:<port>/, a server
# that is gone once the PDF is written. Links into the page become in-document links ("#id", which
# Chromium prints as jumps within the PDF); links to the rest of the site (the ePub, the index) point
# at the published site (arguments[0], html.baseurl). Returns the in-document links' count, any of
# them with no target, and the links to the site.
PDF_LINKS = r"""
const base = arguments[0];
const counts = {in_book: 0, to_site: [], missing_targets: []};
for (const a of document.querySelectorAll('a[href]')) {
  const url = new URL(a.getAttribute('href'), location.href);
  if (url.origin !== location.origin) continue;
  const path = url.pathname.replace(/^\/+/, '');
  if (path === 'print.html' || path === 'book/intro.html') {
    a.setAttribute('href', url.hash || '#');  // "#": the theme's buttons, which print hides
    if (url.hash.length < 2) continue;
    counts.in_book += 1;
    if (!document.getElementById(decodeURIComponent(url.hash.slice(1))))
      counts.missing_targets.push(url.hash);
  } else {
    a.setAttribute('href', new URL(path + url.search + url.hash, base).href);
    counts.to_site.push(a.getAttribute('href'));
  }
}
return counts;
"""


PRINT_DIR_SOURCES = ROOT / "tools" / "print"


def front_matter() -> dict:
    """What the title page says: the title (_config.yml), the authors and version (CITATION.cff), the
    commit it was printed from (git describe), the date, the licences and the site's address; and the
    documents of _toc.yml in order, each with its part and its address on the published site."""
    import datetime

    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    authors = [
        a.get("name") or " ".join(filter(None, [a.get("given-names"), a.get("family-names")]))
        for a in cff.get("authors", [])
    ]
    try:
        commit = subprocess.run(
            ["git", "describe", "--tags", "--always", "--dirty"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "not from a git checkout"
    base = site_url()
    docs = [
        {"doc": doc, "part": part, "url": f"{base}{doc}.html"}
        for part, part_docs in toc_parts()
        for doc in part_docs
    ]
    return {
        "title": config["title"],
        "authors": authors,
        "version": f"Version {cff.get('version', '?')}, printed from commit {commit}",
        "date": f"Printed on {datetime.date.today().isoformat()}",
        "licence": (
            "Text, figures and exercises: CC BY 4.0 (creativecommons.org/licenses/by/4.0); code: MIT. "
            "The files LICENSE-CONTENT, LICENSE and CITATION.cff of the book's repository say how to "
            "credit it."
        ),
        "site": base,
        "docs": docs,
        "wording": WEB_WORDING,
    }


PRINT_REPORT = r"""
const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const texts = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el || el.closest('pre, code, mjx-container, script, style, .highlight')) continue;
  if (!el.getClientRects().length) continue;
  texts.push(n.textContent);
}
const text = texts.join(' ');
const raw = [/application\/vnd\.jupyter/, /"version_major"/, /\{"model_id"/, /require\(\[/, /<script/,
  /\\\(|\\\[/].filter((re) => re.test(text)).map((re) => String(re) + ' ' + (text.match(re) ? text.slice(Math.max(0, text.search(re) - 60), text.search(re) + 60) : ''));
return {
  chapters: Array.from(document.querySelectorAll('h1, h2')).filter(shown).map((h) => h.textContent.replace(/#$/, '').trim()),
  math_sources: document.querySelectorAll('.math, span.math, div.math').length,
  math_rendered: document.querySelectorAll('mjx-container').length,
  math_errors: document.querySelectorAll('mjx-merror').length,
  images: Array.from(document.images).filter(shown).length,
  broken_images: Array.from(document.images).filter((i) => shown(i) && !(i.complete && i.naturalWidth)).length,
  live: document.querySelectorAll('.book-live').length,
  live_static: Array.from(document.querySelectorAll('.book-live .book-live-static img')).filter(shown).length,
  live_hidden_parts: Array.from(document.querySelectorAll('.book-live-controls, .book-live-views')).filter(shown).length,
  // slider figures print their static form (lib.viz.interactive's text/markdown): a picture, then the note
  sliders: Array.from(document.querySelectorAll('.cell_output')).filter((o) => o.textContent.includes('Interactive figure, shown at its first setting')).length,
  slider_pictures: Array.from(document.querySelectorAll('.cell_output')).filter((o) => o.textContent.includes('Interactive figure, shown at its first setting') && Array.from(o.querySelectorAll('img')).some((i) => shown(i) && i.complete && i.naturalWidth)).length,
  visible_sliders: Array.from(document.querySelectorAll('.noUi-target, .widget-slider, script[type="application/vnd.jupyter.widget-view+json"]')).filter(shown).length,
  raw_text: raw,
};
"""

# The page numbers of the contents, filled in before the second printing from the first one's
# named destinations (arguments[0]: {element id: page}).
FILL_CONTENTS = r"""
const pages = arguments[0];
let missing = [];
document.querySelectorAll('.book-toc-page').forEach((s) => {
  const p = pages[s.dataset.target];
  if (p === undefined) missing.push(s.dataset.target);
  s.textContent = p === undefined ? '' : String(p);
});
return missing;
"""

# The index's page numbers, filled in at the same time (arguments[0]: {element id: page}): each entry's
# numbers in page order, one link per page (two places of an entry on one page: one number)
FILL_INDEX = r"""
const pages = arguments[0];
let missing = [];
document.querySelectorAll('.book-index-pages').forEach((s) => {
  const seen = new Set();
  const found = [];
  for (const id of s.dataset.targets.split(' ')) {
    const p = pages[id];
    if (p === undefined) { missing.push(id); continue; }
    if (!seen.has(p)) { seen.add(p); found.push([p, id]); }
  }
  found.sort((a, b) => a[0] - b[0]);
  s.replaceChildren();
  found.forEach(([p, id], i) => {
    if (i) s.append(', ');
    const a = document.createElement('a');
    a.className = 'book-index-page';
    a.href = '#' + id;
    a.textContent = String(p);
    s.append(a);
  });
});
return missing;
"""

PRINT_OPTIONS = {
    "printBackground": True,
    "preferCSSPageSize": True,  # A4 and the margins of tools/print/pdf.css
    "displayHeaderFooter": False,  # the page number and running head are CSS margin boxes
    "generateDocumentOutline": True,  # bookmarks from the headings
    "generateTaggedPDF": True,  # headings, paragraphs and figures tagged (the outline is built from them)
}


def _print(driver) -> bytes:
    return base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", PRINT_OPTIONS)["data"])


def destinations(pdf: bytes) -> dict[str, int]:
    """{element id: page number (1-based)} of a PDF's named destinations (Chromium writes one for
    every element that a link of the page points at)."""
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    return {
        name.lstrip("/"): reader.get_destination_page_number(dest) + 1
        for name, dest in reader.named_destinations.items()
    }


def make_pdf(html_dir: Path, out: Path) -> Path:
    # the single page is written to book/intro.html (index.html redirects to it), but its links to
    # _static/ and _images/ are relative to the build's root: print a copy placed there
    single = html_dir / "book" / "intro.html"
    if not single.exists():
        sys.exit(
            f"no single-page book at {single}: build it with jupyter-book's singlehtml builder"
        )
    index = html_dir / "print.html"
    index.write_text(single.read_text(encoding="utf-8"), encoding="utf-8")
    css = (PRINT_DIR_SOURCES / "pdf.css").read_text(encoding="utf-8")
    prepare = (PRINT_DIR_SOURCES / "prepare.js").read_text(encoding="utf-8")
    meta = front_matter()
    httpd = _serve(html_dir)
    driver, profile = _chromium()
    timings = {}
    try:
        t0 = time.monotonic()
        _load(driver, f"http://127.0.0.1:{httpd.server_address[1]}/print.html")
        timings["load_s"] = round(time.monotonic() - t0, 1)
        # the book's pages: its style sheet, a title page, the contents, a named page per chapter
        driver.execute_script(
            "const s = document.createElement('style'); s.id = 'book-print-css';"
            "s.textContent = arguments[0]; document.head.append(s);",
            css,
        )
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        prepared = driver.execute_script(prepare, meta)
        if prepared["missing"]:
            sys.exit(f"chapters not found in the single-page book: {prepared['missing']}")
        time.sleep(1)
        links = driver.execute_script(PDF_LINKS, site_url())
        # what the printed page shows, measured in print media (tests/site/test_print.py reads it)
        report = driver.execute_script(PRINT_REPORT)
        report["links"] = links
        report["prepared"] = prepared
        data, pages = _print_numbered(driver, out, prepared, timings)
    finally:
        driver.quit()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    printed = destinations(data)  # once: pypdf reads the whole book's names each time
    moved = {
        c["id"]: (pages.get(c["id"]), printed.get(c["id"]))
        for c in prepared["chapters"]
        if printed.get(c["id"]) != pages.get(c["id"])
    }
    if moved:
        sys.exit(f"chapters moved between the two printings (first, second): {moved}")
    # the index's places too (the index is the book's end: its own numbers move nothing before it)
    index_ids = prepared["index"]["targets"]
    moved = {i: (pages.get(i), printed.get(i)) for i in index_ids if printed.get(i) != pages.get(i)}
    if moved:
        sys.exit(f"places of the index moved between the two printings (first, second): {moved}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    report["pages"] = pdf_pages(out)
    report["contents_pages"] = {c["id"]: pages[c["id"]] for c in prepared["chapters"]}
    report["index_pages"] = {i: pages[i] for i in index_ids}
    report["timings"] = timings
    out.with_suffix(".json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {report['pages']} pages)")
    return out


def _load(driver, url: str) -> None:
    """Open the single-page book at ``url`` and wait until MathJax has typeset it; stop if an
    equation or an image failed."""
    driver.get(url)
    print("loaded; waiting for MathJax", flush=True)
    deadline = time.monotonic() + 300
    while driver.execute_script("return document.readyState") != "complete":
        if time.monotonic() > deadline:
            sys.exit("the single-page book did not load")
        time.sleep(0.5)
    state = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (window.MathJax && MathJax.startup && MathJax.startup.promise)"
        "  MathJax.startup.promise.then(() => done('ok')).catch(e => done('error ' + e));"
        "else done('absent');"
    )
    if state != "ok":
        sys.exit(f"MathJax did not typeset the book: {state}")
    time.sleep(4)  # head views (d3) and widgets draw after load
    errors = driver.execute_script(
        "return document.querySelectorAll('mjx-merror').length + "
        "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth)).length;"
    )
    if errors:
        sys.exit(f"{errors} equations or images failed to render in the single-page book")


def _print_numbered(driver, out: Path, prepared: dict, timings: dict) -> tuple[bytes, dict]:
    """The PDF, with the contents' and the index's page numbers right: (its bytes, the page each
    chapter starts on as the contents says, and each place of the index as the index says)."""
    ids = [c["id"] for c in prepared["chapters"]]
    index_ids = prepared["index"]["targets"]
    # twice: the first printing says on which page each chapter starts, the second prints the
    # contents with those numbers (the numbers take the place of "000": nothing moves). Once
    # when the last printing's numbers (its report, next to the PDF) are still right: the
    # contents is filled with them before the first printing, which is the book when no
    # chapter starts on another page (checked below, as for the second)
    guess = previous_contents_pages(out, ids)
    index_guess = previous_contents_pages(out, index_ids, "index_pages")
    if guess:
        driver.execute_script(FILL_CONTENTS, guess)
    if index_guess:
        driver.execute_script(FILL_INDEX, index_guess)
    print("printing (1/2)", flush=True)
    t1 = time.monotonic()
    data = _print(driver)
    timings["print_s"] = round(time.monotonic() - t1, 1)
    pages = destinations(data)
    if (
        guess
        and index_guess
        and all(pages.get(i) == guess[i] for i in ids)
        and all(pages.get(i) == index_guess[i] for i in index_ids)
    ):
        print("the contents' and the index's page numbers were right: printed once", flush=True)
        timings["printings"] = 1
    else:
        missing = driver.execute_script(FILL_CONTENTS, pages)
        if missing:
            sys.exit(f"no page found for these chapters of the contents: {missing}")
        missing = driver.execute_script(FILL_INDEX, pages)
        if missing:
            sys.exit(f"no page found for these places of the index: {missing}")
        print("printing (2/2)", flush=True)
        t2 = time.monotonic()
        data = _print(driver)
        timings["print2_s"] = round(time.monotonic() - t2, 1)
        timings["printings"] = 2
    return data, pages


def previous_contents_pages(
    out: Path, ids: list[str], key: str = "contents_pages"
) -> dict[str, int] | None:
    """{chapter id: page} from the report of the PDF printed last at ``out`` (its .json), when it
    has a page for every chapter of ``ids``; None otherwise (no report, another book). With
    ``key="index_pages"``: {id of a place of the index: page}, the same way."""
    try:
        report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
        pages = report[key]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(pages, dict) or set(pages) != set(ids):
        return None
    if not all(isinstance(p, int) and 0 < p < 1000 for p in pages.values()):
        return None  # three digits at most: the width of "000"
    return pages


def pdf_pages(path: Path) -> int:
    """The number of pages of a PDF (Chromium writes one /Type /Page dictionary per page)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", path.read_bytes()))


# --- ePub --------------------------------------------------------------------------------------------

TEX2SVG = r"""
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean).map(JSON.parse);
require(process.argv[1]).init({
  loader: {paths: {mathjax: process.argv[2]}, load: ['input/tex-full', 'output/svg']},
  svg: {fontCache: 'none'}, startup: {typeset: false},
}).then((MathJax) => {
  const out = lines.map(([tex, display]) => {
    try {
      const node = MathJax.tex2svg(tex, {display});
      return MathJax.startup.adaptor.innerHTML(node);
    } catch (e) { return null; }
  });
  process.stdout.write(JSON.stringify(out));
}).catch((e) => { console.error(e); process.exit(1); });
"""


def tex_to_svg(items: list[tuple[str, bool]]) -> list[str | None]:
    """Typeset TeX (inline or display) to SVG markup with the npm MathJax the site serves, under Node."""
    if not items:
        return []
    mathjax = ROOT / "node_modules" / "mathjax"
    done = subprocess.run(
        ["node", "-e", TEX2SVG, str(mathjax / "es5" / "node-main.js"), str(mathjax / "es5")],
        input="\n".join(json.dumps(i) for i in items),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"MathJax under node failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


MATH_RE = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


# HTML5 elements an XHTML content document may hold (anything else in a page is text that an output
# printed unescaped, such as "<bos>", which the browser hides as an unknown element)
HTML_TAGS = set(
    """html head title meta link style body section nav article aside h1 h2 h3 h4 h5 h6 header footer
    address p hr pre blockquote ol ul li dl dt dd figure figcaption main div a em strong small s cite q
    dfn abbr ruby rt rp data time code var samp kbd sub sup i b u mark bdi bdo span br wbr ins del
    picture source img iframe embed object param video audio track map area table caption colgroup col
    tbody thead tfoot tr td th form label input button select datalist optgroup option textarea output
    progress meter fieldset legend details summary dialog script noscript template canvas svg math""".split()
)


WAIT_FOR_VIEWS = r"""
const done = arguments[arguments.length - 1];
const ids = arguments[0];
const t0 = Date.now();
(function poll() {
  const drawn = ids.every((id) => {
    const el = document.getElementById(id);
    return el && el.querySelector('svg') && el.querySelectorAll('svg text').length > 1;
  });
  if (drawn) setTimeout(() => done('ok'), 1500);  // bertviz fades its lines in
  else if (Date.now() - t0 > 60000) done('timeout');
  else setTimeout(poll, 250);
})();
"""


SHOW_VIEW = r"""
const el = arguments[0];
document.body.appendChild(el);
Object.assign(el.style, {position: 'absolute', left: '0', top: '0', display: 'inline-block',
  background: '#fff', color: '#000', padding: '6px', zIndex: '100000', width: 'max-content'});
window.scrollTo(0, 0);
"""


def headview_pictures(site: Path, pages: dict[str, list[str]]) -> dict[str, bytes]:
    """{bertviz id: PNG}: each bertviz view of ``pages`` ({page of the site: [ids]}), as the built site
    draws it on opening, photographed by the system's Chromium (the ePub build and the site come
    from the same executed notebooks, so a view has the same id in both)."""
    from selenium.webdriver.common.by import By

    pages = {page: ids for page, ids in pages.items() if ids}
    if not pages:
        return {}
    missing = [page for page in pages if not (site / page).exists()]
    if missing:
        sys.exit(f"the site at {site} lacks {missing}: build it first (make book)")
    httpd = _serve(site)
    driver, profile = _chromium(scale=2, width=1600)
    shots = {}
    try:
        for page, ids in pages.items():
            driver.get(f"http://127.0.0.1:{httpd.server_address[1]}/{page}")
            state = driver.execute_async_script(WAIT_FOR_VIEWS, ids)
            if state != "ok":
                sys.exit(f"{page}: bertviz views {ids} did not draw ({state})")
            for view_id in ids:
                el = driver.find_element(By.ID, view_id)
                # out of the page's text column, as wide as it draws (the model view is wider)
                driver.execute_script(SHOW_VIEW, el)
                shots[view_id] = el.screenshot_as_png
    finally:
        driver.quit()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    return shots


def figure_alts() -> dict[str, str]:
    """{figure name: alt text} of every chapter's figures (the cells' ``mystnb.figure.name`` and
    ``mystnb.image.alt`` metadata)."""
    alts = {}
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("mystnb", {})
            name = meta.get("figure", {}).get("name")
            alt = meta.get("image", {}).get("alt") or meta.get("figure", {}).get("alt")
            if name and alt:
                alts[name] = alt
    return alts


def _fix_xhtml(
    path: Path,
    images: dict[str, str],
    image_dir: Path,
    listed: set[str],
    views: dict[str, bytes] | None = None,
    alts: dict[str, str] | None = None,
):
    """Rewrite one XHTML file of the ePub; returns (has svg, equations typeset)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    page = path.relative_to(image_dir.parent)
    _keep_xhtml_tags(soup)
    _drop_links_outside_the_book(soup, page, listed)
    _drop_scripts(soup)
    _note_live_figures(soup)
    _fit_wide_tables(soup)
    _hang_wrapped_code(soup)
    reword_for_print(soup)
    up = "../" * (len(page.parts) - 1)  # from the page to the book's root

    def store(data: bytes, name: str, media_type: str) -> str:
        """Write an image of the book; returns its src as the page sees it."""
        (image_dir / name).write_bytes(data)
        images[name] = media_type
        return f"{up}{image_dir.name}/{name}"

    _picture_bertviz_views(soup, path.name, views or {}, alts or {}, store)
    _embedded_images_to_files(soup, store)
    placed = _typeset_equations(soup, path.name)
    out = re.sub(r"@@BOOK-MATH-(\d+)@@", lambda m: placed[int(m.group(1))], str(soup))
    # the XHTML serialisation: void elements closed, attributes quoted (bs4 does both)
    path.write_text(out, encoding="utf-8")
    return "<svg" in out, len(placed)


WORDING_BLOCKS = {"p", "li", "dd", "dt", "td", "th", "figcaption"}


def reword_for_print(soup, rules: dict = WEB_WORDING) -> int:
    """web_wording on a page's prose and captions, text node by text node (code, equations and
    scripts left alone): the sentences are found in a block's text (a paragraph, a list item, a
    caption's text) and the prefix goes into the text node where each starts. Returns how many
    sentences it reworded. prepare.js does the same in print."""
    from bs4 import Comment, NavigableString

    def block_of(node):
        for parent in node.parents:
            if parent.name in {"pre", "code", "script", "style", "svg", "math", "summary"}:
                return None
            if parent.name in WORDING_BLOCKS or "caption-text" in (parent.get("class") or []):
                return parent
        return None

    blocks: dict[int, list] = {}
    for node in soup.find_all(string=True):
        if isinstance(node, Comment):
            continue
        block = block_of(node)
        if block is not None:
            blocks.setdefault(id(block), []).append(node)
    done = 0
    for nodes in blocks.values():
        texts = []
        for node in nodes:
            text = str(node)
            for pattern, replacement in rules["replace"]:
                text = re.sub(_spaced(pattern), replacement, text, flags=re.I)
            texts.append(text)
        offsets, at = [], 0
        for text in texts:
            offsets.append(at)
            at += len(text)
        starts = set(web_sentences("".join(texts), rules))
        for i, text in enumerate(texts):
            here = sorted(s - offsets[i] for s in starts if 0 <= s - offsets[i] < len(text))
            for local in reversed(here):
                rest = text[local:]
                if re.match(r"(?:A|[A-Z][a-z]+(?:-[a-z]+)?)\b", rest):
                    rest = rest[0].lower() + rest[1:]
                text = text[:local] + rules["prefix"] + rest
                done += 1
            if text != str(nodes[i]):
                nodes[i].replace_with(NavigableString(text))
    return done


def _keep_xhtml_tags(soup) -> None:
    """Tags XHTML does not know (outside SVG and MathML) become text; sphinx-togglebutton's <summary>
    holds <p>s, which XHTML does not allow there, and no aria-label."""
    from bs4 import NavigableString

    for tag in soup.find_all(True):
        if tag.name not in HTML_TAGS and not tag.find_parent(["svg", "math"]):
            tag.replace_with(NavigableString(f"<{tag.name}>"), *tag.contents)
    for p in soup.select("summary p"):
        p.name = "span"
    for tag in soup.find_all("summary", attrs={"aria-label": True}):
        del tag["aria-label"]


def _drop_links_outside_the_book(soup, page: Path, listed: set[str]) -> None:
    """Links to files the ePub does not hold (the slide decks, the site's live.css): the text stays."""
    import posixpath

    here = posixpath.dirname(page.as_posix())

    def in_book(href: str) -> bool:
        target = href.split("#", 1)[0]
        if not target or re.match(r"[a-z]+:", target):
            return True  # an anchor in this page, or another site (http:, mailto:)
        return posixpath.normpath(posixpath.join(here, target)) in listed

    for a in soup.find_all("a", href=True):
        if not in_book(a["href"]):
            a.unwrap()
    for tag in soup.find_all("link", href=True):
        if not in_book(tag["href"]):
            tag.decompose()


def _drop_scripts(soup) -> None:
    """Scripts (widget state and views, live figures' JSON, bertviz, MathJax config) and links other
    than style sheets."""
    for s in soup.find_all("script"):
        s.decompose()
    for tag in soup.find_all(["link"]):
        if "stylesheet" not in (tag.get("rel") or []):
            tag.decompose()


def _note_live_figures(soup) -> None:
    """Live figures keep their static picture and get the note that says so."""
    for live in soup.select("div.book-live"):
        if not live.select_one(".book-live-print"):
            note = soup.new_tag("p", attrs={"class": "book-live-print"})
            note.string = LIVE_NOTE
            live.append(note)


# A wrapped line of code goes on this many characters right of its own indentation (issue 33: wrapped
# at the column's edge, a line's continuation started at the left margin, where it read as a line of
# its own, less indented than the block it belongs to).
HANG_CHARS = 4
_TAG = re.compile(r"(<[^>]+>)")


def hanging_lines(html_text: str) -> list[tuple[int, str]]:
    """The lines of a ``<pre>``'s inner HTML, each with the number of spaces it starts with and its
    HTML, every tag open at a line's end closed there and opened again on the next line (a string
    token of Pygments' can span lines), so that each line is a well-formed fragment."""
    lines: list[tuple[int, str]] = []
    stack: list[tuple[str, str]] = []  # open tags: (name, start tag)
    current: list[str] = []
    text: list[str] = []

    def end_line() -> None:
        current.extend(f"</{name}>" for name, _ in reversed(stack))
        plain = html.unescape("".join(text))
        lines.append((len(plain) - len(plain.lstrip(" ")), "".join(current)))
        current[:] = [start for _, start in stack]
        text.clear()

    for token in _TAG.split(html_text):
        if not token:
            continue
        if token.startswith("</"):
            stack.pop()
            current.append(token)
        elif token.startswith("<"):
            if not token.endswith("/>"):
                stack.append((re.match(r"<([\w-]+)", token).group(1), token))
            current.append(token)
        else:
            pieces = token.split("\n")
            for i, piece in enumerate(pieces):
                if i:
                    end_line()
                current.append(piece)
                text.append(piece)
    end_line()
    return lines


def _hang_wrapped_code(soup) -> None:
    """Each line of a code block or printed output in a block of its own that hangs: where the
    reader's column wraps it, the rest goes HANG_CHARS characters right of the line's indentation
    (book-epub.css wraps code; CSS alone cannot indent a wrapped line by its own leading spaces).
    An empty line keeps its height with one space."""
    from bs4 import BeautifulSoup

    for pre in soup.find_all("pre"):
        lines = hanging_lines(pre.decode_contents())
        if len(lines) > 1 and not _TAG.sub("", lines[-1][1]):
            lines.pop()  # after the newline that ends the block
        out = []
        for indent, line in lines:
            hang = indent + HANG_CHARS
            if not _TAG.sub("", line):
                line += " "
            out.append(
                f'<span class="book-line" style="padding-left: {hang}ch; text-indent: -{hang}ch">'
                f"{line}</span>"
            )
        # parsed inside a <pre>, where the parser keeps a line's leading spaces as they are
        lined = BeautifulSoup(f"<pre>{''.join(out)}</pre>", "html.parser").pre
        pre.clear()
        for child in list(lined.contents):
            pre.append(child.extract())


# columns that a 6-inch reader's column holds only in smaller text (book-epub.css: table.book-wide),
# and more than it holds even so
WIDE_TABLE_COLUMNS, TURNED_TABLE_COLUMNS = 8, 10


def _fit_wide_tables(soup) -> None:
    """Tables too wide for a 6-inch e-reader, which cannot scroll a box sideways. One of
    TURNED_TABLE_COLUMNS columns or more and at most half as many rows is turned, rows for columns
    (chapter 10's merges, 17 of them across; its few rows fit across), the first row and column
    staying headers; one of WIDE_TABLE_COLUMNS columns or more is marked ``book-wide``, which
    book-epub.css sets in smaller text (chapter 13's four GPT-2 sizes). Tables with merged cells are
    only marked."""
    for table in soup.find_all("table"):
        grid = [row.find_all(["th", "td"], recursive=False) for row in table.find_all("tr")]
        n = max((len(r) for r in grid), default=0)
        if n < WIDE_TABLE_COLUMNS:
            continue
        merged = any(c.get("colspan") or c.get("rowspan") for r in grid for c in r)
        if (
            merged
            or n < TURNED_TABLE_COLUMNS
            or 2 * len(grid) > n
            or any(len(r) != n for r in grid)
        ):
            table["class"] = [*table.get("class", []), "book-wide"]
            continue
        cells = [[cell.extract() for cell in row] for row in grid]
        for part in table.find_all(["colgroup", "thead", "tbody", "tr"]):
            part.decompose()
        head, body = soup.new_tag("thead"), soup.new_tag("tbody")
        for i in range(n):
            tr = soup.new_tag("tr", attrs={"class": "row-odd" if i % 2 == 0 else "row-even"})
            for k, row in enumerate(cells):
                cell = row[i]
                cell.name = "th" if i == 0 or k == 0 else "td"
                cell.attrs.pop("class", None)
                if i == 0:
                    cell["class"] = "head"
                tr.append(cell)
            (head if i == 0 else body).append(tr)
        table.append(head)
        table.append(body)
        table["class"] = [*table.get("class", []), "book-turned"]


def _picture_bertviz_views(soup, page_name: str, views: dict, alts: dict, store) -> None:
    """bertviz views draw only with JavaScript: a picture of the view as it opens, and the note."""
    for view in soup.select('[id^="bertviz-"]'):
        png = views.get(view["id"])
        if png is None:
            raise SystemExit(f"{page_name}: no picture of the bertviz view {view['id']}")
        src = store(png, f"headview-{hashlib.sha1(png).hexdigest()[:16]}.png", "image/png")
        figure = view.find_parent("figure")
        alt = alts.get(figure.get("id", "") if figure else "", "")
        alt = alt or "bertviz's view of the chapter's attention weights: tokens joined by lines."
        block = soup.new_tag("div", attrs={"class": "book-headview-static"})
        block.append(
            soup.new_tag(
                "img", attrs={"src": src, "alt": f"A picture of the view as it opens. {alt}"}
            )
        )
        note = soup.new_tag("p", attrs={"class": "book-print-note"})
        note.string = HEADVIEW_NOTE
        block.append(note)
        view.replace_with(block)


_IMAGE_EXTENSIONS = {"png": "png", "jpeg": "jpg", "gif": "gif", "svg+xml": "svg"}


def _embedded_images_to_files(soup, store) -> None:
    """Pictures embedded as data URIs become files of the book; every image gets an alt, no style."""
    for img in soup.find_all("img"):
        m = re.match(r"data:image/(png|jpeg|gif|svg\+xml);base64,(.+)", img.get("src", ""), re.S)
        if m:
            data = base64.b64decode(m.group(2))
            name = f"embedded-{hashlib.sha1(data).hexdigest()[:16]}.{_IMAGE_EXTENSIONS[m.group(1)]}"
            img["src"] = store(data, name, f"image/{m.group(1)}")
        if not img.get("alt"):
            img["alt"] = ""
        if "style" in img.attrs:
            del img["style"]


def labelled_svg(svg: str, tex: str) -> str:
    """MathJax's SVG of an equation (``role="img"``, no name) named by its TeX, which a screen reader
    reads out (``aria-label``) and an e-reader may show when it draws no SVG (``<title>``)."""
    if not svg.startswith("<svg"):
        raise ValueError(f"svg: expected MathJax's <svg ...> markup, got {svg[:40]!r}")
    label = html.escape(" ".join(tex.split()), quote=True)
    start = svg.index(">") + 1
    head = re.sub(r'\s(aria-label|aria-hidden)="[^"]*"', "", svg[:start])
    return f'<svg aria-label="{label}"{head[4:]}<title>{label}</title>{svg[start:]}'


def _typeset_equations(soup, page_name: str) -> list[str]:
    """TeX between \\( \\) and \\[ \\] in the text -> SVG. Each equation is left as a placeholder
    @@BOOK-MATH-i@@ in a span, whose SVG (returned, i-th) goes in after serialisation: the HTML parser
    would lower-case viewBox."""
    from bs4 import NavigableString

    items, spots = [], []
    for node in soup.find_all(string=MATH_RE):
        if node.find_parent(["pre", "code", "textarea"]):
            continue
        parts, last = [], 0
        for m in MATH_RE.finditer(node):
            parts.append(node[last : m.start()])
            display = m.group(2) is not None
            parts.append((m.group(2) if display else m.group(1), display))
            last = m.end()
        parts.append(node[last:])
        spots.append((node, parts))
        items += [p for p in parts if isinstance(p, tuple)]
    svgs, placed = tex_to_svg(items), []
    for node, parts in spots:
        for p in parts:
            if isinstance(p, tuple):
                if svgs[len(placed)] is None:
                    raise SystemExit(f"{page_name}: MathJax could not typeset {p[0]!r}")
                placed.append(labelled_svg(svgs[len(placed)], p[0]))
                wrap = soup.new_tag(
                    "span", attrs={"class": "math-svg" + (" display" if p[1] else "")}
                )
                wrap.string = f"@@BOOK-MATH-{len(placed) - 1}@@"
                node.insert_before(wrap)
            elif p:
                node.insert_before(NavigableString(p))
        node.extract()
    return placed


def toc_parts() -> list[tuple[str | None, list[str]]]:
    """[(part caption or None for the root, [documents])] in the order of ``_toc.yml``."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    parts = [(None, [toc["root"]])]
    for part in toc.get("parts", []):
        parts.append((part["caption"], [c["file"] for c in part.get("chapters", [])]))
    return parts


def _page_title(page: Path) -> str:
    m = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.S)
    if not m:
        sys.exit(f"{page}: no <title> for the ePub's table of contents")
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()


# Long by design: the two navigation files (EPUB 3 and 2) written from one reading order.
def write_navigation(epub_dir: Path, uid: str, title: str) -> list[tuple[str | None, list]]:
    """nav.xhtml (EPUB 3) and toc.ncx (EPUB 2) listing every part and chapter of ``_toc.yml``, in
    reading order: Sphinx's epub builder lists only the home page, since Jupyter Book's toctrees
    are hidden. Returns [(part, [(href, title)])]."""
    from xml.sax.saxutils import escape

    entries = []
    for caption, docs in toc_parts():
        pages = []
        for doc in docs:
            href = f"{doc}.xhtml"
            if not (epub_dir / href).exists():
                sys.exit(f"_toc.yml lists {doc}, which the ePub build did not write")
            pages.append((href, _page_title(epub_dir / href)))
        entries.append((caption, pages))
    items = []
    for caption, pages in entries:
        links = "".join(f'<li><a href="{h}">{escape(t)}</a></li>\n' for h, t in pages)
        if caption is None:
            items.append(links)
        else:
            items.append(f"<li><span>{escape(caption)}</span>\n<ol>\n{links}</ol></li>\n")
    nav = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" '
        'lang="en" xml:lang="en">\n<head>\n<title>Table of Contents</title>\n</head>\n<body>\n'
        '<nav epub:type="toc" id="toc">\n<h1>Table of Contents</h1>\n<ol>\n'
        + "".join(items)
        + "</ol>\n</nav>\n</body>\n</html>\n"
    )
    (epub_dir / "nav.xhtml").write_text(nav, encoding="utf-8")
    # toc.ncx: a part points at its first chapter; a target keeps one playOrder
    order: dict[str, int] = {}
    counter = [0]

    def point(href: str, label: str, inner: str = "") -> str:
        order.setdefault(href, len(order) + 1)
        counter[0] += 1
        return (
            f'<navPoint id="navPoint{counter[0]}" playOrder="{order[href]}">'
            f"<navLabel><text>{escape(label)}</text></navLabel>"
            f'<content src="{href}" />{inner}</navPoint>\n'
        )

    points = []
    for caption, pages in entries:
        if caption is None:
            points += [point(h, t) for h, t in pages]
        else:
            inner = "".join(point(h, t) for h, t in pages)
            points.append(point(pages[0][0], caption, inner))
    ncx = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">\n<head>\n'
        f'<meta name="dtb:uid" content="{escape(uid)}" />\n<meta name="dtb:depth" content="2" />\n'
        '<meta name="dtb:totalPageCount" content="0" />\n<meta name="dtb:maxPageNumber" content="0" />\n'
        f"</head>\n<docTitle><text>{escape(title)}</text></docTitle>\n<navMap>\n"
        + "".join(points)
        + "</navMap>\n</ncx>\n"
    )
    (epub_dir / "toc.ncx").write_text(ncx, encoding="utf-8")
    return entries


def reading_order(manifest: str) -> str:
    """The spine in ``_toc.yml``'s order, every page of it in the reading flow: Sphinx's epub builder
    orders the spine by its (hidden, so nearly empty) toctree, which left the back matter before the
    chapters and every chapter ``linear="no"``, outside the flow an e-reader pages through. Pages
    that ``_toc.yml`` does not list (the index) follow, as they were."""
    href = {}
    for item in re.findall(r"<item [^>]*/>", manifest):
        href[re.search(r'href="([^"]+)"', item).group(1)] = re.search(r'id="([^"]+)"', item).group(
            1
        )
    refs = re.findall(r'<itemref idref="([^"]+)"[^>]*/>', manifest)
    docs = [doc for _, part in toc_parts() for doc in part]
    ids = []
    for doc in docs:
        if f"{doc}.xhtml" not in href or href[f"{doc}.xhtml"] not in refs:
            sys.exit(f"_toc.yml lists {doc}, which the ePub's spine lacks")
        ids.append(href[f"{doc}.xhtml"])
    rest = [m.group(0) for m in re.finditer(r"<itemref [^>]*/>", manifest)]
    rest = [r for r in rest if re.search(r'idref="([^"]+)"', r).group(1) not in ids]
    spine = "".join(f'\n    <itemref idref="{i}" />' for i in ids) + "".join(
        f"\n    {r}" for r in rest
    )
    return re.sub(
        r"(<spine\b[^>]*>).*?(\s*</spine>)",
        lambda m: m.group(1) + spine + m.group(2),
        manifest,
        flags=re.S,
    )


# Long by design: one step after another of the build, in the order they run.
def make_epub(epub_dir: Path, out: Path, site: Path = ROOT / "_build" / "html") -> Path:
    opf = epub_dir / "content.opf"
    if not opf.exists():
        sys.exit(f"no ePub sources at {epub_dir}: build them with jupyter-book's epub builder")
    image_dir = epub_dir / "_images"
    image_dir.mkdir(exist_ok=True)
    images: dict[str, str] = {}
    manifest = opf.read_text(encoding="utf-8")
    svg_pages, equations = set(), 0
    listed = set(re.findall(r'<item [^>]*href="([^"]+)"', manifest))
    todo = [
        p for p in sorted(epub_dir.rglob("*.xhtml")) if p.relative_to(epub_dir).as_posix() in listed
    ]
    view_ids = {
        p.relative_to(epub_dir).with_suffix(".html").as_posix(): re.findall(
            r'id="(bertviz-[0-9a-f]+)"', p.read_text(encoding="utf-8")
        )
        for p in todo
    }
    views, alts = headview_pictures(site, view_ids), figure_alts()
    for page in todo:
        rel = page.relative_to(epub_dir).as_posix()
        has_svg, n = _fix_xhtml(page, images, image_dir, listed, views, alts)
        equations += n
        if has_svg:
            svg_pages.add(rel)
    # the manifest: new image files, and the svg property of pages that hold inline SVG
    extra = "".join(
        f'<item id="emb-{i}" href="_images/{name}" media-type="{mime}" />\n'
        for i, (name, mime) in enumerate(sorted(images.items()))
    )
    manifest = manifest.replace("</manifest>", extra + "</manifest>")

    def add_svg(m):
        item = m.group(0)
        href = re.search(r'href="([^"]+)"', item).group(1)
        if href in svg_pages and "properties=" not in item:
            return item.replace("<item ", '<item properties="svg" ', 1)
        return item

    manifest = re.sub(r"<item [^>]*/>", add_svg, manifest)
    # the spine may name pages the builder did not write (Sphinx lists the decks' pages): drop them
    ids = set(re.findall(r'<item [^>]*id="([^"]+)"', manifest))
    manifest = re.sub(
        r'\s*<itemref idref="([^"]+)"\s*/>',
        lambda m: m.group(0) if m.group(1) in ids else "",
        manifest,
    )
    manifest = re.sub(r'\s*<meta property="ibooks:version"></meta>', "", manifest)
    manifest = reading_order(manifest)
    manifest = add_cover_and_metadata(epub_dir, manifest)
    opf.write_text(manifest, encoding="utf-8")
    # the navigation: every part and chapter (the NCX carries the package's identifier)
    uid = re.search(r"<dc:identifier[^>]*>([^<]+)</dc:identifier>", manifest).group(1)
    title = re.search(r"<dc:title[^>]*>([^<]+)</dc:title>", manifest).group(1)
    write_navigation(epub_dir, html.unescape(uid), html.unescape(title))
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as z:
        z.write(epub_dir / "mimetype", "mimetype", compress_type=zipfile.ZIP_STORED)
        # the container, the package and what the manifest lists (not the builder's other files)
        keep = (
            listed
            | {f"_images/{name}" for name in images}
            | {"content.opf", "_images/book-cover.png"}
        )
        for f in sorted(epub_dir.rglob("*")):
            rel = f.relative_to(epub_dir).as_posix()
            if f.is_file() and (rel in keep or rel.startswith("META-INF/")):
                z.write(f, rel, compress_type=zipfile.ZIP_DEFLATED)
    print(
        f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(images)} embedded pictures written out, {equations} equations typeset)"
    )
    return out


def epub_metadata() -> dict[str, str]:
    """The ePub's description and contributor (content.opf; Sphinx writes "unknown" without them): the
    abstract and the authors of CITATION.cff, and the tools that made the ePub."""
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    return {
        "description": " ".join(str(cff["abstract"]).split()),
        "contributor": "Made with Jupyter Book, Sphinx and MathJax",
    }


def make_cover(out: Path, width: int = 1600, height: int = 2400) -> Path:
    """A plain cover (PNG, 2:3): the title and the authors of CITATION.cff in Liberation Sans on the
    site's dark blue, and its version. Drawn by Pillow, so the ePub needs neither the PDF nor a browser."""
    import textwrap

    import yaml
    from PIL import Image, ImageDraw, ImageFont

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    authors = ", ".join(a.get("name") or a.get("family-names", "") for a in cff["authors"])

    def font(bold: bool, size: int):
        name = "LiberationSans-Bold.ttf" if bold else "LiberationSans-Regular.ttf"
        for folder in [
            "/usr/share/fonts/truetype/liberation",
            "/usr/share/fonts/truetype/liberation2",
        ]:
            if (Path(folder) / name).is_file():
                return ImageFont.truetype(str(Path(folder) / name), size)
        return ImageFont.load_default(size)

    image = Image.new("RGB", (width, height), "#1a3a5f")
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, int(height * 0.62), width, int(height * 0.625)], fill="#e0a030")
    y = int(height * 0.16)
    title, _, subtitle = str(cff["title"]).partition(":")
    for line in textwrap.wrap(title.strip(), 18):
        draw.text((120, y), line, font=font(True, 120), fill="#ffffff")
        y += 150
    y += 40
    for line in textwrap.wrap(subtitle.strip(), 30):
        draw.text((120, y), line, font=font(False, 72), fill="#dde6f0")
        y += 95
    draw.text((120, int(height * 0.66)), authors, font=font(False, 64), fill="#ffffff")
    version = f"Version {cff.get('version', '?')}"
    draw.text((120, int(height * 0.70)), version, font=font(False, 48), fill="#dde6f0")
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, optimize=True)
    return out


def add_cover_and_metadata(epub_dir: Path, manifest: str) -> str:
    """content.opf with a cover (make_cover's picture, a manifest item with the cover-image property
    and EPUB 2's <meta name="cover">, for the readers that look for that) and the description and
    contributor of epub_metadata where the build left them "unknown" (a build configured before
    epub_config set them)."""
    cover = make_cover(epub_dir / "_images" / "book-cover.png")
    href = cover.relative_to(epub_dir).as_posix()
    if f'href="{href}"' not in manifest:
        manifest = manifest.replace(
            "</manifest>",
            f'  <item id="book-cover" href="{href}" media-type="image/png" properties="cover-image" />\n'
            "  </manifest>",
        )
    if '<meta name="cover"' not in manifest:
        manifest = manifest.replace(
            "</metadata>", '  <meta name="cover" content="book-cover" />\n  </metadata>'
        )
    for field, value in epub_metadata().items():
        manifest = manifest.replace(
            f"<dc:{field}>unknown</dc:{field}>", f"<dc:{field}>{html.escape(value)}</dc:{field}>"
        )
    return manifest


def epub_config(out: Path) -> Path:
    """_config.yml for the ePub build: no launch buttons (sphinx-book-theme's handler fails outside HTML
    pages), outputs chosen for a reader without JavaScript: the static form of a slider figure (its
    text/markdown: the first picture and a line saying where it is live) instead of its widget view,
    and the ePub's style sheet for a narrow column (book/_static/book-epub.css)."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.pop("launch_buttons", None)
    sphinx_config0 = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config0.update(
        project=config["title"],
        epub_basename="attention-book",
        epub_title=config["title"],
        epub_author=config["author"],
        epub_publisher=config["author"],
        epub_copyright=f"{config['copyright']}, {config['author']}; text CC BY 4.0, code MIT",
        epub_identifier=config["repository"]["url"],
        epub_scheme="URL",
        epub_show_urls="no",
        # what a reader's library shows (the cover itself is added by make_epub: add_cover_and_metadata)
        epub_description=epub_metadata()["description"],
        epub_contributor=epub_metadata()["contributor"],
        # the ePub's own style sheet after the site's (book/_static/book-epub.css: code wrapped,
        # tables, pictures and equations within a narrow column, the site's folded code left out)
        epub_css_files=[*config["sphinx"]["config"].get("html_css_files", []), "book-epub.css"],
        # a folded cell's summary in a reader that shows it: no "Show/Hide code cell source"
        nb_code_prompt_show="The code of this cell",
        nb_code_prompt_hide="",
    )
    config["html"]["use_repository_button"] = False
    # the ePub's pages have no web address: no canonical link to the site in their heads
    config["html"].pop("baseurl", None)
    # this file lives under _build/: paths that jupyter-book reads relative to the config file
    config["html"]["favicon"] = str(ROOT / config["html"]["favicon"])
    extensions = config["sphinx"]["local_extensions"]
    config["sphinx"]["local_extensions"] = {k: str(ROOT / v) for k, v in extensions.items()}
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    overrides = list(sphinx_config.get("nb_mime_priority_overrides", []))
    overrides += [
        ["epub", "application/vnd.jupyter.widget-view+json", None],
        ["epub", "application/javascript", None],
        ["epub", "text/markdown", 25],
    ]
    sphinx_config["nb_mime_priority_overrides"] = overrides
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return out


def site_digest(site: Path, out: Path) -> bool:
    """Write the sha256 of the built site's files (paths and bytes, in path order; print/ left out) to
    ``out`` unless ``out`` already holds it; True when it wrote (the site changed)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        relative = path.relative_to(site).as_posix()
        if relative.startswith("print/"):
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    text = digest.hexdigest() + "\n"
    if out.is_file() and out.read_text() == text:
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("format", choices=["pdf", "epub", "epub-config", "digest"])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "singlehtml")
    parser.add_argument("--epub-dir", type=Path, default=ROOT / "_build" / "epub")
    parser.add_argument(
        "--site", type=Path, default=ROOT / "_build" / "html", help="the built site (head views)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.format == "digest":
        out = args.out or ROOT / "_build" / "site-content.sha256"
        changed = site_digest(args.site, out)
        print(
            f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: the site "
            + ("changed: the PDF and ePub are made again" if changed else "did not change")
        )
    elif args.format == "pdf":
        make_pdf(args.html, args.out or PRINT_DIR / "attention-book.pdf")
    elif args.format == "epub-config":
        print(epub_config(args.out or ROOT / "_build" / "epub-config" / "_config.yml"))
    else:
        make_epub(args.epub_dir, args.out or PRINT_DIR / "attention-book.epub", args.site)


if __name__ == "__main__":
    main()
