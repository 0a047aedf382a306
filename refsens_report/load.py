"""Load the record a config describes and check it against the config's roles."""

from __future__ import annotations

import numpy as np

from refsens_report.adapters import ADAPTERS, parquet
from refsens_report.adapters.label_map import apply_label_map
from refsens_report.analyses.registry import ANALYSES
from refsens_report.bootstrap import AUTO_MIN_RESAMPLES
from refsens_report.clusters import cluster_codes
from refsens_report.config import Config
from refsens_report.errors import ProblemList
from refsens_report.names import name_problem
from refsens_report.record import POOLED, Record
from refsens_report.workers import unheld_names

# The bootstrap keeps, per item set, sums of shape (languages + 1, resamples + 1, columns) in float64
# (bootstrap.resampled_sums); columns grow with the labellings scored against each other. A config whose
# sums would pass this budget is refused before any is drawn (config.MAX_RESAMPLES caps resamples alone).
BOOTSTRAP_MEMORY_BUDGET = 4 * 2**30  # bytes


def load_record(config: Config, unheld: frozenset[str] | None = None) -> Record:
    """Load the record with the configured adapter; raise ``InputError`` if it cannot be audited.

    ``unheld``: the labellings whose spans are checked and counted but not kept (``SpanTable.unheld``); by
    default those a partitioned record's Dask client leaves on the workers (``workers.unheld_names``)."""
    record = read_record(config, unheld_names(config) if unheld is None else unheld)
    check_names(record)
    check_roles(record, config)
    check_bootstrap_size(record, config)
    if config.cluster is not None:  # every item must name its cluster (clusters.py)
        cluster_codes(record.table, config.cluster)
    return note_unused_labellings(record, config)


def read_record(config: Config, unheld: frozenset[str] = frozenset()) -> Record:
    """Read the record with the configured adapter and apply `[record] label_map`: the record the audit sees,
    before it is checked against the roles (what `convert` writes). ``unheld``: as ``load_record``'s (a Parquet
    record's only)."""
    if unheld:
        record = parquet.load(config.record_options, config.audit.duplicate_key, unheld)
    else:
        record = ADAPTERS[config.record_format].load(config.record_options, config.audit.duplicate_key)
    return apply_label_map(record, config.label_map)


def check_names(record: Record) -> None:
    """Refuse ids, languages and labelling names the report could not print faithfully.

    Each adapter already refuses them (and span types) where it reads them, naming its file and line; this
    is the one check every record passes, whatever its format, before a name reaches a sentence or a table.
    """
    problems = ProblemList()
    for language in record.languages:
        if why := name_problem(language):
            problems.add(f"language {why}")
    for name in record.labelling_names:
        if why := name_problem(name):
            problems.add(f"labelling name {why}")
    ids = record.table.ids
    if not all(item_id.isprintable() for item_id in ids):  # the common case, without a call per id
        for item_id in ids:
            if why := name_problem(item_id):
                problems.add(f"item id {why}")
    problems.raise_if_any()


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
        table = record.table
        if not np.logical_and.reduce([table.has(name) for name in needed]).any():
            problems.add(
                f"the record has no audited item: no item carries every role labelling ({', '.join(needed)}) at once"
            )
    problems.raise_if_any()


def bootstrap_columns(config: Config) -> int:
    """Return an upper bound on the count columns one item set's bootstrap sums (per rule: TP and sizes), and
    the columns each analysis declares it adds (``Analysis.count_columns``)."""
    roles = config.roles
    golds = set(roles.annotators) | set(roles.references)
    pairs = len(roles.outputs) * len(golds) + len(roles.annotators) * len(roles.references)
    added = sum(analysis.count_columns(config) for analysis in ANALYSES if analysis.count_columns)
    return len(config.audit.rules) * (pairs + len(roles.all_names)) + 2 * len(roles.references) + 4 + added


def fitting_resamples(record: Record, config: Config) -> int:
    """Return the most resamples whose bootstrap sums fit the memory budget (the ceiling of resamples = "auto")."""
    return BOOTSTRAP_MEMORY_BUDGET // ((len(record.languages) + 1) * bootstrap_columns(config) * 8) - 1


def check_bootstrap_size(record: Record, config: Config) -> None:
    """Refuse a config whose bootstrap sums would not fit the memory budget, saying the limit.

    resamples = "auto" never picks more than fits (``fitting_resamples``), so it is refused only when even its
    lower bound, 2,000, does not fit.
    """
    groups = len(record.languages) + 1
    columns = bootstrap_columns(config)
    resamples = config.audit.resamples if isinstance(config.audit.resamples, int) else AUTO_MIN_RESAMPLES
    needed = (resamples + 1) * groups * columns * 8
    if needed > BOOTSTRAP_MEMORY_BUDGET:
        fitting = BOOTSTRAP_MEMORY_BUDGET // (groups * columns * 8) - 1
        problems = ProblemList()
        problems.add(
            f"Config value 'audit.resamples': {resamples:,} resamples need about {needed / 2**30:,.1f} GiB for the "
            f"bootstrap sums ({groups} languages and pooled x {resamples + 1:,} replicates x up to {columns:,} "
            f"count columns x 8 bytes), above the limit of {BOOTSTRAP_MEMORY_BUDGET / 2**30:,.0f} GiB; "
            f"use at most {max(fitting, 0):,} resamples for this record, or fewer roles"
        )
        problems.raise_if_any()


def note_unused_labellings(record: Record, config: Config) -> Record:
    """Add a note naming the labellings the record carries but no role mentions: read, then not audited."""
    named = set(config.roles.all_names)
    unused = [name for name in record.labelling_names if name not in named]
    if not unused:
        return record
    note = (
        f"labellings in the record that no role names, so not audited: {', '.join(unused)} "
        "(add them to [roles] to audit them)"
    )
    return record.with_notes(note)
