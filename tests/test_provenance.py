"""Provenance without machine paths: inputs are named as written in the config (issue 12, item 6).

results.json ``inputs`` (and manifest.json, which copies them, and the appendix's Provenance table) must be
the same whichever folder the build runs from, whether the config is reached through a symlink, and
wherever a symlinked data folder points.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.load import load_record
from refsens_report.manifest import build_manifest
from refsens_report.results import sha256_file

GOLD = "EU B-ORG\nrejects O\nGerman B-MISC\n\nPeter B-PER\nBlackburn I-PER\n"
PRED = "EU B-ORG\nrejects O\nGerman O\n\nPeter B-PER\nBlackburn O\n"
OTHER = "EU B-ORG\nrejects O\nGerman B-MISC\n\nPeter B-PER\nBlackburn O\n"


def conll_project(tmp_path: Path) -> Path:
    """A conll project whose data folder is a symlink to a store elsewhere; return the config's path."""
    store = tmp_path / "store" / "conll"
    (store / "systems").mkdir(parents=True)
    (store / "gold.txt").write_text(GOLD, encoding="utf-8")
    (store / "systems" / "pred.txt").write_text(PRED, encoding="utf-8")
    (store / "systems" / "other.txt").write_text(OTHER, encoding="utf-8")
    project = tmp_path / "team" / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "datasheet.md").write_text("# Datasheet\n\nProse.\n", encoding="utf-8")
    os.symlink(store, project / "data")  # resolved, the data lives at ../../store/conll
    config = project / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "Provenance test"\nversion = "1.0.0"\n\n'
        '[record]\nformat = "conll"\nlanguage = "en"\nroot = "data"\n'
        'labellings = {gold = "./gold.txt", pred = "systems/pred.txt", other = "systems//other.txt"}\n\n'
        '[roles]\nannotators = []\noutputs = ["pred", "other"]\nreferences = ["gold"]\n\n'
        '[audit]\nresamples = 20\n\n[report]\ndatasheet = "notes/datasheet.md"\n',
        encoding="utf-8",
    )
    return config


def audited_inputs(config: str | Path, cwd: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Run `refsens-report audit` from ``cwd``; return results.json's inputs."""
    monkeypatch.chdir(cwd)
    assert main(["audit", str(config), "--out", str(out)]) == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["inputs"]


def test_inputs_are_named_as_written_from_any_folder_and_through_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = conll_project(tmp_path)
    project = config.parent
    link = tmp_path / "elsewhere" / "linked-project"
    link.parent.mkdir()
    os.symlink(project, link)
    store = tmp_path / "store" / "conll"
    expected = {
        "refsens.toml": sha256_file(config),
        "gold.txt": sha256_file(store / "gold.txt"),  # under root = "data": the path as written in its key
        "systems/pred.txt": sha256_file(store / "systems" / "pred.txt"),
        "systems/other.txt": sha256_file(store / "systems" / "other.txt"),
        "notes/datasheet.md": sha256_file(project / "notes" / "datasheet.md"),
    }
    runs = [
        ("refsens.toml", project),  # from the project folder
        (config, tmp_path),  # an absolute config path, from elsewhere
        (Path("linked-project") / "refsens.toml", link.parent),  # through a symlinked folder
        (link / "refsens.toml", store),  # the same, from inside the data store
    ]
    for number, (path, cwd) in enumerate(runs):
        inputs = audited_inputs(path, cwd, tmp_path / f"out-{number}", monkeypatch)
        assert inputs == expected, (path, cwd)
        assert list(inputs) == list(expected)  # the same order too: results.json is byte-reproducible
        # manifest.json names the inputs as results.json does
        results = json.loads((tmp_path / f"out-{number}" / "results.json").read_text(encoding="utf-8"))
        assert build_manifest(results, tmp_path / f"out-{number}", "", "")["inputs"] == expected
    for inputs_name in expected:
        assert ".." not in inputs_name and not inputs_name.startswith("/")


def test_messages_still_say_where_a_file_is_from_the_config(tmp_path: Path) -> None:
    config = conll_project(tmp_path)
    record = load_record(load_config(config))
    assert [(source.display, source.name) for source in record.sources] == [
        ("data/./gold.txt", "gold.txt"),
        ("data/systems/pred.txt", "systems/pred.txt"),
        ("data/systems//other.txt", "systems/other.txt"),
    ]


def test_a_folder_input_names_its_files_under_the_folder_as_written(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    for name, spans in (("pass_a", "T1\tORG 0 2\tEU\n"), ("pass_b", "T1\tLOC 0 2\tEU\n")):
        (store / name).mkdir(parents=True)
        (store / name / "doc-1.txt").write_text("EU rejects it.", encoding="utf-8")
        (store / name / "doc-1.ann").write_text(spans, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(store, project / "brat-data")
    (project / "refsens.toml").write_text(
        '[dataset]\nname = "Brat provenance"\nversion = "1"\n\n'
        '[record]\nformat = "brat"\nlanguage = "en"\nroot = "brat-data"\n'
        'labellings = {a = "pass_a", b = "pass_b/"}\n\n'
        '[roles]\nannotators = []\noutputs = ["a"]\nreferences = ["b"]\n\n[audit]\nresamples = 20\n',
        encoding="utf-8",
    )
    inputs = audited_inputs(tmp_path / "project" / "refsens.toml", tmp_path, tmp_path / "out", monkeypatch)
    assert list(inputs) == [
        "refsens.toml",
        "pass_a/doc-1.txt",
        "pass_a/doc-1.ann",
        "pass_b/doc-1.txt",
        "pass_b/doc-1.ann",
    ]


def test_without_source_date_epoch_the_build_takes_the_newest_input_wherever_it_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refsens_report.audit import run_audit
    from refsens_report.site import build_time

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    config_path = conll_project(tmp_path)
    for path in [config_path, *config_path.parent.rglob("*.md"), *(tmp_path / "store").rglob("*.txt")]:
        os.utime(path, (1_700_000_000, 1_700_000_000))
    newest = tmp_path / "store" / "conll" / "systems" / "other.txt"  # under the symlinked root, named other.txt
    os.utime(newest, (1_750_000_000, 1_750_000_000))
    config = load_config(config_path)
    results = run_audit(config)
    moment, source = build_time(config, results.input_files.values())
    assert int(moment.timestamp()) == 1_750_000_000
    assert source == "the newest input file's modification time"
