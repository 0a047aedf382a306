"""The PDF: the appendix page typeset by WeasyPrint with print.css, PDF/A-3b with the results attached.

Reproducible: the creation and modification dates come from the page's ``dcterms.created`` meta (the one
build timestamp), the attachments carry the same date, the file identifier is WeasyPrint's hash of the
content, and font subsets are named from a hash. So the same page gives the same bytes.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from refsens_report.figures import print_variant

PDF_VARIANT = "pdf/a-3b"  # PDF/A-3 allows embedded files of any type: results.json and results.csv ride along
ATTACHMENTS = (
    ("results.json", "The audit results: every row, the config as used, inputs' SHA-256 (refsens-report/results@1)"),
    ("results.csv", "The audit results as one row per statistic (the columns of METHOD.md section 5)"),
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


def write_pdf(page: Path, target: Path, build_time: datetime) -> Path:
    """Typeset ``page`` (an HTML file whose figures and stylesheets sit beside it) into ``target``."""
    import weasyprint

    folder = page.parent
    fetcher = _offline_fetcher(folder)
    attachments = [
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
    options = {"pdf_variant": PDF_VARIANT, "attachments": attachments, "uncompressed_pdf": False}
    # WeasyPrint reports missing glyphs and unsupported CSS as warnings; keep the terminal quiet
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    document = weasyprint.HTML(filename=str(page), base_url=str(folder), url_fetcher=fetcher).render(**options)
    for rendered in document.pages:
        # links to files beside the page would become file:// URIs naming the build folder: keep in-page
        # links only (the results files are attached to the PDF instead)
        rendered.links[:] = [link for link in rendered.links if link[0] == "internal"]
    document.write_pdf(target, **options)
    return target
