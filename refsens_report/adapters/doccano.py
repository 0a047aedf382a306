"""doccano sequence-labelling exports (JSONL): one file per user, or one file whose lines name their user.

doccano exports a project as a zip holding one ``<user>.jsonl`` per annotator (``all.jsonl`` when the project
shares annotations); each line is an example: ``id``, ``text`` and its spans, either as
``"label": [[start, end, "TYPE"], ...]`` (older versions: ``labels``) or, in the export with relations, as
``"entities": [{"start_offset": ..., "end_offset": ..., "label": "TYPE"}, ...]``. Lines are matched across
files by the example id. Offsets are characters of ``text``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters.archive import MEMBER_LIMIT, Export, macos_metadata, read_member_limit
from refsens_report.adapters.common import (
    InputPath,
    check_label,
    count,
    excerpt,
    first_difference,
    read_dup_key,
    read_labels,
    read_language,
    read_name_table,
    read_names,
    read_path,
    with_text_dup_keys,
)
from refsens_report.adapters.jsonlines import json_lines
from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.files import read_bytes
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span, describe_json, span_fault

SPAN_FIELDS = ("label", "labels", "entities")
EMPTY_CHOICES = ("present", "absent")


@dataclass(frozen=True)
class DoccanoOptions:
    """The checked `[record]` keys of a doccano record."""

    files: tuple[tuple[str | None, InputPath], ...]  # (labelling name, or None: from the file or the user field)
    archive: InputPath | None  # a zip or folder of .jsonl files, one per user
    language: str
    user_field: str | None
    id_field: str
    text_field: str
    names: dict[str, str]
    empty: str
    labels: frozenset[str] | None
    text_dup_keys: bool = False
    member_limit: int = MEMBER_LIMIT


def read_options(reader: OptionReader, base_dir: Path) -> DoccanoOptions | None:
    """Read `[record]` for format = "doccano"; bad keys are reported through ``reader``."""
    language = read_language(reader)
    has_path, has_labellings = reader.table.get("path") is not None, reader.table.get("labellings") is not None
    if has_path == has_labellings:
        reader.fail(
            "path",
            "give either path (a doccano export: a .jsonl file, a zip or a folder of them) or "
            "labellings (a table: labelling name = its .jsonl file), not both"
            if has_path
            else "is required (a doccano export: a .jsonl file, or a zip or folder of one .jsonl per user), "
            'or give labellings = { name = "file.jsonl", ... }',
        )
    source = read_path(reader, base_dir, "path", kind="any", required=False) if has_path else None
    files: list[tuple[str | None, InputPath]] = []
    for name, entry in read_name_table(reader, "labellings").items():
        if not isinstance(entry, str):
            reader.fail(f"labellings.{name}", f"must be the path of a .jsonl file, got {shown(entry)}")
            continue
        entry_reader = reader.sub({"path": entry}, f"labellings.{name}")
        path = read_path(entry_reader, base_dir, "path")
        if path is not None:
            files.append((name, path))
    user_field = reader.string("user_field")
    id_field = reader.string("id_field", default="id") or "id"
    text_field = reader.string("text_field", default="text") or "text"
    names = read_names(reader, '"alice" = "annotator_a"', "users")
    empty = reader.choice("empty", EMPTY_CHOICES, "present")
    labels = read_labels(reader)
    text_dup_keys = read_dup_key(reader)
    member_limit = read_member_limit(reader)
    archive = None
    if source is not None:
        if source.path.is_dir() or source.path.suffix.lower() == ".zip":
            archive = source
        else:
            files.append((None, source))
    if archive is None and not files:
        return None
    return DoccanoOptions(
        tuple(files),
        archive,
        language,
        user_field,
        id_field,
        text_field,
        names,
        empty,
        labels,
        text_dup_keys,
        member_limit,
    )


@dataclass
class Tally:
    """What reading the files counted, for the record's notes."""

    empty_lines: Counter = field(default_factory=Counter)  # labelling -> examples with no spans
    fields: Counter = field(default_factory=Counter)  # which span field the lines used
    skipped_files: list[str] = field(default_factory=list)
    files_read: int = 0


@dataclass
class Example:
    """One example as the files have it: its text, where it was first read, and each labelling's spans."""

    text: str
    where: str
    labellings: dict[str, tuple[Span, ...]] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)  # labelling -> where its line is


class LineReader:
    """Turns one example line into its id, text and spans, reporting each problem at its file and line."""

    def __init__(self, options: DoccanoOptions, problems: ProblemList, tally: Tally):
        self.options, self.problems, self.tally = options, problems, tally
        self.examples: dict[str, Example] = {}

    def file(self, data: bytes, display: str, file_name: str | None) -> None:
        self.tally.files_read += 1
        for number, line in json_lines(data, display, self.problems):
            if len(self.problems) >= MAX_PROBLEMS:
                return
            self.line(line, f"{display}:{number}", file_name)

    def line(self, line: dict[str, Any], where: str, file_name: str | None) -> None:
        options = self.options
        before = len(self.problems)
        raw_id = line.get(options.id_field)
        if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool) or not str(raw_id).strip():
            self.problems.add(
                f"{where}: '{options.id_field}' (record.id_field) is missing or not a string or "
                f"integer, got {describe_json(raw_id)}"
            )
            return
        item_id = str(raw_id)
        if why := name_problem(item_id):
            self.problems.add(f"{where}: the example id {why}")
        text = line.get(options.text_field)
        if not isinstance(text, str):
            self.problems.add(f"{where}: '{options.text_field}' (record.text_field) is missing or not a string")
            return
        name = self._labelling(line, where, file_name)
        spans = self._spans(line, text, where)
        if name is None or spans is None or len(self.problems) > before:
            return
        example = self.examples.setdefault(item_id, Example(text, where))
        if example.text != text:
            index = first_difference(example.text, text)
            self.problems.add(
                f"{where}: example {item_id} has another text than at {example.where} from character {index + 1} "
                f"({excerpt(text, index)} here, {excerpt(example.text, index)} there)"
            )
            return
        if name in example.labellings:
            self.problems.add(
                f"{where}: example {item_id} is labelled by '{name}' again (first at {example.lines[name]})"
            )
            return
        if not spans:
            self.tally.empty_lines[name] += 1
            if options.empty == "absent":
                return
        example.labellings[name] = spans
        example.lines[name] = where

    def _labelling(self, line: dict[str, Any], where: str, file_name: str | None) -> str | None:
        options = self.options
        if options.user_field is not None:
            user = line.get(options.user_field)
            if not isinstance(user, (str, int)) or isinstance(user, bool) or not str(user).strip():
                self.problems.add(
                    f"{where}: '{options.user_field}' (record.user_field) is missing or not a user "
                    f"name or id, got {describe_json(user)}"
                )
                return None
            name = options.names.get(str(user), str(user))
        else:
            assert file_name is not None
            name = options.names.get(file_name, file_name)
        if why := name_problem(name):
            self.problems.add(f"{where}: the labelling name {why}")
            return None
        return name

    def _spans(self, line: dict[str, Any], text: str, where: str) -> tuple[Span, ...] | None:
        key = next((key for key in SPAN_FIELDS if key in line), None)
        if key is None:
            self.problems.add(
                f"{where}: no spans: the line has none of the fields {', '.join(SPAN_FIELDS)} "
                "(export the project as JSONL)"
            )
            return None
        self.tally.fields[key] += 1
        raw = line[key]
        if not isinstance(raw, list):
            self.problems.add(f"{where}: '{key}' must be a list of spans, got {describe_json(raw)}")
            return None
        if raw and all(isinstance(entry, str) for entry in raw):
            self.problems.add(
                f"{where}: '{key}' holds category names {describe_json(raw)}, not spans: this is a "
                "text-classification export, not sequence labelling"
            )
            return None
        spans: list[Span] = []
        before = len(self.problems)
        for position, entry in enumerate(raw, start=1):
            here = f"{where}: span {position} of '{key}'"
            if isinstance(entry, dict):
                start, end, label = entry.get("start_offset"), entry.get("end_offset"), entry.get("label")
            elif isinstance(entry, list) and len(entry) == 3:
                start, end, label = entry
            else:
                shapes = '[start, end, "TYPE"] nor {"start_offset", "end_offset", "label"}'
                self.problems.add(f"{here} is neither {shapes}: {describe_json(entry)}")
                continue
            fault = span_fault(start, end, [label], len(text))
            if fault == "offsets":
                self.problems.add(f"{here}: the offsets must be integers: {describe_json(entry)}")
                continue
            if fault == "labels" and isinstance(label, int) and not isinstance(label, bool):
                self.problems.add(
                    f"{here}: the label is the id {label}, not a name (doccano before 1.3 exported "
                    "label ids: export again as JSONL from a current version)"
                )
                continue
            if fault == "labels":
                self.problems.add(f"{here}: the label must be a non-empty string: {describe_json(entry)}")
                continue
            if fault == "order":
                self.problems.add(f"{here}: needs 0 <= start < end: {describe_json(entry)}")
                continue
            if fault == "beyond":
                self.problems.add(f"{here}: ends at {end}, beyond the text ({len(text)} characters)")
                continue
            if problem := check_label(label, self.options.labels):
                self.problems.add(f"{here}: {problem}")
                continue
            spans.append((start, end, label))
        return tuple(sorted(spans)) if len(self.problems) == before else None


def _archive_files(archive: InputPath, problems: ProblemList, tally: Tally, limit: int) -> list[tuple[str, str, bytes]]:
    """Return (labelling name from the file, display, bytes) of each .jsonl file in a zip or folder."""
    export = Export(archive, limit)
    found: list[tuple[str, str, bytes]] = []
    seen: dict[str, str] = {}
    try:
        for name in export.names:
            if macos_metadata(name):
                continue
            if not name.lower().endswith(".jsonl"):
                tally.skipped_files.append(name)
                continue
            stem = name.rsplit("/", 1)[-1][: -len(".jsonl")]
            display = export.display(name)
            if stem in seen:
                problems.add(f"{display}: a second file for '{stem}' (the first is {seen[stem]})")
                continue
            seen[stem] = display
            data = export.read(name, problems)
            if data is not None:
                found.append((stem, display, data))
    finally:
        export.close()
    if not found and not problems:
        problems.add(f"{archive.display}: no .jsonl files (a doccano export holds one per user)")
    return found


def load(options: DoccanoOptions, duplicate_key: str) -> Record:
    """Read every file; items are the examples in order of first appearance."""
    problems = ProblemList()
    tally = Tally()
    reader = LineReader(options, problems, tally)
    sources: list[InputPath] = []
    if options.archive is not None:
        for stem, display, data in _archive_files(options.archive, problems, tally, options.member_limit):
            reader.file(data, display, stem)
        sources.append(options.archive)
    for name, file in options.files:
        try:
            data = read_bytes(file.path)
        except OSError as error:
            problems.add(f"{file.display}: cannot read the file ({error.strerror})")
            continue
        reader.file(data, file.display, name or file.path.name.removesuffix(".jsonl"))
        sources.append(file)
    if not reader.examples and not problems:
        problems.add(f"{(options.archive or options.files[0][1]).display}: no examples")
    problems.raise_if_any()
    items = tuple(
        Item(id=item_id, language=options.language, labellings=example.labellings, text=example.text)
        for item_id, example in reader.examples.items()
    )
    if options.text_dup_keys:
        items = with_text_dup_keys(items, duplicate_key)
    names = Record(items=items).labelling_names
    notes = [
        f"doccano: {count(len(items), 'example')} from {count(tally.files_read, 'file')}; labellings "
        + (f"by '{options.user_field}'" if options.user_field else "by file")
        + f": {', '.join(names) or 'none'}; spans from "
        + ", ".join(f"'{key}' ({count(times, 'line')})" for key, times in sorted(tally.fields.items()))
    ]
    for name, times in sorted(tally.empty_lines.items()):
        how = (
            'read as present and empty (empty = "absent" reads them as not annotated)'
            if options.empty == "present"
            else 'read as not annotated (empty = "absent")'
        )
        notes.append(f"doccano: labelling '{name}' has {count(times, 'example')} with no spans, {how}")
    for name in names:
        missing = sum(name not in item.labellings for item in items)
        if missing:
            notes.append(f"doccano: labelling '{name}' is absent from {count(missing, 'example')}")
    if tally.skipped_files:
        skipped = tally.skipped_files
        shown_files = ", ".join(map(shown, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
        notes.append(f"doccano: {count(len(tally.skipped_files), 'file')} that are not .jsonl skipped: {shown_files}")
    return Record(items=items, sources=tuple(sources), notes=tuple(notes))
