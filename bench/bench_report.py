"""Time `make report` on the demo record: each stage of the build, and the two commands end to end.

    .venv/bin/python bench/bench_report.py              # the demo as `make report` builds it
    .venv/bin/python bench/bench_report.py --items 1500 # a quick look
    .venv/bin/python bench/bench_report.py --outputs 0  # the annotators alone, as the demo was before issue 12

Targets (issue 4): the whole `make report` <= 15 s, the PDF stage <= 5 s. Wall-clock seconds on this machine;
the CPU seconds beside them show how much of the wall time was waiting for a shared CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run_child  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent
TARGETS = {"make report": 15.0, "pdf": 5.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=None, help="demo size (default: the simulator's, as make report)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--outputs",
        type=int,
        default=None,
        help="model outputs beside the annotators (default: the simulator's, as make report)",
    )
    args = parser.parse_args()
    binary = Path(sys.executable).parent / "refsens-report"
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "1767225600")}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        demo, out = Path(scratch) / "demo", Path(scratch) / "site"
        simulate = [str(binary), "simulate", str(demo), "--seed", str(args.seed)]
        if args.items:
            simulate += ["--items", str(args.items)]
        if args.outputs is not None:
            simulate += ["--outputs", str(args.outputs)]
        simulate_run = run_child(simulate, env=env, check=True)
        build_run = run_child(
            [str(binary), "build", str(demo / "refsens.toml"), "--out", str(out), "--force"], env=env, check=True
        )

        # the same build in this process, stage by stage
        from refsens_report.config import load_config
        from refsens_report.site import build_site

        os.environ["SOURCE_DATE_EPOCH"] = env["SOURCE_DATE_EPOCH"]
        timings: dict[str, float] = {}
        details: dict[str, float] = {}
        cpu_start = time.process_time()
        build_site(
            load_config(demo / "refsens.toml"),
            Path(scratch) / "site-staged",
            force=True,
            timings=timings,
            details=details,
        )
        build_cpu_in_process = time.process_time() - cpu_start
        items = sum(1 for _ in (demo / "record.jsonl").open(encoding="utf-8"))

    given = (f" --items {args.items}" if args.items else "") + (
        f" --outputs {args.outputs}" if args.outputs is not None else ""
    )
    print(f"demo record: {items:,} items (simulate --seed {args.seed}{given})")
    print(f"{'stage':<12}{'seconds':>10}")
    for name, seconds in timings.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else ("  ok" if seconds <= target else f"  over the {target:g} s target")
        print(f"{name:<12}{seconds:>10.2f}{verdict}")
    print(f"{'all stages':<12}{sum(timings.values()):>10.2f}   (CPU of this process {build_cpu_in_process:.2f} s)")
    print("\nwithin the PDF stage (seconds since the page was handed over; the warm-up ran during the audit):")
    for name, seconds in details.items():
        print(f"  {name:<38}{seconds:>6.2f}")
    total = simulate_run.wall + build_run.wall
    verdict = "ok" if total <= TARGETS["make report"] else f"over the {TARGETS['make report']:g} s target"
    print("\nend to end, as `make report` runs it (fresh processes):")
    print(f"  refsens-report simulate  {simulate_run.wall:6.2f} s wall, {simulate_run.cpu:6.2f} s CPU")
    print(f"  refsens-report build     {build_run.wall:6.2f} s wall, {build_run.cpu:6.2f} s CPU")
    print(f"  total                    {total:6.2f} s wall  {verdict}")
    print(f"load average now: {' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
