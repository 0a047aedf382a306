"""Inference on the leaderboard (docs/method.md section 7): simultaneous rank sets and replicability across golds.

Tested against a plain, loop-by-loop implementation of Mogstad, Romano, Shaikh & Wilhelm's step-down
procedure written here from the paper; the partial conjunction p-values against the formulas and
``scipy.stats.combine_pvalues``; and through the audit, against the interaction's own margins.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from helpers import pick, select
from scipy.stats import combine_pvalues
from test_leaderboard import OUTPUTS, REFERENCES, audit_systems, random_record

from refsens_report.analyses.ranking import Leaderboard, rank_sets
from refsens_report.bootstrap import (
    bootstrap_p_value,
    one_sided_p_value,
    partial_conjunction,
    replicated_count,
)

# -- simultaneous rank sets -------------------------------------------------------------------------------


def brute_force_rank_sets(scores: np.ndarray, confidence: float, simultaneous: bool = True) -> list[tuple[int, int]]:
    """The paper's step-down rank sets, plainly: ordered pairs, loops over replicates, nothing vectorised."""
    outputs, replicates = scores.shape[0], scores.shape[1] - 1
    point = scores[:, 0]
    difference, spread = {}, {}
    for j in range(outputs):
        for k in range(outputs):
            if j != k:
                difference[j, k] = point[j] - point[k]
                spread[j, k] = float(np.std([scores[j, b] - scores[k, b] for b in range(1, replicates + 1)]))

    def declared(family: list[tuple[int, int]]) -> set[tuple[int, int]]:
        """Return the ordered pairs (k, j) with "k is better than j" declared, stepping down over ``family``."""
        active, rejected = list(family), set()
        while active:
            largest = []
            for b in range(1, replicates + 1):
                largest.append(
                    max(
                        (scores[k, b] - scores[j, b] - difference[k, j]) / spread[k, j] if spread[k, j] > 0 else 0.0
                        for k, j in active
                    )
                )
            critical = np.quantile(largest, confidence)
            new = set()
            for k, j in active:
                t = difference[k, j] / spread[k, j] if spread[k, j] > 0 else np.sign(difference[k, j]) * np.inf
                if t > critical:
                    new.add((k, j))
            if not new:
                break
            rejected |= new
            active = [pair for pair in active if pair not in new]
        return rejected

    everyone = [(k, j) for k in range(outputs) for j in range(outputs) if k != j]
    sets = []
    for j in range(outputs):
        pairs = declared(everyone if simultaneous else [(a, b) for a, b in everyone if j in (a, b)])
        better = sum((k, j) in pairs for k in range(outputs) if k != j)
        worse = sum((j, k) in pairs for k in range(outputs) if k != j)
        sets.append((1 + better, outputs - worse))
    return sets


def four_outputs(seed: int, replicates: int = 400) -> np.ndarray:
    """A hand-made board of 4 outputs: one clearly best, two close in the middle, one a little behind them.

    The replicates share a common shock (as paired F1 scores do), so the pairs' spreads differ.
    """
    rng = np.random.default_rng(seed)
    point = np.array([82.0, 78.0, 77.5, 74.4])
    common = rng.normal(0, 1.0, replicates)
    noise = rng.normal(0, [[0.6], [0.9], [0.8], [1.2]], (4, replicates))
    return np.column_stack([point, point[:, None] + common + noise])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("simultaneous", [True, False])
def test_rank_sets_equal_the_papers_procedure_written_plainly(seed, simultaneous):
    scores = four_outputs(seed)
    lower, upper = rank_sets(scores, 0.95, simultaneous=simultaneous)
    assert list(zip(lower.astype(int), upper.astype(int))) == brute_force_rank_sets(scores, 0.95, simultaneous)


def test_rank_sets_on_the_hand_made_board():
    scores = four_outputs(4)
    # 82 against 78 with a spread near 1 is declared; 78 against 77.5 is not; 74.4 is declared behind 78 only
    # by the step-down over all pairs, and behind both middle outputs by its own (marginal) comparisons
    lower, upper = rank_sets(scores, 0.95)
    assert list(zip(lower, upper)) == [(1, 1), (2, 3), (2, 4), (3, 4)]
    lower, upper = rank_sets(scores, 0.95, simultaneous=False)
    assert list(zip(lower, upper)) == [(1, 1), (2, 3), (2, 4), (4, 4)]


def test_simultaneous_sets_contain_the_marginal_ones():
    for seed in range(6):
        scores = four_outputs(seed)
        lower, upper = rank_sets(scores, 0.95)
        marginal_lower, marginal_upper = rank_sets(scores, 0.95, simultaneous=False)
        assert (lower <= marginal_lower).all() and (upper >= marginal_upper).all()


def test_replicates_that_never_vary_give_the_point_ranking_and_ties_share_a_set():
    point = np.array([70.0, 90.0, 80.0, 80.0])
    lower, upper = rank_sets(np.tile(point[:, None], (1, 21)), 0.95)
    assert lower.tolist() == [4, 1, 2, 2] and upper.tolist() == [4, 1, 3, 3]


def test_an_undefined_output_has_no_rank_set_and_is_not_counted():
    scores = four_outputs(1)
    scores[3] = np.nan
    lower, upper = rank_sets(scores, 0.95)
    assert np.isnan(lower[3]) and np.isnan(upper[3])
    assert list(zip(lower[:3].astype(int), upper[:3].astype(int))) == brute_force_rank_sets(scores[:3], 0.95)


# -- partial conjunction -----------------------------------------------------------------------------------


def test_partial_conjunction_by_hand():
    p_values = np.array([0.3, 0.01, 0.04])
    bonferroni = partial_conjunction(p_values, "bonferroni")
    np.testing.assert_allclose(bonferroni, [3 * 0.01, 2 * 0.04, 0.3])  # (K - u + 1) p_(u)
    assert replicated_count(bonferroni, 0.05) == 1
    # not monotone before the running maximum: 3 x 0.001 > 2 x 0.001
    np.testing.assert_allclose(partial_conjunction(np.array([0.001, 0.001, 0.02]), "bonferroni"), [0.003, 0.003, 0.02])
    fisher = partial_conjunction(p_values, "fisher")
    from scipy.stats import chi2

    ordered = np.sort(p_values)
    by_formula = [chi2.sf(-2 * np.log(ordered[u:]).sum(), 2 * (3 - u)) for u in range(3)]
    np.testing.assert_allclose(fisher, np.maximum.accumulate(by_formula), rtol=1e-12)
    assert replicated_count(np.array([0.06, 0.07]), 0.05) == 0
    assert replicated_count(np.array([0.05, 0.05]), 0.05) == 2  # p^u <= alpha (docs/method.md section 7)


def test_partial_conjunction_matches_scipy_combine_pvalues():
    rng = np.random.default_rng(3)
    p_values = rng.uniform(0.0005, 1, (200, 4)) ** rng.uniform(0.5, 4, (200, 1))
    fisher = partial_conjunction(p_values, "fisher")
    bonferroni = partial_conjunction(p_values, "bonferroni")
    for row, fisher_row, bonferroni_row in zip(p_values, fisher, bonferroni):
        ordered = np.sort(row)
        scipy_fisher = [combine_pvalues(ordered[u:], method="fisher").pvalue for u in range(4)]
        np.testing.assert_allclose(fisher_row, np.maximum.accumulate(scipy_fisher), rtol=1e-10)
        by_hand = [min(1.0, (4 - u) * ordered[u]) for u in range(4)]
        np.testing.assert_allclose(bonferroni_row, np.maximum.accumulate(by_hand), rtol=1e-15)
    assert (np.diff(fisher, axis=-1) >= 0).all() and (np.diff(bonferroni, axis=-1) >= 0).all()
    assert np.isnan(partial_conjunction(np.array([0.01, np.nan]), "fisher")).all()


def test_one_sided_p_values_double_to_the_two_sided_one():
    rng = np.random.default_rng(4)
    replicates = rng.normal(rng.normal(0, 1, (50, 1)), 1, (50, 999)).round(1)  # ties at zero
    replicates[:5, :300] = np.nan
    defined = (~np.isnan(replicates)).sum(axis=1)
    with np.errstate(invalid="ignore"):
        ahead = one_sided_p_value((replicates <= 0).sum(axis=1), defined, 999)
        behind = one_sided_p_value((replicates >= 0).sum(axis=1), defined, 999)
    np.testing.assert_array_equal(np.minimum(1, 2 * np.minimum(ahead, behind)), bootstrap_p_value(replicates))


# -- through the Leaderboard and the audit -----------------------------------------------------------------


def test_leaderboard_partial_conjunction_rows_are_the_per_reference_one_sided_p_combined():
    rng = np.random.default_rng(5)
    point = rng.uniform(70, 80, (4, 3))  # output, reference
    scores = (point[..., None] + rng.normal(0, 1.5, (4, 3, 300)))[:, :, None, :]  # one group
    scores = np.concatenate([point[:, :, None, None], scores], axis=-1)
    outputs, references = ["a", "b", "c", "d"], ["r1", "r2", "r3"]
    rows = Leaderboard(scores, outputs, references, ["pooled"], np.array([100]), 0.95).rows("strict", None)
    for i, j in [pair for first, second in combinations(range(4), 2) for pair in ((first, second), (second, first))]:
        difference = scores[i, :, 0] - scores[j, :, 0]  # reference, 1 + replicate
        p_values = np.array([(1 + (d[1:] <= 0).sum()) / 301 for d in difference])  # "i is not better than j"
        ordered = np.sort(p_values)
        labels = {"output": outputs[i], "output_2": outputs[j], "language": "pooled"}
        for u in range(1, 4):
            bonferroni = pick(rows, statistic=f"p_partial_bonferroni_{u}", **labels)
            fisher = pick(rows, statistic=f"p_partial_fisher_{u}", **labels)
            assert bonferroni["estimate"] == fisher["estimate"] == u
            assert bonferroni["p_value"] == pytest.approx(
                max(min(1, (3 - v) * ordered[v]) for v in range(u)), rel=1e-12
            )
            scipy_fisher = max(combine_pvalues(ordered[v:], method="fisher").pvalue for v in range(u))
            assert fisher["p_value"] == pytest.approx(scipy_fisher, rel=1e-10)
        k_hat = pick(rows, statistic="k_hat", **labels)["estimate"]
        assert k_hat == max(
            [u for u in range(1, 4) if max(min(1, (3 - v) * ordered[v]) for v in range(u)) <= 0.05], default=0
        )


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    return audit_systems(tmp_path_factory.mktemp("inference"), random_record(), outputs=OUTPUTS, references=REFERENCES)


def test_rank_set_rows_hold_the_point_rank_and_name_the_plausible_best(audited):
    for rank in select(audited.rows, analysis="leaderboard", statistic="rank"):
        labels = {key: rank[key] for key in ("rule", "language", "output", "reference")}
        lower = pick(audited.rows, analysis="leaderboard", statistic="rank_lower_simultaneous", **labels)
        upper = pick(audited.rows, analysis="leaderboard", statistic="rank_upper_simultaneous", **labels)
        best = pick(audited.rows, analysis="leaderboard", statistic="best_set", **labels)
        assert 1 <= lower["estimate"] <= rank["estimate"] <= upper["estimate"] <= len(OUTPUTS)
        assert best["estimate"] == (lower["estimate"] == 1)
        assert lower["ci_low"] is None and lower["p_value"] is None
    best = select(
        audited.rows,
        analysis="leaderboard",
        statistic="best_set",
        rule="strict",
        language="pooled",
        reference="original",
    )
    top = pick(
        audited.rows,
        analysis="leaderboard",
        statistic="rank",
        rule="strict",
        language="pooled",
        reference="original",
        estimate=1.0,
    )
    assert top["output"] in {row["output"] for row in best if row["estimate"] == 1}


def test_replicability_rows_agree_with_the_interaction_margins(audited):
    """Per reference, the two one-sided p of a pair double to the margin's two-sided p, so with K golds the
    Bonferroni p at u = K (the largest per-gold p) of the better direction is at least half the largest margin p."""
    margins = {
        (row["rule"], row["language"], row["output"], row["output_2"], row["reference"]): row
        for row in select(audited.rows, analysis="interaction", statistic="margin")
    }
    size = len(REFERENCES)
    for first, second in combinations(OUTPUTS, 2):
        labels = {"rule": "strict", "language": "pooled"}
        two_sided = [margins["strict", "pooled", first, second, reference]["p_value"] for reference in REFERENCES]
        ahead = pick(audited.rows, statistic=f"p_partial_bonferroni_{size}", output=first, output_2=second, **labels)
        behind = pick(audited.rows, statistic=f"p_partial_bonferroni_{size}", output=second, output_2=first, **labels)
        # each gold's smaller one-sided p is half its two-sided p (below 1): both directions' largest p reach it
        assert max(ahead["p_value"], behind["p_value"]) >= max(two_sided) / 2 - 1e-12
        for direction in (ahead, behind):
            k_hat = pick(
                audited.rows, statistic="k_hat", output=direction["output"], output_2=direction["output_2"], **labels
            )
            assert 0 <= k_hat["estimate"] <= size
    count = sum(
        len(select(audited.rows, analysis="leaderboard", statistic=f"p_partial_fisher_{u}")) for u in range(1, size + 1)
    )
    assert count == len(OUTPUTS) * (len(OUTPUTS) - 1) * size * 2 * 3  # ordered pairs x u x rules x groups


def test_the_section_prints_the_rank_sets_the_replicability_table_and_says_k_hat(audited):
    from refsens_report.analyses import leaderboard
    from refsens_report.view import ResultsView

    view = ResultsView.from_json(audited.to_json_dict())
    section = leaderboard.ANALYSIS.section(view, {})
    tables = {table.key: table for table in section.tables}
    board = tables["leaderboard"]
    # the page: one row per output, its rank and simultaneous set under each reference (main rule, pooled)
    assert board.columns == ("Output", *leaderboard.RANK_BOARD_COLUMNS * len(REFERENCES))
    assert len(board.rows) == len(OUTPUTS)
    printed_lower = {
        cell.row
        for row in board.rows
        for cell in row
        if cell.field == "point" and view.rows.rows[cell.row]["statistic"] == "rank_lower_simultaneous"
    }
    assert {view.rows.rows[index]["language"] for index in printed_lower} == {"pooled"}
    assert len(printed_lower) == len(OUTPUTS) * len(REFERENCES)
    # its CSV: every rule and language, the score and the percentile rank interval too
    assert board.csv.columns[-3:] == leaderboard.RANK_SET_COLUMNS
    lower_rows = {index for index, _ in view.rows.select("leaderboard", "rank_lower_simultaneous")}
    assert {cell.row for row in board.csv.rows for cell in row[-3:-2]} == lower_rows  # every set, in the CSV
    replicability = tables["replicability"]
    # the page: the adjacent pairs the sentence names; the CSV: both orders of every pair, every rule and language
    assert len(replicability.csv.rows) == len(select(audited.rows, analysis="leaderboard", statistic="k_hat"))
    assert [row[2].text for row in replicability.rows] == [
        f"{winner} > {loser}" for winner, loser in leaderboard.adjacent_pairs(view)[: leaderboard.TOP_PAIRS]
    ]
    said = " ".join(section.paragraphs)
    assert "Plausible best outputs" in said
    primary_order = sorted(
        select(
            audited.rows,
            analysis="leaderboard",
            statistic="rank",
            rule="strict",
            language="pooled",
            reference="original",
        ),
        key=lambda row: (row["estimate"], OUTPUTS.index(row["output"])),
    )
    winner, loser = primary_order[0]["output"], primary_order[1]["output"]
    k_hat = pick(audited.rows, statistic="k_hat", rule="strict", language="pooled", output=winner, output_2=loser)
    assert f"{winner} beats {loser} under {int(k_hat['estimate'])} of {len(REFERENCES)}" in said
