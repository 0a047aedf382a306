"""Table machinery: the table model, its cells, the long layout at leaderboard scale, CSV and LaTeX writers.

Each analysis builds its own tables (``refsens_report/analyses/``) from results rows with these cells. Every
number cell keeps the index of the results row it prints (``Cell.row``), so the site can say, and the tests
can check, which line of results.csv each printed number comes from.
"""

from __future__ import annotations

import csv
import io
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
    field: str = ""  # which column of that row is printed: estimate (with interval), p_holm, p_value, n_items
    repeated: bool = False  # a label equal to the one above: blank on the page, kept in the CSV

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
    def column_widths(self) -> tuple[str, ...]:
        """Return each column's share of the printed table width, in %, from its longest word (``column_widths``)."""
        return column_widths(self)

    @property
    def numeric_columns(self) -> tuple[bool, ...]:
        """Return, per column, whether it holds numbers (right-aligned)."""
        return tuple(any(row[i].numeric for row in self.rows) for i in range(len(self.columns)))


# The printed table is set at a fixed layout (WeasyPrint measures no cell): each column gets at least its
# longest word, so a header or label breaks between words and never inside one (ADDR/ESS), then a share of
# what is left towards its longest line. In characters of the table's type on a one-column A4 or letter page.
LINE_CHARACTERS = 120
CELL_PADDING = 2  # characters' worth of cell padding
LONGEST_LINE = 28  # a label longer than this wraps rather than widening its column further


def _words(text: str) -> list[str]:
    return text.split() or [""]


def column_widths(table: Table) -> tuple[str, ...]:
    """Return each column's share of the table width, in % (one decimal, so the page is reproducible).

    need: the column's longest word (header or cell; a number cell's estimate and each half of its
    interval); want: its longest line, up to LONGEST_LINE. Every column gets its need when all needs fit in
    LINE_CHARACTERS, and what is left is shared in proportion to how much more each wants.
    """
    need, want = [], []
    for index, header in enumerate(table.columns):
        pieces = [*_words(header)]
        lines = [len(header)]
        for row in table.rows:
            cell = row[index]
            pieces += _words(cell.text) + (_words(cell.interval) if cell.interval else [])
            lines += [len(cell.text), len(cell.interval)]
        longest_word = max(len(piece) for piece in pieces) + CELL_PADDING
        need.append(longest_word)
        want.append(max(longest_word, min(max(lines), LONGEST_LINE) + CELL_PADDING))
    if sum(want) <= LINE_CHARACTERS:
        sizes = want
    elif sum(need) <= LINE_CHARACTERS:
        spare, extra = LINE_CHARACTERS - sum(need), sum(want) - sum(need)
        sizes = [n + spare * (w - n) / extra for n, w in zip(need, want)]
    else:
        sizes = need
    total = sum(sizes)
    return tuple(f"{100 * size / total:.1f}" for size in sizes)


def number_tables(tables: Sequence[Table], start: int = 1) -> list[Table]:
    """Return the tables numbered in order."""
    return [replace(table, number=start + offset) for offset, table in enumerate(tables)]


# --- cells -----------------------------------------------------------------------------------------


def label(text: str) -> Cell:
    """Return a text label cell."""
    return Cell(text=text)


def stat_cell(found: tuple[int, Mapping[str, Any]] | None) -> Cell:
    """Return the estimate and interval of a results row, or '—' when the row does not exist."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    printed = format_row(row)
    return Cell(
        text=printed.estimate,
        interval=printed.interval,
        bold=printed.bold,
        numeric=True,
        row=index,
        field="estimate",
    )


def p_cell(found: tuple[int, Mapping[str, Any]] | None, column: str) -> Cell:
    """Return a row's p-value column (``p_holm`` or ``p_value``) as printed."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=p_value(row[column]), numeric=True, row=index, field=column)


def n_cell(found: tuple[int, Mapping[str, Any]] | None) -> Cell:
    """Return the number of items a results row was computed on."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=count(row["n_items"]), numeric=True, row=index, field="n_items")


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


# --- one language: its rows are the pooled ones -------------------------------------------------------

LANGUAGE_COLUMN = "Language"


def one_language(table: Table, view: ResultsView) -> Table:
    """Return the table without its per-language rows and Language column when the record has one language.

    With one language every per-language row equals its pooled row (same items, same draws), so a table would
    print each twice. The pooled rows stay (the headlines and figures cite them); a note names the language.
    results.csv keeps both.
    """
    if len(view.languages) != 2 or LANGUAGE_COLUMN not in table.columns:
        return table
    column = table.columns.index(LANGUAGE_COLUMN)
    language = view.languages[0]
    rows = [[replace(cell, repeated=False) for index, cell in enumerate(row) if index != column]
            for row in table.rows if row[column].text != language]  # fmt: skip
    if not rows:
        return table
    groups, start = [], 0
    for group_label, width in table.groups:  # the group band spanning the dropped column loses one column
        groups.append((group_label, width - (start <= column < start + width)))
        start += width
    labels = next((index for index, cell in enumerate(rows[0]) if cell.numeric), len(rows[0]))
    note = f"The record has one language ({language}): every row is pooled over it."
    return replace(
        table,
        columns=tuple(name for index, name in enumerate(table.columns) if index != column),
        rows=mark_repeats(rows, max(labels - 1, 0)),
        groups=tuple((group_label, width) for group_label, width in groups if width > 0),
        widths=tuple(width for index, width in enumerate(table.widths) if index != column),
        notes=(*table.notes, note),
        csv=one_language(table.csv, view) if table.csv else None,
    )


# --- the page's share of a long table ----------------------------------------------------------------

PAGE_ROWS = 30  # rows a table prints on the page at most (about a PDF page); its CSV download holds every row


def for_the_page(table: Table, view: ResultsView, cited: frozenset[int] = frozenset()) -> Table:
    """Return the table as the page prints it: every row, or the PAGE_ROWS most telling ones and a note.

    Most telling: rows printing a number the summary cites (``cited``: results row indices) first, then pooled
    rows, then the rows with the largest absolute difference (delta, margin, swing, skew) they print, kept in
    the table's order. The CSV download (``Table.csv``) and, with ``[report] pdf = "full"``, the annex keep every
    row, so nothing is lost; at leaderboard scale (thousands of swings) the page and the PDF stay the size of
    a report.
    """
    if len(table.rows) <= PAGE_ROWS:
        return table
    results = view.rows.rows

    def importance(position: int) -> tuple[bool, bool, float, int]:
        indices = [cell.row for cell in table.rows[position] if cell.row is not None]
        found = [results[index] for index in indices]
        pooled = any(row["language"] == POOLED for row in found)
        sizes = [abs(row["estimate"]) for row in found
                 if row["estimate"] is not None and formatting.is_difference(row["statistic"])]  # fmt: skip
        return (any(index in cited for index in indices), pooled, max(sizes, default=0.0), -position)

    kept = sorted(sorted(range(len(table.rows)), key=importance, reverse=True)[:PAGE_ROWS])
    labels = next((index for index, cell in enumerate(table.rows[0]) if cell.numeric), len(table.columns))
    rows = [[replace(cell, repeated=False) for cell in table.rows[position]] for position in kept]
    pooled_only = all(importance(position)[1] for position in kept)
    what = "pooled rows" if pooled_only else "rows, pooled first"
    note = (f"The page shows {PAGE_ROWS} of the table's {len(table.rows):,} rows ({what}, those with the largest "
            "differences, and every row the summary cites); the table's CSV holds every row.")  # fmt: skip
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


def table_csv(table: Table) -> str:
    """Return the table as CSV: every label repeated, numbers as printed (all of them, where the page shows less)."""
    table = table.csv or table
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_safe(header) for header in _header_labels(table)])
    for row in table.rows:
        writer.writerow([cell.full_text if cell.numeric else spreadsheet_safe(cell.full_text) for cell in row])
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
