"""A partitioned record (convert --partition-items N): files that never split an item and follow the canonical
blocks, a manifest the reader checks, and the same audit as the record in one file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from refsens_report import partitions
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.demo import write_simulation
from refsens_report.load import load_record


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("partitions")
    write_simulation(folder, items=600, seed=0)
    return folder


def with_record(config: Path, record: str, name: str) -> Path:
    """Write a copy of a JSON Lines project's config reading ``record`` as Parquet."""
    path = config.with_name(name)
    text = config.read_text(encoding="utf-8").replace('path = "record.jsonl"', f'path = "{record}"')
    path.write_text(text.replace('format = "jsonl"', 'format = "parquet"'), encoding="utf-8")
    return path


def items_of(config: Path) -> dict[str, tuple]:
    """Return each item's language, labellings present and spans (as sorted tuples): the record as a set."""
    table = load_record(load_config(config)).table
    found = {}
    for index, item_id in enumerate(table.ids.tolist()):
        spans = table.item_spans(index)
        found[item_id] = (
            table.languages[table.language[index]],
            tuple(sorted((name, tuple(sorted(found_spans))) for name, found_spans in spans.items())),
        )
    return found


def test_partitions_never_split_an_item_and_follow_the_canonical_order(simulated, tmp_path, capsys):
    out = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(out), "--partition-items", "32"]) == 0
    assert "wrote" in capsys.readouterr().out
    manifest = json.loads((out / partitions.MANIFEST).read_text())
    files = sorted(path.name for path in out.glob("*.parquet"))
    assert files == [part["file"] for part in manifest["partitions"]] and len(files) > 7
    seen: list[tuple[str, str]] = []
    for part in manifest["partitions"]:
        table = pq.read_table(out / part["file"], columns=["id", "language"])
        ids, languages = table.column("id").to_pylist(), set(table.column("language").to_pylist())
        distinct = list(dict.fromkeys(ids))
        assert languages == {part["language"]}, "a partition holds one language"
        assert len(distinct) == part["items"] <= 32 and table.num_rows == part["rows"]
        assert distinct == sorted(distinct) and (distinct[0], distinct[-1]) == (part["first_id"], part["last_id"])
        assert ids == sorted(ids), "an item's rows are contiguous"
        seen += [(part["language"], item_id) for item_id in distinct]
    assert seen == sorted(seen) and len(set(seen)) == len(seen) == manifest["items"] == 600
    # every language but its last partition holds exactly N items: the cuts fall every N items of a language
    per_language: dict[str, list[int]] = {}
    for part in manifest["partitions"]:
        per_language.setdefault(part["language"], []).append(part["items"])
    assert all(set(sizes[:-1]) <= {32} for sizes in per_language.values())


@pytest.mark.parametrize("partition_items", [1 << 16, 64, 1 << 10])
def test_a_partitioned_record_reads_back_as_the_single_file_and_audits_the_same(partition_items, simulated, tmp_path):
    config = simulated / "refsens.toml"
    single, folder = tmp_path / "record.parquet", tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(single)]) == 0
    assert (
        main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", str(partition_items)]) == 0
    )
    single_config = with_record(config, str(single), "single.toml")
    folder_config = with_record(config, str(folder), "folder.toml")
    assert items_of(single_config) == items_of(folder_config)
    csv = []
    for name, path in (("single", single_config), ("folder", folder_config)):
        assert main(["audit", str(path), "--out", str(tmp_path / name), "--resamples", "200", "-q"]) == 0
        csv.append((tmp_path / name / "results.csv").read_bytes())
    assert csv[0] == csv[1]


def test_the_same_record_gives_the_same_files(simulated, tmp_path):
    for name in ("a", "b"):
        assert main(["convert", str(simulated / "record.jsonl"), str(tmp_path / name), "--partition-items", "128"]) == 0
    for path in (tmp_path / "a").iterdir():
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


@pytest.mark.parametrize(
    "partition_items, expected",
    [
        (
            "100",
            "--partition-items 100: partitions follow the canonical blocks of 65,536 items, so N is a multiple of "
            "65,536 (whole blocks) or divides it (a power of two up to it); try 64 or 65,536",
        ),
        ("100000", "try 65,536 or 131,072"),
        ("0", "--partition-items 0: a partition holds at least one item"),
    ],
)
def test_partition_items_must_follow_the_canonical_blocks(partition_items, expected, simulated, tmp_path, capsys):
    code = main(
        ["convert", str(simulated / "record.jsonl"), str(tmp_path / "parts"), "--partition-items", partition_items]
    )
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_an_existing_folder_is_replaced_only_with_force_and_only_when_convert_wrote_it(simulated, tmp_path, capsys):
    out = tmp_path / "parts"
    arguments = ["convert", str(simulated / "record.jsonl"), str(out), "--partition-items", "256"]
    assert main(arguments) == 0
    assert main(arguments) == 2
    assert "exists; pass --force to replace it" in capsys.readouterr().err
    assert main([*arguments[:3], "--partition-items", "128", "--force"]) == 0
    assert json.loads((out / partitions.MANIFEST).read_text())["partition_items"] == 128
    assert len(list(out.glob("*.parquet"))) > 4
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert main(["convert", str(simulated / "record.jsonl"), str(other), "--partition-items", "256", "--force"]) == 2
    assert "is not a partitioned record convert wrote" in capsys.readouterr().err
    assert (other / "keep.txt").read_text() == "mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine", "parts"]  # no hidden folder left


def broken(simulated: Path, tmp_path: Path, damage) -> str:
    """Return the audit's error after ``damage(folder)`` on a freshly partitioned record."""
    folder = tmp_path / "parts"
    assert main(["convert", str(simulated / "record.jsonl"), str(folder), "--partition-items", "128"]) == 0
    damage(folder)
    return str(with_record(simulated / "refsens.toml", str(folder), f"broken-{tmp_path.name}.toml"))


@pytest.mark.parametrize(
    "damage, expected",
    [
        (
            lambda folder: (folder / "part-00002.parquet").unlink(),
            "parts/part-00002.parquet: listed in manifest.json (100 items of language 'pl') but missing from the "
            "folder",
        ),
        (
            lambda folder: (folder / "part-09999.parquet").write_bytes((folder / "part-00001.parquet").read_bytes()),
            "parts/part-09999.parquet: not listed in manifest.json",
        ),
        (
            lambda folder: (folder / "part-00001.parquet").write_bytes((folder / "part-00000.parquet").read_bytes()),
            "rows, where manifest.json lists",
        ),
        (lambda folder: (folder / "manifest.json").write_text("{}"), "parts/manifest.json: not a partitioned record's"),
    ],
)
def test_a_partition_missing_added_or_replaced_is_named(damage, expected, simulated, tmp_path, capsys):
    config = broken(simulated, tmp_path, damage)
    code = main(["validate", config])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Traceback" not in err, err


def test_cuts_fall_every_n_items_of_a_language():
    language = np.array([0] * 5 + [1] * 3 + [3] * 4)
    assert partitions.cuts(language, 2) == [(0, 2), (2, 4), (4, 5), (5, 7), (7, 8), (8, 10), (10, 12)]
    assert partitions.cuts(language, 8) == [(0, 5), (5, 8), (8, 12)]
    assert partitions.canonical_order(np.array(["b", "a", "c"], dtype=object), np.array([1, 1, 0])).tolist() == [
        2,
        1,
        0,
    ]


def test_duplicates_keep_their_record_order_through_the_canonical_order(simulated, tmp_path):
    """A partitioned record is in canonical order (language, id), but keep_first and keep_last keep the copy that
    came first or last in the record it was converted from: the audit of the partitioned record is the audit of
    that record, whatever the order of its lines (here reversed, so every duplicate pair's first copy changes)."""
    config = simulated / "refsens.toml"
    lines = (simulated / "record.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (simulated / "reversed.jsonl").write_text("".join(reversed(lines)), encoding="utf-8")
    reversed_config = config.with_name("reversed.toml")
    reversed_config.write_text(
        config.read_text(encoding="utf-8").replace("record.jsonl", "reversed.jsonl"), encoding="utf-8"
    )
    folder, single = tmp_path / "parts", tmp_path / "again.parquet"
    assert main(["convert", str(simulated / "reversed.jsonl"), str(folder), "--partition-items", "64"]) == 0
    assert main(["convert", str(with_record(config, str(folder), "parts.toml")), str(single)]) == 0
    assert pq.read_schema(folder / partitions.file_name(0)).field("record_order").type == "int64"
    csv = {}
    for name, path in (
        ("forward", config),
        ("reversed", reversed_config),
        ("folder", with_record(config, str(folder), "reversed-folder.toml")),
        ("single", with_record(config, str(single), "reversed-single.toml")),  # the folder back in one file
    ):
        assert main(["audit", str(path), "--out", str(tmp_path / name), "--resamples", "200", "-q"]) == 0
        csv[name] = (tmp_path / name / "results.csv").read_bytes()
    assert csv["forward"] != csv["reversed"], "the line order decides which copy keep_first keeps"
    assert csv["folder"] == csv["reversed"] and csv["single"] == csv["reversed"]


@pytest.mark.parametrize(
    "value, expected",
    [(-1, "row 1: 'record_order' is -1; it counts from 0"), (None, "row 1: 'record_order' is null; every item")],
)
def test_a_bad_record_order_is_named_with_its_row(value, expected, tmp_path, capsys):
    table = pa.table(
        {
            "id": ["a", "b"],
            "language": ["en", "en"],
            "labelling": ["gold", "gold"],
            "start": [0, 0],
            "end": [1, 1],
            "type": ["PER", "PER"],
            "dup_key": ["k", "k"],
            "record_order": pa.array([value, 1], pa.int64()),
        }
    )
    pq.write_table(table, tmp_path / "record.parquet")
    assert main(["convert", str(tmp_path / "record.parquet"), str(tmp_path / "out.parquet")]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err, err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="advisory locks (fcntl) on POSIX only")
def test_convert_removes_the_folder_a_killed_convert_left_but_not_a_running_ones(simulated, tmp_path):
    import fcntl

    stale = tmp_path / ".parts.0123456789ab.partial"  # a convert killed mid-write: nothing holds it
    running = tmp_path / ".parts.ba9876543210.partial"  # a convert still writing holds its lock
    other = tmp_path / ".other.0123456789ab.partial"
    for folder in (stale, running, other):
        folder.mkdir()
        (folder / "part-00000.parquet").write_bytes(b"PAR1 half")
    held = os.open(running, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        arguments = ["convert", str(simulated / "record.jsonl"), str(tmp_path / "parts"), "--partition-items", "256"]
        assert main(arguments) == 0
    finally:
        os.close(held)
    assert not stale.exists() and running.exists() and other.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([running.name, other.name, "parts"])
    assert (tmp_path / "parts").stat().st_mode & 0o777 == 0o777 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
