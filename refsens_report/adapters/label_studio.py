"""A Label Studio JSON export: one item per task, one labelling per annotator (or per pass) and per model.

Each task's text comes from ``data[text_field]``; its ``annotations`` (and ``predictions``) carry ``labels``
results whose ``value.start`` / ``value.end`` are character offsets into that text. Labellings are named by
annotator (``completed_by``) or by pass order (annotations sorted by id, i.e. creation order), and
predictions by ``model_version``; ``names`` renames any of them.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters.common import (
    InputPath,
    check_label,
    count,
    read_bool,
    read_dup_key,
    read_labels,
    read_path,
    with_text_dup_keys,
)
from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList
from refsens_report.files import decode_utf8, read_bytes
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span, check_unique_ids, describe_json, outside_json, span_fault

LABELLINGS_BY = ("annotator", "pass")
SPAN_RESULT = "labels"


@dataclass(frozen=True)
class LabelStudioOptions:
    """The checked `[record]` keys of a Label Studio record."""

    source: InputPath
    language: str | None
    language_field: str | None
    text_field: str
    id_field: str | None
    labellings_by: str
    predictions: bool
    names: dict[str, str]
    meta_fields: tuple[str, ...]
    from_name: str | None
    labels: frozenset[str] | None
    text_dup_keys: bool = False


def read_options(reader: OptionReader, base_dir: Path) -> LabelStudioOptions | None:
    """Read `[record]` for format = "label-studio"; bad keys are reported through ``reader``."""
    source = read_path(reader, base_dir, "path")
    language = reader.string("language")
    language_field = reader.string("language_field")
    if language is None and language_field is None:
        reader.fail("language", "is required (or language_field: the task data field holding each task's language)")
    text_field = reader.string("text_field", default="text") or "text"
    id_field = reader.string("id_field")
    labellings_by = reader.choice("labellings_by", LABELLINGS_BY, "annotator")
    predictions = read_bool(reader, "predictions", True)
    names_value = reader.get("names", {})
    names: dict[str, str] = {}
    if not isinstance(names_value, dict) or not all(
        isinstance(value, str) and value.strip() for value in names_value.values()
    ):
        reader.fail("names", f'must be a table of labelling names, e.g. {{"17" = "annotator_a"}}, got {names_value!r}')
    else:
        names = dict(names_value)
        renamed = Counter(names.values())
        for name, times in renamed.items():
            if times > 1:
                reader.fail("names", f"gives the name '{name}' to {times} sources; each labelling needs its own")
    meta_fields = reader.names("meta_fields")
    from_name = reader.string("from_name")
    labels = read_labels(reader)
    text_dup_keys = read_dup_key(reader)
    if source is None:
        return None
    return LabelStudioOptions(
        source,
        language,
        language_field,
        text_field,
        id_field,
        labellings_by,
        predictions,
        names,
        meta_fields,
        from_name,
        labels,
        text_dup_keys,
    )


def _lone_surrogate(text: str) -> int | None:
    """Return the 1-based position of a lone surrogate (a \\udXXX escape JSON lets through), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start + 1
    return None


def _annotator_key(completed_by: Any) -> str | None:
    """Return the annotator's key: the user id, also inside an expanded user object (its email without one)."""
    if isinstance(completed_by, dict):
        completed_by = completed_by["id"] if completed_by.get("id") is not None else completed_by.get("email")
    if isinstance(completed_by, bool) or completed_by is None:
        return None
    if isinstance(completed_by, (int, str)) and str(completed_by).strip():
        return str(completed_by)
    return None


def _utf16_to_index(text: str, utf16_offset: int) -> int | None:
    """Return the code-point index for a UTF-16 offset (the browser's string offsets), or None if inside a pair."""
    position = 0
    for index, character in enumerate(text):
        if position == utf16_offset:
            return index
        position += 2 if ord(character) > 0xFFFF else 1
        if position > utf16_offset:
            return None
    return len(text) if position == utf16_offset else None


@dataclass
class Tally:
    """What reading the export skipped or adjusted, for the record's notes."""

    tasks_without_annotation: int = 0
    cancelled: int = 0
    other_results: Counter = field(default_factory=Counter)
    multi_label_regions: int = 0
    utf16_offsets: int = 0


class TaskReader:
    """Turns one task object into an item, reporting each problem with the task and result it is in."""

    def __init__(self, options: LabelStudioOptions, problems: ProblemList, tally: Tally):
        self.options, self.problems, self.tally = options, problems, tally

    def item(self, task: Any, position: int) -> Item | None:
        options = self.options
        display = options.source.display
        if not isinstance(task, dict):
            self.problems.add(f"{display}: task #{position} is not a JSON object")
            return None
        task_id = task.get("id")
        where = f"{display}: task {task_id} (#{position})" if task_id is not None else f"{display}: task #{position}"
        before = len(self.problems)
        data = task.get("data")
        if not isinstance(data, dict):
            self.problems.add(f"{where}: 'data' is missing or not an object")
            return None
        text = data.get(options.text_field)
        if not isinstance(text, str):
            self.problems.add(
                f"{where}: data field '{options.text_field}' is missing or not a string "
                f"(record.text_field names the field that holds the text)"
            )
            return None
        if (surrogate := _lone_surrogate(text)) is not None:
            self.problems.add(
                f"{where}: data field '{options.text_field}' holds {outside_json(text)} (at character {surrogate})"
            )
            return None
        item_id = self._item_id(task, data, position, where)
        if why := name_problem(item_id):
            self.problems.add(f"{where}: the item id {why}")
        language = self._language(data, where)
        if why := name_problem(language):
            self.problems.add(f"{where}: the language {why}")
        meta = {name: data[name] for name in options.meta_fields if name in data}
        if "third_pass" in meta and not isinstance(meta["third_pass"], bool):
            self.problems.add(
                f"{where}: data field 'third_pass' must be true or false, got {describe_json(meta['third_pass'])}"
            )

        labellings: dict[str, tuple[Span, ...]] = {}
        annotations = task.get("annotations", [])
        if not isinstance(annotations, list):
            self.problems.add(f"{where}: 'annotations' must be a list")
            annotations = []
        kept = []
        for number, annotation in enumerate(annotations, start=1):
            if not isinstance(annotation, dict):
                self.problems.add(f"{where}: annotation #{number} is not an object")
                continue
            if annotation.get("was_cancelled") is True:
                self.tally.cancelled += 1  # a skipped task holds no labels: not even "present, empty"
                continue
            kept.append((number, annotation))
        if not kept:
            self.tally.tasks_without_annotation += 1
        if options.labellings_by == "pass":
            kept.sort(key=lambda pair: (not isinstance(pair[1].get("id"), int), pair[1].get("id") or 0, pair[0]))
        for pass_number, (number, annotation) in enumerate(kept, start=1):
            label = f"annotation {annotation['id']}" if "id" in annotation else f"annotation #{number}"
            if options.labellings_by == "pass":
                source_key = f"pass_{pass_number}"
            else:
                source_key = _annotator_key(annotation.get("completed_by"))
                if source_key is None:
                    self.problems.add(
                        f"{where}, {label}: 'completed_by' is missing or not a user id "
                        '(use labellings_by = "pass" to name labellings by pass order)'
                    )
                    continue
            name = options.names.get(
                source_key, source_key if options.labellings_by == "pass" else f"annotator_{source_key}"
            )
            if why := name_problem(name):
                self.problems.add(f"{where}, {label}: the labelling name {why}")
                continue
            if name in labellings:
                self.problems.add(
                    f"{where}, {label}: labelling '{name}' already has an annotation on this task "
                    '(one annotator, two annotations: use labellings_by = "pass")'
                )
                continue
            labellings[name] = self._spans(annotation.get("result"), text, f"{where}, {label}")
        predictions = task.get("predictions", []) if options.predictions else []
        if not isinstance(predictions, list):
            self.problems.add(f"{where}: 'predictions' must be a list")
            predictions = []
        for number, prediction in enumerate(predictions, start=1):
            if not isinstance(prediction, dict):
                self.problems.add(f"{where}: prediction #{number} is not an object")
                continue
            version = prediction.get("model_version")
            source_key = str(version) if isinstance(version, (str, int)) and str(version).strip() else "prediction"
            name = options.names.get(source_key, source_key)
            if why := name_problem(name):
                self.problems.add(f"{where}, prediction #{number}: the labelling name {why}")
                continue
            if name in labellings:
                self.problems.add(
                    f"{where}, prediction #{number}: labelling '{name}' already exists on this task "
                    "(name models apart with record.names)"
                )
                continue
            labellings[name] = self._spans(prediction.get("result"), text, f"{where}, prediction #{number}")
        if len(self.problems) > before:
            return None
        return Item(id=item_id, language=language, labellings=labellings, text=text, meta=meta)

    def _item_id(self, task: dict[str, Any], data: dict[str, Any], position: int, where: str) -> str:
        if self.options.id_field is not None:
            value = data.get(self.options.id_field)
            if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
                self.problems.add(
                    f"{where}: data field '{self.options.id_field}' (record.id_field) is missing or empty"
                )
                return ""
            return str(value)
        task_id = task.get("id")
        return str(task_id) if isinstance(task_id, (str, int)) and not isinstance(task_id, bool) else f"task-{position}"

    def _language(self, data: dict[str, Any], where: str) -> str:
        language_field = self.options.language_field
        if language_field is not None and language_field in data:
            value = data[language_field]
            if isinstance(value, str) and value.strip():
                return value
            self.problems.add(
                f"{where}: data field '{language_field}' (record.language_field) must be a non-empty string"
            )
            return ""
        if self.options.language is None:
            self.problems.add(
                f"{where}: data field '{language_field}' (record.language_field) is missing "
                "and no record.language is set"
            )
            return ""
        return self.options.language

    def _spans(self, results: Any, text: str, where: str) -> tuple[Span, ...]:
        if not isinstance(results, list):
            self.problems.add(f"{where}: 'result' is missing or not a list")
            return ()
        spans: list[Span] = []
        for number, result in enumerate(results, start=1):
            here = f"{where}, result {number}"
            if not isinstance(result, dict):
                self.problems.add(f"{here}: not an object")
                continue
            kind = result.get("type")
            if kind != SPAN_RESULT:
                self.tally.other_results[shown(kind)] += 1  # choices, relations, text areas: not spans
                continue
            if self.options.from_name is not None and result.get("from_name") != self.options.from_name:
                self.tally.other_results[f"labels from {shown(result.get('from_name'))}"] += 1
                continue
            spans.extend(self._result_spans(result.get("value"), text, here))
        return tuple(spans)

    def _result_spans(self, value: Any, text: str, here: str) -> list[Span]:
        if not isinstance(value, dict):
            self.problems.add(f"{here}: 'value' is missing or not an object")
            return []
        start, end, labels = value.get("start"), value.get("end"), value.get("labels")
        fault = span_fault(start, end, labels, None)  # the end is checked against the text once realigned, below
        if fault == "offsets":
            self.problems.add(f"{here}: value.start and value.end must be integers, got {describe_json([start, end])}")
            return []
        if fault == "labels":
            self.problems.add(f"{here}: value.labels must be a non-empty list of labels, got {describe_json(labels)}")
            return []
        if fault == "order":
            self.problems.add(f"{here}: needs 0 <= start < end, got start {start}, end {end}")
            return []
        quoted = value.get("text")
        if isinstance(quoted, str) and text[start:end] != quoted:
            # the browser counts UTF-16 code units: astral characters (emoji) count twice there
            converted = (_utf16_to_index(text, start), _utf16_to_index(text, end))
            if None not in converted and text[converted[0] : converted[1]] == quoted:
                start, end = converted  # type: ignore[assignment]
                self.tally.utf16_offsets += 1
            else:
                self.problems.add(
                    f"{here}: value.text {describe_json(quoted)} is not the task text at [{start}, {end}) "
                    f"({describe_json(text[start:end])})"
                )
                return []
        if span_fault(start, end, labels, len(text)) == "beyond":
            self.problems.add(f"{here}: ends at {end}, beyond the text ({len(text)} characters)")
            return []
        if len(labels) > 1:
            self.tally.multi_label_regions += 1
        spans = []
        for label in labels:
            if problem := check_label(label, self.options.labels):
                self.problems.add(f"{here}: {problem}")
                continue
            spans.append((start, end, label))
        return spans


def load(options: LabelStudioOptions, duplicate_key: str) -> Record:
    """Read the export; one item per task, with every annotator's (or pass's) and model's spans."""
    display = options.source.display
    try:
        raw = read_bytes(options.source.path)  # a regular file only: never a FIFO or /dev/zero
    except OSError as error:
        raise InputError(f"{display}: cannot read the export ({error.strerror})") from None
    content, problem = decode_utf8(raw, display)
    if content is None:
        raise InputError(problem or display)
    try:
        tasks = json.loads(content.removeprefix("\ufeff"))  # a byte-order mark is allowed
    except json.JSONDecodeError as error:
        raise InputError(f"{display}:{error.lineno}: invalid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise InputError(f"{display}: invalid JSON (nested too deeply)") from None
    if isinstance(tasks, dict):
        tasks = [tasks]  # a single task exported on its own
    if not isinstance(tasks, list):
        raise InputError(f"{display}: expected a JSON list of tasks (Label Studio's JSON export)")
    if not tasks:
        raise InputError(f"{display}: the export has no tasks")
    problems = ProblemList()
    tally = Tally()
    reader = TaskReader(options, problems, tally)
    located: list[tuple[str, Item]] = []
    for position, task in enumerate(tasks, start=1):
        if len(problems) >= MAX_PROBLEMS:
            break
        item = reader.item(task, position)
        if item is not None:
            located.append((f"{display}: task #{position}", item))
    check_unique_ids(located, problems)
    problems.raise_if_any()
    items = tuple(item for _, item in located)
    if options.text_dup_keys:
        items = with_text_dup_keys(items, duplicate_key)
    record = Record(items=items, sources=(options.source,))
    notes = [
        f"label-studio: {count(len(items), 'task')} from {options.source.name}; labellings by {options.labellings_by}"
        + (" (annotations in id order)" if options.labellings_by == "pass" else " (completed_by)")
        + f": {', '.join(record.labelling_names) or 'none'}"
    ]
    if tally.tasks_without_annotation:
        notes.append(
            f"label-studio: {count(tally.tasks_without_annotation, 'task')} without a (non-cancelled) annotation"
        )
    if tally.cancelled:
        notes.append(f"label-studio: {count(tally.cancelled, 'cancelled annotation')} skipped")
    if tally.other_results:
        kinds = ", ".join(f"{times:,} {kind}" for kind, times in sorted(tally.other_results.items()))
        notes.append(f"label-studio: results that are not spans skipped: {kinds}")
    if tally.multi_label_regions:
        notes.append(
            f"label-studio: {count(tally.multi_label_regions, 'region')} with several labels: one span per label"
        )
    if tally.utf16_offsets:
        notes.append(
            f"label-studio: {count(tally.utf16_offsets, 'region')} had browser (UTF-16) offsets, "
            "converted to characters"
        )
    return Record(items=items, sources=(options.source,), notes=tuple(notes))
