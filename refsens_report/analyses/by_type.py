"""Per-type results: which span types carry the movement when the reference changes.

Statistics (audited items, for every configured rule that keeps types: strict, overlap): the F1 of one span
type, F1_t(O, R), for every output O and reference R ≠ O (``score``), and the paired delta
F1_t(O, Rᵢ) − F1_t(O, Rⱼ) for every pair of references (``delta``), per language and pooled, each row naming
its ``type``. The counts are the per-item counts split by type (``ItemCounts.typed``: one pass over the spans
whatever the number of types), estimated type block by type block on the first min(B, TYPE_RESAMPLES)
replicates of the swap's own draws, so every per-type delta is paired with the swap replicate by replicate and
memory stays bounded with a thousand types. The report shows the types that move most and sums the rest as
"other"; the table's CSV holds every type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import DIFFERENCES, Analysis, AuditContext, Estimate, Rows, Section, Stat, section
from refsens_report.analyses.type_confusion import shown_type
from refsens_report.bootstrap import AUTO_MIN_RESAMPLES
from refsens_report.counts import DENSE_CELLS, MANY_TYPES, RULE_NAMES, Column
from refsens_report.estimator import BLOCK_VALUES, Estimator, Listed
from refsens_report.figures import Figure
from refsens_report.formulas import F1
from refsens_report.prose import count_phrase, said
from refsens_report.record import POOLED
from refsens_report.tables import PAGE_ROWS, Cell, Table, count_cell, label, mark_repeats, stat_cell
from refsens_report.view import SCALE_OUTPUTS, ResultsView, Row

TYPED_RULES = ("strict", "overlap")  # the rules that compare types (relaxed ignores them)
# Per-type rows use the first replicates of the swap's draws, at most this many: the Holm floor that can raise
# B concerns the interaction's family, and the per-type rows (types x outputs x references of them) are not
# Holm-tested; 2,000 replicates give their percentile intervals, at a cost linear in the number of types.
TYPE_RESAMPLES = AUTO_MIN_RESAMPLES
TOP_TYPES = 10  # types a table or sentence names per pair of references, at most; the others are "other"
RARE_NAMED = 10  # types too rare to say a caption names per pair of references, at most; the CSV has them all
TOO_RARE = "too rare to say"  # a type with fewer than [report] min_type_spans spans under a compared reference
NAMED_IN_SENTENCE = 3


# --- the statistics --------------------------------------------------------------------------------


def typed_rules(rules: tuple[str, ...] | list[str]) -> list[str]:
    """Return the configured rules that keep types, in the rules' order."""
    return [rule for rule in RULE_NAMES if rule in rules and rule in TYPED_RULES]


def scored_types(context: AuditContext, mask: np.ndarray) -> np.ndarray:
    """Return the codes of the types with a span in some output or reference on the masked items (sorted)."""
    return np.flatnonzero(_type_items(context, mask))


def _type_items(context: AuditContext, mask: np.ndarray) -> np.ndarray:
    """Return per type code the items of ``mask`` having a span of that type, summed over the outputs and
    references (an item counted once per labelling having the type there; ``typed_items``). Computed once per
    item set; a partitioned record's outputs, whose spans the client does not hold, where their spans are."""
    counts, roles = context.counts, context.config.roles
    known = context.notes.get("by_type:items")
    if known is not None and known[0] is mask:
        return known[1]
    every = list(dict.fromkeys(roles.outputs + roles.references))
    found = typed_items(counts, [name for name in every if name not in counts.unheld], mask)
    away = [name for name in every if name in counts.unheld]
    if away:  # counted on each partition, by type name
        for part in context.engine.each_partition(partition_type_items, counts.table.ids, [mask], away):
            for name, number in part.items():
                found[counts.type_code(name)] += number
    context.notes["by_type:items"] = (mask, found)
    return found


def typed_items(counts: Any, names: list[str], mask: np.ndarray) -> np.ndarray:
    """Return per type code the items of ``mask`` having a span of that type, summed over the labellings
    ``names``: read off each labelling's strict spans (an (item, type) cell marked once, however many spans it
    holds), as the nonzero cells of ``ItemCounts.typed``'s size triples count them, without making the triples."""
    n_types = max(len(counts.type_names), 1)
    found = np.zeros(n_types, dtype=np.int64)
    if counts.n_items * n_types > DENSE_CELLS:  # too many cells to mark: the triples
        for name in names:
            items, kinds, _ = counts.typed("size", "strict", name)
            np.add.at(found, kinds[mask[items]], 1)
        return found
    marked = np.zeros(counts.n_items * n_types, dtype=bool)
    for name in names:
        items, kinds = _masked_spans(counts, name, mask)
        cells = items.astype(np.int64) * n_types + kinds
        marked[cells] = True
        found += marked.reshape(-1, n_types).sum(axis=0)
        marked[cells] = False
    return found


def partition_type_items(counts: Any, first: int, mask: np.ndarray, names: list[str]) -> dict[str, int]:
    """Return ``typed_items`` of a partition's items (on its Dask worker), by type name."""
    found = typed_items(counts, names, mask)
    return {str(counts.type_names[code]): int(found[code]) for code in np.flatnonzero(found)}


def _masked_spans(counts: Any, name: str, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the item and type code of each of a labelling's strict spans on the items of ``mask``."""
    ids = counts.ids("strict", name)
    items = counts.item_of("strict", ids)
    keep = mask[items]
    return items[keep], counts._strict_type[ids[keep]]


def families(context: AuditContext, rules: list[str]) -> list[Column]:
    """Return the untyped count columns every per-type F1 needs: TP per output and reference, sizes per labelling."""
    roles = context.config.roles
    columns: list[Column] = []
    for rule in rules:
        for output in roles.outputs:
            columns += [
                column
                for reference in roles.references
                if reference != output
                for column in F1(rule, output, reference).columns()
            ]
    return list(dict.fromkeys(columns))


def statistics(context: AuditContext, rules: list[str], types: list[str]) -> list[Stat]:
    """Each output's F1 per type against each reference, and the paired difference between references."""
    references = context.config.roles.references
    stats: list[Stat] = []
    for rule in rules:
        for kind in types:
            for output in context.config.roles.outputs:
                others = [reference for reference in references if reference != output]
                for reference in others:
                    stats.append(
                        Stat(
                            "by_type",
                            "score",
                            F1(rule, output, reference, kind),
                            rule,
                            output,
                            reference=reference,
                            type=kind,
                        )
                    )
                for first, second in combinations(others, 2):
                    delta = F1(rule, output, first, kind) - F1(rule, output, second, kind)
                    stats.append(
                        Stat("by_type", "delta", delta, rule, output, reference=first, reference_2=second, type=kind)
                    )
    return stats


# The count matrix of one block of types holds small integers (one byte each, typically: counts.typed_matrix),
# so it may hold more values than the bootstrap sums (float64): every type of an ordinary record then fits in
# one block, drawn once (a million items x 104 count columns x 4 types: 0.4 GB).
MATRIX_VALUES = 1 << 29


def type_blocks(
    context: AuditContext, codes: np.ndarray, n_families: int, groups: int, resamples: int, mask: np.ndarray
) -> list[np.ndarray]:
    """Split the type codes into blocks whose bootstrap sums stay within BLOCK_VALUES, count matrix MATRIX_VALUES.

    A block's sums hold groups x (resamples + 1) x families x types values; its matrix, the items having any
    of its types (at most the sum of each type's items) x families x types.
    """
    counts = context.counts
    items_with = _type_items(context, mask)  # an upper bound: an item counted once per labelling
    blocks: list[list[int]] = [[]]
    listed, at_most = 0, counts.n_items  # a block's matrix lists at most every item
    sparse = len(codes) > MANY_TYPES  # a sparse matrix holds each item's counts of its own types only
    for code in codes:
        width = n_families * (len(blocks[-1]) + 1)
        held = (listed + items_with[code]) * n_families if sparse else min(listed + items_with[code], at_most) * width
        if blocks[-1] and (groups * (resamples + 1) * width > BLOCK_VALUES or held > MATRIX_VALUES):
            blocks.append([])
            listed = 0
        blocks[-1].append(int(code))
        listed += int(items_with[code])
    return [np.array(block, dtype=np.int64) for block in blocks if block]


def many_types(blocks: list[np.ndarray]) -> bool:
    """Return whether the per-type count matrices are sparse: above MANY_TYPES types (the sums are the same)."""
    return sum(len(block) for block in blocks) > MANY_TYPES


def plan(context: AuditContext) -> tuple[list[str], list[Column], list[np.ndarray], int] | None:
    """Return (rules, count families, blocks of type codes, replicates), or None when nothing is scored by type."""
    config, mask = context.config, context.subsets.audited
    rules = typed_rules(config.audit.rules)
    if not rules or mask is None or not mask.any():
        return None
    codes = scored_types(context, mask)
    resamples = min(int(config.audit.resamples), TYPE_RESAMPLES)
    needed = families(context, rules)
    groups = len(np.unique(context.record.table.language[mask])) + 1
    return rules, needed, type_blocks(context, codes, len(needed), groups, resamples, mask), resamples


def estimates(context: AuditContext) -> list[Estimate]:
    """The per-type count matrices, drawn with the swap's stream (same items): one draw for both.

    Each column is named (family f's count of type k), so the stream's untyped counts can be summed from these,
    and a dense matrix is built only where the client draws it (``Listed.build``): a partitioned record's
    workers compute its columns instead. A sparse one (many types) is built here.
    """
    planned = plan(context)
    if planned is None:
        return []
    _, needed, blocks, resamples = planned
    sparse, counts = many_types(blocks), context.counts
    listed = tuple(
        Listed(
            f"by_type:{number}",
            *(counts.typed_matrix(needed, block, sparse) if sparse else (None, None)),
            resamples,
            tuple(replace(family, type=str(counts.type_names[code])) for family in needed for code in block),
            None if sparse else partial(counts.typed_matrix, needed, block),
        )
        for number, block in enumerate(blocks)
    )
    return [Estimate([], context.subsets.audited, "audited", "audited", listed)]


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """Per-type scores and deltas on the audited items, block by block of types, on the swap's draws."""
    planned = plan(context)
    if planned is None:
        return []
    rules, needed, blocks, resamples = planned
    mask = context.subsets.audited
    found: Rows = []
    for number, block in enumerate(blocks):
        names = [str(context.counts.type_names[code]) for code in block]
        columns = [replace(family, type=name) for family in needed for name in names]
        key = f"by_type:{number}"
        items, values = (
            (None, None) if estimator.drawn(key) else context.counts.typed_matrix(needed, block, many_types(blocks))
        )
        found += estimator.estimate_listed(
            statistics(context, rules, names), columns, items, values, mask, "audited", "audited", resamples, key=key
        )
    position = {name: index for index, name in enumerate(context.counts.type_names)}
    found.sort(key=lambda row: (RULE_NAMES.index(row["rule"]), position[row["type"]]))  # stable: blocks in order
    context.notes["by_type"] = {
        "rules": rules,
        "types": [str(context.counts.type_names[code]) for code in np.concatenate(blocks)] if blocks else [],
        "resamples": resamples,
        "spans": span_counts(context, mask, np.concatenate(blocks) if blocks else np.array([], dtype=np.int64)),
    }
    return found


def span_counts(context: AuditContext, mask: np.ndarray, codes: np.ndarray) -> dict[str, dict[str, dict[str, int]]]:
    """Return the spans of each type in each reference on the masked items: reference -> language -> type -> n.

    Per language (sorted) and pooled; the report says per-type results only for types with enough of them
    (``[report] min_type_spans``).
    """
    counts, table = context.counts, context.record.table
    names = [str(counts.type_names[code]) for code in sorted(codes)]
    languages = sorted({table.languages[code] for code in np.unique(table.language[mask])})
    spans: dict[str, dict[str, dict[str, int]]] = {}
    n_types = max(len(counts.type_names), 1)
    for reference in context.config.roles.references:
        items, kinds = _masked_spans(counts, reference, mask)  # a span each: its (item, type) cell's count summed
        per = np.bincount(
            table.language[items].astype(np.int64) * n_types + kinds, minlength=len(table.languages) * n_types
        ).reshape(len(table.languages), n_types)
        position = {name: index for index, name in enumerate(counts.type_names)}
        spans[reference] = {
            **{
                language: {name: int(per[table.languages.index(language), position[name]]) for name in names}
                for language in languages
            },
            POOLED: {name: int(per[:, position[name]].sum()) for name in names},
        }
    return spans


def summary(context: AuditContext) -> dict[str, Any] | None:
    """results.json "by_type": the rules and types with per-type rows, and the replicates they were read from."""
    return context.notes.get("by_type")


def applicability(context: AuditContext) -> dict[str, str | None]:
    if not typed_rules(context.config.audit.rules):
        return {
            "by_type": "Per-type results need a rule that compares types (strict or overlap); the audit "
            "ran under relaxed only, which ignores them."
        }
    return {"by_type": None}


# --- the report ------------------------------------------------------------------------------------


def main_typed_rule(view: ResultsView) -> str | None:
    """Return the rule per-type results are reported under: strict when computed, else overlap, else None."""
    rules = typed_rules(view.rules)
    return rules[0] if rules else None


def _decided(row: Row) -> bool:
    return row["estimate"] is not None and formatting.excludes_zero(row["ci_low"], row["ci_high"])


def _largest(rows: list[Row]) -> Row | None:
    """Return the row with the largest |estimate| (the first of equals), or None."""
    defined = [row for row in rows if row["estimate"] is not None]
    return max(defined, key=lambda row: abs(row["estimate"])) if defined else None


def min_spans(view: ResultsView) -> int:
    """Return the spans of a type each compared reference needs before the report says anything about it."""
    return int(view.settings.report.min_type_spans)


def spans(view: ResultsView, reference: str, name: str, language: str = POOLED) -> int | None:
    """Return the spans of type ``name`` under ``reference`` on the audited items, None when not recorded."""
    recorded = (view.data.get("by_type") or {}).get("spans")
    return None if recorded is None else recorded.get(reference, {}).get(language, {}).get(name, 0)


def has_spans(view: ResultsView) -> bool:
    """Return whether results.json records the spans per type (results written before it did not)."""
    return (view.data.get("by_type") or {}).get("spans") is not None


def supported(view: ResultsView, name: str, references: tuple[str, ...], language: str = POOLED) -> bool:
    """Return whether every reference holds at least min_spans spans of the type (True when not recorded)."""
    found = [spans(view, reference, name, language) for reference in references]
    return all(count is None or count >= min_spans(view) for count in found)


def support_phrase(view: ResultsView, references: tuple[str, ...]) -> str:
    """Return the threshold a per-type statement meets, as said beside it: 'at least 30 spans under A and B'."""
    under = " and ".join(references) if len(references) <= 2 else "both references compared"
    return f"at least {formatting.counted(min_spans(view), 'span')} under {under}"


class Movers:
    """One pair of references' per-type deltas under one rule: types ordered by how much they move.

    Only types with at least min_spans spans under both references (pooled) are ranked; the others are
    ``rare``, too rare to say. A type moves for an output when its pooled delta's interval excludes zero.
    Types are ordered by their largest such |delta| (types that move for no output after, by their largest
    |delta|), then by name.
    """

    def __init__(self, view: ResultsView, rule: str, first: str, second: str):
        self.view, self.rule, self.first, self.second = view, rule, first, second
        self.by_type: dict[str, dict[str, list[Row]]] = {}  # type -> language -> rows (one per output)
        self.index: dict[int, int] = {}  # id(row) -> its index in the results, for the cells that print it
        for index, row in view.rows.select("by_type", "delta", rule=rule, reference=first, reference_2=second):
            self.by_type.setdefault(row["type"], {}).setdefault(row["language"], []).append(row)
            self.index[id(row)] = index
        self.rare = sorted(name for name in self.by_type if not supported(view, name, (first, second)))
        for name in self.rare:
            del self.by_type[name]

        def moving_first(name: str) -> tuple:
            pooled = self.pooled(name)
            decided, largest = _largest([row for row in pooled if _decided(row)]), _largest(pooled)
            return (
                decided is None,
                -abs(decided["estimate"]) if decided else 0.0,
                -abs(largest["estimate"]) if largest else 0.0,
                name,
            )

        self.types = sorted(self.by_type, key=moving_first)

    def pooled(self, name: str) -> list[Row]:
        return self.by_type.get(name, {}).get(POOLED, [])

    def rows(self, name: str, language: str = POOLED) -> list[Row]:
        return self.by_type.get(name, {}).get(language, [])

    def moving(self, name: str, language: str = POOLED) -> list[Row]:
        return [row for row in self.rows(name, language) if _decided(row)]

    def span_cells(self, name: str | list[str], language: str = POOLED) -> list[Cell]:
        """Return the spans of a type (or the sum over types) under the pair's references, [] when not recorded."""
        if not has_spans(self.view):
            return []
        names = [name] if isinstance(name, str) else name
        return [
            count_cell(sum(spans(self.view, reference, kind, language) or 0 for kind in names))
            for reference in (self.first, self.second)
        ]

    def rare_phrase(self, limit: int = RARE_NAMED) -> str:
        """Return the types too rare to say, with their spans under both references: '' when there are none."""
        if not self.rare:
            return ""
        named = [
            f"{name} ({formatting.count(spans(self.view, self.first, name))} / "
            f"{formatting.count(spans(self.view, self.second, name))})"
            for name in self.rare[:limit]
        ]
        more = len(self.rare) - len(named)
        return (
            f"{formatting.counted(len(self.rare), 'type')} {TOO_RARE} under {self.first} vs {self.second} "
            f"(fewer than {formatting.counted(min_spans(self.view), 'span')} under one of them; spans under "
            f"{self.first} / {self.second}): {', '.join(named)}"
            + (f" and {more} more (every type's rows are in results.csv)" if more else "")
        )

    def cell(self, row: Row | None) -> Cell:
        """Return a row's estimate and interval as a cell that keeps its results row."""
        return stat_cell(None if row is None else (self.index[id(row)], row))

    def top(self, limit: int = TOP_TYPES) -> tuple[list[str], list[str]]:
        """Return (the types shown, the others): at most ``limit`` shown, or every type when one more fits."""
        if len(self.types) <= limit + 1:
            return self.types, []
        return self.types[:limit], self.types[limit:]


def pairs(view: ResultsView) -> list[tuple[str, str]]:
    """Return the pairs of references reported: the primary against each alternative."""
    return [(view.primary, alternative) for alternative in view.references[1:]]


def _other_label(hidden: int) -> str:
    return f"other ({formatting.counted(hidden, 'type')})"


def movers_table(view: ResultsView, rule: str) -> Table:
    """The types that move most per pair of references (primary vs each alternative), per language and pooled."""
    few = len(view.outputs) <= SCALE_OUTPUTS
    outputs = view.outputs
    table_rows: list[list[Cell]] = []
    # as many types as fit the page with their language rows (one language prints its pooled rows only) and
    # "other"; beyond 3 types a page shows its first rows and the CSV the rest (tables.for_the_page)
    per_type = 1 if len(view.languages) == 2 else len(view.languages)
    limit = max(3, min(TOP_TYPES, (PAGE_ROWS // max(1, len(pairs(view))) - 1) // per_type))
    hidden_types = 0
    rare: list[str] = []
    for first, second in pairs(view):
        movers = Movers(view, rule, first, second)
        rare += [phrase] if (phrase := movers.rare_phrase()) else []
        shown, others = movers.top(limit)
        hidden_types = max(hidden_types, len(others))
        for name in shown:
            for language in view.languages:
                rows = movers.rows(name, language)
                if not rows:
                    continue
                cells = [
                    label(f"{first} vs {second}"),
                    label(shown_type(name)),
                    label(language),
                    *movers.span_cells(name, language),
                ]
                if few:
                    by_output = {row["output"]: row for row in rows}
                    cells += [movers.cell(by_output.get(output)) for output in outputs]
                else:
                    largest = _largest(movers.moving(name, language)) or _largest(rows)
                    cells += [
                        label(largest["output"] if largest else formatting.UNDEFINED),
                        movers.cell(largest),
                        count_cell(len(movers.moving(name, language))),
                    ]
                table_rows.append(cells)
        if others:
            rest = [row for name in others for row in movers.pooled(name)]
            cells = [
                label(f"{first} vs {second}"),
                label(_other_label(len(others))),
                label(POOLED),
                *movers.span_cells(others),
            ]
            if few:
                for output in outputs:
                    mine = [row for row in rest if row["output"] == output]
                    cells.append(count_cell(sum(_decided(row) for row in mine)))
            else:
                largest = _largest([row for row in rest if _decided(row)]) or _largest(rest)
                cells += [
                    label(f"{largest['output']} ({shown_type(largest['type'])})" if largest else formatting.UNDEFINED),
                    movers.cell(largest),
                    count_cell(sum(_decided(row) for row in rest)),
                ]
            table_rows.append(cells)
    delta = f"Δ [{view.confidence_label}]"
    columns = ["References", "Type", "Language"]
    if has_spans(view):
        alternative = view.references[1] if len(pairs(view)) == 1 else "alternative"
        columns += [f"Spans {view.primary}", f"Spans {alternative}"]
    columns += [f"{output}: {delta}" for output in outputs] if few else ["Output", f"Largest {delta}", "Outputs moving"]
    resamples = (view.data.get("by_type") or {}).get("resamples")
    replicates = f" on the first {formatting.count(resamples)} replicates of the swap's draws" if resamples else ""
    caption = (
        f"Per-type swap deltas ({rule}): an output's F1 on the spans of one type against the primary reference "
        f"minus its F1 on that type against the alternative, on the audited subset "
        f"({view.items_phrase('audited')} pooled), with paired bootstrap intervals{replicates}. "
        + (
            f"Spans: the spans of the type under each of the two references on those items. Only types with "
            f"{support_phrase(view, ('the primary', 'the alternative'))} (pooled; [report] min_type_spans) are "
            "ranked; a row per language prints that "
            "language's spans. "
            if has_spans(view)
            else ""
        )
        + "Types in order of how much they move: the largest |Δ| whose interval excludes zero. "
        + (
            "Bold marks intervals excluding zero."
            if few
            else f"Outputs moving: how many of the {len(outputs)} outputs have a Δ whose interval excludes zero; the "
            "largest Δ shown is theirs when there is one, otherwise the largest of all, with its output."
        )
    )
    if hidden_types:
        caption += (
            f" Beyond the {limit} types that move most, the 'other' row sums the rest, pooled: "
            + (
                "per output, how many of their deltas exclude zero"
                if few
                else "the largest Δ with its output and type, and how many of their deltas exclude zero"
            )
            + "."
        )
    if rare:
        caption += " " + "; ".join(rare) + "."
    caption += (
        f" The table's CSV holds every one of the {formatting.counted(len(types_of(view)), 'type')}: each "
        "output's F1 on it against every reference and every Δ, per language and pooled"
        + (", with its spans under each reference." if has_spans(view) else ".")
    )
    return Table(
        key="by-type",
        title="Types that move most with the reference",
        caption=caption,
        columns=tuple(columns),
        rows=mark_repeats(table_rows, 2),
        csv=full_table(view),
    )


def types_of(view: ResultsView) -> list[str]:
    """Return the span types with per-type rows, sorted."""
    return sorted(
        {row["type"] for statistic in ("score", "delta") for _, row in view.rows.select("by_type", statistic)}
    )


def full_table(view: ResultsView) -> Table:
    """Every per-type row: each rule, language, type and output, its F1 against each reference and every Δ."""
    references, reference_pairs = view.references, view.reference_pairs()
    table_rows = []
    for rule in typed_rules(view.rules):
        for name in types_of(view):
            for language in view.languages:
                for output in view.outputs:
                    where = {"rule": rule, "language": language, "output": output, "type": name}
                    cells = [label(rule), label(language), label(name), label(output)]
                    cells += [
                        count_cell(spans(view, reference, name, language))
                        for reference in references
                        if has_spans(view)
                    ]
                    cells += [
                        stat_cell(view.rows.one("by_type", "score", reference=reference, **where))
                        for reference in references
                    ]
                    cells += [
                        stat_cell(view.rows.one("by_type", "delta", reference=first, reference_2=second, **where))
                        for first, second in reference_pairs
                    ]
                    if any(cell.row is not None for cell in cells):
                        table_rows.append(cells)
    columns = [
        "Rule",
        "Language",
        "Type",
        "Output",
        *(f"Spans {reference}" for reference in references if has_spans(view)),
        *(f"F1 vs {reference}" for reference in references),
        *(f"Δ {first}−{second}" for first, second in reference_pairs),
    ]
    return Table(key="by-type", title="", caption="", columns=tuple(columns), rows=tuple(tuple(r) for r in table_rows))


def pair_sentence(view: ResultsView, rule: str, first: str, second: str) -> str:
    """Return which types move under ``second`` instead of ``first``: the types that move most, with intervals."""
    movers = Movers(view, rule, first, second)
    if not movers.types and not movers.rare:
        return ""
    moving = [name for name in movers.types if movers.moving(name)]
    where = f"Under {second} instead of {first} ({rule}, pooled; Δ = F1 against {first} − F1 against {second})"
    support = f" with {support_phrase(view, (first, second))}" if has_spans(view) else ""
    listed = "the table's caption lists them" if len(movers.rare) > 1 else "the table's caption lists it"
    rare = (
        f" {formatting.counted(len(movers.rare), 'more type')} {formatting.verb(len(movers.rare), 'is', 'are')} "
        f"{TOO_RARE} ({listed})."
        if movers.rare
        else ""
    )
    if not movers.types:  # no row in the table: the types are listed here
        return f"{where}, no type has {support_phrase(view, (first, second))}: {movers.rare_phrase()}."
    if not moving:
        return (
            f"{where}, no type's delta has an interval excluding zero for any output "
            f"({formatting.counted(len(movers.types), 'type')}{support}).{rare}"
        )
    named = []
    for name in moving[:NAMED_IN_SENTENCE]:
        largest = _largest(movers.moving(name))
        named.append(
            f"{name} ({largest['output']} {said(largest)}; "
            f"{count_phrase(len(movers.moving(name)), len(movers.pooled(name)), 'output')})"
        )
    rest = len(moving) - len(named)
    return (
        f"{where}, {count_phrase(len(moving), len(movers.types), 'type')}{support} "
        f"{formatting.verb_of(len(moving), len(movers.types), 'moves', 'move')} for at least one output (an interval "
        "excluding zero); "
        f"most: {'; then '.join(named)}" + (f"; {rest} more in the table." if rest else ".") + rare
    )


def headlines(view: ResultsView) -> list[str]:
    """The type moving most under each alternative reference (largest |delta| whose interval excludes zero)."""
    rule = main_typed_rule(view)
    if rule is None:
        return []
    parts = []
    for first, second in pairs(view):
        movers = Movers(view, rule, first, second)
        moving = [name for name in movers.types if movers.moving(name)]
        if moving:
            largest = _largest(movers.moving(moving[0]))
            parts.append(f"{moving[0]} under {second} ({largest['output']} {said(largest)} F1 points)")
    if not parts:
        return []
    support = f"; types with {support_phrase(view, tuple(view.references))}" if has_spans(view) else ""
    return [
        f"By span type ({rule}, pooled{support}), the type that moves most when {view.primary} is exchanged "
        f"(the largest |Δ| whose interval excludes zero) is {'; '.join(parts)}."
    ]


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    rule = main_typed_rule(view)
    applies = rule is not None and view.rows.has("by_type", "delta")
    if not applies:
        # one reference: per-type scores but no delta; printed (the page's share, the CSV every row) under the reason
        reason = view.applicability("by_type") or view.applicability("swap")
        scores = view.rows.has("by_type", "score")
        table = replace(
            full_table(view),
            title="Each output's F1 per span type",
            caption=(
                "Each output's F1 on the spans of one type against each reference, on the audited subset "
                f"({view.items_phrase('audited')} pooled), with bootstrap intervals."
            ),
        )
        return Section(
            key=ANALYSIS.key,
            number=0,
            title=ANALYSIS.title,
            paragraphs=(ANALYSIS.question,) if scores else (),
            tables=(table,) if scores else (),
            not_applicable=reason or "This analysis produced no results for this record.",
        )
    sentences = [sentence for first, second in pairs(view) if (sentence := pair_sentence(view, rule, first, second))]
    table = movers_table(view, rule)
    return section(ANALYSIS, view, drawn, True, tables=[table] if table.rows else [], extra=sentences)


ANALYSIS = Analysis(
    statistics=DIFFERENCES,
    key="by_type",
    title="Movement by span type",
    question="Which span types carry the movement when the reference changes?",
    methods="""- **By type** (audited; every rule that compares types: strict, overlap): score F1ₜ(O, R) on the
  spans of type t alone (its TP, |O| and |R|), and delta F1ₜ(O, Rᵢ) − F1ₜ(O, Rⱼ) for references i < j. Summed
  over the types, the per-type TP, FP and FN are the pooled ones. Intervals from the first min(B, 2,000)
  replicates of the swap's own draws (paired with it replicate by replicate). The report names the types
  that move most: those with the largest |delta| whose interval excludes zero.""",
    estimates=estimates,
    finish=finish,
    applicability=applicability,
    summary=summary,
    section=_section,
    headlines=headlines,
)
