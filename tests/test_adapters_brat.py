"""The brat adapter on small standoff folders written here: spans, discontinuous spans, and every error path."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import validate

from refsens_report.adapters import ADAPTERS
from refsens_report.config import load_config
from refsens_report.load import load_record

TEXT = "Alice works at Acme Corp in New York.\nBob too.\n"


def write_folder(folder: Path, documents: dict[str, tuple[str, str | None]]) -> None:
    for name, (text, ann) in documents.items():
        target = folder / f"{name}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        if ann is not None:
            (folder / f"{name}.ann").write_bytes(ann.encode("utf-8"))


def write_case(tmp_path: Path, first_ann: str, second_ann: str | None = "", record: str = "") -> Path:
    write_folder(tmp_path / "brat" / "a", {"doc1": (TEXT, first_ann), "sub/doc2": ("Carol.", "T1\tPER 0 5\tCarol\n")})
    write_folder(tmp_path / "brat" / "b", {"doc1": (TEXT, second_ann)})
    path = tmp_path / "refsens.toml"
    path.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "brat"\nlanguage = "en"\n'
        f'{record}\n[record.labellings]\nannotator_a = "brat/a"\nannotator_b = {{path = "brat/b"}}\n\n'
        '[roles]\nannotators = ["annotator_a", "annotator_b"]\n'
        'outputs = ["annotator_a"]\nreferences = ["annotator_b"]\n',
        encoding="utf-8",
    )
    return path


FIRST = (
    "T1\tPER 0 5\tAlice\n"
    "T2\tORG 15 24\tAcme Corp\n"
    "T3\tLOC 28 36\tNew York\n"
    "R1\tWorks_for Arg1:T1 Arg2:T2\n"
    "A1\tNegated T3\n"
    "#1\tAnnotatorNotes T1\tcheck\n"
)


def test_documents_become_items_and_t_lines_spans(tmp_path, capsys):
    path = write_case(tmp_path, FIRST, "T1\tPER 0 5\tAlice\nT2\tLOC 38 41\tBob\n")
    record = load_record(load_config(path))
    assert [item.id for item in record.items] == ["doc1", "sub/doc2"]
    doc1, doc2 = record.items
    assert doc1.text == TEXT
    assert doc1.labellings["annotator_a"] == ((0, 5, "PER"), (15, 24, "ORG"), (28, 36, "LOC"))
    assert doc1.labellings["annotator_b"] == ((0, 5, "PER"), (38, 41, "LOC"))
    # the second folder has no sub/doc2: that labelling is absent there, not empty
    assert doc2.labellings == {"annotator_a": ((0, 5, "PER"),)}
    notes = "\n".join(record.notes)
    assert "annotations that are not spans skipped: 1 attribute, 1 note, 1 relation" in notes
    code, output = validate(path, capsys)
    assert code == 0, output


def test_discontinuous_span_is_split_into_fragments_and_counted(tmp_path):
    record = load_record(load_config(write_case(tmp_path, "T1\tORG 15 19;20 24\tAcme Corp\n")))
    assert record.items[0].labellings["annotator_a"] == ((15, 19, "ORG"), (20, 24, "ORG"))
    assert "1 discontinuous span split into 2 fragments, one span each" in "\n".join(record.notes)


def test_empty_ann_is_present_and_missing_ann_is_absent(tmp_path):
    # no .ann anywhere for annotator_b: the roles check would refuse the record, so load it with the adapter alone
    config = load_config(write_case(tmp_path, FIRST, second_ann=None))
    record = ADAPTERS["brat"].load(config.record_options, config.audit.duplicate_key)
    assert "annotator_b" not in record.items[0].labellings
    assert "labelling 'annotator_b' has no .ann file for 1 document: absent there" in "\n".join(record.notes)
    record = load_record(load_config(write_case(tmp_path, FIRST, second_ann="")))
    assert record.items[0].labellings["annotator_b"] == ()


def test_crlf_text_offsets_count_the_carriage_return(tmp_path):
    crlf = TEXT.replace("\n", "\r\n")
    path = write_case(tmp_path, "")
    write_folder(tmp_path / "brat" / "a", {"doc1": (crlf, "T1\tPER 39 42\tBob\r\n")})
    write_folder(tmp_path / "brat" / "b", {"doc1": (crlf, "")})
    record = load_record(load_config(path))
    assert record.items[0].text == crlf
    assert record.items[0].labellings["annotator_a"] == ((39, 42, "PER"),)


@pytest.mark.parametrize(
    ("ann", "expected"),
    [
        ("T1\tPER 0 5\tAlicia\n", "brat/a/doc1.ann:1: the offsets cover 'Alice' but the annotation's text is 'Alicia'"),
        ("T1\tPER 0\tAlice\n", "brat/a/doc1.ann:1: offsets must be 'START END' pairs separated by ';', got '0'"),
        ("T1\tPER 5 5\t\n", "brat/a/doc1.ann:1: fragment '5 5' has start >= end"),
        ("T1\tPER 0 500\tAlice\n", "brat/a/doc1.ann:1: fragment '0 500' ends beyond the text (47 characters)"),
        (
            "T1\tPER 0 5\tAlice\nT1\tLOC 28 36\tNew York\n",
            "brat/a/doc1.ann:2: id 'T1' repeats the annotation at line 1",
        ),
        ("T1 PER 0 5 Alice\n", "brat/a/doc1.ann:1: a T line needs 'ID<TAB>TYPE START END<TAB>TEXT'"),
        ("X1\tsomething\n", "brat/a/doc1.ann:1: not a BRAT annotation line"),
        ("T1\t 0 5\tAlice\n", "brat/a/doc1.ann:1: the annotation has no type before its offsets: ' 0 5'"),
        ("T1\tGPE 28 36\tNew York\n", "brat/a/doc1.ann:1: unknown label 'GPE' (record.labels allows LOC, ORG, PER)"),
    ],
)
def test_bad_ann_lines_name_file_and_line(tmp_path, capsys, ann, expected):
    code, output = validate(write_case(tmp_path, ann, record='labels = ["PER", "ORG", "LOC"]\n'), capsys)
    assert code == 2
    assert expected in output
    assert "Traceback" not in output


def test_texts_that_differ_between_folders_are_an_error(tmp_path, capsys):
    path = write_case(tmp_path, FIRST)
    write_folder(tmp_path / "brat" / "b", {"doc1": (TEXT.replace("Acme", "Acne"), "")})
    code, output = validate(path, capsys)
    assert code == 2
    assert (
        "brat/b/doc1.txt: the text differs from brat/a/doc1.txt at line 1, column 18 ('ne Corp in New York.'... here, "
        "'me Corp in New York.'... there)"
    ) in output


def test_ann_without_txt_and_empty_folder(tmp_path, capsys):
    path = write_case(tmp_path, FIRST)
    (tmp_path / "brat" / "a" / "orphan.ann").write_text("T1\tPER 0 1\tA\n")
    for child in (tmp_path / "brat" / "b").iterdir():
        child.unlink()
    code, output = validate(path, capsys)
    assert code == 2
    assert "brat/a/orphan.ann: no .txt file beside it" in output
    assert "brat/b: no .txt files (labelling 'annotator_b' needs one .txt and .ann per document)" in output


def test_invalid_utf8_text(tmp_path, capsys):
    path = write_case(tmp_path, FIRST)
    (tmp_path / "brat" / "b" / "doc1.txt").write_bytes(b"Caf\xe9")
    code, output = validate(path, capsys)
    assert code == 2
    assert "brat/b/doc1.txt:1: not valid UTF-8 (byte 4 of the line)" in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('root = "nowhere"\n', "'record.root': folder not found: nowhere"),
        ('folders = "brat"\n', "'record.folders': unknown key"),
        ('labels = "PER"\n', "'record.labels': must be a list of non-empty strings"),
    ],
)
def test_config_errors_name_the_key(tmp_path, capsys, record, expected):
    code, output = validate(write_case(tmp_path, FIRST, record=record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output


def test_missing_folder_and_bad_entry(tmp_path, capsys):
    path = write_case(tmp_path, FIRST)
    path.write_text(
        path.read_text().replace('annotator_b = {path = "brat/b"}', 'annotator_b = {path = "brat/c", kind = "x"}')
    )
    code, output = validate(path, capsys)
    assert code == 2
    assert "Config value 'record.labellings.annotator_b.path': folder not found: brat/c" in output
    assert "Config value 'record.labellings.annotator_b.kind': unknown key" in output


def test_root_prefixes_folders(tmp_path):
    path = write_case(tmp_path, FIRST)
    path.write_text(
        path.read_text().replace('language = "en"\n', 'language = "en"\nroot = "brat"\n').replace('"brat/', '"')
    )
    record = load_record(load_config(path))
    assert record.items[0].labellings["annotator_a"][0] == (0, 5, "PER")
    assert (
        "annotator_a: a" in record.notes[0] and "brat/a" not in record.notes[0]
    )  # the dataset's names, under the root


def test_dup_key_text(tmp_path):
    path = write_case(tmp_path, FIRST, record='dup_key = "text"\n')
    write_folder(tmp_path / "brat" / "a", {"copy": (TEXT, "")})
    record = load_record(load_config(path))
    keys = {item.id: item.meta["dup_key"] for item in record.items}
    assert keys["doc1"] == keys["copy"] != keys["sub/doc2"]


def test_record_label_map_applies_to_brat_and_its_labels_check(tmp_path, capsys):
    """label_map is read for every format: the brat adapter accepts a mapped type where record.labels lacks it."""
    path = write_case(
        tmp_path,
        FIRST.replace("ORG 15 24", "COMPANY 15 24"),
        "T1\tPER 0 5\tAlice\nT2\tORG 15 24\tAcme Corp\nT3\tGPE 28 36\tNew York\n",
        record='labels = ["PER", "ORG"]\nlabel_map = { COMPANY = "ORG", LOC = "", GPE = "" }\n',
    )
    record = load_record(load_config(path))
    doc1 = record.items[0]
    assert doc1.labellings["annotator_a"] == ((0, 5, "PER"), (15, 24, "ORG"))
    assert doc1.labellings["annotator_b"] == ((0, 5, "PER"), (15, 24, "ORG"))
    assert (
        "record.label_map: renamed 1 span (COMPANY → ORG 1); dropped 1 GPE span (annotator_b 1); "
        "dropped 1 LOC span (annotator_a 1)"
    ) in record.notes
    code, output = validate(path, capsys)
    assert code == 0, output
