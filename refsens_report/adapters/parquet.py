"""The columnar record (``format = "parquet"``): a span table read straight into the audit's arrays.

One row per item, labelling and span: ``id``, ``language``, ``labelling``, ``start``, ``end``, ``type``; a row
whose start, end and type are all null marks the labelling present on the item with no spans, and an item and
labelling with no row is absent. ``third_pass`` (bool) and ``dup_key`` (string), optional, repeat the item's
value on each of its rows; so does ``record_order`` (integer, at least 0), the item's place in the record the
file was converted from, which the duplicate policies' first and last follow (a partitioned record is in
canonical order; without it, the file's order is the record's). ``text`` (string), optional, is the item's
text: on one of its rows at least (convert writes it on the first), null or the same on the others; spans must
lie inside it. Items come in the order their ids first appear; spans keep the file's order.

The file is read batch by batch (at most ``BATCH_ROWS`` rows, within row groups) into a ``SpanTable``:
string columns arrive dictionary-encoded and only their distinct values become Python strings, so a record of
tens of millions of spans never holds a Python object per span. The checks are the JSON Lines record's, on
whole columns at once, and messages name the file and the row (``record.parquet: row 17: ...``, data rows
counted from 1). ``refsens_report/convert.py`` writes such a file from any record.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from refsens_report import partitions
from refsens_report.adapters.common import InputPath, read_path
from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList
from refsens_report.files import open_regular, path_problem
from refsens_report.names import name_problem
from refsens_report.options import OptionReader
from refsens_report.record import MAX_OFFSET, POOLED, Record, check_span, describe_json
from refsens_report.table import SPAN_TYPES, SpanTable, holds, sorted_codes

SPAN_COLUMNS = ("id", "language", "labelling", "start", "end", "type")  # required, in this order
ITEM_COLUMNS = ("third_pass", "dup_key", "record_order")  # optional: one value per item, repeated on its rows
TEXT_COLUMN = "text"  # optional: the item's text, on one of its rows at least (null or the same on the others)
# optional: ``meta.<key>`` (string), the item's metadata ``key`` (a cluster key: `[record] cluster = "<key>"`),
# repeated on each of its rows like dup_key
META_PREFIX = "meta."
KEY_COLUMNS = ("id", "dup_key")  # strings of the items, many distinct: read as views (``_decoded``)
STRING_COLUMNS = frozenset({"id", "language", "labelling", "type", "dup_key", TEXT_COLUMN})
OFFSET_COLUMNS = frozenset({"start", "end"})
INTEGER_COLUMNS = OFFSET_COLUMNS | {"record_order"}
BATCH_ROWS = 1 << 21  # rows decoded at once: bounds the temporary arrays whatever the file's row groups


@dataclass(frozen=True)
class ParquetOptions:
    """The checked `[record]` keys of a Parquet span table: a file, a folder of ``*.parquet`` files, or a glob.

    ``source`` is the file or the folder; a glob (``parts/*.parquet``) is the folder before its first part with a
    wildcard, and ``pattern`` the rest. Any of them may be a URL fsspec reads (``s3://bucket/parts``).
    """

    source: InputPath
    pattern: str = ""

    @cached_property
    def partitioned(self) -> bool:
        """Whether the record is several files (a folder or a glob): the Dask workers then read them (asked once:
        at a URL, a round trip to the store)."""
        return bool(self.pattern) or self.source.path.is_dir()

    def files(self) -> list[InputPath]:
        """Return the record's files in name order: the file, the folder's ``*.parquet`` files, or the glob's."""
        source = self.source
        if not self.partitioned:
            return [source]
        found = sorted(source.path.glob(self.pattern or "*.parquet"), key=lambda path: path.parts)  # Path order
        folder, name = source.display.rstrip("/"), source.name.rstrip("/")
        inside = [path.relative_to(source.path).as_posix() for path in found]
        return [InputPath(path, f"{folder}/{part}", f"{name}/{part}") for path, part in zip(found, inside)]


def read_options(reader: OptionReader, base_dir: Path) -> ParquetOptions | None:
    """Read `[record]` for format = "parquet"; bad keys are reported through ``reader``."""
    folder, pattern = split_glob(reader.string("path") or "")
    source = read_path(reader, base_dir, "path", kind="folder" if pattern else "any", remote=True, written=folder)
    return None if source is None else ParquetOptions(source, pattern)


def split_glob(value: str) -> tuple[str, str]:
    """Return a path's folder before its first part with a wildcard (``*``, ``?``, ``[``), and the rest;
    (value, "") when it has none."""
    parts = value.split("/")
    wild = next((k for k, part in enumerate(parts) if glob.has_magic(part)), None)
    if wild is None:
        return value, ""
    return "/".join(parts[:wild]) or ".", "/".join(parts[wild:])


def load(options: ParquetOptions, duplicate_key: str, unheld: frozenset[str] = frozenset()) -> Record:
    """Read the span table into a columnar ``Record``; raise ``InputError`` listing the problems with their rows.

    ``dup_key`` is stored as the item metadata ``duplicate_key`` (`[audit] duplicate_key`), as the audit reads it.
    ``unheld``: labellings whose spans are checked and counted but not kept (``SpanTable.unheld``): a
    partitioned record's Dask client, whose workers hold the outputs' spans (``workers.unheld_names``).
    """
    files = _files(options)
    builder = _Builder(duplicate_key, unheld)
    opened = [_open(file.path, file.display, builder.problems) for file in files]
    if options.partitioned and not options.pattern:  # convert --partition-items' folder: each file as listed
        listed = partitions.check_files(options.source.path, options.source.display, [file.path.name for file in files])
        for file in opened:
            if listed is not None and file is not None and file.rows != listed[file.path.name].rows:
                builder.problems.add(
                    f"{file.display}: {file.rows:,} rows, where {partitions.MANIFEST} lists "
                    f"{listed[file.path.name].rows:,}: not the file convert wrote; convert again"
                )
    builder.problems.raise_if_any()  # a file that is not a span table: say so for every file before reading any
    builder.reserve(sum(file.rows for file in opened), options.source.display)  # type: ignore[union-attr]
    for file in opened:
        assert file is not None
        if not builder.read(file):
            break
    # a glob's files are the record's (the provenance hashes those); a folder's are all of it, manifest included
    sources = tuple(files) if options.pattern else (options.source,)
    record = Record(columnar=builder.table(options.source.display), sources=sources)
    _release_arrow_memory()
    return record


def _release_arrow_memory() -> None:
    """Give back to the system the memory Arrow's allocator keeps after the batches are freed.

    Its allocator (mimalloc) holds freed pages for reuse: after reading a million items, hundreds of MB that
    nothing reads again would otherwise stay with the process until the bootstrap's peak.
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


# ----------------------------------------------------------------------------------------------------------
# the files and their schemas


@dataclass
class _File:
    """One Parquet file opened for reading: how messages name it, its rows and the columns to read."""

    display: str
    path: Path
    rows: int
    columns: tuple[str, ...]
    metadata: Any
    dictionary: tuple[str, ...]  # string columns read dictionary-encoded
    first_row: int = 0  # its first row's position among the rows of every file


def _files(options: ParquetOptions) -> list[InputPath]:
    """Return the record's files (``ParquetOptions.files``); refuse a folder or glob with none, or with one that
    is not a readable file."""
    files = options.files()
    if not files:
        where = options.source.display.rstrip("/")
        raise InputError(
            f"{where}/{options.pattern}: no file matches this pattern"
            if options.pattern
            else f"{where}: no .parquet files in this folder"
        )
    problems = ProblemList()
    for file in files:
        if file is not options.source and (problem := path_problem(file.path, "file")):
            problems.add(f"{file.display}: {'is a broken symlink' if problem == 'not found' else problem}")
    problems.raise_if_any()
    return files


def _open(path: Path, display: str, problems: ProblemList) -> _File | None:
    """Read a file's footer and check its schema; report what makes it unreadable as a span table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = open_regular(path)  # a regular file only: never a FIFO or a device
    except OSError as error:
        problems.add(f"{display}: cannot read the file ({error.strerror or error})")
        return None
    with handle:
        head = handle.read(4)
        size = handle.seek(0, 2)
        handle.seek(max(size - 4, 0))
        if size < 12 or head != b"PAR1" or handle.read(4) != b"PAR1":
            problems.add(f"{display}: not a Parquet file (it does not begin and end with the bytes PAR1)")
            return None
        handle.seek(0)
        try:
            metadata = pq.read_metadata(handle)
        except (pa.ArrowException, OSError, ValueError) as error:  # pyarrow's IO errors are OSErrors
            problems.add(f"{display}: not a readable Parquet file ({_first_line(error)})")
            return None
    try:
        schema = metadata.schema.to_arrow_schema()
    except (pa.ArrowException, ValueError) as error:
        problems.add(f"{display}: a Parquet schema with no Arrow equivalent ({_first_line(error)})")
        return None
    before = len(problems)
    names = schema.names
    missing = [name for name in SPAN_COLUMNS if name not in names]
    if missing:
        problems.add(
            f"{display}: no column {', '.join(repr(name) for name in missing)}: a span table has the "
            f"columns {', '.join(SPAN_COLUMNS)} (and optionally {', '.join(ITEM_COLUMNS)}); "
            f"this file has {', '.join(repr(name) for name in names) or 'none'}"
        )
    metas = tuple(sorted(name for name in names if name.startswith(META_PREFIX) and len(name) > len(META_PREFIX)))
    columns = tuple(name for name in (*SPAN_COLUMNS, *ITEM_COLUMNS, TEXT_COLUMN) if name in names) + metas
    for name in columns:
        if names.count(name) > 1:
            problems.add(f"{display}: the column '{name}' appears {names.count(name)} times")
        elif why := _type_problem(name, schema.field(name).type):
            problems.add(f"{display}: the column '{name}' {why}")
    if len(problems) > before:
        return None
    dictionary = tuple(
        name
        for name in columns
        if _is_string_column(name) and name != TEXT_COLUMN and not pa.types.is_null(schema.field(name).type)
    )
    return _File(display, path, metadata.num_rows, columns, metadata, dictionary)


def _type_problem(name: str, arrow_type: Any) -> str | None:
    """Return why a column's Arrow type cannot hold its values, or None (an all-null column fits any)."""
    import pyarrow as pa

    if pa.types.is_null(arrow_type) and name not in ("id", "language", "labelling"):
        return None
    if _is_string_column(name):
        value_type = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
        if pa.types.is_string(value_type) or pa.types.is_large_string(value_type) or _is_string_view(value_type):
            return None
        expected = "string (string, large_string, or a dictionary of strings)"
    elif name in INTEGER_COLUMNS:
        if pa.types.is_integer(arrow_type):
            return None
        expected = "an integer type (int8 to int64, uint8 to uint64)"
        if pa.types.is_floating(arrow_type):
            expected += "; pandas makes an integer column with missing values float64: use the Int64 dtype"
    else:
        if pa.types.is_boolean(arrow_type):
            return None
        expected = "bool"
    return f"is {arrow_type}, expected {expected}"


def _is_string_column(name: str) -> bool:
    """Return whether a column holds strings: the span table's own, and the items' metadata (``META_PREFIX``)."""
    return name in STRING_COLUMNS or name.startswith(META_PREFIX)


def _is_string_view(arrow_type: Any) -> bool:
    import pyarrow as pa

    return bool(getattr(pa.types, "is_string_view", lambda _: False)(arrow_type))


# ----------------------------------------------------------------------------------------------------------
# columns to codes


class _Names:
    """The few distinct strings of a column (languages, labelling names, types), coded in order of first appearance."""

    FEW = 1024  # a dictionary this small is listed whole; a larger one only where the rows use it

    def __init__(self) -> None:
        self.code: dict[str, int] = {}
        self.values: list[str] = []

    def __len__(self) -> int:
        return len(self.values)

    def encode(self, column: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """Return each row's code (-1 where null) and where the column is null (None: nowhere).

        Strings not seen before get the next codes in the order the rows first use them.
        """
        import pyarrow.compute as pc

        rows, column = len(column), _dictionary(column)
        if column is None:
            return _all_null(rows)
        indices, dictionary = column.indices, column.dictionary
        if not len(dictionary):
            return _all_null(len(column))
        lookup = None
        if len(dictionary) <= self.FEW:  # the common case after the first batch: every string already known
            listed = dictionary.to_pylist()
            if all(value in self.code for value in listed):
                lookup = np.array([*map(self.code.__getitem__, listed), -1], dtype=np.int64)
        if lookup is None:
            used = pc.unique(indices).drop_null()  # dictionary positions in the order the rows first use them
            lookup = np.full(len(dictionary) + 1, -1, dtype=np.int64)
            lookup[used.to_numpy()] = [self._code(value) for value in dictionary.take(used).to_pylist()]
        return _lookup(lookup, column)

    def _code(self, value: str | None) -> int:
        if value is None:
            return -1
        if value not in self.code:
            self.code[value] = len(self.values)
            self.values.append(value)
        return self.code[value]


class _Keys:
    """The many distinct strings of a column (the ids, the duplicate keys), coded per batch, merged at the end.

    A batch's distinct strings get provisional codes, the next ones in the order its rows first use them, and
    stay Arrow strings; ``merge`` hashes them all at once into final codes, in order of first appearance over
    every batch. No dict of a million ids is built, and the checks that span batches (an item's rows in two of
    them) run once, on arrays, in ``_Builder.table``.
    """

    def __init__(self) -> None:
        self.chunks: list[Any] = []  # each batch's distinct strings (Arrow), provisional codes in a row
        self.starts: list[int] = []  # the provisional code of each chunk's first string
        self.count = 0

    def encode(self, column: Any, first_use: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """Return each row's provisional code (-1 where null) and where the column is null (None: nowhere).

        ``first_use``: the column is dictionary-encoded as ``_decoded`` encodes, its dictionary distinct strings
        in the order the rows first use them, none null: they are the provisional codes' strings as they are,
        without hashing the rows and the strings again.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        rows, column = len(column), _dictionary(column)
        if column is None:
            return _all_null(rows)
        indices, dictionary = column.indices, column.dictionary
        if first_use:
            self.chunks.append(dictionary.cast(pa.large_string()))
            self.starts.append(self.count)
            self.count += len(dictionary)
            return _lookup(np.append(np.arange(self.count - len(dictionary), self.count), -1), column)
        used = pc.unique(indices).drop_null()
        if not len(used):
            return _all_null(len(column))
        strings = pc.dictionary_encode(dictionary.take(used).cast(pa.large_string()))  # a repeat: one code
        distinct = strings.dictionary
        local = (
            strings.indices.to_numpy(zero_copy_only=False)
            if not strings.null_count
            else pc.fill_null(strings.indices, -1).to_numpy()
        )
        lookup = np.full(len(dictionary) + 1, -1, dtype=np.int64)
        lookup[used.to_numpy()] = np.where(local >= 0, local + self.count, -1)
        self.chunks.append(distinct)
        self.starts.append(self.count)
        self.count += len(distinct)
        return _lookup(lookup, column)

    def value(self, code: int) -> str:
        """Return the string of a provisional code (for a message)."""
        chunk = int(np.searchsorted(self.starts, code, side="right")) - 1
        return str(self.chunks[chunk][code - self.starts[chunk]].as_py())

    def merge(self) -> tuple[list[str], np.ndarray]:
        """Return the distinct strings in order of first appearance, and each provisional code's final code."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.chunks:
            return [], np.zeros(0, dtype=np.int64)
        merged = pc.dictionary_encode(pa.chunked_array(self.chunks, pa.large_string()).combine_chunks())
        return merged.dictionary.to_pylist(), merged.indices.to_numpy().astype(np.int64)


def _decoded(
    names: tuple[str, ...], batches: Iterator[Any], keys: Iterator[Any]
) -> Iterator[tuple[Any, frozenset[str]]]:
    """Yield record batches of the columns ``names``, each with the names of the columns encoded here: the key
    columns (ids, duplicate keys) from ``keys``, read as string views and dictionary-encoded here (their
    dictionaries distinct, in the order the rows first use them: ``_Keys.encode``'s ``first_use``), the others
    from ``batches``; both streams hold the same rows, each batch cut where either stream's is.

    A file may repeat a dictionary of every id of the record in each row group (pyarrow writes a dictionary
    array's dictionary whole, as from a pandas categorical): read as a dictionary, each row group would decode all
    of it (a million ids per row group of a million-item record, most of the reading time, growing as items x
    row groups). Views decode only the rows' own strings, and encoding them keeps the batch's distinct ids.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    held: list[Any] = [None, None]  # each stream's batch being cut, and the rows of it already yielded
    done = [0, 0]
    streams = (batches, keys)
    while True:
        for k, stream in enumerate(streams):
            while held[k] is None or done[k] == held[k].num_rows:
                held[k], done[k] = next(stream, None), 0
                if held[k] is None:
                    break
        if held[0] is None or held[1] is None:
            if held[0] is not None or held[1] is not None:
                raise ValueError("its columns hold different numbers of rows")
            return
        rows = min(held[0].num_rows - done[0], held[1].num_rows - done[1])
        columns, encoded = {}, set()
        for k in (0, 1):
            part = held[k].slice(done[k], rows)
            done[k] += rows
            for name, column in zip(part.schema.names, part.columns):
                if k == 1 and not pa.types.is_dictionary(column.type) and not pa.types.is_null(column.type):
                    found = pc.dictionary_encode(column)  # strings in the order the rows first use them
                    values = found.dictionary  # a string (not view) dictionary, as read_dictionary gives
                    if not pa.types.is_string(values.type):  # cast as bytes: not-UTF-8 is found and named later
                        values = values.cast(pa.binary()).view(pa.string())
                    column = pa.DictionaryArray.from_arrays(found.indices, values)
                    encoded.add(name)
                columns[name] = column
        yield pa.RecordBatch.from_arrays([columns[name] for name in names], names=list(names)), frozenset(encoded)


def _dictionary(column: Any) -> Any:
    """Return a string column dictionary-encoded (as read, or encoded here); None for a column of type null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_null(column.type):
        return None
    return column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)


def invalid_utf8(column: Any) -> int | None:
    """Return the first row of a string column (plain or dictionary) holding bytes that are not UTF-8, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_null(column.type):
        return None
    values = column.dictionary if pa.types.is_dictionary(column.type) else column
    try:
        values.validate(full=True)
        return None
    except pa.ArrowInvalid:
        pass
    binary = values.cast(pa.large_binary())
    bad = []
    for position, value in enumerate(binary.to_pylist()):
        try:
            None if value is None else value.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(position)
    if not bad:
        return None
    if values is column:
        return bad[0]
    row = pc.index(pc.is_in(column.indices, value_set=pa.array(bad, column.indices.type)), True).as_py()
    return None if row < 0 else row


def _all_null(rows: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(rows, -1, dtype=np.int64), np.ones(rows, dtype=bool)


def _lookup(lookup: np.ndarray, column: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """Return each row's code through ``lookup`` (its last entry, -1, for null rows) and the null rows."""
    import pyarrow.compute as pc

    indices = column.indices
    null = _null_mask(indices)
    codes = lookup[(indices if null is None else pc.fill_null(indices, len(lookup) - 1)).to_numpy()]
    if column.dictionary.null_count:  # a null string in the dictionary itself
        null = codes < 0
    return codes, null


def _null_mask(column: Any) -> np.ndarray | None:
    """Return where an Arrow array is null, or None when it has no null (the common case: no work)."""
    return column.is_null().to_numpy(zero_copy_only=False) if column.null_count else None


def _offsets(column: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """Return an integer column as int64 (0 where null) and where it is null (None: nowhere).

    A uint64 beyond MAX_OFFSET becomes MAX_OFFSET + 1, so it cannot wrap round to a negative offset (the
    message quotes the value as written).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_null(column.type):
        return np.zeros(len(column), dtype=np.int64), np.ones(len(column), dtype=bool)
    null = _null_mask(column)
    if null is not None:
        column = pc.fill_null(column, 0)
    if pa.types.is_uint64(column.type):
        limit = pa.scalar(MAX_OFFSET, pa.uint64())
        column = pc.if_else(pc.greater(column, limit), pa.scalar(MAX_OFFSET + 1, pa.uint64()), column)
    if not pa.types.is_int64(column.type):
        column = column.cast(pa.int64())
    return column.to_numpy(), null


def _flags(column: Any) -> np.ndarray:
    """Return a bool column as codes: 1 true, 0 false, -1 null."""
    import pyarrow as pa

    if pa.types.is_null(column.type):
        return np.full(len(column), -1, dtype=np.int64)
    values = column.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int64)
    null = _null_mask(column)
    if null is not None:
        values[null] = -1
    return values


# ----------------------------------------------------------------------------------------------------------
# the record, batch by batch


class _Builder:
    """Reads the files' batches into arrays, checking each; ``table`` merges the items and assembles the table.

    Items are first coded per batch (``_Keys``): an item whose rows fall in two batches is two provisional
    items until ``table`` merges them, checking there that they agree on the language, third_pass and dup_key.
    """

    ITEM_VALUES = ("language", *ITEM_COLUMNS)

    def __init__(self, duplicate_key: str, unheld: frozenset[str] = frozenset()) -> None:
        self.duplicate_key = duplicate_key
        # the labellings whose span rows are set aside (``_set_aside``): per provisional item and labelling code,
        # whether it had such a row; per labelling code and provisional type code, how many
        self.unheld = unheld
        self.aside_present = np.zeros((0, 0), dtype=bool)
        self.aside_spans = np.zeros((0, 0), dtype=np.int64)
        self.aside_end = np.zeros((0, 1), dtype=np.int64)  # per provisional item, its set-aside spans' furthest end
        self.problems = ProblemList()
        self.hidden = 0  # problems found beyond those listed
        self.files: list[_File] = []
        self.ids, self.dup_keys = _Keys(), _Keys()
        self.metas: dict[str, _Keys] = {}  # per ``meta.<key>`` column, its values' codes
        self.languages, self.labellings, self.types = _Names(), _Names(), _Names()
        self.bad_type = np.zeros(0, dtype=bool)  # per type code: empty, blank or unprintable
        self.item_columns: set[str] = set()
        # per provisional item: its language, third_pass and dup_key codes (-1: null) and its first row
        self.item: dict[str, list[np.ndarray]] = {name: [] for name in (*self.ITEM_VALUES, "first_row")}
        # spans in file order (the first n_spans rows of arrays sized for every row), in SpanTable's types (``_store``
        # widens one past them); markers apart, with their rows
        self.n_spans = 0
        self.span = {name: np.zeros(0, dtype=kind) for name, kind in SPAN_TYPES.items()}
        self.markers: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.texts: list[tuple[np.ndarray, Any, np.ndarray]] = []  # rows with a text: provisional item, text, row
        self.rows = 0  # rows read so far, over every file
        self.total_rows = 0

    def reserve(self, rows: int, display: str) -> None:
        """Allocate the span arrays for every row of every file at once (their pages are touched as they fill).

        The rows are the footers' claim: a claim no memory can hold (a damaged or forged footer, or a record far
        too large for this machine) is refused before anything is read.
        """
        self.total_rows = rows
        try:
            self.span = {name: np.empty(rows, dtype=array.dtype) for name, array in self.span.items()}
        except (MemoryError, ValueError):
            size = sum(array.dtype.itemsize for array in self.span.values()) * rows
            raise InputError(
                f"{display}: the Parquet footers claim {rows:,} rows, more than memory can hold "
                f"({size / 2**30:,.0f} GiB of span arrays)"
            ) from None

    # -- where a row is --------------------------------------------------------------------------------
    def owner(self, row: int) -> _File:
        """Return the file a row (a position among every file's rows) is in."""
        return next(f for f in reversed(self.files) if f.first_row <= row)

    def where(self, row: int, file: _File | None = None) -> str:
        """Return 'record.parquet: row 17' for a row's position among every file's rows (17: its data row);
        just 'row 17' when the row is in ``file``, the file the message already names."""
        owner = self.owner(row)
        if file is not None and owner is file:
            return f"row {row - owner.first_row + 1:,}"
        return f"{owner.display}: row {row - owner.first_row + 1:,}"

    def _report(self, found: list[tuple[int, str]]) -> None:
        """Add problems (row, message) in row order, up to the cap; count the rest as hidden."""
        room = max(MAX_PROBLEMS - 1 - len(self.problems), 0)
        found.sort(key=lambda entry: entry[0])
        for row, message in found[:room]:
            self.problems.add(f"{self.where(row)}: {message}")
        self.hidden += max(len(found) - room, 0)

    def _flagger(self, found: list[tuple[int, str]], base: int) -> Callable[[np.ndarray, Callable[[int], str]], None]:
        """Return flag(positions, word): word the first rows at ``positions`` (plus ``base``), count the others."""

        def flag(positions: np.ndarray, word: Callable[[int], str]) -> None:
            found.extend((base + int(k), word(int(k))) for k in positions[:MAX_PROBLEMS])
            self.hidden += max(len(positions) - MAX_PROBLEMS, 0)

        return flag

    # -- reading -------------------------------------------------------------------------------------
    def read(self, file: _File) -> bool:
        """Read one file's batches; return False once the problems fill the cap (reading stops there).

        The next batch is decoded on a thread while this one is checked (both release the GIL).
        """
        file.first_row = self.rows
        self.files.append(file)
        self.item_columns.update(name for name in ITEM_COLUMNS if name in file.columns)
        keys = [name for name in KEY_COLUMNS if name in file.dictionary]
        with ExitStack() as opened:
            try:  # the key columns have their own reader (``_decoded``)
                handles = [opened.enter_context(open_regular(file.path)) for _ in range(2 if keys else 1)]
            except OSError as error:
                self.problems.add(f"{file.display}: cannot read the file ({error.strerror or error})")
                return False
            return self._read(file, keys, handles)

    def _read(self, file: _File, keys: list[str], handles: list[Any]) -> bool:
        """Read the batches of a file opened once, or twice with ``keys``, columns read as views (``_decoded``)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            with ThreadPoolExecutor(max_workers=1) as decoder:
                parquet = pq.ParquetFile(handles[0], metadata=file.metadata, read_dictionary=list(file.dictionary))
                others = [name for name in file.columns if name not in keys]
                read = parquet.iter_batches(batch_size=BATCH_ROWS, columns=others)
                batches: Iterator[tuple[Any, frozenset[str]]] = ((batch, frozenset()) for batch in read)
                if keys:
                    views = pq.ParquetFile(handles[1], metadata=file.metadata, binary_type=pa.binary_view())
                    batches = _decoded(file.columns, read, views.iter_batches(batch_size=BATCH_ROWS, columns=keys))
                pending = decoder.submit(next, batches, None)
                while (found := pending.result()) is not None:
                    pending = decoder.submit(next, batches, None)
                    batch, encoded = found
                    self._batch(batch, file, encoded)
                    self.rows += batch.num_rows
                    if len(self.problems) >= MAX_PROBLEMS - 1:
                        if self.rows < self.total_rows:
                            at = self.where(self.rows, file) if self.rows < file.first_row + file.rows else "its end"
                            self.problems.add(
                                f"{file.display}: stopped reading at {at}; fix the problems above and run again"
                            )
                        return False
        except (pa.ArrowException, OSError, ValueError) as error:  # pyarrow's IO errors are OSErrors
            self.problems.add(f"{file.display}: not a readable Parquet file ({_first_line(error)})")
            self.problems.raise_if_any()  # a batch may be half read: nothing more can be said of the record
        return True

    def _batch(self, batch: Any, file: _File, encoded: frozenset[str] = frozenset()) -> None:
        """Check one batch and append its spans, markers and items (rows as positions in the batch); ``encoded``:
        the key columns ``_decoded`` encoded."""
        import pyarrow as pa

        base = self.rows
        columns = {name: batch.column(name) for name in file.columns}
        found: list[tuple[int, str]] = []
        flag = self._flagger(found, base)
        try:  # a damaged file can decode to indices beyond a dictionary, or strings that are not UTF-8
            batch.validate(full=True)
        except pa.ArrowInvalid:
            for name in STRING_COLUMNS.intersection(columns):
                if (row := invalid_utf8(columns[name])) is not None:
                    flag(np.array([row]), lambda k, name=name: f"'{name}' is not valid UTF-8")
            if not found:
                raise
            self._report(found)  # nothing of the batch is kept: decoding its strings would fail half way
            return

        new_from = {names: len(names) for names in (self.languages, self.labellings)}
        first_item = self.ids.count
        item, item_null = self.ids.encode(columns["id"], "id" in encoded)
        language, language_null = self.languages.encode(columns["language"])
        labelling, labelling_null = self.labellings.encode(columns["labelling"])
        span_type, type_null = self.types.encode(columns["type"])
        start, start_null = _offsets(columns["start"])
        end, end_null = _offsets(columns["end"])

        # distinct values: each new language and labelling name checked once, at its first row (ids: ``table``)
        for names, codes, what in (
            (self.languages, language, "'language'"),
            (self.labellings, labelling, "the labelling name"),
        ):
            for code in _suspects(names.values, new_from[names]):
                if why := _value_problem(names.values[code], what):
                    found.append((base + int(np.argmax(codes == code)), why))
        bad_type = np.zeros(len(self.types) - len(self.bad_type), dtype=bool)
        for code in _suspects(self.types.values, len(self.bad_type)):
            value = self.types.values[code]
            bad_type[code - len(self.bad_type)] = not value.strip() or bool(name_problem(value))
        self.bad_type = np.concatenate([self.bad_type, bad_type])

        # rows: nulls, then each span's own checks (worded by record.check_span, as in the JSON Lines record)
        for null, name in ((item_null, "id"), (language_null, "language"), (labelling_null, "labelling")):
            if null is not None:
                flag(np.flatnonzero(null), lambda k, name=name: f"'{name}' is null")
        nulls = [null for null in (start_null, end_null, type_null) if null is not None]
        marker = is_span = None  # None: every row is a span
        if nulls:
            some, marker = _any(nulls), _every(nulls) if len(nulls) == 3 else np.zeros(len(item), dtype=bool)
            is_span = ~some
            flag(
                np.flatnonzero(some & ~marker),
                lambda k: (
                    "start, end and type must all be set (a span) or all be "
                    f"null (the labelling present with no spans): {describe_json(_raw(columns, k))}"
                ),
            )
        bad = start >= end  # null rows read as 0: masked below
        if len(start) and start.min() < 0:  # a reduction is cheaper than a mask, and mostly all it takes
            bad |= start < 0
        if len(end) and end.max() > MAX_OFFSET:
            bad |= end > MAX_OFFSET
        if self.bad_type.any():
            bad |= self.bad_type[np.maximum(span_type, 0)]
        if is_span is not None:
            bad &= is_span
        flag(np.flatnonzero(bad), lambda k: f"span {check_span(_raw(columns, k), None)[1]}")

        values = {"language": language}
        if "third_pass" in columns:
            values["third_pass"] = _flags(columns["third_pass"])
        if "dup_key" in columns:
            values["dup_key"] = self.dup_keys.encode(columns["dup_key"], "dup_key" in encoded)[0]
        if "record_order" in columns:
            order, order_null = _offsets(columns["record_order"])
            flag(np.flatnonzero(order < 0), lambda k: f"'record_order' is {int(order[k])}; it counts from 0")
            if order_null is not None:
                flag(np.flatnonzero(order_null), lambda k: "'record_order' is null; every item has its place")
            values["record_order"] = order
        for name in file.columns:
            if name.startswith(META_PREFIX):
                values[name] = self._meta(name).encode(columns[name])[0]
        self._items(item, first_item, values, language_null is not None, flag)
        if TEXT_COLUMN in columns and not pa.types.is_null(columns[TEXT_COLUMN].type):
            given = np.flatnonzero(columns[TEXT_COLUMN].is_valid().to_numpy(zero_copy_only=False) & (item >= 0))
            if len(given):
                self.texts.append((item[given], columns[TEXT_COLUMN].take(pa.array(given)), base + given))

        known = [~null for null in (item_null, labelling_null) if null is not None]
        keep = _every([mask for mask in (is_span, *known) if mask is not None])
        if self.unheld:
            keep = self._set_aside(keep, item, labelling, span_type, end)
        self._store(keep, item=item, labelling=labelling, start=start, end=end, type=span_type)
        if marker is not None:
            marked = np.flatnonzero(_every([marker, *known]))
            if len(marked):
                self.markers.append((item[marked], labelling[marked], base + marked))
        self._report(found)

    def _set_aside(
        self, keep: np.ndarray | None, item: np.ndarray, labelling: np.ndarray, span_type: np.ndarray, end: np.ndarray
    ) -> np.ndarray | None:
        """Return ``keep`` without the span rows of the ``unheld`` labellings, having noted their items (the
        labelling is present there) and their furthest end, and counted them by labelling and type. They were
        checked as every row is."""
        unheld = np.array([name in self.unheld for name in self.labellings.values], dtype=bool)
        if not unheld.any():
            return keep
        aside = unheld[np.maximum(labelling, 0)]
        if keep is not None:
            aside &= keep
        rows = np.flatnonzero(aside)
        if not len(rows):
            return keep
        n_names, n_types = len(self.labellings), len(self.types)
        self.aside_present = _grown(self.aside_present, (self.ids.count, n_names))
        self.aside_spans = _grown(self.aside_spans, (n_names, n_types), exact=True)
        self.aside_end = _grown(self.aside_end, (self.ids.count, 1))
        names, items = labelling[rows], item[rows]
        self.aside_present[items, names] = True
        runs = np.flatnonzero(np.r_[True, items[1:] != items[:-1]])  # an item's rows come together, mostly
        np.maximum.at(self.aside_end[:, 0], items[runs], np.maximum.reduceat(end[rows], runs))
        cells = names.astype(np.int64) * n_types + span_type[rows]
        self.aside_spans[:n_names, :n_types] += np.bincount(cells, minlength=n_names * n_types).reshape(n_names, -1)
        return ~aside if keep is None else keep & ~aside

    def _meta(self, name: str) -> _Keys:
        """Return the codes of a ``meta.<key>`` column, made at its first file: the items before have none."""
        if name not in self.metas:
            self.metas[name] = _Keys()
            self.item[name] = [np.full(len(part), -1, dtype=np.int64) for part in self.item["first_row"]]
        return self.metas[name]

    def _items(
        self,
        item: np.ndarray,
        first_code: int,
        values: dict[str, np.ndarray],
        language_null: bool,
        flag: Callable[..., None],
    ) -> None:
        """Record the batch's items (provisional codes from ``first_code`` on): their language, third_pass, dup_key
        and first row; flag the rows of an item that disagree with its first row.

        Rows come in runs of one item (an item's rows are usually contiguous): each run's first row is checked
        against the item's first row, and each row inside a run against the row before it.
        """
        count = self.ids.count - first_code
        if not count:
            return
        same = item[1:] == item[:-1]
        starts = np.concatenate([[0], np.flatnonzero(~same) + 1])
        run_item = item[starts]
        starts, run_item = starts[run_item >= 0], run_item[run_item >= 0] - first_code
        first = np.full(count, len(item), dtype=np.int64)  # each item's first row in the batch
        np.minimum.at(first, run_item, starts)
        self.item["first_row"].append(self.rows + first)
        for name in (*self.ITEM_VALUES, *self.metas):
            value = values.get(name)
            if value is None:
                self.item[name].append(np.full(count, -1, dtype=np.int64))
                continue
            per_item = value[first]
            self.item[name].append(per_item)
            if name == "language" and language_null:
                continue  # the null rows are reported as such
            runs = starts[per_item[run_item] != value[starts]]
            inside = np.flatnonzero(same & (value[1:] != value[:-1])) + 1
            inside = inside[item[inside] >= 0]
            inside = inside[per_item[item[inside] - first_code] != value[inside]]

            def word(k: int, name: str = name, value: np.ndarray = value, per_item: np.ndarray = per_item) -> str:
                own = int(item[k]) - first_code
                return self._differ(
                    name,
                    self.ids.value(int(item[k])),
                    self._shown(name, int(value[k])),
                    self._shown(name, int(per_item[own])),
                    self.rows + k,
                    self.rows + int(first[own]),
                )

            flag(np.union1d(runs, inside), word)

    def _store(self, keep: np.ndarray | None, **values: np.ndarray) -> None:
        """Append the rows ``keep`` selects (None: every row) to the span arrays."""
        rows = None if keep is None else np.flatnonzero(keep)
        count = len(values["item"]) if rows is None else len(rows)
        stop = self.n_spans + count
        if stop > len(self.span["item"]):  # more rows than the footers said: never in practice
            self.span = {
                name: np.concatenate([array[: self.n_spans], np.empty(count, array.dtype)])
                for name, array in self.span.items()
            }
        for name, column in values.items():
            if not holds(self.span[name].dtype.type, column):  # a value beyond the type (never in practice): int64
                self.span[name] = self.span[name].astype(np.int64)
            target = self.span[name][self.n_spans : stop]
            if rows is None:
                target[:] = column
            else:  # "clip": rows are in range, and take then writes straight into the target (5x compress)
                np.take(column, rows, out=target, mode="clip")
        self.n_spans = stop

    def _shown(self, name: str, code: int, dup_keys: Callable[[int], str] | None = None) -> Any:
        """Return an item value as a message shows it, from its code (-1: null; dup_key: provisional by default)."""
        if code < 0:
            return None
        if name == "language":
            return self.languages.values[code]
        if name == "third_pass":
            return bool(code)
        if name == "record_order":
            return code
        return (dup_keys or (self.metas[name] if name in self.metas else self.dup_keys).value)(code)

    def _differ(self, name: str, item_id: str, here: Any, there: Any, row: int, first_row: int) -> str:
        """Return "item 'x' has language 'de' here, but 'en' at row 3: ..." for an item's value two rows differ
        on (``row`` here, ``first_row`` the item's first)."""
        at = self.where(first_row, self.owner(row))
        if name == "language":
            return f"item '{item_id}' has language '{here}' here, but '{there}' at {at}: an item has one language"
        return (
            f"item '{item_id}' has {name} {describe_json(here)} here, but {describe_json(there)} at {at}: {name} "
            "belongs to the item, the same on each of its rows"
        )

    # -- the table -------------------------------------------------------------------------------------
    def table(self, display: str) -> SpanTable:
        """Merge the items, check what needs every row, raise the problems, and assemble the arrays."""
        problems = self.problems
        if self.rows == 0 and not problems:
            problems.add(f"{display}: the record is empty (no rows)")
        ids, item_of = self.ids.merge()  # each provisional item's item
        items = self._merge_items(ids, item_of)
        span = {name: array[: self.n_spans] for name, array in self.span.items()}
        _renumber(span["item"], item_of)
        present = np.zeros((len(ids), len(self.labellings)), dtype=bool)
        apart = False  # an item's rows apart (brought together below), checked a slice at a time as present is set
        for first in range(0, self.n_spans, BATCH_ROWS):
            item = span["item"][max(first - 1, 0) : first + BATCH_ROWS]  # from the slice before's last row
            apart = apart or bool((item[1:] < item[:-1]).any())
            present[span["item"][first : first + BATCH_ROWS], span["labelling"][first : first + BATCH_ROWS]] = True
        aside = self.aside_present
        for code in range(aside.shape[1]):  # the set-aside spans' labellings are present where they were
            present[item_of[np.flatnonzero(aside[: len(item_of), code])], code] = True
        if self.markers:
            self._check_markers(present, item_of, ids)
        text = self._text(item_of, ids, span) if self.texts else None
        if self.hidden:
            problems.add(
                f"{display}: {self.hidden:,} more rows with problems, not listed; fix the problems above and run again"
            )
        problems.raise_if_any()

        if apart:
            order = np.argsort(span["item"], kind="stable")
            span = {name: array[order] for name, array in span.items()}
        languages, language = sorted_codes(np.array(self.languages.values, dtype=object), items["language"])
        type_names, renumbered = sorted_codes(np.array(self.types.values, dtype=object), np.arange(len(self.types)))
        _renumber(span["type"], renumbered)
        unheld_spans = unheld_ends = None
        if self.unheld:
            unheld_spans = np.zeros((len(self.labellings), len(type_names)), dtype=np.int64)
            counted = self.aside_spans
            unheld_spans[: counted.shape[0], renumbered[: counted.shape[1]]] = counted
            unheld_ends = np.zeros(len(ids), dtype=np.int64)
            held = min(len(item_of), len(self.aside_end))
            np.maximum.at(unheld_ends, item_of[:held], self.aside_end[:held, 0])
        meta: dict[str, np.ndarray] = {}
        if "dup_key" in self.item_columns:
            meta[self.duplicate_key] = np.array([*items["dup_key_values"], None], dtype=object)[items["dup_key"]]
        if "third_pass" in self.item_columns:
            meta["third_pass"] = np.array([False, True, None], dtype=object)[items["third_pass"]]
        for name in self.metas:
            key = name[len(META_PREFIX) :]
            if key in meta:  # the duplicate key or third_pass, given twice
                raise InputError(
                    f"{display}: the columns '{name}' and '{'dup_key' if key == self.duplicate_key else key}' both "
                    f"give the items' meta '{key}': keep one"
                )
            meta[key] = np.array([*items[f"{name}_values"], None], dtype=object)[items[name]]
        record_order = items["record_order"] if "record_order" in self.item_columns else None
        return SpanTable(
            ids=np.array(ids, dtype=object),
            language=language,
            languages=tuple(languages.tolist()),
            names=tuple(self.labellings.values),
            present=present,
            item=span["item"],
            labelling=span["labelling"],
            start=span["start"],
            end=span["end"],
            type=span["type"],
            type_names=type_names,
            meta=meta,
            text=text,
            record_order=record_order,
            unheld=tuple(name for name in self.labellings.values if name in self.unheld),
            unheld_spans=unheld_spans,
            unheld_ends=unheld_ends,
        )

    def _text(self, item_of: np.ndarray, ids: list[str], span: dict[str, np.ndarray]) -> np.ndarray:
        """Return each item's text (None where no row gives one); report an item given two texts, and a span
        that ends beyond its item's text."""
        text = np.full(len(ids), None, dtype=object)
        where = np.full(len(ids), -1, dtype=np.int64)
        found: list[tuple[int, str]] = []
        for items, values, rows in self.texts:
            for code, value, row in zip(item_of[items].tolist(), values.to_pylist(), rows.tolist()):
                if where[code] < 0:
                    text[code], where[code] = value, row
                elif value != text[code] and len(found) < MAX_PROBLEMS:
                    at = self.where(int(where[code]), self.owner(row))
                    found.append((row, f"item '{ids[code]}' has another text here than at {at}: an item has one text"))
        length = np.array([-1 if value is None else len(value) for value in text.tolist()], dtype=np.int64)
        beyond = np.flatnonzero((length[span["item"]] >= 0) & (span["end"] > length[span["item"]]))
        for k in beyond[:MAX_PROBLEMS]:
            code = int(span["item"][k])
            found.append(
                (
                    int(where[code]),
                    f"item '{ids[code]}': a span ends at {int(span['end'][k])}, beyond "
                    f"the text ({int(length[code])} characters)",
                )
            )
        self.hidden += max(len(beyond) - MAX_PROBLEMS, 0)
        self._report(found)
        return text

    def _merge_items(self, ids: list[str], item_of: np.ndarray) -> dict[str, Any]:
        """Return each item's language, third_pass and dup_key codes (its first row's); report the ids that
        cannot be used, and an item whose rows in another batch disagree with its first row."""
        found: list[tuple[int, str]] = []
        provisional = {
            name: np.concatenate(parts) if parts else np.zeros(0, np.int64) for name, parts in self.item.items()
        }
        dup_key_values, dup_key_of = self.dup_keys.merge()
        if len(dup_key_of):  # provisional dup_key codes to final ones
            provisional["dup_key"] = np.where(provisional["dup_key"] >= 0, dup_key_of[provisional["dup_key"]], -1)
        first = np.full(len(ids), len(item_of), dtype=np.int64)  # each item's first provisional item
        np.minimum.at(first, item_of, np.arange(len(item_of)))
        first_row = provisional["first_row"]
        items: dict[str, Any] = {"dup_key_values": dup_key_values}
        strings = {name: dup_key_values for name in self.ITEM_VALUES}
        for name, keys in self.metas.items():  # provisional codes to final ones, as dup_key's
            strings[name], code_of = keys.merge()
            if len(code_of):
                provisional[name] = np.where(provisional[name] >= 0, code_of[provisional[name]], -1)
            items[f"{name}_values"] = strings[name]
        for name in (*self.ITEM_VALUES, *self.metas):
            values = provisional[name]
            items[name] = values[first]
            expected = items[name][item_of]
            differ = np.flatnonzero(values != expected)
            if name == "language":  # null languages are reported as such
                differ = differ[(values[differ] >= 0) & (expected[differ] >= 0)]
            for k in differ[:MAX_PROBLEMS]:
                found.append(
                    (
                        int(first_row[k]),
                        self._differ(
                            name,
                            ids[item_of[k]],
                            self._shown(name, int(values[k]), strings[name].__getitem__),
                            self._shown(name, int(expected[k]), strings[name].__getitem__),
                            int(first_row[k]),
                            int(first_row[first[item_of[k]]]),
                        ),
                    )
                )
            self.hidden += max(len(differ) - MAX_PROBLEMS, 0)
        for code in _suspects(ids, 0):
            if why := _value_problem(ids[code], "'id'"):
                found.append((int(first_row[first[code]]), why))
        self._report(found)
        return items

    def _check_markers(self, present: np.ndarray, item_of: np.ndarray, ids: list[str]) -> None:
        """Report a marker row (present, no spans) of a labelling that other rows give spans; mark the rest.

        Batch by batch, every batch checked before any is marked (two marker rows of one labelling and item are
        not a conflict): concatenated, a million items' markers were 5 million rows of three int64 arrays,
        fresh pages for one pass (0.3 s of system time)."""
        found: list[tuple[int, str]] = []
        conflicts = 0
        for item, labelling, row in self.markers:
            _renumber(item, item_of)  # the batch's own array (``_batch`` gathered it)
            both = np.flatnonzero(present[item, labelling])
            conflicts += len(both)
            found.extend(
                (
                    int(row[k]),
                    f"labelling '{self.labellings.values[labelling[k]]}' of item '{ids[item[k]]}' is "
                    "marked present with no spans (null start, end and type), but other rows give it spans; drop "
                    "this row",
                )
                for k in both[: MAX_PROBLEMS - len(found)]
            )
        self._report(found)
        self.hidden += max(conflicts - MAX_PROBLEMS, 0)
        for item, labelling, _ in self.markers:
            present[item, labelling] = True


def _grown(array: np.ndarray, shape: tuple[int, int], exact: bool = False) -> np.ndarray:
    """Return ``array`` with at least ``shape`` (zeros added; rows doubled unless ``exact``), or itself."""
    if array.shape[0] >= shape[0] and array.shape[1] >= shape[1]:
        return array
    rows = shape[0] if exact or array.shape[0] >= shape[0] else max(shape[0], 2 * array.shape[0])
    grown = np.zeros((max(rows, array.shape[0]), max(shape[1], array.shape[1])), dtype=array.dtype)
    grown[: array.shape[0], : array.shape[1]] = array
    return grown


def _renumber(codes: np.ndarray, mapping: np.ndarray) -> None:
    """Replace each code by ``mapping[code]`` in place, a slice at a time (no second array of that size)."""
    for first in range(0, len(codes), BATCH_ROWS):
        codes[first : first + BATCH_ROWS] = mapping[codes[first : first + BATCH_ROWS]]


def _suspects(values: list[str], first: int) -> list[int]:
    """Return the positions from ``first`` on of values that may be refused: empty, blank, unprintable or reserved.

    One cheap test per value (a million ids are a million calls); ``_value_problem`` words the few it finds.
    """
    return [
        first + k
        for k, value in enumerate(values[first:])
        if not value or value.isspace() or not value.isprintable() or value == POOLED
    ]


def _any(masks: list[np.ndarray]) -> np.ndarray:
    """Return the rows where any mask holds (a new array unless there is one mask; no stacking, as reduce does)."""
    result = masks[0] if len(masks) == 1 else masks[0] | masks[1]
    for mask in masks[2:]:
        result |= mask
    return result


def _every(masks: list[np.ndarray]) -> np.ndarray | None:
    """Return the rows where every mask holds (a new array unless there is one mask); None for no mask."""
    if not masks:
        return None
    result = masks[0] if len(masks) == 1 else masks[0] & masks[1]
    for mask in masks[2:]:
        result &= mask
    return result


def _first_line(error: Exception) -> str:
    """Return an error's message up to its first line break (pyarrow's end in a newline, some span several)."""
    return str(error).strip().split("\n")[0]


def _raw(columns: dict[str, Any], row: int) -> list[Any]:
    """Return a row's [start, end, type] as written (a span in the JSON Lines record's form, for its message)."""
    return [columns[name][row].as_py() for name in ("start", "end", "type")]


def _value_problem(value: str, what: str) -> str | None:
    """Return why an id, language or labelling name cannot be used (empty, unprintable, reserved), or None."""
    if not value.strip():
        return f"{what} is empty" if value == "" else f"{what} is only whitespace"
    if why := name_problem(value):
        return f"{what} {why}"
    if what == "'language'" and value == POOLED:
        return f"language '{POOLED}' is reserved for the pooled rows of the results; rename it"
    return None
