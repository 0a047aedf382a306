"""The conll adapter on small files written here: schemes, repairs, alignment, and every error path."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import validate
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics.sequence_labeling import get_entities

from refsens_report.adapters import iob
from refsens_report.config import load_config
from refsens_report.errors import InputError
from refsens_report.load import load_record

GOLD = """\
-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O
"""

PREDICTIONS = """\
EU B-ORG B-ORG
rejects O O
German B-MISC B-MISC
call O O
. O O

Peter B-PER B-PER
Blackburn I-PER O

BRUSSELS B-LOC B-ORG
1996-08-22 O O
"""


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def config(tmp_path: Path, record: str, outputs=("pred",), references=("gold",), annotators=()) -> Path:
    """Write a refsens.toml with the given [record] body and roles."""
    roles = (
        f"annotators = {list(annotators)!r}\noutputs = {list(outputs)!r}\nreferences = {list(references)!r}\n"
    ).replace("'", '"')
    path = tmp_path / "refsens.toml"
    path.write_text(
        f'[dataset]\nname = "test"\nversion = "1"\n\n[record]\nformat = "conll"\nlanguage = "en"\n{record}\n'
        f"[roles]\n{roles}",
        encoding="utf-8",
    )
    return path


def load(path: Path):
    return load_record(load_config(path))


def two_files(tmp_path: Path, extra: str = "") -> Path:
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.txt", PREDICTIONS)
    return config(
        tmp_path,
        f"""{extra}
[record.labellings.gold]
path = "gold.txt"
column = 4

[record.labellings.pred]
path = "pred.txt"
column = 3
gold_column = 2
""",
    )


def spans_with_text(item, name):
    return [(item.text[start:end], label) for start, end, label in item.labellings[name]]


def test_sentences_become_items_with_text_from_tokens_joined_by_spaces(tmp_path, capsys):
    path = two_files(tmp_path)
    record = load(path)
    assert [item.id for item in record.items] == ["sentence-1", "sentence-2", "sentence-3"]
    first = record.items[0]
    assert first.text == "EU rejects German call ."
    assert first.language == "en"
    assert first.labellings["gold"] == ((0, 2, "ORG"), (11, 17, "MISC"))
    assert spans_with_text(record.items[1], "pred") == [("Peter", "PER")]
    assert spans_with_text(record.items[2], "pred") == [("BRUSSELS", "ORG")]
    assert first.meta == {"line": 3, "document": 1}
    assert record.items[2].meta["document"] == 2
    assert [(source.path, source.name) for source in record.sources] == [
        ((tmp_path / "gold.txt").resolve(), "gold.txt"),
        ((tmp_path / "pred.txt").resolve(), "pred.txt"),
    ]
    code, output = validate(path, capsys)
    assert code == 0, output
    assert "3 items" in output


def test_documents_are_items_when_asked(tmp_path):
    record = load(two_files(tmp_path, 'items = "documents"'))
    assert [item.id for item in record.items] == ["document-1", "document-2"]
    document = record.items[0]
    assert document.text == "EU rejects German call .\nPeter Blackburn"
    assert spans_with_text(document, "gold") == [("EU", "ORG"), ("German", "MISC"), ("Peter Blackburn", "PER")]
    assert spans_with_text(document, "pred") == [("EU", "ORG"), ("German", "MISC"), ("Peter", "PER")]


def test_documents_need_docstart_lines(tmp_path, capsys):
    write(tmp_path / "a.txt", "EU B-ORG\n")
    write(tmp_path / "b.txt", "EU O\n")
    path = config(tmp_path, 'items = "documents"\nlabellings = {gold = "a.txt", pred = "b.txt"}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert "a.txt" in output and "-DOCSTART-" in output and "Traceback" not in output


def test_iob1_inside_tag_starts_a_span_and_b_separates_adjacent_spans(tmp_path):
    write(tmp_path / "iob1.txt", "Japan I-LOC\nChina I-LOC\nand O\nKorea B-LOC\nwin O\nIndia I-LOC\nB-LOC_ B-LOC\n")
    write(tmp_path / "iob2.txt", "Japan B-LOC\nChina I-LOC\nand O\nKorea B-LOC\nwin O\nIndia B-LOC\nB-LOC_ B-LOC\n")
    record = load(config(tmp_path, 'labellings = {pred = "iob1.txt", gold = "iob2.txt"}\n'))
    item = record.items[0]
    assert spans_with_text(item, "pred") == [
        ("Japan China", "LOC"),
        ("Korea", "LOC"),
        ("India", "LOC"),
        ("B-LOC_", "LOC"),
    ]
    assert item.labellings["pred"] == item.labellings["gold"]
    notes = "\n".join(record.notes)
    assert "'pred'" in notes and "IOB1 (detected)" in notes
    # in IOB1 a B- after O is invalid (B- only separates two adjacent chunks), read as a chunk start
    assert "1 invalid tag read the conlleval way (first at iob1.txt:4)" in notes


def test_bioes_singletons_and_multi_token_spans(tmp_path):
    write(tmp_path / "bioes.txt", "Peter B-PER\nBlackburn E-PER\nin O\nParis S-LOC\nEU S-ORG\n. O\n")
    write(tmp_path / "iob2.txt", "Peter B-PER\nBlackburn I-PER\nin O\nParis B-LOC\nEU B-ORG\n. O\n")
    record = load(config(tmp_path, 'labellings = {pred = "bioes.txt", gold = "iob2.txt"}\n'))
    item = record.items[0]
    assert spans_with_text(item, "pred") == [("Peter Blackburn", "PER"), ("Paris", "LOC"), ("EU", "ORG")]
    assert item.labellings["pred"] == item.labellings["gold"]
    assert "BIOES (detected)" in "\n".join(record.notes)
    assert "invalid" not in record.notes[1]


def test_invalid_iob2_is_read_like_conlleval_and_counted(tmp_path):
    write(tmp_path / "gold.txt", "a O\nb I-PER\nc I-LOC\nd O\n\ne B-ORG\nf I-ORG\n")
    record = load(config(tmp_path, 'scheme = "iob2"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n'))
    assert spans_with_text(record.items[0], "gold") == [("b", "PER"), ("c", "LOC")]
    note = record.notes[1]
    assert "IOB2 (configured), 2 invalid tags read the conlleval way (first at gold.txt:2)" in note


def test_empty_sentence_and_all_outside_sentence(tmp_path):
    write(tmp_path / "gold.txt", "a B-PER\n\n\n\nb O\nc O\n\n")
    record = load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "gold.txt"}\n'))
    assert [item.text for item in record.items] == ["a", "b c"]
    # a sentence with no entity is present-but-empty, not absent
    assert record.items[1].labellings == {"gold": (), "pred": ()}


def test_crlf_line_endings_read_like_lf(tmp_path):
    write(tmp_path / "gold.txt", GOLD, newline="\r\n")
    write(tmp_path / "pred.txt", PREDICTIONS, newline="\r\n")
    crlf = load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = {path = "pred.txt", column = 3}}\n'))
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.txt", PREDICTIONS)
    lf = load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = {path = "pred.txt", column = 3}}\n'))
    assert crlf.items == lf.items
    assert "\r" not in crlf.items[0].text


def test_merged_sentences_are_aligned_and_a_span_across_the_boundary_is_split(tmp_path):
    write(tmp_path / "gold.txt", "National B-ORG\nHockey I-ORG\n\nLeague B-ORG\nteams O\n")
    write(tmp_path / "merged.txt", "National B-ORG\nHockey I-ORG\nLeague I-ORG\nteams O\n")
    record = load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "merged.txt"}\n'))
    assert [item.text for item in record.items] == ["National Hockey", "League teams"]
    assert [spans_with_text(item, "pred") for item in record.items] == [
        [("National Hockey", "ORG")],
        [("League", "ORG")],
    ]
    note = record.notes[2]
    assert "aligned by characters (sentence splits differ)" in note
    assert "1 span crossing a sentence boundary of the first file split at it (first at merged.txt:1)" in note


def test_retokenised_file_is_aligned_through_characters(tmp_path):
    write(tmp_path / "gold.txt", "SKIING-WORLD B-MISC\nCUP I-MISC\nresults O\n")
    write(tmp_path / "clean.txt", "SKIING\tB-MISC\n-\tO\nWORLD\tB-MISC\nCUP\tI-MISC\nresults\tO\n")
    record = load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "clean.txt"}\n'))
    item = record.items[0]
    assert item.text == "SKIING-WORLD CUP results"
    assert spans_with_text(item, "pred") == [("SKIING", "MISC"), ("WORLD CUP", "MISC")]
    assert "aligned by characters (tokenisation differs); 2 spans start or end inside a token" in record.notes[2]


def test_unalignable_file_names_where_the_texts_part(tmp_path, capsys):
    write(tmp_path / "gold.txt", "EU B-ORG\nrejects O\n\nGerman B-MISC\ncall O\n")
    write(tmp_path / "pred.txt", "EU B-ORG\nrejects O\n\nGermany B-LOC\ncall O\n")
    code, output = validate(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "pred.txt"}\n'), capsys)
    assert code == 2
    assert (
        "error: pred.txt:4: cannot be aligned with gold.txt: after the same 15 non-whitespace characters "
        "(...'EUrejectsGerman') this file has 'ycall' (token 'Germany') where gold.txt:5 has 'call' (token 'call')"
    ) in output


def test_a_shorter_file_parts_at_its_end(tmp_path, capsys):
    write(tmp_path / "gold.txt", "EU B-ORG\nrejects O\n")
    write(tmp_path / "pred.txt", "EU B-ORG\n")
    code, output = validate(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "pred.txt"}\n'), capsys)
    assert code == 2
    assert "pred.txt:1: cannot be aligned with gold.txt" in output
    assert "this file has the end of the text (the end of its tokens) where gold.txt:2 has 'rejects'" in output


def test_gold_column_is_checked_against_the_configured_gold(tmp_path, capsys):
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.txt", PREDICTIONS.replace("Blackburn I-PER O", "Blackburn O O"))
    path = config(
        tmp_path,
        'gold = "gold"\n'
        'labellings = {gold = {path = "gold.txt"}, pred = {path = "pred.txt", column = 3, gold_column = 2}}\n',
    )
    code, output = validate(path, capsys)
    assert code == 2
    assert (
        "error: pred.txt:7: the gold column 2 disagrees with labelling 'gold' on sentence 'sentence-2' "
        "(1 span only in the file, 1 only in 'gold')"
    ) in output
    assert "pred.txt: the gold column 2 disagrees with labelling 'gold' on 1 sentence in all" in output


def test_matching_gold_column_passes(tmp_path, capsys):
    code, output = validate(two_files(tmp_path, 'gold = "gold"'), capsys)
    assert code == 0, output


@pytest.mark.parametrize(
    ("gold_text", "column", "expected"),
    [
        ("EU NNP\n", 3, "gold.txt:1: has 2 columns; the tag column 3 is missing"),
        ("EU\n", -1, "gold.txt:1: has 1 column, which is read as the token; tags only? set token_column = 0"),
        ("EU\n", 1, "gold.txt:1: has 1 column, which is read as the token; tags only? set token_column = 0"),
        ("EU\n", 2, "gold.txt:1: has 1 column; the tag column 2 is missing; tags only? set token_column = 0"),
        (
            "EU NNP B-ORG\n",
            1,
            "gold.txt:1: has 3 columns; the tag column 1 is the token column 1: set column to the tag's column",
        ),
        ("EU B_ORG\n", -1, "gold.txt:1: tag 'B_ORG' is not O or B-/I-/E-/S-TYPE"),
        ("EU B-\n", -1, "gold.txt:1: tag 'B-' is not O or B-/I-/E-/S-TYPE"),
        ("\n-DOCSTART- O\n\n", -1, "gold.txt: no token lines"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, capsys, gold_text, column, expected):
    write(tmp_path / "gold.txt", gold_text)
    write(tmp_path / "pred.txt", "EU O\n")
    path = config(tmp_path, f'labellings = {{gold = {{path = "gold.txt", column = {column}}}, pred = "pred.txt"}}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert expected in output
    assert "Traceback" not in output


def test_invalid_utf8_names_the_line(tmp_path, capsys):
    (tmp_path / "gold.txt").write_bytes(b"EU B-ORG\nM\xfcnchen B-LOC\n")
    write(tmp_path / "pred.txt", "EU O\n")
    code, output = validate(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "pred.txt"}\n'), capsys)
    assert code == 2
    assert "gold.txt:2: not valid UTF-8 (byte 2 of the line)" in output


def test_unknown_labels_are_errors_when_labels_are_listed(tmp_path, capsys):
    write(tmp_path / "gold.txt", "EU B-ORG\nrejects O\nGerman B-NATIONALITY\n")
    path = config(tmp_path, 'labels = ["ORG", "MISC"]\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert "gold.txt:3: tag has an unknown label 'NATIONALITY' (record.labels allows MISC, ORG)" in output


def test_bioes_tag_under_a_configured_iob_scheme_is_an_error(tmp_path, capsys):
    write(tmp_path / "gold.txt", "EU S-ORG\n")
    path = config(tmp_path, 'scheme = "iob2"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert "gold.txt:1: tag 'S-ORG' belongs to BIOES, but the scheme is 'iob2'" in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            'labellings = {gold = "missing.txt", pred = "gold.txt"}\n',
            "'record.labellings.gold.path': file not found: missing.txt",
        ),
        (
            'labellings = {gold = {path = "gold.txt", colour = 3}, pred = "gold.txt"}\n',
            "'record.labellings.gold.colour': unknown key",
        ),
        (
            'labellings = {gold = {path = "gold.txt", column = 0}, pred = "gold.txt"}\n',
            "'record.labellings.gold.column': must be a non-zero integer",
        ),
        (
            'labellings = {gold = {path = "gold.txt", column = "4"}, pred = "gold.txt"}\n',
            "'record.labellings.gold.column': must be a non-zero integer",
        ),
        ('labellings = {gold = 4, pred = "gold.txt"}\n', "'record.labellings.gold': must be a path or a table"),
        (
            'labellings = {gold = {path = "gold.txt", scheme = "bilou"}, pred = "gold.txt"}\n',
            "'record.labellings.gold.scheme': must be one of auto, iob1, iob2, bioes",
        ),
        ("", "'record.labellings': is required"),
        ('labellings = "gold.txt"\n', "'record.labellings': must be a table"),
        (
            'items = "paragraphs"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n',
            "'record.items': must be one of sentences, documents",
        ),
        ('tokens = 1\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n', "'record.tokens': unknown key"),
        (
            'gold = "nope"\nlabellings = {gold = "gold.txt", pred = {path = "gold.txt", gold_column = 2}}\n',
            "'record.gold': 'nope' is not one of record.labellings",
        ),
        (
            'gold = "gold"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n',
            "'record.gold': names the labelling gold columns are checked against, but no labelling sets gold_column",
        ),
        (
            'root = "elsewhere"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n',
            "'record.root': folder not found: elsewhere",
        ),
    ],
)
def test_config_errors_name_the_key(tmp_path, capsys, record, expected):
    write(tmp_path / "gold.txt", "EU B-ORG\n")
    code, output = validate(config(tmp_path, record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output
    assert "Traceback" not in output


def test_language_is_required(tmp_path, capsys):
    write(tmp_path / "gold.txt", "EU B-ORG\n")
    path = config(tmp_path, 'labellings = {gold = "gold.txt", pred = "gold.txt"}\n')
    path.write_text(path.read_text().replace('language = "en"\n', ""))
    code, output = validate(path, capsys)
    assert code == 2
    assert "Config value 'record.language': is required" in output


def test_root_makes_paths_relative_to_one_data_folder(tmp_path):
    (tmp_path / "data").mkdir()
    write(tmp_path / "data" / "gold.txt", "EU B-ORG\n")
    record = load(config(tmp_path, 'root = "data"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n'))
    assert record.items[0].labellings["gold"] == ((0, 2, "ORG"),)
    # the notes (printed in the appendix) name the dataset's files under the root, not the builder's folders
    assert "from gold.txt;" in record.notes[0] and "data/" not in record.notes[0]
    # messages name the file from the config's folder; the provenance by its path as written, under the root
    assert [(source.display, source.name) for source in record.sources] == [("data/gold.txt", "gold.txt")]


def test_an_absolute_path_under_root_is_shown_as_written(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere / "gold.txt", "EU B-ORG\n")
    write(elsewhere / "pred.txt", "EU\n")  # a bad file, so the message shows how the path is named
    absolute = (elsewhere / "pred.txt").as_posix()
    path = config(
        tmp_path, f'root = "data"\nlabellings = {{gold = "{elsewhere.as_posix()}/gold.txt", pred = "{absolute}"}}\n'
    )
    code, output = validate(path, capsys)
    assert code == 2
    assert f"{absolute}:1:" in output and "data//" not in output and f"data/{absolute}" not in output


def test_language_code_no_stays_a_string(tmp_path):
    write(tmp_path / "gold.txt", "Oslo B-LOC\n")
    path = config(tmp_path, 'labellings = {gold = "gold.txt", pred = "gold.txt"}\n')
    path.write_text(path.read_text().replace('language = "en"', 'language = "no"'))
    assert load(path).items[0].language == "no"


def test_loaded_record_raises_input_error_not_another_exception(tmp_path):
    write(tmp_path / "gold.txt", "EU B-ORG\n")
    write(tmp_path / "pred.txt", "EU\n")
    with pytest.raises(InputError):
        load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "pred.txt"}\n'))


TAGS = st.sampled_from(["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC"])


@settings(max_examples=300, deadline=None)
@given(st.lists(TAGS, max_size=12))
def test_decoding_reads_tags_exactly_like_seqeval(tags):
    """seqeval's default mode is the Python port of conlleval: decoding must agree with it on any sequence."""
    ours = iob.decode([iob.parse_tag(tag) for tag in tags])
    theirs = [(start, end + 1, label) for label, start, end in get_entities(list(tags))]
    assert sorted(ours) == sorted(theirs)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 3), st.sampled_from(["PER", "LOC"])), max_size=4))
def test_iob2_encoding_round_trips_through_decoding(raw_spans):
    length = 12
    spans, taken = [], set()
    for start, width, label in raw_spans:
        cells = set(range(start, start + width))
        if cells & taken:
            continue
        taken |= cells
        spans.append((start, start + width, label))
    tags = iob.encode_iob2(spans, length)
    assert sorted(iob.decode(tags)) == sorted(spans)
    assert iob.invalid_positions(tags, "iob2") == []


def test_dup_key_text_groups_items_with_the_same_text(tmp_path):
    write(tmp_path / "gold.txt", "LONDON B-LOC\n\nEU B-ORG\n\nLONDON B-LOC\n")
    record = load(config(tmp_path, 'dup_key = "text"\nlabellings = {gold = "gold.txt", pred = "gold.txt"}\n'))
    keys = [item.meta["dup_key"] for item in record.items]
    assert keys[0] == keys[2] != keys[1]
    assert (
        "dup_key" not in load(config(tmp_path, 'labellings = {gold = "gold.txt", pred = "gold.txt"}\n')).items[0].meta
    )


# ----------------------------------------------------------------------------------------------------------
# tags-only files (token_column = 0): one tag per line, laid line by line on the first labelling's file

# the prediction column of PREDICTIONS laid out line by line on GOLD: a tag ("O") on each -DOCSTART- line
TAGS_ONLY = """\
O

B-ORG
O
B-MISC
O
O

B-PER
O

O

B-ORG
O
"""


def test_tags_only_file_reads_like_the_same_tags_with_tokens(tmp_path, capsys):
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.txt", PREDICTIONS)
    write(tmp_path / "pred.tags", TAGS_ONLY)
    path = config(
        tmp_path,
        'labellings = {gold = {path = "gold.txt", column = 4}, pred = {path = "pred.txt", column = 3}, '
        'tags = {path = "pred.tags", token_column = 0}}\n',
        outputs=("pred", "tags"),
    )
    record = load(path)
    assert [item.labellings["tags"] for item in record.items] == [item.labellings["pred"] for item in record.items]
    assert spans_with_text(record.items[2], "tags") == [("BRUSSELS", "ORG")]
    assert "labelling 'tags' (pred.tags, tags only, column 1): IOB2 (detected); 4 spans" in record.notes[3]
    assert "aligned" not in record.notes[3]
    code, output = validate(path, capsys)
    assert code == 0, output


def test_tags_only_file_with_several_columns_and_a_gold_column(tmp_path):
    write(tmp_path / "gold.txt", GOLD)
    gold_tags = ["O", "", "B-ORG", "O", "B-MISC", "O", "O", "", "B-PER", "I-PER", "", "O", "", "B-LOC", "O"]
    lines = [f"{gold}\t{pred}" if gold else "" for gold, pred in zip(gold_tags, TAGS_ONLY.split("\n"))]
    write(tmp_path / "pred.tags", "\n".join(lines) + "\n")
    record = load(
        config(
            tmp_path,
            'token_column = 0\ngold = "gold"\n'
            'labellings = {gold = {path = "gold.txt", column = 4, token_column = 1}, '
            'pred = {path = "pred.tags", column = 2, gold_column = 1}}\n',
        )
    )
    assert spans_with_text(record.items[1], "pred") == [("Peter", "PER")]


def test_tags_only_file_on_a_first_file_without_docstart_lines(tmp_path):
    write(tmp_path / "pred.txt", PREDICTIONS)
    tags = "B-ORG\nO\nB-MISC\nO\nO\n\nB-PER\nO\n\nB-ORG\nO\n\n\n"  # blank lines at the end do not count
    write(tmp_path / "pred.tags", tags)
    record = load(
        config(
            tmp_path,
            'labellings = {pred = "pred.txt", tags = {path = "pred.tags", token_column = 0}}\n',
            references=("tags",),
        )
    )
    assert [item.labellings["tags"] for item in record.items] == [item.labellings["pred"] for item in record.items]


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (  # the -DOCSTART- lines left out: everything after them is off by one
            TAGS_ONLY.replace("O\n\n", "", 1),
            "pred.tags:2: a tag line ('O'), where gold.txt:2 is blank: a tags-only file (token_column = 0) needs "
            "one line per line of the first labelling's file, blank where it is blank (pred.tags has 13 lines, "
            "gold.txt 15, blank lines at the end aside); a tags-only file keeps a line, with any tag, for each "
            "-DOCSTART- line of gold.txt",
        ),
        (  # a blank line missing between two sentences
            TAGS_ONLY.replace("O\n\nB-PER", "O\nB-PER"),
            "pred.tags:8: a tag line ('B-PER'), where gold.txt:8 is blank",
        ),
        (  # a tag missing inside a sentence
            TAGS_ONLY.replace("B-PER\nO\n", "B-PER\n\n"),
            "pred.tags:10: no tag (a blank line or the end of the file), where gold.txt:10 has a token "
            "('Blackburn NNP I-NP I-PER')",
        ),
        (  # the last tag missing
            TAGS_ONLY[: -len("O\n")],
            "pred.tags:15: no tag (a blank line or the end of the file), where gold.txt:15 has a token",
        ),
        (  # a tag too many at the end
            TAGS_ONLY + "O\n",
            "pred.tags:16: a tag line ('O'), where gold.txt:16 is past its last line",
        ),
    ],
)
def test_tags_only_line_mismatch_names_both_files_lines(tmp_path, capsys, tags, expected):
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.tags", tags)
    path = config(tmp_path, 'labellings = {gold = "gold.txt", pred = {path = "pred.tags", token_column = 0}}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert f"error: {expected}" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            'labellings = {pred = {path = "pred.tags", token_column = 0}, gold = "gold.txt"}\n',
            "'record.labellings.pred.token_column': is 0 (tags only), but the first labelling's file defines the "
            "items and their text",
        ),
        (
            'token_column = 0\nlabellings = {gold = "gold.txt", pred = "pred.tags"}\n',
            "'record.token_column': is 0 (tags only), but the first labelling's file defines the items",
        ),
        (
            'labellings = {gold = "gold.txt", pred = {path = "pred.tags", token_column = "none"}}\n',
            "'record.labellings.pred.token_column': must be an integer: the token's column (1 = first, -1 = last), "
            "or 0 for a file of tags only, got 'none'",
        ),
    ],
)
def test_tags_only_config_errors(tmp_path, capsys, record, expected):
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.tags", TAGS_ONLY)
    code, output = validate(config(tmp_path, record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output


def test_bad_tag_in_a_tags_only_file_names_its_line(tmp_path, capsys):
    write(tmp_path / "gold.txt", GOLD)
    write(tmp_path / "pred.tags", TAGS_ONLY.replace("B-MISC", "B_MISC"))
    path = config(tmp_path, 'labellings = {gold = "gold.txt", pred = {path = "pred.tags", token_column = 0}}\n')
    code, output = validate(path, capsys)
    assert code == 2
    assert "error: pred.tags:5: tag 'B_MISC' is not O or B-/I-/E-/S-TYPE" in output


def test_an_absolute_labelling_path_under_root_is_shown_as_written(tmp_path):
    (tmp_path / "data").mkdir()
    gold = write(tmp_path / "gold.txt", "EU B-ORG\n")
    record = load(config(tmp_path, f'root = "data"\nlabellings = {{gold = "{gold}", pred = "{gold}"}}\n'))
    assert f"from {gold};" in record.notes[0]
    assert "data//" not in record.notes[0]


# ----------------------------------------------------------------------------------------------------------
# parts: several files per language and split, one record


def parts_config(tmp_path: Path, parts: str, record: str = "", references=("gold",), outputs=("model",)) -> Path:
    """Write a conll config whose [record] has no language or labellings of its own, then the given parts."""
    path = config(tmp_path, record + parts, outputs=outputs, references=references)
    path.write_text(path.read_text().replace('language = "en"\n', "", 1), encoding="utf-8")
    return path


def two_languages_three_splits(tmp_path: Path) -> Path:
    """ES and FR x train/dev/test: gold and model everywhere, a reviewer on the test splits only."""
    data = tmp_path / "data"
    parts = []
    for language, entity in (("es", "Madrid B-LOC"), ("fr", "Paris B-LOC")):
        (data / language).mkdir(parents=True)
        for split, sentences in (("train", 3), ("dev", 1), ("test", 2)):
            gold = "\n\n".join(f"{entity}\n{split} O" for _ in range(sentences)) + "\n"
            write(data / language / f"{split}.gold", gold)
            write(data / language / f"{split}.model", gold.replace("B-LOC", "B-ORG", 1))
            labellings = f'gold = "{language}/{split}.gold", model = "{language}/{split}.model"'
            if split == "test":
                write(data / language / f"{split}.reviewer", gold)
                labellings += f', reviewer = "{language}/{split}.reviewer"'
            parts.append(
                f'[[record.parts]]\nlanguage = "{language}"\nmeta = {{ split = "{split}" }}\n'
                f"labellings = {{ {labellings} }}\n"
            )
    return parts_config(tmp_path, "\n".join(parts), 'root = "data"\n', references=("gold", "reviewer"))


def test_parts_in_two_languages_and_three_splits_are_one_record(tmp_path, capsys):
    path = two_languages_three_splits(tmp_path)
    record = load(path)
    assert len(record.items) == 12
    assert [item.id for item in record.items[:4]] == [
        "es/train.gold:sentence-1",
        "es/train.gold:sentence-2",
        "es/train.gold:sentence-3",
        "es/dev.gold:sentence-1",
    ]
    assert len({item.id for item in record.items}) == 12
    assert [item.language for item in record.items] == ["es"] * 6 + ["fr"] * 6
    assert record.items[3].meta == {"split": "dev", "line": 1}
    assert [item.meta["split"] for item in record.items[6:]] == ["train"] * 3 + ["dev", "test", "test"]
    assert record.items[7].text == "Paris train"
    # the reviewer is present on the test splits only, absent (not empty) elsewhere
    assert [("reviewer" in item.labellings) for item in record.items] == [False] * 4 + [True] * 2 + [False] * 4 + [
        True
    ] * 2
    assert record.items[4].labellings["reviewer"] == ((0, 6, "LOC"),)
    assert record.items[0].labellings["model"] == ((0, 6, "ORG"),)
    assert record.items[1].labellings["model"] == ((0, 6, "LOC"),)
    notes = "\n".join(record.notes)
    assert "conll: part 'fr/dev.gold' (fr, split = dev): 1 sentence (2 tokens) from fr/dev.gold" in notes
    assert "conll: part 'es/test.gold' (es, split = test): labelling 'reviewer' (es/test.reviewer" in notes
    assert len(record.sources) == 14
    code, output = validate(path, capsys)
    assert code == 0, output


def test_parts_take_names_documents_and_record_defaults(tmp_path):
    write(tmp_path / "a.txt", GOLD)
    write(tmp_path / "b.txt", GOLD.replace("B-PER", "B-ORG"))
    parts = (
        '[[record.parts]]\nname = "first"\nlabellings = { gold = { path = "a.txt", column = 4 }, model = "b.txt" }\n'
        '[[record.parts]]\nname = "second"\nlanguage = "de"\nmeta = { year = 2003, checked = true }\n'
        'labellings = { gold = "b.txt", model = { path = "a.txt", column = 4 } }\n'
    )
    record = load(parts_config(tmp_path, parts, 'language = "en"\nitems = "documents"\n'))
    assert [item.id for item in record.items] == [
        "first:document-1",
        "first:document-2",
        "second:document-1",
        "second:document-2",
    ]
    assert [item.language for item in record.items] == ["en", "en", "de", "de"]
    assert record.items[2].meta == {"year": 2003, "checked": True, "line": 3, "sentences": 2}
    assert spans_with_text(record.items[2], "model")[-1] == ("Peter Blackburn", "PER")


def test_problems_of_every_part_are_reported_in_one_run(tmp_path, capsys):
    write(tmp_path / "a.txt", "EU B-ORG\n")
    write(tmp_path / "bad.txt", "EU B_ORG\n")
    write(tmp_path / "other.txt", "EC B-ORG\n")
    parts = (
        '[[record.parts]]\nlanguage = "en"\nlabellings = { gold = "a.txt", model = "bad.txt" }\n'
        '[[record.parts]]\nlanguage = "de"\nlabellings = { gold = "a.txt", model = "other.txt" }\n'
        '[[record.parts]]\nname = "ok"\nlanguage = "fr"\nlabellings = { gold = "a.txt", model = "a.txt" }\n'
    )
    code, output = validate(parts_config(tmp_path, parts), capsys)
    assert code == 2
    assert "error: Config value 'record.parts[2].name': 'a.txt' also names part 1" in output
    parts = parts.replace('language = "de"', 'name = "de"\nlanguage = "de"')
    code, output = validate(parts_config(tmp_path, parts), capsys)
    assert code == 2
    assert "error: bad.txt:1: tag 'B_ORG' is not O or B-/I-/E-/S-TYPE" in output
    assert "error: other.txt:1: cannot be aligned with a.txt" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("parts", "record", "expected"),
    [
        ('parts = "es.txt"\n', "", "'record.parts': must be an array of tables ([[record.parts]])"),
        ("parts = []\n", "", "'record.parts': must be an array of tables"),
        (
            '[[record.parts]]\nlabellings = { gold = "a.txt", model = "a.txt" }\n',
            "",
            "'record.parts[1].language': is required",
        ),
        ('[[record.parts]]\nlanguage = "es"\n', "", "'record.parts[1].labellings': is required"),
        (
            '[[record.parts]]\nlanguage = "es"\nlabellings = { gold = "a.txt", model = { path = "a.txt", colour = 1 } '
            "}\n",
            "",
            "'record.parts[1].labellings.model.colour': unknown key",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nsplit = "test"\nlabellings = { gold = "a.txt", model = "a.txt" }\n',
            "",
            "'record.parts[1].split': unknown key",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nmeta = { line = 3 }\nlabellings = { gold = "a.txt", model = "a.txt" '
            "}\n",
            "",
            "'record.parts[1].meta.line': is set by the adapter on every item (line, document, sentences)",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nmeta = { split = [1] }\nlabellings = { gold = "a.txt", model = '
            '"a.txt" }\n',
            "",
            "'record.parts[1].meta.split': must be a string, a number or true/false, got [1]",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nmeta = { third_pass = "yes" }\nlabellings = { gold = "a.txt", model = '
            '"a.txt" }\n',
            "",
            "'record.parts[1].meta.third_pass': must be true or false",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nmeta = "test"\nlabellings = { gold = "a.txt", model = "a.txt" }\n',
            "",
            "'record.parts[1].meta': must be a table copied into each item's meta",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nlabellings = { gold = "a.txt", model = "a.txt" }\n',
            'labellings = { gold = "a.txt" }\n',
            "'record.labellings': cannot be used with [[record.parts]]",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nlabellings = { gold = "a.txt", model = { path = "a.txt", gold_column '
            "= 2 } }\n"
            '[[record.parts]]\nname = "2"\nlanguage = "es"\nlabellings = { other = "a.txt", model = { path = "a.txt", '
            "gold_column = 2 } }\n",
            'gold = "gold"\n',
            "'record.parts[2].labellings': model set gold_column, checked against record.gold = 'gold', "
            "which this part does not have",
        ),
        (
            '[[record.parts]]\nlanguage = "es"\nlabellings = { gold = "a.txt", model = { path = "a.txt", gold_column '
            "= 2 } }\n",
            'gold = "nope"\n',
            "'record.gold': 'nope' is not one of the parts' labellings (gold, model)",
        ),
    ],
)
def test_parts_config_errors_name_the_part_and_key(tmp_path, capsys, parts, record, expected):
    write(tmp_path / "a.txt", "EU B-ORG\n")
    code, output = validate(parts_config(tmp_path, parts, record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output, output
    assert "Traceback" not in output


# ----------------------------------------------------------------------------------------------------------
# label maps: [record] label_map for every labelling, a labelling's own before it; "" drops the type

DATES = "Monday B-DATE\nnoon B-TIME\nin O\nMadrid B-LOC\nand O\nEU B-MISC\n"


def test_record_label_map_renames_and_drops_before_the_labels_check(tmp_path, capsys):
    write(tmp_path / "a.txt", DATES)
    write(tmp_path / "b.txt", DATES.replace("B-TIME", "I-DATE"))
    path = config(
        tmp_path,
        'labels = ["LOC", "DATETIME"]\nlabel_map = { DATE = "DATETIME", TIME = "DATETIME", MISC = "" }\n'
        'labellings = { gold = "a.txt", pred = "b.txt" }\n',
    )
    record = load(path)
    item = record.items[0]
    assert spans_with_text(item, "gold") == [("Monday", "DATETIME"), ("noon", "DATETIME"), ("Madrid", "LOC")]
    assert spans_with_text(item, "pred") == [("Monday noon", "DATETIME"), ("Madrid", "LOC")]
    assert (
        "record.label_map: renamed 3 spans (DATE → DATETIME 2, TIME → DATETIME 1); "
        "dropped 2 MISC spans (gold 1, pred 1)"
    ) in record.notes
    code, output = validate(path, capsys)
    assert code == 0, output
    assert "dropped 2 MISC spans" in output


def test_a_labellings_own_label_map_comes_before_the_records(tmp_path):
    write(tmp_path / "a.txt", DATES)
    write(tmp_path / "b.txt", DATES.replace("B-DATE", "B-DATUM").replace("B-TIME", "B-ZEIT").replace("B-LOC", "B-ORT"))
    record = load(
        config(
            tmp_path,
            'labels = ["LOC", "DATETIME", "MISC"]\nlabel_map = { DATE = "DATETIME", TIME = "DATETIME" }\n'
            'labellings = { gold = "a.txt", pred = { path = "b.txt", label_map = { DATUM = "DATE", ZEIT = "TIME", '
            'ORT = "LOC", MISC = "" } } }\n',
        )
    )
    item = record.items[0]
    assert spans_with_text(item, "pred") == [("Monday", "DATETIME"), ("noon", "DATETIME"), ("Madrid", "LOC")]
    assert spans_with_text(item, "gold")[-1] == ("EU", "MISC")
    assert (
        "its label_map renamed 3 spans (DATUM → DATE 1, ORT → LOC 1, ZEIT → TIME 1); dropped 1 MISC span"
        in (record.notes[2])
    )


def test_a_type_neither_listed_nor_mapped_is_still_refused_at_its_line(tmp_path, capsys):
    write(tmp_path / "a.txt", DATES)
    path = config(
        tmp_path,
        'labels = ["LOC", "DATETIME"]\nlabel_map = { DATE = "DATETIME", MISC = "" }\n'
        'labellings = { gold = "a.txt", pred = "a.txt" }\n',
    )
    code, output = validate(path, capsys)
    assert code == 2
    assert "a.txt:2: tag has an unknown label 'TIME' (record.labels allows DATE, DATETIME, LOC, MISC)" in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('label_map = "DATE"\n', "'record.label_map': must be a table from type to type"),
        ("label_map = { DATE = 1 }\n", "'record.label_map.DATE': must be a type, or \"\" to drop DATE, got 1"),
        ('label_map = { DATE = " " }\n', "'record.label_map.DATE': must be a type, or \"\" to drop DATE"),
        ('label_map = { "" = "X" }\n', "'record.label_map': maps an empty type"),
        (
            'labels = ["LOC"]\nlabel_map = { DATE = "DATETIME" }\n',
            "'record.label_map.DATE': maps to 'DATETIME', which record.labels does not allow (LOC)",
        ),
        (
            'labels = ["LOC", "DATETIME"]\nlabel_map = { DATE = "DATETIME" }\n'
            'labellings = { gold = "a.txt", pred = { path = "a.txt", label_map = { ORT = "PLACE" } } }\n',
            "'record.labellings.pred.label_map.ORT': maps to 'PLACE', which record.labels (with record.label_map) does "
            "not allow (DATE, DATETIME, LOC)",
        ),
    ],
)
def test_label_map_config_errors(tmp_path, capsys, record, expected):
    write(tmp_path / "a.txt", DATES)
    if "labellings" not in record:
        record += 'labellings = { gold = "a.txt", pred = "a.txt" }\n'
    code, output = validate(config(tmp_path, record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output, output


def test_label_map_applies_per_part(tmp_path):
    write(tmp_path / "es.txt", "Madrid B-LUG\n")
    write(tmp_path / "fr.txt", "Paris B-LIEU\n")
    parts = (
        '[[record.parts]]\nlanguage = "es"\n'
        'labellings = { gold = { path = "es.txt", label_map = { LUG = "LOC" } }, model = "es.txt" }\n'
        '[[record.parts]]\nlanguage = "fr"\n'
        'labellings = { gold = { path = "fr.txt", label_map = { LIEU = "LOC" } }, model = "fr.txt" }\n'
    )
    record = load(parts_config(tmp_path, parts, 'label_map = { LUG = "LOC", LIEU = "LOC" }\n'))
    assert [item.labellings["gold"] for item in record.items] == [((0, 6, "LOC"),), ((0, 5, "LOC"),)]
    assert [item.labellings["model"] for item in record.items] == [((0, 6, "LOC"),), ((0, 5, "LOC"),)]
