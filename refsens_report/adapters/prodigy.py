"""Prodigy review output (JSONL): each annotator session's version of an example, and the reviewer's final spans.

The ``review`` recipe groups manual annotations (``ner.manual``, ``spans.manual``) of the same input
(``_input_hash``) into one example; ``versions`` lists the distinct annotations, each with the ``sessions``
that made it (``<dataset>-<annotator>``) and its ``answer``, and the example's own ``spans`` and ``answer`` are
the reviewer's decision. Each session becomes a labelling (or ``pass_1``, ``pass_2``, ... in session-id
order), the reviewed spans the aggregate. Offsets are characters of ``text``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters.common import (
    InputPath,
    check_label,
    count,
    read_dup_key,
    read_labels,
    read_language,
    read_names,
    read_path,
    with_text_dup_keys,
)
from refsens_report.adapters.jsonlines import json_lines
from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList
from refsens_report.files import read_bytes
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span, check_unique_ids, describe_json, span_fault

LABELLINGS_BY = ("session", "pass")
ANSWERS = ("accept", "reject", "ignore")
BINARY_VIEWS = ("ner", "classification", "binary")  # one suggested span accepted or rejected: not a labelling


@dataclass(frozen=True)
class ProdigyOptions:
    """The checked `[record]` keys of a Prodigy record."""

    source: InputPath
    language: str
    labellings_by: str
    aggregate: str
    names: dict[str, str]
    id_field: str
    text_field: str
    labels: frozenset[str] | None
    text_dup_keys: bool = False


def read_options(reader: OptionReader, base_dir: Path) -> ProdigyOptions | None:
    """Read `[record]` for format = "prodigy"; bad keys are reported through ``reader``."""
    source = read_path(reader, base_dir, "path")
    language = read_language(reader)
    labellings_by = reader.choice("labellings_by", LABELLINGS_BY, "session")
    aggregate = reader.string("aggregate", default="reviewed") or "reviewed"
    names = read_names(reader, '"ner_news-alex" = "annotator_a"', "sessions")
    for name in dict.fromkeys(names.values()):
        if name == aggregate:
            reader.fail("names", f"gives a session the aggregate's name '{name}' (record.aggregate)")
    id_field = reader.string("id_field", default="_input_hash") or "_input_hash"
    text_field = reader.string("text_field", default="text") or "text"
    labels = read_labels(reader)
    text_dup_keys = read_dup_key(reader)
    if source is None:
        return None
    return ProdigyOptions(
        source, language, labellings_by, aggregate, names, id_field, text_field, labels, text_dup_keys
    )


@dataclass
class Tally:
    """What reading the review output counted, for the record's notes."""

    reviewer_answers: Counter = field(default_factory=Counter)
    version_answers: Counter = field(default_factory=Counter)  # answers other than accept: sessions absent there
    sessions: Counter = field(default_factory=Counter)  # session -> examples it annotated (accepted)


def _field(line: dict[str, Any], path: str) -> Any:
    """Return ``line[path]``, or for ``meta.x`` the value of ``x`` in the line's ``meta``."""
    if path.startswith("meta.") and isinstance(line.get("meta"), dict):
        return line["meta"].get(path[len("meta.") :])
    return line.get(path)


class ExampleReader:
    """Turns one review line into an item, reporting each problem with its line."""

    def __init__(self, options: ProdigyOptions, problems: ProblemList, tally: Tally):
        self.options, self.problems, self.tally = options, problems, tally

    def item(self, line: dict[str, Any], where: str) -> Item | None:
        options = self.options
        before = len(self.problems)
        raw_id = _field(line, options.id_field)
        if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool) or not str(raw_id).strip():
            self.problems.add(
                f"{where}: '{options.id_field}' (record.id_field) is missing or not a string or "
                f"integer, got {describe_json(raw_id)}"
            )
            return None
        item_id = str(raw_id)
        if why := name_problem(item_id):
            self.problems.add(f"{where}: the example id {why}")
        text = line.get(options.text_field)
        if not isinstance(text, str):
            self.problems.add(f"{where}: '{options.text_field}' (record.text_field) is missing or not a string")
            return None
        versions = line.get("versions")
        if not isinstance(versions, list):
            self.problems.add(
                f"{where}: no 'versions' list: not the output of Prodigy's review recipe (it lists each "
                "annotator session's version of the example there)"
            )
            return None
        views = {line.get("_view_id")} | {version.get("_view_id") for version in versions if isinstance(version, dict)}
        if binary := sorted(view for view in views if view in BINARY_VIEWS):
            self.problems.add(
                f"{where}: a review of binary annotations (view '{binary[0]}': one suggested span accepted or "
                "rejected), not of manual ones: each version is a yes/no on one span, not an annotator's spans"
            )
            return None
        labellings: dict[str, tuple[Span, ...]] = {}
        made_by: dict[str, int] = {}  # session -> the version holding it
        for number, version in enumerate(versions, start=1):
            here = f"{where}, version {number}"
            if not isinstance(version, dict):
                self.problems.add(f"{here}: not an object")
                continue
            sessions = version.get("sessions")
            if (
                not isinstance(sessions, list)
                or not sessions
                or not all(isinstance(session, str) and session.strip() for session in sessions)
            ):
                self.problems.add(
                    f"{here}: 'sessions' must be a non-empty list of session ids, got {describe_json(sessions)}"
                )
                continue
            answer = self._answer(version, here)
            spans = self._spans(version.get("spans", []), text, here)
            if answer is None or spans is None:
                continue
            for session in sessions:
                if session in made_by:
                    self.problems.add(f"{here}: session '{session}' also made version {made_by[session]}")
                    continue
                made_by[session] = number
                if answer != "accept":
                    self.tally.version_answers[answer] += 1  # the annotator rejected or skipped it: absent
                    continue
                labellings[session] = spans
        answer = self._answer(line, f"{where}, the review")
        final = self._spans(line.get("spans", []), text, f"{where}, the reviewed spans")
        if len(self.problems) > before or answer is None or final is None:
            return None
        self.tally.reviewer_answers[answer] += 1
        return self._item(item_id, text, labellings, final if answer == "accept" else None, where)

    def _item(
        self, item_id: str, text: str, sessions: dict[str, tuple[Span, ...]], final: tuple[Span, ...] | None, where: str
    ) -> Item | None:
        options = self.options
        meta: dict[str, Any] = {}
        labellings: dict[str, tuple[Span, ...]] = {}
        ordered = sorted(sessions)
        if options.labellings_by == "pass":
            for position, session in enumerate(ordered, start=1):
                labellings[f"pass_{position}"] = sessions[session]
            meta = {"sessions": ordered, "third_pass": len(ordered) >= 3}
        else:
            for session in ordered:
                name = options.names.get(session, session)
                if why := name_problem(name):
                    self.problems.add(f"{where}: the labelling name (the session id) {why}")
                    return None
                if name == options.aggregate:
                    self.problems.add(
                        f"{where}: session '{session}' has the aggregate's name '{name}'; rename it "
                        "with record.names or record.aggregate"
                    )
                    return None
                labellings[name] = sessions[session]
        for session in ordered:
            self.tally.sessions[session] += 1
        if final is not None:
            labellings[options.aggregate] = final
        return Item(id=item_id, language=options.language, labellings=labellings, text=text, meta=meta)

    def _answer(self, obj: dict[str, Any], where: str) -> str | None:
        answer = obj.get("answer")
        if answer not in ANSWERS:
            self.problems.add(f"{where}: 'answer' must be accept, reject or ignore, got {describe_json(answer)}")
            return None
        return answer

    def _spans(self, raw: Any, text: str, where: str) -> tuple[Span, ...] | None:
        if not isinstance(raw, list):
            self.problems.add(f"{where}: 'spans' must be a list, got {describe_json(raw)}")
            return None
        spans: list[Span] = []
        before = len(self.problems)
        for position, span in enumerate(raw, start=1):
            here = f"{where}, span {position}"
            if not isinstance(span, dict):
                self.problems.add(f"{here}: not an object: {describe_json(span)}")
                continue
            start, end, label = span.get("start"), span.get("end"), span.get("label")
            fault = span_fault(start, end, [label], len(text))
            if fault == "offsets":
                self.problems.add(f"{here}: 'start' and 'end' must be integers: {describe_json(span)}")
                continue
            if fault == "labels":
                self.problems.add(f"{here}: 'label' must be a non-empty string: {describe_json(span)}")
                continue
            if fault == "order":
                self.problems.add(f"{here}: needs 0 <= start < end: {describe_json(span)}")
                continue
            if fault == "beyond":
                self.problems.add(f"{here}: ends at {end}, beyond the text ({len(text)} characters)")
                continue
            quoted = span.get("text")
            if isinstance(quoted, str) and quoted != text[start:end]:
                self.problems.add(
                    f"{here}: its text {describe_json(quoted)} is not the text at [{start}, {end}) "
                    f"({describe_json(text[start:end])})"
                )
                continue
            if problem := check_label(label, self.options.labels):
                self.problems.add(f"{here}: {problem}")
                continue
            spans.append((start, end, label))
        return tuple(sorted(spans)) if len(self.problems) == before else None


def load(options: ProdigyOptions, duplicate_key: str) -> Record:
    """Read the review output; one item per reviewed example."""
    display = options.source.display
    try:
        data = read_bytes(options.source.path)
    except OSError as error:
        raise InputError(f"{display}: cannot read the file ({error.strerror})") from None
    problems = ProblemList()
    tally = Tally()
    reader = ExampleReader(options, problems, tally)
    located: list[tuple[str, Item]] = []
    for number, line in json_lines(data, display, problems):
        if len(problems) >= MAX_PROBLEMS:
            break
        item = reader.item(line, f"{display}:{number}")
        if item is not None:
            located.append((f"{display}:{number}", item))
    if not located and not problems:
        problems.add(f"{display}: no examples")
    check_unique_ids(located, problems)
    problems.raise_if_any()
    items = tuple(item for _, item in located)
    if options.text_dup_keys:
        items = with_text_dup_keys(items, duplicate_key)
    names = Record(items=items).labelling_names
    by = "pass (sessions in id order)" if options.labellings_by == "pass" else "session"
    notes = [
        f"prodigy: {count(len(items), 'reviewed example')} from {options.source.name}; labellings by {by}: "
        + (", ".join(names) or "none")
    ]
    if options.labellings_by == "pass":
        sessions = ", ".join(f"{shown(session)} ({times:,})" for session, times in sorted(tally.sessions.items()))
        notes.append(f"prodigy: sessions (examples): {sessions}")
    answers = tally.reviewer_answers
    if answers["reject"] or answers["ignore"]:
        notes.append(
            f"prodigy: the reviewer rejected {count(answers['reject'], 'example')} and ignored "
            f"{answers['ignore']:,}: '{options.aggregate}' is absent there"
        )
    if tally.version_answers:
        done = {"reject": "rejected", "ignore": "ignored"}
        kinds = " and ".join(f"{times:,} {done[answer]}" for answer, times in sorted(tally.version_answers.items()))
        notes.append(f"prodigy: session versions {kinds}: that session is absent on the example")
    return Record(items=items, sources=(options.source,), notes=tuple(notes))
