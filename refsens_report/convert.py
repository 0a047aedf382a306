"""`refsens-report convert`: a record written as a Parquet span table, the columnar record (docs/adapters.md).

The record is read as the audit reads it (a JSON Lines file; or a config: its adapter, then its `[record]
label_map`) and written from its arrays (``Record.table``): one row per span, and one with null start, end and
type for each labelling present on an item with no spans. Items are contiguous, in record order; within an
item the labellings come in the record's order of labelling names, each with its spans as the record lists
them, so reading the file back gives the same arrays. The items' text, when the record has any, is the
``text`` column: on each item's first row, null on its other rows. Row groups hold about ``ROW_GROUP_ROWS`` rows and end
with an item. The same record gives the same bytes (with the same pyarrow, whose version the footer names).

``--partition-items N`` writes a folder instead (``write_partitioned``): the items in canonical order
(language, then id), N of one language at most per file, cut along the canonical blocks, and a manifest
(``partitions.py``), for Dask workers to read (``workers.py``, docs/scale.md). With duplicate keys, each item's
place in the record is its ``record_order``, which the duplicate policies' first and last follow.
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import shutil
import stat

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so stale temporary files are left for the user
    fcntl = None  # type: ignore[assignment]
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from refsens_report import partitions
from refsens_report.adapters import parquet
from refsens_report.bootstrap import BLOCK_ITEMS
from refsens_report.config import AuditSettings, load_config
from refsens_report.errors import InputError
from refsens_report.files import InputPath, open_regular
from refsens_report.load import read_record
from refsens_report.record import Record, load_jsonl
from refsens_report.table import SpanTable

ROW_GROUP_ROWS = 1_000_000
# every option that shapes the bytes, set here rather than left to pyarrow's defaults
WRITER_OPTIONS = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "store_schema": True,
    "version": "2.6",
}


@dataclass(frozen=True)
class Written:
    """What convert wrote: rows, items and row groups, and the notes to print (the record's, then its own)."""

    rows: int
    items: int
    row_groups: int
    notes: tuple[str, ...]
    partitions: int = 0  # files of a partitioned record (convert --partition-items); 0 for one file


def read_source(source: Path) -> tuple[Record, str]:
    """Return the record a JSON Lines file, a Parquet span table or a config (``.toml``) names, and its
    duplicate key's meta name. A Parquet file is known by its first bytes, whatever its name."""
    if source.suffix == ".toml":
        config = load_config(source)
        return read_record(config), config.audit.duplicate_key
    duplicate_key = AuditSettings().duplicate_key
    if _is_parquet(source):
        from refsens_report.adapters import parquet

        return parquet.load(parquet.ParquetOptions(InputPath(source, str(source))), duplicate_key), duplicate_key
    return load_jsonl(source), duplicate_key


def _is_parquet(source: Path) -> bool:
    try:
        with open_regular(source) as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False  # the JSON Lines reader says why it cannot be read


def convert(source: Path, out: Path, force: bool = False, row_group_rows: int = ROW_GROUP_ROWS) -> Written:
    """Write the record ``source`` names as a span table at ``out``; refuse to replace a file without ``force``."""
    _check_out(out, force)
    record, duplicate_key = read_source(source)
    return write_span_table(record, duplicate_key, out, force, row_group_rows)


def convert_partitioned(
    source: Path, out: Path, partition_items: int, force: bool = False, row_group_rows: int = ROW_GROUP_ROWS
) -> Written:
    """Write the record ``source`` names as a partitioned record: a folder ``out`` of span tables and a manifest."""
    _check_folder_out(out, partition_items, force)
    record, duplicate_key = read_source(source)
    return write_partitioned(record, duplicate_key, out, partition_items, force, row_group_rows)


def _check_folder_out(out: Path, partition_items: int, force: bool) -> None:
    if why := partitions.partition_items_problem(partition_items, BLOCK_ITEMS):
        raise InputError(why)
    if out.suffix == ".parquet":
        raise InputError(f"{out}: with --partition-items, OUT is a folder of .parquet files; name it without .parquet")
    if out.exists() or out.is_symlink():
        if not force:
            raise InputError(f"{out}: exists; pass --force to replace it")
        if not out.is_dir() or out.is_symlink() or not (out / partitions.MANIFEST).is_file():
            raise InputError(
                f"{out}: exists and is not a partitioned record convert wrote (no {partitions.MANIFEST}); "
                "--force replaces only such a folder: remove it yourself"
            )


def write_partitioned(
    record: Record,
    duplicate_key: str,
    out: Path,
    partition_items: int,
    force: bool = False,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> Written:
    """Write a record as a folder of span tables in canonical order (language, then id), ``partition_items``
    items of one language at most per file, cut along the canonical blocks (``partitions``), and its manifest.

    Written in a hidden folder beside ``out`` and renamed into place once complete (with ``force``, the old
    folder is moved aside first, then removed): ``out`` is the whole record or is not there.
    """
    import tempfile

    import pyarrow.parquet as pq

    _check_folder_out(out, partition_items, force)
    table = record.table
    notes = list(record.notes)
    columns = _item_columns(table, duplicate_key, notes, reordered=True)
    if table.text is not None:
        columns["text"] = table.text
    kept = table.present.any(axis=1)  # an item with no labelling present has no row
    rowless = int((~kept).sum())
    if rowless:
        notes.append(
            f"convert: {rowless:,} items with no labelling present are left out (a span table has no row for them)"
        )
    order = np.flatnonzero(kept)[partitions.canonical_order(table.ids[kept], table.language[kept])]
    ordered = _reordered(table, order)
    columns = {name: values[order] for name, values in columns.items()}
    rows = _rows(ordered)
    schema = _schema(columns)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(out)
    made, lock = _temporary(out, folder=True)
    folder = Path(made)
    written: list[partitions.Partition] = []
    groups = 0
    try:
        for number, (first, stop) in enumerate(partitions.cuts(ordered.language, partition_items)):
            row_first, row_stop = np.searchsorted(rows.item, [first, stop]).tolist()
            part = _Rows(
                item=rows.item[row_first:row_stop],
                labelling=rows.labelling[row_first:row_stop],
                span=rows.span[row_first:row_stop],
                marker=rows.marker[row_first:row_stop],
            )
            name = partitions.file_name(number)
            with pq.ParquetWriter(folder / name, schema, **WRITER_OPTIONS) as writer:  # type: ignore[arg-type]
                for group in _row_groups(ordered, part, columns, row_group_rows):
                    writer.write_table(group, row_group_size=max(group.num_rows, 1))
                    groups += 1
            written.append(
                partitions.Partition(
                    name,
                    ordered.languages[int(ordered.language[first])],
                    stop - first,
                    row_stop - row_first,
                    str(ordered.ids[first]),
                    str(ordered.ids[stop - 1]),
                )
            )
        (folder / partitions.MANIFEST).write_text(
            partitions.manifest_text(written, partition_items, BLOCK_ITEMS), encoding="utf-8"
        )
        if out.exists():  # --force (checked above): the old record aside, the new one in, the old one removed
            aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.replace(out, aside / out.name)
            os.replace(folder, out)
            shutil.rmtree(aside)
        else:
            try:
                os.rename(folder, out)
            except OSError as error:  # another convert placed it meanwhile (a non-empty folder cannot be replaced)
                if out.exists():
                    raise InputError(f"{out}: exists; pass --force to replace it") from None
                raise error
    finally:
        if folder.exists():
            shutil.rmtree(folder)
        os.close(lock)
    return Written(
        rows=len(rows.item), items=len(order), row_groups=groups, notes=tuple(notes), partitions=len(written)
    )


def _reordered(table: SpanTable, order: np.ndarray) -> SpanTable:
    """Return the table with items ``order`` only, in that order (their spans in their own order)."""
    rank = np.full(table.n_items, -1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    item = rank[table.item]
    spans = np.flatnonzero(item >= 0)
    spans = spans[np.argsort(item[spans], kind="stable")]
    return SpanTable(
        ids=table.ids[order],
        language=table.language[order],
        languages=table.languages,
        names=table.names,
        present=table.present[order],
        item=item[spans],
        labelling=table.labelling[spans],
        start=table.start[spans],
        end=table.end[spans],
        type=table.type[spans],
        type_names=table.type_names,
    )


def _check_out(out: Path, force: bool) -> None:
    if out.suffix != ".parquet":
        raise InputError(f"{out}: the span table's file name must end in .parquet")
    if out.is_dir():
        raise InputError(f"{out}: is a folder; name the .parquet file to write")
    if out.exists() and not force:
        raise InputError(f"{out}: exists; pass --force to replace it")


def write_span_table(
    record: Record, duplicate_key: str, out: Path, force: bool = False, row_group_rows: int = ROW_GROUP_ROWS
) -> Written:
    """Write a record's span table to ``out`` through a temporary file beside it, renamed once complete."""
    import pyarrow.parquet as pq

    _check_out(out, force)
    table = record.table
    notes = list(record.notes)
    rows = _rows(table)
    rowless = table.n_items - (int(np.count_nonzero(np.diff(rows.item))) + 1 if len(rows.item) else 0)
    if rowless:
        notes.append(
            f"convert: {rowless:,} items with no labelling present are left out (a span table has no row for them)"
        )
    columns = _item_columns(table, duplicate_key, notes)
    if table.text is not None:  # the disagreement listings read it back (unless [report] show_text = false)
        columns["text"] = table.text
    schema = _schema(columns)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(out)
    temporary, lock = _temporary(out)
    groups = 0
    try:
        with pq.ParquetWriter(temporary, schema, **WRITER_OPTIONS) as writer:  # type: ignore[arg-type]
            for group in _row_groups(table, rows, columns, row_group_rows):
                writer.write_table(group, row_group_size=max(group.num_rows, 1))
                groups += 1
        _place(Path(temporary), out, force)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
        os.close(lock)
    return Written(rows=len(rows.item), items=table.n_items - rowless, row_groups=groups, notes=tuple(notes))


@dataclass(frozen=True)
class _Rows:
    """The span table's rows in file order: each one's item and labelling, and its span (or marker)."""

    item: np.ndarray
    labelling: np.ndarray
    span: np.ndarray  # the span's position in the record's arrays (0 for a marker row)
    marker: np.ndarray  # a labelling present with no spans: start, end and type null


def _rows(table: Any) -> _Rows:
    """Order the spans and the markers (one per labelling present on an item with no spans) as the file has them.

    Sorting by item, then labelling code, stably, puts each marker where its labelling comes and keeps the
    spans' own order. One key array is sorted and split back into item and labelling (memory: a few arrays of
    the spans' length beside the record's own).
    """
    with_spans = np.zeros_like(table.present)
    with_spans[table.item, table.labelling] = True
    marker_item, marker_labelling = np.nonzero(table.present & ~with_spans)
    n_names = max(len(table.names), 1)
    key = np.concatenate([table.item, marker_item])
    key *= n_names
    key += np.concatenate([table.labelling, marker_labelling])
    order = np.argsort(key, kind="stable")
    item = key[order]
    del key
    labelling = item % n_names
    item //= n_names
    marker = order >= table.n_spans
    order[marker] = 0  # a marker's span: none (its start, end and type are written as null)
    return _Rows(item=item, labelling=labelling, span=order, marker=marker)


def _item_columns(table: Any, duplicate_key: str, notes: list[str], reordered: bool = False) -> dict[str, np.ndarray]:
    """Return the optional item columns some item has: third_pass (1, 0, -1 for none) and dup_key (str or None);
    with dup_key, record_order (each item's place in the record) when the file's order is not the record's
    (``reordered``: convert writes the items in another order; or the table came from such a file)."""
    columns: dict[str, np.ndarray] = {}
    third_pass = table.meta_values("third_pass")
    if any(value is not None for value in third_pass):
        columns["third_pass"] = np.array(
            [1 if value is True else 0 if value is False else -1 for value in third_pass], dtype=np.int8
        )
    keys = table.meta_values(duplicate_key)
    if any(value is not None for value in keys):
        other = sum(1 for value in keys if value is not None and not isinstance(value, str))
        if other:  # the audit groups duplicates by string keys only
            notes.append(
                f"convert: {other:,} items whose meta '{duplicate_key}' is not a string get no dup_key "
                "(the audit reads only string keys)"
            )
        columns["dup_key"] = np.array([value if isinstance(value, str) else None for value in keys], dtype=object)
        if reordered or table.record_order is not None:  # keep_first and keep_last follow the record's order
            columns["record_order"] = np.arange(table.n_items) if table.record_order is None else table.record_order
    for key in table.meta_keys():
        if key in ("third_pass", duplicate_key):
            continue
        values = table.meta_values(key)
        kinds = {type(value) for value in values.tolist() if value is not None}
        if kinds <= {str} or kinds <= {int}:  # integers as their decimal text, which orders the clusters the same
            columns[parquet.META_PREFIX + key] = np.array(
                [None if value is None else str(value) for value in values.tolist()], dtype=object
            )
        else:
            found = " and ".join(sorted(kind.__name__ for kind in kinds))
            notes.append(
                f"convert: meta '{key}' is not written (its values are {found}: a Parquet record carries a key "
                "whose values are all strings or all integers)"
            )
    return columns


def _schema(columns: dict[str, np.ndarray]) -> Any:
    import pyarrow as pa

    string = pa.dictionary(pa.int32(), pa.string())
    fields = [
        ("id", string),
        ("language", string),
        ("labelling", string),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("type", string),
    ]
    if "third_pass" in columns:
        fields.append(("third_pass", pa.bool_()))
    if "dup_key" in columns:
        fields.append(("dup_key", string))
    if "record_order" in columns:
        fields.append(("record_order", pa.int64()))
    if "text" in columns:
        fields.append(("text", pa.large_string()))
    fields += [(name, string) for name in columns if name.startswith(parquet.META_PREFIX)]
    return pa.schema(fields)


def _row_groups(table: Any, rows: _Rows, columns: dict[str, np.ndarray], row_group_rows: int) -> Iterator[Any]:
    """Yield the row groups as Arrow tables: about ``row_group_rows`` rows each, never an item split in two."""
    import pyarrow as pa

    item_starts = np.concatenate([[0], np.flatnonzero(rows.item[1:] != rows.item[:-1]) + 1, [len(rows.item)]])
    languages = pa.array(table.languages, pa.string())
    names = pa.array(table.names, pa.string())
    type_names = pa.array(table.type_names.tolist(), pa.string())
    first = 0
    while first < len(rows.item):
        cut = int(np.searchsorted(item_starts, first + row_group_rows, side="right")) - 1
        stop = int(item_starts[cut]) if item_starts[cut] > first else int(item_starts[cut + 1])
        item, span, null = rows.item[first:stop], rows.span[first:stop], rows.marker[first:stop]
        group_items, local = np.unique(item, return_inverse=True)
        local = pa.array(local, pa.int32())
        arrays = {
            "id": pa.DictionaryArray.from_arrays(local, pa.array(table.ids[group_items].tolist(), pa.string())),
            "language": pa.DictionaryArray.from_arrays(pa.array(table.language[item], pa.int32()), languages),
            "labelling": pa.DictionaryArray.from_arrays(pa.array(rows.labelling[first:stop], pa.int32()), names),
            "start": pa.array(_at(table.start, span), pa.int64(), mask=null),
            "end": pa.array(_at(table.end, span), pa.int64(), mask=null),
            "type": pa.DictionaryArray.from_arrays(pa.array(_at(table.type, span), pa.int32(), mask=null), type_names),
        }
        if "third_pass" in columns:
            flags = columns["third_pass"][item]
            arrays["third_pass"] = pa.array(flags == 1, pa.bool_(), mask=flags < 0)
        if "dup_key" in columns:
            arrays["dup_key"] = _per_item_strings(columns["dup_key"], group_items, local)
        if "record_order" in columns:
            arrays["record_order"] = pa.array(columns["record_order"][item], pa.int64())
        if "text" in columns:  # each item's text once, on its first row
            first_row = np.concatenate([[True], item[1:] != item[:-1]])
            texts = np.full(len(item), None, dtype=object)
            texts[first_row] = columns["text"][item[first_row]]
            arrays["text"] = pa.array(texts.tolist(), pa.large_string())
        for name in columns:  # after the others, as ``_schema`` lists them
            if name.startswith(parquet.META_PREFIX):
                arrays[name] = _per_item_strings(columns[name], group_items, local)
        yield pa.table(arrays)
        first = stop


def _per_item_strings(values: np.ndarray, group_items: np.ndarray, local: Any) -> Any:
    """Return an item column of strings (or None) on each row of a row group: dictionary-encoded, each distinct
    value once (``group_items``: the group's items; ``local``: each row's position among them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.dictionary_encode(pa.array(values[group_items].tolist(), pa.string())).take(local)


def _at(values: np.ndarray, span: np.ndarray) -> np.ndarray:
    """Return the spans' values; a record with no span at all has only marker rows (span 0, masked): zeros."""
    return values[span] if len(values) else np.zeros(len(span), dtype=np.int64)


def _partial_name(out: Path, token: str) -> Path:
    """Return the temporary file convert writes ``out`` through (hidden, beside it)."""
    return out.parent / f".{out.name}.{token}.partial"


def _temporary(out: Path, folder: bool = False) -> tuple[str, int]:
    """Create an empty file (with ``folder``, a folder) beside ``out`` with a name no one else has, with the
    permissions a new one gets.

    Return its path and a descriptor holding an advisory lock on it while it is written: a convert that was
    killed leaves it unlocked, and the next convert to the same ``out`` removes it (``_remove_stale``).
    """
    while True:
        path = _partial_name(out, secrets.token_hex(6))  # 12 hex digits
        try:
            if folder:
                os.mkdir(path, 0o777)  # the umask applies, as to any new folder
                descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            else:
                descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask applies, as to OUT
        except FileExistsError:
            continue
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: no one else holds it
        return str(path), descriptor


def _remove_stale(out: Path) -> None:
    """Remove the temporary files and folders of converts to ``out`` that were killed (unlocked); leave running
    ones'."""
    if fcntl is None:
        return
    for path in out.parent.glob(_partial_name(Path(glob.escape(out.name)), "?" * 12).name):  # any token
        try:
            descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue  # gone already, or not ours to open
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if stat.S_ISDIR(os.fstat(descriptor).st_mode):  # the folder opened (O_NOFOLLOW: never a symlink)
                shutil.rmtree(path)  # locked by us: no convert is writing it
            else:
                os.unlink(path)
        except OSError:
            pass  # a convert is writing it (locked), or it is not ours to remove
        finally:
            os.close(descriptor)


def _place(temporary: Path, out: Path, force: bool) -> None:
    """Move the finished file to ``out``: replacing it with ``force``, else never over a file that appeared."""
    if force:
        os.replace(temporary, out)
        return
    try:
        os.link(temporary, out)  # fails if out exists, atomically
    except FileExistsError:
        raise InputError(f"{out}: exists; pass --force to replace it") from None
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if out.exists():  # a file system without hard links: check, then rename
            raise InputError(f"{out}: exists; pass --force to replace it") from None
        os.replace(temporary, out)
