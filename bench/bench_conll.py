"""The CoNLL-2003 example's whole build against its audit alone: the report may cost at most 1.5 audits more.

    .venv/bin/python bench/bench_conll.py            # 3 runs of each, alternating; needs ../shared/data/conll
    .venv/bin/python bench/bench_conll.py --runs 5

Target (issue 12): `build` <= 2.5 x `audit` on examples/conll2003/refsens.toml (14 systems x 4 golds, 3,453
sentences, B chosen automatically). Wall-clock medians on this machine, runs alternating build / audit so a
drift in the machine's speed hits both; the CPU seconds beside them show how much of the wall time was
waiting for a shared CPU. The ratio is taken run by run and its median printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import Child, run_child  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent
CONFIG = PROJECT / "examples" / "conll2003" / "refsens.toml"
TARGET = 2.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--config", type=Path, default=CONFIG)
    args = parser.parse_args()
    binary = str(Path(sys.executable).parent / "refsens-report")
    timings: dict[str, list[Child]] = {"audit": [], "build": []}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.runs):
            build = [binary, "build", str(args.config), "--out", f"{scratch}/site", "--force"]
            timings["build"].append(run_child(build, check=True))
            timings["audit"].append(
                run_child([binary, "audit", str(args.config), "--out", f"{scratch}/audit"], check=True)
            )
    print(f"{'step':<8}{'wall median':>13}{'min':>8}{'max':>8}{'CPU median':>12}")
    for step, values in timings.items():
        walls = [value.wall for value in values]
        print(
            f"{step:<8}{statistics.median(walls):>12.1f}s{min(walls):>7.1f}s{max(walls):>7.1f}s"
            f"{statistics.median(value.cpu for value in values):>11.1f}s"
        )
    ratios = [build.wall / audit.wall for build, audit in zip(timings["build"], timings["audit"])]
    ratio = statistics.median(ratios)
    print(f"build / audit: median {ratio:.2f} (runs {', '.join(f'{r:.2f}' for r in ratios)}; target <= {TARGET})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
