"""BRAT standoff: one folder per labelling, a ``.txt`` and an ``.ann`` file per document; items are documents.

``T`` lines (text-bound annotations) become spans; a discontinuous one (``T3<TAB>ORG 0 5;10 16``) becomes one
span per fragment, counted in the record's notes. Relations, events, attributes, normalisations and notes
are not spans and are only counted. Offsets count characters of the ``.txt`` file exactly as stored
(``\\r\\n`` is two characters), as BRAT itself counts them.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from refsens_report.adapters.common import (
    InputPath,
    check_label,
    count,
    excerpt,
    first_difference,
    labelling_entries,
    read_dup_key,
    read_labels,
    read_language,
    read_path,
    unique_paths,
    with_text_dup_keys,
)
from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.files import decode_utf8, path_problem, read_bytes, text_files
from refsens_report.names import name_problem
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span

FRAGMENT = re.compile(r"^(\d+) (\d+)$")
MAX_OFFSET_DIGITS = 18  # far beyond any text; longer numbers are not converted at all
OTHER_KINDS = {
    "R": "relation",
    "E": "event",
    "A": "attribute",
    "M": "attribute",
    "N": "normalisation",
    "#": "note",
    "*": "equivalence",
}


@dataclass(frozen=True)
class BratOptions:
    """The checked `[record]` keys of a BRAT record."""

    language: str
    labels: frozenset[str] | None
    folders: tuple[tuple[str, InputPath], ...]  # labelling name -> its folder, in config order
    text_dup_keys: bool = False


def read_options(reader: OptionReader, base_dir: Path) -> BratOptions | None:
    """Read `[record]` for format = "brat"; bad keys are reported through ``reader``."""
    language = read_language(reader)
    labels = read_labels(reader)
    root = read_path(reader, base_dir, "root", kind="folder", required=False)
    root_failed = reader.table.get("root") is not None and root is None
    _, entries = labelling_entries(
        reader,
        "path",
        "a table mapping each labelling name to its folder of .txt/.ann files",
        "a folder path or a table with path",
    )
    folders: list[tuple[str, InputPath]] = []
    for name, _entry, entry_reader in entries:
        folder = (
            None if root_failed else read_path(entry_reader, root.path if root else base_dir, "path", kind="folder")
        )
        entry_reader.used.add("path")
        entry_reader.finish()
        if folder is not None:
            folders.append((name, folder.under(root) if root else folder))
    return BratOptions(language, labels, tuple(folders), read_dup_key(reader))


@dataclass
class Tally:
    """What reading the .ann files split, skipped or found missing, for the record's notes."""

    discontinuous: int = 0
    fragments: int = 0
    other_lines: Counter = field(default_factory=Counter)
    missing_ann: Counter = field(default_factory=Counter)  # labelling -> documents with a .txt but no .ann


def _read_text(path: Path, display: str, problems: ProblemList) -> str | None:
    """Return a file's text with its \\r kept (BRAT offsets count it), or None with the problem reported."""
    try:
        raw = read_bytes(path)  # a regular file only: never a FIFO or a device
    except OSError as error:
        problems.add(f"{display}: cannot read the file ({error.strerror})")
        return None
    text, problem = decode_utf8(raw, display)
    if problem:
        problems.add(problem)
    return text


def _position(text: str, index: int) -> str:
    """Return 'line L, column C' for a character index, for messages about two texts parting."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _same_text(covered: str, stored: str) -> bool:
    """Compare a span's covered text with the .ann text field, ignoring how whitespace was written."""
    return " ".join(covered.split()) == " ".join(stored.split())


def _fragments(offsets: str, length: int) -> tuple[list[tuple[int, int]], str | None]:
    """Return the ``(start, end)`` fragments of a T line's offsets, or why they are not valid."""
    fragments: list[tuple[int, int]] = []
    for piece in offsets.split(";"):
        match = FRAGMENT.match(piece.strip())
        if match is None:
            return [], f"offsets must be 'START END' pairs separated by ';', got {offsets!r}"
        if max(len(match[1]), len(match[2])) > MAX_OFFSET_DIGITS:  # int() refuses 4,300 digits and more
            return [], f"fragment '{piece.strip()[:40]}...' ends beyond the text ({length} characters)"
        start, end = int(match[1]), int(match[2])
        if start >= end:
            return [], f"fragment '{piece.strip()}' has start >= end"
        if end > length:
            return [], f"fragment '{piece.strip()}' ends beyond the text ({length} characters)"
        fragments.append((start, end))
    return fragments, None


def parse_ann(
    path: Path, display: str, text: str, labels: frozenset[str] | None, tally: Tally, problems: ProblemList
) -> list[Span] | None:
    """Return the spans of one .ann file (fragments of discontinuous spans apart); report every bad line."""
    content = _read_text(path, display, problems)
    if content is None:
        return None
    spans: list[Span] = []
    seen_ids: dict[str, int] = {}
    before = len(problems)
    for number, line in enumerate(content.split("\n"), start=1):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        line = line.rstrip("\r")
        if not line.strip():
            continue
        where = f"{display}:{number}"
        kind = line[0]
        if kind != "T":
            if kind in OTHER_KINDS:
                tally.other_lines[OTHER_KINDS[kind]] += 1
            else:
                problems.add(f"{where}: not a BRAT annotation line (expected T, R, E, A, M, N, # or *): {line[:40]!r}")
            continue
        fields = line.split("\t")
        if len(fields) < 2 or " " not in fields[1]:
            problems.add(f"{where}: a T line needs 'ID<TAB>TYPE START END<TAB>TEXT', got {line[:60]!r}")
            continue
        annotation_id = fields[0]
        if annotation_id in seen_ids:
            problems.add(f"{where}: id '{annotation_id}' repeats the annotation at line {seen_ids[annotation_id]}")
            continue
        seen_ids[annotation_id] = number
        label, _, offsets = fields[1].partition(" ")
        if not label:
            problems.add(f"{where}: the annotation has no type before its offsets: {fields[1]!r}")
            continue
        if problem := check_label(label, labels):
            problems.add(f"{where}: {problem}")
            continue
        fragments, problem = _fragments(offsets, len(text))
        if problem:
            problems.add(f"{where}: {problem}")
            continue
        if len(fields) >= 3:
            covered = " ".join(text[start:end] for start, end in fragments)
            if not _same_text(covered, fields[2]):
                problems.add(
                    f"{where}: the offsets cover {covered[:40]!r} but the annotation's text is {fields[2][:40]!r} "
                    "(was the .txt file changed, or its line endings, after annotation?)"
                )
                continue
        if len(fragments) > 1:
            tally.discontinuous += 1
            tally.fragments += len(fragments)
        spans.extend((start, end, label) for start, end in fragments)
    return spans if len(problems) == before else None


def _documents(folder: InputPath, problems: ProblemList) -> dict[str, Path]:
    """Return document id (path without suffix, relative to the folder) -> .txt path; report unusable files."""
    documents: dict[str, Path] = {}
    for relative, path in text_files(folder.path, folder.display, problems):
        document = relative[: -len(".txt")]
        if why := name_problem(document):
            problems.add(f"{folder.display}/{relative}: the document id (the file name) {why}")
            continue
        documents[document] = path
    return documents


def load(options: BratOptions, duplicate_key: str) -> Record:
    """Read every labelling folder; items are the documents found in any of them, sorted by id."""
    problems = ProblemList()
    tally = Tally()
    texts: dict[str, tuple[str, str]] = {}  # document -> (text, display of the file it came from)
    labellings: dict[str, dict[str, tuple[Span, ...]]] = {}  # document -> labelling -> spans
    read: list[InputPath] = []  # every file read, named under its folder as written in the config
    for name, folder in options.folders:
        documents = _documents(folder, problems)
        for ann in sorted(folder.path.rglob("*.ann")):
            if ann.with_suffix(".txt") not in documents.values():
                problems.add(f"{folder.display}/{ann.relative_to(folder.path).as_posix()}: no .txt file beside it")
        if not documents:
            problems.add(f"{folder.display}: no .txt files (labelling '{name}' needs one .txt and .ann per document)")
        for document, txt in documents.items():
            if len(problems) >= MAX_PROBLEMS:
                break
            display = f"{folder.display}/{document}.txt"
            text = _read_text(txt, display, problems)
            if text is None:
                continue
            read.append(InputPath(txt, display, f"{folder.name}/{document}.txt"))
            if document in texts:
                known, known_display = texts[document]
                if known != text:
                    index = first_difference(known, text)
                    problems.add(
                        f"{display}: the text differs from {known_display} at {_position(text, index)} "
                        f"({excerpt(text, index)} here, {excerpt(known, index)} there): every labelling must "
                        "annotate the same text"
                    )
                    continue
            else:
                texts[document] = (text, display)
            ann = txt.with_suffix(".ann")
            if not os.path.lexists(ann):
                tally.missing_ann[name] += 1  # not annotated: the labelling is absent, not empty
                continue
            if problem := path_problem(ann, "file"):
                problems.add(f"{folder.display}/{document}.ann: {problem}")
                continue
            read.append(InputPath(ann, f"{folder.display}/{document}.ann", f"{folder.name}/{document}.ann"))
            spans = parse_ann(ann, f"{folder.display}/{document}.ann", text, options.labels, tally, problems)
            if spans is not None:
                labellings.setdefault(document, {})[name] = tuple(spans)
    problems.raise_if_any()
    items = tuple(
        Item(id=document, language=options.language, labellings=labellings.get(document, {}), text=texts[document][0])
        for document in sorted(texts)
    )
    if options.text_dup_keys:
        items = with_text_dup_keys(items, duplicate_key)
    notes = [
        f"brat: {count(len(items), 'document')} from {count(len(options.folders), 'folder')} "
        f"({', '.join(f'{name}: {folder.name}' for name, folder in options.folders)})"
    ]
    if tally.discontinuous:
        notes.append(
            f"brat: {count(tally.discontinuous, 'discontinuous span')} split into {tally.fragments:,} fragments, "
            "one span each"
        )
    if tally.other_lines:
        kinds = ", ".join(f"{count(times, kind)}" for kind, times in sorted(tally.other_lines.items()))
        notes.append(f"brat: annotations that are not spans skipped: {kinds}")
    for name, missing in tally.missing_ann.items():
        notes.append(f"brat: labelling '{name}' has no .ann file for {count(missing, 'document')}: absent there")
    return Record(items=items, sources=unique_paths(read), notes=tuple(notes))
