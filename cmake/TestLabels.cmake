# Which test labels a build tree compiles. `make test` runs unit and
# integration tests once, in the sanitized tree (build-asan), and the e2e and
# node tests in the plain tree (build), against the optimised binaries they
# ship: a test compiled in a tree that never runs it is build time for
# nothing. A tree configured by hand builds every label.
set(SWITCHBOARD_TEST_LABELS "unit;integration;e2e" CACHE STRING
    "Test labels whose executables this tree builds (the others are defined but not built)")

# switchboard_test_executable(NAME LABEL SOURCES...): add_executable, left
# out of `all` when LABEL is not one of SWITCHBOARD_TEST_LABELS. It stays a
# target and a ctest test: `cmake --build build --target NAME` builds it on
# demand, and ctest then runs it; unbuilt, ctest reports it not found.
function(switchboard_test_executable name label)
  if(label IN_LIST SWITCHBOARD_TEST_LABELS)
    add_executable(${name} ${ARGN})
  else()
    add_executable(${name} EXCLUDE_FROM_ALL ${ARGN})
  endif()
endfunction()
