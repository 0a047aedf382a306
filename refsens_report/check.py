"""The release gate: `[check]`'s thresholds against the results, one line per check, and a JUnit report.

Each check reads pooled rows under the main rule (strict when computed) and takes the row that comes
closest to failing: the largest value for a `max` bound, the smallest for a `min` one. What is compared
with the threshold is set per check by `fail_when` (config.FAIL_WHEN): the point estimate, or the end of the
interval that is worst (any_of_interval) or best (all_of_interval) for the check. A check whose rows the
results lack (no annotators, fewer than three ranked outputs) is not evaluated: it says why, and
`refsens-report check` exits 2 on it, since a gate that cannot be read must not pass in silence.

The checks are declared by the analyses whose rows they read (``Analysis.checks``, a ``ReleaseCheck`` each):
``CHECKS`` gathers them from the registry, and ``declared_problems`` refuses a `[check]` key none declares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refsens_report import formatting
from refsens_report.analyses.base import ReleaseCheck, describe
from refsens_report.analyses.registry import ANALYSES
from refsens_report.config import Check, Config, finite_number
from refsens_report.counts import RULE_NAMES
from refsens_report.errors import InputError, printable
from refsens_report.names import shown
from refsens_report.options import shown_key
from refsens_report.prose import said
from refsens_report.results import COLUMNS, NUMBER_COLUMNS
from refsens_report.view import ResultsView, Row

PASS, FAIL, NOT_EVALUATED = "PASS", "FAIL", "N/A"
# what XML 1.0 may not hold (its Char production): the JUnit report writes these as escapes (\x1b)
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# every `[check]` key, in registry order, with the analysis that declares it
CHECKS: dict[str, tuple[str, ReleaseCheck]] = {
    declared.key: (analysis.key, declared) for analysis in ANALYSES for declared in analysis.checks
}

# what is compared with the threshold, by (kind, fail_when)
DECIDED_BY = {
    ("max_abs", "estimate"): "|estimate|",
    ("max_abs", "any_of_interval"): "largest |value| in the interval",
    ("max_abs", "all_of_interval"): "smallest |value| in the interval",
    ("max", "estimate"): "estimate",
    ("max", "any_of_interval"): "upper end",
    ("max", "all_of_interval"): "lower end",
    ("min", "estimate"): "estimate",
    ("min", "any_of_interval"): "lower end",
    ("min", "all_of_interval"): "upper end",
}


@dataclass(frozen=True)
class Outcome:
    """One check against the results: PASS, FAIL or N/A, the row that decided it and the value compared."""

    check: Check
    status: str
    row: Row | None = None
    label: str = ""  # the deciding row in words: "skew of delivered, annotator_a − annotator_b, pooled"
    decided: float | None = None
    reason: str = ""  # why a check was not evaluated

    @property
    def kind(self) -> str:
        return CHECKS[self.check.key][1].bound

    @property
    def threshold_text(self) -> str:
        return f"{self.check.threshold:g}"

    @property
    def comparison(self) -> str:
        """Return the decision as printed: '|estimate| 13.0 > 5'."""
        if self.decided is None or self.row is None:
            return ""
        decimals = formatting.decimals_for(self.row["analysis"], self.row["statistic"])
        value = (
            formatting.whole(self.decided)
            if CHECKS[self.check.key][1].count
            else formatting.number(self.decided, decimals)
        )
        if self.kind == "min":
            operator = "<" if self.status == FAIL else "≥"
        else:
            operator = ">" if self.status == FAIL else "≤"
        return f"{DECIDED_BY[self.kind, self.check.fail_when]} {value} {operator} {self.threshold_text}"

    @property
    def statistic(self) -> str:
        """Return the deciding row in words with its estimate and interval."""
        return f"{self.label}: {said(self.row)}" if self.row is not None else ""

    def line(self) -> str:
        """Return the check as one line: status, key, the deciding statistic with its interval, the comparison.
        A control or bidirectional character in a name (results.json is anyone's file) is written as an escape."""
        if self.status == NOT_EVALUATED:
            return printable(
                f"{self.status:<4}  {self.check.key} = {self.threshold_text}: not evaluated: {self.reason}"
            )
        return printable(
            f"{self.status:<4}  {self.check.key} = {self.threshold_text}: {self.statistic}; {self.comparison}"
        )


def candidates(view: ResultsView, key: str) -> tuple[list[Row], str]:
    """Return the rows a check reads (pooled, main rule) and, when there are none, why."""
    analysis, declared = CHECKS[key]
    return declared.rows(view), view.applicability(analysis) or declared.absent.format(primary=view.primary)


def declared_problems(config: Config) -> list[str]:
    """Return what is wrong with the config's `[check]` keys against the analyses' declarations: a key none
    declares, ``fail_when`` on a check without an interval, a threshold outside what the check accepts. Worded
    as config.py words its problems (``Config value 'check.max_band': ...``)."""
    problems = []
    written = config.raw.get("check") or {}
    for check in config.checks or ():
        key = shown_key(check.key)
        if check.key not in CHECKS:
            problems.append(f"Config value 'check.{key}': unknown key (the checks: {', '.join(CHECKS)})")
            continue
        declared = CHECKS[check.key][1]
        where = f"check.{key}.threshold" if isinstance(written.get(check.key), dict) else f"check.{key}"
        threshold = check.threshold
        if check.fail_when != "estimate" and not declared.interval:
            problems.append(
                f"Config value 'check.{key}.fail_when': must be \"estimate\": {check.key} is decided on "
                f"a number without an interval, got {shown(check.fail_when)}"
            )
        elif declared.limits is not None and not declared.limits[0] <= threshold <= declared.limits[1]:
            low, high, why = declared.limits
            problems.append(
                f"Config value '{where}': must be between {low:g} and {high:g} ({why}), "
                f"got {shown(_written(written, check.key))}"
            )
        elif declared.bound != "min" and threshold < 0:
            problems.append(f"Config value '{where}': must be 0 or more, got {shown(_written(written, check.key))}")
        elif declared.count and not threshold.is_integer():
            problems.append(
                f"Config value '{where}': must be a whole number of {declared.count}, "
                f"got {shown(_written(written, check.key))}"
            )
    return problems


def _written(written: Mapping[str, Any], key: str) -> Any:
    """Return a threshold as the config wrote it (an integer stays one in a message)."""
    value = written.get(key)
    return value.get("threshold") if isinstance(value, dict) else value


def declared_checks(config: Config) -> Config:
    """Return the config once its `[check]` keys are ones the analyses declare, with thresholds they accept;
    raise ``InputError`` naming each key otherwise (the command line's exit 2)."""
    problems = declared_problems(config)
    if problems:
        raise InputError(problems)
    return config


def decided_value(row: Row, kind: str, fail_when: str) -> float | None:
    """Return what a check compares with its threshold for one row (None when it is undefined)."""
    estimate, low, high = row["estimate"], row["ci_low"], row["ci_high"]
    if fail_when == "estimate":
        return None if estimate is None else (abs(estimate) if kind == "max_abs" else estimate)
    if low is None or high is None:
        return None
    if kind == "max_abs":
        if fail_when == "any_of_interval":
            return max(abs(low), abs(high))
        return 0.0 if low <= 0 <= high else min(abs(low), abs(high))
    worst_end = high if kind == "max" else low
    best_end = low if kind == "max" else high
    return worst_end if fail_when == "any_of_interval" else best_end


def evaluate(check: Check, view: ResultsView) -> Outcome:
    """Evaluate one check against the results."""
    if check.key not in CHECKS:  # results.json is anyone's file: a key no analysis here declares
        return Outcome(check, NOT_EVALUATED, reason="no analysis declares this check")
    kind = CHECKS[check.key][1].bound
    if CHECKS[check.key][1].significance and view.undecidable:
        return Outcome(check, NOT_EVALUATED, reason=view.undecidable)
    rows, why_none = candidates(view, check.key)
    rows = [row for row in rows if row["estimate"] is not None]
    if not rows:
        return Outcome(check, NOT_EVALUATED, reason=why_none)
    decided = [(decided_value(row, kind, check.fail_when), row) for row in rows]
    undefined = [row for value, row in decided if value is None]
    if undefined:
        return Outcome(check, NOT_EVALUATED, reason=f"the interval of {describe(undefined[0])} is undefined")
    pick = min if kind == "min" else max
    value, row = pick(decided, key=lambda pair: pair[0])
    failed = value < check.threshold if kind == "min" else value > check.threshold
    return Outcome(check, FAIL if failed else PASS, row=row, label=describe(row), decided=value)


def evaluate_all(checks: Sequence[Check], view: ResultsView) -> list[Outcome]:
    """Evaluate every check, in config order."""
    return [evaluate(check, view) for check in checks]


@dataclass(frozen=True)
class Gate:
    """The checks as the appendix's summary shows them: each outcome, and the tally line."""

    outcomes: tuple[Outcome, ...]
    tally: str


def gate(view: ResultsView) -> Gate | None:
    """Return the checks of results.json's config as used (view.settings) against its rows; None when it has no
    [check]."""
    if view.settings.checks is None:
        return None
    outcomes = tuple(evaluate_all(view.settings.checks, view))
    return Gate(outcomes=outcomes, tally=tally(outcomes))


def tally(outcomes: Sequence[Outcome]) -> str:
    """Return '5 checks: 4 passed, 1 failed' (and how many were not evaluated)."""
    passed = sum(outcome.status == PASS for outcome in outcomes)
    failed = sum(outcome.status == FAIL for outcome in outcomes)
    skipped = sum(outcome.status == NOT_EVALUATED for outcome in outcomes)
    text = f"{formatting.counted(len(outcomes), 'check')}: {passed} passed, {failed} failed"
    return text + (f", {skipped} not evaluated" if skipped else "")


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """Return the gate's exit code: 2 when a check could not be evaluated, 1 when one failed, else 0."""
    if any(outcome.status == NOT_EVALUATED for outcome in outcomes):
        return 2
    return 1 if any(outcome.status == FAIL for outcome in outcomes) else 0


def write_junit(outcomes: Sequence[Outcome], path: Path, suite_name: str) -> Path:
    """Write the checks as a JUnit XML report: one test case per check, a failure or an error with its line."""
    from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

    suite = TestSuite(xml_text(suite_name))
    for outcome in outcomes:
        case = TestCase(outcome.check.key, classname="refsens-report.check")
        line = xml_text(outcome.line())
        if outcome.status == FAIL:
            case.result = [Failure(line, "threshold")]
        elif outcome.status == NOT_EVALUATED:
            case.result = [Error(line, "not evaluated")]
        case.system_out = line
        suite.add_testcase(case)
    report = JUnitXml()
    report.add_testsuite(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    report.write(str(path), pretty=True)
    return path


def xml_text(text: str) -> str:
    """Return text with every character XML 1.0 forbids written as an escape (an XML parser refuses them raw)."""
    return XML_FORBIDDEN.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


def title(results: Mapping[str, Any]) -> str:
    """Return results.json's dataset as 'name version', printable on a terminal."""
    dataset = results.get("dataset")
    dataset = dataset if isinstance(dataset, dict) else {}
    return printable(f"{dataset.get('name')} {dataset.get('version')}")


def read_results(where: Path) -> dict[str, Any]:
    """Read results.json from a results folder (or the file itself) for `check --results`; InputError if unusable."""
    import json

    path = where / "results.json" if where.is_dir() else where
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"{where}: no results.json there (write one with `refsens-report audit CONFIG --out DIR`)"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: cannot read the results ({error})") from None
    except RecursionError:
        raise InputError(f"{path}: cannot read the results (nested too deeply to be a results.json)") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or "config" not in data:
        raise InputError(f"{path}: not a refsens-report results.json (no rows or config)")
    problem = results_problem(data)
    if problem is not None:
        raise InputError(f"{path}: not a refsens-report results.json ({problem})")
    return data


def results_problem(data: Mapping[str, Any]) -> str | None:
    """Return the first part of a results.json the gate reads that is not as results.md says, or None."""
    config = data["config"]
    if not isinstance(config, dict):
        return f"config must be an object, got {shown(config)}"
    roles = config.get("roles")
    if not isinstance(roles, dict):
        return f"config.roles must be an object, got {shown(roles)}"
    for role in ("annotators", "outputs", "references"):
        names = roles.get(role, [])
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            return f"config.roles.{role} must be a list of names, got {shown(names)}"
    if not roles.get("references"):
        return "config.roles.references names no reference"
    audit = config.get("audit", {})
    rules = audit.get("rules") if isinstance(audit, dict) else None
    if not isinstance(audit, dict) or (
        rules is not None
        and (not isinstance(rules, list) or not rules or not all(rule in RULE_NAMES for rule in rules))
    ):
        return f"config.audit.rules must be a list of {', '.join(RULE_NAMES)}, got {shown(rules)}"
    for part in ("applicability", "record"):
        if not isinstance(data.get(part, {}), dict):
            return f"{part} must be an object, got {shown(data[part])}"
    for key, why in (data.get("applicability") or {}).items():
        if why is not None and not isinstance(why, str):
            return f"applicability.{key} must be a sentence or null, got {shown(why)}"
    for number, row in enumerate(data["rows"]):
        if not isinstance(row, dict):
            return f"rows[{number}] must be an object, got {shown(row)}"
        for column in COLUMNS:
            if column not in row:
                if column in ("type", "n_clusters"):  # schema 1 has no type, schemas 1-3 no n_clusters
                    continue
                return f"rows[{number}] has no {column}"
            value = row.get(column, "")
            if column in NUMBER_COLUMNS:
                fits = value is None or finite_number(value)
            elif column in ("n_items", "n_clusters"):
                fits = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            else:
                fits = isinstance(value, str)
            if not fits:
                return f"rows[{number}].{column} is {shown(value)}"
    return None
