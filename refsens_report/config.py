"""`refsens.toml`: read, check every key, fill defaults; every problem reported together."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from refsens_report.adapters import ADAPTERS
from refsens_report.adapters.label_map import read_label_map
from refsens_report.counts import DEFAULT_RULES, RULE_NAMES
from refsens_report.errors import InputError, ProblemList
from refsens_report.files import decode_utf8, path_problem, read_bytes, resolve
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader, shown_key

# `[audit] rules`: strict = (start, end, type); relaxed = exact boundaries, any type; overlap = same type and
# at least one shared character, scored as a maximum one-to-one matching (counts.py, docs/method.md section 1)
RULES = RULE_NAMES
POLICIES = ("keep_first", "keep_last", "keep_all", "drop_all")
PAPER_SIZES = ("a4", "letter")
PDF_CONTENTS = ("summary", "full")  # [report] pdf: the body alone, or the body and the annex of complete tables
# `[report] error_evidence`: what the gold-error candidates weigh against each reference (analyses/gold_errors.py):
#   outputs+references: the scored outputs and the other references (the default);
#   outputs:            the outputs only, so the candidates can be checked against a correction made later.
ERROR_EVIDENCE = ("outputs+references", "outputs")
VERSION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
# The bootstrap keeps, per item set, sums of shape (languages + 1, resamples + 1, columns) in float64
# (bootstrap.resampled_sums). Resamples are capped outright, and with the record loaded the sums' size is
# checked against a budget (load.check_bootstrap_size), so a typo cannot ask for hundreds of GiB.
MAX_RESAMPLES = 100_000
# `[audit] family`: which interaction swings Holm's correction runs over (docs/method.md section 4; docs/methods.md).
#   adjacent: for each alternative reference, the pairs of outputs adjacent in the primary reference's ranking
#             (pooled point estimates, main rule), primary versus that alternative: the order a reader of the
#             leaderboard reads; the default with 3 or more outputs.
#   primary:  every pair of outputs, primary reference versus each alternative.
#   all:      every pair of outputs x every pair of references (the paper's family; the default with fewer
#             than 3 outputs, where, with two references, all three families are the same).
FAMILIES = ("adjacent", "primary", "all")
FAMILY_OUTPUTS = 3  # outputs from which `adjacent` is the default family
# `[audit] resamples = "auto"` (the default): bootstrap.auto_resamples picks B from the family's size.
AUTO = "auto"
# `[audit] interval`: how ci_low and ci_high are read from the replicates (bootstrap.py).
#   percentile: numpy's linear quantiles at (1 ± confidence)/2 of the replicates (docs/method.md section 4).
#   bca:        bias-corrected and accelerated (Efron 1987), acceleration from the leave-one-out jackknife.
INTERVALS = ("percentile", "bca")
# `[audit] permutations`: random sign vectors of the paired permutation test of the neutrality skew
# (permutation.py); a test with few informative items enumerates every sign vector instead.
MAX_PERMUTATIONS = 1_000_000
MAX_SEED = 2**63 - 1  # results.json stores the seed as a 64-bit integer
# names the site uses itself (its index page); hidden names (the lock, staging folders) fail the pattern
RESERVED_VERSIONS = {"index.html"}
# `[check]`: the release gate's thresholds (refsens-report check; docs/ci.md). Each key bounds one pooled
# statistic under the main rule; the analysis whose rows it reads declares it (``Analysis.checks``: its bound,
# whether it has an interval, the thresholds that make sense). This table reads the form every key shares (a
# number, or a table {threshold, fail_when}); check.py, which sees the registry, refuses a key no analysis declares.
# `fail_when`, per check: what must lie beyond the threshold for the check to fail.
#   estimate:        the point estimate (the default)
#   any_of_interval: any part of the interval (a cautious gate: it passes only when the whole interval is within)
#   all_of_interval: the whole interval (a lenient gate: it fails only when the data leave no doubt)
FAIL_WHEN = ("estimate", "any_of_interval", "all_of_interval")
# `[engine]`: where the bootstrap's chunks run (engine.py; docs/scale.md). They give the same numbers everywhere.
#   local: this machine's cores (threads); the default.
#   dask:  a Dask cluster: an existing one (`scheduler`) or one of `workers` processes on this machine that the
#          audit starts and stops. Needs the distributed package (the `dask` extra).
BACKENDS = ("local", "dask")
DASK_EXTRA = "pip install 'refsens-report[dask]'"
# a Dask scheduler's address: tcp://host:port, the host a name, an IPv4 address or an [IPv6] address
SCHEDULER_PATTERN = re.compile(
    r"^tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(?P<port>[0-9]{1,5})$"
)
MAX_WORKERS = 256  # processes of a local cluster: more than a machine has cores is a typo ...
WORKERS_PER_CORE = 4  # ... and more than this many per core of the machine the audit runs on is one too
MAX_PARTITIONS = 1024  # tasks per chunk of replicates (each at least one canonical block of items)
# seconds to reach a scheduler, its handshake included (and for the cluster to have a worker): a wrong address, or
# a peer that is not a Dask scheduler, fails in this time, never hangs
CONNECT_TIMEOUT = 10
MAX_TIMEOUT = 3600


@dataclass(frozen=True)
class Roles:
    """Which labellings play which part, in config order."""

    annotators: tuple[str, ...]
    outputs: tuple[str, ...]
    references: tuple[str, ...]
    # `[roles] descriptions`: what a labelling is, in the team's words (the appendix's table of the references)
    descriptions: Mapping[str, str] = field(default_factory=dict)

    @property
    def primary(self) -> str:
        """Return the primary (shipped) reference."""
        return self.references[0]

    @property
    def has_annotators(self) -> bool:
        """Return whether two annotator passes are named (agreement, neutrality, decontamination, their listing)."""
        return len(self.annotators) >= 2

    @property
    def all_names(self) -> tuple[str, ...]:
        """Return every labelling named in any role, in config order, once each."""
        return tuple(dict.fromkeys(self.annotators + self.outputs + self.references))


@dataclass(frozen=True)
class AuditSettings:
    """The `[audit]` table with its defaults."""

    rules: tuple[str, ...] = DEFAULT_RULES
    resamples: int | str = AUTO  # a positive integer pins B; "auto" lets the audit pick it (bootstrap.auto_resamples)
    family: str = ""  # one of FAMILIES; config_from_dict fills the default (default_family), the only place that does
    interval: str = "percentile"  # one of INTERVALS
    permutations: int = 10_000  # sign vectors of the neutrality skew's permutation test (permutation.py)
    seed: int = 0
    confidence: float = 0.95
    duplicate_policy: str = "keep_first"
    exclude_defective_duplicates: bool = True
    duplicate_key: str = "dup_key"


@dataclass(frozen=True)
class ReportSettings:
    """The `[report]` table with its defaults."""

    datasheet: Path | None = None
    paper: str = "a4"
    pdf: str = "summary"  # "full" adds the annex: every row of every table the body shortens
    # false: the record's text is never written (PII benchmarks): the disagreement files and pages give ids,
    # offsets and types only
    show_text: bool = True
    error_evidence: str = ERROR_EVIDENCE[0]  # one of ERROR_EVIDENCE
    url: str | None = None  # where the appendix is published: CITATION.cff, BibTeX and croissant.json cite it
    authors: tuple[str, ...] = ()  # who to cite (CITATION.cff needs one): "<dataset name> maintainers" when none
    license: str | None = None  # the dataset's license: an SPDX identifier (CC-BY-4.0) or a URL
    # a per-type statement needs at least this many spans of the type under each reference it compares; rarer
    # types are listed as too rare to say (analyses/by_type.py)
    min_type_spans: int = 30


@dataclass(frozen=True)
class EngineSettings:
    """The `[engine]` table with its defaults: where the bootstrap runs (never what it computes)."""

    backend: str = "local"  # one of BACKENDS
    scheduler: str | None = None  # dask: an existing cluster's scheduler, tcp://host:port
    workers: int | None = None  # dask: the processes of a local cluster the audit starts and stops
    partitions: int | None = None  # dask: tasks per chunk of replicates; None: enough to keep every worker busy
    timeout: float = CONNECT_TIMEOUT  # dask: seconds to reach the scheduler and for the cluster to have a worker


@dataclass(frozen=True)
class Check:
    """One threshold of `[check]`: its key (an analysis's ``ReleaseCheck``), the threshold and what must cross it
    (FAIL_WHEN)."""

    key: str
    threshold: float
    fail_when: str = "estimate"

    def as_used(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fail_when": self.fail_when}


@dataclass(frozen=True)
class Config:
    """A checked config; paths are absolute, resolved against the config file's folder."""

    path: Path
    name: str
    version: str
    record_format: str
    record_options: Any  # the adapter's own checked options (adapters.<format>.read_options)
    roles: Roles
    label_map: Mapping[str, str] = field(default_factory=dict)  # `[record] label_map`, for every format
    # `[record] cluster`: the meta key whose value names each item's cluster (the cluster bootstrap, docs/method.md
    # section 4), for every format; None: every item is its own cluster
    cluster: str | None = None
    audit: AuditSettings = field(default_factory=AuditSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    raw: dict[str, Any] = field(default_factory=dict)
    # the config file's text as written (comments included), printed in the report; None when not read from a file
    text: str | None = None
    checks: tuple[Check, ...] | None = None  # `[check]` in config order; None when the config has no such table
    # `[engine]`: not in ``as_used``, since the results do not depend on it (results.json keeps the config's text)
    engine: EngineSettings = field(default_factory=EngineSettings)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def as_used(self) -> dict[str, Any]:
        """Return the config with defaults filled in, as written into results.json."""
        return {
            "dataset": {"name": self.name, "version": self.version},
            # paths as written in the file, so results do not depend on where the project lives
            "record": {"format": self.record_format, **_plain(self.raw.get("record", {}))},
            "roles": {
                **{k: list(v) for k, v in asdict(self.roles).items() if k != "descriptions"},
                "descriptions": dict(self.roles.descriptions),
            },
            "audit": _plain(asdict(self.audit)),
            "report": {
                "datasheet": self.raw.get("report", {}).get("datasheet"),
                "paper": self.report.paper,
                "pdf": self.report.pdf,
                "show_text": self.report.show_text,
                "error_evidence": self.report.error_evidence,
                "url": self.report.url,
                "authors": list(self.report.authors),
                "license": self.report.license,
                "min_type_spans": self.report.min_type_spans,
            },
            # the thresholds the build shows in its summary (only `check` exits 1 on them)
            **({"check": {check.key: check.as_used() for check in self.checks}} if self.checks is not None else {}),
        }


def _plain(value: Any) -> Any:
    """Return a JSON-ready copy (paths as given relative strings, tuples as lists)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Path):
        return value.as_posix()
    return value


def default_family(outputs: int) -> str:
    """Return the Holm family used when the config names none: adjacent with 3 or more outputs, else all."""
    return "adjacent" if outputs >= FAMILY_OUTPUTS else "all"


def version_problem(version: str) -> str | None:
    """Return why a version string cannot name a site folder, or None when it can."""
    if not VERSION_PATTERN.match(version) or version in {".", ".."} or ".." in version:
        return (
            f"must start with a letter or digit and use only letters, digits, '.', '_', '+', '-' "
            f"(it names the folder site/<version>/), got {shown(version)}"
        )
    if version.lower() in RESERVED_VERSIONS:
        return f"{shown(version)} is reserved: it names a file of the site itself (site/{version.lower()})"
    return None


def load_config(path: str | Path) -> Config:
    """Read and check a config file; raise ``InputError`` with every problem found."""
    path = Path(path)
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise InputError(f"{path}: config file not found") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read the config ({error.strerror or error})") from None
    text, problem = decode_utf8(raw, str(path))
    if problem:
        raise InputError(problem)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: invalid TOML ({error})") from None
    except RecursionError:
        raise InputError(f"{path}: invalid TOML (arrays or tables nested too deeply)") from None
    except ValueError as error:  # an integer beyond Python's 4,300-digit limit
        raise InputError(f"{path}: invalid TOML ({error})") from None
    resolved, problem = resolve(Path.cwd(), str(path))
    if problem:
        raise InputError(f"{path}: {problem}")
    return replace(config_from_dict(data, resolved), text=text)


def check_strings(data: dict[str, Any], problems: ProblemList) -> None:
    """Refuse invisible and bidirectional control characters in every key and string of the config.

    The config's strings name labellings, types, languages, the dataset and its files, and the config is
    printed in the report ("Config as used"), so none may hold a character that hides or reorders text.
    """
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:  # a loop, not recursion: TOML nests as deep as it likes
        place, value = pending.pop()
        if isinstance(value, dict):
            entries = []
            for key, entry in value.items():
                here = f"{place}.{shown_key(key)}" if place else shown_key(key)
                if why := name_problem(key):
                    problems.add(f"Config value '{here}': the key {why}")
                entries.append((here, entry))
            pending.extend(reversed(entries))
        elif isinstance(value, list):
            pending.extend((place, entry) for entry in reversed(value))
        elif isinstance(value, str) and (why := name_problem(value)):
            problems.add(f"Config value '{place}': {why}")


def read_datasheet(reader: OptionReader, base_dir: Path, value: str) -> Path:
    """Check the datasheet the way the build reads it: a regular file of UTF-8 text."""
    datasheet, problem = resolve(base_dir, value)
    problem = problem or path_problem(datasheet, "file")
    if problem == "not found":
        reader.fail("datasheet", f"file not found: {value}")
    elif problem:
        reader.fail("datasheet", f"{problem}: {value}")
    else:
        try:
            raw = read_bytes(datasheet)
        except OSError as error:
            reader.fail("datasheet", f"cannot read the file ({error.strerror}): {value}")
        else:
            _, undecodable = decode_utf8(raw, value)
            if undecodable:
                reader.problems.add(f"Config value 'report.datasheet': {undecodable}")
    return datasheet


def read_checks(reader: OptionReader) -> tuple[Check, ...]:
    """Read `[check]`: each key a threshold (a number) or a table {threshold = number, fail_when = "..."}.

    What every key shares is checked here; whether an analysis declares the key, and the thresholds and
    ``fail_when`` it accepts, in ``check.declared_problems`` (config.py sits below the analyses).
    results.json's config as used writes it in the table form (Check.as_used); view.Settings reads it back.
    """
    checks = []
    for key in reader.table:
        value = reader.get(key)
        fail_when = "estimate"
        if isinstance(value, dict):
            inner = reader.sub(value, shown_key(key))
            threshold = inner.get("threshold")
            fail_when = inner.choice("fail_when", FAIL_WHEN, "estimate")
            inner.finish()
            if threshold is None:
                reader.fail(
                    shown_key(key),
                    'needs a threshold: write `key = number` or `key = { threshold = number, fail_when = "estimate" }`',
                )
                continue
        else:
            threshold = value
        where = f"{shown_key(key)}.threshold" if isinstance(value, dict) else shown_key(key)
        if not finite_number(threshold):
            reader.fail(where, f"must be a number, got {shown(threshold)}")
            continue
        checks.append(Check(key=key, threshold=float(threshold), fail_when=fail_when))
    reader.finish()
    return tuple(checks)


def finite_number(value: Any) -> bool:
    """Return whether a value is a finite number a float holds (not a bool; not an integer of 400 digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond a float's range
        return False


def read_descriptions(reader: OptionReader, named: tuple[str, ...]) -> dict[str, str]:
    """Read `[roles] descriptions`: a table of labelling name -> what it is (one line of prose each).

    Every name must be a labelling the roles name; the appendix prints the references' descriptions.
    """
    value = reader.get("descriptions")
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.fail("descriptions", f'must be a table of labelling = "what it is", got {shown(value)}')
        return {}
    descriptions = {}
    for name, text in value.items():
        if name not in named:
            reader.fail(
                f"descriptions.{shown_key(name)}", "names no labelling of [roles] (annotators, outputs, references)"
            )
        elif not isinstance(text, str) or not text.strip():
            reader.fail(f"descriptions.{shown_key(name)}", f"must be a non-empty string, got {shown(text)}")
        else:
            descriptions[name] = text.strip()
    return descriptions


def read_url(reader: OptionReader, key: str) -> str | None:
    """Read a web address (http or https): CITATION.cff and croissant.json require a full URL."""
    url = reader.string(key)
    if url is not None and not re.match(r"^https?://[^\s/]+\S*$", url):
        reader.fail(key, f"must be a web address starting with https:// or http://, got {shown(url)}")
        return None
    return url


def positive_integer(reader: OptionReader, key: str, most: int, why: str) -> int | None:
    """Read an optional whole number from 1 to ``most``; ``why`` says what a larger one would mean."""
    value = reader.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        reader.fail(key, f"must be a positive integer, got {shown(value)}")
        return None
    if value > most:
        reader.fail(key, f"must be at most {most:,} ({why}), got {shown(value)}")
        return None
    return value


def read_engine(reader: OptionReader) -> EngineSettings:
    """Read `[engine]`: the local backend, or Dask on an existing cluster (scheduler) or a local one (workers)."""
    backend = reader.choice("backend", BACKENDS, "local")
    scheduler = reader.string("scheduler")
    address = SCHEDULER_PATTERN.match(scheduler) if scheduler is not None else None
    if scheduler is not None and (address is None or not 1 <= int(address.group("port")) <= 65535):
        reader.fail(
            "scheduler",
            f"must be a Dask scheduler's address, tcp://host:port (a port from 1 to 65535), got {shown(scheduler)}",
        )
        scheduler = None
    cores = os.cpu_count() or 1
    workers = positive_integer(
        reader,
        "workers",
        min(MAX_WORKERS, WORKERS_PER_CORE * cores),
        f"{WORKERS_PER_CORE} processes per core; this machine has {cores}",
    )
    partitions = positive_integer(reader, "partitions", MAX_PARTITIONS, "tasks per chunk of 250 replicates")
    timeout = reader.get("timeout", CONNECT_TIMEOUT)
    if not finite_number(timeout) or not 0 < timeout <= MAX_TIMEOUT:
        reader.fail("timeout", f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:,}, got {shown(timeout)}")
        timeout = CONNECT_TIMEOUT
    given = [key for key in ("scheduler", "workers", "partitions", "timeout") if key in reader.table]
    if backend == "local" and given:
        reader.fail(given[0], 'applies to backend = "dask" only (the local backend uses this machine\'s cores)')
    elif backend == "dask":
        if "scheduler" in reader.table and "workers" in reader.table:
            reader.fail(
                "workers",
                "give either scheduler (an existing cluster) or workers (a local cluster the audit starts), not both",
            )
        elif "scheduler" not in reader.table and "workers" not in reader.table:
            reader.fail(
                "backend",
                '"dask" needs scheduler = "tcp://host:port" (an existing cluster) or workers = N '
                "(a local cluster of N processes the audit starts and stops)",
            )
        if importlib.util.find_spec("distributed") is None:
            reader.fail("backend", f'"dask" needs the distributed package, which is not installed: {DASK_EXTRA}')
    reader.finish()
    return EngineSettings(
        backend=backend, scheduler=scheduler, workers=workers, partitions=partitions, timeout=float(timeout)
    )


def _table(data: dict[str, Any], name: str, problems: ProblemList, required: bool) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        if required:
            problems.add(f"Config value '{name}': the table [{name}] is required")
        return {}
    if not isinstance(value, dict):
        problems.add(f"Config value '{name}': must be a table, got {shown(value)}")
        return {}
    return value


def config_from_dict(data: dict[str, Any], path: Path) -> Config:
    """Check a decoded config; ``path`` is the config file, against whose folder paths resolve."""
    problems = ProblemList()
    known = {"dataset", "record", "roles", "audit", "report", "check", "engine"}
    for key in sorted(set(data) - known):
        problems.add(f"Config value '{shown_key(key)}': unknown table")
    check_strings(data, problems)

    dataset = OptionReader(_table(data, "dataset", problems, True), "dataset", problems)
    name = dataset.string("name", required=True) or ""
    version = dataset.string("version", required=True) or ""
    if version and (why := version_problem(version)):
        dataset.fail("version", why)
    dataset.finish()

    record_table = _table(data, "record", problems, True)
    record = OptionReader(record_table, "record", problems)
    record_format = record.string("format", default="jsonl") or "jsonl"
    record_options: Any = None
    adapter = ADAPTERS.get(record_format)
    if adapter is None:
        record.fail("format", f"must be one of {', '.join(sorted(ADAPTERS))}, got {shown(record_format)}")
        record.used.update(record_table)
    else:
        record_options = adapter.read_options(record, path.parent)
    # every format takes a label map; its targets must be allowed types when the record lists them
    labels = record_table.get("labels")
    listed = isinstance(labels, list) and labels and all(isinstance(label, str) for label in labels)
    label_map = read_label_map(record, labels if listed else None)
    cluster = record.string("cluster")
    record.finish()

    roles_reader = OptionReader(_table(data, "roles", problems, True), "roles", problems)
    annotators = roles_reader.names("annotators")
    outputs = roles_reader.names("outputs")
    references = roles_reader.names("references")
    if len(annotators) == 1:
        roles_reader.fail("annotators", "needs at least two labellings (A and B), or none")
    if not outputs:
        roles_reader.fail("outputs", "needs at least one labelling to score")
    if not references:
        roles_reader.fail("references", "needs at least one labelling (the first is the primary reference)")
    descriptions = read_descriptions(roles_reader, annotators + outputs + references)
    roles_reader.finish()
    roles = Roles(annotators=annotators, outputs=outputs, references=references, descriptions=descriptions)

    audit_reader = OptionReader(_table(data, "audit", problems, False), "audit", problems)
    defaults = AuditSettings()
    rules = audit_reader.names("rules", defaults.rules)
    if not rules or any(rule not in RULES for rule in rules):
        audit_reader.fail("rules", f"must be a non-empty list drawn from {', '.join(RULES)}, got {list(rules)!r}")
        rules = defaults.rules
    rules = tuple(rule for rule in RULES if rule in rules)  # fixed order: strict, relaxed, overlap
    resamples = audit_reader.get("resamples", defaults.resamples)
    if resamples == AUTO:
        pass
    elif not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        audit_reader.fail("resamples", f'must be a positive integer or "auto", got {shown(resamples)}')
        resamples = defaults.resamples
    elif resamples > MAX_RESAMPLES:
        audit_reader.fail(
            "resamples",
            f"must be at most {MAX_RESAMPLES:,}, got {shown(resamples)} (the bootstrap keeps (resamples + 1) sums "
            "per language, statistic column and item set in memory; 2,000 to 10,000 is usual)",
        )
        resamples = defaults.resamples
    seed = audit_reader.get("seed", defaults.seed)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        audit_reader.fail("seed", f"must be a non-negative integer, got {shown(seed)}")
        seed = defaults.seed
    elif seed > MAX_SEED:
        audit_reader.fail(
            "seed", f"must be at most 2**63 - 1 (results.json stores it as a 64-bit integer), got {shown(seed)}"
        )
        seed = defaults.seed
    confidence = audit_reader.get("confidence", defaults.confidence)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        audit_reader.fail("confidence", f"must be a number between 0 and 1, got {shown(confidence)}")
        confidence = defaults.confidence
    policy = audit_reader.choice("duplicate_policy", POLICIES, defaults.duplicate_policy)
    exclude = audit_reader.get("exclude_defective_duplicates", defaults.exclude_defective_duplicates)
    if not isinstance(exclude, bool):
        audit_reader.fail("exclude_defective_duplicates", f"must be true or false, got {shown(exclude)}")
        exclude = defaults.exclude_defective_duplicates
    duplicate_key = audit_reader.string("duplicate_key", default=defaults.duplicate_key) or defaults.duplicate_key
    family = audit_reader.choice("family", FAMILIES, default_family(len(outputs)))
    interval = audit_reader.choice("interval", INTERVALS, defaults.interval)
    permutations = audit_reader.get("permutations", defaults.permutations)
    if not isinstance(permutations, int) or isinstance(permutations, bool) or permutations < 1:
        audit_reader.fail("permutations", f"must be a positive integer, got {shown(permutations)}")
        permutations = defaults.permutations
    elif permutations > MAX_PERMUTATIONS:
        audit_reader.fail(
            "permutations",
            f"must be at most {MAX_PERMUTATIONS:,} (each test multiplies that many sign "
            f"vectors by its items; 10,000 is usual), got {shown(permutations)}",
        )
        permutations = defaults.permutations
    audit_reader.finish()
    audit = AuditSettings(
        rules=rules,
        resamples=resamples,
        seed=seed,
        confidence=float(confidence),
        duplicate_policy=policy,
        exclude_defective_duplicates=exclude,
        duplicate_key=duplicate_key,
        family=family,
        interval=interval,
        permutations=permutations,
    )

    report_reader = OptionReader(_table(data, "report", problems, False), "report", problems)
    datasheet_value = report_reader.string("datasheet")
    datasheet = None
    if datasheet_value:
        datasheet = read_datasheet(report_reader, path.parent, datasheet_value)
    paper = report_reader.choice("paper", PAPER_SIZES, ReportSettings.paper)
    pdf_contents = report_reader.choice("pdf", PDF_CONTENTS, ReportSettings.pdf)
    show_text = report_reader.get("show_text", ReportSettings.show_text)
    if not isinstance(show_text, bool):
        report_reader.fail("show_text", f"must be true or false, got {shown(show_text)}")
        show_text = ReportSettings.show_text
    error_evidence = report_reader.choice("error_evidence", ERROR_EVIDENCE, ReportSettings.error_evidence)
    url = read_url(report_reader, "url")
    authors = report_reader.names("authors")
    license_name = report_reader.string("license")
    min_type_spans = report_reader.get("min_type_spans", ReportSettings.min_type_spans)
    if not isinstance(min_type_spans, int) or isinstance(min_type_spans, bool) or min_type_spans < 1:
        report_reader.fail("min_type_spans", f"must be a positive integer, got {shown(min_type_spans)}")
        min_type_spans = ReportSettings.min_type_spans
    report_reader.finish()

    checks = None
    if "check" in data:
        checks = read_checks(OptionReader(_table(data, "check", problems, False), "check", problems))

    engine = read_engine(OptionReader(_table(data, "engine", problems, False), "engine", problems))

    problems.raise_if_any()
    return Config(
        path=path,
        name=name,
        version=version,
        record_format=record_format,
        record_options=record_options,
        roles=roles,
        label_map=label_map,
        cluster=cluster,
        audit=audit,
        report=ReportSettings(
            datasheet=datasheet,
            paper=paper,
            pdf=pdf_contents,
            url=url,
            authors=authors,
            license=license_name,
            show_text=show_text,
            min_type_spans=min_type_spans,
            error_evidence=error_evidence,
        ),
        raw=data,
        checks=checks,
        engine=engine,
    )
