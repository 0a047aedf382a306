"""The paired, stratified, prompt-level bootstrap (METHOD.md section 4), as re-weighted sums.

Resampling is separate from the statistics: ``stratified_weights`` draws, for each language, how often each
item appears in each replicate; ``resampled_sums`` turns those weights into the sums of per-item count
columns. Every statistic on one item set is then a function of the same sums, so differences, margins and
swings are paired by construction.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Sequence

import numpy as np

# np.quantile imports numpy.ma on first use. pandas used to import it at start-up; imported in the middle of an
# audit of 250,000 items it took 1.2 s instead of 0.15 s, so it is imported here, while the heap is small.
import numpy.ma  # noqa: F401, E402
from threadpoolctl import threadpool_limits

from refsens_report.config import POLICIES

# Each item set's stream number is part of its seed: fixed, so adding an item set never moves another's draws.
SUBSET_STREAMS = {
    "corpus": 0,
    "audited": 1,
    "decontaminated": 2,
    **{f"duplicates:{policy}": 3 + number for number, policy in enumerate(POLICIES)},  # keep_first is 3, ...
}
# Weights are drawn in blocks of about this many cells (1 MB as float64): small enough to stay in cache,
# which measured ~2x faster than 16M-cell blocks, and memory stays flat whatever the record size.
BLOCK_CELLS = 1 << 17
# Replicates per independently seeded unit of work.
REPLICATE_CHUNK = 250
WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def subset_seed(seed: int, subset: str) -> np.random.SeedSequence:
    """Return the seed of one item set: independent streams, stable under adding new item sets."""
    return np.random.SeedSequence(seed, spawn_key=(SUBSET_STREAMS[subset],))


def chunk_rng(seed: np.random.SeedSequence, stratum_key: int, chunk: int) -> np.random.Generator:
    """Return the generator of one stratum's chunk of replicates (its own stream, so chunks can run in parallel)."""
    return np.random.default_rng(
        np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (stratum_key, chunk))
    )


def stratified_weights(
    stratum_size: int, resamples: int, rng: np.random.Generator
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (replicate slice, weights[replicates, items]) for one stratum: n draws with replacement each.

    The draws are consumed from ``rng`` in replicate order, so the blocks' sizes never change the result.
    """
    block = max(1, BLOCK_CELLS // max(stratum_size, 1))
    for first in range(0, resamples, block):
        count = min(block, resamples - first)
        draws = rng.integers(0, stratum_size, size=(count, stratum_size))
        draws += (np.arange(count, dtype=np.int64) * stratum_size)[:, None]  # one bincount for all rows
        weights = np.bincount(draws.ravel(), minlength=count * stratum_size)
        yield slice(first, first + count), weights.reshape(count, stratum_size).astype(np.float64)


def resampled_sums(
    columns: np.ndarray,
    strata: Sequence[np.ndarray],
    resamples: int,
    seed: np.random.SeedSequence,
    progress: Callable[[int], None] | None = None,
    stratum_keys: Sequence[int] | None = None,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Return sums[group, replicate, column] for each stratum and pooled (last group).

    Replicate 0 is the original sample (every weight 1); replicates 1..B are the bootstrap draws. Pooled
    sums are the sums of the strata's sums: each replicate draws every stratum independently. Replicates
    come in chunks of ``REPLICATE_CHUNK``, each drawn from its own stream keyed by (stratum key, chunk), so
    the result is the same whatever the number of threads and the order they finish in, and the first
    B' < B replicates of a stream are the same draws whatever B (for B' a multiple of the chunk).

    ``rows``: the item of each row of ``columns`` when it lists only the items with a nonzero count (per-type
    counts: an item has spans of few types); the other items count zero in every column. Their weights are
    drawn all the same, so the draws do not depend on which items are listed; they multiply nothing.
    """
    stratum_keys = list(range(len(strata))) if stratum_keys is None else list(stratum_keys)
    n_columns = columns.shape[1]
    sums = np.zeros((len(strata) + 1, resamples + 1, n_columns), dtype=np.float64)
    if rows is None:
        blocks, picks = [columns[members] for members in strata], [None] * len(strata)
    else:
        size = 1 + max([int(rows.max()) if len(rows) else 0] + [int(m.max()) for m in strata if len(m)])
        blocks, picks = [], []
        for members in strata:
            position = np.full(size, -1, dtype=np.int64)  # item -> its place among the stratum's draws
            position[members] = np.arange(len(members))
            listed = position[rows] >= 0
            blocks.append(columns[listed])
            picks.append(position[rows[listed]])
    for group, block in enumerate(blocks):
        sums[group, 0] = block.sum(axis=0)

    def draw(unit: tuple[int, int]) -> int:
        group, first = unit
        count = min(REPLICATE_CHUNK, resamples - first)
        rng = chunk_rng(seed, stratum_keys[group], first // REPLICATE_CHUNK)
        pick = picks[group]
        for replicates, weights in stratified_weights(len(strata[group]), count, rng):
            start = 1 + first + replicates.start
            drawn = weights if pick is None else weights[:, pick]
            sums[group, start : start + weights.shape[0]] = drawn @ blocks[group]
        return len(strata[group]) * count

    units = [(group, first) for group in range(len(strata)) for first in range(0, resamples, REPLICATE_CHUNK)]
    # numpy releases the GIL while drawing, counting and multiplying: two threads measured 1.8x faster on
    # two cores. BLAS itself stays single-threaded: its threads only waited on each other in these many
    # small products (measured 10x slower on a loaded machine).
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(WORKERS) as pool:
        for cells in pool.map(draw, units):
            if progress:
                progress(cells // max(resamples, 1))
    sums[-1] = sums[:-1].sum(axis=0)
    return sums


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (low, high) per row: numpy's linear quantile over the defined replicates.

    A row with fewer than half of its replicates defined gets NaN.
    """
    quantiles = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = replicates.reshape(-1, replicates.shape[-1])
    low = np.full(rows.shape[0], np.nan)
    high = np.full(rows.shape[0], np.nan)
    defined = ~np.isnan(rows)
    n_defined = defined.sum(axis=1)
    complete = n_defined == rows.shape[1]
    if complete.any():
        low[complete], high[complete] = np.quantile(rows[complete], quantiles, axis=1)
    for row in np.flatnonzero(~complete & (2 * n_defined >= rows.shape[1]) & (n_defined > 0)):
        low[row], high[row] = np.quantile(rows[row][defined[row]], quantiles)
    shape = replicates.shape[:-1]
    return low.reshape(shape), high.reshape(shape)


def bootstrap_p_value(replicates: np.ndarray) -> np.ndarray:
    """Return the two-sided bootstrap p per row: min(1, 2(1 + min(#{s*<=0}, #{s*>=0})) / (B'+1)).

    B' counts the defined replicates; fewer than half defined gives NaN, as for the interval.
    """
    defined = ~np.isnan(replicates)
    n_defined = defined.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        at_most_zero = (defined & (replicates <= 0)).sum(axis=-1)
        at_least_zero = (defined & (replicates >= 0)).sum(axis=-1)
    p_value = np.minimum(1.0, 2.0 * (1 + np.minimum(at_most_zero, at_least_zero)) / (n_defined + 1))
    return np.where(2 * n_defined >= replicates.shape[-1], p_value, np.nan)


def significant(p_value: float | None, confidence: float) -> bool:
    """Return whether a p-value (raw or Holm-adjusted) is below the level 1 - confidence: the one test used."""
    return p_value is not None and p_value < 1 - confidence


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm step-down adjusted p-values (monotone, capped at 1), as statsmodels' multipletests."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * np.arange(len(p), 0, -1)
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty_like(adjusted_sorted)
    adjusted[order] = adjusted_sorted
    return adjusted.tolist()


def bca_interval(
    replicates: np.ndarray, point: np.ndarray, jackknife: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return the bias-corrected and accelerated (BCa) interval per row (Efron 1987; Efron & Tibshirani 14.3).

    ``replicates[row, b]`` are the bootstrap values, ``point[row]`` the estimate, ``jackknife[row, i]`` the
    statistic with item i left out. With z0 = Φ⁻¹(share of defined replicates below the estimate) and the
    acceleration a = Σ(θ̄ − θ₍ᵢ₎)³ / (6 (Σ(θ̄ − θ₍ᵢ₎)²)^{3/2}), the interval is the percentile interval at the
    adjusted levels Φ(z0 + (z0 + z)/(1 − a(z0 + z))) for z = Φ⁻¹((1 ∓ confidence)/2); numpy's linear quantile,
    as in ``percentile_interval`` (and as scipy.stats.bootstrap(method="BCa")). Rows with fewer than half of
    their replicates defined, an undefined estimate or an infinite bias correction (every replicate on one side)
    fall back to what ``percentile_interval`` gives: null, or, for the last, the percentile interval.
    """
    from scipy.special import ndtr, ndtri

    rows = replicates.reshape(-1, replicates.shape[-1])
    point = np.asarray(point, dtype=np.float64).reshape(-1)
    jackknife = jackknife.reshape(rows.shape[0], -1)
    low, high = (bound.reshape(-1) for bound in percentile_interval(rows, confidence))
    defined = ~np.isnan(rows)
    n_defined = defined.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = np.where(defined, rows < point[:, None], False).sum(axis=1) / n_defined
        bias = ndtri(below)
        jack_defined = ~np.isnan(jackknife)
        jack_mean = np.where(jack_defined, jackknife, 0).sum(axis=1) / jack_defined.sum(axis=1)
        spread = np.where(jack_defined, jack_mean[:, None] - jackknife, 0.0)
        squares = (spread**2).sum(axis=1)
        acceleration = np.where(squares > 0, (spread**3).sum(axis=1) / (6 * squares**1.5), 0.0)
        z = ndtri(np.array([(1 - confidence) / 2, (1 + confidence) / 2]))
        adjusted = bias[:, None] + (bias[:, None] + z) / (1 - acceleration[:, None] * (bias[:, None] + z))
        levels = ndtr(adjusted)  # row, (low, high)
    usable = ~np.isnan(low) & np.isfinite(bias) & ~np.isnan(point) & np.isfinite(levels).all(axis=1)
    for row in np.flatnonzero(usable):
        values = rows[row][defined[row]] if n_defined[row] < rows.shape[1] else rows[row]
        low[row], high[row] = np.quantile(values, levels[row])
    shape = replicates.shape[:-1]
    return low.reshape(shape), high.reshape(shape)


def holm_floor(family_size: int, resamples: int) -> float:
    """Return the smallest Holm p any test of a family can reach: the family size times the smallest bootstrap p.

    The bootstrap p is at least 2 / (B + 1), so with m tests nothing is significant at level alpha unless
    2m / (B + 1) < alpha: at leaderboard scale the report must say when "none significant" is forced.
    """
    return min(1.0, family_size * 2 / (resamples + 1))


# resamples = "auto": B is the smallest number of replicates whose Holm floor is at most a tenth of the level
# (so the floor never decides a test at the level), at least AUTO_MIN_RESAMPLES (the contract's former
# default), at most AUTO_MAX_RESAMPLES. The bootstrap's cost is linear in B: the CoNLL-2003 example (14
# outputs x 4 references, 3,453 items, 156 tests in the adjacent family) audits in 3.8 s at 2,000
# replicates and 17-19 s at 62,399 (docs/methods.md, choice 17); the cap keeps a leaderboard audit
# under about a minute on a laptop and its bootstrap sums within load.BOOTSTRAP_MEMORY_BUDGET.
AUTO_MIN_RESAMPLES = 2000
AUTO_MAX_RESAMPLES = 100_000
AUTO_FLOOR_SHARE = 0.1  # the floor target, as a share of the level 1 - confidence


def auto_resamples(family_size: int, confidence: float, ceiling: int = AUTO_MAX_RESAMPLES) -> int:
    """Return B for resamples = "auto": the smallest B ≥ 2,000 with holm_floor(m, B) ≤ (1 − confidence)/10.

    ``ceiling`` (at most AUTO_MAX_RESAMPLES; lower when the record's bootstrap sums would not fit in memory)
    bounds B; a family too large for it keeps a floor above the target, which the results report.
    """
    target = AUTO_FLOOR_SHARE * (1 - confidence)
    ceiling = min(ceiling, AUTO_MAX_RESAMPLES)
    needed = max(AUTO_MIN_RESAMPLES, int(np.ceil(2 * family_size / target)) - 1)
    while needed > AUTO_MIN_RESAMPLES and holm_floor(family_size, needed - 1) <= target:  # float rounding
        needed -= 1
    while holm_floor(family_size, needed) > target:
        needed += 1
    return max(min(needed, ceiling), 1)
