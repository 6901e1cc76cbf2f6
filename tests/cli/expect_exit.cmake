# Runs CMD and fails unless it exits with CODE and its output matches REGEX.
# Usage: cmake -DCMD=<prog;args> -DCODE=<n> -DREGEX=<re> -P expect_exit.cmake
execute_process(COMMAND ${CMD} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT code STREQUAL "${CODE}")
  message(FATAL_ERROR "expected exit ${CODE}, got ${code}\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}':\n${all}")
endif()
message(STATUS "exit ${code} as expected; output matches '${REGEX}'")
