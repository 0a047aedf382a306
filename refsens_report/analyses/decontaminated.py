"""The decontaminated subset: the interaction on audited items where the primary reference copies neither annotator.

Statistics: the interaction's margins and swings (``interaction.statistics``) on the decontaminated items,
with unadjusted bootstrap p (they are not part of the Holm family).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

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
    pooled_swing,
)
from refsens_report.figures import Figure
from refsens_report.prose import said
from refsens_report.record import POOLED
from refsens_report.tables import Table
from refsens_report.view import ResultsView


def estimates(context: AuditContext) -> list[Estimate]:
    """The interaction's statistics on the decontaminated items (absent when the record names no annotators)."""
    if not context.has_annotators:
        return []
    stats = interaction.statistics(context.config, "decontaminated")
    return [Estimate(stats, context.subsets.decontaminated, "decontaminated", "decontaminated")]


def applicability(context: AuditContext) -> dict[str, str | None]:
    decontaminated = context.subsets.decontaminated
    if decontaminated is not None and not decontaminated.any():
        return {
            "decontaminated": "Every audited item's primary reference equals one annotator's labelling, so the "
            "decontaminated subset is empty."
        }
    return {
        "decontaminated": None
        if context.has_annotators
        else "The decontaminated subset is defined by the annotator passes, which this record does not name.",
    }


# --- the report ------------------------------------------------------------------------------------


def decontaminated_table(view: ResultsView) -> Table:
    """The interaction recomputed on items where the primary reference copies neither annotator."""
    return replace(
        interaction_table(view, analysis="decontaminated", p_column="p_value"),
        title="Interaction on the decontaminated subset",
        caption=(
            "Margins and swing as in the interaction table, on the decontaminated subset: audited items on which "
            f"the primary reference ({view.primary}) equals neither annotator's strict span set "
            f"({view.items_phrase('decontaminated')} pooled). p is the unadjusted two-sided bootstrap p-value "
            "(these swings are not part of the Holm family). Bold marks intervals excluding zero."
        ),
    )


def decontaminated_tables(view: ResultsView) -> list[Table]:
    """The decontaminated interaction: the paper's table, or margins and swings in long layout."""
    if not interaction_is_long(view):
        return [decontaminated_table(view)]
    margins, swings = interaction_tables_long(view, analysis="decontaminated", p_column="p_value")
    what = (
        f"on the decontaminated subset: audited items on which the primary reference ({view.primary}) equals "
        f"neither annotator's strict span set ({view.items_phrase('decontaminated')} pooled)"
    )
    return [
        replace(
            margins,
            title="Margins on the decontaminated subset",
            caption=f"Margins as in the interaction tables, {what}.",
        ),
        replace(
            swings,
            title="Swings on the decontaminated subset",
            caption=(
                f"Swings as in the interaction tables, {what}. p is the unadjusted two-sided bootstrap "
                "p-value (these swings are not part of the Holm family)."
            ),
        ),
    ]


def headlines(view: ResultsView) -> list[str]:
    """The headline swing recomputed on the decontaminated subset."""
    swing = pooled_swing(view)
    if swing is None:
        return []
    rule = view.main_rule
    clean = view.row(
        "decontaminated",
        "swing",
        rule=rule,
        language=POOLED,
        output=swing["output"],
        output_2=swing["output_2"],
        reference=swing["reference"],
        reference_2=swing["reference_2"],
    )
    if clean is None:
        return []
    return [
        f"On the decontaminated subset ({formatting.counted(view.subset_size('decontaminated'), 'item')} where "
        f"{view.primary} copies neither annotator), the pooled {rule} swing of {swing['output']} − "
        f"{swing['output_2']} between {swing['reference']} and {swing['reference_2']}, the largest on the audited "
        f"subset ({said(swing)}), is {said(clean)} F1 points."
    ]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    applies = view.rows.has("decontaminated")
    return section(ANALYSIS, view, drawn, applies, [], decontaminated_tables(view) if applies else [])


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="decontaminated",
    title="The decontaminated subset",
    question="Does the interaction remain on items where the primary reference copies neither annotator?",
    estimates=estimates,
    applicability=applicability,
    section=_section,
    headlines=headlines,
)
