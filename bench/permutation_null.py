"""Is the neutrality skew's permutation p uniform under a neutral reference, and small under the silent default?

    .venv/bin/python bench/permutation_null.py                  # 200 neutral records, 10 default ones
    .venv/bin/python bench/permutation_null.py --records 50     # quicker

Each record is what `refsens-report simulate DIR --neutral --items N --seed k` writes (k = 0, 1, ...): under the
neutral rule the delivered gold keeps A or B with probability ½ where they differ and no third pass fired, and the
adjudicator takes each disputed mention from either with probability ½, so the delivered gold is exchangeable
between the annotators: the null the test assumes. The full audit runs on each (20 bootstrap replicates: the
permutation p does not depend on them), and the pooled row of the delivered gold's skew is collected.

The p of a sign-flip test is discrete: with m informative items its null distribution is that of the two-sided
sign test, P(|2X − m| ≥ |T|) with X ~ Binomial(m, ½) and T = Σ dᵢ, which has an atom of about 0.11 at p = 1
when m is odd. A KS test of such p against the continuous uniform rejects for that alone, so the uniformity is
checked on the randomised p, P(|2X − m| > |T|) + U · P(|2X − m| = |T|) with U uniform, which is exactly uniform
under the null; the audit's own p is checked by the share of records below 0.01, 0.05 and 0.10 (at most the
level for a valid test) and by its distance from the exact sign-test p (Monte Carlo error only). Then the p of
the default (A-keeping) pipeline on a few records of the same size. About a second per record (the simulation
dominates); tests/test_permutation.py runs a small version on every test run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.demo import write_simulation


def delivered_test(folder: Path, seed: int, items: int, neutral: bool) -> tuple[float, int, int]:
    """Simulate one record, audit it; return the delivered gold's pooled permutation p, its m, and T = Σ dᵢ."""
    write_simulation(folder, items=items, seed=seed, neutral=neutral)
    config_path = folder / "refsens.toml"
    config_path.write_text(
        config_path.read_text(encoding="utf-8").replace("resamples = 2000", "resamples = 20"), encoding="utf-8"
    )
    results = run_audit(load_config(config_path))
    where = {"analysis": "neutrality", "reference": "delivered", "language": "pooled"}
    [permuted] = [
        row
        for row in results.rows
        if row["statistic"] == "skew_permutation_p" and all(row[key] == value for key, value in where.items())
    ]
    [skew] = [
        row
        for row in results.rows
        if row["statistic"] == "skew" and all(row[key] == value for key, value in where.items())
    ]
    # skew = 100 · Σ dᵢ / n: the sum is an integer
    return permuted["estimate"], permuted["n_items"], round(skew["estimate"] * skew["n_items"] / 100)


def sign_test(informative: int, total: int, uniform: float) -> tuple[float, float]:
    """Return (exact two-sided sign-test p, randomised p) of T = total with m = informative items."""
    if informative == 0:
        return 1.0, uniform
    values = np.arange(informative + 1)
    probabilities = stats.binom.pmf(values, informative, 0.5)
    statistics = np.abs(2 * values - informative)
    beyond = probabilities[statistics > abs(total)].sum()
    at = probabilities[statistics == abs(total)].sum()
    return min(1.0, beyond + at), beyond + uniform * at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200, help="neutral records (default 200)")
    parser.add_argument("--default-records", type=int, default=10, help="records of the default pipeline")
    parser.add_argument("--items", type=int, default=6000, help="items per record (about 10 %% audited)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        neutral = [delivered_test(Path(scratch) / f"n{seed}", seed, args.items, True) for seed in range(args.records)]
        default = [
            delivered_test(Path(scratch) / f"d{seed}", seed, args.items, False) for seed in range(args.default_records)
        ]
    p_values = np.array([p for p, _, _ in neutral])
    uniforms = np.random.default_rng(0).random(len(neutral))
    exact, randomised = np.array([sign_test(m, total, u) for (_, m, total), u in zip(neutral, uniforms)]).T
    print(
        f"neutral reference: {len(p_values)} records of {args.items:,} items, informative items per record "
        f"{int(np.median([m for _, m, _ in neutral]))} (median)"
    )
    valid = True
    for level in (0.01, 0.05, 0.10):
        rejected = int(np.sum(p_values < level))
        interval = stats.binomtest(rejected, len(p_values)).proportion_ci(0.95)
        valid &= interval.low <= level
        print(
            f"  p < {level:.2f} on {rejected} records ({100 * rejected / len(p_values):.1f} %, 95% CI "
            f"{100 * interval.low:.1f}-{100 * interval.high:.1f} %)"
        )
    ks = stats.kstest(randomised, "uniform")
    raw = stats.kstest(p_values, "uniform")
    distance = np.abs(p_values - exact).max()
    print(
        f"  randomised p against uniform: KS D = {ks.statistic:.3f}, p = {ks.pvalue:.3f} (the audit's discrete p: "
        f"D = {raw.statistic:.3f}, p = {raw.pvalue:.3f}); mean p {p_values.mean():.3f}"
    )
    print(f"  largest |audit p − exact sign-test p|: {distance:.4f}")
    print(
        f"  deciles of the randomised p: "
        f"{' '.join(f'{q:.2f}' for q in np.quantile(randomised, np.linspace(0.1, 0.9, 9)))}"
    )
    if default:
        print(
            f"default pipeline (silent default keeps A): {len(default)} records, largest p "
            f"{max(p for p, _, _ in default):.2g}, informative items {int(np.median([m for _, m, _ in default]))}"
        )
    print(f"{time.perf_counter() - started:.0f} s")
    calibrated = valid and ks.pvalue > 0.01 and distance < 0.025  # 5 Monte Carlo SE at p = ½
    sys.exit(0 if calibrated and all(p < 0.01 for p, _, _ in default) else 1)


if __name__ == "__main__":
    main()
