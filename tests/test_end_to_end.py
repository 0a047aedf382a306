"""Every input format the tool reads, end to end through the command line: audit, build and check.

`validate` passing is not enough: each format's small valid record (the one its adapter tests write) must
audit, build (without the PDF) and pass a release check, exit 0, with results that name its outputs and
references and its input files as written in the config. ``test_every_format_is_covered`` keeps this list in
step with ``adapters.ADAPTERS``.
"""

from __future__ import annotations

import html
import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import test_adapters_brat as brat_case
import test_adapters_conll as conll_case
import test_adapters_crowd as crowd_case
import test_adapters_doccano as doccano_case
import test_adapters_hf_datasets as hf_case
import test_adapters_inception as inception_case
import test_adapters_label_studio as label_studio_case
import test_adapters_prodigy as prodigy_case
import test_parquet as parquet_case
from helpers import A, B, D, R, item, write_project

from refsens_report.adapters import ADAPTERS
from refsens_report.check import CHECKS, candidates
from refsens_report.cli import main
from refsens_report.view import ResultsView

RESAMPLES = "20"  # enough to run every analysis; the numbers are not the point here


def jsonl(folder: Path) -> Path:
    return write_project(
        folder,
        [
            item(
                "en-1",
                "en",
                text="Ann met Bob",
                **{A: [[0, 3, "PER"]], B: [[0, 3, "PER"]], D: [[0, 3, "PER"]], R: [[0, 3, "PER"], [8, 11, "PER"]]},
            ),
            item("en-2", "en", text="in Paris", **{A: [[3, 8, "LOC"]], B: [], D: [[3, 8, "LOC"]], R: [[3, 8, "LOC"]]}),
            item(
                "de-1",
                "de",
                text="Hallo Welt",
                **{A: [[6, 10, "LOC"]], B: [[6, 10, "LOC"]], D: [[6, 10, "LOC"]], R: [[6, 10, "LOC"]]},
            ),
        ],
    )


def hf_datasets(folder: Path) -> Path:
    """A Hub-style Parquet file with the gold tags, and predictions in a second file (two sources)."""
    pq.write_table(hf_case.table(metadata=hf_case.features("List")), folder / "test.parquet")
    pq.write_table(hf_case.table(tags=hf_case.PRED, column="pred"), folder / "predictions.parquet")
    labellings = 'gold = "ner_tags"\nmodel = { column = "pred", path = "predictions.parquet" }'
    roles = '[roles]\noutputs = ["model"]\nreferences = ["gold"]\n'
    return hf_case.write_config(folder, "test.parquet", labellings=labellings, roles=roles)


# format -> (write the project into a folder, return its config; outputs; references; input files as written)
CASES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "jsonl": (jsonl, (A, B), (D, R), ("record.jsonl",)),
    "conll": (conll_case.two_files, ("pred",), ("gold",), ("gold.txt", "pred.txt")),
    "crowd": (crowd_case.write_case, ("pass_1", "pass_2"), ("majority", "gold"), ("task1.zip",)),
    "label-studio": (
        lambda folder: label_studio_case.write_case(folder, label_studio_case.export()),
        ("annotator_7",),
        ("annotator_9",),
        ("export.json",),
    ),
    "brat": (
        lambda folder: brat_case.write_case(folder, brat_case.FIRST, "T1\tPER 0 5\tAlice\nT2\tLOC 38 41\tBob\n"),
        ("annotator_a",),
        ("annotator_b",),
        ("brat/a/doc1.txt", "brat/a/sub/doc2.ann", "brat/b/doc1.ann"),
    ),
    "inception": (inception_case.case, ("alice", "bob"), ("curation",), ("export.zip",)),
    "doccano": (doccano_case.zip_case, ("bob",), ("alice",), ("export.zip",)),
    "prodigy": (
        lambda folder: prodigy_case.write_case(folder, record=prodigy_case.NAMES),
        ("alex", "sam"),
        ("reviewed",),
        ("review.jsonl",),
    ),
    "hf-datasets": (hf_datasets, ("model",), ("gold",), ("test.parquet", "predictions.parquet")),
    "parquet": (
        lambda folder: parquet_case.project(folder, parquet_case.good_rows()),
        (A, B),
        (D, R),
        ("record.parquet",),
    ),
}


def test_every_format_is_covered():
    assert sorted(CASES) == sorted(ADAPTERS)


def answerable_check(results: dict) -> str | None:
    """Return a `max_` check these results can answer (its threshold is crossed by nothing), or None."""
    view = ResultsView.from_json(results)
    return next(
        (key for key, (_, declared) in CHECKS.items() if declared.bound.startswith("max") and candidates(view, key)[0]),
        None,
    )


@pytest.mark.parametrize("record_format", sorted(CASES))
def test_each_format_audits_builds_and_checks(record_format, tmp_path, capsys):
    write, outputs, references, inputs = CASES[record_format]
    folder = tmp_path / "project"
    folder.mkdir()
    config = write(folder)
    assert f'format = "{record_format}"' in config.read_text() or record_format == "jsonl"

    code = main(["audit", str(config), "--out", str(tmp_path / "audit"), "--resamples", RESAMPLES, "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""
    results = json.loads((tmp_path / "audit" / "results.json").read_text(encoding="utf-8"))
    rows = results["rows"]
    for output in outputs:
        assert any(output in (row["output"], row["output_2"]) for row in rows), output
    for reference in references:
        assert any(row["reference"] == reference for row in rows), reference
    assert set(inputs) | {"refsens.toml"} <= set(results["inputs"]), results["inputs"]
    assert not any(name.startswith("/") for name in results["inputs"])  # named as written, never resolved

    site = tmp_path / "site"
    code = main(["build", str(config), "--out", str(site), "--no-pdf", "--draft", "--resamples", RESAMPLES, "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""
    version = site / results["dataset"]["version"]
    said = captured.out.splitlines()  # the version folder, no PDF, the one-line verdict (issue 28)
    assert said[0] == f"wrote {version}{os.sep}" and said[1] == "  no PDF (--no-pdf)"
    assert said[2].startswith(("verdict: ", "verdict (a draft): ")) and len(said) == 3
    page = (version / "index.html").read_text(encoding="utf-8")
    assert all(name in page for name in (*outputs, *references))
    built = json.loads((version / "results.json").read_text(encoding="utf-8"))
    assert built["rows"] == results["rows"]  # the same audit, the same numbers
    assert (site / "index.html").is_file()

    # the gate runs its own audit; a record too small for any check (one reference, two labellings) gets the
    # one line that says so, exit 2
    key = answerable_check(results)
    config.write_text(config.read_text(encoding="utf-8") + f"\n[check]\n{key or 'max_band'} = 1000\n", encoding="utf-8")
    code = main(["check", str(config), "--resamples", RESAMPLES, "-q"])
    captured = capsys.readouterr()
    if key is None:
        assert code == 2 and captured.err.count("\n") == 1, captured.err
        assert "[check] asks for what these results cannot answer: max_band" in captured.err
    else:
        assert code == 0, captured.err
        assert f"PASS  {key} = 1000" in captured.out and "1 check: 1 passed, 0 failed" in captured.out


def doccano_folder(folder: Path) -> Path:
    (folder / "export").mkdir()
    (folder / "export" / "alice.jsonl").write_bytes(doccano_case.ALICE)
    (folder / "export" / "bob.jsonl").write_bytes(doccano_case.BOB)
    return doccano_case.write_config(folder, 'path = "export"')


def doccano_files(folder: Path) -> Path:
    doccano_folder(folder)
    return doccano_case.write_config(
        folder, '[record.labellings]\nalice = "export/alice.jsonl"\nbob = "export/bob.jsonl"\n'
    )


def inception_folder(folder: Path) -> Path:
    for name, data in inception_case.export_files().items():
        (folder / "export" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "export" / name).write_bytes(data)
    return inception_case.write_config(folder, source="export")


def crowd_folder(folder: Path) -> Path:
    for name, text in crowd_case.FILES.items():
        (folder / "unzipped" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "unzipped" / name).write_text(text, encoding="utf-8")
    return crowd_case.write_case(folder, source="unzipped")


def hf_saved_folder(folder: Path) -> Path:
    hf_case.save_to_disk(folder / "conllpp_test")
    pq.write_table(hf_case.table(tags=hf_case.PRED, column="pred"), folder / "predictions.parquet")
    labellings = 'gold = "ner_tags"\nmodel = { column = "pred", path = "predictions.parquet" }'
    roles = '[roles]\noutputs = ["model"]\nreferences = ["gold"]\n'
    return hf_case.write_config(folder, "conllpp_test", labellings=labellings, roles=roles)


def brat_root(folder: Path) -> Path:
    config = CASES["brat"][0](folder)
    text = config.read_text().replace('language = "en"\n', 'language = "en"\nroot = "brat"\n').replace('"brat/', '"')
    config.write_text(text)
    return config


# other shapes of the same formats: a folder where the case above reads a zip or a file, files named one by one
SHAPES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "doccano, a folder": (doccano_folder, ("export/alice.jsonl", "export/bob.jsonl")),
    "doccano, named files": (doccano_files, ("export/alice.jsonl", "export/bob.jsonl")),
    "inception, an unzipped export": (inception_folder, ("export/ner-demo_project_2024-05-01_1200/source/doc1.txt",)),
    "crowd, an unzipped archive": (crowd_folder, ("unzipped/task/test/ground_truth/D1.txt",)),
    "hf-datasets, a saved folder": (hf_saved_folder, ("conllpp_test/state.json", "predictions.parquet")),
    "brat, under a root": (brat_root, ("a/doc1.ann", "b/doc1.ann")),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_other_shapes_audit_too(shape, tmp_path, capsys):
    """Where validate passes audit must too: each input is named in results.json as written in the config."""
    write, inputs = SHAPES[shape]
    folder = tmp_path / "project"
    folder.mkdir()
    config = write(folder)
    assert main(["validate", str(config)]) == 0, capsys.readouterr().err
    code = main(["audit", str(config), "--out", str(tmp_path / "audit"), "--resamples", RESAMPLES, "-q"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    named = json.loads((tmp_path / "audit" / "results.json").read_text(encoding="utf-8"))["inputs"]
    assert set(inputs) <= set(named), sorted(named)


PROJECT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(path.parent.name for path in (PROJECT / "examples").glob("*/refsens.toml"))


def example_data(config: Path) -> Path:
    """Return what an example reads: its [record] root, else its record path (the shared data, not shipped)."""
    record = tomllib.loads(config.read_text(encoding="utf-8"))["record"]
    return (config.parent / record.get("root", record.get("path", ""))).resolve()


def test_the_examples_are_found():
    assert {"conll2003", "crowd-conll", "inception"} <= set(EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_audits_and_builds(example, tmp_path, capsys):
    """Each examples/<name>/refsens.toml as its README runs it (a quick B, no PDF); skipped without its data."""
    config = PROJECT / "examples" / example / "refsens.toml"
    data = example_data(config)
    if not data.exists():
        pytest.skip(f"{example} reads {data}, which is absent (the shared data lives beside the project, not in it)")
    code = main(["audit", str(config), "--out", str(tmp_path / "audit"), "--resamples", RESAMPLES, "-q"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    results = json.loads((tmp_path / "audit" / "results.json").read_text(encoding="utf-8"))
    roles = results["config"]["roles"]
    named = {row[column] for row in results["rows"] for column in ("output", "output_2", "reference", "reference_2")}
    assert {*roles["outputs"], *roles["references"]} <= named
    code = main(
        ["build", str(config), "--out", str(tmp_path / "site"), "--no-pdf", "--draft", "--resamples", RESAMPLES, "-q"]
    )
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    folder = tmp_path / "site" / results["dataset"]["version"]
    assert html.escape(results["dataset"]["name"]) in (folder / "index.html").read_text(encoding="utf-8")
    assert json.loads((folder / "results.json").read_text(encoding="utf-8"))["rows"] == results["rows"]
