"""Gold-error candidates on hand-made records where the answer is known: three strong systems outweigh ten weak
ones, each kind of proposal with its score checked against a set-by-set re-implementation of the weights, the
[report] error_evidence switch, [report] show_text = false, and the files, the section and the headline.
(The check against a real correction is bench/gold_errors_conll.py, reported in docs/gold-errors.md.)
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import orjson
import pytest
from helpers import audit_items, item, write_project

from refsens_report import browser
from refsens_report.analyses import gold_errors
from refsens_report.analyses.base import AuditContext
from refsens_report.config import load_config
from refsens_report.counts import ItemCounts
from refsens_report.load import load_record
from refsens_report.results import files_text
from refsens_report.subsets import DuplicateGroups, build_subsets
from refsens_report.tables import spreadsheet_safe
from refsens_report.view import ResultsView


def context_of(folder: Path, lines: list[dict], extra: str = "", **roles) -> AuditContext:
    """Return the audit's context (counts and item sets, no bootstrap) of a hand-made record."""
    config = load_config(write_project(folder, lines, audit={"resamples": 20}, extra=extra, **roles))
    record = load_record(config)
    counts = ItemCounts(record.table, config.roles.all_names)
    groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
    subsets = build_subsets(counts, groups, set(), config)
    return AuditContext(config, record, counts, groups, [], subsets)


def found_rows(context: AuditContext) -> list[dict]:
    return [row for found in gold_errors.candidates(context) for row in gold_errors.rows_of(context, found)]


PER = [0, 4, "PER"]
STRONG = ("s1", "s2", "s3")
WEAK = tuple(f"w{number}" for number in range(10))


def strong_and_weak() -> list[dict]:
    """30 items where the strong systems copy the gold and each weak one finds it on 3 items in 10 and adds a
    false span of its own elsewhere; then x, where only the ten weak have the gold's span, and y, where only
    the three strong have it."""
    lines = []
    for number in range(30):
        spans = {name: [PER] for name in STRONG}
        for rank, name in enumerate(WEAK):
            spans[name] = [PER] if (number + rank) % 10 < 3 else [[5 + rank, 6 + rank, "LOC"]]
        lines.append(item(f"f{number:02d}", "en", text="Anna ran far to the sea", gold=[PER], **spans))
    lines.append(
        item(
            "x",
            "en",
            text="Bert ran far",
            gold=[PER],
            **{name: [] for name in STRONG},
            **{name: [PER] for name in WEAK},
        )
    )
    lines.append(
        item(
            "y",
            "en",
            text="Cleo ran far",
            gold=[PER],
            **{name: [PER] for name in STRONG},
            **{name: [] for name in WEAK},
        )
    )
    return lines


def test_three_strong_systems_outweigh_ten_weak_ones(tmp_path: Path) -> None:
    context = context_of(tmp_path, strong_and_weak(), annotators=None, outputs=STRONG + WEAK, references=("gold",))
    rows = found_rows(context)
    assert [(row["id"], row["proposed"]) for row in rows] == [("x", "spurious")]
    assert rows[0]["support"] == list(STRONG) and rows[0]["opposed"] == list(WEAK)
    # a plain vote (every source weighing 1) gets it the other way round: the ten weak outvote the strong on
    # y (10 - 3) and on every filler item (7 weak lack the gold's span there), and x is no candidate
    mask = gold_errors.items_of(context)
    plain = gold_errors.candidates_of(context, "gold", mask, equal_weights=True)
    ids = [str(context.record.table.ids[found]) for found in plain.item]
    assert ids[0] == "y" and plain.score[0] == 7.0 and "x" not in ids and len(ids) == 31


TEXT = "Paris Hilton met Rome"


def kinds_record() -> list[dict]:
    """Ten items where the three outputs copy the gold, then one item per kind of proposal where all three
    agree with each other against it."""
    agree = [[0, 5, "LOC"], [17, 21, "LOC"]]
    lines = [item(f"a{number}", "en", text=TEXT, gold=agree, o1=agree, o2=agree, o3=agree) for number in range(10)]
    cases = {
        "t": ([[0, 5, "LOC"]], [[0, 5, "ORG"]]),  # another type
        "b": ([[0, 5, "PER"]], [[0, 12, "PER"]]),  # other boundaries
        "m": ([], [[17, 21, "LOC"]]),  # a missing span
        "s": ([[0, 5, "PER"]], []),  # a spurious span
    }
    for name, (gold, outputs) in cases.items():
        lines.append(item(name, "en", text=TEXT, gold=gold, o1=outputs, o2=outputs, o3=outputs))
    return lines


def weight_by_sets(lines: list[dict], reference: str, source: str, left_out: str) -> float:
    """Return the Methods' weight of a source, item by item over sets (every item but ``left_out``)."""
    tp = fp = spans = false = 0
    for line in lines:
        if line["id"] == left_out:
            continue
        spans_of = line["labellings"]
        ours = {tuple(span) for span in spans_of[reference]}
        pool = {tuple(span) for name in spans_of if name != reference for span in spans_of[name]} | ours
        theirs = {tuple(span) for span in spans_of[source]}
        tp, fp = tp + len(theirs & ours), fp + len(theirs - ours)
        spans, false = spans + len(ours), false + len(pool - ours)
    recall, false_rate = (tp + 1) / (spans + 2), (fp + 1) / (false + 2)
    return math.log(recall / (1 - recall)) - math.log(false_rate / (1 - false_rate))


def test_each_kind_of_proposal_with_its_score(tmp_path: Path) -> None:
    lines = kinds_record()
    context = context_of(tmp_path, lines, annotators=None, outputs=("o1", "o2", "o3"), references=("gold",))
    rows = {row["id"]: row for row in found_rows(context)}
    assert {name: (row["proposed"], row["reference_span"], row["proposed_span"]) for name, row in rows.items()} == {
        "t": ("type", [0, 5, "LOC"], [0, 5, "ORG"]),
        "b": ("boundaries", [0, 5, "PER"], [0, 12, "PER"]),
        "m": ("missing", None, [17, 21, "LOC"]),
        "s": ("spurious", [0, 5, "PER"], None),
    }
    for name, row in rows.items():
        # all three vote for the proposal, none for the reference: the score is their three weights
        assert row["support"] == ["o1", "o2", "o3"] and row["opposed"] == []
        expected = sum(weight_by_sets(lines, "gold", source, name) for source in ("o1", "o2", "o3"))
        assert row["score"] == round(expected, gold_errors.SCORE_DECIMALS)
        assert (row["start"], row["end"]) == tuple((row["reference_span"] or row["proposed_span"])[:2])
    ranked = sorted(rows.values(), key=lambda row: row["rank"])
    assert [row["rank"] for row in ranked] == [1, 2, 3, 4]
    assert [row["score"] for row in ranked] == sorted((row["score"] for row in ranked), reverse=True)
    # the self-describing rows: the reference's spans on the item, and with the proposal made
    assert rows["t"]["spans_reference"] == [[0, 5, "LOC"]] and rows["t"]["spans_proposed"] == [[0, 5, "ORG"]]
    assert rows["m"]["spans_reference"] == [] and rows["m"]["spans_proposed"] == [[17, 21, "LOC"]]
    assert rows["s"]["spans_proposed"] == [] and rows["t"]["text"] == TEXT and rows["t"]["type"] == "LOC"
    assert rows["m"]["type"] is None and rows["t"]["language"] == "en"


def test_an_extra_source_or_prior_enters_the_scores(tmp_path: Path) -> None:
    """``extra`` (the benchmark's comparisons): a source added to the votes is weighed like the outputs, and a
    prior's terms are added to the places' scores before the candidates are kept."""
    context = context_of(tmp_path, kinds_record(), annotators=None, outputs=("o1", "o2", "o3"), references=("gold",))
    mask = gold_errors.items_of(context)
    shipped = gold_errors.candidates_of(context, "gold", mask)
    ids = context.record.table.ids

    def backs_the_reference(counts, table, pool, one, two, votes, empty) -> None:
        votes += np.where(pool.ours, 1000.0, 0.0)  # one heavy source with exactly the reference's spans
        near = np.zeros(len(pool.ids), dtype=bool)
        near[one[pool.ours[two]]] = True
        empty += np.where(near, 0.0, 1000.0)

    backed = gold_errors.candidates_of(context, "gold", mask, extra=backs_the_reference)
    assert backed.n == 0 and shipped.n == 4

    def minus_one(counts, table, pool, one, two, votes, empty):
        return lambda spans, proposal, missing: (-np.ones(len(spans)), -np.ones(len(missing)))

    shifted = gold_errors.candidates_of(context, "gold", mask, extra=minus_one)
    assert [str(ids[found]) for found in shifted.item] == [str(ids[found]) for found in shipped.item]
    assert np.allclose(shifted.score, shipped.score - 1) and shipped.score.min() > 1


def test_error_evidence_switch(tmp_path: Path) -> None:
    """With the other references as evidence an alternative gold that agrees with this one (and everywhere
    else) outvotes the outputs; with the outputs only, the outputs' proposal is a candidate."""
    lines = kinds_record()
    for line in lines:
        line["labellings"]["alt"] = line["labellings"]["gold"]
    roles = {"annotators": None, "outputs": ("o1", "o2", "o3"), "references": ("gold", "alt")}
    both = context_of(tmp_path / "both", lines, **roles)
    assert gold_errors.sources_of(both, "gold") == ["o1", "o2", "o3", "alt"]
    assert found_rows(both) == []
    alone = context_of(tmp_path / "alone", lines, extra='\n[report]\nerror_evidence = "outputs"\n', **roles)
    assert gold_errors.sources_of(alone, "gold") == ["o1", "o2", "o3"]
    rows = found_rows(alone)
    assert sorted((row["reference"], row["id"]) for row in rows) == [
        (reference, name) for reference in ("alt", "gold") for name in "bmst"
    ]
    assert {row["evidence"] for row in rows} == {"outputs"}
    with pytest.raises(Exception, match="error_evidence"):
        load_config(write_project(tmp_path / "bad", lines, extra='\n[report]\nerror_evidence = "golds"\n', **roles))


def test_files_section_and_headline(tmp_path: Path) -> None:
    results = audit_items(
        tmp_path,
        kinds_record(),
        audit={"resamples": 20},
        annotators=None,
        outputs=("o1", "o2", "o3"),
        references=("gold",),
    )
    lines = [json.loads(line) for line in results.files["gold-error-candidates.jsonl"].splitlines()]
    assert [line["rank"] for line in lines] == [1, 2, 3, 4]
    assert list(lines[0]) == [
        "reference",
        "rank",
        "score",
        "id",
        "language",
        "proposed",
        "start",
        "end",
        "type",
        "reference_span",
        "proposed_span",
        "support",
        "opposed",
        "evidence",
        "text",
        "spans_reference",
        "spans_proposed",
        "spans_sources",
    ]
    table = list(csv.reader(io.StringIO(results.files["gold-error-candidates.csv"])))
    assert table[0] == list(gold_errors.CSV_COLUMNS)
    by_id = {row[3]: dict(zip(table[0], row)) for row in table[1:]}
    assert by_id["t"] | {"score": "", "rank": ""} == {
        "reference": "gold",
        "rank": "",
        "score": "",
        "id": "t",
        "language": "en",
        "proposed": "type",
        "start": "0",
        "end": "5",
        "type": "LOC",
        "proposed_start": "0",
        "proposed_end": "5",
        "proposed_type": "ORG",
        "support": "o1; o2; o3",
        "n_support": "3",
        "opposed": "",
        "n_opposed": "0",
        "evidence": "outputs+references",
        "text": TEXT,
    }
    assert [float(row[2]) for row in table[1:]] == [line["score"] for line in lines]
    summary = results.summaries["gold_errors"]
    [reference] = summary["references"]
    assert (reference["candidates"], reference["items_with_candidates"], reference["items"]) == (4, 4, 14)
    assert reference["kinds"] == {"type": 1, "boundaries": 1, "missing": 1, "spurious": 1}
    missing = next(entry for entry in reference["top"] if entry["proposed"] == "missing")
    assert missing["context"] == ["Paris Hilton met ", "Rome", ""]
    view = ResultsView.from_json(results.to_json_dict())
    assert gold_errors.headlines(view) == ["4 candidate errors in gold; the top 4 are listed."]
    section = gold_errors.ANALYSIS.section(view, {})
    counts, top = section.tables
    assert [cell.text for cell in counts.rows[0]] == ["gold", "3", "14", "4", "4", "1", "1", "1", "1"]
    assert top.columns[-1] == "Text"
    row = next(row for row in top.rows if row[4].text == "type")
    assert [cell.text for cell in row[2:5]] == ["LOC [0, 5) “Paris”", "ORG [0, 5) “Paris”", "type"]
    assert row[-1].text == TEXT and section.links[0][0] == "gold-error-candidates.html"


def test_show_text_false_leaves_no_text(tmp_path: Path) -> None:
    results = audit_items(
        tmp_path,
        kinds_record(),
        audit={"resamples": 20},
        annotators=None,
        outputs=("o1", "o2", "o3"),
        references=("gold",),
        extra="\n[report]\nshow_text = false\n",
    )
    written = results.files["gold-error-candidates.jsonl"] + results.files["gold-error-candidates.csv"]
    summary = json.dumps(results.summaries["gold_errors"])
    for secret in ("Paris", "Hilton", "Rome"):
        assert secret not in written and secret not in summary
    lines = [json.loads(line) for line in results.files["gold-error-candidates.jsonl"].splitlines()]
    assert len(lines) == 4 and all("text" not in line for line in lines)
    assert lines[0]["spans_reference"] is not None  # offsets and types stay
    view = ResultsView.from_json(results.to_json_dict())
    section = gold_errors.ANALYSIS.section(view, {})
    assert "show_text = false" in section.paragraphs[1] and "Text" not in section.tables[1].columns
    assert all("“" not in cell.text for row in section.tables[1].rows for cell in row)


def test_the_candidates_page_reads_the_file_no_further_than_it_shows(tmp_path: Path, monkeypatch) -> None:
    """The page's browser holds the first BROWSER_LINES candidates, its static list PAGE_CANDIDATES per
    reference: the file is left after them (the rest, here not JSON, is never read); the first rows carry each
    source's spans for the browser's sides, grouped when equal."""
    from refsens_report import browser
    from refsens_report.browser import SiteContext

    results = audit_items(
        tmp_path,
        kinds_record(),
        audit={"resamples": 20},
        annotators=None,
        outputs=("o1", "o2", "o3"),
        references=("gold",),
    )
    rows = results.files["gold-error-candidates.jsonl"].splitlines(keepends=True)
    assert all("spans_sources" in json.loads(row) for row in rows)
    folder = tmp_path / "version"
    folder.mkdir()
    (folder / "gold-error-candidates.jsonl").write_text("".join(rows[:2]) + "not JSON: never read\n", encoding="utf-8")
    monkeypatch.setattr(browser, "BROWSER_LINES", 2)
    monkeypatch.setattr(gold_errors, "PAGE_CANDIDATES", 1)
    document = {**results.to_json_dict(), "rows": results.rows}
    page, script = gold_errors.pages(ResultsView.from_json(document), SiteContext(folder, document, "2026-01-01"))
    [reference] = page.context.references
    assert (reference.candidates, reference.shown, reference.complete) == ("4", "1", False)
    data = json.loads(script.text.split("push(", 1)[1].rsplit(");", 1)[0])
    assert data["lines"] == 4 and [row[1] for row in data["rows"]] == [1, 2]
    first = json.loads(rows[0])
    sides = data["items"][0][2]
    assert [data["names"][side[0]] for side in sides[:2]] == ["gold", gold_errors.PROPOSAL]
    grouped = sorted(sorted(data["names"][index] for index in side[0]) for side in sides[2:])
    by_spans: dict[str, list[str]] = {}
    for source, spans in first["spans_sources"].items():
        by_spans.setdefault(json.dumps(spans), []).append(source)
    assert grouped == sorted(sorted(names) for names in by_spans.values())


def rows_written(context: AuditContext) -> dict[str, str]:
    """The files as ``rows_of`` describes them, written row by row: each row by orjson, the CSV by the csv
    module (what ``files`` wrote before it was built column by column; it must write the same bytes)."""
    found = list(gold_errors.candidates(context))
    held = np.clip(browser.BROWSER_LINES - (np.cumsum([f.n for f in found]) - [f.n for f in found]), 0, None)
    rows = [row for f, count in zip(found, held.tolist()) for row in gold_errors.rows_of(context, f, None, count)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(gold_errors.CSV_COLUMNS)
    for row in rows:
        proposed = row["proposed_span"] or ["", "", ""]
        writer.writerow(
            [
                spreadsheet_safe(row["reference"]),
                row["rank"],
                f"{row['score']:.{gold_errors.SCORE_DECIMALS}f}",
                spreadsheet_safe(row["id"]),
                spreadsheet_safe(row["language"]),
                row["proposed"],
                row["start"],
                row["end"],
                spreadsheet_safe(row["type"] or ""),
                *proposed[:2],
                spreadsheet_safe(proposed[2]),
                spreadsheet_safe("; ".join(row["support"])),
                len(row["support"]),
                spreadsheet_safe("; ".join(row["opposed"])),
                len(row["opposed"]),
                row["evidence"],
                spreadsheet_safe(row.get("text") or ""),
            ]
        )
    return {
        "gold-error-candidates.jsonl": "".join(orjson.dumps(row).decode("utf-8") + "\n" for row in rows),
        "gold-error-candidates.csv": buffer.getvalue(),
    }


AWKWARD = ["plain", "=sum(A1)", "-1", "a,b", 'say "hi"', "two\nlines", "cr\rhere", " lead", "é☃", "tab\tin", ""]
NAMES = ["plain", "=sum(A1)", "-1", "a,b", 'say "hi"', " lead", "é☃", "back\\slash", "@x"]


def awkward_record(seed: int, n_items: int = 60, n_outputs: int = 10) -> tuple[list[dict], tuple[str, ...]]:
    """Items whose ids, languages, types and texts hold what JSON escapes and CSV quotes (or a spreadsheet
    reads as a formula), some without text; two references and ``n_outputs`` noisy outputs."""
    rng = np.random.default_rng(seed)
    types = ["LOC", "=T", 'P"ER', "a,b", "é"]
    outputs = (*(f"o{number}" for number in range(n_outputs - 1)), '=o,"9')
    lines = []
    for number in range(n_items):
        truth = [[start, start + int(rng.integers(1, 6)), str(rng.choice(types))] for start in (0, 10, 20)]
        truth = [span for span in truth if rng.random() < 0.7]

        def noisy(rate: float) -> list[list]:
            spans = []
            for start, end, kind in truth:
                if rng.random() < rate:
                    choice = rng.integers(3)
                    if choice == 0:
                        spans.append([start, end, str(rng.choice(types))])
                    elif choice == 1:
                        spans.append([start, end + 1, kind])
                else:
                    spans.append([start, end, kind])
            if rng.random() < rate:
                spans.append([30, 33, str(rng.choice(types))])
            return spans

        text = None if number % 7 == 3 else f"{AWKWARD[number % len(AWKWARD)]} and some more words" * 3
        labellings = {"gold": noisy(0.1), "alt": noisy(0.1), **{name: noisy(0.3) for name in outputs}}
        identity = NAMES[number % len(NAMES)] + f"#{number}"
        lines.append(item(identity, NAMES[number % 5], text=text, **labellings))
    return lines, outputs


@pytest.mark.parametrize("extra", ["", "\n[report]\nshow_text = false\n", '\n[report]\nerror_evidence = "outputs"\n'])
def test_the_files_are_the_rows_written(tmp_path: Path, monkeypatch, extra: str) -> None:
    """The files, built column by column, hold the bytes of the rows written one by one, for awkward strings;
    with the browser holding only some rows (so only those carry the sources' spans) and all of them."""
    lines, outputs = awkward_record(1)
    context = context_of(tmp_path, lines, extra=extra, annotators=None, outputs=outputs, references=("gold", "alt"))
    assert sum(found.n for found in gold_errors.candidates(context)) > 20
    for lines_held in (7, browser.BROWSER_LINES):
        monkeypatch.setattr(browser, "BROWSER_LINES", lines_held)
        assert files_text(gold_errors.files(context)) == rows_written(context)
    # the CSV rows are gathered as the JSON Lines are read: asking for the CSV first is refused, not a short file
    with pytest.raises(RuntimeError, match="asked for before"):
        list(gold_errors.files(context))


def weight_per_item(counts, reference: str, source: str, mask: np.ndarray, pool) -> np.ndarray:
    """The leave-one-out weight as first written: the formula over every item, one source at a time."""
    present = mask & counts.has(source)
    tp = np.where(present, counts.tp("strict", source, reference), 0).astype(np.int64)
    fp = np.where(present, counts.size("strict", source), 0).astype(np.int64) - tp
    spans = np.where(present, counts.size("strict", reference), 0).astype(np.int64)
    false = np.zeros(counts.n_items, dtype=np.int64)
    false[: len(pool.lacking)] = pool.lacking
    false = np.where(present, false, 0)
    recall = (tp.sum() - tp + 1) / (spans.sum() - spans + 2)
    false_rate = (fp.sum() - fp + 1) / (false.sum() - false + 2)
    weight = np.log(recall / (1 - recall)) - np.log(false_rate / (1 - false_rate))
    return np.where(present, weight, 0.0)[pool.item]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_weighted_sums_are_the_same_floats(tmp_path: Path, seed: int) -> None:
    """The votes and empty weights per pool span (every source's weight looked up per pair of counts, added
    only where it counts, the empty sums once per run) are bit for bit those of adding each source's formula
    weight, or 0, to every span, a source at a time."""
    lines, outputs = awkward_record(seed, n_items=120)
    context = context_of(tmp_path, lines, annotators=None, outputs=outputs, references=("gold", "alt"))
    mask = gold_errors.items_of(context)
    for reference in ("gold", "alt"):
        sums = []

        def keep(counts, table, pool, one, two, votes, empty) -> None:
            sums.append((votes.copy(), empty.copy()))

        shipped = gold_errors.candidates_of(context, reference, mask, extra=keep)
        first = gold_errors.candidates_of(context, reference, mask, weigh=weight_per_item, extra=keep)
        (votes, empty), (votes_first, empty_first) = sums
        assert votes.tobytes() == votes_first.tobytes() and empty.tobytes() == empty_first.tobytes()
        assert shipped.score.tobytes() == first.score.tobytes() and np.array_equal(shipped.item, first.item)


def test_the_heaviest_per_group_is_the_sorts_first() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        group = np.sort(rng.integers(0, 30, 200))
        position = rng.permutation(200)
        weight = rng.integers(-3, 3, 200).astype(float) * 0.5  # ties, and -0.0 against 0.0
        weight[rng.random(200) < 0.1] = -0.0
        expected = gold_errors._first_per(group, position, -weight)
        assert np.array_equal(gold_errors._heaviest_per(group, position, weight), expected)


def test_the_summary_and_the_files_keep_no_candidates(tmp_path: Path, monkeypatch) -> None:
    """The summary keeps what it prints of each reference (its counts and top TOP, those of all its candidates
    computed at once), the files every candidate (the rows written); neither leaves candidates or places in the
    audit's notes, and each computes every reference's candidates once."""
    monkeypatch.setattr(gold_errors, "TOP", 3)
    lines, outputs = awkward_record(1)
    context = context_of(tmp_path, lines, annotators=None, outputs=outputs, references=("gold", "alt"))
    everything = list(gold_errors.candidates(context))
    assert len(everything) == 2 and all(found.n > 3 for found in everything)
    made = []
    candidates_of = gold_errors.candidates_of
    monkeypatch.setattr(gold_errors, "candidates_of", lambda *given: made.append(given[1]) or candidates_of(*given))
    summary = gold_errors.summary(context)
    assert made == ["gold", "alt"] and context.notes[gold_errors.KEY] == {}
    for entry, found in zip(summary["references"], everything, strict=True):
        assert (entry["reference"], entry["candidates"]) == (found.reference, found.n)
        assert entry["kinds"] == {kind: int((found.kind == code).sum()) for code, kind in enumerate(gold_errors.KINDS)}
        assert entry["items_with_candidates"] == len(set(found.item.tolist()))
        rows = gold_errors.rows_of(context, found, 3)
        assert [(top["rank"], top["id"], top["score"]) for top in entry["top"]] == [
            (row["rank"], row["id"], row["score"]) for row in rows
        ]
    expected = rows_written(context)
    made.clear()
    assert files_text(gold_errors.files(context)) == expected
    assert made == ["gold", "alt"] and context.notes[gold_errors.KEY] == {}


@pytest.mark.parametrize("lookup", [1 << 16, 0])
def test_the_log_odds_of_a_part_with_the_records_sums_are_the_records(monkeypatch, lookup: int) -> None:
    """``_odds`` on some items of a record, given the record's two sums (a partition's weights, found on its
    worker), gives each item the float it gets on the whole record, whether the pairs of counts are looked up
    (each part has its own largest counts, so its own table) or computed per item (LOOKUP 0); and the lookup
    gives the formula's floats."""
    rng = np.random.default_rng(3)
    tries = rng.integers(0, 40, 5000).astype(np.int32)
    hits = np.minimum(rng.integers(0, 40, 5000), tries).astype(np.int32)
    hits[:100], tries[:100] = 0, 0
    whole = gold_errors._odds(hits, gold_errors._Tries(tries))
    direct = gold_errors._log_odds(hits.astype(np.int64), tries.astype(np.int64), 1, 2)
    monkeypatch.setattr(gold_errors, "LOOKUP", lookup)
    assert whole.tobytes() == direct.tobytes()
    for part in (slice(0, 100), slice(50, 1234), slice(4000, 5000), rng.permutation(5000)[:777]):
        total_hits, total_tries = np.int64(hits.sum()), np.int64(tries.sum())
        found = gold_errors._odds(hits[part], gold_errors._Tries(tries[part], total_tries), total_hits)
        assert found.tobytes() == whole[part].tobytes()
