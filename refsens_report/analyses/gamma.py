"""Gamma agreement (Mathet, Widlöcher and Métivier, "The Unified and Holistic Method Gamma for Inter-Annotator
Agreement Measure and Alignment", Computational Linguistics 41(3), 2015), docs/method.md section 3.

Two labellings are two annotators; their spans are the units. The dissimilarity of two units is pygamma-
agreement's default combined one: positional ((|Δstart| + |Δend|) / (length₁ + length₂))² plus categorical
(1 when the types differ), and an empty unit costs Δ∅ = 1. The best alignment, the one of least total disorder,
pairs units one to one: an assignment problem, solved exactly per connected group of units that could pair
(two units pair only when their dissimilarity is below 2 Δ∅, the cost of leaving both alone). Units never pair
across items, so each item's observed disorder (the sum of its unitary alignments' disorders) is a per-item
sufficient statistic: ``gamma_disorder`` (real valued) and ``gamma_units`` (its units, an integer count).
δ_observed = Σ disorder / (Σ units / 2); gamma = 1 − δ_observed / δ_expected. The expected (chance) disorder is
the paper's sampling (its section 5.2, pygamma's ShuffleContinuumSampler): the record's items end to end form
one continuum; each of two random annotators is a real one's units shifted by a random pivot (wrapping round),
and δ_expected is the mean best-alignment disorder of ``SAMPLES`` such continua, drawn from a fixed seed. It is
computed once from the whole item set and held fixed in the bootstrap, which re-weights the per-item disorders.
"""

from __future__ import annotations

import hashlib
import math
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from refsens_report.analyses.base import Analysis, AuditContext, Estimate, Section
from refsens_report.analyses.pairs import (
    cache_spans,
    distinct,
    distinct_inverse,
    distinct_spans,
    item_lengths,
    pair_applicability,
    pair_estimates,
    pair_section,
    pair_sentences,
    pair_table,
    pairs,
    served,
)
from refsens_report.compiled import compiled_function, jitted
from refsens_report.config import Config
from refsens_report.counts import Column, ColumnKind, ItemCounts
from refsens_report.figures import Figure
from refsens_report.formatting import StatKind
from refsens_report.formulas import Env, Expr
from refsens_report.tables import Table
from refsens_report.threads import threaded_map
from refsens_report.view import ResultsView

KEY = "gamma"
DELTA_EMPTY = 1.0  # the disorder of a unit aligned with nothing (pygamma's default)
POSITIONAL, CATEGORICAL = 1.0, 1.0  # the combined dissimilarity's weights (pygamma's alpha and beta)
SAMPLES = 30  # random continua for the expected disorder (pygamma's default n_samples)
# The chance continua's seed: fixed, so gamma's estimate depends on the data alone (the audit's seed moves the
# intervals, never an estimate); each pair draws its own stream from it.
CHANCE_SEED = 2015
GRID = float(1 << 32)  # per-item disorders are rounded to multiples of 1 / GRID (see ``observed``)
TWO_52 = float(1 << 52)  # a chance continuum's disorders add as integer multiples of 2⁻⁵² (see ``exact_sum``)
STEPS = 8  # steps before a binary search (``sorted_search``: from a bucket; ``continuum_pass``: the last window)
RANKS = 16  # candidate ranks per a-unit taken one at a time before ``chance_pairs`` takes the rest at once
SQRT_2 = math.sqrt(2.0)  # a window reaches √2 (length_a + length_b) either side (the float np.sqrt(2.0) gives)
# units of a chance continuum (both lines) from which ``continuum_pass`` runs compiled, when numba is installed: it
# saves about 12 ns a unit, and numba's import and cached compilation cost 0.33 s once per process, so a record
# below this (the paper's shape: 166,000) stays on numpy and never imports numba (docs/scale.md, branch jit)
COMPILED_UNITS = 500_000


# --- units, dissimilarity and the best alignment ---------------------------------------------------


@dataclass(frozen=True)
class Units:
    """One annotator's units on an axis: start, end (floats), type code, and the item each belongs to."""

    start: np.ndarray
    end: np.ndarray
    type: np.ndarray
    item: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def shifted(self, pivot: float, bound: float) -> Units:
        """The units moved by ``pivot`` along [0, bound), a unit starting beyond the bound wrapping round."""
        start, end = self.start + pivot, self.end + pivot
        wrap = start > bound
        return Units(np.where(wrap, start - bound, start), np.where(wrap, end - bound, end), self.type, self.item)


def dissimilarity(a: Units | Line, b: Units | Line, i: np.ndarray | slice, j: np.ndarray | slice) -> np.ndarray:
    """Return the combined dissimilarity of units a[i] and b[j] (vectorised over the pairs)."""
    start_a, end_a, start_b, end_b = a.start[i], a.end[i], b.start[j], b.end[j]
    # (|Δstart| + |Δend|) / (length_a + length_b), then (POSITIONAL · p · p + CATEGORICAL · [types differ]) · Δ∅:
    # each operation as written, in place where an operand is no longer needed; a weight of 1 is left out (a
    # product with 1.0 is exact: the same floats, one pass fewer)
    positional = np.abs(start_a - start_b)
    apart = np.abs(end_a - end_b)
    positional += apart
    length = end_a - start_a
    np.subtract(end_b, start_b, out=apart)
    length += apart
    positional /= length
    cost = POSITIONAL * positional if POSITIONAL != 1.0 else positional
    cost *= positional
    differ = a.type[i] != b.type[j]
    if CATEGORICAL != 1.0:
        cost += CATEGORICAL * differ
    else:
        np.add(cost, differ, out=cost)
    if DELTA_EMPTY != 1.0:
        cost *= DELTA_EMPTY
    return cost


def candidate_pairs(a: Units, b: Units) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the pairs (i, j, dissimilarity) worth aligning: dissimilarity below 2 Δ∅.

    A pair's positional term is below 2 only when |Δstart| < √2 (length_a + length_b), so each a-unit's
    candidates are the b-units starting within √2 (its length + b's longest) of its start: two binary searches.
    """
    if not len(a) or not len(b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    order = np.argsort(b.start, kind="stable")
    starts = b.start[order]
    reach = SQRT_2 * ((a.end - a.start) + float((b.end - b.start).max())) + 1e-9
    first = np.searchsorted(starts, a.start - reach, side="left")
    counts = np.searchsorted(starts, a.start + reach, side="right") - first
    i = np.repeat(np.arange(len(a)), counts)
    j = order[np.repeat(first, counts) + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)]
    cost = dissimilarity(a, b, i, j)
    keep = cost < 2 * DELTA_EMPTY
    return i[keep], j[keep], cost[keep]


def best_alignment(a: Units, b: Units) -> tuple[np.ndarray, np.ndarray]:
    """Return the best alignment's disorder per unit group and the item of each group, as (disorder, item) per
    group: every unit of a and b is in one group (the connected pieces of the candidate pairs); a group's
    disorder is Δ∅ per unit left alone plus the dissimilarity of each aligned pair, the least such sum."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    i, j, cost = candidate_pairs(a, b)
    n_a, n_b = len(a), len(b)
    graph = coo_matrix((np.ones(len(i)), (i, n_a + j)), shape=(n_a + n_b, n_a + n_b))
    n_groups, group = connected_components(graph, directed=False)
    item = np.zeros(n_groups, dtype=np.int64)
    item[group[:n_a]] = a.item
    item[group[n_a:]] = b.item
    disorder = np.bincount(group, minlength=n_groups) * DELTA_EMPTY  # every unit alone ...
    # ... less the gain of each aligned pair (2 Δ∅ − d): a group of one pair gains it outright
    edges_per_group = np.bincount(group[i], minlength=n_groups)
    single = edges_per_group[group[i]] == 1
    np.add.at(disorder, group[i][single], cost[single] - 2 * DELTA_EMPTY)
    # ... and the rest, each group's edges in a slice (a stable sort keeps their order): a group with one unit
    # on either side aligns it with its best partner; a larger group is an exact assignment (a few units)
    several = np.flatnonzero(~single)
    several = several[np.argsort(group[i][several], kind="stable")]
    if len(several):
        owner = group[i][several]
        bounds = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1], True])
        first, last = bounds[:-1], bounds[1:]
        gains = cost[several] - 2 * DELTA_EMPTY  # negative: aligning beats leaving both alone
        # one unit on a side: the group's units on that side are all its edges' ends there
        rows_a = np.bincount(group[:n_a], minlength=n_groups)[owner[first]]
        rows_b = np.bincount(group[n_a:], minlength=n_groups)[owner[first]]
        star = (rows_a == 1) | (rows_b == 1)
        disorder[owner[first][star]] += np.minimum.reduceat(gains, first)[star]
        larger = np.repeat(~star, last - first)
        groups, gain = assignment_gains(owner[larger], i[several][larger], j[several][larger], gains[larger])
        disorder[groups] += gain
    return disorder, item


def assignment_gains(
    group: np.ndarray, row: np.ndarray, column: np.ndarray, gain: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return the groups of these edges (sorted) and the gain of each group's exact assignment: the group's
    matrix of gains, its rows and columns the distinct ``row`` and ``column`` indices in increasing order,
    through ``linear_sum_assignment``, and the chosen gains' numpy sum. The matrices are laid out for every group
    at once; only the assignment itself runs per group."""
    if not len(group):
        return np.zeros(0, np.int64), np.zeros(0)
    linear_sum_assignment = compiled_function("scipy.optimize._lsap", "linear_sum_assignment", "scipy.optimize")
    group = group.astype(np.int64)

    def ranks(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # each edge's rank among its group's distinct indices, and each group's number of them
        keys, inverse = distinct_inverse(group * (int(index.max()) + 1) + index)
        key_group = keys // (int(index.max()) + 1)
        first = np.searchsorted(key_group, key_group)
        return (np.arange(len(keys)) - first)[inverse], np.bincount(key_group)

    groups = distinct(group)
    row_rank, n_rows = ranks(row)
    column_rank, n_columns = ranks(column)
    sizes = n_rows * n_columns
    offsets = np.cumsum(sizes) - sizes
    flat = np.zeros(int(sizes.sum()))
    flat[offsets[group] + row_rank * n_columns[group] + column_rank] = gain
    found = []
    for offset, size, n_row, n_column in zip(
        *(part[groups].tolist() for part in (offsets, sizes, n_rows, n_columns)), strict=True
    ):
        matrix = flat[offset : offset + size].reshape(n_row, n_column)
        found.append(matrix[linear_sum_assignment(matrix)].sum())
    return groups, np.array(found, dtype=np.float64)


@dataclass(frozen=True)
class Line:
    """One random annotator's units along a chance continuum in start order: start, end, type, and each unit's
    index among the units it was drawn from (the order the exact assignment sees them in), that of position k
    being ``index[(k + turn) % len]``: a continuum turns its units round without copying the indices, which only
    the few units of larger groups read (``indices``)."""

    start: np.ndarray
    end: np.ndarray
    type: np.ndarray
    index: np.ndarray
    turn: int = 0

    def __len__(self) -> int:
        return len(self.start)

    @staticmethod
    def of(units: Units) -> Line:
        """Return the units in start order (stable), their type codes in the smallest integer type that holds them
        (fewer bytes to turn round and gather; the same comparisons)."""
        order = np.argsort(units.start, kind="stable")
        kind = units.type[order]
        if len(kind) and kind.min() >= 0:
            kind = kind.astype(np.min_scalar_type(int(kind.max())))
        return Line(units.start[order], units.end[order], kind, order)

    def indices(self, positions: np.ndarray) -> np.ndarray:
        """Return the index among the units drawn from of the units at these positions."""
        if not self.turn:
            return self.index[positions]
        return self.index[(positions + self.turn) % len(self)]

    def shifted(self, pivot: float, bound: float, into: Line | None = None) -> Line:
        """Return ``Units.shifted`` of these units, still in start order: the units that wrap round (a stretch at
        the end, the starts being sorted) move to the front, unless rounding would leave them out of order. Written
        into the arrays of ``into`` (a line of this one's length and dtypes, whose units are no longer needed) when
        given: a continuum after another reuses their pages instead of touching fresh ones.

        Each start and end is moved as ``Units.shifted`` does (+ pivot, then − bound where it wraps), written
        straight into its place. Adding the pivot keeps the order of the starts, so each stretch stays sorted and
        only where they meet can rounding break the order."""
        n = len(self)
        # the first unit whose shifted start is beyond the bound (start + pivot > bound, as Units.shifted tests
        # it): the binary search's answer, moved where rounding makes the sum disagree with the difference
        cut = int(np.searchsorted(self.start, bound - pivot, side="right"))
        while cut < n and not self.start[cut] + pivot > bound:
            cut += 1
        while cut > 0 and self.start[cut - 1] + pivot > bound:
            cut -= 1
        wrapped = n - cut
        if into is None:
            into = Line(np.empty_like(self.start), np.empty_like(self.end), np.empty_like(self.type), self.index)
        start, end, kind = into.start, into.end, into.type
        for moved, original in ((start, self.start), (end, self.end)):
            np.add(original[cut:], pivot, out=moved[:wrapped])
            moved[:wrapped] -= bound
            np.add(original[:cut], pivot, out=moved[wrapped:])
        kind[:wrapped], kind[wrapped:] = self.type[cut:], self.type[:cut]
        line = Line(start, end, kind, self.index, (self.turn + cut) % n if n else 0)
        if 0 < wrapped < n and start[wrapped - 1] > start[wrapped]:
            order = np.argsort(start, kind="stable")
            line = Line(start[order], end[order], line.type[order], line.indices(order))
        return line


def sorted_search(values: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Return ``np.searchsorted(values, needles)`` (side "left") for sorted ``values``, found in buckets instead of
    by binary search: the same integers, a few passes over the arrays.

    Any non-decreasing bucket function will do: the values in buckets below a needle's are below the needle, so
    each answer starts at its bucket's first value and steps over the few values there still below the needle
    (the needles left after ``STEPS`` steps are searched).
    """
    n = len(values)
    spread = float(values[-1]) - float(values[0]) if n else 0.0
    if not 0 < spread < math.inf or not len(needles):
        return np.searchsorted(values, needles)
    n_buckets = 2 * n  # about two buckets per value: few steps
    scale = n_buckets / spread

    def bucket(x: np.ndarray) -> np.ndarray:
        found = x - values[0]
        found *= scale
        np.clip(found, 0, n_buckets, out=found)
        return found.astype(np.int64)  # truncated: still non-decreasing

    below = np.zeros(n_buckets + 2, dtype=np.int64)  # below[k]: the values in buckets before k
    np.cumsum(np.bincount(bucket(values), minlength=n_buckets + 1), out=below[1:])
    answer = below[bucket(needles)]
    padded = np.concatenate([values, [np.inf]])  # the value at each answer, +inf past the last
    moving = np.flatnonzero(padded[answer] < needles)
    for _ in range(STEPS):
        if not len(moving):
            return answer
        answer[moving] += 1
        moving = moving[padded[answer[moving]] < needles[moving]]
    answer[moving] = np.searchsorted(values, needles[moving])
    return answer


def chance_pairs(a: Line, b: Line) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``candidate_pairs`` of a and b on a chance continuum (b in start order): the same pairs, costs to the
    bit. Each a-unit's candidates are the b-units from its window's first (``sorted_search``) while they start
    within reach, taken one rank at a time: the first of every window at once (most windows hold one or none),
    then the next of the windows holding more; windows still open after ``RANKS`` ranks are searched to their end.
    """
    if not len(a) or not len(b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    n_b = len(b)
    reach = a.end - a.start  # √2 (length + b's longest) + 1e-9, in place
    reach += float((b.end - b.start).max())
    reach *= SQRT_2
    reach += 1e-9
    first = sorted_search(b.start, a.start - reach)
    high = a.start + reach
    # the first rank over every a-unit at once, with no index of the a-units (most windows hold one or none)
    nearest = np.minimum(first, n_b - 1)
    opened = (first < n_b) & (b.start[nearest] <= high)
    cost = dissimilarity(a, b, slice(None), nearest)
    kept = np.flatnonzero(opened & (cost < 2 * DELTA_EMPTY))
    found = [(kept, nearest[kept], cost[kept])]
    # the windows holding a second b-unit, found over every a-unit at once too (b in start order: such a window
    # holds a first); from there on, rank by rank over the windows still open (RANKS >= 2)
    following = first + 1
    rows = np.flatnonzero((following < n_b) & (b.start[np.minimum(following, n_b - 1)] <= high))
    j = following[rows]
    for rank in range(1, RANKS + 1):
        if rank > 1:
            inside = j < n_b
            rows, j = rows[inside], j[inside]
            if rank == RANKS:  # the rest at once: many b-units in a few windows
                many = np.searchsorted(b.start, high[rows], side="right") - j
                rows = np.repeat(rows, many)
                j = np.repeat(j - np.cumsum(many) + many, many) + np.arange(int(many.sum()))
            else:
                inside = b.start[j] <= high[rows]
                rows, j = rows[inside], j[inside]
        if not len(rows):
            break
        cost = dissimilarity(a, b, rows, j)
        kept = np.flatnonzero(cost < 2 * DELTA_EMPTY)
        found.append((rows[kept], j[kept], cost[kept]))
        j = j + 1
    return tuple(np.concatenate(part) for part in zip(*found, strict=True))


def chance_total(a: Line, b: Line) -> float:
    """Return the best alignment's total disorder of a and b (``best_alignment``'s group disorders, the same floats,
    summed exactly and rounded once, as ``math.fsum`` would).

    A unit with no candidate is a group alone (Δ∅); a pair whose two units have no other candidate is a group of
    its own; only the rest, a few, go to ``connected_components`` and the assignment, on their own units. From
    ``COMPILED_UNITS`` units on, and with numba installed, ``continuum_pass`` does all but those few in one
    compiled pass; otherwise numpy does (``chance_pairs``): the same floats either way.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    compiled = jitted(continuum_pass) if len(a) + len(b) >= COMPILED_UNITS else None
    if compiled is not None:
        lines = (a.start, a.end, a.type, b.start, b.end, b.type)
        i, j, cost, rest, high, low, alone, kept = compiled(*lines, len(a) + len(b))
        if kept > len(a) + len(b):  # more pairs than units (crowded lines): again, with room for them all
            i, j, cost, rest, high, low, alone, kept = compiled(*lines, kept)
        disorders, counted = [rest], (int(high) << 31) + int(low)
    else:
        i, j, cost = chance_pairs(a, b)
        degree_a, degree_b = np.bincount(i, minlength=len(a)), np.bincount(j, minlength=len(b))
        alone = len(a) + len(b) - np.count_nonzero(degree_a) - np.count_nonzero(degree_b)
        single = (degree_a[i] == 1) & (degree_b[j] == 1)
        # a group of one pair: 2 Δ∅ less the pair's gain, as best_alignment adds them
        disorders, counted = [2 * DELTA_EMPTY + (cost[single] - 2 * DELTA_EMPTY)], 0
        i, j, cost = i[~single], j[~single], cost[~single]
    if len(i):
        gains = cost - 2 * DELTA_EMPTY
        nodes_a, row = distinct_inverse(i)
        nodes_b, column = distinct_inverse(j)
        n_a = len(nodes_a)
        graph = coo_matrix((np.ones(len(i)), (row, n_a + column)), shape=(n_a + len(nodes_b),) * 2)
        n_groups, group = connected_components(graph, directed=False)
        rows_a = np.bincount(group[:n_a], minlength=n_groups)
        rows_b = np.bincount(group[n_a:], minlength=n_groups)
        owner = group[row]
        units = (rows_a + rows_b) * DELTA_EMPTY
        star = (rows_a == 1) | (rows_b == 1)
        best = np.full(n_groups, np.inf)
        np.minimum.at(best, owner, gains)
        disorders.append(units[star] + best[star])
        # larger groups: the exact assignment, rows and columns in the order of the units drawn from (as
        # best_alignment sees them), so that ties and the sum of the chosen gains come out the same
        larger = ~star[owner]
        groups, gain = assignment_gains(owner[larger], a.indices(i[larger]), b.indices(j[larger]), gains[larger])
        disorders.append(units[groups] + gain)
    return exact_sum(np.concatenate(disorders), float(alone * DELTA_EMPTY), counted)


def continuum_pass(
    start_a: np.ndarray,
    end_a: np.ndarray,
    type_a: np.ndarray,
    start_b: np.ndarray,
    end_b: np.ndarray,
    type_b: np.ndarray,
    room: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int, int, int]:
    """What ``chance_total`` computes before the groups of several pairs, in one pass per line: plain loops for
    numba (``compiled.jitted``), b's units in start order, ``room`` pairs at most.

    Each a-unit's window starts at the first b-unit starting at or after its start less its reach (``sorted_search``'s
    integers: stepped to from the last a-unit's, the a-units being in start order, or a binary search beyond
    ``STEPS`` steps) and runs while the b-units start within reach; each pair's cost is ``dissimilarity``'s, the
    same operations in the same order, kept below 2 Δ∅ (``chance_pairs``). Each window's first b-unit is costed
    whether or not it is within reach (most windows hold one or none: no branch to mispredict). The degrees counted on
    the way, a second loop over the kept pairs sums the groups of one pair as ``exact_sum`` does (its 2⁻⁵² grid as
    two integer halves) and moves the others to the front. Returns those pairs (i, j, cost), the one-pair
    disorders off the grid, the two halves of the grid's integer sum, the units with no candidate, and the number
    of pairs kept: when it exceeds ``room``, nothing else holds and the caller asks again with that room (the
    arrays are not grown in the loop, which would slow every step of it).
    """
    n_a, n_b = len(start_a), len(start_b)
    longest = -np.inf
    for column in range(n_b):
        longest = max(longest, end_b[column] - start_b[column])
    i = np.empty(room + 1, np.int64)  # one more: a pair costed and not kept is written past the last kept
    j = np.empty(room + 1, np.int64)
    cost = np.empty(room + 1)
    # each b-unit's kept pairs, 0, 1 or 2 for more (all that matters): one byte each, fewer fresh pages to touch per
    # continuum (an a-unit's pairs are consecutive: its degree is read off them)
    degree_b = np.zeros(n_b, np.uint8)
    kept = first = 0
    for row in range(n_a if n_b else 0):
        reach = end_a[row] - start_a[row]  # √2 (length + b's longest) + 1e-9, as chance_pairs computes it
        reach += longest
        reach *= SQRT_2
        reach += 1e-9
        low, high = start_a[row] - reach, start_a[row] + reach
        if first < n_b and start_b[first] < low:
            bottom, top = first + 1, n_b
        else:
            bottom, top = 0, first
        for _ in range(STEPS):
            if bottom < first and start_b[first - 1] >= low:
                first -= 1
            elif first < top and start_b[first] < low:
                first += 1
            else:
                bottom = top = first
                break
        while bottom < top:
            middle = (bottom + top) >> 1
            if start_b[middle] < low:
                bottom = middle + 1
            else:
                top = middle
        first = column = bottom
        while True:  # the first b-unit with no branch (out of reach or past the end: costed, not kept), then the rest
            nearest = min(column, n_b - 1)
            positional = abs(start_a[row] - start_b[nearest])  # dissimilarity's operations, in its order
            positional += abs(end_a[row] - end_b[nearest])
            length = end_a[row] - start_a[row]
            length += end_b[nearest] - start_b[nearest]
            positional /= length
            found = POSITIONAL * positional if POSITIONAL != 1.0 else positional
            found *= positional
            differ = 1.0 if type_a[row] != type_b[nearest] else 0.0
            found += CATEGORICAL * differ if CATEGORICAL != 1.0 else differ
            if DELTA_EMPTY != 1.0:
                found *= DELTA_EMPTY
            keep = (column < n_b) & (start_b[nearest] <= high) & (found < 2 * DELTA_EMPTY)
            at = min(kept, room)  # past room: counted, not kept
            i[at], j[at], cost[at] = row, nearest, found
            kept += keep
            degree_b[nearest] = min(degree_b[nearest] + keep, 2)
            column += 1
            if column >= n_b or start_b[column] > high:
                break
    if kept > room:
        return i[:0], j[:0], cost[:0], cost[:0], 0, 0, 0, kept
    alone = n_a
    for column in range(n_b):
        if degree_b[column] == 0:
            alone += 1
    rest = np.empty(kept)
    n_rest, several, high_sum, low_sum, previous = 0, 0, 0, 0, -1
    for pair in range(kept):  # pairs in row order, each moved at most to its own place or before: none read is moved
        row = i[pair]
        alone -= row != previous  # an a-unit with pairs
        following = i[pair + 1] if pair + 1 < kept else -1
        if row != previous and row != following and degree_b[j[pair]] == 1:
            value = 2 * DELTA_EMPTY + (cost[pair] - 2 * DELTA_EMPTY)  # a group of one pair, as chance_total has it
            scaled = value * TWO_52
            if np.floor(scaled) == scaled and value >= 0 and value < 1024:
                grid = np.int64(scaled)
                high_sum += grid >> 31
                low_sum += grid & ((1 << 31) - 1)
            else:
                rest[n_rest] = value
                n_rest += 1
        else:
            i[several], j[several], cost[several] = row, j[pair], cost[pair]
            several += 1
        previous = row
    return i[:several], j[:several], cost[:several], rest[:n_rest], high_sum, low_sum, alone, kept


def exact_sum(values: np.ndarray, whole: float, counted: int = 0) -> float:
    """Return ``math.fsum`` of ``values``, ``whole`` (the units left alone, Δ∅ each) and ``counted`` · 2⁻⁵² (values
    already summed on the grid, ``continuum_pass``): the exactly rounded sum. The values on a grid of 2⁻⁵² below
    2¹⁰ (nearly all: disorders of one pair, whole ones) add as integers, in two 31-bit halves; the rest go to
    ``math.fsum`` one by one, with the integer sum cut into floats that hold it exactly."""
    scaled = values * TWO_52
    on_grid = (np.floor(scaled) == scaled) & (values >= 0) & (values < 1024)
    grid = scaled[on_grid].astype(np.int64)
    rest = values[~on_grid].tolist()
    total = counted + (int((grid >> 31).sum()) << 31) + int((grid & ((1 << 31) - 1)).sum())
    if whole.is_integer():
        total += int(whole) << 52
    else:
        rest.append(whole)
    pieces = []
    while total:
        pieces.append(math.ldexp(total & ((1 << 50) - 1), 50 * len(pieces) - 52))
        total >>= 50
    return math.fsum([*pieces, *rest])


def item_units(counts: ItemCounts, name: str, mask: np.ndarray, offsets: np.ndarray) -> Units:
    """Return a labelling's distinct spans on the masked items as units at ``offsets[item] + position``."""
    spans = distinct_spans(counts, name)
    spans = spans[mask[spans[:, 0]]].astype(np.int64)  # the cache's rows may be int32: positions and codes in int64
    item = spans[:, 0]
    return Units(
        (offsets[item] + spans[:, 1]).astype(np.float64),
        (offsets[item] + spans[:, 2]).astype(np.float64),
        spans[:, 3],
        item,
    )


# --- observed disorder per item, expected disorder by sampling -------------------------------------


@dataclass(frozen=True)
class Observed:
    """Per item: the best alignment's disorder and the number of units (both annotators)."""

    disorder: np.ndarray
    units: np.ndarray


_OBSERVED: weakref.WeakKeyDictionary[ItemCounts, dict[tuple[str, str], Observed]] = weakref.WeakKeyDictionary()


def observed(counts: ItemCounts, a: str, b: str) -> Observed:
    """Return the per-item observed disorder of a and b on the items where both are present (elsewhere 0)."""
    found = _OBSERVED.setdefault(counts, {})
    if (a, b) not in found:
        both = counts.has(a) & counts.has(b)
        lengths = item_lengths(counts)
        # each item on its own stretch of one axis, far enough apart that no unit could pair across items
        spacing = float(2 * lengths.max(initial=0) + 1)
        offsets = np.arange(counts.n_items) * spacing
        units_a, units_b = item_units(counts, a, both, offsets), item_units(counts, b, both, offsets)
        disorder, item = best_alignment(units_a, units_b)
        per_item = np.bincount(item, weights=disorder, minlength=counts.n_items)
        # on a grid of 2⁻³² (a change below 10⁻⁹ per item): sums of such values are exact in float64 at any
        # realistic size, so the bootstrap's sums, and gamma to its last digit, cannot depend on the order the
        # items are added in (the record's line order)
        per_item = np.round(per_item * GRID) / GRID
        units = np.bincount(units_a.item, minlength=counts.n_items) + np.bincount(
            units_b.item, minlength=counts.n_items
        )
        found[(a, b)] = Observed(per_item, units)
    return found[(a, b)]


def pair_seed(seed: int, a: str, b: str) -> np.random.SeedSequence:
    """Return the expected disorder's seed for one pair: ``seed`` (CHANCE_SEED) and the pair's names."""
    key = int.from_bytes(hashlib.sha256(f"gamma\0{a}\0{b}".encode()).digest()[:8], "big")
    return np.random.SeedSequence(seed, spawn_key=(key,))


def shuffled_pivots(rng: np.random.Generator, bound: float, spacing: float, annotators: int) -> list[float]:
    """Return one integer pivot per random annotator, each at least ``spacing`` from the others where there is
    room (the paper's section 5.2; pygamma's ShuffleContinuumSampler): a point of the still available stretches
    of [0, bound), chosen in proportion to their lengths."""
    available = [(0.0, bound)]
    pivots = []
    for _ in range(annotators):
        if available:
            lengths = np.array([end - start for start, end in available])
            start, end = available[rng.choice(len(available), p=lengths / lengths.sum())]
            pivot = float(int(rng.uniform(start, end)))
            kept = []
            for low, high in available:  # remove [pivot − spacing, pivot + spacing]
                if high <= pivot - spacing or low >= pivot + spacing:
                    kept.append((low, high))
                    continue
                if low < pivot - spacing:
                    kept.append((low, pivot - spacing))
                if high > pivot + spacing:
                    kept.append((pivot + spacing, high))
            available = [(low, high) for low, high in kept if high > low]
        else:
            pivot = float(rng.uniform(0, bound))
        pivots.append(pivot)
    return pivots


def chance_lines(annotators: list[Units]) -> tuple[list[Line], float]:
    """Return the real annotators' units as lines (sorted once: each continuum only turns them round) and the
    pivots' spacing, half the units' mean length: all ``chance_disorders`` needs of them."""
    everything = np.concatenate([units.end - units.start for units in annotators])
    spacing = float(everything.mean()) / 2 if len(everything) else 0.0
    return [Line.of(units) for units in annotators], spacing


def chance_disorders(
    lines: list[Line], spacing: float, bound: float, rng: np.random.Generator, samples: int, workers: int | None = None
) -> np.ndarray:
    """Return the best-alignment disorder of ``samples`` random continua: each of two random annotators is a real
    annotator's line (drawn with replacement) shifted by its pivot along [0, bound); ``lines`` and ``spacing``
    as ``chance_lines`` gives them.

    Every continuum's draws (pivots, then annotators) are taken from ``rng`` first, in order; the continua are
    then aligned on ``workers`` threads (``threaded_map``), each on its own: the same disorders on any number."""
    draws = []
    for _ in range(samples):
        pivots = shuffled_pivots(rng, bound, spacing, 2)
        draws.append([(int(rng.integers(len(lines))), pivot) for pivot in pivots])

    done = threading.local()  # each thread's lines of its last continuum, by side and annotator drawn

    def disorder(draw: list[tuple[int, float]]) -> float:
        last = done.__dict__  # their arrays take the next shifts of the same units (no fresh pages to touch)
        chosen = [lines[line].shifted(pivot, bound, last.get((side, line))) for side, (line, pivot) in enumerate(draw)]
        n_units = len(chosen[0]) + len(chosen[1])
        # exactly rounded, so the units' order (the record's line order) cannot move the last digit
        total = chance_total(*chosen)
        last.update({(side, line): found for side, ((line, _), found) in enumerate(zip(draw, chosen, strict=True))})
        return total / (n_units / 2) if n_units else np.nan

    return np.array(threaded_map(disorder, draws, workers), dtype=np.float64)


def expected_disorder(
    counts: ItemCounts,
    a: str,
    b: str,
    mask: np.ndarray,
    seed: int = CHANCE_SEED,
    samples: int = SAMPLES,
    workers: int | None = None,
) -> np.ndarray:
    """Return the chance disorders of a and b on the masked items laid end to end in id order (so the record's
    line order does not matter), one per random continuum."""
    both = mask & counts.has(a) & counts.has(b)
    lengths = np.where(both, item_lengths(counts), 0)
    order = id_order(counts)
    offsets = np.zeros(counts.n_items, dtype=np.int64)
    offsets[order] = np.concatenate([[0], np.cumsum(lengths[order])[:-1]])
    annotators = [in_position_order(item_units(counts, name, both, offsets)) for name in (a, b)]
    if not len(annotators[0]) + len(annotators[1]):
        return np.full(samples, np.nan)
    lines, spacing = chance_lines(annotators)
    bound = float(lengths.sum())
    # only the lines are aligned: the units (48 bytes a unit with the spans they view, about 150 MB a pair at a
    # million items) and the per-item arrays are not held beside the continua
    del annotators, both, lengths, offsets
    rng = np.random.default_rng(pair_seed(seed, a, b))
    return chance_disorders(lines, spacing, bound, rng, samples, workers)


_ID_ORDER: weakref.WeakKeyDictionary[ItemCounts, np.ndarray] = weakref.WeakKeyDictionary()


def id_order(counts: ItemCounts) -> np.ndarray:
    """Return the items in the order of their ids (a stable sort of the id strings: computed once per record, not
    per pair; a million ids not in order take about a second)."""
    if counts not in _ID_ORDER:
        _ID_ORDER[counts] = np.argsort(counts.table.ids, kind="stable")
    return _ID_ORDER[counts]


def in_position_order(units: Units) -> Units:
    """Return the units ordered along the continuum (start, end, type): an order the record's line order cannot
    change, so every sum over a group of units adds in the same order."""
    start, end, kind = units.start, units.end, units.type
    later = start[1:] > start[:-1]
    tied = start[1:] == start[:-1]
    if (later | (tied & ((end[1:] > end[:-1]) | ((end[1:] == end[:-1]) & (kind[1:] >= kind[:-1]))))).all():
        return units  # already in order (items laid end to end in the order they are numbered): the sort is a no-op
    order = np.lexsort((units.type, units.end, units.start))
    return Units(units.start[order], units.end[order], units.type[order], units.item[order])


def _column(counts: ItemCounts, column: Column) -> np.ndarray:
    """Return the pair's observed disorders or units per item (let go once both have been read, ``pairs.served``)."""
    found = observed(counts, column.a, column.b)
    served(_OBSERVED, counts, (column.a, column.b), column.kind, len(COLUMNS))
    return found.disorder if column.kind == "gamma_disorder" else found.units


COLUMNS = (
    ColumnKind("gamma_disorder", _column, integer=False),  # a sum of dissimilarities: real valued
    ColumnKind("gamma_units", _column),
)


@dataclass(frozen=True)
class Gamma(Expr):
    """gamma = 1 − (Σ disorder / (Σ units / 2)) / δ_expected, δ_expected fixed (from the whole item set)."""

    a: str
    b: str
    expected: float

    def columns(self) -> tuple[Column, ...]:
        return (Column("gamma_disorder", a=self.a, b=self.b), Column("gamma_units", a=self.a, b=self.b))

    def evaluate(self, env: Env) -> np.ndarray:
        disorder, units = (env.sum(column) for column in self.columns())
        with np.errstate(invalid="ignore", divide="ignore"):
            observed_disorder = disorder / (units / 2)
            return np.where((units > 0) & (self.expected > 0), 1 - observed_disorder / self.expected, np.nan)


# --- the audit -------------------------------------------------------------------------------------


def estimates(context: AuditContext) -> list[Estimate]:
    """Gamma per pair, on the corpus's and the audited items' streams (paired with agreement and the swap)."""

    def gamma(a: str, b: str, mask: np.ndarray) -> Gamma:
        chance = expected_disorder(context.counts, a, b, mask)
        return Gamma(a, b, float(np.nanmean(chance)) if np.isfinite(chance).any() else float("nan"))

    return pair_estimates(context, KEY, "gamma", gamma)


def count_columns(config: Config) -> int:
    """Two columns per pair: the disorder and the units."""
    return 2 * len(pairs(config))


# --- the report ------------------------------------------------------------------------------------


def gamma_table(view: ResultsView) -> Table:
    """Gamma per pair and language, with its interval."""
    return pair_table(
        view,
        KEY,
        "gamma",
        "Gamma agreement",
        "Gamma (Mathet et al., 2015) between the annotator passes (corpus) and between each pair of "
        "references (audited items): 1 − observed / expected disorder of the best alignment of their "
        "spans, positional and categorical dissimilarity combined. 1 is perfect agreement, 0 what "
        f"chance gives; the expected disorder is the mean of {SAMPLES} shuffled continua, held fixed in "
        "the bootstrap.",
        "Gamma",
    )


def sentences(view: ResultsView) -> list[str]:
    """One sentence: the pooled gamma of each pair."""
    return pair_sentences(view, KEY, "gamma", "Gamma agreement of the spans (pooled)")


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    return pair_section(ANALYSIS, view, drawn, gamma_table, sentences)


ANALYSIS = Analysis(
    key=KEY,
    title="Gamma agreement",
    question="How far above chance do the annotator passes, and the references, agree on spans, aligned unit by unit?",
    methods=f"""- **Gamma** (Mathet et al., 2015; corpus: the annotator passes; audited: each pair of references): the
  best alignment of the two span sets (least total disorder; dissimilarity ((|Δstart| + |Δend|) / (length₁ +
  length₂))² plus 1 for differing types, Δ∅ = 1 for a span left alone; exact, per item); gamma = 1 −
  δ_observed / δ_expected, δ_observed = Σ disorder / (Σ spans / 2). δ_expected: the mean disorder of
  {SAMPLES} shuffled continua (the paper's section 5.2; items end to end in id order, a fixed seed), computed once on
  the whole item set and held fixed in the bootstrap, which re-weights the per-item disorders.""",
    spans=lambda context: cache_spans(context, _OBSERVED),
    estimates=estimates,
    applicability=pair_applicability(KEY),
    section=_section,
    statistics={"gamma": StatKind(decimals=3)},
    columns=COLUMNS,
    count_columns=count_columns,
)
