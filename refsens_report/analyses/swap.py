"""Reference swap: each output held fixed and scored against each reference, and the paired deltas.

Statistics (audited items): score F1(O, R) and delta F1(O, Rᵢ) − F1(O, Rⱼ) for every pair of references.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Mapping

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import (
    Analysis,
    AuditContext,
    Estimate,
    Section,
    Stat,
    section,
)
from refsens_report.config import Config
from refsens_report.figures import (
    MARKERS,
    MAX_PANELS,
    OKABE_ITO,
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    label_outputs,
    language_axis,
    languages_noted,
    legend_handles,
    output_positions,
    plain,
    shared_xlabel,
    subplots,
    top_legend,
    zero_line,
)  # fmt: skip
from refsens_report.formulas import F1
from refsens_report.prose import count_phrase, pair_label, said
from refsens_report.record import POOLED
from refsens_report.tables import Table, label, long_layout, mark_repeats, stat_cell
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def statistics(config: Config) -> list[Stat]:
    """Each output scored against each reference, and the paired difference between references."""
    stats: list[Stat] = []
    references = config.roles.references
    for rule in config.audit.rules:
        for output in config.roles.outputs:
            others = [reference for reference in references if reference != output]
            for reference in others:
                stats.append(Stat("swap", "score", F1(rule, output, reference), rule, output, reference=reference))
            for first, second in combinations(others, 2):
                delta = F1(rule, output, first) - F1(rule, output, second)
                stats.append(Stat("swap", "delta", delta, rule, output, reference=first, reference_2=second))
    return stats


def estimates(context: AuditContext) -> list[Estimate]:
    """The swap is measured on the audited items."""
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "swap": None if len(context.config.roles.references) >= 2 else "Only one reference is configured: each output's score against it is shown, but there is no other reference to swap it with.",
    }  # fmt: skip


# --- the report ------------------------------------------------------------------------------------


def swap_table(view: ResultsView) -> Table:
    """Tables 2 and 4 of the paper: each output scored against each reference, and the swap deltas."""
    rows = view.rows
    pairs = view.reference_pairs()
    if long_layout(view, len(view.rules) * (len(view.references) + len(pairs))):
        return swap_table_long(view)
    columns: list[str] = ["Language", "Output"]
    groups: list[tuple[str, int]] = [("", 2)]
    for rule in view.rules:
        columns += list(view.references)
        for first, second in pairs:
            columns.append(
                f"Δ [{view.confidence_label}]" if len(pairs) == 1 else f"Δ {first}−{second} [{view.confidence_label}]"
            )
        groups.append((rule.capitalize(), len(view.references) + len(pairs)))
    table_rows = []
    for language in view.languages:
        for output in view.outputs:
            cells = [label(language), label(output)]
            for rule in view.rules:
                for reference in view.references:
                    found = (
                        None
                        if reference == output
                        else rows.one("swap", "score", rule=rule, language=language, output=output, reference=reference)
                    )
                    cells.append(stat_cell(found))
                for first, second in pairs:
                    cells.append(
                        stat_cell(
                            rows.one(
                                "swap", "delta", rule=rule, language=language, output=output,
                                reference=first, reference_2=second,
                            )  # fmt: skip
                        )
                    )
            table_rows.append(cells)
    return Table(
        key="swap",
        title="Effect of exchanging the reference",
        caption=(
            f"Each output is held fixed and scored (micro-F1, F1 points) against each reference on the audited "
            f"subset ({view.items_phrase('audited')} pooled). Δ is the score against the first reference minus "
            "the score against the second: the movement attributable to the reference alone, with its paired "
            "bootstrap interval. Bold marks intervals excluding zero."
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 1),
    )


def swap_table_long(view: ResultsView) -> Table:
    """The swap table at leaderboard scale: one row per output, pair of references, rule and language."""
    rows = view.rows
    table_rows = []
    for output in view.outputs:
        for first, second in view.reference_pairs():
            for rule in view.rules:
                for language in view.languages:
                    cells = [label(output), label(f"{first} vs {second}"), label(rule), label(language)]
                    for reference in (first, second):
                        cells.append(stat_cell(None if reference == output else rows.one(
                            "swap", "score", rule=rule, language=language, output=output, reference=reference)))  # fmt: skip
                    cells.append(stat_cell(rows.one("swap", "delta", rule=rule, language=language, output=output,
                                                    reference=first, reference_2=second)))  # fmt: skip
                    table_rows.append(cells)
    return Table(
        key="swap",
        title="Effect of exchanging the reference",
        caption=(
            f"Each output is held fixed and scored (micro-F1, F1 points) against two references on the audited "
            f"subset ({view.items_phrase('audited')} pooled), for every pair of references (first vs second, in "
            "config order). Δ is the score against the first reference minus the score against the second: the "
            "movement attributable to the reference alone, with its paired bootstrap interval. Bold marks "
            "intervals excluding zero."
        ),
        columns=("Output", "References", "Rule", "Language", f"F1 vs first [{view.confidence_label}]",
                 f"F1 vs second [{view.confidence_label}]", f"Δ [{view.confidence_label}]"),  # fmt: skip
        rows=mark_repeats(table_rows, 3),
    )


def swap_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of reference-swap deltas with intervals, per language and output, one panel per rule."""
    if not view.rows.has("swap", "delta"):
        return None
    first, second = view.reference_pairs()[0]
    if len(view.outputs) > MAX_PANELS:
        return _swap_rows(view, first, second)
    languages = figure_languages(view)
    figure, axes = subplots(1, len(view.rules), figsize=(WIDTH, height(len(languages), 0.14 + 0.1 * len(view.outputs))),
                                sharey=True, squeeze=False)  # fmt: skip
    offsets = np.linspace(-0.18, 0.18, len(view.outputs)) if len(view.outputs) > 1 else [0.0]
    for axis, rule in zip(axes[0], view.rules):
        positions = language_axis(axis, languages)
        zero_line(axis)
        for index, output in enumerate(view.outputs):
            for language in languages:
                row = view.row("swap", "delta", rule=rule, language=language, output=output,
                           reference=first, reference_2=second)  # fmt: skip
                interval_point(axis, positions[language] - offsets[index], row,
                                OKABE_ITO[index % 8], MARKERS[index % 8])  # fmt: skip
        axis.set_title(rule.capitalize())
    shared_xlabel(figure, plain(f"Δ = F1 vs {first} − F1 vs {second} (F1 points)"))
    top_legend(figure, legend_handles(view.outputs), "Output")
    pooled = "; ".join(
        f"{output}: {said(view.row('swap', 'delta', rule=view.main_rule, language=POOLED, output=output, reference=first, reference_2=second))}"
        for output in view.outputs
    )
    return figure, languages_noted(view, Figure(
        key="swap",
        title="Reference-swap deltas",
        caption=(
            f"Movement of each output's score when the reference {first} is exchanged for {second}, in F1 points, "
            f"with {view.confidence_label} (paired bootstrap), per language and pooled, on the audited subset "
            f"({formatting.count(view.subset_size('audited'))} items pooled). Points right of zero: the output "
            f"scores higher against {first}."
        ),
        alt=(
            f"Forest plot, one panel per matching rule, rows per language with pooled last. Each output's "
            f"swap delta is a point with its interval. Pooled {view.main_rule} deltas: {pooled}."
        ),
    ))


def _swap_rows(view: ResultsView, first: str, second: str) -> tuple[MplFigure, Figure]:
    """Swap forest for many outputs: one row per output, pooled only, one panel per rule."""
    outputs = view.outputs
    figure, axes = subplots(1, len(view.rules), figsize=(WIDTH, height(len(outputs), 0.22)), sharey=True,
                             squeeze=False)  # fmt: skip
    positions = output_positions(outputs)
    for axis, rule in zip(axes[0], view.rules):
        zero_line(axis)
        for output in outputs:
            row = view.row("swap", "delta", rule=rule, language=POOLED, output=output, reference=first,
                       reference_2=second)  # fmt: skip
            interval_point(axis, positions[output], row, OKABE_ITO[0], "o")
        label_outputs(axis, outputs)
        axis.set_title(rule.capitalize())
    shared_xlabel(figure, plain(f"Δ = F1 vs {first} − F1 vs {second} (F1 points, pooled)"))
    pooled = "; ".join(
        f"{output}: {said(view.row('swap', 'delta', rule=view.main_rule, language=POOLED, output=output, reference=first, reference_2=second))}"
        for output in outputs
    )
    return figure, Figure(
        key="swap",
        title="Reference-swap deltas",
        caption=(
            f"Movement of each output's score when the reference {first} is exchanged for {second}, in F1 points, "
            f"with {view.confidence_label} (paired bootstrap), pooled over languages, on the audited subset "
            f"({formatting.count(view.subset_size('audited'))} items). Points right of zero: the output scores "
            "higher against the first reference. With this many outputs the figure shows the primary pair of "
            "references, pooled; every language and pair of references is in the swap table."
        ),
        alt=(
            f"Forest plot, one panel per matching rule, one row per output. Pooled {view.main_rule} deltas: "
            f"{pooled}."
        ),
    )


def largest_pooled_delta(view: ResultsView) -> Row | None:
    """Return the pooled swap delta (main rule) with the largest absolute estimate."""
    candidates = [
        row
        for _, row in view.rows.select("swap", "delta", rule=view.main_rule, language=POOLED)
        if row["estimate"] is not None
    ]
    return max(candidates, key=lambda row: abs(row["estimate"]), default=None)


def _delta_summary(view: ResultsView, deltas: list[Row]) -> str:
    """Return the swap finding for many outputs: the largest pooled delta and how many exclude zero."""
    rule = view.main_rule
    defined = [row for row in deltas if row["estimate"] is not None]
    largest = largest_pooled_delta(view)
    outputs = len({row["output"] for row in defined})
    pairs = len({(row["reference"], row["reference_2"]) for row in defined})
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in defined)
    sentence = (
        f"The score moves with the reference alone: across {outputs} outputs and {pairs} pair"
        f"{'s' if pairs != 1 else ''} of references, the pooled {rule} F1 of a fixed output moves by up to "
        f"{said(largest)} F1 points ({largest['output']}, {pair_label(largest)})" if largest else
        f"The score moves with the reference alone (pooled {rule})"
    )
    sentence += f"; {count_phrase(excluding, len(defined), 'pooled deltas')} have intervals excluding zero."
    per_language = [row for _, row in view.rows.select("swap", "delta", rule=rule)
                    if row["language"] != POOLED and row["estimate"] is not None]  # fmt: skip
    if len(view.languages) > 2 and per_language:
        sentence += largest_movement(view, per_language, with_pair=True)
    return sentence


def largest_movement(view: ResultsView, per_language: list[Row], with_pair: bool = False) -> str:
    """Return the sentence on the largest per-language delta, decided on intervals, not point estimates.

    The largest |delta| among those whose interval excludes zero (a movement the interval confirms), and how
    many per-language deltas are undecided (their interval includes zero, or there is none).
    """
    decided = [row for row in per_language if formatting.excludes_zero(row["ci_low"], row["ci_high"])]
    undecided = len(per_language) - len(decided)
    tail = (f"; {count_phrase(undecided, len(per_language), 'per-language movements')} are undecided (their "
            f"{view.confidence_label} includes zero)")  # fmt: skip
    if not decided:
        return f" No per-language movement is decided: all {len(per_language)} intervals include zero."
    top = max(decided, key=lambda row: abs(row["estimate"]))
    where = f"{top['output']}, {top['language']}" + (f", {pair_label(top)}" if with_pair else "")
    return f" The largest per-language movement whose interval excludes zero is {said(top)} ({where}){tail}."


def headlines(view: ResultsView) -> list[str]:
    """How far a fixed output's pooled score moves with the reference: every delta, or the largest at scale."""
    rule = view.main_rule
    deltas = [row for _, row in view.rows.select("swap", "delta", rule=rule, language=POOLED)]
    if not deltas:
        return []
    if view.at_scale():
        return [_delta_summary(view, deltas)]
    several = len({(row["reference"], row["reference_2"]) for row in deltas}) > 1
    parts = [
        f"{row['output']}" + (f" ({row['reference']} vs {row['reference_2']})" if several else "") + f" {said(row)}"
        for row in deltas
        if row["estimate"] is not None
    ]
    per_language = [
        row
        for _, row in view.rows.select("swap", "delta", rule=rule)
        if row["language"] != POOLED and row["estimate"] is not None
    ]
    first_ref, second_ref = deltas[0]["reference"], deltas[0]["reference_2"]
    against = "the first reference minus its F1 against the second" if several else (
        f"{first_ref} minus its F1 against {second_ref}")
    sentence = (
        f"The score moves with the reference alone: holding each output fixed, its pooled {rule} F1 against "
        f"{against} is {'; '.join(parts)} F1 points."
    )
    if per_language:
        sentence += largest_movement(view, per_language)
    return [sentence]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("swap")
    return section(ANALYSIS, view, drawn, applies, ["swap"], [swap_table(view)] if applies else [])


ANALYSIS = Analysis(
    key="swap",
    title="Reference swap",
    question="How far does a fixed output's score move when only the reference changes?",
    methods="""- **Swap** (audited): score F1(O, R); delta F1(O, Rᵢ) − F1(O, Rⱼ) for references i < j in config order.""",
    estimates=estimates,
    applicability=applicability,
    section=_section,
    figures=(swap_forest,),
    headlines=headlines,
)
