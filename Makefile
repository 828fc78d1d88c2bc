# Thin wrapper: set-up, build, run, test. BACKEND = openmp (default) | serial | cuda | hip.
BACKEND ?= openmp
DECK ?= inputs/laplacian.toml
JOBS ?= $(shell nproc)
BUILD := build/$(BACKEND)
# Thread binding for the OpenMP back end (Kokkos warns without it); override as you like.
export OMP_PROC_BIND ?= spread
export OMP_PLACES ?= threads
# Debian's interpreter, with matplotlib, for the plots in run folders.
export KSTENCIL_PYTHON ?= /usr/bin/python3

.PHONY: run test build deps test-deps bench format clean

# `make run` replaces its own earlier run folder (--overwrite); `kstencil run` alone refuses to.
run: build
	$(BUILD)/miniapp/kstencil run $(DECK) --overwrite $(ARGS)

bench: build
	/usr/bin/python3 scripts/bench.py --kstencil $(BUILD)/miniapp/kstencil --set $(or $(SET),default) $(ARGS)

test: test-deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# TARGET= builds one target (e.g. kstencil: the library and the driver, no tests).
build: deps
	cmake --preset $(BACKEND) >/dev/null
	cmake --build --preset $(BACKEND) -j $(JOBS) $(if $(TARGET),--target $(TARGET))

deps:
	bash scripts/bootstrap.sh $(BACKEND)

test-deps:
	bash scripts/bootstrap.sh $(BACKEND) --test

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
