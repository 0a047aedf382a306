"""The demo: a simulated annotation pipeline, two annotator passes, a selective third pass, a silent default, a
reviewer, and model outputs scored beside the annotators (one of them tuned to the shipped gold's conventions).

The generative story is documented in ``docs/simulation.md``; every number it uses is a field of
``SimulationParameters`` (``parameters.py``). ``simulate_rows`` (``record.py``) returns the record as canonical
JSON objects and ``write_simulation`` writes ``record.jsonl``, ``refsens.toml`` (``config.py``) and
``datasheet.md`` (``datasheet.py``) (``refsens-report simulate``). The same parameters and seed always give
byte-identical files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from refsens_report.demo.config import dataset_version, demo_family_size, demo_resamples, render_config
from refsens_report.demo.datasheet import render_datasheet
from refsens_report.demo.parameters import MAX_OUTPUTS, SimulationParameters, simulated_models
from refsens_report.demo.record import simulate_rows
from refsens_report.errors import InputError

__all__ = [
    "SimulationParameters",
    "dataset_version",
    "demo_family_size",
    "demo_resamples",
    "render_config",
    "simulate_rows",
    "simulated_models",
    "write_parameters",
    "write_simulation",
]


def _dump(row: dict[str, Any]) -> bytes:
    """Serialise one item: fixed key order, UTF-8 text, compact separators (orjson: the same bytes as
    json.dumps(row, ensure_ascii=False, separators=(",", ":")), five times faster)."""
    return orjson.dumps(row)


def write_simulation(
    directory: Path, items: int | None = None, seed: int = 0, neutral: bool = False, outputs: int | None = None
) -> list[Path]:
    """Write DIR/record.jsonl, DIR/refsens.toml and DIR/datasheet.md; return their paths.

    ``outputs``: model outputs scored beside the two annotator passes (default DEFAULT_OUTPUTS; 0 scores the
    annotators alone, as the paper does).
    """
    if items is not None and items < len(SimulationParameters().languages):
        raise InputError(
            f"simulate: --items must be at least {len(SimulationParameters().languages)} "
            f"(one per language), got {items}"
        )
    if seed < 0:
        raise InputError(f"simulate: --seed must be a non-negative integer, got {seed}")
    if outputs is not None and not 0 <= outputs <= MAX_OUTPUTS:
        raise InputError(
            f"simulate: --outputs must be between 0 and {MAX_OUTPUTS} (model outputs beside the two "
            f"annotator passes), got {outputs}"
        )
    parameters = SimulationParameters()
    if outputs is not None:
        parameters = replace(parameters, models=simulated_models(outputs))
    if items is not None:
        parameters = replace(parameters, items=items)
    if neutral:
        parameters = replace(parameters, silent_default_keeps_a=0.5)
    return write_parameters(Path(directory), parameters, seed)


def write_parameters(directory: Path, parameters: SimulationParameters, seed: int) -> list[Path]:
    """Simulate with explicit parameters and write the three files; return their paths."""
    rows = simulate_rows(parameters, seed)
    directory.mkdir(parents=True, exist_ok=True)
    record_path = directory / "record.jsonl"
    config_path = directory / "refsens.toml"
    datasheet_path = directory / "datasheet.md"
    record_path.write_bytes(b"".join(_dump(row) + b"\n" for row in rows))
    config_path.write_text(render_config(parameters, seed), encoding="utf-8", newline="")
    datasheet_path.write_text(render_datasheet(parameters, seed, rows), encoding="utf-8", newline="")
    return [record_path, config_path, datasheet_path]
