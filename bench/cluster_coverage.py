"""Coverage of nominal 95 % intervals when errors are correlated within documents: items against clusters.

Records of documents of several sentences, scored as the audit scores them (micro F1 from summed per-item
counts, bootstrap.resampled_sums), by two systems against one gold. Each document has a random effect on
each system's recall and false-positive rate (the story is hard, or easy, for that system), so the
sentences of one document are not independent. The truth is the population value of the statistics under
the generating process, computed from one very large record (F1 of summed counts converges to it). Each
simulated record gets a percentile interval from the item bootstrap (every sentence its own cluster) and
from the cluster bootstrap (documents, `[record] cluster`); the script prints how often each covers the
truth.

    .venv/bin/python bench/cluster_coverage.py                 # 1,000 records, B = 1000 (under a minute)
    .venv/bin/python bench/cluster_coverage.py --records 100 --resamples 500   # a quick look

Measured (defaults: 1,000 records of 100 documents, 599 sentences on average, B = 1,000; 15 s on 2 cores):

    statistic           items: coverage   width   clusters: coverage   width
    F1 system 1                   81.3%    3.53                93.7%    4.89
    F1 system 2                   83.1%    3.69                95.3%    5.23
    F1 difference                 87.4%    4.81                95.5%    6.16

and with `--spread 0` (independent sentences) 94.2 / 93.1 / 94.5 % (items) and 93.5 / 93.1 / 94.4 % (clusters).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from refsens_report import bootstrap

# count columns per item: TP of each system, |O| of each system, |R| (the gold's spans)
TP1, TP2, O1, O2, GOLD = range(5)


def simulate(rng: np.random.Generator, documents: int, sentences: int, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (counts[item, column], each item's document): ``documents`` stories of 1..2·sentences sentences.

    Recall of system k on document d: logistic(base_k + u_d + v_kd); false positives per sentence: Poisson with
    mean lam_k · exp(w_kd). u is shared by both systems (the story is hard), v and w are each system's own (the
    story suits one system): ``spread`` scales them all; 0 makes sentences independent.
    """
    lengths = rng.integers(1, 2 * sentences, size=documents)
    document = np.repeat(np.arange(documents), lengths)
    n = len(document)
    shared = rng.normal(0, spread, documents)
    counts = np.zeros((n, 5), dtype=np.int64)
    gold = rng.poisson(2.0, n)
    counts[:, GOLD] = gold
    for k, (base, false_rate) in enumerate(((1.6, 0.25), (1.4, 0.2))):
        own = rng.normal(0, spread, documents)
        noise = rng.normal(0, spread, documents)
        recall = 1 / (1 + np.exp(-(base + shared[document] + own[document])))
        found = rng.binomial(gold, recall)
        false = rng.poisson(false_rate * np.exp(noise[document] - spread**2 / 2))
        counts[:, TP1 + k] = found
        counts[:, O1 + k] = found + false
    return counts, document


def statistics(sums: np.ndarray) -> np.ndarray:
    """Return [F1 of system 1, F1 of system 2, their difference] from summed counts (last axis: columns)."""
    f1 = [100 * 2 * sums[..., TP1 + k] / (sums[..., O1 + k] + sums[..., GOLD]) for k in (0, 1)]
    return np.stack([f1[0], f1[1], f1[0] - f1[1]], axis=-1)


def intervals(counts: np.ndarray, document: np.ndarray, resamples: int, seed: int, clustered: bool) -> np.ndarray:
    """Return [statistic, (low, high)]: percentile intervals from the item or the cluster bootstrap."""
    members = np.arange(len(counts))  # items already in document order: each document's sentences together
    bounds = np.r_[np.flatnonzero(np.r_[True, np.diff(document) != 0]), len(document)] if clustered else None
    sums = bootstrap.resampled_sums(
        counts.astype(np.float64),
        [members],
        resamples,
        np.random.SeedSequence(seed),
        clusters=None if bounds is None else [bounds],
    )
    values = statistics(sums[-1, 1:])  # pooled = the one stratum; replicates 1..B
    low, high = bootstrap.percentile_interval(values.T, 0.95)
    return np.stack([low, high], axis=-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--documents", type=int, default=100, help="documents per record")
    parser.add_argument("--sentences", type=int, default=6, help="mean sentences per document")
    parser.add_argument("--spread", type=float, default=0.6, help="sd of the document effects (0: independent)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    population, _ = simulate(np.random.default_rng(10**6 + args.seed), 200_000, args.sentences, args.spread)
    truth = statistics(population.sum(axis=0))
    names = ("F1 system 1", "F1 system 2", "F1 difference")
    covered = {kind: np.zeros(3, dtype=np.int64) for kind in ("items", "clusters")}
    widths = {kind: np.zeros(3) for kind in covered}
    sizes = []
    for record in range(args.records):
        counts, document = simulate(rng, args.documents, args.sentences, args.spread)
        sizes.append(len(counts))
        for kind in covered:
            found = intervals(counts, document, args.resamples, record, clustered=kind == "clusters")
            covered[kind] += (found[:, 0] <= truth) & (truth <= found[:, 1])
            widths[kind] += found[:, 1] - found[:, 0]
    print(
        f"{args.records} records of {args.documents} documents ({np.mean(sizes):.0f} sentences on average), "
        f"document effect sd {args.spread}, B = {args.resamples}, nominal 95 %"
    )
    print("truth (population of 200,000 documents): " + ", ".join(f"{n} {t:.2f}" for n, t in zip(names, truth)))
    print(f"{'statistic':<16}{'items: coverage':>17}{'width':>8}{'clusters: coverage':>20}{'width':>8}")
    for position, name in enumerate(names):
        item_share = 100 * covered["items"][position] / args.records
        cluster_share = 100 * covered["clusters"][position] / args.records
        print(
            f"{name:<16}{item_share:>16.1f}%{widths['items'][position] / args.records:>8.2f}"
            f"{cluster_share:>19.1f}%{widths['clusters'][position] / args.records:>8.2f}"
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
