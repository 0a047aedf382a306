"""A partitioned record on Dask workers: each worker reads its partitions, counts their items, and builds the
bootstrap's canonical blocks where the counts are (docs/scale.md, "A record larger than one machine").

With ``[engine] backend = "dask"`` and a partitioned record (a folder of span tables, ``partitions.py``), the
engine is a ``PartitionedRun``: on first use every partition file is read by a worker into its ``ItemCounts``
(a future, kept in that worker's memory for the audit). A statistic's count columns then never reach the
client: for each canonical block of a stratum, the workers holding its items cut their rows
(``partition_rows``), one worker assembles the block (``assembled_block``: the same rows, in the same order, as
``bootstrap.resampled_sums`` would build on the client, so the same ``ItemBlock`` and the same column sums), and
the chunks of replicates run on those blocks (``engine.partial_sums``). The client receives each block's column
sums (the point estimate) and each task's replicate sums, and adds them in the order the local engine does:
the results are the local engine's to the last bit.

Global item k of the record (the client's order: the files in name order, each file's items in order of first
appearance) is item ``k - offset[p]`` of partition p, the partition whose item range holds k.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from refsens_report import bootstrap
from refsens_report.config import Config
from refsens_report.counts import Column, ItemCounts, common_unsigned, compact, narrowest
from refsens_report.engine import DaskRun, _added, block_groups, default_partitions, partial_sums
from refsens_report.errors import InputError

if TYPE_CHECKING:
    from refsens_report.record import Record

# ----------------------------------------------------------------------------------------------------------
# on a worker


def partition_counts(
    path: str, display: str, names: Sequence[str], duplicate_key: str, label_map: Mapping[str, str]
) -> ItemCounts:
    """Read one partition file (``partition_record``) and return its items' counts: kept in the worker's memory
    for the whole audit."""
    from refsens_report.analyses.registry import column_kinds

    return ItemCounts(partition_record(path, display, duplicate_key, label_map).table, names, column_kinds())


def partition_record(path: str, display: str, duplicate_key: str, label_map: Mapping[str, str]) -> Record:
    """Read one partition file as the audit reads a record: the Parquet adapter, then `[record] label_map`."""
    from refsens_report.adapters import parquet
    from refsens_report.adapters.label_map import apply_label_map
    from refsens_report.files import InputPath, readable_path

    record = parquet.load(parquet.ParquetOptions(InputPath(readable_path(path), display)), duplicate_key)
    return apply_label_map(record, dict(label_map))


def partition_shape(counts: ItemCounts) -> tuple[int, str, str]:
    """Return a partition's items, and its first and last item's id (checked against the client's record)."""
    ids = counts.table.ids
    return counts.n_items, str(ids[0]) if len(ids) else "", str(ids[-1]) if len(ids) else ""


def partition_matrix(counts: ItemCounts, columns: Sequence[Column]) -> np.ndarray:
    """Return the columns' values on every item of a partition, as a matrix [item, column] of a dtype holding them.

    A per-type column names its type (the record's type names, sorted, are not the partition's: a partition
    may lack a type, which then counts zero on its items). The per-type columns are read off one
    ``ItemCounts.typed_matrix`` of their families and of the types the partition has (one pass over its spans);
    the others are ``ItemCounts.matrix``'s.
    """
    typed = [k for k, column in enumerate(columns) if column.type]
    untyped = [k for k, column in enumerate(columns) if not column.type]
    whole = counts.matrix([columns[k] for k in untyped])
    if not typed:
        return whole
    families = list(dict.fromkeys(replace(columns[k], type="") for k in typed))
    has = set(counts.type_names.tolist())
    names = [name for name in dict.fromkeys(columns[k].type for k in typed) if name in has]
    items, values = (
        counts.typed_matrix(families, [counts.type_code(name) for name in names])
        if names
        else (np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.uint8))  # no span of these types here
    )
    matrix = np.zeros((counts.n_items, len(columns)), dtype=np.result_type(whole, values))
    matrix[:, untyped] = whole
    place = {(family, name): f * len(names) + k for f, family in enumerate(families) for k, name in enumerate(names)}
    found = [(k, place[replace(columns[k], type=""), columns[k].type]) for k in typed if columns[k].type in has]
    matrix[np.ix_(items, [k for k, _ in found])] = values[:, [at for _, at in found]]
    return matrix


def partition_column(
    counts: ItemCounts, first: int, column: Column, derivations: Sequence[Callable[[ItemCounts], None]]
) -> np.ndarray:
    """Return a column's values on a partition's items (``ItemCounts.integers``): the client's ``Fetch``. A derived
    labelling the column reads is derived here first, as the client's counts were (``ItemCounts.derive_with``)."""
    if not all(counts.knows(name) for name in column.labellings()):
        for make in derivations:
            make(counts)
    return counts.integers(column)


def partition_typed(
    counts: ItemCounts, first: int, kind: str, rule: str, a: str, b: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return a partition's ``ItemCounts.typed`` triples (items counted from the record's ``first``) and its type
    names, which its codes index."""
    items, codes, numbers = counts.typed(kind, rule, a, b)
    return items.astype(np.int64) + first, codes, numbers, counts.type_names


def partition_span_counts(counts: ItemCounts, first: int, names: Sequence[str]) -> list[int]:
    """Return each labelling's distinct strict spans on a partition's items (an item's spans are in one partition,
    so the partitions' counts add up to the record's)."""
    return [len(counts.ids("strict", name)) for name in names]


def partition_rows(matrix: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Return a partition's rows of a matrix of its items (``partition_matrix``): some items' values."""
    return matrix[local]


def assembled_block(
    pieces: Sequence[np.ndarray],
    rows: Sequence[np.ndarray],
    size: int,
    width: int,
    columns: Sequence[int],
    local: np.ndarray | None = None,
    local_columns: Sequence[int] = (),
) -> tuple[Any, np.ndarray]:
    """Return (the ItemBlock, its column sums) of one canonical block of ``size`` items and ``width`` columns.

    ``pieces[k]``: a partition's values of the ``columns`` computed there, for the block's items ``rows[k]``
    (their positions in the block, whose items are in id order); ``local``: the client's values of its
    ``local_columns`` on every item of the block. The matrix is the one ``resampled_sums`` builds on the client
    (the same values at the same places, in a dtype holding them), so the block and its sums are the same, to
    the bit (a real-valued column too: its rows sum in the same order).
    """
    kinds = [piece.dtype for piece in pieces] + ([local.dtype] if local is not None else [])
    matrix = np.empty((size, width), dtype=np.result_type(*kinds))
    for piece, place in zip(pieces, rows):
        matrix[np.ix_(place, columns)] = piece
    if local is not None:
        matrix[:, list(local_columns)] = local
    return bootstrap.item_block(matrix), np.asarray(matrix.sum(axis=0)).reshape(-1)


# ----------------------------------------------------------------------------------------------------------
# on the client


@dataclass(frozen=True)
class RemoteColumns(bootstrap.Source):
    """Count columns computed where the record's partitions are: a ``Source`` whose rows stay on the workers.

    ``columns`` are computed by the workers and go to ``places`` among the source's columns; ``local``, when
    some columns are not per-item counts (``per_item``), holds the others' matrix, computed by the client, at
    ``local_places``: each block's rows of it are sent to the worker assembling the block.
    """

    columns: tuple[Column, ...] = ()
    places: tuple[int, ...] = ()
    local: bootstrap.Source | None = None
    local_places: tuple[int, ...] = ()


def client_columns(counts: ItemCounts, columns: Sequence[Column]) -> bootstrap.Source:
    """Return the client's columns as a source whose ``rows(items)`` is ``counts.matrix(columns)[items]`` (the same
    values in the same dtype: float64 when a column is real-valued, else the smallest unsigned type holding them
    all), cut straight from each column, kept in its own smallest type: no matrix of the whole record (at a million
    items, 72 columns of float64 built in column order and copied into row order: 1.2 GB at the client's peak)."""
    kept = []
    for column in columns:
        if counts.is_integer(column):
            kept.append(narrowest(counts.integers(column)))  # ItemCounts' own array when it caches it so
        else:
            kept.append(counts.real(column))
    integer = all(counts.is_integer(column) for column in columns)
    dtype = np.dtype(common_unsigned(kept) if integer else np.float64)

    def rows(items: np.ndarray) -> np.ndarray:
        matrix = np.empty((len(items), len(kept)), dtype=dtype)
        for position, values in enumerate(kept):
            matrix[:, position] = values[items]
        return matrix

    return bootstrap.Source(len(kept), rows)


def _rows_stay_on_the_workers(items: np.ndarray) -> np.ndarray:
    raise RuntimeError("a partitioned record's count columns are on the Dask workers: PartitionedRun draws them")


# the column kinds whose value on an item depends on that item's spans and metadata alone (counts.ItemCounts):
# a partition computes them as the whole record would, per-type ``tp`` and ``size`` too (named by their type:
# ``partition_matrix``). Not: the kinds analyses declare (alpha's categories are the record's), labellings derived
# from the record's span ids (what-if references: the ids are the client's)
PER_ITEM_KINDS = frozenset({"tp", "size", "equal", "equal_any", "flag", "unadjudicated_split", "silent"})
TYPED_KINDS = frozenset({"tp", "size"})  # the kinds with per-type counts (``ItemCounts.typed``)


def per_item(column: Column, names: Sequence[str]) -> bool:
    """Return whether a partition computes the column's values on its items as the whole record does."""
    if column.kind not in PER_ITEM_KINDS or (column.type and column.kind not in TYPED_KINDS):
        return False
    return all(name in names for name in column.labellings())  # none for a flag: an item's metadata


@dataclass(frozen=True)
class PartitionFiles:
    """What the workers read: each partition file (a path every worker can open) and how messages name it."""

    paths: tuple[str, ...]
    displays: tuple[str, ...]
    names: tuple[str, ...]  # the labellings the audit counts (config.roles.all_names)
    duplicate_key: str
    label_map: Mapping[str, str]


class PartitionedRun(DaskRun):
    """The Dask engine for a partitioned record: count blocks built and kept on the workers (see the module)."""

    def __init__(self, client: Any, partitions: int | None, files: PartitionFiles):
        super().__init__(client, partitions)
        self.files = files
        self._counts: list[Any] | None = None  # a future per partition: its ItemCounts on a worker
        self._attached: ItemCounts | None = None  # the client's counts this run serves (``attach``)
        self._ids: np.ndarray = np.zeros(0, dtype=object)
        self.offsets = np.zeros(1, dtype=np.int64)

    def counts(self, ids: np.ndarray) -> list[Any]:
        """Return the partitions' ItemCounts futures, read on first use; check they hold the client's items
        (``ids``: the record's ids, in the client's order)."""
        if self._counts is None:
            files = self.files
            futures = [
                self.client.submit(
                    partition_counts, path, display, files.names, files.duplicate_key, dict(files.label_map), pure=False
                )
                for path, display in zip(files.paths, files.displays)
            ]
            shapes = self.client.gather([self.client.submit(partition_shape, future) for future in futures])
            sizes = np.array([items for items, _, _ in shapes], dtype=np.int64)
            self.offsets = np.concatenate([[0], np.cumsum(sizes)])
            if self.offsets[-1] != len(ids):
                raise InputError(
                    f"{files.displays[0].rsplit('/', 1)[0]}: the Dask workers read {int(self.offsets[-1]):,} "
                    f"items from the partitions, the client {len(ids):,}: an item's rows are in two "
                    "partitions; write the record with refsens-report convert --partition-items N"
                )
            for display, (items, first, last), offset in zip(files.displays, shapes, self.offsets[:-1].tolist()):
                if items and (ids[offset] != first or ids[offset + items - 1] != last):
                    raise InputError(
                        f"{display}: its items are not where the client's record has them: an item's "
                        "rows are in two partitions; write the record with refsens-report convert "
                        "--partition-items N"
                    )
            self._counts = futures
        return self._counts

    def attach(self, counts: ItemCounts) -> None:
        """Serve the client's counts what needs the spans it does not hold (``counts.unheld``): ``column`` and
        ``span_counts``, computed by the workers on their partitions (the ``counts.Fetch`` of ``counts``)."""
        self._ids = counts.table.ids
        self._attached = counts
        counts.fetch = self

    def column(self, column: Column) -> np.ndarray:
        """Return a column's per-item values on every item of the record, as the whole record's ``ItemCounts``
        gives them: the partitions' values in item order, a count in the smallest unsigned type holding it."""
        derivations = list(self._attached.derivations) if self._attached is not None else []
        values = np.concatenate(self.each_partition(partition_column, self._ids, [], column, derivations))
        return narrowest(values) if values.dtype.kind == "u" and not column.type else values

    def typed(self, kind: str, rule: str, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``ItemCounts.typed``'s triples over the record, from the partitions' (each partition's type codes
        renumbered by name into the client's, which hold every type of the record in the same sorted order, so each
        item's triples stay ordered by type)."""
        assert self._attached is not None
        names = self._attached.type_names
        parts = [
            (items, np.searchsorted(names, own)[codes], numbers)
            for items, codes, numbers, own in self.each_partition(partition_typed, self._ids, [], kind, rule, a, b)
        ]
        return tuple(compact(np.concatenate([part[k] for part in parts])) for k in range(3))  # type: ignore[return-value]

    def span_counts(self, names: Sequence[str]) -> dict[str, int]:
        """Return each labelling's number of distinct strict spans over the partitions."""
        found = self.each_partition(partition_span_counts, self._ids, [], list(names))
        return {name: sum(int(part[k]) for part in found) for k, name in enumerate(names)}

    def each_partition(
        self, function: Callable[..., Any], ids: np.ndarray, per_item: Sequence[np.ndarray], *args: Any
    ) -> list[Any]:
        """Return ``function(counts, first, *cut, *args)`` run on every partition's worker, in partition order:
        ``counts`` its ItemCounts, ``first`` the record's index of its first item, ``cut`` each array of
        ``per_item`` (one entry per item of the record) cut to its items. ``ids``: as for ``counts``."""
        futures = [
            self.client.submit(function, counts, first, *(values[first:stop] for values in per_item), *args, pure=False)
            for counts, first, stop in zip(self.counts(ids), self.offsets[:-1].tolist(), self.offsets[1:].tolist())
        ]
        return self.client.gather(futures)

    def column_source(self, columns: Sequence[Column], counts: ItemCounts) -> RemoteColumns | None:
        """Return the statistics' count columns as a source whose blocks the workers assemble
        (``Estimator.environment``), or None (the client computes them all) when none is a per-item count of
        the record's labellings (``per_item``). ``counts``: the client's; its record's ids, in order, are what
        the partitions must hold."""
        remote = [k for k, column in enumerate(columns) if per_item(column, self.files.names)]
        if not remote:
            return None
        rest = [k for k in range(len(columns)) if k not in set(remote)]
        self._ids = counts.table.ids
        local = client_columns(counts, [columns[k] for k in rest]) if rest else None
        return RemoteColumns(
            len(columns),
            _rows_stay_on_the_workers,
            None,
            tuple(columns[k] for k in remote),
            tuple(remote),
            local,
            tuple(rest),
        )

    def _remote_blocks(
        self, matrices: Sequence[Any], source: RemoteColumns, parts: list[np.ndarray]
    ) -> tuple[list[Any], list[Any]]:
        """Return (a future per canonical block: its ItemBlock; a future per block: its column sums).

        ``matrices``: a future per partition of its matrix of the source's columns (``partition_matrix``)."""
        blocks, sums = [], []
        for members in parts:
            owner = np.searchsorted(self.offsets, members, side="right") - 1
            pieces, rows = [], []
            for partition in np.unique(owner).tolist():
                place = np.flatnonzero(owner == partition)
                local = members[place] - self.offsets[partition]
                pieces.append(self.client.submit(partition_rows, matrices[partition], local, pure=False))
                rows.append(place)
            given = None
            if source.local is not None:
                (given,) = self.client.scatter([source.local.rows(members)], hash=False)
            both = self.client.submit(
                assembled_block,
                pieces,
                rows,
                len(members),
                source.n_columns,
                source.places,
                given,
                source.local_places,
                pure=False,
            )
            blocks.append(self.client.submit(operator.getitem, both, 0, pure=False))
            sums.append(self.client.submit(operator.getitem, both, 1, pure=False))
        return blocks, sums

    def resampled_sums(
        self,
        columns: Any,
        strata: Sequence[np.ndarray],
        resamples: int,
        seed: np.random.SeedSequence,
        progress: Callable[[int], None] | None = None,
        stratum_keys: Sequence[int] | None = None,
        run: Any = None,
        clusters: Sequence[np.ndarray | None] | None = None,
    ) -> Any:
        """``bootstrap.resampled_sums`` with the ``RemoteColumns`` sources' blocks built on the workers.

        Sources of other kinds (a matrix the client holds: per-type counts) are cut into blocks here and sent
        as the Dask engine sends them. The arrangement of the sums (point estimate in row 0, replicate chunks
        after it, pooled last) and the order in which block sums are added are ``resampled_sums``'s.
        """
        sources = [columns] if not isinstance(columns, (list, tuple)) else list(columns)
        if clusters is not None or not any(isinstance(source, RemoteColumns) for source in sources):
            return bootstrap.resampled_sums(
                columns, strata, resamples, seed, progress, stratum_keys, run=self, clusters=clusters
            )
        counts = self.counts(self._ids)
        stratum_keys = list(range(len(strata))) if stratum_keys is None else list(stratum_keys)
        wanted = [resamples if source.resamples is None else min(source.resamples, resamples) for source in sources]
        sums = [
            np.zeros((len(strata) + 1, count + 1, source.n_columns), dtype=np.float64)
            for count, source in zip(wanted, sources)
        ]
        # per source computed on the workers, a future per partition of its matrix: computed once for every block
        partition_matrices = [
            [self.client.submit(partition_matrix, partition, source.columns, pure=False) for partition in counts]
            if isinstance(source, RemoteColumns)
            else []
            for source in sources
        ]
        sizes: list[list[int]] = []
        handles: list[list[list[Any]]] = [[] for _ in sources]  # [source][group][block]: a future of its ItemBlock
        block_sums: list[list[list[Any]]] = [[] for _ in sources]  # [source][group][block]: its sums, or a future
        for members in strata:
            parts = bootstrap.canonical_blocks(members)
            sizes.append([len(part) for part in parts])
            for number, source in enumerate(sources):
                if isinstance(source, RemoteColumns):
                    found, totals = self._remote_blocks(partition_matrices[number], source, parts)
                else:
                    matrices = [source.rows(part) for part in parts]
                    totals = [np.asarray(matrix.sum(axis=0)).reshape(-1) for matrix in matrices]
                    found = self.client.scatter([bootstrap.item_block(matrix) for matrix in matrices], hash=False)
                    del matrices
                handles[number].append(found)
                block_sums[number].append(totals)
        del partition_matrices  # each goes from its worker once the blocks' rows are cut from it
        for number, total in enumerate(sums):  # the point estimates, block by block in the local engine's order
            for group, totals in enumerate(block_sums[number]):
                for found in self.client.gather(totals) if totals and not isinstance(totals[0], np.ndarray) else totals:
                    total[group, 0] += found
        del block_sums
        units = [
            (group, first) for group in range(len(strata)) for first in range(0, max(wanted), bootstrap.REPLICATE_CHUNK)
        ]
        partitions = self.partitions or default_partitions(len(units), sum(self.client.nthreads().values()))
        tasks = []  # every unit's tasks at once, so that the workers are busy while the client adds up
        for group, first in units:
            wanted_here = [max(0, min(bootstrap.REPLICATE_CHUNK, count - first)) for count in wanted]
            tasks.append(
                [
                    self.client.submit(
                        partial_sums,
                        sizes[group],
                        [[handles[s][group][n] for n in numbers] for s in range(len(sources))],
                        numbers,
                        seed,
                        stratum_keys[group],
                        first // bootstrap.REPLICATE_CHUNK,
                        wanted_here,
                        pure=False,
                    )
                    for numbers in block_groups(len(sizes[group]), partitions)
                ]
            )
        del handles  # the blocks stay on the workers while a task needs them, then go
        for (group, first), unit_tasks in zip(units, tasks):
            for total, part in zip(sums, _added(self._gathered(unit_tasks))):
                total[group, 1 + first : 1 + first + len(part)] = part
            if progress:
                progress(len(strata[group]) * min(bootstrap.REPLICATE_CHUNK, resamples - first) // max(resamples, 1))
        del tasks
        for total in sums:
            total[-1] = total[:-1].sum(axis=0)
        return sums[0] if not isinstance(columns, (list, tuple)) else sums


def partition_files(config: Any) -> PartitionFiles | None:
    """Return the files of a partitioned record the config reads (a folder or a glob of Parquet span tables, local
    or at a URL), or None."""
    from refsens_report.files import path_string

    if config.record_format != "parquet" or not config.record_options.partitioned:
        return None
    files = config.record_options.files()
    return PartitionFiles(
        tuple(path_string(file.path) for file in files),
        tuple(file.display for file in files),
        tuple(config.roles.all_names),
        config.audit.duplicate_key,
        dict(config.label_map),
    )


def unheld_names(config: Config) -> frozenset[str]:
    """Return the labellings whose spans the client of a partitioned record's Dask run does not read: the outputs
    (those that are not also a reference or an annotator). Their spans stay on the workers, which read every
    partition whole; the client's analyses read the outputs' per-item counts from them (``PartitionedRun.column``)
    and the references' and annotators' spans themselves. At a million items of 20 outputs and 4 references that
    is five sixths of the spans the client would otherwise read, number and hold.

    None when the run is local or the record is one file, and none under a `[record] label_map` that drops a type:
    the map's note lists the labellings losing it in the order of their first such span, which needs every span.
    """
    if config.engine.backend != "dask" or partition_files(config) is None:
        return frozenset()
    if any(not target for target in config.label_map.values()):
        return frozenset()
    roles = config.roles
    return frozenset(roles.outputs) - set(roles.references) - set(roles.annotators)


def dask_run(client: Any, config: Config) -> DaskRun:
    """Return the Dask engine's ``run`` (``engine.open_engine``'s ``make_run``): a ``PartitionedRun`` for a
    partitioned record (a folder of Parquet span tables), whose workers read the partitions and build the count
    blocks; else a ``DaskRun``, which ships the client's blocks."""
    files = partition_files(config)
    if files is None:
        return DaskRun(client, config.engine.partitions)
    return PartitionedRun(client, config.engine.partitions, files)
