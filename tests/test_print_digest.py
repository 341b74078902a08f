"""tools/print_book.py: the PDF and ePub are printed again only when the built site changed (digest), and
the PDF once when the last printing's contents page numbers are still right."""

from tools.print_book import site_digest


def test_the_digest_is_rewritten_only_when_the_site_changes(tmp_path):
    site, out = tmp_path / "html", tmp_path / "site-content.sha256"
    (site / "notebooks").mkdir(parents=True)
    (site / "index.html").write_text("<p>home</p>")
    (site / "notebooks" / "01.html").write_text("<p>one</p>")
    assert site_digest(site, out)
    first = out.read_text()
    assert not site_digest(site, out) and out.read_text() == first  # a rebuild with the same bytes
    (site / "print").mkdir()
    (site / "print" / "attention-book.pdf").write_bytes(b"%PDF")  # the copies of the prints
    assert not site_digest(site, out)
    (site / "notebooks" / "01.html").write_text("<p>one, changed</p>")
    assert site_digest(site, out) and out.read_text() != first
    (site / "notebooks" / "01.html").rename(
        site / "notebooks" / "02.html"
    )  # same bytes, other path
    assert site_digest(site, out)


def test_the_contents_page_numbers_of_the_last_printing(tmp_path):
    """make pdf prints once when the last printing's report gives every chapter a page (its numbers
    fill the contents before the printing, which then checks them); anything else: no guess."""
    import json

    from tools.print_book import previous_contents_pages

    out = tmp_path / "attention-book.pdf"
    ids = ["intro", "ch1", "ch2"]
    assert previous_contents_pages(out, ids) is None  # never printed
    report = out.with_suffix(".json")
    report.write_text(json.dumps({"contents_pages": {"intro": 3, "ch1": 23, "ch2": 54}}))
    assert previous_contents_pages(out, ids) == {"intro": 3, "ch1": 23, "ch2": 54}
    assert previous_contents_pages(out, ids + ["ch3"]) is None  # a chapter more
    report.write_text(json.dumps({"contents_pages": {"intro": 3, "ch1": 23, "ch2": 1054}}))
    assert previous_contents_pages(out, ids) is None  # wider than the contents' "000"
    report.write_text("{not json")
    assert previous_contents_pages(out, ids) is None
    # the index's places, under their own key, the same way
    report.write_text(
        json.dumps({"contents_pages": {}, "index_pages": {"term-BPE": 601, "idx-1": 40}})
    )
    assert previous_contents_pages(out, ["term-BPE", "idx-1"], "index_pages") == {
        "term-BPE": 601,
        "idx-1": 40,
    }
    assert previous_contents_pages(out, ["term-BPE"], "index_pages") is None
