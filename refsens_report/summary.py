"""The answer first: the summary that opens the appendix, on screen and as the PDF's first page after the title.

One verdict per alternative reference (how far each output's score moves when the primary reference is
swapped for it, with intervals, and how the ranking holds: tau-b, flips, how many are significant after Holm),
then each analysis's headline findings in the same list (the band, the neutrality of the primary reference, ...:
the appendix has no second list of them), one figure (the rank chart with 3+ ranked outputs, the swap figure
otherwise) and the analyses that do not apply, one line each. Every number is a results row as printed
(``prose.said``), so the summary equals results.csv.

Each piece is an analysis's declaration (``analyses/base.py``): the verdicts (``Analysis.verdicts``, the swap's),
the findings (``headlines``), the figure (``summary_figure``) and the one-line answer (``one_line``, the band's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from refsens_report.analyses.base import Section, Verdict
from refsens_report.analyses.registry import ANALYSES
from refsens_report.figures import Figure
from refsens_report.prose import markdown_text
from refsens_report.view import ResultsView

TITLE = "Summary"


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


def build_summary(view: ResultsView, drawn: Mapping[str, Figure], sections: Sequence[Section]) -> Summary:
    """Return the summary block from the results, the drawn figures and the (unnumbered) sections."""
    findings = headline_sentences(view)
    offered = sorted(
        (analysis.summary_figure for analysis in ANALYSES if analysis.summary_figure is not None),
        key=lambda offer: offer.fallback,
    )
    figure = next((drawn[offer.key] for offer in offered if offer.key in drawn), None)
    skipped = tuple(
        NotApplicable(section.title, section.not_applicable)
        for section in sections
        if section.not_applicable and not section.tables and not section.figures
    )
    empty = no_verdict(view)
    return Summary(
        verdicts=tuple(verdicts(view)),
        findings=tuple(findings),
        figure=figure,
        not_applicable=skipped,
        empty=empty,
        lead=lead(view),
    )


def lead(view: ResultsView) -> str:
    """Return the sentence that introduces the verdicts and findings."""
    return (
        f"How far does a score move when only the gold changes? Each alternative reference against the primary "
        f"one, {view.primary}, then what each analysis found (pooled over the languages; F1 scores and "
        f"differences in F1 points with {view.confidence_label}s; per-language results are in the sections):"
    )


def markdown(summary: Summary) -> str:
    """Return the summary as Markdown (the dataset card): the same lead, verdicts, findings and list of what does
    not apply as the appendix prints, without its figure."""
    lines = [markdown_text(summary.lead if summary.verdicts else summary.empty), ""]
    for verdict in summary.verdicts:
        lines.append(
            f"- **{markdown_text(verdict.reference)}** instead of {markdown_text(verdict.primary)}. "
            f"{markdown_text(verdict.text)}"
        )
    lines += [f"- {markdown_text(finding)}" for finding in summary.findings]
    if summary.not_applicable:
        lines += ["", "Not applicable to this record:", ""]
        lines += [
            f"- **{markdown_text(skipped.title)}**: {markdown_text(skipped.reason)}"
            for skipped in summary.not_applicable
        ]
    return "\n".join(lines).replace("\n\n\n", "\n\n").strip("\n") + "\n"


def verdicts(view: ResultsView) -> list[Verdict]:
    """Return one verdict per alternative reference, pooled, under the main rule (``Analysis.verdicts``)."""
    return [verdict for analysis in ANALYSES if analysis.verdicts is not None for verdict in analysis.verdicts(view)]


def no_verdict(view: ResultsView) -> str:
    """Return why there is no verdict: the applicability of the analysis that gives them, else NO_VERDICT."""
    giving = [analysis.key for analysis in ANALYSES if analysis.verdicts is not None]
    return next((why for key in giving if (why := view.applicability(key))), None) or NO_VERDICT


def headline_sentences(view: ResultsView) -> list[str]:
    """Return the headline findings, each a sentence with its numbers and intervals, in the analyses' order."""
    return [sentence for analysis in ANALYSES for sentence in analysis.headlines(view)]


NO_VERDICT = "The record has no pair of references to compare, so no score can be said to move with the reference."


def one_line(view: ResultsView) -> str:
    """Return the appendix's answer in one line, as `build` ends with it: the sensitivity band's headline (how far
    a score can move with the reference alone), else the first verdict, else why there is none."""
    for analysis in ANALYSES:
        if analysis.one_line and (sentences := analysis.headlines(view)):
            return sentences[0]
    found = verdicts(view)
    if found:
        return f"{found[0].primary} → {found[0].reference}: {found[0].text}"
    return no_verdict(view)


def shown_in_summary(summary: Summary) -> str | None:
    """Return the key of the figure the summary shows (its section then refers to it), or None."""
    return summary.figure.key if summary.figure else None
