"""Where the bootstrap's chunks run: this machine's cores (local), or a Dask cluster (`[engine]`, docs/scale.md).

The unit of work is ``bootstrap.chunk_sums``: one stratum's chunk of replicates over its canonical blocks of
items. The local backend runs the chunks in threads (``bootstrap.resampled_sums``); the Dask backend sends each
stratum's blocks to the workers once and runs each chunk as tasks over groups of blocks, whose partial sums add
up on the client. Every block draws from its own stream, keyed by (seed, stratum, chunk, block), and the sums
are of integer counts, exact in any order: the numbers are the same whichever backend, workers or partitions.

A partitioned record (a folder of Parquet span tables: ``convert --partition-items``) runs on a
``workers.PartitionedRun`` instead: the workers read the partitions and build the count blocks themselves.

``distributed`` is imported only when the Dask backend is used: it is an optional extra.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from refsens_report import __version__, bootstrap
from refsens_report.config import DASK_EXTRA, Config, EngineSettings
from refsens_report.errors import BuildError, InputError
from refsens_report.lifetime import interrupt_held
from refsens_report.names import shown

# a Dask scheduler speaks first: one message of a few dozen bytes (its Python, pickle protocol and compression),
# framed as 8 bytes of length then frames (distributed.comm.tcp). The audit reads it itself, within
# `[engine] timeout` and this many bytes, before distributed does: a peer that is silent (an HTTP server waits
# for a request) or sends anything else is named, and a huge length never reaches distributed's reader
HANDSHAKE_LIMIT = 64 * 1024
HANDSHAKE_KEYS = ("python", "pickle-protocol")
# the scheduler serves HTTP even without a dashboard, by default on port 8787, and warns when that is taken (by
# another cluster): a free port on the loopback address instead
QUIET_SCHEDULER = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
# the local cluster's workers log only what is critical: warnings are about tasks cancelled when the audit stops
# (it says so itself) or memory use, which a failed audit reports (a worker that died: KilledWorker); their
# errors are a task's failure, which reaches the audit as its exception, or a heartbeat that finds the scheduler
# gone while the audit stops (seen on a loaded machine: "Failed to communicate with scheduler during heartbeat")
WORKER_LOG_LEVEL = logging.CRITICAL
TASKS_PER_THREAD = 2  # the default partitioning aims at this many tasks per worker thread and round of chunks

Run = Callable[..., Iterator[list[np.ndarray]]]


@contextmanager
def open_engine(
    config: Config, stopwatch: Any = None, make_run: Callable[[Any, Config], Run] | None = None
) -> Iterator[Run | None]:
    """Yield the bootstrap's ``run`` (``bootstrap.resampled_sums``) for the configured backend: None for local.

    ``make_run(client, config)`` builds the Dask run (``workers.dask_run``: a partitioned record's own engine);
    by default a ``DaskRun``, which ships the client's count blocks to the workers.

    The Dask backend connects to the configured scheduler, or starts a local cluster and stops it on the way
    out, however the audit ends (an error, Ctrl-C, SIGTERM: the command line turns both into exceptions).
    ``stopwatch`` (an ``estimator.Stopwatch``) times the cluster's start and stop as the "engine" stage.
    """
    settings = config.engine
    if settings.backend == "local":
        yield None
        return
    quiet_gather_exits()
    with _timed(stopwatch):
        client, cluster = _connect(settings)
    try:
        yield (make_run or _shipped_run)(client, config)
    except BaseException:
        _close(client, cluster, interrupted=True)
        raise
    with _timed(stopwatch):
        _close(client, cluster)


def _shipped_run(client: Any, config: Config) -> DaskRun:
    """The Dask run that ships the client's count blocks to the workers."""
    return DaskRun(client, config.engine.partitions)


def _close(client: Any, cluster: Any, interrupted: bool = False) -> None:
    """Close the client, and the local cluster when the audit started one.

    Interrupted (tasks still running), Dask's own log stays quiet: the scheduler of a local cluster runs in this
    process and would log every task it cancels for the client it has just lost; the audit says why it stopped.
    """
    logger = logging.getLogger("distributed")
    level = logger.level
    if interrupted:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        client.close()
        if cluster is not None:
            cluster.close()
    finally:
        logger.setLevel(level)


@contextmanager
def _timed(stopwatch: Any) -> Iterator[None]:
    if stopwatch is None:
        yield
    else:
        with stopwatch.stage("engine"):
            yield


def _connect(settings: EngineSettings) -> tuple[Any, Any]:
    """Return (client, the local cluster or None): connected, with at least one worker running this package."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(
            f"Config value 'engine.backend': \"dask\" needs the distributed package: {DASK_EXTRA}"
        ) from None
    if settings.scheduler is not None:
        probe_scheduler(settings.scheduler, settings.timeout)
        try:
            client = Client(settings.scheduler, timeout=settings.timeout, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise InputError(
                f"Config value 'engine.scheduler': cannot reach a Dask scheduler at {settings.scheduler} ({error})"
            ) from None
        _ready(client, None, f"Config value 'engine.scheduler': {settings.scheduler}", settings.timeout)
        return client, None
    cluster = client = None
    try:
        # processes, one thread each (a worker's memory is its own), on the loopback address only
        with interrupt_held():
            cluster = LocalCluster(
                n_workers=settings.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                host="127.0.0.1",
                scheduler_kwargs=QUIET_SCHEDULER,
                silence_logs=WORKER_LOG_LEVEL,
            )
        client = Client(cluster, set_as_default=False)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    _ready(client, cluster, "Config value 'engine.workers'", settings.timeout)
    return client, cluster


def probe_scheduler(address: str, timeout: float) -> None:
    """Connect to ``address`` (tcp://host:port) and read its first message, all within ``timeout`` seconds;
    raise InputError unless it is a Dask scheduler's handshake. Nothing is sent: the scheduler speaks first."""
    where = f"Config value 'engine.scheduler': {address}"
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as peer:
            length = _received(peer, 8, deadline)
            if len(length) == 8:
                (size,) = struct.unpack("<Q", length)
                if size > HANDSHAKE_LIMIT:
                    raise InputError(
                        f"{where} is not a Dask scheduler (it sent {shown(length)}: as a message's "
                        f"length, {size:,} bytes, where a scheduler's first is a few dozen)"
                    )
                message = _received(peer, size, deadline)
                if len(message) == size and _is_handshake(message):
                    return
                length += message
    except TimeoutError:
        raise InputError(f"{where} did not answer as a Dask scheduler within {timeout:g} s") from None
    except OSError as error:
        raise InputError(
            f"Config value 'engine.scheduler': cannot reach a Dask scheduler at {address} ({error})"
        ) from None
    said = f"it sent {shown(length[:40])}" if length else "it closed the connection without a word"
    raise InputError(f"{where} is not a Dask scheduler ({said})")


def _received(peer: socket.socket, size: int, deadline: float) -> bytes:
    """Return ``size`` bytes from the peer, fewer when it closes first; TimeoutError at the deadline."""
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        peer.settimeout(left)
        chunk = peer.recv(min(size - len(data), HANDSHAKE_LIMIT))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _is_handshake(message: bytes) -> bool:
    """Return whether a framed message (a count of frames, their lengths, the frames) holds a handshake."""
    import msgpack  # distributed's own dependency

    if len(message) < 8:
        return False
    (count,) = struct.unpack_from("<Q", message)
    if not 1 <= count <= (len(message) - 8) // 8:
        return False
    lengths = struct.unpack_from(f"<{count}Q", message, 8)
    start = 8 + 8 * count
    for length in lengths:
        frame = message[start : start + length]
        start += length
        try:
            found = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        except Exception:  # garbage: any of msgpack's errors
            continue
        if isinstance(found, dict) and all(key in found for key in HANDSHAKE_KEYS):
            return True
    return False


class _GatherExits(logging.Filter):
    """Drop asyncio's "Task exception was never retrieved" for distributed's AllExit: the internal signal of a
    gather stopped early, left unread when Ctrl-C closes the client in the middle of one."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "AllExit" or type(error).__module__ != "distributed.client"


GATHER_EXITS = _GatherExits()


def quiet_gather_exits() -> None:
    """Keep distributed's AllExit out of asyncio's log (and so off the terminal) for the rest of the process."""
    logging.getLogger("asyncio").addFilter(GATHER_EXITS)  # a filter already there is not added twice


def _ready(client: Any, cluster: Any, where: str, timeout: float) -> None:
    """Check the cluster's workers; on any problem (or a stop signal meanwhile) close what was opened."""
    try:
        _check_workers(client, where, timeout)
    except BaseException:
        _close(client, cluster, interrupted=True)
        raise


def _check_workers(client: Any, where: str, timeout: float) -> None:
    """Wait for a worker; refuse workers that run another version of this package (other sums, or none)."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise InputError(f"{where}: the Dask cluster has no worker (none joined within {timeout:g} s)") from None
    try:
        versions = client.run(worker_version)
    except Exception as error:  # a worker without the package cannot even read the function
        raise InputError(
            f"{where}: a Dask worker cannot run refsens-report ({type(error).__name__}: {error}); "
            f"install refsens-report {__version__} on every worker, with {DASK_EXTRA}"
        ) from None
    other = sorted({version for version in versions.values() if version != __version__})
    if other:
        raise InputError(
            f"{where}: Dask workers run refsens-report {', '.join(other)}, this audit {__version__}: "
            "install the same version on every worker"
        )


def worker_version() -> str:
    """Return the package's version, as a worker has it installed."""
    return __version__


def block_groups(n_blocks: int, partitions: int) -> list[list[int]]:
    """Return a stratum's block numbers in ``partitions`` runs of consecutive blocks (fewer when it has fewer)."""
    return [part.tolist() for part in np.array_split(np.arange(n_blocks), max(1, min(partitions, n_blocks)))]


def default_partitions(units: int, threads: int) -> int:
    """Return how many tasks each chunk's blocks are split into when the config does not say: enough that
    every worker thread has work (``TASKS_PER_THREAD`` tasks each), one task per chunk when the chunks do."""
    return max(1, -(-TASKS_PER_THREAD * threads // max(units, 1)))


def partial_sums(
    sizes: Sequence[int],
    part: Sequence[Sequence[bootstrap.ItemBlock]],
    numbers: Sequence[int],
    seed: np.random.SeedSequence,
    stratum_key: int,
    chunk: int,
    counts: Sequence[int],
) -> list[np.ndarray]:
    """On a worker: ``bootstrap.chunk_sums`` of one chunk over some of its stratum's blocks (``numbers``).

    ``part[source]`` holds each source's blocks ``numbers`` only; the others stand in as empty blocks, which
    ``chunk_sums(only=numbers)`` never reads. BLAS stays single-threaded, as in the local backend.
    """
    from threadpoolctl import threadpool_limits

    blocks = []
    for found in part:
        empty = bootstrap.ItemBlock(None, np.zeros((0, found[0].counts.shape[1]), dtype=np.float32))
        full = [empty] * len(sizes)
        for number, block in zip(numbers, found):
            full[number] = block
        blocks.append(full)
    with threadpool_limits(limits=1, user_api="blas"):
        return bootstrap.chunk_sums(sizes, blocks, seed, stratum_key, chunk, counts, only=numbers)


class DaskRun:
    """``bootstrap.resampled_sums``'s ``run`` on a Dask cluster: one task per (chunk, group of blocks)."""

    def __init__(self, client: Any, partitions: int | None = None):
        self.client, self.partitions = client, partitions

    def __call__(
        self,
        units: Sequence[tuple[int, int]],
        sizes: Sequence[Sequence[int]],
        blocks: Sequence[Sequence[Sequence[bootstrap.ItemBlock]]],
        seed: np.random.SeedSequence,
        stratum_keys: Sequence[int],
        counts: Sequence[Sequence[int]],
    ) -> Iterator[list[np.ndarray]]:
        """Yield, per unit (group, first replicate) in order, the sums ``chunk_sums`` gives for that unit.

        Each (stratum, group of blocks)'s count patterns go to the cluster once (``scatter``) and stay there
        for every chunk; each task returns its chunk's partial sums, added up here as the unit's tasks finish.
        """
        partitions = self.partitions or default_partitions(len(units), sum(self.client.nthreads().values()))
        groups = {group: block_groups(len(sizes[group]), partitions) for group, _ in units}
        places = [(group, numbers) for group, parts in groups.items() for numbers in parts]
        payloads = [[[source[group][number] for number in numbers] for source in blocks] for group, numbers in places]
        scattered = dict(
            zip(((group, tuple(numbers)) for group, numbers in places), self.client.scatter(payloads, hash=False))
        )
        tasks = [
            [
                self.client.submit(
                    partial_sums,
                    list(sizes[group]),
                    scattered[group, tuple(numbers)],
                    numbers,
                    seed,
                    stratum_keys[group],
                    first // bootstrap.REPLICATE_CHUNK,
                    list(wanted),
                    pure=False,
                )
                for numbers in groups[group]
            ]
            for (group, first), wanted in zip(units, counts)
        ]
        # the futures are released with this generator: the cluster forgets the blocks and the sums then (an
        # explicit cancel would race a client closing after a stop signal, and the scheduler would log it)
        for unit_tasks in tasks:
            yield _added(self._gathered(unit_tasks))

    def _gathered(self, tasks: list[Any]) -> list[list[np.ndarray]]:
        from distributed import KilledWorker

        try:
            return self.client.gather(tasks)
        except KilledWorker as error:
            raise BuildError(
                f"a Dask worker died computing the bootstrap ({error}): it may have run out of "
                "memory; give the workers more, or use more partitions"
            ) from None


def _added(parts: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Return the per-source sums of a unit's parts (integer counts: exact in any order)."""
    total = [np.array(source, dtype=np.float64) for source in parts[0]]
    for part in parts[1:]:
        for sums, more in zip(total, part):
            sums += more
    return total
