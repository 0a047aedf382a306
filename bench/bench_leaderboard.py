"""Benchmark the whole audit at leaderboard scale: 30 outputs x 4 references x 2 rules, 2,000 replicates.

    .venv/bin/python bench/bench_leaderboard.py                 # the issue-6 target: whole audit < 10 s
    .venv/bin/python bench/bench_leaderboard.py --profile 25    # and the 25 costliest functions (cProfile)

The record has the size of the CoNLL-2003 test set (3,453 sentences, one language, ~1.65 entities per
sentence) and is generated here, deterministically: a gold; four references that re-annotate a few per cent
of its entities (type changes, boundary shifts, additions, removals), the first being the gold itself; and
30 systems that miss, mistype, mis-bound and invent entities at rates spread so that neighbours on the
leaderboard are close. No annotators (as in the CoNLL-2003 example): the plan is swap, range, interaction
and the leaderboard. The audit runs in a fresh subprocess so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SENTENCES = 3453
TYPES = ("PER", "LOC", "ORG", "MISC")
REFERENCES = ("original", "conllpp", "reconll", "cleanconll")
REANNOTATED = {"original": 0.0, "conllpp": 0.03, "reconll": 0.04, "cleanconll": 0.07}  # share of entities changed


def perturb(rng: np.random.Generator, spans: list[list], change: float, spurious: float) -> list[list]:
    """Return a noisy copy of spans: each is kept, dropped, retyped or re-bounded; a few are invented."""
    out = []
    for start, end, label in spans:
        roll = rng.random()
        if roll < change / 4:
            continue  # missed
        if roll < change / 2:
            label = TYPES[(TYPES.index(label) + 1 + int(rng.integers(3))) % len(TYPES)]  # mistyped
        elif roll < change:
            end = end + 2 if rng.random() < 0.5 else max(start + 1, end - 2)  # boundary
        out.append([start, end, label])
    if rng.random() < spurious:
        start = int(rng.integers(0, 40)) * 10 + 5  # off the gold grid, so it never matches by chance
        out.append([start, start + 4, TYPES[int(rng.integers(len(TYPES)))]])
    return out


def generate(path: Path, outputs: int, seed: int = 0) -> list[str]:
    """Write the synthetic record as JSON Lines; return the output names."""
    rng = np.random.default_rng(seed)
    names = [f"system-{index:02d}" for index in range(outputs)]
    error_rate = np.linspace(0.06, 0.30, outputs)  # close neighbours: pairs that the reference can flip
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(SENTENCES):
            count = int(rng.poisson(1.65))
            starts = np.sort(rng.choice(40, size=count, replace=False)) * 10
            gold = [[int(s), int(s + 1 + rng.integers(1, 8)), TYPES[int(rng.integers(len(TYPES)))]] for s in starts]
            labellings: dict[str, list] = {}
            for reference in REFERENCES:
                labellings[reference] = perturb(rng, gold, REANNOTATED[reference], REANNOTATED[reference] / 4)
            for name, rate in zip(names, error_rate):
                labellings[name] = perturb(rng, gold, float(rate), float(rate) / 2)
            line = {"id": f"en-{index:05d}", "language": "en", "labellings": labellings}
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    return names


CONFIG = """[dataset]
name = "leaderboard benchmark"
version = "bench"
[record]
path = "record.jsonl"
[roles]
annotators = []
outputs = {outputs}
references = {references}
[audit]
resamples = {resamples}
"""


def run_one(outputs: int, resamples: int, profile: int) -> dict:
    """Generate, audit and write one record; return stage seconds, peak RSS and the profile's top lines."""
    from refsens_report.audit import Stopwatch, run_audit
    from refsens_report.config import load_config
    from refsens_report.results import write_results

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        started = time.perf_counter()
        names = generate(folder / "record.jsonl", outputs)
        generate_seconds = time.perf_counter() - started
        config_text = CONFIG.format(
            outputs=json.dumps(names), references=json.dumps(list(REFERENCES)), resamples=resamples
        )
        (folder / "refsens.toml").write_text(config_text)
        config = load_config(folder / "refsens.toml")
        stopwatch = Stopwatch()
        profiler = cProfile.Profile() if profile else None
        total, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        results = run_audit(config, stopwatch=stopwatch)
        with stopwatch.stage("write"):
            write_results(results, folder / "out")
        if profiler:
            profiler.disable()
        seconds, cpu_seconds = time.perf_counter() - total, time.process_time() - cpu
    report = ""
    if profiler:
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(profile)
        report = buffer.getvalue()
    rows = results.rows
    return {
        "outputs": outputs,
        "generate_s": generate_seconds,
        "stages": stopwatch.seconds,
        "total_s": seconds,
        "cpu_s": cpu_seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rows": len(rows),
        "leaderboard_rows": sum(row["analysis"] == "leaderboard" for row in rows),
        "profile": report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outputs", type=int, default=30)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--profile", type=int, default=0, help="print the N functions with most own time")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.outputs, args.resamples, args.profile)))
        return
    command = [
        sys.executable,
        __file__,
        "--child",
        "--outputs",
        str(args.outputs),
        "--resamples",
        str(args.resamples),
        "--profile",
        str(args.profile),
    ]
    figures = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    stages = figures["stages"]
    print(
        f"{figures['outputs']} outputs x {len(REFERENCES)} references x 2 rules, {SENTENCES:,} sentences, "
        f"{args.resamples:,} replicates: {figures['rows']:,} rows ({figures['leaderboard_rows']:,} leaderboard)"
    )
    print(
        f"{'load':>6} {'counts':>7} {'bootstrap':>9} {'analyses':>8} {'write':>6} {'total':>6} {'cpu':>6} "
        f"{'peak MB':>8}"
    )
    print(
        f"{stages.get('load', 0):6.2f} {stages.get('counts', 0):7.2f} {stages.get('bootstrap', 0):9.2f} "
        f"{stages.get('analyses', 0):8.2f} {stages.get('write', 0):6.2f} {figures['total_s']:6.2f} "
        f"{figures['cpu_s']:6.2f} {figures['peak_rss_mb']:8.0f}"
    )
    print(
        f"(seconds of wall time per stage; cpu = process time, all threads; record generated in "
        f"{figures['generate_s']:.1f} s, not counted; target: total < 10 s)"
    )
    if figures["profile"]:
        print(figures["profile"])


if __name__ == "__main__":
    main()
