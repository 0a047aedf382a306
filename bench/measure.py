"""How the bench scripts measure a command line they run as a child process: its wall seconds, its CPU seconds
and its peak resident memory, each the child's own (``os.wait4`` reports what the child and the processes it
waited for used, not what this script or another child did).

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from measure import run_child  # noqa: E402
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Child:
    """What a child process cost: wall seconds, CPU seconds (user and system), peak resident MB; its exit code."""

    wall: float
    cpu: float
    peak_mb: float
    code: int


def run_child(
    command: Sequence[str], cwd: Path | None = None, env: Mapping[str, str] | None = None, check: bool = False
) -> Child:
    """Run a command line (its output discarded, its errors shown); return what it cost. A failure is said on
    stderr and, with ``check``, ends the script."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: Popen must not wait for it again
    if process.returncode:
        message = f"{' '.join(map(str, command))} exited {process.returncode}"
        if check:
            raise SystemExit(message)
        print(message, file=sys.stderr)
    return Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, process.returncode)
