"""What every analysis is made of: its statistics, its place in the audit, and its section of the report.

An analysis module builds one ``Analysis`` and the registry (``refsens_report.analyses.ANALYSES``) lists them
in order. The audit asks each for the statistics to estimate (``estimates``), lets it add rows computed from
the estimated ones (``finish``: Holm, the band, the leaderboard) and asks why it does not apply
(``applicability``); the report asks each for its section, its figures and its headline sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from refsens_report import formatting
from refsens_report.browser import Page, SiteContext
from refsens_report.config import Config
from refsens_report.counts import ColumnKind
from refsens_report.estimator import Estimator, Listed, Stat
from refsens_report.figures import Figure
from refsens_report.formatting import StatKind
from refsens_report.record import POOLED
from refsens_report.tables import Table
from refsens_report.view import ResultsView, Row

if TYPE_CHECKING:
    from refsens_report.counts import ItemCounts
    from refsens_report.record import Record
    from refsens_report.results import FileText
    from refsens_report.subsets import DefectiveGroup, DuplicateGroups, Subsets

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Estimate:
    """Statistics to estimate on one item set, with the random stream its draws come from."""

    stats: list[Stat]
    mask: np.ndarray | None  # None: the record cannot form this item set
    subset: str  # the results' subset column
    stream: str  # bootstrap.SUBSET_STREAMS key: statistics on one stream share their draws
    listed: tuple[Listed, ...] = ()  # count matrices drawn with the stream, estimated later (``Listed``)


@dataclass
class AuditContext:
    """What the analyses see of the audit: the config, the record, its per-item counts and item sets."""

    config: Config
    record: Record
    counts: ItemCounts
    groups: DuplicateGroups
    defective: list[DefectiveGroup]
    subsets: Subsets
    # what an analysis's finish learned for results.json beside the rows (its summary), by analysis key
    notes: dict[str, Any] = field(default_factory=dict)
    # the engine while it is open (``engine.open_engine``'s run; None: this machine's threads): a partitioned
    # record's (``workers.PartitionedRun``) runs functions where each partition's counts are
    engine: Any = None

    @property
    def has_annotators(self) -> bool:
        """Return whether the record names two annotator passes (agreement, neutrality, decontamination)."""
        return self.config.roles.has_annotators

    @cached_property  # a loop over the corpus, asked by several analyses
    def third_pass_known(self) -> bool:
        """Return whether every corpus item records whether a third pass fired (meta.third_pass)."""
        corpus = self.subsets.corpus
        return bool(corpus is not None and corpus.any() and self.record.table.known("third_pass")[corpus].all())


@dataclass(frozen=True, eq=False)
class Partitioned:
    """What a partitioned record's build keeps for its listings once the audit's counts are let go (the client of
    a Dask run, which never holds the outputs' spans): the config, the record's item sets and the audit's notes
    (what a summary found on the workers that the listings need again, such as the gold-error candidates' sums).
    ``parts`` yields each partition's ``AuditContext`` in record order, each read from its file when asked for
    (its item sets cut to its items): the listings are made a partition at a time (``Analysis.partitioned_files``)
    and the parts merged (``spill.Runs``)."""

    config: Config
    subsets: Subsets
    notes: dict[str, Any]
    parts: Callable[[], Iterable[AuditContext]]


class PartitionedListing(Protocol):
    """An analysis's listing files of a partitioned record (``Analysis.partitioned_files``): every partition is
    given to ``add`` in record order (one read serves every analysis), then ``files`` yields the files as
    ``Analysis.files`` would, the partitions' lines merged from the temporary folder."""

    def add(self, context: AuditContext) -> None: ...

    def files(self) -> Iterable[tuple[str, FileText]]: ...


@dataclass(frozen=True)
class Section:
    """One numbered analysis section: its prose, its figures and tables, or why it does not apply."""

    key: str
    number: int
    title: str
    paragraphs: tuple[str, ...] = ()
    not_applicable: str | None = None
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (file beside the appendix, sentence naming it): pages it points to

    @property
    def anchor(self) -> str:
        return f"section-{self.key}"


NO_RESULTS = "This analysis produced no results for this record."

# The differences every F1-like analysis may produce: signed (bold when the interval excludes zero), and
# tested (a bootstrap p-value) except a leaderboard flip, which is a swing read off the ranks.
DIFFERENCES: dict[str, StatKind] = {
    "skew": StatKind(signed=True, tested=True),
    "delta": StatKind(signed=True, tested=True),
    "margin": StatKind(signed=True, tested=True),
    "swing": StatKind(signed=True, tested=True),
    "flip": StatKind(signed=True),
}
RATE = StatKind(decimals=1)  # a percentage of items


def _nothing(*_: Any) -> list:
    return []


# How a `[check]` threshold bounds its statistic (docs/ci.md): the largest value, the largest |value|, the smallest.
BOUNDS = ("max", "max_abs", "min")


@dataclass(frozen=True)
class ReleaseCheck:
    """One `[check]` key of the release gate (``refsens-report check``; docs/ci.md), declared by the analysis
    whose rows it reads. The gate takes, over ``rows(view)``, the row closest to failing.

    key: the `[check]` key (unique over the registry; config.py reads it, check.py validates it against these).
    bound: one of BOUNDS: how the threshold bounds the statistic.
    rows: the pooled main-rule rows it reads (the analysis's own; why there are none: ``absent``).
    absent: why the results hold no such row when the analysis's applicability says nothing ({primary} is filled).
    interval: whether its rows carry an interval ``fail_when`` may decide on (otherwise only "estimate").
    limits: the thresholds that make sense, (low, high) and why (tau-b's range); None: 0 or more (``min``: any).
    count: the thing counted when the statistic is a whole count ("flips"): the threshold must be whole, and prints so.
    significance: whether it counts significant results (not evaluated when the replicates cannot decide that).
    """

    key: str
    bound: str
    rows: Callable[[ResultsView], list[Row]]
    absent: str
    interval: bool = True
    limits: tuple[float, float, str] | None = None
    count: str = ""
    significance: bool = False

    def __post_init__(self) -> None:
        if self.bound not in BOUNDS:
            raise ValueError(f"{self.key}: bound must be one of {', '.join(BOUNDS)}, got {self.bound!r}")


@dataclass(frozen=True)
class ReleaseRows:
    """The rows of an analysis a release is compared on (``changes.headline_rows``: the changes section, the
    headline column of changes.csv, the site index's grid of versions), pooled, under the main rule.

    rows: the rows, in the order they are listed.
    place: where they stand in the list, which tells the release's story rather than the registry's order: the
    band (0), the primary reference's skew (1), its swap deltas (2), how the ranking holds (3).
    fallback: listed only when no other analysis has rows at the same place (the interaction's swing says how the
    ranking holds when there is no leaderboard).
    """

    rows: Callable[[ResultsView], list[Row]]
    place: int
    fallback: bool = False


@dataclass(frozen=True)
class Ranking:
    """How an analysis ranks the outputs, pooled, under the main rule (the changes' rank moves).

    ranks: (reference, output) -> rank (1 the best; ties share their average rank).
    source: the ranking in words ("the leaderboard's ranks").
    fallback: used only when no other analysis ranks the outputs.
    """

    ranks: Callable[[ResultsView], dict[tuple[str, str], float]]
    source: str
    fallback: bool = False


# the Responsible-AI fields of croissant.json analyses add sentences to (metadata.rai_fields)
RAI_FIELDS = ("rai:dataAnnotationProtocol", "rai:dataAnnotationAnalysis", "rai:dataLimitations")


@dataclass(frozen=True)
class MetadataSentences:
    """Sentences an analysis adds to one Responsible-AI field of croissant.json (``metadata.rai_fields``),
    numbers as printed.

    field: one of RAI_FIELDS. In the protocol they follow who labelled what and precede how duplicates were
    handled; in the limitations they precede what was not assessed.
    sentences: the sentences ([] when the results hold nothing to say).
    place: their order within the field, which tells the field's story rather than the registry's order.
    """

    field: str
    sentences: Callable[[ResultsView], list[str]]
    place: int = 0

    def __post_init__(self) -> None:
        if self.field not in RAI_FIELDS:
            raise ValueError(f"field must be one of {', '.join(RAI_FIELDS)}, got {self.field!r}")


def defined_pooled(view: ResultsView, analysis: str, statistic: str, **criteria: str) -> list[Row]:
    """Return an analysis's pooled rows of a statistic that have an estimate."""
    return [
        row
        for _, row in view.rows.select(analysis, statistic, language=POOLED, **criteria)
        if row["estimate"] is not None
    ]


@dataclass(frozen=True)
class Verdict:
    """What swapping the primary reference for one alternative does: its sentence, by reference."""

    reference: str
    primary: str
    text: str
    rows: tuple[Row, ...] = ()  # the results rows it prints, which the tables below must keep on the page


@dataclass(frozen=True)
class SummaryFigure:
    """A figure an analysis offers as the summary's one figure (Figure 1): its key; a fallback is shown only when
    no other analysis's is drawn (the swap figure, when there is no rank chart)."""

    key: str
    fallback: bool = False


@dataclass(frozen=True)
class IndexColumn:
    """One column of the site index's table of versions (``render.version_figures``): a number of each version.

    heading: the column's heading; value: the number as printed; detail: the small line under it.
    """

    heading: str
    value: Callable[[ResultsView], str]
    detail: Callable[[ResultsView], str]


def describe(row: Row) -> str:
    """Return a row in words, as a check line or the changes section names it: by its statistic, the same
    words whichever analysis produced it (a swing of the interaction, the decontaminated or the duplicates)."""
    statistic, rule = row["statistic"], row["rule"]
    where = ", ".join(part for part in (rule, row["language"], row["policy"]) if part)
    if statistic == "band":
        return f"band{' of ' + row['output'] if row['output'] else ''}, {where}"
    if statistic == "delta":
        return f"Δ {row['output']}, {row['reference']} − {row['reference_2']}, {where}"
    if statistic == "skew":
        return f"skew of {row['reference']}, {row['output']} − {row['output_2']}, {where}"
    if statistic in ("swing", "margin", "flip"):
        pair = f" − {row['reference_2']}" if row["reference_2"] else ""
        return f"{statistic} {row['output']} − {row['output_2']}, {row['reference']}{pair}, {where}"
    names = {"kendall_tau": "tau-b", "flips": "flips", "flips_significant": "significant flips"}
    if statistic in names:
        return f"{names[statistic]} {row['reference']} vs {row['reference_2']}, {where}"
    labels = " ".join(part for part in (row["output"], row["output_2"], row["reference"], row["reference_2"]) if part)
    return f"{row['analysis']} {statistic} {labels}, {where}".replace("  ", " ")


def pooled_rows(
    analysis: str, statistic: str, main_rule: bool = True, primary: bool = False, **criteria: str
) -> Callable[[ResultsView], list[Row]]:
    """Return a function selecting an analysis's pooled rows of one statistic: under the main rule (unless the
    statistic has no rule) and of the primary reference when asked (a ``ReleaseCheck``'s ``rows``)."""

    def rows(view: ResultsView) -> list[Row]:
        where = {
            **criteria,
            **({"rule": view.main_rule} if main_rule else {}),
            **({"reference": view.primary} if primary else {}),
        }
        return [row for _, row in view.rows.select(analysis, statistic, language=POOLED, **where)]

    return rows


@dataclass(frozen=True)
class Analysis:
    """One analysis of docs/method.md section 3: its statistics, when it applies, and its section of the report.

    key: the results' ``analysis`` column and the section's anchor.
    title, question: the section's heading and first sentence.
    methods: its definition in the Methods text (Markdown list items; '' when another analysis's covers it).
    spans: reads what its estimates and count columns need of the record's spans into its own caches, once the
        counts are made and before any analysis's estimates: an audit of a record it loaded frees the spans then
        (``SpanTable.release_spans``), so that no estimate holds them (None: it reads no span).
    estimates: the statistics to estimate, each on its item set.
    finish: rows computed from the estimated rows (after every analysis before it has finished).
    applicability: results.json ``applicability`` entries: None, or the sentence saying why it does not apply.
    summary: what results.json says beside the rows under the analysis's key (None: nothing).
    files: files the build writes beside results.json, yielded a file at a time as (name, text), the text whole or
        in pieces (``results.FileText``): item-by-item listings, never in it.
    partitioned_files: the same files, the same bytes, of a partitioned record whose client holds no outputs'
        spans (``Partitioned``): given the record and a temporary folder, a ``PartitionedListing`` that spills each
        partition's lines there and then merges them, never the whole record at once. An analysis with ``files``
        has it.
    pages: the files it adds to the site's version folder (its listing pages and their browser's data), given
        the results and the folder holding its files (``browser.Page``; None: none).
    downloads: its files and pages the version lists as downloads, (name, description) each, in order; a
        build lists those present in the version folder.
    section: the report section, given the results and every drawn figure by key.
    figures: functions drawing its figures (each returns None when it has nothing to show).
    headlines: its headline sentences.
    statistics: how each of its statistics prints and whether it is tested (undeclared: an F1-like score).
    columns: the per-item column kinds it adds to the built-in counts (integer or real valued).
    count_columns: an upper bound on the count columns it adds to one item set's bootstrap (memory budget).
    checks: the `[check]` keys of the release gate that read its rows.
    release_rows: the rows a release is compared on (the changes, the index's grid), and where they stand.
    ranking: how it ranks the outputs (the changes' rank moves), if it does.
    index_columns: its columns in the site index's table of versions (in registry order).
    metadata: the sentences it adds to croissant.json's Responsible-AI fields.
    verdicts: the summary's verdicts, one per alternative reference (the swap's), if it gives them.
    summary_figure: the figure it offers as the summary's one figure.
    one_line: whether its first headline sentence is the build's one-line answer (the band's).
    brief_table: the key of its table the brief PDF prints (the leaderboard as a paper prints it).
    holm_family: the statistic of its rows Holm's correction runs over (the interaction's swing; the Methods'
    settings count them).
    holm_tests: how many tests that family holds, before the bootstrap (``[audit] resamples = "auto"`` picks B
    for Holm's smallest threshold).
    """

    key: str
    title: str
    question: str
    section: Callable[[ResultsView, Mapping[str, Figure]], Section]
    methods: str = ""
    spans: Callable[[AuditContext], None] | None = None
    estimates: Callable[[AuditContext], list[Estimate]] = _nothing
    finish: Callable[[AuditContext, Estimator, Rows], Rows] = _nothing
    applicability: Callable[[AuditContext], dict[str, str | None]] | None = None
    summary: Callable[[AuditContext], Any] | None = None
    files: Callable[[AuditContext], Iterable[tuple[str, FileText]]] | None = None
    partitioned_files: Callable[[Partitioned, Path], PartitionedListing] | None = None
    pages: Callable[[ResultsView, SiteContext], list[Page]] | None = None
    downloads: tuple[tuple[str, str], ...] = ()
    figures: tuple[Callable[[ResultsView], Any], ...] = ()
    headlines: Callable[[ResultsView], list[str]] = _nothing
    statistics: Mapping[str, StatKind] = field(default_factory=dict)
    columns: tuple[ColumnKind, ...] = ()
    count_columns: Callable[[Config], int] | None = None
    checks: tuple[ReleaseCheck, ...] = ()
    release_rows: ReleaseRows | None = None
    ranking: Ranking | None = None
    index_columns: tuple[IndexColumn, ...] = ()
    metadata: tuple[MetadataSentences, ...] = ()
    verdicts: Callable[[ResultsView], list[Verdict]] | None = None
    summary_figure: SummaryFigure | None = None
    one_line: bool = False
    brief_table: str = ""
    holm_family: str = ""
    holm_tests: Callable[[AuditContext], int] | None = None

    def __post_init__(self) -> None:
        formatting.declare(self.key, self.statistics)
        if self.files is not None and self.partitioned_files is None:
            raise ValueError(f"analysis {self.key}: files without partitioned_files (a partitioned record's build)")

    def why_not(self, context: AuditContext) -> dict[str, str | None]:
        """Return the analysis's applicability entries (an analysis that always applies says None)."""
        return self.applicability(context) if self.applicability else {self.key: None}


def section(
    analysis: Analysis,
    view: ResultsView,
    drawn: Mapping[str, Figure],
    applies: bool,
    figure_keys: Sequence[str] = (),
    tables: Sequence[Table] = (),
    extra: Sequence[str] = (),
    applicability_key: str | None = None,
    links: Sequence[tuple[str, str]] = (),
) -> Section:
    """Return an analysis's section, or its one-sentence reason when it does not apply to this record.

    ``applicability_key`` names the analysis whose sentence explains an empty section that results.json has
    no sentence for (the range and the band come from the swap's scores).
    """
    reason = view.applicability(analysis.key)
    if reason is None and not applies:
        reason = (view.applicability(applicability_key) if applicability_key else None) or NO_RESULTS
    if not applies:
        return Section(key=analysis.key, number=0, title=analysis.title, not_applicable=reason)
    # rows can exist where the analysis proper does not apply (one reference: scores but no swap); print
    # them under the sentence, so the appendix stays lossless
    return Section(
        key=analysis.key,
        number=0,
        title=analysis.title,
        paragraphs=(analysis.question, *extra),
        not_applicable=reason,
        figures=tuple(drawn[name] for name in figure_keys if name in drawn),
        tables=tuple(tables),
        links=tuple(links),
    )
