"""The disagreement listings: exact lines and their order on a hand-made record, the pages built from them, the
links to them, [report] show_text = false leaving no text in any file, and hostile text inert on the page.
(Rebuilds give the same bytes, listings and pages included: test_site.test_rebuilds_are_byte_identical.)

The hand-made record (every labelling on every item; references gold (primary) and clean, outputs o1 and o2,
annotators a and b):

    en-1 "Peter met Mary in Paris"  gold PER 0-5, LOC 18-23   clean PER 0-5, ORG 18-23
                                     o1 = gold                 o2 = clean
    en-2 "Anna said hi"             gold PER 0-4              clean (none)          o1 PER 0-4   o2 (none)
    en-3 "Same here"                gold = clean = PER 0-4                          o1 = o2 = gold
    de-1 "Hallo Welt"               gold PER 0-5              clean PER 0-5, LOC 6-10
                                     o1 PER 0-5, LOC 6-10      o2 PER 0-5
    annotators a and b agree everywhere but on en-2, where b adds LOC 5-9.

Scored against clean instead of gold: on en-1 o1 loses a TP and gains an FP and an FN, o2 the reverse
(impact 6); on en-2 o1 turns its TP into an FP and o2 loses its FN (impact 3); on de-1 o1 turns its FP into a
TP and o2 gains an FN (impact 3). de-1 and en-2 tie on impact and on differing spans (one each): language
order puts de-1 first.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import build
from helpers import audit_items, item, write_project
from test_site import parse

from refsens_report import browser, render
from refsens_report.analyses import disagreements
from refsens_report.analyses.base import AuditContext
from refsens_report.browser import SiteContext
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.counts import ItemCounts
from refsens_report.load import load_record
from refsens_report.record import Record
from refsens_report.results import files_text
from refsens_report.subsets import DuplicateGroups, build_subsets
from refsens_report.table import SpanTable
from refsens_report.tables import spreadsheet_safe
from refsens_report.view import ResultsView

ROLES = {"annotators": ("a", "b"), "outputs": ("o1", "o2"), "references": ("gold", "clean")}
TEXTS = {"en-1": "Peter met Mary in Paris", "en-2": "Anna said hi", "en-3": "Same here", "de-1": "Hallo Welt"}


def record() -> list[dict]:
    per, loc, org = [0, 5, "PER"], [18, 23, "LOC"], [18, 23, "ORG"]
    return [
        item(
            "en-1",
            "en",
            text=TEXTS["en-1"],
            gold=[per, loc],
            clean=[per, org],
            o1=[per, loc],
            o2=[org, per],
            a=[per],
            b=[per],
        ),
        item(
            "en-2",
            "en",
            text=TEXTS["en-2"],
            gold=[[0, 4, "PER"]],
            clean=[],
            o1=[[0, 4, "PER"]],
            o2=[],
            a=[[0, 4, "PER"]],
            b=[[0, 4, "PER"], [5, 9, "LOC"]],
        ),
        item(
            "en-3",
            "en",
            text=TEXTS["en-3"],
            gold=[[0, 4, "PER"]],
            clean=[[0, 4, "PER"]],
            o1=[[0, 4, "PER"]],
            o2=[[0, 4, "PER"]],
            a=[],
            b=[],
        ),
        item(
            "de-1",
            "de",
            text=TEXTS["de-1"],
            gold=[per],
            clean=[per, [6, 10, "LOC"]],
            o1=[per, [6, 10, "LOC"]],
            o2=[per],
            a=[per],
            b=[per],
        ),
    ]


EXPECTED_REFERENCES = [
    {
        "id": "en-1",
        "language": "en",
        "first": "gold",
        "second": "clean",
        "subset": "audited",
        "impact": 6,
        "text": TEXTS["en-1"],
        "spans_first": [[0, 5, "PER"], [18, 23, "LOC"]],
        "spans_second": [[0, 5, "PER"], [18, 23, "ORG"]],
        "only_first": [[18, 23, "LOC"]],
        "only_second": [[18, 23, "ORG"]],
        "outputs": {"o1": {"tp": -1, "fp": 1, "fn": 1}, "o2": {"tp": 1, "fp": -1, "fn": -1}},
        "spans_outputs": {"o1": [[0, 5, "PER"], [18, 23, "LOC"]], "o2": [[0, 5, "PER"], [18, 23, "ORG"]]},
    },
    {
        "id": "de-1",
        "language": "de",
        "first": "gold",
        "second": "clean",
        "subset": "audited",
        "impact": 3,
        "text": TEXTS["de-1"],
        "spans_first": [[0, 5, "PER"]],
        "spans_second": [[0, 5, "PER"], [6, 10, "LOC"]],
        "only_first": [],
        "only_second": [[6, 10, "LOC"]],
        "outputs": {"o1": {"tp": 1, "fp": -1, "fn": 0}, "o2": {"tp": 0, "fp": 0, "fn": 1}},
        "spans_outputs": {"o1": [[0, 5, "PER"], [6, 10, "LOC"]], "o2": [[0, 5, "PER"]]},
    },
    {
        "id": "en-2",
        "language": "en",
        "first": "gold",
        "second": "clean",
        "subset": "audited",
        "impact": 3,
        "text": TEXTS["en-2"],
        "spans_first": [[0, 4, "PER"]],
        "spans_second": [],
        "only_first": [[0, 4, "PER"]],
        "only_second": [],
        "outputs": {"o1": {"tp": -1, "fp": 1, "fn": 0}, "o2": {"tp": 0, "fp": 0, "fn": -1}},
        "spans_outputs": {"o1": [[0, 4, "PER"]], "o2": []},
    },
]
EXPECTED_ANNOTATORS = [
    {
        "id": "en-2",
        "language": "en",
        "first": "a",
        "second": "b",
        "subset": "corpus",
        "impact": 2,
        "text": TEXTS["en-2"],
        "spans_first": [[0, 4, "PER"]],
        "spans_second": [[0, 4, "PER"], [5, 9, "LOC"]],
        "only_first": [],
        "only_second": [[5, 9, "LOC"]],
        "outputs": {"o1": {"tp": 0, "fp": 0, "fn": 1}, "o2": {"tp": 0, "fp": 0, "fn": 1}},
        "spans_outputs": {"o1": [[0, 4, "PER"]], "o2": []},
    },
]


def test_listings_of_a_hand_made_record_line_by_line(tmp_path: Path) -> None:
    results = audit_items(tmp_path, record(), audit={"resamples": 20}, **ROLES)
    jsonl = results.files["disagreements.jsonl"]
    assert [json.loads(line) for line in jsonl.splitlines()] == EXPECTED_REFERENCES
    # compact JSON, keys in a fixed order, one item per line
    assert jsonl.splitlines()[2] == (
        '{"id":"en-2","language":"en","first":"gold","second":"clean","subset":"audited","impact":3,'
        '"text":"Anna said hi","spans_first":[[0,4,"PER"]],"spans_second":[],"only_first":[[0,4,"PER"]],'
        '"only_second":[],"outputs":{"o1":{"tp":-1,"fp":1,"fn":0},"o2":{"tp":0,"fp":0,"fn":-1}},'
        '"spans_outputs":{"o1":[[0,4,"PER"]],"o2":[]}}'
    )
    assert [
        json.loads(line) for line in results.files["annotator-disagreements.jsonl"].splitlines()
    ] == EXPECTED_ANNOTATORS
    table = list(csv.reader(io.StringIO(results.files["disagreements.csv"])))
    assert table[0] == [
        "id",
        "language",
        "first",
        "second",
        "subset",
        "impact",
        "text",
        "spans_first",
        "spans_second",
        "only_first",
        "only_second",
        "o1 ΔTP",
        "o1 ΔFP",
        "o1 ΔFN",
        "o2 ΔTP",
        "o2 ΔFP",
        "o2 ΔFN",
    ]
    assert table[1] == [
        "en-1",
        "en",
        "gold",
        "clean",
        "audited",
        "6",
        TEXTS["en-1"],
        '[[0,5,"PER"],[18,23,"LOC"]]',
        '[[0,5,"PER"],[18,23,"ORG"]]',
        '[[18,23,"LOC"]]',
        '[[18,23,"ORG"]]',
        "-1",
        "1",
        "1",
        "1",
        "-1",
        "-1",
    ]
    assert [line[0] for line in table[1:]] == ["en-1", "de-1", "en-2"]
    # results.json counts them, per language and pooled
    [references, annotators] = results.summaries["disagreements"]["comparisons"]
    assert (references["first"], references["second"], references["file"]) == ("gold", "clean", "disagreements")
    assert references["items"] == {"de": 1, "en": 3, "pooled": 4}
    assert references["differing"] == {"de": 1, "en": 2, "pooled": 3}
    assert (references["only_first"]["pooled"], references["only_second"]["pooled"]) == (2, 2)
    assert annotators["differing"] == {"de": 0, "en": 1, "pooled": 1} and annotators["subset"] == "corpus"


def test_two_alternatives_share_one_file_sorted_by_impact(tmp_path: Path) -> None:
    """With several alternative references every (item, alternative) differing is a line, all sorted together."""
    lines = record()
    for entry in lines:
        entry["labellings"]["third"] = entry["labellings"]["o2"]  # o2 scores perfectly against it
    results = audit_items(
        tmp_path,
        lines,
        audit={"resamples": 20},
        annotators=("a", "b"),
        outputs=("o1",),
        references=("gold", "clean", "third"),
    )
    found = [json.loads(line) for line in results.files["disagreements.jsonl"].splitlines()]
    assert [(line["id"], line["second"], line["impact"]) for line in found] == [
        ("en-1", "clean", 3),
        ("en-1", "third", 3),
        ("de-1", "clean", 2),
        ("en-2", "clean", 2),
        ("en-2", "third", 2),
    ]
    assert [c["second"] for c in results.summaries["disagreements"]["comparisons"] if c["kind"] == "references"] == [
        "clean",
        "third",
    ]


def test_highlighting_splits_overlapping_spans_and_cuts_long_texts() -> None:
    pieces = disagreements.highlight("abcdefghij", [[1, 5, "X"]], [[3, 8, "Y"]])
    assert pieces == [[("a", ""), ("bc", "first"), ("de", "both"), ("fgh", "second"), ("ij", "")]]
    long = "x" * 1000
    windows = disagreements.highlight(long, [[500, 505, "X"]], [[520, 530, "Y"], [900, 901, "Z"]])
    assert [sum(len(piece) for piece, _ in window) for window in windows] == [530 + 60 - 440, 961 - 840]
    assert windows[0][1] == ("x" * 5, "first") and windows[1][1] == ("x", "second")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("listed")
    return build(write_project(folder / "project", record(), audit={"resamples": 20}, **ROLES), folder / "site")


def test_the_build_writes_the_pages_lists_them_and_links_them(built) -> None:
    folder = built.folder
    for stem in ("disagreements", "annotator-disagreements"):
        for suffix in (".html", ".jsonl", ".csv"):
            assert (folder / f"{stem}{suffix}").is_file()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert {"disagreements.html", "disagreements.jsonl", "disagreements.csv", "annotator-disagreements.html"} <= set(
        manifest["files"]
    )
    appendix = parse(folder / "index.html")
    downloads = [
        a.attrs["href"]
        for table in appendix.iter("table")
        if "downloads" in table.attrs.get("class", "")
        for a in table.iter("a")
    ]
    assert {"disagreements.html", "disagreements.jsonl", "disagreements.csv", "annotator-disagreements.jsonl"} <= set(
        downloads
    )
    sections = {node.attrs.get("id"): node for node in appendix.iter("section")}
    swap_links = [
        a.attrs["href"] for a in sections["section-swap"].iter("a") if not a.attrs["href"].startswith("tables/")
    ]
    assert swap_links == ["disagreements.html"]
    assert "annotator-disagreements.html" in [a.attrs["href"] for a in sections["section-agreement"].iter("a")]
    page = parse(folder / "disagreements.html")
    items = [node for node in page.iter("li") if node.attrs.get("class") == "item"]
    assert [next(span for span in item.iter("span") if span.attrs.get("class") == "id").text() for item in items] == [
        "en-1",
        "de-1",
        "en-2",
    ]
    marks = [(mark.attrs["class"], mark.text()) for mark in items[0].iter("mark")]
    assert marks == [("both", "Paris")]  # LOC only in gold and ORG only in clean, on the same characters
    assert [(mark.attrs["class"], mark.text()) for mark in items[2].iter("mark")] == [("first", "Anna")]


def test_show_text_false_leaves_no_text_in_any_file(tmp_path: Path) -> None:
    """No item's text, nor any span's text, in any file of the version or the site index; the page says so."""
    from pypdf import PdfReader

    config = write_project(
        tmp_path / "project", record(), audit={"resamples": 20}, **ROLES, extra="\n[report]\nshow_text = false\n"
    )
    site = build(config, tmp_path / "site")
    files = [path for path in site.out.rglob("*") if path.is_file()]
    assert {"disagreements.jsonl", "disagreements.csv", "disagreements.html"} <= {path.name for path in files}
    secrets = [*TEXTS.values(), "Paris", "Anna", "Hallo"]
    for path in files:
        if path.suffix == ".pdf":
            content = "".join(page.extract_text() for page in PdfReader(path).pages)
        else:
            content = path.read_bytes().decode("utf-8", errors="replace")
        for secret in secrets:
            assert secret not in content, (path.name, secret)
    lines = [
        json.loads(line) for line in (site.folder / "disagreements.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [line["id"] for line in lines] == ["en-1", "de-1", "en-2"] and all("text" not in line for line in lines)
    assert lines[0]["only_first"] == [[18, 23, "LOC"]]  # offsets and types stay
    page = parse(site.folder / "disagreements.html")
    assert "show_text = false" in " ".join(page.text().split())
    assert not list(page.iter("mark"))  # no text, nothing highlighted
    results = json.loads((site.folder / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["report"]["show_text"] is False and results["disagreements"]["show_text"] is False


HOSTILE_TEXT = 'Hi <script>alert("text")</script> <img src=x onerror=alert(1)> \u202eevil\u202c مرحبا "Paris"'


def test_hostile_text_is_escaped_and_isolated_on_the_page(tmp_path: Path) -> None:
    start = HOSTILE_TEXT.index("<script>")
    end = HOSTILE_TEXT.index("</script>") + len("</script>")
    arabic = HOSTILE_TEXT.index("مرحبا")
    lines = [
        item(
            "x-1",
            "en",
            text=HOSTILE_TEXT,
            gold=[[start, end, "CODE"]],
            clean=[[arabic, arabic + 5, "CODE"]],
            o1=[],
            o2=[],
            a=[],
            b=[],
        )
    ]
    results = audit_items(tmp_path, lines, audit={"resamples": 10}, **ROLES)
    folder = tmp_path / "version"
    folder.mkdir()
    (folder / "disagreements.jsonl").write_text(results.files["disagreements.jsonl"], encoding="utf-8")
    document = {**results.to_json_dict(), "rows": results.rows}
    [page, _] = disagreements.pages(
        ResultsView.from_json(document), SiteContext(folder, document, "2026-01-01T00:00:00+00:00")
    )
    name, html = page.name, render.render_page(page.template, page.context)
    (folder / name).write_text(html, encoding="utf-8")
    page = parse(folder / name)
    assert not list(page.iter("img"))
    assert [script.attrs["src"] for script in page.iter("script")] == ["disagreements-data.js", "site.js"]
    assert not any(script.text().strip() for script in page.iter("script"))
    assert all(not attribute.startswith("on") for node in page.iter() for attribute in node.attrs)
    assert "&lt;script&gt;alert(&#34;text&#34;)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    [text] = [node for node in page.iter("p") if node.attrs.get("class") == "item-text"]
    assert text.attrs.get("dir") == "auto"
    [isolated] = list(text.iter("bdi"))  # the whole text, RLO included, inside one isolate
    assert isolated.text() == HOSTILE_TEXT
    assert [(mark.attrs["class"], mark.text()) for mark in isolated.iter("mark")] == [
        ("first", '<script>alert("text")</script>'),
        ("second", "مرحبا"),
    ]
    # every listed span's type and text sit in isolates too
    spans = [node for node in page.iter("dl") if node.attrs.get("class") == "spans"][0]
    assert {bdi.text() for bdi in spans.iter("bdi")} >= {"CODE", '<script>alert("text")</script>', "مرحبا"}


def test_line_separators_in_the_text_are_read_back_as_text(tmp_path: Path, capsys) -> None:
    """U+2028, U+2029 and U+0085 are written raw in the JSON Lines (JSON allows them): the page reads the file back
    on newlines only, where str.splitlines() would cut the line (and the build crashed) at each of them."""
    text = "Peter\u2028met\x85Mary\u2029in Paris"
    assert len(text) == len(TEXTS["en-1"])
    lines = record()
    lines[0]["text"] = text
    config = write_project(tmp_path / "project", lines, audit={"resamples": 20}, **ROLES)
    assert main(["build", str(config), "--out", str(tmp_path / "site"), "--no-pdf", "--draft", "-q"]) == 0, (
        capsys.readouterr().err
    )
    folder = tmp_path / "site" / "1.0.0"
    raw = (folder / "disagreements.jsonl").read_text(encoding="utf-8")
    assert "\u2028" in raw and "\x85" in raw
    listed = [json.loads(line) for line in raw.split("\n") if line]
    assert [line["id"] for line in listed] == ["en-1", "de-1", "en-2"] and listed[0]["text"] == text
    page = parse(folder / "disagreements.html")
    texts = [node for node in page.iter("p") if node.attrs.get("class") == "item-text"]
    assert len(texts) == 3 and "".join(bdi.text() for bdi in texts[0].iter("bdi")) == text


# --- the listings against a line-by-line reference -------------------------------------------------
#
# The listings are built from arrays (the counts and the span table), never item by item. The reference below
# is the straightforward per-item construction they replaced: one dict per item read back as an Item, sorted
# with a Python key, written with orjson and the csv module. On random records (tricky ids, languages, types
# and texts; absent labellings, repeated and unsorted spans; outputs that are also references or annotators)
# the files and the summary must be the same, byte for byte, for a record of items and for the same record as
# columns only.


def reference_listings(context) -> tuple[dict[str, str], dict]:
    """Return (files, summary) built line by line from the items, as the analysis once did."""
    counts = context.counts

    def lines_of(comparison) -> list[dict]:
        first, second = comparison.first, comparison.second
        mask = context.subsets.audited if comparison.subset == "audited" else context.subsets.corpus
        differing = mask & counts.has(first) & counts.has(second) & ~counts.equal(first, second)
        changes = {}
        for output in disagreements.scored_outputs(context, comparison):
            # in int64: the counts are kept in their smallest unsigned type, where a difference wraps round
            tp_first, tp_second = (counts.tp("strict", output, name).astype(np.int64) for name in (first, second))
            size_first, size_second = (counts.size("strict", name).astype(np.int64) for name in (first, second))
            tp = tp_second - tp_first
            fn = (size_second - tp_second) - (size_first - tp_first)
            changes[output] = (counts.has(output), tp, -tp, fn)
        lines = []
        for index in np.flatnonzero(differing):
            entry = context.record.item(index)
            spans_first, spans_second = (
                [list(span) for span in sorted({(int(s), int(e), str(t)) for s, e, t in entry.labellings[name]})]
                for name in (first, second)
            )
            line = {
                "id": entry.id,
                "language": entry.language,
                "first": first,
                "second": second,
                "subset": comparison.subset,
                "impact": 0,
            }
            if context.config.report.show_text and entry.text is not None:
                line["text"] = entry.text
            line["spans_first"], line["spans_second"] = spans_first, spans_second
            line["only_first"] = [span for span in spans_first if span not in spans_second]
            line["only_second"] = [span for span in spans_second if span not in spans_first]
            line["outputs"] = {
                output: {"tp": int(tp[index]), "fp": int(fp[index]), "fn": int(fn[index])}
                for output, (present, tp, fp, fn) in changes.items()
                if present[index]
            }
            line["impact"] = sum(abs(value) for change in line["outputs"].values() for value in change.values())
            lines.append(line)
        return lines

    files, found, text = {}, [], False
    for kind, stem in (("references", disagreements.REFERENCES_FILE), ("annotators", disagreements.ANNOTATORS_FILE)):
        chosen = [comparison for comparison in disagreements.comparisons(context) if comparison.kind == kind]
        if not chosen:
            continue
        order = {(comparison.first, comparison.second): number for number, comparison in enumerate(chosen)}
        lines = sorted(
            (line for comparison in chosen for line in lines_of(comparison)),
            key=lambda line: (
                -line["impact"],
                -len(line["only_first"]) - len(line["only_second"]),
                order[line["first"], line["second"]],
                line["language"],
                line["id"],
            ),
        )
        outputs = list(
            dict.fromkeys(
                output for comparison in chosen for output in disagreements.scored_outputs(context, comparison)
            )
        )
        for line in lines[: browser.BROWSER_LINES]:  # the lines the browser holds carry the outputs' spans
            entry = context.record.item(context.record.table.ids.tolist().index(line["id"]))
            line["spans_outputs"] = {
                output: [
                    list(span) for span in sorted({(int(s), int(e), str(t)) for s, e, t in entry.labellings[output]})
                ]
                for output in line["outputs"]
            }
        files[f"{stem}.jsonl"] = "".join(orjson.dumps(line).decode("utf-8") + "\n" for line in lines)
        for line in lines:
            line.pop("spans_outputs", None)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            [
                "id",
                "language",
                "first",
                "second",
                "subset",
                "impact",
                "text",
                "spans_first",
                "spans_second",
                "only_first",
                "only_second",
            ]
            + [spreadsheet_safe(f"{output} {count}") for output in outputs for count in ("ΔTP", "ΔFP", "ΔFN")]
        )
        for line in lines:
            row = [
                spreadsheet_safe(line["id"]),
                spreadsheet_safe(line["language"]),
                spreadsheet_safe(line["first"]),
                spreadsheet_safe(line["second"]),
                line["subset"],
                line["impact"],
                spreadsheet_safe(line["text"]) if "text" in line else "",
                *(orjson.dumps(line[key]).decode("utf-8") for key in disagreements.SPAN_KEYS),
            ]
            for output in outputs:
                change = line["outputs"].get(output)
                row += [change[count] for count in ("tp", "fp", "fn")] if change else ["", "", ""]
            writer.writerow(row)
        files[f"{stem}.csv"] = buffer.getvalue()
        text = text or any("text" in line for line in lines)
        language = context.record.table.language_names()
        for comparison in chosen:
            mine = [line for line in lines if (line["first"], line["second"]) == (comparison.first, comparison.second)]
            mask = context.subsets.audited if comparison.subset == "audited" else context.subsets.corpus
            languages = sorted(set(language[mask]))

            def tally(value) -> dict[str, int]:
                counted = {name: sum(value(line) for line in mine if line["language"] == name) for name in languages}
                return {**counted, "pooled": sum(value(line) for line in mine)}

            found.append(
                {
                    "kind": comparison.kind,
                    "first": comparison.first,
                    "second": comparison.second,
                    "subset": comparison.subset,
                    "file": stem,
                    "items": {
                        **{name: int((mask & (language == name)).sum()) for name in languages},
                        "pooled": int(mask.sum()),
                    },
                    "differing": tally(lambda line: 1),
                    "only_first": tally(lambda line: len(line["only_first"])),
                    "only_second": tally(lambda line: len(line["only_second"])),
                }
            )
    return files, {"show_text": context.config.report.show_text, "text": text, "comparisons": found}


def audit_context(config_path: Path, record=None):
    """Return the audit's context (counts, item sets) without the bootstrap, as audit_record builds it."""
    config = load_config(config_path)
    record = record if record is not None else load_record(config)
    counts = ItemCounts(record.table, config.roles.all_names)
    groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
    defective = groups.defective(record, counts, config)
    subsets = build_subsets(counts, groups, {found for group in defective for found in group.items}, config)
    return AuditContext(config, record, counts, groups, defective, subsets)


NAMES = ("gold", "clean", "third", "o1", "o2", "a", "b")
IDS = ("x", "X", "=sum", "é", "z,1", '"q"', "+1", " lead", "ß", "a b", "10", "9", "-")
LANGUAGES = ("en", "de", "Ürdu", "=f", "a,b", "zh Hant")
TYPES = ("PER", "LOC", "per", "Z", "É", 'q"t', "a,b")
TEXT_STARTS = ("plain text", "with, a comma", 'a "quote"', "new\nline", "=formula", " lead", "cr\r here", "tab\there")
ROLES_CASES = (
    {"references": ("gold", "clean"), "outputs": ("o1", "o2"), "annotators": ("a", "b")},
    {"references": ("gold", "clean", "third"), "outputs": ("clean", "o1", "o2"), "annotators": None},
    {"references": ("gold", "third", "clean"), "outputs": ("o2", "a", "o1"), "annotators": ("a", "b")},
)


def random_record(rng: random.Random) -> list[dict]:
    """Return a small random record: every trap for the order, the dedup and the quoting the listings have."""
    found = []
    for number in range(rng.randint(1, 40)):
        text = rng.choice((None, None, *TEXT_STARTS))
        if text is not None:
            text = (text + " " * 40)[:40]
        labellings = {}
        for name in NAMES:
            if rng.random() < 0.12:
                continue  # absent on this item
            spans = []
            for _ in range(rng.choice((0, 0, 1, 1, 2, 3, 5))):
                start = rng.randint(0, 12)
                spans.append([start, start + rng.randint(1, 6), rng.choice(TYPES)])
            if spans and rng.random() < 0.3:
                spans.append(list(rng.choice(spans)))  # repeated: counts once
            if text is None and rng.random() < 0.05:
                spans.append([2**52, 2**52 + 3, "PER"])  # offsets too wide for one integer key
            rng.shuffle(spans)
            labellings[name] = spans
        if rng.random() < 0.3:  # the golds often agree
            labellings.pop("clean", None)
            if "gold" in labellings:
                labellings["clean"] = list(labellings["gold"])
        found.append(item(f"{rng.choice(IDS)}{number}", rng.choice(LANGUAGES), text=text, **labellings))
    return found


@pytest.mark.parametrize("seed", range(24))
def test_listings_equal_a_line_by_line_reference_on_random_records(tmp_path: Path, monkeypatch, seed: int) -> None:
    rng = random.Random(seed)
    roles = ROLES_CASES[seed % len(ROLES_CASES)]
    extra = "\n[report]\nshow_text = false\n" if seed % 4 == 3 else ""
    config = write_project(tmp_path, random_record(rng), extra=extra, **roles)
    if seed % 3 == 2:
        monkeypatch.setattr(browser, "BROWSER_LINES", 3)  # the outputs' spans on the first 3 lines only
    context = audit_context(config)
    expected_files, expected_summary = reference_listings(context)
    if seed % 2:
        monkeypatch.setattr(disagreements, "CHUNK_PIECES", 2)  # many chunks of outputs per line
    if seed % 3 != 1:
        monkeypatch.setattr(disagreements, "CHUNK_LINES", 1 + seed % 3)  # the text joined a line or two at a time
    assert files_text(disagreements.files(context)) == expected_files
    assert disagreements.summary(context) == expected_summary
    # the same record as columns only: no Item objects, items rebuilt from the arrays where needed
    columnar = Record(columnar=dataclasses.replace(SpanTable.from_items(context.record.items), items=None, meta={}))
    columns = audit_context(config, columnar)
    assert files_text(disagreements.files(columns)) == expected_files
    assert disagreements.summary(columns) == expected_summary
    assert reference_listings(columns) == (expected_files, expected_summary)


def test_the_summary_makes_no_span_list_and_the_files_make_each_once(tmp_path: Path, monkeypatch) -> None:
    """A pair's span lists are made when the files read them (the summary reads none, nor makes a listing), once
    per build of the files; the audit keeps no listing between the summary and the files."""
    config = write_project(tmp_path, random_record(random.Random(5)), **ROLES_CASES[0])
    expected_files, expected_summary = reference_listings(audit_context(config))
    made, listed = [], []
    span_lists, listing_of = disagreements._span_lists, disagreements.listing_of
    monkeypatch.setattr(disagreements, "_span_lists", lambda *given: made.append(given[1]) or span_lists(*given))
    monkeypatch.setattr(disagreements, "listing_of", lambda *given: listed.append(given[1]) or listing_of(*given))
    context = audit_context(config)
    assert disagreements.summary(context) == expected_summary and made == [] and listed == []
    assert context.notes.get(disagreements.KEY, {}) == {}
    pairs = [pair for listing in disagreements.listings(context) for pair in listing.pairs]
    assert len(pairs) == 2 and all(pair.n_lines for pair in pairs) and made == []
    listed.clear()
    assert files_text(disagreements.files(context)) == expected_files
    assert sorted(made) == sorted(name for pair in pairs for name in (pair.comparison.first, pair.comparison.second))
    assert listed == ["disagreements", "annotator-disagreements"]
    assert files_text(disagreements.files(context)) == expected_files  # made again: nothing was kept
    assert len(made) == 8 and all(list(pair.spans) == list(disagreements.SPAN_KEYS) for pair in pairs)


def test_csv_cells_are_what_the_csv_module_writes() -> None:
    rng = random.Random(0)
    alphabet = ["a", "é", ",", '"', "\n", "\r", " ", "\t", "=", "'", "\x00", "\u2028", ";"]
    texts = ["", " ", "\r", "\n", '"', ",", "plain"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(2000)
    ]
    for text in texts:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow([text, "x"])
        assert disagreements.csv_cell(text) + ",x\n" == buffer.getvalue(), repr(text)


def test_distinct_values_by_marks_and_by_sorting_agree() -> None:
    rng = np.random.default_rng(0)
    for values in (rng.integers(0, 50, size=300), rng.integers(0, 2**40, size=300), np.zeros(0, dtype=np.int64)):
        distinct, index = disagreements._distinct_values(values)
        assert np.array_equal(distinct, np.unique(values)) and np.array_equal(distinct[index], values)


def test_golds_that_agree_everywhere_list_nothing(tmp_path: Path) -> None:
    """Pairs compared but no item differs: files of a header (CSV) or nothing (JSON Lines), zero counts."""
    same = [
        item(
            entry["id"],
            entry["language"],
            text=entry.get("text"),
            **{name: entry["labellings"]["gold"] for name in ("gold", "clean", "o1", "o2", "a", "b")},
        )
        for entry in record()
    ]
    context = audit_context(write_project(tmp_path, same, **ROLES))
    files = files_text(disagreements.files(context))
    assert files == reference_listings(context)[0]
    assert files["disagreements.jsonl"] == "" and files["disagreements.csv"].count("\n") == 1
    assert disagreements.summary(context) == reference_listings(context)[1]
    assert disagreements.summary(context)["text"] is False


def test_columns_of_cells_take_the_short_way_only_when_nothing_changes() -> None:
    rng = random.Random(1)
    alphabet = ["a", "é", ",", '"', "\n", "\r", " ", "\t", "=", "+", "-", "@", "\\", "\x01", "'", "\u2028"]
    for _ in range(500):
        texts = [
            "".join(rng.choice(alphabet[:2] * 20 + alphabet) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(1, 4))
        ]
        cells = [disagreements.csv_cell(spreadsheet_safe(text)) for text in texts]
        assert disagreements.spreadsheet_cells(texts) == cells
        assert disagreements._json_inside(texts) == [orjson.dumps(text).decode("utf-8")[1:-1] for text in texts]


def test_the_pages_read_a_listing_no_further_than_they_show(tmp_path: Path, monkeypatch) -> None:
    """The listing file is read line by line and left as soon as the page (PAGE_LINES per pair) and the browser
    (BROWSER_LINES) have their lines: here the first two of three, so a third line that is not JSON is never
    read; the counts the page prints come from results.json."""
    results = audit_items(tmp_path, record(), audit={"resamples": 20}, **ROLES)
    folder = tmp_path / "version"
    folder.mkdir()
    kept = results.files["disagreements.jsonl"].splitlines(keepends=True)[:2]
    (folder / "disagreements.jsonl").write_text("".join(kept) + "not JSON: never read\n", encoding="utf-8")
    document = {**results.to_json_dict(), "rows": results.rows}
    monkeypatch.setattr(browser, "BROWSER_LINES", 2)
    monkeypatch.setattr(disagreements, "PAGE_LINES", 1)
    site = SiteContext(folder, document, "2026-01-01T00:00:00+00:00")
    [read] = [listing for listing in disagreements.read_listings(site) if listing.stem == "disagreements"]
    assert read.lines == 3 and [line["id"] for line in read.read(folder)] == ["en-1", "de-1"]
    assert [[line["id"] for line in shown] for shown in read.shown] == [["en-1"]]
    page, script = disagreements.pages(ResultsView.from_json(document), site)[:2]
    [pair] = page.context.pairs
    assert (pair.differing, pair.shown, pair.complete) == ("3", "1", False)
    data = json.loads(script.text.split("push(", 1)[1].rsplit(");", 1)[0])
    assert data["lines"] == 3 and [row[1] for row in data["rows"]] == ["en-1", "de-1"]
