"""The doccano adapter on small exports written here from doccano's documented JSONL shapes.

doccano's sequence-labelling export: a zip with one ``<user>.jsonl`` per annotator, lines
``{"id": 1, "text": "...", "label": [[0, 2, "ORG"]], "Comments": []}``; the export with relations writes
``"entities": [{"id": 7, "label": "ORG", "start_offset": 0, "end_offset": 2}]``; early versions wrote one
file of ``{"doc_id": ..., "text": ..., "entities": [[0, 20, "PER"]], "username": "admin"}`` lines.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from helpers import validate
from refused import refused

from refsens_report.adapters import archive
from refsens_report.config import load_config
from refsens_report.load import load_record

T1 = "EU rejects German call to boycott British lamb."
T2 = "Peter Blackburn"
T3 = "President Obama spoke."


def lines(*objects: dict) -> bytes:
    return ("\n".join(json.dumps(obj, ensure_ascii=False) for obj in objects) + "\n").encode("utf-8")


ALICE = lines(
    {"id": 1, "text": T1, "label": [[0, 2, "ORG"], [11, 17, "MISC"], [34, 41, "MISC"]], "Comments": []},
    {"id": 2, "text": T2, "label": [[0, 15, "PER"]], "Comments": []},
    {"id": 3, "text": T3, "label": [[10, 15, "PER"]], "Comments": []},
)
BOB = lines(
    {"id": 1, "text": T1, "label": [[0, 2, "ORG"], [11, 17, "MISC"]], "Comments": []},
    {"id": 2, "text": T2, "label": [[0, 15, "PER"]], "Comments": []},
    {"id": 3, "text": T3, "label": [], "Comments": []},
)
ENTITIES = lines(
    {
        "id": 1,
        "text": T1,
        "entities": [
            {"id": 5, "label": "ORG", "start_offset": 0, "end_offset": 2},
            {"id": 6, "label": "MISC", "start_offset": 34, "end_offset": 41},
        ],
        "relations": [],
        "Comments": [],
    },
    {
        "id": 2,
        "text": T2,
        "entities": [{"id": 7, "label": "PER", "start_offset": 0, "end_offset": 15}],
        "relations": [],
    },
)


def write_zip(path: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)


def write_config(tmp_path: Path, record: str, roles: str = "") -> Path:
    path = tmp_path / "refsens.toml"
    path.write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "doccano"\nlanguage = "en"\n{record}\n'
        + (roles or '[roles]\nannotators = ["alice", "bob"]\noutputs = ["bob"]\nreferences = ["alice"]\n'),
        encoding="utf-8",
    )
    return path


def zip_case(tmp_path: Path, files: dict[str, bytes] | None = None, record: str = "") -> Path:
    write_zip(tmp_path / "export.zip", {"alice.jsonl": ALICE, "bob.jsonl": BOB} if files is None else files)
    return write_config(tmp_path, f'path = "export.zip"\n{record}')


def test_a_zip_of_one_file_per_user_gives_one_labelling_each(tmp_path, capsys):
    record = load_record(load_config(zip_case(tmp_path, {"alice.jsonl": ALICE, "bob.jsonl": BOB, "README.txt": b"x"})))
    assert [item.id for item in record.items] == ["1", "2", "3"]
    first, _, third = record.items
    assert first.text == T1
    assert first.labellings == {
        "alice": ((0, 2, "ORG"), (11, 17, "MISC"), (34, 41, "MISC")),
        "bob": ((0, 2, "ORG"), (11, 17, "MISC")),
    }
    assert third.labellings["bob"] == ()  # an example with no spans: present and empty by default
    notes = "\n".join(record.notes)
    assert "3 examples from 2 files; labellings by file: alice, bob; spans from 'label' (6 lines)" in notes
    assert "labelling 'bob' has 1 example with no spans, read as present and empty" in notes
    assert "1 file that are not .jsonl skipped: 'README.txt'" in notes
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0, output


def test_empty_absent_reads_an_example_without_spans_as_not_annotated(tmp_path):
    record = load_record(load_config(zip_case(tmp_path, record='empty = "absent"')))
    assert "bob" not in record.items[2].labellings
    assert "labelling 'bob' is absent from 1 example" in "\n".join(record.notes)


def test_a_folder_and_named_files_with_the_entities_shape(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "alice.jsonl").write_bytes(ALICE)
    (folder / "carol.jsonl").write_bytes(ENTITIES)
    record = load_record(load_config(write_config(tmp_path, 'path = "export"\nnames = { carol = "bob" }')))
    assert record.items[0].labellings["bob"] == ((0, 2, "ORG"), (34, 41, "MISC"))
    assert "bob" not in record.items[2].labellings  # carol's file has no line for example 3: absent
    named = load_record(
        load_config(
            write_config(tmp_path, '[record.labellings]\nalice = "export/alice.jsonl"\nbob = "export/carol.jsonl"\n')
        )
    )
    assert [item.labellings for item in named.items] == [item.labellings for item in record.items]


def test_one_file_with_a_user_field(tmp_path):
    (tmp_path / "all.jsonl").write_bytes(
        lines(
            {"doc_id": 23, "text": T2, "entities": [[0, 15, "PER"]], "username": "alice"},
            {"doc_id": 23, "text": T2, "entities": [[6, 15, "PER"]], "username": "bob"},
            {"doc_id": 24, "text": T3, "entities": [[10, 15, "PER"]], "username": "alice"},
        )
    )
    record = load_record(
        load_config(write_config(tmp_path, 'path = "all.jsonl"\nuser_field = "username"\nid_field = "doc_id"'))
    )
    assert [item.id for item in record.items] == ["23", "24"]
    assert record.items[0].labellings == {"alice": ((0, 15, "PER"),), "bob": ((6, 15, "PER"),)}
    assert record.items[1].labellings == {"alice": ((10, 15, "PER"),)}


def with_line(name: str, obj: dict | str) -> dict[str, bytes]:
    """Return the export with one more line in ``name`` (a str is written as it is)."""
    extra = obj.encode() + b"\n" if isinstance(obj, str) else lines(obj)
    files = {"alice.jsonl": ALICE, "bob.jsonl": BOB}
    files[name] = files[name] + extra
    return files


@pytest.mark.parametrize(
    "files, record, expected",
    [
        (
            with_line("bob.jsonl", '{"id": 4, "text": "x", "label": [[0, 1, "PER"]'),
            "",
            ["export.zip:bob.jsonl:4: invalid JSON"],
        ),
        (
            with_line("bob.jsonl", {"text": "x", "label": []}),
            "",
            ["export.zip:bob.jsonl:4: 'id' (record.id_field) is missing"],
        ),
        (
            with_line("alice.jsonl", {"id": 4, "text": "Bob", "label": [[0, 9, "PER"]]}),
            "",
            ["export.zip:alice.jsonl:4: span 1 of 'label': ends at 9, beyond the text (3 characters)"],
        ),
        (
            with_line("alice.jsonl", {"id": 4, "text": "Bob", "annotations": [], "labels": [[0, 3, 2]]}),
            "",
            ["export.zip:alice.jsonl:4: span 1 of 'labels': the label is the id 2, not a name"],
        ),
        (
            with_line("alice.jsonl", {"id": 4, "text": "Bob", "label": ["positive"]}),
            "",
            ["export.zip:alice.jsonl:4: 'label' holds category names [\"positive\"], not spans"],
        ),
        (
            with_line("bob.jsonl", {"id": 2, "text": "Peter Blackburn.", "label": []}),
            "",
            ["export.zip:bob.jsonl:4: example 2 has another text than at export.zip:alice.jsonl:2"],
        ),
        (
            with_line("bob.jsonl", {"id": 3, "text": T3, "label": []}),
            "",
            ["export.zip:bob.jsonl:4: example 3 is labelled by 'bob' again (first at export.zip:bob.jsonl:3)"],
        ),
        (None, 'labels = ["PER", "ORG"]', ["export.zip:alice.jsonl:1: span 2 of 'label': unknown label 'MISC'"]),
        (
            with_line("alice.jsonl", {"id": 4, "text": "Bob", "spans": []}),
            "",
            ["export.zip:alice.jsonl:4: no spans: the line has none of the fields label, labels, entities"],
        ),
        (
            with_line("alice.jsonl", {"id": 4, "text": "Bob", "label": [[2, 1, "PER"], [0, 3]]}),
            "",
            ["span 1 of 'label': needs 0 <= start < end", "span 2 of 'label' is neither [start, end, \"TYPE\"]"],
        ),
        ({"notes.txt": b"x"}, "", ["export.zip: no .jsonl files (a doccano export holds one per user)"]),
    ],
)
def test_malformed_exports_are_refused_at_their_line(tmp_path, capsys, files, record, expected):
    refused(zip_case(tmp_path, files, record), capsys, *expected)


def test_every_problem_in_one_run_and_config_problems_together(tmp_path, capsys):
    files = with_line("alice.jsonl", "not json")
    files["bob.jsonl"] = files["bob.jsonl"] + lines({"id": 9, "text": "Bob", "label": [[0, 5, "PER"]]})
    err = refused(zip_case(tmp_path, files), capsys, "alice.jsonl:4: invalid JSON", "bob.jsonl:4: span 1 of 'label'")
    assert len(err.strip().splitlines()) == 2
    both = write_config(tmp_path, 'path = "export.zip"\nempty = "maybe"\n[record.labellings]\nx = "missing.jsonl"')
    refused(
        both,
        capsys,
        "Config value 'record.path': give either path",
        "Config value 'record.empty': must be one of",
        "Config value 'record.labellings.x.path': file not found: missing.jsonl",
    )


def test_a_fifo_in_the_export_folder_and_an_unknown_key_are_named(tmp_path, capsys):
    import os

    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "alice.jsonl").write_bytes(ALICE)
    os.mkfifo(folder / "bob.jsonl")  # opening it would block until a writer came
    refused(
        write_config(tmp_path, 'path = "export"'),
        capsys,
        "export/bob.jsonl: is a FIFO (named pipe), not a regular file",
    )
    refused(
        write_config(tmp_path, 'path = "export"\nuser_feild = "user"'),
        capsys,
        "Config value 'record.user_feild': unknown key",
    )


# ----------------------------------------------------------------------------------------------------------
# archive members too large to read whole (zip bombs): refused by name before they are read

MIB = 2**20


def deflated_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def test_a_member_over_the_limit_is_refused_by_name(tmp_path, capsys):
    deflated_zip(tmp_path / "export.zip", {"alice.jsonl": ALICE + b"\n" * (2 * MIB), "bob.jsonl": BOB})
    refused(
        write_config(tmp_path, 'path = "export.zip"\nmax_member_mib = 1'),
        capsys,
        "export.zip:alice.jsonl: unpacks to 2.0 MiB, more than the limit of 1.0 MiB for one file; "
        "raise [record] max_member_mib to read it",
    )


def test_a_file_over_the_limit_in_an_export_folder_is_refused_by_name(tmp_path, capsys):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "alice.jsonl").write_bytes(ALICE + b"\n" * (2 * MIB))
    (tmp_path / "export" / "bob.jsonl").write_bytes(BOB)
    refused(
        write_config(tmp_path, 'path = "export"\nmax_member_mib = 1'),
        capsys,
        "export/alice.jsonl: unpacks to 2.0 MiB, more than the limit of 1.0 MiB",
    )


def test_a_large_member_packed_more_than_a_hundred_times_is_refused_as_a_zip_bomb(tmp_path, capsys):
    deflated_zip(tmp_path / "export.zip", {"alice.jsonl": ALICE + b"\n" * (9 * MIB), "bob.jsonl": BOB})
    refused(
        write_config(tmp_path, 'path = "export.zip"'),
        capsys,
        "export.zip:alice.jsonl: unpacks to 9.0 MiB from ",
        "refused as a likely zip bomb",
    )


def lying_sizes(path: Path, member: str, claimed: int) -> None:
    """Rewrite the uncompressed size a zip's local and central headers give ``member`` (a zip-bomb trick)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = data.find(signature)
        while start >= 0:
            name_offset = start + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_offset : name_offset + len(name)] == name:
                data[start + offset : start + offset + 4] = claimed.to_bytes(4, "little")
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))


def test_a_member_whose_header_understates_its_size_is_refused_by_name(tmp_path, capsys):
    deflated_zip(tmp_path / "export.zip", {"alice.jsonl": ALICE + b"\n" * (2 * MIB), "bob.jsonl": BOB})
    lying_sizes(tmp_path / "export.zip", "alice.jsonl", 100)
    refused(
        write_config(tmp_path, 'path = "export.zip"\nmax_member_mib = 1'),
        capsys,
        "export.zip:alice.jsonl: cannot read the archive member",
    )


def test_the_read_itself_stops_past_the_limit_whatever_the_header_says(tmp_path, capsys, monkeypatch):
    # a header the checks before reading believe: only the bounded read is left to stop the member
    monkeypatch.setattr(archive, "member_problem", lambda info, limit: None)
    deflated_zip(tmp_path / "export.zip", {"alice.jsonl": ALICE + b"\n" * (2 * MIB), "bob.jsonl": BOB})
    refused(
        write_config(tmp_path, 'path = "export.zip"\nmax_member_mib = 1'),
        capsys,
        "export.zip:alice.jsonl: unpacks to more than the limit of 1.0 MiB for one file",
    )


def test_the_member_limit_must_be_a_positive_integer(tmp_path, capsys):
    zip_case(tmp_path)
    refused(
        write_config(tmp_path, 'path = "export.zip"\nmax_member_mib = 0'),
        capsys,
        "Config value 'record.max_member_mib': must be a positive integer, got 0",
    )


def test_skipped_file_names_are_quoted_escaped_on_the_terminal_and_in_the_report(tmp_path, capsys):
    """A member name is the export's, not a checked name: an escape sequence in it could clear the terminal or
    fake an "ok" line, and a right-to-left override would reorder the published notes."""
    from refsens_report.cli import main

    clear = "\x1b[2J\x1b[H/work/refsens.toml: ok (9 items).txt"
    override = "notes\u202etxt.exe"
    config = zip_case(tmp_path, {"alice.jsonl": ALICE, "bob.jsonl": BOB, clear: b"x", override: b"x"})
    code, output = validate(config, capsys)
    assert code == 0, output
    assert "\x1b" not in output and "\u202e" not in output
    assert "2 files that are not .jsonl skipped: '\\x1b[2J\\x1b[H/work/refsens.toml: ok (9 items).txt', " in output
    assert "'notes\\u202etxt.exe'" in output
    assert (
        main(["build", str(config), "--out", str(tmp_path / "site"), "--no-pdf", "--resamples", "20", "--draft", "-q"])
        == 0
    )
    published = [
        path.read_text(encoding="utf-8") for path in (tmp_path / "site").rglob("*") if path.suffix in (".html", ".json")
    ]
    assert not any("\u202e" in text or "\x1b" in text for text in published)
    assert "notes\\u202etxt.exe" in (tmp_path / "site" / "1" / "index.html").read_text(encoding="utf-8")
