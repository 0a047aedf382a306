# Two commands a new user needs: `make report` (build the demo datasheet) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?=
OUT ?= site
DEMO := out/demo
# The demo's one build timestamp (2026-11-30 UTC): simulate rewrites its files, so their times would
# otherwise make every demo build differ. Your own builds take SOURCE_DATE_EPOCH or the inputs' times.
DEMO_EPOCH := 1795996800

REPORT_DEBS := fonts-noto-core fonts-noto-cjk
TEST_DEBS := $(REPORT_DEBS) chromium poppler-utils
# pdfLaTeX with booktabs and longtable: the LaTeX table downloads are typeset in a test (skipped without it).
# Without recommends: 16 packages, 144 MB installed (with them, 34 packages and 313 MB).
TEX_DEBS := texlive-latex-base texlive-latex-recommended

.PHONY: report check test lint format install bench clean report-debs test-debs wheel-check

# Debian packages: the Noto fonts (Devanagari, Arabic, CJK labels in the PDF), chromium (the browser
# test), poppler-utils (pdftoppm: the PDF test reads pages back as pixels) and TeX Live (the LaTeX test).
# Installed when missing and we are root with apt-get; otherwise a warning says what to install.
# $(2): more apt-get options (TeX Live without its recommends).
define ensure_debs
	@missing=$$(for package in $(1); do dpkg -s $$package >/dev/null 2>&1 || echo $$package; done); \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:" $$missing; \
	    apt-get update -qq && apt-get install -y -qq $(2) $$missing >/dev/null; \
	  else \
	    echo "warning: install these Debian packages for a complete build:" $$missing; \
	  fi; \
	fi
endef

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

install: $(STAMP)

report-debs:
	$(call ensure_debs,$(REPORT_DEBS))

test-debs:
	$(call ensure_debs,$(TEST_DEBS))
	$(call ensure_debs,$(TEX_DEBS),--no-install-recommends)

report: $(STAMP) report-debs
ifeq ($(CONFIG),)
	$(BIN)/refsens-report simulate $(DEMO) --seed 0
	SOURCE_DATE_EPOCH=$(DEMO_EPOCH) $(BIN)/refsens-report build $(DEMO)/refsens.toml --out $(OUT) --force
else
	$(BIN)/refsens-report build $(CONFIG) --out $(OUT)
endif

# The release gate (docs/ci.md): exit 1 when a [check] threshold fails, a JUnit report in out/check.xml. Without
# CONFIG: the demo record with the fixed (neutral) aggregation rule, against examples/release-checks.toml, which
# it passes; the demo `make report` builds (the silent default) fails the same thresholds, as it should.
check: $(STAMP)
ifeq ($(CONFIG),)
	$(BIN)/refsens-report simulate $(DEMO)-neutral --seed 0 --neutral
	cat examples/release-checks.toml >> $(DEMO)-neutral/refsens.toml
	$(BIN)/refsens-report check $(DEMO)-neutral/refsens.toml --junit out/check.xml
else
	$(BIN)/refsens-report check $(CONFIG) --junit out/check.xml
endif

# The tests start with the linter and the formatter (ruff, pyproject.toml's [tool.ruff]): `make format` rewrites.
test: $(STAMP) test-debs lint
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# What a user gets from `pip install .`: a wheel in a fresh virtual environment, run from a temporary folder.
wheel-check: $(STAMP) report-debs
	PYTHON=$(BIN)/python bash .ci/wheel-check

bench: $(STAMP) report-debs
	$(BIN)/python bench/bench_audit.py
	$(BIN)/python bench/bench_leaderboard.py
	$(BIN)/python bench/bench_report.py

clean:
	rm -rf $(VENV) out
