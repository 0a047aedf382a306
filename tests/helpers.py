"""Test utilities: write a canonical record and a refsens.toml into a folder, run the audit, pick result rows.

Imported explicitly (``from helpers import ...``; pytest puts ``tests/`` on the path in rootdir mode) so it
does not collide with any ``conftest.py`` other suites add.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from refsens_report.audit import run_audit
from refsens_report.cli import main
from refsens_report.config import load_config
from refsens_report.results import AuditResults

A, B, D, R = "annotator_a", "annotator_b", "delivered", "reviewer"


def item(
    item_id: str,
    language: str,
    meta: Mapping[str, Any] | None = None,
    text: str | None = None,
    **labellings: Sequence[Sequence[Any]] | None,
) -> dict[str, Any]:
    """Return one canonical JSONL object; a labelling passed as None is left out (absent)."""
    obj: dict[str, Any] = {
        "id": item_id,
        "language": language,
        "labellings": {name: [list(span) for span in spans] for name, spans in labellings.items() if spans is not None},
    }
    if text is not None:
        obj["text"] = text
    if meta is not None:
        obj["meta"] = dict(meta)
    return obj


def labelled(
    item_id: str, language: str, spans: Mapping[str, Sequence[Sequence[Any]] | None], **kwargs: Any
) -> dict[str, Any]:
    """Like ``item`` but with labelling names as a mapping (names that are not identifiers)."""
    return item(item_id, language, **kwargs, **spans)


def write_record(path: Path, lines: Iterable[Any]) -> Path:
    """Write JSON Lines: dicts are dumped, ``str``/``bytes`` are written as given (for broken lines)."""
    chunks: list[bytes] = []
    for line in lines:
        if isinstance(line, bytes):
            chunks.append(line)
        elif isinstance(line, str):
            chunks.append(line.encode("utf-8"))
        else:
            chunks.append(json.dumps(line, ensure_ascii=False).encode("utf-8"))
    path.write_bytes(b"\n".join(chunks) + (b"\n" if chunks else b""))
    return path


def _toml(value: Any) -> str:
    # JSON strings, numbers, booleans and arrays of those are valid TOML values
    return json.dumps(value)


def config_text(
    record: str = "record.jsonl",
    annotators: Sequence[str] | None = (A, B),
    outputs: Sequence[str] = (A, B),
    references: Sequence[str] = (D, R),
    audit: Mapping[str, Any] | None = None,
    name: str = "Test benchmark",
    version: str = "1.0.0",
    extra: str = "",
) -> str:
    """Return a refsens.toml; ``audit`` adds keys to [audit] (resamples defaults to 200 to stay fast)."""
    audit = {"resamples": 200, "seed": 0, **(audit or {})}
    lines = [
        "[dataset]",
        f"name = {_toml(name)}",
        f"version = {_toml(version)}",
        "",
        "[record]",
        f"path = {_toml(record)}",
        'format = "jsonl"',
        "",
        "[roles]",
    ]
    if annotators is not None:
        lines.append(f"annotators = {_toml(list(annotators))}")
    lines += [f"outputs = {_toml(list(outputs))}", f"references = {_toml(list(references))}", "", "[audit]"]
    lines += [f"{key} = {_toml(value)}" for key, value in audit.items()]
    return "\n".join(lines) + "\n" + extra


def write_project(folder: Path, items: Iterable[Any], **config: Any) -> Path:
    """Write record.jsonl and refsens.toml into ``folder``; return the config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    write_record(folder / config.get("record", "record.jsonl"), items)
    path = folder / "refsens.toml"
    path.write_text(config_text(**config), encoding="utf-8")
    return path


def audit_items(folder: Path, items: Iterable[Any], **config: Any) -> AuditResults:
    """Write a project and run the audit on it."""
    return run_audit(load_config(write_project(folder, items, **config)))


def select(rows: Iterable[Mapping[str, Any]], **labels: Any) -> list[Mapping[str, Any]]:
    """Return the rows whose columns equal every given label (unnamed text columns are not constrained)."""
    return [row for row in rows if all(row[column] == value for column, value in labels.items())]


def pick(rows: Iterable[Mapping[str, Any]], **labels: Any) -> Mapping[str, Any]:
    """Return the one row with these labels; fail when none or several match."""
    found = select(rows, **labels)
    assert len(found) == 1, f"{len(found)} rows match {labels}: {found[:3]}"
    return found[0]


def by_language(rows: Iterable[Mapping[str, Any]], **labels: Any) -> dict[str, Mapping[str, Any]]:
    """Return {language: row} for the rows with these labels (each language once)."""
    found = select(rows, **labels)
    table = {row["language"]: row for row in found}
    assert len(table) == len(found), f"several rows per language for {labels}"
    return table


def validate(path: Path, capsys) -> tuple[int, str]:
    """Run `refsens-report validate` on a config; return its exit code and everything it printed."""
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.err + captured.out
