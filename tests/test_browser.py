"""The built site in a real browser (Debian's chromium via Playwright): loads from file://, offline, quietly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import Built

CHROMIUM = os.environ.get("REFSENS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

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
        html = (built_site.folder / "index.html").read_text(encoding="utf-8")
        assert page.evaluate("document.querySelectorAll('section').length") == html.count("<section ") >= 10
        # the hostile type and labelling names stayed text: no script element but the page's own, no alert
        assert page.evaluate("Array.from(document.scripts).map(s => s.getAttribute('src') + s.text)") == ["site.js"]
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


# Every word of a table header or row label, measured: a word set on two lines has two client rects. A word
# is a run of letters and digits (ADDRESS, Language): punctuation inside a name ('<script>alert(...)') and
# Chinese or Japanese characters, between which lines may break by the Unicode line-breaking rules, are not.
WORDS_ON_TWO_LINES = """() => {
  const broken = [];
  const ideographs = /[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}]/u;
  for (const cell of document.querySelectorAll('figure.table th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const pattern = /[\\p{L}\\p{N}\\p{M}]+/gu;
      let match;
      while ((match = pattern.exec(node.data)) !== null) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set(Array.from(range.getClientRects()).map(rect => Math.round(rect.top)));
        if (lines.size > 1 && !ideographs.test(match[0])) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_no_table_header_or_label_breaks_inside_a_word(built_site: Built, browser, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    try:
        page.goto((built_site.folder / "index.html").resolve().as_uri(), wait_until="load")
        assert page.evaluate("document.querySelectorAll('figure.table th').length") > 50
        assert page.evaluate(WORDS_ON_TWO_LINES) == []
    finally:
        context.close()


def test_a_phone_shows_the_answer_first_and_scrolls_tables_in_their_own_box(built_site: Built, browser) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    try:
        page.goto((built_site.folder / "index.html").resolve().as_uri(), wait_until="load")
        # the summary's heading and the start of its first verdict are on the first screen
        top = page.evaluate("document.querySelector('#summary .verdicts li').getBoundingClientRect().top")
        assert 0 < top < 844 - 40
        # the page itself never scrolls sideways; a wide table scrolls inside its box, which shows a cue
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll('.table-scroll')).map(box => ({
            wide: box.scrollWidth > box.clientWidth + 1,
            scrolls: getComputedStyle(box).overflowX === 'auto',
            cue: getComputedStyle(box).backgroundImage.includes('gradient')}))""")
        assert any(box["wide"] for box in boxes)  # the demo has tables wider than a phone
        assert all(box["scrolls"] and box["cue"] for box in boxes)
        shot = page.screenshot(full_page=False)
        assert len(shot) > 10_000
        keep = os.environ.get("REFSENS_SCREENSHOT_DIR")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / "phone.png").write_bytes(shot)
    finally:
        context.close()


FIGURES_ON_SCREEN = """() => Array.from(document.querySelectorAll('figure.figure img')).map(image => {
    const box = image.closest('.figure-scroll');
    return {src: image.getAttribute('src'), width: image.getBoundingClientRect().width,
            left: box.getBoundingClientRect().left, right: box.getBoundingClientRect().right,
            scrolls: getComputedStyle(box).overflowX === 'auto',
            cue: getComputedStyle(box).backgroundImage.includes('gradient')};
})"""
LINKS_ON_SCREEN = """() => Array.from(document.querySelectorAll('table.versions a')).map(link => {
    const box = link.getBoundingClientRect();
    return {text: link.textContent, left: box.left, right: box.right, top: box.top};
})"""


def test_a_phone_prints_figure_text_at_9_px_and_shows_the_index_downloads(built_site: Built, browser) -> None:
    """At 390 px a figure keeps its drawn size (its smallest text 9 px or more) and scrolls in its own box; the
    index shows each version as a block, its downloads on screen; neither page scrolls sideways."""
    import re

    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    keep = os.environ.get("REFSENS_SCREENSHOT_DIR")
    try:
        page.goto((built_site.folder / "index.html").resolve().as_uri(), wait_until="load")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        shown = page.evaluate(FIGURES_ON_SCREEN)
        assert len(shown) >= 5
        for figure in shown:
            svg = (built_site.folder / figure["src"]).read_text(encoding="utf-8")
            drawn_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
            smallest = min(float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg))
            assert smallest * figure["width"] / drawn_width >= 9, figure["src"]  # CSS px of its smallest text
            assert 0 <= figure["left"] and figure["right"] <= 390 and figure["scrolls"] and figure["cue"]
        page.locator("figure.figure").first.scroll_into_view_if_needed()
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(keep) / "phone-figure.png"))
        page.goto((built_site.out / "index.html").resolve().as_uri(), wait_until="load")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        links = page.evaluate(LINKS_ON_SCREEN)
        assert {"PDF", "results.json", "CSV"} <= {link["text"] for link in links}
        assert all(0 <= link["left"] and link["right"] <= 390 for link in links), links
        if keep:
            page.screenshot(path=str(Path(keep) / "phone-index.png"))
    finally:
        context.close()
