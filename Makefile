SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# The venv's bin first: buf and the betterproto2 plugin come from there, not from the system.
export PATH := $(BIN):$(PATH)

PB2_DIR := python/pi_proto/_gen/pb2/pi/ai/v1
BASELINE := proto/baseline/pi-ai-v1.binpb

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt setuptools
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation -c constraints.txt -e '.[dev]'
	touch $@

.PHONY: setup
setup: $(VENV)/.installed ## Create .venv and install the pinned Python toolchain.

.PHONY: generate
generate: setup ## Regenerate python/pi_proto/_gen from proto/.
	buf generate
	@# protoc writes absolute imports (`from pi.ai.v1 import ...`); make them package-relative so
	@# the official classes live inside pi_proto instead of claiming a top-level `pi` package.
	sed -i 's/^from pi\.ai\.v1 import /from . import /' $(PB2_DIR)/*_pb2.py $(PB2_DIR)/*_pb2.pyi

.PHONY: check-generate
check-generate: generate ## Fail if regenerating changes any committed file.
	@if [ -n "$$(git status --porcelain -- python/pi_proto/_gen)" ]; then \
		git status --short -- python/pi_proto/_gen; git diff --stat -- python/pi_proto/_gen; \
		echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi

.PHONY: lint
lint: setup ## ruff, mypy --strict, buf lint, buf format, buf breaking.
	ruff check python tests
	ruff format --check python tests
	mypy
	buf lint
	buf format --diff --exit-code
	buf breaking --against $(BASELINE)

.PHONY: format
format: setup ## Apply ruff and buf formatting.
	ruff check --fix python tests
	ruff format python tests
	buf format --write

.PHONY: baseline
baseline: setup ## Record the current schema as the wire-compatibility baseline (once per major version).
	mkdir -p $(dir $(BASELINE))
	buf build --exclude-source-info -o $(BASELINE)

.PHONY: pytest
pytest: setup ## Run the Python tests only.
	pytest

.PHONY: test
test: setup check-generate lint pytest ## Everything CI runs.

.PHONY: demo
demo: setup ## Show the README transcript on the wire.
	pi-proto demo

.PHONY: clean
clean: ## Remove the venv and caches.
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
