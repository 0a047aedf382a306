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


SUMMARY_OUTPUTS = 3  # more outputs than this (or more pairs of references): headlines summarise, not enumerate


def summarise(view: ResultsView) -> bool:
    """Return whether the record is leaderboard-sized: headline sentences then summarise instead of listing."""
    return len(view.outputs) > SUMMARY_OUTPUTS or len(view.reference_pairs()) > SUMMARY_OUTPUTS


def _alpha(view: ResultsView) -> float:
    return 1 - view.data.get("confidence", 0.95)


def _pair_label(row: Row) -> str:
    return f"{row['reference']} vs {row['reference_2']}"


def _delta_summary(view: ResultsView, deltas: list[Row]) -> str:
    """Return the swap finding for many outputs: the largest pooled delta and how many exclude zero."""
    rule = view.main_rule
    defined = [row for row in deltas if row["estimate"] is not None]
    largest = largest_pooled_delta(view)
    outputs = len({row["output"] for row in defined})
    pairs = len({(row["reference"], row["reference_2"]) for row in defined})
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in defined)
    sentence = (
        f"The score moves with the reference alone: across {outputs} outputs and {pairs} pair"
        f"{'s' if pairs != 1 else ''} of references, the pooled {rule} F1 of a fixed output moves by up to "
        f"{said(largest)} F1 points ({largest['output']}, {_pair_label(largest)})" if largest else
        f"The score moves with the reference alone (pooled {rule})"
    )
    sentence += f"; {_count_phrase(excluding, len(defined), 'pooled deltas')} have intervals excluding zero."
    per_language = [row for _, row in view.rows.select("swap", "delta", rule=rule)
                    if row["language"] != POOLED and row["estimate"] is not None]  # fmt: skip
    if len(view.languages) > 2 and per_language:
        top = max(per_language, key=lambda row: abs(row["estimate"]))
        sentence += (f" The largest per-language movement is {said(top)} ({top['output']}, {top['language']}, "
                     f"{_pair_label(top)}).")  # fmt: skip
    return sentence


def _floor_caveat(view: ResultsView) -> str:
    """Return ', but ... no Holm p can fall below F' when the Holm floor makes 'not significant' empty, else ''."""
    floor = _row(view, "leaderboard", "holm_floor")
    if floor is None or floor["estimate"] is None or floor["estimate"] < _alpha(view):
        return ""
    family = len(view.rows.select("interaction", "swing"))
    return (
        f" (with {formatting.count(family)} swings and {formatting.count(view.data.get('resamples'))} replicates no "
        f"Holm p can fall below {said(floor)}, so this says nothing about the swings)"
    )


def _swing_summary(view: ResultsView) -> str:
    """Return the interaction finding for many pairs: the largest pooled swing and the Holm tally."""
    rule = view.main_rule
    pooled = [row for _, row in view.rows.select("interaction", "swing", rule=rule, language=POOLED)
              if row["estimate"] is not None]  # fmt: skip
    family = [row for _, row in view.rows.select("interaction", "swing") if row["p_holm"] is not None]
    significant = sum(row["p_holm"] < _alpha(view) for row in family)
    excluding = sum(formatting.excludes_zero(row["ci_low"], row["ci_high"]) for row in pooled)
    largest = max(pooled, key=lambda row: abs(row["estimate"]))
    return (
        f"The comparison moves too: of {len(pooled)} pooled {rule} swings (every pair of outputs under every pair "
        f"of references), {excluding} have intervals excluding zero; the largest is {said(largest)} F1 points "
        f"({largest['output']} − {largest['output_2']}, {_pair_label(largest)}; Holm p "
        f"{formatting.p_value(largest['p_holm'])}). {significant} of {formatting.count(len(family))} swings in the "
        f"Holm family have Holm p < {formatting.number(_alpha(view), 2)}{_floor_caveat(view)}."
    )


def pooled_margins_beyond_band(view: ResultsView, band: Row) -> tuple[int, int]:
    """Return how many pooled margins (main rule, primary reference, every pair of outputs) exceed the band."""
    margins = [row for _, row in view.rows.select("interaction", "margin", rule=view.main_rule, language=POOLED,
                                                  reference=view.primary) if row["estimate"] is not None]  # fmt: skip
    return sum(abs(row["estimate"]) > band["estimate"] for row in margins), len(margins)


def leaderboard_headline(view: ResultsView) -> list[str]:
    """Return one sentence: how many pairs change order under each alternative to the primary reference."""
    if not view.rows.has("leaderboard", "flips"):
        return []
    ranked = {row["output"] for _, row in view.rows.select("leaderboard", "rank")}
    pairs = len(ranked) * (len(ranked) - 1) // 2
    rule = view.main_rule
    parts = []
    significant_total = 0
    for reference in view.references[1:]:
        where = {"rule": rule, "language": POOLED, "reference": view.primary, "reference_2": reference}
        flips = _row(view, "leaderboard", "flips", **where)
        if flips is None or flips["estimate"] is None:
            continue
        significant = _row(view, "leaderboard", "flips_significant", **where)
        significant_total += int(significant["estimate"] or 0) if significant else 0
        tau = _row(view, "leaderboard", "kendall_tau", **where)
        parts.append(f"{formatting.number(flips['estimate'], 0)} under {reference}"
                     + (f" (tau-b {said(tau)})" if tau else ""))  # fmt: skip
    if not parts:
        return []
    return [
        f"The leaderboard of {len(ranked)} outputs changes with the reference: of its {pairs} pairs of outputs, "
        f"compared with {view.primary}, {'; '.join(parts)} change order ({rule}, pooled); {significant_total} of "
        f"these flips are significant after Holm"
        + (", which the Holm floor stated above makes uninformative." if _floor_caveat(view) else ".")
    ]


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
            f"On {audited} audited items in {languages} language{'' if languages == 1 else 's'}, the primary reference, {view.primary}, "
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
    if deltas and summarise(view):
        sentences.append(_delta_summary(view, deltas))
    elif deltas:
        several = len({(row["reference"], row["reference_2"]) for row in deltas}) > 1
        parts = [
            f"{row['output']}" + (f" ({row['reference']} vs {row['reference_2']})" if several else "") + f" {said(row)}"
            for row in deltas
            if row["estimate"] is not None
        ]
        per_language = [
            row
            for _, row in view.rows.select("swap", "delta", rule=rule)
            if row["language"] != POOLED and row["estimate"] is not None
        ]
        first_ref, second_ref = deltas[0]["reference"], deltas[0]["reference_2"]
        against = "the first reference minus its F1 against the second" if several else (
            f"{first_ref} minus its F1 against {second_ref}")
        sentence = (
            f"The score moves with the reference alone: holding each output fixed, its pooled {rule} F1 against "
            f"{against} is {'; '.join(parts)} F1 points."
        )
        if per_language:
            largest = max(per_language, key=lambda row: abs(row["estimate"]))
            sentence += (
                f" The largest per-language movement is {said(largest)} ({largest['output']}, "
                f"{largest['language']})."
            )
        sentences.append(sentence)

    swing = pooled_swing(view)
    if swing is not None and summarise(view):
        sentences.append(_swing_summary(view))
    elif swing is not None:
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
        if summarise(view):
            exceeding, compared = pooled_margins_beyond_band(view, band)
            sentence += (
                f": {_count_phrase(exceeding, compared, 'pooled margins')} between pairs of outputs under "
                f"{view.primary} exceed it; a margin inside the band could come from the choice of reference alone."
            )
        elif compared:
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

    sentences += leaderboard_headline(view) if summarise(view) else leaderboard_sentences(view)[:1]

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
    single = len(view.reference_pairs()) == 1  # with several pairs the Holm floor caveat is said once, at the end
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
        if floor is not None and floor["estimate"] is not None and floor["estimate"] >= alpha and single:
            sentence += (
                f", which says nothing here: with this many swings and {view.data.get('resamples')} replicates no "
                f"Holm p can fall below {said(floor)}"
            )
        sentence += f"; tau-b {said(tau)}" if tau else ""
        sentence += f"; the whole ranking differs in {said(moves)} of bootstrap replicates." if moves else "."
        sentences.append(sentence)
    if floor is not None:
        sentences.append(
            f"Holm floor: with {formatting.count(len(view.rows.select('interaction', 'swing')))} swings in the family "
            f"and {formatting.count(view.data.get('resamples'))} replicates, the smallest Holm p any swing can reach "
            f"is {said(floor)}"
            + (
                ", so no flip can be significant after Holm here, and 'none significantly' says nothing about them."
                if not single and floor["estimate"] is not None and floor["estimate"] >= alpha
                else "."
            )
        )
    return sentences
