# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DPROBES=name|header|ALLOWED,... -P this file
# Builds each room probe and checks the outcome, then compares the rooms' link graph
# (BUILD_DIR/room_edges.txt, written at configure time) with docs/ARCHITECTURE.md's list.
set(failures 0)

string(REPLACE "," ";" probes "${PROBES}")
set(allowed_targets)
set(forbidden_targets)
foreach(probe ${probes})
  string(REPLACE "|" ";" fields "${probe}")
  list(GET fields 0 name)
  list(GET fields 1 header)
  list(GET fields 2 expect)
  # A probe of a header that does not exist would fail for the wrong reason.
  if(NOT EXISTS ${SOURCE_DIR}/src/${header})
    message(SEND_ERROR "${name}: src/${header} does not exist; the probe proves nothing")
    math(EXPR failures "${failures} + 1")
  elseif(expect STREQUAL "ALLOWED")
    list(APPEND allowed_targets ${name})
  else()
    list(APPEND forbidden_targets ${name})
    set(header_of_${name} ${header})
  endif()
endforeach()

# The allowed probes together: they must compile.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${allowed_targets}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(STATUS "ok: allowed includes compile: ${allowed_targets}")
else()
  message(SEND_ERROR "An allowed include does not compile:\n${output}")
  math(EXPR failures "${failures} + 1")
endif()

# The forbidden probes in one keep-going build: each must fail on its own header, not found.
if(GENERATOR MATCHES "Ninja")
  set(keep_going -k 0)
else()
  set(keep_going -k)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${forbidden_targets}
                        -- ${keep_going}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
foreach(name ${forbidden_targets})
  set(header ${header_of_${name}})
  # GCC's words, then Clang's.
  string(FIND "${output}" "${name}.cc:1:10: fatal error: ${header}: No such file or directory"
         gcc_missing_at)
  string(FIND "${output}" "${name}.cc:1:10: fatal error: '${header}' file not found"
         clang_missing_at)
  if(gcc_missing_at GREATER_EQUAL 0 OR clang_missing_at GREATER_EQUAL 0)
    message(STATUS "ok: ${name} fails: ${header} is not visible (forbidden)")
  else()
    message(SEND_ERROR "${name}: the forbidden include of ${header} did not fail as missing")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
if(result EQUAL 0)
  message(SEND_ERROR "The forbidden probes built:\n${output}")
  math(EXPR failures "${failures} + 1")
endif()

# The edges between `<!-- room edges begin -->` and `<!-- room edges end -->` of the document.
file(READ ${SOURCE_DIR}/docs/ARCHITECTURE.md doc)
string(REGEX MATCH "<!-- room edges begin -->\n```\n([^`]*)```\n<!-- room edges end -->" block
       "${doc}")
file(READ ${BUILD_DIR}/room_edges.txt built_edges)
if(NOT block)
  message(SEND_ERROR "docs/ARCHITECTURE.md has no room edges block")
  math(EXPR failures "${failures} + 1")
elseif(NOT CMAKE_MATCH_1 STREQUAL built_edges)
  message(SEND_ERROR "The rooms' links differ from docs/ARCHITECTURE.md.\n"
                     "Document:\n${CMAKE_MATCH_1}\nBuild (${BUILD_DIR}/room_edges.txt):\n"
                     "${built_edges}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok: the rooms' links are the document's list")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "room_boundaries: ${failures} check(s) failed")
endif()
