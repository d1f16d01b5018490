# The two commands a newcomer needs:  make run   and   make test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_DIR ?= runs/latest
SUITE_DIR ?= runs/suite
REPAIR_DIR ?= runs/repair
PANEL := reference/textbook,reference/naive,reference/cumulative,reference/wrong-term,reference/naive-se,reference/fragile,reference/mute,reference/prose
LABELLERS := reference/textbook,reference/naive,reference/cumulative,reference/wrong-term

.PHONY: setup system test-system run test test-fast lint typecheck unit clean

setup: system $(VENV)/.installed
	@$(BIN)/causalverify r-packages install --recommended --if-reachable --connect-timeout 5

system:
	@bash scripts/install-system.sh

# the tests also drive the report in Debian's headless Chromium
test-system:
	@bash scripts/install-system.sh --tests

# The lock pins every package (uv among them). pip installs uv, and uv installs the lock without
# resolving (`uv pip check` then confirms nothing is missing), downloading in parallel and
# byte-compiling on every CPU: from a fresh clone, 21 s against 42 s for pip with compileall.
UV := $(BIN)/uv pip
UV_ARGS := --quiet --python $(BIN)/python --no-deps
$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet $$(grep '^uv==' requirements.lock)
	$(UV) install $(UV_ARGS) --compile-bytecode -r requirements.lock
	$(UV) check --python $(BIN)/python
	$(UV) install $(UV_ARGS) --no-build-isolation -e .
	@touch $@

# The main job, offline: build the default suite, put the reference panel through it in the
# sandbox (R and Python), rescore, elicit confidences, run the real-paper arm with its consensus
# labels and pre-commitment ablation, and write the report. Then a repair-mode run of the panel
# over 28 scenarios (the model is shown what its code did and asked again), with its own report.
run: setup
	$(BIN)/causalverify doctor
	$(BIN)/causalverify build --out $(SUITE_DIR)
	$(BIN)/causalverify run --suite $(SUITE_DIR) --out $(RUN_DIR)
	$(BIN)/causalverify score $(RUN_DIR)
	$(BIN)/causalverify calibrate $(RUN_DIR)
	$(BIN)/causalverify papers run $(RUN_DIR) --models $(PANEL)
	$(BIN)/causalverify papers label $(RUN_DIR) --labellers $(LABELLERS)
	$(BIN)/causalverify papers rid $(RUN_DIR) --models $(PANEL) --n 10 --seed 1
	$(BIN)/causalverify report $(RUN_DIR)
	$(BIN)/causalverify run --suite $(SUITE_DIR) --out $(REPAIR_DIR) --mode repair --max-turns 3 --limit 28
	$(BIN)/causalverify report $(REPAIR_DIR)
	$(BIN)/causalverify diff $(RUN_DIR) $(REPAIR_DIR) > $(REPAIR_DIR)/diff.txt
	@echo "reports: $(RUN_DIR)/report/index.html (single shot) and $(REPAIR_DIR)/report/index.html (repair mode); single shot against repair, cell by cell: $(REPAIR_DIR)/diff.txt"

# lint and the type check run beside the tests (they take one core for half a minute, which the
# tests leave idle while they wait on wall-clock limits); their output follows the tests', and
# either failing fails the target
test: setup test-system
	@checks=$$(mktemp); \
	$(MAKE) --no-print-directory --keep-going lint typecheck > $$checks 2>&1 & pid=$$!; \
	$(MAKE) --no-print-directory unit; tests=$$?; \
	wait $$pid; checked=$$?; \
	cat $$checks; rm -f $$checks; \
	[ $$checked -eq 0 ] || echo "make test: lint or the type check failed (above)"; \
	[ $$tests -eq 0 ] && [ $$checked -eq 0 ]

lint:
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports

typecheck:
	$(BIN)/mypy

# one pytest-xdist worker per CPU and one more: about a fifth of the suite's time is spent
# waiting on wall-clock limits, sleeping cells and servers, which the extra worker fills (on two
# cores: 7 min 34 s with three workers, 8 min 2 s with two; a fourth was no faster, 6 min 39 s
# against 6 min 28 s to 6 min 55 s with three, later); TEST_WORKERS=0 runs in one process
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
# The tests write byte-code caches (__pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE
# is set: otherwise every worker, command-line run and scoring process the tests start compiles
# the package and the assertion-rewritten tests again (about 3 s of CPU per pytest process).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest
unit:
	$(PYTEST) -n $(TEST_WORKERS) --durations=10

# The inner loop: the tests not marked slow (no reference-panel runs, Dask, browser, kill -9 or
# unprivileged reruns), on what `make setup` installed. `make test` still runs everything.
test-fast: $(VENV)/.installed
	$(PYTEST) -n $(TEST_WORKERS) -m "not slow"

clean:
	rm -rf $(VENV) runs .mypy_cache .ruff_cache .pytest_cache .hypothesis
