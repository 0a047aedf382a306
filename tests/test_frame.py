"""The results as a pandas DataFrame (frame.py): the exact values of results.csv, typed, from a file or rows."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from refsens_report.cli import main
from refsens_report.demo import write_simulation
from refsens_report.errors import InputError
from refsens_report.frame import read_results, results_frame
from refsens_report.results import COLUMNS, LABEL_COLUMNS, NUMBER_COLUMNS, make_row, read_results_csv


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("frame")
    write_simulation(folder, items=300, seed=0)
    out = folder / "out"
    assert main(["audit", str(folder / "refsens.toml"), "--out", str(out), "--resamples", "200", "-q"]) == 0
    return out


def test_the_frame_holds_every_value_of_results_csv_exactly(audited):
    frame = read_results(audited)  # the folder: its results.csv
    rows = read_results_csv(audited / "results.csv")
    assert list(frame.columns) == list(COLUMNS) and len(frame) == len(rows) > 100
    assert all(frame[column].dtype == "string" for column in LABEL_COLUMNS)
    assert all(frame[column].dtype == "float64" for column in NUMBER_COLUMNS)
    assert frame["n_items"].dtype == "int64" and frame["n_clusters"].dtype == "int64"
    undefined = 0
    for record, row in zip(frame.to_dict("records"), rows):
        for column in COLUMNS:
            value, expected = record[column], row[column]
            if expected is None:
                assert math.isnan(value), (column, row)
                undefined += 1
            else:
                assert value == expected, (column, row)
    assert undefined, "some p-values are undefined (the point-estimate rows): NaN in the frame"
    # bit for bit: the round-trip parser, not pandas' fast one (which misses the last bit of some floats)
    written = frame["estimate"].to_numpy()
    exact = np.array([row["estimate"] if row["estimate"] is not None else np.nan for row in rows])
    assert np.array_equal(written.view(np.int64), exact.view(np.int64))


def test_rows_in_memory_make_the_same_frame(audited):
    rows = read_results_csv(audited / "results.csv")
    pd.testing.assert_frame_equal(results_frame(rows), read_results(audited / "results.csv"))


def test_labels_stay_text_and_older_schemas_read_as_documented(audited, tmp_path):
    lines = (audited / "results.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    first = lines[1].split(",")
    first[header.index("language")] = "NA"  # a language code pandas would read as missing by default
    first[header.index("output")] = "null"
    keep = [k for k, column in enumerate(header) if column not in ("type", "n_clusters")]
    older = tmp_path / "results.csv"
    older.write_text(
        "\n".join(",".join(cells[k] for k in keep) for cells in (header, first, lines[2].split(","))) + "\n",
        encoding="utf-8",
    )
    frame = read_results(older)
    assert frame.loc[0, "language"] == "NA" and frame.loc[0, "output"] == "null"
    assert frame.loc[1, "output_2"] == "" and not pd.isna(frame.loc[1, "output_2"])
    assert (frame["type"] == "").all() and (frame["n_clusters"] == frame["n_items"]).all()
    assert list(frame.columns) == list(COLUMNS)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a,b\n1,2\n", "results.csv: no column analysis, statistic"),
        (None, "results.csv: cannot read it"),
        (b"\xff\xfe not text", "results.csv: not UTF-8 text"),
    ],
)
def test_a_file_that_is_not_results_csv_is_named(text, expected, tmp_path):
    path = tmp_path / "results.csv"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    elif isinstance(text, bytes):
        path.write_bytes(text)
    with pytest.raises(InputError) as raised:
        read_results(path)
    assert expected in str(raised.value)


def test_a_bad_number_is_named(audited, tmp_path):
    lines = (audited / "results.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index("estimate")] = "about 70"
    path = tmp_path / "results.csv"
    path.write_text("\n".join([lines[0], ",".join(cells)]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_results(path)
    assert str(raised.value) == f"{path}: line 2: estimate is 'about 70', not a number (or empty: undefined)"


def test_make_row_fills_and_converts_as_the_contract_says():
    """Every column in contract order; undefined numbers None (a float NaN too, a float32 NaN, not a float,
    converted as float() does); counts as int, n_clusters the items unless given; an unknown column refused."""
    row = make_row(
        analysis="swap",
        estimate=np.float64(0.25),
        ci_low=float("nan"),
        ci_high=np.float64("nan"),
        p_value=np.float32(0.5),
        p_holm=1,
        n_items=np.int64(7),
    )
    assert list(row) == list(COLUMNS)
    assert row["analysis"] == "swap" and row["output"] == "" and row["type"] == ""
    assert row["estimate"] == 0.25 and type(row["estimate"]) is float
    assert row["ci_low"] is None and row["ci_high"] is None
    assert row["p_value"] == 0.5 and type(row["p_value"]) is float and row["p_holm"] == 1.0
    assert row["n_items"] == 7 and type(row["n_items"]) is int and row["n_clusters"] == 7
    assert make_row(n_items=9, n_clusters=np.int32(4))["n_clusters"] == 4
    assert math.isnan(make_row(estimate=np.float32("nan"))["estimate"])  # not a Python float: float() of it
    assert make_row()["estimate"] is None and make_row()["n_items"] == 0
    with pytest.raises(KeyError, match="not a results column"):
        make_row(estimates=1.0)
