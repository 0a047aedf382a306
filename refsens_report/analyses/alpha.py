"""Krippendorff's alpha on characters, nominal, "no span" a category (docs/method.md section 3).

Each character of an item is a unit; a labelling's value for it is the set of span types covering it ("no
span" when none does). Two labellings are two coders: the two annotator passes on the corpus, and each pair
of references on the audited items. Nominal alpha is computed from the coincidence matrix's diagonal and
margins, which are sums over items: per item and category c, ``alpha_agree`` counts the ordered pairs of
values that agree on c (twice the characters both coders put in c) and ``alpha_values`` the values in c. The
bootstrap re-weights these integer counts exactly, like the F1 counts.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from refsens_report.analyses.base import Analysis, AuditContext, Estimate, Section
from refsens_report.analyses.pairs import (
    cache_spans,
    distinct,
    distinct_inverse,
    distinct_spans,
    item_lengths,
    pair_applicability,
    pair_estimates,
    pair_section,
    pair_sentences,
    pair_table,
    pairs,
    served,
)
from refsens_report.config import Config
from refsens_report.counts import Column, ColumnKind, ItemCounts, smallest_unsigned
from refsens_report.figures import Figure
from refsens_report.formatting import StatKind
from refsens_report.formulas import Env, Expr
from refsens_report.tables import Table
from refsens_report.threads import threaded_map
from refsens_report.view import ResultsView

KEY = "alpha"
NO_SPAN = ""  # the category of a character no span covers (shown as "no span")
MAX_TYPE_BITS = 62  # a character's types as bits of an int64; beyond this many types, the lowest type code


# --- the per-item coincidence counts ---------------------------------------------------------------


def segments(spans: list[np.ndarray], lengths: np.ndarray, n_types: int) -> tuple[np.ndarray, ...]:
    """Return the characters of items 0, 1, ... (``lengths``: characters per item, 0 for an item not counted) as
    runs of constant value: each run's item, its length, and per labelling's ``spans`` (rows item, start, end, type
    as ``pairs.distinct_spans`` gives them, items numbered as ``lengths``) the set of span types covering it, as
    bits of an int64 (type code t is bit t; 0: no span). ``n_types``: the record's type names.

    The runs are cut at every span boundary of the labellings and at each item's start and end, so memory and
    work go with the spans, never with the characters: a character's value is its run's. A labelling's spans of
    one type cover a union of disjoint stretches of runs (``covered``); each stretch adds its type's bit where it
    starts and takes it away where it ends, so one running sum over the runs is every run's set of types.
    """
    counted = lengths > 0
    spans = [rows[counted[rows[:, 0]]] for rows in spans]  # a span on an item not counted adds no boundary
    items, starts, ends, types = (np.concatenate([rows[:, column] for rows in spans]) for column in range(4))
    labelling = np.repeat(np.arange(len(spans)), [len(rows) for rows in spans])
    if len(types) and n_types > MAX_TYPE_BITS:
        types = np.minimum(types, MAX_TYPE_BITS)  # documented: many types fold into the last bit
    width = int(lengths.max(initial=0)) + 1  # a boundary's key: item * width + position, sorted by item then position
    kept = np.flatnonzero(counted)
    n_spans = len(items)
    keys, where = distinct_inverse(
        np.concatenate([items * width + starts, items * width + ends, kept * width, kept * width + lengths[kept]]),
    )
    opens, closes = where[:n_spans], where[n_spans : 2 * n_spans]  # each span's boundaries among the keys
    run_item = keys[:-1] // width
    run_length = np.diff(keys)
    inside = run_item == keys[1:] // width  # a run ends at its item's next boundary (the last ends the item)
    values = []
    for code in range(len(spans)):
        ours = labelling == code
        first, last, kind = covered(opens[ours], closes[ours], types[ours])
        bits = np.left_shift(1, kind, dtype=np.int64)
        change = np.zeros(len(keys), dtype=np.int64)
        np.add.at(change, first, bits)
        np.add.at(change, last, -bits)
        values.append(np.cumsum(change[:-1])[inside])
    return (run_item[inside], run_length[inside], *values)


def covered(opens: np.ndarray, closes: np.ndarray, types: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the stretches [first, last) of runs that spans [opens, closes) of each type cover, disjoint within a
    type, and their type: the union of the type's spans. ``opens`` never decreases (the spans in start order).

    Taken type by type (a stable sort keeps each type's spans in start order: a radix sort on the type codes in
    their smallest type), a span begins a new stretch unless it opens before the furthest close so far; the
    stretch ends at that furthest close. Each type's runs are offset beyond the previous type's, so one running
    maximum serves every type."""
    order = np.argsort(types.astype(smallest_unsigned(types)), kind="stable")
    kind = types[order]
    offset = kind * (int(closes.max(initial=0)) + 1)
    opens, closes = opens[order] + offset, closes[order] + offset
    furthest = np.maximum.accumulate(closes)
    begins = np.flatnonzero(np.r_[True, opens[1:] > furthest[:-1]]) if len(opens) else np.zeros(0, dtype=np.int64)
    ends = np.r_[begins[1:] - 1, len(opens) - 1] if len(begins) else begins
    return opens[begins] - offset[begins], furthest[ends] - offset[begins], kind[begins]


def categories(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``np.unique(values, return_inverse=True)``: the distinct values (sorted) and each value's index
    among them. Few types make small values: then counted, not sorted."""
    if len(values) and 0 <= int(values.min()) and int(values.max()) < max(4 * len(values), 1 << 16):
        present = np.bincount(values) > 0
        return np.flatnonzero(present).astype(values.dtype), (np.cumsum(present) - 1)[values]
    return distinct_inverse(values)


def characters(cells: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Return the characters per cell (item × category) of ``size`` cells: a sum of run lengths, exact in float64
    (far below 2⁵³)."""
    return np.bincount(cells, weights=weights, minlength=size).astype(np.int64)


def category_name(bits: int, type_names: np.ndarray) -> str:
    """Return a category's name: its types joined by '+', or '' (no span)."""
    return "+".join(
        str(type_names[code]) for code in range(min(len(type_names), MAX_TYPE_BITS + 1)) if bits >> code & 1
    )


@dataclass(frozen=True)
class Coincidences:
    """Per item and category: ordered value pairs agreeing on the category, and values in it."""

    categories: tuple[str, ...]
    agree: np.ndarray  # item, category (an unsigned integer type holding them)
    values: np.ndarray  # item, category (the same type)


_FOUND: weakref.WeakKeyDictionary[ItemCounts, dict[tuple[str, str], Coincidences]] = weakref.WeakKeyDictionary()
BLOCK = 1 << 13  # items per block of a pair's coincidences: what a block's runs hold, not the record's


def coincidences(counts: ItemCounts, a: str, b: str) -> Coincidences:
    """Return the pair's coincidence counts per item (computed once per pair and record), on the items where
    both labellings are present (elsewhere zero)."""
    found = _FOUND.setdefault(counts, {})
    if (a, b) not in found:
        found[(a, b)] = counted_coincidences(counts, a, b)
    return found[(a, b)]


def counted_coincidences(counts: ItemCounts, a: str, b: str, block: int = BLOCK) -> Coincidences:
    """Count the pair's coincidences per item, ``block`` items at a time (uncached).

    The counts are sums over each item's runs, and an item's runs are its own, so blocks of items give every
    item's counts exactly: the runs, their values and the per-block sums live for one block (whole pairs took
    alpha's estimates 1.6 GB above their start at a million items, two pairs at a time on two threads). Each
    block's categories are its own; its counts are kept in the smallest unsigned type holding them until the
    record's categories (their union, sorted as ``categories`` sorts them) are known and the columns are laid
    out, in the widest of the blocks' types (the columns are read as ``COUNT_DTYPE``: the same integers)."""
    lengths = np.where(counts.has(a) & counts.has(b), item_lengths(counts), 0)
    spans = [distinct_spans(counts, name) for name in (a, b)]
    firsts = np.arange(0, counts.n_items, block)
    bounds = [np.searchsorted(rows[:, 0], np.r_[firsts, counts.n_items]) for rows in spans]
    n_types = len(counts.table.type_names)
    blocks = []
    for number, first in enumerate(firsts.tolist()):
        mine = lengths[first : first + block]
        ours = [
            rows[bound[number] : bound[number + 1]].astype(np.int64) - [first, 0, 0, 0]
            for rows, bound in zip(spans, bounds)
        ]
        item, length, value_a, value_b = segments(ours, mine, n_types)
        bits, code = categories(np.concatenate([value_a, value_b, [0]]))
        code_a, code_b = code[: len(value_a)], code[len(value_a) : 2 * len(value_a)]
        n_categories = len(bits)
        cell_a, cell_b = item * n_categories + code_a, item * n_categories + code_b
        size = len(mine) * n_categories
        agreeing = code_a == code_b
        agree = 2 * characters(cell_a[agreeing], length[agreeing], size)
        values = characters(cell_a, length, size) + characters(cell_b, length, size)
        kind = smallest_unsigned(values)  # agree ≤ values: both coders' characters in c count in each
        blocks.append((first, bits, agree.astype(kind), values.astype(kind)))
    bits = distinct(np.concatenate([np.zeros(1, dtype=np.int64), *(found for _, found, _, _ in blocks)]))
    kind = np.result_type(np.uint8, *(block_values.dtype for _, _, _, block_values in blocks))  # the widest block's
    agree = np.zeros((counts.n_items, len(bits)), dtype=kind)
    values = np.zeros((counts.n_items, len(bits)), dtype=kind)
    for first, found, block_agree, block_values in blocks:
        columns = np.searchsorted(bits, found)
        rows = slice(first, first + len(block_agree) // len(found))
        agree[rows, columns] = block_agree.reshape(-1, len(found))
        values[rows, columns] = block_values.reshape(-1, len(found))
    names = tuple(category_name(int(one), counts.table.type_names) for one in bits)
    return Coincidences(names, agree, values)


def _column(counts: ItemCounts, column: Column, field: str) -> np.ndarray:
    """Return one column of the pair's coincidences (a copy: the pair's counts are let go once every column of
    theirs has been read, ``pairs.served``)."""
    found = coincidences(counts, column.a, column.b)
    values = getattr(found, field)[:, found.categories.index(column.c)].copy()
    served(_FOUND, counts, (column.a, column.b), (field, column.c), 2 * len(found.categories))
    return values


COLUMNS = (
    ColumnKind("alpha_agree", lambda counts, column: _column(counts, column, "agree")),
    ColumnKind("alpha_values", lambda counts, column: _column(counts, column, "values")),
)


@dataclass(frozen=True)
class Alpha(Expr):
    """Nominal Krippendorff's alpha from summed coincidences: with n values, A = Σ_c o_cc and S = Σ_c n_c (n_c − 1),
    alpha = ((n − 1) A − S) / (n (n − 1) − S); undefined when every value falls in one category."""

    a: str
    b: str
    categories: tuple[str, ...]

    def columns(self) -> tuple[Column, ...]:
        return tuple(
            Column(kind, a=self.a, b=self.b, c=category)
            for category in self.categories
            for kind in ("alpha_agree", "alpha_values")
        )

    def evaluate(self, env: Env) -> np.ndarray:
        agree = sum(env.sum(Column("alpha_agree", a=self.a, b=self.b, c=c)) for c in self.categories)
        values = [env.sum(Column("alpha_values", a=self.a, b=self.b, c=c)) for c in self.categories]
        n = sum(values)
        spread = sum(value * (value - 1) for value in values)
        denominator = n * (n - 1) - spread
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, ((n - 1) * agree - spread) / denominator, np.nan)


# --- the audit -------------------------------------------------------------------------------------


def estimates(context: AuditContext) -> list[Estimate]:
    """Alpha per pair, on the corpus's and the audited items' streams (paired with agreement and the swap).

    The pairs' coincidences are counted first, on threads (``threaded_map``); what they share (each labelling's
    distinct spans, the item lengths) is computed and cached before, once (``pairs.cache_spans``, which the audit
    has run already, before it freed the record's spans)."""
    counts = context.counts
    named = list(
        dict.fromkeys((a, b) for subset, a, b in pairs(context.config) if getattr(context.subsets, subset) is not None)
    )
    cache_spans(context, _FOUND)
    threaded_map(lambda pair: coincidences(counts, *pair), named)
    return pair_estimates(
        context, KEY, "alpha", lambda a, b, mask: Alpha(a, b, coincidences(context.counts, a, b).categories)
    )


def count_columns(config: Config) -> int:
    """Two columns per category and pair; the categories are the labels and their overlaps (bound: labels + 2)."""
    labels = getattr(config.record_options, "labels", None)
    return 2 * len(pairs(config)) * ((len(labels) if isinstance(labels, (list, tuple)) else 6) + 2)


# --- the report ------------------------------------------------------------------------------------


def alpha_table(view: ResultsView) -> Table:
    """Alpha per pair and language, with its interval."""
    return pair_table(
        view,
        KEY,
        "alpha",
        "Krippendorff's alpha",
        "Nominal Krippendorff's alpha on characters, each character's value the set of span types "
        "covering it (no span a value of its own), between the annotator passes (corpus) and between "
        "each pair of references (audited items), with its bootstrap interval. 1 is perfect agreement, "
        "0 what chance gives.",
        "Alpha",
    )


def sentences(view: ResultsView) -> list[str]:
    """One sentence: the pooled alpha of each pair."""
    return pair_sentences(view, KEY, "alpha", "Krippendorff's alpha on characters (nominal, pooled)")


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    return pair_section(ANALYSIS, view, drawn, alpha_table, sentences)


ANALYSIS = Analysis(
    key=KEY,
    title="Krippendorff's alpha",
    question="How far above chance do the annotator passes, and the references, agree character by character?",
    methods="""- **Krippendorff's alpha** (corpus: the annotator passes; audited: each pair of references): nominal
  alpha on characters, a character's value the set of span types covering it, "no span" a value; from the
  coincidence counts summed over items, alpha = ((n − 1) Σ_c o_cc − Σ_c n_c (n_c − 1)) / (n (n − 1) −
  Σ_c n_c (n_c − 1)), n the values; the bootstrap re-weights the per-item counts.""",
    spans=lambda context: cache_spans(context, _FOUND),
    estimates=estimates,
    applicability=pair_applicability(KEY),
    section=_section,
    statistics={"alpha": StatKind(decimals=3)},
    columns=COLUMNS,
    count_columns=count_columns,
)
