"""Load the record a config describes and check it against the config's roles."""

from __future__ import annotations

from refsens_report.adapters import ADAPTERS
from refsens_report.config import Config
from refsens_report.errors import ProblemList
from refsens_report.record import POOLED, Record


def load_record(config: Config) -> Record:
    """Load the record with the configured adapter; raise ``InputError`` if it cannot be audited."""
    record = ADAPTERS[config.record_format].load(config.record_options, config.audit.duplicate_key)
    check_roles(record, config)
    return record


def check_roles(record: Record, config: Config) -> None:
    """Every role labelling must be present somewhere, and some item must carry all of them."""
    problems = ProblemList()
    if POOLED in record.languages:
        problems.add(f"language '{POOLED}' is reserved for the pooled rows of the results; rename it")
    present = set(record.labelling_names)
    roles = config.roles
    for role, names in (("annotators", roles.annotators), ("outputs", roles.outputs), ("references", roles.references)):
        for name in names:
            if name not in present:
                known = ", ".join(sorted(present)) or "none"
                problems.add(
                    f"Config value 'roles.{role}': '{name}' is not a labelling in the record "
                    f"(present on no item; labellings found: {known})"
                )
    if not problems:
        needed = roles.all_names
        if not any(all(name in item.labellings for name in needed) for item in record.items):
            problems.add(
                "the record has no audited item: no item carries every role labelling "
                f"({', '.join(needed)}) at once"
            )
    problems.raise_if_any()
