"""ItemCounts' span numbering, made a block of items at a time, against a numbering of the span tuples in Python; and
the span table's narrow types (int32 and int16 where the values fit), which must widen where they do not."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from helpers import A, B, D, R, item, write_project

from refsens_report import counts as counts_module
from refsens_report import table as table_module
from refsens_report.adapters import parquet
from refsens_report.analyses.pairs import distinct_spans, item_lengths
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.counts import Column, ColumnKind, ItemCounts
from refsens_report.load import load_record
from refsens_report.record import Item
from refsens_report.table import SPAN_ARRAYS, SPAN_TYPES, SpanTable, code_counts

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
    keys = {
        name: {(one, start, end, types.index(kind)) for one, own, start, end, kind in spans if own == name}
        for name in names
    }
    return {
        "types": types,
        "strict": {name: sorted(strict.index(key) for key in keys[name]) for name in names},
        "relaxed": {name: sorted({relaxed.index(key[:3]) for key in keys[name]}) for name in names},
        "strict_keys": strict,
        "relaxed_items": [key[0] for key in relaxed],
    }


def check_numbering(counts: ItemCounts, expected: dict[str, object], offset: int = 0) -> None:
    """Assert every id and per-id map of ``counts`` equals the expected numbering (offsets shifted by ``offset``)."""
    assert counts.type_names.tolist() == expected["types"]
    for rule in ("strict", "relaxed"):
        assert {name: counts.ids(rule, name).tolist() for name in expected[rule]} == expected[rule]
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
    # ids in int32 (fewer than 2**31 spans), the per-id maps in the table's types, type codes in int16
    for array in (
        counts._strict_to_relaxed,
        *(counts.ids(rule, name) for rule in ("strict", "relaxed") for name in expected[rule]),
    ):
        assert array.dtype == np.int32
    assert counts._id_item["strict"].dtype == counts._id_item["relaxed"].dtype == counts.table.item.dtype
    assert counts._strict_start.dtype == counts._strict_end.dtype == counts.table.start.dtype
    assert counts._strict_type.dtype == np.int16


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_numbering_by_blocks_of_items_is_the_numbering_of_the_span_tuples(monkeypatch, block, seed):
    """Whatever the block (one span: each item alone, or a block cut inside an item and moved to its first
    span, or the whole record), with spans of a labelling no role names left out, each labelling's ids and
    every per-id map are those of the sorted span tuples."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", block)
    table = SpanTable.from_items(random_items(seed))
    names = ("ref", "out")  # "other" not counted; names in another order than the table's
    check_numbering(ItemCounts(table, names), expected_numbering(table, names))


@pytest.mark.parametrize("block", [2, 1 << 20])
def test_offsets_too_large_for_one_key_are_numbered_by_blocks_too(monkeypatch, block):
    """Offsets near 2**61 are sorted as columns (no int64 key holds them) in each block: the same numbering."""
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
    with pytest.raises(ValueError, match="neither a labelling"):
        counts.ids("relaxed", "nobody")


def shifted_items(seed: int, shift: int) -> list[Item]:
    """``random_items`` with every offset moved by ``shift``."""
    return [
        Item(
            one.id,
            one.language,
            {name: tuple((s + shift, e + shift, k) for s, e, k in spans) for name, spans in one.labellings.items()},
        )
        for one in random_items(seed)
    ]


def test_an_ordinary_table_is_narrow():
    """Items, offsets and codes that fit take SpanTable's narrow types, whoever made the table."""
    table = SpanTable.from_items(random_items(4))
    assert {name: getattr(table, name).dtype.type for name in SPAN_ARRAYS} == SPAN_TYPES


@pytest.mark.parametrize(
    ("shift", "wide"),
    [(2**31 - 25, False), (2**31 - 12, True), (2**40, True)],  # the last end 2**31 - 1; ends past it; far past
)
def test_offsets_at_the_int32_limit_are_numbered_as_small_ones(monkeypatch, shift, wide):
    """Offsets up to 2**31 - 1 stay int32, beyond they keep int64; either way every id and map is that of the same
    spans with small offsets (keys and products are formed in int64: nothing wraps round)."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", 5)
    table = SpanTable.from_items(shifted_items(5, shift))
    assert table.start.dtype == table.end.dtype == (np.int64 if wide else np.int32)
    assert int(table.end.max()) >= 2**31 if wide else int(table.end.max()) == 2**31 - 1
    counts = ItemCounts(table, NAMES)
    check_numbering(counts, expected_numbering(SpanTable.from_items(random_items(5)), NAMES), offset=shift)
    small = ItemCounts(SpanTable.from_items(random_items(5)), NAMES)
    assert np.array_equal(item_lengths(counts), item_lengths(small) + shift * (item_lengths(small) > 0))
    for name in NAMES:
        near, far = distinct_spans(small, name), distinct_spans(counts, name)
        assert near.dtype == np.int32 and far.dtype == (np.int64 if wide else np.int32)  # kept narrow where it fits
        assert np.array_equal(far[:, 1:3] - shift, near[:, 1:3]) and np.array_equal(far[:, [0, 3]], near[:, [0, 3]])


@pytest.mark.parametrize("shift", [2**31 - 25, 2**40])
def test_overlap_and_per_type_counts_near_the_int32_limit_are_those_of_small_offsets(monkeypatch, shift):
    """Ids, items and offsets kept int32 (and type codes int16): the overlap rule's keys (item x offset) and the
    per-type cells are formed in int64, so every count of spans whose offsets reach the int32 limit, or pass it, is
    that of the same spans with small offsets (an int32 key would wrap round from the second item on)."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", 5)
    far = ItemCounts(SpanTable.from_items(shifted_items(5, shift)), NAMES)
    near = ItemCounts(SpanTable.from_items(random_items(5)), NAMES)
    every = np.arange(near.n_items)
    for a, b in (("out", "ref"), ("ref", "other"), ("out", "other")):
        assert far.tp("overlap", a, b).sum() > 0
        assert np.array_equal(far.tp("overlap", a, b), near.tp("overlap", a, b))
        for rule in ("strict", "overlap"):
            for found, wanted in zip(far.typed("tp", rule, a, b), near.typed("tp", rule, a, b)):
                assert np.array_equal(found, wanted)
        assert far.type_confusion(a, b, every) == near.type_confusion(a, b, every)
        families = [Column("size", "strict", a), Column("tp", "strict", a, b)]
        for found, wanted in zip(far.typed_matrix(families, [0, 1, 2]), near.typed_matrix(families, [0, 1, 2])):
            assert np.array_equal(found, wanted)


def test_a_declared_integer_column_is_kept_in_its_smallest_unsigned_type():
    """A column kind an analysis declares is cached in the smallest unsigned type holding its values (their
    values those the kind computed), and a kind giving a negative count is refused, not wrapped round."""
    kinds = {
        "few": ColumnKind("few", lambda counts, column: counts.size("strict", column.a).astype(np.int64)),
        "many": ColumnKind("many", lambda counts, column: counts.size("strict", column.a).astype(np.int64) * 300),
        "flag": ColumnKind("flag", lambda counts, column: counts.size("strict", column.a) > 1),
        "negative": ColumnKind("negative", lambda counts, column: -counts.size("strict", column.a).astype(np.int64)),
    }
    counts = ItemCounts(SpanTable.from_items(random_items(7)), NAMES, kinds)
    size = counts.size("strict", "out").astype(np.int64)
    for kind, dtype, wanted in (("few", np.uint8, size), ("many", np.uint16, size * 300), ("flag", np.uint8, size > 1)):
        values = counts.integers(Column(kind, a="out"))
        assert values.dtype == dtype and np.array_equal(values, wanted)
    assert (
        counts.matrix([Column("many", a="out"), Column("few", a="out")]).tolist()
        == np.stack([size * 300, size], axis=1).tolist()
    )
    with pytest.raises(ValueError, match="negative count"):
        counts.integers(Column("negative", a="out"))


def test_item_codes_beyond_int32_keep_the_table_wide_and_are_numbered_as_small_ones(monkeypatch):
    """Item codes past 2**31 (made by moving them: no record that large is built) keep int64, and each block's
    item digit, counted from its first item, numbers them as the small ones."""
    monkeypatch.setattr(counts_module, "ENCODE_BLOCK", 4)
    table = SpanTable.from_items(random_items(6))
    shift = 2**31 - 30
    far = dataclasses.replace(table, item=table.item.astype(np.int64) + shift)
    assert far.item.dtype == np.int64 and table.item.dtype == np.int32
    counts, expected = ItemCounts(far, NAMES), expected_numbering(table, NAMES)
    for rule in ("strict", "relaxed"):
        assert {name: counts.ids(rule, name).tolist() for name in NAMES} == expected[rule]
    assert (counts._id_item["strict"] - shift).tolist() == [key[0] for key in expected["strict_keys"]]
    assert (counts._id_item["relaxed"] - shift).tolist() == expected["relaxed_items"]


@pytest.mark.parametrize("batch_rows", [parquet.BATCH_ROWS, 2])
def test_a_parquet_record_widens_its_offsets_at_the_first_batch_past_int32(tmp_path, monkeypatch, batch_rows):
    """The Parquet reader fills arrays of SpanTable's narrow types batch by batch: an offset past 2**31 in a later
    batch widens the offsets read so far, and the table holds the JSON Lines record's values."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    items = [
        item("a", "en", **{A: [[0, 3, "PER"]], B: [[0, 3, "PER"]], D: [[1, 3, "LOC"]], R: [[0, 3, "PER"]]}),
        item("b", "en", **{A: [[2, 5, "LOC"]], B: [], D: [[2, 5, "LOC"]], R: [[2, 5, "LOC"]]}),
        item(
            "c",
            "en",
            **{A: [[2**31 + 4, 2**31 + 9, "PER"]], B: [[7, 9, "PER"]], D: [], R: [[2**31 + 4, 2**31 + 9, "PER"]]},
        ),
    ]
    config = write_project(tmp_path, items)
    assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    columnar = config.with_name("parquet.toml")
    text = config.read_text().replace('path = "record.jsonl"', 'path = "record.parquet"')
    columnar.write_text(text.replace('format = "jsonl"', 'format = "parquet"'))
    jsonl, read = load_record(load_config(config)).table, load_record(load_config(columnar)).table
    assert read.start.dtype == read.end.dtype == np.int64 and read.item.dtype == np.int32
    for name in SPAN_ARRAYS:
        assert getattr(read, name).dtype == getattr(jsonl, name).dtype
        assert getattr(read, name).tolist() == getattr(jsonl, name).tolist()
    names = (A, B, D, R)
    one, other = ItemCounts(jsonl, names), ItemCounts(read, names)
    for rule in ("strict", "relaxed"):
        for name in names:
            assert np.array_equal(one.ids(rule, name), other.ids(rule, name))
    assert other.tp("overlap", A, R).tolist() == [1, 1, 1]
    assert other._strict_start.max() == 2**31 + 4


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_codes_counted_a_slice_at_a_time_are_bincount(monkeypatch, piece):
    monkeypatch.setattr(table_module, "COUNT_SLICE", piece)
    codes = SpanTable.from_items(random_items(7)).type
    assert code_counts(codes, 6).tolist() == np.bincount(codes.astype(np.int64), minlength=6).tolist()
    assert code_counts(codes[:0], 3).tolist() == [0, 0, 0]
