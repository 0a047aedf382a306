"""Krippendorff's alpha (analyses/alpha.py): a hand-computed case, the krippendorff package on the same
characters, and the report's table and sentence."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, by_language, item, pick, select

from refsens_report import formatting, threads
from refsens_report.analyses import alpha, pairs
from refsens_report.view import ResultsView

TYPES = ("PER", "LOC", "ORG")


def random_items(seed: int, n: int) -> list[dict]:
    """Items with texts and random spans per labelling, some nested (a character of two types)."""
    rng = random.Random(seed)
    items = []
    for number in range(n):
        length = rng.randint(15, 40)
        labellings = {}
        for name in (A, B, D, R):
            spans = []
            for _ in range(rng.randint(0, 3)):
                start = rng.randrange(0, length - 2)
                spans.append([start, rng.randint(start + 1, min(length, start + 8)), rng.choice(TYPES)])
            labellings[name] = spans
        items.append(item(f"i{number:03d}", rng.choice(["en", "de"]), text="x" * length, **labellings))
    return items


def character_categories(spans: list[list], length: int) -> list[str]:
    """The test's own reading of a labelling: per character, the sorted types covering it joined by '+'."""
    covering = [set() for _ in range(length)]
    for start, end, kind in spans:
        for position in range(start, end):
            covering[position].add(kind)
    return ["+".join(sorted(types)) or "no span" for types in covering]


def reference_alpha(items: list[dict], a: str, b: str, language: str | None = None) -> float:
    """krippendorff.alpha (the package) on the characters of the chosen items, two coders, nominal."""
    coder_a, coder_b = [], []
    for one in items:
        if language is not None and one["language"] != language:
            continue
        length = max([end for spans in one["labellings"].values() for _, end, _ in spans], default=0)
        coder_a += character_categories(one["labellings"][a], length)
        coder_b += character_categories(one["labellings"][b], length)
    domain = sorted(set(coder_a) | set(coder_b))
    data = np.array([[domain.index(v) for v in coder_a], [domain.index(v) for v in coder_b]], dtype=float)
    return krippendorff.alpha(
        reliability_data=data, level_of_measurement="nominal", value_domain=list(range(len(domain)))
    )


def test_a_hand_computed_case(tmp_path):
    # A: PER on characters 0-3; B: the same PER and a LOC on 6-7; an item is its characters up to the furthest
    # span end of any labelling (10: a span of R). n = 20 values: PER 8, no span 10, LOC 2;
    # agreeing pairs 2 x (4 PER + 4 no span) = 16: alpha = (19 * 16 - (56 + 90 + 2)) / (380 - 148) = 156 / 232
    items = [
        item(
            "only",
            "en",
            text="x" * 10,
            **{
                A: [[0, 4, "PER"]],
                B: [[0, 4, "PER"], [6, 8, "LOC"]],
                D: [[0, 4, "PER"]],
                R: [[0, 4, "PER"], [9, 10, "PER"]],
            },
        )
    ]
    rows = audit_items(tmp_path, items).rows
    row = pick(rows, analysis="alpha", statistic="alpha", language="pooled", output=A, reference=B)
    assert row["estimate"] == pytest.approx(156 / 232, abs=1e-12)
    assert formatting.format_row(row).estimate == "0.672"
    assert row["p_value"] is None  # not a difference: no test
    # references differing on one character of ten: D none, R PER
    same = pick(rows, analysis="alpha", language="pooled", reference=D, reference_2=R)
    assert same["estimate"] == pytest.approx(reference_alpha(items, D, R), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_the_krippendorff_package_on_the_same_characters(tmp_path, seed):
    items = random_items(seed, 40)
    rows = audit_items(tmp_path, items).rows
    annotators = by_language(rows, analysis="alpha", statistic="alpha", output=A, reference=B)
    references = by_language(rows, analysis="alpha", statistic="alpha", reference=D, reference_2=R)
    for language in ("en", "de"):
        assert annotators[language]["estimate"] == pytest.approx(reference_alpha(items, A, B, language), abs=1e-9)
        assert references[language]["estimate"] == pytest.approx(reference_alpha(items, D, R, language), abs=1e-9)
    pooled = annotators["pooled"]
    assert pooled["estimate"] == pytest.approx(reference_alpha(items, A, B), abs=1e-9)
    assert pooled["ci_low"] <= pooled["estimate"] <= pooled["ci_high"]
    assert pooled["n_items"] == 40


def test_alpha_is_undefined_when_every_value_is_no_span(tmp_path):
    items = [
        item(f"i{n}", "en", text="x" * 5, **{A: [], B: [], D: [[0, 2, "PER"]], R: [[0, 2, "PER"]]}) for n in range(3)
    ]
    rows = audit_items(tmp_path, items).rows
    assert pick(rows, analysis="alpha", language="pooled", output=A, reference=B)["estimate"] is None


def test_the_section_has_a_table_and_a_sentence(tmp_path):
    results = audit_items(tmp_path, random_items(3, 20))
    view = ResultsView.from_json({**results.to_json_dict(), "rows": results.rows})
    section = alpha.ANALYSIS.section(view, {})
    [table] = section.tables
    assert table.columns == ("Pair", "Language", "Items", "Alpha")
    assert len(table.rows) == len(select(results.rows, analysis="alpha"))
    assert any(sentence.startswith("Krippendorff's alpha on characters") for sentence in section.paragraphs)


def test_no_pair_means_not_applicable(tmp_path):
    items = [item("i", "en", text="x" * 5, **{A: [], D: []})]
    results = audit_items(tmp_path, items, annotators=None, outputs=(A,), references=(D,))
    assert not select(results.rows, analysis="alpha")
    assert "neither two annotator passes nor two references" in results.to_json_dict()["applicability"]["alpha"]


def per_item_coincidences(one: dict, a: str, b: str, type_names: list[str]) -> dict[str, tuple[int, int]]:
    """The straightforward reading of one item: an array of its characters' type bits per labelling, then the
    ordered agreeing pairs and the values per category, as (agree, values) by category name."""
    length = max([end for spans in one["labellings"].values() for _, end, _ in spans], default=0)
    bits = {}
    for name in (a, b):
        found = np.zeros(length, dtype=np.int64)
        for start, end, kind in one["labellings"][name]:
            found[start:end] |= 1 << type_names.index(kind)
        bits[name] = found
    counted = {}
    for value in np.unique(np.concatenate([bits[a], bits[b]])):
        name = "+".join(kind for code, kind in enumerate(type_names) if int(value) >> code & 1)
        agree = 2 * int(((bits[a] == value) & (bits[b] == value)).sum())
        counted[name] = (agree, int((bits[a] == value).sum() + (bits[b] == value).sum()))
    return counted


def counted(tmp_path, items: list[dict]) -> tuple:
    """Return the counts of a record of these items, its type names and each item id's row."""
    from helpers import write_project

    from refsens_report.config import load_config
    from refsens_report.counts import ItemCounts
    from refsens_report.load import load_record

    config = load_config(write_project(tmp_path, items))
    counts = ItemCounts(load_record(config).table, config.roles.all_names)
    type_names = [str(one) for one in counts.table.type_names]
    return counts, type_names, {str(one): index for index, one in enumerate(counts.table.ids)}


def test_the_run_length_coincidences_equal_a_per_character_count_on_long_texts(tmp_path):
    """alpha.coincidences works on runs of constant value between span boundaries (memory goes with the spans,
    never the characters): on long texts with nested, touching and repeated spans its columns equal an array of
    every character per item."""
    rng = random.Random(3)
    items = []
    for number in range(12):
        length = rng.randint(5_000, 60_000)
        labellings = {}
        for name in (A, B, D, R):
            spans = []
            for _ in range(rng.randint(0, 12)):
                start = rng.randrange(0, length - 1)
                spans.append([start, rng.randint(start + 1, min(length, start + 4_000)), rng.choice(TYPES)])
            if spans and rng.random() < 0.5:
                spans.append(list(spans[0]))  # a repeated span
                spans.append([spans[0][1], min(length, spans[0][1] + 7), spans[0][2]])  # one touching it
            labellings[name] = spans
        items.append(item(f"i{number:03d}", "en", text="x" * length, **labellings))
    counts, type_names, order = counted(tmp_path, items)
    for a, b in ((A, B), (D, R), (A, R)):
        found = alpha.coincidences(counts, a, b)
        assert found.agree.dtype == found.values.dtype and np.issubdtype(found.agree.dtype, np.unsignedinteger)
        for one in items:
            row = order[one["id"]]
            expected = per_item_coincidences(one, a, b, type_names)
            for category, (agree, values) in expected.items():
                column = found.categories.index(category)
                assert (found.agree[row, column], found.values[row, column]) == (agree, values)
            others = [c for c, category in enumerate(found.categories) if category not in expected]
            assert not found.agree[row, others].any() and not found.values[row, others].any()


@pytest.mark.parametrize("seed", range(4))
def test_the_shared_distinct_values_are_np_unique(seed):
    """pairs.distinct and distinct_inverse (alpha's run boundaries and categories, gamma's groups) are np.unique."""
    rng = np.random.default_rng(seed)
    runs = [np.sort(rng.integers(0, [3, 50, 10**6, 2**40][seed], int(rng.integers(0, 3000)))) for _ in range(5)]
    values = np.concatenate(runs)  # a few sorted runs end to end, as alpha's boundaries are
    assert np.array_equal(pairs.distinct(values), np.unique(values))
    found, inverse = pairs.distinct_inverse(values)
    expected, expected_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(found, expected) and np.array_equal(inverse, expected_inverse)
    bits, code = alpha.categories(values)
    assert np.array_equal(bits, expected) and np.array_equal(code, expected_inverse)


@pytest.mark.parametrize("seed", range(4))
def test_the_covered_stretches_are_the_union_of_each_types_spans(seed):
    """alpha.covered (each type's spans merged into disjoint stretches of runs, its bits added where a stretch
    starts and taken away where it ends) gives every run the bits of the types whose spans cover it: nested,
    touching and repeated spans, up to 300 type codes (a radix sort on 16 bits)."""
    rng = np.random.default_rng(seed)
    n_runs, n_spans = int(rng.integers(1, 400)), int(rng.integers(0, 300))
    opens = np.sort(rng.integers(0, n_runs, n_spans))
    closes = np.minimum(opens + rng.integers(1, 60, n_spans), n_runs)
    types = rng.integers(0, [3, 8, 62, 300][seed], n_spans)
    first, last, kind = alpha.covered(opens, closes, types)
    assert (first < last).all() and len(set(zip(first.tolist(), kind.tolist()))) == len(first)
    for code in np.unique(types).tolist():  # the stretches of each type: disjoint, and their union is its spans'
        expected = np.zeros(n_runs, dtype=bool)
        for start, end in zip(opens[types == code].tolist(), closes[types == code].tolist()):
            expected[start:end] = True
        found = np.zeros(n_runs, dtype=np.int64)
        for start, end in zip(first[kind == code].tolist(), last[kind == code].tolist()):
            found[start:end] += 1
        assert np.array_equal(found, expected.astype(np.int64))


def test_the_pairs_counted_on_threads_give_the_rows_of_one_thread(tmp_path, monkeypatch):
    """alpha.estimates counts the pairs' coincidences on threads (threads.threaded_map): the same rows on one."""
    items = random_items(5, 80)
    monkeypatch.setattr(threads, "WORKERS", 2)
    rows = [select(audit_items(tmp_path / "two", items).rows, analysis="alpha")]
    monkeypatch.setattr(threads, "WORKERS", 1)
    rows.append(select(audit_items(tmp_path / "one", items).rows, analysis="alpha"))
    assert rows[0] == rows[1] and len(rows[0]) > 2


@pytest.mark.parametrize("types", [("PER",), TYPES])
def test_the_coincidences_counted_in_blocks_of_items_equal_one_block(tmp_path, types):
    """alpha.counted_coincidences counts a pair block by block of items (a block's runs, not the record's, in
    memory): blocks of one item, of a few and one block of every item give the same categories and columns, and
    each item's equal the per-character reading, with empty and absent labellings and blocks whose items have no
    span or are not counted (one coder absent), with one type or several."""
    rng = random.Random(len(types))
    items = []
    for number in range(23):
        length = rng.randint(3, 30)
        labellings = {}
        for name in (A, B, D, R):
            roll = rng.random()
            if roll < 0.15:
                labellings[name] = None  # absent: the item is not counted for the pairs with this coder
            elif roll < 0.35 or 8 <= number < 12:
                labellings[name] = []  # present, no span: a block of items with no span at all
            else:
                spans = []
                for _ in range(rng.randint(1, 4)):
                    start = rng.randrange(0, length - 1)
                    spans.append([start, rng.randint(start + 1, length), rng.choice(types)])
                labellings[name] = spans
        items.append(item(f"i{number:03d}", "en", text="x" * length, **labellings))
    counts, type_names, order = counted(tmp_path, items)
    for a, b in ((A, B), (D, R), (A, R)):
        whole = alpha.counted_coincidences(counts, a, b, block=counts.n_items)
        for block in (1, 2, 5):
            found = alpha.counted_coincidences(counts, a, b, block=block)
            assert found.categories == whole.categories
            assert found.agree.dtype == found.values.dtype == whole.agree.dtype
            assert np.array_equal(found.agree, whole.agree) and np.array_equal(found.values, whole.values)
        both = counts.has(a) & counts.has(b)
        for one in items:
            row = order[one["id"]]
            expected = per_item_coincidences(one, a, b, type_names) if both[row] else {}
            for category, (agree, values) in expected.items():
                column = whole.categories.index(category)
                assert (whole.agree[row, column], whole.values[row, column]) == (agree, values)
            others = [c for c, category in enumerate(whole.categories) if category not in expected]
            assert not whole.agree[row, others].any() and not whole.values[row, others].any()


def test_a_pairs_coincidences_are_let_go_once_every_column_is_read(tmp_path):
    """alpha's cached coincidences of a pair are dropped once ItemCounts has read each of its columns (it keeps
    them): the columns read equal a fresh count, and a column asked again counts the pair anew, the same values."""
    from helpers import write_project

    from refsens_report.analyses.registry import column_kinds
    from refsens_report.config import load_config
    from refsens_report.counts import Column, ItemCounts
    from refsens_report.load import load_record

    config = load_config(write_project(tmp_path, random_items(9, 40)))
    counts = ItemCounts(load_record(config).table, config.roles.all_names, column_kinds())
    fresh = alpha.counted_coincidences(counts, A, B)
    columns = [
        (Column(kind, a=A, b=B, c=category), field, number)
        for number, category in enumerate(fresh.categories)
        for kind, field in (("alpha_agree", "agree"), ("alpha_values", "values"))
    ]
    for done, (column, field, number) in enumerate(columns, 1):
        assert np.array_equal(counts.integers(column), getattr(fresh, field)[:, number])
        assert ((A, B) in alpha._FOUND[counts]) == (done < len(columns))
    column, field, number = columns[0]
    again = alpha.COLUMNS[0].values(counts, column)
    assert np.array_equal(again, fresh.agree[:, number]) and (A, B) in alpha._FOUND[counts]


def test_the_distinct_spans_are_np_unique_of_the_labellings_rows(tmp_path):
    """pairs.distinct_spans (a packed key sorted in place, kept as int32) equals numpy's unique rows of each
    labelling's (item, start, end, type), duplicates and nested spans included."""
    items = random_items(11, 60)
    for one in items[:20]:
        for name in (A, B):
            one["labellings"][name] = one["labellings"][name] * 2  # each span twice: duplicates to drop
    counts, _, _ = counted(tmp_path, items)
    table = counts.table
    for code, name in enumerate(table.names):
        mine = table.labelling == code
        expected = np.unique(np.stack([table.item, table.start, table.end, table.type], axis=1)[mine], axis=0)
        found = pairs.distinct_spans(counts, name)
        assert found.dtype == np.int32 and np.array_equal(found, expected)
        assert len(found) < mine.sum() if name in (A, B) else len(found) == mine.sum() > 0


def test_the_distinct_spans_go_once_every_awaited_pair_of_both_statistics_is_served(tmp_path):
    """pairs.cache_spans awaits each pair of each statistic that registers it; the distinct spans stay until the
    last pair's columns are read through ItemCounts, then go. Every column read equals a fresh count."""
    from types import SimpleNamespace

    from helpers import write_project

    from refsens_report.analyses import gamma
    from refsens_report.analyses.registry import column_kinds
    from refsens_report.config import load_config
    from refsens_report.counts import Column, ItemCounts
    from refsens_report.load import load_record

    config = load_config(write_project(tmp_path, random_items(13, 40)))
    counts = ItemCounts(load_record(config).table, config.roles.all_names, column_kinds())
    everything = np.ones(counts.n_items, dtype=bool)
    context = SimpleNamespace(
        counts=counts, config=config, subsets=SimpleNamespace(audited=everything, corpus=everything)
    )
    pairs.cache_spans(context, alpha._FOUND)
    pairs.cache_spans(context, gamma._OBSERVED)
    named = [(a, b) for _, a, b in pairs.pairs(config)]
    reads = []
    for a, b in named:
        fresh, observed = alpha.counted_coincidences(counts, a, b), gamma.observed(counts, a, b)
        for number, category in enumerate(fresh.categories):
            reads.append((Column("alpha_agree", a=a, b=b, c=category), fresh.agree[:, number]))
            reads.append((Column("alpha_values", a=a, b=b, c=category), fresh.values[:, number]))
        reads += [
            (Column("gamma_disorder", a=a, b=b), observed.disorder),
            (Column("gamma_units", a=a, b=b), observed.units),
        ]
    assert len(named) == 2  # the annotator passes and the references
    for done, (column, expected) in enumerate(reads, 1):
        read = counts.real(column) if column.kind == "gamma_disorder" else counts.integers(column)
        assert np.array_equal(read, expected)
        assert (counts in pairs._SPANS) == (done < len(reads))
