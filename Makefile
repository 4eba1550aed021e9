# Thin wrapper: setup -> configure -> build -> run. The real build is CMake (CMakePresets.json).
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: all setup configure build demo-programs test demo package bench clean
all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@mkdir -p build && cmake --preset $(PRESET) > $(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# Only the two programs the demo runs (no tests, benchmarks or fuzzers): a first `make demo` on
# a new machine builds a fraction of `make build`.
demo-programs: configure
	@cmake --build --preset $(PRESET) -j $(JOBS) --target dflash-eval dflash-inspector

# Every test but those that need a GPU (label gpu).
test: build
	@ctest --preset $(PRESET) -j $(JOBS)

# Evaluates the bundled demo drafters (resources/demo) into a session and prints the tau table;
# then opens the GUI on it, or, with no display, renders its main views as PNG files.
DEMO_SESSION := $(BUILD)/demo.dfi
DEMO_RENDERS := $(BUILD)/demo-renders
demo: demo-programs
	@$(BUILD)/app/eval/dflash-eval demo -o $(DEMO_SESSION)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  echo "Opening $(DEMO_SESSION) in dflash-inspector"; \
	  $(BUILD)/app/inspector/dflash-inspector $(DEMO_SESSION); \
	else \
	  $(BUILD)/app/eval/dflash-eval render --session $(DEMO_SESSION) \
	    --view window,navigator,tokens,mask-diff,mask-training-diff -o $(DEMO_RENDERS) > /dev/null && \
	  echo "No display: the main views of $(DEMO_SESSION) are in $(DEMO_RENDERS)/ (PNG)"; \
	fi

package: build
	@cd $(BUILD) && cpack

bench: build
	@bash bench/run_all.sh $(BUILD)

clean:
	rm -rf build
