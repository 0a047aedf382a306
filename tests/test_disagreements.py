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
import io
import json
from pathlib import Path

import pytest
from conftest import build
from helpers import audit_items, item, write_project
from test_site import parse

from refsens_report import render
from refsens_report.analyses import disagreements

ROLES = {"annotators": ("a", "b"), "outputs": ("o1", "o2"), "references": ("gold", "clean")}
TEXTS = {"en-1": "Peter met Mary in Paris", "en-2": "Anna said hi", "en-3": "Same here", "de-1": "Hallo Welt"}


def record() -> list[dict]:
    per, loc, org = [0, 5, "PER"], [18, 23, "LOC"], [18, 23, "ORG"]
    return [
        item("en-1", "en", text=TEXTS["en-1"], gold=[per, loc], clean=[per, org], o1=[per, loc], o2=[org, per],
             a=[per], b=[per]),
        item("en-2", "en", text=TEXTS["en-2"], gold=[[0, 4, "PER"]], clean=[], o1=[[0, 4, "PER"]], o2=[],
             a=[[0, 4, "PER"]], b=[[0, 4, "PER"], [5, 9, "LOC"]]),
        item("en-3", "en", text=TEXTS["en-3"], gold=[[0, 4, "PER"]], clean=[[0, 4, "PER"]], o1=[[0, 4, "PER"]],
             o2=[[0, 4, "PER"]], a=[], b=[]),
        item("de-1", "de", text=TEXTS["de-1"], gold=[per], clean=[per, [6, 10, "LOC"]], o1=[per, [6, 10, "LOC"]],
             o2=[per], a=[per], b=[per]),
    ]  # fmt: skip


EXPECTED_REFERENCES = [
    {"id": "en-1", "language": "en", "first": "gold", "second": "clean", "subset": "audited", "impact": 6,
     "text": TEXTS["en-1"], "spans_first": [[0, 5, "PER"], [18, 23, "LOC"]],
     "spans_second": [[0, 5, "PER"], [18, 23, "ORG"]], "only_first": [[18, 23, "LOC"]],
     "only_second": [[18, 23, "ORG"]],
     "outputs": {"o1": {"tp": -1, "fp": 1, "fn": 1}, "o2": {"tp": 1, "fp": -1, "fn": -1}}},
    {"id": "de-1", "language": "de", "first": "gold", "second": "clean", "subset": "audited", "impact": 3,
     "text": TEXTS["de-1"], "spans_first": [[0, 5, "PER"]], "spans_second": [[0, 5, "PER"], [6, 10, "LOC"]],
     "only_first": [], "only_second": [[6, 10, "LOC"]],
     "outputs": {"o1": {"tp": 1, "fp": -1, "fn": 0}, "o2": {"tp": 0, "fp": 0, "fn": 1}}},
    {"id": "en-2", "language": "en", "first": "gold", "second": "clean", "subset": "audited", "impact": 3,
     "text": TEXTS["en-2"], "spans_first": [[0, 4, "PER"]], "spans_second": [], "only_first": [[0, 4, "PER"]],
     "only_second": [], "outputs": {"o1": {"tp": -1, "fp": 1, "fn": 0}, "o2": {"tp": 0, "fp": 0, "fn": -1}}},
]  # fmt: skip
EXPECTED_ANNOTATORS = [
    {"id": "en-2", "language": "en", "first": "a", "second": "b", "subset": "corpus", "impact": 2,
     "text": TEXTS["en-2"], "spans_first": [[0, 4, "PER"]], "spans_second": [[0, 4, "PER"], [5, 9, "LOC"]],
     "only_first": [], "only_second": [[5, 9, "LOC"]],
     "outputs": {"o1": {"tp": 0, "fp": 0, "fn": 1}, "o2": {"tp": 0, "fp": 0, "fn": 1}}},
]  # fmt: skip


def test_listings_of_a_hand_made_record_line_by_line(tmp_path: Path) -> None:
    results = audit_items(tmp_path, record(), audit={"resamples": 20}, **ROLES)
    jsonl = results.files["disagreements.jsonl"]
    assert [json.loads(line) for line in jsonl.splitlines()] == EXPECTED_REFERENCES
    # compact JSON, keys in a fixed order, one item per line
    assert jsonl.splitlines()[2] == (
        '{"id":"en-2","language":"en","first":"gold","second":"clean","subset":"audited","impact":3,'
        '"text":"Anna said hi","spans_first":[[0,4,"PER"]],"spans_second":[],"only_first":[[0,4,"PER"]],'
        '"only_second":[],"outputs":{"o1":{"tp":-1,"fp":1,"fn":0},"o2":{"tp":0,"fp":0,"fn":-1}}}'
    )
    assert [json.loads(line) for line in results.files["annotator-disagreements.jsonl"].splitlines()] == EXPECTED_ANNOTATORS
    table = list(csv.reader(io.StringIO(results.files["disagreements.csv"])))
    assert table[0] == ["id", "language", "first", "second", "subset", "impact", "text", "spans_first",
                        "spans_second", "only_first", "only_second", "o1 ΔTP", "o1 ΔFP", "o1 ΔFN", "o2 ΔTP",
                        "o2 ΔFP", "o2 ΔFN"]  # fmt: skip
    assert table[1] == ["en-1", "en", "gold", "clean", "audited", "6", TEXTS["en-1"], '[[0,5,"PER"],[18,23,"LOC"]]',
                        '[[0,5,"PER"],[18,23,"ORG"]]', '[[18,23,"LOC"]]', '[[18,23,"ORG"]]', "-1", "1", "1", "1",
                        "-1", "-1"]  # fmt: skip
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
    results = audit_items(tmp_path, lines, audit={"resamples": 20}, annotators=("a", "b"), outputs=("o1",),
                          references=("gold", "clean", "third"))  # fmt: skip
    found = [json.loads(line) for line in results.files["disagreements.jsonl"].splitlines()]
    assert [(line["id"], line["second"], line["impact"]) for line in found] == [
        ("en-1", "clean", 3), ("en-1", "third", 3), ("de-1", "clean", 2), ("en-2", "clean", 2), ("en-2", "third", 2)]
    assert [c["second"] for c in results.summaries["disagreements"]["comparisons"] if c["kind"] == "references"] == [
        "clean", "third"]


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
    assert {"disagreements.html", "disagreements.jsonl", "disagreements.csv", "annotator-disagreements.html"} <= set(manifest["files"])
    appendix = parse(folder / "index.html")
    downloads = [a.attrs["href"] for table in appendix.iter("table") if "downloads" in table.attrs.get("class", "")
                 for a in table.iter("a")]  # fmt: skip
    assert {"disagreements.html", "disagreements.jsonl", "disagreements.csv", "annotator-disagreements.jsonl"} <= set(downloads)
    sections = {node.attrs.get("id"): node for node in appendix.iter("section")}
    swap_links = [a.attrs["href"] for a in sections["section-swap"].iter("a") if not a.attrs["href"].startswith("tables/")]
    assert swap_links == ["disagreements.html"]
    assert "annotator-disagreements.html" in [a.attrs["href"] for a in sections["section-agreement"].iter("a")]
    page = parse(folder / "disagreements.html")
    items = [node for node in page.iter("li") if node.attrs.get("class") == "item"]
    assert [next(span for span in item.iter("span") if span.attrs.get("class") == "id").text() for item in items] == [
        "en-1", "de-1", "en-2"]
    marks = [(mark.attrs["class"], mark.text()) for mark in items[0].iter("mark")]
    assert marks == [("both", "Paris")]  # LOC only in gold and ORG only in clean, on the same characters
    assert [(mark.attrs["class"], mark.text()) for mark in items[2].iter("mark")] == [("first", "Anna")]


def test_show_text_false_leaves_no_text_in_any_file(tmp_path: Path) -> None:
    """No item's text, nor any span's text, in any file of the version or the site index; the page says so."""
    from pypdf import PdfReader

    config = write_project(tmp_path / "project", record(), audit={"resamples": 20}, **ROLES,
                           extra="\n[report]\nshow_text = false\n")  # fmt: skip
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
    lines = [json.loads(line) for line in (site.folder / "disagreements.jsonl").read_text(encoding="utf-8").splitlines()]
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
    lines = [item("x-1", "en", text=HOSTILE_TEXT, gold=[[start, end, "CODE"]], clean=[[arabic, arabic + 5, "CODE"]],
                  o1=[], o2=[], a=[], b=[])]  # fmt: skip
    results = audit_items(tmp_path, lines, audit={"resamples": 10}, **ROLES)
    folder = tmp_path / "version"
    folder.mkdir()
    (folder / "disagreements.jsonl").write_text(results.files["disagreements.jsonl"], encoding="utf-8")
    document = {**results.to_json_dict(), "rows": results.rows}
    [(name, context)] = render.disagreement_pages(folder, document, "2026-01-01T00:00:00+00:00")
    html = render.render_page("disagreements.html", context)
    (folder / name).write_text(html, encoding="utf-8")
    page = parse(folder / name)
    assert not list(page.iter("script")) and not list(page.iter("img"))
    assert all(not attribute.startswith("on") for node in page.iter() for attribute in node.attrs)
    assert "&lt;script&gt;alert(&#34;text&#34;)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    [text] = [node for node in page.iter("p") if node.attrs.get("class") == "item-text"]
    assert text.attrs.get("dir") == "auto"
    [isolated] = list(text.iter("bdi"))  # the whole text, RLO included, inside one isolate
    assert isolated.text() == HOSTILE_TEXT
    assert [(mark.attrs["class"], mark.text()) for mark in isolated.iter("mark")] == [
        ("first", '<script>alert("text")</script>'), ("second", "مرحبا")]
    # every listed span's type and text sit in isolates too
    spans = [node for node in page.iter("dl") if node.attrs.get("class") == "spans"][0]
    assert {bdi.text() for bdi in spans.iter("bdi")} >= {"CODE", '<script>alert("text")</script>', "مرحبا"}
