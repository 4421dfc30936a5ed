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
TS := typescript
TS_BIN := $(CURDIR)/$(TS)/node_modules/.bin

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

# npm ci empties node_modules first, so the stamp inside it goes whenever the tree is reinstalled.
$(TS)/node_modules/.installed: $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

.PHONY: ts-setup
ts-setup: $(TS)/node_modules/.installed ## Install the pinned TypeScript toolchain into typescript/node_modules.

.PHONY: generate
generate: setup ts-setup ## Regenerate python/pi_proto/_gen, typescript/src/gen and go/gen from proto/.
	buf generate
	buf generate --template $(TS)/buf.gen.yaml
	$(MAKE) -C go generate
	@# protoc writes absolute imports (`from pi.ai.v1 import ...`); make them package-relative so
	@# the official classes live inside pi_proto instead of claiming a top-level `pi` package.
	sed -i 's/^from pi\.ai\.v1 import /from . import /' $(PB2_DIR)/*_pb2.py $(PB2_DIR)/*_pb2.pyi

.PHONY: check-generate
check-generate: generate ## Fail if regenerating changes any committed file.
	@if [ -n "$$(git status --porcelain -- python/pi_proto/_gen $(TS)/src/gen)" ]; then \
		git status --short -- python/pi_proto/_gen $(TS)/src/gen; git diff --stat -- python/pi_proto/_gen $(TS)/src/gen; \
		echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi
	$(MAKE) -C go check-generate

.PHONY: lint
lint: setup ts-setup ## ruff, mypy --strict, buf lint, buf format, buf breaking, tsc --noEmit.
	ruff check python tests fuzz bench
	ruff format --check python tests fuzz bench
	mypy
	buf lint
	buf format --diff --exit-code
	buf breaking --against $(BASELINE)
	$(TS_BIN)/tsc --noEmit -p $(TS)

.PHONY: format
format: setup ## Apply ruff and buf formatting.
	ruff check --fix python tests fuzz bench
	ruff format python tests fuzz bench
	buf format --write

.PHONY: baseline
baseline: setup ## Record the current schema as the wire-compatibility baseline (once per major version).
	mkdir -p $(dir $(BASELINE))
	buf build --exclude-source-info -o $(BASELINE)

.PHONY: pytest
pytest: setup ## Run the Python tests only.
	pytest

.PHONY: ts-test
ts-test: setup ts-setup ## Run the TypeScript tests only (against the Python server).
	cd $(TS) && npm test --silent

.PHONY: go-test
go-test: setup ## Run the Go client's lint and tests (go/).
	$(MAKE) -C go test

.PHONY: rust-test
rust-test: setup ## Run the Rust client's lint and tests (rust/).
	$(MAKE) -C rust test

.PHONY: java-test
java-test: setup ## Run the Java client's tests (java/).
	$(MAKE) -C java test

.PHONY: test
test: setup check-generate lint pytest ts-test go-test rust-test java-test ## Everything CI runs.

.PHONY: vectors
vectors: setup ## Regenerate the golden wire vectors in tests/vectors from their case list.
	python -m tests.vectors.generate

FUZZ_SECONDS ?= 600
.PHONY: fuzz
fuzz: setup ## Fuzz decode + validate with atheris for FUZZ_SECONDS (default 600).
	mkdir -p fuzz/corpus
	python fuzz/decode_validate.py fuzz/corpus -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=fuzz/

$(VENV)/.bench-installed: $(VENV)/.installed
	$(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation -c constraints.txt -e '.[dev,bench]'
	touch $@

.PHONY: bench
bench: $(VENV)/.bench-installed ## Measure throughput, wire bytes, codec and memory against baselines (bench/results/).
	python -m bench.bench

.PHONY: load
load: setup ## 64 concurrent streams x 2,000 events against one server: nothing lost or reordered.
	python -m bench.load --streams 64 --events 2000

.PHONY: demo
demo: setup ## Play the README round trip over gRPC as a tiny agent loop.
	pi-proto demo

.PHONY: clean
clean: ## Remove the venv, node_modules and caches.
	rm -rf $(VENV) $(TS)/node_modules .mypy_cache .ruff_cache .pytest_cache
