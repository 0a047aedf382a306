"""The aggregation what-if: the primary reference re-aggregated on the silent items under keep_b, merge_union,
merge_intersection and coin.

Hand-made records whose silent items (A ≠ B, no third pass) have known spans: each what-if reference is spelled
out span by span, its F1 computed here from Python sets, and compared with the rows; a record rewritten by the
rule scores exactly (to the last bit, intervals too) as the what-if does; no silent item leaves every delta at
0; coin's expectation is compared with seeded coin draws; tau-b and flips with scipy.
"""

from __future__ import annotations

import copy
import json
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import A, B, D, R, audit_items, item, pick, select
from scipy import stats

from refsens_report import figures
from refsens_report.analyses import aggregation
from refsens_report.analyses.registry import column_kinds
from refsens_report.audit import run_audit
from refsens_report.config import load_config
from refsens_report.counts import Column, ItemCounts
from refsens_report.demo import write_simulation
from refsens_report.load import load_record
from refsens_report.results import make_row
from refsens_report.subsets import DuplicateGroups, build_subsets
from refsens_report.view import ResultsView

SILENT = {"third_pass": False}
SETTLED = {"third_pass": True}

# item id -> (language, meta, A, B, delivered); the reviewer is B's spans everywhere (a second reference)
ITEMS = {
    # silent: A and B differ on Y/Z types at 5-9 and B adds 10-12; delivered kept A
    "en-1": ("en", SILENT, [(0, 4, "X"), (5, 9, "Y")], [(0, 4, "X"), (5, 9, "Z"), (10, 12, "X")], "A"),
    # adjudicated: they differ but a third pass fired, so delivered (B here) stays whatever the rule
    "en-2": ("en", SETTLED, [(0, 3, "X")], [(1, 3, "X")], "B"),
    # agreed
    "en-3": ("en", SILENT, [(2, 6, "Y")], [(2, 6, "Y")], "A"),
    # silent: B is empty; delivered kept A
    "fr-1": ("fr", SILENT, [(0, 3, "X"), (4, 8, "Y")], [], "A"),
    # silent: delivered kept B here (the default is not always A)
    "fr-2": ("fr", SILENT, [(1, 5, "X")], [(1, 5, "Y"), (6, 9, "X")], "B"),
}
# The what-if references on the silent items, by hand (every other item keeps delivered).
BY_HAND = {
    "keep_b": {"en-1": {(0, 4, "X"), (5, 9, "Z"), (10, 12, "X")}, "fr-1": set(), "fr-2": {(1, 5, "Y"), (6, 9, "X")}},
    "merge_union": {
        "en-1": {(0, 4, "X"), (5, 9, "Y"), (5, 9, "Z"), (10, 12, "X")},
        "fr-1": {(0, 3, "X"), (4, 8, "Y")},
        "fr-2": {(1, 5, "X"), (1, 5, "Y"), (6, 9, "X")},
    },
    "merge_intersection": {"en-1": {(0, 4, "X")}, "fr-1": set(), "fr-2": set()},
    "keep_a": {"en-1": {(0, 4, "X"), (5, 9, "Y")}, "fr-1": {(0, 3, "X"), (4, 8, "Y")}, "fr-2": {(1, 5, "X")}},
}


def _records() -> list[dict[str, Any]]:
    rows = []
    for item_id, (language, meta, a, b, kept) in ITEMS.items():
        delivered = a if kept == "A" else b
        rows.append(item(item_id, language, meta, annotator_a=a, annotator_b=b, delivered=delivered, reviewer=b))
    return rows


def _spans(what_if: str, item_id: str) -> set[tuple[int, int, str]]:
    """Return a what-if reference's strict spans on an item: the rule's on silent items, delivered's elsewhere."""
    if item_id in BY_HAND[what_if]:
        return BY_HAND[what_if][item_id]
    _, _, a, b, kept = ITEMS[item_id]
    return set(a if kept == "A" else b)


def _project(spans: set, rule: str) -> set:
    return spans if rule == "strict" else {(start, end) for start, end, _ in spans}


def _f1(output: str, reference, rule: str, items: list[str]) -> float:
    """Micro F1 from Python sets (``reference``: item id -> strict spans)."""
    tp = size = 0
    for item_id in items:
        _, _, a, b, _ = ITEMS[item_id]
        mine = _project(set(a if output == A else b), rule)
        theirs = _project(reference(item_id), rule)
        tp += len(mine & theirs)
        size += len(mine) + len(theirs)
    return 100 * 2 * tp / size


def _language_items(language: str) -> list[str]:
    return [item_id for item_id, spec in ITEMS.items() if language == "pooled" or spec[0] == language]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    return audit_items(tmp_path_factory.mktemp("aggregation"), _records())


def test_the_silent_items_are_those_where_a_and_b_differ_without_a_third_pass(results) -> None:  # noqa: ANN001
    assert results.summaries["aggregation"] == {
        "annotators": [A, B],
        "primary": D,
        "rules": ["keep_b", "merge_union", "merge_intersection", "coin"],
        "coin": "expectation",
        "silent_items": {"en": 1, "fr": 2, "pooled": 3},
    }
    assert results.applicability["aggregation"] is None


@pytest.mark.parametrize("what_if", ["keep_b", "merge_union", "merge_intersection"])
def test_each_rule_scores_as_its_span_sets_by_hand(results, what_if: str) -> None:  # noqa: ANN001
    """keep_b equals B on the silent items; union and intersection are the sets spelled out above."""
    for rule in ("strict", "relaxed"):
        for output in (A, B):
            for language in ("en", "fr", "pooled"):
                where = {"analysis": "aggregation", "rule": rule, "output": output, "language": language}
                row = pick(results.rows, statistic="score", reference=f"what_if:{what_if}", **where)
                expected = _f1(output, lambda i: _spans(what_if, i), rule, _language_items(language))
                assert row["estimate"] == pytest.approx(expected, abs=1e-9), (rule, output, language)
                primary = pick(
                    results.rows,
                    analysis="swap",
                    statistic="score",
                    rule=rule,
                    output=output,
                    language=language,
                    reference=D,
                )
                delta = pick(results.rows, statistic="delta", reference=f"what_if:{what_if}", reference_2=D, **where)
                assert delta["estimate"] == pytest.approx(expected - primary["estimate"], abs=1e-9)
                assert delta["p_value"] is not None and delta["n_items"] == len(_language_items(language))


def test_the_intersection_under_relaxed_is_the_projection_of_its_strict_spans(results) -> None:  # noqa: ANN001
    """On en-1 A and B share (5, 9) only with different types: strict ∩ drops it, so relaxed does too."""
    row = pick(
        results.rows,
        analysis="aggregation",
        statistic="score",
        rule="relaxed",
        output=A,
        language="en",
        reference="what_if:merge_intersection",
    )
    # A relaxed: en-1 {(0,4),(5,9)}, en-2 {(0,3)}, en-3 {(2,6)}; reference: en-1 {(0,4)}, en-2 {(1,3)}, en-3 {(2,6)}
    assert row["estimate"] == pytest.approx(100 * 2 * 2 / (4 + 3))


def test_coin_is_the_expectation_of_keep_a_and_keep_b(results) -> None:  # noqa: ANN001
    """Coin's F1 comes from the expected counts; its skew is the mean of keep_a's and keep_b's, exactly."""
    for rule in ("strict", "relaxed"):
        for output in (A, B):
            items = _language_items("pooled")
            tp = size = 0.0
            for item_id in items:
                _, _, a, b, _ = ITEMS[item_id]
                mine = _project(set(a if output == A else b), rule)
                both = [_project(_spans(kept, item_id), rule) for kept in ("keep_a", "keep_b")]
                tp += sum(len(mine & spans) for spans in both) / 2
                size += len(mine) + sum(len(spans) for spans in both) / 2
            row = pick(
                results.rows,
                analysis="aggregation",
                statistic="score",
                rule=rule,
                output=output,
                language="pooled",
                reference="what_if:coin",
            )
            assert row["estimate"] == pytest.approx(100 * 2 * tp / size, abs=1e-9)

    def rate(what_if: str, annotator: str) -> float:
        equal = [_spans(what_if, i) == set(ITEMS[i][2 if annotator == A else 3]) for i in ITEMS]
        return 100 * sum(equal) / len(equal)

    for what_if in ("keep_b", "merge_union", "merge_intersection"):
        skew = pick(
            results.rows,
            analysis="aggregation",
            statistic="skew",
            language="pooled",
            output=A,
            output_2=B,
            reference=f"what_if:{what_if}",
        )
        assert skew["estimate"] == pytest.approx(rate(what_if, A) - rate(what_if, B), abs=1e-9)
    coin = pick(results.rows, analysis="aggregation", statistic="skew", language="pooled", reference="what_if:coin")
    expected = np.mean([rate(kept, A) - rate(kept, B) for kept in ("keep_a", "keep_b")])
    assert coin["estimate"] == pytest.approx(expected, abs=1e-9)


def test_a_record_rewritten_by_the_rule_scores_exactly_as_the_what_if(tmp_path: Path) -> None:
    """Replace delivered by keep_b / union / intersection on the silent items and audit again: the swap's scores
    and the neutrality skew against the rewritten delivered equal the what-if rows, intervals included (the
    bootstrap draws depend only on the seed and the items)."""
    write_simulation(tmp_path / "sim", items=1800, seed=3)
    original = [json.loads(line) for line in (tmp_path / "sim" / "record.jsonl").read_text().splitlines()]
    audited = audit_items(tmp_path / "original", original, references=(D, R))
    for what_if, combine in (
        ("keep_b", lambda a, b: b),
        ("merge_union", lambda a, b: a | b),
        ("merge_intersection", lambda a, b: a & b),
    ):
        rewritten = copy.deepcopy(original)
        for row in rewritten:
            spans = row["labellings"]
            if A in spans and B in spans and not row["meta"]["third_pass"]:
                a, b = {tuple(s) for s in spans[A]}, {tuple(s) for s in spans[B]}
                if a != b:
                    spans[D] = [list(s) for s in sorted(combine(a, b))]
        again = audit_items(tmp_path / what_if, rewritten, references=(D, R))
        for rule in ("strict", "relaxed"):
            for output in (A, B):
                for language in ("hi", "pooled"):
                    where = {"rule": rule, "output": output, "language": language}
                    swap = pick(again.rows, analysis="swap", statistic="score", reference=D, **where)
                    what = pick(
                        audited.rows, analysis="aggregation", statistic="score", reference=f"what_if:{what_if}", **where
                    )
                    assert [what[k] for k in ("estimate", "ci_low", "ci_high")] == [
                        swap[k] for k in ("estimate", "ci_low", "ci_high")
                    ]
        skew = pick(again.rows, analysis="neutrality", statistic="skew", reference=D, language="pooled")
        what = pick(
            audited.rows, analysis="aggregation", statistic="skew", reference=f"what_if:{what_if}", language="pooled"
        )
        assert [what[k] for k in ("estimate", "ci_low", "ci_high", "p_value")] == [
            skew[k] for k in ("estimate", "ci_low", "ci_high", "p_value")
        ]


def test_no_silent_item_leaves_every_what_if_equal_to_the_primary(tmp_path: Path) -> None:
    records = [spec for spec in _records() if spec["id"] not in ("en-1", "fr-1", "fr-2")]
    records.append(
        item(
            "fr-3",
            "fr",
            SETTLED,
            annotator_a=[[0, 2, "X"]],
            annotator_b=[[0, 3, "X"]],
            delivered=[[0, 3, "X"]],
            reviewer=[[0, 2, "X"]],
        )
    )
    results = audit_items(tmp_path, records)
    deltas = select(results.rows, analysis="aggregation", statistic="delta")
    assert len(deltas) == 4 * 2 * 2 * 3  # rules x rules x outputs x (en, fr, pooled)
    assert all(
        (row["estimate"], row["ci_low"], row["ci_high"], row["p_value"]) == (0.0, 0.0, 0.0, 1.0) for row in deltas
    )
    for row in select(results.rows, analysis="aggregation", statistic="score"):
        swap = pick(
            results.rows,
            analysis="swap",
            statistic="score",
            rule=row["rule"],
            output=row["output"],
            language=row["language"],
            reference=D,
        )
        assert row["estimate"] == swap["estimate"]
    assert results.summaries["aggregation"]["silent_items"] == {"en": 0, "fr": 0, "pooled": 0}


def test_it_does_not_apply_without_third_pass_or_annotators(tmp_path: Path) -> None:
    records = _records()
    del records[0]["meta"]
    results = audit_items(tmp_path / "no-third-pass", records)
    assert not select(results.rows, analysis="aggregation")
    assert results.summaries["aggregation"] is None
    assert "meta.third_pass" in results.applicability["aggregation"]
    results = audit_items(tmp_path / "no-annotators", _records(), annotators=None)
    assert results.applicability["aggregation"].startswith("The record names no annotator passes")


def test_coin_expectation_is_within_draws_of_many_coin_flips(tmp_path: Path) -> None:
    """The F1 of the expected counts against the mean F1 over 2,000 seeded coin draws, on a simulated record."""
    write_simulation(tmp_path, items=3000, seed=1)
    path = tmp_path / "refsens.toml"
    path.write_text(path.read_text().replace("resamples = 2000", "resamples = 20"))
    config = load_config(path)
    results = run_audit(config)
    record = load_record(config)
    counts = ItemCounts(record.items, config.roles.all_names, column_kinds())
    groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
    defective = {i for group in groups.defective(record, counts, config) for i in group.items}
    mask = build_subsets(counts, groups, defective, config).audited
    silent = counts.values(Column("unadjudicated_split", a=A, b=B)).astype(bool)[mask]
    coins = np.random.default_rng(0).random((2000, int(mask.sum()))) < 0.5
    for rule in ("strict", "relaxed"):
        for output in (A, B):
            tp = np.where(
                silent,
                np.where(coins, counts.tp(rule, output, A)[mask], counts.tp(rule, output, B)[mask]),
                counts.tp(rule, output, D)[mask],
            ).sum(axis=1)
            size = np.where(
                silent,
                np.where(coins, counts.size(rule, A)[mask], counts.size(rule, B)[mask]),
                counts.size(rule, D)[mask],
            ).sum(axis=1)
            drawn = 200 * tp / (counts.size(rule, output)[mask].sum() + size)
            row = pick(
                results.rows,
                analysis="aggregation",
                statistic="score",
                rule=rule,
                output=output,
                language="pooled",
                reference="what_if:coin",
            )
            assert row["n_items"] == mask.sum() and silent.sum() > 20
            assert abs(drawn.mean() - row["estimate"]) < 0.01 + 3 * drawn.std() / np.sqrt(len(drawn))


def test_tau_and_flips_against_the_primary_ranking(tmp_path: Path) -> None:
    """Three outputs: o1 copies A, o2 copies B, o3 sits between; keep_b reverses o1 and o2. scipy's tau-b."""
    records = []
    for number in range(12):
        a = [[0, 4, "X"], [6, 9, "Y"]]
        b = [[0, 5, "X"], [6, 9, "Y"], [11, 14, "Z"]] if number % 3 else a
        between = [[0, 4, "X"], [11, 14, "Z"]]
        records.append(
            item(
                f"en-{number}",
                "en",
                SILENT,
                annotator_a=a,
                annotator_b=b,
                delivered=a,
                reviewer=b,
                o1=a,
                o2=b,
                o3=between,
            )
        )
    results = audit_items(tmp_path, records, outputs=("o1", "o2", "o3"))
    for what_if in aggregation.WHAT_IFS:
        for rule in ("strict", "relaxed"):

            def scores(reference: str) -> list[float]:
                analysis, ref = ("swap", D) if reference == D else ("aggregation", f"what_if:{reference}")
                return [
                    pick(
                        results.rows,
                        analysis=analysis,
                        statistic="score",
                        rule=rule,
                        language="pooled",
                        output=output,
                        reference=ref,
                    )["estimate"]
                    for output in ("o1", "o2", "o3")
                ]

            under, primary = scores(what_if), scores(D)
            tau = pick(
                results.rows,
                analysis="aggregation",
                statistic="kendall_tau",
                rule=rule,
                language="pooled",
                reference=f"what_if:{what_if}",
                reference_2=D,
            )
            expected = stats.kendalltau(under, primary).statistic
            assert tau["estimate"] == pytest.approx(expected) if not np.isnan(expected) else tau["estimate"] is None
            flips = pick(
                results.rows,
                analysis="aggregation",
                statistic="flips",
                rule=rule,
                language="pooled",
                reference=f"what_if:{what_if}",
                reference_2=D,
            )
            discordant = sum(
                (under[i] - under[j]) * (primary[i] - primary[j]) < 0 for i, j in combinations(range(3), 2)
            )
            assert flips["estimate"] == discordant
    keep_b = pick(results.rows, statistic="flips", rule="strict", language="pooled", reference="what_if:keep_b")
    assert keep_b["estimate"] >= 1  # o1 and o2 trade places


# --- the report, from hand-made rows ------------------------------------------------------------------------


def _view() -> ResultsView:
    """One language and pooled, outputs a and b, references delivered and reviewer, numbers chosen by hand."""
    rows = []
    for language in ("en", "pooled"):
        rows.append(
            make_row(
                analysis="neutrality",
                statistic="skew",
                language=language,
                output="a",
                output_2="b",
                reference="delivered",
                subset="audited",
                estimate=20.0,
                ci_low=12.0,
                ci_high=28.0,
                p_value=0.001,
                n_items=100,
            )
        )
        for output, score in (("a", 90.0), ("b", 80.0)):
            for reference, shift in (("delivered", 0.0), ("reviewer", -3.0)):
                rows.append(
                    make_row(
                        analysis="swap",
                        statistic="score",
                        rule="strict",
                        language=language,
                        output=output,
                        reference=reference,
                        subset="audited",
                        estimate=score + shift,
                        ci_low=score + shift - 1,
                        ci_high=score + shift + 1,
                        n_items=100,
                    )
                )
    for what_if, change in (("keep_b", -6.0), ("merge_union", -3.0), ("merge_intersection", -3.5), ("coin", -3.1)):
        for language in ("en", "pooled"):
            for output, sign in (("a", 1), ("b", -1)):
                base = 90.0 if output == "a" else 80.0
                where = {
                    "analysis": "aggregation",
                    "rule": "strict",
                    "language": language,
                    "output": output,
                    "subset": "audited",
                    "n_items": 100,
                }
                rows.append(
                    make_row(
                        statistic="score",
                        reference=f"what_if:{what_if}",
                        estimate=base + sign * change,
                        ci_low=base + sign * change - 1,
                        ci_high=base + sign * change + 1,
                        **where,
                    )
                )
                rows.append(
                    make_row(
                        statistic="delta",
                        reference=f"what_if:{what_if}",
                        reference_2="delivered",
                        estimate=sign * change,
                        ci_low=sign * change - 0.5,
                        ci_high=sign * change + 0.5,
                        p_value=0.001,
                        **where,
                    )
                )
            rows.append(
                make_row(
                    analysis="aggregation",
                    statistic="skew",
                    language=language,
                    output="a",
                    output_2="b",
                    reference=f"what_if:{what_if}",
                    subset="audited",
                    estimate=-12.0 if what_if == "keep_b" else 0.5,
                    ci_low=-14.0 if what_if == "keep_b" else -1.5,
                    ci_high=-10.0 if what_if == "keep_b" else 2.5,
                    p_value=0.001,
                    n_items=100,
                )
            )
    return ResultsView.from_json(
        {
            "config": {
                "roles": {"annotators": ["a", "b"], "outputs": ["a", "b"], "references": ["delivered", "reviewer"]},
                "audit": {"rules": ["strict"]},
            },
            "confidence": 0.95,
            "rows": rows,
            "record": {"languages": ["en"], "subsets": {"audited": {"en": 100, "pooled": 100}}},
            "aggregation": {"annotators": ["a", "b"], "primary": "delivered", "silent_items": {"en": 30, "pooled": 30}},
            "applicability": {"aggregation": None},
        }
    )


def test_headline_says_how_far_each_score_moves_had_the_default_kept_b() -> None:
    assert aggregation.ANALYSIS.headlines(_view()) == [
        "Had delivered kept b's spans on the 30 audited items where a and b differ and no third pass fired, a's "
        "pooled strict F1 would change by −6.00 [−6.50, −5.50] and b's by +6.00 [+5.50, +6.50] F1 points; the "
        "reference's skew between a and b would be −12.0 [−14.0, −10.0] points instead of +20.0 [+12.0, "
        "+28.0].".replace("−", "-"),
        "Under the other rules, a's score would change by -3.00 [-3.50, -2.50] under merge_union, -3.50 [-4.00, -3.00] "
        "under merge_intersection and -3.10 [-3.60, -2.60] under coin (F1 points).",
    ]


def test_table_has_one_column_per_what_if_and_a_row_per_language_and_statistic() -> None:
    view = _view()
    table = aggregation.aggregation_table(view)
    assert table.columns == ("Language", "Statistic", "keep_b", "merge_union", "merge_intersection", "coin")
    assert [(row[0].text, row[1].text) for row in table.rows] == [
        (language, name) for language in ("en", "pooled") for name in ("Δ a", "Δ b", "Skew a − b")
    ]
    pooled = [row for row in table.rows if row[0].text == "pooled"]
    assert pooled[0][2].full_text == "-6.00 [-6.50, -5.50]" and pooled[0][2].bold
    assert view.rows.rows[pooled[0][2].row]["statistic"] == "delta"
    assert [cell.full_text for cell in pooled[2][2:]] == ["-12.0 [-14.0, -10.0]", *["+0.5 [-1.5, +2.5]"] * 3]
    assert "30 audited items where a and b differ" in table.caption
    assert table.notes[0].startswith("The page shows the strict rule's Δ; the table's CSV holds every row")
    assert [row[1].text for row in table.csv.rows[:5]] == ["F1 a", "Δ a", "F1 b", "Δ b", "Skew a − b"]
    printed = {cell.row for row in table.csv.rows for cell in row if cell.row is not None}
    assert printed == {index for index, row in enumerate(view.rows.rows) if row["analysis"] == "aggregation"}


def test_figure_shows_every_reference_and_what_if() -> None:
    view = _view()
    with figures._style():
        figure, model = aggregation.aggregation_dots(view)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == [
        "delivered (primary)",
        "reviewer",
        "what-if: keep_b",
        "what-if: merge_union",
        "what-if: merge_intersection",
        "what-if: coin",
    ]
    assert "a -6.00 [-6.50, -5.50]; b +6.00 [+5.50, +6.50]" in model.alt


def test_section_without_rows_says_why() -> None:
    view = ResultsView.from_json({**_view().data, "rows": [], "applicability": {"aggregation": "No third pass."}})
    section = aggregation.ANALYSIS.section(view, {})
    assert section.not_applicable == "No third pass." and not section.tables
    assert aggregation.ANALYSIS.headlines(view) == []


def test_many_outputs_add_rows_not_columns() -> None:
    data = _view().data
    view = ResultsView.from_json(
        {**data, "config": {**data["config"], "roles": {**data["config"]["roles"], "outputs": ["a", "b", "c", "d"]}}}
    )
    table = aggregation.aggregation_table(view)
    assert len(table.columns) == 6 and len(table.rows) == 2 * 5
    assert [row[1].text for row in table.rows[:5]] == ["Δ a", "Δ b", "Δ c", "Δ d", "Skew a − b"]
    assert table.rows[2][2].text == "—"  # no row for output c


def test_at_scale_the_headline_leads_with_annotator_a_then_the_largest_change() -> None:
    data = _view().data
    rows = list(data["rows"])
    for output, change in (("c", 9.0), ("d", -1.0)):
        rows.append(
            make_row(
                analysis="aggregation",
                statistic="delta",
                rule="strict",
                language="pooled",
                output=output,
                reference="what_if:keep_b",
                reference_2="delivered",
                subset="audited",
                estimate=change,
                ci_low=change - 1,
                ci_high=change + 1,
                n_items=100,
            )
        )
    view = ResultsView.from_json(
        {
            **data,
            "rows": rows,
            "config": {**data["config"], "roles": {**data["config"]["roles"], "outputs": ["a", "b", "c", "d"]}},
        }
    )
    assert aggregation.ANALYSIS.headlines(view)[0].startswith(
        "Had delivered kept b's spans on the 30 audited items where a and b differ and no third pass fired, a's "
        "pooled strict F1 would change by -6.00 [-6.50, -5.50] F1 points, and the 4 outputs' by up to "
        "+9.00 [+8.00, +10.00] (c); the reference's skew between a and b"
    )
