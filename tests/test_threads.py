"""threads.threaded_map: map on the machine's threads, in the items' order whatever order they finish in."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from refsens_report.threads import threaded_map


def test_threaded_map_is_map_in_order():
    """threaded_map: the results of map, in the items' order, on any number of threads (and none for one item)."""
    items = list(range(50))
    for workers in (None, 1, 2, 7):
        assert threaded_map(lambda x: np.arange(x * 1000).sum(), items, workers) == [
            np.arange(x * 1000).sum() for x in items
        ]
    assert threaded_map(str, [], 2) == [] and threaded_map(str, [3], 2) == ["3"]


def test_threaded_map_raises_what_an_item_raises_and_stops_taking_items():
    done = []

    def one(x: int) -> int:
        if x == 3:
            raise ValueError("item 3")
        time.sleep(0.001)  # the other thread takes its next item meanwhile
        done.append(x)
        return x

    with pytest.raises(ValueError, match="item 3"):
        threaded_map(one, range(200), 2)
    assert len(done) < 20


def test_items_that_finish_out_of_order_come_back_in_order():
    """A stress: items whose work takes random, often decreasing, times finish out of order on three threads;
    the results are still map's, in the items' order."""
    rng = random.Random(7)
    delays = [rng.choice([0.0, 0.0005, 0.002]) * (40 - k % 40) / 40 for k in range(120)]
    finished: list[int] = []

    def slow(k: int) -> tuple[int, float]:
        time.sleep(delays[k])
        finished.append(k)
        return k, float(np.sqrt(np.arange(k + 1, dtype=np.float64)).sum())

    found = threaded_map(slow, range(120), 3)
    assert found == [(k, float(np.sqrt(np.arange(k + 1, dtype=np.float64)).sum())) for k in range(120)]
    assert sorted(finished) == list(range(120)) and finished != list(range(120))  # they did finish out of order
