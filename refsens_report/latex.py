r"""The LaTeX writer: a table (``tables.Table``) as a file a paper can \input, apart from the table model.

One file per table that a paper can \input: a longtable (it breaks across pages, repeating its header) with
booktabs rules, laid out to fit a one-column page. Column widths are estimated from Computer Modern's
character widths (within about 1 %), and the first layout that fits is taken (LAYOUTS): \small, then
\footnotesize, with each estimate and its interval side by side in two aligned columns; \small, then
\footnotesize, with each interval under its estimate a size smaller; \footnotesize with the column headers
rotated; \scriptsize. In every layout long labels wrap (at spaces, and after _ - / .) when the columns would
not fit otherwise. A table no layout fits is split by its column groups into parts that do, one after the
other in the same file, each repeating the label columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from refsens_report.tables import Cell, Table, columns_of

LATEX_PACKAGES = ("booktabs", "longtable", "array")
TEXT_WIDTH_PT = 455.24  # 16 cm (6.3 in): a one-column page (ACL's text width; 6.5 in letter pages are wider)
TEXT_WIDTH_NAME = "16 cm (6.3 in) with a 10 pt body font"
COLUMN_SEPARATION_PT = 4.0  # \tabcolsep inside the table (LaTeX's default is 6 pt)
INTERVAL_GAP_PT = 3.0  # between an estimate and its interval set side by side
WIDTH_MARGIN = 0.985  # widths are estimates (within about 1 %): a layout fits under this share of the text width


@dataclass(frozen=True)
class LatexFont:
    """A LaTeX size command, its size in a 10 pt document, and how much wider its design is than 10 pt's."""

    command: str
    size: float
    scale: float  # Computer Modern's smaller sizes are drawn wider: 9 pt text is 3 % wider than 0.9 of 10 pt

    def pt(self, units: float) -> float:
        """Return a width measured by ``text_width`` (em of 10 pt type) in points at this size."""
        return units * self.size * self.scale


SMALL, FOOTNOTE, SCRIPT = (
    LatexFont("small", 9.0, 1.03),
    LatexFont("footnotesize", 8.0, 1.06),
    LatexFont("scriptsize", 7.0, 1.15),
)
SMALLER = {SMALL: FOOTNOTE, FOOTNOTE: SCRIPT, SCRIPT: SCRIPT}  # an interval set under its estimate: a size smaller

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
    "|": r"\textbar{}",
    "[": "{[}",  # never read as the optional argument of a \\ before it
    "]": "{]}",
    "−": "$-$",
    "–": "--",
    "—": "---",
    "Δ": r"$\Delta$",
    "→": r"$\rightarrow$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "·": r"$\cdot$",
    "…": r"\ldots{}",
}
BREAK_AFTER = "_-/."  # where a long label may wrap in a narrow column, besides its spaces

# Computer Modern Roman 10 pt widths in em; other characters 0.5 (a Latin letter), 1.0 beyond Latin scripts.
_WIDTHS = {
    " ": 0.333,
    "!": 0.278,
    '"': 0.5,
    "#": 0.833,
    "$": 0.5,
    "%": 0.833,
    "&": 0.778,
    "'": 0.278,
    "(": 0.389,
    ")": 0.389,
    "*": 0.5,
    "+": 0.778,
    ",": 0.278,
    "-": 0.333,
    ".": 0.278,
    "/": 0.5,
    ":": 0.278,
    ";": 0.278,
    "<": 0.778,
    "=": 0.778,
    ">": 0.778,
    "?": 0.472,
    "@": 0.778,
    "[": 0.278,
    "\\": 0.5,
    "]": 0.278,
    "^": 0.5,
    "_": 0.5,
    "{": 0.5,
    "|": 0.278,
    "}": 0.5,
    "~": 0.5,
    "−": 0.778,
    "–": 0.5,
    "—": 1.0,
    "Δ": 0.833,
    "→": 1.0,
    "±": 0.778,
    "×": 0.778,
    "≥": 0.778,
    "≤": 0.778,
    "≠": 0.778,
    "·": 0.278,
    "…": 1.0,
    **{digit: 0.5 for digit in "0123456789"},
    **dict(
        zip(
            "abcdefghijklmnopqrstuvwxyz",
            (
                0.5,
                0.556,
                0.444,
                0.556,
                0.444,
                0.306,
                0.5,
                0.556,
                0.278,
                0.306,
                0.528,
                0.278,
                0.833,
                0.556,
                0.5,
                0.556,
                0.528,
                0.392,
                0.394,
                0.389,
                0.556,
                0.528,
                0.722,
                0.528,
                0.528,
                0.444,
            ),
        )
    ),
    **dict(
        zip(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            (
                0.75,
                0.708,
                0.722,
                0.764,
                0.681,
                0.653,
                0.785,
                0.75,
                0.361,
                0.514,
                0.778,
                0.625,
                0.917,
                0.75,
                0.778,
                0.681,
                0.778,
                0.736,
                0.556,
                0.722,
                0.75,
                0.75,
                1.028,
                0.75,
                0.75,
                0.611,
            ),
        )
    ),
}
BOLD_WIDTH = 1.15  # bold extended is about this much wider


def text_width(text: str, bold: bool = False) -> float:
    """Return the estimated width of text set in Computer Modern, in em of 10 pt type (times the font size)."""
    width = sum(_WIDTHS.get(character, 0.5 if character <= "ɏ" else 1.0) for character in text)
    return width * (BOLD_WIDTH if bold else 1.0)


def latex_escape(text: str) -> str:
    """Return text safe inside a LaTeX table cell or caption."""
    return "".join(LATEX_SPECIALS.get(character, character) for character in text)


def beyond_pdflatex(text: str) -> list[str]:
    """Return the characters of text outside ASCII that latex_escape does not turn into LaTeX (in first order)."""
    found: list[str] = []
    for character in text:
        if ord(character) > 127 and character not in LATEX_SPECIALS and character not in found:
            found.append(character)
    return found


def _breakable(text: str) -> str:
    """Return a label escaped, allowed to wrap after _ - / . as well as at its spaces."""
    return "".join(
        latex_escape(character) + (r"\allowbreak{}" if character in BREAK_AFTER else "") for character in text
    )


def _chunks(text: str) -> list[str]:
    """Return the pieces a wrapped label cannot break inside."""
    return [chunk for chunk in re.split(r"(?<=[_\-/.])|\s+", text) if chunk]


def _line_count(text: str, width: float) -> int:
    """Return how many lines a label takes wrapped as LaTeX wraps it (``_breakable``) in ``width`` (em of 10 pt)."""
    lines, used = 1, 0.0
    for word in text.split():
        for position, chunk in enumerate(_chunks(word)):
            needed = text_width(chunk) + (_WIDTHS[" "] if position == 0 and used else 0.0)
            if used and used + needed > width:
                lines, used = lines + 1, text_width(chunk)
            else:
                used += needed
    return lines


def _latex_number(text: str) -> str:
    """Return a printed number in LaTeX: a true minus sign, '<0.01' in math mode, '%' escaped."""
    if text.startswith("<"):
        text = "$<$" + text[1:]
    return text.replace("-", "$-$").replace("%", r"\%").replace("—", "---").replace("[", "{[}").replace("]", "{]}")


@dataclass(frozen=True)
class _Column:
    """One column of the table as LaTeX sets it: its kind and the widths of its contents (em of 10 pt type)."""

    kind: str  # label, number, interval (a number column some of whose cells have an interval)
    natural: float  # label: the longest label; number, interval: the longest estimate
    interval: float  # the longest interval (interval columns)
    chunk: float  # label: the longest piece it cannot wrap inside
    header: str
    header_word: float  # the header's longest word ('[95% CI]' is one)
    labels: tuple[str, ...]  # label columns: the labels it prints


def _columns(table: Table) -> list[_Column]:
    found = []
    for index, header in enumerate(table.columns):
        cells = [row[index] for row in table.rows]
        labels = [cell.text for cell in cells if not cell.numeric and not cell.repeated]
        numbers = [text_width(cell.text, cell.bold) for cell in cells if cell.numeric]
        intervals = [text_width(cell.interval, cell.bold) for cell in cells if cell.numeric and cell.interval]
        found.append(
            _Column(
                kind="label" if not numbers else "interval" if intervals else "number",
                natural=max([*(text_width(text) for text in labels), *numbers], default=0.0),
                interval=max(intervals, default=0.0),
                chunk=max((text_width(chunk) for text in labels for chunk in _chunks(text)), default=0.0),
                header=header,
                header_word=max((text_width(word) for word in _words(header)), default=0.0),
                labels=tuple(dict.fromkeys(labels)),
            )
        )
    return found


@dataclass(frozen=True)
class _Layout:
    """A way to set the table: font, intervals beside or under their estimates, headers upright or rotated."""

    font: LatexFont
    stacked: bool
    rotated: bool
    widths: tuple[float, ...]  # pt per table column (an interval column set side by side: both parts and the gap)
    wrapped: tuple[bool, ...]  # label columns set as paragraphs of their width
    total: float  # pt, the separations included
    lines: int  # the most lines a wrapped label takes

    @property
    def fits(self) -> bool:
        return self.total <= TEXT_WIDTH_PT * WIDTH_MARGIN


def _layout(table: Table, columns: list[_Column], font: LatexFont, stacked: bool, rotated: bool) -> _Layout:
    widths: list[float] = []
    latex_columns = 0
    for column in columns:
        header = font.pt(column.header_word) if column.kind == "label" or not rotated else 1.2 * font.size
        if column.kind in ("label", "number"):
            widths.append(max(font.pt(column.natural), header))
        elif stacked:
            widths.append(max(font.pt(column.natural), SMALLER[font].pt(column.interval), header))
        else:
            widths.append(max(font.pt(column.natural + column.interval) + INTERVAL_GAP_PT, header))
        latex_columns += 2 if column.kind == "interval" and not stacked else 1
    # a group header wider than the columns it spans widens the last of them, as TeX does
    start = 0
    for group_label, span in table.groups:
        if group_label and span:
            spanned = sum(widths[start : start + span]) + 2 * COLUMN_SEPARATION_PT * (span - 1)
            longest = font.pt(max(text_width(word) for word in _words(group_label)))
            widths[start + span - 1] += max(0.0, longest - spanned)
        start += span
    separations = 2 * COLUMN_SEPARATION_PT * (latex_columns - 1)
    wrapped = [False] * len(columns)
    labels = [index for index, column in enumerate(columns) if column.kind == "label"]
    others = sum(width for index, width in enumerate(widths) if index not in labels)
    room = TEXT_WIDTH_PT * WIDTH_MARGIN - separations - others
    if labels and sum(widths[index] for index in labels) > room:
        # wrap the long labels, the longest first, down to the pieces that cannot break
        floors = {index: font.pt(max(columns[index].chunk, columns[index].header_word)) for index in labels}
        low, high = 0.0, max(widths[index] for index in labels)
        for _ in range(40):  # the widest cap at which every label column fits
            cap = (low + high) / 2
            if sum(min(widths[index], max(cap, floors[index])) for index in labels) <= room:
                low = cap
            else:
                high = cap
        for index in labels:
            width = min(widths[index], max(low, floors[index]))
            if width < widths[index] - 0.05:
                widths[index], wrapped[index] = width, True
    lines = max(
        (
            _line_count(text, widths[index] / (font.size * font.scale))
            for index in labels
            if wrapped[index]
            for text in columns[index].labels
        ),
        default=1,
    )
    return _Layout(
        font=font,
        stacked=stacked,
        rotated=rotated,
        widths=tuple(widths),
        wrapped=tuple(wrapped),
        total=sum(widths) + separations,
        lines=lines,
    )


LABEL_LINES = 2.0  # a layout that wraps a label into more lines than this is taken only when no other fits
LAYOUTS = (
    (SMALL, False, False),
    (FOOTNOTE, False, False),
    (SMALL, True, False),
    (FOOTNOTE, True, False),
    (FOOTNOTE, True, True),
    (SCRIPT, True, False),
    (SCRIPT, True, True),
)  # font, stacked, rotated; in order


def latex_layout(table: Table) -> _Layout:
    """Return the first layout of the table that fits the text width with labels in at most two lines, else the
    first that fits, else the last tried (the whole table; ``latex_parts`` splits one that does not fit)."""
    columns = _columns(table)
    tried = [_layout(table, columns, font, stacked, rotated) for font, stacked, rotated in LAYOUTS]
    fitting = [layout for layout in tried if layout.fits]
    return next((layout for layout in fitting if layout.lines <= LABEL_LINES), fitting[0] if fitting else tried[-1])


def latex_parts(table: Table) -> list[tuple[Table, _Layout]]:
    """Return the table as the LaTeX file sets it: whole, or split into parts by its column groups (each part
    repeating the leading label columns) when no layout fits it whole; each part with its layout.

    The fewest parts win, then the layouts' order (labels in at most two lines first).
    """
    whole = latex_layout(table)
    if whole.fits and whole.lines <= LABEL_LINES:
        return [(table, whole)]
    columns = _columns(table)
    lead = next((index for index, column in enumerate(columns) if column.kind != "label"), len(columns))
    units: list[list[int]] = []  # the columns after the leading labels, a group at a time
    position = 0
    for group_label, width in table.groups or ():
        members = [index for index in range(position, position + width) if index >= lead]
        units += [members] if group_label and members else [[index] for index in members]
        position += width
    units += [[index] for index in range(max(position, lead), len(columns))]

    def fitted(font: LatexFont, stacked: bool, rotated: bool, keep: list[int]) -> tuple[Table, _Layout]:
        part = columns_of(table, [*range(lead), *keep])
        return part, _layout(part, _columns(part), font, stacked, rotated)

    plans = []
    for rank, (font, stacked, rotated) in enumerate(LAYOUTS):
        parts: list[list[int]] = []
        current: list[int] = []
        for unit in [
            unit
            for whole in units
            for unit in ([whole] if fitted(font, stacked, rotated, whole)[1].fits else [[index] for index in whole])
        ]:
            if current and not fitted(font, stacked, rotated, current + unit)[1].fits:
                parts.append(current)
                current = []
            current = current + unit
        parts.append(current)
        laid = [fitted(font, stacked, rotated, keep) for keep in parts]
        cramped = any(layout.lines > LABEL_LINES for _, layout in laid)
        overfull = any(not layout.fits for _, layout in laid)
        plans.append(((overfull, len(laid), cramped, rank), laid))
    return min(plans, key=lambda plan: plan[0])[1]


def _words(text: str) -> list[str]:
    """Return the words a header wraps between: at spaces, except inside brackets ('[95% CI]' stays whole)."""
    return re.findall(r"\[[^\]]*\]|\S+", text)


def _wrap(text: str, width: float) -> list[str]:
    """Return the words of text in lines at most ``width`` wide (em of 10 pt type); a longer word keeps a line."""
    lines: list[str] = []
    for word in _words(text):
        if lines and text_width(f"{lines[-1]} {word}") <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines or [""]


def _stack(lines: list[str], align: str, position: str = "b") -> str:
    """Return lines (already LaTeX) set one under the other as one cell."""
    if len(lines) == 1:
        return lines[0]
    return rf"\begin{{tabular}}[{position}]{{@{{}}{align}@{{}}}}" + r"\\{}".join(lines) + r"\end{tabular}"


def _latex_header(column: _Column, width: float, layout: _Layout) -> str:
    if column.kind == "label":
        return latex_escape(column.header)  # a wrapped label column wraps its header itself
    if layout.rotated:
        return rf"\rotatebox{{90}}{{{latex_escape(column.header)}}}"
    units = width / (layout.font.size * layout.font.scale)
    return _stack([latex_escape(line) for line in _wrap(column.header, units)], "c")


def _latex_body_cell(cell: Cell, column: _Column, wrapped: bool, layout: _Layout) -> str:
    """Return one cell of a body row: one LaTeX cell, or two for an interval column set side by side."""
    side_by_side = column.kind == "interval" and not layout.stacked
    if cell.repeated or not cell.numeric:
        text = "" if cell.repeated else _breakable(cell.text) if wrapped else latex_escape(cell.text)
        return text + (" &" if side_by_side else "")

    def bold(text: str) -> str:
        return rf"\textbf{{{text}}}" if cell.bold and text else text

    estimate, interval = bold(_latex_number(cell.text)), bold(_latex_number(cell.interval))
    if side_by_side:
        return f"{estimate} & {interval}"
    if interval:
        return _stack([estimate, rf"\{SMALLER[layout.font].command} {interval}"], "r", "t")
    return estimate


def table_latex(table: Table) -> str:
    """Return the table as booktabs longtables, one file a paper can \\input (docs/site.md, LaTeX tables)."""
    parts = latex_parts(table)
    title = " ".join(table.title.split())
    everything = " ".join(
        [
            title,
            table.caption,
            *table.columns,
            *(group for group, _ in table.groups),
            *table.notes,
            *(cell.full_text for row in table.rows for cell in row),
        ]
    )
    rotated = any(layout.rotated for _, layout in parts)
    packages = LATEX_PACKAGES + (("graphicx",) if rotated else ())
    hows = []
    for part, layout in parts:
        how = [f"\\{layout.font.command}"]
        if layout.stacked and any(column.kind == "interval" for column in _columns(part)):
            how.append("intervals under their estimates")
        if layout.rotated:
            how.append("column headers rotated")
        if not layout.fits:
            how.append(f"still {layout.total / TEXT_WIDTH_PT:.0%} of that width")
        hows.append(", ".join(how))
    lines = [
        f"% Table {table.number} of the refsens-report appendix: {title}",
        rf"% Needs \usepackage{{{','.join(packages)}}}. \input it in one-column mode (longtable does not run",
        r"% in twocolumn; in a two-column paper, after \onecolumn in the appendix).",
        f"% Laid out for a text width of {TEXT_WIDTH_NAME}: "
        + (
            hows[0]
            if len(parts) == 1
            else f"in {len(parts)} parts, the label columns repeated in each (" + "; ".join(hows) + ")"
        )
        + ".",
    ]
    unusual = beyond_pdflatex(everything)
    if unusual:
        lines.append(
            "% Its labels hold characters pdfLaTeX has no glyphs for by default ("
            + " ".join(unusual[:12])
            + (" ..." if len(unusual) > 12 else "")
            + "): XeLaTeX or LuaLaTeX with a font that has them."
        )
    lines.append(r"\begingroup")
    lead = title if title.endswith((".", "?", "!")) else f"{title}."
    for number, (part, layout) in enumerate(parts, start=1):
        if number == 1:
            caption = (
                rf"\caption[{latex_escape(title)}]{{{latex_escape(lead)} {latex_escape(table.caption)}}}"
                rf"\label{{tab:refsens-{table.key}}}\\"
            )
        else:
            caption = rf"\caption*{{Table \ref{{tab:refsens-{table.key}}}, continued ({number} of {len(parts)}).}}\\"
        lines += _longtable(part, layout, caption, table.notes if number == len(parts) else ())
    lines += [r"\endgroup", ""]
    return "\n".join(lines)


def _longtable(table: Table, layout: _Layout, caption: str, notes: Sequence[str]) -> list[str]:
    """Return one longtable's lines: the table (or one part of it) in the given layout."""
    columns = _columns(table)
    side = [column.kind == "interval" and not layout.stacked for column in columns]
    spans = [2 if two else 1 for two in side]
    n_latex = sum(spans)
    spec = []
    for column, width, wrapped, two in zip(columns, layout.widths, layout.wrapped, side):
        if column.kind == "label":
            spec.append(rf">{{\raggedright\arraybackslash}}p{{{width:.1f}pt}}" if wrapped else "l")
        else:
            spec.append(rf"r@{{\hspace{{{INTERVAL_GAP_PT:g}pt}}}}l" if two else "r")
    lines = [
        f"\\{layout.font.command}",
        rf"\setlength{{\tabcolsep}}{{{COLUMN_SEPARATION_PT:g}pt}}",
        r"\setlength{\LTcapwidth}{\linewidth}",
    ]
    if notes:
        lines.append(r"\setlength{\LTpost}{2pt}")
    lines += [rf"\begin{{longtable}}{{@{{}}{''.join(spec)}@{{}}}}", caption]
    head = [r"\toprule"]
    if any(group_label for group_label, _ in table.groups):
        cells, rules, start, column_index = [], [], 1, 0
        for group_label, span in table.groups:
            width = sum(spans[column_index : column_index + span])
            if group_label:
                spanned = sum(layout.widths[column_index : column_index + span]) + 2 * COLUMN_SEPARATION_PT * (span - 1)
                units = spanned / (layout.font.size * layout.font.scale)
                label_lines = [latex_escape(line) for line in _wrap(group_label, units)]
                cells.append(rf"\multicolumn{{{width}}}{{c}}{{{_stack(label_lines, 'c')}}}")
                rules.append(rf"\cmidrule(lr){{{start}-{start + width - 1}}}")
            else:
                cells += [""] * width
            start += width
            column_index += span
        head.append(" & ".join(cells) + r" \\")
        head.append(" ".join(rules))
    header_cells = []
    for column, width, two in zip(columns, layout.widths, side):
        text = _latex_header(column, width, layout)
        header_cells.append(rf"\multicolumn{{2}}{{c}}{{{text}}}" if two else text)
    head += [" & ".join(header_cells) + r" \\", r"\midrule"]
    lines += head + [r"\endfirsthead"]
    lines += [rf"\multicolumn{{{n_latex}}}{{@{{}}l}}{{\emph{{Table \thetable, continued}}}} \\"]
    lines += head + [
        r"\endhead",
        r"\midrule",
        rf"\multicolumn{{{n_latex}}}{{r@{{}}}}{{\emph{{continued on the next page}}}} \\",
        r"\endfoot",
        r"\bottomrule",
        r"\endlastfoot",
    ]
    two_lines = layout.stacked and any(column.kind == "interval" for column in columns)
    for index, row in enumerate(table.rows):
        # a new first-column label starts a group: a little space, as in the paper
        if index and not row[0].repeated and table.rows[index - 1][0].text and row[0].text and _grouped(table):
            lines.append(r"\addlinespace")
        elif index and two_lines:  # rows of two lines: a hairline of space keeps each interval with its estimate
            lines.append(r"\addlinespace[1.5pt]")
        cells = [
            _latex_body_cell(cell, column, wrapped, layout)
            for cell, column, wrapped in zip(row, columns, layout.wrapped)
        ]
        lines.append(" & ".join(cells) + r" \\")
    lines.append(r"\end{longtable}")
    for note in notes:
        lines.append(rf"\par\noindent{{\footnotesize {latex_escape(note)}\par}}")
    if notes:
        lines.append(r"\bigskip")
    return lines


def _grouped(table: Table) -> bool:
    """Return whether the table's first column groups several rows."""
    return any(row[0].repeated for row in table.rows)
