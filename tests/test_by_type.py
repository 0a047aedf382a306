"""Per-type results (analysis by_type) from the audit: against seqeval's per-type report on a CoNLL record, the
per-type counts summing back to the pooled ones, the pairing with the swap's draws, and a thousand types.

The report side (the table of the types that move most, its sentences and its CSV) is tested from hand-made
results in test_analyses.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, item, pick, select
from seqeval.metrics import classification_report
from test_against_references import TYPES, perturb, random_tags

from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.counts import Column, ItemCounts
from refsens_report.record import Item

WORDS = ("Peter", "Paris", "the", "EU", "said", "on", "Monday", "Blackburn", "rejects", "call", ".")


def conll_project(folder: Path, sentences: list[dict[str, list[str]]], tokens: list[list[str]]) -> Path:
    """Write one `token tag` file per labelling and a conll config (gold and clean references, sys1 and sys2)."""
    for name in ("gold", "clean", "sys1", "sys2"):
        blocks = [
            "\n".join(f"{token} {tag}" for token, tag in zip(words, sentence[name]))
            for words, sentence in zip(tokens, sentences)
        ]
        (folder / f"{name}.txt").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    labellings = "".join(
        f'\n[record.labellings.{name}]\npath = "{name}.txt"\ncolumn = 2\n' for name in ("gold", "clean", "sys1", "sys2")
    )
    config = folder / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "per-type"\nversion = "1"\n\n[record]\nformat = "conll"\nlanguage = "en"\n'
        f'scheme = "iob2"\n{labellings}\n[roles]\nannotators = []\noutputs = ["sys1", "sys2"]\n'
        'references = ["gold", "clean"]\n\n[audit]\nrules = ["strict", "relaxed", "overlap"]\nresamples = 50\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize("seed", [0, 1])
def test_per_type_f1_matches_seqeval_classification_report(tmp_path, seed):
    """Each output's per-type F1 against each reference is seqeval's per-type f1-score (strict, IOB2)."""
    rng = np.random.default_rng(seed)
    sentences, tokens = [], []
    for _ in range(80):
        length = int(rng.integers(1, 12))
        gold = random_tags(rng, length)
        sentences.append(
            {"gold": gold, "clean": perturb(rng, gold), "sys1": perturb(rng, gold), "sys2": perturb(rng, gold)}
        )
        tokens.append([WORDS[int(k)] for k in rng.integers(len(WORDS), size=length)])
    rows = run_audit(load_config(conll_project(tmp_path, sentences, tokens))).rows
    compared = 0
    for output in ("sys1", "sys2"):
        for reference in ("gold", "clean"):
            y_true = [sentence[reference] for sentence in sentences]
            y_pred = [sentence[output] for sentence in sentences]
            report = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
            for name in TYPES:
                row = pick(
                    rows,
                    analysis="by_type",
                    statistic="score",
                    rule="strict",
                    language="pooled",
                    output=output,
                    reference=reference,
                    type=name,
                )
                if name not in report:  # in neither labelling: F1 undefined
                    assert row["estimate"] is None
                    continue
                assert row["estimate"] == pytest.approx(100 * report[name]["f1-score"], abs=1e-9), (
                    output,
                    reference,
                    name,
                )
                compared += 1
        # the per-type delta is the paired difference of the two per-type scores
        for name in TYPES:
            delta = pick(
                rows,
                analysis="by_type",
                statistic="delta",
                rule="strict",
                language="pooled",
                output=output,
                reference="gold",
                reference_2="clean",
                type=name,
            )
            first, second = (
                pick(
                    rows,
                    analysis="by_type",
                    statistic="score",
                    rule="strict",
                    language="pooled",
                    output=output,
                    reference=reference,
                    type=name,
                )["estimate"]
                for reference in ("gold", "clean")
            )
            if first is not None and second is not None:
                assert delta["estimate"] == pytest.approx(first - second, abs=1e-12)
    assert compared >= 2 * 2 * 2
    # relaxed keeps no types: no per-type rows under it; overlap has them
    assert not select(rows, analysis="by_type", rule="relaxed")
    assert select(rows, analysis="by_type", rule="overlap")


def random_items(seed: int, count: int, types: tuple[str, ...] = TYPES) -> list[Item]:
    """Items with random, overlapping and repeated spans of several types in four labellings."""
    rng = np.random.default_rng(seed)
    items = []
    for index in range(count):
        labellings = {}
        for name in (A, B, D, R):
            spans = []
            for _ in range(int(rng.integers(0, 6))):
                start = int(rng.integers(0, 30))
                spans.append((start, start + int(rng.integers(1, 8)), types[int(rng.integers(len(types)))]))
            labellings[name] = tuple(spans + spans[:1])  # a repeated span counts once
        items.append(Item(id=f"i{index}", language="en", labellings=labellings))
    return items


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_type_counts_sum_back_to_the_pooled_counts(seed):
    """Per item, the per-type TP and sizes (so FP = |O| - TP and FN = |R| - TP) sum over the types to the pooled
    ones, under strict and overlap; the matrix the bootstrap reads holds the same counts."""
    counts = ItemCounts(random_items(seed, 200), (A, B, D, R))
    for rule in ("strict", "overlap"):
        for first, second in ((A, D), (B, R), (D, R)):
            items, _, numbers = counts.typed("tp", rule, first, second)
            summed = np.bincount(items, weights=numbers, minlength=counts.n_items)
            assert np.array_equal(summed, counts.tp(rule, first, second))
            # per type, through the typed columns the statistics read
            by_type = sum(counts.values(Column("tp", rule, first, second, type=name)) for name in counts.type_names)
            assert np.array_equal(by_type, counts.tp(rule, first, second))
    for name in (A, B, D, R):
        items, _, numbers = counts.typed("size", "strict", name)
        assert np.array_equal(
            np.bincount(items, weights=numbers, minlength=counts.n_items), counts.size("strict", name)
        )
    families = [Column("tp", "overlap", A, D), Column("size", "strict", A), Column("size", "strict", D)]
    listed, values = counts.typed_matrix(families, np.arange(len(counts.type_names)))
    for number, family in enumerate(families):
        dense = np.zeros(counts.n_items)
        dense[listed] = values[:, number * len(counts.type_names) : (number + 1) * len(counts.type_names)].sum(axis=1)
        assert np.array_equal(dense, counts.values(family))


@pytest.mark.parametrize("block_bytes", [1 << 22, 7])
def test_the_dense_per_type_matrix_equals_the_triples_for_some_of_the_types(block_bytes, monkeypatch):
    """The per-type matrix, counted a block of items at a time (blocks of one item at 7 bytes), for two of the
    types out of their order: each family's columns hold its (item, type, count) triples, and only the items
    with a count are listed."""
    from refsens_report import counts as counts_module

    monkeypatch.setattr(counts_module, "ROW_BLOCK_BYTES", block_bytes)
    counts = ItemCounts(random_items(3, 150), (A, B, D, R))
    codes = np.array([2, 0])
    families = [Column("tp", "strict", A, D), Column("size", "strict", A), Column("tp", "strict", B, D)]
    families += [Column("size", "strict", D), Column("tp", "strict", A, R)]
    listed, values = counts.typed_matrix(families, codes)
    expected = np.zeros((counts.n_items, len(families) * len(codes)), dtype=np.int64)
    for number, family in enumerate(families):
        items, types, numbers = counts.typed(family.kind, family.rule, family.a, family.b)
        for k, code in enumerate(codes):
            chosen = types == code
            expected[items[chosen], number * len(codes) + k] = numbers[chosen]
    assert listed.tolist() == np.flatnonzero(expected.any(axis=1)).tolist()
    assert values.dtype == np.uint8 and np.array_equal(values, expected[listed])
    assert (values > 1).any()  # some cell counts two spans of one type


def test_overlap_per_type_is_a_maximum_matching_within_the_type():
    """A LOC prediction covering two LOC gold spans earns one TP of LOC; an ORG span overlapping it earns none."""
    record = [
        Item(
            id="x",
            language="en",
            labellings={
                A: ((0, 10, "LOC"), (12, 14, "ORG")),
                D: ((0, 3, "LOC"), (5, 8, "LOC"), (2, 13, "ORG"), (20, 22, "PER")),
            },
        )
    ]
    counts = ItemCounts(record, (A, D))
    per_type = {
        str(counts.type_names[code]): int(number) for _, code, number in zip(*counts.typed("tp", "overlap", A, D))
    }
    assert per_type == {"LOC": 1, "ORG": 1}
    assert counts.tp("overlap", A, D).tolist() == [2]


def line(index: int, rng: np.random.Generator, types: tuple[str, ...]) -> dict:
    def spans():
        return [
            [start, start + 3, types[int(rng.integers(len(types)))]] for start in range(0, 30, 5) if rng.random() < 0.5
        ]

    language = "en" if index % 3 else "de"
    return item(f"{language}-{index}", language, **{A: spans(), B: spans(), D: spans(), R: spans()})


def test_with_one_type_the_per_type_rows_are_the_swap_rows_on_the_same_draws(tmp_path):
    """One type: every per-type row equals its swap row, interval and p included: the same draws. With B above
    the per-type replicates, the per-type rows are read from the first 2,000 replicates of those draws."""
    rng = np.random.default_rng(0)
    lines = [line(index, rng, ("PER",)) for index in range(60)]

    def keyed(rows, analysis):
        return {
            tuple(row[c] for c in ("statistic", "rule", "language", "output", "reference", "reference_2")): row
            for row in rows
            if row["analysis"] == analysis
        }

    audit = {"resamples": 2000, "rules": ["strict", "overlap"]}
    at_2000 = audit_items(tmp_path / "a", lines, audit=audit).rows
    at_2250 = audit_items(tmp_path / "b", lines, audit={**audit, "resamples": 2250}).rows
    swap, per_type, per_type_more = keyed(at_2000, "swap"), keyed(at_2000, "by_type"), keyed(at_2250, "by_type")
    assert len(per_type) == len(swap) == 2 * 3 * 2 * (2 + 1)  # rules x languages x outputs x (scores + delta)
    for key, row in per_type.items():
        assert row["type"] == "PER"
        for column in ("estimate", "ci_low", "ci_high", "p_value", "n_items"):
            assert row[column] == swap[key][column] == per_type_more[key][column], (key, column)


def test_the_spans_of_each_type_under_each_reference_are_counted_per_language_and_pooled(tmp_path):
    """results.json's by_type entry counts each reference's spans of each type on the audited items: what the
    report's [report] min_type_spans is checked against."""
    from collections import Counter

    rng = np.random.default_rng(2)
    lines = [line(index, rng, ("PER", "LOC", "ORG")) for index in range(60)]
    spans = audit_items(tmp_path, lines, audit={"resamples": 50, "rules": ["strict"]}).summaries["by_type"]["spans"]
    for reference in (D, R):
        counted = {
            language: Counter(
                span[2]
                for entry in lines
                for span in entry["labellings"][reference]
                if language in ("pooled", entry["language"])
            )
            for language in ("de", "en", "pooled")
        }
        assert spans[reference] == {
            language: {name: counted[language][name] for name in ("LOC", "ORG", "PER")}
            for language in ("de", "en", "pooled")
        }
    assert sum(spans[D]["pooled"].values()) > 0


def test_a_thousand_types_give_a_row_per_type_and_a_readable_table(tmp_path):
    """1,000 types: per-type rows for each type with spans (bounded blocks of types), and a page table of the
    types that move most plus "other"."""
    from refsens_report.analyses import by_type
    from refsens_report.view import ResultsView

    types = tuple(f"T{number:04d}" for number in range(1000))
    rng = np.random.default_rng(1)
    lines = [line(index, rng, types) for index in range(400)]
    # every type with a span under both references is said (the table's scale, not the support rule, is tested)
    results = audit_items(
        tmp_path, lines, audit={"resamples": 100, "rules": ["strict"]}, extra="[report]\nmin_type_spans = 1\n"
    )
    summary = results.summaries["by_type"]
    present = {span[2] for entry in lines for spans in entry["labellings"].values() for span in spans}
    assert summary["types"] == sorted(present) and summary["resamples"] == 100
    deltas = select(results.rows, analysis="by_type", statistic="delta", language="pooled")
    assert len(deltas) == len(present) * 2  # two outputs, one pair of references
    view = ResultsView.from_json({**results.to_json_dict(), "rows": results.rows})
    [table] = by_type.ANALYSIS.section(view, {}).tables
    assert len(table.rows) <= 30 and table.rows[-1][1].text.startswith("other (")
    assert len(table.csv.rows) == len(present) * 2 * 3  # types x outputs x (2 languages and pooled)


def test_many_types_are_counted_sparse_with_the_same_rows(tmp_path, monkeypatch):
    """Above MANY_TYPES types the per-type counts are a sparse matrix (memory and time of the counts that occur,
    not of items x types): every per-type row is the one the dense matrix gives, interval and p included."""
    from scipy.sparse import issparse

    from refsens_report import counts
    from refsens_report.analyses import by_type

    types = tuple(f"T{number:03d}" for number in range(counts.MANY_TYPES + 40))
    rng = np.random.default_rng(2)
    lines = [line(index, rng, types) for index in range(300)]
    audit = {"resamples": 120, "rules": ["strict", "overlap"]}
    seen: list[bool] = []
    typed_matrix = ItemCounts.typed_matrix

    def spy(self, families, codes, sparse=False):
        found = typed_matrix(self, families, codes, sparse)
        seen.append(issparse(found[1]))
        return found

    monkeypatch.setattr(ItemCounts, "typed_matrix", spy)
    sparse_rows = select(audit_items(tmp_path / "sparse", lines, audit=audit).rows, analysis="by_type")
    assert seen and all(seen)
    monkeypatch.setattr(by_type, "MANY_TYPES", 10**6)
    seen.clear()
    dense_rows = select(audit_items(tmp_path / "dense", lines, audit=audit).rows, analysis="by_type")
    assert seen and not any(seen)
    assert len(sparse_rows) == len(dense_rows) > 0 and sparse_rows == dense_rows
