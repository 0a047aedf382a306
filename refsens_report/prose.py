"""Sentences' building blocks: a results row as printed inside a sentence, tallies, pairs of labellings."""

from __future__ import annotations

import re

from refsens_report import formatting
from refsens_report.formatting import format_row
from refsens_report.view import ResultsView, Row


def said(row: Row | None) -> str:
    """Return a statistic as printed: estimate and interval."""
    return format_row(row).text if row else formatting.UNDEFINED


def said_percent(row: Row | None) -> str:
    """Return a rate as printed, with '%' after the estimate: '84.6% [83.1, 86.0]'."""
    if row is None:
        return formatting.UNDEFINED
    printed = format_row(row)
    return f"{printed.estimate}% {printed.interval}".strip()


def includes_zero(row: Row) -> bool:
    """Return whether a row's interval includes zero (or is undefined)."""
    return not formatting.excludes_zero(row["ci_low"], row["ci_high"])


def count_phrase(count: int, total: int, singular: str, plural: str | None = None) -> str:
    """Return 'k of n nouns' (formatting.count_of: separators, the noun agreeing with n)."""
    return formatting.count_of(count, total, singular, plural)


def pair_label(row: Row) -> str:
    """Return a row's pair of references as 'first vs second'."""
    return f"{row['reference']} vs {row['reference_2']}"


MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~&!])")


def markdown_text(text: str) -> str:
    """Return a sentence (names from the record included) as Markdown that prints it literally: no markup, no
    HTML, on one line."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def where_pooled(view: ResultsView, row: Row) -> str:
    """Return '(pooled over 6 languages, audited items: 2,634)' for a row (the metadata's sentences)."""
    languages = len(view.languages) - 1
    over = f"pooled over {languages} languages" if languages > 1 else "pooled"
    return f"({over}, {row['subset']} items: {formatting.count(row['n_items'])})"
