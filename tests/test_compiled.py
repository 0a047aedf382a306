"""A library's compiled module loaded without its package (compiled.py): the same functions, the same results."""

from __future__ import annotations

import subprocess
import sys

import pytest

ASSIGNMENT = """
import sys
import numpy as np
from refsens_report.compiled import compiled_module

lsap = compiled_module("scipy.optimize._lsap").linear_sum_assignment
assert "scipy.optimize" not in sys.modules, "the package was imported"
rng = np.random.default_rng(7)
matrices = [
    np.zeros((3, 3)),  # every assignment ties
    np.full((2, 4), -1.5),  # ties, rectangular
    -rng.integers(0, 3, size=(5, 3)).astype(float),  # ties, more rows than columns
    rng.normal(size=(6, 6)),
    -rng.random((4, 7)) * 2,  # gains: aligning beats leaving alone
    np.array([[0.0, -0.25], [-0.25, 0.0]]),
    np.zeros((0, 0)),
]
found = [lsap(matrix) for matrix in matrices]
import scipy.optimize

assert scipy.optimize.linear_sum_assignment is lsap, "a second copy of the function"
for matrix, (rows, columns) in zip(matrices, found):
    expected_rows, expected_columns = scipy.optimize.linear_sum_assignment(matrix.copy())
    assert np.array_equal(rows, expected_rows) and np.array_equal(columns, expected_columns)
    assert matrix[rows, columns].sum() == matrix[expected_rows, expected_columns].sum()
"""

PACKAGE_FIRST = """
import sys
import scipy.sparse
from refsens_report.compiled import compiled_module

traversal = compiled_module("scipy.sparse.csgraph._traversal")  # starts by importing scipy.sparse.csgraph
import scipy.sparse.csgraph

assert sys.modules["scipy.sparse.csgraph._traversal"] is traversal
assert traversal.connected_components is scipy.sparse.csgraph.connected_components
n, labels = traversal.connected_components(scipy.sparse.csr_matrix([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
assert n == 2 and labels.tolist() == [0, 0, 1]
"""


def test_the_assignment_loaded_alone_is_scipy_s_own_function():
    """Loaded from its file in a fresh interpreter, without importing scipy.optimize, ``_lsap`` gives the same
    assignments on ties and rectangular matrices, and a later import of scipy.optimize reuses it."""
    subprocess.run([sys.executable, "-c", ASSIGNMENT], check=True)


def test_a_module_that_imports_its_package_as_it_starts_is_imported_as_usual():
    """A Cython module imports its package when it starts: loaded alone it cannot be, so it is imported as usual
    (the package included) and works; nothing half-loaded is left in ``sys.modules``."""
    subprocess.run([sys.executable, "-c", PACKAGE_FIRST], check=True)


FALLBACK = """
import scipy.optimize
from refsens_report.compiled import compiled_function

gone = compiled_function("scipy.optimize._gone", "linear_sum_assignment", "scipy.optimize")
assert gone is scipy.optimize.linear_sum_assignment
moved = compiled_function("scipy.optimize._lsap", "minimize", "scipy.optimize")  # not in that module
assert moved is scipy.optimize.minimize
"""


def test_a_private_module_gone_from_the_library_falls_back_to_the_public_function():
    """A release that renames the compiled module, or moves the function out of it, costs the import, not the
    audit: the function comes from the package that exports it."""
    subprocess.run([sys.executable, "-c", FALLBACK], check=True)


NOWHERE_TO_CACHE = """
import numpy as np
import numba.core.caching
from refsens_report.compiled import jitted

numba.core.caching.CacheImpl._locator_classes = []  # no place to write the cache (a read-only install, no home)


def twice(values):
    total = 0.0
    for value in values:
        total += 2 * value
    return total


compiled = jitted(twice)
assert compiled is not None and compiled(np.arange(4.0)) == 12.0
"""


def test_a_function_compiles_without_a_place_to_cache_it_and_says_nothing():
    """Where numba finds nowhere to write its cache, the function is compiled anyway, with no warning printed."""
    pytest.importorskip("numba")
    out = subprocess.run([sys.executable, "-c", NOWHERE_TO_CACHE], check=True, capture_output=True, text=True)
    assert out.stderr == ""
