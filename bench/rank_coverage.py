"""Coverage of rank sets on simulated leaderboards whose true ranks are known.

    .venv/bin/python bench/rank_coverage.py                          # 500 leaderboards (about a minute)
    .venv/bin/python bench/rank_coverage.py --leaderboards 200 --items 2000

Each leaderboard scores 8 outputs against one reference on n items; some are exactly as good as others (a
tie of three and a tie of two, as on a real leaderboard where several systems are indistinguishable), the
others about a point of F1 apart. An item has Poisson(1.65) gold spans;
output j finds each with probability r_j (a TP, else an FN) and adds Poisson(lambda_j) spurious spans (FPs).
Its true micro-F1 is 2 r_j mu / (2 r_j mu + lambda_j + (1 − r_j) mu) with mu = 1.65, so the true ranks are
known; a tie's true rank is the average of the positions it holds (the leaderboard's own definition, which
the rank sets also cover: they cover every position of a tie when no pair is wrongly declared). The record
is resampled as the audit does (n items drawn with replacement, F1 from the summed counts,
B replicates); then, with the library's own functions, we count the leaderboards in which every output's
true rank lies in its set at once (joint coverage), and the share of outputs covered one at a time, for:

- the simultaneous rank sets (ranking.rank_sets, the leaderboard's `rank_lower/upper_simultaneous` rows);
- the marginal rank sets of the same procedure (one output's pairs at a time);
- the percentile intervals of the replicates' ranks (the leaderboard's `rank` rows' intervals).

Nominal: 95 %. The simultaneous sets promise joint coverage; the others only cover each output marginally.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from refsens_report.analyses.ranking import average_ranks, rank_sets
from refsens_report.bootstrap import percentile_interval

MEAN_SPANS = 1.65


def true_f1(found: np.ndarray, spurious: np.ndarray) -> np.ndarray:
    """Return each output's population micro-F1 (0-100) from its detection rate and spurious-span rate."""
    tp = found * MEAN_SPANS
    return 100 * 2 * tp / (2 * tp + spurious + (1 - found) * MEAN_SPANS)


def one_leaderboard(
    rng: np.random.Generator, found: np.ndarray, spurious: np.ndarray, items: int, replicates: int
) -> np.ndarray:
    """Return scores[output, 1 + replicate] of one simulated record and its bootstrap."""
    gold = rng.poisson(MEAN_SPANS, items)
    tp = rng.binomial(gold[None, :], found[:, None])  # output, item
    fp = rng.poisson(spurious[:, None], (len(found), items))
    fn = gold[None, :] - tp
    weights = rng.multinomial(items, np.full(items, 1 / items), size=replicates).T  # item, replicate
    weights = np.column_stack([np.ones(items, dtype=np.int64), weights])  # column 0: the sample itself
    tp_sum, fp_sum, fn_sum = tp @ weights, fp @ weights, fn @ weights
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100 * 2 * tp_sum / (2 * tp_sum + fp_sum + fn_sum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--leaderboards", type=int, default=500)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    found = np.array([0.80, 0.77, 0.77, 0.77, 0.74, 0.74, 0.71, 0.68])  # ~1.5 F1 points between the levels
    spurious = np.full(len(found), 0.35)
    truth = true_f1(found, spurious)
    true_rank = average_ranks(truth)  # ties share their average position
    covered = {"simultaneous": [], "marginal": [], "percentile": []}
    for _ in range(args.leaderboards):
        scores = one_leaderboard(rng, found, spurious, args.items, args.replicates)
        sets = {
            "simultaneous": rank_sets(scores, args.confidence),
            "marginal": rank_sets(scores, args.confidence, simultaneous=False),
            "percentile": percentile_interval(average_ranks(scores)[:, 1:], args.confidence),
        }
        for name, (lower, upper) in sets.items():
            covered[name].append((lower <= true_rank) & (true_rank <= upper))
    print(
        f"{args.leaderboards} simulated leaderboards: {len(found)} outputs (true F1 "
        f"{', '.join(f'{value:.1f}' for value in np.sort(truth)[::-1])}), {args.items} items, "
        f"{args.replicates} replicates, nominal {args.confidence:.0%}"
    )
    print(f"{'rank sets':>14} {'joint coverage':>15} {'per output':>11} {'mean width':>11}")
    for name, hits in covered.items():
        hits = np.array(hits)
        joint = hits.all(axis=1).mean()
        error = np.sqrt(joint * (1 - joint) / len(hits))
        print(f"{name:>14} {joint:9.3f} ±{error:.3f} {hits.mean():11.3f}", end="")
        lower, upper = sets[name]  # the last leaderboard's, for a feel of the widths
        print(f" {np.mean(upper - lower):11.2f}")
    print(f"(widths: the last leaderboard's mean upper − lower; {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
