"""The leaderboard's statistics: scores, ranks, rank agreement and order flips under every reference.

The compute half of the leaderboard analysis (``analyses/leaderboard.py`` holds its report; docs/leaderboard.md
defines the rows).

Everything is computed from one array per rule, ``scores[output, reference, group, 1 + replicate]`` (F1 on
the audited items, replicate 0 the point estimate), drawn from the same ``audited`` stream as the swap and
interaction rows, so ranks, taus and flips are paired with the swings replicate by replicate. Ranks, pair
orders, tau-b and flips are vectorised over outputs, groups and replicates at once; nothing loops over
replicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report.bootstrap import (  # noqa: F401 (holm_floor re-exported)
    PARTIAL_CONJUNCTION,
    bootstrap_p_value,
    holm_floor,
    one_sided_p_value,
    partial_conjunction,
    percentile_interval,
    replicated_count,
    significant,
)
from refsens_report.config import Config
from refsens_report.formulas import F1
from refsens_report.record import POOLED
from refsens_report.results import make_row

if TYPE_CHECKING:
    from refsens_report.estimator import Estimator

MIN_OUTPUTS = 3  # ranked outputs a leaderboard needs: with two, it is the interaction's single margin
UNDEFINED = 2  # pair-order code for a pair with an undefined score (orders are -1, 0, +1)


def ranked_outputs(config: Config) -> tuple[str, ...]:
    """Return the outputs the leaderboard ranks: every output that is not itself a reference."""
    references = set(config.roles.references)
    return tuple(output for output in config.roles.outputs if output not in references)


def average_ranks(scores: np.ndarray) -> np.ndarray:
    """Return each output's rank along axis 0: 1 = highest score, ties share their average rank.

    Undefined (NaN) scores get an undefined rank, and the defined ones are ranked among themselves.
    """
    n_outputs = scores.shape[0]
    order = np.argsort(-scores, axis=0, kind="stable")  # NaN sorts last
    ordered = np.take_along_axis(scores, order, axis=0)
    position = np.arange(n_outputs, dtype=np.float64).reshape((n_outputs,) + (1,) * (scores.ndim - 1))
    position = np.broadcast_to(position, scores.shape)
    starts_run = np.ones(scores.shape, dtype=bool)
    starts_run[1:] = ordered[1:] != ordered[:-1]
    ends_run = np.ones(scores.shape, dtype=bool)
    ends_run[:-1] = starts_run[1:]
    first = np.maximum.accumulate(np.where(starts_run, position, 0.0), axis=0)
    last = np.flip(
        np.minimum.accumulate(np.flip(np.where(ends_run, position, n_outputs - 1.0), axis=0), axis=0), axis=0
    )
    ranks = np.empty(scores.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=0)
    return np.where(np.isnan(scores), np.nan, ranks)


def output_pairs(n_outputs: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (first, second) indices of every pair i < j, in ``itertools.combinations`` order."""
    return np.triu_indices(n_outputs, 1)


def pair_orders(scores: np.ndarray) -> np.ndarray:
    """Return sign(score_i − score_j) as int8 for every pair i < j along axis 0; ``UNDEFINED`` where NaN."""
    n_outputs = scores.shape[0]
    orders = np.empty((n_outputs * (n_outputs - 1) // 2,) + scores.shape[1:], dtype=np.int8)
    undefined = np.isnan(scores)
    first = 0
    for i in range(n_outputs - 1):  # one comparison per output against those after it: no float temporaries
        rest = scores[i + 1 :]
        block = orders[first : first + len(rest)]
        np.subtract(np.greater(scores[i], rest).view(np.int8), np.less(scores[i], rest).view(np.int8), out=block)
        if undefined.any():
            block[undefined[i] | undefined[i + 1 :]] = UNDEFINED
        first += len(rest)
    return orders


def rank_agreement(orders: np.ndarray, orders_2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (Kendall's tau-b, number of discordant pairs) of two rankings given as pair orders.

    Only pairs ordered under both rankings count (as scipy's ``nan_policy="omit"``):
    tau-b = (C − D) / sqrt((n0 − n1)(n0 − n2)), with n1, n2 the pairs tied in each ranking; undefined when
    either ranking ties every pair.
    """
    agreement = orders * orders_2  # +1 concordant, -1 discordant, 0 tied in either
    undefined = (orders == UNDEFINED) | (orders_2 == UNDEFINED)
    if undefined.any():
        agreement[undefined] = 0
        orders, orders_2 = np.where(undefined, 0, orders), np.where(undefined, 0, orders_2)
    concordant_minus_discordant = agreement.sum(axis=0, dtype=np.int64)
    discordant = np.count_nonzero(agreement < 0, axis=0)
    untied = np.count_nonzero(orders, axis=0)
    untied_2 = np.count_nonzero(orders_2, axis=0)
    denominator = np.sqrt(untied.astype(np.float64) * untied_2)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(denominator > 0, concordant_minus_discordant / denominator, np.nan)
    return tau, discordant.astype(np.float64)


def partial_statistic(method: str, u: int) -> str:
    """Return the statistic of the partial-conjunction row for "under at least u of the K references": u is part
    of the name, so no two rows share their label columns (docs/results.md)."""
    return f"p_partial_{method}_{u}"


def change_probability(changed: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """Return the share of defined replicates (last axis) in which ``changed`` holds; NaN if under half defined."""
    n_defined = defined.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (changed & defined).sum(axis=-1) / n_defined
    return np.where(2 * n_defined >= defined.shape[-1], share, np.nan)


RANK_SET_CELLS = 1 << 20  # pair x replicate cells studentised at once (8 MB): memory stays flat at any B


def rank_sets(scores: np.ndarray, confidence: float, simultaneous: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Return (lower, upper) ends of each output's rank confidence set from ``scores[output, 1 + replicate]``.

    Mogstad, Romano, Shaikh & Wilhelm (REStud 2024), step-down (docs/method.md section 7): for the ordered pairs
    still tested, c is the ``confidence`` quantile (numpy's linear one) over replicates of the largest
    studentised (Δ*_jk − Δ̂_jk) / σ̂_jk, σ̂ the replicates' standard deviation; k is declared better than j
    when Δ̂_kj / σ̂_kj > c; declared pairs leave and c is recomputed until no pair is declared. Simultaneous:
    one c over every pair; marginal (``simultaneous=False``): for each output j its own c over the pairs
    that involve j. Rank set of j: [1 + #{better than j}, p − #{worse than j}], p the outputs ranked; an
    output whose score is undefined, or defined in fewer than half of the replicates, has none (NaN) and is
    not counted. A pair whose replicates never vary (σ̂ = 0) is declared when its point difference is not 0.
    """
    point, star = scores[:, 0], scores[:, 1:]
    ranked = ~np.isnan(point) & (2 * (~np.isnan(star)).sum(axis=1) >= star.shape[1])
    lower, upper = np.full(len(point), np.nan), np.full(len(point), np.nan)
    members = np.flatnonzero(ranked)
    if not len(members):
        return lower, upper
    first, second = (members[index] for index in output_pairs(len(members)))
    difference = point[first] - point[second]
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.nanstd(star[first] - star[second], axis=1) if len(first) else np.empty(0)
        certain = np.where(difference > 0, np.inf, np.where(difference < 0, -np.inf, 0.0))
        t = np.where(spread > 0, difference / spread, np.where(spread == 0, certain, np.nan))
    scale = np.where(spread > 0, spread, np.inf)  # a pair whose replicates never vary studentises to 0
    better = np.zeros(len(point), dtype=np.int64)  # how many outputs are declared better than each
    worse = np.zeros(len(point), dtype=np.int64)
    families = (
        [np.ones(len(first), dtype=bool)]
        if simultaneous
        else [(first == output) | (second == output) for output in members]
    )
    for family, output in zip(families, [None] if simultaneous else members):
        forward, backward = family.copy(), family.copy()  # "first beats second", "second beats first" still tested
        while forward.any() or backward.any():
            critical = _critical_value(star, first, second, difference, scale, forward, backward, confidence)
            with np.errstate(invalid="ignore"):
                ahead, behind = forward & (t > critical), backward & (-t > critical)
            if not (ahead.any() or behind.any()):
                break
            forward &= ~ahead
            backward &= ~behind
            if output is None:  # simultaneous: every declared pair counts
                np.add.at(better, second[ahead], 1)
                np.add.at(worse, first[ahead], 1)
                np.add.at(better, first[behind], 1)
                np.add.at(worse, second[behind], 1)
            else:  # marginal: only the pairs that say where ``output`` stands
                better[output] += int(ahead[second == output].sum() + behind[first == output].sum())
                worse[output] += int(ahead[first == output].sum() + behind[second == output].sum())
    lower[members] = 1 + better[members]
    upper[members] = len(members) - worse[members]
    return lower, upper


def _critical_value(
    star: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    difference: np.ndarray,
    scale: np.ndarray,
    forward: np.ndarray,
    backward: np.ndarray,
    confidence: float,
) -> float:
    """Return the ``confidence`` quantile over replicates of the largest studentised difference of the active pairs.

    Forward pairs contribute (Δ* − Δ̂)/σ̂, backward ones its negative; replicates in which no active pair is
    defined are left out. Studentised in blocks of replicates (vectorised within each), so memory stays flat.
    """
    pairs = np.concatenate([np.flatnonzero(forward), np.flatnonzero(backward)])
    sign = np.concatenate([np.ones(forward.sum()), -np.ones(backward.sum())])[:, None]
    centre, spread = difference[pairs, None], scale[pairs, None]
    replicates = star.shape[1]
    largest = np.empty(replicates)
    step = max(1, RANK_SET_CELLS // len(pairs))
    for start in range(0, replicates, step):
        block = star[:, start : start + step]
        studentised = sign * ((block[first[pairs]] - block[second[pairs]]) - centre) / spread
        largest[start : start + step] = np.fmax.reduce(studentised, axis=0)  # NaN (undefined) only if all are
    defined = largest[~np.isnan(largest)]
    return float(np.quantile(defined, confidence)) if len(defined) else np.nan


def swing_holm(swings: Sequence[dict[str, Any]] | None) -> dict[tuple[str, ...], float | None]:
    """Return p_holm of every interaction swing row, keyed by rule, language, outputs and references."""
    return {
        (row["rule"], row["language"], row["output"], row["output_2"], row["reference"], row["reference_2"]): row[
            "p_holm"
        ]
        for row in swings or ()
        if row["analysis"] == "interaction" and row["statistic"] == "swing"
    }


def leaderboard_rows(
    estimator: Estimator, mask: np.ndarray, config: Config, swings: Sequence[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Return the leaderboard rows (docs/leaderboard.md) on the masked (audited) items.

    ``swings``: rows carrying the interaction swings with their Holm p (pass them after Holm) to report which
    order flips are significant; without them the flip rows carry no ``p_holm`` and there are no
    ``flips_significant`` rows.
    """
    outputs, references = ranked_outputs(config), config.roles.references
    if len(outputs) < MIN_OUTPUTS or len(references) < 2 or not mask.any():
        return []
    rules = config.audit.rules
    scores_of = {(rule, o, r): F1(rule, o, r) for rule in rules for o in outputs for r in references}
    groups, n_items, env = estimator.environment(
        [column for score in scores_of.values() for column in score.columns()], mask, "audited"
    )
    holm = swing_holm(swings) if swings is not None else None
    rows: list[dict[str, Any]] = []
    for rule in rules:
        scores = np.stack([np.stack([env.value(scores_of[rule, o, r]) for r in references]) for o in outputs])
        env.forget()
        board = Leaderboard(
            scores, outputs, references, groups, n_items, config.audit.confidence, estimator.cluster_counts(mask)
        )
        rows += board.rows(rule, holm)
    if holm:
        rows.append(
            make_row(
                analysis="leaderboard",
                statistic="holm_floor",
                language=POOLED,
                subset="audited",
                estimate=holm_floor(sum(p is not None for p in holm.values()), config.audit.resamples),
                n_items=n_items[-1],
                n_clusters=estimator.cluster_counts(mask)[-1],
            )
        )
    estimator.progress.finish()  # the leaderboard's draws come after the other item sets' progress line
    return rows


class Leaderboard:
    """Ranks and rank agreement of one rule's scores[output, reference, group, 1 + replicate]."""

    def __init__(
        self,
        scores: np.ndarray,
        outputs: Sequence[str],
        references: Sequence[str],
        groups: Sequence[str],
        n_items: np.ndarray,
        confidence: float,
        n_clusters: np.ndarray | None = None,
    ):
        self.scores, self.outputs, self.references = scores, list(outputs), list(references)
        self.groups, self.n_items, self.confidence = list(groups), n_items, confidence
        self.n_clusters = n_items if n_clusters is None else n_clusters  # every item its own cluster by default
        self.ranks = average_ranks(scores)  # output, reference, group, 1 + replicate
        self.orders = [pair_orders(scores[:, k]) for k in range(len(self.references))]  # pair, group, 1 + replicate
        self.reference_pairs = list(combinations(range(len(self.references)), 2))

    def rows(self, rule: str, holm: dict[tuple[str, ...], float | None] | None) -> list[dict[str, Any]]:
        """Return the rule's rows: score, rank, kendall_tau, flips, flips_significant, p_rank_change, flip."""
        rows = self._per_output(rule, "score", self.scores)
        rows += self._per_output(rule, "rank", self.ranks)
        agreement = [rank_agreement(self.orders[k], self.orders[l]) for k, l in self.reference_pairs]
        flips = [self._flips(rule, k, l, holm) for k, l in self.reference_pairs]
        rows += self._per_reference_pair(rule, "kendall_tau", np.stack([tau for tau, _ in agreement]))
        rows += self._per_reference_pair(rule, "flips", np.stack([discordant for _, discordant in agreement]))
        if holm is not None:
            tally = np.array(
                [
                    [
                        sum(significant(r["p_holm"], self.confidence) for r in pair if r["language"] == group)
                        for group in self.groups
                    ]
                    for pair in flips
                ],
                dtype=np.float64,
            )
            rows += self._per_reference_pair(rule, "flips_significant", tally[:, :, None], interval=False)
        rows += self._rank_change(rule)
        rows += self._tie_groups(rule)
        rows += self._rank_sets(rule)
        rows += self._replicability(rule)
        return rows + [row for pair in flips for row in pair]

    def _row(self, rule: str, statistic: str, group: int, **values: Any) -> dict[str, Any]:
        return make_row(
            analysis="leaderboard",
            statistic=statistic,
            rule=rule,
            language=self.groups[group],
            subset="audited",
            n_items=self.n_items[group],
            n_clusters=self.n_clusters[group],
            **values,
        )

    def _per_output(self, rule: str, statistic: str, values: np.ndarray) -> list[dict[str, Any]]:
        """Rows per output, reference and group: the point value and its percentile interval."""
        low, high = percentile_interval(values[..., 1:], self.confidence)
        return [
            self._row(
                rule,
                statistic,
                g,
                output=output,
                reference=reference,
                estimate=values[o, k, g, 0],
                ci_low=low[o, k, g],
                ci_high=high[o, k, g],
            )
            for o, output in enumerate(self.outputs)
            for k, reference in enumerate(self.references)
            for g in range(len(self.groups))
        ]

    def _per_reference_pair(
        self, rule: str, statistic: str, values: np.ndarray, interval: bool = True
    ) -> list[dict[str, Any]]:
        """Rows per pair of references and group (output empty): the point value and, optionally, its interval."""
        low, high = percentile_interval(values[..., 1:], self.confidence) if interval else (None, None)
        rows = []
        for p, (k, l) in enumerate(self.reference_pairs):
            for g in range(len(self.groups)):
                bounds = {"ci_low": low[p, g], "ci_high": high[p, g]} if interval else {}
                rows.append(
                    self._row(
                        rule,
                        statistic,
                        g,
                        reference=self.references[k],
                        reference_2=self.references[l],
                        estimate=values[p, g, 0],
                        **bounds,
                    )
                )
        return rows

    def _rank_change(self, rule: str) -> list[dict[str, Any]]:
        """p_rank_change per output and for the whole ranking, for every pair of references."""
        ranks = self.ranks[..., 1:]
        defined = ~np.isnan(ranks)
        rows = []
        for k, l in self.reference_pairs:
            changed = ranks[:, k] != ranks[:, l]  # output, group, replicate
            both = defined[:, k] & defined[:, l]
            per_output = change_probability(changed, both)
            whole = change_probability(changed.any(axis=0), both.all(axis=0))
            labels = {"reference": self.references[k], "reference_2": self.references[l]}
            for g in range(len(self.groups)):
                rows.append(self._row(rule, "p_rank_change", g, estimate=whole[g], **labels))
            for o, output in enumerate(self.outputs):
                for g in range(len(self.groups)):
                    rows.append(self._row(rule, "p_rank_change", g, output=output, estimate=per_output[o, g], **labels))
        return rows

    def _tie_groups(self, rule: str) -> list[dict[str, Any]]:
        """tie_group per output under the primary reference: consecutive outputs whose rank intervals overlap.

        Outputs are taken in order of their point rank (config order among equal ranks); an output opens a new
        group when its rank interval's low end lies above the high end of every interval in the current group,
        so the groups partition the board into runs ("1–2: A, B; 3: C"). The estimate is the group's number,
        1 for the top group. An output without a rank has no group (null); one without a rank interval (fewer
        than half of the replicates rank it) is placed by its point rank alone.
        """
        ranks = self.ranks[:, 0]  # output, group, 1 + replicate: the primary reference
        low, high = percentile_interval(ranks[..., 1:], self.confidence)
        number = np.full((len(self.outputs), len(self.groups)), np.nan)
        for g in range(len(self.groups)):
            ranked = [o for o in np.argsort(ranks[:, g, 0], kind="stable") if not np.isnan(ranks[o, g, 0])]
            current, reach = 0, -np.inf
            for o in ranked:
                bottom = low[o, g] if not np.isnan(low[o, g]) else ranks[o, g, 0]
                top = high[o, g] if not np.isnan(high[o, g]) else ranks[o, g, 0]
                if current == 0 or bottom > reach:
                    current, reach = current + 1, top
                else:
                    reach = max(reach, top)
                number[o, g] = current
        return [
            self._row(rule, "tie_group", g, output=output, reference=self.references[0], estimate=number[o, g])
            for o, output in enumerate(self.outputs)
            for g in range(len(self.groups))
        ]

    def _rank_sets(self, rule: str) -> list[dict[str, Any]]:
        """Simultaneous rank sets per output, reference and group, and whether the output is a plausible best."""
        lower = np.full(self.scores.shape[:3], np.nan)  # output, reference, group
        upper = np.full(self.scores.shape[:3], np.nan)
        for k in range(len(self.references)):
            for g in range(len(self.groups)):
                lower[:, k, g], upper[:, k, g] = rank_sets(self.scores[:, k, g], self.confidence)
        best = np.where(np.isnan(lower), np.nan, lower == 1)  # the set contains rank 1
        rows = []
        for statistic, values in (
            ("rank_lower_simultaneous", lower),
            ("rank_upper_simultaneous", upper),
            ("best_set", best),
        ):
            rows += [
                self._row(rule, statistic, g, output=output, reference=reference, estimate=values[o, k, g])
                for o, output in enumerate(self.outputs)
                for k, reference in enumerate(self.references)
                for g in range(len(self.groups))
            ]
        return rows

    def _replicability(self, rule: str) -> list[dict[str, Any]]:
        """Partial conjunction over the references for every ordered pair of outputs: p^u per u, and k-hat.

        "A beats B under at least u of the K references": the per-reference p is the one-sided bootstrap p of
        "A is not better than B", counted from the pair orders (the sign of the paired difference in each
        replicate, so it is exact); rows for (A, B) and (B, A) of every pair, in combinations order.
        """
        replicates = self.scores.shape[-1] - 1
        ahead, behind = [], []  # per reference: pair, group
        for orders in self.orders:
            drawn = orders[..., 1:]
            defined = (drawn != UNDEFINED).sum(axis=-1)
            ahead.append(one_sided_p_value((drawn <= 0).sum(axis=-1), defined, replicates))  # UNDEFINED is above 0
            behind.append(one_sided_p_value(((drawn >= 0) & (drawn != UNDEFINED)).sum(axis=-1), defined, replicates))
        first, second = output_pairs(len(self.outputs))
        # the ordered pairs: every pair (i, j) then its reverse; p-values over the references on the last axis
        winners = np.ravel(np.column_stack([first, second]))
        losers = np.ravel(np.column_stack([second, first]))
        p_values = np.stack([np.stack(ahead, axis=-1), np.stack(behind, axis=-1)], axis=1).reshape(
            len(winners), len(self.groups), len(self.references)
        )
        combined = {method: partial_conjunction(p_values, method) for method in PARTIAL_CONJUNCTION}
        count = replicated_count(combined[PARTIAL_CONJUNCTION[0]], 1 - self.confidence)
        rows: list[dict[str, Any]] = []
        for method in PARTIAL_CONJUNCTION:
            rows += [
                self._row(
                    rule,
                    partial_statistic(method, u + 1),
                    g,
                    output=self.outputs[winner],
                    output_2=self.outputs[loser],
                    estimate=u + 1,
                    p_value=combined[method][p, g, u],
                )
                for p, (winner, loser) in enumerate(zip(winners, losers))
                for u in range(len(self.references))
                for g in range(len(self.groups))
            ]
        rows += [
            self._row(rule, "k_hat", g, output=self.outputs[winner], output_2=self.outputs[loser], estimate=count[p, g])
            for p, (winner, loser) in enumerate(zip(winners, losers))
            for g in range(len(self.groups))
        ]
        return rows

    def _flips(
        self, rule: str, k: int, l: int, holm: dict[tuple[str, ...], float | None] | None
    ) -> list[dict[str, Any]]:
        """One ``flip`` row per pair of outputs whose order under reference k is the reverse of under l.

        The row carries that pair's swing (margin under k − margin under l), its interval and p-value,
        and, given the interaction rows, its Holm-adjusted p.
        """
        flipped = self.orders[k][..., 0] * self.orders[l][..., 0] == -1  # pair, group (UNDEFINED·x is never -1)
        first, second = output_pairs(len(self.outputs))
        pair_index, group_index = np.nonzero(flipped)
        if not len(pair_index):
            return []
        i, j = first[pair_index], second[pair_index]
        scores = self.scores  # output, reference, group, 1 + replicate
        # the same arithmetic as the interaction's swing, so the values (and p-values) are identical
        swing = (scores[i, k, group_index] - scores[j, k, group_index]) - (
            scores[i, l, group_index] - scores[j, l, group_index]
        )
        low, high = percentile_interval(swing[:, 1:], self.confidence)
        p_values = bootstrap_p_value(swing[:, 1:])
        rows = []
        for cell in np.lexsort((group_index, pair_index)):  # pairs in combinations order, then groups
            output, output_2 = self.outputs[i[cell]], self.outputs[j[cell]]
            language = self.groups[group_index[cell]]
            key = (rule, language, output, output_2, self.references[k], self.references[l])
            rows.append(
                self._row(
                    rule,
                    "flip",
                    int(group_index[cell]),
                    output=output,
                    output_2=output_2,
                    reference=self.references[k],
                    reference_2=self.references[l],
                    estimate=swing[cell, 0],
                    ci_low=low[cell],
                    ci_high=high[cell],
                    p_value=p_values[cell],
                    p_holm=holm.get(key) if holm is not None else None,
                )
            )
        return rows
