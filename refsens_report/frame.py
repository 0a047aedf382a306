"""The results as a pandas DataFrame, for notebooks and scripts that read an audit (docs/results.md, "In Python").

``read_results`` reads a results.csv (or the folder holding one: an audit's ``--out``, or a version folder of
the site) into one typed frame: the label columns as pandas strings, empty where not applicable (never NaN: a
language spelt "NA" stays "NA"); ``estimate`` to ``p_holm`` as float64, NaN where undefined, each the exact
float the file holds (results.csv writes shortest round-trip numbers; ``results.read_results_csv`` reads and
checks the file, its numbers through Python's ``float``); ``n_items`` and ``n_clusters`` as int64. Files of
older schemas read as docs/results.md says: no ``type`` is type "", no ``n_clusters`` is ``n_items``.
``results_frame`` makes the same frame from rows in memory (``AuditResults.rows``).

The audit and the build never import this module (pandas takes about half a second to import; the site and the
PDF are written without it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from refsens_report.results import COLUMNS, COUNT_COLUMNS, LABEL_COLUMNS, NUMBER_COLUMNS, read_results_csv

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


def read_results(path: str | Path) -> pd.DataFrame:
    """Return a results.csv, or the results.csv of a folder, as the typed frame; raise ``InputError`` naming the
    file when it is not one refsens-report wrote (``results.read_results_csv`` reads and checks it)."""
    path = Path(path)
    return results_frame(read_results_csv(path / FILE if path.is_dir() else path))
