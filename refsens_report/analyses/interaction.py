"""Interaction between reference and output: margins between outputs under each reference, and the swing.

Statistics (audited items): margin = F1(Oᵢ, R) − F1(Oⱼ, R) and swing = margin(Rₖ) − margin(Rₗ), each swing
with its bootstrap p; Holm's correction over the swing family is this analysis's post-processing. The
decontaminated and duplicates analyses recompute the same statistics on other item sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    Estimate,
    IndexColumn,
    ReleaseRows,
    Rows,
    Section,
    Stat,
    pooled_rows,
    section,
)
from refsens_report.bootstrap import holm, holm_floor
from refsens_report.config import Config
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    FIGURE_ROWS,
    INK,
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
    mpl,
    outputs_label,
    shared_xlabel,
    style,
    subplots,
    top_legend,
    zero_line,
)
from refsens_report.formulas import F1, Env
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
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure


def statistics(config: Config, analysis: str = "interaction", policy: str = "") -> list[Stat]:
    """Margins between every pair of outputs under each reference, and the swing between references."""
    stats: list[Stat] = []
    for rule in config.audit.rules:
        for first, second in combinations(config.roles.outputs, 2):
            references = [r for r in config.roles.references if r not in (first, second)]
            margin = {r: F1(rule, first, r) - F1(rule, second, r) for r in references}
            for reference in references:
                stats.append(Stat(analysis, "margin", margin[reference], rule, first, second, reference, policy=policy))
            for left, right in combinations(references, 2):
                stats.append(
                    Stat(analysis, "swing", margin[left] - margin[right], rule, first, second, left, right, policy)
                )
    return stats


def estimates(context: AuditContext) -> list[Estimate]:
    """The interaction is measured on the audited items."""
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


FamilyKey = tuple[str, str, str, str, str, str]  # rule, language, output, output_2, reference, reference_2


def family_key(row: Mapping[str, Any]) -> FamilyKey:
    """Return the labels that name a swing row in the Holm family."""
    return (row["rule"], row["language"], row["output"], row["output_2"], row["reference"], row["reference_2"])


def primary_ranking(context: AuditContext) -> list[str]:
    """Return the outputs ranked by pooled F1 under the primary reference, highest first (the adjacent family's order).

    Point estimates on the audited items under the main rule (strict when computed, as the report's headlines);
    the same numbers as the swap's pooled ``score`` rows. Outputs whose score is undefined, and the primary
    reference itself when it is also an output, are left out; equal scores keep config order.
    """
    config, mask = context.config, context.subsets.audited
    primary, rule = config.roles.primary, config.audit.rules[0]
    if mask is None or not mask.any():
        return []
    scores = {}
    for output in config.roles.outputs:
        if output == primary:
            continue
        score = F1(rule, output, primary)
        sums = {column: float(context.counts.values(column)[mask].sum()) for column in score.columns()}
        value = float(score.evaluate(Env(lambda column: np.array([[sums[column]]]), np.array([[mask.sum()]]))).item())
        if not np.isnan(value):
            scores[output] = value
    return sorted(scores, key=lambda output: -scores[output])  # stable: ties in config order


def family_pairs(config: Config, ranking: Sequence[str]) -> set[frozenset[str]] | None:
    """Return the pairs of outputs the configured family tests (None: every pair)."""
    if config.audit.family != "adjacent":
        return None
    return {frozenset(pair) for pair in zip(ranking, ranking[1:])}


def holm_family(context: AuditContext) -> list[FamilyKey]:
    """Return the swing rows Holm's correction runs over, in results order (docs/method.md section 4, `[audit] family`).

    The configured family (family_members) on the outputs as ranked by ``primary_ranking``, over every
    language of the audited items, and pooled.
    """
    config, mask = context.config, context.subsets.audited
    if mask is None or not mask.any():
        return []
    codes = set(context.record.table.language_names()[mask].tolist())
    groups = [language for language in context.record.languages if language in codes] + [POOLED]
    return family_members(config, primary_ranking(context) if config.audit.family == "adjacent" else (), groups)


def family_members(config: Config, ranking: Sequence[str], groups: Sequence[str]) -> list[FamilyKey]:
    """Return the swing rows of the configured Holm family, in results order, for every language group given.

    all: every swing row of the interaction (every pair of outputs and of references); primary: those whose
    first reference is the primary one (primary versus each alternative); adjacent: of those, the pairs of
    outputs adjacent in ``ranking``. Every rule. The demo counts its family with it before any record exists.
    """
    family = config.audit.family
    pairs = family_pairs(config, ranking) if family == "adjacent" else None
    keys: list[FamilyKey] = []
    for stat in statistics(config):
        if stat.statistic != "swing":
            continue
        if family != "all" and stat.reference != config.roles.primary:
            continue
        if pairs is not None and frozenset((stat.output, stat.output_2)) not in pairs:
            continue
        keys += [(stat.rule, group, stat.output, stat.output_2, stat.reference, stat.reference_2) for group in groups]
    return keys


def add_holm(rows: list[dict[str, Any]], family: Sequence[FamilyKey] | None = None) -> int:
    """Holm-adjust the swing rows of the family (every interaction swing when None) in place; return its size.

    Rows outside the family keep their raw ``p_value`` and an empty ``p_holm``; a family row whose p-value is
    undefined (fewer than half of its replicates defined) is left out of the correction.
    """
    members = None if family is None else set(family)
    tested = [
        row
        for row in rows
        if row["analysis"] == "interaction"
        and row["statistic"] == "swing"
        and row["p_value"] is not None
        and (members is None or family_key(row) in members)
    ]
    for row, adjusted in zip(tested, holm([row["p_value"] for row in tested])):
        row["p_holm"] = adjusted
    return len(tested)


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """Holm-adjust the configured family of swings in place; no new rows. Its size goes into results.json."""
    family = context.config.audit.family
    size = add_holm(rows, holm_family(context))
    resamples = int(context.config.audit.resamples)
    context.notes["interaction"] = {
        "family": family,
        "tests": size,
        "ranking": primary_ranking(context) if family == "adjacent" else [],
        "resamples": resamples,
        "holm_floor": holm_floor(size, resamples) if size else None,
    }
    return []


def summary(context: AuditContext) -> dict[str, Any] | None:
    """results.json "interaction": the Holm family (name, size, the ranking adjacency was read from) and its floor."""
    return context.notes.get("interaction")


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "interaction": None
        if len(context.config.roles.outputs) >= 2
        else "Only one output is configured, so there is no margin between outputs.",
    }


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
    groups = (
        ("", label_columns),
        (f"Margin under [{view.confidence_label}]", len(view.references)),
        ("", 2 * len(ref_pairs)),
    )
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
                                analysis,
                                "margin",
                                rule=rule,
                                language=language,
                                output=output,
                                output_2=output_2,
                                reference=reference,
                                **where,
                            )
                        )
                    )
                for first, second in ref_pairs:
                    found = rows.one(
                        analysis,
                        "swing",
                        rule=rule,
                        language=language,
                        output=output,
                        output_2=output_2,
                        reference=first,
                        reference_2=second,
                        **where,
                    )
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
                cells += [
                    stat_cell(
                        rows.one(
                            analysis,
                            "margin",
                            rule=rule,
                            language=language,
                            output=output,
                            output_2=output_2,
                            reference=reference,
                            **where,
                        )
                    )
                    for reference in view.references
                ]
                margin_rows.append(cells)
        for first, second in view.reference_pairs():
            for language in view.languages:
                cells = [label(f"{output} − {output_2}"), label(f"{first} vs {second}"), label(language)]
                for rule in view.rules:
                    found = rows.one(
                        analysis,
                        "swing",
                        rule=rule,
                        language=language,
                        output=output,
                        output_2=output_2,
                        reference=first,
                        reference_2=second,
                        **where,
                    )
                    cells += [stat_cell(found), p_cell(found, p_column)]
                swing_rows.append(cells)
    margins = Table(
        key=f"{analysis}-margins{suffix}",
        title="",
        caption="",
        columns=("Outputs", "Language", "Rule", *view.references),
        groups=(("", 3), (f"Margin under [{view.confidence_label}]", len(view.references))),
        rows=mark_repeats(margin_rows, 2),
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
    )
    return margins, swings


FAMILY_SAID = {
    "adjacent": "the pairs of outputs adjacent in {primary}'s ranking, {primary} against each other reference",
    "primary": "every pair of outputs, {primary} against each other reference",
    "all": "every pair of outputs under every pair of references",
}


def holm_family_phrase(view: ResultsView) -> str:
    """Return what the Holm correction ran over, for captions: 'the 156 swings of the adjacent family (...)'.

    Swings outside the family have no Holm p (printed '—'); results.json "interaction" names the family.
    """
    swings = len(view.rows.select("interaction", "swing"))
    family = view.holm_family
    if family is None or not family.tests or family.tests == swings:
        return f"all {swings:,} swings (every language, pooled, every rule and pair)"
    said = FAMILY_SAID.get(family.name, family.name).format(primary=view.primary)
    return (
        f"the {family.tests:,} swings of the {family.name} family ({said}; every language, pooled, both "
        "rules); a swing outside it is not tested and its Holm p reads '—'"
    )


def interaction_main_tables(view: ResultsView) -> list[Table]:
    """The interaction tables: the paper's one table, or margins and swings in long layout for a leaderboard."""
    if not interaction_is_long(view):
        return [interaction_main_table(view)]
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
            title="Swings of the margins between references",
            caption=(
                "Swing: margin under the first reference minus margin under the second, recomputed inside every "
                "bootstrap resample, per pair of outputs and pair of references. Holm p is the two-sided "
                f"bootstrap p-value of the swing, Holm-adjusted over {holm_family_phrase(view)}. Bold marks "
                "intervals excluding zero."
            ),
        ),
    ]


def interaction_main_table(view: ResultsView) -> Table:
    """Interaction on the audited subset, with Holm-adjusted p over the whole swing family."""
    first, second = view.outputs[:2] if len(view.outputs) > 1 else (view.outputs[0], "")
    return replace(
        interaction_table(view),
        title="Margins between the outputs and their swing between references",
        caption=(
            f"Margin is F1({first}) − F1({second}) in F1 points under each reference, on the audited subset "
            f"({view.items_phrase('audited')} pooled). Swing is the paired interaction: margin under the first "
            "reference minus margin under the second, recomputed inside every bootstrap resample. Holm p is the "
            f"two-sided bootstrap p-value of the swing, Holm-adjusted over {holm_family_phrase(view)}. Bold marks "
            "intervals excluding zero."
        ),
    )


def same_swing(row: Row) -> dict[str, str]:
    """Return the labels that name a swing (its pairs of outputs and of references), to find it elsewhere."""
    return {key: row[key] for key in ("output", "output_2", "reference", "reference_2")}


def reference_pairs_of(view: ResultsView, swings: Sequence[Row]) -> list[tuple[str, str]]:
    """Return the pairs of references the swings are between, in config order (one colour and marker each)."""
    present = {(row["reference"], row["reference_2"]) for row in swings}
    return [pair for pair in view.reference_pairs() if pair in present]


def swing_rows(
    axis: Axes,
    view: ResultsView,
    swings: Sequence[Row],
    found: Sequence[Row | None],
    pairs: Sequence[tuple[str, str]],
    holm: bool,
) -> int:
    """Draw chosen swings one per row, top to bottom, coloured by their pair of references; with ``holm``,
    Holm-significant ones filled and starred (others hollow). ``found[k]`` is what row k draws (the swing itself,
    or the same swing under another rule or policy). Return how many drawn rows are Holm-significant."""
    significant = 0
    for index, (swing, row) in enumerate(zip(swings, found)):
        colour, marker = style(pairs.index((swing["reference"], swing["reference_2"])))
        filled = not holm or (row is not None and view.significant(row["p_holm"]))
        significant += holm and filled
        interval_point(axis, -index, row, colour, marker, filled=filled)
        if holm and filled and row and row["estimate"] is not None:
            _star(axis, row, -index)
    label_outputs(axis, [outputs_label(swing) for swing in swings])
    return significant


def _star(axis: Axes, row: Row, y: float) -> None:
    """Put the asterisk of a Holm-significant swing just right of its interval."""
    axis.annotate(
        "*",
        (row["ci_high"] if row["ci_high"] is not None else row["estimate"], y),
        xytext=(3, -2.5),
        textcoords="offset points",
        fontsize=9,
        color=INK,
        fontweight="bold",
    )


def pair_handles(pairs: Sequence[tuple[str, str]]) -> list:
    """Return legend entries naming each pair of references by its colour and marker."""
    return legend_handles([f"{first} vs {second}" for first, second in pairs])


def significance_handles(view: ResultsView, colour: str = INK, untested: bool = False) -> list:
    """Return the legend entries for filled (Holm-significant, starred) and hollow points; ``untested``: some
    hollow points are swings outside the Holm family."""
    lines = mpl().lines
    return [
        lines.Line2D([], [], color=colour, marker="o", markersize=4.5, label=f"Holm p < {view.level} (*)"),
        lines.Line2D(
            [],
            [],
            color=colour,
            marker="o",
            markersize=4.5,
            markerfacecolor="white",
            label=f"Holm p ≥ {view.level}" + (" or not tested" if untested else ""),
        ),
    ]


def swing_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of the swings with the largest |swing| (pooled, main rule), one per row, one panel per rule;
    with a single swing and several languages, that swing per language. Holm-significant swings filled."""
    swings = view.largest("interaction", "swing")
    if not swings:
        return None
    if len(swings) == 1 and len(view.languages) > 2:
        return _swing_languages(view, swings[0])
    rule = view.main_rule
    shown = swings[:FIGURE_ROWS]
    pairs = reference_pairs_of(view, shown)
    figure, axes = subplots(
        1, len(view.rules), figsize=(WIDTH, height(len(shown), 0.3)), sharey=True, sharex=True, squeeze=False
    )
    significant, untested = 0, False
    for axis, panel_rule in zip(axes[0], view.rules):
        zero_line(axis)
        found = [
            view.row("interaction", "swing", rule=panel_rule, language=POOLED, **same_swing(swing)) for swing in shown
        ]
        drawn = swing_rows(axis, view, shown, found, pairs, holm=True)
        significant += drawn if panel_rule == rule else 0
        untested |= any(row is not None and row["p_holm"] is None for row in found)
        axis.set_title(panel_rule.capitalize())
    shared_xlabel(figure, "Swing (F1 points, pooled)")
    top_legend(
        figure, pair_handles(pairs) + significance_handles(view, untested=untested), "References (first vs second)"
    )
    total = len(swings)
    which = (
        f"The {len(shown)} pooled swings with the largest |swing| under the {rule} rule, of {total:,}, largest first"
        if len(shown) < total
        else f"Every pooled swing, largest |swing| ({rule}) first"
    )
    listed = "; ".join(
        f"{swing['output']} − {swing['output_2']} ({pair_label(swing)}) {said(swing)}" for swing in shown[:5]
    )
    return figure, Figure(
        key="swing",
        title="Largest swings of the comparison between references",
        caption=(
            f"{which}: swing = (F1(first output) − F1(second) under the first reference) − (the same margin under "
            f"the second reference), in F1 points with {view.confidence_label}, pooled over languages, on the "
            f"audited subset; colour and marker name the pair of references. Filled points with an asterisk are "
            f"significant after Holm correction (p < {view.level}) over {holm_family_phrase(view)}. Every swing, "
            "per language and rule, is in the interaction tables and their CSV downloads."
        ),
        alt=(
            f"Forest plot of the {formatting.count(len(shown))} largest pooled {formatting.noun(len(shown), 'swing')} "
            f"of {formatting.count(total)}, one panel per rule, one row per swing. Largest {rule} swings: {listed}; "
            f"{formatting.count(significant)} of the {formatting.counted(len(shown), 'swing')} "
            f"{formatting.verb_of(significant, len(shown), 'is', 'are')} Holm-significant."
        ),
    )


def _swing_languages(view: ResultsView, swing: Row) -> tuple[MplFigure, Figure]:
    """The one swing of the record per language, one panel per rule."""
    output, output_2, first, second = swing["output"], swing["output_2"], swing["reference"], swing["reference_2"]
    languages = figure_languages(view)
    figure, axes = subplots(
        1, len(view.rules), figsize=(WIDTH, height(len(languages))), sharey=True, sharex=True, squeeze=False
    )
    significant = plotted = 0
    for axis, rule in zip(axes[0], view.rules):
        positions = language_axis(axis, languages)
        zero_line(axis)
        for language in languages:
            row = view.row("interaction", "swing", rule=rule, language=language, **same_swing(swing))
            filled = view.significant(row["p_holm"] if row else None)
            significant += filled
            plotted += row is not None
            interval_point(axis, positions[language], row, OKABE_ITO[0], "o", filled=filled)
            if row and row["estimate"] is not None and filled:
                _star(axis, row, positions[language])
        axis.set_title(rule.capitalize())
    shared_xlabel(figure, "Swing (F1 points)")
    top_legend(figure, significance_handles(view, OKABE_ITO[0]))
    return figure, languages_noted(
        view,
        Figure(
            key="swing",
            title="Swing of the comparison between references",
            caption=(
                f"Swing = (F1({output}) − F1({output_2}) under {first}) − (the same margin under {second}), in F1 "
                f"points with {view.confidence_label}, per language and pooled, on the audited subset. Filled points "
                f"with an asterisk are significant after Holm correction (p < {view.level}) over "
                f"{holm_family_phrase(view)}."
            ),
            alt=(
                f"Forest plot of swings, one panel per rule. Pooled {view.main_rule} swing {said(swing)}, Holm p "
                f"{formatting.p_value(swing['p_holm'])}; {formatting.count_of(significant, plotted, 'plotted swing')} "
                f"{formatting.verb_of(significant, plotted, 'is', 'are')} Holm-significant."
            ),
        ),
    )


def pooled_swing(view: ResultsView) -> Row | None:
    """Return the pooled swing (main rule) with the largest absolute estimate, over every pair of outputs and of
    references: the headline swing, the site index's, and the swing figure's first."""
    return next(iter(view.largest("interaction", "swing")), None)


def holm_family_size(view: ResultsView) -> int:
    """Return how many swings the Holm correction ran over (those with a Holm p)."""
    return sum(row["p_holm"] is not None for _, row in view.rows.select("interaction", "swing"))


NOT_IN_FAMILY = "not in the Holm family"  # a swing without a Holm p, said in a sentence (a table prints '—')


def holm_said(view: ResultsView, row: Row) -> str:
    """Return a swing's Holm p in a sentence: 'Holm p 0.03', or that it is not in the Holm family (and which)."""
    if row["p_holm"] is None:
        only = {"adjacent": "adjacent pairs only", "primary": f"{view.primary} against each other reference only"}
        family = view.holm_family
        return NOT_IN_FAMILY + (f": {only[family.name]}" if family is not None and family.name in only else "")
    return f"Holm p {formatting.p_value(row['p_holm'])}"


def holm_tally(view: ResultsView, family: Sequence[Row]) -> str:
    """Return how many swings of the Holm family are significant (a sentence), or that this run cannot decide."""
    if view.undecidable:
        return view.undecidable
    significant = sum(view.significant(row["p_holm"]) for row in family)
    return (
        f"{count_phrase(significant, len(family), 'swing')} in the Holm family "
        f"{formatting.verb_of(significant, len(family), 'has', 'have')} Holm p < {view.level}."
    )


def _swing_summary(view: ResultsView) -> str:
    """Return the interaction finding for many pairs: the largest pooled swing and the Holm tally."""
    rule = view.main_rule
    pooled = [
        row
        for _, row in view.rows.select("interaction", "swing", rule=rule, language=POOLED)
        if row["estimate"] is not None
    ]
    family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in pooled)
    largest = max(pooled, key=lambda row: abs(row["estimate"]))
    return (
        f"The comparison moves too: of {formatting.counted(len(pooled), f'pooled {rule} swing')} (every pair of "
        f"outputs under every pair of references), {formatting.count(excluding)} "
        f"{formatting.verb(excluding, 'has an interval', 'have intervals')} excluding zero; the largest is "
        f"{said(largest)} F1 points ({largest['output']} − {largest['output_2']}, {pair_label(largest)}; "
        f"{holm_said(view, largest)}). {holm_tally(view, family)}"
    )


def headlines(view: ResultsView) -> list[str]:
    """The pooled swing of the first pairs and the Holm tally, or the largest swing at scale."""
    swing = pooled_swing(view)
    if swing is None:
        return []
    if view.at_scale():
        return [_swing_summary(view)]
    family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
    return [
        f"The comparison moves too: the margin {swing['output']} − {swing['output_2']} under "
        f"{swing['reference']} minus the same margin under {swing['reference_2']} is {said(swing)} F1 points "
        f"pooled ({view.main_rule}; paired swing, {holm_said(view, swing)}). {holm_tally(view, family)}"
    ]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("interaction")
    return section(ANALYSIS, view, drawn, applies, ["swing"], interaction_main_tables(view) if applies else [])


def _swing_p(view: ResultsView) -> str:
    """The headline swing's Holm p as said (the site index's detail line)."""
    swing = pooled_swing(view)
    return holm_said(view, swing) if swing else f"Holm p {formatting.UNDEFINED}"


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="interaction",
    title="Interaction between reference and output",
    question="Does the comparison between two outputs survive a change of reference? The swing is the "
    "paired interaction, tested inside every bootstrap replicate and Holm-corrected over all swings.",
    methods="""- **Interaction** (audited): margin = F1(Oᵢ, R) − F1(Oⱼ, R); swing = margin(Rₖ) − margin(Rₗ).""",
    estimates=estimates,
    finish=finish,
    applicability=applicability,
    summary=summary,
    section=_section,
    figures=(swing_forest,),
    headlines=headlines,
    release_rows=ReleaseRows(pooled_rows("interaction", "swing", primary=True), place=3, fallback=True),
    index_columns=(IndexColumn("Pooled swing (Holm p)", lambda view: said(pooled_swing(view)), _swing_p),),
    holm_family="swing",
    holm_tests=lambda context: len(holm_family(context)),
)
