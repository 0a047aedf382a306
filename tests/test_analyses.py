"""Each analysis module's tables, figures and sentences, from a small hand-made results.json (no audit, no site).

The numbers below are chosen by hand, so every expected sentence and cell is known in advance: one language
("en") and pooled, strict only, annotators a and b, outputs o1, o2, o3, references delivered (primary) and
reviewer.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from refsens_report import figures, formatting
from refsens_report.analyses import (
    agreement,
    band,
    by_type,
    decontaminated,
    disagreements,
    duplicates,
    interaction,
    leaderboard,
    neutrality,
    score_range,
    swap,
    type_confusion,
)
from refsens_report.analyses.registry import ANALYSES, figure_makers
from refsens_report.methods import methods_markdown
from refsens_report.render import build_sections
from refsens_report.results import COLUMNS, SCHEMA, make_row
from refsens_report.summary import headline_sentences
from refsens_report.view import ResultsView

OUTPUTS = ["o1", "o2", "o3"]
LANGUAGES = ["en", "pooled"]
# per-type deltas (delivered minus reviewer) with their intervals: ORG moves most (o2), then LOC; PER does not
TYPE_DELTAS = {
    "LOC": {"o1": (4.0, 1.0, 7.0), "o2": (3.0, 0.5, 5.5), "o3": (1.0, -1.0, 3.0)},
    "ORG": {"o1": (-2.0, -5.0, 1.0), "o2": (-6.0, -9.0, -3.0), "o3": (0.5, -2.0, 3.0)},
    "PER": {"o1": (0.2, -1.0, 1.4), "o2": (-0.1, -1.0, 0.8), "o3": (0.0, -0.5, 0.5)},
}


def _row(
    analysis: str,
    statistic: str,
    estimate: float | None,
    ci: tuple[float, float] | None = None,
    p: float | None = None,
    holm: float | None = None,
    language: str = "pooled",
    n: int = 100,
    **labels: str,
) -> dict[str, Any]:
    low, high = ci if ci else (None, None)
    subset = {"agreement": "corpus", "decontaminated": "decontaminated"}.get(analysis, "audited")
    return make_row(
        analysis=analysis,
        statistic=statistic,
        language=language,
        subset=subset,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        p_value=p,
        p_holm=holm,
        n_items=n,
        **labels,
    )


def hand_made_rows() -> list[dict[str, Any]]:
    """Rows in the registry's order, numbers chosen by hand."""
    rows = []
    for language in LANGUAGES:
        rows.append(
            _row("agreement", "f1", 85.0, (80.0, 90.0), language=language, rule="strict", output="a", reference="b")
        )
        rows.append(_row("agreement", "identical", 62.5, (55.0, 70.0), language=language, output="a", reference="b"))
        rows.append(
            _row("agreement", "default_to_first", 75.0, (70.0, 80.0), language=language, output="a", reference="b")
        )
    for language in LANGUAGES:
        rows.append(
            _row("neutrality", "rate", 60.0, (55.0, 65.0), language=language, output="a", reference="delivered")
        )
        rows.append(
            _row("neutrality", "rate", 40.0, (35.0, 45.0), language=language, output="b", reference="delivered")
        )
        rows.append(
            _row(
                "neutrality",
                "skew",
                20.0,
                (12.0, 28.0),
                p=0.001,
                language=language,
                output="a",
                output_2="b",
                reference="delivered",
            )
        )
        rows.append(_row("neutrality", "copied", 90.0, (85.0, 95.0), language=language, reference="delivered"))
    delta = {"o1": 5.0, "o2": -1.0, "o3": 2.5}
    for language in LANGUAGES:
        for output in OUTPUTS:
            rows.append(
                _row(
                    "swap",
                    "score",
                    80.0,
                    (78.0, 82.0),
                    language=language,
                    rule="strict",
                    output=output,
                    reference="delivered",
                )
            )
            rows.append(
                _row(
                    "swap",
                    "score",
                    80.0 - delta[output],
                    (77.0, 81.0),
                    language=language,
                    rule="strict",
                    output=output,
                    reference="reviewer",
                )
            )
            rows.append(
                _row(
                    "swap",
                    "delta",
                    delta[output],
                    (delta[output] - 3, delta[output] + 3),
                    p=0.02,
                    language=language,
                    rule="strict",
                    output=output,
                    reference="delivered",
                    reference_2="reviewer",
                )
            )
    for language in LANGUAGES:
        for output in OUTPUTS:
            for gold, score in (("a", 70.0), ("b", 90.0), ("delivered", 80.0), ("reviewer", 80.0 - delta[output])):
                rows.append(
                    _row(
                        "range",
                        "score",
                        score,
                        (score - 2, score + 2),
                        language=language,
                        rule="strict",
                        output=output,
                        reference=gold,
                    )
                )
            rows.append(_row("range", "range", 20.0, (15.0, 25.0), language=language, rule="strict", output=output))
    margins = {("o1", "o2"): (3.0, -3.0), ("o1", "o3"): (1.0, 3.5), ("o2", "o3"): (-2.0, 1.5)}
    for analysis in ("interaction", "decontaminated"):
        for (first, second), (under_delivered, under_reviewer) in margins.items():
            for language in LANGUAGES:
                pair = {"rule": "strict", "output": first, "output_2": second, "language": language}
                rows.append(
                    _row(
                        analysis,
                        "margin",
                        under_delivered,
                        (under_delivered - 1, under_delivered + 1),
                        reference="delivered",
                        **pair,
                    )
                )
                rows.append(
                    _row(
                        analysis,
                        "margin",
                        under_reviewer,
                        (under_reviewer - 1, under_reviewer + 1),
                        reference="reviewer",
                        **pair,
                    )
                )
                swing = under_delivered - under_reviewer
                significant = (first, second) == ("o1", "o2")
                rows.append(
                    _row(
                        analysis,
                        "swing",
                        swing,
                        (swing - 2, swing + 2),
                        p=0.001 if significant else 0.4,
                        holm=(0.006 if significant else 0.8) if analysis == "interaction" else None,
                        reference="delivered",
                        reference_2="reviewer",
                        **pair,
                    )
                )
    rows.append(_row("band", "band", 8.0, rule="strict", output="o1"))
    rows.append(_row("band", "band", 4.0, rule="strict", output="o2"))
    rows.append(_row("band", "band", 5.5, rule="strict", output="o3"))
    rows.append(_row("band", "band", 8.0, rule="strict"))
    for policy in ("keep_first", "drop_all"):
        for language in LANGUAGES:
            rows.append(
                _row(
                    "duplicates",
                    "swing",
                    6.0 if policy == "keep_first" else 1.0,
                    (4.0, 8.0),
                    p=0.01,
                    language=language,
                    rule="strict",
                    output="o1",
                    output_2="o2",
                    reference="delivered",
                    reference_2="reviewer",
                    policy=policy,
                )
            )
    for name, moves in TYPE_DELTAS.items():
        for language in LANGUAGES:
            for output, (change, low, high) in moves.items():
                where = {"rule": "strict", "language": language, "output": output, "type": name}
                rows.append(_row("by_type", "score", 80.0, (78.0, 82.0), reference="delivered", **where))
                rows.append(_row("by_type", "score", 80.0 - change, (77.0, 81.0), reference="reviewer", **where))
                rows.append(
                    _row(
                        "by_type",
                        "delta",
                        change,
                        (low, high),
                        p=0.03,
                        reference="delivered",
                        reference_2="reviewer",
                        **where,
                    )
                )
    ranks = {"delivered": {"o1": 1.0, "o2": 3.0, "o3": 2.0}, "reviewer": {"o1": 2.0, "o2": 1.0, "o3": 3.0}}
    for language in LANGUAGES:
        for output in OUTPUTS:
            for reference in ("delivered", "reviewer"):
                where = {"rule": "strict", "language": language, "output": output, "reference": reference}
                rows.append(_row("leaderboard", "score", 80.0, (78.0, 82.0), **where))
                rows.append(_row("leaderboard", "rank", ranks[reference][output], (1.0, 3.0), **where))
        pair = {"rule": "strict", "language": language, "reference": "delivered", "reference_2": "reviewer"}
        rows.append(_row("leaderboard", "kendall_tau", -1 / 3, (-1.0, 1.0), **pair))
        rows.append(_row("leaderboard", "flips", 2.0, (0.0, 3.0), **pair))
        rows.append(_row("leaderboard", "flips_significant", 1.0, **pair))
        rows.append(_row("leaderboard", "p_rank_change", 0.87, **pair))
        rows.append(
            _row("leaderboard", "flip", 6.0, (4.0, 8.0), p=0.001, holm=0.006, output="o1", output_2="o2", **pair)
        )
        rows.append(
            _row("leaderboard", "flip", -2.5, (-4.5, -0.5), p=0.4, holm=0.8, output="o1", output_2="o3", **pair)
        )
    rows.append(_row("leaderboard", "holm_floor", 0.006))
    for language in LANGUAGES:
        for output in OUTPUTS:
            rows.append(
                _row(
                    "aggregation",
                    "score",
                    75.0,
                    (73.0, 77.0),
                    language=language,
                    rule="strict",
                    output=output,
                    reference="what_if:keep_b",
                )
            )
            rows.append(
                _row(
                    "aggregation",
                    "delta",
                    -5.0,
                    (-6.0, -4.0),
                    p=0.001,
                    language=language,
                    rule="strict",
                    output=output,
                    reference="what_if:keep_b",
                    reference_2="delivered",
                )
            )
        rows.append(
            _row(
                "aggregation",
                "skew",
                -10.0,
                (-14.0, -6.0),
                p=0.001,
                language=language,
                output="a",
                output_2="b",
                reference="what_if:keep_b",
            )
        )
    return rows


def hand_made_results() -> dict[str, Any]:
    """Return the hand-made results.json (a fresh copy each call)."""
    return {
        "schema": SCHEMA,
        "dataset": {"name": "Hand-made", "version": "1"},
        "config": {
            "roles": {"annotators": ["a", "b"], "outputs": OUTPUTS, "references": ["delivered", "reviewer"]},
            "audit": {"rules": ["strict"], "exclude_defective_duplicates": True},
        },
        "seed": 0,
        "resamples": 2000,
        "confidence": 0.95,
        "columns": list(COLUMNS),
        "rows": hand_made_rows(),
        "record": {
            "items": 120,
            "languages": ["en"],
            "items_per_language": {"en": 120},
            "labellings": {"a": 120, "b": 120},
            "subsets": {
                "corpus": {"en": 120, "pooled": 120},
                "audited": {"en": 100, "pooled": 100},
                "decontaminated": {"en": 10, "pooled": 10},
            },
            "excluded": {"defective_duplicates": 4},
        },
        "duplicates": {
            "key": "dup_key",
            "available": True,
            "groups": 2,
            "duplicated_items": 4,
            "excluded": True,
            "defective_groups": [{"key": "g1", "items": ["x1", "x2"], "reference": "reviewer", "copies": "a"}],
        },
        "type_confusion": {
            "available": True,
            "annotators": ["a", "b"],
            "cells": [
                {"type_a": "LOC", "type_b": "LOC", "count": 7},
                {"type_a": "LOC", "type_b": "ORG", "count": 3},
                {"type_a": "ORG", "type_b": "ORG", "count": 5},
            ],
        },
        "by_type": {"rules": ["strict"], "types": sorted(TYPE_DELTAS), "resamples": 2000},
        "disagreements": {
            "show_text": True,
            "text": True,
            "comparisons": [
                {
                    "kind": "references",
                    "first": "delivered",
                    "second": "reviewer",
                    "subset": "audited",
                    "file": "disagreements",
                    "items": {"en": 100, "pooled": 100},
                    "differing": {"en": 30, "pooled": 30},
                    "only_first": {"en": 25, "pooled": 25},
                    "only_second": {"en": 1200, "pooled": 1200},
                },
                {
                    "kind": "annotators",
                    "first": "a",
                    "second": "b",
                    "subset": "corpus",
                    "file": "annotator-disagreements",
                    "items": {"en": 120, "pooled": 120},
                    "differing": {"en": 45, "pooled": 45},
                    "only_first": {"en": 20, "pooled": 20},
                    "only_second": {"en": 40, "pooled": 40},
                },
            ],
        },
        "gold_errors": {
            "evidence": "outputs+references",
            "show_text": True,
            "text": True,
            "file": "gold-error-candidates",
            "references": [
                {
                    "reference": "delivered",
                    "sources": ["o1", "o2", "o3", "reviewer"],
                    "items": 100,
                    "candidates": 1,
                    "items_with_candidates": 1,
                    "kinds": {"type": 1, "boundaries": 0, "missing": 0, "spurious": 0},
                    "top": [
                        {
                            "rank": 1,
                            "score": 12.3456,
                            "id": "x1",
                            "language": "en",
                            "proposed": "type",
                            "start": 4,
                            "end": 9,
                            "reference_span": [4, 9, "LOC"],
                            "proposed_span": [4, 9, "ORG"],
                            "support": 4,
                            "opposed": 0,
                            "context": ["Met ", "Paris", " today"],
                        }
                    ],
                }
            ],
        },
        "applicability": {analysis.key: None for analysis in ANALYSES},
    }


@pytest.fixture
def results() -> dict[str, Any]:
    return hand_made_results()


@pytest.fixture
def view(results: dict[str, Any]) -> ResultsView:
    return ResultsView.from_json(results)


def _cell(table, row_label: str, column: str, label_column: int = 0):
    """Return the cell of the first row whose label column reads ``row_label``, under ``column``."""
    index = table.columns.index(column)
    return next(row[index] for row in table.rows if row[label_column].text == row_label)


def _drawn(draw, view):
    with figures._style():
        drawn = draw(view)
    assert drawn is not None
    return drawn


# --- the registry ------------------------------------------------------------------------------------


def test_the_registry_orders_sections_figures_methods_and_headlines(view: ResultsView) -> None:
    keys = [analysis.key for analysis in ANALYSES]
    # the F1 analyses keep the paper's order; an analysis added to the registry (one line) may sit between them
    paper = [
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
        "gold_errors",
        "leaderboard",
        "aggregation",
    ]
    assert [key for key in keys if key in paper] == paper
    assert len(set(keys)) == len(keys) and len({analysis.title for analysis in ANALYSES}) == len(keys)
    sections, numbered = build_sections(view, {})
    # every section of the paper's analyses, in the registry's order (another analysis without rows here says
    # why in the summary's list instead of a section)
    shown = [section.key for section in sections]
    assert shown == [key for key in keys if key in shown] and set(paper) <= set(shown)
    assert [section.number for section in sections] == list(range(2, 2 + len(shown)))
    assert [table.number for table in numbered] == list(range(1, len(numbered) + 1))
    methods = methods_markdown()
    positions = [methods.index(analysis.methods) for analysis in ANALYSES if analysis.methods]
    assert (
        positions == sorted(positions) and len(positions) == sum(1 for analysis in ANALYSES if analysis.methods) >= 10
    )
    # figure functions come in the analyses' order: each analysis's own, in its module
    owners = [draw.__module__.rsplit(".", 1)[-1] for draw in figure_makers()]
    paper_owners = [
        "neutrality",
        "swap",
        "score_range",
        "interaction",
        "band",
        "duplicates",
        "type_confusion",
        "leaderboard",
        "leaderboard",
        "aggregation",
    ]
    assert [owner for owner in owners if owner in paper_owners] == paper_owners
    assert owners == [draw.__module__.rsplit(".", 1)[-1] for analysis in ANALYSES for draw in analysis.figures]
    sentences = headline_sentences(view)
    assert sentences == [s for analysis in ANALYSES for s in analysis.headlines(view)]


def test_a_section_without_rows_says_why(results: dict[str, Any]) -> None:
    results["rows"] = [row for row in results["rows"] if row["analysis"] != "swap"]
    results["applicability"]["swap"] = "Only one reference is configured."
    section = swap.ANALYSIS.section(ResultsView.from_json(results), {})
    assert section.not_applicable == "Only one reference is configured." and not section.tables
    results["applicability"]["range"] = None
    results["rows"] = [row for row in results["rows"] if row["analysis"] != "range"]
    # range says nothing of its own: the swap's sentence explains it
    assert (
        score_range.ANALYSIS.section(ResultsView.from_json(results), {}).not_applicable
        == "Only one reference is configured."
    )


# --- each analysis -----------------------------------------------------------------------------------


def test_agreement_section_holds_the_record_and_the_agreement(view: ResultsView) -> None:
    section = agreement.ANALYSIS.section(view, {})
    assert [table.key for table in section.tables] == ["record", "agreement"]
    assert (
        section.paragraphs[1]
        == "The record holds 120 items in 1 language; each of the 2 labellings is present on every item."
    )
    partial = ResultsView.from_json({**view.data, "record": {**view.data["record"], "labellings": {"a": 120, "b": 90}}})
    assert agreement.ANALYSIS.section(partial, {}).paragraphs[1] == (
        "The record holds 120 items in 1 language; labellings present: a on 120, b on 90 items."
    )
    assert section.paragraphs[2] == "Removed before the analyses: 4 items (defective duplicates)."
    f1 = _cell(section.tables[1], "pooled", "F1 strict")
    assert (f1.text, f1.interval, f1.bold) == ("85.00", "[80.00, 90.00]", False)
    assert view.rows.rows[f1.row]["statistic"] == "f1" and view.rows.rows[f1.row]["language"] == "pooled"
    assert _cell(section.tables[1], "en", "Identical").full_text == "62.5 [55.0, 70.0]"
    assert agreement.ANALYSIS.headlines(view) == []


def test_neutrality_headline_table_and_figure(view: ResultsView) -> None:
    assert neutrality.ANALYSIS.headlines(view) == [
        "On 100 audited items in 1 language, the primary reference, delivered, reproduces a's span set exactly on "
        "60.0% [55.0, 65.0] of items and b's on 40.0% [35.0, 45.0]: a skew of +20.0 [+12.0, +28.0] points "
        "(it favours a). It equals at least one annotator's labelling on 90.0% [85.0, 95.0] of items.",
        "Where the annotators differed and no third pass fired, the primary reference equals a on "
        "75.0% [70.0, 80.0] of items.",
    ]
    table = neutrality.neutrality_table(view)
    skew = _cell(table, "pooled", "Skew")
    assert skew.full_text == "+20.0 [+12.0, +28.0]" and skew.bold
    _, model = _drawn(neutrality.neutrality_dots, view)
    assert model.key == "neutrality" and "delivered: skew +20.0 [+12.0, +28.0]" in model.alt


def test_swap_lists_every_delta_and_picks_the_largest(view: ResultsView) -> None:
    assert swap.ANALYSIS.headlines(view) == [
        "The score moves with the reference alone: holding each output fixed, its pooled strict F1 against "
        "delivered minus its F1 against reviewer is o1 +5.00 [+2.00, +8.00]; o2 −1.00 [−4.00, +2.00]; "
        "o3 +2.50 [−0.50, +5.50] F1 points. The largest per-language movement whose interval excludes zero is "
        "+5.00 [+2.00, +8.00] (o1, en); 2 of 3 per-language movements are undecided (their 95% CI includes "
        "zero).".replace("−", "-")
    ]
    assert swap.largest_pooled_delta(view)["output"] == "o1"
    table = swap.swap_table(view)
    delta = _cell(table, "o2", "Δ [95% CI]", label_column=1)
    assert delta.full_text == "-1.00 [-4.00, +2.00]" and not delta.bold
    _, model = _drawn(swap.swap_forest, view)
    assert "o1: +5.00 [+2.00, +8.00]" in model.alt


def test_range_names_the_labelling_that_gives_the_maximum(view: ResultsView) -> None:
    table = score_range.range_table(view)
    assert table.columns[-2:] == ("Range", "Max")
    first = next(row for row in table.rows if row[0].text == "pooled" and row[1].text == "o1")
    assert first[-1].text == "b" and first[-2].full_text == "20.00 [15.00, 25.00]"


def test_interaction_headline_reads_the_holm_family_at_the_configured_level(results: dict[str, Any]) -> None:
    view = ResultsView.from_json(results)
    [sentence] = interaction.ANALYSIS.headlines(view)
    assert sentence == (
        "The comparison moves too: the margin o1 − o2 under delivered minus the same margin under reviewer is "
        "+6.00 [+4.00, +8.00] F1 points pooled (strict; paired swing, Holm p <0.01). 2 of 6 swings in the Holm "
        "family have Holm p < 0.05."
    )
    lenient = copy.deepcopy(results)
    lenient["confidence"] = 0.9
    for row in lenient["rows"]:
        if row["analysis"] == "interaction" and row["statistic"] == "swing" and row["p_holm"] == 0.8:
            row["p_holm"] = 0.07  # significant at 0.1, not at 0.05
    lenient_view = ResultsView.from_json(lenient)
    [sentence] = interaction.ANALYSIS.headlines(lenient_view)
    assert sentence.endswith("6 of 6 swings in the Holm family have Holm p < 0.1.")
    figure, model = _drawn(interaction.swing_forest, lenient_view)
    assert "(p < 0.1)" in model.caption
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["delivered vs reviewer", "Holm p < 0.1 (*)", "Holm p ≥ 0.1"]


def test_interaction_tables_carry_holm_p(view: ResultsView) -> None:
    [table] = interaction.interaction_main_tables(view)
    swing = next(row for row in table.rows if row[0].text == "o1 − o2" and row[1].text == "pooled")
    assert [cell.full_text for cell in swing[-2:]] == ["+6.00 [+4.00, +8.00]", "<0.01"]
    assert swing[-1].field == "p_holm"


def test_band_counts_the_margins_beyond_it(view: ResultsView) -> None:
    assert band.ANALYSIS.headlines(view) == [
        "The strict reference-sensitivity band is ±8.00 F1 points (the far end of the 95% CI of o1's delta "
        "between delivered and reviewer: +5.00 [+2.00, +8.00]): 0 of 1 observed margin under delivered (pooled; "
        "one language) lies beyond it with its whole 95% CI, 0 are undecided (the interval crosses the band's "
        "edge); a margin inside the band could come from the choice of reference alone."
    ]
    table, tallies = band.band_versus_margins(view)
    assert tallies == [
        ("o1 − o2", 0, 1, "8.00"),
        ("o1 − o3", 0, 1, "8.00"),
        ("o2 − o3", 0, 1, "8.00"),
    ]  # one language: once
    assert {row[3].text for row in table.rows} == {"within the band"}
    section = band.ANALYSIS.section(view, {})
    assert [t.key for t in section.tables] == ["band", "band-margins"] and len(section.paragraphs) == 4


def test_decontaminated_headline_and_unadjusted_p(view: ResultsView) -> None:
    assert decontaminated.ANALYSIS.headlines(view) == [
        "On the decontaminated subset (10 items where delivered copies neither annotator), the pooled strict "
        "swing of o1 − o2 between delivered and reviewer, the largest on the audited subset (+6.00 [+4.00, +8.00]), "
        "is +6.00 [+4.00, +8.00] F1 points."
    ]
    [table] = decontaminated.decontaminated_tables(view)
    assert table.columns[-1] == "p" and "not part of the Holm family" in table.caption


def test_duplicates_say_what_the_key_found(view: ResultsView) -> None:
    assert duplicates.ANALYSIS.headlines(view) == [
        "1 duplicate group with copied references was found and excluded before the analyses."
    ]
    section = duplicates.ANALYSIS.section(view, {})
    assert section.paragraphs[1] == "Duplicate key 'dup_key': 2 groups holding 4 items; 1 defective."
    assert [t.key for t in section.tables] == ["duplicates", "defective-groups"]
    assert "keep_first, keep_last, keep_all, drop_all" in section.tables[0].caption
    policies = [row[0].text for row in section.tables[0].rows if not row[0].repeated]
    assert policies == ["keep_first", "drop_all"]
    _, model = _drawn(duplicates.duplicates_multiples, view)
    assert "keep_first: +6.00 [+4.00, +8.00]" in model.alt


def test_by_type_names_the_types_that_move_most(view: ResultsView) -> None:
    """ORG moves most (o2's interval excludes zero), then LOC (o1 and o2); PER moves for no output."""
    assert by_type.ANALYSIS.headlines(view) == [
        "By span type (strict, pooled), the type that moves most when delivered is exchanged (the largest |Δ| "
        "whose interval excludes zero) is ORG under reviewer (o2 -6.00 [-9.00, -3.00] F1 points)."
    ]
    section = by_type.ANALYSIS.section(view, {})
    assert section.paragraphs[1] == (
        "Under reviewer instead of delivered (strict, pooled; Δ = F1 against delivered − F1 against reviewer), "
        "2 of 3 types move for at least one output (an "
        "interval excluding zero); most: ORG (o2 -6.00 [-9.00, -3.00]; 1 of 3 outputs); then LOC "
        "(o1 +4.00 [+1.00, +7.00]; 2 of 3 outputs)."
    )
    [table] = section.tables
    assert table.columns == ("References", "Type", "Language", "o1: Δ [95% CI]", "o2: Δ [95% CI]", "o3: Δ [95% CI]")
    assert [(row[1].text, row[2].text) for row in table.rows] == [
        ("ORG", "en"),
        ("ORG", "pooled"),
        ("LOC", "en"),
        ("LOC", "pooled"),
        ("PER", "en"),
        ("PER", "pooled"),
    ]
    assert [row[1].repeated for row in table.rows] == [False, True] * 3
    pooled_org = table.rows[1]
    assert [cell.full_text for cell in pooled_org[3:]] == [
        "-2.00 [-5.00, +1.00]",
        "-6.00 [-9.00, -3.00]",
        "+0.50 [-2.00, +3.00]",
    ]
    assert pooled_org[4].bold and not pooled_org[3].bold
    printed = view.rows.rows[pooled_org[4].row]
    assert (printed["analysis"], printed["type"], printed["output"], printed["language"]) == (
        "by_type",
        "ORG",
        "o2",
        "pooled",
    )
    # the CSV holds every type's score against each reference and its delta, per language
    full = table.csv
    assert full.columns == (
        "Rule",
        "Language",
        "Type",
        "Output",
        "F1 vs delivered",
        "F1 vs reviewer",
        "Δ delivered−reviewer",
    )
    assert len(full.rows) == len(TYPE_DELTAS) * len(LANGUAGES) * len(OUTPUTS)
    loc = next(row for row in full.rows if [c.text for c in row[:4]] == ["strict", "pooled", "LOC", "o3"])
    assert [cell.full_text for cell in loc[4:]] == [
        "80.00 [78.00, 82.00]",
        "79.00 [77.00, 81.00]",
        "+1.00 [-1.00, +3.00]",
    ]


def test_by_type_says_nothing_about_a_type_too_rare_under_a_reference(results: dict[str, Any]) -> None:
    """ORG moves most but has 4 spans under reviewer: below [report] min_type_spans (30) it no longer leads; it is
    listed as too rare to say, and every row prints the spans of its type under both references."""
    spans = {"delivered": {"LOC": 120, "ORG": 40, "PER": 300}, "reviewer": {"LOC": 110, "ORG": 4, "PER": 310}}
    results["by_type"]["spans"] = {reference: {"en": counts, "pooled": counts} for reference, counts in spans.items()}
    view = ResultsView.from_json(results)
    assert by_type.ANALYSIS.headlines(view) == [
        "By span type (strict, pooled; types with at least 30 spans under delivered and reviewer), the type that "
        "moves most when delivered is exchanged (the largest |Δ| whose interval excludes zero) is LOC under reviewer "
        "(o1 +4.00 [+1.00, +7.00] F1 points)."
    ]
    section = by_type.ANALYSIS.section(view, {})
    assert section.paragraphs[1] == (
        "Under reviewer instead of delivered (strict, pooled; Δ = F1 against delivered − F1 against reviewer), "
        "1 of 2 types with at least 30 spans under delivered and reviewer moves for at least one output (an "
        "interval excluding zero); most: LOC (o1 +4.00 [+1.00, +7.00]; 2 of 3 outputs). 1 more type is too rare "
        "to say (the table's caption lists it)."
    )
    [table] = section.tables
    assert table.columns[:5] == ("References", "Type", "Language", "Spans delivered", "Spans reviewer")
    assert [[cell.text for cell in row[1:5]] for row in table.rows] == [
        ["LOC", "en", "120", "110"],
        ["LOC", "pooled", "120", "110"],
        ["PER", "en", "300", "310"],
        ["PER", "pooled", "300", "310"],
    ]
    assert (
        "Only types with at least 30 spans under the primary and the alternative (pooled; [report] "
        "min_type_spans) are ranked"
    ) in table.caption
    assert (
        "1 type too rare to say under delivered vs reviewer (fewer than 30 spans under one of them; spans "
        "under delivered / reviewer): ORG (40 / 4)."
    ) in table.caption
    assert table.csv.columns[4:6] == ("Spans delivered", "Spans reviewer")
    # a lower threshold lets ORG lead again
    results["config"]["report"] = {"min_type_spans": 4}
    assert "is ORG under reviewer" in by_type.ANALYSIS.headlines(ResultsView.from_json(results))[0]


def test_by_type_at_scale_counts_the_outputs_that_move_and_sums_the_rest(results: dict[str, Any]) -> None:
    """Many outputs: the largest delta and how many outputs move; many types: the top ones and 'other'."""
    from refsens_report.tables import table_csv

    outputs = [f"s{k}" for k in range(6)]
    rows = [row for row in results["rows"] if row["analysis"] != "by_type"]
    for number in range(40):
        for k, output in enumerate(outputs):
            change = (number - 20) / 4 + k / 100  # T00 moves most (negative), then T39, ...; decided when |Δ| > 2
            where = {"rule": "strict", "language": "pooled", "output": output, "type": f"T{number:02d}"}
            rows.append(
                _row(
                    "by_type",
                    "delta",
                    change,
                    (change - 2, change + 2),
                    reference="delivered",
                    reference_2="reviewer",
                    **where,
                )
            )
    results["rows"] = rows
    results["config"]["roles"]["outputs"] = outputs
    view = ResultsView.from_json(results)
    [table] = by_type.ANALYSIS.section(view, {}).tables
    assert table.columns == ("References", "Type", "Language", "Output", "Largest Δ [95% CI]", "Outputs moving")
    shown = [row[1].text for row in table.rows]
    assert shown == ["T00", "T39", "T01", "T38", "T02", "T37", "T03", "T36", "T04", "T35", "other (30 types)"]
    first = table.rows[0]
    assert [first[3].text, first[4].full_text, first[5].text] == ["s0", "-5.00 [-7.00, -3.00]", "6"]
    other = table.rows[-1]
    assert other[5].text == f"{sum(abs((n - 20) / 4 + k / 100) > 2 for n in range(5, 35) for k in range(6))}"
    assert other[3].text == "s0 (T05)" and other[4].full_text == "-3.75 [-5.75, -1.75]"
    assert "the 'other' row sums the rest" in table.caption
    assert len(table_csv(table).splitlines()) == 1 + 40 * 6  # every type and output in the CSV


def test_disagreements_count_the_items_and_link_the_pages(results: dict[str, Any]) -> None:
    view = ResultsView.from_json(results)
    section = disagreements.ANALYSIS.section(view, {})
    [table] = section.tables
    assert [[cell.text for cell in row] for row in table.rows] == [
        ["delivered vs reviewer", "en", "100", "30", "25", "1,200"],
        ["delivered vs reviewer", "pooled", "100", "30", "25", "1,200"],
        ["a vs b", "en", "120", "45", "20", "40"],
        ["a vs b", "pooled", "120", "45", "20", "40"],
    ]
    assert [href for href, _ in section.links] == ["disagreements.html", "annotator-disagreements.html"]
    assert section.links[0][1] == (
        "Where delivered and reviewer differ, item by item (30 items), the most impact first: "
        "disagreements.html; every item in disagreements.jsonl and disagreements.csv."
    )
    # the swap section links the references' page, the agreement section the annotators'
    assert [href for href, _ in swap.ANALYSIS.section(view, {}).links] == ["disagreements.html"]
    assert [href for href, _ in agreement.ANALYSIS.section(view, {}).links] == ["annotator-disagreements.html"]
    results["disagreements"]["show_text"] = False
    assert "show_text = false" in disagreements.ANALYSIS.section(ResultsView.from_json(results), {}).paragraphs[1]
    del results["disagreements"]
    assert not swap.ANALYSIS.section(ResultsView.from_json(results), {}).links


def test_type_confusion_table_and_heatmap(view: ResultsView) -> None:
    table = type_confusion.type_confusion_table(view)
    assert table.columns == ("A \\ B", "LOC", "ORG")
    assert [[cell.text for cell in row] for row in table.rows] == [["LOC", "7", "3"], ["ORG", "0", "5"]]
    _, model = _drawn(type_confusion.type_heatmap, view)
    assert model.alt == "Heatmap of 2 by 2 types; 15 boundary-matched spans, 3 with different types."


def test_leaderboard_sentences_tables_and_figures(view: ResultsView) -> None:
    assert not view.at_scale()
    assert leaderboard.ANALYSIS.headlines(view) == [
        "Under reviewer instead of delivered, 2 of 3 pairs of outputs change order (strict, pooled; "
        "2 [0, 3]); 1 significantly after Holm; tau-b -0.33 [-1.00, 1.00]; the whole ranking differs in "
        "87.0% of bootstrap replicates."
    ]
    section = leaderboard.ANALYSIS.section(view, {})
    assert [t.key for t in section.tables] == ["leaderboard-paper", "leaderboard", "rank-agreement", "flips"]
    flips = section.tables[3]
    assert [row[2].text for row in flips.rows if row[1].text == "pooled"] == ["o1 − o2", "o1 − o3"]
    _, bump = _drawn(leaderboard.leaderboard_bump, view)
    assert "3 of 3 outputs change rank at least once" in bump.alt
    figure, heatmap = _drawn(leaderboard.swing_heatmap, view)
    assert "2 framed as order flips (2 flips pooled), 1 Holm-significant" in heatmap.alt
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["order flips", "Holm p < 0.05"]


def test_leaderboard_does_not_apply_to_two_outputs(results: dict[str, Any]) -> None:
    results["rows"] = [row for row in results["rows"] if row["analysis"] != "leaderboard"]
    results["applicability"]["leaderboard"] = "A leaderboard needs three or more scored outputs."
    section = leaderboard.ANALYSIS.section(ResultsView.from_json(results), {})
    assert section.not_applicable == "A leaderboard needs three or more scored outputs." and not section.tables
    assert leaderboard.ANALYSIS.headlines(ResultsView.from_json(results)) == []


def test_many_types_show_the_most_frequent_and_sum_the_rest(results: dict[str, Any]) -> None:
    """Beyond TOP_TYPES the page shows the most frequent types and 'other'; the CSV keeps every type whole."""
    from refsens_report.tables import table_csv

    long_name = "L" * 5000
    cells = [{"type_a": f"T{k:02d}", "type_b": f"T{k:02d}", "count": 100 - k} for k in range(30)]
    cells += [{"type_a": "T00", "type_b": "T29", "count": 4}, {"type_a": long_name, "type_b": long_name, "count": 500}]
    results["type_confusion"]["cells"] = cells
    view = ResultsView.from_json(results)
    table = type_confusion.type_confusion_table(view)
    shown = [row[0].text for row in table.rows]
    assert len(shown) == type_confusion.TOP_TYPES == len(table.columns) - 1
    assert shown[-1] == "other (16 types)" and shown[0] == "L" * 39 + "…"  # the longest name, cut
    assert shown[1:-1] == [f"T{k:02d}" for k in range(14)]  # the 14 most frequent, sorted
    other = table.rows[-1]
    assert other[-1].text == f"{sum(100 - k for k in range(14, 30)):,}"  # the rare types' diagonal, summed
    assert table.rows[1][-1].text == "4"  # T00 -> T29 lands in "other"
    assert "CSV holds every one of the 31 types" in table.caption
    lines = table_csv(table).splitlines()
    assert len(lines) == 32 and long_name in lines[0] and lines[1].startswith(long_name)
    _, model = _drawn(type_confusion.type_heatmap, view)
    assert model.alt.startswith("Heatmap of 31 by 31 types") and "the other 16 are summed" in model.caption


def test_beyond_many_types_the_confusion_csv_lists_the_cells_that_occur(results: dict[str, Any]) -> None:
    """Above MANY_TYPES types no table is types x types: the CSV lists each pair that occurs, with its count."""
    from refsens_report.counts import MANY_TYPES
    from refsens_report.tables import table_csv

    n = MANY_TYPES * 50  # 3,000 types: a square CSV would hold 9 million cells
    cells = [{"type_a": f"T{k:04d}", "type_b": f"T{(k + k % 2) % n:04d}", "count": 1 + k % 7} for k in range(n)]
    results["type_confusion"]["cells"] = cells
    table = type_confusion.type_confusion_table(ResultsView.from_json(results))
    assert len(table.rows) == type_confusion.TOP_TYPES and table.rows[-1][0].text.startswith("other (")
    lines = table_csv(table).splitlines()
    assert lines[0] == "A: a,B: b,Spans" and len(lines) == n + 1
    assert lines[1:3] == ["T0000,T0000,1", "T0001,T0002,2"]
    assert (
        f"lists every pair of the {n:,} types that occurs" in table.caption
        or f"lists every pair of the {n} types that occurs" in table.caption
    )


def test_table_csvs_neutralise_formula_labels_and_keep_numbers(results: dict[str, Any]) -> None:
    """A type named like a formula is text in the table's CSV; numbers, even negative ones, stay numbers."""
    import csv
    import io

    from refsens_report.tables import table_csv

    results["type_confusion"]["cells"] = [{"type_a": '=HYPERLINK("http://x")', "type_b": "@SUM(1)", "count": 2}]
    rows = list(csv.reader(io.StringIO(table_csv(type_confusion.type_confusion_table(ResultsView.from_json(results))))))
    assert rows[0][1:] == ['B: b: =HYPERLINK("http://x")', "B: b: @SUM(1)"]  # header: starts with the group
    assert [row[0] for row in rows[1:]] == ['\'=HYPERLINK("http://x")', "'@SUM(1)"]
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row)
    swap_rows = list(csv.DictReader(io.StringIO(table_csv(swap.swap_table(ResultsView.from_json(results))))))
    o2 = next(row for row in swap_rows if row["Output"] == "o2" and row["Language"] == "pooled")
    # numbers are numbers: the estimate and its bounds in columns of their own, negative ones not prefixed
    assert [o2[f"Strict: Δ {part}"] for part in ("estimate", "ci_low", "ci_high")] == ["-1.0", "-4.0", "2.0"]


def test_captions_name_the_holm_family_that_was_tested(results: dict[str, Any]) -> None:
    """With the adjacent family, captions say which swings were tested; untested swings print '—' as Holm p."""
    view = ResultsView.from_json(results)
    assert "Holm-adjusted over all 6 swings" in interaction.interaction_main_tables(view)[0].caption
    for row in results["rows"]:
        if row["analysis"] == "interaction" and row["statistic"] == "swing" and row["output_2"] == "o3":
            row["p_holm"] = None  # outside the family
    results["interaction"] = {"family": "adjacent", "tests": 2, "ranking": ["o1", "o2", "o3"], "holm_floor": 0.002}
    view = ResultsView.from_json(results)
    assert interaction.holm_family_size(view) == 2
    phrase = interaction.holm_family_phrase(view)
    assert phrase.startswith(
        "the 2 swings of the adjacent family (the pairs of outputs adjacent in delivered's ranking"
    )
    [table] = interaction.interaction_main_tables(view)
    assert phrase in table.caption
    untested = next(row for row in table.rows if row[0].text == "o1 − o3" and row[1].text == "pooled")
    assert untested[-1].text == "—" and untested[-1].field == "p_holm"
    assert phrase in leaderboard.flips_table(view).caption


def test_the_paper_leaderboard_has_the_primary_first_and_its_order(results: dict[str, Any]) -> None:
    """One row per ranked output in the primary reference's order; F1 with interval and rank per reference."""
    view = ResultsView.from_json(results)
    table = leaderboard.paper_table(view)
    assert leaderboard.ANALYSIS.section(view, {}).tables[0].key == table.key == "leaderboard-paper"
    assert table.groups == (("", 1), ("delivered", 3), ("reviewer", 2))  # the primary reference first
    assert table.columns == ("Output", "F1 [95% CI]", "Rank", "Tie group", "F1 [95% CI]", "Rank")
    assert [row[0].text for row in table.rows] == ["o1", "o3", "o2"]  # ranks 1, 2, 3 under delivered
    rows = results["rows"]
    for row in table.rows:
        output = row[0].text
        for offset, reference in ((1, "delivered"), (4, "reviewer")):
            score, rank = row[offset], row[offset + 1]
            where = {
                "analysis": "leaderboard",
                "statistic": "score",
                "rule": "strict",
                "language": "pooled",
                "output": output,
                "reference": reference,
            }
            assert all(rows[score.row][key] == value for key, value in where.items())
            assert (score.field, score.value, score.full_text) == ("estimate", 80.0, "80.00 [78.00, 82.00]")
            assert rows[rank.row]["statistic"] == "rank" and rows[rank.row]["reference"] == reference
            assert rank.field == "point" and not rank.interval and float(rank.value).is_integer()
            assert (rank.ci_low, rank.ci_high) == (1.0, 3.0)  # kept for the CSV
            assert rank.text == formatting.format_row(rows[rank.row]).estimate
    # with several languages: pooled first, then each language in its own primary order
    german = [{**row, "language": "de"} for row in rows if row["analysis"] == "leaderboard" and row["language"] == "en"]
    for row in german:
        if row["statistic"] == "rank" and row["reference"] == "delivered":
            row["estimate"] = {"o1": 3.0, "o2": 1.0, "o3": 2.0}[row["output"]]
    results["rows"] = rows + german
    results["record"]["languages"] = ["de", "en"]
    table = leaderboard.paper_table(ResultsView.from_json(results))
    assert table.columns[:2] == ("Language", "Output")
    assert [(row[0].text, row[1].text) for row in table.rows] == [
        ("pooled", "o1"),
        ("pooled", "o3"),
        ("pooled", "o2"),
        ("de", "o2"),
        ("de", "o3"),
        ("de", "o1"),
        ("en", "o1"),
        ("en", "o3"),
        ("en", "o2"),
    ]
    assert [row[0].repeated for row in table.rows[:3]] == [False, True, True]


def test_figure_alt_texts_say_one_swing_and_one_margin_in_the_singular(results: dict[str, Any]) -> None:
    """One pair of outputs: the alt texts count it through formatting ('1 swing is', '0 of 1 margin lies')."""
    results["rows"] = [
        row
        for row in results["rows"]
        if row["analysis"] != "interaction" or (row["output"], row["output_2"]) == ("o1", "o2")
    ]
    view = ResultsView.from_json(results)
    _, forest = _drawn(interaction.swing_forest, view)
    assert forest.alt.startswith("Forest plot of the 1 largest pooled swing of 1, one panel per rule")
    assert forest.alt.endswith("; 1 of the 1 swing is Holm-significant.")
    _, margins = _drawn(band.band_margins, view)
    assert margins.alt.endswith("; 0 of 1 margin lies beyond the band.")
