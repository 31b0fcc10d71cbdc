# What a cross build (cmake/aarch64-linux-gnu.cmake) takes differently from a native one.
#
# GoogleTest: Debian's libgtest-dev holds the host's libraries, but also the sources
# (/usr/src/googletest), built here for the target.
# yaml-cpp: libyaml-cpp-dev is not multiarch (its arm64 package would replace the host's), but its
# headers are the same on every architecture, so the build links the target's runtime library
# (libyaml-cpp0.7:arm64) with the host's headers.
find_library(VLLM_TARGET_YAML_CPP NAMES yaml-cpp libyaml-cpp.so.0.7 REQUIRED
             NO_CMAKE_SYSTEM_PATH PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
add_library(yaml-cpp SHARED IMPORTED)
# The cross compiler searches /usr/include after its own directories (Debian multiarch).
set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${VLLM_TARGET_YAML_CPP})
if(VLLM_BUILD_TESTS)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
endif()
