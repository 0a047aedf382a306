"""Input notes at scale: a record of many parts prints its notes by kind, and input-notes.txt has every one."""

from __future__ import annotations

import re
from pathlib import Path

from refsens_report.config import load_config
from refsens_report.load import load_record

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
        parts.append(f'[[record.parts]]\nname = "p{number:03d}"\n'
                     f'labellings = {{ gold = "p{number:03d}.gold", model = "p{number:03d}.model" }}\n')  # fmt: skip
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "many parts"\nversion = "1.0"\n\n[record]\nformat = "conll"\nlanguage = "en"\n'
        'root = "data"\n\n[roles]\noutputs = ["model"]\nreferences = ["gold"]\n\n[audit]\nresamples = 20\n\n'
        + "\n".join(parts),
        encoding="utf-8",
    )
    return config


def test_notes_of_a_part_carry_the_kind_of_their_shape(tmp_path: Path) -> None:
    record = load_record(load_config(many_parts(tmp_path)))
    kinds = [note.kind for note in record.notes]
    assert len(kinds) == 3 * PARTS
    assert len(set(kinds[0::3])) == 1  # a part's sentences and tokens: one kind for every part
    model = [kind for kind in kinds if "labelling 'model'" in kind]
    assert len(set(model)) == 2 and sum("tokenisation differs" in kind for kind in model) == len(REALIGNED)
    assert "p007" in record.notes[3 * 7 + 2] and "tokenisation differs" in record.notes[3 * 7 + 2].kind
    assert not any(re.search(r"\d", kind.replace("IOB2", "")) for kind in kinds)  # no counts, no places

