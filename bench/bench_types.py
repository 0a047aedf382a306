"""Cost of many span types on a large record: time, peak memory and site size (issue 24, item 10).

    .venv/bin/python bench/bench_types.py                          # 500, 2,000, 4,000 and 8,000 types
    .venv/bin/python bench/bench_types.py --types 500 2000 --resamples 200 --no-build

A record of 25,000 items (two annotators, four outputs, two references; about 580,000 spans in all, types
drawn uniformly) is written once per type count; ``audit`` and ``build --no-pdf`` then run as child processes
(the command line, as a user runs it). Each child's wall time and peak resident memory (its own ru_maxrss,
from wait4: bench/measure.py) are printed, with the size of the published version folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run_child  # noqa: E402

ANNOTATORS = ("a", "b")
OUTPUTS = ("s1", "s2", "s3", "s4")
REFERENCES = ("gold", "review")
NOISE = {"a": 0.1, "b": 0.15, "s1": 0.2, "s2": 0.25, "s3": 0.3, "s4": 0.35, "gold": 0.02, "review": 0.05}
CONFIG = """[dataset]
name = "types benchmark"
version = "bench"
[record]
path = "record.jsonl"
[roles]
annotators = {annotators}
outputs = {outputs}
references = {references}
[audit]
resamples = {resamples}
"""


def write_record(path: Path, types: int, items: int, seed: int = 0) -> int:
    """Write the record; return its number of spans (over every labelling)."""
    rng = np.random.default_rng(seed)
    names = [f"TYPE-{k:05d}" for k in range(types)]
    total = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(items):
            gold = [
                (slot * 20, slot * 20 + 5, names[int(rng.integers(types))]) for slot in range(int(rng.integers(1, 6)))
            ]
            labellings = {}
            for name, rate in NOISE.items():
                spans = []
                for start, end, label in gold:
                    roll = rng.random()
                    if roll < rate / 2:
                        label = names[int(rng.integers(types))]
                    elif roll < rate:
                        continue
                    spans.append([start, end, label])
                labellings[name] = spans
                total += len(spans)
            handle.write(json.dumps({"id": f"x-{index:05d}", "language": "en", "labellings": labellings}) + "\n")
    return total


def folder_size(path: Path) -> float:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--types", type=int, nargs="+", default=[500, 2000, 4000, 8000])
    parser.add_argument("--items", type=int, default=25_000)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--no-build", action="store_true", help="time the audit only")
    args = parser.parse_args()
    os.environ["SOURCE_DATE_EPOCH"] = "1795996800"
    cli = [sys.executable, "-m", "refsens_report"]
    print(
        f"{'types':>6} {'spans':>8} {'audit s':>8} {'audit MB':>9} {'build s':>8} {'build MB':>9} {'site MB':>8}",
        flush=True,
    )
    for types in args.types:
        with tempfile.TemporaryDirectory(prefix=f"bench-types-{types}-") as scratch:
            folder = Path(scratch)
            spans = write_record(folder / "record.jsonl", types, args.items)
            (folder / "refsens.toml").write_text(
                CONFIG.format(
                    annotators=json.dumps(list(ANNOTATORS)),
                    outputs=json.dumps(list(OUTPUTS)),
                    references=json.dumps(list(REFERENCES)),
                    resamples=args.resamples,
                ),
                encoding="utf-8",
            )
            audit = run_child([*cli, "audit", "refsens.toml", "--out", "results", "--quiet"], folder)
            audit_s, audit_mb = audit.wall, audit.peak_mb
            build_s = build_mb = site_mb = float("nan")
            if not args.no_build:
                build = run_child(
                    [*cli, "build", "refsens.toml", "--no-pdf", "--draft", "--out", "site", "--quiet"], folder
                )
                build_s, build_mb = build.wall, build.peak_mb
                site_mb = folder_size(folder / "site") if build.code == 0 else float("nan")
            print(
                f"{types:>6} {spans:>8,} {audit_s:>8.1f} {audit_mb:>9.0f} {build_s:>8.1f} {build_mb:>9.0f} "
                f"{site_mb:>8.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
