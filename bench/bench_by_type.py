"""Per-type results' cost against the number of span types: it should grow about linearly (issue 18).

    .venv/bin/python bench/bench_by_type.py                 # 3,000 items, 4 outputs, 2 references
    .venv/bin/python bench/bench_by_type.py --types 10 100 1000 --items 3000

A synthetic record (every labelling on every item, a few spans per item, types drawn uniformly) is audited
with B = 2,000 and strict only; the by_type analysis (its per-type counts, its bootstrap in blocks of types
and its rows) is timed alone, wall and CPU, and divided by the number of types.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from refsens_report import audit
from refsens_report.analyses import by_type, registry
from refsens_report.config import AuditSettings, Config, ReportSettings, Roles
from refsens_report.record import Item, Record

OUTPUTS = ("system_1", "system_2", "system_3", "system_4")
REFERENCES = ("delivered", "reviewer")


def record(items: int, types: int, seed: int = 0) -> Record:
    rng = np.random.default_rng(seed)
    names = [f"T{number:04d}" for number in range(types)]
    built = []
    for index in range(items):
        gold = [(start, start + 4, names[int(rng.integers(types))]) for start in range(0, 60, 10) if rng.random() < 0.4]
        labellings = {}
        for name in (*OUTPUTS, *REFERENCES):
            # each labelling keeps most gold spans, retypes some and adds a few
            spans = [
                (s, e, names[int(rng.integers(types))] if rng.random() < 0.1 else t)
                for s, e, t in gold
                if rng.random() < 0.9
            ]
            spans += [(61, 64, names[int(rng.integers(types))])] if rng.random() < 0.1 else []
            labellings[name] = tuple(spans)
        built.append(Item(id=f"i{index:06d}", language=("en", "de")[index % 2], labellings=labellings))
    return Record(items=tuple(built))


def timed_audit(items: int, types: int, resamples: int) -> tuple[float, float, int]:
    """Return (wall, CPU) seconds of the by_type analysis and its number of rows."""
    spent: dict[str, float] = {}
    finish = by_type.finish

    def timing(context, estimator, rows):
        wall, cpu = time.perf_counter(), time.process_time()
        found = finish(context, estimator, rows)
        spent["wall"], spent["cpu"] = time.perf_counter() - wall, time.process_time() - cpu
        return found

    analyses = tuple(replace(a, finish=timing) if a.key == "by_type" else a for a in registry.ANALYSES)
    scratch = Path(tempfile.mkdtemp())
    (scratch / "bench.toml").write_text("# the config is built in bench_by_type.py\n", encoding="utf-8")
    config = Config(
        path=scratch / "bench.toml",
        name="bench",
        version="1",
        record_format="jsonl",
        record_options=None,
        roles=Roles(annotators=(), outputs=OUTPUTS, references=REFERENCES),
        audit=AuditSettings(rules=("strict",), resamples=resamples, family="all"),
        report=ReportSettings(),
    )
    original = audit.ANALYSES
    audit.ANALYSES = analyses
    try:
        results = audit.audit_record(record(items, types), config)
    finally:
        audit.ANALYSES = original
    return spent["wall"], spent["cpu"], sum(row["analysis"] == "by_type" for row in results.rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--types", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'types':>6}{'rows':>9}{'wall':>9}{'CPU':>9}{'CPU ms per type':>17}")
    for types in args.types:
        wall, cpu, rows = timed_audit(args.items, types, args.resamples)
        print(f"{types:>6}{rows:>9,}{wall:>8.1f}s{cpu:>8.1f}s{1000 * cpu / types:>17.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
