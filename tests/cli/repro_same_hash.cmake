# A fuzz repro carries everything that shaped its case's run: for each defect, a campaign with
# it on finds a violation and writes a repro; `onejob run REPRO` with no flag must fail the same
# rule with the campaign's own trace hash (and its trace file must be byte-identical to the
# campaign's).
# Usage: cmake -DONEJOB=<binary> -DDIR=<scratch dir> -DDEFECTS=<a;b;c> -DCASES=<n>
#              -P repro_same_hash.cmake
file(REMOVE_RECURSE "${DIR}")
set(checked 0)
foreach(defect IN LISTS DEFECTS)
  set(campaign "${DIR}/${defect}")
  execute_process(COMMAND "${ONEJOB}" fuzz --defect ${defect} --seed 1 --cases ${CASES}
                          --report-dir "${campaign}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_QUIET)
  if(NOT code EQUAL 1)
    message(FATAL_ERROR "fuzz --defect ${defect} exited ${code}, not 1 (no violation found in "
                        "${CASES} cases):\n${out}")
  endif()
  file(READ "${campaign}/summary.json" summary)
  string(JSON repro GET "${summary}" failures 0 repro)
  string(JSON rule GET "${summary}" failures 0 rule)
  string(JSON hash GET "${summary}" failures 0 trace_hash)
  get_filename_component(name "${repro}" NAME_WE)
  # From another directory, with no flag at all.
  execute_process(COMMAND "${ONEJOB}" run "${repro}" --report-dir "${campaign}/rerun"
                  WORKING_DIRECTORY "/"
                  RESULT_VARIABLE code OUTPUT_VARIABLE rerun ERROR_VARIABLE errors)
  if(NOT code EQUAL 1)
    message(FATAL_ERROR "${defect}: onejob run ${repro} exited ${code}, not 1:\n${rerun}${errors}")
  endif()
  if(NOT rerun MATCHES "trace=${hash}")
    message(FATAL_ERROR "${defect}: the campaign's trace hash was ${hash}; the rerun printed:\n"
                        "${rerun}")
  endif()
  file(READ "${campaign}/rerun/summary.json" rerun_summary)
  string(JSON violations LENGTH "${rerun_summary}" results 0 violations)
  set(found FALSE)
  math(EXPR last "${violations} - 1")
  foreach(i RANGE ${last})
    string(JSON violated GET "${rerun_summary}" results 0 violations ${i} rule)
    if(violated STREQUAL rule)
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${defect}: the campaign violated ${rule}; the rerun did not")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${campaign}/traces/${name}.jsonl"
                          "${campaign}/rerun/traces/${name}.jsonl"
                  RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "${defect}: the rerun's trace differs from the campaign's")
  endif()
  math(EXPR checked "${checked} + 1")
  message(STATUS "${defect}: ${rule}, trace ${hash}, identical")
endforeach()
message(STATUS "${checked} repros rerun with the campaign's trace hash")
