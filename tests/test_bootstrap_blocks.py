"""Block size and thread count are speed knobs only: they must never change a single draw."""

import numpy as np
import pytest

from refsens_report import bootstrap


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_block_size_and_threads_do_not_change_the_sums(monkeypatch, workers):
    columns = np.random.default_rng(1).integers(0, 4, size=(5000, 3)).astype(np.float64)
    strata = [np.arange(0, 3000), np.arange(3000, 5000)]
    monkeypatch.setattr(bootstrap, "WORKERS", workers)
    results = []
    for cells in (1 << 17, 7919, 16_000_000):
        monkeypatch.setattr(bootstrap, "BLOCK_CELLS", cells)
        results.append(bootstrap.resampled_sums(columns, strata, 600, np.random.SeedSequence(5)))
    assert all(np.array_equal(results[0], other) for other in results[1:])
    monkeypatch.setattr(bootstrap, "WORKERS", 1)
    monkeypatch.setattr(bootstrap, "BLOCK_CELLS", 1 << 17)
    assert np.array_equal(results[0], bootstrap.resampled_sums(columns, strata, 600, np.random.SeedSequence(5)))
    # replicate 0 is the sample itself; pooled is the sum of the strata
    assert np.array_equal(results[0][0, 0], columns[:3000].sum(axis=0))
    assert np.array_equal(results[0][-1], results[0][0] + results[0][1])


def test_a_stratum_stream_does_not_depend_on_the_other_strata():
    columns = np.random.default_rng(1).integers(0, 4, size=(5000, 3)).astype(np.float64)
    both = bootstrap.resampled_sums(
        columns, [np.arange(0, 3000), np.arange(3000, 5000)], 300, np.random.SeedSequence(5), stratum_keys=[11, 22]
    )
    alone = bootstrap.resampled_sums(
        columns, [np.arange(3000, 5000)], 300, np.random.SeedSequence(5), stratum_keys=[22]
    )
    assert np.array_equal(both[1], alone[0])


def test_weights_draw_n_items_per_replicate():
    rng = np.random.default_rng(0)
    for replicates, weights in bootstrap.stratified_weights(37, 500, rng):
        assert weights.shape == (replicates.stop - replicates.start, 37)
        assert np.all(weights.sum(axis=1) == 37)


# --- canonical blocks, collapsed counts and float32 products: speed knobs that must not change a sum ----------


def _record_columns(seed: int = 3, n: int = 3000) -> np.ndarray:
    """Count columns with many repeated rows (most items easy), a column of ones and an all-zero stretch."""
    rng = np.random.default_rng(seed)
    easy = rng.random(n) < 0.7
    columns = np.where(easy[:, None], 1, rng.integers(0, 5, size=(n, 6))).astype(np.float64)
    columns[:200] = 0
    return np.column_stack([columns, np.ones(n)])


def _item_level_sums(columns, strata, resamples, seed, stratum_keys, block_items):
    """The sums straight from the definition: draw each block's items, add up their rows one replicate at a time."""
    sums = np.zeros((len(strata) + 1, resamples + 1, columns.shape[1]))
    for group, members in enumerate(strata):
        sums[group, 0] = columns[members].sum(axis=0)
        parts = [members[first : first + block_items] for first in range(0, len(members), block_items)]
        for first in range(0, resamples, bootstrap.REPLICATE_CHUNK):
            chunk, count = first // bootstrap.REPLICATE_CHUNK, min(bootstrap.REPLICATE_CHUNK, resamples - first)
            totals = bootstrap.block_totals([len(p) for p in parts], seed, stratum_keys[group], chunk, count)
            for number, part in enumerate(parts):
                extra = () if number == 0 else (number,)
                rng = bootstrap.chunk_rng(seed, stratum_keys[group], chunk, *extra)
                draws = rng.integers(0, len(part), size=int(totals[:, number].sum()))
                ends = np.cumsum(totals[:, number])
                for replicate, drawn in enumerate(np.split(draws, ends[:-1])):
                    sums[group, 1 + first + replicate] += columns[part[drawn]].sum(axis=0)
    sums[-1] = sums[:-1].sum(axis=0)
    return sums


@pytest.mark.parametrize("block_items", [1 << 16, 700, 97])
def test_blocked_collapsed_sums_equal_the_item_level_definition(monkeypatch, block_items):
    columns = _record_columns()
    strata = [np.arange(0, 2000)[::-1].copy(), np.arange(2000, 3000)]
    seed = np.random.SeedSequence(9)
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", block_items)
    expected = _item_level_sums(columns, strata, 520, seed, [4, 8], block_items)
    for share in (0.0, 1.0):  # never collapse, always collapse
        monkeypatch.setattr(bootstrap, "COLLAPSE_SHARE", share)
        found = bootstrap.resampled_sums(columns, strata, 520, seed, stratum_keys=[4, 8])
        assert np.array_equal(found, expected)
    # every replicate draws exactly n items from each stratum: the column of ones sums to n
    assert np.all(found[0, :, -1] == 2000) and np.all(found[1, :, -1] == 1000)


def test_a_stratum_of_several_blocks_draws_each_block_in_proportion():
    """Block totals are multinomial over the blocks' sizes: their mean is n x size / n and they add up to n."""
    totals = bootstrap.block_totals([500, 300, 200], np.random.SeedSequence(1), 0, 0, 4000)
    assert np.all(totals.sum(axis=1) == 1000)
    assert np.allclose(totals.mean(axis=0), [500, 300, 200], rtol=0.01)


def test_blocks_split_across_workers_add_up_to_the_whole_chunk(monkeypatch):
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 256)
    columns = _record_columns()
    members = np.arange(3000)
    parts = bootstrap.canonical_blocks(members)
    blocks = [[bootstrap.item_block(columns[part]) for part in parts]]
    sizes = [len(part) for part in parts]
    seed = np.random.SeedSequence(2)
    whole = bootstrap.chunk_sums(sizes, blocks, seed, 5, 1, [250])[0]
    pieces = [
        bootstrap.chunk_sums(sizes, blocks, seed, 5, 1, [250], only=only)[0]
        for only in (range(0, 4), range(4, 9), range(9, len(parts)))
    ]
    assert np.array_equal(sum(pieces), whole)


def test_collapse_groups_identical_rows_and_drops_zero_rows():
    rows = np.array([[1, 2], [0, 0], [1, 2], [3, 0], [0, 0], [3, 0]], dtype=np.float64)
    codes, patterns = bootstrap.collapse(rows)
    assert patterns.tolist() == [[1, 2], [3, 0]]
    assert codes.tolist() == [0, 2, 0, 1, 2, 1]  # the zero rows count nowhere (code len(patterns))


def test_float32_is_used_only_where_every_sum_is_exact():
    small = bootstrap.item_block(np.full((100, 2), 3.0))
    assert small.dtype == np.float32
    large = bootstrap.item_block(np.full((100, 2), float(1 << 20)))
    assert large.dtype == np.float64


def test_sources_drawn_together_equal_each_drawn_alone(monkeypatch):
    """Per-type counts ride on another source's draws: the same sums as their own call, first replicates only."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 400)
    columns = _record_columns()
    listed = np.arange(0, 3000, 3)
    sparse = columns[listed, :3]
    strata = [np.arange(0, 1500), np.arange(1500, 3000)]
    seed = np.random.SeedSequence(4)
    together = bootstrap.resampled_sums(
        [bootstrap.matrix_source(columns), bootstrap.matrix_source(sparse, listed, resamples=300)],
        strata,
        600,
        seed,
    )
    assert np.array_equal(together[0], bootstrap.resampled_sums(columns, strata, 600, seed))
    assert np.array_equal(together[1], bootstrap.resampled_sums(sparse, strata, 300, seed, rows=listed))
    assert together[1].shape == (3, 301, 3)


def clustered(sizes: list[int]) -> np.ndarray:
    """Return a stratum's cluster bounds: where each cluster of these sizes starts, then the end."""
    return np.r_[0, np.cumsum(sizes)].astype(np.int64)


def test_singleton_clusters_draw_exactly_as_items(monkeypatch):
    columns = np.random.default_rng(2).integers(0, 3, size=(900, 4)).astype(np.uint8)
    strata = [np.arange(0, 600), np.arange(600, 900)]
    seed = np.random.SeedSequence(3)
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 128)  # several canonical blocks
    items = bootstrap.resampled_sums(columns, strata, 300, seed, stratum_keys=[1, 2])
    singletons = bootstrap.resampled_sums(
        columns, strata, 300, seed, stratum_keys=[1, 2], clusters=[clustered([1] * 600), clustered([1] * 300)]
    )
    assert np.array_equal(items, singletons)


@pytest.mark.parametrize("block_items", [1 << 16, 7])
def test_an_item_enters_with_its_clusters_weight(monkeypatch, block_items):
    """Each replicate draws as many clusters as the stratum has; an item counts as often as its cluster was drawn."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", block_items)  # 7: clusters in several canonical blocks
    rng = np.random.default_rng(6)
    sizes = [rng.integers(1, 6, size=40).tolist(), rng.integers(1, 4, size=25).tolist()]
    n = [sum(part) for part in sizes]
    columns = rng.integers(0, 3, size=(sum(n), 3)).astype(np.uint8)
    columns[::3] = columns[0]  # repeated rows: the collapse of identical rows must not mix clusters' weights
    strata = [np.arange(0, n[0]), np.arange(n[0], sum(n))]
    cluster = np.concatenate(
        [np.repeat(np.arange(len(part)), part) + offset for part, offset in zip(sizes, (0, len(sizes[0])))]
    )
    indicator = np.zeros((sum(n), cluster.max() + 1), dtype=np.uint8)  # column c: 1 on the items of cluster c
    indicator[np.arange(sum(n)), cluster] = 1
    sums, found = bootstrap.resampled_sums(
        [bootstrap.matrix_source(columns), bootstrap.matrix_source(indicator)],
        strata,
        300,
        np.random.SeedSequence(9),
        stratum_keys=[1, 2],
        clusters=[clustered(part) for part in sizes],
    )
    size_of = np.bincount(cluster)
    weights = found[:, 1:] / size_of  # group, replicate, cluster: how often each cluster was drawn
    assert np.array_equal(weights, np.round(weights))
    assert np.all(weights[0, :, len(sizes[0]) :] == 0) and np.all(weights[1, :, : len(sizes[0])] == 0)
    assert np.all(weights[0].sum(axis=1) == len(sizes[0])) and np.all(weights[1].sum(axis=1) == len(sizes[1]))
    expected = weights[:2] @ np.stack([columns[cluster == c].sum(axis=0) for c in range(len(size_of))])
    assert np.array_equal(sums[:2, 1:], expected)
    assert np.array_equal(sums[:2, 0], np.stack([columns[part].sum(axis=0) for part in strata]))
    # the draws are those of the clusters' summed rows, whatever the canonical blocks and threads
    monkeypatch.setattr(bootstrap, "WORKERS", 1)
    again = bootstrap.resampled_sums(
        columns,
        strata,
        300,
        np.random.SeedSequence(9),
        stratum_keys=[1, 2],
        clusters=[clustered(part) for part in sizes],
    )
    assert np.array_equal(again, sums)


def test_cluster_rows_sum_small_dtypes_without_wrapping():
    from scipy.sparse import csr_matrix

    matrix = np.full((300, 2), 200, dtype=np.uint8)
    rows = bootstrap.cluster_rows(matrix, np.array([0, 299, 300]))
    assert rows.tolist() == [[299 * 200, 299 * 200], [200, 200]]
    sparse = bootstrap.cluster_rows(csr_matrix(matrix.astype(np.float32)), np.array([0, 299, 300]))
    assert sparse.toarray().tolist() == rows.tolist()


def _same_blocks(found, expected) -> bool:
    return all(
        (one.codes is None) == (other.codes is None)
        and (one.codes is None or np.array_equal(one.codes, other.codes))
        and one.counts.dtype == other.counts.dtype
        and np.array_equal(one.counts, other.counts)
        for one, other in zip(found, expected, strict=True)
    )


def test_block_items_are_the_item_blocks_with_the_unpaying_collapses_undone():
    """block_items skips grouping a source whose collapse would be undone: the blocks are shared_weights'."""
    rng = np.random.default_rng(11)
    rows = 3000
    distinct = rng.integers(0, 5, size=(rows, 40)).astype(np.uint8)
    repeated = np.repeat(rng.integers(0, 3, size=(rows // 4, 6)).astype(np.uint8), 4, axis=0)
    wide = np.repeat(repeated, 40, axis=1)
    real = np.repeat(rng.random((rows // 5, 3)), 5, axis=0)  # real values: float64, 20 % distinct rows
    zeros = np.zeros((rows, 4), dtype=np.uint16)
    large = repeated.astype(np.int64) * 100_000  # integer counts too large for float32
    cases = [
        [distinct, repeated],
        [repeated, distinct],
        [repeated, real],
        [wide, repeated, real],
        [repeated, wide, zeros],
        [zeros, real],
        [large, repeated],
        [real],
        [distinct],
        [distinct[:0], repeated[:0]],
    ]
    for matrices in cases:
        expected = bootstrap.shared_weights([bootstrap.item_block(m) for m in matrices], len(matrices[0]))
        assert _same_blocks(bootstrap.block_items(matrices, len(matrices[0])), expected)


def test_integer_rows_group_as_a_row_wise_unique(monkeypatch):
    rng = np.random.default_rng(5)
    for matrix in (
        np.repeat(rng.integers(0, 4, size=(500, 7)), 3, axis=0)[rng.permutation(1500)].astype(np.uint8),
        rng.integers(0, 2, size=(2000, 3)).astype(bool),
        np.repeat(rng.integers(-(1 << 40), 1 << 40, size=(50, 2)), 4, axis=0),  # too large for exact digests
    ):
        first, inverse = bootstrap.grouped(matrix)
        _, expected = np.unique(matrix, axis=0, return_inverse=True)
        # the same partition of the rows: each row's group's first row equals it, and groups are distinct rows
        assert np.array_equal(matrix[first[inverse]], matrix)
        assert len(first) == len(np.unique(expected))
        # a hash collision (every row hashing alike) still groups the rows themselves
        monkeypatch.setattr(bootstrap, "integer_digests", lambda m: np.zeros((len(m), 2)))
        first, inverse = bootstrap.grouped(matrix)
        assert np.array_equal(matrix[first[inverse]], matrix) and len(first) == len(np.unique(expected))
        monkeypatch.undo()


def test_real_rows_group_as_a_row_wise_unique_whatever_the_blas_threads():
    """Real-valued rows are grouped by their bits (``bit_digests``: integer arithmetic, no BLAS), so identical rows
    always share a group wherever they sit in the block, and the groups are the same on any number of BLAS
    threads: a collapsed block's sums add up in the same order on every machine."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(9)
    distinct = rng.random((300, 7)) * 1e3
    distinct[:3] = [[0.1] * 7, [0.1 + 2**-50] * 7, [0.0] * 7]  # rows a bit apart, and the zero row
    matrix = distinct[rng.integers(0, 300, size=60_000)]
    expected = len(np.unique(matrix, axis=0))
    found = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            first, inverse = bootstrap.grouped(matrix)
        assert np.array_equal(matrix[first[inverse]], matrix) and len(first) == expected
        found.append((first, inverse))
    assert all(np.array_equal(a, b) for a, b in zip(*found))
    # a row's key depends on its bits alone: the same row anywhere in a block, or in another block, hashes alike
    keys = bootstrap.bit_digests(matrix)
    assert np.array_equal(bootstrap.bit_digests(matrix[::-1]), keys[::-1])
    assert len(np.unique(keys)) == expected


def test_a_workspace_reused_across_blocks_and_chunks_changes_no_sum(monkeypatch):
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 700)
    monkeypatch.setattr(bootstrap, "DRAW_CELLS", 1000)  # several draws per span of replicates
    columns = _record_columns()
    real = np.random.default_rng(2).random((3000, 2))
    members = np.arange(3000)
    parts = bootstrap.canonical_blocks(members)
    sizes = [len(part) for part in parts]
    blocks = [bootstrap.block_items([columns[part], real[part]], len(part)) for part in parts]
    sources = [[found[0] for found in blocks], [found[1] for found in blocks]]
    seed = np.random.SeedSequence(8)
    space = bootstrap.Workspace()
    for chunk in range(3):
        shared = bootstrap.chunk_sums(sizes, sources, seed, 1, chunk, [250, 120], workspace=space)
        alone = [
            bootstrap.chunk_sums(sizes, [source], seed, 1, chunk, [count])[0]
            for source, count in zip(sources, [250, 120])
        ]
        assert all(np.array_equal(one, other) for one, other in zip(shared, alone))


def test_a_replicate_drawing_a_float32_block_too_often_multiplies_it_in_float64(monkeypatch):
    """Blocks are float32 for replicates drawing up to FLOAT32_MARGIN times their items; one drawing more is
    multiplied in float64 (ItemBlock.operand), with weights counted in float64 beside the other sources' float32."""
    block = bootstrap.item_block(np.full((100, 2), 1000.0))
    assert block.dtype == np.float32  # 1,000 x 100 items x the margin is below 2**24
    assert block.operand(np.array([100, 8000])) == np.float32
    assert block.operand(np.array([100, 20_000])) == np.float64  # 20,000 x 1,000 is not
    # a margin below 1: about half of the replicates draw a block more often than it allows
    monkeypatch.setattr(bootstrap, "FLOAT32_MARGIN", 0.9)
    monkeypatch.setattr(bootstrap, "FLOAT32_EXACT", 4 * 97 + 1)  # the columns count up to 4
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 97)
    columns = _record_columns()
    strata = [np.arange(0, 2000), np.arange(2000, 3000)]
    seed = np.random.SeedSequence(6)
    assert bootstrap.item_block(columns[:97]).dtype == np.float32
    expected = _item_level_sums(columns, strata, 300, seed, [1, 2], 97)
    wide = np.repeat(columns, 30, axis=1)  # a second source sharing the draws, with float64 products of its own
    found = bootstrap.resampled_sums(
        [bootstrap.matrix_source(columns), bootstrap.matrix_source(wide)], strata, 300, seed, stratum_keys=[1, 2]
    )
    assert np.array_equal(found[0], expected) and np.array_equal(found[1], np.repeat(expected, 30, axis=2))


def test_a_source_of_no_columns_draws_empty_sums():
    """A stream whose every column is read off others still draws one empty matrix (ColumnPlan): large enough
    for its rows to be sampled before grouping, it must group them (all alike) without reducing an empty block."""
    columns = np.zeros((20_000, 0), dtype=np.uint8)
    sums = bootstrap.resampled_sums(columns, [np.arange(20_000)], 10, np.random.SeedSequence(1))
    assert sums.shape == (2, 11, 0)
    assert bootstrap.grouped(columns)[0].tolist() == [0]


@pytest.mark.parametrize("slab_cells", [1 << 17, 7, 40])
def test_whole_numbers_stored_small_multiply_slab_by_slab_as_the_whole_block(monkeypatch, slab_cells):
    """Counts kept in their smallest unsigned type and cast a slab of rows at a time (uneven last slab, one row per
    slab) give the product of the whole block cast up front, to the bit: float32, float64, and large counts
    whose float64 sums could round (then one product of the whole block, as before)."""
    monkeypatch.setattr(bootstrap, "SLAB_CELLS", slab_cells)
    monkeypatch.setattr(bootstrap, "COLLAPSE_SHARE", 0.0)  # a row per item: the weights are the items'
    rng = np.random.default_rng(4)
    weights = rng.poisson(1.0, size=(9, 301))
    cases = [
        (rng.integers(0, 4, size=(301, 5)), np.float32),
        (rng.random((301, 5)) < 0.3, np.float32),
        (rng.integers(0, 1 << 30, size=(301, 5)), np.float64),
        (rng.integers(1 << 62, 1 << 63, size=(301, 5), dtype=np.uint64), np.float64),  # sums above 2**53
    ]
    for counts, dtype in cases:
        block = bootstrap.item_block(counts)
        assert block.dtype == dtype and block.counts.itemsize <= counts.itemsize
        found = np.zeros((9, 5))
        multiplied = weights.astype(dtype)
        bootstrap.multiply(found, multiplied, block, block.dtype, 9, bootstrap.Workspace())
        expected = np.zeros((9, 5))
        expected += multiplied @ np.ascontiguousarray(counts, dtype)  # the whole block cast up front
        assert np.array_equal(found, expected)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_strata_drawn_while_the_next_are_prepared_give_the_definitions_sums(monkeypatch, workers):
    """Each stratum's units start as soon as its blocks are ready and its blocks go once it is drawn: with many
    strata of several blocks, the sums are still the item-level definition's, whatever the threads."""
    monkeypatch.setattr(bootstrap, "WORKERS", workers)
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 150)
    columns = _record_columns()
    strata = [np.arange(k, 3000, 5) for k in range(5)]
    seed = np.random.SeedSequence(13)
    expected = _item_level_sums(columns, strata, 520, seed, [3, 1, 4, 15, 9], 150)
    found = bootstrap.resampled_sums(columns, strata, 520, seed, stratum_keys=[3, 1, 4, 15, 9])
    assert np.array_equal(found, expected)
