"""What the repository cites is in the repository: every docs/ page named exists, and no definition is cited
from a file beside it (the brief the method started from, the paper's folder) that a contributor who clones
it cannot read. Citations of docs/method.md name sections it has, and of docs/methods.md choices it has.
"""

from __future__ import annotations

import re
from pathlib import Path

from refsens_report.methods import methods_markdown

ROOT = Path(__file__).resolve().parent.parent
# the project's own text files: code, tests, docs, benchmarks, examples, templates, build and CI files
FOLDERS = (".ci", "bench", "docs", "examples", "refsens_report", "site", "templates", "tests")
TOP_FILES = ("Makefile", "README.md", "pyproject.toml")
SUFFIXES = {".py", ".md", ".html", ".toml", ".css", ".txt", ".cfg", ".yml", ".yaml", ""}
# files beside the repository, never in it (spelled in pieces so that this file does not cite them either)
OUTSIDE = ("METHOD" + ".md", "PRODUCT" + ".md", "STYLE" + ".md")
# the shared folder beside the project: only its data may be read (tests and examples skip when it is absent)
SHARED = re.compile(r"""shared/(?!data\b)|["']shared["']\s*/\s*["'](?!data["'])""")
SEEDS = re.compile(r"(?<![\w-])seeds/")  # the folder holding the paper
DOCS_PAGE = re.compile(r"\bdocs/[\w.-]+?\.md\b")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+\.md)(?:#[^)]*)?\)")
# "docs/method.md section 3", "docs/method.md sections 3 and 5", "[docs/method.md](method.md) (sections 3 to 5)"
METHOD_SECTION = re.compile(
    r"docs/method\.md(?:\]\([^)]*\))?'?s?,?\s+\(?sections?\s+(\d+)(?:\s*(?:to|and|-|–|,)\s*(\d+))?"
)
METHODS_CHOICE = re.compile(r"docs/methods\.md,\s+choices?\s+(\d+)")


def text_files() -> list[Path]:
    """Return the repository's text files (not the virtual environment, build output or caches)."""
    found = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if path.is_file() and path.suffix in SUFFIXES and not parts & {"__pycache__", ".pytest_cache"}:
                if folder != "site" or path.name == "README.md":  # site/ is build output, but for its README
                    found.append(path)
    return found


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def method_sections() -> set[int]:
    """Return the section numbers of docs/method.md ("## 3. Statistics")."""
    return {int(number) for number in re.findall(r"^## (\d+)\. ", read(ROOT / "docs" / "method.md"), re.M)}


def test_nothing_cites_a_file_outside_the_repository():
    files = text_files()
    assert len(files) > 100 and ROOT / "refsens_report" / "methods.py" in files, "the walk found the repository"
    found = []
    for path in files:
        if path == Path(__file__).resolve():  # this file spells the patterns it looks for
            continue
        text = read(path)
        where = path.relative_to(ROOT)
        found += [f"{where}: {name}" for name in OUTSIDE if name in text]
        found += [f"{where}: {match.group(0)!r}" for match in SHARED.finditer(text)]
        found += [f"{where}: {match.group(0)!r}" for match in SEEDS.finditer(text)]
    assert found == [], "cites a file outside the repository:\n" + "\n".join(found)


def test_every_docs_page_cited_exists():
    missing = []
    for path in text_files():
        text = read(path)
        for name in set(DOCS_PAGE.findall(text)):
            if not (ROOT / name).is_file():
                missing.append(f"{path.relative_to(ROOT)}: {name}")
        if path.suffix == ".md":  # relative Markdown links between pages
            for target in set(MARKDOWN_LINK.findall(text)):
                if "://" not in target and not (path.parent / target).is_file():
                    missing.append(f"{path.relative_to(ROOT)}: ({target})")
    assert missing == [], "cites a page the repository does not have:\n" + "\n".join(missing)


def test_method_sections_cited_exist():
    sections = method_sections()
    assert sections == set(range(1, len(sections) + 1)) and len(sections) >= 7, sections
    cited, unknown = 0, []
    for path in text_files():
        for match in METHOD_SECTION.finditer(read(path)):
            numbers = [int(number) for number in match.groups() if number]
            cited += 1
            unknown += [f"{path.relative_to(ROOT)}: section {number}" for number in numbers if number not in sections]
    assert cited > 30, f"found {cited} citations of docs/method.md sections: the pattern no longer reads them"
    assert unknown == [], "cites a section docs/method.md does not have:\n" + "\n".join(unknown)


def test_methods_choices_cited_exist():
    """ "docs/methods.md, choice N" names a choice of the generated Methods text."""
    choices = {int(number) for number in re.findall(r"^(\d+)\. \*\*", methods_markdown(), re.M)}
    unknown = [
        f"{path.relative_to(ROOT)}: choice {match.group(1)}"
        for path in text_files()
        for match in METHODS_CHOICE.finditer(read(path))
        if int(match.group(1)) not in choices
    ]
    assert unknown == [], "cites a choice docs/methods.md does not have:\n" + "\n".join(unknown)


def test_method_and_methods_say_which_is_which():
    """The definitions for contributors (method.md) and the appendix's Methods text (methods.md) name each other."""
    method = read(ROOT / "docs" / "method.md")
    methods = read(ROOT / "docs" / "methods.md")
    assert "[docs/methods.md](methods.md)" in method.split("## 1.")[0]
    assert "[docs/method.md](method.md)" in methods[:1000] and "generated" in methods[:1000]
    assert "docs/method.md" in read(ROOT / "README.md")
