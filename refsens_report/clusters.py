"""The cluster bootstrap's units (docs/method.md section 4): which cluster each item is in.

With `[record] cluster = "<meta key>"` the items sharing a value of that meta key (within a language) form a
cluster, and the bootstrap resamples clusters instead of items: sentences of one news story share entities
and errors, so drawing them independently makes intervals too narrow. Every item must give the key (an item
meant to stand alone gives a value of its own); values are compared as their JSON text, so 1 and "1" differ.
"""

from __future__ import annotations

import numpy as np
import orjson

from refsens_report.errors import InputError
from refsens_report.names import shown
from refsens_report.table import SpanTable

SHOWN_MISSING = 5  # item ids an error names


def cluster_codes(table: SpanTable, key: str) -> np.ndarray:
    """Return each item's cluster number: clusters numbered in the order of (language, the value's JSON text).

    That order is the canonical one the bootstrap draws clusters in: it does not depend on the record's line
    order. A value shared by items of two languages makes one cluster per language (strata draw apart).
    Raise InputError naming the items that do not give the key.
    """
    values = table.meta_values(key)
    missing = [index for index, value in enumerate(values.tolist()) if value is None]
    if missing:
        ids = ", ".join(shown(str(table.ids[index])) for index in missing[:SHOWN_MISSING])
        more = f" and {len(missing) - SHOWN_MISSING:,} more" if len(missing) > SHOWN_MISSING else ""
        raise InputError(
            f"Config value 'record.cluster': {len(missing):,} of {table.n_items:,} items have no meta "
            f"{shown(key)} ({ids}{more}): with a cluster key every item must say its cluster (give an item "
            "a value of its own to make it a cluster of one)"
        )
    texts = [orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY) for value in values.tolist()]
    language = np.asarray(table.language, dtype=np.int64)
    names = np.array(table.languages, dtype=object)
    keys = sorted({(names[code], text) for code, text in zip(language.tolist(), texts)})
    number = {one: position for position, one in enumerate(keys)}
    return np.fromiter(
        (number[(names[code], text)] for code, text in zip(language.tolist(), texts)),
        dtype=np.int64,
        count=table.n_items,
    )


def cluster_order(members: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (members in cluster order, where each cluster starts among them, then their number).

    ``members`` are items in id order; within a cluster they keep that order.
    """
    order = np.argsort(codes[members], kind="stable")
    ordered = members[order]
    found = codes[ordered]
    starts = np.flatnonzero(np.r_[True, found[1:] != found[:-1]]) if len(ordered) else np.zeros(0, np.int64)
    return ordered, np.r_[starts, len(ordered)].astype(np.int64)


def count_clusters(items: np.ndarray, codes: np.ndarray | None) -> int:
    """Return how many clusters the items touch (each item its own cluster without codes)."""
    return len(items) if codes is None else len(np.unique(codes[items]))
