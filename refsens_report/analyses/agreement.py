"""Agreement between the annotator passes on the corpus, and the record itself (docs/method.md section 3).

Statistics: F1 of A against B per rule, % identical, type agreement and, when every corpus item records it,
third pass, silent default and default-to-first. The section opens the report with the record's size.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from refsens_report import formatting
from refsens_report.analyses import disagreements
from refsens_report.analyses.base import (
    DIFFERENCES,
    NO_RESULTS,
    RATE,
    Analysis,
    AuditContext,
    Estimate,
    MetadataSentences,
    Section,
    Stat,
    defined_pooled,
)
from refsens_report.config import Config
from refsens_report.counts import Column, ColumnKind, ItemCounts
from refsens_report.figures import Figure
from refsens_report.formulas import F1, Ratio, Share
from refsens_report.prose import said, said_percent, where_pooled
from refsens_report.record import POOLED
from refsens_report.tables import Table, count_cell, label, mark_repeats, n_cell, stat_cell
from refsens_report.view import ResultsView


def statistics(config: Config, third_pass_known: bool) -> list[Stat]:
    """Annotator agreement on the corpus: F1, identical, type agreement, third pass, silent default."""
    first, second = config.roles.annotators[:2]
    primary = config.roles.primary
    labels = {"analysis": "agreement", "output": first, "reference": second}
    stats = [Stat(statistic="f1", rule=rule, expr=F1(rule, first, second), **labels) for rule in config.audit.rules]
    stats.append(Stat(statistic="identical", expr=Share(Column("equal", a=first, b=second)), **labels))
    stats.append(
        Stat(
            statistic="type_agreement",
            expr=Ratio(Column("tp", "strict", first, second), Column("tp", "relaxed", first, second)),
            **labels,
        )
    )
    if third_pass_known:
        split = Column("unadjudicated_split", a=first, b=second)
        silent = Column("silent", a=first, b=second, c=primary)
        stats += [
            Stat(statistic="third_pass", expr=Share(Column("flag", a="third_pass")), **labels),
            Stat(statistic="silent", expr=Share(silent), **labels),
            Stat(statistic="default_to_first", expr=Ratio(silent, split), **labels),
        ]
    return stats


def _unadjudicated_split(counts: ItemCounts, column: Column) -> np.ndarray:
    """Per item: annotators a and b both present and different, and no third pass."""
    return counts.has(column.a) & counts.has(column.b) & ~counts.equal(column.a, column.b) & ~counts.flag("third_pass")


def _silent(counts: ItemCounts, column: Column) -> np.ndarray:
    """Per item: an unadjudicated split of a and b on which reference ``c`` equals a (it defaulted to the first)."""
    split = counts.integers(Column("unadjudicated_split", a=column.a, b=column.b))
    return split & counts.equal(column.c, column.a)


# the per-item columns of the silent-default statistics (integer counts: 0 or 1 per item)
COLUMNS = (ColumnKind("unadjudicated_split", _unadjudicated_split), ColumnKind("silent", _silent))


def estimates(context: AuditContext) -> list[Estimate]:
    """Agreement is measured on the corpus: every item both annotators labelled."""
    if not context.has_annotators:
        return []
    stats = statistics(context.config, context.third_pass_known)
    return [Estimate(stats, context.subsets.corpus, "corpus", "corpus")]


def applicability(context: AuditContext) -> dict[str, str | None]:
    """Agreement needs two annotator passes; the adjudication rates need meta.third_pass on every corpus item."""
    return {
        "agreement": None
        if context.has_annotators
        else "The record names no annotator passes, so there is no agreement to measure.",
        "third_pass": None
        if context.third_pass_known
        else "Not every corpus item records whether a third pass fired (meta.third_pass), so the third-pass and "
        "silent-default rates are not reported.",
    }


# --- the report ------------------------------------------------------------------------------------


# each subset as the record table's caption explains its column
SUBSET_MEANINGS = {
    "corpus": "corpus (both annotators present)",
    "audited": "audited (every labelling named in a role present)",
    "decontaminated": "decontaminated (audited items on which the primary reference equals neither annotator)",
}
# the section's question when the record names no annotator passes: there is only the record to describe
RECORD_QUESTION = "What does the record hold: how many items, in which languages, labelled by whom?"


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
        cells = [label(language), count_cell(items)]
        cells += [count_cell(subsets[name].get(language)) for name in subset_names]
        rows.append(cells)
    return Table(
        key="record",
        title="The record",
        caption=(
            "Items per language in the record"
            + (
                f" and in each analysed subset: {', '.join(SUBSET_MEANINGS[name] for name in subset_names)}."
                if len(subset_names) > 1
                else f" and in the analysed subset, {SUBSET_MEANINGS[subset_names[0]]}."
                if subset_names
                else "."
            )
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
            f"({view.items_phrase('corpus')} pooled). F1 is micro-F1 of A against B in F1 points, per rule. "
            "Identical: % of items whose strict span sets match. Type: % of boundary-matched spans that also "
            "agree on type. 3rd pass: % of items where the adjudication pass fired. Silent: % of items where "
            "A and B differ, no third pass fired, and the primary reference equals A. Default to A: of the "
            "items where A and B differ and no third pass fired, % on which the primary reference equals A."
        ),
        columns=("Language", "Items", *(f"F1 {rule}" for rule in view.rules), *(title for _, title in rates)),
        rows=mark_repeats(table_rows, 1),
        notes=tuple(notes),
    )


def record_sentences(view: ResultsView) -> list[str]:
    """Return what the record holds: items, languages, labellings present, items removed before the analyses."""
    record = view.data.get("record", {})
    labellings = record.get("labellings", {})
    if labellings and set(labellings.values()) == {record.get("items")}:  # at scale: one clause, not 18
        coverage = f"each of the {len(labellings)} labellings is present on every item."
    else:
        coverage = "labellings present: " + ", ".join(
            f"{name} on {formatting.count(count)}" for name, count in labellings.items()
        )
        coverage += f" {formatting.noun(list(labellings.values())[-1], 'item')}." if labellings else "none."
    excluded = record.get("excluded", {})
    record_lines = [
        f"The record holds {formatting.counted(record.get('items'), 'item')} in "
        f"{formatting.counted(len(record.get('languages', [])), 'language')}; {coverage}"
    ]
    if excluded:
        record_lines.append(
            "Removed before the analyses: "
            + ", ".join(
                f"{formatting.counted(value, 'item')} ({name.replace('_', ' ')})" for name, value in excluded.items()
            )
            + "."
        )
    return record_lines


def section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    """The record per language, then the agreement table (or why there is none)."""
    applies = view.rows.has("agreement") and len(view.annotators) >= 2
    section_tables = [record_table(view)]
    if applies:
        section_tables.append(agreement_table(view))
    return Section(
        key=ANALYSIS.key,
        number=0,
        title=ANALYSIS.title,
        paragraphs=(ANALYSIS.question if len(view.annotators) >= 2 else RECORD_QUESTION, *record_sentences(view)),
        not_applicable=view.applicability("agreement") or (None if applies else NO_RESULTS),
        tables=tuple(section_tables),
        links=disagreements.links(view, "annotators"),
    )


def protocol_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation protocol: how often a third pass was recorded."""
    third = view.row("agreement", "third_pass", language=POOLED)
    if third is None or third["estimate"] is None:
        return []
    return [
        f"A third pass was recorded on {said_percent(third)} of the items where both annotators are present "
        f"{where_pooled(view, third)}."
    ]


def analysis_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation analysis: the annotators' agreement, and how often the primary reference
    defaulted to the first annotator."""
    found = [
        f"Agreement between {row['output']} and {row['reference']}, {row['rule']} F1: {said(row)} "
        f"{where_pooled(view, row)}."
        for row in defined_pooled(view, "agreement", "f1")
    ]
    found += [
        f"Where the annotators disagree and no third pass fired, the primary reference equals the first "
        f"annotator on {said_percent(row)} of items {where_pooled(view, row)}."
        for row in defined_pooled(view, "agreement", "default_to_first")
    ]
    return found


ANALYSIS = Analysis(
    statistics={
        **DIFFERENCES,
        **dict.fromkeys(("identical", "type_agreement", "third_pass", "silent", "default_to_first"), RATE),
    },
    key="agreement",
    title="The record and annotator agreement",
    question="How much do the two independent annotator passes agree, and how often did the pipeline's "
    "adjudication fire?",
    methods="""- **Agreement** (corpus): F1(A, B) per rule; % identical strict sets; type agreement = 100 · TP_strict /
  TP_relaxed; % third pass; % silent (A ≠ B, no third pass, primary reference = A); default-to-first =
  silent / (A ≠ B and no third pass).""",
    estimates=estimates,
    applicability=applicability,
    section=section,
    columns=COLUMNS,
    metadata=(
        MetadataSentences("rai:dataAnnotationProtocol", protocol_sentences),
        MetadataSentences("rai:dataAnnotationAnalysis", analysis_sentences, place=0),
    ),
)
