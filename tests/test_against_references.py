"""The engine against outside references, with the reference call kept in the test.

- span F1 against seqeval on random IOB2 records;
- overlap F1 against nervaluate's `ent_type` scheme where the two agree by definition (no span overlaps
  more than one span of its type in the other labelling), and a case where nervaluate's greedy pairing
  counts fewer;
- Holm against statsmodels' multipletests(method="holm"), on random p-values and on the engine's own
  interaction swing family;
- the paired bootstrap interval against scipy.stats.bootstrap(paired=True, method="percentile") on a
  one-language record, and the pooled (stratified) interval against a direct stratified loop;
- percentile_interval against np.quantile, bootstrap_p_value against a direct loop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, item, pick, select
from nervaluate import Evaluator
from scipy import stats as scipy_stats
from seqeval.metrics import f1_score
from seqeval.scheme import IOB2
from statsmodels.stats.multitest import multipletests

from refsens_report import bootstrap, threads
from refsens_report.bootstrap import bootstrap_p_value, holm, percentile_interval

TYPES = ("PER", "LOC", "ORG")


# ---------------------------------------------------------------------------------------------------------
# Span F1 against seqeval


def random_tags(rng: np.random.Generator, length: int) -> list[str]:
    """Return a valid IOB2 sequence (I-X only after B-X or I-X), so every chunking convention agrees."""
    tags: list[str] = []
    for _ in range(length):
        previous = tags[-1] if tags else "O"
        roll = rng.random()
        if previous != "O" and roll < 0.35:
            tags.append("I-" + previous[2:])
        elif roll < 0.65:
            tags.append("O")
        else:
            tags.append("B-" + TYPES[rng.integers(len(TYPES))])
    return tags


def perturb(rng: np.random.Generator, tags: list[str]) -> list[str]:
    """Return a prediction near the gold: some tags redrawn, then repaired to valid IOB2."""
    noisy = [random_tags(rng, 1)[0] if rng.random() < 0.25 else tag for tag in tags]
    repaired = []
    for tag in noisy:
        previous = repaired[-1] if repaired else "O"
        if tag.startswith("I-") and (previous == "O" or previous[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        repaired.append(tag)
    return repaired


def spans_from_tags(tags: list[str], offsets: list[tuple[int, int]]) -> list[list]:
    """IOB2 tags to character spans [start, end, type] (end exclusive, over token offsets)."""
    spans, open_span = [], None
    for tag, (start, end) in zip(tags, offsets):
        if tag.startswith("I-") and open_span is not None:
            open_span[1] = end
            continue
        if open_span is not None:
            spans.append(open_span)
            open_span = None
        if tag.startswith("B-"):
            open_span = [start, end, tag[2:]]
    if open_span is not None:
        spans.append(open_span)
    return spans


def untyped(tags: list[str]) -> list[str]:
    """Collapse every type into one: seqeval's F1 on these is the relaxed (boundary-only) F1."""
    return [tag if tag == "O" else tag[:2] + "X" for tag in tags]


def random_sentences(seed: int, count: int):
    rng = np.random.default_rng(seed)
    sentences = []
    for index in range(count):
        length = int(rng.integers(1, 14))
        widths = rng.integers(1, 7, size=length)
        starts = np.concatenate([[0], np.cumsum(widths + 1)[:-1]])
        offsets = [(int(s), int(s + w)) for s, w in zip(starts, widths)]
        gold = random_tags(rng, length)
        sentences.append(
            {
                "id": f"s{index:03d}",
                "language": ("en", "hi", "pt-BR")[int(rng.integers(3))],
                "offsets": offsets,
                "text": "x" * int(offsets[-1][1]),
                "tags": {D: gold, R: perturb(rng, gold), A: perturb(rng, gold), B: perturb(rng, gold)},
            }
        )
    return sentences


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_span_f1_matches_seqeval(tmp_path, seed):
    sentences = random_sentences(seed, 60)
    lines = [
        item(
            s["id"],
            s["language"],
            text=s["text"],
            **{name: spans_from_tags(tags, s["offsets"]) for name, tags in s["tags"].items()},
        )
        for s in sentences
    ]
    rows = audit_items(tmp_path, lines, audit={"resamples": 10}).rows
    languages = sorted({s["language"] for s in sentences})
    compared = 0
    for output in (A, B):
        for reference in (D, R):
            for language in languages + ["pooled"]:
                chosen = [s for s in sentences if language in (s["language"], "pooled")]
                y_true = [s["tags"][reference] for s in chosen]
                y_pred = [s["tags"][output] for s in chosen]
                # the reference implementation: seqeval's default (conlleval-style) micro F1, and its
                # strict IOB2 mode, which agree on valid IOB2
                strict = 100 * f1_score(y_true, y_pred)
                assert strict == pytest.approx(100 * f1_score(y_true, y_pred, mode="strict", scheme=IOB2), abs=1e-12)
                relaxed = 100 * f1_score([untyped(t) for t in y_true], [untyped(t) for t in y_pred])
                for rule, expected in (("strict", strict), ("relaxed", relaxed)):
                    row = pick(
                        rows,
                        analysis="swap",
                        statistic="score",
                        rule=rule,
                        output=output,
                        reference=reference,
                        language=language,
                    )
                    assert row["estimate"] == pytest.approx(expected, rel=1e-12, abs=1e-12), (
                        rule,
                        output,
                        reference,
                        language,
                    )
                    compared += 1
    # agreement F1(A, B) on the corpus, pooled
    y_a = [s["tags"][A] for s in sentences]
    y_b = [s["tags"][B] for s in sentences]
    row = pick(rows, analysis="agreement", statistic="f1", rule="strict", language="pooled")
    assert row["estimate"] == pytest.approx(100 * f1_score(y_a, y_b), rel=1e-12)
    assert compared == 2 * 2 * 2 * (len(languages) + 1)


# ---------------------------------------------------------------------------------------------------------
# Overlap F1 against nervaluate


def nervaluate_correct(true_items, predicted_items) -> int:
    """Return nervaluate's `ent_type` correct count summed over its per-type results (end inclusive there)."""

    def documents(items):
        return [[{"label": label, "start": start, "end": end - 1} for start, end, label in spans] for spans in items]

    results = Evaluator(documents(true_items), documents(predicted_items), tags=list(TYPES), loader="dict").evaluate()
    return sum(per_type["ent_type"].correct for per_type in results["entities"].values())


def slotted_spans(rng: np.random.Generator, slots: int) -> tuple[list, list]:
    """Two labellings with at most one span each in every slot of 12 characters: no span overlaps two."""
    first, second = [], []
    for slot in range(slots):
        for spans in (first, second):
            if rng.random() < 0.75:
                start = 12 * slot + int(rng.integers(0, 8))
                spans.append([start, start + int(rng.integers(1, 5)), TYPES[int(rng.integers(2))]])
    return first, second


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_overlap_f1_matches_nervaluate_ent_type_where_they_agree_by_definition(tmp_path, seed):
    rng = np.random.default_rng(seed)
    lines, outputs, references = [], [], []
    for index in range(80):
        output, reference = slotted_spans(rng, int(rng.integers(0, 6)))
        outputs.append(output)
        references.append(reference)
        lines.append(item(f"en-{index:03d}", "en", **{A: output, B: output, D: reference, R: reference}))
    rows = audit_items(tmp_path, lines, audit={"resamples": 10, "rules": ["strict", "overlap"]}).rows
    correct = nervaluate_correct(references, outputs)
    size = sum(map(len, outputs)) + sum(map(len, references))
    row = pick(rows, analysis="swap", statistic="score", rule="overlap", output=A, reference=D, language="pooled")
    assert row["estimate"] == pytest.approx(100 * 2 * correct / size, rel=1e-12)
    strict = pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=D, language="pooled")
    assert row["estimate"] > strict["estimate"]  # the slots make partial overlaps common


def test_nervaluate_pairs_greedily_where_a_span_overlaps_two(tmp_path):
    # the first prediction overlaps both gold spans and is closest to the first, which the second needs
    predicted = [[0, 10, "PER"], [2, 5, "PER"]]
    gold = [[0, 4, "PER"], [8, 12, "PER"]]
    assert nervaluate_correct([gold], [predicted]) == 1
    rows = audit_items(
        tmp_path,
        [item("en-1", "en", **{A: predicted, B: predicted, D: gold, R: gold})],
        audit={"resamples": 10, "rules": ["overlap"]},
    ).rows
    row = pick(rows, analysis="swap", statistic="score", rule="overlap", output=A, reference=D, language="en")
    assert row["estimate"] == 100.0  # a maximum matching pairs both


# ---------------------------------------------------------------------------------------------------------
# Holm against statsmodels


@pytest.mark.parametrize("seed", range(6))
def test_holm_matches_statsmodels_on_random_p_values(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    p = rng.random(size) ** 3
    if seed % 2:
        p = np.round(p, 2)  # many ties, some zeros
    p[rng.integers(size)] = 1.0
    if size > 3:
        p[:3] = p[3]  # a three-way tie
    expected = multipletests(p, method="holm")[1]
    assert holm(list(p)) == pytest.approx(list(expected), rel=1e-12, abs=1e-15)


def test_holm_edge_cases_match_statsmodels():
    for p in ([0.5], [0.01, 0.01, 0.01], [1.0, 1.0], [0.04, 0.03, 0.02, 0.01], [0.0, 0.2, 0.0, 0.9, 0.2]):
        assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), rel=1e-12, abs=1e-15)
    assert holm([]) == []


MODEL, EXPERT = "model_x", "expert"


@pytest.fixture(scope="module")
def three_by_three(tmp_path_factory):
    """A random record with three outputs and three references in two languages: 54 swing rows."""
    rng = np.random.default_rng(11)
    names = (A, B, MODEL, D, R, EXPERT)
    lines = []
    for index in range(40):
        truth = [[int(s), int(s) + 2, TYPES[int(rng.integers(3))]] for s in rng.choice(20, size=3, replace=False) * 3]
        spans = {}
        for name in names:
            kept = [span for span in truth if rng.random() < 0.7]
            if rng.random() < 0.5:
                kept.append([int(rng.integers(60)) + 61, int(rng.integers(3)) + 123, TYPES[int(rng.integers(3))]])
            spans[name] = kept
        lines.append(item(f"i{index:03d}", "en" if index % 3 else "ar", **spans))
    return audit_items(
        tmp_path_factory.mktemp("three"),
        lines,
        outputs=(A, B, MODEL),
        references=(D, R, EXPERT),
        audit={
            "resamples": 300,
            "family": "all",
        },  # the paper's family: every swing (tests/test_families.py: the others)
    ).rows


def test_engine_holm_column_matches_statsmodels(three_by_three):
    family = select(three_by_three, analysis="interaction", statistic="swing")
    # 2 rules x 3 output pairs x 3 reference pairs x (ar, en, pooled)
    assert len(family) == 2 * 3 * 3 * 3
    p_values = [row["p_value"] for row in family]
    assert all(p is not None for p in p_values)
    assert len(set(p_values)) > 5, "a family with varied p-values"
    expected = multipletests(p_values, method="holm")[1]
    assert [row["p_holm"] for row in family] == pytest.approx(list(expected), rel=1e-12)
    # no other row of docs/method.md section 3 is adjusted (later analyses, e.g. leaderboard flips, may quote these
    # p_holm)
    method_analyses = {
        "agreement",
        "neutrality",
        "swap",
        "range",
        "interaction",
        "band",
        "decontaminated",
        "duplicates",
    }
    others = [row for row in three_by_three if row["analysis"] in method_analyses and row not in family]
    assert others and all(row["p_holm"] is None for row in others)


def test_every_pair_of_outputs_and_references_is_there(three_by_three):
    margins = select(three_by_three, analysis="interaction", statistic="margin", rule="strict", language="pooled")
    assert {(r["output"], r["output_2"], r["reference"]) for r in margins} == {
        (o1, o2, ref) for o1, o2 in ((A, B), (A, MODEL), (B, MODEL)) for ref in (D, R, EXPERT)
    }
    deltas = select(three_by_three, analysis="swap", statistic="delta", rule="strict", language="pooled")
    assert {(r["output"], r["reference"], r["reference_2"]) for r in deltas} == {
        (o, r1, r2) for o in (A, B, MODEL) for r1, r2 in ((D, R), (D, EXPERT), (R, EXPERT))
    }


def test_band_with_three_references(three_by_three):
    """docs/method.md section 3: band = max(|ci_low|, |ci_high|) of the pooled delta; with several deltas, the
    widest."""
    for output in (A, B, MODEL):
        deltas = select(
            three_by_three, analysis="swap", statistic="delta", rule="strict", output=output, language="pooled"
        )
        band = pick(three_by_three, analysis="band", rule="strict", output=output)
        assert band["estimate"] == pytest.approx(
            max(max(abs(d["ci_low"]), abs(d["ci_high"])) for d in deltas), rel=1e-12
        )


# ---------------------------------------------------------------------------------------------------------
# The paired bootstrap against scipy


def set_of(spans):
    return {tuple(span) for span in spans}


def one_language_record(seed: int, count: int, language: str = "en"):
    rng = np.random.default_rng(seed)
    lines = []
    for index in range(count):
        truth = [
            [int(s), int(s) + 2, TYPES[int(rng.integers(2))]]
            for s in rng.choice(10, size=int(rng.integers(1, 4)), replace=False) * 3
        ]
        delivered = [span for span in truth if rng.random() < 0.9]
        reviewer = [span for span in truth if rng.random() < 0.6] + ([[40, 42, "PER"]] if rng.random() < 0.3 else [])
        # A follows the delivered gold closely (as when the gold copied it), B is noisier
        annotator_a = [span for span in delivered if rng.random() < 0.95] + (
            [[50, 52, "ORG"]] if rng.random() < 0.2 else []
        )
        annotator_b = [span for span in truth if rng.random() < 0.7]
        lines.append(
            item(f"{language}-{index:03d}", language, **{A: annotator_a, B: annotator_b, D: delivered, R: reviewer})
        )
    return lines


def delta_counts(lines, output, first, second):
    """Per-item strict counts for F1(output, first) - F1(output, second)."""
    columns = []
    for line in lines:
        spans = {name: set_of(value) for name, value in line["labellings"].items()}
        o, r1, r2 = spans[output], spans[first], spans[second]
        columns.append((len(o & r1), len(o), len(r1), len(o & r2), len(r2)))
    return [np.array(column, dtype=float) for column in zip(*columns)]


def delta_statistic(tp_1, size_o, size_1, tp_2, size_2, axis=-1):
    f1_first = 100 * 2 * tp_1.sum(axis=axis) / (size_o.sum(axis=axis) + size_1.sum(axis=axis))
    f1_second = 100 * 2 * tp_2.sum(axis=axis) / (size_o.sum(axis=axis) + size_2.sum(axis=axis))
    return f1_first - f1_second


REPLICATES = 8000  # Monte Carlo error of a 2.5 % quantile: about 0.05 sd per interval end


def test_paired_interval_matches_scipy_bootstrap(tmp_path):
    lines = one_language_record(3, 80)
    rows = audit_items(tmp_path, lines, audit={"resamples": REPLICATES, "seed": 5}).rows
    data = delta_counts(lines, A, D, R)
    # the reference: scipy's paired percentile bootstrap of the same statistic
    reference = scipy_stats.bootstrap(
        data,
        delta_statistic,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=REPLICATES,
        confidence_level=0.95,
        rng=np.random.default_rng(12345),
    )
    low, high = reference.confidence_interval
    sd = reference.standard_error
    row = pick(rows, analysis="swap", statistic="delta", rule="strict", output=A, language="pooled")
    assert row["estimate"] == pytest.approx(delta_statistic(*data), rel=1e-12)
    assert high - low > 4, "a record whose interval is several points wide"
    # both are Monte Carlo estimates: agree within 0.5 points (about 4 standard errors of the difference)
    assert row["ci_low"] == pytest.approx(low, abs=max(0.5, 0.15 * sd))
    assert row["ci_high"] == pytest.approx(high, abs=max(0.5, 0.15 * sd))
    # per-language row: the same single stratum
    en = pick(rows, analysis="swap", statistic="delta", rule="strict", output=A, language="en")
    assert (en["estimate"], en["ci_low"], en["ci_high"]) == (row["estimate"], row["ci_low"], row["ci_high"])


def test_paired_interval_is_not_the_unpaired_one(tmp_path):
    """With two references that mostly agree, resampling the two scores independently gives a much wider
    interval than the paired one (the scores move together replicate by replicate)."""
    lines = one_language_record(3, 80)
    for index, line in enumerate(lines):
        if index % 5:  # the reviewer agrees with the delivered gold on 4 items in 5
            line["labellings"][R] = line["labellings"][D]
    rows = audit_items(tmp_path, lines, audit={"resamples": 2000, "seed": 5}).rows
    tp_1, size_o, size_1, tp_2, size_2 = delta_counts(lines, A, D, R)
    rng = np.random.default_rng(0)
    n = len(lines)
    first = rng.integers(0, n, size=(2000, n))
    second = rng.integers(0, n, size=(2000, n))
    unpaired = 100 * 2 * tp_1[first].sum(1) / (size_o[first].sum(1) + size_1[first].sum(1)) - 100 * 2 * tp_2[
        second
    ].sum(1) / (size_o[second].sum(1) + size_2[second].sum(1))
    unpaired_width = np.diff(np.quantile(unpaired, [0.025, 0.975]))[0]
    row = pick(rows, analysis="swap", statistic="delta", rule="strict", output=A, language="pooled")
    assert row["ci_high"] - row["ci_low"] < 0.8 * unpaired_width


def test_pooled_interval_matches_a_direct_stratified_loop(tmp_path):
    """Pooled statistics: each replicate draws n_l items from each language, then sums across languages."""
    lines = one_language_record(4, 50, "en") + one_language_record(5, 15, "sw")
    rows = audit_items(tmp_path, lines, audit={"resamples": REPLICATES, "seed": 9}).rows
    rng = np.random.default_rng(2024)
    parts = []
    for language in ("en", "sw"):
        data = delta_counts([line for line in lines if line["language"] == language], A, D, R)
        n = len(data[0])
        draws = rng.integers(0, n, size=(REPLICATES, n))
        parts.append([column[draws].sum(axis=1) for column in data])
    tp_1, size_o, size_1, tp_2, size_2 = (parts[0][k] + parts[1][k] for k in range(5))
    replicates = 100 * 2 * tp_1 / (size_o + size_1) - 100 * 2 * tp_2 / (size_o + size_2)
    low, high = np.quantile(replicates, [0.025, 0.975])
    sd = replicates.std()
    row = pick(rows, analysis="swap", statistic="delta", rule="strict", output=A, language="pooled")
    assert high - low > 4
    assert row["ci_low"] == pytest.approx(low, abs=max(0.5, 0.15 * sd))
    assert row["ci_high"] == pytest.approx(high, abs=max(0.5, 0.15 * sd))


# ---------------------------------------------------------------------------------------------------------
# percentile_interval and bootstrap_p_value against direct computations


def random_replicates(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0.5, 2.0, size=(3, 4, 101)), 1)  # rounding makes exact zeros and ties
    values[0, 1, :10] = np.nan  # mostly defined
    values[0, 2, :50] = np.nan  # 51 of 101 defined: more than half
    values[0, 3, :51] = np.nan  # 50 of 101 defined: fewer than half -> null
    values[1, 0, :] = np.nan  # never defined
    values[1, 1, :] = 0.0  # always zero
    values[1, 2, :] = 3.0  # always positive
    values[2, 0, ::2] = np.nan  # 50 of 101 defined -> null
    values[2, 1, 1::2] = np.nan  # 51 of 101 defined
    return values


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.5])
def test_percentile_interval_matches_np_quantile(seed, confidence):
    values = random_replicates(seed)
    low, high = percentile_interval(values, confidence)
    assert low.shape == high.shape == values.shape[:-1]
    for index in np.ndindex(values.shape[:-1]):
        row = values[index]
        defined = row[~np.isnan(row)]
        if 2 * len(defined) < len(row):
            assert math.isnan(low[index]) and math.isnan(high[index]), index
            continue
        expected = np.quantile(defined, [(1 - confidence) / 2, (1 + confidence) / 2])  # numpy's linear default
        assert low[index] == pytest.approx(expected[0], rel=1e-12, abs=1e-12), index
        assert high[index] == pytest.approx(expected[1], rel=1e-12, abs=1e-12), index


@pytest.mark.parametrize("workers", [2, 3])
def test_percentile_interval_in_parts_on_threads_is_that_of_one_thread(monkeypatch, workers):
    """The complete rows taken in parts on threads (a part of 101 replicates or more each, here): the same floats
    as on one thread, in every row's place, with the partly defined and undefined rows among them."""
    values = np.concatenate([random_replicates(seed) for seed in range(12)])  # 36 x 4 rows, ties and NaNs
    monkeypatch.setattr(bootstrap, "QUANTILE_VALUES", 101)
    for confidence in (0.95, 0.5):
        found = []
        for count in (1, workers):
            monkeypatch.setattr(bootstrap, "WORKERS", count)
            monkeypatch.setattr(threads, "WORKERS", count)
            found.append(percentile_interval(values, confidence))
        for one, other in zip(*found):
            assert np.array_equal(one, other, equal_nan=True) and not np.isnan(one).all()


def test_percentile_interval_exactly_half_defined_is_kept():
    row = np.array([[1.0, 2.0, np.nan, np.nan]])
    low, high = percentile_interval(row, 0.5)
    assert (low[0], high[0]) == (1.25, 1.75)


def direct_p_value(row: np.ndarray) -> float:
    defined = [value for value in row if not math.isnan(value)]
    if 2 * len(defined) < len(row):
        return math.nan
    at_most = sum(1 for value in defined if value <= 0)
    at_least = sum(1 for value in defined if value >= 0)
    return min(1.0, 2 * (1 + min(at_most, at_least)) / (len(defined) + 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_p_value_matches_a_direct_loop(seed):
    values = random_replicates(seed)
    p_values = bootstrap_p_value(values)
    assert p_values.shape == values.shape[:-1]
    for index in np.ndindex(values.shape[:-1]):
        expected = direct_p_value(values[index])
        if math.isnan(expected):
            assert math.isnan(p_values[index]), index
        else:
            assert p_values[index] == pytest.approx(expected, rel=1e-12), index


def test_bootstrap_p_value_known_cases():
    zeros = np.zeros(99)
    assert bootstrap_p_value(zeros[None])[0] == 1.0  # min(1, 2 * 100 / 100)
    positive = np.ones(99)
    assert bootstrap_p_value(positive[None])[0] == pytest.approx(2 / 100)
    mixed = np.concatenate([np.full(90, 2.0), np.full(9, -1.0)])
    assert bootstrap_p_value(mixed[None])[0] == pytest.approx(2 * (1 + 9) / 100)
