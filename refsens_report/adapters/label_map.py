"""Label maps: span types renamed (DATE and TIME to DATETIME) or dropped (MISC to "") before any comparison.

Two labellings with different label sets make strict F1 measure the label-set mismatch; a map puts them on
one set. `[record] label_map` applies to every labelling of every format: the loader applies it to the record
the adapter built (``apply_label_map``; to a Parquet record's arrays, ``map_table``), and every adapter's
``labels`` check accepts the types it maps (``mapped_types``), so the check is on the types after mapping. A
labelling's own `label_map` (the conll adapter's labelling tables) is applied where its file is read, before
`[record]`'s.
A map is applied once, not repeatedly: ``{ A = "B", B = "C" }`` turns A into B and B into C.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from refsens_report.formatting import counted
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Record, Span
from refsens_report.table import SpanTable, code_counts, sorted_codes

KEY = "label_map"


def read_label_map(
    reader: OptionReader, allowed: Iterable[str] | None = None, what: str = "record.labels"
) -> dict[str, str]:
    """Read ``label_map``: a table from span type to span type, "" dropping the type.

    With ``allowed`` every target must be one of them (``what`` names where they are listed).
    """
    value = reader.get(KEY)
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.fail(
            KEY,
            f'must be a table from type to type, e.g. {{ DATE = "DATETIME", MISC = "" }} ("" drops the type), '
            f"got {shown(value)}",
        )
        return {}
    allowed = frozenset(allowed) if allowed is not None else None
    mapping: dict[str, str] = {}
    for source, target in value.items():
        if not source.strip():
            reader.fail(KEY, "maps an empty type")
        elif not isinstance(target, str):
            reader.fail(f"{KEY}.{source}", f'must be a type, or "" to drop {source}, got {shown(target)}')
        elif target and (not target.strip() or name_problem(target)):
            reader.fail(f"{KEY}.{source}", f'must be a type, or "" to drop {source}, got {shown(target)}')
        elif target and allowed is not None and target not in allowed:
            reader.fail(
                f"{KEY}.{source}", f"maps to '{target}', which {what} does not allow ({', '.join(sorted(allowed))})"
            )
        else:
            mapping[source] = target
    return mapping


def mapped_types(value: Any, allowed: Iterable[str]) -> frozenset[str]:
    """Return the types a ``label_map`` value (as in the config) turns into an allowed type or drops.

    The adapters' ``labels`` check accepts them where they are read, since the map applies before it; bad
    entries are left out here and reported by ``read_label_map``.
    """
    if not isinstance(value, dict):
        return frozenset()
    allowed = frozenset(allowed)
    return frozenset(
        source for source, target in value.items() if isinstance(target, str) and (target == "" or target in allowed)
    )


class MapCounts:
    """How many spans a map renamed (per source and target type) and dropped (per type and labelling)."""

    def __init__(self) -> None:
        self.renamed: Counter[tuple[str, str]] = Counter()
        self.dropped: Counter[str] = Counter()
        self.dropped_by_labelling: dict[str, Counter[str]] = {}

    def map_spans(self, spans: tuple[Span, ...], mapping: Mapping[str, str], labelling: str) -> tuple[Span, ...]:
        """Return the spans with their types mapped, dropped ones left out; count both."""
        mapped: list[Span] = []
        for start, end, label in spans:
            target = mapping.get(label, label)
            if not target:
                self.dropped[label] += 1
                self.dropped_by_labelling.setdefault(label, Counter())[labelling] += 1
                continue
            if target != label:
                self.renamed[(label, target)] += 1
            mapped.append((start, end, target))
        return tuple(mapped)

    def describe(self, by_labelling: bool = True) -> str:
        """Return 'renamed 3 spans (DATE → DATETIME 2, TIME → DATETIME 1); dropped 4 MISC spans (...)'."""
        parts = []
        if self.renamed:
            total = sum(self.renamed.values())
            pairs = ", ".join(
                f"{source} → {target} {number:,}" for (source, target), number in sorted(self.renamed.items())
            )
            parts.append(f"renamed {counted(total, 'span')} ({pairs})")
        for label, number in sorted(self.dropped.items()):
            detail = ""
            if by_labelling:
                labellings = self.dropped_by_labelling[label]
                detail = " (" + ", ".join(f"{name} {count:,}" for name, count in labellings.items()) + ")"
            parts.append(f"dropped {counted(number, f'{label} span')}{detail}")
        return "; ".join(parts) if parts else "no span had a mapped type"


def apply_label_map(record: Record, mapping: Mapping[str, str]) -> Record:
    """Return the record with `[record] label_map` applied to every labelling, and a note counting what it did."""
    if not mapping:
        return record
    counts = MapCounts()
    if record.columnar is not None:  # a record read as arrays (Parquet): map its type codes, no Item objects
        table = map_table(record.columnar, mapping, counts)
        return replace(record, columnar=table, notes=record.notes + (f"record.label_map: {counts.describe()}",))
    keys = frozenset(mapping)
    items = []
    for item in record.items:
        if not any(label in keys for spans in item.labellings.values() for _, _, label in spans):
            items.append(item)  # most items of most records: nothing to map
            continue
        labellings = {name: counts.map_spans(spans, mapping, name) for name, spans in item.labellings.items()}
        items.append(replace(item, labellings=labellings))
    note = f"record.label_map: {counts.describe()}"
    return replace(record, items=tuple(items), notes=record.notes + (note,))


def map_table(table: SpanTable, mapping: Mapping[str, str], counts: MapCounts) -> SpanTable:
    """Return the span table with its types mapped: type codes renamed, dropped spans left out; count both.

    What ``MapCounts.map_spans`` does span by span, on the arrays: a type's spans are counted once per type, and
    the labellings that lose a dropped type are listed in the order of their first such span, as the spans come.
    """
    names = table.type_names.tolist()
    targets = [mapping.get(name, name) for name in names]
    if targets == names:
        return table
    per_type = code_counts(table.type, len(names))
    dropped = np.array([not target for target in targets], dtype=bool)
    unheld = table.unheld_spans  # the spans the table counts but does not hold (``SpanTable.unheld``)
    if unheld is not None:
        if unheld[:, dropped].any():
            raise ValueError("a label map that drops a type needs every span (workers.unheld_names)")
        per_type = per_type + unheld.sum(axis=0)
    for code, (name, target) in enumerate(zip(names, targets)):
        if target and target != name and per_type[code]:
            counts.renamed[(name, target)] += int(per_type[code])
    keep = None
    if dropped.any():
        gone = dropped[table.type]
        keep = ~gone
        positions = np.flatnonzero(gone)
        gone_types, gone_labellings = table.type[positions], table.labelling[positions]
        for code in np.flatnonzero(dropped):
            labellings = gone_labellings[gone_types == code]
            _, first = np.unique(labellings, return_index=True)
            by_labelling = counts.dropped_by_labelling.setdefault(names[code], Counter())
            for labelling in labellings[np.sort(first)]:
                by_labelling[table.names[labelling]] += int((labellings == labelling).sum())
            counts.dropped[names[code]] += len(labellings)
    kept = list(dict.fromkeys(target for target in targets if target))
    local = np.array([kept.index(target) if target else -1 for target in targets], dtype=np.int64)
    spans = {name: getattr(table, name) for name in ("item", "labelling", "start", "end", "type")}
    if keep is not None:
        spans = {name: values[keep] for name, values in spans.items()}
    type_names, type_codes = sorted_codes(np.array(kept, dtype=object), local[spans.pop("type")])
    if unheld is not None:  # each kept type's counts under its new name
        position = np.searchsorted(type_names, np.array(kept, dtype=object))
        mapped = np.zeros((unheld.shape[0], len(type_names)), dtype=unheld.dtype)
        for code in np.flatnonzero(~dropped):
            mapped[:, position[local[code]]] += unheld[:, code]
        unheld = mapped
    return replace(table, **spans, type=type_codes, type_names=type_names, unheld_spans=unheld)
