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
    alone = bootstrap.resampled_sums(columns, [np.arange(3000, 5000)], 300, np.random.SeedSequence(5), stratum_keys=[22])
    assert np.array_equal(both[1], alone[0])


def test_weights_draw_n_items_per_replicate():
    rng = np.random.default_rng(0)
    for replicates, weights in bootstrap.stratified_weights(37, 500, rng):
        assert weights.shape == (replicates.stop - replicates.start, 37)
        assert np.all(weights.sum(axis=1) == 37)
