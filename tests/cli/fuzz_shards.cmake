# Shards 1/2 and 2/2 of a campaign run exactly its cases: their merged totals (cases run, marks
# reached, violations) equal the unsharded run's.
# Usage: cmake -DONEJOB=<binary> -DDIR=<scratch dir> -P fuzz_shards.cmake
file(REMOVE_RECURSE "${DIR}")
foreach(run IN ITEMS "whole;1/1" "one;1/2" "two;2/2")
  list(GET run 0 name)
  list(GET run 1 shard)
  execute_process(COMMAND "${ONEJOB}" fuzz --cases 120 --seed 9 --shard ${shard}
                          --report-dir "${DIR}/${name}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_QUIET)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "onejob fuzz --shard ${shard} exited ${code}")
  endif()
endforeach()
execute_process(COMMAND "${ONEJOB}" merge "${DIR}/one" "${DIR}/two" --report-dir "${DIR}/merged"
                RESULT_VARIABLE code OUTPUT_VARIABLE merged)
execute_process(COMMAND "${ONEJOB}" merge "${DIR}/whole" --report-dir "${DIR}/alone"
                RESULT_VARIABLE code_alone OUTPUT_VARIABLE alone)
if(NOT code EQUAL 0 OR NOT code_alone EQUAL 0)
  message(FATAL_ERROR "onejob merge exited ${code} / ${code_alone}")
endif()
string(REGEX REPLACE "merged [0-9]+ campaigns: " "" merged_totals "${merged}")
string(REGEX REPLACE "merged [0-9]+ campaigns: " "" alone_totals "${alone}")
string(REGEX REPLACE "\nreport:.*" "" merged_totals "${merged_totals}")
string(REGEX REPLACE "\nreport:.*" "" alone_totals "${alone_totals}")
if(NOT merged_totals STREQUAL alone_totals)
  message(FATAL_ERROR "shards merged: ${merged_totals}\nunsharded:     ${alone_totals}")
endif()
file(READ "${DIR}/merged/summary.json" merged_json)
file(READ "${DIR}/alone/summary.json" alone_json)
string(JSON merged_marks GET "${merged_json}" marks counts)
string(JSON alone_marks GET "${alone_json}" marks counts)
if(NOT merged_marks STREQUAL alone_marks)
  message(FATAL_ERROR "mark counts differ:\n${merged_marks}\n${alone_marks}")
endif()
message(STATUS "shards 1/2 + 2/2 = the whole campaign: ${merged_totals}")
