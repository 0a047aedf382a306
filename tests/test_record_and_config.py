"""Bad input never crashes: every problem of issue 2 gives exit 2 and a message naming the file and line.

Each case calls ``cli.main(["validate", config])`` in-process (so an unexpected exception fails the test
with its traceback) and checks the exit code, the message and that stderr carries no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import A, B, D, R, config_text, item, write_project, write_record

from refsens_report.cli import main
from refsens_report.config import load_config


def good(item_id: str = "en-1", language: str = "en", **overrides) -> dict:
    """Return a valid item carrying every role labelling."""
    spans = {A: [[0, 3, "PER"]], B: [[0, 3, "PER"]], D: [[0, 3, "PER"]], R: [[0, 3, "PER"]]}
    spans.update(overrides)
    return item(item_id, language, meta={"third_pass": False}, **spans)


def run_validate(config: Path, capsys) -> tuple[int, str, str]:
    code = main(["validate", str(config)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_clean_failure(code: int, err: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert err.strip(), "a failure must say what is wrong"
    # one line per problem, each an "error:" line
    assert all(line.startswith("error: ") for line in err.strip().splitlines()), err


def test_a_good_record_validates(tmp_path, capsys):
    config = write_project(tmp_path, [good("en-1"), good("en-2"), good("de-1", "de")])
    code, out, err = run_validate(config, capsys)
    assert code == 0, err
    assert "3 items" in out and "2 languages" in out
    assert err == ""


# (what, the record's lines; the bad one is line 2 unless said otherwise, a fragment of the message)
BAD_LINES = {
    "invalid JSON": ('{"id": "en-2", "language": ', "invalid JSON"),
    "invalid JSON: trailing comma": ('{"id": "en-2", "language": "en", "labellings": {},}', "invalid JSON"),
    "non-object line: array": ("[1, 2, 3]", "not a JSON object"),
    "non-object line: string": ('"en-2"', "not a JSON object"),
    "non-object line: number": ("42", "not a JSON object"),
    "non-object line: null": ("null", "not a JSON object"),
    "missing id": ({"language": "en", "labellings": {A: []}}, "'id'"),
    "empty id": ({"id": "", "language": "en", "labellings": {A: []}}, "'id'"),
    "blank id": ({"id": "   ", "language": "en", "labellings": {A: []}}, "'id'"),
    "non-string id": ({"id": 7, "language": "en", "labellings": {A: []}}, "'id'"),
    "missing language": ({"id": "en-2", "labellings": {A: []}}, "'language'"),
    "empty language": ({"id": "en-2", "language": "", "labellings": {A: []}}, "'language'"),
    "non-string language": ({"id": "en-2", "language": 1, "labellings": {A: []}}, "'language'"),
    "labellings not an object: list": ({"id": "en-2", "language": "en", "labellings": [[0, 1, "X"]]}, "'labellings'"),
    "labellings not an object: string": ({"id": "en-2", "language": "en", "labellings": "a"}, "'labellings'"),
    "labellings missing": ({"id": "en-2", "language": "en"}, "'labellings'"),
    "spans not a list": ({"id": "en-2", "language": "en", "labellings": {A: {"0": 1}}}, A),
    "span with two fields": (good("en-2", **{A: [[0, 3]]}), "span 1 of labelling 'annotator_a'"),
    "span with four fields": (good("en-2", **{A: [[0, 3, "PER", 1]]}), "span 1 of labelling 'annotator_a'"),
    "span not a list": (good("en-2", **{A: ["0-3 PER"]}), "span 1 of labelling 'annotator_a'"),
    "float start": (good("en-2", **{A: [[0.0, 3, "PER"]]}), "span 1 of labelling 'annotator_a'"),
    "string end": (good("en-2", **{A: [[0, "3", "PER"]]}), "span 1 of labelling 'annotator_a'"),
    "boolean offset": (good("en-2", **{A: [[True, 3, "PER"]]}), "span 1 of labelling 'annotator_a'"),
    "empty type": (good("en-2", **{A: [[0, 3, ""]]}), "span 1 of labelling 'annotator_a'"),
    "blank type": (good("en-2", **{A: [[0, 3, "  "]]}), "span 1 of labelling 'annotator_a'"),
    "non-string type": (good("en-2", **{A: [[0, 3, 5]]}), "span 1 of labelling 'annotator_a'"),
    "null type": (good("en-2", **{A: [[0, 3, None]]}), "span 1 of labelling 'annotator_a'"),
    "start < 0": (
        good("en-2", **{B: [[0, 3, "PER"], [-1, 2, "LOC"]]}),
        "span 2 of labelling 'annotator_b' has start < 0",
    ),
    "start == end": (good("en-2", **{D: [[3, 3, "PER"]]}), "start >= end"),
    "start > end": (good("en-2", **{D: [[4, 2, "PER"]]}), "start >= end"),
    "end beyond text": (
        item("en-2", "en", text="abcd", **{A: [[0, 4, "X"]], B: [[1, 5, "X"]], D: [], R: []}),
        "labelling 'annotator_b'",
    ),
    "third_pass a string": (
        item("en-2", "en", meta={"third_pass": "yes"}, **{A: [], B: [], D: [], R: []}),
        "third_pass",
    ),
    "third_pass a number": (item("en-2", "en", meta={"third_pass": 1}, **{A: [], B: [], D: [], R: []}), "third_pass"),
    "third_pass null": (item("en-2", "en", meta={"third_pass": None}, **{A: [], B: [], D: [], R: []}), "third_pass"),
    "undecodable bytes": (b'{"id": "en-2", "language": "\xff", "labellings": {}}', "UTF-8"),
    "a lone 0xff byte": (b"\xff", "UTF-8"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_a_bad_line_gives_exit_2_naming_file_and_line(case, tmp_path, capsys):
    bad, fragment = BAD_LINES[case]
    config = write_project(tmp_path, [good("en-1"), bad, good("en-3")])
    code, out, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "record.jsonl:2:" in err, err
    assert fragment in err, err
    # the good lines around it are not blamed
    assert "record.jsonl:1:" not in err and "record.jsonl:3:" not in err


def test_a_bad_line_also_stops_audit(tmp_path, capsys):
    config = write_project(tmp_path, [good("en-1"), "{not json"])
    code = main(["audit", str(config), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert_clean_failure(code, err)
    assert "record.jsonl:2:" in err
    assert not (tmp_path / "out" / "results.csv").exists()


def test_span_end_exactly_at_text_length_is_fine(tmp_path, capsys):
    config = write_project(tmp_path, [item("en-1", "en", text="abcd", **{A: [[0, 4, "X"]], B: [], D: [], R: []})])
    code, _, err = run_validate(config, capsys)
    assert code == 0, err


def test_repeated_id_names_both_lines(tmp_path, capsys):
    config = write_project(tmp_path, [good("en-1"), good("en-2"), good("en-1")])
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "record.jsonl:3:" in err and "'en-1'" in err
    assert "record.jsonl:1" in err  # where it was first seen


def test_every_bad_line_is_reported_once_each(tmp_path, capsys):
    lines = [good("en-1"), "{", good("en-3"), "[]", good("en-3"), good("en-6", **{A: [[5, 1, "X"]]})]
    config = write_project(tmp_path, lines)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    for number in (2, 4, 5, 6):
        assert err.count(f"record.jsonl:{number}:") == 1, err
    assert len(err.strip().splitlines()) == 4


def test_a_flood_of_bad_lines_is_capped(tmp_path, capsys):
    config = write_project(tmp_path, [good("en-0")] + ["{"] * 500)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "record.jsonl:2:" in err
    assert len(err.strip().splitlines()) <= 60


@pytest.mark.parametrize("content", [b"", b"\n", b"\n  \n\t\n"], ids=["empty", "newline", "blank lines"])
def test_an_empty_record_is_an_error(content, tmp_path, capsys):
    config = write_project(tmp_path, [])
    (tmp_path / "record.jsonl").write_bytes(content)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "record.jsonl" in err and "empty" in err


def test_undecodable_bytes_name_the_line(tmp_path, capsys):
    config = write_project(tmp_path, [])
    payload = (json.dumps(good("en-1")) + "\n" + json.dumps(good("en-2")) + "\n").encode() + b"\xff\xfe\n"
    (tmp_path / "record.jsonl").write_bytes(payload)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "record.jsonl:3:" in err and "UTF-8" in err


def test_a_labelling_named_in_the_config_on_no_item(tmp_path, capsys):
    items = [item("en-1", "en", **{A: [], B: [], D: []}), item("en-2", "en", **{A: [], B: [], D: []})]
    config = write_project(tmp_path, items)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "'reviewer'" in err and "roles.references" in err


def test_a_misspelt_role_name_is_reported_with_its_key(tmp_path, capsys):
    config = write_project(tmp_path, [good("en-1")], references=(D, "reviewr"), outputs=("annotator_c", B))
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "Config value 'roles.references': 'reviewr'" in err
    assert "Config value 'roles.outputs': 'annotator_c'" in err


def test_no_audited_item(tmp_path, capsys):
    # every labelling is present somewhere, but never all four on one item
    items = [
        item("en-1", "en", **{A: [], B: [], D: []}),
        item("en-2", "en", **{A: [], B: [], R: []}),
        item("en-3", "en", **{D: [], R: []}),
    ]
    config = write_project(tmp_path, items)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "no audited item" in err


# ---------------------------------------------------------------------------------------------------------
# Config problems


def write_config(tmp_path: Path, text: str, items=None) -> Path:
    write_record(tmp_path / "record.jsonl", items if items is not None else [good("en-1")])
    path = tmp_path / "refsens.toml"
    path.write_text(text, encoding="utf-8")
    return path


CONFIG_PROBLEMS = {
    "unknown audit key": (
        dict(audit={"resample": 10}),
        "Config value 'audit.resample': unknown key",
    ),
    "resamples -3": (
        dict(audit={"resamples": -3}),
        "Config value 'audit.resamples': must be a positive integer or \"auto\", got -3",
    ),
    "resamples zero": (
        dict(audit={"resamples": 0}),
        "Config value 'audit.resamples': must be a positive integer or \"auto\", got 0",
    ),
    "resamples a string": (dict(audit={"resamples": "200"}), "Config value 'audit.resamples'"),
    "resamples a float": (dict(audit={"resamples": 2.5}), "Config value 'audit.resamples'"),
    "resamples a boolean": (dict(audit={"resamples": True}), "Config value 'audit.resamples'"),
    "seed negative": (dict(audit={"seed": -1}), "Config value 'audit.seed'"),
    "confidence 1": (dict(audit={"confidence": 1}), "Config value 'audit.confidence'"),
    "confidence 95": (dict(audit={"confidence": 95}), "Config value 'audit.confidence'"),
    "bad rule": (
        dict(audit={"rules": ["strict", "fuzzy"]}),
        "Config value 'audit.rules': must be a non-empty list drawn from strict, relaxed, overlap",
    ),
    "empty rules": (dict(audit={"rules": []}), "Config value 'audit.rules'"),
    "rules not a list": (dict(audit={"rules": "strict"}), "Config value 'audit.rules'"),
    "bad policy": (dict(audit={"duplicate_policy": "keep_middle"}), "Config value 'audit.duplicate_policy'"),
    "exclude not boolean": (
        dict(audit={"exclude_defective_duplicates": "yes"}),
        "Config value 'audit.exclude_defective_duplicates'",
    ),
    "version with a slash": (dict(version="1.0/evil"), "Config value 'dataset.version'"),
    "version with ..": (dict(version="../1.0"), "Config value 'dataset.version'"),
    "version ..": (dict(version=".."), "Config value 'dataset.version'"),
    "version with inner ..": (dict(version="1..0"), "Config value 'dataset.version'"),
    "missing record file": (dict(record="nowhere.jsonl"), "Config value 'record.path'"),
    "one annotator": (dict(annotators=(A,)), "Config value 'roles.annotators'"),
    "no outputs": (dict(outputs=()), "Config value 'roles.outputs'"),
    "no references": (dict(references=()), "Config value 'roles.references'"),
    "repeated reference": (dict(references=(D, D)), "Config value 'roles.references'"),
    # [engine] (tests/test_engine.py has the rest, with a Dask cluster)
    "engine: workers without dask": (
        dict(extra="[engine]\nworkers = 2\n"),
        "Config value 'engine.workers': applies to backend = \"dask\" only",
    ),
    "engine: scheduler and workers": (
        dict(extra='[engine]\nbackend = "dask"\nscheduler = "tcp://127.0.0.1:8786"\nworkers = 2\n'),
        "Config value 'engine.workers': give either scheduler",
    ),
    "engine: unknown key": (dict(extra="[engine]\nthreads = 2\n"), "Config value 'engine.threads': unknown key"),
    # [roles] descriptions: what a labelling is, for the appendix's table of the references
    "description of no labelling": (
        dict(extra='[roles.descriptions]\nrevewer = "typo"\n'),
        "Config value 'roles.descriptions.revewer': names no labelling of [roles]",
    ),
    "description not a string": (
        dict(extra=f"[roles.descriptions]\n{D} = 3\n"),
        f"Config value 'roles.descriptions.{D}': must be a non-empty string, got 3",
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_PROBLEMS))
def test_a_config_problem_names_its_key(case, tmp_path, capsys):
    settings, message = CONFIG_PROBLEMS[case]
    text = config_text(**settings)
    config = write_config(tmp_path, text)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert message in err, err


def test_the_missing_record_file_is_named(tmp_path, capsys):
    config = write_config(tmp_path, config_text(record="data/nowhere.jsonl"))
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "data/nowhere.jsonl" in err


def test_config_problems_are_collected_together(tmp_path, capsys):
    text = config_text(
        version="../x",
        record="missing.jsonl",
        audit={"resamples": -3, "rules": ["exact"], "duplicate_policy": "keep_some", "colour": "blue"},
    )
    config = write_config(tmp_path, text)
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    expected = [
        "Config value 'audit.resamples': must be a positive integer or \"auto\", got -3",
        "Config value 'audit.rules'",
        "Config value 'audit.duplicate_policy'",
        "Config value 'audit.colour': unknown key",
        "Config value 'dataset.version'",
        "Config value 'record.path'",
    ]
    for message in expected:
        assert message in err, (message, err)
    assert len(err.strip().splitlines()) == len(expected)


def test_unknown_table_and_missing_required_tables(tmp_path, capsys):
    config = write_config(tmp_path, '[dataset]\nname = "x"\nversion = "1"\n[extras]\nfoo = 1\n')
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "Config value 'extras'" in err
    assert "Config value 'record'" in err and "Config value 'roles'" in err


def test_invalid_toml(tmp_path, capsys):
    config = write_config(tmp_path, "[dataset\nname = 1\n")
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "refsens.toml" in err and "TOML" in err


def test_missing_config_file(tmp_path, capsys):
    code, _, err = run_validate(tmp_path / "nope.toml", capsys)
    assert_clean_failure(code, err)
    assert "nope.toml" in err


def test_language_codes_stay_strings(tmp_path, capsys):
    # `no` (Norwegian) is a string in TOML and in JSON: no YAML-style boolean surprise
    config = write_project(tmp_path, [good("no-1", "no"), good("en-1", "en")])
    code, out, err = run_validate(config, capsys)
    assert code == 0, err


def test_bad_usage_is_exit_2(capsys):
    assert main(["validate"]) == 2
    assert main(["frobnicate", "x"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_an_internal_error_is_one_line_and_exit_3_not_check_s_1(tmp_path, capsys, monkeypatch):
    """A bug exits 3 with one line naming the exception (exit 1 would read as a failed release check in CI);
    REFSENS_DEBUG=1 adds the traceback, and the exit code stays 3."""
    from refsens_report import cli

    def broken(args):
        raise RuntimeError("\x1b[2Jcleared\nsecond line")  # escaped, one line: the message may quote the input

    monkeypatch.setitem(cli.COMMANDS, "validate", broken)
    monkeypatch.delenv("REFSENS_DEBUG", raising=False)
    assert main(["validate", str(tmp_path / "refsens.toml")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "\x1b" not in err
    assert err.startswith("internal error: RuntimeError: \\x1b[2Jcleared\\nsecond line: please report it at ")
    assert "REFSENS_DEBUG=1" in err
    monkeypatch.setenv("REFSENS_DEBUG", "1")
    assert main(["validate", str(tmp_path / "refsens.toml")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "in broken" in err and err.splitlines()[-1].startswith("internal error: ")


def test_python_dash_m_reports_without_traceback(tmp_path):
    config = write_project(tmp_path, [good("en-1"), b"\xff", "{", good("en-1")])
    finished = subprocess.run(
        [sys.executable, "-m", "refsens_report", "validate", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 2
    assert "Traceback" not in finished.stderr
    assert "record.jsonl:2:" in finished.stderr
    assert "record.jsonl:3:" in finished.stderr
    assert "record.jsonl:4:" in finished.stderr


# ---------------------------------------------------------------------------------------------------------
# Found while writing this suite: inputs that ended in a traceback (regression tests; each docstring says
# what went wrong and what the contract asks for).


def test_report_datasheet_missing_names_the_key(tmp_path, capsys):
    config = write_config(tmp_path, config_text(extra='\n[report]\ndatasheet = "nope.md"\n'))
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "Config value 'report.datasheet'" in err and "nope.md" in err


def test_report_show_text_must_be_a_boolean(tmp_path, capsys):
    config = write_config(tmp_path, config_text(extra='\n[report]\nshow_text = "no"\n'))
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "Config value 'report.show_text': must be true or false, got 'no'" in err
    hidden = load_config(write_config(tmp_path, config_text(extra="\n[report]\nshow_text = false\n")))
    assert hidden.report.show_text is False and hidden.as_used()["report"]["show_text"] is False
    assert load_config(write_config(tmp_path, config_text())).report.show_text is True


@pytest.mark.parametrize("value", ["0", "-3", '"30"', "2.5", "true"])
def test_report_min_type_spans_must_be_a_positive_integer(tmp_path, capsys, value):
    config = write_config(tmp_path, config_text(extra=f"\n[report]\nmin_type_spans = {value}\n"))
    code, _, err = run_validate(config, capsys)
    assert_clean_failure(code, err)
    assert "Config value 'report.min_type_spans': must be a positive integer, got " in err
    assert load_config(write_config(tmp_path, config_text())).as_used()["report"]["min_type_spans"] == 30
    chosen = load_config(write_config(tmp_path, config_text(extra="\n[report]\nmin_type_spans = 5\n")))
    assert chosen.report.min_type_spans == 5 and chosen.as_used()["report"]["min_type_spans"] == 5


@pytest.mark.parametrize("end", [2**63, 2**64 - 1], ids=["2**63", "2**64-1"])
def test_offset_beyond_int64_is_a_clean_error(end, tmp_path, capsys):
    """Was an engine bug: offsets in [2**63, 2**64) parse (orjson reads unsigned 64-bit integers), passed
    validation, then `audit` died in counts.py (np.asarray(..., dtype=np.int64): OverflowError).
    Issue 2: bad input never produces a traceback. Expected: validate exits 2 naming record.jsonl:1
    (like integers beyond 64 bits, already reported as "a value outside what JSON allows")."""
    spans = {A: [[0, end, "X"]], B: [[1, end, "X"]], D: [[0, end, "X"]], R: []}
    config = write_project(tmp_path, [item("en-1", "en", **spans)], audit={"resamples": 10})
    validate_code, _, validate_err = run_validate(config, capsys)
    audit_code = main(["audit", str(config), "--out", str(tmp_path / "out")])  # must not raise
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if validate_code == 2:
        assert "record.jsonl:1:" in validate_err and audit_code == 2
    else:
        assert validate_code == 0 and audit_code == 0


@pytest.mark.parametrize("target", ["a file", "inside a file"])
def test_audit_out_on_a_file_is_bad_usage(target, tmp_path, capsys):
    """Was an engine bug: `audit CONFIG --out PATH` where PATH is an existing file (or below one) raised
    FileExistsError / NotADirectoryError from results.write_results (out_dir.mkdir) with a traceback.
    Issue 2: exit 2 for bad usage, with a message naming the path, no traceback."""
    config = write_project(tmp_path, [good("en-1")], audit={"resamples": 10})
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder")
    out = blocker if target == "a file" else blocker / "results"
    code = main(["audit", str(config), "--out", str(out)])  # must not raise
    err = capsys.readouterr().err
    assert_clean_failure(code, err)
    assert "taken" in err


def test_record_label_map_applies_to_a_jsonl_record_before_the_audit(tmp_path, capsys):
    """label_map is the loader's, not an adapter's: a canonical record gets it too, and repeats count once."""
    from helpers import pick

    from refsens_report.audit import run_audit
    from refsens_report.config import load_config
    from refsens_report.load import load_record

    lines = [
        item(
            "en-1",
            "en",
            meta={"third_pass": False},
            **{
                A: [[0, 3, "DATE"]],
                B: [[0, 3, "TIME"]],
                D: [[0, 3, "DATE"], [0, 3, "TIME"]],
                R: [[0, 3, "DATE"], [4, 6, "MISC"]],
            },
        ),
    ]
    path = write_project(tmp_path, lines)
    path.write_text(
        path.read_text().replace(
            'format = "jsonl"\n', 'format = "jsonl"\nlabel_map = { DATE = "DATETIME", TIME = "DATETIME", MISC = "" }\n'
        ),
        encoding="utf-8",
    )
    record = load_record(load_config(path))
    assert record.items[0].labellings[D] == ((0, 3, "DATETIME"), (0, 3, "DATETIME"))
    assert record.items[0].labellings[R] == ((0, 3, "DATETIME"),)
    assert any("dropped 1 MISC span (reviewer 1)" in note for note in record.notes)
    rows = run_audit(load_config(path)).rows
    assert pick(rows, analysis="agreement", statistic="f1", rule="strict", language="en")["estimate"] == 100.0
    assert (
        pick(rows, analysis="swap", statistic="score", rule="strict", language="en", output=A, reference=D)["estimate"]
        == 100.0
    )
    code, out, err = run_validate(path, capsys)
    assert code == 0, err


def test_a_local_cluster_of_more_workers_than_four_per_core_is_refused(tmp_path, capsys, monkeypatch):
    """`workers = 256` on a 2-core machine is a typo: at most 4 per core of the machine the audit runs on."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    write_record(
        tmp_path / "record.jsonl", [item("en-1", "en", annotator_a=[], annotator_b=[], delivered=[], reviewer=[])]
    )
    engine = '[engine]\nbackend = "dask"\nworkers = {}\n'
    config = tmp_path / "refsens.toml"
    config.write_text(config_text(extra=engine.format(256)), encoding="utf-8")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: Config value 'engine.workers': must be at most 8 (4 processes per core; this machine has 2), got 256"
    ), err
    config.write_text(config_text(extra=engine.format(8)), encoding="utf-8")
    assert load_config(config).engine.workers == 8


def test_the_fast_path_reads_each_line_as_the_general_path_does(tmp_path):
    """load_jsonl takes a well-formed line through ``_fast_item`` and anything else through ``parse_item``: on
    awkward lines (present-but-empty and absent labellings, no meta, text with a span at its end, an id with a
    no-break space that only the general path accepts) both give the same items, in record order."""
    import orjson

    from refsens_report.errors import ProblemList
    from refsens_report.record import _fast_item, load_jsonl, parse_item

    lines = [
        item("en-1", "en", text="abcd", **{A: [[0, 4, "X"], [1, 2, "Y Z"]], B: [], D: None}),
        {"id": "en-2", "language": "en", "labellings": {}},
        item("en\u00a03", "en", meta={"third_pass": True, "k": None}, **{A: [[0, 2**53, "X"]], "other name": []}),
        item("de-4", "de", meta={}, **{D: [[3, 4, "\u00e9t\u00e9"]], A: [[0, 1, "X"], [0, 1, "X"]]}),
    ]
    path = write_record(tmp_path / "record.jsonl", ["", *lines, "  "])
    problems = ProblemList()
    general = [parse_item(orjson.loads(orjson.dumps(line)), f"line {n}", problems) for n, line in enumerate(lines)]
    assert not problems and [_fast_item(line) is None for line in lines] == [False, False, True, False]
    loaded = load_jsonl(path).items
    assert loaded == tuple(general)
    assert [list(one.labellings) for one in loaded] == [list(one.labellings) for one in general]  # names in order
