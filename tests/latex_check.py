"""Checks of the LaTeX table downloads: their structure (always) and a pdfLaTeX build (when a TeX is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from refsens_report.latex import LATEX_PACKAGES, TEXT_WIDTH_PT, beyond_pdflatex

PDFLATEX = shutil.which("pdflatex")


def _braced(text: str, start: int) -> int:
    """Return the index just past the brace group opening at ``start`` (escaped characters skipped)."""
    depth, index = 0, start
    while index < len(text):
        character = text[index]
        if character == "\\":
            index += 2
            continue
        depth += {"{": 1, "}": -1}.get(character, 0)
        index += 1
        if depth == 0:
            return index
        assert depth > 0, f"unbalanced braces in {text!r}"
    raise AssertionError(f"unbalanced braces in {text!r}")


def column_count(spec: str) -> int:
    """Return how many columns a tabular preamble declares (l, c, r, p{..}; @{..} and >{..} are not columns)."""
    count, index = 0, 0
    while index < len(spec):
        character = spec[index]
        if character in "@>":
            index = _braced(spec, index + 1)
        elif character == "p":
            count += 1
            index = _braced(spec, index + 1)
        elif character in "lcr":
            count += 1
            index += 1
        else:
            raise AssertionError(f"unexpected {character!r} in the column specification {spec!r}")
    return count


def cells(line: str) -> list[str]:
    """Return a row's cells: split at the '&' outside braces and not escaped."""
    found, depth, current, index = [], 0, "", 0
    while index < len(line):
        character = line[index]
        if character == "\\" and index + 1 < len(line):
            current += line[index : index + 2]
            index += 2
            continue
        depth += {"{": 1, "}": -1}.get(character, 0)
        if character == "&" and depth == 0:
            found.append(current)
            current = ""
        else:
            current += character
        index += 1
    return [*found, current]


def span(cell: str) -> int:
    match = re.match(r"\s*\\multicolumn\{(\d+)\}", cell)
    return int(match.group(1)) if match else 1


UNESCAPED = re.compile(r"(?<!\\)[_%#^~]")  # specials that must only appear escaped (as \_ \% \#, or as commands)


def check_structure(text: str) -> None:
    """Assert a .tex download is \\input-able longtables (a wide table in parts), every row as wide as declared."""
    assert "\\documentclass" not in text and "\\begin{document}" not in text
    comments = [line for line in text.splitlines() if line.startswith("%")]
    packages = re.search(r"\\usepackage\{([^}]*)\}", "\n".join(comments))
    assert packages and set(LATEX_PACKAGES) <= set(packages.group(1).split(","))
    assert ("\\rotatebox" in text) == ("graphicx" in packages.group(1).split(","))
    parts = text.count("\\begin{longtable}")
    assert parts == text.count("\\end{longtable}") >= 1  # one, or a wide table's parts side by side in one file
    assert text.count("\\begingroup") == text.count("\\endgroup") == 1
    assert text.count("\\label{") == 1 and text.count("\\caption*{") == parts - 1
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "\\endfirsthead", "\\endhead", "\\endfoot", "\\endlastfoot"):
        assert text.count(rule) >= parts, rule
    for body in re.findall(r"\\begin\{longtable\}.*?\\end\{longtable\}", text, re.S):
        spec_start = len("\\begin{longtable}")
        spec = body[spec_start + 1 : _braced(body, spec_start) - 1]
        columns = column_count(spec)
        rows = [line for line in body.splitlines()[1:] if line.rstrip().endswith("\\\\")]
        assert len(rows) >= 3  # the caption, the header, a row
        for line in rows:
            if line.startswith("\\caption"):
                continue
            row = line.rstrip()[:-2]
            assert sum(span(cell) for cell in cells(row)) == columns, (columns, line)
    for line in text.splitlines():
        if line.startswith("%"):
            continue
        assert not UNESCAPED.search(line), line
        assert len(re.findall(r"(?<!\\)\$", line)) % 2 == 0, line  # math only as $-$, $<$, $\Delta$, ...
        assert _braced("{" + line + "}", 0) == len(line) + 2, line  # balanced braces
        if not line.startswith("\\begin{longtable}"):  # its preamble has >{...}
            assert "<" not in line.replace("$<$", "") and ">" not in line, line  # as \textless{}, \textgreater{}


def wrapper(files: list[Path]) -> str:
    """Return a one-column article (16 cm text width, 10 pt) that \\inputs every file, each on its own page.

    Characters pdfLaTeX has no glyphs for (labels in Devanagari, Arabic, Chinese: the files' headers say to use
    XeLaTeX or LuaLaTeX for them) stand in as boxes of about their width, so the widths are still checked.
    """
    unusual = sorted({character for path in files for character in beyond_pdflatex(path.read_text(encoding="utf-8"))})
    declared = "\n".join(
        rf"\DeclareUnicodeCharacter{{{ord(character):04X}}}{{\rule{{0.9em}}{{1ex}}}}" for character in unusual
    )
    inputs = "\n".join(rf"\input{{{path.stem}}}\clearpage" for path in files)
    return rf"""\documentclass{{article}}
\usepackage{{{",".join(LATEX_PACKAGES)},graphicx}}
\setlength{{\textwidth}}{{{TEXT_WIDTH_PT}pt}}
\setlength{{\oddsidemargin}}{{0pt}}
\setlength{{\hoffset}}{{-0.5in}}
{declared}
\begin{{document}}
{inputs}
\end{{document}}
"""


UNSETTLED = re.compile(r"^Package longtable Warning: (Column|Table) widths have changed", re.M)


def build_with_pdflatex(files: list[Path], folder: Path) -> dict[str, list[str]]:
    """Typeset the files (copied into ``folder``) in one document; return each file's overfull boxes and errors,
    and any longtable still unsettled."""
    assert PDFLATEX is not None
    folder.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copyfile(path, folder / path.name)
    (folder / "tables.tex").write_text(wrapper(files), encoding="utf-8")
    # rerun as latexmk would until longtable has settled its column widths (it keeps them in the .aux; a first
    # run can set a chunk wider than the final table, and says "Column widths have changed"): three runs here
    for _ in range(4):
        run = subprocess.run(
            [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        log = (folder / "tables.log").read_text(encoding="utf-8", errors="replace")
        if run.returncode != 0 or not UNSETTLED.search(log):
            break
    problems: dict[str, list[str]] = {}
    for match in re.finditer(r"^(Overfull \\hbox \([\d.]+pt too wide\).*|! .*)$", log, re.M):
        opened = re.findall(r"\(\./(table-[^\s()]+\.tex)", log[: match.start()])
        problems.setdefault(opened[-1] if opened else "tables.tex", []).append(match.group(1))
    for match in UNSETTLED.finditer(log):
        problems.setdefault("tables.tex", []).append(match.group(0))
    if run.returncode != 0 and not problems:
        problems["tables.tex"] = [f"pdflatex exited with {run.returncode}"]
    return problems
