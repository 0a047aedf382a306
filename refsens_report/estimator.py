"""Estimating statistics on item sets: the paired stratified bootstrap's draws, and one results row per group.

An analysis states what to estimate as ``Stat`` specifications (its labels in the results contract and the
expression computing it). The ``Estimator`` draws each item set's replicate sums once per random stream
(``bootstrap.resampled_sums``) and evaluates every statistic of the analyses on them; a later analysis on the same
item set and stream (the leaderboard) reuses the draws, so its numbers are paired with the others replicate by
replicate.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from refsens_report import formatting
from refsens_report.bootstrap import (
    BLOCK_ITEMS,
    FLOAT32_EXACT,
    FLOAT32_MARGIN,
    bca_interval,
    bootstrap_p_value,
    matrix_source,
    percentile_interval,
    resampled_sums,
    subset_seed,
)
from refsens_report.clusters import cluster_codes, cluster_order, count_clusters
from refsens_report.config import Config
from refsens_report.counts import Column, ItemCounts
from refsens_report.formulas import Env, Expr
from refsens_report.record import POOLED, Record
from refsens_report.results import make_row
from refsens_report.threads import threaded_map


@dataclass(frozen=True)
class Stat:
    """One statistic to estimate per language and pooled, with its results-contract labels."""

    analysis: str
    statistic: str
    expr: Expr
    rule: str = ""
    output: str = ""
    output_2: str = ""
    reference: str = ""
    reference_2: str = ""
    policy: str = ""
    type: str = ""  # the span type of a per-type statistic (its expression counts that type only)

    @property
    def tested(self) -> bool:
        """Return whether the statistic carries a bootstrap p-value (its analysis declares it tested)."""
        return formatting.kind_of(self.analysis, self.statistic).tested


@dataclass(frozen=True)
class Listed:
    """A count matrix to draw with a stream's other columns and estimate later (``Estimator.estimate_listed``).

    ``values[k, c]`` is column c on item ``items[k]`` (items not listed count zero); ``resamples``: the
    stream's first replicates it needs. Drawn together, it shares every draw with the stream's statistics.
    ``items`` and ``values`` may be None with ``build`` giving them when the client draws the matrix: a
    partitioned record's workers then compute the ``columns`` in its place, and the client never holds it
    (``Estimator.listed_source``).
    """

    key: str
    items: np.ndarray | None
    values: Any
    resamples: int
    # what each column of ``values`` counts, when known (per-type counts): a drawn column that is their sum on
    # every item (an untyped count is the sum of its per-type counts) is then summed from theirs, not drawn
    columns: tuple[Column, ...] = ()
    build: Callable[[], tuple[np.ndarray, Any]] | None = None  # (items, values), when not given

    def made(self) -> Listed:
        """Return this matrix with its ``items`` and ``values`` built (``build``), when they are not given."""
        if self.values is not None or self.build is None:
            return self
        items, values = self.build()
        return replace(self, items=items, values=values, build=None)


@dataclass(frozen=True)
class ColumnPlan:
    """How a stream's count columns are drawn: which are multiplied, in which matrix, and which are read off others.

    ``parts``: (positions among the stream's columns, count matrix) per matrix to draw: the integer columns
    small enough to sum in float32 (``FLOAT32_EXACT``), then the others (large integers, real values) in
    float64, so that one wide column never makes every product float64. ``copies``: (position, position of an
    identical column drawn): equal on every item, so equal sums. ``derived``: (position, listed number, its
    columns): a column equal on every item to the sum of those listed columns (an untyped count and its
    per-type counts), whose sums are the sum of theirs. Integer counts sum exactly in any grouping, so the
    sums are those of drawing every column, to the bit (tests/test_bootstrap_plan.py).
    """

    n_columns: int
    parts: list[tuple[np.ndarray, np.ndarray]]
    copies: list[tuple[int, int]]
    derived: list[tuple[int, int, np.ndarray]]

    def assemble(self, drawn: list[np.ndarray], listed: list[np.ndarray]) -> np.ndarray:
        """Return sums[group, replicate, column] of every column from the parts' and the listed matrices' sums."""
        shape = drawn[0].shape[:2] if drawn else listed[self.derived[0][1]].shape[:2]
        sums = np.empty(shape + (self.n_columns,), dtype=np.float64)
        for (positions, _), found in zip(self.parts, drawn):
            sums[:, :, positions] = found
        for position, number, columns in self.derived:
            sums[:, :, position] = listed[number][:, :, columns].sum(axis=2)
        for position, source in self.copies:
            sums[:, :, position] = sums[:, :, source]
        return sums


PLAN_ROWS = 1 << 15  # rows of a per-type matrix summed at once when checking which columns it gives (ColumnPlan)
STAT_BLOCK = 512  # statistics evaluated together: bounds memory at leaderboard scale
# ... and at most this many values (statistic x group x replicate, 8 bytes each, 128 MiB) per block, so the
# larger B of resamples = "auto" (tens of thousands) evaluates fewer statistics at a time, not more memory.
BLOCK_VALUES = 1 << 24


def stage_line(name: str, seconds: float, detail: str = "") -> None:
    """Print one finished stage with its time on stderr, over whatever progress bar the line holds."""
    text = f"{name}: {seconds:.1f} s" + (f" ({detail})" if detail else "")
    print(f"\r{text}".ljust(BAR_WIDTH + 1), file=sys.stderr, flush=True)


BAR_WIDTH = 72  # characters the bootstrap's bar line takes (cleared by the next stage line)
BAR_AFTER = 1.0  # seconds: a bootstrap shorter than this draws no bar
BAR_EVERY = 0.1  # seconds between redraws


class Progress:
    """Bootstrap progress on a terminal (stderr): a bar once the bootstrap runs for a while, silent otherwise."""

    def __init__(self, enabled: bool, total_items: int, resamples: int = 0):
        self.enabled, self.total, self.done = enabled, max(total_items, 1), 0
        self.resamples = resamples
        self.started = self.drawn_at = time.perf_counter()
        self.drawn = False

    def stage(self, name: str) -> Callable[[int], None] | None:
        if not self.enabled:
            return None

        def advance(items: int) -> None:
            self.done += items
            now = time.perf_counter()
            elapsed = now - self.started
            if elapsed < BAR_AFTER or now - self.drawn_at < BAR_EVERY:
                return
            self.drawn_at, self.drawn = now, True
            share = min(1.0, self.done / self.total)
            filled = round(24 * share)
            left = f", {elapsed / share - elapsed:.0f} s left" if share > 0.05 else ""
            line = f"bootstrap [{'#' * filled}{'.' * (24 - filled)}] {share:4.0%} {elapsed:.0f} s{left} ({name})"
            print(f"\r{line[:BAR_WIDTH].ljust(BAR_WIDTH)}", end="", file=sys.stderr, flush=True)

        return advance

    def finish(self) -> None:
        """Replace the bar with the bootstrap's time and number of replicates."""
        if self.enabled:
            stage_line(
                "bootstrap",
                time.perf_counter() - self.started,
                f"{self.resamples:,} replicates" if self.resamples else "",
            )


class Stopwatch:
    """Wall time per pipeline stage, for the benchmark script and the build log, and the CPU time the process
    spent meanwhile (``cpu``: every thread's, user and system; a stage that keeps two cores busy takes about
    twice its wall time, one that runs on one core about its wall time).

    Stages nest (the per-type bootstrap runs inside the analyses): time spent in an inner stage counts for it
    alone, so the stages add up to the whole.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._inner: list[tuple[float, float]] = []  # per open stage, the wall and CPU time its inner stages took

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started, started_cpu = time.perf_counter(), time.process_time()
        self._inner.append((0.0, 0.0))
        try:
            yield
        finally:
            elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
            inner, inner_cpu = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed - inner
            self.cpu[name] = self.cpu.get(name, 0.0) + elapsed_cpu - inner_cpu
            if self._inner:
                outer, outer_cpu = self._inner[-1]
                self._inner[-1] = (outer + elapsed, outer_cpu + elapsed_cpu)


class Stages:
    """Times each stage of a command; prints them on a terminal (progress), stays quiet otherwise.

    Here, not in site.py, so that `refsens-report audit` does not import the site's renderer (Jinja2, Markdown):
    about 0.1 s of a 25,000-item audit.
    """

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
            stage_line(name, elapsed)


def language_key(language: str) -> int:
    """Return a stable integer for a language code: its random stream does not depend on the other languages."""
    return int.from_bytes(hashlib.sha256(language.encode("utf-8")).digest()[:8], "big")


class Estimator:
    """Estimates statistics on item sets of one record: strata by language, items ordered by id."""

    def __init__(
        self,
        record: Record,
        counts: ItemCounts,
        config: Config,
        progress: Progress,
        stopwatch: Stopwatch,
        run: Callable[..., Any] | None = None,
    ):
        """``run``: where the bootstrap's chunks run (``engine.open_engine``); None, this machine's threads."""
        self.counts, self.config, self.progress, self.stopwatch = counts, config, progress, stopwatch
        self.run = run
        # per stream: (mask, column index, sums, groups, items per group, items per group and replicate) of the
        # last draws
        self._drawn: dict[str, tuple[np.ndarray, dict[Column, int], np.ndarray, list[str], np.ndarray, np.ndarray]] = {}
        self._listed: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # Listed key -> (its mask, its sums)
        self.languages = record.languages
        self.language = record.table.language
        # Draws index items in id order within a language, so results do not depend on line order.
        self.id_order = np.argsort(record.table.ids, kind="stable")
        # `[record] cluster`: each item's cluster (numbered in canonical order), or None: every item its own
        self.cluster = None if config.cluster is None else cluster_codes(record.table, config.cluster)

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

    def units(self, mask: np.ndarray) -> tuple[list[str], list[np.ndarray], list[np.ndarray] | None]:
        """Return (languages, items per language, cluster bounds per language or None): what the bootstrap draws.

        Without a cluster key the items are in id order and every item is its own cluster (None); with one,
        each language's items are in cluster order (clusters.cluster_order) with where each cluster starts.
        """
        languages, members = self.strata(mask)
        if self.cluster is None:
            return languages, members, None
        ordered = [cluster_order(items, self.cluster) for items in members]
        return languages, [items for items, _ in ordered], [bounds for _, bounds in ordered]

    def remote_columns(self, columns: list[Column]) -> Any:
        """Return the statistics' count columns as a source a partitioned record's Dask workers compute where its
        items are (``workers.PartitionedRun``: never on the client), or None: the client draws them itself."""
        if self.cluster is not None or not hasattr(self.run, "column_source"):
            return None
        return self.run.column_source(columns, self.counts)

    def listed_source(self, one: Listed) -> Any:
        """Return a listed matrix as a source to draw: its columns as the workers compute them
        (``remote_columns``) when its matrix is left to build and its columns are known, else its matrix."""
        remote = self.remote_columns(list(one.columns)) if one.values is None and one.columns else None
        if remote is not None:
            return replace(remote, resamples=one.resamples)
        made = one.made()
        return matrix_source(made.values, made.items, made.resamples)

    def draw(
        self,
        sources: list[Any],
        mask: np.ndarray,
        stream: str,
        resamples: int,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Return (sums per source, items drawn per group and replicate or None) on the masked items' draws.

        With clusters a replicate draws whole clusters, so how many items it holds varies: a column of ones
        is drawn with the sources, and rates divide by it. Without clusters every replicate of a language
        holds its n items (None).
        """
        languages, members, bounds = self.units(mask)
        ones = [] if bounds is None else [matrix_source(np.ones((len(mask), 1), dtype=np.uint8))]
        with self.stopwatch.stage("bootstrap"):
            sums = getattr(self.run, "resampled_sums", resampled_sums)(  # a partitioned record's: workers.py
                list(sources) + ones,
                members,
                resamples,
                subset_seed(self.config.audit.seed, stream),
                progress,
                stratum_keys=[language_key(language) for language in languages],
                run=self.run,
                clusters=bounds,
            )
        if bounds is None:
            return sums, None
        return sums[:-1], sums[-1][:, :, 0]

    def environment(
        self, columns: list[Column], mask: np.ndarray, stream: str, listed: tuple[Listed, ...] = ()
    ) -> tuple[list[str], np.ndarray, Env]:
        """Return (groups, items per group, sums) for the masked items: each language, then pooled.

        The draws depend only on the seed, the stream and the items, so two calls on the same item set
        are paired replicate by replicate. ``listed`` matrices are drawn in the same pass (their sums kept
        for ``estimate_listed``).
        """
        columns = list(dict.fromkeys(columns))
        drawn = self._drawn.get(stream)
        if (
            not listed
            and drawn is not None
            and np.array_equal(drawn[0], mask)
            and all(column in drawn[1] for column in columns)
        ):
            # a later analysis on the same item set (the leaderboard): its sums are already drawn
            _, index, sums, groups, n_items, n = drawn
            return groups, n_items, Env(lambda column: sums[:, :, index[column]], n)
        languages, members = self.strata(mask)
        index = {column: position for position, column in enumerate(columns)}
        resamples = self.config.audit.resamples
        remote = self.remote_columns(columns)
        if remote is not None:  # a partitioned record's workers compute the columns where its items are
            sources = [remote] + [self.listed_source(one) for one in listed]
            (sums, *listed_sums), drawn_items = self.draw(sources, mask, stream, resamples, self.progress.stage(stream))
        else:
            with self.stopwatch.stage("counts"):
                listed = tuple(one.made() for one in listed)
                plan = self.column_plan(columns, mask, listed, resamples, max(len(items) for items in members))
            sources = [matrix_source(matrix) for _, matrix in plan.parts]
            sources += [matrix_source(one.values, one.items, one.resamples) for one in listed]
            found, drawn_items = self.draw(sources, mask, stream, resamples, self.progress.stage(stream))
            parts = len(plan.parts)
            sums, listed_sums = plan.assemble(found[:parts], found[parts:]), found[parts:]
        for one, found in zip(listed, listed_sums):
            self._listed[one.key] = (mask.copy(), found)
        n_items = np.array([len(m) for m in members] + [int(mask.sum())])
        groups = languages + [POOLED]
        n = n_items[:, None].astype(np.float64) if drawn_items is None else drawn_items
        self._drawn[stream] = (mask.copy(), index, sums, groups, n_items, n)
        env = Env(lambda column: sums[:, :, index[column]], n)
        return groups, n_items, env

    def column_plan(
        self, columns: list[Column], mask: np.ndarray, listed: tuple[Listed, ...], resamples: int, largest: int
    ) -> ColumnPlan:
        """Return how to draw ``columns`` (``ColumnPlan``) on the masked items, beside the ``listed`` matrices.

        ``largest``: the most items a stratum of the draw has. Every shortcut is checked on the data itself: a
        column is read off others only where its values equal theirs on every masked item.
        """
        counts = self.counts
        integer = [counts.is_integer(column) for column in columns]
        values = self.integer_columns([column for column, whole in zip(columns, integer) if whole])
        derived: list[tuple[int, int, np.ndarray]] = []
        done: set[int] = set()
        for number, one in enumerate(listed):
            if not one.columns or one.resamples < resamples or not isinstance(one.values, np.ndarray):
                continue  # its sums do not cover every replicate of the stream, or a sparse matrix
            where = {column: k for k, column in enumerate(one.columns)}
            types = list(dict.fromkeys(column.type for column in one.columns))
            candidates: list[tuple[int, np.ndarray]] = []  # (position, its per-type columns in the matrix)
            for position, column in enumerate(columns):
                if position in done or column.kind not in ("tp", "size") or column.type or column not in values:
                    continue
                parts = [where.get(replace(column, type=kind)) for kind in types]
                if column.kind == "tp" and None in parts:  # tp is symmetric: the per-type columns may name b first
                    parts = [where.get(replace(column, a=column.b, b=column.a, type=kind)) for kind in types]
                if None not in parts:
                    candidates.append((position, np.array(parts, dtype=np.int64)))
            if not candidates:
                continue
            # every candidate's per-type sum against its own values on the drawn items, reading the matrix once
            # (a block of its rows at a time); the drawn items it does not list count zero in it
            equal = np.ones(len(candidates), dtype=bool)
            picks = np.stack([picked for _, picked in candidates])  # candidate, type
            drawn = np.flatnonzero(mask[one.items])
            for first in range(0, len(drawn), PLAN_ROWS):
                chosen = drawn[first : first + PLAN_ROWS]
                summed = one.values[chosen][:, picks].sum(axis=2, dtype=np.int64)  # item, candidate
                found = one.items[chosen]
                for k, (position, _) in enumerate(candidates):
                    equal[k] = equal[k] and np.array_equal(summed[:, k], values[columns[position]][found])
            unlisted = mask.copy()
            unlisted[one.items] = False
            for k, (position, picked) in enumerate(candidates):
                if equal[k] and not values[columns[position]][unlisted].any():
                    derived.append((position, number, picked))
                    done.add(position)
        copies: list[tuple[int, int]] = []
        first: dict[tuple[int, int], list[int]] = {}  # (sum, max) -> positions of distinct integer columns found
        summed = {position for position, _, _ in derived}  # found first: a column equal to one is a copy of it
        for position in sorted(summed) + [k for k in range(len(columns)) if k not in summed]:
            column = columns[position]
            if column not in values or (position in done and position not in summed):
                continue
            found = values[column]
            key = (int(found.sum(dtype=np.int64)), int(found.max(initial=0)))
            same = next((other for other in first.get(key, []) if np.array_equal(values[columns[other]], found)), None)
            if same is None or position in summed:
                first.setdefault(key, []).append(position)
            else:
                copies.append((position, same))
                done.add(position)
        # integer columns whose every sum over a block is exact in float32, then the others (float64)
        limit = FLOAT32_EXACT / (FLOAT32_MARGIN * max(1, min(BLOCK_ITEMS, largest)))
        small = [
            position
            for position, column in enumerate(columns)
            if position not in done and column in values and int(values[column].max(initial=0)) < limit
        ]
        picked_small = set(small)
        wide = [position for position in range(len(columns)) if position not in done and position not in picked_small]
        parts = [
            (np.array(positions, dtype=np.int64), counts.matrix([columns[k] for k in positions]))
            for positions in (small, wide)
            if positions
        ]
        if not parts and not derived:  # no column at all: one empty matrix keeps the draws' shape
            parts = [(np.zeros(0, dtype=np.int64), counts.matrix([]))]
        return ColumnPlan(len(columns), parts, copies, derived)

    def integer_columns(self, columns: list[Column]) -> dict[Column, np.ndarray]:
        """Return the integer columns' per-item values, by column: the built-in kinds (intersections and sizes:
        numpy passes without the GIL) computed on ``threads.WORKERS`` threads, each on its own, the kinds the
        analyses declare on this thread (their own caches are theirs). Each column is the same array either way."""
        counts = self.counts
        built_in = [column for column in columns if column.kind not in counts.kinds]
        found = dict(zip(built_in, threaded_map(counts.integers, built_in)))
        return {column: found[column] if column in found else counts.integers(column) for column in columns}

    def estimate(
        self, stats: list[Stat], mask: np.ndarray, subset: str, stream: str, listed: tuple[Listed, ...] = ()
    ) -> list[dict[str, Any]]:
        """Return one row per statistic and group (each language, then pooled) on the masked items.

        ``listed``: count matrices drawn in the same pass, for ``estimate_listed`` to read later.
        """
        if not mask.any() or not (stats or listed):
            return []
        groups, n_items, env = self.environment(
            [c for stat in stats for c in stat.expr.columns()], mask, stream, listed
        )
        if not stats:
            return []
        jackknife = self.jackknife_envs(stats, mask) if self.config.audit.interval == "bca" else None
        with self.stopwatch.stage("analyses"):
            populations = {
                column: (self.population_sizes(column, mask), self.cluster_counts(mask, column))
                for column in {stat.expr.population() for stat in stats} - {None}
            }
            return self._rows(
                stats, subset, groups, n_items, env, populations, jackknife, n_clusters=self.cluster_counts(mask)
            )

    def estimate_listed(
        self,
        stats: list[Stat],
        columns: list[Column],
        items: np.ndarray | None,
        values: np.ndarray | None,
        mask: np.ndarray,
        subset: str,
        stream: str,
        resamples: int,
        key: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return one row per statistic and group from count columns given as a matrix, on a stream's first
        ``resamples`` replicates.

        ``values[k, c]`` is column c on item ``items[k]`` (items not listed count zero: per-type counts). The
        draws are those ``estimate`` makes on the same stream and item set, replicate by replicate, so these
        statistics are paired with every other on the stream. With ``key`` naming a ``Listed`` drawn with the
        stream (``estimate(..., listed)``), its sums are read, not drawn again (``items``/``values`` may be
        None); otherwise they are drawn here and not kept, so a caller can estimate many columns block by
        block in bounded memory.
        """
        if not stats or not mask.any():
            return []
        languages, members = self.strata(mask)
        index = {column: position for position, column in enumerate(columns)}
        drawn = self._listed.pop(key, None) if key is not None else None
        n_items = np.array([len(m) for m in members] + [int(mask.sum())])
        n = n_items[:, None].astype(np.float64)
        stream_drawn = self._drawn.get(stream)
        if drawn is not None and np.array_equal(drawn[0], mask) and drawn[1].shape[1] == resamples + 1:
            sums = drawn[1]  # drawn with the stream's other columns (``estimate(..., listed)``)
            if self.cluster is not None and stream_drawn is not None and np.array_equal(stream_drawn[0], mask):
                n = stream_drawn[5][:, : resamples + 1]  # the stream's items per replicate, the same draws
        else:
            if values is None or items is None:
                raise ValueError(f"listed counts {key!r} were not drawn with their stream: pass their values")
            (sums,), drawn_items = self.draw([matrix_source(values, items)], mask, stream, resamples)
            n = n if drawn_items is None else drawn_items
        env = Env(lambda column: sums[:, :, index[column]], n)
        jackknife = self.jackknife_envs(stats, mask) if self.config.audit.interval == "bca" else None
        with self.stopwatch.stage("analyses"):
            return self._rows(
                stats,
                subset,
                languages + [POOLED],
                n_items,
                env,
                jackknife=jackknife,
                resamples=resamples,
                n_clusters=self.cluster_counts(mask),
            )

    def drawn(self, key: str) -> bool:
        """Return whether a ``Listed`` of this key was drawn with its stream and awaits ``estimate_listed``."""
        return key in self._listed

    def jackknife_envs(self, stats: list[Stat], mask: np.ndarray) -> list[Env]:
        """Return, per language and pooled, sums with each item left out once (the BCa acceleration's jackknife).

        Leave-one-out sums are the total minus one item's counts, so the jackknife costs one evaluation per
        item, on the per-item counts already computed. Pooled leaves out each item of the item set.
        """
        columns = list(dict.fromkeys(c for stat in stats for c in stat.expr.columns()))
        index = {column: position for position, column in enumerate(columns)}
        matrix = np.column_stack([self.counts.values(column) for column in columns])
        _, members = self.strata(mask)
        envs = []
        for items in [*members, np.flatnonzero(mask)]:
            if self.cluster is None:
                left_out = matrix[items].sum(axis=0)[None, :] - matrix[items]  # item, column
                n = np.array([[len(items) - 1.0]])
            else:  # leave one cluster out: the total minus the cluster's summed counts
                # clusters in order of their first item here, so singleton clusters sum as items do, to the bit
                _, first, inverse = np.unique(self.cluster[items], return_index=True, return_inverse=True)
                rank = np.empty(len(first), dtype=np.int64)
                rank[np.argsort(first, kind="stable")] = np.arange(len(first))
                order = np.argsort(rank[inverse.reshape(-1)], kind="stable")
                ordered = items[order]
                bounds = np.r_[np.flatnonzero(np.r_[True, np.diff(rank[inverse.reshape(-1)][order]) != 0]), len(items)]
                per_cluster = np.add.reduceat(matrix[ordered], bounds[:-1], axis=0, dtype=np.float64)
                left_out = per_cluster.sum(axis=0)[None, :] - per_cluster  # cluster, column
                n = (len(items) - np.diff(bounds)).astype(np.float64)[None, :]
            envs.append(Env(lambda column, sums=left_out: sums[None, :, index[column]], n))
        return envs

    def cluster_counts(self, mask: np.ndarray, column: Column | None = None) -> np.ndarray:
        """Return, per language and pooled, how many clusters the masked items make (with ``column``: the
        clusters holding a masked item with a positive value in it). Without a cluster key: items."""
        _, members = self.strata(mask)
        if column is not None:
            positive = self.counts.values(column) > 0
            members = [items[positive[items]] for items in members]
        found = [count_clusters(items, self.cluster) for items in members]
        return np.array(found + [sum(found)])

    def population_sizes(self, column: Column, mask: np.ndarray) -> np.ndarray:
        """Return, per language and pooled, how many masked items have a positive value in ``column``."""
        positive = self.counts.values(column) > 0
        _, members = self.strata(mask)
        return np.array([int(positive[m].sum()) for m in members] + [int(positive[mask].sum())])

    def _rows(
        self,
        stats: list[Stat],
        subset: str,
        groups: list[str],
        n_items: np.ndarray,
        env: Env,
        populations: dict[Column, tuple[np.ndarray, np.ndarray]] | None = None,
        jackknife: list[Env] | None = None,
        resamples: int | None = None,
        n_clusters: np.ndarray | None = None,
    ) -> list[dict[str, Any]]:
        """Evaluate every statistic on the sums; intervals and p-values from the replicates.

        ``n_items`` is the item set's size per group, except for a ratio over a sub-population (``populations``,
        keyed by the ratio's denominator column: its items and clusters), whose rows count that sub-population.
        ``n_clusters``: the clusters per group (None: as many as items). ``jackknife``:
        leave-one-out sums per group (BCa intervals); ``resamples``: the replicates in the sums (default: B).
        """
        populations = populations or {}
        rows: list[dict[str, Any]] = []
        replicates = self.config.audit.resamples if resamples is None else resamples
        size = max(1, min(STAT_BLOCK, BLOCK_VALUES // (len(groups) * (replicates + 1))))
        for first in range(0, len(stats), size):
            block = stats[first : first + size]
            values = np.stack([env.value(stat.expr) for stat in block])  # stat, group, 1 + replicate
            if jackknife is None:
                low, high = percentile_interval(values[:, :, 1:], self.config.audit.confidence)
            else:
                low, high = np.empty(values.shape[:2]), np.empty(values.shape[:2])
                for g, jack in enumerate(jackknife):
                    leave_one_out = np.stack([jack.value(stat.expr)[0] for stat in block])  # stat, item
                    low[:, g], high[:, g] = bca_interval(
                        values[:, g, 1:], values[:, g, 0], leave_one_out, self.config.audit.confidence
                    )
                    jack.forget()
            p_values = bootstrap_p_value(values[:, :, 1:])
            for s, stat in enumerate(block):
                counted, clusters = populations.get(stat.expr.population(), (n_items, n_clusters))  # type: ignore[arg-type]
                clusters = counted if clusters is None else clusters
                for g, language in enumerate(groups):
                    rows.append(
                        make_row(
                            analysis=stat.analysis,
                            statistic=stat.statistic,
                            rule=stat.rule,
                            language=language,
                            output=stat.output,
                            output_2=stat.output_2,
                            reference=stat.reference,
                            reference_2=stat.reference_2,
                            subset=subset,
                            policy=stat.policy,
                            estimate=values[s, g, 0],
                            ci_low=low[s, g],
                            ci_high=high[s, g],
                            p_value=p_values[s, g] if stat.tested else None,
                            n_items=counted[g],
                            type=stat.type,
                            n_clusters=clusters[g],
                        )
                    )
            env.forget()  # memoised terms of this block are not needed by the next
        return rows
