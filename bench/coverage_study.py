"""Coverage study: do the audit's nominal 95 % intervals cover the simulator's true values 95 % of the time?

    .venv/bin/python bench/coverage_study.py                       # 200 records of 6,000 items, 500 replicates
    .venv/bin/python bench/coverage_study.py --records 50 --jobs 2
    .venv/bin/python bench/coverage_study.py --block-items 40   # strata drawn in canonical blocks of 40 items

``--block-items`` makes every stratum draw the way a stratum of over 65,536 items does (block totals, then
each block on its own stream), so the study checks that scheme's coverage on records small enough to repeat.

One population (the default ``SimulationParameters``). Its true values are the audit's point estimates on
one very large record from the same generator, with the reviewer on every item: the reviewer sample is
random, so the audited items of every record are a sample of that same population, and re-annotating all
of them makes the truth record's audited set ten times larger for the same cost. Then ``--records``
independent records of ``--items`` items are simulated and audited with the paired stratified bootstrap,
and each interval for swap ``delta``, neutrality ``skew`` and interaction ``swing`` (per language and
pooled) is checked against the truth. Coverage is printed with a Wilson 95 % interval for the coverage
itself, the mean interval width, and how many intervals missed low (interval below the truth) or high.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from refsens_report import bootstrap  # noqa: E402
from refsens_report.audit import audit_record  # noqa: E402
from refsens_report.config import Config, load_config  # noqa: E402
from refsens_report.demo import SimulationParameters, render_config, simulate_rows  # noqa: E402
from refsens_report.record import Item, Record  # noqa: E402

STATISTICS = (("swap", "delta"), ("neutrality", "skew"), ("interaction", "swing"))
# The study's population: the simulator's defaults without model outputs (the two annotator passes scored,
# as in the paper and in docs/simulation.md's coverage tables; models add swings, not new kinds of statistic).
POPULATION = SimulationParameters(models=())
KEY_COLUMNS = ("analysis", "statistic", "rule", "output", "output_2", "reference", "reference_2", "language")
TRUTH_SEED = 999_999  # far from the records' seeds 1..records
Key = tuple[str, ...]


def to_record(rows: list[dict[str, Any]]) -> Record:
    """Return the canonical record of simulated rows, built in memory (no JSON round trip)."""
    items = tuple(
        Item(
            id=row["id"],
            language=row["language"],
            labellings={name: tuple(tuple(span) for span in spans) for name, spans in row["labellings"].items()},
            text=row["text"],
            meta=row["meta"],
        )
        for row in rows
    )
    return Record(items=items)


def studied_rows(rows: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Return the delta, skew and swing rows of an audit, keyed by what they measure."""
    wanted = set(STATISTICS)
    return {
        tuple(row[column] for column in KEY_COLUMNS): row
        for row in rows
        if (row["analysis"], row["statistic"]) in wanted
    }


def audit_config(folder: Path, resamples: int, seed: int, interval: str = "percentile") -> Config:
    """Write the simulator's config into a scratch folder and load it with the study's bootstrap settings."""
    (folder / "record.jsonl").write_text("", encoding="utf-8")  # the record is passed in memory
    text = re.sub(r"(?m)^resamples = .*$", f"resamples = {resamples}", render_config(POPULATION, 0))
    (folder / "refsens.toml").write_text(text.replace('datasheet = "datasheet.md"\n', ""), encoding="utf-8")
    config = load_config(folder / "refsens.toml")
    return replace(config, audit=replace(config.audit, seed=seed, interval=interval))


def true_values(truth_items: int) -> dict[Key, float]:
    """Return every studied statistic's point estimate on one very large record (reviewer on every item)."""
    parameters = replace(POPULATION, items=truth_items, reviewer_share=1.0)
    record = to_record(simulate_rows(parameters, seed=TRUTH_SEED))
    with tempfile.TemporaryDirectory() as folder:
        results = audit_record(record, audit_config(Path(folder), resamples=2, seed=0))
    return {key: row["estimate"] for key, row in studied_rows(results.rows).items()}


def audit_one(
    index: int, items: int, resamples: int, interval: str = "percentile"
) -> dict[Key, tuple[float | None, float | None, float | None]]:
    """Simulate record ``index`` and return (estimate, ci_low, ci_high) for every studied statistic."""
    record = to_record(simulate_rows(replace(POPULATION, items=items), seed=index))
    with tempfile.TemporaryDirectory() as folder:
        results = audit_record(record, audit_config(Path(folder), resamples=resamples, seed=index, interval=interval))
    return {key: (row["estimate"], row["ci_low"], row["ci_high"]) for key, row in studied_rows(results.rows).items()}


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Return the Wilson score interval for a binomial proportion."""
    if trials == 0:
        return math.nan, math.nan
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return centre - half, centre + half


def describe(key: Key) -> tuple[str, str, str]:
    """Return (statistic, rule, labellings) columns for one statistic's key."""
    analysis, statistic, rule, output, output_2, reference, reference_2, _ = key
    short = {"annotator_a": "A", "annotator_b": "B", "delivered": "deliv", "reviewer": "rev"}
    if statistic == "delta":
        return "delta", rule, f"{short[output]}: {short[reference]}-{short[reference_2]}"
    if statistic == "skew":
        return "skew", rule or "-", f"{short[reference]}: {short[output]}-{short[output_2]}"
    return "swing", rule, f"{short[output]}-{short[output_2]}: {short[reference]}-{short[reference_2]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200, help="simulated records to audit (default 200)")
    parser.add_argument("--items", type=int, default=6000, help="items per record (default 6,000)")
    parser.add_argument("--resamples", type=int, default=500, help="bootstrap replicates per audit (default 500)")
    parser.add_argument(
        "--interval",
        choices=("percentile", "bca"),
        default="percentile",
        help="interval method of the audits (default percentile)",
    )
    parser.add_argument("--seed", type=int, default=0, help="offset of the records' seeds (default 0)")
    parser.add_argument("--truth-items", type=int, default=200_000, help="items in the truth record (default 200,000)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1; the machine is shared)")
    parser.add_argument("--block-items", type=int, help="items per canonical block (default: bootstrap.BLOCK_ITEMS)")
    args = parser.parse_args()
    if args.block_items:
        bootstrap.BLOCK_ITEMS = args.block_items  # set before the pool forks, so the workers draw the same way

    started = time.perf_counter()
    truth = true_values(args.truth_items)
    print(
        f"truth: {args.truth_items:,} items, reviewer on every item ({time.perf_counter() - started:.0f} s)",
        file=sys.stderr,
    )

    seeds = [args.seed + index for index in range(1, args.records + 1)]
    outcomes: list[dict[Key, tuple[float | None, float | None, float | None]]] = []
    with ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else _Inline() as pool:
        for done, outcome in enumerate(
            pool.map(
                audit_one, seeds, [args.items] * len(seeds), [args.resamples] * len(seeds), [args.interval] * len(seeds)
            ),
            start=1,
        ):
            outcomes.append(outcome)
            if sys.stderr.isatty():
                print(f"\raudited {done}/{len(seeds)} records", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)

    print(
        f"Coverage of nominal 95 % intervals: {args.records} records of {args.items:,} items, "
        f"{args.resamples} bootstrap replicates each ({args.interval} intervals); truth from {args.truth_items:,} "
        "items; "
        f"canonical blocks of {bootstrap.BLOCK_ITEMS:,} items."
    )
    print(
        f"{'statistic':<9} {'rule':<7} {'labellings':<22} {'language':<8} {'truth':>7} {'mean est':>8} "
        f"{'coverage':>8} {'Wilson 95%':>15} {'width':>6} {'low':>4} {'high':>4} {'undef':>5}"
    )
    per_statistic: dict[str, list[int]] = {}
    flagged = []
    for key in sorted(truth, key=lambda k: (STATISTICS.index(k[:2]), k[2:7], _language_rank(k[7]))):
        target = truth[key]
        if target is None:
            continue
        intervals = [outcome.get(key, (None, None, None)) for outcome in outcomes]
        defined = [(e, lo, hi) for e, lo, hi in intervals if lo is not None and hi is not None]
        covered = sum(lo <= target <= hi for _, lo, hi in defined)
        missed_low = sum(hi < target for _, lo, hi in defined)
        missed_high = sum(lo > target for _, lo, hi in defined)
        undefined = len(intervals) - len(defined)
        low, high = wilson(covered, len(intervals))
        coverage = covered / len(intervals)
        width = sum(hi - lo for _, lo, hi in defined) / max(len(defined), 1)
        mean_estimate = sum(e for e, _, _ in defined) / max(len(defined), 1)
        statistic, rule, labellings = describe(key)
        print(
            f"{statistic:<9} {rule:<7} {labellings:<22} {key[7]:<8} {target:7.2f} {mean_estimate:8.2f} "
            f"{100 * coverage:7.1f}% [{100 * low:5.1f}, {100 * high:5.1f}] {width:6.2f} {missed_low:4d} "
            f"{missed_high:4d} {undefined:5d}"
        )
        tally = per_statistic.setdefault(statistic + (" pooled" if key[7] == "pooled" else " per language"), [0, 0])
        tally[0] += covered
        tally[1] += len(intervals)
        if coverage < 0.90:
            flagged.append(f"{statistic} {rule} {labellings} {key[7]}: {100 * coverage:.1f}%")
    print()
    print("All cells of a statistic together (cells share records, so this interval is only indicative):")
    for name, (covered, total) in per_statistic.items():
        low, high = wilson(covered, total)
        print(f"  {name:<20} {100 * covered / total:5.1f}% [{100 * low:5.1f}, {100 * high:5.1f}] of {total} intervals")
    print("Cells below 90 %: " + ("; ".join(flagged) if flagged else "none"))
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def _language_rank(language: str) -> tuple[int, str]:
    """Sort languages alphabetically with pooled last, as the results do."""
    return (language == "pooled", language)


class _Inline:
    """A stand-in for a process pool that maps in this process (for --jobs 1)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, function, *iterables):  # noqa: ANN001, ANN201
        return map(function, *iterables)


if __name__ == "__main__":
    main()
