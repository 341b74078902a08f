"""axe-core audits every page of the built site in a real browser, light and dark mode (issue 25).

axe-core (Deque's accessibility engine, from npm: package.json pins it; node_modules/axe-core/axe.min.js)
is injected into each page after it has loaded and MathJax has typeset, as a reader's browser would show
it, then ``axe.run`` checks the whole document against its WCAG 2.x A/AA rules and best practices.
No violation of impact "serious" or "critical" is allowed on any page in either colour mode (contrast,
names of controls and images, landmarks, scrollable regions reachable by keyboard, ...): every rule runs
in light mode, and the rules that read colours (contrast) again in dark mode, the only thing it changes. The counts of
every impact are written to _build/axe-report.json for the record.
"""

from __future__ import annotations

import json
import time

import pytest

from ..test_accessibility import SLIDER_MODELS, drawn_widgets
from .conftest import ROOT, site_pages
from .test_browser import open_page, wait_until

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}

# Light mode: every rule. Dark mode changes colours only, so there the rules that read colours run.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
RUN_AXE = """
const done = arguments[arguments.length - 1];
const options = {resultTypes: ['violations']};
if (arguments[0]) options.runOnly = {type: 'rule', values: arguments[0]};
axe.run(document, options).then(r => done({
  version: axe.version,
  violations: r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
    nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 240)),
  })),
})).catch(e => done({error: String(e)}));
"""


def rendered_widgets(html: str) -> str | None:
    """A CSS selector that is on the screen once the page's widgets are drawn: a slider's handle where
    it draws a slider, any widget where it draws others, None where it draws none."""
    names = drawn_widgets(html)
    if names & SLIDER_MODELS:
        return ".noUi-handle"
    return ".jupyter-widgets" if names else None


# The theme eases colours in over a transition: axe must read the colours the mode ends at, not one
# caught midway (a loaded machine's 0.3 s was once too short: the search field's text at 1.86:1 on a
# background halfway from light to dark). Transitions are switched off for the audit.
NO_TRANSITIONS = (
    "if (!document.getElementById('axe-no-transitions')) {"
    "  const s = document.createElement('style'); s.id = 'axe-no-transitions';"
    "  s.textContent = '*, *::before, *::after { transition: none !important; "
    "animation: none !important; }';"
    "  document.head.append(s); }"
)


def set_mode(driver, mode: str) -> None:
    driver.execute_script(
        NO_TRANSITIONS + "document.documentElement.dataset.theme = arguments[0];"
        "document.documentElement.dataset.mode = arguments[0];",
        mode,
    )
    time.sleep(0.3)  # the styles of the new mode applied


def audit(driver, rules: list[str] | None = None) -> dict:
    if not driver.execute_script("return !!window.axe;"):
        driver.execute_script(AXE.read_text(encoding="utf-8"))
    return driver.execute_async_script(RUN_AXE, rules)


@pytest.fixture(scope="module")
def audits(site, server, browser):
    assert AXE.exists(), f"{AXE} missing: run `make assets` (npm ci)"
    browser.set_script_timeout(180)
    results = {}
    for page in site_pages(site):
        rel = page.relative_to(site).as_posix()
        open_page(browser, f"{server}/{rel}")
        # widgets are drawn by scripts after load: audit what the reader sees, once they are on the screen
        drawn = rendered_widgets(page.read_text(encoding="utf-8", errors="replace"))
        if drawn:
            assert wait_until(browser, f"document.querySelector({drawn!r})", timeout=30), (
                f"{rel}: its saved widgets were not drawn ({drawn} missing)"
            )
        for mode in ("light", "dark"):
            set_mode(browser, mode)
            results[(rel, mode)] = audit(browser, None if mode == "light" else COLOUR_RULES)
    summary = {}
    for (rel, mode), r in results.items():
        counts = summary.setdefault(mode, {})
        for v in r.get("violations", []):
            counts[v["impact"]] = counts.get(v["impact"], 0) + v["count"]
    report = {
        "axe": next((r.get("version") for r in results.values() if r.get("version")), None),
        "pages": len({rel for rel, _ in results}),
        "nodes_by_impact": summary,
        "violations": {
            f"{rel} ({mode})": r.get("violations", r.get("error"))
            for (rel, mode), r in results.items()
        },
    }
    (ROOT / "_build").mkdir(exist_ok=True)
    (ROOT / "_build" / "axe-report.json").write_text(json.dumps(report, indent=1))
    return results


def test_axe_ran_on_every_page(audits, site):
    pages = {rel for rel, _ in audits}
    assert len(pages) == len(site_pages(site)) and len(pages) > 20
    errors = {key: r["error"] for key, r in audits.items() if "error" in r}
    assert not errors, f"axe did not run: {errors}"


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_no_serious_or_critical_violation(audits, mode):
    bad = {
        rel: [v for v in r["violations"] if v["impact"] in BLOCKING]
        for (rel, m), r in audits.items()
        if m == mode
    }
    bad = {rel: vs for rel, vs in bad.items() if vs}
    assert not bad, f"axe, {mode} mode: " + json.dumps(bad, indent=1)[:6000]


def test_axe_finds_a_planted_violation(server, browser):
    """The audit can fail: an image without alt text and a button without a name are reported."""
    open_page(browser, f"{server}/book/notation.html")
    browser.execute_script(
        "const main = document.querySelector('main') || document.body;"
        "const img = document.createElement('img'); img.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';"
        "main.prepend(img); main.prepend(document.createElement('button'));"
    )
    ids = {v["id"] for v in audit(browser)["violations"] if v["impact"] in BLOCKING}
    assert {"image-alt", "button-name"} <= ids, ids
