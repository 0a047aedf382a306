"""The LaTeX downloads: one \\input-able booktabs longtable per table that fits a one-column page.

Structure is checked always (a longtable, every row as many columns as declared, specials escaped); the widths
by typesetting every .tex download with pdfLaTeX in a one-column article of the declared text width and
reading the log for overfull boxes, skipped when no pdflatex is installed (`make test` installs one).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import HOSTILE_TYPE, Built
from latex_check import PDFLATEX, build_with_pdflatex, cells, check_structure, column_count

from refsens_report.latex import beyond_pdflatex, latex_escape, latex_layout, latex_parts, table_latex, text_width
from refsens_report.tables import Cell, Table, stat_cell


def tex_files(built: Built) -> list[Path]:
    return sorted((built.folder / "tables").glob("*.tex"), key=lambda path: int(path.stem.split("-")[1]))


def test_every_tex_download_is_an_input_able_longtable(built_site: Built) -> None:
    files = tex_files(built_site)
    assert len(files) == len(list((built_site.folder / "tables").glob("*.csv"))) >= 10
    labels = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        check_structure(text)
        assert HOSTILE_TYPE not in text and "<script>" not in text  # escaped: \textless{}script\textgreater{}
        labels += re.findall(r"\\label\{([^}]*)\}", text)
    assert len(labels) == len(set(labels)) == len(files)  # every table can be \ref'd in one paper


def test_labels_beyond_latin_are_named_in_the_header(built_site: Built) -> None:
    texts = [path.read_text(encoding="utf-8") for path in tex_files(built_site)]
    with_devanagari = [text for text in texts if "नाम" in text]
    assert with_devanagari
    for text in with_devanagari:
        header = "\n".join(line for line in text.splitlines() if line.startswith("%"))
        # the header names the engine and the first characters pdfLaTeX lacks (a table of item text has many)
        named = set(beyond_pdflatex(header.split("by default (", 1)[-1]))
        body = "\n".join(line for line in text.splitlines() if not line.startswith("%"))
        assert "XeLaTeX or LuaLaTeX" in header and named and named <= set(beyond_pdflatex(body))


def test_structure_helpers_count_columns_and_cells() -> None:
    assert column_count(r"@{}l>{\raggedright\arraybackslash}p{73.0pt}r@{\hspace{3pt}}lr@{}") == 5
    assert cells(r"a\&b & \multicolumn{2}{c}{x & y} & {\begin{tabular}{@{}r@{}}1\\{}2\end{tabular}}") == [
        r"a\&b ",
        r" \multicolumn{2}{c}{x & y} ",
        r" {\begin{tabular}{@{}r@{}}1\\{}2\end{tabular}}",
    ]


def test_specials_are_escaped_and_brackets_never_start_an_optional_argument() -> None:
    hostile = r"[a]_b%c#d$e&f{g}h~i^j\k<l>m|n"
    escaped = latex_escape(hostile)
    assert escaped == (
        r"{[}a{]}\_b\%c\#d\$e\&f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
        r"\textless{}l\textgreater{}m\textbar{}n"
    )
    assert beyond_pdflatex("Δ − x → नाम é") == ["न", "ा", "म", "é"]
    table = Table(
        key="t",
        title="Is it?",
        caption="Caption with [brackets].",
        columns=("Name", "Value"),
        rows=((Cell(text="[first]"), Cell(text="1", numeric=True)),),
    )
    text = table_latex(table)
    check_structure(text)
    assert "{[}first{]}" in text
    assert r"\caption[Is it?]{Is it? Caption" in text  # no '?.'


def _interval_row(value: float, low: float, high: float) -> dict[str, Any]:
    return {"analysis": "swap", "statistic": "delta", "estimate": value, "ci_low": low, "ci_high": high}


def test_a_wide_table_stacks_its_intervals_and_wraps_its_labels_to_fit() -> None:
    """Five interval columns and long names: each interval goes under its estimate, the names wrap."""
    name = "interpreteval-CflairWglove_lstmCrf"
    rows = tuple(
        (Cell(text=f"{name}-{k}"), *(stat_cell((0, _interval_row(k - 10.5, k - 11.75, k - 8.25))) for _ in range(5)))
        for k in range(30)
    )
    table = Table(
        key="wide", title="Wide", caption="A wide table.", columns=("Output", *(f"ref{k}" for k in range(5))), rows=rows
    )
    layout = latex_layout(table)
    assert layout.fits and layout.stacked and layout.wrapped[0]
    text = table_latex(table)
    check_structure(text)
    assert r"\begin{tabular}[t]{@{}r@{}}\textbf{$-$10.50}\\{}" in text  # the interval on a line of its own
    assert r"CflairWglove\_\allowbreak{}lstmCrf" in text


def test_a_table_too_wide_for_any_layout_is_split_by_its_column_groups() -> None:
    """Four references of four interval columns each (neutrality with four references): parts of whole groups."""
    rows = tuple(
        (Cell(text=language), *(stat_cell((0, _interval_row(k + 20.25, k + 14.5, k + 25.75))) for k in range(16)))
        for language in ("ar", "hi", "pooled")
    )
    groups = (("", 1), *((f"reference {k}", 4) for k in range(4)))
    table = Table(
        key="split",
        title="Split",
        caption="Wide.",
        rows=rows,
        groups=groups,
        columns=("Language", *(name for _ in range(4) for name in ("A", "B", "Skew", "Copied"))),
    )
    assert not latex_layout(table).fits
    parts = latex_parts(table)
    assert len(parts) > 1 and all(layout.fits for _, layout in parts)
    for part, _ in parts:
        assert part.columns[0] == "Language" and part.rows[2][0].text == "pooled"  # the labels in every part
        assert all(width == 4 for label, width in part.groups if label)  # whole groups
    assert sum(len(part.columns) - 1 for part, _ in parts) == 16
    text = table_latex(table)
    check_structure(text)
    assert text.count(r"\caption*{Table \ref{tab:refsens-split}, continued") == len(parts) - 1
    assert f"in {len(parts)} parts" in text.splitlines()[3]


def test_a_narrow_table_keeps_estimate_and_interval_side_by_side_in_aligned_columns() -> None:
    row = (Cell(text="pooled"), stat_cell((0, _interval_row(1.5, -0.25, 3.0))))
    text = table_latex(Table(key="narrow", title="Narrow", caption="", columns=("Language", "Δ [95% CI]"), rows=(row,)))
    check_structure(text)
    assert r"\begin{longtable}{@{}lr@{\hspace{3pt}}l@{}}" in text
    assert r"\multicolumn{2}{c}{$\Delta$ {[}95\% CI{]}}" in text
    assert r"pooled & +1.50 & {[}$-$0.25, +3.00{]} \\" in text


def test_text_widths_follow_computer_modern() -> None:
    assert text_width("93.03 [92.50, 93.50]") == pytest.approx(8.334, abs=0.01)  # 83.3 pt at 10 pt, as TeX sets it
    assert text_width("姓名") == 2.0


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (make test-debs installs TeX Live)")
def test_every_tex_download_typesets_within_the_text_width(built_site: Built, tmp_path: Path) -> None:
    problems = build_with_pdflatex(tex_files(built_site), tmp_path)
    assert not problems, problems
