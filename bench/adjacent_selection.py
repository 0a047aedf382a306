"""Selection effect of the adjacent Holm family: how often does a null leaderboard show a significant swing?

    .venv/bin/python bench/adjacent_selection.py                    # 200 null leaderboards (a few minutes)
    .venv/bin/python bench/adjacent_selection.py --leaderboards 500

The `adjacent` family (docs/method.md section 4) picks the pairs of outputs adjacent in the primary reference's
ranking from the same data it then tests. This study audits null leaderboards, where every output makes
errors at the same rate (so every true margin, and every true swing, is zero), through the real audit
(`run_audit`) and counts:

- the family-wise rate: the share of leaderboards with at least one swing of the Holm family whose Holm p
  is below alpha (Holm promises at most alpha);
- the same rate for a family fixed in advance: the pairs adjacent in config order (outputs are exchangeable,
  so that is as good as any pre-registered order), Holm-corrected the same way over as many swings. The
  difference between the two rates is the selection effect; what both share is the bootstrap's own error;
- the raw rate: the share of the family's swings whose unadjusted bootstrap p is below alpha, against the
  same share over every pair of outputs (what selection does to a single test).

Each leaderboard is a record of two languages; a gold, a primary reference equal to it and an alternative
that re-annotates a few per cent of its entities; equally good outputs. Its seed is the leaderboard's number.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_leaderboard import TYPES, perturb  # noqa: E402  (the same span noise as the leaderboard benchmark)

CONFIG = """[dataset]
name = "adjacent selection"
version = "bench"
[record]
path = "record.jsonl"
[roles]
annotators = []
outputs = {outputs}
references = ["primary", "alternative"]
[audit]
resamples = {resamples}
rules = ["strict"]
family = "adjacent"
seed = {seed}
"""


def write_record(path: Path, rng: np.random.Generator, outputs: list[str], items: int, error: float) -> None:
    """Write one null leaderboard: every output drops, retypes and re-bounds the gold's entities at one rate."""
    with open(path, "w", encoding="utf-8") as handle:
        for language in ("de", "en"):
            for index in range(items):
                count = int(rng.poisson(1.65))
                starts = np.sort(rng.choice(40, size=count, replace=False)) * 10
                gold = [[int(s), int(s + 1 + rng.integers(1, 8)), TYPES[int(rng.integers(len(TYPES)))]] for s in starts]
                labellings = {"primary": gold, "alternative": perturb(rng, gold, 0.06, 0.02)}
                labellings.update({name: perturb(rng, gold, error, error / 2) for name in outputs})
                line = {"id": f"{language}-{index:04d}", "language": language, "labellings": labellings}
                handle.write(json.dumps(line, separators=(",", ":")) + "\n")


def one_leaderboard(number: int, outputs: int, items: int, resamples: int, alpha: float) -> dict:
    """Audit one null leaderboard; return its family's size, Holm rejections and raw rejections."""
    from refsens_report.audit import run_audit
    from refsens_report.bootstrap import holm
    from refsens_report.config import load_config

    names = [f"system-{index}" for index in range(outputs)]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        write_record(folder / "record.jsonl", np.random.default_rng(number), names, items, error=0.2)
        (folder / "refsens.toml").write_text(CONFIG.format(outputs=json.dumps(names), resamples=resamples, seed=number))
        results = run_audit(load_config(folder / "refsens.toml"))
    swings = [row for row in results.rows if row["analysis"] == "interaction" and row["statistic"] == "swing"]
    family = [row for row in swings if row["p_holm"] is not None]
    fixed_pairs = set(zip(names, names[1:]))
    fixed = [row["p_value"] for row in swings if (row["output"], row["output_2"]) in fixed_pairs]
    return {
        "family": len(family),
        "holm_rejections": sum(row["p_holm"] < alpha for row in family),
        "fixed_rejections": sum(p < alpha for p in holm(fixed)),
        "family_raw": sum(row["p_value"] < alpha for row in family),
        "all": len(swings),
        "all_raw": sum(row["p_value"] is not None and row["p_value"] < alpha for row in swings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--leaderboards", type=int, default=200)
    parser.add_argument("--outputs", type=int, default=6)
    parser.add_argument("--items", type=int, default=150, help="items per language")
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    started = time.perf_counter()
    runs = [
        one_leaderboard(number, args.outputs, args.items, args.resamples, args.alpha)
        for number in range(args.leaderboards)
    ]
    rejected = np.array([run["holm_rejections"] > 0 for run in runs])
    rate = rejected.mean()
    error = np.sqrt(rate * (1 - rate) / len(runs))
    family_raw = sum(run["family_raw"] for run in runs) / sum(run["family"] for run in runs)
    all_raw = sum(run["all_raw"] for run in runs) / sum(run["all"] for run in runs)
    print(
        f"{args.leaderboards} null leaderboards: {args.outputs} equally good outputs, 2 references, 2 languages x "
        f"{args.items} items, {args.resamples} replicates, strict, alpha {args.alpha}; "
        f"{runs[0]['family']} swings in each adjacent family"
    )
    print(f"family-wise rate (some adjacent swing Holm-significant): {rate:.3f} (standard error {error:.3f})")
    fixed = np.mean([run["fixed_rejections"] > 0 for run in runs])
    print(f"the same for the pairs adjacent in config order (fixed in advance): {fixed:.3f}")
    print(f"raw p < alpha: {family_raw:.3f} of the family's swings, {all_raw:.3f} of all swings")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
