"""The leaderboard under each reference: ranks with intervals, Kendall's tau-b, order flips, rank changes.

Applies with three or more ranked outputs (outputs that are not themselves references) and two or more
references. Its statistics are computed in ``ranking.py`` after Holm, on the audited draws the swap and the
interaction used (docs/leaderboard.md); this module is the analysis: when it applies, its tables, figures and
sentences.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import (
    DIFFERENCES,
    Analysis,
    AuditContext,
    MetadataSentences,
    Ranking,
    ReleaseCheck,
    ReleaseRows,
    Rows,
    Section,
    StatKind,
    SummaryFigure,
    defined_pooled,
    pooled_rows,
)
from refsens_report.analyses.interaction import holm_family_phrase, holm_family_size
from refsens_report.analyses.ranking import (
    MIN_OUTPUTS,
    leaderboard_rows,
    partial_statistic,
    ranked_outputs,
)
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    FIGURE_ROWS,
    INK,
    LABEL_PITCH,
    MIN_TEXT_PT,
    MUTED,
    OKABE_ITO,
    WIDTH,
    Figure,
    column_angle,
    dodged,
    drawn_note,
    fits_cells,
    labels_width,
    matrix_labels,
    mpl,
    plain,
    style,
    subplots,
)
from refsens_report.prose import count_phrase, said, where_pooled
from refsens_report.record import POOLED
from refsens_report.tables import (
    Cell,
    Table,
    label,
    long_layout,
    mark_repeats,
    one_language,
    p_cell,
    stat_cell,
)
from refsens_report.view import UNDECIDED_FLIPS, ResultsView, Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """The leaderboard rows, after Holm (flip rows carry their swing's Holm p), on the audited draws."""
    return leaderboard_rows(estimator, context.subsets.audited, context.config, rows)


def applicability(context: AuditContext) -> dict[str, str | None]:
    config = context.config
    applies = len(ranked_outputs(config)) >= MIN_OUTPUTS and len(config.roles.references) >= 2
    return {
        "leaderboard": None
        if applies
        else "A leaderboard needs three or more scored outputs (that are not themselves references) and two or more "
        "references.",
    }


# --- the report ------------------------------------------------------------------------------------


PAPER_KEY = "leaderboard-paper"  # the leaderboard as a paper prints it: also the brief PDF's table


def paper_table(view: ResultsView) -> Table:
    """The leaderboard as a paper prints it: one row per ranked output in the primary reference's order, and its
    F1 with interval and rank under each reference (primary first), main rule; pooled, then each language when
    the record has several."""
    rows = view.rows
    rule, primary, outputs = view.main_rule, view.primary, view.ranked_outputs()
    several = len(view.languages) > 2  # with one language, the pooled rows are that language's
    languages = [POOLED, *view.languages[:-1]] if several else [POOLED]
    table_rows = []
    for language in languages:
        found = {
            (output, reference): rows.one(
                "leaderboard", "score", rule=rule, language=language, output=output, reference=reference
            )
            for output in outputs
            for reference in view.references
        }
        ranks = {
            (output, reference): rows.one(
                "leaderboard", "rank", rule=rule, language=language, output=output, reference=reference
            )
            for output in outputs
            for reference in view.references
        }

        def position(output: str) -> tuple[float, int]:
            rank = ranks[output, primary][1]["estimate"] if ranks[output, primary] else None
            return (rank if rank is not None else math.inf, outputs.index(output))

        for output in sorted(outputs, key=position):  # an ordering of printed ranks, not a new number
            cells = [label(language)] if several else []
            cells.append(label(output))
            for reference in view.references:
                cells += [stat_cell(found[output, reference]), stat_cell(ranks[output, reference], interval=False)]
                if reference == primary:
                    cells.append(
                        stat_cell(
                            rows.one(
                                "leaderboard",
                                "tie_group",
                                rule=rule,
                                language=language,
                                output=output,
                                reference=reference,
                            )
                        )
                    )
            table_rows.append(cells)
    labels = ["Language", "Output"] if several else ["Output"]
    columns, groups = list(labels), [("", len(labels))]
    for reference in view.references:
        columns += [f"F1 [{view.confidence_label}]", "Rank"] + (["Tie group"] if reference == primary else [])
        groups.append((reference, 3 if reference == primary else 2))
    where = (
        "pooled over the languages, then per language"
        if several
        else view.languages[0]
        if len(view.languages) == 2
        else "pooled"
    )
    return Table(
        key=PAPER_KEY,
        title="The leaderboard under each reference, as a paper prints it",
        caption=(
            f"Micro-F1 (F1 points, {rule}, {where}) of every ranked output under each reference, primary "
            f"({primary}) first, with {view.confidence_label}s from the paired bootstrap on the audited subset "
            f"({view.items_phrase('audited')}), and its rank (1 = highest; ties share their average rank). Outputs "
            f"in order of their rank under {primary}. Tie group: outputs whose rank intervals under {primary} "
            "overlap share a group (1 = the top). Rank sets and intervals, every rule and the chance that a rank "
            "moves are in the next tables and their CSVs."
        ),
        columns=tuple(columns),
        groups=tuple(groups),
        rows=mark_repeats(table_rows, 1) if several else tuple(tuple(row) for row in table_rows),
    )


def leaderboard_tables(view: ResultsView) -> list[Table]:
    """The leaderboard: the paper-style wide table, or in long layout a board per reference (outputs in rank
    order) and a table of how likely each rank is to move."""
    pairs = view.reference_pairs()
    if not long_layout(view, 2 * len(view.references) + len(pairs)):
        return [leaderboard_table(view)]
    rows = view.rows
    outputs = view.ranked_outputs()
    board_rows = []
    for rule in view.rules:
        for language in view.languages:
            for reference in view.references:
                found = {
                    output: rows.one(
                        "leaderboard", "rank", rule=rule, language=language, output=output, reference=reference
                    )
                    for output in outputs
                }

                def position(output: str) -> tuple[float, int]:
                    rank = found[output][1]["estimate"] if found[output] else None
                    return (rank if rank is not None else float("inf"), outputs.index(output))

                for output in sorted(outputs, key=position):  # an ordering of printed ranks, not a new number
                    board_rows.append(
                        [
                            label(rule),
                            label(language),
                            label(reference),
                            label(output),
                            stat_cell(
                                rows.one(
                                    "leaderboard",
                                    "score",
                                    rule=rule,
                                    language=language,
                                    output=output,
                                    reference=reference,
                                )
                            ),
                            stat_cell(found[output]),
                            *rank_set_cells(view, rule=rule, language=language, output=output, reference=reference),
                        ]
                    )
    board = Table(
        key="leaderboard",
        title="The leaderboard under each reference",
        caption=(
            "Micro-F1 (F1 points) and rank (1 = highest; ties share their average rank) of every ranked output "
            "(an output that is not itself a reference) under each reference, outputs in rank order, on the "
            f"audited subset, with {view.confidence_label}s from the same paired bootstrap as the swings. "
            + RANK_SETS_SAID.format(level=f"{view.confidence * 100:g}%")
        ),
        columns=(
            "Rule",
            "Language",
            "Reference",
            "Output",
            f"F1 [{view.confidence_label}]",
            f"Rank [{view.confidence_label}]",
            *RANK_SET_COLUMNS,
        ),
        groups=(("", 6), ("Simultaneous rank set", 3)),
        rows=mark_repeats(board_rows, 3),
    )
    if rows.has("leaderboard", "best_set"):
        board = rank_sets_board(view, board)
    move_rows = []
    for rule in view.rules:
        for language in view.languages:
            for output in outputs:
                cells = [label(rule), label(language), label(output)]
                cells.append(
                    stat_cell(
                        rows.one(
                            "leaderboard",
                            "tie_group",
                            rule=rule,
                            language=language,
                            output=output,
                            reference=view.primary,
                        )
                    )
                )
                cells += [
                    stat_cell(
                        rows.one(
                            "leaderboard",
                            "p_rank_change",
                            rule=rule,
                            language=language,
                            output=output,
                            reference=first,
                            reference_2=second,
                        )
                    )
                    for first, second in pairs
                ]
                move_rows.append(cells)
    moves = Table(
        key="rank-moves",
        title="How likely each rank is to move",
        caption=(
            f"Tie group: outputs whose rank intervals under {view.primary} overlap share a group (1 = the top). "
            "P(rank moves): share of bootstrap replicates in which the output's rank under the first reference of "
            "a pair differs from its rank under the second, audited subset."
        ),
        columns=("Rule", "Language", "Output", "Tie group", *(f"{first} → {second}" for first, second in pairs)),
        groups=(("", 4), ("P(rank moves)", len(pairs))),
        rows=mark_repeats(move_rows, 2),
    )
    return [board, main_rule_on_the_page(view, moves)]


def main_rule_on_the_page(view: ResultsView, table: Table) -> Table:
    """Return a long table (its first column the rule) as the page prints it at leaderboard scale: the main rule's
    rows, the one the summary and the figures use; its CSV, and the annex of a full PDF, keep every rule."""
    kept = [[replace(cell, repeated=False) for cell in row] for row in table.rows if row[0].text == view.main_rule]
    if len(view.rules) < 2 or not kept:
        return table
    labels = next((index for index, cell in enumerate(kept[0]) if cell.numeric), len(kept[0]))
    complete = one_language(table, view)  # as the CSV is written: with one language, its rows once
    note = (
        f"The page shows the {view.main_rule} rule's rows; the table's CSV holds every rule's "
        f"({formatting.count(len(complete.rows))} rows)."
    )
    return replace(table, rows=mark_repeats(kept, max(labels - 1, 0)), notes=(*table.notes, note), csv=complete)


RANK_SET_COLUMNS = ("From", "To", "Plausible best")
RANK_SETS_SAID = (
    "Simultaneous rank set: ranks that every output can hold at once with {level} confidence (Mogstad, Romano, "
    "Shaikh and Wilhelm's step-down over all pairs, per reference, rule and language); the percentile rank "
    "interval covers one output at a time. Plausible best: 1 when the output's set contains rank 1."
)


SETS_SAID = (  # the From, To and Best columns of a table that prints the rank set beside the rank
    "From, To: the ranks every output can hold at once with {level} confidence (Mogstad, Romano, Shaikh and "
    "Wilhelm's step-down over all pairs, per reference, rule and language; the percentile rank interval covers "
    "one output at a time); Best: 1 when the set contains rank 1 (a plausible best)."
)


def rank_set_cells(view: ResultsView, **where: str) -> list[Cell]:
    """The simultaneous rank set's ends and best-set membership of one output under one reference."""
    return [
        stat_cell(view.rows.one("leaderboard", statistic, **where), interval=False)
        for statistic in ("rank_lower_simultaneous", "rank_upper_simultaneous", "best_set")
    ]


def rank_sets_board(view: ResultsView, complete: Table) -> Table:
    """The board as the page prints it at leaderboard scale: one row per ranked output in the primary
    reference's order (main rule, pooled), and under each reference its rank and simultaneous rank set. The
    scores are in the paper's table before it; every rule and language, the scores and the percentile rank
    intervals are in the table's CSV (``complete``), and in the annex of a full PDF."""
    rule, outputs = view.main_rule, view.ranked_outputs()
    where = {"rule": rule, "language": POOLED}
    ranks = {
        output: view.rows.one("leaderboard", "rank", output=output, reference=view.primary, **where)
        for output in outputs
    }

    def position(output: str) -> tuple[float, int]:
        rank = ranks[output][1]["estimate"] if ranks[output] else None
        return (rank if rank is not None else math.inf, outputs.index(output))

    table_rows = []
    for output in sorted(outputs, key=position):  # an ordering of printed ranks, not a new number
        cells = [label(output)]
        for reference in view.references:
            found = {"output": output, "reference": reference, **where}
            cells += [
                stat_cell(view.rows.one("leaderboard", "rank", **found), interval=False),
                *rank_set_cells(view, **found),
            ]
        table_rows.append(cells)
    where_said = view.languages[0] if len(view.languages) == 2 else "pooled"
    return replace(
        complete,
        caption=(
            f"Rank (1 = highest F1; ties share their average rank) of every ranked output under each reference "
            f"({rule}, {where_said}, audited subset), outputs in order of their rank under {view.primary}, and its "
            "simultaneous rank set: "
            + SETS_SAID.format(level=f"{view.confidence * 100:g}%")
            + " The scores are in the previous table; the table's CSV holds every rule and language, each "
            f"output's F1 and its percentile rank interval ({view.confidence_label}, one output at a time)."
        ),
        columns=("Output", *(RANK_BOARD_COLUMNS * len(view.references))),
        groups=(("", 1), *((reference, len(RANK_BOARD_COLUMNS)) for reference in view.references)),
        rows=tuple(tuple(row) for row in table_rows),
        csv=one_language(complete, view),
    )


RANK_BOARD_COLUMNS = ("Rank", "From", "To", "Best")  # per reference, on the printed board (Best: plausible best)


def _replicability_rows(view: ResultsView, pairs: list[tuple[str, str, str, str]]) -> list[list[Cell]]:
    """One row per (rule, language, A, B): the partial-conjunction p-values by Bonferroni and Fisher, and k-hat."""
    golds = len(view.references)
    table_rows = []
    for rule, language, winner, loser in pairs:
        pair = {"rule": rule, "language": language, "output": winner, "output_2": loser}
        cells = [label(rule), label(language), label(f"{winner} > {loser}")]
        for method in ("bonferroni", "fisher"):
            cells += [
                p_cell(view.rows.one("leaderboard", partial_statistic(method, u), **pair), "p_value")
                for u in range(1, golds + 1)
            ]
        cells.append(stat_cell(view.rows.one("leaderboard", "k_hat", **pair), interval=False))
        table_rows.append(cells)
    return table_rows


def replicability_table(view: ResultsView) -> Table:
    """The p that A beats B under at least u of the K references, and k-hat: on the page the pairs the section's
    sentence names (the top adjacent pairs under the primary reference, main rule, pooled); every ordered pair
    of outputs, every rule and language, in the table's CSV (and the annex of a full PDF)."""
    golds = len(view.references)
    every = [
        (rule, language, k_hat["output"], k_hat["output_2"])
        for rule in view.rules
        for language in view.languages
        for _, k_hat in view.rows.select("leaderboard", "k_hat", rule=rule, language=language)
    ]
    top = [(view.main_rule, POOLED, winner, loser) for winner, loser in adjacent_pairs(view)[:TOP_PAIRS]]
    at_least = [f"u = {u}" for u in range(1, golds + 1)]
    columns = ("Rule", "Language", "Outputs", *at_least, *at_least, "k̂")
    groups = (("", 3), ("Bonferroni p", golds), ("Fisher p", golds), ("", 1))
    caption = (
        f'For an ordered pair of ranked outputs A > B, the p-value of "A beats B under at least u of the '
        f'{golds} references" (partial conjunction of the per-reference one-sided paired-bootstrap p-values, '
        "made non-decreasing in u), by Bonferroni's and Fisher's combination; k̂: the largest u whose "
        f"Bonferroni p is at most {view.level}, family-wise over u (Fisher's assumes independent references, "
        "which references scored on the same items are not; it is shown for comparison). Audited subset."
    )
    complete = Table(
        key="replicability",
        title="Replicability across the references",
        caption=caption,
        columns=columns,
        groups=groups,
        rows=mark_repeats(_replicability_rows(view, every), 2),
    )
    if not top or len(top) >= len(every):
        return complete
    shown = mark_repeats(_replicability_rows(view, top), 2)
    written = one_language(complete, view)  # as the CSV is written: with one language, its rows once
    note = (
        f"The page shows {top_pairs_phrase(view)} under {view.primary} ({view.main_rule}, pooled), those the "
        f"section names; the table's CSV holds all {formatting.count(len(written.rows))} rows: both orders of "
        "every pair of outputs, every rule and language."
    )
    return replace(complete, rows=shown, notes=(note,), csv=written)


def leaderboard_table(view: ResultsView) -> Table:
    """Each ranked output's score and rank under every reference, and how likely its rank is to move."""
    rows = view.rows
    pairs = view.reference_pairs()
    sets = rows.has("leaderboard", "best_set")  # the rank set beside the rank; its percentile interval in the CSV
    columns: list[str] = ["Rule", "Language", "Output"]
    groups: list[tuple[str, int]] = [("", 3)]
    for reference in view.references:
        own = ["F1", "Rank", "Tie group"] if reference == view.primary else ["F1", "Rank"]
        own += list(RANK_BOARD_COLUMNS[1:]) if sets else []
        columns += own
        groups.append((reference, len(own)))
    for first, second in pairs:
        columns.append("P(rank moves)" if len(pairs) == 1 else f"P(rank moves) {first}→{second}")
    if pairs:
        groups.append(("", len(pairs)))
    table_rows = []
    for rule in view.rules:
        for language in view.languages:
            for output in view.ranked_outputs():
                cells = [label(rule), label(language), label(output)]
                for reference in view.references:
                    where = {"rule": rule, "language": language, "output": output, "reference": reference}
                    cells += [
                        stat_cell(rows.one("leaderboard", "score", **where)),
                        stat_cell(rows.one("leaderboard", "rank", **where), interval=not sets),
                    ]
                    if reference == view.primary:
                        cells.append(stat_cell(rows.one("leaderboard", "tie_group", **where)))
                    if sets:
                        cells += rank_set_cells(view, **where)
                for first, second in pairs:
                    cells.append(
                        stat_cell(
                            rows.one(
                                "leaderboard",
                                "p_rank_change",
                                rule=rule,
                                language=language,
                                output=output,
                                reference=first,
                                reference_2=second,
                            )
                        )
                    )
                table_rows.append(cells)
    return Table(
        key="leaderboard",
        title="The leaderboard under each reference",
        caption=(
            "Micro-F1 (F1 points) and rank (1 = highest; ties share their average rank) of every ranked output "
            f"(an output that is not itself a reference) under each reference, on the audited subset, with "
            f"{view.confidence_label}s from the same paired bootstrap as the swings. Tie group: outputs whose rank "
            f"intervals under {view.primary} overlap share a group (1 = the top). P(rank moves) is the share of "
            "bootstrap replicates in which the output's rank under the first reference differs from its rank "
            "under the second."
            + (
                " Rank: the point rank (its percentile interval is in the table's CSV); "
                + SETS_SAID.format(level=f"{view.confidence * 100:g}%")
                if sets
                else ""
            )
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
                    table_rows.append(
                        [
                            label(rule),
                            label(f"{first} vs {second}"),
                            label(language),
                            stat_cell(rows.one("leaderboard", "kendall_tau", **where)),
                            stat_cell(rows.one("leaderboard", "flips", **where)),
                            stat_cell(rows.one("leaderboard", "flips_significant", **where)),
                            stat_cell(rows.one("leaderboard", "p_rank_change", output="", **where)),
                        ]
                    )
        return main_rule_on_the_page(
            view,
            _rank_agreement(
                view,
                ("Rule", "References", "Language", "tau-b", "Flips", "Significant", "P(ranking moves)"),
                (),
                table_rows,
            ),
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


def _rank_agreement(
    view: ResultsView, columns: tuple[str, ...], groups: tuple[tuple[str, int], ...], table_rows: list[list[Cell]]
) -> Table:
    return Table(
        key="rank-agreement",
        title="Agreement of the rankings between references",
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
        table_rows.append(
            [
                label(row["rule"]),
                label(row["language"]),
                label(f"{row['output']} − {row['output_2']}"),
                label(f"{row['reference']} vs {row['reference_2']}"),
                stat_cell(found),
                p_cell(found, "p_value"),
                p_cell(found, "p_holm"),
            ]
        )
    return Table(
        key="flips",
        title="Pairs of outputs that change order",
        caption=(
            "Each pair whose order under one reference is the reverse of its order under the other, with its "
            f"swing (margin under the first reference minus margin under the second, F1 points, "
            f"{view.confidence_label}), its bootstrap p and its Holm p over {holm_family_phrase(view)}."
        ),
        columns=("Rule", "Language", "Outputs", "References", f"Swing [{view.confidence_label}]", "p", "Holm p"),
        rows=mark_repeats(table_rows, 2),
    )


def _rank_said(row: Mapping[str, Any] | None) -> str:
    """Return a rank row as the bump chart's alt text says it: '2 [1, 3]', ranks as integers unless tied."""
    return said(row)  # format_row prints ranks as integers unless tied (LEADERBOARD_STATISTICS)


def drawn_outputs(view: ResultsView) -> list[str]:
    """Return the ranked outputs the leaderboard's figures draw, best rank under the primary reference first:
    all of them, or the FIGURE_ROWS ranked highest (the leaderboard table ranks every one)."""
    outputs = view.ranked_outputs()

    def rank(output: str) -> float:
        row = view.row(
            "leaderboard", "rank", rule=view.main_rule, language=POOLED, output=output, reference=view.primary
        )
        return row["estimate"] if row and row["estimate"] is not None else math.inf

    return sorted(outputs, key=lambda output: (rank(output), outputs.index(output)))[:FIGURE_ROWS]


BUMP_HEIGHT = 2.5  # inches of ranks at most, 0.2 a rank below that: the chart stays at the summary's 82 mm


def leaderboard_bump(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Bump chart: each ranked output's pooled rank (main rule) under each reference, in config order."""
    ranked = view.ranked_outputs()
    if len(ranked) < MIN_OUTPUTS or len(view.references) < 2:
        return None
    rule, references = view.main_rule, view.references
    drawn = set(drawn_outputs(view))
    outputs = [output for output in ranked if output in drawn]
    ranks = {
        output: [
            view.row("leaderboard", "rank", rule=rule, language=POOLED, output=output, reference=reference)
            for reference in references
        ]
        for output in outputs
    }
    lowest = max(
        [len(outputs)]
        + [row["estimate"] for output in outputs for row in ranks[output] if row and row["estimate"] is not None]
    )
    # ranks 0.2 in apart up to BUMP_HEIGHT, and room for every label a LABEL_PITCH apart at each end
    ranks_height = max(1.7, min(0.2 * lowest, BUMP_HEIGHT), LABEL_PITCH * len(outputs))
    # the labels at the line ends sit outside the axes: fixed margins instead of the layout engine
    height = ranks_height + 0.7
    figure = mpl().figure.Figure(figsize=(WIDTH, height), layout="none")
    # room for the longest "name  rank" label at either end (6 pt from its point), at most 0.4 of the width each
    margin = min(0.4, (labels_width([f"{output}  10.5" for output in outputs]) + 0.15) / WIDTH)
    figure.subplots_adjust(left=margin, right=1 - margin, top=1 - 0.35 / height, bottom=0.35 / height)
    axis = figure.subplots()
    xs = list(range(len(references)))
    ends: list[tuple[str, int, float, float]] = []  # (output, side, x, rank) of each line's two ends
    for index, output in enumerate(outputs):
        colour, marker = style(ranked.index(output))
        points = [(x, row["estimate"]) for x, row in zip(xs, ranks[output]) if row and row["estimate"] is not None]
        if not points:
            continue
        # past the palette's colours the lines are dashed, so no two outputs look alike
        axis.plot(
            [x for x, _ in points],
            [y for _, y in points],
            color=colour,
            marker=marker,
            markersize=4,
            linewidth=1.2,
            linestyle="-" if ranked.index(output) < len(OKABE_ITO) else "--",
        )
        # its simultaneous rank set under each reference, a bar beside the point (offset per output, not hidden)
        offset = (index - (len(outputs) - 1) / 2) * min(0.03, 0.45 / len(outputs))
        for x, reference in zip(xs, references):
            sets = [
                view.row("leaderboard", statistic, rule=rule, language=POOLED, output=output, reference=reference)
                for statistic in ("rank_lower_simultaneous", "rank_upper_simultaneous")
            ]
            if all(end and end["estimate"] is not None for end in sets):
                axis.plot(
                    [x + offset] * 2,
                    [end["estimate"] for end in sets],
                    color=colour,
                    linewidth=0.9,
                    alpha=0.55,
                    solid_capstyle="butt",
                )
        ends += [(output, -1, *points[0]), (output, 1, *points[-1])]
    # tied or neighbouring ranks: each end's labels moved a LABEL_PITCH apart (in ranks), inside the axis
    gap = LABEL_PITCH * lowest / ranks_height
    for side in (-1, 1):
        labels = [end for end in ends if end[1] == side]
        for (output, _, x, y), place in zip(labels, dodged([end[3] for end in labels], gap, 0.5, lowest + 0.5)):
            colour = style(ranked.index(output))[0]
            text = f"{plain(output)}  {formatting.whole(y)}" if side < 0 else f"{formatting.whole(y)}  {plain(output)}"
            axis.annotate(
                text,
                (x, place),
                xytext=(6 * side, 0),
                textcoords="offset points",
                ha="right" if side < 0 else "left",
                va="center",
                fontsize=MIN_TEXT_PT,
                color=colour,
            )
    axis.set_xticks(xs, [plain(reference) for reference in references])
    axis.set_xlim(-0.08, len(references) - 0.92)
    axis.set_ylim(lowest + 0.5, 0.5)  # rank 1 on top
    axis.set_yticks([])
    axis.set_title(f"Rank ({rule}, pooled; 1 = highest F1)", loc="center", fontweight="normal", color=MUTED)
    axis.grid(axis="x")
    axis.set_axisbelow(True)
    for spine in ("left", "bottom"):
        axis.spines[spine].set_visible(False)
    axis.tick_params(axis="x", length=0)
    moved = sum(
        1
        for output in outputs
        if len({row["estimate"] for row in ranks[output] if row and row["estimate"] is not None}) > 1
    )
    first = "; ".join(f"{output} {_rank_said(ranks[output][0])}" for output in outputs[:3])
    return figure, Figure(
        key="leaderboard-bump",
        title="Ranks under each reference",
        caption=(
            f"Rank of each ranked output (1 = highest {rule} micro-F1, pooled over languages, audited subset) under "
            f"each reference, references in config order with the primary ({view.primary}) first; ties share "
            "their average rank. A crossing line is a pair of outputs that changes order. The bar beside each "
            f"point is the output's simultaneous {view.confidence * 100:g}% rank set (all outputs' sets hold at "
            "once; offset per output so they do not hide each other). Sets and percentile rank intervals are in "
            "the leaderboard table."
            + drawn_note(
                len(outputs), len(ranked), "outputs", f"{rule} F1 under {view.primary}", "the leaderboard table"
            )
        ),
        alt=(
            (
                f"Bump chart of {formatting.count(len(outputs))} of {formatting.counted(len(ranked), 'output')}"
                if len(outputs) < len(ranked)
                else f"Bump chart of {formatting.counted(len(outputs), 'output')}"
            )
            + f" across {formatting.counted(len(references), 'reference')}; "
            f"{formatting.count_of(moved, len(outputs), 'output')} "
            f"{formatting.verb_of(moved, len(outputs), 'changes', 'change')} rank at least once. Ranks under "
            f"{view.primary} with intervals, first "
            f"outputs: {first}."
        ),
    )


def _alternative_reference(view: ResultsView) -> tuple[str, Mapping[str, Any] | None]:
    """Return the reference whose ranking differs most from the primary's (most pooled flips) and its row."""
    best: tuple[str, Mapping[str, Any] | None] = (view.references[1], None)
    for reference in view.references[1:]:
        row = view.row(
            "leaderboard", "flips", rule=view.main_rule, language=POOLED, reference=view.primary, reference_2=reference
        )
        if (
            row is not None
            and row["estimate"] is not None
            and (best[1] is None or best[1]["estimate"] is None or row["estimate"] > best[1]["estimate"])
        ):
            best = (reference, row)
    return best


def swing_heatmap(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Heatmap of pooled swings between the primary and the most-disagreeing reference, per pair of outputs."""
    matplotlib = mpl()
    outputs = view.ranked_outputs()
    if len(outputs) < MIN_OUTPUTS or len(view.references) < 2 or not view.rows.has("interaction", "swing"):
        return None
    rule, primary = view.main_rule, view.primary
    alternative, flips_row = _alternative_reference(view)
    ordered = drawn_outputs(view)
    size = len(ordered)
    matrix = np.full((size, size), np.nan)
    significant: list[tuple[int, int]] = []
    flipped: list[tuple[int, int]] = []
    for i, j in itertools.combinations(range(size), 2):
        first, second = ordered[i], ordered[j]
        sign = 1.0
        if outputs.index(first) > outputs.index(second):  # rows are stored for pairs in config order
            first, second, sign = second, first, -1.0
        where = {
            "rule": rule,
            "language": POOLED,
            "output": first,
            "output_2": second,
            "reference": primary,
            "reference_2": alternative,
        }
        row = view.row("interaction", "swing", **where)
        if row is None or row["estimate"] is None:
            continue
        matrix[i, j] = sign * row["estimate"]
        if view.significant(row["p_holm"]):
            significant.append((i, j))
        if view.row("leaderboard", "flip", **where) is not None:
            flipped.append((i, j))
    if not np.isfinite(matrix).any():
        return None
    top = max(0.01, float(np.nanmax(np.abs(matrix))))
    matrix = matrix[:-1, 1:]  # the diagonal and below are empty: drop the empty last row and first column
    significant = [(i, j - 1) for i, j in significant]
    flipped = [(i, j - 1) for i, j in flipped]
    labels = [plain(output) for output in ordered]
    label_room = labels_width(labels) + 0.1
    # cells as large as the text width allows once the row labels and the colour bar have their room
    cell = min(0.4, (WIDTH - label_room - 1.1) / (size - 1))
    slant = 0.75 if column_angle(cell) == 45 else 1.0  # the column labels' height: about label_room at their angle
    figure, axis = subplots(figsize=(WIDTH, min(9.0, cell * (size - 1) + slant * label_room + 0.9)))
    image = axis.imshow(matrix, cmap="PuOr_r", vmin=-top, vmax=top, aspect="equal")
    values = {
        (i, j): formatting.number(value, 1, signed=True)
        for (i, j), value in np.ndenumerate(matrix)
        if np.isfinite(value)
    }
    labelled = fits_cells(list(values.values()), cell)
    step = matrix_labels(axis, labels[:-1], labels[1:], cell)
    if labelled:  # otherwise the colours alone: every swing is in the interaction table
        for (i, j), text in values.items():
            axis.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=MIN_TEXT_PT,
                color="white" if abs(matrix[i, j]) > 0.6 * top else INK,
            )  # significance: the dot, not bold
    for i, j in flipped:
        axis.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=INK, linewidth=1.3))
    for i, j in significant:
        axis.plot([j + 0.34], [i - 0.34], marker="o", markersize=2.2, color=INK, linestyle="none")
    axis.set_xlim(-0.5, size - 1.5)
    axis.set_ylim(size - 1.5, -0.5)
    for spine in axis.spines.values():
        spine.set_visible(False)
    axis.tick_params(length=0)
    colourbar = figure.colorbar(image, ax=axis, shrink=0.7)
    colourbar.set_label(plain(f"Swing {primary} → {alternative} (F1 points)"))
    colourbar.outline.set_visible(False)
    figure.legend(
        handles=[
            matplotlib.patches.Patch(facecolor="white", edgecolor=INK, linewidth=1.3, label="order flips"),
            matplotlib.lines.Line2D(
                [], [], color=INK, marker="o", markersize=3, linestyle="none", label=f"Holm p < {view.level}"
            ),
        ],
        loc="outside lower center",
        ncols=2,
    )
    flips = flips_row["estimate"] if flips_row and flips_row["estimate"] is not None else len(flipped)
    flips_said = f"{formatting.number(flips, 0)} {formatting.noun(round(flips), 'flip')}"
    return figure, Figure(
        key="leaderboard-swings",
        title="Pairwise swings between references",
        caption=(
            f"For each pair of ranked outputs (row output minus column output, both ordered by rank under "
            f"{primary}), the pooled {rule} swing: the margin under {primary} minus the margin under "
            f"{alternative}, in F1 points, on the audited subset. {alternative} is the alternative reference with "
            f"the most order flips against {primary}. Framed cells: pairs whose order flips; a dot: swing "
            f"significant after Holm correction over {holm_family_phrase(view)}. "
            + (
                ""
                if labelled
                else "The cells are too small to print their swings at a readable size: the colour scale gives them. "
            )
            + (f"The rows and columns are labelled every {step} outputs. " if step > 1 else "")
            + "Every swing, for every pair of references, is in the interaction table."
            + drawn_note(size, len(outputs), "outputs", f"{rule} F1 under {primary}", "the leaderboard table")
        ),
        alt=(
            f"Heatmap of {formatting.counted(size * (size - 1) // 2, 'pairwise swing')} between {primary} and "
            f"{alternative}, {formatting.count(len(flipped))} framed as "
            f"{formatting.noun(len(flipped), 'an order flip', 'order flips')} "
            f"({flips_said} pooled), "
            f"{formatting.count(len(significant))} Holm-significant; "
            f"the largest absolute swing is {formatting.number(top, 2)} F1 points."
        ),
    )


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
        flips = view.row("leaderboard", "flips", **where)
        if flips is None or flips["estimate"] is None:
            continue
        significant = view.row("leaderboard", "flips_significant", **where)
        significant_total += int(significant["estimate"] or 0) if significant else 0
        tau = view.row("leaderboard", "kendall_tau", **where)
        moved = round(flips["estimate"])
        parts.append(
            f"{formatting.counted(moved, 'pair')} {formatting.verb(moved, 'changes', 'change')} order "
            f"under {reference}" + (f" (tau-b {said(tau)})" if tau else "")
        )
    if not parts:
        return []
    return [
        f"The leaderboard of {len(ranked)} outputs changes with the reference ({rule}, pooled): of its "
        f"{formatting.counted(pairs, 'pair')} of outputs, compared with {view.primary}, {'; '.join(parts)}"
        + significant_flips(view, significant_total)
    ]


def significant_flips(view: ResultsView, significant: int) -> str:
    """Return how many of the flips are significant after Holm, or that this run cannot decide it."""
    if view.undecidable:
        return f". {view.undecidable}"
    flips = f"{formatting.count(significant)} of these flips {formatting.verb(significant, 'is', 'are')}"
    return f"; {flips} significant after Holm."


def leaderboard_sentences(view: ResultsView) -> list[str]:
    """Return "Under R, k of n pairs change order; j significantly after Holm" per alternative reference."""
    if not view.rows.has("leaderboard", "flips"):
        return []
    ranked = {row["output"] for _, row in view.rows.select("leaderboard", "rank")}
    pairs = len(ranked) * (len(ranked) - 1) // 2
    rule = view.main_rule
    floor = view.row("leaderboard", "holm_floor")
    sentences = []
    for first, second in view.reference_pairs():
        where = {"rule": rule, "language": POOLED, "reference": first, "reference_2": second}
        flips = view.row("leaderboard", "flips", **where)
        if flips is None or flips["estimate"] is None:
            continue
        significant = view.row("leaderboard", "flips_significant", **where)
        tau = view.row("leaderboard", "kendall_tau", **where)
        moves = view.row("leaderboard", "p_rank_change", output="", **where)
        moved = round(flips["estimate"])
        sentence = (
            f"Under {second} instead of {first}, {count_phrase(moved, pairs, 'pair')} of outputs "
            f"{formatting.verb_of(moved, pairs, 'changes', 'change')} order ({rule}, pooled; {said(flips)}); "
            + (
                f"{UNDECIDED_FLIPS} (the Holm floor below)"
                if view.undecidable
                else f"{said(significant) if significant else formatting.UNDEFINED} significantly after Holm"
            )
        )
        sentence += f"; tau-b {said(tau)}" if tau else ""
        sentence += f"; the whole ranking differs in {said(moves)} of bootstrap replicates." if moves else "."
        sentences.append(sentence)
    if view.undecidable:
        sentences.append(view.undecidable)
    elif floor is not None:
        sentences.append(
            f"Holm floor: with {formatting.counted(holm_family_size(view), 'swing')} in the Holm family "
            f"and {formatting.counted(view.data.get('resamples'), 'replicate')}, the smallest Holm p any swing can "
            f"reach is {said(floor)}."
        )
    return sentences


TOP_PAIRS = 5  # adjacent pairs under the primary reference whose replicability the section states and prints


def adjacent_pairs(view: ResultsView) -> list[tuple[str, str]]:
    """Return the adjacent pairs (better, worse) of the ranking under the primary reference (main rule, pooled);
    the first TOP_PAIRS are those whose replicability the section states and its table prints."""
    outputs = view.ranked_outputs()
    where = {"rule": view.main_rule, "language": POOLED, "reference": view.primary}
    ranks = {output: view.row("leaderboard", "rank", output=output, **where) for output in outputs}
    ordered = sorted(
        (output for output in outputs if ranks[output] and ranks[output]["estimate"] is not None),
        key=lambda output: (ranks[output]["estimate"], outputs.index(output)),
    )
    return list(zip(ordered, ordered[1:]))


def top_pairs_phrase(view: ResultsView) -> str:
    """Return which adjacent pairs the section states: all of them, or the top TOP_PAIRS."""
    return "the adjacent pairs" if len(adjacent_pairs(view)) <= TOP_PAIRS else f"the top {TOP_PAIRS} adjacent pairs"


def rank_inference_sentences(view: ResultsView) -> list[str]:
    """Return the plausible best outputs under each reference, and "A beats B under k̂ of K references" for the
    top adjacent pairs under the primary reference (main rule, pooled)."""
    rows, rule, golds = view.rows, view.main_rule, len(view.references)
    if not rows.has("leaderboard", "best_set"):
        return []
    level = f"{view.confidence * 100:g}%"
    where = {"rule": rule, "language": POOLED}
    best = []
    for reference in view.references:
        names = [
            row["output"]
            for _, row in rows.select("leaderboard", "best_set", reference=reference, **where)
            if row["estimate"] == 1
        ]
        best.append(f"under {reference}, {', '.join(names) if names else formatting.UNDEFINED}")
    sentences = [
        f"Plausible best outputs (their simultaneous {level} rank set contains rank 1; {rule}, pooled): "
        f"{'; '.join(best)}."
    ]
    pairs = adjacent_pairs(view)[:TOP_PAIRS]
    claims = []
    for winner, loser in pairs:
        k_hat = view.row("leaderboard", "k_hat", output=winner, output_2=loser, **where)
        if k_hat is not None and k_hat["estimate"] is not None:
            claims.append(f"{winner} beats {loser} under {formatting.whole(k_hat['estimate'])} of {golds}")
    if claims:
        top = top_pairs_phrase(view)
        sentences.append(
            f"Replicability across the {golds} references, for {top} under {view.primary} ({rule}, pooled; "
            f"partial conjunction, Bonferroni, family-wise at {view.level} over the number of references): "
            f"{'; '.join(claims)}."
        )
    return sentences


def headlines(view: ResultsView) -> list[str]:
    """Flips per alternative reference at scale; otherwise the first pair of references' sentence."""
    return leaderboard_headline(view) if view.at_scale() else leaderboard_sentences(view)[:1]


NO_LEADERBOARD = (
    "The record has fewer than three ranked outputs (outputs that are not references) or fewer than two "
    "references, so there is no leaderboard beyond the interaction's margins."
)


def leaderboard_section(view: ResultsView, figures: Mapping[str, Figure] | None = None) -> Section:
    """The leaderboard rows (docs/leaderboard.md) with the bump chart and the swing heatmap, or the sentence
    saying why the record has none."""
    rows = view.rows
    if not rows.has("leaderboard", "rank"):
        return Section(
            key="leaderboard",
            number=0,
            title=ANALYSIS.title,
            not_applicable=view.applicability("leaderboard") or NO_LEADERBOARD,
        )
    paragraphs = [ANALYSIS.question, *leaderboard_sentences(view), *rank_inference_sentences(view)]
    section_tables = [paper_table(view), *leaderboard_tables(view), rank_agreement_table(view)]
    if rows.has("leaderboard", "k_hat"):
        section_tables.append(replicability_table(view))
    if rows.has("leaderboard", "flip"):
        section_tables.append(flips_table(view))
    else:
        paragraphs.append("No pair of outputs changes order between the references.")
    drawn = figures or {}
    section_figures = tuple(drawn[key] for key in ("leaderboard-bump", "leaderboard-swings") if key in drawn)
    return Section(
        key="leaderboard",
        number=0,
        title=ANALYSIS.title,
        paragraphs=tuple(paragraphs),
        figures=section_figures,
        tables=tuple(section_tables),
    )


# The leaderboard's own statistics (docs/leaderboard.md): ranks can be fractional (ties), flips are counts. Ranks
# and flips are whole numbers except at ties (an average rank) and interpolated interval ends: each value prints
# as an integer when it is one, with one decimal otherwise ("3 [1, 6]", "2.5 [1, 4]"). Rank sets' ends,
# best-set membership (1 or 0) and k-hat are counts too (a partial-conjunction row's p is its p_value);
# p_rank_change is a share of replicates (0 to 1) printed as a percentage; the bound on Holm p prints as a p-value does.
LEADERBOARD_STATISTICS = {
    **DIFFERENCES,
    "rank": StatKind(decimals=1, style="whole"),
    "flips": StatKind(decimals=1, style="whole"),
    "flips_significant": StatKind(decimals=0),
    "kendall_tau": StatKind(decimals=2),
    "tie_group": StatKind(decimals=0),
    **dict.fromkeys(
        ("rank_lower_simultaneous", "rank_upper_simultaneous", "best_set", "k_hat"), StatKind(style="whole")
    ),
    "p_rank_change": StatKind(style="share"),
    "holm_floor": StatKind(style="p"),
}


def release_rows(view: ResultsView) -> list[Row]:
    """How the ranking holds, primary reference against each alternative: tau-b, flips, significant flips."""
    return [
        row
        for statistic in ("kendall_tau", "flips", "flips_significant")
        for row in pooled_rows("leaderboard", statistic, primary=True)(view)
    ]


def ranks(view: ResultsView) -> dict[tuple[str, str], float]:
    """Return (reference, output) -> the pooled main-rule rank of the leaderboard."""
    return {
        (row["reference"], row["output"]): row["estimate"]
        for _, row in view.rows.select("leaderboard", "rank", rule=view.main_rule, language=POOLED)
        if row["estimate"] is not None
    }


def analysis_sentences(view: ResultsView) -> list[str]:
    """croissant.json's annotation analysis: tau-b, primary reference against each alternative."""
    return [
        f"Ranking agreement, tau-b {row['reference']} vs {row['reference_2']}, {row['rule']}: {said(row)} "
        f"{where_pooled(view, row)}."
        for row in defined_pooled(view, "leaderboard", "kendall_tau", rule=view.main_rule, reference=view.primary)
    ]


def limitation_sentences(view: ResultsView) -> list[str]:
    """croissant.json's limitations: the pairs of outputs the alternative reference reverses."""
    return [
        f"Replacing {row['reference']} by {row['reference_2']} reverses the order of {said(row)} pairs of outputs "
        f"({row['rule']})."
        for row in defined_pooled(view, "leaderboard", "flips", rule=view.main_rule, reference=view.primary)
        if row["estimate"]
    ]


ANALYSIS = Analysis(
    statistics=LEADERBOARD_STATISTICS,
    key="leaderboard",
    title="The leaderboard under each reference",
    question="With several outputs, does the leaderboard keep its order when the reference changes?",
    methods="""- **Simultaneous rank sets and replicability** (leaderboard). Rank sets (Mogstad, Romano, Shaikh and
  Wilhelm 2024), per reference, rule and language: a studentised step-down over the bootstrap replicates of
  every ordered pair of ranked outputs' F1 difference declares which outputs are better than which; an
  output's set runs from 1 + the outputs declared better to p − those declared worse, and all sets hold at
  once with the stated confidence (a percentile rank interval covers one output at a time). Plausible best:
  the outputs whose set contains rank 1. Replicability (partial conjunction; Benjamini and Heller 2008, Dror
  et al. 2017): from each reference's one-sided bootstrap p of "A is not better than B", the p-value of "A
  beats B under at least u of the K references", by Bonferroni (valid under any dependence) and by Fisher
  (which assumes independent references; shown for comparison), non-decreasing in u; k̂ is the largest u
  whose Bonferroni p is at most 1 − confidence. Both orders of every pair are tested. Choosing the adjacent
  Holm family from the data did not inflate its error rate on simulated null leaderboards (8.2 % against
  9.4 % for a family fixed in advance).""",
    finish=finish,
    applicability=applicability,
    section=leaderboard_section,
    figures=(leaderboard_bump, swing_heatmap),
    headlines=headlines,
    checks=(
        ReleaseCheck(
            "min_kendall_tau",
            "min",
            pooled_rows("leaderboard", "kendall_tau", primary=True),
            absent="the results hold no leaderboard",
            limits=(-1, 1, "tau-b's range"),
        ),
        ReleaseCheck(
            "max_significant_flips",
            "max",
            pooled_rows("leaderboard", "flips_significant", primary=True),
            absent="the results hold no leaderboard",
            interval=False,
            count="flips",
            significance=True,
        ),
    ),
    release_rows=ReleaseRows(release_rows, place=3),
    ranking=Ranking(ranks, "the leaderboard's ranks"),
    metadata=(
        MetadataSentences("rai:dataAnnotationAnalysis", analysis_sentences, place=4),
        MetadataSentences("rai:dataLimitations", limitation_sentences, place=2),
    ),
    summary_figure=SummaryFigure("leaderboard-bump"),
    brief_table=PAPER_KEY,
)
