"""What the gold would have been: the primary reference re-aggregated on the silent items under other rules.

The paper traces its skew to an undocumented aggregation default: where annotators A and B differed and no
third pass fired (the *silent* items), the delivered gold kept A. Here each what-if reference W is built per
item from the record itself: on the silent items the primary reference is replaced by ``keep_b`` (B's spans),
``merge_union`` (A ∪ B, strict spans), ``merge_intersection`` (A ∩ B) or ``coin`` (A or B with probability ½,
independently per item); every other item keeps the primary reference. The three fixed rules are derived
labellings of the per-item counts (``ItemCounts.derive``), so their F1 and equality columns are ordinary count
columns drawn with the swap's (the audited items' stream): deltas are paired replicate by replicate. ``coin`` is
not drawn: its counts enter at their exact expectation, the mean of ``keep_a``'s (A on the silent items) and
``keep_b``'s.

Statistics (audited items, ``reference`` = ``what_if:<rule>``): score F1(O, W); delta F1(O, W) − F1(O, primary);
skew rate(W, A) − rate(W, B); with 3+ ranked outputs, kendall_tau and flips of the ranking under W against the
primary's (``ranking.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    Estimate,
    Rows,
    Section,
    Stat,
    StatKind,
    section,
)
from refsens_report.analyses.ranking import MIN_OUTPUTS, pair_orders, rank_agreement, ranked_outputs
from refsens_report.bootstrap import percentile_interval
from refsens_report.config import Config
from refsens_report.counts import Column, ItemCounts
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    MARKERS,
    OKABE_ITO,
    WIDTH,
    Figure,
    height,
    interval_point,
    label_outputs,
    legend_handles,
    output_positions,
    plain,
    shared_xlabel,
    subplots,
    top_legend,
)
from refsens_report.formulas import F1, Env, Expr, Share
from refsens_report.prose import said
from refsens_report.record import POOLED
from refsens_report.results import make_row
from refsens_report.tables import Table, label, mark_repeats, stat_cell
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

WHAT_IFS = ("keep_b", "merge_union", "merge_intersection", "coin")
# What each rule puts on a silent item, as the report says it.
DESCRIBED = {
    "keep_b": "B's spans",
    "merge_union": "the union of A's and B's spans",
    "merge_intersection": "the spans A and B share",
    "coin": "A's or B's spans with probability ½ (the expectation)",
}
# Derived labellings' names inside the per-item counts: a record's labelling name cannot hold a control
# character (names.py), so these never collide with one.
INTERNAL = "\x00what_if:"


def reference_label(what_if: str) -> str:
    """Return the results' ``reference`` of a what-if rule: ``what_if:keep_b``."""
    return f"what_if:{what_if}"


# --- the what-if references -----------------------------------------------------------------------------


def silent_items(counts: ItemCounts, config: Config) -> np.ndarray:
    """Return the silent items: A and B both present, their strict sets differ, and no third pass fired."""
    first, second = config.roles.annotators[:2]
    return counts.values(Column("unadjudicated_split", a=first, b=second)).astype(bool)


def derive_references(counts: ItemCounts, config: Config) -> None:
    """Add keep_a, keep_b, merge_union and merge_intersection to the per-item counts as derived labellings.

    Each is the primary reference's strict spans off the silent items and the rule's spans on them; every such
    span is a span of A, B or the primary, so the counts need no new span. Present where the primary is, and on
    every silent item (where A and B both are).
    """
    first, second = config.roles.annotators[:2]
    silent = silent_items(counts, config)

    def on_silent(ids: np.ndarray, wanted: bool) -> np.ndarray:
        return ids[silent[counts.item_of("strict", ids)] == wanted]

    kept = on_silent(counts.ids("strict", config.roles.primary), False)
    spans_a, spans_b = counts.ids("strict", first), counts.ids("strict", second)
    rules = {
        "keep_a": spans_a,
        "keep_b": spans_b,
        "merge_union": np.concatenate([spans_a, spans_b]),  # repeats count once: derive keeps a set
        "merge_intersection": counts.common("strict", first, second),
    }
    present = counts.has(config.roles.primary) | silent
    for rule, spans in rules.items():
        counts.derive(INTERNAL + rule, np.concatenate([kept, on_silent(spans, True)]), present)


@dataclass(frozen=True)
class ExpectedF1(Expr):
    """Micro F1 of ``output`` against a reference that is ``first`` or ``second`` with probability ½ on each item.

    From the expected counts: 2·E[TP] = TP(first) + TP(second), E|R| = (|first| + |second|) / 2, so
    F1 = 100 · (TP₁ + TP₂) / (|O| + (|R₁| + |R₂|) / 2). The two agree off the silent items, where this is F1.
    """

    rule: str
    output: str
    first: str
    second: str

    def columns(self) -> tuple[Column, ...]:
        return (
            Column("tp", self.rule, self.output, self.first),
            Column("tp", self.rule, self.output, self.second),
            Column("size", self.rule, self.output),
            Column("size", self.rule, self.first),
            Column("size", self.rule, self.second),
        )

    def evaluate(self, env: Env) -> np.ndarray:
        tp_first, tp_second, size_output, size_first, size_second = (env.sum(column) for column in self.columns())
        denominator = size_output + (size_first + size_second) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, 100 * (tp_first + tp_second) / denominator, np.nan)


@dataclass(frozen=True)
class Average(Expr):
    """The mean of its terms, inside every replicate (the expectation of a statistic linear in the counts)."""

    terms: tuple[Expr, ...]

    def columns(self) -> tuple[Column, ...]:
        return tuple(column for term in self.terms for column in term.columns())

    def evaluate(self, env: Env) -> np.ndarray:
        return np.mean(np.stack([env.value(term) for term in self.terms]), axis=0)


def score(rule: str, output: str, what_if: str) -> Expr:
    """Return F1 of an output against a what-if reference."""
    if what_if == "coin":
        return ExpectedF1(rule, output, INTERNAL + "keep_a", INTERNAL + "keep_b")
    return F1(rule, output, INTERNAL + what_if)


def rate(what_if: str, annotator: str) -> Expr:
    """Return the % of items on which a what-if reference's strict set equals an annotator's."""
    if what_if == "coin":
        return Average(tuple(Share(Column("equal", a=INTERNAL + kept, b=annotator)) for kept in ("keep_a", "keep_b")))
    return Share(Column("equal", a=INTERNAL + what_if, b=annotator))


def scored_outputs(config: Config) -> tuple[str, ...]:
    """Return the outputs scored against the what-ifs: every output but the primary reference itself."""
    return tuple(output for output in config.roles.outputs if output != config.roles.primary)


def statistics(config: Config) -> list[Stat]:
    """Per what-if: each output's score and its delta from the primary, per rule; the skew per annotator pair."""
    stats: list[Stat] = []
    primary = config.roles.primary
    for what_if in WHAT_IFS:
        reference = reference_label(what_if)
        for rule in config.audit.rules:
            for output in scored_outputs(config):
                against = score(rule, output, what_if)
                stats.append(Stat("aggregation", "score", against, rule, output, reference=reference))
                stats.append(
                    Stat(
                        "aggregation",
                        "delta",
                        against - F1(rule, output, primary),
                        rule,
                        output,
                        reference=reference,
                        reference_2=primary,
                    )
                )
        for left, right in combinations(config.roles.annotators, 2):
            skew = rate(what_if, left) - rate(what_if, right)
            stats.append(Stat("aggregation", "skew", skew, output=left, output_2=right, reference=reference))
    return stats


def applies(context: AuditContext) -> bool:
    return context.has_annotators and context.third_pass_known


def estimates(context: AuditContext) -> list[Estimate]:
    """The what-ifs are measured on the audited items, on the swap's stream (paired with every swap row)."""
    if not applies(context):
        return []
    context.counts.derive_with(partial(derive_references, config=context.config))
    return [Estimate(statistics(context.config), context.subsets.audited, "audited", "audited")]


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """Kendall's tau-b and flips of the ranking under each what-if against the primary's (3+ ranked outputs).

    On the audited draws the what-if scores were estimated on, so each replicate's ranks come from the same
    resample under both references; computed as the leaderboard computes them (``ranking.py``).
    """
    config, mask = context.config, context.subsets.audited
    outputs = ranked_outputs(config)
    if not applies(context) or len(outputs) < MIN_OUTPUTS or not mask.any():
        return []
    primary = config.roles.primary
    under = {
        (rule, output, what_if): score(rule, output, what_if) if what_if else F1(rule, output, primary)
        for rule in config.audit.rules
        for output in outputs
        for what_if in (None, *WHAT_IFS)
    }
    groups, n_items, env = estimator.environment(
        [c for expr in under.values() for c in expr.columns()], mask, "audited"
    )
    n_clusters = estimator.cluster_counts(mask)
    found: Rows = []
    for rule in config.audit.rules:
        orders = {
            what_if: pair_orders(np.stack([env.value(under[rule, output, what_if]) for output in outputs]))
            for what_if in (None, *WHAT_IFS)
        }
        agreement = {what_if: rank_agreement(orders[what_if], orders[None]) for what_if in WHAT_IFS}
        for position, statistic in enumerate(("kendall_tau", "flips")):
            for what_if in WHAT_IFS:
                values = agreement[what_if][position]  # group, 1 + replicate
                low, high = percentile_interval(values[:, 1:], config.audit.confidence)
                found += [
                    make_row(
                        analysis="aggregation",
                        statistic=statistic,
                        rule=rule,
                        language=group,
                        reference=reference_label(what_if),
                        reference_2=primary,
                        subset="audited",
                        estimate=values[g, 0],
                        ci_low=low[g],
                        ci_high=high[g],
                        n_items=n_items[g],
                        n_clusters=n_clusters[g],
                    )
                    for g, group in enumerate(groups)
                ]
        env.forget()
    return found


def summary(context: AuditContext) -> dict[str, Any] | None:
    """What results.json says beside the rows: the silent audited items per language and pooled."""
    if not applies(context):
        return None
    audited = context.subsets.audited
    silent = silent_items(context.counts, context.config) & audited
    languages = context.record.table.language_names()
    per_language = {
        language: int(silent[languages == language].sum())
        for language in context.record.languages
        if audited[languages == language].any()
    }
    first, second = context.config.roles.annotators[:2]
    return {
        "annotators": [first, second],
        "primary": context.config.roles.primary,
        "rules": list(WHAT_IFS),
        "coin": "expectation",
        "silent_items": {**per_language, POOLED: int(silent.sum())},
    }


def applicability(context: AuditContext) -> dict[str, str | None]:
    if not context.has_annotators:
        reason = "The record names no annotator passes, so there is no aggregation of A and B to redo."
    elif not context.third_pass_known:
        reason = (
            "Not every item records whether a third pass fired (meta.third_pass), so the silent items, where "
            "A and B differ and no third pass settled them, cannot be told apart from adjudicated ones."
        )
    else:
        reason = None
    return {"aggregation": reason}


# --- the report ------------------------------------------------------------------------------------


def annotator_names(view: ResultsView) -> tuple[str, str]:
    """Return annotators A and B, whose disagreements the what-ifs re-aggregate."""
    first, second = ((view.data.get("aggregation") or {}).get("annotators") or view.annotators)[:2]
    return first, second


def silent_phrase(view: ResultsView, language: str = POOLED) -> str:
    """Return 'the 812 audited items where annotator_a and annotator_b differ and no third pass fired'."""
    first, second = annotator_names(view)
    count = ((view.data.get("aggregation") or {}).get("silent_items") or {}).get(language)
    size = f"{formatting.count(count)} " if count is not None else ""
    return f"the {size}audited items where {first} and {second} differ and no third pass fired"


def _what_ifs(view: ResultsView) -> list[str]:
    """Return the what-if rules the results hold, in their order."""
    found = {row["reference"] for _, row in view.rows.select("aggregation", "score")}
    found |= {row["reference"] for _, row in view.rows.select("aggregation", "skew")}
    return [what_if for what_if in WHAT_IFS if reference_label(what_if) in found]


def _lines(view: ResultsView, rules: list[str], scores: bool) -> list[tuple[str, str, dict[str, str]]]:
    """Return the table's statistics per language: (row label, statistic, the row's labels beside the what-if)."""
    primary, several = view.primary, len(rules) > 1
    outputs = [output for output in view.outputs if output != primary]
    ranked = view.rows.has("aggregation", "kendall_tau")
    lines: list[tuple[str, str, dict[str, str]]] = []
    for rule in rules:
        named = f" ({rule})" if several else ""
        for output in outputs:
            if scores:
                lines.append((f"F1 {output}{named}", "score", {"rule": rule, "output": output}))
            lines.append((f"Δ {output}{named}", "delta", {"rule": rule, "output": output, "reference_2": primary}))
        if ranked:
            lines += [
                (f"tau-b with {primary}{named}", "kendall_tau", {"rule": rule, "reference_2": primary}),
                (f"Flips against {primary}{named}", "flips", {"rule": rule, "reference_2": primary}),
            ]
    return lines + [
        (f"Skew {left} − {right}", "skew", {"output": left, "output_2": right})
        for left, right in view.annotator_pairs()
    ]


def aggregation_table(view: ResultsView) -> Table:
    """Per language: each output's Δ under each what-if (main rule), the what-if's skew, and tau-b and flips.

    One column per what-if, so the page stays four number columns wide whatever the number of outputs. The
    table's CSV (``Table.csv``) holds every aggregation row: the scores too, under every rule.
    """
    rows, rule, primary = view.rows, view.main_rule, view.primary
    what_ifs = _what_ifs(view)
    first, second = annotator_names(view)
    ranked = rows.has("aggregation", "kendall_tau")

    def table_rows(lines: list[tuple[str, str, dict[str, str]]]) -> tuple:
        found = []
        for language in view.languages:
            for name, statistic, where in lines:
                cells = [label(language), label(name)]
                cells += [
                    stat_cell(
                        rows.one("aggregation", statistic, language=language, reference=reference_label(w), **where)
                    )
                    for w in what_ifs
                ]
                found.append(cells)
        return mark_repeats(found, 1)

    caption = (
        f"On {silent_phrase(view)}, the primary reference {primary} is replaced by {second}'s spans (keep_b), the "
        f"union of {first}'s and {second}'s (merge_union), their intersection (merge_intersection) or, item by "
        f"item, {first}'s or {second}'s with probability ½ (coin, its exact expectation); every other audited item "
        f"keeps {primary} ({view.items_phrase('audited')} pooled). Δ is an output's {rule} micro-F1 against the "
        f"what-if minus its F1 against {primary}, in F1 points, with its paired bootstrap {view.confidence_label} "
        f"(the swap's draws). Skew is how much more often the what-if reproduces the first annotator than the "
        f"second, in points, as in the neutrality table ({primary}'s own skew is there)."
        + (
            f" tau-b and Flips compare the ranking of the outputs under the what-if with the ranking under {primary}."
            if ranked
            else ""
        )
    )
    columns = ("Language", "Statistic", *what_ifs)
    full = Table(
        key="aggregation",
        title="What the gold would have been",
        caption=caption,
        columns=columns,
        rows=table_rows(_lines(view, view.rules, scores=True)),
    )
    rules = ", ".join(view.rules)
    note = (
        f"The page shows the {rule} rule's Δ; the table's CSV holds every row: the scores (F1) as well, under "
        f"{'each rule' if len(view.rules) > 1 else 'the ' + rules + ' rule'} ({rules})."
    )
    return Table(
        key="aggregation",
        title="What the gold would have been",
        caption=caption,
        columns=columns,
        rows=table_rows(_lines(view, [rule], scores=False)),
        notes=(note,),
        csv=full,
    )


def aggregation_dots(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Each output's pooled score under the primary, the other references and every what-if, with intervals."""
    what_ifs = _what_ifs(view)
    if not view.rows.has("aggregation", "score") or not what_ifs:
        return None
    rule, primary = view.main_rule, view.primary
    first, second = annotator_names(view)
    outputs = [output for output in view.outputs if output != primary]
    references = list(view.references)
    names = [*(f"{r} (primary)" if r == primary else r for r in references), *(f"what-if: {w}" for w in what_ifs)]

    def row_of(output: str, index: int) -> Row | None:
        where = {"rule": rule, "language": POOLED, "output": output}
        if index < len(references):
            return (
                None if references[index] == output else view.row("swap", "score", reference=references[index], **where)
            )
        return view.row("aggregation", "score", reference=reference_label(what_ifs[index - len(references)]), **where)

    figure, axis = subplots(1, 1, figsize=(WIDTH, height(len(outputs), 0.12 * len(names) + 0.1)))
    positions = output_positions(outputs)
    offsets = np.linspace(0.3, -0.3, len(names))
    for output in outputs:
        for index in range(len(names)):
            interval_point(
                axis,
                positions[output] + offsets[index],
                row_of(output, index),
                OKABE_ITO[index % len(OKABE_ITO)],
                MARKERS[index % len(MARKERS)],
            )
    label_outputs(axis, outputs)
    shared_xlabel(figure, plain(f"{rule} micro-F1 (F1 points, pooled, audited subset)"))
    top_legend(figure, legend_handles(names), "Reference")
    where = {"rule": rule, "language": POOLED, "reference": reference_label(what_ifs[0]), "reference_2": primary}
    keep_b = "; ".join(
        f"{output} {said(view.row('aggregation', 'delta', **where, output=output))}" for output in outputs[:6]
    )
    return figure, Figure(
        key="aggregation",
        title="Scores under each what-if reference",
        caption=(
            f"Each output's pooled {rule} F1 with its {view.confidence_label} against the primary reference, the "
            f"other references and each what-if reference: {primary} re-aggregated on {silent_phrase(view)} "
            "(keep_b: B's spans; merge_union: A ∪ B; merge_intersection: A ∩ B; coin: A or B with probability ½, "
            f"its expectation; A = {first}, B = {second}). The what-if scores are paired with {primary}'s on the "
            "same bootstrap draws."
        ),
        alt=(
            f"Dot plot, one row per output, one point per reference with its interval. Pooled {rule} F1 change "
            f"from {primary} to what-if {what_ifs[0]}: {keep_b}."
        ),
    )


def headlines(view: ResultsView) -> list[str]:
    """Had the default kept B: each output's pooled score change and the skew; the other rules for the first output."""
    rule, primary = view.main_rule, view.primary
    keep_b = reference_label("keep_b")
    deltas = [
        row
        for _, row in view.rows.select("aggregation", "delta", rule=rule, language=POOLED, reference=keep_b)
        if row["estimate"] is not None
    ]
    if not deltas:
        return []
    first, second = annotator_names(view)
    if len(deltas) > 3:  # at scale: annotator A's change (the one the default favoured), then the largest
        largest = max(deltas, key=lambda row: abs(row["estimate"]))
        lead = next((row for row in deltas if row["output"] == first), None)
        if lead is not None and lead is not largest:
            moves = (
                f"{first}'s pooled {rule} F1 would change by {said(lead)} F1 points, and the {len(deltas)} "
                f"outputs' by up to {said(largest)} ({largest['output']})"
            )
        else:
            moves = (
                f"the pooled {rule} F1 of the {len(deltas)} outputs would change by up to {said(largest)} F1 "
                f"points ({largest['output']})"
            )
    else:
        each = [f"{deltas[0]['output']}'s pooled {rule} F1 would change by {said(deltas[0])}"]
        each += [f"{row['output']}'s by {said(row)}" for row in deltas[1:]]
        moves = listed(each) + " F1 points"
    sentence = f"Had {primary} kept {second}'s spans on {silent_phrase(view)}, {moves}"
    skew = view.row("aggregation", "skew", language=POOLED, output=first, output_2=second, reference=keep_b)
    primary_skew = view.row("neutrality", "skew", language=POOLED, output=first, output_2=second, reference=primary)
    if skew is not None:
        sentence += f"; the reference's skew between {first} and {second} would be {said(skew)} points"
        sentence += f" instead of {said(primary_skew)}" if primary_skew is not None else ""
    tau = view.row("aggregation", "kendall_tau", rule=rule, language=POOLED, reference=keep_b, reference_2=primary)
    flips = view.row("aggregation", "flips", rule=rule, language=POOLED, reference=keep_b, reference_2=primary)
    if tau is not None and flips is not None:
        sentence += (
            f"; the ranking would keep tau-b {said(tau)} with the primary ranking, {said(flips)} pairs of "
            "outputs in reverse order"
        )
    sentences = [sentence + "."]
    output = deltas[0]["output"]
    others = [
        (
            what_if,
            view.row(
                "aggregation",
                "delta",
                rule=rule,
                language=POOLED,
                output=output,
                reference=reference_label(what_if),
                reference_2=primary,
            ),
        )
        for what_if in ("merge_union", "merge_intersection", "coin")
    ]
    others = [(what_if, row) for what_if, row in others if row is not None and row["estimate"] is not None]
    if others:
        parts = [f"{said(row)} under {what_if}" for what_if, row in others]
        sentences.append(f"Under the other rules, {output}'s score would change by {listed(parts)} (F1 points).")
    return sentences


def listed(parts: list[str]) -> str:
    """Return 'a', 'a and b' or 'a, b and c'."""
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies_here = view.rows.has("aggregation")
    extra = ()
    if applies_here:
        extra = (
            f"On {silent_phrase(view)}, the primary reference {view.primary} is whatever the pipeline's aggregation "
            f"rule put there, with no third pass to settle it. Each what-if reference keeps {view.primary} everywhere "
            "else and replaces it there by another rule, so the change in a score is the part of it that the "
            "aggregation rule decided.",
        )
    tables = [aggregation_table(view)] if applies_here else []
    return section(ANALYSIS, view, drawn, applies_here, ["aggregation"], tables, extra)


def count_columns(config: Config) -> int:
    """The what-if's four derived references (keep_a, keep_b, merge_union, merge_intersection): TP with each
    output and their sizes per rule, and their equality with each annotator (an upper bound)."""
    roles = config.roles
    return 4 * (len(config.audit.rules) * (len(roles.outputs) + 1) + len(roles.annotators)) if roles.annotators else 0


ANALYSIS = Analysis(
    statistics={
        **DIFFERENCES,
        "skew": StatKind(decimals=1, signed=True, tested=True),  # a what-if reference's skew
        "flips": StatKind(style="whole"),
    },
    count_columns=count_columns,
    key="aggregation",
    title="Aggregation what-if",
    question="How would the scores, the ranking and the skew have looked had the pipeline aggregated the annotators "
    "differently?",
    methods="""- **Aggregation what-if** (audited; needs annotators A and B and `meta.third_pass` on every corpus item).
  On the *silent* items (A's and B's strict sets differ and no third pass fired) the primary reference is
  replaced by `keep_b` (B's spans), `merge_union` (A ∪ B, strict spans), `merge_intersection` (A ∩ B) or
  `coin` (A's or B's spans with probability ½, independently per item); every other item keeps the primary
  reference. Under `relaxed` a what-if reference is the relaxed set of its strict spans. Rows, with
  `reference` = `what_if:<rule>`: `score` F1(O, W); `delta` F1(O, W) − F1(O, primary) (`reference_2`),
  computed inside each replicate of the swap's bootstrap draw, so it is paired with every swap row; `skew`
  rate(W, A) − rate(W, B), as for neutrality; with 3 or more ranked outputs, `kendall_tau` (tau-b) and
  `flips` (pairs of outputs in reverse order) of the ranking under W against the ranking under the primary,
  computed as for the leaderboard. `coin` is not drawn: each silent item's counts (TP, the reference's size,
  whether it equals each annotator) enter at their exact expectation, the mean of A's and B's. The skew is
  linear in those counts, so coin's skew is exactly its expected skew over coin flips; F1 is a ratio, so
  coin's score is the F1 of the expected counts, which differs from the mean F1 over coin flips by a
  second-order term only (on a simulated record of 25,000 items, by less than 0.01 F1 points from the mean
  over 2,000 seeded coin draws).""",
    estimates=estimates,
    finish=finish,
    applicability=applicability,
    summary=summary,
    section=_section,
    figures=(aggregation_dots,),
    headlines=headlines,
)
