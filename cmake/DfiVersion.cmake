# The git hash is read at build time (not configure time) so that --version is never stale.
set(DFI_VERSION "${PROJECT_VERSION}")
add_custom_target(dfi_git_hash
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR}
          -DOUT=${CMAKE_BINARY_DIR}/generated/dfi/git_hash.inc
          -P ${CMAKE_SOURCE_DIR}/cmake/DfiWriteGitHash.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/dfi/git_hash.inc
  COMMENT "Reading the git hash")
