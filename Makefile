# The two commands a newcomer needs:  make run   and   make test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_DIR ?= runs/latest
SUITE_DIR ?= runs/suite

.PHONY: setup system run test lint typecheck unit clean

setup: system $(VENV)/.installed

system:
	@bash scripts/install-system.sh

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

run: setup
	$(BIN)/causalverify build --out $(SUITE_DIR)

test: setup lint typecheck unit

lint:
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck:
	$(BIN)/mypy

unit:
	$(BIN)/pytest

clean:
	rm -rf $(VENV) runs .mypy_cache .ruff_cache .pytest_cache .hypothesis
