# Precompiled headers (F2FSCORE_PCH): the standard library headers most
# sources include, tl::expected, GoogleTest, CLI11 and nlohmann-json are
# parsed once per build instead of once per source file.
#   f2fscore               its own header (std + tl/expected)
#   f2fscore_tools_common  std + CLI11 + nlohmann-json; every tool reuses it
#   f2fscore_test_support  std + GoogleTest; every test executable linking
#                          it reuses it (the fuzz targets do not)
# A reused header is only valid where the compile flags match; GCC falls
# back to the text of the headers (with -Winvalid-pch) where they do not,
# so this changes build time, never what is compiled.
# Off by default under ccache, which caches no compile that uses a
# precompiled header unless its sloppiness settings allow it.
include_guard(GLOBAL)

if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
  set(_f2fscore_pch_default OFF)
else()
  set(_f2fscore_pch_default ON)
endif()
option(F2FSCORE_PCH "Precompiled headers for the library, the tools and the tests" ${_f2fscore_pch_default})

set(F2FSCORE_PCH_STD_HEADERS
  <algorithm> <array> <cstddef> <cstdint> <cstdio> <cstdlib> <cstring> <functional> <map> <memory>
  <optional> <span> <string> <string_view> <utility> <vector>)

# Every target defined in DIR and the directories below it.
function(_f2fscore_targets_below dir out)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _f2fscore_targets_below(${_sub} _below)
    list(APPEND _targets ${_below})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

# Executables under DIR that link OWNER (directly) reuse OWNER's header.
function(_f2fscore_pch_reuse dir owner)
  _f2fscore_targets_below(${dir} _targets)
  foreach(_t IN LISTS _targets)
    get_target_property(_type ${_t} TYPE)
    get_target_property(_libs ${_t} LINK_LIBRARIES)
    if(_type STREQUAL "EXECUTABLE" AND owner IN_LIST _libs)
      target_precompile_headers(${_t} REUSE_FROM ${owner})
    endif()
  endforeach()
endfunction()

# Called once every target exists (end of the top-level CMakeLists.txt).
function(f2fscore_setup_pch)
  if(NOT F2FSCORE_PCH)
    return()
  endif()
  target_precompile_headers(f2fscore PRIVATE ${F2FSCORE_PCH_STD_HEADERS} <tl/expected.hpp>)
  # Sources with compile options or definitions of their own compile without the header.
  set_source_files_properties(src/io/iostat.cpp src/io/in_use.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/libf2fscore
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  if(TARGET f2fscore_tools_common)
    target_precompile_headers(f2fscore_tools_common PRIVATE ${F2FSCORE_PCH_STD_HEADERS}
                              <CLI/CLI.hpp> <nlohmann/json.hpp>)
    _f2fscore_pch_reuse(${PROJECT_SOURCE_DIR}/tools f2fscore_tools_common)
  endif()
  if(TARGET f2fscore_test_support)
    target_precompile_headers(f2fscore_test_support PRIVATE ${F2FSCORE_PCH_STD_HEADERS} <gtest/gtest.h>)
    _f2fscore_pch_reuse(${PROJECT_SOURCE_DIR}/tests f2fscore_test_support)
  endif()
endfunction()
