"""Benchmark the whole build where records get large in odd directions: many outputs, many types, long names.

    .venv/bin/python bench/bench_scale.py                       # every case below
    .venv/bin/python bench/bench_scale.py --case outputs-50     # one case

Cases (issue 13, "Resources"):
  outputs-50   50 outputs x 4 references on 3,453 sentences (bench_leaderboard's record): target, the whole
               build within 3x its audit
  types-1000   1,000 entity types, two annotators and two references on 3,000 items: the build must stay
               about linear in the types, the page readable (top types plus "other"; the full matrix in CSV)
  long-type    one type named with 10,000 characters: long names cost about linear time
  languages-500  500 languages of 10 items each, two annotators, outputs and references: the page and the PDF
               stay the size of a report (figures draw 24 languages, tables print 60 rows; CSVs hold all)

Each build runs in this process with SOURCE_DATE_EPOCH fixed; the seconds are wall time per stage of
``site.build_site`` on this machine, with 500 replicates (the bootstrap is not what these cases measure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_leaderboard import REFERENCES, generate  # noqa: E402

CONFIG = """[dataset]
name = "scale benchmark"
version = "bench"
[record]
path = "record.jsonl"
[roles]
annotators = {annotators}
outputs = {outputs}
references = {references}
[audit]
resamples = {resamples}
"""


def many_types(
    path: Path, types: int, items: int = 3000, seed: int = 0, name_length: int = 0, languages: int = 1
) -> None:
    """Write a record whose spans use ``types`` types (or one very long type name), annotators a and b."""
    rng = np.random.default_rng(seed)
    names = [f"TYPE-{k:04d}" for k in range(types)]
    if name_length:
        names[0] = "T" * name_length
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(items):
            spans = []
            for slot in range(int(rng.integers(1, 4))):
                start = slot * 20
                spans.append([start, start + 5, names[int(rng.integers(types))]])

            def noisy(rate: float) -> list:
                out = []
                for start, end, label in spans:
                    roll = rng.random()
                    if roll < rate / 2:
                        label = names[int(rng.integers(types))]
                    elif roll < rate:
                        continue
                    out.append([start, end, label])
                return out

            labellings = {"a": noisy(0.1), "b": noisy(0.15), "gold": noisy(0.02), "review": noisy(0.05)}
            language = "en" if languages == 1 else f"l{index % languages:03d}"
            handle.write(json.dumps({"id": f"x-{index:05d}", "language": language, "labellings": labellings}) + "\n")


def build(folder: Path, annotators: list[str], outputs: list[str], references: list[str], resamples: int) -> dict:
    """Build the site of the record in ``folder``; return the seconds per stage and the page's size."""
    from refsens_report.config import load_config
    from refsens_report.site import build_site

    config_text = CONFIG.format(
        annotators=json.dumps(annotators),
        outputs=json.dumps(outputs),
        references=json.dumps(references),
        resamples=resamples,
    )
    (folder / "refsens.toml").write_text(config_text)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    target = build_site(load_config(folder / "refsens.toml"), folder / "site", force=True, timings=timings)
    total = time.perf_counter() - started
    page = target / "index.html"
    pdf = next(target.glob("*.pdf"))
    return {
        "stages": timings,
        "total": total,
        "page_kb": page.stat().st_size / 1024,
        "pdf_kb": pdf.stat().st_size / 1024,
        "results_mb": (target / "results.json").stat().st_size / 2**20,
    }


CASES = ["outputs-50", "types-1000", "long-type", "languages-500"]


def case(name: str, resamples: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as scratch:
        folder = Path(scratch)
        if name == "outputs-50":
            names = generate(folder / "record.jsonl", 50)
            return build(folder, [], names, list(REFERENCES), resamples)
        if name == "types-1000":
            many_types(folder / "record.jsonl", 1000)
        elif name == "long-type":
            many_types(folder / "record.jsonl", 5, name_length=10_000)
        elif name == "languages-500":
            many_types(folder / "record.jsonl", 4, items=5000, languages=500)
        else:
            raise SystemExit(f"unknown case {name!r}")
        return build(folder, ["a", "b"], ["a", "b"], ["gold", "review"], resamples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--resamples", type=int, default=500)
    args = parser.parse_args()
    os.environ["SOURCE_DATE_EPOCH"] = "1795996800"
    print(
        f"{'case':<13} {'audit':>6} {'figures':>7} {'tables':>6} {'html':>6} {'pdf':>6} {'total':>6} "
        f"{'build/audit':>11} {'page KB':>8} {'pdf KB':>7} {'results MB':>10}"
    )
    for name in args.case or CASES:
        figures = case(name, args.resamples)
        stages = figures["stages"]
        print(
            f"{name:<13} {stages.get('audit', 0):6.1f} {stages.get('figures', 0):7.1f} {stages.get('tables', 0):6.1f} "
            f"{stages.get('html', 0):6.1f} {stages.get('pdf', 0):6.1f} {figures['total']:6.1f} "
            f"{figures['total'] / max(stages.get('audit', 0), 1e-9):11.1f} {figures['page_kb']:8.0f} "
            f"{figures['pdf_kb']:7.0f} {figures['results_mb']:10.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
