"""INCEpTION / WebAnno project exports: each annotator's CAS, and the curated CAS, of a document is a labelling.

A whole-project export (a zip, or the folder it unzips to) holds, per document, one file per annotator under
``annotation/<document>/`` and the curated one under ``curation/<document>/``. With the export format
"UIMA CAS XMI" each file is a zip of ``<user>.xmi`` and ``TypeSystem.xml``; older exports name that zip
``webanno<digits>export.zip`` (the user is then the name of the .xmi inside), newer ones ``<user>.zip``. A bare
``<user>.xmi`` with a ``TypeSystem.xml`` beside it is read too. The CASes are read with dkpro-cassis; the
annotations of one span layer (``layer``) become spans typed by one of its features (``feature``), offsets
into the CAS's text (its sofa). ``exportedproject*.json`` gives each annotation document's state (FINISHED,
IN_PROGRESS); the serialised copies (``annotation_ser/``, ``curation_ser/``), ``source/`` and the logs are not read.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.adapters.archive import (
    MEMBER_LIMIT,
    READ_ERRORS,
    Export,
    macos_metadata,
    read_member,
    read_member_limit,
)
from refsens_report.adapters.common import (
    ITEM_UNITS,
    InputPath,
    check_label,
    count,
    excerpt,
    first_difference,
    read_bool,
    read_dup_key,
    read_labels,
    read_language,
    read_path,
    with_text_dup_keys,
)
from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item, Record, Span

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
SENTENCE = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence"
ANNOTATION_TYPE = "uima.tcas.Annotation"
PRIMITIVE_RANGES = (
    "uima.cas.String",
    "uima.cas.Integer",
    "uima.cas.Boolean",
    "uima.cas.Short",
    "uima.cas.Long",
    "uima.cas.Byte",
    "uima.cas.Float",
    "uima.cas.Double",
)
CURATION_USER = "CURATION_USER"
PSEUDO_USERS = ("INITIAL_CAS", "CORRECTION_USER")  # the document as imported; WebAnno's old correction mode
MEMBER = re.compile(r"(?:^|/)(?P<kind>annotation|curation)/(?P<document>[^/]+)/(?P<file>[^/]+)$")
LEGACY_ZIP = re.compile(r"^webanno\d*export\.zip$")  # a temporary file name: the user is the .xmi inside
SERIALISED = re.compile(r"(?:^|/)(?:annotation|curation)_ser/")  # Java-serialised copies of the CASes
PROJECT_JSON = re.compile(r"(?:^|/)exportedproject[^/]*\.json$")
TYPE_SYSTEM = "TypeSystem.xml"


@dataclass(frozen=True)
class InceptionOptions:
    """The checked `[record]` keys of an INCEpTION record."""

    source: InputPath
    language: str
    items: str
    layer: str
    feature: str
    curation: str
    names: dict[str, str]
    finished_only: bool
    labels: frozenset[str] | None
    text_dup_keys: bool = False
    member_limit: int = MEMBER_LIMIT


def read_options(reader: OptionReader, base_dir: Path) -> InceptionOptions | None:
    """Read `[record]` for format = "inception"; bad keys are reported through ``reader``."""
    source = read_path(reader, base_dir, "path", kind="any")
    language = read_language(reader)
    items = reader.choice("items", ITEM_UNITS, "documents")
    layer = reader.string("layer", default=NAMED_ENTITY) or NAMED_ENTITY
    feature = reader.string("feature", default="value") or "value"
    curation = reader.string("curation", default="curation") or "curation"
    names_value = reader.get("names", {})
    names: dict[str, str] = {}
    if not isinstance(names_value, dict) or not all(
        isinstance(value, str) and value.strip() for value in names_value.values()
    ):
        example = '{"ia-test1" = "annotator_a"}'
        reader.fail("names", f"must be a table of labelling names, e.g. {example}, got {shown(names_value)}")
    else:
        names = dict(names_value)
        for name, times in Counter(names.values()).items():
            if times > 1:
                reader.fail("names", f"gives the name '{name}' to {times} users; each labelling needs its own")
        for user, name in names.items():
            if name == curation:
                reader.fail("names", f"renames user '{user}' to '{name}', the curation's labelling (record.curation)")
    finished_only = read_bool(reader, "finished_only", False)
    labels = read_labels(reader)
    text_dup_keys = read_dup_key(reader)
    member_limit = read_member_limit(reader)
    if source is None:
        return None
    return InceptionOptions(
        source, language, items, layer, feature, curation, names, finished_only, labels, text_dup_keys, member_limit
    )


@dataclass(frozen=True)
class CasFile:
    """One annotator's (or the curation's) CAS of one document, still as bytes."""

    document: str
    user: str  # the INCEpTION user name; CURATION_USER for the curation
    display: str  # names the .xmi for messages: export.zip:annotation/doc/ia.zip:ia.xmi
    xmi: bytes
    type_system: bytes
    type_system_display: str


def _cas_in_zip(data: bytes, display: str, problems: ProblemList, limit: int) -> tuple[str, bytes, bytes] | None:
    """Return (.xmi name, its bytes, TypeSystem.xml bytes) of an annotation zip, or None with the problem."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            members = [name for name in inner.namelist() if not name.endswith("/") and not macos_metadata(name)]
            xmis = [name for name in members if name.lower().endswith(".xmi")]
            systems = [name for name in members if name.rsplit("/", 1)[-1] == TYPE_SYSTEM]
            if len(xmis) != 1:
                problems.add(
                    f"{display}: expected one .xmi file in the zip, found {len(xmis)}"
                    + (f" ({', '.join(xmis[:5])})" if xmis else "")
                    + " (export the project with the format 'UIMA CAS XMI')"
                )
                return None
            if not systems:
                problems.add(f"{display}: no {TYPE_SYSTEM} beside {xmis[0]} (UIMA CAS XMI exports carry one)")
                return None
            xmi, type_system = read_member(inner, xmis[0], limit), read_member(inner, systems[0], limit)
            for name, read in ((xmis[0], xmi), (systems[0], type_system)):
                if isinstance(read, str):
                    problems.add(f"{display}:{name}: {read}")
                    return None
            assert isinstance(xmi, bytes) and isinstance(type_system, bytes)
            return xmis[0], xmi, type_system
    except READ_ERRORS as error:
        problems.add(f"{display}: not a readable zip ({error})")
        return None


def find_cas_files(export: Export, problems: ProblemList, tally: Tally) -> list[CasFile]:
    """Return every annotator's and curator's CAS in the export, reporting files that are not UIMA CAS XMI."""
    found: list[CasFile] = []
    by_folder: dict[str, list[str]] = {}
    for name in export.names:
        if macos_metadata(name):
            tally.macos_entries += 1
            continue
        if SERIALISED.search(name):
            tally.serialised += 1
            continue
        match = MEMBER.search(name)
        if match is None:
            continue
        by_folder.setdefault(name.rsplit("/", 1)[0], []).append(name)
    for folder, names in sorted(by_folder.items()):
        for name in names:
            if len(problems) >= MAX_PROBLEMS:
                return found
            match = MEMBER.search(name)
            assert match is not None
            kind, document, file_name = match["kind"], match["document"], match["file"]
            display = export.display(name)
            lower = file_name.lower()
            if file_name == TYPE_SYSTEM:
                continue
            if lower.endswith(".zip"):
                data = export.read(name, problems)
                if data is None:
                    continue
                inside = _cas_in_zip(data, display, problems, export.limit)
                if inside is None:
                    continue
                xmi_name, xmi, type_system = inside
                stem = xmi_name.rsplit("/", 1)[-1][: -len(".xmi")]
                user = stem if LEGACY_ZIP.match(file_name) else file_name[: -len(".zip")]
                cas = CasFile(document, user, f"{display}:{xmi_name}", xmi, type_system, f"{display}:{TYPE_SYSTEM}")
            elif lower.endswith(".xmi"):
                system_name = f"{folder}/{TYPE_SYSTEM}"
                if system_name not in names:
                    problems.add(f"{display}: no {TYPE_SYSTEM} beside it in {export.display(folder)}")
                    continue
                xmi, type_system = export.read(name, problems), export.read(system_name, problems)
                if xmi is None or type_system is None:
                    continue
                cas = CasFile(
                    document, file_name[: -len(".xmi")], display, xmi, type_system, export.display(system_name)
                )
            else:
                problems.add(
                    f"{display}: not UIMA CAS XMI (a .zip of .xmi and {TYPE_SYSTEM}, or an .xmi): export the "
                    "project again with the format 'UIMA CAS XMI'"
                )
                continue
            if kind == "curation" or cas.user == CURATION_USER:
                cas = CasFile(
                    cas.document, CURATION_USER, cas.display, cas.xmi, cas.type_system, cas.type_system_display
                )
            elif cas.user in PSEUDO_USERS:
                tally.pseudo_users[cas.user] += 1
                continue
            found.append(cas)
    return found


def read_states(export: Export, problems: ProblemList) -> tuple[dict[tuple[str, str], str], str | None]:
    """Return (document, user) -> annotation state from exportedproject*.json, and the file read (or None)."""
    names = [name for name in export.names if PROJECT_JSON.search(name) and not macos_metadata(name)]
    if not names:
        return {}, None
    name = names[0]
    data = export.read(name, problems)
    if data is None:
        return {}, name
    display = export.display(name)
    try:
        project = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        problems.add(f"{display}: not valid UTF-8 (byte {error.start + 1})")
        return {}, name
    except json.JSONDecodeError as error:
        problems.add(f"{display}:{error.lineno}: invalid JSON ({error.msg} at column {error.colno})")
        return {}, name
    except RecursionError:
        problems.add(f"{display}: invalid JSON (nested too deeply)")
        return {}, name
    states: dict[tuple[str, str], str] = {}
    documents = project.get("annotation_documents") if isinstance(project, dict) else None
    if not isinstance(documents, list):
        problems.add(f"{display}: 'annotation_documents' is missing or not a list (is this INCEpTION's project file?)")
        return {}, name
    for document in documents:
        if isinstance(document, dict) and all(isinstance(document.get(key), str) for key in ("name", "user", "state")):
            states[(document["name"], document["user"])] = document["state"]
    sources = project.get("source_documents")
    for document in sources if isinstance(sources, list) else []:
        # the curation's state is the source document's: CURATION_IN_PROGRESS, CURATION_FINISHED
        if isinstance(document, dict) and all(isinstance(document.get(key), str) for key in ("name", "state")):
            states[(document["name"], CURATION_USER)] = document["state"]
    return states, name


# ----------------------------------------------------------------------------------------------------------
# reading one CAS


@dataclass
class Tally:
    """What reading the export skipped, split or found, for the record's notes."""

    macos_entries: int = 0
    serialised: int = 0
    pseudo_users: Counter = field(default_factory=Counter)
    no_value: int = 0  # annotations of the layer whose feature is empty: INCEpTION lets a span have no tag
    zero_width: int = 0
    other_values: Counter = field(default_factory=Counter)  # feature -> annotations holding a value in it
    layer_annotations: int = 0
    not_finished: list[str] = field(default_factory=list)  # "user on document (STATE)"
    left_out: list[str] = field(default_factory=list)  # the same, when finished_only left them out
    split_at_sentences: int = 0
    outside_sentences: int = 0
    other_segmentation: int = 0


@dataclass(frozen=True)
class ReadCas:
    """One CAS read: its text, sentence boundaries and spans."""

    text: str
    sentences: tuple[tuple[int, int], ...]
    spans: tuple[Span, ...]


class CasReader:
    """Parses CASes with cassis (type systems parsed once each) and takes the spans of the configured layer."""

    def __init__(self, options: InceptionOptions, problems: ProblemList, tally: Tally):
        import cassis  # imported here: only an INCEpTION record needs it, and it pulls in lxml

        self.cassis = cassis
        self.options, self.problems, self.tally = options, problems, tally
        self.type_systems: dict[str, Any] = {}
        self.reported: set[str] = set()  # layer/feature problems are reported once, not once per CAS

    def _once(self, key: str, message: str) -> None:
        if key not in self.reported:
            self.reported.add(key)
            self.problems.add(message)

    def type_system(self, cas: CasFile) -> Any:
        key = hashlib.sha256(cas.type_system).hexdigest()
        if key not in self.type_systems:
            try:
                self.type_systems[key] = self.cassis.load_typesystem(io.BytesIO(cas.type_system))
            except Exception as error:  # lxml syntax errors and cassis's own checks: a damaged file either way
                where = f"{cas.type_system_display}{_line_of(error)}"
                self.problems.add(f"{where}: not a UIMA type system ({_message(error)})")
                self.type_systems[key] = None
        return self.type_systems[key]

    def read(self, cas: CasFile) -> ReadCas | None:
        type_system = self.type_system(cas)
        if type_system is None:
            return None
        try:
            parsed = self.cassis.load_cas_from_xmi(io.BytesIO(cas.xmi), typesystem=type_system)
        except Exception as error:  # XML syntax, unknown types, dangling references: cassis raises several kinds
            self.problems.add(f"{cas.display}{_line_of(error)}: not a readable UIMA CAS XMI ({_message(error)})")
            return None
        text = parsed.sofa_string
        if not isinstance(text, str):
            self.problems.add(f"{cas.display}: the CAS has no text (sofa string); INCEpTION's text documents have one")
            return None
        spans = self._spans(parsed, type_system, text, cas)
        if spans is None:
            return None
        sentences: tuple[tuple[int, int], ...] = ()
        if self.options.items == "sentences":
            if not type_system.contains_type(SENTENCE):
                self._once(
                    "sentence",
                    f'{cas.display}: items = "sentences" needs the sentence layer ({SENTENCE}), '
                    "which its type system lacks",
                )
                return None
            sentences = tuple(sorted({(fs.begin, fs.end) for fs in parsed.select(SENTENCE) if fs.end > fs.begin}))
            if not sentences:
                self.problems.add(f'{cas.display}: items = "sentences" but the CAS has no sentences')
                return None
        return ReadCas(text, sentences, spans)

    def _spans(self, parsed: Any, type_system: Any, text: str, cas: CasFile) -> tuple[Span, ...] | None:
        options = self.options
        if not type_system.contains_type(options.layer):
            present = Counter(
                fs.type.name
                for fs in parsed.select_all_annotations()
                if fs.type.name not in (SENTENCE, "uima.tcas.DocumentAnnotation")
            )
            found = ", ".join(f"{name} ({times:,})" for name, times in present.most_common(8)) or "none"
            self._once(
                "layer",
                f"{cas.display}: the layer '{options.layer}' (record.layer) is not in its type system; "
                f"annotations in this CAS: {found}",
            )
            return None
        layer = type_system.get_type(options.layer)
        if not type_system.subsumes(ANNOTATION_TYPE, layer.name):
            self._once(
                "span",
                f"{cas.display}: the layer '{options.layer}' (record.layer) is not a span layer "
                "(not a uima.tcas.Annotation)",
            )
            return None
        features = {feature.name: feature for feature in layer.all_features}
        primitive = sorted(
            name
            for name, feature in features.items()
            if feature.rangeType.name in PRIMITIVE_RANGES and name not in ("begin", "end")
        )
        feature = features.get(options.feature)
        if feature is None or feature.rangeType.name not in PRIMITIVE_RANGES:
            why = "is not a feature of" if feature is None else "is not a string or number feature of"
            self._once(
                "feature",
                f"{cas.display}: '{options.feature}' (record.feature) {why} the layer "
                f"'{options.layer}'; its features: {', '.join(primitive) or 'none'}",
            )
            return None
        spans: list[Span] = []
        before = len(self.problems)
        for annotation in parsed.select(options.layer):
            self.tally.layer_annotations += 1
            for other in primitive:
                if other != options.feature and annotation.get(other) not in (None, ""):
                    self.tally.other_values[other] += 1
            begin, end = annotation.begin, annotation.end
            if not (isinstance(begin, int) and isinstance(end, int)) or not 0 <= begin <= end <= len(text):
                self.problems.add(
                    f"{cas.display}: an annotation of '{layer.short_name}' at [{begin}, {end}) lies "
                    f"outside the text ({len(text)} characters)"
                )
                continue
            value = annotation.get(options.feature)
            if value is None or value == "":
                self.tally.no_value += 1
                continue
            if begin == end:
                self.tally.zero_width += 1
                continue
            label = str(value)
            if problem := check_label(label, options.labels):
                covered = text[begin:end][:40]
                self.problems.add(f"{cas.display}: the annotation at [{begin}, {end}) ({covered!r}): {problem}")
                continue
            spans.append((begin, end, label))
        return tuple(sorted(spans)) if len(self.problems) == before else None


def _line_of(error: Exception) -> str:
    line = getattr(error, "lineno", None)
    return f":{line}" if isinstance(line, int) and line > 0 else ""


def _message(error: Exception) -> str:
    text = str(getattr(error, "msg", None) or error).strip() or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# ----------------------------------------------------------------------------------------------------------
# the record


def _sentence_items(
    document: str, base: ReadCas, labellings: dict[str, tuple[Span, ...]], language: str, tally: Tally
) -> list[Item]:
    """Cut a document into its sentences (those of ``base``); spans crossing a boundary are split, counted."""
    items = []
    pieces: dict[int, dict[str, list[Span]]] = {
        index: {name: [] for name in labellings} for index in range(len(base.sentences))
    }
    for name, spans in labellings.items():
        for start, end, label in spans:
            covered = 0
            parts = 0
            for index, (begin, finish) in enumerate(base.sentences):
                low, high = max(start, begin), min(end, finish)
                if low < high:
                    pieces[index][name].append((low - begin, high - begin, label))
                    covered += high - low
                    parts += 1
            if parts > 1:
                tally.split_at_sentences += 1
            elif parts == 0:
                tally.outside_sentences += 1
    for index, (begin, finish) in enumerate(base.sentences):
        items.append(
            Item(
                id=f"{document}/{index + 1}",
                language=language,
                labellings={name: tuple(spans) for name, spans in pieces[index].items()},
                text=base.text[begin:finish],
                meta={"document": document, "sentence": index + 1},
            )
        )
    return items


def load(options: InceptionOptions, duplicate_key: str) -> Record:
    """Read the export; one item per document (or sentence), one labelling per annotator and the curation."""
    problems = ProblemList()
    tally = Tally()
    export = Export(options.source, options.member_limit)
    try:
        states, project_file = read_states(export, problems)
        files = find_cas_files(export, problems, tally)
        if not files and not problems:
            problems.add(
                f"{options.source.display}: no annotation/<document>/ or curation/<document>/ files: is this an "
                "INCEpTION or WebAnno whole-project export?"
            )
        reader = CasReader(options, problems, tally)
        documents: dict[str, dict[str, tuple[CasFile, ReadCas]]] = {}
        for cas in files:
            if len(problems) >= MAX_PROBLEMS:
                break
            name = options.curation if cas.user == CURATION_USER else options.names.get(cas.user, cas.user)
            if why := name_problem(name):
                problems.add(f"{cas.display}: the labelling name (the user name) {why}")
                continue
            if cas.user != CURATION_USER and name == options.curation:
                problems.add(
                    f"{cas.display}: user '{cas.user}' has the curation's labelling name '{name}'; "
                    "rename one with record.names or record.curation"
                )
                continue
            if why := name_problem(cas.document):
                problems.add(f"{cas.display}: the document name {why}")
                continue
            state = states.get((cas.document, cas.user))
            finished = "CURATION_FINISHED" if cas.user == CURATION_USER else "FINISHED"
            if state is not None and state != finished:
                who = "the curation" if cas.user == CURATION_USER else cas.user
                where = f"{who} of {cas.document} ({state})"
                if options.finished_only:
                    tally.left_out.append(where)
                    continue
                tally.not_finished.append(where)
            known = documents.setdefault(cas.document, {})
            if name in known:
                problems.add(
                    f"{cas.display}: a second CAS of '{name}' for document '{cas.document}' "
                    f"(the first is {known[name][0].display})"
                )
                continue
            read = reader.read(cas)
            if read is None:
                continue
            for other_file, other in known.values():
                if other.text != read.text:
                    index = first_difference(other.text, read.text)
                    problems.add(
                        f"{cas.display}: the text differs from {other_file.display} at character {index + 1} "
                        f"({excerpt(read.text, index)} here, {excerpt(other.text, index)} there): every CAS of a "
                        "document must hold the same text"
                    )
                    break
            else:
                known[name] = (cas, read)
    finally:
        export.close()
    if tally.layer_annotations and tally.no_value == tally.layer_annotations and not problems:
        hint = ", ".join(f"'{name}' ({times:,})" for name, times in tally.other_values.most_common(3))
        problems.add(
            f"{options.source.display}: the feature '{options.feature}' (record.feature) is empty on all "
            f"{tally.layer_annotations:,} annotations of '{options.layer}', so every labelling would be empty"
            + (f"; features holding values: {hint}" if hint else "")
        )
    problems.raise_if_any()
    items: list[Item] = []
    for document in sorted(documents):
        read = documents[document]
        curation_last = sorted(read, key=lambda name: (name == options.curation, name))
        labellings = {name: read[name][1].spans for name in curation_last}
        base = read[curation_last[0]][1]
        if options.items == "documents":
            items.append(
                Item(
                    id=document,
                    language=options.language,
                    labellings=labellings,
                    text=base.text,
                    meta={"document": document},
                )
            )
            continue
        tally.other_segmentation += sum(1 for name in curation_last[1:] if read[name][1].sentences != base.sentences)
        items.extend(_sentence_items(document, base, labellings, options.language, tally))
    items_tuple = tuple(items)
    if options.text_dup_keys:
        items_tuple = with_text_dup_keys(items_tuple, duplicate_key)
    notes = _notes(options, tally, items_tuple, len(documents), project_file)
    return Record(items=items_tuple, sources=(options.source,), notes=tuple(notes))


def _notes(
    options: InceptionOptions, tally: Tally, items: tuple[Item, ...], documents: int, project_file: str | None
) -> list[str]:
    unit = "sentence" if options.items == "sentences" else "document"
    names = Record(items=items).labelling_names
    notes = [
        f"inception: {count(len(items), unit)}"
        + (f" from {count(documents, 'document')}" if options.items == "sentences" else "")
        + f" in {options.source.name}; layer {options.layer}, feature '{options.feature}'; labellings: "
        + (", ".join(names) or "none")
    ]
    if tally.not_finished:
        notes.append(
            f"inception: {count(len(tally.not_finished), 'CAS', 'CASes')} not finished, read as they are: "
            + "; ".join(tally.not_finished[:10])
            + ("; ..." if len(tally.not_finished) > 10 else "")
            + " (finished_only = true leaves them out)"
        )
    if tally.left_out:
        notes.append(
            f"inception: {count(len(tally.left_out), 'CAS', 'CASes')} not finished, left out "
            "(finished_only; the labelling is absent there): "
            + "; ".join(tally.left_out[:10])
            + ("; ..." if len(tally.left_out) > 10 else "")
        )
    if project_file is None:
        notes.append("inception: no exportedproject*.json in the export: the annotation states are unknown")
    if tally.no_value:
        notes.append(
            f"inception: {count(tally.no_value, 'annotation')} of the layer with no '{options.feature}' value "
            "skipped (a span the annotator left without a tag)"
        )
    if tally.zero_width:
        notes.append(f"inception: {count(tally.zero_width, 'zero-width annotation')} skipped")
    for user, times in sorted(tally.pseudo_users.items()):
        notes.append(f"inception: {count(times, 'CAS', 'CASes')} of the pseudo-user {user} skipped (not an annotator)")
    if tally.split_at_sentences:
        notes.append(f"inception: {count(tally.split_at_sentences, 'span')} crossing a sentence boundary split at it")
    if tally.outside_sentences:
        notes.append(f"inception: {count(tally.outside_sentences, 'span')} outside every sentence dropped")
    if tally.other_segmentation:
        notes.append(
            f"inception: {count(tally.other_segmentation, 'CAS', 'CASes')} split sentences differently from the "
            "document's first CAS; the first CAS's sentences are the items"
        )
    if tally.macos_entries:
        notes.append(
            f"inception: {count(tally.macos_entries, 'macOS metadata entry', 'macOS metadata entries')} "
            "(__MACOSX/, ._*) skipped"
        )
    if tally.serialised:
        notes.append(
            f"inception: {count(tally.serialised, 'serialised CAS file')} (annotation_ser/, curation_ser/) not "
            "read; their XMI copies are"
        )
    return notes
