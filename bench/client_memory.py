"""Where the audit's own process (the client of a Dask run) holds its memory, stage by stage and object by object.

    PYTHONPATH=. .venv/bin/python bench/client_memory.py CONFIG [--listings] [--json OUT.json]

Runs ``audit.run_audit`` on CONFIG in this process (for the client: a partitioned record with
``[engine] backend = "dask"``, as bench/bench_million.py's ``million-partitioned`` case writes it) with every stage
wrapped: loading the record, the counts, the duplicate groups, the item sets, each analysis's ``spans`` (what it
caches of the record's spans before they are freed), ``estimates``,
``finish`` and ``summary``, each stream's bootstrap (``Estimator.estimate``) and the engine. For each it prints the
process's resident memory before and after, and its peak while it ran (the kernel's VmHWM, reset before the stage
through /proc/self/clear_refs; a stage's peak includes the stages it nests). Then, with the record and counts still
held, the bytes of every array of the span table and of ``ItemCounts`` (its cached columns grouped by kind), what
the estimator keeps of its draws and the results rows. With ``--listings``, last, the listing files written as a
build writes them (``results.write_files`` into a temporary folder, once the audit's objects are let go, as a
build's are), as a stage of its own, and their sizes. Linux only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import numpy as np

from refsens_report import audit, estimator, subsets
from refsens_report.analyses.registry import ANALYSES
from refsens_report.config import load_config
from refsens_report.results import write_files
from refsens_report.table import ReleasedSpans

MB = 1 << 20


def status() -> dict[str, int]:
    """Return this process's VmRSS and VmHWM, in bytes."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


def reset_peak() -> None:
    """Reset VmHWM to the current VmRSS (Linux 4.0 and later)."""
    Path("/proc/self/clear_refs").write_text("5")


class Stages:
    """Nested stages: each's resident memory before and after, and its peak (the peaks of the stages inside too)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self._open: list[dict[str, Any]] = []
        self._started = itertools.count()

    def wrap(self, name: str | Callable[..., str], function: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(function)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            label = name(*args, **kwargs) if callable(name) else name
            now = status()
            if self._open:  # the enclosing stage's peak so far, before it is reset
                self._open[-1]["peak"] = max(self._open[-1]["peak"], now["VmHWM"])
            reset_peak()
            entry = {"stage": label, "depth": len(self._open), "before": now["VmRSS"], "peak": now["VmRSS"]}
            entry["order"] = next(self._started)
            self._open.append(entry)
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                after = status()
                self._open.pop()
                entry["peak"] = max(entry["peak"], after["VmHWM"])
                entry["after"] = after["VmRSS"]
                entry["seconds"] = time.perf_counter() - started
                self.rows.append(entry)
                if self._open:
                    self._open[-1]["peak"] = max(self._open[-1]["peak"], entry["peak"])

        return wrapped


def deep_bytes(array: Any) -> int:
    """Return an array's bytes, with the str objects of an object array (a str's ``sys.getsizeof``)."""
    if array is None or isinstance(array, ReleasedSpans):  # freed by the audit (SpanTable.release_spans)
        return 0
    if isinstance(array, np.ndarray) and array.dtype == object:
        return array.nbytes + sum(sys.getsizeof(value) for value in array.tolist() if value is not None)
    if hasattr(array, "nbytes"):
        return int(array.nbytes)
    if hasattr(array, "data") and hasattr(array, "indices"):  # a scipy sparse matrix
        return int(array.data.nbytes + array.indices.nbytes + array.indptr.nbytes)
    return sys.getsizeof(array)


def table_bytes(table: Any) -> dict[str, int]:
    """Return the bytes of each array of a SpanTable."""
    found = {}
    for name in ("ids", "language", "present", "item", "labelling", "start", "end", "type", "type_names", "text"):
        found[name] = deep_bytes(getattr(table, name))
    for key, values in table.meta.items():
        found[f"meta[{key}]"] = deep_bytes(values)
    found["record_order"] = deep_bytes(table.record_order)
    return found


def counts_bytes(counts: Any) -> dict[str, int]:
    """Return the bytes of ItemCounts' arrays: the span ids and their maps, and the cache by kind of column."""
    found = {"present": counts.present.nbytes}
    if hasattr(counts, "_span_id"):  # each span's ids, before branch compact
        found["_by_labelling"] = counts._by_labelling.nbytes
    for attribute in ("_span_id", "_id_item"):
        for rule, array in getattr(counts, attribute, {}).items():
            found[f"{attribute}[{rule}]"] = array.nbytes
    for attribute in ("_strict_to_relaxed", "_strict_type", "_strict_start", "_strict_end"):
        found[attribute] = getattr(counts, attribute).nbytes
    found["_marks"] = sum(array.nbytes for array in counts._marks.values())
    found["_derived"] = sum(array.nbytes for array in counts._derived.values())
    by_kind: dict[str, list[int]] = {}
    for key, value in counts._cache.items():
        kind = key[0] if isinstance(key, tuple) and isinstance(key[0], str) else type(key).__name__
        if not isinstance(kind, str):
            kind = "other"
        entry = by_kind.setdefault(f"_cache[{kind}]", [0, 0])
        entry[0] += 1
        entry[1] += sum(deep_bytes(part) for part in value) if isinstance(value, tuple) else deep_bytes(value)
    for kind, (number, size) in by_kind.items():
        found[f"{kind} x{number}"] = size
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", type=Path)
    parser.add_argument("--listings", action="store_true", help="build the listings too, as the build does")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    stages = Stages()
    held: dict[str, Any] = {}

    def keep(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(function)
        def kept(*a: Any, **k: Any) -> Any:
            held[name] = function(*a, **k)
            return held[name]

        return kept

    audit.load_record = stages.wrap("load the record", keep("record", audit.load_record))
    audit.ItemCounts = stages.wrap("ItemCounts (span ids)", keep("counts", audit.ItemCounts))
    subsets.DuplicateGroups.from_record = classmethod(
        stages.wrap("duplicate groups", subsets.DuplicateGroups.from_record.__func__)
    )
    audit.build_subsets = stages.wrap("item sets", audit.build_subsets)
    audit.open_engine = stages.wrap("engine (start)", audit.open_engine)
    audit.input_hashes = stages.wrap("input hashes", audit.input_hashes)
    audit.record_summary = stages.wrap("record summary", audit.record_summary)
    original_init = estimator.Estimator.__init__

    def init(self: Any, *a: Any, **k: Any) -> None:
        original_init(self, *a, **k)
        held["estimator"] = self

    estimator.Estimator.__init__ = init
    estimator.Estimator.estimate = stages.wrap(
        lambda self, stats, mask, subset, stream, listed=(): (
            f"bootstrap {stream} ({len(stats)} stats, {len(listed)} listed)"
        ),
        estimator.Estimator.estimate,
    )
    estimator.Estimator.estimate_listed = stages.wrap(
        lambda self, stats, *a, **k: f"  listed {a[5] if len(a) > 5 else k.get('stream')} ({len(stats)} stats)",
        estimator.Estimator.estimate_listed,
    )
    for analysis in ANALYSES:
        for part in ("spans", "estimates", "finish", "summary"):
            function = getattr(analysis, part)
            if function is not None:
                object.__setattr__(analysis, part, stages.wrap(f"{analysis.key}.{part}", function))

    started = time.perf_counter()
    results = audit.run_audit(load_config(args.config))
    total = time.perf_counter() - started
    objects: dict[str, dict[str, int]] = {}
    record, counts, drawn = held.get("record"), held.get("counts"), held.get("estimator")
    if record is not None:
        objects["SpanTable"] = table_bytes(record.table)
    if counts is not None:
        objects["ItemCounts"] = counts_bytes(counts)
    if drawn is not None:
        objects["Estimator"] = {
            "id_order": drawn.id_order.nbytes,
            "language": drawn.language.nbytes,
            f"_drawn x{len(drawn._drawn)} (sums per stream)": sum(entry[2].nbytes for entry in drawn._drawn.values()),
            f"_listed x{len(drawn._listed)}": sum(entry[1].nbytes for entry in drawn._listed.values()),
        }
    objects["results"] = {
        f"rows x{len(results.rows):,}": sum(
            sys.getsizeof(row) + sum(sys.getsizeof(value) for value in row.values()) for row in results.rows
        ),
        "summaries (JSON)": len(json.dumps(results.summaries, default=str)),
    }
    if args.listings:  # what a build writes after the audit (AuditResults.files, made a file at a time)
        del record, counts, drawn
        held.clear()  # the audit's objects, let go as a build lets them go
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            written = stages.wrap("listings (results.write_files, as a build)", write_files)(results, folder)
            total += time.perf_counter() - started
            objects["listing files (bytes on disk)"] = {path.name: path.stat().st_size for path in written}
    peak = max(row["peak"] for row in stages.rows)
    order = sorted(stages.rows, key=lambda row: row["order"])
    print(f"{'stage':<58} {'before':>8} {'peak +':>8} {'after +':>8} {'s':>7}   (MB)")
    for row in order:
        print(
            f"{'  ' * row['depth'] + row['stage']:<58} {row['before'] / MB:8.0f} "
            f"{(row['peak'] - row['before']) / MB:8.0f} {(row['after'] - row['before']) / MB:8.0f} "
            f"{row['seconds']:7.1f}"
        )
    print(f"process peak (VmHWM over the stages): {peak / MB:,.0f} MB; audit {total:.0f} s")
    for owner, sizes in objects.items():
        print(f"\n{owner}: {sum(sizes.values()) / MB:,.1f} MB")
        for name, size in sorted(sizes.items(), key=lambda pair: -pair[1]):
            print(f"  {name:<50} {size / MB:10.1f}")
    if args.json:
        args.json.write_text(json.dumps({"stages": stages.rows, "objects": objects, "peak": peak}, indent=1))


if __name__ == "__main__":
    main()
