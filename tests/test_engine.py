"""The Dask engine: the local engine's numbers for any partitioning, clear config errors, and no process left.

One distributed LocalCluster of two worker processes serves the module. The canonical blocks are built on
the client, so a small ``BLOCK_ITEMS`` patched here gives each language of the simulated record several blocks
for the partitions to split; the workers need no patch.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

from refsens_report import bootstrap, engine  # noqa: E402
from refsens_report.cli import main  # noqa: E402
from refsens_report.demo import write_simulation  # noqa: E402
from refsens_report.errors import InputError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BLOCK_ITEMS = 16  # the simulated record's 100 items per language: 7 blocks each (6 x 16 + 4)
RESAMPLES = "300"  # two chunks of replicates per language: 250 and 50


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        scheduler_kwargs=engine.QUIET_SCHEDULER,
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("engine")
    write_simulation(folder, items=600, seed=0)
    return folder / "refsens.toml"


def with_engine(config: Path, table: str, name: str) -> Path:
    """Write a copy of the config with an [engine] table beside it."""
    path = config.with_name(name)
    path.write_text(config.read_text(encoding="utf-8") + f"\n[engine]\n{table}\n", encoding="utf-8")
    return path


def audit_csv(config: Path, out: Path) -> bytes:
    """Audit through the command line; return results.csv."""
    assert main(["audit", str(config), "--out", str(out), "--resamples", RESAMPLES, "--quiet"]) == 0
    return (out / "results.csv").read_bytes()


@pytest.fixture(scope="module")
def local_csv(project, tmp_path_factory) -> bytes:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
        return audit_csv(project, tmp_path_factory.mktemp("local"))


def spy_on_partitions(monkeypatch) -> list[tuple[int, int]]:
    """Record each (blocks, partitions) the Dask engine splits: proof that the chunks ran there."""
    seen: list[tuple[int, int]] = []
    split = engine.block_groups

    def recorded(n_blocks: int, partitions: int) -> list[list[int]]:
        seen.append((n_blocks, partitions))
        return split(n_blocks, partitions)

    monkeypatch.setattr(engine, "block_groups", recorded)
    return seen


@pytest.mark.parametrize("partitions", [None, 1, 3, 7])
def test_dask_gives_the_local_results_for_any_partitioning(
    partitions, cluster, project, local_csv, tmp_path, monkeypatch
):
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    seen = spy_on_partitions(monkeypatch)
    table = f'backend = "dask"\nscheduler = "{cluster.scheduler_address}"\n'
    if partitions is not None:
        table += f"partitions = {partitions}\n"
    assert audit_csv(with_engine(project, table, "dask.toml"), tmp_path) == local_csv
    assert max(n_blocks for n_blocks, _ in seen) == 7
    if partitions is not None:
        assert {used for _, used in seen} == {partitions}


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_the_dask_run_adds_up_to_resampled_sums(partitions, client, monkeypatch):
    """Several sources drawn together, one needing fewer replicates than the chunks give, one listing its items."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 97)
    rng = np.random.default_rng(4)
    columns = rng.integers(0, 3, size=(1000, 5)).astype(np.float64)
    listed = np.flatnonzero(rng.random(1000) < 0.3)
    sources = [
        bootstrap.matrix_source(columns),
        bootstrap.matrix_source(columns[listed, :2] + 1, listed, resamples=260),
    ]
    strata = [np.arange(0, 700)[::-1].copy(), np.arange(700, 1000)]
    seed = np.random.SeedSequence(8)
    local = bootstrap.resampled_sums(sources, strata, 600, seed, stratum_keys=[5, 6])
    dask = bootstrap.resampled_sums(
        sources, strata, 600, seed, stratum_keys=[5, 6], run=engine.DaskRun(client, partitions)
    )
    assert [found.shape for found in dask] == [(3, 601, 5), (3, 261, 2)]
    assert all(np.array_equal(mine, theirs) for mine, theirs in zip(local, dask))


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_the_dask_run_adds_up_to_clustered_sums(partitions, client, monkeypatch):
    """The cluster bootstrap: canonical blocks of clusters, split across tasks, give the local sums."""
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 13)  # blocks of 13 clusters
    rng = np.random.default_rng(5)
    sizes = [rng.integers(1, 7, size=90), rng.integers(1, 4, size=40)]
    n = [int(part.sum()) for part in sizes]
    columns = rng.integers(0, 3, size=(sum(n), 4)).astype(np.float64)
    strata = [np.arange(0, n[0]), np.arange(n[0], sum(n))]
    clusters = [np.r_[0, np.cumsum(part)].astype(np.int64) for part in sizes]
    seed = np.random.SeedSequence(8)
    local = bootstrap.resampled_sums(columns, strata, 600, seed, stratum_keys=[5, 6], clusters=clusters)
    dask = bootstrap.resampled_sums(
        columns, strata, 600, seed, stratum_keys=[5, 6], clusters=clusters, run=engine.DaskRun(client, partitions)
    )
    assert np.array_equal(local, dask)


@pytest.fixture(scope="module")
def clustered_project(project) -> Path:
    """The simulated record with documents of 5 items (by line), resampled as clusters."""
    import json

    folder = project.parent / "clustered"
    folder.mkdir(exist_ok=True)
    lines = (project.parent / "record.jsonl").read_text(encoding="utf-8").splitlines()
    with open(folder / "record.jsonl", "w", encoding="utf-8") as handle:
        for number, line in enumerate(lines):
            item = json.loads(line)
            item.setdefault("meta", {})["document"] = f"doc-{number // 5}"
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    text = project.read_text(encoding="utf-8").replace(
        'format = "jsonl"\n', 'format = "jsonl"\ncluster = "document"\n', 1
    )
    text = text.replace('datasheet = "datasheet.md"\n', "")
    assert 'cluster = "document"' in text
    (folder / "refsens.toml").write_text(text, encoding="utf-8")
    return folder / "refsens.toml"


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_dask_gives_the_local_clustered_results(partitions, cluster, clustered_project, tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", 4)  # 20 documents per language: 5 blocks of clusters
    local = audit_csv(clustered_project, tmp_path / "local")
    table = f'backend = "dask"\nscheduler = "{cluster.scheduler_address}"\npartitions = {partitions}\n'
    assert audit_csv(with_engine(clustered_project, table, "dask.toml"), tmp_path / "dask") == local
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(local.decode("utf-8"))))
    corpus = [row for row in rows if row["analysis"] == "agreement" and row["statistic"] == "f1"]
    assert {row["n_clusters"] for row in corpus if row["language"] != "pooled"} == {"20"}


def test_default_partitions_keep_every_worker_busy():
    assert engine.default_partitions(units=48, threads=2) == 1
    assert engine.default_partitions(units=8, threads=32) == 8
    assert engine.block_groups(7, 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert engine.block_groups(2, 7) == [[0], [1]]  # never an empty task


def children() -> set[int]:
    """Return the live processes below this one (not the module's cluster's own, which the caller keeps)."""
    return {child.pid for child in psutil.Process().children(recursive=True) if child.status() != psutil.STATUS_ZOMBIE}


def test_workers_start_a_local_cluster_that_stops_with_the_audit(cluster, project, local_csv, tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "BLOCK_ITEMS", BLOCK_ITEMS)
    seen = spy_on_partitions(monkeypatch)
    before = children()
    config = with_engine(project, 'backend = "dask"\nworkers = 2\npartitions = 3', "workers.toml")
    assert audit_csv(config, tmp_path) == local_csv
    assert seen
    deadline = time.monotonic() + 10
    while children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children() - before == set()


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_stopped_audit_stops_its_cluster(stop, project, tmp_path):
    """SIGTERM to the audit, or Ctrl-C (SIGINT to the whole process group): one line, no traceback, no worker left."""
    config = with_engine(project, 'backend = "dask"\nworkers = 2', "stopped.toml")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "refsens_report", "audit", str(config), "--out", str(tmp_path), "--resamples", "50000"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    audit = psutil.Process(process.pid)
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while len(seen) < 3 and time.monotonic() < deadline:  # the resource tracker and two workers
        seen |= {child.pid for child in audit.children(recursive=True)}
        time.sleep(0.05)
    assert len(seen) >= 3, "the local cluster did not start"
    time.sleep(1.0)  # into the bootstrap
    if stop == "SIGINT":
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to every process of the group
    else:
        process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + getattr(signal, stop), err
    assert err.strip() in {"interrupted", "stopped by SIGTERM"}, err
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in seen if psutil.pid_exists(pid)]


# --- config errors: exit 2, one line each ---------------------------------------------------------------------

ENGINE_PROBLEMS = {
    "both": (
        'backend = "dask"\nscheduler = "tcp://127.0.0.1:8786"\nworkers = 2',
        "Config value 'engine.workers': give either scheduler (an existing cluster) or workers",
    ),
    "neither": ('backend = "dask"', 'Config value \'engine.backend\': "dask" needs scheduler = "tcp://host:port"'),
    "no workers": ('backend = "dask"\nworkers = 0', "Config value 'engine.workers': must be a positive integer, got 0"),
    "workers a string": (
        'backend = "dask"\nworkers = "2"',
        "Config value 'engine.workers': must be a positive integer",
    ),
    "too many workers": ('backend = "dask"\nworkers = 5000', "Config value 'engine.workers': must be at most "),
    "no partitions": ('backend = "dask"\nworkers = 2\npartitions = 0', "Config value 'engine.partitions'"),
    "an address without tcp": (
        'backend = "dask"\nscheduler = "localhost:8786"',
        "Config value 'engine.scheduler': must be a Dask scheduler's address, tcp://host:port",
    ),
    "a port out of range": ('backend = "dask"\nscheduler = "tcp://localhost:99999"', "Config value 'engine.scheduler'"),
    "local with workers": ("workers = 2", "Config value 'engine.workers': applies to backend = \"dask\" only"),
    "unknown backend": ('backend = "spark"', "Config value 'engine.backend': must be one of local, dask, got 'spark'"),
    "unknown key": ('backend = "dask"\nworkers = 2\nthreads = 4', "Config value 'engine.threads': unknown key"),
    "no timeout": (
        'backend = "dask"\nworkers = 2\ntimeout = 0',
        "Config value 'engine.timeout': must be a number of seconds above 0 and at most 3,600, got 0",
    ),
    "timeout a string": ('backend = "dask"\nworkers = 2\ntimeout = "10"', "Config value 'engine.timeout': must be a"),
    "timeout of 400 digits": ('backend = "dask"\nworkers = 2\ntimeout = ' + "9" * 400, "Config value 'engine.timeout'"),
    "local with a timeout": ("timeout = 5", "Config value 'engine.timeout': applies to backend = \"dask\" only"),
}


@pytest.mark.parametrize("case", sorted(ENGINE_PROBLEMS))
def test_an_engine_problem_names_its_key(case, project, capsys):
    table, message = ENGINE_PROBLEMS[case]
    code = main(["validate", str(with_engine(project, table, "bad.toml"))])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert message in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_dask_without_distributed_says_what_to_install(project, capsys, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *more: None if name == "distributed" else find_spec(name, *more)
    )
    code = main(["validate", str(with_engine(project, 'backend = "dask"\nworkers = 2', "missing.toml"))])
    err = capsys.readouterr().err
    assert code == 2
    assert "Config value 'engine.backend': \"dask\" needs the distributed package" in err
    assert "pip install 'refsens-report[dask]'" in err


def test_a_scheduler_that_does_not_answer_fails_in_time(project, tmp_path, capsys):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = with_engine(
        project, f'backend = "dask"\nscheduler = "tcp://127.0.0.1:{port}"\ntimeout = 2', "unreachable.toml"
    )
    started = time.monotonic()
    code = main(["audit", str(config), "--out", str(tmp_path), "--resamples", RESAMPLES, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert time.monotonic() - started < 30
    assert f"Config value 'engine.scheduler': cannot reach a Dask scheduler at tcp://127.0.0.1:{port}" in err
    assert "Traceback" not in err and not (tmp_path / "results.csv").exists()


# --- peers that are not Dask schedulers: named within [engine] timeout, exit 2, one line ------------------------


def serve(reply: bytes | None) -> tuple[int, Callable[[], None]]:
    """Listen on the loopback address; send ``reply`` to every connection and keep it open (None: accept
    nothing, the kernel alone completes the connection). Return the port and a function that stops it."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def answer() -> None:
        while True:
            try:
                peer, _ = server.accept()
            except OSError:  # stopped
                return
            held.append(peer)
            peer.sendall(reply)

    if reply is not None:
        threading.Thread(target=answer, daemon=True).start()

    def stop() -> None:
        server.close()
        for peer in held:
            peer.close()

    return server.getsockname()[1], stop


def http_server() -> tuple[int, Callable[[], None]]:
    """An HTTP server (as the Dask dashboard's port is): it waits for a request, silent until then."""
    from http.server import HTTPServer, SimpleHTTPRequestHandler

    server = HTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return server.server_address[1], stop


PEERS = {
    "silent": (lambda: serve(None), "did not answer as a Dask scheduler within 1 s"),
    "HTTP": (http_server, "did not answer as a Dask scheduler within 1 s"),
    "garbage": (
        lambda: serve(b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(256))),
        "is not a Dask scheduler (it sent b'SSH-2.0-': as a message's length, ",
    ),
    "a huge frame length": (
        lambda: serve(struct.pack("<Q", 2**62) + b"\x00" * 64),
        "length, 4,611,686,018,427,387,904 bytes, where a scheduler's first is a few dozen",
    ),
    "a frame of garbage": (
        lambda: serve(struct.pack("<QQQ", 24, 1, 8) + b"\xc1" * 8),
        "is not a Dask scheduler (it sent b'",
    ),
    "a closed connection": (lambda: serve(b""), None),
}


@pytest.mark.parametrize("case", sorted(PEERS))
def test_a_peer_that_is_not_a_scheduler_is_named_in_time(case, project, tmp_path, capsys):
    start, message = PEERS[case]
    port, stop = start()
    try:
        config = with_engine(
            project, f'backend = "dask"\nscheduler = "tcp://127.0.0.1:{port}"\ntimeout = 1', "peer.toml"
        )
        started = time.monotonic()
        code = main(["audit", str(config), "--out", str(tmp_path), "--resamples", RESAMPLES, "--quiet"])
        spent = time.monotonic() - started
    finally:
        stop()
    err = capsys.readouterr().err
    assert code == 2, err
    assert spent < 15, spent  # a deadline of 1 s, not a hang (distributed alone waits minutes)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"Config value 'engine.scheduler': tcp://127.0.0.1:{port}" in err, err
    assert message is None or message in err, err
    assert not (tmp_path / "results.csv").exists()


def test_a_closed_connection_is_named():
    port, stop = serve(b"")
    try:
        with pytest.raises(InputError, match="is not a Dask scheduler|did not answer") as raised:
            engine.probe_scheduler(f"tcp://127.0.0.1:{port}", 1)
    finally:
        stop()
    assert "Traceback" not in str(raised.value)


def test_a_scheduler_passes_the_probe(cluster):
    engine.probe_scheduler(cluster.scheduler_address, 5)  # no error: its handshake is read and recognised


def test_an_unread_gather_exit_is_not_printed(project, caplog):
    """Ctrl-C can close the client while a gather's tasks wait: asyncio would log their AllExit, with its
    traceback, when they are collected. The Dask engine keeps it off the terminal, and no other error."""
    from distributed.client import AllExit

    engine.quiet_gather_exits()

    async def stopped_early() -> None:
        raise AllExit()

    async def failed() -> None:
        raise ValueError("a real error")

    loop = asyncio.new_event_loop()
    try:
        for work in (stopped_early, failed):
            task = loop.create_task(work())
            loop.run_until_complete(asyncio.sleep(0.01))
            assert task.done()
            del task
            gc.collect()
    finally:
        loop.close()
    logged = [record for record in caplog.records if record.name == "asyncio"]
    assert [type(record.exc_info[1]).__name__ for record in logged] == ["ValueError"]
