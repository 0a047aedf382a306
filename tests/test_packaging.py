"""The package as a user installs it: every subpackage listed for the wheel, the Methods text in sync."""

from __future__ import annotations

import tomllib
from pathlib import Path

from refsens_report import render
from refsens_report.methods import docs_markdown

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
    assert {"*.html", "*.css", "*.js"} <= set(config["package-data"]["refsens_report.templates"])
    assert (render.TEMPLATES_DIR / "appendix.html").is_file()
    assert all((render.TEMPLATES_DIR / name).is_file() for name in (*render.STYLESHEETS, *render.SCRIPTS))


def test_docs_methods_is_the_text_the_report_prints():
    """docs/methods.md is written from the package (python -m refsens_report.methods docs/methods.md)."""
    assert (ROOT / "docs" / "methods.md").read_text(encoding="utf-8") == docs_markdown()
