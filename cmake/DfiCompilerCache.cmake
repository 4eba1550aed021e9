# ccache makes rebuilds on 2 cores bearable; it is optional.
find_program(DFI_CCACHE ccache)
if(DFI_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER "${DFI_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${DFI_CCACHE}")
endif()
