# Two entry points that work on a fresh Debian 12 machine as root:
#   make gate   - install missing packages, build, run the pull-request gate on the default model
#   make test   - install missing packages, build, run the tests (ctest)
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
ATLAS_CUDA ?= AUTO
# Warnings as errors (CMake option ATLAS_WERROR): ON under CI (CI=true, which .ci/run sets; CI is
# the CI system's variable, read as tools/lib/ci_flag.sh does: unset, empty or
# 0/false/no/off in any case is off, anything else on, never an error), OFF locally unless asked (`make test ATLAS_WERROR=ON`). Passed on every configure, so a
# build directory configured once without it does not keep the cached value under CI.
ATLAS_CI_FLAG = $(shell CI='$(CI)' bash tools/lib/ci_flag.sh 2>&1)
ATLAS_WERROR ?= $(if $(filter 1,$(ATLAS_CI_FLAG)),ON,$(if $(filter 0,$(ATLAS_CI_FLAG)),OFF,$(error $(ATLAS_CI_FLAG))))
# The data directory (models/, bfcl/), absolute: `make ... ATLAS_DATA_DIR=DIR`, else the order of
# tools/lib/data_dir.sh ($ATLAS_DATA_DIR, else ../shared/data beside the checkout, else ./data;
# docs/environment.md "The data directory").
ATLAS_DATA_DIR := $(abspath $(shell bash tools/lib/data_dir.sh))
export ATLAS_DATA_DIR
# Extra arguments for `make gate`. A pull request can edit this file, so the gate does not trust
# them: a --baselines-dir or --config here is checked against the merge-base (docs/gates.md).
GATE_ARGS ?=
# ccache, when installed, makes rebuilds in fresh clones cheap; paths are hashed relative to the
# checkout so two clones share cache entries.
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_LAUNCHER := -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CUDA_COMPILER_LAUNCHER=$(CCACHE)
export CCACHE_BASEDIR := $(CURDIR)
endif

# Fuzzing and sanitizers (docs/fuzzing.md): separate build directories, so they never disturb build/.
FUZZ_BUILD_DIR ?= build-fuzz
SANITIZE_BUILD_DIR ?= build-sanitize
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

.PHONY: deps configure build test gate clean fuzz fuzz-build test-sanitize

deps:
	bash tools/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DATLAS_CUDA=$(ATLAS_CUDA) -DATLAS_WERROR=$(ATLAS_WERROR) -DATLAS_DATA_DIR=$(ATLAS_DATA_DIR) $(CMAKE_LAUNCHER)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# ctest names the skipped tests; tests/skip_reasons.sh adds each one's reason from ctest's log.
test: build
	cd $(BUILD_DIR) && rc=0 && ctest --output-on-failure -j $(JOBS) || rc=$$?; bash $(CURDIR)/tests/skip_reasons.sh $(abspath $(BUILD_DIR)); exit $$rc

gate: build
	$(BUILD_DIR)/tools/atlas-bench --data-dir $(ATLAS_DATA_DIR) --pull-request-gate-check $(GATE_ARGS)

# clang-16 + libFuzzer + ASan + UBSan; each target runs FUZZ_SECONDS (fuzz/run.sh prints the table).
# The instrumented builds (fuzz, sanitize) keep warnings as warnings: the code's own warnings
# fail `make test`'s build in the same CI job, and what only instrumentation makes the compiler
# say (gcc's flow warnings change with ASan's code) is not a defect of the code.
fuzz-build:
	bash tools/install-deps.sh --fuzz
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATLAS_FUZZ=ON -DATLAS_CUDA=OFF -DATLAS_WERROR=OFF -DBUILD_TESTING=OFF $(CMAKE_LAUNCHER)
	cmake --build $(FUZZ_BUILD_DIR) --target atlas_fuzzers -j $(JOBS)

fuzz: fuzz-build
	bash fuzz/run.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The whole ctest suite (CPU: no CUDA) built with gcc's ASan + UBSan, UB fatal.
test-sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATLAS_SANITIZE=ON -DATLAS_CUDA=OFF -DATLAS_WERROR=OFF -DATLAS_DATA_DIR=$(ATLAS_DATA_DIR) $(CMAKE_LAUNCHER)
	cmake --build $(SANITIZE_BUILD_DIR) -j $(JOBS)
	cd $(SANITIZE_BUILD_DIR) && rc=0 && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) || rc=$$?; bash $(CURDIR)/tests/skip_reasons.sh $(abspath $(SANITIZE_BUILD_DIR)); exit $$rc

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR) $(SANITIZE_BUILD_DIR)
