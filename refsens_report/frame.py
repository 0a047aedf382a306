"""The results as a pandas DataFrame, for notebooks and scripts that read an audit (docs/results.md, "In Python").

``read_results`` reads a results.csv (or the folder holding one: an audit's ``--out``, or a version folder of
the site) into one typed frame: the label columns as pandas strings, empty where not applicable (never NaN: a
language spelt "NA" stays "NA"); ``estimate`` to ``p_holm`` as float64, NaN where undefined, each the exact
float the file holds (results.csv writes shortest round-trip numbers, read back by Python's ``float``);
``n_items`` and ``n_clusters`` as int64. Files of older schemas read as docs/results.md says: no ``type`` is
type "", no ``n_clusters`` is ``n_items``. ``results_frame`` makes the same frame from rows in memory
(``AuditResults.rows``).

The audit and the build never import this module (pandas takes about half a second to import; the site and the
PDF are written without it).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from refsens_report.errors import InputError
from refsens_report.results import COLUMNS, COUNT_COLUMNS, LABEL_COLUMNS, NUMBER_COLUMNS

FILE = "results.csv"


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the frame with the contract's columns, in order, typed."""
    return frame.astype(
        {
            **dict.fromkeys(LABEL_COLUMNS, "string"),
            **dict.fromkeys(NUMBER_COLUMNS, "float64"),
            **dict.fromkeys(COUNT_COLUMNS, "int64"),
        }
    )[list(COLUMNS)]


def results_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Return result rows (dicts with the contract's columns, ``make_row``'s) as the typed frame."""
    frame = pd.DataFrame.from_records(list(rows), columns=list(COLUMNS))
    for column in NUMBER_COLUMNS:  # None (undefined) as NaN in a float column
        frame[column] = pd.to_numeric(frame[column], errors="raise").astype("float64")
    return _typed(frame)


def _numbers(path: Path, column: str, values: list[str], kind: type) -> list[Any]:
    """Return a column's numbers (NaN for an empty float); raise ``InputError`` naming the line of one that is not."""
    found: list[Any] = []
    for line, value in enumerate(values, start=2):
        if value == "" and kind is float:
            found.append(math.nan)
            continue
        try:
            found.append(kind(value))
        except ValueError:
            what = "a whole number" if kind is int else "a number (or empty: undefined)"
            raise InputError(f"{path}: line {line}: {column} is {value!r}, not {what}") from None
    return found


def read_results(path: str | Path) -> pd.DataFrame:
    """Return a results.csv, or the results.csv of a folder, as the typed frame; raise ``InputError`` naming the
    file when it is not one refsens-report wrote."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, so not a results.csv refsens-report wrote") from None
    required = [column for column in COLUMNS if column not in ("type", "n_clusters")]
    missing = [column for column in required if column not in header]
    if missing:
        raise InputError(
            f"{path}: no column {', '.join(missing)}; a results.csv has the columns {', '.join(COLUMNS)} "
            "(docs/results.md)"
        )
    try:
        # every column as text, then the numbers through Python's float(): the exact floats results.csv wrote
        # (pandas' own parsers differ in the last bit across versions)
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
        if "type" not in frame:  # schema 1
            frame["type"] = ""
        if "n_clusters" not in frame:  # schema 3 or older: every item its own cluster
            frame["n_clusters"] = frame["n_items"]
        for column in (*NUMBER_COLUMNS, *COUNT_COLUMNS):
            frame[column] = _numbers(path, column, frame[column].tolist(), int if column in COUNT_COLUMNS else float)
        return _typed(frame)
    except (ValueError, TypeError, pd.errors.ParserError) as error:
        raise InputError(f"{path}: not a results.csv refsens-report wrote ({str(error).splitlines()[0]})") from None
