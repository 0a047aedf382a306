"""The site: structure and numbers of the appendix (parsed, not compared as text), safety, staging, rebuilds."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from dataclasses import fields, is_dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import jinja2
import jinja2.meta
import pytest
from conftest import HOSTILE_CONFIG_COMMENT, HOSTILE_LABELLING, HOSTILE_TYPE, UNICODE_TYPES, Built
from jinja2 import nodes
from latex_check import PDFLATEX, build_with_pdflatex, check_structure

from refsens_report import render, site
from refsens_report.analyses import disagreements, gold_errors
from refsens_report.analyses.registry import ANALYSES, figure_makers
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.errors import InputError
from refsens_report.metadata import VOCABULARIES
from refsens_report.tables import PAGE_ROWS, table_csv
from refsens_report.view import ResultsView

# --- a small DOM from html.parser ------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    """One element: tag, attributes, children (nodes and text)."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def iter(self, tag: str | None = None):
        for child in self.children:
            if isinstance(child, Node):
                if tag is None or child.tag == tag:
                    yield child
                yield from child.iter(tag)


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(path: Path) -> Node:
    builder = TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    return builder.root


def scripts_are_ours(page: Node, folder: Path) -> bool:
    """Return whether every script of a page is a file the build wrote beside it (site.js, a listing's data
    script), loaded by a relative src, with nothing inline."""
    scripts = list(page.iter("script"))
    return all(
        not script.text().strip()
        and "/" not in script.attrs.get("src", "/")
        and (script.attrs["src"] in render.SCRIPTS or script.attrs["src"].endswith("-data.js"))
        and (folder / script.attrs["src"]).is_file()
        for script in scripts
    )


def squash(text: str) -> str:
    return " ".join(text.split())


# --- independent formatting of results.csv (docs/method.md section 6), to check the page against -------

RATES = {"identical", "type_agreement", "third_pass", "silent", "default_to_first", "rate", "copied", "skew"}
DIFFERENCES = {"skew", "delta", "margin", "swing", "flip"}
LEADERBOARD_DECIMALS = {"rank": 1, "flips": 1, "flips_significant": 0, "kendall_tau": 2, "tie_group": 0}
# the rules above are written out for the paper's analyses; any other analysis's decimals are what it declares
PAPER_ANALYSES = {
    "agreement",
    "neutrality",
    "swap",
    "range",
    "interaction",
    "band",
    "decontaminated",
    "duplicates",
    "type_confusion",
    "by_type",
    "disagreements",
    "leaderboard",
    "aggregation",
}
DECLARED = {analysis.key: analysis.statistics for analysis in ANALYSES}


def expected_text(row: dict[str, str], field: str) -> str:
    """Return what a cell printing ``field`` of a results.csv row must read."""
    if field == "n_items":
        return f"{int(row['n_items']):,}"
    if field in ("p_holm", "p_value"):
        if row[field] == "":
            return "—"
        value = float(row[field])
        return "<0.01" if value < 0.01 else f"{value:.2f}"
    if row["analysis"] == "leaderboard" and row["statistic"] == "p_rank_change":
        return f"{100 * float(row['estimate']):.1f}%" if row["estimate"] else "—"
    if (row["analysis"], row["statistic"]) in (("leaderboard", "holm_floor"), ("neutrality", "skew_permutation_p")):
        return expected_text({**row, "p_holm": row["estimate"]}, "p_holm")
    decimals = 1 if row["statistic"] in RATES and row["analysis"] in ("agreement", "neutrality", "aggregation") else 2
    if row["analysis"] == "leaderboard":
        decimals = LEADERBOARD_DECIMALS.get(row["statistic"], decimals)
    signed = row["statistic"] in DIFFERENCES
    if row["analysis"] not in PAPER_ANALYSES and row["statistic"] in DECLARED.get(row["analysis"], {}):
        kind = DECLARED[row["analysis"]][row["statistic"]]
        decimals, signed = kind.decimals, kind.signed

    def show(text: str) -> str:
        value = float(text)
        if round(value, decimals) == 0:
            value = 0.0
        return f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"

    if row["estimate"] == "":
        return "—"
    counts = ("rank", "flips", "rank_lower_simultaneous", "rank_upper_simultaneous", "best_set", "k_hat")
    if row["analysis"] in ("leaderboard", "aggregation") and row["statistic"] in counts:  # whole unless fractional

        def whole(text: str) -> str:
            return str(int(float(text))) if float(text).is_integer() else f"{float(text):.1f}"

        shown = whole(row["estimate"])
        if field == "point" or row["ci_low"] == "":  # the estimate alone: its interval is in another table
            return shown
        return f"{shown} [{whole(row['ci_low'])}, {whole(row['ci_high'])}]"
    text = show(row["estimate"])
    if field == "point":  # the estimate alone: its interval is printed in another table
        return text
    if row["ci_low"] != "" and row["ci_high"] != "":
        text += f" [{show(row['ci_low'])}, {show(row['ci_high'])}]"
    return text


def results_rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


SECTION_IDS = [
    "section-references",
    "section-agreement",
    "section-alpha",
    "section-gamma",
    "section-neutrality",
    "section-swap",
    "section-range",
    "section-interaction",
    "section-band",
    "section-decontaminated",
    "section-duplicates",
    "section-type_confusion",
    "section-by_type",
    "section-disagreements",
    "section-gold_errors",
    "section-leaderboard",
    "section-aggregation",
    "section-methods",
    "section-datasheet",
    "section-provenance",
    "section-cite",
]


def skipped_analyses(page: Node) -> set[str]:
    """Return the keys of the analyses the summary lists as not applicable."""
    summary = [node for node in page.iter("section") if node.attrs.get("id") == "summary"][0]
    lines = [
        squash(item.text())
        for node in summary.iter("ul")
        if "not-applicable-list" in node.attrs.get("class", "")
        for item in node.iter("li")
    ]
    return {analysis.key for analysis in ANALYSES if any(line.startswith(analysis.title + ":") for line in lines)}


def expected_sections(page: Node, datasheet: bool = True) -> list[str]:
    """Return the section ids a page must have: the summary first, then every analysis that applies, in order;
    the Datasheet only when the config names one (a section with nothing to say is left out)."""
    skipped = skipped_analyses(page) | (set() if datasheet else {"datasheet"})
    return ["summary", *(key for key in SECTION_IDS if key.removeprefix("section-") not in skipped)]


def test_every_section_is_present_in_the_papers_order(built_site: Built) -> None:
    page = parse(built_site.folder / "index.html")
    ids = [node.attrs.get("id") for node in page.iter("section")]
    # the summary first; an analysis that does not apply is a line of its "Not applicable" list, not a section
    titles_skipped = skipped_analyses(page)
    expected = expected_sections(page)[1:]
    assert ids == ["summary", *expected]
    titles = [squash(section.text()) for section in page.iter("h2")]
    for title in [
        *(analysis.title for analysis in ANALYSES if analysis.key not in titles_skipped),
        "Summary",
        "The references",
        "Methods",
        "Datasheet",
        "Provenance",
    ]:
        assert any(title in heading for heading in titles), title
    nav = [node for node in page.iter("nav") if node.attrs.get("id") == "contents"][0]
    assert [a.attrs["href"][1:] for a in nav.iter("a")] == ["summary", *expected]


def check_printed_numbers(page: Node, rows: list[dict[str, str]]) -> set[int]:
    """Assert every number cell reads as its results.csv row formatted; return the rows printed."""
    printed: set[int] = set()
    for cell in (cell for cell in page.iter("td") if "data-row" in cell.attrs):
        index, field = int(cell.attrs["data-row"]), cell.attrs["data-field"]
        row = rows[index]
        assert squash(cell.text()) == expected_text(row, field), (row, field)
        if field == "estimate" and row["statistic"] in DIFFERENCES and row["ci_low"] and row["ci_high"]:
            excludes_zero = float(row["ci_low"]) > 0 or float(row["ci_high"]) < 0
            assert ("bold" in cell.attrs.get("class", "")) == excludes_zero
        printed.add(index)
    return printed


def test_every_number_in_the_tables_is_its_results_row_as_formatted(built_site: Built) -> None:
    rows = results_rows(built_site.folder)
    printed = check_printed_numbers(parse(built_site.folder / "index.html"), rows)
    assert len(printed) > 400
    # lossless: every statistic in results.csv is printed in some table, on the page or, for the rows a long
    # table leaves off the page (tables.PAGE_ROWS), in that table's CSV download
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    shortened = render.build_body(ResultsView.from_json(results), {}).tables
    assert printed | in_downloads(shortened) == set(range(len(rows)))


def in_downloads(tables) -> set[int]:
    """Return the results rows the tables' CSV downloads print (every row of a table the page shortens)."""
    return {cell.row for table in tables for row in (table.csv or table).rows for cell in row if cell.row is not None}


def render_with_models(
    hostile_config: Path, tmp_path: Path, misses: dict[str, int], resamples: int, draw_figures: bool
) -> tuple[dict, list, list]:
    """Add model outputs to the hostile record, audit, render the appendix into ``tmp_path``.

    ``misses`` maps a model name to n: the model drops every n-th span of annotator A (offset per line).
    Returns results.json's content, the sections and the numbered tables.
    """
    from refsens_report.audit import run_audit
    from refsens_report.results import write_results

    folder = tmp_path / "record"
    shutil.copytree(hostile_config.parent, folder)
    record = folder / "record.jsonl"
    lines = []
    for number, line in enumerate(record.read_text(encoding="utf-8").splitlines()):
        item = json.loads(line)
        labellings = item["labellings"]
        if "annotator_a" in labellings:
            spans = labellings["annotator_a"]
            for name, every in misses.items():
                labellings[name] = [span for position, span in enumerate(spans) if (position + number) % every]
        lines.append(json.dumps(item, ensure_ascii=False))
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config_path = folder / "refsens.toml"
    text = config_path.read_text(encoding="utf-8")
    added = ", ".join(f'"{name}"' for name in misses)
    text = re.sub(r"^outputs = \[(.*)\]$", rf"outputs = [\1, {added}]", text, flags=re.M)
    config_path.write_text(text.replace("resamples = 200", f"resamples = {resamples}"), encoding="utf-8")
    write_results(run_audit(load_config(config_path)), tmp_path)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    view = ResultsView.from_json(results)
    body = render.build_body(view, site.figures.write_figures(view, tmp_path, figure_makers()) if draw_figures else {})
    sections, numbered = body.sections, body.tables
    page = render.appendix_context(
        results, sections, None, [], "2026-01-01T00:00:00+00:00", "SOURCE_DATE_EPOCH", "x.pdf", body.summary
    )
    (tmp_path / "index.html").write_text(render.render_page("appendix.html", page), encoding="utf-8")
    return results, sections, numbered


def test_a_leaderboard_is_rendered_when_there_are_three_outputs(hostile_config: Path, tmp_path: Path) -> None:
    _, _, numbered = render_with_models(hostile_config, tmp_path, {"model_x": 3}, resamples=60, draw_figures=False)
    rows = results_rows(tmp_path)
    printed = check_printed_numbers(parse(tmp_path / "index.html"), rows)
    leaderboard = {index for index, row in enumerate(rows) if row["analysis"] == "leaderboard"}
    floor = [index for index in leaderboard if rows[index]["statistic"] == "holm_floor"]
    assert leaderboard and floor
    # every row is printed on the page or, where the page shortens a long table, in that table's CSV
    assert printed | in_downloads(numbered) == set(range(len(rows))) - set(floor)  # the floor: a sentence
    section = [
        node for node in parse(tmp_path / "index.html").iter("section") if node.attrs.get("id") == "section-leaderboard"
    ][0]
    text = squash(section.text())
    assert re.search(r"\d+ of \d+ pairs of outputs changes? order", text)  # the verb agrees with the count
    assert expected_text(rows[floor[0]], "estimate") in text
    assert {table.key for table in numbered} >= {"leaderboard", "rank-agreement"}


def check_table_csv(text: str, table, rows: list[dict[str, str]]) -> set[int]:
    """Assert a table's CSV holds every number cell as its results.csv values, in numeric columns; return the rows.

    A column with intervals is three columns (<header> estimate, ci_low, ci_high), any other number column one;
    each value is the results.csv text of that row (unrounded), so it parses as a float and equals the row.
    """
    table = table.csv or table
    lines = list(csv.reader(io.StringIO(text)))
    header, body = lines[0], lines[1:]
    assert len(body) == len(table.rows)
    checked: set[int] = set()
    for cells, line in zip(table.rows, body):
        position = 0
        for index, cell in enumerate(cells):
            column = [row[index] for row in table.rows]
            width = 3 if any(c.ci_low is not None or c.ci_high is not None for c in column) else 1
            values = line[position : position + width]
            names = header[position : position + width]
            position += width
            if not cell.numeric:
                assert values[0] == cell.text or values[0] == "'" + cell.text
                continue
            for value in values:
                assert value == "" or float(value) == float(value)  # a number, never '+1.00 [...]' or '<0.01'
            if cell.row is None:  # a count that is no results row, or an empty cell
                assert values == [str(cell.value) if cell.value is not None else ""] + [""] * (width - 1)
                continue
            row = rows[cell.row]
            if width == 3:
                assert [name.rsplit(" ", 1)[1] for name in names] == ["estimate", "ci_low", "ci_high"]
                assert values == [row["estimate"], row["ci_low"], row["ci_high"]], (names, row)
            else:
                assert values == [row["estimate" if cell.field in ("estimate", "point") else cell.field]], (names, row)
            checked.add(cell.row)
        assert position == len(line) == len(header)
    return checked


def test_table_csvs_hold_numbers_equal_to_results_csv(built_site: Built) -> None:
    rows = results_rows(built_site.folder)
    view = ResultsView.from_json(json.loads((built_site.folder / "results.json").read_text(encoding="utf-8")))
    _, numbered = render.build_sections(view, {})
    checked: set[int] = set()
    for table in numbered:
        checked |= check_table_csv(
            (built_site.folder / "tables" / f"{table.slug}.csv").read_text(encoding="utf-8"), table, rows
        )
    assert checked == set(range(len(rows)))  # every statistic is in some table's CSV, as a number


def test_the_demo_shows_every_section_the_leaderboard_and_its_tie_groups(tmp_path: Path) -> None:
    """The demo's shape (simulate's defaults: six outputs) at a small size, rendered without the PDF."""
    from refsens_report.audit import run_audit
    from refsens_report.demo import write_simulation
    from refsens_report.results import write_results

    write_simulation(tmp_path / "demo", items=1500, seed=0)
    config_path = tmp_path / "demo" / "refsens.toml"
    text = re.sub(r"(?m)^resamples = .*$", "resamples = 200", config_path.read_text(encoding="utf-8"))
    config_path.write_text(text, encoding="utf-8")
    write_results(run_audit(load_config(config_path)), tmp_path)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert all(reason is None for reason in results["applicability"].values()), results["applicability"]
    view = ResultsView.from_json(results)
    body = render.build_body(view, site.figures.write_figures(view, tmp_path, figure_makers()))
    page = render.appendix_context(
        results,
        body.sections,
        None,
        [],
        "2026-01-01T00:00:00+00:00",
        "SOURCE_DATE_EPOCH",
        "x.pdf",
        summary=body.summary,
    )
    (tmp_path / "index.html").write_text(render.render_page("appendix.html", page), encoding="utf-8")
    parsed = parse(tmp_path / "index.html")
    assert skipped_analyses(parsed) == set()  # nothing in the summary's "Not applicable" list
    assert [node.attrs.get("id") for node in parsed.iter("section")] == [
        "summary",
        *(key for key in SECTION_IDS if key != "section-datasheet"),
    ]  # no datasheet given: no Datasheet section
    leaderboard = [node for node in parsed.iter("section") if node.attrs.get("id") == "section-leaderboard"][0]
    headers = {squash(cell.text()) for cell in leaderboard.iter("th")}
    assert "Tie group" in headers
    summary = [node for node in parsed.iter("section") if node.attrs.get("id") == "summary"][0]
    assert [node.attrs["id"] for node in summary.iter("figure")] == ["figure-leaderboard-bump"]  # the rank chart


def test_tables_are_numbered_captioned_and_downloadable(built_site: Built) -> None:
    page = parse(built_site.folder / "index.html")
    figures = [node for node in page.iter("figure") if "table" in node.attrs.get("class", "")]
    numbers = []
    for figure in figures:
        caption = squash(next(figure.iter("figcaption")).text())
        numbers.append(int(re.match(r"Table (\d+)\.", caption).group(1)))
        links = [a.attrs["href"] for a in figure.iter("a")]
        assert len(links) == 2 and links[0].endswith(".csv") and links[1].endswith(".tex")
        csv_rows = list(csv.reader((built_site.folder / links[0]).open(encoding="utf-8")))
        page_rows = sum(len(list(body.iter("tr"))) for body in figure.iter("tbody"))
        note = squash(figure.text())
        if "The table's CSV holds every one of the" in caption or "The page shows" in note:  # shortened on the page
            assert len(csv_rows) - 1 > page_rows
        else:
            assert len(csv_rows) - 1 == page_rows
        latex = (built_site.folder / links[1]).read_text(encoding="utf-8")
        assert r"\toprule" in latex and r"\midrule" in latex and r"\bottomrule" in latex
        assert "<script>" not in latex  # escaped for LaTeX
    assert numbers == list(range(1, len(figures) + 1))
    images = [node for node in page.iter("figure") if "figure" in node.attrs.get("class", "").split()]
    assert len(images) == 8
    for number, figure in enumerate(images, start=1):
        image = next(figure.iter("img"))
        assert image.attrs["alt"] and (built_site.folder / image.attrs["src"]).is_file()
        assert squash(next(figure.iter("figcaption")).text()).startswith(f"Figure {number}.")


def test_every_figure_is_a_numbered_svg_png_and_pdf_listed_in_the_downloads(built_site: Built) -> None:
    folder = built_site.folder
    page = parse(folder / "index.html")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    listed = {a.attrs.get("href") for a in page.iter("a")}
    images = [node for node in page.iter("figure") if "figure" in node.attrs.get("class", "").split()]
    for number, figure in enumerate(images, start=1):
        key = figure.attrs["id"].removeprefix("figure-")
        stem = f"figures/figure-{number}-{key}"
        assert [a.attrs["href"] for a in figure.iter("a")] == [f"{stem}.svg", f"{stem}.png", f"{stem}.pdf"]
        svg, png, pdf = ((folder / f"{stem}{suffix}").read_bytes() for suffix in (".svg", ".png", ".pdf"))
        assert svg == (folder / next(figure.iter("img")).attrs["src"]).read_bytes()  # the site's own SVG
        assert png.startswith(b"\x89PNG") and b"Software" not in png and b"tIME" not in png
        density = png[png.index(b"pHYs") + 4 : png.index(b"pHYs") + 13]
        assert int.from_bytes(density[:4], "big") == round(300 / 0.0254) and density[8] == 1  # 300 dpi
        assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf and b"/FontFile2" in pdf  # TrueType, no date
        for suffix in (".svg", ".png", ".pdf"):
            assert f"{stem}{suffix}" in listed and f"{stem}{suffix}" in manifest["files"]
    exported = sorted(path.name for path in (folder / "figures").glob("figure-*"))
    assert len(exported) == 3 * len(images) and not (folder / "figures" / "export").exists()


def finding_sentences(page: Node) -> list[str]:
    """Return the headline findings: the items of the summary's one list after its verdicts."""
    found = [node for node in page.iter("ul") if node.attrs.get("id") == "findings"][0]
    return [squash(item.text()) for item in found.iter("li") if "finding" in item.attrs.get("class", "")]


def test_the_summary_and_the_headline_findings_are_one_list_each_sentence_said_once(built_site: Built) -> None:
    page = parse(built_site.folder / "index.html")
    summary = [node for node in page.iter("section") if node.attrs.get("id") == "summary"][0]
    items = [squash(item.text()) for item in summary.iter("li") if "finding" in item.attrs.get("class", "")]
    assert items and len(items) == len(set(items))
    assert not [node for node in page.iter("section") if node.attrs.get("id") == "findings"]
    # no sentence of the list is printed a second time anywhere on the page
    text = squash(page.text())
    assert all(text.count(sentence) == 1 for sentence in items)


def test_headline_findings_are_sentences_with_numbers(built_site: Built) -> None:
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    figures = render.version_figures(ResultsView.from_json(results))
    page = parse(built_site.folder / "index.html")
    sentences = finding_sentences(page)
    assert len(sentences) >= 5
    text = " ".join(sentences)
    for cell in figures:  # the index's skew, largest delta, swing and band are said in the findings
        assert cell.value in text, cell.heading
    assert all(re.search(r"\d", sentence) and sentence.endswith(".") for sentence in sentences)


def test_a_section_that_does_not_apply_says_why(built_site: Built) -> None:
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    results["rows"] = [row for row in results["rows"] if row["analysis"] != "duplicates"]
    results["applicability"]["duplicates"] = "The record has no duplicate key (meta.dup_key)."
    results["duplicates"] = {"key": "dup_key", "available": False, "defective_groups": []}
    view = ResultsView.from_json(results)
    body = render.build_body(view, {})
    assert "duplicates" not in [section.key for section in body.sections]  # nothing to print: no section
    assert ("Duplicate robustness", "The record has no duplicate key (meta.dup_key).") in [
        (line.title, line.reason) for line in body.summary.not_applicable
    ]
    page = render.appendix_context(
        results, body.sections, None, [], "2026-01-01T00:00:00+00:00", "SOURCE_DATE_EPOCH", "x.pdf", body.summary
    )
    html = render.render_page("appendix.html", page)
    assert "<strong>Duplicate robustness</strong>: The record has no duplicate key (meta.dup_key)." in html
    assert 'id="section-duplicates"' not in html and 'href="#section-duplicates"' not in html
    # no datasheet: no Datasheet section and no line of the contents for it
    assert 'id="section-datasheet"' not in html and 'href="#section-datasheet"' not in html


def context_names(environment: jinja2.Environment, template: str, seen: set[str] | None = None) -> set[str]:
    """Return the context names a template reads, with those of every template rendered with its context.

    A template it includes (unless ``without context``), the one it extends and one it imports ``with context``
    see the page's context, so their names count, and so on down; a plain import does not (its macros take
    their data as arguments). A template named by an expression cannot be followed: the check refuses it
    rather than pass names it has not read.
    """
    seen = set() if seen is None else seen
    seen.add(template)
    tree = environment.parse(environment.loader.get_source(environment, template)[0])
    names = set(jinja2.meta.find_undeclared_variables(tree))
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        if not isinstance(node, nodes.Extends) and not node.with_context:
            continue
        assert isinstance(node.template, nodes.Const), f"{template}: a template named by an expression"
        others = node.template.value
        for other in [others] if isinstance(others, str) else others:
            if other not in seen:
                names |= context_names(environment, other, seen)
    return names


def test_the_context_check_reads_what_a_template_includes() -> None:
    """An undocumented name used only in an included part fails the check, however deep; not in a plain import."""
    environment = jinja2.Environment(
        loader=jinja2.DictLoader(
            {
                "page.html": '{% include "head.html" %}{{ documented }}',
                "head.html": '{% include "deeper.html" %}{{ undocumented }}',
                "deeper.html": "{{ deepest }}",
                "child.html": '{% extends "page.html" %}',
                "macros.html": "{% macro cell(value) %}{{ value }}{{ undocumented }}{% endmacro %}",
                "plain.html": '{% from "macros.html" import cell %}{{ cell(documented) }}',
                "shared.html": '{% import "macros.html" as macros with context %}{{ macros.cell(documented) }}',
                "dynamic.html": "{% include name %}",
            }
        )
    )
    documented = {"documented"}
    assert context_names(environment, "page.html") == {"documented", "undocumented", "deepest"} != documented
    assert context_names(environment, "child.html") == {"documented", "undocumented", "deepest"}
    assert context_names(environment, "shared.html") == {"documented", "undocumented"}
    assert context_names(environment, "plain.html") == documented  # the macro sees only its arguments
    with pytest.raises(AssertionError, match="named by an expression"):
        context_names(environment, "dynamic.html")


@pytest.mark.parametrize(
    ("template", "context"),
    [
        ("appendix.html", render.AppendixPage),
        ("site_index.html", render.SiteIndexPage),
        ("disagreements.html", disagreements.DisagreementsPage),
        ("candidates.html", gold_errors.CandidatesPage),
    ],
)
def test_templates_use_exactly_the_documented_context(template: str, context: type) -> None:
    used = context_names(render.environment(), template)
    documented = {item.name for item in fields(context)}
    assert used == documented
    described = " ".join(klass.__doc__ or "" for klass in context.__mro__ if is_dataclass(klass))
    for name in documented:  # every field is described in the docstring of the context or of a base it extends
        assert f"{name}" in described, name


def test_team_text_is_inert_in_html_and_svg(built_site: Built) -> None:
    for path in [*built_site.folder.rglob("*.html"), built_site.out / "index.html"]:
        page = parse(path)
        assert scripts_are_ours(page, path.parent), path  # no inline script; only site.js and listing data
        for node in page.iter():
            for name, value in node.attrs.items():
                assert not name.startswith("on"), (path, node.tag, name)
                assert not (value or "").strip().lower().startswith("javascript:"), (path, name, value)
            if node.tag == "img":
                assert node.attrs["src"].startswith("figures/"), node.attrs
    html = (built_site.folder / "index.html").read_text(encoding="utf-8")
    page = parse(built_site.folder / "index.html")
    text = page.text()
    assert HOSTILE_TYPE in text and HOSTILE_LABELLING in text  # printed as text
    assert '<script>alert("datasheet")</script>' in text
    assert "&lt;script&gt;" in html
    for name in UNICODE_TYPES.values():
        assert name in text
    # the datasheet's external link and image never become a link or an image
    assert "https://example.org/dataset" in text
    assert 'href="https://' not in html and 'cdn.example.org/logo.png"' not in html
    hostile_in_figures = False
    for svg in built_site.folder.rglob("*.svg"):
        for element in ElementTree.parse(svg).iter():
            assert not element.tag.endswith("script"), svg
            assert not any(name.lower().startswith("on") for name in element.attrib), svg
            hostile_in_figures |= HOSTILE_TYPE in (element.text or "")
    assert hostile_in_figures  # the heatmap prints the type as text


def test_the_config_is_printed_as_the_toml_the_team_wrote(built_site: Built) -> None:
    written = built_site.config_path.read_text(encoding="utf-8")
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    assert results["config_toml"] == written  # as written, comments included; the JSON config stays for tools
    assert results["config"]["roles"]["annotators"][1] == HOSTILE_LABELLING
    page = parse(built_site.folder / "index.html")
    provenance = next(node for node in page.iter("section") if node.attrs.get("id") == "section-provenance")
    headings = [squash(node.text()) for node in provenance.iter("h3")]
    assert "Config as written" in headings and "Config as used" not in headings
    [printed] = [node.text() for node in provenance.iter("pre")]
    # the comment's markup prints as text, its right-to-left override as a visible escape, the rest unchanged
    assert printed == written.replace("\u202e", "\\u202e")
    assert '<script>alert("config")</script>' in printed and "[roles]" in printed and "# first = primary" in printed
    assert "\u202e" not in (built_site.folder / "index.html").read_text(encoding="utf-8")
    assert HOSTILE_CONFIG_COMMENT.startswith("#")


def test_results_without_the_config_text_print_the_config_as_used(built_site: Built) -> None:
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    del results["config_toml"]  # results an audit wrote from a config made in Python, not read from a file
    page = render.appendix_context(results, [], None, [], "2026-01-01T00:00:00+00:00", "SOURCE_DATE_EPOCH", "x.pdf")
    assert not page.config_written and json.loads(page.config_text) == results["config"]


EXTERNAL = re.compile(r"(?:https?|ftp)://[^\s\"'<>)]*|(?:src|href)\s*=\s*[\"']//", re.I)
# XML namespace names and croissant.json's JSON-LD vocabularies identify vocabularies; nothing fetches them
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink", *VOCABULARIES}


def test_no_output_refers_outside_the_site(built_site: Built) -> None:
    checked = 0
    for path in [*built_site.folder.rglob("*"), built_site.out / "index.html"]:
        if not path.is_file() or path.suffix in (".pdf", ".png"):  # binary: a PDF and a PNG link nothing
            continue
        text = path.read_text(encoding="utf-8")
        if path.name == "index.html" and path.parent == built_site.folder:
            # the datasheet's own URL is printed as text (not a link); strip the team's prose before checking
            page = parse(path)
            datasheet = [node for node in page.iter("section") if node.attrs.get("id") == "section-datasheet"][0]
            for node in page.iter():
                for value in node.attrs.values():
                    assert not EXTERNAL.search(value or ""), (path, value)
            text = text.replace("https://example.org/dataset", "")
            assert "https://example.org/dataset" in datasheet.text()
        found = {match for match in EXTERNAL.findall(text) if match not in NAMESPACES}
        assert not found, (path, found)
        checked += 1
    assert checked > 20
    for css in built_site.folder.glob("*.css"):
        assert "@import" not in css.read_text(encoding="utf-8") and "url(" not in css.read_text(encoding="utf-8")


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Return every file under a folder with its bytes and modification time."""
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_rebuilds_are_byte_identical(built_site: Built, rebuilt_site: Built) -> None:
    first, second = snapshot(built_site.out), snapshot(rebuilt_site.out)
    assert first.keys() == second.keys()
    different = [name for name in first if first[name][0] != second[name][0]]
    assert not different
    suffixes = {Path(name).suffix for name in first}
    assert {".html", ".svg", ".csv", ".json", ".jsonl", ".pdf", ".tex", ".css", ".png", ".md"} <= suffixes
    assert {Path(name).suffix for name in first if name.split("/")[-1].startswith("figure-")} == {
        ".svg",
        ".png",
        ".pdf",
    }


def test_manifest_hashes_every_file_and_input(built_site: Built) -> None:
    manifest = json.loads((built_site.folder / "manifest.json").read_text(encoding="utf-8"))
    files = {path.relative_to(built_site.folder).as_posix() for path in built_site.folder.rglob("*") if path.is_file()}
    assert set(manifest["files"]) == files - {"manifest.json"}
    from refsens_report.results import sha256_file

    for name, digest in manifest["files"].items():
        assert sha256_file(built_site.folder / name) == digest
    assert set(manifest["inputs"]) == {"refsens.toml", "record.jsonl", "datasheet.md"}
    assert manifest["seed"] == 0 and manifest["resamples"] == 200 and manifest["tool_version"]
    assert manifest["config"]["roles"]["annotators"][1] == HOSTILE_LABELLING
    assert manifest["build_timestamp"] == "2026-01-01T00:00:00+00:00"


def copy_site(built: Built, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    shutil.copytree(built.out, out)
    return out


def test_an_existing_version_is_refused_without_force_and_left_untouched(
    built_site: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = copy_site(built_site, tmp_path)
    before = snapshot(out)
    code = main(["build", "--draft", str(built_site.config_path), "--out", str(out)])
    assert code == 2
    error = capsys.readouterr().err
    assert "already exists" in error and "--force" in error and "Traceback" not in error
    assert snapshot(out) == before


def test_a_failure_in_the_pdf_stage_leaves_the_site_unchanged(
    built_site: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = copy_site(built_site, tmp_path)
    before = snapshot(out)

    def broken_pdf(*args, **kwargs):
        raise RuntimeError("injected PDF failure")

    monkeypatch.setattr(site.pdf, "write_pdf", broken_pdf)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    with pytest.raises(RuntimeError, match="injected PDF failure"):
        site.build_site(load_config(built_site.config_path), out, force=True, draft=True)
    assert snapshot(out) == before
    assert not [path for path in out.iterdir() if path.name.startswith(".")]  # no staging left behind


def test_a_failed_first_build_creates_no_site(
    built_site: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_figures(*args, **kwargs):
        raise RuntimeError("injected figure failure")

    monkeypatch.setattr(site.figures, "write_figures", broken_figures)
    out = tmp_path / "new-site"
    with pytest.raises(RuntimeError):
        site.build_site(load_config(built_site.config_path), out, draft=True)
    assert not out.exists()


@pytest.mark.parametrize("version", ["../escape", "a/b", ".hidden", "..", "x/../../y", ""])
def test_version_names_are_validated(built_site: Built, tmp_path: Path, version: str) -> None:
    config = replace(load_config(built_site.config_path), version=version)
    with pytest.raises(InputError, match="dataset.version"):
        site.build_site(config, tmp_path / "site", draft=True)
    assert not (tmp_path / "site").exists()


def test_site_index_lists_every_version_newest_first(built_site: Built, tmp_path: Path) -> None:
    out = copy_site(built_site, tmp_path)
    for name in ("0.9.0", "0.10.0", "1.0.0rc1", "1.0.0", "summer-edition"):
        shutil.copytree(built_site.folder, out / name)
    (out / ".staging-leftover").mkdir()
    (out / "index.html").write_text(site.site_index_html(site.published_versions(out)), encoding="utf-8")
    page = parse(out / "index.html")
    listed = [squash(a.text()) for a in page.iter("a") if "version" in a.attrs.get("class", "")]
    assert listed == ["1.0.0", "1.0.0rc1", "0.10.0", "0.9.0", built_site.version, "summer-edition"]
    for a in page.iter("a"):
        assert (out / a.attrs["href"]).is_file(), a.attrs["href"]
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    figures = render.version_figures(ResultsView.from_json(results))
    text = squash(page.text())
    cells = {cell.heading: cell for cell in figures}
    for number in (*(cell.value for cell in figures), cells["Pooled swing (Holm p)"].detail):
        assert number in text


def test_every_link_of_the_appendix_resolves_inside_the_site(built_site: Built) -> None:
    page = parse(built_site.folder / "index.html")
    anchors = {node.attrs["id"] for node in page.iter() if "id" in node.attrs}
    for a in page.iter("a"):
        href = a.attrs["href"]
        if href.startswith("#"):
            assert href[1:] in anchors, href
        else:
            assert (built_site.folder / href).resolve().is_file(), href


def test_markdown_is_rendered_without_raw_html_or_outside_references() -> None:
    html = render.render_markdown(
        "# Title\n\n<b>raw</b> [x](javascript:alert(1)) [y](https://e.org/a) [z](#top) ![i](http://a/b.png)\n\n"
        "## Sub\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        heading_shift=2,
        drop_title=True,
    )
    assert "<b>" not in html and "&lt;b&gt;raw&lt;/b&gt;" in html
    assert "javascript:" not in html.replace("[x](javascript:alert(1))", "")
    assert 'href="https://e.org/a"' not in html and "y (https://e.org/a)" in html
    assert 'href="#top"' in html and "<img" not in html and "[image: i]" in html
    assert "<h1>" not in html and "Title" not in html and "<h4>Sub</h4>" in html and "<table>" in html


def test_version_sort_key_orders_releases_sensibly() -> None:
    versions = [
        "1.0.0",
        "0.10.0",
        "0.9.0",
        "1.0.0rc1",
        "1.0.0-rc.2",
        "2.0",
        "weird-b2",
        "weird-b10",
        "1.0.1-demo",
        "1.0.0+build.7",
        "2026.03",
    ]
    ordered = sorted(versions, key=site.version_sort_key, reverse=True)
    assert ordered == [
        "2026.03",
        "2.0",
        "1.0.1-demo",
        "1.0.0+build.7",
        "1.0.0",
        "1.0.0-rc.2",
        "1.0.0rc1",
        "0.10.0",
        "0.9.0",
        "weird-b10",
        "weird-b2",
    ]


@pytest.mark.parametrize(
    ("edit", "missing"),
    [
        ((r"^annotators = .*$", "annotators = []"), {"agreement", "neutrality", "decontaminated", "type_confusion"}),
        ((r"^references = .*$", 'references = ["delivered"]'), {"swap", "band"}),
    ],
)
def test_records_without_some_analyses_render_every_section(
    hostile_config: Path, tmp_path: Path, edit: tuple[str, str], missing: set[str]
) -> None:
    from refsens_report.audit import run_audit
    from refsens_report.results import write_results

    folder = tmp_path / "record"
    shutil.copytree(hostile_config.parent, folder)
    config_path = folder / "refsens.toml"
    text = re.sub(edit[0], edit[1], config_path.read_text(encoding="utf-8"), flags=re.M)
    config_path.write_text(text.replace("resamples = 200", "resamples = 40"), encoding="utf-8")
    write_results(run_audit(load_config(config_path)), tmp_path)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    view = ResultsView.from_json(results)
    sections, shortened = render.build_sections(view, site.figures.write_figures(view, tmp_path, figure_makers()))
    page = render.appendix_context(
        results, sections, None, [], "2026-01-01T00:00:00+00:00", "SOURCE_DATE_EPOCH", "x.pdf"
    )
    (tmp_path / "index.html").write_text(render.render_page("appendix.html", page), encoding="utf-8")
    parsed = parse(tmp_path / "index.html")
    # nothing vanishes: an analysis that does not apply is a section saying why (with whatever rows it has) or,
    # with nothing to print, a line of the summary's "Not applicable" list
    assert [node.attrs.get("id") for node in parsed.iter("section")] == expected_sections(parsed, datasheet=False)
    printed = {section.key for section in sections}
    for key in missing:
        assert key in skipped_analyses(parsed) or key in printed, key
    for section in sections:
        if section.key in missing:
            assert section.not_applicable and section.not_applicable.endswith(".")
    rows = results_rows(tmp_path)
    assert check_printed_numbers(parsed, rows) | in_downloads(shortened) == set(range(len(rows)))


def test_force_replaces_a_version_in_one_step(
    built_site: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = copy_site(built_site, tmp_path)
    other = out / "0.0.1"
    shutil.copytree(built_site.folder, other)
    before_other = snapshot(other)

    def quick_render(config, folder, stages, **options):  # the orchestration is under test, not the rendering
        (folder / "rebuilt.txt").write_text("new", encoding="utf-8")
        return json.loads((folder / "results.json").read_text(encoding="utf-8"))

    monkeypatch.setattr(site, "render_version", quick_render)
    target = site.build_site(load_config(built_site.config_path), out, force=True, draft=True)
    assert target == out / built_site.version
    assert (out / built_site.version / "rebuilt.txt").is_file()
    assert not (out / built_site.version / "index.html").exists()  # the old version is gone, not merged
    assert snapshot(other) == before_other  # other versions untouched
    assert sorted(path.name for path in out.iterdir()) == sorted(["0.0.1", built_site.version, "index.html"])
    listed = [squash(a.text()) for a in parse(out / "index.html").iter("a") if "version" in a.attrs.get("class", "")]
    assert listed == [built_site.version, "0.0.1"]


# --- a leaderboard-sized record: four outputs ------------------------------------------------------


@pytest.fixture(scope="module")
def four_outputs(hostile_config: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list]:
    """The hostile record with three more outputs (5 in all), audited with 100 replicates and rendered."""
    tmp_path = tmp_path_factory.mktemp("four-outputs")
    misses = {"model_x": 3, "model_y": 2, "model_z": 4}
    results, sections, numbered = render_with_models(hostile_config, tmp_path, misses, resamples=100, draw_figures=True)
    return tmp_path, results, sections, numbered


def test_the_leaderboard_section_shows_the_bump_chart_and_the_swing_heatmap(four_outputs) -> None:
    folder, results, sections, _ = four_outputs
    leaderboard = [section for section in sections if section.key == "leaderboard"][0]
    # the rank chart answers the question: it is the summary's figure (Figure 1), not repeated in the section
    assert [figure.key for figure in leaderboard.figures] == ["leaderboard-swings"]
    assert render.SUMMARY_FIGURE_NOTE in leaderboard.paragraphs
    page = parse(folder / "index.html")
    summary = [node for node in page.iter("section") if node.attrs.get("id") == "summary"][0]
    section = [node for node in page.iter("section") if node.attrs.get("id") == "section-leaderboard"][0]
    images = [
        node
        for node in (*summary.iter("figure"), *section.iter("figure"))
        if "figure" in node.attrs.get("class", "").split()
    ]
    assert [node.attrs["id"] for node in images] == ["figure-leaderboard-bump", "figure-leaderboard-swings"]
    assert squash(next(images[0].iter("figcaption")).text()).startswith("Figure 1. ")
    for figure in images:
        image = next(figure.iter("img"))
        assert image.attrs["alt"] and (folder / image.attrs["src"]).is_file()
        assert re.match(r"Figure \d+\. ", squash(next(figure.iter("figcaption")).text()))
    bump = ElementTree.parse(folder / "figures" / "leaderboard-bump.svg").getroot()
    labels = " ".join("".join(node.itertext()) for node in bump.iter("{http://www.w3.org/2000/svg}text"))
    for output in ResultsView.from_json(results).outputs:  # every output is labelled at the line ends
        assert labels.count(output) >= 2, output
    heatmap = (folder / "figures" / "leaderboard-swings.svg").read_text(encoding="utf-8")
    assert "F1 points" in heatmap and "Holm" in heatmap


def test_headlines_summarise_a_leaderboard_instead_of_listing_every_output(four_outputs) -> None:
    folder, results, _, _ = four_outputs
    view = ResultsView.from_json(results)
    assert view.at_scale()
    sentences = finding_sentences(parse(folder / "index.html"))
    assert all(re.search(r"\d", sentence) and sentence.endswith(".") for sentence in sentences)
    text = " ".join(sentences)
    figures = render.version_figures(view)
    cells = {cell.heading: cell.value for cell in figures}
    assert cells["Largest pooled Δ"] in text and cells["Band"] in text
    delta = [sentence for sentence in sentences if sentence.startswith("The score moves")][0]
    assert "across 5 outputs" in delta and "pooled deltas have intervals excluding zero" in delta
    assert sum(output in delta for output in view.outputs) <= 1  # the largest only, not every output's delta
    swing = [sentence for sentence in sentences if sentence.startswith("The comparison moves")][0]
    assert "pooled strict swings" in swing and "Holm family" in swing
    assert any(
        "pairs of outputs" in sentence and re.search(r"\d+ pairs? changes? order", sentence) for sentence in sentences
    )


def test_a_leaderboard_record_prints_every_results_row(four_outputs) -> None:
    folder, _, _, numbered = four_outputs
    rows = results_rows(folder)
    printed = check_printed_numbers(parse(folder / "index.html"), rows)
    floor = {index for index, row in enumerate(rows) if row["statistic"] == "holm_floor"}
    assert printed | in_downloads(numbered) == set(range(len(rows))) - floor  # the floor is in a sentence
    in_csvs = set().union(*(check_table_csv(table_csv(table), table, rows) for table in numbered))
    assert in_csvs == set(range(len(rows))) - floor
    shortened = [table for table in numbered if table.notes and "the table's CSV holds every row" in table.notes[-1]]
    assert shortened and all(len(table.rows) == PAGE_ROWS < len(table.csv.rows) for table in shortened)


def test_leaderboard_scale_tex_downloads_typeset_within_the_text_width(four_outputs, tmp_path: Path) -> None:
    """The long layouts and the paper's leaderboard (pooled, then six languages) as LaTeX, built when a TeX is."""
    _, _, _, numbered = four_outputs
    files = [path for path in site.write_tables(numbered, tmp_path / "tables") if path.suffix == ".tex"]
    assert any(path.name.endswith("-leaderboard-paper.tex") for path in files)
    for path in files:
        check_structure(path.read_text(encoding="utf-8"))
    if PDFLATEX is None:
        pytest.skip("pdflatex is not installed (make test-debs installs TeX Live)")
    assert not build_with_pdflatex(files, tmp_path / "build")


def test_figures_for_many_outputs_draw_without_warnings(four_outputs) -> None:
    import warnings

    from refsens_report import figures

    _, results, _, _ = four_outputs
    view = ResultsView.from_json(results)
    assert len(view.outputs) > figures.MAX_PANELS  # the swap and range figures lay outputs out as rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied because axes sizes collapsed"
        for draw in figure_makers():
            with figures._style():
                drawn = draw(view)
                if drawn is not None:
                    figures._svg(drawn[0])
