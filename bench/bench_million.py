"""Benchmark the audit at a million items, the paper's shape at 250,000, and the Dask backend (issue 17).

    .venv/bin/python bench/bench_million.py                         # every case below
    .venv/bin/python bench/bench_million.py --case million --case paper-parquet
    .venv/bin/python bench/bench_million.py --items 200000          # the leaderboard cases at another size

Cases (each audited in a fresh subprocess, so its peak RSS is its own; records are generated first, untimed;
audits of 500,000 items or more queue on a machine-wide lock, so benchmarks started side by side run one at a time):
  million        1,000,000 items x 20 outputs x 4 references, 6 languages, Parquet (bench/generate_scale.py),
                 B = 2,000, strict + relaxed. Goal: <= 60 s and <= 8 GB on 2 cores.
  million-easy   the same shape where, as in real benchmarks, most items (80 %) are easy for every labelling and
                 the mistakes fall on the other 20 % (generate_scale.py --hard-share 0.2): many items share one
                 count vector, which the bootstrap sums once.
  million-dask   the million record and config with [engine] backend = "dask", workers = 2 (a local cluster the
                 audit starts and stops): the overhead of shipping blocks to worker processes.
  million-partitioned  the million record written by convert --partition-items 65536 (a folder of one file
                 per canonical block), audited with workers = 2: the workers read the partitions and build the
                 count blocks (refsens_report/workers.py); the peak is the client's own (VmHWM of this process).
  paper-jsonl    250,000 items of the paper's shape (bench/bench_audit.py: annotators A and B, the delivered
                 gold and a reviewer on ~10.5 %, duplicates, 6 languages) read from JSON Lines. Goal <= 20 s.
  paper-parquet  the same record converted to Parquet (refsens-report convert).

The table gives wall seconds per stage of ``audit.run_audit`` (stages nest: the per-type bootstrap counts as
bootstrap, not analyses), the results' write, the total, peak RSS, and the BLAS kernel that ran
(threadpoolctl; OPENBLAS_CORETYPE, when set, is printed: see the environment notes on benchmarking with it).
Under each case a "cpu" line gives the CPU seconds of every thread of the process in the same stages
(``Stopwatch.cpu``): about the wall seconds where a stage ran on one core, up to twice them where it kept
both cores of a 2-core machine busy, below them where it waited (for the disk, or for a core other jobs held).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CASES = ["million", "million-easy", "million-dask", "million-partitioned", "paper-jsonl", "paper-parquet"]
STAGES = ["load", "counts", "bootstrap", "analyses", "engine", "write"]  # engine: a Dask cluster started and stopped


def prepare(case: str, folder: Path, items: int) -> Path:
    """Write the case's record and config into ``folder`` (once per record); return the config."""
    if case.startswith("million"):
        easy = case == "million-easy"
        record = folder / ("leaderboard-easy" if easy else "leaderboard")
        if not (record / "record.parquet").exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "generate_scale.py"),
                    str(record),
                    "--items",
                    str(items),
                    *(["--hard-share", "0.2"] if easy else []),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        config = record / "refsens.toml"
        if case == "million-partitioned":
            parts = record / "partitions"
            if not parts.exists():
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "refsens_report",
                        "convert",
                        str(record / "record.parquet"),
                        str(parts),
                        "--partition-items",
                        "65536",
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            partitioned = record / "refsens-partitioned.toml"
            partitioned.write_text(
                config.read_text().replace('path = "record.parquet"', 'path = "partitions"')
                + '[engine]\nbackend = "dask"\nworkers = 2\n'
            )
            return partitioned
        if case == "million-dask":
            dask_config = record / "refsens-dask.toml"
            dask_config.write_text(config.read_text() + '[engine]\nbackend = "dask"\nworkers = 2\n')
            return dask_config
        return config
    from bench_audit import CONFIG, generate

    record = folder / "paper"
    if not (record / "record.jsonl").exists():
        record.mkdir(parents=True, exist_ok=True)
        generate(record / "record.jsonl", 250_000)
        (record / "refsens.toml").write_text(CONFIG.format(resamples=2000, rules='["strict", "relaxed"]'))
    if case == "paper-jsonl":
        return record / "refsens.toml"
    parquet = record / "refsens-parquet.toml"
    if not parquet.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "refsens_report",
                "convert",
                str(record / "record.jsonl"),
                str(record / "record.parquet"),
            ],
            check=True,
        )
        parquet.write_text(
            (record / "refsens.toml")
            .read_text()
            .replace('path = "record.jsonl"', 'format = "parquet"\npath = "record.parquet"')
        )
    return parquet


QUEUED_ITEMS = 500_000  # an audit this large peaks near 8 GB: two at once on a 24 GB machine could exhaust it
LOCK = Path(tempfile.gettempdir()) / "refsens-bench-million.lock"


@contextmanager
def one_at_a_time(queued: bool) -> Iterator[None]:
    """Hold the machine-wide lock while a large audit runs, so that benchmarks started side by side (by several
    engineers on one machine) queue instead of exhausting the memory and timing each other."""
    if not queued:
        yield
        return
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_one(config_path: Path) -> dict:
    """Audit and write one record in this process, as ``refsens-report audit`` does (results.json and results.csv,
    no listings: only the build writes them); return stage seconds, peak RSS and what ran."""
    from threadpoolctl import threadpool_info

    from refsens_report.audit import run_audit
    from refsens_report.config import load_config
    from refsens_report.estimator import Stopwatch
    from refsens_report.results import write_results

    stopwatch = Stopwatch()
    started, started_cpu = time.perf_counter(), time.process_time()
    results = run_audit(load_config(config_path), stopwatch=stopwatch)
    with tempfile.TemporaryDirectory() as out, stopwatch.stage("write"):
        write_results(results, Path(out) / "results")
    total, total_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    blas = [
        f"{info['internal_api']} {info.get('architecture', '')}".strip()
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return {
        "stages": stopwatch.seconds,
        "cpu": stopwatch.cpu,
        "total": total,
        "total_cpu": total_cpu,
        "rows": len(results.rows),
        "items": results.record["items"],
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "blas": ", ".join(blas),
        # the largest process this one started and waited for (a Dask worker of a local cluster): an upper
        # bound only, since a spawned child's figure starts from its parent's peak
        "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--items", type=int, default=1_000_000, help="items of the leaderboard record")
    parser.add_argument("--folder", type=Path, help="keep generated records here (default: a temporary folder)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child)))
        return
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print(
        f"OPENBLAS_CORETYPE={coretype or '(not set)'}; {os.cpu_count()} CPUs; command: "
        f"{' '.join([Path(sys.executable).name, 'bench/bench_million.py', *sys.argv[1:]])}"
    )
    print(
        f"{'case':<14} {'items':>9} "
        + " ".join(f"{stage:>9}" for stage in STAGES)
        + f" {'total s':>8} {'peak GB':>8} {'worker≤GB':>9} {'rows':>7}  blas"
    )
    with tempfile.TemporaryDirectory(prefix="bench-million-") as scratch:
        folder = args.folder or Path(scratch)
        for case in args.case or CASES:
            config = prepare(case, folder, args.items)
            with one_at_a_time(args.items >= QUEUED_ITEMS):
                out = subprocess.run([sys.executable, __file__, "--child", str(config)], capture_output=True, text=True)
            if out.returncode != 0:
                print(
                    f"{case:<14} failed: "
                    f"{out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
                )
                continue
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            stages = figures["stages"]
            print(
                f"{case:<14} {figures['items']:>9,} "
                + " ".join(f"{stages.get(stage, 0):9.1f}" for stage in STAGES)
                + f" {figures['total']:8.1f} {figures['peak_mb'] / 1024:8.2f} {figures['children_mb'] / 1024:9.2f}"
                + f" {figures['rows']:>7,}  {figures['blas']}",
            )
            print(
                f"{'  cpu':<14} {'':>9} "
                + " ".join(f"{figures['cpu'].get(stage, 0):9.1f}" for stage in STAGES)
                + f" {figures['total_cpu']:8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
