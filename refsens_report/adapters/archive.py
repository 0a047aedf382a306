"""A zip archive or the folder it unzips to, read file by file: the exports of annotation tools come either way."""

from __future__ import annotations

import zipfile
import zlib
from typing import BinaryIO

from refsens_report.adapters.common import InputPath
from refsens_report.errors import InputError, ProblemList
from refsens_report.files import open_regular, path_problem, read_bytes


class Export:
    """The files of an export (a zip archive or a folder), by their path relative to it, in name order."""

    def __init__(self, source: InputPath):
        self.source = source
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
                return read_bytes(path)
            except OSError as error:
                problems.add(f"{self.display(name)}: cannot read the file ({error.strerror})")
                return None
        try:
            return self.zip.read(name)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as error:
            problems.add(f"{self.display(name)}: cannot read the archive member ({error})")
            return None

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()
        if self.handle is not None:
            self.handle.close()


def macos_metadata(name: str) -> bool:
    """Whether a member is macOS bookkeeping a zip made on a Mac carries (``__MACOSX/``, ``._name``)."""
    return name.startswith("__MACOSX/") or "/__MACOSX/" in name or name.rsplit("/", 1)[-1].startswith("._")
