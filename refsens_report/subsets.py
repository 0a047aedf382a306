"""Item subsets (docs/method.md section 2): duplicate groups, the copy defect, policies, and the corpus, audited and
decontaminated item sets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from refsens_report.config import POLICIES, Config
from refsens_report.counts import ItemCounts
from refsens_report.record import Record


@dataclass(frozen=True)
class DefectiveGroup:
    """A duplicate group with the copy defect: a non-primary reference copies one annotator on a member."""

    key: str
    items: tuple[str, ...]
    item: str  # the member showing the defect (the first, in record order)
    reference: str
    copies: str


@dataclass(frozen=True)
class DuplicateGroups:
    """Items sharing a duplicate key; ``group`` is -1 for an item in no group of two or more.

    ``order``: the items' positions in record order, the order the policies' first and last and the groups' listing
    follow: the table's own order, or the order of the record a partitioned one was converted from
    (``SpanTable.record_order``).
    """

    key_name: str
    group: np.ndarray
    keys: tuple[str, ...]
    order: np.ndarray

    @classmethod
    def from_record(cls, record: Record, key_name: str) -> DuplicateGroups:
        table = record.table
        if table.record_order is None:
            order = np.arange(table.n_items)
        else:
            order = np.argsort(table.record_order, kind="stable")
        keys = table.meta_values(key_name)[order].tolist()
        counts: dict[str, int] = {}
        for key in keys:
            if isinstance(key, str):
                counts[key] = counts.get(key, 0) + 1
        repeated = [key for key in dict.fromkeys(k for k in keys if isinstance(k, str)) if counts[key] > 1]
        code = {key: position for position, key in enumerate(repeated)}
        group = np.full(table.n_items, -1, dtype=np.int64)
        group[order] = [code.get(key, -1) if isinstance(key, str) else -1 for key in keys]
        return cls(key_name=key_name, group=group, keys=tuple(repeated), order=order)

    @property
    def duplicated_items(self) -> int:
        return int((self.group >= 0).sum())

    def members(self, where: np.ndarray) -> np.ndarray:
        """Return the items ``where`` selects, in record order."""
        return self.order[where[self.order]]

    def keep(self, policy: str) -> np.ndarray:
        """Return the items kept under a duplicate policy, applied to groups in record order."""
        keep = np.ones(len(self.group), dtype=bool)
        if policy == "keep_all" or not self.keys:
            return keep
        members = self.members(self.group >= 0)
        if policy == "drop_all":
            keep[members] = False
            return keep
        keep[members] = False
        groups = self.group[members]
        if policy == "keep_first":
            _, first = np.unique(groups, return_index=True)
            keep[members[first]] = True
        elif policy == "keep_last":
            _, last_from_end = np.unique(groups[::-1], return_index=True)
            keep[members[len(members) - 1 - last_from_end]] = True
        else:
            raise ValueError(f"unknown duplicate policy {policy!r}; expected one of {POLICIES}")
        return keep

    def defective(self, record: Record, counts: ItemCounts, config: Config) -> list[DefectiveGroup]:
        """Return the groups where, on some member, a non-primary reference copies one annotator.

        The copy defect (the paper's appendix D): the reference's strict set equals one annotator's, shares no
        span with the other's, and the two annotators' sets differ.
        """
        roles = config.roles
        if len(roles.annotators) < 2 or not self.keys:
            return []
        first, second = roles.annotators[:2]
        in_group = self.group >= 0
        annotators_differ = counts.has(first) & counts.has(second) & ~counts.equal(first, second)
        found: dict[int, DefectiveGroup] = {}
        for reference in roles.references[1:]:
            for copied, other in ((first, second), (second, first)):
                if reference in (copied, other):
                    continue
                disjoint = counts.tp("strict", reference, other) == 0
                hit = in_group & annotators_differ & counts.equal(reference, copied) & disjoint
                for index in self.members(hit):
                    group = int(self.group[index])
                    if group not in found:
                        members = self.members(self.group == group)
                        found[group] = DefectiveGroup(
                            key=self.keys[group],
                            items=tuple(str(record.table.ids[m]) for m in members),
                            item=str(record.table.ids[index]),
                            reference=reference,
                            copies=copied,
                        )
        return [found[group] for group in sorted(found)]


def all_present(counts: ItemCounts, names: tuple[str, ...]) -> np.ndarray:
    """Return whether every named labelling is present on each item."""
    present = np.ones(counts.n_items, dtype=bool)
    for name in names:
        present &= counts.has(name)
    return present


@dataclass(frozen=True)
class Subsets:
    """Boolean masks over the record's items for every item set the analyses use."""

    NAMES = ("corpus", "audited", "decontaminated")  # the item sets results.json counts (``record.subsets``)

    corpus: np.ndarray | None
    audited: np.ndarray
    decontaminated: np.ndarray | None
    duplicates: dict[str, np.ndarray]
    excluded_defective: int
    excluded_by_policy: int

    def named(self) -> dict[str, np.ndarray | None]:
        """Return the item sets results.json counts, by name (None: the record cannot form it)."""
        return {name: getattr(self, name) for name in self.NAMES}


def build_subsets(counts: ItemCounts, groups: DuplicateGroups, defective_ids: set[str], config: Config) -> Subsets:
    """Apply defect exclusion and the configured policy, then select corpus, audited and decontaminated."""
    roles = config.roles
    base = np.ones(counts.n_items, dtype=bool)
    excluded_defective = 0
    if config.audit.exclude_defective_duplicates and defective_ids:
        defect = np.isin(counts.table.ids, np.array(sorted(defective_ids), dtype=object))
        excluded_defective = int(defect.sum())
        base &= ~defect
    policy_keep = groups.keep(config.audit.duplicate_policy)
    excluded_by_policy = int((base & ~policy_keep).sum())
    base &= policy_keep
    every_role = all_present(counts, roles.all_names)
    audited = base & every_role
    corpus = decontaminated = None
    if roles.has_annotators:
        first, second = roles.annotators[:2]
        corpus = base & counts.has(first) & counts.has(second)
        primary = roles.primary
        decontaminated = audited & ~counts.equal(primary, first) & ~counts.equal(primary, second)
    duplicates = {policy: groups.keep(policy) & every_role for policy in POLICIES} if groups.keys else {}
    return Subsets(
        corpus=corpus,
        audited=audited,
        decontaminated=decontaminated,
        duplicates=duplicates,
        excluded_defective=excluded_defective,
        excluded_by_policy=excluded_by_policy,
    )
