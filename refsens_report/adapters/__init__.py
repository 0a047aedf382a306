"""Input adapters: each turns a team's files into the canonical ``Record``.

An adapter reads its own keys of the ``[record]`` table (``read_options``, reporting bad keys through the
reader) and loads the record from those options (``load``). ``ADAPTERS`` maps ``record.format`` to one:
``jsonl`` (here), ``conll``, ``crowd``, ``label-studio``, ``brat``, ``inception``, ``doccano``, ``prodigy``,
``hf-datasets`` and ``parquet`` (the columnar record) (a module each; docs/adapters.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refsens_report.adapters import (
    brat,
    conll,
    crowd,
    doccano,
    hf_datasets,
    inception,
    label_studio,
    parquet,
    prodigy,
)
from refsens_report.adapters.common import InputPath, read_path
from refsens_report.options import OptionReader
from refsens_report.record import Record, load_jsonl


@dataclass(frozen=True)
class Adapter:
    """One input format: how to read its config keys and how to load its files.

    ``read_options(reader, config_folder)`` checks the format's keys of `[record]` (problems go through the
    reader) and returns the adapter's own options object, or None when they cannot be used; ``load(options,
    duplicate_key)`` reads the files those options name (``duplicate_key``: the meta key of `[audit]`
    that ``dup_key = "text"`` fills). Adapters never see the rest of the config.
    """

    read_options: Callable[[OptionReader, Path], Any]
    load: Callable[[Any, str], Record]


@dataclass(frozen=True)
class JsonlOptions:
    """The checked `[record]` keys of a canonical JSON Lines record."""

    source: InputPath


def _jsonl_options(reader: OptionReader, base_dir: Path) -> JsonlOptions | None:
    source = read_path(reader, base_dir, "path")
    return None if source is None else JsonlOptions(source)


def _jsonl_load(options: JsonlOptions, duplicate_key: str) -> Record:
    return load_jsonl(options.source)


ADAPTERS: dict[str, Adapter] = {
    "jsonl": Adapter(read_options=_jsonl_options, load=_jsonl_load),
    "conll": Adapter(read_options=conll.read_options, load=conll.load),
    "crowd": Adapter(read_options=crowd.read_options, load=crowd.load),
    "label-studio": Adapter(read_options=label_studio.read_options, load=label_studio.load),
    "brat": Adapter(read_options=brat.read_options, load=brat.load),
    "inception": Adapter(read_options=inception.read_options, load=inception.load),
    "doccano": Adapter(read_options=doccano.read_options, load=doccano.load),
    "prodigy": Adapter(read_options=prodigy.read_options, load=prodigy.load),
    "hf-datasets": Adapter(read_options=hf_datasets.read_options, load=hf_datasets.load),
    "parquet": Adapter(read_options=parquet.read_options, load=parquet.load),
}
