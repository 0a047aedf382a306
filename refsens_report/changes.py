"""What changed since the previous release: changes.csv, the "Changes since <version>" section, the index grid.

Two versions' results are matched row by row on the results contract's labelling columns (analysis,
statistic, rule, language, output, output_2, reference, reference_2, subset, policy). A matched row is
classed by how its estimate moved:

- ``moved``: each version's estimate lies outside the other version's interval (a move beyond the intervals;
  the two records are not paired, so this is read as a flag, not a test);
- ``within``: both have intervals and at least one estimate lies inside the other's interval;
- ``unchanged``: the estimate is the same number;
- ``changed``: the row has no interval (the band, counts) and its estimate differs;
- ``undefined``: either estimate is undefined;
- ``added`` / ``removed``: the row exists in one version only (a reference, output or language came or went).

The section shows the labellings added or removed, the headline numbers (``headline_rows``) with both
versions' estimates and intervals, and the outputs whose rank under a reference changed; changes.csv holds
every row. Everything is made from the two results.json files, so the same pair gives the same bytes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from refsens_report import formatting
from refsens_report.analyses.base import describe
from refsens_report.analyses.registry import ANALYSES
from refsens_report.prose import said
from refsens_report.tables import PAGE_ROWS
from refsens_report.view import ResultsView, Row

CHANGES_NAME = "changes.csv"
KEY_COLUMNS = (
    "analysis",
    "statistic",
    "rule",
    "language",
    "output",
    "output_2",
    "reference",
    "reference_2",
    "subset",
    "policy",
)
MOVED, WITHIN, CHANGED, UNCHANGED, UNDEFINED, ADDED, REMOVED = (
    "moved",
    "within",
    "changed",
    "unchanged",
    "undefined",
    "added",
    "removed",
)
ROLES = ("references", "outputs", "annotators")


def results_problem(results: Any) -> str | None:
    """Return why a version's results.json cannot be compared with (the shape ``compare`` and ``side_by_side``
    read), or None. A file edited by hand or damaged must not stop the next build with a traceback: the build
    skips such a version with a warning, or refuses it by name when ``--compare-to`` names it (site.py)."""

    def names(value: Any) -> bool:
        return isinstance(value, list) and all(isinstance(name, str) for name in value)

    if not isinstance(results, dict):
        return "not a JSON object"
    config, record = results.get("config"), results.get("record", {})
    roles = config.get("roles") if isinstance(config, dict) else None
    if not isinstance(roles, dict):
        return "no config.roles object"
    for role in ROLES:
        if not names(roles.get(role, [])):
            return f"config.roles.{role} is not a list of names"
    if not roles.get("references") or not roles.get("outputs"):
        return "names no reference or no output"
    audit = config.get("audit", {})
    if not isinstance(audit, dict) or not names(audit.get("rules") or []):
        return "config.audit.rules is not a list of names"
    if (
        not isinstance(record, dict)
        or not names(record.get("languages") or [])
        or not names(results.get("columns") or [])
        or not isinstance(record.get("items") or 0, int)
    ):
        return "record.languages, record.items or columns is not what results.json holds"
    rows = results.get("rows")
    if not isinstance(rows, list):
        return "no list of rows"
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            return f"row {number} is not an object"
        for column, value in row.items():
            if column in ("analysis", "statistic") and not isinstance(value, str):
                return f"row {number}: '{column}' is not a string"
            if (
                column in ("estimate", "ci_low", "ci_high")
                and value is not None
                and (isinstance(value, bool) or not isinstance(value, (int, float)))
            ):
                return f"row {number}: '{column}' is not a number"
            if value is not None and not isinstance(value, (str, int, float)):
                return f"row {number}: '{column}' is not a single value"
        if "analysis" not in row or "statistic" not in row:
            return f"row {number} has no analysis or statistic"
    return None


def key_columns(*results: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the labelling columns rows are matched on (with `type` where both versions' results have it)."""
    extra = tuple(column for column in ("type",) if all(column in (data.get("columns") or ()) for data in results))
    return KEY_COLUMNS + extra


def row_key(row: Row, columns: Sequence[str]) -> tuple[str, ...]:
    return tuple(str(row.get(column) or "") for column in columns)


def classify(previous: Row | None, current: Row | None) -> str:
    """Return how a row changed between two versions (the classes of the module docstring)."""
    if previous is None:
        return ADDED
    if current is None:
        return REMOVED
    before, after = previous["estimate"], current["estimate"]
    if before is None or after is None:
        return UNDEFINED
    if before == after:
        return UNCHANGED
    intervals = (previous["ci_low"], previous["ci_high"], current["ci_low"], current["ci_high"])
    if any(end is None for end in intervals):
        return CHANGED
    low_before, high_before, low_after, high_after = intervals
    outside_before = not low_before <= after <= high_before
    outside_after = not low_after <= before <= high_after
    return MOVED if outside_before and outside_after else WITHIN


@dataclass(frozen=True)
class RowChange:
    """One statistic in both versions (or in one), and how it changed."""

    key: tuple[str, ...]
    previous: Row | None
    current: Row | None
    change: str

    @property
    def row(self) -> Row:
        """Return the row that names the statistic (the current one where it exists)."""
        return self.current if self.current is not None else self.previous  # type: ignore[return-value]

    @property
    def difference(self) -> float | None:
        if self.previous is None or self.current is None:
            return None
        before, after = self.previous["estimate"], self.current["estimate"]
        return None if before is None or after is None else after - before


def compare_rows(previous: Iterable[Row], current: Iterable[Row], columns: Sequence[str]) -> list[RowChange]:
    """Match two versions' rows; return one change per statistic: current rows in order, then removed ones."""
    before = {}
    for row in previous:
        before.setdefault(row_key(row, columns), row)
    changes, seen = [], set()
    for row in current:
        key = row_key(row, columns)
        if key in seen:
            continue
        seen.add(key)
        old = before.get(key)
        changes.append(RowChange(key, old, row, classify(old, row)))
    changes += [RowChange(key, row, None, REMOVED) for key, row in before.items() if key not in seen]
    return changes


# --- changes.csv -----------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def changes_csv(changes: Sequence[RowChange], columns: Sequence[str], headline: set[tuple[str, ...]]) -> str:
    """Return changes.csv: the statistic's labels, both versions' estimate and interval, difference, class."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    numbers = ("estimate", "ci_low", "ci_high")
    writer.writerow(
        [
            *columns,
            *(f"previous_{name}" for name in numbers),
            *(f"current_{name}" for name in numbers),
            "difference",
            "change",
            "headline",
        ]
    )
    for change in changes:
        previous = [_number(change.previous[name]) if change.previous else "" for name in numbers]
        current = [_number(change.current[name]) if change.current else "" for name in numbers]
        writer.writerow(
            [
                *change.key,
                *previous,
                *current,
                _number(change.difference),
                change.change,
                "yes" if change.key in headline else "no",
            ]
        )
    return buffer.getvalue()


# --- what the page shows ---------------------------------------------------------------------------


def headline_rows(view: ResultsView) -> list[Row]:
    """Return the headline statistics a release is compared on, pooled, main rule, primary reference first: the
    rows each analysis declares (``Analysis.release_rows``) in the order of their places (the overall band, the
    primary reference's skew, its swap deltas, how the ranking holds), a fallback's only where its place has no
    other rows."""
    declared = sorted(
        (
            (analysis.release_rows, analysis.release_rows.rows(view))
            for analysis in ANALYSES
            if analysis.release_rows is not None
        ),
        key=lambda pair: pair[0].place,
    )
    filled = {release.place for release, rows in declared if rows and not release.fallback}
    return [row for release, rows in declared if not (release.fallback and release.place in filled) for row in rows]


@dataclass(frozen=True)
class RoleChange:
    """Labellings that came or went in one role (or languages)."""

    role: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Headline:
    """One headline statistic in both versions, as printed."""

    label: str
    previous: str
    current: str
    difference: str
    change: str


@dataclass(frozen=True)
class RankChange:
    """An output whose pooled rank under a reference changed."""

    output: str
    reference: str
    previous: str
    current: str


@dataclass(frozen=True)
class Changes:
    """The "Changes since <previous>" section.

    previous: the version compared with; previous_sha256: its results.json's SHA-256.
    roles: labellings (and languages) added or removed, only the roles that changed.
    items: the record's items in the previous and the current version, as printed.
    headlines: the headline statistics, moved ones first; headlines_note says how many of how many are shown.
    moved, compared: how many headline statistics moved beyond their intervals, of how many in both versions.
    ranks: outputs whose rank changed (leaderboard ranks, or the order of the swap scores), ranks_note likewise.
    rank_source: which rows the ranks come from.
    """

    previous: str
    previous_sha256: str
    roles: tuple[RoleChange, ...]
    items: tuple[str, str]
    headlines: tuple[Headline, ...]
    headlines_note: str
    moved: int
    compared: int
    ranks: tuple[RankChange, ...]
    ranks_note: str
    rank_source: str

    @property
    def title(self) -> str:
        return f"Changes since {self.previous}"

    @property
    def sentence(self) -> str:
        """Return the summary's one line: how many headline numbers moved, what came and went."""
        parts = [f"{self.moved} of {self.compared} headline numbers moved beyond their intervals"]
        for role in self.roles:
            if role.added:
                parts.append(f"{role.role} added: {', '.join(role.added)}")
            if role.removed:
                parts.append(f"{role.role} removed: {', '.join(role.removed)}")
        if self.ranks:
            parts.append(f"{formatting.counted(len(self.ranks), 'rank')} changed")
        return f"Since {self.previous}: " + "; ".join(parts) + "."


def role_changes(previous: ResultsView, current: ResultsView) -> tuple[RoleChange, ...]:
    """Return the labellings added or removed per role, and the languages, where any changed."""
    found = []
    for role in ROLES:
        before, after = list(previous.roles.get(role, [])), list(current.roles.get(role, []))
        added = tuple(name for name in after if name not in before)
        removed = tuple(name for name in before if name not in after)
        if added or removed:
            found.append(RoleChange(role, added, removed))
    before, after = previous.languages[:-1], current.languages[:-1]
    added = tuple(language for language in after if language not in before)
    removed = tuple(language for language in before if language not in after)
    if added or removed:
        found.append(RoleChange("languages", added, removed))
    return tuple(found)


def _difference(change: RowChange) -> str:
    if change.difference is None:
        return formatting.UNDEFINED
    row = change.row
    if (
        formatting.kind_of(row["analysis"], row["statistic"]).style == "whole"
        or row["statistic"] == "flips_significant"
    ):
        return f"{change.difference:+g}"
    return formatting.number(change.difference, formatting.decimals_for(row["analysis"], row["statistic"]), signed=True)


CHANGE_ORDER = {MOVED: 0, CHANGED: 1, ADDED: 2, REMOVED: 3, UNDEFINED: 4, WITHIN: 5, UNCHANGED: 6}


def ranks(view: ResultsView) -> tuple[dict[tuple[str, str], float], str]:
    """Return (reference, output) -> pooled main-rule rank and where it comes from: the first ranking an analysis
    declares (``Analysis.ranking``) that ranks anything, a fallback (the swap scores' order) only after the others."""
    declared = sorted(
        (analysis.ranking for analysis in ANALYSES if analysis.ranking is not None),
        key=lambda ranking: ranking.fallback,
    )
    for ranking in declared:
        found = ranking.ranks(view)
        if found:
            return found, ranking.source
    return {}, declared[-1].source if declared else ""


def compare(
    previous_version: str, previous: Mapping[str, Any], previous_sha256: str, current: Mapping[str, Any]
) -> tuple[Changes, str]:
    """Return the section and changes.csv's text for the current results against a previous version's."""
    before, after = ResultsView.from_json(previous), ResultsView.from_json(current)
    columns = key_columns(previous, current)
    changes = compare_rows(previous["rows"], current["rows"], columns)
    by_key = {change.key: change for change in changes}
    headline_keys = list(
        dict.fromkeys(row_key(row, columns) for row in [*headline_rows(after), *headline_rows(before)])
    )
    headline_changes = sorted(
        (by_key[key] for key in headline_keys if key in by_key), key=lambda change: CHANGE_ORDER[change.change]
    )  # stable: headline order within a class
    shown = headline_changes[:PAGE_ROWS]
    headlines = tuple(
        Headline(
            label=describe(change.row),
            previous=said(change.previous),
            current=said(change.current),
            difference=_difference(change),
            change=change.change,
        )
        for change in shown
    )
    compared = [change for change in headline_changes if change.previous is not None and change.current is not None]
    ranks_before, source_before = ranks(before)
    ranks_after, source_after = ranks(after)
    rank_changes = tuple(
        RankChange(output, reference, formatting.whole(ranks_before[key]), formatting.whole(rank))
        for key in ranks_after
        for reference, output in (key,)
        if key in ranks_before and (rank := ranks_after[key]) != ranks_before[key]
    )
    section = Changes(
        previous=previous_version,
        previous_sha256=previous_sha256,
        roles=role_changes(before, after),
        items=(
            formatting.count((previous.get("record") or {}).get("items")),
            formatting.count((current.get("record") or {}).get("items")),
        ),
        headlines=headlines,
        headlines_note=(
            f"{len(shown)} of {len(headline_changes)} headline statistics, moved ones first; every "
            f"statistic is in {CHANGES_NAME}."
            if len(shown) < len(headline_changes)
            else ""
        ),
        moved=sum(change.change == MOVED for change in compared),
        compared=len(compared),
        ranks=rank_changes[:PAGE_ROWS],
        ranks_note=(f"{PAGE_ROWS} of {len(rank_changes)} rank changes." if len(rank_changes) > PAGE_ROWS else ""),
        rank_source=source_after if source_after == source_before else f"{source_before}, then {source_after}",
    )
    return section, changes_csv(changes, columns, set(headline_keys))


# --- the site index: headline numbers of every version side by side --------------------------------


@dataclass(frozen=True)
class Grid:
    """Headline statistics (rows) by version (columns, newest first), as printed; '—' where a version lacks one.

    versions: the column heads; rows: (label, one cell per version); note: how many rows are left off.
    """

    versions: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    note: str = ""


def side_by_side(versions: Sequence[tuple[str, Mapping[str, Any]]]) -> Grid:
    """Return the grid of headline numbers for the given (version, results.json) pairs, newest first."""
    views = [(name, ResultsView.from_json(results)) for name, results in versions]
    columns = key_columns(*(results for _, results in versions)) if versions else KEY_COLUMNS
    order: dict[tuple[str, ...], Row] = {}
    for _, view in views:  # the newest version's headline order first, then what only older ones had
        for row in headline_rows(view):
            order.setdefault(row_key(row, columns), row)
    cells: dict[str, dict[tuple[str, ...], Row]] = {
        name: {row_key(row, columns): row for row in view.rows.rows} for name, view in views
    }
    keys = list(order)
    rows = tuple(
        (describe(order[key]), tuple(said(cells[name].get(key)) for name, _ in views)) for key in keys[:PAGE_ROWS]
    )
    note = (
        f"{PAGE_ROWS} of {len(keys)} headline statistics; each version's results.csv holds them all."
        if len(keys) > PAGE_ROWS
        else ""
    )
    return Grid(versions=tuple(name for name, _ in views), rows=rows, note=note)
