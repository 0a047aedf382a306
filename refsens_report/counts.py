"""Per-item sufficient statistics, computed once for the whole record and vectorised.

Every span of every labelling becomes a compact integer id under each set rule (``strict``: start, end, type;
``relaxed``: start, end, i.e. exact boundaries, any type), so a labelling on an item is a set of ids. The
statistics the audit needs per item are then counts: ``|O ∩ R|`` (TP), ``|O|`` and ``|R|`` (FP = |O| - TP,
FN = |R| - TP), and strict-set equality flags. Under ``overlap`` TP is the size of a maximum one-to-one
matching between the strict sets, two spans matching when they have the same type and share a character
(``overlap_true_positives``); |O| and |R| are the strict sizes (docs/method.md section 1). The bootstrap only
re-weights these counts; nothing recomputes span sets or matchings per replicate.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from refsens_report.record import Item
from refsens_report.table import SpanTable

RULE_NAMES = ("strict", "relaxed", "overlap")  # the order rules take everywhere (config, rows, tables)
DEFAULT_RULES = ("strict", "relaxed")
# what each rule means, in the words the report's settings use
RULE_MEANINGS = {
    "strict": "exact boundaries and type",
    "relaxed": "exact boundaries, any type",
    "overlap": "same type, at least one shared character, matched one-to-one",
}
# the rule whose span sets give |O| and |R| under each rule: overlap matches strict spans (docs/method.md section 1)
SET_RULE = {"strict": "strict", "relaxed": "relaxed", "overlap": "strict"}


@dataclass(frozen=True, slots=True)
class Column:
    """One per-item quantity whose sums the bootstrap re-weights.

    kinds: ``tp`` (|a ∩ b| under ``rule``), ``size`` (|a| under ``rule``), ``equal`` (strict sets of a and b
    equal, both present), ``equal_any`` (a's strict set equals that of one of ``others``), ``flag`` (boolean
    metadata ``a`` is true); and the kinds an analysis declares (``ColumnKind``). With a ``type``, ``tp`` and
    ``size`` count the spans of that type only (``ItemCounts.typed``); summed over the types they give the
    untyped count.
    """

    kind: str
    rule: str = ""
    a: str = ""
    b: str = ""
    c: str = ""
    others: tuple[str, ...] = ()
    type: str = ""  # a ``tp`` or ``size`` count of this span type only (strict or overlap); "" counts every type

    def labellings(self) -> tuple[str, ...]:
        """Return the labellings the column reads (a flag's ``a`` names item metadata, not a labelling)."""
        return () if self.kind == "flag" else tuple(name for name in (self.a, self.b, self.c, *self.others) if name)


@dataclass(frozen=True)
class ColumnKind:
    """A kind of per-item column an analysis declares (``Analysis.columns``): how its values are computed from
    the record's counts, and whether they are integer counts (summed exactly, in float32 where small enough)
    or real values (per-item sufficient statistics such as a disorder: summed in float64)."""

    name: str  # ``Column.kind``
    values: Callable[[ItemCounts, Column], np.ndarray]  # per item, one value (0 where it does not count)
    integer: bool = True


# Spans numbered at once by ``_encode_spans`` (whole items): each block's keys, orders and ids are a few MB.
ENCODE_BLOCK = 1 << 18


class Numbered(NamedTuple):
    """The record's counted spans numbered under the strict and the relaxed rule (``_encode_spans``)."""

    used: np.ndarray  # per type code of the table, whether a counted span has it
    ids: list[np.ndarray]  # per counted labelling, its strict ids, sorted and unique (``id_dtype``)
    strict_row: np.ndarray  # per strict id, the table row of a span having it
    relaxed_row: np.ndarray  # per relaxed id, the table row of a span having it
    strict_to_relaxed: np.ndarray  # per strict id, its relaxed id (``id_dtype``)


def id_dtype(n_spans: int) -> type:
    """Return the integer type of span ids (and of any index into them) for a table of ``n_spans`` spans: int32
    when they fit (every id is below the number of spans; half the bytes of int64), else int64. A reader forming a
    wider value from ids (a key of an id and an offset, a product) casts to int64 first."""
    return np.int32 if n_spans < 2**31 else np.int64


def _encode_block(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Number spans given as their (item, start, end, type) columns of non-negative integers, in the order of
    (item, start, end, type) under strict and of (item, start, end) under relaxed, from 0.

    Returns (the spans in strict order, the strict id of each along it, a span of each strict id, a span of each
    relaxed id, each strict id's relaxed id). The strict key orders spans by (item, start, end, type) and the
    relaxed key is the strict key without its last digit, so along the strict order the relaxed key never
    decreases: one sort numbers both. Columns too large for one int64 key are sorted as they are (``lexsort``).
    """
    radices = [int(column.max()) + 1 for column in columns]
    new_relaxed = np.empty(len(columns[0]), dtype=bool)  # the first span of each relaxed id along the order
    new_relaxed[0] = True
    if np.prod(np.array(radices, dtype=object)) >= 2**62:  # offsets too large for one key
        order = np.lexsort(columns[::-1])
        ordered = [column[order] for column in columns]
        np.any([column[1:] != column[:-1] for column in ordered[:3]], axis=0, out=new_relaxed[1:])
        new_strict = new_relaxed.copy()
        new_strict[1:] |= ordered[3][1:] != ordered[3][:-1]
    else:
        key = columns[0].astype(np.int64)
        for column, radix in zip(columns[1:], radices[1:]):
            key *= radix
            key += column
        order = np.argsort(key)
        key = key[order]
        new_strict = np.empty(len(key), dtype=bool)
        new_strict[0] = True
        np.not_equal(key[1:], key[:-1], out=new_strict[1:])
        np.floor_divide(key, radices[-1], out=key)
        np.not_equal(key[1:], key[:-1], out=new_relaxed[1:])
    strict = np.cumsum(new_strict)
    strict -= 1
    relaxed = np.cumsum(new_relaxed)[new_strict]
    relaxed -= 1
    return order, strict, order[new_strict], order[new_relaxed], relaxed


def _encode_spans(table: SpanTable, labelling_code: np.ndarray, n_names: int) -> Numbered:
    """Number the table's counted spans under the strict and the relaxed rule, a block of whole items at a time.

    ``labelling_code``: per labelling of the table, its code among the ``n_names`` counted (-1: its spans are
    not counted). The type digit is the table's type code: ``ItemCounts``' codes (the used types', in sorted
    order) are in the same order, so the ids are the same.

    The table's spans are ordered by item, the keys' first digit, so a block of whole items (``ENCODE_BLOCK``
    spans or so) holds a range of each rule's ids: each block is numbered alone (``_encode_block``), its item
    digit counted from its first item, after the ids of the blocks before, and each labelling's strict ids in
    the block, sorted and unique, follow its ids of the blocks before. A block's keys and orders are a few MB;
    no array of the whole record is made but the ids and maps kept (the whole record's keys and orders were
    four arrays of 8 bytes a span, 1.7 GB at a million items, and each span's strict and relaxed ids were kept
    besides each labelling's ids). Which span stands for an id does not matter (they agree on item, offsets
    and, under strict, type).
    """
    items, n_spans = table.item, table.n_spans
    index = id_dtype(n_spans)
    edges = [0]
    if n_spans:
        firsts = np.searchsorted(items, items[::ENCODE_BLOCK], side="left")  # each block starts on an item's first
        edges = np.unique(np.concatenate([[0], firsts, [n_spans]])).tolist()
    used = np.zeros(len(table.type_names), dtype=bool)
    ids: list[list[np.ndarray]] = [[] for _ in range(n_names)]
    strict_rows, relaxed_rows, to_relaxed = [], [], []
    n_strict = n_relaxed = 0
    last_item = -1
    for low, high in zip(edges[:-1], edges[1:]):
        codes = labelling_code[table.labelling[low:high]]
        columns = [table.item[low:high], table.start[low:high], table.end[low:high], table.type[low:high]]
        rows = None  # the block's counted rows, if not all of them
        if bool((codes < 0).any()):
            rows = np.flatnonzero(codes >= 0)
            codes, columns = codes[rows], [column[rows] for column in columns]
            rows += low
            if not len(rows):
                continue
        item = columns[0]
        if bool((item[1:] < item[:-1]).any()) or int(item[0]) < last_item:
            raise ValueError("the span table's spans are not ordered by item")
        last_item = int(item[-1])
        columns[0] = item - item[0]
        used[columns[3]] = True
        order, strict, strict_first, relaxed_first, relaxed = _encode_block(columns)
        # each labelling's strict ids: the spans in strict order, grouped by labelling by a stable sort (each
        # group's ids stay in order), then each (labelling, id) once
        codes = codes[order]
        grouped = np.argsort(codes, kind="stable")
        codes, strict = codes[grouped], strict[grouped]
        once = np.empty(len(strict), dtype=bool)
        once[0] = True
        once[1:] = (strict[1:] != strict[:-1]) | (codes[1:] != codes[:-1])
        codes, strict = codes[once], strict[once]
        strict += n_strict
        strict = strict.astype(index)
        cuts = np.searchsorted(codes, np.arange(n_names + 1)).tolist()
        for code in np.flatnonzero(np.diff(cuts)).tolist():
            ids[code].append(strict[cuts[code] : cuts[code + 1]])
        relaxed += n_relaxed
        to_relaxed.append(relaxed.astype(index))
        strict_rows.append(strict_first + low if rows is None else rows[strict_first])
        relaxed_rows.append(relaxed_first + low if rows is None else rows[relaxed_first])
        n_strict += len(strict_first)
        n_relaxed += len(relaxed_first)
    joined = [np.concatenate(found) if found else np.zeros(0, np.int64) for found in (strict_rows, relaxed_rows)]
    strict_to_relaxed = np.concatenate(to_relaxed) if to_relaxed else np.zeros(0, index)
    labelled = []
    for found in ids:  # each labelling's parts freed once joined: not every labelling's ids twice at once
        labelled.append(np.concatenate(found) if found else np.zeros(0, index))
        found.clear()
    return Numbered(used, labelled, joined[0], joined[1], strict_to_relaxed)


# Above this many span types, per-type counts are kept sparse (by_type's count matrices) and the type-confusion
# table is the most frequent types plus "other" everywhere but its long CSV: no cost grows as types x types.
MANY_TYPES = 60

# Per-(item, type) counts are counted in one array of items x types cells when it has at most this many (128 MB
# as int64): a million items of 16 types. Beyond, the counts are sorted instead.
DENSE_CELLS = 1 << 24

# Rows of a per-type count matrix copied from column order into row order at once (``_typed_dense``): a few MB.
ROW_BLOCK_BYTES = 1 << 22

# Candidate pairs of spans tested at once in ``overlap_edges``: each block's temporary arrays are 2 MB.
EDGE_BLOCK = 1 << 18

# Labellings whose span ids stay marked per rule, a bit of one byte per span id each (``ItemCounts.common``).
MARK_SLOTS = 8
# Held while a labelling's span ids are marked and the marks read (``ItemCounts.common``), so that threads asking
# for count columns at once (``threads.threaded_map``) never see a bit another thread is moving.
MARKING = threading.Lock()

# Per-item counts are small: int32 holds any (2**31 spans on one item is beyond any record), at half the memory
# of int64. The count columns ``ItemCounts`` caches take less still (``narrowest``: most fit a byte).
COUNT_DTYPE = np.int32


def compact(values: np.ndarray) -> np.ndarray:
    """Return non-negative integers (items, type codes, counts) as int32: exact below 2**31."""
    return values.astype(COUNT_DTYPE)


def smallest_unsigned(values: np.ndarray) -> type:
    """Return the smallest unsigned integer type holding every value (non-negative integers)."""
    top = int(values.max()) if len(values) else 0
    return next(kind for kind in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(kind).max)


def narrowest(values: np.ndarray) -> np.ndarray:
    """Return non-negative integers (per-item counts) in the smallest unsigned type holding them, not copied when
    they are in it already. How ``ItemCounts`` caches its count columns: a reader forming a value they may not hold
    (a difference, a product, a sum) casts first."""
    return values.astype(smallest_unsigned(values), copy=False)


def common_unsigned(columns: Sequence[np.ndarray]) -> type:
    """Return the smallest unsigned integer type holding every value of these columns (non-negative integers):
    the type of ``ItemCounts.matrix`` of integer columns."""
    return smallest_unsigned(np.array([max([int(values.max()) for values in columns if len(values)] + [0])]))


class UnheldSpans(RuntimeError):
    """A labelling's spans were read where the table does not hold them (``SpanTable.unheld``)."""

    def __init__(self, name: str):
        super().__init__(
            f"the spans of {name!r} are on the Dask workers, not in this process (a partitioned record's client "
            "holds the references' and annotators' spans only): read its per-item counts (ItemCounts.integers)"
        )


class Fetch(Protocol):
    """Where an ``ItemCounts`` without some labellings' spans gets what needs them (``workers.PartitionedRun``)."""

    def column(self, column: Column) -> np.ndarray:
        """Return a column's per-item values on every item of the record, as ``ItemCounts.integers`` gives them."""

    def span_counts(self, names: Sequence[str]) -> dict[str, int]:
        """Return each labelling's number of distinct strict spans (``len(ids("strict", name))``)."""

    def typed(self, kind: str, rule: str, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``ItemCounts.typed``'s triples over the record, in its type codes (the arguments normalised)."""


class ItemCounts:
    """Span-set counts per item for every pair of labellings the audit asks about, cached."""

    def __init__(
        self, table: SpanTable | Sequence[Item], names: Sequence[str], kinds: Mapping[str, ColumnKind] | None = None
    ):
        """``kinds``: the column kinds the analyses declare beside the built-in ones (``integers``)."""
        self.kinds = dict(kinds or {})
        if not isinstance(table, SpanTable):
            table = SpanTable.from_items(table)
        self.table = table
        self.names = tuple(names)
        self.n_items = table.n_items
        # the named labellings' columns of the table, and their spans (the others' spans are not counted)
        table_code = np.array(
            [table.names.index(name) if name in table.names else -1 for name in self.names], dtype=np.int64
        )
        self.present = np.zeros((self.n_items, len(self.names)), dtype=bool)
        for code, column in enumerate(table_code):
            if column >= 0:
                self.present[:, code] = table.present[:, column]
        # our labelling code per labelling of the table (-1: its spans are not counted)
        labelling_code = np.full(len(table.names), -1, dtype=np.int16 if len(self.names) < 2**15 else np.int64)
        labelling_code[table_code[table_code >= 0]] = np.flatnonzero(table_code >= 0)
        # each labelling's strict ids (``ids``), and of each id a table row having it; type codes in sorted order
        # of the types the named labellings use, so ids (and the type-confusion table) depend neither on record
        # order nor on labellings no role names
        numbered = _encode_spans(table, labelling_code, len(self.names))
        # labellings whose spans the table does not hold (a partitioned record's client: ``workers.unheld_names``):
        # their types are used all the same, their columns come from ``fetch``, and their spans cannot be read
        self.unheld = frozenset(table.unheld) & set(self.names)
        self.fetch: Fetch | None = None
        used = numbered.used
        if self.unheld and table.unheld_spans is not None:
            away = [table.names.index(name) for name in sorted(self.unheld)]
            used = used | (table.unheld_spans[away].sum(axis=0) > 0)
        self.type_names = table.type_names[used]
        self._cache: dict[object, Any] = {
            ("ids", "strict", name): ids for name, ids in zip(self.names, numbered.ids) if name not in self.unheld
        }
        strict_row, relaxed_row = numbered.strict_row, numbered.relaxed_row
        # the per-id maps in the table's types (int32 items and offsets unless the record needs int64) and the
        # ids in ``id_dtype``: at a million items 0.5 GB as int64, half that as they are. A reader forming a
        # wider value from them (a key of item and offset, item x types) casts to int64 first
        self._id_dtype = id_dtype(table.n_spans)
        self._id_item = {"strict": table.item[strict_row], "relaxed": table.item[relaxed_row]}
        self._n_ids = {"strict": len(strict_row), "relaxed": len(relaxed_row)}
        # strict id -> relaxed id and type (int16 codes unless there are 2**15 types or more), for the
        # type-confusion table
        self._strict_to_relaxed = numbered.strict_to_relaxed
        type_code = np.cumsum(used) - 1
        self._strict_type = type_code.astype(np.int16 if len(type_code) < 2**15 else np.int32)[table.type[strict_row]]
        # strict id -> start and end, for overlap matching
        self._strict_start = table.start[strict_row]
        self._strict_end = table.end[strict_row]
        self._marks: dict[str, np.ndarray] = {}  # per rule, a byte of labellings' marks per span id (``_mark``)
        self._slots: dict[str, dict[str, np.uint8]] = {}  # per rule, the labellings marked and their bits
        self._derived: dict[str, np.ndarray] = {}  # derived labelling -> present per item (``derive``)
        self.derivations: list[Callable[[ItemCounts], None]] = []  # what made them (``derive_with``)

    # -- derived labellings ----------------------------------------------------------------------------
    def item_of(self, rule: str, ids: np.ndarray) -> np.ndarray:
        """Return the item each span id (under the rule) belongs to."""
        return self._id_item[rule][ids]

    def derive(self, name: str, strict_ids: np.ndarray, present: np.ndarray) -> None:
        """Add a labelling made of spans the record already holds (a what-if reference), once.

        ``strict_ids`` are its strict span ids, ``present`` says on which items it is present. Its relaxed set
        is the projection of its strict set, so ``tp``, ``size`` and ``equal`` (and every column built on them)
        treat it like a labelling of the record. It is not one of ``names``, the record's labellings.
        """
        strict = self._marked("strict", np.asarray(strict_ids))
        present = np.asarray(present, dtype=bool)
        if name in self.names:
            raise ValueError(f"derived labelling {name!r} would hide the record's labelling of that name")
        if name in self._derived:
            if not (np.array_equal(self._derived[name], present) and np.array_equal(self.ids("strict", name), strict)):
                raise ValueError(f"derived labelling {name!r} is already defined differently")
            return
        self._derived[name] = present
        self._cache[("ids", "strict", name)] = strict
        self._cache[("ids", "relaxed", name)] = self._marked("relaxed", self._strict_to_relaxed[strict])

    def derive_with(self, make: Callable[[ItemCounts], None]) -> None:
        """Run ``make(self)``, which adds derived labellings (``derive``) from this counts' own, and keep it: a
        partitioned record's workers run it on their partitions' counts for the columns of those labellings that
        read spans this one does not hold (``Fetch``). ``make`` must be a picklable function of the counts alone,
        computed item by item (a partition derives what the whole record would on its items)."""
        make(self)
        self.derivations.append(make)

    def knows(self, name: str) -> bool:
        """Return whether ``name`` is one of the counts' labellings or a derived one."""
        return name in self.names or name in self._derived

    def _marked(self, rule: str, ids: np.ndarray) -> np.ndarray:
        """Return span ids sorted and unique, in the ids' type: mark and read back, O(ids) (np.unique sorts or
        hashes, ~20x slower)."""
        mark = np.zeros(self._n_ids[rule], dtype=bool)
        mark[ids] = True
        return np.flatnonzero(mark).astype(self._id_dtype, copy=False)

    # -- span sets -----------------------------------------------------------------------------------
    def ids(self, rule: str, name: str) -> np.ndarray:
        """Return the sorted unique span ids of a labelling under a rule (repeats count once).

        The strict ones are made with the counts (``_encode_spans``); the relaxed ones are the strict ones'
        relaxed ids, once each: along the strict ids the relaxed id never decreases, so they come sorted.
        """
        rule = SET_RULE[rule]
        key = ("ids", rule, name)
        if key not in self._cache:
            if name in self.unheld:
                raise UnheldSpans(name)
            if rule == "strict":
                raise ValueError(f"{name!r} is neither a labelling of the counts nor a derived one")
            relaxed = self._strict_to_relaxed[self.ids("strict", name)]
            self._cache[key] = (
                relaxed[np.concatenate([[True], relaxed[1:] != relaxed[:-1]])] if len(relaxed) else relaxed
            )
        return self._cache[key]

    def span_counts(self, names: Sequence[str]) -> dict[str, int]:
        """Return each labelling's number of distinct strict spans (repeats once, as under every rule)."""
        away = [name for name in names if name in self.unheld]
        fetched = self._fetch(away[0]).span_counts(away) if away else {}
        return {name: fetched[name] if name in fetched else len(self.ids("strict", name)) for name in names}

    def _fetch(self, name: str) -> Fetch:
        """Return where what needs an unheld labelling's spans comes from; raise if nothing serves it."""
        if self.fetch is None:
            raise UnheldSpans(name)
        return self.fetch

    def has(self, name: str) -> np.ndarray:
        """Return whether the labelling is present on each item."""
        if name in self._derived:
            return self._derived[name]
        return self.present[:, self.names.index(name)]

    def size(self, rule: str, name: str) -> np.ndarray:
        """Return |L_i| per item under the rule (0 where absent); under overlap the strict size. In the smallest
        unsigned type holding them (``narrowest``): cast before a difference."""
        rule = SET_RULE[rule]
        key = ("size", rule, name)
        if key not in self._cache:
            ids = self.ids(rule, name)
            self._cache[key] = narrowest(np.bincount(self._id_item[rule][ids], minlength=self.n_items))
        return self._cache[key]

    def common(self, rule: str, a: str, b: str) -> np.ndarray:
        """Return the span ids in both labellings under a set rule (strict or relaxed), sorted.

        One labelling's ids are marked (``_mark``) and the other's read: O(|b|) when one of them is marked
        already (a reference, for every output compared with it), O(|a| + |b|) at most; never O(all span ids).
        The marks are shared, so this runs under ``MARKING``: threads may ask at once.
        """
        for name in (a, b):
            self.ids(rule, name)  # sorted once, before the lock: not under it
        with MARKING:
            if b in self._slots.setdefault(rule, {}) and a not in self._slots[rule]:
                a, b = b, a
            bit = self._mark(rule, a)
            ids_b = self.ids(rule, b)
            return ids_b[(self._marks[rule][ids_b] & bit) != 0]

    def _mark(self, rule: str, name: str) -> np.uint8:
        """Return the bit that marks a labelling's span ids under a rule, marking them first if they are not.

        A byte per span id holds the marks of the ``MARK_SLOTS`` labellings used last, a bit each; the one used
        least recently is unmarked to make room."""
        slots = self._slots.setdefault(rule, {})  # labelling -> its bit, the one used least recently first
        if name in slots:
            slots[name] = slots.pop(name)
            return slots[name]
        if rule not in self._marks:
            self._marks[rule] = np.zeros(self._n_ids[rule], dtype=np.uint8)
        mark = self._marks[rule]
        if len(slots) < MARK_SLOTS:
            bit = np.uint8(1 << len(slots))
        else:
            oldest = next(iter(slots))
            bit = slots.pop(oldest)
            mark[self.ids(rule, oldest)] &= ~bit
        mark[self.ids(rule, name)] |= bit
        slots[name] = bit
        return bit

    def tp(self, rule: str, a: str, b: str) -> np.ndarray:
        """Return |A_i ∩ B_i| per item under the rule, in the smallest unsigned type holding them (``narrowest``)."""
        if a > b:  # symmetric: cache once per unordered pair
            a, b = b, a
        key = ("tp", rule, a, b)
        if key not in self._cache:
            if rule == "overlap":
                self._cache[key] = narrowest(self._overlap_tp(a, b))
            else:
                self._cache[key] = narrowest(
                    np.bincount(self._id_item[rule][self.common(rule, a, b)], minlength=self.n_items)
                )
        return self._cache[key]

    def _overlap_tp(self, a: str, b: str) -> np.ndarray:
        """Return the maximum one-to-one overlap matching's size per item between a's and b's strict sets."""
        ids_a, ids_b = self.ids("strict", a), self.ids("strict", b)
        item = self._id_item["strict"]
        return overlap_true_positives(
            (item[ids_a], self._strict_start[ids_a], self._strict_end[ids_a], self._strict_type[ids_a]),
            (item[ids_b], self._strict_start[ids_b], self._strict_end[ids_b], self._strict_type[ids_b]),
            self.n_items,
        )

    def equal(self, a: str, b: str) -> np.ndarray:
        """Return whether the strict span sets of a and b are equal (both present) on each item."""
        if a > b:
            a, b = b, a
        key = ("equal", a, b)
        if key not in self._cache:
            shared = self.tp("strict", a, b)
            self._cache[key] = (
                self.has(a) & self.has(b) & (self.size("strict", a) == shared) & (self.size("strict", b) == shared)
            )
        return self._cache[key]

    # -- columns for the bootstrap ---------------------------------------------------------------------
    def flag(self, name: str) -> np.ndarray:
        """Return boolean item metadata ``name`` (missing counts as false)."""
        key = ("flag", name)
        if key not in self._cache:
            self._cache[key] = self.table.flag(name)
        return self._cache[key]

    def values(self, column: Column) -> np.ndarray:
        """Return the per-item values of a column as float64 (exact for counts)."""
        if column.kind in self.kinds and not self.kinds[column.kind].integer:
            return self.real(column)
        return self.integers(column).astype(np.float64)

    def is_integer(self, column: Column) -> bool:
        """Return whether a column holds integer counts (every built-in kind does; a declared one says)."""
        return column.kind not in self.kinds or self.kinds[column.kind].integer

    def real(self, column: Column) -> np.ndarray:
        """Return the per-item values of a real-valued column a declared kind computes (float64)."""
        key = ("real", column)
        if key not in self._cache:
            self._cache[key] = np.asarray(self.kinds[column.kind].values(self, column), dtype=np.float64)
        return self._cache[key]

    def matrix(self, columns: Sequence[Column]) -> np.ndarray:
        """Return the columns' per-item values as one matrix [item, column] of the smallest unsigned integer type
        holding them (a million items x 200 columns: 0.2 GB as uint8, 1.6 GB as float64); float64 when a
        column is real-valued (the bootstrap then sums in float64)."""
        if not all(self.is_integer(column) for column in columns):
            # each column cast straight into its place (a float64 copy per column, then a stack of them, took 2.3 s
            # of a million items' 18 such columns)
            matrix = np.empty((self.n_items, len(columns)), dtype=np.float64, order="F")
            for position, column in enumerate(columns):
                matrix[:, position] = self.integers(column) if self.is_integer(column) else self.real(column)
            return np.ascontiguousarray(matrix)
        found = [self.integers(column) for column in columns]
        matrix = np.empty((self.n_items, len(columns)), dtype=common_unsigned(found), order="F")
        for position, values in enumerate(found):
            matrix[:, position] = values  # contiguous in column order, then one copy into row order
        return np.ascontiguousarray(matrix)

    def integers(self, column: Column) -> np.ndarray:
        """Return the per-item values of a column as non-negative integers or booleans (counts and flags)."""
        if self.unheld and column.kind not in self.kinds and self.unheld.intersection(column.labellings()):
            key = ("fetched", column)
            if key not in self._cache:
                self._cache[key] = self._fetch(sorted(self.unheld.intersection(column.labellings()))[0]).column(column)
            return self._cache[key]
        if column.kind in self.kinds:
            if not self.kinds[column.kind].integer:
                raise ValueError(f"column kind {column.kind!r} is real-valued: read it with values()")
            key = ("declared", column)
            if key not in self._cache:
                # kept in the smallest unsigned type holding them (most are 0/1 or a few: a byte an item, not four;
                # a million items x 66 such columns: 63 MB, not 252), which ``workers.client_columns`` then keeps
                # as it is; a reader forming a wider value casts first
                values = np.asarray(self.kinds[column.kind].values(self, column))
                if len(values) and int(values.min()) < 0:
                    raise ValueError(f"column kind {column.kind!r} gave a negative count")
                self._cache[key] = narrowest(values)
            return self._cache[key]
        if column.type:
            items, codes, numbers = self.typed(column.kind, column.rule, column.a, column.b)
            chosen = codes == self.type_code(column.type)
            return np.bincount(items[chosen], weights=numbers[chosen], minlength=self.n_items).astype(COUNT_DTYPE)
        if column.kind == "tp":
            values = self.tp(column.rule, column.a, column.b)
        elif column.kind == "size":
            values = self.size(column.rule, column.a)
        elif column.kind == "equal":
            values = self.equal(column.a, column.b)
        elif column.kind == "equal_any":
            values = np.zeros(self.n_items, dtype=bool)
            for other in column.others:
                values = values | self.equal(column.a, other)
        elif column.kind == "flag":
            values = self.flag(column.a)
        else:
            raise ValueError(f"unknown column kind {column.kind!r}")
        return values

    # -- per-type counts ---------------------------------------------------------------------------------
    def type_code(self, name: str) -> int:
        """Return a span type's code (its position in the sorted ``type_names``)."""
        code = int(np.searchsorted(self.type_names, name))
        if code >= len(self.type_names) or self.type_names[code] != name:
            raise KeyError(f"no span of type {name!r} in the record")
        return code

    def typed(self, kind: str, rule: str, a: str, b: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return a count split by span type as sparse triples (item, type code, count), ordered by item then type.

        ``size``: |a| per type (strict set; overlap's sizes are the strict ones); ``tp``: |a ∩ b| per type under
        ``strict``, or under ``overlap`` the maximum matching's size per type (spans of different types never
        match, so the per-item matching is the sum of the per-type ones). Every span has one type, so summed
        over the types the counts are ``size`` and ``tp``. One pass over the spans whatever the number of types;
        an item without spans of a type has no triple for it.
        """
        if rule not in ("strict", "overlap"):
            raise ValueError(f"rule {rule!r} keeps no types: per-type counts exist under strict and overlap")
        if kind == "tp" and a > b:
            a, b = b, a
        key = ("typed", kind, rule if kind == "tp" else "strict", a, b if kind == "tp" else "")
        if key not in self._cache:
            if self.unheld.intersection(key[3:]):
                self._cache[key] = self._fetch(key[3]).typed(*key[1:])
            elif kind == "size":
                self._cache[key] = self._per_item_and_type(self.ids("strict", a))
            elif kind == "tp" and rule == "strict":
                self._cache[key] = self._per_item_and_type(self.common("strict", a, b))
            elif kind == "tp":
                self._cache[key] = self._overlap_tp_by_type(a, b)
            else:
                raise ValueError(f"column kind {kind!r} has no per-type counts")
        return self._cache[key]

    def _type_cells(self, ids: np.ndarray) -> np.ndarray:
        """Return each strict span id's (item, type) cell: item x types + type code."""
        return self._id_item["strict"][ids].astype(np.int64) * max(len(self.type_names), 1) + self._strict_type[ids]

    def _per_type_dense(self, ids: np.ndarray) -> np.ndarray:
        """Return counts[item, type] of the strict span ids (items x types cells: see DENSE_CELLS)."""
        n_types = max(len(self.type_names), 1)
        return np.bincount(self._type_cells(ids), minlength=self.n_items * n_types).reshape(self.n_items, n_types)

    def _per_item_and_type(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (item, type code, number of the strict ``ids`` on that item with that type), nonzero only."""
        n_types = max(len(self.type_names), 1)
        if self.n_items * n_types <= DENSE_CELLS:  # one count per (item, type) cell: no sort
            dense = self._per_type_dense(ids).reshape(-1)
            cells = np.flatnonzero(dense)
            return compact(cells // n_types), compact(cells % n_types), compact(dense[cells])
        cell = np.sort(self._type_cells(ids), kind="stable")
        # sorted by item already (ids are item-major): the stable sort only reorders each item's few spans
        starts = np.flatnonzero(np.concatenate([[True], cell[1:] != cell[:-1]])) if len(cell) else np.zeros(0, np.int64)
        cells, numbers = cell[starts], np.diff(np.append(starts, len(cell)))
        return compact(cells // n_types), compact(cells % n_types), compact(numbers)

    def _overlap_tp_by_type(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the overlap rule's maximum matching per (item, type) as triples, nonzero only.

        The matching runs on groups of spans sharing item and type, numbered densely (no items x types array).
        """
        ids_a, ids_b = self.ids("strict", a), self.ids("strict", b)
        n_types = max(len(self.type_names), 1)
        item, kind = self._id_item["strict"], self._strict_type
        cell_a = item[ids_a].astype(np.int64) * n_types + kind[ids_a]  # int64 before the product
        cell_b = item[ids_b].astype(np.int64) * n_types + kind[ids_b]
        cells, group = np.unique(np.concatenate([cell_a, cell_b]), return_inverse=True)
        group = group.reshape(-1).astype(np.int64)
        matched = overlap_true_positives(
            (group[: len(ids_a)], self._strict_start[ids_a], self._strict_end[ids_a], kind[ids_a]),
            (group[len(ids_a) :], self._strict_start[ids_b], self._strict_end[ids_b], kind[ids_b]),
            len(cells),
        )
        found = np.flatnonzero(matched)
        return compact(cells[found] // n_types), compact(cells[found] % n_types), compact(matched[found])

    def typed_matrix(
        self, families: Sequence[Column], codes: Sequence[int], sparse: bool = False
    ) -> tuple[np.ndarray, Any]:
        """Return (items, values): the per-type counts of ``families`` (untyped tp/size columns) for the type
        ``codes``, as a dense matrix over the items having any of them, column f * len(codes) + k holding family
        f's count of type codes[k]. Items not listed count zero in every column. ``sparse``: values is a
        scipy CSR matrix, its size the nonzero counts' (an item has a few of thousands of types)."""
        codes = np.asarray(codes, dtype=np.int64)
        n_types = max(len(self.type_names), 1)
        if sparse:
            return self._typed_sparse(families, codes)
        if (
            self.n_items * n_types <= DENSE_CELLS
            and all(family.rule != "overlap" for family in families)
            and not any(self.unheld.intersection(family.labellings()) for family in families)  # its triples: fetched
        ):
            return self._typed_dense(families, codes)
        position = np.full(n_types, -1, dtype=np.int64)
        position[codes] = np.arange(len(codes))
        triples = []
        mark = np.zeros(self.n_items, dtype=bool)
        top = 0
        for number, family in enumerate(families):
            items, types, counts = self.typed(family.kind, family.rule, family.a, family.b)
            keep = position[types] >= 0
            triples.append((items[keep], number * len(codes) + position[types[keep]], counts[keep]))
            mark[triples[-1][0]] = True
            top = max(top, int(counts.max(initial=0)))
        # the listed items in item order, and each item's row: marks, not a sort of every triple
        listed = np.flatnonzero(mark)
        row = np.cumsum(mark) - 1
        values = np.zeros((len(listed), len(families) * len(codes)), dtype=smallest_unsigned(np.array([top])))
        for items, columns, counts in triples:
            values[row[items], columns] = counts
        return listed, values

    def _typed_sparse(self, families: Sequence[Column], codes: np.ndarray) -> tuple[np.ndarray, Any]:
        """``typed_matrix`` as a CSR matrix built from each family's (item, type, count) triples."""
        from scipy.sparse import csr_matrix

        position = np.full(max(len(self.type_names), 1), -1, dtype=np.int64)
        position[codes] = np.arange(len(codes))
        rows, columns, values = [], [], []
        for number, family in enumerate(families):
            items, types, counts = self.typed(family.kind, family.rule, family.a, family.b)
            keep = position[types] >= 0
            rows.append(items[keep])
            columns.append(number * len(codes) + position[types[keep]])
            values.append(counts[keep])
        row, column, value = (
            np.concatenate(found) if found else np.zeros(0, np.int64) for found in (rows, columns, values)
        )
        listed, row = np.unique(row, return_inverse=True)
        matrix = csr_matrix(
            (value.astype(np.float64), (row.reshape(-1), column)), shape=(len(listed), len(families) * len(codes))
        )
        return listed, matrix

    def _typed_dense(self, families: Sequence[Column], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``typed_matrix`` by counting each family's spans per (item, type) cell: no triples, no sort.

        The items are taken a block at a time (``ROW_BLOCK_BYTES`` of the matrix): the block's counts are laid in
        column order (each family's cells contiguous), then its listed rows are copied into the matrix in row
        order while they are in cache. A labelling's spans in the block are found once for its size and every
        tp family naming it first (tp: its spans the other labelling has, marked once per labelling). A cell
        is set to 1; only a family with two spans in one cell of the block (the block then holds fewer nonzero
        cells than spans) is counted per cell. A count above 255 (more spans of one type on an item)
        takes ``_typed_wide``."""
        for name in dict.fromkeys(family.a for family in families):
            if int(self.size("strict", name).max(initial=0)) > np.iinfo(np.uint8).max:
                return self._typed_wide(families, codes)
        n, width = self.n_items, len(codes)
        position = np.full(max(len(self.type_names), 1), -1, dtype=np.int64)
        position[codes] = np.arange(width)
        item, kind = self._id_item["strict"], self._strict_type
        columns = len(families) * width
        step = max(1, ROW_BLOCK_BYTES // max(1, columns))  # items per block
        edges = np.arange(0, n + step, step).clip(max=n)
        grouped: dict[str, list[tuple[int, Column]]] = {}
        for number, family in enumerate(families):
            grouped.setdefault(family.a, []).append((number, family))
        # strict ids are numbered item by item: each block's ids are a range, found in a labelling's sorted ids
        # by a binary search (its spans' items and types are gathered a block at a time, not held whole)
        # (keys in the arrays' own types: a key of another type casts the whole array on every search)
        id_edges = np.searchsorted(item, edges.astype(item.dtype)).astype(self._id_dtype)
        spans = {name: self.ids("strict", name) for name in grouped}
        bounds = {name: np.searchsorted(ids, id_edges).tolist() for name, ids in spans.items()}
        marks: dict[str, np.ndarray] = {}  # per labelling named second by a tp family: a mark per strict id
        for family in families:
            if family.kind != "size" and family.b not in marks:
                marks[family.b] = np.zeros(self._n_ids["strict"], dtype=bool)
                marks[family.b][self.ids("strict", family.b)] = True
        # a block's rows beyond the listed ones are never written: the matrix is the first rows of one as long
        # as the record (the pages never touched are not allocated)
        matrix = np.empty((n, columns), dtype=np.uint8)
        block = np.zeros((step, columns), dtype=np.uint8, order="F")
        listed, at = [], 0
        for low, high in zip(edges[:-1].tolist(), edges[1:].tolist()):
            size = high - low
            flat = block.reshape(-1, order="F")
            for name, group in grouped.items():
                ids = spans[name][bounds[name][len(listed)] : bounds[name][len(listed) + 1]]
                column = position[kind[ids]]
                if not (column >= 0).all():  # spans of types not among the codes
                    ids, column = ids[column >= 0], column[column >= 0]
                cells = column * size + (item[ids] - low)  # type position, then item, in the block
                for number, family in group:
                    found = cells if family.kind == "size" else cells[marks[family.b][ids]]
                    cut = flat[number * width * size : (number + 1) * width * size]
                    cut[found] = 1
                    if np.count_nonzero(cut) != len(found):  # two spans in one cell: count them
                        cut[:] = np.bincount(found, minlength=width * size)
            used = block.reshape(-1, order="F")[: size * columns].reshape((size, columns), order="F")
            rows = np.flatnonzero(used.any(axis=1))
            matrix[at : at + len(rows)] = used[rows]
            listed.append(rows + low)
            at += len(rows)
            used[:] = 0
        return (np.concatenate(listed) if listed else np.zeros(0, dtype=np.int64)), matrix[:at]

    def _typed_wide(self, families: Sequence[Column], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``_typed_dense`` with a count above 255: each family counted per (item, type) cell of the record."""
        values = np.zeros((self.n_items, len(families) * len(codes)), dtype=np.uint8, order="F")
        for number, family in enumerate(families):
            ids = self.ids("strict", family.a) if family.kind == "size" else self.common("strict", family.a, family.b)
            dense = self._per_type_dense(ids)[:, codes]
            kind = smallest_unsigned(np.array([int(dense.max(initial=0))]))
            if np.iinfo(kind).max > np.iinfo(values.dtype).max:  # a count beyond the type so far: widen
                values = values.astype(kind, order="F")
            values[:, number * len(codes) : (number + 1) * len(codes)] = dense
        listed = np.flatnonzero(values.any(axis=1))
        if len(listed) == self.n_items:
            return listed, np.ascontiguousarray(values)
        return listed, np.ascontiguousarray(values[listed])

    # -- the type-confusion table ------------------------------------------------------------------------
    def type_confusion(self, a: str, b: str, items: np.ndarray) -> list[tuple[str, str, int]]:
        """Count pairs of a- and b-spans with identical boundaries by their two types, over ``items``."""
        selected = np.zeros(self.n_items, dtype=bool)
        selected[items] = True
        ids_a = self.ids("strict", a)
        ids_b = self.ids("strict", b)
        ids_a = ids_a[selected[self._id_item["strict"][ids_a]]]
        ids_b = ids_b[selected[self._id_item["strict"][ids_b]]]
        # join a's and b's strict spans on their boundaries (relaxed id): every a-span pairs with every b-span
        # of the same boundary (a boundary may carry several types)
        boundary_a, type_a = self._strict_to_relaxed[ids_a], self._strict_type[ids_a]
        order = np.argsort(self._strict_to_relaxed[ids_b], kind="stable")
        boundary_b, type_b = self._strict_to_relaxed[ids_b][order], self._strict_type[ids_b][order]
        first = np.searchsorted(boundary_b, boundary_a, side="left")
        matches = np.searchsorted(boundary_b, boundary_a, side="right") - first
        within = np.arange(matches.sum()) - np.repeat(np.cumsum(matches) - matches, matches)
        paired_b = type_b[np.repeat(first, matches) + within]
        n_types = len(self.type_names)
        # the pairs that occur, counted (not a types x types table: 8,000 types would make 64 million cells)
        codes, numbers = np.unique(np.repeat(type_a, matches).astype(np.int64) * n_types + paired_b, return_counts=True)
        cells = [
            (str(self.type_names[code // n_types]), str(self.type_names[code % n_types]), int(number))
            for code, number in zip(codes.tolist(), numbers.tolist())
        ]
        return sorted(cells)


# ----------------------------------------------------------------------------------------------------------
# the overlap rule: a maximum one-to-one matching per item

SpanArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # item, start, end, type code per span


def overlap_edges(a: SpanArrays, b: SpanArrays) -> tuple[np.ndarray, np.ndarray]:
    """Return every pair (index into a, index into b) of spans with the same item and type sharing a character,
    ordered by a, then by b's (item, start) order.

    Spans are half-open ``[start, end)``: two spans share a character when each starts before the other ends.
    With b's spans in (item, start) order, an a-span's candidates are the b-spans of its item that start
    before it ends and after its start minus b's longest span (the others end before it starts): two binary
    searches, then the candidates of another type or ending too early are dropped. The candidates are tested
    ``EDGE_BLOCK`` at a time: only the pairs and the mark of those kept are as long as all of them (at a
    million items about 12 million, each int64 array 100 MB of fresh pages).
    """
    item_a, start_a, end_a, type_a = a
    item_b, start_b, end_b, type_b = b
    if not len(item_a) or not len(item_b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    longest = int((end_b - start_b).max())
    low_a = start_a.astype(np.int64)  # a copy, the a-spans' lowest start of a b-span sharing a character
    low_a -= longest - 1
    np.maximum(low_a, 0, out=low_a)
    top = int(max(end_a.max(), start_b.max())) + 1
    if (int(max(item_a.max(), item_b.max())) + 1) * top < 2**62:
        # one int64 key per position: item, then offset (the common case, no sorting of positions needed); each
        # step in place, as the pairs below (at a million items each array of the spans is 40 MB)
        key_b = item_b.astype(np.int64)  # int64 before the product (items and offsets may be int32)
        key_b *= top
        key_b += start_b
        high = item_a.astype(np.int64)
        high *= top
        low = low_a
        low += high
        high += end_a
    else:  # offsets too large to share a key with the item: rank them first
        _, rank = np.unique(np.concatenate([start_b, low_a, end_a]), return_inverse=True)
        top = int(rank.max()) + 1
        n_b, n_a = len(start_b), len(start_a)
        key_b = item_b.astype(np.int64) * top + rank[:n_b]
        low = item_a.astype(np.int64) * top + rank[n_b : n_b + n_a]
        high = item_a.astype(np.int64) * top + rank[n_b + n_a :]
    order = None
    if len(key_b) > 1 and not bool(np.all(key_b[1:] >= key_b[:-1])):  # ItemCounts' ids come sorted already
        order = np.argsort(key_b, kind="stable")
        key_b = key_b[order]
    first = np.searchsorted(key_b, low, side="left")
    candidates = np.searchsorted(key_b, high, side="left")
    candidates -= first
    edge_a = np.repeat(np.arange(len(item_a)), candidates)
    # a candidate's position in key_b: its a-span's first, plus its place among the candidates (added per block)
    before = np.cumsum(candidates)
    before -= candidates
    first -= before
    edge_b = np.repeat(first, candidates)
    # one type among all the spans (a caller matching any type passes zeros): every candidate has the same type
    one_type = int(type_a.min()) == int(type_a.max()) == int(type_b.min()) == int(type_b.max())
    shared = np.empty(len(edge_a), dtype=bool)
    for low_edge in range(0, len(edge_a), EDGE_BLOCK):
        part = slice(low_edge, low_edge + EDGE_BLOCK)
        found_b = edge_b[part]
        found_b += np.arange(low_edge, low_edge + len(found_b))
        if order is not None:
            found_b[:] = order[found_b]
        found_a = edge_a[part]
        np.greater(end_b[found_b], start_a[found_a], out=shared[part])
        if not one_type:
            shared[part] &= type_b[found_b] == type_a[found_a]
    if shared.all():
        return edge_a, edge_b
    return edge_a[shared], edge_b[shared]


def overlap_true_positives(a: SpanArrays, b: SpanArrays, n_items: int) -> np.ndarray:
    """Return, per item, the size of a maximum one-to-one matching of a's spans to b's (same type, ≥1 shared character).

    An edge whose two spans overlap nothing else of the other labelling is a match in every maximum
    matching: those (nearly all, on ordinary records) are counted at once. The items left, where a span
    overlaps several, get an exact maximum matching (Hopcroft–Karp), so the count never depends on span order.
    """
    edge_a, edge_b = overlap_edges(a, b)
    true_positives = np.zeros(n_items, dtype=np.int64)
    if not len(edge_a):
        return true_positives
    degree_a = np.bincount(edge_a, minlength=len(a[0]))
    degree_b = np.bincount(edge_b, minlength=len(b[0]))
    alone = (degree_a[edge_a] == 1) & (degree_b[edge_b] == 1)
    item_a = a[0]
    true_positives += np.bincount(item_a[edge_a[alone]], minlength=n_items)
    edge_a, edge_b = edge_a[~alone], edge_b[~alone]
    if not len(edge_a):
        return true_positives
    edge_item = item_a[edge_a]
    order = np.argsort(edge_item, kind="stable")
    edge_item, edge_a, edge_b = edge_item[order], edge_a[order], edge_b[order]
    bounds = np.flatnonzero(np.diff(edge_item)) + 1
    for first, stop in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(edge_item)]])):
        true_positives[edge_item[first]] += maximum_matching(edge_a[first:stop].tolist(), edge_b[first:stop].tolist())
    return true_positives


def maximum_matching(left: Sequence[int], right: Sequence[int]) -> int:
    """Return the size of a maximum matching of the bipartite graph with edges (left[k], right[k]) (Hopcroft–Karp)."""
    left_index = {node: index for index, node in enumerate(dict.fromkeys(left))}
    right_index = {node: index for index, node in enumerate(dict.fromkeys(right))}
    adjacency: list[list[int]] = [[] for _ in left_index]
    for u, v in zip(left, right):
        adjacency[left_index[u]].append(right_index[v])
    n_left = len(adjacency)
    unreached = n_left + 1
    match_left, match_right = [-1] * n_left, [-1] * len(right_index)
    size = 0
    while True:
        # breadth first from the free left vertices: layers of alternating paths
        distance = [unreached] * n_left
        queue = deque(u for u in range(n_left) if match_left[u] == -1)
        for u in queue:
            distance[u] = 0
        augmentable = False
        while queue:
            u = queue.popleft()
            for v in adjacency[u]:
                w = match_right[v]
                if w == -1:
                    augmentable = True
                elif distance[w] == unreached:
                    distance[w] = distance[u] + 1
                    queue.append(w)
        if not augmentable:
            return size
        # depth first along the layers, iteratively: vertex-disjoint shortest augmenting paths
        pointer = [0] * n_left
        for root in range(n_left):
            if match_left[root] != -1:
                continue
            stack, path = [root], []
            while stack:
                u = stack[-1]
                while pointer[u] < len(adjacency[u]):
                    v = adjacency[u][pointer[u]]
                    pointer[u] += 1
                    w = match_right[v]
                    if w == -1:
                        path.append(v)
                        for left_vertex, right_vertex in zip(stack, path):
                            match_left[left_vertex], match_right[right_vertex] = right_vertex, left_vertex
                        size += 1
                        stack = []
                        break
                    if distance[w] == distance[u] + 1:
                        path.append(v)
                        stack.append(w)
                        break
                else:
                    distance[u] = unreached  # a dead end for the rest of this phase
                    stack.pop()
                    if path:
                        path.pop()
