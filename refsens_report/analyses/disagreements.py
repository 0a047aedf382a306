"""Disagreements: the items on which two golds differ, listed one by one, so a team can fix the gold.

Two listings, each a pair of labellings compared item by item on strict span sets:

- the references: the primary reference against each alternative, on the audited items (the swap's items);
- the annotators: A against B, on the corpus, where an adjudication pass would look first.

Each line is one item on which the two differ: its id, language, text (unless ``[report] show_text = false``),
both span sets, the spans only in one of them, and what scoring each output against the second instead of
the first changes in its TP, FP and FN there. Lines are sorted by impact: the TP, FP and FN counts that
change, summed over the outputs (then by the number of differing spans, the pair, language and id). The
listings are files beside results.json (``disagreements.jsonl``/``.csv``, ``annotator-disagreements.*``),
never inside it; results.json carries their counts (``summary``), and the site renders a page of the lines
with the most impact (``render.DisagreementsPage``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import orjson

from refsens_report import formatting
from refsens_report.analyses.base import Analysis, AuditContext, Section
from refsens_report.figures import Figure
from refsens_report.record import POOLED
from refsens_report.tables import Table, count_cell, label, mark_repeats, spreadsheet_safe
from refsens_report.view import ResultsView

KEY = "disagreements"
# the listing files' stems, by which pair of labellings they compare
REFERENCES_FILE = "disagreements"
ANNOTATORS_FILE = "annotator-disagreements"
PAGE_LINES = 200  # lines a page shows per pair of labellings: those with the most impact; the files hold all


@dataclass(frozen=True)
class Comparison:
    """Two labellings compared item by item on an item set, and the file stem their listing is written to."""

    kind: str  # "references" or "annotators"
    first: str
    second: str
    subset: str  # "audited" or "corpus"
    stem: str


def comparisons(context: AuditContext) -> list[Comparison]:
    """Return the pairs compared: the primary reference against each alternative, then annotator A against B."""
    roles, subsets = context.config.roles, context.subsets
    found = []
    if subsets.audited is not None and subsets.audited.any():
        found += [Comparison("references", roles.primary, alternative, "audited", REFERENCES_FILE)
                  for alternative in roles.references[1:]]  # fmt: skip
    if context.has_annotators and subsets.corpus is not None and subsets.corpus.any():
        found.append(Comparison("annotators", roles.annotators[0], roles.annotators[1], "corpus", ANNOTATORS_FILE))
    return found


def _mask(context: AuditContext, comparison: Comparison) -> np.ndarray:
    return context.subsets.audited if comparison.subset == "audited" else context.subsets.corpus


def scored_outputs(context: AuditContext, comparison: Comparison) -> list[str]:
    """Return the outputs whose counts a line reports: every output but the two labellings compared."""
    return [output for output in context.config.roles.outputs if output not in (comparison.first, comparison.second)]


def _strict_set(spans: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Return a labelling's strict span set on an item, sorted, as JSON-ready [start, end, type] lists."""
    return [list(span) for span in sorted({(int(s), int(e), str(t)) for s, e, t in spans})]


def lines_of(context: AuditContext, comparison: Comparison) -> list[dict[str, Any]]:
    """Return one line per item of the comparison's item set on which its two strict span sets differ."""
    counts, first, second = context.counts, comparison.first, comparison.second
    differing = _mask(context, comparison) & counts.has(first) & counts.has(second) & ~counts.equal(first, second)
    outputs = scored_outputs(context, comparison)
    changes = {}
    for output in outputs:
        # per item: the output's counts against the second labelling minus those against the first (strict)
        tp_first, tp_second = counts.tp("strict", output, first), counts.tp("strict", output, second)
        tp = tp_second - tp_first
        fn = (counts.size("strict", second) - tp_second) - (counts.size("strict", first) - tp_first)
        changes[output] = (counts.has(output), tp, -tp, fn)  # FP = |O| - TP: it moves against TP
    show_text = context.config.report.show_text
    lines = []
    for index in np.flatnonzero(differing):
        item = context.record.item(index)
        spans_first = _strict_set(item.labellings[first])
        spans_second = _strict_set(item.labellings[second])
        in_second = {tuple(span) for span in spans_second}
        in_first = {tuple(span) for span in spans_first}
        line: dict[str, Any] = {"id": item.id, "language": item.language, "first": first, "second": second,
                                "subset": comparison.subset, "impact": 0}  # fmt: skip
        if show_text and item.text is not None:
            line["text"] = item.text
        line["spans_first"] = spans_first
        line["spans_second"] = spans_second
        line["only_first"] = [span for span in spans_first if tuple(span) not in in_second]
        line["only_second"] = [span for span in spans_second if tuple(span) not in in_first]
        moved = {}
        for output, (present, tp, fp, fn) in changes.items():
            if present[index]:
                moved[output] = {"tp": int(tp[index]), "fp": int(fp[index]), "fn": int(fn[index])}
        line["outputs"] = moved
        line["impact"] = sum(abs(value) for change in moved.values() for value in change.values())
        lines.append(line)
    return lines


def sort_key(order: Mapping[tuple[str, str], int]):
    """Return the lines' order: most impact first, then most differing spans, the pair, language and id."""

    def key(line: Mapping[str, Any]) -> tuple:
        spans = len(line["only_first"]) + len(line["only_second"])
        return (-line["impact"], -spans, order[line["first"], line["second"]], line["language"], line["id"])

    return key


@dataclass(frozen=True)
class Listing:
    """One listing file's lines (sorted by impact) and the comparisons they cover."""

    stem: str
    kind: str
    comparisons: tuple[Comparison, ...]
    outputs: tuple[str, ...]
    lines: tuple[dict[str, Any], ...]


def listings(context: AuditContext) -> list[Listing]:
    """Return the listings of this audit (computed once; the summary and the files read them)."""
    if "listings" not in context.notes.setdefault(KEY, {}):
        found = []
        for kind, stem in (("references", REFERENCES_FILE), ("annotators", ANNOTATORS_FILE)):
            chosen = [comparison for comparison in comparisons(context) if comparison.kind == kind]
            if not chosen:
                continue
            order = {(comparison.first, comparison.second): number for number, comparison in enumerate(chosen)}
            lines = sorted((line for comparison in chosen for line in lines_of(context, comparison)), key=sort_key(order))
            outputs = tuple(dict.fromkeys(output for comparison in chosen for output in scored_outputs(context, comparison)))
            found.append(Listing(stem, kind, tuple(chosen), outputs, tuple(lines)))
        context.notes[KEY]["listings"] = found
    return context.notes[KEY]["listings"]


def _spans_text(spans: Sequence[Sequence[Any]]) -> str:
    return orjson.dumps(spans).decode("utf-8")


def listing_jsonl(listing: Listing) -> str:
    """Return the listing as JSON Lines: one object per line, keys in a fixed order, exact (no rewriting)."""
    return "".join(orjson.dumps(line).decode("utf-8") + "\n" for line in listing.lines)


def listing_csv(listing: Listing) -> str:
    """Return the listing as CSV for spreadsheets: spans as JSON, one TP/FP/FN change column per output.

    Team-written text (ids, languages, labelling names, the text) that starts like a formula gets a leading
    apostrophe, as in the tables' CSVs; the JSON Lines file is the exact one.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["id", "language", "first", "second", "subset", "impact", "text", "spans_first", "spans_second",
              "only_first", "only_second"]  # fmt: skip
    header += [spreadsheet_safe(f"{output} {count}") for output in listing.outputs for count in ("ΔTP", "ΔFP", "ΔFN")]
    writer.writerow(header)
    for line in listing.lines:
        row = [spreadsheet_safe(line["id"]), spreadsheet_safe(line["language"]), spreadsheet_safe(line["first"]),
               spreadsheet_safe(line["second"]), line["subset"], line["impact"],
               spreadsheet_safe(line["text"]) if "text" in line else "",
               *(_spans_text(line[key]) for key in ("spans_first", "spans_second", "only_first", "only_second"))]  # fmt: skip
        for output in listing.outputs:
            change = line["outputs"].get(output)
            row += [change[count] for count in ("tp", "fp", "fn")] if change else ["", "", ""]
        writer.writerow(row)
    return buffer.getvalue()


def files(context: AuditContext) -> dict[str, str]:
    """Return the listing files written beside results.json: name -> text."""
    written = {}
    for listing in listings(context):
        written[f"{listing.stem}.jsonl"] = listing_jsonl(listing)
        written[f"{listing.stem}.csv"] = listing_csv(listing)
    return written


def summary(context: AuditContext) -> dict[str, Any]:
    """results.json "disagreements": per comparison, how many items differ and how many spans only one has."""
    found = []
    for listing in listings(context):
        for comparison in listing.comparisons:
            lines = [line for line in listing.lines if (line["first"], line["second"]) == (comparison.first, comparison.second)]
            languages, members = context_strata(context, _mask(context, comparison))
            compared = {language: len(m) for language, m in zip(languages, members)}
            compared[POOLED] = int(_mask(context, comparison).sum())

            def per_language(value) -> dict[str, int]:
                tally = {language: 0 for language in languages}
                for line in lines:
                    tally[line["language"]] += value(line)
                tally[POOLED] = sum(value(line) for line in lines)
                return tally

            found.append({
                "kind": comparison.kind, "first": comparison.first, "second": comparison.second,
                "subset": comparison.subset, "file": listing.stem, "items": compared,
                "differing": per_language(lambda line: 1),
                "only_first": per_language(lambda line: len(line["only_first"])),
                "only_second": per_language(lambda line: len(line["only_second"])),
            })  # fmt: skip
    text = any("text" in line for listing in listings(context) for line in listing.lines)
    return {"show_text": context.config.report.show_text, "text": text, "comparisons": found}


def context_strata(context: AuditContext, mask: np.ndarray) -> tuple[list[str], list[np.ndarray]]:
    """Return the languages present among the masked items, sorted, and each one's items."""
    language = context.record.table.language_names()
    languages = sorted(set(language[mask]))
    return languages, [np.flatnonzero(mask & (language == name)) for name in languages]


def applicability(context: AuditContext) -> dict[str, str | None]:
    if comparisons(context):
        return {KEY: None}
    return {KEY: "Listing disagreements needs two references or two annotators on the same items."}


# --- the page's highlighting ------------------------------------------------------------------------

WHOLE_TEXT = 400  # a longer text shows only windows around its differing spans
CONTEXT = 60  # characters of context either side of a differing span in a window


def text_windows(length: int, spans: Sequence[Sequence[Any]]) -> list[tuple[int, int]]:
    """Return the [start, end) windows of a text the page shows: all of it when short, else each differing
    span with CONTEXT characters either side (overlapping windows merged)."""
    if length <= WHOLE_TEXT or not spans:
        return [(0, length)]
    windows: list[list[int]] = []
    for start, end, _ in sorted(spans):
        low, high = max(0, start - CONTEXT), min(length, end + CONTEXT)
        if windows and low <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], high)
        else:
            windows.append([low, high])
    return [(low, high) for low, high in windows]


def highlight(text: str, only_first: Sequence[Sequence[Any]], only_second: Sequence[Sequence[Any]]
              ) -> list[list[tuple[str, str]]]:  # fmt: skip
    """Return the text as windows of (piece, mark) pieces: mark is '', 'first', 'second' or 'both', saying which
    labelling alone has a span covering the piece (overlapping spans split the text where they start and end)."""
    windows = []
    for low, high in text_windows(len(text), [*only_first, *only_second]):
        cuts = {low, high}
        for start, end, _ in (*only_first, *only_second):
            cuts.update(position for position in (start, end) if low < position < high)
        ordered = sorted(cuts)
        pieces = []
        for start, end in zip(ordered, ordered[1:]):
            by_first = any(s <= start and end <= e for s, e, _ in only_first)
            by_second = any(s <= start and end <= e for s, e, _ in only_second)
            mark = "both" if by_first and by_second else "first" if by_first else "second" if by_second else ""
            if pieces and pieces[-1][1] == mark:
                pieces[-1] = (pieces[-1][0] + text[start:end], mark)
            else:
                pieces.append((text[start:end], mark))
        windows.append(pieces)
    return windows


# --- the report ------------------------------------------------------------------------------------


def page_name(stem: str) -> str:
    """Return the page of a listing, beside the appendix."""
    return f"{stem}.html"


def listed(view: ResultsView) -> list[dict[str, Any]]:
    """Return results.json's comparisons (empty when the audit listed none)."""
    return list((view.data.get(KEY) or {}).get("comparisons") or [])


def links(view: ResultsView, kind: str) -> tuple[tuple[str, str], ...]:
    """Return the (page, text) links to a kind of listing, for a section's links."""
    found = [comparison for comparison in listed(view) if comparison["kind"] == kind]
    if not found:
        return ()
    stem = found[0]["file"]
    if len(found) == 1:
        comparison = found[0]
        what = (f"Where {comparison['first']} and {comparison['second']} differ, item by item "
                f"({formatting.count(comparison['differing'][POOLED])} items)")  # fmt: skip
    else:
        each = ", ".join(f"{formatting.count(c['differing'][POOLED])} under {c['second']}" for c in found)
        what = f"Where the alternative references differ from {found[0]['first']}, item by item ({each})"
    return ((page_name(stem), f"{what}, the most impact first: {page_name(stem)}; every item in {stem}.jsonl and "
                              f"{stem}.csv."),)  # fmt: skip


def counts_table(view: ResultsView) -> Table:
    """Per comparison and language: items compared, items on which the two differ, spans only in each."""
    rows = []
    kinds = {comparison["kind"] for comparison in listed(view)}
    pairs = " and ".join(part for kind, part in (
        ("references", "the primary reference against each alternative on the audited subset"),
        ("annotators", "annotator A against B on the corpus")) if kind in kinds)  # fmt: skip
    for comparison in listed(view):
        for language in view.languages:
            if language not in comparison["items"]:
                continue
            rows.append([label(f"{comparison['first']} vs {comparison['second']}"), label(language),
                         count_cell(comparison["items"][language]), count_cell(comparison["differing"][language]),
                         count_cell(comparison["only_first"][language]),
                         count_cell(comparison["only_second"][language])])  # fmt: skip
    return Table(
        key="disagreements",
        title="Items on which the golds differ",
        caption=(
            f"Items on which two labellings' strict span sets differ: {pairs}; spans only in the first and only in "
            "the second labelling of each pair. The listing pages and files give every such item, ordered by how "
            "many of the outputs' TP, FP and FN counts it changes."
        ),
        columns=("Pair", "Language", "Items", "Differing", "Spans only in first", "Spans only in second"),
        rows=mark_repeats(rows, 1),
    )


def _section(view: ResultsView, drawn: Mapping[str, Figure]) -> Section:
    found = listed(view)
    if not found:
        return Section(key=KEY, number=0, title=ANALYSIS.title,
                       not_applicable=view.applicability(KEY) or "This analysis produced no results for this record.")  # fmt: skip
    hidden = not (view.data.get(KEY) or {}).get("show_text", True)
    note = ("The record's text is withheld ([report] show_text = false): the pages and files list items by id, "
            "with each span's offsets and type." if hidden else
            "Each listing page shows the items' text with the differing spans highlighted.")  # fmt: skip
    return Section(
        key=KEY, number=0, title=ANALYSIS.title,
        paragraphs=(ANALYSIS.question, note),
        tables=(counts_table(view),),
        links=links(view, "references") + links(view, "annotators"),
    )  # fmt: skip


ANALYSIS = Analysis(
    key=KEY,
    title="Where the golds differ",
    question="On which items do the golds disagree, and which of them move the scores most?",
    methods="""- **Disagreements** (strict span sets): every audited item on which the primary reference and an
  alternative differ, and every corpus item on which annotators A and B differ, with the spans only in one
  of the two and, for each output, the change in its TP, FP and FN when it is scored against the second
  instead of the first. Items are ordered by impact: those changes' absolute values summed over the outputs
  (then by the number of differing spans).""",
    applicability=applicability,
    summary=summary,
    files=files,
    section=_section,
)
