"""tools/print_book.py digest: the PDF and ePub are printed again only when the built site changed."""

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
