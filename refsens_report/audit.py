"""The audit, start to finish: config → record → per-item counts → subsets → bootstrap → rows.

Reads like the pipeline: ``run_audit`` loads the record; ``audit_record`` computes the counts once, builds the
item sets, asks every analysis of the registry (``analyses.ANALYSES``) what to estimate, estimates it all with
the paired stratified bootstrap (one draw per item set and stream), lets each analysis finish its rows (Holm,
the band, the leaderboard) and returns ``AuditResults``, the single source for everything downstream.
"""

from __future__ import annotations

import gc
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from refsens_report.analyses.base import AuditContext, Estimate, Partitioned
from refsens_report.analyses.registry import ANALYSES, ORDER, column_kinds
from refsens_report.bootstrap import auto_resamples
from refsens_report.config import Config
from refsens_report.counts import ItemCounts
from refsens_report.engine import open_engine
from refsens_report.errors import InputError
from refsens_report.estimator import Estimator, Listed, Progress, Stat, Stopwatch, stage_line
from refsens_report.files import InputPath, as_written
from refsens_report.load import fitting_resamples, load_record
from refsens_report.record import POOLED, Record, note_kinds
from refsens_report.results import AuditResults, FilesOnUse, FileText, sha256_file
from refsens_report.subsets import DuplicateGroups, Subsets, build_subsets
from refsens_report.workers import dask_run, partition_files, partition_record


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects that all stay alive.

    Loading a record creates millions of tuples; without this the collector rescans the growing heap again
    and again and loading a 250,000-item record takes several times longer than it should.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Keep what the block freezes (``gc.freeze()``, called after building objects that stay alive) out of every
    collection until the block ends, then give it back to the collector (unless an outer block froze first).

    The loaded record and its counts are many small objects alive for the whole audit (about 380,000 the
    collector tracks at 25,000 items of the paper's shape; millions at a million items). Pausing the
    collector while they are built (``gc_paused``) only postpones the work: once it runs again, each collection
    of a generation they reach traverses all of them (about 0.25 s of a 25,000-item audit, in the counts).
    Frozen, no collection looks at them. Objects frozen are still freed as soon as nothing refers to them; only
    garbage that refers to itself waits for the block's end.
    """
    owner = gc.get_freeze_count() == 0
    try:
        yield
    finally:
        if owner:
            gc.unfreeze()


@gc_frozen()
def run_audit(config: Config, progress: bool = False, stopwatch: Stopwatch | None = None) -> AuditResults:
    """Load the configured record and audit it. The record is the audit's own, so its span arrays are freed
    once the counts are made and the analyses have cached what they read of them (``audit_record``'s
    ``release_spans``)."""
    stopwatch = stopwatch or Stopwatch()
    with stopwatch.stage("load"), gc_paused():
        record = load_record(config)
        gc.freeze()  # alive until the audit ends: out of the collector's passes (gc_frozen)
    if progress:
        stage_line("load", stopwatch.seconds["load"], f"{record.n_items:,} items")
    return audit_record(record, config, progress=progress, stopwatch=stopwatch, release_spans=True)


def merged_by_stream(estimates: list[Estimate]) -> list[Estimate]:
    """Return one estimate per random stream, in order of first appearance, holding every statistic drawn on it.

    Statistics on one stream share the stream's draws, so estimating them together draws once.
    """
    merged: dict[str, tuple[list[Stat], list[Listed], Estimate]] = {}
    for estimate in estimates:
        if estimate.stream not in merged:
            merged[estimate.stream] = ([], [], estimate)
        stats, listed, first = merged[estimate.stream]
        stats.extend(estimate.stats)
        if first.mask is not None and estimate.mask is not None and np.array_equal(first.mask, estimate.mask):
            listed.extend(estimate.listed)  # on other items it cannot share the draws: its analysis draws it
    return [
        Estimate(stats, first.mask, first.subset, first.stream, tuple(listed))
        for stats, listed, first in merged.values()
    ]


@gc_frozen()
def audit_record(
    record: Record,
    config: Config,
    progress: bool = False,
    stopwatch: Stopwatch | None = None,
    release_spans: bool = False,
) -> AuditResults:
    """Run every analysis of docs/method.md section 3 on a loaded record.

    ``release_spans``: the record is the audit's own (``run_audit`` loaded it), so its span arrays are freed
    (``SpanTable.release_spans``) once the counts and item sets are made and the analyses that read spans have
    cached what they need (``Analysis.spans``), before any estimate: from there on everything reads the per-item
    counts and those caches, and the record's spans (16 bytes a span, 0.6 GB at a million items of
    generate_scale's shape) are not held beside the estimates' work nor the bootstrap's count matrices. A
    caller's record is left whole.
    The listings (``AuditResults.files``) are rendered only when a build reads them (``FilesOnUse``).
    """
    stopwatch = stopwatch or Stopwatch()
    with stopwatch.stage("counts"), gc_paused():
        context = audit_context(record, config)
        gc.freeze()  # the counts and item sets, alive until the audit ends (gc_frozen)
    counts, subsets = context.counts, context.subsets
    as_used = config.as_used()  # resamples as written ("auto" or a number); results.json's resamples says the B used
    rows: list[dict[str, Any]] = []
    # the engine (this machine's threads, or a Dask cluster) runs every bootstrap, the finishing ones too; it is
    # open from the first analysis on (the automatic B reads the interaction's point estimates), so that a
    # partitioned record's workers serve what the client's counts do not hold (the outputs' spans:
    # ``ItemCounts.unheld``) to any analysis
    with open_engine(config, stopwatch, dask_run) as run:
        context.engine = run
        if counts.unheld:
            run.attach(counts)
        config = context.config = replace(config, audit=replace(config.audit, resamples=resolved_resamples(context)))
        with stopwatch.stage("counts"):  # what to estimate, and the count matrices some analyses list (by_type)
            for analysis in ANALYSES:
                if analysis.spans is not None:
                    analysis.spans(context)
            if release_spans:  # every reader of the spans (the counts, the item sets, the analyses' caches) has run
                record.table.release_spans()  # before the estimates: their caches and the bootstrap are the peak
            plan = merged_by_stream([estimate for analysis in ANALYSES for estimate in analysis.estimates(context)])
        total_items = sum(int(e.mask.sum()) for e in plan if (e.stats or e.listed) and e.mask is not None)
        estimator = Estimator(
            record, counts, config, Progress(progress, total_items, config.audit.resamples), stopwatch, run
        )
        while plan:  # each estimate let go once drawn: its listed count matrices are not needed again
            estimate = plan.pop(0)
            if estimate.mask is not None:
                rows += estimator.estimate(
                    estimate.stats, estimate.mask, estimate.subset, estimate.stream, estimate.listed
                )
            del estimate
        estimator.progress.finish()
        for analysis in ANALYSES:  # in order: the band reads the swap's rows, the leaderboard the Holm-adjusted swings
            with stopwatch.stage("analyses"):
                rows += analysis.finish(context, estimator, rows)
        # the summaries while the engine is open: a partitioned record's may be computed where its counts are
        with stopwatch.stage("analyses"):
            summaries = {analysis.key: analysis.summary(context) for analysis in ANALYSES if analysis.summary}
        described = record_summary(record, counts, subsets, estimator)
        context.engine = counts.fetch = None  # closed: the build's listings, rendered later, are computed here
    rows.sort(key=lambda row: ORDER[row["analysis"]])  # stable: keeps each analysis's own order

    applicability: dict[str, str | None] = {}
    for analysis in ANALYSES:
        applicability.update(analysis.why_not(context))
    files = input_files(record, config)
    results = AuditResults(
        dataset={"name": config.name, "version": config.version},
        config=as_used,
        config_toml=config.text,
        rows=rows,
        seed=config.audit.seed,
        resamples=config.audit.resamples,
        confidence=config.audit.confidence,
        inputs=input_hashes(files),
        input_files=files,
        record=described,
        summaries=summaries,
        applicability=applicability,
    )
    results.timings = stopwatch.seconds
    # only a build writes them: rendered when read, a file at a time
    results.files = FilesOnUse(listing_files(context))
    return results


def listing_files(context: AuditContext) -> Callable[[], Iterator[tuple[str, FileText]]]:
    """Return what makes the listing files (``analysis_files``): of the audit's context, or, when its counts do not
    hold the outputs' spans (a partitioned record's Dask client), of the partitions read one at a time here
    (``partitioned_files``). Then only the config, the item sets and the notes are kept: the audit's record and
    counts are let go."""
    if not context.counts.unheld:
        return partial(analysis_files, context)
    config, subsets = context.config, context.subsets
    return partial(
        partitioned_files, Partitioned(config, subsets, context.notes, partial(partition_contexts, config, subsets))
    )


def partitioned_files(partitioned: Partitioned) -> Iterator[tuple[str, FileText]]:
    """Yield the listing files of a partitioned record (``Analysis.partitioned_files``), in registry order, a file
    at a time: the bytes ``analysis_files`` gives of the record read whole. Each partition is read once, here, for
    every analysis's listings; their lines wait in a temporary folder until the files are merged from it."""
    with tempfile.TemporaryDirectory(prefix="refsens-listings-") as folder:
        made = [
            analysis.partitioned_files(partitioned, Path(folder)) for analysis in ANALYSES if analysis.partitioned_files
        ]
        for context in partitioned.parts():
            for listing in made:
                listing.add(context)
            del context  # let go before the next partition is read
        for listing in made:
            yield from listing.files()


def partition_contexts(config: Config, subsets: Subsets) -> Iterator[AuditContext]:
    """Yield each partition's context in record order, read from its file when asked for: its record, its counts
    and the record's item sets cut to its items (``Partitioned.parts``).
    The partitions must still hold the items the audit read, in its order."""
    files = partition_files(config)
    assert files is not None, "a partitioned record"
    n_items = len(subsets.audited)
    first = 0
    for path, display in zip(files.paths, files.displays):
        record = partition_record(path, display, files.duplicate_key, files.label_map)
        stop = first + record.n_items
        if stop > n_items:
            break

        def cut(mask: np.ndarray | None, first: int = first, stop: int = stop) -> np.ndarray | None:
            return None if mask is None else mask[first:stop]

        part = replace(
            subsets,
            corpus=cut(subsets.corpus),
            audited=cut(subsets.audited),
            decontaminated=cut(subsets.decontaminated),
            duplicates={policy: cut(mask) for policy, mask in subsets.duplicates.items()},
        )
        counts = ItemCounts(record.table, config.roles.all_names, column_kinds())
        yield AuditContext(config, record, counts, DuplicateGroups.from_record(record, files.duplicate_key), [], part)
        first = stop
    if first != n_items:
        raise InputError(
            f"{files.displays[0].rsplit('/', 1)[0]}: the partitions hold other items than the audit read "
            f"({n_items:,} items): were they rewritten during the build?"
        )


def audit_context(record: Record, config: Config) -> AuditContext:
    """Return the audit's context of a loaded record: its counts, duplicate groups and item sets."""
    counts = ItemCounts(record.table, config.roles.all_names, column_kinds())
    groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
    defective = groups.defective(record, counts, config)
    defective_ids = {item_id for group in defective for item_id in group.items}
    subsets = build_subsets(counts, groups, defective_ids, config)
    return AuditContext(config, record, counts, groups, defective, subsets)


def analysis_files(context: AuditContext) -> Iterator[tuple[str, FileText]]:
    """Yield the files every analysis lists beside results.json (name, text), in registry order, a file at a time."""
    for analysis in ANALYSES:
        if analysis.files:
            yield from analysis.files(context)


def resolved_resamples(context: AuditContext) -> int:
    """Return B: the configured number, or for "auto" the smallest B whose Holm floor reaches the target.

    The Holm family (``Analysis.holm_tests``: the interaction's, from the config and the audited items' point
    estimates) sets how small a bootstrap p must get; B never exceeds what the record's bootstrap sums fit in memory.
    """
    setting = context.config.audit.resamples
    if isinstance(setting, int):
        return setting
    tests = sum(analysis.holm_tests(context) for analysis in ANALYSES if analysis.holm_tests is not None)
    return auto_resamples(tests, context.config.audit.confidence, fitting_resamples(context.record, context.config))


def input_files(record: Record, config: Config) -> dict[str, Path]:
    """Return every input file, the config, the record's files and the datasheet, by its name in the provenance.

    Names are the paths as written in the config (a file under a folder input: the folder's name, then the
    path inside it), never computed from resolved paths: a symlinked project, data folder or working folder
    must not change results.json or manifest.json. A name written twice for two different files (a record
    root holding a file named like the config) falls back to its longer display name.
    """
    sources = [InputPath(config.path, config.path.name), *record.sources]
    if config.report.datasheet is not None:
        written = str(config.raw.get("report", {}).get("datasheet", config.report.datasheet.name))
        sources.append(InputPath(config.report.datasheet, written, as_written(written)))
    files: dict[str, Path] = {}
    for source in sources:
        if source.path.is_dir():
            # in Path order, by parts: a URL's paths (files.remote_path) do not compare
            inside = sorted((path for path in source.path.rglob("*") if path.is_file()), key=lambda path: path.parts)
            named = [
                (
                    f"{source.name.rstrip('/')}/{path.relative_to(source.path).as_posix()}",
                    f"{source.display.rstrip('/')}/{path.relative_to(source.path).as_posix()}",
                    path,
                )
                for path in inside
            ]
        else:
            named = [(source.name, source.display, source.path)]
        for name, display, path in named:
            if files.get(name, path) != path:
                name = as_written(display)
            files.setdefault(name, path)
    return files


def input_hashes(files: dict[str, Path]) -> dict[str, str]:
    """Return SHA-256 of every input file, keyed by its name in the provenance."""
    return {name: sha256_file(path) for name, path in files.items()}


def record_summary(record: Record, counts: ItemCounts, subsets: Any, estimator: Estimator) -> dict[str, Any]:
    """Return what the report says about the record: sizes per language and per item set."""

    def per_language(mask: np.ndarray | None) -> dict[str, int] | None:
        if mask is None:
            return None
        languages, members = estimator.strata(mask)
        sizes = {language: len(m) for language, m in zip(languages, members)}
        sizes[POOLED] = int(mask.sum())
        return sizes

    def clusters_per_language(mask: np.ndarray | None) -> dict[str, int] | None:
        if mask is None:
            return None
        languages, _ = estimator.strata(mask)
        return dict(zip([*languages, POOLED], estimator.cluster_counts(mask).tolist()))

    every = np.ones(counts.n_items, dtype=bool)
    return {
        "items": record.n_items,
        "languages": list(record.languages),
        "items_per_language": {k: v for k, v in per_language(every).items() if k != POOLED},
        "labellings": {name: int(counts.has(name).sum()) for name in counts.names},
        "spans": counts.span_counts(counts.names),  # repeats once, as every rule
        "subsets": {name: per_language(mask) for name, mask in subsets.named().items()},
        # what the bootstrap resamples (docs/method.md section 4): the cluster key, and the clusters per item set
        # (without a key every item is its own cluster: the counts are the item sets' sizes)
        "clusters": {
            "key": estimator.config.cluster,
            "subsets": {name: clusters_per_language(mask) for name, mask in subsets.named().items()},
        },
        "excluded": {
            "defective_duplicates": subsets.excluded_defective,
            "duplicate_policy": subsets.excluded_by_policy,
        },
        "notes": list(record.notes),
        "note_kinds": note_kinds(record.notes),
    }
