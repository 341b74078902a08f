"""Publishing's pieces without a built book: the base URL, the sitemap extension, tools/publish.py's
checks on a small site made here, and the Colab setup cell's ref (tests/site/test_published.py runs
the built site under its path)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import publish  # noqa: E402
import sync_colab_cell  # noqa: E402

# the extension by its file (book/_ext on sys.path would put its modules' names on everyone's path)
_spec = importlib.util.spec_from_file_location(
    "book_sitemap", ROOT / "book" / "_ext" / "sitemap.py"
)
sitemap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sitemap)

BASE = "https://example.org/book/"


def test_the_base_url_is_written_once_and_names_the_sites_path():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert publish.base_url() == config["html"]["baseurl"]
    assert publish.base_url() == "https://attention-book.github.io/attention-book/"
    assert publish.site_path() == "/attention-book/"
    assert publish.site_path("https://books.example.org") == "/"


@pytest.mark.parametrize("value", ["", "attention-book.github.io/attention-book/", "/book/"])
def test_a_base_url_that_is_not_an_address_is_refused(tmp_path, value):
    config = tmp_path / "_config.yml"
    config.write_text(yaml.safe_dump({"html": {"baseurl": value}}))
    with pytest.raises(ValueError, match="html.baseurl .* absolute http"):
        publish.base_url(config)


def test_sitemap_lists_pages_under_the_base_url():
    urls = sitemap.page_urls(BASE.rstrip("/"), ["book/intro.html", "a&b.html", "book/intro.html"])
    assert urls == [f"{BASE}book/intro.html", f"{BASE}a&b.html"]
    xml = sitemap.sitemap_xml(urls)
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns=')
    assert f"<loc>{BASE}a&amp;b.html</loc>" in xml and xml.count("<url>") == 2
    with pytest.raises(ValueError, match="got 'book/'"):
        sitemap.page_urls("book/", ["x.html"])


def _sphinx_build(src: Path, out: Path, builder: str) -> None:
    from sphinx.cmd.build import build_main

    assert build_main(["-q", "-E", "-b", builder, str(src), str(out)]) == 0


def test_the_extension_writes_the_sitemap_for_the_html_build_only(tmp_path):
    src = tmp_path / "src"
    (src / "_ext").mkdir(parents=True)
    shutil.copy(ROOT / "book" / "_ext" / "sitemap.py", src / "_ext" / "book_sitemap.py")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(src / '_ext')!r})\n"
        f"extensions = ['book_sitemap']\nhtml_baseurl = {BASE!r}\nroot_doc = 'index'\n"
    )
    (src / "index.rst").write_text("Home\n====\n\n.. toctree::\n\n   two\n")
    (src / "two.rst").write_text("Two\n===\n\ntext\n")
    _sphinx_build(src, tmp_path / "html", "html")
    xml = (tmp_path / "html" / "sitemap.xml").read_text()
    assert xml.count("<loc>") == 2 and f"<loc>{BASE}index.html</loc>" in xml
    assert f"<loc>{BASE}two.html</loc>" in xml
    # Sphinx writes the canonical link from the same setting
    assert (
        f'<link rel="canonical" href="{BASE}two.html" />'
        in (tmp_path / "html" / "two.html").read_text()
    )
    _sphinx_build(src, tmp_path / "single", "singlehtml")
    assert not (tmp_path / "single" / "sitemap.xml").exists()


def _site(root: Path) -> Path:
    """A site with two pages, the printed book and a sitemap, as `make book` writes them."""
    for page in ("book/intro.html", "book/two.html"):
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(
            f'<html><head><link rel="canonical" href="{BASE}{page}" />'
            '<script src="../_static/x.js"></script></head><body><a href="two.html">2</a></body></html>'
        )
    (root / "index.html").write_text(
        '<meta http-equiv="Refresh" content="0; url=book/intro.html" />'
    )
    for name in publish.PRINTED:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(b"%PDF")
    urls = sitemap.page_urls(BASE, ["book/intro.html", "book/two.html"])
    (root / "sitemap.xml").write_text(sitemap.sitemap_xml(urls))
    return root


PAGES = ["book/intro.html", "book/two.html"]


def test_check_passes_a_publishable_site(tmp_path):
    assert publish.check(_site(tmp_path), BASE, PAGES) == []


def test_check_finds_what_would_break_once_published(tmp_path):
    site = _site(tmp_path)
    page = site / "book" / "two.html"
    page.write_text(
        '<link rel="canonical" href="https://elsewhere.org/two.html" />'
        '<script src="/_static/x.js"></script><a href="http://127.0.0.1:8000/book/intro.html#a">x</a>'
    )
    (site / "sitemap.xml").write_text(sitemap.sitemap_xml([f"{BASE}book/intro.html"]))
    (site / "print" / "attention-book.epub").unlink()
    problems = publish.check(site, BASE, PAGES)
    assert problems == [
        "missing print/attention-book.epub",
        f"sitemap.xml does not list ['book/two.html'] under {BASE}",
        "book/two.html: canonical link ['https://elsewhere.org/two.html'], "
        f"expected ['{BASE}book/two.html']",
        "book/two.html: links an absolute path: ['/_static/x.js']",
        "book/two.html: links a loopback address: ['http://127.0.0.1:8000/book/intro.html#a']",
    ]


def test_mount_places_the_site_at_its_path(tmp_path):
    site = _site(tmp_path / "site")
    host = tmp_path / "host"
    assert publish.mount(site, host, BASE) == "/book/"
    assert (host / "book" / "book" / "intro.html").read_text() == (
        site / "book" / "intro.html"
    ).read_text()
    with pytest.raises(ValueError, match="no path"):
        publish.mount(site, tmp_path / "other", "https://books.example.org/")


def test_the_setup_cell_installs_the_launch_buttons_ref(monkeypatch):
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    assert repo["branch"] == sync_colab_cell.repository_ref() == "published"
    assert f'package = "git+{repo["url"]}@published"' in sync_colab_cell.colab_cell_source()
    assert '@v1.0"' in sync_colab_cell.colab_cell_source(repo["url"], "v1.0")
    for bad in ("", "main branch", "a@b", None):
        monkeypatch.setattr(sync_colab_cell, "_repository", lambda bad=bad: {"branch": bad})
        with pytest.raises(ValueError, match="repository.branch .* git ref name"):
            sync_colab_cell.repository_ref()


WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def test_the_workflow_builds_tests_and_deploys_the_site_with_pinned_pages_actions():
    text = WORKFLOW.read_text()
    flow = yaml.safe_load(text)
    steps = {name: job["steps"] for name, job in flow["jobs"].items()}
    uses = [s["uses"] for job in steps.values() for s in job if "uses" in s]
    assert {u.split("@")[0] for u in uses} == {
        "actions/checkout",
        "actions/setup-python",
        "actions/configure-pages",
        "actions/upload-pages-artifact",
        "actions/deploy-pages",
    }
    # the pin rule: a full commit SHA, the release's exact tag in a comment on the same line
    for line in (ln for ln in text.splitlines() if "uses:" in ln):
        assert re.search(r"uses: actions/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line
    build = steps["build"]
    python = next(s for s in build if s.get("uses", "").startswith("actions/setup-python"))
    assert python["with"]["python-version"] == "3.11"
    assert flow["jobs"]["build"]["runs-on"].startswith("ubuntu")
    runs = [s["run"] for s in build if "run" in s]
    # the README's two commands, then the publish check, in this order
    assert [r for r in runs if r.startswith("make ")] == ["make book", "make test", "make publish"]
    upload = next(s for s in build if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "_build/html"
    assert flow["jobs"]["deploy"]["needs"] == "build"
    assert flow["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert flow[True]["push"]["branches"] == ["main"]  # YAML reads the key `on` as true


def test_the_workflow_moves_the_ref_colab_opens_after_deploying():
    """`published` is the deployed commit plus one commit of plain notebooks (tools/plain_notebooks.py):
    the job checks out the deployed commit (actions/checkout's default, GITHUB_SHA), converts the
    chapters in place, commits them and pushes that commit, last, as the launch buttons' ref."""
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow["jobs"]["published-ref"]
    assert job["needs"] == "deploy"
    assert job["permissions"] == {"contents": "write"}
    steps = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and "with" not in steps[0]
    runs = [s.get("run", "") for s in steps]
    convert = next(i for i, r in enumerate(runs) if "tools/plain_notebooks.py --in-place" in r)
    commit = next(i for i, r in enumerate(runs) if "git commit" in r)
    assert "requirements.txt" in runs[convert]  # the pinned versions
    assert "-a" in runs[commit].split() and "${GITHUB_SHA}" in runs[commit]
    assert convert < commit < len(steps) - 1
    push = steps[-1]["run"]
    assert push == f'git push --force origin "HEAD:refs/heads/{sync_colab_cell.repository_ref()}"'
