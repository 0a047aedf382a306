"""Opening the team's files: regular files only, never a FIFO or a device, and every failure in words.

Every file the tool reads (the config, the record, the datasheet, each adapter's inputs) goes through
``read_bytes``: it checks with ``stat`` before opening (opening a FIFO blocks until a writer comes, and
``/dev/zero`` never ends), then opens without blocking and checks the open file again, so a file swapped
in between cannot slip through. A symlink loop, a FIFO, a device or a socket becomes an ``OSError`` whose
``strerror`` says so, which the callers already turn into a message naming the file.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from refsens_report.errors import ProblemList

SYMLINK_LOOP = "a symlink loop"
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")  # a scheme: an fsspec URL (s3://, gs://, file://, memory://)
REMOTE_EXTRA = "pip install 'refsens-report[remote]'"


@dataclass(frozen=True)
class InputPath:
    """A path from the config: resolved for reading, shown in messages, and named in the provenance.

    ``display`` says where the file is from the config's folder (a path under ``record.root`` with the root
    before it), so a message can be followed. ``name`` is the path as written in its own key (under a root,
    relative to it), never a resolved one: results.json and manifest.json name inputs by it, and they must not
    depend on where the project, the data or a symlink lives.
    """

    path: Path
    display: str
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.display)

    def under(self, root: InputPath) -> InputPath:
        """Return this path as read under ``root``: shown after the root unless written absolute."""
        if PurePosixPath(self.display).is_absolute():
            return self  # the root does not apply to an absolute path: show it as written, not root//path
        return InputPath(self.path, f"{root.display.rstrip('/')}/{self.display}", self.name)


def as_written(value: str) -> str:
    """Return a config path as the user wrote it, tidied only lexically (``./a//b`` -> ``a/b``; ``..`` kept)."""
    return PurePosixPath(value).as_posix()


class UnreadableFile(OSError):
    """A path that is not a regular file (or not a folder where one is needed), with the reason as strerror."""


def _kind(mode: int) -> str:
    """Return what a non-regular file is, for a message."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "something other than a file"


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return SYMLINK_LOOP
    return error.strerror or str(error)


def resolve(base_dir: Path, value: str) -> tuple[Path, str | None]:
    """Return a config path made absolute against ``base_dir``, and why it cannot be used, or None."""
    joined = base_dir / value
    try:
        return joined.resolve(), None
    except RuntimeError:  # Python before 3.13: "Symlink loop from ..."
        return joined, f"is {SYMLINK_LOOP}"
    except OSError as error:
        return joined, f"is {SYMLINK_LOOP}" if error.errno == errno.ELOOP else f"cannot be read ({_reason(error)})"
    except ValueError:  # an embedded NUL character
        return joined, "is not a valid path"


def path_problem(path: Path, kind: str = "file") -> str | None:
    """Return why ``path`` is not a readable ``kind`` ("file", "folder", or "any": either), or None.

    The reason reads after the path: "is a symlink loop", "is a FIFO (named pipe), not a regular file",
    "is not a folder", "cannot be read (Permission denied)"; a missing path gives just "not found", which
    callers word themselves ("file not found: ...").
    """
    if is_remote(path):
        return _remote_problem(path, kind)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as error:
        return f"is {SYMLINK_LOOP}" if error.errno == errno.ELOOP else f"cannot be read ({_reason(error)})"
    except ValueError:
        return "is not a valid path"
    if stat.S_ISREG(mode):
        return None if kind in ("file", "any") else "is not a folder"
    if stat.S_ISDIR(mode):
        return None if kind in ("folder", "any") else "is not a file"
    return f"is {_kind(mode)}, not a regular file"


def text_files(folder: Path, display: str, problems: ProblemList) -> Iterator[tuple[str, Path]]:
    """Yield (name relative to the folder, path) of every .txt file under a folder, in name order.

    A name the file system gave as bytes that are not UTF-8, and a file that is not a readable regular file
    (a broken symlink, a FIFO, a device), are reported in ``problems`` and skipped.
    """
    for path in sorted(folder.rglob("*.txt")):
        name = path.relative_to(folder).as_posix()
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # the file system gave bytes that are not UTF-8 (kept as surrogates)
            problems.add(f"{display}: the file name {os.fsencode(name)!r} is not valid UTF-8; rename the file")
            continue
        if problem := path_problem(path, "file"):
            problems.add(
                f"{display.rstrip('/')}/{name}: {'is a broken symlink' if problem == 'not found' else problem}"
            )
            continue
        yield name, path


def open_regular(path: Path) -> BinaryIO:
    """Open a regular file for reading in binary; raise ``OSError`` (its strerror says why) for anything else."""
    if is_remote(path):
        if problem := _remote_problem(path, "file"):
            raise UnreadableFile(errno.ENOENT if problem == "not found" else errno.EIO, problem, str(path))
        try:
            return path.open("rb")
        except OSError as error:
            raise UnreadableFile(error.errno or errno.EIO, _reason(error), str(path)) from None
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise UnreadableFile(error.errno or errno.EIO, _reason(error), str(path)) from None
    except ValueError:
        raise UnreadableFile(errno.EINVAL, "not a valid path", str(path)) from None
    if not stat.S_ISREG(mode):
        raise UnreadableFile(errno.EINVAL, f"{_kind(mode)}, not a regular file", str(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise UnreadableFile(error.errno or errno.EIO, _reason(error), str(path)) from None
    handle = open(descriptor, "rb", closefd=True)
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # swapped between the stat and the open
        handle.close()
        raise UnreadableFile(errno.EINVAL, f"{_kind(mode)}, not a regular file", str(path))
    return handle


def is_url(value: str) -> bool:
    """Return whether a config path is a URL (``s3://bucket/record``): read through fsspec, not the local disk."""
    return URL.match(value) is not None


def is_remote(path: Any) -> bool:
    """Return whether a path is one ``remote_path`` made (a universal_pathlib path, not a local ``Path``)."""
    return not isinstance(path, PurePath)


def remote_path(url: str) -> Path:
    """Return a URL as a path with ``pathlib``'s reading methods (universal_pathlib over fsspec).

    Raise ``UnreadableFile`` saying what to install when universal_pathlib, or the package fsspec needs for
    the URL's scheme (s3fs for ``s3://``, gcsfs for ``gs://``), is missing.
    """
    try:
        from upath import UPath
    except ImportError:
        raise UnreadableFile(
            errno.EINVAL, f"reading a URL needs universal_pathlib and fsspec: {REMOTE_EXTRA}", url
        ) from None
    try:
        path = UPath(url)
        _ = path.fs  # the filesystem made now: a missing package is said here, not at the first read
    except (ImportError, ValueError) as error:  # fsspec: "Install s3fs to access S3", or an unknown protocol
        raise UnreadableFile(errno.EINVAL, str(error).strip() or type(error).__name__, url) from None
    return path  # type: ignore[return-value]


def readable_path(value: str) -> Path:
    """Return a path ``path_string`` wrote (on a Dask worker, say): a local path, or a URL's."""
    return remote_path(value) if is_url(value) else Path(value)


def path_string(path: Path) -> str:
    """Return a path as a string another process can read back (``readable_path``): a URL, or absolute."""
    return str(path) if is_remote(path) else str(path.resolve())


def _remote_problem(path: Any, kind: str) -> str | None:
    """``path_problem`` for a remote path: found, and a file or a folder as ``kind`` asks."""
    try:
        if path.is_file():
            return None if kind in ("file", "any") else "is not a folder"
        if path.is_dir():
            return None if kind in ("folder", "any") else "is not a file"
    except OSError as error:  # the store refused (credentials, network): its words
        return f"cannot be read ({_reason(error)})"
    return "not found"


def read_bytes(path: Path) -> bytes:
    """Return a regular file's bytes; raise ``OSError`` (its strerror says why) for anything else."""
    with open_regular(path) as handle:
        return handle.read()


def utf8_position(raw: bytes, error: UnicodeDecodeError) -> tuple[int, int]:
    """Return (line, byte within the line), both from 1, of the first byte that is not UTF-8."""
    line_start = raw.rfind(b"\n", 0, error.start) + 1
    return raw.count(b"\n", 0, error.start) + 1, error.start - line_start + 1


def decode_utf8(raw: bytes, display: str) -> tuple[str | None, str | None]:
    """Return (text, None), or (None, 'FILE:LINE: not valid UTF-8 (byte B of the line)')."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as error:
        line, byte = utf8_position(raw, error)
        return None, f"{display}:{line}: not valid UTF-8 (byte {byte} of the line)"
