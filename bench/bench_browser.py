"""The listing browser at scale: a synthetic listing of 120,000 lines (the page holds browser.BROWSER_LINES,
100,000), opened in Chromium from file://; milliseconds per filter, search, sort and page turn.

    .venv/bin/python bench/bench_browser.py                 # needs /usr/bin/chromium and playwright
    .venv/bin/python bench/bench_browser.py --lines 20000 --runs 9
    .venv/bin/python bench/bench_browser.py --without-output-spans   # the data's size before the outputs' spans

Each action is timed in the page, from the control's event to the page laid out again (the handler runs
synchronously; reading offsetHeight forces the layout), median and max of --runs.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from refsens_report import browser, render  # noqa: E402
from refsens_report.analyses import disagreements  # noqa: E402
from refsens_report.audit import gc_paused  # noqa: E402
from refsens_report.browser import SiteContext  # noqa: E402
from refsens_report.view import ResultsView  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
WORDS = (
    "Maria Peter Ström Paris Berlin called the office about order invoice street phone number account "
    "meeting tomorrow please reply confidential Hamnvägen Lisbon Anna Kowalski address email"
).split()
TYPES = ("NAME", "PHONE", "EMAIL", "ADDRESS", "ID_NUMBER", "DATE_OF_BIRTH", "USERNAME", "IBAN")
LANGUAGES = ("ar", "de", "en", "hi", "sv", "zh")
PAIRS = (("delivered", "reviewer"), ("delivered", "expert"), ("delivered", "vendor"))
OUTPUTS = ("annotator_a", "annotator_b", "model_a", "model_b")


def synthetic_lines(count: int, seed: int = 0, output_spans: bool = True) -> list[dict]:
    """Return listing lines shaped like disagreements.jsonl's, sorted by impact as the analysis sorts them."""
    chance = random.Random(seed)
    lines = []
    for number in range(count):
        text = " ".join(chance.choice(WORDS) for _ in range(chance.randint(12, 30)))
        spans = []
        at = 0
        while at < len(text) - 10 and len(spans) < 4:
            start = text.find(" ", at + chance.randint(5, 40)) + 1
            end = text.find(" ", start + 3)
            if start <= 0 or end < 0:
                break
            spans.append([start, end, chance.choice(TYPES)])
            at = end
        split = chance.randint(0, len(spans))
        first, second = spans[:split] or spans[:1], spans[split:] or spans[-1:]
        only_first = [span for span in first if span not in second]
        only_second = [span for span in second if span not in first]
        changes = {
            output: {"tp": (delta := chance.randint(-2, 2)), "fp": -delta, "fn": chance.randint(-1, 1)}
            for output in OUTPUTS
        }
        pair = PAIRS[number % len(PAIRS)]
        # each output finds each span of either golds' with chance 0.7 (so outputs often agree with each other)
        found = {output: sorted(span for span in spans if chance.random() < 0.7) for output in OUTPUTS}
        lines.append(
            {
                "id": f"{LANGUAGES[number % 6]}-{number:07d}",
                "language": LANGUAGES[number % 6],
                "first": pair[0],
                "second": pair[1],
                "subset": "audited",
                "impact": sum(2 * abs(c["tp"]) + abs(c["fn"]) for c in changes.values()),
                "text": text,
                "spans_first": sorted(first),
                "spans_second": sorted(second),
                "only_first": only_first,
                "only_second": only_second,
                "outputs": changes,
                "spans_outputs": found,
            }
        )
    lines.sort(key=lambda line: -line["impact"])
    for line in lines[browser.BROWSER_LINES :] if output_spans else lines:  # as the analysis writes them
        del line["spans_outputs"]
    return lines


ACTIONS = {
    "search 'maria' (typed at once)": "() => { const input = document.getElementById('browser-search');"
    " input.value = 'maria'; input.dispatchEvent(new Event('input')); }",
    "search 'ströms' (no line)": "() => { const input = document.getElementById('browser-search');"
    " input.value = 'ströms'; input.dispatchEvent(new Event('input')); }",
    "clear the search": "() => { const input = document.getElementById('browser-search');"
    " input.value = ''; input.dispatchEvent(new Event('input')); }",
    "filter: language hi": "() => { const select = document.getElementById('browser-filter-2');"
    " select.selectedIndex = 4; select.dispatchEvent(new Event('change')); }",
    "filter: impact at least 12": "() => { const input = document.getElementById('browser-filter-4');"
    " input.value = '12'; input.dispatchEvent(new Event('input')); }",
    "clear the filters": "() => { const select = document.getElementById('browser-filter-2'); select.selectedIndex = 0;"
    " select.dispatchEvent(new Event('change')); const input ="
    " document.getElementById('browser-filter-4'); input.value = '';"
    " input.dispatchEvent(new Event('input')); }",
    "sort by Item (each run: up, then down)": "() => Array.from(document.querySelectorAll('table.listing th button'))"
    ".find(b => b.textContent === 'Item').click()",
    "next page": "() => Array.from(document.querySelectorAll('.pager button'))"
    ".find(b => b.textContent === 'Next').click()",
}
TIMED = """action => { const started = performance.now(); (eval('(' + action + ')'))();
    document.body.offsetHeight; return performance.now() - started; }"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=120_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--without-output-spans",
        action="store_true",
        help="lines without the outputs' spans (the listing files before they carried them)",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        lines = synthetic_lines(args.lines, output_spans=not args.without_output_spans)
        (folder / "disagreements.jsonl").write_bytes(
            b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
        )
        comparisons = [
            {
                "kind": "references",
                "first": first,
                "second": second,
                "subset": "audited",
                "file": "disagreements",
                "differing": {"pooled": sum((line["first"], line["second"]) == (first, second) for line in lines)},
            }
            for first, second in PAIRS
        ]
        results = {
            "dataset": {"name": "Synthetic listing", "version": "bench"},
            "rows": [],
            "disagreements": {"show_text": True, "text": True, "comparisons": comparisons},
        }
        print(f"{args.lines:,} synthetic lines written in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        with gc_paused():  # as site.render_version writes them
            site = SiteContext(folder, results, "2026-01-01T00:00:00+00:00")
            for page in disagreements.pages(ResultsView.from_json(results), site):
                (folder / page.name).write_text(
                    render.render_page(page.template, page.context) if page.template else page.text, encoding="utf-8"
                )
        render.copy_stylesheets(folder)
        render.copy_scripts(folder)
        size = (folder / "disagreements-data.js").stat().st_size
        print(
            f"the static page and the browser's data in {time.perf_counter() - started:.1f} s: "
            f"disagreements-data.js {size / 1e6:.1f} MB"
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requests = []
            page.on("request", lambda request: requests.append(request.url))
            started = time.perf_counter()
            page.goto((folder / "disagreements.html").as_uri(), wait_until="load")
            page.wait_for_selector("#browser:not([hidden])")
            print(
                f"page loaded and the browser drawn: {1000 * (time.perf_counter() - started):.0f} ms "
                f"({page.locator('#browser-count').inner_text()})"
            )
            assert all(url.startswith("file://") for url in requests), requests
            print(f"{'action':<42}{'median':>9}{'max':>9}   result")
            for label, action in ACTIONS.items():
                times = [page.evaluate(TIMED, action) for _ in range(args.runs)]
                print(
                    f"{label:<42}{statistics.median(times):>7.1f}ms{max(times):>7.1f}ms   "
                    f"{page.locator('#browser-count').inner_text()}"
                )
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
