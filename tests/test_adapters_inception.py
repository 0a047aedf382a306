"""The inception adapter on small project exports written here (and on the real one in ../shared/data).

The fixture follows what INCEpTION writes for a whole-project export in the "UIMA CAS XMI" format:
``annotation/<document>/<user>.zip`` (older versions: ``webanno<digits>export.zip``) holding ``<user>.xmi``
and ``TypeSystem.xml``, the curated CAS under ``curation/<document>/``, ``exportedproject<digits>.json`` with
each annotation document's state. The XMI and the type system are written by hand from the UIMA XMI and
DKPro Core type names, so the reader is not tested against itself.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from helpers import validate
from refused import refused

from refsens_report.config import load_config
from refsens_report.load import load_record

TYPE_SYSTEM = """<?xml version="1.0" encoding="UTF-8"?>
<typeSystemDescription xmlns="http://uima.apache.org/resourceSpecifier">
  <types>
    <typeDescription>
      <name>de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence</name>
      <supertypeName>uima.tcas.Annotation</supertypeName>
      <features>
        <featureDescription><name>id</name><rangeTypeName>uima.cas.String</rangeTypeName></featureDescription>
      </features>
    </typeDescription>
    <typeDescription>
      <name>de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token</name>
      <supertypeName>uima.tcas.Annotation</supertypeName>
    </typeDescription>
    <typeDescription>
      <name>de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity</name>
      <supertypeName>uima.tcas.Annotation</supertypeName>
      <features>
        <featureDescription><name>value</name><rangeTypeName>uima.cas.String</rangeTypeName></featureDescription>
        <featureDescription><name>identifier</name><rangeTypeName>uima.cas.String</rangeTypeName></featureDescription>
      </features>
    </typeDescription>
  </types>
</typeSystemDescription>
"""

DOC1 = "Angela Merkel visited Paris. She met Emmanuel Macron there."
DOC2 = "Acme Corp hired Bob."


def xmi(
    text: str,
    entities: list[tuple[int, int, str | None]],
    sentences: list[tuple[int, int]] | None = None,
    identifiers: dict[int, str] | None = None,
) -> str:
    """Return a CAS as INCEpTION writes it: sentences, named entities (value None: no tag; ``identifiers`` by
    entity position, the entity-linking feature), the sofa, the view."""
    sentences = sentences if sentences is not None else [(0, len(text))]
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<xmi:XMI xmlns:xmi="http://www.omg.org/XMI" xmlns:cas="http:///uima/cas.ecore" '
        'xmlns:type="http:///de/tudarmstadt/ukp/dkpro/core/api/ner/type.ecore" '
        'xmlns:type2="http:///de/tudarmstadt/ukp/dkpro/core/api/segmentation/type.ecore" xmi:version="2.0">',
        '  <cas:NULL xmi:id="0"/>',
    ]
    members = []
    for number, (begin, end) in enumerate(sentences):
        lines.append(f'  <type2:Sentence xmi:id="{10 + number}" sofa="1" begin="{begin}" end="{end}"/>')
        members.append(str(10 + number))
    for number, (begin, end, value) in enumerate(entities):
        attribute = "" if value is None else f" value={quoteattr(value)}"
        if identifiers and number in identifiers:
            attribute += f" identifier={quoteattr(identifiers[number])}"
        lines.append(f'  <type:NamedEntity xmi:id="{100 + number}" sofa="1" begin="{begin}" end="{end}"{attribute}/>')
        members.append(str(100 + number))
    lines.append(
        f'  <cas:Sofa xmi:id="1" sofaNum="1" sofaID="_InitialView" mimeType="text" sofaString={quoteattr(text)}/>'
    )
    lines.append(f'  <cas:View sofa="1" members="{" ".join(members)}"/>')
    lines.append("</xmi:XMI>")
    return "\n".join(lines) + "\n"


def cas_zip(user: str, content: str, type_system: str | None = TYPE_SYSTEM) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{user}.xmi", content)
        if type_system is not None:
            archive.writestr("TypeSystem.xml", type_system)
    return buffer.getvalue()


SENTENCES = [(0, 28), (29, len(DOC1))]
ALICE_1 = xmi(DOC1, [(0, 13, "PER"), (22, 27, "LOC"), (37, 52, "PER")], SENTENCES)
BOB_1 = xmi(DOC1, [(0, 13, "PER"), (22, 27, "ORG"), (37, 52, None)], SENTENCES)
CURATION_1 = xmi(DOC1, [(0, 13, "PER"), (22, 27, "LOC"), (37, 52, "PER")], SENTENCES)
ALICE_2 = xmi(DOC2, [(0, 9, "ORG"), (16, 19, "PER")])
BOB_2 = xmi(DOC2, [])
PROJECT = {
    "name": "ner-demo",
    "source_documents": [
        {"name": "doc1.txt", "state": "CURATION_FINISHED"},
        {"name": "doc2.txt", "state": "ANNOTATION_IN_PROGRESS"},
    ],
    "annotation_documents": [
        {"name": "doc1.txt", "user": "alice", "state": "FINISHED"},
        {"name": "doc1.txt", "user": "bob", "state": "FINISHED"},
        {"name": "doc2.txt", "user": "alice", "state": "FINISHED"},
        {"name": "doc2.txt", "user": "bob", "state": "IN_PROGRESS"},
    ],
}


def export_files(legacy: bool = False) -> dict[str, bytes]:
    """Return the export's files by path; ``legacy`` names the CAS zips as INCEpTION before 2022 did."""
    top = "ner-demo_project_2024-05-01_1200/"

    def name(document: str, user: str, number: int) -> str:
        return f"webanno{number}export.zip" if legacy else f"{user}.zip"

    files = {
        f"{top}exportedproject123.json": json.dumps(PROJECT).encode(),
        f"{top}source/doc1.txt": DOC1.encode(),
        f"{top}source/doc2.txt": DOC2.encode(),
        f"{top}annotation/doc1.txt/{name('doc1', 'alice', 11)}": cas_zip("alice", ALICE_1),
        f"{top}annotation/doc1.txt/{name('doc1', 'bob', 12)}": cas_zip("bob", BOB_1),
        f"{top}annotation/doc1.txt/{name('doc1', 'INITIAL_CAS', 13)}": cas_zip("INITIAL_CAS", xmi(DOC1, [], SENTENCES)),
        f"{top}annotation/doc2.txt/{name('doc2', 'alice', 21)}": cas_zip("alice", ALICE_2),
        f"{top}annotation/doc2.txt/{name('doc2', 'bob', 22)}": cas_zip("bob", BOB_2),
        f"{top}curation/doc1.txt/{name('doc1', 'CURATION_USER', 14)}": cas_zip("CURATION_USER", CURATION_1),
        f"{top}annotation_ser/doc1.txt/alice.ser": b"\xac\xed\x00\x05",
        f"__MACOSX/{top}._exportedproject123.json": b"\x00\x05\x16\x07",
    }
    return files


def replaced(name_end: str, data: bytes) -> dict[str, bytes]:
    """Return the export's files with the one whose path ends so replaced by ``data``."""
    return {name: (data if name.endswith(name_end) else content) for name, content in export_files().items()}


def write_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def write_config(tmp_path: Path, source: str = "export.zip", record: str = "", roles: str = "") -> Path:
    path = tmp_path / "refsens.toml"
    path.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "inception"\n'
        f'path = "{source}"\nlanguage = "en"\n{record}\n'
        + (roles or '[roles]\nannotators = ["alice", "bob"]\noutputs = ["alice", "bob"]\nreferences = ["curation"]\n'),
        encoding="utf-8",
    )
    return path


def case(tmp_path: Path, files: dict[str, bytes] | None = None, record: str = "", roles: str = "") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    write_zip(tmp_path / "export.zip", export_files() if files is None else files)
    return write_config(tmp_path, record=record, roles=roles)


def test_each_annotator_and_the_curation_become_labellings_of_document_items(tmp_path, capsys):
    record = load_record(load_config(case(tmp_path)))
    assert [item.id for item in record.items] == ["doc1.txt", "doc2.txt"]
    doc1, doc2 = record.items
    assert doc1.text == DOC1 and doc2.text == DOC2
    assert list(doc1.labellings) == ["alice", "bob", "curation"]  # annotators by name, the curation last
    assert doc1.labellings["alice"] == ((0, 13, "PER"), (22, 27, "LOC"), (37, 52, "PER"))
    assert doc1.labellings["bob"] == ((0, 13, "PER"), (22, 27, "ORG"))  # the untagged span is skipped, counted
    assert doc1.labellings["curation"] == doc1.labellings["alice"]
    # bob opened doc2 and tagged nothing: present and empty; no curation there: absent
    assert doc2.labellings == {"alice": ((0, 9, "ORG"), (16, 19, "PER")), "bob": ()}
    notes = "\n".join(record.notes)
    assert "1 annotation of the layer with no 'value' value skipped" in notes
    assert "1 CAS not finished, read as they are: bob of doc2.txt (IN_PROGRESS)" in notes
    assert "1 CAS of the pseudo-user INITIAL_CAS skipped" in notes
    assert "1 macOS metadata entry (__MACOSX/, ._*) skipped" in notes
    assert "1 serialised CAS file (annotation_ser/, curation_ser/) not read" in notes
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0, output


def test_legacy_zip_names_and_an_unzipped_folder_give_the_same_record(tmp_path):
    reference = load_record(load_config(case(tmp_path / "new")))
    legacy = load_record(load_config(case(tmp_path / "legacy", export_files(legacy=True))))
    assert legacy.items == reference.items
    folder = tmp_path / "folder"
    folder.mkdir()
    for name, data in export_files().items():
        (folder / "export" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "export" / name).write_bytes(data)
    unzipped = load_record(load_config(write_config(folder, source="export")))
    assert unzipped.items == reference.items


def test_a_bare_xmi_beside_its_type_system_is_read(tmp_path):
    folder = tmp_path / "export" / "annotation" / "doc2.txt"
    folder.mkdir(parents=True)
    (folder / "alice.xmi").write_text(ALICE_2, encoding="utf-8")
    (folder / "TypeSystem.xml").write_text(TYPE_SYSTEM, encoding="utf-8")
    (folder / "bob.xmi").write_text(BOB_2, encoding="utf-8")
    roles = '[roles]\noutputs = ["alice"]\nreferences = ["bob"]\n'
    record = load_record(load_config(write_config(tmp_path, source="export", roles=roles)))
    assert record.items[0].labellings == {"alice": ((0, 9, "ORG"), (16, 19, "PER")), "bob": ()}
    assert "no exportedproject*.json in the export" in "\n".join(record.notes)


def test_sentence_items_shift_offsets_and_split_a_span_across_a_boundary(tmp_path):
    files = export_files()
    crossing = xmi(DOC1, [(22, 32, "LOC"), (37, 52, "PER")], SENTENCES)  # "Paris. She": ends in the second
    files = {
        name: (cas_zip("alice", crossing) if name.endswith("doc1.txt/alice.zip") else data)
        for name, data in files.items()
    }
    record = load_record(load_config(case(tmp_path, files, record='items = "sentences"')))
    assert [item.id for item in record.items] == ["doc1.txt/1", "doc1.txt/2", "doc2.txt/1"]
    first, second, _ = record.items
    assert first.text == "Angela Merkel visited Paris." and second.text == "She met Emmanuel Macron there."
    assert first.labellings["alice"] == ((22, 28, "LOC"),)
    assert second.labellings["alice"] == ((0, 3, "LOC"), (8, 23, "PER"))
    assert second.labellings["curation"] == ((8, 23, "PER"),)
    assert first.meta == {"document": "doc1.txt", "sentence": 1}
    assert "1 span crossing a sentence boundary split at it" in "\n".join(record.notes)


def test_finished_only_leaves_unfinished_documents_absent_and_names_rename(tmp_path):
    record = 'finished_only = true\ncuration = "adjudicated"\nnames = { alice = "annotator_a", bob = "annotator_b" }'
    roles = '[roles]\nannotators = ["annotator_a", "annotator_b"]\noutputs = ["annotator_a"]\n'
    record = load_record(load_config(case(tmp_path, record=record, roles=roles + 'references = ["adjudicated"]\n')))
    assert list(record.items[0].labellings) == ["annotator_a", "annotator_b", "adjudicated"]
    assert record.items[1].labellings == {"annotator_a": ((0, 9, "ORG"), (16, 19, "PER"))}
    assert "not finished, left out (finished_only; the labelling is absent there): bob of doc2.txt" in "\n".join(
        record.notes
    )


def test_a_curation_in_progress_is_noted_or_left_out(tmp_path):
    project = {**PROJECT, "source_documents": [{"name": "doc1.txt", "state": "CURATION_IN_PROGRESS"}]}
    files = replaced("exportedproject123.json", json.dumps(project).encode())
    record = load_record(load_config(case(tmp_path, files)))
    assert "the curation of doc1.txt (CURATION_IN_PROGRESS)" in "\n".join(record.notes)
    assert "curation" in record.items[0].labellings
    roles = '[roles]\noutputs = ["alice"]\nreferences = ["bob"]\n'
    record = load_record(load_config(case(tmp_path, files, record="finished_only = true", roles=roles)))
    assert "curation" not in record.items[0].labellings


def test_a_state_from_the_project_file_reaches_the_notes_escaped(tmp_path, capsys):
    """The states are the project file's strings, not checked names: every note is escaped where the record
    is made, so a right-to-left override or an escape sequence cannot act in the report or on the terminal."""
    hostile = "IN_PROGRESS\u202e\x1b[2J"
    documents = [
        {**entry, "state": hostile} if (entry["user"], entry["name"]) == ("bob", "doc2.txt") else entry
        for entry in PROJECT["annotation_documents"]
    ]
    files = replaced("exportedproject123.json", json.dumps({**PROJECT, "annotation_documents": documents}).encode())
    record = load_record(load_config(case(tmp_path, files)))
    assert "read as they are: bob of doc2.txt (IN_PROGRESS\\u202e\\x1b[2J)" in "\n".join(record.notes)
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0 and "\u202e" not in output and "\x1b" not in output, output


def test_another_feature_types_the_spans(tmp_path):
    linked = xmi(DOC1, [(0, 13, "PER"), (22, 27, "LOC"), (37, 52, "PER")], SENTENCES, {0: "Q567", 2: "Q3052772"})
    record = load_record(
        load_config(
            case(tmp_path, replaced("doc1.txt/alice.zip", cas_zip("alice", linked)), record='feature = "identifier"')
        )
    )
    assert record.items[0].labellings["alice"] == ((0, 13, "Q567"), (37, 52, "Q3052772"))
    assert record.items[0].labellings["bob"] == ()  # no identifiers: skipped, counted
    assert "9 annotations of the layer with no 'identifier' value skipped" in "\n".join(record.notes)


@pytest.mark.parametrize(
    "files, record, expected",
    [
        (
            replaced("doc1.txt/alice.zip", cas_zip("alice", ALICE_1.replace("</xmi:XMI>", "</xmi:XM>"))),
            "",
            [
                "export.zip:ner-demo_project_2024-05-01_1200/annotation/doc1.txt/alice.zip:alice.xmi:11: "
                "not a readable UIMA CAS XMI"
            ],
        ),
        (
            replaced("doc1.txt/alice.zip", cas_zip("alice", ALICE_1, type_system=None)),
            "",
            ["annotation/doc1.txt/alice.zip: no TypeSystem.xml beside alice.xmi"],
        ),
        (
            replaced("doc1.txt/alice.zip", cas_zip("alice", ALICE_1, type_system="<typeSystemDescription")),
            "",
            ["annotation/doc1.txt/alice.zip:TypeSystem.xml:1: not a UIMA type system"],
        ),
        (
            replaced("doc1.txt/bob.zip", cas_zip("bob", xmi(DOC1.replace("Paris", "Parma"), [], SENTENCES))),
            "",
            [
                "annotation/doc1.txt/bob.zip:bob.xmi: the text differs from",
                "at character 26 ('ma. She met Emmanuel'... here, 'is. She met Emmanuel'... there)",
            ],
        ),
        (
            {**export_files(), "p/annotation/doc3.txt/carol.tsv": b"#FORMAT=WebAnno TSV 3.3\n"},
            "",
            ["export.zip:p/annotation/doc3.txt/carol.tsv: not UIMA CAS XMI", "format 'UIMA CAS XMI'"],
        ),
        (
            None,
            'layer = "webanno.custom.Entity"',
            [
                "the layer 'webanno.custom.Entity' (record.layer) is not in its type system; annotations in this CAS: "
                "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity (3)"
            ],
        ),
        (
            None,
            'feature = "label"',
            ["'label' (record.feature) is not a feature of the layer", "its features: identifier, value"],
        ),
        (
            None,
            'labels = ["PER", "LOC"]',
            [
                "annotation/doc1.txt/bob.zip:bob.xmi: the annotation at [22, 27) ('Paris'): unknown label 'ORG'",
                "annotation/doc2.txt/alice.zip:alice.xmi: the annotation at [0, 9) ('Acme Corp'): unknown label 'ORG'",
            ],
        ),
        (
            None,
            'feature = "identifier"',
            [
                "the feature 'identifier' (record.feature) is empty on all 11 annotations",
                "features holding values: 'value' (10)",
            ],
        ),
        (
            replaced("exportedproject123.json", b'{"annotation_documents": [\n}'),
            "",
            ["export.zip:ner-demo_project_2024-05-01_1200/exportedproject123.json:2: invalid JSON"],
        ),
        (replaced("doc1.txt/bob.zip", b"not a zip"), "", ["annotation/doc1.txt/bob.zip: not a readable zip"]),
        ({"notes/readme.txt": b"hello"}, "", ["export.zip: no annotation/<document>/ or curation/<document>/ files"]),
    ],
)
def test_malformed_exports_are_refused_naming_the_member(tmp_path, capsys, files, record, expected):
    refused(case(tmp_path, files, record=record), capsys, *expected)


def test_every_broken_cas_is_reported_in_one_run(tmp_path, capsys):
    files = replaced("doc1.txt/alice.zip", cas_zip("alice", "<oops"))
    files = {
        name: (cas_zip("bob", "<oops") if name.endswith("doc2.txt/bob.zip") else data) for name, data in files.items()
    }
    err = refused(
        case(tmp_path, files, record='items = "paragraphs"'),
        capsys,
        "Config value 'record.items': must be one of sentences, documents",
    )
    # the config is refused first; fixed, both broken CASes are named at once
    err = refused(case(tmp_path, files), capsys, "doc1.txt/alice.zip:alice.xmi", "doc2.txt/bob.zip:bob.xmi")
    assert err.count("not a readable UIMA CAS XMI") == 2


def test_a_path_that_is_not_a_zip_is_refused(tmp_path, capsys):
    (tmp_path / "export.zip").write_text("plain text", encoding="utf-8")
    refused(write_config(tmp_path), capsys, "export.zip: not a zip archive or a folder")


# ----------------------------------------------------------------------------------------------------------
# the real export in ../shared/data (never copied here)

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "inception" / "Example_Project_POS.zip"
POS = "de.tudarmstadt.ukp.dkpro.core.api.lexmorph.type.pos.POS"


@pytest.mark.skipif(
    not REAL.is_file(), reason=f"real data not found at {REAL} (the shared data folder lives beside the project)"
)
def test_the_real_inceptalytics_export(tmp_path, capsys):
    roles = (
        '[roles]\nannotators = ["ia-test1", "ia-test2"]\noutputs = ["ia-test1", "ia-test2", "ia-test3"]\n'
        'references = ["curation"]\n'
    )
    # its README says the tags are in PosValue; the CASes hold them in coarseValue, and the adapter says so
    refused(
        write_config(tmp_path, source=str(REAL), record=f'layer = "{POS}"\nfeature = "PosValue"', roles=roles),
        capsys,
        "the feature 'PosValue' (record.feature) is empty on all 371 annotations",
        "features holding values: 'coarseValue' (369)",
    )
    config = write_config(tmp_path, source=str(REAL), record=f'layer = "{POS}"\nfeature = "coarseValue"', roles=roles)
    record = load_record(load_config(config))
    assert [item.id for item in record.items] == ["test1.txt", "test2.txt", "test3.txt"]
    assert {name: sum(name in item.labellings for item in record.items) for name in record.labelling_names} == {
        "ia-test1": 3,
        "ia-test2": 3,
        "ia-test3": 3,
        "zesch": 1,
        "curation": 1,
    }
    test1 = record.items[0]
    assert len(test1.text) == 341 and test1.labellings["zesch"] == ()  # opened, nothing tagged (IN_PROGRESS)
    assert test1.labellings["ia-test1"][0] == (0, 6, "PROPN")
    assert sum(len(spans) for item in record.items for spans in item.labellings.values()) == 369
    notes = "\n".join(record.notes)
    assert (
        "zesch of test1.txt (IN_PROGRESS); the curation of test3.txt (CURATION_IN_PROGRESS)" in notes
        and "32 macOS metadata entries" in notes
    )
    sentences = load_record(
        load_config(
            write_config(
                tmp_path,
                source=str(REAL),
                record=f'layer = "{POS}"\nfeature = "coarseValue"\nitems = "sentences"',
                roles=roles,
            )
        )
    )
    assert len(sentences.items) == 6


@pytest.mark.skipif(
    not REAL.is_file(), reason=f"real data not found at {REAL} (the shared data folder lives beside the project)"
)
def test_the_inception_example_config_validates(capsys):
    config = Path(__file__).resolve().parents[1] / "examples" / "inception" / "refsens.toml"
    code, output = validate(config, capsys)
    assert code == 0, output
    assert "ok (3 items, 1 language)" in output and "not audited: zesch" in output


def test_an_xmi_over_the_member_limit_inside_an_annotation_zip_is_refused_by_name(tmp_path, capsys):
    # the annotation zip packs 2 MiB of XMI into a few KB: the limit applies inside it too
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as inner:
        inner.writestr("alice.xmi", ALICE_1 + " " * 2**21)
        inner.writestr("TypeSystem.xml", TYPE_SYSTEM)
    config = case(tmp_path, replaced("doc1.txt/alice.zip", buffer.getvalue()), record="max_member_mib = 1")
    refused(
        config,
        capsys,
        "export.zip:ner-demo_project_2024-05-01_1200/annotation/doc1.txt/alice.zip:alice.xmi: "
        "unpacks to 2.0 MiB, more than the limit of 1.0 MiB for one file",
    )
