"""The audit, start to finish: config → record → per-item counts → subsets → bootstrap → rows.

Reads like the pipeline: ``run_audit`` loads the record, ``audit_record`` computes the counts once, builds
the item sets, estimates every analysis's statistics on its item set with the paired stratified bootstrap,
adds Holm and the band, and returns ``AuditResults`` (the single source for everything downstream).
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from refsens_report import analyses
from refsens_report.analyses import Stat
from refsens_report.bootstrap import bootstrap_p_value, holm, percentile_interval, resampled_sums, subset_seed
from refsens_report.config import POLICIES, Config
from refsens_report.counts import Column, ItemCounts
from refsens_report.formulas import Env
from refsens_report.leaderboard import leaderboard_rows
from refsens_report.load import load_record
from refsens_report.record import Record
from refsens_report.results import ANALYSIS_ORDER, AuditResults, make_row, sha256_file
from refsens_report.subsets import DuplicateGroups, build_subsets

STAT_BLOCK = 512  # statistics evaluated together: bounds memory at leaderboard scale


class Progress:
    """Bootstrap progress on a terminal (stderr), silent otherwise."""

    def __init__(self, enabled: bool, total_items: int):
        self.enabled, self.total, self.done = enabled, max(total_items, 1), 0

    def stage(self, name: str) -> Callable[[int], None] | None:
        if not self.enabled:
            return None

        def advance(items: int) -> None:
            self.done += items
            share = min(100, round(100 * self.done / self.total))
            print(f"\rbootstrap {name:<24} {share:3d}%", end="", file=sys.stderr, flush=True)

        return advance

    def finish(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


class Stopwatch:
    """Wall time per pipeline stage, for the benchmark script and the build log."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started


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


def run_audit(config: Config, progress: bool = False, stopwatch: Stopwatch | None = None) -> AuditResults:
    """Load the configured record and audit it."""
    stopwatch = stopwatch or Stopwatch()
    with stopwatch.stage("load"), gc_paused():
        record = load_record(config)
    return audit_record(record, config, progress=progress, stopwatch=stopwatch)


def language_key(language: str) -> int:
    """Return a stable integer for a language code: its random stream does not depend on the other languages."""
    return int.from_bytes(hashlib.sha256(language.encode("utf-8")).digest()[:8], "big")


class Estimator:
    """Estimates statistics on item sets of one record: strata by language, items ordered by id."""

    def __init__(self, record: Record, counts: ItemCounts, config: Config, progress: Progress, stopwatch: Stopwatch):
        self.counts, self.config, self.progress, self.stopwatch = counts, config, progress, stopwatch
        # per stream: (mask, column index, sums, groups, items per group) of the last draws
        self._drawn: dict[str, tuple[np.ndarray, dict[Column, int], np.ndarray, list[str], np.ndarray]] = {}
        self.languages = record.languages
        language_code = {language: code for code, language in enumerate(self.languages)}
        self.language = np.array([language_code[item.language] for item in record.items], dtype=np.int64)
        # Draws index items in id order within a language, so results do not depend on line order.
        self.id_order = np.argsort(np.array([item.id for item in record.items], dtype=object), kind="stable")

    def strata(self, mask: np.ndarray) -> tuple[list[str], list[np.ndarray]]:
        """Return the languages present in a subset and, for each, its items in id order."""
        ordered = self.id_order[mask[self.id_order]]
        languages, members = [], []
        for code, language in enumerate(self.languages):
            in_language = ordered[self.language[ordered] == code]
            if len(in_language):
                languages.append(language)
                members.append(in_language)
        return languages, members

    def environment(self, columns: list[Column], mask: np.ndarray, stream: str) -> tuple[list[str], np.ndarray, Env]:
        """Return (groups, items per group, sums) for the masked items: each language, then pooled.

        The draws depend only on the seed, the stream and the items, so two calls on the same item set
        are paired replicate by replicate.
        """
        columns = list(dict.fromkeys(columns))
        drawn = self._drawn.get(stream)
        if drawn is not None and np.array_equal(drawn[0], mask) and all(column in drawn[1] for column in columns):
            # a later analysis on the same item set (the leaderboard): its sums are already drawn
            _, index, sums, groups, n_items = drawn
            return groups, n_items, Env(lambda column: sums[:, :, index[column]], n_items[:, None].astype(np.float64))
        languages, members = self.strata(mask)
        index = {column: position for position, column in enumerate(columns)}
        with self.stopwatch.stage("counts"):
            matrix = np.column_stack([self.counts.values(column) for column in columns])
        with self.stopwatch.stage("bootstrap"):
            sums = resampled_sums(
                matrix,
                members,
                self.config.audit.resamples,
                subset_seed(self.config.audit.seed, stream),
                self.progress.stage(stream),
                stratum_keys=[language_key(language) for language in languages],
            )
        n_items = np.array([len(m) for m in members] + [int(mask.sum())])
        groups = languages + ["pooled"]
        self._drawn[stream] = (mask.copy(), index, sums, groups, n_items)
        env = Env(lambda column: sums[:, :, index[column]], n_items[:, None].astype(np.float64))
        return groups, n_items, env

    def estimate(self, stats: list[Stat], mask: np.ndarray, subset: str, stream: str) -> list[dict[str, Any]]:
        """Return one row per statistic and group (each language, then pooled) on the masked items."""
        if not stats or not mask.any():
            return []
        groups, n_items, env = self.environment([c for stat in stats for c in stat.expr.columns()], mask, stream)
        with self.stopwatch.stage("analyses"):
            return self._rows(stats, subset, groups, n_items, env)

    def _rows(self, stats: list[Stat], subset: str, groups: list[str], n_items: np.ndarray, env: Env) -> list[dict[str, Any]]:
        """Evaluate every statistic on the sums; intervals and p-values from the replicates."""
        rows: list[dict[str, Any]] = []
        for first in range(0, len(stats), STAT_BLOCK):
            block = stats[first : first + STAT_BLOCK]
            values = np.stack([env.value(stat.expr) for stat in block])  # stat, group, 1 + replicate
            low, high = percentile_interval(values[:, :, 1:], self.config.audit.confidence)
            p_values = bootstrap_p_value(values[:, :, 1:])
            for s, stat in enumerate(block):
                for g, language in enumerate(groups):
                    rows.append(
                        make_row(
                            analysis=stat.analysis, statistic=stat.statistic, rule=stat.rule, language=language,
                            output=stat.output, output_2=stat.output_2, reference=stat.reference,
                            reference_2=stat.reference_2, subset=subset, policy=stat.policy,
                            estimate=values[s, g, 0], ci_low=low[s, g], ci_high=high[s, g],
                            p_value=p_values[s, g] if stat.tested else None, n_items=n_items[g],
                        )
                    )  # fmt: skip
            env.forget()  # memoised terms of this block are not needed by the next
        return rows


def band_rows(rows: list[dict[str, Any]], config: Config, n_audited: int) -> list[dict[str, Any]]:
    """Return the sensitivity band per rule and output, and overall (METHOD.md section 3, band)."""
    bands: list[dict[str, Any]] = []
    for rule in config.audit.rules:
        deltas = [
            row for row in rows
            if row["analysis"] == "swap" and row["statistic"] == "delta" and row["rule"] == rule
            and row["language"] == "pooled"
        ]  # fmt: skip
        per_output: dict[str, tuple[float | None, float]] = {}
        for output in config.roles.outputs:
            mine = [row for row in deltas if row["output"] == output]
            if not mine:
                continue
            # With more than two references an output has several deltas: its band covers all of them.
            widths = [max(abs(r["ci_low"]), abs(r["ci_high"])) for r in mine if r["ci_low"] is not None]
            largest = max((abs(r["estimate"]) for r in mine if r["estimate"] is not None), default=-1.0)
            per_output[output] = (max(widths) if widths else None, largest)
            bands.append(
                make_row(analysis="band", statistic="band", rule=rule, language="pooled", output=output,
                         subset="audited", estimate=per_output[output][0], n_items=n_audited)
            )  # fmt: skip
        if per_output:
            widest = max(per_output, key=lambda output: per_output[output][1])
            bands.append(
                make_row(analysis="band", statistic="band", rule=rule, language="pooled", subset="audited",
                         estimate=per_output[widest][0], n_items=n_audited)
            )  # fmt: skip
    return bands


def add_holm(rows: list[dict[str, Any]]) -> None:
    """Holm-adjust the family of every interaction swing row with a p-value, in place."""
    family = [
        row for row in rows
        if row["analysis"] == "interaction" and row["statistic"] == "swing" and row["p_value"] is not None
    ]  # fmt: skip
    for row, adjusted in zip(family, holm([row["p_value"] for row in family])):
        row["p_holm"] = adjusted


def input_hashes(record: Record, config: Config) -> dict[str, str]:
    """Return SHA-256 of the config, every record file and the datasheet, keyed by path from the config."""
    paths = [config.path, *record.sources]
    if config.report.datasheet is not None:
        paths.append(config.report.datasheet)
    hashes: dict[str, str] = {}
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            hashes[os.path.relpath(file, config.base_dir).replace(os.sep, "/")] = sha256_file(file)
    return hashes


def audit_record(
    record: Record, config: Config, progress: bool = False, stopwatch: Stopwatch | None = None
) -> AuditResults:
    """Run every analysis of METHOD.md on a loaded record."""
    stopwatch = stopwatch or Stopwatch()
    roles = config.roles
    with stopwatch.stage("counts"), gc_paused():
        counts = ItemCounts(record.items, roles.all_names)
        groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
        defective = groups.defective(record, counts, config)
        defective_ids = {item_id for group in defective for item_id in group.items}
        subsets = build_subsets(counts, groups, defective_ids, config)
    has_annotators = len(roles.annotators) >= 2
    third_pass_known = bool(
        subsets.corpus is not None
        and subsets.corpus.any()
        and all("third_pass" in record.items[i].meta for i in np.flatnonzero(subsets.corpus))
    )

    applicability = {
        "agreement": None if has_annotators else "The record names no annotator passes, so there is no agreement to measure.",
        "third_pass": None if third_pass_known else "Not every corpus item records whether a third pass fired (meta.third_pass), so the third-pass and silent-default rates are not reported.",
        "neutrality": None if has_annotators else "The record names no annotator passes, so no reference can be tested for neutrality between them.",
        "swap": None if len(roles.references) >= 2 else "Only one reference is configured: each output's score against it is shown, but there is no other reference to swap it with.",
        "range": None if len(set(roles.annotators + roles.references)) >= 2 else "Only one defensible gold is named, so a score has no range over golds.",
        "band": None if len(roles.references) >= 2 else "The band is built from the reference-swap deltas, and one reference gives none.",
        "type_confusion": None if has_annotators else "Type confusion compares the two annotator passes, which this record does not name.",
        "leaderboard": None if len([o for o in roles.outputs if o not in roles.references]) >= 3 and len(roles.references) >= 2 else "A leaderboard needs three or more scored outputs (that are not themselves references) and two or more references.",
        "interaction": None if len(roles.outputs) >= 2 else "Only one output is configured, so there is no margin between outputs.",
        "decontaminated": None if has_annotators else "The decontaminated subset is defined by the annotator passes, which this record does not name.",
        "duplicates": None if groups.keys else f"No two items share a duplicate key (meta.{groups.key_name}), so duplicate policies cannot change anything.",
    }  # fmt: skip
    if subsets.decontaminated is not None and not subsets.decontaminated.any():
        applicability["decontaminated"] = "Every audited item's primary reference equals one annotator's labelling, so the decontaminated subset is empty."

    plan: list[tuple[list[Stat], np.ndarray | None, str, str]] = []
    if has_annotators:
        plan.append((analyses.agreement(config, third_pass_known), subsets.corpus, "corpus", "corpus"))
        plan.append((analyses.neutrality(config), subsets.audited, "audited", "audited"))
    plan.append((analyses.swap(config) + analyses.score_range(config) + analyses.interaction(config),
                 subsets.audited, "audited", "audited"))  # fmt: skip
    if has_annotators:
        plan.append((analyses.interaction(config, "decontaminated"), subsets.decontaminated, "decontaminated", "decontaminated"))  # fmt: skip
    for policy in POLICIES:
        if policy in subsets.duplicates:
            stats = analyses.interaction(config, "duplicates", policy)
            plan.append((stats, subsets.duplicates[policy], "audited", f"duplicates:{policy}"))
    total_items = sum(int(mask.sum()) for stats, mask, *_ in plan if stats and mask is not None)
    estimator = Estimator(record, counts, config, Progress(progress, total_items), stopwatch)

    rows: list[dict[str, Any]] = []
    for stats, mask, subset, stream in plan:
        if mask is not None:
            rows += estimator.estimate(stats, mask, subset, stream)
    estimator.progress.finish()
    with stopwatch.stage("analyses"):
        add_holm(rows)
        rows += band_rows(rows, config, int(subsets.audited.sum()))
        rank = {analysis: position for position, analysis in enumerate(ANALYSIS_ORDER)}
        rows.sort(key=lambda row: rank[row["analysis"]])  # stable: keeps each analysis's own order
        confusion = type_confusion(counts, subsets, config)
    # After Holm (flip rows read the swings' p_holm) and after sorting: "leaderboard" comes last in ANALYSIS_ORDER.
    rows += leaderboard_rows(estimator, subsets.audited, config, rows)

    results = AuditResults(
        dataset={"name": config.name, "version": config.version},
        config=config.as_used(),
        rows=rows,
        seed=config.audit.seed,
        resamples=config.audit.resamples,
        confidence=config.audit.confidence,
        inputs=input_hashes(record, config),
        record=record_summary(record, counts, subsets, estimator),
        duplicates={
            "key": groups.key_name,
            "available": bool(groups.keys),
            "groups": len(groups.keys),
            "duplicated_items": groups.duplicated_items,
            "excluded": config.audit.exclude_defective_duplicates,
            "defective_groups": [
                {"key": g.key, "items": list(g.items), "item": g.item, "reference": g.reference, "copies": g.copies}
                for g in defective
            ],
        },
        type_confusion=confusion,
        applicability=applicability,
    )
    results.timings = stopwatch.seconds
    return results


def record_summary(record: Record, counts: ItemCounts, subsets: Any, estimator: Estimator) -> dict[str, Any]:
    """Return what the report says about the record: sizes per language and per item set."""

    def per_language(mask: np.ndarray | None) -> dict[str, int] | None:
        if mask is None:
            return None
        languages, members = estimator.strata(mask)
        sizes = {language: len(m) for language, m in zip(languages, members)}
        sizes["pooled"] = int(mask.sum())
        return sizes

    every = np.ones(counts.n_items, dtype=bool)
    return {
        "items": len(record.items),
        "languages": list(record.languages),
        "items_per_language": {k: v for k, v in per_language(every).items() if k != "pooled"},
        "labellings": {name: int(counts.has(name).sum()) for name in counts.names},
        "subsets": {
            "corpus": per_language(subsets.corpus),
            "audited": per_language(subsets.audited),
            "decontaminated": per_language(subsets.decontaminated),
        },
        "excluded": {"defective_duplicates": subsets.excluded_defective, "duplicate_policy": subsets.excluded_by_policy},
        "notes": list(record.notes),
    }


def type_confusion(counts: ItemCounts, subsets: Any, config: Config) -> dict[str, Any]:
    """Return A-versus-B type counts on boundary-matched spans over the corpus."""
    if subsets.corpus is None:
        return {"available": False, "annotators": [], "cells": []}
    first, second = config.roles.annotators[:2]
    cells = counts.type_confusion(first, second, np.flatnonzero(subsets.corpus))
    return {
        "available": True,
        "annotators": [first, second],
        "cells": [{"type_a": a, "type_b": b, "count": n} for a, b, n in cells],
    }
