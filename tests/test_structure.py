"""The package's structure: no import circles, nothing reaches into the orchestrators, and the layers hold.

The config reads the adapters, the adapters never read the config; the analyses sit below the audit and the
site; every import counts (top level, inside functions, under TYPE_CHECKING).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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
                cycles.append(" -> ".join(path[path.index(imported) :] + [imported]))
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
        assert not {
            name for name in imported if name.startswith(("refsens_report.config", "refsens_report.adapters"))
        }, module


def test_the_config_imports_the_adapters_at_top_level():
    tree = ast.parse((ROOT / "refsens_report" / "config.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert "refsens_report.adapters" in top


def test_each_module_imports_on_its_own():
    """A fresh interpreter per entry point: a circle would fail whichever side is imported first."""
    for module in (
        "refsens_report.adapters",
        "refsens_report.adapters.brat",
        "refsens_report.config",
        "refsens_report.options",
        "refsens_report.load",
        "refsens_report.analyses.leaderboard",
        "refsens_report.estimator",
        "refsens_report.render",
    ):
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)


def test_the_audit_does_not_import_matplotlib():
    """The analyses hold their figures, but drawing imports matplotlib only when a figure is drawn."""
    code = "import sys, refsens_report.audit; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_audit_and_the_build_do_not_import_pandas():
    """pandas serves the DataFrame view of results (frame.py) only: importing it costs every build ~0.5 s."""
    modules = "refsens_report.cli, refsens_report.audit, refsens_report.render, refsens_report.site, refsens_report.pdf"
    code = f"import sys, {modules}; assert 'pandas' not in sys.modules, 'pandas imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_audit_imports_dask_only_when_configured():
    """distributed is an optional extra (pip install 'refsens-report[dask]'): the local engine never imports it."""
    code = "import sys, refsens_report.audit; assert 'distributed' not in sys.modules, 'distributed imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the analysis contract: the core looks analyses up by name, through the registry ---------------------------

# The core: every module the analyses plug into. None names an analysis (a string equal to an analysis's key or
# module) or imports an analysis module other than the registry and base.py: each looks what it needs up through
# the registry, in what the analyses declare (docs/architecture.md, "An analysis").
CONTRACT_CORE = (
    "audit",
    "bootstrap",
    "formatting",
    "summary",
    "check",
    "changes",
    "metadata",
    "render",
    "site",
    "counts",
    "load",
    "estimator",
    "formulas",
    "results",
    "tables",
    "latex",
    "config",
    "threads",
)
# What is still named, and why it is not moved (each entry must still be needed: the test says when one is not).
STILL_NAMED = {
    # the random streams' spawn keys (bootstrap.SUBSET_STREAMS) are keyed by item set: "decontaminated" is the
    # item set (subsets.py), named like its analysis; renaming a key would move every interval, and bootstrap.py
    # is being reworked in parallel (the engine and counts speed work)
    "bootstrap": {"decontaminated"},
}
STILL_IMPORTED: dict[str, set[str]] = {}
HELPERS = {"__init__", "base", "registry", "pairs"}  # analyses/ modules that are no analysis


def _analysis_names() -> set[str]:
    from refsens_report.analyses.registry import ANALYSES

    return {analysis.key for analysis in ANALYSES} | {
        path.stem for path in (ROOT / "refsens_report" / "analyses").glob("*.py")
    } - HELPERS


def _named_and_imported(name: str, names: set[str], modules: dict) -> tuple[set[str], set[str]]:
    path = modules[f"refsens_report.{name}"]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    imported = {
        module.rsplit(".", 1)[-1] for module in _imports(path, modules) if module.startswith("refsens_report.analyses.")
    }
    return strings & names, imported - {"registry", "base"}


def test_the_contract_core_names_no_analysis():
    names = _analysis_names()
    modules = _modules()
    assert {"gamma", "leaderboard", "swap", "band", "range", "score_range"} <= names  # keys and module names
    for name in CONTRACT_CORE:
        named, imported = _named_and_imported(name, names, modules)
        assert named <= STILL_NAMED.get(name, set()), f"{name}.py names {sorted(named)}"
        assert imported <= STILL_IMPORTED.get(name, set()), f"{name}.py imports {sorted(imported)}"


def test_what_the_core_still_names_is_still_there():
    """An entry of STILL_NAMED or STILL_IMPORTED that is no longer needed is removed, so the list only shrinks."""
    names = _analysis_names()
    modules = _modules()
    for name in set(STILL_NAMED) | set(STILL_IMPORTED):
        named, imported = _named_and_imported(name, names, modules)
        assert STILL_NAMED.get(name, set()) <= named, f"{name}.py no longer names {STILL_NAMED[name] - named}"
        assert STILL_IMPORTED.get(name, set()) <= imported, (
            f"{name}.py no longer imports {STILL_IMPORTED[name] - imported}"
        )


def test_the_core_finds_a_new_analysis_s_declarations_through_the_registry(monkeypatch):
    """A release check, a metadata sentence and an index column declared by an analysis the core has never heard
    of are read, validated and printed: nothing but the registry had to change."""
    from dataclasses import replace

    from refsens_report import check, config, metadata, render
    from refsens_report.analyses import registry
    from refsens_report.analyses.base import (
        Analysis,
        IndexColumn,
        MetadataSentences,
        ReleaseCheck,
        Section,
        pooled_rows,
    )
    from refsens_report.view import ResultsView

    novel = Analysis(
        key="novel",
        title="Novel",
        question="?",
        section=lambda view, drawn: Section("novel", 0, "Novel"),
        checks=(
            ReleaseCheck(
                "max_novelty",
                "max",
                pooled_rows("novel", "novelty", main_rule=False),
                absent="the results hold no novelty",
                interval=False,
            ),
        ),
        metadata=(MetadataSentences("rai:dataLimitations", lambda view: ["Novelty was measured."]),),
        index_columns=(IndexColumn("Novelty", lambda view: "0.5", lambda view: "pooled"),),
    )
    monkeypatch.setattr(registry, "ANALYSES", (*registry.ANALYSES, novel))
    for module in (check, metadata, render):
        monkeypatch.setattr(module, "ANALYSES", registry.ANALYSES)
    monkeypatch.setitem(check.CHECKS, "max_novelty", ("novel", novel.checks[0]))
    row = {
        "analysis": "novel",
        "statistic": "novelty",
        "rule": "",
        "language": "pooled",
        "policy": "",
        "subset": "audited",
        "n_items": 10,
        "output": "",
        "output_2": "",
        "reference": "",
        "reference_2": "",
        "type": "",
        "estimate": 0.5,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "p_holm": None,
    }
    view = ResultsView.from_json(
        {
            "config": {
                "roles": {"annotators": [], "outputs": ["o"], "references": ["r"]},
                "audit": {"rules": ["strict"]},
            },
            "rows": [row],
            "applicability": {},
        }
    )
    outcome = check.evaluate(config.Check("max_novelty", 1.0), view)
    assert outcome.status == check.PASS and "0.5" in outcome.line()
    bad = replace(
        config.Config(
            path=ROOT / "refsens.toml",
            name="n",
            version="1",
            record_format="jsonl",
            record_options=None,
            roles=config.Roles((), ("o",), ("r",)),
        ),
        raw={"check": {"max_novelty": -1}},
        checks=(config.Check("max_novelty", -1.0),),
    )
    assert check.declared_problems(bad) == ["Config value 'check.max_novelty': must be 0 or more, got -1"]
    assert "Novelty was measured." in metadata.rai_fields(view)["rai:dataLimitations"]
    assert ("Novelty", "0.5", "pooled") in [
        (cell.heading, cell.value, cell.detail) for cell in render.version_figures(view)
    ]


def test_an_analysis_added_by_the_contract_is_named_only_in_its_module_and_the_registry():
    """alpha and gamma were added as one module and one registry entry each: no other module names them (alpha
    by its words, since "alpha" is also the significance level's name)."""
    words = {"gamma": ("gamma",), "alpha": ("krippendorff", "alpha_", "alpha.analysis", "analyses.alpha", "    alpha,")}
    for added, said in words.items():
        naming = sorted(
            path.relative_to(ROOT).as_posix()
            for path in (ROOT / "refsens_report").rglob("*.py")
            if any(word in path.read_text(encoding="utf-8").lower() for word in said)
        )
        assert naming == sorted([f"refsens_report/analyses/{added}.py", "refsens_report/analyses/registry.py"]), naming


def test_the_listing_pages_come_from_their_analyses():
    """The disagreement and gold-error pages and their browser's data come through ``Analysis.pages``, and their
    downloads through ``Analysis.downloads``: render.py, browser.py and site.py name neither analysis."""
    modules = _modules()
    listing = {"refsens_report.analyses.disagreements", "refsens_report.analyses.gold_errors"}
    for name in ("render", "browser", "site"):
        assert not _imports(ROOT / "refsens_report" / f"{name}.py", modules) & listing, name
