"""Write a large leaderboard-shaped record straight to Parquet (the span table of `format = "parquet"`).

    .venv/bin/python bench/generate_scale.py /tmp/scale --items 1000000          # 20 outputs x 4 references
    .venv/bin/python bench/generate_scale.py /tmp/scale --items 100000 --outputs 20 --references 4 --jsonl

Writes ``record.parquet`` (and with ``--jsonl`` the same record as ``record.jsonl``) and a ``refsens.toml``
auditing it (B = 2,000, strict + relaxed) into the folder. The record: ``--languages`` languages of equal
size, ~1.65 true spans per item (a few non-overlapping slots of 4 types), each reference and output a noisy
copy (misses, boundary shifts, wrong types and spurious spans at a rate of its own: references 2-8 %,
outputs 6-30 %, so neighbouring outputs can swap ranks under another reference). Every labelling is present
on every item. Vectorised: a million items take about 10 s here. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

TYPES = ("LOC", "MISC", "ORG", "PER")
SLOT = 50  # characters between slot starts: spans of one labelling never overlap
MEAN_SPANS = 1.65

CONFIG = """[dataset]
name = "scale benchmark"
version = "bench"
[record]
format = "{format}"
path = "{path}"
[roles]
annotators = []
outputs = {outputs}
references = {references}
[audit]
resamples = {resamples}
rules = ["strict", "relaxed"]
"""


def names(outputs: int, references: int) -> tuple[list[str], list[str]]:
    return [f"system-{k:02d}" for k in range(outputs)], [f"gold-{k}" for k in range(references)]


def generate(items: int, outputs: int, references: int, languages: int, seed: int = 0, hard_share: float = 1.0):
    """Return the span rows as arrays: (item, labelling, start, end, type, empty marker) and the names.

    ``hard_share``: the share of items on which labellings make mistakes at all (each labelling's rates scaled
    up to keep its overall rate); 1.0 spreads mistakes over every item, independently. Real benchmarks sit in
    between: most items are easy for every system.
    """
    rng = np.random.default_rng(seed)
    hard = rng.random(items) < hard_share
    output_names, reference_names = names(outputs, references)
    labelling_names = reference_names + output_names
    rates = np.concatenate([np.linspace(0.02, 0.08, references), np.linspace(0.06, 0.30, outputs)])
    n_true = np.minimum(rng.poisson(MEAN_SPANS, size=items), 12)
    true_item = np.repeat(np.arange(items), n_true)
    true_slot = np.arange(len(true_item)) - np.repeat(np.cumsum(n_true) - n_true, n_true)
    true_start = true_slot * SLOT + rng.integers(1, 20, size=len(true_item))
    true_end = true_start + rng.integers(2, 9, size=len(true_item))
    true_type = rng.integers(0, len(TYPES), size=len(true_item))
    pieces = []
    for code, rate in enumerate(rates):
        # an easy item's spans roll 1.0: no mistake; a hard item's roll as if the rate were rate / hard_share
        roll = np.where(hard[true_item], rng.random(len(true_item)) * hard_share, 1.0)
        keep = roll >= rate * 0.4  # a miss
        start = np.where((roll >= rate * 0.4) & (roll < rate * 0.7), true_start - 1, true_start)  # a boundary shift
        kind = np.where((roll >= rate * 0.7) & (roll < rate), (true_type + 1) % len(TYPES), true_type)  # a wrong type
        spurious = hard & (rng.random(items) * hard_share < rate * 0.3)
        extra_item = np.flatnonzero(spurious)
        extra_start = n_true[extra_item] * SLOT + 5
        item = np.concatenate([true_item[keep], extra_item])
        pieces.append(
            (
                item,
                np.full(len(item), code),
                np.concatenate([start[keep], extra_start]),
                np.concatenate([true_end[keep], extra_start + 4]),
                np.concatenate([kind[keep], rng.integers(0, len(TYPES), size=len(extra_item))]),
            )
        )
    item, labelling, start, end, kind = (np.concatenate(column) for column in zip(*pieces))
    # one empty marker per (item, labelling) without spans: every labelling is present on every item
    has_spans = np.zeros((items, len(labelling_names)), dtype=bool)
    has_spans[item, labelling] = True
    empty_item, empty_labelling = np.nonzero(~has_spans)
    order = np.lexsort(
        (
            np.concatenate([start, np.full(len(empty_item), -1)]),
            np.concatenate([labelling, empty_labelling]),
            np.concatenate([item, empty_item]),
        )
    )
    empty = np.concatenate([np.zeros(len(item), bool), np.ones(len(empty_item), bool)])[order]
    columns = {
        "item": np.concatenate([item, empty_item])[order],
        "labelling": np.concatenate([labelling, empty_labelling])[order],
        "start": np.concatenate([start, np.zeros(len(empty_item), np.int64)])[order],
        "end": np.concatenate([end, np.zeros(len(empty_item), np.int64)])[order],
        "type": np.concatenate([kind, np.zeros(len(empty_item), np.int64)])[order],
    }
    language_names = [f"l{k:02d}" for k in range(languages)]
    return columns, empty, labelling_names, output_names, reference_names, language_names


def write_parquet(
    path: Path,
    columns: dict,
    empty: np.ndarray,
    labelling_names: list[str],
    language_names: list[str],
    items: int,
    row_group: int = 1_000_000,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    item = columns["item"]
    ids = pa.array([f"item-{k:07d}" for k in range(items)], pa.string())
    languages = pa.array(language_names, pa.string())
    table = pa.table(
        {
            "id": pa.DictionaryArray.from_arrays(pa.array(item.astype(np.int32)), ids),
            "language": pa.DictionaryArray.from_arrays(
                pa.array((item % len(language_names)).astype(np.int32)), languages
            ),
            "labelling": pa.DictionaryArray.from_arrays(
                pa.array(columns["labelling"].astype(np.int32)), pa.array(labelling_names, pa.string())
            ),
            "start": pa.array(columns["start"], pa.int64(), mask=empty),
            "end": pa.array(columns["end"], pa.int64(), mask=empty),
            "type": pa.DictionaryArray.from_arrays(
                pa.array(columns["type"].astype(np.int32), mask=empty), pa.array(TYPES, pa.string())
            ),
        }
    )
    pq.write_table(table, path, row_group_size=row_group, compression="zstd")


def write_jsonl(
    path: Path, columns: dict, empty: np.ndarray, labelling_names: list[str], language_names: list[str], items: int
) -> None:
    item = columns["item"]
    bounds = np.searchsorted(item, np.arange(items + 1))
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(items):
            labellings: dict[str, list] = {}
            for row in range(bounds[index], bounds[index + 1]):
                spans = labellings.setdefault(labelling_names[columns["labelling"][row]], [])
                if not empty[row]:
                    spans.append([int(columns["start"][row]), int(columns["end"][row]), TYPES[columns["type"][row]]])
            line = {
                "id": f"item-{index:07d}",
                "language": language_names[index % len(language_names)],
                "labellings": labellings,
            }
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--outputs", type=int, default=20)
    parser.add_argument("--references", type=int, default=4)
    parser.add_argument("--languages", type=int, default=6)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--hard-share",
        type=float,
        default=1.0,
        help="share of items where labellings err at all (default 1.0: mistakes on any item)",
    )
    parser.add_argument("--jsonl", action="store_true", help="also write record.jsonl (slow beyond 100,000 items)")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    columns, empty, labelling_names, outputs, references, languages = generate(
        args.items, args.outputs, args.references, args.languages, args.seed, args.hard_share
    )
    write_parquet(args.folder / "record.parquet", columns, empty, labelling_names, languages, args.items)
    config = dict(outputs=json.dumps(outputs), references=json.dumps(references), resamples=args.resamples)
    (args.folder / "refsens.toml").write_text(CONFIG.format(format="parquet", path="record.parquet", **config))
    if args.jsonl:
        write_jsonl(args.folder / "record.jsonl", columns, empty, labelling_names, languages, args.items)
        (args.folder / "refsens-jsonl.toml").write_text(CONFIG.format(format="jsonl", path="record.jsonl", **config))
    print(f"{args.items:,} items, {len(empty):,} span rows -> {args.folder}")


if __name__ == "__main__":
    main()
