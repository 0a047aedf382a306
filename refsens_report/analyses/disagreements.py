"""Disagreements: the items on which two golds differ, listed one by one, so a team can fix the gold.

Two listings, each a pair of labellings compared item by item on strict span sets:

- the references: the primary reference against each alternative, on the audited items (the swap's items);
- the annotators: A against B, on the corpus, where an adjudication pass would look first.

Each line is one item on which the two differ: its id, language, text (unless ``[report] show_text = false``),
both span sets, the spans only in one of them, and what scoring each output against the second instead of
the first changes in its TP, FP and FN there. Lines are sorted by impact: the TP, FP and FN counts that
change, summed over the outputs (then by the number of differing spans, the pair, language and id). The
listings are files beside results.json (``disagreements.jsonl``/``.csv``, ``annotator-disagreements.*``),
never inside it; results.json carries their counts (``summary``), and the site renders a page of the lines
with the most impact and the browser's data (``pages``: ``DisagreementsPage``, ``browser.BrowserListing``).

Lines are computed from arrays (the per-item counts and the span table), never item by item, and each file
is written as one join of text pieces, each distinct piece made once: a million-item record lists in seconds.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from refsens_report import __version__, browser, formatting
from refsens_report.analyses.base import DIFFERENCES, Analysis, AuditContext, Partitioned, Section
from refsens_report.config import Config
from refsens_report.figures import Figure
from refsens_report.record import POOLED
from refsens_report.results import OnUse
from refsens_report.spill import Runs
from refsens_report.subsets import Subsets
from refsens_report.tables import FORMULA_STARTS, Table, count_cell, label, mark_repeats, spreadsheet_safe
from refsens_report.view import ResultsView

KEY = "disagreements"
# the listing files' stems, by which pair of labellings they compare
REFERENCES_FILE = "disagreements"
ANNOTATORS_FILE = "annotator-disagreements"
PAGE_LINES = 200  # lines a page shows per pair of labellings: those with the most impact; the files hold all
SPANS_OUTPUTS = ',"spans_outputs":{'  # where a JSON line's outputs' spans begin (PartitionedListings cuts there)


@dataclass(frozen=True)
class Comparison:
    """Two labellings compared item by item on an item set, and the file stem their listing is written to."""

    kind: str  # "references" or "annotators"
    first: str
    second: str
    subset: str  # "audited" or "corpus"
    stem: str


def comparisons(context: AuditContext) -> list[Comparison]:
    """Return the pairs compared: the primary reference against each alternative, then annotator A against B."""
    return comparisons_of(context.config, context.subsets)


def comparisons_of(config: Config, subsets: Subsets) -> list[Comparison]:
    """``comparisons`` of a record's config and item sets."""
    roles = config.roles
    found = []
    if subsets.audited is not None and subsets.audited.any():
        found += [
            Comparison("references", roles.primary, alternative, "audited", REFERENCES_FILE)
            for alternative in roles.references[1:]
        ]
    if roles.has_annotators and subsets.corpus is not None and subsets.corpus.any():
        found.append(Comparison("annotators", roles.annotators[0], roles.annotators[1], "corpus", ANNOTATORS_FILE))
    return found


def _mask(context: AuditContext, comparison: Comparison) -> np.ndarray:
    return context.subsets.audited if comparison.subset == "audited" else context.subsets.corpus


def scored_outputs(context: AuditContext, comparison: Comparison) -> list[str]:
    """Return the outputs whose counts a line reports: every output but the two labellings compared."""
    return _scored(context.config, comparison)


def _scored(config: Config, comparison: Comparison) -> list[str]:
    return [output for output in config.roles.outputs if output not in (comparison.first, comparison.second)]


def listing_outputs(config: Config, chosen: Sequence[Comparison]) -> tuple[str, ...]:
    """Return the outputs a listing of these comparisons reports (its CSV's change columns), each once."""
    return tuple(dict.fromkeys(output for comparison in chosen for output in _scored(config, comparison)))


@dataclass(frozen=True, eq=False)
class SpanLists:
    """One of a line's four span lists for each of a pair's lines: its spans as JSON text, each distinct span once.

    ``texts``: each distinct (start, end, type) as ``[start,end,"type"]``; ``index``: the spans of every line,
    line after line, as positions in ``texts``; ``counts``: how many spans each line's list has.
    """

    texts: list[str]
    index: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True, eq=False)
class Pair:
    """One comparison's lines before sorting, as arrays: the items on which its two strict span sets differ.

    Per item (record order): how many spans only each labelling has, the four span lists, and per listed
    output (``outputs``, the rows of ``scored``, ``tp`` and ``fn``) whether the line lists it (the output is
    present on the item) and the change in its TP and FN when scored against the second labelling instead of
    the first (FP moves against TP).
    """

    comparison: Comparison
    outputs: tuple[str, ...]
    items: np.ndarray
    only_first: np.ndarray
    only_second: np.ndarray
    spans: Mapping[str, SpanLists]  # spans_first, spans_second, only_first, only_second
    scored: np.ndarray
    tp: np.ndarray
    fn: np.ndarray
    impact: np.ndarray  # |ΔTP| + |ΔFP| + |ΔFN| summed over the outputs listed

    @property
    def n_lines(self) -> int:
        return len(self.items)


def _json(value: str) -> str:
    return orjson.dumps(value).decode("utf-8")


def _span_lists(counts: Any, name: str, differing: np.ndarray, elsewhere: np.ndarray) -> tuple[SpanLists, SpanLists]:
    """Return, per differing item, a labelling's strict span set and its spans ``elsewhere`` (a mark per strict id)
    lacks, each sorted as Python sorts the (start, end, type) tuples.

    Strict ids are ordered by (item, start, end, type code) and type codes follow the sorted type names
    (``ItemCounts.type_code`` relies on it too), so an item's ids in order are its set sorted, each span once.
    """
    ids = counts.ids("strict", name)
    item_of = counts.item_of("strict", ids)
    chosen = differing[item_of]
    ids, item_of = ids[chosen], item_of[chosen]
    (start, end, code), index = _distinct(counts._strict_start[ids], counts._strict_end[ids], counts._strict_type[ids])
    type_json = [_json(str(type_name)) for type_name in counts.type_names]
    texts = [f"[{s},{e},{type_json[c]}]" for s, e, c in zip(start.tolist(), end.tolist(), code.tolist())]
    alone = ~elsewhere[ids]
    items = np.flatnonzero(differing)
    return (
        SpanLists(texts, index, _per_item(item_of, items, len(differing))),
        SpanLists(texts, index[alone], _per_item(item_of[alone], items, len(differing))),
    )


def _distinct(start: np.ndarray, end: np.ndarray, code: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Return (the distinct (start, end, type code) as three arrays, each span's position among them)."""
    if not len(start):
        return (start, end, code), np.zeros(0, dtype=np.int64)
    radix_end, radix_code = int(end.max()) + 1, int(code.max()) + 1
    if (int(start.max()) + 1) * radix_end * radix_code < 2**62:  # one integer key per span
        key = (start.astype(np.int64) * radix_end + end) * radix_code + code
        distinct, index = _distinct_values(key)
        return (distinct // (radix_end * radix_code), distinct // radix_code % radix_end, distinct % radix_code), index
    rows, index = np.unique(np.stack([start, end, code], axis=1), axis=0, return_inverse=True)
    return (rows[:, 0], rows[:, 1], rows[:, 2]), index.reshape(-1)


def _per_item(item_of: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray:
    """Return how many entries of ``item_of`` each of ``items`` has."""
    return np.bincount(item_of, minlength=n_items)[items]


def differing_of(context: AuditContext, comparison: Comparison) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return a comparison's differing items (a mask over the record) and, on each of them, how many strict spans
    only the first labelling has and only the second: what the summary counts, without a ``Pair``'s columns."""
    counts, first, second = context.counts, comparison.first, comparison.second
    differing = _mask(context, comparison) & counts.has(first) & counts.has(second) & ~counts.equal(first, second)
    items = np.flatnonzero(differing)
    shared = counts.tp("strict", first, second)[items].astype(np.int64)  # the counts are narrow: differences in int64
    return differing, counts.size("strict", first)[items] - shared, counts.size("strict", second)[items] - shared


def pair_of(context: AuditContext, comparison: Comparison) -> Pair:
    """Return the comparison's lines, unsorted: one per item of its item set on which the strict sets differ."""
    counts, first, second = context.counts, comparison.first, comparison.second
    differing, only_first, only_second = differing_of(context, comparison)
    items = np.flatnonzero(differing)
    size_first, size_second = (counts.size("strict", name)[items].astype(np.int64) for name in (first, second))
    outputs = tuple(dict.fromkeys(scored_outputs(context, comparison)))
    scored = np.zeros((len(outputs), len(items)), dtype=bool)
    tp = np.zeros((len(outputs), len(items)), dtype=np.int64)
    fn = np.zeros((len(outputs), len(items)), dtype=np.int64)
    impact = np.zeros(len(items), dtype=np.int64)  # |ΔTP| + |ΔFP| + |ΔFN| summed over the outputs listed
    for row, output in enumerate(outputs):
        # per item: the output's counts against the second labelling minus those against the first (strict)
        tp_first, tp_second = (counts.tp("strict", output, name)[items].astype(np.int64) for name in (first, second))
        scored[row] = counts.has(output)[items]
        tp[row] = tp_second - tp_first
        fn[row] = (size_second - tp_second) - (size_first - tp_first)
        impact += np.where(scored[row], 2 * np.abs(tp[row]) + np.abs(fn[row]), 0)  # |ΔFP| = |ΔTP|
    return Pair(
        comparison=comparison,
        outputs=outputs,
        items=items,
        only_first=only_first,
        only_second=only_second,
        spans=OnUse(partial(pair_spans, counts, first, second, differing)),
        scored=scored,
        tp=tp,
        fn=fn,
        impact=impact,
    )


def pair_spans(counts: Any, first: str, second: str, differing: np.ndarray) -> dict[str, SpanLists]:
    """Return a pair's four span lists (``SPAN_KEYS``). A ``Pair`` makes them when first read (``OnUse``): the
    files read them all, the summary none (at 200,000 items about half of what the summary's pairs cost)."""
    in_first, in_second = (np.zeros(len(counts._strict_start), dtype=bool) for _ in range(2))
    in_first[counts.ids("strict", first)] = True
    in_second[counts.ids("strict", second)] = True
    spans_first, only_first = _span_lists(counts, first, differing, in_second)
    spans_second, only_second = _span_lists(counts, second, differing, in_first)
    return dict(zip(SPAN_KEYS, (spans_first, spans_second, only_first, only_second)))


def python_order(names: Sequence[str]) -> np.ndarray:
    """Return each name's rank in Python's string order (code points); equal names rank in their order here."""
    rank = np.empty(len(names), dtype=np.int64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    return rank


@dataclass(frozen=True, eq=False)
class Listing:
    """One listing file: the comparisons it covers and their lines, one per pair and item on which they differ.

    Lines are laid pair after pair, each pair's in record order (``pair``: which pair); ``order`` sorts them by
    impact. The items listed (record order) have their ``ids`` and ``texts`` (None where withheld
    or absent; None as a whole when no listed item has text) and ``language`` (code into ``languages``);
    ``entry`` gives each line's item among them.
    """

    stem: str
    kind: str
    comparisons: tuple[Comparison, ...]
    outputs: tuple[str, ...]  # the CSV's change columns
    pairs: tuple[Pair, ...]  # one per comparison
    pair: np.ndarray
    ids: list[str]
    texts: list[str | None] | None
    entry: np.ndarray
    language: np.ndarray
    languages: tuple[str, ...]
    order: np.ndarray

    @property
    def n_lines(self) -> int:
        return len(self.pair)


def listing_of(context: AuditContext, stem: str, kind: str, chosen: Sequence[Comparison]) -> Listing:
    """Return the listing of some comparisons, its lines in order: most impact first, then most differing
    spans, the pair, language and id (languages and ids as Python compares strings; a stable sort, so lines
    equal on all five keep their order: pair by pair, items in record order)."""
    table = context.record.table
    pairs = tuple(pair_of(context, comparison) for comparison in chosen)
    items = np.concatenate([pair.items for pair in pairs])
    number = np.repeat(np.arange(len(pairs)), [pair.n_lines for pair in pairs])
    impact = np.concatenate([pair.impact for pair in pairs])
    spans = np.concatenate([pair.only_first + pair.only_second for pair in pairs])
    listed, entry = np.unique(items, return_inverse=True)  # each item once, however many pairs list it
    entry = entry.reshape(-1)
    ids = [str(found) for found in table.ids[listed].tolist()]
    language = table.language[listed]
    by_language = python_order(table.languages)[language][entry]
    order = np.lexsort((python_order(ids)[entry], by_language, number, -spans, -impact))
    texts = shown_texts(context, listed)
    outputs = listing_outputs(context.config, chosen)
    return Listing(
        stem=stem,
        kind=kind,
        comparisons=tuple(chosen),
        outputs=outputs,
        pairs=pairs,
        pair=number,
        ids=ids,
        texts=texts,
        entry=entry,
        language=language,
        languages=table.languages,
        order=order,
    )


def shown_texts(context: AuditContext, items: np.ndarray) -> list[str | None] | None:
    """Return the texts of these items as a listing shows them, None where withheld: ``show_text = false``, a
    record without text, or none of these items with one."""
    table = context.record.table
    if not context.config.report.show_text or table.text is None:
        return None
    texts = table.text[items].tolist()
    return texts if any(text is not None for text in texts) else None


@dataclass(frozen=True, eq=False)
class SpanTexts:
    """The JSON text ``[start,end,"type"]`` of strict spans, each distinct span once: ``texts`` holds the n
    texts, then the same n after a comma; ``position`` gives a strict id's place among the first n (-1: none)."""

    texts: np.ndarray
    position: np.ndarray

    def of(self, ids: np.ndarray, after_comma: np.ndarray | bool = False) -> np.ndarray:
        """Return the text of each strict id (>= 0), after a comma where ``after_comma``."""
        return self.texts[self.position[ids] + (len(self.texts) // 2) * np.asarray(after_comma, dtype=np.int64)]


def span_texts(counts: Any, ids: Iterable[np.ndarray], commas: bool = True) -> SpanTexts:
    """Return the text of every strict id among ``ids`` (-1 entries ignored), each made once (and after a comma,
    unless not ``commas``: then ``of`` gives none after one)."""
    mark = np.zeros(len(counts._strict_start), dtype=bool)
    for part in ids:
        mark[part[part >= 0]] = True
    distinct = np.flatnonzero(mark)
    type_json = [_json(str(name)) for name in counts.type_names]
    texts = [
        f"[{start},{end},{type_json[code]}]"
        for start, end, code in zip(
            counts._strict_start[distinct].tolist(),
            counts._strict_end[distinct].tolist(),
            counts._strict_type[distinct].tolist(),
        )
    ]
    position = np.full(len(mark), -1, dtype=np.int64)
    position[distinct] = np.arange(len(distinct))
    return SpanTexts(object_array(texts + (["," + text for text in texts] if commas else [])), position)


def labelled_on(counts: Any, name: str, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return a labelling's strict ids on ``items`` (item-major) and the item of each."""
    wanted = np.zeros(counts.n_items, dtype=bool)
    wanted[items] = True
    ids = counts.ids("strict", name)
    item_of = counts.item_of("strict", ids)
    keep = wanted[item_of]
    return ids[keep], item_of[keep]


def spans_json(counts: Any, name: str, items: np.ndarray) -> dict[int, str]:
    """Return, per item of ``items`` where the labelling is present, its strict span set as JSON text,
    ``[[start,end,"type"],...]``, sorted as Python sorts the (start, end, type) tuples (strict ids are ordered
    so: ``_span_lists``)."""
    ids, item_of = labelled_on(counts, name, items)
    return _item_spans(counts, name, items, ids, item_of, span_texts(counts, [ids], commas=False))


def _item_spans(
    counts: Any, name: str, items: np.ndarray, ids: np.ndarray, item_of: np.ndarray, texts: SpanTexts
) -> dict[int, str]:
    """``spans_json`` of the labelling's spans on the items (``labelled_on``: ``ids`` and ``item_of``), their texts
    from ``texts`` (made once for several labellings: ``_output_spans``)."""
    listed = texts.of(ids).tolist()
    present = np.unique(items[counts.has(name)[items]])
    low, high = np.searchsorted(item_of, present), np.searchsorted(item_of, present, side="right")
    return {
        item: "[" + ",".join(listed[a:b]) + "]" for item, a, b in zip(present.tolist(), low.tolist(), high.tolist())
    }


def _output_spans(counts: Any, pairs: Sequence[Pair], order: np.ndarray) -> np.ndarray:
    """Return per line (laid pair after pair) its outputs' spans as the JSON Lines file writes them,
    ',"spans_outputs":{"output":[[start,end,"type"],...],...}' (the outputs its "outputs" lists), for the lines
    the browser holds (the first ``browser.BROWSER_LINES`` in order); '' for the others."""
    held = np.zeros(len(order), dtype=bool)
    held[order[: browser.BROWSER_LINES]] = True
    pieces = np.full(len(order), "", dtype=object)
    starts = np.cumsum([0, *(pair.n_lines for pair in pairs)])
    shown = [pair.items[held[start : start + pair.n_lines]] for pair, start in zip(pairs, starts.tolist())]
    on = {output: [] for pair in pairs for output in pair.outputs}  # each output's spans found once, every pair's
    for pair, items in zip(pairs, shown):
        for output in pair.outputs:
            on[output].append(items)
    wanted = {output: np.concatenate(items) for output, items in on.items()}
    labelled = {output: labelled_on(counts, output, items) for output, items in wanted.items()}
    texts = span_texts(counts, [ids for ids, _ in labelled.values()], commas=False)  # each span's text once
    every = {output: _item_spans(counts, output, wanted[output], *labelled[output], texts) for output in wanted}
    at = 0
    for pair in pairs:
        mine = np.flatnonzero(held[at : at + pair.n_lines])
        items = pair.items[mine]
        found = [every[output] for output in pair.outputs]
        keys = [_json(output) for output in pair.outputs]
        for line, item in zip(mine.tolist(), items.tolist()):
            listed = [f"{key}:{spans[item]}" for key, spans, scored in zip(keys, found, pair.scored[:, line]) if scored]
            pieces[at + line] = SPANS_OUTPUTS + ",".join(listed) + "}"
        at += pair.n_lines
    return pieces


def listings(context: AuditContext) -> Iterator[Listing]:
    """Yield the listings of this audit, each computed when asked for and kept by no one here: a build's files
    make them a listing at a time (the summary counts the pairs without them), so nothing holds every
    disagreement pair once the file is written (at a million items they were about 0.4 GB kept to the audit's end)."""
    for kind, stem, chosen in listed_comparisons(comparisons(context)):
        yield listing_of(context, stem, kind, chosen)


def listed_comparisons(found: Sequence[Comparison]) -> list[tuple[str, str, list[Comparison]]]:
    """Return the listing files of these comparisons: (kind, file stem, its comparisons), those with any."""
    every = [
        (kind, stem, [comparison for comparison in found if comparison.kind == kind])
        for kind, stem in (("references", REFERENCES_FILE), ("annotators", ANNOTATORS_FILE))
    ]
    return [(kind, stem, chosen) for kind, stem, chosen in every if chosen]


# --- the files: each line as text -------------------------------------------------------------------
#
# A file is one join of a few pieces per line: the item's id and language, the pair with the impact, the text,
# the four span lists, and the outputs' changes in chunks of neighbouring outputs. A piece many lines share (a
# pair with an impact, a chunk of changes, a span) is written once per distinct value and shared.

SPAN_KEYS = ("spans_first", "spans_second", "only_first", "only_second")


def object_array(values: Sequence[Any]) -> np.ndarray:
    """Return values (str or None) as a one-dimensional object array."""
    return np.array([*values, None], dtype=object)[:-1]


def _distinct_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (the distinct non-negative integers, each value's position among them)."""
    if not len(values):
        return values, values
    high = int(values.max())
    if high < 16 * len(values) + 1024:  # a narrow range: mark the values present (no sort)
        distinct = np.flatnonzero(np.bincount(values, minlength=high + 1))
        position = np.zeros(high + 1, dtype=np.int64)
        position[distinct] = np.arange(len(distinct))
        return distinct, position[values]
    distinct, index = np.unique(values, return_inverse=True)
    return distinct, index.reshape(-1)


@dataclass(frozen=True, eq=False)
class Coded:
    """One piece per line, as a code into the distinct pieces (``table``)."""

    codes: np.ndarray
    table: list[str]

    def pieces(self) -> np.ndarray:
        """Return each line's piece (the distinct pieces shared, not copied)."""
        return object_array(self.table)[self.codes]

    def wrapped(self, before: str, after: str) -> Coded:
        """Return the pieces with ``before`` and ``after`` around each."""
        return Coded(self.codes, [before + piece + after for piece in self.table])


def _coded(values: np.ndarray, show: Callable[[int], str]) -> Coded:
    """Return ``show(value)`` per line of non-negative integer values, called once per distinct value."""
    distinct, index = _distinct_values(values)
    return Coded(index, [show(value) for value in distinct.tolist()])


CHUNK_PIECES = 1024  # distinct pieces a chunk of outputs may always have (more with many lines: an eighth of them)


def _chunks(columns: Sequence[Coded], n_lines: int) -> list[Coded]:
    """Return neighbouring columns joined into as few pieces per line as keep each chunk's distinct pieces few."""
    limit = max(CHUNK_PIECES, n_lines // 8)
    chunks: list[Coded] = []
    for column in columns:
        if chunks:
            last = chunks[-1]
            distinct, index = _distinct_values(last.codes * len(column.table) + column.codes)
            if len(distinct) <= limit:
                width = len(column.table)
                chunks[-1] = Coded(
                    index, [last.table[value // width] + column.table[value % width] for value in distinct.tolist()]
                )
                continue
        chunks.append(column)
    return chunks


def _changes(
    pair: Pair, output: str, render: Callable[[int, int, bool], str], absent: str, opening: np.ndarray | None = None
) -> Coded:
    """Return per line of the pair one output's change: ``render(tp, fn, opens)`` where the line lists the output
    (``opens`` where ``opening`` marks the line: the first output it lists), else ``absent``."""
    if output not in pair.outputs or not pair.n_lines:
        return Coded(np.zeros(pair.n_lines, dtype=np.int64), [absent])
    row = pair.outputs.index(output)
    tp, fn, scored = pair.tp[row], pair.fn[row], pair.scored[row]
    low_tp, low_fn = int(tp.min()), int(fn.min())
    width = int(fn.max()) - low_fn + 1
    kinds = (int(tp.max()) - low_tp + 1) * width
    code = np.where(scored, (tp - low_tp) * width + (fn - low_fn) + 1, 0)  # 0: not listed
    if opening is not None:
        code = np.where(opening & scored, code + kinds, code)

    def show(value: int) -> str:
        if value == 0:
            return absent
        value, opens = (value - 1 - kinds, True) if value > kinds else (value - 1, False)
        return render(low_tp + value // width, low_fn + value % width, opens)

    return _coded(code, show)


def _per_pair(listing: Listing, make: Callable[[Pair], list[np.ndarray]]) -> list[np.ndarray]:
    """Return columns of pieces per line (pairs end to end) from each pair's (fewer: empty pieces after them)."""
    made = [make(pair) for pair in listing.pairs]
    width = max((len(columns) for columns in made), default=0)
    return [
        np.concatenate(
            [
                columns[column] if column < len(columns) else np.full(pair.n_lines, "", dtype=object)
                for pair, columns in zip(listing.pairs, made)
            ]
        )
        for column in range(width)
    ]


def _heads(listing: Listing, head: Callable[[Comparison], str], after: str) -> np.ndarray:
    """Return per line its pair's ``head`` text, the impact and ``after``, each distinct pair and impact once."""
    impact = np.concatenate([pair.impact for pair in listing.pairs])
    radix = int(impact.max()) + 1 if len(impact) else 1
    heads = [head(comparison) for comparison in listing.comparisons]
    return _coded(
        listing.pair * radix + impact, lambda value: f"{heads[value // radix]}{value % radix}{after}"
    ).pieces()


def _write(
    listing: Listing,
    head: Sequence[np.ndarray],
    quoted: bool,
    tail: Sequence[np.ndarray],
    first: str = "",
    lines: int = 0,
) -> Iterator[str]:
    """Return the lines in order, joined from their pieces ``CHUNK_LINES`` lines at a time as they are read (a
    file's text in pieces: ``results.FileText``): per line its pieces in the ``head`` columns, its four span
    lists (JSON, or ``quoted``: CSV fields, their quotes doubled, each after a comma), then its pieces in the
    ``tail`` columns (columns laid pairs end to end); ``first`` before them all (a header).

    Every column and span is first put in the lines' order, so the pieces are laid down front to back (now);
    the text is joined when read, ``lines`` lines at a time (0: ``CHUNK_LINES``).
    """
    order = listing.order
    counts = np.hstack(
        [np.zeros((4, 0), dtype=np.int64)]
        + [np.stack([pair.spans[key].counts for key in SPAN_KEYS]) for pair in listing.pairs]
    )[:, order]
    before = np.vstack([np.zeros((1, len(order)), dtype=np.int64), np.cumsum(counts, axis=0)])  # spans before a list
    length = len(head) + 5 + before[-1] + len(tail)  # pieces per line: five bounds around the lists and the spans
    start = np.cumsum(length) - length + 1
    pieces = np.empty(int(length.sum()) + 1, dtype=object)
    pieces[0] = first
    for column, values in enumerate(head):
        pieces[start + column] = values[order]
    spans_at = start + len(head)
    some = (counts > 0).astype(np.int64)

    def opening(key: str, filled: int) -> str:
        if quoted:
            return ',"[' if filled else ",["
        return f',"{key}":['

    closing = ("]", ']"' if quoted else "]")
    for bound in range(5):  # an opening; a closing and the next opening (three times); a closing
        shut = [""] if bound == 0 else list(closing)
        opened = [""] if bound == 4 else [opening(SPAN_KEYS[bound], 0), opening(SPAN_KEYS[bound], 1)]
        table = object_array([close + open_ for close in shut for open_ in opened])
        code = (some[bound - 1] * len(opened) if bound else 0) + (some[bound] if bound < 4 else 0)
        pieces[spans_at + bound + before[bound]] = table[code]
    for number, key in enumerate(SPAN_KEYS):
        # every pair's spans of this list, in one table: each distinct span, then each after a comma
        found = [pair.spans[key] for pair in listing.pairs]
        texts = [text for lists in found for text in lists.texts]
        texts = [text.replace('"', '""') for text in texts] if quoted else texts
        table = object_array(texts + ["," + text for text in texts])
        offsets = np.cumsum([0] + [len(lists.texts) for lists in found])
        index = np.concatenate(
            [np.zeros(0, dtype=np.int64)] + [lists.index + offset for lists, offset in zip(found, offsets)]
        )
        # the lines' spans in the lines' order: each line's run of spans, moved as a whole
        laid = np.concatenate([np.zeros(0, dtype=np.int64)] + [lists.counts for lists in found])
        runs = np.cumsum(laid) - laid
        spans = counts[number]
        rank = np.arange(int(spans.sum())) - np.repeat(np.cumsum(spans) - spans, spans)  # a span's place in its list
        index = index[np.repeat(runs[order], spans) + rank]
        pieces[np.repeat(spans_at + number + 1 + before[number], spans) + rank] = table[index + len(texts) * (rank > 0)]
    tail_at = spans_at + 5 + before[-1]
    for column, values in enumerate(tail):
        pieces[tail_at + column] = values[order]
    return _joined_lines(pieces, start, lines or CHUNK_LINES)


CHUNK_LINES = 65_536  # the lines of a listing file joined into one piece of its text


def _joined_lines(pieces: np.ndarray, start: np.ndarray, lines: int) -> Iterator[str]:
    """Yield the text of the pieces (line after line, line k's first at ``start[k]``; before it, a header),
    ``lines`` lines at a time: never the whole file in one string, nor every piece in a list."""
    cuts = [0, *start[lines::lines].tolist(), len(pieces)]
    for low, high in zip(cuts[:-1], cuts[1:]):
        yield "".join(pieces[low:high].tolist())


def _json_changes(pair: Pair) -> list[np.ndarray]:
    """Return the pair's "outputs" objects in chunks: {"output":{"tp":..,"fp":..,"fn":..},...} of each line."""
    opening = np.argmax(pair.scored, axis=0) if pair.n_lines and pair.outputs else None
    columns = []
    for row, output in enumerate(pair.outputs):
        key = _json(output)
        columns.append(
            _changes(
                pair,
                output,
                lambda tp, fn, opens, key=key: f'{"" if opens else ","}{key}:{{"tp":{tp},"fp":{-tp},"fn":{fn}}}',
                "",
                None if opening is None else opening == row,
            )
        )
    chunks = _chunks(columns, pair.n_lines) or [Coded(np.zeros(pair.n_lines, dtype=np.int64), [""])]
    chunks[0] = chunks[0].wrapped(',"outputs":{', "")
    chunks[-1] = chunks[-1].wrapped("", "}")
    return [chunk.pieces() for chunk in chunks]


JSON_ESCAPED = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')  # what orjson escapes in a string (or refuses)


def _json_inside(texts: list[str]) -> list[str]:
    """Return each string as orjson writes it, without the quotes around it."""
    if JSON_ESCAPED.search("".join(texts)) is None:
        return texts  # nothing to escape: the usual ids
    return [_json(text)[1:-1] for text in texts]


def listing_jsonl(listing: Listing, counts: Any, lines: int = 0) -> Iterator[str]:
    """Return the listing as JSON Lines: one object per line, keys in a fixed order, exact (no rewriting).

    Each line is what orjson writes of {id, language, first, second, subset, impact, text (when shown), the
    four span lists, outputs: {output: {tp, fp, fn}} for the outputs present on the item, and, on the first
    ``browser.BROWSER_LINES`` lines (those the browser holds), spans_outputs: {output: its strict spans}}.
    """
    languages = [_json(language) for language in listing.languages]
    starts = [
        f'{{"id":"{inside}","language":{languages[code]}'
        for inside, code in zip(_json_inside(listing.ids), listing.language.tolist())
    ]
    head = [
        object_array(starts)[listing.entry],
        _heads(
            listing,
            lambda c: f',"first":{_json(c.first)},"second":{_json(c.second)},"subset":{_json(c.subset)},"impact":',
            "",
        ),
    ]
    if listing.texts is not None:
        texts = ["" if text is None else ',"text":' + _json(text) for text in listing.texts]
        head.append(object_array(texts)[listing.entry])
    ends = np.full(listing.n_lines, "}\n", dtype=object)  # the outputs' spans (on the lines the browser holds)
    output_spans = _output_spans(counts, listing.pairs, listing.order)  # made here: only a build writes the file
    held = np.flatnonzero(output_spans != "")
    ends[held] = [piece + "}\n" for piece in output_spans[held].tolist()]
    return _write(listing, head, False, [*_per_pair(listing, _json_changes), ends], lines=lines)


CSV_QUOTED = re.compile('[,"\n]')  # a field with any of these is quoted by every version of the csv module


def csv_cell(text: str) -> str:
    """Return one field as the csv module writes it in a row of several (QUOTE_MINIMAL, lineterminator "\\n")."""
    if CSV_QUOTED.search(text) is not None:
        return '"' + text.replace('"', '""') + '"'
    if text and "\r" not in text and not text[0].isspace():
        return text
    # an empty field, a carriage return, a leading space: whether these are quoted differs between versions
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text, ""])
    return buffer.getvalue()[:-2]


# in texts joined after a NUL each: a text that is empty, starts like a formula or a space, or holds a character
# the csv module may quote; any other is its own spreadsheet cell
CELL_CHANGED = re.compile('[,"\n\r]|\0(?:$|\0|\\s|' + "|".join(map(re.escape, FORMULA_STARTS)) + ")")


def spreadsheet_cells(texts: list[str]) -> list[str]:
    """Return each text as a CSV field for spreadsheets: ``spreadsheet_safe``, then as the csv module writes it."""
    if CELL_CHANGED.search("\0" + "\0".join(texts)) is None:
        return texts  # nothing to change: the usual ids
    return [csv_cell(spreadsheet_safe(text)) for text in texts]


def _csv_changes(listing: Listing) -> Callable[[Pair], list[np.ndarray]]:
    """Return what makes a pair's change columns, in chunks: ",tp,fp,fn" per output of the listing (",,," where
    the line lists none), the row's end after the last."""

    def make(pair: Pair) -> list[np.ndarray]:
        columns = [_changes(pair, output, lambda tp, fn, _: f",{tp},{-tp},{fn}", ",,,") for output in listing.outputs]
        chunks = _chunks(columns, pair.n_lines) or [Coded(np.zeros(pair.n_lines, dtype=np.int64), [""])]
        chunks[-1] = chunks[-1].wrapped("", "\n")
        return [chunk.pieces() for chunk in chunks]

    return make


def listing_csv(listing: Listing, lines: int = 0, header: bool = True) -> Iterator[str]:
    """Return the listing as CSV for spreadsheets: spans as JSON, one TP/FP/FN change column per output.

    Team-written text (ids, languages, labelling names, the text) that starts like a formula gets a leading
    apostrophe, as in the tables' CSVs; the JSON Lines file is the exact one. Fields are quoted as the csv
    module quotes them. Joined ``lines`` lines at a time (``_write``); the header first unless not ``header``.
    """
    languages = spreadsheet_cells(list(listing.languages))
    starts = [
        f"{cell},{languages[code]}" for cell, code in zip(spreadsheet_cells(listing.ids), listing.language.tolist())
    ]
    head = [
        object_array(starts)[listing.entry],
        _heads(listing, lambda c: ",".join(["", *spreadsheet_cells([c.first, c.second]), csv_cell(c.subset), ""]), ","),
    ]
    if listing.texts is not None:  # else the text column stays empty
        texts = spreadsheet_cells(["" if text is None else text for text in listing.texts])
        head.append(object_array(texts)[listing.entry])
    first = csv_header(listing.outputs) if header else ""
    return _write(listing, head, True, _per_pair(listing, _csv_changes(listing)), first=first, lines=lines)


def csv_header(outputs: Sequence[str]) -> str:
    """Return a listing CSV's header line: its fixed columns, then ΔTP, ΔFP and ΔFN of each output."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = [
        "id",
        "language",
        "first",
        "second",
        "subset",
        "impact",
        "text",
        "spans_first",
        "spans_second",
        "only_first",
        "only_second",
    ]
    header += [spreadsheet_safe(f"{output} {count}") for output in outputs for count in ("ΔTP", "ΔFP", "ΔFN")]
    writer.writerow(header)
    return buffer.getvalue()


def files(context: AuditContext) -> Iterator[tuple[str, Iterator[str]]]:
    """Yield the listing files written beside results.json, (name, text) a file at a time: each listing's JSON
    Lines, then its CSV (``Analysis.files``), each text joined in pieces as it is read (``_write``)."""
    for listing in listings(context):
        yield f"{listing.stem}.jsonl", listing_jsonl(listing, context.counts)
        yield f"{listing.stem}.csv", listing_csv(listing)
        del listing  # let go before the next listing is made


class PartitionedListings:
    """``files`` of a partitioned record (``Analysis.partitioned_files``): the same bytes, the record never whole.

    Each partition's listings are made from it alone, in the listings' order restricted to it (``listing_of``: the
    order's keys, impact, spans, pair, language and id, are each line's own), and spilled (``spill.Runs``); a file
    is its runs merged by those keys. A partition gives its first ``browser.BROWSER_LINES`` lines their outputs'
    spans: the file's first that many lie among them. Merged, a line past them loses its outputs' spans again:
    the text from the last ``SPANS_OUTPUTS`` on, which no string value or output name can hold elsewhere (in JSON
    a string's quote is escaped, and an output's key in "outputs" opens its counts before spans_outputs comes).
    """

    def __init__(self, partitioned: Partitioned, folder: Path):
        self.config = partitioned.config
        self.chosen = listed_comparisons(comparisons_of(self.config, partitioned.subsets))
        self.runs = {stem: (Runs(folder, f"{stem}.jsonl"), Runs(folder, f"{stem}.csv")) for _, stem, _ in self.chosen}

    def add(self, context: AuditContext) -> None:
        """Spill one partition's lines of each listing."""
        for kind, stem, chosen in self.chosen:
            listing = listing_of(context, stem, kind, chosen)
            keys = line_keys(listing)
            json_runs, csv_runs = self.runs[stem]
            json_runs.add(zip(keys, listing_jsonl(listing, context.counts, lines=1)))
            csv_runs.add(zip(keys, listing_csv(listing, lines=1, header=False)))

    def files(self) -> Iterator[tuple[str, Iterator[str]]]:
        """Yield each listing's JSON Lines, then its CSV, the partitions' lines merged as they are read."""

        def shown(position: int, line: str) -> str:
            if position < browser.BROWSER_LINES:
                return line
            cut = line.rfind(SPANS_OUTPUTS)
            return line if cut < 0 else line[:cut] + "}\n"

        for _, stem, chosen in self.chosen:
            json_runs, csv_runs = self.runs[stem]
            yield f"{stem}.jsonl", json_runs.merged(shown)
            yield f"{stem}.csv", itertools.chain([csv_header(listing_outputs(self.config, chosen))], csv_runs.merged())


def line_keys(listing: Listing) -> list[tuple[int, int, int, str, str]]:
    """Return each line's key in the listing's order (``listing_of``), in that order: its negated impact and
    differing spans, its pair's number, its language and id (compared as strings, as ``python_order`` ranks them)."""
    order = listing.order
    impact = np.concatenate([pair.impact for pair in listing.pairs])[order]
    spans = np.concatenate([pair.only_first + pair.only_second for pair in listing.pairs])[order]
    entry = listing.entry[order]
    languages = [listing.languages[code] for code in listing.language[entry].tolist()]
    ids = [listing.ids[at] for at in entry.tolist()]
    return list(zip((-impact).tolist(), (-spans).tolist(), listing.pair[order].tolist(), languages, ids))


def summary(context: AuditContext) -> dict[str, Any]:
    """results.json "disagreements": per comparison, how many items differ and how many spans only one has
    (counted a comparison at a time, from ``differing_of``: no listing is made)."""
    table = context.record.table
    found = []
    text = False  # whether a listing has a text: an item it lists has one, shown
    for comparison in comparisons(context):
        differing, only_first, only_second = differing_of(context, comparison)
        items = np.flatnonzero(differing)
        text = text or shown_texts(context, items) is not None
        mask = _mask(context, comparison)
        languages, members = context_strata(context, mask)
        compared = {language: len(m) for language, m in zip(languages, members)}
        compared[POOLED] = int(mask.sum())
        language = table.language[items]

        def per_language(values: np.ndarray) -> dict[str, int]:
            tally = np.zeros(len(table.languages), dtype=np.int64)
            np.add.at(tally, language, values)
            counted = {name: int(tally[table.languages.index(name)]) for name in languages}
            counted[POOLED] = int(values.sum())
            return counted

        found.append(
            {
                "kind": comparison.kind,
                "first": comparison.first,
                "second": comparison.second,
                "subset": comparison.subset,
                "file": comparison.stem,
                "items": compared,
                "differing": per_language(np.ones(len(items), dtype=np.int64)),
                "only_first": per_language(only_first),
                "only_second": per_language(only_second),
            }
        )
    return {"show_text": context.config.report.show_text, "text": text, "comparisons": found}


def context_strata(context: AuditContext, mask: np.ndarray) -> tuple[list[str], list[np.ndarray]]:
    """Return the languages present among the masked items, sorted, and each one's items."""
    table = context.record.table
    present = np.flatnonzero(np.bincount(table.language[mask], minlength=len(table.languages)))
    codes = sorted(present.tolist(), key=table.languages.__getitem__)
    members = [np.flatnonzero(mask & (table.language == code)) for code in codes]
    return [table.languages[code] for code in codes], members


def applicability(context: AuditContext) -> dict[str, str | None]:
    if comparisons(context):
        return {KEY: None}
    return {KEY: "Listing disagreements needs two references or two annotators on the same items."}


# --- the page's highlighting ------------------------------------------------------------------------

WHOLE_TEXT = 400  # a longer text shows only windows around its differing spans
CONTEXT = 60  # characters of context either side of a differing span in a window


def text_windows(length: int, spans: Sequence[Sequence[Any]]) -> list[tuple[int, int]]:
    """Return the [start, end) windows of a text the page shows: all of it when short, else each differing
    span with CONTEXT characters either side (overlapping windows merged)."""
    if length <= WHOLE_TEXT or not spans:
        return [(0, length)]
    windows: list[list[int]] = []
    for start, end, _ in sorted(spans):
        low, high = max(0, start - CONTEXT), min(length, end + CONTEXT)
        if windows and low <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], high)
        else:
            windows.append([low, high])
    return [(low, high) for low, high in windows]


def highlight(
    text: str, only_first: Sequence[Sequence[Any]], only_second: Sequence[Sequence[Any]]
) -> list[list[tuple[str, str]]]:
    """Return the text as windows of (piece, mark) pieces: mark is '', 'first', 'second' or 'both', saying which
    labelling alone has a span covering the piece (overlapping spans split the text where they start and end)."""
    windows = []
    for low, high in text_windows(len(text), [*only_first, *only_second]):
        cuts = {low, high}
        for start, end, _ in (*only_first, *only_second):
            cuts.update(position for position in (start, end) if low < position < high)
        ordered = sorted(cuts)
        pieces = []
        for start, end in zip(ordered, ordered[1:]):
            by_first = any(s <= start and end <= e for s, e, _ in only_first)
            by_second = any(s <= start and end <= e for s, e, _ in only_second)
            mark = "both" if by_first and by_second else "first" if by_first else "second" if by_second else ""
            if pieces and pieces[-1][1] == mark:
                pieces[-1] = (pieces[-1][0] + text[start:end], mark)
            else:
                pieces.append((text[start:end], mark))
        windows.append(pieces)
    return windows


# --- the pages: each listing's, and its browser's data ----------------------------------------------------------------


@dataclass(frozen=True)
class TextPiece:
    """A piece of an item's text and which labelling alone has a span over it: '', 'first', 'second' or 'both'."""

    text: str
    mark: str


@dataclass(frozen=True)
class ListedSpan:
    """A span only one labelling has: offsets as printed ('[12, 17)'), its type, and its text when shown."""

    offsets: str
    type: str
    text: str | None


@dataclass(frozen=True)
class OutputChange:
    """An output's TP, FP and FN changes on an item when scored against the second labelling, as printed."""

    output: str
    tp: str
    fp: str
    fn: str


@dataclass(frozen=True)
class ListedItem:
    """One item on which the two labellings differ, as the page shows it."""

    rank: str
    id: str
    language: str
    impact: str
    windows: tuple[tuple[TextPiece, ...], ...]  # the text (or windows of a long one); () when not shown
    only_first: tuple[ListedSpan, ...]
    only_second: tuple[ListedSpan, ...]
    changes: tuple[OutputChange, ...]  # the outputs whose counts change
    changed: str  # how many they are, as printed
    unchanged: str  # how many scored outputs' counts do not change, as printed ('' when none)


@dataclass(frozen=True)
class ListedPair:
    """Two labellings compared, and the items on which they differ with the most impact."""

    anchor: str
    first: str
    second: str
    subset: str
    differing: str
    shown: str
    complete: bool  # every differing item is shown
    items: tuple[ListedItem, ...]


@dataclass(frozen=True)
class ListingLink:
    """A listing page of the version: its file, title and number of lines (as printed), and whether it is this one."""

    href: str
    title: str
    lines: str
    current: bool


@dataclass(frozen=True)
class DisagreementsPage(browser.ListingPage):
    """Context of ``site/<version>/disagreements.html`` (the references) and ``annotator-disagreements.html``:
    ``browser.ListingPage``'s, and

    pairs: per pair of labellings compared, the items on which they differ with the most impact (at most
        ``limit`` each).
    listings: every listing page of the version, this one marked, for the links between them.
    """

    pairs: tuple[ListedPair, ...]
    listings: tuple[ListingLink, ...]


def _listed_spans(spans: Sequence[Sequence[Any]], text: str | None) -> tuple[ListedSpan, ...]:
    return tuple(
        ListedSpan(f"[{start}, {end})", str(kind), text[start:end] if text is not None else None)
        for start, end, kind in spans
    )


def listed_item(rank: int, line: Mapping[str, Any]) -> ListedItem:
    """Return one line of a listing file as the page shows it."""
    text = line.get("text")
    windows = (
        ()
        if text is None
        else tuple(
            tuple(TextPiece(piece, mark) for piece, mark in window)
            for window in highlight(text, line["only_first"], line["only_second"])
        )
    )
    changes = tuple(
        OutputChange(output, *(formatting.signed_count(change[key]) for key in ("tp", "fp", "fn")))
        for output, change in line["outputs"].items()
        if any(change.values())
    )
    return ListedItem(
        rank=formatting.count(rank),
        id=line["id"],
        language=line["language"],
        impact=formatting.count(line["impact"]),
        windows=windows,
        only_first=_listed_spans(line["only_first"], text),
        only_second=_listed_spans(line["only_second"], text),
        changes=changes,
        changed=formatting.count(len(changes)),
        unchanged=formatting.count(len(line["outputs"]) - len(changes)) if len(line["outputs"]) > len(changes) else "",
    )


def _listing_title(annotators: bool) -> str:
    return "Where the annotators disagree" if annotators else "Where the references disagree"


def _annotators(comparisons: Sequence[Mapping[str, Any]]) -> bool:
    return bool(comparisons) and all(c["kind"] == "annotators" for c in comparisons)


@dataclass(frozen=True)
class ListingRead:
    """A listing file as its page reads it: its comparisons (results.json), how many lines it holds (from their
    counts), and per comparison its first ``PAGE_LINES`` lines (``shown``: filled as ``lines`` reads the file)."""

    stem: str
    comparisons: tuple[Mapping[str, Any], ...]
    lines: int
    shown: list[list[dict]]

    def read(self, folder: Path) -> Iterator[dict]:
        """Yield the file's first ``browser.BROWSER_LINES`` lines, one read at a time, filling ``shown`` (the file
        is read no further than both need: a listing may run to hundreds of megabytes)."""
        keys = [(comparison["first"], comparison["second"]) for comparison in self.comparisons]
        wanted = [min(PAGE_LINES, int(comparison["differing"][POOLED])) for comparison in self.comparisons]
        return browser.page_lines(
            folder / f"{self.stem}.jsonl",
            self.lines,
            lambda line: keys.index((line["first"], line["second"])),
            wanted,
            self.shown,
        )


def read_listings(site: browser.SiteContext) -> list[ListingRead]:
    """Return every disagreement listing whose JSON Lines file is in the version folder (none read yet)."""
    comparisons = (site.results.get(KEY) or {}).get("comparisons") or []
    found = []
    for stem in dict.fromkeys(comparison["file"] for comparison in comparisons):
        if (site.folder / f"{stem}.jsonl").is_file():
            mine = tuple(c for c in comparisons if c["file"] == stem)
            found.append(ListingRead(stem, mine, sum(int(c["differing"][POOLED]) for c in mine), [[] for _ in mine]))
    return found


def listing_page(site: browser.SiteContext, listing: ListingRead, found: Sequence[ListingRead]) -> DisagreementsPage:
    """Return the context of a listing's page (``found``: every listing of the version, for the links)."""
    results, folder, stem = site.results, site.folder, listing.stem
    summary = results.get(KEY) or {}
    pairs = []
    for number, (comparison, shown) in enumerate(zip(listing.comparisons, listing.shown)):
        differing = int(comparison["differing"][POOLED])
        pairs.append(
            ListedPair(
                anchor=f"pair-{number + 1}",
                first=comparison["first"],
                second=comparison["second"],
                subset=comparison["subset"],
                differing=formatting.count(differing),
                shown=formatting.count(len(shown)),
                complete=len(shown) == differing,
                items=tuple(listed_item(rank, line) for rank, line in enumerate(shown, start=1)),
            )
        )
    annotators = _annotators(listing.comparisons)
    if not summary.get("show_text", True):
        text_note = (
            "The record's text is withheld ([report] show_text = false): items are listed by id, with "
            "each span's offsets (characters, end excluded) and type."
        )
    elif not summary.get("text"):
        text_note = (
            "The record carries no text: items are listed by id, with each span's offsets (characters, "
            "end excluded) and type."
        )
    else:
        text_note = (
            "Each item's text is shown with the spans only the first labelling has underlined solid "
            "on orange, those only the second has underlined dashed on blue; a long text is cut to the "
            "passages around them."
        )
    return DisagreementsPage(
        dataset_name=results["dataset"]["name"],
        version=results["dataset"]["version"],
        tool_version=results.get("tool_version", __version__),
        build_date=site.build_timestamp[:10],
        title=_listing_title(annotators),
        question=(
            (
                "Every corpus item on which annotator A and annotator B differ (strict span sets): where an "
                "adjudication pass would look first. "
            )
            if annotators
            else (
                "Every audited item on which the primary reference and an alternative differ (strict span sets), "
                "with what the difference does to each output's TP, FP and FN. "
            )
        )
        + (
            "Items are ordered by impact: the TP, FP and FN counts that change when the outputs are scored "
            "against the second labelling instead of the first, summed over the outputs."
        ),
        text_note=text_note,
        files=browser.page_files(folder, stem, "line"),
        pairs=tuple(pairs),
        limit=formatting.count(PAGE_LINES),
        appendix_anchor=f"section-{KEY}",
        listing=stem,
        data_script=browser.data_script_name(stem),
        listings=tuple(
            ListingLink(
                page_name(other.stem),
                _listing_title(_annotators(other.comparisons)),
                formatting.count(other.lines),
                other.stem == stem,
            )
            for other in found
        ),
    )


BROWSER_COLUMNS = (
    browser.BrowserColumn("rank", "Rank", "number"),
    browser.BrowserColumn("id", "Item", "text"),
    browser.BrowserColumn("language", "Language", "text", "choice"),
    browser.BrowserColumn("pair", "Pair", "text", "choice"),
    browser.BrowserColumn("impact", "Impact", "number", "min"),
    browser.BrowserColumn("differing", "Differing spans", "number"),
    browser.BrowserColumn("types", "Types", "list", "choice"),
    browser.BrowserColumn("outputs", "Outputs changed", "list", "choice"),
)


def browser_listing(
    stem: str, lines: Iterable[Mapping[str, Any]], total: int, title: str, show_text: bool, files: tuple[str, ...]
) -> browser.BrowserListing:
    """Return a disagreement listing for the browser: its first ``browser.BROWSER_LINES`` lines (of ``total``),
    text only when shown."""
    names: dict[str, int] = {}
    texts: dict[str, int] = {}
    pairs: dict[tuple[str, str], str] = {}
    signed: dict[int, str] = {}  # each change printed once (formatting.signed_count)
    rows, items = [], []
    for rank, line in enumerate(lines, start=1):
        if rank > browser.BROWSER_LINES:
            continue  # (a list longer than the cap; the file's reader yields no more)
        only_first, only_second = line["only_first"], line["only_second"]  # short lists: no sets needed
        differing = sorted({str(span[2]) for span in only_first} | {str(span[2]) for span in only_second})
        notes = []
        for output, change in line["outputs"].items():
            tp, fp, fn = change["tp"], change["fp"], change["fn"]
            if tp or fp or fn:
                notes.append(
                    [
                        output,
                        *(
                            signed.get(value) or signed.setdefault(value, formatting.signed_count(value))
                            for value in (tp, fp, fn)
                        ),
                    ]
                )
        first, second = line["first"], line["second"]
        pair = pairs.get((first, second)) or pairs.setdefault((first, second), f"{first} vs {second}")
        rows.append(
            (
                rank,
                line["id"],
                line["language"],
                pair,
                line["impact"],
                len(only_first) + len(only_second),
                differing,
                [note[0] for note in notes],
            )
        )
        text = line.get("text") if show_text else None
        windows = None
        if text is not None and len(text) > WHOLE_TEXT:
            cut = text_windows(len(text), [*only_first, *only_second])
            windows = None if cut == [(0, len(text))] else [list(window) for window in cut]
        sides = [
            [browser.name_index(names, first), [[*span, int(span in only_first)] for span in line["spans_first"]]],
            [browser.name_index(names, second), [[*span, int(span in only_second)] for span in line["spans_second"]]],
        ]
        if "spans_outputs" in line:  # the outputs, each set of spans once
            sides += browser.grouped_sides(names, line["spans_outputs"], (line["spans_first"], line["spans_second"]))
        items.append((None if text is None else texts.setdefault(text, len(texts)), windows, sides, notes))
    # a list no line fills (no output besides the two labellings compared) is no column
    kept = [
        position
        for position, column in enumerate(BROWSER_COLUMNS)
        if column.kind != "list" or any(row[position] for row in rows)
    ]
    return browser.BrowserListing(
        name=stem,
        title=title,
        lines=total,
        files=files,
        columns=tuple(BROWSER_COLUMNS[position] for position in kept),
        names=tuple(names),
        note_columns=("Output", "ΔTP", "ΔFP", "ΔFN"),
        texts=tuple(texts),
        rows=tuple(tuple(row[position] for position in kept) for row in rows),
        items=tuple(items),
    )


def pages(view: ResultsView, site: browser.SiteContext) -> list[browser.Page]:
    """Return each listing's page and its browser's data script, for the listing files in the version folder."""
    found = read_listings(site)
    show_text = (site.results.get(KEY) or {}).get("show_text", True)
    written = []
    for listing in found:
        title = _listing_title(_annotators(listing.comparisons))
        files = tuple(
            name for name in (f"{listing.stem}.csv", f"{listing.stem}.jsonl") if (site.folder / name).is_file()
        )
        # one pass over the file: the browser's data line by line, the page's lines kept meanwhile
        data = browser.browser_script(
            browser_listing(listing.stem, listing.read(site.folder), listing.lines, title, show_text, files)
        )
        written.append(browser.Page(page_name(listing.stem), "disagreements.html", listing_page(site, listing, found)))
        written.append(browser.Page(browser.data_script_name(listing.stem), text=data))
    return written


# --- the report ------------------------------------------------------------------------------------


def page_name(stem: str) -> str:
    """Return the page of a listing, beside the appendix."""
    return f"{stem}.html"


def listed(view: ResultsView) -> list[dict[str, Any]]:
    """Return results.json's comparisons (empty when the audit listed none)."""
    return list((view.data.get(KEY) or {}).get("comparisons") or [])


def links(view: ResultsView, kind: str) -> tuple[tuple[str, str], ...]:
    """Return the (page, text) links to a kind of listing, for a section's links."""
    found = [comparison for comparison in listed(view) if comparison["kind"] == kind]
    if not found:
        return ()
    stem = found[0]["file"]
    if len(found) == 1:
        comparison = found[0]
        what = (
            f"Where {comparison['first']} and {comparison['second']} differ, item by item "
            f"({formatting.counted(comparison['differing'][POOLED], 'item')})"
        )
    else:
        each = ", ".join(f"{formatting.count(c['differing'][POOLED])} under {c['second']}" for c in found)
        what = f"Where the alternative references differ from {found[0]['first']}, item by item ({each})"
    return (
        (
            page_name(stem),
            f"{what}, the most impact first: {page_name(stem)}; every item in {stem}.jsonl and {stem}.csv.",
        ),
    )


def counts_table(view: ResultsView) -> Table:
    """Per comparison and language: items compared, items on which the two differ, spans only in each."""
    rows = []
    kinds = {comparison["kind"] for comparison in listed(view)}
    pairs = " and ".join(
        part
        for kind, part in (
            ("references", "the primary reference against each alternative on the audited subset"),
            ("annotators", "annotator A against B on the corpus"),
        )
        if kind in kinds
    )
    for comparison in listed(view):
        for language in view.languages:
            if language not in comparison["items"]:
                continue
            rows.append(
                [
                    label(f"{comparison['first']} vs {comparison['second']}"),
                    label(language),
                    count_cell(comparison["items"][language]),
                    count_cell(comparison["differing"][language]),
                    count_cell(comparison["only_first"][language]),
                    count_cell(comparison["only_second"][language]),
                ]
            )
    return Table(
        key="disagreements",
        title="Items on which the golds differ",
        caption=(
            f"Items on which two labellings' strict span sets differ: {pairs}; spans only in the first and only in "
            "the second labelling of each pair. The listing pages and files give every such item, ordered by how "
            "many of the outputs' TP, FP and FN counts it changes."
        ),
        columns=("Pair", "Language", "Items", "Differing", "Spans only in first", "Spans only in second"),
        rows=mark_repeats(rows, 1),
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    found = listed(view)
    if not found:
        return Section(
            key=KEY,
            number=0,
            title=ANALYSIS.title,
            not_applicable=view.applicability(KEY) or "This analysis produced no results for this record.",
        )
    hidden = not (view.data.get(KEY) or {}).get("show_text", True)
    note = (
        "The record's text is withheld ([report] show_text = false): the pages and files list items by id, "
        "with each span's offsets and type."
        if hidden
        else "Each listing page shows the items' text with the differing spans highlighted."
    )
    return Section(
        key=KEY,
        number=0,
        title=ANALYSIS.title,
        paragraphs=(ANALYSIS.question, note),
        tables=(counts_table(view),),
        links=links(view, "references") + links(view, "annotators"),
    )


DOWNLOADS = tuple(
    (f"{stem}{suffix}", f"{kind}: the items on which {what} differ")
    for stem, what in (
        (REFERENCES_FILE, "the primary reference and an alternative"),
        (ANNOTATORS_FILE, "annotator A and annotator B"),
    )
    for suffix, kind in (
        (".html", "The page of those with most impact"),
        (".jsonl", "Every one as JSON Lines"),
        (".csv", "Every one as CSV"),
    )
)

ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key=KEY,
    title="Where the golds differ",
    question="On which items do the golds disagree, and which of them move the scores most?",
    methods="""- **Disagreements** (strict span sets): every audited item on which the primary reference and an
  alternative differ, and every corpus item on which annotators A and B differ, with the spans only in one
  of the two and, for each output, the change in its TP, FP and FN when it is scored against the second
  instead of the first. Items are ordered by impact: those changes' absolute values summed over the outputs
  (then by the number of differing spans).""",
    applicability=applicability,
    summary=summary,
    files=files,
    partitioned_files=PartitionedListings,
    section=_section,
    pages=pages,
    downloads=DOWNLOADS,
)
