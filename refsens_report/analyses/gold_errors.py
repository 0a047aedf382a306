"""Gold-error candidates: for each reference, the places where it most likely is wrong, ranked by the evidence.

The evidence is the scored outputs and, unless ``[report] error_evidence = "outputs"``, the other references
(the *sources*), on the audited items. A *place* is a span of the reference, or a span some source has and the
reference lacks where the reference has nothing overlapping it. At a place each source present on the item
votes for one *state*: the span it has there (strict: offsets and type), or nothing (it has no span
overlapping the place). A source's vote weighs how reliable it is against the reference on the *other* items
(leave one out: its counts summed over the items minus the item's own):

    weight = log(r / (1 - r)) - log(f / (1 - f))       the log diagnostic odds ratio, with
    r = (TP + 1) / (reference spans + 2)              its recall of the reference's spans
    f = (FP + 1) / (false candidates + 2)             the share of the spans someone proposed that the reference
                                                      lacks (its false candidates) that the source has

This is the one-step Dawid–Skene model with one sensitivity and one false-positive rate per source: with the
sources independent given the truth, a source having a span adds log(r/f) to the log-odds that the span is
true and one lacking it subtracts log((1-f)/(1-r)), so the log-odds that state y is right rather than state
x sums, over the sources voting y, log(r/f) + log((1-f)/(1-r)) = weight, minus the same over those voting x.
The candidate's score is that log-odds for its proposal against the reference's state: the weight of the
sources voting for the proposal minus the weight of those voting for the reference. The proposal is, for a
reference span, the state of its place with the most weight: an overlapping span it lacks (``type``: same
boundaries; ``boundaries``: others) or nothing there (``spurious``); for a span the reference lacks, adding it
(``missing``; where several spans it lacks overlap, the heaviest). A positive score is a candidate; ranks order
a reference's candidates by score (1 = the most likely error). Ten weak sources (weight near 0: they find the
reference's spans about as often as they add false ones) then do not outvote three strong ones.

Everything is computed from arrays (the span ids of ``ItemCounts`` and per-item counts), a source at a time;
the pairs of spans sharing a character are found once for every reference (``Places``), and which sources
have a span, or one overlapping it, are bit columns over each reference's pool.
docs/gold-errors.md checks the ranking against CoNLL++'s corrections of CoNLL-2003 (bench/gold_errors_conll.py).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from refsens_report import __version__, browser, formatting
from refsens_report.analyses.base import Analysis, AuditContext, Partitioned, Section
from refsens_report.analyses.disagreements import (
    JSON_ESCAPED,
    WHOLE_TEXT,
    ListedSpan,
    SpanTexts,
    TextPiece,
    csv_cell,
    highlight,
    labelled_on,
    object_array,
    python_order,
    span_texts,
    spans_json,
    spreadsheet_cells,
    text_windows,
)
from refsens_report.counts import id_dtype, overlap_edges
from refsens_report.figures import Figure
from refsens_report.results import FileText
from refsens_report.spill import Runs
from refsens_report.tables import Table, count_cell, label, mark_repeats
from refsens_report.view import ResultsView

KEY = "gold_errors"
FILE = "gold-error-candidates"  # the files' stem: gold-error-candidates.jsonl and .csv
TOP = 20  # candidates per reference the section (and results.json) list; the files hold all
PRINT_CANDIDATES = 10  # of those, the candidates per reference the PDF prints (the site shows TOP)
SCORE_DECIMALS = 3  # the score as written; ranks follow the written score
CONTEXT = 30  # characters of text either side of a candidate the section shows
PRINT_CONTEXT = 12  # of those, the characters either side the PDF prints (the site and the files: CONTEXT)
KINDS = ("type", "boundaries", "missing", "spurious")  # what a candidate proposes instead of the reference's state
OUTPUTS_ONLY = "outputs"  # [report] error_evidence: the outputs alone (config.ERROR_EVIDENCE)
SPANS_SOURCES = ',"spans_sources":{'  # where a JSON line's sources' spans begin (PartitionedCandidates cuts there)


def sources_of(context: AuditContext, reference: str) -> list[str]:
    """Return the labellings whose spans are the evidence about a reference: the outputs, then (unless
    ``error_evidence = "outputs"``) the other references, in config order, each once, never the reference."""
    roles = context.config.roles
    names = list(roles.outputs)
    if context.config.report.error_evidence != OUTPUTS_ONLY:
        names += roles.references
    return [name for name in dict.fromkeys(names) if name != reference]


def items_of(context: AuditContext) -> np.ndarray | None:
    """Return the items candidates are looked for on (the audited items), None when there are none."""
    audited = context.subsets.audited
    return audited if audited is not None and audited.any() else None


def evidence_of(context: AuditContext) -> list[tuple[str, list[str]]]:
    """Return each reference candidates are looked for in, with its sources (``sources_of``), in config order:
    those with sources, none without audited items (``items_of``)."""
    if items_of(context) is None:
        return []
    found = [(reference, sources_of(context, reference)) for reference in context.config.roles.references]
    return [(reference, sources) for reference, sources in found if sources]


@dataclass(frozen=True, eq=False)
class Pool:
    """The spans voted on for one reference: every strict span id the reference or a source has on the items,
    in (item, span) order, with its item and whether the reference has it."""

    ids: np.ndarray
    item: np.ndarray
    ours: np.ndarray

    @cached_property
    def lacking(self) -> np.ndarray:
        """Per item, the spans of the pool the reference lacks (its false candidates there), counted once for
        every source's weight."""
        return np.bincount(self.item[~self.ours], minlength=int(self.item.max()) + 1 if len(self.item) else 0)


def pool_of(counts: Any, reference: str, sources: Sequence[str], mask: np.ndarray) -> Pool:
    """Return the spans voted on: every strict span the reference or a source has on the items of ``mask``."""
    in_reference = np.zeros(len(counts._strict_start), dtype=bool)
    in_reference[counts.ids("strict", reference)] = True
    pooled = in_reference.copy()
    for source in sources:
        pooled[counts.ids("strict", source)] = True
    ids = np.flatnonzero(pooled)  # strict ids are item-major: (item, start, end, type) order
    ids = ids[mask[counts.item_of("strict", ids)]]
    return Pool(ids, counts.item_of("strict", ids), in_reference[ids])


def leave_one_out_weight(counts: Any, reference: str, source: str, mask: np.ndarray, pool: Pool) -> np.ndarray:
    """Return the source's vote weight on the item of each pool span (0 where the source is absent): the log
    diagnostic odds ratio of its recall and false-positive rate against the reference over the other items of
    ``mask`` where it is present (add-one smoothed)."""
    return item_weight(counts, reference, source, mask, pool)[pool.item]


def item_weight(counts: Any, reference: str, source: str, mask: np.ndarray, pool: Pool) -> np.ndarray:
    """Return ``leave_one_out_weight`` per item of the record (0 where the source is absent).

    An item's two log-odds depend on its own few counts alone (its TP and reference spans; its FP and false
    candidates): each is computed once per pair of counts in their range (as the formula computes it for the
    items, so the same float) and looked up, unless the range is large."""
    return _Weigher(counts, reference, mask, pool).weight(source)


class _Weigher:
    """``item_weight`` for one reference and pool, a source at a time: the reference's counts per item (its
    spans and false candidates, as int32: the same integers, half the bytes) read once for every source, and
    for a source present wherever the reference is, their sums and largest values too.

    ``totals``, when the counts are a part of the record (a partition's): per source, the record's ``sums``, which
    the weights take in place of the part's own. An item's weight depends on its own counts and these four sums
    alone, so each item's is the float the whole record's counts give."""

    def __init__(
        self,
        counts: Any,
        reference: str,
        mask: np.ndarray,
        pool: Pool,
        totals: Mapping[str, Sequence[int]] | None = None,
    ):
        self.counts, self.reference, self.mask, self.totals = counts, reference, mask, totals
        self.items = int(np.count_nonzero(mask))
        self.spans = counts.size("strict", reference).astype(np.int32, copy=False) * mask
        lacking = pool.lacking
        false = np.zeros(counts.n_items, dtype=np.int32)
        false[: len(lacking)] = lacking
        self.false = false * mask
        self.known = {"spans": _Tries(self.spans), "false": _Tries(self.false)}

    def weight(self, source: str) -> np.ndarray:
        counts = self.counts
        whole = None if self.totals is None else [np.int64(total) for total in self.totals[source]]
        if whole is None and self.items == counts.n_items and counts.has(source).all():  # nothing masked
            tp = counts.tp("strict", source, self.reference).astype(np.int32, copy=False)
            fp = counts.size("strict", source).astype(np.int32, copy=False) - tp
            return _odds(tp, self.known["spans"]) - _odds(fp, self.known["false"])
        present, tp, fp = self._counted(source)
        everywhere = whole is None and int(np.count_nonzero(present)) == self.items  # on every item of the mask
        if everywhere:
            spans, false = self.known["spans"], self.known["false"]
        elif whole is None:
            spans, false = _Tries(self.spans * present), _Tries(self.false * present)
        else:
            spans, false = _Tries(self.spans * present, whole[1]), _Tries(self.false * present, whole[3])
        odds = [
            _odds(tp, spans, None if whole is None else whole[0]),
            _odds(fp, false, None if whole is None else whole[2]),
        ]
        return np.where(present, odds[0] - odds[1], 0.0)

    def _counted(self, source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return where the source is present on the mask's items, and its TP and FP against the reference
        there (0 elsewhere)."""
        counts = self.counts
        present = self.mask & counts.has(source)
        tp = counts.tp("strict", source, self.reference).astype(np.int32, copy=False) * present
        fp = counts.size("strict", source).astype(np.int32, copy=False) * present - tp
        return present, tp, fp

    def sums(self, source: str) -> tuple[int, int, int, int]:
        """Return the source's four sums over the items where it is present, which its weight on any item reads
        besides the item's own counts: its TP, the reference's spans, its FP and the reference's false
        candidates (``totals``: a partition's sums add up to the record's)."""
        present, tp, fp = self._counted(source)
        return (
            int(tp.sum(dtype=np.int64)),
            int((self.spans * present).sum(dtype=np.int64)),
            int(fp.sum(dtype=np.int64)),
            int((self.false * present).sum(dtype=np.int64)),
        )


@dataclass(frozen=True, eq=False)
class _Tries:
    """Non-negative counts per item (the second of ``_log_odds``' pair), with their sum and largest value.
    ``whole``: the sum over the whole record, when the counts are a part of it."""

    values: np.ndarray
    whole: Any = None

    @cached_property
    def total(self) -> Any:
        return self.values.sum(dtype=np.int64) if self.whole is None else self.whole

    @cached_property
    def top(self) -> int:
        return int(self.values.max(initial=0))


def _odds(hits: np.ndarray, tries: _Tries, whole: Any = None) -> np.ndarray:
    """``_log_odds(hits, tries.values, 1, 2)`` for non-negative counts: the same floats (the same formula on
    the same integers, looked up per pair of counts when at most LOOKUP pairs span their range). ``whole``: the
    hits summed over the whole record, when the counts are a part of it (as ``tries.whole``)."""
    total_hits = hits.sum(dtype=np.int64) if whole is None else whole
    total_tries, width = tries.total, tries.top + 1
    if len(hits) and (int(hits.max()) + 1) * width <= LOOKUP:
        grid = np.arange((int(hits.max()) + 1) * width, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):  # pairs no item has (more hits than tries)
            rate = (total_hits - grid // width + 1) / (total_tries - grid % width + 2)
            odds = np.log(rate / (1 - rate))
        return odds[
            hits * np.int32(width) + tries.values
            if width * (int(hits.max()) + 1) < 2**31
            else hits.astype(np.int64) * width + tries.values
        ]
    return _log_odds(hits.astype(np.int64), tries.values.astype(np.int64), 1, 2, (total_hits, total_tries))


LOOKUP = 1 << 16  # the most pairs of counts ``_log_odds`` computes once each and looks up


def _log_odds(
    hits: np.ndarray, tries: np.ndarray, add: int, add_tries: int, totals: tuple[Any, Any] | None = None
) -> np.ndarray:
    """Return per item log(rate / (1 - rate)) of rate = (hits summed - hits + add) / (tries summed - tries +
    add_tries): the rate over the other items, add-one smoothed; computed once per pair (hits, tries) of the
    items (the same float as per item), then looked up, when there are at most LOOKUP pairs in their range.
    ``totals``: the two sums, when given (over the whole record, the items a part of it)."""
    total_hits, total_tries = (hits.sum(), tries.sum()) if totals is None else totals
    if len(hits) and hits.min() >= 0 and tries.min() >= 0:
        width = int(tries.max()) + 1
        if (int(hits.max()) + 1) * width <= LOOKUP:
            grid = np.arange((int(hits.max()) + 1) * width, dtype=np.int64)
            with np.errstate(divide="ignore", invalid="ignore"):  # pairs no item has (more hits than tries)
                rate = (total_hits - grid // width + add) / (total_tries - grid % width + add_tries)
                odds = np.log(rate / (1 - rate))
            return odds[hits * width + tries]
    rate = (total_hits - hits + add) / (total_tries - tries + add_tries)
    return np.log(rate / (1 - rate))


def weighted_sums(
    counts: Any,
    reference: str,
    sources: Sequence[str],
    mask: np.ndarray,
    pool: Pool,
    having: Sequence[np.ndarray],
    near: np.ndarray,
    having_item: Sequence[np.ndarray] | None = None,
    totals: Mapping[str, Sequence[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return per pool span the ``leave_one_out_weight`` of the sources having it summed (``having``: each
    source's pool positions; ``having_item``, when the caller has them: their items), and of those with nothing
    overlapping it (``near`` unset) summed. The sums add the sources one after another in their order, each
    weight the same float, as adding every source's weight or 0 to every span does (so every score is the same
    float); but a source's weight goes only to the spans it has, and the empty sums are taken once per run of
    spans on one item with the same sources near them. ``totals``: as ``_Weigher``'s, for a part of the record."""
    votes, size = np.zeros(len(pool.ids)), len(pool.ids)
    runs = np.ones(size, dtype=bool)
    if size:
        runs[1:] = (pool.item[1:] != pool.item[:-1]) | (near[:, 1:] != near[:, :-1]).any(axis=0)
    first = np.flatnonzero(runs)
    first_item, first_near = pool.item[first], near[:, first]
    empty = np.zeros(len(first))
    weigher = _Weigher(counts, reference, mask, pool, totals)
    for number, source in enumerate(sources):
        weight = weigher.weight(source)
        on = pool.item[having[number]] if having_item is None else having_item[number]
        np.add.at(votes, having[number], weight[on])  # positions distinct: as +=, and faster (one pass)
        bit = np.uint64(1) << np.uint64(number % 64)
        clear = np.flatnonzero((first_near[number // 64] & bit) == 0)  # the runs it has nothing near: 0 elsewhere
        np.add.at(empty, clear, weight[first_item[clear]])
    return votes, empty[np.cumsum(runs) - 1]


@dataclass(frozen=True, eq=False)
class Places:
    """Every strict span some labelling of ``names`` has, and every pair of them on one item sharing a character
    (both ways, and a span with itself unless it is empty), sorted by the first: what each reference's pool
    keeps of it. Computed once for the analysis and shared by every reference (their pools are parts of it)."""

    names: frozenset[str]
    ids: np.ndarray
    first: np.ndarray  # positions into ids
    second: np.ndarray
    held: dict[str, np.ndarray] = field(default_factory=dict)  # per labelling, the positions of its spans
    held_item: dict[str, np.ndarray] = field(default_factory=dict)  # and their items
    # with at most 64 labellings (``labels``, in the order first asked for): per place, bit g set when labels[g]
    # has it (``bits``) and when labels[g] has a span sharing a character with it (``near``); each reference's
    # pool reads its sources' bits off these (``_from_places``), not a pass per source and reference
    labels: tuple[str, ...] = ()
    bits: np.ndarray | None = None
    near: np.ndarray | None = None
    item: np.ndarray | None = None  # per place, its item

    def of(self, counts: Any, name: str) -> np.ndarray:
        """Return the positions of a labelling's spans among the places (found once per labelling)."""
        if name not in self.held:
            self.held[name] = self.position[counts.ids("strict", name)]
        return self.held[name]

    def items_of(self, counts: Any, name: str) -> np.ndarray:
        """Return the items of a labelling's spans, in the order of ``of`` (found once per labelling, for every
        reference whose pool is every place; int32 when the items fit, as the positions)."""
        if name not in self.held_item:
            item = counts.item_of("strict", counts.ids("strict", name))
            self.held_item[name] = item.astype(id_dtype(counts.n_items), copy=False)
        return self.held_item[name]

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of two different places sharing a character (``first``, ``second`` without a span paired
        with itself, which never ranks), still sorted by the first."""
        other = self.first != self.second
        return self.first[other], self.second[other]

    @cached_property
    def position(self) -> np.ndarray:
        """Per strict id up to the last place's, its position among the places (-1: none): looked up, where a
        binary search per span strays over the whole array."""
        index = id_dtype(len(self.ids))
        position = np.full(int(self.ids[-1]) + 1 if len(self.ids) else 0, -1, dtype=index)
        position[self.ids] = np.arange(len(self.ids), dtype=index)
        return position


def places_of(counts: Any, names: Iterable[str], notes: dict[str, Any] | None = None) -> Places:
    """Return the places of the labellings ``names``; with ``notes``, kept there and reused for any names
    among those of the last computed."""
    ordered = list(names)
    names = frozenset(ordered)
    known = notes.get("places") if notes is not None else None
    if known is not None and names <= known.names:
        return known
    pooled = np.zeros(len(counts._strict_start), dtype=bool)
    for name in names:
        pooled[counts.ids("strict", name)] = True
    ids = np.flatnonzero(pooled)  # item-major, as overlap_edges needs
    one, two = _overlaps(counts, ids, ids)  # the same spans both sides: gathered once
    index = id_dtype(len(ids))
    first, second = one.astype(index), two.astype(index)
    if len(first) > 1 and not bool(np.all(first[1:] >= first[:-1])):  # overlap_edges gives them sorted already
        order = np.argsort(first, kind="stable")
        first, second = first[order], second[order]
    labels = tuple(dict.fromkeys(ordered))
    places = Places(names, ids, first, second, labels=labels, item=counts.item_of("strict", ids))
    if len(labels) <= 64:  # one 64-bit word per place holds every labelling
        bits = np.zeros(len(ids), dtype=np.uint64)
        for number, name in enumerate(labels):
            bits[places.of(counts, name)] |= np.uint64(1) << np.uint64(number)
        object.__setattr__(places, "bits", bits)
        object.__setattr__(places, "near", _overlapping(places.first, places.second, bits[None, :])[0])
    if notes is not None:
        notes["places"] = places
    return places


def _source_bits(
    counts: Any, sources: Sequence[str], places: Places, local: np.ndarray, size: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Return per pool span (``size`` of them) which sources have it: bit ``k % 64`` of word ``k // 64`` for
    source k (``local``: each place's position in the pool, -1 when not in it); and each source's pool positions
    (ascending)."""
    bits = np.zeros((max(1, -(-len(sources) // 64)), size), dtype=np.uint64)
    having = []
    for number, source in enumerate(sources):
        found = local[places.of(counts, source)]
        found = found[found >= 0]
        bits[number // 64, found] |= np.uint64(1) << np.uint64(number % 64)
        having.append(found)
    return bits, having


def _extracted(bits: np.ndarray, labels: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """Return ``bits`` (bit g for labels[g]) renumbered: bit k for names[k] (every name among the labels), one
    shift per run of names whose labels follow each other (the sources of a reference: one or two runs)."""
    found = np.zeros(len(bits), dtype=np.uint64)
    at = {label: number for number, label in enumerate(labels)}
    number = 0
    while number < len(names):
        stop = number + 1
        while stop < len(names) and at[names[stop]] == at[names[number]] + stop - number:
            stop += 1
        shift = at[names[number]] - number
        moved = bits >> np.uint64(shift) if shift >= 0 else bits << np.uint64(-shift)
        found |= moved & np.uint64(((1 << (stop - number)) - 1) << number)
        number = stop
    return found


def _from_places(
    counts: Any, places: Places, reference: str, sources: Sequence[str], mask: np.ndarray, every_pair: bool = False
) -> tuple[Pool, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray] | None]:
    """Return what ``candidates_of`` finds per reference with ``pool_of``, ``_pool_edges``, ``_source_bits`` and
    ``_overlapping``, read off the places' bits (``Places.bits``/``near``, at most 64 labellings, the reference
    and its sources among them): (the pool, the pairs of pool spans sharing a character (``one``, ``two``; a
    span with itself left out unless ``every_pair``: it never ranks), which sources have each pool span, which
    have one sharing a character with it, each source's pool positions, and their items when the pool is every
    place, else None). The same pool, pairs and bits: the pool is the places the reference or a source has on
    the items of ``mask``, in the places' order (strict id order)."""
    at = {label: number for number, label in enumerate(places.labels)}
    wanted = np.uint64(sum(1 << at[name] for name in {reference, *sources}))
    keep = mask[places.item] & ((places.bits & wanted) != 0)
    ours = ((places.bits >> np.uint64(at[reference])) & np.uint64(1)).astype(bool)
    first, second = (places.first, places.second) if every_pair else places.pairs
    if keep.all():  # the pool is every place
        pool = Pool(places.ids, places.item, ours)
        one, two = first, second
        bits, near = places.bits, places.near
        having = [places.of(counts, source) for source in sources]
        having_item = [places.items_of(counts, source) for source in sources]
    else:
        pool = Pool(places.ids[keep], places.item[keep], ours[keep])
        local = np.full(len(places.ids), -1, dtype=np.int64)
        local[keep] = np.arange(len(pool.ids))
        one, two = local[first], local[second]
        both = (one >= 0) & (two >= 0)
        one, two = one[both], two[both]  # still sorted by one
        bits, near = places.bits[keep], places.near[keep]
        having = []
        for source in sources:
            found = local[places.of(counts, source)]
            having.append(found[found >= 0])
        having_item = None  # weighted_sums reads them off the pool
    bits, near = (_extracted(found, places.labels, sources)[None, :] for found in (bits, near))
    return pool, one, two, bits, near, having, having_item


def _bit(bits: np.ndarray, number: int, at: np.ndarray | slice = slice(None)) -> np.ndarray:
    """Return whether source ``number`` is set in ``bits`` (of ``_source_bits``) at ``at``."""
    return ((bits[number // 64, at] >> np.uint64(number % 64)) & np.uint64(1)).astype(bool)


def _pool_edges(places: Places, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return each place's position in the pool (``ids``, a part of the places; -1: not in it) and the pairs of
    pool spans (positions into ``ids``) sharing a character, both ways and each non-empty span with itself,
    sorted by the first."""
    if len(ids) == len(places.ids):  # the pool is every place (it is a part of them)
        return np.arange(len(ids)), places.first.astype(np.int64), places.second.astype(np.int64)
    local = np.full(len(places.ids), -1, dtype=np.int64)
    local[places.position[ids]] = np.arange(len(ids))
    one, two = local[places.first], local[places.second]
    keep = (one >= 0) & (two >= 0)
    return local, one[keep], two[keep]  # still sorted by one


def _overlapping(one: np.ndarray, two: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Return per pool span which sources have a span sharing a character with it: the OR of ``bits`` (of
    ``_source_bits``) over the spans paired with it (``_pool_edges``)."""
    found = np.zeros_like(bits)
    if len(one):
        starts = np.flatnonzero(np.concatenate([[True], one[1:] != one[:-1]]))
        for word in range(len(bits)):
            found[word, one[starts]] = np.bitwise_or.reduceat(bits[word, two], starts)
    return found


def _overlaps(counts: Any, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return every pair (index into first, index into second) of strict span ids on one item sharing a
    character, whatever their types."""
    item = counts._id_item["strict"]
    spans = [
        (item[ids], counts._strict_start[ids], counts._strict_end[ids], np.zeros(len(ids), dtype=np.int64))
        for ids in ((first,) if first is second else (first, second))
    ]
    return overlap_edges(spans[0], spans[-1])


def _first_per(group: np.ndarray, *keys: np.ndarray) -> np.ndarray:
    """Return the positions of the first entry of each group value in the order of ``keys`` (last key first)."""
    order = np.lexsort((*keys, group))
    return order[np.concatenate([[True], np.diff(group[order]) != 0])] if len(order) else order


def _heaviest_per(group: np.ndarray, position: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Return, per group value, the position (into the arrays) of its entry with the most ``weight``, of those
    the one with the least ``position``: ``_first_per(group, position, -weight)``, in group order. Without a
    sort when ``group`` is sorted, ``position`` distinct within a group and no weight NaN (reduced per run)."""
    if not len(group) or (np.diff(group) < 0).any() or np.isnan(weight).any():
        return _first_per(group, position, -weight)
    starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    run = np.cumsum(np.concatenate([[True], group[1:] != group[:-1]])) - 1
    heaviest = weight == np.maximum.reduceat(weight, starts)[run]
    least = np.minimum.reduceat(np.where(heaviest, position, np.iinfo(np.int64).max), starts)[run]
    found = np.flatnonzero(heaviest & (position == least))
    if len(found) != len(starts):  # a position twice in a group: as the sort takes it
        return _first_per(group, position, -weight)
    return found


@dataclass(frozen=True, eq=False)
class Candidates:
    """One reference's candidate errors, in rank order (one entry per candidate).

    ``item``; ``at``: the reference's span at the place (strict id), -1 for a missing span; ``proposal``: the
    span proposed (strict id), -1 for a removal; ``kind``: code into KINDS; ``score``: rounded as written;
    ``support``/``opposed``: per source (rows, in ``sources`` order), whether it votes for the proposal / for
    the reference's state.
    """

    reference: str
    sources: tuple[str, ...]
    item: np.ndarray
    at: np.ndarray
    proposal: np.ndarray
    kind: np.ndarray
    score: np.ndarray
    support: np.ndarray
    opposed: np.ndarray

    @property
    def n(self) -> int:
        return len(self.item)


def candidates_of(
    context: AuditContext,
    reference: str,
    mask: np.ndarray,
    equal_weights: bool = False,
    weigh: Callable[..., np.ndarray] | None = None,
    extra: Callable[..., Callable[..., tuple[np.ndarray, np.ndarray]] | None] | None = None,
) -> Candidates:
    """Return the reference's candidate errors on the items of ``mask`` where it is present, in rank order.

    ``equal_weights``: every source present weighs 1, a plain vote; ``weigh``: another weight, called as
    ``leave_one_out_weight`` is; ``extra``: another source or a prior, called with the counts, the record's
    table, the pool, its pairs of spans sharing a character and the votes and empty weights per pool span (to
    which it may add a source's), returning None or a function of the reference's spans, their proposals and the
    missing spans (pool positions) giving terms added to their scores (the benchmark's comparisons,
    bench/gold_errors_conll.py)."""
    roles = context.config.roles
    return ranked(
        context.counts,
        context.record.table,
        reference,
        sources_of(context, reference),
        [*roles.outputs, *roles.references],
        mask,
        context.notes.setdefault(KEY, {}),
        equal_weights,
        weigh,
        extra,
    )


def ranked(
    counts: Any,
    table: Any,
    reference: str,
    sources: Sequence[str],
    labellings: Sequence[str],
    mask: np.ndarray,
    notes: dict[str, Any],
    equal_weights: bool = False,
    weigh: Callable[..., np.ndarray] | None = None,
    extra: Callable[..., Callable[..., tuple[np.ndarray, np.ndarray]] | None] | None = None,
    totals: Mapping[str, Sequence[int]] | None = None,
) -> Candidates:
    """``candidates_of`` on ``counts`` and their record's ``table``: the reference's ``sources``; ``labellings``:
    the outputs and references, whose places (``places_of``, kept in ``notes``) every reference's pool reads.
    ``totals``: when the counts are a part of the record (a partition's), the record's sums the weights read
    (``_Weigher``): the candidates are then the record's on the part's items, with the same scores, in the
    record's order restricted to them."""
    mask = mask & counts.has(reference)
    places = places_of(counts, [*labellings, reference, *sources], notes)
    if places.bits is not None:  # read off the places' bits
        found = _from_places(counts, places, reference, sources, mask, extra is not None)
        pool, one, two, bits, near, having, having_item = found
        ids = pool.ids
    else:
        pool = pool_of(counts, reference, sources, mask)
        ids = pool.ids
        local, one, two = _pool_edges(places, ids)  # the pool's pairs of spans sharing a character
        bits, having = _source_bits(counts, sources, places, local, len(ids))  # which sources have each pool span
        near = _overlapping(one, two, bits)  # which sources have a span overlapping it
        having_item = None
    # per pool span: the weight of the sources having it (votes) and of those with nothing overlapping it (empty)
    if weigh is None and not equal_weights:
        votes, empty = weighted_sums(counts, reference, sources, mask, pool, having, near, having_item, totals)
    else:
        votes, empty = np.zeros(len(ids)), np.zeros(len(ids))
        for number, source in enumerate(sources):
            weight = (weigh or leave_one_out_weight)(counts, reference, source, mask, pool)
            if equal_weights:
                weight = (mask & counts.has(source))[pool.item].astype(float)
            votes += np.where(_bit(bits, number), weight, 0)
            empty += np.where(~_bit(near, number), weight, 0)
    prior = extra(counts, table, pool, one, two, votes, empty) if extra is not None else None
    # a reference span against the heaviest other state of its place: a span it lacks overlapping it, or nothing
    spans, others = np.flatnonzero(pool.ours), np.flatnonzero(~pool.ours)
    rank = np.cumsum(pool.ours) - 1, np.cumsum(~pool.ours) - 1  # a pool position's index into spans / others
    ours_one, ours_two = pool.ours[one], pool.ours[two]
    across = ours_one & ~ours_two
    edge_span, edge_other = rank[0][one[across]], rank[1][two[across]]
    proposal = np.full(len(spans), -1, dtype=np.int64)
    best = empty[spans].copy()
    votes_others = votes[others]
    first = _heaviest_per(edge_span, edge_other, votes_others[edge_other])
    rival = others[edge_other[first]]
    heavier = votes[rival] > best[edge_span[first]]  # a span must outweigh nothing there
    proposal[edge_span[first][heavier]] = rival[heavier]
    best[edge_span[first][heavier]] = votes[rival][heavier]
    # a span the reference lacks where it has nothing overlapping: adding it, against nothing there, unless an
    # overlapping span it lacks is heavier (equal: the first in span order)
    lacking = np.ones(len(others), dtype=bool)
    lacking[edge_other] = False
    among = ~(ours_one | ours_two)
    edge_one, edge_two = rank[1][one[among]], rank[1][two[among]]
    votes_one, votes_two = votes_others[edge_one], votes_others[edge_two]
    heavier_neighbour = (votes_two > votes_one) | ((votes_two == votes_one) & (edge_two < edge_one))
    lacking[edge_one[heavier_neighbour]] = False
    missing = others[lacking]
    at = np.concatenate([spans, np.full(len(missing), -1, dtype=np.int64)])  # pool positions, -1: none
    offer = np.concatenate([proposal, missing])
    score = np.concatenate([best - votes[spans], votes[missing] - empty[missing]])
    if prior is not None:
        score = score + np.concatenate(prior(spans, proposal, missing))
    score = np.round(score, SCORE_DECIMALS)
    keep = score > 0
    at, offer, score = at[keep], offer[keep], score[keep]
    item = pool.item[np.where(at >= 0, at, offer)]
    at_pool, offer_pool = at, offer
    at = np.where(at >= 0, ids[np.maximum(at, 0)], -1)  # strict ids from here on
    offer = np.where(offer >= 0, ids[np.maximum(offer, 0)], -1)
    kind = _kinds(counts, at, offer)
    # rank: score, then language and id (as Python compares strings), the place, the kind and the proposal
    # (the ids ranked among the candidates' items alone: the same order, without sorting every item's id)
    listed, where = np.unique(item, return_inverse=True)
    by_id = python_order([str(found) for found in table.ids[listed].tolist()])[where]
    by_language = python_order(table.languages)[table.language[item]]
    order = np.lexsort((offer, kind, np.where(at >= 0, at, offer), by_id, by_language, -score))
    item, at, offer, kind, score = item[order], at[order], offer[order], kind[order], score[order]
    support, opposed = _votes(counts, sources, mask, item, at_pool[order], offer_pool[order], kind, bits, near)
    return Candidates(reference, tuple(sources), item, at, offer, kind, score, support, opposed)


def _kinds(counts: Any, at: np.ndarray, offer: np.ndarray) -> np.ndarray:
    """Return each candidate's kind code: missing (no reference span), spurious (no proposal), type (same
    boundaries), boundaries."""
    at_id, offer_id = np.maximum(at, 0), np.maximum(offer, 0)
    same = (counts._strict_start[at_id] == counts._strict_start[offer_id]) & (
        counts._strict_end[at_id] == counts._strict_end[offer_id]
    )
    return np.select(
        [at < 0, offer < 0, same],
        [KINDS.index("missing"), KINDS.index("spurious"), KINDS.index("type")],
        KINDS.index("boundaries"),
    )


def _votes(
    counts: Any,
    sources: Sequence[str],
    mask: np.ndarray,
    item: np.ndarray,
    at: np.ndarray,
    offer: np.ndarray,
    kind: np.ndarray,
    bits: np.ndarray,
    near: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Return per source and candidate whether the source votes for the proposal (it has the proposed span; for
    a removal, nothing overlapping the reference's) and for the reference's state (it has the reference's span;
    for a missing span, nothing overlapping the proposed one). ``at``/``offer``: pool positions (-1: none);
    ``bits``/``near``: per pool span, the sources having it / a span overlapping it."""
    support = np.zeros((len(sources), len(item)), dtype=bool)
    opposed = np.zeros((len(sources), len(item)), dtype=bool)
    missing, spurious = kind == KINDS.index("missing"), kind == KINDS.index("spurious")
    place = np.where(at >= 0, at, offer)
    at_some, offer_some = np.maximum(at, 0), np.maximum(offer, 0)
    # the candidates' words, read once (not a gather from every pool span's word per source)
    near, bits_at, bits_offer = near[:, place], bits[:, at_some], bits[:, offer_some]
    on_mask = mask[item]
    for row, source in enumerate(sources):
        here = on_mask & counts.has(source)[item]
        clear = ~_bit(near, row)
        with_reference = _bit(bits_at, row) & (at >= 0)
        with_proposal = _bit(bits_offer, row) & (offer >= 0)
        support[row] = here & np.where(spurious, clear, with_proposal)
        opposed[row] = here & np.where(missing, clear, with_reference)
    return support, opposed


def candidates(context: AuditContext) -> Iterator[Candidates]:
    """Yield every reference's candidates, in config order, each computed when asked for and kept by no one here:
    the summary keeps what it prints of each (counts and the top TOP) and a build's files compute them again,
    a reference at a time, so nothing holds every reference's candidates (at a million items of
    generate_scale's shape they were about 1 GB kept to the audit's end). The places the references share
    (``places_of``) are let go once the last reference is done."""
    mask = items_of(context)
    if mask is None:
        return
    notes = context.notes.setdefault(KEY, {})
    try:
        for reference, _ in evidence_of(context):
            yield candidates_of(context, reference, mask)
    finally:
        notes.pop("places", None)


# --- the candidates as rows: the files and results.json ----------------------------------------------


def _span_lists(counts: Any, span_ids: np.ndarray) -> list[list[Any] | None]:
    """Return ``_span`` of each strict id (None for -1), computed for them all at once."""
    type_names = [str(name) for name in counts.type_names]
    some = np.maximum(span_ids, 0)
    return [
        [start, end, type_names[code]] if span_id >= 0 else None
        for span_id, start, end, code in zip(
            span_ids.tolist(),
            counts._strict_start[some].tolist(),
            counts._strict_end[some].tolist(),
            counts._strict_type[some].tolist(),
        )
    ]


def rows_of(
    context: AuditContext,
    found: Candidates,
    limit: int | None = None,
    with_sources: int = 0,
    source_spans: Mapping[str, Mapping[int, str]] | None = None,
) -> list[dict[str, Any]]:
    """Return the candidates (the first ``limit``) as self-describing rows, keys in a fixed order: the item's text
    (unless ``[report] show_text = false``), the reference's spans on it and those with the proposal made, and on
    the first ``with_sources`` rows each source's spans on the item (what the browser shows beside them), as the
    JSON text of ``{"source": [[start,end,"type"],...],...}`` in an ``orjson.Fragment``. ``source_spans``:
    ``spans_json`` of each source on (at least) those rows' items, when the caller has them. A line of the JSON
    Lines file is what orjson writes of a row, and a line of the CSV what ``CSV_COLUMNS`` says of it, but
    ``files`` builds both column by column (``written_lines``), not from these rows; the summary and the tests
    read these.

    The spans are looked up for all rows at once (the reference's by item with one binary search), not row by
    row."""
    counts, table = context.counts, context.record.table
    n = found.n if limit is None else min(limit, found.n)
    items = found.item[:n]
    shown = found.item[:with_sources]
    sources = (
        {source: (source_spans or {}).get(source) or spans_json(counts, source, shown) for source in found.sources}
        if with_sources
        else {}
    )
    keys = {source: orjson.dumps(source).decode("utf-8") + ":" for source in sources}
    show_text = context.config.report.show_text and table.text is not None
    reference_ids = counts.ids("strict", found.reference)
    reference_item = counts.item_of("strict", reference_ids)
    wanted = np.zeros(counts.n_items, dtype=bool)
    wanted[items] = True
    on_items = wanted[reference_item]
    reference_ids, reference_item = reference_ids[on_items], reference_item[on_items]
    reference_spans = _span_lists(counts, reference_ids)
    low = np.searchsorted(reference_item, items).tolist()
    high = np.searchsorted(reference_item, items, side="right").tolist()
    at_spans = _span_lists(counts, found.at[:n])
    offer_spans = _span_lists(counts, found.proposal[:n])
    ids = [str(found_id) for found_id in table.ids[items].tolist()]
    languages = [table.languages[code] for code in table.language[items].tolist()]
    kinds = [KINDS[code] for code in found.kind[:n].tolist()]
    scores = found.score[:n].tolist()
    support, opposed = found.support[:, :n].T.tolist(), found.opposed[:, :n].T.tolist()
    evidence = context.config.report.error_evidence
    rows = []
    for number, item in enumerate(items.tolist()):
        at_span, offer_span = at_spans[number], offer_spans[number]
        place = at_span if at_span is not None else offer_span
        spans = [list(span) for span in reference_spans[low[number] : high[number]]]
        changed = sorted(
            [list(span) for span in spans if span != at_span] + ([list(offer_span)] if offer_span is not None else [])
        )
        text = table.text[item] if show_text else None
        row = {
            "reference": found.reference,
            "rank": number + 1,
            "score": scores[number],
            "id": ids[number],
            "language": languages[number],
            "proposed": kinds[number],
            "start": place[0],
            "end": place[1],
            "type": at_span[2] if at_span is not None else None,
            "reference_span": at_span,
            "proposed_span": offer_span,
            "support": [s for s, votes in zip(found.sources, support[number]) if votes],
            "opposed": [s for s, votes in zip(found.sources, opposed[number]) if votes],
            "evidence": evidence,
        }
        if text is not None:
            row["text"] = text
        row["spans_reference"] = spans
        row["spans_proposed"] = changed
        if number < with_sources:
            row["spans_sources"] = orjson.Fragment(
                "{" + ",".join([keys[source] + spans[item] for source, spans in sources.items() if item in spans]) + "}"
            )
        rows.append(row)
    return rows


# the CSV for spreadsheets: one row per candidate, the spans' offsets and types in columns, source names joined
# by '; ' (team-written text that starts like a formula gets a leading apostrophe, as in the tables' CSVs)
CSV_COLUMNS = (
    "reference",
    "rank",
    "score",
    "id",
    "language",
    "proposed",
    "start",
    "end",
    "type",
    "proposed_start",
    "proposed_end",
    "proposed_type",
    "support",
    "n_support",
    "opposed",
    "n_opposed",
    "evidence",
    "text",
)


def files(context: AuditContext) -> Iterator[tuple[str, FileText]]:
    """Yield the candidate files written beside results.json: every candidate of every reference, by rank.

    The JSON Lines come as they are written: a reference's candidates are computed (``candidates``) when its
    lines are asked for, and let go before the next reference's; its CSV rows are kept meanwhile (a third of
    the size) and make the CSV file after them. So the JSON Lines' pieces are to be read before the CSV is
    asked for, as ``results.write_files`` and ``results.files_text`` read them.
    """
    if not evidence_of(context):
        return  # no reference has sources: no file
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(CSV_COLUMNS)
    table = [buffer.getvalue()]

    def json_lines() -> Iterator[str]:
        ahead = 0  # the candidates of the references before this one
        for reference in candidates(context):
            # the first browser.BROWSER_LINES rows, those the browser holds, carry the sources' spans
            held = max(browser.BROWSER_LINES - ahead, 0)
            ahead += reference.n
            lines, rows = reference_lines(context, reference, held)
            table.append("".join(rows))
            del reference, rows  # let go before the next reference's are made
            yield lines
            del lines

    yield f"{FILE}.jsonl", json_lines()
    if len(table) == 1:
        raise RuntimeError(f"{FILE}.csv was asked for before {FILE}.jsonl was read (gold_errors.files)")
    yield f"{FILE}.csv", table


def reference_lines(context: AuditContext, found: Candidates, held: int) -> tuple[str, list[str]]:
    """Return one reference's candidates as the JSON Lines file's text and the CSV's lines (``written_lines``), the
    first ``held`` with the sources' spans."""
    counts = context.counts
    shown = found.item[:held]
    source_spans = {name: spans_on(counts, name, shown) for name in found.sources} if held else {}
    reference_spans = spans_on(counts, found.reference, found.item)
    texts = span_texts(
        counts, [*(ids for ids, _ in source_spans.values()), reference_spans[0], found.at, found.proposal]
    )
    return written_lines(context, found, held, reference_spans, source_spans, texts)


class PartitionedCandidates:
    """``files`` of a partitioned record (``Analysis.partitioned_files``): the same bytes, the record never whole.

    The summary found each reference's candidates on the workers with the record's sums (``_partitioned``, which
    keeps them in the notes); here each partition's are found again from it alone with those sums (``ranked``:
    the record's candidates on its items, in the record's order), written as ``files`` writes them and spilled
    (``spill.Runs``), each line by its key in the rank order (``candidate_keys``) with its rank taken off. A file
    is the runs merged by key, each line given its rank again. A partition gives its first lines the sources'
    spans as many as the whole file's first ``browser.BROWSER_LINES`` can hold of the reference; merged, a line
    past them loses them again: the text from the last ``SPANS_SOURCES`` on, which no string value or source
    name can hold elsewhere (in JSON a string's quote is escaped; a source's key inside opens a list).
    """

    def __init__(self, partitioned: Partitioned, folder: Path):
        found = partitioned.notes.get(KEY, {}).get("partitioned")
        if found is None:
            raise RuntimeError("gold_errors.PartitionedCandidates: the summary found no candidates on the workers")
        self.evidence, self.totals, numbers = found
        roles = partitioned.config.roles
        self.labellings = [*roles.outputs, *roles.references]
        self.runs = [(Runs(folder, f"{number}.jsonl"), Runs(folder, f"{number}.csv")) for number in range(len(numbers))]
        self.held = [max(browser.BROWSER_LINES - ahead, 0) for ahead in np.cumsum([0, *numbers[:-1]]).tolist()]

    def add(self, context: AuditContext) -> None:
        """Spill one partition's candidates of each reference."""
        mask = items_of(context)
        if mask is None:
            return
        found = partition_ranked(context.counts, mask, self.evidence, self.labellings, self.totals)
        for made, (json_runs, csv_runs), most in zip(found, self.runs, self.held):
            if made is None:
                continue
            text, rows = reference_lines(context, made, min(most, made.n))
            keys = candidate_keys(context, made)
            json_prefix, csv_prefix = _rank_prefixes(made.reference)
            ranks = [str(rank) for rank in range(1, made.n + 1)]
            json_runs.add(
                (key, line[len(json_prefix) + len(rank) :] + "\n")
                for key, rank, line in zip(keys, ranks, text.split("\n"))
            )
            csv_runs.add((key, line[len(csv_prefix) + len(rank) :]) for key, rank, line in zip(keys, ranks, rows))

    def files(self) -> Iterator[tuple[str, FileText]]:
        """Yield the JSON Lines file, then the CSV: every reference's candidates by rank, merged as they are read."""
        if not self.evidence:
            return  # no reference has sources: no file

        def json_lines() -> Iterator[str]:
            for (reference, _), (json_runs, _), most in zip(self.evidence, self.runs, self.held):
                prefix = _rank_prefixes(reference)[0]

                def ranked_line(position: int, line: str, prefix: str = prefix, most: int = most) -> str:
                    if position >= most and (cut := line.rfind(SPANS_SOURCES)) >= 0:
                        line = line[:cut] + "}\n"
                    return f"{prefix}{position + 1}{line}"

                yield from json_runs.merged(ranked_line)

        def csv_lines() -> Iterator[str]:
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerow(CSV_COLUMNS)
            yield buffer.getvalue()
            for (reference, _), (_, csv_runs) in zip(self.evidence, self.runs):
                prefix = _rank_prefixes(reference)[1]
                yield from csv_runs.merged(lambda position, line, prefix=prefix: f"{prefix}{position + 1}{line}")

        yield f"{FILE}.jsonl", json_lines()
        yield f"{FILE}.csv", csv_lines()


def _rank_prefixes(reference: str) -> tuple[str, str]:
    """Return what comes before the rank on a reference's line of the JSON Lines file and of the CSV
    (``written_lines`` writes them, ``PartitionedCandidates`` ranks the merged lines after them)."""
    return f'{{"reference":{orjson.dumps(reference).decode("utf-8")},"rank":', spreadsheet_cells([reference])[0] + ","


def candidate_keys(context: AuditContext, found: Candidates) -> list[tuple[Any, ...]]:
    """Return each candidate's key in the rank order (``ranked``), in that order: its negated score, its language
    and id (compared as strings), the place (start, end and type name: on one item, strict ids order spans so, and
    type codes follow the sorted type names), the kind's code and the proposal (() for none, which comes first)."""
    counts, table = context.counts, context.record.table
    type_names = [str(name) for name in counts.type_names]
    place = np.where(found.at >= 0, found.at, found.proposal)
    some = np.maximum(found.proposal, 0)
    proposals = [
        (start, end, type_names[code]) if offer >= 0 else ()
        for offer, start, end, code in zip(
            found.proposal.tolist(),
            counts._strict_start[some].tolist(),
            counts._strict_end[some].tolist(),
            counts._strict_type[some].tolist(),
        )
    ]
    return list(
        zip(
            (-found.score).tolist(),
            [table.languages[code] for code in table.language[found.item].tolist()],
            [str(found_id) for found_id in table.ids[found.item].tolist()],
            counts._strict_start[place].tolist(),
            counts._strict_end[place].tolist(),
            [type_names[code] for code in counts._strict_type[place].tolist()],
            found.kind.tolist(),
            proposals,
        )
    )


def _runs(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the positions ``starts[k] .. starts[k] + lengths[k] - 1`` of every run laid end to end, and each
    one's rank in its run."""
    rank = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + rank, rank


@dataclass
class _Part:
    """Pieces of every line in one place of it: per line ``counts`` pieces, ``values`` laid line after line."""

    counts: np.ndarray
    values: np.ndarray


def _single(values: Sequence[str] | np.ndarray) -> _Part:
    """One piece per line."""
    values = values if isinstance(values, np.ndarray) else object_array(values)
    return _Part(np.ones(len(values), dtype=np.int64), values)


def _listed(
    texts: SpanTexts, shown: np.ndarray, opening: Any, closing: str, ids: np.ndarray, lengths: np.ndarray
) -> _Part:
    """A JSON list of spans on each line ``shown``: its ``opening`` (one, or one per line), the line's ``lengths``
    spans (strict ``ids``, laid line after line), the ``closing``; nothing on the other lines."""
    counts = np.where(shown, lengths + 2, 0)
    at = np.cumsum(counts) - counts
    values = np.empty(int(counts.sum()), dtype=object)
    values[at[shown]] = opening[shown] if isinstance(opening, np.ndarray) else opening
    where, rank = _runs(at + 1, lengths)
    values[where] = texts.of(ids, rank > 0)
    values[(at + 1 + lengths)[shown]] = closing
    return _Part(counts, values)


def _laid(parts: Sequence[_Part]) -> str:
    """Return the lines' pieces, part after part within a line, line after line, as one text."""
    counts = np.stack([part.counts for part in parts])
    before = np.cumsum(counts, axis=0) - counts  # pieces on the line before each part
    line = counts.sum(axis=0)
    start = np.cumsum(line) - line
    pieces = np.empty(int(line.sum()), dtype=object)
    for part, ahead in zip(parts, before):
        pieces[_runs(start + ahead, part.counts)[0]] = part.values
    return "".join(pieces.tolist())


def spans_on(counts: Any, name: str, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return a labelling's strict ids on ``items`` (item-major) and where each item's start among them (an
    entry per item of the record, and one past the last)."""
    ids, item_of = labelled_on(counts, name, items)
    bounds = np.zeros(counts.n_items + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_of, minlength=counts.n_items), out=bounds[1:])
    return ids, bounds


def _runs_of(bounds: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return per entry of ``items`` where its spans start (``bounds`` of ``spans_on``) and how many."""
    low = bounds[items]
    return low, bounds[items + 1] - low


def _patterns(votes: np.ndarray, sources: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
    """Return per candidate (column of ``votes``, a row per source) its pattern's code and each pattern's
    sources, each distinct pattern once (found on the bits packed into 64-bit words)."""
    if not votes.shape[1]:
        return np.zeros(0, dtype=np.int64), []
    packed = np.packbits(votes, axis=0)
    words = np.zeros((votes.shape[1], -(-len(packed) // 8) * 8), dtype=np.uint8)
    words[:, : len(packed)] = packed.T
    keys = words.view(np.uint64)
    if keys.shape[1] == 1:
        _, first, code = np.unique(keys[:, 0], return_index=True, return_inverse=True)
    else:
        _, first, code = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    patterns = votes[:, first].T.tolist()
    return code.reshape(-1), [[s for s, vote in zip(sources, pattern) if vote] for pattern in patterns]


def _cells(texts: list[str]) -> list[str]:
    """Return ``spreadsheet_cells`` of the texts, each distinct text made once."""
    distinct = dict.fromkeys(texts)
    made = dict(zip(distinct, spreadsheet_cells(list(distinct))))
    return [made[text] for text in texts]


def _json_strings(texts: list[str]) -> list[str]:
    """Return each string as orjson writes it."""
    if JSON_ESCAPED.search("".join(texts)) is None:
        return ['"' + text + '"' for text in texts]  # nothing to escape: the usual ids
    return [orjson.dumps(text).decode("utf-8") for text in texts]


def written_lines(
    context: AuditContext,
    found: Candidates,
    with_sources: int,
    reference_spans: tuple[np.ndarray, np.ndarray],
    source_spans: Mapping[str, tuple[np.ndarray, np.ndarray]],
    texts: SpanTexts,
) -> tuple[str, list[str]]:
    """Return the reference's candidates as the JSON Lines file's text and the CSV's lines: each what
    ``rows_of`` gives (the first ``with_sources`` with the sources' spans) written as ``files`` writes it, built
    column by column. ``reference_spans``: the reference's spans on its candidates' items, ``source_spans``: each
    source's on (at least) those of the first ``with_sources`` (``spans_on``); ``texts``: the text of every
    span written (``span_texts``)."""
    counts, table = context.counts, context.record.table
    n = found.n
    if not n:
        return "", []
    items = found.item
    at, offer = found.at, found.proposal
    place = np.where(at >= 0, at, offer)
    starts = counts._strict_start[place].tolist()
    ends = counts._strict_end[place].tolist()
    type_names = [str(name) for name in counts.type_names]
    type_json = [orjson.dumps(name).decode("utf-8") for name in type_names] + ["null"]
    empty = csv_cell("")
    type_cell = spreadsheet_cells(type_names) + [empty]
    at_type = np.where(at >= 0, counts._strict_type[np.maximum(at, 0)], len(type_names)).tolist()
    offer_type = np.where(offer >= 0, counts._strict_type[np.maximum(offer, 0)], len(type_names)).tolist()
    null = object_array(["null"])[np.zeros(n, dtype=np.int64)]
    at_json = np.where(at >= 0, texts.of(np.maximum(at, 0)), null).tolist()
    offer_json = np.where(offer >= 0, texts.of(np.maximum(offer, 0)), null).tolist()
    offer_start = np.where(offer >= 0, counts._strict_start[np.maximum(offer, 0)], 0).tolist()
    offer_end = np.where(offer >= 0, counts._strict_end[np.maximum(offer, 0)], 0).tolist()
    ids = [str(found_id) for found_id in table.ids[items].tolist()]
    languages = table.language[items].tolist()
    language_json = _json_strings([str(name) for name in table.languages])
    language_cell = spreadsheet_cells([str(name) for name in table.languages])
    kinds = found.kind.tolist()
    kind_json = [orjson.dumps(kind).decode("utf-8") for kind in KINDS]
    kind_cell = [csv_cell(kind) for kind in KINDS]
    scores = found.score.tolist()
    score_json = orjson.dumps(scores).decode("utf-8")[1:-1].split(",")
    support, support_names = _patterns(found.support, found.sources)
    opposed, opposed_names = _patterns(found.opposed, found.sources)
    support_json = [orjson.dumps(names).decode("utf-8") for names in support_names]
    opposed_json = [orjson.dumps(names).decode("utf-8") for names in opposed_names]
    support_cell = [
        f"{cell},{len(names)}"
        for cell, names in zip(spreadsheet_cells(["; ".join(names) for names in support_names]), support_names)
    ]
    opposed_cell = [
        f"{cell},{len(names)}"
        for cell, names in zip(spreadsheet_cells(["; ".join(names) for names in opposed_names]), opposed_names)
    ]
    evidence = context.config.report.error_evidence
    evidence_json, evidence_cell = orjson.dumps(evidence).decode("utf-8"), csv_cell(evidence)
    json_prefix, csv_prefix = _rank_prefixes(found.reference)  # what comes before each line's rank
    show_text = context.config.report.show_text and table.text is not None
    row_texts = table.text[items].tolist() if show_text else [None] * n
    text_json = ["" if text is None else ',"text":' + orjson.dumps(text).decode("utf-8") for text in row_texts]
    text_cell = _cells(["" if text is None else text for text in row_texts])
    heads = [
        f'{json_prefix}{rank},"score":{score},"id":{id_json},'
        f'"language":{language_json[language]},"proposed":{kind_json[kind]},"start":{start},"end":{end},'
        f'"type":{type_json[at_code]},"reference_span":{at_text},"proposed_span":{offer_text},'
        f'"support":{support_json[s]},"opposed":{opposed_json[o]},"evidence":{evidence_json}{text},'
        '"spans_reference":'
        for rank, score, id_json, language, kind, start, end, at_code, at_text, offer_text, s, o, text in zip(
            range(1, n + 1),
            score_json,
            _json_strings(ids),
            languages,
            kinds,
            starts,
            ends,
            at_type,
            at_json,
            offer_json,
            support.tolist(),
            opposed.tolist(),
            text_json,
        )
    ]
    lines = [
        f"{csv_prefix}{rank},{score:.{SCORE_DECIMALS}f},{id_cell},{language_cell[language]},{kind_cell[kind]},"
        f"{start},{end},{type_cell[at_code]},"
        + (f"{low},{high},{type_cell[offer_code]}," if offer_code < len(type_names) else f"{empty},{empty},{empty},")
        + f"{support_cell[s]},{opposed_cell[o]},{evidence_cell},{text}\n"
        for rank, score, id_cell, language, kind, start, end, at_code, low, high, offer_code, s, o, text in zip(
            range(1, n + 1),
            scores,
            spreadsheet_cells(ids),
            languages,
            kinds,
            starts,
            ends,
            at_type,
            offer_start,
            offer_end,
            offer_type,
            support.tolist(),
            opposed.tolist(),
            text_cell,
        )
    ]
    # the reference's spans on each row's item, and the same with the proposal made (in strict id order, which
    # is Python's order of the [start, end, type] lists)
    reference_ids, reference_bounds = reference_spans
    low, length = _runs_of(reference_bounds, items)
    row = np.repeat(np.arange(n), length)
    on_item = reference_ids[_runs(low, length)[0]]
    changed = on_item != at[row]
    proposed_row = np.concatenate([row[changed], np.flatnonzero(offer >= 0)])
    proposed = np.concatenate([on_item[changed], offer[offer >= 0]])
    proposed = proposed[np.lexsort((proposed, proposed_row))]
    every = np.ones(n, dtype=bool)
    parts = [
        _single(heads),
        _listed(texts, every, "[", "]", on_item, length),
        _listed(texts, every, ',"spans_proposed":[', "]", proposed, np.bincount(proposed_row, minlength=n)),
    ]
    held = np.arange(n) < with_sources
    if with_sources:
        parts.append(_single(object_array([SPANS_SOURCES, ""])[np.where(held, 0, 1)]))
        opened = np.zeros(n, dtype=bool)
        for source in found.sources:
            source_ids, source_bounds = source_spans[source]
            first, lengths = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
            first[:with_sources], lengths[:with_sources] = _runs_of(source_bounds, items[:with_sources])
            present = held & counts.has(source)[items]
            key = orjson.dumps(source).decode("utf-8") + ":["
            opening = object_array([key, "," + key])[opened.astype(np.int64)]
            parts.append(_listed(texts, present, opening, "]", source_ids[_runs(first, lengths)[0]], lengths))
            opened |= present
    parts.append(_single(object_array(["}}\n", "}\n"])[np.where(held, 0, 1)]))
    return _laid(parts), lines


def summary(context: AuditContext) -> dict[str, Any]:
    """results.json "gold_errors": per reference, its sources, how many candidates of each kind on how many
    items, and the top TOP (with the words of the two spans and a little context unless show_text = false).
    Each reference's candidates are let go once its entry is made (``map`` holds none while the next is found).
    With a partitioned record on Dask workers, the workers find them (``_partitioned``)."""
    table = context.record.table
    show_text = context.config.report.show_text
    each_partition = getattr(context.engine, "each_partition", None)
    return {
        "evidence": context.config.report.error_evidence,
        "show_text": show_text,
        "text": bool(show_text and table.text is not None),
        "file": FILE,
        "references": (
            list(map(partial(_summary_of, context), candidates(context)))
            if each_partition is None
            else _partitioned(context, each_partition)
        ),
    }


def _summary_of(context: AuditContext, reference: Candidates) -> dict[str, Any]:
    """Return one reference's entry of the summary: its counts and its top TOP candidates."""
    mask = items_of(context) & context.counts.has(reference.reference)
    return _entry(
        reference.reference,
        reference.sources,
        int(mask.sum()),
        reference.n,
        int(len(np.unique(reference.item))),
        [int((reference.kind == code).sum()) for code in range(len(KINDS))],
        rows_of(context, reference, TOP),
    )


def _entry(
    reference: str,
    sources: Sequence[str],
    items: int,
    candidates: int,
    items_with_candidates: int,
    kinds: Sequence[int],
    rows: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """Return a reference's entry of the summary from its counts (``kinds``: per code into KINDS) and its top
    rows (as ``rows_of`` gives them)."""
    top = []
    for row in rows:
        entry = {
            key: row[key]
            for key in (
                "rank",
                "score",
                "id",
                "language",
                "proposed",
                "start",
                "end",
                "reference_span",
                "proposed_span",
            )
        }
        entry["support"], entry["opposed"] = len(row["support"]), len(row["opposed"])
        if "text" in row:
            entry["context"] = _context(row["text"], row["reference_span"], row["proposed_span"])
        top.append(entry)
    return {
        "reference": reference,
        "sources": list(sources),
        "items": items,
        "candidates": candidates,
        "items_with_candidates": items_with_candidates,
        "kinds": dict(zip(KINDS, kinds)),
        "top": top,
    }


# --- a partitioned record: the candidates found where its counts are -----------------------------------
#
# A candidate depends on its item's spans and on its sources' weights there, and a weight on an item on the
# item's own counts and four sums over the record (``_Weigher.sums``). So the workers first sum those per
# partition (``_partition_sums``); the client adds them up (integers: exact) and the workers then find each
# partition's candidates with the record's sums (``_partition_candidates``): the record's candidates on its
# items, with the same scores. Each partition returns its counts and its first TOP by the record's order; the
# client merges those (``_merged``). Only the build's files still compute the candidates on the client.


def _partitioned(context: AuditContext, each_partition: Callable[..., list[Any]]) -> list[dict[str, Any]]:
    """Return the summary's reference entries of a partitioned record, found on the workers (``each_partition``:
    ``workers.PartitionedRun.each_partition``), the same as ``_summary_of`` gives from the whole record's."""
    mask = items_of(context)
    evidence = [(reference, tuple(sources)) for reference, sources in evidence_of(context)]
    if not evidence:
        return []
    roles = context.config.roles
    ids = context.record.table.ids
    sums = each_partition(_partition_sums, ids, [mask], evidence)
    totals = [
        [tuple(map(sum, zip(*(part[number][1][k] for part in sums)))) for k in range(len(sources))]
        for number, (_, sources) in enumerate(evidence)
    ]
    found = each_partition(
        _partition_candidates, ids, [mask], evidence, [*roles.outputs, *roles.references], totals, TOP
    )
    # a build's listings find the candidates again a partition at a time, with the same sums (partitioned_files)
    numbers = [sum(part[number][0] for part in found) for number in range(len(evidence))]
    context.notes.setdefault(KEY, {})["partitioned"] = (evidence, totals, numbers)
    entries = []
    for number, (reference, sources) in enumerate(evidence):
        parts = [part[number] for part in found]
        entries.append(
            _entry(
                reference,
                sources,
                sum(part[number][0] for part in sums),
                sum(part[0] for part in parts),
                sum(part[1] for part in parts),
                [sum(counted) for counted in zip(*(part[2] for part in parts))],
                _merged(context, [row for part in parts for row in part[3]]),
            )
        )
    return entries


def _partition_sums(
    counts: Any, first: int, mask: np.ndarray, evidence: Sequence[tuple[str, Sequence[str]]]
) -> list[tuple[int, list[tuple[int, int, int, int]]]]:
    """On a worker: per reference (with its sources), the partition's items of ``mask`` where it is present, and
    each source's ``_Weigher.sums`` there."""
    found = []
    for reference, sources in evidence:
        here = mask & counts.has(reference)
        if not here.any():
            found.append((0, [(0, 0, 0, 0)] * len(sources)))
            continue
        weigher = _Weigher(counts, reference, here, pool_of(counts, reference, sources, here))
        found.append((int(np.count_nonzero(here)), [weigher.sums(source) for source in sources]))
    return found


def partition_ranked(
    counts: Any,
    mask: np.ndarray,
    evidence: Sequence[tuple[str, Sequence[str]]],
    labellings: Sequence[str],
    totals: Sequence[Sequence[Sequence[int]]],
) -> Iterator[Candidates | None]:
    """Yield per reference of ``evidence`` its candidates on a partition's items of ``mask`` (``ranked`` with the
    record's ``totals`` of each source: the record's candidates there, in its order), None where the reference is
    on none of them; the places the references share are found once (a worker's summary, a build's listings)."""
    notes: dict[str, Any] = {}
    for (reference, sources), whole in zip(evidence, totals):
        if not (mask & counts.has(reference)).any():
            yield None
            continue
        yield ranked(
            counts, counts.table, reference, sources, labellings, mask, notes, totals=dict(zip(sources, whole))
        )


def _partition_candidates(
    counts: Any,
    first: int,
    mask: np.ndarray,
    evidence: Sequence[tuple[str, Sequence[str]]],
    labellings: Sequence[str],
    totals: Sequence[Sequence[Sequence[int]]],
    top: int,
) -> list[tuple[int, int, list[int], list[tuple[Any, ...]]]]:
    """On a worker: per reference, its candidates on the partition's items of ``mask`` (``ranked`` with the
    record's ``totals`` of each source): how many, on how many items, how many of each kind, and the first
    ``top`` (the partition's order is the record's, restricted to them) as (score, the record's item, kind code,
    the reference's span, the proposed span (``_span_lists``), the sources for, the sources against)."""
    found = []
    for (_, sources), made in zip(evidence, partition_ranked(counts, mask, evidence, labellings, totals)):
        if made is None:
            found.append((0, 0, [0] * len(KINDS), []))
            continue
        shown = min(top, made.n)
        rows = [
            (
                score,
                first + item,
                kind,
                at,
                offer,
                [s for s, vote in zip(sources, votes) if vote],
                [s for s, vote in zip(sources, against) if vote],
            )
            for score, item, kind, at, offer, votes, against in zip(
                made.score[:shown].tolist(),
                made.item[:shown].tolist(),
                made.kind[:shown].tolist(),
                _span_lists(counts, made.at[:shown]),
                _span_lists(counts, made.proposal[:shown]),
                made.support[:, :shown].T.tolist(),
                made.opposed[:, :shown].T.tolist(),
            )
        ]
        kinds = np.bincount(made.kind, minlength=len(KINDS)).tolist()
        found.append((made.n, int(len(np.unique(made.item))), kinds, rows))
    return found


def _merged(context: AuditContext, rows: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Return the first TOP of the partitions' top rows of a reference (``_partition_candidates``) by the record's
    order, as ``rows_of`` gives them: score, then language and id (as Python compares strings), then the place,
    the kind and the proposal by strict id, which on one item orders spans by (start, end, type code); type codes
    follow the record's sorted type names, so comparing the names (a partition's codes are its own) orders them
    alike."""
    table = context.record.table
    show_text = context.config.report.show_text and table.text is not None
    languages = [str(name) for name in table.languages]

    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        score, item, kind, at, offer = row[:5]
        place = at if at is not None else offer
        return (-score, languages[table.language[item]], str(table.ids[item]), item, place, kind, offer or [])

    found = []
    for rank, (score, item, kind, at, offer, support, opposed) in enumerate(sorted(rows, key=key)[:TOP], start=1):
        place = at if at is not None else offer
        row = {
            "rank": rank,
            "score": score,
            "id": str(table.ids[item]),
            "language": table.languages[table.language[item]],
            "proposed": KINDS[kind],
            "start": place[0],
            "end": place[1],
            "reference_span": at,
            "proposed_span": offer,
            "support": support,
            "opposed": opposed,
        }
        if show_text:
            row["text"] = table.text[item]
        found.append(row)
    return found


def _context(text: str, *spans: list[Any] | None) -> list[str]:
    """Return the text around a candidate as [before, the place, after]: the place covers both spans, with
    CONTEXT characters either side (an ellipsis where the text goes on)."""
    start = min(span[0] for span in spans if span)
    end = max(span[1] for span in spans if span)
    low, high = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
    return [("…" if low else "") + text[low:start], text[start:end], text[end:high] + ("…" if high < len(text) else "")]


def _printed(context: list[str]) -> str:
    """Return a candidate's context as the PDF prints it: the place with PRINT_CONTEXT characters either side."""
    before, place, after = context
    if len(before) > PRINT_CONTEXT:
        before = "…" + before[-PRINT_CONTEXT:]
    if len(after) > PRINT_CONTEXT:
        after = after[:PRINT_CONTEXT] + "…"
    return before + place + after


def applicability(context: AuditContext) -> dict[str, str | None]:
    if items_of(context) is None:
        return {KEY: "Gold-error candidates need audited items (every labelling named in a role present)."}
    if not any(sources_of(context, reference) for reference in context.config.roles.references):
        return {KEY: "Gold-error candidates need an output or another reference to weigh against a reference."}
    return {KEY: None}


# --- the report ------------------------------------------------------------------------------------


def listed(view: ResultsView) -> dict[str, Any]:
    """Return results.json's gold_errors entry (empty when the audit listed none)."""
    return view.data.get(KEY) or {}


def _said(span: list[Any] | None, words: str | None) -> str:
    if span is None:
        return "nothing"
    where = f"{span[2]} [{span[0]}, {span[1]})"
    return f"{where} “{words}”" if words is not None else where


def _words(entry: Mapping[str, Any], span: list[Any] | None) -> str | None:
    """Return a span's words from the entry's context (None when the text is withheld)."""
    if span is None or "context" not in entry:
        return None
    place = entry["context"][1]
    offset = min(s[0] for s in (entry["reference_span"], entry["proposed_span"]) if s)
    return place[span[0] - offset : span[1] - offset]


def counts_table(view: ResultsView) -> Table:
    """Per reference: the evidence, items, candidates (on how many items) and candidates of each kind."""
    rows = []
    for reference in listed(view).get("references", []):
        rows.append(
            [
                label(reference["reference"]),
                count_cell(len(reference["sources"])),
                count_cell(reference["items"]),
                count_cell(reference["candidates"]),
                count_cell(reference["items_with_candidates"]),
                *(count_cell(reference["kinds"][kind]) for kind in KINDS),
            ]
        )
    evidence = "the outputs" if listed(view).get("evidence") == OUTPUTS_ONLY else "the outputs and the other references"
    return Table(
        key="gold-errors",
        title="Candidate gold errors per reference",
        caption=(
            f"Places where each reference disagrees with the weighted vote of {evidence} (the sources) on "
            "the audited items: candidates (score above 0), the items holding them, and what they propose "
            "instead: another type, other boundaries, a missing span or the removal of a spurious one."
        ),
        columns=(
            "Reference",
            "Sources",
            "Items",
            "Candidates",
            "Items with one",
            "Type",
            "Boundaries",
            "Missing",
            "Spurious",
        ),
        rows=mark_repeats(rows, 1),
    )


def top_table(view: ResultsView, number: int, reference: Mapping[str, Any]) -> Table:
    """The reference's TOP candidates: rank, item, what the reference says and what is proposed, the votes."""
    rows = []
    for entry in reference["top"]:
        said = _said(entry["reference_span"], _words(entry, entry["reference_span"]))
        proposed = _said(entry["proposed_span"], _words(entry, entry["proposed_span"]))
        cells = [
            count_cell(entry["rank"]),
            label(f"{entry['id']} ({entry['language']})"),
            label(said),
            label(proposed if entry["proposed"] != "spurious" else "remove it"),
            label(entry["proposed"]),
            label(f"{entry['support']} for, {entry['opposed']} against"),
            label(formatting.number(entry["score"], 1)),
        ]
        if "context" in entry:
            cells.append(replace(label("".join(entry["context"])), print_text=_printed(entry["context"])))
        rows.append(cells)
    text = any("context" in entry for entry in reference["top"])
    shown = len(reference["top"])
    printed = f" (the PDF prints the first {PRINT_CANDIDATES})" if shown > PRINT_CANDIDATES else ""
    return Table(
        key=f"gold-errors-top-{number}",
        title=f"The most likely errors in {reference['reference']}",
        caption=(
            f"The {formatting.count(shown)} highest-scoring{printed} of the "
            f"{formatting.count(reference['candidates'])} candidate errors in {reference['reference']}: what "
            "it says at the place (type, [start, end) in characters) and what the sources' weighted vote "
            "proposes instead; how many sources vote for the proposal and for the reference; the score (the "
            "log-odds of the proposal against the reference). Every candidate is in "
            f"{FILE}.jsonl and {FILE}.csv."
            + (
                f" The PDF prints {PRINT_CONTEXT} characters of text either side of the place ({CONTEXT} on the site)."
                if text
                else ""
            )
        ),
        columns=("Rank", "Item", "Reference says", "Proposed", "Kind", "Votes", "Score", *(("Text",) if text else ())),
        rows=tuple(tuple(row) for row in rows),
        print_rows=PRINT_CANDIDATES if shown > PRINT_CANDIDATES else None,
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    found = listed(view)
    if not found.get("references"):
        return Section(
            key=KEY,
            number=0,
            title=ANALYSIS.title,
            not_applicable=view.applicability(KEY) or "This analysis produced no results for this record.",
        )
    evidence = (
        'the scored outputs only ([report] error_evidence = "outputs")'
        if found.get("evidence") == OUTPUTS_ONLY
        else "the scored outputs and the other references"
    )
    note = (
        f"The evidence is {evidence}, each weighted by how well it agrees with the reference on the other "
        "items (Methods)."
    )
    if not found.get("show_text", True):
        note += " The record's text is withheld ([report] show_text = false): places are given by offsets and type."
    tables = [counts_table(view)] + [
        top_table(view, number, reference)
        for number, reference in enumerate(found["references"], start=1)
        if reference["top"]
    ]
    return Section(
        key=KEY,
        number=0,
        title=ANALYSIS.title,
        paragraphs=(ANALYSIS.question, note),
        tables=tuple(tables),
        links=(
            (
                page_name(),
                f"Every candidate of every reference, ranked: {page_name()}; every one in {FILE}.jsonl and {FILE}.csv.",
            ),
        ),
    )


def headlines(view: ResultsView) -> list[str]:
    """How many candidate errors each reference has, and how many the appendix lists."""
    found = listed(view).get("references") or []
    if not found:
        return []
    parts = [
        f"{formatting.count(reference['candidates'])} candidate error{'s' if reference['candidates'] != 1 else ''}"
        f" in {reference['reference']}"
        if number == 0
        else f"{formatting.count(reference['candidates'])} in {reference['reference']}"
        for number, reference in enumerate(found)
    ]
    listed_each = max(len(reference["top"]) for reference in found)
    each = "" if len(found) == 1 else " of each"
    if not listed_each:
        return [f"{', '.join(parts)}."]
    if listed_each <= PRINT_CANDIDATES:
        return [f"{', '.join(parts)}; the top {listed_each}{each} are listed."]
    return [
        f"{', '.join(parts)}; the top {listed_each}{each} are listed on the site, the top {PRINT_CANDIDATES} in "
        f"the PDF, and every one in {FILE}.csv."
    ]


# --- the page: every candidate, and its browser's data ------------------------------------------------

PAGE_CANDIDATES = 200  # candidates per reference the page shows without JavaScript; the browser holds them all
PROPOSAL = "the proposal"  # the browser's name of the side with the proposal made


def page_name() -> str:
    """Return the candidates' page, beside the appendix."""
    return f"{FILE}.html"


@dataclass(frozen=True)
class ListedCandidate:
    """One candidate as the page shows it: what the reference says at the place and what is proposed (None:
    nothing, a removal), the text with both marked, the sources voting each way."""

    rank: str
    id: str
    language: str
    score: str
    kind: str
    windows: tuple[tuple[TextPiece, ...], ...]  # the text (or windows of a long one); () when not shown
    says: ListedSpan | None
    proposed: ListedSpan | None
    support: tuple[str, ...]
    opposed: tuple[str, ...]
    n_support: str
    n_opposed: str


@dataclass(frozen=True)
class ListedReference:
    """A reference's candidates on the page: how many, by how many sources, and the highest-scoring."""

    anchor: str
    reference: str
    sources: str
    candidates: str
    shown: str
    complete: bool  # every candidate is shown
    items: tuple[ListedCandidate, ...]


@dataclass(frozen=True)
class CandidatesPage(browser.ListingPage):
    """Context of ``site/<version>/gold-error-candidates.html``: ``browser.ListingPage``'s, and

    references: per reference, its highest-scoring candidates (at most ``limit``), by score.
    """

    references: tuple[ListedReference, ...]


def _listed_span(span: Sequence[Any] | None, text: str | None) -> ListedSpan | None:
    if span is None:
        return None
    start, end, kind = span
    return ListedSpan(f"[{start}, {end})", str(kind), text[start:end] if text is not None else None)


def listed_candidate(row: Mapping[str, Any]) -> ListedCandidate:
    """Return one line of the candidates' file as the page shows it."""
    text = row.get("text")
    marked = [[span] if span else [] for span in (row["reference_span"], row["proposed_span"])]
    windows = (
        ()
        if text is None
        else tuple(tuple(TextPiece(piece, mark) for piece, mark in window) for window in highlight(text, *marked))
    )
    return ListedCandidate(
        rank=formatting.count(row["rank"]),
        id=row["id"],
        language=row["language"],
        score=formatting.number(row["score"], 1),
        kind=row["proposed"],
        windows=windows,
        says=_listed_span(row["reference_span"], text),
        proposed=_listed_span(row["proposed_span"], text),
        support=tuple(row["support"]),
        opposed=tuple(row["opposed"]),
        n_support=formatting.count(len(row["support"])),
        n_opposed=formatting.count(len(row["opposed"])),
    )


BROWSER_COLUMNS = (
    browser.BrowserColumn("reference", "Reference", "text", "choice"),
    browser.BrowserColumn("rank", "Rank", "number"),
    browser.BrowserColumn("score", "Score", "number", "min"),
    browser.BrowserColumn("id", "Item", "text"),
    browser.BrowserColumn("language", "Language", "text", "choice"),
    browser.BrowserColumn("proposed", "Proposed", "text", "choice"),
    browser.BrowserColumn("types", "Types", "list", "choice"),
    browser.BrowserColumn("support", "For the proposal", "list", "choice"),
    browser.BrowserColumn("opposed", "For the reference", "list", "choice"),
)


def browser_listing(
    rows: Iterable[Mapping[str, Any]], total: int, title: str, files: tuple[str, ...]
) -> browser.BrowserListing:
    """Return the candidates for the browser: the first ``browser.BROWSER_LINES`` rows of the file (of
    ``total``). Each row's item: its text (when written), cut around the place when long, and two sides: the
    reference's spans (the one at the place marked), the same with the proposal made (the proposed span
    marked), and the sources' spans, sources with the same spans together."""
    names: dict[str, int] = {}
    texts: dict[str, int] = {}
    found, items = [], []
    for number, row in enumerate(rows):
        if number >= browser.BROWSER_LINES:
            continue  # (a list longer than the cap; the file's reader yields no more)
        at, offer = row["reference_span"], row["proposed_span"]
        types = sorted({str(span[2]) for span in (at, offer) if span})
        found.append(
            (
                row["reference"],
                row["rank"],
                row["score"],
                row["id"],
                row["language"],
                row["proposed"],
                types,
                row["support"],
                row["opposed"],
            )
        )
        text = row.get("text")
        windows = None
        if text is not None and len(text) > WHOLE_TEXT:
            cut = text_windows(len(text), [span for span in (at, offer) if span])
            windows = None if cut == [(0, len(text))] else [list(window) for window in cut]
        sides = [
            [
                browser.name_index(names, row["reference"]),
                [[*span, int(span == at)] for span in row["spans_reference"]],
            ],
            [browser.name_index(names, PROPOSAL), [[*span, int(span == offer)] for span in row["spans_proposed"]]],
        ]
        if "spans_sources" in row:  # the sources, each set of spans once
            sides += browser.grouped_sides(names, row["spans_sources"], (row["spans_reference"], row["spans_proposed"]))
        items.append((None if text is None else texts.setdefault(text, len(texts)), windows, sides, []))
    kept = [
        position
        for position, column in enumerate(BROWSER_COLUMNS)
        if column.kind != "list" or any(row[position] for row in found)
    ]
    return browser.BrowserListing(
        name=FILE,
        title=title,
        lines=total,
        files=files,
        columns=tuple(BROWSER_COLUMNS[position] for position in kept),
        names=tuple(names),
        note_columns=(),
        texts=tuple(texts),
        rows=tuple(tuple(row[position] for position in kept) for row in found),
        items=tuple(items),
    )


TITLE = "Gold-error candidates"


def pages(view: ResultsView, site: browser.SiteContext) -> list[browser.Page]:
    """Return the candidates' page and its browser's data, when the candidates' file is in the version folder."""
    found = listed(view)
    references = found.get("references") or []
    folder = site.folder
    if not references or not (folder / f"{FILE}.jsonl").is_file():
        return []
    # one pass over the file: the browser's data row by row, each reference's first rows kept meanwhile
    names = [reference["reference"] for reference in references]
    total = sum(int(reference["candidates"]) for reference in references)
    shown_rows: list[list[dict]] = [[] for _ in references]
    rows = browser.page_lines(
        folder / f"{FILE}.jsonl",
        total,
        lambda row: names.index(row["reference"]),
        [min(PAGE_CANDIDATES, int(reference["candidates"])) for reference in references],
        shown_rows,
    )
    files = tuple(name for name in (f"{FILE}.csv", f"{FILE}.jsonl") if (folder / name).is_file())
    data = browser.browser_script(browser_listing(rows, total, TITLE, files))
    listed_references = []
    for number, (reference, shown) in enumerate(zip(references, shown_rows), start=1):
        listed_references.append(
            ListedReference(
                anchor=f"reference-{number}",
                reference=reference["reference"],
                sources=formatting.count(len(reference["sources"])),
                candidates=formatting.count(reference["candidates"]),
                shown=formatting.count(len(shown)),
                complete=len(shown) == reference["candidates"],
                items=tuple(listed_candidate(row) for row in shown),
            )
        )
    if not found.get("show_text", True):
        text_note = (
            "The record's text is withheld ([report] show_text = false): candidates are listed by item "
            "id, with each span's offsets (characters, end excluded) and type."
        )
    elif not found.get("text"):
        text_note = (
            "The record carries no text: candidates are listed by item id, with each span's offsets "
            "(characters, end excluded) and type."
        )
    else:
        text_note = (
            "Each item's text is shown with what the reference says at the place underlined solid on "
            "orange and what the sources propose dashed on blue; a long text is cut to the passages "
            "around them."
        )
    evidence = (
        "the scored outputs" if found.get("evidence") == OUTPUTS_ONLY else "the scored outputs and the other references"
    )
    page = CandidatesPage(
        dataset_name=view.data["dataset"]["name"],
        version=view.data["dataset"]["version"],
        tool_version=view.data.get("tool_version", __version__),
        build_date=site.build_timestamp[:10],
        title=TITLE,
        question=(
            f"Where each reference most likely holds an error: the places where the weighted vote of {evidence} "
            "(the sources) proposes something else, each reference's by score (the log-odds of the proposal "
            "against the reference's state; Methods)."
        ),
        text_note=text_note,
        files=browser.page_files(folder, FILE, "candidate"),
        references=tuple(listed_references),
        limit=formatting.count(PAGE_CANDIDATES),
        appendix_anchor=f"section-{KEY}",
        listing=FILE,
        data_script=browser.data_script_name(FILE),
    )
    return [browser.Page(page_name(), "candidates.html", page), browser.Page(browser.data_script_name(FILE), text=data)]


ANALYSIS = Analysis(
    key=KEY,
    title="Which gold is wrong here?",
    question=(
        "Where does each reference most likely hold an error, judged by outputs and golds that are reliable elsewhere?"
    ),
    methods="""- **Gold-error candidates** (strict spans, audited items). For each reference the sources are the
  outputs and, unless `[report] error_evidence = "outputs"`, the other references. At each place where the
  reference or a source has a span, every source votes for the span it has there or for nothing, weighted by
  its log diagnostic odds ratio against the reference on the other items (leave one out; recall and
  false-positive rate with add-one smoothing): in a one-coin Dawid–Skene model this is the log-likelihood
  ratio its vote adds. A candidate's score is the log-odds of the heaviest other state (another type, other
  boundaries, a missing span, or no span) against the reference's; scores above 0 are ranked, 1 the most
  likely error. Against CoNLL++'s corrections of CoNLL-2003 (outputs only), precision among the top 25, 50
  and 100 sentences is .63, .60 and .56, against .52 for counting disagreeing systems.""",
    applicability=applicability,
    summary=summary,
    files=files,
    partitioned_files=PartitionedCandidates,
    section=_section,
    headlines=headlines,
    pages=pages,
    downloads=(
        (page_name(), "The page of each reference's top candidates, with a browser of every one"),
        *(
            (f"{FILE}{suffix}", f"Every gold-error candidate of every reference, ranked, as {kind}")
            for suffix, kind in ((".jsonl", "JSON Lines"), (".csv", "CSV"))
        ),
    ),
)
