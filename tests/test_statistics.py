"""Every statistic of docs/method.md section 3 on small records computed by hand, and the results contract.

The main record (below) is small enough to work through on paper. Its strict span sets, written
``P05`` for (0, 5, PER), ``L1015`` for (10, 15, LOC) and so on:

    item   lang third  A                B               D (delivered)  R (reviewer)
    en-1   en   false  {P05, L1015}*    {P05, O1015}    {P05, L1015}   {P05, O1015}     * P05 listed twice
    en-2   en   true   {P04}            {P04, L69}      {P04}          {} present-empty
    en-3   en   false  {L26, O26}**     {L26}           {L26}          {L26, P812}      ** relaxed: one span
    en-4   en   false  {P03}            {P13}           {P03}          absent -> corpus, not audited
    en-5   en   false  {P03}            {} present      {L03}          {P03}            decontaminated
    en-7   en   (none) absent           {P02}           {P02}          {P02}            in no subset
    de-1   de   false  {P02}            {P02}           {P02}          {L02}            a one-item language

corpus = en-1..en-5 (en: 5 items) + de-1 (de: 1) = 6; audited = corpus - en-4 = en 4 + de 1 = 5;
decontaminated = {en-5}. Relaxed sets drop the type: en-1's four labellings are all {05, 1015}, en-3's
A is {26}, en-5's D is {03}, de-1's R is {02}.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, by_language, item, pick, select

from refsens_report.analyses.registry import ANALYSES
from refsens_report.bootstrap import resampled_sums, stratified_weights
from refsens_report.cli import main
from refsens_report.results import COLUMNS, LABEL_COLUMNS, results_csv

RESAMPLES = 200  # every one-item stratum's replicates equal its estimate; p = 2/(B+1) or 1 there


def exact(value):
    return pytest.approx(value, rel=1e-12, abs=1e-12)


def main_items(reviewer_on_en_2=(), third_pass_on_en_4=True):
    """Return the main record's lines (see the module docstring)."""
    en_4_meta = {"third_pass": False} if third_pass_on_en_4 else {}
    return [
        item(
            "en-1",
            "en",
            meta={"third_pass": False},
            **{
                A: [[0, 5, "PER"], [10, 15, "LOC"], [0, 5, "PER"]],
                B: [[0, 5, "PER"], [10, 15, "ORG"]],
                D: [[0, 5, "PER"], [10, 15, "LOC"]],
                R: [[10, 15, "ORG"], [0, 5, "PER"]],
            },
        ),
        item(
            "en-2",
            "en",
            meta={"third_pass": True},
            **{A: [[0, 4, "PER"]], B: [[0, 4, "PER"], [6, 9, "LOC"]], D: [[0, 4, "PER"]], R: reviewer_on_en_2},
        ),
        item(
            "en-3",
            "en",
            meta={"third_pass": False},
            **{
                A: [[2, 6, "LOC"], [2, 6, "ORG"]],
                B: [[2, 6, "LOC"]],
                D: [[2, 6, "LOC"]],
                R: [[2, 6, "LOC"], [8, 12, "PER"]],
            },
        ),
        item("en-4", "en", meta=en_4_meta, **{A: [[0, 3, "PER"]], B: [[1, 3, "PER"]], D: [[0, 3, "PER"]]}),
        item(
            "en-5",
            "en",
            meta={"third_pass": False},
            **{A: [[0, 3, "PER"]], B: [], D: [[0, 3, "LOC"]], R: [[0, 3, "PER"]]},
        ),
        item("en-7", "en", **{B: [[0, 2, "PER"]], D: [[0, 2, "PER"]], R: [[0, 2, "PER"]]}),
        item(
            "de-1",
            "de",
            meta={"third_pass": False},
            **{A: [[0, 2, "PER"]], B: [[0, 2, "PER"]], D: [[0, 2, "PER"]], R: [[0, 2, "LOC"]]},
        ),
    ]


@pytest.fixture(scope="module")
def main_results(tmp_path_factory):
    return audit_items(tmp_path_factory.mktemp("main"), main_items(), audit={"resamples": RESAMPLES})


@pytest.fixture(scope="module")
def main_rows(main_results):
    """The rows of the analyses this file computes by hand (the F1 analyses of docs/method.md section 3); an
    analysis added to the registry is tested in its own file."""
    return [row for row in main_results.rows if row["analysis"] in PAPER_ANALYSES]


PAPER_ANALYSES = {
    "agreement",
    "neutrality",
    "swap",
    "range",
    "interaction",
    "band",
    "decontaminated",
    "duplicates",
    "type_confusion",
    "by_type",
    "disagreements",
    "leaderboard",
    "aggregation",
}


CORPUS_N = {"de": 1, "en": 5, "pooled": 6}
AUDITED_N = {"de": 1, "en": 4, "pooled": 5}

# Per-item counts on the audited items (en-1, en-2, en-3, en-5 | de-1), strict:
#   |A| = 2+1+2+1 | 1   |B| = 2+2+1+0 | 1   |D| = 2+1+1+1 | 1   |R| = 2+0+2+1 | 1
#   TP(A,D) = 2+1+1+0 | 1   TP(A,R) = 1+0+1+1 | 0   TP(B,D) = 1+1+1+0 | 1   TP(B,R) = 2+0+1+0 | 0
#   TP(A,B) = 1+1+1+0 | 1
# relaxed:
#   |A| = 2+1+1+1 | 1   |B| = 2+2+1+0 | 1   |D| = 2+1+1+1 | 1   |R| = 2+0+2+1 | 1
#   TP(A,D) = 2+1+1+1 | 1   TP(A,R) = 2+0+1+1 | 1   TP(B,D) = 2+1+1+0 | 1   TP(B,R) = 2+0+1+0 | 1
#   TP(A,B) = 2+1+1+0 | 1
F1_STRICT = {
    (A, D): {"en": 100 * 2 * 4 / (6 + 5), "de": 100 * 2 * 1 / (1 + 1), "pooled": 100 * 2 * 5 / (7 + 6)},
    (A, R): {"en": 100 * 2 * 3 / (6 + 5), "de": 100 * 2 * 0 / (1 + 1), "pooled": 100 * 2 * 3 / (7 + 6)},
    (B, D): {"en": 100 * 2 * 3 / (5 + 5), "de": 100 * 2 * 1 / (1 + 1), "pooled": 100 * 2 * 4 / (6 + 6)},
    (B, R): {"en": 100 * 2 * 3 / (5 + 5), "de": 100 * 2 * 0 / (1 + 1), "pooled": 100 * 2 * 3 / (6 + 6)},
    (A, B): {"en": 100 * 2 * 3 / (6 + 5), "de": 100 * 2 * 1 / (1 + 1), "pooled": 100 * 2 * 4 / (7 + 6)},
}
F1_RELAXED = {
    (A, D): {"en": 100 * 2 * 5 / (5 + 5), "de": 100.0, "pooled": 100 * 2 * 6 / (6 + 6)},
    (A, R): {"en": 100 * 2 * 4 / (5 + 5), "de": 100.0, "pooled": 100 * 2 * 5 / (6 + 6)},
    (B, D): {"en": 100 * 2 * 4 / (5 + 5), "de": 100.0, "pooled": 100 * 2 * 5 / (6 + 6)},
    (B, R): {"en": 100 * 2 * 3 / (5 + 5), "de": 100.0, "pooled": 100 * 2 * 4 / (6 + 6)},
    (A, B): {"en": 100 * 2 * 4 / (5 + 5), "de": 100.0, "pooled": 100 * 2 * 5 / (6 + 6)},
}
F1 = {"strict": F1_STRICT, "relaxed": F1_RELAXED}


def f1(rule, output, reference):
    pair = (output, reference) if (output, reference) in F1[rule] else (reference, output)
    return F1[rule][pair]


def combine(function, *tables):
    return {language: function(*(table[language] for table in tables)) for language in tables[0]}


def expected_rows():
    """Return [(labels, {language: estimate}, n_items per language)] for every row of the main record."""
    rows = []

    def add(labels, values, n):
        rows.append((labels, values, n))

    agreement = {"analysis": "agreement", "output": A, "reference": B, "subset": "corpus"}
    # F1(A, B) on the corpus (en-4 counts here): strict TP = 1+1+1+0+0 | 1, |A| = 2+1+2+1+1 | 1,
    # |B| = 2+2+1+1+0 | 1; relaxed TP = 2+1+1+0+0 | 1, |A| = 2+1+1+1+1 | 1, |B| = 2+2+1+1+0 | 1
    add(
        {**agreement, "statistic": "f1", "rule": "strict"},
        {"de": 100.0, "en": 100 * 2 * 3 / (7 + 6), "pooled": 100 * 2 * 4 / (8 + 7)},
        CORPUS_N,
    )
    add(
        {**agreement, "statistic": "f1", "rule": "relaxed"},
        {"de": 100.0, "en": 100 * 2 * 4 / (6 + 6), "pooled": 100 * 2 * 5 / (7 + 7)},
        CORPUS_N,
    )
    # strict sets equal only on de-1
    add({**agreement, "statistic": "identical"}, {"de": 100.0, "en": 0.0, "pooled": 100 * 1 / 6}, CORPUS_N)
    # TP_strict / TP_relaxed: en 3/4, de 1/1, pooled 4/5
    # n_items of a ratio over a sub-population is that sub-population (docs/method.md section 5): type agreement is
    # over the items with a boundary-matched span (en-1, en-2, en-3, de-1; not en-4, en-5)
    add(
        {**agreement, "statistic": "type_agreement"},
        {"de": 100.0, "en": 100 * 3 / 4, "pooled": 100 * 4 / 5},
        {"de": 1, "en": 3, "pooled": 4},
    )
    # third pass only on en-2
    add({**agreement, "statistic": "third_pass"}, {"de": 0.0, "en": 100 * 1 / 5, "pooled": 100 * 1 / 6}, CORPUS_N)
    # A != B and no third pass: en-1, en-3, en-4, en-5; of those D == A on en-1 and en-4
    add({**agreement, "statistic": "silent"}, {"de": 0.0, "en": 100 * 2 / 5, "pooled": 100 * 2 / 6}, CORPUS_N)
    # de has no unadjudicated split: 0/0, undefined
    # default to first is over the items where A != B and no third pass fired: en-1, en-3, en-4, en-5
    add(
        {**agreement, "statistic": "default_to_first"},
        {"de": None, "en": 100 * 2 / 4, "pooled": 100 * 2 / 4},
        {"de": 0, "en": 4, "pooled": 4},
    )

    neutrality = {"analysis": "neutrality", "subset": "audited"}
    # D == A on en-1, en-2, de-1; D == B on en-3, de-1; R == A on en-5; R == B on en-1
    rate = {
        (D, A): {"de": 100.0, "en": 100 * 2 / 4, "pooled": 100 * 3 / 5},
        (D, B): {"de": 100.0, "en": 100 * 1 / 4, "pooled": 100 * 2 / 5},
        (R, A): {"de": 0.0, "en": 100 * 1 / 4, "pooled": 100 * 1 / 5},
        (R, B): {"de": 0.0, "en": 100 * 1 / 4, "pooled": 100 * 1 / 5},
    }
    copied = {
        D: {"de": 100.0, "en": 100 * 3 / 4, "pooled": 100 * 4 / 5},
        R: {"de": 0.0, "en": 100 * 2 / 4, "pooled": 100 * 2 / 5},
    }
    for reference in (D, R):
        for annotator in (A, B):
            add(
                {**neutrality, "statistic": "rate", "output": annotator, "reference": reference},
                rate[reference, annotator],
                AUDITED_N,
            )
        add(
            {**neutrality, "statistic": "skew", "output": A, "output_2": B, "reference": reference},
            combine(lambda x, y: x - y, rate[reference, A], rate[reference, B]),
            AUDITED_N,
        )
        add({**neutrality, "statistic": "copied", "reference": reference}, copied[reference], AUDITED_N)

    for rule in ("strict", "relaxed"):
        swap = {"analysis": "swap", "rule": rule, "subset": "audited"}
        for output in (A, B):
            for reference in (D, R):
                add(
                    {**swap, "statistic": "score", "output": output, "reference": reference},
                    f1(rule, output, reference),
                    AUDITED_N,
                )
            add(
                {**swap, "statistic": "delta", "output": output, "reference": D, "reference_2": R},
                combine(lambda x, y: x - y, f1(rule, output, D), f1(rule, output, R)),
                AUDITED_N,
            )

        ranged = {"analysis": "range", "rule": rule, "subset": "audited"}
        for output, golds in ((A, (B, D, R)), (B, (A, D, R))):
            for gold in golds:
                add(
                    {**ranged, "statistic": "score", "output": output, "reference": gold},
                    f1(rule, output, gold),
                    AUDITED_N,
                )
            add(
                {**ranged, "statistic": "range", "output": output},
                combine(lambda *s: max(s) - min(s), *(f1(rule, output, gold) for gold in golds)),
                AUDITED_N,
            )

        interaction = {"analysis": "interaction", "rule": rule, "subset": "audited", "output": A, "output_2": B}
        margin = {ref: combine(lambda x, y: x - y, f1(rule, A, ref), f1(rule, B, ref)) for ref in (D, R)}
        for reference in (D, R):
            add({**interaction, "statistic": "margin", "reference": reference}, margin[reference], AUDITED_N)
        add(
            {**interaction, "statistic": "swing", "reference": D, "reference_2": R},
            combine(lambda x, y: x - y, margin[D], margin[R]),
            AUDITED_N,
        )

    # neutrality/skew_permutation_p: d = [R = A] - [R = B] on the audited items. D: en-1 +1, en-2 +1, en-3 -1,
    # en-5 0 | de-1 0 (equals both); R: en-1 -1, en-5 +1, others 0. Every sum is 1 or 0 on 3 or 2 informative
    # items, so every sign vector gives |sum| >= it: p = 1 (exact: 2^m sign vectors). n_items = informative items.
    for reference, informative in ((D, {"de": 0, "en": 3, "pooled": 3}), (R, {"de": 0, "en": 2, "pooled": 2})):
        add(
            {**neutrality, "statistic": "skew_permutation_p", "output": A, "output_2": B, "reference": reference},
            {"de": 1.0, "en": 1.0, "pooled": 1.0},
            informative,
        )

    # aggregation: silent = A != B and no third pass: en-1, en-3, en-5 (audited; en-4 is not). Each what-if keeps D
    # on en-2 and de-1 and puts on the silent items (strict | relaxed sets):
    #   keep_b  en-1 {P05, O1015} | {05, 1015}         en-3 {L26} | {26}        en-5 {} | {}
    #   union   en-1 {P05, L1015, O1015} | {05, 1015}  en-3 {L26, O26} | {26}   en-5 {P03} | {03}
    #   inter.  en-1 {P05} | {05}                      en-3 {L26} | {26}        en-5 {} | {}
    #   keep_a  A's sets (coin's expectation is the mean of keep_a's and keep_b's counts)
    # (|W|, TP(A, W), TP(B, W)) summed over en | pooled (de-1 adds 1, 1, 1 and scores 100 everywhere):
    counts = {
        ("strict", "keep_b"): ((4, 3, 4), (5, 4, 5)),
        ("relaxed", "keep_b"): ((4, 4, 4), (5, 5, 5)),
        ("strict", "merge_union"): ((7, 6, 4), (8, 7, 5)),
        ("relaxed", "merge_union"): ((5, 5, 4), (6, 6, 5)),
        ("strict", "merge_intersection"): ((3, 3, 3), (4, 4, 4)),
        ("relaxed", "merge_intersection"): ((3, 3, 3), (4, 4, 4)),
        ("strict", "keep_a"): ((6, 6, 3), (7, 7, 4)),
        ("relaxed", "keep_a"): ((5, 5, 4), (6, 6, 5)),
    }
    size = {("strict", A): (6, 7), ("strict", B): (5, 6), ("relaxed", A): (5, 6), ("relaxed", B): (5, 6)}
    for rule in ("strict", "relaxed"):
        for what_if in ("keep_b", "merge_union", "merge_intersection", "coin"):
            for index, output in enumerate((A, B), start=1):

                def score(where: int, what_if=what_if, index=index, output=output, rule=rule) -> float:
                    if what_if == "coin":  # expected counts: the mean of keep_a's and keep_b's
                        first, second = counts[rule, "keep_a"][where], counts[rule, "keep_b"][where]
                        return (
                            100
                            * (first[index] + second[index])
                            / (size[rule, output][where] + (first[0] + second[0]) / 2)
                        )
                    found = counts[rule, what_if][where]
                    return 100 * 2 * found[index] / (size[rule, output][where] + found[0])

                labels = {
                    "analysis": "aggregation",
                    "rule": rule,
                    "subset": "audited",
                    "output": output,
                    "reference": f"what_if:{what_if}",
                }
                scores = {"de": 100.0, "en": score(0), "pooled": score(1)}
                add({**labels, "statistic": "score"}, scores, AUDITED_N)
                add(
                    {**labels, "statistic": "delta", "reference_2": D},
                    combine(lambda x, y: x - y, scores, f1(rule, output, D)),
                    AUDITED_N,
                )
        if rule == "strict":
            # strict equality with A and B per item (en-1, en-2, en-3, en-5 | de-1 equals both):
            # keep_b: B, A, B, B -> en 1/4 - 3/4, pooled 2/5 - 4/5; union: -, A, A, A -> 3/4 - 0, 4/5 - 1/5;
            # intersection: -, A, B, B -> 1/4 - 2/4, 2/5 - 3/5; keep_a: A, A, A, A -> 4/4 - 0, 5/5 - 1/5
            skew = {
                "keep_b": (-50.0, -40.0),
                "merge_union": (75.0, 60.0),
                "merge_intersection": (-25.0, -20.0),
                "coin": ((100.0 - 50.0) / 2, (80.0 - 40.0) / 2),
            }
            for what_if, (en, pooled) in skew.items():
                add(
                    {
                        "analysis": "aggregation",
                        "statistic": "skew",
                        "subset": "audited",
                        "output": A,
                        "output_2": B,
                        "reference": f"what_if:{what_if}",
                    },
                    {"de": 0.0, "en": en, "pooled": pooled},
                    AUDITED_N,
                )

    # decontaminated = {en-5}: A {P03}, B {}, D {L03}, R {P03}
    # strict: F1(A,D) = 0/(1+1), F1(B,D) = 0/(0+1), F1(A,R) = 2/(1+1), F1(B,R) = 0/(0+1)
    # relaxed: D becomes {03}: F1(A,D) = 100, F1(B,D) = 0; R as strict
    decontaminated = {"analysis": "decontaminated", "subset": "decontaminated", "output": A, "output_2": B}
    one = {"en": 1, "pooled": 1}
    for rule, margin_d, margin_r in (("strict", 0.0 - 0.0, 100.0 - 0.0), ("relaxed", 100.0 - 0.0, 100.0 - 0.0)):
        labels = {**decontaminated, "rule": rule}
        add({**labels, "statistic": "margin", "reference": D}, {"en": margin_d, "pooled": margin_d}, one)
        add({**labels, "statistic": "margin", "reference": R}, {"en": margin_r, "pooled": margin_r}, one)
        add(
            {**labels, "statistic": "swing", "reference": D, "reference_2": R},
            {"en": margin_d - margin_r, "pooled": margin_d - margin_r},
            one,
        )
    return rows


EXPECTED = expected_rows()


def full_labels(labels):
    """Every text column of the contract: unnamed ones must be empty."""
    text = ("analysis", "statistic", "rule", "output", "output_2", "reference", "reference_2", "subset", "policy")
    return {column: labels.get(column, "") for column in text}


def label_id(labels):
    return "-".join(str(value) for value in labels.values() if value)


@pytest.mark.parametrize("labels, values, n_items", EXPECTED, ids=[label_id(e[0]) for e in EXPECTED])
def test_hand_computed_estimate(main_rows, labels, values, n_items):
    found = by_language(main_rows, **full_labels(labels))
    assert sorted(found) == sorted(values), "one row per language present in the subset, then pooled"
    for language, value in values.items():
        row = found[language]
        if value is None:
            assert row["estimate"] is None, (language, row)
        else:
            assert row["estimate"] == exact(value), (language, row)
        assert row["n_items"] == n_items[language], (language, row)


def test_no_row_beyond_the_hand_computed_ones_and_the_bands(main_rows):
    expected = {
        tuple(full_labels(labels).values()) + (language, "") for labels, values, _ in EXPECTED for language in values
    }
    found = [
        tuple(row[c] for c in COLUMNS[:10] if c != "language") + (row["language"], row["type"]) for row in main_rows
    ]
    assert len(found) == len(set(found)), "no row twice"
    # band rows are checked below; per-type rows (analysis by_type) in test_by_type.py
    extra = {key for key in found if key not in expected and key[0] not in ("band", "by_type")}
    assert not extra
    assert len([row for row in main_rows if row["analysis"] == "band"]) == 2 * 3  # per rule: A, B, overall


def test_the_worked_numbers_themselves(main_rows):
    """Spot checks with the arithmetic spelled out, independent of the tables above."""
    swing = by_language(main_rows, analysis="interaction", statistic="swing", rule="strict")
    # en: (800/11 - 60) - (600/11 - 60) = 200/11
    assert swing["en"]["estimate"] == exact(200 / 11)
    # pooled: (1000/13 - 800/12) - (600/13 - 600/12)
    assert swing["pooled"]["estimate"] == exact((1000 / 13 - 800 / 12) - (600 / 13 - 50))
    relaxed = by_language(main_rows, analysis="interaction", statistic="swing", rule="relaxed")
    assert relaxed["pooled"]["estimate"] == exact(0.0)
    ranges = by_language(main_rows, analysis="range", statistic="range", rule="strict", output=B)
    # B against A, D, R in en: 600/11, 60, 60
    assert ranges["en"]["estimate"] == exact(60 - 600 / 11)


def test_one_item_language_has_degenerate_intervals(main_rows):
    """Every replicate of a one-item stratum draws that item: the interval collapses onto the estimate."""
    de_rows = [
        row
        for row in main_rows
        if row["language"] == "de" and row["estimate"] is not None and row["statistic"] != "skew_permutation_p"
    ]  # a permutation p has no interval
    assert len(de_rows) > 40
    for row in de_rows:
        assert row["ci_low"] == exact(row["estimate"]), row
        assert row["ci_high"] == exact(row["estimate"]), row
    for row in de_rows:
        if row["statistic"] in {"swing", "delta", "skew", "margin"}:
            # all B replicates equal s: s != 0 gives 2 (1 + 0) / (B + 1); s == 0 gives min(1, 2 (1 + B) / (B + 1)) = 1
            expected = 1.0 if row["estimate"] == 0 else 2 / (RESAMPLES + 1)
            assert row["p_value"] == exact(expected), row


def test_decontaminated_p_values_on_one_item(main_rows):
    strict_swing = pick(main_rows, analysis="decontaminated", statistic="swing", rule="strict", language="pooled")
    assert strict_swing["estimate"] == exact(-100.0)
    assert (strict_swing["ci_low"], strict_swing["ci_high"]) == (exact(-100.0), exact(-100.0))
    assert strict_swing["p_value"] == exact(2 / (RESAMPLES + 1))
    relaxed_swing = pick(main_rows, analysis="decontaminated", statistic="swing", rule="relaxed", language="pooled")
    assert relaxed_swing["p_value"] == exact(1.0)


def test_p_values_only_on_tested_statistics_and_holm_only_on_interaction_swings(main_rows):
    for row in main_rows:
        if row["statistic"] in {"swing", "delta", "skew", "margin"} and row["estimate"] is not None:
            assert row["p_value"] is not None and 0 < row["p_value"] <= 1, row
        elif row["statistic"] not in {"swing", "delta", "skew", "margin"}:
            assert row["p_value"] is None, row
        if row["analysis"] == "interaction" and row["statistic"] == "swing":
            assert row["p_holm"] is not None and row["p_value"] <= row["p_holm"] <= 1, row
        else:
            assert row["p_holm"] is None, row


def test_holm_by_hand_on_the_interaction_family(main_rows):
    family = select(main_rows, analysis="interaction", statistic="swing")
    assert len(family) == 6  # (de, en, pooled) x (strict, relaxed)
    p = [row["p_value"] for row in family]
    order = sorted(range(len(p)), key=lambda i: p[i])
    running, adjusted = 0.0, [0.0] * len(p)
    for rank, index in enumerate(order):
        running = max(running, (len(p) - rank) * p[index])
        adjusted[index] = min(1.0, running)
    assert [row["p_holm"] for row in family] == [exact(value) for value in adjusted]


def test_intervals_on_the_rows_that_need_them(main_rows):
    needing = {
        ("neutrality", "skew"),
        ("swap", "delta"),
        ("interaction", "margin"),
        ("interaction", "swing"),
        ("decontaminated", "margin"),
        ("decontaminated", "swing"),
    }
    for row in main_rows:
        if (row["analysis"], row["statistic"]) in needing:
            assert row["ci_low"] is not None and row["ci_high"] is not None, row
            assert row["ci_low"] <= row["ci_high"]


def test_band(main_rows):
    for rule in ("strict", "relaxed"):
        band = {}
        for output in (A, B):
            delta = pick(main_rows, analysis="swap", statistic="delta", rule=rule, output=output, language="pooled")
            row = pick(
                main_rows,
                **full_labels(
                    {"analysis": "band", "statistic": "band", "rule": rule, "output": output, "subset": "audited"}
                ),
                language="pooled",
            )
            band[output] = max(abs(delta["ci_low"]), abs(delta["ci_high"]))
            assert row["estimate"] == exact(band[output])
            assert row["n_items"] == AUDITED_N["pooled"]
        overall = pick(
            main_rows,
            **full_labels({"analysis": "band", "statistic": "band", "rule": rule, "subset": "audited"}),
            language="pooled",
        )
        if rule == "strict":
            # pooled |delta|: A 400/13 = 30.8 > B 800/12 - 50 = 16.7, so the overall band is A's
            assert overall["estimate"] == exact(band[A])
        else:
            # relaxed pooled deltas tie at 200/12: either output's band
            assert overall["estimate"] in (exact(band[A]), exact(band[B]))


def test_record_summary_counts_subsets(main_results):
    subsets = main_results.record["subsets"]
    assert subsets["corpus"] == CORPUS_N
    assert subsets["audited"] == AUDITED_N
    assert subsets["decontaminated"] == {"en": 1, "pooled": 1}


# ---------------------------------------------------------------------------------------------------------
# Present-empty versus absent, third pass, repeated spans, relaxed types


def test_absent_reviewer_removes_the_item_from_audited_but_not_from_corpus(tmp_path):
    """en-2's reviewer absent instead of []: audited loses en-2, the corpus keeps it."""
    rows = audit_items(tmp_path, main_items(reviewer_on_en_2=None), audit={"resamples": 50}).rows
    assert pick(rows, analysis="agreement", statistic="identical", language="pooled")["n_items"] == 6
    rate = by_language(rows, analysis="neutrality", statistic="rate", output=A, reference=D)
    # audited en = en-1, en-3, en-5: D == A on en-1 only
    assert rate["en"]["estimate"] == exact(100 * 1 / 3)
    assert rate["en"]["n_items"] == 3 and rate["pooled"]["n_items"] == 4
    # and the scores no longer see en-2: strict F1(A, R) en: TP 1+1+1, |A| 2+2+1, |R| 2+2+1
    score = pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=R, language="en")
    assert score["estimate"] == exact(100 * 2 * 3 / (5 + 5))


def test_present_empty_reviewer_counts_as_zero_spans(main_rows):
    # with R = [] on en-2, B's two spans there are both false positives against R; F1(B,R) strict en =
    # 2*3/(5+5): had en-2 been dropped it would be 2*3/(3+5)
    score = pick(main_rows, analysis="swap", statistic="score", rule="strict", output=B, reference=R, language="en")
    assert score["estimate"] == exact(100 * 2 * 3 / (5 + 5))


def test_third_pass_rows_need_every_corpus_item_to_record_it(tmp_path):
    rows = audit_items(tmp_path, main_items(third_pass_on_en_4=False), audit={"resamples": 50}).rows
    statistics = {row["statistic"] for row in select(rows, analysis="agreement")}
    assert statistics == {"f1", "identical", "type_agreement"}


def test_third_pass_outside_the_corpus_does_not_matter(main_rows):
    # en-7 (no meta at all) is outside the corpus, so the third-pass rows are still there
    assert select(main_rows, analysis="agreement", statistic="third_pass")


def one_item(tmp_path, a, b, rules=("strict", "relaxed")):
    spans = [[0, 1, "X"]]
    rows = audit_items(
        tmp_path,
        [item("en-1", "en", **{A: a, B: b, D: spans, R: spans})],
        audit={"resamples": 20, "rules": list(rules)},
    ).rows
    return rows


def test_a_repeated_span_counts_once(tmp_path):
    rows = one_item(tmp_path, [[0, 1, "X"], [0, 1, "X"], [0, 1, "X"]], [[0, 1, "X"]])
    assert pick(rows, analysis="agreement", statistic="identical", language="en")["estimate"] == exact(100.0)
    assert pick(rows, analysis="agreement", statistic="f1", rule="strict", language="en")["estimate"] == exact(100.0)
    # against D = {X01}: TP 1, |A| 1 (not 3)
    assert pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=D, language="en")[
        "estimate"
    ] == exact(100.0)


def test_same_boundaries_two_types_are_one_span_under_relaxed(tmp_path):
    rows = one_item(tmp_path, [[0, 1, "X"], [0, 1, "Y"]], [[0, 1, "X"]])
    # strict: TP 1, |A| 2, |B| 1 -> 2/3; relaxed: {01} vs {01} -> 100
    assert pick(rows, analysis="agreement", statistic="f1", rule="strict", language="en")["estimate"] == exact(
        100 * 2 * 1 / (2 + 1)
    )
    assert pick(rows, analysis="agreement", statistic="f1", rule="relaxed", language="en")["estimate"] == exact(100.0)
    # TP_strict 1 / TP_relaxed 1
    assert pick(rows, analysis="agreement", statistic="type_agreement", language="en")["estimate"] == exact(100.0)
    assert pick(rows, analysis="agreement", statistic="identical", language="en")["estimate"] == exact(0.0)


def test_type_disagreement(tmp_path):
    rows = one_item(tmp_path, [[0, 1, "X"], [2, 4, "Y"], [5, 6, "Z"]], [[0, 1, "Y"], [2, 4, "Y"], [7, 8, "Z"]])
    # boundary matches: 01, 24 -> TP_relaxed 2; types agree on 24 only -> TP_strict 1
    assert pick(rows, analysis="agreement", statistic="type_agreement", language="en")["estimate"] == exact(50.0)


def test_rules_config_limits_the_rules(tmp_path):
    rows = one_item(tmp_path, [[0, 1, "X"]], [[0, 1, "X"]], rules=("relaxed",))
    assert {row["rule"] for row in rows} == {"", "relaxed"}


# ---------------------------------------------------------------------------------------------------------
# Undefined F1: empty estimate in CSV, null in JSON


@pytest.fixture(scope="module")
def undefined_project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("undefined")
    items = [
        item("xx-1", "xx", meta={"third_pass": False}, **{A: [], B: [], D: [], R: []}),
        item("xx-2", "xx", meta={"third_pass": False}, **{A: [], B: [], D: [], R: []}),
        item("en-1", "en", meta={"third_pass": False}, **{A: [[0, 2, "X"]], B: [[0, 2, "X"]], D: [[0, 2, "X"]], R: []}),
    ]
    from helpers import write_project

    config = write_project(folder, items, audit={"resamples": 50})
    assert main(["audit", str(config), "--out", str(folder / "out")]) == 0
    return folder / "out"


def test_undefined_f1_is_empty_in_csv(undefined_project):
    rows = list(csv.DictReader(io.StringIO((undefined_project / "results.csv").read_text(encoding="utf-8"))))
    f1_rows = {
        row["language"]: row
        for row in rows
        if row["analysis"] == "agreement" and row["statistic"] == "f1" and row["rule"] == "strict"
    }
    # xx: 2TP + FP + FN = 0 + 0 + 0 -> undefined, and undefined in every replicate
    assert f1_rows["xx"]["estimate"] == "" and f1_rows["xx"]["ci_low"] == "" and f1_rows["xx"]["ci_high"] == ""
    assert f1_rows["xx"]["n_items"] == "2"
    # pooled: only en-1's span counts -> 100
    assert float(f1_rows["pooled"]["estimate"]) == 100.0
    # empty sets are equal: identical is defined (100) where F1 is not
    identical = [row for row in rows if row["statistic"] == "identical" and row["language"] == "xx"]
    assert float(identical[0]["estimate"]) == 100.0
    # F1(A, R): R is empty everywhere, A only on en-1: 2*0/(1+0) = 0 in en, undefined in xx
    score = [
        row
        for row in rows
        if row["analysis"] == "swap"
        and row["statistic"] == "score"
        and row["rule"] == "strict"
        and row["output"] == A
        and row["reference"] == R
    ]
    assert {row["language"]: row["estimate"] for row in score} == {"en": "0.0", "xx": "", "pooled": "0.0"}
    # an undefined delta carries no p-value either
    delta = [row for row in rows if row["statistic"] == "delta" and row["language"] == "xx"]
    assert delta and all(row["estimate"] == "" and row["p_value"] == "" for row in delta)


def test_undefined_f1_is_null_in_json(undefined_project):
    document = json.loads((undefined_project / "results.json").read_text(encoding="utf-8"))
    rows = document["rows"]
    xx = pick(rows, analysis="agreement", statistic="f1", rule="strict", language="xx")
    assert xx["estimate"] is None and xx["ci_low"] is None and xx["ci_high"] is None
    assert xx["p_value"] is None and xx["p_holm"] is None
    assert "NaN" not in (undefined_project / "results.json").read_text(encoding="utf-8")
    # the undefined range: every score undefined in xx
    ranged = pick(rows, analysis="range", statistic="range", rule="strict", output=A, language="xx")
    assert ranged["estimate"] is None


# ---------------------------------------------------------------------------------------------------------
# Duplicates: four policies, defective groups


def duplicate_items():
    """Three groups in record order g1, g2, g3, and one unduplicated item (all en), strict sets:

    x1 g1: A {P01} B {L01} D {P01} R {P01}        R copies A, shares nothing with B, A != B: DEFECT
    y1 g2: A {P02} B {P02} D {P02} R {P02}
    w1 g3: A {P01} B {L01} D {P01} R {P01, L01}   D copies A disjointly, but D is primary: no defect
    x2 g1: A {P01} B {L01} D {L01} R {L01}        R copies B disjointly (same group, already defective)
    y2 g2: A {P02} B {P02, L45} D {P02} R {P02, L45}   R copies B but shares P02 with A: no defect
    w2 g3: A {} B {} D {} R {}                    R copies both, disjoint, but A == B: no defect
    z  --: A {P03} B {P03, L59} D {P03} R {P03, L59}
    """

    def dup(item_id, key, a, b, d, r):
        meta = {"third_pass": False} if key is None else {"third_pass": False, "dup_key": key}
        return item(item_id, "en", meta=meta, **{A: a, B: b, D: d, R: r})

    p01, l01, p02, l45, p03, l59 = (
        [0, 1, "PER"],
        [0, 1, "LOC"],
        [0, 2, "PER"],
        [4, 5, "LOC"],
        [0, 3, "PER"],
        [5, 9, "LOC"],
    )
    return [
        dup("x1", "g1", [p01], [l01], [p01], [p01]),
        dup("y1", "g2", [p02], [p02], [p02], [p02]),
        dup("w1", "g3", [p01], [l01], [p01], [p01, l01]),
        dup("x2", "g1", [p01], [l01], [l01], [l01]),
        dup("y2", "g2", [p02], [p02, l45], [p02], [p02, l45]),
        dup("w2", "g3", [], [], [], []),
        dup("z", None, [p03], [p03, l59], [p03], [p03, l59]),
    ]


# strict per-item counts: |A| |B| |D| |R|  TP(A,D) TP(B,D) TP(A,R) TP(B,R)
DUP_COUNTS = {
    "x1": (1, 1, 1, 1, 1, 0, 1, 0),
    "x2": (1, 1, 1, 1, 0, 1, 0, 1),
    "y1": (1, 1, 1, 1, 1, 1, 1, 1),
    "y2": (1, 2, 1, 2, 1, 1, 1, 2),
    "w1": (1, 1, 1, 2, 1, 0, 1, 1),
    "w2": (0, 0, 0, 0, 0, 0, 0, 0),
    "z": (1, 2, 1, 2, 1, 1, 1, 2),
}


def interaction_by_hand(members):
    """Return (margin D, margin R, swing) strict from the per-item counts above."""
    a, b, d, r, tp_ad, tp_bd, tp_ar, tp_br = (sum(DUP_COUNTS[m][k] for m in members) for k in range(8))
    margin_d = 100 * 2 * tp_ad / (a + d) - 100 * 2 * tp_bd / (b + d)
    margin_r = 100 * 2 * tp_ar / (a + r) - 100 * 2 * tp_br / (b + r)
    return margin_d, margin_r, margin_d - margin_r


def test_interaction_by_hand_helper_matches_a_worked_case():
    # drop_all keeps z only: F1(A,D) 100, F1(B,D) 2/3, F1(A,R) 2/3, F1(B,R) 100
    assert interaction_by_hand(["z"]) == pytest.approx((100 / 3, -100 / 3, 200 / 3), rel=1e-12)


@pytest.fixture(scope="module")
def duplicate_results(tmp_path_factory):
    return audit_items(tmp_path_factory.mktemp("dups"), duplicate_items(), audit={"resamples": 50})


def test_defective_group_is_found_and_listed(duplicate_results):
    duplicates = duplicate_results.summaries["duplicates"]
    assert duplicates["groups"] == 3 and duplicates["duplicated_items"] == 6
    assert duplicates["defective_groups"] == [
        {"key": "g1", "items": ["x1", "x2"], "item": "x1", "reference": R, "copies": A}
    ]
    assert duplicate_results.record["excluded"] == {"defective_duplicates": 2, "duplicate_policy": 2}


def test_main_analyses_exclude_defective_groups_then_keep_first(duplicate_results):
    rows = duplicate_results.rows
    # x1, x2 removed (defect), then keep_first keeps y1, w1 (and z)
    margin_d, margin_r, swing = interaction_by_hand(["y1", "w1", "z"])
    assert pick(rows, analysis="interaction", statistic="margin", rule="strict", reference=D, language="pooled")[
        "estimate"
    ] == exact(margin_d)
    row = pick(rows, analysis="interaction", statistic="swing", rule="strict", language="pooled")
    assert row["estimate"] == exact(swing)
    assert row["n_items"] == 3
    # corpus too: identical on y1 only (w1 A != B, z A != B)
    identical = pick(rows, analysis="agreement", statistic="identical", language="pooled")
    assert identical["n_items"] == 3 and identical["estimate"] == exact(100 / 3)


POLICY_MEMBERS = {
    # the robustness analysis does NOT exclude defective groups
    "keep_first": ["x1", "y1", "w1", "z"],
    "keep_last": ["x2", "y2", "w2", "z"],
    "keep_all": ["x1", "y1", "w1", "x2", "y2", "w2", "z"],
    "drop_all": ["z"],
}


@pytest.mark.parametrize("policy", sorted(POLICY_MEMBERS))
def test_duplicate_policies_without_defect_exclusion(duplicate_results, policy):
    members = POLICY_MEMBERS[policy]
    margin_d, margin_r, swing = interaction_by_hand(members)
    labels = {
        "analysis": "duplicates",
        "rule": "strict",
        "output": A,
        "output_2": B,
        "subset": "audited",
        "policy": policy,
    }
    for statistic, reference, reference_2, value in (
        ("margin", D, "", margin_d),
        ("margin", R, "", margin_r),
        ("swing", D, R, swing),
    ):
        found = by_language(
            duplicate_results.rows,
            **full_labels({**labels, "statistic": statistic, "reference": reference, "reference_2": reference_2}),
        )
        assert sorted(found) == ["en", "pooled"]
        for row in found.values():
            assert row["estimate"] == exact(value), (policy, statistic, reference)
            assert row["n_items"] == len(members)
            assert row["p_holm"] is None  # Holm's family is the interaction swings only


def test_duplicate_rows_cover_both_rules_and_four_policies(duplicate_results):
    rows = select(duplicate_results.rows, analysis="duplicates")
    assert {row["policy"] for row in rows} == {"keep_first", "keep_last", "keep_all", "drop_all"}
    assert {row["rule"] for row in rows} == {"strict", "relaxed"}
    assert all(row["subset"] == "audited" for row in rows)
    # policy is set only on duplicates rows
    assert all(row["policy"] == "" for row in duplicate_results.rows if row["analysis"] != "duplicates")


@pytest.mark.parametrize(
    "policy, exclude, members",
    [
        ("keep_first", False, ["x1", "y1", "w1", "z"]),
        ("keep_last", True, ["y2", "w2", "z"]),
        ("keep_all", True, ["y1", "w1", "y2", "w2", "z"]),
        ("drop_all", True, ["z"]),
        ("drop_all", False, ["z"]),
        ("keep_all", False, ["x1", "y1", "w1", "x2", "y2", "w2", "z"]),
    ],
)
def test_configured_policy_and_exclusion_drive_the_main_analyses(tmp_path, policy, exclude, members):
    results = audit_items(
        tmp_path,
        duplicate_items(),
        audit={"resamples": 20, "duplicate_policy": policy, "exclude_defective_duplicates": exclude},
    )
    swing = pick(results.rows, analysis="interaction", statistic="swing", rule="strict", language="pooled")
    assert swing["estimate"] == exact(interaction_by_hand(members)[2])
    assert swing["n_items"] == len(members)
    # the robustness rows do not depend on the main settings
    keep_last = pick(
        results.rows, analysis="duplicates", statistic="swing", rule="strict", policy="keep_last", language="pooled"
    )
    assert keep_last["estimate"] == exact(interaction_by_hand(POLICY_MEMBERS["keep_last"])[2])


def test_no_duplicate_rows_without_duplicate_keys(main_rows):
    assert not select(main_rows, analysis="duplicates")


def test_duplicate_key_name_is_configurable(tmp_path):
    items = duplicate_items()
    for line in items:
        if "dup_key" in line["meta"]:
            line["meta"]["group"] = line["meta"].pop("dup_key")
    results = audit_items(tmp_path, items, audit={"resamples": 20, "duplicate_key": "group"})
    assert [g["key"] for g in results.summaries["duplicates"]["defective_groups"]] == ["g1"]


# ---------------------------------------------------------------------------------------------------------
# The bootstrap against theory


def test_stratified_weights_draw_n_from_each_stratum():
    rng = np.random.default_rng(1)
    for _, weights in stratified_weights(7, 300, rng):
        assert weights.shape[1] == 7
        assert (weights.sum(axis=1) == 7).all()
    # every item equally likely: mean weight 1
    weights = np.concatenate([w for _, w in stratified_weights(7, 4000, np.random.default_rng(2))])
    assert weights.mean(axis=0) == pytest.approx(np.ones(7), abs=0.05)


def test_resampled_sums_keep_each_language_at_its_size():
    columns = np.ones((10, 1))
    strata = [np.arange(0, 3), np.arange(3, 10)]
    sums = resampled_sums(columns, strata, 100, np.random.SeedSequence(0))
    assert (sums[0, :, 0] == 3).all() and (sums[1, :, 0] == 7).all() and (sums[2, :, 0] == 10).all()
    # replicate 0 is the sample itself
    values = np.arange(10, dtype=float)[:, None]
    sums = resampled_sums(values, strata, 5, np.random.SeedSequence(0))
    assert sums[0, 0, 0] == 0 + 1 + 2 and sums[1, 0, 0] == sum(range(3, 10)) and sums[2, 0, 0] == 45


def test_pooled_draws_are_stratified(tmp_path):
    """Two one-item languages, identical in one and not in the other: every stratified replicate pools one
    of each, so pooled identical is 50 in every replicate. An unstratified draw would give 0, 50 or 100."""
    items = [
        item("en-1", "en", **{A: [[0, 1, "X"]], B: [[0, 1, "X"]], D: [], R: []}),
        item("de-1", "de", **{A: [[0, 1, "X"]], B: [], D: [], R: []}),
    ]
    rows = audit_items(tmp_path, items, audit={"resamples": 200}).rows
    pooled = pick(rows, analysis="agreement", statistic="identical", language="pooled")
    assert (pooled["estimate"], pooled["ci_low"], pooled["ci_high"]) == (exact(50.0), exact(50.0), exact(50.0))


def test_differences_are_paired_inside_each_replicate(tmp_path):
    """A reference identical to another under a different name: their delta is 0 in every replicate, so its
    interval is [0, 0] and p = 1, though each score's own interval is wide."""
    lines = []
    for index in range(12):
        spans_a = [[0, 2, "X"]] if index % 3 else [[0, 2, "Y"], [3, 5, "X"]]
        spans_b = [[0, 2, "X"], [3, 5, "X"]] if index % 2 else []
        gold = [[0, 2, "X"]] if index % 4 else [[3, 5, "X"]]
        lines.append(item(f"en-{index:02d}", "en", **{A: spans_a, B: spans_b, D: gold, R: gold}))
    rows = audit_items(tmp_path, lines, audit={"resamples": 300}).rows
    score = pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=D, language="pooled")
    assert score["ci_high"] - score["ci_low"] > 10
    delta = pick(rows, analysis="swap", statistic="delta", rule="strict", output=A, language="pooled")
    assert (delta["estimate"], delta["ci_low"], delta["ci_high"], delta["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    swing = pick(rows, analysis="interaction", statistic="swing", rule="strict", language="pooled")
    assert (swing["ci_low"], swing["ci_high"]) == (0.0, 0.0)
    margin = pick(rows, analysis="interaction", statistic="margin", rule="strict", reference=D, language="pooled")
    assert margin["ci_high"] - margin["ci_low"] > 10


# ---------------------------------------------------------------------------------------------------------
# The results contract (docs/method.md section 5, docs/results.md)

CONTRACT_COLUMNS = [
    "analysis",
    "statistic",
    "rule",
    "language",
    "output",
    "output_2",
    "reference",
    "reference_2",
    "subset",
    "policy",
    "estimate",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "n_items",
    "type",
    "n_clusters",
]


def test_results_csv_columns_in_order(main_rows):
    assert list(COLUMNS) == CONTRACT_COLUMNS
    text = results_csv(main_rows)
    reader = csv.reader(io.StringIO(text))
    assert next(reader) == CONTRACT_COLUMNS
    body = list(reader)
    assert len(body) == len(main_rows)
    assert all(len(line) == len(CONTRACT_COLUMNS) for line in body)


def test_row_order(main_rows):
    analyses = [row["analysis"] for row in main_rows]
    order = [analysis.key for analysis in ANALYSES]  # the registry is the row order
    assert analyses == sorted(analyses, key=order.index)
    paper = [
        "agreement",
        "neutrality",
        "swap",
        "range",
        "interaction",
        "band",
        "decontaminated",
        "duplicates",
        "by_type",
        "aggregation",
    ]
    assert [key for key in order if key in paper] == paper
    # within a statistic: languages sorted, then pooled
    for labels, _values, _ in EXPECTED:
        languages = [row["language"] for row in select(main_rows, **full_labels(labels))]
        assert languages == sorted(set(languages) - {"pooled"}) + ["pooled"]


def test_rule_column(main_rows):
    without_rule = {
        "identical",
        "type_agreement",
        "third_pass",
        "silent",
        "default_to_first",
        "rate",
        "skew",
        "copied",
        "skew_permutation_p",
    }
    for row in main_rows:
        if row["statistic"] in without_rule:
            assert row["rule"] == "", row
        else:
            assert row["rule"] in ("strict", "relaxed"), row


def test_labelling_columns_per_statistic(main_rows):
    """docs/method.md section 5: which labelling columns each statistic fills (others empty)."""
    filled = {
        ("agreement", None): {"output", "reference"},
        ("neutrality", "rate"): {"output", "reference"},
        ("neutrality", "skew"): {"output", "output_2", "reference"},
        ("neutrality", "copied"): {"reference"},
        ("swap", "score"): {"output", "reference"},
        ("swap", "delta"): {"output", "reference", "reference_2"},
        ("range", "score"): {"output", "reference"},
        ("range", "range"): {"output"},
        ("interaction", "margin"): {"output", "output_2", "reference"},
        ("interaction", "swing"): {"output", "output_2", "reference", "reference_2"},
        ("decontaminated", "margin"): {"output", "output_2", "reference"},
        ("decontaminated", "swing"): {"output", "output_2", "reference", "reference_2"},
        ("by_type", "score"): {"output", "reference"},
        ("by_type", "delta"): {"output", "reference", "reference_2"},
        ("neutrality", "skew_permutation_p"): {"output", "output_2", "reference"},
        ("aggregation", "score"): {"output", "reference"},
        ("aggregation", "delta"): {"output", "reference", "reference_2"},
        ("aggregation", "skew"): {"output", "output_2", "reference"},
    }
    labelling = ("output", "output_2", "reference", "reference_2")
    for row in main_rows:
        if row["analysis"] == "band":
            assert {c for c in labelling if row[c]} <= {"output"}
            continue
        key = (row["analysis"], None if row["analysis"] == "agreement" else row["statistic"])
        assert {c for c in labelling if row[c]} == filled[key], row
        assert bool(row["type"]) == (row["analysis"] == "by_type"), row
    for row in select(main_rows, analysis="agreement"):
        assert (row["output"], row["reference"]) == (A, B)


def test_subset_column(main_rows):
    subset = {
        "agreement": "corpus",
        "neutrality": "audited",
        "swap": "audited",
        "range": "audited",
        "interaction": "audited",
        "band": "audited",
        "decontaminated": "decontaminated",
        "by_type": "audited",
        "aggregation": "audited",
    }
    for row in main_rows:
        assert row["subset"] == subset[row["analysis"]], row


def test_results_json_keys_and_provenance(tmp_path):
    from helpers import write_project

    config = write_project(tmp_path, main_items(), audit={"resamples": 30, "seed": 7})
    assert main(["audit", str(config), "--out", str(tmp_path / "out")]) == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert set(document) == {
        "schema",
        "dataset",
        "tool_version",
        "config",
        "config_toml",
        "seed",
        "resamples",
        "confidence",
        "inputs",
        "columns",
        "rows",
        "record",
        "interaction",
        "duplicates",
        "type_confusion",
        "by_type",
        "disagreements",
        "gold_errors",
        "aggregation",
        "applicability",
        "statistics",
    }
    # how each statistic prints, as its analysis declares it: a rate with 1 decimal, a swing signed and tested
    assert document["statistics"]["agreement"]["identical"] == {
        "decimals": 1,
        "signed": False,
        "tested": False,
        "style": "number",
    }
    assert (
        document["statistics"]["interaction"]["swing"]["signed"]
        and document["statistics"]["interaction"]["swing"]["tested"]
    )
    assert document["schema"] == "refsens-report/results@4"
    assert document["dataset"] == {"name": "Test benchmark", "version": "1.0.0"}
    assert document["seed"] == 7 and document["resamples"] == 30 and document["confidence"] == 0.95
    assert document["columns"] == CONTRACT_COLUMNS
    assert set(document["config"]) == {"dataset", "record", "roles", "audit", "report"}
    assert document["config"]["audit"]["resamples"] == 30
    assert document["config_toml"] == (tmp_path / "refsens.toml").read_text(encoding="utf-8")  # as written
    import hashlib

    assert document["inputs"] == {
        "refsens.toml": hashlib.sha256((tmp_path / "refsens.toml").read_bytes()).hexdigest(),
        "record.jsonl": hashlib.sha256((tmp_path / "record.jsonl").read_bytes()).hexdigest(),
    }
    assert set(document["record"]) >= {
        "items",
        "languages",
        "items_per_language",
        "labellings",
        "subsets",
        "excluded",
        "notes",
    }
    assert document["record"]["items"] == 7 and document["record"]["languages"] == ["de", "en"]
    # without a cluster key every item is its own cluster: the clusters per item set are its items
    assert document["record"]["clusters"] == {"key": None, "subsets": document["record"]["subsets"]}
    assert all(row["n_clusters"] == row["n_items"] for row in document["rows"])
    assert set(document["duplicates"]) >= {"key", "available", "groups", "duplicated_items", "defective_groups"}
    assert set(document["type_confusion"]) == {"available", "annotators", "cells"}
    # rows in JSON are the CSV rows: every column, same order
    csv_rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text(encoding="utf-8"))))
    assert len(csv_rows) == len(document["rows"])
    for json_row, csv_row in zip(document["rows"], csv_rows):
        assert list(json_row) == CONTRACT_COLUMNS
        for column in CONTRACT_COLUMNS:
            value = json_row[column]
            if value is None:
                assert csv_row[column] == ""
            elif isinstance(value, float):
                assert float(csv_row[column]) == value  # repr round-trips exactly
            else:
                assert csv_row[column] == str(value)


def test_type_confusion_counts_boundary_matched_pairs(main_results):
    # corpus boundary matches of A and B: en-1 (05: PER/PER, 1015: LOC/ORG), en-2 (04: PER/PER),
    # en-3 (26: A's LOC and ORG against B's LOC), de-1 (02: PER/PER)
    cells = {(c["type_a"], c["type_b"]): c["count"] for c in main_results.summaries["type_confusion"]["cells"]}
    assert cells == {("PER", "PER"): 3, ("LOC", "ORG"): 1, ("LOC", "LOC"): 1, ("ORG", "LOC"): 1}


def test_nan_never_leaks(main_rows):
    for row in main_rows:
        for column in ("estimate", "ci_low", "ci_high", "p_value", "p_holm"):
            assert row[column] is None or (isinstance(row[column], float) and math.isfinite(row[column]))


def test_a_language_named_pooled_is_rejected_or_unambiguous(tmp_path, capsys):
    """Was an engine bug: docs/method.md section 1 allows any non-empty language code, and section 3 reserves
    language = "pooled" for the pooled row. A record with an item in language "pooled" made the engine
    write two rows with identical labels for every statistic (the language's and the pooled one), so
    results.csv no longer has one row per statistic (section 5). Expected: either validation rejects the
    code (exit 2 naming the line) or the rows stay distinguishable."""
    items = [
        item("p-1", "pooled", **{A: [[0, 1, "X"]], B: [], D: [[0, 1, "X"]], R: []}),
        item("en-1", "en", **{A: [], B: [[0, 1, "X"]], D: [], R: [[0, 1, "X"]]}),
    ]
    from helpers import write_project

    config = write_project(tmp_path, items, audit={"resamples": 20})
    if main(["validate", str(config)]) == 2:
        err = capsys.readouterr().err
        assert "record.jsonl:1:" in err and "pooled" in err and "Traceback" not in err
        return  # rejected cleanly, naming the line: acceptable
    rows = audit_items(tmp_path / "run", items, audit={"resamples": 20}).rows
    keys = [tuple(row[c] for c in LABEL_COLUMNS) for row in rows]
    duplicated = {key for key in keys if keys.count(key) > 1}
    assert not duplicated, f"{len(duplicated)} label sets appear twice, e.g. {sorted(duplicated)[0]}"


def test_three_annotators(tmp_path):
    """Skew for every pair of annotators in config order; copied over all three; agreement on the first two.

    en-1: A {P01} B {P01} C {L01} D {P01} R {L01}
    en-2: A {P02} B {L02} C {L02} D {L02} R {P02}
    """
    annotator_c = "annotator_c"
    p01, l01, p02, l02 = [0, 1, "PER"], [0, 1, "LOC"], [0, 2, "PER"], [0, 2, "LOC"]
    items = [
        item("en-1", "en", **{A: [p01], B: [p01], annotator_c: [l01], D: [p01], R: [l01]}),
        item("en-2", "en", **{A: [p02], B: [l02], annotator_c: [l02], D: [l02], R: [p02]}),
    ]
    results = audit_items(tmp_path, items, annotators=(A, B, annotator_c), audit={"resamples": 20})
    rows = select(results.rows, language="pooled")
    rate = {
        (row["reference"], row["output"]): row["estimate"]
        for row in select(rows, analysis="neutrality", statistic="rate")
    }
    assert rate == {
        (D, A): 50.0,
        (D, B): 100.0,
        (D, annotator_c): 50.0,
        (R, A): 50.0,
        (R, B): 0.0,
        (R, annotator_c): 50.0,
    }
    skew = {
        (row["reference"], row["output"], row["output_2"]): row["estimate"]
        for row in select(rows, analysis="neutrality", statistic="skew")
    }
    assert skew == {
        (D, A, B): 50.0 - 100.0,
        (D, A, annotator_c): 50.0 - 50.0,
        (D, B, annotator_c): 100.0 - 50.0,
        (R, A, B): 50.0 - 0.0,
        (R, A, annotator_c): 50.0 - 50.0,
        (R, B, annotator_c): 0.0 - 50.0,
    }
    # D equals A or B on both items; R equals C on en-1 and A on en-2
    assert [row["estimate"] for row in select(rows, analysis="neutrality", statistic="copied")] == [100.0, 100.0]
    # agreement is A against B only: identical on en-1
    identical = pick(rows, analysis="agreement", statistic="identical")
    assert (identical["output"], identical["reference"], identical["estimate"]) == (A, B, 50.0)
    # the third annotator is a defensible gold in the range
    assert (
        pick(rows, analysis="range", statistic="score", rule="strict", output=A, reference=annotator_c)["estimate"]
        == 0.0
    )
    # decontaminated is about A and B: D equals A on en-1 and B on en-2, so it is empty
    assert not select(results.rows, analysis="decontaminated")
    assert results.applicability["decontaminated"]


# ---------------------------------------------------------------------------------------------------------
# The overlap rule: same type, at least one shared character, a maximum one-to-one matching per item


def overlap_f1(rows, output=A, reference=D):
    return pick(
        rows, analysis="swap", statistic="score", rule="overlap", output=output, reference=reference, language="en"
    )["estimate"]


def overlap_case(tmp_path, a, d):
    """Score A against D under every rule on one item (B and R are copies, so every role is present)."""
    lines = [item("en-1", "en", **{A: a, B: a, D: d, R: d})]
    return audit_items(tmp_path, lines, audit={"resamples": 20, "rules": ["strict", "relaxed", "overlap"]}).rows


@pytest.mark.parametrize(
    ("a", "d", "tp", "note"),
    [
        ([[0, 10, "ORG"]], [[0, 4, "ORG"], [5, 10, "ORG"]], 1, "a span over two: one match, one FN"),
        ([[0, 4, "PER"], [5, 9, "PER"]], [[0, 9, "PER"]], 1, "two spans in one: one match, one FP"),
        ([[2, 4, "LOC"]], [[0, 10, "LOC"]], 1, "nested: counts fully, no half credit"),
        ([[0, 5, "PER"], [0, 5, "PER"]], [[0, 5, "PER"], [0, 3, "PER"]], 1, "equal spans twice count once"),
        ([[0, 5, "X"], [4, 8, "X"]], [[3, 6, "X"], [0, 2, "X"]], 2, "first-come pairing would find 1"),
        ([[3, 6, "X"], [0, 2, "X"]], [[0, 5, "X"], [4, 8, "X"]], 2, "and the other way round"),
        ([[0, 4, "X"]], [[4, 9, "X"]], 0, "touching spans share no character"),
        ([[0, 4, "X"]], [[2, 6, "Y"]], 0, "overlapping spans of two types"),
        ([[0, 4, "X"], [0, 4, "Y"]], [[1, 3, "X"], [1, 3, "Y"]], 2, "one boundary, two types: one match each"),
        ([], [], 0, "nothing on either side: F1 undefined"),
    ],
)
def test_overlap_hand_cases(tmp_path, a, d, tp, note):
    rows = overlap_case(tmp_path, a, d)
    size_a, size_d = len({tuple(span) for span in a}), len({tuple(span) for span in d})
    expected = None if size_a + size_d == 0 else exact(100 * 2 * tp / (size_a + size_d))
    assert overlap_f1(rows) == expected, note
    strict = pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=D, language="en")
    if expected is not None:
        assert overlap_f1(rows) >= strict["estimate"]  # exact matches are among the overlap candidates


def test_overlap_does_not_depend_on_span_order(tmp_path):
    a = [[0, 5, "X"], [4, 8, "X"], [10, 20, "Y"], [12, 14, "Y"], [30, 31, "X"]]
    d = [[3, 6, "X"], [0, 2, "X"], [11, 13, "Y"], [13, 19, "Y"], [29, 32, "X"]]
    forward = overlap_f1(overlap_case(tmp_path / "forward", a, d))
    backward = overlap_f1(overlap_case(tmp_path / "backward", a[::-1], d[::-1]))
    swapped = overlap_f1(overlap_case(tmp_path / "swapped", d, a))
    assert forward == backward == swapped == exact(100.0)


def test_overlap_feeds_every_per_rule_analysis(tmp_path):
    """Every row the record has under strict it also has under overlap (the rule is one more count column)."""
    copies = [
        item(
            f"en-{index}",
            "en",
            meta={"third_pass": False, "dup_key": "twice"},
            **{A: [[0, 5, "PER"]], B: [[0, 5, "PER"]], D: [[0, 5, "PER"]], R: [[0, 5, "PER"]]},
        )
        for index in (8, 9)
    ]
    rows = audit_items(
        tmp_path, main_items() + copies, audit={"resamples": 30, "rules": ["strict", "relaxed", "overlap"]}
    ).rows

    def labels(row):
        return tuple(
            row[column]
            for column in (
                "analysis",
                "statistic",
                "language",
                "output",
                "output_2",
                "reference",
                "reference_2",
                "subset",
                "policy",
            )
        )

    strict = {labels(row) for row in rows if row["rule"] == "strict"}
    overlap = {labels(row) for row in rows if row["rule"] == "overlap"}
    assert strict == overlap
    assert {key[0] for key in overlap} >= {
        "agreement",
        "swap",
        "range",
        "interaction",
        "band",
        "decontaminated",
        "duplicates",
    }
    # F1 never falls from strict to overlap; only en-4 (A 0-3, B 1-3) overlaps without matching exactly
    by_labels = {(labels(row), row["rule"]): row["estimate"] for row in rows}
    for key in strict:
        if key[1] in ("f1", "score") and by_labels[(key, "strict")] is not None:
            assert by_labels[(key, "overlap")] >= by_labels[(key, "strict")], key
    # F1(A, B) pooled on the corpus (en-1..5, de-1, and one copy: keep_first drops en-9):
    # TP 1+1+1+1+0+1+1, |A| 2+1+2+1+1+1+1, |B| 2+2+1+1+0+1+1; strict has no TP on en-4
    f1 = pick(rows, analysis="agreement", statistic="f1", rule="overlap", language="pooled")["estimate"]
    assert f1 == exact(100 * 2 * 6 / (9 + 8))
    strict_f1 = pick(rows, analysis="agreement", statistic="f1", rule="strict", language="pooled")["estimate"]
    assert strict_f1 == exact(100 * 2 * 5 / (9 + 8))
    # and the Holm family takes the overlap swings like the others'
    family = [row for row in rows if row["analysis"] == "interaction" and row["p_holm"] is not None]
    assert {row["rule"] for row in family} == {"strict", "relaxed", "overlap"}


def test_overlap_counts_one_item_by_hand(tmp_path):
    rows = overlap_case(tmp_path, [[0, 3, "X"]], [[1, 4, "X"]])
    assert pick(rows, analysis="agreement", statistic="f1", rule="overlap", language="en")["estimate"] == exact(100.0)
    assert overlap_f1(rows) == exact(100.0)
    assert pick(rows, analysis="swap", statistic="score", rule="strict", output=A, reference=D, language="en")[
        "estimate"
    ] == exact(0.0)


def test_overlap_alone_and_the_default_rules(tmp_path):
    rows = one_item(tmp_path / "alone", [[0, 2, "X"]], [[1, 3, "X"]], rules=("overlap",))
    assert {row["rule"] for row in rows} == {"", "overlap"}
    assert pick(rows, analysis="agreement", statistic="f1", rule="overlap", language="en")["estimate"] == exact(100.0)
    # the default stays strict and relaxed: overlap is asked for
    default = audit_items(tmp_path / "default", [item("en-1", "en", **{A: [], B: [], D: [], R: []})]).rows
    assert {row["rule"] for row in default} == {"", "strict", "relaxed"}
