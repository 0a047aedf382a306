"""Score range: each output against every defensible gold (annotators and references), and their spread.

Statistics (audited items): score F1(O, L) for every annotator or reference L ≠ O, and range = max − min.
The module is named score_range so that it does not shadow the builtin; its key is "range".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    Estimate,
    Section,
    Stat,
    section,
)
from refsens_report.config import Config
from refsens_report.figures import (
    MAX_PANELS,
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    label_outputs,
    labels_width,
    language_axis,
    languages_noted,
    legend_handles,
    mpl,
    offsets,
    output_positions,
    panel_columns,
    panels_height,
    shared_xlabel,
    style,
    subplots,
    top_legend,
)
from refsens_report.formulas import F1, Spread
from refsens_report.prose import said
from refsens_report.record import POOLED
from refsens_report.tables import (
    Cell,
    Table,
    label,
    mark_repeats,
    stat_cell,
)
from refsens_report.view import ResultsView

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure


def statistics(config: Config) -> list[Stat]:
    """Each output against every defensible gold (annotators and references), and the spread of those scores."""
    stats: list[Stat] = []
    golds = tuple(dict.fromkeys(config.roles.annotators + config.roles.references))
    for rule in config.audit.rules:
        for output in config.roles.outputs:
            scores = [F1(rule, output, gold) for gold in golds if gold != output]
            for score in scores:
                stats.append(Stat("range", "score", score, rule, output, reference=score.reference))
            if scores:
                stats.append(Stat("range", "range", Spread(tuple(scores)), rule, output))
    return stats


def estimates(context: AuditContext) -> list[Estimate]:
    """The range is measured on the audited items."""
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


def applicability(context: AuditContext) -> dict[str, str | None]:
    roles = context.config.roles
    return {
        "range": None
        if len(set(roles.annotators + roles.references)) >= 2
        else "Only one defensible gold is named, so a score has no range over golds.",
    }


# --- the report ------------------------------------------------------------------------------------


def range_table(view: ResultsView) -> Table:
    """Table 5 of the paper: the score range available from the choice of reference alone."""
    rows = view.rows
    golds = list(dict.fromkeys(view.annotators + view.references))
    table_rows = []
    for language in view.languages:
        for output in view.outputs:
            for rule in view.rules:
                cells = [label(language), label(output), label(rule)]
                scores = []
                for gold in golds:
                    found = (
                        None
                        if gold == output
                        else rows.one("range", "score", rule=rule, language=language, output=output, reference=gold)
                    )
                    if gold == output:
                        cells.append(Cell(text="", numeric=True))
                    else:
                        cells.append(stat_cell(found))
                    if found is not None and found[1]["estimate"] is not None:
                        scores.append((found[1]["estimate"], gold))
                range_found = rows.one("range", "range", rule=rule, language=language, output=output)
                cells.append(stat_cell(range_found))
                # naming the labelling that gives the maximum is a choice among printed scores, not a new number
                cells.append(label(max(scores)[1] if scores else formatting.UNDEFINED))
                table_rows.append(cells)
    return Table(
        key="range",
        title="Score range from the choice of reference",
        caption=(
            "Each row holds one output fixed and varies which other defensible labelling (an annotator or a "
            "reference) is designated gold; micro-F1 in F1 points on the audited subset "
            f"({view.items_phrase('audited')} pooled). Range is the maximum minus the minimum; Max names the "
            "labelling giving the maximum."
        ),
        columns=("Language", "Output", "Rule", *(f"vs {gold}" for gold in golds), "Range", "Max"),
        rows=mark_repeats(table_rows, 2),
    )


RANGE_FILL = "#ebebeb"  # lighter than the grid, so the grid lines and the intervals stay visible over it


def _dumbbell(axis: Axes, y: float, view: ResultsView, rule: str, language: str, output: str, golds: list[str]) -> None:
    """Draw one output's score against every other gold at height y, each with its interval (one colour and a
    small offset per gold), over a grey box from the lowest to the highest score: the range."""
    scores = {
        gold: view.row("range", "score", rule=rule, language=language, output=output, reference=gold)
        for gold in golds
        if gold != output
    }
    values = [row["estimate"] for row in scores.values() if row and row["estimate"] is not None]
    spread = offsets(len(golds), 0.27)
    if values:
        axis.add_patch(
            mpl().patches.Rectangle(
                (min(values), y - 0.36),
                max(values) - min(values),
                0.72,
                facecolor=RANGE_FILL,
                edgecolor="none",
                zorder=0.8,
            )
        )
    for gold, row in scores.items():
        index = golds.index(gold)
        interval_point(axis, y - spread[index], row, *style(index))


def range_dumbbells(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Dumbbells: each output's score against every defensible gold, min to max, per language."""
    if not view.rows.has("range", "score"):
        return None
    rule = view.main_rule
    languages = figure_languages(view)
    golds = list(dict.fromkeys(view.annotators + view.references))
    if len(view.outputs) > MAX_PANELS:
        return _range_rows(view, golds)
    # as many panels a row as their titles fit (long output names: fewer, in rows)
    columns, titles = panel_columns([f"Output: {output}" for output in view.outputs], labels_width(languages))
    lines = -(-len(view.outputs) // columns)
    per_panel = height(len(languages), 0.12 + 0.06 * len(golds))
    figure, axes = subplots(
        lines, columns, figsize=(WIDTH, panels_height(per_panel, lines)), sharey=True, sharex=True, squeeze=False
    )
    for axis, output, title in zip(axes.flat, view.outputs, titles):
        positions = language_axis(axis, languages)
        for language in languages:
            _dumbbell(axis, positions[language], view, rule, language, output, golds)
        axis.set_title(title)
    for axis in list(axes.flat)[len(view.outputs) :]:
        axis.set_visible(False)
    shared_xlabel(figure, f"F1 ({rule}, F1 points)")
    top_legend(figure, legend_handles(golds), "Scored against")
    ranges = "; ".join(
        f"{output}: {said(view.row('range', 'range', rule=rule, language=POOLED, output=output))}"
        for output in view.outputs
    )
    return figure, languages_noted(
        view,
        Figure(
            key="range",
            title="Score range from the choice of gold",
            caption=(
                f"Each output's {rule} F1 (F1 points) against every other defensible gold (annotators and "
                f"references), with {view.confidence_label}, per language and pooled, on the audited subset; the grey "
                "box spans the range, from the lowest score to the highest."
            ),
            alt=f"Dumbbell plot, one panel per output, rows per language. Pooled {rule} ranges: {ranges}.",
        ),
    )


def _range_rows(view: ResultsView, golds: list[str]) -> tuple[MplFigure, Figure]:
    """Range dumbbells for many outputs: one row per output, pooled only (per language in the range table)."""
    rule = view.main_rule
    outputs = view.outputs
    figure, axis = subplots(figsize=(WIDTH, height(len(outputs), 0.12 + 0.06 * len(golds))))
    positions = output_positions(outputs)
    for output in outputs:
        _dumbbell(axis, positions[output], view, rule, POOLED, output, golds)
    label_outputs(axis, outputs)
    axis.set_xlabel(f"F1 ({rule}, pooled, F1 points)")
    top_legend(figure, legend_handles(golds), "Scored against")
    ranges = "; ".join(
        f"{output}: {said(view.row('range', 'range', rule=rule, language=POOLED, output=output))}" for output in outputs
    )
    return figure, Figure(
        key="range",
        title="Score range from the choice of gold",
        caption=(
            f"Each output's pooled {rule} F1 (F1 points) against every other defensible gold (annotators and "
            f"references), with {view.confidence_label}, on the audited subset; the grey box spans the range, from "
            "the lowest score to the highest. With this many outputs the figure shows the pooled scores only; every "
            "language's scores are in the range table."
        ),
        alt=f"Dumbbell plot, one row per output, pooled. Pooled {rule} ranges: {ranges}.",
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("range")
    return section(
        ANALYSIS, view, drawn, applies, ["range"], [range_table(view)] if applies else [], applicability_key="swap"
    )


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="range",
    title="Score range",
    question="What range of scores could a fixed output be given by choosing among the defensible golds?",
    methods="""- **Range** (audited): F1(O, L) for every annotator or reference L ≠ O; range = max − min.""",
    estimates=estimates,
    applicability=applicability,
    section=_section,
    figures=(range_dumbbells,),
)
