"""The layout check on a PDF itself: no glyph drawn over another, none outside the page, cells' text apart.

WeasyPrint lays a page out differently from a browser, so what the browser test measures says little about
the PDF. This reads every glyph's box back from the PDF (pdfplumber: MIT, pure Python over pdfminer.six, a
box per glyph including the space glyphs WeasyPrint draws, and it follows the form XObjects pdf.py composes
the pages from) and checks each glyph against its neighbours on the same line:

- **overlap**: a glyph starts inside the one before it by more than kerning does (OVERLAP_EM of the type
  size; PUNCTUATION_EM for a kerned full stop or comma);
- **too close**: two glyphs with no space glyph between them are further apart than one word's letters
  (JOIN_EM) but closer than MIN_GAP_PT: two texts (table cells, labels) that nearly run together;
- **outside**: a glyph outside the page, or outside its left and right margins (``margin``, in pt).

A combining mark (a hat over k, a Devanagari vowel sign, an Arabic mark: categories Mn, Mc and Me) is
part of the glyph before it, not a neighbour: it is drawn over or against its base by design.

Glyphs set at an angle (a figure's rotated labels) are checked along their own direction. The PDF keeps no
table cells, and WeasyPrint draws no space glyph at an inline box's edge or in an SVG label, so a gap as
wide as a word space (WORD_SPACE_EM) passes: "too close" catches texts nearer than that. A developer runs it
on any PDF::

    python tests/pdf_layout.py file.pdf [--margin PT]

which prints every problem with its page, text and position, then the figures, and exits 1 if any.
"""

from __future__ import annotations

import argparse
import math
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

MIN_GAP_PT = 3.0  # the least space between two texts on one line that are not one run of words
JOIN_EM = 0.1  # letters of one word are at most this far apart (letter-spacing .08em is still one word)
OVERLAP_EM = 0.15  # kerning pulls a letter this far into the one before it at most (AV, Te)
PUNCTUATION_EM = 0.3  # a kerned full stop or comma may reach further back (T., r,)
WORD_SPACE_EM = 0.2  # a gap this wide reads as a word space: WeasyPrint draws none at an inline box's edge
# or between the words of an SVG label, so the PDF cannot tell it from two texts; narrower ones it can
SAME_LINE = 0.5  # two glyphs are on one line when they share this share of the smaller one's height
EDGE_PT = 0.5  # rounding: a glyph may reach this far past an edge


@dataclass(frozen=True)
class Glyph:
    """A glyph's box in its line's own frame: x along the text, top and bottom across it (down is +)."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    at: tuple[float, float]  # where it is on the page: pt from the left and top edges


@dataclass(frozen=True)
class Problem:
    page: int  # from 1
    kind: str  # overlap, too close, outside
    text: str  # the glyphs around it, as read
    x: float  # pt from the page's left edge
    y: float  # pt from the page's top edge
    detail: str

    def __str__(self) -> str:
        return f"page {self.page} at ({self.x:.1f}, {self.y:.1f}) pt: {self.kind}: {self.text!r} ({self.detail})"


@dataclass
class Report:
    path: Path
    pages: int = 0
    glyphs: int = 0  # glyphs checked (spaces included)
    problems: list[Problem] = field(default_factory=list)

    def figures(self) -> str:
        return f"{self.path.name}: {self.pages} pages, {self.glyphs:,} glyphs checked, {len(self.problems)} problems"


def _punctuation(text: str) -> bool:
    return bool(text) and all(unicodedata.category(character).startswith("P") for character in text)


def _mark(text: str) -> bool:
    """Return whether a glyph is a combining mark only (a hat over k, a Devanagari vowel sign, an Arabic
    harakat: unicodedata.combining, categories Mn, Mc, Me): part of the glyph before it, drawn over or
    against its base by design, so never a collision."""
    marks = ("Mn", "Mc", "Me")
    return bool(text) and all(
        unicodedata.combining(character) or unicodedata.category(character) in marks for character in text
    )


def _alphanumeric(text: str) -> bool:
    return bool(text) and all(unicodedata.category(character)[0] in "LN" for character in text)


def _glyph(char: dict) -> tuple[int, Glyph]:
    """Return a glyph's direction (degrees) and its box in that direction's frame.

    Upright text keeps pdfplumber's box. Text set at an angle (a figure's rotated tick labels) is turned
    back: x from its origin along its advance, top and bottom from its baseline across it.
    """
    a, b, _, _, e, f = char["matrix"]
    scale = math.hypot(a, b) or 1.0
    angle = round(math.degrees(math.atan2(b, a))) % 360
    at = (char["x0"], char["top"])
    if angle == 0:
        return 0, Glyph(char["text"], char["x0"], char["x1"], char["top"], char["bottom"], char["size"], at)
    cos, sin = a / scale, b / scale
    along, across = e * cos + f * sin, f * cos - e * sin  # PDF space is y-up: across grows upwards
    size = char["size"]
    return angle, Glyph(
        char["text"], along, along + char["adv"] * scale, -across - 0.8 * size, -across + 0.2 * size, size, at
    )


def _context(line: list[Glyph], index: int, around: int = 12) -> str:
    start = max(index - around, 0)
    return "".join(glyph.text for glyph in line[start : index + around + 1])


def _lines(glyphs: list[Glyph]) -> list[list[Glyph]]:
    """Return the glyphs as lines: those sharing SAME_LINE of their height, each sorted left to right.

    A glyph joins the line whose last-added glyph it shares most height with; lines are found top to bottom.
    """
    lines: list[list[Glyph]] = []
    spans: list[tuple[float, float]] = []  # each line's vertical extent
    for glyph in sorted(glyphs, key=lambda glyph: (glyph.top, glyph.x0)):
        height = glyph.bottom - glyph.top
        best, best_share = None, SAME_LINE
        for index in range(len(lines) - 1, -1, -1):
            top, bottom = spans[index]
            if bottom < glyph.top - 50:  # far above: no later line is nearer
                break
            shared = min(bottom, glyph.bottom) - max(top, glyph.top)
            share = shared / max(min(height, bottom - top), 1e-6)
            if share >= best_share:
                best, best_share = index, share
        if best is None:
            lines.append([glyph])
            spans.append((glyph.top, glyph.bottom))
        else:
            lines[best].append(glyph)
    return [sorted(line, key=lambda glyph: (glyph.x0, glyph.x1)) for line in lines]


def check_line(line: list[Glyph], page: int) -> list[Problem]:
    """Return the overlaps and near-misses between neighbours on one line (sorted left to right).

    Each glyph is checked against the one reaching furthest right before it; a space glyph there means a
    word space, checked no further. One problem is kept for a run of them (one collision, many glyphs).
    """
    problems: list[Problem] = []
    before: Glyph | None = None
    for index, glyph in enumerate(line):
        if _mark(glyph.text):
            continue  # a combining mark belongs to its base glyph: checked with it, never against it
        redrawn = before is not None and glyph.text == before.text and abs(glyph.x0 - before.x0) < 0.05 * glyph.size
        if before is not None and glyph.text.strip() and before.text.strip() and not redrawn:
            # (a glyph drawn twice in one place is one glyph: a label's white halo under its ink)
            gap = glyph.x0 - before.x1
            em = min(glyph.size, before.size)
            kerned = PUNCTUATION_EM if _punctuation(glyph.text) or _punctuation(before.text) else OVERLAP_EM
            found = None
            if -gap > kerned * em:
                found = ("overlap", f"{before.text!r} and {glyph.text!r} overlap by {-gap:.1f} pt")
            elif JOIN_EM * em < gap < min(MIN_GAP_PT, WORD_SPACE_EM * em) and _alphanumeric(before.text + glyph.text):
                found = ("too close", f"{gap:.1f} pt between {before.text!r} and {glyph.text!r}, no space between")
            if found and not (problems and problems[-1].kind == found[0] and glyph.x0 - problems[-1].x < 4 * em):
                problems.append(Problem(page, found[0], _context(line, index), *glyph.at, found[1]))
        if before is None or glyph.x1 >= before.x1 or not glyph.text.strip():
            before = glyph
    return problems


def check(path: Path, margin: float = 0.0) -> Report:
    """Check every glyph on every page of the PDF at ``path``; ``margin``: the left and right margins, in pt."""
    import pdfplumber

    report = Report(Path(path))
    with pdfplumber.open(path) as pdf:
        report.pages = len(pdf.pages)
        for number, page in enumerate(pdf.pages, start=1):
            # page.chars is in page space (top from the page's top edge), form XObjects included
            width, height = float(page.width), float(page.height)
            directions: dict[int, list[Glyph]] = {}
            for char in page.chars:
                report.glyphs += 1
                angle, glyph = _glyph(char)
                directions.setdefault(angle, []).append(glyph)
                left, right = margin - EDGE_PT, width - margin + EDGE_PT
                x0, x1, top, bottom = char["x0"], char["x1"], char["top"], char["bottom"]
                if glyph.text.strip() and (x0 < left or x1 > right or top < -EDGE_PT or bottom > height + EDGE_PT):
                    where = "the page" if margin == 0 else f"the page's {margin:g} pt side margins"
                    report.problems.append(
                        Problem(
                            number,
                            "outside",
                            glyph.text,
                            x0,
                            top,
                            f"x {x0:.1f} to {x1:.1f} of {width:.0f} pt: outside {where}",
                        )
                    )
            for glyphs in directions.values():
                for line in _lines(glyphs):
                    report.problems += check_line(line, number)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a PDF's glyphs: overlaps, near-misses, outside the page.")
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--margin", type=float, default=0.0, help="left and right margins in pt (default: 0)")
    arguments = parser.parse_args(argv)
    if not arguments.pdf.is_file():
        print(f"{arguments.pdf}: no such file", file=sys.stderr)
        return 2
    report = check(arguments.pdf, arguments.margin)
    for problem in report.problems:
        print(problem)
    print(report.figures())
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
