"""The record as arrays: one row per item, one per span, built once and read by the whole audit.

``SpanTable`` is what the audit reads (the counts, the item sets, the strata of the bootstrap): item ids and
languages, which labellings are present on which items, and every span as parallel integer arrays. It is made
either from ``Item`` objects (``SpanTable.from_items``: the JSON Lines record and every adapter) or straight
from columnar arrays (the Parquet record, ``adapters.parquet``, with no Python object per span), so a
million-item record never becomes a million ``Item`` objects. ``Record.item(index)`` gives one item back as an
``Item`` where a listing needs its spans and text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

# the per-span arrays: most of a record's memory, read by the counts and the analyses' plans only
SPAN_ARRAYS = ("item", "labelling", "start", "end", "type")
# Their types while their values fit (``span_array``), else int64: a span's 16 bytes, not 34 (a million items' 38
# million spans, 0.6 GB, not 1.3). Readers that form wider values (keys of item and offsets, products) cast first.
SPAN_TYPES = {"item": np.int32, "labelling": np.int16, "start": np.int32, "end": np.int32, "type": np.int16}

# Span codes counted at once by ``code_counts``: each slice's int64 copy is 8 MB.
COUNT_SLICE = 1 << 20


def holds(kind: type, values: np.ndarray) -> bool:
    """Return whether the integer type ``kind`` holds every one of the integer ``values``."""
    if not len(values) or np.can_cast(values.dtype, kind):
        return True
    limits = np.iinfo(kind)
    return limits.min <= int(values.min()) and int(values.max()) <= limits.max


def span_array(name: str, values: np.ndarray) -> np.ndarray:
    """Return the span array ``name`` in its type of ``SPAN_TYPES`` if that holds its values, else as int64 (no
    copy when it is in that type already)."""
    kind = SPAN_TYPES[name] if holds(SPAN_TYPES[name], values) else np.int64
    return values.astype(kind, copy=False)


class ReleasedSpans:
    """Stands for a span array the audit has freed (``SpanTable.release_spans``): any use raises, so a late
    reader fails loudly instead of reading an empty array."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<released span array {self.name!r}>"

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError(
            f"the span table's {self.name!r} array was released once the bootstrap had drawn every estimate "
            "(audit.run_audit): read spans before that, or through ItemCounts"
        )

    __len__ = __iter__ = __getitem__ = __array__ = _refuse

    def __getattr__(self, attribute: str) -> Any:
        return self._refuse()


@dataclass(frozen=True, eq=False)
class SpanTable:
    """Items and spans as arrays.

    Items: ``ids`` (str, record order), ``language`` (code into ``languages``, sorted), ``present[item, name]``
    (labelling ``names[name]`` is present on the item, possibly with no span). Spans, ordered by item (record
    order, then as read): ``item``, ``labelling`` (code into ``names``), ``start``, ``end``, ``type`` (code into
    ``type_names``, sorted), each in its type of ``SPAN_TYPES`` (int32, the codes int16) where its values fit,
    else int64: the table narrows them when it is made (``span_array``).
    ``unheld``: labellings whose spans the table counts but does not hold (their presence it does): a
    partitioned record's Dask client reads the outputs' spans on the workers only (``workers.unheld_names``);
    ``unheld_spans[labelling, type]`` counts them, by code into ``names`` and ``type_names``; ``unheld_ends``
    gives each item's furthest end among them (0: none).
    ``meta[key]``: per item, the value of a metadata key (None where the item does not give it); ``text``: per
    item, its text or None (None as a whole when no item has text). ``record_order``: per item, its place in the
    record it was converted from, where the items are in another order (a partitioned record is in canonical
    order); the duplicate policies' first and last follow it. None: the table's order.
    """

    ids: np.ndarray
    language: np.ndarray
    languages: tuple[str, ...]
    names: tuple[str, ...]
    present: np.ndarray
    item: np.ndarray
    labelling: np.ndarray
    start: np.ndarray
    end: np.ndarray
    type: np.ndarray
    type_names: np.ndarray
    meta: Mapping[str, np.ndarray] = field(default_factory=dict)
    text: np.ndarray | None = None
    items: Sequence[Any] | None = None  # the Item objects it was made from, if any (their meta, on demand)
    record_order: np.ndarray | None = None
    unheld: tuple[str, ...] = ()
    unheld_spans: np.ndarray | None = None
    unheld_ends: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in SPAN_ARRAYS:
            object.__setattr__(self, name, span_array(name, getattr(self, name)))

    @property
    def n_items(self) -> int:
        return len(self.ids)

    @property
    def n_spans(self) -> int:
        return len(self.item)

    def release_spans(self) -> None:
        """Free the per-span arrays (``SPAN_ARRAYS``), for every holder of this table at once (the record, its
        ``ItemCounts``): the audit (a partitioned record's client too) holds no spans beside the bootstrap's
        count matrices, its peak, nor after them.

        Only for a table nothing else will read spans from: ``audit.run_audit`` calls it on the record it loaded
        itself once the counts and the analyses' estimates are made (their plans and the caches their columns
        read, such as each labelling's distinct spans, are built by then; the bootstrap, summaries and listings
        read ``ItemCounts``). Reading a span array afterwards raises
        ``RuntimeError`` (``ReleasedSpans``). Ids, languages, presence, metadata and text stay.
        """
        for name in SPAN_ARRAYS:
            object.__setattr__(self, name, ReleasedSpans(name))

    @property
    def spans_released(self) -> bool:
        """Return whether ``release_spans`` has freed the span arrays."""
        return isinstance(self.item, ReleasedSpans)

    @classmethod
    def from_items(cls, items: Sequence[Any]) -> SpanTable:
        """Flatten ``Item`` objects into arrays (one pass over the record)."""
        n_items = len(items)
        name_code: dict[str, int] = {}
        present_item: list[int] = []
        present_code: list[int] = []
        span_count: list[int] = []
        flat_spans: list[tuple[int, int, str]] = []
        for index, item in enumerate(items):
            for name, spans in item.labellings.items():
                present_item.append(index)
                present_code.append(name_code.setdefault(name, len(name_code)))
                span_count.append(len(spans))
                flat_spans.extend(spans)
        present = np.zeros((n_items, len(name_code)), dtype=bool)
        present[present_item, present_code] = True
        span_item = np.repeat(np.asarray(present_item, dtype=np.int64), span_count)
        labelling = np.repeat(np.asarray(present_code, dtype=np.int64), span_count)
        # fromiter over itemgetter: ~10x faster than zip(*flat_spans) on millions of spans
        n_spans = len(flat_spans)
        start = np.fromiter(map(itemgetter(0), flat_spans), np.int64, n_spans)
        end = np.fromiter(map(itemgetter(1), flat_spans), np.int64, n_spans)
        # a dict factorises the few distinct types (no pandas import, ~0.5 s of every build)
        first_seen: dict[str, int] = {}
        codes = np.fromiter(
            (first_seen.setdefault(name, len(first_seen)) for name in map(itemgetter(2), flat_spans)), np.int64, n_spans
        )
        type_names, type_codes = sorted_codes(np.array(list(first_seen), dtype=object), codes)
        languages = tuple(sorted({item.language for item in items}))
        language_code = {language: code for code, language in enumerate(languages)}
        texts = [item.text for item in items]
        return cls(
            ids=np.array([item.id for item in items], dtype=object),
            language=np.fromiter((language_code[item.language] for item in items), np.int64, n_items),
            languages=languages,
            names=tuple(name_code),
            present=present,
            item=span_item,
            labelling=labelling,
            start=start,
            end=end,
            type=type_codes,
            type_names=type_names,
            text=np.array(texts, dtype=object) if any(text is not None for text in texts) else None,
            items=items,
        )

    def meta_keys(self) -> list[str]:
        """Return the item metadata keys some item gives, sorted."""
        keys = set(self.meta)
        for item in self.items or ():
            keys.update(item.meta)
        return sorted(keys)

    def meta_values(self, key: str) -> np.ndarray:
        """Return each item's metadata value for ``key`` (None where it gives none), as an object array."""
        if key in self.meta:
            return self.meta[key]
        if self.items is not None:
            return np.array([item.meta.get(key) for item in self.items] + [None], dtype=object)[:-1]
        return np.full(self.n_items, None, dtype=object)

    def flag(self, key: str) -> np.ndarray:
        """Return whether each item's metadata ``key`` is true (missing counts as false)."""
        values = self.meta_values(key)
        return np.fromiter((value is True for value in values), dtype=bool, count=self.n_items)

    def known(self, key: str) -> np.ndarray:
        """Return whether each item gives metadata ``key`` at all."""
        return np.fromiter((value is not None for value in self.meta_values(key)), dtype=bool, count=self.n_items)

    def has(self, name: str) -> np.ndarray:
        """Return whether labelling ``name`` is present on each item (False everywhere for a name not in the record)."""
        if name not in self.names:
            return np.zeros(self.n_items, dtype=bool)
        return self.present[:, self.names.index(name)]

    def language_names(self) -> np.ndarray:
        """Return each item's language as an object array of str."""
        return np.array(self.languages, dtype=object)[self.language] if self.n_items else np.zeros(0, dtype=object)

    def item_spans(self, index: int) -> dict[str, tuple[tuple[int, int, str], ...]]:
        """Return the labellings present on one item, each with its spans as (start, end, type) tuples."""
        # a key of the array's own type: another would make searchsorted cast the whole array on each call
        key = self.item.dtype.type(index)
        first, stop = np.searchsorted(self.item, key), np.searchsorted(self.item, key, side="right")
        spans: dict[str, list[tuple[int, int, str]]] = {
            name: [] for code, name in enumerate(self.names) if self.present[index, code]
        }
        for k in range(first, stop):
            spans[self.names[self.labelling[k]]].append(
                (int(self.start[k]), int(self.end[k]), str(self.type_names[self.type[k]]))
            )
        return {name: tuple(found) for name, found in spans.items()}


def code_counts(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Return how many of ``codes`` (a span array's) are each of 0 .. n_codes - 1: ``np.bincount`` a slice at a time,
    as it first copies its whole input into int64 (8 bytes a span of a narrow array, 300 MB at a million items)."""
    found = np.zeros(n_codes, dtype=np.int64)
    for first in range(0, len(codes), COUNT_SLICE):
        found += np.bincount(codes[first : first + COUNT_SLICE], minlength=n_codes)
    return found


def sorted_codes(uniques: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (the names sorted, codes renumbered into that order) for codes into ``uniques``.

    Type codes follow the sorted type names, so span ids (and every table ordered by type) do not depend on
    the order the record lists its spans in.
    """
    names = np.array(sorted(uniques.tolist()), dtype=object)
    if not len(codes):
        return names, codes.astype(np.int64)
    return names, np.searchsorted(names, uniques)[codes].astype(np.int64)
