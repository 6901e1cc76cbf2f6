# The include layering of the source tree. Fails, naming each offending line, when a source
# under ROOT includes across a layer boundary the wrong way:
#   - system/ never includes harness/ (the reference system knows nothing of simulation);
#   - inside system/, a room includes only itself and the rooms before it:
#       domain -> ports -> events -> service -> adapters -> app
#   - inside harness/, likewise:
#       events -> sim -> check -> scenario -> report -> fuzz -> real -> bench -> cli
#     (bench measures the fuzzer, so it comes after it).
# A room not in its list (a new folder) is an error too: it must be placed before it is used.
# Usage: cmake -DROOT=<a source root holding system/ and/or harness/> -P check_layering.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "ROOT is not a directory: ${ROOT}")
endif()

set(system_rooms "domain;ports;events;service;adapters;app")
set(harness_rooms "events;sim;check;scenario;report;fuzz;real;bench;cli")

# The rank of `room` in `rooms` (a ;-list whose entries may be a|b for rooms of one rank), or -1.
function(room_rank rooms room out)
  set(rank 0)
  foreach(entry IN LISTS rooms)
    string(REPLACE "|" ";" same "${entry}")
    if(room IN_LIST same)
      set(${out} ${rank} PARENT_SCOPE)
      return()
    endif()
    math(EXPR rank "${rank} + 1")
  endforeach()
  set(${out} -1 PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/*.hpp" "${ROOT}/*.cpp" "${ROOT}/*.h"
     "${ROOT}/*.cc")
list(FILTER sources INCLUDE REGEX "^(system|harness)/")
if(NOT sources)
  message(FATAL_ERROR "no sources under ${ROOT}/system or ${ROOT}/harness")
endif()

set(bad "")
foreach(source IN LISTS sources)
  string(REGEX MATCH "^(system|harness)/([^/]+)/" where "${source}")
  set(tree "${CMAKE_MATCH_1}")
  set(room "${CMAKE_MATCH_2}")
  set(rank -1)
  if(room)
    room_rank("${${tree}_rooms}" "${room}" rank)
  endif()
  if(rank EQUAL -1)
    string(APPEND bad "\n  ${source}: not in a room of ${tree}/ (rooms: ${${tree}_rooms})")
    continue()
  endif()
  file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][./]*(system|harness)/")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "(system|harness)/([^/\">]+)/" target "${line}")
    set(target_tree "${CMAKE_MATCH_1}")
    set(target_room "${CMAKE_MATCH_2}")
    if(tree STREQUAL "system" AND target_tree STREQUAL "harness")
      string(APPEND bad "\n  ${source}: ${line} (system/ must not include harness/)")
      continue()
    endif()
    if(NOT target_tree STREQUAL tree OR target_room STREQUAL room)
      continue()
    endif()
    room_rank("${${tree}_rooms}" "${target_room}" target_rank)
    if(target_rank EQUAL -1 OR NOT target_rank LESS rank)
      string(APPEND bad "\n  ${source}: ${line} (${tree}/${room} may include only rooms before it: ${${tree}_rooms})")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "layering broken:${bad}")
endif()
list(LENGTH sources count)
message(STATUS "layering ok: ${count} files under ${ROOT} include only rooms before their own")
