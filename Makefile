# Two commands a new user needs: `make report` (build the demo datasheet) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?=
OUT ?= site
DEMO := out/demo

.PHONY: report test install bench clean browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

report: $(STAMP)
ifeq ($(CONFIG),)
	$(BIN)/refsens-report simulate $(DEMO) --seed 0
	$(BIN)/refsens-report build $(DEMO)/refsens.toml --out $(OUT) --force
else
	$(BIN)/refsens-report build $(CONFIG) --out $(OUT)
endif

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/bench_audit.py

clean:
	rm -rf $(VENV) out
