"""Table models built from results.json rows, and their CSV and LaTeX (booktabs) writers.

Every number cell keeps the index of the results row it prints (``Cell.row``), so the site can say, and the
tests can check, which line of results.csv each printed number comes from.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Mapping, Sequence

from refsens_report import formatting
from refsens_report.formatting import ResultsRows, count, format_row, p_value

POOLED = "pooled"


@dataclass(frozen=True)
class Cell:
    """One table cell: display text, optional interval, and the results row it formats (None for labels)."""

    text: str = ""
    interval: str = ""
    bold: bool = False
    numeric: bool = False
    row: int | None = None  # index into results.json "rows" (= results.csv data line - 1)
    field: str = ""  # which column of that row is printed: estimate (with interval), p_holm, p_value, n_items
    repeated: bool = False  # a label equal to the one above: blank on the page, kept in the CSV

    @property
    def full_text(self) -> str:
        """Return estimate and interval as one string (CSV, tests)."""
        return f"{self.text} {self.interval}" if self.interval else self.text


@dataclass(frozen=True)
class Table:
    """A numbered table: column headers (with an optional band of group headers), rows of cells, caption."""

    key: str
    title: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    groups: tuple[tuple[str, int], ...] = ()  # (label, columns spanned) above ``columns``; "" spans nothing
    notes: tuple[str, ...] = ()
    number: int = 0
    widths: tuple[int, ...] = ()  # % of the table width for the leading columns (long layouts); the rest share


    @property
    def slug(self) -> str:
        """Return the file stem for this table's downloads, e.g. ``table-3-swap``."""
        return f"table-{self.number}-{self.key}"

    @property
    def anchor(self) -> str:
        """Return the HTML id of the table."""
        return f"table-{self.key}"

    @property
    def numeric_columns(self) -> tuple[bool, ...]:
        """Return, per column, whether it holds numbers (right-aligned)."""
        return tuple(any(row[i].numeric for row in self.rows) for i in range(len(self.columns)))


def number_tables(tables: Sequence[Table], start: int = 1) -> list[Table]:
    """Return the tables numbered in order."""
    return [replace(table, number=start + offset) for offset, table in enumerate(tables)]


# --- cells -----------------------------------------------------------------------------------------


def label(text: str) -> Cell:
    """Return a text label cell."""
    return Cell(text=text)


def stat_cell(found: tuple[int, Mapping[str, Any]] | None) -> Cell:
    """Return the estimate and interval of a results row, or '—' when the row does not exist."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    printed = format_row(row)
    return Cell(
        text=printed.estimate,
        interval=printed.interval,
        bold=printed.bold,
        numeric=True,
        row=index,
        field="estimate",
    )


def p_cell(found: tuple[int, Mapping[str, Any]] | None, column: str) -> Cell:
    """Return a row's p-value column (``p_holm`` or ``p_value``) as printed."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=p_value(row[column]), numeric=True, row=index, field=column)


def n_cell(found: tuple[int, Mapping[str, Any]] | None) -> Cell:
    """Return the number of items a results row was computed on."""
    if found is None:
        return Cell(text=formatting.UNDEFINED, numeric=True)
    index, row = found
    return Cell(text=count(row["n_items"]), numeric=True, row=index, field="n_items")


def mark_repeats(rows: list[list[Cell]], label_columns: int) -> tuple[tuple[Cell, ...], ...]:
    """Blank a leading label equal to the one above (paper style), only while every label left of it repeats."""
    marked: list[tuple[Cell, ...]] = []
    previous: list[Cell] | None = None
    for row in rows:
        new_row = list(row)
        if previous is not None:
            for column in range(label_columns):
                if row[column].text != previous[column].text:
                    break
                new_row[column] = replace(row[column], repeated=True)
        marked.append(tuple(new_row))
        previous = row
    return tuple(marked)


# --- the results as the tables see them ----------------------------------------------------------


@dataclass(frozen=True)
class ResultsView:
    """results.json with its rows indexed, and the roles and languages every table is laid out by."""

    data: Mapping[str, Any]
    rows: ResultsRows = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ResultsView":
        return cls(data=data, rows=ResultsRows(data["rows"]))

    @property
    def roles(self) -> Mapping[str, list[str]]:
        return self.data["config"]["roles"]

    @property
    def annotators(self) -> list[str]:
        return list(self.roles.get("annotators", []))

    @property
    def outputs(self) -> list[str]:
        return list(self.roles["outputs"])

    @property
    def references(self) -> list[str]:
        return list(self.roles["references"])

    @property
    def primary(self) -> str:
        return self.references[0]

    @property
    def rules(self) -> list[str]:
        rules = self.data["config"].get("audit", {}).get("rules") or ["strict", "relaxed"]
        return [rule for rule in ("strict", "relaxed") if rule in rules]

    @property
    def main_rule(self) -> str:
        """Return the rule headline numbers use: strict when it was computed."""
        return "strict" if "strict" in self.rules else self.rules[0]

    @property
    def languages(self) -> list[str]:
        """Return the languages (sorted, as in the rows) followed by 'pooled'."""
        languages = self.data.get("record", {}).get("languages")
        if not languages:
            languages = sorted({row["language"] for row in self.rows.rows if row["language"] != POOLED})
        return [*languages, POOLED]

    @property
    def confidence_label(self) -> str:
        """Return e.g. '95% CI'."""
        return f"{self.data.get('confidence', 0.95) * 100:g}% CI"

    def applicability(self, key: str) -> str | None:
        """Return the sentence saying why an analysis does not apply, or None when it ran."""
        return (self.data.get("applicability") or {}).get(key)

    def subset_size(self, subset: str, language: str = POOLED) -> int | None:
        """Return how many items a subset holds (pooled by default)."""
        return self.data.get("record", {}).get("subsets", {}).get(subset, {}).get(language)

    def output_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.outputs, 2))

    def reference_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.references, 2))

    def annotator_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.annotators, 2))


def _items_phrase(view: ResultsView, subset: str) -> str:
    size = view.subset_size(subset)
    return f"{count(size)} items" if size is not None else "its items"


# --- the tables, in the paper's order --------------------------------------------------------------


def record_table(view: ResultsView) -> Table:
    """The record per language: items, and how many fall in each analysed subset."""
    record = view.data.get("record", {})
    per_language = record.get("items_per_language", {})
    subsets = record.get("subsets", {})
    # a subset the record cannot form (no annotators: no corpus) is absent or null in results.json
    subset_names = [name for name in ("corpus", "audited", "decontaminated") if subsets.get(name)]
    rows = []
    for language in view.languages:
        items = record.get("items") if language == POOLED else per_language.get(language)
        cells = [label(language), Cell(text=count(items), numeric=True)]
        cells += [Cell(text=count(subsets[name].get(language)), numeric=True) for name in subset_names]
        rows.append(cells)
    return Table(
        key="record",
        title="The record",
        caption=(
            "Items per language in the record and in each analysed subset: corpus (both annotators present), "
            "audited (every labelling named in a role present), decontaminated (audited items on which the "
            "primary reference equals neither annotator)."
        ),
        columns=("Language", "Items", *(name.capitalize() for name in subset_names)),
        rows=tuple(tuple(row) for row in rows),
    )


AGREEMENT_RATES = (
    ("identical", "Identical"),
    ("type_agreement", "Type"),
    ("third_pass", "3rd pass"),
    ("silent", "Silent"),
    ("default_to_first", "Default to A"),
)


def agreement_table(view: ResultsView) -> Table:
    """Table 1 of the paper: agreement between the two annotators, per language."""
    rows = view.rows
    rates = [(name, title) for name, title in AGREEMENT_RATES if rows.has("agreement", name)]
    notes = []
    if not rows.has("agreement", "third_pass") and (why := view.applicability("third_pass")):
        notes.append(f"3rd pass, Silent and Default to A: {why}")
    table_rows = []
    for language in view.languages:
        first = rows.one("agreement", "f1", rule=view.rules[0], language=language)
        cells = [label(language), n_cell(first)]
        cells += [stat_cell(rows.one("agreement", "f1", rule=rule, language=language)) for rule in view.rules]
        cells += [stat_cell(rows.one("agreement", name, language=language)) for name, _ in rates]
        table_rows.append(cells)
    annotator_a, annotator_b = view.annotators[:2]
    return Table(
        key="agreement",
        title="The record and annotator agreement",
        caption=(
            f"Agreement between A ({annotator_a}) and B ({annotator_b}) on the corpus subset "
            f"({_items_phrase(view, 'corpus')} pooled). F1 is micro-F1 of A against B in F1 points, per rule. "
            "Identical: % of items whose strict span sets match. Type: % of boundary-matched spans that also "
            "agree on type. 3rd pass: % of items where the adjudication pass fired. Silent: % of items where "
            "A and B differ, no third pass fired, and the primary reference equals A. Default to A: of the "
            "items where A and B differ and no third pass fired, % on which the primary reference equals A."
        ),
        columns=("Language", "Items", *(f"F1 {rule}" for rule in view.rules), *(title for _, title in rates)),
        rows=mark_repeats(table_rows, 1),
        notes=tuple(notes),
    )


def neutrality_table(view: ResultsView) -> Table:
    """Table 3 of the paper: how often each reference reproduces each annotator exactly."""
    rows = view.rows
    columns: list[str] = ["Language", "Items"]
    groups: list[tuple[str, int]] = [("", 2)]
    plan: list[tuple[str, dict[str, str]]] = []
    for reference in view.references:
        group_columns = 0
        for annotator in view.annotators:
            if annotator == reference:
                continue
            columns.append(annotator)
            plan.append(("rate", {"output": annotator, "reference": reference}))
            group_columns += 1
        for first, second in view.annotator_pairs():
            if reference in (first, second):
                continue
            columns.append("Skew" if len(view.annotators) == 2 else f"Skew {first}−{second}")
            plan.append(("skew", {"output": first, "output_2": second, "reference": reference}))
            group_columns += 1
        columns.append("Copied")
        plan.append(("copied", {"reference": reference}))
        groups.append((reference, group_columns + 1))
    table_rows = []
    for language in view.languages:
        first = rows.one("neutrality", "copied", language=language, reference=view.primary)
        cells = [label(language), n_cell(first)]
        cells += [stat_cell(rows.one("neutrality", statistic, language=language, **where)) for statistic, where in plan]
        table_rows.append(cells)
    return Table(
        key="neutrality",
        title="Neutrality of each reference",
        caption=(
            f"Percentage of audited items ({_items_phrase(view, 'audited')} pooled) on which a reference "
            "reproduces an annotator's strict span set exactly, per reference. Skew is the difference of the "
            "two rates in points (first annotator minus second) with its "
            f"{view.confidence_label}; Copied is the % of items on which the reference equals at least one "
            "annotator. A neutral reference has a skew near zero."
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 1),
    )


WIDE_NUMBER_COLUMNS = 8  # more number columns than this in the paper's layout, and a table switches to long
LONG_OUTPUTS = 3  # more outputs than this (a leaderboard), and the swap and interaction tables are long


def long_layout(view: ResultsView, number_columns: int) -> bool:
    """Return whether a table is laid out long (one row per output or pair and reference pair, few columns).

    The paper's layout puts every reference and every pair of references side by side; that reads well for two
    outputs and two references, and becomes many narrow columns of wrapped names at leaderboard scale.
    """
    return bool(view.reference_pairs()) and (
        len(view.outputs) > LONG_OUTPUTS or number_columns > WIDE_NUMBER_COLUMNS
    )


def swap_table(view: ResultsView) -> Table:
    """Tables 2 and 4 of the paper: each output scored against each reference, and the swap deltas."""
    rows = view.rows
    pairs = view.reference_pairs()
    if long_layout(view, len(view.rules) * (len(view.references) + len(pairs))):
        return swap_table_long(view)
    columns: list[str] = ["Language", "Output"]
    groups: list[tuple[str, int]] = [("", 2)]
    for rule in view.rules:
        columns += list(view.references)
        for first, second in pairs:
            columns.append(
                f"Δ [{view.confidence_label}]" if len(pairs) == 1 else f"Δ {first}−{second} [{view.confidence_label}]"
            )
        groups.append((rule.capitalize(), len(view.references) + len(pairs)))
    table_rows = []
    for language in view.languages:
        for output in view.outputs:
            cells = [label(language), label(output)]
            for rule in view.rules:
                for reference in view.references:
                    found = (
                        None
                        if reference == output
                        else rows.one("swap", "score", rule=rule, language=language, output=output, reference=reference)
                    )
                    cells.append(stat_cell(found))
                for first, second in pairs:
                    cells.append(
                        stat_cell(
                            rows.one(
                                "swap", "delta", rule=rule, language=language, output=output,
                                reference=first, reference_2=second,
                            )  # fmt: skip
                        )
                    )
            table_rows.append(cells)
    return Table(
        key="swap",
        title="Effect of exchanging the reference",
        caption=(
            f"Each output is held fixed and scored (micro-F1, F1 points) against each reference on the audited "
            f"subset ({_items_phrase(view, 'audited')} pooled). Δ is the score against the first reference minus "
            "the score against the second: the movement attributable to the reference alone, with its paired "
            "bootstrap interval. Bold marks intervals excluding zero."
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 1),
    )


def swap_table_long(view: ResultsView) -> Table:
    """The swap table at leaderboard scale: one row per output, pair of references, rule and language."""
    rows = view.rows
    table_rows = []
    for output in view.outputs:
        for first, second in view.reference_pairs():
            for rule in view.rules:
                for language in view.languages:
                    cells = [label(output), label(f"{first} vs {second}"), label(rule), label(language)]
                    for reference in (first, second):
                        cells.append(stat_cell(None if reference == output else rows.one(
                            "swap", "score", rule=rule, language=language, output=output, reference=reference)))  # fmt: skip
                    cells.append(stat_cell(rows.one("swap", "delta", rule=rule, language=language, output=output,
                                                    reference=first, reference_2=second)))  # fmt: skip
                    table_rows.append(cells)
    return Table(
        key="swap",
        title="Effect of exchanging the reference",
        caption=(
            f"Each output is held fixed and scored (micro-F1, F1 points) against two references on the audited "
            f"subset ({_items_phrase(view, 'audited')} pooled), for every pair of references (first vs second, in "
            "config order). Δ is the score against the first reference minus the score against the second: the "
            "movement attributable to the reference alone, with its paired bootstrap interval. Bold marks "
            "intervals excluding zero."
        ),
        columns=("Output", "References", "Rule", "Language", f"F1 vs first [{view.confidence_label}]",
                 f"F1 vs second [{view.confidence_label}]", f"Δ [{view.confidence_label}]"),  # fmt: skip
        rows=mark_repeats(table_rows, 3),
        widths=(24, 16, 8, 10),
    )


def range_table(view: ResultsView) -> Table:
    """Table 5 of the paper: the score range available from the choice of reference alone."""
    rows = view.rows
    golds = list(dict.fromkeys(view.annotators + view.references))
    table_rows = []
    for language in view.languages:
        for output in view.outputs:
            for rule in view.rules:
                cells = [label(language), label(output), label(rule)]
                scores = []
                for gold in golds:
                    found = (
                        None
                        if gold == output
                        else rows.one("range", "score", rule=rule, language=language, output=output, reference=gold)
                    )
                    if gold == output:
                        cells.append(Cell(text="", numeric=True))
                    else:
                        cells.append(stat_cell(found))
                    if found is not None and found[1]["estimate"] is not None:
                        scores.append((found[1]["estimate"], gold))
                range_found = rows.one("range", "range", rule=rule, language=language, output=output)
                cells.append(stat_cell(range_found))
                # naming the labelling that gives the maximum is a choice among printed scores, not a new number
                cells.append(label(max(scores)[1] if scores else formatting.UNDEFINED))
                table_rows.append(cells)
    return Table(
        key="range",
        title="Score range from the choice of reference",
        caption=(
            "Each row holds one output fixed and varies which other defensible labelling (an annotator or a "
            "reference) is designated gold; micro-F1 in F1 points on the audited subset "
            f"({_items_phrase(view, 'audited')} pooled). Range is the maximum minus the minimum; Max names the "
            "labelling giving the maximum."
        ),
        columns=("Language", "Output", "Rule", *(f"vs {gold}" for gold in golds), "Range", "Max"),
        rows=mark_repeats(table_rows, 2),
        widths=(10, 22, 8) if long_layout(view, len(golds) + 1) else (),
    )


def interaction_table(
    view: ResultsView, analysis: str = "interaction", policy: str | None = None, p_column: str = "p_holm"
) -> Table:
    """Tables 6 and 7 of the paper: margins under each reference and the paired swing (also per subset/policy)."""
    rows = view.rows
    ref_pairs = view.reference_pairs()
    out_pairs = view.output_pairs()
    several_pairs = len(out_pairs) > 1
    p_title = "Holm p" if p_column == "p_holm" else "p"
    columns: list[str] = ["Outputs"] if several_pairs else []
    columns += ["Language", "Rule", *view.references]
    for first, second in ref_pairs:
        suffix = "" if len(ref_pairs) == 1 else f" {first}−{second}"
        columns += [f"Swing{suffix} [{view.confidence_label}]", f"{p_title}{suffix}"]
    label_columns = 3 if several_pairs else 2
    groups = (("", label_columns), (f"Margin under [{view.confidence_label}]", len(view.references)), ("", 2 * len(ref_pairs)))
    where: dict[str, str] = {"policy": policy} if policy is not None else {}
    table_rows = []
    for output, output_2 in out_pairs:
        for language in view.languages:
            for rule in view.rules:
                cells = [label(f"{output} − {output_2}")] if several_pairs else []
                cells += [label(language), label(rule)]
                for reference in view.references:
                    cells.append(
                        stat_cell(
                            rows.one(
                                analysis, "margin", rule=rule, language=language, output=output,
                                output_2=output_2, reference=reference, **where,
                            )  # fmt: skip
                        )
                    )
                for first, second in ref_pairs:
                    found = rows.one(
                        analysis, "swing", rule=rule, language=language, output=output, output_2=output_2,
                        reference=first, reference_2=second, **where,
                    )  # fmt: skip
                    cells += [stat_cell(found), p_cell(found, p_column)]
                table_rows.append(cells)
    return Table(
        key=analysis if policy is None else f"{analysis}-{policy}",
        title="",
        caption="",
        columns=tuple(columns),
        groups=groups,
        rows=mark_repeats(table_rows, label_columns),
    )


def interaction_is_long(view: ResultsView) -> bool:
    """Return whether the interaction tables (and those built like them) are laid out long."""
    return long_layout(view, len(view.references) + 2 * len(view.reference_pairs()))


def interaction_tables_long(
    view: ResultsView, analysis: str = "interaction", policy: str | None = None, p_column: str = "p_holm"
) -> tuple[Table, Table]:
    """The interaction at leaderboard scale, as two long tables: margins per pair of outputs, and swings per
    pair of outputs and pair of references (rules side by side)."""
    rows = view.rows
    where: dict[str, str] = {"policy": policy} if policy is not None else {}
    p_title = "Holm p" if p_column == "p_holm" else "p"
    suffix = "" if policy is None else f"-{policy}"
    margin_rows = []
    swing_rows = []
    for output, output_2 in view.output_pairs():
        for language in view.languages:
            for rule in view.rules:
                cells = [label(f"{output} − {output_2}"), label(language), label(rule)]
                cells += [stat_cell(rows.one(analysis, "margin", rule=rule, language=language, output=output,
                                             output_2=output_2, reference=reference, **where))
                          for reference in view.references]  # fmt: skip
                margin_rows.append(cells)
        for first, second in view.reference_pairs():
            for language in view.languages:
                cells = [label(f"{output} − {output_2}"), label(f"{first} vs {second}"), label(language)]
                for rule in view.rules:
                    found = rows.one(analysis, "swing", rule=rule, language=language, output=output,
                                     output_2=output_2, reference=first, reference_2=second, **where)  # fmt: skip
                    cells += [stat_cell(found), p_cell(found, p_column)]
                swing_rows.append(cells)
    margins = Table(
        key=f"{analysis}-margins{suffix}",
        title="",
        caption="",
        columns=("Outputs", "Language", "Rule", *view.references),
        groups=(("", 3), (f"Margin under [{view.confidence_label}]", len(view.references))),
        rows=mark_repeats(margin_rows, 2),
        widths=(28, 10, 8),
    )
    swing_columns: list[str] = ["Outputs", "References", "Language"]
    swing_groups: list[tuple[str, int]] = [("", 3)]
    for rule in view.rules:
        swing_columns += [f"Swing [{view.confidence_label}]", p_title]
        swing_groups.append((rule.capitalize(), 2))
    swings = Table(
        key=f"{analysis}-swings{suffix}",
        title="",
        caption="",
        columns=tuple(swing_columns),
        groups=tuple(swing_groups),
        rows=mark_repeats(swing_rows, 2),
        widths=(30, 14, 10),
    )
    return margins, swings


def interaction_main_tables(view: ResultsView) -> list[Table]:
    """The interaction tables: the paper's one table, or margins and swings in long layout for a leaderboard."""
    if not interaction_is_long(view):
        return [interaction_main_table(view)]
    family = len(view.rows.select("interaction", "swing"))
    margins, swings = interaction_tables_long(view)
    return [
        replace(
            margins,
            title="Margins between the outputs under each reference",
            caption=(
                "Margin between two outputs (first minus second, F1 points) under each reference, per language "
                f"and pooled, on the audited subset ({_items_phrase(view, 'audited')} pooled). Bold marks "
                "intervals excluding zero."
            ),
        ),
        replace(
            swings,
            title="Does the order of the outputs survive a change of reference?",
            caption=(
                "Swing: margin under the first reference minus margin under the second, recomputed inside every "
                "bootstrap resample, per pair of outputs and pair of references. Holm p is the two-sided "
                f"bootstrap p-value of the swing, Holm-adjusted over all {family} swings (every language, pooled, "
                "every rule and pair). Bold marks intervals excluding zero."
            ),
        ),
    ]


def interaction_main_table(view: ResultsView) -> Table:
    """Interaction on the audited subset, with Holm-adjusted p over the whole swing family."""
    first, second = view.outputs[:2] if len(view.outputs) > 1 else (view.outputs[0], "")
    family = len(view.rows.select("interaction", "swing"))
    return replace(
        interaction_table(view),
        title="Does the ranking of the outputs survive a change of reference?",
        caption=(
            f"Margin is F1({first}) − F1({second}) in F1 points under each reference, on the audited subset "
            f"({_items_phrase(view, 'audited')} pooled). Swing is the paired interaction: margin under the first "
            "reference minus margin under the second, recomputed inside every bootstrap resample. Holm p is the "
            f"two-sided bootstrap p-value of the swing, Holm-adjusted over all {family} swings (every language, "
            "pooled, and every rule). Bold marks intervals excluding zero."
        ),
    )


def decontaminated_table(view: ResultsView) -> Table:
    """The interaction recomputed on items where the primary reference copies neither annotator."""
    return replace(
        interaction_table(view, analysis="decontaminated", p_column="p_value"),
        title="Interaction on the decontaminated subset",
        caption=(
            "Margins and swing as in the interaction table, on the decontaminated subset: audited items on which "
            f"the primary reference ({view.primary}) equals neither annotator's strict span set "
            f"({_items_phrase(view, 'decontaminated')} pooled). p is the unadjusted two-sided bootstrap p-value "
            "(these swings are not part of the Holm family). Bold marks intervals excluding zero."
        ),
    )


def decontaminated_tables(view: ResultsView) -> list[Table]:
    """The decontaminated interaction: the paper's table, or margins and swings in long layout."""
    if not interaction_is_long(view):
        return [decontaminated_table(view)]
    margins, swings = interaction_tables_long(view, analysis="decontaminated", p_column="p_value")
    what = (f"on the decontaminated subset: audited items on which the primary reference ({view.primary}) equals "
            f"neither annotator's strict span set ({_items_phrase(view, 'decontaminated')} pooled)")  # fmt: skip
    return [
        replace(margins, title="Margins on the decontaminated subset",
                caption=f"Margins as in the interaction tables, {what}."),
        replace(swings, title="Swings on the decontaminated subset",
                caption=(f"Swings as in the interaction tables, {what}. p is the unadjusted two-sided bootstrap "
                         "p-value (these swings are not part of the Holm family).")),
    ]  # fmt: skip


DUPLICATE_POLICIES = ("keep_first", "keep_last", "keep_all", "drop_all")


def duplicates_table(view: ResultsView) -> Table:
    """The interaction under each duplicate policy, without excluding defective groups."""
    policies = [policy for policy in DUPLICATE_POLICIES if view.rows.select("duplicates", "margin", policy=policy)
                or view.rows.select("duplicates", "swing", policy=policy)]  # fmt: skip
    tables = [interaction_table(view, analysis="duplicates", policy=policy, p_column="p_value") for policy in policies]
    rows: list[list[Cell]] = []
    for policy, table in zip(policies, tables):
        rows += [[label(policy), *row] for row in table.rows]
    base = tables[0] if tables else interaction_table(view, analysis="duplicates", p_column="p_value")
    label_columns = base.groups[0][1]
    plain_rows = [[replace(cell, repeated=False) for cell in row] for row in rows]
    return Table(
        key="duplicates",
        title="Duplicate-policy robustness",
        caption=(
            "Margins and swing as in the interaction table, recomputed under each duplicate policy "
            "(keep_first, keep_last, keep_all, drop_all) without excluding defective duplicate groups, so a "
            "result produced by defective copies shows up as a difference between policies. p is unadjusted."
        ),
        columns=("Policy", *base.columns),
        groups=(("", 1 + base.groups[0][1]), *base.groups[1:]),
        rows=mark_repeats(plain_rows, 1 + label_columns),
    )


def duplicates_tables(view: ResultsView) -> list[Table]:
    """Duplicate robustness: the paper's table, or margins and swings in long layout, policy first."""
    if not interaction_is_long(view):
        return [duplicates_table(view)]
    policies = [policy for policy in DUPLICATE_POLICIES if view.rows.select("duplicates", "margin", policy=policy)
                or view.rows.select("duplicates", "swing", policy=policy)]  # fmt: skip
    margin_rows: list[list[Cell]] = []
    swing_rows: list[list[Cell]] = []
    for policy in policies:
        margins, swings = interaction_tables_long(view, analysis="duplicates", policy=policy, p_column="p_value")
        margin_rows += [[label(policy), *(replace(cell, repeated=False) for cell in row)] for row in margins.rows]
        swing_rows += [[label(policy), *(replace(cell, repeated=False) for cell in row)] for row in swings.rows]
    margins, swings = interaction_tables_long(view, analysis="duplicates", p_column="p_value")
    what = ("recomputed under each duplicate policy (keep_first, keep_last, keep_all, drop_all) without excluding "
            "defective duplicate groups, so a result produced by defective copies shows up as a difference "
            "between policies")  # fmt: skip
    return [
        Table(key="duplicates-margins", title="Duplicate-policy robustness: margins",
              caption=f"Margins as in the interaction tables, {what}.", columns=("Policy", *margins.columns),
              groups=(("", 1 + margins.groups[0][1]), *margins.groups[1:]), rows=mark_repeats(margin_rows, 3),
              widths=(9, 22, 10, 8)),
        Table(key="duplicates-swings", title="Duplicate-policy robustness: swings",
              caption=f"Swings as in the interaction tables, {what}. p is unadjusted.",
              columns=("Policy", *swings.columns), groups=(("", 1 + swings.groups[0][1]), *swings.groups[1:]),
              rows=mark_repeats(swing_rows, 3), widths=(9, 22, 13, 10)),
    ]  # fmt: skip


def defective_groups_table(view: ResultsView) -> Table:
    """The duplicate groups excluded as defective copies, with their members."""
    groups = view.data.get("duplicates", {}).get("defective_groups", [])
    rows = tuple(
        (label(str(group.get("key", ""))), label(", ".join(map(str, group.get("items", [])))),
         label(str(group.get("reference", ""))), label(str(group.get("copies", ""))))
        for group in groups
    )  # fmt: skip
    excluded = view.data.get("config", {}).get("audit", {}).get("exclude_defective_duplicates", True)
    return Table(
        key="defective-groups",
        title="Defective duplicate groups",
        caption=(
            "Duplicate groups on which a non-primary reference copies one annotator exactly, shares no span with "
            "the other, and the annotators differ (the copy defect). "
            + ("Every member was removed before the main analyses." if excluded else
               "They were kept: exclude_defective_duplicates is false.")
        ),
        columns=("Duplicate key", "Items", "Reference", "Copies"),
        rows=rows,
    )


def band_table(view: ResultsView) -> Table:
    """The reference-sensitivity band per rule and output."""
    rows = []
    for rule in view.rules:
        for found in view.rows.select("band", "band", rule=rule, language=POOLED):
            rows.append([label(rule), label(found[1]["output"] or "all outputs (largest)"), stat_cell(found)])
    return Table(
        key="band",
        title="Reference-sensitivity band",
        caption=(
            "The band is the largest absolute end of the pooled swap-delta interval: how far a score can move "
            "from the choice of reference alone, in F1 points. The overall band is that of the output whose "
            "pooled |Δ| is largest. A margin smaller than the band is not robust to the choice of reference."
        ),
        columns=("Rule", "Output", "Band"),
        rows=mark_repeats(rows, 1),
    )


def band_versus_margins(view: ResultsView) -> tuple[Table, list[tuple[str, int, int, str]]]:
    """Observed margins under the primary reference against the overall band; return the table and the tallies."""
    rule = view.main_rule
    band_found = view.rows.one("band", "band", rule=rule, language=POOLED, output="")
    band = band_found[1]["estimate"] if band_found else None
    rows = []
    tallies = []
    for output, output_2 in view.output_pairs():
        exceeding = compared = 0
        for language in view.languages:
            found = view.rows.one(
                "interaction", "margin", rule=rule, language=language, output=output, output_2=output_2,
                reference=view.primary,
            )  # fmt: skip
            margin = found[1]["estimate"] if found else None
            verdict = formatting.UNDEFINED
            if margin is not None and band is not None:
                # a comparison of two printed numbers, not a new statistic
                compared += 1
                exceeds = abs(margin) > band
                exceeding += exceeds
                verdict = "exceeds the band" if exceeds else "within the band"
            rows.append([label(f"{output} − {output_2}"), label(language), stat_cell(found), label(verdict)])
        tallies.append((f"{output} − {output_2}", exceeding, compared, formatting.number(band, 2)))
    table = Table(
        key="band-margins",
        title="Observed margins against the band",
        caption=(
            f"Margin between the outputs under the primary reference ({view.primary}), {rule} rule, per language "
            f"and pooled, F1 points, on the audited subset, compared with the overall {rule} band "
            f"(±{formatting.number(band, 2)} F1 points)."
        ),
        columns=("Outputs", "Language", f"Margin [{view.confidence_label}]", "Against the band"),
        rows=mark_repeats(rows, 1),
    )
    return table, tallies


def type_confusion_table(view: ResultsView) -> Table:
    """Counts of boundary-matched A and B spans by their two types."""
    confusion = view.data.get("type_confusion", {})
    cells = confusion.get("cells", [])
    # one sorted order for rows and columns, so agreement lies on the diagonal
    types_a = types_b = sorted({cell["type_a"] for cell in cells} | {cell["type_b"] for cell in cells})
    counts = {(cell["type_a"], cell["type_b"]): cell["count"] for cell in cells}
    rows = tuple(
        (label(type_a), *(Cell(text=count(counts.get((type_a, type_b), 0)), numeric=True) for type_b in types_b))
        for type_a in types_a
    )
    annotator_a, annotator_b = (confusion.get("annotators") or view.annotators or ["A", "B"])[:2]
    return Table(
        key="type-confusion",
        title="Type confusion between the annotators",
        caption=(
            f"Spans of A ({annotator_a}, rows) and B ({annotator_b}, columns) with identical boundaries, counted "
            "by their two types over the corpus. Off-diagonal cells are boundary agreements with a type "
            "disagreement."
        ),
        columns=("A \\ B", *types_b),
        groups=(("", 1), (f"B: {annotator_b}", len(types_b))) if types_b else (),
        rows=rows,
    )


def ranked_outputs(view: ResultsView) -> list[str]:
    """Return the outputs the leaderboard ranks (those with rank rows), in config order."""
    ranked = {row["output"] for _, row in view.rows.select("leaderboard", "rank")}
    return [output for output in view.outputs if output in ranked]


def leaderboard_tables(view: ResultsView) -> list[Table]:
    """The leaderboard: the paper-style wide table, or in long layout a board per reference (outputs in rank
    order) and a table of how likely each rank is to move."""
    pairs = view.reference_pairs()
    if not long_layout(view, 2 * len(view.references) + len(pairs)):
        return [leaderboard_table(view)]
    rows = view.rows
    outputs = ranked_outputs(view)
    board_rows = []
    for rule in view.rules:
        for language in view.languages:
            for reference in view.references:
                found = {output: rows.one("leaderboard", "rank", rule=rule, language=language, output=output,
                                          reference=reference) for output in outputs}  # fmt: skip

                def position(output: str) -> tuple[float, int]:
                    rank = found[output][1]["estimate"] if found[output] else None
                    return (rank if rank is not None else float("inf"), outputs.index(output))

                for output in sorted(outputs, key=position):  # an ordering of printed ranks, not a new number
                    board_rows.append([
                        label(rule), label(language), label(reference), label(output),
                        stat_cell(rows.one("leaderboard", "score", rule=rule, language=language, output=output,
                                           reference=reference)),
                        stat_cell(found[output]),
                    ])  # fmt: skip
    board = Table(
        key="leaderboard",
        title="The leaderboard under each reference",
        caption=(
            "Micro-F1 (F1 points) and rank (1 = highest; ties share their average rank) of every ranked output "
            "(an output that is not itself a reference) under each reference, outputs in rank order, on the "
            f"audited subset, with {view.confidence_label}s from the same paired bootstrap as the swings."
        ),
        columns=("Rule", "Language", "Reference", "Output", f"F1 [{view.confidence_label}]",
                 f"Rank [{view.confidence_label}]"),  # fmt: skip
        rows=mark_repeats(board_rows, 3),
        widths=(8, 10, 14, 30),
    )
    move_rows = []
    for rule in view.rules:
        for language in view.languages:
            for output in outputs:
                cells = [label(rule), label(language), label(output)]
                cells += [stat_cell(rows.one("leaderboard", "p_rank_change", rule=rule, language=language,
                                             output=output, reference=first, reference_2=second))
                          for first, second in pairs]  # fmt: skip
                move_rows.append(cells)
    moves = Table(
        key="rank-moves",
        title="How likely is each rank to move?",
        caption=(
            "Share of bootstrap replicates in which the output's rank under the first reference of a pair differs "
            "from its rank under the second, audited subset."
        ),
        columns=("Rule", "Language", "Output", *(f"{first} → {second}" for first, second in pairs)),
        groups=(("", 3), ("P(rank moves)", len(pairs))),
        rows=mark_repeats(move_rows, 2),
        widths=(8, 10, 26),
    )
    return [board, moves]


def leaderboard_table(view: ResultsView) -> Table:
    """Each ranked output's score and rank under every reference, and how likely its rank is to move."""
    rows = view.rows
    pairs = view.reference_pairs()
    columns: list[str] = ["Rule", "Language", "Output"]
    groups: list[tuple[str, int]] = [("", 3)]
    for reference in view.references:
        columns += ["F1", "Rank"]
        groups.append((reference, 2))
    for first, second in pairs:
        columns.append("P(rank moves)" if len(pairs) == 1 else f"P(rank moves) {first}→{second}")
    if pairs:
        groups.append(("", len(pairs)))
    table_rows = []
    for rule in view.rules:
        for language in view.languages:
            for output in ranked_outputs(view):
                cells = [label(rule), label(language), label(output)]
                for reference in view.references:
                    where = {"rule": rule, "language": language, "output": output, "reference": reference}
                    cells += [stat_cell(rows.one("leaderboard", "score", **where)),
                              stat_cell(rows.one("leaderboard", "rank", **where))]  # fmt: skip
                for first, second in pairs:
                    cells.append(stat_cell(rows.one("leaderboard", "p_rank_change", rule=rule, language=language,
                                                    output=output, reference=first, reference_2=second)))  # fmt: skip
                table_rows.append(cells)
    return Table(
        key="leaderboard",
        title="The leaderboard under each reference",
        caption=(
            "Micro-F1 (F1 points) and rank (1 = highest; ties share their average rank) of every ranked output "
            f"(an output that is not itself a reference) under each reference, on the audited subset, with "
            f"{view.confidence_label}s from the same paired bootstrap as the swings. P(rank moves) is the share of "
            "bootstrap replicates in which the output's rank under the first reference differs from its rank "
            "under the second."
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 2),
    )


def rank_agreement_table(view: ResultsView) -> Table:
    """Kendall's tau-b, order flips and the chance the whole ranking changes, per pair of references."""
    rows = view.rows
    pairs = view.reference_pairs()
    if long_layout(view, 4 * len(pairs)):
        table_rows = []
        for rule in view.rules:
            for first, second in pairs:
                for language in view.languages:
                    where = {"rule": rule, "language": language, "reference": first, "reference_2": second}
                    table_rows.append([
                        label(rule), label(f"{first} vs {second}"), label(language),
                        stat_cell(rows.one("leaderboard", "kendall_tau", **where)),
                        stat_cell(rows.one("leaderboard", "flips", **where)),
                        stat_cell(rows.one("leaderboard", "flips_significant", **where)),
                        stat_cell(rows.one("leaderboard", "p_rank_change", output="", **where)),
                    ])  # fmt: skip
        return replace(
            _rank_agreement(view, ("Rule", "References", "Language", "tau-b", "Flips", "Significant",
                                   "P(ranking moves)"), (), table_rows),  # fmt: skip
            widths=(8, 22, 10),
        )
    columns: list[str] = ["Rule", "Language"]
    groups: list[tuple[str, int]] = [("", 2)]
    for first, second in pairs:
        columns += ["tau-b", "Flips", "Significant", "P(ranking moves)"]
        groups.append((f"{first} vs {second}", 4))
    table_rows = []
    for rule in view.rules:
        for language in view.languages:
            cells = [label(rule), label(language)]
            for first, second in pairs:
                where = {"rule": rule, "language": language, "reference": first, "reference_2": second}
                cells += [
                    stat_cell(rows.one("leaderboard", "kendall_tau", **where)),
                    stat_cell(rows.one("leaderboard", "flips", **where)),
                    stat_cell(rows.one("leaderboard", "flips_significant", **where)),
                    stat_cell(rows.one("leaderboard", "p_rank_change", output="", **where)),
                ]
            table_rows.append(cells)
    return _rank_agreement(view, tuple(columns), tuple(groups), table_rows)


def _rank_agreement(view: ResultsView, columns: tuple[str, ...], groups: tuple[tuple[str, int], ...],
                    table_rows: list[list[Cell]]) -> Table:  # fmt: skip
    return Table(
        key="rank-agreement",
        title="Does the ranking survive a change of reference?",
        caption=(
            "Kendall's tau-b between the rankings under two references (1 = identical, −1 = reversed); Flips: "
            "pairs of outputs whose order is reversed; Significant: flips whose interaction swing has Holm p "
            "below 1 − confidence; P(ranking moves): share of bootstrap replicates in which some output's rank "
            "differs. Audited subset."
        ),
        columns=columns,
        groups=groups,
        rows=mark_repeats(table_rows, 2 if not groups else 1),
    )


def flips_table(view: ResultsView) -> Table:
    """Every pair of outputs whose order flips between two references, with its swing."""
    table_rows = []
    for index, row in view.rows.select("leaderboard", "flip"):
        found = (index, row)
        table_rows.append([
            label(row["rule"]), label(row["language"]), label(f"{row['output']} − {row['output_2']}"),
            label(f"{row['reference']} vs {row['reference_2']}"), stat_cell(found), p_cell(found, "p_value"),
            p_cell(found, "p_holm"),
        ])  # fmt: skip
    return Table(
        key="flips",
        title="Pairs of outputs that change order",
        caption=(
            "Each pair whose order under one reference is the reverse of its order under the other, with its "
            f"swing (margin under the first reference minus margin under the second, F1 points, "
            f"{view.confidence_label}), its bootstrap p and its Holm p over the whole swing family."
        ),
        columns=("Rule", "Language", "Outputs", "References", f"Swing [{view.confidence_label}]", "p", "Holm p"),
        rows=mark_repeats(table_rows, 2),
        widths=(8, 10, 30, 16) if long_layout(view, 0) else (),
    )


# --- writers ---------------------------------------------------------------------------------------


def _header_labels(table: Table) -> list[str]:
    """Return one header per column, prefixed by its group ('Strict: Δ [95% CI]') where groups exist."""
    labels = []
    spans: list[str] = []
    for group_label, width in table.groups:
        spans += [group_label] * width
    for index, column in enumerate(table.columns):
        group_label = spans[index] if index < len(spans) else ""
        labels.append(f"{group_label}: {column}" if group_label else column)
    return labels


def table_csv(table: Table) -> str:
    """Return the table as CSV: every label repeated, numbers as printed."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_header_labels(table))
    for row in table.rows:
        writer.writerow([cell.full_text for cell in row])
    return buffer.getvalue()


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "--",
    "Δ": r"$\Delta$",
}


def latex_escape(text: str) -> str:
    """Return text safe inside a LaTeX table cell."""
    return "".join(LATEX_SPECIALS.get(character, character) for character in text)


def _latex_number(text: str) -> str:
    """Return a printed number in LaTeX: a true minus sign, '<0.01' in math mode."""
    if text.startswith("<"):
        return "$<$" + text[1:]
    return text.replace("-", "$-$")


def _latex_cell(cell: Cell) -> str:
    if cell.repeated:
        return ""
    if not cell.numeric:
        return latex_escape(cell.text)
    text = _latex_number(cell.text)
    if cell.interval:
        text += " " + _latex_number(cell.interval)
    return rf"\textbf{{{text}}}" if cell.bold else text


def table_latex(table: Table) -> str:
    """Return the table as a booktabs ``table`` environment, ready for a paper's appendix."""
    alignment = "".join("r" if numeric else "l" for numeric in table.numeric_columns)
    lines = [
        r"% Generated by refsens-report; needs \usepackage{booktabs}.",
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(table.title)}. {latex_escape(table.caption)}}}",
        rf"\label{{tab:refsens-{table.key}}}",
        rf"\begin{{tabular}}{{{alignment}}}",
        r"\toprule",
    ]
    if any(group_label for group_label, _ in table.groups):
        cells, rules, start = [], [], 1
        for group_label, width in table.groups:
            if group_label:
                cells.append(rf"\multicolumn{{{width}}}{{c}}{{{latex_escape(group_label)}}}")
                rules.append(rf"\cmidrule(lr){{{start}-{start + width - 1}}}")
            else:
                cells += [""] * width
            start += width
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" ".join(rules))
    lines.append(" & ".join(latex_escape(column) for column in table.columns) + r" \\")
    lines.append(r"\midrule")
    for index, row in enumerate(table.rows):
        # a new first-column label starts a group: a little space, as in the paper
        if index and not row[0].repeated and table.rows[index - 1][0].text and row[0].text and _grouped(table):
            lines.append(r"\addlinespace")
        lines.append(" & ".join(_latex_cell(cell) for cell in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _grouped(table: Table) -> bool:
    """Return whether the table's first column groups several rows."""
    return any(row[0].repeated for row in table.rows)
