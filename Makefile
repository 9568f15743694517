# dpcluster — `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SPEC   ?= configs/fig1-s1.yaml
JOBS   ?= 2
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba-cache

.PHONY: help setup test reproduce reproduce-all smoke bench clean

help:  ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

setup: $(VENV)/.installed  ## create .venv and install dpcluster with its test extras

test: setup  ## run the whole test suite
	$(PY) -m pytest -q

reproduce: setup  ## run one spec: make reproduce SPEC=configs/fig1-s1.yaml [JOBS=2]
	$(VENV)/bin/dpcluster run $(SPEC) --jobs $(JOBS)

reproduce-all: setup  ## run every figure spec (resumes finished cells)
	@for s in configs/fig*.yaml; do $(VENV)/bin/dpcluster run $$s --jobs $(JOBS) || exit $$?; done

smoke: setup  ## the small CI spec
	$(VENV)/bin/dpcluster run configs/smoke.yaml --jobs $(JOBS)

bench: setup  ## kernel benchmark table (ratios vs NumPy and scikit-learn)
	$(PY) scripts/bench_lloyd.py

clean:  ## remove the venv and caches (not results)
	rm -rf $(VENV) .numba-cache .pytest_cache
