"""Input adapters: each turns a team's files into the canonical ``Record``.

An adapter reads its own keys of the ``[record]`` table (``read_options``, reporting bad keys through the
reader) and loads the record from those options (``load``). ``ADAPTERS`` maps ``record.format`` to one:
``jsonl`` (here), ``conll``, ``crowd``, ``label-studio`` and ``brat`` (a module each; docs/adapters.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from refsens_report.adapters import brat, conll, crowd, label_studio
from refsens_report.record import Record, load_jsonl

if TYPE_CHECKING:
    from refsens_report.config import Config, _Reader


@dataclass(frozen=True)
class Adapter:
    """One input format: how to read its config keys and how to load its files."""

    read_options: Callable[["_Reader", Path], dict[str, Any]]
    load: Callable[["Config"], Record]


def _required_path(reader: "_Reader", base_dir: Path, key: str = "path") -> Path | None:
    """Read a path key that must name an existing file or folder, relative to the config."""
    value = reader.string(key, required=True)
    if value is None:
        return None
    resolved = (base_dir / value).resolve()
    if not resolved.exists():
        reader.fail(key, f"file not found: {value}")
    return resolved


def _jsonl_options(reader: "_Reader", base_dir: Path) -> dict[str, Any]:
    return {"path": _required_path(reader, base_dir)}


def _jsonl_load(config: "Config") -> Record:
    display = config.raw.get("record", {}).get("path")
    return load_jsonl(config.record_options["path"], display=display)


ADAPTERS: dict[str, Adapter] = {
    "jsonl": Adapter(read_options=_jsonl_options, load=_jsonl_load),
    "conll": Adapter(read_options=conll.read_options, load=conll.load),
    "crowd": Adapter(read_options=crowd.read_options, load=crowd.load),
    "label-studio": Adapter(read_options=label_studio.read_options, load=label_studio.load),
    "brat": Adapter(read_options=brat.read_options, load=brat.load),
}
