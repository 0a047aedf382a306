"""ItemCounts' span numbering, made a block of items at a time, against a numbering of the span tuples in Python."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from refsens_report import counts as counts_module
from refsens_report.counts import ItemCounts
from refsens_report.record import Item
from refsens_report.table import SpanTable

NAMES = ("out", "ref", "other")
TYPES = ("LOC", "ORG", "PER", "ZZZ")


def random_items(seed: int, n_items: int = 60) -> list[Item]:
    """Items with a few spans per labelling (repeats, shared spans, empty items, absent labellings); ``ZZZ`` only
    in the labelling no role names, so the counted types are a subset of the table's."""
    rng = random.Random(seed)
    items = []
    for number in range(n_items):
        labellings = {}
        for name in NAMES:
            if rng.random() < 0.15:
                continue  # absent
            spans = []
            for _ in range(rng.randint(0, 5)):
                start = rng.randrange(0, 20)
                kind = rng.choice(TYPES if name == "other" else TYPES[:3])
                spans.append((start, rng.randint(start + 1, 24), kind))
            labellings[name] = tuple(spans + spans[:1])
        items.append(Item(f"i{number:03d}", "en", labellings))
    return items


def expected_numbering(table: SpanTable, names: tuple[str, ...]) -> dict[str, object]:
    """Number the counted spans as ItemCounts documents it, from Python tuples: ids in sorted order of (item,
    start, end, type code) and (item, start, end), type codes in sorted order of the types the counted spans use,
    the spans by labelling in record order within each labelling."""
    spans = [
        (int(one), table.names[int(code)], int(start), int(end), str(table.type_names[int(kind)]))
        for one, code, start, end, kind in zip(table.item, table.labelling, table.start, table.end, table.type)
        if table.names[int(code)] in names
    ]
    types = sorted({span[4] for span in spans})
    strict = sorted({(one, start, end, types.index(kind)) for one, _, start, end, kind in spans})
    relaxed = sorted({key[:3] for key in strict})
    by_labelling = [span for name in names for span in spans if span[1] == name]
    keys = [(one, start, end, types.index(kind)) for one, _, start, end, kind in by_labelling]
    return {
        "types": types,
        "strict": [strict.index(key) for key in keys],
        "relaxed": [relaxed.index(key[:3]) for key in keys],
        "strict_keys": strict,
        "relaxed_items": [key[0] for key in relaxed],
        "bounds": np.cumsum([0] + [sum(span[1] == name for span in spans) for name in names]).tolist(),
    }


def check_numbering(counts: ItemCounts, expected: dict[str, object], offset: int = 0) -> None:
    """Assert every id and per-id map of ``counts`` equals the expected numbering (offsets shifted by ``offset``)."""
    assert counts.type_names.tolist() == expected["types"]
    assert counts._by_labelling.tolist() == expected["bounds"]
    assert counts._span_id["strict"].tolist() == expected["strict"]
    assert counts._span_id["relaxed"].tolist() == expected["relaxed"]
    strict = list(
        zip(
            counts._id_item["strict"].tolist(),
            (counts._strict_start - offset).tolist(),
            (counts._strict_end - offset).tolist(),
            counts._strict_type.tolist(),
        )
    )
    assert strict == expected["strict_keys"]
    assert counts._id_item["relaxed"].tolist() == expected["relaxed_items"]
    relaxed_keys = sorted({key[:3] for key in expected["strict_keys"]})
    assert counts._strict_to_relaxed.tolist() == [relaxed_keys.index(key[:3]) for key in expected["strict_keys"]]
    for array in (counts._id_item["strict"], counts._strict_start, counts._strict_type, counts._strict_to_relaxed):
        assert array.dtype == np.int64


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_numbering_by_blocks_of_items_is_the_numbering_of_the_span_tuples(monkeypatch, block, seed):
    """Whatever the block (one span: each item alone, or a block cut inside an item and moved to its first
    span, or the whole record), with spans of a labelling no role names left out, the ids, each labelling's
    slice and every per-id map are those of the sorted span tuples."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", block)
    table = SpanTable.from_items(random_items(seed))
    names = ("ref", "out")  # "other" not counted; names in another order than the table's
    check_numbering(ItemCounts(table, names), expected_numbering(table, names))


@pytest.mark.parametrize("block", [2, 1 << 20])
def test_offsets_too_large_for_one_key_are_numbered_by_blocks_too(monkeypatch, block):
    """Offsets near 2**61 take the row-wise unique in each block: the same numbering."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", block)
    table = SpanTable.from_items(random_items(2))
    far = dataclasses.replace(table, start=table.start.astype(np.int64) + 2**61, end=table.end.astype(np.int64) + 2**61)
    check_numbering(ItemCounts(far, NAMES), expected_numbering(table, NAMES), offset=2**61)


def test_a_table_whose_spans_are_not_ordered_by_item_is_refused():
    """The numbering relies on the table's order (spans by item): a table out of it raises, not a wrong id."""
    table = SpanTable.from_items(random_items(3))
    order = np.arange(table.n_spans)[::-1]
    shuffled = dataclasses.replace(
        table, **{name: getattr(table, name)[order] for name in ("item", "labelling", "start", "end", "type")}
    )
    with pytest.raises(ValueError, match="not ordered by item"):
        ItemCounts(shuffled, NAMES)


def test_an_empty_record_has_no_ids():
    table = SpanTable.from_items([Item("a", "en", {"out": ()}), Item("b", "en", {"ref": ()})])
    counts = ItemCounts(table, ("out", "ref"))
    assert counts.ids("strict", "out").tolist() == counts.ids("relaxed", "ref").tolist() == []
    assert counts.size("strict", "out").tolist() == [0, 0]
