"""The crowd adapter on a small MTurk-layout archive written here: passes, majority vote, noisy worker tokens."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from helpers import validate
from refused import refused

from refsens_report.adapters.crowd import majority_vote
from refsens_report.config import load_config
from refsens_report.load import load_record

GOLD = "\nRussian B-MISC\nleader O\nvisits O\nNew B-LOC\nYork I-LOC\n\nU.S. B-LOC\nreacts O\n"
FILES = {
    "task/test/ground_truth/D1.txt": GOLD,
    # worker ids sort as W1 < W2 < W3: that is the pass order
    "task/test/mturk_train_data/W2/D1.txt": (
        "Russia B-LOC\nn O\nleader O\nvisits O\nNew/LOC B-LOC\nYork/LOC I-LOC\n\nU.S B-LOC\n. I-LOC\nreacts O\n"
    ),
    "task/test/mturk_train_data/W1/D1.txt": (
        "Russian B-MISC\n B-ORG\nleader O\nvisits O\nNew B-ORG\nYork I-ORG\n\nU.S. O\nreacts O\n"
    ),
    "task/test/ground_truth/D2.txt": "Paris B-LOC\n",
    "task/test/mturk_train_data/W3/D2.txt": "Paris B-LOC\n",
    "task/val/ground_truth/D3.txt": "Bonn B-LOC\nagrees O\n",
    "task/val/mturk_train_data/W1/D3.txt": "Bonn B-LOC\nagrees O\n",
    "task/val/mturk_train_data/W2/D3.txt": "Bonn O\nagrees O\n",
    "task/val/mturk_train_data/W3/D3.txt": "Bonn O\nagrees O\n",
}


def write_zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def write_case(tmp_path: Path, files=FILES, record: str = "", source: str = "task1.zip") -> Path:
    write_zip(tmp_path / "task1.zip", files)
    path = tmp_path / "refsens.toml"
    path.write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "crowd"\npath = "{source}"\n{record}\n'
        '[roles]\nannotators = ["pass_1", "pass_2"]\noutputs = ["pass_1", "pass_2"]\n'
        'references = ["majority", "gold"]\n',
        encoding="utf-8",
    )
    return path


def labelled(item, name):
    return [(item.text[start:end], label) for start, end, label in item.labellings[name]]


def test_sentences_with_passes_in_worker_id_order_gold_and_majority(tmp_path, capsys):
    path = write_case(tmp_path)
    record = load_record(load_config(path))
    assert [item.id for item in record.items] == ["test/D1/1", "test/D1/2", "test/D2/1", "val/D3/1"]
    first, second, paris, bonn = record.items
    assert first.text == "Russian leader visits New York"
    assert first.language == "en"
    assert first.meta["workers"] == ["W1", "W2"] and first.meta["third_pass"] is False
    assert labelled(first, "gold") == [("Russian", "MISC"), ("New York", "LOC")]
    assert labelled(first, "pass_1") == [("Russian", "MISC"), ("New York", "ORG")]
    # W2 split "Russian" into "Russia" "n": the gold token takes the tag of the piece holding its first character
    assert labelled(first, "pass_2") == [("Russian", "LOC"), ("New York", "LOC")]
    assert labelled(second, "pass_2") == [("U.S.", "LOC")]
    # two passes that disagree tie on every token: the majority is a copy of pass_1 there (the silent default)
    assert first.labellings["majority"] == first.labellings["pass_1"]
    assert second.labellings["majority"] == second.labellings["pass_1"] == ()
    assert set(paris.labellings) == {"gold", "pass_1", "majority"}
    # three passes: a real vote, and third_pass says so
    assert bonn.meta["third_pass"] is True
    assert bonn.labellings["majority"] == () and bonn.labellings["pass_1"] == ((0, 4, "LOC"),)
    code, output = validate(path, capsys)
    assert code == 0, output


def test_notes_count_alignment_and_ties(tmp_path):
    record = load_record(load_config(write_case(tmp_path)))
    notes = "\n".join(record.notes)
    assert "3 documents (4 sentences)" in notes and "3 workers, 6 worker files" in notes
    assert "worker tokens aligned to the gold tokens: 19 identical, 2 by characters" in notes
    assert "1 empty-token line skipped" in notes
    assert "5 of 6 worker files match the gold token for token" in notes
    assert "4 tokens tied and went to the earliest pass" in notes


def test_unaligned_worker_tokens_are_counted(tmp_path):
    files = dict(FILES)
    files["task/test/mturk_train_data/W2/D1.txt"] = (
        "Russian B-MISC\nleader O\nvisit O\nNew B-LOC\nYork I-LOC\n\nU.S. B-LOC\nreacts O\n"
    )
    record = load_record(load_config(write_case(tmp_path, files)))
    notes = "\n".join(record.notes)
    assert "1 gold token reached by no worker token (counted as O for that worker)" in notes
    assert "1 worker token matched to no gold token" in notes


def test_documents_mode_and_a_folder_source(tmp_path):
    for name, text in FILES.items():
        target = tmp_path / "unzipped" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    record = load_record(
        load_config(write_case(tmp_path, record='items = "documents"\nsplits = ["test"]\n', source="unzipped"))
    )
    assert [item.id for item in record.items] == ["test/D1", "test/D2"]
    document = record.items[0]
    assert document.text == "Russian leader visits New York\nU.S. reacts"
    assert labelled(document, "pass_2") == [("Russian", "LOC"), ("New York", "LOC"), ("U.S.", "LOC")]


def test_majority_vote_breaks_ties_towards_the_earliest_pass():
    per = ("B", "PER")
    loc = ("B", "LOC")
    out = ("O", "")
    voted, ties = majority_vote([[per, out, loc], [loc, loc, loc], [loc, per, out]])
    assert voted == [loc, out, loc] and ties == 1
    voted, ties = majority_vote([[out, per], [per, out]])
    assert voted == [out, per] and ties == 2


@pytest.mark.parametrize(
    ("member", "text", "expected"),
    [
        (
            "task/test/mturk_train_data/W1/D1.txt",
            "Russian B-NORP\n",
            "task1.zip:task/test/mturk_train_data/W1/D1.txt:1: unknown label 'NORP'",
        ),
        (
            "task/test/mturk_train_data/W1/D1.txt",
            "Russian X-MISC\n",
            "task1.zip:task/test/mturk_train_data/W1/D1.txt:1: tag 'X-MISC' is not O or B-/I-/E-/S-TYPE",
        ),
        (
            "task/test/ground_truth/D1.txt",
            "Russian\n",
            "task1.zip:task/test/ground_truth/D1.txt:1: expected 'token TAG', got 'Russian' (no tag)",
        ),
        (
            "task/test/ground_truth/D1.txt",
            "Russian O\n B-LOC\n",
            "task1.zip:task/test/ground_truth/D1.txt:2: the token is empty",
        ),
        (
            "task/test/ground_truth/D1.txt",
            "\n\n",
            "task1.zip:task/test/ground_truth/D1.txt: the gold file has no tokens",
        ),
        (
            "task/test/ground_truth/D1.txt",
            "R\xfcssel O\n".encode("latin-1"),
            "task1.zip:task/test/ground_truth/D1.txt:1: not valid UTF-8",
        ),
    ],
)
def test_bad_files_name_the_member_and_line(tmp_path, capsys, member, text, expected):
    files = dict(FILES)
    files[member] = text
    code, output = validate(write_case(tmp_path, files, record='labels = ["PER", "LOC", "ORG", "MISC"]\n'), capsys)
    assert code == 2
    assert expected in output
    assert "Traceback" not in output


def test_archive_without_gold_files(tmp_path, capsys):
    code, output = validate(write_case(tmp_path, {"readme.txt": "nothing"}), capsys)
    assert code == 2
    assert "task1.zip: no gold files <split>/ground_truth/<document>.txt found" in output


def test_not_a_zip(tmp_path, capsys):
    path = write_case(tmp_path)
    (tmp_path / "task1.zip").write_text("not a zip")
    code, output = validate(path, capsys)
    assert code == 2
    assert "task1.zip: not a zip archive or a folder" in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('splits = ["train"]\n', "'record.splits': no split 'train' in task1.zip"),
        ('aggregate = "pass_2"\n', "'record.aggregate': 'pass_2' is the name of another labelling"),
        ('aggregate = "gold"\n', "'record.aggregate': 'gold' is the name of another labelling"),
        ('tie_break = "random"\n', "'record.tie_break': unknown key"),
        ('items = "tokens"\n', "'record.items': must be one of sentences, documents"),
    ],
)
def test_config_errors_name_the_key(tmp_path, capsys, record, expected):
    code, output = validate(write_case(tmp_path, record=record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output


def test_missing_archive(tmp_path, capsys):
    path = write_case(tmp_path, source="missing.zip")
    code, output = validate(path, capsys)
    assert code == 2
    assert "Config value 'record.path': not found: missing.zip" in output


def test_dup_key_text(tmp_path):
    files = dict(FILES)
    files["task/test/ground_truth/D2.txt"] = "Bonn B-LOC\nagrees O\n"
    files["task/test/mturk_train_data/W3/D2.txt"] = "Bonn O\nagrees O\n"
    record = load_record(load_config(write_case(tmp_path, files, record='dup_key = "text"\n')))
    keys = {item.id: item.meta["dup_key"] for item in record.items}
    assert keys["test/D2/1"] == keys["val/D3/1"] != keys["test/D1/1"]


def test_a_worker_file_over_the_member_limit_is_refused_by_name(tmp_path, capsys):
    files = dict(FILES)
    files["task/test/mturk_train_data/W1/D1.txt"] += "\n" * 2**21
    config = write_case(tmp_path, files, record="max_member_mib = 1")
    with zipfile.ZipFile(tmp_path / "task1.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    refused(
        config,
        capsys,
        "task1.zip:task/test/mturk_train_data/W1/D1.txt: unpacks to 2.0 MiB, more than the "
        "limit of 1.0 MiB for one file; raise [record] max_member_mib to read it",
    )
