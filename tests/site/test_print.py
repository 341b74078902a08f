"""The whole book for print and e-readers (issue 25): ``make pdf`` and ``make epub`` (tools/print_book.py).

PDF: its page count, one embedded picture at least per figure the chapters declare, and what the printed
page showed, measured by tools/print_book.py in the same Chromium just before it printed (print media):
every chapter's title, every equation typeset by MathJax with no error, every picture decoded, every live
figure and slider figure in its static form (the precomputed example, the first picture) with the line
saying where it is live, no slider or live control printed, and no raw widget JSON, script or TeX text;
its links jump within the book or go to the published site (html.baseurl), never to the print server.
ePub: every part and chapter in its navigation (nav.xhtml and toc.ncx) and in the reading flow of its
spine, in the order of _toc.yml, every picture a file of the book, every bertviz view of the site a
picture (with alt text and the line saying where it is live), every equation an SVG (no TeX left), no
script and no widget JSON, and Debian's epubcheck finds no error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, toc_entries

pytestmark = pytest.mark.site

# another build's prints: BOOK_PRINT_DIR (tests/site/test_print_pdf.py reads it too)
PRINT = Path(os.environ.get("BOOK_PRINT_DIR", ROOT / "_build" / "print"))
PDF = PRINT / "attention-book.pdf"
EPUB = PRINT / "attention-book.epub"
CHAPTERS = [e for e in toc_entries() if e.startswith("notebooks/")]
RAW = re.compile(r"application/vnd\.jupyter|\"version_major\"|\{\"model_id\"|require\(\[")


def chapter_title(entry: str) -> str:
    nb = json.loads((ROOT / f"{entry}.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            m = re.search(r"^# (.+)$", "".join(cell["source"]), re.M)
            if m:
                return m.group(1).strip()
    raise AssertionError(f"{entry}: no title")


def declared_figures() -> int:
    return sum(
        "figure" in c.get("metadata", {}).get("mystnb", {})
        for e in CHAPTERS
        for c in json.loads((ROOT / f"{e}.ipynb").read_text(encoding="utf-8"))["cells"]
    )


@pytest.fixture(scope="module")
def pdf():
    if not PDF.exists():
        pytest.fail(f"no {PDF}: run `make pdf`")
    return PDF.read_bytes(), json.loads(PDF.with_suffix(".json").read_text())


def test_pdf_is_a_whole_book(pdf):
    data, report = pdf
    assert data.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
    assert pages == report["pages"] and pages >= 150, pages
    # a picture per figure at least: a raster image, or a drawing (an SVG figure is a form XObject)
    pictures = len(re.findall(rb"/Subtype\s*/(Image|Form)", data))
    assert pictures >= declared_figures() > 50


def test_pdf_has_every_chapter(pdf):
    _, report = pdf
    titles = [chapter_title(e) for e in CHAPTERS]
    missing = [t for t in titles if not any(t in c for c in report["chapters"])]
    assert len(titles) >= 17 and not missing, f"chapters not printed: {missing}"


def test_pdf_equations_and_pictures(pdf):
    _, report = pdf
    assert report["math_sources"] > 500 and report["math_rendered"] >= report["math_sources"]
    assert report["math_errors"] == 0
    assert report["images"] >= declared_figures() and report["broken_images"] == 0


def test_pdf_prints_live_and_slider_figures_in_their_static_form(pdf):
    _, report = pdf
    assert report["live"] >= 6 and report["live_static"] == report["live"], report
    assert report["live_hidden_parts"] == 0
    assert report["sliders"] >= 5 and report["slider_pictures"] == report["sliders"], report
    assert report["visible_sliders"] == 0
    assert report["raw_text"] == [], f"raw text printed: {report['raw_text']}"


def test_pdf_links_jump_within_the_book_or_to_the_published_site(pdf):
    """No link of the PDF points at the loopback server it was printed from: cross-references and
    citations jump within the PDF, links to the rest of the site go to html.baseurl (_config.yml)."""
    data, report = pdf
    base = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["baseurl"]
    uris = [u.decode("latin-1") for u in re.findall(rb"/URI\s*\(([^)]*)\)", data)]
    assert not [u for u in uris if re.match(r"https?://(127\.0\.0\.1|localhost)[:/]", u)]
    links = report["links"]
    assert links["in_book"] > 500 and links["missing_targets"] == [], links["missing_targets"]
    assert links["to_site"] and all(u.startswith(base) for u in links["to_site"]), links["to_site"]
    assert f"{base}print/attention-book.epub" in uris


@pytest.fixture(scope="module")
def epub():
    if not EPUB.exists():
        pytest.fail(f"no {EPUB}: run `make epub`")
    with zipfile.ZipFile(EPUB) as z:
        names = z.namelist()
        pages = {n: z.read(n).decode("utf-8") for n in names if n.endswith(".xhtml")}
        return names, pages, z.read("mimetype"), z.infolist()[0]


def test_epub_container(epub):
    names, _, mimetype, first = epub
    assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    assert mimetype == b"application/epub+zip" and "content.opf" in names


def test_epub_has_every_chapter_in_reading_order(epub):
    _, pages, _, _ = epub
    with zipfile.ZipFile(EPUB) as z:
        opf = z.read("content.opf").decode("utf-8")
    href = {}
    for item in re.findall(r"<item [^>]*/>", opf):
        href[re.search(r'id="([^"]+)"', item).group(1)] = re.search(r'href="([^"]+)"', item).group(
            1
        )
    spine = [href[i] for i in re.findall(r'<itemref idref="([^"]+)"', opf)]
    chapters = [s for s in spine if s.startswith("notebooks/")]
    assert chapters == [f"{entry}.xhtml" for entry in CHAPTERS], chapters
    # every page of _toc.yml is in the reading flow (none linear="no"), in _toc.yml's order, first
    docs = [f"{entry}.xhtml" for entry in toc_entries()]
    assert spine[: len(docs)] == docs, spine
    refs = re.findall(r"<itemref [^>]*/>", opf)
    assert not any('linear="no"' in r for r in refs[: len(docs)]), refs
    for entry in CHAPTERS:
        assert chapter_title(entry) in pages[f"{entry}.xhtml"], entry


def test_epub_navigation_lists_every_part_and_chapter(epub):
    names, pages, _, _ = epub
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    nav = pages["nav.xhtml"]
    with zipfile.ZipFile(EPUB) as z:
        ncx = z.read("toc.ncx").decode("utf-8")
    hrefs = re.findall(r'<a href="([^"]+)">', nav)
    assert hrefs == [f"{entry}.xhtml" for entry in toc_entries()], hrefs
    assert all(h in names for h in hrefs)
    for part in toc["parts"]:
        # each part a heading of the nav with its chapters under it, and a navPoint of the NCX
        block = re.search(
            rf"<li><span>{re.escape(part['caption'])}</span>\s*<ol>(.*?)</ol></li>", nav, re.S
        )
        assert block, part["caption"]
        inside = re.findall(r'<a href="([^"]+)">', block.group(1))
        assert inside == [f"{c['file']}.xhtml" for c in part["chapters"]], inside
        assert f"<text>{part['caption']}</text>" in ncx
    for number, entry in enumerate(CHAPTERS, 1):  # numbered as on the site: 1 to 16
        label = f"{number}. {chapter_title(entry)}"
        assert f'<a href="{entry}.xhtml">{label}</a>' in nav, label
        assert f'<text>{label}</text></navLabel><content src="{entry}.xhtml"' in ncx, label
    assert len(re.findall(r"<navPoint ", ncx)) == len(toc_entries()) + len(toc["parts"])


def test_epub_shows_every_head_view_as_a_picture(epub):
    """bertviz's views (chapters 3, 7, 9, 15) draw only with JavaScript: the ePub shows a picture of
    each, taken from the built site, with its figure's alt text and the line saying where it is live."""
    import struct

    names, pages, _, _ = epub
    site = ROOT / "_build" / "html" / "notebooks"
    on_site = {
        f"notebooks/{p.stem}.xhtml": len(set(re.findall(r'id="bertviz-[0-9a-f]+"', p.read_text())))
        for p in site.glob("*.html")
    }
    on_site = {k: v for k, v in on_site.items() if v}
    assert (
        sum(on_site.values()) >= 7
        and on_site.get("notebooks/15_inside_a_pretrained_model.xhtml") == 3
    ), on_site
    with zipfile.ZipFile(EPUB) as z:
        for name, text in pages.items():
            blocks = re.findall(r'<div class="book-headview-static">(.*?)</div>', text, re.S)
            assert len(blocks) == on_site.get(name, 0), name
            assert 'id="bertviz-' not in text, name
            for block in blocks:
                src = re.search(r'src="\.\./([^"]+)"', block).group(1)
                alt = re.search(r'alt="([^"]+)"', block).group(1)
                assert src in names and src.endswith(".png"), src
                png = z.read(src)
                width, height = struct.unpack(">II", png[16:24])
                assert png.startswith(b"\x89PNG") and width >= 400 and height >= 200, (src, width)
                assert alt.startswith("A picture of the view as it opens.") and len(alt) > 80, alt
                assert "this is a picture of it as it opens" in block, name
    ch15 = pages["notebooks/15_inside_a_pretrained_model.xhtml"]
    assert "the 16 tokens of &#x27;The animal" in ch15 or "the 16 tokens of 'The animal" in ch15


def test_epub_embeds_every_picture(epub):
    names, pages, _, _ = epub
    count = 0
    for name, text in pages.items():
        base = name.rsplit("/", 1)[0] if "/" in name else ""
        for src in re.findall(r'<img [^>]*src="([^"]+)"', text):
            assert not src.startswith(("data:", "http")), f"{name}: {src[:40]}"
            target = Path(base, src).as_posix() if base else src
            parts = []
            for part in target.split("/"):
                parts = parts[:-1] if part == ".." else parts + [part]
            assert "/".join(parts) in names, f"{name}: {src} is not in the ePub"
            count += 1
    assert count >= declared_figures(), count


def test_epub_has_no_script_widget_json_or_raw_tex(epub):
    _, pages, _, _ = epub
    for name, text in pages.items():
        assert "<script" not in text, name
        assert not RAW.search(text), f"{name}: {RAW.search(text).group(0)}"
        body = re.sub(r"<(pre|code)\b.*?</\1>", "", text, flags=re.S)
        body = re.sub(r"<svg\b.*?</svg>", "", body, flags=re.S)
        assert not re.search(r"\\\(|\\\[", body), f"{name}: TeX left untypeset"
    assert sum(t.count('class="math-svg') for t in pages.values()) > 500


def test_epub_notes_where_figures_are_live(epub):
    _, pages, _, _ = epub
    text = "".join(pages.values())
    assert text.count("Live figure: this is its precomputed example") >= 6
    assert text.count("Interactive figure, shown at its first setting") >= 5


def test_epub_has_a_cover_and_says_what_it_is(epub):
    names, pages, _, _ = epub
    with zipfile.ZipFile(EPUB) as z:
        opf = z.read("content.opf").decode("utf-8")
    cover = re.search(r'<item [^>]*properties="cover-image"[^>]*/>', opf)
    assert cover and re.search(r'href="([^"]+)"', cover.group(0)).group(1) in names
    assert '<meta name="cover" content="book-cover" />' in opf
    for field in ["description", "contributor"]:
        value = re.search(rf"<dc:{field}>([^<]*)</dc:{field}>", opf)
        assert value and value.group(1) not in {"", "unknown"}, field


def test_epub_sentences_about_web_controls_say_they_are_on_the_website(epub):
    """No sentence of the ePub's prose or captions tells the reader to drag a slider, hover over a
    token or click without saying that it is on the website (tools/print/web_wording.json)."""
    from bs4 import BeautifulSoup

    from tools.print_book import web_sentences

    _, pages, _, _ = epub
    left = []
    for name, page in pages.items():
        soup = BeautifulSoup(page, "html.parser")
        for tag in soup.find_all(["pre", "code", "svg", "script", "style", "summary"]):
            tag.decompose()
        for block in soup.select(".caption-text, p, li, dd, td"):
            if block.find(["p", "li"]):
                continue
            text = " ".join(block.get_text().split())
            left += [f"{name}: {text[s : s + 80]}" for s in web_sentences(text)]
    assert not left, f"{len(left)} sentences written for the website: {left[:5]}"


def test_epubcheck_finds_no_error():
    jar = Path("/usr/share/java/epubcheck.jar")
    if not jar.exists() or not shutil.which("java"):
        pytest.fail("Debian's epubcheck is required (make epub installs it)")
    done = subprocess.run(
        ["java", "-jar", str(jar), str(EPUB)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0 and "No errors or warnings detected" in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
