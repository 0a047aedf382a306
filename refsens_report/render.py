"""HTML pages from results.json, the datasheet Markdown and the manifest: one documented context per page.

Templates live in the top-level ``templates/`` folder; jinja2 autoescapes everything, so labelling names,
type labels and languages print as text whatever they contain. Markdown goes through markdown-it-py with raw
HTML disabled. Templates never compute a number: every number arrives as a string made by ``formatting``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import jinja2
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from refsens_report import __version__, formatting, tables
from refsens_report.analyses.base import Section
from refsens_report.analyses.registry import ANALYSES
from refsens_report.browser import Download, SiteContext
from refsens_report.changes import Changes, Grid
from refsens_report.check import Gate, gate
from refsens_report.config import ReportSettings
from refsens_report.counts import RULE_MEANINGS
from refsens_report.figures import Figure
from refsens_report.metadata import Citation, citation, work_of
from refsens_report.methods import methods_markdown
from refsens_report.names import visible
from refsens_report.record import note_groups
from refsens_report.summary import Summary, build_summary, shown_in_summary
from refsens_report.tables import Table
from refsens_report.view import HolmFamily, ResultsView

PACKAGE_DIR = Path(__file__).resolve().parent
# a wheel carries the templates inside the package (pyproject.toml maps them there); a checkout, and the
# editable install `make` uses, keeps them in the top-level templates/ folder beside the package
TEMPLATES_DIR = next(
    (folder for folder in (PACKAGE_DIR / "templates", PACKAGE_DIR.parent / "templates") if folder.is_dir()),
    PACKAGE_DIR / "templates",
)
STYLESHEETS = ("appendix.css", "print.css")
NOTES_NAME = "input-notes.txt"  # every input note, one a line; the page prints them by kind
SCRIPTS = ("site.js",)  # progressive enhancement: sortable tables, the listing browser (the pages read without it)


# --- page contexts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoteGroup:
    """Input notes of one kind as printed: how many and of what shape (None for a note alone of its kind),
    and the first ``record.NOTES_SHOWN`` of them."""

    heading: str | None
    shown: tuple[str, ...]


@dataclass(frozen=True)
class InputNotes:
    """The input notes as the page prints them: grouped by kind, and the file holding every one."""

    groups: tuple[NoteGroup, ...]
    total: str
    file: str = NOTES_NAME


@dataclass(frozen=True)
class Setting:
    """One line of the build settings table (Methods) or of the provenance table."""

    name: str
    value: str


@dataclass(frozen=True)
class ReferenceLine:
    """One reference in the appendix's table of the references, as printed."""

    name: str
    description: str  # the team's words (`[roles] descriptions`), or "" when the config gives none
    items: str  # the items it is present on
    spans: str  # its spans (repeats once)


@dataclass(frozen=True)
class AppendixPage:
    """Context of ``site/<version>/index.html``, which is also the source of the PDF.

    dataset_name, version: from results.json ``dataset``.
    tool_version: the refsens-report version that computed the results.
    build_date: the one build timestamp, as a date (``YYYY-MM-DD``) for the reader.
    build_timestamp: the same instant as a W3C datetime, for ``dcterms.created`` (PDF metadata).
    build_timestamp_source: where that timestamp came from (SOURCE_DATE_EPOCH or the inputs' date).
    paper: "a4" or "letter": selects the print page size.
    seed, resamples: the bootstrap seed and number of replicates, as printed.
    pdf_name: the file name of the PDF beside the page.
    brief_name: the file name of the brief PDF beside the page ("" without PDFs).
    results_sha256: results.json's SHA-256 (the PDF's one line of provenance when it leaves the rest to the site).
    summary: the answer first: verdicts per alternative reference, then the headline findings (one list), one
        figure, what does not apply.
    annex: with ``[report] pdf = "full"``, the complete tables the body shortened (empty otherwise).
    full: ``[report] pdf = "full"``: the PDF carries the provenance (inputs, notes, files, config) too; otherwise
        the site alone shows it and the PDF gives one line.
    references: the references compared, primary first: what each is, its items and spans.
    sections: the analysis sections in the paper's order.
    methods_html: the Methods text (``methods.methods_markdown()`` rendered, raw HTML disabled).
    settings: the bootstrap and audit settings of this build.
    datasheet_html: the team's datasheet prose rendered, or None when the config names none (no section then).
    inputs: input file (relative to `[record] root`, else as written in the config) to SHA-256.
    config_written: whether config_text is the config file as written (results.json ``config_toml``).
    config_text: the config file's TOML as the team wrote it, comments included (invisible and bidirectional
        characters shown as escapes); for results without it, the config as used as pretty JSON.
    downloads: the files beside the appendix with their SHA-256.
    notes: what an input adapter repaired or skipped, by kind (``InputNotes``), or None when it said nothing.
    checks: the `[check]` thresholds of the config as used against these results (in the summary), or None.
    changes: what changed since the previous published version (its own section; set by the build, which
        knows the site), or None for a first version.
    citation: how to cite this version: a reference, its BibTeX, the metadata files (the "How to cite" section).
    draft: why this build is a draft (too few replicates to decide significance; ``build --draft``), '' when
        it is not: marked in the title and at the top of the page.
    """

    dataset_name: str
    version: str
    tool_version: str
    build_date: str
    build_timestamp: str
    build_timestamp_source: str
    paper: str
    seed: str
    resamples: str
    pdf_name: str
    summary: Summary
    annex: tuple[Table, ...]
    full: bool
    references: tuple[ReferenceLine, ...]
    sections: tuple[Section, ...]
    methods_html: Markup
    settings: tuple[Setting, ...]
    datasheet_html: Markup | None
    inputs: tuple[Setting, ...]
    config_written: bool
    config_text: str
    downloads: tuple[Download, ...]
    notes: InputNotes | None
    checks: Gate | None = None
    changes: Changes | None = None
    citation: Citation | None = None
    brief_name: str = ""
    results_sha256: str = ""
    draft: str = ""  # why this build is a draft (ResultsView.draft), '' when it is not


@dataclass(frozen=True)
class BriefPage:
    """Context of the brief PDF's source (``brief.html``): the answer, to put in a paper or a contract as is.

    dataset_name, version, tool_version, build_date, build_timestamp, paper, confidence_label, resamples,
    seed: as on the appendix.
    summary: the appendix's summary (its verdicts and findings, its figure: Figure 1).
    leaderboard: the leaderboard as a paper prints it (under its number in the appendix), or None.
    citation: how to cite this version.
    appendix_name, appendix_sha256: the full appendix PDF's file name and SHA-256 (it is typeset first).
    appendix_url: where the appendix is published (`[report] url`), or "" when the config gives none.
    """

    dataset_name: str
    version: str
    tool_version: str
    build_date: str
    build_timestamp: str
    paper: str
    confidence_label: str
    resamples: str
    seed: str
    summary: Summary
    leaderboard: Table | None
    citation: Citation | None
    appendix_name: str
    appendix_sha256: str
    appendix_url: str
    draft: str = ""  # why this build is a draft (as on the appendix), '' when it is not


@dataclass(frozen=True)
class VersionEntry:
    """One published version in the site index, with its headline figures as printed."""

    version: str
    dataset_name: str
    build_date: str
    href: str
    pdf_href: str | None
    figures: VersionFigures
    brief_href: str | None = None
    draft: bool = False  # a draft build (ResultsView.draft): marked so, never the index's latest


def index_headings() -> tuple[str, ...]:
    """Return the headings of the site index's number columns: every analysis's, in registry order."""
    return tuple(column.heading for analysis in ANALYSES for column in analysis.index_columns)


@dataclass(frozen=True)
class SiteIndexPage:
    """Context of ``site/index.html``: every version found under site/, newest first.

    title: the newest version's dataset name.
    versions: the versions, newest first.
    tool_version: the refsens-report version that wrote this index.
    grid: with two or more versions, their headline numbers side by side (statistics by version), else None.
    latest: the newest version that is not a draft, marked "latest", or None when every version is a draft.
    columns: the headings of the number columns (``version_figures``: one per analysis's ``IndexColumn``).
    """

    title: str
    versions: tuple[VersionEntry, ...]
    tool_version: str
    grid: Grid | None = None
    latest: str | None = None  # the newest version that is not a draft (latest_version), marked "latest"
    columns: tuple[str, ...] = field(default_factory=index_headings)  # the number columns' headings


def latest_version(versions: Sequence[VersionEntry]) -> str | None:
    """Return the newest of the versions (newest first) that is not a draft: the index's "latest", or None."""
    return next((entry.version for entry in versions if not entry.draft), None)


def context_dict(context: Any) -> dict[str, Any]:
    """Return a page context's fields as template variables (shallow: nested models stay objects)."""
    return {item.name: getattr(context, item.name) for item in fields(context)}


# --- Markdown --------------------------------------------------------------------------------------


def _markdown() -> MarkdownIt:
    # commonmark with raw HTML off: '<script>' in the team's prose prints as text
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _inline_text(token: Token) -> str:
    return "".join(child.content for child in token.children or []) or token.content


def _make_offline(tokens: list[Token], heading_shift: int) -> None:
    """Keep the page self-contained: links leave only in-page anchors, images become their alt text."""
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            level = min(6, int(token.tag[1]) + heading_shift)
            token.tag = f"h{level}"
        if not token.children:
            continue
        rewritten: list[Token] = []
        open_links: list[str | None] = []
        for child in token.children:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                if href.startswith("#"):
                    open_links.append(None)
                    rewritten.append(child)
                else:
                    # no link may point outside the site: keep the text and show the target as text
                    open_links.append(href)
                continue
            if child.type == "link_close":
                target = open_links.pop() if open_links else None
                if target is None:
                    rewritten.append(child)
                else:
                    text = Token("text", "", 0)
                    text.content = f" ({target})" if target else ""
                    rewritten.append(text)
                continue
            if child.type == "image":
                text = Token("text", "", 0)
                text.content = f"[image: {_inline_text(child)}]"
                rewritten.append(text)
                continue
            rewritten.append(child)
        token.children = rewritten


def render_markdown(text: str, heading_shift: int = 0, drop_title: bool = False) -> Markup:
    """Return Markdown as safe HTML: raw HTML escaped, no external links or images, headings shifted down."""
    parser = _markdown()
    tokens = parser.parse(text)
    if drop_title and tokens and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        tokens = tokens[3:]  # heading_open, inline, heading_close
    _make_offline(tokens, heading_shift)
    return Markup(parser.renderer.render(tokens, parser.options, {}))


# --- sections --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Body:
    """The appendix's body: the summary that opens it, the analysis sections it prints, their tables in order."""

    summary: Summary
    sections: list[Section]
    tables: list[Table]
    annex: list[Table]  # with [report] pdf = "full": every table the body shortened, complete


def build_body(view: ResultsView, figures: Mapping[str, Figure]) -> Body:
    """Return the summary and one section per analysis that has something to print, numbered in reading order.

    An analysis that does not apply and has nothing to print is a line of the summary's "Not applicable" list,
    not a section. The summary's figure is Figure 1 and is not repeated in its own section. With one language a
    table prints its pooled rows only (``tables.one_language``); a long table prints its most telling rows on the
    page (``tables.for_the_page``) and its CSV keeps them all.
    """
    sections = [analysis.section(view, figures) for analysis in ANALYSES]
    summary = build_summary(view, figures, sections)
    shown, cited = shown_in_summary(summary), summary.cited(view)
    printed = []
    for section in sections:
        if section.not_applicable and not section.tables and not section.figures:
            continue
        page_tables = tuple(
            tables.for_the_page(tables.one_language(table, view), view, cited) for table in section.tables
        )
        kept = tuple(figure for figure in section.figures if figure.key != shown)
        printed.append(
            replace(
                section,
                tables=page_tables,
                figures=kept,
                paragraphs=section.paragraphs + ((SUMMARY_FIGURE_NOTE,) if len(kept) < len(section.figures) else ()),
            )
        )
    if summary.figure is not None:
        summary = replace(summary, figure=replace(summary.figure, number=1))
    numbered, all_tables = _numbered(printed, first_figure=2 if summary.figure is not None else 1)
    full = view.settings.report.pdf == "full"
    return Body(summary=summary, sections=numbered, tables=all_tables, annex=annex(all_tables) if full else [])


def annex(numbered: Sequence[Table]) -> list[Table]:
    """Return every table the body shortened, complete, under its own number (the annex of a full PDF)."""
    return [
        replace(table.csv, key=f"{table.key}-complete", number=table.number, title=f"{table.title} (complete)")
        for table in numbered
        if table.csv is not None
    ]


SUMMARY_FIGURE_NOTE = "Figure 1, in the summary at the start of this appendix, belongs to this section."


def build_sections(view: ResultsView, figures: Mapping[str, Figure]) -> tuple[list[Section], list[Table]]:
    """Return the printed sections and their tables (``build_body`` without the summary)."""
    body = build_body(view, figures)
    return body.sections, body.tables


@dataclass(frozen=True)
class IndexCell:
    """One number site/index.html shows for a version, as printed, under its column's heading (an analysis's
    ``IndexColumn``), with the small line under it."""

    heading: str
    value: str
    detail: str


VersionFigures = tuple[IndexCell, ...]


def version_figures(view: ResultsView) -> VersionFigures:
    """Return the headline figures of one version for the site index, one per declared column."""
    return tuple(
        IndexCell(column.heading, column.value(view), column.detail(view))
        for analysis in ANALYSES
        for column in analysis.index_columns
    )


def _numbered(sections: list[Section], first_figure: int = 1) -> tuple[list[Section], list[Table]]:
    """Number sections from 2 (1 is the headline findings), then tables and figures in reading order."""
    numbered: list[Section] = []
    all_tables: list[Table] = []
    figure_number, table_number = first_figure, 1
    for offset, section in enumerate(sections):
        section_figures = []
        for figure in section.figures:
            section_figures.append(replace(figure, number=figure_number))
            figure_number += 1
        section_tables = tables.number_tables(section.tables, start=table_number)
        table_number += len(section_tables)
        all_tables += section_tables
        numbered.append(
            Section(
                key=section.key,
                number=offset + 2,
                title=section.title,
                paragraphs=section.paragraphs,
                not_applicable=section.not_applicable,
                figures=tuple(section_figures),
                tables=tuple(section_tables),
                links=section.links,
            )
        )
    return numbered, all_tables


def family_setting(family: HolmFamily | None, swings: int) -> str:
    """Return the settings line of the Holm family: its name, size and floor (older results: every swing)."""
    if family is None or not family.tests:
        return f"{swings} interaction swings (every language, pooled, every rule and pair)"
    return (
        f"{family.name}: {family.tests:,} of {swings:,} interaction swings (every language, pooled, every "
        f"rule); Holm floor {family.holm_floor:.4g}"
    )


def build_settings(view: ResultsView) -> tuple[Setting, ...]:
    """Return the settings a reader needs to reproduce the numbers."""
    audit = view.settings.audit
    family = sum(
        len(view.rows.select(analysis.key, analysis.holm_family)) for analysis in ANALYSES if analysis.holm_family
    )
    return (
        Setting("Bootstrap", f"paired, stratified by language, prompt-level; {view.data.get('resamples')} replicates"),
        Setting("Seed", str(view.data.get("seed"))),
        Setting("Confidence", f"{view.data.get('confidence', 0.95) * 100:g}% {audit.interval} intervals"),
        Setting("Matching rules", "; ".join(f"{rule} ({RULE_MEANINGS.get(rule, rule)})" for rule in view.rules)),
        Setting("Annotators (A, B, ...)", ", ".join(view.annotators) or "none"),
        Setting("Outputs", ", ".join(view.outputs)),
        Setting("References (primary first)", ", ".join(view.references)),
        Setting("Duplicate policy", str(audit.duplicate_policy)),
        Setting("Defective duplicates excluded", "yes" if audit.exclude_defective_duplicates else "no"),
        Setting("Duplicate key", str(audit.duplicate_key)),
        Setting("Holm family", family_setting(view.holm_family, family)),
        Setting(
            "Printing",
            "F1 scores and differences 2 decimals, rates 1 decimal, intervals as [low, high], intervals of "
            "differences that exclude zero in bold, p below 0.01 as <0.01, undefined values as —",
        ),
    )


def input_notes(results: Mapping[str, Any]) -> InputNotes | None:
    """Return results.json's input notes grouped by kind (``record.note_kinds``), in the order of each kind's
    first note; a note of no kind, or alone of its kind, is printed as it is."""
    record = results.get("record", {})
    notes = [str(note) for note in record.get("notes", [])]
    if not notes:
        return None
    groups = [
        NoteGroup(heading=heading, shown=shown) for heading, shown in note_groups(notes, record.get("note_kinds", {}))
    ]
    return InputNotes(groups=tuple(groups), total=formatting.count(len(notes)))


def notes_text(results: Mapping[str, Any]) -> str:
    """Return ``NOTES_NAME``: every input note of results.json, one a line, in the record's order."""
    return "".join(str(note).replace("\n", "\\n") + "\n" for note in results.get("record", {}).get("notes", []))


def appendix_context(
    results: Mapping[str, Any],
    sections: Sequence[Section],
    datasheet_markdown: str | None,
    downloads: Sequence[Download],
    build_timestamp: str,
    build_timestamp_source: str,
    pdf_name: str,
    summary: Summary | None = None,
    annex: Sequence[Table] = (),
    brief_name: str = "",
) -> AppendixPage:
    """Return the appendix page's context from results.json, its numbered sections and the datasheet.

    ``summary``: from ``build_body`` (with its figure); without it, the summary is made again, without a figure.
    """
    view = ResultsView.from_json(results)
    return AppendixPage(
        dataset_name=results["dataset"]["name"],
        version=results["dataset"]["version"],
        tool_version=results.get("tool_version", __version__),
        build_date=build_timestamp[:10],
        build_timestamp=build_timestamp,
        build_timestamp_source=build_timestamp_source,
        paper=view.settings.report.paper or ReportSettings.paper,
        seed=str(results.get("seed")),
        resamples=formatting.count(results.get("resamples")),
        pdf_name=pdf_name,
        draft=view.draft,
        summary=summary if summary is not None else build_body(view, {}).summary,
        annex=tuple(annex),
        full=view.settings.report.pdf == "full",
        references=reference_lines(view),
        sections=tuple(sections),
        methods_html=render_markdown(methods_markdown(results), heading_shift=1, drop_title=True),
        settings=build_settings(view),
        datasheet_html=(
            render_markdown(datasheet_markdown, heading_shift=2, drop_title=True)
            if datasheet_markdown is not None
            else None
        ),
        inputs=tuple(Setting(name, digest) for name, digest in sorted(results.get("inputs", {}).items())),
        config_written=isinstance(results.get("config_toml"), str),
        config_text=(
            visible(results["config_toml"])
            if isinstance(results.get("config_toml"), str)
            else json.dumps(results.get("config", {}), indent=2, ensure_ascii=False)
        ),
        downloads=tuple(downloads),
        notes=input_notes(results),
        checks=gate(view),
        citation=citation(work_of(results, build_timestamp)),
        brief_name=brief_name,
        results_sha256=next((download.sha256 for download in downloads if download.href == "results.json"), ""),
    )


def reference_lines(view: ResultsView) -> tuple[ReferenceLine, ...]:
    """Return the references, primary first: the team's description, the items each is on and its spans."""
    roles = view.settings.roles
    record = view.data.get("record", {})
    items, spans = record.get("labellings", {}), record.get("spans", {})
    return tuple(
        ReferenceLine(
            name, roles.descriptions.get(name, ""), formatting.count(items.get(name)), formatting.count(spans.get(name))
        )
        for name in roles.references
    )


def brief_context(
    page: AppendixPage, view: ResultsView, sections: Sequence[Section], appendix_sha256: str, url: str | None
) -> BriefPage:
    """Return the brief PDF's context: the appendix's answer, its leaderboard table, and the appendix's hash."""
    briefed = {analysis.brief_table for analysis in ANALYSES if analysis.brief_table}
    paper = next((table for section in sections for table in section.tables if table.key in briefed), None)
    return BriefPage(
        dataset_name=page.dataset_name,
        version=page.version,
        tool_version=page.tool_version,
        build_date=page.build_date,
        build_timestamp=page.build_timestamp,
        paper=page.paper,
        confidence_label=view.confidence_label,
        resamples=page.resamples,
        seed=page.seed,
        summary=page.summary,
        leaderboard=paper,
        citation=page.citation,
        appendix_name=page.pdf_name,
        appendix_sha256=appendix_sha256,
        appendix_url=url or "",
        draft=page.draft,
    )


def version_entry(
    results: Mapping[str, Any],
    build_date: str,
    has_pdf: bool,
    pdf_name: str,
    brief_name: str = "",
    has_brief: bool = False,
) -> VersionEntry:
    """Return one version's line in the site index."""
    version = results["dataset"]["version"]
    view = ResultsView.from_json(results)  # once: it indexes every row of the version's results
    return VersionEntry(
        version=version,
        dataset_name=results["dataset"]["name"],
        build_date=build_date,
        href=f"{version}/index.html",
        pdf_href=f"{version}/{pdf_name}" if has_pdf else None,
        figures=version_figures(view),
        brief_href=f"{version}/{brief_name}" if has_brief else None,
        draft=bool(view.draft),
    )


# --- the analyses' own pages (their listings) --------------------------------------------------------


def analysis_pages(view: ResultsView, site: SiteContext) -> list[tuple[str, str]]:
    """Return (file name, text) of every page the analyses add beside the appendix (``Analysis.pages``), in
    registry order: templates rendered with their context, data scripts as they are."""
    written = []
    for analysis in ANALYSES:
        for page in analysis.pages(view, site) if analysis.pages is not None else ():
            written.append((page.name, render_page(page.template, page.context) if page.template else page.text))
    return written


# --- jinja -----------------------------------------------------------------------------------------


def environment() -> jinja2.Environment:
    """Return the jinja2 environment: templates/ folder, autoescape on, undefined variables are errors."""
    if not TEMPLATES_DIR.is_dir():
        raise RuntimeError(
            f"templates not found at {TEMPLATES_DIR}: the installation is incomplete; reinstall refsens-report "
            "(`pip install .` from its source tree)"
        )
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,  # every template is HTML; team-written text must never become markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(template_name: str, context: Any) -> str:
    """Render a page template with a context dataclass."""
    return environment().get_template(template_name).render(**context_dict(context))


def _copy_templates(names: Sequence[str], out_dir: Path) -> list[Path]:
    written = []
    for name in names:
        target = out_dir / name
        target.write_bytes((TEMPLATES_DIR / name).read_bytes())
        written.append(target)
    return written


def copy_scripts(out_dir: Path) -> list[Path]:
    """Copy the pages' script next to them (each version folder is self-contained)."""
    return _copy_templates(SCRIPTS, out_dir)


def copy_stylesheets(out_dir: Path) -> list[Path]:
    """Copy the stylesheets next to the page (each version folder is self-contained)."""
    return _copy_templates(STYLESHEETS, out_dir)
