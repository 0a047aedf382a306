"""The paired sign-flip permutation test: is a sum of per-item differences larger than swapping roles allows?

Under the exchangeable null the two roles compared on an item (annotator A and annotator B, for the
neutrality skew) could be swapped on any item without changing the distribution, so each per-item
difference d_i keeps or flips its sign independently with probability ½. A permutation is a vector of signs
s ∈ {−1, +1}ⁿ and its statistic is s · d; the two-sided p-value is the share of permutations with
|s · d| ≥ |Σ d|. Items with d_i = 0 flip nothing and are left out ("informative" items are the others).

With m informative items there are 2^m sign vectors: when 2^m is at most the number of permutations asked
for, every one is enumerated and p is exact; otherwise ``permutations`` random sign vectors are drawn from the
given seed and p = (1 + #{|s · d| ≥ |Σ d|}) / (permutations + 1), which is never 0 and is a valid p-value
(Phipson & Smyth 2010). Either way the statistics come from one matrix product per chunk of sign vectors.
"""

from __future__ import annotations

import numpy as np

# The spawn key of the permutation streams: no bootstrap item set uses it (bootstrap.SUBSET_STREAMS counts
# from 0), so permutations never share draws with a bootstrap and adding one never moves the other.
STREAM = 1000
# Sign vectors per chunk: about this many signs (1 MiB as float64), whatever the number of items. The chunk
# size never changes a result: sign vector k always takes the k-th run of 64-bit words of its stream.
CHUNK_CELLS = 1 << 17


def permutation_seed(seed: int, *keys: int) -> np.random.SeedSequence:
    """Return the seed of one test: the audit's seed, the permutation stream, then the test's own keys."""
    return np.random.SeedSequence(seed, spawn_key=(STREAM, *keys))


def is_exact(informative: int, permutations: int) -> bool:
    """Return whether a test with this many informative items enumerates every sign vector (2^m ≤ permutations)."""
    return informative < 63 and 2**informative <= permutations


def _all_signs(informative: int) -> np.ndarray:
    """Return every sign vector of length m as rows of ±1 (2^m rows; the first is all +1, the identity)."""
    codes = np.arange(2**informative, dtype=np.int64)[:, None] >> np.arange(informative, dtype=np.int64)[None, :]
    return 1.0 - 2.0 * (codes & 1)


def sign_flip_p(differences: np.ndarray, permutations: int, seed: np.random.SeedSequence) -> tuple[float, int]:
    """Return (two-sided p, informative items) of the sign-flip test of Σ d = 0 for per-item differences d.

    No informative item: every permutation gives 0, which is as large as the observed 0, so p = 1.
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[d != 0]
    informative = len(d)
    if informative == 0:
        return 1.0, 0
    observed = abs(float(d.sum()))
    # differences of counts are integers, so sums are exact; the margin only guards non-integer differences
    threshold = observed - 1e-9 * max(1.0, float(np.abs(d).sum()))
    if is_exact(informative, permutations):
        statistics = _all_signs(informative) @ d
        return float(np.count_nonzero(np.abs(statistics) >= threshold)) / len(statistics), informative
    generator = np.random.default_rng(seed).bit_generator
    words = -(-informative // 64)  # each sign vector takes whole 64-bit words: its signs never depend on the chunk
    block = max(1, CHUNK_CELLS // (64 * words))
    total = float(d.sum())
    masks = _sign_masks(d, words)
    extreme = 0
    for first in range(0, permutations, block):
        count = min(block, permutations - first)
        # sign j of a vector is bit j % 64 of its word j // 64 (s = 2·bit − 1), on every machine
        raw = generator.random_raw(count * words).reshape(count, words)
        if masks is not None:  # every d is ±1: s · d = 2 (#set bits where d = +1 − #where d = −1) − Σ d
            plus, minus = masks
            statistics = (
                2.0
                * (
                    np.bitwise_count(raw & plus).sum(axis=1, dtype=np.int64)
                    - np.bitwise_count(raw & minus).sum(axis=1, dtype=np.int64)
                )
                - total
            )
        else:
            octets = raw.astype("<u8").view(np.uint8).reshape(count, 8 * words)
            bits = np.unpackbits(octets, axis=1, bitorder="little")[:, :informative]
            statistics = 2.0 * (bits @ d) - total
        extreme += int(np.count_nonzero(np.abs(statistics) >= threshold))
    return (1 + extreme) / (permutations + 1), informative


def _sign_masks(d: np.ndarray, words: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Return bit masks of the items with d = +1 and d = −1 (64 per word), or None unless every d is ±1.

    The neutrality skew's differences are always ±1, so its statistic is a count of set bits: measured 4 to 5
    times faster than multiplying unpacked bits at 5,000 to 15,000 informative items (numpy 2's bitwise_count;
    older numpy multiplies, with the same result).
    """
    if not hasattr(np, "bitwise_count") or not np.all(np.abs(d) == 1):
        return None
    position = np.arange(len(d))
    masks = []
    for sign in (1.0, -1.0):
        chosen = position[d == sign]
        mask = np.zeros(words, dtype=np.uint64)
        np.bitwise_or.at(mask, chosen // 64, np.left_shift(np.uint64(1), (chosen % 64).astype(np.uint64)))
        masks.append(mask)
    return masks[0], masks[1]
