"""The columnar record (format = "parquet") and `refsens-report convert`.

Span tables are written here with pyarrow, row by row as the format describes them (docs/adapters.md), or by
convert from a JSON Lines record. A Parquet record must audit exactly as the JSON Lines record it came from,
keep absent and present-empty labellings apart, refuse every malformed table with its row number and exit 2
(through ``cli.main``, no traceback), and take `[record] label_map` as the JSON Lines record does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import A, B, D, R, config_text, item, write_project, write_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refused import refused

from refsens_report.adapters import parquet
from refsens_report.audit import run_audit
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.convert import convert
from refsens_report.errors import MAX_PROBLEMS
from refsens_report.load import load_record
from refsens_report.record import MAX_OFFSET

COLUMNS = ("id", "language", "labelling", "start", "end", "type")
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("language", pa.string()),
        ("labelling", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("type", pa.string()),
    ]
)
NULL = (None, None, None)


def rows_of(*items: tuple[str, str, dict]) -> list[tuple]:
    """Return span table rows for (id, language, {labelling: spans}); [] makes the present-and-empty row."""
    rows = []
    for item_id, language, labellings in items:
        for name, spans in labellings.items():
            rows += [(item_id, language, name, *span) for span in spans] or [(item_id, language, name, *NULL)]
    return rows


def good_rows() -> list[tuple]:
    """Three audited items over two languages; row 4 is a present-and-empty marker (reviewer on en-1)."""
    return rows_of(
        ("en-1", "en", {A: [(0, 3, "PER")], B: [(0, 3, "PER")], D: [(0, 3, "PER")], R: []}),
        ("en-2", "en", {A: [(0, 4, "LOC"), (5, 9, "PER")], B: [(0, 4, "LOC")], D: [(0, 4, "LOC")], R: [(0, 4, "LOC")]}),
        ("de-1", "de", {A: [(2, 6, "ORG")], B: [(2, 6, "ORG")], D: [(2, 6, "ORG")], R: [(2, 6, "ORG")]}),
    )


def write_table(path: Path, rows: list[tuple], schema: pa.Schema = SCHEMA, **extra: list) -> Path:
    """Write rows (tuples in COLUMNS order) and extra columns as a Parquet file."""
    columns = {name: [row[k] for row in rows] for k, name in enumerate(COLUMNS)}
    columns.update(extra)
    fields = list(schema) + [
        pa.field(name, pa.bool_() if name == "third_pass" else pa.string())
        for name in extra
        if name not in schema.names
    ]
    pq.write_table(pa.table(columns, schema=pa.schema(fields)), path)
    return path


def project(
    folder: Path, rows: list[tuple] | None = None, record: str = "record.parquet", extra: str = "", **table: object
) -> Path:
    """Write a span table (unless ``rows`` is None) and a refsens.toml reading it; return the config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    if rows is not None:
        write_table(folder / record, rows, **table)  # type: ignore[arg-type]
    path = folder / "refsens.toml"
    path.write_text(config_text(record=record).replace('format = "jsonl"', f'format = "parquet"{extra}'))
    return path


def as_parquet_config(config: Path, record: str = "record.parquet") -> Path:
    """Return a copy of a JSON Lines project's config pointing at the Parquet file."""
    text = config.read_text().replace('path = "record.jsonl"', f'path = "{record}"')
    path = config.with_name("parquet.toml")
    path.write_text(text.replace('format = "jsonl"', 'format = "parquet"'))
    return path


def canonical(table) -> dict[str, np.ndarray]:
    """Return a table's spans ordered by item, then labelling code, each pair's spans as listed (convert's order)."""
    order = np.lexsort((table.labelling, table.item))
    return {name: getattr(table, name)[order] for name in ("item", "labelling", "start", "end", "type")}


# ----------------------------------------------------------------------------------------------------------
# round trips


def test_the_demo_audits_to_the_same_results_csv_from_parquet(tmp_path, capsys):
    """JSON Lines -> convert -> audit: results.csv byte for byte (the simulated demo, a quick run)."""
    assert main(["simulate", str(tmp_path), "--seed", "0", "--items", "3000"]) == 0
    config = tmp_path / "refsens.toml"
    assert main(["convert", str(tmp_path / "record.jsonl"), str(tmp_path / "record.parquet")]) == 0
    assert "wrote" in capsys.readouterr().out
    parquet_config = as_parquet_config(config)
    assert main(["audit", str(config), "--out", str(tmp_path / "jsonl"), "--resamples", "200", "-q"]) == 0
    assert main(["audit", str(parquet_config), "--out", str(tmp_path / "pq"), "--resamples", "200", "-q"]) == 0
    assert (tmp_path / "jsonl" / "results.csv").read_bytes() == (tmp_path / "pq" / "results.csv").read_bytes()


def round_trip_items() -> list[dict]:
    """Absent and present-empty labellings, a name first seen empty, repeated spans, meta on some items."""
    return [
        item(
            "en-1",
            "en",
            meta={"third_pass": True, "dup_key": "k1"},
            text="Ada Lovelace met Bob.",
            **{A: [[0, 3, "PER"], [0, 3, "PER"]], B: [], D: [[0, 12, "PER"]], R: None},
        ),
        item(
            "en-2",
            "en",
            meta={"dup_key": "k1"},
            **{"extra": [], B: [[4, 8, "LOC"]], A: [[4, 8, "LOC"]], D: [[4, 8, "LOC"]], R: [[4, 8, "LOC"]]},
        ),
        item("hi-1", "hi", **{A: [[1, 2, "DATE"]], B: [[1, 2, "DATE"]], D: [[1, 2, "DATE"]], R: []}),
        item(
            "en-3",
            "en",
            meta={"third_pass": False},
            **{A: [[5, 9, "ORG"], [0, 2, "PER"]], B: None, D: [[0, 2, "PER"]], R: [[0, 2, "PER"], [0, 2, "PER"]]},
        ),
    ]


@pytest.mark.parametrize("batch_rows", [parquet.BATCH_ROWS, 3])
def test_absent_and_present_empty_labellings_round_trip_exactly(batch_rows, tmp_path, capsys, monkeypatch):
    """The arrays, every item (its labellings, present and empty ones apart, and meta) and the audit's rows.

    With 3-row batches every item straddles batches, so the per-batch items are merged at the end.
    """
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    config = write_project(tmp_path, round_trip_items())
    assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    parquet_config = as_parquet_config(config)
    jsonl, columnar = load_record(load_config(config)), load_record(load_config(parquet_config))
    assert columnar.items == () and columnar.columnar is not None
    before, after = jsonl.table, columnar.table
    assert list(after.ids) == list(before.ids) and after.languages == before.languages
    assert after.names == before.names == (A, B, D, "extra", R)  # 'extra' first appears empty, on en-2
    assert np.array_equal(after.language, before.language) and np.array_equal(after.present, before.present)
    assert after.type_names.tolist() == before.type_names.tolist()
    for name, values in canonical(before).items():
        assert np.array_equal(getattr(after, name), values), name
    for key in ("dup_key", "third_pass"):
        assert after.meta_values(key).tolist() == before.meta_values(key).tolist()
    for index, original in enumerate(jsonl.items):
        copy = columnar.item(index)
        assert (copy.id, copy.language, copy.text) == (original.id, original.language, original.text)
        assert {name: sorted(spans) for name, spans in copy.labellings.items()} == {
            name: sorted(spans) for name, spans in original.labellings.items()
        }
        assert copy.meta == original.meta
    assert R not in columnar.item(0).labellings and columnar.item(2).labellings[R] == ()
    assert columnar.item(0).labellings[A] == ((0, 3, "PER"), (0, 3, "PER"))  # a repeated span is kept, as JSONL does
    # repeats count once under each rule, as in the JSON Lines record: every statistic the same
    assert run_audit(load_config(parquet_config)).rows == run_audit(load_config(config)).rows


@pytest.mark.parametrize("narrow", [np.int16, np.int8])
def test_labelling_codes_are_narrow_and_widen_past_their_type(narrow, tmp_path, monkeypatch):
    """A span's labelling code is int16 (int8 here: 150 labellings overflow it in a later batch, and the codes
    read so far are widened to int64); the codes are those of the JSON Lines record either way."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", 64)
    monkeypatch.setitem(parquet.SPAN_TYPES, "labelling", narrow)
    many = {f"extra-{k:03d}": [(k % 7, k % 7 + 2, "PER")] for k in range(146)}
    items = [item(f"en-{k}", "en", **{A: [[0, 3, "PER"]], B: [], D: [[1, 2, "LOC"]], R: []}) for k in range(3)]
    items.append(
        item(
            "en-3",
            "en",
            **{A: [], B: [], D: [], R: []},
            **{name: [list(span) for span in spans] for name, spans in many.items()},
        )
    )
    config = write_project(tmp_path, items)
    assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    jsonl = load_record(load_config(config)).table
    columnar = load_record(load_config(as_parquet_config(config))).table
    assert columnar.labelling.dtype == (np.int16 if narrow is np.int16 else np.int64)
    assert columnar.names == jsonl.names and len(columnar.names) == 150
    for name, values in canonical(jsonl).items():
        assert np.array_equal(getattr(columnar, name), values), name


@pytest.mark.parametrize("batch_rows", [parquet.BATCH_ROWS, 2])
def test_items_come_in_order_of_first_appearance_and_keep_their_rows_order(batch_rows, tmp_path, monkeypatch):
    """An item's rows need not be together: items by first row, each one's spans in file order (in slices of 2
    spans, the rows apart are found across two slices)."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    rows = rows_of(
        ("b", "en", {A: [(5, 6, "X")]}),
        ("a", "en", {A: [(0, 1, "Y")]}),
        ("b", "en", {B: [(3, 4, "Z"), (1, 2, "Z")], D: [], R: []}),
        ("a", "en", {B: [], D: [], R: []}),
    )
    record = load_record(load_config(project(tmp_path, rows)))
    table = record.table
    assert list(table.ids) == ["b", "a"]
    assert table.names == (A, B, D, R)
    assert record.item(0).labellings == {A: ((5, 6, "X"),), B: ((3, 4, "Z"), (1, 2, "Z")), D: (), R: ()}
    assert record.item(1).labellings == {A: ((0, 1, "Y"),), B: (), D: (), R: ()}
    assert table.item.tolist() == [0, 0, 0, 1]


def test_a_folder_of_files_is_one_record_and_string_columns_may_be_any_string_type(tmp_path):
    """Files in name order; large_string and dictionary columns, narrow and unsigned offsets are accepted."""
    folder = tmp_path / "parts"
    folder.mkdir()
    rows = good_rows()
    narrow = pa.schema(
        [
            ("id", pa.large_string()),
            ("language", pa.dictionary(pa.int8(), pa.string())),
            ("labelling", pa.string()),
            ("start", pa.uint16()),
            ("end", pa.int32()),
            ("type", pa.dictionary(pa.int32(), pa.large_string())),
        ]
    )
    write_table(folder / "b.parquet", rows[8:], schema=narrow)
    write_table(folder / "a.parquet", rows[:8])
    (folder / "README.txt").write_text("not read")
    record = load_record(load_config(project(tmp_path, record="parts")))
    whole = load_record(load_config(project(tmp_path / "whole", rows)))
    assert list(record.table.ids) == ["en-1", "en-2", "de-1"]
    for name in ("item", "labelling", "start", "end", "type", "present", "language"):
        assert np.array_equal(getattr(record.table, name), getattr(whole.table, name)), name


def test_meta_columns_are_the_items_metadata_and_may_cluster_them(tmp_path, capsys):
    """``meta.<key>`` (string) is item metadata ``key``, absent where null; ``[record] cluster`` may name it.
    Given both as a ``meta.`` column and as the column that carries it (dup_key), it is refused."""
    rows = good_rows()
    documents = ["d1"] * 4 + [None] * 5 + ["d2"] * 4  # en-2: no document (its rows null)
    config = project(tmp_path, rows, **{"meta.document": documents})
    record = load_record(load_config(config))
    assert record.table.meta_values("document").tolist() == ["d1", None, "d2"]
    clustered = project(tmp_path / "clustered", rows, extra='\ncluster = "document"', **{"meta.document": documents})
    assert main(["validate", str(clustered)]) == 2
    assert "1 of 3 items have no meta 'document' ('en-2')" in capsys.readouterr().err
    twice = project(tmp_path / "twice", rows, dup_key=["k"] * len(rows), **{"meta.dup_key": ["k"] * len(rows)})
    refused(twice, capsys, "the columns 'meta.dup_key' and 'dup_key' both give the items' meta 'dup_key': keep one")


def test_convert_writes_string_and_integer_metadata_and_the_clusters_audit_alike(tmp_path, capsys):
    """convert writes each metadata key whose values are strings, or integers (as their decimal text, which
    orders the clusters as the numbers' JSON text does), as a ``meta.<key>`` column; other keys get a note.
    Clustered by an integer key, the Parquet record audits to the JSON Lines record's results.csv."""
    assert main(["simulate", str(tmp_path), "--seed", "0", "--items", "600"]) == 0
    lines = (tmp_path / "record.jsonl").read_text(encoding="utf-8").splitlines()
    with open(tmp_path / "record.jsonl", "w", encoding="utf-8") as handle:
        for number, line in enumerate(lines):
            item = json.loads(line)
            item["meta"].update(document=number // 7, source=f"s{number % 3}", mixed=1 if number % 2 else "one")
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    config = tmp_path / "refsens.toml"
    config.write_text(config.read_text().replace('format = "jsonl"', 'format = "jsonl"\ncluster = "document"', 1))
    assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    assert "convert: meta 'mixed' is not written (its values are int and str: a Parquet record carries a key " in (
        capsys.readouterr().out
    )
    names = pq.read_schema(tmp_path / "record.parquet").names
    assert "meta.document" in names and "meta.source" in names and "meta.mixed" not in names
    table = load_record(load_config(as_parquet_config(config))).table
    assert table.meta_values("document")[:8].tolist() == ["0"] * 7 + ["1"]
    for name, path in (("jsonl", config), ("pq", as_parquet_config(config))):
        assert main(["audit", str(path), "--out", str(tmp_path / name), "--resamples", "200", "-q"]) == 0
    assert (tmp_path / "jsonl" / "results.csv").read_bytes() == (tmp_path / "pq" / "results.csv").read_bytes()


def test_dup_key_is_stored_under_the_configured_duplicate_key(tmp_path):
    rows = good_rows()
    keys = ["k"] * 4 + [None] * (len(rows) - 4)
    config = project(tmp_path, rows, dup_key=keys, third_pass=[True] * 4 + [False] * (len(rows) - 4))
    config.write_text(config.read_text() + 'duplicate_key = "group"\n')
    table = load_record(load_config(config)).table
    assert table.meta_values("group").tolist() == ["k", None, None]
    assert table.meta_values("third_pass").tolist() == [True, False, False]
    assert table.flag("third_pass").tolist() == [True, False, False]


# ----------------------------------------------------------------------------------------------------------
# malformed span tables: exit 2, the file and the row, no traceback


def replace_row(rows: list[tuple], number: int, **values: object) -> list[tuple]:
    """Return the rows with data row ``number`` (from 1) changed."""
    changed = list(rows)
    row = dict(zip(COLUMNS, changed[number - 1]))
    row.update(values)
    changed[number - 1] = tuple(row[name] for name in COLUMNS)
    return changed


MALFORMED = {
    "start >= end": (
        lambda rows: replace_row(rows, 2, start=5, end=3),
        ['record.parquet: row 2: span has start >= end: [5, 3, "PER"]'],
    ),
    "start < 0": (
        lambda rows: replace_row(rows, 3, start=-1),
        ['record.parquet: row 3: span has start < 0: [-1, 3, "PER"]'],
    ),
    "beyond MAX_OFFSET": (
        lambda rows: replace_row(rows, 5, end=MAX_OFFSET + 1),
        [f"record.parquet: row 5: span has an offset beyond {MAX_OFFSET} characters"],
    ),
    "empty type": (
        lambda rows: replace_row(rows, 6, type=" "),
        ['record.parquet: row 6: span type must be a non-empty string: [5, 9, " "]'],
    ),
    "type with a bidi control": (
        lambda rows: replace_row(rows, 6, type="PER\u202e"),
        ["record.parquet: row 6: span type 'PER\\u202e' contains U+202E"],
    ),
    "start null only": (
        lambda rows: replace_row(rows, 2, start=None),
        ["record.parquet: row 2: start, end and type must all be set (a span) or all be null", '[null, 3, "PER"]'],
    ),
    "type null only": (lambda rows: replace_row(rows, 7, type=None), ["row 7: start, end and type must all be set"]),
    "null id": (lambda rows: replace_row(rows, 9, id=None), ["record.parquet: row 9: 'id' is null"]),
    "null language": (lambda rows: replace_row(rows, 9, language=None), ["record.parquet: row 9: 'language' is null"]),
    "null labelling": (
        lambda rows: replace_row(rows, 9, labelling=None),
        ["record.parquet: row 9: 'labelling' is null"],
    ),
    "empty id": (lambda rows: replace_row(rows, 1, id=""), ["record.parquet: row 1: 'id' is empty"]),
    "blank labelling": (
        lambda rows: replace_row(rows, 10, labelling="  "),
        ["record.parquet: row 10: the labelling name is only whitespace"],
    ),
    "id with a zero-width space": (
        lambda rows: [(row[0] + "\u200b" if row[0] == "de-1" else row[0], *row[1:]) for row in rows],
        ["row 10: 'id' 'de-1\\u200b' contains U+200B"],
    ),
    "labelling with a control": (
        lambda rows: replace_row(rows, 4, labelling="rev\x1b"),
        ["row 4: the labelling name 'rev\\x1b' contains U+001B"],
    ),
    "language pooled": (
        lambda rows: [(row[0], "pooled" if row[1] == "de" else row[1], *row[2:]) for row in rows],
        ["row 10: language 'pooled' is reserved for the pooled rows"],
    ),
    "two languages": (
        lambda rows: replace_row(rows, 3, language="de"),
        ["record.parquet: row 3: item 'en-1' has language 'de' here, but 'en' at row 1: an item has one language"],
    ),
    "a marker beside spans": (
        lambda rows: rows + [("en-2", "en", A, None, None, None)],
        [
            "record.parquet: row 14: labelling 'annotator_a' of item 'en-2' is marked present with no "
            "spans (null start, end and type), but other rows give it spans; drop this row"
        ],
    ),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_span_table_names_the_row(case, tmp_path, capsys):
    change, expected = MALFORMED[case]
    refused(project(tmp_path, change(good_rows())), capsys, *expected)


@pytest.mark.parametrize("batch_rows", [parquet.BATCH_ROWS, 4])
def test_a_whole_record_dictionary_in_every_row_group_reads_as_plain_strings(batch_rows, tmp_path, monkeypatch):
    """Ids and duplicate keys written as one dictionary of every value, repeated in each 3-row row group (as
    pyarrow writes a pandas categorical), are read as views and encoded per batch (``_decoded``): the other
    columns' batches end at each row group, the keys' every 4 rows, and the rows must stay together."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    rows = good_rows()
    keys = [f"k{row[0]}" for row in rows]
    plain = project(tmp_path / "plain", rows, dup_key=keys)

    def categorical(values: list[str]) -> pa.DictionaryArray:
        dictionary = sorted(set(values)) + ["never-used"]
        return pa.DictionaryArray.from_arrays(pa.array([dictionary.index(v) for v in values], pa.int32()), dictionary)

    columns = {name: [row[k] for row in rows] for k, name in enumerate(COLUMNS)}
    table = pa.table({**columns, "id": categorical(columns["id"]), "dup_key": categorical(keys)})
    path = tmp_path / "whole" / "record.parquet"
    path.parent.mkdir()
    pq.write_table(table, path, row_group_size=3)
    assert pq.read_metadata(path).num_row_groups > 1
    whole = project(path.parent)
    expected, got = load_record(load_config(plain)).table, load_record(load_config(whole)).table
    assert list(got.ids) == list(expected.ids) and np.array_equal(got.present, expected.present)
    for name in ("item", "labelling", "start", "end", "type", "language"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    per_item = ["ken-1", "ken-2", "kde-1"]
    assert got.meta_values("dup_key").tolist() == expected.meta_values("dup_key").tolist() == per_item


def test_decoded_joins_two_streams_cut_at_different_rows():
    """The rows of both streams stay together whatever their batches, and the keys come back dictionary-encoded
    in the order of first use; streams of different lengths are a damaged file."""
    ids = ["a", "b", "a", None, "c", "b", "d"]
    others = pa.record_batch({"start": pa.array(range(len(ids)), pa.int64())})
    keys = pa.record_batch({"id": pa.array(ids, pa.string_view())})
    cut = [others.slice(0, 2), others.slice(2, 0), others.slice(2, 4), others.slice(6)]
    found = list(parquet._decoded(("id", "start"), iter(cut), iter([keys.slice(0, 3), keys.slice(3)])))
    assert all(encoded == {"id"} for _, encoded in found)
    joined = [batch for batch, _ in found]
    assert [batch.num_rows for batch in joined] == [2, 1, 3, 1]
    assert [v for batch in joined for v in batch.column("start").to_pylist()] == list(range(len(ids)))
    assert [v for batch in joined for v in batch.column("id").to_pylist()] == ids
    assert joined[0].column("id").type == pa.dictionary(pa.int32(), pa.string())
    keys_read = parquet._Keys()  # the dictionaries as encoded: the provisional codes in the order of first use
    codes = [keys_read.encode(batch.column("id"), first_use=True)[0].tolist() for batch in joined]
    assert codes == [[0, 1], [2], [-1, 3, 4], [5]]
    assert [keys_read.value(code) for code in range(6)] == ["a", "b", "a", "c", "b", "d"]
    assert keys_read.merge()[0] == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="different numbers of rows"):
        list(parquet._decoded(("id", "start"), iter([others]), iter([keys.slice(0, 3)])))


@pytest.mark.parametrize(
    "column, values, expected",
    [
        (
            "third_pass",
            [True] * 2 + [False] * 11,
            "row 3: item 'en-1' has third_pass false here, but true at row 1: "
            "third_pass belongs to the item, the same on each of its rows",
        ),
        (
            "third_pass",
            [True] * 3 + [None] + [False] * 9,
            "row 4: item 'en-1' has third_pass null here, but true at row 1",
        ),
        ("dup_key", ["a"] * 4 + ["b"] + ["a"] * 8, 'row 6: item \'en-2\' has dup_key "a" here, but "b" at row 5'),
        (
            "meta.document",
            ["d1"] * 4 + ["d2"] + ["d1"] * 8,
            'row 6: item \'en-2\' has meta.document "d1" here, but "d2" at row 5',
        ),
    ],
)
def test_item_columns_must_agree_on_every_row_of_an_item(column, values, expected, tmp_path, capsys):
    rows = good_rows()
    assert len(values) == len(rows)
    refused(project(tmp_path, rows, **{column: values}), capsys, expected)


def test_a_disagreement_across_files_names_both(tmp_path, capsys, monkeypatch):
    """An item whose rows are in two files (and two batches): the message names the other file's row."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", 2)
    folder = tmp_path / "parts"
    folder.mkdir()
    rows = good_rows()
    write_table(folder / "1.parquet", rows[:2])
    write_table(folder / "2.parquet", replace_row(rows, 3, language="de")[2:])
    refused(
        project(tmp_path, record="parts"),
        capsys,
        "parts/2.parquet: row 1: item 'en-1' has language 'de' here, but 'en' at parts/1.parquet: row 1",
    )


@pytest.mark.parametrize(
    "column, values, expected",
    [
        (
            "start",
            pa.array([0.0]),
            "the column 'start' is double, expected an integer type (int8 to int64, uint8 to "
            "uint64); pandas makes an integer column with missing values float64: use the Int64 dtype",
        ),
        (
            "id",
            pa.array([1]),
            "the column 'id' is int64, expected string (string, large_string, or a dictionary of strings)",
        ),
        ("type", pa.array([b"PER"]), "the column 'type' is binary, expected string"),
        ("third_pass", pa.array(["yes"]), "the column 'third_pass' is string, expected bool"),
        ("meta.document", pa.array([7]), "the column 'meta.document' is int64, expected string"),
    ],
)
def test_a_column_of_the_wrong_type_says_which_type_was_expected(column, values, expected, tmp_path, capsys):
    columns = {
        "id": pa.array(["1"]),
        "language": pa.array(["en"]),
        "labelling": pa.array([A]),
        "start": pa.array([0]),
        "end": pa.array([3]),
        "type": pa.array(["PER"]),
    }
    pq.write_table(pa.table({**columns, column: values}), tmp_path / "record.parquet")
    refused(project(tmp_path), capsys, f"record.parquet: {expected}")


def test_a_missing_column_is_named_with_the_columns_found(tmp_path, capsys):
    rows = good_rows()
    pq.write_table(
        pa.table(
            {
                "id": [row[0] for row in rows],
                "language": [row[1] for row in rows],
                "labelling": [row[2] for row in rows],
                "begin": [row[3] for row in rows],
                "end": [row[4] for row in rows],
            }
        ),
        tmp_path / "record.parquet",
    )
    refused(
        project(tmp_path),
        capsys,
        "record.parquet: no column 'start', 'type': a span table has the columns id, "
        "language, labelling, start, end, type (and optionally third_pass, dup_key, record_order); this file has 'id', "
        "'language', 'labelling', 'begin', 'end'",
    )


def test_an_empty_table_is_an_error(tmp_path, capsys):
    refused(project(tmp_path, []), capsys, "record.parquet: the record is empty (no rows)")


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            b"id,language\nen-1,en\n",
            "record.parquet: not a Parquet file (it does not begin and end with the bytes PAR1)",
        ),
        (b"", "record.parquet: not a Parquet file"),
        (b"PAR1" + b"\x00" * 40 + b"PAR1", "record.parquet: not a readable Parquet file"),
    ],
)
def test_a_file_that_is_not_parquet(content, expected, tmp_path, capsys):
    (tmp_path / "record.parquet").write_bytes(content)
    refused(project(tmp_path), capsys, expected)


def test_a_folder_without_parquet_files(tmp_path, capsys):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "record.jsonl").write_text("{}\n")
    refused(project(tmp_path, record="parts"), capsys, "parts: no .parquet files in this folder")


def test_a_flood_of_bad_rows_is_capped(tmp_path, capsys):
    rows = rows_of(*[(f"en-{k}", "en", {A: [(5, 3, "PER")], B: [], D: [], R: []}) for k in range(300)])
    err = refused(
        project(tmp_path, rows),
        capsys,
        "record.parquet: row 1: span has start >= end",
        "more rows with problems, not listed",
    )
    assert len(err.strip().splitlines()) <= MAX_PROBLEMS + 1


@pytest.mark.parametrize("batch_rows", [parquet.BATCH_ROWS, 4])
def test_markers_are_checked_against_the_spans_of_every_batch(batch_rows, tmp_path, capsys, monkeypatch):
    """Markers are checked batch by batch: a marker repeated in another batch is no conflict, a marker beside
    spans of any batch is one, and the conflicts are capped as every problem is, however the batches cut them."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    twice = good_rows() + [("en-1", "en", R, *NULL)]  # the reviewer's marker on en-1 again, 10 rows after
    table = load_record(load_config(project(tmp_path / "twice", twice))).table
    assert table.has(R).tolist() == [True, True, True]
    rows = rows_of(*[(f"en-{k}", "en", {A: [(0, 3, "PER")], B: [], D: [], R: []}) for k in range(300)])
    rows += [(f"en-{k}", "en", A, *NULL) for k in range(300)]
    err = refused(
        project(tmp_path / "beside", rows),
        capsys,
        "record.parquet: row 1,201: labelling 'annotator_a' of item 'en-0' is marked present with no spans",
        f"record.parquet: {300 - MAX_PROBLEMS + 1:,} more rows with problems, not listed",
    )
    assert len(err.strip().splitlines()) == MAX_PROBLEMS


def test_role_names_and_unknown_labellings_work_as_for_jsonl(tmp_path, capsys):
    """A role's labelling on no item is an error; a labelling no role names is a note ("not audited")."""
    rows = [row for row in good_rows() if row[2] != R] + [("en-1", "en", "model_x", 0, 3, "PER")]
    refused(
        project(tmp_path, rows),
        capsys,
        "Config value 'roles.references': 'reviewer' is not a labelling in the "
        "record (present on no item; labellings found: annotator_a, annotator_b, delivered, model_x)",
    )
    config = project(tmp_path / "ok", good_rows() + [("en-1", "en", "model_x", 0, 3, "PER")])
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "labellings in the record that no role names, so not audited: model_x" in out


# ----------------------------------------------------------------------------------------------------------
# label_map


def test_label_map_on_parquet_equals_label_map_on_jsonl(tmp_path):
    """Renamed types merge, dropped ones go (present labellings stay present), with the same note."""
    items = [
        item(
            "en-1",
            "en",
            **{
                A: [[0, 3, "DATE"], [4, 6, "MISC"]],
                B: [[0, 3, "TIME"]],
                D: [[0, 3, "DATE"], [0, 3, "TIME"]],
                R: [[4, 6, "MISC"]],
            },
        ),
        item("en-2", "en", **{A: [[1, 2, "PER"]], B: [[1, 2, "PER"], [3, 5, "MISC"]], D: [[1, 2, "PER"]], R: []}),
    ]
    mapping = '\nlabel_map = { DATE = "DATETIME", TIME = "DATETIME", MISC = "" }'
    config = write_project(tmp_path, items)
    assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    parquet_config = as_parquet_config(config)
    for path in (config, parquet_config):
        path.write_text(
            path.read_text()
            .replace('format = "jsonl"', 'format = "jsonl"' + mapping)
            .replace('format = "parquet"', 'format = "parquet"' + mapping)
        )
    jsonl, columnar = load_record(load_config(config)), load_record(load_config(parquet_config))
    assert columnar.notes == jsonl.notes
    assert (
        "record.label_map: renamed 4 spans (DATE → DATETIME 2, TIME → DATETIME 2); dropped 3 MISC spans "
        "(annotator_a 1, reviewer 1, annotator_b 1)"
    ) in columnar.notes
    assert columnar.table.type_names.tolist() == jsonl.table.type_names.tolist() == ["DATETIME", "PER"]
    for name, values in canonical(jsonl.table).items():
        assert np.array_equal(getattr(columnar.table, name), values), name
    assert np.array_equal(columnar.table.present, jsonl.table.present)
    assert columnar.item(0).labellings[R] == ()
    assert run_audit(load_config(parquet_config)).rows == run_audit(load_config(config)).rows


def test_a_label_map_that_maps_nothing_leaves_the_table_as_it_was(tmp_path):
    config = project(tmp_path, good_rows(), extra='\nlabel_map = { DATE = "DATETIME" }')
    record = load_record(load_config(config))
    assert "record.label_map: no span had a mapped type" in record.notes
    assert record.table.type_names.tolist() == ["LOC", "ORG", "PER"]


# ----------------------------------------------------------------------------------------------------------
# convert


def test_convert_is_deterministic_and_keeps_items_whole_in_row_groups(tmp_path):
    config = write_project(tmp_path, round_trip_items())
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    written = convert(config, first, row_group_rows=4)
    convert(config, second, row_group_rows=4)
    assert first.read_bytes() == second.read_bytes()
    assert written.row_groups > 1 and written.items == 4
    metadata = pq.ParquetFile(first).metadata
    assert metadata.num_row_groups == written.row_groups and metadata.num_rows == written.rows
    seen: set[str] = set()
    for group in range(metadata.num_row_groups):
        ids = set(pq.ParquetFile(first).read_row_group(group, columns=["id"]).column("id").to_pylist())
        assert not ids & seen, "an item split between row groups"
        seen |= ids
    schema = pq.read_schema(first)
    assert schema.field("id").type == pa.dictionary(pa.int32(), pa.string())
    assert {"third_pass", "dup_key"} <= set(schema.names)
    one_group = convert(config, tmp_path / "c.parquet")
    assert one_group.row_groups == 1
    assert load_record(load_config(as_parquet_config(config, "c.parquet"))).table.n_spans == (
        load_record(load_config(as_parquet_config(config, "a.parquet"))).table.n_spans
    )


def test_convert_writes_item_columns_only_when_some_item_has_them(tmp_path, capsys):
    record = write_record(
        tmp_path / "record.jsonl", [item("en-1", "en", **{A: [[0, 1, "X"]]}), item("en-2", "en", **{})]
    )
    assert main(["convert", str(record), str(tmp_path / "out.parquet")]) == 0
    out = capsys.readouterr().out
    assert "wrote " in out and "(1 row: 1 item, 1 row group)" in out
    assert "note: convert: 1 item with no labelling present" not in out
    assert "note: convert: 1 items with no labelling present are left out" in out
    assert pq.read_schema(tmp_path / "out.parquet").names == list(COLUMNS)


def test_convert_refuses_to_overwrite_without_force(tmp_path, capsys):
    config = write_project(tmp_path, round_trip_items())
    out = tmp_path / "record.parquet"
    out.write_bytes(b"keep me")
    assert main(["convert", str(config), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {out}: exists; pass --force to replace it"
    assert out.read_bytes() == b"keep me"
    assert main(["convert", str(config), str(out), "--force"]) == 0
    assert out.read_bytes()[:4] == b"PAR1"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["record.jsonl", "record.parquet", "refsens.toml"]


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["{folder}/refsens.toml", "{folder}/out.csv"], "out.csv: the span table's file name must end in .parquet"),
        (["{folder}/missing.jsonl", "{folder}/out.parquet"], "missing.jsonl: cannot read the record"),
        (["{folder}/bad.toml", "{folder}/out.parquet"], "bad.toml"),
        (["{folder}/refsens.toml", "{folder}"], "must end in .parquet"),
    ],
)
def test_convert_errors_are_one_line_and_exit_2(arguments, expected, tmp_path, capsys):
    write_project(tmp_path, round_trip_items())
    (tmp_path / "bad.toml").write_text("[dataset\n")
    code = main(["convert", *(argument.format(folder=tmp_path) for argument in arguments)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and expected in err, err
    assert not list(tmp_path.glob("*.parquet")) and not list(tmp_path.glob(".*.partial"))


def test_convert_applies_the_configs_label_map(tmp_path):
    items = [item("en-1", "en", **{A: [[0, 3, "DATE"], [4, 6, "MISC"]], B: [], D: [], R: []})]
    config = write_project(tmp_path, items)
    config.write_text(
        config.read_text().replace('format = "jsonl"', 'format = "jsonl"\nlabel_map = { DATE = "DAY", MISC = "" }')
    )
    written = convert(config, tmp_path / "mapped.parquet")
    assert any(note.startswith("record.label_map: renamed 1 span (DATE → DAY 1)") for note in written.notes)
    table = pq.read_table(tmp_path / "mapped.parquet")
    assert table.column("type").to_pylist() == ["DAY", None, None, None]


# ----------------------------------------------------------------------------------------------------------
# plausible files that are not quite span tables, and fuzzing: exit 0 or 2, one line per problem


def not_utf8(values: list[str | None], bad: int) -> pa.Array:
    """Return a string column whose value at ``bad`` is bytes that are not UTF-8 (pyarrow does not check a view)."""
    raw = [None if value is None else value.encode() for value in values]
    raw[bad] = b"\xff\xfe"
    return pa.array(raw, pa.binary()).view(pa.string())


def table_project(folder: Path, table: pa.Table) -> Path:
    config = project(folder)
    pq.write_table(table, folder / "record.parquet")
    return config


def good_columns() -> dict[str, list]:
    return {name: [row[k] for row in good_rows()] for k, name in enumerate(COLUMNS)}


@pytest.mark.parametrize("column", ["id", "language", "labelling", "type", "dup_key"])
def test_a_string_that_is_not_utf8_is_refused_at_its_row(column, tmp_path, capsys):
    columns = {**good_columns(), "dup_key": ["k"] * len(good_rows())}
    columns[column] = not_utf8(columns[column], 5)
    refused(table_project(tmp_path, pa.table(columns)), capsys, f"record.parquet: row 6: '{column}' is not valid UTF-8")


def test_columns_of_arrow_type_null_read_as_all_null(tmp_path, capsys):
    """pandas writes an all-None optional column as type null; a markers-only table has null start, end, type."""
    rows = len(good_rows())
    assert (
        main(["validate", str(table_project(tmp_path / "a", pa.table({**good_columns(), "dup_key": pa.nulls(rows)})))])
        == 0
    )
    markers = {**good_columns(), "start": pa.nulls(rows), "end": pa.nulls(rows), "type": pa.nulls(rows)}
    assert main(["validate", str(table_project(tmp_path / "b", pa.table(markers)))]) == 0
    refused(
        table_project(tmp_path / "c", pa.table({**good_columns(), "type": pa.nulls(rows)})),
        capsys,
        "record.parquet: row 1: start, end and type must all be set (a span) or all be null",
    )


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_a_footer_claiming_more_rows_than_memory_holds_is_refused_before_reading(tmp_path):
    import subprocess
    import sys

    config = project(tmp_path, good_rows())
    raw = (tmp_path / "record.parquet").read_bytes()
    length = int.from_bytes(raw[-8:-4], "little")
    footer = raw[-8 - length : -8]
    rows = _varint(len(good_rows()) << 1)  # num_rows (thrift field 3, i64, zigzag) just before row_groups (4, list)
    assert b"\x16" + rows + b"\x19" in footer
    forged = footer.replace(b"\x16" + rows + b"\x19", b"\x16" + _varint((2 * 10**10) << 1) + b"\x19")
    (tmp_path / "record.parquet").write_bytes(raw[: -8 - length] + forged + len(forged).to_bytes(4, "little") + b"PAR1")
    limit = "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    code = limit + "from refsens_report.cli import main; sys.exit(main(['validate', sys.argv[1]]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(parquet.__file__).parents[2])},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: record.parquet: the Parquet footers claim 20,000,000,000 rows, more than "
        "memory can hold (298 GiB of span arrays)"
    ), done.stderr


STRING_TYPES = ("string", "large_string", "binary", "dictionary", "null", "int32")
OFFSET_TYPES = ("int8", "int16", "int32", "int64", "uint64", "null", "float64", "string")
STRINGS = st.sampled_from(["en-1", "en-2", "de-1", "en", "de", A, B, D, R, "PER", "LOC", "", " ", "x\u202e", b"\xff"])
OFFSETS = st.sampled_from([0, 1, 3, 5, 9, 127, -1, 2**40, 2**63 - 1])


def fuzz_column(kind: str, values: list) -> pa.Array:
    """Return ``values`` as a column of Arrow type ``kind`` (bytes values make strings that are not UTF-8)."""
    if kind == "null":
        return pa.nulls(len(values))
    if kind in ("string", "large_string", "dictionary", "binary"):
        raw = [value if isinstance(value, bytes) or value is None else str(value).encode() for value in values]
        column = pa.array(raw, pa.large_binary() if kind == "large_string" else pa.binary())
        if kind == "binary":
            return column
        column = column.view(pa.large_string() if kind == "large_string" else pa.string())
        return column.dictionary_encode() if kind == "dictionary" else column
    if kind == "bool":
        return pa.array([None if value is None else bool(value) for value in values], pa.bool_())
    if kind in ("int32", "float64", *OFFSET_TYPES):
        numbers = [value if isinstance(value, int) or value is None else len(value) for value in values]
        arrow_type = getattr(pa, kind)()
        if pa.types.is_integer(arrow_type):  # wrap into the type's range, as a narrower writer would
            bits = arrow_type.bit_width
            low = 0 if "uint" in kind else -(2 ** (bits - 1))
            numbers = [None if n is None else (n - low) % 2**bits + low for n in numbers]
        else:
            numbers = [None if n is None else float(n) for n in numbers]
        return pa.array(numbers, arrow_type)
    raise AssertionError(kind)


@st.composite
def span_tables(draw) -> pa.Table:
    rows = draw(st.integers(0, 6))
    columns = {}
    for name in (*COLUMNS, "third_pass", "dup_key"):
        if name in ("third_pass", "dup_key") or draw(st.integers(0, 9)) == 0:
            if not draw(st.booleans()):
                continue
        if name in ("start", "end"):
            kind, values = draw(st.sampled_from(OFFSET_TYPES)), OFFSETS
        elif name == "third_pass":
            kind, values = draw(st.sampled_from(("bool", "null", "string"))), st.booleans()
        else:
            kind, values = draw(st.sampled_from(STRING_TYPES)), STRINGS
        columns[name] = fuzz_column(kind, draw(st.lists(st.none() | values, min_size=rows, max_size=rows)))
    return pa.table(columns)


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def assert_clean(config: Path, capsys) -> None:
    code = main(["validate", str(config)])
    err = capsys.readouterr().err
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err, err
    if code == 2:
        assert all(line.startswith("error: ") for line in err.strip().splitlines()), err


@FUZZ
@given(table=span_tables())
def test_fuzz_the_parquet_reader_with_schemas_types_and_nulls(tmp_path_factory, capsys, table):
    assert_clean(table_project(tmp_path_factory.mktemp("fuzz"), table), capsys)


@FUZZ
@given(
    flips=st.lists(st.tuples(st.integers(0, 2**20), st.integers(1, 255)), min_size=1, max_size=4),
    dictionary=st.booleans(),
)
def test_fuzz_the_parquet_reader_with_byte_flips_of_a_valid_file(tmp_path_factory, capsys, flips, dictionary):
    folder = tmp_path_factory.mktemp("flip")
    config = project(folder, good_rows())
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.table(good_columns(), schema=SCHEMA), buffer, use_dictionary=dictionary)
    data = bytearray(buffer.getvalue().to_pybytes())
    for position, mask in flips:
        data[position % len(data)] ^= mask
    (folder / "record.parquet").write_bytes(bytes(data))
    assert_clean(config, capsys)


def test_convert_of_a_record_with_no_span_writes_its_marker_rows(tmp_path, capsys):
    record = write_record(tmp_path / "record.jsonl", [item("a", "en", x=[]), item("b", "en", x=[], y=[])])
    assert main(["convert", str(record), str(tmp_path / "out.parquet")]) == 0
    assert pq.read_table(tmp_path / "out.parquet").to_pylist() == [
        {"id": item_id, "language": "en", "labelling": name, "start": None, "end": None, "type": None}
        for item_id, name in (("a", "x"), ("b", "x"), ("b", "y"))
    ]


def test_convert_reads_a_parquet_span_table_whatever_its_name(tmp_path, capsys):
    """A span table in is read as one (not as JSON Lines), and written back normalised: the same bytes."""
    config = write_project(tmp_path, round_trip_items())
    assert main(["convert", str(config), str(tmp_path / "a.parquet")]) == 0
    (tmp_path / "a.parquet").rename(tmp_path / "a.data")
    assert main(["convert", str(tmp_path / "a.data"), str(tmp_path / "b.parquet")]) == 0
    assert main(["convert", str(tmp_path / "b.parquet"), str(tmp_path / "c.parquet")]) == 0
    assert (
        (tmp_path / "b.parquet").read_bytes()
        == (tmp_path / "c.parquet").read_bytes()
        == (tmp_path / "a.data").read_bytes()
    )
    write_table(tmp_path / "bad.parquet", replace_row(good_rows(), 2, start=5, end=3))
    code = main(["convert", str(tmp_path / "bad.parquet"), str(tmp_path / "d.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        f'error: {tmp_path / "bad.parquet"}: row 2: span has start >= end: [5, 3, "PER"]'
    ], err


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="advisory locks (fcntl) on POSIX only")
def test_convert_removes_the_temporary_file_a_killed_convert_left_but_not_a_running_ones(tmp_path):
    import fcntl
    import os

    config = write_project(tmp_path, round_trip_items())
    stale = tmp_path / ".record.parquet.0123456789ab.partial"  # a convert killed mid-write: nothing holds it
    stale.write_bytes(b"PAR1 half")
    running = tmp_path / ".record.parquet.ba9876543210.partial"  # a convert still writing holds its lock
    running.write_bytes(b"PAR1 half")
    other = tmp_path / ".other.parquet.0123456789ab.partial"
    other.write_bytes(b"PAR1 half")
    held = os.open(running, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        assert main(["convert", str(config), str(tmp_path / "record.parquet")]) == 0
    finally:
        os.close(held)
    assert not stale.exists() and running.exists() and other.exists()


# ----------------------------------------------------------------------------------------------------------
# the items' text (issue 28 item 4)


def disagreement_files(folder: Path) -> dict[str, bytes]:
    """Return the disagreement listings and pages of a built version folder, by name."""
    return {
        path.name: path.read_bytes()
        for path in sorted(folder.iterdir())
        if path.name.startswith(("disagreements", "annotator-disagreements"))
    }


@pytest.mark.parametrize("show_text", [True, False])
def test_a_converted_record_builds_the_same_disagreement_pages_as_its_source(show_text, tmp_path, capsys):
    """convert keeps the text (on each item's first row) and the reader gives it back: the listings and pages
    built from the Parquet record equal the JSON Lines record's, byte for byte; show_text = false keeps it out."""
    from conftest import build
    from test_disagreements import ROLES, TEXTS, record

    extra = "" if show_text else "\n[report]\nshow_text = false\n"
    config = write_project(tmp_path / "jsonl", record(), audit={"resamples": 20}, **ROLES, extra=extra)
    assert main(["convert", str(config), str(config.parent / "record.parquet")]) == 0
    written = pq.read_table(config.parent / "record.parquet")
    assert written.schema.field("text").type == pa.large_string()
    texts = [text for text in written.column("text").to_pylist() if text is not None]
    assert texts == list(TEXTS.values())  # once per item, on its first row
    parquet_config = as_parquet_config(config)
    assert load_record(load_config(parquet_config)).table.text.tolist() == list(TEXTS.values())
    first = build(config, tmp_path / "site-jsonl", with_pdf=False)
    second = build(parquet_config, tmp_path / "site-parquet", with_pdf=False)
    source, converted = disagreement_files(first.folder), disagreement_files(second.folder)
    assert {"disagreements.jsonl", "disagreements.html"} <= set(source)
    assert converted == source
    assert (TEXTS["en-1"].encode() in source["disagreements.jsonl"]) is show_text


def test_text_given_twice_must_agree_and_spans_lie_inside_it(tmp_path, capsys):
    rows = good_rows()
    text = [None] * len(rows)
    text[0], text[1] = "Bob", "Rob"  # en-1 twice, differently
    text[5] = "Lond"  # en-2: its span 5-9 ends beyond these 4 characters
    config = project(tmp_path, rows, text=text)
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "record.parquet: row 2: item 'en-1' has another text here than at row 1" in err
    assert "item 'en-2': a span ends at 9, beyond the text (4 characters)" in err


def test_text_on_any_row_and_repeated_reads_as_one_text(tmp_path):
    rows = good_rows()
    text = [None, "Bob", "Bob", None] + [None] * (len(rows) - 4)
    record = load_record(load_config(project(tmp_path, rows, text=text)))
    assert record.table.text.tolist() == ["Bob", None, None]
    assert record.item(0).text == "Bob"


# ----------------------------------------------------------------------------------------------------------
# a glob, and a URL read through fsspec (universal_pathlib): the same record as the folder


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory) -> Path:
    """The simulated demo (300 items) as convert's folder of 64-item partitions; return its config."""
    folder = tmp_path_factory.mktemp("partitioned")
    assert main(["simulate", str(folder), "--seed", "0", "--items", "300"]) == 0
    assert main(["convert", str(folder / "record.jsonl"), str(folder / "parts"), "--partition-items", "64"]) == 0
    return as_parquet_config(folder / "refsens.toml", "parts")


def reading(config: Path, path: str, name: str) -> Path:
    """Return a copy of ``config`` whose record path is ``path``."""
    copy = config.with_name(name)
    copy.write_text(config.read_text().replace('path = "parts"', f'path = "{path}"'))
    return copy


def audited(config: Path, out: Path) -> tuple[bytes, dict]:
    assert main(["audit", str(config), "--out", str(out), "--resamples", "200", "--quiet"]) == 0
    return (out / "results.csv").read_bytes(), json.loads((out / "results.json").read_text())["inputs"]


@pytest.fixture
def in_memory(partitioned):
    """The partitions copied into fsspec's in-memory filesystem (a stand-in for object storage)."""
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("upath")
    memory = fsspec.filesystem("memory")
    for path in sorted((partitioned.parent / "parts").iterdir()):
        memory.pipe(f"/refsens-test/parts/{path.name}", path.read_bytes())
    yield "memory://refsens-test/parts"
    memory.rm("/refsens-test", recursive=True)


@pytest.mark.parametrize(
    "written",
    [
        "{folder}/part-*.parquet",
        "file://{folder}",
        "file://{folder}/part-0000[0-9].parquet",
        "{memory}",
        "{memory}/*.parquet",
    ],
)
def test_a_glob_or_a_url_reads_the_same_record_as_the_folder(written, partitioned, in_memory, tmp_path):
    """results.csv byte for byte; the provenance names each file as written: a glob's files, a URL's."""
    folder = partitioned.parent / "parts"
    expected, inputs = audited(partitioned, tmp_path / "folder")
    assert "parts/manifest.json" in inputs and "parts/part-00005.parquet" in inputs
    path = written.format(folder=folder, memory=in_memory)
    found, named = audited(reading(partitioned, path, f"{tmp_path.name}.toml"), tmp_path / "other")
    assert found == expected
    files = sorted(name for name in named if name.endswith(".parquet"))
    root = path.rsplit("/", 1)[0] if "*" in path or "[" in path else path
    assert files == [f"{root}/part-0000{k}.parquet" for k in range(6)], files
    assert named[files[0]] == inputs["parts/part-00000.parquet"]  # the same bytes hashed
    assert (f"{root}/manifest.json" in named) == (root == path)  # a folder is all of it; a glob only its files


def test_a_glob_reads_only_the_files_it_matches(partitioned, tmp_path):
    config = reading(partitioned, "parts/part-0000[0-1].parquet", "two.toml")
    record = load_record(load_config(config))  # the manifest's other files are not missing: not asked for
    listed = json.loads((partitioned.parent / "parts" / "manifest.json").read_text())["partitions"]
    assert record.n_items == listed[0]["items"] + listed[1]["items"] < 300
    assert [source.name for source in record.sources] == ["parts/part-00000.parquet", "parts/part-00001.parquet"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("parts/nothing-*.parquet", "parts/nothing-*.parquet: no file matches this pattern"),
        ("parts/*", "parts/manifest.json: not a Parquet file"),
        ("elsewhere/*.parquet", "'record.path': folder not found: elsewhere"),
        ("file:///nonexistent-refsens/parts", "'record.path': not found: file:///nonexistent-refsens/parts"),
        ("nosuchscheme://bucket/parts", "'record.path': Unsupported filesystem: 'nosuchscheme'"),
    ],
)
def test_a_glob_or_url_that_reads_nothing_is_refused(written, expected, partitioned, capsys):
    refused(reading(partitioned, written, "refused.toml"), capsys, expected)


def test_a_url_needs_the_package_of_its_scheme(partitioned, capsys):
    try:
        import s3fs  # noqa: F401
    except ImportError:
        refused(reading(partitioned, "s3://bucket/parts", "s3.toml"), capsys, "Install s3fs to access S3")
    else:
        pytest.skip("s3fs is installed: reading s3:// would go to the network")


def test_a_url_is_a_parquet_records_path_only(tmp_path, capsys):
    config = write_project(tmp_path, [item("en-1", "en")])
    config.write_text(config.read_text().replace('path = "record.jsonl"', 'path = "file:///tmp/record.jsonl"'))
    refused(config, capsys, "a URL is read only as a Parquet record's path")


def test_a_url_without_universal_pathlib_says_what_to_install(partitioned, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "upath", None)  # as if not installed: importing it raises ImportError
    refused(reading(partitioned, "file:///tmp/parts", "no-upath.toml"), capsys, "pip install 'refsens-report[remote]'")
