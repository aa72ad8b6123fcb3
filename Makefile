# Switchboard — every step a developer or CI needs, in one place.
#   make run    operator + webhook against $KUBECONFIG, or a local cluster and NATS
#   make test   everything: deps, tools, builds, unit/integration (ASan/UBSan), fuzz gate, node, e2e
SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
GENERATOR  := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
JOBS       ?= $(shell nproc)
CTEST_JOBS ?= 2
FUZZ_SECONDS ?= 60
PREFIX     ?= /usr/local

.PHONY: deps tools build install build-asan test test-unit test-integration test-asan test-e2e test-node \
        test-tsan run bench fuzz fuzz-check format format-check cluster-up cluster-down chart-crds clean help

help:
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

deps: ## install the Debian packages (idempotent)
	@bash scripts/install-deps.sh

tools: ## build kube-apiserver, etcd, helm and the test tools (jwtcheck, nats-server-callout, prometheus-nats-exporter) into .cache/tools
	@bash scripts/build-tools.sh

# configure DIR FLAGS... -> cmake's configure step, with the generator only
# for a new tree (an existing one keeps its own); cheap when nothing changed.
# Debug information as line tables (SWITCHBOARD_DEBUG_INFO in CMakeLists.txt).
configure = cmake -S . -B $(1) $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)") \
  -DSWITCHBOARD_DEBUG_INFO=lines $(2) >/dev/null

# Each tree compiles the tests it runs (cmake/TestLabels.cmake): build/ the
# e2e tests against the optimised binaries, build-asan/ the unit and
# integration tests, sanitized.
build: deps ## configure and build (binaries in build/bin, the e2e tests; `make bench` the benchmarks)
	$(call configure,$(BUILD),-DSWITCHBOARD_TEST_LABELS=e2e)
	cmake --build $(BUILD) -j $(JOBS)

install: build ## binaries into $(PREFIX)/bin, CRDs and chart into $(PREFIX)/share/switchboard
	cmake --install $(BUILD) --prefix $(PREFIX)

build-asan: deps ## configure and build the sanitized tree (unit and integration tests)
	$(call configure,$(ASAN_BUILD),-DCMAKE_BUILD_TYPE=Debug -DSWITCHBOARD_SANITIZE=ON \
	  -DSWITCHBOARD_BENCH=OFF "-DSWITCHBOARD_TEST_LABELS=unit;integration")
	cmake --build $(ASAN_BUILD) -j $(JOBS)

ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

test-unit: build-asan ## unit tests (under AddressSanitizer and UBSan)
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(CTEST_JOBS) -L unit

test-integration: build-asan tools ## integration tests (real nats-server; under AddressSanitizer and UBSan)
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(CTEST_JOBS) -L integration

test-asan: build-asan tools ## unit + integration under AddressSanitizer and UBSan
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(CTEST_JOBS) -L 'unit|integration'

# Not part of `make test`: the pubsub-runtime stress and integration tests
# (and the CLI they start), the authorizer's session and its restart test
# under ThreadSanitizer, in their own tree.
test-tsan: deps ## pubsub-runtime stress + integration, authorizer session tests under ThreadSanitizer (not in make test)
	@[ -f $(TSAN_BUILD)/CMakeCache.txt ] || cmake -S . -B $(TSAN_BUILD) -G "$(GENERATOR)" \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWITCHBOARD_TSAN=ON -DSWITCHBOARD_BENCH=OFF
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target pubsub_shutdown_stress_test pubsub_nats_test pubsub_cli_test \
	  authorizer_session_test callout_restart_test
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1 \
	  ctest --output-on-failure -j 1 -R '^(pubsub_(shutdown_stress|nats|cli)|authorizer_session|callout_restart)_test$$'

# One at a time: in `make test` the ASan build, the unit, integration and
# fuzz tests and the node phase run beside this one, and most of the
# phase's time is in RUN_SERIAL tests (API server restarts and freezes,
# the chart's cluster-wide webhooks, servers under timing), so two at a
# time saved nothing measurable and only loaded the machine under tests
# that restart servers while clients reconnect.
test-e2e: build tools ## end-to-end tests (real kube-apiserver + etcd, kubectl, helm, nats-server)
	cd $(BUILD) && ctest --output-on-failure -j 1 -L e2e

test-node: build tools ## Switchboard in pods on a real node: images from the Dockerfile, helm install (root; see docs/node.md)
	cd $(BUILD) && ctest --output-on-failure -j 1 -L node

test: ## the whole suite, phase by phase (scripts/test-suite.sh)
	@BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) CTEST_JOBS=$(CTEST_JOBS) bash scripts/test-suite.sh

cluster-up: tools ## start etcd + kube-apiserver on loopback; kubeconfig in .cache/cluster/kubeconfig
	@bash scripts/cluster.sh up

cluster-down: ## stop the local cluster
	@bash scripts/cluster.sh down

chart-crds: ## copy crds/ into the chart (a unit test fails when they drift)
	@bash scripts/sync-chart-crds.sh

run: build tools ## the main job (see README)
	@bash scripts/run-local.sh

bench: build ## build and run the benchmarks (results go in BENCHMARKS.md by hand)
	cmake --build $(BUILD) -j $(JOBS) --target benchmarks
	@bash scripts/bench.sh

fuzz: deps ## explore: libFuzzer targets for FUZZ_SECONDS each; crashes land in fuzz/corpus/
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-check: deps ## the fuzz gate of `make test`: replay every committed input; then FUZZ_RUNS seeded runs per target, reported
	@bash scripts/fuzz.sh --check

format: ## clang-format every C++ file in place
	@git ls-files '*.cc' '*.h' | xargs -r clang-format -i

format-check: deps ## fail when a C++ file is not clang-formatted
	@git ls-files '*.cc' '*.h' | xargs -r clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
