"""The label-studio adapter on small exports written here: labellings by annotator or pass, and every error path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import validate

from refsens_report.config import load_config
from refsens_report.load import load_record

TEXT = "Alice met Bob in Paris."


def region(start: int, end: int, *labels: str, text: str | None = TEXT, kind: str = "labels") -> dict:
    value = {"start": start, "end": end, "labels": list(labels)}
    if text is not None:
        value["text"] = text[start:end]
    return {"type": kind, "from_name": "label", "to_name": "text", "value": value}


def annotation(annotation_id, completed_by, *results, cancelled: bool = False) -> dict:
    return {"id": annotation_id, "completed_by": completed_by, "result": list(results), "was_cancelled": cancelled}


def export() -> list[dict]:
    return [
        {
            "id": 1,
            "data": {"text": TEXT, "dup": "k1"},
            "annotations": [
                annotation(11, 7, region(0, 5, "PER"), region(10, 13, "PER")),
                annotation(12, {"id": 9, "email": "bo@example.org"}, region(0, 5, "PER"), region(17, 22, "LOC")),
            ],
            "predictions": [{"model_version": "ner-v2", "result": [region(0, 5, "PER")]}],
        },
        {
            "id": 2,
            "data": {"text": "Nobody here."},
            "annotations": [annotation(21, 9), annotation(22, 7)],
        },
        {"id": 3, "data": {"text": "Not labelled yet."}, "annotations": [], "predictions": []},
    ]


def write_case(tmp_path: Path, tasks, record: str = "", outputs=("annotator_7",), references=("annotator_9",)) -> Path:
    (tmp_path / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    path = tmp_path / "refsens.toml"
    roles = f"outputs = {json.dumps(list(outputs))}\nreferences = {json.dumps(list(references))}\n"
    path.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "label-studio"\npath = "export.json"\n'
        f'language = "en"\n{record}\n[roles]\n{roles}',
        encoding="utf-8",
    )
    return path


def test_labellings_by_annotator_with_predictions_and_a_task_without_annotation(tmp_path, capsys):
    path = write_case(tmp_path, export())
    record = load_record(load_config(path))
    assert [item.id for item in record.items] == ["1", "2", "3"]
    first, second, third = record.items
    assert first.text == TEXT and first.language == "en"
    assert first.labellings == {
        "annotator_7": ((0, 5, "PER"), (10, 13, "PER")),
        "annotator_9": ((0, 5, "PER"), (17, 22, "LOC")),
        "ner-v2": ((0, 5, "PER"),),
    }
    # annotated with no region: present and empty; never annotated: absent
    assert second.labellings == {"annotator_9": (), "annotator_7": ()}
    assert third.labellings == {}
    assert "1 task without a (non-cancelled) annotation" in "\n".join(record.notes)
    assert validate(path, capsys)[0] == 0


def test_labellings_by_pass_follow_annotation_ids(tmp_path):
    tasks = export()
    tasks[0]["annotations"].reverse()  # the export's order is not the pass order: annotation ids are
    path = write_case(tmp_path, tasks, 'labellings_by = "pass"\npredictions = false\n', ("pass_1",), ("pass_2",))
    record = load_record(load_config(path))
    first = record.items[0]
    assert first.labellings["pass_1"] == ((0, 5, "PER"), (10, 13, "PER"))
    assert first.labellings["pass_2"] == ((0, 5, "PER"), (17, 22, "LOC"))
    assert "ner-v2" not in first.labellings
    assert set(record.items[1].labellings) == {"pass_1", "pass_2"}


def test_names_rename_annotators_and_models(tmp_path):
    record_keys = 'names = {"7" = "annotator_a", "9" = "annotator_b", "ner-v2" = "model"}\n'
    path = write_case(tmp_path, export(), record_keys, ("annotator_a", "model"), ("annotator_b",))
    record = load_record(load_config(path))
    assert set(record.items[0].labellings) == {"annotator_a", "annotator_b", "model"}


def test_cancelled_annotations_other_results_and_multi_label_regions_are_counted(tmp_path):
    tasks = export()
    tasks[0]["annotations"].append(annotation(13, 5, region(0, 5, "ORG"), cancelled=True))
    tasks[0]["annotations"][0]["result"].append({"type": "choices", "value": {"choices": ["news"]}})
    tasks[0]["annotations"][0]["result"].append(region(17, 22, "LOC", "GPE"))
    record = load_record(load_config(write_case(tmp_path, tasks)))
    assert "annotator_5" not in record.items[0].labellings
    assert (17, 22, "GPE") in record.items[0].labellings["annotator_7"]
    notes = "\n".join(record.notes)
    assert "1 cancelled annotation skipped" in notes
    assert "results that are not spans skipped: 1 'choices'" in notes
    assert "1 region with several labels: one span per label" in notes


def test_browser_utf16_offsets_are_converted(tmp_path):
    text = "\N{GRINNING FACE} Bob"
    task = {"id": 1, "data": {"text": text}, "annotations": [annotation(1, 7, region(3, 6, "PER", text=None))]}
    task["annotations"][0]["result"][0]["value"]["text"] = "Bob"
    record = load_record(load_config(write_case(tmp_path, [task], references=("annotator_7",))))
    assert record.items[0].labellings["annotator_7"] == ((2, 5, "PER"),)
    assert "1 region had browser (UTF-16) offsets" in "\n".join(record.notes)


def test_language_and_meta_from_task_data(tmp_path):
    tasks = export()
    tasks[0]["data"]["lang"] = "no"
    path = write_case(tmp_path, tasks, 'language_field = "lang"\nmeta_fields = ["dup"]\nid_field = "dup"\n')
    tasks[1]["data"]["dup"] = "k2"
    tasks[2]["data"]["dup"] = "k3"
    (tmp_path / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    record = load_record(load_config(path))
    assert [item.language for item in record.items] == ["no", "en", "en"]
    assert record.items[0].meta == {"dup": "k1"}
    assert [item.id for item in record.items] == ["k1", "k2", "k3"]


def test_text_from_another_data_field(tmp_path):
    tasks = export()
    for task in tasks:
        task["data"] = {"body": task["data"]["text"]}
    record = load_record(load_config(write_case(tmp_path, tasks, 'text_field = "body"\n')))
    assert record.items[0].text == TEXT


def broken(change) -> list[dict]:
    tasks = export()
    change(tasks)
    return tasks


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda t: t[0]["data"].pop("text"), "export.json: task 1 (#1): data field 'text' is missing or not a string"),
        (lambda t: t[0].pop("data"), "export.json: task 1 (#1): 'data' is missing or not an object"),
        (
            lambda t: t[0]["annotations"][0]["result"][0]["value"].update(start=30, end=35, text=None),
            "export.json: task 1 (#1), annotation 11, result 1: ends at 35, beyond the text (23 characters)",
        ),
        (
            lambda t: t[0]["annotations"][0]["result"][0]["value"].update(start=5, end=5),
            "task 1 (#1), annotation 11, result 1: needs 0 <= start < end, got start 5, end 5",
        ),
        (
            lambda t: t[0]["annotations"][0]["result"][0]["value"].update(start="0"),
            "task 1 (#1), annotation 11, result 1: value.start and value.end must be integers",
        ),
        (
            lambda t: t[0]["annotations"][0]["result"][0]["value"].update(labels=[]),
            "task 1 (#1), annotation 11, result 1: value.labels must be a non-empty list of labels",
        ),
        (
            lambda t: t[0]["annotations"][0]["result"][0]["value"].update(text="Alicia"),
            'task 1 (#1), annotation 11, result 1: value.text "Alicia" is not the task text at [0, 5) ("Alice")',
        ),
        (
            lambda t: t[0]["annotations"][0].pop("completed_by"),
            "task 1 (#1), annotation 11: 'completed_by' is missing or not a user id",
        ),
        (
            lambda t: t[1]["annotations"][1].update(completed_by=9),
            "task 2 (#2), annotation 22: labelling 'annotator_9' already has an annotation on this task",
        ),
        (
            lambda t: t[0]["annotations"][0].update(result="none"),
            "task 1 (#1), annotation 11: 'result' is missing or not a list",
        ),
        (lambda t: t[2].update(id=1), "export.json: task #3: id '1' repeats the item at export.json: task #1"),
        (lambda t: t.append("task"), "export.json: task #4 is not a JSON object"),
        (
            lambda t: t[0]["annotations"][0]["result"].append(region(17, 22, "GPE")),
            "task 1 (#1), annotation 11, result 3: unknown label 'GPE' (record.labels allows LOC, PER)",
        ),
    ],
)
def test_bad_tasks_name_the_task_and_what_is_wrong(tmp_path, capsys, change, expected):
    code, output = validate(write_case(tmp_path, broken(change), 'labels = ["PER", "LOC"]\n'), capsys)
    assert code == 2
    assert expected in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('[{"id": 1,\n "data": }]', "export.json:2: invalid JSON (Expecting value at column 10)"),
        ('"tasks"', "export.json: expected a JSON list of tasks"),
        ("[]", "export.json: the export has no tasks"),
    ],
)
def test_unreadable_exports(tmp_path, capsys, content, expected):
    path = write_case(tmp_path, [])
    (tmp_path / "export.json").write_text(content, encoding="utf-8")
    code, output = validate(path, capsys)
    assert code == 2
    assert expected in output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('labellings_by = "worker"\n', "'record.labellings_by': must be one of annotator, pass"),
        ('predictions = "yes"\n', "'record.predictions': must be true or false"),
        ('names = {"7" = "a", "9" = "a"}\n', "'record.names': gives the name 'a' to 2 sources"),
        ('names = ["a"]\n', "'record.names': must be a table of labelling names"),
        ('annotator = "x"\n', "'record.annotator': unknown key"),
        ('meta_fields = "dup"\n', "'record.meta_fields': must be a list of non-empty strings"),
    ],
)
def test_config_errors_name_the_key(tmp_path, capsys, record, expected):
    code, output = validate(write_case(tmp_path, export(), record), capsys)
    assert code == 2
    assert f"error: Config value {expected}" in output


def test_missing_export_and_missing_language(tmp_path, capsys):
    path = write_case(tmp_path, export())
    path.write_text(
        path.read_text().replace('path = "export.json"', 'path = "nope.json"').replace('language = "en"\n', "")
    )
    code, output = validate(path, capsys)
    assert code == 2
    assert "Config value 'record.path': file not found: nope.json" in output
    assert "Config value 'record.language': is required (or language_field" in output


def test_dup_key_text_and_its_config_check(tmp_path, capsys):
    tasks = export()
    tasks[2]["data"]["text"] = TEXT
    record = load_record(load_config(write_case(tmp_path, tasks, 'dup_key = "text"\n')))
    assert record.items[0].meta["dup_key"] == record.items[2].meta["dup_key"] != record.items[1].meta["dup_key"]
    code, output = validate(write_case(tmp_path, tasks, 'dup_key = "id"\n'), capsys)
    assert code == 2 and "Config value 'record.dup_key': must be one of none, text" in output


def test_result_types_and_tag_names_from_the_export_are_quoted_and_escaped(tmp_path, capsys):
    """A result's type and from_name are the export's strings, not checked names: on the terminal an escape
    sequence could clear it or fake an "ok" line, and in the report's notes U+202E would reorder the text."""
    tasks = export()
    results = tasks[0]["annotations"][0]["result"]
    results.append({"type": "\x1b[2J\x1b[Hchoices", "value": {"choices": ["news"]}})
    results.append({**region(17, 22, "LOC"), "from_name": "ner\u202eLOC"})
    record = load_record(load_config(write_case(tmp_path, tasks, record='from_name = "label"')))
    notes = "\n".join(record.notes)
    assert "\x1b" not in notes and "\u202e" not in notes
    assert "results that are not spans skipped: 1 '\\x1b[2J\\x1b[Hchoices', 1 labels from 'ner\\u202eLOC'" in notes
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0, output
    assert "\x1b" not in output and "\u202e" not in output and "labels from 'ner\\u202eLOC'" in output
