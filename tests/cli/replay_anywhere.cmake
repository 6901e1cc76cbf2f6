# The replay line a failing run prints works pasted in another directory: run a failing scenario
# by a relative path from one directory, then run its printed replay line from "/", and fail
# unless the replay fails the same way with the same trace hash.
# Usage: cmake -DONEJOB=<exe> -DFROM=<dir> -DSCENARIO=<path relative to FROM> -DOUT=<dir>
#              -P replay_anywhere.cmake
file(RELATIVE_PATH onejob_from_dir "${FROM}" "${ONEJOB}")
execute_process(COMMAND "${onejob_from_dir}" run "${SCENARIO}" --report-dir "${OUT}"
                WORKING_DIRECTORY "${FROM}" RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 1)
  message(FATAL_ERROR "the run exited ${code}, not 1 (a failing scenario):\n${out}")
endif()
if(NOT out MATCHES "FAIL  ([^ ]+)  seed=([0-9]+)  trace=([0-9a-f]+)")
  message(FATAL_ERROR "no FAIL line with a trace hash:\n${out}")
endif()
set(verdict "FAIL  ${CMAKE_MATCH_1}  seed=${CMAKE_MATCH_2}  trace=${CMAKE_MATCH_3}")
if(NOT out MATCHES "replay: ([^\n]+)")
  message(FATAL_ERROR "no replay line:\n${out}")
endif()
set(line "${CMAKE_MATCH_1}")
execute_process(COMMAND sh -c "${line}" WORKING_DIRECTORY "/" RESULT_VARIABLE code
                OUTPUT_VARIABLE replayed ERROR_VARIABLE errors)
if(NOT code EQUAL 1)
  message(FATAL_ERROR "the replay line, run from /, exited ${code}, not 1:\n${line}\n${errors}")
endif()
string(FIND "${replayed}" "${verdict}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "run from /, the replay line did not print \"${verdict}\":\n${line}\n"
                      "${replayed}")
endif()
message(STATUS "replayed from /: ${verdict}")
