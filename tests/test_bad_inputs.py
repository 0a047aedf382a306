"""Hostile and broken inputs (issue 13): each gives exit code 2 and a message naming the file, line or item.

One regression test per reported fault (bidi controls in names, deep JSON, symlink loops, absurd resamples,
devices and FIFOs, BRAT's huge offsets and undecodable names, an undecodable datasheet), the cosmetic ones
(lone surrogates, BRAT lines, unused labellings noted), and a bounded fuzz test of the JSONL and config
readers through the command line.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from helpers import A, B, D, R, config_text, item, write_project, write_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from refsens_report.cli import main
from refsens_report.config import MAX_RESAMPLES
from refsens_report.load import BOOTSTRAP_MEMORY_BUDGET
from refsens_report.names import name_problem

BIDI_AND_INVISIBLE = [
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u2028",
    "\u2029",
    "\x07",
    "\ue000",
]


def good(item_id: str = "en-1", language: str = "en", **overrides) -> dict:
    spans = {A: [[0, 3, "PER"]], B: [[0, 3, "PER"]], D: [[0, 3, "PER"]], R: [[0, 3, "PER"]]}
    spans.update(overrides)
    return item(item_id, language, meta={"third_pass": False}, **spans)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_refused(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), err
    for text in expected:
        assert text in err, (text, err)
    # nothing that reorders or hides text reaches the terminal raw
    assert not any(character in err for character in BIDI_AND_INVISIBLE), err


# ----------------------------------------------------------------------------------------------------------
# 6. bidirectional controls and invisible characters in names


@pytest.mark.parametrize("character", BIDI_AND_INVISIBLE)
def test_every_invisible_or_bidi_character_is_refused_in_a_name(character):
    problem = name_problem(f"ann{character}otator")
    assert problem is not None and f"U+{ord(character):04X}" in problem
    assert character not in problem  # quoted escaped


def test_ordinary_names_in_any_script_are_accepted():
    for name in ("annotator_a", "हिन्दी", "العربية", "中文", "a b", "a\u00a0b", "NAME-1.2"):
        assert name_problem(name) is None, name


@pytest.mark.parametrize(
    "field, line, expected",
    [
        ("id", good(item_id="en-\u202e1"), "record.jsonl:1: 'id' 'en-\\u202e1' contains U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("language", good(language="e\u2066n"), "record.jsonl:1: 'language' 'e\\u2066n' contains U+2066"),
        (
            "labelling",
            {**good(), "labellings": {**good()["labellings"], "x\u200fy": []}},
            "record.jsonl:1: the labelling name 'x\\u200fy' contains U+200F RIGHT-TO-LEFT MARK",
        ),
        (
            "type",
            good(**{A: [[0, 3, "PER\u202e"]]}),
            "record.jsonl:1: span 1 of labelling 'annotator_a' type 'PER\\u202e' contains U+202E",
        ),
        ("zero width", good(**{A: [[0, 3, "P\u200bER"]]}), "contains U+200B ZERO WIDTH SPACE, an invisible"),
    ],
)
def test_a_record_name_with_a_bidi_control_is_refused_at_its_line(tmp_path, capsys, field, line, expected):
    config = write_project(tmp_path, [line, good("en-2")])
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, expected)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Benchmark \u202e0.99 :F1", "Config value 'dataset.name': 'Benchmark \\u202e0.99 :F1' contains U+202E"),
        ("Benchmark\u2067", "Config value 'dataset.name'"),
    ],
)
def test_a_config_name_with_a_bidi_control_is_refused(tmp_path, capsys, name, expected):
    config = write_project(tmp_path, [good()], name=name)
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, expected)


def test_a_role_name_and_a_config_key_with_bidi_controls_are_refused(tmp_path, capsys):
    config = write_project(
        tmp_path, [good()], references=(D, "rev\u202eiewer"), extra='[report]\n"pa\u202eper" = "a4"\n'
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(
        code,
        err,
        "Config value 'roles.references': 'rev\\u202eiewer' contains U+202E",
        "Config value 'report.pa\\u202eper': the key 'pa\\u202eper' contains U+202E",
    )


def test_brat_type_and_document_name_with_bidi_controls_are_refused(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "doc\u202e1.txt").write_text("Alice", encoding="utf-8")
        (tmp_path / folder / "doc2.txt").write_text("Alice", encoding="utf-8")
        (tmp_path / folder / "doc2.ann").write_text("T1\tPER\u2066 0 5\tAlice\n", encoding="utf-8")
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "brat"\nlanguage = "en"\n'
        '[record.labellings]\na = "a"\nb = "b"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(
        code,
        err,
        "a/doc\\u202e1.txt: the document id (the file name) 'doc\\u202e1' contains U+202E",
        "a/doc2.ann:1: invalid type: 'PER\\u2066' contains U+2066",
    )


def test_label_studio_names_from_the_export_are_refused(tmp_path, capsys):
    tasks = [{"id": 1, "data": {"text": "Alice"}, "annotations": [{"id": 1, "completed_by": "x\u202ey", "result": []}]}]
    (tmp_path / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "label-studio"\n'
        'path = "export.json"\nlanguage = "en"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "export.json: task 1 (#1), annotation 1: the labelling name 'annotator_x\\u202ey'")


def test_the_datasheet_prose_is_bidi_isolated_in_the_template():
    template = (Path(__file__).parents[1] / "templates" / "appendix.html").read_text(encoding="utf-8")
    css = (Path(__file__).parents[1] / "templates" / "appendix.css").read_text(encoding="utf-8")
    block = template[template.index('id="section-datasheet"') : template.index('id="section-provenance"')]
    assert '<div class="prose team-prose" dir="auto">' in block
    assert ".team-prose { unicode-bidi: isolate; }" in css


# ----------------------------------------------------------------------------------------------------------
# 8. deep nesting; cosmetic: lone surrogates and other values JSON does not allow


@pytest.mark.parametrize("depth", [200, 990, 1000, 1023, 1100, 5000])
def test_deeply_nested_json_lines_are_described_not_crashed_on(tmp_path, capsys, depth):
    deep = "[" * depth + "]" * depth
    lines = [
        f'{{"id": "x", "language": "en", "labellings": {{"{A}": {deep}}}}}',
        f'{{"id": "y", "language": "en", "labellings": {{}}, "meta": {{"third_pass": {deep}}}}}',
    ]
    config = write_project(tmp_path, [good("en-1"), *lines])
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "record.jsonl:2:", "record.jsonl:3:")


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b'{"id": "x\\ud800", "language": "en", "labellings": {}}', "a lone surrogate \\ud800 in a string"),
        (b'{"id": "x", "language": "en", "labellings": {}, "meta": {"v": NaN}}', "NaN is not a JSON number"),
        (b'{"id": "x", "language": "en", "labellings": {}, "meta": {"v": 1e999}}', "Infinity is not a JSON number"),
    ],
)
def test_values_outside_json_say_what_they_are(tmp_path, capsys, raw, expected):
    config = write_project(tmp_path, [good(), raw])
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, f"record.jsonl:2: invalid JSON ({expected}")


def test_deep_label_studio_export_is_refused(tmp_path, capsys):
    (tmp_path / "export.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "label-studio"\n'
        'path = "export.json"\nlanguage = "en"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "export.json: invalid JSON (nested too deeply)")


def test_deep_toml_is_refused(tmp_path, capsys):
    config = tmp_path / "refsens.toml"
    config.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "invalid TOML (arrays or tables nested too deeply)")


def test_huge_toml_integer_is_refused(tmp_path, capsys):
    config = tmp_path / "refsens.toml"
    config.write_text("a = " + "9" * 5000 + "\n", encoding="utf-8")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "invalid TOML")


# ----------------------------------------------------------------------------------------------------------
# 9. symlink loops; 11. devices and FIFOs


def loop(path: Path) -> None:
    os.symlink(path.name + ".other", path)
    os.symlink(path.name, path.with_name(path.name + ".other"))


def test_a_symlink_loop_as_the_record_is_refused(tmp_path, capsys):
    config = write_project(tmp_path, [good()], record="loop.jsonl")
    (tmp_path / "loop.jsonl").unlink()
    loop(tmp_path / "loop.jsonl")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "Config value 'record.path': is a symlink loop: loop.jsonl")


def test_a_symlink_loop_as_the_datasheet_and_as_a_brat_folder(tmp_path, capsys):
    loop(tmp_path / "datasheet.md")
    config = write_project(tmp_path, [good()], extra='[report]\ndatasheet = "datasheet.md"\n')
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "Config value 'report.datasheet': is a symlink loop: datasheet.md")

    loop(tmp_path / "brat")
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "brat"\nlanguage = "en"\n'
        '[record.labellings]\na = "brat"\n[roles]\noutputs = ["a"]\nreferences = ["a"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "Config value 'record.labellings.a.path': is a symlink loop: brat")


def test_a_symlink_loop_as_the_config(tmp_path, capsys):
    loop(tmp_path / "refsens.toml")
    code, _, err = run(["validate", str(tmp_path / "refsens.toml")], capsys)
    assert_refused(code, err, "refsens.toml: cannot read the config (a symlink loop)")


def test_a_symlink_loop_inside_a_brat_folder_names_the_file(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "doc.txt").write_text("Alice", encoding="utf-8")
        (tmp_path / folder / "doc.ann").write_text("", encoding="utf-8")
    loop(tmp_path / "a" / "other.txt")
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "brat"\nlanguage = "en"\n'
        '[record.labellings]\na = "a"\nb = "b"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "a/other.txt: is a symlink loop")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_device_as_the_record_is_refused_without_reading_it(tmp_path, capsys, target):
    config = write_project(tmp_path, [good()], record=target)
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, f"Config value 'record.path': is a device, not a regular file: {target}")


def with_timeout(function, seconds: float = 20):
    """Run ``function`` in a thread; fail instead of hanging when it blocks (as opening a FIFO does)."""
    result: dict[str, object] = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", function()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked: a FIFO was opened"
    return result["value"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_are_refused_without_opening_them(tmp_path, capsys):
    os.mkfifo(tmp_path / "record.jsonl")
    config = tmp_path / "refsens.toml"
    config.write_text(config_text(), encoding="utf-8")
    code = with_timeout(lambda: main(["validate", str(config)]))
    err = capsys.readouterr().err
    assert_refused(code, err, "Config value 'record.path': is a FIFO (named pipe), not a regular file: record.jsonl")

    os.mkfifo(tmp_path / "fifo.toml")
    code = with_timeout(lambda: main(["validate", str(tmp_path / "fifo.toml")]))
    assert_refused(
        code, capsys.readouterr().err, "fifo.toml: cannot read the config (a FIFO (named pipe), not a regular file)"
    )

    write_record(tmp_path / "ok.jsonl", [good()])
    os.mkfifo(tmp_path / "datasheet.md")
    config.write_text(config_text(record="ok.jsonl") + '[report]\ndatasheet = "datasheet.md"\n', encoding="utf-8")
    code = with_timeout(lambda: main(["validate", str(config)]))
    assert_refused(code, capsys.readouterr().err, "Config value 'report.datasheet': is a FIFO")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_inside_a_brat_folder_is_refused_without_opening_it(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "doc.txt").write_text("Alice", encoding="utf-8")
    os.mkfifo(tmp_path / "a" / "doc.ann")
    os.mkfifo(tmp_path / "b" / "pipe.txt")
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "brat"\nlanguage = "en"\n'
        '[record.labellings]\na = "a"\nb = "b"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    code = with_timeout(lambda: main(["validate", str(config)]))
    assert_refused(
        code,
        capsys.readouterr().err,
        "a/doc.ann: is a FIFO (named pipe), not a regular file",
        "b/pipe.txt: is a FIFO (named pipe), not a regular file",
    )


# ----------------------------------------------------------------------------------------------------------
# 10. resamples bounded by the memory they imply


def test_absurd_resamples_are_refused_with_the_limit(tmp_path, capsys):
    config = write_project(tmp_path, [good()], audit={"resamples": 1_000_000_000})
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, f"Config value 'audit.resamples': must be at most {MAX_RESAMPLES:,}, got 1000000000")


def test_resamples_under_the_cap_but_beyond_the_memory_budget_are_refused(tmp_path, capsys):
    outputs = [f"model_{n}" for n in range(60)]
    line = item("x-1", "en", meta={"third_pass": False}, **{name: [[0, 1, "T"]] for name in [*outputs, A, B, D, R]})
    languages = [item(f"l{n}", f"lang{n}", **{name: [] for name in [*outputs, A, B, D, R]}) for n in range(40)]
    config = write_project(tmp_path, [line, *languages], outputs=outputs, audit={"resamples": MAX_RESAMPLES})
    code, _, err = run(["validate", str(config)], capsys)
    limit = f"above the limit of {BOOTSTRAP_MEMORY_BUDGET / 2**30:,.0f} GiB"
    assert_refused(code, err, "Config value 'audit.resamples': 100,000 resamples need about", limit, "use at most")
    # the same config stops the build before any sum is drawn
    code, _, err = run(["audit", str(config), "--out", str(tmp_path / "out")], capsys)
    assert_refused(code, err, limit)


def test_a_seed_beyond_64_bits_is_refused(tmp_path, capsys):
    config = write_project(tmp_path, [good()], audit={"seed": 2**70})
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "Config value 'audit.seed': must be at most 2**63 - 1")


# ----------------------------------------------------------------------------------------------------------
# 12. BRAT offsets and names; the datasheet read by validate too


def brat_case(tmp_path: Path, ann: str) -> Path:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "doc.txt").write_text("Alice\nBob\n", encoding="utf-8")
        (tmp_path / folder / "doc.ann").write_text("", encoding="utf-8")
    (tmp_path / "a" / "doc.ann").write_bytes(ann.encode("utf-8", "surrogateescape"))
    config = tmp_path / "refsens.toml"
    config.write_text(
        '[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "brat"\nlanguage = "en"\n'
        '[record.labellings]\na = "a"\nb = "b"\n[roles]\noutputs = ["a"]\nreferences = ["b"]\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize("digits", [19, 4301, 10000])
def test_a_brat_offset_of_thousands_of_digits(tmp_path, capsys, digits):
    config = brat_case(tmp_path, f"T1\tPER 0 {'9' * digits}\tAlice\n")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "a/doc.ann:1: fragment '0 999", "ends beyond the text (10 characters)")


def test_brat_decode_errors_name_the_line(tmp_path, capsys):
    config = brat_case(tmp_path, "T1\tPER 0 5\tAlice\nT2\tPER 6 9\tB\udce9b\n")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "a/doc.ann:2: not valid UTF-8 (byte 13 of the line)")


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="APFS refuses file names that are not UTF-8")
def test_a_brat_file_name_that_is_not_utf8(tmp_path, capsys):
    config = brat_case(tmp_path, "")
    (tmp_path / os.fsdecode(b"a/caf\xe9.txt")).write_text("Caf", encoding="utf-8")
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "a: the file name b'caf\\xe9.txt' is not valid UTF-8; rename the file")


def test_a_datasheet_that_is_not_utf8_fails_validate_not_only_build(tmp_path, capsys):
    (tmp_path / "datasheet.md").write_bytes(b"# Data\n\nCaf\xe9\n")
    config = write_project(tmp_path, [good()], extra='[report]\ndatasheet = "datasheet.md"\n')
    code, _, err = run(["validate", str(config)], capsys)
    assert_refused(code, err, "Config value 'report.datasheet': datasheet.md:3: not valid UTF-8 (byte 4 of the line)")


# ----------------------------------------------------------------------------------------------------------
# cosmetic: labellings no role names are noted


def test_labellings_no_role_names_are_noted_by_validate(tmp_path, capsys):
    config = write_project(tmp_path, [good(extra_pass=[[0, 3, "PER"]], spare=[])])
    code, out, err = run(["validate", str(config)], capsys)
    assert code == 0, err
    assert (
        "note: labellings in the record that no role names, so not audited: extra_pass, spare "
        "(add them to [roles] to audit them)"
    ) in out


# ----------------------------------------------------------------------------------------------------------
# fuzz: arbitrary bytes as the record, arbitrary TOML as the config


FUZZ = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
ITEM_LIKE = st.fixed_dictionaries(
    {
        "id": st.text(max_size=6),
        "language": st.sampled_from(["en", "hi", "", "pooled", "e\u202en"]),
        "labellings": st.dictionaries(
            st.sampled_from([A, B, D, R, "x\u200b"]),
            st.lists(st.lists(st.integers(-2, 12) | st.text(max_size=4), max_size=4), max_size=3),
            max_size=4,
        ),
    },
    optional={"text": st.text(max_size=12) | JSON_LIKE, "meta": JSON_LIKE},
)


def assert_clean(code: int, err: str) -> None:
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        assert all(line.startswith("error: ") for line in err.strip().splitlines()), err


@FUZZ
@given(lines=st.lists(st.binary(max_size=80) | ITEM_LIKE.map(lambda obj: json.dumps(obj).encode("utf-8")), max_size=6))
def test_fuzz_the_jsonl_reader(tmp_path_factory, capsys, lines):
    folder = tmp_path_factory.mktemp("fuzz")
    config = write_project(folder, [good(), *lines])
    code, _, err = run(["validate", str(config)], capsys)
    assert_clean(code, err)


TOML_VALUE = st.recursive(
    st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if value == value and abs(value) != float("inf") else "inf"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(entry) for entry in value) + "]"
    return "{" + ", ".join(f"{json.dumps(key)} = {toml_value(entry)}" for key, entry in value.items()) + "}"


@FUZZ
@given(
    tables=st.dictionaries(
        st.sampled_from(["dataset", "record", "roles", "audit", "report", "extra"]),
        st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "version",
                    "path",
                    "format",
                    "annotators",
                    "outputs",
                    "references",
                    "resamples",
                    "seed",
                    "confidence",
                    "datasheet",
                    "rules",
                    "language",
                    "labellings",
                    "root",
                    "paper",
                    "x\u202e",
                ]
            ),
            TOML_VALUE,
            max_size=5,
        ),
        max_size=6,
    ),
    raw=st.binary(max_size=60),
)
def test_fuzz_the_config_reader(tmp_path_factory, capsys, tables, raw):
    folder = tmp_path_factory.mktemp("fuzz")
    write_record(folder / "record.jsonl", [good()])
    text = "\n".join(
        f"[{name}]\n" + "\n".join(f"{json.dumps(key)} = {toml_value(value)}" for key, value in table.items())
        for name, table in tables.items()
    )
    for content in (text.encode("utf-8"), raw, text.encode("utf-8") + b"\n" + raw):
        (folder / "refsens.toml").write_bytes(content)
        code, _, err = run(["validate", str(folder / "refsens.toml")], capsys)
        assert_clean(code, err)


# ----------------------------------------------------------------------------------------------------------
# issue 14: tags-only files, parts, label maps and the overlap rule, malformed

CONLL_GOLD = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\n"
CONLL_TAGS = "O\n\nB-ORG\nO\n\nB-PER\n"


def conll_project(tmp_path: Path, record: str, files: dict[str, str], audit: str = "") -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    path = tmp_path / "refsens.toml"
    path.write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "conll"\n{record}\n'
        f'[roles]\noutputs = ["pred"]\nreferences = ["gold"]\n{audit}',
        encoding="utf-8",
    )
    return path


TAGS_ONLY = 'language = "en"\nlabellings = { gold = "gold.txt", pred = { path = "pred.tags", token_column = 0 } }\n'


@pytest.mark.parametrize(
    ("record", "files", "audit", "expected"),
    [
        (
            TAGS_ONLY,
            {"pred.tags": CONLL_TAGS.replace("O\n\n", "", 1)},
            "",
            ["pred.tags:2: a tag line ('O'), where gold.txt:2 is blank", "pred.tags has 4 lines, gold.txt 6"],
        ),
        (TAGS_ONLY, {"pred.tags": CONLL_TAGS + "O\n"}, "", ["pred.tags:7: a tag line ('O'), where gold.txt:7 is past"]),
        (TAGS_ONLY, {"pred.tags": CONLL_TAGS.replace("B-ORG", "ORG")}, "", ["pred.tags:3: tag 'ORG' is not O or"]),
        (
            TAGS_ONLY.replace("token_column = 0", "column = 2, token_column = 0"),
            {},
            "",
            ["pred.tags:3: has 1 column; the tag column 2 is missing"],
        ),
        (
            'language = "en"\nlabellings = { gold = "gold.txt", pred = "pred.tags" }\n',
            {},
            "",
            ["pred.tags:3: has 1 column, which is read as the token; tags only? set token_column = 0"],
        ),
        (
            '[[record.parts]]\nlanguage = "en"\nlabellings = { gold = "gold.txt", pred = "pred.txt" }\n'
            '[[record.parts]]\nname = "b"\nlanguage = "de"\nlabellings = { gold = "gold.txt", pred = "bad.txt" }\n',
            {"pred.txt": "EU O\nrejects O\n\nPeter O\n", "bad.txt": "EU O\nrejects X-ORG\n\nPeter O\n"},
            "",
            ["bad.txt:2: tag 'X-ORG' is not O or B-/I-/E-/S-TYPE"],
        ),
        (
            '[[record.parts]]\nlanguage = "en"\nmeta = { line = 1, split = {} }\nlabellings = { gold = "gold.txt" }\n',
            {},
            "",
            [
                "'record.parts[1].meta.line': is set by the adapter",
                "'record.parts[1].meta.split': must be a string, a number or true/false",
            ],
        ),
        (
            'language = "en"\nlabels = ["ORG"]\nlabel_map = { PER = "PERSON", MISC = 3 }\n'
            'labellings = { gold = "gold.txt", pred = "gold.txt" }\n',
            {},
            "",
            [
                "'record.label_map.PER': maps to 'PERSON', which record.labels does not allow (ORG)",
                "'record.label_map.MISC': must be a type, or \"\" to drop MISC, got 3",
            ],
        ),
        (
            'language = "en"\nlabels = ["ORG"]\nlabellings = { gold = "gold.txt", pred = "gold.txt" }\n',
            {},
            "",
            ["gold.txt:6: tag has an unknown label 'PER' (record.labels allows ORG)"],
        ),
        (
            'language = "en"\nlabellings = { gold = "gold.txt", pred = "gold.txt" }\n',
            {},
            '[audit]\nrules = ["strict", "partial"]\n',
            ["'audit.rules': must be a non-empty list drawn from strict, relaxed, overlap"],
        ),
    ],
)
def test_malformed_issue_14_inputs_are_refused_naming_the_place(tmp_path, capsys, record, files, audit, expected):
    path = conll_project(tmp_path, record, {"gold.txt": CONLL_GOLD, "pred.tags": CONLL_TAGS, **files}, audit)
    code, _, err = run(["validate", str(path)], capsys)
    assert_refused(code, err, *expected)


def test_every_part_and_the_tags_only_file_are_reported_in_one_run(tmp_path, capsys):
    record = (
        '[[record.parts]]\nlanguage = "en"\n'
        'labellings = { gold = "gold.txt", pred = { path = "pred.tags", token_column = 0 } }\n'
        '[[record.parts]]\nname = "de"\nlanguage = "de"\nlabellings = { gold = "gold.txt", pred = "bad.txt" }\n'
    )
    files = {"pred.tags": CONLL_TAGS.replace("O\n\n", "", 1), "bad.txt": "EU O\nrejects X-ORG\n\nPeter O\n"}
    path = conll_project(tmp_path, record, {"gold.txt": CONLL_GOLD, **files})
    code, _, err = run(["validate", str(path)], capsys)
    assert_refused(code, err, "pred.tags:2: a tag line", "bad.txt:2: tag 'X-ORG'")


@pytest.mark.parametrize("value", ["true", "7", '"parts.txt"', '{ language = "en" }'])
def test_parts_that_are_not_an_array_of_tables_are_refused_also_with_gold(tmp_path, capsys, value):
    # issue 14's fuzz: with record.gold set, the gold_column check walked a boolean `parts` and raised TypeError
    path = conll_project(tmp_path, f'language = "en"\ngold = "gold"\nparts = {value}', {"gold.txt": CONLL_GOLD})
    code, _, err = run(["validate", str(path)], capsys)
    assert_refused(code, err, "'record.parts': must be an array of tables ([[record.parts]])")


CONLL_LABELLINGS = st.just({"gold": "gold.txt", "pred": {"path": "pred.tags", "token_column": 0}}) | st.just(
    {"gold": {"path": "gold.txt", "label_map": {"ORG": ""}}, "pred": "gold.txt"}
)
CONLL_VALUE = TOML_VALUE | CONLL_LABELLINGS | st.just("en") | st.just(0)
CONLL_PART = st.dictionaries(
    st.sampled_from(["language", "name", "meta", "labellings", "label_map", "x"]), CONLL_VALUE, max_size=4
)


@FUZZ
@given(
    record=st.dictionaries(
        st.sampled_from(["language", "labellings", "parts", "label_map", "token_column", "column", "labels", "gold"]),
        CONLL_VALUE | st.lists(CONLL_PART, max_size=3),
        max_size=5,
    )
)
def test_fuzz_the_conll_keys_of_issue_14(tmp_path_factory, capsys, record):
    folder = tmp_path_factory.mktemp("fuzz-conll")
    (folder / "gold.txt").write_text(CONLL_GOLD, encoding="utf-8")
    (folder / "pred.tags").write_text(CONLL_TAGS, encoding="utf-8")
    body = "\n".join(f"{json.dumps(key)} = {toml_value(value)}" for key, value in record.items())
    (folder / "refsens.toml").write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n[record]\nformat = "conll"\n{body}\n'
        '[roles]\noutputs = ["pred"]\nreferences = ["gold"]\n',
        encoding="utf-8",
    )
    code, _, err = run(["validate", str(folder / "refsens.toml")], capsys)
    assert_clean(code, err)
