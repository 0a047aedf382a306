"""Time what the counts stage computes for alpha and gamma: alpha's coincidences, gamma's observed disorders and
its chance continua, for every pair the analyses report (the annotator passes, each pair of references).

    .venv/bin/python bench/generate_scale.py /tmp/scale200k --items 200000
    /usr/bin/time -f "%e s wall, %M KB peak" .venv/bin/python bench/bench_agreement.py /tmp/scale200k/refsens.toml

Prints wall and CPU seconds of each part (the record is loaded and counted first, untimed).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from refsens_report.analyses import alpha, gamma, pairs
from refsens_report.config import load_config
from refsens_report.counts import ItemCounts
from refsens_report.load import load_record


def main() -> None:
    import scipy.optimize  # noqa: F401  (imported before the clock starts)
    import scipy.sparse.csgraph  # noqa: F401

    config = load_config(sys.argv[1])
    counts = ItemCounts(load_record(config).table, config.roles.all_names)
    every = np.ones(counts.n_items, dtype=bool)
    found = pairs.pairs(config)
    parts = {
        "alpha": lambda a, b: alpha.coincidences(counts, a, b),
        "gamma observed": lambda a, b: gamma.observed(counts, a, b),
        "gamma chance": lambda a, b: gamma.expected_disorder(counts, a, b, every),
    }
    said = []
    for name, part in parts.items():
        wall, cpu = time.perf_counter(), time.process_time()
        for _, a, b in found:
            part(a, b)
        said.append(f"{name} {time.perf_counter() - wall:.1f} s ({time.process_time() - cpu:.1f} CPU)")
    print(f"{counts.n_items:,} items, {len(found)} pairs: " + "; ".join(said))


if __name__ == "__main__":
    main()
