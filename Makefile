# Thin wrapper: setup -> configure -> build -> run. The real build is CMake (CMakePresets.json).
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: all setup configure build test demo package bench clean
all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@mkdir -p build && cmake --preset $(PRESET) > $(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# Every test but those that need a GPU (label gpu).
test: build
	@ctest --preset $(PRESET) -j $(JOBS)

demo: build
	@$(BUILD)/app/eval/dflash-eval --version
	@$(BUILD)/app/inspector/dflash-inspector --version
	@echo "The bundled demo (tiny models, prompts, demo.dfi) is not there yet; it lands with the demo issue."

package: build
	@cd $(BUILD) && cpack

bench: build
	@bash bench/run_all.sh $(BUILD)

clean:
	rm -rf build
