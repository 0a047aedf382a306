"""Publishing a built version into the site: locks, staging folders, the atomic move, recovery.

A build writes into a staging folder inside the site folder, locked for the build's life; only a complete
version is moved into place (a rename, or with --force an atomic exchange), with the index right after, so a
failure at any point leaves the site as it was. Tidying, publishing and the index happen under the site's
lock, and the staging folders of builds that died are tidied (docs/site.md, "Staging, versions and failures").
The build itself is site.py's; this module knows folders, not what is in them.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from refsens_report import manifest
from refsens_report.config import version_problem
from refsens_report.errors import InputError, warn

try:
    import fcntl
except ImportError:  # not POSIX: builds are not locked against each other
    fcntl = None  # type: ignore[assignment]

INDEX_NAME = "index.html"  # the site's index, published with the version; also each version's appendix page
STAGING_PREFIX = ".staging-"
STAGING_LOCK = ".alive"  # inside a staging folder: locked by its build for as long as the build lives
PREVIOUS = ".previous"  # inside a staging folder: the version a --force build moved aside (without exchange)
LOCK_NAME = ".lock"  # the site's lock file, only where the site folder itself cannot be locked (NFS)


def _flock(fd: int, blocking: bool = True) -> bool:
    """Lock ``fd`` exclusively; return False when ``blocking`` is off and another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _open_site_lock(out: Path) -> tuple[int, Path]:
    """Open and lock the site: the folder itself (no file added to the site), or site/.lock where a folder
    cannot be locked (NFS emulates flock with write locks, which a folder cannot take). Return the fd and
    the path it names."""
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        _flock(fd)
        return fd, out
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            raise
    path = out / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        _flock(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd, path


@contextmanager
def site_lock(out: Path, create: bool = False) -> Iterator[None]:
    """Hold the site's lock: one build at a time tidies staging folders, publishes and refreshes the index.

    ``create``: make the site folder first when it does not exist. A lock taken on a site folder that a
    failed first build removed meanwhile is dropped and taken again on the folder as it now is.
    """
    if fcntl is None:
        if create:
            out.mkdir(parents=True, exist_ok=True)
        yield
        return
    while True:
        if create:
            out.mkdir(parents=True, exist_ok=True)
        fd, locked = _open_site_lock(out)
        try:
            current = os.stat(locked)
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(os.fstat(fd), current):
            break
        os.close(fd)
        if not create:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(out))
    try:
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _staging_is_dead(staging: Path) -> bool:
    """Whether a staging folder's build is gone: nobody holds the lock on its .alive file.

    Called under the site lock, under which every staging folder is created with its .alive file: a folder
    without one was left by a build that died in between (or by a refsens-report older than the lock).
    """
    try:
        fd = os.open(staging / STAGING_LOCK, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # cannot tell: leave it
    try:
        return fcntl is not None and _flock(fd, blocking=False)
    except OSError:
        return False
    finally:
        os.close(fd)  # releases the lock just taken, if any


def recover(out: Path, own: Path | None = None) -> bool:
    """Tidy the staging folders of builds that died (under the site lock); return True if the index needs
    refreshing (a dead build had reached publishing).

    A --force build that died between its two renames (where the file system cannot exchange two folders)
    left the published version in its staging folder's .previous: it goes back to site/<version>.
    """
    refresh = False
    for staging in sorted(out.iterdir()):
        if not (staging.name.startswith(STAGING_PREFIX) and staging.is_dir() and not staging.is_symlink()):
            continue
        if own is not None and staging.name == own.name:
            continue  # this build's own (where locks are per process, as on NFS, its lock would not tell)
        if not _staging_is_dead(staging):
            continue
        previous = staging / PREVIOUS
        if previous.is_dir():
            for old in sorted(previous.iterdir()):
                if not version_problem(old.name) and not os.path.lexists(out / old.name):
                    os.rename(old, out / old.name)
                    warn(f"{out / old.name}: put back (a build that replaced it was stopped midway)")
        refresh = refresh or (staging / INDEX_NAME).exists()
        shutil.rmtree(staging, ignore_errors=True)
    return refresh


def open_staging(out: Path) -> tuple[Path, int | None]:
    """Create this build's staging folder, .staging-<pid>-XXXX, locked for the build's life (under the site
    lock). Return it and the lock's descriptor."""
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out))
    if fcntl is None:
        return staging, None
    try:
        fd = os.open(staging / STAGING_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        _flock(fd)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, fd


def remove_empty_site(out: Path) -> None:
    """Remove a site folder that holds nothing but its lock file (a first build that failed)."""
    if not out.is_dir():
        return
    left = [path.name for path in out.iterdir()]
    if left in ([], [LOCK_NAME]):
        if left:
            (out / LOCK_NAME).unlink()
        out.rmdir()


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends (its renames are not interrupted), then act on
    them as before. Only the main thread can set handlers; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for signum in _STOP_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is None or handler == signal.SIG_IGN:
            continue  # set outside Python, or ignored: leave it
        previous[signum] = signal.signal(signum, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)


RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False  # a C library without renameat2 (glibc before 2.28)
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # the kernel or the file system cannot exchange
    raise OSError(code, os.strerror(code), str(second))


def _refuse_existing(target: Path) -> InputError:
    return InputError(
        f"{target} already exists: a published version is never overwritten. Bump dataset.version in the "
        "config, or pass --force to rebuild this version on purpose."
    )


def check_replaceable(target: Path, force: bool) -> None:
    """Refuse to publish over ``target`` unless it is a published version and ``force`` is given."""
    if not os.path.lexists(target):
        return
    looks_published = (
        target.is_dir()
        and not target.is_symlink()
        and any((target / name).is_file() for name in ("results.json", manifest.MANIFEST_NAME))
    )
    if not looks_published:
        raise InputError(
            f"{target} exists and is not a published version: it is left alone. Choose another "
            "dataset.version or move it away."
        )
    if not force:
        raise _refuse_existing(target)


def move_into_place(staging: Path, out: Path, version: str, force: bool) -> None:
    """Move the staged version and index into place (under the site lock); on failure put back what was there.

    With --force the old and new folders are exchanged in one step where the system can (Linux); elsewhere
    the old folder is first moved to the staging folder's .previous, where a later build finds it and puts
    it back if this process dies before the new one is in place (recover).
    """
    target, staged = out / version, staging / version
    check_replaceable(target, force)
    with signals_deferred():
        if os.path.lexists(target) and _exchange(staged, target):
            try:
                os.replace(staging / INDEX_NAME, out / INDEX_NAME)
            except BaseException:
                _exchange(staged, target)
                raise
            return
        previous = staging / PREVIOUS / version
        if os.path.lexists(target):
            previous.parent.mkdir()
            os.rename(target, previous)
        try:
            os.rename(staged, target)
            try:
                os.replace(staging / INDEX_NAME, out / INDEX_NAME)
            except BaseException:
                os.rename(target, staged)
                raise
        except BaseException:
            if os.path.lexists(previous):
                os.rename(previous, target)
            raise


def discard(staging: Path, alive: int | None) -> None:
    """Remove this build's staging folder and release the lock on its .alive file."""
    shutil.rmtree(staging, ignore_errors=True)
    if alive is not None:
        os.close(alive)
