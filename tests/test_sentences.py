"""Sentences that cannot mislead: counts and plurals said in one place, and runs with too few replicates
to decide significance said so (and published only as drafts)."""

from __future__ import annotations

import json
from pathlib import Path

from refsens_report import check, formatting, render
from refsens_report.analyses import agreement, band, interaction, leaderboard
from refsens_report.bootstrap import auto_resamples, decisive_resamples, holm_floor
from refsens_report.cli import main
from refsens_report.config import Check
from refsens_report.demo import SimulationParameters, demo_family_size, demo_resamples
from refsens_report.view import ResultsView

UNDECIDABLE_70_AT_200 = (
    "This run cannot decide significance: with 70 tests in the Holm family and 200 replicates, no Holm p can fall "
    'below 0.70 (the level is 0.05); deciding it needs at least 2,799 replicates (resamples = "auto" picks 27,999).'
)


def row(**columns):
    """A results row: every column of the contract, empty unless given."""
    base = {
        "analysis": "",
        "statistic": "",
        "rule": "strict",
        "language": "pooled",
        "output": "",
        "output_2": "",
        "reference": "",
        "reference_2": "",
        "subset": "audited",
        "policy": "",
        "estimate": None,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "p_holm": None,
        "n_items": 100,
        "type": "",
    }
    return {**base, **columns}


def results(resamples: int, tests: int, rows=(), languages=("en",), outputs="abcdef") -> dict:
    """A hand-made results.json: six outputs, two references, an adjacent Holm family of ``tests`` swings."""
    outputs = list(outputs)
    return {
        "confidence": 0.95,
        "resamples": resamples,
        "dataset": {"name": "D", "version": "1"},
        "config": {
            "roles": {"annotators": [], "outputs": outputs, "references": ["gold", "alt"]},
            "audit": {"rules": ["strict"]},
        },
        "record": {"languages": list(languages)},
        "interaction": {
            "family": "adjacent",
            "tests": tests,
            "resamples": resamples,
            "holm_floor": holm_floor(tests, resamples),
        },
        "rows": list(rows),
    }


def test_counts_and_plurals_are_said_in_one_place():
    assert formatting.counted(1, "flip") == "1 flip"
    assert formatting.counted(2, "flip") == "2 flips"
    assert formatting.counted(3453, "item") == "3,453 items"
    assert formatting.counted(1, "language") == "1 language"
    assert formatting.count_of(1, 15, "pair") == "1 of 15 pairs"
    assert f"1 flip {formatting.verb(1, 'is', 'are')}" == "1 flip is"
    assert f"2 flips {formatting.verb(2, 'is', 'are')}" == "2 flips are"
    # 'k of n nouns': the verb agrees with k, and with the noun when k is 0
    assert f"0 of 1 swing {formatting.verb_of(0, 1, 'has', 'have')}" == "0 of 1 swing has"
    assert f"0 of 15 swings {formatting.verb_of(0, 15, 'has', 'have')}" == "0 of 15 swings have"
    assert f"1 of 15 swings {formatting.verb_of(1, 15, 'has', 'have')}" == "1 of 15 swings has"


def test_validate_says_one_language(capsys, tmp_path: Path):
    (tmp_path / "record.jsonl").write_text(
        json.dumps({"id": "1", "language": "en", "text": "Ann", "labellings": {"a": [[0, 3, "PER"]], "b": []}}) + "\n"
    )
    (tmp_path / "refsens.toml").write_text(
        '[dataset]\nname = "D"\nversion = "1"\n\n[record]\npath = "record.jsonl"\nformat = "jsonl"\n\n'
        '[roles]\nannotators = []\noutputs = ["a"]\nreferences = ["b"]\n'
    )
    assert main(["validate", str(tmp_path / "refsens.toml")]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'refsens.toml'}: ok (1 item, 1 language)")


def test_leaderboard_headline_agrees_with_one_flip():
    rows = [
        row(analysis="leaderboard", statistic="rank", output=name, reference="gold", estimate=rank)
        for rank, name in enumerate("abcdef", 1)
    ]
    where = {"analysis": "leaderboard", "reference": "gold", "reference_2": "alt"}
    rows += [
        row(statistic="flips", estimate=1, ci_low=1, ci_high=3, **where),
        row(statistic="flips_significant", estimate=1, **where),
        row(statistic="kendall_tau", estimate=0.87, ci_low=0.6, ci_high=0.87, **where),
    ]
    view = ResultsView.from_json(results(3499, 70, rows))
    assert leaderboard.leaderboard_headline(view) == [
        "The leaderboard of 6 outputs changes with the reference (strict, pooled): of its 15 pairs of outputs, "
        "compared with gold, 1 pair changes order under alt (tau-b 0.87 [0.60, 0.87]); 1 of these flips is "
        "significant after Holm."
    ]


def test_undecidable_run_says_so_instead_of_counting_zero():
    assert decisive_resamples(70, 0.95) == 2799 and auto_resamples(70, 0.95) == 27_999
    view = ResultsView.from_json(results(200, 70))
    assert view.undecidable == UNDECIDABLE_70_AT_200
    assert view.draft == UNDECIDABLE_70_AT_200
    swing = row(
        analysis="interaction",
        statistic="swing",
        output="a",
        output_2="b",
        reference="gold",
        reference_2="alt",
        estimate=1.0,
        ci_low=0.5,
        ci_high=1.5,
        p_value=0.01,
        p_holm=1.0,
    )
    largest = (
        "The comparison moves too: of 1 pooled strict swing (every pair of outputs under every pair of "
        "references), 1 has an interval excluding zero; the largest is +1.00 [+0.50, +1.50] F1 points (a − b, "
        "gold vs alt; Holm p 1.00). "
    )
    assert interaction.headlines(ResultsView.from_json(results(200, 70, [swing]))) == [largest + UNDECIDABLE_70_AT_200]
    # enough replicates: the tally, not the caveat
    decided = ResultsView.from_json(results(3499, 70, [swing]))
    assert decided.undecidable == "" and decided.draft == ""
    assert interaction.headlines(decided) == [largest + "0 of 1 swing in the Holm family has Holm p < 0.05."]


def test_check_refuses_a_significance_threshold_it_cannot_decide():
    view = ResultsView.from_json(results(200, 70))
    outcome = check.evaluate(Check("max_significant_flips", 0), view)
    assert outcome.status == check.NOT_EVALUATED and check.exit_code([outcome]) == 2
    assert outcome.line() == f"N/A   max_significant_flips = 0: not evaluated: {UNDECIDABLE_70_AT_200}"


def test_a_swing_outside_the_holm_family_says_so():
    swing = row(
        analysis="interaction",
        statistic="swing",
        output="a",
        output_2="c",
        reference="gold",
        reference_2="alt",
        estimate=8.51,
        ci_low=7.15,
        ci_high=9.94,
        p_value=0.001,
    )
    view = ResultsView.from_json(results(3499, 70, [swing]))
    assert interaction.holm_said(view, swing) == "not in the Holm family: adjacent pairs only"


def test_band_names_its_pair_and_one_language_counts_rows_once():
    rows = [
        row(
            analysis="swap",
            statistic="delta",
            output="a",
            reference="conllpp",
            reference_2="cleanconll",
            estimate=4.86,
            ci_low=4.11,
            ci_high=5.64,
        ),
        row(analysis="band", statistic="band", estimate=5.64),
    ]
    for language in ("en", "pooled"):  # one language: its margin is the pooled one
        rows.append(
            row(
                analysis="interaction",
                statistic="margin",
                language=language,
                output="a",
                output_2="b",
                reference="gold",
                estimate=9.0,
                ci_low=7.0,
                ci_high=11.0,
            )
        )
    view = ResultsView.from_json(results(3499, 70, rows, outputs="ab"))  # two outputs: not at scale
    assert band.headlines(view) == [
        "The strict reference-sensitivity band is ±5.64 F1 points (the far end of the 95% CI of a's delta between "
        "conllpp and cleanconll: +4.86 [+4.11, +5.64]): 1 of 1 observed margin under gold (pooled; one language) "
        "lies beyond it with its whole 95% CI, 0 are undecided (the interval crosses the band's edge); a margin "
        "inside the band could come from the choice of reference alone."
    ]


def test_the_demo_build_is_latest_and_a_draft_is_never():
    parameters = SimulationParameters()
    tests, resamples = demo_family_size(parameters), demo_resamples(parameters)
    assert ResultsView.from_json(results(resamples, tests)).draft == ""  # `make report`'s B: not a draft
    figures = ()
    entries = [
        render.VersionEntry("2.0", "D", "", "", None, figures, draft=True),
        render.VersionEntry("1.0", "D", "", "", None, figures),
    ]
    assert render.latest_version(entries) == "1.0"


def test_a_draft_build_is_refused_without_draft(built_site, tmp_path: Path, capsys):
    assert main(["build", str(built_site.config_path), "--out", str(tmp_path / "site"), "--no-pdf", "-q"]) == 2
    error = capsys.readouterr().err
    assert "makes this build a draft. This run cannot decide significance" in error
    assert "Publish it as a draft with `build --draft`" in error and not (tmp_path / "site").exists()
    page = (built_site.folder / "index.html").read_text(encoding="utf-8")
    assert "(draft): reference-sensitivity appendix</title>" in page and "Draft, not for publication" in page
    index = (built_site.out / "index.html").read_text(encoding="utf-8")
    assert 'class="draft">draft<' in index and 'class="latest"' not in index


def test_without_annotator_passes_the_record_section_asks_and_captions_only_what_is_there():
    data = results(3499, 70)
    data["record"] = {
        "items": 1,
        "languages": ["en"],
        "items_per_language": {"en": 1},
        "labellings": {"a": 1, "gold": 1},
        "subsets": {"audited": {"en": 1, "pooled": 1}},
        "excluded": {"duplicate_policy": 1},
    }
    data["applicability"] = {"agreement": "The record names no annotator passes, so there is no agreement to measure."}
    section = agreement.ANALYSIS.section(ResultsView.from_json(data), {})
    assert section.paragraphs == (
        "What does the record hold: how many items, in which languages, labelled by whom?",
        "The record holds 1 item in 1 language; each of the 2 labellings is present on every item.",
        "Removed before the analyses: 1 item (duplicate policy).",
    )
    [table] = section.tables
    assert table.columns == ("Language", "Items", "Audited")
    assert table.caption == (
        "Items per language in the record and in the analysed subset, audited (every labelling "
        "named in a role present)."
    )


def test_an_undecidable_summary_says_why_once_not_per_reference():
    """The draft note says in full why significance is undecidable; each verdict only says that it is."""
    from refsens_report.analyses import swap

    rows = [
        row(analysis="leaderboard", statistic="rank", output=name, reference="gold", estimate=rank)
        for rank, name in enumerate("abcdef", 1)
    ]
    where = {"analysis": "leaderboard", "reference": "gold", "reference_2": "alt"}
    rows += [
        row(statistic="flips", estimate=1, ci_low=0, ci_high=5, **where),
        row(statistic="kendall_tau", estimate=0.87, ci_low=0.6, ci_high=0.87, **where),
    ]
    view = ResultsView.from_json(results(200, 70, rows))
    assert swap._ranking(view, "alt", list("abcdef"), []) == (
        " The ranking of 6 outputs: tau-b 0.87 [0.60, 0.87]; 1 [0, 5] of 15 pairs changes order, significance "
        "after Holm undecided."
    )
