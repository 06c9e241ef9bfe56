# evaflow: `make run` runs the embedded offline benchmark, `make test` runs the checks.
# Both create a local virtual environment (.venv) from pyproject.toml on first use.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CORE := evaflow_core scenarios perturbations tasks flows analysis

.PHONY: install system-deps pipecat-env run quick test checks lint typecheck pytest bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@# Prefect's migrated database, copied into each new store (flows/prefect_db.py).
	$(PY) -m flows.prefect_db
	@touch $@

install: $(VENV)/.installed

# The Pipecat bot's own environment (pipecat-ai's soxr pin conflicts with evaflow's deps).
PIPECAT_VENV ?= .venv-pipecat
PIPECAT_REQS := tasks/systems/pipecat_bot/requirements.txt

$(PIPECAT_VENV)/.installed: $(PIPECAT_REQS)
	$(PYTHON) -m venv $(PIPECAT_VENV)
	$(PIPECAT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PIPECAT_VENV)/bin/python -m pip install --quiet -r $(PIPECAT_REQS)
	@touch $@

pipecat-env: $(PIPECAT_VENV)/.installed

# Headless Chromium renders the HTML report in one test; without it that test is skipped.
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (report rendering test)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "could not install chromium: the report rendering test will be skipped"; \
	  else echo "chromium not found: the report rendering test will be skipped"; fi; }

run: install
	$(VENV)/bin/evaflow run

quick: install
	$(VENV)/bin/evaflow run --quick

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy $(CORE)

# Two workers share the suite by test module (module fixtures run once; the longest start
# first: tests/conftest.py LONG_MODULES), then the `solo` tests run alone: the
# twelve-system rehearsal holds seven real-time calls at a time and needs both cores. Serially the suite kept 0.88 of the 2 cores busy on average.
PYTEST_WORKERS ?= 2
NOT_OPTIONAL := not slow and not live

pytest: install pipecat-env system-deps
	$(VENV)/bin/pytest -q --durations=25 -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder \
	  -m '$(NOT_OPTIONAL) and not solo'
	$(VENV)/bin/pytest -q --durations=5 -m '$(NOT_OPTIONAL) and solo'

# The two environments install side by side, and the checks start as soon as .venv is
# ready (measured on 2 cores: 62 + 28 s of installs and 38 s of mypy one after another);
# the suite starts after them, as its real-time calls need the cores.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target checks
	@$(MAKE) --no-print-directory pytest

checks: lint typecheck pipecat-env system-deps

bench: install
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) $(PIPECAT_VENV) evaflow-data .pytest_cache .mypy_cache .ruff_cache
