"""Agreement per pair of coders: the annotator passes on the corpus, then each pair of references on the audited
items, one statistic each. What the chance-corrected agreement analyses share: which pairs, their estimates and
applicability, and their table, sentence and section (each analysis brings its statistic, words and caption).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import Analysis, AuditContext, Estimate, Section, Stat, section
from refsens_report.config import Config
from refsens_report.counts import ItemCounts
from refsens_report.figures import Figure
from refsens_report.formulas import Expr
from refsens_report.record import POOLED
from refsens_report.table import COUNT_SLICE, holds
from refsens_report.tables import Table, label, mark_repeats, n_cell, pooled_first, pooled_in_print, stat_cell
from refsens_report.view import ResultsView

NO_PAIR = "The record names neither two annotator passes nor two references, so there is no pair to compare."
PRINTED_POOLED = " The PDF prints each pair's pooled row; the site and the CSV every language."


def pairs(config: Config) -> list[tuple[str, str, str]]:
    """Return (subset, a, b): the annotator passes on the corpus, then each pair of references (audited)."""
    found = []
    if config.roles.has_annotators:
        found.append(("corpus", *config.roles.annotators[:2]))
    references = config.roles.references
    found += [("audited", first, second) for i, first in enumerate(references) for second in references[i + 1 :]]
    return found


_LENGTHS: weakref.WeakKeyDictionary[ItemCounts, np.ndarray] = weakref.WeakKeyDictionary()


def item_lengths(counts: ItemCounts) -> np.ndarray:
    """Return each item's length in characters: the furthest span end of any labelling on it (computed once per
    record; the spans the table does not hold too, ``SpanTable.unheld_ends``). Not its text's: a record read
    from columns (Parquet) carries no text, and it must give the same numbers as its JSONL."""
    if counts not in _LENGTHS:
        table = counts.table
        ends = np.zeros(table.n_items, dtype=np.int64) if table.unheld_ends is None else table.unheld_ends.copy()
        for first in range(0, len(table.item), COUNT_SLICE):  # a slice's ends in int64 at a time, not the record's
            np.maximum.at(ends, table.item[first : first + COUNT_SLICE], table.end[first : first + COUNT_SLICE])
        ends.flags.writeable = False  # shared by the analyses
        _LENGTHS[counts] = ends
    return _LENGTHS[counts]


def distinct(values: np.ndarray) -> np.ndarray:
    """Return ``np.unique(values)`` for a 1-D array: sorted, then the first of each run of equal values (numpy's
    own hashes the values first, a hundred times slower on large integer arrays)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``np.unique(values, return_inverse=True)`` for a 1-D array: a stable sort (quick on a few sorted
    runs laid end to end), then each value's run number."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    found = ordered[new]
    # each value's run number, in buffers already made (alpha's boundaries at a million items: 90 MB each)
    numbers = ordered if ordered.dtype == np.int64 else np.empty(len(values), dtype=np.int64)
    np.cumsum(new, out=numbers)
    numbers -= 1
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = numbers
    return found, inverse


_SPANS: weakref.WeakKeyDictionary[ItemCounts, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def distinct_spans(counts: ItemCounts, name: str) -> np.ndarray:
    """Return a labelling's distinct spans as rows (item, start, end, type), in that lexicographic order (computed
    once per labelling and record: every pair's statistic, and every pair the labelling is in, filters them).

    The four columns pack into one int64 key when they fit (item, then start and end below the largest end + 1,
    then type): sorting it is their lexicographic sort, and equal keys are equal rows. The rows are kept as int32
    when every value of the labelling's spans fits, else int64 (``table.holds``): 16 bytes a distinct span, not 32
    (the paired labellings' cache, held from before the estimates to the end of the audit: 0.2 GB at a million
    items as int64). Readers forming keys, offsets or sums from them cast first.
    """
    found = _SPANS.setdefault(counts, {})
    if name not in found:
        table = counts.table
        if name not in table.names:
            found[name] = np.zeros((0, 4), dtype=np.int64)
            return found[name]
        mine = np.flatnonzero(table.labelling == table.names.index(name))
        # the labelling's spans in the table's own types; the key is formed in int64 in place, one array at a time
        # (four int64 copies and each product's fresh array took 0.35 GB above the table at a million items)
        item, start, end, kind = (column[mine] for column in (table.item, table.start, table.end, table.type))
        if not len(mine):
            found[name] = np.zeros((0, 4), dtype=np.int64)
            return found[name]
        del mine
        narrow = np.int32 if all(holds(np.int32, column) for column in (item, start, end, kind)) else np.int64
        edge, kinds = int(end.max()) + 1, int(kind.max()) + 1
        if (
            min(int(start.min()), int(kind.min()), int(item.min())) >= 0
            and (int(item.max()) + 1) * edge * edge * kinds < 1 << 62
        ):
            key = item.astype(np.int64)  # ((item * edge + start) * edge + end) * kinds + kind
            del item
            for factor, column in ((edge, start), (edge, end), (kinds, kind)):
                key *= factor
                key += column
            del start, end, kind
            key = distinct(key)
            rows = np.empty((len(key), 4), dtype=narrow)
            key, rows[:, 3] = np.divmod(key, kinds)
            key, rows[:, 2] = np.divmod(key, edge)
            rows[:, 0], rows[:, 1] = np.divmod(key, edge)
        else:
            item, start, end, kind = (column.astype(np.int64) for column in (item, start, end, kind))
            rows = np.stack([item, start, end, kind], axis=1)[np.lexsort((kind, end, start, item))]
            rows = rows[np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)]].astype(narrow)
        found[name] = rows
    return found[name]


def cache_spans(context: AuditContext, cache: weakref.WeakKeyDictionary) -> None:
    """Cache what the pairs' statistics read of the record's spans (``Analysis.spans``): each paired labelling's
    distinct spans and the items' lengths, so that their estimates and columns read no span of the record.
    ``cache``: the statistic's own cache of per-pair values (``served``); the distinct spans are let go once
    every statistic's entry of every pair has been served."""
    counts = context.counts
    paired = [tuple(pair) for subset, *pair in pairs(context.config) if getattr(context.subsets, subset) is not None]
    _AWAITED.setdefault(counts, set()).update((id(cache), *pair) for pair in paired)
    for name in dict.fromkeys(name for pair in paired for name in pair):
        distinct_spans(counts, name)
    item_lengths(counts)


# per counts: the entries (cache, pair) whose columns are not yet all served, and each entry's columns served
_AWAITED: weakref.WeakKeyDictionary[ItemCounts, set[tuple[int, str, str]]] = weakref.WeakKeyDictionary()
_SERVED: weakref.WeakKeyDictionary[ItemCounts, dict[tuple[int, str, str], set[Any]]] = weakref.WeakKeyDictionary()


def served(cache: weakref.WeakKeyDictionary, counts: ItemCounts, pair: tuple[str, str], column: Any, of: int) -> None:
    """Note that ``column``, one of the ``of`` columns a pair's entry in ``cache`` (its per-item values, keyed by
    the counts, then the pair) serves, has been read; once all have been, drop the entry. ``ItemCounts`` keeps
    every column it reads from an analysis (its cache of declared and real columns) and never asks for it again,
    so the entry would only sit beside its own copies (at a million items, the two pair statistics' per-item
    counts: about 0.2 GB, from the bootstrap to the end of the audit). Once every entry ``cache_spans`` awaits
    is served, the distinct spans go too (0.1 GB at a million items). Asked again, an entry is made anew from
    the distinct spans, read again from the record: the same values, or ``ReleasedSpans``' error once the audit
    has freed the record's spans."""
    key = (id(cache), *pair)
    done = _SERVED.setdefault(counts, {}).setdefault(key, set())
    done.add(column)
    if len(done) >= of:
        cache.get(counts, {}).pop(pair, None)
        del _SERVED[counts][key]
        awaited = _AWAITED.get(counts, set())
        if key in awaited:
            awaited.discard(key)
            if not awaited:
                _SPANS.pop(counts, None)


def pair_estimates(
    context: AuditContext, key: str, statistic: str, expr: Callable[[str, str, np.ndarray], Expr]
) -> list[Estimate]:
    """Return one statistic per pair, ``expr(a, b, mask)``, on the corpus's and the audited items' streams (paired
    with agreement and the swap): a pair of annotators as output and reference, of references as both references."""
    found = []
    for subset, a, b in pairs(context.config):
        mask = getattr(context.subsets, subset)
        if mask is None:
            continue
        labels = {"output": a, "reference": b} if subset == "corpus" else {"reference": a, "reference_2": b}
        found.append(
            Estimate([Stat(analysis=key, statistic=statistic, expr=expr(a, b, mask), **labels)], mask, subset, subset)
        )
    return found


def pair_applicability(key: str) -> Callable[[AuditContext], dict[str, str | None]]:
    """Return an applicability saying the analysis needs two coders: two annotator passes or two references."""

    def applicability(context: AuditContext) -> dict[str, str | None]:
        return {key: None if pairs(context.config) else NO_PAIR}

    return applicability


def pair_name(row: Mapping[str, Any]) -> str:
    """Return a row's pair as the table and sentence name it: 'a – b'."""
    return f"{row['output']} – {row['reference']}" if row["output"] else f"{row['reference']} – {row['reference_2']}"


def pair_table(view: ResultsView, key: str, statistic: str, title: str, caption: str, column: str) -> Table:
    """Return the statistic per pair and language, with its interval (the PDF prints a long one's pooled rows)."""
    found = pooled_first(list(view.rows.select(key, statistic)), pair_name)
    rows = [
        [label(pair_name(row)), label(row["language"]), n_cell((index, row)), stat_cell((index, row))]
        for index, row in found
    ]
    printed = pooled_in_print(found)
    return Table(
        key=key,
        title=title,
        caption=caption + (PRINTED_POOLED if printed else ""),
        columns=("Pair", "Language", "Items", column),
        rows=mark_repeats(rows, 1),
        print_only=printed,
    )


def pair_sentences(view: ResultsView, key: str, statistic: str, lead: str) -> list[str]:
    """Return one sentence: ``lead`` and the pooled statistic of each pair."""
    pooled = [row for _, row in view.rows.select(key, statistic, language=POOLED)]
    if not pooled:
        return []
    said = "; ".join(f"{pair_name(row)} {formatting.format_row(row).text}" for row in pooled)
    return [f"{lead}: {said}."]


def pair_section(
    analysis: Analysis,
    view: ResultsView,
    drawn: Mapping[str, Figure],
    table: Callable[[ResultsView], Table],
    sentences: Callable[[ResultsView], list[str]],
) -> Section:
    """Return the section: its table and sentence, or why it does not apply."""
    applies = view.rows.has(analysis.key)
    return section(analysis, view, drawn, applies, tables=[table(view)] if applies else [], extra=sentences(view))
