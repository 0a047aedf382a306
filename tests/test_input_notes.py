"""Input notes at scale: a record of many parts prints its notes by kind, and input-notes.txt has every one."""

from __future__ import annotations

import html as markup
import json
import re
from pathlib import Path

from conftest import build

from refsens_report import render
from refsens_report.config import load_config
from refsens_report.load import load_record
from refsens_report.record import NOTES_SHOWN

PARTS = 300
REALIGNED = (7, 150, 299)  # parts whose model file splits a token: their model note is of another kind


def many_parts(tmp_path: Path) -> Path:
    """Write a conll record of PARTS tiny parts (one sentence each, gold and model) and its config."""
    data = tmp_path / "data"
    data.mkdir()
    parts = []
    for number in range(PARTS):
        gold = f"New-York B-LOC\nvisit{number} O\n"
        label = "ORG" if number % 2 else "LOC"
        model = gold.replace("B-LOC", f"B-{label}")
        if number in REALIGNED:
            model = model.replace(f"New-York B-{label}\n", f"New B-{label}\n- I-{label}\nYork I-{label}\n")
        (data / f"p{number:03d}.gold").write_text(gold, encoding="utf-8")
        (data / f"p{number:03d}.model").write_text(model, encoding="utf-8")
        parts.append(
            f'[[record.parts]]\nname = "p{number:03d}"\n'
            f'labellings = {{ gold = "p{number:03d}.gold", model = "p{number:03d}.model" }}\n'
        )
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "many parts"\nversion = "1.0"\n\n[record]\nformat = "conll"\nlanguage = "en"\n'
        'root = "data"\n\n[roles]\noutputs = ["model"]\nreferences = ["gold"]\n\n[audit]\nresamples = 20\n\n'
        + "\n".join(parts),
        encoding="utf-8",
    )
    return config


def notes_section(html: str) -> str:
    """Return the appendix's Input notes block: from its heading to the next heading."""
    start = html.index("<h3>Input notes</h3>")
    return markup.unescape(html[start : html.index("<h3>", start + 1)])


def test_notes_of_a_part_carry_the_kind_of_their_shape(tmp_path: Path) -> None:
    record = load_record(load_config(many_parts(tmp_path)))
    kinds = [note.kind for note in record.notes]
    assert len(kinds) == 3 * PARTS
    assert len(set(kinds[0::3])) == 1  # a part's sentences and tokens: one kind for every part
    model = [kind for kind in kinds if "labelling 'model'" in kind]
    assert len(set(model)) == 2 and sum("tokenisation differs" in kind for kind in model) == len(REALIGNED)
    assert "p007" in record.notes[3 * 7 + 2] and "tokenisation differs" in record.notes[3 * 7 + 2].kind
    assert not any(re.search(r"\d", kind.replace("IOB2", "")) for kind in kinds)  # no counts, no places


def test_many_parts_print_a_short_summary_and_keep_every_note_in_a_file(tmp_path: Path) -> None:
    config = many_parts(tmp_path)
    built = build(config, tmp_path / "site", with_pdf=False)
    again = build(config, tmp_path / "again", with_pdf=False)
    results = json.loads((built.folder / "results.json").read_text(encoding="utf-8"))
    notes = results["record"]["notes"]
    assert len(notes) == 3 * PARTS
    assert sorted(place for places in results["record"]["note_kinds"].values() for place in places) == list(
        range(3 * PARTS)
    )

    # the file has every note, one a line, in the record's order
    listed = (built.folder / render.NOTES_NAME).read_text(encoding="utf-8").splitlines()
    assert listed == notes
    assert sum("part 'p" in line for line in listed) == 3 * PARTS

    # the page: one heading per kind with its count, at most NOTES_SHOWN notes under it, and the file linked
    html = (built.folder / "index.html").read_text(encoding="utf-8")
    section = notes_section(html)
    lines = [line for line in section.splitlines() if line.strip()]
    assert len(lines) < 80, len(lines)  # was 3 lines per part (a note each for the part, gold and model)
    items = re.findall(r"<li>([^<\n]*)", section)
    headings = [item for item in items if re.match(r"[\d,]+ notes: ", item)]
    assert [heading.split(":")[0] for heading in headings] == ["300 notes", "300 notes", "297 notes", "3 notes"]
    assert all("(the first 5 shown)" in heading for heading in headings[:3]) and "shown" not in headings[3]
    assert len(items) == len(headings) + 3 * NOTES_SHOWN + len(REALIGNED)
    assert "conll: part 'p000' (en): 1 sentence (2 tokens) from p000.gold" in section
    assert "p005" not in section and "p299" in section  # the first five of each kind, and every realigned one
    assert f'<a href="{render.NOTES_NAME}">{render.NOTES_NAME}</a>' in section
    assert f"All {3 * PARTS:,} notes" in section

    # listed among the downloads with its hash, in the manifest, and the same bytes from a second build
    manifest = json.loads((built.folder / "manifest.json").read_text(encoding="utf-8"))
    digest = manifest["files"][render.NOTES_NAME]
    assert re.search(
        rf'href="{re.escape(render.NOTES_NAME)}">[^<]*</a></th><td>[^<]*</td><td class="hash">{digest}', html
    )
    for path in sorted(built.folder.rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (again.folder / path.relative_to(built.folder)).read_bytes(), path


def test_validate_prints_the_notes_of_many_parts_by_kind(tmp_path: Path, capsys) -> None:
    """The terminal gets the same summary as the page: each kind once with its count and first notes."""
    from refsens_report.cli import main

    assert main(["validate", str(many_parts(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 40, lines  # was one line per note: 901
    headings = [line for line in lines if re.match(r"note: [\d,]+ notes: ", line)]
    assert [line.split(" notes: ")[0] for line in headings] == ["note: 300", "note: 300", "note: 297", "note: 3"]
    assert all(line.endswith("(the first 5 shown):") for line in headings[:3]) and headings[3].endswith(":")
    assert sum(line.startswith("note:   ") for line in lines) == 5 + 5 + 5 + 3
