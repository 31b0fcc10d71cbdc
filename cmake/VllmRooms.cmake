# Rooms: each folder of src/ is one CMake target that sees only its own headers and those of the
# rooms it links (docs/ARCHITECTURE.md lists the allowed edges). A room's include root, in the
# build tree, holds one entry: a symbolic link named after the room to its folder. So
# `#include "engine/llm_engine.h"` keeps its spelling and resolves only where the engine room is
# linked; anywhere else it fails with "No such file or directory".

# Sets `out_var` to the include root of `room` (created on first use).
function(vllm_room_include_root room out_var)
  set(root ${CMAKE_BINARY_DIR}/include_roots/${room})
  if(NOT IS_SYMLINK ${root}/${room})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${room} ${root}/${room} SYMBOLIC)
  endif()
  set(${out_var} ${root} PARENT_SCOPE)
endfunction()

# vllm_room_target(<target> <room> [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Makes an existing target part of `room`: its include root, then the rooms and packages it uses,
# PUBLIC when one of the room's headers includes them, PRIVATE when only its .cc files do. A
# library exports its root; an executable or module keeps it (and everything) private.
function(vllm_room_target target room)
  cmake_parse_arguments(ARG "" "" "PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  vllm_room_include_root(${room} root)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    target_include_directories(${target} PUBLIC ${root})
    target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  else()
    target_include_directories(${target} PRIVATE ${root})
    target_link_libraries(${target} PRIVATE ${ARG_PUBLIC_DEPS} ${ARG_PRIVATE_DEPS})
  endif()
  # Recorded for the room probes (which compile as part of a room) and the edge list.
  set_property(GLOBAL APPEND PROPERTY VLLM_ROOM_TARGETS ${target})
  set_property(GLOBAL PROPERTY VLLM_ROOM_OF_${target} ${room})
  set_property(GLOBAL PROPERTY VLLM_ROOM_DEPS_${target} ${ARG_PUBLIC_DEPS} ${ARG_PRIVATE_DEPS})
endfunction()

# vllm_add_room(<room> [TARGET <name>] SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# The static library of src/<room>/: vllm_<room>, or TARGET for a second library of the room.
function(vllm_add_room room)
  cmake_parse_arguments(ARG "" "TARGET" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_TARGET)
    set(ARG_TARGET vllm_${room})
  endif()
  add_library(${ARG_TARGET} STATIC ${ARG_SOURCES})
  vllm_room_target(${ARG_TARGET} ${room}
    PUBLIC_DEPS ${ARG_PUBLIC_DEPS} PRIVATE_DEPS ${ARG_PRIVATE_DEPS})
endfunction()

# Writes `file`: one line per room, "room: dep dep ...", the rooms its targets link (sorted), as
# docs/ARCHITECTURE.md lists them. Called once every room is defined.
function(vllm_write_room_edges file)
  get_property(targets GLOBAL PROPERTY VLLM_ROOM_TARGETS)
  set(rooms)
  foreach(target ${targets})
    get_property(room GLOBAL PROPERTY VLLM_ROOM_OF_${target})
    get_property(deps GLOBAL PROPERTY VLLM_ROOM_DEPS_${target})
    list(APPEND rooms ${room})
    foreach(dep ${deps})
      get_property(dep_room GLOBAL PROPERTY VLLM_ROOM_OF_${dep})
      if(dep_room AND NOT dep_room STREQUAL room)
        list(APPEND edges_${room} ${dep_room})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES rooms)
  list(SORT rooms)
  set(text "")
  foreach(room ${rooms})
    set(edges ${edges_${room}})
    if(edges)
      list(REMOVE_DUPLICATES edges)
      list(SORT edges)
    endif()
    list(JOIN edges " " edges)
    if(edges)
      string(APPEND text "${room}: ${edges}\n")
    else()
      string(APPEND text "${room}:\n")
    endif()
  endforeach()
  file(WRITE ${file} "${text}")
endfunction()

# vllm_add_room_probe(<name> TARGET <room target> SOURCE <file>)
# An object library, built only on demand, that compiles `file` with exactly the include
# directories a source of the room of `TARGET` gets: the room's include root and those its links
# export (without the links, so a probe needs nothing built). The room_boundaries test builds it
# to prove what a room may and may not include.
function(vllm_add_room_probe name)
  cmake_parse_arguments(ARG "" "TARGET;SOURCE" "" ${ARGN})
  get_property(room GLOBAL PROPERTY VLLM_ROOM_OF_${ARG_TARGET})
  get_property(deps GLOBAL PROPERTY VLLM_ROOM_DEPS_${ARG_TARGET})
  vllm_room_include_root(${room} root)
  add_library(${name} OBJECT EXCLUDE_FROM_ALL ${ARG_SOURCE})
  target_include_directories(${name} PRIVATE ${root})
  foreach(dep ${deps})
    target_include_directories(${name} PRIVATE
                               $<TARGET_PROPERTY:${dep},INTERFACE_INCLUDE_DIRECTORIES>)
  endforeach()
endfunction()
