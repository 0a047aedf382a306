"""`refsens-report build`: audit, then render site/<version>/ and refresh site/index.html, all or nothing.

The pipeline: audit → results.json/csv → figures → tables → HTML → PDF → manifest. Every stage writes
into a staging folder inside the site folder, and only a complete version is published, with the index
right after (publish.py: the locks, staging folders, the atomic move and recovery), so a failure at any
stage leaves the site exactly as it was. Everything after the audit is made from results.json, the
datasheet Markdown and the manifest alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from refsens_report import (
    __version__,
    changes,
    figures,
    latex,
    manifest,
    metadata,
    pdf,
    publish,
    render,
    summary,
    tables,
)
from refsens_report.analyses.registry import ANALYSES, figure_makers
from refsens_report.browser import SiteContext
from refsens_report.config import Config, version_problem
from refsens_report.errors import InputError, warn
from refsens_report.estimator import Stages
from refsens_report.results import sha256_file
from refsens_report.view import ResultsView

INDEX_NAME = publish.INDEX_NAME


def pdf_name(version: str) -> str:
    """Return the PDF's file name: descriptive when attached to a paper or a contract on its own."""
    return f"refsens-appendix-{version}.pdf"


def brief_name(version: str) -> str:
    """Return the brief PDF's file name: beside the appendix's, for a paper or a contract."""
    return f"refsens-appendix-{version}-brief.pdf"


BRIEF_SOURCE = "brief.html"  # the brief's page, typeset and then removed (the brief PDF is what is published)


# --- the build timestamp ---------------------------------------------------------------------------


def build_time(config: Config, input_files: Iterable[Path] = ()) -> tuple[datetime, str]:
    """Return the one build timestamp and where it came from: SOURCE_DATE_EPOCH, else the newest input's date.

    Never the clock: two builds of the same inputs must give the same bytes. ``input_files``: where the
    audit's inputs are on this machine (results.json names them as written, not where they are).
    """
    epoch = source_date_epoch()
    if epoch is not None:
        return epoch, "SOURCE_DATE_EPOCH"
    paths = [config.path, *input_files]
    newest = max(int(path.stat().st_mtime) for path in paths if path.is_file())
    return datetime.fromtimestamp(newest, tz=UTC), "the newest input file's modification time"


def source_date_epoch() -> datetime | None:
    """Return SOURCE_DATE_EPOCH as a UTC instant, None when unset; InputError when it is not a usable date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    if not (epoch.isascii() and epoch.isdigit()):
        raise InputError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, got {epoch!r}")
    try:
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"SOURCE_DATE_EPOCH={epoch} is out of range: it must be a date before the year 10000"
        ) from None


def w3c_timestamp(moment: datetime) -> str:
    """Return a UTC instant as a W3C datetime (what WeasyPrint reads for the PDF dates)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


# --- one version -----------------------------------------------------------------------------------


def write_tables(numbered: list[tables.Table], folder: Path) -> list[Path]:
    """Write every table as CSV and as LaTeX (a booktabs longtable to \\input) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in numbered:
        for suffix, text in ((".csv", tables.table_csv(table)), (".tex", latex.table_latex(table))):
            path = folder / f"{table.slug}{suffix}"
            path.write_text(text, encoding="utf-8", newline="")
            written.append(path)
    return written


def downloads_of(
    folder: Path, numbered: list[tables.Table], drawn: Mapping[str, figures.Figure], version: str, with_pdf: bool = True
) -> list[render.Download]:
    """Return every file beside the appendix, with the SHA-256 of those already written."""

    def entry(name: str, description: str) -> render.Download:
        path = folder / name
        return render.Download(name, description, sha256_file(path) if path.is_file() else "")

    files = [
        *(
            [
                entry(pdf_name(version), "The appendix as PDF/A-3b, with results.json and results.csv attached"),
                entry(
                    brief_name(version),
                    "The brief (at most 4 pages, PDF/A-3b): the summary, the leaderboard, "
                    "Figure 1, how to cite, and the appendix PDF's SHA-256",
                ),
            ]
            if with_pdf
            else []
        ),
        entry("results.json", "Every result row with the config, seed and input hashes"),
        entry("results.csv", "One row per statistic: the columns of the results contract"),
        entry("manifest.json", "SHA-256 of every file of this version and of every input"),
    ]
    if (folder / render.NOTES_NAME).is_file():
        files.append(
            entry(render.NOTES_NAME, "Every input note (what the input adapter repaired or skipped), one a line")
        )
    if (folder / changes.CHANGES_NAME).is_file():
        files.append(
            entry(
                changes.CHANGES_NAME,
                "Every statistic against the previous version: both estimates "
                "and intervals, the difference, how it changed",
            )
        )
    files += [
        entry(metadata.CROISSANT_NAME, "Croissant 1.1 metadata (JSON-LD) with its Responsible-AI fields"),
        entry(metadata.CARD_NAME, "The YAML header of a Hugging Face dataset card"),
        entry(
            metadata.CARD_MARKDOWN_NAME,
            "The Hugging Face dataset card: that header, the summary's verdicts, "
            "links to the appendix and its PDFs (upload it as README.md)",
        ),
        entry(metadata.CFF_NAME, "How to cite this version (Citation File Format 1.2.0)"),
        entry(metadata.BIBTEX_NAME, "How to cite this version (BibTeX)"),
    ]
    for table in numbered:
        files.append(
            entry(f"tables/{table.slug}.csv", f"Table {table.number} ({table.title}) as CSV, numbers as numbers")
        )
        files.append(entry(f"tables/{table.slug}.tex", f"Table {table.number} as LaTeX to \\input (longtable)"))
    for figure in drawn.values():
        files.append(entry(figure.file, f"{figure.title} (SVG)"))
        if figure.number:  # the same figure named by its number, for slides and papers
            files += [
                entry(figures.export_name(figure, suffix), f"Figure {figure.number} as {kind}")
                for suffix, kind in EXPORT_KINDS
            ]
    files += [
        entry(name, description)
        for analysis in ANALYSES
        for name, description in analysis.downloads
        if (folder / name).is_file()
    ]
    return files


EXPORT_KINDS = (
    (".svg", "SVG, text kept as text"),
    (".png", f"PNG, {figures.EXPORT_DPI} dpi"),
    (".pdf", "PDF, fonts embedded"),
)


def numbered_figures(body: render.Body) -> dict[str, figures.Figure]:
    """Return every figure the appendix prints, with its number, by key in the appendix's order."""
    printed = [body.summary.figure] if body.summary.figure is not None else []
    printed += [figure for section in body.sections for figure in section.figures]
    return {figure.key: figure for figure in sorted(printed, key=lambda figure: figure.number)}


@dataclass(frozen=True)
class Baseline:
    """The published version a build compares with: its name, results.json's content and SHA-256."""

    version: str
    results: Mapping[str, Any]
    sha256: str


def render_version(
    config: Config,
    folder: Path,
    stages: Stages,
    typesetter: pdf.Typesetter | None = None,
    with_pdf: bool = True,
    baseline: Baseline | None = None,
    input_files: Iterable[Path] = (),
) -> dict[str, Any]:
    """Render a version folder that already holds results.json/csv; return results.json's content.

    ``typesetter``: a PDF typesetter started ahead of time (build_site starts it before the audit).
    ``with_pdf``: False skips the PDF (a draft). ``baseline``: the version the changes section compares with.
    ``input_files``: the audit's input files (their dates give the build timestamp without SOURCE_DATE_EPOCH).
    """
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    datasheet = config.report.datasheet.read_text(encoding="utf-8") if config.report.datasheet else None
    moment, moment_source = build_time(config, input_files)
    timestamp = w3c_timestamp(moment)
    view = ResultsView.from_json(results)
    with stages.stage("figures"):
        drawn = figures.write_figures(view, folder, figure_makers())
    with stages.stage("tables"):
        body = render.build_body(view, drawn)
        write_tables(body.tables, folder / "tables")
        numbered = numbered_figures(body)
        figures.write_exports(folder, numbered.values())
    with stages.stage("release"):  # the checks, what changed since the baseline, the metadata files
        section = None
        if baseline is not None:
            section, changes_text = changes.compare(baseline.version, baseline.results, baseline.sha256, results)
            (folder / changes.CHANGES_NAME).write_text(changes_text, encoding="utf-8", newline="")
        metadata.write_metadata(results, folder, timestamp)
        pdfs = (pdf_name(view.data["dataset"]["version"]), brief_name(view.data["dataset"]["version"]))
        metadata.write_card(
            results, folder, timestamp, summary.markdown(body.summary), pdfs if with_pdf else (), view.draft
        )
        if results.get("record", {}).get("notes"):
            (folder / render.NOTES_NAME).write_text(render.notes_text(results), encoding="utf-8", newline="")
    with stages.stage("html"):
        from refsens_report.audit import gc_paused

        with gc_paused():  # the listings' lines are many small objects, all alive until written
            for name, text in render.analysis_pages(view, SiteContext(folder, results, timestamp)):
                (folder / name).write_text(text, encoding="utf-8")
        version = results["dataset"]["version"]
        page = render.appendix_context(
            results,
            body.sections,
            datasheet,
            downloads_of(folder, body.tables, numbered, version, with_pdf),
            timestamp,
            moment_source,
            pdf_name(version) if with_pdf else "",
            body.summary,
            body.annex,
            brief_name(version) if with_pdf else "",
        )
        page = replace(page, changes=section)
        (folder / INDEX_NAME).write_text(render.render_page("appendix.html", page), encoding="utf-8")
        render.copy_stylesheets(folder)
        render.copy_scripts(folder)
    if with_pdf:
        with stages.stage("pdf"):
            write_pdf = pdf.write_pdf if typesetter is None else typesetter.write_pdf
            appendix_pdf = write_pdf(
                folder / INDEX_NAME, folder / pdf_name(page.version), moment, timings=stages.details
            )
            # the brief names the appendix PDF by its SHA-256, so it is typeset second
            brief = render.brief_context(page, view, body.sections, sha256_file(appendix_pdf), config.report.url)
            source = folder / BRIEF_SOURCE
            source.write_text(render.render_page("brief.html", brief), encoding="utf-8")
            if typesetter is None:
                pdf.write_brief(source, folder / brief_name(page.version), moment, timings=stages.details)
            else:
                typesetter.write_pdf(
                    source, folder / brief_name(page.version), moment, timings=stages.details, kind="brief"
                )
            source.unlink()
    with stages.stage("manifest"):
        manifest.write_manifest(manifest.build_manifest(results, folder, timestamp, moment_source), folder)
    return results


# --- the baseline: the version a build compares with ---------------------------------------------


def _read_baseline(name: str, folder: Path) -> Baseline:
    path = folder / "results.json"
    data = path.read_bytes()
    results = json.loads(data.decode("utf-8"))
    if problem := changes.results_problem(results):  # the shape the comparison reads
        raise ValueError(f"results.json: {problem}")
    return Baseline(version=name, results=results, sha256=hashlib.sha256(data).hexdigest())


def find_baseline(out: Path, version: str, compare_to: str | None) -> Baseline | None:
    """Return the published version to compare with: ``compare_to``, else the newest one before ``version``.

    A named version that is missing or unreadable is bad input; without a name, a damaged earlier version is
    skipped with a warning and the next older one is tried. None when there is no earlier version.
    """
    published = {name: folder for name, folder in published_versions(out).items() if name != version}
    if compare_to is not None:
        if compare_to == version:
            raise InputError(f"--compare-to {compare_to}: that is the version being built; name an earlier one")
        if compare_to not in published:
            known = ", ".join(sorted(published, key=version_sort_key, reverse=True)) or "none"
            raise InputError(f"--compare-to {compare_to}: no such version in {out} (published: {known})")
        try:
            return _read_baseline(compare_to, published[compare_to])
        except Exception as error:  # noqa: BLE001 - any damage: the user named it, so say so and stop
            raise InputError(
                f"--compare-to {compare_to}: cannot read its results ({type(error).__name__}: {error})"
            ) from None
    current = version_sort_key(version)
    for name in sorted(published, key=version_sort_key, reverse=True):
        if version_sort_key(name) >= current:
            continue
        try:
            return _read_baseline(name, published[name])
        except Exception as error:  # noqa: BLE001 - as the index does: skip a damaged version, say so
            warn(f"{published[name]}: not compared with: cannot read its results ({type(error).__name__}: {error})")
    return None


# --- the site index --------------------------------------------------------------------------------


RELEASE = re.compile(r"^(\d+(?:\.\d+)*)(.*)$")


def _natural(text: str) -> tuple:
    """Return a key that orders digit runs by value: b2 < b10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|\D+", text))


def version_sort_key(version: str) -> tuple:
    """Order versions sensibly: by release numbers, a pre-release (1.0.0rc1, 1.0.0-rc.2) before its release,
    names that start with no number after every numbered one."""
    match = RELEASE.match(version)
    if not match:
        return (0, (), 0, _natural(version.lower()))
    release = tuple(int(part) for part in match.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]  # 1.0.0 == 1.0 == 1
    suffix = match.group(2).lower()
    if not suffix or suffix.startswith("+") or re.match(r"^[-_.]?post", suffix):
        return (1, release, 1, _natural(suffix))
    return (1, release, 0, _natural(re.sub(r"[-_.]", "", suffix)))


def published_versions(out: Path) -> dict[str, Path]:
    """Return every version folder under the site (a folder holding results.json; hidden names skipped).

    A folder whose name could not be a version (config.version_problem: the index would link to it by
    name) is left out with a warning.
    """
    if not out.is_dir():
        return {}
    versions = {}
    for child in sorted(out.iterdir()):
        if child.name.startswith(".") or not child.is_dir() or not (child / "results.json").is_file():
            continue
        if version_problem(child.name):
            warn(f"{child}: left out of the site index: its name is not a version name")
            continue
        versions[child.name] = child
    return versions


def _index_entry(name: str, folder: Path) -> render.VersionEntry:
    """Return one version's line in the index, from its results.json and manifest.json."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    if not isinstance(results, dict):
        raise ValueError("results.json is not a JSON object")
    manifest_path = folder / manifest.MANIFEST_NAME
    built = ""
    if manifest_path.is_file():
        written = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(written, dict):
            raise ValueError("manifest.json is not a JSON object")
        built = str(written.get("build_timestamp", ""))[:10]
    entry = render.version_entry(
        results,
        built,
        (folder / pdf_name(name)).is_file(),
        pdf_name(name),
        brief_name(name),
        (folder / brief_name(name)).is_file(),
    )
    # the folder name is the link target, whatever results.json says
    return replace(entry, version=name, href=f"{name}/index.html")


def site_index_html(versions: Mapping[str, Path], required: tuple[str, ...] = ()) -> str:
    """Render site/index.html for the given version folders, newest first.

    A version whose results.json or manifest.json cannot be read (not JSON, not the results contract) is
    left out of the index with a warning naming it, so one damaged folder cannot stop every later build;
    the versions in ``required`` (the one being built) raise instead.
    """
    entries, compared = [], []
    for name in sorted(versions, key=version_sort_key, reverse=True):
        try:
            entry = _index_entry(name, versions[name])
            results = json.loads((versions[name] / "results.json").read_text(encoding="utf-8"))
            if problem := changes.results_problem(results):  # the grid reads it: a warning, not a traceback
                raise ValueError(f"results.json: {problem}")
            entries.append(entry)
            compared.append((name, results))
        except Exception as error:  # noqa: BLE001 - any damage to another version's files: skip it, say so
            if name in required:
                raise
            reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            warn(f"{versions[name]}: left out of the site index: cannot read its results ({reason})")
    title = entries[0].dataset_name if entries else "refsens-report"
    return render.render_page(
        "site_index.html",
        render.SiteIndexPage(
            title=title,
            versions=tuple(entries),
            tool_version=__version__,
            grid=changes.side_by_side(compared) if len(compared) > 1 else None,
            latest=render.latest_version(entries),
        ),
    )


def site_datasets(out: Path) -> dict[str, list[str]]:
    """Return the dataset names the site's published versions belong to, each with its versions.

    A version whose results.json cannot be read is left out (the index leaves it out too, with a warning).
    """
    datasets: dict[str, list[str]] = {}
    for version, folder in published_versions(out).items():
        try:
            name = json.loads((folder / "results.json").read_text(encoding="utf-8"))["dataset"]["name"]
        except (OSError, ValueError, TypeError, KeyError):
            continue
        if isinstance(name, str):
            datasets.setdefault(name, []).append(version)
    return datasets


def _check_one_dataset(out: Path, dataset: str) -> None:
    """Refuse to publish ``dataset`` into a site whose versions belong to another dataset (one site, one
    dataset: the index is titled by it and lists its versions as one history)."""
    others = {name: versions for name, versions in site_datasets(out).items() if name != dataset}
    if not others:
        return
    held = "; ".join(
        f"'{name}' ({', '.join(sorted(versions, key=version_sort_key))})" for name, versions in others.items()
    )
    raise InputError(
        f"{out} holds the dataset {held}, not '{dataset}': build into another --out (one site per dataset), "
        "or pass --allow-other-dataset to add it to this site"
    )


def _check_site_path(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: the site folder is a file")
    try:
        str(out.absolute()).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            f"{ascii(str(out))}: the site folder's path is not valid UTF-8, and the PDF typesetter addresses "
            "files by URL: choose a folder whose path is UTF-8"
        ) from None


# --- the orchestrator ------------------------------------------------------------------------------


def build_site(
    config: Config,
    out: Path,
    force: bool = False,
    progress: bool = False,
    timings: dict[str, float] | None = None,
    details: dict[str, float] | None = None,
    with_pdf: bool = True,
    compare_to: str | None = None,
    allow_other_dataset: bool = False,
    draft: bool = False,
) -> Path:
    """Audit the record and publish ``out/<version>/`` with a refreshed ``out/index.html``; return the folder.

    ``timings`` receives the seconds of each stage, ``details`` those of the steps within the PDF stage.
    ``with_pdf``: False publishes the version without its PDF (a draft). ``compare_to``: the published version
    the changes section compares with (default: the newest one before this version).
    A site whose versions belong to another dataset is refused unless ``allow_other_dataset``; a draft build
    (too few replicates: ResultsView.draft) is refused, after the audit and before publishing, unless ``draft``.
    """
    from refsens_report.audit import run_audit
    from refsens_report.results import write_files, write_results

    if why := version_problem(config.version):
        raise InputError(f"Config value 'dataset.version': {why}")
    out = Path(out)
    target = out / config.version
    _check_site_path(out)
    source_date_epoch()  # a bad SOURCE_DATE_EPOCH stops the build now, not after the audit
    if not allow_other_dataset:
        _check_one_dataset(out, config.name)
    publish.check_replaceable(target, force)
    baseline = find_baseline(out, config.version, compare_to)  # before the audit: a bad --compare-to stops now
    stages = Stages(progress, timings)
    if details is not None:
        stages.details = details
    created_out = not out.exists()
    try:
        with publish.site_lock(out, create=True):
            refresh = publish.recover(out)
            staging, alive = publish.open_staging(out)
    except OSError as error:
        raise InputError(f"{out}: cannot write to the site folder ({error.strerror or error})") from None
    try:
        if refresh:  # a dead build had reached publishing: the index may lag behind the folders
            with publish.site_lock(out):
                (staging / INDEX_NAME).write_text(site_index_html(published_versions(out)), encoding="utf-8")
                os.replace(staging / INDEX_NAME, out / INDEX_NAME)
        folder = staging / config.version
        # the PDF's typesetter starts now, so its start-up overlaps the audit (the audit mostly uses one core)
        with pdf.Typesetter() if with_pdf else nullcontext() as typesetter:
            with stages.stage("audit"):
                audit_results = run_audit(config, progress=progress)
                write_results(audit_results, folder)
                _refuse_draft(folder, config, draft)
                write_files(audit_results, folder)
            render_version(
                config,
                folder,
                stages,
                typesetter=typesetter,
                with_pdf=with_pdf,
                baseline=baseline,
                input_files=audit_results.input_files.values(),
            )
        with stages.stage("index"), publish.site_lock(out):
            publish.recover(out, own=staging)
            # the index is made from the folders as they are now, under the lock: a build of another
            # version that published meanwhile is listed
            if not allow_other_dataset:  # another dataset's build may have published here meanwhile
                _check_one_dataset(out, config.name)
            versions = {**published_versions(out), config.version: folder}
            (staging / INDEX_NAME).write_text(site_index_html(versions, (config.version,)), encoding="utf-8")
            publish.move_into_place(staging, out, config.version, force)
    except BaseException:
        publish.discard(staging, alive)
        if created_out:  # a first build that fails leaves no site folder behind
            try:
                with publish.site_lock(out), publish.signals_deferred():
                    publish.remove_empty_site(out)
            except OSError:
                pass  # gone already, or not ours to remove
        raise
    publish.discard(staging, alive)
    return target


def _refuse_draft(folder: Path, config: Config, draft: bool) -> None:
    """Raise InputError when the results just written are a draft's (ResultsView.draft) and --draft was not given."""
    why = ResultsView.from_json(json.loads((folder / "results.json").read_text(encoding="utf-8"))).draft
    if why and not draft:
        raise InputError(
            f"{config.path}: [audit] resamples = {config.audit.resamples} makes this build a draft. "
            f"{why} Publish it as a draft with `build --draft`, or raise [audit] resamples."
        )
