"""JSON Lines as annotation tools write them (doccano, Prodigy): one object per line, each bad line named."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from refsens_report.errors import MAX_PROBLEMS, ProblemList
from refsens_report.record import json_problem


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
            problems.add(f"{display}:{number}: {json_problem(line)}")
            continue
        if not isinstance(value, dict):
            problems.add(f"{display}:{number}: the line is not a JSON object")
            continue
        yield number, value
