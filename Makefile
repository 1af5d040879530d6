# Two entry points that work on a fresh Debian 12 machine as root:
#   make gate   - install missing packages, build, run the pull-request gate on the default model
#   make test   - install missing packages, build, run the tests (ctest)
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
ATLAS_CUDA ?= AUTO
# The data directory (models/, bfcl/): ../shared/data beside the checkout when it exists.
ATLAS_DATA_DIR ?= $(shell if [ -d ../shared/data ]; then cd ../shared/data && pwd; else echo $(CURDIR)/data; fi)
export ATLAS_DATA_DIR
GATE_ARGS ?=
# ccache, when installed, makes rebuilds in fresh clones cheap; paths are hashed relative to the
# checkout so two clones share cache entries.
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_LAUNCHER := -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CUDA_COMPILER_LAUNCHER=$(CCACHE)
export CCACHE_BASEDIR := $(CURDIR)
endif

.PHONY: deps configure build test gate clean

deps:
	bash tools/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DATLAS_CUDA=$(ATLAS_CUDA) -DATLAS_DATA_DIR=$(ATLAS_DATA_DIR) $(CMAKE_LAUNCHER)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

gate: build
	$(BUILD_DIR)/tools/atlas-bench --data-dir $(ATLAS_DATA_DIR) --pull-request-gate-check $(GATE_ARGS)

clean:
	rm -rf $(BUILD_DIR)
