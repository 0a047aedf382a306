"""Metadata other tools read, written with every version from results.json alone.

- ``croissant.json``: Croissant 1.1 JSON-LD (MLCommons) with the Responsible-AI fields a reviewer asks about
  (``rai:dataAnnotationProtocol``, ``rai:annotationsPerItem``, ``rai:dataAnnotationAnalysis``,
  ``rai:dataLimitations``) filled from the results and the config; its distribution is the version's
  results files, described column by column as a record set.
- ``dataset-card.yaml``: the YAML header of a Hugging Face dataset card (pasted between the ``---`` lines).
- ``dataset-card.md``: the whole card, the same YAML as front matter, then the Summary's verdicts in Markdown
  and links to the appendix and its PDFs (uploaded as a dataset repository's README.md).
- ``CITATION.cff`` (Citation File Format 1.2.0) and ``citation.bib`` (BibTeX): how to cite this version.

Every file is text made from results.json and the build date only, so the same inputs give the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refsens_report import __version__, formatting
from refsens_report.analyses.registry import ANALYSES
from refsens_report.prose import markdown_text
from refsens_report.results import COLUMNS, NUMBER_COLUMNS, sha256_file
from refsens_report.view import ResultsView, Settings

CROISSANT_NAME = "croissant.json"
CARD_NAME = "dataset-card.yaml"
CARD_MARKDOWN_NAME = "dataset-card.md"  # written by write_card, with the summary (not one of FILES)
CFF_NAME = "CITATION.cff"
BIBTEX_NAME = "citation.bib"
FILES = (CROISSANT_NAME, CARD_NAME, CFF_NAME, BIBTEX_NAME)

CROISSANT_1_1 = "http://mlcommons.org/croissant/1.1"
RAI_1_0 = "http://mlcommons.org/croissant/RAI/1.0"
# The Croissant 1.1 @context, as mlcroissant writes it (mlcroissant._src.core.rdf.make_context for 1.1)
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
# The vocabularies croissant.json names (its inline @context and conformsTo): identifiers, like XML namespace
# names, that nothing fetches
VOCABULARIES = frozenset(
    {
        CROISSANT_1_1,
        RAI_1_0,
        "http://mlcommons.org/croissant/",
        "http://mlcommons.org/croissant/RAI/",
        "http://purl.org/dc/terms/",
        "https://schema.org/",
    }
)
KEYWORDS = ("reference sensitivity", "annotation", "benchmark", "span extraction", "datasheet")
SPDX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")  # an SPDX identifier (MIT, CC-BY-4.0), not a URL


# --- who and what: shared by every file ------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """What every metadata file says about this version: names, date, address, authors, license."""

    name: str
    version: str
    date: str  # YYYY-MM-DD, the build date
    url: str | None
    authors: tuple[str, ...]
    license: str | None

    @property
    def title(self) -> str:
        return f"{self.name}, version {self.version}: reference-sensitivity datasheet appendix"

    @property
    def year(self) -> str:
        return self.date[:4]


def work_of(results: Mapping[str, Any], date: str) -> Work:
    """Return the version's citation facts from results.json (the config as used) and the build date."""
    report = Settings.from_results(results).report
    name = results["dataset"]["name"]
    authors = tuple(report.authors) or (f"{name} maintainers",)
    return Work(
        name=name,
        version=results["dataset"]["version"],
        date=date[:10],
        url=report.url,
        authors=authors,
        license=report.license,
    )


# --- the Responsible-AI fields ---------------------------------------------------------------------


def declared_sentences(view: ResultsView, field: str) -> list[str]:
    """Return the sentences the analyses add to a Responsible-AI field (``Analysis.metadata``), by their places."""
    declared = sorted(
        (sentences for analysis in ANALYSES for sentences in analysis.metadata if sentences.field == field),
        key=lambda sentences: sentences.place,
    )
    return [sentence for sentences in declared for sentence in sentences.sentences(view)]


def annotation_protocol(view: ResultsView) -> list[str]:
    """Return rai:dataAnnotationProtocol: who labelled, which labellings are golds, how duplicates were handled."""
    audit = view.settings.audit
    protocol = []
    if view.annotators:
        protocol.append(
            f"Independent annotator passes: {', '.join(view.annotators)} (the first two are A and B of "
            "the agreement and neutrality analyses)."
        )
    protocol.append(
        f"Candidate golds (references): {view.primary} (primary, the shipped gold)"
        + (f"; alternatives: {', '.join(view.references[1:])}." if view.references[1:] else ".")
    )
    protocol.append(f"Scored outputs: {', '.join(view.outputs)}.")
    protocol += declared_sentences(view, "rai:dataAnnotationProtocol")
    excluded = (view.data.get("record") or {}).get("excluded") or {}
    protocol.append(
        f"Duplicates (items sharing meta.{audit.duplicate_key}) kept by the policy "
        f"{audit.duplicate_policy}; {formatting.count(excluded.get('defective_duplicates', 0))} "
        "items of defective duplicate groups (a reference copying one annotator) excluded."
    )
    return protocol


def annotations_per_item(view: ResultsView) -> str:
    """Return rai:annotationsPerItem: how many items carry each labelling, and the audited set's size."""
    record = view.data.get("record") or {}
    carried = ", ".join(
        f"{name} on {formatting.count(count)}" for name, count in (record.get("labellings") or {}).items()
    )
    audited = view.subset_size("audited")
    return (
        f"{formatting.counted(record.get('items'), 'item')}; labellings present: {carried}. "
        f"{formatting.counted(audited, 'item')} {formatting.verb(audited, 'carries', 'carry')} every labelling "
        "(the audited set)."
    )


def annotation_analysis(view: ResultsView) -> list[str]:
    """Return rai:dataAnnotationAnalysis: agreement, neutrality and reference-sensitivity numbers, as printed."""
    return declared_sentences(view, "rai:dataAnnotationAnalysis")


def data_limitations(view: ResultsView) -> list[str]:
    """Return rai:dataLimitations: what the reference sensitivity means for scores, and what was not assessed."""
    limits = declared_sentences(view, "rai:dataLimitations")
    for key, reason in (view.data.get("applicability") or {}).items():
        if reason:
            limits.append(f"Not assessed ({key}): {reason}")
    return limits


def rai_fields(view: ResultsView) -> dict[str, Any]:
    """Return the four RAI properties, keyed as croissant.json writes them."""
    return {
        "rai:dataAnnotationProtocol": annotation_protocol(view),
        "rai:annotationsPerItem": annotations_per_item(view),
        "rai:dataAnnotationAnalysis": annotation_analysis(view),
        "rai:dataLimitations": data_limitations(view),
    }


# --- croissant.json --------------------------------------------------------------------------------


def _field(name: str) -> dict[str, Any]:
    data_type = (
        "sc:Float" if name in NUMBER_COLUMNS else "sc:Integer" if name in ("n_items", "n_clusters") else "sc:Text"
    )
    return {
        "@type": "cr:Field",
        "@id": f"results/{name}",
        "name": name,
        "dataType": data_type,
        "source": {"fileObject": {"@id": "results.csv"}, "extract": {"column": name}},
    }


def croissant(results: Mapping[str, Any], folder: Path, work: Work) -> dict[str, Any]:
    """Return croissant.json's content: the version as a Croissant 1.1 dataset with its RAI fields."""
    view = ResultsView.from_json(results)
    document: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": [CROISSANT_1_1, RAI_1_0],
        "name": work.name,
        "description": (
            f"{work.name}, version {work.version}, described by its reference-sensitivity audit: how much scores "
            "on this span-extraction benchmark depend on which gold they are computed against. The distribution "
            "holds the audit's results (one row per statistic); add the dataset's own files to publish this "
            "record as the dataset's Croissant metadata."
        ),
        "version": work.version,
        "datePublished": work.date,
        "citeAs": bibtex(work),
        "creator": [{"@type": "sc:Organization", "name": author} for author in work.authors],
        "keywords": list(KEYWORDS),
    }
    if work.url:
        document["url"] = work.url
    if work.license:
        document["license"] = work.license
    document["distribution"] = [
        {
            "@type": "cr:FileObject",
            "@id": name,
            "name": name,
            "description": description,
            "contentUrl": name,
            "encodingFormat": media,
            "sha256": sha256_file(folder / name),
        }
        for name, media, description in (
            ("results.csv", "text/csv", "One row per statistic: the columns of the results contract"),
            ("results.json", "application/json", "The same rows with the config, seed and input hashes"),
        )
    ]
    document["recordSet"] = [
        {
            "@type": "cr:RecordSet",
            "@id": "results",
            "name": "results",
            "description": "The audit's statistics: estimate, interval, p-values and item count per row; each field "
            "below says what its column holds.",
            "field": [_field(name) for name in COLUMNS if name in results.get("columns", COLUMNS)],
        }
    ]
    document.update(rai_fields(view))
    return document


# --- the Hugging Face dataset card's YAML ----------------------------------------------------------

LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
SIZES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
)


def yaml_string(text: str) -> str:
    """Return a YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def size_category(items: int) -> str:
    """Return the Hugging Face size category of a record with ``items`` items."""
    return next((label for limit, label in SIZES if items < limit), "n>100M")


def dataset_card(results: Mapping[str, Any], work: Work) -> str:
    """Return the YAML header of a Hugging Face dataset card for this version."""
    return (
        "\n".join(
            [
                f"# Hugging Face dataset card metadata for {work.name} {work.version}, written by refsens-report "
                f"{__version__}.",
                "# Paste it between the two --- lines at the top of the dataset's README.md. The card's Croissant",
                "# export leaves out the Responsible-AI fields: publish croissant.json from this folder beside it.",
                *card_fields(results, work),
            ]
        )
        + "\n"
    )


def card_fields(results: Mapping[str, Any], work: Work) -> list[str]:
    """Return the dataset card's fields as YAML lines: the one place dataset-card.yaml and .md take them from."""
    record = results.get("record") or {}
    languages = record.get("languages") or []
    lines = [f"pretty_name: {yaml_string(work.name)}"]
    if work.license:
        lines += (
            [f"license: {work.license.lower()}"]
            if SPDX_ID.match(work.license)
            else ["license: other", f"license_link: {yaml_string(work.license)}"]
        )
    if languages and all(LANGUAGE_CODE.match(language) for language in languages):
        lines += ["language:", *(f"- {language}" for language in languages)]
    lines += [
        "task_categories:",
        "- token-classification",
        "size_categories:",
        f"- {size_category(int(record.get('items') or 0))}",
        "tags:",
        "- reference-sensitivity",
        "- annotation",
    ]
    return lines


def card_markdown(
    results: Mapping[str, Any], work: Work, summary_markdown: str, pdf_names: tuple[str, ...] = (), draft: str = ""
) -> str:
    """Return dataset-card.md: the card's fields as front matter, the summary (Markdown), links to the appendix.

    ``summary_markdown``: the appendix's summary as Markdown (``summary.markdown``); ``pdf_names``: the appendix
    PDF and the brief, when built. The appendix is linked at ``[report] url`` when given (the PDFs resolved
    against it), else by the paths beside this file.
    """
    from urllib.parse import urljoin

    def linked(name: str) -> str:  # a link destination Markdown reads whole: no space or parenthesis left
        target = urljoin(work.url, name) if work.url else name
        return (
            target.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")
        )

    appendix = linked("") if work.url else "index.html"
    lines = [
        "---",
        *card_fields(results, work),
        "---",
        "",
        f"# {markdown_text(work.name)}, version {markdown_text(work.version)}: reference sensitivity",
        "",
        "How much does a score on this benchmark depend on which gold it is computed against? The "
        f"reference-sensitivity audit of this version (refsens-report {__version__}) answers in its datasheet "
        f"appendix, [published here]({appendix}); its summary follows.",
        "",
    ]
    if draft:
        lines += [f"**Draft.** {markdown_text(draft)}", ""]
    lines += [
        "## Summary",
        "",
        summary_markdown.rstrip("\n"),
        "",
        "## The appendix",
        "",
        f"- [The appendix]({appendix}): every analysis with its tables and figures, the Methods and the provenance",
    ]
    descriptions = (
        "the appendix as PDF/A-3b, with results.json and results.csv attached",
        "the brief: the summary, the leaderboard and Figure 1 in at most four pages",
    )
    lines += [f"- [{name}]({linked(name)}): {description}" for name, description in zip(pdf_names, descriptions)]
    lines += [
        f"- [results.csv]({linked('results.csv')}) and [results.json]({linked('results.json')}): every number, "
        "one row per statistic",
        "",
        "## Citation",
        "",
    ]
    entry = bibtex(work).rstrip("\n")
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", entry)), default=0))  # longer than any run
    lines += [f"{fence}bibtex", entry, fence]
    return "\n".join(lines) + "\n"


def write_card(
    results: Mapping[str, Any],
    folder: Path,
    build_date: str,
    summary_markdown: str,
    pdf_names: tuple[str, ...] = (),
    draft: str = "",
) -> Path:
    """Write dataset-card.md into a version folder."""
    path = folder / CARD_MARKDOWN_NAME
    path.write_text(
        card_markdown(results, work_of(results, build_date), summary_markdown, pdf_names, draft),
        encoding="utf-8",
        newline="",
    )
    return path


# --- CITATION.cff and BibTeX -----------------------------------------------------------------------


def citation_cff(work: Work) -> str:
    """Return CITATION.cff (Citation File Format 1.2.0) for this version."""
    lines = [
        "cff-version: 1.2.0",
        'message: "If you use this dataset or its reference-sensitivity appendix, please cite it as below."',
        "type: dataset",
        f"title: {yaml_string(work.title)}",
        f"version: {yaml_string(work.version)}",
        f"date-released: {yaml_string(work.date)}",
        "authors:",
        *(f"  - name: {yaml_string(author)}" for author in work.authors),
    ]
    if work.url:
        lines.append(f"url: {yaml_string(work.url)}")
    if work.license:
        lines.append(
            f"license: {yaml_string(work.license)}"
            if SPDX_ID.match(work.license)
            else f"license-url: {yaml_string(work.license)}"
        )
    lines += ["keywords:", *(f"  - {yaml_string(keyword)}" for keyword in KEYWORDS)]
    return "\n".join(lines) + "\n"


BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def bibtex_text(text: str) -> str:
    """Return text with BibTeX's and LaTeX's special characters escaped."""
    return "".join(BIBTEX_SPECIAL.get(character, character) for character in text)


def bibtex_key(work: Work) -> str:
    """Return a citation key from the dataset name and version: letters, digits and underscores."""
    words = re.findall(r"[A-Za-z0-9]+", f"{work.name} {work.version}".lower())
    return "_".join(words) or "dataset"


MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def bibtex(work: Work) -> str:
    """Return the BibTeX entry of this version's appendix."""
    fields = [
        ("title", f"{{{bibtex_text(work.title)}}}"),
        ("author", " and ".join(f"{{{bibtex_text(author)}}}" for author in work.authors)),
        ("year", work.year),
        ("month", MONTHS[int(work.date[5:7]) - 1] if len(work.date) >= 7 and work.date[5:7].isdigit() else ""),
        ("version", bibtex_text(work.version)),
        ("note", f"Reference-sensitivity audit made with refsens-report {__version__}"),
    ]
    if work.url:
        fields += [("url", work.url), ("howpublished", f"\\url{{{work.url}}}")]
    body = ",\n".join(
        f"  {name} = {value if name == 'month' else '{' + value + '}'}" for name, value in fields if value
    )
    return f"@misc{{{bibtex_key(work)},\n{body}\n}}\n"


@dataclass(frozen=True)
class Citation:
    """The page's "How to cite": a plain-text reference, the BibTeX entry, and the metadata files beside it."""

    text: str
    bibtex: str
    files: tuple[tuple[str, str], ...]  # (file name, what it is)


def citation(work: Work) -> Citation:
    """Return the citation the page prints."""
    where = f" {work.url}" if work.url else ""
    return Citation(
        text=f"{'; '.join(work.authors)} ({work.year}). {work.title}.{where}",
        bibtex=bibtex(work),
        files=(
            (CFF_NAME, 'Citation File Format (GitHub\'s "Cite this repository", Zenodo)'),
            (BIBTEX_NAME, "the BibTeX entry above"),
            (CROISSANT_NAME, "Croissant 1.1 metadata with its Responsible-AI fields"),
            (CARD_NAME, "the YAML header of a Hugging Face dataset card"),
            (CARD_MARKDOWN_NAME, "the whole Hugging Face dataset card: that header, the summary, links here"),
        ),
    )


def write_metadata(results: Mapping[str, Any], folder: Path, build_date: str) -> list[Path]:
    """Write croissant.json, dataset-card.yaml, CITATION.cff and citation.bib into a version folder."""
    work = work_of(results, build_date)
    texts = {
        CROISSANT_NAME: json.dumps(croissant(results, folder, work), indent=1, ensure_ascii=False) + "\n",
        CARD_NAME: dataset_card(results, work),
        CFF_NAME: citation_cff(work),
        BIBTEX_NAME: bibtex(work),
    }
    written = []
    for name, text in texts.items():
        path = folder / name
        path.write_text(text, encoding="utf-8", newline="")
        written.append(path)
    return written
