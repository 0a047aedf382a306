"""The Methods text: what refsens-report computes, and what it chose where the method leaves a choice open.

It is printed in every appendix, so it names no file the reader does not have (no docs/method.md, no docs/ page).

The report's Methods section renders ``methods_markdown()``: the shared definitions here, each analysis's own
(``Analysis.methods``) in the registry's order, and the choices. docs/methods.md is the same text under a note
saying what it is (``docs_markdown``), written by ``python -m refsens_report.methods docs/methods.md`` (a test
checks the two agree).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from refsens_report.analyses.registry import ANALYSES
from refsens_report.view import HolmFamily

INTRO = """# Methods: what refsens-report computes, and what it chose where the method leaves a choice open

The definitions follow the paper "Same Output, Different Gold" and refsens-report's published method. This
section restates them briefly and lists every choice the tool makes where the method leaves one open.

"""

# The definitions every analysis shares; each analysis states its own (``Analysis.methods``), in between.
GENERAL = """- **Spans and rules.** A span is `(start, end, type)` in character offsets, the end exclusive.
  `[audit] rules` lists the rules every F1 is computed under (default `strict` and `relaxed`):
  - `strict`: a labelling's spans on an item form a set of `(start, end, type)`; TP = |O ∩ R|.
  - `relaxed` = **exact boundaries, any type**: a set of `(start, end)`; two spans with the same boundaries
    and different types are one. It is not partial matching: boundaries must agree exactly.
  - `overlap` = same type and at least one shared character: TP on an item is the size of a **maximum
    one-to-one matching** between the two strict sets (no span is counted twice, and the result does not
    depend on the order of the spans); FP = |O| − TP and FN = |R| − TP with the strict sets.

  Repeated spans count once under every rule.
- **F1.** Micro-averaged over items: `F1(O, R) = 100 · 2TP / (2TP + FP + FN)` with TP, FP, FN summed over
  the items; undefined (empty) when `2TP + FP + FN = 0`.
- **Subsets.** *corpus*: items where annotators A and B are both present. *audited*: items where every
  labelling named in any role is present. *decontaminated*: audited items on which the primary
  reference's strict set equals neither A's nor B's."""

UNCERTAINTY = """- **Uncertainty.** Paired, stratified, prompt-level bootstrap: in each replicate every language's items
  are drawn with replacement, n_l from n_l; pooled statistics use all languages' draws together. All
  statistics on one item set use the same draws, so differences are computed inside each replicate.
  Percentile intervals (numpy's linear quantile) over the replicates where the statistic is defined;
  null when fewer than half are; with `[audit] interval = "bca"`, bias-corrected and accelerated intervals
  (the acceleration from the leave-one-out jackknife on the per-item sums). Two-sided bootstrap
  p = min(1, 2(1 + min(#{s* ≤ 0}, #{s* ≥ 0})) / (B′ + 1)).
- **Clusters** (`[record] cluster`, a metadata key such as `document`). Items sharing its value within a
  language form a cluster (their errors are not independent), and the bootstrap resamples clusters instead of
  items: each language draws as many clusters as it has, with replacement, an item's counts entering with
  its cluster's weight; each item set resamples the clusters of its own items, BCa's jackknife leaves out a
  cluster, and the skew's sign-flip test flips one sign per cluster. `n_clusters` counts the clusters beside
  `n_items`. Every item must give the key. On simulated records of 100 documents whose errors share a
  document effect, nominal 95 % intervals covered 81–87 % with sentences resampled and 93.7–95.5 % with
  documents. Without a cluster key every item is its own cluster.
- **Holm family** (`[audit] family`). Holm's step-down correction runs over one family of interaction swing
  rows (every rule, every language and pooled): `adjacent` (the default with 3 or more outputs) = for each
  alternative reference, the swings primary versus that alternative of the pairs of outputs adjacent in the
  primary reference's ranking; `primary` = every pair of outputs, primary versus each alternative; `all` =
  every pair of outputs under every pair of references (the default with fewer outputs; with two outputs and
  two references the three coincide: the paper's 14 tests). Swings outside the family keep their raw p and
  have no Holm p. Why adjacent: a reader of a leaderboard asks whether neighbouring systems keep their
  order when the shipped gold is replaced; testing every pair under every pair of golds (2,184 tests for
  14 systems and 4 golds) makes the correction so strict that no bootstrap p can pass it.
- **Replicates** (`resamples = "auto"`, the default): B is the smallest number of replicates, at least
  2,000, for which the Holm floor 2m / (B + 1) of the family's m tests is at most a tenth of 1 − confidence
  (0.005 at 95 %), so the floor never decides a test; a number in the config pins B."""

CHOICES = """## Choices where the method leaves a choice open

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
   result is the same whatever the number of threads the bootstrap runs on. A language of more than
   65,536 items in an item set draws in canonical blocks of 65,536 items (in id order): how many of its n
   draws fall in each block is drawn first (a multinomial over the blocks' sizes, its own stream), then each
   block draws that many items from itself (a stream per block). That is the same distribution as n draws
   over the language, and no draw depends on how the work is split across threads, processes or machines.
   A language of one block draws exactly as before. A coverage study with blocks of 40 items (so that every
   language of a 6,000-item record draws this way) found 93.5–94.8 % coverage of nominal 95 % intervals.
7. **Languages without items.** A language with no item in an item set gets no row for that item set
   (for example a language none of whose audited items is decontaminated).
8. **Labellings in two roles.** A statistic that would compare a labelling with itself is not computed:
   an output is not scored against itself, and a reference is not tested for neutrality against itself.
9. **More than two references.** An output then has several pooled deltas; its band is the largest
   max(|ci_low|, |ci_high|) over all of them, and the overall band is that of the output whose largest
   pooled |delta| is largest.
10. **Range** ignores undefined scores; it is undefined only when every score is.
11. **Intervals everywhere.** Every row carries a bootstrap interval (rates, scores and ranges too), not only
    the rows the method requires; p-values only on skew, delta, margin and swing.
12. **Type agreement** uses strict and relaxed TP whatever rules the config lists.
13. **Precision.** Numbers in results.csv and results.json are the full double-precision values; the
    report rounds only for display (the Printing line of the settings above).
14. **Type agreement above 100.** The method's formula, 100 · TP_strict / TP_relaxed, is kept exactly.
    When both annotators give one boundary two types (say LOC and ORG on the same span), that boundary is
    one relaxed match but two strict matches, so the figure can exceed 100; on ordinary records, where a
    boundary carries one type, it is the share of boundary-matched spans that also agree on type.
15. **Holm at leaderboard scale.** The smallest bootstrap p-value is 2 / (B + 1), so with m tests in the
    family nothing can be significant after Holm unless 2m / (B + 1) is below the level; results.json
    (`interaction`: family, tests, resamples, holm_floor) and the leaderboard's `holm_floor` row carry that
    floor, and the report says so rather than reading "none significant" as evidence. The adjacent family's
    ranking is the pooled point estimate F1 under the primary reference, main rule (strict when computed),
    on the audited items, ties in config order; the same pairs are tested under every rule and language.
    With one language the pooled rows repeat the language's and both stay in the family (the method's
    "all languages and pooled"), which doubles m: conservative, never anticonservative.
16. **Small strata.** The tool's coverage study on simulated records found the nominal 95 %
    intervals cover 93.8–94.5 % at about 100 audited items per language, but per-language intervals for
    languages with about 50 audited items, and few items on which the references differ, covered only
    86–90 %: the percentile bootstrap cannot resample disagreements the sample does not contain. Read
    per-language intervals from small strata as optimistic; pooled intervals were unaffected (91.5–95 %).
    BCa intervals (`[audit] interval = "bca"`) do not help: re-run with 60 records each (truth from 60,000
    items, 500 replicates), per-language coverage fell from 91.3 / 92.8 / 90.1 % (delta / skew / swing,
    percentile) to 89.0 / 91.2 / 86.8 % (BCa) at 3,000 items, and from 93.8 / 94.2 / 93.3 % to 92.4 / 93.8 /
    91.9 % at 6,000 items. Percentile stays the default; BCa is offered, not advised.
17. **The cap on automatic replicates.** The bootstrap's cost is linear in B (one weights-by-counts product
    per replicate). `resamples = "auto"` stops at 100,000 replicates, and never beyond what the record's
    bootstrap sums fit in the memory budget that validate checks; a family too large for the cap keeps a
    floor above the target, which the results state.
18. **Decisions on intervals.** A margin is "beyond the band" when its whole interval lies beyond ±band,
    "within" when its whole interval lies inside, and undecided otherwise; the largest per-language movement
    quoted is the largest delta whose interval excludes zero. Point estimates alone decide nothing.
19. **Tie groups.** Under the primary reference, outputs are taken in order of their point rank and split
    into runs: an output starts a new group when the low end of its rank interval lies above the high end
    of every rank interval in the current group (`leaderboard`, statistic `tie_group`).
20. **n_items.** The items a statistic was computed on: the item set's size per language and pooled, except
    for ratios over a sub-population, which count that sub-population: `default_to_first` the items where
    A ≠ B and no third pass fired, `type_agreement` the items with at least one boundary-matched span.
    `n_clusters` counts the clusters those items make (clusters holding at least one of them), and equals
    `n_items` without a cluster key.
21. **Overlap: sharing a character.** Offsets are half-open, so `[0, 4)` and `[4, 9)` share none and never
    match under `overlap`; the types must be equal (after `label_map`, below).
22. **Overlap: which spans are paired** is not reported: only the matching's size enters the counts, and
    several maximum matchings can have it. Each span of either labelling is matched at most once, so a
    prediction covering two gold spans earns one TP and one FN, and two predictions inside one gold span
    earn one TP and one FP. A partial match counts fully (no half credit, unlike nervaluate's and SemEval
    2013's `partial` scheme). Where no span overlaps more than one span of its type in the other labelling,
    TP equals the correct count of nervaluate's `ent_type` scheme summed over its per-type results; elsewhere
    nervaluate pairs greedily in span order and can count fewer. Overlap TP is
    never below strict TP (exact matches are among the candidates), so overlap F1 is at least strict F1;
    against relaxed there is no order. Type agreement and the type-confusion table stay on exact boundaries
    whatever rules are configured.
23. **Overlap and the analyses.** Everything the method computes per rule (agreement F1, swap, range,
    interaction, band, decontaminated, duplicates, leaderboard) is computed under `overlap` when it is
    configured, and its swings join the Holm family like the other rules'. The statistics defined on strict
    sets (identical, neutrality, silent, the decontaminated subset, defective duplicates) do not change.
24. **Label maps.** `label_map` (a key of the record's config) renames or drops span types while the record is read, so
    every statistic, under every rule, sees the mapped types; the report's input notes count what was renamed
    and dropped.
25. **Per-type replicates.** Per-type rows (by type) use the first min(B, 2,000) replicates of the swap's
    draws, not all B: B is raised above 2,000 only for the Holm floor of the interaction's family, and the
    per-type rows are not Holm-tested, while their number grows with the types (outputs x references x types).
    They are the swap's own draws, replicate by replicate: with a single span type the per-type rows equal
    the swap's, intervals and p-values included.
26. **Which types move most.** A type moves for an output when its pooled per-type delta's interval excludes
    zero; the report orders the types by their largest such |delta| (then the types that move for no output,
    by their largest |delta|), names the first ones and sums the others as "other"; every type's rows are in
    the results and in the table's CSV. A type with no span in either reference and output on the items has
    an undefined F1, not zero. Only types with at least `[report] min_type_spans` spans (default 30) under
    both references compared, pooled, are ranked or named; the others are listed as too rare to say, with
    their spans (a delta on four spans can be +69 F1 points with an interval from 0 to 100).
"""


def family_sentence(results: Mapping[str, Any]) -> str:
    """Return the sentence saying which Holm family this audit tested, its size, B and the floor ('' if none)."""
    family = HolmFamily.from_results(results)
    if family is None or not family.tests:
        return ""
    why = {
        "adjacent": "the pairs of outputs adjacent in the primary reference's ranking, primary versus each alternative",
        "primary": "every pair of outputs, primary reference versus each alternative",
        "all": "every pair of outputs under every pair of references",
    }.get(family.name, family.name)
    resamples = family.resamples if family.resamples is not None else results.get("resamples")
    return (
        f"\n\n**In this audit** the Holm family is `{family.name}`: {why}, every rule, every language and "
        f"pooled, {family.tests:,} tests; with {resamples:,} replicates its "
        f"Holm floor is {family.holm_floor:.4g}."
    )


def unit_sentence(results: Mapping[str, Any]) -> str:
    """Return the sentence naming what this audit's bootstrap resampled: items, or the clusters of a key."""
    record = results.get("record") or {}
    clusters = record.get("clusters") or {}
    audited = ((record.get("subsets") or {}).get("audited") or {}).get("pooled")
    if not clusters.get("key"):
        return "\n\n**In this audit** the bootstrap resamples items (no cluster key: every item is its own cluster)."
    found = ((clusters.get("subsets") or {}).get("audited") or {}).get("pooled")
    size = (
        f" ({found:,} clusters of {audited:,} audited items, pooled)"
        if found is not None and audited is not None
        else ""
    )
    return (
        f"\n\n**In this audit** the bootstrap resamples clusters: the items sharing a value of `meta."
        f"{clusters['key']}` within a language{size}."
    )


def methods_markdown(results: Mapping[str, Any] | None = None) -> str:
    """Return the Methods text as Markdown (its first line is the page title, which the report drops).

    Given an audit's results.json, the definitions end with the Holm family this audit tested and its size.
    """
    definitions = [GENERAL, *(analysis.methods for analysis in ANALYSES if analysis.methods), UNCERTAINTY]
    audit = family_sentence(results) + unit_sentence(results) if results is not None else ""
    return INTRO + "## Definitions in brief\n\n" + "\n".join(definitions) + audit + "\n\n" + CHOICES


# docs/methods.md alone, never the appendix (which names no file): what the file is, and where the definitions are
DOCS_NOTE = """> This file is generated by `python -m refsens_report.methods docs/methods.md` (from
> `refsens_report/methods.py` and each analysis's `methods`): it is the Methods text every appendix prints, for
> the appendix's readers. Edit the generator, not this file. The definitions contributors cite ("docs/method.md
> section N") are in [docs/method.md](method.md).

"""


def docs_markdown() -> str:
    """Return docs/methods.md: the Methods text with, under its title, the note saying what the file is."""
    title, rest = methods_markdown().split("\n\n", 1)
    return f"{title}\n\n{DOCS_NOTE}{rest}"


if __name__ == "__main__":  # python -m refsens_report.methods docs/methods.md
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(docs_markdown(), encoding="utf-8")
    else:
        sys.stdout.write(methods_markdown())
