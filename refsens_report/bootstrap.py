"""The paired, stratified, prompt-level bootstrap (docs/method.md section 4), as re-weighted sums.

Resampling is separate from the statistics: ``stratified_weights`` draws, for each language, how often each
item appears in each replicate; ``resampled_sums`` turns those weights into the sums of per-item count
columns. Every statistic on one item set is then a function of the same sums, so differences, margins and
swings are paired by construction.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

# np.quantile imports numpy.ma on first use. pandas used to import it at start-up; imported in the middle of an
# audit of 250,000 items it took 1.2 s instead of 0.15 s, so it is imported here, while the heap is small.
import numpy.ma  # noqa: F401, E402
from scipy.sparse import csr_matrix, issparse
from threadpoolctl import threadpool_limits

from refsens_report.config import POLICIES
from refsens_report.threads import WORKERS, threaded_map

# Each item set's stream number is part of its seed: fixed, so adding an item set never moves another's draws.
SUBSET_STREAMS = {
    "corpus": 0,
    "audited": 1,
    "decontaminated": 2,
    **{f"duplicates:{policy}": 3 + number for number, policy in enumerate(POLICIES)},  # keep_first is 3, ...
}
# Weights are drawn in blocks of about this many cells (1 MB as float64): small enough to stay in cache,
# which measured ~2x faster than 16M-cell blocks, and memory stays flat whatever the record size ...
BLOCK_CELLS = 1 << 17
# ... but never fewer replicates at once than this: one replicate at a time is a matrix-vector product that
# reads the whole count matrix per replicate (measured 146 ns per item and replicate on 65,536 items x 208
# columns as float64, against 24 ns for 32 replicates at once; as float32, 5-9 ns for 64-256 at once).
MIN_BLOCK_ROWS = 128
# Weights are counted in groups of replicates of about this many counters (256 KB as int64): a block of 32,768
# items or more counts one replicate per bincount, with no offsets to add (measured 1.4-1.6x faster than
# BLOCK_CELLS groups at 33,334 and 65,536 items; the counts are the same).
WEIGHT_CELLS = 1 << 15
# Replicates per independently seeded unit of work.
REPLICATE_CHUNK = 250
# A stratum of more items than this draws in canonical blocks of this many items (in id order): how many of
# its n draws fall in each block is drawn first (a multinomial over the blocks' sizes), then each block draws
# its own within its own stream. That is the same distribution as n draws over the stratum, and each block's
# draws depend only on the seed, the stratum and the block, never on how the work is split (threads, Dask
# workers, partitions). A stratum of one block draws exactly as it always did.
BLOCK_ITEMS = 1 << 16
# Items with identical count vectors are summed once, with the sum of their weights, when the distinct vectors
# are at most this share of the items: same sums, fewer products.
COLLAPSE_SHARE = 0.8
# ... unless another source drawn with it needs the block's item-level weights anyway: a collapsed source then
# counts the draws again (its own codes), which costs about as much as multiplying this many float32 columns
# (measured: 21 ms to count 250 replicates x 33,334 items' weights, 83 ms to multiply them by 416 columns).
# Collapsing such a source must save more than that.
WEIGHT_PASS_COLUMNS = 96
FLOAT32_EXACT = 1 << 24  # every integer below this is exact in float32: sums of integer counts below it are too
# A block's integer counts multiply in float32 when every sum a replicate drawing up to this many times the block's
# items can form is exact (a replicate drawing more multiplies it in float64: ItemBlock.operand). A block's draws
# stay within a percent of its items (they are multinomial over the stratum's blocks; only a block of a few items
# can be drawn twice as often), so 2 loses nothing; 4 sent a million items' counts of 64 to 127, 48 of the
# stream's columns, to float64 products at twice the cost per column or more (products 7 % faster without).
FLOAT32_MARGIN = 2
# Replicates per thread, at least, for a percentile interval's partitions (``percentile_interval``): below, a
# thread would cost more than it saves (a block of statistics at B = 2,000 holds up to millions)
QUANTILE_VALUES = 1 << 18


def subset_seed(seed: int, subset: str) -> np.random.SeedSequence:
    """Return the seed of one item set: independent streams, stable under adding new item sets."""
    return np.random.SeedSequence(seed, spawn_key=(SUBSET_STREAMS[subset],))


def chunk_rng(seed: np.random.SeedSequence, stratum_key: int, chunk: int, *more: int) -> np.random.Generator:
    """Return the generator of one stratum's chunk of replicates (its own stream, so chunks can run in parallel).

    ``more`` keys a stream below the chunk's: block j >= 1 of a stratum of several blocks draws from
    (stratum, chunk, j), the blocks' totals from (stratum, chunk, 0); block 0 uses the chunk's own stream.
    """
    return np.random.default_rng(
        np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (stratum_key, chunk) + tuple(more))
    )


def block_rows(block_size: int, replicates: int) -> int:
    """Return how many replicates' weights to draw and multiply at once for a block of items."""
    return max(1, min(replicates, max(MIN_BLOCK_ROWS, BLOCK_CELLS // max(block_size, 1))))


def block_weights(
    block_size: int, totals: np.ndarray, rng: np.random.Generator
) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
    """Yield (replicate slice, draws, draws per replicate): ``totals[r]`` draws with replacement from the block.

    The draws are item positions in the block, replicate after replicate. They are consumed from ``rng`` in
    replicate order, so how many replicates go at once never changes them.
    """
    rows = block_rows(block_size, len(totals))
    for first in range(0, len(totals), rows):
        counts = totals[first : first + rows]
        yield slice(first, first + len(counts)), rng.integers(0, block_size, size=int(counts.sum())), counts


def count_weights(
    draws: np.ndarray, counts: np.ndarray, width: int, codes: np.ndarray | None, outs: Sequence[np.ndarray]
) -> None:
    """Fill each of ``outs`` (rows ``len(counts)``, ``width`` columns, any dtype) with weights[replicate, column]:
    how often each column's items were drawn in each replicate (``weights_of``). One count serves every dtype:
    whole numbers, exact in each."""
    span = width + (codes is not None)
    found = draws if codes is None else codes[draws]
    group = max(1, WEIGHT_CELLS // max(span, 1))
    ends = np.cumsum(counts)
    for first in range(0, len(counts), group):
        stop = min(first + group, len(counts))
        start = int(ends[first - 1]) if first else 0
        drawn = found[start : int(ends[stop - 1])]
        if stop - first > 1:  # one count for the group: each replicate's draws offset into its own row
            drawn = drawn + np.repeat(np.arange(stop - first, dtype=np.int64) * span, counts[first:stop])
        counted = np.bincount(drawn, minlength=(stop - first) * span).reshape(stop - first, span)
        for out in outs:
            out[first:stop] = counted[:, :width]


def weights_of(
    draws: np.ndarray, counts: np.ndarray, width: int, codes: np.ndarray | None = None, dtype: type = np.int64
) -> np.ndarray:
    """Return weights[replicate, column]: how often each column's items were drawn in each replicate.

    Without ``codes`` the columns are the block's items; with them a draw of item i counts for column
    ``codes[i]``, a code of ``width`` counting nowhere (an item whose counts are all zero). Counted a few
    replicates at a time, so the counters (``BLOCK_CELLS``) stay in cache whatever the number of replicates.
    """
    weights = np.empty((len(counts), width), dtype=dtype)
    count_weights(draws, counts, width, codes, [weights])
    return weights


def stratified_weights(
    stratum_size: int, resamples: int, rng: np.random.Generator
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (replicate slice, weights[replicates, items]) for a stratum of one block: n draws with replacement each."""
    for replicates, draws, counts in block_weights(stratum_size, np.full(resamples, stratum_size, np.int64), rng):
        yield replicates, weights_of(draws, counts, stratum_size, dtype=np.float64)


@dataclass(frozen=True)
class ItemBlock:
    """One source's counts on one canonical block of a stratum's items, ready to multiply by the block's weights.

    ``codes``: None when the block's item i has row i of ``counts``; otherwise the row holding item i's counts
    (``len(counts)`` for an item counting zero in every column). ``dtype``: what the products run in: float32
    when every sum a replicate can form from the counts is exact in float32 (``FLOAT32_EXACT``), else float64.
    ``counts`` keeps whole numbers in the smallest unsigned type holding them (a quarter of float32's bytes for
    counts below 256), cast into ``dtype`` a slab of rows at a time by each product (``multiply``); real values
    and sparse matrices are stored in ``dtype`` (by default the counts' own).
    """

    codes: np.ndarray | None
    counts: Any
    dtype: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", np.dtype(self.counts.dtype if self.dtype is None else self.dtype))

    @cached_property
    def top(self) -> float:
        """Return the largest count: read once per block, not once per product (a pass over the whole block)."""
        if not self.counts.shape[0] or (issparse(self.counts) and not self.counts.nnz):
            return 0.0
        return float(self.counts.max())

    def operand(self, counts: np.ndarray) -> np.dtype:
        """Return the dtype to multiply in for replicates drawing ``counts`` of the block's items each: ``dtype``,
        or float64 when a replicate draws the block so often that a float32 sum could pass ``FLOAT32_EXACT``."""
        if self.dtype == np.float32 and int(counts.max()) * self.top >= FLOAT32_EXACT:
            return np.dtype(np.float64)  # a replicate drawing this block unusually often: exact in float64
        return self.dtype


FLOAT64_EXACT = 1 << 53  # every integer below this is exact in float64
SLAB_CELLS = 1 << 17  # cells of a block's whole-number counts cast at once for a product (512 KiB as float32)


def multiply(sums: np.ndarray, weights: np.ndarray, block: ItemBlock, dtype: Any, drawn: int, space: Workspace) -> None:
    """Add weights @ counts to ``sums`` (in place), the counts in ``dtype``: a block's contribution to its
    replicates' sums, for replicates drawing at most ``drawn`` of the block's items.

    Whole numbers stored in a smaller type are cast a slab of rows at a time into ``space`` (hot in cache, no
    fresh pages) and multiplied slab by slab: every partial sum is a whole number below ``FLOAT32_EXACT`` in
    float32 (``ItemBlock.operand``) or ``FLOAT64_EXACT`` in float64, exact in any order, so the sums are the
    whole block's product to the bit. Real values (stored in ``dtype``) multiply in one product, as always.
    """
    matrix = block.counts
    if issparse(matrix):  # per-type counts of many types: the work is the nonzero counts', not the cells'
        sums += (matrix.astype(dtype, copy=False).T @ weights.T).T
        return
    if matrix.dtype == dtype:
        sums += weights @ matrix
        return
    rows, width = matrix.shape
    exact = dtype == np.float32 or drawn * block.top < FLOAT64_EXACT
    slab = max(1, SLAB_CELLS // max(width, 1)) if exact else rows
    cast = space.array("slab", dtype, min(slab, rows), width)
    part = space.array("part", dtype, len(weights), width)
    total = space.array("total", dtype, len(weights), width)
    for first in range(0, rows, slab):
        stop = min(first + slab, rows)
        cast[: stop - first] = matrix[first:stop]
        np.matmul(weights[:, first:stop], cast[: stop - first], out=total if first == 0 else part)
        if first:
            total += part
    sums += total


DIGEST_ROWS = 2048  # rows of an integer block cast to float64 at once for their digests (8 MiB at 512 columns)


def integer_digests(matrix: np.ndarray) -> np.ndarray | None:
    """Return two hashes per row of an integer block (its dot products with two columns of random integer
    weights, as float64), or None when its counts are too large for them to be exact.

    Every partial sum is a whole number below 2**53, exact in float64 in any order: identical rows always hash
    alike, whichever kernel path a row takes. Two unequal rows hash alike in both with a chance of about 2**-70
    (their check in ``grouped`` catches it). The block is cast a few rows at a time, never as a whole.
    """
    n_rows, n_columns = matrix.shape
    if not matrix.size:  # no columns: every row is the same empty row
        return np.zeros((n_rows, 2))
    largest = max(abs(int(matrix.max())), abs(int(matrix.min())), 1)
    bound = (1 << 53) // (largest * max(n_columns, 1))
    if bound < 1 << 24:
        return None
    weights = np.random.default_rng(0x5EED).integers(1, bound, size=(n_columns, 2)).astype(np.float64)
    digests = np.empty((n_rows, 2))
    rows = np.empty((min(n_rows, DIGEST_ROWS), n_columns))
    with threadpool_limits(limits=1, user_api="blas"):  # exact in any order: BLAS threads would only wait (15x)
        for first in range(0, n_rows, DIGEST_ROWS):
            part = matrix[first : first + DIGEST_ROWS]
            rows[: len(part)] = part
            np.matmul(rows[: len(part)], weights, out=digests[first : first + len(part)])
    return digests


def bit_digests(matrix: np.ndarray) -> np.ndarray:
    """Return a hash per row of a real-valued block: its float64 values' bit patterns times random odd integers,
    added with wrap-around in uint64 (integer arithmetic: the same key for the same bits in any order, with no
    BLAS). A float dot product, used before, rounded identical rows differently depending on the kernel path a
    row took, which depends on its position and on the BLAS threads: the grouping, and the last bit of a
    collapsed block's sums, could differ from machine to machine. Rows of different bits (0.0 and -0.0 too)
    hash apart but for a chance of about 2**-64 (``grouped`` checks)."""
    n_rows, n_columns = matrix.shape
    weights = np.random.default_rng(0x5EED).integers(0, 1 << 63, size=n_columns, dtype=np.uint64) * 2 + 1
    key = np.zeros(n_rows, dtype=np.uint64)
    for column in range(n_columns):
        key += np.ascontiguousarray(matrix[:, column], dtype=np.float64).view(np.uint64) * weights[column]
    return key


def grouped(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (first, inverse): the first row of each distinct row (in sorted hash order), and each row's group.

    Rows are grouped by a hash (``integer_digests`` for whole-number types; ``bit_digests`` otherwise), then
    checked against their group's first row: a collision, however unlikely, falls back to an exact row-wise
    unique. Either hash gives identical rows the same key on any machine, so the groups, and with them the order
    in which a real-valued block's sums add up, never depend on the BLAS library or its threads.
    """
    integer = np.issubdtype(matrix.dtype, np.integer) or matrix.dtype == np.bool_
    digests = integer_digests(matrix) if integer else None
    if digests is not None:
        key = digests.view(np.complex128).reshape(-1)  # both hashes, compared in order
    else:
        key = bit_digests(matrix)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    repeated = np.flatnonzero(first[inverse] != np.arange(len(inverse)))  # rows not first of their group
    if not np.array_equal(matrix[repeated], matrix[first[inverse[repeated]]]):  # a collision: group the rows
        _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    return first, inverse


def collapse(
    matrix: np.ndarray, grouping: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Return (codes, patterns): each row's distinct row (codes), zero rows coded ``len(patterns)``.

    Patterns are in order of first appearance (so they do not depend on the hash). ``grouping``: the rows'
    ``grouped`` when already known.
    """
    n_rows, n_columns = matrix.shape
    if not n_rows:
        return np.zeros(0, np.int64), matrix[:0]
    first, inverse = grouping if grouping is not None else grouped(matrix)
    order = np.argsort(first, kind="stable")  # patterns in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes, patterns = rank[inverse], matrix[first[order]]
    zero = ~patterns.any(axis=1)
    if zero.any():  # the zero pattern multiplies nothing: it counts nowhere
        keep = np.flatnonzero(~zero)
        renumber = np.full(len(patterns), len(keep), dtype=np.int64)
        renumber[keep] = np.arange(len(keep))
        codes, patterns = renumber[codes], patterns[keep]
    return codes.astype(np.int64), patterns


COLLAPSE_SAMPLE = 4096  # rows of a block looked at first: when nearly all differ, collapsing the block is skipped


def mostly_distinct(matrix: np.ndarray) -> bool:
    """Return whether an evenly spread sample of the rows is at least 95 % distinct rows (collapsing would not pay).

    A speed guess only: whatever it answers, the sums are the same.
    """
    if len(matrix) <= 4 * COLLAPSE_SAMPLE:
        return False
    sample = matrix[:: len(matrix) // COLLAPSE_SAMPLE][:COLLAPSE_SAMPLE]
    first, _ = grouped(sample)
    return len(first) > 0.95 * len(sample)


def integral(matrix: np.ndarray) -> bool:
    """Return whether a block holds whole numbers only (integer counts): only those may sum in float32. A real-
    valued column (a declared column kind with ``integer=False``: a disorder) keeps its block in float64."""
    if np.issubdtype(matrix.dtype, np.integer) or matrix.dtype == np.bool_:
        return True
    return bool(np.array_equal(matrix, np.floor(matrix)))


def block_dtype(matrix: Any) -> type:
    """Return the dtype a block's counts multiply in: float32 when every sum a replicate drawing up to
    ``FLOAT32_MARGIN`` times the block's items can form is exact in it (integer counts only: real values always
    sum in float64)."""
    if issparse(matrix):
        exact32 = (
            matrix.min() >= 0 and float(matrix.max()) * matrix.shape[0] * FLOAT32_MARGIN < FLOAT32_EXACT
            if matrix.nnz
            else True
        )
    else:
        exact32 = (
            integral(matrix)
            and matrix.min(initial=0) >= 0
            and float(matrix.max(initial=0)) * len(matrix) * FLOAT32_MARGIN < FLOAT32_EXACT
        )
    return np.float32 if exact32 else np.float64


def pattern_count(matrix: np.ndarray, grouping: tuple[np.ndarray, np.ndarray]) -> int:
    """Return how many distinct nonzero rows a block has (its collapsed rows), from its ``grouped`` rows."""
    return len(grouping[0]) - int(not matrix.any(axis=1).all())


def item_block(matrix: np.ndarray) -> ItemBlock:
    """Return a block of count rows (a dense or a sparse matrix) ready to multiply: identical rows collapsed when
    that leaves at most ``COLLAPSE_SHARE`` of them, float32 when exact for any replicate drawing up to
    ``FLOAT32_MARGIN`` times the block's items (integer counts only: real values always sum in float64). A source
    alone in its block (``block_items``)."""
    return block_items([matrix], matrix.shape[0])[0]


def block_items(matrices: Sequence[Any], rows: int) -> list[ItemBlock]:
    """Return one canonical block's sources ready to multiply: ``shared_weights([item_block(m) for m in
    matrices], rows)``, the same blocks, without grouping the rows of a source whose collapse could not be kept.

    A collapse is kept when every source's is (each counts its own weights) or when it saves more than
    ``WEIGHT_PASS_COLUMNS`` columns; beside a source keeping a row per item, one of fewer columns never does.
    So the wide sources are grouped first, and the narrow ones only while every source so far collapses.
    """
    dtypes = [block_dtype(matrix) for matrix in matrices]
    cost = [matrix.shape[1] * (2 if dtype == np.float64 else 1) for matrix, dtype in zip(matrices, dtypes)]
    found: dict[int, Any] = {}  # source -> (grouping, patterns) when its rows collapse, else None
    for number, matrix in enumerate(matrices):
        if issparse(matrix) or not len(matrix) or mostly_distinct(matrix):
            found[number] = None
    for number in sorted(set(range(len(matrices))) - set(found), key=lambda k: cost[k] < WEIGHT_PASS_COLUMNS):
        if cost[number] < WEIGHT_PASS_COLUMNS and None in found.values():
            found[number] = None  # it would be undone: a source beside it keeps a row per item
            continue
        matrix = matrices[number]
        grouping = grouped(matrix)
        patterns = pattern_count(matrix, grouping)
        found[number] = (grouping, patterns) if patterns <= COLLAPSE_SHARE * len(matrix) else None
    every = None not in found.values()
    blocks = []
    for number, matrix in enumerate(matrices):
        collapsed = found[number]
        if collapsed is not None and (every or cost[number] * (1 - collapsed[1] / max(rows, 1)) >= WEIGHT_PASS_COLUMNS):
            codes, patterns = collapse(matrix, collapsed[0])
            blocks.append(ItemBlock(codes, stored(patterns, dtypes[number]), dtypes[number]))
        elif issparse(matrix):
            blocks.append(ItemBlock(None, matrix.astype(dtypes[number]).tocsr()))
        else:
            blocks.append(ItemBlock(None, stored(matrix, dtypes[number]), dtypes[number]))
    return blocks


def stored(matrix: np.ndarray, dtype: Any) -> np.ndarray:
    """Return a dense block's counts as ``ItemBlock`` keeps them, C-ordered: whole numbers in the smallest unsigned
    type holding them (cast slab by slab in each product: converting a million items' blocks into float32 up
    front took 5.2 s of fresh pages, and 2.2 GB), anything else in ``dtype``."""
    if dtype == np.float32 or (np.issubdtype(matrix.dtype, np.integer) and matrix.min(initial=0) >= 0):
        return np.ascontiguousarray(matrix, np.min_scalar_type(int(matrix.max(initial=0))))
    return np.ascontiguousarray(matrix, dtype)


def expanded(block: ItemBlock) -> ItemBlock:
    """Return a collapsed block with a row per item again (its patterns read back through its codes)."""
    if block.codes is None:
        return block
    padded = np.concatenate([block.counts, np.zeros((1, block.counts.shape[1]), dtype=block.counts.dtype)])
    return ItemBlock(None, padded[block.codes], block.dtype)


def shared_weights(found: list[ItemBlock], rows: int) -> list[ItemBlock]:
    """Return one block's sources with the collapses that do not pay undone (the sums are the same either way).

    When one source keeps a row per item, its weights are counted anyway and the others can share them
    (``chunk_sums``); a collapsed source counts its own, which pays only when it saves more than
    ``WEIGHT_PASS_COLUMNS`` float32 columns' products (a float64 column costs two).
    """
    if all(block.codes is not None for block in found):  # each counts its own weights anyway
        return found
    kept = []
    for block in found:
        if block.codes is not None:
            columns = block.counts.shape[1] * (2 if block.dtype == np.float64 else 1)
            if columns * (1 - len(block.counts) / max(rows, 1)) < WEIGHT_PASS_COLUMNS:
                block = expanded(block)
        kept.append(block)
    return kept


@dataclass(frozen=True)
class Source:
    """Count columns to resample: ``rows(items)`` gives their values on any items (record positions).

    ``resamples``: how many of the call's replicates this source needs (the first ones; by default all).
    Sources drawn in one call share every draw: the per-type counts ride on the swap's draws.
    """

    n_columns: int
    rows: Callable[[np.ndarray], np.ndarray]
    resamples: int | None = None


def matrix_source(columns: np.ndarray, listed: np.ndarray | None = None, resamples: int | None = None) -> Source:
    """Return a source over a count matrix: row k for item k, or with ``listed`` for item ``listed[k]``
    (unlisted items count zero in every column: per-type counts list only the items having some)."""
    if listed is None:
        return Source(columns.shape[1], lambda items: columns[items], resamples)
    size = int(listed.max()) + 1 if len(listed) else 0
    where = np.full(size + 1, -1, dtype=np.int64)  # item -> its row of ``columns``; the last: any item beyond
    where[listed] = np.arange(len(listed))
    if issparse(columns):  # a sparse matrix's rows, with an empty row last for the items not listed
        from scipy.sparse import csr_matrix, vstack

        padded = vstack([columns, csr_matrix((1, columns.shape[1]), dtype=columns.dtype)], format="csr")
        return Source(
            columns.shape[1],
            lambda items: padded[
                np.where(where[np.minimum(items, size)] >= 0, where[np.minimum(items, size)], len(listed))
            ],
            resamples,
        )

    def rows(items: np.ndarray) -> np.ndarray:
        found = where[np.minimum(items, size)]
        if not len(listed):
            return np.zeros((len(items), columns.shape[1]), dtype=columns.dtype)
        matrix = columns[np.maximum(found, 0)]  # one gather, then the unlisted rows zeroed (2.5x faster than
        matrix[found < 0] = 0  # zeroing every row and scattering the listed ones through a mask)
        return matrix

    return Source(columns.shape[1], rows, resamples)


def canonical_blocks(members: np.ndarray, block_items: int | None = None) -> list[np.ndarray]:
    """Return a stratum's canonical blocks: its items (in id order) ``block_items`` (BLOCK_ITEMS) at a time."""
    block_items = block_items or BLOCK_ITEMS
    return [members[first : first + block_items] for first in range(0, max(len(members), 1), block_items)]


def cluster_rows(matrix: Any, bounds: np.ndarray) -> Any:
    """Return one row per cluster: the sum of its items' rows (``bounds``: where each cluster's rows start, in
    ``matrix``'s row order, then the end). Dense rows sum in int64 or float64, so small count dtypes never wrap."""
    starts = np.asarray(bounds[:-1], dtype=np.int64)
    if issparse(matrix):
        cluster = np.repeat(np.arange(len(starts)), np.diff(bounds))
        indicator = csr_matrix(
            (np.ones(len(cluster)), (cluster, np.arange(len(cluster)))), shape=(len(starts), matrix.shape[0])
        )
        return (indicator @ matrix).tocsr()
    if not len(starts):
        return matrix[:0]
    wide = np.int64 if np.issubdtype(matrix.dtype, np.integer) or matrix.dtype == bool else np.float64
    return np.add.reduceat(matrix, starts, axis=0, dtype=wide)


def block_totals(
    sizes: Sequence[int], seed: np.random.SeedSequence, stratum_key: int, chunk: int, count: int
) -> np.ndarray:
    """Return totals[replicate, block]: how many of a stratum's n draws fall in each canonical block."""
    n = int(sum(sizes))
    if len(sizes) == 1:
        return np.full((count, 1), n, dtype=np.int64)
    rng = chunk_rng(seed, stratum_key, chunk, 0)
    return rng.multinomial(n, np.asarray(sizes, dtype=np.float64) / n, size=count).astype(np.int64)


class Workspace:
    """One thread's weight matrices, reused from product to product (``chunk_sums``).

    A million items' blocks weigh 128 replicates x 65,536 items: 32 MiB as float32 and 64 MiB as float64, each
    above the allocator's threshold for reusing freed memory, so every fresh one was mapped and zeroed page by
    page again. Each matrix starts at its buffer's start, whatever its shape.
    """

    def __init__(self) -> None:
        self.buffers: dict[tuple[Any, Any], np.ndarray] = {}

    def array(self, slot: Any, dtype: Any, rows: int, width: int) -> np.ndarray:
        """Return an uninitialised C-ordered (rows, width) matrix of ``dtype``, the ``slot``-th of its dtype (the
        weights' slots are numbers; ``multiply``'s are names)."""
        key, size = (slot, np.dtype(dtype)), rows * width
        found = self.buffers.get(key)
        if found is None or found.size < size:
            found = self.buffers[key] = np.empty(size, dtype=dtype)
        return found[:size].reshape(rows, width)


DRAW_CELLS = 1 << 18  # draws made at once within a block's replicates (2 MiB): counted while in cache


def chunk_sums(
    sizes: Sequence[int],
    blocks: Sequence[Sequence[ItemBlock]],
    seed: np.random.SeedSequence,
    stratum_key: int,
    chunk: int,
    counts: Sequence[int],
    only: Sequence[int] | None = None,
    workspace: Workspace | None = None,
) -> list[np.ndarray]:
    """Return, per source, sums[replicate, column] of one stratum's chunk of replicates: the unit of work.

    ``sizes``: the items of each canonical block; ``blocks[source][block]``: each source's counts on it;
    ``counts[source]``: how many of the chunk's replicates the source needs (0: none). Every source reads the
    same draws. ``only``: the blocks to sum (the others are left out), for a caller splitting one chunk's
    blocks across workers; the parts add up to the whole chunk's sums exactly (integer counts, exact sums).
    ``workspace``: the calling thread's reusable weight matrices (``Workspace``).

    Per block and span of replicates (``block_rows``), the draws are counted once into weights for every
    source: one matrix per distinct item-to-row mapping (the item rows, or a collapsed source's codes) and
    dtype its sources multiply in. Each source then multiplies its replicates' rows of them, as it would
    multiply weights counted for it alone: the same products, to the bit.
    """
    count = max(counts)
    totals = block_totals(sizes, seed, stratum_key, chunk, count)
    sums = [np.zeros((wanted, source_columns(source)), dtype=np.float64) for wanted, source in zip(counts, blocks)]
    space = workspace or Workspace()
    for number in range(len(sizes)) if only is None else only:
        rng = chunk_rng(seed, stratum_key, chunk) if number == 0 else chunk_rng(seed, stratum_key, chunk, number)
        size = sizes[number]
        rows = block_rows(size, count)
        for first in range(0, count, rows):
            drawn = totals[first : first + rows, number]
            # per source: its replicates here, its matrix, and which weights it reads (their mapping and dtype)
            products, mappings = [], {}  # mappings: (codes, width) -> [codes, replicates, {dtype: weights}]
            for wanted, source, total in zip(counts, blocks, sums):
                block, stop = source[number], min(first + len(drawn), wanted)
                if stop <= first or not block.counts.shape[0]:
                    continue
                dtype = block.operand(drawn[: stop - first])
                key = (None if block.codes is None else id(block.codes), block.counts.shape[0])
                mapping = mappings.setdefault(key, [block.codes, 0, {}])
                mapping[1] = max(mapping[1], stop - first)
                mapping[2].setdefault(dtype, None)
                products.append((total[first:stop], block, dtype, key))
            slots: dict[Any, int] = {}
            for (_, width), mapping in mappings.items():
                for dtype in mapping[2]:
                    slots[dtype] = slots.get(dtype, -1) + 1
                    mapping[2][dtype] = space.array(slots[dtype], dtype, mapping[1], width)
            # the draws, a few replicates at a time (all of them: the next span's draws follow in the stream)
            ends = np.cumsum(drawn)
            batch = max(1, DRAW_CELLS // max(size, 1))
            for start in range(0, len(drawn), batch):
                stop = min(start + batch, len(drawn))
                begin = int(ends[start - 1]) if start else 0
                draws = rng.integers(0, size, size=int(ends[stop - 1]) - begin)
                for (_, width), (codes, needed, weights) in mappings.items():
                    if needed > start:
                        upto = min(stop, needed)
                        used = int(ends[upto - 1]) - begin
                        outs = [found[start:upto] for found in weights.values()]
                        count_weights(draws[:used], drawn[start:upto], width, codes, outs)
            for total, block, dtype, key in products:
                weights = mappings[key][2][dtype][: len(total)]
                multiply(total, weights, block, dtype, int(drawn[: len(total)].max()), space)
    return sums


def source_columns(blocks: Sequence[ItemBlock]) -> int:
    """Return the number of columns of a source's blocks."""
    return blocks[0].counts.shape[1]


def resampled_sums(
    columns: np.ndarray | Sequence[Source],
    strata: Sequence[np.ndarray],
    resamples: int,
    seed: np.random.SeedSequence,
    progress: Callable[[int], None] | None = None,
    stratum_keys: Sequence[int] | None = None,
    rows: np.ndarray | None = None,
    run: Callable[..., Any] | None = None,
    clusters: Sequence[np.ndarray | None] | None = None,
) -> Any:
    """Return sums[group, replicate, column] for each stratum and pooled (last group).

    Replicate 0 is the original sample (every weight 1); replicates 1..B are the bootstrap draws. Pooled
    sums are the sums of the strata's sums: each replicate draws every stratum independently. Replicates
    come in chunks of ``REPLICATE_CHUNK``, each drawn from its own streams keyed by (stratum key, chunk, block),
    so the result is the same whatever the number of threads or workers and the order they finish in, and the
    first B' < B replicates of a stream are the same draws whatever B (for B' a multiple of the chunk).

    ``columns``: a count matrix (row k: item k), or several ``Source``s drawn together (then a list of sums,
    one per source, each with its own number of replicates). ``rows``: with a matrix, the item of each of its
    rows when it lists only the items with a nonzero count (``matrix_source``).

    ``run(units, sizes, blocks, seed, stratum_keys, counts)`` computes the chunks elsewhere (the Dask
    backend): per unit (group, chunk), ``chunk_sums`` of that unit.

    ``clusters`` (the cluster bootstrap, docs/method.md section 4): per stratum, None (every item its own
    cluster) or where each cluster's items start in the stratum's ``members`` (whose items are then in
    cluster order, each cluster's contiguous), then ``len(members)``. A stratum of c clusters draws c
    clusters with replacement per replicate: each cluster's items enter with the cluster's weight, which is
    the same as drawing one row per cluster holding the sum of its items' counts. So the rows resampled (the
    canonical blocks, the collapse of identical rows, the draws) are the clusters' summed rows, and
    everything below runs as for items, on the same streams.
    """
    single = not isinstance(columns, (list, tuple))  # a matrix: dense, or sparse (per-type counts)
    sources = [matrix_source(columns, rows)] if single else list(columns)
    stratum_keys = list(range(len(strata))) if stratum_keys is None else list(stratum_keys)
    wanted = [resamples if source.resamples is None else min(source.resamples, resamples) for source in sources]
    sums = [
        np.zeros((len(strata) + 1, count + 1, source.n_columns), dtype=np.float64)
        for count, source in zip(wanted, sources)
    ]
    sizes: list[list[int]] = []  # sizes[group][block]
    blocks: list[list[list[ItemBlock]]] = [[] for _ in sources]  # blocks[source][group][block]

    def prepare(group: int) -> None:
        """Cut a stratum into its canonical blocks, each source's counts on each ready to multiply."""
        members, bounds = strata[group], None if clusters is None else clusters[group]
        if bounds is None:  # every item its own cluster: blocks of items
            parts, part_bounds = canonical_blocks(members), None
        else:  # blocks of clusters: each block's items, and where its clusters start among them
            parts, part_bounds = [], []
            for numbers in canonical_blocks(np.arange(len(bounds) - 1)):  # a stratum has at least one cluster
                edges = np.asarray(bounds[numbers[0] : numbers[-1] + 2], dtype=np.int64)
                parts.append(members[edges[0] : edges[-1]])
                part_bounds.append(edges - edges[0])
        sizes.append([len(part) if part_bounds is None else len(part_bounds[k]) - 1 for k, part in enumerate(parts)])
        ready: list[list[ItemBlock]] = [[] for _ in sources]
        for k, part in enumerate(parts):
            matrices = []
            for source, total in zip(sources, sums):
                matrix = source.rows(part)
                if part_bounds is not None:
                    matrix = cluster_rows(matrix, part_bounds[k])
                total[group, 0] += np.asarray(matrix.sum(axis=0)).reshape(-1)
                matrices.append(matrix)
            # sources sharing a block's weights: collapse only where it pays
            for found, block in zip(ready, block_items(matrices, sizes[group][k])):
                found.append(block)
        for found, prepared in zip(blocks, ready):
            found.append(prepared)

    # a unit per stratum and chunk of replicates that some source needs
    def units_of(group: int) -> list[tuple[int, int]]:
        return [(group, first) for first in range(0, max(wanted), REPLICATE_CHUNK)]

    def counts_of(unit: tuple[int, int]) -> list[int]:
        return [max(0, min(REPLICATE_CHUNK, count - unit[1])) for count in wanted]

    def place(unit: tuple[int, int], chunk: list[np.ndarray]) -> None:
        group, first = unit
        for total, part in zip(sums, chunk):
            total[group, 1 + first : 1 + first + len(part)] = part
        if progress:
            progress(len(strata[group]) * min(REPLICATE_CHUNK, resamples - first) // max(resamples, 1))

    if run is not None:
        for group in range(len(strata)):
            prepare(group)
        units = [unit for group in range(len(strata)) for unit in units_of(group)]
        counts = [counts_of(unit) for unit in units]
        for unit, chunk in zip(units, run(units, sizes, blocks, seed, stratum_keys, counts)):
            place(unit, chunk)
    else:
        spaces = threading.local()  # each thread's weight matrices, reused by its units (freed with the pool)

        def draw(unit: tuple[int, int]) -> list[np.ndarray]:
            group, first = unit
            if not hasattr(spaces, "space"):
                spaces.space = Workspace()
            return chunk_sums(
                sizes[group],
                [found[group] for found in blocks],
                seed,
                stratum_keys[group],
                first // REPLICATE_CHUNK,
                counts_of(unit),
                workspace=spaces.space,
            )

        pending: deque[tuple[tuple[int, int], Future]] = deque()

        def settle(before: int) -> None:
            """Place the finished units in order, waiting for those of the strata before ``before``; a stratum's
            blocks are released once its last unit is placed."""
            while pending and (pending[0][0][0] < before or pending[0][1].done()):
                unit, future = pending.popleft()
                place(unit, future.result())
                if not pending or pending[0][0][0] != unit[0]:
                    for found in blocks:
                        found[unit[0]] = []

        # numpy releases the GIL while drawing, counting and multiplying: two threads measured 1.8x faster on
        # two cores. BLAS itself stays single-threaded: its threads only waited on each other in these many
        # small products (measured 10x slower on a loaded machine). Each stratum's units start as soon as its
        # blocks are ready, so the threads draw while this thread prepares the next stratum (the blocks, and
        # so the sums, are the same in any order: the rows are grouped by exact digests); it prepares one only
        # when the strata before the previous one are drawn, so at most two strata's blocks are held at once.
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(WORKERS) as pool:
            for group in range(len(strata)):
                settle(group - 1)
                prepare(group)
                pending.extend((unit, pool.submit(draw, unit)) for unit in units_of(group))
            settle(len(strata))
    for total in sums:
        total[-1] = total[:-1].sum(axis=0)
    return sums[0] if single else sums


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (low, high) per row: numpy's linear quantile over the defined replicates.

    A row with fewer than half of its replicates defined gets NaN. The complete rows are taken in ``WORKERS``
    parts on threads (``threaded_map``: numpy's partitions run without the GIL), each row's quantiles the same
    floats in any part.
    """
    quantiles = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = replicates.reshape(-1, replicates.shape[-1])
    low = np.full(rows.shape[0], np.nan)
    high = np.full(rows.shape[0], np.nan)
    defined = ~np.isnan(rows)
    n_defined = defined.sum(axis=1)
    complete = n_defined == rows.shape[1]
    if complete.any():
        chosen = np.flatnonzero(complete)
        parts = np.array_split(chosen, min(WORKERS, max(1, len(chosen) * rows.shape[1] // QUANTILE_VALUES)))
        found = threaded_map(lambda part: np.quantile(rows[part], quantiles, axis=1), parts)
        low[chosen], high[chosen] = np.concatenate(found, axis=1)
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


def one_sided_p_value(not_above: np.ndarray, n_defined: np.ndarray, replicates: int) -> np.ndarray:
    """Return the one-sided bootstrap p of "s is not above zero": min(1, (1 + #{s* ≤ 0}) / (B′ + 1)).

    Given the counts #{s* ≤ 0} and B′ (the defined replicates) of ``replicates`` in all; fewer than half
    defined gives NaN, as for the two-sided p, which is min(1, 2 · min(p(s), p(−s))).
    """
    p_value = np.minimum(1.0, (1.0 + not_above) / (n_defined + 1.0))
    return np.where(2 * n_defined >= replicates, p_value, np.nan)


PARTIAL_CONJUNCTION = ("bonferroni", "fisher")  # how per-reference p-values combine (docs/method.md section 7)


def partial_conjunction(p_values: np.ndarray, method: str) -> np.ndarray:
    """Return p^u for u = 1..K along the last axis: the p of "the effect holds under at least u of the K".

    Benjamini & Heller (2008): with p_(1) ≤ … ≤ p_(K), Bonferroni p^u = min(1, (K − u + 1) p_(u)); Fisher
    p^u = P(χ²_{2(K−u+1)} ≥ −2 Σ_{i≥u} ln p_(i)). Made non-decreasing in u (a running maximum), so
    p^u ≤ alpha for every u up to the largest that passes: family-wise over u. A NaN p makes its row NaN.
    """
    ordered = np.sort(p_values, axis=-1)  # NaN sorts last
    size = ordered.shape[-1]
    remaining = np.arange(size, 0, -1, dtype=np.float64)  # K − u + 1
    if method == "bonferroni":
        combined = np.minimum(1.0, remaining * ordered)
    elif method == "fisher":
        from scipy.special import chdtrc

        with np.errstate(divide="ignore"):
            statistic = -2.0 * np.flip(np.cumsum(np.flip(np.log(ordered), axis=-1), axis=-1), axis=-1)
        combined = chdtrc(2.0 * remaining, statistic)
    else:
        raise ValueError(f"not a partial conjunction method: {method!r}")
    combined = np.maximum.accumulate(combined, axis=-1)
    return np.where(np.isnan(p_values).any(axis=-1, keepdims=True), np.nan, combined)


def replicated_count(p_partial: np.ndarray, alpha: float) -> np.ndarray:
    """Return k̂: the largest u with p^u ≤ alpha (0 if none) along the last axis; NaN where p^u is."""
    count = (p_partial <= alpha).sum(axis=-1).astype(np.float64)  # p^u is non-decreasing: a count is the largest u
    return np.where(np.isnan(p_partial).any(axis=-1), np.nan, count)


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


def decisive_resamples(family_size: int, confidence: float) -> int:
    """Return the smallest B whose Holm floor is below the level 1 − confidence: with fewer replicates no test
    of a family of ``family_size`` can be significant, so the run cannot decide significance at all."""
    level = 1 - confidence
    needed = max(1, int(np.floor(2 * family_size / level)) - 1)
    while needed > 1 and holm_floor(family_size, needed - 1) < level:  # float rounding
        needed -= 1
    while holm_floor(family_size, needed) >= level:
        needed += 1
    return needed


# resamples = "auto": B is the smallest number of replicates whose Holm floor is at most a tenth of the level
# (so the floor never decides a test at the level), at least AUTO_MIN_RESAMPLES (the contract's former
# default), at most AUTO_MAX_RESAMPLES. The bootstrap's cost is linear in B: the CoNLL-2003 example (14
# outputs x 4 references, 3,453 items, 156 tests in the adjacent family) audits in 3.8 s at 2,000
# replicates and 17-19 s at 62,399 (docs/methods.md, choice 17); the cap keeps a leaderboard audit
# under about a minute on a laptop and its bootstrap sums within load.BOOTSTRAP_MEMORY_BUDGET.
AUTO_MIN_RESAMPLES = 2000
AUTO_MAX_RESAMPLES = 100_000
AUTO_FLOOR_SHARE = 0.1  # the floor target, as a share of the level 1 - confidence


def auto_resamples(
    family_size: int, confidence: float, ceiling: int = AUTO_MAX_RESAMPLES, floor_share: float = AUTO_FLOOR_SHARE
) -> int:
    """Return B for resamples = "auto": the smallest B ≥ 2,000 with holm_floor(m, B) ≤ (1 − confidence)/10.

    ``ceiling`` (at most AUTO_MAX_RESAMPLES; lower when the record's bootstrap sums would not fit in memory)
    bounds B; a family too large for it keeps a floor above the target, which the results report.
    ``floor_share``: the target as a share of the level (the demo's config aims at 0.8 to build in seconds).
    """
    target = floor_share * (1 - confidence)
    ceiling = min(ceiling, AUTO_MAX_RESAMPLES)
    needed = max(AUTO_MIN_RESAMPLES, int(np.ceil(2 * family_size / target)) - 1)
    while needed > AUTO_MIN_RESAMPLES and holm_floor(family_size, needed - 1) <= target:  # float rounding
        needed -= 1
    while holm_floor(family_size, needed) > target:
        needed += 1
    return max(min(needed, ceiling), 1)
