# The two things a new user does, and the pieces behind them. CMake does the real work in $(BUILD).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build check demo bench clean format

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Every test except the benchmarks; tests that need what this machine lacks report skipped.
check: build
	@cd $(BUILD) && ctest -LE bench --output-on-failure -j $(JOBS)

# The main job: a real pipeline (1F1B, ZB-H1, ZB-H2 on the cpu backend), compared and reported.
demo: build
	@./scripts/demo.sh $(BUILD)/ppscope

bench: build
	@cd $(BUILD) && ctest -L bench --output-on-failure -V

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD)
