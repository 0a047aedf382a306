"""CoNLL/IOB files, one per labelling, over the same text: sentences or documents become items.

The first labelling's file defines the text and the items: tokens joined by single spaces (and, in
document items, sentences joined by a newline, which keeps the same offsets). Every other file is aligned
onto that text through its non-whitespace characters, so files that split sentences or tokens differently
(ReCoNLL merges sentences, CleanCoNLL re-tokenises) still land on the same items.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters import iob
from refsens_report.adapters.common import (
    ITEM_UNITS,
    InputPath,
    check_label,
    count,
    excerpt,
    first_difference,
    labelling_entries,
    read_dup_key,
    read_int,
    read_labels,
    read_language,
    read_path,
    unique_paths,
    with_text_dup_keys,
)
from refsens_report.adapters.label_map import MapCounts, read_label_map
from refsens_report.errors import MAX_PROBLEMS, InputError, ProblemList
from refsens_report.files import read_bytes
from refsens_report.names import shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Note, Record, Span, check_unique_ids

DOCSTART = "-DOCSTART-"
MAX_MISMATCHES_SHOWN = 5


@dataclass(frozen=True)
class LabellingSource:
    """Where one labelling's tags are: a file, its tag column and optionally a gold column to check."""

    name: str
    file: InputPath
    column: int = -1
    token_column: int = 1
    gold_column: int | None = None
    scheme: str = "auto"
    label_map: tuple[tuple[str, str], ...] = ()  # this labelling's own, applied before [record]'s

    @property
    def tags_only(self) -> bool:
        """Whether the file holds tags without tokens, one line per line of the first labelling's file."""
        return self.token_column == 0

    def describe(self) -> str:
        column = "last column" if self.column == -1 else f"column {self.column}"
        return f"{self.file.name}, {'tags only, ' if self.tags_only else ''}{column}"


@dataclass(frozen=True)
class Part:
    """One run of files over the same text (a language and split, say): its first labelling defines its items.

    ``name`` is None for a record without ``[[record.parts]]``, whose item ids are then ``sentence-N``;
    a part's item ids are ``<name>:sentence-N``, so they stay unique across parts.
    """

    name: str | None
    language: str
    meta: Mapping[str, Any]
    labellings: tuple[LabellingSource, ...]

    def describe(self) -> str:
        details = ", ".join([self.language, *(f"{key} = {value}" for key, value in self.meta.items())])
        return f"part '{self.name}' ({details}): " if self.name is not None else ""


@dataclass(frozen=True)
class ConllOptions:
    """The checked `[record]` keys of a conll record."""

    items: str
    labels: frozenset[str] | None
    gold: str | None
    parts: tuple[Part, ...]
    text_dup_keys: bool = False

    @property
    def labellings(self) -> tuple[LabellingSource, ...]:
        """Return every part's labelling sources, in order."""
        return tuple(source for part in self.parts for source in part.labellings)


# meta keys the adapter sets on every item itself
ITEM_META = ("line", "document", "sentences")


@dataclass(frozen=True)
class LabellingDefaults:
    """What `[record]` says for every labelling, and where the labelling paths are relative to."""

    column: int | None
    token_column: int
    scheme: str
    labels: frozenset[str] | None  # the types the labels check accepts (record.labels and what label_map maps)
    files_dir: Path
    root: InputPath | None  # record.root: messages name a file under it with the root before it
    root_failed: bool


# ----------------------------------------------------------------------------------------------------------
# config


def read_options(reader: OptionReader, base_dir: Path) -> ConllOptions | None:
    """Read `[record]` for format = "conll"; bad keys are reported through ``reader``."""
    parts_value = reader.get("parts")
    language = reader.string("language") if parts_value is not None else read_language(reader)
    default_scheme = reader.choice("scheme", iob.SCHEME_CHOICES, "auto")
    items = reader.choice("items", ITEM_UNITS, "sentences")
    labels = read_labels(reader)
    gold = reader.string("gold")
    default_column = read_int(reader, "column", None, allow_negative=True)
    default_token_column = read_token_column(reader, 1)
    # one place to say where the data lives: labelling paths are relative to it
    root = read_path(reader, base_dir, "root", kind="folder", required=False)
    defaults = LabellingDefaults(
        column=default_column,
        token_column=default_token_column,
        scheme=default_scheme,
        labels=labels,
        files_dir=root.path if root is not None else base_dir,
        root=root,
        root_failed=reader.table.get("root") is not None and root is None,
    )
    if parts_value is None:
        names, sources = read_labellings(reader, defaults)
        parts = (Part(None, language or "", {}, sources),)
    else:
        parts, names = read_parts(reader, parts_value, language, defaults)
    if gold is not None and names and gold not in names:
        where = "record.labellings" if parts_value is None else "the parts' labellings"
        reader.fail("gold", f"'{gold}' is not one of {where} ({', '.join(names)})")
    for number, part in enumerate(parts, start=1):
        checked = [source.name for source in part.labellings if source.gold_column is not None]
        if gold is not None and gold in names and checked and gold not in {s.name for s in part.labellings}:
            reader.fail(
                f"parts[{number}].labellings",
                f"{', '.join(checked)} set gold_column, checked against record.gold = '{gold}', which this part "
                "does not have",
            )
    sources = [source for part in parts for source in part.labellings]
    if gold is not None and not any(source.gold_column for source in sources) and not _sets_gold_column(reader.table):
        reader.fail("gold", "names the labelling gold columns are checked against, but no labelling sets gold_column")
    text_dup_keys = read_dup_key(reader)
    return ConllOptions(items, labels, gold, parts, text_dup_keys)


def _sets_gold_column(table: dict) -> bool:
    """Whether any labelling of the config, readable or not (a missing root drops them all), sets gold_column."""
    parts = table.get("parts")  # refused already when not an array of tables: only its tables count here
    tables = [table, *(part for part in parts if isinstance(part, dict))] if isinstance(parts, list) else [table]
    return any(
        isinstance(entry, dict) and "gold_column" in entry
        for part in tables
        if isinstance(part.get("labellings"), dict)
        for entry in part["labellings"].values()
    )


def read_labellings(reader: OptionReader, defaults: LabellingDefaults) -> tuple[list[str], tuple[LabellingSource, ...]]:
    """Read the ``labellings`` table of `[record]` or of one part: each name's file and columns.

    Returns the names as configured (also those whose file failed) and the sources that can be read.
    """
    names, entries = labelling_entries(
        reader,
        "path",
        "a table mapping each labelling name to its file (and column)",
        "a path or a table with path and column",
    )
    sources: list[LabellingSource] = []
    for name, entry, entry_reader in entries:
        # with a bad root every path would fail too: the root error alone says it
        file = None if defaults.root_failed else read_path(entry_reader, defaults.files_dir, "path")
        entry_reader.used.add("path")
        if file is not None and defaults.root is not None:
            file = file.under(defaults.root)  # an absolute path stays as written, not root//path
        token_column = read_token_column(entry_reader, defaults.token_column)
        column = read_int(entry_reader, "column", defaults.column, allow_negative=True)
        if column is None:  # a tags-only file's tag is its first column, any other file's its last
            column = 1 if token_column == 0 else -1
        gold_column = read_int(entry_reader, "gold_column", None, allow_negative=True)
        scheme = entry_reader.choice("scheme", iob.SCHEME_CHOICES, defaults.scheme)
        label_map = read_label_map(entry_reader, defaults.labels, "record.labels (with record.label_map)")
        entry_reader.finish()
        if token_column == 0 and name == names[0]:
            message = (
                "is 0 (tags only), but the first labelling's file defines the items and their text: "
                "list a labelling whose file has the tokens first"
            )
            if "token_column" in entry:
                reader.fail(f"labellings.{name}.token_column", message)
            else:  # the default of [record]
                reader.problems.add(
                    f"Config value 'record.token_column': {message} ({reader.prefix}.labellings.{name})"
                )
        if file is not None:
            sources.append(
                LabellingSource(name, file, column, token_column, gold_column, scheme, tuple(label_map.items()))
            )
    return names, tuple(sources)


def read_parts(
    reader: OptionReader, value: Any, language: str | None, defaults: LabellingDefaults
) -> tuple[tuple[Part, ...], list[str]]:
    """Read ``[[record.parts]]``: each part's language, meta and labellings (numbered from 1 in messages)."""
    if "labellings" in reader.table:
        reader.fail("labellings", "cannot be used with [[record.parts]]: each part lists its own labellings")
    if not isinstance(value, list) or not value or not all(isinstance(entry, dict) for entry in value):
        reader.fail(
            "parts",
            f"must be an array of tables ([[record.parts]]), each with language and labellings, got {shown(value)}",
        )
        return (), []
    parts: list[Part] = []
    names: list[str] = []
    seen: dict[str, int] = {}
    for number, table in enumerate(value, start=1):
        part_reader = reader.sub(table, f"parts[{number}]")
        part_language = part_reader.string("language", default=language, required=language is None) or ""
        name = part_reader.string("name")
        meta = read_meta(part_reader)
        part_names, sources = read_labellings(part_reader, defaults)
        part_reader.finish()
        names.extend(name for name in part_names if name not in names)
        if name is None:  # the first labelling's path as written: where the items come from
            first = (
                next(iter(table.get("labellings") or {}), None) if isinstance(table.get("labellings"), dict) else None
            )
            entry = table["labellings"][first] if first is not None else None
            written = entry if isinstance(entry, str) else entry.get("path") if isinstance(entry, dict) else None
            name = written if isinstance(written, str) and written.strip() else f"part-{number}"
        if name in seen:
            part_reader.fail(
                "name",
                f"'{name}' also names part {seen[name]} (a part's name, by default its first labelling's path, "
                "starts its item ids): give each part its own name",
            )
        seen.setdefault(name, number)
        parts.append(Part(name, part_language, meta, sources))
    return tuple(parts), names


def read_meta(reader: OptionReader) -> dict[str, Any]:
    """Read a part's ``meta``: values copied into each of its items' meta (``{ split = "test" }``)."""
    value = reader.get("meta")
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.fail(
            "meta", f'must be a table copied into each item\'s meta, e.g. {{ split = "test" }}, got {shown(value)}'
        )
        return {}
    meta: dict[str, Any] = {}
    for key, entry in value.items():
        if key in ITEM_META:
            reader.fail(f"meta.{key}", f"is set by the adapter on every item ({', '.join(ITEM_META)}): use another key")
        elif key == "third_pass" and not isinstance(entry, bool):
            reader.fail(f"meta.{key}", f"must be true or false, got {shown(entry)}")
        elif isinstance(entry, float) and not math.isfinite(entry):
            reader.fail(f"meta.{key}", f"must be a finite number, got {shown(entry)}")
        elif not isinstance(entry, (str, int, float, bool)):
            reader.fail(f"meta.{key}", f"must be a string, a number or true/false, got {shown(entry)}")
        else:
            meta[key] = entry
    return meta


def read_token_column(reader: OptionReader, default: int) -> int:
    """Read ``token_column``: the token's column (1 = first, -1 = last), or 0 for a file of tags only."""
    value = reader.get("token_column")
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        reader.fail(
            "token_column",
            f"must be an integer: the token's column (1 = first, -1 = last), or 0 for a file of tags only, "
            f"got {shown(value)}",
        )
        return default
    return value


# ----------------------------------------------------------------------------------------------------------
# reading one file


@dataclass
class ConllFile:
    """The token lines of one CoNLL file: fields per token line, and where sentences and documents start."""

    file: InputPath
    fields: list[list[str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # line number of each token
    sentence_starts: list[int] = field(default_factory=list)  # token index; the last entry closes the file
    sentence_documents: list[int] = field(default_factory=list)  # document number of each sentence
    has_docstart: bool = False
    docstart_lines: list[int] = field(default_factory=list)  # line numbers of the -DOCSTART- lines
    last_line: int = 0  # the number of the last line that is not blank


def read_conll_file(file: InputPath, problems: ProblemList) -> ConllFile | None:
    """Split a CoNLL file into token lines, sentences (blank lines) and documents (-DOCSTART- lines)."""
    try:
        raw = read_bytes(file.path)  # a regular file only: never a FIFO or a device
    except OSError as error:
        problems.add(f"{file.display}: cannot read the file ({error.strerror})")
        return None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte-order mark is not part of the first token
    parsed = ConllFile(file)
    document = 0
    in_sentence = False
    before = len(problems)
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = _decode_lines(raw, file.display, problems)
    for number, line in enumerate(lines, start=1):
        fields = line.split()  # CRLF endings: the trailing \r is whitespace
        if fields:
            parsed.last_line = number
        if fields and fields[0] == DOCSTART:
            parsed.has_docstart = True
            parsed.docstart_lines.append(number)
            document += 1
            in_sentence = False
            continue
        if not fields:
            in_sentence = False
            continue
        if not in_sentence:
            parsed.sentence_starts.append(len(parsed.fields))
            parsed.sentence_documents.append(document)
            in_sentence = True
        parsed.fields.append(fields)
        parsed.lines.append(number)
    parsed.sentence_starts.append(len(parsed.fields))
    if not parsed.fields and len(problems) == before:
        problems.add(f"{file.display}: no token lines (the file is empty or has only blank and -DOCSTART- lines)")
    return parsed if len(problems) == before else None


def _decode_lines(raw: bytes, display: str, problems: ProblemList) -> list[str]:
    """Decode line by line to name every line that is not UTF-8 (those lines become blank)."""
    lines = []
    for number, line_bytes in enumerate(raw.split(b"\n"), start=1):
        try:
            lines.append(line_bytes.decode("utf-8"))
        except UnicodeDecodeError as error:
            if len(problems) < MAX_PROBLEMS:
                problems.add(f"{display}:{number}: not valid UTF-8 (byte {error.start + 1} of the line)")
            lines.append("")
    return lines


def _column_index(column: int, width: int) -> int | None:
    index = column - 1 if column > 0 else width + column
    return index if 0 <= index < width else None


def _ordinal_column(column: int) -> str:
    return f"column {column}" if column > 0 else ("the last column" if column == -1 else f"column {column}")


def read_column(
    parsed: ConllFile, column: int, token_column: int, what: str, problems: ProblemList
) -> tuple[list[str], list[iob.Tag]] | None:
    """Return the tokens and the parsed tags of one column; every bad line is a problem.

    ``token_column = 0``: the file holds tags only, and no tokens are returned.
    """
    tags_only = token_column == 0
    tokens: list[str] = []
    tags: list[iob.Tag] = []
    before = len(problems)
    parsed_tags: dict[str, iob.Tag | None] = {}  # a file has few distinct tags: parse each once
    width, token_index, tag_index = -1, None, None
    for fields, line in zip(parsed.fields, parsed.lines):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        if len(fields) != width:
            width = len(fields)
            token_index = None if tags_only else _column_index(token_column, width)
            tag_index = _column_index(column, width)
        if tag_index is None or tag_index == token_index or (token_index is None and not tags_only):
            problems.add(_column_problem(parsed, line, width, column, token_column, what))
            continue
        raw = fields[tag_index]
        if raw not in parsed_tags:
            parsed_tags[raw] = iob.parse_tag(raw)
        tag = parsed_tags[raw]
        if tag is None:
            problems.add(f"{parsed.file.display}:{line}: {what} '{raw}' is not O or B-/I-/E-/S-TYPE")
            continue
        if not tags_only:
            tokens.append(fields[token_index])
        tags.append(tag)
    return (tokens, tags) if len(problems) == before else None


def _column_problem(parsed: ConllFile, line: int, width: int, column: int, token_column: int, what: str) -> str:
    """Say why a line has no usable token or tag column; a one-column file is most likely tags only."""
    where = f"{parsed.file.display}:{line}: has {count(width, 'column')}"
    hint = "; tags only? set token_column = 0" if width == 1 and token_column != 0 else ""
    if token_column != 0 and _column_index(token_column, width) is None:
        return f"{where}; the token {_ordinal_column(token_column)} is missing{hint}"
    if _column_index(column, width) is None:
        return f"{where}; the {what} {_ordinal_column(column)} is missing{hint}"
    if width == 1:
        return f"{where}, which is read as the token{hint}"
    return (
        f"{where}; the {what} {_ordinal_column(column)} is the token {_ordinal_column(token_column)}: "
        "set column to the tag's column (or token_column to the token's)"
    )


@dataclass
class DecodedColumn:
    """One tag column decoded into token spans, with what decoding had to repair."""

    spans: list[iob.TokenSpan]  # global token indices
    report: iob.SchemeReport
    mapped: MapCounts | None = None  # what the labelling's own label_map renamed and dropped


def decode_column(
    parsed: ConllFile,
    tags: list[iob.Tag],
    scheme: str,
    labels: frozenset[str] | None,
    what: str,
    problems: ProblemList,
    label_map: Mapping[str, str] | None = None,
) -> DecodedColumn | None:
    """Decode every sentence of a tag column (conlleval semantics); count repairs; map, then check types."""
    starts = parsed.sentence_starts
    sentences = [tags[starts[i] : starts[i + 1]] for i in range(len(starts) - 1)]
    detected = scheme == "auto"
    used = iob.detect_scheme(sentences) if detected else scheme
    report = iob.SchemeReport(scheme=used, detected=detected)
    before = len(problems)
    foreign = iob.foreign_prefixes(used)
    if not detected and foreign:
        for position, tag in enumerate(tags):
            if tag[0] in foreign:
                problems.add(
                    f"{parsed.file.display}:{parsed.lines[position]}: {what} '{tag[0]}-{tag[1]}' belongs to BIOES, "
                    f'but the scheme is \'{used}\' (set scheme = "bioes" or "auto")'
                )
                break
    spans: list[iob.TokenSpan] = []
    mapped = MapCounts() if label_map else None
    for sentence, offset in zip(sentences, starts):
        if sentence.count(iob.OUTSIDE) == len(sentence):
            continue  # most sentences of most files: nothing to decode or repair
        for position in iob.invalid_positions(sentence, used):
            if not report.repaired:
                report.first_repair = f"{parsed.file.name}:{parsed.lines[offset + position]}"
            report.repaired += 1
        for start, end, label in iob.decode(sentence):
            if mapped is not None:
                target = label_map.get(label, label)  # type: ignore[union-attr]
                if not target:
                    mapped.dropped[label] += 1
                    continue
                if target != label:
                    mapped.renamed[(label, target)] += 1
                    label = target
            problem = check_label(label, labels)
            if problem and len(problems) - before < MAX_PROBLEMS:
                problems.add(f"{parsed.file.display}:{parsed.lines[offset + start]}: {what} has an {problem}")
            spans.append((offset + start, offset + end, label))
    return DecodedColumn(spans, report, mapped) if len(problems) == before else None


def lay_tags(base: ConllFile, tags: ConllFile, problems: ProblemList) -> ConllFile | None:
    """Lay a tags-only file line by line on the first labelling's file: its tag lines are that file's tokens.

    Line n of the tags file goes with line n of the first file: a blank line where that has one, a tag
    where it has a token, anything (a tag, -DOCSTART-, nothing) where it has a -DOCSTART- line. The result
    has the first file's sentences and documents, and the tags file's own line numbers for messages.
    """
    docstarts = set(base.docstart_lines)
    keep = [index for index, line in enumerate(tags.lines) if line not in docstarts]
    lines = [tags.lines[index] for index in keep]
    if lines != base.lines:
        problems.add(_tags_mismatch(base, tags, lines))
        return None
    fields = tags.fields if len(keep) == len(tags.fields) else [tags.fields[index] for index in keep]
    return ConllFile(
        file=tags.file,
        fields=fields,
        lines=lines,
        sentence_starts=base.sentence_starts,
        sentence_documents=base.sentence_documents,
        has_docstart=base.has_docstart,
        docstart_lines=base.docstart_lines,
        last_line=tags.last_line,
    )


def _tags_mismatch(base: ConllFile, tags: ConllFile, lines: list[int]) -> str:
    """Say where a tags-only file first stops having a line per line of the first file, in both files."""
    index = first_difference(lines, base.lines)
    base_line = base.lines[index] if index < len(base.lines) else None
    tag_line = lines[index] if index < len(lines) else None
    here, there = tags.file.display, base.file.display
    if base_line is not None and (tag_line is None or base_line < tag_line):
        what = f"{here}:{base_line}: no tag (a blank line or the end of the file)"
        where = f"{there}:{base_line} has a token ({' '.join(base.fields[index])!r})"
    else:
        tag_index = tags.lines.index(tag_line)
        what = f"{here}:{tag_line}: a tag line ({' '.join(tags.fields[tag_index])!r})"
        where = f"{there}:{tag_line} is " + ("blank" if tag_line <= base.last_line else "past its last line")
    hint = (
        f"; a tags-only file keeps a line, with any tag, for each -DOCSTART- line of {there}"
        if base.has_docstart and not tags.has_docstart
        else ""
    )
    return (
        f"{what}, where {where}: a tags-only file (token_column = 0) needs one line per line of the first "
        f"labelling's file, blank where it is blank ({here} has {tags.last_line:,} lines, {there} "
        f"{base.last_line:,}, blank lines at the end aside){hint}"
    )


# ----------------------------------------------------------------------------------------------------------
# the first file's text, and alignment of the others onto it


@dataclass
class BaseText:
    """The items built from the first file, and where each non-whitespace character of its text lies."""

    file: ConllFile
    stream: str  # the tokens concatenated: the text without whitespace
    item_ids: list[str]
    item_texts: list[str]
    item_meta: list[dict[str, Any]]
    character_item: array  # non-whitespace character index -> item index
    character_offset: array  # non-whitespace character index -> offset in its item's text
    token_starts: set[int]  # non-whitespace indices where a token of the first file starts
    token_ends: set[int]  # ... and where one ends (exclusive)
    item_characters: list[int]  # non-whitespace index where each item starts; last entry = total


def build_base_text(parsed: ConllFile, tokens: list[str], unit: str) -> BaseText:
    """Join the first file's tokens into item texts (one item per sentence or per document)."""
    starts = parsed.sentence_starts
    sentence_count = len(starts) - 1
    if unit == "documents":
        groups: list[list[int]] = []
        for sentence in range(sentence_count):
            if not groups or parsed.sentence_documents[sentence] != parsed.sentence_documents[sentence - 1]:
                groups.append([])
            groups[-1].append(sentence)
    else:
        groups = [[sentence] for sentence in range(sentence_count)]
    character_item, character_offset = array("i"), array("i")
    token_starts, token_ends = set(), set()
    item_ids, item_texts, item_meta = [], [], []
    item_characters: list[int] = []
    position = 0
    for item_index, sentences in enumerate(groups):
        item_characters.append(position)
        pieces: list[str] = []
        length = 0
        for sentence_position, sentence in enumerate(sentences):
            if sentence_position:
                pieces.append("\n")  # one character, like the single space it stands for
                length += 1
            for token_position, token_index in enumerate(range(starts[sentence], starts[sentence + 1])):
                token = tokens[token_index]
                if token_position:
                    pieces.append(" ")
                    length += 1
                token_starts.add(position)
                for offset in range(len(token)):
                    character_item.append(item_index)
                    character_offset.append(length + offset)
                position += len(token)
                token_ends.add(position)
                pieces.append(token)
                length += len(token)
        first_line = parsed.lines[starts[sentences[0]]]
        document = parsed.sentence_documents[sentences[0]]
        if unit == "documents":
            item_ids.append(f"document-{item_index + 1}")
            item_meta.append({"line": first_line, "sentences": len(sentences)})
        else:
            item_ids.append(f"sentence-{item_index + 1}")
            item_meta.append(
                {"line": first_line, "document": document} if parsed.has_docstart else {"line": first_line}
            )
        item_texts.append("".join(pieces))
    return BaseText(
        file=parsed,
        stream="".join(tokens),
        item_ids=item_ids,
        item_texts=item_texts,
        item_meta=item_meta,
        character_item=character_item,
        character_offset=character_offset,
        token_starts=token_starts,
        token_ends=token_ends,
        item_characters=item_characters + [position],
    )


@dataclass
class Alignment:
    """How one file's tokens map onto the base text's non-whitespace characters."""

    parsed: ConllFile
    tokens: list[str]
    cumulative: list[int]  # non-whitespace index where each token starts; last entry = total
    kind: str  # "identical", "sentence splits differ", "tokenisation differs"


def align(
    base: BaseText, base_tokens: list[str], parsed: ConllFile, tokens: list[str], problems: ProblemList
) -> Alignment | None:
    """Check that a file has the base text's characters; report the first place where the texts part."""
    stream = "".join(tokens)
    cumulative = [0]
    for token in tokens:
        cumulative.append(cumulative[-1] + len(token))
    if stream != base.stream:
        index = first_difference(stream, base.stream)
        base_cumulative = [0]
        for token in base_tokens:
            base_cumulative.append(base_cumulative[-1] + len(token))
        here_line, here_token = _describe_position(parsed, tokens, cumulative, index)
        there_line, there_token = _describe_position(base.file, base_tokens, base_cumulative, index)
        before = stream[max(0, index - 20) : index]
        problems.add(
            f"{parsed.file.display}:{here_line}: cannot be aligned with {base.file.file.display}: after the same "
            f"{index:,} non-whitespace characters (...{before!r}) this file has {excerpt(stream, index)} "
            f"({here_token}) where {base.file.file.display}:{there_line} has {excerpt(base.stream, index)} "
            f"({there_token})"
        )
        return None
    if tokens != base_tokens:
        kind = "tokenisation differs"
    elif parsed.sentence_starts != base.file.sentence_starts:
        kind = "sentence splits differ"
    else:
        kind = "identical"
    return Alignment(parsed, tokens, cumulative, kind)


def _describe_position(
    parsed: ConllFile, tokens: list[str], cumulative: list[int], index: int
) -> tuple[int | str, str]:
    """Return (line, 'token X') for a non-whitespace character index, or the end of the file."""
    if index >= cumulative[-1]:
        return (parsed.lines[-1] if parsed.lines else 1), "the end of its tokens"
    token = bisect_right(cumulative, index) - 1
    return parsed.lines[token], f"token '{tokens[token]}'"


@dataclass
class Projection:
    """Spans of one column placed on the base items, and what had to be adjusted to place them."""

    spans: list[list[Span]]
    split: int = 0  # spans crossing an item boundary of the base text, split into one piece per item
    first_split: str | None = None
    inside_tokens: int = 0  # spans that start or end inside a token of the first file


def project(base: BaseText, alignment: Alignment, token_spans: list[iob.TokenSpan]) -> Projection:
    """Place token spans of an aligned file onto the base items as character offsets."""
    projection = Projection(spans=[[] for _ in base.item_ids])
    cumulative = alignment.cumulative
    for first, last, label in token_spans:
        start_character, end_character = cumulative[first], cumulative[last]
        if start_character not in base.token_starts or end_character not in base.token_ends:
            projection.inside_tokens += 1
        first_item = base.character_item[start_character]
        last_item = base.character_item[end_character - 1]
        if first_item != last_item:
            # a file that merged sentences may hold an entity the first file splits; keep each part in its item
            if not projection.split:
                projection.first_split = f"{alignment.parsed.file.name}:{alignment.parsed.lines[first]}"
            projection.split += 1
        for item in range(first_item, last_item + 1):
            piece_start = max(start_character, base.item_characters[item])
            piece_end = min(end_character, base.item_characters[item + 1])
            start = base.character_offset[piece_start]
            end = base.character_offset[piece_end - 1] + 1
            projection.spans[item].append((start, end, label))
    return projection


# ----------------------------------------------------------------------------------------------------------
# the record


def load(options: ConllOptions, duplicate_key: str) -> Record:
    """Read every part's files and build its items; the record is the parts' items in order."""
    problems = ProblemList()
    items: list[Item] = []
    notes: list[str] = []
    for part in options.parts:
        try:
            part_items, part_notes = load_part(part, options)
        except InputError as error:  # every part is read, so one run reports the problems of all
            for problem in error.problems:
                problems.add(problem)
            continue
        items.extend(part_items)
        notes.extend(part_notes)
    problems.raise_if_any()
    check_unique_ids(((item.id, item) for item in items), problems)
    problems.raise_if_any()
    sources = unique_paths(source.file for source in options.labellings)
    final = with_text_dup_keys(items, duplicate_key) if options.text_dup_keys else tuple(items)
    return Record(items=final, sources=sources, notes=tuple(notes))


def load_part(part: Part, options: ConllOptions) -> tuple[list[Item], list[str]]:
    """Read one part's files, align them on its first, and build one item per sentence or document."""
    problems = ProblemList()
    files: dict[Path, ConllFile | None] = {}
    for source in part.labellings:
        if source.file.path not in files:
            files[source.file.path] = read_conll_file(source.file, problems)
    first_file = files[part.labellings[0].file.path]
    laid: dict[Path, ConllFile | None] = {}  # tags-only files laid on the first file, once per file
    columns: list[tuple[LabellingSource, ConllFile, list[str] | None, list[iob.Tag]]] = []
    for source in part.labellings:
        parsed = files[source.file.path]
        if source.tags_only and parsed is not None and first_file is not None:
            if source.file.path not in laid:
                laid[source.file.path] = lay_tags(first_file, parsed, problems)
            parsed = laid[source.file.path]
        if parsed is None:
            continue
        read = read_column(parsed, source.column, source.token_column, "tag", problems)
        if read is not None:
            columns.append((source, parsed, None if source.tags_only else read[0], read[1]))
    problems.raise_if_any()

    base_source, base_parsed, base_tokens, _ = columns[0]
    assert base_tokens is not None  # read_options refuses a tags-only first labelling
    if options.items == "documents" and not base_parsed.has_docstart:
        raise InputError(
            f'{base_source.file.display}: items = "documents" needs -DOCSTART- lines in the first labelling\'s file '
            '(it defines the items); use items = "sentences"'
        )
    base = build_base_text(base_parsed, base_tokens, options.items)
    unit = "document" if options.items == "documents" else "sentence"

    notes = [
        Note(
            f"conll: {part.describe()}{count(len(base.item_ids), unit)} ({count(len(base_tokens), 'token')}) from "
            f"{base_source.file.name}; every other file is aligned onto its text",
            kind=f"conll, one per part: its {unit}s and tokens, from its first labelling's file",
        )
    ]
    labellings: dict[str, list[list[Span]]] = {}
    gold_checks: list[tuple[LabellingSource, Alignment, Projection]] = []
    for source, parsed, tokens, tags in columns:
        alignment = align(base, base_tokens, parsed, base_tokens if tokens is None else tokens, problems)
        label_map = dict(source.label_map)
        decoded = decode_column(parsed, tags, source.scheme, options.labels, "tag", problems, label_map)
        if alignment is None or decoded is None:
            continue
        projection = project(base, alignment, decoded.spans)
        labellings[source.name] = projection.spans
        notes.append(_labelling_note(part, source, alignment, decoded, projection, unit))
        if source.gold_column is not None:
            gold_read = read_column(parsed, source.gold_column, source.token_column, "gold tag", problems)
            if gold_read is None:
                continue
            gold_decoded = decode_column(parsed, gold_read[1], "auto", options.labels, "gold tag", problems, label_map)
            if gold_decoded is not None:
                gold_checks.append((source, alignment, project(base, alignment, gold_decoded.spans)))
    problems.raise_if_any()

    gold_name = options.gold or base_source.name
    for source, alignment, projection in gold_checks:
        check_gold_column(source, gold_name, labellings[gold_name], alignment, projection, base, unit, problems)
    problems.raise_if_any()

    items = []
    for index, item_id in enumerate(base.item_ids):
        items.append(
            Item(
                id=item_id if part.name is None else f"{part.name}:{item_id}",
                language=part.language,
                labellings={name: tuple(spans[index]) for name, spans in labellings.items()},
                text=base.item_texts[index],
                meta={**part.meta, **base.item_meta[index]} if part.meta else base.item_meta[index],
            )
        )
    return items, notes


def _labelling_note(
    part: Part,
    source: LabellingSource,
    alignment: Alignment,
    decoded: DecodedColumn,
    projection: Projection,
    unit: str,
) -> Note:
    """Return one part's note on one labelling; its kind is the note without its numbers and places, so the
    parts where a labelling was read alike are one kind, and those with a repair or a split another."""
    placed = sum(len(spans) for spans in projection.spans)
    report = decoded.report
    scheme = f"{report.scheme.upper()} ({'detected' if report.detected else 'configured'})"
    parts = [
        f"conll: {part.describe()}labelling '{source.name}' ({source.describe()}): {report.describe()}",
        count(placed, "span"),
    ]
    shape = [f"conll, one per part: labelling '{source.name}': {scheme}", "its spans counted"]
    if report.repaired:
        shape[0] += ", invalid tags read the conlleval way"
    if decoded.mapped is not None:
        parts.append(f"its label_map {decoded.mapped.describe(by_labelling=False)}")
        shape.append("its label_map applied")
    if alignment.kind != "identical":
        parts.append(f"aligned by characters ({alignment.kind})")
        shape.append(parts[-1])
    if projection.inside_tokens:
        parts.append(f"{count(projection.inside_tokens, 'span')} start or end inside a token of the first file")
        shape.append("spans that start or end inside a token of the first file")
    if projection.split:
        parts.append(
            f"{count(projection.split, 'span')} crossing a {unit} boundary of the first file split at it "
            f"(first at {projection.first_split})"
        )
        shape.append(f"spans crossing a {unit} boundary of the first file split at it")
    return Note("; ".join(parts), kind="; ".join(shape))


def check_gold_column(
    source: LabellingSource,
    gold_name: str,
    gold_spans: list[list[Span]],
    alignment: Alignment,
    projection: Projection,
    base: BaseText,
    unit: str,
    problems: ProblemList,
) -> None:
    """Report every item where a file's own gold column disagrees with the configured gold labelling."""
    differing = [index for index, spans in enumerate(projection.spans) if set(spans) != set(gold_spans[index])]
    if not differing:
        return
    column = _ordinal_column(source.gold_column or 0)
    for index in differing[:MAX_MISMATCHES_SHOWN]:
        in_file = set(projection.spans[index])
        in_gold = set(gold_spans[index])
        line = _line_of_item(base, alignment, index)
        problems.add(
            f"{source.file.display}:{line}: the gold {column} disagrees with labelling '{gold_name}' on {unit} "
            f"'{base.item_ids[index]}' ({count(len(in_file - in_gold), 'span')} only in the file, "
            f"{len(in_gold - in_file):,} only in '{gold_name}')"
        )
    problems.add(
        f"{source.file.display}: the gold {column} disagrees with labelling '{gold_name}' on "
        f"{count(len(differing), unit)} in all: the predictions were scored against another gold; "
        f"point record.gold at that labelling, or remove gold_column to skip this check"
    )


def _line_of_item(base: BaseText, alignment: Alignment, index: int) -> int:
    """Return the line in an aligned file where a base item's first token is."""
    first_character = base.item_characters[index]
    token = bisect_right(alignment.cumulative, first_character) - 1
    return alignment.parsed.lines[token]
