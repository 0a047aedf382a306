"""Reference swap: each output held fixed and scored against each reference, and the paired deltas.

Statistics (audited items): score F1(O, R) and delta F1(O, Rᵢ) − F1(O, Rⱼ) for every pair of references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from refsens_report import formatting
from refsens_report.analyses import disagreements
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    Estimate,
    IndexColumn,
    MetadataSentences,
    Ranking,
    ReleaseCheck,
    ReleaseRows,
    Section,
    Stat,
    SummaryFigure,
    Verdict,
    defined_pooled,
    pooled_rows,
    section,
)
from refsens_report.config import Config
from refsens_report.figures import (
    FIGURE_ROWS,
    MAX_PANELS,
    OKABE_ITO,
    WIDTH,
    Figure,
    drawn_note,
    figure_languages,
    height,
    interval_point,
    label_outputs,
    labels_width,
    language_axis,
    languages_noted,
    legend_handles,
    offsets,
    output_positions,
    panel_columns,
    panels_height,
    picked,
    plain,
    shared_xlabel,
    style,
    subplots,
    top_legend,
    zero_line,
)
from refsens_report.formulas import F1
from refsens_report.prose import count_phrase, pair_label, said, where_pooled
from refsens_report.record import POOLED
from refsens_report.tables import Table, label, long_layout, mark_repeats, stat_cell
from refsens_report.view import UNDECIDED_FLIPS, ResultsView, Row

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
        "swap": None
        if len(context.config.roles.references) >= 2
        else "Only one reference is configured: each output's score against it is shown, but there is no other "
        "reference to swap it with.",
    }


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
                                "swap",
                                "delta",
                                rule=rule,
                                language=language,
                                output=output,
                                reference=first,
                                reference_2=second,
                            )
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
                        cells.append(
                            stat_cell(
                                None
                                if reference == output
                                else rows.one(
                                    "swap", "score", rule=rule, language=language, output=output, reference=reference
                                )
                            )
                        )
                    cells.append(
                        stat_cell(
                            rows.one(
                                "swap",
                                "delta",
                                rule=rule,
                                language=language,
                                output=output,
                                reference=first,
                                reference_2=second,
                            )
                        )
                    )
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
        columns=(
            "Output",
            "References",
            "Rule",
            "Language",
            f"F1 vs first [{view.confidence_label}]",
            f"F1 vs second [{view.confidence_label}]",
            f"Δ [{view.confidence_label}]",
        ),
        rows=mark_repeats(table_rows, 3),
    )


def _swap_panels(view: ResultsView) -> list[tuple[str, str, str]]:
    """Return the swap figure's panels as (title, rule, alternative reference): the primary reference against
    each alternative under the main rule, or, when there is one alternative, against it under each rule."""
    alternatives = view.references[1:]
    if len(alternatives) == 1:
        return [(rule.capitalize(), rule, alternatives[0]) for rule in view.rules]
    return [(f"vs {alternative}", view.main_rule, alternative) for alternative in alternatives]


def _against_primary(view: ResultsView, rule: str, language: str, output: str, alternative: str) -> Row | None:
    """Return an output's delta F1 vs the primary reference − F1 vs an alternative one."""
    return view.row(
        "swap", "delta", rule=rule, language=language, output=output, reference=view.primary, reference_2=alternative
    )


def swap_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of the swap deltas, the primary reference against each alternative, with intervals: per
    language with the outputs side by side, or with many outputs one row per output, pooled."""
    primary, rule = view.primary, view.main_rule
    deltas = view.largest("swap", "delta", reference=primary)
    if not deltas:
        return None
    outputs = [output for output in view.outputs if any(row["output"] == output for row in deltas)]
    panels = _swap_panels(view)
    several = len(view.references) > 2  # panels per alternative reference, not per rule
    many = len(outputs) > MAX_PANELS
    shown = outputs
    if many and len(outputs) > FIGURE_ROWS:
        chosen = set(picked(deltas, lambda row: row["output"], FIGURE_ROWS))
        shown = [output for output in outputs if output in chosen]
    languages = [POOLED] if many else figure_languages(view)
    # as many panels a row as their titles fit (long reference names: fewer, in rows)
    columns, titles = panel_columns([title for title, _, _ in panels], labels_width(shown if many else languages))
    lines = -(-len(panels) // columns)
    per_panel = height(len(shown), 0.22) if many else height(len(languages), 0.14 + 0.1 * len(outputs))
    figure, axes = subplots(
        lines, columns, figsize=(WIDTH, panels_height(per_panel, lines)), sharey=True, sharex=True, squeeze=False
    )
    spread = offsets(len(outputs))
    for axis, (_, panel_rule, alternative), title in zip(axes.flat, panels, titles):
        zero_line(axis)
        if many:
            positions = output_positions(shown)
            for output in shown:
                row = _against_primary(view, panel_rule, POOLED, output, alternative)
                interval_point(axis, positions[output], row, OKABE_ITO[0], "o")
            label_outputs(axis, shown)
        else:
            positions = language_axis(axis, languages)
            for index, output in enumerate(outputs):
                for language in languages:
                    row = _against_primary(view, panel_rule, language, output, alternative)
                    interval_point(axis, positions[language] - spread[index], row, *style(index))
        axis.set_title(title)
    for axis in list(axes.flat)[len(panels) :]:
        axis.set_visible(False)
    where = ", pooled" if many else ""
    if several:
        shared_xlabel(figure, plain(f"Δ = F1 vs {primary} − F1 vs the panel's reference ({rule}{where}, F1 points)"))
    else:
        shared_xlabel(figure, plain(f"Δ = F1 vs {primary} − F1 vs {panels[0][2]} (F1 points{where})"))
    if not many:
        top_legend(figure, legend_handles(outputs), "Output")
    alternatives = list(dict.fromkeys(panel[2] for panel in panels))
    pooled = "; ".join(
        f"{output}"
        + (f" vs {alternative}" if several else "")
        + ": "
        + said(_against_primary(view, rule, POOLED, output, alternative))
        for output in shown
        for alternative in alternatives
    )
    exchanged = (
        f"the primary reference ({primary}) is exchanged for each other reference (one panel each), {rule} rule"
        if several
        else f"the reference {primary} is exchanged for {alternatives[0]}"
    )
    # what the swap table holds beyond the figure
    rest = [
        part
        for part, left_out in (
            ("every language", many and len(view.languages) > 2),
            ("the other rule", several and len(view.rules) > 1),
            ("the deltas between two alternative references", several),
        )
        if left_out
    ]
    listed = ", ".join(rest[:-1]) + " and " + rest[-1] if len(rest) > 1 else "".join(rest)
    caption = (
        f"Movement of each output's score when {exchanged}, in F1 points, with {view.confidence_label} (paired "
        f"bootstrap), {'pooled over languages' if many else 'per language and pooled'}, on the audited subset "
        f"({view.items_phrase('audited')}{'' if many else ' pooled'}). Points right of "
        f"zero: the output scores higher against {primary}."
        + (f" {listed[0].upper()}{listed[1:]} {'are' if len(rest) > 1 else 'is'} in the swap table." if rest else "")
        + drawn_note(len(shown), len(outputs), "outputs", f"pooled |Δ| ({rule})", "the swap table")
    )
    layout = "one row per output, pooled" if many else "rows per language"
    panels_said = "one panel per alternative reference" if several else "one panel per matching rule"
    model = Figure(
        key="swap",
        title="Reference-swap deltas",
        caption=caption,
        alt=f"Forest plot, {panels_said}, {layout}. Pooled {rule} deltas against {primary}: {pooled}.",
    )
    return figure, (model if many else languages_noted(view, model))


def largest_pooled_delta(view: ResultsView) -> Row | None:
    """Return the pooled swap delta (main rule) with the largest absolute estimate."""
    return next(iter(view.largest("swap", "delta")), None)


def _delta_summary(view: ResultsView, deltas: list[Row]) -> str:
    """Return the swap finding for many outputs: the largest pooled delta and how many exclude zero."""
    rule = view.main_rule
    defined = [row for row in deltas if row["estimate"] is not None]
    largest = largest_pooled_delta(view)
    outputs = len({row["output"] for row in defined})
    pairs = len({(row["reference"], row["reference_2"]) for row in defined})
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in defined)
    sentence = (
        f"The score moves with the reference alone: across {formatting.counted(outputs, 'output')} and "
        f"{formatting.counted(pairs, 'pair')} of references, the pooled {rule} F1 of a fixed output moves by up to "
        f"{said(largest)} F1 points ({largest['output']}, {pair_label(largest)})"
        if largest
        else f"The score moves with the reference alone (pooled {rule})"
    )
    sentence += f"; {count_phrase(excluding, len(defined), 'pooled delta')} "
    sentence += f"{formatting.verb_of(excluding, len(defined), 'has an interval', 'have intervals')} excluding zero."
    per_language = [
        row
        for _, row in view.rows.select("swap", "delta", rule=rule)
        if row["language"] != POOLED and row["estimate"] is not None
    ]
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
    tail = (
        f"; {count_phrase(undecided, len(per_language), 'per-language movement')} "
        f"{formatting.verb_of(undecided, len(per_language), 'is', 'are')} undecided (their "
        f"{view.confidence_label} includes zero)"
    )
    if not decided:
        return " No per-language movement is decided: " + (
            "its interval includes zero."
            if len(per_language) == 1
            else f"all {formatting.count(len(per_language))} intervals include zero."
        )
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
    against = (
        "the first reference minus its F1 against the second"
        if several
        else (f"{first_ref} minus its F1 against {second_ref}")
    )
    sentence = (
        f"The score moves with the reference alone: holding each output fixed, its pooled {rule} F1 against "
        f"{against} is {'; '.join(parts)} F1 points."
    )
    if per_language:
        sentence += largest_movement(view, per_language)
    return [sentence]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("swap")
    return section(
        ANALYSIS,
        view,
        drawn,
        applies,
        ["swap"],
        [swap_table(view)] if applies else [],
        links=disagreements.links(view, "references"),
    )


def score_ranks(view: ResultsView) -> dict[tuple[str, str], float]:
    """Return (reference, output) -> the output's rank by its pooled main-rule swap score (ties share their
    average rank): a ranking where there is no leaderboard."""
    scores: dict[str, list[tuple[float, str]]] = {}
    for _, row in view.rows.select("swap", "score", rule=view.main_rule, language=POOLED):
        if row["estimate"] is not None:
            scores.setdefault(row["reference"], []).append((row["estimate"], row["output"]))
    found = {}
    for reference, scored in scores.items():
        for output_score, output in scored:
            above = sum(other > output_score for other, _ in scored)
            tied = sum(other == output_score for other, _ in scored)
            found[(reference, output)] = above + (tied + 1) / 2  # ties share their average rank
    return found


def _delta_label(view: ResultsView) -> str:
    """The largest pooled delta's output, pair of references and rule (the site index's detail line)."""
    delta = largest_pooled_delta(view)
    return f"{delta['output']}, {delta['reference']} vs {delta['reference_2']}, {delta['rule']}" if delta else ""


def analysis_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation analysis: the largest pooled delta."""
    deltas = defined_pooled(view, "swap", "delta", rule=view.main_rule)
    if not deltas:
        return []
    row = max(deltas, key=lambda delta: abs(delta["estimate"]))
    return [
        f"Largest reference-swap delta, {row['output']}, {row['reference']} − {row['reference_2']}, {row['rule']} "
        f"F1: {said(row)} {where_pooled(view, row)}."
    ]


def _moves(view: ResultsView, deltas: list[Row], alternative: str, cited: list[Row]) -> str:
    """Return how far the outputs' scores move: each delta with two outputs or fewer, the range beyond."""
    rule, primary = view.main_rule, view.primary
    difference = f"{rule} F1 against {primary} minus F1 against {alternative}"
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in deltas)
    if len(deltas) <= 2:
        cited += deltas
        each = " and ".join(f"{said(row)} for {row['output']}" for row in deltas)
        return f"The {difference} is {each} F1 points."
    low = min(deltas, key=lambda row: row["estimate"])
    high = max(deltas, key=lambda row: row["estimate"])
    cited += [low, high]
    return (
        f"Each output's {difference} lies between {said(low)} ({low['output']}) and {said(high)} "
        f"({high['output']}) F1 points; {count_phrase(excluding, len(deltas), 'interval')} "
        f"{formatting.verb_of(excluding, len(deltas), 'excludes', 'exclude')} zero."
    )


def _ranking(view: ResultsView, alternative: str, outputs: Sequence[str], cited: list[Row]) -> str:
    """Return how the ranking holds under the alternative: tau-b and flips, or the one pair's swing."""
    where = {"rule": view.main_rule, "language": POOLED, "reference": view.primary, "reference_2": alternative}
    flips = view.row("leaderboard", "flips", **where)
    if flips is not None and flips["estimate"] is not None:
        ranked = len({row["output"] for _, row in view.rows.select("leaderboard", "rank")})
        tau = view.row("leaderboard", "kendall_tau", **where)
        significant = view.row("leaderboard", "flips_significant", **where)
        cited += [row for row in (flips, tau, significant) if row is not None]
        moved = round(flips["estimate"])
        if view.undecidable:  # said in full once, in the draft note at the top, not once per reference
            holm = f", {UNDECIDED_FLIPS}."
        else:
            holm = (
                f", {formatting.number(significant['estimate'], 0) if significant else formatting.UNDEFINED} "
                "of them significantly after Holm."
            )
        return (
            f" The ranking of {ranked} outputs: tau-b {said(tau)}; {said(flips)} of "
            f"{formatting.counted(ranked * (ranked - 1) // 2, 'pair')} {formatting.verb(moved, 'changes', 'change')} "
            "order" + holm
        )
    if len(outputs) == 2:
        swing = view.row("interaction", "swing", output=outputs[0], output_2=outputs[1], **where)
        if swing is not None and swing["estimate"] is not None:
            cited.append(swing)
            excludes = formatting.excludes_zero(swing["ci_low"], swing["ci_high"])
            if swing["p_holm"] is None or view.undecidable:
                verdict = "its interval excludes zero" if excludes else "its interval includes zero"
                holm = "outside the Holm family" if swing["p_holm"] is None else "this run cannot decide significance"
            else:
                holm = f"Holm p {formatting.p_value(swing['p_holm'])}"
                verdict = (
                    "significant after Holm: the comparison itself depends on the reference"
                    if view.significant(swing["p_holm"])
                    else "its interval excludes zero, but it is not significant after Holm"
                    if excludes
                    else "its interval includes zero"
                )
            return f" The margin {outputs[0]} − {outputs[1]} changes by {said(swing)} F1 points ({holm}): {verdict}."
    return ""


def verdicts(view: ResultsView) -> list[Verdict]:
    """Return the summary's verdicts: one per alternative reference, pooled, under the main rule: how far the
    outputs' scores move (the swap deltas) and how the ranking holds (the leaderboard's, or the one pair's swing)."""
    found = []
    for alternative in view.references[1:]:
        deltas = [
            row
            for _, row in view.rows.select(
                "swap", "delta", rule=view.main_rule, language=POOLED, reference=view.primary, reference_2=alternative
            )
            if row["estimate"] is not None
        ]
        if not deltas:
            continue
        outputs = [row["output"] for row in deltas]
        cited: list[Row] = []
        text = _moves(view, deltas, alternative, cited) + _ranking(view, alternative, outputs, cited)
        found.append(Verdict(reference=alternative, primary=view.primary, text=text, rows=tuple(cited)))
    return found


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="swap",
    title="Reference swap",
    question="How far does a fixed output's score move when only the reference changes?",
    methods=("- **Swap** (audited): score F1(O, R); delta F1(O, Rᵢ) − F1(O, Rⱼ) for references i < j in config order."),
    estimates=estimates,
    applicability=applicability,
    section=_section,
    figures=(swap_forest,),
    headlines=headlines,
    checks=(
        ReleaseCheck(
            "max_abs_delta",
            "max_abs",
            pooled_rows("swap", "delta"),
            absent="the results hold no swap delta (one reference)",
        ),
    ),
    release_rows=ReleaseRows(pooled_rows("swap", "delta", primary=True), place=2),
    ranking=Ranking(score_ranks, "the order of the outputs' swap scores", fallback=True),
    index_columns=(IndexColumn("Largest pooled Δ", lambda view: said(largest_pooled_delta(view)), _delta_label),),
    metadata=(MetadataSentences("rai:dataAnnotationAnalysis", analysis_sentences, place=3),),
    verdicts=verdicts,
    summary_figure=SummaryFigure("swap", fallback=True),  # the rank chart, when there is one, answers first
)
