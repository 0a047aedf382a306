"""Gamma agreement (analyses/gamma.py): the best alignment against pygamma-agreement's on the same units, gamma
against pygamma's with the paper's shuffling sampler (within the sampling error of both), and the audit's rows.

pygamma-agreement compiles with numba on import (tens of seconds): it is imported once, for this module only.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, item, pick, select

from refsens_report.analyses import gamma
from refsens_report.view import ResultsView

pygamma = pytest.importorskip("pygamma_agreement")
from pyannote.core import Segment  # noqa: E402  (pygamma's dependency)
from pygamma_agreement.sampler import ShuffleContinuumSampler  # noqa: E402

TYPES = ("PER", "LOC", "ORG")
# hand-made unit sets: (annotator a's spans, annotator b's spans) as (start, end, type)
CASES = [
    # four pairs, one a type change, two spans left alone
    (
        [(0, 4, "PER"), (6, 8, "LOC"), (10, 15, "ORG"), (20, 22, "PER")],
        [(0, 4, "PER"), (6, 9, "LOC"), (11, 15, "PER"), (30, 33, "LOC")],
    ),
    # one a-span overlapping two b-spans and a second a-span: the exact assignment, not the nearest first
    ([(0, 10, "PER"), (4, 9, "PER")], [(0, 6, "PER"), (3, 10, "PER"), (12, 14, "ORG")]),
    # nested and crossing spans of several types
    (
        [(0, 20, "ORG"), (2, 6, "PER"), (8, 12, "LOC"), (15, 25, "PER")],
        [(0, 18, "ORG"), (2, 5, "PER"), (9, 12, "PER"), (16, 26, "PER"), (30, 31, "LOC")],
    ),
]


def units(spans: list[tuple[int, int, str]]) -> gamma.Units:
    """The module's units for spans on one item."""
    return gamma.Units(
        np.array([s for s, _, _ in spans], float),
        np.array([e for _, e, _ in spans], float),
        np.array([TYPES.index(t) for _, _, t in spans]),
        np.zeros(len(spans), np.int64),
    )


def continuum(first: list, second: list) -> pygamma.Continuum:
    """pygamma-agreement's continuum of the same units."""
    found = pygamma.Continuum()
    for annotator, spans in (("a", first), ("b", second)):
        for start, end, kind in spans:
            found.add(annotator, Segment(start, end), kind)
    return found


@pytest.mark.parametrize("first, second", CASES)
def test_the_best_alignment_is_pygammas(first, second):
    disorder, _ = gamma.best_alignment(units(first), units(second))
    ours = disorder.sum() / ((len(first) + len(second)) / 2)
    theirs = continuum(first, second).get_best_alignment(pygamma.CombinedCategoricalDissimilarity()).disorder
    assert ours == pytest.approx(float(theirs), abs=1e-5)  # pygamma computes in float32


def test_the_first_case_by_hand():
    # pairs: 0, (1/5)² = 0.04, (1/9)² + 1 (type) = 1.0123..., and two spans alone (1 each): 3.0523... / 4 units
    disorder, _ = gamma.best_alignment(*(units(spans) for spans in CASES[0]))
    assert disorder.sum() == pytest.approx(0.04 + 1 / 81 + 1 + 2)


@pytest.mark.parametrize("first, second", CASES)
def test_gamma_agrees_with_pygamma_within_the_sampling_error(first, second):
    """Both expected disorders are means of random continua (the paper's shuffling, section 5.2), drawn from
    different generators: they agree within the sampling error. With S samples each, the standard error of a
    mean chance disorder is sd / √S, and gamma = 1 − δo / δe moves by δo / δe² per unit of δe; the bound is
    four combined standard errors (a false alarm about once in 15,000 runs), and pygamma's seed is pinned."""
    samples = 200
    end = max(e for _, e, _ in first + second)
    ours_chance = gamma.chance_disorders(
        *gamma.chance_lines([units(first), units(second)]), float(end), np.random.default_rng(7), samples
    )
    np.random.seed(0)
    results = continuum(first, second).compute_gamma(
        pygamma.CombinedCategoricalDissimilarity(), n_samples=samples, sampler=ShuffleContinuumSampler()
    )
    theirs_chance = np.array([alignment.disorder for alignment in results.chance_alignments], dtype=float)
    observed = float(results.observed_disorder)
    ours, theirs = 1 - observed / ours_chance.mean(), float(results.gamma)
    error = np.sqrt(ours_chance.var(ddof=1) / samples + theirs_chance.var(ddof=1) / samples)
    assert abs(ours - theirs) <= 4 * error * observed / ours_chance.mean() ** 2, (ours, theirs)


def chance_by_best_alignment(annotators: list, bound: float, rng: np.random.Generator, samples: int) -> np.ndarray:
    """The chance disorders as ``best_alignment`` gives them: each continuum's units shifted in place, every group's
    disorder, then their ``math.fsum`` (what ``chance_disorders`` computed before it aligned continua its own way)."""
    everything = np.concatenate([units.end - units.start for units in annotators])
    spacing = float(everything.mean()) / 2
    found = []
    for _ in range(samples):
        pivots = gamma.shuffled_pivots(rng, bound, spacing, 2)
        chosen = [annotators[rng.integers(len(annotators))].shifted(pivot, bound) for pivot in pivots]
        disorder, _ = gamma.best_alignment(*chosen)
        found.append(math.fsum(disorder.tolist()) / ((len(chosen[0]) + len(chosen[1])) / 2))
    return np.array(found)


def crowded_units(rng: np.random.Generator, n: int, length: int, longest: int) -> gamma.Units:
    """Units piled on a short axis: nested, crossing and repeated spans of three types, a few long ones, so that
    continua hold groups of every kind (one pair, stars, larger assignments) and windows of many units."""
    start = rng.integers(0, length, n)
    end = np.minimum(start + rng.integers(1, 8, n) + (rng.random(n) < 0.05) * rng.integers(0, longest, n), length + 1)
    return gamma.Units(start.astype(float), end.astype(float), rng.integers(0, 3, n), np.zeros(n, np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_the_chance_continua_are_the_best_alignments_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    length = int(rng.integers(50, 3000))
    annotators = [crowded_units(rng, int(rng.integers(1, 400)), length, 200 if seed % 2 else 20) for _ in range(2)]
    ours = gamma.chance_disorders(*gamma.chance_lines(annotators), float(length + 1), np.random.default_rng(seed), 20)
    reference = chance_by_best_alignment(annotators, float(length + 1), np.random.default_rng(seed), 20)
    assert ours.tobytes() == reference.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_the_chance_continua_do_not_depend_on_the_number_of_threads(seed):
    """The continua are drawn first and aligned on threads afterwards: the same disorders on one thread or more."""
    rng = np.random.default_rng(seed)
    length = int(rng.integers(500, 3000))
    annotators = [crowded_units(rng, int(rng.integers(50, 400)), length, 200 if seed % 2 else 20) for _ in range(2)]
    found = [
        gamma.chance_disorders(
            *gamma.chance_lines(annotators), float(length + 1), np.random.default_rng(seed), 30, workers
        ).tobytes()
        for workers in (1, 2, 3)
    ]
    assert found[0] == found[1] == found[2]
    reference = chance_by_best_alignment(annotators, float(length + 1), np.random.default_rng(seed), 30)
    assert found[0] == reference.tobytes()


def turned_round(line: gamma.Line, pivot: float, bound: float) -> tuple[np.ndarray, ...]:
    """What ``Line.shifted`` computed before it wrote each shifted unit in place: the whole line shifted, the
    wrapped stretch concatenated in front, a stable sort when the result is out of order. As (start, end, type,
    index) of every position."""
    start, end = line.start + pivot, line.end + pivot
    cut = int(np.searchsorted(start, bound, side="right"))
    index = line.indices(np.arange(len(line)))
    moved = [np.concatenate([part[cut:] - shift, part[:cut]]) for part, shift in ((start, bound), (end, bound))]
    moved += [np.concatenate([part[cut:], part[:cut]]) for part in (line.type, index)]
    if len(start) > 1 and not (moved[0][1:] >= moved[0][:-1]).all():
        order = np.argsort(moved[0], kind="stable")
        moved = [part[order] for part in moved]
    return tuple(moved)


@pytest.mark.parametrize("seed", range(6))
def test_a_shifted_line_is_the_line_turned_round(seed):
    """Line.shifted, its units moved in place and its indices turned without a copy, gives the old computation:
    fractional starts and pivots (sums that round), units beyond the bound (out of order once wrapped: sorted
    again), repeated shifts (turns that add up) and empty lines."""
    rng = np.random.default_rng(seed)
    n = [0, 1, 2, 50, 500, 3000][seed]
    bound = float(rng.uniform(10, 1e6)) if seed % 2 else float(rng.integers(10, 10**6))
    reach = 1.3 if seed >= 4 else 1.0  # beyond the bound: the wrapped stretch overtakes the rest
    start = rng.uniform(0, reach * bound, n) if seed % 2 else rng.integers(0, int(reach * bound), n).astype(float)
    units = gamma.Units(start, start + rng.integers(1, 30, n), rng.integers(0, 5, n), np.zeros(n, np.int64))
    line = gamma.Line.of(units)
    for _ in range(4):
        pivot = float(rng.uniform(0, bound)) if seed % 2 else float(rng.integers(0, int(bound)))
        expected, line = turned_round(line, pivot, bound), line.shifted(pivot, bound)
        found = (line.start, line.end, line.type, line.indices(np.arange(len(line))))
        assert all(a.tobytes() == b.tobytes() for a, b in zip(found, expected, strict=True))


@pytest.mark.parametrize("seed", range(8))
def test_sorted_search_is_a_binary_search(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 2000))
    spread = [1, 5, 100, 10**6][seed % 4]  # from all equal (no buckets) to sparse; piles of equal values force searches
    values = np.sort(np.repeat(rng.integers(0, spread, n), rng.integers(1, 30, n))).astype(float)
    needles = rng.integers(-50, spread + 50, 3000).astype(float) + rng.choice([0.0, 0.5], 3000)
    assert np.array_equal(gamma.sorted_search(values, needles), np.searchsorted(values, needles))


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_sum_is_fsum(seed):
    """Disorders on the 2⁻⁵² grid add as integers, the rest (tiny, huge, off the grid) through fsum: the same float."""
    rng = np.random.default_rng(seed)
    n = 5000
    one_pair = 2.0 + (rng.random(n) * 2 - 2.0)  # 2 Δ∅ + (d − 2 Δ∅), d in [0, 2)
    values = np.concatenate([one_pair, rng.random(50) * 1e-12, rng.random(50) * 5000, rng.integers(0, 9, 50) * 1.0])
    rng.shuffle(values)
    alone = float(rng.integers(0, 10**6))
    assert gamma.exact_sum(values, alone) == math.fsum([*values.tolist(), *[1.0] * int(alone)])


def random_items(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for number in range(n):
        length = rng.randint(20, 40)
        base = []
        for _ in range(rng.randint(0, 3)):
            start = rng.randrange(0, length - 4)
            base.append([start, rng.randint(start + 1, start + 4), rng.choice(TYPES)])
        labellings = {}
        for name in (A, B, D, R):  # each a noisy copy of the same spans
            spans = [
                [max(0, s + rng.choice((0, 0, 0, -1, 1))), e, t if rng.random() > 0.1 else rng.choice(TYPES)]
                for s, e, t in base
                if rng.random() > 0.1
            ]
            labellings[name] = [span for span in spans if span[1] > span[0]]
        items.append(item(f"i{number:03d}", rng.choice(["en", "de"]), text="x" * length, **labellings))
    return items


def test_the_audit_reports_gamma_per_pair_with_a_bootstrap_interval(tmp_path):
    items = random_items(0, 60)
    rows = audit_items(tmp_path / "one", items).rows
    row = pick(rows, analysis="gamma", statistic="gamma", language="pooled", output=A, reference=B)
    assert 0 < row["estimate"] < 1 and row["ci_low"] <= row["estimate"] <= row["ci_high"]
    assert row["p_value"] is None and row["n_items"] == 60
    assert select(rows, analysis="gamma", reference=D, reference_2=R, language="pooled")
    # deterministic: the same record gives the same rows
    again = audit_items(tmp_path / "two", items).rows
    assert select(again, analysis="gamma") == select(rows, analysis="gamma")
    # the estimate depends on the data alone: neither the audit's seed nor the record's line order moves it
    other = audit_items(tmp_path / "three", items[::-1], audit={"seed": 5}).rows
    assert [r["estimate"] for r in select(other, analysis="gamma")] == [
        r["estimate"] for r in select(rows, analysis="gamma")
    ]


def test_the_estimate_is_one_minus_observed_over_expected(tmp_path):
    from helpers import write_project

    from refsens_report.config import load_config
    from refsens_report.counts import ItemCounts
    from refsens_report.load import load_record

    items = random_items(1, 40)
    config = load_config(write_project(tmp_path, items))
    record = load_record(config)
    counts = ItemCounts(record.table, config.roles.all_names)
    found = gamma.observed(counts, A, B)
    every = np.ones(counts.n_items, dtype=bool)
    expected = np.nanmean(gamma.expected_disorder(counts, A, B, every))
    rows = audit_items(tmp_path / "audit", items).rows
    row = pick(rows, analysis="gamma", language="pooled", output=A, reference=B)
    assert row["estimate"] == pytest.approx(1 - (found.disorder.sum() / (found.units.sum() / 2)) / expected, rel=1e-12)


def test_identical_labellings_have_gamma_one_and_the_section_says_it(tmp_path):
    items = [
        item(f"i{n}", "en", text="x" * 30, **{name: [[2, 6, "PER"], [10, 15, "LOC"]] for name in (A, B, D, R)})
        for n in range(5)
    ]
    results = audit_items(tmp_path, items)
    assert pick(results.rows, analysis="gamma", language="pooled", output=A, reference=B)["estimate"] == 1.0
    view = ResultsView.from_json({**results.to_json_dict(), "rows": results.rows})
    section = gamma.ANALYSIS.section(view, {})
    [table] = section.tables
    assert table.columns == ("Pair", "Language", "Items", "Gamma")
    assert any(
        "Gamma agreement of the spans (pooled): annotator_a – annotator_b 1.000" in p for p in section.paragraphs
    )


def test_a_pairs_observed_disorders_are_let_go_once_both_columns_are_read(tmp_path):
    """gamma's cached observed disorders of a pair are dropped once ItemCounts has read both its columns (it keeps
    them): the columns equal a fresh alignment's, and asked again the pair is aligned anew, the same values."""
    from helpers import write_project

    from refsens_report.analyses.registry import column_kinds
    from refsens_report.config import load_config
    from refsens_report.counts import Column, ItemCounts
    from refsens_report.load import load_record

    config = load_config(write_project(tmp_path, random_items(4, 40)))
    counts = ItemCounts(load_record(config).table, config.roles.all_names, column_kinds())
    disorder, units = Column("gamma_disorder", a=A, b=B), Column("gamma_units", a=A, b=B)
    fresh = gamma.observed(counts, A, B)
    assert np.array_equal(counts.real(disorder), fresh.disorder) and (A, B) in gamma._OBSERVED[counts]
    assert np.array_equal(counts.integers(units), fresh.units) and (A, B) not in gamma._OBSERVED[counts]
    assert fresh.units.sum() > 0 and fresh.disorder.sum() > 0
    again = gamma.COLUMNS[1].values(counts, units)
    assert np.array_equal(again, fresh.units) and (A, B) in gamma._OBSERVED[counts]
