"""manifest.json: the SHA-256 of every file of a version and of every input, the tool version, config and seed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from refsens_report.results import sha256_file

MANIFEST_NAME = "manifest.json"
SCHEMA = "refsens-report/manifest@1"


def file_hashes(folder: Path) -> dict[str, str]:
    """Return relative POSIX path -> SHA-256 for every file under ``folder`` except the manifest, sorted."""
    hashes = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and relative != MANIFEST_NAME:
            hashes[relative] = sha256_file(path)
    return hashes


def build_manifest(results: Mapping[str, Any], folder: Path, build_timestamp: str, timestamp_source: str) -> dict:
    """Return the manifest of a finished version folder."""
    return {
        "schema": SCHEMA,
        "dataset": results["dataset"],
        "tool_version": results.get("tool_version"),
        "build_timestamp": build_timestamp,
        "build_timestamp_source": timestamp_source,
        "seed": results.get("seed"),
        "resamples": results.get("resamples"),
        "confidence": results.get("confidence"),
        "config": results.get("config"),
        "inputs": results.get("inputs", {}),
        "files": file_hashes(folder),
    }


def write_manifest(manifest: Mapping[str, Any], folder: Path) -> Path:
    """Write manifest.json (stable key order and formatting, so rebuilds are byte-identical)."""
    path = folder / MANIFEST_NAME
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
