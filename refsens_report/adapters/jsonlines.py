"""JSON Lines as annotation tools write them (doccano, Prodigy): one object per line, each bad line named."""

from __future__ import annotations

import json
from typing import Any, Iterator

import orjson

from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.record import outside_json


def _problem(line: bytes) -> str:
    """Return what is wrong with a line orjson refused, in the standard library's words."""
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not valid UTF-8 (byte {error.start + 1} of the line)"
    try:
        value = json.loads(decoded)
    except json.JSONDecodeError as error:
        return f"invalid JSON ({error.msg} at column {error.colno})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"
    return f"invalid JSON ({outside_json(value)})"


def json_lines(data: bytes, display: str, problems: ProblemList) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; report lines that are not JSON objects.

    A UTF-8 byte-order mark and CRLF line endings are accepted. Reading stops after ``MAX_PROBLEMS`` problems
    in one file, so a file of another kind does not flood the report.
    """
    before = len(problems)
    for number, line in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if len(problems) - before >= MAX_PROBLEMS:
            problems.add(f"{display}: stopped reading at line {number}; fix the problems above and run again")
            return
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            problems.add(f"{display}:{number}: {_problem(line)}")
            continue
        if not isinstance(value, dict):
            problems.add(f"{display}:{number}: the line is not a JSON object")
            continue
        yield number, value
