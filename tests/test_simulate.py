"""The simulated pipeline: deterministic files, a valid config and record, the rates it was given, and an
audit that finds the silent default it planted (and none when the rule is neutral)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from refsens_report.audit import run_audit
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.demo import (
    SimulationParameters,
    dataset_version,
    simulate_rows,
    simulated_models,
    write_parameters,
    write_simulation,
)
from refsens_report.load import load_record

ITEMS = 3000  # a few hundred audited items: enough for the planted skew to show, small enough to be quick
RESAMPLES = 400
MODELS = ("model_1", "model_2", "model_3", "model_4")  # the default model outputs


def _fast_config(directory: Path) -> Path:
    """Return the written config with fewer bootstrap replicates, so the audit tests stay quick."""
    path = directory / "refsens.toml"
    text = path.read_text(encoding="utf-8")
    text, replaced = re.subn(r"(?m)^resamples = .*$", f"resamples = {RESAMPLES}", text)
    assert replaced == 1
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def default_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("default")
    write_simulation(directory, items=ITEMS, seed=0)
    return directory


@pytest.fixture(scope="module")
def default_rows(default_dir: Path) -> list[dict]:
    lines = (default_dir / "record.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def default_results(default_dir: Path):  # noqa: ANN201
    return run_audit(load_config(_fast_config(default_dir)))


@pytest.fixture(scope="module")
def neutral_results(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    directory = tmp_path_factory.mktemp("neutral")
    write_simulation(directory, items=ITEMS, seed=0, neutral=True)
    return run_audit(load_config(_fast_config(directory)))


def _row(results, **wanted) -> dict:  # noqa: ANN001
    """Return the one results row matching every given column."""
    matches = [row for row in results.rows if all(row[key] == value for key, value in wanted.items())]
    assert len(matches) == 1, (wanted, len(matches))
    return matches[0]


def _within(observed: float, expected: float, n: int, sds: float = 4.0) -> bool:
    """Is an observed share within ``sds`` binomial standard deviations of the expected one?"""
    return abs(observed - expected) <= sds * math.sqrt(max(expected * (1 - expected), 1e-9) / n)


# --- the files --------------------------------------------------------------------------------------------


def test_same_arguments_give_byte_identical_files(tmp_path: Path) -> None:
    first = write_simulation(tmp_path / "first", items=600, seed=7)
    second = write_simulation(tmp_path / "second", items=600, seed=7)
    assert [path.name for path in first] == ["record.jsonl", "refsens.toml", "datasheet.md"]
    for one, two in zip(first, second):
        assert one.read_bytes() == two.read_bytes(), one.name
    other_seed = write_simulation(tmp_path / "other", items=600, seed=8)
    assert other_seed[0].read_bytes() != first[0].read_bytes()


def test_written_config_is_valid_and_the_record_loads(default_dir: Path) -> None:
    config = load_config(default_dir / "refsens.toml")
    assert config.name == "Simulated PII benchmark (synthetic)"
    assert config.version == "0.1.0-demo-3000items"
    assert config.roles.annotators == ("annotator_a", "annotator_b")
    # the annotator passes are scored as the paper does, beside the model outputs (a leaderboard of six)
    assert config.roles.outputs == ("annotator_a", "annotator_b", *MODELS)
    assert config.roles.references == ("delivered", "reviewer")
    assert config.report.datasheet == (default_dir / "datasheet.md").resolve()
    record = load_record(config)  # also checks every span lies inside its text
    assert len(record.items) == ITEMS
    assert record.languages == ("ar", "hi", "pl", "pt", "sv", "zh")
    assert set(record.labelling_names) == {"annotator_a", "annotator_b", "delivered", "reviewer", *MODELS}
    # a model runs on every item: present on each (possibly with no spans)
    assert all(all(name in item.labellings for name in MODELS) for item in record.items)
    assert not record.notes  # every labelling is audited: none read and left out


def test_default_arguments_name_the_demo_version() -> None:
    assert dataset_version(SimulationParameters(), 0) == "0.1.0-demo"
    assert dataset_version(replace(SimulationParameters(), silent_default_keeps_a=0.5), 2) == "0.1.0-demo-neutral-seed2"
    assert dataset_version(replace(SimulationParameters(), models=simulated_models(0)), 0) == "0.1.0-demo-0outputs"


def test_outputs_zero_is_the_papers_record_and_models_leave_the_rest_unchanged(tmp_path: Path) -> None:
    write_simulation(tmp_path / "paper", items=600, seed=3, outputs=0)
    config = load_config(tmp_path / "paper" / "refsens.toml")
    assert config.roles.outputs == ("annotator_a", "annotator_b")
    assert config.audit.resamples == 2000  # two outputs: the family of 14 swings reaches below the level at 2,000
    # the model outputs draw from a stream of their own: the other labellings, texts and meta are unchanged
    without = simulate_rows(SimulationParameters(items=600, models=()), seed=3)
    with_models = simulate_rows(SimulationParameters(items=600), seed=3)
    for bare, full in zip(without, with_models, strict=True):
        assert {name: spans for name, spans in full["labellings"].items() if name not in MODELS} == bare["labellings"]
        assert {key: value for key, value in full.items() if key != "labellings"} == {
            key: value for key, value in bare.items() if key != "labellings"
        }


def test_the_demos_resamples_bring_its_holm_floor_below_the_level() -> None:
    from refsens_report.bootstrap import holm_floor
    from refsens_report.demo import demo_family_size, demo_resamples

    for count in (0, 1, 4, 10):
        parameters = SimulationParameters(models=simulated_models(count))
        resamples = demo_resamples(parameters)
        floor = holm_floor(demo_family_size(parameters), resamples)
        assert floor <= 0.8 * 0.05 < holm_floor(demo_family_size(parameters), resamples - 1) or resamples == 2000
    # six outputs: the adjacent family, 5 output pairs x (6 languages + pooled) x 2 rules
    assert demo_family_size(SimulationParameters()) == 70 and demo_resamples(SimulationParameters()) == 3499


def test_datasheet_says_the_data_is_synthetic(default_dir: Path) -> None:
    datasheet = (default_dir / "datasheet.md").read_text(encoding="utf-8")
    assert "**This dataset is synthetic.**" in datasheet
    for section in (
        "Motivation",
        "Composition",
        "Collection process",
        "Preprocessing",
        "Uses",
        "Distribution",
        "Maintenance",
    ):
        assert f"## {section}" in datasheet
    assert "silent_default_keeps_a" in datasheet and "0.987" in datasheet
    assert "refsens-report simulate DIR --seed 0 --items 3000" in datasheet


def test_spans_fall_on_the_text_they_label(default_rows: list[dict]) -> None:
    phones = [
        row["text"][start:end]
        for row in default_rows
        for start, end, label in row["labellings"]["delivered"]
        if label == "PHONE"
    ]
    assert phones and all(any(ch.isdigit() for ch in phone) for phone in phones)
    emails = [
        row["text"][start:end]
        for row in default_rows
        for start, end, label in row["labellings"]["delivered"]
        if label == "EMAIL"
    ]
    assert emails and all("@example." in email for email in emails)


# --- the rates the parameters set ----------------------------------------------------------------------


def test_third_pass_fires_at_the_language_rates(default_rows: list[dict]) -> None:
    parameters = {language.code: language for language in SimulationParameters().languages}
    for code, language in parameters.items():
        both = [
            row
            for row in default_rows
            if row["language"] == code and {"annotator_a", "annotator_b"} <= set(row["labellings"])
        ]
        differ = [row["labellings"]["annotator_a"] != row["labellings"]["annotator_b"] for row in both]
        fired = [row["meta"]["third_pass"] for row in both]
        for subset, rate in ((True, language.third_pass_on_disagreement), (False, language.third_pass_on_agreement)):
            flags = [f for f, d in zip(fired, differ) if d == subset]
            assert _within(sum(flags) / len(flags), rate, len(flags)), (code, subset)
        # The pooled per-language rate lands in the paper's 25-61 % band.
        assert 0.2 <= sum(fired) / len(fired) <= 0.66, code


def test_silent_default_keeps_annotator_a(default_rows: list[dict]) -> None:
    silent = [
        row
        for row in default_rows
        if not row["meta"]["third_pass"]
        and {"annotator_a", "annotator_b"} <= set(row["labellings"])
        and row["labellings"]["annotator_a"] != row["labellings"]["annotator_b"]
    ]
    kept_a = sum(row["labellings"]["delivered"] == row["labellings"]["annotator_a"] for row in silent)
    assert kept_a + sum(row["labellings"]["delivered"] == row["labellings"]["annotator_b"] for row in silent) == len(
        silent
    )
    assert _within(kept_a / len(silent), SimulationParameters().silent_default_keeps_a, len(silent))


def test_reviewer_and_duplicate_shares(default_rows: list[dict]) -> None:
    defaults = SimulationParameters()
    reviewed = sum("reviewer" in row["labellings"] for row in default_rows)
    assert _within(reviewed / ITEMS, defaults.reviewer_share, ITEMS)
    keys: dict[str, list[dict]] = {}
    for row in default_rows:
        keys.setdefault(row["meta"]["dup_key"], []).append(row)
    duplicated = sum(len(group) for group in keys.values() if len(group) > 1)
    assert abs(duplicated / ITEMS - defaults.duplicated_share) <= 0.002
    assert all(len({row["text"] for row in group}) == 1 for group in keys.values())
    assert all(len({row["language"] for row in group}) == 1 for group in keys.values())


def test_agreement_lands_in_the_papers_range() -> None:
    rows = simulate_rows(SimulationParameters(items=6000), seed=1)
    for code in ("hi", "zh"):
        tp = fp = fn = 0
        for row in rows:
            if row["language"] == code and {"annotator_a", "annotator_b"} <= set(row["labellings"]):
                a = {tuple(span) for span in row["labellings"]["annotator_a"]}
                b = {tuple(span) for span in row["labellings"]["annotator_b"]}
                tp, fp, fn = tp + len(a & b), fp + len(a - b), fn + len(b - a)
        assert 68 <= 100 * 2 * tp / (2 * tp + fp + fn) <= 92, code


# --- what the audit finds ------------------------------------------------------------------------------


def test_audit_finds_the_delivered_gold_skewed_towards_a(default_results) -> None:  # noqa: ANN001
    skew = _row(default_results, analysis="neutrality", statistic="skew", reference="delivered", language="pooled")
    assert skew["ci_low"] > 0


def test_audit_finds_the_reviewer_neutral(default_results) -> None:  # noqa: ANN001
    skew = _row(default_results, analysis="neutrality", statistic="skew", reference="reviewer", language="pooled")
    assert abs(skew["estimate"]) < 5
    assert skew["ci_low"] < 0 < skew["ci_high"]


def test_neutral_rule_leaves_no_skew(neutral_results) -> None:  # noqa: ANN001
    skew = _row(neutral_results, analysis="neutrality", statistic="skew", reference="delivered", language="pooled")
    assert skew["ci_low"] < 0 < skew["ci_high"]


def test_audit_flags_the_planted_copy_defect(default_results) -> None:  # noqa: ANN001
    planted = round(SimulationParameters().copy_defect_rate * ITEMS)
    assert planted >= 1
    assert len(default_results.summaries["duplicates"]["defective_groups"]) >= planted


# --- the model outputs and the planted rank flip ----------------------------------------------------------


def _pooled(results, **wanted) -> dict:  # noqa: ANN001
    return _row(results, language="pooled", rule="strict", **wanted)


@pytest.fixture(scope="module")
def population_results(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """A record with the reviewer on every item: the models' true order under each gold, with narrow intervals."""
    directory = tmp_path_factory.mktemp("population")
    write_parameters(directory, SimulationParameters(items=6000, reviewer_share=1.0), seed=11)
    return run_audit(load_config(_fast_config(directory)))


def test_the_planted_flip_holds_in_the_population(population_results) -> None:  # noqa: ANN001
    # model_1 - model_2: behind under the delivered gold (model_2 learned its conventions), ahead under the
    # reviewer (whose convention favours no one, so the more accurate model wins)
    delivered = _pooled(
        population_results,
        analysis="interaction",
        statistic="margin",
        output="model_1",
        output_2="model_2",
        reference="delivered",
    )
    reviewer = _pooled(
        population_results,
        analysis="interaction",
        statistic="margin",
        output="model_1",
        output_2="model_2",
        reference="reviewer",
    )
    assert delivered["ci_high"] < 0 < reviewer["ci_low"]
    flip = _pooled(population_results, analysis="leaderboard", statistic="flip", output="model_1", output_2="model_2")
    assert flip["estimate"] < -2 and flip["ci_high"] < 0
    # the annotators stay above every model under both golds; the models keep their order of strength
    for reference in ("delivered", "reviewer"):
        ranks = {
            output: _pooled(
                population_results, analysis="leaderboard", statistic="rank", output=output, reference=reference
            )["estimate"]
            for output in ("annotator_a", "annotator_b", *MODELS)
        }
        assert max(ranks["annotator_a"], ranks["annotator_b"]) < min(ranks[model] for model in MODELS)
        assert max(ranks["model_1"], ranks["model_2"]) < min(ranks["model_3"], ranks["model_4"])


def test_the_demo_as_make_report_builds_it_shows_every_analysis_and_a_significant_flip(tmp_path: Path) -> None:
    write_simulation(tmp_path, seed=0)  # the demo record and config, as `make report` writes them
    results = run_audit(load_config(tmp_path / "refsens.toml"))
    assert all(reason is None for reason in results.applicability.values()), results.applicability
    assert results.summaries["interaction"]["family"] == "adjacent"
    flip = _pooled(results, analysis="leaderboard", statistic="flip", output="model_1", output_2="model_2")
    assert flip["ci_high"] < 0 and flip["p_holm"] < 0.05  # significant after Holm over the 70 adjacent swings
    significant = _pooled(results, analysis="leaderboard", statistic="flips_significant", reference="delivered")
    assert significant["estimate"] >= 1
    groups = {
        row["output"]: row["estimate"]
        for row in results.rows
        if row["analysis"] == "leaderboard"
        and row["statistic"] == "tie_group"
        and row["language"] == "pooled"
        and row["rule"] == "strict"
    }
    assert groups["model_3"] == groups["model_4"]  # a near-equal pair shares a tie group
    assert len(set(groups.values())) > 1


# --- the command line ----------------------------------------------------------------------------------


def test_cli_simulate_then_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(tmp_path / "demo"), "--items", "600", "--seed", "3"]) == 0
    assert "record.jsonl" in capsys.readouterr().out
    config = _fast_config(tmp_path / "demo")
    assert main(["audit", str(config), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "results.csv").is_file()


@pytest.mark.parametrize(
    "argv", [["--items", "3"], ["--items", "-5"], ["--seed", "-1"], ["--outputs", "-1"], ["--outputs", "31"]]
)
def test_cli_simulate_rejects_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv) -> None:  # noqa: ANN001
    assert main(["simulate", str(tmp_path / "demo"), *argv]) == 2
    assert capsys.readouterr().err.startswith("error: simulate:")
    assert not (tmp_path / "demo").exists()
