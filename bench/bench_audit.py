"""Benchmark the audit at paper scale and 10x: wall time per stage and peak memory.

    .venv/bin/python bench/bench_audit.py              # paper scale (25,000 items) and 10x (250,000)
    .venv/bin/python bench/bench_audit.py --scale 1    # paper scale only
    .venv/bin/python bench/bench_audit.py --rules strict relaxed overlap   # with the overlap rule too

Each scale runs in a fresh subprocess so its peak RSS is its own. The record is generated here (fast,
deterministic): 6 languages, annotators A and B and the delivered gold on every item, a reviewer on
~10.5 %, ~3.5 spans per item per labelling, ~2 % duplicated items. Full audit: 2,000 replicates, strict
and relaxed (``--rules`` to change), all four duplicate policies. Targets (2 cores): 1x <= 3 s and
<= 1 GB; 10x <= 20 s and <= 4 GB.

The last columns compare the audit with the standard library's ``json.loads`` of the record's lines (issue 29:
the 25,000-item audit should cost at most 1.2x that). Both are in-process seconds without the interpreter's
start-up or imports: "total" is load through write as timed here; "json.loads" is
``[json.loads(line) for line in handle]`` over the same file, timed in a fresh Python process of its own (a
fresh heap, as the audit's child has: the collector's passes over the decoded objects are most of its time),
the median of three. "ratio" is total / json.loads.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LANGUAGES = ("ar", "hi", "pl", "pt", "sv", "zh")
TYPES = ("NAME", "PHONE", "ADDRESS", "EMAIL", "ID_NUMBER", "TAX_NUMBER")


def generate(path: Path, items: int, seed: int = 0) -> None:
    """Write a synthetic record of the benchmark's shape as JSON Lines."""
    rng = np.random.default_rng(seed)
    n_spans = rng.poisson(3.5, size=items)
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(items):
            language = LANGUAGES[index % len(LANGUAGES)]
            starts = np.sort(rng.choice(4000, size=n_spans[index], replace=False)) * 10
            lengths = rng.integers(3, 9, size=n_spans[index])
            types = rng.integers(0, len(TYPES), size=n_spans[index])
            truth = [[int(s), int(s + n), TYPES[t]] for s, n, t in zip(starts, lengths, types)]

            def vary(spans: list[list], shift_rate: float) -> list[list]:
                out = []
                for start, end, label in spans:
                    roll = rng.random()
                    if roll < 0.05:
                        continue  # a miss
                    if roll < 0.05 + shift_rate:
                        start = max(0, start - 2)  # a boundary convention
                    out.append([start, end, label])
                return out

            annotator_a, annotator_b = vary(truth, 0.08), vary(truth, 0.12)
            third_pass = bool(rng.random() < 0.35)
            if annotator_a == annotator_b or third_pass:
                delivered = annotator_a if rng.random() < 0.5 else annotator_b
            else:
                delivered = annotator_a if rng.random() < 0.987 else annotator_b
            labellings = {"annotator_a": annotator_a, "annotator_b": annotator_b, "delivered": delivered}
            if rng.random() < 0.105:
                labellings["reviewer"] = vary(truth, 0.1)
            meta = {"third_pass": third_pass}
            if rng.random() < 0.02:
                meta["dup_key"] = f"dup-{index // 2}"  # pairs of neighbours share a key
            line = {"id": f"{language}-{index:07d}", "language": language, "labellings": labellings, "meta": meta}
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")


CONFIG = """[dataset]
name = "benchmark"
version = "bench"
[record]
path = "record.jsonl"
[roles]
annotators = ["annotator_a", "annotator_b"]
outputs = ["annotator_a", "annotator_b"]
references = ["delivered", "reviewer"]
[audit]
resamples = {resamples}
rules = {rules}
"""


# The baseline: the standard library decoding each line, in a fresh interpreter; prints its seconds.
LOADS = """import json, sys, time
started = time.perf_counter()
with open(sys.argv[1], encoding="utf-8") as handle:
    items = [json.loads(line) for line in handle]
print(time.perf_counter() - started)
"""


def json_loads_seconds(path: Path, runs: int = 3) -> float:
    """Return the seconds the standard library's json.loads takes over the record's lines: the median of ``runs``
    fresh processes (one run of a 0.6 s baseline moves the ratio by a third on a shared machine)."""
    seconds = [
        float(
            subprocess.run([sys.executable, "-c", LOADS, str(path)], check=True, capture_output=True, text=True).stdout
        )
        for _ in range(runs)
    ]
    return sorted(seconds)[len(seconds) // 2]


def run_one(items: int, resamples: int, rules: list[str]) -> dict:
    """Generate, audit and write one record; return stage seconds and peak RSS (this process)."""
    from refsens_report.audit import Stopwatch, run_audit
    from refsens_report.config import load_config
    from refsens_report.results import write_results

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        started = time.perf_counter()
        generate(folder / "record.jsonl", items)
        generate_seconds = time.perf_counter() - started
        (folder / "refsens.toml").write_text(CONFIG.format(resamples=resamples, rules=json.dumps(rules)))
        stopwatch = Stopwatch()
        total = time.perf_counter()
        results = run_audit(load_config(folder / "refsens.toml"), stopwatch=stopwatch)
        with stopwatch.stage("write"):
            write_results(results, folder / "out")
        seconds = time.perf_counter() - total
        loads_seconds = json_loads_seconds(folder / "record.jsonl")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "items": items,
        "generate_s": generate_seconds,
        "stages": stopwatch.seconds,
        "total_s": seconds,
        "json_loads_s": loads_seconds,
        "peak_rss_mb": peak_mb,
        "rows": len(results.rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, nargs="*", default=[1, 10], help="multiples of 25,000 items")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--rules", nargs="+", default=["strict", "relaxed"], help="e.g. strict relaxed overlap")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.resamples, args.rules)))
        return
    print(
        f"{'items':>9} {'load':>6} {'counts':>7} {'bootstrap':>9} {'analyses':>8} {'write':>6} {'total':>6} "
        f"{'peak MB':>8} {'json.loads':>10} {'ratio':>6}"
    )
    for scale in args.scale:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(25_000 * scale),
                "--resamples",
                str(args.resamples),
                "--rules",
                *args.rules,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        figures = json.loads(out.stdout)
        stages = figures["stages"]
        print(
            f"{figures['items']:>9,} {stages.get('load', 0):6.2f} {stages.get('counts', 0):7.2f} "
            f"{stages.get('bootstrap', 0):9.2f} {stages.get('analyses', 0):8.2f} {stages.get('write', 0):6.2f} "
            f"{figures['total_s']:6.2f} {figures['peak_rss_mb']:8.0f} {figures['json_loads_s']:10.2f} "
            f"{figures['total_s'] / figures['json_loads_s']:5.2f}x"
        )


if __name__ == "__main__":
    main()
