# Helpers that keep every library and test declared the same way.

# dfi_add_library(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# A core library lives in core/<dir>/ with public headers in include/dfi/<dir>/.
function(dfi_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  dfi_set_warnings(${name})
endfunction()

function(dfi_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter -Wno-missing-field-initializers)
endfunction()

# dfi_add_gtest(<name> SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [FIXTURES f...] [ENV k=v...] [ARGS ...] [ATEN_PATH])
# Core and engine tests use GoogleTest so that they build without Qt (the engine side must
# never include Qt headers); UI tests use Qt Test (dfi_add_qtest in tests/ui).
function(dfi_add_gtest name)
  cmake_parse_arguments(ARG "ATEN_PATH" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV;FIXTURES;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    DFI_SOURCE_DIR="${CMAKE_SOURCE_DIR}" DFI_BINARY_DIR="${CMAKE_BINARY_DIR}")
  dfi_set_warnings(${name})
  dfi_add_gtest_run(${name} ${name} "${ARG_ARGS}" "${ARG_LABELS}" "${ARG_ENV}" "${ARG_TIMEOUT}")
  if(ARG_FIXTURES)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES}")
  endif()
  if(ARG_ATEN_PATH)
    # The same test again with the CPU kernels off (kernels/kernel_path.h): the generic ATen
    # arithmetic a CUDA device takes, checked against the same references on every commit.
    # Both runs share the test's scratch files, hence the lock.
    set(aten_env ${ARG_ENV} DFI_CPU_KERNELS=off)
    dfi_add_gtest_run(${name}_aten_path ${name} "${ARG_ARGS}" "${ARG_LABELS};aten-path" "${aten_env}" "${ARG_TIMEOUT}")
    set_tests_properties(${name}_aten_path PROPERTIES RESOURCE_LOCK ${name})
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK ${name})
    if(ARG_FIXTURES)
      set_tests_properties(${name}_aten_path PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES}")
    endif()
  endif()
endfunction()

# One ctest run of a GoogleTest executable. A GTEST_SKIP shows as skipped in ctest's summary,
# never as passed (a run with a skipped test is reported skipped, so a test that may skip, the
# two-GPU one, gets a run of its own through ARGS --gtest_filter).
function(dfi_add_gtest_run test executable args labels env timeout)
  if(NOT timeout)
    set(timeout 300)
  endif()
  add_test(NAME ${test} COMMAND ${executable} ${args})
  set_tests_properties(${test} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} ENVIRONMENT "${env}"
                       SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()

# dfi_add_python_fixture(<fixture> SCRIPT <file.py> [ARGS ...])
# Runs a reference generator (Hugging Face transformers/tokenizers/safetensors from .venv)
# before every test that names <fixture> in FIXTURES; outputs go under the build tree.
function(dfi_add_python_fixture fixture)
  cmake_parse_arguments(ARG "" "SCRIPT;TIMEOUT" "ARGS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_test(NAME ${fixture}_generate COMMAND ${DFI_PYTHON_CHECK} ${ARG_SCRIPT} ${ARG_ARGS})
  set_tests_properties(${fixture}_generate PROPERTIES
    FIXTURES_SETUP ${fixture} LABELS oracle TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "HF_HUB_OFFLINE=1;TOKENIZERS_PARALLELISM=false;PYTHONDONTWRITEBYTECODE=1")
endfunction()
