"""The PDF's layout, read back from the PDF (tests/pdf_layout.py): no glyph over another, none outside the
text column, cells' text apart. First the check itself on hand-made pages, then on five records: the demo,
the CoNLL example, a 16-system x 4-gold leaderboard, a 30-type record and a 50-output record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pdf_layout
import pytest
from conftest import build

from refsens_report import tables

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def side_margin_pt() -> float:
    """Return print.css's left and right page margins in pt (they are equal): the text column's edges."""
    page = re.search(r"@page \{.*?\n\s*margin: ([^;]+);", (ROOT / "templates" / "print.css").read_text(), re.S)
    top, right, bottom, left = (float(value.removesuffix("mm")) for value in page.group(1).split())
    assert right == left
    return right * 72 / 25.4


def typeset(html: str, path: Path) -> Path:
    import weasyprint

    weasyprint.HTML(string=html).write_pdf(path)
    return path


PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 20mm; }} body {{ font-family: "Noto Sans", sans-serif; font-size: 9pt; }}
table {{ table-layout: fixed; width: 60mm; border-collapse: collapse; }} td {{ padding: 0 {padding}; }}
</style></head><body><p>Kerned text stays one word: AVAWAY, Te., f., “quoted”.</p>
<table><colgroup><col style="width: {width}"><col></colgroup>
<tr><td>annotator_a</td><td>annotator_b</td></tr></table>{extra}</body></html>"""


def test_the_check_passes_a_clean_page(tmp_path: Path) -> None:
    report = pdf_layout.check(typeset(PAGE.format(width="30mm", padding="1.4mm", extra=""), tmp_path / "clean.pdf"))
    assert report.pages == 1 and report.glyphs > 60
    assert report.problems == []


def test_the_check_finds_cells_drawn_over_each_other(tmp_path: Path) -> None:
    # a column narrower than its word: WeasyPrint lets annotator_a run into annotator_b (the Table 3)
    report = pdf_layout.check(typeset(PAGE.format(width="8mm", padding="1.4mm", extra=""), tmp_path / "overlap.pdf"))
    assert [problem.kind for problem in report.problems] == ["overlap"]
    problem = report.problems[0]
    # the text read left to right: the two names' letters interleave where they are drawn over each other
    assert problem.page == 1 and problem.text.startswith("annota") and "overlap by" in problem.detail
    assert str(problem).startswith("page 1 at (")


def test_the_check_finds_cells_too_close_and_text_outside_the_page(tmp_path: Path) -> None:
    # no padding and a column exactly as wide as its word: the two cells' text nearly touch
    width = tables.print_width("annotator_a") * 9 * 25.4 / 72 + 0.45  # 1.3 pt: less than a word space
    extra = '<p style="margin-left: 150mm; white-space: nowrap">PASSPORT_NUMBER USERNAME</p>'
    pdf = typeset(PAGE.format(width=f"{width:.2f}mm", padding="0", extra=extra), tmp_path / "close.pdf")
    kinds = [problem.kind for problem in pdf_layout.check(pdf).problems]
    assert "too close" in kinds and "outside" in kinds
    # inside the page but past its 20 mm margin: found when the margin is given
    outside = [
        problem for problem in pdf_layout.check(pdf, margin=side_margin_pt()).problems if problem.kind == "outside"
    ]
    assert outside and outside[0].text in "PASSPORT_NUMBER USERNAME"


def test_a_combining_mark_is_part_of_its_base_glyph_not_a_collision(tmp_path: Path) -> None:
    # k̂ (k and U+0302 drawn over it), Devanagari vowel signs and Arabic marks: each mark is drawn over or
    # against its base by design; the check reads it as part of the glyph before it
    marks = "<p>k\u0302 = 3, x\u0303, e\u0301t\u00e9 नाम किताब हिंदी اسمُ كِتابٌ</p>"
    pdf = typeset(PAGE.format(width="30mm", padding="1.4mm", extra=marks), tmp_path / "marks.pdf")
    assert pdf_layout.check(pdf).problems == []
    assert pdf_layout._mark("\u0302") and pdf_layout._mark("\u093e") and pdf_layout._mark("\u064f")
    assert not pdf_layout._mark("k") and not pdf_layout._mark("k\u0302") and not pdf_layout._mark("")


def test_the_command_line_prints_each_problem_and_exits_1(tmp_path: Path, capsys) -> None:
    pdf = typeset(PAGE.format(width="8mm", padding="1.4mm", extra=""), tmp_path / "overlap.pdf")
    assert pdf_layout.main([str(pdf)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("page 1 at (") and "overlap" in lines[0]
    assert lines[-1] == "overlap.pdf: 1 pages, " + lines[-1].split(", ", 1)[1] and lines[-1].endswith("1 problems")
    assert pdf_layout.main([str(tmp_path / "missing.pdf")]) == 2


def test_a_table_too_wide_for_keyed_headers_is_split_by_its_columns_and_prints_apart(tmp_path: Path) -> None:
    """No record forces the last layout: 30 types' F1 with intervals are too wide even in compact type with
    keyed headers, so the table prints in parts, each repeating the label columns, through the real template
    and stylesheets."""
    from refsens_report.render import TEMPLATES_DIR, environment
    from refsens_report.tables import Cell, Table

    types = [f"ENTITY_TYPE_{index:02d}" for index in range(30)]
    rows = tuple(
        (
            Cell(text=language),
            Cell(text=output),
            *(
                Cell(
                    text=f"{80 + (index * 7 + row) % 19:.2f}",
                    interval=f"[{70 + index % 9:.2f}, {90 + row:.2f}]",
                    numeric=True,
                )
                for index in range(len(types))
            ),
        )
        for row, (language, output) in enumerate(
            (language, output)
            for language in ("de", "en", "pooled")
            for output in ("annotator_a", "system-00-finetuned")
        )
    )
    table = Table(
        key="types",
        title="F1 by type",
        caption="Each type's F1.",
        columns=("Language", "Output", *types),
        rows=rows,
        groups=(("", 2), ("Span type", len(types))),
        number=1,
    )
    layout = table.print_layout
    assert layout.css_class == "compact" and layout.key.startswith("Columns: (1) ENTITY_TYPE_00, (2) ENTITY_TYPE_01")
    assert len(layout.parts) >= 2
    kept = [column for part in layout.parts for column in part.table.columns[2:]]
    assert kept == [f"({number})" for number in range(1, 31)]  # every column once, in order
    for part in layout.parts:
        assert part.table.columns[:2] == ("Language", "Output") and len(part.widths) == len(part.table.columns)
        assert part.table.groups == (("", 2), ("Span type", len(part.table.columns) - 2))
    block = environment().get_template("macros.html").module.table_block(table, with_downloads=False)
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="stylesheet" href="appendix.css">'
        f'<link rel="stylesheet" href="print.css" media="print"></head><body><main>{block}</main></body></html>'
    )
    import weasyprint

    pdf = tmp_path / "split.pdf"
    weasyprint.HTML(string=html, base_url=str(TEMPLATES_DIR) + "/").write_pdf(pdf)
    report = pdf_layout.check(pdf, margin=side_margin_pt())
    assert report.glyphs > 30 * 6 * 15  # every cell printed: 180 estimates with their intervals
    assert report.problems == [], "\n".join(map(str, report.problems[:20]))
    import pdfplumber

    with pdfplumber.open(pdf) as document:
        text = "\n".join(page.extract_text() for page in document.pages)
    assert text.count("Language") == len(layout.parts) and "(30)" in text and "(1) ENTITY_TYPE_00" in text


# --- the five records -----------------------------------------------------------------------------------

# The layout depends on a record's names and shape (outputs, references, types, languages), not on its size, so
# the records are small. Their size is not what a test costs: the demo at 3,000 items and at 600 built in 34 and
# 31 s (its audit 2.7 and 0.8 s); the rest is drawing the figures, typesetting 30-50 pages and reading every
# glyph back (pdfplumber, 6-12 s a PDF). Fewer replicates would save a second or two of the audit: 200, as in
# every other test's build (conftest.build), so a rule against too few replicates in a build meets them all alike.
RESAMPLES = 200

CONFIG = """[dataset]
name = "layout check: {name}"
version = "1"
[record]
path = "record.jsonl"
[roles]
annotators = {annotators}
outputs = {outputs}
references = {references}
[audit]
resamples = {resamples}
"""


def write_record(
    folder: Path,
    name: str,
    outputs: int,
    references: int,
    types: int,
    annotators: bool,
    items: int = 120,
    seed: int = 0,
) -> Path:
    """Write a small random record and its config; return the config. Names are long, as real ones are."""
    rng = np.random.default_rng(seed)
    type_names = [f"ENTITY_TYPE_{index:02d}" for index in range(types)]
    gold_names = [f"gold_revision_{index}" for index in range(references)]
    output_names = [f"system-{index:02d}-finetuned" for index in range(outputs)]
    labellers = (["annotator_a", "annotator_b"] if annotators else []) + output_names
    folder.mkdir(parents=True)
    with open(folder / "record.jsonl", "w", encoding="utf-8") as handle:
        for index in range(items):
            starts = np.sort(rng.choice(40, size=int(rng.integers(1, 5)), replace=False)) * 10
            gold = [
                [int(start), int(start + 1 + rng.integers(1, 8)), type_names[int(rng.integers(types))]]
                for start in starts
            ]
            labellings = {}
            for position, labeller in enumerate([*gold_names, *labellers]):
                change = 0.03 * (1 + position % 7)
                spans = []
                for start, end, label in gold:
                    roll = rng.random()
                    if roll < change / 3:
                        continue
                    if roll < change:
                        label = type_names[int(rng.integers(types))]
                    spans.append([start, end, label])
                labellings[labeller] = spans
            language = ("en", "de")[index % 2]
            handle.write(
                json.dumps({"id": f"{language}-{index:04d}", "language": language, "labellings": labellings}) + "\n"
            )
    config = folder / "refsens.toml"
    config.write_text(
        CONFIG.format(
            name=name,
            annotators=json.dumps(labellers[:2] if annotators else []),
            outputs=json.dumps(labellers),
            references=json.dumps(gold_names),
            resamples=RESAMPLES,
        )
    )
    return config


def simulated(folder: Path) -> Path:
    """The demo as `make report` builds it, smaller: the simulator's record, 600 items, RESAMPLES."""
    from refsens_report.demo import write_simulation

    write_simulation(folder, items=600, seed=0)
    config = folder / "refsens.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r"(?m)^resamples = .*$", f"resamples = {RESAMPLES}", text), encoding="utf-8")
    return config


def conll(folder: Path) -> Path:
    if not (SHARED_DATA / "conll").is_dir():
        pytest.skip(f"the CoNLL example reads {SHARED_DATA / 'conll'}, which is absent")
    return ROOT / "examples" / "conll2003" / "refsens.toml"


RECORDS = {
    "demo": simulated,
    "conll": conll,
    "leaderboard-16x4": lambda folder: write_record(
        folder, "16 x 4", outputs=16, references=4, types=4, annotators=False
    ),
    "types-30": lambda folder: write_record(
        folder, "30 types", outputs=2, references=2, types=30, annotators=True, items=300
    ),
    "outputs-50": lambda folder: write_record(
        folder, "50 outputs", outputs=50, references=2, types=4, annotators=False
    ),
}


@pytest.mark.parametrize("record", RECORDS)
def test_no_glyph_collides_in_the_pdf(record: str, tmp_path: Path) -> None:
    config = RECORDS[record](tmp_path / "record")
    if record == "conll":
        text = config.read_text(encoding="utf-8").replace("../../../shared/data", str(SHARED_DATA))
        config = tmp_path / "refsens.toml"
        config.write_text(re.sub(r"(?m)^resamples = .*$", f"resamples = {RESAMPLES}", text), encoding="utf-8")
    built = build(config, tmp_path / "site")
    # the appendix and the brief (glob order put the brief first on some records: the appendix went unchecked)
    pdfs = sorted(built.folder.glob("*.pdf"))
    assert [pdf.name.endswith("-brief.pdf") for pdf in pdfs].count(False) == 1
    for pdf in pdfs:
        report = pdf_layout.check(pdf, margin=side_margin_pt())
        print(report.figures())  # the figures the closing note reports (pytest -s shows them)
        if not pdf.name.endswith("-brief.pdf"):
            assert report.glyphs > 10_000
        assert report.problems == [], "\n".join(map(str, report.problems[:20]))
