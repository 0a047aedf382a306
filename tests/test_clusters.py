"""The cluster bootstrap (`[record] cluster`, docs/method.md section 4) as the audit runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import A, B, D, R, config_text, item, pick, validate, write_record

from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.demo import write_simulation


def clustered_config(folder: Path, key: str = "document", **config) -> Path:
    path = folder / "refsens.toml"
    text = config_text(**config).replace('format = "jsonl"\n', f'format = "jsonl"\ncluster = "{key}"\n', 1)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_singleton_clusters_give_the_item_bootstrap(tmp_path, interval):
    """Each item its own cluster, keyed by its id (ids sort as their JSON text): every row as without a key,
    the jackknife (BCa) and the permutation test included."""
    write_simulation(tmp_path / "plain", items=360, seed=1)
    plain = tmp_path / "plain" / "refsens.toml"
    text = plain.read_text(encoding="utf-8").replace('datasheet = "datasheet.md"\n', "")
    text = text.replace("[audit]\n", f'[audit]\ninterval = "{interval}"\n', 1)
    plain.write_text(text.replace("resamples = ", "resamples = 200 #"), encoding="utf-8")
    single = tmp_path / "single"
    single.mkdir()
    lines = (tmp_path / "plain" / "record.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    for one in items:
        one.setdefault("meta", {})["unit"] = one["id"]
    write_record(single / "record.jsonl", items)
    (single / "refsens.toml").write_text(
        plain.read_text(encoding="utf-8").replace('format = "jsonl"\n', 'format = "jsonl"\ncluster = "unit"\n', 1),
        encoding="utf-8",
    )
    before, after = run_audit(load_config(plain)), run_audit(load_config(single / "refsens.toml"))
    assert after.rows == before.rows
    assert after.record["clusters"]["key"] == "unit"
    assert after.record["clusters"]["subsets"] == before.record["clusters"]["subsets"] == before.record["subsets"]


def test_a_rate_divides_by_the_items_a_replicate_holds(tmp_path):
    """Two clusters: three items on which A equals B, and one on which they differ. A replicate holds 6, 4 or 2
    items, and the identical rate is 100, 75 or 0: never above 100, as dividing by a fixed 4 would give."""
    same, other = [[0, 3, "PER"]], [[5, 8, "LOC"]]
    items = [item(f"en-{k}", "en", {"document": "x"}, **{A: same, B: same, D: same, R: same}) for k in range(3)]
    items.append(item("en-3", "en", {"document": "y"}, **{A: same, B: other, D: same, R: same}))
    write_record(tmp_path / "record.jsonl", items)
    results = run_audit(load_config(clustered_config(tmp_path, audit={"resamples": 400})))
    identical = pick(results.rows, analysis="agreement", statistic="identical", language="pooled")
    assert identical["estimate"] == 75.0
    assert (identical["n_items"], identical["n_clusters"]) == (4, 2)
    assert identical["ci_low"] == 0.0 and identical["ci_high"] == 100.0
    f1 = pick(results.rows, analysis="agreement", statistic="f1", rule="strict", language="pooled")
    assert f1["ci_high"] == 100.0  # the replicates drawing x twice


def test_every_item_must_name_its_cluster(tmp_path, capsys):
    spans = {A: [], B: [], D: [], R: []}
    items = [
        item("en-1", "en", {"document": 1}, **spans),
        item("en-2", "en", None, **spans),
        item("en-3", "en", {"document": None}, **spans),
    ]
    write_record(tmp_path / "record.jsonl", items)
    code, said = validate(clustered_config(tmp_path), capsys)
    assert code == 2
    assert "Config value 'record.cluster': 2 of 3 items have no meta 'document' ('en-2', 'en-3')" in said


def test_a_value_in_two_languages_makes_a_cluster_in_each(tmp_path):
    spans = {A: [[0, 1, "X"]], B: [[0, 1, "X"]], D: [[0, 1, "X"]], R: [[0, 1, "X"]]}
    items = [
        item(f"{language}-{k}", language, {"document": k // 2}, **spans) for language in ("de", "en") for k in range(6)
    ]
    write_record(tmp_path / "record.jsonl", items)
    results = run_audit(load_config(clustered_config(tmp_path)))
    rows = {
        row["language"]: row
        for row in results.rows
        if row["analysis"] == "agreement" and row["statistic"] == "identical"
    }
    assert {language: (row["n_items"], row["n_clusters"]) for language, row in rows.items()} == {
        "de": (6, 3),
        "en": (6, 3),
        "pooled": (12, 6),
    }
    assert results.record["clusters"]["subsets"]["corpus"] == {"de": 3, "en": 3, "pooled": 6}
    # the report says what was resampled wherever it says how many items: the clusters beside the items
    from refsens_report.view import ResultsView

    view = ResultsView.from_json(results.to_json_dict())
    assert view.items_phrase("corpus") == "12 items in 6 clusters by document"


def test_the_cluster_key_is_a_checked_option(tmp_path, capsys):
    write_record(tmp_path / "record.jsonl", [item("en-1", "en", {"document": 1}, **{A: [], B: [], D: [], R: []})])
    path = tmp_path / "refsens.toml"
    path.write_text(config_text().replace('format = "jsonl"\n', 'format = "jsonl"\ncluster = 3\n', 1), encoding="utf-8")
    code, said = validate(path, capsys)
    assert code == 2 and "Config value 'record.cluster': must be a non-empty string, got 3" in said
    assert load_config(clustered_config(tmp_path)).cluster == "document"
