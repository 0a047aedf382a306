"""Turn results rows into display text (docs/method.md section 6); the only place a number becomes a string."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

UNDEFINED = "—"  # an undefined estimate (null in results.json, empty in results.csv)

# Percentages of items print with 1 decimal (docs/method.md section 6); skew is a difference of rates.
RATE_STATISTICS = {
    ("agreement", "identical"),
    ("agreement", "type_agreement"),
    ("agreement", "third_pass"),
    ("agreement", "silent"),
    ("agreement", "default_to_first"),
    ("neutrality", "rate"),
    ("neutrality", "copied"),
    ("neutrality", "skew"),
    ("aggregation", "skew"),  # the skew a what-if reference would have had
}
# Differences print with a sign, and an interval that excludes zero is bold; for a score or a rate an
# interval excluding zero says nothing, so only differences are ever bold. A leaderboard "flip" row is a swing.
DIFFERENCE_STATISTICS = {"skew", "delta", "margin", "swing", "flip"}
# The leaderboard's own statistics (docs/leaderboard.md): ranks can be fractional (ties), flips are counts.
LEADERBOARD_DECIMALS = {"rank": 1, "flips": 1, "flips_significant": 0, "kendall_tau": 2, "tie_group": 0}
# Ranks and flips are whole numbers except at ties (an average rank) and interpolated interval ends: each
# value prints as an integer when it is one, with one decimal otherwise ("3 [1, 6]", "2.5 [1, 4]").
WHOLE_STATISTICS = {("leaderboard", "rank"), ("leaderboard", "flips"), ("aggregation", "flips")}
# rank sets' ends, best-set membership (1 or 0) and k-hat are counts
WHOLE_STATISTICS |= {("leaderboard", statistic) for statistic in ("rank_lower_simultaneous", "rank_upper_simultaneous",
                                                                  "best_set", "k_hat")}  # fmt: skip
SHARE_STATISTICS = {("leaderboard", "p_rank_change")}  # a share of replicates (0 to 1), printed as a percentage
# a bound on Holm p and the skew's permutation p, printed as p-values are
P_LIKE_STATISTICS = {("leaderboard", "holm_floor"), ("neutrality", "skew_permutation_p")}


def decimals_for(analysis: str, statistic: str) -> int:
    """Return how many decimals a statistic prints with: 1 for rates, 2 for F1 scores and differences."""
    if analysis == "leaderboard" and statistic in LEADERBOARD_DECIMALS:
        return LEADERBOARD_DECIMALS[statistic]
    return 1 if (analysis, statistic) in RATE_STATISTICS else 2


def is_difference(statistic: str) -> bool:
    """Return whether a statistic is a signed difference (printed with +/-, bold when its interval excludes 0)."""
    return statistic in DIFFERENCE_STATISTICS


def number(value: float | None, decimals: int, signed: bool = False) -> str:
    """Return a number with fixed decimals; '+' on positive differences; '—' when undefined."""
    if value is None:
        return UNDEFINED
    if round(value, decimals) == 0:
        value = 0.0  # -0.00 after rounding would read as a real negative
    return f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"


def interval(low: float | None, high: float | None, decimals: int, signed: bool = False) -> str:
    """Return '[low, high]', or '' when the interval is undefined."""
    if low is None or high is None:
        return ""
    return f"[{number(low, decimals, signed)}, {number(high, decimals, signed)}]"


def whole(value: float | None) -> str:
    """Return a rank or a count: an integer when it is one, one decimal otherwise, '—' when undefined."""
    if value is None:
        return UNDEFINED
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def excludes_zero(low: float | None, high: float | None) -> bool:
    """Return whether an interval lies wholly on one side of zero."""
    return low is not None and high is not None and (low > 0 or high < 0)


def p_value(value: float | None) -> str:
    """Return a p-value with 2 decimals; below 0.01 as '<0.01' (docs/method.md section 6)."""
    if value is None:
        return UNDEFINED
    return "<0.01" if value < 0.01 else f"{value:.2f}"


def count(value: int | None) -> str:
    """Return an item count with thousands separators."""
    return UNDEFINED if value is None else f"{value:,}"


def noun(value: float, singular: str, plural: str | None = None) -> str:
    """Return the noun a count takes: singular for exactly 1, else the plural (default: singular + 's')."""
    return singular if value == 1 else (plural or singular + "s")


def verb(value: float, singular: str, plural: str) -> str:
    """Return the verb agreeing with a count: 'is' for 1 flip, 'are' for 0 or 2 flips."""
    return singular if value == 1 else plural


def verb_of(value: float, total: float, singular: str, plural: str) -> str:
    """Return the verb of 'k of n nouns': it agrees with k, and with the noun when k is 0 ('1 of 15 swings has',
    '0 of 1 swing has', '0 of 15 swings have')."""
    return verb(total if value == 0 else value, singular, plural)


def counted(value: int, singular: str, plural: str | None = None) -> str:
    """Return a count with its noun, thousands separators and plural: '1 flip', '2 flips', '3,453 items'."""
    return f"{count(value)} {noun(value, singular, plural)}"


def count_of(value: int, total: int, singular: str, plural: str | None = None) -> str:
    """Return 'k of n nouns' (the noun agrees with n: '1 of 15 pairs', '1 of 1 pair')."""
    return f"{count(value)} of {counted(total, singular, plural)}"


def signed_count(value: int) -> str:
    """Return a change in a count: '+2', '-1', or '0'."""
    return f"{value:+d}" if value else "0"


def count_short(value: int) -> str:
    """Return a count in at most four characters, for a heat-map cell: 950, 6.6k, 17k, 123k, 1.2M."""
    for limit, unit in ((1_000_000, "M"), (1_000, "k")):
        if value >= limit:
            scaled = value / limit
            return f"{scaled:.1f}{unit}" if round(scaled, 1) < 10 else f"{scaled:.0f}{unit}"
    return f"{value}"


@dataclass(frozen=True)
class Formatted:
    """One statistic as printed: the estimate, its interval (may be ''), and whether it is bold."""

    estimate: str
    interval: str
    bold: bool

    @property
    def text(self) -> str:
        """Return estimate and interval as one string, as the tables show them."""
        return f"{self.estimate} {self.interval}" if self.interval else self.estimate


def format_row(row: Mapping[str, Any]) -> Formatted:
    """Return a results row's estimate and interval as printed in every table and sentence."""
    kind = (row["analysis"], row["statistic"])
    if kind in SHARE_STATISTICS:
        share = None if row["estimate"] is None else 100 * row["estimate"]
        return Formatted(estimate=UNDEFINED if share is None else f"{number(share, 1)}%", interval="", bold=False)
    if kind in P_LIKE_STATISTICS:
        return Formatted(estimate=p_value(row["estimate"]), interval="", bold=False)
    if kind in WHOLE_STATISTICS:
        low, high = row["ci_low"], row["ci_high"]
        return Formatted(estimate=whole(row["estimate"]),
                         interval="" if low is None or high is None else f"[{whole(low)}, {whole(high)}]", bold=False)
    decimals = decimals_for(row["analysis"], row["statistic"])
    signed = is_difference(row["statistic"])
    return Formatted(
        estimate=number(row["estimate"], decimals, signed),
        interval=interval(row["ci_low"], row["ci_high"], decimals, signed),
        bold=signed and excludes_zero(row["ci_low"], row["ci_high"]),
    )
