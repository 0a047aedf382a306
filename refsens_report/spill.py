"""A listing made a part of the record at a time: each part's rows, in the listing's order, spilled to a run file,
then every run merged by the listing's key as the file is written (an external merge sort).

A partitioned record's build (``audit.partitioned_files``) never holds the whole record, nor a whole listing: a
partition's rows are made from that partition alone and written to disk here; the merge then reads each run a
chunk at a time. The runs live in a temporary folder (``tempfile``: ``TMPDIR``), about the listing's own size.
"""

from __future__ import annotations

import heapq
import pickle
from collections.abc import Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

CHUNK_BYTES = 1 << 18  # the text of a run's rows pickled together, about: what the merge holds of each run
JOIN_LINES = 4096  # merged lines joined into one piece of a file's text


class Runs:
    """The sorted runs of one listing file, each a file of pickled chunks of rows ``(key, text)``: the row's key in
    the listing's order (unique within the listing), its text as the file writes it or nearly (``merged``'s
    ``finish``)."""

    def __init__(self, folder: Path, name: str):
        self.folder, self.name = folder, name
        self.paths: list[Path] = []

    def add(self, rows: Iterable[tuple[Any, str]]) -> None:
        """Write one run: ``rows`` already in the listing's order."""
        path = self.folder / f"{self.name}.{len(self.paths):06d}.run"
        with open(path, "wb") as handle:
            chunk: list[tuple[Any, str]] = []
            size = 0
            for row in rows:
                chunk.append(row)
                size += len(row[1])
                if size >= CHUNK_BYTES:
                    pickle.dump(chunk, handle, protocol=pickle.HIGHEST_PROTOCOL)
                    chunk, size = [], 0
            if chunk:
                pickle.dump(chunk, handle, protocol=pickle.HIGHEST_PROTOCOL)
        self.paths.append(path)

    def rows(self) -> Iterator[tuple[Any, str]]:
        """Yield every run's rows by key (equal keys: the earlier run's first)."""
        return heapq.merge(*map(_read, self.paths), key=itemgetter(0))

    def merged(self, finish: Any = None) -> Iterator[str]:
        """Yield the rows' texts by key, ``JOIN_LINES`` at a time as one piece; ``finish(position, text)`` gives
        each row's text as written, its position counted from 0 (None: the text as spilled)."""
        lines: list[str] = []
        for position, (_, text) in enumerate(self.rows()):
            lines.append(text if finish is None else finish(position, text))
            if len(lines) == JOIN_LINES:
                yield "".join(lines)
                lines = []
        if lines:
            yield "".join(lines)


def _read(path: Path) -> Iterator[tuple[Any, str]]:
    """Yield a run's rows, a chunk in memory at a time."""
    with open(path, "rb") as handle:
        while True:
            try:
                chunk = pickle.load(handle)
            except EOFError:
                return
            yield from chunk
