"""Fixtures for the tests of the built site: its folder, a loopback HTTP server, a headless Chromium.

The site must have been built (``make book``; ``make test`` builds it when needed). A missing site is a
failure, not a skip: a skipped site test would let a broken build pass.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# override to test another build
SITE = Path(os.environ.get("BOOK_SITE_DIR", ROOT / "_build" / "html"))


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `make book` first")
    return SITE


def site_pages(site: Path) -> list[Path]:
    """Every HTML page of the book (not the files vendored under _static)."""
    return sorted(
        p for p in site.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts
    )


def toc_entries() -> list[str]:
    """The pages of the book, from _toc.yml (a notebook being written but not yet listed is not built)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output readable
        pass


@pytest.fixture(scope="session")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1280,1600",
    # The network is unavailable to the page: every host name fails to resolve except the loopback
    # server that serves the site. (CI machines have no network either; this makes it explicit.)
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def start_chromium():
    """A headless Chromium with a fresh profile; returns (driver, profile folder)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail(
            "Chromium and chromedriver are required (make test installs Debian's chromium and chromium-driver)"
        )
    profile = tempfile.mkdtemp(prefix="book-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    return driver, profile


def quit_chromium(driver, profile) -> None:
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# One Chromium per test module, not per session: a session's one tab, after the live figures and
# Playgrounds of every module before (each page's ONNX runtime and workers), crashed ("tab crashed") in a
# fresh clone's run, and every later browser test of that worker failed with it (stop 50's check).
@pytest.fixture(scope="module")
def browser():
    driver, profile = start_chromium()
    yield driver
    quit_chromium(driver, profile)


# One Chromium per test, for modules that load many live figures in a row: in one module's tab, 24 pages
# of live figures on phones crashed the tab after 17 ("tab crashed", stop 50's CI run on an AMD machine).
@pytest.fixture
def fresh_browser():
    driver, profile = start_chromium()
    yield driver
    quit_chromium(driver, profile)


# --- phones (test_phone.py, test_phone_live.py): Chromium's mobile emulation, one size after the other ---

PHONES = {"360x740": (360, 740), "412x915": (412, 915)}


def emulate(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 2, "mobile": True},
    )
    driver.execute_cdp_cmd(
        "Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1}
    )


def stop_emulating(driver) -> None:
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})


@pytest.fixture(scope="module", params=list(PHONES))
def phone(request, browser):
    width, height = PHONES[request.param]
    emulate(browser, width, height)
    yield width, height
    stop_emulating(browser)
