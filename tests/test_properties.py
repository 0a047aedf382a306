"""Properties of the audit on random records (hypothesis): symmetries, identities, additivity, determinism."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from helpers import A, B, D, R, audit_items, item, pick, select, write_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.results import results_csv, results_json

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RESAMPLES = 40
COPY = "copy_of_a"

span_strategy = st.tuples(st.integers(0, 6), st.integers(1, 3), st.sampled_from(["PER", "LOC"])).map(
    lambda t: [t[0], t[0] + t[1], t[2]]
)
spans_strategy = st.lists(span_strategy, max_size=4)


@st.composite
def records(draw, min_items: int = 1, max_items: int = 9):
    """Random records in up to three languages; the reviewer is sometimes absent, never on the first item."""
    count = draw(st.integers(min_items, max_items))
    lines = []
    for index in range(count):
        spans = {name: draw(spans_strategy) for name in (A, B, D)}
        if index == 0 or draw(st.booleans()) or draw(st.booleans()):
            spans[R] = draw(spans_strategy)
        language = draw(st.sampled_from(["en", "de", "zh-Hans"]))
        lines.append(item(f"{language}-{index:02d}", language, **spans))
    return lines


def run(lines, **config):
    with tempfile.TemporaryDirectory() as folder:
        return audit_items(Path(folder), lines, **{"audit": {"resamples": RESAMPLES}, **config})


def flipped(row):
    return (
        row["analysis"],
        row["statistic"],
        row["rule"],
        row["language"],
        row["output_2"],
        row["output"],
        row["reference"],
        row["reference_2"],
        row["policy"],
    )


def key(row):
    return (
        row["analysis"],
        row["statistic"],
        row["rule"],
        row["language"],
        row["output"],
        row["output_2"],
        row["reference"],
        row["reference_2"],
        row["policy"],
    )


@PROPERTY_SETTINGS
@given(records())
def test_swapping_the_outputs_negates_margins_and_swings(lines):
    forward = run(lines, outputs=(A, B)).rows
    backward = {key(row): row for row in run(lines, outputs=(B, A)).rows}
    compared = 0
    for row in forward:
        if row["statistic"] not in ("margin", "swing"):
            continue
        mirror = backward[flipped(row)]
        assert mirror["n_items"] == row["n_items"]
        if row["estimate"] is None:
            assert mirror["estimate"] is None
            continue
        assert mirror["estimate"] == pytest.approx(-row["estimate"], abs=1e-9)
        if row["ci_low"] is not None:
            assert mirror["ci_low"] == pytest.approx(-row["ci_high"], abs=1e-9)
            assert mirror["ci_high"] == pytest.approx(-row["ci_low"], abs=1e-9)
        assert mirror["p_value"] == row["p_value"]
        assert mirror["p_holm"] == row["p_holm"]
        compared += 1
    assert compared > 0 or all(r["estimate"] is None for r in forward if r["statistic"] == "margin")


@PROPERTY_SETTINGS
@given(records(), st.randoms(use_true_random=False))
def test_an_output_equal_to_a_reference_scores_100(lines, rnd):
    for line in lines:
        spans = list(line["labellings"][A])
        rnd.shuffle(spans)  # order and repeats do not matter to a span set
        line["labellings"][COPY] = spans + spans[:1]
    rows = run(lines, references=(D, R, COPY)).rows
    scores = select(rows, analysis="swap", statistic="score", output=A, reference=COPY)
    assert scores
    for row in scores:
        audited = [line for line in lines if R in line["labellings"]]
        if row["language"] != "pooled":
            audited = [line for line in audited if line["language"] == row["language"]]
        has_spans = any(line["labellings"][A] for line in audited)
        if has_spans:
            assert row["estimate"] == 100.0
            if row["ci_low"] is not None:
                assert row["ci_low"] == row["ci_high"] == 100.0
        else:
            assert row["estimate"] is None  # 2TP + FP + FN = 0
    # the range sees it too: A against COPY is the maximum when defined
    for row in select(rows, analysis="range", statistic="score", output=A, reference=COPY):
        assert row["estimate"] in (100.0, None)


def brute_force_matching(o, r) -> int:
    """Return the largest number of disjoint (o, r) pairs of the same type sharing a character: every choice tried."""
    o, r = sorted(o), sorted(r)

    def best(index: int, used: frozenset) -> int:
        if index == len(o):
            return 0
        start, end, label = o[index]
        found = best(index + 1, used)  # this span unmatched
        for position, (other_start, other_end, other_label) in enumerate(r):
            if position not in used and label == other_label and start < other_end and other_start < end:
                found = max(found, 1 + best(index + 1, used | {position}))
        return found

    return best(0, frozenset())


def own_counts(lines, rule, output, reference):
    """Return {language: (TP, |O|, |R|)} over the audited items, from Python sets (overlap: by brute force)."""
    totals: dict[str, list[int]] = {}
    for line in lines:
        if R not in line["labellings"]:
            continue

        def as_set(name):
            return {tuple(s) if rule != "relaxed" else tuple(s[:2]) for s in line["labellings"][name]}

        o, r = as_set(output), as_set(reference)
        counts = totals.setdefault(line["language"], [0, 0, 0])
        counts[0] += brute_force_matching(o, r) if rule == "overlap" else len(o & r)
        counts[1] += len(o)
        counts[2] += len(r)
    return totals


def f1_from(tp, size_o, size_r):
    return None if size_o + size_r == 0 else 100 * 2 * tp / (size_o + size_r)


@PROPERTY_SETTINGS
@given(records(min_items=2, max_items=12))
def test_pooled_counts_are_the_sum_of_the_languages(lines):
    rows = run(lines, audit={"resamples": RESAMPLES, "rules": ["strict", "relaxed", "overlap"]}).rows
    for rule in ("strict", "relaxed", "overlap"):
        for output in (A, B):
            for reference in (D, R):
                per_language = own_counts(lines, rule, output, reference)
                summed = [sum(counts[k] for counts in per_language.values()) for k in range(3)]
                found = {
                    row["language"]: row
                    for row in select(
                        rows, analysis="swap", statistic="score", rule=rule, output=output, reference=reference
                    )
                }
                assert set(found) == set(per_language) | {"pooled"}
                for language, counts in per_language.items():
                    expected = f1_from(*counts)
                    assert found[language]["estimate"] == (
                        None if expected is None else pytest.approx(expected, rel=1e-12)
                    )
                expected = f1_from(*summed)
                assert found["pooled"]["estimate"] == (None if expected is None else pytest.approx(expected, rel=1e-12))
                assert found["pooled"]["n_items"] == sum(found[lang]["n_items"] for lang in per_language)


@PROPERTY_SETTINGS
@given(records(min_items=2), st.randoms(use_true_random=False))
def test_results_do_not_depend_on_line_order(lines, rnd):
    shuffled = list(lines)
    rnd.shuffle(shuffled)
    assert results_csv(run(lines).rows) == results_csv(run(shuffled).rows)


@settings(max_examples=10, deadline=None)
@given(records(min_items=2))
def test_same_seed_same_bytes(lines):
    with tempfile.TemporaryDirectory() as folder:
        config = load_config(write_project(Path(folder), lines, audit={"resamples": RESAMPLES, "seed": 3}))
        first, second = run_audit(config), run_audit(config)
    assert results_csv(first.rows) == results_csv(second.rows)
    assert results_json(first) == results_json(second)


def steady_record():
    """A fixed record whose intervals are not degenerate (several distinct items per language)."""
    rng = random.Random(8)
    lines = []
    for index in range(30):
        language = ("en", "de")[index % 2]
        truth = [[s, s + 2, rng.choice(["PER", "LOC"])] for s in rng.sample(range(0, 30, 3), 3)]
        spans = {
            name: [s for s in truth if rng.random() < keep] for name, keep in ((A, 0.9), (B, 0.6), (D, 0.8), (R, 0.7))
        }
        lines.append(item(f"{language}-{index:02d}", language, **spans))
    return lines


def test_seed_changes_intervals_not_estimates(tmp_path):
    lines = steady_record()
    seed_0 = audit_items(tmp_path / "s0", lines, audit={"resamples": 100, "seed": 0}).rows
    seed_0_again = audit_items(tmp_path / "s0b", lines, audit={"resamples": 100, "seed": 0}).rows
    seed_1 = audit_items(tmp_path / "s1", lines, audit={"resamples": 100, "seed": 1}).rows
    assert results_csv(seed_0) == results_csv(seed_0_again)
    assert [key(r) for r in seed_0] == [key(r) for r in seed_1]
    # point estimates do not depend on the seed; the band (an interval end) does
    assert [r["estimate"] for r in seed_0 if r["analysis"] != "band"] == [
        r["estimate"] for r in seed_1 if r["analysis"] != "band"
    ]
    changed = [a for a, b in zip(seed_0, seed_1) if (a["ci_low"], a["ci_high"]) != (b["ci_low"], b["ci_high"])]
    wide = [r for r in seed_0 if r["ci_low"] is not None and r["ci_high"] > r["ci_low"]]
    assert len(wide) > 20
    assert len(changed) > 0.8 * len(wide)


def test_resample_count_changes_only_uncertainty(tmp_path):
    lines = steady_record()
    few = audit_items(tmp_path / "few", lines, audit={"resamples": 50}).rows
    many = audit_items(tmp_path / "many", lines, audit={"resamples": 150}).rows
    assert [r["estimate"] for r in few if r["analysis"] != "band"] == [
        r["estimate"] for r in many if r["analysis"] != "band"
    ]


@PROPERTY_SETTINGS
@given(records(min_items=2))
def test_swing_is_the_difference_of_its_margins_and_delta_of_its_scores(lines):
    rows = run(lines).rows
    for swing in select(rows, analysis="interaction", statistic="swing"):
        margins = [
            pick(
                rows,
                analysis="interaction",
                statistic="margin",
                rule=swing["rule"],
                language=swing["language"],
                reference=reference,
            )
            for reference in (swing["reference"], swing["reference_2"])
        ]
        if None in (swing["estimate"], margins[0]["estimate"], margins[1]["estimate"]):
            continue
        assert swing["estimate"] == pytest.approx(margins[0]["estimate"] - margins[1]["estimate"], abs=1e-9)
    for delta in select(rows, analysis="swap", statistic="delta"):
        scores = [
            pick(
                rows,
                analysis="swap",
                statistic="score",
                rule=delta["rule"],
                language=delta["language"],
                output=delta["output"],
                reference=reference,
            )["estimate"]
            for reference in (delta["reference"], delta["reference_2"])
        ]
        if delta["estimate"] is None:
            assert None in scores
        else:
            assert delta["estimate"] == pytest.approx(scores[0] - scores[1], abs=1e-9)


@PROPERTY_SETTINGS
@given(records(min_items=2))
def test_neutrality_skew_and_copied_bounds(lines):
    rows = run(lines).rows
    for reference in (D, R):
        for language in {row["language"] for row in select(rows, analysis="neutrality", reference=reference)}:
            rate_a = pick(
                rows, analysis="neutrality", statistic="rate", output=A, reference=reference, language=language
            )
            rate_b = pick(
                rows, analysis="neutrality", statistic="rate", output=B, reference=reference, language=language
            )
            skew = pick(rows, analysis="neutrality", statistic="skew", reference=reference, language=language)
            copied = pick(rows, analysis="neutrality", statistic="copied", reference=reference, language=language)
            assert skew["estimate"] == pytest.approx(rate_a["estimate"] - rate_b["estimate"], abs=1e-9)
            # copied counts items equal to A or B: between the larger rate and the sum of both
            assert max(rate_a["estimate"], rate_b["estimate"]) - 1e-9 <= copied["estimate"]
            assert copied["estimate"] <= rate_a["estimate"] + rate_b["estimate"] + 1e-9
            assert 0 <= copied["estimate"] <= 100


@PROPERTY_SETTINGS
@given(records(min_items=2))
def test_intervals_contain_degenerate_estimates_and_p_values_are_probabilities(lines):
    rows = run(lines).rows
    for row in rows:
        if row["ci_low"] is not None:
            assert row["ci_low"] <= row["ci_high"]
        if row["p_value"] is not None:
            assert 0 < row["p_value"] <= 1
        if row["p_holm"] is not None:
            assert row["p_value"] <= row["p_holm"] <= 1
        if row["estimate"] is not None and row["analysis"] != "band":
            if row["statistic"] in ("f1", "score", "identical", "rate", "copied"):
                assert 0 <= row["estimate"] <= 100
            elif row["statistic"] == "type_agreement":
                # docs/method.md section 3's TP_strict / TP_relaxed exceeds 100 when A and B both give one boundary
                # two types
                assert row["estimate"] >= 0
            elif row["statistic"] == "swing":
                # a difference of two margins, each within ±100
                assert -200 <= row["estimate"] <= 200
            elif row["statistic"] != "range":
                assert -100 <= row["estimate"] <= 100


def test_property_records_are_varied():
    """The strategy covers what the properties need: absent reviewers, empty labellings, several languages."""
    examples = []

    @settings(max_examples=30, deadline=None, database=None)
    @given(records())
    def collect(lines):
        examples.append(lines)

    collect()
    assert any(any(R not in line["labellings"] for line in lines) for lines in examples)
    assert any(any(line["labellings"][A] == [] for line in lines) for lines in examples)
    assert any(len({line["language"] for line in lines}) == 3 for lines in examples)


# ----------------------------------------------------------------------------------------------------------
# the overlap matching against a brute-force matcher, straight on the counting function

overlap_spans = st.lists(
    st.tuples(st.integers(0, 12), st.integers(1, 6), st.sampled_from(["PER", "LOC"])).map(
        lambda t: (t[0], t[0] + t[1], t[2])
    ),
    max_size=6,
)


def span_arrays(items):
    """Return (item, start, end, type code) arrays of each item's span set, in the order given (repeats once)."""
    import numpy as np

    rows = [
        (index, start, end, ("LOC", "PER").index(label))
        for index, spans in enumerate(items)
        for start, end, label in dict.fromkeys(spans)
    ]
    if not rows:
        return tuple(np.zeros(0, np.int64) for _ in range(4))
    return tuple(np.array(column, dtype=np.int64) for column in zip(*rows))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(overlap_spans, overlap_spans), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_overlap_matching_equals_brute_force_whatever_the_order(pairs, rnd):
    from refsens_report.counts import overlap_true_positives

    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    expected = [brute_force_matching(set(a), set(b)) for a, b in pairs]
    assert overlap_true_positives(span_arrays(first), span_arrays(second), len(pairs)).tolist() == expected
    # symmetric, and blind to the order of the spans and of the items
    assert overlap_true_positives(span_arrays(second), span_arrays(first), len(pairs)).tolist() == expected
    order = list(range(len(pairs)))
    rnd.shuffle(order)
    shuffled_first = [rnd.sample(first[index], len(first[index])) for index in order]
    shuffled_second = [rnd.sample(second[index], len(second[index])) for index in order]
    found = overlap_true_positives(span_arrays(shuffled_first), span_arrays(shuffled_second), len(pairs)).tolist()
    assert found == [expected[index] for index in order]
    # offsets too large to share an int64 key with the item number take the ranked path: same counts
    far = 2**61
    shifted = [
        tuple(array + far if column in (1, 2) else array for column, array in enumerate(arrays))
        for arrays in (span_arrays(first), span_arrays(second))
    ]
    assert overlap_true_positives(*shifted, len(pairs)).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(overlap_spans, overlap_spans), min_size=1, max_size=5),
    st.randoms(use_true_random=False),
    st.sampled_from([1, 3, 1 << 18]),
    st.booleans(),
)
def test_overlap_edges_are_every_overlapping_pair_in_order(pairs, rnd, block, one_type):
    """The pairs overlap_edges lists, tested a block of candidates at a time (blocks of 1 and 3 cut every run of
    candidates), are the brute-force pairs of same-type spans sharing a character, ordered by a, then by b's
    (item, start) order, b's spans in any order; with one type among all spans the type test is skipped."""
    import numpy as np

    from refsens_report import counts

    first = span_arrays([a for a, _ in pairs])
    second = [(index, *span) for index, (_, b) in enumerate(pairs) for span in b]
    rnd.shuffle(second)  # b in any order: overlap_edges sorts it by (item, start), keeping ties in b's order
    second = tuple(
        np.array([row[k] if k < 3 else ("LOC", "PER").index(row[k]) for row in second], dtype=np.int64).reshape(-1)
        for k in range(4)
    )
    if one_type:
        first, second = ((*arrays[:3], np.zeros_like(arrays[3])) for arrays in (first, second))
    b_order = sorted(range(len(second[0])), key=lambda j: (second[0][j], second[1][j], j))
    expected = [
        (i, j)
        for i in range(len(first[0]))
        for j in b_order
        if first[0][i] == second[0][j]
        and first[3][i] == second[3][j]
        and first[1][i] < second[2][j]
        and second[1][j] < first[2][i]
    ]
    saved = counts.EDGE_BLOCK
    counts.EDGE_BLOCK = block
    try:
        edge_a, edge_b = counts.overlap_edges(first, second)
    finally:
        counts.EDGE_BLOCK = saved
    assert list(zip(edge_a.tolist(), edge_b.tolist())) == expected


def test_span_ids_are_the_same_on_the_ranked_path_of_offsets_too_large_for_one_key(tmp_path):
    """ItemCounts numbers the spans by labelling in one sort of an int64 key (ids in int32); offsets too large to
    share that key take a row-wise unique instead: the same ids, sizes, intersections and type-confusion cells,
    and every id's item, type and relaxed id agree with a span of the labellings that has it."""
    import dataclasses

    import numpy as np

    from refsens_report.counts import ItemCounts
    from refsens_report.load import load_record

    rng = random.Random(11)
    items = []
    for number in range(40):
        labellings = {}
        for name in (A, B, D, R):
            spans = []
            for _ in range(rng.randint(0, 6)):
                start = rng.randrange(0, 30)
                spans.append([start, rng.randint(start + 1, 34), rng.choice(["PER", "LOC", "ORG"])])
            labellings[name] = spans + spans[:1]  # a repeated span
        items.append(item(f"i{number:03d}", "en", text="x" * 40, **labellings))
    config = load_config(write_project(tmp_path, items))
    table = load_record(config).table
    far = dataclasses.replace(table, start=table.start.astype(np.int64) + 2**61, end=table.end.astype(np.int64) + 2**61)
    names = config.roles.all_names
    near_counts, far_counts = ItemCounts(table, names), ItemCounts(far, names)
    for rule in ("strict", "relaxed"):
        for name in names:
            ids = near_counts.ids(rule, name)
            assert ids.dtype == np.int32 and np.array_equal(ids, far_counts.ids(rule, name))
            assert np.array_equal(near_counts.size(rule, name), far_counts.size(rule, name))
        for a, b in ((A, B), (D, R), (A, R)):
            assert np.array_equal(near_counts.tp(rule, a, b), far_counts.tp(rule, a, b))
    every = np.arange(table.n_items)
    assert near_counts.type_confusion(A, B, every) == far_counts.type_confusion(A, B, every)
    for counts, offset in ((near_counts, 0), (far_counts, 2**61)):
        spans = {
            (int(one), int(start) - offset, int(end) - offset, int(kind))
            for one, start, end, kind in zip(table.item, counts.table.start, counts.table.end, table.type)
        }
        strict = zip(counts._id_item["strict"], counts._strict_start, counts._strict_end, counts._strict_type)
        assert {(int(i), int(s) - offset, int(e) - offset, int(t)) for i, s, e, t in strict} == spans
        relaxed = counts._id_item["relaxed"][counts._strict_to_relaxed]
        assert np.array_equal(relaxed, counts._id_item["strict"])


def test_the_common_spans_of_many_pairs_are_the_intersections_whatever_is_still_marked():
    """ItemCounts.common keeps the ids of the labellings used last marked, a bit each (MARK_SLOTS), and unmarks the
    one used least recently for a new one: over more labellings than bits and pairs in a random order, every
    intersection is np.intersect1d of the two sorted id sets, and tp its count per item."""
    import numpy as np

    from refsens_report.counts import MARK_SLOTS, ItemCounts
    from refsens_report.record import Item

    rng = random.Random(5)
    names = [f"l{number}" for number in range(MARK_SLOTS + 5)]
    items = []
    for number in range(60):
        labellings = {}
        for name in names:
            spans = []
            for _ in range(rng.randint(0, 5)):
                start = rng.randrange(0, 12)
                spans.append((start, rng.randint(start + 1, 14), rng.choice(["PER", "LOC"])))
            labellings[name] = tuple(spans)
        items.append(Item(f"i{number:02d}", "en", labellings))
    counts = ItemCounts(items, names)
    asked = [(a, b) for a in names for b in names if a != b] * 2
    rng.shuffle(asked)
    for a, b in asked:
        for rule in ("strict", "relaxed"):
            found = counts.common(rule, a, b)
            assert np.array_equal(found, np.intersect1d(counts.ids(rule, a), counts.ids(rule, b)))
            per_item = np.bincount(counts.item_of(rule, found), minlength=len(items))
            assert np.array_equal(counts.tp(rule, a, b), per_item)
