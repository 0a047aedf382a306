"""Reading one table of `refsens.toml`: typed values, unknown keys and bad values, every problem collected.

``OptionReader`` sits below both the config (which reads `[dataset]`, `[roles]`, `[audit]` and `[report]`
with it) and the input adapters (each reads its own keys of `[record]` with it), so the config imports the
adapters and the adapters never import the config. Problems are worded
``Config value 'record.labellings.gold.column': ...``, the prefix naming the table.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from refsens_report.errors import ProblemList
from refsens_report.names import name_problem, shown


class OptionReader:
    """Type-checked access to one TOML table, recording unknown keys and bad values."""

    def __init__(self, table: dict[str, Any], prefix: str, problems: ProblemList):
        self.table, self.prefix, self.problems = table, prefix, problems
        self.used: set[str] = set()

    def sub(self, table: dict[str, Any], key: str) -> OptionReader:
        """Return a reader for a sub-table, reporting into the same problem list with a dotted prefix."""
        return OptionReader(table, f"{self.prefix}.{key}", self.problems)

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
            self.fail(key, f"must be a non-empty string, got {shown(value)}")
            return default
        return value

    def names(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(key, f"must be a list of non-empty strings, got {shown(value)}")
            return default
        repeated = sorted(name for name, times in Counter(value).items() if times > 1)
        if repeated:
            self.fail(key, f"names {', '.join(repeated)} more than once")
        return tuple(dict.fromkeys(value))

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.get(key, default)
        if value not in choices:
            self.fail(key, f"must be one of {', '.join(choices)}, got {shown(value)}")
            return default
        return value

    def finish(self) -> None:
        for key in sorted(set(self.table) - self.used):
            self.problems.add(f"Config value '{self.prefix}.{shown_key(key)}': unknown key")


def shown_key(key: str) -> str:
    """Return a key as messages show it: as written, unless it holds characters that must be escaped."""
    return key if name_problem(key) is None else shown(key)[1:-1]
