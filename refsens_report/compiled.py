"""A library's compiled module, loaded without the package ``__init__`` that would import it.

``import scipy.optimize._lsap`` (the one compiled module behind ``linear_sum_assignment``) first runs
``scipy.optimize``'s ``__init__``, which imports linprog, ``scipy.linalg.interpolative`` and through it
``scipy.fft``, minimize, the docstring machinery...: about 0.1 s of a 25,000-item audit that calls the
assignment on a handful of small matrices (0.2 s under the profiler). A self-contained extension module (one
that imports nothing of its package when it starts) can be loaded from its file instead, as the import
system would load it: the same function, with the same results, registered under its own name so a later
``import`` of the package finds and reuses it.

``jitted`` compiles a plain Python function with numba when the optional extra ``fast`` is installed (None
without it: the caller keeps its numpy path), on first use, so an audit that never needs it never imports numba.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType
from typing import Any

_LOADING = threading.Lock()  # two threads asking at once load the module (or compile the function) once
_JITTED: dict[Callable[..., Any], Callable[..., Any] | None] = {}


def compiled_function(module: str, name: str, public: str) -> Any:
    """Return the function ``name`` of the compiled ``module``, loaded alone (``compiled_module``), or from the
    package ``public`` that exports it when that fails: a private module may be renamed or moved by a release of
    its library, and the audit must not depend on it."""
    try:
        return getattr(compiled_module(module), name)
    except (ImportError, AttributeError):
        return getattr(importlib.import_module(public), name)


def compiled_module(name: str) -> ModuleType:
    """Return the extension module ``name`` (``"scipy.optimize._lsap"``), loaded from its file when its package
    is not imported yet; imported as usual when the package already is, when no such file is found, or when
    the module imports its own package as it starts."""
    with _LOADING:
        return sys.modules.get(name) or _load(name)


def _load(name: str) -> ModuleType:
    """Return the module, its package not imported (compiled_module)."""
    package, _, module = name.rpartition(".")
    if package in sys.modules:
        return importlib.import_module(name)
    parent, _, folder = package.rpartition(".")
    for location in importlib.import_module(parent).__path__:
        for suffix in EXTENSION_SUFFIXES:
            path = Path(location, folder, module + suffix)
            if path.is_file():
                spec = importlib.util.spec_from_file_location(name, path)  # an ExtensionFileLoader, by the suffix
                loaded = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
                sys.modules[name] = loaded
                try:
                    spec.loader.exec_module(loaded)  # type: ignore[union-attr]
                except ImportError:  # it imports its package as it starts (a Cython module): imported as usual
                    del sys.modules[name]
                    return importlib.import_module(name)
                return loaded
    return importlib.import_module(name)


def jitted(function: Callable[..., Any]) -> Callable[..., Any] | None:
    """Return ``function`` compiled by numba, or None when numba is not installed (the extra ``fast``) or fails to
    import.

    Compiled in nopython mode without the global interpreter lock (``nogil``: threads run it side by side), with
    numpy's float semantics (``error_model="numpy"``: a division by zero gives inf or nan, as the numpy path's
    does, instead of raising) and no fast-math, so the same operations in the same order give the same floats.
    Each argument type signature compiles at its first call. The machine code is cached on disk where numba
    finds a writable place (the module's ``__pycache__``, else the user's cache directory, or
    ``NUMBA_CACHE_DIR``); where neither is writable (a read-only install, no home), it is compiled anew in each
    process, silently.
    """
    with _LOADING:
        if function not in _JITTED:
            _JITTED[function] = _jit(function)
        return _JITTED[function]


def _jit(function: Callable[..., Any]) -> Callable[..., Any] | None:
    """Return the numba dispatcher of ``function`` (jitted), None without numba."""
    try:
        import numba
    except Exception:  # not installed; or not importable here (a script's folder holding a coverage.py shadows
        return None  # the package numba imports, and numba fails with an AttributeError): the numpy path runs
    options = {"nopython": True, "nogil": True, "error_model": "numpy"}
    try:
        return numba.jit(cache=True, **options)(function)
    except RuntimeError:  # numba's "cannot cache function ...: no locator available": nowhere to write
        return numba.jit(**options)(function)
