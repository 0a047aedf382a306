"""The machine's threads for work that numpy does without the GIL: the bootstrap's chunks, and independent pieces
of the other stages (the pairs' statistics, the column plan's count columns, the percentile intervals' rows).

``threaded_map`` keeps the items' order, so whatever its results are combined into is combined in the same order
on any number of threads: the same numbers to the bit.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
# threads per process: the cores this process may run on, at most 4 (as the bootstrap has always taken)
WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _malloc_trim() -> Callable[[int], int] | None:
    """Return glibc's ``malloc_trim``, or None where the C library has none (macOS, Windows, musl)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


MALLOC_TRIM = _malloc_trim()


def threaded_map(function: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> list[R]:
    """Return ``list(map(function, items))``, computed on ``workers`` threads (``WORKERS``), in order: the calling
    thread and ``workers`` − 1 more, each taking the next item left. An item's exception is raised here, once the
    threads stop (they take no new item after it).

    Memory: a thread's allocations come from its own glibc malloc arena, whose free pages stay with the process
    (two pool threads took the million-item audit's peak, reached later in the bootstrap, from 7.75 to 8.4-8.8
    GB; ``malloc_trim`` gives back the free pages inside the arenas, not the top of a thread's heap: 7.85 GB).
    So the calling thread is a worker too: with two, one more thread, which takes the arena a finished thread
    (the Parquet reader's) left; then the free pages are given back.
    """
    items = list(items)
    workers = min(WORKERS if workers is None else workers, len(items))
    if workers <= 1:
        return [function(item) for item in items]
    found: list[Any] = [None] * len(items)
    taken = itertools.count()  # next() is atomic: each item is taken once
    failed = False

    def work() -> None:
        nonlocal failed
        while not failed and (index := next(taken)) < len(items):
            try:
                found[index] = function(items[index])
            except BaseException:
                failed = True  # the others take no new item
                raise

    with ThreadPoolExecutor(workers - 1) as pool:
        helpers = [pool.submit(work) for _ in range(workers - 1)]
        work()
        for helper in helpers:
            helper.result()
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)
    return found
