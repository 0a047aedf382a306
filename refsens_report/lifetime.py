"""Forked workers die with the build: however the build ends, even by kill -9, none is left behind."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """In a forked child: get ``signum`` when the parent (pid ``parent``) dies, however it dies (Linux
    PR_SET_PDEATHSIG), and exit now if it died already. Ctrl-C is left to the parent, which stops its
    children itself: SIGINT is ignored here (a child would otherwise print a KeyboardInterrupt traceback).
    SIGTERM and SIGHUP get their default action back (the build's handlers are inherited through fork): a
    Python handler runs only between bytecodes, so a SIGTERM that arrives just before the worker blocks
    in C (a figure worker waiting for the pool's queue lock when Pool.terminate sends it) would be noticed
    never, and the pool would wait for the worker forever. The default action cannot be missed.

    Elsewhere than Linux the workers stop on their own: the typesetter at its pipe's end of file once idle,
    the run and figure workers when their job is done.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for stop in (getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)):
        signal.signal(stop, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request above: nobody waits for this worker
        os._exit(1)


# the build's stop signals (cli.py turns them into exceptions; the PDF typesetter into SystemExit)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def stop_signals_held() -> Iterator[None]:
    """Within: the stop signals wait, and are handled on the way out. Wrap every fork of a worker in it.

    A signal handled while a process forks runs its handler inside os.fork's after-fork hooks, where Python
    prints and ignores the exception the handler raises: the build would go on, not stop, and print a traceback.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def stop_signals_released() -> None:
    """In a worker forked under ``stop_signals_held``: take the stop signals again."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextmanager
def interrupt_held() -> Iterator[None]:
    """Within: SIGINT waits, and is handled on the way out. Threads started within keep it blocked for good, and
    so do the processes they start (a Dask local cluster's loop thread and its worker processes).

    Ctrl-C at a terminal sends SIGINT to every process of the group: blocked in the workers, it reaches the build
    alone, which stops them itself (no KeyboardInterrupt traceback from each). A Ctrl-C while the workers start
    waits until the cluster is there to be stopped.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    # the first process spawned starts multiprocessing's resource tracker, which unblocks SIGINT in the thread
    # starting it (the cluster's loop thread): started here, before SIGINT is blocked, it is already running then
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
