# The two things a new user does, and the pieces behind them. CMake does the real work in $(BUILD).
#
# Only `make check` and `make demo` install what is missing (scripts/install-deps.sh names each
# package and why before it runs apt-get); `make deps` does just that. A build alone (`make`,
# `make build`) never runs apt-get or sudo: when something is missing, CMake says what, and a
# one-line hint names `make deps`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build check demo bench fuzz clean format

all: build

deps:
	@./scripts/install-deps.sh "$(DEPS_FOR)"

# What asked for the packages, for install-deps.sh's message.
DEPS_FOR = make $(or $(firstword $(filter check demo,$(MAKECMDGOALS))),deps)
ifneq ($(filter check demo,$(MAKECMDGOALS)),)
configure: deps
endif

# --log-level=NOTICE hides CMake's progress lines; errors, warnings and ppscope's summary of what
# it found (cmake/PpsDependency.cmake) still show. CMAKE_RULE_MESSAGES=OFF makes the build print
# a line per target, not per file (CMAKE_FLAGS=-DCMAKE_RULE_MESSAGES=ON brings those back).
DEPS_HINT = make: configure failed; 'make deps' (scripts/install-deps.sh) installs what it needs
configure:
	@cmake -S . -B $(BUILD) --log-level=NOTICE -DCMAKE_RULE_MESSAGES=OFF $(CHECK_FLAGS) \
	    $(CMAKE_FLAGS) || { echo "$(DEPS_HINT)" >&2; exit 1; }

# The Makefiles CMake generates recurse, and run under this make every level would print
# "Entering directory" twice per target. GNUMAKEFLAGS reaches GNU make only (not Ninja).
build: configure
	@GNUMAKEFLAGS=--no-print-directory cmake --build $(BUILD) -j $(JOBS)

# Every test except the benchmarks; tests that need what this machine lacks report skipped.
# Warnings are errors here (as in CI), not in a user's build; the setting stays in $(BUILD)'s cache.
# (A variable of its own, so that `make check CMAKE_FLAGS=...` keeps it.)
check: CHECK_FLAGS = -DPPS_WERROR=ON
check: build
	@cd $(BUILD) && ctest -LE bench --output-on-failure -j $(JOBS)

# The main job: a real pipeline (1F1B, ZB-H1, ZB-H2 on the cpu backend), compared and reported.
demo: build
	@./scripts/demo.sh $(BUILD)/ppscope

bench: build
	@cd $(BUILD) && ctest -L bench --output-on-failure -V

# The fuzz targets of the shard reader and the importers (tests/fuzz/fuzz_*.c): built with
# clang's libFuzzer in $(BUILD)-fuzz, each run FUZZ_SECONDS over its seeds in
# tests/fuzz/corpus/NAME. What a run finds goes to $(BUILD)-fuzz/corpus-NAME, a crash to
# $(BUILD)-fuzz/crash-*; copy what should stay into the seeds, which ctest replays
# (fuzz_replay_NAME). A UBSan report stops the run as a crash
# does (UBSAN_OPTIONS overrides that).
FUZZ_SECONDS ?= 20
fuzz:
	@cmake -S . -B $(BUILD)-fuzz --log-level=NOTICE -DCMAKE_RULE_MESSAGES=OFF \
	    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPPS_FUZZ=ON $(CMAKE_FLAGS)
	@GNUMAKEFLAGS=--no-print-directory cmake --build $(BUILD)-fuzz -j $(JOBS) \
	    --target $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
	@for src in tests/fuzz/fuzz_*.c; do \
	    t=$$(basename $$src .c); name=$${t#fuzz_}; name=$${name#import_}; \
	    mkdir -p $(BUILD)-fuzz/corpus-$$name; \
	    echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	    UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1} \
	    $(BUILD)-fuzz/tests/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -print_final_stats=1 -artifact_prefix=$(BUILD)-fuzz/ \
	        $$(test -f tests/fuzz/$$name.dict && echo -dict=tests/fuzz/$$name.dict) \
	        $(BUILD)-fuzz/corpus-$$name tests/fuzz/corpus/$$name 2>$(BUILD)-fuzz/$$t.log || \
	        { tail -n 30 $(BUILD)-fuzz/$$t.log; exit 1; }; \
	    grep -E '^stat::number_of_executed_units|^Done' $(BUILD)-fuzz/$$t.log; \
	done

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD)
