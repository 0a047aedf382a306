"""The package as a user installs it: every subpackage listed for the wheel, the Methods text in sync."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Mapping

from refsens_report import render
from refsens_report.methods import methods_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_for_the_wheel():
    """A subpackage missing from pyproject.toml installs a tool that fails with ModuleNotFoundError."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "refsens_report").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found, "no package found"
    assert found - listed == set(), f"not listed in pyproject.toml [tool.setuptools] packages: {found - listed}"
    assert "refsens_report.templates" in listed


def test_templates_are_mapped_into_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["refsens_report.templates"] == "templates"
    assert {"*.html", "*.css"} <= set(config["package-data"]["refsens_report.templates"])
    assert (render.TEMPLATES_DIR / "appendix.html").is_file()


def test_docs_methods_is_the_text_the_report_prints():
    """docs/methods.md is written from the package (python -m refsens_report.methods docs/methods.md)."""
    assert (ROOT / "docs" / "methods.md").read_text(encoding="utf-8") == methods_markdown()


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
