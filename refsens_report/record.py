"""The canonical annotation record: items, labellings and spans, and the JSON Lines loader.

A labelling is *present* on an item (possibly with zero spans) or *absent* from it; the model keeps the two
apart: ``item.labellings`` holds only present labellings, ``()`` meaning present-but-empty.
Every input adapter (``refsens_report.adapters``) produces this same model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import orjson

from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList

Span = tuple[int, int, str]
MAX_OFFSET = 2**53  # offsets stay exact in int64 arithmetic and in JSON readers that use doubles
POOLED = "pooled"  # the language label of pooled rows, so no item may use it


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
    """An annotation record: items in record order, and where they came from."""

    items: tuple[Item, ...]
    sources: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()  # what an adapter repaired or skipped, shown in the report

    @property
    def labelling_names(self) -> tuple[str, ...]:
        """Return every labelling name in order of first appearance."""
        seen: dict[str, None] = {}
        for item in self.items:
            for name in item.labellings:
                seen.setdefault(name, None)
        return tuple(seen)

    @property
    def languages(self) -> tuple[str, ...]:
        """Return the languages, sorted (the stratum order used everywhere)."""
        return tuple(sorted({item.language for item in self.items}))


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def check_span(raw: Any, text: str | None) -> tuple[Span | None, str | None]:
    """Return ``(span, None)`` for a valid span, else ``(None, what is wrong)``."""
    if not isinstance(raw, (list, tuple)) or len(raw) != 3:
        return None, f"is not [start, end, type]: {_describe(raw)}"
    start, end, label = raw
    # bool is an int subclass; true/false are not offsets
    if not (isinstance(start, int) and not isinstance(start, bool)) or not (
        isinstance(end, int) and not isinstance(end, bool)
    ):
        return None, f"offsets must be integers: {_describe(raw)}"
    if not isinstance(label, str) or not label.strip():
        return None, f"type must be a non-empty string: {_describe(raw)}"
    if start < 0:
        return None, f"has start < 0: {_describe(raw)}"
    if end > MAX_OFFSET:
        return None, f"has an offset beyond {MAX_OFFSET} characters: {_describe(raw)}"
    if start >= end:
        return None, f"has start >= end: {_describe(raw)}"
    if text is not None and end > len(text):
        return None, f"ends at {end}, beyond the text ({len(text)} characters): {_describe(raw)}"
    return (start, end, label), None


def _all_valid(spans: list[Any], text: str | None) -> bool:
    """Return whether every span is valid: the fast path; ``check_span`` says what is wrong otherwise."""
    limit = MAX_OFFSET if text is None else len(text)
    for raw in spans:
        if type(raw) is not list or len(raw) != 3:
            return False
        start, end, label = raw
        # type(...) is int rejects bool, which is an int subclass but not an offset
        if type(start) is not int or type(end) is not int or type(label) is not str:
            return False
        if not 0 <= start < end <= limit or not label or label.isspace():
            return False
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
    if (text is not None and type(text) is not str) or type(meta) is not dict:
        return None
    if type(meta.get("third_pass", False)) is not bool:
        return None
    spans_by_name = {}
    for name, spans in labellings.items():
        if type(spans) is not list or not name or name.isspace() or not _all_valid(spans, text):
            return None
        spans_by_name[name] = tuple(map(tuple, spans))
    return Item(id=item_id, language=language, labellings=spans_by_name, text=text, meta=meta)


def parse_item(obj: Any, where: str, problems: ProblemList) -> Item | None:
    """Validate one decoded JSON object as an item; report problems as ``where: ...``."""
    fast = _fast_item(obj)
    if fast is not None:
        return fast
    if not isinstance(obj, dict):
        problems.add(f"{where}: the line is not a JSON object")
        return None
    start_count = len(problems)
    item_id = obj.get("id")
    if not isinstance(item_id, str) or not item_id.strip():
        problems.add(f"{where}: 'id' is missing or not a non-empty string")
    language = obj.get("language")
    if not isinstance(language, str) or not language.strip():
        problems.add(f"{where}: 'language' is missing or not a non-empty string")
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
        problems.add(f"{where}: meta 'third_pass' must be true or false, got {_describe(meta['third_pass'])}")
    labellings_raw = obj.get("labellings")
    labellings: dict[str, tuple[Span, ...]] = {}
    if not isinstance(labellings_raw, dict):
        problems.add(f"{where}: 'labellings' is missing or not an object")
    else:
        for name, spans in labellings_raw.items():
            if not name.strip():
                problems.add(f"{where}: a labelling has an empty name")
                continue
            if not isinstance(spans, list):
                problems.add(f"{where}: labelling '{name}' must be a list of spans, got {_describe(spans)}")
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


def _json_problem(line: bytes) -> str:
    """Return what is wrong with a line that does not parse, in the standard library's words."""
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not valid UTF-8 (byte {error.start + 1} of the line)"
    try:
        json.loads(decoded)
    except json.JSONDecodeError as error:
        return f"invalid JSON ({error.msg} at column {error.colno})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"
    return "invalid JSON (a value outside what JSON allows, such as NaN or an integer beyond 64 bits)"


def load_jsonl(path: Path, display: str | None = None) -> Record:
    """Read a canonical JSON Lines record; raise ``InputError`` listing every bad line."""
    display = display or str(path)
    problems = ProblemList()
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"{display}: cannot read the record ({error.strerror})") from None
    located: list[tuple[str, Item]] = []
    stopped_at = None
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if len(problems) >= MAX_PROBLEMS - 1:
            stopped_at = number
            break
        if not line.strip():
            continue
        where = f"{display}:{number}"
        try:
            obj = orjson.loads(line)  # ~3x faster than json; the slow path below only explains failures
        except orjson.JSONDecodeError:
            problems.add(f"{where}: {_json_problem(line)}")
            continue
        item = parse_item(obj, where, problems)
        if item is not None:
            located.append((where, item))
    if not located and not problems:
        problems.add(f"{display}: the record is empty (no items)")
    check_unique_ids(located, problems)
    if stopped_at is not None:
        problems.add(f"{display}: stopped reading at line {stopped_at}; fix the problems above and run again")
    problems.raise_if_any()
    return Record(items=tuple(item for _, item in located), sources=(path,))
