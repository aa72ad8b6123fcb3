# One precompiled header for every C++ target (GCC): the headers nearly
# every file includes, nlohmann/json above all (parsing it is about a third
# of a typical file's compile). Each target reuses the one PCH of
# switchboard_pch, so it is built once per tree.
#
# What it costs: each file sees these headers whether or not it includes
# them, so a missing #include of one of them goes unnoticed;
# -DSWITCHBOARD_PCH=OFF builds without (and the clang fuzz tree never uses
# it). ccache caches files compiled with it: the launcher sets the
# sloppiness ccache asks for (CMakeLists.txt), and the PCH is itself
# cached, so a fresh clone elsewhere gets the same PCH bytes and hits.
option(SWITCHBOARD_PCH "Precompile the headers every file includes (GCC only)" ON)

# switchboard_targets(DIR OUT) -> every target defined in DIR and below.
function(switchboard_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    switchboard_targets("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Call once, after every target is defined.
function(switchboard_use_pch)
  if(NOT SWITCHBOARD_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  switchboard_targets("${PROJECT_SOURCE_DIR}" targets)
  set(headers
    <nlohmann/json.hpp> <algorithm> <chrono> <functional> <map> <memory> <mutex> <optional>
    <set> <string> <string_view> <unordered_map> <utility> <vector>)
  add_library(switchboard_pch STATIC "${PROJECT_SOURCE_DIR}/cmake/pch.cc")
  target_precompile_headers(switchboard_pch PRIVATE ${headers})
  # The tests' own, with GoogleTest (a test file's next heaviest header).
  if(TARGET GTest::gtest)
    add_library(switchboard_pch_test STATIC "${PROJECT_SOURCE_DIR}/cmake/pch.cc")
    target_link_libraries(switchboard_pch_test PRIVATE GTest::gtest)
    target_precompile_headers(switchboard_pch_test PRIVATE ${headers} <gtest/gtest.h>)
  endif()
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|MODULE_LIBRARY)$")
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    if(NOT sources MATCHES "\\.(cc|cpp|cxx)(;|$)")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(TARGET switchboard_pch_test AND libs MATCHES "GTest::")
      target_precompile_headers(${t} REUSE_FROM switchboard_pch_test)
    else()
      target_precompile_headers(${t} REUSE_FROM switchboard_pch)
    endif()
  endforeach()
endfunction()
