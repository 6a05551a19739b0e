# gander: build, test and demo. GNU make. Quick start: `make demo`, `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

export PATH := $(HOME)/.cargo/bin:$(PATH)
export DEBIAN_FRONTEND := noninteractive

# pyiec61850-ng's wheel is built for CPython 3.11 only.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VPY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.requirements.stamp
GANDER := $(CURDIR)/target/release/gander
# The second gander, linking OpenSSL 3.5 built from source (openssl-src): the `openssl35` backend,
# ML-DSA certificates and their floors (docs/pq.md). Its own target directory: one binary holds
# one OpenSSL.
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
OSSL35 := $(TARGET_DIR)/ossl35/release/gander
CRYPTO_VECTORS = $(shell $(VPY) -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')

.PHONY: setup venv cref build build-ossl35 test test-stages test-pq lint demo fuzz-smoke clean cross cross-compile cross-test dist

## setup: system packages (tshark, libpcap, OpenSSL, GnuTLS, ...) and Rust if cargo is missing
setup:
	PYTHON=$(PYTHON) scripts/setup.sh

## venv: project-local Python with the pinned interop peers (libiec61850 wheel) and vectors
venv: $(VENV_STAMP)

$(VENV_STAMP): interop/requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "venv: CPython 3.11 is required (pyiec61850-ng is cp311-only); set PYTHON=")'
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --disable-pip-version-check -r interop/requirements.txt
	touch $@

## cref: the compiled libiec61850 peer of `gander run stacks` (interop/cref), linked against the
## shared library of the pyiec61850-ng wheel in .venv (which ships no headers: the prototypes are
## declared in interop/cref/iec61850_decl.h)
CREF := interop/cref/build/libiec61850_peer
cref: $(CREF)

$(CREF): interop/cref/libiec61850_peer.c interop/cref/iec61850_decl.h $(VENV_STAMP)
	lib=$$($(VPY) -c 'import glob, os, sysconfig; hits = sorted(glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "pyiec61850_ng.libs", "libiec61850-*.so*"))); print(hits[0] if hits else "")'); \
	test -n "$$lib" || { echo "cref: libiec61850 not found in $(VENV) (make venv)"; exit 1; }; \
	mkdir -p $(@D); \
	gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -o $@ $< -L"$$(dirname "$$lib")" -l:"$$(basename "$$lib")" \
		-Wl,-rpath,"$$(dirname "$$lib")" -lpthread

## build: the gander binary and every crate
build:
	cargo build --release --workspace

## build-ossl35: gander linked with OpenSSL 3.5 (target/ossl35/release/gander), for `gander run pq2026`
build-ossl35:
	CARGO_TARGET_DIR=$(TARGET_DIR)/ossl35 cargo build --release -p gander-cli --features gander-tls/vendored-openssl

## test-pq: the OpenSSL 3.5 binary, the cross-library post-quantum TLS tests and `gander run pq2026 --quick`
test-pq: build build-ossl35
	cargo test --release -p gander-tls --test it -- pq:: ossl35::
	GANDER_OSSL35=$(OSSL35) $(TARGET_DIR)/release/gander run pq2026 --quick --out out/run-pq2026-quick

## lint: formatting, clippy with warnings as errors, the crate layering (docs/architecture.md), and
## that the build and the test build share every compiled crate (docs/testing.md)
lint:
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets -- -D warnings
	python3 scripts/check_layers.py
	python3 scripts/check_test_build.py

## test: lint, Rust tests, then the interop suite against libiec61850 and tshark. Each stage's start
## is logged to out/test-stages.log (seconds since the epoch and the CPU time counters), to keep the whole within its budget.
STAGE := scripts/test_stage.sh
test:
	scripts/check_disk.sh $(TARGET_DIR)
	$(STAGE) begin
	$(MAKE) --no-print-directory setup venv cref
	$(MAKE) --no-print-directory test-stages || { scripts/background.sh stop cross-build; exit 1; }

# The stages of `make test`, after set-up (a sub-make: CRYPTO_VECTORS needs the venv).
# The interop suite mostly waits on peers, captures and timeouts: INTEROP_JOBS pytest-xdist workers
# (docs/testing.md).
INTEROP_JOBS ?= 4
# The Rust test binaries run RUST_TEST_JOBS at a time (scripts/run_rust_tests.py): the slow ones
# wait on daemons, namespaces and peers more than they compute (docs/testing.md).
RUST_TEST_JOBS ?= 4
# The aarch64 compile (cross-test's and dist's) runs beside the Rust tests, the interop suite and
# the fuzz smoke run at the lowest priority (scripts/background.sh), in a target directory of its
# own so that neither cargo waits for the other's lock; cross-test waits for it and then only
# runs the tests under qemu (docs/testing.md, "Builds beside waiting stages").
CROSS_TEST_DIR := $(TARGET_DIR)/cross
test-stages:
	$(STAGE) build; $(MAKE) --no-print-directory build
	$(STAGE) lint; $(MAKE) --no-print-directory lint
	scripts/background.sh start cross-build env CARGO_TARGET_DIR=$(CROSS_TEST_DIR) $(MAKE) --no-print-directory cross-compile CROSS_TARGETS="$(TEST_CROSS_TARGETS)"
	$(STAGE) rust-tests; GANDER_CRYPTO_VECTORS=$(CRYPTO_VECTORS) python3 scripts/run_rust_tests.py --jobs $(RUST_TEST_JOBS)
	$(STAGE) interop; GANDER=$(GANDER) $(VPY) -m pytest -q -n $(INTEROP_JOBS) --dist loadgroup interop/tests
	$(STAGE) fuzz-smoke; $(MAKE) --no-print-directory fuzz-smoke FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) FUZZ_PROFILE=dev
	$(STAGE) cross-test; scripts/background.sh wait cross-build
	CARGO_TARGET_DIR=$(CROSS_TEST_DIR) $(MAKE) --no-print-directory cross-test CROSS_TARGETS="$(TEST_CROSS_TARGETS)"
	$(STAGE) dist; CARGO_TARGET_DIR=$(CROSS_TEST_DIR) $(MAKE) --no-print-directory dist CROSS_TARGETS="$(TEST_CROSS_TARGETS)"
	$(STAGE) end

## cross: the standalone gander-gateway and gander-kdc for the Raspberry Pi 4 (aarch64) and armv7 (OpenSSL static)
CROSS_TARGETS ?= aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf
# The targets' OpenSSL (scripts/cross_cargo.sh): `debian`, Debian's libssl-dev of the target
# architecture from multiarch (scripts/setup.sh), or `vendored`, OpenSSL 3.5 built from source.
# Both are linked statically. cross-test and dist build the same way, so dist reuses what
# cross-test compiled.
CROSS_OPENSSL ?= debian
export CROSS_OPENSSL
CROSS_CARGO := scripts/cross_cargo.sh
# `make test` cross-tests and packages the Raspberry Pi 4's target (the gateway paper's box) to stay
# within its time budget; `make cross-test dist` does every target.
TEST_CROSS_TARGETS ?= aarch64-unknown-linux-gnu
DIST ?= dist
cross: setup
	for t in $(CROSS_TARGETS); do \
		$(CROSS_CARGO) $$t build --release -p gander-gateway --bin gander-gateway --bin gander-kdc; \
	done

## cross-compile: what cross-test and dist run and package, compiled and not run (no set-up:
## `make test` runs it beside other stages; `make cross-test` and `make dist` compile by themselves)
# The test binaries in one cargo command (scripts/cross_test.py): one feature resolution, which the
# binaries' build then shares.
cross-compile:
	for t in $(CROSS_TARGETS); do \
		scripts/cross_test.py $$t --no-run; \
		$(CROSS_CARGO) $$t build -q --release -p gander-gateway --bin gander-gateway --bin gander-kdc; \
	done

## cross-test: the wire, sec and gateway policy-core tests of each cross target, run under qemu-user
# Two key-generation sweeps are left to the native run (`make test`'s rust-tests): RSA key pairs
# of four sizes and every post-quantum algorithm's key pair and signature take about 90 emulated
# CPU-seconds under qemu; the target's code paths for both stay covered under qemu by the
# known-answer tests (RSA, ML-DSA, ECDSA vectors) and the other signature tests (docs/testing.md).
CROSS_TEST_SKIP := --skip signature_roundtrip::rsa_round_trips_every_size \
	--skip pq_signatures::every_post_quantum_algorithm_round_trips
cross-test: setup venv
	for t in $(CROSS_TARGETS); do \
		echo "cross-test: $$t (qemu-user)"; \
		GANDER_CRYPTO_VECTORS=$(CRYPTO_VECTORS) scripts/cross_test.py $$t -- $(CROSS_TEST_SKIP); \
	done

## dist: a tarball and a .deb of the standalone gateway and of the key server per cross target, then each one checked
dist: cross
	scripts/package.sh $(DIST) $(CROSS_TARGETS)
	scripts/check_dist.sh $(DIST)

## demo: crypto costs and a protect/verify round on a libiec61850 capture. It does not build the
## OpenSSL 3.5 gander (about half of a fresh machine's set-up): `make build-ossl35` or `make test-pq`
## does, and `gander run pq2026` names that command when the binary is missing.
demo: setup venv cref build
	GANDER=$(GANDER) PY=$(VPY) scripts/demo.sh

## fuzz-smoke: every fuzz target for FUZZ_SECONDS each (cargo-fuzz on stable, no sanitizer):
## built once, run FUZZ_JOBS at a time (scripts/fuzz_smoke.sh)
FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= $(shell nproc)
FUZZ_PROFILE ?= release
# `make test` gives each target 2 s of an unoptimised build with overflow checks (FUZZ_PROFILE=dev:
# 180 CPU-s to build against 455 optimised) to stay within its time budget: every target starts,
# replays its seeds and corpus and mutates for a while (3 s each cost 44 CPU-s more for 44
# targets, docs/testing.md); `make fuzz-smoke` alone fuzzes the optimised build 10 s per
# target, FUZZ_SECONDS=N longer.
TEST_FUZZ_SECONDS ?= 2
fuzz-smoke:
	command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz@0.13.2
	scripts/fuzz_smoke.sh $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_PROFILE)

clean:
	cargo clean
	rm -rf out $(DIST)
