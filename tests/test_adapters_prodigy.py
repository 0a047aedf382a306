"""The prodigy adapter on review-recipe output written here from Prodigy's documented format.

``prodigy review`` of ``ner.manual`` annotations writes one line per input (``_input_hash``): the reviewer's
``spans`` and ``answer``, and ``versions``, each an annotated copy of the example with the ``sessions``
(``<dataset>-<annotator>``) that made it and whether it was the version pre-selected (``default``).
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from helpers import validate
from refused import refused

from refsens_report.config import load_config
from refsens_report.load import load_record

T1 = "Apple is opening a store in Berlin next year."
T2 = "Tim Cook met Olaf Scholz."
T3 = "Nothing to see here."


def span(text: str, start: int, end: int, label: str, **extra) -> dict:
    return {"start": start, "end": end, "label": label, "text": text[start:end], **extra}


def version(text: str, spans: list[dict], sessions: list[str], answer: str = "accept", default: bool = False) -> dict:
    return {
        "text": text,
        "spans": spans,
        "answer": answer,
        "_view_id": "ner_manual",
        "sessions": sessions,
        "default": default,
        "_input_hash": zlib.crc32(text.encode()),
        "_task_hash": zlib.crc32(json.dumps(spans).encode()),
    }


def example(input_hash: int, text: str, spans: list[dict], versions: list[dict], answer: str = "accept") -> dict:
    return {
        "text": text,
        "_input_hash": input_hash,
        "_task_hash": input_hash + 1,
        "spans": spans,
        "answer": answer,
        "_view_id": "review",
        "_session_id": "ner_review-lead",
        "versions": versions,
        "meta": {"doc": f"d{input_hash}"},
    }


APPLE, BERLIN = span(T1, 0, 5, "ORG"), span(T1, 28, 34, "LOC")
TIM, OLAF = span(T2, 0, 8, "PER"), span(T2, 13, 24, "PER")
EXAMPLES = [
    example(
        101,
        T1,
        [APPLE, BERLIN],
        [
            version(T1, [APPLE, BERLIN], ["ner_news-alex", "ner_news-sam"], default=True),
            version(T1, [APPLE], ["ner_news-kim"]),
        ],
    ),
    example(
        102,
        T2,
        [TIM, OLAF],
        [
            version(T2, [TIM, OLAF], ["ner_news-sam"], default=True),
            version(T2, [span(T2, 0, 3, "PER"), OLAF], ["ner_news-alex"]),
        ],
    ),
    example(
        103,
        T3,
        [],
        [version(T3, [], ["ner_news-alex"], default=True), version(T3, [], ["ner_news-sam"], "ignore")],
        answer="reject",
    ),
]


def write_case(tmp_path: Path, lines: list[dict | str] | None = None, record: str = "", roles: str = "") -> Path:
    lines = EXAMPLES if lines is None else lines
    (tmp_path / "review.jsonl").write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n", encoding="utf-8"
    )
    path = tmp_path / "refsens.toml"
    path.write_text(
        f'[dataset]\nname = "t"\nversion = "1"\n\n[record]\nformat = "prodigy"\npath = "review.jsonl"\n'
        f'language = "en"\n{record}\n'
        + (roles or '[roles]\nannotators = ["alex", "sam"]\noutputs = ["alex", "sam"]\nreferences = ["reviewed"]\n'),
        encoding="utf-8",
    )
    return path


NAMES = 'names = { "ner_news-alex" = "alex", "ner_news-sam" = "sam", "ner_news-kim" = "kim" }'


def test_each_session_is_a_labelling_and_the_accepted_review_the_aggregate(tmp_path, capsys):
    record = load_record(load_config(write_case(tmp_path, record=NAMES)))
    assert [item.id for item in record.items] == ["101", "102", "103"]
    first, second, third = record.items
    assert first.labellings == {
        "alex": ((0, 5, "ORG"), (28, 34, "LOC")),
        "kim": ((0, 5, "ORG"),),
        "sam": ((0, 5, "ORG"), (28, 34, "LOC")),
        "reviewed": ((0, 5, "ORG"), (28, 34, "LOC")),
    }
    assert second.labellings["alex"] == ((0, 3, "PER"), (13, 24, "PER"))
    # the reviewer rejected example 103: no aggregate there; sam ignored it: sam absent; alex accepted it empty
    assert third.labellings == {"alex": ()}
    notes = "\n".join(record.notes)
    assert "3 reviewed examples from review.jsonl; labellings by session: alex, kim, sam, reviewed" in notes
    assert "the reviewer rejected 1 example and ignored 0: 'reviewed' is absent there" in notes
    assert "session versions 1 ignored: that session is absent on the example" in notes
    code, output = validate(tmp_path / "refsens.toml", capsys)
    assert code == 0, output


def test_passes_in_session_id_order_and_another_id_field(tmp_path):
    record = load_record(
        load_config(
            write_case(
                tmp_path,
                record='labellings_by = "pass"\naggregate = "final"\nid_field = "meta.doc"',
                roles='[roles]\nannotators = ["pass_1", "pass_2"]\noutputs = ["pass_1"]\nreferences = ["final"]\n',
            )
        )
    )
    first = record.items[0]
    assert first.id == "d101"
    assert first.meta == {"sessions": ["ner_news-alex", "ner_news-kim", "ner_news-sam"], "third_pass": True}
    assert first.labellings["pass_2"] == ((0, 5, "ORG"),)  # kim, the second session id
    assert "sessions (examples): 'ner_news-alex' (3), 'ner_news-kim' (1), 'ner_news-sam' (2)" in "\n".join(record.notes)


def changed(position: int, **fields) -> list[dict]:
    lines = json.loads(json.dumps(EXAMPLES))
    lines[position].update(fields)
    return lines


def version_changed(position: int, number: int, **fields) -> list[dict]:
    lines = json.loads(json.dumps(EXAMPLES))
    lines[position]["versions"][number].update(fields)
    return lines


@pytest.mark.parametrize(
    "lines, record, expected",
    [
        (EXAMPLES[:1] + ['{"text": "x", "versions": ['], "", ["review.jsonl:2: invalid JSON"]),
        (
            changed(1, versions=None),
            "",
            ["review.jsonl:2: no 'versions' list: not the output of Prodigy's review recipe"],
        ),
        (changed(0, _input_hash=None), "", ["review.jsonl:1: '_input_hash' (record.id_field) is missing"]),
        (changed(2, _input_hash=101), "", ["review.jsonl:3: id '101' repeats the item at review.jsonl:1"]),
        (changed(0, answer="maybe"), "", ["review.jsonl:1, the review: 'answer' must be accept, reject or ignore"]),
        (version_changed(1, 1, sessions=[]), "", ["review.jsonl:2, version 2: 'sessions' must be a non-empty list"]),
        (
            version_changed(0, 1, sessions=["ner_news-sam"]),
            "",
            ["review.jsonl:1, version 2: session 'ner_news-sam' also made version 1"],
        ),
        (
            changed(0, spans=[span(T1, 0, 5, "ORG"), {"start": 28, "end": 34, "label": "LOC", "text": "Paris"}]),
            "",
            ['review.jsonl:1, the reviewed spans, span 2: its text "Paris" is not the text at [28, 34) ("Berlin")'],
        ),
        (
            version_changed(1, 0, spans=[{"start": 0, "end": 80, "label": "PER"}]),
            "",
            ["review.jsonl:2, version 1, span 1: ends at 80, beyond the text (25 characters)"],
        ),
        (None, 'labels = ["PER", "ORG"]\n' + NAMES, ["review.jsonl:1, version 1, span 2: unknown label 'LOC'"]),
        (version_changed(0, 0, _view_id="ner"), "", ["review.jsonl:1: a review of binary annotations (view 'ner'"]),
        ([], "", ["review.jsonl: no examples"]),
    ],
)
def test_malformed_review_output_is_refused_at_its_line(tmp_path, capsys, lines, record, expected):
    refused(write_case(tmp_path, lines, record or NAMES), capsys, *expected)


def test_every_problem_in_one_run(tmp_path, capsys):
    lines = version_changed(0, 1, sessions=None)
    lines[1]["spans"] = [{"start": 3, "end": 1, "label": "PER"}]
    lines[2]["answer"] = None
    err = refused(
        write_case(tmp_path, lines, NAMES + '\nlabellings_by = "annotator"'),
        capsys,
        "Config value 'record.labellings_by': must be one of session, pass",
    )
    err = refused(
        write_case(tmp_path, lines, NAMES),
        capsys,
        "review.jsonl:1, version 2: 'sessions'",
        "review.jsonl:2, the reviewed spans, span 1: needs 0 <= start < end",
        "review.jsonl:3, the review",
    )
    assert len(err.strip().splitlines()) == 3
