# dpcluster — `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SPEC   ?= configs/fig1-s1.yaml
JOBS   ?= 2
# pytest worker processes for make test, make test-nojit and the slow tests (pytest-xdist;
# "auto": one per core); the slow tests marked serial run alone after them, their kill
# and signal timings want an idle core
TEST_JOBS ?= auto
# compiled kernels are cached once per user, for make, the CLI and Python alike
# ($DPCLUSTER_CACHE, default ~/.cache/dpcluster: dpcluster/cache.py)

.PHONY: help setup setup-test test test-slow test-nojit coverage mutation mutation-kernels lint docs reference reproduce reproduce-all smoke bench audit clean

help:  ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

# running needs dpcluster and its dependencies only; the test, docs, Dask and comparison
# extras install with the targets that use them
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

setup: $(VENV)/.installed  ## create .venv and install dpcluster (what running needs)

setup-test: $(VENV)/.installed-test  ## also install the test extras (pytest, hypothesis, ruff, Dask)

test: setup-test  ## lint, then the test suite (all but the tests marked slow: make test-slow)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -q -m "not slow" -n $(TEST_JOBS)

test-slow: setup-test  ## the slow tests: the audit's planted bugs, random budgets, the larger generated-kernel shapes; then kill -9 resume, signals, Dask processes alone
	$(PY) -m pytest -q -m "slow and not serial" -n $(TEST_JOBS)
	$(PY) -m pytest -q -m "slow and serial"

test-nojit: setup-test  ## the kernel oracle tests once more with the JIT off (kernels run as Python)
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -m kernel -p no:cacheprovider -n $(TEST_JOBS) \
	    -W "ignore:overflow encountered in scalar multiply:RuntimeWarning"

# The signal tests are left out under the tracer: a signal sent once the first cell is
# written can reach a traced run after its last cell (make test-slow runs them).
coverage: setup-test  ## line coverage: the suite, plus the kernel tests with the JIT off (docs/testing.md)
	rm -f .coverage .coverage.*
	$(PY) -m pytest -q --cov --cov-report= -p no:cacheprovider -k "not signal_exits"
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -m kernel --cov --cov-append --cov-report= \
	    -p no:cacheprovider -W "ignore:overflow encountered in scalar multiply:RuntimeWarning"
	$(PY) -m coverage combine -q 2>/dev/null || true
	$(PY) -m coverage report --sort=cover

mutation: setup-test  ## mutation score of the privacy-critical modules (mutmut; slow, outside CI)
	$(PY) -m pip install --quiet -e '.[mutation]'
	$(PY) scripts/mutation.py

mutation-kernels: setup-test  ## hand-written mutants of the generated kernels and their certificate (scripts/mutate_kernels.py)
	$(PY) scripts/mutate_kernels.py --jobs $(JOBS)

docs: setup  ## build the documentation site into site/ (mkdocs, strict)
	$(PY) -m pip install --quiet 'mkdocs>=1.5'
	$(PY) -m mkdocs build --strict --quiet

lint: setup-test  ## ruff check only
	$(PY) -m ruff check .

reproduce: setup  ## run one spec: make reproduce SPEC=configs/fig1-s1.yaml [JOBS=2]
	$(VENV)/bin/dpcluster run $(SPEC) --jobs $(JOBS)

ALL_SPECS := $(wildcard configs/fig[0-9].yaml) configs/numeric-checks.yaml $(wildcard configs/b-*.yaml) configs/ldp-modern.yaml

reproduce-all: setup  ## run fig1..fig7, b-* and ldp-modern in one pool (resumes finished cells), then results/REPORT.md
	$(VENV)/bin/dpcluster run $(ALL_SPECS) --jobs $(JOBS)
	$(VENV)/bin/dpcluster report

smoke: setup  ## the small CI specs: smoke.yaml and the reduced twin of every figure
	$(VENV)/bin/dpcluster run configs/smoke.yaml $(wildcard configs/smoke-*.yaml) --jobs $(JOBS) --quiet

bench: setup  ## benchmark tables: DPLloyd vs NumPy/scikit-learn, every algorithm and DPBV vs naive NumPy
	$(PY) scripts/bench_lloyd.py
	$(PY) scripts/bench_algorithms.py
	$(PY) scripts/bench_dpbv.py
	$(PY) scripts/bench_audit.py
	$(PY) scripts/bench_backends.py

audit: setup  ## privacy audit (statistical, then replay) of every private algorithm at eps 0.5, 1, 2 -> results/audit (fails only on a violated provable eps)
	$(VENV)/bin/dpcluster audit --jobs $(JOBS) --out results/audit || [ $$? -eq 3 ]
	$(VENV)/bin/dpcluster audit --replay --jobs $(JOBS) --out results/audit || [ $$? -eq 3 ]

reference: setup  ## copy the last reproduce-all (tables, figures, REPORT.md, audit) into docs/results/
	$(PY) scripts/make_reference.py

clean:  ## remove the venv and caches (not results)
	rm -rf $(VENV) .numba-cache .pytest_cache
