# mnemonite — `make demo` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: install demo test lint format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# DEMO_DB may be a postgresql:// URL of a scratch database (its mnemonite tables are dropped first).
DEMO_DB ?= build/demo.db

demo: $(STAMP)
	$(VENV)/bin/mnemonite demo --db "$(DEMO_DB)" --fresh

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff check --fix src tests bench
	$(VENV)/bin/ruff format src tests bench

bench: $(STAMP)
	$(PY) bench/ingest.py
	$(PY) bench/locomo.py
	$(PY) bench/search_latency.py
	$(PY) bench/conflicts.py
	$(PY) bench/graph.py
	$(PY) bench/scale.py --sizes 100000

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache .hypothesis
