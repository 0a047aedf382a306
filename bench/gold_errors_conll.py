"""Gold-error candidates against a real correction: CoNLL++ (186 corrected sentences of the CoNLL-2003 test set).

Ranks the candidate errors in `original` with `[report] error_evidence = "outputs"` (the 14 system outputs
only), scores each sentence by its best candidate, and measures precision and recall at 25, 50, 100 and 200
sentences against the sentences whose strict spans CoNLL++ changed. Baselines: the number of systems whose
strict span set differs from original's on the sentence, and the same candidates with every source weighing
the same (no leave-one-out reliability). Ties are broken in expectation (a tied block counts pro rata).
Then the variants tried and not shipped (docs/gold-errors.md): Dawid–Skene EM against the latent truth
(two-coin per span, or per-class confusion over a place's states; a fixed number of iterations), sentences
scored by noisy-OR over their places, and the candidates weighted by the EM's reliabilities. Then the
reference's own consistency (Dickinson & Meurers' variation n-grams): "the reference elsewhere", the state
the reference most often gives the same string on other items, as one more source (the definition fixed
before measuring) or as a prior, on the string alone or with the word either side; none is in the analysis.
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
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from refsens_report.analyses import gold_errors
from refsens_report.analyses.base import AuditContext
from refsens_report.config import load_config
from refsens_report.counts import ItemCounts
from refsens_report.load import load_record
from refsens_report.results import files_text
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
    print("score".ljust(44) + "".join(f"P@{k:<4} R@{k:<4} " for k in KS))
    for label, score in scores.items():
        cells = [at_k(score[mask], truth[mask], k) for k in KS]
        print(label.ljust(44) + "".join(f"{p:6.3f} {r:6.3f} " for p, r in cells))


def disagreeing(context: AuditContext, reference: str, outputs) -> np.ndarray:
    counts = context.counts
    return sum((counts.has(o) & ~counts.equal(o, reference)).astype(int) for o in outputs)


# --- variants tried and not shipped (docs/gold-errors.md): Dawid–Skene EM against the latent truth -----------

EM_ITERATIONS = 50  # fixed: the results are deterministic (the estimates move by less than 1e-6 by then)


@dataclasses.dataclass(frozen=True)
class Votes:
    """Every strict span the outputs or the reference has on the items (the pool), in (item, span) order:
    its item, whether the reference has it, which sources have it (``has``) and which have nothing overlapping
    it (``clear``), and every overlapping pair."""

    item: np.ndarray
    ours: np.ndarray
    has: np.ndarray
    clear: np.ndarray
    edges: tuple[np.ndarray, np.ndarray]


def votes_of(context: AuditContext, reference: str, mask: np.ndarray) -> Votes:
    counts = context.counts
    sources = gold_errors.sources_of(context, reference)
    mask = mask & counts.has(reference)
    pool = gold_errors.pool_of(counts, reference, sources, mask)  # the places the analysis votes on
    ids = pool.ids
    has = np.zeros((len(sources), len(ids)), dtype=bool)
    clear = np.ones((len(sources), len(ids)), dtype=bool)
    for row, source in enumerate(sources):
        source_ids = counts.ids("strict", source)
        has[row] = np.isin(ids, source_ids)
        clear[row, gold_errors._overlaps(counts, ids, source_ids)[0]] = False
    assert all((mask & counts.has(source))[mask].all() for source in sources)  # every output on every item
    return Votes(pool.item, pool.ours, has, clear, gold_errors._overlaps(counts, ids, ids))


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def ds_two_coin(votes: Votes, prior: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dawid–Skene EM over the pool's spans, each true or not; per source a sensitivity r and a false-positive
    rate f (add-one smoothed) against the posterior, not the reference. Initialised at the share of sources
    having the span. ``prior``: "global" (one rate of true spans; the reference does not vote) or "reference"
    (one rate for the reference's spans, one for the others). Returns (log-odds each span is true, r, f)."""
    x = votes.has.astype(float)
    q = x.mean(axis=0)
    for _ in range(EM_ITERATIONS):
        r = (x @ q + 1) / (q.sum() + 2)
        f = (x @ (1 - q) + 1) / ((1 - q).sum() + 2)
        if prior == "global":
            rate = np.full(len(q), (q.sum() + 1) / (len(q) + 2))
        else:
            ours = votes.ours
            rate_ours = (q[ours].sum() + 1) / (ours.sum() + 2)
            rate = np.where(ours, rate_ours, (q[~ours].sum() + 1) / ((~ours).sum() + 2))
        true = logit(rate) + x.T @ np.log(r / f) + (1 - x).T @ np.log((1 - r) / (1 - f))
        q = 1 / (1 + np.exp(-true))
    return true, r, f


def ds_places(votes: Votes, prior: str) -> tuple[np.ndarray, np.ndarray]:
    """Dawid–Skene EM over places with several states: a place is a connected set of overlapping pool spans,
    its states are nothing and every span set a source or the reference has there; per source (per class,
    add-one smoothed) the rate r of voting the true span state, m of voting nothing where a span is, f of
    voting a span where nothing is (spread evenly over the place's span states), the rest spread over the
    other span states. ``prior``: "global" (one rate of nothing) or "reference" (one rate of the reference's
    state being true). Returns per place its item and the log-probability that the reference's state is true."""
    n_spans = len(votes.item)
    graph = coo_matrix((np.ones(len(votes.edges[0])), votes.edges), shape=(n_spans, n_spans))
    n_places, place = connected_components(graph, directed=False)
    item = np.zeros(n_places, dtype=np.int64)
    item[place] = votes.item

    def keys(member: np.ndarray) -> list[tuple[int, ...]]:
        found: list[list[int]] = [[] for _ in range(n_places)]
        for span in np.flatnonzero(member).tolist():
            found[place[span]].append(span)
        return [tuple(spans) for spans in found]

    said = [keys(row) for row in votes.has]
    ours = keys(votes.ours)
    index: dict[tuple[int, tuple[int, ...]], int] = {}
    for at in range(n_places):
        for key in [(), ours[at], *(row[at] for row in said)]:
            index.setdefault((at, key), len(index))
    state_place = np.array([at for at, _ in index], dtype=np.int64)
    nothing = np.array([not key for _, key in index])
    vote = np.array([[index[(at, row[at])] for at in range(n_places)] for row in said])
    reference = np.array([index[(at, ours[at])] for at in range(n_places)])
    n_states = np.bincount(state_place, minlength=n_places)
    voted_nothing = nothing[vote]
    q = np.zeros(len(index))
    for row in vote:
        np.add.at(q, row, 1 / len(vote))
    for _ in range(EM_ITERATIONS):
        p_nothing = np.zeros(n_places)
        p_nothing[state_place[nothing]] = q[nothing]
        r = ((q[vote] * ~voted_nothing).sum(1) + 1) / ((1 - p_nothing).sum() + 2)
        m = (((1 - p_nothing) * voted_nothing).sum(1) + 1) / ((1 - p_nothing).sum() + 3)
        f = ((p_nothing * ~voted_nothing).sum(1) + 1) / (p_nothing.sum() + 2)
        wrong = np.maximum(1 - r - m, 1e-9)
        spread_nothing = np.log(f[:, None] / np.maximum(n_states - 1, 1))
        spread_span = np.log(wrong[:, None] / np.maximum(n_states - 2, 1))
        if_nothing = np.where(voted_nothing, np.log(1 - f)[:, None], spread_nothing).sum(0)
        if_span = np.where(voted_nothing, np.log(m)[:, None], spread_span).sum(0)
        log_lik = np.where(nothing, if_nothing[state_place], if_span[state_place])
        for row, source in enumerate(vote):
            bonus = np.zeros(len(q))
            span = ~voted_nothing[row]
            np.add.at(bonus, source[span], np.log(r[row]) - np.log(wrong[row] / np.maximum(n_states[span] - 2, 1)))
            log_lik += np.where(nothing, 0, bonus)
        others = np.maximum(n_states - 1, 1)[state_place]
        if prior == "global":
            rate = (p_nothing.sum() + 1) / (n_places + 2)
            log_lik += np.where(nothing, np.log(rate), np.log((1 - rate) / others))
        else:
            is_reference = np.zeros(len(q), dtype=bool)
            is_reference[reference] = True
            rate = (q[reference].sum() + 1) / (n_places + 2)
            log_lik += np.where(is_reference, np.log(rate), np.log((1 - rate) / others))
        top = np.full(n_places, -np.inf)
        np.maximum.at(top, state_place, log_lik)
        total = np.zeros(n_places)
        np.add.at(total, state_place, np.exp(log_lik - top[state_place]))
        log_q = log_lik - top[state_place] - np.log(total[state_place])
        q = np.exp(log_q)
    return item, log_q[reference]


def place_scores(votes: Votes, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shipped candidates' scores with one weight per source (no leave-one-out): each place's heaviest
    other state against the reference's (every place, not only candidates). Returns (item, score)."""
    first, second = votes.edges
    has, clear, ours = weight @ votes.has, weight @ votes.clear, votes.ours
    best = clear.copy()
    rival = ours[first] & ~ours[second]
    np.maximum.at(best, first[rival], has[second[rival]])
    lacking = ~ours.copy()
    lacking[first[~ours[first] & ours[second]]] = False
    pair = ~ours[first] & ~ours[second] & (first != second)
    one, two = has[first[pair]], has[second[pair]]
    heavier = (two > one) | ((two == one) & (second[pair] < first[pair]))
    lacking[first[pair][heavier]] = False
    return (
        np.concatenate([votes.item[ours], votes.item[lacking]]),
        np.concatenate([(best - has)[ours], (has - clear)[lacking]]),
    )


def noisy_or(item: np.ndarray, log_odds_wrong: np.ndarray, n_items: int) -> np.ndarray:
    """An item's −log P(every place on it is right), places independent: ranks as 1 − Π(1 − p), unsaturated
    (rounded as the analysis writes scores, so that sums equal but for float rounding tie)."""
    score = np.zeros(n_items)
    np.add.at(score, item, np.logaddexp(0, log_odds_wrong))
    return np.round(score, gold_errors.SCORE_DECIMALS)


def maximum(item: np.ndarray, score: np.ndarray, n_items: int) -> np.ndarray:
    found = np.zeros(n_items)
    np.maximum.at(found, item, np.maximum(score, 0))
    return np.round(found, gold_errors.SCORE_DECIMALS)


def variants(context: AuditContext, reference: str, mask: np.ndarray) -> dict[str, np.ndarray]:
    """The Dawid–Skene and noisy-OR variants tried (docs/gold-errors.md), as item scores."""
    n_items = context.counts.n_items
    votes = votes_of(context, reference, mask)
    found = {}
    for prior in ("global", "reference"):
        true, r, f = ds_two_coin(votes, prior)
        wrong = np.where(votes.ours, -true, true)
        found[f"DS two-coin, {prior} prior, noisy-OR"] = noisy_or(votes.item, wrong, n_items)
        found[f"DS two-coin, {prior} prior, max"] = maximum(votes.item, wrong, n_items)
        weight = logit(r) - logit(f)
        item, score = place_scores(votes, weight)
        found[f"candidates, DS-{prior} weights, max"] = maximum(item, score, n_items)
        found[f"candidates, DS-{prior} weights, noisy-OR"] = noisy_or(item, score, n_items)
    for prior in ("global", "reference"):
        item, right = ds_places(votes, prior)
        wrong = np.log(-np.expm1(np.minimum(right, -1e-300))) - right  # log-odds the reference's state is wrong
        found[f"DS places, {prior} prior, noisy-OR"] = noisy_or(item, wrong, n_items)
    return found


# --- more variants tried and not shipped (docs/gold-errors.md, "Beating the baseline at 200") ----------------


def majority_weigh(votes: Votes, sources: list[str], n_items: int) -> Callable[..., np.ndarray]:
    """Return a ``weigh`` for candidates_of: each source's log diagnostic odds ratio against the majority of the
    other sources (a span is in it when more than half of them have it) instead of against the reference, leave
    one item out as shipped; false candidates are the pool spans outside that majority."""
    total = votes.has.sum(axis=0)
    n_sources = len(votes.has)

    def weigh(counts, reference, source, mask, pool) -> np.ndarray:
        row = sources.index(source)  # the rows of votes.has
        has = votes.has[row]
        majority = (total - has) > (n_sources - 1) / 2
        tp = np.bincount(pool.item, has & majority, minlength=n_items)
        fp = np.bincount(pool.item, has & ~majority, minlength=n_items)
        spans = np.bincount(pool.item, majority, minlength=n_items)
        false = np.bincount(pool.item, ~majority, minlength=n_items)
        recall = (tp.sum() - tp + 1) / (spans.sum() - spans + 2)
        false_rate = (fp.sum() - fp + 1) / (false.sum() - false + 2)
        weight = logit(recall) - logit(false_rate)
        return np.where(mask & counts.has(source), weight, 0.0)[pool.item]

    return weigh


def typed_weigh(shrink: float, n_items: int) -> Callable[..., np.ndarray]:
    """Return a ``weigh`` for candidates_of: each source's recall and false-positive rate per type of the pool
    span, shrunk to its overall rates with the weight of ``shrink`` spans (a beta prior centred on them), leave one
    item out as shipped."""

    def weigh(counts, reference, source, mask, pool) -> np.ndarray:
        present = (mask & counts.has(source))[pool.item]
        mine = np.zeros(len(counts._strict_start), dtype=bool)
        mine[counts.ids("strict", source)] = True
        found = mine[pool.ids] & present
        kinds = counts._strict_type[pool.ids]

        def others(values: np.ndarray) -> np.ndarray:  # summed over the other items
            per_item = np.bincount(pool.item, values, minlength=n_items)
            return per_item.sum() - per_item

        spans, false = pool.ours & present, ~pool.ours & present
        recall = (others(found & spans) + 1) / (others(spans) + 2)
        false_rate = (others(found & false) + 1) / (others(false) + 2)
        weight = np.zeros(len(pool.ids))
        for kind in np.unique(kinds):
            of = kinds == kind
            r = (others(found & spans & of) + shrink * recall) / (others(spans & of) + shrink)
            f = (others(found & false & of) + shrink * false_rate) / (others(false & of) + shrink)
            weight[of] = (logit(r) - logit(f))[pool.item[of]]
        return np.where(present, weight, 0.0)

    return weigh


def more_variants(
    context: AuditContext, reference: str, mask: np.ndarray, baseline: np.ndarray, best: np.ndarray
) -> dict[str, np.ndarray]:
    """The variants tried against the baseline at 200 (docs/gold-errors.md), as item scores."""
    counts, n_items = context.counts, context.counts.n_items
    found = {"disagreeing systems, ties by the best candidate": baseline * 1000 + best}
    # a sentence-level one-coin vote: a source differing from the reference on the sentence weighs -logit of
    # how often it differs elsewhere (its false-alarm rate if the reference is mostly right), leave one out
    audited = mask & counts.has(reference)
    sentence = np.zeros(n_items)
    for output in context.config.roles.outputs:
        differs = (counts.has(output) & ~counts.equal(output, reference) & audited).astype(float)
        rate = (differs.sum() - differs + 1) / (audited.sum() - audited + 2)
        sentence += np.where(differs > 0, -logit(rate), 0)
    found["sentence one-coin vote"] = sentence
    found["sentence one-coin vote + best candidate"] = sentence + best
    votes = votes_of(context, reference, mask)
    weigh = majority_weigh(votes, gold_errors.sources_of(context, reference), n_items)
    found["candidates, weights against the others' majority"] = item_scores(
        gold_errors.candidates_of(context, reference, mask, weigh=weigh), n_items
    )
    for shrink in (10, 100):
        found[f"candidates, per-type weights shrunk ({shrink} spans)"] = item_scores(
            gold_errors.candidates_of(context, reference, mask, weigh=typed_weigh(shrink, n_items)), n_items
        )
    return found


# --- the reference's own consistency (docs/gold-errors.md, "The reference's own consistency"; not shipped) ------


def plain_string(text: str, start: int, end: int) -> str:
    """The string an occurrence covers."""
    return text[start:end]


def string_in_context(text: str, start: int, end: int) -> tuple[str, str, str]:
    """The string an occurrence covers with the whitespace-separated word either side (Dickinson & Meurers'
    variation n-grams: a string labelled differently in the same context)."""
    before, after = text[:start].split(), text[end:].split()
    return (before[-1] if before else "", text[start:end], after[0] if after else "")


def reference_elsewhere(
    counts: ItemCounts, texts: np.ndarray, pool: gold_errors.Pool, one: np.ndarray, two: np.ndarray, key=plain_string
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the source "the reference elsewhere" says at each pool span: (has the span, votes for nothing there,
    weight on the span's item, its state at the span's extent: a type code, len(type_names) for none, -1 when it
    abstains).

    An *occurrence* is a distinct extent (item, start, end) of a pool span on an item with text; its string is
    ``key`` of the text there (the text it covers). The reference's state at an occurrence is the type of its
    span with exactly that extent (the lowest type code if several), else none. On an item the source's state
    at an extent is the state the reference gives the extent's string most often at its occurrences on the
    *other* items; it abstains where the string occurs on no other item, or two states tie for most. It has the
    span (extent, type) where that state is a type, and votes for nothing at a pool span where its state at the
    span's extent is none and it has no span overlapping it. Its weight is the outputs' one (the log diagnostic
    odds ratio against the reference, leave one item out, add-one smoothed), counted over the pool spans where
    it does not abstain."""
    ids, item = pool.ids, pool.item
    n_types = len(counts.type_names)
    none = n_types
    start, end, kind = counts._strict_start[ids], counts._strict_end[ids], counts._strict_type[ids]
    new = np.ones(len(ids), dtype=bool)
    new[1:] = (item[1:] != item[:-1]) | (start[1:] != start[:-1]) | (end[1:] != end[:-1])
    extent = np.cumsum(new) - 1  # pool ids are (item, start, end, type) ordered: an extent's spans are adjacent
    first = np.flatnonzero(new)
    extent_item = item[first]
    found: dict = {}
    string = np.array(
        [
            -1 if texts[at] is None else found.setdefault(key(texts[at], low, high), len(found))
            for at, low, high in zip(extent_item.tolist(), start[first].tolist(), end[first].tolist())
        ],
        dtype=np.int64,
    )
    state = np.full(len(first), none, dtype=np.int64)
    np.minimum.at(state, extent[pool.ours], kind[pool.ours])
    choice = np.full(len(first), -1, dtype=np.int64)
    known = np.flatnonzero(string >= 0)
    if len(known):
        width, n_strings = n_types + 1, int(string.max()) + 1
        keys, key_index, key_count = np.unique(
            string[known] * width + state[known], return_inverse=True, return_counts=True
        )
        own_codes, own_count = np.unique(extent_item[known] * len(keys) + key_index, return_counts=True)
        groups, group_of = np.unique(extent_item[known] * n_strings + string[known], return_inverse=True)
        group_item, group_string = groups // n_strings, groups % n_strings
        # every (item, string) against each state its string has anywhere, less its own occurrences
        low = np.searchsorted(keys, group_string * width)
        sizes = np.searchsorted(keys, group_string * width + width) - low
        row_group = np.repeat(np.arange(len(groups)), sizes)
        row_key = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(low, sizes)
        code = group_item[row_group] * len(keys) + row_key
        at = np.minimum(np.searchsorted(own_codes, code), len(own_codes) - 1)
        elsewhere = key_count[row_key] - np.where(own_codes[at] == code, own_count[at], 0)
        order = np.lexsort((-elsewhere, row_group))
        lead = np.concatenate([[True], row_group[order][1:] != row_group[order][:-1]])
        top = order[lead]
        second = np.zeros(len(groups), dtype=np.int64)
        runner = np.flatnonzero(lead[:-1] & ~lead[1:]) + 1  # each group's second row, in order
        second[row_group[order][runner]] = elsewhere[order][runner]
        most = elsewhere[top]
        chosen = np.where((most > 0) & (most > second), keys[row_key[top]] % width, -1)
        choice[known] = chosen[group_of]
    said = choice[extent]
    informed = said >= 0
    has = informed & (said == kind)
    near = np.zeros(len(ids), dtype=bool)
    near[one[(informed & (said != none))[two]]] = True
    clear = informed & (said == none) & ~near
    tp, spans, fp, false = (
        np.bincount(item, flags, minlength=counts.n_items)
        for flags in (has & pool.ours, informed & pool.ours, has & ~pool.ours, informed & ~pool.ours)
    )
    recall = (tp.sum() - tp + 1) / (spans.sum() - spans + 2)
    false_rate = (fp.sum() - fp + 1) / (false.sum() - false + 2)
    return has, clear, (logit(recall) - logit(false_rate))[item], said


def elsewhere_source(key=plain_string) -> Callable[..., None]:
    """Return an ``extra`` for candidates_of: the reference elsewhere as one more source in the vote."""

    def extra(counts, table, pool, one, two, votes, empty) -> None:
        if table.text is not None:
            has, clear, weight, _ = reference_elsewhere(counts, table.text, pool, one, two, key)
            votes += np.where(has, weight, 0)
            empty += np.where(clear, weight, 0)

    return extra


def elsewhere_prior(key=plain_string) -> Callable[..., Callable[..., tuple[np.ndarray, np.ndarray]] | None]:
    """Return an ``extra`` for candidates_of: the reference elsewhere as a prior on each place's score, read at the
    place's own extent (the reference's span, or the missing span): its weight added where its state there is
    the proposal's (for a reference span: the proposed type at the same extent, or none for a removal or other
    boundaries), subtracted where it is the reference's; nothing where it abstains or says a third state."""

    def extra(counts, table, pool, one, two, votes, empty):
        if table.text is None:
            return None
        _, _, weight, said = reference_elsewhere(counts, table.text, pool, one, two, key)
        none = len(counts.type_names)
        ids, kind = pool.ids, counts._strict_type[pool.ids]

        def prior(spans: np.ndarray, proposal: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            rival = np.maximum(proposal, 0)
            same = (
                (proposal >= 0)
                & (counts._strict_start[ids[rival]] == counts._strict_start[ids[spans]])
                & (counts._strict_end[ids[rival]] == counts._strict_end[ids[spans]])
            )
            offered = np.where(same, kind[rival], none)
            for_spans = (said[spans] == offered).astype(float) - (said[spans] == kind[spans])
            for_missing = (said[missing] == kind[missing]).astype(float) - (said[missing] == none)
            return for_spans * weight[spans], for_missing * weight[missing]

        return prior

    return extra


def consistency_variants(context: AuditContext, reference: str, mask: np.ndarray) -> dict[str, np.ndarray]:
    """The reference's own consistency folded in (docs/gold-errors.md), as item scores."""
    n_items = context.counts.n_items
    found = {}
    for label, extra in (
        ("the reference elsewhere, a source", elsewhere_source()),
        ("the reference elsewhere, a prior", elsewhere_prior()),
        ("the same in context, a source", elsewhere_source(string_in_context)),
        ("the same in context, a prior", elsewhere_prior(string_in_context)),
    ):
        found[label] = item_scores(gold_errors.candidates_of(context, reference, mask, extra=extra), n_items)
    return found


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
    print(
        f"CoNLL: load {loaded - started:.1f} s, candidates {ranked - loaded:.2f} s; {candidates.n} candidates "
        f"in original on {len(np.unique(candidates.item))} sentences"
    )
    flat = gold_errors.candidates_of(context, "original", mask, equal_weights=True)
    scores = {
        "disagreeing systems (baseline)": disagreeing(context, "original", context.config.roles.outputs),
        "candidates, equal weights": item_scores(flat, counts.n_items),
        "candidates, leave-one-out (max)": item_scores(candidates, counts.n_items),
        "candidates, leave-one-out (sum)": item_scores(candidates, counts.n_items, "sum"),
        "candidates, leave-one-out (noisy-OR)": noisy_or(candidates.item, candidates.score, counts.n_items),
        **variants(context, "original", mask),
    }
    report("CoNLL-2003 original vs CoNLL++", scores, truth, mask)
    more = more_variants(
        context, "original", mask, scores["disagreeing systems (baseline)"], scores["candidates, leave-one-out (max)"]
    )
    report("CoNLL-2003: more variants against the baseline at 200", more, truth, mask)
    started = time.perf_counter()
    consistent = consistency_variants(context, "original", mask)
    spent = time.perf_counter() - started
    report(
        f"CoNLL-2003: the reference's own consistency ({spent:.2f} s for the four)",
        {"disagreeing systems (baseline)": scores["disagreeing systems (baseline)"], **consistent},
        truth,
        mask,
    )

    crowd = context_of(ROOT / "examples" / "crowd-conll" / "refsens.toml")
    test_texts = set(context.record.table.text.tolist())
    shared = {text for text in crowd.record.table.text.tolist() if text in test_texts}
    print(
        f"\ncrowd sentences whose text is a CoNLL test sentence: {len(shared)} distinct texts of "
        f"{crowd.record.table.n_items} sentences"
    )
    mask = crowd.subsets.audited
    found = gold_errors.candidates_of(crowd, "majority", mask)
    flat = gold_errors.candidates_of(crowd, "majority", mask, equal_weights=True)
    truth = ~crowd.counts.equal("majority", "gold")
    scores = {
        "disagreeing passes (baseline)": disagreeing(crowd, "majority", crowd.config.roles.outputs),
        "candidates, equal weights": item_scores(flat, crowd.counts.n_items),
        "candidates, leave-one-out (max)": item_scores(found, crowd.counts.n_items),
        "candidates, leave-one-out (sum)": item_scores(found, crowd.counts.n_items, "sum"),
        **consistency_variants(crowd, "majority", mask),
    }
    report("crowd: majority vs expert gold (outputs pass_1, pass_2)", scores, truth, mask)

    default = context_of(ROOT / "examples" / "conll2003" / "refsens.toml", "outputs+references")
    started = time.perf_counter()
    written = files_text(gold_errors.files(default))
    summary = gold_errors.summary(default)
    spent = time.perf_counter() - started
    print(
        f"\nCoNLL, default evidence: {spent:.2f} s for the candidates of {len(summary['references'])} references, "
        f"the files ({sum(len(text) for text in written.values()) / 1e6:.1f} MB) and the summary; candidates: "
        + ", ".join(f"{r['reference']} {r['candidates']}" for r in summary["references"])
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
