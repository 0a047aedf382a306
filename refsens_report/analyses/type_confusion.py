"""Type confusion between the annotators: on spans where A and B agree on the boundaries, the types each gave.

Counted once over the corpus (no bootstrap): results.json carries the cells beside the rows (``summary``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import Analysis, AuditContext, Section, section
from refsens_report.figures import Figure, mpl, plain, subplots
from refsens_report.formatting import count
from refsens_report.tables import Cell, Table, label
from refsens_report.view import ResultsView

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def summary(context: AuditContext) -> dict[str, Any]:
    """Return A-versus-B type counts on boundary-matched spans over the corpus."""
    counts, subsets, config = context.counts, context.subsets, context.config
    if subsets.corpus is None:
        return {"available": False, "annotators": [], "cells": []}
    first, second = config.roles.annotators[:2]
    cells = counts.type_confusion(first, second, np.flatnonzero(subsets.corpus))
    return {
        "available": True,
        "annotators": [first, second],
        "cells": [{"type_a": a, "type_b": b, "count": n} for a, b, n in cells],
    }


def applicability(context: AuditContext) -> dict[str, str | None]:
    return {
        "type_confusion": None if context.has_annotators else "Type confusion compares the two annotator passes, which this record does not name.",
    }  # fmt: skip


# --- the report ------------------------------------------------------------------------------------


def type_confusion_table(view: ResultsView) -> Table:
    """Counts of boundary-matched A and B spans by their two types."""
    confusion = view.data.get("type_confusion", {})
    cells = confusion.get("cells", [])
    # one sorted order for rows and columns, so agreement lies on the diagonal
    types_a = types_b = sorted({cell["type_a"] for cell in cells} | {cell["type_b"] for cell in cells})
    counts = {(cell["type_a"], cell["type_b"]): cell["count"] for cell in cells}
    rows = tuple(
        (label(type_a), *(Cell(text=count(counts.get((type_a, type_b), 0)), numeric=True) for type_b in types_b))
        for type_a in types_a
    )
    annotator_a, annotator_b = (confusion.get("annotators") or view.annotators or ["A", "B"])[:2]
    return Table(
        key="type-confusion",
        title="Type confusion between the annotators",
        caption=(
            f"Spans of A ({annotator_a}, rows) and B ({annotator_b}, columns) with identical boundaries, counted "
            "by their two types over the corpus. Off-diagonal cells are boundary agreements with a type "
            "disagreement."
        ),
        columns=("A \\ B", *types_b),
        groups=(("", 1), (f"B: {annotator_b}", len(types_b))) if types_b else (),
        rows=rows,
    )


def type_heatmap(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Heatmap of A's versus B's types on boundary-matched spans."""
    matplotlib = mpl()
    confusion = view.data.get("type_confusion") or {}
    cells = confusion.get("cells") or []
    if not confusion.get("available", bool(cells)) or not cells:
        return None
    # one sorted order on both axes, so agreement lies on the diagonal
    types_a = types_b = sorted({cell["type_a"] for cell in cells} | {cell["type_b"] for cell in cells})
    matrix = np.zeros((len(types_a), len(types_b)))
    for cell in cells:
        matrix[types_a.index(cell["type_a"]), types_b.index(cell["type_b"])] = cell["count"]
    annotator_a, annotator_b = (confusion.get("annotators") or view.annotators)[:2]
    side = min(4.6, 1.6 + 0.3 * len(types_a))  # inches; caps a long type list at half a page
    figure, axis = subplots(figsize=(side + 1.6, side))
    shown = np.where(matrix > 0, matrix, np.nan)
    top = max(1.0, float(np.nanmax(shown))) if np.isfinite(shown).any() else 1.0
    image = axis.imshow(shown, cmap="cividis", norm=matplotlib.colors.LogNorm(vmin=1, vmax=max(top, 10)), aspect="auto")
    for (row, column), value in np.ndenumerate(matrix):
        if value:
            level = math.log10(value) / math.log10(max(top, 10))
            axis.text(column, row, formatting.count(int(value)), ha="center", va="center", fontsize=5.5,
                      color="black" if level > 0.6 else "white")  # fmt: skip
    axis.set_xticks(range(len(types_b)), [plain(name) for name in types_b], rotation=45, ha="right",
                    rotation_mode="anchor")  # fmt: skip
    axis.set_yticks(range(len(types_a)), [plain(name) for name in types_a])
    axis.set_xlabel(plain(f"Type given by B ({annotator_b})"))
    axis.set_ylabel(plain(f"Type given by A ({annotator_a})"))
    for spine in axis.spines.values():
        spine.set_visible(False)
    colourbar = figure.colorbar(image, ax=axis, shrink=0.8)
    # counts as plain numbers (1, 10, 100, 1,000): a reader's figure, and no mathtext to parse (~0.3 s)
    colourbar.ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:,.0f}"))
    colourbar.ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    colourbar.set_label("Boundary-matched spans (log scale)")
    colourbar.outline.set_visible(False)
    off_diagonal = int(matrix.sum() - sum(matrix[types_a.index(t), types_b.index(t)] for t in types_a if t in types_b))
    return figure, Figure(
        key="type-confusion",
        title="Type confusion between the annotators",
        caption=(
            f"Spans on which A ({annotator_a}) and B ({annotator_b}) agree on the boundaries, by the type each "
            "gave, over the corpus; colour on a log scale. Off-diagonal cells are type disagreements."
        ),
        alt=(
            f"Heatmap of {len(types_a)} by {len(types_b)} types; {formatting.count(int(matrix.sum()))} "
            f"boundary-matched spans, {formatting.count(off_diagonal)} with different types."
        ),
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    confusion = view.data.get("type_confusion") or {}
    applies = bool(confusion.get("available") and confusion.get("cells"))
    return section(ANALYSIS, view, drawn, applies, ["type-confusion"], [type_confusion_table(view)] if applies else [],
                   applicability_key="agreement")  # fmt: skip


ANALYSIS = Analysis(
    key="type_confusion",
    title="Type confusion between the annotators",
    question="When the annotators agree on where a span is, do they agree on what it is?",
    applicability=applicability,
    summary=summary,
    section=_section,
    figures=(type_heatmap,),
)
