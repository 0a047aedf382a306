"""Table machinery: the table model, its cells, the long layout at leaderboard scale, CSV and LaTeX writers.

Each analysis builds its own tables (``refsens_report/analyses/``) from results rows with these cells. Every
number cell keeps the index of the results row it prints (``Cell.row``), so the site can say, and the tests
can check, which line of results.csv each printed number comes from.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from refsens_report import formatting
from refsens_report.formatting import count, format_row, p_value
from refsens_report.record import POOLED
from refsens_report.view import SCALE_OUTPUTS, ResultsView


@dataclass(frozen=True)
class Cell:
    """One table cell: display text, optional interval, and the results row it formats (None for labels)."""

    text: str = ""
    interval: str = ""
    bold: bool = False
    numeric: bool = False
    row: int | None = None  # index into results.json "rows" (= results.csv data line - 1)
    field: str = ""  # which column of that row is printed: estimate (with interval), point (estimate alone), p_holm, p_value, n_items
    repeated: bool = False  # a label equal to the one above: blank on the page, kept in the CSV
    value: float | None = None  # the number behind ``text``, as results.json holds it (the CSV writes it)
    ci_low: float | None = None  # the interval behind ``interval`` (also for a point cell: the CSV keeps it)
    ci_high: float | None = None

    @property
    def full_text(self) -> str:
        """Return estimate and interval as one string (CSV, tests)."""
        return f"{self.text} {self.interval}" if self.interval else self.text


@dataclass(frozen=True)
class Table:
    """A numbered table: column headers (with an optional band of group headers), rows of cells, caption."""

    key: str
    title: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    groups: tuple[tuple[str, int], ...] = ()  # (label, columns spanned) above ``columns``; "" spans nothing
    notes: tuple[str, ...] = ()
    number: int = 0
    widths: tuple[int, ...] = ()  # % of the table width for the leading columns (long layouts); the rest share
    csv: "Table | None" = None  # what the CSV download holds when the page shows less (the full type matrix)


    @property
    def slug(self) -> str:
        """Return the file stem for this table's downloads, e.g. ``table-3-swap``."""
        return f"table-{self.number}-{self.key}"

    @property
    def anchor(self) -> str:
        """Return the HTML id of the table."""
        return f"table-{self.key}"

    @property
    def numeric_columns(self) -> tuple[bool, ...]:
        """Return, per column, whether it holds numbers (right-aligned)."""
        return tuple(any(row[i].numeric for row in self.rows) for i in range(len(self.columns)))


def number_tables(tables: Sequence[Table], start: int = 1) -> list[Table]:
    """Return the tables numbered in order."""
    return [replace(table, number=start + offset) for offset, table in enumerate(tables)]


# --- cells -----------------------------------------------------------------------------------------


def label(text: str) -> Cell:
    """Return a text label cell."""
    return Cell(text=text)


def stat_cell(found: tuple[int, Mapping[str, Any]] | None, interval: bool = True) -> Cell:
    """Return the estimate and interval of a results row, or '—' when the row does not exist.

    ``interval=False``: the estimate alone (field ``point``), for a table that prints the interval elsewhere;
    the cell still carries the interval's bounds for the CSV.
    """
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    printed = format_row(row)
    return Cell(
        text=printed.estimate,
        interval=printed.interval if interval else "",
        bold=printed.bold and interval,
        numeric=True,
        row=index,
        field="estimate" if interval else "point",
        value=row["estimate"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
    )


def p_cell(found: tuple[int, Mapping[str, Any]] | None, column: str) -> Cell:
    """Return a row's p-value column (``p_holm`` or ``p_value``) as printed."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=p_value(row[column]), numeric=True, row=index, field=column, value=row[column])


def n_cell(found: tuple[int, Mapping[str, Any]] | None) -> Cell:
    """Return the number of items a results row was computed on."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=count(row["n_items"]), numeric=True, row=index, field="n_items", value=row["n_items"])


def count_cell(value: int | None) -> Cell:
    """Return a count that is not a results row (items per subset, spans per pair of types)."""
    return Cell(text=count(value), numeric=True, value=value)


def mark_repeats(rows: list[list[Cell]], label_columns: int) -> tuple[tuple[Cell, ...], ...]:
    """Blank a leading label equal to the one above (paper style), only while every label left of it repeats."""
    marked: list[tuple[Cell, ...]] = []
    previous: list[Cell] | None = None
    for row in rows:
        new_row = list(row)
        if previous is not None:
            for column in range(label_columns):
                if row[column].text != previous[column].text:
                    break
                new_row[column] = replace(row[column], repeated=True)
        marked.append(tuple(new_row))
        previous = row
    return tuple(marked)


# --- layout ----------------------------------------------------------------------------------------

WIDE_NUMBER_COLUMNS = 8  # more number columns than this in the paper's layout, and a table switches to long


def long_layout(view: ResultsView, number_columns: int) -> bool:
    """Return whether a table is laid out long (one row per output or pair and reference pair, few columns).

    The paper's layout puts every reference and every pair of references side by side; that reads well for two
    outputs and two references, and becomes many narrow columns of wrapped names at leaderboard scale.
    """
    return bool(view.reference_pairs()) and (
        len(view.outputs) > SCALE_OUTPUTS or number_columns > WIDE_NUMBER_COLUMNS
    )


# --- the page's share of a long table ----------------------------------------------------------------

PAGE_ROWS = 60  # rows a table prints on the page at most (about a PDF page and a half); its CSV download holds every row


def for_the_page(table: Table, view: ResultsView) -> Table:
    """Return the table as the page prints it: every row, or the PAGE_ROWS most telling ones and a note.

    Most telling: pooled rows first, then the rows with the largest absolute difference (delta, margin, swing,
    skew) they print, kept in the table's order. The CSV download (``Table.csv``) keeps every row, so nothing
    is lost; at leaderboard scale (thousands of swings) the page and the PDF stay the size of a report.
    """
    if len(table.rows) <= PAGE_ROWS:
        return table
    results = view.rows.rows

    def importance(position: int) -> tuple[bool, float, int]:
        found = [results[cell.row] for cell in table.rows[position] if cell.row is not None]
        pooled = any(row["language"] == POOLED for row in found)
        sizes = [abs(row["estimate"]) for row in found
                 if row["estimate"] is not None and formatting.is_difference(row["statistic"])]  # fmt: skip
        return (pooled, max(sizes, default=0.0), -position)

    kept = sorted(sorted(range(len(table.rows)), key=importance, reverse=True)[:PAGE_ROWS])
    labels = next((index for index, cell in enumerate(table.rows[0]) if cell.numeric), len(table.columns))
    rows = [[replace(cell, repeated=False) for cell in table.rows[position]] for position in kept]
    pooled_only = all(importance(position)[0] for position in kept)
    what = "pooled rows" if pooled_only else "rows, pooled first"
    note = (f"The page shows {PAGE_ROWS} of the table's {len(table.rows):,} rows ({what}, those with the largest "
            "differences); the table's CSV holds every row.")  # fmt: skip
    return replace(table, rows=mark_repeats(rows, max(labels - 1, 0)), notes=(*table.notes, note),
                   csv=table.csv or table)  # fmt: skip


# --- writers ---------------------------------------------------------------------------------------


def _header_labels(table: Table) -> list[str]:
    """Return one header per column, prefixed by its group ('Strict: Δ [95% CI]') where groups exist."""
    labels = []
    spans: list[str] = []
    for group_label, width in table.groups:
        spans += [group_label] * width
    for index, column in enumerate(table.columns):
        group_label = spans[index] if index < len(spans) else ""
        labels.append(f"{group_label}: {column}" if group_label else column)
    return labels


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


def spreadsheet_safe(text: str) -> str:
    """Return a label a spreadsheet shows as text: one starting like a formula gets a leading apostrophe.

    Labels are team-supplied names (a type named '=HYPERLINK(...)'); printed numbers are the tool's own and
    stay as they are. results.csv is the machine-exact contract and is never altered.
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


CONFIDENCE_LABEL = re.compile(r"\s*\[\d+(?:\.\d+)?% CI\]")  # ' [95% CI]' in a header: the CSV names its bounds


def _csv_number(value: float | int | None) -> str:
    """Return a number as results.csv writes it: unrounded (``repr`` of the float), empty when undefined."""
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _csv_kind(table: Table, column: int) -> str:
    """Return how a column is written: 'label', 'number' (one column) or 'interval' (estimate, ci_low, ci_high)."""
    cells = [row[column] for row in table.rows]
    if not any(cell.numeric for cell in cells):
        return "label"
    return "interval" if any(cell.ci_low is not None or cell.ci_high is not None for cell in cells) else "number"


def table_csv(table: Table) -> str:
    """Return the table as CSV: every label repeated, numbers as numbers (all rows, where the page shows less).

    A column of statistics with intervals becomes three columns, ``<header> estimate``, ``<header> ci_low`` and
    ``<header> ci_high``; p-values, counts and other single numbers one column each. Numbers are written as
    results.csv writes them (unrounded, shares of replicates as fractions, empty when undefined), so a cell
    equals its results row; the page's rounding, signs and '<0.01' are not in the CSV.
    """
    table = table.csv or table
    kinds = [_csv_kind(table, column) for column in range(len(table.columns))]
    header: list[str] = []
    for name, kind in zip(_header_labels(table), kinds):
        if kind == "label":
            header.append(name)
        elif kind == "number":
            header.append(CONFIDENCE_LABEL.sub("", name))
        else:
            name = CONFIDENCE_LABEL.sub("", name)
            header += [f"{name} estimate", f"{name} ci_low", f"{name} ci_high"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_safe(name) for name in header])
    for row in table.rows:
        line: list[str] = []
        for cell, kind in zip(row, kinds):
            if not cell.numeric:
                line += [spreadsheet_safe(cell.text)] + ([""] * 2 if kind == "interval" else [])
            elif kind == "interval":
                line += [_csv_number(cell.value), _csv_number(cell.ci_low), _csv_number(cell.ci_high)]
            else:
                line.append(_csv_number(cell.value))
        writer.writerow(line)
    return buffer.getvalue()


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "--",
    "Δ": r"$\Delta$",
}


def latex_escape(text: str) -> str:
    """Return text safe inside a LaTeX table cell."""
    return "".join(LATEX_SPECIALS.get(character, character) for character in text)


def _latex_number(text: str) -> str:
    """Return a printed number in LaTeX: a true minus sign, '<0.01' in math mode."""
    if text.startswith("<"):
        return "$<$" + text[1:]
    return text.replace("-", "$-$")


def _latex_cell(cell: Cell) -> str:
    if cell.repeated:
        return ""
    if not cell.numeric:
        return latex_escape(cell.text)
    text = _latex_number(cell.text)
    if cell.interval:
        text += " " + _latex_number(cell.interval)
    return rf"\textbf{{{text}}}" if cell.bold else text


def table_latex(table: Table) -> str:
    """Return the table as a booktabs ``table`` environment, ready for a paper's appendix."""
    alignment = "".join("r" if numeric else "l" for numeric in table.numeric_columns)
    lines = [
        r"% Generated by refsens-report; needs \usepackage{booktabs}.",
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(table.title)}. {latex_escape(table.caption)}}}",
        rf"\label{{tab:refsens-{table.key}}}",
        rf"\begin{{tabular}}{{{alignment}}}",
        r"\toprule",
    ]
    if any(group_label for group_label, _ in table.groups):
        cells, rules, start = [], [], 1
        for group_label, width in table.groups:
            if group_label:
                cells.append(rf"\multicolumn{{{width}}}{{c}}{{{latex_escape(group_label)}}}")
                rules.append(rf"\cmidrule(lr){{{start}-{start + width - 1}}}")
            else:
                cells += [""] * width
            start += width
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" ".join(rules))
    lines.append(" & ".join(latex_escape(column) for column in table.columns) + r" \\")
    lines.append(r"\midrule")
    for index, row in enumerate(table.rows):
        # a new first-column label starts a group: a little space, as in the paper
        if index and not row[0].repeated and table.rows[index - 1][0].text and row[0].text and _grouped(table):
            lines.append(r"\addlinespace")
        lines.append(" & ".join(_latex_cell(cell) for cell in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _grouped(table: Table) -> bool:
    """Return whether the table's first column groups several rows."""
    return any(row[0].repeated for row in table.rows)
