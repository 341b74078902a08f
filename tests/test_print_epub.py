"""tools/print_book.py's ePub parts that need no built book (issue 33, item 2): an equation's SVG is
named by its TeX, the ePub build reads its own style sheet and has no web-only prompts, and the chapter
pages of the ePub get no line linking to slide decks it does not hold. The ePub itself, at 400 px in
Chromium, is tests/site/test_epub_reader.py's."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tools.print_book import epub_config, labelled_svg, tex_to_svg

ROOT = Path(__file__).resolve().parents[1]


def test_an_equation_s_svg_is_named_by_its_tex():
    svg = '<svg style="vertical-align: -0.1ex;" role="img" aria-hidden="true" viewBox="0 0 9 9"><g/></svg>'
    named = labelled_svg(svg, "a <  b_j\n")
    # the TeX, its spaces collapsed and escaped, as aria-label and as the SVG's title
    assert named.startswith('<svg aria-label="a &lt; b_j" style="vertical-align: -0.1ex;" ')
    assert 'role="img"' in named and "aria-hidden" not in named
    assert "<title>a &lt; b_j</title><g/></svg>" in named
    with pytest.raises(ValueError, match="svg"):
        labelled_svg("<span>x</span>", "x")


@pytest.mark.skipif(
    not shutil.which("node") or not (ROOT / "node_modules" / "mathjax").is_dir(),
    reason="MathJax under Node (npm ci) typesets the ePub's equations",
)
def test_mathjax_s_svg_takes_the_name():
    (svg,) = tex_to_svg([("\\sqrt{d_k}", False)])
    named = labelled_svg(svg, "\\sqrt{d_k}")
    assert named.startswith('<svg aria-label="\\sqrt{d_k}" ') and named.count("aria-label") == 1


def test_the_epub_build_has_its_style_sheet_and_no_web_only_prompts(tmp_path):
    config = yaml.safe_load(epub_config(tmp_path / "_config.yml").read_text())
    sphinx = config["sphinx"]["config"]
    site = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    # the site's style sheets, then the ePub's own, which the site's static folder holds
    assert sphinx["epub_css_files"] == [*site["html_css_files"], "book-epub.css"]
    static = [ROOT / p for p in site["html_static_path"]]
    assert any((folder / "book-epub.css").is_file() for folder in static)
    assert "Show code cell" not in sphinx["nb_code_prompt_show"]
    assert sphinx["nb_code_prompt_hide"] == ""
    sheet = (ROOT / "book" / "_static" / "book-epub.css").read_text()
    assert "details.hide.above-input" in sheet and "pre-wrap" in sheet


def test_the_epub_s_chapters_link_to_no_slides():
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import slides
    finally:
        sys.path.pop(0)

    def page(builder):
        app = SimpleNamespace(builder=SimpleNamespace(name=builder))
        context = {"body": "<h1>x</h1>", "pathto": lambda name, resource: f"../{name}"}
        slides._link(app, "notebooks/03_scoring_functions", "page.html", context, None)
        return context["body"]

    assert "Slides for this chapter" in page("html")
    assert page("epub") == "<h1>x</h1>"


def _table(rows):
    head = "".join(f"<th>{c}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f'<table class="docutils"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def test_wide_tables_are_turned_or_marked_for_smaller_text():
    from bs4 import BeautifulSoup

    from tools.print_book import TURNED_TABLE_COLUMNS, WIDE_TABLE_COLUMNS, _fit_wide_tables

    n = TURNED_TABLE_COLUMNS
    wide = [["merges", *range(n - 1)], ["vocabulary", *range(100, 100 + n - 1)]]
    tall = [[f"r{i}", *range(n - 1)] for i in range(n // 2 + 1)]  # too many rows to turn
    merged = _table(wide).replace("<td>100</td>", '<td colspan="2">100</td>', 1)
    less = [["a", *range(WIDE_TABLE_COLUMNS - 1)], ["b", *range(WIDE_TABLE_COLUMNS - 1)]]
    narrow = [["a", *range(WIDE_TABLE_COLUMNS - 2)], ["b", *range(WIDE_TABLE_COLUMNS - 2)]]
    tables = [_table(wide), _table(tall), merged, _table(less), _table(narrow)]
    soup = BeautifulSoup("".join(tables), "html.parser")
    _fit_wide_tables(soup)
    turned, *kept = soup.find_all("table")
    assert [t.get("class") for t in kept] == [["docutils", "book-wide"]] * 3 + [["docutils"]]
    assert turned["class"] == ["docutils", "book-turned"]
    rows = [[c.get_text() for c in tr.find_all(["th", "td"])] for tr in turned.find_all("tr")]
    assert rows == [["merges", "vocabulary"]] + [[str(k), str(100 + k)] for k in range(n - 1)]
    # the first row and the first column are headers; one thead, one tbody
    assert [c.name for c in turned.thead.find_all(["th", "td"])] == ["th", "th"]
    body = [[c.name for c in tr.find_all(["th", "td"])] for tr in turned.tbody.find_all("tr")]
    assert body == [["th", "td"]] * (n - 1) and len(turned.find_all(["thead", "tbody"])) == 2


def test_sentences_written_for_the_website_say_so():
    """Issue 33 (print review s6): "Drag the slider", "hover over", "click" read "On the website, ..."
    in print and in the ePub; a sentence that already says where it works is left as it is."""
    from tools.print_book import web_wording

    assert web_wording("Drag the slider to turn the query. Cosine gives k1.") == (
        "On the website, drag the slider to turn the query. Cosine gives k1."
    )
    assert web_wording("Vinyals et al. [2016] used it. Click a thumbnail.") == (
        "Vinyals et al. [2016] used it. On the website, click a thumbnail."
    )
    assert web_wording("See Fig. 3.1 and hover over it.") == (
        "On the website, see Fig. 3.1 and hover over it."
    )
    for kept in [
        "On the website, click Run the real model.",
        "In Colab a one-line form: double-click it to see the assertions.",
        "Beyond 5,000 positions the curve hovers around 0.",
    ]:
        assert web_wording(kept) == kept
    assert "each chapter's web page" in web_wording(
        "Students open any chapter in Colab (the rocket button at the top of each chapter)."
    )


def test_the_epub_s_captions_are_reworded_node_by_node():
    from bs4 import BeautifulSoup

    from tools.print_book import reword_for_print

    soup = BeautifulSoup(
        '<figcaption><p><span class="caption-number">Fig. 1.7 </span><span class="caption-text">'
        "Drag the slider to lengthen it. The view opens on head 4: hover over <em>chasing</em>."
        "</span></p></figcaption><pre>Click here</pre><p>Move the slider. <code>x.</code> Fine.</p>",
        "html.parser",
    )
    assert reword_for_print(soup) == 3
    text = soup.get_text()
    assert "Fig. 1.7 On the website, drag the slider" in text
    assert "On the website, the view opens on head 4: hover over chasing" in text
    assert "Click here" in text and "On the website, move the slider." in text


@pytest.mark.skipif(not shutil.which("node"), reason="prepare.js's regular expressions, under Node")
def test_the_wording_rules_are_regular_expressions_in_javascript_too():
    import json
    import subprocess

    rules = json.loads((ROOT / "tools" / "print" / "web_wording.json").read_text())
    patterns = [
        rules["web"],
        rules["already"],
        rules["not_ends"],
        *(p for p, _ in rules["replace"]),
    ]
    script = "for (const p of JSON.parse(process.argv[1])) new RegExp(p, 'gi');"
    subprocess.run(["node", "-e", script, json.dumps(patterns)], check=True)


def test_the_epub_has_a_cover_a_description_and_a_contributor(tmp_path):
    from PIL import Image

    from tools.print_book import add_cover_and_metadata, epub_metadata

    config = yaml.safe_load(epub_config(tmp_path / "_config.yml").read_text())["sphinx"]["config"]
    meta = epub_metadata()
    assert config["epub_description"] == meta["description"] and len(meta["description"]) > 40
    assert config["epub_contributor"] == meta["contributor"]
    opf = (
        "<package><metadata><dc:description>unknown</dc:description>"
        "<dc:contributor>unknown</dc:contributor></metadata><manifest></manifest></package>"
    )
    (tmp_path / "_images").mkdir()
    out = add_cover_and_metadata(tmp_path, opf)
    assert "unknown" not in out and '<meta name="cover" content="book-cover" />' in out
    assert (
        '<item id="book-cover" href="_images/book-cover.png" media-type="image/png" '
        'properties="cover-image" />' in out
    )
    with Image.open(tmp_path / "_images" / "book-cover.png") as cover:
        assert cover.size == (1600, 2400)
    assert add_cover_and_metadata(tmp_path, out) == out  # once


def test_code_lines_hang_as_well_formed_blocks():
    """tools/print_book.py cuts a code block into lines (a Pygments token that spans lines closed and
    opened again), each in a block that hangs HANG_CHARS characters right of its own indentation."""
    from bs4 import BeautifulSoup

    from tools.print_book import HANG_CHARS, _hang_wrapped_code, hanging_lines

    code = (
        '<span class="k">def</span> f(x):\n    <span class="sd">"""one\n    two"""</span>\n\n'
        "        return x &lt; 2\n"
    )
    lines = hanging_lines(code)
    assert [indent for indent, _ in lines] == [0, 4, 4, 0, 8, 0]
    assert lines[2][1] == '<span class="sd">    two"""</span>'  # the string's span opened again
    soup = BeautifulSoup(f"<div><pre>{code}</pre></div>", "html.parser")
    _hang_wrapped_code(soup)
    blocks = soup.select("pre > span.book-line")
    assert len(blocks) == 5  # the newline that ends the block makes no empty line
    assert [b.get_text() for b in blocks] == [
        "def f(x):",
        '    """one',
        '    two"""',
        " ",
        "        return x < 2",
    ]
    assert (
        blocks[4]["style"] == f"padding-left: {8 + HANG_CHARS}ch; text-indent: -{8 + HANG_CHARS}ch"
    )
    assert "\n" not in soup.pre.decode_contents()  # the blocks, not newlines, make the lines
