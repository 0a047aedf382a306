"""`refsens-report docs [TOPIC]`: the documentation that travels with the package.

A wheel carries the project's ``docs/*.md`` inside the package (pyproject.toml maps them to
``refsens_report/docs/``), so an installed tool never sends its user to a file they do not have: every help
text and message names a topic of this command (``refsens-report docs ci``) instead of a path in the checkout.
A checkout, and the editable install `make` uses, reads them from the top-level ``docs/`` folder.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata
from pathlib import Path

from refsens_report.errors import InputError

PACKAGE_DIR = Path(__file__).resolve().parent
DOCS_DIR = next(
    (folder for folder in (PACKAGE_DIR / "docs", PACKAGE_DIR.parent / "docs") if folder.is_dir()),
    PACKAGE_DIR / "docs",
)
# the project's addresses when the package metadata cannot be read (a checkout run with PYTHONPATH);
# pyproject.toml's [project.urls] is the source, and tests/test_packaging.py keeps the two equal
URLS = {
    "Homepage": "https://github.com/refsens-report/refsens-report",
    "Documentation": "https://github.com/refsens-report/refsens-report/tree/main/docs",
    "Issues": "https://github.com/refsens-report/refsens-report/issues",
    "Source": "https://github.com/refsens-report/refsens-report",
}


@lru_cache(maxsize=1)
def urls() -> dict[str, str]:
    """Return the project's URLs as the installed package's metadata gives them (else ``URLS``)."""
    try:
        entries = metadata.metadata("refsens-report").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return dict(URLS)
    found = dict(entry.split(", ", 1) for entry in entries if ", " in entry)
    return found or dict(URLS)


def say(topic: str) -> str:
    """Return how a help text names a topic: the command that prints it."""
    return f"refsens-report docs {topic}"


def topics() -> dict[str, str]:
    """Return each topic (a docs file's stem) and its title (the file's first heading), in name order."""
    found = {}
    for path in sorted(DOCS_DIR.glob("*.md")):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        found[path.stem] = first.lstrip("# ").strip()
    return found


def path_of(topic: str) -> Path:
    """Return the file of a topic (``ci``, ``ci.md`` or ``docs/ci.md``); an unknown topic lists the known ones."""
    stem = Path(topic).name.removesuffix(".md")
    path = DOCS_DIR / f"{stem}.md"
    if not stem or not path.is_file():
        known = ", ".join(topics()) or "none (the installation is incomplete; reinstall refsens-report)"
        raise InputError(f"docs: no topic {topic!r}; the topics are: {known}")
    return path


def listing() -> str:
    """Return the list of topics printed by a bare `refsens-report docs`."""
    found = topics()
    width = max(map(len, found), default=0)
    lines = ["Documentation topics (refsens-report docs TOPIC prints one; --path gives its file):", ""]
    lines += [f"  {topic:<{width}}  {title}" for topic, title in found.items()]
    lines += ["", f"Online: {urls().get('Documentation', URLS['Documentation'])}"]
    return "\n".join(lines)
