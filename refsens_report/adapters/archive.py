"""A zip archive or the folder it unzips to, read file by file: the exports of annotation tools come either way.

Every member is read whole, so one that would unpack to more than the member limit (``[record]
max_member_mib``, default MEMBER_LIMIT), or a large one packed more than RATIO_LIMIT times (a zip bomb), is
refused by name before it is read. The sizes come from the archive's directory, which can lie, so the read
itself stops one byte past the limit too. An archive inside the export (INCEpTION's per-annotator zips) is
read by the same rules.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from typing import BinaryIO

from refsens_report.adapters.common import InputPath, read_int
from refsens_report.errors import InputError, ProblemList
from refsens_report.files import open_regular, path_problem
from refsens_report.options import OptionReader

MIB = 2**20
MEMBER_LIMIT = 1024 * MIB  # the most one archive member (or export file) may unpack to, unless configured
RATIO_LIMIT = 100  # a member packed more than this many times ...
RATIO_FLOOR = 8 * MIB  # ... and unpacking to more than this is refused as a zip bomb (small ones pack well)
READ_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError)


def read_member_limit(reader: OptionReader) -> int:
    """Read ``max_member_mib``, the most one archive member may unpack to, in bytes."""
    mib = read_int(reader, "max_member_mib", MEMBER_LIMIT // MIB)
    return (mib or MEMBER_LIMIT // MIB) * MIB


def _size(size: int) -> str:
    return f"{size / MIB:,.1f} MiB" if size < 1024 * MIB else f"{size / (1024 * MIB):,.1f} GiB"


def too_large(size: int | None, limit: int) -> str:
    """Return the message for a member or file that unpacks to ``size`` (None: found while reading) > ``limit``."""
    return (
        f"unpacks to {'' if size is None else _size(size) + ', '}more than the limit of {_size(limit)} for one "
        "file; raise [record] max_member_mib to read it"
    )


def member_problem(info: zipfile.ZipInfo, limit: int) -> str | None:
    """Return why a member must not be read, from the sizes the archive claims, or None."""
    if info.file_size > limit:
        return too_large(info.file_size, limit)
    if info.file_size > RATIO_FLOOR and info.file_size > RATIO_LIMIT * max(info.compress_size, 1):
        return (
            f"unpacks to {_size(info.file_size)} from {_size(info.compress_size)}, more than {RATIO_LIMIT} times "
            "its packed size: refused as a likely zip bomb"
        )
    return None


def read_member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes | str:
    """Return a member's bytes, or why it cannot be read (its sizes, or a damaged or unsupported member)."""
    try:
        info = archive.getinfo(name)
        if problem := member_problem(info, limit):
            return problem
        with archive.open(info) as stream:
            data = stream.read(limit + 1)  # stops past the limit whatever the directory claimed
    except READ_ERRORS as error:  # a damaged member, an unsupported compression method, an encrypted member
        return f"cannot read the archive member ({error})"
    return too_large(None, limit) if len(data) > limit else data


class Export:
    """The files of an export (a zip archive or a folder), by their path relative to it, in name order."""

    def __init__(self, source: InputPath, limit: int = MEMBER_LIMIT):
        self.source = source
        self.limit = limit
        self.zip: zipfile.ZipFile | None = None
        self.handle: BinaryIO | None = None
        if source.path.is_dir():
            self.names = sorted(
                path.relative_to(source.path).as_posix() for path in source.path.rglob("*") if not path.is_dir()
            )
            return
        try:
            self.handle = open_regular(source.path)
        except OSError as error:
            raise InputError(f"{source.display}: cannot read the export ({error.strerror})") from None
        try:
            self.zip = zipfile.ZipFile(self.handle)
        except (zipfile.BadZipFile, OSError) as error:
            self.handle.close()
            raise InputError(f"{source.display}: not a zip archive or a folder ({error})") from None
        self.names = sorted(name for name in self.zip.namelist() if not name.endswith("/"))

    def display(self, name: str) -> str:
        """Return how messages name a file: ``export.zip:member`` or ``folder/member``."""
        separator = ":" if self.zip is not None else "/"
        return f"{self.source.display.rstrip('/')}{separator}{name}"

    def read(self, name: str, problems: ProblemList) -> bytes | None:
        """Return a file's bytes, or None with the problem reported."""
        if self.zip is None:
            path = self.source.path / name
            if problem := path_problem(path, "file"):
                problems.add(f"{self.display(name)}: {'is a broken symlink' if problem == 'not found' else problem}")
                return None
            try:
                with open_regular(path) as handle:
                    size = os.fstat(handle.fileno()).st_size
                    data = handle.read(self.limit + 1) if size <= self.limit else b""
            except OSError as error:
                problems.add(f"{self.display(name)}: cannot read the file ({error.strerror})")
                return None
            if size > self.limit or len(data) > self.limit:  # a file growing while read
                problems.add(f"{self.display(name)}: {too_large(size if size > self.limit else None, self.limit)}")
                return None
            return data
        read = read_member(self.zip, name, self.limit)
        if isinstance(read, str):
            problems.add(f"{self.display(name)}: {read}")
            return None
        return read

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()
        if self.handle is not None:
            self.handle.close()


def macos_metadata(name: str) -> bool:
    """Whether a member is macOS bookkeeping a zip made on a Mac carries (``__MACOSX/``, ``._name``)."""
    return name.startswith("__MACOSX/") or "/__MACOSX/" in name or name.rsplit("/", 1)[-1].startswith("._")
