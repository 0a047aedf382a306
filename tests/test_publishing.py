"""Publishing under stress (issue 13): nothing lost, nothing hung, nothing spoofed.

Real processes and real signals: builds run as `python -m refsens_report` in their own session and are
killed (SIGKILL, SIGTERM, SIGINT to the process group) at chosen moments; publishing is killed after each of
its file-system steps by a process that sends itself SIGKILL; two builds run at once; a write fails through
RLIMIT_FSIZE. The quick variants stub the audit and rendering (the orchestration is under test) by copying
the session's built version.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import SOURCE_DATE_EPOCH, Built
from refsens_report import site
from refsens_report.cli import main
from refsens_report.config import load_config, version_problem

ROOT = Path(__file__).resolve().parents[1]


# --- helpers -----------------------------------------------------------------------------------------


def snapshot(folder: Path, staging: bool = True) -> dict[str, tuple[bytes, int]]:
    """Every file under a folder (hidden ones too; staging folders' only with ``staging``) with its bytes and
    modification time."""
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and (staging or not path.relative_to(folder).parts[0].startswith(site.STAGING_PREFIX))
    }


def copy_site(built: Built, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    shutil.copytree(built.out, out)
    return out


def config_with_version(built: Built, tmp_path: Path, version: str) -> Path:
    """A copy of the hostile record's config (paths made absolute) naming another dataset version."""
    text = built.config_path.read_text(encoding="utf-8")
    old = load_config(built.config_path).version
    text = text.replace(f'version = "{old}"', f'version = "{version}"', 1)
    for name in ("record.jsonl", "datasheet.md"):
        text = text.replace(f'"{name}"', json.dumps(str(built.config_path.parent / name)))
    path = tmp_path / f"refsens-{version}.toml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path).version == version
    return path


def environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PYTHONPATH": str(ROOT), **extra}


def start_build(config: Path, out: Path, *more: str, **popen) -> subprocess.Popen:
    """Start `refsens-report build` in a session of its own (so its process group can be signalled)."""
    return subprocess.Popen(
        [sys.executable, "-m", "refsens_report", "build", str(config), "--out", str(out), *more],
        env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        **popen,
    )  # fmt: skip


def children() -> dict[int, list[int]]:
    """pid -> its children's pids, for every process (from /proc)."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":  # a zombie has exited already
                tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    tree, found, todo = children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pids: list[int]) -> list[int]:
    """The pids still running (zombies waiting to be reaped count as gone)."""
    running = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.append(pid)
    return running


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(pids)


def wait_for_workers(process: subprocess.Popen, stage: str, seconds: float = 60.0) -> list[int]:
    """Wait until the build has forked the workers of ``stage`` ("figures": the figure pool beside the
    typesetter; "pdf": the typesetter's run workers); return every descendant then."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        tree = children()
        direct = tree.get(process.pid, [])
        grandchildren = [pid for child in direct for pid in tree.get(child, [])]
        if (stage == "figures" and len(direct) >= 3) or (stage == "pdf" and len(grandchildren) >= 2):
            return descendants(process.pid)
        time.sleep(0.02)
    pytest.skip(f"the build never forked its {stage} workers (one core?)")


def staging_folders(out: Path) -> list[str]:
    return sorted(path.name for path in out.iterdir() if path.name.startswith(site.STAGING_PREFIX))


def index_versions(out: Path) -> list[str]:
    """The versions site/index.html lists, in its order; each must link to an existing appendix."""
    text = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="version" href="([^"]+)/index.html">', text)
    for name in links:
        assert (out / name / "index.html").is_file(), f"the index links to a missing {name}/"
    return links


def quick_render(config, folder, stages, **options):
    """Stands for render_version: the orchestration is under test, not the rendering."""
    (folder / "index.html").write_text("new", encoding="utf-8")
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


# --- item 3: audit --out never overwrites a published version -----------------------------------------


def test_audit_refuses_a_published_version_folder(built_site: Built, tmp_path: Path, capsys) -> None:
    out = copy_site(built_site, tmp_path)
    before = snapshot(out)
    code = main(["audit", str(built_site.config_path), "--out", str(out / built_site.version)])
    error = capsys.readouterr().err
    assert code == 2
    assert len(error.strip().splitlines()) == 1 and "published version" in error and "Traceback" not in error
    assert snapshot(out) == before
