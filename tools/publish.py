"""Publish the built book: check that _build/html is ready for its address, and serve it as published.

The site's address is ``html.baseurl`` in ``_config.yml`` (the only place it is written). A GitHub
Pages site of a repository lives under a path (https://<owner>.github.io/<name>/), so the built site
must work there: every link relative, no file asked for at the host's root. ``check`` reads the built
site and fails on anything that would be wrong once published:

- the home page, every page of ``_toc.yml``, and the PDF and ePub in ``print/`` (``make book`` copies
  them there; the home page links them);
- ``sitemap.xml`` (book/_ext/sitemap.py) listing every page of the book under the base URL;
- each page's canonical link (Sphinx writes it from the base URL) equal to the page's own address;
- no page that loads or links a file by an absolute path ("/_static/..."), which a site under a path
  would ask of the host's root, and no link to a loopback address (a build or print server).

It writes ``.nojekyll`` (a site published from a branch by GitHub Pages is otherwise run through
Jekyll, which drops folders starting with an underscore: ``_static``, ``_images``) and, given ``--to``,
copies the checked site into that folder (a web server's document root, a checkout of a branch a host
publishes). ``serve`` serves the site at its published path on the loopback address:
http://127.0.0.1:8000/attention-book/ for the base URL https://attention-book.github.io/attention-book/.

    python tools/publish.py check [--site _build/html] [--to DIR]     # make publish [PUBLISH_DIR=DIR]
    python tools/publish.py serve [--site _build/html] [--port 8000]  # make serve-published
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse

import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
PRINTED = ("print/attention-book.pdf", "print/attention-book.epub")


def base_url(config: Path = ROOT / "_config.yml") -> str:
    """``html.baseurl`` of ``_config.yml``, ending in a slash."""
    html = yaml.safe_load(config.read_text(encoding="utf-8")).get("html") or {}
    base = str(html.get("baseurl") or "")
    parsed = urlparse(base)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(
            f"html.baseurl in {config.name} must be the site's absolute http(s) address, "
            f"got {base!r}"
        )
    return base if base.endswith("/") else base + "/"


def site_path(base: str | None = None) -> str:
    """The path the site lives under on its host: "/attention-book/" (or "/" for a whole host)."""
    path = urlparse(base or base_url()).path or "/"
    return path if path.endswith("/") else path + "/"


def toc_pages() -> list[str]:
    """Every page of the book, from _toc.yml, as the site's paths ("book/intro.html", ...)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [toc["root"]] + [c["file"] for p in toc.get("parts", []) for c in p["chapters"]]
    return [f"{e}.html" for e in entries]


# href="/..." or src="/..." (not "//host"): a file asked of the host's root
ROOT_PATH = re.compile(r"""\b(?:href|src)\s*=\s*["'](/(?!/)[^"']*)["']""", re.IGNORECASE)
LOOPBACK = re.compile(
    r"""\b(?:href|src)\s*=\s*["']((?:https?:)?//(?:127\.0\.0\.1|localhost)\b[^"']*)["']""",
    re.IGNORECASE,
)
CANONICAL = re.compile(r"""<link\s+rel="canonical"\s+href="([^"]*)\"""")


def check(site: Path = SITE, base: str | None = None, pages: list[str] | None = None) -> list[str]:
    """Every problem that would show once ``site`` is published at ``base``; [] when none."""
    base = base or base_url()
    pages = toc_pages() if pages is None else pages
    problems = [
        f"missing {name}" for name in ["index.html", *pages, *PRINTED] if not (site / name).exists()
    ]
    sitemap = site / "sitemap.xml"
    if sitemap.exists():
        listed = re.findall(r"<loc>([^<]*)</loc>", sitemap.read_text(encoding="utf-8"))
        unlisted = [p for p in pages if base + p not in listed]
        if unlisted:
            problems.append(f"sitemap.xml does not list {unlisted} under {base}")
        elsewhere = [u for u in listed if not u.startswith(base)]
        if elsewhere:
            problems.append(f"sitemap.xml lists addresses outside {base}: {elsewhere[:5]}")
    else:
        problems.append("missing sitemap.xml (book/_ext/sitemap.py writes it)")
    for page in sorted(p for p in site.rglob("*.html") if "_static" not in p.parts):
        rel = page.relative_to(site).as_posix()
        text = page.read_text(encoding="utf-8", errors="replace")
        canonical = CANONICAL.findall(text)
        if rel in pages and canonical != [base + rel]:
            problems.append(f"{rel}: canonical link {canonical}, expected {[base + rel]}")
        for pattern, what in ((ROOT_PATH, "an absolute path"), (LOOPBACK, "a loopback address")):
            found = sorted(set(pattern.findall(text)))
            if found:
                problems.append(f"{rel}: links {what}: {found[:5]}")
    return problems


def mount(site: Path, root: Path, base: str | None = None) -> str:
    """Place ``site`` in folder ``root`` at the path it is published under (a link, nothing copied);
    return that path. Serving ``root`` then serves the site where its host will."""
    path = site_path(base)
    if path == "/":
        raise ValueError("the base URL has no path: serve the site folder itself")
    target = root / path.strip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(site.resolve(), target_is_directory=True)
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_folder(folder: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 for ``folder``, in a thread; ``port`` 0 picks a free one."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(_Quiet, directory=str(folder))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "serve"])
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (_build/html)")
    parser.add_argument("--to", type=Path, help="check: copy the checked site into this folder")
    parser.add_argument("--port", type=int, default=8000, help="serve: the port (8000)")
    args = parser.parse_args(argv)
    base = base_url()
    if not (args.site / "index.html").exists():
        print(f"no built site at {args.site}: run `make book`", file=sys.stderr)
        return 1
    if args.command == "serve":
        with tempfile.TemporaryDirectory(prefix="book-published-") as root:
            path = mount(args.site, Path(root), base)
            httpd = serve_folder(Path(root), args.port)
            print(f"the site as published at {base}: http://127.0.0.1:{args.port}{path}  (Ctrl-C)")
            # Ctrl-C or a kill: the server stops and the temporary folder is removed
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                pass
            finally:
                httpd.shutdown()
        return 0
    problems = check(args.site, base)
    if problems:
        print(f"not ready to publish at {base}:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    (args.site / ".nojekyll").write_text("")
    pages = len(re.findall("<loc>", (args.site / "sitemap.xml").read_text(encoding="utf-8")))
    print(f"ready to publish at {base}: {pages} pages in its sitemap, the PDF and the ePub")
    if args.to:
        if args.to.resolve() == args.site.resolve():
            print("--to is the site itself", file=sys.stderr)
            return 1
        shutil.copytree(args.site, args.to, dirs_exist_ok=True)
        print(f"copied to {args.to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
