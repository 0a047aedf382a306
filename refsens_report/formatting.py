"""Turn results rows into display text (docs/method.md section 6); the only place a number becomes a string."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

UNDEFINED = "—"  # an undefined estimate (null in results.json, empty in results.csv)


@dataclass(frozen=True)
class StatKind:
    """How a statistic prints and whether it is tested: declared by the analysis that owns it (its
    ``statistics``), carried in results.json's ``statistics``, read here by (analysis, statistic)."""

    decimals: int = 2  # F1 scores and differences print with 2; rates (% of items) with 1 (docs/method.md section 6)
    signed: bool = False  # a difference: printed with +/-, bold when its interval excludes zero
    tested: bool = False  # carries a bootstrap p-value
    style: str = "number"  # number; whole (ranks, counts: an integer unless fractional); share (0 to 1, printed
    # as a percentage); p (printed as a p-value)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


PLAIN = StatKind()  # a statistic no analysis declares: an F1-like score
STYLES = ("number", "whole", "share", "p")
# (analysis, statistic) -> its kind: filled by each Analysis as it is built (analyses/base.py) and by
# results.json's ``statistics`` (ResultsView.from_json), never written here
KINDS: dict[tuple[str, str], StatKind] = {}


def declare(analysis: str, kinds: Mapping[str, StatKind]) -> None:
    """Record an analysis's statistic kinds (a second declaration of the same kind is a no-op)."""
    for statistic, kind in kinds.items():
        if kind.style not in STYLES:
            raise ValueError(f"statistic {analysis}.{statistic}: style {kind.style!r} is not one of {STYLES}")
        KINDS[(analysis, statistic)] = kind


def adopt(statistics: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
    """Learn the kinds results.json carries (``statistics``) for statistics no analysis here declares: a
    results.json of an analysis this version lacks still prints as it was written."""
    for analysis, kinds in statistics.items():
        for statistic, kind in kinds.items():
            KINDS.setdefault((analysis, statistic), StatKind(**kind))


def kind_of(analysis: str, statistic: str) -> StatKind:
    """Return how a statistic prints (PLAIN when its analysis declares nothing for it)."""
    return KINDS.get((analysis, statistic), PLAIN)


def decimals_for(analysis: str, statistic: str) -> int:
    """Return how many decimals a statistic prints with: 1 for rates, 2 for F1 scores and differences."""
    return kind_of(analysis, statistic).decimals


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
    kind = kind_of(row["analysis"], row["statistic"])
    if kind.style == "share":
        share = None if row["estimate"] is None else 100 * row["estimate"]
        return Formatted(estimate=UNDEFINED if share is None else f"{number(share, 1)}%", interval="", bold=False)
    if kind.style == "p":
        return Formatted(estimate=p_value(row["estimate"]), interval="", bold=False)
    if kind.style == "whole":
        low, high = row["ci_low"], row["ci_high"]
        return Formatted(
            estimate=whole(row["estimate"]),
            interval="" if low is None or high is None else f"[{whole(low)}, {whole(high)}]",
            bold=False,
        )
    return Formatted(
        estimate=number(row["estimate"], kind.decimals, kind.signed),
        interval=interval(row["ci_low"], row["ci_high"], kind.decimals, kind.signed),
        bold=kind.signed and excludes_zero(row["ci_low"], row["ci_high"]),
    )
