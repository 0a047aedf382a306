"""`refsens.toml`: read, check every key, fill defaults; every problem reported together."""

from __future__ import annotations

import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from refsens_report.errors import InputError, ProblemList

RULES = ("strict", "relaxed")
POLICIES = ("keep_first", "keep_last", "keep_all", "drop_all")
PAPER_SIZES = ("a4", "letter")
VERSION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
# names the site uses itself (its index page); hidden names (the lock, staging folders) fail the pattern
RESERVED_VERSIONS = {"index.html"}


@dataclass(frozen=True)
class Roles:
    """Which labellings play which part, in config order."""

    annotators: tuple[str, ...]
    outputs: tuple[str, ...]
    references: tuple[str, ...]

    @property
    def primary(self) -> str:
        """Return the primary (shipped) reference."""
        return self.references[0]

    @property
    def all_names(self) -> tuple[str, ...]:
        """Return every labelling named in any role, in config order, once each."""
        return tuple(dict.fromkeys(self.annotators + self.outputs + self.references))


@dataclass(frozen=True)
class AuditSettings:
    """The `[audit]` table with its defaults."""

    rules: tuple[str, ...] = RULES
    resamples: int = 2000
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


@dataclass(frozen=True)
class Config:
    """A checked config; paths are absolute, resolved against the config file's folder."""

    path: Path
    name: str
    version: str
    record_format: str
    record_options: dict[str, Any]
    roles: Roles
    audit: AuditSettings = field(default_factory=AuditSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def as_used(self) -> dict[str, Any]:
        """Return the config with defaults filled in, as written into results.json."""
        return {
            "dataset": {"name": self.name, "version": self.version},
            # paths as written in the file, so results do not depend on where the project lives
            "record": {"format": self.record_format, **_plain(self.raw.get("record", {}))},
            "roles": {k: list(v) for k, v in asdict(self.roles).items()},
            "audit": _plain(asdict(self.audit)),
            "report": {
                "datasheet": self.raw.get("report", {}).get("datasheet"),
                "paper": self.report.paper,
            },
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


def version_problem(version: str) -> str | None:
    """Return why a version string cannot name a site folder, or None when it can."""
    if not VERSION_PATTERN.match(version) or version in {".", ".."} or ".." in version:
        return (
            f"must start with a letter or digit and use only letters, digits, '.', '_', '+', '-' "
            f"(it names the folder site/<version>/), got {version!r}"
        )
    if version.lower() in RESERVED_VERSIONS:
        return f"{version!r} is reserved: it names a file of the site itself (site/{version.lower()})"
    return None


class _Reader:
    """Type-checked access to one TOML table, recording unknown keys and bad values."""

    def __init__(self, table: dict[str, Any], prefix: str, problems: ProblemList):
        self.table, self.prefix, self.problems = table, prefix, problems
        self.used: set[str] = set()

    def fail(self, key: str, message: str) -> None:
        self.problems.add(f"Config value '{self.prefix}.{key}': {message}")

    def get(self, key: str, default: Any = None) -> Any:
        self.used.add(key)
        return self.table.get(key, default)

    def string(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        value = self.get(key)
        if value is None:
            if required:
                self.fail(key, "is required")
            return default
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, got {value!r}")
            return default
        return value

    def names(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(key, f"must be a list of non-empty strings, got {value!r}")
            return default
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            self.fail(key, f"names {', '.join(repeated)} more than once")
        return tuple(dict.fromkeys(value))

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.get(key, default)
        if value not in choices:
            self.fail(key, f"must be one of {', '.join(choices)}, got {value!r}")
            return default
        return value

    def finish(self) -> None:
        for key in sorted(set(self.table) - self.used):
            self.problems.add(f"Config value '{self.prefix}.{key}': unknown key")


def load_config(path: str | Path) -> Config:
    """Read and check a config file; raise ``InputError`` with every problem found."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read the config ({error})") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: invalid TOML ({error})") from None
    return config_from_dict(data, path.resolve())


def _table(data: dict[str, Any], name: str, problems: ProblemList, required: bool) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        if required:
            problems.add(f"Config value '{name}': the table [{name}] is required")
        return {}
    if not isinstance(value, dict):
        problems.add(f"Config value '{name}': must be a table, got {value!r}")
        return {}
    return value


def config_from_dict(data: dict[str, Any], path: Path) -> Config:
    """Check a decoded config; ``path`` is the config file, against whose folder paths resolve."""
    from refsens_report.adapters import ADAPTERS  # adapters import config; avoid a cycle

    problems = ProblemList()
    known = {"dataset", "record", "roles", "audit", "report"}
    for key in sorted(set(data) - known):
        problems.add(f"Config value '{key}': unknown table")

    dataset = _Reader(_table(data, "dataset", problems, True), "dataset", problems)
    name = dataset.string("name", required=True) or ""
    version = dataset.string("version", required=True) or ""
    if version and (why := version_problem(version)):
        dataset.fail("version", why)
    dataset.finish()

    record_table = _table(data, "record", problems, True)
    record = _Reader(record_table, "record", problems)
    record_format = record.string("format", default="jsonl") or "jsonl"
    record_options: dict[str, Any] = {}
    adapter = ADAPTERS.get(record_format)
    if adapter is None:
        record.fail("format", f"must be one of {', '.join(sorted(ADAPTERS))}, got {record_format!r}")
        record.used.update(record_table)
    else:
        record_options = adapter.read_options(record, path.parent)
    record.finish()

    roles_reader = _Reader(_table(data, "roles", problems, True), "roles", problems)
    annotators = roles_reader.names("annotators")
    outputs = roles_reader.names("outputs")
    references = roles_reader.names("references")
    if len(annotators) == 1:
        roles_reader.fail("annotators", "needs at least two labellings (A and B), or none")
    if not outputs:
        roles_reader.fail("outputs", "needs at least one labelling to score")
    if not references:
        roles_reader.fail("references", "needs at least one labelling (the first is the primary reference)")
    roles_reader.finish()
    roles = Roles(annotators=annotators, outputs=outputs, references=references)

    audit_reader = _Reader(_table(data, "audit", problems, False), "audit", problems)
    defaults = AuditSettings()
    rules = audit_reader.names("rules", defaults.rules)
    if not rules or any(rule not in RULES for rule in rules):
        audit_reader.fail("rules", f"must be a non-empty list drawn from {', '.join(RULES)}, got {list(rules)!r}")
        rules = defaults.rules
    rules = tuple(rule for rule in RULES if rule in rules)  # fixed order: strict before relaxed
    resamples = audit_reader.get("resamples", defaults.resamples)
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        audit_reader.fail("resamples", f"must be a positive integer, got {resamples!r}")
        resamples = defaults.resamples
    seed = audit_reader.get("seed", defaults.seed)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        audit_reader.fail("seed", f"must be a non-negative integer, got {seed!r}")
        seed = defaults.seed
    confidence = audit_reader.get("confidence", defaults.confidence)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        audit_reader.fail("confidence", f"must be a number between 0 and 1, got {confidence!r}")
        confidence = defaults.confidence
    policy = audit_reader.choice("duplicate_policy", POLICIES, defaults.duplicate_policy)
    exclude = audit_reader.get("exclude_defective_duplicates", defaults.exclude_defective_duplicates)
    if not isinstance(exclude, bool):
        audit_reader.fail("exclude_defective_duplicates", f"must be true or false, got {exclude!r}")
        exclude = defaults.exclude_defective_duplicates
    duplicate_key = audit_reader.string("duplicate_key", default=defaults.duplicate_key) or defaults.duplicate_key
    audit_reader.finish()
    audit = AuditSettings(
        rules=rules,
        resamples=resamples,
        seed=seed,
        confidence=float(confidence),
        duplicate_policy=policy,
        exclude_defective_duplicates=exclude,
        duplicate_key=duplicate_key,
    )

    report_reader = _Reader(_table(data, "report", problems, False), "report", problems)
    datasheet_value = report_reader.string("datasheet")
    datasheet = None
    if datasheet_value:
        datasheet = (path.parent / datasheet_value).resolve()
        if not datasheet.is_file():
            report_reader.fail("datasheet", f"file not found: {datasheet_value}")
    paper = report_reader.choice("paper", PAPER_SIZES, "a4")
    report_reader.finish()

    problems.raise_if_any()
    return Config(
        path=path,
        name=name,
        version=version,
        record_format=record_format,
        record_options=record_options,
        roles=roles,
        audit=audit,
        report=ReportSettings(datasheet=datasheet, paper=paper),
        raw=data,
    )
