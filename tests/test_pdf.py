"""The PDF, read back with pypdf: its text, metadata, attachments, fonts and page furniture."""

from __future__ import annotations

import json
import re

import pypdf
import pytest
from conftest import Built

from refsens_report import render
from refsens_report.site import pdf_name
from refsens_report.tables import ResultsView


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def reader(built_site: Built) -> pypdf.PdfReader:
    return pypdf.PdfReader(built_site.folder / pdf_name(built_site.version))


@pytest.fixture(scope="module")
def pages_text(reader: pypdf.PdfReader) -> list[str]:
    return [page.extract_text() for page in reader.pages]


def test_the_pdf_holds_the_headline_numbers_and_every_section_title(built_site: Built, pages_text: list[str]) -> None:
    text = squash(" ".join(pages_text))
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    figures = render.headlines.version_figures(ResultsView.from_json(results))
    for number in (figures.skew, figures.delta, figures.swing):
        estimate, interval = number.split(" ", 1)
        assert squash(estimate) in text and squash(interval) in text, number
    assert squash(figures.band) in text
    for sentence in render.headlines.headline_sentences(ResultsView.from_json(results)):
        # pypdf may drop the space at a line break, so compare without whitespace
        assert squash(sentence)[:60] in text, sentence
    for title in [*render.SECTION_TITLES.values(), "Headline findings", "Methods", "Datasheet", "Provenance and downloads"]:
        assert squash(title) in text, title


def test_title_page_contents_with_page_numbers_and_running_header(built_site: Built, pages_text: list[str]) -> None:
    total = len(pages_text)
    assert "Simulated PII benchmark" in pages_text[0] and built_site.version in pages_text[0]
    assert "Page 1 of" not in pages_text[0]  # the title page has no furniture
    for number, text in enumerate(pages_text[1:], start=2):
        assert f"Page {number} of {total}" in text
        assert f"Version {built_site.version}" in text
    contents = pages_text[1]
    assert "Contents" in contents
    # every contents line ends with the page its section starts on
    for title in ("Headline findings", "Reference swap", "Methods", "Datasheet"):
        match = re.search(re.escape(title) + r"[ .]*?(\d+)\s*$", contents, re.M)
        assert match, title
        page = int(match.group(1))
        assert title in pages_text[page - 1]


def test_tables_and_figures_are_numbered_in_the_pdf(pages_text: list[str]) -> None:
    text = " ".join(pages_text)
    tables = sorted({int(number) for number in re.findall(r"Table (\d+)\.", text)})
    figures = sorted({int(number) for number in re.findall(r"Figure (\d+)\.", text)})
    assert tables == list(range(1, len(tables) + 1)) and len(tables) >= 10
    assert figures == list(range(1, 8))


def test_pdf_a3b_metadata_and_attached_results(built_site: Built, reader: pypdf.PdfReader) -> None:
    metadata = reader.metadata
    assert metadata.title.startswith("Simulated PII benchmark")
    assert metadata.creator.startswith("refsens-report")
    assert metadata["/CreationDate"].startswith("D:20260101000000")
    xmp = reader.trailer["/Root"]["/Metadata"].get_object().get_data().decode("utf-8")
    assert 'pdfaid:part="3"' in xmp and 'pdfaid:conformance="B"' in xmp
    attachments = reader.attachments
    assert set(attachments) == {"results.json", "results.csv"}
    for name, contents in attachments.items():
        assert contents[0] == (built_site.folder / name).read_bytes()
    assert "/OutputIntents" in reader.trailer["/Root"]


def test_fonts_cover_devanagari_arabic_and_cjk_type_labels(reader: pypdf.PdfReader, pages_text: list[str]) -> None:
    fonts: set[str] = set()
    for page in reader.pages:
        for font in (page.get("/Resources", {}).get("/Font") or {}).values():
            fonts.add(str(font.get_object().get("/BaseFont", "")))
        for xobject in (page.get("/Resources", {}).get("/XObject") or {}).values():
            for font in (xobject.get_object().get("/Resources", {}).get("/Font") or {}).values():
                fonts.add(str(font.get_object().get("/BaseFont", "")))
    joined = " ".join(fonts)
    assert "Devanagari" in joined, fonts
    assert "Arabic" in joined or "Naskh" in joined or "Kufi" in joined, fonts
    assert "CJK" in joined, fonts
    assert "姓名" in " ".join(pages_text)


def test_no_link_leaves_the_document(reader: pypdf.PdfReader) -> None:
    for page in reader.pages:
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A") or {}
            assert "/URI" not in action, action


def test_letter_paper_sets_the_page_size(built_site: Built) -> None:
    import weasyprint

    html = (built_site.folder / "index.html").read_text(encoding="utf-8")
    assert "size: letter" not in html  # the demo config asks for A4
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    results["config"]["report"]["paper"] = "letter"
    page = render.appendix_context(results, [], None, [], "2026-01-01T00:00:00+00:00", "SOURCE_DATE_EPOCH", "x.pdf")
    letter = render.render_page("appendix.html", page)
    document = weasyprint.HTML(string=letter, base_url=str(built_site.folder)).render()
    width, height = document.pages[0].width, document.pages[0].height
    assert (round(width * 0.75), round(height * 0.75)) == (612, 792)  # CSS px to points: 8.5 x 11 in


def test_figures_with_labels_that_need_shaping_use_outlines_in_the_pdf(built_site: Built) -> None:
    # the heatmap carries नाम and اسم: the site keeps its text, the PDF gets matplotlib's shaped outlines
    site_svg = (built_site.folder / "figures" / "type-confusion.svg").read_text(encoding="utf-8")
    print_svg = (built_site.folder / "figures" / "print" / "type-confusion.svg").read_text(encoding="utf-8")
    assert "<text" in site_svg and "नाम" in site_svg
    assert "<text" not in print_svg
    # Latin-only figures need no copy
    assert not (built_site.folder / "figures" / "print" / "swap.svg").exists()
