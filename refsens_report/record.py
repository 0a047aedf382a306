"""The canonical annotation record: items, labellings and spans, and the JSON Lines loader.

A labelling is *present* on an item (possibly with zero spans) or *absent* from it; the model keeps the two
apart: ``item.labellings`` holds only present labellings, ``()`` meaning present-but-empty.
Every input adapter (``refsens_report.adapters``) produces this same model.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import Any

import orjson

from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList, printable
from refsens_report.files import InputPath, read_bytes
from refsens_report.formatting import count
from refsens_report.names import name_problem, shown
from refsens_report.table import SpanTable

Span = tuple[int, int, str]
MAX_OFFSET = 2**53  # offsets stay exact in int64 arithmetic and in JSON readers that use doubles
POOLED = "pooled"  # the language label of pooled rows, so no item may use it


class Note(str):
    """A record note that says what kind of note it is: notes of one kind have the same shape (one per part
    and labelling, say), so the report prints how many there are and the first few instead of every one.

    A str, so every reader of the notes (validate, convert, results.json) takes it as the text it is; a plain
    str note is a kind of its own. ``kind`` is a readable description of the shape, written where the note is.
    """

    kind: str

    def __new__(cls, text: str, kind: str) -> Note:
        note = super().__new__(cls, text)
        note.kind = kind
        return note

    def __reduce__(self) -> tuple:
        return Note, (str(self), self.kind)


def _printable_note(note: str) -> str:
    """Return the note with control and bidi characters shown escaped, keeping its kind."""
    shown = printable(note)
    if isinstance(note, Note):
        return note if shown == note else Note(shown, note.kind)
    return shown


NOTES_SHOWN = 5  # the notes of one kind printed (4,000 parts would otherwise be hundreds of pages or lines)


def note_groups(notes: Sequence[str], kinds: Mapping[str, Sequence[int]]) -> list[tuple[str | None, tuple[str, ...]]]:
    """Return the notes grouped by kind, in the order of each kind's first note, as (heading, the first
    ``NOTES_SHOWN`` notes); a note of no kind, or alone of its kind, has no heading and is printed as it is.
    ``kinds`` maps a kind to the places of its notes (``note_kinds``, results.json ``record.note_kinds``)."""
    kind_of = {place: kind for kind, places in kinds.items() for place in places}
    grouped: dict[str | int, list[str]] = {}
    for place, note in enumerate(notes):
        grouped.setdefault(kind_of.get(place, place), []).append(str(note))
    groups: list[tuple[str | None, tuple[str, ...]]] = []
    for kind, members in grouped.items():
        if len(members) == 1:
            groups.append((None, (members[0],)))
            continue
        more = f" (the first {NOTES_SHOWN} shown)" if len(members) > NOTES_SHOWN else ""
        groups.append((f"{count(len(members))} notes: {kind}{more}", tuple(members[:NOTES_SHOWN])))
    return groups


def note_kinds(notes: Iterable[str]) -> dict[str, list[int]]:
    """Return each kind of note (results.json ``record.note_kinds``) with the places of its notes, in order."""
    kinds: dict[str, list[int]] = {}
    for index, note in enumerate(notes):
        if isinstance(note, Note):
            kinds.setdefault(note.kind, []).append(index)
    return kinds


@dataclass(frozen=True, slots=True)
class Item:
    """One prompt / sentence / document with the labellings present on it."""

    id: str
    language: str
    labellings: Mapping[str, tuple[Span, ...]]
    text: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Record:
    """An annotation record: items in record order, and where they came from.

    A record read from columns (the Parquet format) has no ``Item`` objects: its items live in ``columnar``
    only. Everything the audit reads goes through ``table`` (the arrays) or ``item(index)`` (one item).
    """

    items: tuple[Item, ...] = ()
    sources: tuple[InputPath, ...] = ()  # the files (or folders) read, each with its name as written in the config
    notes: tuple[str, ...] = ()  # what an adapter repaired or skipped, shown in the report
    columnar: SpanTable | None = None  # the items as arrays, for a record read from columns (no ``items``)

    def __post_init__(self) -> None:
        # the audit names each source as written in the config (InputPath.name): a bare Path has no such name,
        # and a resolved one would make results.json depend on where the data lives
        for source in self.sources:
            if not isinstance(source, InputPath):
                raise TypeError(f"Record.sources must hold InputPaths (the adapter's options), got {source!r}")
        # notes quote the input (file names, result types, session ids): printed on the terminal by validate and
        # in the report, a control or bidi character among them is shown escaped, whichever adapter wrote it
        object.__setattr__(self, "notes", tuple(map(_printable_note, self.notes)))

    @cached_property
    def table(self) -> SpanTable:
        """Return the record as arrays (built once from the items, or the columns it was read as)."""
        return self.columnar if self.columnar is not None else SpanTable.from_items(self.items)

    @property
    def n_items(self) -> int:
        return self.table.n_items

    def item(self, index: int) -> Item:
        """Return the item at ``index`` in record order (built from the arrays for a record read from columns)."""
        if self.columnar is None:
            return self.items[index]
        table = self.table
        meta = {key: values[index] for key, values in table.meta.items() if values[index] is not None}
        return Item(
            id=str(table.ids[index]),
            language=table.languages[table.language[index]],
            labellings=table.item_spans(index),
            text=None if table.text is None else table.text[index],
            meta=meta,
        )

    def with_notes(self, *notes: str) -> Record:
        """Return the record with more notes, keeping the arrays already built (no second pass over the items)."""
        noted = replace(self, notes=self.notes + notes)
        if "table" in self.__dict__:
            noted.__dict__["table"] = self.__dict__["table"]
        return noted

    @property
    def labelling_names(self) -> tuple[str, ...]:
        """Return every labelling name in order of first appearance."""
        return self.table.names

    @property
    def languages(self) -> tuple[str, ...]:
        """Return the languages, sorted (the stratum order used everywhere)."""
        return self.table.languages


def describe_json(value: Any) -> str:
    """Return a value as JSON for a message, cut at 60 characters; nested too deeply for JSON, as Python shows it."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):  # a thousand levels deep (orjson reads up to 1,024)
        text = shown(value, limit=60)
    return text if len(text) <= 60 else text[:57] + "..."


# What can be wrong with a span's offsets and types, in the order span_fault checks: each format says it in
# its own words (its users know its field names), but every format checks the same things in the same order.
SPAN_FAULTS = ("offsets", "labels", "order", "beyond")


def span_fault(start: Any, end: Any, labels: Any, limit: int | None) -> str | None:
    """Return the first of SPAN_FAULTS a span has, None when it has none: the offsets integers, ``labels`` a
    non-empty list of non-empty strings, 0 <= start < end, end at most ``limit`` (None: not checked).

    The one span validator of the JSONL record, doccano, Prodigy and Label Studio; a format with one type per
    span passes ``[label]``. Whether a type is an acceptable name (name_problem, record.labels) is the caller's.
    """
    # bool is an int subclass; true/false are not offsets
    if not all(isinstance(offset, int) and not isinstance(offset, bool) for offset in (start, end)):
        return "offsets"
    if (
        not isinstance(labels, list)
        or not labels
        or not all(isinstance(label, str) and label.strip() for label in labels)
    ):
        return "labels"
    if not 0 <= start < end:
        return "order"
    if limit is not None and end > limit:
        return "beyond"
    return None


def check_span(raw: Any, text: str | None) -> tuple[Span | None, str | None]:
    """Return ``(span, None)`` for a valid span, else ``(None, what is wrong)``."""
    if not isinstance(raw, (list, tuple)) or len(raw) != 3:
        return None, f"is not [start, end, type]: {describe_json(raw)}"
    start, end, label = raw
    fault = span_fault(start, end, [label], MAX_OFFSET if text is None else len(text))
    if fault == "offsets":
        return None, f"offsets must be integers: {describe_json(raw)}"
    if fault == "labels":
        return None, f"type must be a non-empty string: {describe_json(raw)}"
    if why := name_problem(label):
        return None, f"type {why}"
    if fault == "order" and start < 0:
        return None, f"has start < 0: {describe_json(raw)}"
    if fault is not None and end > MAX_OFFSET:
        return None, f"has an offset beyond {MAX_OFFSET} characters: {describe_json(raw)}"
    if fault == "order":
        return None, f"has start >= end: {describe_json(raw)}"
    if fault == "beyond":
        return None, f"ends at {end}, beyond the text ({len(text)} characters): {describe_json(raw)}"  # type: ignore[arg-type]
    return (start, end, label), None


# Span types already found valid (non-empty, printable, not all space): a record has few, each on many spans,
# so the fast path checks a type's characters once, not once per span. Bounded: cleared when it grows past this.
_VALID_TYPES: set[str] = set()
VALID_TYPES_KEPT = 1 << 16


def _all_valid(spans: list[Any], text: str | None) -> bool:
    """Return whether every span is valid: the fast path; ``check_span`` says what is wrong otherwise."""
    limit = MAX_OFFSET if text is None else len(text)
    known = _VALID_TYPES
    for raw in spans:
        if type(raw) is not list or len(raw) != 3:
            return False
        start, end, label = raw
        # type(...) is int rejects bool, which is an int subclass but not an offset
        if type(start) is not int or type(end) is not int or type(label) is not str or not 0 <= start < end <= limit:
            return False
        if label not in known:  # only a str that passed the checks below is in the set
            if not label or label.isspace() or not label.isprintable():
                return False
            if len(known) >= VALID_TYPES_KEPT:
                known.clear()
            known.add(label)
    return True


def _fast_item(obj: Any) -> Item | None:
    """Return the item when the line is entirely well formed (the common case), else None."""
    if type(obj) is not dict:
        return None
    item_id, language, labellings = obj.get("id"), obj.get("language"), obj.get("labellings")
    text, meta = obj.get("text"), obj.get("meta", {})
    if type(item_id) is not str or type(language) is not str or type(labellings) is not dict:
        return None
    if not item_id or item_id.isspace() or not language or language.isspace() or language == POOLED:
        return None
    if not item_id.isprintable() or not language.isprintable():  # the slow path says which character
        return None
    if (text is not None and type(text) is not str) or type(meta) is not dict:
        return None
    if type(meta.get("third_pass", False)) is not bool:
        return None
    spans_by_name = {}
    for name, spans in labellings.items():
        if type(spans) is not list or not name or name.isspace() or not name.isprintable():
            return None
        if not _all_valid(spans, text):
            return None
        spans_by_name[name] = tuple(map(tuple, spans))
    return Item(id=item_id, language=language, labellings=spans_by_name, text=text, meta=meta)


def parse_item(obj: Any, where: str, problems: ProblemList) -> Item | None:
    """Validate one decoded JSON object as an item; report problems as ``where: ...`` (the slow path: a line
    ``_fast_item`` takes needs none of it)."""
    if not isinstance(obj, dict):
        problems.add(f"{where}: the line is not a JSON object")
        return None
    start_count = len(problems)
    item_id = obj.get("id")
    if not isinstance(item_id, str) or not item_id.strip():
        problems.add(f"{where}: 'id' is missing or not a non-empty string")
    elif why := name_problem(item_id):
        problems.add(f"{where}: 'id' {why}")
    language = obj.get("language")
    if not isinstance(language, str) or not language.strip():
        problems.add(f"{where}: 'language' is missing or not a non-empty string")
    elif why := name_problem(language):
        problems.add(f"{where}: 'language' {why}")
    elif language == POOLED:
        problems.add(f"{where}: language '{POOLED}' is reserved for the pooled rows of the results; rename it")
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        problems.add(f"{where}: 'text' must be a string")
        text = None
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        problems.add(f"{where}: 'meta' must be an object")
        meta = {}
    if "third_pass" in meta and not isinstance(meta["third_pass"], bool):
        problems.add(f"{where}: meta 'third_pass' must be true or false, got {describe_json(meta['third_pass'])}")
    labellings_raw = obj.get("labellings")
    labellings: dict[str, tuple[Span, ...]] = {}
    if not isinstance(labellings_raw, dict):
        problems.add(f"{where}: 'labellings' is missing or not an object")
    else:
        for name, spans in labellings_raw.items():
            if not name.strip():
                problems.add(f"{where}: a labelling has an empty name")
                continue
            if why := name_problem(name):
                problems.add(f"{where}: the labelling name {why}")
                continue
            if not isinstance(spans, list):
                problems.add(f"{where}: labelling '{name}' must be a list of spans, got {describe_json(spans)}")
                continue
            if _all_valid(spans, text):
                labellings[name] = tuple(map(tuple, spans))
                continue
            valid: list[Span] = []
            for position, raw in enumerate(spans, start=1):
                span, error = check_span(raw, text)
                if error:
                    problems.add(f"{where}: span {position} of labelling '{name}' {error}")
                else:
                    valid.append(span)  # type: ignore[arg-type]
            labellings[name] = tuple(valid)
    if len(problems) > start_count:
        return None
    return Item(id=item_id, language=language, labellings=labellings, text=text, meta=meta)


def check_unique_ids(items: Iterable[tuple[str, Item]], problems: ProblemList) -> None:
    """Report every repeated id with where it was first seen."""
    first_seen: dict[str, str] = {}
    for where, item in items:
        if item.id in first_seen:
            problems.add(f"{where}: id '{item.id}' repeats the item at {first_seen[item.id]}")
        else:
            first_seen[item.id] = where


def json_problem(line: bytes) -> str:
    """Return what is wrong with a line that does not parse, in the standard library's words."""
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not valid UTF-8 (byte {error.start + 1} of the line)"
    try:
        value = json.loads(decoded)
    except json.JSONDecodeError as error:
        return f"invalid JSON ({error.msg} at column {error.colno})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"
    return f"invalid JSON ({outside_json(value)})"


def outside_json(value: Any) -> str:
    """Return what Python's reader accepted that JSON (and orjson) does not: NaN, a huge integer, a lone surrogate."""
    pending = [value]
    while pending:  # a loop, not recursion: the value may be nested a thousand levels deep
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, float) and item != item:
            return "NaN is not a JSON number"
        elif isinstance(item, float) and item in (float("inf"), float("-inf")):
            return "Infinity is not a JSON number"
        elif isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**64:
            return "an integer beyond 64 bits"
        elif isinstance(item, str):
            surrogate = next((character for character in item if "\ud800" <= character <= "\udfff"), None)
            if surrogate is not None:
                return (
                    f"a lone surrogate \\u{ord(surrogate):04x} in a string: half of a UTF-16 pair, "
                    "not a Unicode character"
                )
    return "a value outside what JSON allows"


def load_jsonl(source: InputPath | Path) -> Record:
    """Read a canonical JSON Lines record; raise ``InputError`` listing every bad line."""
    if not isinstance(source, InputPath):
        source = InputPath(Path(source), str(source))
    path, display = source.path, source.display
    problems = ProblemList()
    try:
        raw = read_bytes(path)  # a regular file only: never a FIFO or /dev/zero
    except OSError as error:
        raise InputError(f"{display}: cannot read the record ({error.strerror})") from None
    items: list[Item] = []
    # each item's line, in an array: a list would keep an int object per line among the spans' offsets, which
    # SpanTable.from_items reads next (10-25 ms slower on 25,000 items)
    numbers = array("q")
    stopped_at = None
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if len(problems) >= MAX_PROBLEMS - 1:
            stopped_at = number
            break
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)  # ~3x faster than json; the slow path below only explains failures
        except orjson.JSONDecodeError:
            problems.add(f"{display}:{number}: {json_problem(line)}")
            continue
        # where the line is, written only for a line with a problem (parse_item says which)
        item = _fast_item(obj) or parse_item(obj, f"{display}:{number}", problems)
        if item is not None:
            items.append(item)
            numbers.append(number)
    if not items and not problems:
        problems.add(f"{display}: the record is empty (no items)")
    if len(set(map(attrgetter("id"), items))) < len(items):  # check_unique_ids says which
        check_unique_ids(((f"{display}:{number}", item) for number, item in zip(numbers, items)), problems)
    if stopped_at is not None:
        problems.add(f"{display}: stopped reading at line {stopped_at}; fix the problems above and run again")
    problems.raise_if_any()
    return Record(items=tuple(items), sources=(source,))
