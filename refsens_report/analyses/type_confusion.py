"""Type confusion between the annotators: on spans where A and B agree on the boundaries, the types each gave.

Counted once over the corpus (no bootstrap): results.json carries the cells beside the rows (``summary``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import DIFFERENCES, Analysis, AuditContext, Section, section
from refsens_report.counts import MANY_TYPES
from refsens_report.figures import MIN_TEXT_PT, WIDTH, Figure, fits_cells, labels_width, mpl, plain, subplots
from refsens_report.tables import Table, count_cell, label
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
        "type_confusion": None
        if context.has_annotators
        else "Type confusion compares the two annotator passes, which this record does not name.",
    }


# --- the report ------------------------------------------------------------------------------------


TOP_TYPES = 16  # at most this many rows and columns on the page: beyond, the most frequent types and "other"
NAME_CHARACTERS = 40  # a longer type name is cut on the page and in the figure (whole in the CSV and results.json)


def shown_type(name: str) -> str:
    """Return a type name as the page and the figure print it: cut after NAME_CHARACTERS, with an ellipsis."""
    return name if len(name) <= NAME_CHARACTERS else name[: NAME_CHARACTERS - 1] + "…"


@dataclass(frozen=True)
class Confusion:
    """The A-by-B counts, types in one sorted order on both axes (agreement lies on the diagonal)."""

    types: list[str]
    counts: dict[tuple[str, str], int]
    annotators: tuple[str, str]

    @classmethod
    def from_view(cls, view: ResultsView) -> Confusion | None:
        confusion = view.data.get("type_confusion") or {}
        cells = confusion.get("cells") or []
        if not confusion.get("available", bool(cells)) or not cells:
            return None
        counts: dict[tuple[str, str], int] = {}
        for cell in cells:
            counts[cell["type_a"], cell["type_b"]] = counts.get((cell["type_a"], cell["type_b"]), 0) + cell["count"]
        types = sorted({type_a for type_a, _ in counts} | {type_b for _, type_b in counts})
        first, second = (confusion.get("annotators") or view.annotators or ["A", "B"])[:2]
        return cls(types, counts, (first, second))

    def shown(self) -> tuple[list[str], int]:
        """Return the types the page shows (those with most spans, in sorted order) and how many it sums as other."""
        if len(self.types) <= TOP_TYPES:
            return self.types, 0
        spans: dict[str, int] = {}
        for (type_a, type_b), number in self.counts.items():
            spans[type_a] = spans.get(type_a, 0) + number
            spans[type_b] = spans.get(type_b, 0) + number
        top = sorted(self.types, key=lambda name: (-spans[name], name))[: TOP_TYPES - 1]
        return sorted(top), len(self.types) - len(top)

    def matrix(self, types: list[str], other: bool) -> np.ndarray:
        """Return counts[row type, column type] over ``types``, with a last row and column summing the others."""
        position = {name: index for index, name in enumerate(types)}
        rest = len(types)
        size = rest + (1 if other else 0)
        matrix = np.zeros((size, size), dtype=np.int64)
        for (type_a, type_b), number in self.counts.items():
            row, column = position.get(type_a, rest), position.get(type_b, rest)
            if row < size and column < size:
                matrix[row, column] += number
        return matrix


def _other_label(hidden: int) -> str:
    return f"other ({formatting.counted(hidden, 'type')})"


def type_confusion_table(view: ResultsView) -> Table:
    """Counts of boundary-matched A and B spans by their two types (the most frequent types, and "other")."""
    confusion = Confusion.from_view(view)
    types, hidden = confusion.shown() if confusion else ([], 0)
    matrix = confusion.matrix(types, bool(hidden)) if confusion else np.zeros((0, 0), dtype=np.int64)
    names = [shown_type(name) for name in types] + ([_other_label(hidden)] if hidden else [])
    rows = tuple((label(name), *(count_cell(int(value)) for value in line)) for name, line in zip(names, matrix))
    annotator_a, annotator_b = confusion.annotators if confusion else tuple((view.annotators or ["A", "B"])[:2])
    caption = (
        f"Spans of A ({annotator_a}, rows) and B ({annotator_b}, columns) with identical boundaries, counted "
        "by their two types over the corpus. Off-diagonal cells are boundary agreements with a type "
        "disagreement."
    )
    full = None
    if hidden and len(confusion.types) > MANY_TYPES:  # every cell that occurs, one per line: never types x types
        caption += (
            f" The {len(types)} types with the most such spans are shown; the other {hidden} are summed in 'other'. "
            f"The table's CSV lists every pair of the {len(confusion.types)} types that occurs, with its count."
        )
        full = Table(
            key="type-confusion",
            title="",
            caption="",
            columns=(f"A: {annotator_a}", f"B: {annotator_b}", "Spans"),
            rows=tuple(
                (label(type_a), label(type_b), count_cell(number))
                for (type_a, type_b), number in sorted(confusion.counts.items())
            ),
        )
    elif hidden:
        caption += (
            f" The {formatting.count(len(types))} types with the most such spans are shown; the other "
            f"{formatting.count(hidden)} are summed in 'other'. The table's CSV holds every one of the "
            f"{formatting.counted(len(confusion.types), 'type')}."
        )
        everything = confusion.matrix(confusion.types, False)
        full = Table(
            key="type-confusion",
            title="",
            caption="",
            columns=("A \\ B", *confusion.types),
            groups=(("", 1), (f"B: {annotator_b}", len(confusion.types))),
            rows=tuple(
                (label(name), *(count_cell(int(value)) for value in line))
                for name, line in zip(confusion.types, everything)
            ),
        )
    return Table(
        key="type-confusion",
        title="Type confusion between the annotators",
        caption=caption,
        columns=("A \\ B", *names),
        groups=(("", 1), (f"B: {annotator_b}", len(names))) if names else (),
        rows=rows,
        csv=full,
    )


def type_heatmap(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Heatmap of A's versus B's types on boundary-matched spans (the most frequent types, and "other")."""
    confusion = Confusion.from_view(view)
    if confusion is None:
        return None
    matplotlib = mpl()
    types, hidden = confusion.shown()
    matrix = confusion.matrix(types, bool(hidden)).astype(np.float64)
    names = [shown_type(name) for name in types] + ([_other_label(hidden)] if hidden else [])
    annotator_a, annotator_b = confusion.annotators
    side = min(4.6, 1.6 + 0.3 * len(names))  # inches; caps a long type list at half a page
    figure, axis = subplots(figsize=(WIDTH, side))
    shown = np.where(matrix > 0, matrix, np.nan)
    top = max(1.0, float(np.nanmax(shown))) if np.isfinite(shown).any() else 1.0
    image = axis.imshow(shown, cmap="cividis", norm=matplotlib.colors.LogNorm(vmin=1, vmax=max(top, 10)), aspect="auto")
    counts = {
        (row, column): formatting.count_short(int(value)) for (row, column), value in np.ndenumerate(matrix) if value
    }
    # the cells' width once the type names and the colour bar have their room
    cell = (WIDTH - labels_width(names) - 1.6) / len(names)
    labelled = fits_cells(list(counts.values()), cell)
    for (row, column), text in counts.items() if labelled else ():
        level = math.log10(matrix[row, column]) / math.log10(max(top, 10))
        axis.text(
            column, row, text, ha="center", va="center", fontsize=MIN_TEXT_PT, color="black" if level > 0.6 else "white"
        )
    axis.set_xticks(range(len(names)), [plain(name) for name in names], rotation=45, ha="right", rotation_mode="anchor")
    axis.set_yticks(range(len(names)), [plain(name) for name in names])
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
    total = sum(confusion.counts.values())
    off_diagonal = total - sum(number for (type_a, type_b), number in confusion.counts.items() if type_a == type_b)
    shown_note = (
        f" The {formatting.count(len(types))} types with the most such spans are shown; the other "
        f"{formatting.count(hidden)} are summed in 'other'."
        if hidden
        else ""
    )
    return figure, Figure(
        key="type-confusion",
        title="Type confusion between the annotators",
        caption=(
            f"Spans on which A ({annotator_a}) and B ({annotator_b}) agree on the boundaries, by the type each "
            f"gave, over the corpus; colour on a log scale"
            + ("; cells print their count (k = thousands)" if labelled else "")
            + f". Off-diagonal cells are type disagreements; the table gives every count exactly.{shown_note}"
        ),
        alt=(
            f"Heatmap of {formatting.count(len(confusion.types))} by "
            f"{formatting.counted(len(confusion.types), 'type')}; "
            f"{formatting.counted(int(total), 'boundary-matched span')}, {formatting.count(int(off_diagonal))} with "
            "different types."
        ),
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    confusion = view.data.get("type_confusion") or {}
    applies = bool(confusion.get("available") and confusion.get("cells"))
    return section(
        ANALYSIS,
        view,
        drawn,
        applies,
        ["type-confusion"],
        [type_confusion_table(view)] if applies else [],
        applicability_key="agreement",
    )


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="type_confusion",
    title="Type confusion between the annotators",
    question="When the annotators agree on where a span is, do they agree on what it is?",
    applicability=applicability,
    summary=summary,
    section=_section,
    figures=(type_heatmap,),
)
