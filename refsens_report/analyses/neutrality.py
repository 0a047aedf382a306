"""Neutrality of each reference: how often it reproduces each annotator exactly, and the skew between them.

Statistics (audited items): rate(R, X), skew = rate(R, A) − rate(R, B), copied, and the skew's paired permutation
p (``skew_permutation_p``: the roles of A and B swapped independently per item, ``permutation.py``). The headline
also reads the agreement's default-to-first rate: both say whether the shipped reference leans towards one
annotator.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    RATE,
    Analysis,
    AuditContext,
    Estimate,
    IndexColumn,
    MetadataSentences,
    ReleaseCheck,
    ReleaseRows,
    Rows,
    Section,
    Stat,
    StatKind,
    defined_pooled,
    pooled_rows,
    section,
)
from refsens_report.clusters import cluster_order
from refsens_report.config import Config
from refsens_report.counts import Column
from refsens_report.estimator import Estimator, language_key
from refsens_report.figures import (
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    labels_width,
    language_axis,
    languages_noted,
    legend_handles,
    offsets,
    panel_columns,
    panels_height,
    shared_xlabel,
    style,
    subplots,
    top_legend,
)
from refsens_report.formulas import Share
from refsens_report.permutation import permutation_seed, sign_flip_p
from refsens_report.prose import includes_zero, said, said_percent, where_pooled
from refsens_report.record import POOLED
from refsens_report.results import make_row
from refsens_report.tables import Table, label, mark_repeats, n_cell, p_cell, stat_cell
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def statistics(config: Config) -> list[Stat]:
    """How often each reference reproduces each annotator exactly; the skew between annotators; copied."""
    stats: list[Stat] = []
    annotators = config.roles.annotators
    for reference in config.roles.references:
        candidates = [name for name in annotators if name != reference]
        rate = {name: Share(Column("equal", a=reference, b=name)) for name in candidates}
        for name in candidates:
            stats.append(Stat("neutrality", "rate", rate[name], output=name, reference=reference))
        for left, right in combinations(candidates, 2):
            stats.append(
                Stat("neutrality", "skew", rate[left] - rate[right], output=left, output_2=right, reference=reference)
            )
        if candidates:
            copied = Share(Column("equal_any", a=reference, others=tuple(candidates)))
            stats.append(Stat("neutrality", "copied", copied, reference=reference))
    return stats


def estimates(context: AuditContext) -> list[Estimate]:
    """Neutrality is measured on the audited items."""
    if not context.has_annotators:
        return []
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


def skew_pairs(config: Config) -> list[tuple[str, str, str]]:
    """Return (reference, first, second) of every skew, in the order of the skew rows."""
    pairs = []
    for reference in config.roles.references:
        candidates = [name for name in config.roles.annotators if name != reference]
        pairs += [(reference, left, right) for left, right in combinations(candidates, 2)]
    return pairs


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """The skew's paired permutation p per language and pooled: A and B swap roles independently per item.

    The per-item difference is equal(R, A) − equal(R, B), items in id order within each language (pooled: the
    languages in order), so the p does not depend on the record's line order. Each test has its own stream,
    keyed by the languages it pools, the reference and the pair, from the audit's seed.
    """
    mask = context.subsets.audited
    if not context.has_annotators or not mask.any():
        return []
    counts, permutations = context.counts, context.config.audit.permutations
    languages, members = estimator.strata(mask)
    # each test's stream is keyed by the languages it pools, so with one language pooled repeats its test exactly
    groups = [
        *((language, items, language_key(language)) for language, items in zip(languages, members)),
        (POOLED, np.concatenate(members), language_key("\x1f".join(languages))),
    ]
    found: Rows = []
    for reference, left, right in skew_pairs(context.config):
        difference = counts.equal(reference, left).astype(np.int64) - counts.equal(reference, right).astype(np.int64)
        names = (language_key(reference), language_key(left), language_key(right))
        for language, items, key in groups:
            seed = permutation_seed(context.config.audit.seed, key, *names)
            if estimator.cluster is None:
                p_value, informative = sign_flip_p(difference[items], permutations, seed)
                informative_items = informative
            else:  # a cluster's items swap roles together: one sign per cluster, on its summed difference
                ordered, bounds = cluster_order(items, estimator.cluster)
                per_cluster = np.add.reduceat(difference[ordered], bounds[:-1]) if len(ordered) else difference[:0]
                p_value, informative = sign_flip_p(per_cluster, permutations, seed)
                informative_items = int(np.diff(bounds)[per_cluster != 0].sum())
            found.append(
                make_row(
                    analysis="neutrality",
                    statistic="skew_permutation_p",
                    language=language,
                    output=left,
                    output_2=right,
                    reference=reference,
                    subset="audited",
                    estimate=p_value,
                    n_items=informative_items,
                    n_clusters=informative,
                )
            )
    return found


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "neutrality": None
        if context.has_annotators
        else "The record names no annotator passes, so no reference can be tested for neutrality between them.",
    }


# --- the report ------------------------------------------------------------------------------------


def neutrality_table(view: ResultsView) -> Table:
    """Table 3 of the paper: how often each reference reproduces each annotator exactly."""
    rows = view.rows
    permuted = rows.has("neutrality", "skew_permutation_p")
    columns: list[str] = ["Language", "Items"]
    groups: list[tuple[str, int]] = [("", 2)]
    plan: list[tuple[str, dict[str, str]]] = []
    for reference in view.references:
        group_columns = 0
        for annotator in view.annotators:
            if annotator == reference:
                continue
            columns.append(annotator)
            plan.append(("rate", {"output": annotator, "reference": reference}))
            group_columns += 1
        for first, second in view.annotator_pairs():
            if reference in (first, second):
                continue
            columns.append("Skew" if len(view.annotators) == 2 else f"Skew {first}−{second}")
            plan.append(("skew", {"output": first, "output_2": second, "reference": reference}))
            group_columns += 1
            if permuted:
                columns.append("Perm. p" if len(view.annotators) == 2 else f"Perm. p {first}−{second}")
                plan.append(("skew_permutation_p", {"output": first, "output_2": second, "reference": reference}))
                group_columns += 1
        columns.append("Copied")
        plan.append(("copied", {"reference": reference}))
        groups.append((reference, group_columns + 1))
    table_rows = []
    for language in view.languages:
        first = rows.one("neutrality", "copied", language=language, reference=view.primary)
        cells = [label(language), n_cell(first)]
        cells += [
            p_cell(rows.one("neutrality", statistic, language=language, **where), "estimate")
            if statistic == "skew_permutation_p"
            else stat_cell(rows.one("neutrality", statistic, language=language, **where))
            for statistic, where in plan
        ]
        table_rows.append(cells)
    return Table(
        key="neutrality",
        title="Neutrality of each reference",
        caption=(
            f"Percentage of audited items ({view.items_phrase('audited')} pooled) on which a reference "
            "reproduces an annotator's strict span set exactly, per reference. Skew is the difference of the "
            "two rates in points (first annotator minus second) with its "
            f"{view.confidence_label}; Copied is the % of items on which the reference equals at least one "
            "annotator. A neutral reference has a skew near zero." + (permutation_caption(view) if permuted else "")
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 1),
    )


def permutation_caption(view: ResultsView) -> str:
    """Return the caption's sentence on the permutation p beside the skew."""
    permutations = view.settings.audit.permutations
    drawn = f"{permutations:,} random sign vectors" if permutations else "random sign vectors"
    return (
        " Perm. p is the two-sided paired permutation p of the skew: the two annotators' roles swapped "
        "independently on each item (the null that the reference favours neither), over the items the reference "
        f"matches exactly one of them ({drawn} from the seed; every one of the 2^m sign vectors where m items "
        "make that few)."
    )


def neutrality_dots(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Dot plot: how often each reference reproduces each annotator exactly, per language."""
    if not view.rows.has("neutrality", "rate"):
        return None
    languages = figure_languages(view)
    references = view.references
    most = max((len([name for name in view.annotators if name != reference]) for reference in references), default=1)
    # as many panels a row as their titles fit (long reference names: fewer, in rows)
    columns, titles = panel_columns([f"Reference: {reference}" for reference in references], labels_width(languages))
    lines = -(-len(references) // columns)
    per_panel = height(len(languages), 0.12 + 0.06 * most)
    figure, axes = subplots(
        lines, columns, figsize=(WIDTH, panels_height(per_panel, lines)), sharey=True, sharex=True, squeeze=False
    )
    for axis in list(axes.flat)[len(references) :]:
        axis.set_visible(False)
    for axis, reference, title in zip(axes.flat, references, titles):
        positions = language_axis(axis, languages)
        annotators = [name for name in view.annotators if name != reference]
        spread = offsets(len(annotators), 0.15)
        for index, name in enumerate(annotators):
            for language in languages:
                row = view.row("neutrality", "rate", language=language, output=name, reference=reference)
                interval_point(axis, positions[language] - spread[index], row, *style(view.annotators.index(name)))
        axis.set_title(title)
    shared_xlabel(figure, "% of audited items reproduced exactly")
    top_legend(figure, legend_handles(view.annotators), "Annotator")
    skews = "; ".join(
        f"{reference}: skew {said(view.row('neutrality', 'skew', language=POOLED, reference=reference))}"
        for reference in references
    )
    return figure, languages_noted(
        view,
        Figure(
            key="neutrality",
            title="Neutrality of each reference",
            caption=(
                "Percentage of audited items on which each reference's strict span set equals each annotator's, with "
                f"{view.confidence_label}, per language and pooled. A neutral reference reproduces the annotators "
                "about "
                "equally often: its intervals in a row overlap."
            ),
            alt=f"Dot plot, one panel per reference, rows per language. Pooled skew between the annotators: {skews}.",
        ),
    )


def primary_skew(view: ResultsView) -> Row | None:
    """Return the pooled skew of the primary reference between the first two annotators."""
    if len(view.annotators) < 2:
        return None
    first, second = view.annotators[:2]
    return view.row("neutrality", "skew", language=POOLED, output=first, output_2=second, reference=view.primary)


def p_phrase(p_value: float | None) -> str:
    """Return 'p = 0.03' or 'p <0.01' as printed in a sentence."""
    printed = formatting.p_value(p_value)
    return f"p {printed}" if printed.startswith("<") else f"p = {printed}"


def headlines(view: ResultsView) -> list[str]:
    """The primary reference's rates and skew between the annotators, and where it defaults to the first."""
    sentences: list[str] = []
    skew = primary_skew(view)
    if skew is not None:
        first, second = view.annotators[:2]
        audited = formatting.count(view.subset_size("audited"))
        languages = len(view.languages) - 1
        rate_first = view.row("neutrality", "rate", language=POOLED, output=first, reference=view.primary)
        rate_second = view.row("neutrality", "rate", language=POOLED, output=second, reference=view.primary)
        copied = view.row("neutrality", "copied", language=POOLED, reference=view.primary)
        leaning = (
            "an interval that includes zero"
            if includes_zero(skew)
            else f"it favours {first if skew['estimate'] > 0 else second}"
        )
        permuted = view.row(
            "neutrality", "skew_permutation_p", language=POOLED, output=first, output_2=second, reference=view.primary
        )
        if permuted is not None:
            leaning += f"; paired permutation {p_phrase(permuted['estimate'])}"
        sentence = (
            f"On {audited} audited items in {languages} language{'' if languages == 1 else 's'}, the primary "
            f"reference, {view.primary}, "
            f"reproduces {first}'s span set exactly on {said_percent(rate_first)} of items and {second}'s on "
            f"{said_percent(rate_second)}: a skew of {said(skew)} points ({leaning})."
        )
        if copied is not None:
            sentence += f" It equals at least one annotator's labelling on {said_percent(copied)} of items."
        sentences.append(sentence)

    default = view.row("agreement", "default_to_first", language=POOLED)
    if default is not None and default["estimate"] is not None:
        sentences.append(
            f"Where the annotators differed and no third pass fired, the primary reference equals "
            f"{view.annotators[0]} on {said_percent(default)} of items."
        )
    return sentences


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("neutrality")
    return section(ANALYSIS, view, drawn, applies, ["neutrality"], [neutrality_table(view)] if applies else [])


def analysis_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation analysis: every pooled skew."""
    return [
        f"Neutrality skew of {row['reference']}, {row['output']} − {row['output_2']}: {said(row)} points of % of "
        f"items {where_pooled(view, row)}."
        for row in defined_pooled(view, "neutrality", "skew")
    ]


def limitation_sentences(view: ResultsView) -> list[str]:
    """croissant.json's limitations: a primary reference that is not neutral between the annotators."""
    return [
        f"The primary reference {row['reference']} is not neutral between {row['output']} and {row['output_2']}: "
        f"skew {said(row)} points, so scores of systems resembling "
        f"{row['output'] if row['estimate'] > 0 else row['output_2']} are inflated against it."
        for row in defined_pooled(view, "neutrality", "skew", reference=view.primary)
        if formatting.excludes_zero(row["ci_low"], row["ci_high"])
    ]


ANALYSIS = Analysis(
    statistics={
        **DIFFERENCES,
        "rate": RATE,
        "copied": RATE,
        "skew": StatKind(decimals=1, signed=True, tested=True),
        "skew_permutation_p": StatKind(style="p"),
    },
    key="neutrality",
    title="Neutrality of each reference",
    question="Does each reference treat the annotators alike, or does it reproduce one of them more often?",
    methods="""- **Neutrality** (audited): rate(R, X) = % of items on which reference R's strict set equals annotator
  X's; skew = rate(R, A) − rate(R, B); copied = % of items on which R equals at least one annotator.
  Beside the skew's bootstrap interval, a paired permutation test (`skew_permutation_p`): under the null
  that R favours neither annotator, A's and B's roles are exchangeable on every item, so each item's
  difference d = [R = A] − [R = B] keeps or flips its sign with probability ½, independently. The two-sided
  p is the share of sign vectors s with |Σ sᵢdᵢ| ≥ |Σ dᵢ|, per language and pooled. Only the m items where
  R equals exactly one of A and B are informative (d ≠ 0; `n_items` counts them): when 2^m is at most
  `[audit] permutations` (default 10,000) every sign vector is enumerated and p is exact; otherwise that
  many random sign vectors are drawn from the seed (a stream of their own, keyed by the languages the test
  pools, the reference and the pair: with one language, pooled repeats its test) and
  p = (1 + #{|Σ sᵢdᵢ| ≥ |Σ dᵢ|}) / (permutations + 1). The bootstrap interval says how large the skew is;
  the permutation p, how surprising it would be from a neutral reference.""",
    estimates=estimates,
    finish=finish,
    applicability=applicability,
    section=_section,
    figures=(neutrality_dots,),
    headlines=headlines,
    # the skew has no rule: it compares whole labellings, item by item
    checks=(
        ReleaseCheck(
            "max_abs_skew",
            "max_abs",
            pooled_rows("neutrality", "skew", main_rule=False, primary=True),
            absent="the results hold no skew of {primary}",
        ),
    ),
    release_rows=ReleaseRows(pooled_rows("neutrality", "skew", main_rule=False, primary=True), place=1),
    index_columns=(
        IndexColumn(
            "Primary-reference skew", lambda view: said(primary_skew(view)), lambda view: f"points, {view.primary}"
        ),
    ),
    metadata=(
        MetadataSentences("rai:dataAnnotationAnalysis", analysis_sentences, place=1),
        MetadataSentences("rai:dataLimitations", limitation_sentences, place=1),
    ),
)
