"""Gamma's chance continua compiled (analyses/gamma.py's ``continuum_pass`` through ``compiled.jitted``, the extra
``fast``) against the numpy path they replace, to the bit, on awkward lines; and the numpy path without numba.

Kept apart from tests/test_gamma.py, which imports pygamma-agreement (tens of seconds).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from refsens_report import compiled
from refsens_report.analyses import gamma

NUMPY_ONLY = 10**18  # a threshold no continuum reaches: the numpy path


def line(start, end, kind) -> gamma.Line:
    """A line of these units in start order (as ``chance_disorders`` makes them)."""
    start = np.asarray(start, float)
    n = len(start)
    return gamma.Line.of(gamma.Units(start, np.asarray(end, float), np.asarray(kind, np.int64), np.zeros(n, np.int64)))


def total(a: gamma.Line, b: gamma.Line, threshold: int, monkeypatch: pytest.MonkeyPatch) -> float:
    """``chance_total`` with the compiled path from ``threshold`` units on."""
    monkeypatch.setattr(gamma, "COMPILED_UNITS", threshold)
    return gamma.chance_total(a, b)


def assert_same_continuum(a: gamma.Line, b: gamma.Line, monkeypatch: pytest.MonkeyPatch) -> int:
    """The compiled pass keeps ``chance_pairs``' pairs with the same costs, hands on the same groups of several
    pairs, counts the same units alone, and ``chance_total`` is the same float; returns the pairs kept."""
    pytest.importorskip("numba")
    kernel = compiled.jitted(gamma.continuum_pass)
    lines = (a.start, a.end, a.type, b.start, b.end, b.type)
    i, j, cost, rest, high, low, alone, kept = kernel(*lines, len(a) + len(b))
    if kept > len(a) + len(b):  # the pass asked for more room
        assert len(i) == len(rest) == 0
        i, j, cost, rest, high, low, alone, kept = kernel(*lines, kept)
    expected_i, expected_j, expected_cost = gamma.chance_pairs(a, b)
    assert kept == len(expected_i)
    degree_a = np.bincount(expected_i, minlength=len(a))
    degree_b = np.bincount(expected_j, minlength=len(b))
    assert alone == np.count_nonzero(degree_a == 0) + np.count_nonzero(degree_b == 0)
    several = (degree_a[expected_i] > 1) | (degree_b[expected_j] > 1)
    order, expected_order = np.lexsort((j, i)), np.lexsort((expected_j[several], expected_i[several]))
    assert np.array_equal(i[order], expected_i[several][expected_order])
    assert np.array_equal(j[order], expected_j[several][expected_order])
    assert cost[order].tobytes() == expected_cost[several][expected_order].tobytes()
    assert len(rest) <= np.count_nonzero(~several)
    compiled_total = total(a, b, 0, monkeypatch)
    assert compiled_total.hex() == total(a, b, NUMPY_ONLY, monkeypatch).hex()
    return kept


@pytest.mark.parametrize(
    "a, b",
    [
        (([], [], []), ([], [], [])),
        (([], [], []), ([3], [5], [1])),
        (([3], [5], [1]), ([], [], [])),
        (([3], [5], [1]), ([3.5], [5], [1])),  # one unit each
        (([3], [5], [1]), ([4], [9], [2])),  # one unit each, types differ
        (([2, 2, 2, 2], [3, 4, 5, 9], [0, 1, 0, 1]), ([2, 2, 3], [4, 3, 4], [1, 0, 0])),  # ties in starts
        (([5, 5, 7], [5, 6, 7], [0, 0, 1]), ([5, 6, 7], [5, 6, 9], [0, 1, 1])),  # units of zero length: 0 / 0
        (([0, 10], [2, 12], [-3, 2]), ([0, 10], [2, 13], [2, -3])),  # negative type codes (int64, not uint8)
    ],
)
def test_small_and_empty_lines_compiled_are_the_numpy_path(a, b, monkeypatch):
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_same_continuum(line(*a), line(*b), monkeypatch)


@pytest.mark.parametrize("seed", range(8))
def test_shifted_continua_compiled_are_the_numpy_path(seed, monkeypatch):
    """Lines shifted by pivots as the continua are (fractional starts and pivots, whose sums round differently at
    the wrap, ties, long units), piled on a short axis (windows of far more than ``RANKS`` units) or spread."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    bound = float(rng.integers(20, 5000)) if seed % 2 else float(rng.uniform(20, 5000))
    lines = []
    for _ in range(2):
        start = rng.integers(0, int(bound), n).astype(float) if seed % 2 else rng.uniform(0, bound, n)
        length = rng.integers(0, 8, n) + (rng.random(n) < 0.05) * rng.integers(0, 200, n)  # zero lengths too
        lines.append(line(start, start + length, rng.integers(0, 3, n)))
    for _ in range(3):
        pivots = rng.integers(0, int(bound), 2).astype(float) if seed % 2 else rng.uniform(0, bound, 2)
        shifted = [each.shifted(float(pivot), bound) for each, pivot in zip(lines, pivots, strict=True)]
        with np.errstate(divide="ignore", invalid="ignore"):
            assert_same_continuum(*shifted, monkeypatch)


def test_a_crowded_continuum_asks_for_more_room_and_keeps_every_pair(monkeypatch):
    """Forty units at every start: each a-unit has dozens of partners, more pairs than units, so the pass runs
    again with room for them all (and windows hold more than ``RANKS`` units)."""
    start = np.repeat(np.arange(0.0, 50.0, 5.0), 40)
    a = line(start, start + 3, np.arange(len(start)) % 3)
    b = line(start + 1, start + 4, np.arange(len(start)) % 2)
    assert assert_same_continuum(a, b, monkeypatch) > len(a) + len(b)


@pytest.mark.parametrize("seed", range(4))
def test_a_shift_into_the_last_continuum_s_arrays_is_a_fresh_shift(seed):
    """Each continuum shifts a line into the arrays of the last one shifted from it (on that thread): the same
    units as a shift into fresh arrays, also after a shift that sorted its units again (fractional starts and
    units beyond the bound make the wrapped stretch overtake the rest)."""
    rng = np.random.default_rng(seed)
    n, bound = int(rng.integers(1, 2000)), float(rng.uniform(10, 1e5))
    start = rng.uniform(0, 1.3 * bound, n)
    units = line(start, start + rng.integers(0, 30, n), rng.integers(0, 5, n))
    last = None
    for _ in range(6):
        pivot = float(rng.uniform(0, bound))
        expected, last = units.shifted(pivot, bound), units.shifted(pivot, bound, last)
        for part in ("start", "end", "type"):
            assert getattr(last, part).tobytes() == getattr(expected, part).tobytes()
        assert np.array_equal(last.indices(np.arange(n)), expected.indices(np.arange(n)))


def crowded_units(rng: np.random.Generator, n: int, length: int) -> gamma.Units:
    """Nested, crossing and repeated units of three types on a short axis, a few long ones (groups of every kind)."""
    start = rng.integers(0, length, n)
    end = np.minimum(start + rng.integers(1, 8, n) + (rng.random(n) < 0.05) * rng.integers(0, 200, n), length + 1)
    return gamma.Units(start.astype(float), end.astype(float), rng.integers(0, 3, n), np.zeros(n, np.int64))


@pytest.mark.parametrize("seed", range(4))
def test_the_chance_disorders_compiled_are_the_numpy_path_s_to_the_bit(seed, monkeypatch):
    """Whole chance continua (pivots, shifts, the exact assignments, the exact sums), on one and two threads."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(seed)
    length = int(rng.integers(500, 3000))
    annotators = [crowded_units(rng, int(rng.integers(50, 600)), length) for _ in range(2)]

    def disorders(threshold: int, workers: int) -> bytes:
        monkeypatch.setattr(gamma, "COMPILED_UNITS", threshold)
        return gamma.chance_disorders(
            *gamma.chance_lines(annotators), float(length + 1), np.random.default_rng(seed), 20, workers
        ).tobytes()

    expected = disorders(NUMPY_ONLY, 1)
    assert disorders(0, 1) == expected
    assert disorders(0, 2) == expected


def test_without_numba_the_numpy_path_gives_the_same_disorders(monkeypatch):
    """numba not installed (its import fails): ``jitted`` gives None and every continuum, large or small, runs on
    numpy, with the same numbers."""
    rng = np.random.default_rng(11)
    annotators = [crowded_units(rng, 400, 1500) for _ in range(2)]
    expected = gamma.chance_disorders(*gamma.chance_lines(annotators), 1501.0, np.random.default_rng(3), 10).tobytes()
    monkeypatch.setitem(sys.modules, "numba", None)  # ``import numba`` raises ImportError
    monkeypatch.setattr(compiled, "_JITTED", {})
    monkeypatch.setattr(gamma, "COMPILED_UNITS", 0)
    assert compiled.jitted(gamma.continuum_pass) is None
    assert (
        gamma.chance_disorders(*gamma.chance_lines(annotators), 1501.0, np.random.default_rng(3), 10).tobytes()
        == expected
    )


SMALL_AUDIT = """
import sys
import numpy as np
from refsens_report.analyses import gamma

rng = np.random.default_rng(0)
start = rng.integers(0, 10_000, 2_000).astype(float)
units = gamma.Units(start, start + 3, rng.integers(0, 3, 2_000), np.zeros(2_000, np.int64))
assert 2 * len(units) < gamma.COMPILED_UNITS
gamma.chance_disorders(*gamma.chance_lines([units, units]), 10_003.0, rng, 5)
assert "numba" not in sys.modules, "numba imported for continua below the threshold"
"""


def test_continua_below_the_threshold_do_not_import_numba():
    """A small audit's continua run on numpy: numba's import and compilation are not paid for."""
    subprocess.run([sys.executable, "-c", SMALL_AUDIT], check=True)
