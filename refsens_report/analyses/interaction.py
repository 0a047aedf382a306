"""Interaction between reference and output: margins between outputs under each reference, and the swing.

Statistics (audited items): margin = F1(Oᵢ, R) − F1(Oⱼ, R) and swing = margin(Rₖ) − margin(Rₗ), each swing
with its bootstrap p; Holm's correction over the swing family is this analysis's post-processing. The
decontaminated and duplicates analyses recompute the same statistics on other item sets.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING, Any, Mapping

from refsens_report import formatting
from refsens_report.analyses.base import (
    Analysis,
    AuditContext,
    Estimate,
    Rows,
    Section,
    Stat,
    section,
)
from refsens_report.bootstrap import holm
from refsens_report.config import Config
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    INK,
    OKABE_ITO,
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    language_axis,
    languages_noted,
    mpl,
    shared_xlabel,
    subplots,
    top_legend,
    zero_line,
)  # fmt: skip
from refsens_report.formulas import F1
from refsens_report.prose import count_phrase, pair_label, said
from refsens_report.record import POOLED
from refsens_report.tables import (
    Table,
    label,
    long_layout,
    mark_repeats,
    p_cell,
    stat_cell,
)
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def statistics(config: Config, analysis: str = "interaction", policy: str = "") -> list[Stat]:
    """Margins between every pair of outputs under each reference, and the swing between references."""
    stats: list[Stat] = []
    for rule in config.audit.rules:
        for first, second in combinations(config.roles.outputs, 2):
            references = [r for r in config.roles.references if r not in (first, second)]
            margin = {r: F1(rule, first, r) - F1(rule, second, r) for r in references}
            for reference in references:
                stats.append(
                    Stat(analysis, "margin", margin[reference], rule, first, second, reference, policy=policy)
                )
            for left, right in combinations(references, 2):
                stats.append(
                    Stat(analysis, "swing", margin[left] - margin[right], rule, first, second, left, right, policy)
                )
    return stats


def estimates(context: AuditContext) -> list[Estimate]:
    """The interaction is measured on the audited items."""
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


def add_holm(rows: list[dict[str, Any]]) -> None:
    """Holm-adjust the family of every interaction swing row with a p-value, in place."""
    family = [
        row for row in rows
        if row["analysis"] == "interaction" and row["statistic"] == "swing" and row["p_value"] is not None
    ]  # fmt: skip
    for row, adjusted in zip(family, holm([row["p_value"] for row in family])):
        row["p_holm"] = adjusted


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """Holm-adjust the swing family in place; no new rows."""
    add_holm(rows)
    return []


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "interaction": None if len(context.config.roles.outputs) >= 2 else "Only one output is configured, so there is no margin between outputs.",
    }  # fmt: skip


# --- the report ------------------------------------------------------------------------------------


def interaction_table(
    view: ResultsView, analysis: str = "interaction", policy: str | None = None, p_column: str = "p_holm"
) -> Table:
    """Tables 6 and 7 of the paper: margins under each reference and the paired swing (also per subset/policy)."""
    rows = view.rows
    ref_pairs = view.reference_pairs()
    out_pairs = view.output_pairs()
    several_pairs = len(out_pairs) > 1
    p_title = "Holm p" if p_column == "p_holm" else "p"
    columns: list[str] = ["Outputs"] if several_pairs else []
    columns += ["Language", "Rule", *view.references]
    for first, second in ref_pairs:
        suffix = "" if len(ref_pairs) == 1 else f" {first}−{second}"
        columns += [f"Swing{suffix} [{view.confidence_label}]", f"{p_title}{suffix}"]
    label_columns = 3 if several_pairs else 2
    groups = (("", label_columns), (f"Margin under [{view.confidence_label}]", len(view.references)), ("", 2 * len(ref_pairs)))
    where: dict[str, str] = {"policy": policy} if policy is not None else {}
    table_rows = []
    for output, output_2 in out_pairs:
        for language in view.languages:
            for rule in view.rules:
                cells = [label(f"{output} − {output_2}")] if several_pairs else []
                cells += [label(language), label(rule)]
                for reference in view.references:
                    cells.append(
                        stat_cell(
                            rows.one(
                                analysis, "margin", rule=rule, language=language, output=output,
                                output_2=output_2, reference=reference, **where,
                            )  # fmt: skip
                        )
                    )
                for first, second in ref_pairs:
                    found = rows.one(
                        analysis, "swing", rule=rule, language=language, output=output, output_2=output_2,
                        reference=first, reference_2=second, **where,
                    )  # fmt: skip
                    cells += [stat_cell(found), p_cell(found, p_column)]
                table_rows.append(cells)
    return Table(
        key=analysis if policy is None else f"{analysis}-{policy}",
        title="",
        caption="",
        columns=tuple(columns),
        groups=groups,
        rows=mark_repeats(table_rows, label_columns),
    )


def interaction_is_long(view: ResultsView) -> bool:
    """Return whether the interaction tables (and those built like them) are laid out long."""
    return long_layout(view, len(view.references) + 2 * len(view.reference_pairs()))


def interaction_tables_long(
    view: ResultsView, analysis: str = "interaction", policy: str | None = None, p_column: str = "p_holm"
) -> tuple[Table, Table]:
    """The interaction at leaderboard scale, as two long tables: margins per pair of outputs, and swings per
    pair of outputs and pair of references (rules side by side)."""
    rows = view.rows
    where: dict[str, str] = {"policy": policy} if policy is not None else {}
    p_title = "Holm p" if p_column == "p_holm" else "p"
    suffix = "" if policy is None else f"-{policy}"
    margin_rows = []
    swing_rows = []
    for output, output_2 in view.output_pairs():
        for language in view.languages:
            for rule in view.rules:
                cells = [label(f"{output} − {output_2}"), label(language), label(rule)]
                cells += [stat_cell(rows.one(analysis, "margin", rule=rule, language=language, output=output,
                                             output_2=output_2, reference=reference, **where))
                          for reference in view.references]  # fmt: skip
                margin_rows.append(cells)
        for first, second in view.reference_pairs():
            for language in view.languages:
                cells = [label(f"{output} − {output_2}"), label(f"{first} vs {second}"), label(language)]
                for rule in view.rules:
                    found = rows.one(analysis, "swing", rule=rule, language=language, output=output,
                                     output_2=output_2, reference=first, reference_2=second, **where)  # fmt: skip
                    cells += [stat_cell(found), p_cell(found, p_column)]
                swing_rows.append(cells)
    margins = Table(
        key=f"{analysis}-margins{suffix}",
        title="",
        caption="",
        columns=("Outputs", "Language", "Rule", *view.references),
        groups=(("", 3), (f"Margin under [{view.confidence_label}]", len(view.references))),
        rows=mark_repeats(margin_rows, 2),
        widths=(28, 10, 8),
    )
    swing_columns: list[str] = ["Outputs", "References", "Language"]
    swing_groups: list[tuple[str, int]] = [("", 3)]
    for rule in view.rules:
        swing_columns += [f"Swing [{view.confidence_label}]", p_title]
        swing_groups.append((rule.capitalize(), 2))
    swings = Table(
        key=f"{analysis}-swings{suffix}",
        title="",
        caption="",
        columns=tuple(swing_columns),
        groups=tuple(swing_groups),
        rows=mark_repeats(swing_rows, 2),
        widths=(30, 14, 10),
    )
    return margins, swings


def interaction_main_tables(view: ResultsView) -> list[Table]:
    """The interaction tables: the paper's one table, or margins and swings in long layout for a leaderboard."""
    if not interaction_is_long(view):
        return [interaction_main_table(view)]
    family = len(view.rows.select("interaction", "swing"))
    margins, swings = interaction_tables_long(view)
    return [
        replace(
            margins,
            title="Margins between the outputs under each reference",
            caption=(
                "Margin between two outputs (first minus second, F1 points) under each reference, per language "
                f"and pooled, on the audited subset ({view.items_phrase('audited')} pooled). Bold marks "
                "intervals excluding zero."
            ),
        ),
        replace(
            swings,
            title="Does the order of the outputs survive a change of reference?",
            caption=(
                "Swing: margin under the first reference minus margin under the second, recomputed inside every "
                "bootstrap resample, per pair of outputs and pair of references. Holm p is the two-sided "
                f"bootstrap p-value of the swing, Holm-adjusted over all {family} swings (every language, pooled, "
                "every rule and pair). Bold marks intervals excluding zero."
            ),
        ),
    ]


def interaction_main_table(view: ResultsView) -> Table:
    """Interaction on the audited subset, with Holm-adjusted p over the whole swing family."""
    first, second = view.outputs[:2] if len(view.outputs) > 1 else (view.outputs[0], "")
    family = len(view.rows.select("interaction", "swing"))
    return replace(
        interaction_table(view),
        title="Does the ranking of the outputs survive a change of reference?",
        caption=(
            f"Margin is F1({first}) − F1({second}) in F1 points under each reference, on the audited subset "
            f"({view.items_phrase('audited')} pooled). Swing is the paired interaction: margin under the first "
            "reference minus margin under the second, recomputed inside every bootstrap resample. Holm p is the "
            f"two-sided bootstrap p-value of the swing, Holm-adjusted over all {family} swings (every language, "
            "pooled, and every rule). Bold marks intervals excluding zero."
        ),
    )


def swing_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of the swing per language and rule; Holm-significant swings filled, others hollow."""
    matplotlib = mpl()
    if not view.rows.has("interaction", "swing") or not view.output_pairs():
        return None
    output, output_2 = view.output_pairs()[0]
    first, second = view.reference_pairs()[0]
    languages = figure_languages(view)
    figure, axes = subplots(1, len(view.rules), figsize=(WIDTH, height(len(languages))), sharey=True,
                                sharex=True, squeeze=False)  # fmt: skip
    significant = 0
    for axis, rule in zip(axes[0], view.rules):
        positions = language_axis(axis, languages)
        zero_line(axis)
        for language in languages:
            row = view.row("interaction", "swing", rule=rule, language=language, output=output, output_2=output_2,
                       reference=first, reference_2=second)  # fmt: skip
            holm = row["p_holm"] if row else None
            filled = view.significant(holm)
            significant += filled
            interval_point(axis, positions[language], row, OKABE_ITO[0], "o", filled=filled)
            if row and row["estimate"] is not None and filled:
                axis.annotate("*", (row["ci_high"] if row["ci_high"] is not None else row["estimate"],
                                    positions[language]), xytext=(3, -2.5), textcoords="offset points",
                              fontsize=9, color=INK, fontweight="bold")  # fmt: skip
        axis.set_title(rule.capitalize())
    handles = [
        matplotlib.lines.Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, label=f"Holm p < {view.level} (*)"),
        matplotlib.lines.Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, markerfacecolor="white", label=f"Holm p ≥ {view.level}"),
    ]
    shared_xlabel(figure, "Swing (F1 points)")
    top_legend(figure, handles)
    pooled = view.row("interaction", "swing", rule=view.main_rule, language=POOLED, output=output,
                  output_2=output_2, reference=first, reference_2=second)  # fmt: skip
    return figure, languages_noted(view, Figure(
        key="swing",
        title="Swing of the comparison between references",
        caption=(
            f"Swing = (F1({output}) − F1({output_2}) under {first}) − (the same margin under {second}), in F1 "
            f"points with {view.confidence_label}, per language and pooled, on the audited subset. Filled points "
            f"with an asterisk are significant after Holm correction over the whole swing family (p < {view.level})."
        ),
        alt=(
            f"Forest plot of swings, one panel per rule. Pooled {view.main_rule} swing {said(pooled)}, Holm p "
            f"{formatting.p_value(pooled['p_holm'] if pooled else None)}; {significant} of the plotted swings "
            "are Holm-significant."
        ),
    ))


def pooled_swing(view: ResultsView) -> Row | None:
    """Return the pooled swing (main rule) for the first pair of outputs and of references."""
    if not view.output_pairs() or not view.reference_pairs():
        return None
    (output, output_2), (first, second) = view.output_pairs()[0], view.reference_pairs()[0]
    return view.row("interaction", "swing", rule=view.main_rule, language=POOLED, output=output,
                output_2=output_2, reference=first, reference_2=second)  # fmt: skip


def floor_caveat(view: ResultsView) -> str:
    """Return ', but ... no Holm p can fall below F' when the Holm floor makes 'not significant' empty, else ''."""
    floor = view.row("leaderboard", "holm_floor")
    if floor is None or floor["estimate"] is None or floor["estimate"] < view.alpha:
        return ""
    family = len(view.rows.select("interaction", "swing"))
    return (
        f" (with {formatting.count(family)} swings and {formatting.count(view.data.get('resamples'))} replicates no "
        f"Holm p can fall below {said(floor)}, so this says nothing about the swings)"
    )


def _swing_summary(view: ResultsView) -> str:
    """Return the interaction finding for many pairs: the largest pooled swing and the Holm tally."""
    rule = view.main_rule
    pooled = [row for _, row in view.rows.select("interaction", "swing", rule=rule, language=POOLED)
              if row["estimate"] is not None]  # fmt: skip
    family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
    significant = sum(view.significant(row["p_holm"]) for row in family)
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in pooled)
    largest = max(pooled, key=lambda row: abs(row["estimate"]))
    return (
        f"The comparison moves too: of {len(pooled)} pooled {rule} swings (every pair of outputs under every pair "
        f"of references), {excluding} have intervals excluding zero; the largest is {said(largest)} F1 points "
        f"({largest['output']} − {largest['output_2']}, {pair_label(largest)}; Holm p "
        f"{formatting.p_value(largest['p_holm'])}). {significant} of {formatting.count(len(family))} swings in the "
        f"Holm family have Holm p < {view.level}{floor_caveat(view)}."
    )


def headlines(view: ResultsView) -> list[str]:
    """The pooled swing of the first pairs and the Holm tally, or the largest swing at scale."""
    swing = pooled_swing(view)
    if swing is None:
        return []
    if view.at_scale():
        return [_swing_summary(view)]
    family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
    significant = sum(view.significant(row["p_holm"]) for row in family)
    return [
        f"The comparison moves too: the margin {swing['output']} − {swing['output_2']} under "
        f"{swing['reference']} minus the same margin under {swing['reference_2']} is {said(swing)} F1 points "
        f"pooled ({view.main_rule}; paired swing, Holm p {formatting.p_value(swing['p_holm'])}); "
        f"{count_phrase(significant, len(family), 'swings')} in the Holm family have Holm p < {view.level}."
    ]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("interaction")
    return section(ANALYSIS, view, drawn, applies, ["swing"], interaction_main_tables(view) if applies else [])


ANALYSIS = Analysis(
    key="interaction",
    title="Interaction between reference and output",
    question="Does the comparison between two outputs survive a change of reference? The swing is the "
    "paired interaction, tested inside every bootstrap replicate and Holm-corrected over all swings.",
    methods="""- **Interaction** (audited): margin = F1(Oᵢ, R) − F1(Oⱼ, R); swing = margin(Rₖ) − margin(Rₗ).""",
    estimates=estimates,
    finish=finish,
    applicability=applicability,
    section=_section,
    figures=(swing_forest,),
    headlines=headlines,
)
