"""Crowd annotations in the Mechanical Turk layout: a gold file per document and a file per worker per document.

Layout (a zip archive or a folder): ``<split>/ground_truth/<document>.txt`` and
``<split>/mturk_train_data/<worker>/<document>.txt``, each line ``token TAG`` with a blank line between
sentences. Labellings: ``gold``; ``pass_1``, ``pass_2``, ... (a document's workers sorted by worker id);
and an aggregate (default name ``majority``): a token-level majority vote over the passes' IOB2 tags, ties
going to the earliest pass, the analogue of an aggregation pipeline's silent default.

Worker files are noisy copies of the text (split tokens, empty tokens, ``/LOC`` suffixes), so each is aligned
to its gold file token by token, and by characters inside blocks that differ; a gold token no worker token
reaches counts as ``O`` for that worker, and how many there were is reported in the record's notes.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters import iob
from refsens_report.adapters.archive import MEMBER_LIMIT, Export, read_member_limit
from refsens_report.adapters.common import (
    ITEM_UNITS,
    InputPath,
    check_label,
    count,
    read_dup_key,
    read_labels,
    read_language,
    read_path,
    with_text_dup_keys,
)
from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.names import name_problem
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span, check_unique_ids

GOLD_PATTERN = re.compile(r"(?:^|/)(?P<split>[^/]+)/ground_truth/(?P<document>[^/]+)\.txt$")
WORKER_PATTERN = re.compile(r"(?:^|/)(?P<split>[^/]+)/mturk_train_data/(?P<worker>[^/]+)/(?P<document>[^/]+)\.txt$")
# workers sometimes pasted a tag into the token ("Britain/LOC", "Hutu/B-MISC"); it is not part of the text
TAG_SUFFIX = re.compile(r"/(?:LOC|PER|ORG|MISC|[BI](?:-[A-Z]*)?)$")
LINE_PATTERN = re.compile(r"^(?P<token>.*?)[ \t]+(?P<tag>\S+)[ \t]*$")
GOLD = "gold"
PASS_PATTERN = re.compile(r"^pass_\d+$")


@dataclass(frozen=True)
class CrowdOptions:
    """The checked `[record]` keys of a crowd record."""

    source: InputPath
    language: str
    items: str
    splits: tuple[str, ...]
    aggregate: str
    scheme: str
    labels: frozenset[str] | None
    text_dup_keys: bool = False
    member_limit: int = MEMBER_LIMIT


def read_options(reader: OptionReader, base_dir: Path) -> CrowdOptions | None:
    """Read `[record]` for format = "crowd"; bad keys are reported through ``reader``."""
    source = read_path(reader, base_dir, "path", kind="any")
    language = read_language(reader, default="en")
    items = reader.choice("items", ITEM_UNITS, "sentences")
    splits = reader.names("splits")
    aggregate = reader.string("aggregate", default="majority") or "majority"
    if aggregate == GOLD or PASS_PATTERN.match(aggregate):
        reader.fail("aggregate", f"'{aggregate}' is the name of another labelling (gold, pass_1, pass_2, ...)")
    scheme = reader.choice("scheme", iob.SCHEME_CHOICES, "auto")
    labels = read_labels(reader)
    text_dup_keys = read_dup_key(reader)
    member_limit = read_member_limit(reader)
    if source is None:
        return None
    return CrowdOptions(source, language, items, splits, aggregate, scheme, labels, text_dup_keys, member_limit)


# ----------------------------------------------------------------------------------------------------------
# reading the archive


def open_archive(options: CrowdOptions) -> Export:
    """Open the zip or folder; a .txt file whose name is not UTF-8 or cannot be printed is refused."""
    archive = Export(options.source, options.member_limit)
    problems = ProblemList()
    for name in archive.names:
        if not name.endswith(".txt"):
            continue
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # the file system gave bytes that are not UTF-8 (kept as surrogates)
            problems.add(
                f"{options.source.display}: the file name {os.fsencode(name)!r} is not valid UTF-8; rename the file"
            )
            continue
        if why := name_problem(name):
            problems.add(f"{archive.display(name)}: the file name {why}")
    if problems:
        archive.close()
    problems.raise_if_any()
    return archive


@dataclass
class TaggedFile:
    """A ``token TAG`` file: tokens, tags and line numbers, and where sentences start."""

    display: str
    tokens: list[str] = field(default_factory=list)
    tags: list[iob.Tag] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    sentence_starts: list[int] = field(default_factory=list)  # last entry closes the file
    empty_tokens: int = 0  # lines with a tag but no token (worker files only): skipped

    def sentences(self) -> list[tuple[int, int]]:
        starts = self.sentence_starts
        return [(starts[i], starts[i + 1]) for i in range(len(starts) - 1)]


def read_tagged(data: bytes, display: str, is_gold: bool, problems: ProblemList) -> TaggedFile | None:
    """Parse a ``token TAG`` file; a gold token may not be empty, a worker's empty token is skipped."""
    parsed = TaggedFile(display)
    before = len(problems)
    in_sentence = False
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if len(problems) - before >= MAX_PROBLEMS:
            break
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as error:
            problems.add(f"{display}:{number}: not valid UTF-8 (byte {error.start + 1} of the line)")
            continue
        if not line.strip():
            in_sentence = False
            continue
        match = LINE_PATTERN.match(line)
        if match is None:
            problems.add(f"{display}:{number}: expected 'token TAG', got {line.strip()!r} (no tag)")
            continue
        tag = iob.parse_tag(match["tag"])
        if tag is None:
            problems.add(f"{display}:{number}: tag '{match['tag']}' is not O or B-/I-/E-/S-TYPE")
            continue
        token = match["token"].strip()
        normalised = TAG_SUFFIX.sub("", token)
        if not normalised:
            if is_gold:
                problems.add(f"{display}:{number}: the token is empty")
            else:
                parsed.empty_tokens += 1
            continue
        if not in_sentence:
            parsed.sentence_starts.append(len(parsed.tokens))
            in_sentence = True
        parsed.tokens.append(token)
        parsed.tags.append(tag)
        parsed.lines.append(number)
    parsed.sentence_starts.append(len(parsed.tokens))
    if is_gold and not parsed.tokens and len(problems) == before:
        problems.add(f"{display}: the gold file has no tokens")
    return parsed if len(problems) == before else None


# ----------------------------------------------------------------------------------------------------------
# aligning a worker's tokens to the gold tokens


@dataclass
class AlignmentCounts:
    """What aligning the worker files found, summed over files."""

    files: int = 0
    identical_files: int = 0
    exact: int = 0  # gold tokens matched by an identical worker token
    merged: int = 0  # gold tokens matched by characters inside a block tokenised differently
    unaligned_gold: int = 0  # gold tokens no worker token reached: O for that worker
    unaligned_worker: int = 0  # worker tokens matched to no gold token: ignored
    empty_tokens: int = 0
    repaired: int = 0  # invalid tags in the projected sequences, read the conlleval way
    first_repair: str | None = None


def _normalised(tokens: list[str]) -> list[str]:
    return [TAG_SUFFIX.sub("", token) or token for token in tokens]


def project_worker(gold: TaggedFile, worker: TaggedFile, counts: AlignmentCounts) -> tuple[list[iob.Tag], list[int]]:
    """Return, per gold token, the worker's tag (``O`` where nothing aligns) and the worker line it came from."""
    tags: list[iob.Tag] = [iob.OUTSIDE] * len(gold.tokens)
    lines: list[int] = [0] * len(gold.tokens)
    gold_tokens, worker_tokens = _normalised(gold.tokens), _normalised(worker.tokens)
    counts.files += 1
    counts.empty_tokens += worker.empty_tokens
    if gold_tokens == worker_tokens:
        counts.identical_files += 1
    matcher = difflib.SequenceMatcher(None, gold_tokens, worker_tokens, autojunk=False)
    for operation, gold_start, gold_end, worker_start, worker_end in matcher.get_opcodes():
        if operation == "equal":
            for offset in range(gold_end - gold_start):
                tags[gold_start + offset] = worker.tags[worker_start + offset]
                lines[gold_start + offset] = worker.lines[worker_start + offset]
            counts.exact += gold_end - gold_start
        elif "".join(gold_tokens[gold_start:gold_end]) == "".join(worker_tokens[worker_start:worker_end]):
            # same characters, other token boundaries ("Russian" vs "Russia" "n"): a gold token takes the tag
            # of the worker token that covers its first character
            worker_index, worker_token_end, position = worker_start, len(worker_tokens[worker_start]), 0
            for gold_index in range(gold_start, gold_end):
                while position >= worker_token_end:
                    worker_index += 1
                    worker_token_end += len(worker_tokens[worker_index])
                tags[gold_index] = worker.tags[worker_index]
                lines[gold_index] = worker.lines[worker_index]
                position += len(gold_tokens[gold_index])
            counts.merged += gold_end - gold_start
        else:
            counts.unaligned_gold += gold_end - gold_start
            counts.unaligned_worker += worker_end - worker_start
    return tags, lines


def majority_vote(passes: list[list[iob.Tag]]) -> tuple[list[iob.Tag], int]:
    """Vote per token over the passes' tags; ties go to the earliest pass. Return the tags and the ties broken."""
    voted: list[iob.Tag] = []
    ties = 0
    for position in range(len(passes[0])):
        tally: dict[iob.Tag, int] = {}
        for tags in passes:
            tag = tags[position]
            tally[tag] = tally.get(tag, 0) + 1  # dicts keep insertion order: the earliest pass first
        best = max(tally.values())
        leaders = [tag for tag, votes in tally.items() if votes == best]
        if len(leaders) > 1:
            ties += 1
        voted.append(leaders[0])
    return voted, ties


# ----------------------------------------------------------------------------------------------------------
# the record


@dataclass
class Document:
    """One gold document with its workers' files, in pass order."""

    split: str
    name: str
    gold_member: str
    worker_members: dict[str, str] = field(default_factory=dict)  # worker id -> archive member


def find_documents(archive: Export, splits: tuple[str, ...], problems: ProblemList) -> tuple[list[Document], int]:
    """Return the documents (sorted by split and name) and how many worker files had no gold document."""
    documents: dict[tuple[str, str], Document] = {}
    for name in archive.names:
        if match := GOLD_PATTERN.search(name):
            if splits and match["split"] not in splits:
                continue
            documents[(match["split"], match["document"])] = Document(match["split"], match["document"], name)
    orphans = 0
    for name in archive.names:
        if match := WORKER_PATTERN.search(name):
            if splits and match["split"] not in splits:
                continue
            document = documents.get((match["split"], match["document"]))
            if document is None:
                orphans += 1
            else:
                document.worker_members[match["worker"]] = name
    if not documents:
        where = f" in splits {', '.join(splits)}" if splits else ""
        problems.add(f"{archive.source.display}: no gold files <split>/ground_truth/<document>.txt found{where}")
    if splits:
        found = {document.split for document in documents.values()}
        for split in splits:
            if split not in found:
                problems.add(f"Config value 'record.splits': no split '{split}' in {archive.source.display}")
    return [documents[key] for key in sorted(documents)], orphans


def load(options: CrowdOptions, duplicate_key: str) -> Record:
    """Read the gold and worker files; build passes, the majority aggregate and the gold per item."""
    problems = ProblemList()
    archive = open_archive(options)
    try:
        documents, orphans = find_documents(archive, options.splits, problems)
        problems.raise_if_any()
        parsed: list[tuple[Document, TaggedFile, dict[str, TaggedFile]]] = []
        for document in documents:
            if len(problems) >= MAX_PROBLEMS:
                break
            data = archive.read(document.gold_member, problems)
            gold = None if data is None else read_tagged(data, archive.display(document.gold_member), True, problems)
            workers: dict[str, TaggedFile] = {}
            for worker in sorted(document.worker_members):
                member = document.worker_members[worker]
                data = archive.read(member, problems)
                worker_file = None if data is None else read_tagged(data, archive.display(member), False, problems)
                if worker_file is not None:
                    workers[worker] = worker_file
            if gold is not None:
                parsed.append((document, gold, workers))
        problems.raise_if_any()
    finally:
        archive.close()

    scheme = options.scheme
    if scheme == "auto":
        scheme = iob.detect_scheme([gold.tags[a:b] for _, gold, _ in parsed for a, b in gold.sentences()])
    counts = AlignmentCounts()
    gold_repairs = aggregate_repairs = ties = 0
    workers_seen: set[str] = set()
    items: list[Item] = []
    for document, gold, workers in parsed:
        workers_seen.update(workers)
        sentences = gold.sentences()
        labellings: dict[str, list[list[iob.TokenSpan]]] = {}
        labellings[GOLD], repaired = _decode(gold.tags, gold.lines, sentences, scheme, gold, options.labels, problems)
        gold_repairs += repaired
        pass_tags: list[list[iob.Tag]] = []
        for number, worker_file in enumerate(workers.values(), start=1):
            tags, lines = project_worker(gold, worker_file, counts)
            spans, repaired = _decode(tags, lines, sentences, scheme, worker_file, options.labels, problems)
            if repaired and counts.first_repair is None:
                counts.first_repair = worker_file.display
            counts.repaired += repaired
            labellings[f"pass_{number}"] = spans
            pass_tags.append(_iob2(spans, sentences, len(tags)))
        if pass_tags:
            voted, document_ties = majority_vote(pass_tags)
            ties += document_ties
            spans, repaired = _decode(voted, gold.lines, sentences, "iob2", None, None, problems)
            aggregate_repairs += repaired
            labellings[options.aggregate] = spans
        meta = {
            "split": document.split,
            "document": document.name,
            "workers": list(workers),
            # with three or more passes a tie between the first two can be broken by a vote, not by default
            "third_pass": len(workers) >= 3,
        }
        items.extend(_items(document, gold, sentences, labellings, meta, options))
    problems.raise_if_any()
    check_unique_ids(((item.id, item) for item in items), problems)
    problems.raise_if_any()

    unit = "document" if options.items == "documents" else "sentence"
    sentence_count = sum(len(gold.sentences()) for _, gold, _ in parsed)
    splits = sorted({document.split for document, _, _ in parsed})
    notes = [
        f"crowd: {count(len(parsed), 'document')} ({count(sentence_count, 'sentence')}) from {options.source.name} "
        f"(splits {', '.join(splits)}), one item per {unit}; {count(len(workers_seen), 'worker')}, "
        f"{count(counts.files, 'worker file')}; pass_1, pass_2, ... are a document's workers sorted by worker id",
        f"crowd: worker tokens aligned to the gold tokens: {counts.exact:,} identical, {counts.merged:,} by "
        f"characters where the worker split or joined tokens; {count(counts.unaligned_gold, 'gold token')} reached "
        f"by no worker token (counted as O for that worker), {count(counts.unaligned_worker, 'worker token')} "
        f"matched to no gold token, {count(counts.empty_tokens, 'empty-token line')} skipped; "
        f"{counts.identical_files:,} of {counts.files:,} worker files match the gold token for token",
        f"crowd: '{options.aggregate}' is a token-level majority vote over the passes' IOB2 tags; "
        f"{count(ties, 'token')} tied and went to the earliest pass",
    ]
    if gold_repairs or counts.repaired or aggregate_repairs:
        notes.append(
            f"crowd: invalid {scheme.upper()} tags read the conlleval way: {gold_repairs:,} in the gold, "
            f"{counts.repaired:,} in the passes"
            + (f" (first in {counts.first_repair})" if counts.first_repair else "")
            + f", {aggregate_repairs:,} in '{options.aggregate}'"
        )
    if orphans:
        notes.append(f"crowd: {count(orphans, 'worker file')} without a gold document skipped")
    final = with_text_dup_keys(items, duplicate_key) if options.text_dup_keys else tuple(items)
    return Record(items=final, sources=(options.source,), notes=tuple(notes))


def _decode(
    tags: list[iob.Tag],
    lines: list[int],
    sentences: list[tuple[int, int]],
    scheme: str,
    origin: TaggedFile | None,
    labels: frozenset[str] | None,
    problems: ProblemList,
) -> tuple[list[list[iob.TokenSpan]], int]:
    """Decode tags per gold sentence (token offsets within it); return the spans and the tags repaired."""
    spans: list[list[iob.TokenSpan]] = []
    repaired = 0
    for start, end in sentences:
        sentence = tags[start:end]
        repaired += len(iob.invalid_positions(sentence, scheme))
        decoded = iob.decode(sentence)
        if labels is not None and origin is not None:
            for first, _, label in decoded:
                if problem := check_label(label, labels):
                    problems.add(f"{origin.display}:{lines[start + first]}: {problem}")
        spans.append(decoded)
    return spans, repaired


def _iob2(spans: list[list[iob.TokenSpan]], sentences: list[tuple[int, int]], length: int) -> list[iob.Tag]:
    """Re-encode decoded per-sentence spans as one IOB2 sequence, so every pass votes in one scheme."""
    tags: list[iob.Tag] = []
    for (start, end), sentence_spans in zip(sentences, spans):
        tags.extend(iob.encode_iob2(sentence_spans, end - start))
    return tags


def _items(
    document: Document,
    gold: TaggedFile,
    sentences: list[tuple[int, int]],
    labellings: dict[str, list[list[iob.TokenSpan]]],
    meta: dict[str, Any],
    options: CrowdOptions,
) -> list[Item]:
    """Build the items of one document: one per sentence, or one for the whole document."""
    sentence_texts: list[str] = []
    sentence_offsets: list[list[int]] = []  # character offset of each token in its sentence
    for start, end in sentences:
        offsets, position = [], 0
        for token in gold.tokens[start:end]:
            offsets.append(position)
            position += len(token) + 1
        sentence_offsets.append(offsets)
        sentence_texts.append(" ".join(gold.tokens[start:end]))

    def character_spans(sentence: int, token_spans: list[iob.TokenSpan], shift: int) -> list[Span]:
        offsets, (start, _) = sentence_offsets[sentence], sentences[sentence]
        result = []
        for first, last, label in token_spans:
            end_token = start + last - 1
            result.append((shift + offsets[first], shift + offsets[last - 1] + len(gold.tokens[end_token]), label))
        return result

    base_id = f"{document.split}/{document.name}"
    if options.items == "documents":
        spans: dict[str, list[Span]] = {name: [] for name in labellings}
        shift = 0
        for sentence in range(len(sentences)):
            for name, per_sentence in labellings.items():
                spans[name].extend(character_spans(sentence, per_sentence[sentence], shift))
            shift += len(sentence_texts[sentence]) + 1  # the newline between sentences
        return [
            Item(
                id=base_id,
                language=options.language,
                labellings={name: tuple(value) for name, value in spans.items()},
                text="\n".join(sentence_texts),
                meta={**meta, "line": gold.lines[0]},
            )
        ]
    return [
        Item(
            id=f"{base_id}/{sentence + 1}",
            language=options.language,
            labellings={
                name: tuple(character_spans(sentence, per_sentence[sentence], 0))
                for name, per_sentence in labellings.items()
            },
            text=sentence_texts[sentence],
            meta={**meta, "line": gold.lines[sentences[sentence][0]]},
        )
        for sentence in range(len(sentences))
    ]
