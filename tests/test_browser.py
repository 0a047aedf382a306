"""The built site in a real browser (Debian's chromium via Playwright): loads from file://, offline, quietly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import Built

CHROMIUM = os.environ.get("REFSENS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"no chromium at {CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does)",
)


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is in .[test]")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def open_page(browser, url: str, javascript: bool = True):
    """Open a page and record every request, console message and page error."""
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = {"requests": [], "console": [], "errors": [], "failed": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("requestfailed", lambda request: seen["failed"].append(request.url))
    page.on("console", lambda message: seen["console"].append((message.type, message.text)))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.goto(url, wait_until="load")
    return context, page, seen


def test_the_appendix_loads_offline_with_no_errors_and_no_outside_request(
    built_site: Built, browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    site_url = built_site.out.resolve().as_uri()
    context, page, seen = open_page(browser, (built_site.folder / "index.html").resolve().as_uri())
    try:
        assert not seen["errors"], seen["errors"]
        assert not [message for kind, message in seen["console"] if kind in ("error", "warning")], seen["console"]
        assert not seen["failed"], seen["failed"]
        assert seen["requests"] and all(url.startswith(site_url + "/") for url in seen["requests"]), seen["requests"]
        # every figure decoded, every stylesheet applied
        broken = page.evaluate("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length")
        assert broken == 0
        assert page.evaluate("document.styleSheets.length") >= 1
        assert page.evaluate("document.querySelectorAll('section').length") == 14
        # the hostile type and labelling names stayed text: no script element, no alert
        assert page.evaluate("document.querySelectorAll('script').length") == 0
        folder = tmp_path_factory.mktemp("screenshots")
        shot = folder / "appendix.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        keep = os.environ.get("REFSENS_SCREENSHOT_DIR")
        if keep:  # CI or a developer can keep the picture
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / "appendix.png")
    finally:
        context.close()


def test_the_site_index_loads_and_reads_without_javascript(built_site: Built, browser) -> None:
    context, page, seen = open_page(browser, (built_site.out / "index.html").resolve().as_uri(), javascript=False)
    try:
        assert not seen["errors"] and not seen["failed"]
        assert page.locator("table.versions tbody tr").count() == 1
        link = page.locator("a.version").first
        assert link.inner_text() == built_site.version
        link.click()
        page.wait_for_load_state("load")
        assert page.url.endswith(f"/{built_site.version}/index.html")
        assert page.locator("h1").inner_text().startswith("Simulated PII benchmark")
    finally:
        context.close()
