"""The results contract (docs/method.md section 5): the tidy rows, results.csv and results.json."""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson

from refsens_report import __version__, formatting
from refsens_report.errors import InputError

K = TypeVar("K")
V = TypeVar("V")

# a listing file's text: whole, or in pieces (a list, or made as they are read) written one after another, so
# that it is never joined in memory
FileText = str | Iterable[str]

# Schema 2 appended the ``type`` column (the span type of per-type rows, analysis ``by_type``; empty elsewhere).
# Schema 4 appended ``n_clusters``: the clusters the bootstrap resampled beside ``n_items`` (equal to it when
# every item is its own cluster, without `[record] cluster`).
SCHEMA = "refsens-report/results@4"
COLUMNS = (
    "analysis",
    "statistic",
    "rule",
    "language",
    "output",
    "output_2",
    "reference",
    "reference_2",
    "subset",
    "policy",
    "estimate",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "n_items",
    "type",
    "n_clusters",
)
COUNT_COLUMNS = ("n_items", "n_clusters")
# the columns that say what a row is about (all but the numbers): no two rows of one results file share them
LABEL_COLUMNS = tuple(
    column for column in COLUMNS if column not in ("estimate", "ci_low", "ci_high", "p_value", "p_holm", *COUNT_COLUMNS)
)
NUMBER_COLUMNS = ("estimate", "ci_low", "ci_high", "p_value", "p_holm")


# a row before its values: every contract column, in order (``make_row`` copies it)
_EMPTY_ROW: dict[str, Any] = {
    **{column: "" for column in COLUMNS},
    **{column: None for column in NUMBER_COLUMNS},
    "n_items": 0,
    "n_clusters": None,
}
_KNOWN_COLUMNS = frozenset(COLUMNS)


def make_row(**values: Any) -> dict[str, Any]:
    """Return a row with every contract column: empty text, None for undefined numbers (NaN included)."""
    if not _KNOWN_COLUMNS.issuperset(values):
        raise KeyError(f"not a results column: {sorted(set(values) - _KNOWN_COLUMNS)}")
    row = {**_EMPTY_ROW, **values}
    for column in NUMBER_COLUMNS:
        value = row[column]
        if value is not None:
            row[column] = None if isinstance(value, float) and math.isnan(value) else float(value)
    row["n_items"] = int(row["n_items"])
    # without a cluster key every item is its own cluster: a row not told otherwise counts its items
    row["n_clusters"] = row["n_items"] if row["n_clusters"] is None else int(row["n_clusters"])
    return row


def sha256_file(path: Path) -> str:
    """Return the SHA-256 hex digest of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:  # a local Path, or a URL's (files.remote_path)
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnUse(Mapping[K, V]):
    """A mapping made by ``make`` when it is first read; ``make``, and the objects it holds, are let go then."""

    def __init__(self, make: Callable[[], dict[K, V]]):
        self._make: Callable[[], dict[K, V]] | None = make
        self._made: dict[K, V] = {}

    def _mapping(self) -> dict[K, V]:
        if self._make is not None:
            self._made, self._make = self._make(), None
        return self._made

    def __getitem__(self, key: K) -> V:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())


class FilesOnUse(OnUse[str, str]):
    """The files the analyses list beside results.json (name -> text), rendered when first read.

    Only a build writes them (``write_files``); ``refsens-report audit`` writes results.json and results.csv
    alone, so it never pays for them (the disagreement and gold-error listings: about 0.2 s of the 25,000-item
    paper-shape audit, 13 MB of text). ``make`` yields them a file at a time (``Analysis.files``). ``each``
    passes them on as they are made, so a build holds one file's text at a time (at a million items of
    bench/generate_scale.py's shape the listings are about 1 GB of text); read as a mapping, they are all made
    and kept. Either way ``make``, and the audit's objects it holds, are let go once it has run: the files can
    be read once by ``each``, or as a mapping as often as wanted.
    """

    def __init__(self, make: Callable[[], Iterable[tuple[str, FileText]]]):
        super().__init__(make)  # type: ignore[arg-type]  # it yields files: ``_mapping`` joins them
        self._written = False

    def _mapping(self) -> dict[str, str]:
        if self._written:
            raise RuntimeError("the listing files were written and let go (FilesOnUse.each): read them from the folder")
        if self._make is not None:
            self._made, self._make = files_text(self._make()), None
        return self._made

    def each(self) -> Iterator[tuple[str, FileText]]:
        """Yield (name, text) a file at a time, each made when asked for and not kept."""
        if self._make is None:  # read as a mapping already (or written: refused)
            yield from self._mapping().items()
            return
        make, self._make, self._written = self._make, None, True
        yield from make()


def joined(text: FileText) -> str:
    """Return a file's text (``FileText``) as one string."""
    return text if isinstance(text, str) else "".join(text)


def files_text(files: Iterable[tuple[str, FileText]]) -> dict[str, str]:
    """Return files (name, ``FileText``) as a mapping of name to the whole text (``Analysis.files``, read at once)."""
    return {name: joined(text) for name, text in files}


@dataclass
class AuditResults:
    """Everything the audit computed: the rows, and what the report says beside them."""

    dataset: dict[str, str]
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    seed: int
    resamples: int
    confidence: float
    inputs: dict[str, str]
    record: dict[str, Any] = field(default_factory=dict)
    config_toml: str | None = None  # the config file's text as written, when the audit read one
    summaries: dict[str, Any] = field(default_factory=dict)  # what analyses say beside the rows, by analysis key
    applicability: dict[str, str | None] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict, compare=False)  # not written: varies by run
    # files the build writes beside results.json (name -> text: the disagreement listings); not in results.json.
    # The audit gives a FilesOnUse: rendered when first read
    files: Mapping[str, str] = field(default_factory=dict, compare=False)
    # not written: where each input is on this machine (the build's timestamp falls back to their dates)
    input_files: dict[str, Path] = field(default_factory=dict, compare=False)

    def to_json_dict(self) -> dict[str, Any]:
        """Return results.json's content (docs/results.md)."""
        written = {} if self.config_toml is None else {"config_toml": self.config_toml}
        return {
            "schema": SCHEMA,
            "dataset": self.dataset,
            "tool_version": __version__,
            "config": self.config,
            **written,
            "seed": self.seed,
            "resamples": self.resamples,
            "confidence": self.confidence,
            "inputs": self.inputs,
            "columns": list(COLUMNS),
            "rows": self.rows,
            "record": self.record,
            **self.summaries,
            "applicability": self.applicability,
            "statistics": statistic_kinds(self.rows),
        }


def statistic_kinds(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Return how each statistic in the rows prints, by analysis then statistic (their analyses' declarations),
    so a reader of results.json (and the report of a later version) formats them as this version did."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        kinds = found.setdefault(row["analysis"], {})
        if row["statistic"] not in kinds:
            kinds[row["statistic"]] = formatting.kind_of(row["analysis"], row["statistic"]).as_json()
    return found


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def results_csv(rows: list[dict[str, Any]]) -> str:
    """Return results.csv's text: the contract's columns in order, empty for undefined."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_csv_value(row[column]) for column in COLUMNS])
    return buffer.getvalue()


def results_json(results: AuditResults) -> str:
    """Return results.json's text, stable byte for byte for the same results."""
    # orjson: the stdlib's indented encoder is pure Python and took seconds on leaderboard-sized results
    return orjson.dumps(results.to_json_dict(), option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"


def write_text_atomic(path: Path, text: FileText) -> None:
    """Write a file (its text whole or in pieces: ``FileText``) via a temporary sibling and a rename, so a reader
    never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        handle.writelines([text] if isinstance(text, str) else text)
    os.replace(temporary, path)


def write_results(results: AuditResults, out_dir: str | Path) -> list[Path]:
    """Write results.json and results.csv into ``out_dir``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out_dir / "results.json", out_dir / "results.csv"
    write_text_atomic(json_path, results_json(results))
    write_text_atomic(csv_path, results_csv(results.rows))
    return [json_path, csv_path]


def write_files(results: AuditResults, out_dir: str | Path) -> list[Path]:
    """Write the files the analyses list beside results.json (``AuditResults.files``) into ``out_dir``."""
    out_dir = Path(out_dir)
    paths = []
    files = results.files
    # a file at a time as the audit makes them (FilesOnUse.each): written, then let go before the next is made
    for name, text in files.each() if isinstance(files, FilesOnUse) else files.items():
        write_text_atomic(out_dir / name, text)
        paths.append(out_dir / name)
        del text
    return sorted(paths)


def read_results_csv(path: Path) -> list[dict[str, Any]]:
    """Read a results.csv back into rows (for tools, tests and ``frame.read_results``): every contract column,
    older schemas read as docs/results.md says (no ``type``: type ""; no ``n_clusters``: ``n_items``), each
    number the exact float the file holds (Python's ``float`` of its shortest round-trip text; None where
    undefined). Raise ``InputError`` naming the file when it is not a results.csv this tool wrote, and the line of
    a cell that is not a number."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            required = [column for column in COLUMNS if column not in ("type", "n_clusters")]
            missing = [column for column in required if column not in header]
            if missing:
                raise InputError(
                    f"{path}: no column {', '.join(missing)}; a results.csv has the columns {', '.join(COLUMNS)} "
                    "(docs/results.md)"
                )
            parsed = [_parsed_row(path, reader.line_num, row) for row in reader]
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, so not a results.csv refsens-report wrote") from None
    except csv.Error as error:
        raise InputError(f"{path}: not a results.csv refsens-report wrote ({error})") from None
    return parsed


def _parsed_row(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    """Return one row of a results.csv with its numbers parsed (``read_results_csv``)."""
    row.setdefault("type", "")  # schema 1
    if row.get("n_clusters") is None:  # schema 3 or older: every item its own cluster
        row["n_clusters"] = row["n_items"]
    for column in COLUMNS:
        value = row[column]
        if value is None:  # a row with fewer cells than the header
            raise InputError(f"{path}: line {line}: no {column}; every row has the header's columns")
        if column in NUMBER_COLUMNS or column in COUNT_COLUMNS:
            row[column] = _number(path, line, column, value, int if column in COUNT_COLUMNS else float)
    return row


def _number(path: Path, line: int, column: str, value: str, kind: type) -> Any:
    """Return a cell's number (None for an empty float); raise ``InputError`` naming the line of one that is not."""
    if value == "" and kind is float:
        return None
    try:
        return kind(value)
    except ValueError:
        what = "a whole number" if kind is int else "a number (or empty: undefined)"
        raise InputError(f"{path}: line {line}: {column} is {value!r}, not {what}") from None
