"""The release workflow: the [check] gate and its JUnit report, changes since the previous version, the metadata
files (Croissant with its RAI fields, CITATION.cff, BibTeX, the dataset card), progress on a terminal, and
the quick-look options (--resamples, --quiet, build --no-pdf)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SOURCE_DATE_EPOCH, Built

from refsens_report import changes, check, metadata
from refsens_report.cli import main
from refsens_report.config import Check
from refsens_report.prose import said
from refsens_report.results import make_row
from refsens_report.view import ResultsView

ROOT = Path(__file__).resolve().parent.parent

# --- the gate on hand-made results -----------------------------------------------------------------


def pooled(**values):
    return make_row(language="pooled", subset="audited", n_items=100, **values)


def hand_made_results(leaderboard: bool = True) -> dict:
    """Results with known numbers for each check (and a non-primary skew that must be ignored)."""
    rows = [
        pooled(
            analysis="neutrality",
            statistic="skew",
            output="a",
            output_2="b",
            reference="delivered",
            estimate=2.0,
            ci_low=0.5,
            ci_high=3.5,
        ),
        pooled(
            analysis="neutrality",
            statistic="skew",
            output="a",
            output_2="b",
            reference="reviewer",
            estimate=9.0,
            ci_low=8.0,
            ci_high=10.0,
        ),
        pooled(
            analysis="swap",
            statistic="delta",
            rule="strict",
            output="a",
            reference="delivered",
            reference_2="reviewer",
            estimate=3.0,
            ci_low=2.0,
            ci_high=4.0,
        ),
        pooled(
            analysis="swap",
            statistic="delta",
            rule="strict",
            output="b",
            reference="delivered",
            reference_2="reviewer",
            estimate=-1.0,
            ci_low=-2.5,
            ci_high=0.5,
        ),
        pooled(
            analysis="swap",
            statistic="delta",
            rule="relaxed",
            output="a",
            reference="delivered",
            reference_2="reviewer",
            estimate=-30.0,
            ci_low=-31.0,
            ci_high=-29.0,
        ),  # not the main rule
        pooled(analysis="band", statistic="band", rule="strict", output="", estimate=4.0),
    ]
    if leaderboard:
        rows += [
            pooled(
                analysis="leaderboard",
                statistic="kendall_tau",
                rule="strict",
                reference="delivered",
                reference_2="reviewer",
                estimate=0.6,
                ci_low=0.2,
                ci_high=1.0,
            ),
            pooled(
                analysis="leaderboard",
                statistic="flips_significant",
                rule="strict",
                reference="delivered",
                reference_2="reviewer",
                estimate=1.0,
            ),
        ]
    return {
        "dataset": {"name": "Hand-made", "version": "1.0.0"},
        "config": {
            "roles": {"annotators": ["a", "b"], "outputs": ["a", "b", "c"], "references": ["delivered", "reviewer"]},
            "audit": {"rules": ["strict", "relaxed"]},
        },
        "confidence": 0.95,
        "rows": rows,
        "applicability": {"leaderboard": None if leaderboard else "A leaderboard needs three or more scored outputs."},
    }


# (key, threshold, fail_when, status, value compared): each key passing and failing, each way of deciding
GATE_CASES = [
    ("max_band", 4.0, "estimate", "PASS", 4.0),  # equal passes
    ("max_band", 3.9, "estimate", "FAIL", 4.0),
    ("max_abs_delta", 3.0, "estimate", "PASS", 3.0),
    ("max_abs_delta", 2.9, "estimate", "FAIL", 3.0),
    ("max_abs_delta", 4.0, "any_of_interval", "PASS", 4.0),
    ("max_abs_delta", 3.5, "any_of_interval", "FAIL", 4.0),
    ("max_abs_delta", 2.0, "all_of_interval", "PASS", 2.0),
    ("max_abs_delta", 1.9, "all_of_interval", "FAIL", 2.0),
    ("max_abs_skew", 2.0, "estimate", "PASS", 2.0),  # the reviewer's skew of 9 is not the primary reference's
    ("max_abs_skew", 1.5, "estimate", "FAIL", 2.0),
    ("max_abs_skew", 3.4, "any_of_interval", "FAIL", 3.5),
    ("max_abs_skew", 0.5, "all_of_interval", "PASS", 0.5),
    ("max_abs_skew", 0.4, "all_of_interval", "FAIL", 0.5),
    ("min_kendall_tau", 0.6, "estimate", "PASS", 0.6),
    ("min_kendall_tau", 0.7, "estimate", "FAIL", 0.6),
    ("min_kendall_tau", 0.3, "any_of_interval", "FAIL", 0.2),
    ("min_kendall_tau", 1.0, "all_of_interval", "PASS", 1.0),
    ("max_significant_flips", 1, "estimate", "PASS", 1.0),
    ("max_significant_flips", 0, "estimate", "FAIL", 1.0),
]


@pytest.mark.parametrize(("key", "threshold", "fail_when", "status", "decided"), GATE_CASES)
def test_each_check_passes_and_fails_on_what_it_is_told_to(key, threshold, fail_when, status, decided) -> None:
    outcome = check.evaluate(Check(key, float(threshold), fail_when), ResultsView.from_json(hand_made_results()))
    assert outcome.status == status
    assert outcome.decided == pytest.approx(decided)
    line = outcome.line()
    assert line.startswith(status) and key in line and said(outcome.row) in line


def test_a_check_the_results_cannot_answer_is_not_evaluated_and_says_why() -> None:
    view = ResultsView.from_json(hand_made_results(leaderboard=False))
    outcome = check.evaluate(Check("min_kendall_tau", 0.5), view)
    assert outcome.status == check.NOT_EVALUATED and "three or more" in outcome.line()
    assert check.exit_code([outcome]) == 2


def test_a_check_no_analysis_declares_is_not_evaluated() -> None:
    """results.json is anyone's file: a threshold the analyses here do not declare says so, never a KeyError."""
    outcome = check.evaluate(Check("max_colour", 1.0), ResultsView.from_json(hand_made_results()))
    assert outcome.status == check.NOT_EVALUATED and "no analysis declares this check" in outcome.line()


def test_the_checks_are_the_analyses_declarations_and_docs_ci_lists_each() -> None:
    """Each [check] key is declared by the analysis whose rows it reads (once over the registry), and reads
    only that analysis's rows; docs/ci.md's table has a row for exactly the declared keys."""
    from refsens_report.analyses.registry import ANALYSES

    declared = [(analysis.key, one.key) for analysis in ANALYSES for one in analysis.checks]
    assert len({key for _, key in declared}) == len(declared) == len(check.CHECKS) >= 5
    view = ResultsView.from_json(hand_made_results())
    for owner, key in declared:
        rows, _ = check.candidates(view, key)
        assert rows and {row["analysis"] for row in rows} == {owner}, key
    keys_table = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8").split("**Point estimate or interval.**")[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", keys_table, re.MULTILINE)
    assert sorted(documented) == sorted(key for _, key in declared)


# --- the gate from the command line ----------------------------------------------------------------


def small_record(
    directory: Path, version: str, neutral: bool = False, check_table: str = "", items: int = 1500
) -> Path:
    """Simulate a small record (200 resamples) under ``version``; return its config (with [check])."""
    from refsens_report.demo import write_simulation

    write_simulation(directory, items=items, seed=0, neutral=neutral)
    config = directory / "refsens.toml"
    text = config.read_text(encoding="utf-8")
    text = re.sub(r'^version = ".*"$', f'version = "{version}"', text, flags=re.M)
    text = re.sub(r"^resamples = .*$", "resamples = 200", text, flags=re.M)
    config.write_text(text + ("\n" + check_table if check_table else ""), encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def record_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_record(tmp_path_factory.mktemp("gate-record"), "1.0.0")


def with_checks(config: Path, table: str, tmp_path: Path) -> Path:
    """Return a copy of the config (beside its record) with ``table`` as its [check]."""
    import hashlib

    copy = config.parent / f"check-{tmp_path.name}-{hashlib.sha256(table.encode()).hexdigest()[:8]}.toml"
    copy.write_text(config.read_text(encoding="utf-8") + "\n[check]\n" + table, encoding="utf-8")
    return copy


def write_hand_made(folder: Path, **kwargs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(hand_made_results(**kwargs)), encoding="utf-8")
    return folder


def test_check_exit_codes_lines_and_junit(record_config: Path, tmp_path: Path, capsys) -> None:
    from junitparser import Error, Failure, JUnitXml

    results = write_hand_made(tmp_path / "results")
    passing = with_checks(record_config, "max_band = 5\nmax_abs_delta = 3\nmin_kendall_tau = 0.5\n", tmp_path)
    assert main(["check", str(passing), "--results", str(results)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[1:4]] == ["PASS", "PASS", "PASS"] and out[
        -1
    ] == "3 checks: 3 passed, 0 failed"

    failing = with_checks(
        record_config,
        'max_band = 3\nmax_abs_skew = { threshold = 3, fail_when = "any_of_interval" }\nmax_significant_flips = 1\n',
        tmp_path,
    )
    report = tmp_path / "reports" / "check.xml"
    assert main(["check", str(failing), "--results", str(results), "--junit", str(report)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  max_band = 3: band, strict, pooled: 4.00; estimate 4.00 > 3" in out
    assert (
        "FAIL  max_abs_skew = 3: skew of delivered, a − b, pooled: +2.0 [+0.5, +3.5]; "
        "largest |value| in the interval 3.5 > 3" in out
    )
    assert "PASS  max_significant_flips = 1" in out
    suite = next(iter(JUnitXml.fromfile(str(report))))
    assert (suite.tests, suite.failures, suite.errors) == (3, 2, 0)
    cases = {case.name: case for case in suite}
    assert set(cases) == {"max_band", "max_abs_skew", "max_significant_flips"}
    assert isinstance(cases["max_band"].result[0], Failure) and "4.00 > 3" in cases["max_band"].result[0].message
    assert cases["max_significant_flips"].is_passed

    # a check the results cannot answer: its line, an error in the JUnit report, exit 2 naming it
    assert (
        main(
            [
                "check",
                str(passing),
                "--results",
                str(write_hand_made(tmp_path / "no-board", leaderboard=False)),
                "--junit",
                str(report),
            ]
        )
        == 2
    )
    captured = capsys.readouterr()
    assert "N/A   min_kendall_tau = 0.5: not evaluated" in captured.out
    assert "min_kendall_tau" in captured.err and "Traceback" not in captured.err
    errors = [
        case for case in next(iter(JUnitXml.fromfile(str(report)))) if case.result and isinstance(case.result[0], Error)
    ]
    assert [case.name for case in errors] == ["min_kendall_tau"]


def test_check_runs_the_audit_when_no_results_are_given(record_config: Path, tmp_path: Path, capsys) -> None:
    generous = with_checks(record_config, "max_band = 100\nmax_abs_delta = 100\nmax_abs_skew = 100\n", tmp_path)
    assert main(["check", str(generous), "--resamples", "50", "--quiet"]) == 0
    assert capsys.readouterr().out.count("PASS") == 3
    strict = with_checks(record_config, "max_band = 0\n", tmp_path)
    assert main(["check", str(strict), "--resamples", "50"]) == 1
    assert "FAIL  max_band = 0" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ("max_bandd = 3\n", "'check.max_bandd': unknown key"),
        ('max_band = { threshold = 3, fail_when = "any_of_interval" }\n', "'check.max_band.fail_when'"),
        ('max_abs_delta = { threshold = 3, fail_when = "sometimes" }\n', "'check.max_abs_delta.fail_when'"),
        ("min_kendall_tau = 2\n", "'check.min_kendall_tau': must be between -1 and 1"),
        ('max_abs_delta = "big"\n', "'check.max_abs_delta': must be a number"),
        ("max_significant_flips = 1.5\n", "'check.max_significant_flips': must be a whole number"),
        ("max_abs_skew = -1\n", "'check.max_abs_skew': must be 0 or more"),
        ('max_abs_skew = { fail_when = "estimate" }\n', "'check.max_abs_skew': needs a threshold"),
        ("max_band = { threshold = 3, colour = 1 }\n", "'check.max_band.colour': unknown key"),
        ("max_band = " + "9" * 400 + "\n", "'check.max_band': must be a number, got 999"),  # beyond a float
        ("max_abs_delta = { threshold = -" + "9" * 400 + " }\n", "'check.max_abs_delta.threshold': must be a number"),
    ],
)
def test_bad_check_keys_exit_2_naming_the_key(
    record_config: Path, tmp_path: Path, capsys, table: str, named: str
) -> None:
    config = with_checks(record_config, table, tmp_path)
    assert main(["check", str(config), "--results", str(write_hand_made(tmp_path / "results"))]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert main(["validate", str(config)]) == 2  # the same problem, whichever command reads the config
    assert named in capsys.readouterr().err


def deeply_nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# results.json files `check --results` must refuse in one line naming what is wrong
MALFORMED_RESULTS = {
    "deeply nested": ('{"rows": [], "config": ' + deeply_nested(100_000) + "}", "nested too deeply"),
    "a deeply nested row": (
        lambda: {**hand_made_results(), "rows": [json.loads(deeply_nested(900))]},
        "rows[0] must be an object",
    ),
    "a row not an object": (lambda: {**hand_made_results(), "rows": [1]}, "rows[0] must be an object, got 1"),
    "a row without an estimate": (
        lambda: {
            **hand_made_results(),
            "rows": [
                {key: value for key, value in row.items() if key != "estimate"} for row in hand_made_results()["rows"]
            ],
        },
        "rows[0] has no estimate",
    ),
    "an estimate as text": (
        lambda: {**hand_made_results(), "rows": [{**row, "estimate": "4.0"} for row in hand_made_results()["rows"]]},
        "rows[0].estimate is '4.0'",
    ),
    "a statistic as a number": (
        lambda: {**hand_made_results(), "rows": [{**row, "statistic": 7} for row in hand_made_results()["rows"]]},
        "rows[0].statistic is 7",
    ),
    "config a list": (lambda: {**hand_made_results(), "config": []}, "config must be an object, got []"),
    "no roles": (lambda: {**hand_made_results(), "config": {"audit": {}}}, "config.roles must be an object"),
    "no references": (
        lambda: {**hand_made_results(), "config": {"roles": {"outputs": ["a"], "references": []}}},
        "config.roles.references names no reference",
    ),
    "an unknown rule": (
        lambda: {**hand_made_results(), "config": {**hand_made_results()["config"], "audit": {"rules": ["lenient"]}}},
        "config.audit.rules must be a list of",
    ),
    "applicability a list": (
        lambda: {**hand_made_results(), "applicability": ["x"]},
        "applicability must be an object",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_RESULTS))
def test_check_refuses_a_malformed_results_json_in_one_line(
    case: str, record_config: Path, tmp_path: Path, capsys
) -> None:
    made, named = MALFORMED_RESULTS[case]
    (tmp_path / "results.json").write_text(made if isinstance(made, str) else json.dumps(made()), encoding="utf-8")
    config = with_checks(record_config, "max_band = 5\nmax_abs_delta = 3\nmin_kendall_tau = 0.5\n", tmp_path)
    assert main(["check", str(config), "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "not a refsens-report results.json" in err or "cannot read the results" in err, err
    assert named in err, err


def test_names_holding_controls_are_escaped_on_the_terminal_and_in_junit(
    record_config: Path, tmp_path: Path, capsys
) -> None:
    from junitparser import JUnitXml

    results = hand_made_results()
    escape, override = "\x1b[2J", "\u202e"
    results["dataset"] = {"name": f"Hand{escape}made", "version": f"1{override}.0\x00"}
    results["rows"] = [
        {**row, "output": f"a{escape}", "reference": f"delivered{override}"} if row["output"] == "a" else row
        for row in results["rows"]
    ]
    (tmp_path / "results.json").write_text(json.dumps(results), encoding="utf-8")
    config = with_checks(record_config, "max_abs_delta = 2\nmax_band = 3\n", tmp_path)
    report = tmp_path / "check.xml"
    assert main(["check", str(config), "--results", str(tmp_path), "--junit", str(report)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and override not in out and "\x00" not in out
    assert out.startswith("Hand\\x1b[2Jmade 1\\u202e.0\\x00: release checks")
    assert "FAIL  max_abs_delta = 2: Δ a\\x1b[2J, delivered\\u202e − reviewer" in out
    suite = next(iter(JUnitXml.fromfile(str(report))))  # parses: no character XML 1.0 forbids
    assert "\\x1b[2J" in suite.name and "Δ a\\x1b[2J" in next(iter(suite)).result[0].message


def test_check_without_a_check_table_is_bad_input(record_config: Path, tmp_path: Path, capsys) -> None:
    assert main(["check", str(record_config), "--results", str(write_hand_made(tmp_path / "r"))]) == 2
    assert "no [check] table" in capsys.readouterr().err
    assert main(["check", str(with_checks(record_config, "", tmp_path)), "--results", str(tmp_path / "r")]) == 2
    assert "names no check" in capsys.readouterr().err
    assert (
        main(
            [
                "check",
                str(with_checks(record_config, "max_band = 1\n", tmp_path)),
                "--results",
                str(tmp_path / "missing"),
            ]
        )
        == 2
    )
    assert "no results.json" in capsys.readouterr().err


def test_help_texts_say_what_each_command_and_option_does(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "exit codes: 0 success, 1 a release check failed" in text and "check" in text
    for command, words in (
        ("check", ("--junit", "--results", "max_band", "exit codes")),
        ("build", ("--no-pdf", "--compare-to", "--resamples", "--quiet")),
        ("audit", ("--resamples", "--quiet")),
    ):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert all(word in text for word in words), (command, text)


def test_a_bad_resamples_override_is_bad_input(record_config: Path, capsys) -> None:
    assert main(["audit", str(record_config), "--out", "unused", "--resamples", "0"]) == 2
    assert "--resamples: must be a whole number" in capsys.readouterr().err


# --- builds: the gate in the summary, changes between versions, drafts ------------------------------


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A site with two versions of a 6,000-item record, built without PDF: 1.0.0 (the silent default, with a
    failing [check]) and 1.1.0, where the primary reference `delivered` was rebuilt by a neutral rule (on
    about 600 audited items its skew moves well beyond both intervals)."""
    base = tmp_path_factory.mktemp("versions")
    first = small_record(
        base / "first", "1.0.0", check_table="[check]\nmax_band = 0\nmax_abs_skew = 1000\n", items=6000
    )
    second = small_record(base / "second", "1.1.0", neutral=True, items=6000)
    site = base / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        codes = [
            main(["build", "--draft", str(config), "--out", str(site), "--no-pdf", "--quiet"])
            for config in (first, second)
        ]
    return {"site": site, "codes": codes, "first": first, "second": second}


def page_text(path: Path) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")).split())


def test_build_shows_the_checks_but_only_check_exits_1(versions: dict) -> None:
    assert versions["codes"] == [0, 0]  # max_band = 0 fails, and the build still succeeds
    text = page_text(versions["site"] / "1.0.0" / "index.html")
    assert "Release checks" in text and "2 checks: 1 passed, 1 failed" in text
    assert "FAIL max_band = 0" in text and "PASS max_abs_skew = 1000" in text
    assert "Release checks" not in page_text(versions["site"] / "1.1.0" / "index.html")  # no [check] there


def test_a_draft_has_no_pdf_and_lists_every_file(versions: dict) -> None:
    folder = versions["site"] / "1.0.0"
    assert not list(folder.glob("*.pdf"))
    html = (folder / "index.html").read_text(encoding="utf-8")
    assert ".pdf" not in re.sub(r"figures/figure-\d+-[a-z-]+\.pdf", "", html)  # only the figures' own PDFs
    files = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    on_disk = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
    assert set(files) == on_disk - {"manifest.json"}
    assert {*metadata.FILES} <= set(files)


def test_a_first_version_has_no_changes(versions: dict) -> None:
    folder = versions["site"] / "1.0.0"
    assert not (folder / changes.CHANGES_NAME).exists()
    assert 'id="section-changes"' not in (folder / "index.html").read_text(encoding="utf-8")


def read_changes(folder: Path) -> list[dict[str, str]]:
    import csv

    with open(folder / changes.CHANGES_NAME, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_changes_name_the_rebuilt_reference(versions: dict) -> None:
    folder = versions["site"] / "1.1.0"
    rows = read_changes(folder)
    current = json.loads((folder / "results.json").read_text(encoding="utf-8"))["rows"]
    # every current row once, plus the previous version's rows it no longer has; only the leaderboard's flip
    # rows (one per pair that changes order: the demo's model outputs rank differently) come and go
    removed = [row for row in rows if row["change"] == "removed"]
    assert len(rows) == len(current) + len(removed)
    assert {(row["analysis"], row["statistic"]) for row in rows if row["change"] in ("added", "removed")} <= {
        ("leaderboard", "flip")
    }

    def change(**where: str) -> dict[str, str]:
        found = [row for row in rows if all(row[column] == value for column, value in where.items())]
        assert len(found) == 1, where
        return found[0]

    # delivered was rebuilt: its skew moved beyond both intervals; the reviewer gold and the annotators did not move
    skew = change(analysis="neutrality", statistic="skew", language="pooled", reference="delivered")
    assert skew["change"] == "moved" and skew["headline"] == "yes"
    assert float(skew["difference"]) == pytest.approx(
        float(skew["current_estimate"]) - float(skew["previous_estimate"])
    )
    assert (
        change(analysis="neutrality", statistic="skew", language="pooled", reference="reviewer")["change"]
        == "unchanged"
    )
    assert change(analysis="agreement", statistic="f1", rule="strict", language="pooled")["change"] == "unchanged"
    # the section: the title in the contents, the moved skew in the headline table, the summary's line
    text = page_text(folder / "index.html")
    assert "Changes since 1.0.0" in text
    assert re.search(
        r"skew of delivered, annotator_a − annotator_b, pooled \S+ \[\S+, \S+\] \S+ \[\S+, \S+\] \S+ moved", text
    )
    assert "Since 1.0.0:" in text and "headline numbers moved beyond their intervals" in text
    assert "The same references, outputs, annotators and languages as in 1.0.0." in text


def test_the_index_shows_every_versions_headlines_side_by_side(versions: dict) -> None:
    index = (versions["site"] / "index.html").read_text(encoding="utf-8")
    assert "Headline numbers side by side" in index
    grid = index[index.index('class="grid"') :]
    heads = re.findall(r'<th scope="col">([^<]+)</th>', grid[: grid.index("</thead>")])
    assert heads == ["Statistic", "1.1.0", "1.0.0"]
    for version in ("1.0.0", "1.1.0"):
        results = json.loads((versions["site"] / version / "results.json").read_text(encoding="utf-8"))
        skew = next(
            row
            for row in results["rows"]
            if row["statistic"] == "skew" and row["language"] == "pooled" and row["reference"] == "delivered"
        )
        assert said(skew) in grid


def test_compare_to_picks_the_baseline_and_a_bad_one_changes_nothing(versions: dict, tmp_path: Path, capsys) -> None:
    site = versions["site"]
    third = versions["second"].parent / "third.toml"
    third.write_text(
        versions["second"].read_text(encoding="utf-8").replace('version = "1.1.0"', 'version = "2.0.0"'),
        encoding="utf-8",
    )
    before = sorted(path.name for path in site.iterdir())
    index = (site / "index.html").read_bytes()
    assert main(["build", "--draft", str(third), "--out", str(site), "--no-pdf", "--compare-to", "0.9.0"]) == 2
    assert "--compare-to 0.9.0: no such version" in capsys.readouterr().err
    assert sorted(path.name for path in site.iterdir()) == before and (site / "index.html").read_bytes() == index
    assert (
        main(
            [
                "build",
                "--draft",
                str(third),
                "--out",
                str(site),
                "--no-pdf",
                "--quiet",
                "--compare-to",
                "1.0.0",
                "--resamples",
                "100",
            ]
        )
        == 0
    )
    folder = site / "2.0.0"
    assert "Changes since 1.0.0" in page_text(folder / "index.html")
    assert json.loads((folder / "results.json").read_text(encoding="utf-8"))["resamples"] == 100
    # the same record as 1.1.0 but compared with 1.0.0: delivered's skew moved, as between 1.0.0 and 1.1.0
    moved = {
        (row["analysis"], row["statistic"], row["reference"])
        for row in read_changes(folder)
        if row["change"] == "moved" and row["language"] == "pooled"
    }
    assert ("neutrality", "skew", "delivered") in moved


def test_references_and_outputs_added_or_removed_are_named() -> None:
    current = hand_made_results()
    previous = json.loads(json.dumps(current))
    previous["config"]["roles"]["references"] = ["delivered"]
    previous["config"]["roles"]["outputs"] = ["a", "b", "old"]
    previous["rows"] = [row for row in previous["rows"] if "reviewer" not in (row["reference"], row["reference_2"])]
    previous["rows"][0].update(estimate=9.0, ci_low=8.0, ci_high=10.0)  # the primary skew: 9.0 then, 2.0 now
    section, text = changes.compare("0.9.0", previous, "0" * 64, current)
    assert [(role.role, role.added, role.removed) for role in section.roles] == [
        ("references", ("reviewer",), ()),
        ("outputs", ("c",), ("old",)),
    ]
    classes = {line.split(",")[1] + ":" + line.split(",")[6]: line.rsplit(",", 2)[1] for line in text.splitlines()[1:]}
    assert classes["delta:delivered"] == "added" and classes["kendall_tau:delivered"] == "added"
    assert [(headline.label, headline.change) for headline in section.headlines][0] == (
        "skew of delivered, a − b, pooled",
        "moved",
    )
    assert "references added: reviewer" in section.sentence and "outputs removed: old" in section.sentence


def _nested(depth: int) -> object:
    value: object = 1.0
    for _ in range(depth):
        value = [value]
    return value


TAMPERED = {  # a previous version's results.json edited by hand or damaged: (how, what the message says)
    "a deeply nested estimate": (
        lambda results: results["rows"][0].update(estimate=_nested(900)),
        "row 1: 'estimate' is not a number",
    ),
    "a deeply nested label": (
        lambda results: results["rows"][1].update(reference=_nested(900)),
        "row 2: 'reference' is not a single value",
    ),
    "a row that is a list": (lambda results: results["rows"].append([1, 2]), "is not an object"),
    "roles that are a string": (lambda results: results["config"].update(roles="delivered"), "no config.roles"),
    "references that are numbers": (
        lambda results: results["config"]["roles"].update(references=[1]),
        "config.roles.references is not a list of names",
    ),
    "rules that are an object": (
        lambda results: results["config"].update(audit={"rules": {"strict": 1}}),
        "config.audit.rules",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_previous_version_is_skipped_with_a_warning_or_refused_when_named(case, tmp_path, capsys):
    """Without --compare-to the build compares with the newest version it can read and says which it skipped;
    a version named by --compare-to that cannot be compared with is one line, exit 2."""
    from refsens_report import site
    from refsens_report.errors import InputError

    tamper, message = TAMPERED[case]
    for version in ("0.9.0", "1.0.0"):
        (tmp_path / version).mkdir()
        results = hand_made_results()
        if version == "1.0.0":
            tamper(results)
        (tmp_path / version / "results.json").write_text(json.dumps(results), encoding="utf-8")
    assert changes.results_problem(hand_made_results()) is None
    baseline = site.find_baseline(tmp_path, "2.0.0", None)
    assert baseline is not None and baseline.version == "0.9.0"
    warning = capsys.readouterr().err
    assert warning.startswith(f"warning: {tmp_path / '1.0.0'}: not compared with: ") and message in warning, warning
    with pytest.raises(InputError) as refused:
        site.find_baseline(tmp_path, "2.0.0", "1.0.0")
    assert len(refused.value.problems) == 1 and message in refused.value.problems[0], refused.value.problems
    # the index leaves it out with a warning, and its grid of headlines compares the rest
    assert "1.0.0" not in site.site_index_html({"0.9.0": tmp_path / "0.9.0", "1.0.0": tmp_path / "1.0.0"})
    assert "left out of the site index" in capsys.readouterr().err


# --- metadata -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # rdflib's, inside mlcroissant
def test_croissant_validates_and_its_rai_fields_equal_the_results(built_site: Built) -> None:
    import mlcroissant

    path = built_site.folder / metadata.CROISSANT_NAME
    dataset = mlcroissant.Dataset(jsonld=str(path))
    assert not dataset.metadata.ctx.issues.errors
    # the one recommendation left: the dataset's license, which only the team knows ([report] license)
    assert all("license" in warning for warning in dataset.metadata.ctx.issues.warnings)
    results = json.loads((built_site.folder / "results.json").read_text(encoding="utf-8"))
    records = list(dataset.records("results"))
    assert len(records) == len(results["rows"])  # the record set reads results.csv column by column
    first = results["rows"][0]
    assert records[0]["results/estimate"] == pytest.approx(first["estimate"])
    assert records[0]["results/analysis"].decode() == first["analysis"]

    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["conformsTo"][0] == "http://mlcommons.org/croissant/1.1"
    assert document["name"] == results["dataset"]["name"] and document["version"] == results["dataset"]["version"]
    view = ResultsView.from_json(results)
    analysis = document["rai:dataAnnotationAnalysis"]
    pooled_rows = [row for row in results["rows"] if row["language"] == "pooled"]
    for row in pooled_rows:
        if (row["analysis"], row["statistic"]) in {("agreement", "f1"), ("neutrality", "skew")}:
            assert any(said(row) in sentence and row["reference"] in sentence for sentence in analysis), row
    band = next(
        row for row in pooled_rows if row["statistic"] == "band" and row["output"] == "" and row["rule"] == "strict"
    )
    assert any(f"±{band['estimate']:.2f} F1 points" in sentence for sentence in analysis)
    per_item = document["rai:annotationsPerItem"]
    for name, count in results["record"]["labellings"].items():
        assert f"{name} on {count:,}" in per_item
    assert f"{results['record']['subsets']['audited']['pooled']:,} items carry every labelling" in per_item
    protocol = " ".join(document["rai:dataAnnotationProtocol"])
    assert all(name in protocol for name in [*view.annotators, *view.references, *view.outputs])
    limitations = document["rai:dataLimitations"]
    assert any(f"±{band['estimate']:.2f} F1 points" in sentence for sentence in limitations)
    skipped = [reason for reason in results["applicability"].values() if reason]
    assert all(any(reason in sentence for sentence in limitations) for reason in skipped)


def test_citation_cff_validates_and_a_broken_one_does_not(built_site: Built, tmp_path: Path) -> None:
    from cffconvert.cli.create_citation import create_citation

    cff = built_site.folder / metadata.CFF_NAME
    create_citation(str(cff), None).validate()
    broken = tmp_path / "CITATION.cff"
    broken.write_text(re.sub(r"authors:\n(  - .*\n)+", "", cff.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 - cffconvert raises jsonschema's ValidationError
        create_citation(str(broken), None).validate()


def test_url_authors_and_license_reach_every_citation(tmp_path: Path) -> None:
    from cffconvert.cli.create_citation import create_citation

    results = hand_made_results()
    results["dataset"]["name"] = "PII & names_v2 {test}"
    results["config"]["report"] = {
        "url": "https://example.org/pii/1.0.0/",
        "authors": ["Ada Lovelace", "Team Ω"],
        "license": "CC-BY-4.0",
    }
    work = metadata.work_of(results, "2026-03-04T00:00:00+00:00")
    (tmp_path / "CITATION.cff").write_text(metadata.citation_cff(work), encoding="utf-8")
    citation = create_citation(str(tmp_path / "CITATION.cff"), None)
    citation.validate()
    assert citation.cffobj["url"] == "https://example.org/pii/1.0.0/" and citation.cffobj["license"] == "CC-BY-4.0"
    assert [author["name"] for author in citation.cffobj["authors"]] == ["Ada Lovelace", "Team Ω"]
    entry = metadata.bibtex(work)
    assert entry.startswith("@misc{pii_names_v2_test_1_0_0,")
    assert r"PII \& names\_v2 \{test\}" in entry and "{Ada Lovelace} and {Team Ω}" in entry
    assert "url = {https://example.org/pii/1.0.0/}" in entry and "month = mar" in entry
    unescaped = entry.replace(r"\{", "").replace(r"\}", "")
    assert unescaped.count("{") == unescaped.count("}")
    card = metadata.dataset_card({**results, "record": {"items": 25_000, "languages": ["hi", "pt-BR"]}}, work)
    assert "license: cc-by-4.0" in card and "- pt-BR" in card and "- 10K<n<100K" in card


def test_the_dataset_card_is_read_by_huggingface_hub_and_says_the_summary_literally(built_site: Built) -> None:
    import huggingface_hub
    import yaml
    from markdown_it import MarkdownIt

    from refsens_report import render

    folder = built_site.folder
    text = (folder / metadata.CARD_MARKDOWN_NAME).read_text(encoding="utf-8")
    card = huggingface_hub.DatasetCard(text)
    header = yaml.safe_load((folder / metadata.CARD_NAME).read_text(encoding="utf-8"))
    assert card.data.to_dict() == header  # one set of fields, the same YAML
    assert card.data.pretty_name == header["pretty_name"] and "reference-sensitivity" in card.data.tags
    assert card.data.task_categories == ["token-classification"] and card.data.size_categories
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    summary = render.build_body(ResultsView.from_json(results), {}).summary
    assert summary.verdicts and summary.findings
    # rendered as Markdown (raw HTML on, as a Hub page allows some), every verdict and finding reads as the appendix
    # prints it, names from the record included (a labelling named with an <img onerror>): text, never markup
    html = MarkdownIt("commonmark").render(card.text)
    items = [" ".join(re.sub(r"<[^>]+>", "", item).split()) for item in re.findall(r"<li>(.*?)</li>", html, re.S)]
    unescaped = [
        item.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&") for item in items
    ]
    for verdict in summary.verdicts:
        assert f"{verdict.reference} instead of {verdict.primary}. {' '.join(verdict.text.split())}" in unescaped
    for finding in summary.findings:
        assert " ".join(finding.split()) in unescaped
    assert "<img" not in html and "<script" not in html
    links = re.findall(r'href="([^"]+)"', html)
    assert links[0] == "index.html" and built_site.version and all((folder / link).is_file() for link in links)
    assert {f"refsens-appendix-{built_site.version}.pdf", f"refsens-appendix-{built_site.version}-brief.pdf"} <= set(
        links
    )
    assert card.text.count("@misc{") == 1


def test_the_dataset_card_links_the_published_appendix(tmp_path: Path) -> None:
    results = {
        "dataset": {"name": "PII (v2)", "version": "1.0.0"},
        "record": {"items": 10, "languages": ["en"]},
        "config": {"report": {"url": "https://example.org/pii/1.0.0/", "license": "https://example.org/l"}},
    }
    work = metadata.work_of(results, "2026-03-04T00:00:00+00:00")
    text = metadata.card_markdown(results, work, "- a verdict\n", ("a.pdf", "b.pdf"), draft="Too few replicates.")
    assert text.startswith('---\npretty_name: "PII (v2)"\nlicense: other\nlicense_link: ')
    assert "[The appendix](https://example.org/pii/1.0.0/)" in text and "(https://example.org/pii/1.0.0/b.pdf)" in text
    assert "**Draft.** Too few replicates." in text and "\n- a verdict\n" in text
    assert metadata.card_markdown(results, work, "x\n").count(".pdf") == 0  # built without PDFs


def test_how_to_cite_is_on_the_page(built_site: Built) -> None:
    html = (built_site.folder / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="section-cite"') :]
    assert "How to cite" in section and "@misc{" in section
    for name in metadata.FILES:
        assert f'href="{name}"' in section and (built_site.folder / name).is_file()


# --- progress on a terminal ------------------------------------------------------------------------


def run_on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; return the exit code and what the terminal showed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "refsens_report", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        cwd=ROOT,
    )
    os.close(terminal)
    shown = []
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        shown.append(chunk)
    os.close(controller)
    return process.wait(timeout=120), b"".join(shown).decode("utf-8", "replace")


def test_progress_lines_on_a_terminal_and_none_with_quiet(record_config: Path, tmp_path: Path) -> None:
    code, shown = run_on_a_terminal(["audit", str(record_config), "--out", str(tmp_path / "a"), "--resamples", "100"])
    assert code == 0
    lines = [line.strip() for line in re.split(r"[\r\n]+", shown) if line.strip()]
    assert any(re.fullmatch(r"load: \d+\.\d s \(1,500 items\)", line) for line in lines), lines
    assert any(re.fullmatch(r"bootstrap: \d+\.\d s \(100 replicates\)", line) for line in lines), lines
    assert any(re.fullmatch(r"audit: \d+\.\d s", line) for line in lines), lines
    code, shown = run_on_a_terminal(
        ["audit", str(record_config), "--out", str(tmp_path / "b"), "--resamples", "100", "--quiet"]
    )
    assert code == 0 and shown.strip() == ""
    # not a terminal (a pipe, as in CI): silent without --quiet
    piped = subprocess.run(
        [
            sys.executable,
            "-m",
            "refsens_report",
            "audit",
            str(record_config),
            "--out",
            str(tmp_path / "c"),
            "--resamples",
            "100",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert piped.returncode == 0 and piped.stderr == ""
