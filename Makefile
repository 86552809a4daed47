# One command sets up and runs each job; the virtual environment is made on first use.
#   make demo       set up, then a short real DRGA run of LSTM+SA on SUBJ (about 7 min on 2 CPU cores with set-up)
#   make test       set up, then the linters (ruff, mypy, import-linter) and the test suite (what CI runs)
#   make lint       ruff, mypy (the types and protocols) and the import-linter contracts only
#   make docs       the documentation site with its API reference, strict (any warning fails), into site/
#   make test-slow  the slow tests too (and the Ray tests)
#   make test-ray   the Ray tests of drga sweep --executor ray: an embedded Ray and a two-node loopback cluster
#                   (2 to 4 min on this project's 2 loaded cores, so not part of make test; CI runs it: .ci/run)
#   make wheel-check  the wheel installed into a clean venv and used from an empty folder (run by make test)
#   make regression BASE=<rev> [HEAD=<rev>]  the regression fixture's runs at BASE and at HEAD (default: the working tree)
#                   on this machine, compared exactly: a refactor that moves a number is caught on any machine
#   make bench      baseline vs co-training throughput of every network, its measured floor and memory (docs/RESULTS.md)
#   make gpu-check  on a machine with a CUDA GPU (and a CUDA torch: TORCH_SPEC/TORCH_PIP): the GPU checks (docs/gpu.md)
#   make results    the 3-seed SUBJ and MR study in docs/RESULTS.md (about an hour on 2 cores)
#   make study      the reproduction study: every family, 3-10 seeds (hours; resumable)
#   make regime     the paper-regime study (docs/RESULTS.md; hours; resumable from committed result files)
#                   SEEDS="0 1 ... 9" SST_SEEDS="0 1 2 3 4": the issue's 10 seeds, SST-5 at 5
#   make variants   the variants beyond the paper on LSTM+SA (experiments/variants.sh; hours; resumable)
#   make families   the other attention families in the paper regime (experiments/families_regime.sh; resumable)

PYTHON ?= python3
VENV ?= .venv
# The CPU wheel; an unpinned torch would pull several GB of CUDA packages on a machine without one.
TORCH_SPEC ?= torch==2.13.0
# Extra pip options for the torch install only, e.g. TORCH_PIP="--index-url URL" for a CUDA build.
TORCH_PIP ?=
BIN := $(VENV)/bin
# The package and what it needs to run (demo, bench, studies); then the test tools and the hf, ray and tune
# extras (transformers, Ray, Optuna) on top, for make test: the demo's set-up does not wait for what only the
# tests use. Under CI=true a test whose extra is missing fails instead of skipping. The targets that run a study of
# experiments/ add the analysis extra (statsmodels, for the study tables' Holm correction).
STAMP := $(VENV)/.drga-installed
TEST_STAMP := $(VENV)/.drga-test-installed
ANALYSIS_STAMP := $(VENV)/.drga-analysis-installed
DOCS_STAMP := $(VENV)/.drga-docs-installed
TEST_WORKERS ?= logical

.PHONY: setup demo lint docs test test-slow test-ray regression wheel-check bench gpu-check results study regime variants families explain-tables translation nmt-tables clean

setup: $(TEST_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet $(TORCH_PIP) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# make docs needs the package and the docs extra only (mkdocstrings reads the source without importing it).
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,hf,docs,ray,tune,analysis]"
	touch $(TEST_STAMP)

$(ANALYSIS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[analysis]"
	touch $(ANALYSIS_STAMP)

demo: $(STAMP)
	$(BIN)/drga train --config demo --overwrite --no-progress

# ruff, then mypy and import-linter over the tree as it is (drga/agents, drga/baselines and drga/envs are links to the
# top-level folders; mypy's settings: [tool.mypy] in pyproject.toml; its cache stays in .mypy_cache/ between runs).
lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy --config-file pyproject.toml --cache-dir .mypy_cache
	$(BIN)/lint-imports --no-cache

# docs/ and the API reference generated from the docstrings (mkdocs.yml, docs-site/), in strict mode:
# a broken link or cross-reference, or a docstring griffe cannot parse, fails the build.
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict --quiet -f mkdocs.yml

# The docs (above); the wheel check (below); the regression fixture under another ATen kernel dispatch (as on another CPU),
# whose portable comparison must hold there too (tests/regression_runs.py); then the whole suite, last
# so that its summary closes the output. Both pytest runs spread the tests over TEST_WORKERS pytest-xdist workers
# (one per core by default; tests/conftest.py gives each worker its share of the cores; TEST_WORKERS=0: serially);
# the whole suite keeps each test file on one worker, so that a module fixture that trains runs once (not --dist
# loadgroup: pytest-xdist 3.8 cannot group under pytest 9.2's node ids, pytest-xdist issue 1386).
test: lint docs
	$(MAKE) wheel-check
	ATEN_CPU_CAPABILITY=default $(BIN)/python -m pytest -q -n $(TEST_WORKERS) tests/integration/test_regression.py
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The wheel as a user gets it: built, installed with torch first into a clean venv, then `drga --version`,
# `drga --help`, `drga demo` (shortened) and docs/notebook.md's example from an empty folder (tests/wheel_check.py).
wheel-check: $(TEST_STAMP)
	TORCH_SPEC="$(TORCH_SPEC)" TORCH_PIP="$(TORCH_PIP)" OMP_NUM_THREADS=1 $(BIN)/python -m tests.wheel_check

regression: $(TEST_STAMP)
	@test -n "$(BASE)" || { echo "usage: make regression BASE=<git revision> [HEAD=<git revision>]"; exit 2; }
	OMP_NUM_THREADS=1 $(BIN)/python -m tests.regression_runs --base $(BASE) $(if $(HEAD),--head $(HEAD))

test-slow: $(TEST_STAMP)
	$(BIN)/python -m pytest -m "slow or not slow"

test-ray: $(TEST_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -m ray

bench: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python bench/throughput.py --net all --train-fraction 0.25 --repeats 2 --clock cpu --samples 5 --floor --memory

gpu-check: $(TEST_STAMP)
	PYTHON=$(BIN)/python bash bench/gpu_check.sh

results: $(ANALYSIS_STAMP)
	$(BIN)/python experiments/lstm_sa_study.py

study: $(ANALYSIS_STAMP)
	PYTHON=$(BIN)/python bash experiments/reproduce.sh

regime: $(ANALYSIS_STAMP)
	PYTHON=$(BIN)/python bash experiments/paper_regime.sh $(SEEDS)

variants: $(ANALYSIS_STAMP)
	PYTHON=$(BIN)/python bash experiments/variants.sh $(VARIANTS)

families: $(ANALYSIS_STAMP)
	PYTHON=$(BIN)/python bash experiments/families_regime.sh $(SEEDS)

# docs/EXPLAINABILITY.md and docs/explainability/*.png from the committed per-run JSON (issue 41)
explain-tables: $(ANALYSIS_STAMP)
	$(BIN)/python experiments/explain_study.py tables

# the translation study (issue 39): its runs, and docs/results/nmt-regime.md from the committed result files
translation: $(ANALYSIS_STAMP)
	PYTHON=$(BIN)/python bash experiments/translation_regime.sh

nmt-tables: $(ANALYSIS_STAMP)
	$(BIN)/python experiments/translation_tables.py

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache site
