"""The estimator's column plan: columns read off others, and the float32/float64 split, give the sums of drawing
every column in one matrix, to the bit.

An untyped strict count is the sum of its per-type counts on every item, so its bootstrap sums are the sums of
theirs (integer counts: exact in any grouping); a column equal to another on every item has its sums; integer
columns small enough are multiplied in float32 apart from the wide and real-valued ones (a disorder) in float64.
Each test runs the audit both ways, the plan against one matrix of every column (the old path), and compares
the results rows value for value.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from refsens_report import bootstrap, counts, estimator, threads
from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.counts import Column, ItemCounts
from refsens_report.demo import write_simulation
from refsens_report.estimator import ColumnPlan, Estimator, Listed, Progress, Stopwatch
from refsens_report.load import load_record

ROOT = Path(__file__).resolve().parent.parent
plans: list[ColumnPlan] = []


def every_column_drawn(self, columns, mask, listed, resamples, largest):  # the path before the plan
    return ColumnPlan(len(columns), [(np.arange(len(columns)), self.counts.matrix(columns))], [], [])


def recording(self, *args):
    plan = PLAN(self, *args)
    plans.append(plan)
    return plan


PLAN = Estimator.column_plan


def same_rows(first: list[dict], second: list[dict]) -> None:
    assert len(first) == len(second)
    for one, other in zip(first, second):
        assert one.keys() == other.keys()
        for key, value in one.items():
            twin = other[key]
            assert value == twin or (isinstance(value, float) and math.isnan(value) and math.isnan(twin)), (key, one)


def scale_record(folder: Path, items: int) -> Path:
    """A record of bench/generate_scale.py (4 types, every labelling everywhere; gamma and alpha beside F1)."""
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "generate_scale.py"),
            str(folder),
            "--items",
            str(items),
            "--outputs",
            "3",
            "--references",
            "3",
            "--languages",
            "2",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    config = folder / "refsens.toml"
    config.write_text(config.read_text().replace("resamples = 2000", "resamples = 300"))
    return config


@pytest.fixture(scope="module")
def scale_config(tmp_path_factory) -> Path:
    return scale_record(tmp_path_factory.mktemp("plan"), 400)


def audited_both_ways(config: Path, monkeypatch) -> tuple[list[dict], list[dict]]:
    plans.clear()
    monkeypatch.setattr(Estimator, "column_plan", recording)
    planned = run_audit(load_config(config)).rows
    monkeypatch.setattr(Estimator, "column_plan", every_column_drawn)
    drawn = run_audit(load_config(config)).rows
    return planned, drawn


def test_untyped_counts_summed_from_per_type_counts_equal_the_multiplied_ones(scale_config, monkeypatch):
    planned, drawn = audited_both_ways(scale_config, monkeypatch)
    same_rows(planned, drawn)
    # the plan did read columns off others, and kept the real-valued disorders apart in float64
    assert any(plan.derived for plan in plans) and any(plan.copies for plan in plans)
    assert any(len(plan.parts) == 2 and plan.parts[1][1].dtype == np.float64 for plan in plans)


def test_wide_integer_columns_drawn_apart_and_several_blocks_give_the_same_rows(scale_config, monkeypatch):
    # a float32 limit of 8 for the plan (the blocks keep theirs): counts of 8 or more go to the wide matrix;
    # blocks of 64 items: several per language, each drawn on its own stream
    monkeypatch.setattr(estimator, "FLOAT32_EXACT", estimator.FLOAT32_MARGIN * 200 * 8)
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 64)
    planned, drawn = audited_both_ways(scale_config, monkeypatch)
    same_rows(planned, drawn)
    assert any(len(plan.parts) == 2 and plan.parts[0][1].dtype == np.uint8 for plan in plans)


def test_the_demo_record_audits_to_the_same_rows(tmp_path, monkeypatch):
    write_simulation(tmp_path, items=300, seed=3)
    planned, drawn = audited_both_ways(tmp_path / "refsens.toml", monkeypatch)
    same_rows(planned, drawn)


def test_the_audit_on_one_thread_and_on_three_gives_the_same_rows_and_files(scale_config, tmp_path, monkeypatch):
    """The work outside the bootstrap that runs on ``threads.WORKERS`` threads (the plan's count columns, the
    pairs' statistics) gives the rows, summaries and listings of one thread, to the bit, on the scale record and
    on the demo."""
    write_simulation(tmp_path, items=300, seed=5)
    for config in (scale_config, tmp_path / "refsens.toml"):
        audited = []
        for workers in (1, 3):
            monkeypatch.setattr(threads, "WORKERS", workers)
            results = run_audit(load_config(config))
            audited.append((results.rows, results.summaries, dict(results.files.items())))
        (rows, summaries, files), (rows_3, summaries_3, files_3) = audited
        same_rows(rows, rows_3)
        assert repr(summaries) == repr(summaries_3) and files == files_3 and files


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_columns_asked_from_threads_at_once_are_those_of_one(scale_config, monkeypatch, seed):
    """Threads asking an ``ItemCounts`` for intersections at once, in a random order, with two mark slots (so a
    labelling's marks are evicted while other threads mark and read theirs), get the columns one thread gets."""
    monkeypatch.setattr(counts, "MARK_SLOTS", 2)
    config = load_config(scale_config)
    record = load_record(config)
    names = config.roles.all_names
    columns = [
        Column(kind, rule=rule, a=a, b=b)
        for kind in ("tp", "equal")
        for rule in ("strict", "relaxed")
        for number, a in enumerate(names)
        for b in names[number + 1 :]
        if kind == "tp" or rule == "strict"
    ]
    columns += [Column("size", rule=rule, a=name) for rule in ("strict", "relaxed") for name in names]
    np.random.default_rng(seed).shuffle(columns)
    alone = ItemCounts(record.table, names)
    expected = [alone.integers(column) for column in columns]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns between numpy's passes, not after 5 ms of them
    try:
        found = threads.threaded_map(ItemCounts(record.table, names).integers, columns * 3, 4)
    finally:
        sys.setswitchinterval(interval)
    assert len(found) == 3 * len(expected) > 120
    for one, other in zip(found, expected * 3):
        assert one.dtype == other.dtype and np.array_equal(one, other)


def test_a_column_is_read_off_others_only_where_the_data_says_so(scale_config, monkeypatch):
    monkeypatch.setattr(estimator, "PLAN_ROWS", 50)  # the per-type matrix checked 50 rows at a time
    results_config = load_config(scale_config)
    record = load_record(results_config)
    counts = ItemCounts(record.table, results_config.roles.all_names)
    est = Estimator(record, counts, results_config, Progress(False, 1), Stopwatch())
    size = Column("size", "strict", "system-00")
    tp = Column("tp", "strict", "system-00", "gold-0")
    types = [str(name) for name in counts.type_names]
    typed = [replace(column, type=kind) for column in (size, tp) for kind in types]
    values = np.column_stack([counts.integers(column) for column in typed])
    items = np.arange(counts.n_items)
    mask = np.ones(counts.n_items, dtype=bool)
    plan = est.column_plan([size, tp], mask, (Listed("k", items, values, 300, tuple(typed)),), 300, 200)
    assert [position for position, _, _ in plan.derived] == [0, 1] and not plan.parts
    # one type's counts off by one on one item: that column is drawn, the other still summed
    wrong = values.copy()
    wrong[5, 0] += 1
    plan = est.column_plan([size, tp], mask, (Listed("k", items, wrong, 300, tuple(typed)),), 300, 200)
    assert [position for position, _, _ in plan.derived] == [1]
    assert [list(positions) for positions, _ in plan.parts] == [[0]]
    # a matrix leaving out a drawn item that counts: nothing is read off it (it would count zero there)
    counted = int(np.flatnonzero(counts.integers(size))[0])
    kept = np.delete(items, counted)
    plan = est.column_plan(
        [size, tp], mask, (Listed("k", kept, np.delete(values, counted, axis=0), 300, tuple(typed)),), 300, 200
    )
    assert 0 not in [position for position, _, _ in plan.derived]
    # per-type sums of fewer replicates than the stream's cover only some: nothing is read off them
    plan = est.column_plan([size, tp], mask, (Listed("k", items, values, 100, tuple(typed)),), 300, 200)
    assert not plan.derived and [list(positions) for positions, _ in plan.parts] == [[0, 1]]


def test_a_collapse_that_does_not_pay_beside_a_source_of_item_rows_is_undone_with_the_same_sums():
    rng = np.random.default_rng(7)
    items = 3000
    distinct = rng.integers(0, 5, size=(items, 40)).astype(np.uint8)  # rows all differ: never collapsed
    repeated = np.repeat(rng.integers(0, 3, size=(items // 4, 6)).astype(np.uint8), 4, axis=0)  # 25 % of rows
    assert bootstrap.item_block(repeated).codes is not None and bootstrap.item_block(distinct).codes is None
    kept = bootstrap.shared_weights([bootstrap.item_block(distinct), bootstrap.item_block(repeated)], items)
    assert kept[1].codes is None and np.array_equal(kept[1].counts, repeated.astype(np.float32))
    strata = [np.arange(0, items, 2), np.arange(1, items, 2)]
    seed = bootstrap.subset_seed(3, "audited")
    together = bootstrap.resampled_sums(
        [bootstrap.matrix_source(distinct), bootstrap.matrix_source(repeated)], strata, 300, seed
    )
    alone = [bootstrap.resampled_sums(matrix, strata, 300, seed) for matrix in (distinct, repeated)]
    assert all(np.array_equal(one, other) for one, other in zip(together, alone))
    # a collapse saving many columns is kept
    wide = np.repeat(repeated, 40, axis=1)
    assert (
        bootstrap.shared_weights([bootstrap.item_block(distinct), bootstrap.item_block(wide)], items)[1].codes
        is not None
    )


def test_a_span_type_found_valid_once_still_leaves_every_bad_span_to_the_slow_path():
    from refsens_report import record

    assert record._all_valid([[0, 3, "PER"], [4, 6, "PER"]], None) and "PER" in record._VALID_TYPES
    for bad in (
        [0, 3, ["PER"]],
        [0, 3, ""],
        [0, 3, " "],
        [0, 3, "A\x00"],
        [3, 3, "PER"],
        [True, 3, "PER"],
        [0, 3, 1],
        [0, 9, "PER"],
    ):
        assert not record._all_valid([[0, 3, "PER"], bad], "x" * 5), bad
