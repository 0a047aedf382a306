"""Hugging Face datasets with tokens and IOB tags: a ``save_to_disk`` folder, or a Parquet or Arrow file.

Each row is an item (a sentence): its tokens joined by single spaces are the text, and each configured tag
column is a labelling, decoded the conlleval way (``adapters/iob.py``, as the conll adapter does). Tags stored
as ``ClassLabel`` integers are named from the dataset's features: ``dataset_info.json`` of a saved folder, or
the ``huggingface`` key of the Arrow/Parquet schema metadata that ``datasets`` writes. Read with pyarrow alone,
so the ``datasets`` package is not needed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters import iob
from refsens_report.adapters.common import (
    InputPath,
    check_label,
    count,
    labelling_entries,
    read_dup_key,
    read_labels,
    read_language,
    read_path,
    unique_paths,
    with_text_dup_keys,
)
from refsens_report.adapters.parquet import invalid_utf8
from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.files import path_problem, read_bytes
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span, check_unique_ids

SEQUENCE_TYPES = ("Sequence", "List", "LargeList")  # datasets 4 writes "List" where 2 and 3 wrote "Sequence"


@dataclass(frozen=True)
class Labelling:
    """One labelling: a tag column of a dataset, and the scheme its tags follow."""

    name: str
    column: str
    source: InputPath
    scheme: str


@dataclass(frozen=True)
class HfOptions:
    """The checked `[record]` keys of a Hugging Face dataset record."""

    source: InputPath
    split: str | None
    language: str
    tokens_column: str
    id_column: str | None
    labellings: tuple[Labelling, ...]
    tag_names: tuple[str, ...]
    labels: frozenset[str] | None
    text_dup_keys: bool = False


def read_options(reader: OptionReader, base_dir: Path) -> HfOptions | None:
    """Read `[record]` for format = "hf-datasets"; bad keys are reported through ``reader``."""
    source = read_path(reader, base_dir, "path", kind="any")
    split = reader.string("split")
    language = read_language(reader)
    tokens_column = reader.string("tokens_column", default="tokens") or "tokens"
    id_column = reader.string("id_column")
    scheme = reader.choice("scheme", iob.SCHEME_CHOICES, "auto")
    tag_names = reader.names("tag_names")
    labels = read_labels(reader)
    _, entries = labelling_entries(
        reader,
        "column",
        'a table mapping each labelling name to its tag column, e.g. { gold = "ner_tags" }',
        "a column name or a table with column",
        got=shown,
    )
    labellings: list[Labelling] = []
    for name, entry, entry_reader in entries:
        column = entry_reader.string("column", required=True)
        own = read_path(entry_reader, base_dir, "path", kind="any", required=False)
        own_failed = entry.get("path") is not None and own is None
        entry_scheme = entry_reader.choice("scheme", iob.SCHEME_CHOICES, scheme)
        entry_reader.finish()
        if column is not None and not own_failed and (own or source) is not None:
            labellings.append(Labelling(name, column, own or source, entry_scheme))  # type: ignore[arg-type]
    text_dup_keys = read_dup_key(reader)
    if source is None:
        return None
    return HfOptions(
        source, split, language, tokens_column, id_column, tuple(labellings), tag_names, labels, text_dup_keys
    )


# ----------------------------------------------------------------------------------------------------------
# reading a dataset: its table and its features


@dataclass
class Dataset:
    """One dataset's table (pyarrow), its features (the ``datasets`` JSON), and how messages name it."""

    display: str
    table: Any
    features: dict[str, Any] | None
    split: str | None = None


def _json_file(path: Path, display: str, problems: ProblemList) -> Any:
    try:
        return json.loads(read_bytes(path).decode("utf-8-sig"))
    except OSError as error:
        problems.add(f"{display}: cannot read the file ({error.strerror})")
    except UnicodeDecodeError as error:
        problems.add(f"{display}: not valid UTF-8 (byte {error.start + 1})")
    except json.JSONDecodeError as error:
        problems.add(f"{display}:{error.lineno}: invalid JSON ({error.msg} at column {error.colno})")
    except RecursionError:
        problems.add(f"{display}: invalid JSON (nested too deeply)")
    return None


def _metadata_features(schema: Any, display: str, problems: ProblemList) -> dict[str, Any] | None:
    """Return the features ``datasets`` stores in the schema metadata (key ``huggingface``), or None."""
    raw = (schema.metadata or {}).get(b"huggingface")
    if raw is None:
        return None
    try:
        info = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        problems.add(f"{display}: the schema's 'huggingface' metadata is not JSON")
        return None
    except RecursionError:
        problems.add(f"{display}: the schema's 'huggingface' metadata is not JSON (nested too deeply)")
        return None
    info = info.get("info") if isinstance(info, dict) else None
    features = info.get("features") if isinstance(info, dict) else None
    return features if isinstance(features, dict) else None


def _arrow_table(path: Path, display: str, problems: ProblemList) -> Any:
    """Read an Arrow file (the IPC stream format datasets writes, or the file format) or a Parquet file."""
    import pyarrow as pa  # imported here: only a dataset record needs it
    import pyarrow.parquet as pq

    if problem := path_problem(path, "file"):
        problems.add(f"{display}: {'not found' if problem == 'not found' else problem}")
        return None
    try:
        data = read_bytes(path)
    except OSError as error:
        problems.add(f"{display}: cannot read the file ({error.strerror})")
        return None
    buffer = pa.BufferReader(data)
    if data[:4] == b"PAR1":
        try:
            return pq.read_table(buffer)
        except (pa.ArrowException, OSError, ValueError) as error:
            problems.add(f"{display}: not a readable Parquet file ({error})")
            return None
    readers = (pa.ipc.open_stream, pa.ipc.open_file)
    for open_reader in readers:
        try:
            return open_reader(pa.BufferReader(data)).read_all()
        except (pa.ArrowException, OSError, ValueError):
            continue
    problems.add(f"{display}: not an Arrow or Parquet file (datasets' save_to_disk writes Arrow, to_parquet Parquet)")
    return None


def open_dataset(source: InputPath, split: str | None, problems: ProblemList) -> Dataset | None:
    """Return the dataset at a path: a save_to_disk folder (a DatasetDict's split with ``split``) or a file."""
    import pyarrow as pa

    display = source.display.rstrip("/")
    if not source.path.is_dir():
        if split is not None:
            problems.add(f"{display}: record.split is set, but this is a file, not a DatasetDict folder")
            return None
        table = _arrow_table(source.path, display, problems)
        if table is None:
            return None
        return Dataset(display, table, _metadata_features(table.schema, display, problems))
    folder = source.path
    dict_file = folder / "dataset_dict.json"
    if dict_file.exists():
        splits = _json_file(dict_file, f"{display}/dataset_dict.json", problems)
        names = splits.get("splits") if isinstance(splits, dict) else None
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            if splits is not None:
                problems.add(f"{display}/dataset_dict.json: 'splits' is missing or not a list of names")
            return None
        if split is None and len(names) != 1:
            problems.add(f"{display}: a DatasetDict with the splits {', '.join(names)}: set record.split to one")
            return None
        split = split or names[0]
        if split not in names:
            problems.add(f"{display}: no split '{split}' (record.split); the splits are {', '.join(names)}")
            return None
        folder, display = folder / split, f"{display}/{split}"
    elif split is not None:
        problems.add(f"{display}: record.split is set, but the folder has no dataset_dict.json (not a DatasetDict)")
        return None
    if not (folder / "state.json").exists():
        problems.add(f"{display}: no state.json: not a folder written by datasets' save_to_disk")
        return None
    state = _json_file(folder / "state.json", f"{display}/state.json", problems)
    if state is None:
        return None
    files = state.get("_data_files") if isinstance(state, dict) else None
    if (
        not isinstance(files, list)
        or not files
        or not all(isinstance(entry, dict) and isinstance(entry.get("filename"), str) for entry in files)
    ):
        problems.add(f"{display}/state.json: '_data_files' must list the Arrow files ({{\"filename\": ...}})")
        return None
    tables = []
    for entry in files:
        table = _arrow_table(folder / entry["filename"], f"{display}/{entry['filename']}", problems)
        if table is None:
            return None
        tables.append(table)
    try:
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    except pa.ArrowException as error:
        problems.add(f"{display}: its Arrow files do not share one schema ({error})")
        return None
    features = None
    if (folder / "dataset_info.json").exists():
        info = _json_file(folder / "dataset_info.json", f"{display}/dataset_info.json", problems)
        if isinstance(info, dict) and isinstance(info.get("features"), dict):
            features = info["features"]
    features = features or _metadata_features(table.schema, display, problems)
    return Dataset(display, table, features, split if dict_file.exists() else state.get("_split"))


def class_label_names(feature: Any) -> list[str] | None:
    """Return the ClassLabel names of a feature, looking inside Sequence/List features; None when it has none."""
    while True:
        if isinstance(feature, list) and len(feature) == 1:  # an old way of writing a sequence
            feature = feature[0]
        elif isinstance(feature, dict) and feature.get("_type") in SEQUENCE_TYPES:
            feature = feature.get("feature")
        else:
            break
    if isinstance(feature, dict) and feature.get("_type") == "ClassLabel":
        names = feature.get("names")
        if isinstance(names, list) and all(isinstance(name, str) for name in names):
            return names
    return None


# ----------------------------------------------------------------------------------------------------------
# rows to items


@dataclass
class Tally:
    """What decoding found, per labelling, for the record's notes."""

    reports: dict[str, iob.SchemeReport] = field(default_factory=dict)
    name_sources: dict[str, str] = field(default_factory=dict)  # labelling -> where its tag names came from
    zero_width: int = 0


def _column(dataset: Dataset, column: str, what: str, problems: ProblemList) -> list[Any] | None:
    if column not in dataset.table.column_names:
        problems.add(
            f"{dataset.display}: no column '{column}' ({what}); its columns: {', '.join(dataset.table.column_names)}"
        )
        return None
    return _values(dataset, column, problems)


def _values(dataset: Dataset, column: str, problems: ProblemList) -> list[Any] | None:
    """Return a column as Python values; a string that is not UTF-8 is reported at its row (None)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = dataset.table.column(column).combine_chunks()
    try:
        return array.to_pylist()
    except UnicodeDecodeError:
        pass
    rows = None  # each flattened value's row, through lists of lists
    while pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or pa.types.is_fixed_size_list(array.type):
        parents = pc.list_parent_indices(array).to_numpy()
        rows = parents if rows is None else rows[parents]
        array = pc.list_flatten(array)
    bad = invalid_utf8(array)
    row = "" if bad is None else f" row {bad if rows is None else int(rows[bad])},"
    problems.add(f"{dataset.display}:{row} column '{column}' holds text that is not valid UTF-8")
    return None


def _where(dataset: Dataset, row: int, ids: list[str]) -> str:
    """Return 'data.parquet: row 12 (id 'doc-7')'; rows count from 0, as the dataset's indices do."""
    named = f" (id '{ids[row]}')" if ids[row] != str(row) else ""
    return f"{dataset.display}: row {row}{named}"


def _tokens(dataset: Dataset, options: HfOptions, problems: ProblemList) -> tuple[list[list[str]], list[str]] | None:
    """Return each row's tokens and id; report rows whose tokens are not a list of strings."""
    tokens = _column(dataset, options.tokens_column, "record.tokens_column", problems)
    if tokens is None:
        return None
    if options.id_column is not None:
        raw_ids = _column(dataset, options.id_column, "record.id_column", problems)
        if raw_ids is None:
            return None
    else:
        has_ids = "id" in dataset.table.column_names
        raw_ids = _values(dataset, "id", problems) if has_ids else list(range(len(tokens)))
        if raw_ids is None:
            return None
    ids = [str(value) for value in raw_ids]
    before = len(problems)
    for row, (row_tokens, item_id) in enumerate(zip(tokens, ids)):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        if raw_ids[row] is None or not item_id.strip():
            problems.add(f"{dataset.display}: row {row}: the id is empty")
        elif why := name_problem(item_id):
            problems.add(f"{dataset.display}: row {row}: the id {why}")
        if not isinstance(row_tokens, list) or not all(isinstance(token, str) for token in row_tokens):
            problems.add(f"{_where(dataset, row, ids)}: '{options.tokens_column}' must be a list of strings")
    return (tokens, ids) if len(problems) == before else None


def _tags(
    dataset: Dataset,
    labelling: Labelling,
    options: HfOptions,
    tokens: list[list[str]],
    ids: list[str],
    problems: ProblemList,
    tally: Tally,
) -> list[list[iob.Tag]] | None:
    """Return each row's parsed tags for one labelling; report bad tags, lengths and missing names."""
    values = _column(dataset, labelling.column, f"record.labellings.{labelling.name}", problems)
    if values is None:
        return None
    feature = (dataset.features or {}).get(labelling.column)
    names = class_label_names(feature)
    where_names = "the dataset's features (ClassLabel)"
    if names is not None and options.tag_names and list(options.tag_names) != names:
        problems.add(
            f"{dataset.display}: record.tag_names differ from the ClassLabel names of '{labelling.column}' "
            f"({', '.join(names)}); remove tag_names"
        )
        return None
    if names is None and options.tag_names:
        names, where_names = list(options.tag_names), "record.tag_names"
    before = len(problems)
    parsed_rows: list[list[iob.Tag]] = []
    cache: dict[Any, iob.Tag | None] = {}
    for row, row_tags in enumerate(values):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        where = f"{_where(dataset, row, ids)}, '{labelling.column}'"
        if not isinstance(row_tags, list):
            problems.add(f"{where}: not a list of tags")
            continue
        if len(row_tags) != len(tokens[row]):
            problems.add(f"{where}: {count(len(row_tags), 'tag')} for {count(len(tokens[row]), 'token')}")
            continue
        row_parsed: list[iob.Tag] = []
        for position, value in enumerate(row_tags):
            if isinstance(value, int) and not isinstance(value, bool):
                if names is None:
                    problems.add(
                        f"{dataset.display}: '{labelling.column}' holds integers but the dataset's features give "
                        'no ClassLabel names for it (set record.tag_names = ["O", "B-PER", ...] in id order)'
                    )
                    return None
                if not 0 <= value < len(names):
                    problems.add(
                        f"{where}, token {position}: tag {value} is not one of the {len(names)} names of {where_names}"
                    )
                    break
                raw = names[value]
            elif isinstance(value, str):
                raw = value
            else:
                problems.add(f"{where}, token {position}: tag {shown(value)} is neither a name nor a ClassLabel id")
                break
            if raw not in cache:
                cache[raw] = iob.parse_tag(raw)
            tag = cache[raw]
            if tag is None:
                problems.add(f"{where}, token {position}: tag '{raw}' is not O or B-/I-/E-/S-TYPE")
                break
            row_parsed.append(tag)
        parsed_rows.append(row_parsed)
    if len(problems) > before:
        return None
    tally.name_sources[labelling.name] = where_names if names is not None else "the strings in the column"
    return parsed_rows


def _decode(
    dataset: Dataset,
    labelling: Labelling,
    rows: list[list[iob.Tag]],
    ids: list[str],
    labels: frozenset[str] | None,
    problems: ProblemList,
    tally: Tally,
) -> list[list[iob.TokenSpan]] | None:
    """Decode each row's tags the conlleval way; count tags invalid under the scheme; check span types."""
    detected = labelling.scheme == "auto"
    scheme = iob.detect_scheme(rows) if detected else labelling.scheme
    report = iob.SchemeReport(scheme=scheme, detected=detected)
    before = len(problems)
    foreign = iob.foreign_prefixes(scheme)
    decoded: list[list[iob.TokenSpan]] = []
    for row, tags in enumerate(rows):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        where = f"{_where(dataset, row, ids)}, '{labelling.column}'"
        bad = next((p for p, tag in enumerate(tags) if tag[0] in foreign), None) if not detected else None
        if bad is not None:
            problems.add(
                f"{where}, token {bad}: '{tags[bad][0]}-{tags[bad][1]}' belongs to BIOES, but the scheme "
                f'is \'{scheme}\' (set scheme = "bioes" or "auto")'
            )
            continue
        for position in iob.invalid_positions(tags, scheme):
            if not report.repaired:
                report.first_repair = f"{_where(dataset, row, ids)}, token {position}"
            report.repaired += 1
        spans = iob.decode(tags)
        for start, _, label in spans:
            if problem := check_label(label, labels):
                problems.add(f"{where}, token {start}: {problem}")
        decoded.append(spans)
    tally.reports[labelling.name] = report
    return decoded if len(problems) == before else None


def load(options: HfOptions, duplicate_key: str) -> Record:
    """Read the dataset(s); one item per row, one labelling per configured tag column."""
    problems = ProblemList()
    tally = Tally()
    base = open_dataset(options.source, options.split, problems)
    problems.raise_if_any()
    assert base is not None
    read = _tokens(base, options, problems)
    problems.raise_if_any()
    assert read is not None
    tokens, ids = read
    others: dict[Path, Dataset | None] = {options.source.path: base}
    spans_by_labelling: dict[str, list[list[iob.TokenSpan]]] = {}
    for labelling in options.labellings:
        if labelling.source.path not in others:
            other = open_dataset(labelling.source, options.split, problems)
            if other is not None and not _same_tokens(base, other, options, tokens, problems):
                other = None
            others[labelling.source.path] = other
        dataset = others[labelling.source.path]
        if dataset is None:
            continue
        rows = _tags(dataset, labelling, options, tokens, ids, problems, tally)
        if rows is None:
            continue
        decoded = _decode(dataset, labelling, rows, ids, options.labels, problems, tally)
        if decoded is not None:
            spans_by_labelling[labelling.name] = decoded
    if not tokens and not problems:
        problems.add(f"{base.display}: the dataset has no rows")
    problems.raise_if_any()
    items: list[Item] = []
    meta_split = {"split": base.split} if base.split else {}
    for row, row_tokens in enumerate(tokens):
        starts, position = [], 0
        for token in row_tokens:
            starts.append(position)
            position += len(token) + 1
        labellings: dict[str, tuple[Span, ...]] = {}
        for name, rows in spans_by_labelling.items():
            spans: list[Span] = []
            for start, end, label in rows[row]:
                begin, finish = starts[start], starts[end - 1] + len(row_tokens[end - 1])
                if finish <= begin:
                    tally.zero_width += 1  # a chunk of empty tokens: no characters to mark
                    continue
                spans.append((begin, finish, label))
            labellings[name] = tuple(spans)
        text = " ".join(row_tokens)
        items.append(Item(ids[row], options.language, labellings, text=text, meta={"row": row, **meta_split}))
    check_unique_ids(((_where(base, row, ids), item) for row, item in enumerate(items)), problems)
    problems.raise_if_any()
    items_tuple = tuple(items)
    if options.text_dup_keys:
        items_tuple = with_text_dup_keys(items_tuple, duplicate_key)
    split = f" (split {base.split})" if base.split else ""
    notes = [f"hf-datasets: {count(len(items_tuple), 'row')} of {options.source.name}{split}"]
    for labelling in options.labellings:
        report = tally.reports[labelling.name]
        dataset = others[labelling.source.path]
        assert dataset is not None
        notes.append(
            f"hf-datasets: labelling '{labelling.name}' from column '{labelling.column}' of {labelling.source.name}; "
            f"tag names from {tally.name_sources[labelling.name]}; {report.describe()}"
        )
    if tally.zero_width:
        notes.append(f"hf-datasets: {count(tally.zero_width, 'span')} over empty tokens only skipped")
    sources = unique_paths([options.source, *(labelling.source for labelling in options.labellings)])
    return Record(items=items_tuple, sources=sources, notes=tuple(notes))


def _same_tokens(
    base: Dataset, other: Dataset, options: HfOptions, tokens: list[list[str]], problems: ProblemList
) -> bool:
    """Check that another dataset holds the same tokens row by row; report the first row where they part."""
    other_tokens = _column(other, options.tokens_column, "record.tokens_column", problems)
    if other_tokens is None:
        return False
    if len(other_tokens) != len(tokens):
        problems.add(
            f"{other.display}: {count(len(other_tokens), 'row')}, but {base.display} has {len(tokens):,}: "
            "every labelling must cover the same rows"
        )
        return False
    for row, (mine, theirs) in enumerate(zip(tokens, other_tokens)):
        if mine != theirs:
            problems.add(
                f"{other.display}: row {row} has other tokens than {base.display} "
                f"({shown(theirs, 60)} here, {shown(mine, 60)} there)"
            )
            return False
    return True
