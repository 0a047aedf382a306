"""The Methods text: what refsens-report computes, and what it chose where the contract is silent.

The report's Methods section renders ``methods_markdown()``: the shared definitions here, each analysis's own
(``Analysis.methods``) in the registry's order, and the choices. docs/methods.md is the same text, written by
``python -m refsens_report.methods docs/methods.md`` (a test checks the two agree).
"""

from __future__ import annotations

import sys
from pathlib import Path

from refsens_report.analyses.registry import ANALYSES

INTRO = """# Methods: what refsens-report computes, and what it chose where the contract is silent

The definitions are those of METHOD.md (shipped with the project's design documents) and of the paper
"Same Output, Different Gold". This page restates them briefly and lists every choice the tool makes that
the contract leaves open. The report's Methods section carries the same text.

"""

# The definitions every analysis shares; each analysis states its own (``Analysis.methods``), in between.
GENERAL = """- **Spans and rules.** A span is `(start, end, type)` in character offsets. Under `strict` a labelling's
  spans on an item form a set of `(start, end, type)`; under `relaxed` a set of `(start, end)`. Repeated
  spans count once; under `relaxed` two spans with the same boundaries and different types are one.
- **F1.** Micro-averaged over items: `F1(O, R) = 100 · 2TP / (2TP + FP + FN)` with TP, FP, FN summed over
  the items; undefined (empty) when `2TP + FP + FN = 0`.
- **Subsets.** *corpus*: items where annotators A and B are both present. *audited*: items where every
  labelling named in any role is present. *decontaminated*: audited items on which the primary
  reference's strict set equals neither A's nor B's."""

UNCERTAINTY = """- **Uncertainty.** Paired, stratified, prompt-level bootstrap: in each replicate every language's items
  are drawn with replacement, n_l from n_l; pooled statistics use all languages' draws together. All
  statistics on one item set use the same draws, so differences are computed inside each replicate.
  Percentile intervals (numpy's linear quantile) over the replicates where the statistic is defined;
  null when fewer than half are. Two-sided bootstrap p = min(1, 2(1 + min(#{s* ≤ 0}, #{s* ≥ 0})) / (B′ + 1)).
  Holm step-down over every interaction swing row (all languages and pooled, both rules, every pair)."""

CHOICES = """## Choices where the contract is silent

1. **Absent is never equal.** A labelling absent from an item does not equal any other labelling there,
   not even another absent one. So an item without the primary reference never counts as "silent".
2. **Third pass.** The third-pass, silent and default-to-first rates are reported only when every corpus
   item records `meta.third_pass`; otherwise the report says so.
3. **Duplicate handling order.** Defective groups are removed first (when
   `exclude_defective_duplicates = true`), then the duplicate policy is applied to the whole record in
   record order, and only then are corpus, audited and decontaminated selected. So under `keep_first` the
   first copy is kept even when a later copy is the one the reviewer annotated.
4. **Defective groups** are groups of two or more items sharing a duplicate key. The defect is checked for
   every non-primary reference against the first two annotators (A and B).
5. **Order independence.** Within a language the bootstrap indexes items in the order of their ids, so
   shuffling the lines of a record (without duplicate keys) gives byte-identical results.
6. **Random streams.** Each item set (corpus, audited, decontaminated, each duplicate policy) has its own
   seed, `SeedSequence(seed, spawn_key=(k,))` with a fixed k per item set. Within it, every language's
   replicates come in chunks of 250, each drawn from its own stream keyed by the language code and the
   chunk, so the draws of one language do not depend on which other languages the record has, and the
   result is the same whatever the number of threads the bootstrap runs on.
7. **Languages without items.** A language with no item in an item set gets no row for that item set
   (for example a language none of whose audited items is decontaminated).
8. **Labellings in two roles.** A statistic that would compare a labelling with itself is not computed:
   an output is not scored against itself, and a reference is not tested for neutrality against itself.
9. **More than two references.** An output then has several pooled deltas; its band is the largest
   max(|ci_low|, |ci_high|) over all of them, and the overall band is that of the output whose largest
   pooled |delta| is largest.
10. **Range** ignores undefined scores; it is undefined only when every score is.
11. **Intervals everywhere.** Every row carries a bootstrap interval (rates, scores and ranges too), not only
    the rows METHOD.md requires; p-values only on skew, delta, margin and swing.
12. **Type agreement** uses strict and relaxed TP whatever rules the config lists.
13. **Precision.** Numbers in results.csv and results.json are the full double-precision values; the
    report rounds only for display (METHOD.md section 6).
14. **Type agreement above 100.** The contract's formula, 100 · TP_strict / TP_relaxed, is kept exactly.
    When both annotators give one boundary two types (say LOC and ORG on the same span), that boundary is
    one relaxed match but two strict matches, so the figure can exceed 100; on ordinary records, where a
    boundary carries one type, it is the share of boundary-matched spans that also agree on type.
15. **Holm at leaderboard scale.** The Holm family is every interaction swing row (all languages and pooled,
    both rules, every pair of outputs and of references). The smallest bootstrap p-value is 2 / (B + 1),
    so with m swings nothing can be significant after Holm unless 2m / (B + 1) is below the level; the
    results carry that floor (`leaderboard`, statistic `holm_floor`) and the report says so rather than
    reading "none significant" as evidence.
16. **Small strata.** The coverage study (`bench/coverage.py`, docs/simulation.md) found the nominal 95 %
    intervals cover 93.8–94.5 % at about 100 audited items per language, but per-language intervals for
    languages with about 50 audited items, and few items on which the references differ, covered only
    86–90 %: the percentile bootstrap cannot resample disagreements the sample does not contain. Read
    per-language intervals from small strata as optimistic; pooled intervals were unaffected (91.5–95 %).
"""


def methods_markdown() -> str:
    """Return the Methods text as Markdown (its first line is the page title, which the report drops)."""
    definitions = [GENERAL, *(analysis.methods for analysis in ANALYSES if analysis.methods), UNCERTAINTY]
    return INTRO + "## Definitions in brief\n\n" + "\n".join(definitions) + "\n\n" + CHOICES


if __name__ == "__main__":  # python -m refsens_report.methods docs/methods.md
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(methods_markdown(), encoding="utf-8")
    else:
        sys.stdout.write(methods_markdown())
