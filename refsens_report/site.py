"""`refsens-report build`: audit, then render site/<version>/ and refresh site/index.html, all or nothing.

The pipeline: audit → results.json/csv → figures → tables → HTML → PDF → manifest. Every stage writes
into a staging folder inside the site folder; only a complete version is moved into place (a rename), and
the index is replaced in the same step, so a failure at any stage leaves the site exactly as it was.
Everything after the audit is made from results.json, the datasheet Markdown and the manifest alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

from refsens_report import __version__, figures, manifest, pdf, render, tables
from refsens_report.analyses.registry import figure_makers
from refsens_report.config import Config, version_problem
from refsens_report.errors import InputError
from refsens_report.results import sha256_file
from refsens_report.view import ResultsView

INDEX_NAME = "index.html"
STAGING_PREFIX = ".staging-"


def pdf_name(version: str) -> str:
    """Return the PDF's file name: descriptive when attached to a paper or a contract on its own."""
    return f"refsens-appendix-{version}.pdf"


class Stages:
    """Times each stage; prints them on a terminal (progress), stays quiet otherwise."""

    def __init__(self, progress: bool, timings: dict[str, float] | None):
        self.progress, self.timings = progress, timings if timings is not None else {}
        self.details: dict[str, float] = {}  # steps within a stage (the PDF's), for bench/bench_report.py

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        elapsed = time.perf_counter() - start
        self.timings[name] = self.timings.get(name, 0.0) + elapsed
        if self.progress:
            # one line after the stage: the audit draws its own progress bar while it runs
            print(f"\r{name}: {elapsed:.1f} s".ljust(40), file=sys.stderr, flush=True)


# --- the build timestamp ---------------------------------------------------------------------------


def build_time(config: Config, inputs: Mapping[str, str]) -> tuple[datetime, str]:
    """Return the one build timestamp and where it came from: SOURCE_DATE_EPOCH, else the newest input's date.

    Never the clock: two builds of the same inputs must give the same bytes.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        if not epoch.isdigit():
            raise InputError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, got {epoch!r}")
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc), "SOURCE_DATE_EPOCH"
    paths = [config.path, *((config.base_dir / name) for name in inputs)]
    newest = max(int(path.stat().st_mtime) for path in paths if path.is_file())
    return datetime.fromtimestamp(newest, tz=timezone.utc), "the newest input file's modification time"


def w3c_timestamp(moment: datetime) -> str:
    """Return a UTC instant as a W3C datetime (what WeasyPrint reads for the PDF dates)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


# --- one version -----------------------------------------------------------------------------------


def write_tables(numbered: list[tables.Table], folder: Path) -> list[Path]:
    """Write every table as CSV and as LaTeX (booktabs) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in numbered:
        for suffix, text in ((".csv", tables.table_csv(table)), (".tex", tables.table_latex(table))):
            path = folder / f"{table.slug}{suffix}"
            path.write_text(text, encoding="utf-8", newline="")
            written.append(path)
    return written


def downloads_of(folder: Path, numbered: list[tables.Table], drawn: Mapping[str, figures.Figure],
                 version: str) -> list[render.Download]:  # fmt: skip
    """Return every file beside the appendix, with the SHA-256 of those already written."""

    def entry(name: str, description: str) -> render.Download:
        path = folder / name
        return render.Download(name, description, sha256_file(path) if path.is_file() else "")

    files = [
        entry(pdf_name(version), "The appendix as PDF/A-3b, with results.json and results.csv attached"),
        entry("results.json", "Every result row with the config, seed and input hashes"),
        entry("results.csv", "One row per statistic: the columns of the results contract"),
        entry("manifest.json", "SHA-256 of every file of this version and of every input"),
    ]
    for table in numbered:
        files.append(entry(f"tables/{table.slug}.csv", f"Table {table.number} ({table.title}) as CSV"))
        files.append(entry(f"tables/{table.slug}.tex", f"Table {table.number} as LaTeX (booktabs)"))
    for figure in drawn.values():
        files.append(entry(figure.file, f"{figure.title} (SVG)"))
    return files


def render_version(config: Config, folder: Path, stages: Stages,
                   typesetter: pdf.Typesetter | None = None) -> dict[str, Any]:  # fmt: skip
    """Render a version folder that already holds results.json/csv; return results.json's content.

    ``typesetter``: a PDF typesetter started ahead of time (build_site starts it before the audit).
    """
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    datasheet = config.report.datasheet.read_text(encoding="utf-8") if config.report.datasheet else None
    moment, moment_source = build_time(config, results.get("inputs", {}))
    timestamp = w3c_timestamp(moment)
    view = ResultsView.from_json(results)
    with stages.stage("figures"):
        drawn = figures.write_figures(view, folder, figure_makers())
    with stages.stage("tables"):
        sections, numbered = render.build_sections(view, drawn)
        write_tables(numbered, folder / "tables")
    with stages.stage("html"):
        page = render.appendix_context(
            results, sections, datasheet, downloads_of(folder, numbered, drawn, results["dataset"]["version"]),
            timestamp, moment_source, pdf_name(results["dataset"]["version"]),
        )  # fmt: skip
        (folder / INDEX_NAME).write_text(render.render_page("appendix.html", page), encoding="utf-8")
        render.copy_stylesheets(folder)
    with stages.stage("pdf"):
        write_pdf = pdf.write_pdf if typesetter is None else typesetter.write_pdf
        write_pdf(folder / INDEX_NAME, folder / pdf_name(page.version), moment, timings=stages.details)
    with stages.stage("manifest"):
        manifest.write_manifest(manifest.build_manifest(results, folder, timestamp, moment_source), folder)
    return results


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
    """Return every version folder under the site (a folder holding results.json; hidden names skipped)."""
    if not out.is_dir():
        return {}
    return {
        child.name: child
        for child in out.iterdir()
        if child.is_dir() and not child.name.startswith(".") and (child / "results.json").is_file()
    }


def site_index_html(versions: Mapping[str, Path]) -> str:
    """Render site/index.html for the given version folders, newest first."""
    entries = []
    for name in sorted(versions, key=version_sort_key, reverse=True):
        folder = versions[name]
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        manifest_path = folder / manifest.MANIFEST_NAME
        built = ""
        if manifest_path.is_file():
            built = json.loads(manifest_path.read_text(encoding="utf-8")).get("build_timestamp", "")[:10]
        entry = render.version_entry(results, built, (folder / pdf_name(name)).is_file(), pdf_name(name))
        # the folder name is the link target, whatever results.json says
        entries.append(replace(entry, version=name, href=f"{name}/index.html"))
    title = entries[0].dataset_name if entries else "refsens-report"
    return render.render_page(
        "site_index.html", render.SiteIndexPage(title=title, versions=tuple(entries), tool_version=__version__)
    )


# --- the orchestrator ------------------------------------------------------------------------------


def _refuse_existing(target: Path) -> InputError:
    return InputError(
        f"{target} already exists: a published version is never overwritten. Bump dataset.version in the "
        "config, or pass --force to rebuild this version on purpose."
    )


def _publish(staging: Path, out: Path, version: str, force: bool) -> None:
    """Move the staged version and index into place; on failure put back what was there."""
    target, staged = out / version, staging / version
    previous = staging / ".previous"
    if target.exists():
        if not force:
            raise _refuse_existing(target)
        os.rename(target, previous)
    try:
        os.rename(staged, target)
        try:
            os.replace(staging / INDEX_NAME, out / INDEX_NAME)
        except BaseException:
            os.rename(target, staged)
            raise
    except BaseException:
        if previous.exists():
            os.rename(previous, target)
        raise


def build_site(config: Config, out: Path, force: bool = False, progress: bool = False,
               timings: dict[str, float] | None = None, details: dict[str, float] | None = None) -> Path:  # fmt: skip
    """Audit the record and publish ``out/<version>/`` with a refreshed ``out/index.html``; return the folder.

    ``timings`` receives the seconds of each stage, ``details`` those of the steps within the PDF stage.
    """
    from refsens_report.audit import run_audit
    from refsens_report.results import write_results

    if why := version_problem(config.version):
        raise InputError(f"Config value 'dataset.version': {why}")
    out = Path(out)
    target = out / config.version
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: the site folder is a file")
    if target.exists() and not force:
        raise _refuse_existing(target)
    stages = Stages(progress, timings)
    if details is not None:
        stages.details = details
    created_out = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        folder = staging / config.version
        # the PDF's typesetter starts now, so its start-up overlaps the audit (the audit mostly uses one core)
        with pdf.Typesetter() as typesetter:
            with stages.stage("audit"):
                audit_results = run_audit(config, progress=progress)
                write_results(audit_results, folder)
            render_version(config, folder, stages, typesetter=typesetter)
        with stages.stage("index"):
            versions = {**published_versions(out), config.version: folder}
            (staging / INDEX_NAME).write_text(site_index_html(versions), encoding="utf-8")
        _publish(staging, out, config.version, force)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created_out and not any(out.iterdir()):
            out.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return target
