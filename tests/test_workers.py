"""A partitioned record on Dask workers (workers.py): the workers read the partitions and build the count
blocks, and results.csv is the local engine's to the last bit, whatever the partitioning.

A small ``BLOCK_ITEMS`` (patched on the client, which cuts the canonical blocks; the workers assemble the rows
they are asked for) makes blocks straddle partitions. One LocalCluster of two worker processes serves the module.
"""

from __future__ import annotations

import gc
import json
import re
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

distributed = pytest.importorskip("distributed")

from refsens_report import audit, bootstrap, browser, engine, workers  # noqa: E402
from refsens_report import counts as counts_module  # noqa: E402
from refsens_report import results as results_module  # noqa: E402
from refsens_report.analyses import gold_errors  # noqa: E402
from refsens_report.cli import main  # noqa: E402
from refsens_report.config import load_config  # noqa: E402
from refsens_report.counts import Column, ColumnKind, ItemCounts  # noqa: E402
from refsens_report.demo import write_simulation  # noqa: E402

BLOCK_ITEMS = 16
RESAMPLES = "300"  # two chunks of replicates per language


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        scheduler_kwargs=engine.QUIET_SCHEDULER,
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("workers")
    write_simulation(folder, items=600, seed=0)
    assert main(["convert", str(folder / "record.jsonl"), str(folder / "record.parquet")]) == 0
    return folder


def config_for(simulated: Path, record: Path | str, name: str, engine_table: str = "") -> Path:
    text = (
        (simulated / "refsens.toml").read_text(encoding="utf-8").replace('path = "record.jsonl"', f'path = "{record}"')
    )
    path = simulated / name
    path.write_text(text.replace('format = "jsonl"', 'format = "parquet"') + engine_table, encoding="utf-8")
    return path


def cut(simulated: Path, folder: Path, files: int) -> Path:
    """Write the one-file record as ``files`` files cut at item boundaries, in its own (not canonical) order."""
    folder.mkdir()
    table = pq.read_table(simulated / "record.parquet")
    ids = np.array(table.column("id").to_pylist(), dtype=object)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    bounds = [int(starts[k]) for k in np.linspace(0, len(starts), files + 1).astype(int)[:-1]] + [len(ids)]
    for number, (first, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        pq.write_table(table.slice(first, stop - first), folder / f"{number:02d}.parquet")
    return folder


def audit_csv(config: Path, out: Path) -> bytes:
    assert main(["audit", str(config), "--out", str(out), "--resamples", RESAMPLES, "--quiet"]) == 0
    return (out / "results.csv").read_bytes()


@pytest.mark.parametrize(
    "partitioning", ["cut:1", "cut:3", "cut:7", "convert:65536", "convert:32", "url:32", "glob:32"]
)
def test_workers_give_the_local_results_for_any_partitioning(partitioning, cluster, simulated, tmp_path, monkeypatch):
    """url: the folder read through fsspec (a file:// URL, as an object store's would be); glob: its files by a
    pattern. The workers read the files by the same path as the client."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    how, number = partitioning.split(":")
    folder = tmp_path / "parts"
    if how == "cut":
        cut(simulated, folder, int(number))
    else:
        assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", number]) == 0
    if how in ("url", "glob"):
        pytest.importorskip("upath")
        folder = f"file://{folder}" if how == "url" else f"{folder}/part-*.parquet"  # type: ignore[assignment]
    local = audit_csv(config_for(simulated, folder, f"local-{tmp_path.name}.toml"), tmp_path / "local")
    remote: list[int] = []
    built = workers.PartitionedRun._remote_blocks

    def spied(self, counts, source, parts):
        remote.append(len(parts))
        return built(self, counts, source, parts)

    monkeypatch.setattr(workers.PartitionedRun, "_remote_blocks", spied)
    ran = on_partitions(monkeypatch)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    assert (
        audit_csv(config_for(simulated, folder, f"dask-{tmp_path.name}.toml", dask_table), tmp_path / "dask") == local
    )
    assert remote and max(remote) == 7, "the count blocks were built on the workers (7 blocks of 16 in 100 items)"
    assert summary_of(tmp_path / "dask") == summary_of(tmp_path / "local")
    found = gold_error_steps(ran)
    assert found == ["_partition_sums", "_partition_candidates"], "the gold-error candidates were found on the workers"
    assert "partition_column" in ran, "the outputs' columns the client reads came from the workers"


def on_partitions(monkeypatch) -> list[str]:
    """Record the functions ``PartitionedRun.each_partition`` runs on the partitions."""
    ran: list[str] = []
    each = workers.PartitionedRun.each_partition

    def spied(self, function, *args):
        ran.append(function.__name__)
        return each(self, function, *args)

    monkeypatch.setattr(workers.PartitionedRun, "each_partition", spied)
    return ran


def gold_error_steps(ran: list[str]) -> list[str]:
    """Return the gold-error summary's functions among those run on the partitions, in order."""
    return [name for name in ran if name in ("_partition_sums", "_partition_candidates")]


def summary_of(out: Path) -> str:
    """Return results.json's gold-error summary, as written."""
    return json.dumps(json.loads((out / "results.json").read_text(encoding="utf-8"))[gold_errors.KEY])


def awkward_record(simulated: Path, rare: int, unaudited: int) -> Path:
    """Write the simulation's record with a type only its first ``rare`` items have: the delivered reference's
    spans there are of type "AAA" (the first of the record's sorted types: every other type's code is one less
    in a partition without it), so its candidates there (the sources' types at the same places) rank among
    candidates of other types; and the reviewer reference absent from its first ``unaudited`` items (which are
    then not audited)."""
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines()
    written = []
    for number, line in enumerate(lines):
        item = json.loads(line)
        if number < rare and "delivered" in item["labellings"]:
            item["labellings"]["delivered"] = [[start, end, "AAA"] for start, end, _ in item["labellings"]["delivered"]]
        if number < unaudited:
            item["labellings"].pop("reviewer", None)
        written.append(json.dumps(item, ensure_ascii=False))
    path = simulated / f"awkward-{rare}-{unaudited}.jsonl"
    path.write_text("\n".join(written) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("evidence", ["outputs and references", "outputs", "outputs, no text"])
@pytest.mark.parametrize("partitioning", ["cut:3", "convert:32"])
def test_the_workers_find_every_gold_error_candidate_the_local_engine_finds(
    partitioning, evidence, cluster, simulated, tmp_path, monkeypatch
):
    """results.json's gold-error summary from the partitions' candidates (found on the workers with the record's
    sums, each partition's top merged on the client) is the local engine's byte for byte: every candidate's rank,
    score, spans, votes and context (TOP raised above every reference's candidates), with a type only some
    partitions have, a reference absent from some items (so that no item of the first cut file is audited),
    ``error_evidence = "outputs"`` and ``show_text = false``."""
    monkeypatch.setattr(gold_errors, "TOP", 100_000)
    record = awkward_record(simulated, 40, 10)
    how, number = partitioning.split(":")
    folder = tmp_path / "parts"
    if how == "cut":
        assert main(["convert", str(record), str(tmp_path / "awkward.parquet")]) == 0
        table = pq.read_table(tmp_path / "awkward.parquet")
        ids = np.array(table.column("id").to_pylist(), dtype=object)
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        bounds = [int(starts[k]) for k in (0, 10, 300)] + [len(ids)]  # no item audited in the first file
        folder.mkdir()
        for part, (first, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
            pq.write_table(table.slice(first, stop - first), folder / f"{part:02d}.parquet")
    else:
        assert main(["convert", str(record), str(folder), "--partition-items", number]) == 0
    text = (simulated / "refsens.toml").read_text(encoding="utf-8")
    text = text.replace('path = "record.jsonl"', f'path = "{folder}"').replace('format = "jsonl"', 'format = "parquet"')
    evidence_line = '\nerror_evidence = "outputs"' if "references" not in evidence else ""
    evidence_line += "\nshow_text = false" if evidence.endswith("no text") else ""
    text = text.replace('datasheet = "datasheet.md"', f'datasheet = "{simulated / "datasheet.md"}"{evidence_line}')
    (tmp_path / "local.toml").write_text(text, encoding="utf-8")
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    (tmp_path / "dask.toml").write_text(text + dask_table, encoding="utf-8")
    for name in ("local", "dask"):
        ran = on_partitions(monkeypatch)
        assert (
            main(["audit", str(tmp_path / f"{name}.toml"), "--out", str(tmp_path / name), "-q", "--resamples", "20"])
            == 0
        )
        assert gold_error_steps(ran) == ([] if name == "local" else ["_partition_sums", "_partition_candidates"])
    local = json.loads(summary_of(tmp_path / "local"))
    assert summary_of(tmp_path / "dask") == summary_of(tmp_path / "local")
    assert local["evidence"] == ("outputs+references" if "references" in evidence else "outputs")
    assert local["text"] is not evidence.endswith("no text")
    references = local["references"]
    assert [reference["reference"] for reference in references] == ["delivered", "reviewer"]
    listed = [entry for reference in references for entry in reference["top"]]
    assert len(listed) == sum(reference["candidates"] for reference in references) > 40
    assert any((entry["reference_span"] or [])[2:] == ["AAA"] for entry in listed), "the rare type is listed"
    scores = [entry["score"] for entry in listed]
    assert len(set(scores)) < len(scores), "ties in score are broken by language, id and place"


def test_the_one_file_record_and_the_partitioned_one_audit_alike(cluster, simulated, tmp_path, monkeypatch):
    """The partitioned record on workers against the local engine reading the one file (convert's own order)."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    single = audit_csv(config_for(simulated, simulated / "record.parquet", "single.toml"), tmp_path / "single")
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    assert audit_csv(config_for(simulated, folder, "dask-parts.toml", dask_table), tmp_path / "dask") == single


def loaded_records(monkeypatch) -> list:
    """Keep every record ``run_audit`` loads, to look at it after the audit."""
    records: list = []
    load = audit.load_record

    def kept(config, *args):
        records.append(load(config, *args))
        return records[-1]

    monkeypatch.setattr(audit, "load_record", kept)
    return records


def test_the_client_frees_the_records_spans_once_every_estimate_is_drawn(cluster, simulated, tmp_path, monkeypatch):
    """A partitioned record's client lets go of the span arrays (most of its record) before the listings are
    built: results.csv is still the local engine's, and a late reader of a span array fails loudly."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    local = audit_csv(config_for(simulated, folder, "local-freed.toml"), tmp_path / "local")
    records = loaded_records(monkeypatch)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    assert audit_csv(config_for(simulated, folder, "dask-freed.toml", dask_table), tmp_path / "dask") == local
    (table,) = [record.table for record in records]
    assert table.spans_released and table.n_items == 600 and len(table.ids) == 600
    with pytest.raises(RuntimeError, match="'start' array was released"):
        table.start[:3]


OUTPUT_TYPE = "OUTPUT_ONLY"  # a span type only the models' outputs use, on some items, beyond any reference's span


def test_the_client_reads_no_outputs_spans(cluster, simulated, tmp_path, monkeypatch):
    """The client of a partitioned record's Dask run holds the references' and annotators' spans only
    (``workers.unheld_names``): the outputs' are checked and counted as they are read, then left to the workers,
    which serve the columns, the per-type items and the span counts the client reads of them. results.csv and
    results.json are the local engine's, with a type only the outputs use and spans ending beyond every other
    labelling's (an item's length is its furthest span end); the build's listings, made a partition at a time
    (each read on its own, never the record whole) and merged, are the local audit's."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    config = load_config(simulated / "refsens.toml")
    models = [name for name in config.roles.outputs if name not in config.roles.annotators]
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    changed = []
    for number, line in enumerate(lines):
        item = json.loads(line)
        if number % 5 == 0:
            for name in models[:2]:
                if name in item["labellings"]:
                    item["labellings"][name].append([len(item["text"]) - 1, len(item["text"]), OUTPUT_TYPE])
        changed.append(json.dumps(item, ensure_ascii=False) + "\n")
    (simulated / "outputs-only.jsonl").write_text("".join(changed), encoding="utf-8")
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "outputs-only.jsonl"), str(folder), "--partition-items", "64"]) == 0
    local_config = config_for(simulated, folder, "local-unheld.toml")
    local = audit_csv(local_config, tmp_path / "local")
    records = loaded_records(monkeypatch)
    ran = on_partitions(monkeypatch)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    dask_config = config_for(simulated, folder, "dask-unheld.toml", dask_table)
    assert audit_csv(dask_config, tmp_path / "dask") == local
    assert without_config(tmp_path / "dask" / "results.json") == without_config(tmp_path / "local" / "results.json")
    assert OUTPUT_TYPE.encode() in local, "the type only outputs use has rows"
    (table,) = [record.table for record in records]
    assert set(table.unheld) == set(models) and table.unheld_spans is not None
    assert table.unheld_spans[:, list(table.type_names).index(OUTPUT_TYPE)].sum() > 0
    assert {"partition_column", "partition_type_items", "partition_span_counts"} <= set(ran)
    whole = audit.load_record(load_config(local_config))
    assert table.n_items == whole.table.n_items and np.array_equal(table.present, whole.table.present)
    outputs = [whole.table.names.index(name) for name in models]
    away = int(np.isin(whole.table.labelling, outputs).sum())
    assert 0 < away < whole.table.n_spans and int(table.unheld_spans.sum()) == away, "every output's span set aside"

    def listings(path: Path) -> dict:
        found = replace(load_config(path), audit=replace(load_config(path).audit, resamples=20))
        results = audit.run_audit(found)
        gc.collect()
        # a partitioned record's client lets its counts (of the references and annotators) go before it reads the
        # partitions for the listings; a local audit's counts are the listings' own
        assert [alive() is None for alive in made] == [path == dask_config], "the client's counts let go"
        return dict(results.files)

    made: list = []
    item_counts = audit.ItemCounts
    monkeypatch.setattr(
        audit, "ItemCounts", lambda *given: made.append(weakref.ref(counted := item_counts(*given))) or counted
    )
    parts: list = []
    read = audit.partition_record
    monkeypatch.setattr(audit, "partition_record", lambda *given: parts.append(given[1]) or read(*given))
    displays = list(workers.partition_files(load_config(dask_config)).displays)
    for shown in (browser.BROWSER_LINES, 7):
        # the browser's lines: more than the listings hold, then fewer than a partition's (their spans cut on merging)
        monkeypatch.setattr(browser, "BROWSER_LINES", shown)
        records.clear()
        made.clear()
        remote = listings(dask_config)
        assert [set(record.table.unheld) for record in records] == [set(models)], "never read whole again"
        assert parts == displays, "each partition read on its own, once for every analysis's listings"
        assert len(made) == 1 + len(displays), "the audit's counts, then each partition's"
        parts.clear()
        made.clear()
        local = listings(local_config)
        assert remote == local and "gold-error-candidates.jsonl" in remote
    held = {
        name: [line for line in text.split("\n") if '"spans_outputs"' in line or '"spans_sources"' in line]
        for name, text in remote.items()
        if name.endswith(".jsonl")
    }
    assert held and all(len(lines) == 7 for lines in held.values()), "the partitions' first lines past 7 cut"


def with_record_table(path: Path, lines: str) -> Path:
    """Add lines to a config's [record] table (it ends the table written before [roles])."""
    text = path.read_text(encoding="utf-8").replace("\n[roles]", f"{lines}\n[roles]", 1)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_cluster_bootstrap_of_a_partitioned_record_reads_the_outputs_columns_from_the_workers(
    cluster, simulated, tmp_path
):
    """``[record] cluster``: the client draws every column itself (clusters straddle the canonical blocks), the
    outputs' per-item and per-type counts fetched from the workers. Documents of 5 items, an integer key in the
    JSON Lines record that convert writes as a ``meta.document`` column: results.csv is the JSON Lines record's,
    audited locally, and the partitioned record's, locally and on the workers."""
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines()
    with open(simulated / "documents.jsonl", "w", encoding="utf-8") as handle:
        for number, line in enumerate(lines):
            item = json.loads(line)
            item["meta"]["document"] = number // 5
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "documents.jsonl"), str(folder), "--partition-items", "64"]) == 0
    clusters = 'cluster = "document"'
    text = (simulated / "refsens.toml").read_text(encoding="utf-8").replace("record.jsonl", "documents.jsonl")
    (simulated / "documents.toml").write_text(text, encoding="utf-8")
    whole = audit_csv(with_record_table(simulated / "documents.toml", clusters), tmp_path / "jsonl")
    local = with_record_table(config_for(simulated, folder, "local-clusters.toml"), clusters)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    remote = with_record_table(config_for(simulated, folder, "dask-clusters.toml", dask_table), clusters)
    assert audit_csv(remote, tmp_path / "dask") == audit_csv(local, tmp_path / "local") == whole
    assert b"\nby_type," in whole, "per-type counts were drawn too"
    found = json.loads((tmp_path / "dask" / "results.json").read_text(encoding="utf-8"))["record"]["clusters"]
    assert found["key"] == "document" and found["subsets"]["corpus"]["pooled"] < 600 // 4


def test_the_automatic_resamples_read_the_outputs_scores_from_the_workers(cluster, simulated, tmp_path, monkeypatch):
    """``resamples = "auto"`` sizes the Holm family from the interaction's point estimates (the outputs' ranking)
    before any estimate: the engine is open by then, so the client reads the outputs' columns from the workers
    and finds the family the local engine finds (B capped here, to keep the test short)."""
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    families: list[int] = []
    monkeypatch.setattr(audit, "auto_resamples", lambda tests, *_: families.append(tests) or 200)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    found = []
    for name, table in (("local", ""), ("dask", dask_table)):
        path = config_for(simulated, folder, f"{name}-auto.toml", table)
        path.write_text(re.sub(r"(?m)^resamples = .*$", 'resamples = "auto"', path.read_text(encoding="utf-8")))
        assert main(["audit", str(path), "--out", str(tmp_path / name), "--quiet"]) == 0
        found.append((tmp_path / name / "results.csv").read_bytes())
    assert found[0] == found[1] and len(families) == 2 and families[0] == families[1] > 0


def test_a_label_map_that_renames_types_keeps_the_outputs_spans_on_the_workers(cluster, simulated, tmp_path):
    """A label map renaming types (two into one, one into a new name) maps the client's counts of the outputs'
    spans too: results.csv and results.json, the map's note included, are the local engine's. One that drops a
    type words its note from every span, so the client then reads them all (``workers.unheld_names``)."""
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    types = sorted(
        set(pq.read_table(simulated / "record.parquet", columns=["type"]).column("type").to_pylist()) - {None}
    )
    renames = f'label_map = {{ {types[0]} = "{types[1]}", {types[2]} = "RENAMED" }}'
    local = with_record_table(config_for(simulated, folder, "local-renamed.toml"), renames)
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    remote = with_record_table(config_for(simulated, folder, "dask-renamed.toml", dask_table), renames)
    assert workers.unheld_names(load_config(remote)), "the outputs' spans stay on the workers"
    assert audit_csv(remote, tmp_path / "dask") == audit_csv(local, tmp_path / "local")
    found = without_config(tmp_path / "dask" / "results.json")
    assert found == without_config(tmp_path / "local" / "results.json")
    assert any("record.label_map: renamed" in note for note in found["record"]["notes"])
    dropping = with_record_table(
        config_for(simulated, folder, "dask-dropped.toml", dask_table), f'label_map = {{ {types[0]} = "" }}'
    )
    assert workers.unheld_names(load_config(dropping)) == frozenset()


def test_the_clients_counts_refuse_to_read_an_outputs_spans(simulated, tmp_path):
    """Without the workers (nothing attached), an output's spans and columns raise, naming it: never an empty
    set, which would count as an output that marked nothing. The references' read as always."""
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    config = load_config(config_for(simulated, folder, "unheld.toml", '\n[engine]\nbackend = "dask"\nworkers = 1\n'))
    model = sorted(workers.unheld_names(config))[0]
    table = audit.load_record(config).table
    counts = ItemCounts(table, config.roles.all_names)
    whole = ItemCounts(audit.load_record(config, frozenset()).table, config.roles.all_names)
    assert model in counts.unheld and not whole.unheld
    with pytest.raises(counts_module.UnheldSpans, match=f"the spans of '{model}' are on the Dask workers"):
        counts.ids("strict", model)
    with pytest.raises(counts_module.UnheldSpans, match=model):
        counts.integers(Column("size", "strict", model))
    with pytest.raises(counts_module.UnheldSpans, match=model):
        counts.typed("size", "strict", model)
    reference = config.roles.primary
    assert np.array_equal(counts.size("strict", reference), whole.size("strict", reference))
    assert list(counts.type_names) == list(whole.type_names)
    assert np.array_equal(counts.present, whole.present)


def test_a_bad_span_of_an_output_is_reported_by_the_worker_that_reads_it(cluster, simulated, tmp_path, capsys):
    """The client checks the outputs' rows as it reads them but not their ends against the item's text (it
    keeps no output span): the worker reading that partition does, and the audit stops with its message, exit 2.
    validate reads every span itself."""
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "64"]) == 0
    config = load_config(simulated / "refsens.toml")
    model = [name for name in config.roles.outputs if name not in config.roles.annotators][0]
    path = sorted(folder.glob("part-*.parquet"))[1]
    table = pq.read_table(path)
    ends = table.column("end").to_pylist()
    row = next(k for k, name in enumerate(table.column("labelling").to_pylist()) if name == model and ends[k])
    ends[row] += 100_000
    pq.write_table(
        table.set_column(table.schema.get_field_index("end"), "end", pa.array(ends, table.schema.field("end").type)),
        path,
    )
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    bad = config_for(simulated, folder, "dask-bad.toml", dask_table)
    capsys.readouterr()
    for command in (["audit", str(bad), "--out", str(tmp_path / "out"), "--quiet"], ["validate", str(bad)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"{path.name}: row" in err and "beyond the text" in err and "Traceback" not in err, err


def test_a_callers_record_keeps_its_spans(simulated):
    """audit_record on a record its caller holds (bench/coverage_study.py audits a record many times) frees nothing."""
    config = load_config(config_for(simulated, simulated / "record.parquet", "kept.toml"))
    config = replace(config, audit=replace(config.audit, resamples=20))
    record = audit.load_record(config)
    spans = record.table.n_spans
    first = audit.audit_record(record, config).rows
    assert not record.table.spans_released and record.table.n_spans == spans
    assert audit.audit_record(record, config).rows == first


def test_audit_renders_no_listing_and_a_build_renders_them_after_the_spans_are_freed(simulated, tmp_path, monkeypatch):
    """The listings (AuditResults.files) are the build's alone: ``refsens-report audit`` never renders them (at
    scale, the client's peak), and rendered later, from an audit whose record has let its spans go, they are
    what the audit of a caller's whole record gives."""
    config = load_config(config_for(simulated, simulated / "record.parquet", "listings.toml"))
    config = replace(config, audit=replace(config.audit, resamples=20))
    rendered = []
    render = audit.analysis_files
    monkeypatch.setattr(audit, "analysis_files", lambda context: rendered.append(1) or render(context))
    audit_csv(config_for(simulated, simulated / "record.parquet", "listings.toml"), tmp_path / "out")
    assert rendered == [] and not (tmp_path / "out" / "disagreements.jsonl").exists()
    freed = audit.run_audit(config)
    whole = audit.audit_record(audit.load_record(config), config)
    assert dict(freed.files) == dict(whole.files) and "disagreements.jsonl" in freed.files
    assert len(rendered) == 2


def test_a_build_writes_the_listings_a_file_at_a_time_and_keeps_none(simulated, tmp_path, monkeypatch):
    """``results.write_files`` (a build) makes each listing file once the one before it is written
    (``FilesOnUse.each``), so it holds one file's text at a time; the files are the bytes the mapping gives, and
    once written they are let go: read again, they are refused, not made again."""
    config = load_config(config_for(simulated, simulated / "record.parquet", "listings.toml"))
    config = replace(config, audit=replace(config.audit, resamples=20))
    expected = dict(audit.run_audit(config).files)
    events = []
    render, write = audit.analysis_files, results_module.write_text_atomic

    def rendered(context):
        for name, text in render(context):
            events.append(("made", name))
            yield name, text

    monkeypatch.setattr(audit, "analysis_files", rendered)
    monkeypatch.setattr(
        results_module,
        "write_text_atomic",
        lambda path, text: events.append(("written", path.name)) or write(path, text),
    )
    results = audit.run_audit(config)
    assert events == []
    written = results_module.write_files(results, tmp_path)
    names = [name for kind, name in events if kind == "made"]
    assert events == [(kind, name) for name in names for kind in ("made", "written")], "made, written, then the next"
    assert sorted(names) == sorted(expected) and {"disagreements.jsonl", "gold-error-candidates.csv"} <= set(names)
    assert written == sorted(tmp_path / name for name in names)
    assert {path.name: path.read_text(encoding="utf-8") for path in written} == expected
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(RuntimeError, match="written and let go"):
        dict(results.files)


def test_workers_keep_the_record_order_of_duplicates(cluster, simulated, tmp_path, monkeypatch):
    """A record whose lines are reversed, partitioned (canonical order) and audited on the workers gives the local
    engine's results on the reversed record itself: keep_first keeps the copy the record has first
    (``record_order``), not the one canonical order puts first."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    reversed_record = simulated / "reversed.jsonl"
    reversed_record.write_text("".join(reversed(lines)), encoding="utf-8")
    folder = tmp_path / "parts"
    assert main(["convert", str(reversed_record), str(folder), "--partition-items", "64"]) == 0
    local_config = simulated / "reversed.toml"  # beside the simulation's datasheet, as config_for writes
    local_config.write_text(
        (simulated / "refsens.toml").read_text(encoding="utf-8").replace("record.jsonl", "reversed.jsonl"),
        encoding="utf-8",
    )
    forward = audit_csv(config_for(simulated, simulated / "record.parquet", "forward.toml"), tmp_path / "forward")
    local = audit_csv(local_config, tmp_path / "local")
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    remote = audit_csv(config_for(simulated, folder, "dask-reversed.toml", dask_table), tmp_path / "dask")
    assert local != forward, "the order of the lines decides which copy of a duplicate keep_first keeps"
    assert remote == local


def test_an_item_in_two_partitions_is_refused(cluster, simulated, tmp_path, capsys):
    folder = cut(simulated, tmp_path / "parts", 3)
    table = pq.read_table(folder / "00.parquet")
    pq.write_table(table.slice(0, 1), folder / "99.parquet")  # the first item's first row, again, in another file
    config = config_for(
        simulated, folder, "split.toml", f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    )
    assert main(["audit", str(config), "--out", str(tmp_path / "out"), "--resamples", RESAMPLES, "-q"]) == 2
    err = capsys.readouterr().err
    assert "an item's rows are in two partitions" in err and "Traceback" not in err, err


def test_only_per_item_counts_of_the_records_labellings_are_computed_on_workers():
    names = ("gold", "sys")
    assert workers.per_item(Column("tp", "strict", "gold", "sys"), names)
    assert workers.per_item(Column("flag", a="third_pass"), names)
    assert workers.per_item(Column("tp", "strict", "gold", "sys", type="PER"), names)
    assert workers.per_item(Column("size", "overlap", "gold", type="PER"), names)
    assert not workers.per_item(Column("equal", "", "gold", "sys", type="PER"), names)
    assert not workers.per_item(Column("tp", "strict", "gold", "what-if"), names)
    assert not workers.per_item(Column("alpha_agree", a="gold"), names)


def test_the_clients_columns_give_each_block_the_rows_of_the_whole_records_matrix(simulated):
    """``client_columns`` cuts a block's rows straight from each column: the rows and the dtype of
    ``ItemCounts.matrix`` (one matrix of the whole record), for small counts, wide ones, flags, per-type counts and
    real values, on items out of order, repeated, and none."""
    config = load_config(config_for(simulated, simulated / "record.parquet", "columns.toml"))
    table = audit.load_record(config).table
    kinds = {
        "wide": ColumnKind(
            "wide", lambda counts, column: counts.integers(Column("size", "strict", column.a)).astype(np.int64) * 300
        ),
        "third": ColumnKind(
            "third", lambda counts, column: counts.integers(Column("size", "strict", column.a)) / 3, integer=False
        ),
    }
    counts = ItemCounts(table, config.roles.all_names, kinds)
    first, second = config.roles.all_names[:2]
    small = [
        Column("size", "strict", first),
        Column("tp", "overlap", first, second),
        Column("flag", a="third_pass"),
        Column("size", "strict", second, type=str(counts.type_names[0])),
    ]
    rng = np.random.default_rng(0)
    picks = [rng.integers(0, counts.n_items, 50), np.arange(counts.n_items)[::-1], np.zeros(0, dtype=np.int64)]
    for columns in (small, small + [Column("wide", a=first)], small + [Column("third", a=second)]):
        whole = counts.matrix(columns)  # uint8, uint16, float64
        source = workers.client_columns(counts, columns)
        assert source.n_columns == len(columns)
        for items in picks:
            rows = source.rows(items)
            assert rows.dtype == whole.dtype and rows.shape == (len(items), len(columns))
            assert np.array_equal(rows, whole[items])


RARE = "RARE_TYPE"  # a span type only the record's first items have: most partitions lack it


@pytest.fixture(scope="module")
def rare_type(simulated) -> Path:
    """The simulated record with one type renamed on the spans of its first 30 items every role labels (audited
    items): a type most partitions lack, converted into partitions of 64 items."""
    config = load_config(simulated / "refsens.toml")
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kind = json.loads(lines[0])["labellings"]["delivered"][0][2]
    renamed, audited = [], 0
    for line in lines:
        item = json.loads(line)
        if audited < 30 and set(config.roles.all_names) <= set(item["labellings"]):
            audited += 1
            item["labellings"] = {
                name: [[start, end, RARE if label == kind else label] for start, end, label in spans]
                for name, spans in item["labellings"].items()
            }
        renamed.append(json.dumps(item, ensure_ascii=False) + "\n")
    (simulated / "rare.jsonl").write_text("".join(renamed), encoding="utf-8")
    folder = simulated / "rare-parts"
    assert main(["convert", str(simulated / "rare.jsonl"), str(folder), "--partition-items", "64"]) == 0
    return folder


def partition_types(folder: Path) -> list[set[str]]:
    """Return each partition file's span types, in file order."""
    return [
        set(pq.read_table(path, columns=["type"]).column("type").to_pylist()) - {None}
        for path in sorted(folder.glob("*.parquet"))
    ]


def without_config(path: Path) -> dict:
    """Return results.json without what names the config file (the engine's table differs by construction)."""
    found = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in found.items() if key not in ("config_toml", "inputs")}


def test_a_partitions_per_type_counts_are_the_whole_records_rows(simulated, rare_type):
    """``partition_matrix`` reads the per-type columns off the partition's ``typed_matrix`` by type name: its
    rows are those of the whole record's ``ItemCounts.matrix`` (each per-type column counted on its own,
    ``ItemCounts.typed``), strict and overlap, beside untyped columns, in partitions lacking a type too."""
    config = load_config(config_for(simulated, rare_type, "rare-columns.toml"))
    table = audit.load_record(config).table
    names = config.roles.all_names
    whole = ItemCounts(table, names)
    first, second = names[:2]
    types = [RARE, str(whole.type_names[0]), str(whole.type_names[-1])]
    columns = [Column("size", "strict", first), Column("tp", "strict", second, first, type=RARE)]
    columns += [Column("tp", rule, first, second, type=kind) for rule in ("strict", "overlap") for kind in types]
    columns += [Column("size", "strict", second, type=kind) for kind in types] + [Column("flag", a="third_pass")]
    expected = whole.matrix(columns)
    paths = sorted(rare_type.glob("*.parquet"))
    lacking = [RARE not in found for found in partition_types(rare_type)]
    assert any(lacking) and not all(lacking), "some partitions lack the type, some have it"
    offset = 0
    for path in paths:
        counts = workers.partition_counts(str(path), path.name, names, config.audit.duplicate_key, {})
        found = workers.partition_matrix(counts, columns)
        assert found.shape == (counts.n_items, len(columns))
        assert np.array_equal(found, expected[offset : offset + counts.n_items])
        offset += counts.n_items
    assert offset == whole.n_items and expected[:, 1:].any()


@pytest.mark.parametrize("items, sparse", [("32", False), ("128", False), ("512", False), ("128", True)])
def test_per_type_counts_are_computed_on_the_workers(
    items, sparse, cluster, simulated, rare_type, tmp_path, monkeypatch
):
    """The dense per-type count matrices are never built on the client of a partitioned Dask run (the workers
    compute their columns, by type name, where a partition may lack a type): results.csv is the local engine's,
    byte for byte, and so is every entry of results.json but the config's text and hash, whatever the
    partitioning. Sparse ones (more than ``MANY_TYPES`` scored types; here, more than one) are the client's,
    drawn beside the workers' columns."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    if sparse:
        monkeypatch.setattr("refsens_report.analyses.by_type.MANY_TYPES", 1)
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "rare.jsonl"), str(folder), "--partition-items", items]) == 0
    assert any(RARE not in types for types in partition_types(folder)), "a partition lacks the type"
    local = audit_csv(config_for(simulated, folder, f"local-{tmp_path.name}.toml"), tmp_path / "local")
    built: list[int] = []
    typed_matrix = ItemCounts.typed_matrix
    monkeypatch.setattr(
        ItemCounts, "typed_matrix", lambda self, *args, **kwargs: built.append(1) or typed_matrix(self, *args, **kwargs)
    )
    dask_table = f'\n[engine]\nbackend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    config = config_for(simulated, folder, f"dask-{tmp_path.name}.toml", dask_table)
    assert audit_csv(config, tmp_path / "dask") == local
    assert without_config(tmp_path / "dask" / "results.json") == without_config(tmp_path / "local" / "results.json")
    assert bool(built) == sparse, "the client built no dense per-type count matrix"
    assert RARE in {
        row["type"] for row in json.loads((tmp_path / "dask" / "results.json").read_text())["rows"] if row.get("type")
    }
