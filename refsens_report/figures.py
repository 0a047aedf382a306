"""Figure machinery: the house style, the figure model, reproducible SVG for the page and the PDF, the workers.

Each analysis draws its own figures (``refsens_report/analyses/``) with the helpers here; ``write_figures``
draws them all and writes them. SVG text stays text (``svg.fonttype = 'none'``): the browser and WeasyPrint
typeset it with the page's fonts, so Devanagari, Arabic and CJK labels shape correctly, the PDF stays small
and fast to render, and every label can be searched and copied. matplotlib is imported on first use: the
audit imports the analyses and never draws.
"""

from __future__ import annotations

import io
import logging
import math
import multiprocessing
import os
import re
import sys
import unicodedata
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refsens_report.lifetime import die_with_parent, stop_signals_held, stop_signals_released
from refsens_report.record import POOLED
from refsens_report.view import ResultsView, Row, largest_first

if TYPE_CHECKING:
    from types import ModuleType

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.lines import Line2D

# Okabe & Ito's palette: distinguishable under the common colour-vision deficiencies and in greyscale print.
# Without its yellow (#F0E442): a line or a point in it is barely visible on white paper.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")  # one more than the colours: (colour, marker) pairs repeat after 56
MIN_TEXT_PT = 7.0  # the smallest text a figure prints (at the text width, figures print at their own size)
INK, MUTED, GRID = "#222222", "#6b6b6b", "#d9d9d9"
# Latin first, then the scripts a multilingual benchmark's labels use; matplotlib measures with these and the
# browser / WeasyPrint render with the same list (the SVG keeps the family list).
FONT_FAMILIES = ("DejaVu Sans", "Noto Sans Devanagari", "Noto Sans Arabic", "Noto Sans CJK SC")
WIDTH = 6.6  # inches: about the text width of an A4 page with 2 cm margins (Letter is wider)
SVG_DOCTYPE = re.compile(rb"<!DOCTYPE svg[^>]*>\n?")
SVG_METADATA = re.compile(rb" *<metadata>.*?</metadata>\n?", re.S)
# the figures as files for slides and papers, beside the tables: figures/figure-<number>-<key>.<suffix>
EXPORTS = (".svg", ".png", ".pdf")
EXPORT_DPI = 300
EXPORT_SCRATCH = "figures/export"  # where the workers leave each figure's PNG and PDF until it has its number

RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "refsens-report",  # fixed ids: byte-identical rebuilds
    "font.family": "sans-serif",
    "font.sans-serif": list(FONT_FAMILIES),
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "axes.edgecolor": MUTED,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "xtick.labelcolor": INK,
    "ytick.labelcolor": INK,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "grid.color": GRID,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.0,
    "figure.constrained_layout.use": True,  # needed for legends placed "outside" the panels
    "figure.dpi": 100,
}


@cache
def mpl() -> ModuleType:
    """Return matplotlib, imported with the Agg backend (no display, ever) and the submodules figures use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.colors  # noqa: F401 - the submodules the analyses' figures reach through mpl()
    import matplotlib.figure  # noqa: F401
    import matplotlib.font_manager  # noqa: F401
    import matplotlib.lines  # noqa: F401
    import matplotlib.patches  # noqa: F401
    import matplotlib.text  # noqa: F401
    import matplotlib.textpath  # noqa: F401
    import matplotlib.ticker  # noqa: F401

    _add_missing_fonts(matplotlib.font_manager)
    return matplotlib


# Where Debian's packages install the Noto fonts the figures name (FONT_FAMILIES, SCRIPT_FONTS).
NOTO_FOLDERS = {
    "fonts-noto-core": Path("/usr/share/fonts/truetype/noto"),
    "fonts-noto-cjk": Path("/usr/share/fonts/opentype/noto"),
}


def _font_files(family: str) -> set[str]:
    """Return the file name stems (before the style) that hold a Noto family: NotoSansArabic-Bold.ttf holds
    "Noto Sans Arabic"; Debian's NotoSansCJK-Regular.ttc (or another system's NotoSansCJKsc-*) every CJK one."""
    stems = {family.replace(" ", "")}
    if " CJK " in family:
        stems |= {"NotoSansCJK", "NotoSansCJK" + family.rsplit(" ", 1)[1].lower()}
    return stems


def _add_missing_fonts(font_manager: ModuleType) -> None:
    """Give matplotlib the Noto fonts its font cache lacks, or say once which Debian package is missing.

    A cache built before the Noto fonts were installed does not list them: every Arabic, Devanagari and CJK
    label would silently lose its font, with a `findfont` warning per label and process. Those families are
    added from the files where Debian installs them; any still missing is named once, in one line, and
    matplotlib's own warnings about it are silenced.
    """
    manager = font_manager.fontManager
    wanted = dict.fromkeys([*FONT_FAMILIES[1:], *(font for _, font in SCRIPT_FONTS)])
    missing = [family for family in wanted if family not in {entry.name for entry in manager.ttflist}]
    if not missing:
        return
    stems = set().union(*map(_font_files, missing))
    for folder in NOTO_FOLDERS.values():
        for path in sorted(folder.glob("Noto*")) if folder.is_dir() else ():
            if path.name.split("-")[0] in stems:
                try:
                    manager.addfont(path)
                except Exception:  # noqa: BLE001 - a damaged font file: the family stays missing, and is named
                    continue
    known = {entry.name for entry in manager.ttflist}
    missing = [family for family in missing if family not in known]
    if missing:
        packages = sorted({"fonts-noto-cjk" if " CJK " in family else "fonts-noto-core" for family in missing})
        print(
            f"warning: figures: no font for {', '.join(missing)}: labels in those scripts are drawn without "
            f"their glyphs; install the Debian package {' and '.join(packages)}",
            file=sys.stderr,
        )
        logging.getLogger(font_manager.__name__).addFilter(lambda entry: not entry.getMessage().startswith("findfont"))


@dataclass(frozen=True)
class Figure:
    """A numbered figure: its SVG file (relative to the version folder), caption and alt text."""

    key: str
    title: str
    caption: str
    alt: str
    file: str = ""
    number: int = 0

    @property
    def anchor(self) -> str:
        """Return the HTML id of the figure."""
        return f"figure-{self.key}"

    @property
    def export_stem(self) -> str:
        """Return the figure's files for slides and papers without suffix: figures/figure-1-<key> (once numbered)."""
        return f"figures/figure-{self.number}-{self.key}"


def plain(text: str) -> str:
    """Return team-written text that matplotlib prints literally ('$' would otherwise start mathtext)."""
    return text.replace("$", r"\$")


@contextmanager
def _style() -> Iterator[None]:
    with mpl().rc_context(RC), warnings.catch_warnings():
        # matplotlib measures text with one font and warns on Devanagari/Arabic/CJK glyphs it lacks; the
        # SVG keeps the text and the family list, and the browser / WeasyPrint render it with Noto
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        yield


def subplots(*grid: int, figsize: tuple[float, float], **options: Any) -> tuple[MplFigure, Any]:
    """Return a new figure and its axes without pyplot (no global figure registry, and a faster import)."""
    figure = mpl().figure.Figure(figsize=figsize)
    return figure, figure.subplots(*grid, **options)


def _svg(figure: MplFigure, text_as_paths: bool = False) -> bytes:
    """Return the figure as SVG without date, creator URL or DTD reference, so it is reproducible and offline."""
    buffer = io.BytesIO()
    with mpl().rc_context({"svg.fonttype": "path" if text_as_paths else "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "refsens-report"})
    # the DOCTYPE and the RDF metadata name vocabularies on the web; both are optional, and the site
    # must not refer outside itself
    return SVG_METADATA.sub(b"", SVG_DOCTYPE.sub(b"", buffer.getvalue()))


SVG_NS, XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"


@contextmanager
def _text_placed_by_matplotlib() -> Iterator[None]:
    """Within: the SVG backend writes every label at the start point matplotlib laid it out at, no text-anchor.

    WeasyPrint sets a label with text-anchor middle or end in a transparency group of its own to measure
    it; the appendix has hundreds. matplotlib lays text out with DejaVu Sans, the font the labels name
    first, so its start points are where WeasyPrint would put them.
    """
    from matplotlib.backends.backend_svg import RendererSVG

    original = RendererSVG.draw_text

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):  # noqa: ANN001 - matplotlib's
        return original(self, gc, x, y, s, prop, angle, ismath=ismath, mtext=None)

    RendererSVG.draw_text = draw_text
    try:
        yield
    finally:
        RendererSVG.draw_text = original


def _flatten_groups(svg: bytes) -> bytes:
    """Return the SVG with matplotlib's id-only <g> wrappers removed (their children take their place).

    About four in five of matplotlib's elements are such groups; WeasyPrint pays for every node it draws.
    """
    import xml.etree.ElementTree as ET

    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg)
    group = f"{{{SVG_NS}}}g"

    def flatten(element: ET.Element) -> None:
        children: list[ET.Element] = []
        for child in element:
            flatten(child)
            if child.tag == group and set(child.attrib) <= {"id"} and not (child.text or "").strip():
                children.extend(child)
            else:
                children.append(child)
        element[:] = children

    flatten(root)
    return b'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + ET.tostring(
        root, encoding="utf-8", xml_declaration=False
    )


def _print_svg(figure: MplFigure, text_as_paths: bool) -> bytes:
    """Return the PDF's copy of a figure: the same drawing, cheaper for WeasyPrint to set.

    Labels that need shaping are drawn as outlines (WeasyPrint sets SVG text letter by letter, which breaks
    Devanagari matras and Arabic joining); other labels stay text, placed by matplotlib; groups flattened.
    """
    # the site's copy was drawn first and laid the figure out: keep those positions, skip the second layout
    figure.set_layout_engine("none")
    if text_as_paths:
        return _flatten_groups(_svg(figure, text_as_paths=True))
    with _text_placed_by_matplotlib():
        return _flatten_groups(_svg(figure))


# Fonts for labels in scripts DejaVu Sans lacks, by a word of their Unicode character names. matplotlib
# (with libraqm) shapes a label only in the one font it is given, so each label gets its script's font.
SCRIPT_FONTS = (
    ("DEVANAGARI", "Noto Sans Devanagari"),
    ("BENGALI", "Noto Sans Bengali"),
    ("GURMUKHI", "Noto Sans Gurmukhi"),
    ("GUJARATI", "Noto Sans Gujarati"),
    ("TAMIL", "Noto Sans Tamil"),
    ("TELUGU", "Noto Sans Telugu"),
    ("KANNADA", "Noto Sans Kannada"),
    ("MALAYALAM", "Noto Sans Malayalam"),
    ("THAI", "Noto Sans Thai"),
    ("CJK", "Noto Sans CJK SC"),
    ("HIRAGANA", "Noto Sans CJK JP"),
    ("KATAKANA", "Noto Sans CJK JP"),
    ("HANGUL", "Noto Sans CJK KR"),
    ("ARABIC", "Noto Sans Arabic"),
    ("HEBREW", "Noto Sans Hebrew"),
)


def _script_font(text: str) -> str | None:
    """Return the font for the first character of a script DejaVu Sans cannot set, or None."""
    for character in text:
        if ord(character) < 0x0590:  # Latin, Greek, Cyrillic, Armenian: DejaVu Sans has them
            continue
        name = unicodedata.name(character, "")
        for word, font in SCRIPT_FONTS:
            if word in name:
                return font
    return None


def _needs_shaping(text: str) -> bool:
    """Return whether text needs complex shaping or right-to-left ordering (matras, joining, bidi)."""
    return any(
        unicodedata.category(character) in ("Mn", "Mc") or unicodedata.bidirectional(character) in ("R", "AL")
        for character in text
    )


def _fit_fonts(figure: MplFigure) -> bool:
    """Give each label in another script its script's font; return whether any label needs shaping."""
    shaping = False
    for text in figure.findobj(mpl().text.Text):
        content = text.get_text()
        font = _script_font(content)
        if font is not None:
            text.set_fontfamily([font, *FONT_FAMILIES])
        shaping |= _needs_shaping(content)
    return shaping


FIGURE_LANGUAGES = 24  # language rows a figure draws at most (besides pooled); the tables hold every language


def figure_languages(view: ResultsView) -> list[str]:
    """Return the languages a per-language figure draws: all of them, or the FIGURE_LANGUAGES with the most
    audited items (in the record's order), then pooled; with one language only that one (pooled is the same)."""
    languages = view.languages[:-1]
    if len(languages) == 1:
        return languages
    if len(languages) <= FIGURE_LANGUAGES:
        return view.languages
    audited = view.data.get("record", {}).get("subsets", {}).get("audited") or {}
    largest = set(sorted(languages, key=lambda language: (-(audited.get(language) or 0), language))[:FIGURE_LANGUAGES])
    return [language for language in languages if language in largest] + [POOLED]


def languages_noted(view: ResultsView, model: Figure) -> Figure:
    """Return a per-language figure's model, its caption saying which languages it leaves to the tables."""
    if len(view.languages) - 1 <= FIGURE_LANGUAGES:
        return model
    note = (
        f" Of the {len(view.languages) - 1} languages, the {FIGURE_LANGUAGES} with the most audited items are "
        "drawn; every language is in the tables and their CSV downloads."
    )
    return replace(model, caption=model.caption + note)


FIGURE_ROWS = 20  # rows (outputs, pairs) a figure draws at most; the tables and their CSV downloads hold every one


def picked(rows: Iterable[Row], key: Callable[[Row], Hashable], limit: int = FIGURE_ROWS) -> list[Hashable]:
    """Return the keys (an output, a pair) of the rows with the largest |estimate|, each key once, at most
    ``limit``, largest first: the one rule by which a figure chooses what to draw among many."""
    keys: list[Hashable] = []
    for row in largest_first(rows):
        if key(row) not in keys:
            keys.append(key(row))
            if len(keys) == limit:
                break
    return keys


def drawn_note(shown: int, total: int, what: str, chosen: str, where: str) -> str:
    """Return the caption's sentence on what a figure leaves out ('' when it draws everything)."""
    if shown >= total:
        return ""
    return (
        f" Drawn: the {shown} {what} with the largest {chosen}, of {total:,}; every one is in {where} and "
        "its CSV download."
    )


def language_axis(axis: Axes, languages: list[str]) -> dict[str, float]:
    """Lay languages top to bottom with 'pooled' last, set apart by a rule; return each one's y position."""
    positions = {}
    y = 0.0
    for language in languages:
        if language == POOLED:
            y += 0.5
        positions[language] = -y
        y += 1
    axis.set_yticks(list(positions.values()), [plain(language) for language in languages])
    for tick in axis.get_yticklabels():
        if tick.get_text() == POOLED:
            tick.set_fontweight("bold")
    if POOLED in positions:
        axis.axhline(positions[POOLED] + 0.75, color=GRID, linewidth=0.8)
    axis.set_ylim(-y + 0.4, 0.6)
    axis.grid(axis="x")
    axis.set_axisbelow(True)
    return positions


def output_positions(outputs: list[str]) -> dict[str, float]:
    """Return each row's y position, one row per output (or other label) top to bottom."""
    return {output: -index for index, output in enumerate(outputs)}


def label_outputs(axis: Axes, outputs: list[str]) -> None:
    """Label the rows of ``output_positions`` with their names, with a vertical grid behind the points."""
    axis.set_yticks(
        [-index for index in range(len(outputs))], [plain(output) for output in outputs], fontsize=MIN_TEXT_PT
    )
    axis.set_ylim(-len(outputs) + 0.4, 0.6)
    axis.grid(axis="x")
    axis.set_axisbelow(True)


def outputs_label(row: Row) -> str:
    """Return a margin's or a swing's pair of outputs as a two-line row label (long system names stay readable)."""
    return f"{row['output']} −\n{row['output_2']}"


def style(index: int) -> tuple[str, str]:
    """Return the colour and marker of the index-th series (outputs, references, annotators)."""
    return OKABE_ITO[index % len(OKABE_ITO)], MARKERS[index % len(MARKERS)]


def offsets(count: int, spread: float = 0.18) -> list[float]:
    """Return the vertical offsets that set ``count`` intervals on one row apart (0 for a single one)."""
    if count < 2:
        return [0.0]
    return [spread * (2 * index / (count - 1) - 1) for index in range(count)]


def text_width(text: str, size: float = MIN_TEXT_PT, weight: str = "normal") -> float:
    """Return how wide a label prints in DejaVu Sans, in points."""
    matplotlib = mpl()
    font = matplotlib.font_manager.FontProperties(family=[FONT_FAMILIES[0]], size=size, weight=weight)
    return matplotlib.textpath.TextToPath().get_text_width_height_descent(text, font, ismath=False)[0]


def fits_cells(texts: Sequence[str], cell: float, size: float = MIN_TEXT_PT) -> bool:
    """Return whether every label fits a heat-map cell ``cell`` inches wide at ``size`` points, 1 pt each side."""
    return all(text_width(text, size) + 2 <= cell * 72 for text in texts)


def labels_width(labels: Sequence[str], size: float = MIN_TEXT_PT) -> float:
    """Return the width (inches) of the longest label: the room a column of tick labels takes."""
    return max((text_width(plain(label), size) for label in labels), default=0.0) / 72


LABEL_PITCH = 1.25 * MIN_TEXT_PT / 72  # inches from one row of labels to the next: MIN_TEXT_PT with its line gap


def dodged(positions: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Return positions moved apart to at least ``gap`` from each other, within [low, high], in their order.

    Labels at the same or nearby heights (tied ranks) would print over each other: each run of labels too
    close is spread evenly around where its labels would be (least squares), then the whole set is kept
    inside the axis. With more labels than the room holds (n * gap > high - low) they end up ``gap`` apart
    from ``low`` on.
    """
    order = sorted(range(len(positions)), key=lambda index: positions[index])
    runs: list[list[int]] = []  # runs of labels gap apart, each starting at run[0]'s place
    starts: list[float] = []
    for index in order:
        runs.append([index])
        starts.append(positions[index])
        while len(runs) > 1 and starts[-2] + len(runs[-2]) * gap > starts[-1]:
            merged = runs[-2] + runs[-1]
            runs[-2:] = [merged]
            starts[-2:] = [sum(positions[member] - place * gap for place, member in enumerate(merged)) / len(merged)]
    placed = [0.0] * len(positions)
    for run, start in zip(runs, starts):
        for place, member in enumerate(run):
            placed[member] = start + place * gap
    ranked = [placed[index] for index in order]
    for place in range(len(ranked) - 1, -1, -1):  # below the top, then above the bottom
        ranked[place] = min(ranked[place], high - (len(ranked) - 1 - place) * gap)
    for place in range(len(ranked)):
        ranked[place] = max(ranked[place], low + place * gap, ranked[place - 1] + gap if place else low)
    for place, index in enumerate(order):
        placed[index] = ranked[place]
    return placed


def column_angle(cell: float) -> int:
    """Return the angle of a heat map's column labels: 45 degrees when cells ``cell`` inches wide hold them a
    LABEL_PITCH apart that way, else 90 (upright)."""
    return 45 if cell * math.sqrt(0.5) >= LABEL_PITCH else 90


def matrix_labels(axis: Axes, rows: Sequence[str], columns: Sequence[str], cell: float) -> int:
    """Label a heat map's rows and columns (cells ``cell`` inches square) at MIN_TEXT_PT; return the step.

    Column labels at ``column_angle``; with cells narrower than LABEL_PITCH every step-th row and column is
    labelled (the figure's table names every cell), so no two labels touch however many there are.
    """
    step = max(1, math.ceil(LABEL_PITCH / cell - 1e-9))
    angle = column_angle(cell)
    axis.set_xticks(
        range(0, len(columns), step),
        [plain(name) for name in columns[::step]],
        fontsize=MIN_TEXT_PT,
        rotation=angle,
        ha="right",
        va="top" if angle == 45 else "center",
        rotation_mode="anchor",
    )
    axis.set_yticks(range(0, len(rows), step), [plain(name) for name in rows[::step]], fontsize=MIN_TEXT_PT)
    return step


def interval_point(
    axis: Axes, y: float, row: Mapping[str, Any] | None, colour: str, marker: str, filled: bool = True
) -> None:
    """Draw one estimate with its interval as a horizontal error bar."""
    if row is None or row["estimate"] is None:
        return
    estimate = row["estimate"]
    if row["ci_low"] is not None and row["ci_high"] is not None:
        axis.plot([row["ci_low"], row["ci_high"]], [y, y], color=colour, linewidth=1.2, solid_capstyle="butt")
    axis.plot(
        [estimate],
        [y],
        marker=marker,
        markersize=4.5,
        color=colour,
        markerfacecolor=colour if filled else "white",
        markeredgewidth=1.0,
        linestyle="none",
    )


def zero_line(axis: Axes) -> None:
    axis.axvline(0, color=MUTED, linewidth=0.8, zorder=0.5)


def height(rows: int, per_row: float = 0.2) -> float:
    """Return a figure height (inches) that gives every language row the same room, plus axes and legend."""
    return max(2.0, 1.0 + per_row * rows)


def legend_handles(labels: list[str], filled: bool = True) -> list[Line2D]:
    return [
        mpl().lines.Line2D(
            [],
            [],
            color=style(i)[0],
            marker=style(i)[1],
            markersize=4.5,
            markerfacecolor=style(i)[0] if filled else "white",
            label=plain(text),
        )
        for i, text in enumerate(labels)
    ]


def top_legend(figure: MplFigure, handles: list, title: str | None = None) -> None:
    """Put one legend above all panels, outside them, so it never covers a title or a point.

    Up to 4 entries a row, fewer when long labels would make the rows wider than the figure (whose edges
    would cut them off).
    """
    for columns in range(min(len(handles), 4), 0, -1):
        legend = figure.legend(
            handles=handles,
            title=plain(title) if title else None,
            loc="outside upper center",
            ncols=columns,
            title_fontsize=7.5,
            alignment="center",
        )
        if columns == 1 or legend.get_window_extent().width <= figure.bbox.width:
            return
        legend.remove()


def shared_xlabel(figure: MplFigure, text: str) -> None:
    """Label the x axis once under all panels (they share its units)."""
    figure.supxlabel(text, fontsize=RC["axes.labelsize"])


MAX_PANELS = 4  # side-by-side panels at the text width; beyond this a figure lays its panels out as rows
TITLE_LINES = 2  # a panel's title wraps at its spaces onto at most this many lines
PANEL_GAP = 0.15  # inches between one panel's title and the next panel (constrained layout's pads and more)


def _wrapped(text: str, width: float, size: float) -> list[str] | None:
    """Return a bold title broken at its spaces into lines at most ``width`` inches wide (as few as may be),
    or None when it takes more than TITLE_LINES lines or a word alone is wider."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and text_width(joined, size, "bold") <= width * 72:
            lines[-1] = joined
        elif text_width(word, size, "bold") <= width * 72:
            lines.append(word)
        else:
            return None
    return lines if len(lines) <= TITLE_LINES else None


def panel_columns(titles: Sequence[str], label_room: float) -> tuple[int, list[str]]:
    """Return how many panels a row holds and their titles (plain text) wrapped to fit them.

    The most columns, at most MAX_PANELS, at which every title fits its panel in TITLE_LINES lines, then as
    few as keep that many rows (4 panels that fit 3 a row: 2 rows of 2, not 3 and 1). ``label_room``: inches
    the first panel's tick labels take. Long names ('Output: system-00-finetuned') would otherwise run into
    the next panel's title and past the figure's edge.
    """
    size = RC["axes.titlesize"]
    for columns in range(min(len(titles), MAX_PANELS), 0, -1):
        width = (WIDTH - label_room) / columns - PANEL_GAP
        lines = [_wrapped(plain(title), width, size) for title in titles]
        if columns == 1 or all(line is not None for line in lines):
            rows = -(-len(titles) // columns)
            return -(-len(titles) // rows), [
                "\n".join(line) if line else plain(title) for title, line in zip(titles, lines)
            ]
    return 1, []  # no titles


def panels_height(per_panel: float, rows: int) -> float:
    """Return the height (inches) of ``rows`` rows of panels, each ``per_panel`` tall with its own axes and
    legend room (0.6 in) counted once."""
    return per_panel + (rows - 1) * (per_panel - 0.6)


Draw = Callable[[ResultsView], "tuple[MplFigure, Figure] | None"]


def _draw_and_write(draw: Draw, view: ResultsView, out_dir: Path) -> Figure | None:
    """Draw one figure and write its SVG (and, when its labels need shaping, the PDF's copy)."""
    with _style():
        drawn = draw(view)
        if drawn is None:
            return None
        figure, model = drawn
        name = f"figures/{model.key}.svg"
        shaping = _fit_fonts(figure)
        (out_dir / name).write_bytes(_svg(figure))
        # the PDF draws its own copy (pdf.py): outlines where labels need shaping, fewer nodes everywhere
        (out_dir / "figures" / "print").mkdir(exist_ok=True)
        (out_dir / print_variant(name)).write_bytes(_print_svg(figure, text_as_paths=shaping))
        # the same figure, laid out once (the print copy fixed its layout), as PNG and PDF for slides and papers
        (out_dir / EXPORT_SCRATCH).mkdir(exist_ok=True)
        for suffix, data in ((".png", _png(figure)), (".pdf", _pdf(figure))):
            (out_dir / EXPORT_SCRATCH / f"{model.key}{suffix}").write_bytes(data)
        return replace(model, file=name)


_FORKED_JOB: tuple[tuple[Draw, ...], ResultsView, Path] | None = (
    None  # what forked workers draw from (inherited, not pickled)
)


def _forked_draw(position: int) -> Figure | None:
    draws, view, out_dir = _FORKED_JOB  # type: ignore[misc]
    return _draw_and_write(draws[position], view, out_dir)


def _figure_worker(parent: int) -> None:
    """Start a forked figure worker: it dies with the build, and takes the stop signals it was forked without."""
    die_with_parent(parent)
    stop_signals_released()


def write_figures(view: ResultsView, out_dir: Path, draws: Sequence[Draw]) -> dict[str, Figure]:
    """Draw every figure that applies, write ``figures/<key>.svg`` under ``out_dir``; return them by key, in order.

    ``draws``: the analyses' figure functions, in the report's order (``analyses.figure_makers()``).

    matplotlib holds the GIL, so where the platform forks, the figures are drawn in worker processes (one
    per core): each figure is drawn and written the same way wherever it runs, so the files are identical.
    """
    global _FORKED_JOB
    mpl()  # here, before the workers fork: the fonts are checked (and a missing one named) once
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    workers = min(len(draws), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        _FORKED_JOB = (tuple(draws), view, out_dir)
        try:
            with ExitStack() as stack:
                with stop_signals_held():  # a signal while forking is handled once the pool is in the stack
                    pool = stack.enter_context(
                        multiprocessing.get_context("fork").Pool(workers, _figure_worker, (os.getpid(),))
                    )
                models = pool.map(_forked_draw, range(len(draws)), chunksize=1)
        finally:
            _FORKED_JOB = None
    else:
        models = [_draw_and_write(draw, view, out_dir) for draw in draws]
    return {model.key: model for model in models if model is not None}


def _png(figure: MplFigure) -> bytes:
    """Return the figure as a 300 dpi PNG without the Software entry (no date is written): reproducible."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=EXPORT_DPI, metadata={"Software": None})
    return buffer.getvalue()


def _pdf(figure: MplFigure) -> bytes:
    """Return the figure as a PDF with TrueType (Type 42) fonts, as publishers ask, and no dates: reproducible."""
    buffer = io.BytesIO()
    with mpl().rc_context({"pdf.fonttype": 42}):
        figure.savefig(buffer, format="pdf", metadata={"CreationDate": None, "Creator": "refsens-report"})
    return buffer.getvalue()


def export_name(figure: Figure, suffix: str) -> str:
    """Return where a numbered figure's file for slides and papers lives: figures/figure-1-<key>.svg."""
    return f"{figure.export_stem}{suffix}"


def write_exports(out_dir: Path, numbered: Iterable[Figure]) -> list[Path]:
    """Name each numbered figure's SVG, PNG and PDF after its number (the workers drew them before numbering).

    The SVG is the site's own copy (text kept as text); a drawn figure without a number has none.
    """
    import shutil

    written = []
    scratch = out_dir / EXPORT_SCRATCH
    for figure in numbered:
        for suffix in EXPORTS:
            source = out_dir / figure.file if suffix == ".svg" else scratch / f"{figure.key}{suffix}"
            target = out_dir / export_name(figure, suffix)
            if suffix == ".svg":
                shutil.copyfile(source, target)
            else:
                source.replace(target)
            written.append(target)
    shutil.rmtree(scratch, ignore_errors=True)
    return written


def print_variant(name: str) -> str:
    """Return where the PDF's copy of a figure lives: figures/print/<key>.svg."""
    return name.replace("figures/", "figures/print/", 1)
