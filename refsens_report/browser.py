"""Pages an analysis adds to a version beside the appendix (its listings), and the listing browser's data.

An analysis that lists items one by one declares ``Analysis.pages(view, site)``: the files it adds to the
version folder, each a ``Page`` (a template and its context, or a text such as a browser's data script). The
site writes whatever they return; it names no analysis. Nothing here is specific to one analysis:

- ``Page``, ``SiteContext`` and ``Download``: what a page is, what it is given, a file it links to;
- ``ListingPage``: the context the listing pages' shared head and foot read;
- ``page_files``: a listing's files (JSON Lines and CSV) as its page links them, each with its SHA-256;
- ``read_lines``: a listing file (JSON Lines) read line by line, so a page reads no more of it than it shows
  (a listing may run to hundreds of megabytes; the pages need its first lines);
- ``BrowserListing`` and ``browser_script``: a listing as ``templates/site.js``'s browser reads it, a script
  beside the page (a page opened from file:// may load a script but not fetch() a file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from refsens_report.results import sha256_file

BROWSER_LINES = 100_000  # lines a page's browser holds (the file's first: most impact); the files hold all


@dataclass(frozen=True)
class Download:
    """A file beside the appendix: link, what it is, and its SHA-256 (empty for files hashed later)."""

    href: str
    description: str
    sha256: str = ""


@dataclass(frozen=True)
class SiteContext:
    """What an analysis's pages are given besides the results: the version folder (results.json and the files
    the audit wrote beside it) and the build's timestamp (W3C, UTC)."""

    folder: Path
    results: Mapping[str, Any]
    build_timestamp: str


@dataclass(frozen=True)
class Page:
    """A file an analysis adds to the version folder: ``template`` rendered with ``context`` (a dataclass, as
    the appendix's pages), or, without a template, ``text`` as it is."""

    name: str
    template: str = ""
    context: Any = None
    text: str = ""


@dataclass(frozen=True)
class ListingPage:
    """The context every listing page's head and foot read (templates/listing-head.html, listing-foot.html); a
    listing page's own context adds its lines.

    dataset_name, version, tool_version, build_date: as on the appendix.
    title: the page's heading.
    question: what the page answers, and how its lines are ordered.
    text_note: what the page shows of the record's text: the items' text with the spans highlighted, or why it
        shows none (``[report] show_text = false``, or a record without text).
    files: the listing's files beside the page (JSON Lines and CSV) with their SHA-256 (``page_files``).
    limit: the most lines a part of the page shows without JavaScript, as printed.
    appendix_anchor: the appendix section this page belongs to.
    listing: the listing's name (its files' stem), which the page's browser shows.
    data_script: the script file beside the page holding the listing for the browser (``BrowserListing``).
    """

    dataset_name: str
    version: str
    tool_version: str
    build_date: str
    title: str
    question: str
    text_note: str
    files: tuple[Download, ...]
    limit: str
    appendix_anchor: str
    listing: str
    data_script: str


def page_files(folder: Path, stem: str, each: str) -> tuple[Download, ...]:
    """Return the downloads a listing's page links: ``stem``.jsonl and ``stem``.csv, those ``folder`` holds,
    each with its SHA-256; ``each`` names what a line of the files is ("line", "candidate")."""
    return tuple(
        Download(name, description, sha256_file(folder / name))
        for name, description in (
            (f"{stem}.jsonl", f"Every {each}, exact (JSON Lines)"),
            (f"{stem}.csv", f"Every {each}, for spreadsheets"),
        )
        if (folder / name).is_file()
    )


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Yield a JSON Lines file's objects in order, one line read at a time (close the generator, or leave the
    loop, to stop reading). Lines end at newlines only: a text may hold U+2028, U+2029 or U+0085 raw."""
    with open(path, "rb") as handle:  # binary: lines split at b"\n" alone
        for raw in handle:
            if raw != b"\n":
                yield orjson.loads(raw)


def page_lines(
    path: Path,
    total: int,
    group_of: Callable[[dict[str, Any]], int],
    wanted: Sequence[int],
    shown: list[list[dict[str, Any]]],
) -> Iterator[dict[str, Any]]:
    """Yield the first ``BROWSER_LINES`` lines of a listing file (of ``total``), for its browser, one read at a
    time; meanwhile keep in ``shown`` each group's first lines (``group_of`` a line; the static page's, up to
    ``wanted`` of each), reading on past the browser's lines only for them, and stop when both are read. Only
    the static page's lines are kept: a consumer that builds its data line by line holds no file in memory."""
    cap = BROWSER_LINES
    with closing(read_lines(path)) as read:
        for number, line in enumerate(read, start=1):
            mine = shown[group_of(line)]
            if len(mine) < wanted[group_of(line)]:
                mine.append(line)
            if number <= cap:
                yield line
            if number >= min(cap, total) and all(len(lines) >= want for lines, want in zip(shown, wanted)):
                return  # the rest of the file is neither on the page nor in the browser


@dataclass(frozen=True)
class BrowserColumn:
    """A column of a listing in the browser: its key, header, kind ("number", "text", or "list": several labels)
    and filter ("" none, "choice": a select of the values present, any of a list's; "min": at least a number)."""

    key: str
    label: str
    kind: str
    filter: str = ""


@dataclass(frozen=True)
class BrowserListing:
    """A listing as the browser reads it: generic, so a new listing plugs in with its data, not new script.

    rows: one per line (at most ``BROWSER_LINES``, the first in the files' order), values in the columns' order.
    items: per row, what the browser shows under it: [its text (an index into ``texts``, or None), the
        [start, end) windows of a long text it shows (None: all of it), its sides (the two compared: [an index
        into ``names``, its spans as [start, end, type, 1 if the span is what differs else 0]]; then the
        outputs: [a list of indices into ``names``, their spans, each a position among the two sides' spans or
        [start, end, type]] (``grouped_sides``)), notes (rows of strings under ``note_columns``)]. Sides are
        shown side by side, each with its spans highlighted in the text.
    lines: the lines the listing's files hold (more than the rows when capped).
    """

    name: str
    title: str
    lines: int
    files: tuple[str, ...]
    columns: tuple[BrowserColumn, ...]
    names: tuple[str, ...]
    note_columns: tuple[str, ...]
    texts: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    items: tuple[tuple[Any, ...], ...]


def name_index(names: dict[str, int], name: str) -> int:
    """Return a name's index in a listing's ``names``, adding it at the end when new."""
    found = names.get(name)
    return names.setdefault(name, len(names)) if found is None else found


def grouped_sides(
    names: dict[str, int], spans: Mapping[str, Sequence[Sequence[Any]]], compared: Sequence[Sequence[Sequence[Any]]]
) -> list[list[Any]]:
    """Return the sides of further labellings (the outputs) on an item: those with the very same spans as one
    side ([their name indices, their spans]), in the order first seen. A span one of the two sides ``compared``
    has is written as its position among their spans, the first side's then the second's (most of an output's
    spans are a gold's: a number instead of [start, end, type]); another as [start, end, type]."""
    where: dict[tuple[Any, ...], int] = {}
    for position, span in enumerate(span for side in compared for span in side):
        where.setdefault((span[0], span[1], span[2]), position)
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for name, found in spans.items():
        key = tuple(where.get(span, span) for span in map(tuple, found))
        if key in groups:
            groups[key][0].append(name_index(names, name))
        else:
            groups[key] = [
                [name_index(names, name)],
                [value if isinstance(value, int) else list(value) for value in key],
            ]
    return list(groups.values())


def data_script_name(stem: str) -> str:
    """Return the browser's data script of a listing, beside its page."""
    return f"{stem}-data.js"


def browser_script(listing: BrowserListing) -> str:
    """Return the listing as a script that adds it to ``window.refsensListings`` (a page from file:// may load a
    script but not fetch() a file); the same listing gives the same bytes."""
    data = {
        "name": listing.name,
        "title": listing.title,
        "lines": listing.lines,
        "files": listing.files,
        "columns": [{"key": c.key, "label": c.label, "kind": c.kind, "filter": c.filter} for c in listing.columns],
        "names": listing.names,
        "noteColumns": listing.note_columns,
        "texts": listing.texts,
        "rows": listing.rows,
        "items": listing.items,
    }
    return "(window.refsensListings = window.refsensListings || []).push(" + orjson.dumps(data).decode("utf-8") + ");\n"
