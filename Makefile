# Thin wrapper: set-up, build, run, test. BACKEND = openmp (default) | serial | cuda | hip.
BACKEND ?= openmp
DECK ?= inputs/laplacian.toml
JOBS ?= $(shell nproc)
BUILD := build/$(BACKEND)

.PHONY: run test build deps test-deps bench format clean

run: build
	$(BUILD)/miniapp/kstencil run $(DECK) $(ARGS)

test: test-deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

build: deps
	cmake --preset $(BACKEND) >/dev/null
	cmake --build --preset $(BACKEND) -j $(JOBS)

deps:
	bash scripts/bootstrap.sh $(BACKEND)

test-deps:
	bash scripts/bootstrap.sh $(BACKEND) --test

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
