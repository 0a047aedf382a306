"""The package as a user installs it: every subpackage listed for the wheel, the Methods text in sync."""

from __future__ import annotations

import re
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


def test_every_example_folder_ships_its_config_without_a_setuptools_warning():
    """`refsens-report example NAME` reads examples/NAME/refsens.toml from the wheel. setuptools takes a folder
    whose name is an identifier for a package: unless it is listed, every install prints "Package would be
    ignored" for it (and a later setuptools may leave its files out)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "*/refsens.toml" in config["package-data"]["refsens_report.examples"]
    folders = [path.parent.name for path in (ROOT / "examples").glob("*/refsens.toml")]
    assert len(folders) >= 3, folders
    unlisted = {
        name for name in folders if name.isidentifier() and f"refsens_report.examples.{name}" not in config["packages"]
    }
    assert unlisted == set(), f"list these in pyproject.toml [tool.setuptools] packages: {sorted(unlisted)}"


def test_templates_are_mapped_into_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["refsens_report.templates"] == "templates"
    assert {"*.html", "*.css", "*.js"} <= set(config["package-data"]["refsens_report.templates"])
    assert (render.TEMPLATES_DIR / "appendix.html").is_file()
    assert all((render.TEMPLATES_DIR / name).is_file() for name in (*render.STYLESHEETS, *render.SCRIPTS))


def test_docs_methods_is_the_text_the_report_prints():
    """docs/methods.md is written from the package (python -m refsens_report.methods docs/methods.md)."""
    assert (ROOT / "docs" / "methods.md").read_text(encoding="utf-8") == docs_markdown()


def test_the_docs_ship_in_the_package_and_the_urls_are_named_once():
    """`refsens-report docs TOPIC` reads docs/*.md, which a wheel carries as refsens_report/docs/; the project's
    URLs are pyproject.toml's, with the same fallback in guide.py for a checkout."""
    from refsens_report import guide

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    config = pyproject["tool"]["setuptools"]
    assert "refsens_report.docs" in config["packages"] and config["package-dir"]["refsens_report.docs"] == "docs"
    assert config["package-data"]["refsens_report.docs"] == ["*.md"]
    assert set(guide.topics()) == {path.stem for path in (ROOT / "docs").glob("*.md")}
    assert guide.path_of("docs/ci.md") == guide.path_of("ci") == ROOT / "docs" / "ci.md"
    assert pyproject["project"]["urls"] == guide.URLS
    assert {"Homepage", "Documentation", "Issues", "Source"} <= set(guide.URLS)


def help_texts() -> dict[str, str]:
    """Return the top-level help and every command's, as printed."""
    from refsens_report import cli

    parser = cli._parser()
    texts = {"": parser.format_help()}
    for action in parser._subparsers._group_actions:  # the one subparsers action
        texts.update({name: sub.format_help() for name, sub in action.choices.items()})
    return texts


def test_no_help_text_names_a_file_the_user_does_not_have():
    """The installed tool has no checkout: its help points at `refsens-report docs TOPIC`, never docs/ or README."""
    from refsens_report import guide

    texts = help_texts()
    assert {"validate", "audit", "check", "build", "convert", "simulate", "docs"} <= set(texts)
    for command, text in texts.items():
        flat = " ".join(text.split())
        assert "docs/" not in flat and "README" not in flat and "docs.md" not in flat, (command, text)
        for topic in re.findall(r"refsens-report docs ([a-z]+)", flat):
            assert topic in guide.topics() or topic in ("prints", "the"), (command, topic)


def test_bare_command_prints_the_usage_and_every_command(capsys):
    from refsens_report.cli import main

    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: refsens-report")
    for command in ("validate", "audit", "check", "build", "convert", "simulate", "docs"):
        assert f"\n    {command} " in err, command
    assert "required: COMMAND" not in err


def test_docs_prints_a_topic_and_lists_the_topics(capsys):
    from refsens_report.cli import main

    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert "ci " in listing and "The release workflow" in listing
    assert main(["docs", "ci"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert main(["docs", "site", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(ROOT / "docs" / "site.md")
    assert main(["docs", "nothing"]) == 2
    assert "the topics are: adapters," in capsys.readouterr().err
