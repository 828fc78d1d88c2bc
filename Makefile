# Thin wrapper: set-up, build, run, test. BACKEND = openmp (default) | serial | cuda | hip.
# KOKKOS = empty (default: Kokkos 3.4.01 from Debian's trilinos source) | 4.6 (upstream release
# tarballs kokkos-4.6.*.tar.gz and kokkos-kernels-4.6.*.tar.gz from KOKKOS_TARBALLS; presets
# <backend>-kokkos4.6, prefix .deps/<backend>-kokkos4.6, build folder build/<backend>-kokkos4.6).
BACKEND ?= openmp
KOKKOS ?=
KOKKOS_TARBALLS ?= ../shared/deps
DECK ?= inputs/laplacian.toml
JOBS ?= $(shell nproc)
RANKS ?= 1,2
PRESET := $(BACKEND)$(if $(KOKKOS),-kokkos$(KOKKOS))
BUILD := build/$(PRESET)
ifneq ($(KOKKOS),)
KOKKOS_SOURCE ?= $(lastword $(sort $(wildcard $(KOKKOS_TARBALLS)/kokkos-$(KOKKOS).*tar.gz)))
KOKKOSKERNELS_SOURCE ?= $(lastword $(sort $(wildcard $(KOKKOS_TARBALLS)/kokkos-kernels-$(KOKKOS).*tar.gz)))
BOOTSTRAP := KOKKOS_SOURCE=$(KOKKOS_SOURCE) KOKKOSKERNELS_SOURCE=$(KOKKOSKERNELS_SOURCE) \
  KOKKOS_VERSION=$(KOKKOS) bash scripts/bootstrap.sh
else
BOOTSTRAP := bash scripts/bootstrap.sh
endif
# Thread binding for the OpenMP back end (Kokkos warns without it); override as you like.
export OMP_PROC_BIND ?= spread
export OMP_PLACES ?= threads
# Debian's interpreter, with matplotlib, for the plots in run folders.
export KSTENCIL_PYTHON ?= /usr/bin/python3

.PHONY: run test build deps test-deps kokkos-sources bench format clean fuzz sanitize compile-check

# `make run` replaces its own earlier run folder (--overwrite); `kstencil run` alone refuses to.
run: build
	$(BUILD)/miniapp/kstencil run $(DECK) --overwrite $(ARGS)

# SET=NAME: the sweep inputs/bench/NAME.toml (default laplacian; ARGS: its overrides and flags,
# e.g. --overwrite). SCALING=weak|strong: scripts/bench_scaling.py over RANKS (default 1,2) instead.
bench: build
ifneq ($(SCALING),)
	/usr/bin/python3 scripts/bench_scaling.py --kstencil $(BUILD)/miniapp/kstencil --mode $(SCALING) \
	  --ranks $(RANKS) $(ARGS)
else
	$(BUILD)/miniapp/kstencil sweep inputs/bench/$(or $(SET),laplacian).toml $(ARGS)
endif

test: test-deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# TARGET= builds one target (e.g. kstencil: the library and the driver, no tests).
build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS) $(if $(TARGET),--target $(TARGET))

deps: kokkos-sources
	$(BOOTSTRAP) $(BACKEND) $(BOOTSTRAP_FLAGS)

test-deps: kokkos-sources
	$(BOOTSTRAP) $(BACKEND) --test $(BOOTSTRAP_FLAGS)

# make test's CTest suite under AddressSanitizer + UndefinedBehaviorSanitizer (BACKEND=openmp or
# serial, KOKKOS= or 4.6): preset $(PRESET)-sanitize (-Og -g1) in build/$(PRESET)-sanitize, against
# Kokkos + Kokkos Kernels built with the same sanitizers (-O1) into .deps/$(PRESET)-sanitize
# (bootstrap.sh --sanitize). Run-time options and leak suppressions: tests/sanitize/.
sanitize:
	$(MAKE) test PRESET=$(PRESET)-sanitize BOOTSTRAP_FLAGS=--sanitize

# CI's check that a GPU backend compiles (BACKEND=hip, or cuda KOKKOS=4.6), on machines without
# the GPU: the library and the driver with host code at -O0 (HIP: device code through the front
# end only, scripts/hip-check-compile; CUDA: kernels unoptimised, to PTX only), preset
# $(PRESET)-check in build/$(PRESET)-check, against the same Kokkos as make build, in less time
# than the optimised build: small files in unity batches, each kernel with one launch bound (the
# driver is not for running; docs/KOKKOS.md, "Build times").
compile-check:
	$(MAKE) build PRESET=$(PRESET)-check TARGET=kstencil

kokkos-sources:
ifneq ($(KOKKOS),)
	@test -n "$(KOKKOS_SOURCE)" -a -n "$(KOKKOSKERNELS_SOURCE)" || \
	  { echo "make: KOKKOS=$(KOKKOS) needs kokkos-$(KOKKOS).*tar.gz and kokkos-kernels-$(KOKKOS).*tar.gz in" \
	    "KOKKOS_TARBALLS=$(KOKKOS_TARBALLS) (or KOKKOS_SOURCE= and KOKKOSKERNELS_SOURCE=)" >&2; exit 2; }
	@grep -q '"name": "$(BACKEND)-kokkos$(KOKKOS)"' CMakePresets.json || \
	  { echo "make: no preset $(BACKEND)-kokkos$(KOKKOS) in CMakePresets.json" >&2; exit 2; }
endif

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build

# libFuzzer on the deck parser and the overrides (tests/fuzz/fuzz_deck.cpp), without Kokkos: the
# few sources it needs, built with clang's sanitizers. Seeded with the corpus decks; runs
# FUZZ_SECONDS and fails on a finding (crash, sanitizer report, uncaught exception, hang).
# toml++'s precondition asserts are compiled out as in the library kstencil links (Debian's, built
# by g++ with NDEBUG: no-ops); its __builtin_unreachable stays, and UBSan reports reaching it.
FUZZ_CXX ?= clang++-14
FUZZ_SECONDS ?= 60
FUZZ_SOURCES := tests/fuzz/fuzz_deck.cpp src/core/deck.cpp src/laplacian/laplacian_deck.cpp \
  src/fdtd/fdtd_deck.cpp

build/fuzz/fuzz_deck: $(FUZZ_SOURCES) src/core/deck.hpp src/core/deck_keys.hpp src/core/toml_literal.hpp
	@command -v $(FUZZ_CXX) >/dev/null || { echo "make fuzz: no $(FUZZ_CXX); make test-deps" \
	  "installs it (Debian's clang-14 and libclang-rt-14-dev)" >&2; exit 2; }
	@mkdir -p build/fuzz
	$(FUZZ_CXX) -std=c++17 -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=all '-DTOML_ASSERT(expr)=static_cast<void>(0)' -Isrc $(FUZZ_SOURCES) \
	  -o $@

fuzz: build/fuzz/fuzz_deck
	@mkdir -p build/fuzz/corpus build/fuzz/findings
	build/fuzz/fuzz_deck -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	  -max_len=8192 -dict=tests/fuzz/deck.dict -artifact_prefix=build/fuzz/findings/ \
	  -print_final_stats=1 build/fuzz/corpus tests/corpus/decks inputs
