"""Every analysis of METHOD.md section 3, as a list of statistics to estimate on an item set.

Each function returns ``Stat`` specifications: the row's labels in the results contract and the expression
that computes it. ``audit.py`` estimates them all with the bootstrap; nothing here touches the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from refsens_report.config import Config
from refsens_report.counts import Column
from refsens_report.formulas import F1, Expr, Ratio, Share, Spread

TESTED = {"swing", "delta", "skew", "margin"}  # statistics that carry a bootstrap p-value


@dataclass(frozen=True)
class Stat:
    """One statistic to estimate per language and pooled, with its results-contract labels."""

    analysis: str
    statistic: str
    expr: Expr
    rule: str = ""
    output: str = ""
    output_2: str = ""
    reference: str = ""
    reference_2: str = ""
    policy: str = ""

    @property
    def tested(self) -> bool:
        return self.statistic in TESTED


def agreement(config: Config, third_pass_known: bool) -> list[Stat]:
    """Annotator agreement on the corpus: F1, identical, type agreement, third pass, silent default."""
    first, second = config.roles.annotators[:2]
    primary = config.roles.primary
    labels = {"analysis": "agreement", "output": first, "reference": second}
    stats = [Stat(statistic="f1", rule=rule, expr=F1(rule, first, second), **labels) for rule in config.audit.rules]
    stats.append(Stat(statistic="identical", expr=Share(Column("equal", a=first, b=second)), **labels))
    stats.append(
        Stat(
            statistic="type_agreement",
            expr=Ratio(Column("tp", "strict", first, second), Column("tp", "relaxed", first, second)),
            **labels,
        )
    )
    if third_pass_known:
        split = Column("unadjudicated_split", a=first, b=second)
        silent = Column("silent", a=first, b=second, c=primary)
        stats += [
            Stat(statistic="third_pass", expr=Share(Column("flag", a="third_pass")), **labels),
            Stat(statistic="silent", expr=Share(silent), **labels),
            Stat(statistic="default_to_first", expr=Ratio(silent, split), **labels),
        ]
    return stats


def neutrality(config: Config) -> list[Stat]:
    """How often each reference reproduces each annotator exactly; the skew between annotators; copied."""
    stats: list[Stat] = []
    annotators = config.roles.annotators
    for reference in config.roles.references:
        candidates = [name for name in annotators if name != reference]
        rate = {name: Share(Column("equal", a=reference, b=name)) for name in candidates}
        for name in candidates:
            stats.append(Stat("neutrality", "rate", rate[name], output=name, reference=reference))
        for left, right in combinations(candidates, 2):
            stats.append(
                Stat("neutrality", "skew", rate[left] - rate[right], output=left, output_2=right, reference=reference)
            )
        if candidates:
            copied = Share(Column("equal_any", a=reference, others=tuple(candidates)))
            stats.append(Stat("neutrality", "copied", copied, reference=reference))
    return stats


def swap(config: Config) -> list[Stat]:
    """Each output scored against each reference, and the paired difference between references."""
    stats: list[Stat] = []
    references = config.roles.references
    for rule in config.audit.rules:
        for output in config.roles.outputs:
            others = [reference for reference in references if reference != output]
            for reference in others:
                stats.append(Stat("swap", "score", F1(rule, output, reference), rule, output, reference=reference))
            for first, second in combinations(others, 2):
                delta = F1(rule, output, first) - F1(rule, output, second)
                stats.append(Stat("swap", "delta", delta, rule, output, reference=first, reference_2=second))
    return stats


def score_range(config: Config) -> list[Stat]:
    """Each output against every defensible gold (annotators and references), and the spread of those scores."""
    stats: list[Stat] = []
    golds = tuple(dict.fromkeys(config.roles.annotators + config.roles.references))
    for rule in config.audit.rules:
        for output in config.roles.outputs:
            scores = [F1(rule, output, gold) for gold in golds if gold != output]
            for score in scores:
                stats.append(Stat("range", "score", score, rule, output, reference=score.reference))
            if scores:
                stats.append(Stat("range", "range", Spread(tuple(scores)), rule, output))
    return stats


def interaction(config: Config, analysis: str = "interaction", policy: str = "") -> list[Stat]:
    """Margins between every pair of outputs under each reference, and the swing between references."""
    stats: list[Stat] = []
    for rule in config.audit.rules:
        for first, second in combinations(config.roles.outputs, 2):
            references = [r for r in config.roles.references if r not in (first, second)]
            margin = {r: F1(rule, first, r) - F1(rule, second, r) for r in references}
            for reference in references:
                stats.append(
                    Stat(analysis, "margin", margin[reference], rule, first, second, reference, policy=policy)
                )
            for left, right in combinations(references, 2):
                stats.append(
                    Stat(analysis, "swing", margin[left] - margin[right], rule, first, second, left, right, policy)
                )
    return stats
