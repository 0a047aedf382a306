"""Issue 11: the Holm family (`[audit] family`), resamples = "auto", tie groups and the BCa interval.

A hand-made leaderboard of four outputs and three references on 80 items, each with one gold span (0, 5):
o1 is always right; o2 gives (0, 6) on items 0-29 and is right elsewhere; o3 is wrong, (0, 4), on 35 items;
o4 on 50. Under the primary reference (gold) the ranking is o1 > o2 > o3 > o4. The alternative ``alt1`` says
(0, 6) on items 0-29, exactly what o2 says, so the margin o1 − o2 swings from +37.5 to −37.5: a planted large
swing between adjacent systems. ``alt2`` equals gold. Outputs are configured out of rank order.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from helpers import audit_items, item, pick, select
from statsmodels.stats.multitest import multipletests

from refsens_report.analyses.ranking import Leaderboard
from refsens_report.bootstrap import auto_resamples, bca_interval, holm_floor

OUTPUTS = ("o3", "o1", "o4", "o2")  # config order; ranked o1, o2, o3, o4 under gold
REFERENCES = ("gold", "alt1", "alt2")


def board_items():
    lines = []
    for i in range(80):
        spans = {"gold": [[0, 5, "PER"]], "alt2": [[0, 5, "PER"]], "o1": [[0, 5, "PER"]]}
        spans["alt1"] = [[0, 6, "PER"]] if i < 30 else [[0, 5, "PER"]]
        spans["o2"] = [[0, 6, "PER"]] if i < 30 else [[0, 5, "PER"]]
        spans["o3"] = [[0, 4, "PER"]] if i % 80 >= 45 else [[0, 5, "PER"]]
        spans["o4"] = [[0, 4, "PER"]] if i >= 30 else [[0, 5, "PER"]]
        lines.append(item(f"i{i:02d}", "en", **spans))
    return lines


def audit(tmp_path, **settings):
    return audit_items(
        tmp_path,
        board_items(),
        annotators=None,
        outputs=OUTPUTS,
        references=REFERENCES,
        audit={"resamples": 1500, **settings},
    )


def family(results):
    return [row for row in select(results.rows, analysis="interaction", statistic="swing") if row["p_holm"] is not None]


@pytest.fixture(scope="module")
def by_family(tmp_path_factory):
    return {name: audit(tmp_path_factory.mktemp(name), family=name) for name in ("adjacent", "primary", "all")}


def test_family_sizes_on_a_hand_made_ranking(by_family):
    # groups: en and pooled; rules: strict and relaxed
    adjacent = family(by_family["adjacent"])
    assert len(adjacent) == 3 * 2 * 2 * 2  # 3 adjacent pairs x 2 alternatives x 2 rules x 2 groups
    assert {frozenset((row["output"], row["output_2"])) for row in adjacent} == {
        frozenset(("o1", "o2")),
        frozenset(("o2", "o3")),
        frozenset(("o3", "o4")),
    }
    assert {(row["reference"], row["reference_2"]) for row in adjacent} == {("gold", "alt1"), ("gold", "alt2")}
    assert len(family(by_family["primary"])) == 6 * 2 * 2 * 2
    assert (
        len(family(by_family["all"]))
        == 6 * 3 * 2 * 2
        == len(select(by_family["all"].rows, analysis="interaction", statistic="swing"))
    )
    summary = by_family["adjacent"].summaries["interaction"]
    assert summary["family"] == "adjacent" and summary["tests"] == 24 and summary["ranking"] == ["o1", "o2", "o3", "o4"]
    assert summary["holm_floor"] == holm_floor(24, 1500)


@pytest.mark.parametrize("name", ["adjacent", "primary", "all"])
def test_holm_over_the_family_matches_statsmodels(by_family, name):
    rows = family(by_family[name])
    expected = multipletests([row["p_value"] for row in rows], method="holm")[1]
    np.testing.assert_allclose([row["p_holm"] for row in rows], expected, rtol=1e-12, atol=0)
    outside = [
        row for row in select(by_family[name].rows, analysis="interaction", statistic="swing") if row not in rows
    ]
    assert all(row["p_value"] is not None and row["p_holm"] is None for row in outside)


def test_the_adjacent_family_flags_a_planted_swing_the_all_pairs_family_cannot(by_family):
    labels = dict(
        analysis="interaction",
        statistic="swing",
        rule="strict",
        language="pooled",
        output="o1",
        output_2="o2",
        reference="gold",
        reference_2="alt1",
    )
    adjacent, everything = pick(by_family["adjacent"].rows, **labels), pick(by_family["all"].rows, **labels)
    assert adjacent["estimate"] == pytest.approx(75.0) and adjacent["p_value"] == 2 / 1501
    assert adjacent["p_holm"] < 0.05  # 24 tests: floor 0.032
    assert everything["p_holm"] >= 0.05  # 72 tests at the same B: floor 0.096, nothing can be significant


def test_the_default_family_follows_the_number_of_outputs(tmp_path):
    results = audit(tmp_path / "many")
    assert results.config["audit"]["family"] == "adjacent"
    two = audit_items(
        tmp_path / "two",
        board_items(),
        annotators=None,
        outputs=("o1", "o2"),
        references=REFERENCES,
        audit={"resamples": 50},
    )
    assert two.config["audit"]["family"] == "all"


def test_auto_resamples_reach_the_floor_target_and_are_deterministic(tmp_path):
    for size in (1, 14, 24, 156, 2184):
        chosen = auto_resamples(size, 0.95)
        assert chosen >= 2000
        if chosen < 100_000:
            assert holm_floor(size, chosen) <= 0.005
            assert chosen == 2000 or holm_floor(size, chosen - 1) > 0.005  # the smallest such B
    assert auto_resamples(156, 0.95) == 62_399  # CoNLL-2003's adjacent family
    assert auto_resamples(14, 0.95) == 5_599  # the paper's 14 tests
    assert auto_resamples(156, 0.95, ceiling=10_000) == 10_000  # the memory ceiling wins
    first, again = audit(tmp_path / "a", resamples="auto"), audit(tmp_path / "b", resamples="auto")
    assert first.resamples == again.resamples == auto_resamples(24, 0.95) and first.rows == again.rows
    assert first.config["audit"]["resamples"] == "auto"
    assert first.summaries["interaction"]["holm_floor"] <= 0.005


def test_tie_groups_are_runs_of_overlapping_rank_intervals():
    # three outputs, one reference used, one group; replicate 0 is the estimate
    rng = np.random.default_rng(0)
    replicates = 400
    a = 80 + rng.normal(0, 0.5, replicates)  # a and b overlap, c far below
    b = 79.8 + rng.normal(0, 0.5, replicates)
    c = 60 + rng.normal(0, 0.5, replicates)
    scores = np.stack([np.concatenate([[80.0], a]), np.concatenate([[79.8], b]), np.concatenate([[60.0], c])])
    scores = np.stack([scores, scores], axis=1)[:, :, None, :]  # output, reference, group, 1 + replicate
    board = Leaderboard(scores, ["A", "B", "C"], ["r1", "r2"], ["pooled"], np.array([10]), 0.95)
    groups = {row["output"]: row["estimate"] for row in board.rows("strict", None) if row["statistic"] == "tie_group"}
    assert groups == {"A": 1.0, "B": 1.0, "C": 2.0}


def test_bca_matches_scipy_on_the_same_resamples():
    rng = np.random.default_rng(1)
    sample = rng.exponential(size=40)
    scipy_result = scipy.stats.bootstrap(
        (sample,), np.mean, n_resamples=4000, method="BCa", confidence_level=0.95, random_state=np.random.default_rng(7)
    )
    draws = np.random.default_rng(7).integers(0, 40, size=(4000, 40))  # scipy's draws, reproduced
    jackknife = np.array([np.delete(sample, i).mean() for i in range(40)])
    low, high = bca_interval(sample[draws].mean(axis=1)[None], np.array([sample.mean()]), jackknife[None], 0.95)
    assert low[0] == pytest.approx(scipy_result.confidence_interval.low, rel=1e-12)
    assert high[0] == pytest.approx(scipy_result.confidence_interval.high, rel=1e-12)


def test_bca_intervals_in_the_audit(tmp_path):
    percentile = audit(tmp_path / "p", resamples=300)
    bca = audit(tmp_path / "b", resamples=300, interval="bca")
    # the band is built from interval ends, so only its rows may move
    assert [row["estimate"] for row in percentile.rows if row["analysis"] != "band"] == [
        row["estimate"] for row in bca.rows if row["analysis"] != "band"
    ]
    assert [row["p_value"] for row in percentile.rows] == [row["p_value"] for row in bca.rows]
    moved = [(p, b) for p, b in zip(percentile.rows, bca.rows) if p["ci_low"] != b["ci_low"]]
    assert moved  # the intervals are BCa's
    assert all(b["ci_low"] is None or b["ci_low"] <= b["estimate"] + 1e-9 or b["estimate"] is None for _, b in moved)
