"""The hf-datasets adapter on datasets written here with pyarrow, in the layout datasets documents.

``Dataset.save_to_disk`` writes a folder with the rows as Arrow IPC streams (``data-00000-of-00001.arrow``),
``dataset_info.json`` (the features: ``tokens`` a Sequence of strings, ``ner_tags`` a Sequence of ``ClassLabel``
with its ``names``) and ``state.json`` (which Arrow files, the split); a ``DatasetDict`` adds
``dataset_dict.json`` and a folder per split. ``to_parquet`` and the Hub's Parquet files keep the features in
the schema metadata under ``huggingface``. If the ``datasets`` package is installed, one test also reads a
folder it saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import validate
from refused import refused

from refsens_report.config import load_config
from refsens_report.load import load_record

NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
TOKENS = [
    ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
    ["Peter", "Blackburn"],
    ["BRUSSELS", "1996-08-22"],
]
GOLD = [[3, 0, 7, 0, 0, 0, 7, 0, 0], [1, 2], [5, 0]]
PRED = [["B-ORG", "O", "B-MISC", "O", "O", "O", "O", "O", "O"], ["I-PER", "I-PER"], ["B-LOC", "O"]]


def features(sequence: str = "Sequence") -> dict:
    return {
        "id": {"dtype": "string", "_type": "Value"},
        "tokens": {"feature": {"dtype": "string", "_type": "Value"}, "_type": sequence},
        "ner_tags": {"feature": {"names": NAMES, "_type": "ClassLabel"}, "_type": sequence},
    }


def table(tokens=TOKENS, tags=GOLD, column: str = "ner_tags", metadata: dict | None = None) -> pa.Table:
    columns = {"id": [str(row) for row in range(len(tokens))], "tokens": tokens, column: tags}
    result = pa.table(columns)
    if metadata is not None:
        result = result.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": metadata}})})
    return result


def write_arrow(path: Path, data: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)


def save_to_disk(folder: Path, data: pa.Table | None = None, split: str = "test", info: dict | None = None) -> Path:
    """Write a folder the way Dataset.save_to_disk does (one Arrow shard)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_arrow(folder / "data-00000-of-00001.arrow", table(metadata=features()) if data is None else data)
    (folder / "dataset_info.json").write_text(
        json.dumps(
            {
                "citation": "",
                "description": "",
                "features": features() if info is None else info,
                "homepage": "",
                "license": "",
            }
        )
    )
    (folder / "state.json").write_text(
        json.dumps(
            {
                "_data_files": [{"filename": "data-00000-of-00001.arrow"}],
                "_fingerprint": "4b1c",
                "_format_columns": None,
                "_format_kwargs": {},
                "_format_type": None,
                "_output_all_columns": False,
                "_split": split,
            }
        )
    )
    return folder


def write_config(
    tmp_path: Path, path: str, record: str = "", labellings: str = 'gold = "ner_tags"', roles: str = ""
) -> Path:
    config = tmp_path / "refsens.toml"
    config.write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "hf-datasets"\npath = "{path}"\nlanguage = "en"\n'
        f"{record}\n[record.labellings]\n{labellings}\n\n"
        + (roles or '[roles]\noutputs = ["gold"]\nreferences = ["gold"]\n'),
        encoding="utf-8",
    )
    return config


def test_a_saved_dataset_folder_gives_one_item_per_row_with_spans_at_character_offsets(tmp_path, capsys):
    save_to_disk(tmp_path / "conllpp_test")
    record = load_record(load_config(write_config(tmp_path, "conllpp_test")))
    assert [item.id for item in record.items] == ["0", "1", "2"]
    first = record.items[0]
    assert first.text == "EU rejects German call to boycott British lamb ."
    assert first.labellings["gold"] == ((0, 2, "ORG"), (11, 17, "MISC"), (34, 41, "MISC"))
    assert record.items[1].labellings["gold"] == ((0, 15, "PER"),)
    assert record.items[2].meta == {"row": 2, "split": "test"}
    notes = "\n".join(record.notes)
    assert "3 rows of conllpp_test (split test)" in notes
    assert "tag names from the dataset's features (ClassLabel); IOB2 (detected)" in notes
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0, output


def test_a_dataset_dict_folder_needs_its_split(tmp_path, capsys):
    root = tmp_path / "conllpp"
    save_to_disk(root / "validation", table(TOKENS[1:], GOLD[1:], metadata=features()), split="validation")
    save_to_disk(root / "test")
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["validation", "test"]}))
    refused(
        write_config(tmp_path, "conllpp"),
        capsys,
        "conllpp: a DatasetDict with the splits validation, test: set record.split to one",
    )
    refused(
        write_config(tmp_path, "conllpp", 'split = "train"'),
        capsys,
        "conllpp: no split 'train' (record.split); the splits are validation, test",
    )
    record = load_record(load_config(write_config(tmp_path, "conllpp", 'split = "validation"')))
    assert [item.text for item in record.items] == ["Peter Blackburn", "BRUSSELS 1996-08-22"]


def test_parquet_files_and_a_labelling_from_another_file_with_string_tags(tmp_path):
    pq.write_table(table(metadata=features("List")), tmp_path / "test.parquet")  # datasets 4 writes "List"
    pq.write_table(table(tags=PRED, column="pred"), tmp_path / "predictions.parquet")
    record = load_record(
        load_config(
            write_config(
                tmp_path,
                "test.parquet",
                labellings='gold = "ner_tags"\nmodel = { column = "pred", path = "predictions.parquet" }',
                roles='[roles]\noutputs = ["model"]\nreferences = ["gold"]\n',
            )
        )
    )
    assert record.items[0].labellings["model"] == ((0, 2, "ORG"), (11, 17, "MISC"))
    assert record.items[1].labellings["model"] == ((0, 15, "PER"),)  # I-PER I-PER read the conlleval way
    notes = "\n".join(record.notes)
    assert (
        "labelling 'model' from column 'pred' of predictions.parquet; tag names from the strings in the column; "
        "IOB2 (detected), 1 invalid tag read the conlleval way (first at predictions.parquet: row 1, token 0)"
    ) in notes


def test_an_arrow_file_without_features_takes_tag_names_from_the_config(tmp_path, capsys):
    write_arrow(tmp_path / "plain.arrow", table())
    refused(
        write_config(tmp_path, "plain.arrow"),
        capsys,
        "plain.arrow: 'ner_tags' holds integers but the dataset's features give no ClassLabel names",
    )
    names = json.dumps(NAMES)
    record = load_record(load_config(write_config(tmp_path, "plain.arrow", f"tag_names = {names}")))
    assert record.items[0].labellings["gold"] == ((0, 2, "ORG"), (11, 17, "MISC"), (34, 41, "MISC"))
    assert "tag names from record.tag_names" in "\n".join(record.notes)


def test_a_folder_saved_by_the_datasets_package(tmp_path):
    datasets = pytest.importorskip("datasets", reason="the datasets package is not installed (it is not a dependency)")
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=NAMES)),
        }
    )
    saved = datasets.Dataset.from_dict({"id": ["0", "1", "2"], "tokens": TOKENS, "ner_tags": GOLD}, features=features)
    saved.save_to_disk(str(tmp_path / "saved"))
    pq_path = tmp_path / "saved.parquet"
    saved.to_parquet(str(pq_path))
    for path in ("saved", "saved.parquet"):
        record = load_record(load_config(write_config(tmp_path, path)))
        assert record.items[0].labellings["gold"] == ((0, 2, "ORG"), (11, 17, "MISC"), (34, 41, "MISC"))


def folder_with(tmp_path: Path, data: pa.Table) -> Path:
    save_to_disk(tmp_path / "ds", data)
    return tmp_path


@pytest.mark.parametrize(
    "data, record, labellings, expected",
    [
        (
            table(tags=[GOLD[0][:-1], GOLD[1], GOLD[2]]),
            "",
            'gold = "ner_tags"',
            ["ds: row 0, 'ner_tags': 8 tags for 9 tokens"],
        ),
        (
            table(tags=[GOLD[0], [1, 12], GOLD[2]]),
            "",
            'gold = "ner_tags"',
            ["ds: row 1, 'ner_tags', token 1: tag 12 is not one of the 9 names of the dataset's features"],
        ),
        (
            table(tags=[PRED[0], ["B-PER", "X-PER"], PRED[2]], column="pred"),
            "",
            'gold = "pred"',
            ["ds: row 1, 'pred', token 1: tag 'X-PER' is not O or B-/I-/E-/S-TYPE"],
        ),
        (None, "", 'gold = "ner"', ["ds: no column 'ner' (record.labellings.gold); its columns: id, tokens, ner_tags"]),
        (None, 'tokens_column = "words"', 'gold = "ner_tags"', ["ds: no column 'words' (record.tokens_column)"]),
        (None, 'labels = ["PER", "LOC"]', 'gold = "ner_tags"', ["ds: row 0, 'ner_tags', token 0: unknown label 'ORG'"]),
        (
            table(tags=[PRED[0], ["S-PER", "O"], PRED[2]], column="pred"),
            'scheme = "iob2"',
            'gold = "pred"',
            ["ds: row 1, 'pred', token 0: 'S-PER' belongs to BIOES, but the scheme is 'iob2'"],
        ),
        (
            None,
            "",
            'gold = "ner_tags"\nother = { column = "ner_tags", path = "other.parquet" }',
            [
                "other.parquet: row 1 has other tokens than ds (['Peter', 'Blackburn.'] here, "
                "['Peter', 'Blackburn'] there)"
            ],
        ),
        (
            None,
            'split = "test"',
            'gold = "ner_tags"',
            ["ds: record.split is set, but the folder has no dataset_dict.json (not a DatasetDict)"],
        ),
    ],
)
def test_malformed_datasets_are_refused_at_their_row(tmp_path, capsys, data, record, labellings, expected):
    save_to_disk(tmp_path / "ds", data)
    pq.write_table(
        table(tokens=[TOKENS[0], ["Peter", "Blackburn."], TOKENS[2]], metadata=features()), tmp_path / "other.parquet"
    )
    refused(write_config(tmp_path, "ds", record, labellings), capsys, *expected)


def test_broken_folders_and_files(tmp_path, capsys):
    save_to_disk(tmp_path / "ds")
    (tmp_path / "ds" / "state.json").unlink()
    refused(write_config(tmp_path, "ds"), capsys, "ds: no state.json: not a folder written by datasets' save_to_disk")
    save_to_disk(tmp_path / "ds")
    (tmp_path / "ds" / "data-00000-of-00001.arrow").write_bytes(b"not arrow at all")
    refused(write_config(tmp_path, "ds"), capsys, "ds/data-00000-of-00001.arrow: not an Arrow or Parquet file")
    save_to_disk(tmp_path / "ds")
    (tmp_path / "ds" / "state.json").write_text('{"_data_files": [\n')
    refused(write_config(tmp_path, "ds"), capsys, "ds/state.json:2: invalid JSON")


def test_every_bad_row_of_every_labelling_in_one_run(tmp_path, capsys):
    data = table(tags=[[3, 0], [1, 99], GOLD[2]], metadata=features())
    data = data.append_column("pred", pa.array([PRED[0], ["B-PER", "Q"], PRED[2]]))
    save_to_disk(tmp_path / "ds", data)
    err = refused(
        write_config(tmp_path, "ds", labellings='gold = "ner_tags"\nmodel = "pred"'),
        capsys,
        "row 0, 'ner_tags': 2 tags for 9 tokens",
        "row 1, 'ner_tags', token 1: tag 99",
        "row 1, 'pred', token 1: tag 'Q'",
    )
    assert len(err.strip().splitlines()) == 3


# ----------------------------------------------------------------------------------------------------------
# real data: CoNLL++ (published on the Hub as a dataset with ClassLabel tags), written here as such a Parquet
# file from ../shared/data (never copied into the project), must give the conll adapter's spans

CONLLPP = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll" / "conllpp" / "conllpp_test.txt"


@pytest.mark.skipif(
    not CONLLPP.is_file(), reason=f"real data not found at {CONLLPP} (the shared data folder lives beside the project)"
)
def test_conllpp_as_a_hub_parquet_file_gives_the_conll_adapters_spans(tmp_path):
    sentences, current = [], []
    for line in CONLLPP.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if current:
                sentences.append(current)
            current = []
        elif not line.startswith("-DOCSTART-"):
            current.append(line.split())
    data = table(
        tokens=[[row[0] for row in sentence] for sentence in sentences],
        tags=[[NAMES.index(row[-1]) for row in sentence] for sentence in sentences],
        metadata=features(),
    )
    pq.write_table(data, tmp_path / "conllpp-test.parquet")
    record = load_record(load_config(write_config(tmp_path, "conllpp-test.parquet")))
    conll = tmp_path / "conll"
    conll.mkdir()
    (conll / "refsens.toml").write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "conll"\nlanguage = "en"\n'
        f'[record.labellings]\ngold = "{CONLLPP}"\n[roles]\noutputs = ["gold"]\nreferences = ["gold"]\n',
        encoding="utf-8",
    )
    reference = load_record(load_config(conll / "refsens.toml"))
    assert len(record.items) == len(reference.items) == 3453
    assert [item.text for item in record.items] == [item.text for item in reference.items]
    assert [item.labellings["gold"] for item in record.items] == [item.labellings["gold"] for item in reference.items]
    assert sum(len(item.labellings["gold"]) for item in record.items) == 5702  # B- tags above: one span each


@pytest.mark.parametrize(
    "metadata, expected",
    [
        (b'{"info": "not an object"}', None),
        (b"[1, 2]", None),
        (b'"features"', None),
        (b'{"info": {"features": ["x"]}}', None),
        (
            b"[" * 100_000 + b"]" * 100_000,
            "test.parquet: the schema's 'huggingface' metadata is not JSON (nested too deeply)",
        ),
    ],
)
def test_schema_metadata_of_another_shape_is_ignored_or_refused_in_one_line(tmp_path, capsys, metadata, expected):
    """Metadata that is not datasets' shape gives no features (tag names then come from the config)."""
    data = table(tags=PRED, column="pred").replace_schema_metadata({"huggingface": metadata})
    pq.write_table(data, tmp_path / "test.parquet")
    config = write_config(tmp_path, "test.parquet", labellings='gold = "pred"')
    if expected is None:
        assert len(load_record(load_config(config)).items) == 3
    else:
        refused(config, capsys, expected)


def not_utf8(values: list, row: int, position: int | None) -> pa.Array:
    """Return a string column (or a list of strings, with ``position``) with bytes that are not UTF-8 at a row."""
    if position is None:
        raw = [value.encode() for value in values]
        raw[row] = b"\xff"
        return pa.array(raw, pa.binary()).view(pa.string())
    raw = [[token.encode() for token in tokens] for tokens in values]
    raw[row][position] = b"caf\xe9"
    return pa.array(raw, pa.list_(pa.binary())).cast(pa.list_(pa.binary())).view(pa.list_(pa.string()))


@pytest.mark.parametrize(
    "column, expected",
    [
        ("tokens", "test.parquet: row 2, column 'tokens' holds text that is not valid UTF-8"),
        ("id", "test.parquet: row 1, column 'id' holds text that is not valid UTF-8"),
    ],
)
def test_a_token_or_id_that_is_not_utf8_is_refused_at_its_row(tmp_path, capsys, column, expected):
    data = table(metadata=features())
    if column == "tokens":
        data = data.set_column(1, "tokens", not_utf8(TOKENS, 2, 1))
    else:
        data = data.set_column(0, "id", not_utf8(["0", "1", "2"], 1, None))
    pq.write_table(data, tmp_path / "test.parquet")
    refused(write_config(tmp_path, "test.parquet"), capsys, expected)
