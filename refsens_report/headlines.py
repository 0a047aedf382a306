"""Headline findings: sentences that carry their numbers and intervals, picked from results.json rows.

Nothing here computes a statistic: it selects rows (the pooled one, the largest |delta|) and prints them with
``formatting``; counting how many printed margins exceed the printed band is the only tally it makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from refsens_report import formatting
from refsens_report.formatting import format_row
from refsens_report.tables import POOLED, ResultsView

Row = Mapping[str, Any]


def _row(view: ResultsView, analysis: str, statistic: str, **criteria: str) -> Row | None:
    found = view.rows.one(analysis, statistic, **criteria)
    return found[1] if found else None


def said(row: Row | None) -> str:
    """Return a statistic as printed: estimate and interval."""
    return format_row(row).text if row else formatting.UNDEFINED


def said_percent(row: Row | None) -> str:
    """Return a rate as printed, with '%' after the estimate: '84.6% [83.1, 86.0]'."""
    if row is None:
        return formatting.UNDEFINED
    printed = format_row(row)
    return f"{printed.estimate}% {printed.interval}".strip()


def _includes_zero(row: Row) -> bool:
    return not formatting.excludes_zero(row["ci_low"], row["ci_high"])


def primary_skew(view: ResultsView) -> Row | None:
    """Return the pooled skew of the primary reference between the first two annotators."""
    if len(view.annotators) < 2:
        return None
    first, second = view.annotators[:2]
    return _row(view, "neutrality", "skew", language=POOLED, output=first, output_2=second, reference=view.primary)


def largest_pooled_delta(view: ResultsView) -> Row | None:
    """Return the pooled swap delta (main rule) with the largest absolute estimate."""
    candidates = [
        row
        for _, row in view.rows.select("swap", "delta", rule=view.main_rule, language=POOLED)
        if row["estimate"] is not None
    ]
    return max(candidates, key=lambda row: abs(row["estimate"]), default=None)


def pooled_swing(view: ResultsView) -> Row | None:
    """Return the pooled swing (main rule) for the first pair of outputs and of references."""
    if not view.output_pairs() or not view.reference_pairs():
        return None
    (output, output_2), (first, second) = view.output_pairs()[0], view.reference_pairs()[0]
    return _row(view, "interaction", "swing", rule=view.main_rule, language=POOLED, output=output,
                output_2=output_2, reference=first, reference_2=second)  # fmt: skip


def overall_band(view: ResultsView, rule: str | None = None) -> Row | None:
    """Return the overall band (empty output) for a rule, strict by default."""
    return _row(view, "band", "band", rule=rule or view.main_rule, language=POOLED, output="")


@dataclass(frozen=True)
class VersionFigures:
    """The four numbers site/index.html shows for each version, as printed."""

    skew: str
    skew_reference: str
    delta: str
    delta_label: str
    swing: str
    swing_p: str
    band: str
    band_rule: str


def version_figures(view: ResultsView) -> VersionFigures:
    """Return the headline figures of one version for the site index."""
    skew = primary_skew(view)
    delta = largest_pooled_delta(view)
    swing = pooled_swing(view)
    band = overall_band(view)
    return VersionFigures(
        skew=said(skew),
        skew_reference=view.primary,
        delta=said(delta),
        delta_label=(f"{delta['output']}, {delta['reference']} vs {delta['reference_2']}, {delta['rule']}"
                     if delta else ""),  # fmt: skip
        swing=said(swing),
        swing_p=formatting.p_value(swing["p_holm"]) if swing else formatting.UNDEFINED,
        band=f"±{formatting.number(band['estimate'], 2)}" if band and band["estimate"] is not None else formatting.UNDEFINED,
        band_rule=view.main_rule,
    )


def margins_beyond_band(view: ResultsView) -> tuple[int, int, Row | None]:
    """Return how many printed margins under the primary reference exceed the band, of how many, and the band."""
    band = overall_band(view)
    if band is None or band["estimate"] is None or not view.output_pairs():
        return 0, 0, band
    output, output_2 = view.output_pairs()[0]
    exceeding = compared = 0
    for language in view.languages:
        margin = _row(view, "interaction", "margin", rule=view.main_rule, language=language, output=output,
                      output_2=output_2, reference=view.primary)  # fmt: skip
        if margin and margin["estimate"] is not None:
            compared += 1
            exceeding += abs(margin["estimate"]) > band["estimate"]
    return exceeding, compared, band


def _count_phrase(count: int, total: int, noun: str) -> str:
    return f"{count} of {total} {noun}"


def headline_sentences(view: ResultsView) -> list[str]:
    """Return the headline findings, each a sentence with its numbers and intervals (pooled, main rule)."""
    sentences: list[str] = []
    rule = view.main_rule
    audited = formatting.count(view.subset_size("audited"))
    languages = len(view.languages) - 1

    skew = primary_skew(view)
    if skew is not None:
        first, second = view.annotators[:2]
        rate_first = _row(view, "neutrality", "rate", language=POOLED, output=first, reference=view.primary)
        rate_second = _row(view, "neutrality", "rate", language=POOLED, output=second, reference=view.primary)
        copied = _row(view, "neutrality", "copied", language=POOLED, reference=view.primary)
        leaning = (
            "an interval that includes zero"
            if _includes_zero(skew)
            else f"it favours {first if skew['estimate'] > 0 else second}"
        )
        sentence = (
            f"On {audited} audited items in {languages} languages, the primary reference, {view.primary}, "
            f"reproduces {first}'s span set exactly on {said_percent(rate_first)} of items and {second}'s on "
            f"{said_percent(rate_second)}: a skew of {said(skew)} points ({leaning})."
        )
        if copied is not None:
            sentence += f" It equals at least one annotator's labelling on {said_percent(copied)} of items."
        sentences.append(sentence)

    default = _row(view, "agreement", "default_to_first", language=POOLED)
    if default is not None and default["estimate"] is not None:
        sentences.append(
            f"Where the annotators differed and no third pass fired, the primary reference equals "
            f"{view.annotators[0]} on {said_percent(default)} of items."
        )

    deltas = [row for _, row in view.rows.select("swap", "delta", rule=rule, language=POOLED)]
    if deltas:
        parts = [f"{row['output']} {said(row)}" for row in deltas if row["estimate"] is not None]
        per_language = [
            row
            for _, row in view.rows.select("swap", "delta", rule=rule)
            if row["language"] != POOLED and row["estimate"] is not None
        ]
        first_ref, second_ref = deltas[0]["reference"], deltas[0]["reference_2"]
        sentence = (
            f"The score moves with the reference alone: holding each output fixed, its pooled {rule} F1 against "
            f"{first_ref} minus its F1 against {second_ref} is {'; '.join(parts)} F1 points."
        )
        if per_language:
            largest = max(per_language, key=lambda row: abs(row["estimate"]))
            sentence += (
                f" The largest per-language movement is {said(largest)} ({largest['output']}, "
                f"{largest['language']})."
            )
        sentences.append(sentence)

    swing = pooled_swing(view)
    if swing is not None:
        family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
        significant = sum(row["p_holm"] < 0.05 for row in family)
        sentences.append(
            f"The comparison moves too: the margin {swing['output']} − {swing['output_2']} under "
            f"{swing['reference']} minus the same margin under {swing['reference_2']} is {said(swing)} F1 points "
            f"pooled ({rule}; paired swing, Holm p {formatting.p_value(swing['p_holm'])}); "
            f"{_count_phrase(significant, len(family), 'swings')} in the Holm family have Holm p < 0.05."
        )

    exceeding, compared, band = margins_beyond_band(view)
    if band is not None and band["estimate"] is not None:
        sentence = f"The {rule} reference-sensitivity band is ±{formatting.number(band['estimate'], 2)} F1 points"
        if compared:
            sentence += (
                f": {_count_phrase(exceeding, compared, 'observed margins')} under {view.primary} (per language "
                f"and pooled) exceed it; a margin inside the band could come from the choice of reference alone."
            )
        else:
            sentence += "."
        sentences.append(sentence)

    if swing is not None:
        clean = _row(view, "decontaminated", "swing", rule=rule, language=POOLED, output=swing["output"],
                     output_2=swing["output_2"], reference=swing["reference"],
                     reference_2=swing["reference_2"])  # fmt: skip
        if clean is not None:
            sentences.append(
                f"On the decontaminated subset ({formatting.count(view.subset_size('decontaminated'))} items where "
                f"{view.primary} copies neither annotator) the pooled {rule} swing is {said(clean)} F1 points."
            )

    sentences += leaderboard_sentences(view)[:1]

    defective = (view.data.get("duplicates") or {}).get("defective_groups") or []
    if (view.data.get("duplicates") or {}).get("available"):
        sentences.append(
            f"{len(defective)} duplicate group{'s' if len(defective) != 1 else ''} with copied references "
            f"{'were' if len(defective) != 1 else 'was'} found"
            + (" and excluded before the analyses." if defective and _excluded(view) else ".")
        )
    return sentences


def _excluded(view: ResultsView) -> bool:
    return bool(view.data.get("config", {}).get("audit", {}).get("exclude_defective_duplicates", True))


def leaderboard_sentences(view: ResultsView) -> list[str]:
    """Return "Under R, k of n pairs change order; j significantly after Holm" per alternative reference."""
    if not view.rows.has("leaderboard", "flips"):
        return []
    ranked = {row["output"] for _, row in view.rows.select("leaderboard", "rank")}
    pairs = len(ranked) * (len(ranked) - 1) // 2
    rule = view.main_rule
    floor = _row(view, "leaderboard", "holm_floor")
    alpha = 1 - view.data.get("confidence", 0.95)
    sentences = []
    for first, second in view.reference_pairs():
        where = {"rule": rule, "language": POOLED, "reference": first, "reference_2": second}
        flips = _row(view, "leaderboard", "flips", **where)
        if flips is None or flips["estimate"] is None:
            continue
        significant = _row(view, "leaderboard", "flips_significant", **where)
        tau = _row(view, "leaderboard", "kendall_tau", **where)
        moves = _row(view, "leaderboard", "p_rank_change", output="", **where)
        sentence = (
            f"Under {second} instead of {first}, {formatting.number(flips['estimate'], 0)} of {pairs} pairs of "
            f"outputs change order ({rule}, pooled; {said(flips)}); "
            f"{said(significant) if significant else formatting.UNDEFINED} significantly after Holm"
        )
        if floor is not None and floor["estimate"] is not None and floor["estimate"] >= alpha:
            sentence += (
                f", which says nothing here: with this many swings and {view.data.get('resamples')} replicates no "
                f"Holm p can fall below {said(floor)}"
            )
        sentence += f"; tau-b {said(tau)}" if tau else ""
        sentence += f"; the whole ranking differs in {said(moves)} of bootstrap replicates." if moves else "."
        sentences.append(sentence)
    if floor is not None:
        sentences.append(
            f"Holm floor: with {len(view.rows.select('interaction', 'swing'))} swings in the family and "
            f"{view.data.get('resamples')} replicates, the smallest Holm p any swing can reach is {said(floor)}."
        )
    return sentences
