"""Statistics as small expressions over summed per-item counts.

An expression names the count columns it needs (``columns``) and computes its value from their sums
(``evaluate``), vectorised over languages and bootstrap replicates at once. The same code gives the point
estimate (replicate 0) and every replicate, so they cannot disagree. Undefined values are NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from refsens_report.counts import SET_RULE, Column


class Env:
    """Column sums of one item set (groups x replicates), with each expression evaluated once."""

    def __init__(self, sums: Callable[[Column], np.ndarray], n: np.ndarray):
        self.sum = sums
        self.n = n  # items per group, shaped to broadcast against the sums
        self._values: dict[Expr, np.ndarray] = {}

    def value(self, expr: Expr) -> np.ndarray:
        """Return the expression's values, computing them on first use (F1 terms recur in many rows)."""
        if expr not in self._values:
            self._values[expr] = expr.evaluate(self)
        return self._values[expr]

    def forget(self) -> None:
        """Drop memoised values (bounds memory when many statistics are evaluated in blocks)."""
        self._values.clear()


class Expr:
    """A statistic computed from column sums."""

    def columns(self) -> tuple[Column, ...]:
        raise NotImplementedError

    def evaluate(self, env: Env) -> np.ndarray:
        raise NotImplementedError

    def population(self) -> Column | None:
        """Return the column whose positive items form the sub-population the statistic is a ratio over.

        None: the statistic is computed on every item of its item set (its ``n_items`` is the set's size).
        """
        return None

    def __sub__(self, other: Expr) -> Expr:
        return Difference(self, other)


@dataclass(frozen=True)
class F1(Expr):
    """Micro F1 of ``output`` against ``reference``: 100 · 2TP / (2TP + FP + FN) = 100 · 2TP / (|O| + |R|).

    With a ``type``: the F1 of that span type alone (its spans' TP, |O| and |R|; strict or overlap rule).
    """

    rule: str
    output: str
    reference: str
    type: str = ""

    def columns(self) -> tuple[Column, ...]:
        sizes = SET_RULE[self.rule]  # overlap's |O| and |R| are the strict ones: one column serves both rules
        return (
            Column("tp", self.rule, self.output, self.reference, type=self.type),
            Column("size", sizes, self.output, type=self.type),
            Column("size", sizes, self.reference, type=self.type),
        )

    def evaluate(self, env: Env) -> np.ndarray:
        tp, size_output, size_reference = (env.sum(column) for column in self.columns())
        tp_fp_fn = size_output + size_reference  # 2TP + FP + FN
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tp_fp_fn > 0, 100 * 2 * tp / tp_fp_fn, np.nan)


@dataclass(frozen=True)
class Share(Expr):
    """Percentage of items on which a 0/1 column is 1: 100 · Σ column / n."""

    column: Column

    def columns(self) -> tuple[Column, ...]:
        return (self.column,)

    def evaluate(self, env: Env) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(env.n > 0, 100 * env.sum(self.column) / env.n, np.nan)


@dataclass(frozen=True)
class Ratio(Expr):
    """100 · Σ numerator / Σ denominator, undefined when the denominator sums to 0.

    Its items are those where the denominator is positive (items with A ≠ B and no third pass for
    default_to_first, items with a boundary-matched span for type_agreement): its ``n_items``.
    """

    numerator: Column
    denominator: Column

    def population(self) -> Column | None:
        return self.denominator

    def columns(self) -> tuple[Column, ...]:
        return (self.numerator, self.denominator)

    def evaluate(self, env: Env) -> np.ndarray:
        numerator, denominator = env.sum(self.numerator), env.sum(self.denominator)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, 100 * numerator / denominator, np.nan)


@dataclass(frozen=True)
class Difference(Expr):
    """left − right, computed inside every replicate (paired)."""

    left: Expr
    right: Expr

    def columns(self) -> tuple[Column, ...]:
        return self.left.columns() + self.right.columns()

    def evaluate(self, env: Env) -> np.ndarray:
        return env.value(self.left) - env.value(self.right)


@dataclass(frozen=True)
class Spread(Expr):
    """max − min of the defined terms; undefined when no term is defined."""

    terms: tuple[Expr, ...]

    def columns(self) -> tuple[Column, ...]:
        return tuple(column for term in self.terms for column in term.columns())

    def evaluate(self, env: Env) -> np.ndarray:
        stacked = np.stack([env.value(term) for term in self.terms])
        defined = ~np.isnan(stacked)
        highest = np.where(defined, stacked, -np.inf).max(axis=0)
        lowest = np.where(defined, stacked, np.inf).min(axis=0)
        return np.where(defined.any(axis=0), highest - lowest, np.nan)
