"""The sensitivity band: how far a score can move from the choice of reference alone, against the margins.

Computed from the swap's pooled deltas after estimation (docs/method.md section 3): per rule and output,
max(|ci_low|, |ci_high|) of its pooled deltas; the overall band is that of the output whose pooled |delta| is
largest. The report compares the observed margins between outputs with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    IndexColumn,
    MetadataSentences,
    ReleaseCheck,
    ReleaseRows,
    Rows,
    Section,
    defined_pooled,
    pooled_rows,
    section,
)
from refsens_report.config import Config
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    FIGURE_ROWS,
    OKABE_ITO,
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    label_outputs,
    language_axis,
    languages_noted,
    mpl,
    outputs_label,
    plain,
    subplots,
    top_legend,
    zero_line,
)
from refsens_report.prose import count_phrase, said, where_pooled
from refsens_report.record import POOLED
from refsens_report.results import make_row
from refsens_report.tables import Table, label, mark_repeats, stat_cell
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def band_rows(
    rows: list[dict[str, Any]], config: Config, n_audited: int, clusters_audited: int | None = None
) -> list[dict[str, Any]]:
    """Return the sensitivity band per rule and output, and overall (docs/method.md section 3, band)."""
    bands: list[dict[str, Any]] = []
    for rule in config.audit.rules:
        deltas = [
            row
            for row in rows
            if row["analysis"] == "swap"
            and row["statistic"] == "delta"
            and row["rule"] == rule
            and row["language"] == POOLED
        ]
        per_output: dict[str, tuple[float | None, float]] = {}
        for output in config.roles.outputs:
            mine = [row for row in deltas if row["output"] == output]
            if not mine:
                continue
            # With more than two references an output has several deltas: its band covers all of them.
            widths = [max(abs(r["ci_low"]), abs(r["ci_high"])) for r in mine if r["ci_low"] is not None]
            largest = max((abs(r["estimate"]) for r in mine if r["estimate"] is not None), default=-1.0)
            per_output[output] = (max(widths) if widths else None, largest)
            bands.append(
                make_row(
                    analysis="band",
                    statistic="band",
                    rule=rule,
                    language=POOLED,
                    output=output,
                    subset="audited",
                    estimate=per_output[output][0],
                    n_items=n_audited,
                    n_clusters=clusters_audited,
                )
            )
        if per_output:
            widest = max(per_output, key=lambda output: per_output[output][1])
            bands.append(
                make_row(
                    analysis="band",
                    statistic="band",
                    rule=rule,
                    language=POOLED,
                    subset="audited",
                    estimate=per_output[widest][0],
                    n_items=n_audited,
                    n_clusters=clusters_audited,
                )
            )
    return bands


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """The band rows, from the swap deltas already estimated."""
    audited = context.subsets.audited
    return band_rows(
        rows, context.config, int(audited.sum()), int(estimator.cluster_counts(audited)[-1]) if audited.any() else None
    )


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "band": None
        if len(context.config.roles.references) >= 2
        else "The band is built from the reference-swap deltas, and one reference gives none.",
    }


# --- the report ------------------------------------------------------------------------------------


def band_table(view: ResultsView) -> Table:
    """The reference-sensitivity band per rule and output."""
    rows = []
    for rule in view.rules:
        for found in view.rows.select("band", "band", rule=rule, language=POOLED):
            rows.append([label(rule), label(found[1]["output"] or "all outputs (largest)"), stat_cell(found)])
    return Table(
        key="band",
        title="Reference-sensitivity band",
        caption=(
            "The band is the largest absolute end of the pooled swap-delta interval: how far a score can move "
            "from the choice of reference alone, in F1 points. The overall band is that of the output whose "
            "pooled |Δ| is largest. A margin smaller than the band is not robust to the choice of reference."
        ),
        columns=("Rule", "Output", "Band"),
        rows=mark_repeats(rows, 1),
    )


def band_versus_margins(view: ResultsView) -> tuple[Table, list[tuple[str, int, int, str]]]:
    """Observed margins under the primary reference against the overall band; return the table and the tallies."""
    rule = view.main_rule
    band_found = view.rows.one("band", "band", rule=rule, language=POOLED, output="")
    band = band_found[1]["estimate"] if band_found else None
    rows = []
    tallies = []
    for output, output_2 in view.output_pairs():
        exceeding = compared = 0
        for language in view.languages:
            found = view.rows.one(
                "interaction",
                "margin",
                rule=rule,
                language=language,
                output=output,
                output_2=output_2,
                reference=view.primary,
            )
            margin = found[1]["estimate"] if found else None
            verdict = formatting.UNDEFINED
            if margin is not None and band is not None:
                # a comparison of two printed numbers, not a new statistic
                exceeds = abs(margin) > band
                if language in view.distinct_languages:  # one language: its rows are the pooled ones
                    compared += 1
                    exceeding += exceeds
                verdict = "exceeds the band" if exceeds else "within the band"
            rows.append([label(f"{output} − {output_2}"), label(language), stat_cell(found), label(verdict)])
        tallies.append((f"{output} − {output_2}", exceeding, compared, formatting.number(band, 2)))
    table = Table(
        key="band-margins",
        title="Observed margins against the band",
        caption=(
            f"Margin between the outputs under the primary reference ({view.primary}), {rule} rule, per language "
            f"and pooled, F1 points, on the audited subset, compared with the overall {rule} band "
            f"(±{formatting.number(band, 2)} F1 points)."
        ),
        columns=("Outputs", "Language", f"Margin [{view.confidence_label}]", "Against the band"),
        rows=mark_repeats(rows, 1),
    )
    return table, tallies


def band_figure_margins(view: ResultsView) -> tuple[list[Row], int, bool]:
    """Return the pooled margins under the primary reference (main rule) the band figure draws, how many there
    are, and whether they are only those between outputs adjacent in the primary ranking.

    Every margin while there are at most FIGURE_ROWS; beyond, the margins a leaderboard's reader compares: each
    output against the next one down (the pairs ordered by the outputs' pooled scores under the primary).
    """
    margins = [
        row
        for _, row in view.rows.select(
            "interaction", "margin", rule=view.main_rule, language=POOLED, reference=view.primary
        )
    ]
    position = {output: index for index, output in enumerate(view.primary_order())}

    def places(row: Row) -> tuple[int, int]:
        return tuple(sorted((position[row["output"]], position[row["output_2"]])))  # type: ignore[return-value]

    ordered = sorted(margins, key=places)
    if len(ordered) <= FIGURE_ROWS:
        return ordered, len(margins), False
    adjacent = [row for row in ordered if places(row)[1] - places(row)[0] == 1]
    return adjacent[:FIGURE_ROWS], len(margins), True


def band_margins(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Observed margins under the primary reference against the shaded ± band: every pair of outputs (or, for a
    leaderboard, the pairs adjacent in the primary ranking), pooled; a single pair per language."""
    matplotlib = mpl()
    rule = view.main_rule
    band_row = view.row("band", "band", rule=rule, language=POOLED, output="")
    margins, total, adjacent = band_figure_margins(view)
    if band_row is None or band_row["estimate"] is None or not margins:
        return None
    band = band_row["estimate"]
    per_language = total == 1 and len(view.languages) > 2
    languages = figure_languages(view)
    if per_language:
        figure, axis = subplots(figsize=(WIDTH, height(len(languages))))
        positions = language_axis(axis, languages)
        drawn = [
            (
                positions[language],
                view.row(
                    "interaction",
                    "margin",
                    rule=rule,
                    language=language,
                    output=margins[0]["output"],
                    output_2=margins[0]["output_2"],
                    reference=view.primary,
                ),
            )
            for language in languages
        ]
    else:
        figure, axis = subplots(figsize=(WIDTH, height(len(margins), 0.3)))
        drawn = [(-index, row) for index, row in enumerate(margins)]
        label_outputs(axis, [outputs_label(row) for row in margins])
    axis.axvspan(-band, band, color="#E69F00", alpha=0.18, linewidth=0, zorder=0)
    zero_line(axis)
    exceeding = 0
    for y, row in drawn:
        outside = bool(row and row["estimate"] is not None and abs(row["estimate"]) > band)
        exceeding += outside
        interval_point(axis, y, row, OKABE_ITO[0], "o", filled=outside)
    output, output_2 = margins[0]["output"], margins[0]["output_2"]
    if per_language:
        axis.set_xlabel(plain(f"Margin F1({output}) − F1({output_2}) under {view.primary} (F1 points)"))
    else:
        axis.set_xlabel(plain(f"Margin F1(first) − F1(second) under {view.primary} ({rule}, pooled, F1 points)"))
    top_legend(
        figure,
        [
            matplotlib.patches.Patch(color="#E69F00", alpha=0.35, label=f"band ±{formatting.number(band, 2)}"),
            matplotlib.lines.Line2D(
                [], [], color=OKABE_ITO[0], marker="o", markersize=4.5, label="margin beyond the band"
            ),
            matplotlib.lines.Line2D(
                [],
                [],
                color=OKABE_ITO[0],
                marker="o",
                markersize=4.5,
                markerfacecolor="white",
                label="margin within the band",
            ),
        ],
    )
    against = (
        f"against the shaded {rule} reference-sensitivity band (±{formatting.number(band, 2)} F1 points). A "
        "margin inside the band could be produced by the choice of reference alone."
    )
    if per_language:
        caption = (
            f"Margin between {output} and {output_2} under the primary reference ({view.primary}), {rule} "
            f"rule, with {view.confidence_label}, per language and pooled, {against}"
        )
    else:
        which = (
            f"the {len(margins)} pairs of outputs adjacent in {view.primary}'s ranking (of {total:,} pairs), "
            "from the top of the leaderboard down"
            if adjacent
            else f"every pair of outputs, ordered by the outputs' pooled scores under {view.primary}"
        )
        caption = (
            f"Margin (first output minus second) under the primary reference ({view.primary}), {rule} rule, "
            f"with {view.confidence_label}, pooled over languages, for {which}, {against} Every margin, per "
            "language, is in the band and interaction tables and their CSV downloads."
        )
    model = Figure(
        key="band",
        title="Observed margins against the band",
        caption=caption,
        alt=(
            f"Margins {'per language' if per_language else 'per pair of outputs'} as points with intervals over a "
            f"shaded band of ±{formatting.number(band, 2)} F1 points; "
            f"{formatting.count_of(exceeding, len(drawn), 'margin')} "
            f"{formatting.verb_of(exceeding, len(drawn), 'lies', 'lie')} beyond the band."
        ),
    )
    return figure, (languages_noted(view, model) if per_language else model)


def overall_band(view: ResultsView, rule: str | None = None) -> Row | None:
    """Return the overall band (empty output) for a rule, strict by default."""
    return view.row("band", "band", rule=rule or view.main_rule, language=POOLED, output="")


def band_source(view: ResultsView, band: Row) -> Row | None:
    """Return the pooled swap delta the band comes from: the delta (same rule) whose interval's farther end is
    the band, so a sentence can name its output and pair of references (None when none matches)."""
    for _, row in view.rows.select("swap", "delta", rule=band["rule"], language=POOLED):
        if (
            row["ci_low"] is not None
            and row["ci_high"] is not None
            and band["estimate"] is not None
            and max(abs(row["ci_low"]), abs(row["ci_high"])) == band["estimate"]
        ):
            return row
    return None


def source_phrase(view: ResultsView, band: Row) -> str:
    """Return ' (from output's delta, first vs second: ...)', naming where the band comes from, or ''."""
    source = band_source(view, band)
    if source is None:
        return ""
    return (
        f" (the far end of the {view.confidence_label} of {source['output']}'s delta between "
        f"{source['reference']} and {source['reference_2']}: {said(source)})"
    )


def against_band(margin: Row | None, band: float) -> str | None:
    """Return where a margin's interval lies against the band ±band: 'outside', 'inside' or 'undecided'.

    The decision is on the interval, not the point estimate: outside when the whole interval lies beyond the
    band (on either side), inside when it lies within it, undecided when it straddles an edge (or has none).
    None when the margin is undefined.
    """
    if margin is None or margin["estimate"] is None:
        return None
    low, high = margin["ci_low"], margin["ci_high"]
    if low is None or high is None:
        return "undecided"
    if low > band or high < -band:
        return "outside"
    if low >= -band and high <= band:
        return "inside"
    return "undecided"


def margins_beyond_band(view: ResultsView) -> tuple[int, int, int, Row | None]:
    """Return how many margins of the first pair under the primary reference (per language and pooled) lie
    outside the band by their interval, how many are undecided, of how many, and the band."""
    band = overall_band(view)
    if band is None or band["estimate"] is None or not view.output_pairs():
        return 0, 0, 0, band
    output, output_2 = view.output_pairs()[0]
    verdicts = [
        against_band(
            view.row(
                "interaction",
                "margin",
                rule=view.main_rule,
                language=language,
                output=output,
                output_2=output_2,
                reference=view.primary,
            ),
            band["estimate"],
        )
        for language in view.distinct_languages
    ]
    decided = [verdict for verdict in verdicts if verdict is not None]
    return decided.count("outside"), decided.count("undecided"), len(decided), band


def pooled_margins_beyond_band(view: ResultsView, band: Row) -> tuple[int, int, int]:
    """Return how many pooled margins (main rule, primary reference, every pair of outputs) lie outside the
    band by their interval, how many are undecided, and of how many."""
    verdicts = [
        against_band(row, band["estimate"])
        for _, row in view.rows.select(
            "interaction", "margin", rule=view.main_rule, language=POOLED, reference=view.primary
        )
    ]
    decided = [verdict for verdict in verdicts if verdict is not None]
    return decided.count("outside"), decided.count("undecided"), len(decided)


def headlines(view: ResultsView) -> list[str]:
    """The band, and how many observed margins under the primary reference lie beyond it by their intervals."""
    rule = view.main_rule
    outside, undecided, compared, band = margins_beyond_band(view)
    if band is None or band["estimate"] is None:
        return []
    sentence = (
        f"The {rule} reference-sensitivity band is ±{formatting.number(band['estimate'], 2)} F1 points"
        + source_phrase(view, band)
    )
    if view.at_scale():
        outside, undecided, compared = pooled_margins_beyond_band(view, band)
        noun, which = "pooled margin", f"between pairs of outputs under {view.primary}"
    else:
        noun, which = "observed margin", f"under {view.primary} ({view.per_language_phrase})"
    if compared:
        sentence += (
            f": {count_phrase(outside, compared, noun)} {which} "
            f"{formatting.verb_of(outside, compared, 'lies', 'lie')} beyond it with "
            f"{formatting.verb_of(outside, compared, 'its', 'their')} "
            f"whole {view.confidence_label}, {formatting.count(undecided)} {formatting.verb(undecided, 'is', 'are')} "
            "undecided (the interval crosses "
            "the band's edge); a margin inside the band could come from the choice of reference alone."
        )
    else:
        sentence += "."
    return [sentence]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("band")
    band_tables: list[Table] = []
    tallies_said: list[str] = []
    if applies:
        band_tables.append(band_table(view))
        if view.rows.has("interaction"):
            margins_table, tallies = band_versus_margins(view)
            band_tables.append(margins_table)
            if view.at_scale() and tallies:  # one sentence for every pair of outputs, not one each
                exceeding = sum(t[1] for t in tallies)
                tallies_said.append(
                    f"{count_phrase(exceeding, sum(t[2] for t in tallies), 'observed margin')} ({view.main_rule}) "
                    f"between the {formatting.counted(len(tallies), 'pair')} of outputs under {view.primary} "
                    f"({view.per_language_phrase}) "
                    f"{formatting.verb_of(exceeding, sum(t[2] for t in tallies), 'exceeds', 'exceed')} the "
                    f"{view.main_rule} band of ±{tallies[0][3]} F1 points."
                )
            else:
                for pair, exceeding, compared, band in tallies:
                    tallies_said.append(
                        f"{count_phrase(exceeding, compared, 'observed margin')} ({view.main_rule}) {pair} under "
                        f"{view.primary} ({view.per_language_phrase}) "
                        f"{formatting.verb_of(exceeding, compared, 'exceeds', 'exceed')} "
                        f"the {view.main_rule} band of ±{band} F1 points."
                    )
    return section(ANALYSIS, view, drawn, applies, ["band"], band_tables, tallies_said, applicability_key="swap")


def _band_printed(view: ResultsView) -> str:
    """The overall band as the site index prints it: '±7.53'."""
    band = overall_band(view)
    return (
        f"±{formatting.number(band['estimate'], 2)}" if band and band["estimate"] is not None else formatting.UNDEFINED
    )


def analysis_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation analysis: the overall band."""
    return [
        f"Sensitivity band, {row['rule']}: ±{formatting.number(row['estimate'], 2)} F1 points "
        f"{where_pooled(view, row)}."
        for row in defined_pooled(view, "band", "band", rule=view.main_rule, output="")
    ]


def limitation_sentences(view: ResultsView) -> list[str]:
    """croissant.json's limitations: a difference inside the band may reverse under another reference."""
    band = defined_pooled(view, "band", "band", rule=view.main_rule, output="")
    if not band:
        return []
    return [
        f"Scores depend on the choice of gold: a difference between two systems smaller than the {view.main_rule} "
        f"sensitivity band of ±{formatting.number(band[0]['estimate'], 2)} F1 points may reverse under another "
        "defensible reference."
    ]


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="band",
    title="The band against the observed margins",
    question="Which observed margins between the outputs are larger than what the choice of reference alone "
    "can produce?",
    methods="""- **Band**: per rule and output, max(|ci_low|, |ci_high|) of the pooled delta; the overall band is the
  band of the output whose pooled |delta| is largest.""",
    finish=finish,
    applicability=applicability,
    section=_section,
    figures=(band_margins,),
    headlines=headlines,
    # the band is the outer end of the largest delta's interval: no interval of its own
    checks=(
        ReleaseCheck(
            "max_band", "max", pooled_rows("band", "band", output=""), absent="the results hold no band", interval=False
        ),
    ),
    release_rows=ReleaseRows(pooled_rows("band", "band", output=""), place=0),
    index_columns=(IndexColumn("Band", _band_printed, lambda view: view.main_rule),),
    metadata=(
        MetadataSentences("rai:dataAnnotationAnalysis", analysis_sentences, place=2),
        MetadataSentences("rai:dataLimitations", limitation_sentences, place=0),
    ),
    one_line=True,  # the band's headline is the build's one-line answer
)
