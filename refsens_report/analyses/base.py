"""What every analysis is made of: its statistics, its place in the audit, and its section of the report.

An analysis module builds one ``Analysis`` and the registry (``refsens_report.analyses.ANALYSES``) lists them
in order. The audit asks each for the statistics to estimate (``estimates``), lets it add rows computed from
the estimated ones (``finish``: Holm, the band, the leaderboard) and asks why it does not apply
(``applicability``); the report asks each for its section, its figures and its headline sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from refsens_report import formatting
from refsens_report.browser import Page, SiteContext
from refsens_report.config import Config
from refsens_report.counts import ColumnKind
from refsens_report.estimator import Estimator, Listed, Stat
from refsens_report.formatting import StatKind
from refsens_report.figures import Figure
from refsens_report.tables import Table
from refsens_report.view import ResultsView

if TYPE_CHECKING:
    from refsens_report.counts import ItemCounts
    from refsens_report.record import Record
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
    record: "Record"
    counts: "ItemCounts"
    groups: "DuplicateGroups"
    defective: "list[DefectiveGroup]"
    subsets: "Subsets"
    # what an analysis's finish learned for results.json beside the rows (its summary), by analysis key
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def has_annotators(self) -> bool:
        """Return whether the record names two annotator passes (agreement, neutrality, decontamination)."""
        return len(self.config.roles.annotators) >= 2

    @cached_property  # a loop over the corpus, asked by several analyses
    def third_pass_known(self) -> bool:
        """Return whether every corpus item records whether a third pass fired (meta.third_pass)."""
        corpus = self.subsets.corpus
        return bool(corpus is not None and corpus.any() and self.record.table.known("third_pass")[corpus].all())


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


@dataclass(frozen=True)
class Analysis:
    """One analysis of docs/method.md section 3: its statistics, when it applies, and its section of the report.

    key: the results' ``analysis`` column and the section's anchor.
    title, question: the section's heading and first sentence.
    methods: its definition in the Methods text (Markdown list items; '' when another analysis's covers it).
    estimates: the statistics to estimate, each on its item set.
    finish: rows computed from the estimated rows (after every analysis before it has finished).
    applicability: results.json ``applicability`` entries: None, or the sentence saying why it does not apply.
    summary: what results.json says beside the rows under the analysis's key (None: nothing).
    files: files the build writes beside results.json (name -> text): item-by-item listings, never in it.
    pages: the files it adds to the site's version folder (its listing pages and their browser's data), given
        the results and the folder holding its files (``browser.Page``; None: none).
    section: the report section, given the results and every drawn figure by key.
    figures: functions drawing its figures (each returns None when it has nothing to show).
    headlines: its headline sentences.
    statistics: how each of its statistics prints and whether it is tested (undeclared: an F1-like score).
    columns: the per-item column kinds it adds to the built-in counts (integer or real valued).
    count_columns: an upper bound on the count columns it adds to one item set's bootstrap (memory budget).
    """

    key: str
    title: str
    question: str
    section: Callable[[ResultsView, Mapping[str, Figure]], Section]
    methods: str = ""
    estimates: Callable[[AuditContext], list[Estimate]] = _nothing
    finish: Callable[[AuditContext, Estimator, Rows], Rows] = _nothing
    applicability: Callable[[AuditContext], dict[str, str | None]] | None = None
    summary: Callable[[AuditContext], Any] | None = None
    files: Callable[[AuditContext], dict[str, str]] | None = None
    pages: Callable[[ResultsView, SiteContext], list[Page]] | None = None
    figures: tuple[Callable[[ResultsView], Any], ...] = ()
    headlines: Callable[[ResultsView], list[str]] = _nothing
    statistics: Mapping[str, StatKind] = field(default_factory=dict)
    columns: tuple[ColumnKind, ...] = ()
    count_columns: Callable[[Config], int] | None = None

    def __post_init__(self) -> None:
        formatting.declare(self.key, self.statistics)

    def why_not(self, context: AuditContext) -> dict[str, str | None]:
        """Return the analysis's applicability entries (an analysis that always applies says None)."""
        return self.applicability(context) if self.applicability else {self.key: None}


def section(analysis: Analysis, view: ResultsView, drawn: Mapping[str, Figure], applies: bool,
            figure_keys: Sequence[str] = (), tables: Sequence[Table] = (), extra: Sequence[str] = (),
            applicability_key: str | None = None, links: Sequence[tuple[str, str]] = ()) -> Section:  # fmt: skip
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
