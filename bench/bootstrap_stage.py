"""Time the bootstrap stage alone (``bootstrap.resampled_sums``) on count columns shaped as the million record's.

    PYTHONPATH=. .venv/bin/python bench/bootstrap_stage.py [--items 1000000] [--resamples 2000]

The sources are those the million record's stream draws (docs/scale.md, "What dominates"): 134 small integer
columns (uint8, up to 66, a fifth of the rows zero), 18 float64 columns (12 integer counts up to about 900 and
6 real values) and the per-type counts (416 uint8 columns up to 6, 29 % of the cells nonzero) listed for the
items that have some. Items are interleaved over 6 strata, as the record's languages are. The columns are
random, so no block collapses (as in the record). Generating them is not timed. Prints wall and CPU seconds of
both threads, the peak RSS, the memory above the inputs, and a hash of the sums, so two versions of the
bootstrap can be checked for the same sums (run each with ``PYTHONPATH`` set to its tree). At a million items
it needs about 2.5 GB; run it under the machine-wide lock (``flock /tmp/refsens-bench-million.lock ...``)
beside other benchmarks.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

from refsens_report import bootstrap


def stream(items: int, seed: int = 11) -> list[bootstrap.Source]:
    """Return the three sources: small integer counts, float64 columns, per-type counts (listed)."""
    rng = np.random.default_rng(seed)
    small = np.minimum(rng.poisson(1.5, size=(items, 134)), 66).astype(np.uint8)
    small[:, :24] = np.minimum(rng.poisson(20.0, size=(items, 24)), 66)
    small[rng.random(items) < 0.18] = 0
    wide = np.empty((items, 18))
    wide[:, :12] = rng.poisson(100.0, size=(items, 12))
    wide[:, 12:] = rng.random((items, 6)) * 10
    typed = np.empty((items, 416), dtype=np.uint8)
    for first in range(0, items, 1 << 16):  # a few rows at a time: drawn as float64 and int64 first
        rows = min(1 << 16, items - first)
        present = rng.random((rows, 416)) < 0.29
        typed[first : first + rows] = present * np.minimum(1 + rng.poisson(0.5, size=(rows, 416)), 6)
    typed[rng.random(items) < 0.06] = 0
    listed = np.flatnonzero(typed.any(axis=1))
    sources = [bootstrap.matrix_source(small), bootstrap.matrix_source(wide)]
    return sources + [bootstrap.matrix_source(typed[listed], listed)]


def status(field: str) -> int:
    """Return a field of /proc/self/status in bytes: VmRSS (resident now) or VmHWM (the peak since the last reset)."""
    with open("/proc/self/status") as found:
        line = next(line for line in found if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    sources = stream(args.items)
    strata = [np.arange(k, args.items, 6) for k in range(6)]
    with open("/proc/self/clear_refs", "w") as clear:  # the peak from here on, not the inputs' generation
        clear.write("5")
    before = status("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    sums = bootstrap.resampled_sums(
        sources, strata, args.resamples, np.random.SeedSequence(7), stratum_keys=list(range(len(strata)))
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = status("VmHWM")
    digest = hashlib.sha256(b"".join(found.tobytes() for found in sums)).hexdigest()[:16]
    print(
        f"{args.items:,} items, B = {args.resamples:,}: wall {wall:.1f} s, CPU {cpu:.1f} s, peak {peak / 1e9:.2f} GB"
        f" ({(peak - before) / 1e9:.2f} GB above the inputs), sums {digest}"
    )


if __name__ == "__main__":
    main()
