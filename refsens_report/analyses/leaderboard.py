"""The leaderboard under each reference: ranks with intervals, Kendall's tau-b, order flips, rank changes.

Applies with three or more ranked outputs (outputs that are not themselves references) and two or more
references. Its statistics are computed in ``ranking.py`` after Holm, on the audited draws the swap and the
interaction used (docs/leaderboard.md); this module is the analysis: when it applies, its tables, figures and
sentences.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from refsens_report import formatting
from refsens_report.analyses.base import Analysis, AuditContext, Rows, Section
from refsens_report.analyses.base import DIFFERENCES, StatKind
from refsens_report.analyses.interaction import holm_family_phrase, holm_family_size
from refsens_report.analyses.ranking import (
    MIN_OUTPUTS,
    leaderboard_rows,
    ranked_outputs,
)
from refsens_report.estimator import Estimator
from refsens_report.figures import (
    INK,
    MIN_TEXT_PT,
    MUTED,
    OKABE_ITO,
    WIDTH,
    Figure,
    fits_cells,
    labels_width,
    mpl,
    plain,
    style,
    subplots,
)
from refsens_report.prose import count_phrase, said
from refsens_report.record import POOLED
from refsens_report.tables import (
    Cell,
    Table,
    label,
    long_layout,
    mark_repeats,
    p_cell,
    stat_cell,
)
from refsens_report.view import UNDECIDED_FLIPS, ResultsView

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def finish(context: AuditContext, estimator: Estimator, rows: Rows) -> Rows:
    """The leaderboard rows, after Holm (flip rows carry their swing's Holm p), on the audited draws."""
    return leaderboard_rows(estimator, context.subsets.audited, context.config, rows)


def applicability(context: AuditContext) -> dict[str, str | None]:
    config = context.config
    applies = len(ranked_outputs(config)) >= MIN_OUTPUTS and len(config.roles.references) >= 2
    return {
        "leaderboard": None if applies else "A leaderboard needs three or more scored outputs (that are not themselves references) and two or more references.",
    }  # fmt: skip


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
        found = {(output, reference): rows.one("leaderboard", "score", rule=rule, language=language, output=output,
                                               reference=reference)
                 for output in outputs for reference in view.references}  # fmt: skip
        ranks = {(output, reference): rows.one("leaderboard", "rank", rule=rule, language=language, output=output,
                                               reference=reference)
                 for output in outputs for reference in view.references}  # fmt: skip

        def position(output: str) -> tuple[float, int]:
            rank = ranks[output, primary][1]["estimate"] if ranks[output, primary] else None
            return (rank if rank is not None else math.inf, outputs.index(output))

        for output in sorted(outputs, key=position):  # an ordering of printed ranks, not a new number
            cells = [label(language)] if several else []
            cells.append(label(output))
            for reference in view.references:
                cells += [stat_cell(found[output, reference]), stat_cell(ranks[output, reference], interval=False)]
                if reference == primary:
                    cells.append(stat_cell(rows.one("leaderboard", "tie_group", rule=rule, language=language,
                                                    output=output, reference=reference)))  # fmt: skip
            table_rows.append(cells)
    labels = ["Language", "Output"] if several else ["Output"]
    columns, groups = list(labels), [("", len(labels))]
    for reference in view.references:
        columns += [f"F1 [{view.confidence_label}]", "Rank"] + (["Tie group"] if reference == primary else [])
        groups.append((reference, 3 if reference == primary else 2))
    where = ("pooled over the languages, then per language" if several
             else view.languages[0] if len(view.languages) == 2 else "pooled")  # fmt: skip
    return Table(
        key=PAPER_KEY,
        title="The leaderboard under each reference, as a paper prints it",
        caption=(
            f"Micro-F1 (F1 points, {rule}, {where}) of every ranked output under each reference, primary "
            f"({primary}) first, with {view.confidence_label}s from the paired bootstrap on the audited subset "
            f"({view.items_phrase('audited')}), and its rank (1 = highest; ties share their average rank). Outputs "
            f"in order of their rank under {primary}. Tie group: outputs whose rank intervals under {primary} "
            "overlap share a group (1 = the top). Rank intervals, every rule and the chance that a rank moves are "
            "in the next tables."
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
        return [leaderboard_table(view)] + ([rank_sets_table(view)] if view.rows.has("leaderboard", "best_set") else [])
    rows = view.rows
    outputs = view.ranked_outputs()
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
                        *rank_set_cells(view, rule=rule, language=language, output=output, reference=reference),
                    ])  # fmt: skip
    board = Table(
        key="leaderboard",
        title="The leaderboard under each reference",
        caption=(
            "Micro-F1 (F1 points) and rank (1 = highest; ties share their average rank) of every ranked output "
            "(an output that is not itself a reference) under each reference, outputs in rank order, on the "
            f"audited subset, with {view.confidence_label}s from the same paired bootstrap as the swings. "
            + RANK_SETS_SAID.format(level=f"{view.confidence * 100:g}%")
        ),
        columns=("Rule", "Language", "Reference", "Output", f"F1 [{view.confidence_label}]",
                 f"Rank [{view.confidence_label}]", *RANK_SET_COLUMNS),  # fmt: skip
        groups=(("", 6), ("Simultaneous rank set", 3)),
        rows=mark_repeats(board_rows, 3),
    )
    move_rows = []
    for rule in view.rules:
        for language in view.languages:
            for output in outputs:
                cells = [label(rule), label(language), label(output)]
                cells.append(stat_cell(rows.one("leaderboard", "tie_group", rule=rule, language=language,
                                                output=output, reference=view.primary)))  # fmt: skip
                cells += [stat_cell(rows.one("leaderboard", "p_rank_change", rule=rule, language=language,
                                             output=output, reference=first, reference_2=second))
                          for first, second in pairs]  # fmt: skip
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
    return [board, moves]


RANK_SET_COLUMNS = ("From", "To", "Plausible best")
RANK_SETS_SAID = (
    "Simultaneous rank set: ranks that every output can hold at once with {level} confidence (Mogstad, Romano, "
    "Shaikh and Wilhelm's step-down over all pairs, per reference, rule and language); the percentile rank "
    "interval covers one output at a time. Plausible best: 1 when the output's set contains rank 1."
)


def rank_set_cells(view: ResultsView, **where: str) -> list[Cell]:
    """The simultaneous rank set's ends and best-set membership of one output under one reference."""
    return [stat_cell(view.rows.one("leaderboard", statistic, **where), interval=False)
            for statistic in ("rank_lower_simultaneous", "rank_upper_simultaneous", "best_set")]  # fmt: skip


def rank_sets_table(view: ResultsView) -> Table:
    """Each ranked output's simultaneous rank set under every reference, beside its percentile rank interval."""
    table_rows = []
    for rule in view.rules:
        for language in view.languages:
            for reference in view.references:
                for output in view.ranked_outputs():
                    where = {"rule": rule, "language": language, "output": output, "reference": reference}
                    table_rows.append([label(rule), label(language), label(reference), label(output),
                                       stat_cell(view.rows.one("leaderboard", "rank", **where)),
                                       *rank_set_cells(view, **where)])  # fmt: skip
    return Table(
        key="rank-sets",
        title="Simultaneous rank sets and the plausible best",
        caption=(
            f"Rank (1 = highest F1) with its {view.confidence_label} (percentile, one output at a time) and the "
            "simultaneous rank set of every ranked output, audited subset. "
            + RANK_SETS_SAID.format(level=f"{view.confidence * 100:g}%")
        ),
        columns=("Rule", "Language", "Reference", "Output", f"Rank [{view.confidence_label}]", *RANK_SET_COLUMNS),
        groups=(("", 5), ("Simultaneous rank set", 3)),
        rows=mark_repeats(table_rows, 3),
    )


def replicability_table(view: ResultsView) -> Table:
    """For every ordered pair of outputs: the p that it wins under at least u of the K references, and k-hat."""
    golds = len(view.references)
    table_rows = []
    for rule in view.rules:
        for language in view.languages:
            for _, k_hat in view.rows.select("leaderboard", "k_hat", rule=rule, language=language):
                pair = {"rule": rule, "language": language, "output": k_hat["output"], "output_2": k_hat["output_2"]}
                cells = [label(rule), label(language), label(f"{k_hat['output']} > {k_hat['output_2']}")]
                for method in ("bonferroni", "fisher"):
                    cells += [p_cell(view.rows.one("leaderboard", f"p_partial_{method}", estimate=u, **pair), "p_value")
                              for u in range(1, golds + 1)]  # fmt: skip
                cells.append(stat_cell(view.rows.one("leaderboard", "k_hat", **pair), interval=False))
                table_rows.append(cells)
    at_least = [f"u = {u}" for u in range(1, golds + 1)]
    return Table(
        key="replicability",
        title="Replicability across the references",
        caption=(
            f"For every ordered pair of ranked outputs A > B, the p-value of \"A beats B under at least u of the "
            f"{golds} references\" (partial conjunction of the per-reference one-sided paired-bootstrap p-values, "
            "made non-decreasing in u), by Bonferroni's and Fisher's combination; k̂: the largest u whose "
            f"Bonferroni p is at most {view.level}, family-wise over u (Fisher's assumes independent references, "
            "which references scored on the same items are not; it is shown for comparison). Audited subset."
        ),
        columns=("Rule", "Language", "Outputs", *at_least, *at_least, "k̂"),
        groups=(("", 3), ("Bonferroni p", golds), ("Fisher p", golds), ("", 1)),
        rows=mark_repeats(table_rows, 2),
    )


def leaderboard_table(view: ResultsView) -> Table:
    """Each ranked output's score and rank under every reference, and how likely its rank is to move."""
    rows = view.rows
    pairs = view.reference_pairs()
    columns: list[str] = ["Rule", "Language", "Output"]
    groups: list[tuple[str, int]] = [("", 3)]
    for reference in view.references:
        columns += ["F1", "Rank", "Tie group"] if reference == view.primary else ["F1", "Rank"]
        groups.append((reference, 3 if reference == view.primary else 2))
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
                    cells += [stat_cell(rows.one("leaderboard", "score", **where)),
                              stat_cell(rows.one("leaderboard", "rank", **where))]  # fmt: skip
                    if reference == view.primary:
                        cells.append(stat_cell(rows.one("leaderboard", "tie_group", **where)))
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
            f"{view.confidence_label}s from the same paired bootstrap as the swings. Tie group: outputs whose rank "
            f"intervals under {view.primary} overlap share a group (1 = the top). P(rank moves) is the share of "
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
            f"{view.confidence_label}), its bootstrap p and its Holm p over {holm_family_phrase(view)}."
        ),
        columns=("Rule", "Language", "Outputs", "References", f"Swing [{view.confidence_label}]", "p", "Holm p"),
        rows=mark_repeats(table_rows, 2),
    )


def _rank_said(row: Mapping[str, Any] | None) -> str:
    """Return a rank row as the bump chart's alt text says it: '2 [1, 3]', ranks as integers unless tied."""
    return said(row)  # format_row prints ranks as integers unless tied (LEADERBOARD_STATISTICS)


def leaderboard_bump(view: ResultsView) -> tuple[MplFigure, Figure] | None:
    """Bump chart: each ranked output's pooled rank (main rule) under each reference, in config order."""
    outputs = view.ranked_outputs()
    if len(outputs) < MIN_OUTPUTS or len(view.references) < 2:
        return None
    rule, references = view.main_rule, view.references
    ranks = {
        output: [view.row("leaderboard", "rank", rule=rule, language=POOLED, output=output, reference=reference)
                 for reference in references]
        for output in outputs
    }  # fmt: skip
    # the labels at the line ends sit outside the axes: fixed margins instead of the layout engine
    height = max(2.4, 0.8 + 0.2 * len(outputs))
    figure = mpl().figure.Figure(figsize=(WIDTH, height), layout="none")
    # room for the longest "name  rank" label at either end (6 pt from its point), at most 0.4 of the width each
    margin = min(0.4, (labels_width([f"{output}  10.5" for output in outputs]) + 0.15) / WIDTH)
    figure.subplots_adjust(left=margin, right=1 - margin, top=1 - 0.35 / height, bottom=0.35 / height)
    axis = figure.subplots()
    xs = list(range(len(references)))
    for index, output in enumerate(outputs):
        colour, marker = style(index)
        points = [(x, row["estimate"]) for x, row in zip(xs, ranks[output]) if row and row["estimate"] is not None]
        if not points:
            continue
        # past the palette's colours the lines are dashed, so no two outputs look alike
        axis.plot([x for x, _ in points], [y for _, y in points], color=colour, marker=marker, markersize=4,
                  linewidth=1.2, linestyle="-" if index < len(OKABE_ITO) else "--")  # fmt: skip
        # its simultaneous rank set under each reference, a bar beside the point (offset per output, not hidden)
        offset = (index - (len(outputs) - 1) / 2) * min(0.03, 0.45 / len(outputs))
        for x, reference in zip(xs, references):
            ends = [view.row("leaderboard", statistic, rule=rule, language=POOLED, output=output, reference=reference)
                    for statistic in ("rank_lower_simultaneous", "rank_upper_simultaneous")]  # fmt: skip
            if all(end and end["estimate"] is not None for end in ends):
                axis.plot([x + offset] * 2, [end["estimate"] for end in ends], color=colour, linewidth=0.9,
                          alpha=0.55, solid_capstyle="butt")  # fmt: skip
        first_x, first_y = points[0]
        last_x, last_y = points[-1]
        axis.annotate(f"{plain(output)}  {formatting.whole(first_y)}", (first_x, first_y), xytext=(-6, 0),
                      textcoords="offset points", ha="right", va="center", fontsize=MIN_TEXT_PT, color=colour)  # fmt: skip
        axis.annotate(f"{formatting.whole(last_y)}  {plain(output)}", (last_x, last_y), xytext=(6, 0),
                      textcoords="offset points", ha="left", va="center", fontsize=MIN_TEXT_PT, color=colour)  # fmt: skip
    axis.set_xticks(xs, [plain(reference) for reference in references])
    axis.set_xlim(-0.08, len(references) - 0.92)
    axis.set_ylim(len(outputs) + 0.5, 0.5)  # rank 1 on top
    axis.set_yticks([])
    axis.set_title(f"Rank ({rule}, pooled; 1 = highest F1)", loc="center", fontweight="normal", color=MUTED)
    axis.grid(axis="x")
    axis.set_axisbelow(True)
    for spine in ("left", "bottom"):
        axis.spines[spine].set_visible(False)
    axis.tick_params(axis="x", length=0)
    moved = sum(
        1 for output in outputs
        if len({row["estimate"] for row in ranks[output] if row and row["estimate"] is not None}) > 1
    )  # fmt: skip
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
        ),
        alt=(
            f"Bump chart of {formatting.counted(len(outputs), 'output')} across "
            f"{formatting.counted(len(references), 'reference')}; {formatting.count_of(moved, len(outputs), 'output')} "
            f"{formatting.verb_of(moved, len(outputs), 'changes', 'change')} rank at least once. Ranks under "
            f"{view.primary} with intervals, first "
            f"outputs: {first}."
        ),
    )


def _alternative_reference(view: ResultsView) -> tuple[str, Mapping[str, Any] | None]:
    """Return the reference whose ranking differs most from the primary's (most pooled flips) and its row."""
    best: tuple[str, Mapping[str, Any] | None] = (view.references[1], None)
    for reference in view.references[1:]:
        row = view.row("leaderboard", "flips", rule=view.main_rule, language=POOLED, reference=view.primary,
                   reference_2=reference)  # fmt: skip
        if row is not None and row["estimate"] is not None and (
            best[1] is None or best[1]["estimate"] is None or row["estimate"] > best[1]["estimate"]
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

    def rank(output: str) -> float:
        row = view.row("leaderboard", "rank", rule=rule, language=POOLED, output=output, reference=primary)
        return row["estimate"] if row and row["estimate"] is not None else math.inf

    ordered = sorted(outputs, key=lambda output: (rank(output), outputs.index(output)))
    size = len(ordered)
    matrix = np.full((size, size), np.nan)
    significant: list[tuple[int, int]] = []
    flipped: list[tuple[int, int]] = []
    for i, j in ((i, j) for i in range(size) for j in range(i + 1, size)):
        first, second = ordered[i], ordered[j]
        sign = 1.0
        if outputs.index(first) > outputs.index(second):  # rows are stored for pairs in config order
            first, second, sign = second, first, -1.0
        where = {"rule": rule, "language": POOLED, "output": first, "output_2": second, "reference": primary,
                 "reference_2": alternative}  # fmt: skip
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
    figure, axis = subplots(figsize=(WIDTH, min(9.0, cell * (size - 1) + 0.75 * label_room + 0.9)))
    image = axis.imshow(matrix, cmap="PuOr_r", vmin=-top, vmax=top, aspect="equal")
    values = {(i, j): formatting.number(value, 1, signed=True) for (i, j), value in np.ndenumerate(matrix)
              if np.isfinite(value)}  # fmt: skip
    labelled = fits_cells(list(values.values()), cell)
    if labelled:  # otherwise the colours alone: every swing is in the interaction table
        for (i, j), text in values.items():
            axis.text(j, i, text, ha="center", va="center", fontsize=MIN_TEXT_PT,
                      color="white" if abs(matrix[i, j]) > 0.6 * top else INK)  # significance: the dot, not bold
    for i, j in flipped:
        axis.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=INK,
                                                    linewidth=1.3))  # fmt: skip
    for i, j in significant:
        axis.plot([j + 0.34], [i - 0.34], marker="o", markersize=2.2, color=INK, linestyle="none")
    axis.set_xticks(range(size - 1), labels[1:], rotation=45, ha="right", rotation_mode="anchor", fontsize=MIN_TEXT_PT)
    axis.set_yticks(range(size - 1), labels[:-1], fontsize=MIN_TEXT_PT)
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
            matplotlib.lines.Line2D([], [], color=INK, marker="o", markersize=3, linestyle="none", label=f"Holm p < {view.level}"),
        ],
        loc="outside lower center", ncols=2,
    )  # fmt: skip
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
            + ("" if labelled else "The cells are too small to print their swings at a readable size: the colour "
               "scale gives them. ")
            + "Every swing, for every pair of references, is in the interaction table."
        ),
        alt=(
            f"Heatmap of {formatting.counted(size * (size - 1) // 2, 'pairwise swing')} between {primary} and "
            f"{alternative}, {formatting.count(len(flipped))} framed as {formatting.noun(len(flipped), 'an order flip', 'order flips')} "
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
        parts.append(f"{formatting.counted(moved, 'pair')} {formatting.verb(moved, 'changes', 'change')} order "
                     f"under {reference}" + (f" (tau-b {said(tau)})" if tau else ""))  # fmt: skip
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
    return f"; {formatting.count(significant)} of these flips {formatting.verb(significant, 'is', 'are')} significant after Holm."


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
            + (f"{UNDECIDED_FLIPS} (the Holm floor below)"
               if view.undecidable else
               f"{said(significant) if significant else formatting.UNDEFINED} significantly after Holm")
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


TOP_PAIRS = 5  # adjacent pairs under the primary reference whose replicability the section states


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
        names = [row["output"] for _, row in rows.select("leaderboard", "best_set", reference=reference, **where)
                 if row["estimate"] == 1]  # fmt: skip
        best.append(f"under {reference}, {', '.join(names) if names else formatting.UNDEFINED}")
    sentences = [f"Plausible best outputs (their simultaneous {level} rank set contains rank 1; {rule}, pooled): "
                 f"{'; '.join(best)}."]  # fmt: skip
    outputs = view.ranked_outputs()
    ranks = {output: view.row("leaderboard", "rank", output=output, reference=view.primary, **where) for output in outputs}
    ordered = sorted((output for output in outputs if ranks[output] and ranks[output]["estimate"] is not None),
                     key=lambda output: (ranks[output]["estimate"], outputs.index(output)))  # fmt: skip
    claims = []
    for winner, loser in list(zip(ordered, ordered[1:]))[:TOP_PAIRS]:
        k_hat = view.row("leaderboard", "k_hat", output=winner, output_2=loser, **where)
        if k_hat is not None and k_hat["estimate"] is not None:
            claims.append(f"{winner} beats {loser} under {formatting.whole(k_hat['estimate'])} of {golds}")
    if claims:
        top = "the adjacent pairs" if len(ordered) - 1 <= TOP_PAIRS else f"the top {TOP_PAIRS} adjacent pairs"
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
        return Section(key="leaderboard", number=0, title=ANALYSIS.title,
                       not_applicable=view.applicability("leaderboard") or NO_LEADERBOARD)  # fmt: skip
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
    return Section(key="leaderboard", number=0, title=ANALYSIS.title, paragraphs=tuple(paragraphs),
                   figures=section_figures, tables=tuple(section_tables))  # fmt: skip


# The leaderboard's own statistics (docs/leaderboard.md): ranks can be fractional (ties), flips are counts. Ranks
# and flips are whole numbers except at ties (an average rank) and interpolated interval ends: each value prints
# as an integer when it is one, with one decimal otherwise ("3 [1, 6]", "2.5 [1, 4]"). Rank sets' ends,
# best-set membership (1 or 0), k-hat and the u of a partial-conjunction row are counts too; p_rank_change is a
# share of replicates (0 to 1) printed as a percentage; the bound on Holm p prints as a p-value does.
LEADERBOARD_STATISTICS = {
    **DIFFERENCES,
    "rank": StatKind(decimals=1, style="whole"),
    "flips": StatKind(decimals=1, style="whole"),
    "flips_significant": StatKind(decimals=0),
    "kendall_tau": StatKind(decimals=2),
    "tie_group": StatKind(decimals=0),
    **dict.fromkeys(("rank_lower_simultaneous", "rank_upper_simultaneous", "best_set", "k_hat",
                     "p_partial_bonferroni", "p_partial_fisher"), StatKind(style="whole")),  # fmt: skip
    "p_rank_change": StatKind(style="share"),
    "holm_floor": StatKind(style="p"),
}


ANALYSIS = Analysis(
    statistics=LEADERBOARD_STATISTICS,
    key="leaderboard",
    title="The leaderboard under each reference",
    question="With several outputs, does the leaderboard keep its order when the reference changes?",
    methods="""- **Simultaneous rank sets** (leaderboard; Mogstad, Romano, Shaikh and Wilhelm 2024). Per reference, rule
  and language, from the paired bootstrap of the differences Δⱼₖ between ranked outputs' F1, σ̂ⱼₖ their
  replicates' standard deviation: c is the confidence quantile (numpy's linear one) over replicates of the
  largest (Δ*ⱼₖ − Δ̂ⱼₖ) / σ̂ⱼₖ over the ordered pairs still tested; k is declared better than j when
  Δ̂ₖⱼ / σ̂ₖⱼ > c; declared pairs leave and c is recomputed until none is declared (step-down). The set of j is
  [1 + #{declared better than j}, p − #{declared worse than j}]; a pair whose replicates never vary is
  declared when its difference is not 0. The sets hold for all outputs at once; the percentile rank
  intervals (`rank` rows) cover each output's rank only one at a time, and on 500 simulated leaderboards of 8
  outputs with ties (1,000 items) all eight covered their true ranks at once in 92.2 % of them, the
  simultaneous sets in 99.6 %. Plausible best: the outputs whose set contains rank 1 (the paper's dedicated
  best-set procedure is tighter); a top-k set is read the same way, the outputs whose set starts at k or above.
- **Replicability across references** (partial conjunction; Benjamini and Heller 2008, Dror et al. 2017). For
  every ordered pair (A, B) and reference i, pᵢ = min(1, (1 + #{Δ*ᵢ ≤ 0}) / (B′ + 1)), the one-sided bootstrap
  p of "A is not better than B" (twice the smaller of a pair's two is its margin's two-sided p). With
  p₍₁₎ ≤ … ≤ p₍K₎: Bonferroni pᵘ = min(1, (K − u + 1) p₍ᵤ₎), Fisher pᵘ = P(χ²₂₍K−u+1₎ ≥ −2 Σᵢ≥ᵤ ln p₍ᵢ₎), each made
  non-decreasing in u; k̂ = the largest u with Bonferroni pᵘ ≤ 1 − confidence (0 if none): "A beats B under at
  least k̂ of K references", family-wise over u. k̂ uses Bonferroni, valid whatever the dependence: Fisher's
  combination assumes independent p-values, and references scored on the same items are positively
  dependent, so its row is shown for comparison only. Both orders of every pair are tested, so no direction
  is chosen from the data.
- **The adjacent family's selection.** The adjacent Holm family picks its pairs from the same data it tests.
  On 500 simulated null leaderboards (6 equally good outputs, 2 references, 2 languages of 150 items) some
  adjacent swing was Holm-significant in 8.2 % of them, but as often (9.4 %) for a family fixed in advance,
  and 8.5 % of all null swings had a raw p below 0.05: the excess is the bootstrap's in small strata (choice
  16), not selection; with 600 items per language the rates were 3.7 % (adjacent) and 4.7 % (fixed). So
  adjacency is read from the point estimates, as before.""",
    finish=finish,
    applicability=applicability,
    section=leaderboard_section,
    figures=(leaderboard_bump, swing_heatmap),
    headlines=headlines,
)
