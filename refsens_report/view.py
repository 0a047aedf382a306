"""results.json as the report reads it: rows selectable by their labels, the roles, languages and significance.

Tables, figures and sentences read numbers only through ``ResultsView``; they never compute a statistic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import combinations
from pathlib import Path
from typing import Any

from refsens_report import formatting
from refsens_report.bootstrap import AUTO_MIN_RESAMPLES, auto_resamples, decisive_resamples, significant
from refsens_report.config import AuditSettings, Check, ReportSettings, Roles
from refsens_report.counts import DEFAULT_RULES, RULE_NAMES
from refsens_report.record import POOLED

Row = Mapping[str, Any]


def largest_first(rows: Iterable[Row]) -> list[Row]:
    """Return the rows with a defined estimate, the largest |estimate| first (ties keep their order).

    The one rule by which figures and the site index pick the informative rows among many: the largest swings,
    the largest deltas. It orders printed numbers; it computes none.
    """
    return sorted((row for row in rows if row["estimate"] is not None), key=lambda row: -abs(row["estimate"]))


# More outputs than this (or more pairs of references), and the record is leaderboard-sized: the headlines
# summarise instead of listing, and the swap and interaction tables are laid out long.
SCALE_OUTPUTS = 3
# said of order flips in place of a count of significant ones when the run cannot decide significance
# (ResultsView.undecidable, said in full once: in the draft note and under the leaderboard)
UNDECIDED_FLIPS = "significance after Holm undecided"


class ResultsRows:
    """The rows of results.json, selectable by column values; each row keeps its index (results.csv line - 2).

    Tables ask for one row per cell, tens of thousands at leaderboard scale: each (analysis, statistic) and set
    of columns asked about is indexed once, on first use, so a lookup costs a dictionary access, not a scan.
    A column a row lacks reads as empty: results of schema 1 have no ``type``, and their rows are type "".
    Per-type rows (analysis ``by_type``) differ only by ``type``: select them with ``type=...``.
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]]):
        self.rows = list(rows)
        self._groups: dict[tuple[str, str], list[tuple[int, Mapping[str, Any]]]] = {}
        for index, row in enumerate(self.rows):
            self._groups.setdefault((row["analysis"], row["statistic"]), []).append((index, row))
        self._indexes: dict[tuple[str, str, tuple[str, ...]], dict[tuple, list[tuple[int, Mapping[str, Any]]]]] = {}

    def _index(
        self, analysis: str, statistic: str, columns: tuple[str, ...]
    ) -> dict[tuple, list[tuple[int, Mapping[str, Any]]]]:
        key = (analysis, statistic, columns)
        index = self._indexes.get(key)
        if index is None:
            index = {}
            for found in self._groups.get((analysis, statistic), []):
                index.setdefault(tuple(found[1].get(column, "") for column in columns), []).append(found)
            self._indexes[key] = index
        return index

    def select(self, analysis: str, statistic: str, **criteria: str) -> list[tuple[int, Mapping[str, Any]]]:
        """Return (index, row) for every row of a statistic whose columns equal ``criteria``, in results order."""
        if not criteria:
            return list(self._groups.get((analysis, statistic), []))
        columns = tuple(sorted(criteria))
        return list(self._index(analysis, statistic, columns).get(tuple(criteria[c] for c in columns), []))

    def one(self, analysis: str, statistic: str, **criteria: str) -> tuple[int, Mapping[str, Any]] | None:
        """Return the first (index, row) matching, or None when there is none."""
        columns = tuple(sorted(criteria))
        found = self._index(analysis, statistic, columns).get(tuple(criteria[c] for c in columns))
        return found[0] if found else None

    def has(self, analysis: str, statistic: str | None = None) -> bool:
        """Return whether the results hold any row of an analysis (and statistic)."""
        return any(a == analysis and (statistic is None or s == statistic) for a, s in self._groups)


def _used_table(kind: type, used: Any) -> Any:
    """Return one config table (a config.py dataclass) from results.json's copy of it as used: lists become
    tuples, and a key the copy lacks (an older results.json, a hand-made one) reads as the table's default."""
    used = used if isinstance(used, Mapping) else {}
    return kind(
        **{
            option.name: tuple(used[option.name]) if isinstance(used[option.name], list) else used[option.name]
            for option in fields(kind)
            if option.name in used
        }
    )


@dataclass(frozen=True)
class Settings:
    """results.json's config as used, read once into the config's own typed tables: what the report reads of it.

    The options, their types and defaults are declared once, in config.py; a report never reads them from
    results.json's dicts by string keys.
    """

    roles: Roles
    audit: AuditSettings
    report: ReportSettings
    checks: tuple[Check, ...] | None  # `[check]` as used (thresholds and fail_when), None when the build had none

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> Settings:
        """Return the settings of a results.json (its "config", the config as used)."""
        config = results.get("config")
        config = config if isinstance(config, Mapping) else {}
        roles = config.get("roles") if isinstance(config.get("roles"), Mapping) else {}
        report = dict(config.get("report") or {})
        if isinstance(report.get("datasheet"), str):  # as written in the config: where it was, not where it is
            report["datasheet"] = Path(report["datasheet"])
        checks = config.get("check")
        return cls(
            roles=Roles(
                annotators=tuple(roles.get("annotators") or ()),
                outputs=tuple(roles.get("outputs") or ()),
                references=tuple(roles.get("references") or ()),
                descriptions=dict(roles.get("descriptions") or {}),
            ),
            audit=_used_table(AuditSettings, config.get("audit")),
            report=_used_table(ReportSettings, report),
            checks=None
            if checks is None
            else tuple(
                Check(key=key, threshold=float(used["threshold"]), fail_when=used.get("fail_when", "estimate"))
                for key, used in checks.items()
            ),
        )


@dataclass(frozen=True)
class HolmFamily:
    """results.json "interaction": the Holm family the audit tested, as analyses/interaction.finish wrote it."""

    name: str  # config.FAMILIES: adjacent, primary or all
    tests: int  # its size: the swings Holm's correction ran over (0: none; older results: not recorded)
    ranking: tuple[str, ...] = ()  # adjacent: the primary reference's ranking the pairs were read from
    resamples: int | None = None  # B the floor was computed with
    holm_floor: float | None = None  # the smallest Holm p the family can reach with B replicates

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> HolmFamily | None:
        """Return the family results.json names; None when it names none (results without an interaction)."""
        holm = results.get("interaction") or {}
        if not holm:
            return None
        return cls(
            name=str(holm.get("family", "")),
            tests=holm.get("tests") or 0,
            ranking=tuple(holm.get("ranking") or ()),
            resamples=holm.get("resamples"),
            holm_floor=holm.get("holm_floor"),
        )


@dataclass(frozen=True)
class ResultsView:
    """results.json with its rows indexed, and the roles and languages every table is laid out by."""

    data: Mapping[str, Any]
    rows: ResultsRows = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultsView:
        formatting.adopt(data.get("statistics") or {})  # how each statistic prints, as the audit declared it
        return cls(data=data, rows=ResultsRows(data["rows"]))

    @cached_property
    def settings(self) -> Settings:
        """Return the config as used, typed (Settings): read from results.json once, on first use."""
        return Settings.from_results(self.data)

    @property
    def roles(self) -> Mapping[str, list[str]]:
        return self.data["config"]["roles"]

    @property
    def annotators(self) -> list[str]:
        return list(self.roles.get("annotators", []))

    @property
    def outputs(self) -> list[str]:
        return list(self.roles["outputs"])

    @property
    def references(self) -> list[str]:
        return list(self.roles["references"])

    @property
    def primary(self) -> str:
        return self.references[0]

    @property
    def rules(self) -> list[str]:
        rules = self.settings.audit.rules or DEFAULT_RULES
        return [rule for rule in RULE_NAMES if rule in rules]

    @property
    def main_rule(self) -> str:
        """Return the rule headline numbers use: strict when it was computed."""
        return "strict" if "strict" in self.rules else self.rules[0]

    @property
    def languages(self) -> list[str]:
        """Return the languages (sorted, as in the rows) followed by 'pooled'."""
        languages = self.data.get("record", {}).get("languages")
        if not languages:
            languages = sorted({row["language"] for row in self.rows.rows if row["language"] != POOLED})
        return [*languages, POOLED]

    @property
    def distinct_languages(self) -> list[str]:
        """Return the language groups whose rows differ: every language and pooled, or only pooled with one
        language (its rows are the pooled rows): a count over groups counts each row once."""
        languages = self.languages
        return [POOLED] if len(languages) == 2 else languages

    @property
    def per_language_phrase(self) -> str:
        """Return which groups a count covers: 'per language and pooled', or 'pooled; one language'."""
        return "pooled; one language" if len(self.languages) == 2 else "per language and pooled"

    @property
    def confidence_label(self) -> str:
        """Return e.g. '95% CI'."""
        return f"{self.confidence * 100:g}% CI"

    @property
    def alpha(self) -> float:
        """Return the significance level every test is read at: 1 - confidence."""
        return 1 - self.confidence

    @property
    def confidence(self) -> float:
        return self.data.get("confidence", 0.95)

    @property
    def level(self) -> str:
        """Return the significance level as printed in sentences and legends: '0.05'."""
        return f"{self.alpha:g}"

    def significant(self, p_value: float | None) -> bool:
        """Return whether a (Holm) p-value is significant at the configured level."""
        return significant(p_value, self.confidence)

    @property
    def holm(self) -> Mapping[str, Any]:
        """Return results.json "interaction": the Holm family's name, size (tests), resamples and floor."""
        return self.data.get("interaction") or {}

    @property
    def holm_family(self) -> HolmFamily | None:
        """Return the Holm family the audit tested (typed: its name, size, ranking, B and floor), or None."""
        return HolmFamily.from_results(self.data)

    @property
    def undecidable(self) -> str:
        """Return the sentence saying this run cannot decide significance ('' when it can).

        It cannot when the Holm floor (the smallest Holm p the family can reach with B replicates) is at or
        above the level: every significance count would read 0 whatever the data. Every sentence that counts
        significant results says this instead, and `check` refuses a threshold on significance.
        """
        floor, tests = self.holm.get("holm_floor"), self.holm.get("tests")
        if floor is None or not tests or floor < self.alpha:
            return ""
        resamples = self.data.get("resamples") or self.holm.get("resamples")
        return (
            f"This run cannot decide significance: with {formatting.counted(tests, 'test')} in the Holm family "
            f"and {formatting.counted(resamples, 'replicate')}, no Holm p can fall below "
            f"{formatting.p_value(floor)} (the level is {self.level}); deciding it needs at least "
            f"{formatting.counted(decisive_resamples(tests, self.confidence), 'replicate')} "
            f'(resamples = "auto" picks {formatting.count(auto_resamples(tests, self.confidence))}).'
        )

    @property
    def draft(self) -> str:
        """Return why the build is a draft ('' when it is not): too few replicates to decide significance
        (``undecidable``), or fewer than "auto" ever picks. A draft says so in its title and page, is published
        into a site only with `build --draft`, and is never the site's latest version."""
        resamples = self.data.get("resamples")
        if self.undecidable:
            return self.undecidable
        if isinstance(resamples, int) and resamples < AUTO_MIN_RESAMPLES:
            return (
                f"This run has {formatting.counted(resamples, 'replicate')}, fewer than the "
                f'{formatting.count(AUTO_MIN_RESAMPLES)} that resamples = "auto" always uses.'
            )
        return ""

    def row(self, analysis: str, statistic: str, **criteria: str) -> Row | None:
        """Return the first row of a statistic whose columns equal ``criteria``, or None."""
        found = self.rows.one(analysis, statistic, **criteria)
        return found[1] if found else None

    def at_scale(self) -> bool:
        """Return whether the record is leaderboard-sized: prose summarises and tables are laid out long."""
        return len(self.outputs) > SCALE_OUTPUTS or len(self.reference_pairs()) > SCALE_OUTPUTS

    def largest(self, analysis: str, statistic: str, **criteria: str) -> list[Row]:
        """Return a statistic's pooled rows under the main rule (unless ``criteria`` say otherwise) matching
        ``criteria``, the largest |estimate| first (``largest_first``)."""
        where = {"rule": self.main_rule, "language": POOLED, **criteria}
        return largest_first(row for _, row in self.rows.select(analysis, statistic, **where))

    def primary_order(self) -> list[str]:
        """Return the outputs in the order of their pooled main-rule score under the primary reference, highest
        first (ties, and outputs without a score last, in config order): an ordering of printed scores."""

        def score(output: str) -> float:
            row = self.row("swap", "score", rule=self.main_rule, language=POOLED, output=output, reference=self.primary)
            return -row["estimate"] if row and row["estimate"] is not None else float("inf")

        return sorted(self.outputs, key=score)

    def ranked_outputs(self) -> list[str]:
        """Return the outputs the leaderboard ranks (those with rank rows), in config order."""
        ranked = {row["output"] for _, row in self.rows.select("leaderboard", "rank")}
        return [output for output in self.outputs if output in ranked]

    def items_phrase(self, subset: str) -> str:
        """Return '1,234 items' for a subset's pooled size, or 'its items' when unknown; with a cluster key, the
        clusters the bootstrap resampled beside them ('3,453 items in 231 clusters by document')."""
        size = self.subset_size(subset)
        if size is None:
            return "its items"
        clusters = self.data.get("record", {}).get("clusters") or {}
        count = ((clusters.get("subsets") or {}).get(subset) or {}).get(POOLED) if clusters.get("key") else None
        if count is None:
            return formatting.counted(size, "item")
        return f"{formatting.counted(size, 'item')} in {formatting.counted(count, 'cluster')} by {clusters['key']}"

    def applicability(self, key: str) -> str | None:
        """Return the sentence saying why an analysis does not apply, or None when it ran."""
        return (self.data.get("applicability") or {}).get(key)

    def subset_size(self, subset: str, language: str = POOLED) -> int | None:
        """Return how many items a subset holds (pooled by default)."""
        return self.data.get("record", {}).get("subsets", {}).get(subset, {}).get(language)

    def output_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.outputs, 2))

    def reference_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.references, 2))

    def annotator_pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.annotators, 2))
