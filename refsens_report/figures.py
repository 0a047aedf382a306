"""The appendix figures, drawn with matplotlib from results.json rows and written as reproducible SVG.

SVG text stays text (``svg.fonttype = 'none'``): the browser and WeasyPrint typeset it with the page's fonts,
so Devanagari, Arabic and CJK labels shape correctly, the PDF stays small and fast to render, and every
label can be searched and copied.
"""

from __future__ import annotations

import io
import math
import multiprocessing
import os
import re
import unicodedata
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import matplotlib

matplotlib.use("Agg")  # no display, ever

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402
import numpy as np  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.text  # noqa: E402
import matplotlib.ticker  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from refsens_report import formatting  # noqa: E402
from refsens_report.lifetime import die_with_parent  # noqa: E402
from refsens_report.tables import POOLED, ResultsView  # noqa: E402

# Okabe & Ito's palette: distinguishable under the common colour-vision deficiencies and in greyscale print.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
INK, MUTED, GRID = "#222222", "#6b6b6b", "#d9d9d9"
# Latin first, then the scripts a multilingual benchmark's labels use; matplotlib measures with these and the
# browser / WeasyPrint render with the same list (the SVG keeps the family list).
FONT_FAMILIES = ("DejaVu Sans", "Noto Sans Devanagari", "Noto Sans Arabic", "Noto Sans CJK SC")
WIDTH = 6.6  # inches: about the text width of an A4 page with 2 cm margins (Letter is wider)
SVG_DOCTYPE = re.compile(rb"<!DOCTYPE svg[^>]*>\n?")
SVG_METADATA = re.compile(rb" *<metadata>.*?</metadata>\n?", re.S)

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


def plain(text: str) -> str:
    """Return team-written text that matplotlib prints literally ('$' would otherwise start mathtext)."""
    return text.replace("$", r"\$")


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(RC), warnings.catch_warnings():
        # matplotlib measures text with one font and warns on Devanagari/Arabic/CJK glyphs it lacks; the
        # SVG keeps the text and the family list, and the browser / WeasyPrint render it with Noto
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        yield


def _subplots(*grid: int, figsize: tuple[float, float], **options: Any) -> tuple[MplFigure, Any]:
    """Return a new figure and its axes without pyplot (no global figure registry, and a faster import)."""
    figure = MplFigure(figsize=figsize)
    return figure, figure.subplots(*grid, **options)


def _svg(figure: MplFigure, text_as_paths: bool = False) -> bytes:
    """Return the figure as SVG without date, creator URL or DTD reference, so it is reproducible and offline."""
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "path" if text_as_paths else "none"}):
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
    return b'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8",
                                                                                   xml_declaration=False)  # fmt: skip


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
    ("DEVANAGARI", "Noto Sans Devanagari"), ("BENGALI", "Noto Sans Bengali"), ("GURMUKHI", "Noto Sans Gurmukhi"),
    ("GUJARATI", "Noto Sans Gujarati"), ("TAMIL", "Noto Sans Tamil"), ("TELUGU", "Noto Sans Telugu"),
    ("KANNADA", "Noto Sans Kannada"), ("MALAYALAM", "Noto Sans Malayalam"), ("THAI", "Noto Sans Thai"),
    ("CJK", "Noto Sans CJK SC"), ("HIRAGANA", "Noto Sans CJK JP"), ("KATAKANA", "Noto Sans CJK JP"),
    ("HANGUL", "Noto Sans CJK KR"), ("ARABIC", "Noto Sans Arabic"), ("HEBREW", "Noto Sans Hebrew"),
)  # fmt: skip


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
    for text in figure.findobj(matplotlib.text.Text):
        content = text.get_text()
        font = _script_font(content)
        if font is not None:
            text.set_fontfamily([font, *FONT_FAMILIES])
        shaping |= _needs_shaping(content)
    return shaping


def _language_axis(axis: Axes, languages: list[str]) -> dict[str, float]:
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


def _interval_point(axis: Axes, y: float, row: Mapping[str, Any] | None, colour: str, marker: str,
                    filled: bool = True) -> None:  # fmt: skip
    """Draw one estimate with its interval as a horizontal error bar."""
    if row is None or row["estimate"] is None:
        return
    estimate = row["estimate"]
    if row["ci_low"] is not None and row["ci_high"] is not None:
        axis.plot([row["ci_low"], row["ci_high"]], [y, y], color=colour, linewidth=1.2, solid_capstyle="butt")
    axis.plot([estimate], [y], marker=marker, markersize=4.5, color=colour,
              markerfacecolor=colour if filled else "white", markeredgewidth=1.0, linestyle="none")  # fmt: skip


def _zero_line(axis: Axes) -> None:
    axis.axvline(0, color=MUTED, linewidth=0.8, zorder=0.5)


def _height(rows: int, per_row: float = 0.2) -> float:
    """Return a figure height (inches) that gives every language row the same room, plus axes and legend."""
    return max(2.0, 1.0 + per_row * rows)


def _row(view: ResultsView, analysis: str, statistic: str, **criteria: str) -> Mapping[str, Any] | None:
    found = view.rows.one(analysis, statistic, **criteria)
    return found[1] if found else None


def _legend_handles(labels: list[str], filled: bool = True) -> list[Line2D]:
    return [
        Line2D([], [], color=OKABE_ITO[i % len(OKABE_ITO)], marker=MARKERS[i % len(MARKERS)], markersize=4.5,
               markerfacecolor=OKABE_ITO[i % len(OKABE_ITO)] if filled else "white", label=plain(text))
        for i, text in enumerate(labels)
    ]  # fmt: skip


def _top_legend(figure: MplFigure, handles: list, title: str | None = None) -> None:
    """Put one legend above all panels, outside them, so it never covers a title or a point."""
    figure.legend(handles=handles, title=plain(title) if title else None, loc="outside upper center",
                  ncols=min(len(handles), 4), title_fontsize=7.5, alignment="center")  # fmt: skip


def _shared_xlabel(figure: MplFigure, text: str) -> None:
    """Label the x axis once under all panels (they share its units)."""
    figure.supxlabel(text, fontsize=RC["axes.labelsize"])


def _said(row: Mapping[str, Any] | None) -> str:
    """Return a statistic as printed, for alt text and captions."""
    return formatting.format_row(row).text if row else formatting.UNDEFINED


# --- the figures -----------------------------------------------------------------------------------


def swap_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of reference-swap deltas with intervals, per language and output, one panel per rule."""
    if not view.rows.has("swap", "delta"):
        return None
    first, second = view.reference_pairs()[0]
    if len(view.outputs) > MAX_PANELS:
        return _swap_rows(view, first, second)
    languages = view.languages
    figure, axes = _subplots(1, len(view.rules), figsize=(WIDTH, _height(len(languages), 0.14 + 0.1 * len(view.outputs))),
                                sharey=True, squeeze=False)  # fmt: skip
    offsets = np.linspace(-0.18, 0.18, len(view.outputs)) if len(view.outputs) > 1 else [0.0]
    for axis, rule in zip(axes[0], view.rules):
        positions = _language_axis(axis, languages)
        _zero_line(axis)
        for index, output in enumerate(view.outputs):
            for language in languages:
                row = _row(view, "swap", "delta", rule=rule, language=language, output=output,
                           reference=first, reference_2=second)  # fmt: skip
                _interval_point(axis, positions[language] - offsets[index], row,
                                OKABE_ITO[index % 8], MARKERS[index % 8])  # fmt: skip
        axis.set_title(rule.capitalize())
    _shared_xlabel(figure, plain(f"Δ = F1 vs {first} − F1 vs {second} (F1 points)"))
    _top_legend(figure, _legend_handles(view.outputs), "Output")
    pooled = "; ".join(
        f"{output}: {_said(_row(view, 'swap', 'delta', rule=view.main_rule, language=POOLED, output=output, reference=first, reference_2=second))}"
        for output in view.outputs
    )
    return figure, Figure(
        key="swap",
        title="Reference-swap deltas",
        caption=(
            f"Movement of each output's score when the reference {first} is exchanged for {second}, in F1 points, "
            f"with {view.confidence_label} (paired bootstrap), per language and pooled, on the audited subset "
            f"({formatting.count(view.subset_size('audited'))} items pooled). Points right of zero: the output "
            f"scores higher against {first}."
        ),
        alt=(
            f"Forest plot, one panel per matching rule, rows per language with pooled last. Each output's "
            f"swap delta is a point with its interval. Pooled {view.main_rule} deltas: {pooled}."
        ),
    )


def _swap_rows(view: ResultsView, first: str, second: str) -> tuple[MplFigure, Figure]:
    """Swap forest for many outputs: one row per output, pooled only, one panel per rule."""
    outputs = view.outputs
    figure, axes = _subplots(1, len(view.rules), figsize=(WIDTH, _height(len(outputs), 0.22)), sharey=True,
                             squeeze=False)  # fmt: skip
    positions = {output: -index for index, output in enumerate(outputs)}
    for axis, rule in zip(axes[0], view.rules):
        _zero_line(axis)
        for output in outputs:
            row = _row(view, "swap", "delta", rule=rule, language=POOLED, output=output, reference=first,
                       reference_2=second)  # fmt: skip
            _interval_point(axis, positions[output], row, OKABE_ITO[0], "o")
        axis.set_yticks(list(positions.values()), [plain(output) for output in outputs], fontsize=6.5)
        axis.set_ylim(-len(outputs) + 0.4, 0.6)
        axis.grid(axis="x")
        axis.set_axisbelow(True)
        axis.set_title(rule.capitalize())
    _shared_xlabel(figure, plain(f"Δ = F1 vs {first} − F1 vs {second} (F1 points, pooled)"))
    pooled = "; ".join(
        f"{output}: {_said(_row(view, 'swap', 'delta', rule=view.main_rule, language=POOLED, output=output, reference=first, reference_2=second))}"
        for output in outputs
    )
    return figure, Figure(
        key="swap",
        title="Reference-swap deltas",
        caption=(
            f"Movement of each output's score when the reference {first} is exchanged for {second}, in F1 points, "
            f"with {view.confidence_label} (paired bootstrap), pooled over languages, on the audited subset "
            f"({formatting.count(view.subset_size('audited'))} items). Points right of zero: the output scores "
            "higher against the first reference. With this many outputs the figure shows the primary pair of "
            "references, pooled; every language and pair of references is in the swap table."
        ),
        alt=(
            f"Forest plot, one panel per matching rule, one row per output. Pooled {view.main_rule} deltas: "
            f"{pooled}."
        ),
    )


def neutrality_dots(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Dot plot: how often each reference reproduces each annotator exactly, per language."""
    if not view.rows.has("neutrality", "rate"):
        return None
    languages = view.languages
    references = view.references
    figure, axes = _subplots(1, len(references), figsize=(WIDTH, _height(len(languages))), sharey=True,
                                sharex=True, squeeze=False)  # fmt: skip
    for axis, reference in zip(axes[0], references):
        positions = _language_axis(axis, languages)
        annotators = [name for name in view.annotators if name != reference]
        for language in languages:
            values = [_row(view, "neutrality", "rate", language=language, output=name, reference=reference)
                      for name in annotators]  # fmt: skip
            estimates = [row["estimate"] for row in values if row and row["estimate"] is not None]
            if len(estimates) > 1:
                axis.plot([min(estimates), max(estimates)], [positions[language]] * 2, color=GRID, linewidth=2.2,
                          zorder=1)  # fmt: skip
            for index, row in enumerate(values):
                colour = OKABE_ITO[view.annotators.index(annotators[index]) % 8]
                marker = MARKERS[view.annotators.index(annotators[index]) % 8]
                if row and row["estimate"] is not None:
                    axis.plot([row["estimate"]], [positions[language]], marker=marker, color=colour,
                              markersize=5, linestyle="none", zorder=2)  # fmt: skip
        axis.set_title(plain(f"Reference: {reference}"))
    _shared_xlabel(figure, "% of audited items reproduced exactly")
    _top_legend(figure, _legend_handles(view.annotators), "Annotator")
    skews = "; ".join(
        f"{reference}: skew {_said(_row(view, 'neutrality', 'skew', language=POOLED, reference=reference))}"
        for reference in references
    )
    return figure, Figure(
        key="neutrality",
        title="Neutrality of each reference",
        caption=(
            "Percentage of audited items on which each reference's strict span set equals each annotator's, per "
            "language and pooled. A neutral reference reproduces the annotators about equally often; a grey bar "
            "joins the rates of one reference."
        ),
        alt=f"Dot plot, one panel per reference, rows per language. Pooled skew between the annotators: {skews}.",
    )


def swing_forest(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Forest plot of the swing per language and rule; Holm-significant swings filled, others hollow."""
    if not view.rows.has("interaction", "swing") or not view.output_pairs():
        return None
    output, output_2 = view.output_pairs()[0]
    first, second = view.reference_pairs()[0]
    languages = view.languages
    figure, axes = _subplots(1, len(view.rules), figsize=(WIDTH, _height(len(languages))), sharey=True,
                                sharex=True, squeeze=False)  # fmt: skip
    significant = 0
    for axis, rule in zip(axes[0], view.rules):
        positions = _language_axis(axis, languages)
        _zero_line(axis)
        for language in languages:
            row = _row(view, "interaction", "swing", rule=rule, language=language, output=output, output_2=output_2,
                       reference=first, reference_2=second)  # fmt: skip
            holm = row["p_holm"] if row else None
            filled = holm is not None and holm < 0.05
            significant += filled
            _interval_point(axis, positions[language], row, OKABE_ITO[0], "o", filled=filled)
            if row and row["estimate"] is not None and filled:
                axis.annotate("*", (row["ci_high"] if row["ci_high"] is not None else row["estimate"],
                                    positions[language]), xytext=(3, -2.5), textcoords="offset points",
                              fontsize=9, color=INK, fontweight="bold")  # fmt: skip
        axis.set_title(rule.capitalize())
    handles = [
        Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, label="Holm p < 0.05 (*)"),
        Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, markerfacecolor="white", label="Holm p ≥ 0.05"),
    ]
    _shared_xlabel(figure, "Swing (F1 points)")
    _top_legend(figure, handles)
    pooled = _row(view, "interaction", "swing", rule=view.main_rule, language=POOLED, output=output,
                  output_2=output_2, reference=first, reference_2=second)  # fmt: skip
    return figure, Figure(
        key="swing",
        title="Swing of the comparison between references",
        caption=(
            f"Swing = (F1({output}) − F1({output_2}) under {first}) − (the same margin under {second}), in F1 "
            f"points with {view.confidence_label}, per language and pooled, on the audited subset. Filled points "
            "with an asterisk are significant after Holm correction over the whole swing family (p < 0.05)."
        ),
        alt=(
            f"Forest plot of swings, one panel per rule. Pooled {view.main_rule} swing {_said(pooled)}, Holm p "
            f"{formatting.p_value(pooled['p_holm'] if pooled else None)}; {significant} of the plotted swings "
            "are Holm-significant."
        ),
    )


def range_dumbbells(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Dumbbells: each output's score against every defensible gold, min to max, per language."""
    if not view.rows.has("range", "score"):
        return None
    rule = view.main_rule
    languages = view.languages
    golds = list(dict.fromkeys(view.annotators + view.references))
    if len(view.outputs) > MAX_PANELS:
        return _range_rows(view, golds)
    figure, axes = _subplots(1, len(view.outputs), figsize=(WIDTH, _height(len(languages))), sharey=True,
                                sharex=True, squeeze=False)  # fmt: skip
    for axis, output in zip(axes[0], view.outputs):
        positions = _language_axis(axis, languages)
        for language in languages:
            scores = {gold: _row(view, "range", "score", rule=rule, language=language, output=output, reference=gold)
                      for gold in golds if gold != output}  # fmt: skip
            values = [row["estimate"] for row in scores.values() if row and row["estimate"] is not None]
            if values:
                axis.plot([min(values), max(values)], [positions[language]] * 2, color=GRID, linewidth=2.5, zorder=1)
            for gold, row in scores.items():
                if row and row["estimate"] is not None:
                    index = golds.index(gold)
                    axis.plot([row["estimate"]], [positions[language]], marker=MARKERS[index % 8],
                              color=OKABE_ITO[index % 8], markersize=5, linestyle="none", zorder=2)  # fmt: skip
        axis.set_title(plain(f"Output: {output}"))
    _shared_xlabel(figure, f"F1 ({rule}, F1 points)")
    _top_legend(figure, _legend_handles(golds), "Scored against")
    ranges = "; ".join(
        f"{output}: {_said(_row(view, 'range', 'range', rule=rule, language=POOLED, output=output))}"
        for output in view.outputs
    )
    return figure, Figure(
        key="range",
        title="Score range from the choice of gold",
        caption=(
            f"Each output's {rule} F1 (F1 points) against every other defensible gold (annotators and "
            "references), per language and pooled, on the audited subset; the grey bar spans the range."
        ),
        alt=f"Dumbbell plot, one panel per output, rows per language. Pooled {rule} ranges: {ranges}.",
    )


MAX_PANELS = 4  # side-by-side panels at the text width; beyond this a figure lays its panels out as rows


def _range_rows(view: ResultsView, golds: list[str]) -> tuple[MplFigure, Figure]:
    """Range dumbbells for many outputs: one row per output, pooled only (per language in the range table)."""
    rule = view.main_rule
    outputs = view.outputs
    figure, axis = _subplots(figsize=(WIDTH, _height(len(outputs), 0.22)))
    positions = {output: -index for index, output in enumerate(outputs)}
    for output in outputs:
        scores = {gold: _row(view, "range", "score", rule=rule, language=POOLED, output=output, reference=gold)
                  for gold in golds if gold != output}  # fmt: skip
        values = [row["estimate"] for row in scores.values() if row and row["estimate"] is not None]
        if values:
            axis.plot([min(values), max(values)], [positions[output]] * 2, color=GRID, linewidth=2.5, zorder=1)
        for gold, row in scores.items():
            if row and row["estimate"] is not None:
                index = golds.index(gold)
                axis.plot([row["estimate"]], [positions[output]], marker=MARKERS[index % 8],
                          color=OKABE_ITO[index % 8], markersize=5, linestyle="none", zorder=2)  # fmt: skip
    axis.set_yticks(list(positions.values()), [plain(output) for output in outputs], fontsize=6.5)
    axis.set_ylim(-len(outputs) + 0.4, 0.6)
    axis.grid(axis="x")
    axis.set_axisbelow(True)
    axis.set_xlabel(f"F1 ({rule}, pooled, F1 points)")
    _top_legend(figure, _legend_handles(golds), "Scored against")
    ranges = "; ".join(
        f"{output}: {_said(_row(view, 'range', 'range', rule=rule, language=POOLED, output=output))}"
        for output in outputs
    )
    return figure, Figure(
        key="range",
        title="Score range from the choice of gold",
        caption=(
            f"Each output's pooled {rule} F1 (F1 points) against every other defensible gold (annotators and "
            "references), on the audited subset; the grey bar spans the range. With this many outputs the figure "
            "shows the pooled scores only; every language's scores are in the range table."
        ),
        alt=f"Dumbbell plot, one row per output, pooled. Pooled {rule} ranges: {ranges}.",
    )


def band_margins(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Observed margins under the primary reference against the shaded ± band."""
    rule = view.main_rule
    band_row = _row(view, "band", "band", rule=rule, language=POOLED, output="")
    if band_row is None or band_row["estimate"] is None or not view.output_pairs():
        return None
    band = band_row["estimate"]
    output, output_2 = view.output_pairs()[0]
    languages = view.languages
    figure, axis = _subplots(figsize=(WIDTH, _height(len(languages))))
    positions = _language_axis(axis, languages)
    axis.axvspan(-band, band, color="#E69F00", alpha=0.18, linewidth=0, zorder=0)
    _zero_line(axis)
    exceeding = 0
    for language in languages:
        row = _row(view, "interaction", "margin", rule=rule, language=language, output=output, output_2=output_2,
                   reference=view.primary)  # fmt: skip
        outside = bool(row and row["estimate"] is not None and abs(row["estimate"]) > band)
        exceeding += outside
        _interval_point(axis, positions[language], row, OKABE_ITO[0], "o", filled=outside)
    axis.set_xlabel(plain(f"Margin F1({output}) − F1({output_2}) under {view.primary} (F1 points)"))
    _top_legend(
        figure,
        [
            matplotlib.patches.Patch(color="#E69F00", alpha=0.35, label=f"band ±{formatting.number(band, 2)}"),
            Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, label="margin beyond the band"),
            Line2D([], [], color=OKABE_ITO[0], marker="o", markersize=4.5, markerfacecolor="white",
                   label="margin within the band"),
        ],
    )
    return figure, Figure(
        key="band",
        title="Observed margins against the band",
        caption=(
            f"Margin between {output} and {output_2} under the primary reference ({view.primary}), {rule} rule, "
            f"with {view.confidence_label}, per language and pooled, against the shaded {rule} "
            f"reference-sensitivity band (±{formatting.number(band, 2)} F1 points). A margin inside the band could "
            "be produced by the choice of reference alone."
        ),
        alt=(
            f"Margins per language as points with intervals over a shaded band of ±{formatting.number(band, 2)} "
            f"F1 points; {exceeding} of {len(languages)} margins lie beyond the band."
        ),
    )


def duplicates_multiples(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Small multiples: the swing per language under each duplicate policy."""
    policies = [policy for policy in ("keep_first", "keep_last", "keep_all", "drop_all")
                if view.rows.select("duplicates", "swing", policy=policy)]  # fmt: skip
    if not policies or not view.output_pairs():
        return None
    rule = view.main_rule
    output, output_2 = view.output_pairs()[0]
    first, second = view.reference_pairs()[0]
    languages = view.languages
    figure, axes = _subplots(1, len(policies), figsize=(WIDTH, _height(len(languages))), sharey=True,
                                sharex=True, squeeze=False)  # fmt: skip
    for axis, policy in zip(axes[0], policies):
        positions = _language_axis(axis, languages)
        _zero_line(axis)
        for language in languages:
            row = _row(view, "duplicates", "swing", rule=rule, language=language, output=output, output_2=output_2,
                       reference=first, reference_2=second, policy=policy)  # fmt: skip
            _interval_point(axis, positions[language], row, OKABE_ITO[2], "o")
        axis.set_title(policy)
    _shared_xlabel(figure, f"Swing ({rule}, F1 points)")
    pooled = "; ".join(
        f"{policy}: {_said(_row(view, 'duplicates', 'swing', rule=rule, language=POOLED, output=output, output_2=output_2, reference=first, reference_2=second, policy=policy))}"
        for policy in policies
    )
    return figure, Figure(
        key="duplicates",
        title="Duplicate-policy robustness",
        caption=(
            f"Swing ({rule} rule, F1 points, {view.confidence_label}) per language under each duplicate policy, "
            "without excluding defective duplicate groups. A swing that appears under one policy only is "
            "produced by the duplicates, not by the references."
        ),
        alt=f"Small multiples, one panel per duplicate policy. Pooled swings: {pooled}.",
    )


def type_heatmap(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Heatmap of A's versus B's types on boundary-matched spans."""
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
    figure, axis = _subplots(figsize=(side + 1.6, side))
    shown = np.where(matrix > 0, matrix, np.nan)
    top = max(1.0, float(np.nanmax(shown))) if np.isfinite(shown).any() else 1.0
    image = axis.imshow(shown, cmap="cividis", norm=LogNorm(vmin=1, vmax=max(top, 10)), aspect="auto")
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


def _ranked_outputs(view: ResultsView) -> list[str]:
    """Return the outputs the leaderboard ranks, in config order."""
    ranked = {row["output"] for _, row in view.rows.select("leaderboard", "rank")}
    return [output for output in view.outputs if output in ranked]


def _rank_text(rank: float) -> str:
    """Return a rank as printed at a line end: whole ranks without decimals, tied ranks with one."""
    return formatting.number(rank, 0 if float(rank).is_integer() else 1)


def leaderboard_bump(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Bump chart: each ranked output's pooled rank (main rule) under each reference, in config order."""
    outputs = _ranked_outputs(view)
    if len(outputs) < 3 or len(view.references) < 2:
        return None
    rule, references = view.main_rule, view.references
    ranks = {
        output: [_row(view, "leaderboard", "rank", rule=rule, language=POOLED, output=output, reference=reference)
                 for reference in references]
        for output in outputs
    }  # fmt: skip
    # the labels at the line ends sit outside the axes: fixed margins instead of the layout engine
    height = max(2.4, 0.8 + 0.2 * len(outputs))
    figure = MplFigure(figsize=(WIDTH, height), layout="none")
    figure.subplots_adjust(left=0.3, right=0.7, top=1 - 0.35 / height, bottom=0.35 / height)
    axis = figure.subplots()
    xs = list(range(len(references)))
    for index, output in enumerate(outputs):
        colour, marker = OKABE_ITO[index % 8], MARKERS[(index // 8 + index) % 8]
        points = [(x, row["estimate"]) for x, row in zip(xs, ranks[output]) if row and row["estimate"] is not None]
        if not points:
            continue
        axis.plot([x for x, _ in points], [y for _, y in points], color=colour, marker=marker, markersize=4,
                  linewidth=1.2, linestyle="-" if index < 8 else "--")  # fmt: skip
        first_x, first_y = points[0]
        last_x, last_y = points[-1]
        ink = colour if colour != "#F0E442" else INK  # the yellow is too light for text
        axis.annotate(f"{plain(output)}  {_rank_text(first_y)}", (first_x, first_y), xytext=(-6, 0),
                      textcoords="offset points", ha="right", va="center", fontsize=6.5, color=ink)  # fmt: skip
        axis.annotate(f"{_rank_text(last_y)}  {plain(output)}", (last_x, last_y), xytext=(6, 0),
                      textcoords="offset points", ha="left", va="center", fontsize=6.5, color=ink)  # fmt: skip
    axis.set_xticks(xs, [plain(reference) for reference in references])
    axis.set_xlim(-0.08, len(references) - 0.92)
    axis.set_ylim(len(outputs) + 0.5, 0.5)  # rank 1 on top
    axis.set_yticks([])
    axis.set_title(f"Rank ({rule}, pooled; 1 = highest F1)", loc="center", fontweight="normal", color=MUTED)
    axis.grid(axis="x")
    axis.set_axisbelow(True)
    for spine in ("left", "bottom"):
        axis.spines[spine].set_visible(False)
    axis.tick_params(axis="x", length=0)
    moved = sum(
        1 for output in outputs
        if len({row["estimate"] for row in ranks[output] if row and row["estimate"] is not None}) > 1
    )  # fmt: skip
    first = "; ".join(f"{output} {_said(ranks[output][0])}" for output in outputs[:3])
    return figure, Figure(
        key="leaderboard-bump",
        title="Ranks under each reference",
        caption=(
            f"Rank of each ranked output (1 = highest {rule} micro-F1, pooled over languages, audited subset) under "
            f"each reference, references in config order with the primary ({view.primary}) first; ties share "
            "their average rank. A crossing line is a pair of outputs that changes order. Rank intervals are in "
            "the leaderboard table."
        ),
        alt=(
            f"Bump chart of {len(outputs)} outputs across {len(references)} references; {moved} of "
            f"{len(outputs)} outputs change rank at least once. Ranks under {view.primary} with intervals, first "
            f"outputs: {first}."
        ),
    )


def _alternative_reference(view: ResultsView) -> tuple[str, Mapping[str, Any] | None]:
    """Return the reference whose ranking differs most from the primary's (most pooled flips) and its row."""
    best: tuple[str, Mapping[str, Any] | None] = (view.references[1], None)
    for reference in view.references[1:]:
        row = _row(view, "leaderboard", "flips", rule=view.main_rule, language=POOLED, reference=view.primary,
                   reference_2=reference)  # fmt: skip
        if row is not None and row["estimate"] is not None and (
            best[1] is None or best[1]["estimate"] is None or row["estimate"] > best[1]["estimate"]
        ):
            best = (reference, row)
    return best


def swing_heatmap(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Heatmap of pooled swings between the primary and the most-disagreeing reference, per pair of outputs."""
    outputs = _ranked_outputs(view)
    if len(outputs) < 3 or len(view.references) < 2 or not view.rows.has("interaction", "swing"):
        return None
    rule, primary = view.main_rule, view.primary
    alternative, flips_row = _alternative_reference(view)

    def rank(output: str) -> float:
        row = _row(view, "leaderboard", "rank", rule=rule, language=POOLED, output=output, reference=primary)
        return row["estimate"] if row and row["estimate"] is not None else math.inf

    ordered = sorted(outputs, key=lambda output: (rank(output), outputs.index(output)))
    size = len(ordered)
    matrix = np.full((size, size), np.nan)
    significant: list[tuple[int, int]] = []
    flipped: list[tuple[int, int]] = []
    for i, j in ((i, j) for i in range(size) for j in range(i + 1, size)):
        first, second = ordered[i], ordered[j]
        sign = 1.0
        if outputs.index(first) > outputs.index(second):  # rows are stored for pairs in config order
            first, second, sign = second, first, -1.0
        where = {"rule": rule, "language": POOLED, "output": first, "output_2": second, "reference": primary,
                 "reference_2": alternative}  # fmt: skip
        row = _row(view, "interaction", "swing", **where)
        if row is None or row["estimate"] is None:
            continue
        matrix[i, j] = sign * row["estimate"]
        if row["p_holm"] is not None and row["p_holm"] < 1 - view.data.get("confidence", 0.95):
            significant.append((i, j))
        if _row(view, "leaderboard", "flip", **where) is not None:
            flipped.append((i, j))
    if not np.isfinite(matrix).any():
        return None
    top = max(0.01, float(np.nanmax(np.abs(matrix))))
    matrix = matrix[:-1, 1:]  # the diagonal and below are empty: drop the empty last row and first column
    significant = [(i, j - 1) for i, j in significant]
    flipped = [(i, j - 1) for i, j in flipped]
    cell = min(0.34, 4.2 / size)
    figure, axis = _subplots(figsize=(WIDTH, min(8.5, 1.9 + cell * size)))
    image = axis.imshow(matrix, cmap="PuOr_r", vmin=-top, vmax=top, aspect="equal")
    if size <= 16:
        for (i, j), value in np.ndenumerate(matrix):
            if np.isfinite(value):
                axis.text(j, i, formatting.number(value, 1, signed=True), ha="center", va="center", fontsize=5.2,
                          color="white" if abs(value) > 0.6 * top else INK,
                          fontweight="bold" if (i, j) in significant else "normal")  # fmt: skip
    for i, j in flipped:
        axis.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=INK,
                                                    linewidth=1.3))  # fmt: skip
    for i, j in significant:
        axis.plot([j + 0.32], [i - 0.32], marker="o", markersize=2.2, color=INK, linestyle="none")
    labels = [plain(output) for output in ordered]
    axis.set_xticks(range(size - 1), labels[1:], rotation=45, ha="right", rotation_mode="anchor", fontsize=6.5)
    axis.set_yticks(range(size - 1), labels[:-1], fontsize=6.5)
    axis.set_xlim(-0.5, size - 1.5)
    axis.set_ylim(size - 1.5, -0.5)
    for spine in axis.spines.values():
        spine.set_visible(False)
    axis.tick_params(length=0)
    colourbar = figure.colorbar(image, ax=axis, shrink=0.7)
    colourbar.set_label(plain(f"Swing {primary} → {alternative} (F1 points)"))
    colourbar.outline.set_visible(False)
    figure.legend(
        handles=[
            matplotlib.patches.Patch(facecolor="white", edgecolor=INK, linewidth=1.3, label="order flips"),
            Line2D([], [], color=INK, marker="o", markersize=3, linestyle="none", label="Holm p < 0.05"),
        ],
        loc="outside lower center", ncols=2,
    )  # fmt: skip
    flips_said = formatting.number(flips_row["estimate"], 0) if flips_row and flips_row["estimate"] is not None else str(len(flipped))
    return figure, Figure(
        key="leaderboard-swings",
        title="Pairwise swings between references",
        caption=(
            f"For each pair of ranked outputs (row output minus column output, both ordered by rank under "
            f"{primary}), the pooled {rule} swing: the margin under {primary} minus the margin under "
            f"{alternative}, in F1 points, on the audited subset. {alternative} is the alternative reference with "
            f"the most order flips against {primary}. Framed cells: pairs whose order flips; a dot: swing "
            "significant after Holm correction over the whole swing family. Every swing, for every pair of "
            "references, is in the interaction table."
        ),
        alt=(
            f"Heatmap of {size * (size - 1) // 2} pairwise swings between {primary} and {alternative}, "
            f"{len(flipped)} framed as order flips ({flips_said} flips pooled), {len(significant)} Holm-significant; "
            f"the largest absolute swing is {formatting.number(top, 2)} F1 points."
        ),
    )


FIGURES: tuple[Callable[[ResultsView], tuple[MplFigure, Figure] | None], ...] = (
    neutrality_dots,
    swap_forest,
    range_dumbbells,
    swing_forest,
    band_margins,
    duplicates_multiples,
    type_heatmap,
    leaderboard_bump,
    swing_heatmap,
)


def _draw_and_write(draw: Callable[[ResultsView], tuple[MplFigure, Figure] | None], view: ResultsView,
                    out_dir: Path) -> Figure | None:  # fmt: skip
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
        return replace(model, file=name)


_FORKED_JOB: tuple[ResultsView, Path] | None = None  # what forked workers draw from (inherited, not pickled)


def _forked_draw(position: int) -> Figure | None:
    view, out_dir = _FORKED_JOB  # type: ignore[misc]
    return _draw_and_write(FIGURES[position], view, out_dir)


def write_figures(view: ResultsView, out_dir: Path) -> dict[str, Figure]:
    """Draw every figure that applies, write ``figures/<key>.svg`` under ``out_dir``; return them by key.

    matplotlib holds the GIL, so where the platform forks, the figures are drawn in worker processes (one
    per core): each figure is drawn and written the same way wherever it runs, so the files are identical.
    """
    global _FORKED_JOB
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    workers = min(len(FIGURES), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        _FORKED_JOB = (view, out_dir)
        try:
            with multiprocessing.get_context("fork").Pool(workers, die_with_parent, (os.getpid(),)) as pool:
                models = pool.map(_forked_draw, range(len(FIGURES)), chunksize=1)
        finally:
            _FORKED_JOB = None
    else:
        models = [_draw_and_write(draw, view, out_dir) for draw in FIGURES]
    return {model.key: model for model in models if model is not None}


def print_variant(name: str) -> str:
    """Return where the PDF's copy of a figure lives: figures/print/<key>.svg."""
    return name.replace("figures/", "figures/print/", 1)
