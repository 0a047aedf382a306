"""The answer first: the summary that opens the appendix, on screen and as the PDF's first page after the title.

One verdict per alternative reference (how far each output's score moves when the primary reference is
swapped for it, with intervals, and how the ranking holds: tau-b, flips, how many are significant after Holm),
then each analysis's headline findings in the same list (the band, the neutrality of the primary reference, ...:
the appendix has no second list of them), one figure (the rank chart with 3+ ranked outputs, the swap figure
otherwise) and the analyses that do not apply, one line each. Every number is a results row as printed (``prose.said``), so the summary equals results.csv.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from refsens_report import formatting
from refsens_report.analyses.registry import ANALYSES
from refsens_report.analyses.base import Section
from refsens_report.figures import Figure
from refsens_report.prose import count_phrase, markdown_text, said
from refsens_report.record import POOLED
from refsens_report.view import UNDECIDED_FLIPS, ResultsView, Row

TITLE = "Summary"
# the figure that answers the question: the rank chart when there is a leaderboard, the swap figure otherwise
FIGURE_KEYS = ("leaderboard-bump", "swap")


@dataclass(frozen=True)
class Verdict:
    """What swapping the primary reference for one alternative does: its sentence, by reference."""

    reference: str
    primary: str
    text: str
    rows: tuple[Row, ...] = ()  # the results rows it prints, which the tables below must keep on the page


@dataclass(frozen=True)
class NotApplicable:
    """An analysis the record does not support: its title and the one sentence saying why."""

    title: str
    reason: str


@dataclass(frozen=True)
class Summary:
    """The summary block: verdicts per alternative reference, then every analysis's headline findings (one list,
    each said once), one figure, what does not apply."""

    verdicts: tuple[Verdict, ...]
    findings: tuple[str, ...]
    figure: Figure | None
    not_applicable: tuple[NotApplicable, ...]
    empty: str = ""  # why there are no verdicts (one reference, no scores)
    lead: str = ""  # the sentence that introduces the verdicts (with them only)

    def cited(self, view: ResultsView) -> frozenset[int]:
        """Return the indices (results rows) of every number the verdicts print."""
        printed = {id(row) for verdict in self.verdicts for row in verdict.rows}
        return frozenset(index for index, row in enumerate(view.rows.rows) if id(row) in printed)


def _moves(view: ResultsView, deltas: list[Row], alternative: str, cited: list[Row]) -> str:
    """Return how far the outputs' scores move: each delta with two outputs or fewer, the range beyond."""
    rule, primary = view.main_rule, view.primary
    difference = f"{rule} F1 against {primary} minus F1 against {alternative}"
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in deltas)
    if len(deltas) <= 2:
        cited += deltas
        each = " and ".join(f"{said(row)} for {row['output']}" for row in deltas)
        return f"The {difference} is {each} F1 points."
    low = min(deltas, key=lambda row: row["estimate"])
    high = max(deltas, key=lambda row: row["estimate"])
    cited += [low, high]
    return (
        f"Each output's {difference} lies between {said(low)} ({low['output']}) and {said(high)} "
        f"({high['output']}) F1 points; {count_phrase(excluding, len(deltas), 'interval')} "
        f"{formatting.verb_of(excluding, len(deltas), 'excludes', 'exclude')} zero."
    )


def _ranking(view: ResultsView, alternative: str, outputs: Sequence[str], cited: list[Row]) -> str:
    """Return how the ranking holds under the alternative: tau-b and flips, or the one pair's swing."""
    where = {"rule": view.main_rule, "language": POOLED, "reference": view.primary, "reference_2": alternative}
    flips = view.row("leaderboard", "flips", **where)
    if flips is not None and flips["estimate"] is not None:
        ranked = len({row["output"] for _, row in view.rows.select("leaderboard", "rank")})
        tau = view.row("leaderboard", "kendall_tau", **where)
        significant = view.row("leaderboard", "flips_significant", **where)
        cited += [row for row in (flips, tau, significant) if row is not None]
        moved = round(flips["estimate"])
        if view.undecidable:  # said in full once, in the draft note at the top, not once per reference
            holm = f", {UNDECIDED_FLIPS}."
        else:
            holm = (f", {formatting.number(significant['estimate'], 0) if significant else formatting.UNDEFINED} "
                    "of them significantly after Holm.")
        return (
            f" The ranking of {ranked} outputs: tau-b {said(tau)}; {said(flips)} of "
            f"{formatting.counted(ranked * (ranked - 1) // 2, 'pair')} {formatting.verb(moved, 'changes', 'change')} "
            "order" + holm
        )
    if len(outputs) == 2:
        swing = view.row("interaction", "swing", output=outputs[0], output_2=outputs[1], **where)
        if swing is not None and swing["estimate"] is not None:
            cited.append(swing)
            excludes = formatting.excludes_zero(swing["ci_low"], swing["ci_high"])
            if swing["p_holm"] is None or view.undecidable:
                verdict = "its interval excludes zero" if excludes else "its interval includes zero"
                holm = "outside the Holm family" if swing["p_holm"] is None else "this run cannot decide significance"
            else:
                holm = f"Holm p {formatting.p_value(swing['p_holm'])}"
                verdict = ("significant after Holm: the comparison itself depends on the reference"
                           if view.significant(swing["p_holm"]) else
                           "its interval excludes zero, but it is not significant after Holm" if excludes else
                           "its interval includes zero")  # fmt: skip
            return f" The margin {outputs[0]} − {outputs[1]} changes by {said(swing)} F1 points ({holm}): {verdict}."
    return ""


def verdicts(view: ResultsView) -> list[Verdict]:
    """Return one verdict per alternative reference, pooled, under the main rule."""
    found = []
    for alternative in view.references[1:]:
        deltas = [row for _, row in view.rows.select("swap", "delta", rule=view.main_rule, language=POOLED,
                                                     reference=view.primary, reference_2=alternative)
                  if row["estimate"] is not None]  # fmt: skip
        if not deltas:
            continue
        outputs = [row["output"] for row in deltas]
        cited: list[Row] = []
        text = _moves(view, deltas, alternative, cited) + _ranking(view, alternative, outputs, cited)
        found.append(Verdict(reference=alternative, primary=view.primary, text=text, rows=tuple(cited)))
    return found


def build_summary(view: ResultsView, drawn: Mapping[str, Figure], sections: Sequence[Section]) -> Summary:
    """Return the summary block from the results, the drawn figures and the (unnumbered) sections."""
    findings = headline_sentences(view)
    figure = next((drawn[key] for key in FIGURE_KEYS if key in drawn), None)
    skipped = tuple(NotApplicable(section.title, section.not_applicable) for section in sections
                    if section.not_applicable and not section.tables and not section.figures)  # fmt: skip
    empty = view.applicability("swap") or NO_VERDICT
    return Summary(verdicts=tuple(verdicts(view)), findings=tuple(findings), figure=figure, not_applicable=skipped,
                   empty=empty, lead=lead(view))  # fmt: skip


def lead(view: ResultsView) -> str:
    """Return the sentence that introduces the verdicts and findings."""
    return (f"How far does a score move when only the gold changes? Each alternative reference against the primary "
            f"one, {view.primary}, then what each analysis found (pooled over the languages; F1 scores and "
            f"differences in F1 points with {view.confidence_label}s; per-language results are in the sections):")


def markdown(summary: Summary) -> str:
    """Return the summary as Markdown (the dataset card): the same lead, verdicts, findings and list of what does
    not apply as the appendix prints, without its figure."""
    lines = [markdown_text(summary.lead if summary.verdicts else summary.empty), ""]
    for verdict in summary.verdicts:
        lines.append(f"- **{markdown_text(verdict.reference)}** instead of {markdown_text(verdict.primary)}. "
                     f"{markdown_text(verdict.text)}")  # fmt: skip
    lines += [f"- {markdown_text(finding)}" for finding in summary.findings]
    if summary.not_applicable:
        lines += ["", "Not applicable to this record:", ""]
        lines += [f"- **{markdown_text(skipped.title)}**: {markdown_text(skipped.reason)}"
                  for skipped in summary.not_applicable]  # fmt: skip
    return "\n".join(lines).replace("\n\n\n", "\n\n").strip("\n") + "\n"


def headline_sentences(view: ResultsView) -> list[str]:
    """Return the headline findings, each a sentence with its numbers and intervals, in the analyses' order."""
    return [sentence for analysis in ANALYSES for sentence in analysis.headlines(view)]


NO_VERDICT = "The record has no pair of references to compare, so no score can be said to move with the reference."


def one_line(view: ResultsView) -> str:
    """Return the appendix's answer in one line, as `build` ends with it: the sensitivity band's headline (how far
    a score can move with the reference alone), else the first verdict, else why there is none."""
    for analysis in ANALYSES:
        if analysis.key == "band" and (sentences := analysis.headlines(view)):
            return sentences[0]
    found = verdicts(view)
    if found:
        return f"{found[0].primary} → {found[0].reference}: {found[0].text}"
    return view.applicability("swap") or NO_VERDICT


def shown_in_summary(summary: Summary) -> str | None:
    """Return the key of the figure the summary shows (its section then refers to it), or None."""
    return summary.figure.key if summary.figure else None
