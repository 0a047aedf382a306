"""Which rows each figure picks, and whether it prints readably, from hand-made results.json (no audit, no site).

The leaderboard-sized record below is built from hand-chosen scores, so the informative cases are known in
advance: under "clean" sys-5 loses 6 points and sys-2 gains 1, under "fixed" sys-3 and sys-5 gain 0.5. The
largest |swing| is therefore sys-2 − sys-5 between fixed and clean (−7.5): neither the first pair of outputs
nor a pair with the primary reference, and negative.
"""

from __future__ import annotations

import copy
import os
from itertools import combinations
from typing import Any

import pytest
from test_analyses import _row, hand_made_results

from refsens_report import figures
from refsens_report.analyses import band, duplicates, interaction, leaderboard, swap, type_confusion
from refsens_report.analyses.registry import ANALYSES, figure_makers
from refsens_report.prose import said
from refsens_report.render import build_sections, version_figures
from refsens_report.view import ResultsView

OUTPUTS = [f"sys-{k}" for k in range(1, 9)]
REFERENCES = ["gold", "fixed", "clean"]
LANGUAGES = ["de", "en", "pooled"]
RULES = ["strict", "relaxed"]
# points each output gains under a reference, against 90 - k under the primary (gold)
BUMPS = {"gold": {}, "fixed": {"sys-3": 0.5, "sys-5": 0.5}, "clean": {"sys-2": 1.0, "sys-5": -6.0}}
TEXT_WIDTH = (210 - 2 * 20) / 25.4  # inches: the PDF's A4 text width (templates/print.css margins)


def score(output: str, reference: str, language: str = "pooled", rule: str = "strict") -> float:
    shift = {"de": 0.2, "en": -0.2}.get(language, 0.0) + (0.3 if rule == "relaxed" else 0.0)
    return 90.0 - OUTPUTS.index(output) + BUMPS[reference].get(output, 0.0) + shift


def interval(value: float, half: float = 0.8) -> tuple[float, float]:
    return (value - half, value + half)


def leaderboard_rows() -> list[dict[str, Any]]:
    """Swap, range, interaction, band, duplicates and leaderboard rows of the 8 outputs under 3 references."""
    rows = []
    for rule in RULES:
        for language in LANGUAGES:
            where = {"rule": rule, "language": language}
            for output in OUTPUTS:
                for reference in REFERENCES:
                    value = score(output, reference, language, rule)
                    rows.append(
                        _row("swap", "score", value, interval(value), output=output, reference=reference, **where)
                    )
                for first, second in combinations(REFERENCES, 2):
                    delta = score(output, first, language, rule) - score(output, second, language, rule)
                    rows.append(
                        _row(
                            "swap",
                            "delta",
                            delta,
                            interval(delta),
                            p=0.5,
                            output=output,
                            reference=first,
                            reference_2=second,
                            **where,
                        )
                    )
            for output, output_2 in combinations(OUTPUTS, 2):
                margin = {r: score(output, r, language, rule) - score(output_2, r, language, rule) for r in REFERENCES}
                for reference in REFERENCES:
                    rows.append(
                        _row(
                            "interaction",
                            "margin",
                            margin[reference],
                            interval(margin[reference]),
                            output=output,
                            output_2=output_2,
                            reference=reference,
                            **where,
                        )
                    )
                for first, second in combinations(REFERENCES, 2):
                    swing = margin[first] - margin[second]
                    big = abs(swing) > 5
                    labels = {"output": output, "output_2": output_2, "reference": first, "reference_2": second}
                    rows.append(
                        _row(
                            "interaction",
                            "swing",
                            swing,
                            interval(swing),
                            p=0.001 if big else 0.5,
                            holm=0.01 if big else 0.9,
                            **labels,
                            **where,
                        )
                    )
                    for policy, factor in (("keep_first", 1.0), ("drop_all", 0.5)):
                        rows.append(
                            _row(
                                "duplicates",
                                "swing",
                                factor * swing,
                                interval(factor * swing),
                                p=0.2,
                                policy=policy,
                                **labels,
                                **where,
                            )
                        )
    for output in OUTPUTS:
        for gold in ("a", "b", *REFERENCES):
            value = score(output, gold) if gold in REFERENCES else 80.0
            rows.append(_row("range", "score", value, interval(value), rule="strict", output=output, reference=gold))
        rows.append(_row("band", "band", 6.8, rule="strict", output=output))
    rows.append(_row("band", "band", 6.8, rule="strict"))
    for language in LANGUAGES:
        for reference in REFERENCES:
            ordered = sorted(OUTPUTS, key=lambda output: -score(output, reference, language))
            for output in OUTPUTS:
                rank = float(ordered.index(output) + 1)
                rows.append(
                    _row(
                        "leaderboard",
                        "rank",
                        rank,
                        (max(1.0, rank - 1), rank + 1),
                        rule="strict",
                        language=language,
                        output=output,
                        reference=reference,
                    )
                )
        for first, second in combinations(REFERENCES, 2):
            pair = {"rule": "strict", "language": language, "reference": first, "reference_2": second}
            flips = [
                (a, b)
                for a, b in combinations(OUTPUTS, 2)
                if (score(a, first) - score(b, first)) * (score(a, second) - score(b, second)) < 0
            ]
            rows.append(_row("leaderboard", "flips", float(len(flips)), **pair))
            for a, b in flips:
                swing = (score(a, first) - score(b, first)) - (score(a, second) - score(b, second))
                rows.append(
                    _row(
                        "leaderboard", "flip", swing, interval(swing), p=0.001, holm=0.01, output=a, output_2=b, **pair
                    )
                )
    return rows


@pytest.fixture
def results() -> dict[str, Any]:
    return hand_made_results()


@pytest.fixture
def view(results: dict[str, Any]) -> ResultsView:
    return ResultsView.from_json(results)


@pytest.fixture
def scale_results() -> dict[str, Any]:
    results = hand_made_results()
    results["config"]["roles"] = {"annotators": ["a", "b"], "outputs": OUTPUTS, "references": REFERENCES}
    results["config"]["audit"]["rules"] = RULES
    results["rows"] = [
        dict(row, reference="gold") if row["analysis"] == "neutrality" else row
        for row in results["rows"]
        if row["analysis"] in ("agreement", "neutrality")
    ]
    results["rows"] += leaderboard_rows()
    results["record"]["languages"] = ["de", "en"]
    results["record"]["subsets"]["audited"] = {"de": 50, "en": 50, "pooled": 100}
    return results


@pytest.fixture
def scale_view(scale_results: dict[str, Any]) -> ResultsView:
    return ResultsView.from_json(scale_results)


def _drawn(draw, view):
    with figures._style():
        drawn = draw(view)
    assert drawn is not None
    return drawn


def _row_labels(axis) -> list[str]:
    """Return an axis's row labels top to bottom."""
    ticks = sorted(zip(axis.get_yticks(), axis.get_yticklabels()), key=lambda tick: -tick[0])
    return [label.get_text() for _, label in ticks]


def _points(axis) -> list[tuple[float, float]]:
    """Return every point marker an axis draws, as (x, y)."""
    return [
        (line.get_xdata()[0], line.get_ydata()[0])
        for line in axis.get_lines()
        if line.get_marker() not in (None, "None", "") and len(line.get_xdata()) == 1
    ]


# --- picking the informative cases ------------------------------------------------------------------


def test_the_swing_figure_draws_the_largest_swings_first(scale_view: ResultsView) -> None:
    assert scale_view.at_scale()
    figure, model = _drawn(interaction.swing_forest, scale_view)
    strict = figure.axes[0]
    assert strict.get_title(loc="left") == "Strict"
    labels = _row_labels(strict)
    assert len(labels) == figures.FIGURE_ROWS
    assert labels[0] == "sys-2 −\nsys-5"  # not the first pair of outputs (sys-1 − sys-2)
    top = max(_points(strict), key=lambda point: point[1])
    assert top == (pytest.approx(-7.5), 0)
    assert model.alt.startswith("Forest plot of the 20 largest pooled swings of 84")
    assert "Largest strict swings: sys-2 − sys-5 (fixed vs clean) -7.50 [-8.30, -6.70]" in model.alt
    assert "The 20 pooled swings with the largest |swing| under the strict rule, of 84, largest first" in model.caption
    # every drawn swing is at least as large as every one left out
    drawn = sorted(abs(x) for x, _ in _points(strict))
    left_out = [abs(row["estimate"]) for row in scale_view.largest("interaction", "swing")[figures.FIGURE_ROWS :]]
    assert drawn[0] >= max(left_out)


def test_the_swing_figure_picks_the_largest_swing_of_a_small_record(results: dict[str, Any]) -> None:
    """Three outputs, one pair of references: the largest |swing| (o2 − o3 here) is drawn first, not o1 − o2."""
    for row in results["rows"]:
        if row["analysis"] == "interaction" and row["statistic"] == "swing" and row["output"] == "o2":
            row["estimate"], row["ci_low"], row["ci_high"] = -9.0, -11.0, -7.0
    view = ResultsView.from_json(results)
    figure, model = _drawn(interaction.swing_forest, view)
    assert _row_labels(figure.axes[0])[0] == "o2 −\no3"
    assert "Every pooled swing, largest |swing| (strict) first" in model.caption
    assert interaction.pooled_swing(view)["output"] == "o2"


def test_one_swing_in_several_languages_is_drawn_per_language(results: dict[str, Any]) -> None:
    results["config"]["roles"]["outputs"] = ["o1", "o2"]
    results["rows"] = [row for row in results["rows"] if row["output"] != "o3" and row["output_2"] != "o3"]
    results["rows"] += [dict(row, language="fr") for row in results["rows"] if row["language"] == "en"]
    results["record"]["languages"] = ["en", "fr"]
    view = ResultsView.from_json(results)
    figure, model = _drawn(interaction.swing_forest, view)
    assert _row_labels(figure.axes[0]) == ["en", "fr", "pooled"]
    assert "F1(o1) − F1(o2) under delivered" in model.caption


def test_the_site_index_shows_the_largest_pooled_swing(scale_view: ResultsView) -> None:
    largest = scale_view.row(
        "interaction",
        "swing",
        rule="strict",
        language="pooled",
        output="sys-2",
        output_2="sys-5",
        reference="fixed",
        reference_2="clean",
    )
    assert largest["estimate"] == pytest.approx(-7.5)
    shown = {cell.heading: cell for cell in version_figures(scale_view)}
    assert shown["Pooled swing (Holm p)"].value == said(largest)
    delta = shown["Largest pooled Δ"]
    assert delta.value == "+6.50 [+5.70, +7.30]" and delta.detail == "sys-5, fixed vs clean, strict"


def test_the_swap_figure_draws_the_primary_against_every_alternative(scale_view: ResultsView) -> None:
    figure, model = _drawn(swap.swap_forest, scale_view)
    panels = [axis for axis in figure.axes if axis.get_visible()]
    assert [axis.get_title(loc="left") for axis in panels] == ["vs fixed", "vs clean"]
    assert _row_labels(panels[0]) == OUTPUTS  # the panels share their rows
    for axis, alternative in zip(panels, ("fixed", "clean")):
        expected = sorted(-BUMPS[alternative].get(output, 0.0) for output in OUTPUTS)
        assert sorted(x for x, _ in _points(axis)) == pytest.approx(expected)
    for output in OUTPUTS:
        for alternative in ("fixed", "clean"):
            assert f"{output} vs {alternative}: " in model.alt
    assert "exchanged for each other reference (one panel each), strict rule" in model.caption
    assert "the deltas between two alternative references are in the swap table" in model.caption


def test_the_swap_figure_keeps_the_outputs_that_move_most(scale_view: ResultsView, monkeypatch) -> None:
    monkeypatch.setattr(swap, "FIGURE_ROWS", 3)
    figure, model = _drawn(swap.swap_forest, scale_view)
    # sys-5 moves 6 (clean), sys-2 1 (clean), sys-3 0.5 (fixed); kept in config order
    assert _row_labels(figure.axes[0]) == ["sys-2", "sys-3", "sys-5"]
    assert "Drawn: the 3 outputs with the largest pooled |Δ| (strict), of 8" in model.caption


def test_the_swap_figure_of_two_references_has_a_panel_per_rule(view: ResultsView) -> None:
    figure, model = _drawn(swap.swap_forest, view)
    assert [axis.get_title(loc="left") for axis in figure.axes] == ["Strict"]
    assert "exchanged for reviewer" in model.caption and "o1: +5.00 [+2.00, +8.00]" in model.alt


def test_the_band_figure_draws_the_steps_of_the_primary_ranking(scale_view: ResultsView) -> None:
    figure, model = _drawn(band.band_margins, scale_view)
    # 28 pairs: more than a figure draws, so each output against the next one down under gold
    assert _row_labels(figure.axes[0]) == [f"sys-{k} −\nsys-{k + 1}" for k in range(1, 8)]
    assert "the 7 pairs of outputs adjacent in gold's ranking (of 28 pairs)" in model.caption


def test_the_duplicates_figure_draws_the_swing_figures_rows(scale_view: ResultsView) -> None:
    swing_figure, _ = _drawn(interaction.swing_forest, scale_view)
    figure, model = _drawn(duplicates.duplicates_multiples, scale_view)
    assert [axis.get_title(loc="left") for axis in figure.axes] == ["keep_first", "drop_all"]
    assert _row_labels(figure.axes[0]) == _row_labels(swing_figure.axes[0])
    halved = max(_points(figure.axes[1]), key=lambda point: point[1])
    assert halved == (pytest.approx(-3.75), 0)  # drop_all halves the swings here
    assert "Pooled swings of sys-2 − sys-5 (fixed vs clean)" in model.alt


# --- reading -----------------------------------------------------------------------------------------


def _captions(view: ResultsView) -> list[str]:
    drawn = {}
    with figures._style():
        for draw in figure_makers():
            made = draw(view)
            if made is not None:
                drawn[made[1].key] = made[1]
    sections, tables = build_sections(view, drawn)
    items = [*tables, *(figure for section in sections for figure in section.figures)]
    assert len(drawn) >= 7 and len(tables) >= 8
    # the page prints "Table N. <title>. <caption>"
    return [f"{item.title}. {item.caption} {getattr(item, 'alt', '')}" for item in items]


def test_no_caption_asks_a_question_and_ends_it_with_a_period(view: ResultsView, scale_view: ResultsView) -> None:
    for results_view in (view, scale_view):
        for caption in _captions(results_view):
            assert "?." not in caption, caption


def _printed_sizes(figure, texts) -> list[float]:
    scale = min(1.0, TEXT_WIDTH / figure.get_figwidth())  # a figure wider than the text is shrunk to fit
    return [text.get_fontsize() * scale for text in texts]


@pytest.mark.parametrize("names", [OUTPUTS, [f"a-rather-long-system-name-{k:02d}_lstmCrf" for k in range(14)]])
def test_heatmap_cell_labels_print_at_7_pt_or_more(scale_results: dict[str, Any], names: list[str]) -> None:
    results = copy.deepcopy(scale_results)
    if names != OUTPUTS:  # the same swings under longer names, and more of them (as CoNLL-2003's 14 systems)
        renamed = dict(zip(OUTPUTS, names))
        results["config"]["roles"]["outputs"] = names
        for row in results["rows"]:
            row["output"], row["output_2"] = (
                renamed.get(row["output"], row["output"]),
                renamed.get(row["output_2"], row["output_2"]),
            )
        extra = names[len(OUTPUTS) :]
        for language in LANGUAGES:
            for output in extra:
                for reference in REFERENCES:
                    results["rows"].append(
                        _row(
                            "leaderboard",
                            "rank",
                            9.0 + extra.index(output),
                            rule="strict",
                            language=language,
                            output=output,
                            reference=reference,
                        )
                    )
    view = ResultsView.from_json(results)
    figure, model = _drawn(leaderboard.swing_heatmap, view)
    axis = figure.axes[0]
    cells = axis.texts
    assert len(cells) == len(OUTPUTS) * (len(OUTPUTS) - 1) // 2  # every swing is printed in its cell
    assert min(_printed_sizes(figure, cells)) >= 7
    assert min(_printed_sizes(figure, axis.get_xticklabels() + axis.get_yticklabels())) >= 7
    assert figure.get_figwidth() <= TEXT_WIDTH
    # and each label fits inside its cell once the figure is laid out
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    cell = axis.transData.transform((1, 0))[0] - axis.transData.transform((0, 0))[0]
    assert max(text.get_window_extent(canvas.get_renderer()).width for text in cells) < cell


def test_type_heatmap_cell_labels_print_at_7_pt_or_more(results: dict[str, Any]) -> None:
    results["type_confusion"]["cells"] = [
        {"type_a": f"TYPE_{k:02d}", "type_b": f"TYPE_{k:02d}", "count": 1000 * k + 1} for k in range(1, 17)
    ]
    figure, model = _drawn(type_confusion.type_heatmap, ResultsView.from_json(results))
    cells = figure.axes[0].texts
    assert sorted(text.get_text() for text in cells)[:3] == ["1.0k", "10k", "11k"]
    assert len(cells) == 16 and min(_printed_sizes(figure, cells)) >= 7
    assert "k = thousands" in model.caption


def test_every_figure_prints_its_text_at_7_pt_or_more(view: ResultsView, scale_view: ResultsView) -> None:
    for results_view in (view, scale_view):
        for draw in figure_makers():
            with figures._style():
                made = draw(results_view)
            if made is None:
                continue
            figure = made[0]
            texts = [text for text in figure.findobj(figures.mpl().text.Text) if text.get_text().strip()]
            assert min(_printed_sizes(figure, texts)) >= 7, draw.__name__


def test_the_rank_chart_has_no_pale_yellow_and_prints_ranks_as_integers(scale_view: ResultsView) -> None:
    figure, model = _drawn(leaderboard.leaderboard_bump, scale_view)
    colours = {line.get_color().lower() for line in figure.axes[0].get_lines()}
    assert len(colours) == len(figures.OKABE_ITO) and "#f0e442" not in colours
    ends = [text.get_text() for text in figure.axes[0].texts]
    assert "sys-1  1" in ends and "1  sys-1" in ends
    assert "sys-1 1 [1, 2]" in model.alt


def test_neutrality_and_range_figures_draw_intervals(view: ResultsView) -> None:
    from refsens_report.analyses import neutrality, score_range

    for draw, interval_count in ((neutrality.neutrality_dots, 2), (score_range.range_dumbbells, 3 * 4)):
        figure, model = _drawn(draw, view)
        segments = [
            line
            for axis in figure.axes
            for line in axis.get_lines()
            if len(line.get_xdata()) == 2
            and line.get_ydata()[0] == line.get_ydata()[1]
            and line.get_xdata()[0] != line.get_xdata()[1]
        ]
        assert len(segments) == interval_count, draw.__name__
        assert "95% CI" in model.caption


def test_one_language_is_drawn_once_not_twice_as_pooled(view: ResultsView) -> None:
    assert figures.figure_languages(view) == ["en"]


def test_the_registry_draws_every_figure_of_the_scale_record(scale_view: ResultsView) -> None:
    keys = []
    for draw in figure_makers():
        with figures._style():
            made = draw(scale_view)
        if made is not None:
            keys.append(made[1].key)
    paper = [
        "neutrality",
        "swap",
        "range",
        "swing",
        "band",
        "duplicates",
        "type-confusion",
        "leaderboard-bump",
        "leaderboard-swings",
    ]
    assert [key for key in keys if key in paper] == paper  # an analysis added to the registry may add its own
    keys = [analysis.key for analysis in ANALYSES]
    assert [key for key in keys if key in ("agreement", "neutrality", "swap")] == ["agreement", "neutrality", "swap"]


# --- fonts on a machine whose matplotlib font cache predates the Noto fonts ----------------------------------

STALE_CACHE_SCRIPT = """
import json, sys
from pathlib import Path

import matplotlib.font_manager as font_manager

# a font cache built before the Noto fonts were installed: it lists none of them
font_manager.fontManager.ttflist = [entry for entry in font_manager.fontManager.ttflist if "Noto" not in entry.name]
font_manager.fontManager._findfont_cached.cache_clear()

from refsens_report import figures

labels, out, hidden = json.loads(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
if hidden:  # the Debian packages are not installed either
    figures.NOTO_FOLDERS = {package: Path(hidden) for package in figures.NOTO_FOLDERS}


def draw(key):
    def make(view):
        figure, axes = figures.subplots(1, 1, figsize=(3, 2))
        axes.set_yticks(range(len(labels)), [figures.plain(label) for label in labels])
        return figure, figures.Figure(key=key, title=key, caption="", alt="")
    return make


# two figures: drawn in forked workers where the machine has two cores, as a build draws them
drawn = figures.write_figures(None, out, [draw("first"), draw("second")])
assert sorted(drawn) == ["first", "second"], drawn
with figures._style():
    figure, _ = draw("here")(None)
    figures._fit_fonts(figure)
    figures._svg(figure)
    fonts = {text.get_text(): font_manager.findfont(text.get_fontproperties())
             for text in figure.findobj(figures.mpl().text.Text) if text.get_text() in labels}
print(json.dumps(fonts))
"""


def run_with_a_stale_font_cache(tmp_path, hidden: str = "") -> tuple[dict[str, str], str]:
    """Draw figures labelled in Devanagari, Arabic and Chinese in a fresh process whose font list lacks Noto."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from conftest import UNICODE_TYPES

    project = Path(__file__).resolve().parents[1]
    labels = list(UNICODE_TYPES.values())
    finished = subprocess.run(
        [sys.executable, "-c", STALE_CACHE_SCRIPT, json.dumps(labels), str(tmp_path), hidden],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(project)},
    )
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout), finished.stderr


def test_a_stale_font_cache_still_gives_each_script_its_noto_font(tmp_path):
    if not all(folder.is_dir() for folder in figures.NOTO_FOLDERS.values()):
        pytest.skip(f"the Noto fonts are not installed ({', '.join(figures.NOTO_FOLDERS)})")
    fonts, stderr = run_with_a_stale_font_cache(tmp_path)
    assert "findfont" not in stderr and stderr == "", stderr
    expected = {"नाम": "NotoSansDevanagari-", "اسم": "NotoSansArabic-", "姓名": "NotoSansCJK"}
    assert sorted(fonts) == sorted(expected), fonts
    assert all(os.path.basename(path).startswith(expected[label]) for label, path in fonts.items()), fonts


def test_without_the_noto_fonts_the_missing_package_is_named_once(tmp_path):
    fonts, stderr = run_with_a_stale_font_cache(tmp_path, hidden=str(tmp_path / "no-fonts"))
    assert "findfont" not in stderr
    [line] = stderr.splitlines()
    assert line.startswith("warning: figures: no font for Noto Sans Devanagari, Noto Sans Arabic, Noto Sans CJK SC")
    assert line.endswith("install the Debian package fonts-noto-cjk and fonts-noto-core")
    assert all("Noto" not in path for path in fonts.values())  # drawn all the same, with what there is


# --- many or long labels: no two collide -------------------------------------------------------------


def _extents(figure, texts) -> list:
    """Return the laid-out boxes (display units) of the texts that print something."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return [text.get_window_extent(canvas.get_renderer()) for text in texts if text.get_text().strip()]


def _apart(boxes) -> bool:
    return not any(first.overlaps(second) for first, second in combinations(boxes, 2))


def test_labels_at_tied_or_near_places_are_dodged_apart_around_them() -> None:
    assert figures.dodged([1, 2, 3], 0.5, 0.5, 3.5) == [1, 2, 3]  # apart already: where they are
    # a tie (4.5, 4.5) and a neighbour (4) spread evenly around their mean, in their order; 7 stays
    assert figures.dodged([4.5, 4.5, 4, 7], 1, 0.5, 10) == pytest.approx([13 / 3, 16 / 3, 10 / 3, 7])
    assert figures.dodged([1, 1, 1], 1, 0.5, 3.5) == [0.5, 1.5, 2.5]  # kept inside the axis
    assert figures.dodged([10, 10, 10], 1, 0.5, 10.5) == [8.5, 9.5, 10.5]


def test_panel_titles_wrap_or_take_fewer_columns_to_fit(view: ResultsView, results: dict[str, Any]) -> None:
    from refsens_report.analyses import score_range

    assert figures.panel_columns(["Output: o1", "Output: o2", "Output: o3"], 0.3) == (
        3,
        ["Output: o1", "Output: o2", "Output: o3"],
    )
    # the 30-type record's four outputs: four a row, each name on its own line under "Output:"
    columns, titles = figures.panel_columns([f"Output: system-{k:02d}-finetuned" for k in range(4)], 0.33)
    assert columns == 4 and titles[0] == "Output:\nsystem-00-finetuned"
    # a name too wide for a third of the width: two rows of two, not a row of two and one alone
    names = [f"a-rather-long-system-name-{k:02d}_lstmCrf" for k in range(3)]
    columns, titles = figures.panel_columns([f"Output: {name}" for name in names], 0.33)
    assert columns == 2 and titles[0] == f"Output:\n{names[0]}"
    # drawn: the score range's panels in two rows, the titles apart and inside the figure
    renamed = dict(zip(["o1", "o2", "o3"], names))
    results["config"]["roles"]["outputs"] = names
    for row in results["rows"]:
        row["output"] = renamed.get(row["output"], row["output"])
    figure, _ = _drawn(score_range.range_dumbbells, ResultsView.from_json(results))
    panels = [axis for axis in figure.axes if axis.get_visible() and axis.get_title(loc="left")]
    assert len(panels) == 3 and len({axis.get_position().y0 for axis in panels}) == 2
    assert _titles_apart(figure, panels)


def _titles_apart(figure, panels) -> bool:
    """Return whether the panels' titles, laid out, touch no other and stay inside the figure."""
    shown = {axis.get_title(loc="left") for axis in panels}
    boxes = _extents(figure, [text for text in figure.findobj(figures.mpl().text.Text) if text.get_text() in shown])
    assert len(boxes) == len(panels)
    return _apart(boxes) and all(0 <= box.x0 and box.x1 <= figure.bbox.width for box in boxes)


def test_the_neutrality_panels_wrap_long_reference_names(results: dict[str, Any]) -> None:
    from refsens_report.analyses import neutrality

    names = {"delivered": "delivered-by-the-vendor-in-march_v2", "reviewer": "second-pass-by-the-reviewing-linguists"}
    results["config"]["roles"]["references"] = list(names.values())
    for row in results["rows"]:
        row["reference"] = names.get(row["reference"], row["reference"])
    figure, _ = _drawn(neutrality.neutrality_dots, ResultsView.from_json(results))
    panels = [axis for axis in figure.axes if axis.get_visible()]
    # side by side, each name under "Reference:" (on one line it would run into the other panel's title)
    assert [axis.get_title(loc="left") for axis in panels] == [f"Reference:\n{name}" for name in names.values()]
    assert _titles_apart(figure, panels)


def _many_outputs(results: dict[str, Any], count: int) -> ResultsView:
    """The scale record with ``count`` outputs: the 8 hand-made ones, then more ranked 9, 10, ... under every
    reference, two by two tied (9.5, 9.5, 11.5, ...), as 50 real systems tie."""
    extra = [f"system-{k:02d}-finetuned" for k in range(len(OUTPUTS), count)]
    results["config"]["roles"]["outputs"] = OUTPUTS + extra
    for language in LANGUAGES:
        for reference in REFERENCES:
            for index, output in enumerate(extra):
                rank = 9.5 + 2 * (index // 2) + (index % 2 if reference == "clean" else 0)
                results["rows"].append(
                    _row(
                        "leaderboard",
                        "rank",
                        rank,
                        (rank - 1, rank + 1),
                        rule="strict",
                        language=language,
                        output=output,
                        reference=reference,
                    )
                )
    return ResultsView.from_json(results)


def test_the_rank_chart_of_many_outputs_draws_the_best_ranked_with_labels_apart(scale_results: dict[str, Any]) -> None:
    view = _many_outputs(scale_results, 50)
    figure, model = _drawn(leaderboard.leaderboard_bump, view)
    axis = figure.axes[0]
    assert len(axis.get_lines()) == figures.FIGURE_ROWS and len(axis.texts) == 2 * figures.FIGURE_ROWS
    assert {text.get_text() for text in axis.texts} >= {
        "sys-1  1",
        "system-09-finetuned  9.5",
        "10.5  system-09-finetuned",
    }
    assert (
        "Drawn: the 20 outputs with the largest strict F1 under gold, of 50; every one is in the leaderboard table"
        in model.caption
    )
    assert model.alt.startswith("Bump chart of 20 of 50 outputs")
    assert _apart(_extents(figure, axis.texts))  # the tied ranks' labels too
    assert min(_printed_sizes(figure, axis.texts)) >= 7
    assert figure.get_figheight() <= 82 / 25.4  # the summary prints it at most 82 mm tall: at its own size


def test_the_swing_heatmap_of_many_outputs_draws_the_best_ranked(scale_results: dict[str, Any]) -> None:
    view = _many_outputs(scale_results, 50)
    figure, model = _drawn(leaderboard.swing_heatmap, view)
    axis = figure.axes[0]
    assert len(axis.get_xticklabels()) == len(axis.get_yticklabels()) == figures.FIGURE_ROWS - 1
    assert {label.get_rotation() for label in axis.get_xticklabels()} == {45}
    assert "Drawn: the 20 outputs with the largest strict F1 under gold, of 50" in model.caption
    assert _apart(_extents(figure, axis.get_yticklabels()))


def test_heatmap_labels_stand_upright_then_thin_out_as_cells_narrow() -> None:
    pitch = figures.LABEL_PITCH
    names = [f"n{k}" for k in range(12)]
    for cell, angle, step in ((1.5 * pitch, 45, 1), (1.1 * pitch, 90, 1), (0.4 * pitch, 90, 3)):
        figure, axis = figures.subplots(figsize=(figures.WIDTH, 3))
        assert figures.matrix_labels(axis, names, names, cell) == step
        assert [label.get_text() for label in axis.get_xticklabels()] == names[::step]
        assert {label.get_rotation() for label in axis.get_xticklabels()} == {angle}
