"""The listing browser and the sortable tables in a real browser (Debian's chromium via Playwright), from file://.

Two small builds without the PDF: the hostile record (conftest: a type named like a script tag, a labelling
name with an <img onerror>) and the demo's shape with its model outputs (1,500 items), plus a hand-made listing
whose text holds markup and a right-to-left override, and the CoNLL-2003 example's 730 lines when
../shared/data is there. Every page is checked to request nothing but files of its own folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import HOSTILE_LABELLING, HOSTILE_TYPE, build, make_hostile_record
from helpers import audit_items, item
from test_browser import ARGS, CHROMIUM, browser  # noqa: F401 - the browser fixture

from refsens_report import browser as browser_module
from refsens_report import formatting, render
from refsens_report.analyses import disagreements
from refsens_report.browser import SiteContext
from refsens_report.results import write_files
from refsens_report.view import ResultsView

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no chromium at {CHROMIUM}")

PROJECT = Path(__file__).resolve().parent.parent
CONLL_CONFIG = PROJECT / "examples" / "conll2003" / "refsens.toml"
CONLL_DATA = PROJECT.parent / "shared" / "data" / "conll"
TIMESTAMP = "2026-01-01T00:00:00+00:00"
DASH = "\u2013"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("hostile")
    return build(make_hostile_record(folder / "record"), folder / "site", with_pdf=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    """The demo's shape (annotators, references and four model outputs), small, with few resamples."""
    from refsens_report.demo import write_simulation

    folder = tmp_path_factory.mktemp("demo")
    write_simulation(folder / "record", items=1500, seed=0)
    config = folder / "record" / "refsens.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        "\n".join("resamples = 50" if line.startswith("resamples") else line for line in text.splitlines()) + "\n",
        encoding="utf-8",
    )
    return build(config, folder / "site", with_pdf=False)


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def visit(browser, path: Path, width: int = 1280, javascript: bool = True):  # noqa: F811
    """Open a page; return (context, page, seen): every request, page error, console error and dialog."""
    context = browser.new_context(
        java_script_enabled=javascript, viewport={"width": width, "height": 900}, is_mobile=width < 500
    )
    page = context.new_page()
    seen = {"requests": [], "errors": [], "dialogs": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("console", lambda message: message.type == "error" and seen["errors"].append(message.text))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return context, page, seen


def assert_offline(seen: dict, folder: Path) -> None:
    """Nothing but files of the page's own folder was requested; no error, no alert."""
    inside = folder.resolve().as_uri() + "/"
    assert seen["requests"] and all(url.startswith(inside) for url in seen["requests"]), seen["requests"]
    assert not seen["errors"] and not seen["dialogs"], seen


def status(page) -> str:
    return page.locator("#browser-count").inner_text()


def column(page, label: str) -> list[str]:
    """The visible lines' cells under a header."""
    return page.evaluate(
        """label => {
        const headers = Array.from(document.querySelectorAll('table.listing thead th')).map(th => th.textContent);
        const at = headers.indexOf(label);
        return Array.from(document.querySelectorAll('table.listing tr.line')).map(row => row.cells[at].textContent);
    }""",
        label,
    )


def sorted_by(page, label: str) -> str | None:
    """The aria-sort of the listing's header with this label (None: not sorted by it)."""
    return page.evaluate(
        """label => Array.from(document.querySelectorAll('table.listing thead th'))
        .find(th => th.textContent === label).getAttribute('aria-sort')""",
        label,
    )


def option(select_values: dict, value: str) -> str:
    """A choice filter's option label: the value isolated (FSI ... PDI) and how many lines hold it."""
    return f"\u2068{value}\u2069 ({formatting.count(select_values[value])})"


def keep_screenshot(page, name: str) -> None:
    keep = os.environ.get("REFSENS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(keep) / name), full_page=False)


def render_listings(folder: Path, results) -> Path:
    """Write an audit's listing files, pages, data scripts, script and stylesheets into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_files(results, folder)
    document = {**results.to_json_dict(), "rows": results.rows}
    for name, text in render.analysis_pages(ResultsView.from_json(document), SiteContext(folder, document, TIMESTAMP)):
        (folder / name).write_text(text, encoding="utf-8")
    render.copy_stylesheets(folder)
    render.copy_scripts(folder)
    return folder


# --- without JavaScript: the page as before ---------------------------------------------------------


def test_without_javascript_the_page_lists_the_lines_with_most_impact(hostile, browser) -> None:  # noqa: F811
    path = hostile.folder / "annotator-disagreements.html"
    context, page, seen = visit(browser, path, javascript=False)
    try:
        assert page.locator("#browser").is_hidden()
        assert page.locator("main.static-listing").is_visible()
        lines = lines_of(hostile.folder / "annotator-disagreements.jsonl")
        assert page.locator("li.item").count() == min(len(lines), 200) < len(lines)
        assert page.locator("button.sort").count() == 0
        # the links between the version's listings work without a script
        assert page.locator("nav.listings a").get_attribute("href") == "disagreements.html"
        assert_offline(seen, hostile.folder)
    finally:
        context.close()


# --- filter, search, sort, page ---------------------------------------------------------------------


def test_the_browser_filters_searches_sorts_and_pages_every_line(demo, browser) -> None:  # noqa: F811
    path = demo.folder / "annotator-disagreements.html"
    lines = lines_of(demo.folder / "annotator-disagreements.jsonl")
    total = len(lines)
    assert total > 200  # more than the static page shows
    context, page, seen = visit(browser, path)
    try:
        assert page.locator("main.static-listing").is_hidden() and page.locator("#browser").is_visible()
        assert status(page) == f"Lines 1{DASH}25 of {formatting.count(total)}."
        assert column(page, "Item") == [line["id"] for line in lines[:25]]
        # page through every line: the last page ends on the listing's last line
        page.get_by_role("button", name="Last").click()
        first = (total - 1) // 25 * 25 + 1
        everything = formatting.count(total)
        assert status(page) == f"Lines {formatting.count(first)}{DASH}{everything} of {everything}."
        assert column(page, "Item") == [line["id"] for line in lines[first - 1 :]]
        assert page.get_by_role("button", name="Next").is_disabled()
        page.get_by_label("Lines per page").select_option("200")
        assert page.locator("tr.line").count() == 200 and page.locator("tr.detail").count() == 200

        # filters: a language, then also an output whose counts change
        languages: dict[str, int] = {}
        for line in lines:
            languages[line["language"]] = languages.get(line["language"], 0) + 1
        page.get_by_label("Language").select_option(label=option(languages, "hi"))
        hindi = [line for line in lines if line["language"] == "hi"]
        assert status(page) == f"Lines 1{DASH}{min(200, len(hindi))} of {len(hindi)} matching (of {everything})."
        outputs: dict[str, int] = {}
        for line in lines:
            for name, change in line["outputs"].items():
                if any(change.values()):
                    outputs[name] = outputs.get(name, 0) + 1
        chosen = sorted(outputs)[0]
        page.get_by_label("Outputs changed").select_option(label=option(outputs, chosen))
        changed = [line for line in hindi if any(line["outputs"].get(chosen, {}).values())]
        assert 0 < len(changed) < len(hindi)
        assert status(page).startswith(f"Lines 1{DASH}{len(changed)} of {len(changed)} matching")
        assert column(page, "Item") == [line["id"] for line in changed]
        page.get_by_label("Language").select_option(label=f"all ({len(languages)})")
        page.get_by_label("Outputs changed").select_option(index=0)
        assert status(page) == f"Lines 1{DASH}200 of {formatting.count(total)}."

        # at least an impact
        page.get_by_label("Impact at least").fill("3")
        heavy = [line for line in lines if line["impact"] >= 3]
        assert f" of {formatting.count(len(heavy))} matching" in status(page)
        page.get_by_label("Impact at least").fill("")

        # search: a word of one item's text, in any case, finds every line whose id, labels or text hold it
        word = next(
            word
            for line in lines
            for word in line["text"].split()
            if word.isascii() and word.isalpha() and len(word) >= 6
        )
        page.get_by_label("Search ids, labels and text").fill(word.upper())

        def searchable(line: dict) -> str:
            changed = [name for name, change in line["outputs"].items() if any(change.values())]
            types = {span[2] for span in line["only_first"] + line["only_second"]}
            return "\0".join(
                [line["id"], line["language"], f"{line['first']} vs {line['second']}", *types, *changed, line["text"]]
            ).lower()

        found = [line for line in lines if word.lower() in searchable(line)]
        assert 0 < len(found) < total
        assert column(page, "Item") == [line["id"] for line in found][:200]
        assert word.lower() in page.locator("tr.detail").first.inner_text().lower()
        page.get_by_label("Search ids, labels and text").fill("no such text anywhere \u2063")
        assert status(page) == f"No line matches (of {formatting.count(total)})."
        page.get_by_label("Search ids, labels and text").fill("")

        # sort: by impact up, then down; by item id (code points); each header says its order
        impact = page.get_by_role("button", name="Impact", exact=True)
        impact.click()
        assert sorted_by(page, "Impact") == "ascending"
        shown = [int(value.replace(",", "")) for value in column(page, "Impact")]
        assert shown == sorted(shown) and shown[0] == min(line["impact"] for line in lines)
        impact.click()
        assert sorted_by(page, "Impact") == "descending"
        assert int(column(page, "Impact")[0]) == max(line["impact"] for line in lines)
        page.get_by_role("button", name="Item", exact=True).click()
        assert sorted_by(page, "Impact") is None
        assert column(page, "Item") == sorted(line["id"] for line in lines)[:200]
        assert_offline(seen, demo.folder)
    finally:
        context.close()


def test_the_browser_works_from_the_keyboard(demo, browser) -> None:  # noqa: F811
    context, page, seen = visit(browser, demo.folder / "annotator-disagreements.html")
    try:
        # Tab from the top: the search, every filter and the page size come before the headers
        focused = []
        for _ in range(80):
            page.keyboard.press("Tab")
            focused.append(
                page.evaluate("""() => { const node = document.activeElement;
                return [node.tagName, node.id, node.textContent.trim()]; }""")
            )
            if focused[-1] == ["BUTTON", "", "Impact"]:
                break
        assert focused[-1] == ["BUTTON", "", "Impact"], focused
        ids = {element_id for _, element_id, _ in focused}
        assert {"browser-search", "browser-size"} <= ids
        assert sum(1 for element_id in ids if element_id.startswith("browser-filter-")) >= 4
        # every control is labelled; the count is a polite live region
        assert page.evaluate("""() => Array.from(document.querySelectorAll('#browser input, #browser select'))
            .every(control => control.labels.length === 1 && control.labels[0].textContent.trim() !== '')""")
        count = page.locator("#browser-count")
        assert (count.get_attribute("role"), count.get_attribute("aria-live")) == ("status", "polite")
        page.keyboard.press("Enter")
        header = page.locator("table.listing th[aria-sort]")
        assert header.inner_text() == "Impact" and header.get_attribute("aria-sort") == "ascending"
        values = [int(value) for value in column(page, "Impact")]
        assert values == sorted(values)
        # on to the pager: Next, Enter
        for _ in range(400):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent") == "Next":
                break
        page.keyboard.press("Enter")
        assert status(page).startswith(f"Lines 26{DASH}50 of ")
        assert_offline(seen, demo.folder)
    finally:
        context.close()


def test_a_phone_browses_the_demos_annotator_disagreements(demo, browser) -> None:  # noqa: F811
    """At 390 px the page never scrolls sideways: the controls wrap, the table scrolls in its box."""
    context, page, seen = visit(browser, demo.folder / "annotator-disagreements.html", width=390)
    try:
        assert page.locator("#browser").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # every control and each item's text lie within the screen; the wide table scrolls in its own box
        rights = page.evaluate("""() => Array.from(document.querySelectorAll(
            '#browser label, #browser .pager, .item-detail')).map(node => node.getBoundingClientRect().right)""")
        assert rights and max(rights) <= 390
        box = page.locator("#browser .table-scroll")
        assert box.evaluate("box => box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === 'auto'")
        box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        assert page.locator(".item-detail").first.evaluate("node => node.getBoundingClientRect().left") >= 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.get_by_label("Search ids, labels and text").fill("hi-")
        assert "matching" in status(page)
        keep_screenshot(page, "listing-phone.png")
        assert_offline(seen, demo.folder)
    finally:
        context.close()


# --- hostile text ------------------------------------------------------------------------------------

HOSTILE_TEXT = 'Hi <script>alert("text")</script> <img src=x onerror=alert(1)> \u202eevil\u202c مرحبا "Paris"'


def test_hostile_names_and_types_stay_text_in_isolates(hostile, browser) -> None:  # noqa: F811
    context, page, seen = visit(browser, hostile.folder / "annotator-disagreements.html")
    try:
        assert page.evaluate("Array.from(document.scripts).map(s => s.getAttribute('src') + s.text)") == [
            "annotator-disagreements-data.js",
            "site.js",
        ]
        types = page.get_by_label("Types")
        assert types.locator("option", has_text=HOSTILE_TYPE).count() == 1
        label = types.locator("option", has_text=HOSTILE_TYPE).inner_text()
        assert label.startswith(f"\u2068{HOSTILE_TYPE}\u2069 (")
        types.select_option(label=label)
        assert "matching" in status(page)
        assert page.locator("img").count() == 0  # the labelling's <img onerror> never became an element
        # every element whose text is a hostile string is an isolate (or a mark inside one)
        holders = page.evaluate(
            """strings => {
            const found = [];
            for (const node of document.querySelectorAll('#browser *')) {
                if (node.children.length === 0 && strings.some(s => node.textContent === s)) {
                    found.push([node.tagName, node.closest('bdi') !== null]);
                }
            }
            return found;
        }""",
            [HOSTILE_TYPE, HOSTILE_LABELLING],
        )
        assert holders and all(tag == "BDI" and inside for tag, inside in holders), holders
        assert HOSTILE_LABELLING in page.locator(".side-name").nth(1).inner_text()
        assert_offline(seen, hostile.folder)
    finally:
        context.close()


def test_an_items_hostile_text_is_escaped_and_isolated_side_by_side(tmp_path: Path, browser) -> None:  # noqa: F811
    """Both sides compared and the outputs (those with the same spans together), each with its spans marked in
    the text, side by side; on the disagreement page and on the candidates' page; the text stays text."""
    start = HOSTILE_TEXT.index("<script>")
    end = HOSTILE_TEXT.index("</script>") + len("</script>")
    arabic = HOSTILE_TEXT.index("مرحبا")
    script, word = [start, end, "CODE"], [arabic, arabic + 5, "CODE"]
    script_text = HOSTILE_TEXT[start:end]
    lines = [
        item("x-1", "en", text=HOSTILE_TEXT, gold=[script], clean=[word], o1=[word], o2=[word], o3=[script], a=[], b=[])
    ]
    agreed = [[0, 2, "CODE"]]  # items where every labelling agrees: the sources' weights come from them
    lines += [
        item(
            f"x-{number}",
            "en",
            text="ok",
            gold=agreed,
            clean=agreed,
            o1=agreed,
            o2=agreed,
            o3=agreed,
            a=agreed,
            b=agreed,
        )
        for number in range(2, 6)
    ]
    roles = {"annotators": ("a", "b"), "outputs": ("o1", "o2", "o3"), "references": ("gold", "clean")}
    results = audit_items(tmp_path / "project", lines, audit={"resamples": 10}, **roles)
    folder = render_listings(tmp_path / "version", results)

    def marks(text) -> list[tuple[str, str]]:
        isolate = text.locator("bdi")
        assert text.get_attribute("dir") == "auto"
        assert isolate.count() == 1 and isolate.text_content() == HOSTILE_TEXT  # the RLO stays inside it
        return [(node.get_attribute("class"), node.text_content()) for node in isolate.locator("mark").all()]

    context, page, seen = visit(browser, folder / "disagreements.html")
    try:
        assert page.locator("img").count() == 0
        texts = page.locator("#browser .item-text")
        # gold, clean, then the outputs: o1 and o2 (the same spans) together, o3
        assert page.locator("#browser .side-name").all_inner_texts() == ["gold", "clean", "o1, o2", "o3"]
        # an output's span is marked as the side compared that has it: o1 and o2 as clean, o3 as gold
        assert [marks(texts.nth(side)) for side in range(4)] == [
            [("first", '<script>alert("text")</script>')],
            [("second", "مرحبا")],
            [("second", "مرحبا")],
            [("first", '<script>alert("text")</script>')],
        ]
        said = page.locator("#browser .side.output li").all_inner_texts()
        assert said == [
            f"[{arabic}, {arabic + 5}) CODE «مرحبا» (as clean)",
            f"[{start}, {end}) CODE «{script_text}» (as gold)",
        ]
        tops = [texts.nth(side).evaluate("node => node.getBoundingClientRect().top") for side in range(4)]
        assert tops[0] == tops[1] == tops[2]  # side by side on a wide screen
        assert_offline(seen, folder)
    finally:
        context.close()
    # gold's candidate "missing": the sources o1, o2 and clean propose adding the Arabic word (the script, which
    # gold and o3 have, is on both sides: grey)
    rows = lines_of(folder / "gold-error-candidates.jsonl")
    context, page, seen = visit(browser, folder / "gold-error-candidates.html")
    try:
        assert page.locator("img").count() == 0
        filters(page, "Reference").select_option(label=option(tally(row["reference"] for row in rows), "gold"))
        filters(page, "Proposed").select_option(label=option(tally(row["proposed"] for row in rows), "missing"))
        assert status(page) == f"Lines 1{DASH}1 of 1 matching (of {len(rows)})."
        assert page.locator("#browser .side-name").all_inner_texts() == ["gold", "the proposal", "o1, o2, clean", "o3"]
        texts = page.locator("#browser .item-text")
        shown = '<script>alert("text")</script>'
        assert [marks(texts.nth(side)) for side in range(4)] == [
            [("shared", shown)],
            [("shared", shown), ("second", "مرحبا")],
            [("second", "مرحبا")],
            [("shared", shown)],
        ]
        assert_offline(seen, folder)
    finally:
        context.close()


# --- what the data holds: withheld text, the cap ------------------------------------------------------


def test_show_text_false_puts_no_text_in_the_data(demo) -> None:
    lines = lines_of(demo.folder / "disagreements.jsonl")
    listing = disagreements.browser_listing("disagreements", lines, len(lines), "title", False, ())
    assert listing.texts == () and all(entry[0] is None and entry[1] is None for entry in listing.items)
    script = browser_module.browser_script(listing)
    assert not any(line["text"] in script for line in lines)
    shown = disagreements.browser_listing("disagreements", lines, len(lines), "title", True, ())
    assert len(shown.texts) == len({line["id"] for line in lines})


def test_a_listing_longer_than_the_cap_says_how_many_lines_the_page_holds(
    demo,
    browser,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "version"
    shutil.copytree(demo.folder, folder)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(browser_module, "BROWSER_LINES", 60)
    for name, text in render.analysis_pages(ResultsView.from_json(results), SiteContext(folder, results, TIMESTAMP)):
        (folder / name).write_text(text, encoding="utf-8")
    lines = lines_of(folder / "annotator-disagreements.jsonl")
    context, page, seen = visit(browser, folder / "annotator-disagreements.html")
    try:
        note = page.locator("#browser .table-note").inner_text()
        assert (
            f"holds the 60 lines with most impact of the {formatting.count(len(lines))} the listing has; every "
            "line is in annotator-disagreements.csv and annotator-disagreements.jsonl"
        ) in note
        page.get_by_role("button", name="Last").click()
        assert status(page) == f"Lines 51{DASH}60 of 60."
        assert_offline(seen, folder)
    finally:
        context.close()


# --- the appendix's tables --------------------------------------------------------------------------


def test_the_appendixs_tables_sort_by_a_header_numbers_as_numbers(hostile, browser) -> None:  # noqa: F811
    context, page, seen = visit(browser, hostile.folder / "index.html")
    try:
        assert page.locator("figure.table table.sortable").count() == page.locator("figure.table table").count() > 10
        # the swap table: a number column over rows grouped by a repeated label
        grouped = page.evaluate("""() => Array.from(document.querySelectorAll('figure.table table.sortable'))
            .findIndex(table => table.querySelector('td.repeat') && table.querySelector('thead th.num'))""")
        table = page.locator("figure.table table.sortable").nth(grouped)  # pinned: sorting removes the repeats
        rows = table.locator("tbody tr").count()
        header = table.locator("thead tr:last-child th.num").first
        at = header.evaluate("th => th.cellIndex")

        def values() -> list[str]:
            return table.evaluate(
                "(table, at) => Array.from(table.tBodies).flatMap(body => Array.from(body.rows))"
                ".map(row => row.cells[at].textContent.split('\\n')[0])",
                at,
            )

        def number(text: str) -> float:
            return float(text.replace("\u2212", "-").replace(",", "").replace("+", "").lstrip("<").rstrip("%"))

        header.locator("button.sort").focus()
        page.keyboard.press("Enter")
        assert header.get_attribute("aria-sort") == "ascending"
        printed = [value for value in values() if value.strip() not in ("", formatting.UNDEFINED)]
        assert [number(value) for value in printed] == sorted(number(value) for value in printed)
        page.keyboard.press("Enter")
        assert header.get_attribute("aria-sort") == "descending"
        printed = [value for value in values() if value.strip() not in ("", formatting.UNDEFINED)]
        assert [number(value) for value in printed] == sorted((number(value) for value in printed), reverse=True)
        # same rows, one body, every repeated label printed again
        assert table.locator("tbody tr").count() == rows and table.locator("tbody").count() == 1
        assert table.locator("td.repeat").count() == 0
        assert_offline(seen, hostile.folder)
    finally:
        context.close()


# --- the CoNLL-2003 example -------------------------------------------------------------------------


@pytest.mark.skipif(not CONLL_DATA.is_dir(), reason=f"real data not found at {CONLL_DATA} (../shared/data)")
def test_the_conll_examples_730_lines_browse_offline(tmp_path: Path, browser) -> None:  # noqa: F811
    from refsens_report.audit import run_audit
    from refsens_report.config import load_config

    config = load_config(CONLL_CONFIG)
    results = run_audit(replace(config, audit=replace(config.audit, resamples=20)))
    folder = render_listings(tmp_path / "version", results)
    lines = lines_of(folder / "disagreements.jsonl")
    assert len(lines) == 730 and len({line["id"] for line in lines}) == 525
    context, page, seen = visit(browser, folder / "disagreements.html")
    try:
        assert status(page) == f"Lines 1{DASH}25 of 730."
        pairs = page.get_by_label("Pair").locator("option").all_inner_texts()
        assert len(pairs) == 4  # all, and original against each of the three other golds
        page.get_by_label("Lines per page").select_option("200")
        seen_ids = []
        for number in range(4):
            seen_ids += column(page, "Item")
            if number < 3:
                page.get_by_role("button", name="Next").click()
        assert seen_ids == [line["id"] for line in lines]
        assert page.get_by_role("button", name="Next").is_disabled()
        # filter: original against conllpp, at least 10 of impact; then search a word of the texts
        page.get_by_role("button", name="First").click()
        pairs = tally(f"{line['first']} vs {line['second']}" for line in lines)
        filters(page, "Pair").select_option(label=option(pairs, "original vs conllpp"))
        page.get_by_label("Impact at least").fill("10")
        chosen = [line for line in lines if line["second"] == "conllpp" and line["impact"] >= 10]
        assert 0 < len(chosen) < pairs["original vs conllpp"]
        assert status(page) == f"Lines 1{DASH}{len(chosen)} of {len(chosen)} matching (of 730)."
        assert column(page, "Item") == [line["id"] for line in chosen]
        filters(page, "Pair").select_option(index=0)
        page.get_by_label("Impact at least").fill("")
        page.get_by_label("Search ids, labels and text").fill("JAPAN")
        found = [line for line in lines if "japan" in line["text"].lower()]
        assert 0 < len(found) and status(page).startswith(f"Lines 1{DASH}{len(found)} of {len(found)} matching")
        # each line's item: both golds and the 14 systems, those with the same spans together, all marked
        first = found[0]
        groups = {repr(spans) for spans in first["spans_outputs"].values()}
        assert len(first["spans_outputs"]) == 14
        detail = page.locator("tr.detail").first
        assert detail.locator(".side").count() == 2 + len(groups)
        assert detail.locator(".side.output mark").count() >= 1
        assert_offline(seen, folder)
    finally:
        context.close()


# --- the gold-error candidates ------------------------------------------------------------------------


def filters(page, label: str):
    """The browser's control whose label starts with ``label`` ("Reference", not "For the reference")."""
    return page.get_by_role("search").get_by_label(re.compile("^" + re.escape(label)))


def tally(values) -> dict[str, int]:
    counted: dict[str, int] = {}
    for value in values:
        counted[value] = counted.get(value, 0) + 1
    return counted


def test_without_javascript_the_candidates_page_lists_each_references_top(demo, browser) -> None:  # noqa: F811
    rows = lines_of(demo.folder / "gold-error-candidates.jsonl")
    per_reference = tally(row["reference"] for row in rows)
    context, page, seen = visit(browser, demo.folder / "gold-error-candidates.html", javascript=False)
    try:
        assert page.locator("#browser").is_hidden() and page.locator("main.static-listing").is_visible()
        assert page.locator("li.item").count() == sum(min(200, count) for count in per_reference.values())
        assert page.locator("main h2").all_inner_texts() == [f"Candidate errors in {name}" for name in per_reference]
        assert_offline(seen, demo.folder)
    finally:
        context.close()


def test_the_candidates_browser_filters_searches_sorts_and_pages_every_candidate(demo, browser) -> None:  # noqa: F811
    rows = lines_of(demo.folder / "gold-error-candidates.jsonl")
    total = len(rows)
    everything = formatting.count(total)
    assert total > 100  # several pages of 25
    context, page, seen = visit(browser, demo.folder / "gold-error-candidates.html")
    try:
        assert page.locator("main.static-listing").is_hidden() and page.locator("#browser").is_visible()
        assert status(page) == f"Lines 1{DASH}25 of {everything}."
        seen_ids = []
        for number in range((total + 24) // 25):  # page through every candidate
            seen_ids += column(page, "Item")
            if number < (total - 1) // 25:
                page.get_by_role("button", name="Next").click()
        assert seen_ids == [row["id"] for row in rows]
        assert page.get_by_role("button", name="Next").is_disabled()
        assert status(page).endswith(f"{DASH}{everything} of {everything}.")
        page.get_by_role("button", name="First").click()
        page.get_by_label("Lines per page").select_option("200")

        # filters: a reference, a kind, a type, a source for the proposal
        references = tally(row["reference"] for row in rows)
        chosen = list(references)[1]
        filters(page, "Reference").select_option(label=option(references, chosen))
        mine = [row for row in rows if row["reference"] == chosen]
        assert status(page) == f"Lines 1{DASH}{len(mine)} of {len(mine)} matching (of {everything})."
        kinds = tally(row["proposed"] for row in rows)
        filters(page, "Proposed").select_option(label=option(kinds, "missing"))
        mine = [row for row in mine if row["proposed"] == "missing"]
        assert column(page, "Item") == [row["id"] for row in mine][:200]
        filters(page, "Reference").select_option(index=0)
        filters(page, "Proposed").select_option(index=0)
        types = tally(
            kind
            for row in rows
            for kind in sorted({span[2] for span in (row["reference_span"], row["proposed_span"]) if span})
        )
        kind = sorted(types)[0]
        page.get_by_label("Types").select_option(label=option(types, kind))
        assert f" of {formatting.count(types[kind])} matching" in status(page)
        page.get_by_label("Types").select_option(index=0)
        support = tally(source for row in rows for source in row["support"])
        source = sorted(support)[0]
        page.get_by_label("For the proposal").select_option(label=option(support, source))
        assert column(page, "Item") == [row["id"] for row in rows if source in row["support"]][:200]
        page.get_by_label("For the proposal").select_option(index=0)
        page.get_by_label("Score at least").fill("5")
        assert f" of {formatting.count(sum(row['score'] >= 5 for row in rows))} matching" in status(page)
        page.get_by_label("Score at least").fill("")

        # search: a word of a text, in any case
        word = next(
            word for row in rows for word in row["text"].split() if word.isascii() and word.isalpha() and len(word) >= 6
        )
        page.get_by_label("Search ids, labels and text").fill(word.upper())
        found = [row for row in rows if word.lower() in row["text"].lower()]
        assert 0 < len(found) < total
        assert column(page, "Item") == [row["id"] for row in found][:200]
        page.get_by_label("Search ids, labels and text").fill("")

        # sort: by score up, by rank down, by item
        page.get_by_role("button", name="Score", exact=True).click()
        assert sorted_by(page, "Score") == "ascending"
        scores = [float(value) for value in column(page, "Score")]
        assert scores == sorted(scores) and scores[0] == min(row["score"] for row in rows)
        rank = page.get_by_role("button", name="Rank", exact=True)
        rank.click()
        rank.click()
        assert sorted_by(page, "Rank") == "descending"
        assert int(column(page, "Rank")[0].replace(",", "")) == max(row["rank"] for row in rows)
        page.get_by_role("button", name="Item", exact=True).click()
        assert column(page, "Item") == sorted(row["id"] for row in rows)[:200]
        assert_offline(seen, demo.folder)
    finally:
        context.close()


def test_the_candidates_browser_works_from_the_keyboard_and_on_a_phone(demo, browser) -> None:  # noqa: F811
    path = demo.folder / "gold-error-candidates.html"
    context, page, seen = visit(browser, path)
    try:
        focused = []
        for _ in range(80):
            page.keyboard.press("Tab")
            focused.append(
                page.evaluate("""() => { const node = document.activeElement;
                return [node.tagName, node.id, node.textContent.trim()]; }""")
            )
            if focused[-1] == ["BUTTON", "", "Score"]:
                break
        assert focused[-1] == ["BUTTON", "", "Score"], focused
        assert sum(1 for _, element_id, _ in focused if element_id.startswith("browser-filter-")) >= 5
        assert page.evaluate("""() => Array.from(document.querySelectorAll('#browser input, #browser select'))
            .every(control => control.labels.length === 1 && control.labels[0].textContent.trim() !== '')""")
        assert page.get_by_role("search").count() == 1 and page.get_by_role("status").count() == 1
        page.keyboard.press("Enter")
        assert sorted_by(page, "Score") == "ascending"
        for _ in range(400):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent") == "Next":
                break
        page.keyboard.press("Enter")
        assert status(page).startswith(f"Lines 26{DASH}50 of ")
        assert_offline(seen, demo.folder)
    finally:
        context.close()
    context, page, seen = visit(browser, path, width=390)
    try:
        assert page.locator("#browser").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        rights = page.evaluate("""() => Array.from(document.querySelectorAll(
            '#browser label, #browser .pager, .item-detail')).map(node => node.getBoundingClientRect().right)""")
        assert rights and max(rights) <= 390
        # a long list of sources is given room (18rem) to wrap a few names a line, not one a line: its row would
        # otherwise stand a screen tall on a phone, blank where the table has scrolled out of view
        long = page.evaluate("""() => Array.from(document.querySelectorAll('#browser tr.line td.long')).map(
            cell => [cell.querySelectorAll('bdi').length, cell.getBoundingClientRect().width,
                     18 * parseFloat(getComputedStyle(document.documentElement).fontSize)])""")
        assert long and all(labels > 4 and width >= room > 200 for labels, width, room in long), long
        keep_screenshot(page, "candidates-phone.png")
        assert_offline(seen, demo.folder)
    finally:
        context.close()
