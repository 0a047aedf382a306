"""The config reads the adapters; the adapters never read the config (issue 10: no import circle)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import refsens_report

PACKAGE = Path(refsens_report.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at top level, inside functions or under TYPE_CHECKING."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_adapter_imports_the_config():
    for path in sorted((PACKAGE / "adapters").glob("*.py")):
        imported = imported_modules(path)
        assert not {name for name in imported if name.startswith("refsens_report.config")}, path.name


def test_the_option_reader_sits_below_the_config_and_the_adapters():
    for module in ("options.py", "errors.py", "record.py"):
        assert not {name for name in imported_modules(PACKAGE / module) if name.startswith(
            ("refsens_report.config", "refsens_report.adapters"))}, module  # fmt: skip


def test_the_config_imports_the_adapters_at_top_level():
    tree = ast.parse((PACKAGE / "config.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert "refsens_report.adapters" in top


def test_each_module_imports_on_its_own():
    """A fresh interpreter per entry point: a circle would fail whichever side is imported first."""
    for module in ("refsens_report.adapters", "refsens_report.adapters.brat", "refsens_report.config",
                   "refsens_report.options", "refsens_report.load"):  # fmt: skip
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
