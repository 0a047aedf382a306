"""Duplicate robustness: the interaction under every duplicate policy, and the defective duplicate groups.

Statistics: the interaction's margins and swings (``interaction.statistics``) on the audited items kept by
each policy, without excluding defective groups, each policy on its own random stream. results.json also
carries what the duplicate key found (``summary``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from refsens_report import formatting
from refsens_report.analyses import interaction
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    Estimate,
    Section,
    section,
)
from refsens_report.analyses.interaction import (
    interaction_is_long,
    interaction_table,
    interaction_tables_long,
)
from refsens_report.config import POLICIES
from refsens_report.figures import (
    FIGURE_ROWS,
    OKABE_ITO,
    WIDTH,
    Figure,
    figure_languages,
    height,
    interval_point,
    language_axis,
    languages_noted,
    shared_xlabel,
    subplots,
    top_legend,
    zero_line,
)
from refsens_report.prose import pair_label, said
from refsens_report.record import POOLED
from refsens_report.tables import Cell, Table, label, mark_repeats
from refsens_report.view import ResultsView

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def estimates(context: AuditContext) -> list[Estimate]:
    """The interaction's statistics under every duplicate policy (none when no two items share a key)."""
    return [
        Estimate(
            interaction.statistics(context.config, "duplicates", policy),
            context.subsets.duplicates[policy],
            "audited",
            f"duplicates:{policy}",
        )
        for policy in POLICIES
        if policy in context.subsets.duplicates
    ]


def applicability(context: AuditContext) -> dict[str, str | None]:
    groups = context.groups
    return {
        "duplicates": None
        if groups.keys
        else f"No two items share a duplicate key (meta.{groups.key_name}), so duplicate policies cannot change "
        "anything.",
    }


def summary(context: AuditContext) -> dict[str, Any]:
    """Return what results.json says of the duplicates: the key, the groups, and the defective ones."""
    groups = context.groups
    return {
        "key": groups.key_name,
        "available": bool(groups.keys),
        "groups": len(groups.keys),
        "duplicated_items": groups.duplicated_items,
        "excluded": context.config.audit.exclude_defective_duplicates,
        "defective_groups": [
            {"key": g.key, "items": list(g.items), "item": g.item, "reference": g.reference, "copies": g.copies}
            for g in context.defective
        ],
    }


# --- the report ------------------------------------------------------------------------------------


def duplicates_table(view: ResultsView) -> Table:
    """The interaction under each duplicate policy, without excluding defective groups."""
    policies = [
        policy
        for policy in POLICIES
        if view.rows.select("duplicates", "margin", policy=policy)
        or view.rows.select("duplicates", "swing", policy=policy)
    ]
    tables = [interaction_table(view, analysis="duplicates", policy=policy, p_column="p_value") for policy in policies]
    rows: list[list[Cell]] = []
    for policy, table in zip(policies, tables):
        rows += [[label(policy), *row] for row in table.rows]
    base = tables[0] if tables else interaction_table(view, analysis="duplicates", p_column="p_value")
    label_columns = base.groups[0][1]
    plain_rows = [[replace(cell, repeated=False) for cell in row] for row in rows]
    return Table(
        key="duplicates",
        title="Duplicate-policy robustness",
        caption=(
            "Margins and swing as in the interaction table, recomputed under each duplicate policy "
            f"({', '.join(POLICIES)}) without excluding defective duplicate groups, so a "
            "result produced by defective copies shows up as a difference between policies. p is unadjusted."
        ),
        columns=("Policy", *base.columns),
        groups=(("", 1 + base.groups[0][1]), *base.groups[1:]),
        rows=mark_repeats(plain_rows, 1 + label_columns),
    )


def duplicates_tables(view: ResultsView) -> list[Table]:
    """Duplicate robustness: the paper's table, or margins and swings in long layout, policy first."""
    if not interaction_is_long(view):
        return [duplicates_table(view)]
    policies = [
        policy
        for policy in POLICIES
        if view.rows.select("duplicates", "margin", policy=policy)
        or view.rows.select("duplicates", "swing", policy=policy)
    ]
    margin_rows: list[list[Cell]] = []
    swing_rows: list[list[Cell]] = []
    for policy in policies:
        margins, swings = interaction_tables_long(view, analysis="duplicates", policy=policy, p_column="p_value")
        margin_rows += [[label(policy), *(replace(cell, repeated=False) for cell in row)] for row in margins.rows]
        swing_rows += [[label(policy), *(replace(cell, repeated=False) for cell in row)] for row in swings.rows]
    margins, swings = interaction_tables_long(view, analysis="duplicates", p_column="p_value")
    what = (
        f"recomputed under each duplicate policy ({', '.join(POLICIES)}) without excluding "
        "defective duplicate groups, so a result produced by defective copies shows up as a difference "
        "between policies"
    )
    return [
        Table(
            key="duplicates-margins",
            title="Duplicate-policy robustness: margins",
            caption=f"Margins as in the interaction tables, {what}.",
            columns=("Policy", *margins.columns),
            groups=(("", 1 + margins.groups[0][1]), *margins.groups[1:]),
            rows=mark_repeats(margin_rows, 3),
        ),
        Table(
            key="duplicates-swings",
            title="Duplicate-policy robustness: swings",
            caption=f"Swings as in the interaction tables, {what}. p is unadjusted.",
            columns=("Policy", *swings.columns),
            groups=(("", 1 + swings.groups[0][1]), *swings.groups[1:]),
            rows=mark_repeats(swing_rows, 3),
        ),
    ]


def defective_groups_table(view: ResultsView) -> Table:
    """The duplicate groups excluded as defective copies, with their members."""
    groups = view.data.get("duplicates", {}).get("defective_groups", [])
    rows = tuple(
        (
            label(str(group.get("key", ""))),
            label(", ".join(map(str, group.get("items", [])))),
            label(str(group.get("reference", ""))),
            label(str(group.get("copies", ""))),
        )
        for group in groups
    )
    excluded = _excluded(view)
    return Table(
        key="defective-groups",
        title="Defective duplicate groups",
        caption=(
            "Duplicate groups on which a non-primary reference copies one annotator exactly, shares no span with "
            "the other, and the annotators differ (the copy defect). "
            + (
                "Every member was removed before the main analyses."
                if excluded
                else "They were kept: exclude_defective_duplicates is false."
            )
        ),
        columns=("Duplicate key", "Items", "Reference", "Copies"),
        rows=rows,
    )


def duplicates_multiples(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Small multiples, one panel per duplicate policy: the swings the swing figure shows (the largest |swing|
    of the interaction, pooled, main rule), or, with a single swing and several languages, that swing per language."""
    policies = [policy for policy in POLICIES if view.rows.select("duplicates", "swing", policy=policy)]
    swings = view.largest("interaction", "swing")
    if not policies or not swings:
        return None
    rule = view.main_rule
    per_language = len(swings) == 1 and len(view.languages) > 2
    shown = swings[:FIGURE_ROWS]
    languages = figure_languages(view)
    rows = len(languages) if per_language else len(shown)
    figure, axes = subplots(
        1,
        len(policies),
        figsize=(WIDTH, height(rows, 0.2 if per_language else 0.3)),
        sharey=True,
        sharex=True,
        squeeze=False,
    )
    pairs = interaction.reference_pairs_of(view, shown)
    for axis, policy in zip(axes[0], policies):
        zero_line(axis)
        if per_language:
            positions = language_axis(axis, languages)
            for language in languages:
                row = view.row(
                    "duplicates",
                    "swing",
                    rule=rule,
                    language=language,
                    policy=policy,
                    **interaction.same_swing(swings[0]),
                )
                interval_point(axis, positions[language], row, OKABE_ITO[2], "o")
        else:
            found = [
                view.row(
                    "duplicates", "swing", rule=rule, language=POOLED, policy=policy, **interaction.same_swing(swing)
                )
                for swing in shown
            ]
            interaction.swing_rows(axis, view, shown, found, pairs, holm=False)
        axis.set_title(policy)
    shared_xlabel(figure, f"Swing ({rule}{'' if per_language else ', pooled'}, F1 points)")
    if not per_language:
        top_legend(figure, interaction.pair_handles(pairs), "References (first vs second)")
    where = {"rule": rule, "language": POOLED, **interaction.same_swing(swings[0])}
    pooled = "; ".join(
        f"{policy}: {said(view.row('duplicates', 'swing', **where, policy=policy))}" for policy in policies
    )
    first = f"{swings[0]['output']} − {swings[0]['output_2']} ({pair_label(swings[0])})"
    if per_language:
        shows = (
            f"Swing of {first} ({rule} rule, F1 points, {view.confidence_label}) per language under each "
            "duplicate policy"
        )
    else:
        count = (
            f"the {len(shown)} largest pooled {rule} swings of the interaction, of {len(swings):,}"
            if len(shown) < len(swings)
            else f"every pooled {rule} swing, largest |swing| first"
        )
        shows = (
            f"Swing (F1 points, {view.confidence_label}, pooled) under each duplicate policy, for {count} "
            "(the rows of the swing figure)"
        )
    model = Figure(
        key="duplicates",
        title="Duplicate-policy robustness",
        caption=(
            f"{shows}, without excluding defective duplicate groups. A swing that appears under one policy only "
            "is produced by the duplicates, not by the references. Every swing under every policy is in the "
            "duplicate tables and their CSV downloads."
        ),
        alt=f"Small multiples, one panel per duplicate policy. Pooled swings of {first}: {pooled}.",
    )
    return figure, (languages_noted(view, model) if per_language else model)


def _excluded(view: ResultsView) -> bool:
    return bool(view.settings.audit.exclude_defective_duplicates)


def headlines(view: ResultsView) -> list[str]:
    """How many duplicate groups carry copied references, and whether they were excluded."""
    duplicates = view.data.get("duplicates") or {}
    if not duplicates.get("available"):
        return []
    defective = duplicates.get("defective_groups") or []
    return [
        f"{formatting.counted(len(defective), 'duplicate group')} with copied references "
        f"{formatting.verb(len(defective), 'was', 'were')} found"
        + (" and excluded before the analyses." if defective and _excluded(view) else ".")
    ]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    duplicates = view.data.get("duplicates") or {}
    duplicate_tables = duplicates_tables(view) if view.rows.has("duplicates") else []
    found = []
    if duplicates.get("available"):
        found.append(
            f"Duplicate key '{duplicates.get('key', '')}': {formatting.counted(duplicates.get('groups'), 'group')} "
            f"holding {formatting.counted(duplicates.get('duplicated_items'), 'item')}; "
            f"{len(duplicates.get('defective_groups') or [])} defective."
        )
        if duplicates.get("defective_groups"):
            duplicate_tables.append(defective_groups_table(view))
    return section(ANALYSIS, view, drawn, view.rows.has("duplicates"), ["duplicates"], duplicate_tables, found)


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="duplicates",
    title="Duplicate robustness",
    question="Does the result depend on how duplicated items are handled, or on defective copies among them?",
    estimates=estimates,
    applicability=applicability,
    summary=summary,
    section=_section,
    figures=(duplicates_multiples,),
    headlines=headlines,
)
