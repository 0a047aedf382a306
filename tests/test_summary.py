"""The summary that opens the appendix, one-language tables, the annex of complete tables, column widths."""

from __future__ import annotations

import copy
import json
import re

import pytest
from conftest import Built

from refsens_report import render, summary, tables
from refsens_report.methods import methods_markdown
from refsens_report.record import POOLED
from refsens_report.tables import Cell, Table
from refsens_report.view import ResultsView


def demo_results(built_site: Built) -> dict:
    return json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))


def one_language(results: dict, language: str) -> dict:
    """Return results reduced to one language: its rows and the pooled ones (as an audit of it would have)."""
    reduced = copy.deepcopy(results)
    reduced["rows"] = [row for row in reduced["rows"] if row["language"] in (language, POOLED)]
    reduced["record"]["languages"] = [language]
    return reduced


def test_a_verdict_per_alternative_reference_with_its_rows(built_site: Built) -> None:
    view = ResultsView.from_json(demo_results(built_site))
    verdicts = summary.verdicts(view)
    assert [verdict.reference for verdict in verdicts] == view.references[1:]
    for verdict in verdicts:
        deltas = [
            row
            for _, row in view.rows.select(
                "swap",
                "delta",
                rule=view.main_rule,
                language=POOLED,
                reference=view.primary,
                reference_2=verdict.reference,
            )
        ]
        assert {row["output"] for row in deltas} <= {
            row["output"] for row in verdict.rows if row["statistic"] == "delta"
        }
        assert all(row["output"] in verdict.text for row in deltas)


def test_with_many_outputs_a_verdict_names_the_range_and_the_ranking() -> None:
    rows = []
    outputs = [f"system_{n}" for n in range(5)]
    for n, output in enumerate(outputs):
        rows.append(
            {
                "analysis": "swap",
                "statistic": "delta",
                "rule": "strict",
                "language": POOLED,
                "output": output,
                "output_2": "",
                "reference": "gold",
                "reference_2": "clean",
                "subset": "audited",
                "policy": "",
                "estimate": n - 1.5,
                "ci_low": n - 2.0,
                "ci_high": n - 1.0,
                "p_value": 0.01,
                "p_holm": None,
                "n_items": 100,
                "type": "",
            }
        )
    where = {
        "rule": "strict",
        "language": POOLED,
        "output": "",
        "output_2": "",
        "reference": "gold",
        "reference_2": "clean",
        "subset": "audited",
        "policy": "",
        "p_value": None,
        "p_holm": None,
        "n_items": 100,
        "type": "",
    }
    rows += [
        {"analysis": "leaderboard", "statistic": "flips", **where, "estimate": 3, "ci_low": 1, "ci_high": 5},
        {
            "analysis": "leaderboard",
            "statistic": "flips_significant",
            **where,
            "estimate": 1,
            "ci_low": None,
            "ci_high": None,
        },
        {
            "analysis": "leaderboard",
            "statistic": "kendall_tau",
            **where,
            "estimate": 0.6,
            "ci_low": 0.4,
            "ci_high": 0.8,
        },
    ]
    rows += [
        {
            "analysis": "leaderboard",
            "statistic": "rank",
            **where,
            "output": output,
            "reference": "gold",
            "reference_2": "",
            "estimate": n + 1.0,
            "ci_low": n + 1.0,
            "ci_high": n + 1.0,
        }
        for n, output in enumerate(outputs)
    ]
    view = ResultsView.from_json(
        {
            "rows": rows,
            "record": {"languages": ["en"]},
            "config": {
                "roles": {"annotators": [], "outputs": outputs, "references": ["gold", "clean"]},
                "audit": {"rules": ["strict"]},
            },
        }
    )
    (verdict,) = summary.verdicts(view)
    assert verdict.reference == "clean" and verdict.primary == "gold"
    # the lowest and the highest delta with their intervals, how many exclude zero, tau-b and the flips
    assert "-1.50 [-2.00, -1.00] (system_0)" in verdict.text and "+2.50 [+2.00, +3.00] (system_4)" in verdict.text
    assert "3 of 5 intervals exclude zero" in verdict.text  # [-1, 0] and [0, 1] touch zero
    assert "tau-b 0.60 [0.40, 0.80]" in verdict.text and "3 [1, 5] of 10 pairs change order, 1 of them" in verdict.text


def test_an_inapplicable_analysis_is_a_line_not_a_section(built_site: Built) -> None:
    results = demo_results(built_site)
    results["rows"] = [row for row in results["rows"] if row["analysis"] != "decontaminated"]
    results["applicability"]["decontaminated"] = "No item is decontaminated."
    body = render.build_body(ResultsView.from_json(results), {})
    assert "decontaminated" not in [section.key for section in body.sections]
    assert ("The decontaminated subset", "No item is decontaminated.") in [
        (line.title, line.reason) for line in body.summary.not_applicable
    ]
    # sections are numbered without gaps
    assert [section.number for section in body.sections] == list(range(2, 2 + len(body.sections)))


def test_one_language_prints_each_row_once(built_site: Built) -> None:
    results = demo_results(built_site)
    language = results["record"]["languages"][0]
    body = render.build_body(ResultsView.from_json(one_language(results, language)), {})
    printed = [table for table in body.tables if tables.LANGUAGE_COLUMN in (table.csv or table).columns]
    assert not printed, [table.title for table in printed]  # no table keeps a Language column
    rows = ResultsView.from_json(one_language(results, language)).rows.rows
    shown = {
        cell.row for table in body.tables for row in (table.csv or table).rows for cell in row if cell.row is not None
    }
    assert shown and all(rows[index]["language"] == POOLED for index in shown if rows[index]["analysis"] != "agreement")
    notes = [note for table in body.tables for note in table.notes]
    assert f"The record has one language ({language}): every row is pooled over it." in notes
    # with several languages nothing is dropped
    several = render.build_body(ResultsView.from_json(results), {})
    assert any(tables.LANGUAGE_COLUMN in table.columns for table in several.tables)


def test_one_language_keeps_the_labels_of_the_pooled_rows() -> None:
    view = ResultsView.from_json({"rows": [], "record": {"languages": ["en"]}})
    rows = []
    for output in ("a", "b"):
        for language in ("en", POOLED):
            rows.append([Cell(text=output), Cell(text=language), Cell(text="1.00", numeric=True)])
    table = Table(
        key="t", title="T", caption="", columns=("Output", "Language", "F1"), rows=tables.mark_repeats(rows, 1)
    )
    shown = tables.one_language(table, view)
    assert shown.columns == ("Output", "F1")
    assert [(row[0].text, row[0].repeated) for row in shown.rows] == [("a", False), ("b", False)]


def test_the_full_pdf_adds_the_complete_tables_as_an_annex(built_site: Built) -> None:
    results = demo_results(built_site)
    view = ResultsView.from_json(results)
    assert render.build_body(view, {}).annex == []  # summary, the default
    results["config"]["report"]["pdf"] = "full"
    body = render.build_body(ResultsView.from_json(results), {})
    shortened = [table for table in body.tables if table.csv is not None]
    assert shortened, "the demo has a table longer than a page"
    assert [table.number for table in body.annex] == [table.number for table in shortened]
    for complete, table in zip(body.annex, shortened):
        assert len(complete.rows) == len(table.csv.rows) > len(table.rows)
        assert complete.title.endswith("(complete)") and complete.anchor != table.anchor
    page = render.appendix_context(
        results,
        body.sections,
        None,
        [],
        "2026-01-01T00:00:00+00:00",
        "SOURCE_DATE_EPOCH",
        "x.pdf",
        body.summary,
        body.annex,
    )
    html = render.render_page("appendix.html", page)
    assert 'id="section-annex"' in html and html.count("(complete).") == len(body.annex)


def test_the_methods_text_names_no_file_the_reader_does_not_have() -> None:
    text = methods_markdown()
    for name in ("method.md", "contract", "docs/", "bench/", ".py"):  # method.md: docs/method.md, or any spelling
        assert name not in text.lower(), name
    numbers = [int(number) for number in re.findall(r"^(\d+)\. \*\*", text, re.M)]
    assert numbers == list(range(1, len(numbers) + 1))  # the choices are numbered in order


def test_every_column_is_at_least_as_wide_as_its_longest_word() -> None:
    long_words = ("Language", "ADDRESS", "[+12.04,", "interpreteval-CflairWglove_lstmCrf")
    rows = [[Cell(text=word), Cell(text="93.03", interval="[92.29, 93.73]", numeric=True)] for word in long_words]
    table = Table(key="t", title="T", caption="", columns=("Output", "Swing [95% CI]"), rows=tuple(map(tuple, rows)))
    layout = table.print_layout
    assert len(layout.parts) == 1 and not layout.key
    widths = [float(width) for width in layout.parts[0].widths]
    assert sum(widths) == pytest.approx(100, abs=0.2)
    longest = [max(tables.print_width(word) for word in long_words), tables.INTERVAL_EM * tables.print_width("[92.29,")]
    kind = tables.COMPACT_TYPE if layout.css_class else tables.TABLE_TYPE
    for width, word in zip(widths, longest):  # each column's share of the line holds its longest word
        assert width / 100 * tables.TEXT_WIDTH_PT >= kind.pt(word)
