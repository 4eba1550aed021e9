# libtorch comes from the torch wheel in the project's .venv (scripts/setup.sh), so the
# engine and the Python oracles always use the same torch build.
if(NOT EXISTS "${DFI_PYTHON}")
  message(FATAL_ERROR "DFI_BUILD_ENGINE needs libtorch: ${DFI_PYTHON} does not exist. "
                      "Run scripts/setup.sh, or pass -DDFI_PYTHON=/path/to/python with torch, "
                      "or -DDFI_BUILD_ENGINE=OFF for a GUI-only build.")
endif()
execute_process(
  COMMAND "${DFI_PYTHON}" -c "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.version.cuda or '')"
  OUTPUT_VARIABLE _dfi_torch_info OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${DFI_PYTHON} cannot import torch; run scripts/setup.sh")
endif()
string(REPLACE "\n" ";" _dfi_torch_info "${_dfi_torch_info}")
list(GET _dfi_torch_info 0 _dfi_torch_prefix)
list(LENGTH _dfi_torch_info _n)
set(DFI_TORCH_CUDA_VERSION "")
if(_n GREATER 1)
  list(GET _dfi_torch_info 1 DFI_TORCH_CUDA_VERSION)
endif()
list(APPEND CMAKE_PREFIX_PATH "${_dfi_torch_prefix}")

# A CUDA wheel needs a CUDA toolkit of the same major version to compile against (headers of
# c10/cuda); the runtime libraries come from the wheel's nvidia packages. Without a matching
# toolkit the engine is built CPU-only instead of failing.
set(DFI_WITH_CUDA OFF)
if(DFI_TORCH_CUDA_VERSION)
  find_package(CUDAToolkit QUIET)
  string(REGEX MATCH "^[0-9]+" _wheel_major "${DFI_TORCH_CUDA_VERSION}")
  if(CUDAToolkit_FOUND AND CUDAToolkit_VERSION_MAJOR STREQUAL _wheel_major)
    set(DFI_WITH_CUDA ON)
  else()
    message(WARNING "torch was built with CUDA ${DFI_TORCH_CUDA_VERSION} but the CUDA toolkit "
                    "found is '${CUDAToolkit_VERSION}'; building the engine without CUDA paths. "
                    "Install a CUDA ${_wheel_major}.x toolkit (or set CUDAToolkit_ROOT) to enable them.")
  endif()
endif()
if(NOT DFI_WITH_CUDA)
  # Keep Caffe2's config from insisting on a toolkit it cannot use.
  set(USE_CUDA OFF)
  set(CAFFE2_USE_CUDA OFF CACHE BOOL "" FORCE)
endif()
# Our engine has no .cu files; only libtorch's headers and libraries are needed.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch REQUIRED)
message(STATUS "libtorch ${Torch_VERSION} from ${_dfi_torch_prefix}; CUDA paths: ${DFI_WITH_CUDA} "
               "(wheel CUDA '${DFI_TORCH_CUDA_VERSION}')")

# libtorch.so exports a complete copy of std::filesystem (built into it from another
# libstdc++). The library loaded first provides std::filesystem to the whole process, and with
# libtorch first remove_all() on a non-empty directory jumps to a null pointer. Naming
# libstdc++ on the link line before anything else makes it the first needed library.
add_library(dfi_torch INTERFACE)
target_link_options(dfi_torch INTERFACE "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
target_link_libraries(dfi_torch INTERFACE ${TORCH_LIBRARIES})

# at::parallel_for is a header template: it runs in parallel only where the calling code is
# compiled with OpenMP, as the engine's CPU kernels are. They must use the OpenMP runtime torch
# loads (the wheel bundles its own libgomp.so.1), so that one thread pool and one
# at::set_num_threads govern both; a second runtime would add a second pool.
find_library(DFI_TORCH_GOMP NAMES libgomp.so.1 gomp PATHS "${_dfi_torch_prefix}/../../lib" NO_DEFAULT_PATH)
if(DFI_TORCH_GOMP)
  target_compile_options(dfi_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fopenmp>)
  target_link_libraries(dfi_torch INTERFACE "${DFI_TORCH_GOMP}")
else()
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  target_link_libraries(dfi_torch INTERFACE OpenMP::OpenMP_CXX)
endif()
