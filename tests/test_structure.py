"""The package's structure: no import circles, nothing reaches into the orchestrators, and the layers hold.

The config reads the adapters, the adapters never read the config; the analyses sit below the audit and the
site; every import counts (top level, inside functions, under TYPE_CHECKING).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    """Return every module of the package by dotted name (a package by its own name)."""
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in (ROOT / "refsens_report").rglob("*.py")
    }


def _imports(path: Path, modules: Mapping[str, Path]) -> set[str]:
    """Return the package's modules a file imports anywhere (top level, in functions, under TYPE_CHECKING).

    ``from package import module`` is an import of that module (as import-linter counts it); the package's own
    ``__init__`` runs first, which is why the registries are not in the packages' ``__init__``.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path}: relative import (the package imports absolutely)"
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module or "")
    return found & set(modules)


def test_the_package_has_no_import_cycles():
    """No module imports, even lazily or for type checking, a module that imports it back (directly or not)."""
    modules = _modules()
    graph = {module: sorted(_imports(path, modules) - {module}) for module, path in modules.items()}
    assert len(graph) > 20 and graph["refsens_report.audit"], "the walk found no imports"
    cycles = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in graph[module]:
            if state.get(imported) == 1:
                cycles.append(" -> ".join(path[path.index(imported):] + [imported]))
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_nothing_imports_the_orchestrators():
    """audit.py and site.py sit on top: the analyses and the machinery below never reach back into them."""
    modules = _modules()
    for path in modules.values():
        if path.name in ("cli.py", "site.py", "audit.py", "__main__.py"):
            continue
        imported = _imports(path, modules)
        assert "refsens_report.audit" not in imported, path
        assert "refsens_report.site" not in imported, path


def test_no_adapter_imports_the_config():
    modules = _modules()
    for path in sorted((ROOT / "refsens_report" / "adapters").glob("*.py")):
        assert not {name for name in _imports(path, modules) if name.startswith("refsens_report.config")}, path.name


def test_the_option_reader_sits_below_the_config_and_the_adapters():
    modules = _modules()
    for module in ("options.py", "errors.py", "record.py"):
        imported = _imports(ROOT / "refsens_report" / module, modules)
        assert not {name for name in imported if name.startswith(("refsens_report.config", "refsens_report.adapters"))}, module


def test_the_config_imports_the_adapters_at_top_level():
    tree = ast.parse((ROOT / "refsens_report" / "config.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert "refsens_report.adapters" in top


def test_each_module_imports_on_its_own():
    """A fresh interpreter per entry point: a circle would fail whichever side is imported first."""
    for module in ("refsens_report.adapters", "refsens_report.adapters.brat", "refsens_report.config",
                   "refsens_report.options", "refsens_report.load", "refsens_report.analyses.leaderboard",
                   "refsens_report.estimator", "refsens_report.render"):  # fmt: skip
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)


def test_the_audit_does_not_import_matplotlib():
    """The analyses hold their figures, but drawing imports matplotlib only when a figure is drawn."""
    code = "import sys, refsens_report.audit; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_audit_imports_dask_only_when_configured():
    """distributed is an optional extra (pip install 'refsens-report[dask]'): the local engine never imports it."""
    code = "import sys, refsens_report.audit; assert 'distributed' not in sys.modules, 'distributed imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
