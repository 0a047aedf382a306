"""Table machinery: the table model, its cells, the long layout at leaderboard scale, the CSV writer (the LaTeX
writer is latex.py).

Each analysis builds its own tables (``refsens_report/analyses/``) from results rows with these cells. Every
number cell keeps the index of the results row it prints (``Cell.row``), so the site can say, and the tests
can check, which line of results.csv each printed number comes from.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

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
    # which column of that row is printed: estimate (with interval), point (estimate alone), p_holm, p_value, n_items
    field: str = ""
    repeated: bool = False  # a label equal to the one above: blank on the page, kept in the CSV
    value: float | None = None  # the number behind ``text``, as results.json holds it (the CSV writes it)
    ci_low: float | None = None  # the interval behind ``interval`` (also for a point cell: the CSV keeps it)
    ci_high: float | None = None
    print_text: str = ""  # what the PDF prints instead of ``text`` (a shorter label); "": ``text``

    @property
    def full_text(self) -> str:
        """Return estimate and interval as one string (CSV, tests)."""
        return f"{self.text} {self.interval}" if self.interval else self.text


LONG_GROUP_ROWS = 4  # a group of rows sharing its first label longer than this may break across pages in print


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
    csv: Table | None = None  # what the CSV download holds when the page shows less (the full type matrix)
    print_rows: int | None = None  # the PDF prints the first this many rows, the site every one (None: all)
    print_only: frozenset[int] | None = None  # or the PDF prints these rows alone (None: all), the site every one

    @property
    def long_groups(self) -> frozenset[int]:
        """Return the rows that start a group (rows sharing their first label) of more than LONG_GROUP_ROWS rows.

        The PDF keeps a group on one page; a longer one may break between its rows (print.css), as moving it
        whole left most of a page empty (a 30-row group of the 16 x 4 leaderboard).
        """
        starts = [index for index, row in enumerate(self.rows) if index == 0 or not row[0].repeated]
        ends = [*starts[1:], len(self.rows)]
        return frozenset(start for start, end in zip(starts, ends) if end - start > LONG_GROUP_ROWS)

    @property
    def slug(self) -> str:
        """Return the file stem for this table's downloads, e.g. ``table-3-swap``."""
        return f"table-{self.number}-{self.key}"

    @property
    def anchor(self) -> str:
        """Return the HTML id of the table."""
        return f"table-{self.key}"

    @property
    def print_layout(self) -> PrintLayout:
        """Return how the page sets the table: its parts, their column widths, type and key (``print_layout``)."""
        return print_layout(self)

    @property
    def numeric_columns(self) -> tuple[bool, ...]:
        """Return, per column, whether it holds numbers (right-aligned)."""
        return tuple(any(row[i].numeric for row in self.rows) for i in range(len(self.columns)))


# The printed table is set at a fixed layout (WeasyPrint measures no cell): each column gets at least its
# longest word, so a header or label breaks between words and never inside one (ADDR/ESS), then a share of
# what is left towards its longest line. Widths are measured in the type print.css sets tables in: Noto Sans,
# headers bold. A table whose words do not fit the text width at TABLE_TYPE is set in COMPACT_TYPE, then with
# its number columns' headers keyed (1), (2), ... and named in a note, then split into parts by its columns,
# each repeating the label columns (``print_layout``).
# The width the printed tables are laid out to. A4's text width inside print.css's 20 mm side margins is
# 481.9 pt, but until the LaTeX writer left this module its TEXT_WIDTH_PT (16 cm, 455.24 pt), defined later
# in the file, replaced that value for every function here: the page has been laid out to 455.24 pt. Kept so
# the split changes no output; whether to widen the printed tables to 481.9 pt is a separate decision.
TEXT_WIDTH_PT = 455.24


@dataclass(frozen=True)
class TableType:
    """A size tables are printed in: print.css's font size and the cell's padding on both sides (both in pt)."""

    size: float
    padding: float
    css_class: str  # the <table> class print.css sets it with ("" for the default)

    def pt(self, em: float) -> float:
        """Return a width measured in em of this type (``print_width``) in points, padding included."""
        return em * self.size + self.padding


# print.css: figure.table table { font-size: 7.6pt } with th, td padding 1.4 mm a side; table.compact 6.4pt,
# .8 mm a side (4.5 pt between two cells' text: the PDF check asks for at least 3)
TABLE_TYPE = TableType(7.6, 7.94, "")
COMPACT_TYPE = TableType(6.4, 4.54, "compact")
LONGEST_LINE_EM = 15.0  # a label longer than this wraps rather than widening its column further
INTERVAL_EM = 0.86  # a number cell's interval line is set this much smaller than its estimate (appendix.css)

# Noto Sans advance widths in 1/1000 em of ' ' to '~', regular and bold; any other character counts a full em
# (CJK ideographs are one; accented Latin letters and symbols are narrower, so their columns are a little wide)
_ASCII = "".join(chr(code) for code in range(32, 127))
_NOTO_REGULAR = dict(
    zip(
        _ASCII,
        (
            260,
            269,
            408,
            646,
            572,
            831,
            732,
            225,
            300,
            300,
            551,
            572,
            268,
            322,
            268,
            372,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            268,
            268,
            572,
            572,
            572,
            434,
            899,
            639,
            650,
            632,
            730,
            556,
            519,
            728,
            741,
            339,
            273,
            619,
            524,
            907,
            760,
            781,
            605,
            781,
            622,
            549,
            556,
            731,
            600,
            930,
            586,
            566,
            572,
            329,
            372,
            329,
            572,
            444,
            281,
            561,
            615,
            480,
            615,
            564,
            344,
            615,
            618,
            258,
            258,
            534,
            258,
            935,
            618,
            605,
            615,
            615,
            413,
            479,
            361,
            618,
            508,
            786,
            529,
            510,
            470,
            380,
            551,
            380,
            572,
        ),
    )
)
_NOTO_BOLD = dict(
    zip(
        _ASCII,
        (
            260,
            286,
            472,
            646,
            572,
            901,
            750,
            266,
            339,
            339,
            545,
            572,
            285,
            322,
            285,
            413,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            572,
            285,
            285,
            572,
            572,
            572,
            477,
            897,
            690,
            672,
            637,
            740,
            560,
            549,
            724,
            765,
            389,
            331,
            664,
            565,
            943,
            813,
            796,
            628,
            796,
            660,
            551,
            579,
            756,
            650,
            967,
            667,
            624,
            579,
            331,
            413,
            331,
            572,
            411,
            362,
            604,
            633,
            514,
            633,
            591,
            387,
            633,
            657,
            305,
            305,
            620,
            305,
            982,
            657,
            619,
            633,
            633,
            454,
            497,
            434,
            657,
            569,
            856,
            578,
            569,
            488,
            394,
            551,
            394,
            572,
        ),
    )
)


def print_width(text: str, bold: bool = False) -> float:
    """Return the width of text set in Noto Sans, in em (times the font size)."""
    widths = _NOTO_BOLD if bold else _NOTO_REGULAR
    return sum(widths.get(character, 1000) for character in text) / 1000


def _print_columns(table: Table, inline: bool = False) -> list[tuple[float, float]]:
    """Return each column's (need, want) in em: its longest word (header bold), and its longest line.

    inline: a number cell's estimate and interval on one line, unbroken, both at full size (print.css's
    first line is the whole cell then): that line is the cell's need.
    """
    sizes = []
    for index, header in enumerate(table.columns):
        words = [print_width(word, bold=True) for word in header.split()]  # the page breaks lines at spaces
        lines = [print_width(header, bold=True)]
        for row in table.rows:
            cell = row[index]
            text = cell.print_text or cell.text  # the PDF's text is what is measured
            words += [print_width(word, cell.bold) for word in text.split()]
            lines.append(print_width(text, cell.bold))
            if cell.interval and inline:
                words.append(print_width(f"{cell.text} {cell.interval}", cell.bold))
            elif cell.interval:
                words += [INTERVAL_EM * print_width(word, cell.bold) for word in cell.interval.split()]
                lines.append(INTERVAL_EM * print_width(cell.interval, cell.bold))
        need = max(words, default=0.0)
        sizes.append((need, max(need, min(max(lines), LONGEST_LINE_EM))))
    return sizes


def _fits(table: Table, kind: TableType, inline: bool = False) -> bool:
    return sum(kind.pt(need) for need, _ in _print_columns(table, inline)) <= TEXT_WIDTH_PT


def column_widths(table: Table, kind: TableType = TABLE_TYPE, inline: bool = False) -> tuple[str, ...]:
    """Return each column's share of the table width, in % (one decimal, so the page is reproducible).

    need: the column's longest word (header or cell; a number cell's estimate and each half of its interval);
    want: its longest line, up to LONGEST_LINE_EM. Every column gets its need when all needs fit in the text
    width, and what is left is shared in proportion to how much more each wants.
    """
    sizes = _print_columns(table, inline)
    need = [kind.pt(size) for size, _ in sizes]
    want = [kind.pt(size) for _, size in sizes]
    if sum(want) <= TEXT_WIDTH_PT:
        chosen = want
    elif sum(need) <= TEXT_WIDTH_PT:
        spare, extra = TEXT_WIDTH_PT - sum(need), sum(want) - sum(need)
        chosen = [n + spare * (w - n) / extra for n, w in zip(need, want)]
    else:
        chosen = need
    total = sum(chosen)
    return tuple(f"{100 * size / total:.1f}" for size in chosen)


COLUMN_KEY = "Columns: {}."  # the note naming keyed headers, e.g. "Columns: (1) ADDRESS, (2) BANK_ACCOUNT."


@dataclass(frozen=True)
class PrintPart:
    """One table element of a printed table: its columns (headers keyed where need be) and their widths."""

    table: Table
    widths: tuple[str, ...]


@dataclass(frozen=True)
class PrintLayout:
    """How the page sets a table: in one part or several (columns split), in which type, with which key."""

    parts: tuple[PrintPart, ...]
    css_class: str
    key: str  # the note naming the keyed headers, or ""
    inline: bool = False  # each number cell's interval on its estimate's line (class "inline-intervals")


def _leading_labels(table: Table) -> int:
    numeric = table.numeric_columns
    return next((index for index, is_number in enumerate(numeric) if is_number), len(numeric))


def _keyed(table: Table) -> tuple[Table, str]:
    """Return the table with each number column's header keyed (1), (2), ..., and the note naming them."""
    lead = _leading_labels(table)
    keys = [f"({number})" for number in range(1, len(table.columns) - lead + 1)]
    named = ", ".join(f"{key} {header}" for key, header in zip(keys, table.columns[lead:]))
    return replace(table, columns=(*table.columns[:lead], *keys)), COLUMN_KEY.format(named)


def columns_of(table: Table, keep: Sequence[int]) -> Table:
    """Return the table with only the columns at ``keep`` (in order), its column groups cut to match."""
    owner: list[tuple[int, str]] = []  # per column: (which group, its label)
    for number, (group_label, width) in enumerate(table.groups):
        owner += [(number, group_label)] * width
    owner += [(-1 - index, "") for index in range(len(owner), len(table.columns))]
    groups: list[tuple[str, int]] = []
    previous = None
    for index in keep:
        if groups and owner[index][0] == previous:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((owner[index][1], 1))
        previous = owner[index][0]
    return replace(
        table,
        columns=tuple(table.columns[index] for index in keep),
        groups=tuple(groups) if table.groups else (),
        rows=tuple(tuple(row[index] for index in keep) for row in table.rows),
        csv=None,
    )


def print_layout(table: Table) -> PrintLayout:
    """Return the first layout that fits the text width: the table whole in TABLE_TYPE with each interval
    beside its estimate (one line a row: half the height of two), then in TABLE_TYPE, then in COMPACT_TYPE,
    then in COMPACT_TYPE with its number columns' headers keyed, then split into as few parts as that needs."""
    inline = _print_columns(table, inline=True)  # inline only when no column then wraps (every want fits)
    if (
        any(cell.interval for row in table.rows for cell in row)
        and sum(TABLE_TYPE.pt(want) for _, want in inline) <= TEXT_WIDTH_PT
    ):
        return PrintLayout(
            (PrintPart(table, column_widths(table, TABLE_TYPE, inline=True)),), TABLE_TYPE.css_class, "", inline=True
        )
    for kind in (TABLE_TYPE, COMPACT_TYPE):
        if _fits(table, kind):
            return PrintLayout((PrintPart(table, column_widths(table, kind)),), kind.css_class, "")
    keyed, key = _keyed(table)
    kind = COMPACT_TYPE
    if _fits(keyed, kind):
        return PrintLayout((PrintPart(keyed, column_widths(keyed, kind)),), kind.css_class, key)
    lead = _leading_labels(keyed)
    parts: list[list[int]] = []
    for index in range(lead, len(keyed.columns)):  # greedy: a part takes columns while they fit
        if parts and _fits(columns_of(keyed, [*range(lead), *parts[-1], index]), kind):
            parts[-1].append(index)
        else:
            parts.append([index])
    pieces = [columns_of(keyed, [*range(lead), *part]) for part in parts]
    return PrintLayout(tuple(PrintPart(piece, column_widths(piece, kind)) for piece in pieces), kind.css_class, key)


POOLED_ONLY_ROWS = 12  # a per-language table of pairs longer than this prints its pooled rows alone


def pooled_first(found: Sequence[tuple[int, Mapping[str, Any]]], key: Any) -> list[tuple[int, Mapping[str, Any]]]:
    """Return results rows grouped by ``key(row)`` (in order of first appearance), each group's pooled row first."""
    order: dict[Any, int] = {}
    for _, row in found:
        order.setdefault(key(row), len(order))
    return sorted(found, key=lambda pair: (order[key(pair[1])], pair[1].get("language") != POOLED))


def pooled_in_print(found: Sequence[tuple[int, Mapping[str, Any]]]) -> frozenset[int] | None:
    """Return the positions of the pooled rows when the table has more than POOLED_ONLY_ROWS rows (the PDF
    prints those alone; the site and the CSV every language), else None (every row is printed)."""
    if len(found) <= POOLED_ONLY_ROWS:
        return None
    return frozenset(position for position, (_, row) in enumerate(found) if row.get("language") == POOLED)


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
    return bool(view.reference_pairs()) and (len(view.outputs) > SCALE_OUTPUTS or number_columns > WIDE_NUMBER_COLUMNS)


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
    rows = [
        [replace(cell, repeated=False) for index, cell in enumerate(row) if index != column]
        for row in table.rows
        if row[column].text != language
    ]
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
        sizes = [
            abs(row["estimate"])
            for row in found
            if row["estimate"] is not None and formatting.kind_of(row["analysis"], row["statistic"]).signed
        ]
        return (any(index in cited for index in indices), pooled, max(sizes, default=0.0), -position)

    kept = sorted(sorted(range(len(table.rows)), key=importance, reverse=True)[:PAGE_ROWS])
    labels = next((index for index, cell in enumerate(table.rows[0]) if cell.numeric), len(table.columns))
    rows = [[replace(cell, repeated=False) for cell in table.rows[position]] for position in kept]
    pooled_only = all(importance(position)[1] for position in kept)
    what = "pooled rows" if pooled_only else "rows, pooled first"
    note = (
        f"The page shows {PAGE_ROWS} of the table's {len(table.rows):,} rows ({what}, those with the largest "
        "differences, and every row the summary cites); the table's CSV holds every row."
    )
    return replace(
        table, rows=mark_repeats(rows, max(labels - 1, 0)), notes=(*table.notes, note), csv=table.csv or table
    )


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
