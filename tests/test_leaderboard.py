"""The leaderboard rows (docs/leaderboard.md): ranks, Kendall's tau-b, flips, rank-change probabilities.

Tested three ways: hand-made rankings with known tau and flips; against outside references
(``scipy.stats.rankdata`` and ``scipy.stats.kendalltau``, statsmodels' Holm over the interaction family at
leaderboard size); and against the audit's own interaction rows, with which the leaderboard is paired.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from helpers import audit_items, by_language, labelled, pick, select
from scipy.stats import kendalltau, rankdata
from statsmodels.stats.multitest import multipletests

from refsens_report.analyses.ranking import Leaderboard, average_ranks, holm_floor, pair_orders, rank_agreement

# -- the pure statistics ---------------------------------------------------------------------------------


def agreement_of(scores: list[float], scores_2: list[float]) -> tuple[float, float]:
    tau, flips = rank_agreement(pair_orders(np.array(scores)), pair_orders(np.array(scores_2)))
    return float(tau), float(flips)


def test_average_ranks_by_hand():
    assert average_ranks(np.array([90.0, 80.0, 80.0, 70.0])).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert average_ranks(np.array([50.0, 50.0, 50.0])).tolist() == [2.0, 2.0, 2.0]
    ranks = average_ranks(np.array([np.nan, 50.0, 60.0, 50.0]))
    assert np.isnan(ranks[0]) and ranks[1:].tolist() == [2.5, 1.0, 2.5]  # undefined scores are not ranked


def test_average_ranks_match_scipy_rankdata_along_the_outputs_axis():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 6, size=(9, 4, 50)).astype(np.float64)  # many ties
    expected = np.apply_along_axis(lambda column: rankdata(-column, method="average"), 0, scores)
    np.testing.assert_array_equal(average_ranks(scores), expected)


@pytest.mark.parametrize(
    ("scores", "scores_2", "tau", "flips"),
    [
        ([4, 3, 2, 1], [4, 3, 2, 1], 1.0, 0),  # identical rankings
        ([4, 3, 2, 1], [1, 2, 3, 4], -1.0, 6),  # reversed: every pair flips
        ([4, 3, 2, 1], [4, 3, 1, 2], 4 / 6, 1),  # one adjacent swap: C = 5, D = 1
        ([4, 3, 2, 1], [3, 4, 1, 2], 2 / 6, 2),  # two adjacent swaps
        ([4, 3, 2, 1], [4, 2, 3, 1], 4 / 6, 1),
        ([3, 2, 1], [2, 3, 1], 1 / 3, 1),
        ([4, 3, 2, 1], [4, 4, 2, 1], 5 / np.sqrt(6 * 5), 0),  # a tie is not a flip; tau-b's tie correction
        ([4, 4, 2, 1], [3, 3, 2, 1], 1.0, 0),  # the same tie in both rankings
    ],
)
def test_hand_made_rankings(scores, scores_2, tau, flips):
    assert agreement_of(scores, scores_2) == pytest.approx((tau, flips))


def test_tau_is_undefined_when_one_ranking_ties_everything():
    tau, flips = agreement_of([1, 2, 3], [5, 5, 5])
    assert np.isnan(tau) and flips == 0


def test_tau_b_matches_scipy_on_random_scores_with_ties():
    rng = np.random.default_rng(7)
    for n_outputs in (3, 5, 12, 30):
        scores = rng.integers(0, 5, size=(n_outputs, 40)).astype(np.float64)
        scores_2 = rng.integers(0, 5, size=(n_outputs, 40)).astype(np.float64)
        tau, flips = rank_agreement(pair_orders(scores), pair_orders(scores_2))
        for column in range(scores.shape[1]):
            x, y = scores[:, column], scores_2[:, column]
            expected = kendalltau(x, y, variant="b").statistic
            np.testing.assert_allclose(tau[column], expected, rtol=1e-12, atol=1e-12, equal_nan=True)
            reversed_pairs = sum((x[i] - x[j]) * (y[i] - y[j]) < 0 for i, j in combinations(range(n_outputs), 2))
            assert flips[column] == reversed_pairs


def test_tau_b_omits_undefined_scores_as_scipy_does():
    x = np.array([80.0, np.nan, 70.0, 75.0, 60.0, 60.0])
    y = np.array([81.0, 90.0, 82.0, np.nan, 65.0, 61.0])
    tau, flips = rank_agreement(pair_orders(x), pair_orders(y))
    assert tau == pytest.approx(kendalltau(x, y, variant="b", nan_policy="omit").statistic)
    assert flips == 1  # only outputs 0 and 2 swap; pairs with an undefined score are neither flips nor ties


def test_undefined_scores_are_neither_ranked_nor_flipped():
    # scores[output, reference, group, 1 + replicate]: system_a is undefined under the second reference
    scores = np.array(
        [[[80.0, 80, 80], [np.nan, np.nan, 70]], [[70, 70, 70], [60, 60, 80]], [[60, 60, 60], [65, 65, 65]]]
    )
    board = Leaderboard(
        scores[:, :, None, :], ["system_a", "system_b", "system_c"], ["x", "y"], ["pooled"], np.array([5]), 0.95
    )
    rows = board.rows("strict", holm=None)
    flipped = [(row["output"], row["output_2"]) for row in rows if row["statistic"] == "flip"]
    assert flipped == [("system_b", "system_c")]
    rank = {(row["output"], row["reference"]): row["estimate"] for row in rows if row["statistic"] == "rank"}
    assert rank["system_a", "y"] is None and (rank["system_b", "y"], rank["system_c", "y"]) == (2, 1)
    change = {row["output"]: row["estimate"] for row in rows if row["statistic"] == "p_rank_change"}
    # replicate 1 ranks only b and c under y (b 2 → 2, c 3 → 1); replicate 2 ranks all (a 1 → 2, b 2 → 1, c 3 → 3)
    assert change == {"": 1.0, "system_a": 1.0, "system_b": 0.5, "system_c": 0.5}
    assert not [row for row in rows if row["statistic"] == "flips_significant"]  # needs the swings' Holm p


# -- the rows, through the audit ---------------------------------------------------------------------------

ORIGINAL, REVISED = "original", "revised"
SYSTEMS = ("system_1", "system_2", "system_3")
GOLD_X = [[0, 1, "PER"], [2, 3, "PER"], [4, 5, "LOC"]]
GOLD_Y = [[10, 11, "PER"], [12, 13, "ORG"], [14, 15, "LOC"]]
# Under X: system_1 (F1 66.7) > system_2 (40.0) > system_3 (33.3); under Y the exact reverse.
SYSTEM_SPANS = {
    "system_1": [GOLD_X[0], GOLD_X[1], GOLD_Y[0]],
    "system_2": [GOLD_X[0], GOLD_Y[0]],
    "system_3": [GOLD_X[0], GOLD_Y[0], GOLD_Y[1]],
}


def uniform_record(revised: list[list]) -> list[dict]:
    """Every item alike, so every bootstrap replicate gives the point estimate's ranking."""
    return [
        labelled(f"{language}-{index}", language, {ORIGINAL: GOLD_X, REVISED: revised, **SYSTEM_SPANS})
        for language in ("de", "en")
        for index in range(6)
    ]


def leaderboard(results, **labels):
    return select(results.rows, analysis="leaderboard", **labels)


def audit_systems(tmp_path: Path, items: list[dict], outputs=SYSTEMS, references=(ORIGINAL, REVISED), **audit):
    return audit_items(tmp_path, items, annotators=[], outputs=list(outputs), references=list(references), audit=audit)


def test_identical_references_give_tau_1_no_flips_and_no_rank_change(tmp_path):
    results = audit_systems(tmp_path, uniform_record(revised=GOLD_X))
    for rule in ("strict", "relaxed"):
        for language in ("de", "en", "pooled"):
            labels = {"rule": rule, "language": language, "reference": ORIGINAL, "reference_2": REVISED}
            tau = pick(results.rows, analysis="leaderboard", statistic="kendall_tau", **labels)
            assert (tau["estimate"], tau["ci_low"], tau["ci_high"]) == (1.0, 1.0, 1.0)
            assert pick(results.rows, analysis="leaderboard", statistic="flips", **labels)["estimate"] == 0
            changes = leaderboard(results, statistic="p_rank_change", **labels)
            assert len(changes) == 1 + len(SYSTEMS)  # the whole ranking, then each output
            assert all(row["estimate"] == 0 for row in changes)
            assert not leaderboard(results, statistic="flip", **labels)


def test_reversed_scores_give_tau_minus_1_and_every_pair_flipped(tmp_path):
    results = audit_systems(tmp_path, uniform_record(revised=GOLD_Y))
    labels = {"rule": "strict", "reference": ORIGINAL, "reference_2": REVISED}
    for language, tau in by_language(results.rows, analysis="leaderboard", statistic="kendall_tau", **labels).items():
        assert (tau["estimate"], tau["ci_low"], tau["ci_high"]) == (-1.0, -1.0, -1.0), language
        assert tau["n_items"] == (12 if language == "pooled" else 6)
    flips = by_language(results.rows, analysis="leaderboard", statistic="flips", **labels)
    assert {language: row["estimate"] for language, row in flips.items()} == {"de": 3, "en": 3, "pooled": 3}
    ranks = {
        (row["output"], row["reference"]): row["estimate"]
        for row in leaderboard(results, statistic="rank", rule="strict", language="pooled")
    }
    assert ranks == {
        ("system_1", ORIGINAL): 1,
        ("system_2", ORIGINAL): 2,
        ("system_3", ORIGINAL): 3,
        ("system_1", REVISED): 3,
        ("system_2", REVISED): 2,
        ("system_3", REVISED): 1,
    }
    change = {row["output"]: row["estimate"] for row in leaderboard(results, statistic="p_rank_change", **labels)}
    assert change == {"": 1.0, "system_1": 1.0, "system_2": 0.0, "system_3": 1.0}  # system_2 stays second
    flipped = leaderboard(results, statistic="flip", language="pooled", **labels)
    assert [(row["output"], row["output_2"]) for row in flipped] == list(combinations(SYSTEMS, 2))


def test_no_leaderboard_below_three_ranked_outputs(tmp_path):
    items = uniform_record(revised=GOLD_Y)
    assert not leaderboard(audit_systems(tmp_path / "two", items, outputs=SYSTEMS[:2]))
    # an output that is also a reference is not ranked (it would score 100 against itself)
    assert not leaderboard(audit_systems(tmp_path / "as-reference", items, references=(ORIGINAL, REVISED, "system_3")))
    assert not leaderboard(audit_systems(tmp_path / "one-reference", items, references=(ORIGINAL,)))


# -- leaderboard scale: 8 outputs, 3 references, a small random record ------------------------------------

OUTPUTS = tuple(f"system_{index}" for index in range(1, 9))
REFERENCES = ("original", "revised", "cleaned")
TYPES = ("PER", "LOC", "ORG")


def noisy(rng: np.random.Generator, spans: list[list], rate: float) -> list[list]:
    out = []
    for start, end, label in spans:
        roll = rng.random()
        if roll < rate / 2:
            continue
        if roll < rate:
            label = TYPES[(TYPES.index(label) + 1) % len(TYPES)] if roll < 0.75 * rate else label
            end = end if roll < 0.75 * rate else end + 1
        out.append([start, end, label])
    return out


def random_record(seed: int = 0, per_language: int = 30) -> list[dict]:
    rng = np.random.default_rng(seed)
    rates = dict(zip(OUTPUTS, np.linspace(0.15, 0.35, len(OUTPUTS))))
    items = []
    for language in ("de", "en"):
        for index in range(per_language):
            starts = np.sort(rng.choice(20, size=int(rng.integers(1, 5)), replace=False)) * 10
            gold = [[int(s), int(s) + 3, TYPES[int(rng.integers(3))]] for s in starts]
            spans = {"original": gold, "revised": noisy(rng, gold, 0.1), "cleaned": noisy(rng, gold, 0.15)}
            spans.update({name: noisy(rng, gold, rate) for name, rate in rates.items()})
            items.append(labelled(f"{language}-{index:03d}", language, spans))
    return items


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("leaderboard")
    return audit_systems(folder, random_record(), outputs=OUTPUTS, references=REFERENCES)


def test_holm_over_the_interaction_family_at_leaderboard_size_matches_statsmodels(scaled):
    swings = select(scaled.rows, analysis="interaction", statistic="swing")
    # every pair of outputs x every pair of references x both rules x (2 languages + pooled)
    assert len(swings) == 28 * 3 * 2 * 3
    assert all(row["p_value"] is not None for row in swings)
    # 8 outputs: the default family is "adjacent": 7 adjacent pairs x 2 alternatives x 2 rules x 3 groups
    family = [row for row in swings if row["p_holm"] is not None]
    assert len(family) == 7 * 2 * 2 * 3
    assert all(row["reference"] == REFERENCES[0] for row in family)
    expected = multipletests([row["p_value"] for row in family], method="holm")[1]
    np.testing.assert_allclose([row["p_holm"] for row in family], expected, rtol=1e-12, atol=0)


def test_flip_rows_are_the_swings_of_the_pairs_whose_order_reverses(scaled):
    swings = {
        (row["rule"], row["language"], row["output"], row["output_2"], row["reference"], row["reference_2"]): row
        for row in select(scaled.rows, analysis="interaction", statistic="swing")
    }
    margins = {
        (row["rule"], row["language"], row["output"], row["output_2"], row["reference"]): row["estimate"]
        for row in select(scaled.rows, analysis="interaction", statistic="margin")
    }
    flipped = 0
    for rule in ("strict", "relaxed"):
        for language in ("de", "en", "pooled"):
            for reference, reference_2 in combinations(REFERENCES, 2):
                labels = {"rule": rule, "language": language, "reference": reference, "reference_2": reference_2}
                reversed_pairs = [
                    (first, second)
                    for first, second in combinations(OUTPUTS, 2)
                    if margins[rule, language, first, second, reference]
                    * margins[rule, language, first, second, reference_2]
                    < 0
                ]
                rows = leaderboard(scaled, statistic="flip", **labels)
                assert [(row["output"], row["output_2"]) for row in rows] == reversed_pairs
                for row in rows:
                    swing = swings[rule, language, row["output"], row["output_2"], reference, reference_2]
                    for column in ("estimate", "ci_low", "ci_high", "p_value", "p_holm"):
                        assert row[column] == swing[column], column  # paired: bit-identical
                count = pick(scaled.rows, analysis="leaderboard", statistic="flips", **labels)
                assert count["estimate"] == len(reversed_pairs)
                significant = pick(scaled.rows, analysis="leaderboard", statistic="flips_significant", **labels)
                # flips outside the Holm family have no p_holm and are not counted significant
                assert significant["estimate"] == sum(
                    row["p_holm"] is not None and row["p_holm"] < 0.05 for row in rows
                )
                flipped += len(rows)
    assert flipped > 0  # the record is built so that the reference reorders some neighbours


def test_scores_ranks_and_tau_agree_with_the_swap_rows_and_scipy(scaled):
    def index(analysis: str, statistic: str) -> dict[tuple[str, ...], dict]:
        rows = select(scaled.rows, analysis=analysis, statistic=statistic)
        return {(r["rule"], r["language"], r["output"], r["reference"], r["reference_2"]): r for r in rows}

    board, swap = index("leaderboard", "score"), index("swap", "score")
    rank, tau = index("leaderboard", "rank"), index("leaderboard", "kendall_tau")
    interval = ("estimate", "ci_low", "ci_high")
    for rule in ("strict", "relaxed"):
        for language in ("de", "en", "pooled"):
            scores = {}
            for reference in REFERENCES:
                keys = [(rule, language, output, reference, "") for output in OUTPUTS]
                assert all([board[key][c] for c in interval] == [swap[key][c] for c in interval] for key in keys)
                scores[reference] = np.array([board[key]["estimate"] for key in keys])
                np.testing.assert_array_equal([rank[key]["estimate"] for key in keys], rankdata(-scores[reference]))
                assert all(1 <= rank[key]["ci_low"] <= rank[key]["ci_high"] <= len(OUTPUTS) for key in keys)
            for reference, reference_2 in combinations(REFERENCES, 2):
                row = tau[rule, language, "", reference, reference_2]
                assert row["estimate"] == pytest.approx(kendalltau(scores[reference], scores[reference_2]).statistic)
                assert -1 <= row["ci_low"] <= row["ci_high"] <= 1


def test_rank_change_probabilities_are_shares_and_the_whole_ranking_changes_most(scaled):
    for row in leaderboard(scaled, statistic="p_rank_change"):
        assert 0 <= row["estimate"] <= 1 and row["ci_low"] is None and row["p_value"] is None
    for labels in ({"rule": "strict", "language": "pooled", "reference": "original", "reference_2": "revised"},):
        changes = leaderboard(scaled, statistic="p_rank_change", **labels)
        whole = [row["estimate"] for row in changes if row["output"] == ""]
        per_output = [row["estimate"] for row in changes if row["output"] != ""]
        assert len(whole) == 1 and len(per_output) == len(OUTPUTS)
        assert whole[0] >= max(per_output)  # the ranking differs whenever any output's rank does


def test_holm_floor_is_the_smallest_holm_p_a_swing_can_reach(scaled):
    family = [
        row for row in select(scaled.rows, analysis="interaction", statistic="swing") if row["p_holm"] is not None
    ]
    floor = pick(scaled.rows, analysis="leaderboard", statistic="holm_floor")
    assert floor["estimate"] == min(1.0, len(family) * 2 / (scaled.resamples + 1))  # 84 tests, 200 replicates: 0.84
    assert min(row["p_holm"] for row in family) >= floor["estimate"]
    assert holm_floor(2184, 2000) == 1.0  # CoNLL-2003: 14 outputs, 4 golds, 2 rules, en + pooled
    assert holm_floor(14, 2000) == 28 / 2001  # the paper's family of 14 tests: Holm can reject


def test_rows_follow_the_contract(scaled):
    rows = leaderboard(scaled)
    statistics = {
        "score",
        "rank",
        "kendall_tau",
        "flips",
        "flips_significant",
        "p_rank_change",
        "tie_group",
        "flip",
        "holm_floor",
        "rank_lower_simultaneous",
        "rank_upper_simultaneous",
        "best_set",
        "k_hat",
    }
    statistics |= {
        f"p_partial_{method}_{u}" for method in ("bonferroni", "fisher") for u in range(1, len(REFERENCES) + 1)
    }
    assert {row["statistic"] for row in rows} == statistics
    assert all(row["subset"] == "audited" and row["policy"] == "" for row in rows)
    assert all(row["output"] == "" for row in rows if row["statistic"] in {"kendall_tau", "flips", "flips_significant"})
    assert rows == scaled.rows[-len(rows) :]  # "leaderboard" is the last analysis in ANALYSIS_ORDER
