# Runs `onejob run` twice, in two processes, and fails unless both wrote byte-identical
# summary.json and traces.
# Usage: cmake -DONEJOB=<exe> -DSCENARIOS=<dir> -DOUT=<dir> -P same_seed_twice.cmake
foreach(run IN ITEMS a b)
  file(REMOVE_RECURSE "${OUT}/${run}")
  execute_process(COMMAND "${ONEJOB}" run "${SCENARIOS}" --report-dir "${OUT}/${run}"
                  RESULT_VARIABLE code OUTPUT_QUIET)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "run ${run} exited ${code}")
  endif()
endforeach()
file(GLOB traces RELATIVE "${OUT}/a" "${OUT}/a/summary.json" "${OUT}/a/traces/*.jsonl")
list(LENGTH traces count)
foreach(file IN LISTS traces)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${OUT}/a/${file}" "${OUT}/b/${file}"
                  RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "${file} differs between two runs with the same seeds")
  endif()
endforeach()
message(STATUS "${count} files identical across two processes")
