"""The PDF: the appendix page typeset by WeasyPrint with print.css, PDF/A-3b with the results attached.

WeasyPrint lays out and paints on one core, and on the demo that took twice the PDF stage's budget. So the
page is typeset in two halves at once and the halves are composed into one document:

1. The page is parsed once and its analyses are cut into ``PARTS`` runs of sections with about the same
   number of elements (tables and figures weigh most). Each run is typeset as a document of its own, in its
   own process where the platform forks, without running headers: its pages, and where every anchor,
   heading (bookmark) and in-page link fell on them.
2. The frame is the same page with the title page and the contents, then one empty page for every page of
   the runs carrying only the anchors, bookmarks and links at the positions the runs reported. WeasyPrint
   typesets it natively, so the contents' page numbers, "Page X of Y", the running headers, the outline,
   the named destinations, the metadata and the attachments are WeasyPrint's own.
3. Each frame page gets the matching run page drawn over it as a form XObject (pypdf; no content
   stream is parsed), and the file identifier is the hash of the three inputs.

The one visible difference from typesetting the page in one piece: the first section of the second run
starts on a new page. The cut depends on the page alone (never on the number of cores), so the PDF is the
same on every machine; without fork the runs are typeset one after the other, with the same result.

Reproducible: the creation and modification dates come from the page's ``dcterms.created`` meta (the one
build timestamp), the attachments carry the same date, font subsets are named from a hash, and the file
identifier is a hash of the content. So the same page gives the same bytes.
"""

from __future__ import annotations

import hashlib
import html
import io
import logging
import multiprocessing
import os
import re
import signal
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from refsens_report.errors import BuildError
from refsens_report.figures import print_variant
from refsens_report.lifetime import die_with_parent, stop_signals_held, stop_signals_released
from refsens_report.results import SCHEMA as RESULTS_SCHEMA

PDF_VARIANT = "pdf/a-3b"  # PDF/A-3 allows embedded files of any type: results.json and results.csv ride along
# in name order: WeasyPrint writes the embedded-files name tree in this order, and a name tree must be sorted
ATTACHMENTS = (
    ("results.csv", "The audit results as one row per statistic, under a header line naming its columns"),
    ("results.json", f"The audit results: every row, the config as used, inputs' SHA-256 ({RESULTS_SCHEMA})"),
)
PARTS = 2  # runs typeset at once; fixed, so the PDF does not depend on the machine's number of cores
# Tagged PDF (structure tree, /Lang, figures' /Alt from their alt text, table headers as TH), WeasyPrint's
# pdf_tags. Composition draws the runs' pages as form XObjects and would drop their structure trees, so a
# tagged appendix is typeset in one piece (write_pdf's ``tagged``): on the demo about 6 s more than the
# composed runs (docs/site.md, "Tagged PDF"); ``tagged=False`` keeps the faster, untagged composition
TAGGED = True
FIGURE_WEIGHT = 100  # an <img> (an SVG figure) costs WeasyPrint about as much as 100 table elements
ORIGIN_ID = "rs-part-origin"  # a marker at the top left of a run's first page: its anchor is the content origin
XOBJECT_NAME = "/RsRunPage"
FRAME_PREFIX = "rs-frame-"  # ids of the frame's empty pages, found by their anchors and then dropped

# a run is typeset without running headers and page numbers: the frame draws them. Neither paints the
# page's background (the paper is white): the run is drawn over the frame, and the frame's white body would
# otherwise cover it
NO_BACKGROUND = "html, body { background: none !important; }"
RUN_CSS = (
    NO_BACKGROUND
    + """
@page { @top-left { content: none !important } @top-right { content: none !important }
        @bottom-left { content: none !important } @bottom-right { content: none !important } }
"""
)
# the frame's pages are empty but for zero-size marks placed where the runs put their anchors and links
FRAME_CSS = (
    NO_BACKGROUND
    + """
.rs-frame-page { break-before: page; position: relative; height: 0; margin: 0; padding: 0; border: 0; }
.rs-mark { position: absolute; display: block; width: 0; height: 0; margin: 0; padding: 0; border: 0;
           overflow: hidden; bookmark-level: none; }
"""
)


def _offline_fetcher(root: Path):
    """Return a WeasyPrint URL fetcher that serves files under ``root`` only: nothing from the network."""
    from weasyprint.urls import URLFetcher

    root = root.resolve()

    class OfflineFetcher(URLFetcher):
        def fetch(self, url, headers=None):  # noqa: D102 - WeasyPrint's interface
            from urllib.parse import unquote, urlsplit

            parts = urlsplit(url)
            if parts.scheme == "data":  # inline data (matplotlib embeds heatmap pixels in the SVG)
                return super().fetch(url, headers)
            if parts.scheme != "file":
                raise ValueError(f"the PDF may load only files of the site, not {url}")
            path = Path(unquote(parts.path)).resolve()
            if root not in path.parents and path != root:
                raise ValueError(f"the PDF may load only files of the site, not {url}")
            shaped = root / print_variant(path.relative_to(root).as_posix())
            if path.suffix == ".svg" and shaped != path and shaped.is_file():
                # a figure whose labels need shaping: use its copy with the text drawn as outlines
                return super().fetch(shaped.as_uri(), headers)
            return super().fetch(url, headers)

    # fail_on_errors: a figure or stylesheet that cannot be loaded stops the build instead of vanishing
    return OfflineFetcher(fail_on_errors=True)


# --- cutting the page into runs ----------------------------------------------------------------------

# The page is cut as text, without parsing it: appendix.html writes <main> once, and each of its blocks is a
# <section> that starts a line; sections never nest (Markdown's raw HTML is escaped, never passed through).
_MAIN = re.compile(r"<main>(.*)</main>", re.S)
_BLOCK = re.compile(r"^(?=<section )", re.M)
_HEAD_END = "</head>"


@dataclass(frozen=True)
class Page:
    """The appendix page in three pieces: up to <main>'s content, its blocks, and from </main> on."""

    before: str
    blocks: tuple[str, ...]
    after: str

    @classmethod
    def cut(cls, text: str) -> Page:
        main = _MAIN.search(text)
        if main is None or _HEAD_END not in text[: main.start()]:
            raise ValueError("the appendix page has no <head> and <main> to typeset")
        lead, *blocks = _BLOCK.split(main.group(1))
        if not blocks or lead.strip():
            raise ValueError("the appendix page's <main> holds something other than <section> blocks")
        return cls(text[: main.start(1)], tuple(blocks), text[main.end(1) :])

    def with_style(self, before: str, css: str) -> str:
        return before.replace(_HEAD_END, f"<style>{css}</style>\n{_HEAD_END}", 1)

    def run(self, indices: list[int]) -> str:
        """Return the page with only the blocks ``indices``: no title page, no contents, no footer."""
        head = self.before[: self.before.index("<body")]
        blocks = "".join(self.blocks[index] for index in indices)
        return (
            self.with_style(head, RUN_CSS)
            + f'<body>\n<main>\n<div id="{ORIGIN_ID}"></div>\n{blocks}</main>\n</body>\n</html>\n'
        )

    def frame(self, marks: str) -> str:
        """Return the page with <main>'s blocks replaced by ``marks`` (the frame's empty pages)."""
        return self.with_style(self.before, FRAME_CSS) + marks + self.after

    def runs(self, parts: int = PARTS) -> list[list[int]]:
        """Return the runs: lists of block indices of about equal weight."""
        starts = cut_points([weight(block) for block in self.blocks], parts)
        ends = [*starts[1:], len(self.blocks)]
        return [list(range(start, stop)) for start, stop in zip(starts, ends)]


def weight(block: str) -> int:
    """Return how much typesetting ``block`` costs, in elements (a figure counts as FIGURE_WEIGHT)."""
    return block.count("<") - block.count("</") + (FIGURE_WEIGHT - 1) * block.count("<img")


def cut_points(weights: list[int], parts: int = PARTS) -> list[int]:
    """Return where to cut blocks of these weights into at most ``parts`` runs of about equal weight.

    The starts of the runs, from 0. Greedy from the front: a run takes blocks while it holds less than its
    share of what is left (a block counts as in once half of it fits).
    """
    starts = [0]
    remaining, position = sum(weights), 0
    for run in range(parts - 1, 0, -1):
        share = remaining / (run + 1)
        taken = weights[position] if position < len(weights) else 0
        position += 1
        while position < len(weights) - run and taken + weights[position] / 2 < share:
            taken += weights[position]
            position += 1
        if position >= len(weights):
            break
        starts.append(position)
        remaining -= taken
    return starts


# --- typesetting a run -------------------------------------------------------------------------------


@dataclass
class RunLayout:
    """Where things fell on a run's pages, in CSS px from the run's content origin."""

    pages: int
    anchors: list[list[tuple[str, float, float]]] = field(default_factory=list)
    bookmarks: list[list[tuple[int, str, float, float, str]]] = field(default_factory=list)
    links: list[list[tuple[str, float, float, float, float]]] = field(default_factory=list)
    size: tuple[float, float] = (0.0, 0.0)


def _layout_of(document: Any) -> RunLayout:
    # an anchor is (x, y), or (x1, y1, x2, y2) in newer WeasyPrint: the top left is what places it
    origin_x, origin_y = document.pages[0].anchors[ORIGIN_ID][:2]
    layout = RunLayout(pages=len(document.pages), size=(document.pages[0].width, document.pages[0].height))
    for page in document.pages:
        layout.anchors.append(
            [(name, at[0] - origin_x, at[1] - origin_y) for name, at in page.anchors.items() if name != ORIGIN_ID]
        )
        layout.bookmarks.append(
            [(level, label, x - origin_x, y - origin_y, state) for level, label, (x, y), state in page.bookmarks]
        )
        layout.links.append(
            [
                (target, x - origin_x, y - origin_y, width, height)
                for kind, target, (x, y, width, height), _ in page.links
                if kind == "internal"
            ]
        )
    return layout


def _options(**extra: Any) -> dict[str, Any]:
    return {"pdf_variant": PDF_VARIANT, "uncompressed_pdf": False, **extra}


def _typeset(html: str, folder: Path, fetcher: Any, **options: Any) -> Any:
    import weasyprint

    # WeasyPrint reports missing glyphs and unsupported CSS as warnings; keep the terminal quiet
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    return weasyprint.HTML(string=html, base_url=str(folder), url_fetcher=fetcher).render(**options)


def _typeset_run(html: str, folder: Path, fetcher: Any, target: Path, report: Any = None) -> RunLayout:
    """Typeset one run into ``target``; tell ``report`` (a pipe end) its layout as soon as it is known."""
    document = _typeset(html, folder, fetcher, **_options())
    layout = _layout_of(document)
    if report is not None:
        report.send(("layout", layout))
    for page in document.pages:
        # the frame carries the anchors, the outline and the links; the run's own copies would only name
        # its folder (file:// links to the downloads) and cost time
        page.anchors.clear()
        page.bookmarks.clear()
        page.links.clear()
    document.write_pdf(target, **_options())
    return layout


def _failure(error: BaseException) -> tuple[str, str]:
    """Return the message a worker sends back instead of raising: the build raises it, without a traceback."""
    return ("error", f"{type(error).__name__}: {error}")


def _reply(connection: Any, process: Any, doing: str) -> Any:
    """Return the value a worker sends back; raise BuildError (a RuntimeError) naming ``doing`` if it failed
    or stopped."""
    try:
        kind, value = connection.recv()
    except EOFError:
        process.join()
        raise BuildError(f"{doing} stopped (exit code {process.exitcode})") from None
    if kind == "error":
        raise BuildError(f"{doing} failed: {value}")
    return value


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds: scratch folders are removed, the run workers stopped


def _run_in_child(html: str, folder: Path, fetcher: Any, target: Path, report: Any, parent: int) -> None:
    """A forked worker: typeset one run; every failure goes back through the pipe, never a traceback."""
    die_with_parent(parent)  # and SIGTERM ends it: not the typesetter's handler
    stop_signals_released()
    try:
        _typeset_run(html, folder, fetcher, target, report)
        report.send(("done", None))
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which raises it
        report.send(_failure(error))
    finally:
        report.close()


class _Runs:
    """Typeset the runs: in forked workers where possible, else one after the other in this process."""

    def __init__(self, htmls: list[str], folder: Path, fetcher: Any, scratch: Path):
        self.targets = [scratch / f"run-{index}.pdf" for index in range(len(htmls))]
        self.workers: list[tuple[Any, Any]] = []
        self.layouts: list[RunLayout] = []
        forked = len(htmls) > 1 and "fork" in multiprocessing.get_all_start_methods() and _cores() > 1
        if not forked:
            self.layouts = [_typeset_run(html, folder, fetcher, target) for html, target in zip(htmls, self.targets)]
            return
        context = multiprocessing.get_context("fork")
        for page_html, target in zip(htmls, self.targets):
            receive, send = context.Pipe(duplex=False)
            process = context.Process(
                target=_run_in_child, args=(page_html, folder, fetcher, target, send, os.getpid()), daemon=True
            )
            with stop_signals_held():  # a SIGTERM while forking is handled after it, not lost in its hooks
                process.start()
            send.close()
            self.workers.append((process, receive))

    def _receive(self, index: int) -> Any:
        process, receive = self.workers[index]
        return _reply(receive, process, f"typesetting part {index + 1} of the PDF")

    def wait_layouts(self) -> list[RunLayout]:
        if not self.layouts:
            self.layouts = [self._receive(index) for index in range(len(self.workers))]
        return self.layouts

    def wait_files(self) -> list[Path]:
        for index in range(len(self.workers)):
            self._receive(index)
        self.close()
        return self.targets

    def close(self) -> None:
        for process, receive in self.workers:
            receive.close()
            if process.is_alive():
                process.terminate()
            process.join()
        self.workers = []


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# --- the frame ---------------------------------------------------------------------------------------


def _px(value: float) -> str:
    return f"{value:.3f}px"


def _mark(x: float, y: float, tag: str = "span", style: str = "", **attributes: str) -> str:
    attributes["style"] = f"left: {_px(x)}; top: {_px(y)};{style}"
    said = " ".join(
        f'{name.replace("_", "-")}="{html.escape(value, quote=True)}"' for name, value in attributes.items()
    )
    return f'<{tag} class="rs-mark" {said}></{tag}>'


def frame_page_id(run: int, page: int) -> str:
    return f"{FRAME_PREFIX}{run}-{page}"


def frame_marks(layouts: list[RunLayout]) -> str:
    """Return one empty page for every page of the runs, marked where the runs put anchors and links."""
    pages = []
    for run, layout in enumerate(layouts):
        for page in range(layout.pages):
            marks = [_mark(x, y, id=name) for name, x, y in layout.anchors[page]]
            marks += [
                _mark(
                    x,
                    y,
                    "div",
                    f" bookmark-level: {level}; bookmark-label: attr(data-label); bookmark-state: {state};",
                    data_label=label,
                )
                for level, label, x, y, state in layout.bookmarks[page]
            ]
            marks += [
                _mark(x, y, "a", f" width: {_px(width)}; height: {_px(height)};", href=f"#{target}")
                for target, x, y, width, height in layout.links[page]
            ]
            pages.append(f'<div class="rs-frame-page" id="{frame_page_id(run, page)}">{"".join(marks)}</div>')
    return "\n".join(pages) + "\n"


def _frame_pages(document: Any, layouts: list[RunLayout]) -> list[tuple[int, int, int]]:
    """Return (frame page, run, run page) for every run page, found by the frame pages' own anchors."""
    where = {name: index for index, page in enumerate(document.pages) for name in page.anchors}
    mapping = []
    for run, layout in enumerate(layouts):
        for page in range(layout.pages):
            mapping.append((where[frame_page_id(run, page)], run, page))
    frames = [frame for frame, _, _ in mapping]
    if len(set(frames)) != len(frames) or frames != sorted(frames) or frames[-1] != len(document.pages) - 1:
        raise RuntimeError("the PDF's frame pages do not line up with the typeset parts")
    return mapping


# --- composing ---------------------------------------------------------------------------------------


def compose(frame: bytes, runs: list[bytes], mapping: list[tuple[int, int, int]]) -> bytes:
    """Draw each run page under its frame page (as a form XObject); return the composed PDF."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, ByteStringObject, DecodedStreamObject, DictionaryObject, NameObject

    source = PdfReader(io.BytesIO(frame))
    writer = PdfWriter(clone_from=source)
    writer.pdf_header = source.pdf_header
    readers = [PdfReader(io.BytesIO(run)) for run in runs]
    for frame_index, run, run_index in mapping:
        run_page = readers[run].pages[run_index]
        page = writer.pages[frame_index]
        if [float(value) for value in run_page.mediabox] != [float(value) for value in page.mediabox]:
            raise RuntimeError(f"page {frame_index + 1} of the PDF: the frame and part {run + 1} differ in size")
        form = DecodedStreamObject()
        form.set_data(b"".join(_stream_data(run_page)))
        form[NameObject("/Type")] = NameObject("/XObject")
        form[NameObject("/Subtype")] = NameObject("/Form")
        form[NameObject("/BBox")] = run_page.mediabox
        form[NameObject("/Resources")] = run_page["/Resources"].clone(writer)
        if "/Group" in run_page:
            group = run_page["/Group"].clone(writer)
            form[NameObject("/Group")] = group
            if "/Group" not in page:
                page[NameObject("/Group")] = group
        reference = writer._add_object(form.flate_encode())
        # WeasyPrint's pages share one resource dictionary: give this page its own, with the run page added
        resources = DictionaryObject(page["/Resources"].get_object())
        xobjects = DictionaryObject(resources.get("/XObject", DictionaryObject()).get_object())
        xobjects[NameObject(XOBJECT_NAME)] = reference
        resources[NameObject("/XObject")] = xobjects
        page[NameObject("/Resources")] = resources
        # the frame's stream leaves its transformation in place at its end: wrap it in q/Q, then draw the run
        # page over it in page space
        save, draw = DecodedStreamObject(), DecodedStreamObject()
        save.set_data(b"q\n")
        draw.set_data(f"\nQ\nq {XOBJECT_NAME} Do Q\n".encode())
        # raw_get: the references themselves (a stream inside an array must stay an indirect object)
        contents = page.raw_get("/Contents")
        existing = list(contents.get_object()) if isinstance(contents.get_object(), list) else [contents]
        page[NameObject("/Contents")] = ArrayObject([writer._add_object(save), *existing, writer._add_object(draw)])
    identifier = ByteStringObject(hashlib.md5(b"".join([frame, *runs])).digest())  # noqa: S324 - an identifier
    writer._ID = ArrayObject([identifier, identifier])
    _retag_subsets(writer)
    # the runs' form XObjects each bring a copy of the same ICC profile through pypdf's clone: keep one
    writer.compress_identical_objects()
    output = io.BytesIO()
    writer.write(output)
    return output.getvalue()


def _retag_subsets(writer: Any) -> None:
    """Name every embedded font subset after its own bytes: ``ABCDEF+Noto-Sans`` with a tag from their hash.

    The frame and the runs are separate WeasyPrint documents, each naming its subsets, so two different
    subsets of one font could share a tag; PDF requires different subsets of a file to have different tags.
    """
    from pypdf.generic import DictionaryObject, NameObject

    for font in writer._objects:
        if not (isinstance(font, DictionaryObject) and font.get("/Type") == "/Font" and "/DescendantFonts" in font):
            continue
        descendant = font["/DescendantFonts"][0].get_object()
        descriptor = descendant["/FontDescriptor"].get_object()
        files = [descriptor[key].get_object() for key in ("/FontFile2", "/FontFile3", "/FontFile") if key in descriptor]
        name = str(font["/BaseFont"])[1:]
        if not files or "+" not in name:
            continue
        digest = hashlib.sha256(files[0].get_data()).digest()
        tag = "".join(chr(ord("A") + byte % 26) for byte in digest[:6])
        renamed = NameObject(f"/{tag}+{name.split('+', 1)[1]}")
        font[NameObject("/BaseFont")] = renamed
        descendant[NameObject("/BaseFont")] = renamed
        descriptor[NameObject("/FontName")] = renamed


def _stream_data(page: Any) -> list[bytes]:
    contents = page["/Contents"].get_object()
    streams = list(contents) if isinstance(contents, list) else [contents]
    return [stream.get_object().get_data() for stream in streams]


# --- the PDF -----------------------------------------------------------------------------------------


def _attachments(folder: Path, build_time: datetime, fetcher: Any) -> list[Any]:
    """Return results.csv and results.json as PDF/A-3 associated files, dated with the build."""
    import weasyprint

    return [
        weasyprint.Attachment(
            filename=str(folder / name),
            name=name,
            description=description,
            created=build_time,
            modified=build_time,
            relationship="Data",  # PDF/A-3: the file is the data the document presents
            url_fetcher=fetcher,
        )
        for name, description in ATTACHMENTS
    ]


def write_pdf(
    page: Path, target: Path, build_time: datetime, timings: dict[str, float] | None = None, tagged: bool = TAGGED
) -> Path:
    """Typeset ``page`` (an HTML file whose figures and stylesheets sit beside it) into ``target``.

    ``tagged``: a tagged PDF, typeset in one piece; otherwise in ``PARTS`` runs at once, composed (untagged).
    ``timings``, when given, receives the seconds at which each step ended (bench/bench_report.py prints them).
    """
    if tagged:
        return _write_whole(page, target, build_time, timings)
    import tempfile
    import time

    start, timings = time.perf_counter(), timings if timings is not None else {}

    def step(name: str) -> None:
        timings[name] = time.perf_counter() - start

    folder = page.parent
    fetcher = _offline_fetcher(folder)
    appendix = Page.cut(page.read_text(encoding="utf-8"))
    htmls = [appendix.run(indices) for indices in appendix.runs()]
    with tempfile.TemporaryDirectory(prefix="refsens-pdf-") as scratch:
        runs = _Runs(htmls, folder, fetcher, Path(scratch))
        try:
            layouts = runs.wait_layouts()
            step("runs laid out")
            options = _options(attachments=_attachments(folder, build_time, fetcher))
            document = _typeset(appendix.frame(frame_marks(layouts)), folder, fetcher, **options)
            step("frame laid out")
            mapping = _frame_pages(document, layouts)
            for rendered in document.pages:
                # the frame pages' own markers are not destinations of the document
                for name in [name for name in rendered.anchors if name.startswith(FRAME_PREFIX)]:
                    del rendered.anchors[name]
                # links to files beside the page would become file:// URIs naming the build folder: keep
                # in-page links only (the results files are attached to the PDF instead)
                rendered.links[:] = [link for link in rendered.links if link[0] == "internal"]
            frame = document.write_pdf(**options)
            step("frame written")
            parts = [path.read_bytes() for path in runs.wait_files()]
            step("runs written")
        finally:
            runs.close()
    target.write_bytes(compose(frame, parts, mapping))
    step("composed")
    return target


def _write_whole(page: Path, target: Path, build_time: datetime, timings: dict[str, float] | None = None) -> Path:
    """Typeset the appendix in one piece as a tagged PDF/A-3b with the results attached (write_pdf, tagged)."""
    import time

    start, timings = time.perf_counter(), timings if timings is not None else {}
    folder = page.parent
    fetcher = _offline_fetcher(folder)
    text = page.read_text(encoding="utf-8")
    Page.cut(text)  # the same page the runs would cut: a page without its <main> sections is refused alike
    options = _options(attachments=_attachments(folder, build_time, fetcher), pdf_tags=True)
    document = _typeset(text, folder, fetcher, **options)
    timings["laid out (one piece, tagged)"] = time.perf_counter() - start
    for rendered in document.pages:
        # links to files beside the page would become file:// URIs naming the build folder: in-page only
        rendered.links[:] = [link for link in rendered.links if link[0] == "internal"]
    target.write_bytes(document.write_pdf(**options))
    timings["written"] = time.perf_counter() - start
    return target


def write_brief(page: Path, target: Path, build_time: datetime, timings: dict[str, float] | None = None) -> Path:
    """Typeset the brief (a few pages: ``page``, an HTML file beside the appendix's figures) into ``target``.

    In one piece (it is short), tagged, PDF/A-3b without attachments (they ride on the appendix it names), with in-page
    links only. ``build_time`` is read from the page's ``dcterms.created``, as for the appendix; the file
    identifier is WeasyPrint's hash of the content, so the same page gives the same bytes.
    """
    import time

    start = time.perf_counter()
    folder = page.parent
    fetcher = _offline_fetcher(folder)
    document = _typeset(page.read_text(encoding="utf-8"), folder, fetcher, **_options(pdf_tags=True))
    for rendered in document.pages:
        rendered.links[:] = [link for link in rendered.links if link[0] == "internal"]
    document.write_pdf(target, **_options(pdf_tags=True))
    if timings is not None:
        timings["brief"] = time.perf_counter() - start
    return target


def writer(kind: str) -> Any:
    """Return what typesets a page of this kind: "appendix" (write_pdf) or "brief" (write_brief)."""
    return {"appendix": write_pdf, "brief": write_brief}[kind]


# --- a typesetter started ahead of time ---------------------------------------------------------------

# what the typesetter sets while it waits: every kind of box and SVG node the appendix uses, so WeasyPrint's
# fonts, cffi types and caches are ready (and inherited by the forked runs) when the page arrives
_WARM_UP_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="60pt" '
    'height="20pt" viewBox="0 0 60 20"><defs><path id="m" d="M 0 0 L 0 3" style="stroke: #333"/></defs>'
    '<g><path d="M 1 1 L 50 10 z" style="fill: #0072b2; stroke: #000; stroke-width: 0.5; opacity: 0.5"/>'
    '<use xlink:href="#m" x="5" y="5"/><text x="10" y="15" style="font-size: 6px; font-family: DejaVu Sans">'
    "Aa 1.0 \u2212</text></g></svg>"
)
_WARM_UP_HTML = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>warm-up</title><style>
body {{ font-family: "Noto Sans", "DejaVu Sans", sans-serif; }} td {{ white-space: pre-line; }}
td::first-line {{ font-weight: 700; }}
@page {{ @bottom-right {{ content: "Page " counter(page) " of " counter(pages) }} }}
pre {{ font-family: "DejaVu Sans Mono", monospace; }} h2 {{ break-after: avoid; }}
</style></head><body><h1>Warm-up</h1><h2 id="a">Warm-up</h2><p>Text <b>bold</b> <i>italic</i> <a href="#a">link</a></p>
<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1.0\n[0.5, 1.5]</td></tr></tbody></table>
<img src="data:image/svg+xml;charset=utf-8,{html.escape(_WARM_UP_SVG.replace("#", "%23"), quote=True)}" alt="">
<pre>{{"warm": true}}</pre></body></html>"""


def warm_up() -> float:
    """Import WeasyPrint and typeset a small page through to PDF bytes; return the seconds it took."""
    import time

    start = time.perf_counter()
    document = _typeset(_WARM_UP_HTML, Path.cwd(), None, **_options())
    document.write_pdf(**_options())
    return time.perf_counter() - start


def _serve(connection: Any, builds_end: Any, parent: int) -> None:
    """The typesetter process: warm up, then typeset each page sent until told to stop.

    It stops, removing its scratch folder and stopping the runs, when the build closes its end of the pipe,
    sends SIGTERM, or dies (then the system sends SIGTERM: die_with_parent).
    """
    import time

    builds_end.close()  # holding the build's end too, it would never see the build's end of file
    die_with_parent(parent, signal.SIGTERM)
    # SIGTERM unwinds (scratch folder, runs). A SIGTERM that arrives just before it blocks reading the pipe
    # waits there: the build's end of file, or close()'s kill after 5 s, ends it then
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        warmed = warm_up()
    except Exception:  # noqa: BLE001 - a failed warm-up only costs time; the real page reports its own errors
        warmed = float("nan")
    while True:
        waiting = time.perf_counter()
        try:
            job = connection.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            timings = {"typesetter warm-up (before the page)": warmed, "typesetter idle": time.perf_counter() - waiting}
            kind, *arguments = job
            writer(kind)(*arguments, timings=timings)
            connection.send(("done", timings))
        except SystemExit:
            raise
        except BaseException as error:  # noqa: BLE001 - reported to the build, which raises it
            connection.send(_failure(error))


class Typesetter:
    """Typesets the PDF in a process started before the audit, so WeasyPrint's start-up (importing it and
    loading fonts, about a second) overlaps the audit instead of adding to the PDF stage.

    Use as a context manager. Where the platform cannot fork, or has one core, it typesets in this process.
    """

    def __init__(self) -> None:
        self.process: Any = None
        self.connection: Any = None
        if "fork" in multiprocessing.get_all_start_methods() and _cores() > 1:
            context = multiprocessing.get_context("fork")
            self.connection, theirs = context.Pipe()
            # not a daemon: it forks the runs' workers itself; it stops when told to or when this end closes
            self.process = context.Process(
                target=_serve, args=(theirs, self.connection, os.getpid()), name="refsens-typesetter"
            )
            self.process.start()
            theirs.close()

    def write_pdf(
        self,
        page: Path,
        target: Path,
        build_time: datetime,
        timings: dict[str, float] | None = None,
        kind: str = "appendix",
    ) -> Path:
        """Typeset ``page`` into ``target`` (see write_pdf, or write_brief with ``kind="brief"``); BuildError (a
        RuntimeError) if that fails."""
        if self.process is None:
            try:
                return writer(kind)(page, target, build_time, timings)
            except Exception as error:  # noqa: BLE001 - one line, as from the typesetter process
                raise BuildError(f"typesetting the PDF failed: {_failure(error)[1]}") from error
        try:
            self.connection.send((kind, page, target, build_time))
        except OSError:  # it died: its exit code says how
            self.process.join()
            raise BuildError(f"typesetting the PDF stopped (exit code {self.process.exitcode})") from None
        value = _reply(self.connection, self.process, "typesetting the PDF")
        if timings is not None:
            timings.update(value)
        return target

    def close(self, now: bool = False) -> None:
        """Stop the typesetter: when idle, or at once with ``now`` (the build failed or was interrupted)."""
        if self.process is None:
            return
        if now:
            self.process.terminate()  # SIGTERM: it removes its scratch folder and stops the runs
        else:
            try:
                self.connection.send(None)
            except (BrokenPipeError, OSError):
                pass
        self.connection.close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.process = None

    def __enter__(self) -> Typesetter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc_info: object) -> None:
        self.close(now=kind is not None)
