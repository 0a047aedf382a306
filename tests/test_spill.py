"""A partitioned record's listings, made a partition at a time and merged (spill.py, ``Analysis.partitioned_files``):
the runs merge in key order whatever their chunks, and the files are the bytes of the whole record's."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from refsens_report import audit, browser, spill
from refsens_report.analyses import gold_errors
from refsens_report.analyses.base import Partitioned
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.demo import write_simulation
from refsens_report.load import load_record
from refsens_report.results import files_text


@pytest.mark.parametrize("chunk_bytes", [1, 40, spill.CHUNK_BYTES])
def test_runs_merge_by_key_whatever_their_chunks(chunk_bytes, tmp_path, monkeypatch):
    monkeypatch.setattr(spill, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(spill, "JOIN_LINES", 3)
    rng = random.Random(chunk_bytes)
    rows = [((rng.randrange(5), f"id-{number}"), f"line {number}, with\nits own newline;\n") for number in range(200)]
    runs = spill.Runs(tmp_path, "listing.csv")
    parts: list[list] = [[], [], [], []]
    for row in rows:
        parts[rng.randrange(3)].append(row)  # the fourth run stays empty
    for part in parts:
        runs.add(sorted(part))
    assert len(list(tmp_path.glob("listing.csv.*.run"))) == 4
    ordered = sorted(rows)
    assert list(runs.rows()) == ordered
    pieces = list(runs.merged(lambda position, text: f"{position}:{text}"))
    assert len(pieces) == -(-len(rows) // 3), "joined three lines at a time"
    assert "".join(pieces) == "".join(f"{position}:{text}" for position, (_, text) in enumerate(ordered))


AWKWARD = {"model_1": "spans_outputs", "model_2": "spans_sources"}  # the keys a merged line is cut at, as names


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory) -> Path:
    """A simulated record whose outputs are named like the JSON keys the merge cuts lines at, in 64-item parts."""
    folder = tmp_path_factory.mktemp("spill")
    write_simulation(folder, items=600, seed=1)
    for name in ("record.jsonl", "refsens.toml"):
        text = (folder / name).read_text(encoding="utf-8")
        for old, new in AWKWARD.items():
            text = text.replace(f'"{old}"', f'"{new}"')
        (folder / name).write_text(text, encoding="utf-8")
    assert main(["convert", str(folder / "record.jsonl"), str(folder / "parts"), "--partition-items", "64"]) == 0
    config = (folder / "refsens.toml").read_text(encoding="utf-8")
    config = config.replace('path = "record.jsonl"', 'path = "parts"').replace('format = "jsonl"', 'format = "parquet"')
    (folder / "parts.toml").write_text(config, encoding="utf-8")
    return folder / "parts.toml"


@pytest.mark.parametrize("shown", [browser.BROWSER_LINES, 9])
def test_a_partitioned_records_listings_are_the_whole_records(shown, partitioned, monkeypatch):
    """The files made a partition at a time (each partition's context read from its file) are the whole record's,
    byte for byte: with the browser's lines more than the listings hold, and fewer than a partition's (the merge
    then cuts the outputs' and the sources' spans from every line past them), with outputs named
    "spans_outputs" and "spans_sources", and runs of many small chunks."""
    monkeypatch.setattr(browser, "BROWSER_LINES", shown)
    monkeypatch.setattr(spill, "CHUNK_BYTES", 2_000)
    config = load_config(partitioned)
    assert set(AWKWARD.values()) <= set(config.roles.outputs)
    context = audit.audit_context(load_record(config, frozenset()), config)
    expected = files_text(audit.analysis_files(context))
    contexts = list(audit.partition_contexts(config, context.subsets))
    sizes = [part.counts.n_items for part in contexts]
    assert len(contexts) > 8 and sum(sizes) == context.counts.n_items
    parts = list(zip(np.cumsum([0, *sizes[:-1]]).tolist(), contexts))  # each with its first item's index

    def each_partition(function, ids, per_item, *args):  # what the workers run, here on each partition's counts
        return [
            function(part.counts, first, *(values[first : first + part.counts.n_items] for values in per_item), *args)
            for first, part in parts
        ]

    summary = gold_errors._partitioned(context, each_partition)  # keeps the record's sums for the listings
    assert [entry["candidates"] for entry in summary] == [found.n for found in gold_errors.candidates(context)]
    made = Partitioned(
        config, context.subsets, context.notes, partial(audit.partition_contexts, config, context.subsets)
    )
    found = files_text(audit.partitioned_files(made))
    assert found == expected
    assert {"disagreements.jsonl", "annotator-disagreements.csv", "gold-error-candidates.jsonl"} <= set(found)
    lines = found["disagreements.jsonl"].splitlines()
    assert len(lines) > shown or shown == browser.BROWSER_LINES
    spans = [line.count('"spans_outputs":{') - line.count('"spans_outputs":{"tp"') for line in lines]
    assert spans == [1] * min(shown, len(lines)) + [0] * (len(lines) - shown), "the first lines with their spans"
    assert any('"spans_outputs":{"tp"' in line for line in lines), "an output named spans_outputs has its counts"


def test_the_partitions_must_hold_the_items_the_audit_read(partitioned, tmp_path):
    config = load_config(partitioned)
    context = audit.audit_context(load_record(config, frozenset()), config)
    shorter = replace(context.subsets, audited=context.subsets.audited[:-1])  # an item fewer than the partitions hold
    with pytest.raises(audit.InputError, match="the partitions hold other items than the audit read"):
        list(audit.partition_contexts(config, shorter))
