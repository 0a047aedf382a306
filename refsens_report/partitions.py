"""A partitioned record: a folder of Parquet span tables that follow the canonical blocks, and its manifest.

``refsens-report convert --partition-items N`` writes one (docs/scale.md, "A record larger than one machine").
The items are in canonical order, by language then id (the order the bootstrap's strata and canonical blocks
take, ``estimator.Estimator.strata``); a partition holds whole items of one language only, at most N of them,
and its boundaries fall on the canonical blocks of ``bootstrap.BLOCK_ITEMS`` items: N is a multiple of the
block (each partition is whole blocks of its language) or divides it (each block is whole partitions).

``manifest.json`` beside the files lists them in order with their language, items and rows: the Parquet
reader checks a folder holding one against it, so a partition lost in a copy is an error, not a smaller record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST = "manifest.json"
FORMAT = "refsens-report partitioned span table"
VERSION = 1


def partition_items_problem(partition_items: int, block_items: int) -> str | None:
    """Return why N cannot partition a record along canonical blocks of ``block_items`` items, or None.

    The block size is the caller's (``bootstrap.BLOCK_ITEMS``): this module is read by the Parquet adapter, which
    the config imports, so it imports nothing of the audit's.
    """
    block = block_items
    if partition_items < 1:
        return f"--partition-items {partition_items}: a partition holds at least one item"
    if partition_items % block == 0 or block % partition_items == 0:
        return None
    below = 1 << (partition_items.bit_length() - 1)
    above = -(-partition_items // block) * block
    return (
        f"--partition-items {partition_items:,}: partitions follow the canonical blocks of {block:,} items, so "
        f"N is a multiple of {block:,} (whole blocks) or divides it (a power of two up to it); "
        f"try {min(below, block):,} or {above:,}"
    )


def canonical_order(ids: np.ndarray, language: np.ndarray) -> np.ndarray:
    """Return the items in canonical order: by language code (languages are sorted), then by id.

    The same order as the bootstrap's strata (ids sorted stably, then split by language).
    """
    by_id = np.argsort(ids, kind="stable")
    return by_id[np.argsort(language[by_id], kind="stable")]


def cuts(language: np.ndarray, partition_items: int) -> list[tuple[int, int]]:
    """Return each partition's item range [first, stop) over items in canonical order (``language``
    non-decreasing): every ``partition_items`` items of a language, a new partition at each language."""
    starts = np.flatnonzero(np.r_[True, language[1:] != language[:-1]]) if len(language) else np.zeros(0, np.int64)
    bounds = np.r_[starts, len(language)]
    found = []
    for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        found += [(at, min(at + partition_items, stop)) for at in range(first, stop, partition_items)]
    return found


def file_name(number: int) -> str:
    return f"part-{number:05d}.parquet"


@dataclass(frozen=True)
class Partition:
    """One file of a partitioned record, as its manifest lists it."""

    file: str
    language: str
    items: int
    rows: int
    first_id: str
    last_id: str

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "language": self.language,
            "items": self.items,
            "rows": self.rows,
            "first_id": self.first_id,
            "last_id": self.last_id,
        }


def manifest_text(partitions: list[Partition], partition_items: int, block_items: int) -> str:
    """Return manifest.json's text (sorted keys, one partition a line: diffable, and the same for the same record)."""
    head = {
        "format": FORMAT,
        "version": VERSION,
        "order": ["language", "id"],
        "block_items": block_items,
        "partition_items": partition_items,
        "items": sum(part.items for part in partitions),
        "rows": sum(part.rows for part in partitions),
    }
    lines = [json.dumps(part.as_json(), sort_keys=True, ensure_ascii=False) for part in partitions]
    body = json.dumps(head, sort_keys=True, ensure_ascii=False)[:-1]
    return body + ', "partitions": [\n' + ",\n".join(lines) + "\n]}\n"


def read_manifest(folder: Path, display: str) -> dict[str, Partition] | None:
    """Return the partitions a folder's manifest.json lists, by file name (None: no manifest); raise
    ``InputError`` naming the manifest when it is not one convert writes."""
    from refsens_report.errors import InputError

    path = folder / MANIFEST
    if not path.exists():
        return None
    where = f"{display.rstrip('/')}/{MANIFEST}"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        if found.get("format") != FORMAT:
            raise ValueError(f"its format is {found.get('format')!r}, not {FORMAT!r}")
        if found.get("version") != VERSION:
            raise ValueError(f"version {found.get('version')!r}; this refsens-report reads version {VERSION}")
        parts = [
            Partition(**{key: part[key] for key in Partition.__dataclass_fields__}) for part in found["partitions"]
        ]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise InputError(
            f"{where}: not a partitioned record's manifest ({error}); write the folder again with "
            "refsens-report convert --partition-items N, or remove the manifest"
        ) from None
    return {part.file: part for part in parts}


def check_files(folder: Path, display: str, names: list[str]) -> dict[str, Partition] | None:
    """Check a folder's ``*.parquet`` file names against its manifest, if it has one; return its partitions.

    A listed file that is missing, or a file the manifest does not list, is an error naming it: the record
    would silently lose or gain items.
    """
    from refsens_report.errors import ProblemList

    listed = read_manifest(folder, display)
    if listed is None:
        return None
    problems = ProblemList()
    where = display.rstrip("/")
    for name in sorted(set(listed) - set(names)):
        problems.add(
            f"{where}/{name}: listed in {MANIFEST} ({listed[name].items:,} items of language "
            f"'{listed[name].language}') but missing from the folder; copy it back, or convert again"
        )
    for name in sorted(set(names) - set(listed)):
        problems.add(
            f"{where}/{name}: not listed in {MANIFEST}; a partitioned record holds only the files "
            "convert wrote (remove it, or convert again)"
        )
    problems.raise_if_any()
    return listed
