"""The registry: every analysis in order.

``ANALYSES`` is the one ordered list: the order of the rows in results.json and results.csv, of the sections
and the contents of the report, of the figures and of the headline findings.
"""

from __future__ import annotations

from refsens_report.analyses import (
    aggregation,
    agreement,
    alpha,
    band,
    by_type,
    decontaminated,
    disagreements,
    duplicates,
    gamma,
    gold_errors,
    interaction,
    leaderboard,
    neutrality,
    score_range,
    swap,
    type_confusion,
)
from refsens_report.analyses.base import Analysis
from refsens_report.counts import ColumnKind

ANALYSES: tuple[Analysis, ...] = (
    agreement.ANALYSIS,
    alpha.ANALYSIS,
    gamma.ANALYSIS,
    neutrality.ANALYSIS,
    swap.ANALYSIS,
    score_range.ANALYSIS,
    interaction.ANALYSIS,
    band.ANALYSIS,
    decontaminated.ANALYSIS,
    duplicates.ANALYSIS,
    type_confusion.ANALYSIS,
    by_type.ANALYSIS,
    disagreements.ANALYSIS,
    gold_errors.ANALYSIS,
    leaderboard.ANALYSIS,
    aggregation.ANALYSIS,
)

ORDER = {analysis.key: position for position, analysis in enumerate(ANALYSES)}


def figure_makers() -> tuple:
    """Return every analysis's figure functions, in the report's order."""
    return tuple(draw for analysis in ANALYSES for draw in analysis.figures)


def column_kinds() -> dict[str, ColumnKind]:
    """Return every per-item column kind the analyses declare, by name (``counts.ItemCounts``'s ``kinds``)."""
    return {kind.name: kind for analysis in ANALYSES for kind in analysis.columns}
