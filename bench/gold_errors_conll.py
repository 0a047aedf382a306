"""Gold-error candidates against a real correction: CoNLL++ (186 corrected sentences of the CoNLL-2003 test set).

Ranks the candidate errors in `original` with `[report] error_evidence = "outputs"` (the 14 system outputs
only), scores each sentence by its best candidate, and measures precision and recall at 25, 50, 100 and 200
sentences against the sentences whose strict spans CoNLL++ changed. Baselines: the number of systems whose
strict span set differs from original's on the sentence, and the same candidates with every source weighing
the same (no leave-one-out reliability). Ties are broken in expectation (a tied block counts pro rata).
Then the crowd example: its expert gold has no published correction (CoNLL++ corrected the test set, and the
crowd's sentences are other CoNLL sentences: the script counts how many of their texts occur in the test set),
so the candidates in its shipped aggregate `majority` are checked against the expert gold instead. Last, the
analysis's own cost on CoNLL with the default evidence (candidates of all four references, files, summary).

    PYTHONPATH=. .venv/bin/python bench/gold_errors_conll.py   (needs ../shared/data)
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

from refsens_report.analyses import gold_errors
from refsens_report.analyses.base import AuditContext
from refsens_report.config import load_config
from refsens_report.counts import ItemCounts
from refsens_report.load import load_record
from refsens_report.subsets import DuplicateGroups, build_subsets

ROOT = Path(__file__).resolve().parent.parent
KS = (25, 50, 100, 200)


def context_of(config_path: Path, evidence: str = "outputs") -> AuditContext:
    """Return the audit's context (no bootstrap) with the chosen error evidence."""
    config = load_config(config_path)
    config = dataclasses.replace(config, report=dataclasses.replace(config.report, error_evidence=evidence))
    record = load_record(config)
    counts = ItemCounts(record.table, config.roles.all_names)
    groups = DuplicateGroups.from_record(record, config.audit.duplicate_key)
    defective = groups.defective(record, counts, config)
    subsets = build_subsets(counts, groups, {found for group in defective for found in group.items}, config)
    return AuditContext(config, record, counts, groups, defective, subsets)


def at_k(score: np.ndarray, truth: np.ndarray, k: int) -> tuple[float, float]:
    """Return (precision, recall) of the k highest scores, ties broken in expectation."""
    ordered = np.sort(score)[::-1]
    threshold = ordered[k - 1]
    above = score > threshold
    tied = score == threshold
    share = (k - above.sum()) / tied.sum()
    hits = truth[above].sum() + share * truth[tied].sum()
    return hits / k, hits / truth.sum()


def item_scores(candidates: gold_errors.Candidates, n_items: int, how: str = "max") -> np.ndarray:
    score = np.zeros(n_items)
    if how == "max":
        np.maximum.at(score, candidates.item, candidates.score)
    else:
        np.add.at(score, candidates.item, candidates.score)
    return score


def report(name: str, scores: dict[str, np.ndarray], truth: np.ndarray, mask: np.ndarray) -> None:
    print(f"\n{name}: {int(truth[mask].sum())} changed items of {int(mask.sum())}")
    print("score".ljust(34) + "".join(f"P@{k:<4} R@{k:<4} " for k in KS))
    for label, score in scores.items():
        cells = [at_k(score[mask], truth[mask], k) for k in KS]
        print(label.ljust(34) + "".join(f"{p:6.3f} {r:6.3f} " for p, r in cells))


def disagreeing(context: AuditContext, reference: str, outputs) -> np.ndarray:
    counts = context.counts
    return sum((counts.has(o) & ~counts.equal(o, reference)).astype(int) for o in outputs)


def main() -> int:
    data = ROOT.parent / "shared" / "data"
    if not data.is_dir():
        print(f"skipped: {data} is absent")
        return 0
    started = time.perf_counter()
    context = context_of(ROOT / "examples" / "conll2003" / "refsens.toml")
    loaded = time.perf_counter()
    mask = context.subsets.audited
    candidates = gold_errors.candidates_of(context, "original", mask)
    ranked = time.perf_counter()
    counts = context.counts
    truth = ~counts.equal("original", "conllpp")
    print(f"CoNLL: load {loaded - started:.1f} s, candidates {ranked - loaded:.2f} s; {candidates.n} candidates "
          f"in original on {len(np.unique(candidates.item))} sentences")
    flat = gold_errors.candidates_of(context, "original", mask, equal_weights=True)
    scores = {"disagreeing systems (baseline)": disagreeing(context, "original", context.config.roles.outputs),
              "candidates, equal weights": item_scores(flat, counts.n_items),
              "candidates, leave-one-out (max)": item_scores(candidates, counts.n_items),
              "candidates, leave-one-out (sum)": item_scores(candidates, counts.n_items, "sum")}
    report("CoNLL-2003 original vs CoNLL++", scores, truth, mask)

    crowd = context_of(ROOT / "examples" / "crowd-conll" / "refsens.toml")
    test_texts = set(context.record.table.text.tolist())
    shared = {text for text in crowd.record.table.text.tolist() if text in test_texts}
    print(f"\ncrowd sentences whose text is a CoNLL test sentence: {len(shared)} distinct texts of "
          f"{crowd.record.table.n_items} sentences")
    mask = crowd.subsets.audited
    found = gold_errors.candidates_of(crowd, "majority", mask)
    flat = gold_errors.candidates_of(crowd, "majority", mask, equal_weights=True)
    truth = ~crowd.counts.equal("majority", "gold")
    scores = {"disagreeing passes (baseline)": disagreeing(crowd, "majority", crowd.config.roles.outputs),
              "candidates, equal weights": item_scores(flat, crowd.counts.n_items),
              "candidates, leave-one-out (max)": item_scores(found, crowd.counts.n_items),
              "candidates, leave-one-out (sum)": item_scores(found, crowd.counts.n_items, "sum")}
    report("crowd: majority vs expert gold (outputs pass_1, pass_2)", scores, truth, mask)

    default = context_of(ROOT / "examples" / "conll2003" / "refsens.toml", "outputs+references")
    started = time.perf_counter()
    written = gold_errors.files(default)
    summary = gold_errors.summary(default)
    spent = time.perf_counter() - started
    print(f"\nCoNLL, default evidence: {spent:.2f} s for the candidates of {len(summary['references'])} references, "
          f"the files ({sum(len(text) for text in written.values()) / 1e6:.1f} MB) and the summary; candidates: "
          + ", ".join(f"{r['reference']} {r['candidates']}" for r in summary["references"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
